#!/bin/bash
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
W=/work/main/target/release/weiqi-abl
cd /tmp/abl
for v in puct gumbel cap forced; do
  echo "$v start $(date +%T)" >> times.txt
  $W loop --dir $v $(cat $v.flags) > $v.log 2>&1 || echo "$v FAILED" >> times.txt
  echo "$v end $(date +%T)" >> times.txt
done
