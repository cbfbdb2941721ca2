#!/usr/bin/env bash
# benches/paper/run.sh: the SC22 paper's benchmarks (benchmarks.py: dense and sparse k-means, GMM,
# ADBench LSTM, a batched RNN LSTM, RSBench, XSBench) in vkad and in its peers
# (JAX, PyTorch) on this machine, written to the paper section of benches/RESULTS.md.
#
#   benches/paper/run.sh [DATASET...]
#
# 1. sets up the peers' virtual environment if it is missing (benches/peers/setup.sh),
# 2. builds vkad (cargo build --release -p vkad) unless $VKAD names a binary,
# 3. generates the data sets (gen_data.py, into benches/paper/data/, git-ignored),
# 4. checks vkad against JAX on the small data sets (check.py, relative error 1e-6),
# 5. times, for each data set, the primal and gradient entries: whole `vkad run` processes on
#    -b interp and -b vulkan, `vkad bench` (Vulkan, in process), JAX and
#    PyTorch (median after a warm-up), and writes benches/RESULTS.md's paper section with two
#    plots (benches/paper_overhead.png, benches/paper_time.png).
#
# The default data sets are sized for a 2-core machine with lavapipe (about 10 minutes in all);
# the paper's own shapes (`gen_data.py paper`) are far larger. Environment: VKAD (binary), REPS
# (timed runs of `vkad bench`, default 1), PEER_RUNS (default 10), TIMEOUT (seconds per vkad
# process, default 100; `vkad bench` gets twice that), BACKENDS (default interp,vulkan),
# PYTHON (a python with numpy, JAX and PyTorch to use instead of the peers' virtual environment),
# PEER_DEVICE (cpu, the default, or gpu: JAX and PyTorch on CUDA), SECTION (a name: write the
# table to a section of RESULTS.md of its own, e.g. `gpu` for a GPU machine's table).
#
# On a machine with an NVIDIA GPU (its Vulkan driver and CUDA builds of JAX and PyTorch installed):
#   VKAD=target/release/vkad PYTHON=python3 BACKENDS=vulkan PEER_DEVICE=gpu SECTION=gpu \
#     benches/paper/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-$root/benches/peers/.venv/bin/python}"
[ -n "${PYTHON:-}" ] || [ -x "$py" ] || "$root/benches/peers/setup.sh"
if [ -z "${VKAD:-}" ]; then
  (cd "$root" && cargo build --release -p vkad)
  VKAD="$root/target/release/vkad"
fi
if [ $# -gt 0 ]; then
  sets=("$@")
else
  mapfile -t sets < <("$py" "$here/benchmarks.py" default)
fi
"$py" "$here/gen_data.py" "${sets[@]}"
# The check runs the backends of BACKENDS where it is set, else interp, kernels and vulkan.
check_backends=()
backends="${BACKENDS:-}"
for b in ${backends//,/ }; do check_backends+=(-b "$b"); done
VKAD_PEER_DEVICE="${PEER_DEVICE:-cpu}" "$py" "$here/check.py" --vkad "$VKAD" "${check_backends[@]}"
files=()
for s in "${sets[@]}"; do files+=("$here/data/$s.in"); done
note=""
if [ $# -eq 0 ]; then
  note="Sizes: $("$py" "$here/benchmarks.py" note)"
fi
"$py" "$here/run_bench.py" --vkad "$VKAD" --python "$py" \
  --backends "${BACKENDS:-interp,vulkan}" --reps "${REPS:-1}" \
  --peer-runs "${PEER_RUNS:-10}" --timeout "${TIMEOUT:-100}" --note "$note" \
  --peer-device "${PEER_DEVICE:-cpu}" --section "${SECTION:-}" "${files[@]}"
