#!/bin/bash
# Replay window: generation 8 of runs/9x9-90min trained again from generation 7 (the
# best then) on the last W generations' self-play, W = 1, 2, 3, 5 (the run used 3), the
# run's 3,000 steps of 128, seed 3; then each against generation 7, 2 x 30 games, PUCT 32.
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
W=${W:-/work/main/target/release/weiqi-abl}
R=/tmp/runs/9x9-90min
cd /tmp/window
for w in 1 2 3 5; do
  [ -f w$w.safetensors ] && continue
  data=""; for g in $(seq $((9 - w)) 8); do data="$data $R/gen=$g/selfplay"; done
  echo "w$w train start $(date +%T)" >> times.txt
  $W train --init $R/gen=7/model.safetensors --data $data --out w$w.safetensors --steps 3000 --batch 128 \
     --seed 3 --log-every 150 --threads 2 --max-seconds 100000 > w$w.log 2>&1 || echo "w$w FAILED" >> times.txt
  echo "w$w train end $(date +%T)" >> times.txt
done
