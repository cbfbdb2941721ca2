"""Dense k-means data sets: `kmeans_n{N}_d{D}_k{K}`: N points in D dimensions around K true
clusters (uniform centres in [0, 10)^D, unit normal noise); the initial centres are the first K
points. Values: points [N][D]f64, centres [K][D]f64."""
PATTERN = r"kmeans_n(\d+)_d(\d+)_k(\d+)"
ENTRIES = ("cost", "newton")
WHAT = "cost Σ_p min_c ‖p - c‖²; gradient and Hessian diagonal by jvp of vjp, one Newton step"
PAPER_OVERHEAD = "AD 36.6 ms / 9.6 ms on the A100 against hand-written Futhark's 9.3 / 9.9 ms (Table 3; no primal time is given)"
TOL = 1e-6
SMALL = "kmeans_n100_d4_k3"
DEFAULT = ["kmeans_n5000_d35_k5", "kmeans_n20000_d35_k5"]
# The paper's data sets (kdd-cup 1999: n = 494019, d = 35, k = 5; and a wide one).
DEFAULT_NOTE = ("k-means: the paper's set is (n, d, k) = (494019, 35, 5); here n = 5000 and 20000 (at n = 494019 the "
                "Newton step takes minutes on the interpreter on a 2-core machine).")
PAPER = ["kmeans_n494019_d35_k5", "kmeans_n10000_d256_k1024"]


def generate(rng, m):
    n, d, k = map(int, m.groups())
    true_centres = rng.uniform(0.0, 10.0, size=(k, d))
    labels = rng.integers(0, k, size=n)
    points = true_centres[labels] + rng.standard_normal((n, d))
    return [points, points[:k].copy()]
