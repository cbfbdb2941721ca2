"""Sparse k-means data sets: `skmeans_n{N}_d{D}_z{NNZ}_k{K}`: N points of D coordinates with about
NNZ nonzeros in all (positions drawn uniformly, repeated positions dropped, so a few fewer), in CSR
form, and K initial centres.

Values, in the order of skmeans.fut's entries:
  values [nnz]f32     the nonzeros, uniform in (0, 1] (as tf-idf weights or normalised counts);
  cols [nnz]i64       their columns, increasing within a row;
  offsets [N+1]i64    row i's nonzeros are values[offsets[i] ..< offsets[i+1]];
  centres [K][D]f32   the first K points, dense (as kmeans.fut's data sets).
"""
import numpy as np

PATTERN = r"skmeans_n(\d+)_d(\d+)_z(\d+)_k(\d+)"
ENTRIES = ("cost", "newton")
WHAT = ("sparse (CSR) points, dense centres, f32; gradient and Hessian diagonal by jvp of vjp, one "
        "Newton step")
PAPER_OVERHEAD = ("AD 152 / 300 / 579 ms on the A100 against hand-written Futhark's 61 / 83 / 156 ms "
                  "and PyTorch's 61-368 s (Table 4, k = 10; no primal time is given)")
TOL = 1e-3
SMALL = "skmeans_n12_d9_z30_k3"
DEFAULT = ["skmeans_n5000_d5000_z100000_k10", "skmeans_n20000_d5000_z400000_k10"]
DEFAULT_NOTE = ("Sparse k-means: random CSR data, d = 5000, n = 5000 and 20000 with 20 nonzeros per row, k = 10 (the "
                "paper's workloads are MovieLens, NYTimes and scRNA with k = 10).")
# The paper's NLP workloads are not redistributed; random data in the shapes of the public
# NYTimes bag-of-words set (UCI: 300000 documents, 102660 words, 69679427 nonzeros) and of
# MovieLens 20M (138493 users, 27278 movies, 20000263 ratings), k = 10.
PAPER = ["skmeans_n300000_d102660_z69679427_k10", "skmeans_n138493_d27278_z20000263_k10"]


def generate(rng, m):
    n, d, z, k = map(int, m.groups())
    keys = np.unique(rng.integers(0, n * d, size=z, dtype=np.int64))
    rows, cols = keys // d, keys % d
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=offsets[1:])
    values = (1.0 - rng.uniform(0.0, 1.0, size=len(keys))).astype(np.float32)
    centres = np.zeros((k, d), dtype=np.float32)
    for j in range(min(k, n)):
        centres[j, cols[offsets[j]:offsets[j + 1]]] = values[offsets[j]:offsets[j + 1]]
    return [values, cols.astype(np.int64), offsets, centres]
