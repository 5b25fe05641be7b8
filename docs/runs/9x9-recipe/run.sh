#!/bin/bash
export LD_LIBRARY_PATH=/opt/libtorch-2.13.0/torch/lib:/opt/libtorch-2.13.0/nvidia/cu13/lib
cd /tmp/rl
echo "start $(date +%T)" >> times.txt
/work/main/target/release/weiqi-study loop --dir recipe --size 9 --komi 7.5 --generations 12 --games 1200 --teacher 400 --gumbel 16 --visits 32 --full-fraction 0.25 --cheap-visits 8 --score-head --blocks 3 --channels 32 --steps 6000 --batch 128 --lr 3e-3 --lr-schedule cosine --window 2 --gate-games 40 --gate-visits 32 --anchor-games 10 --gtp-anchor '/usr/games/gnugo --mode gtp --level 1' > loop.log 2>&1
echo "end $? $(date +%T)" >> times.txt
