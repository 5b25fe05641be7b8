#!/bin/sh
# One match of two GTP engines split into two halves, each pinned to one of this
# machine's cores (`taskset`), and the halves' tally together with its 95% Wilson
# interval: how the engine's strength goals (issue 46) and the search's changes (A/B
# matches between two settings of `weiqi gtp`) are measured. A GTP engine thinks only
# in `genmove`, so neither side thinks on the other's time.
#
#   bench/strength.sh "A" "B" GAMES SIZE DIR [extra `weiqi match` flags]
#
# The 9x9 goal (one thread, at most 1 s a move, against GNU Go 3.8 at level 10):
#   bench/strength.sh "weiqi gtp --player mcts --seconds 1 --threads 1 --seed 51" \
#     "/usr/games/gnugo --mode gtp --level 10 --chinese-rules" 100 9 DIR
# Each half writes DIR/half-K (SGF records) and DIR/half-K.json. A must name its seed as
# `--seed N`: half 1 plays with N+1, so the halves' games differ.
set -eu
a=$1 b=$2 games=$3 size=$4 dir=$5
shift 5
weiqi=${WEIQI:-weiqi}
[ "$games" -ge 2 ] || { echo "GAMES must be at least 2" >&2; exit 2; }
# A's words with its seed raised by 1 (for half 1).
bumped=
next=0
for word in $a; do
  if [ $next = 1 ]; then
    case $word in *[!0-9]*|'') echo "A's --seed is not a number: $word" >&2; exit 2;; esac
    word=$(python3 -c "print($word + 1)")
    next=2
  elif [ "$word" = --seed ]; then
    next=1
  fi
  bumped="$bumped${bumped:+ }$word"
done
[ $next = 2 ] || { echo "A must name its seed as --seed N" >&2; exit 2; }
mkdir -p "$dir"
half0=$(( (games + 1) / 2 ))
taskset -c 0 "$weiqi" match "$a" "$b" --games $half0 --size "$size" --komi 7.5 \
  --sgf-dir "$dir/half-0" --json "$@" > "$dir/half-0.json" &
pid0=$!
taskset -c 1 "$weiqi" match "$bumped" "$b" --games $(( games - half0 )) --size "$size" --komi 7.5 \
  --sgf-dir "$dir/half-1" --json "$@" > "$dir/half-1.json" &
pid1=$!
wait $pid0 || { echo "half 0 failed" >&2; exit 1; }
wait $pid1 || { echo "half 1 failed" >&2; exit 1; }
python3 - "$dir" <<'PY'
import json, math, sys
halves = [json.load(open(f"{sys.argv[1]}/half-{k}.json")) for k in (0, 1)]
wins = [h["a_wins"] + 0.5 * h["draws"] for h in halves]
n = sum(h["games"] for h in halves)
w = sum(wins)
z = 1.959964
p = w / n
centre = (p + z * z / (2 * n)) / (1 + z * z / n)
half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
print(json.dumps({"games": n, "a_wins": w, "a_win_rate": round(p, 4),
                  "wilson95": [round(centre - half, 4), round(centre + half, 4)],
                  "halves": [[wh, h["games"]] for wh, h in zip(wins, halves)]}))
PY
