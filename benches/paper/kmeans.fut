-- Dense k-means as in paper 000 (Schenck et al., SC22, §7.4): the cost of centres C for points P,
--
--   f(C) = Σ_{p ∈ P} min_{c ∈ C} ‖p - c‖²
--
-- (squared Euclidean distance), and one Newton step C' = C - ∇f / diag(∇²f). The Hessian of f is
-- diagonal (each coordinate of a centre only meets itself), so `jvp` of `vjp` with a tangent of
-- ones gives the gradient and the Hessian's diagonal in one pass, without repeating the search
-- for the nearest centre. Coordinates whose Hessian entry is 0 (a centre nearest to no point)
-- are left where they are.
--
-- The expected outputs of the test block are JAX's (benches/peers, `gen_expected.py`); the data
-- files come from benches/paper/gen_data.py (seeded). Entries: `cost` (primal), `newton`
-- (gradient: jvp of vjp).

def dist2 [d] (p: [d]f64) (c: [d]f64) : f64 =
  f64.sum (map2 (\a b -> (a - b) * (a - b)) p c)

def kcost [n][k][d] (points: [n][d]f64) (centres: [k][d]f64) : f64 =
  f64.sum (map (\p -> f64.minimum (map (dist2 p) centres)) points)

-- ==
-- entry: cost
-- input @ small/kmeans_small.in output @ small/kmeans_small.cost.out
entry cost [n][k][d] (points: [n][d]f64) (centres: [k][d]f64) : f64 =
  kcost points centres

-- Returns the gradient, the Hessian's diagonal and the centres after one Newton step.
-- ==
-- entry: newton
-- input @ small/kmeans_small.in output @ small/kmeans_small.newton.out
entry newton [n][k][d] (points: [n][d]f64) (centres: [k][d]f64) : ([k][d]f64, [k][d]f64, [k][d]f64) =
  let (g, h) = jvp2 (\c -> vjp (kcost points) c 1) centres (replicate k (replicate d 1))
  let step = map2 (map2 (\gi hi -> if hi == 0 then 0 else gi / hi)) g h
  in (g, h, map2 (map2 (-)) centres step)
