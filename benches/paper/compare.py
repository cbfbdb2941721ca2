#!/usr/bin/env python3
"""A/B of vkad builds on the paper benchmarks: for each data set, `vkad bench` of its primal and
gradient entries with each binary in turn (alternating, so that a noisy machine affects all
alike), then optionally the peers (JAX, PyTorch) on the same data. One JSON line per measurement
goes to --out (appended) and to stdout; --table prints a markdown table at the end.

    compare.py --bins new=target/release/vkad,old=/tmp/vkad-old [--peers jax,torch]
               [--peer-device cpu|gpu] [--reps 3] [--timeout 60] [--deadline EPOCH_S]
               --out results.jsonl DATASET...

DATASET: a name of gen_data.py whose file is in benches/paper/data/ (generate it first).
--deadline stops starting new measurements after that time (seconds since the epoch), for runs
that must end inside a time limit."""
import argparse
import json
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import benchmarks  # noqa: E402
import run_bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bins", required=True, help="NAME=PATH,NAME=PATH: the vkad binaries")
    ap.add_argument("--peers", default="", help="peers to time after the binaries (jax,torch)")
    ap.add_argument("--peer-device", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--reps", type=int, default=3, help="timed runs of each `vkad bench`")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per process")
    ap.add_argument("--deadline", type=float, default=float("inf"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--table", action="store_true")
    ap.add_argument("sets", nargs="+")
    a = ap.parse_args()
    bins = [b.split("=", 1) for b in a.bins.split(",")]
    rows = []
    with open(a.out, "a") as out:
        def emit(d):
            rows.append(d)
            out.write(json.dumps(d) + "\n")
            out.flush()
            print(json.dumps(d), flush=True)

        for s in a.sets:
            bench = benchmarks.bench_of(s)
            data = os.path.join(here, "data", s + ".in")
            if not os.path.exists(data):
                emit({"data": s, "error": f"no data: run gen_data.py {s}"})
                continue
            for entry in benchmarks.entries(bench):
                for name, path in bins:
                    if time.time() > a.deadline:
                        emit({"data": s, "stop": "deadline"})
                        return table(rows) if a.table else None
                    t0 = time.time()
                    r = run_bench.run_vkad_bench(path, bench, entry, data, a.reps, a.timeout)
                    d = {"data": s, "entry": entry, "bin": name, "secs": round(time.time() - t0, 1)}
                    if isinstance(r, tuple):
                        d.update(wall_ms=r[0] * 1e3, kern_ms=r[1] * 1e3, launches=r[2], subs=r[3],
                                 transfers=r[4])
                    else:
                        d["error"] = r
                    emit(d)
            for p in [x for x in a.peers.split(",") if x]:
                r = run_bench.run_peer(sys.executable, p, bench, data, 5, a.timeout, a.peer_device)
                d = {"data": s, "bin": p}
                if isinstance(r, dict):
                    d.update(primal_ms=r["primal_ms"], grad_ms=r["grad_ms"], version=r["version"],
                             device=r["device"])
                else:
                    d["error"] = r
                emit(d)
    if a.table:
        table(rows)


def table(rows):
    """Wall / kernel milliseconds per data set, entry and binary; the peers' medians. (The kernel
    time is what `vkad bench` prints: since ea81af2 the device time of each submission, before
    it the sum of per-launch timestamps.)"""
    print("\n| data set | entry | system | wall (ms) | kernels (ms) | launches(+transfers)/submissions |")
    print("|---|---|---|---:|---:|---|")
    for r in rows:
        if "wall_ms" in r:
            print(f"| {r['data']} | {r['entry']} | {r['bin']} | {r['wall_ms']:.2f} | {r['kern_ms']:.2f} "
                  f"| {r['launches']}{'+%d' % r['transfers'] if r.get('transfers') else ''}/{r['subs']} |")
        elif "primal_ms" in r:
            print(f"| {r['data']} | primal / gradient | {r['bin']} {r['version']} | "
                  f"{r['primal_ms']:.2f} / {r['grad_ms']:.2f} | | |")
        elif "error" in r:
            print(f"| {r['data']} | {r.get('entry', '')} | {r.get('bin', '')} | {r['error']} | | |")


if __name__ == "__main__":
    main()
