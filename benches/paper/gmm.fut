-- The ADBench GMM objective (Srajer, Kukelova and Fitzgibbon, "A benchmark of selected
-- algorithmic differentiation tools on some problems in computer vision and machine learning",
-- 2018), used in paper 000 (§7.6): the log-likelihood of n points x_i ∈ R^d under a mixture of
-- K Gaussians with a Wishart prior on the precision matrices,
--
--   f = -(n d / 2) log 2π
--       + Σ_i logsumexp_k (α_k + Σ_j q_kj - ½ ‖Q_k (x_i - μ_k)‖²)
--       - n logsumexp_k α_k
--       + Σ_k (½ γ² (‖exp q_k‖² + ‖l_k‖²) - m Σ_j q_kj) - K C(γ, m, d)
--
-- where icf_k = (q_k, l_k) has d + d(d-1)/2 entries: Q_k, the inverse of the Cholesky factor of
-- component k's covariance, is lower-triangular with diagonal exp(q_k) and its strictly lower
-- part l_k packed column by column (Q[i][j] for j < i is l_k[j(2d-j-1)/2 + i-j-1]), and
--   C(γ, m, d) = N d (log γ - ½ log 2) - log Γ_d(N/2),  N = d + m + 1,
--   log Γ_d(a) = ¼ d(d-1) log π + Σ_{j=1..d} lgamma(a + (1-j)/2).
--
-- Entries: `objective` (primal) and `grad` (the gradient with respect to alphas, means and icf,
-- by `vjp`). The expected outputs of the test blocks are JAX's (benches/peers).

def logsumexp [n] (xs: [n]f64) : f64 =
  let m = f64.maximum xs
  in m + f64.log (f64.sum (map (\x -> f64.exp (x - m)) xs))

def sqnorm [n] (xs: [n]f64) : f64 = f64.sum (map (\x -> x * x) xs)

-- Q_k from icf_k (see above), as a dense d×d matrix.
def qmat [t] (d: i64) (icf: [t]f64) : [d][d]f64 =
  tabulate_2d d d (\i j ->
                     if i == j then f64.exp icf[i]
                     else if j < i then icf[d + j * (2 * d - j - 1) / 2 + i - j - 1]
                     else 0)

def log_gamma_distrib (a: f64) (p: i64) : f64 =
  0.25 * f64.i64 (p * (p - 1)) * f64.log f64.pi
  + f64.sum (map (\j -> f64.lgamma (a + 0.5 * (1 - f64.i64 (j + 1)))) (iota p))

def gmm_objective [n][d][k][t] (alphas: [k]f64) (means: [k][d]f64) (icf: [k][t]f64)
                               (x: [n][d]f64) (gamma: f64) (m: i64) : f64 =
  let qs = map (qmat d) icf
  let sum_qs = map (\row -> f64.sum row[0:d]) icf
  let main_terms xi =
    map4 (\a sq q mu ->
            let xc = map2 (-) xi mu
            let qxc = map (\qrow -> f64.sum (map2 (*) qrow xc)) q
            in a + sq - 0.5 * sqnorm qxc)
         alphas sum_qs qs means
  let slse = f64.sum (map (\xi -> logsumexp (main_terms xi)) x)
  let constant = 0 - f64.i64 (n * d) * 0.5 * f64.log (2 * f64.pi)
  let nn = f64.i64 (d + m + 1)
  let c = nn * f64.i64 d * (f64.log gamma - 0.5 * f64.log 2) - log_gamma_distrib (0.5 * nn) d
  let prior =
    f64.sum (map2 (\row sq ->
                     let frob = sqnorm (map f64.exp row[0:d]) + sqnorm row[d:t]
                     in 0.5 * gamma * gamma * frob - f64.i64 m * sq)
                  icf sum_qs)
    - f64.i64 k * c
  in constant + slse - f64.i64 n * logsumexp alphas + prior

-- ==
-- entry: objective
-- input @ small/gmm_small.in output @ small/gmm_small.objective.out
entry objective [n][d][k][t] (alphas: [k]f64) (means: [k][d]f64) (icf: [k][t]f64)
                             (x: [n][d]f64) (gamma: f64) (m: i64) : f64 =
  gmm_objective alphas means icf x gamma m

-- ==
-- entry: grad
-- input @ small/gmm_small.in output @ small/gmm_small.grad.out
entry grad [n][d][k][t] (alphas: [k]f64) (means: [k][d]f64) (icf: [k][t]f64)
                        (x: [n][d]f64) (gamma: f64) (m: i64) : ([k]f64, [k][d]f64, [k][t]f64) =
  vjp (\(a, mu, q) -> gmm_objective a mu q x gamma m) (alphas, means, icf) 1
