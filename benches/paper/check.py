#!/usr/bin/env python3
"""Checks vkad's results on the paper benchmarks against JAX's (and PyTorch's, where it is
installed) to a normwise relative error of 1e-6 for f64 benchmarks and 1e-3 for f32 ones (each
benchmark's TOL in gen_B.py): for each result value,
max|vkad - jax| / max|jax| (the absolute error where jax's value is all zeros).

    ../peers/.venv/bin/python check.py [-b BACKEND]... [--vkad PATH] [DATA.in ...]

Default data: the small data sets (small/*_small.in); default backends: interp, kernels,
and vulkan. An entry a backend does not support ("not supported" on stderr) is
reported as skipped. Exit status 1 if any value differs by more than the tolerance."""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "peers"))
import benchmarks  # noqa: E402
from futhark_data import read_values  # noqa: E402


def relerr(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    scale = np.max(np.abs(want)) if want.size else 0.0
    err = np.max(np.abs(got - want)) if want.size else 0.0
    return float(err / scale) if scale > 0 else float(err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--backend", action="append")
    ap.add_argument("--vkad", default=os.environ.get("VKAD", "vkad"))
    ap.add_argument("data", nargs="*")
    args = ap.parse_args()
    backends = args.backend or ["interp", "kernels", "vulkan"]
    data = args.data or sorted(glob.glob(os.path.join(here, "small", "*_small.in")))
    peers = {}
    for name in ("jax", "torch"):
        try:
            peers[name] = __import__(f"{name}_peer")
        except ImportError as e:
            print(f"({name} not available: {e})")
    ok = True
    print(f"{'data':<28} {'entry':<10} {'system':<16} rel. error per result value")
    for path in data:
        bench = benchmarks.bench_of(path)
        tol = benchmarks.tolerance(bench)
        values = read_values(path)
        ref = {}
        for name, mod in peers.items():
            fs = mod.make(bench, values)
            ref[name] = [f() for f in fs]
        for k, entry in enumerate(benchmarks.entries(bench)):
            want = ref["jax"][k]
            want = want if isinstance(want, tuple) else (want,)
            rows = []
            if "torch" in ref:
                t = ref["torch"][k]
                rows.append(("torch", t if isinstance(t, tuple) else (t,), None))
            for be in backends:
                with open(path, "rb") as fin, tempfile.TemporaryFile() as fout:
                    r = subprocess.run([args.vkad, "run", os.path.join(here, f"{bench}.fut"), "-e", entry,
                                        "-b", be, "--binary-output"], stdin=fin, stdout=fout,
                                       stderr=subprocess.PIPE, text=False)
                    if r.returncode != 0:
                        err = r.stderr.decode(errors="replace").strip().splitlines()
                        msg = err[-1] if err else f"exit {r.returncode}"
                        rows.append((f"vkad {be}", None, msg))
                        if "not supported" not in msg:
                            ok = False
                        continue
                    fout.seek(0)
                    with tempfile.NamedTemporaryFile(suffix=".out") as tmp:
                        tmp.write(fout.read())
                        tmp.flush()
                        rows.append((f"vkad {be}", tuple(read_values(tmp.name)), None))
            for system, got, msg in rows:
                if got is None:
                    print(f"{os.path.basename(path):<28} {entry:<10} {system:<16} skipped: {msg}")
                    continue
                errs = [relerr(g, w) for g, w in zip(got, want)] if len(got) == len(want) else [float("inf")]
                bad = any(e > tol for e in errs)
                ok = ok and not bad
                print(f"{os.path.basename(path):<28} {entry:<10} {system:<16} "
                      + " ".join(f"{e:.1e}" for e in errs) + (f"  FAIL (tolerance {tol:g})" if bad else ""))
    print("all within tolerance" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
