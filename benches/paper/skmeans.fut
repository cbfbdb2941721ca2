-- Sparse k-means as in paper 000 (§7.5, Table 4): dense centres C [k][d], points in compressed
-- sparse row (CSR) form: row i holds the nonzeros values[e] at columns cols[e] for
-- e in offsets[i] ..< offsets[i+1]. The cost is dense k-means' (kmeans.fut),
--
--   f(C) = Σ_i min_j ‖p_i - c_j‖²,   ‖p_i - c_j‖² = ‖p_i‖² - 2 p_i·c_j + ‖c_j‖²,
--
-- expanded so that only the nonzeros of p_i are visited (p_i·c_j = Σ_e values[e] · c_j[cols[e]]).
-- `newton` is one Newton step as in kmeans.fut: the gradient and the Hessian's diagonal by `jvp` of
-- `vjp` with a tangent of ones (f's Hessian is diagonal: 2·|{i : j nearest to p_i}| on every
-- coordinate of c_j), without repeating the search for the nearest centres; coordinates whose
-- Hessian entry is 0 stay where they are. 32-bit floats, as the paper's sparse k-means.
--
-- The centres are indexed as `centres[j, col]` inside a map over `iota k`, so that reverse mode
-- updates only the visited coordinates (an accumulator on `centres`) instead of building a dense
-- adjoint row per point and centre. Data: benches/paper/gen_skmeans.py; peers:
-- benches/peers/skmeans_{jax,torch}.py (expected outputs of the small set: JAX's).

def sq_dists [nnz][np1][k][d] (values: [nnz]f32) (cols: [nnz]i64) (offsets: [np1]i64)
                              (centres: [k][d]f32) : [][k]f32 =
  let n = np1 - 1
  let cnorm = map (\c -> f32.sum (map (\x -> x * x) c)) centres
  in map (\i ->
            let start = offsets[i]
            let len = offsets[i + 1] - start
            let pnorm = loop s = 0f32 for e < len do
                          let v = values[start + e] in s + v * v
            in map (\j ->
                      let dot = loop s = 0f32 for e < len do
                                  s + values[start + e] * centres[j, cols[start + e]]
                      in pnorm - 2 * dot + cnorm[j])
                   (iota k))
         (iota n)

def skcost [nnz][np1][k][d] (values: [nnz]f32) (cols: [nnz]i64) (offsets: [np1]i64)
                            (centres: [k][d]f32) : f32 =
  f32.sum (map f32.minimum (sq_dists values cols offsets centres))

-- ==
-- entry: cost
-- input @ small/skmeans_small.in output @ small/skmeans_small.cost.out
entry cost [nnz][np1][k][d] (values: [nnz]f32) (cols: [nnz]i64) (offsets: [np1]i64)
                            (centres: [k][d]f32) : f32 =
  skcost values cols offsets centres

-- Returns the gradient, the Hessian's diagonal and the centres after one Newton step.
-- ==
-- entry: newton
-- input @ small/skmeans_small.in output @ small/skmeans_small.newton.out
entry newton [nnz][np1][k][d] (values: [nnz]f32) (cols: [nnz]i64) (offsets: [np1]i64)
                              (centres: [k][d]f32) : ([k][d]f32, [k][d]f32, [k][d]f32) =
  let (g, h) = jvp2 (\c -> vjp (skcost values cols offsets) c 1) centres
                    (replicate k (replicate d 1))
  let step = map2 (map2 (\gi hi -> if hi == 0 then 0 else gi / hi)) g h
  in (g, h, map2 (map2 (-)) centres step)
