#!/bin/bash
# Each network against the base (4x48, pooling, score head, batch 128, 1e-3 constant),
# PUCT 32 visits, two processes of 30 games (seeds 101, 202), one core each.
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
W=/work/main/target/release/weiqi-study
cd /tmp/study
mkdir -p arena
for b in "$@"; do
  for s in 101 202; do
    [ -s arena/$b-$s.json ] || taskset -c $(( s == 101 ? 0 : 1 )) $W arena "net:nets/$b.safetensors" "net:nets/base.safetensors" --games 30 --visits 32 --size 9 --komi 7.5 --seed $s --json > arena/$b-$s.json 2>arena/$b-$s.err &
  done
  wait
  echo "$b done $(date +%T)" >> arena/log
done
