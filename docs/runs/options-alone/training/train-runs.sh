#!/bin/bash
# Training-side study: each network from scratch on the teacher's games 0..1023 (shards 0-3
# of runs/9x9-90min gen=0), the same seed, BUDGET seconds on both cores (or fixed steps),
# then evaluated on the held-out shard 4 (176 games) and on generation 9's self-play.
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
W=/work/main/target/release/weiqi-study
BUDGET=${BUDGET:-150}
cd /tmp/study
run() { # name, then weiqi train flags
  local name=$1; shift
  [ -f nets/$name.safetensors ] && return
  mkdir -p nets
  echo "$name start $(date +%T)" >> times.txt
  $W train --data data/train --out nets/$name.safetensors --seed 3 --log-every 150 --threads 2 \
     --max-seconds $BUDGET "$@" > logs/$name.log 2>&1 || echo "$name FAILED" >> times.txt
  echo "$name end $(date +%T)" >> times.txt
}
mkdir -p logs
P="--global-pooling --score-head"
run base      --blocks 4 --channels 48 $P --batch 128 --steps 100000
run plain     --blocks 4 --channels 48    --batch 128 --steps 100000
run pool      --blocks 4 --channels 48 --global-pooling --batch 128 --steps 100000
run score     --blocks 4 --channels 48 --score-head --batch 128 --steps 100000
run opponent  --blocks 4 --channels 48 $P --opponent-head --batch 128 --steps 100000
run s3x32     --blocks 3 --channels 32 $P --batch 128 --steps 100000
run s6x64     --blocks 6 --channels 64 $P --batch 128 --steps 100000
run b64       --blocks 4 --channels 48 $P --batch 64 --steps 100000
run b256      --blocks 4 --channels 48 $P --batch 256 --steps 100000
run lr3e-3    --blocks 4 --channels 48 $P --batch 128 --steps 100000 --lr 3e-3
run lr3e-4    --blocks 4 --channels 48 $P --batch 128 --steps 100000 --lr 3e-4
# The cosine needs its length: the base's steps in the budget.
STEPS=$(tail -1 nets/base.csv | cut -d, -f1)
run cosine    --blocks 4 --channels 48 $P --batch 128 --steps $STEPS --lr-schedule cosine
run cosine3e-3 --blocks 4 --channels 48 $P --batch 128 --steps $STEPS --lr-schedule cosine --lr 3e-3
for n in nets/*.safetensors; do
  b=$(basename $n .safetensors)
  [ -f eval/$b.json ] && continue
  mkdir -p eval
  { $W evaluate --model $n --data data/val --json; $W evaluate --model $n --data /tmp/runs/9x9-90min/gen=9/selfplay --json; } > eval/$b.json
done
echo "all end $(date +%T)" >> times.txt
