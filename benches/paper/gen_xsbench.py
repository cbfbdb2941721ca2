"""XSBench data sets: `xsbench_i{I}_g{G}_l{L}`: I nuclides with G grid points each, L lookups.

Values, in the order of xsbench.fut's entries:
  egrid [I][G]f64       each nuclide's energies, uniform in [0, 1), sorted (XSBench's generator);
  xs [I][G][5]f64       the five microscopic cross sections per point, uniform in [0, 1);
  num_nucs [12]i64      nuclides per material: XSBench's 12 materials for its "small" problem
                        (68 nuclides: 34, 5, 4, 4, 27, 21, 21, 21, 21, 21, 9, 9), scaled to I;
  mats [12][K]i64       the nuclides of each material (material 0, the fuel, holds nuclides
                        0..num_nucs[0]-1; the others a random choice without repeats), rows
                        padded with 0 to K = max num_nucs;
  concs [12][K]f64      concentrations, uniform in [0, 1) (padding 0);
  energies [L]f64       lookup energies, uniform in [0, 1);
  materials [L]i64      lookup materials, drawn with XSBench's material distribution.
"""
import numpy as np

PATTERN = r"xsbench_i(\d+)_g(\d+)_l(\d+)"
ENTRIES = ("lookup", "grad")
WHAT = ("event-based macroscopic cross-section lookups (nuclide-grid binary search, linear "
        "interpolation); vjp w.r.t. the cross-section data")
PAPER_OVERHEAD = "2.6× (Table 2, RTX 2080 Ti; Enzyme 3.2×)"
TOL = 1e-6
SMALL = "xsbench_i6_g20_l30"
DEFAULT = ["xsbench_i68_g11303_l5000", "xsbench_i68_g11303_l20000"]
DEFAULT_NOTE = ("XSBench: the paper's \"small\" problem (68 nuclides, 11303 grid points) with 5000 and 20000 "
                "lookups.")
# XSBench's "small" problem (the paper's), with a million lookups.
PAPER = ["xsbench_i68_g11303_l1000000"]

SMALL_NUCS = [34, 5, 4, 4, 27, 21, 21, 21, 21, 21, 9, 9]
MAT_DIST = [0.140, 0.052, 0.275, 0.134, 0.154, 0.064, 0.066, 0.055, 0.008, 0.015, 0.025, 0.013]


def generate(rng, m):
    i, g, l = map(int, m.groups())
    egrid = np.sort(rng.uniform(0.0, 1.0, size=(i, g)), axis=1)
    xs = rng.uniform(0.0, 1.0, size=(i, g, 5))
    num_nucs = np.array([max(1, min(i, round(c * i / 68))) for c in SMALL_NUCS], dtype=np.int64)
    k = int(num_nucs.max())
    mats = np.zeros((12, k), dtype=np.int64)
    concs = np.zeros((12, k))
    for mat, n in enumerate(num_nucs):
        mats[mat, :n] = np.arange(n) if mat == 0 else rng.choice(i, size=n, replace=False)
        concs[mat, :n] = rng.uniform(0.0, 1.0, size=n)
    energies = rng.uniform(0.0, 1.0, size=l)
    dist = np.array(MAT_DIST) / sum(MAT_DIST)
    materials = rng.choice(12, size=l, p=dist).astype(np.int64)
    return [egrid, xs, num_nucs, mats, concs, energies, materials]
