#!/usr/bin/env bash
# benches/futhark/run.sh: runs futhark-benchmarks programs, unchanged, on generated small inputs
# on the interpreter and on Vulkan, compares the two backends' outputs and prints a table.
#
#   benches/futhark/run.sh [FUTHARK_BENCHMARKS_DIR]     (default /tmp/fut/futhark-benchmarks)
#
# The checkout is fetched separately, never vendored. Inputs come from gen_inputs.py (seeded,
# standard library only) and are written with the outputs to $OUT (default a fresh temporary
# directory). Environment: VKAD (binary, default target/release/vkad, built if missing),
# TIMEOUT (seconds per run, default 300; also the device wait, VKAD_TIMEOUT_S). A row's status
# is `ok` (both backends ran and agree: integers exactly, floats to a relative 1e-6), `differ`
# (both ran, outputs differ; the first difference is shown), or `fail` (a backend failed; its
# first error line is shown). The exit status is 0 when every row is ok.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bench="${1:-/tmp/fut/futhark-benchmarks}"
timeout_s="${TIMEOUT:-300}"
# The Vulkan runtime's own wait for one submission (60 s by default) gets the same limit.
export VKAD_TIMEOUT_S="${VKAD_TIMEOUT_S:-$timeout_s}"
if [ ! -d "$bench" ]; then
  echo "no futhark-benchmarks checkout at $bench" >&2
  exit 2
fi
if [ -z "${VKAD:-}" ]; then
  VKAD="$root/target/release/vkad"
  [ -x "$VKAD" ] || (cd "$root" && cargo build --release -p vkad) || exit 2
fi
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"

# program  entry  data set (gen_inputs.py)
runs=(
  "adbench/gmm.fut calculate_objective gmm"
  "adbench/gmm.fut calculate_jacobian gmm"
  "adbench/lstm.fut calculate_objective lstm"
  "adbench/lstm.fut calculate_jacobian lstm"
  "rsbench/rsbench.fut main rsbench"
  "rsbench/rsbench.fut diff rsbench"
  "xsbench/xsbench.fut main xsbench"
  "xsbench/xsbench.fut diff xsbench"
  "accelerate/kmeans/kmeans.fut main kmeans_accelerate"
  "rodinia/kmeans/kmeans.fut main kmeans_rodinia"
)

failures=0
rows=()
for r in "${runs[@]}"; do
  read -r prog entry set <<<"$r"
  tag="$(echo "$prog" | tr '/.' '__')_$entry"
  input="$out/$set.in"
  [ -f "$input" ] || python3 "$here/gen_inputs.py" gen "$set" >"$input"
  status=ok
  detail=""
  times=()
  for b in interp vulkan; do
    start=$(date +%s%N)
    if timeout "$timeout_s" "$VKAD" run -b "$b" -e "$entry" "$bench/$prog" <"$input" \
      >"$out/$tag.$b.out" 2>"$out/$tag.$b.err"; then
      ds=$((($(date +%s%N) - start) / 100000000))
      times+=("$((ds / 10)).$((ds % 10))")
    else
      rc=$?
      times+=("-")
      status=fail
      msg="$(grep -m1 -E 'error|panic|timed out' "$out/$tag.$b.err" || head -n1 "$out/$tag.$b.err")"
      [ $rc -eq 124 ] && msg="timed out after ${timeout_s}s"
      detail="${detail:+$detail; }$b: ${msg:0:110}"
    fi
  done
  if [ "$status" = ok ]; then
    if ! detail="$(python3 "$here/gen_inputs.py" compare "$out/$tag.interp.out" "$out/$tag.vulkan.out")"; then
      status=differ
    fi
  fi
  [ "$status" = ok ] || failures=$((failures + 1))
  rows+=("$(printf '%-30s %-20s %-7s %8s %8s  %s' "$prog" "$entry" "$status" "${times[0]}" "${times[1]}" "$detail")")
  echo "${rows[-1]}" >&2
done

echo
printf '%-30s %-20s %-7s %8s %8s  %s\n' program entry status interp_s vulkan_s detail
for row in "${rows[@]}"; do echo "$row"; done
echo "outputs in $out"
[ "$failures" -eq 0 ]
