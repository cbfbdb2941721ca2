-- k-means' Newton step as in paper 000 (§7): the gradient and the diagonal of the Hessian of
-- the nearest-centre cost, by `jvp` of `vjp`. The kernel-extraction test
-- (tests/tests/kernels.rs) checks that its kernel count does not grow with n or k.

def dist [d] (p: [d]f64) (c: [d]f64) : f64 =
  f64.sum (map2 (\a b -> (a - b) * (a - b)) p c)

def cost [n][k][d] (points: [n][d]f64) (centres: [k][d]f64) : f64 =
  f64.sum (map (\p -> f64.minimum (map (dist p) centres)) points)

-- Two centres, two points: point 0 is nearest to centre 0, point 1 to centre 1.
-- cost = Σ |p - c_nearest|²: ∂/∂c = 2(c - p) for the nearest centre; the Hessian's diagonal is 2
-- for each coordinate of a centre that is nearest to one point.
-- ==
-- entry: newton
-- input { [[0.0, 0.0], [4.0, 4.0]] [[1.0, 0.0], [3.0, 5.0]] }
-- output { [[2.0, 0.0], [-2.0, 2.0]] [[2.0, 2.0], [2.0, 2.0]] [[0.0, 0.0], [4.0, 4.0]] }
-- input { [[0.0], [1.0], [10.0]] [[0.0], [9.0]] }
-- output { [[-2.0], [-2.0]] [[4.0], [2.0]] [[0.5], [10.0]] }
entry newton [n][k][d] (points: [n][d]f64) (centres: [k][d]f64) : ([k][d]f64, [k][d]f64, [k][d]f64) =
  let (g, h) = jvp2 (\c -> vjp (cost points) c 1) centres (replicate k (replicate d 1))
  in (g, h, map2 (map2 (\c gh -> c - gh)) centres (map2 (map2 (\a b -> if b == 0 then 0 else a / b)) g h))
