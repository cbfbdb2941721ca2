#!/usr/bin/env python3
"""Small seeded inputs for futhark-benchmarks programs, and a comparison of two runs' outputs.
Standard library only.

    gen_inputs.py gen NAME > FILE     write the input of data set NAME (Futhark text values,
                                      what `vkad run` reads on standard input)
    gen_inputs.py compare A B         compare two `vkad run` outputs: integers and booleans
                                      exactly, floats with relative tolerance 1e-6 (absolute
                                      1e-9 near zero), NaN equal to NaN; exit status 1 and the
                                      first difference on standard output when they differ

Data sets (the shapes are those of the benchmarks' own data, read from the programs' entry
points and the generators in the checkout (data2fut.c, Makefiles), at small sizes):

  gmm       adbench/gmm.fut: alphas [K]f64, means [K][D]f64, icf [K][D + D(D-1)/2]f64,
            x [N][D]f64, wishart gamma f64 and m i64 (ADBench's GMM: N=20, D=3, K=4).
  lstm      adbench/lstm.fut: main parameters [2L][4B]f64, extra parameters [3][B]f64, state
            [2L][B]f64, sequence [C][B]f64 (L=2 layers, C=6, B=4).
  rsbench   rsbench/rsbench.fut: lookups i64, doppler i32, n_windows [I]i32, poles_ls [I][P]i16,
            poles_cs [I][P][4][2]f64, windows_f64s [I][W][3]f64, windows_i32s [I][W][2]i32,
            pseudo_K0RS [I][4]f64, num_nucs [12]i32, mats [12][M]i32, concs [12][M]f64
            (12 materials as the program's pick_mat; l_value < 4 = numL; each window's poles
            are a range start..<end of the nuclide's poles).
  xsbench   xsbench/xsbench.fut: n_isotopes i64, n_gridpoints i64, grid_type i64 (0, the
            unionized grid), hash_bins i64, lookups i64, num_nucs [12]i32, concs [12][M]f64,
            mats [12][M]i32, nuclide_grid [I][G][6]f64 (energies sorted per isotope),
            index_grid [I*G][I]i32, unionized_energy_array [I*G]f64 (sorted; index_grid[u][i]
            is the last point of isotope i at or below energy u, as XSBench builds it).
  kmeans_accelerate   accelerate/kmeans/kmeans.fut: k i32, points [N][2]f32 (N=60, k=3).
  kmeans_rodinia      rodinia/kmeans/kmeans.fut: threshold i32, k i32, max_iterations i32,
                      points [N][D]f32 (N=60, D=4, k=3).
"""
import math
import random
import re
import struct
import sys
import zlib


def f64(x):
    return repr(float(x)) + "f64"


def f32(x):
    # The nearest f32, printed so that it reads back exactly.
    v = struct.unpack("<f", struct.pack("<f", x))[0]
    return repr(v) + "f32"


def arr(xs, fmt):
    """A (nested) list as a Futhark array literal, scalars formatted by `fmt`."""
    if isinstance(xs, list):
        return "[" + ", ".join(arr(x, fmt) for x in xs) + "]"
    return fmt(xs)


def i32(x):
    return f"{int(x)}i32"


def i64(x):
    return f"{int(x)}i64"


def i16(x):
    return f"{int(x)}i16"


def gmm(r):
    n, d, k = 20, 3, 4
    alphas = [r.gauss(0, 1) for _ in range(k)]
    means = [[r.random() for _ in range(d)] for _ in range(k)]
    icf = [[r.gauss(0, 0.1) for _ in range(d + d * (d - 1) // 2)] for _ in range(k)]
    x = [[r.random() for _ in range(d)] for _ in range(n)]
    return [arr(alphas, f64), arr(means, f64), arr(icf, f64), arr(x, f64), f64(1.0), i64(0)]


def lstm(r):
    layers, c, b = 2, 6, 4
    u = lambda: r.uniform(-1, 1)
    main = [[u() for _ in range(4 * b)] for _ in range(2 * layers)]
    extra = [[u() for _ in range(b)] for _ in range(3)]
    state = [[u() for _ in range(b)] for _ in range(2 * layers)]
    seq = [[r.random() for _ in range(b)] for _ in range(c)]
    return [arr(main, f64), arr(extra, f64), arr(state, f64), arr(seq, f64)]


MATERIALS = 12  # pick_mat in both rsbench and xsbench draws one of 12 materials


def materials(r, n_nuclides, max_nucs):
    num_nucs = [r.randint(1, max_nucs) for _ in range(MATERIALS)]
    mats = [[r.randrange(n_nuclides) for _ in range(max_nucs)] for _ in range(MATERIALS)]
    concs = [[r.random() for _ in range(max_nucs)] for _ in range(MATERIALS)]
    return num_nucs, mats, concs


def rsbench(r):
    lookups, doppler, nucs, poles, windows, max_nucs = 30, 1, 5, 6, 3, 4
    n_windows = [r.randint(1, windows) for _ in range(nucs)]
    poles_ls = [[r.randrange(4) for _ in range(poles)] for _ in range(nucs)]
    poles_cs = [[[[r.uniform(-1, 1) for _ in range(2)] for _ in range(4)] for _ in range(poles)]
                for _ in range(nucs)]
    windows_f64s = [[[r.random() for _ in range(3)] for _ in range(windows)] for _ in range(nucs)]
    windows_i32s = []
    for _ in range(nucs):
        ws = []
        for _ in range(windows):
            a, b = sorted(r.randrange(poles + 1) for _ in range(2))
            ws.append([a, b])
        windows_i32s.append(ws)
    pseudo = [[r.random() for _ in range(4)] for _ in range(nucs)]
    num_nucs, mats, concs = materials(r, nucs, max_nucs)
    return [i64(lookups), i32(doppler), arr(n_windows, i32), arr(poles_ls, i16),
            arr(poles_cs, f64), arr(windows_f64s, f64), arr(windows_i32s, i32),
            arr(pseudo, f64), arr(num_nucs, i32), arr(mats, i32), arr(concs, f64)]


def xsbench(r):
    isotopes, gridpoints, lookups, max_nucs = 5, 8, 30, 4
    grid = []
    for _ in range(isotopes):
        energies = sorted(r.random() for _ in range(gridpoints))
        grid.append([[e] + [r.random() for _ in range(5)] for e in energies])
    union = sorted(p[0] for g in grid for p in g)
    index_grid = []
    for e in union:
        row = []
        for g in grid:
            at_or_below = sum(1 for p in g if p[0] <= e)
            row.append(min(max(at_or_below - 1, 0), gridpoints - 1))
        index_grid.append(row)
    num_nucs, mats, concs = materials(r, isotopes, max_nucs)
    return [i64(isotopes), i64(gridpoints), i64(0), i64(10), i64(lookups), arr(num_nucs, i32),
            arr(concs, f64), arr(mats, i32), arr(grid, f64), arr(index_grid, i32), arr(union, f64)]


def clusters(r, n, d, k):
    centres = [[r.uniform(0, 10) for _ in range(d)] for _ in range(k)]
    return [[c + r.gauss(0, 1) for c in centres[r.randrange(k)]] for _ in range(n)]


def kmeans_accelerate(r):
    return [i32(3), arr(clusters(r, 60, 2, 3), f32)]


def kmeans_rodinia(r):
    return [i32(1), i32(3), i32(50), arr(clusters(r, 60, 4, 3), f32)]


SETS = {f.__name__: f for f in (gmm, lstm, rsbench, xsbench, kmeans_accelerate, kmeans_rodinia)}

NUMBER = re.compile(
    r"-?(?:f16|f32|f64)\.(?:inf|nan)"
    r"|-?(?:0x[0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9]+)?)"
    r"(?:i8|i16|i32|i64|u8|u16|u32|u64|f16|f32|f64)?"
    r"|true|false")


def tokens(text):
    """The scalar values of a run's output in order, as (is_float, value)."""
    out = []
    for t in NUMBER.findall(text):
        if t in ("true", "false"):
            out.append((False, t))
        elif ".nan" in t:
            out.append((True, math.nan))
        elif ".inf" in t:
            out.append((True, -math.inf if t.startswith("-") else math.inf))
        else:
            body = re.sub(r"(i8|i16|i32|i64|u8|u16|u32|u64|f16|f32|f64)$", "", t)
            is_float = t.endswith(("f16", "f32", "f64")) or "." in body or "e" in body.lower()
            if body.lower().startswith(("0x", "-0x")):
                out.append((is_float, int(body.replace("_", ""), 16)))
            elif is_float:
                out.append((True, float(body.replace("_", ""))))
            else:
                out.append((False, int(body.replace("_", ""))))
    return out


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(1e-9, 1e-6 * max(abs(a), abs(b)))


def compare(path_a, path_b):
    with open(path_a) as fa, open(path_b) as fb:
        a, b = tokens(fa.read()), tokens(fb.read())
    if len(a) != len(b):
        print(f"{len(a)} vs {len(b)} values")
        return 1
    for i, ((fa_, va), (fb_, vb)) in enumerate(zip(a, b)):
        same = close(float(va), float(vb)) if (fa_ or fb_) else va == vb
        if not same:
            print(f"value {i}: {va} vs {vb}")
            return 1
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "gen" and argv[2] in SETS:
        r = random.Random(zlib.crc32(argv[2].encode()))
        print("\n".join(SETS[argv[2]](r)))
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
