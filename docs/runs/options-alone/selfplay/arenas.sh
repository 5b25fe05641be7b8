#!/bin/bash
# Each one-generation candidate against the common generation 0 (PUCT, 32 visits), two
# processes of 30 games (seeds 101 and 202), one core each.
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
W=/work/main/target/release/weiqi-abl
G0=/tmp/runs/9x9-90min/gen=0/model.safetensors
cd /tmp/abl
mkdir -p arena
for v in puct gumbel cap forced both; do
  if [ $v = both ]; then M=/tmp/runs/9x9-90min/gen=1/model.safetensors; else M=$v/gen=1/model.safetensors; fi
  [ -f $M ] || { echo "$v: no model" >> arena/log; continue; }
  for s in 101 202; do
    [ -s arena/$v-$s.json ] || taskset -c $(( s == 101 ? 0 : 1 )) $W arena "net:$M" "net:$G0" --games 30 --visits 32 --size 9 --komi 7.5 --seed $s --json > arena/$v-$s.json 2>arena/$v-$s.err &
  done
  wait
  echo "$v done $(date +%T)" >> arena/log
done
