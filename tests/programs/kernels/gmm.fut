-- A Gaussian mixture model's negative log-likelihood (ADBench GMM with diagonal covariances:
-- Q_k = diag(exp(icf_k))) and its gradient. The kernel-extraction test
-- (tests/tests/kernels.rs) checks that the gradient's kernel count does not grow with K or n.

def logsumexp [n] (xs: [n]f64) : f64 =
  let m = f64.maximum xs
  in m + f64.log (f64.sum (map (\x -> f64.exp (x - m)) xs))

def objective [k][d][n] (nf: f64) (x: [n][d]f64) (alphas: [k]f64) (means: [k][d]f64) (icf: [k][d]f64) : f64 =
  let qdiags = map (map f64.exp) icf
  let sum_qs = map f64.sum icf
  let per_point =
    map (\xi ->
           logsumexp (map4 (\a sq q m ->
                              a + sq - 0.5 * f64.sum (map3 (\qj xj mj -> let t = qj * (xj - mj) in t * t) q xi m))
                           alphas sum_qs qdiags means))
        x
  in f64.sum per_point - nf * logsumexp alphas
     + 0.5 * f64.sum (map (\q -> f64.sum (map (\v -> v * v) q)) qdiags)

-- One point at the mean of one component (K = 1, d = 1, icf = 0, alpha = 0): every term is
-- 0 except the last, 0.5·exp(0)² = 0.5. Gradient: ∂/∂alpha = 1 - 1 = 0; ∂/∂mean = 0 (the point
-- is at the mean); ∂/∂icf = 1 (from sum_qs) + 0 (quadratic term) + exp(0)² = 2.
-- ==
-- entry: loss
-- input { 1.0 [[2.0]] [0.0] [[2.0]] [[0.0]] }
-- output { 0.5 }
-- input { 2.0 [[0.0, 1.0], [1.0, -1.0]] [0.5, -0.5] [[0.0, 0.0], [1.0, 1.0]] [[0.1, -0.2], [0.0, 0.3]] }
-- output { 0.6677870424885544 }
entry loss [k][d][n] (nf: f64) (x: [n][d]f64) (alphas: [k]f64) (means: [k][d]f64) (icf: [k][d]f64) : f64 =
  objective nf x alphas means icf

-- ==
-- entry: grad
-- input { 1.0 [[2.0]] [0.0] [[2.0]] [[0.0]] }
-- output { [0.0] [[0.0]] [[2.0]] }
entry grad [k][d][n] (nf: f64) (x: [n][d]f64) (alphas: [k]f64) (means: [k][d]f64) (icf: [k][d]f64) : ([k]f64, [k][d]f64, [k][d]f64) =
  vjp (\(a, m, q) -> objective nf x a m q) (alphas, means, icf) 1
