#!/usr/bin/env bash
# Runs Futhark's own programs through vkad, unchanged: the compiler's tests/ad and tests/accs,
# and the test files (`*_tests.fut`, `*_test.fut`) of Futhark packages. Nothing is vendored:
# give the checkouts (e.g. `git clone https://github.com/diku-dk/futhark`).
#
#   tests/compat/run.sh [-b BACKEND] [-v VKAD] FUTHARK_DIR [PACKAGE_DIR...]
#
# BACKEND is passed to `vkad test -b` (default: vulkan, the default device). Each PACKAGE_DIR is
# a package checkout with the `lib/github.com/OWNER/NAME` layout of `futhark pkg`; all of them
# are laid out side by side in one temporary `lib/` (as `futhark pkg sync` would install them as
# each other's dependencies: linalg's nmf imports `../cpprandom/random`). Prints one line per
# file (passed, failed, skipped datasets, or the error) and a total; exits 1 if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

backend=vulkan
vkad=target/release/vkad
while getopts "b:v:" o; do
  case $o in
    b) backend=$OPTARG ;;
    v) vkad=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
futhark=$1
shift
[ -x "$vkad" ] || cargo build --release -p vkad

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in "$@"; do
  cp -r "$p/lib" "$tmp/" 2>/dev/null || { echo "error: $p has no lib/ directory" >&2; exit 2; }
done

total_p=0 total_f=0 total_s=0 bad=0
run() {
  local f=$1 shown=$2 out last p f_ s
  out=$(timeout 600 "$vkad" test -b "$backend" "$f" 2>&1) || true
  last=$(printf '%s\n' "$out" | tail -n 1)
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]]; then
    p=${BASH_REMATCH[1]} f_=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
    total_p=$((total_p + p)) total_f=$((total_f + f_)) total_s=$((total_s + s))
    if [ "$f_" -gt 0 ]; then
      bad=$((bad + 1))
      printf 'FAIL  %-60s %s\n' "$shown" "$last"
      printf '%s\n' "$out" | grep -m 3 -E 'failed|error' | sed 's/^/        /'
    else
      printf 'ok    %-60s %s\n' "$shown" "$last"
    fi
  else
    bad=$((bad + 1))
    printf 'ERROR %-60s %s\n' "$shown" "$(printf '%s\n' "$out" | grep -m 1 -E 'error|not supported' || echo "$last")"
  fi
}

# The compiler's tests: every file with a test block (files that only hold library code, such
# as tests/accs/intrinsics.fut, have none and are skipped).
while IFS= read -r f; do
  grep -q '^-- ==' "$f" || continue
  run "$f" "${f#"$futhark"/}"
done < <(find "$futhark/tests/ad" "$futhark/tests/accs" -name '*.fut' | sort)

if [ -d "$tmp/lib" ]; then
  while IFS= read -r f; do
    run "$f" "${f#"$tmp"/}"
  done < <(find "$tmp/lib" -name '*_tests.fut' -o -name '*_test.fut' | sort)
fi

echo "total: $total_p passed, $total_f failed, $total_s skipped datasets; $bad file(s) not passing (backend: $backend)"
[ "$bad" -eq 0 ]
