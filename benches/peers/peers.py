#!/usr/bin/env python3
"""Runs the paper benchmarks (benches/paper) in JAX or PyTorch on a data file of
benches/paper/gen_data.py and prints one JSON object: the median primal and gradient times
(milliseconds) over --runs timed runs after --warmup untimed ones (JAX's first run compiles).

    peers.py SYSTEM BENCH DATA.in [--runs N] [--warmup W] [--write-expected PREFIX]
             [--max-seconds S] [--device cpu|gpu]

SYSTEM: jax | torch; BENCH: a benchmark of benches/paper/benchmarks.py (kmeans, skmeans, gmm,
lstm, rnn, rsbench, xsbench), implemented in BENCH_jax.py / BENCH_torch.py. --write-expected PREFIX writes the results in
Futhark's text format to PREFIX.ENTRY.out for the .fut file's primal and gradient entries (the
expected outputs of the test blocks). --max-seconds stops taking timed runs once that much time
has been spent on an entry (at least one run is always timed). --device (default: the environment's
VKAD_PEER_DEVICE, else cpu) runs the peer on the CPU or on CUDA's first GPU; every timed run ends
with its results copied to the host."""
import argparse
import importlib
import json
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "paper"))
import benchmarks  # noqa: E402
from futhark_data import read_values, to_text  # noqa: E402


def timed(f, runs, warmup, max_seconds):
    for _ in range(warmup):
        f()
    times = []
    spent = 0.0
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        dt = time.perf_counter() - t0
        times.append(dt * 1000)
        spent += dt
        if spent > max_seconds:
            break
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("system", choices=["jax", "torch"])
    ap.add_argument("bench", choices=benchmarks.present())
    ap.add_argument("data")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--write-expected")
    ap.add_argument("--device", choices=["cpu", "gpu"], default=os.environ.get("VKAD_PEER_DEVICE", "cpu"))
    args = ap.parse_args()
    os.environ["VKAD_PEER_DEVICE"] = args.device  # read by the peer module, imported next
    mod = importlib.import_module(f"{args.system}_peer")
    values = read_values(args.data)
    primal, grad = mod.make(args.bench, values)
    if args.write_expected:
        for entry, f in zip(benchmarks.entries(args.bench), (primal, grad)):
            out = f()
            out = out if isinstance(out, tuple) else (out,)
            with open(f"{args.write_expected}.{entry}.out", "w") as fh:
                fh.write("\n".join(to_text(v) for v in out) + "\n")
    tp = timed(primal, args.runs, args.warmup, args.max_seconds)
    tg = timed(grad, args.runs, args.warmup, args.max_seconds)
    p, g = statistics.median(tp), statistics.median(tg)
    print(json.dumps({
        "system": args.system, "version": mod.version(), "device": mod.device(), "bench": args.bench,
        "data": os.path.basename(args.data).removesuffix(".in"),
        "primal_entry": benchmarks.entries(args.bench)[0], "grad_entry": benchmarks.entries(args.bench)[1],
        "primal_ms": p, "grad_ms": g, "overhead": g / p if p > 0 else None,
        "primal_runs": len(tp), "grad_runs": len(tg), "python": platform.python_version(),
    }))


if __name__ == "__main__":
    main()
