"""ADBench GMM data sets: `gmm_n{N}_d{D}_K{K}`: alphas [K] ~ N(0, 1), means [K][D] ~ U(0, 1),
icf [K][D + D(D-1)/2] ~ N(0, 0.1²) (log-diagonal then the strictly lower triangle, column by
column), points [N][D] ~ U(0, 1), and the Wishart prior's gamma = 1.0 (f64) and m = 0 (i64),
ADBench's values."""
import numpy as np

PATTERN = r"gmm_n(\d+)_d(\d+)_K(\d+)"
ENTRIES = ("objective", "grad")
WHAT = "ADBench GMM objective with the Wishart prior; vjp w.r.t. alphas, means, icf"
PAPER_OVERHEAD = "2.0-3.5× (Table 5b/c)"
TOL = 1e-6
SMALL = "gmm_n20_d3_K4"
DEFAULT = ["gmm_n1000_d2_K5", "gmm_n1000_d10_K25", "gmm_n10000_d10_K25"]
# Paper 000, Table 5a: D0-D5.
DEFAULT_NOTE = ("GMM: n = 1000 with (d, K) = (2, 5) and (10, 25), the smallest of the ADBench grid, and "
                "n = 10000 with (10, 25) (the smallest of the paper, D0, is d = 64, K = 200).")
PAPER = [f"gmm_n{n}_d{d}_K{k}" for (n, d, k) in
         [(1000, 64, 200), (1000, 128, 200), (10000, 32, 200), (10000, 64, 25), (10000, 128, 25),
          (10000, 128, 200)]]


def generate(rng, m):
    n, d, k = map(int, m.groups())
    alphas = rng.standard_normal(k)
    means = rng.uniform(0.0, 1.0, size=(k, d))
    icf = 0.1 * rng.standard_normal((k, d + d * (d - 1) // 2))
    x = rng.uniform(0.0, 1.0, size=(n, d))
    return [alphas, means, icf, x, np.float64(1.0), np.int64(0)]
