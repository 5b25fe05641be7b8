#!/usr/bin/env bash
# Builds `weiqi` with the cargo feature tch against a libtorch other than the 2.13.0 that
# tch 0.26 expects: a GPU machine that cannot download brings its own PyTorch (the H100
# lent to issue 48 had torch 2.11.0+cu130), and a program must be built against the
# libtorch it loads. Needs the network to PyPI, not a GPU. Everything it makes stays in
# target/torch-VERSION/ (the wheel's libtorch, a patched torch-sys, the build).
#
#   scripts/build-for-torch.sh 2.11.0 [OUT]      # OUT: target/torch-2.11.0/weiqi, stripped
#
# Then, on the GPU machine, with the binary copied there:
#   export LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib
#   ./weiqi loop ... --device cuda
set -euo pipefail
ver=${1:?usage: scripts/build-for-torch.sh TORCH_VERSION [OUT]}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/target/torch-$ver
out=$(realpath -m "${2:-$dir/weiqi}")
lib=$dir/libtorch
work=$(mktemp -d)
trap '[ -f "$work/Cargo.lock" ] && cp "$work/Cargo.lock" "$root/Cargo.lock"; rm -rf "$work"' EXIT

# 1. PyPI's torch wheel (a CUDA build): its headers and libraries, CUDA ones included, so
#    that the binary links libtorch_cuda. Unpacked aside and moved in whole, so that a
#    cut run leaves nothing half there.
if [ ! -d "$lib" ]; then
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    -d "$work" "torch==$ver"
  python3 - "$work" "$work/libtorch" <<'PY'
import glob, sys, zipfile
wheel = zipfile.ZipFile(glob.glob(f"{sys.argv[1]}/torch-*.whl")[0])
keep = ("torch/include/", "torch/lib/", "torch/share/")
wheel.extractall(sys.argv[2], [n for n in wheel.namelist() if n.startswith(keep)])
PY
  mkdir -p "$dir"
  mv "$work/libtorch" "$lib"
fi

# 2. tch's generated wrappers name every ATen operator of 2.13; those an older libtorch
#    lacks (or declares otherwise) do not compile. A copy of torch-sys throws in their
#    place: weiqi calls none of them.
#    The copy stays at one path, so that a second build reuses the first's.
cd "$root"
cargo fetch --quiet
sys=$dir/torch-sys
gen=$sys/libtch/torch_api_generated.cpp
check() { # compiles the wrappers without building them; cc.log holds the errors
  c++ -std=c++17 -fsyntax-only -w -fmax-errors=0 -D_GLIBCXX_USE_CXX11_ABI=1 -DGLOG_USE_GLOG_EXPORT \
    -I "$lib/torch/include" -I "$lib/torch/include/torch/csrc/api/include" "$gen" >"$work/cc.log" 2>&1
}
if [ ! -f "$sys/.stubbed" ]; then
  tsv=$(grep -A1 '^name = "torch-sys"$' Cargo.lock | sed -n 's/^version = "\(.*\)"$/\1/p')
  src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"torch-sys-$tsv" | head -n 1)
  rm -rf "$sys"
  cp -r "$src" "$sys"
  check || true
  { grep -oE 'torch_api_generated\.cpp:[0-9]+:[0-9]+: +(error|required from here)' "$work/cc.log" || true; } |
    cut -d: -f2 | sort -un >"$work/bad"
  python3 - "$gen" "$work/bad" <<'PY'
import sys
path, bad = sys.argv[1], sorted({int(x) for x in open(sys.argv[2]).read().split()})
lines = open(path).read().split("\n")
spans = set()
for line in bad:
    start = line - 1
    while lines[start].strip() != "PROTECT(":
        start -= 1
    end = line - 1
    while lines[end] != "  )":
        end += 1
    spans.add((start, end))
for start, end in sorted(spans, reverse=True):
    lines[start + 1:end] = ["    throw std::runtime_error(\"not in this libtorch\");"]
open(path, "w").write("\n".join(lines))
print(f"{len(spans)} wrappers stubbed", file=sys.stderr)
PY
  if ! check; then
    echo "the wrappers still do not compile against libtorch $ver:" >&2
    head -n 20 "$work/cc.log" >&2
    exit 1
  fi
  touch "$sys/.stubbed"
fi

# 3. The build, in its own target folder. Without --no-as-needed the linker drops
#    libtorch_cuda (nothing names its symbols: it registers CUDA when loaded); the CUDA
#    libraries it needs exist only on the GPU machine.
cp Cargo.lock "$work/Cargo.lock"
env -u LIBTORCH_USE_PYTORCH -u LIBTORCH_INCLUDE -u LIBTORCH_LIB -u LIBTORCH_CXX11_ABI \
  CARGO_TARGET_DIR="$dir" LIBTORCH="$lib/torch" LIBTORCH_BYPASS_VERSION_CHECK=1 \
  cargo rustc --release -p weiqi-cli --features tch --bin weiqi \
  --config "patch.crates-io.torch-sys.path=\"$sys\"" -- \
  -C link-arg=-Wl,--allow-shlib-undefined -C link-arg=-Wl,--no-as-needed,-ltorch_cuda,-ltorch
mkdir -p "$(dirname "$out")"
strip -o "$out" "$dir/release/weiqi"
echo "built $out against libtorch $ver"
