#!/bin/bash
# The teacher alone: generation 0 of runs/9x9-90min (the tree search's 1,200 games, 400
# playouts) against the same network trained the same way (4x48, pooling, score head,
# 3,000 steps of 128) on 1,200 games of light play, as a loop without --teacher has it.
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
W=${W:-/work/main/target/release/weiqi-abl}
cd /tmp/teacher
[ -f light/manifest.json ] || $W selfplay --size 9 --komi 7.5 --games 1200 --policy light --seed 5 --out light > selfplay.log 2>&1
[ -f light.safetensors ] || $W train --data light --out light.safetensors --blocks 4 --channels 48 --global-pooling --score-head \
   --steps 3000 --batch 128 --seed 3 --log-every 150 --threads 2 --max-seconds 100000 > train.log 2>&1
echo "trained $(date +%T)" >> times.txt
for s in 101 202; do
  [ -s a-$s.json ] || taskset -c $(( s == 101 ? 0 : 1 )) $W arena "net:/tmp/runs/9x9-90min/gen=0/model.safetensors" "net:light.safetensors" --games 30 --visits 32 --size 9 --komi 7.5 --seed $s --json > a-$s.json 2>a-$s.err &
done
wait
echo "arena $(date +%T)" >> times.txt
