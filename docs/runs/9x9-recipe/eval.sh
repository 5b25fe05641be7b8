#!/bin/bash
# The recipe run's best network, 800 PUCT visits, against GNU Go level 1 (the goal's
# measure), two processes pinned to one core each.
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
cd /tmp/rl
B=$(python3 -c "import json;print(json.load(open('recipe/loop.json'))['best'])")
G=${GAMES:-20}
for s in 1000 2000; do
  taskset -c $(( s == 1000 ? 0 : 1 )) timeout ${LIMIT:-500} /work/main/target/release/weiqi-study arena "net:recipe/gen=$B/model.safetensors" "gtp:/usr/games/gnugo --mode gtp --level 1" --games $G --visits 800 --size 9 --komi 7.5 --seed $s --json > gnugo-$s.json 2> gnugo-$s.err &
done
wait
echo "best gen=$B" > gnugo-best.txt
