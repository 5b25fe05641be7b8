#!/usr/bin/env bash
# Makes a fresh virtual environment for the Python package's tests (issue 47) at $1: the
# build tool (maturin), pytest, Gymnasium and PettingZoo (for their API checkers) and
# PyTorch (the dataset's training step; PyPI's wheel, with pip's cache kept between runs).
# Then: WEIQI_PYTHON_VENV=$1 cargo test -p weiqi-cli --test python_package
set -euo pipefail
venv=${1:?usage: scripts/python-venv.sh DIR}
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "maturin>=1.9.4,<2" pytest numpy "gymnasium>=1.0" "pettingzoo>=1.25" torch==2.13.0
echo "Python test environment ready in $venv"
