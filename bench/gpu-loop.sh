#!/usr/bin/env bash
# Issue 48's GPU figures: the same short loop (two generations on 9x9 with the CPU run's
# options) on CUDA at several lane counts and on the machine's CPU cores, each run's
# loop.json copied to OUTDIR and its self-play and training times printed.
#
#   bench/gpu-loop.sh BINARY OUTDIR [LIMIT_S]
#
# BINARY: a `weiqi` built with tch against the machine's own libtorch
# (scripts/build-for-torch.sh); its torch/lib is found through python3. Each run is cut
# at LIMIT_S seconds (default 150): the figures are generation 1's self-play and training,
# recorded before its gate, whose games evaluate one position at a time.
set -u
bin=${1:?usage: bench/gpu-loop.sh BINARY OUTDIR [LIMIT_S]}
out=${2:?usage: bench/gpu-loop.sh BINARY OUTDIR [LIMIT_S]}
limit=${3:-150}
mkdir -p "$out"
torch=$(python3 -c "import torch,os;print(os.path.dirname(torch.__file__))")
python3 -c "import torch;print('torch', torch.__version__, torch.cuda.get_device_name(0))"
export LD_LIBRARY_PATH=$torch/lib
"$bin" --version || exit 1
common=(--size 9 --komi 7.5 --generations 2 --games 512 --visits 32 --gumbel 16
  --full-fraction 0.25 --cheap-visits 8 --global-pooling --score-head --blocks 4
  --channels 48 --steps 1000 --batch 128 --window 3 --gate-games 20 --gate-visits 32
  --anchor-games 4)
run() { # name, then the device's arguments
  local name=$1 dir
  shift
  dir=$(mktemp -d)
  rm -f "$out/$name-loop.json"
  timeout "$limit" "$bin" loop --dir "$dir" "${common[@]}" "$@" >"$out/$name.log" 2>&1
  echo "$name: exit $?"
  if [ ! -f "$dir/loop.json" ]; then
    echo "$name: no record, see $out/$name.log"
  else
    cp "$dir/loop.json" "$out/$name-loop.json"
    # Generation 1 plays the network; generation 0's light play is no device's figure.
    python3 - "$name" "$dir/loop.json" <<'PY'
import json, sys
for g in json.load(open(sys.argv[2]))["generations"][1:]:
    s, t = g.get("selfplay"), g.get("training")
    if s:
        print(f"{sys.argv[1]} gen {g['number']}: self-play {s['positions']} positions in "
              f"{s['seconds']:.1f} s ({s['positions'] / s['seconds']:.0f}/s)")
    if t:
        print(f"{sys.argv[1]} gen {g['number']}: training in {t['seconds']:.1f} s")
PY
  fi
  rm -rf "$dir"
}
for lanes in 16 8 4 2; do
  run "cuda$lanes" --device cuda --threads "$lanes"
done
run "cpu$(nproc)" --device cpu --threads "$(nproc)"
