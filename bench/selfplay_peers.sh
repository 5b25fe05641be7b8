#!/usr/bin/env bash
# Self-play positions recorded with features per CPU second: weiqi (in memory, and end to
# end with .npz shards) vs OpenSpiel's Python loop recording its observation tensor, same
# machine, same run; and weiqi's scaling from 1 to 2 threads. Usage: bench/selfplay_peers.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
python3 -c 'import pyspiel' 2>/dev/null || python3 -m pip install --quiet open-spiel
cargo build --release -q -p weiqi-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
o=$(python3 bench/peers/openspiel_selfplay.py 9 "$secs")
m1=$(target/release/weiqi bench selfplay --size 9 --seconds "$secs" --policy uniform --threads 1 --json)
m2=$(target/release/weiqi bench selfplay --size 9 --seconds "$secs" --policy uniform --threads 2 --json)
d1=$(target/release/weiqi selfplay --size 9 --games 4000 --policy uniform --threads 1 --out "$out/t1" --json)
d2=$(target/release/weiqi selfplay --size 9 --games 4000 --policy uniform --threads 2 --out "$out/t2" --json)
cmp -s "$out/t1/shard-00000.npz" "$out/t2/shard-00000.npz" && same=yes || same=no
python3 - "$o" "$m1" "$m2" "$d1" "$d2" "$same" <<'PY'
import json, sys
o, m1, m2, d1, d2 = (json.loads(a) for a in sys.argv[1:6])
base = o["positions_per_cpu_s"]
print("| 9x9, uniform random | positions/CPU s | vs OpenSpiel | positions/s (wall) |")
print("|---|---:|---:|---:|")
print(f"| OpenSpiel (Python loop recording observation + legal mask) | {base:,.0f} | 1.0x | |")
for name, r in [("weiqi in memory, 1 thread", m1), ("weiqi in memory, 2 threads", m2),
                ("weiqi to .npz shards, 1 thread", d1), ("weiqi to .npz shards, 2 threads", d2)]:
    print(f"| {name} | {r['positions_per_cpu_s']:,.0f} | {r['positions_per_cpu_s']/base:.1f}x | {r['positions_per_s']:,.0f} |")
print(f"\nscaling 1 -> 2 threads (positions/s wall): in memory {m2['positions_per_s']/m1['positions_per_s']:.2f}x, "
      f"with shards {d2['positions_per_s']/d1['positions_per_s']:.2f}x; shards identical across thread counts: {sys.argv[6]}")
PY
