#!/bin/bash
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
W=${W:-/work/main/target/release/weiqi-abl}
R=/tmp/runs/9x9-90min
cd /tmp/window
for w in 1 2 3 5 run; do
  M=w$w.safetensors; [ $w = run ] && M=$R/gen=8/model.safetensors
  for s in 101 202; do
    [ -s a-$w-$s.json ] || taskset -c $(( s == 101 ? 0 : 1 )) $W arena "net:$M" "net:$R/gen=7/model.safetensors" --games 30 --visits 32 --size 9 --komi 7.5 --seed $s --json > a-$w-$s.json 2>a-$w-$s.err &
  done
  wait
  echo "arena w$w done $(date +%T)" >> times.txt
done
