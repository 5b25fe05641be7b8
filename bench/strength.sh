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
# Each half writes DIR/half-0 and DIR/half-1 (SGF records) and DIR/half-K.json; A's seed
# (`--seed N`) is raised by K in half K so the halves differ.
set -eu
a=$1 b=$2 games=$3 size=$4 dir=$5
shift 5
weiqi=${WEIQI:-weiqi}
mkdir -p "$dir"
half0=$(( (games + 1) / 2 ))
half1=$(( games - half0 ))
for k in 0 1; do
  n=$half0; [ $k = 1 ] && n=$half1
  seeded=$(printf '%s' "$a" | awk -v k=$k '{for(i=1;i<=NF;i++) if($(i-1)=="--seed") $i=$i+k; print}')
  taskset -c $k "$weiqi" match "$seeded" "$b" --games $n --size "$size" --komi 7.5 \
    --sgf-dir "$dir/half-$k" --json "$@" > "$dir/half-$k.json" &
done
wait
python3 - "$dir" <<'PY'
import json, math, sys
halves = [json.load(open(f"{sys.argv[1]}/half-{k}.json")) for k in (0, 1)]
n = sum(h["games"] for h in halves)
w = sum(h["a_wins"] + 0.5 * h["draws"] for h in halves)
z = 1.959964
p = w / n
centre = (p + z * z / (2 * n)) / (1 + z * z / n)
half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
print(json.dumps({"games": n, "a_wins": w, "a_win_rate": round(p, 4),
                  "wilson95": [round(centre - half, 4), round(centre + half, 4)],
                  "halves": [[h["a_wins"], h["games"]] for h in halves]}))
PY
