#!/usr/bin/env bash
# Spectators over two replicas (issue 50): WATCHERS streams on one 19x19 game, split over two
# replicas' spectators' listeners, while GAMES games play at a think time of 200 ms; the
# replica with the watched game's players serves half the audience, the other follows the
# game through PostgreSQL. Replica A is pinned to core 0, replica B to core 1; the load
# generator and the database are not pinned. Each run gets a new database: replicas started
# on one full of earlier runs' unfinished games take those over and end them on time first.
#
#   PG=postgres://postgres@127.0.0.1:5432 bench/spectators-replicas.sh [target/release/weiqi]
#
# Environment: PG (a server URL whose user may create databases; required), WATCHERS
# (50000), WATCHER_CONNECTIONS (256), GAMES (20), SECONDS_EACH (30), LOADGEN
# (target/release/weiqi-loadgen). Prints the load generator's report (its CPU figures are
# replica A's) and both replicas' resident memory.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${PG:?set PG to a PostgreSQL server URL, e.g. postgres://postgres@127.0.0.1:5432}"
bin=${1:-target/release/weiqi}
loadgen=${LOADGEN:-target/release/weiqi-loadgen}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
db="weiqi_spectators_$(date +%s)_$$"
psql -q "$PG/postgres" -c "CREATE DATABASE $db"
pa=$(free_port) sa=$(free_port) pb=$(free_port) sb=$(free_port)
dir=$(mktemp -d)
serve() { # CORE PORT SPECTATORS_PORT NAME
  env WEIQI__DATABASE_URL="$PG/$db" WEIQI__SPECTATORS_LISTEN="127.0.0.1:$3" \
    WEIQI__LIMITS__WATCH_STREAMS_PER_CLIENT=0 WEIQI__LIMITS__CREATES_PER_MINUTE=0 \
    WEIQI__METRICS_LISTEN= WEIQI__WEB_LISTEN= WEIQI__LOG_LEVEL=warn \
    taskset -c "$1" "$bin" serve --listen "127.0.0.1:$2" --data-dir "$dir/$4" >"$dir/$4.log" 2>&1 &
}
mkdir -p "$dir/a" "$dir/b"
serve 0 "$pa" "$sa" a; a=$!
serve 1 "$pb" "$sb" b; b=$!
trap 'kill $a $b 2>/dev/null || true; wait 2>/dev/null; rm -rf "$dir"; psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $db" || true' EXIT
for port in "$pa" "$sa" "$pb" "$sb"; do
  for _ in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
done
"$loadgen" --addr "http://127.0.0.1:$pa,http://127.0.0.1:$pb" \
  --spectators-addr "http://127.0.0.1:$sa,http://127.0.0.1:$sb" \
  --games "${GAMES:-20}" --size 19 --think-ms 200 --watchers "${WATCHERS:-50000}" --connections 32 \
  --watcher-connections "${WATCHER_CONNECTIONS:-256}" --seconds "${SECONDS_EACH:-30}" --server-pid "$a" || true
echo "replica A: $(grep VmRSS "/proc/$a/status" | tr -s ' \t' ' ')"
echo "replica B: $(grep VmRSS "/proc/$b/status" | tr -s ' \t' ' ')"
