#!/usr/bin/env python3
"""Seeded data sets for the paper benchmarks (benches/paper/*.fut), in Futhark's binary value
format (what `vkad run` reads on standard input and `input @ FILE` names in a test block).

    python3 gen_data.py [-o DIR] NAME...

A NAME is a data set name of one of the benchmarks (see benchmarks.py; each `gen_B.py` documents
its names and values: `kmeans_n{N}_d{D}_k{K}`, `skmeans_n{N}_d{D}_k{K}_z{NNZ}`,
`gmm_n{N}_d{D}_K{K}`, `lstm_l{L}_c{C}`, `rnn_bs{BS}_n{N}_d{D}_h{H}`, `rsbench_...`,
`xsbench_...`); the seed is the CRC-32 of the name, so a name always gives the same file.
Aliases: `small` (every benchmark's CI data set, written to small/B_small.in by default),
`default` (the sets benches/paper/run.sh times on a 2-core machine) and `paper` (the paper's
shapes: see benches/README.md). Each data set is written to DIR/NAME.in (default: data/ beside
this script). numpy only.
"""

import argparse
import os
import struct
import sys
import zlib

import numpy as np

import benchmarks

TYPES = {np.dtype("float64"): b" f64", np.dtype("int64"): b" i64", np.dtype("float32"): b" f32",
         np.dtype("int32"): b" i32", np.dtype("bool"): b"bool"}


def write_value(f, v):
    """One value in Futhark's binary format: 'b', version 2, rank, 4-byte type, dims, data (LE)."""
    a = np.asarray(v)
    f.write(b"b" + bytes([2, a.ndim]) + TYPES[a.dtype])
    f.write(struct.pack("<%dq" % a.ndim, *a.shape))
    f.write(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes())


def generate(name):
    """The values of a concrete data set name."""
    mod, m = benchmarks.match(name)
    return mod.generate(np.random.default_rng(zlib.crc32(name.encode())), m)


def write(path, values):
    with open(path + ".tmp", "wb") as f:
        for v in values:
            write_value(f, v)
    os.replace(path + ".tmp", path)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", help="output directory (default: data/, or small/ for `small`)")
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()
    jobs = []
    data = args.out or os.path.join(here, "data")
    for name in args.names:
        if name == "small":
            jobs += [(f"{b}_small", benchmarks.module(b).SMALL, args.out or os.path.join(here, "small"))
                     for b in benchmarks.present()]
        elif name in ("paper", "default"):
            key = name.upper()
            jobs += [(n, n, data) for b in benchmarks.present() for n in getattr(benchmarks.module(b), key)]
        else:
            jobs.append((name, name, data))
    for file_name, real, out in jobs:
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, file_name + ".in")
        write(path, generate(real))
        print(f"{path}: {real}, {os.path.getsize(path)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
