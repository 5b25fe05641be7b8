#!/bin/bash
# The measurements' choices together: 3 blocks of 32, no pooling, the score head, Adam at
# 3e-3 constant, batch 128, the same 150 s; against the base and against 3x32 alone.
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
W=/work/main/target/release/weiqi-study
cd /tmp/study
while ! grep -q arena /tmp/teacher/times.txt 2>/dev/null; do sleep 10; done
[ -f nets/recipe.safetensors ] || $W train --data data/train --out nets/recipe.safetensors --seed 3 --log-every 150 --threads 2 \
   --max-seconds 150 --blocks 3 --channels 32 --score-head --batch 128 --steps 100000 --lr 3e-3 > logs/recipe.log 2>&1
{ $W evaluate --model nets/recipe.safetensors --data data/val --json; $W evaluate --model nets/recipe.safetensors --data /tmp/runs/9x9-90min/gen=9/selfplay --json; } > eval/recipe.json
./arenas.sh recipe
for s in 101 202; do
  taskset -c $(( s == 101 ? 0 : 1 )) $W arena "net:nets/recipe.safetensors" "net:nets/s3x32.safetensors" --games 30 --visits 32 --size 9 --komi 7.5 --seed $s --json > arena/recipe-vs-s3x32-$s.json 2>/dev/null &
done
wait
echo "recipe done $(date +%T)" >> arena/log
