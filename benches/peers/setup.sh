#!/usr/bin/env bash
# Creates benches/peers/.venv with numpy, JAX (CPU) and PyTorch (CPU wheel): the peers that
# benches/paper/run.sh compares vkad with. Not used by CI or `cargo test`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-python3}"
if [ ! -x "$here/.venv/bin/python" ]; then
  "$py" -m venv "$here/.venv"
fi
"$here/.venv/bin/pip" install --quiet --upgrade pip
"$here/.venv/bin/pip" install --quiet numpy matplotlib 'jax[cpu]'
# The CPU wheel from PyTorch's own index; where that index cannot be reached (only PyPI is), the
# PyPI wheel (a CUDA build that also runs on CPUs: a larger download).
"$here/.venv/bin/pip" install --quiet torch --index-url https://download.pytorch.org/whl/cpu \
  || "$here/.venv/bin/pip" install --quiet torch
"$here/.venv/bin/python" -c 'import numpy, jax, torch; print("numpy", numpy.__version__, "jax", jax.__version__, "torch", torch.__version__)'
