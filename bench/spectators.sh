#!/usr/bin/env bash
# Spectators at scale (issue 50): WATCHERS streams on one 19x19 game while 99 other games
# play at a think time of 200 ms; the server pinned to core 0, the load generator to core 1.
# Each `weiqi` binary given is measured in turn, RUNS rounds, so that builds compare in one
# session (absolute figures drift on a shared machine).
#
#   cargo build --release -p weiqi-cli -p weiqi-loadgen
#   bench/spectators.sh target/release/weiqi [OTHER_WEIQI ...]
#
# Environment: WATCHERS (10000), CONNECTIONS (64), WATCHER_CONNECTIONS (0: the watchers share
# the players' connections; N: N of their own, as spectators on their own devices),
# SPECTATORS (0; 1: the server gets a spectators' listener, `spectators_listen`, and the
# watchers connect there, WATCHER_CONNECTIONS of them or 64), DATA_ROOT (/tmp: where each
# run's database goes; /dev/shm takes the disk's fsync out of the players' latencies),
# OPENING_MOVES (0: moves each game plays before the watchers arrive, so that they arrive
# at a game with a log to replay), RUNS (2), SECONDS_EACH (10),
# LOADGEN (target/release/weiqi-loadgen). Prints each run's load generator report.
set -euo pipefail
cd "$(dirname "$0")/.."
watchers=${WATCHERS:-10000}
connections=${CONNECTIONS:-64}
watcher_connections=${WATCHER_CONNECTIONS:-0}
spectators=${SPECTATORS:-0}
runs=${RUNS:-2}
seconds=${SECONDS_EACH:-10}
loadgen=${LOADGEN:-target/release/weiqi-loadgen}
[ $# -gt 0 ] || set -- target/release/weiqi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for run in $(seq "$runs"); do
  for bin in "$@"; do
    dir=$(mktemp -d "${DATA_ROOT:-/tmp}/weiqi-spectators.XXXXXX")
    port=$(free_port)
    spectator_env=() spectator_args=()
    if [ "$spectators" = 1 ]; then
      sport=$(free_port)
      spectator_env=(WEIQI__SPECTATORS_LISTEN="127.0.0.1:$sport")
      spectator_args=(--spectators-addr "http://127.0.0.1:$sport")
    fi
    env ${spectator_env[@]+"${spectator_env[@]}"} WEIQI__LIMITS__WATCH_STREAMS_PER_CLIENT=0 WEIQI__LIMITS__CREATES_PER_MINUTE=0 WEIQI__METRICS_LISTEN= WEIQI__WEB_LISTEN= \
      WEIQI__LOG_LEVEL=warn taskset -c 0 "$bin" serve --listen "127.0.0.1:$port" --data-dir "$dir" \
      >"$dir/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
      (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null &&
        { [ "$spectators" != 1 ] || (echo >"/dev/tcp/127.0.0.1/$sport") 2>/dev/null; } && break
      sleep 0.1
    done
    echo "=== run $run: $bin ($watchers watchers, $connections connections, $watcher_connections of the watchers' own, spectators' listener: $spectators)"
    taskset -c 1 "$loadgen" --addr "http://127.0.0.1:$port" --games 100 --size 19 --think-ms 200 \
      --watchers "$watchers" --connections "$connections" \
      --watcher-connections "$watcher_connections" ${spectator_args[@]+"${spectator_args[@]}"} \
      --opening-moves "${OPENING_MOVES:-0}" --seconds "$seconds" --server-pid "$pid" || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -rf "$dir"
  done
done
