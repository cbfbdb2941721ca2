#!/usr/bin/env python3
"""Seeded data sets for the paper benchmarks (benches/paper/*.fut), in Futhark's binary value
format (what `vkad run` reads on standard input and `input @ FILE` names in a test block).

    python3 gen_data.py [-o DIR] NAME...

Names (the seed is the CRC-32 of the name, so a name always gives the same file):

  kmeans_n{N}_d{D}_k{K}   N points in D dimensions around K true clusters (uniform centres in
                          [0, 10)^D, unit normal noise); the initial centres are the first K
                          points. Values: points [N][D]f64, centres [K][D]f64.
  gmm_n{N}_d{D}_K{K}      ADBench's GMM inputs: alphas [K] ~ N(0, 1), means [K][D] ~ U(0, 1),
                          icf [K][D + D(D-1)/2] ~ N(0, 0.1²) (log-diagonal then the strictly
                          lower triangle, column by column), points [N][D] ~ U(0, 1), and the
                          Wishart prior's gamma = 1.0 (f64) and m = 0 (i64), ADBench's values.
  lstm_l{L}_c{C}[_b{B}]   ADBench's LSTM inputs, hidden width B (default 14): main parameters
                          [L][2][4][B] and extra parameters [3][B] ~ U(-1, 1), state [L][2][B]
                          ~ U(-1, 1), sequence [C][B] ~ U(0, 1).

Aliases: `small` (the CI data sets, written to small/ by default: kmeans_n100_d4_k3,
gmm_n20_d3_K4, lstm_l2_c6) and `paper` (the paper's shapes: see benches/README.md).
Each data set is written to DIR/NAME.in (default: data/ beside this script). numpy only.
"""
import argparse
import os
import re
import struct
import sys
import zlib

import numpy as np

SMALL = {"kmeans_small": "kmeans_n100_d4_k3", "gmm_small": "gmm_n20_d3_K4", "lstm_small": "lstm_l2_c6"}
PAPER = (
    ["kmeans_n494019_d35_k5", "kmeans_n10000_d256_k1024"]
    + [f"gmm_n{n}_d{d}_K{k}" for (n, d, k) in
       [(1000, 64, 200), (1000, 128, 200), (10000, 32, 200), (10000, 64, 25), (10000, 128, 25),
        (10000, 128, 200)]]
    + [f"lstm_l{l}_c{c}" for l in (2, 4) for c in (1024, 4096)]
)

TYPES = {np.dtype("float64"): b" f64", np.dtype("int64"): b" i64", np.dtype("float32"): b" f32",
         np.dtype("int32"): b" i32"}


def write_value(f, v):
    """One value in Futhark's binary format: 'b', version 2, rank, 4-byte type, dims, data (LE)."""
    a = np.asarray(v)
    f.write(b"b" + bytes([2, a.ndim]) + TYPES[a.dtype])
    f.write(struct.pack("<%dq" % a.ndim, *a.shape))
    f.write(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes())


def kmeans(rng, n, d, k):
    true_centres = rng.uniform(0.0, 10.0, size=(k, d))
    labels = rng.integers(0, k, size=n)
    points = true_centres[labels] + rng.standard_normal((n, d))
    return [points, points[:k].copy()]


def gmm(rng, n, d, k):
    alphas = rng.standard_normal(k)
    means = rng.uniform(0.0, 1.0, size=(k, d))
    icf = 0.1 * rng.standard_normal((k, d + d * (d - 1) // 2))
    x = rng.uniform(0.0, 1.0, size=(n, d))
    return [alphas, means, icf, x, np.float64(1.0), np.int64(0)]


def lstm(rng, l, c, b):
    main = rng.uniform(-1.0, 1.0, size=(l, 2, 4, b))
    extra = rng.uniform(-1.0, 1.0, size=(3, b))
    state = rng.uniform(-1.0, 1.0, size=(l, 2, b))
    seq = rng.uniform(0.0, 1.0, size=(c, b))
    return [main, extra, state, seq]


def generate(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    m = re.fullmatch(r"kmeans_n(\d+)_d(\d+)_k(\d+)", name)
    if m:
        return kmeans(rng, *map(int, m.groups()))
    m = re.fullmatch(r"gmm_n(\d+)_d(\d+)_K(\d+)", name)
    if m:
        return gmm(rng, *map(int, m.groups()))
    m = re.fullmatch(r"lstm_l(\d+)_c(\d+)(?:_b(\d+))?", name)
    if m:
        l, c, b = m.groups()
        return lstm(rng, int(l), int(c), int(b or 14))
    raise SystemExit(f"gen_data.py: unknown data set name {name!r}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", help="output directory (default: data/, or small/ for `small`)")
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()
    jobs = []
    for name in args.names:
        if name == "small":
            jobs += [(alias, real, args.out or os.path.join(here, "small")) for alias, real in SMALL.items()]
        elif name == "paper":
            jobs += [(n, n, args.out or os.path.join(here, "data")) for n in PAPER]
        else:
            jobs.append((name, name, args.out or os.path.join(here, "data")))
    for file_name, real, out in jobs:
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, file_name + ".in")
        values = generate(real)
        with open(path + ".tmp", "wb") as f:
            for v in values:
                write_value(f, v)
        os.replace(path + ".tmp", path)
        print(f"{path}: {real}, {os.path.getsize(path)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
