#!/usr/bin/env bash
# Installs libtorch 2.13.0 (what tch 0.26 expects) from PyPI's torch wheel into
# /opt/libtorch-2.13.0 (or $1), with the two small CUDA runtime wheels libtorch_cpu links,
# and without the rest of CUDA. Idempotent: does nothing when already there.
# Then: export LIBTORCH=/opt/libtorch-2.13.0/torch
set -euo pipefail
dest=${1:-/opt/libtorch-2.13.0}
if [ -f "$dest/torch/lib/libtorch_cpu.so" ]; then
  echo "libtorch already in $dest"
  exit 0
fi
python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps --target "$dest" \
  torch==2.13.0 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85
# CUDA-only libraries: CPU programs never load them.
rm -f "$dest"/torch/lib/libtorch_cuda*.so "$dest"/torch/lib/libc10_cuda.so \
      "$dest"/torch/lib/libcaffe2_nvrtc.so "$dest"/torch/lib/libtorch_nvshmem.so "$dest"/torch/lib/libtorch_python.so
echo "libtorch installed in $dest (export LIBTORCH=$dest/torch)"
