#!/usr/bin/env bash
# Uniform random playouts: weiqi vs OpenSpiel's C++ Go vs the goban crate, same machine,
# same run, one thread each. Prints a Markdown table of moves per CPU second and ratios.
# Needs: pip install open-spiel (the script installs it if missing). Usage: bench/peers.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
python3 -c 'import pyspiel' 2>/dev/null || python3 -m pip install --quiet open-spiel
cargo build --release -q -p weiqi-cli
cargo build --release -q --manifest-path bench/peers/goban-playouts/Cargo.toml
echo "| board | engine | ko rule | moves/CPU s | games/CPU s | weiqi speed-up |"
echo "|---|---|---|---:|---:|---:|"
for size in 9 19; do
  w=$(target/release/weiqi bench playouts --size "$size" --seconds "$secs" --policy uniform --json)
  o=$(python3 bench/peers/openspiel_playouts.py "$size" "$secs")
  g=$(bench/peers/goban-playouts/target/release/goban-playouts "$size" "$secs")
  python3 - "$size" "$w" "$o" "$g" <<'PY'
import json, sys
size = sys.argv[1]
w, o, g = (json.loads(a) for a in sys.argv[2:5])
rows = [("weiqi", "positional superko (exact)", w), ("OpenSpiel C++", "simple ko", o), ("goban crate", "superko", g)]
for name, ko, r in rows:
    ratio = w["moves_per_cpu_s"] / r["moves_per_cpu_s"]
    print(f"| {size}x{size} | {name} | {ko} | {r['moves_per_cpu_s']:,.0f} | {r['games_per_cpu_s']:,.0f} | {ratio:.1f}x |")
PY
done
