-- Reverse-mode AD of reduce: `vjp f x ȳ` is the adjoint of `x` for the result adjoint `ȳ`.
-- Expected values are the worked cases of ad-rules.md §7 and hand-derived ones.

-- Sum: every element gets ȳ.
-- ==
-- entry: sum
-- input { [1.0, 2.0, 3.0] 2.0 } output { [2.0, 2.0, 2.0] }
-- input { empty([0]f64) 2.0 } output { empty([0]f64) }
entry sum (xs: []f64) (yb: f64) = vjp (reduce (+) 0) xs yb

-- Product, with zeros: no division on the paths where an element is zero.
-- ==
-- entry: product
-- input { [2.0, 3.0, 4.0] 1.0 } output { [12.0, 8.0, 6.0] }
-- input { [2.0, 0.0, 4.0] 1.0 } output { [0.0, 8.0, 0.0] }
-- input { [0.0, 3.0, 0.0] 1.0 } output { [0.0, 0.0, 0.0] }
-- input { [5.0] 1.0 } output { [1.0] }
-- input { [0.5, -2.0, 3.0, 1.5] -2.0 } output { [18.0, -4.5, 3.0, 6.0] }
-- input { empty([0]f64) 1.0 } output { empty([0]f64) }
entry product (xs: []f64) (yb: f64) = vjp (reduce (*) 1) xs yb

-- Minimum and maximum: the lowest index wins ties; the neutral element loses them.
-- ==
-- entry: minimum
-- input { [3.0, 1.0, 2.0, 1.0] 1.0 } output { [0.0, 1.0, 0.0, 0.0] }
-- input { [2.0, 2.0, 2.0] 1.0 } output { [1.0, 0.0, 0.0] }
-- input { empty([0]f64) 1.0 } output { empty([0]f64) }
entry minimum (xs: []f64) (yb: f64) = vjp (reduce f64.min f64.inf) xs yb

-- ==
-- entry: maximum
-- input { [1.0, 7.0, 2.0, 7.0] 3.0 } output { [0.0, 3.0, 0.0, 0.0] }
-- input { [-1.0, -2.0] 1.0 } output { [0.0, 0.0] }
entry maximum (xs: []f64) (yb: f64) = vjp (reduce f64.max 0) xs yb

-- A generic operator: x ⊙ y = x + y + xy, so ∂/∂aᵢ = ∏_{j≠i} (1 + aⱼ).
-- ==
-- entry: generic
-- input { [0.5, 1.0, -0.5, 2.0] 1.0 } output { [3.0, 2.25, 9.0, 1.5] }
entry generic (xs: []f64) (yb: f64) = vjp (reduce (\x y -> x + y + x * y) 0) xs yb

-- A non-commutative tuple operator: composition of linear functions.
-- ==
-- entry: linear
-- input { [2.0, 3.0, 0.5] [1.0, -1.0, 4.0] 1.0 1.0 }
-- output { [1.5, 1.5, 8.0] [1.5, 0.5, 1.0] }
entry linear (as: []f64) (bs: []f64) (ya: f64) (yb: f64) =
  vjp (\(as, bs) -> reduce (\(a1, b1) (a2, b2) -> (a1 * a2, a2 * b1 + b2)) (1, 0) (zip as bs))
      (as, bs) (ya, yb)

-- A vectorised operator: reduce (map2 (*)) over the rows.
-- ==
-- entry: vectorised
-- input { [[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]] [1.0, 1.0] }
-- output { [[0.0, 0.0], [4.0, 0.0], [0.0, 6.0]] }
-- input { [[1.0, 5.0], [3.0, 5.0], [3.0, 2.0]] [1.0, 2.0] }
-- output { [[9.0, 20.0], [3.0, 20.0], [3.0, 50.0]] }
entry vectorised [n][m] (xss: [n][m]f64) (yb: [m]f64) =
  vjp (\xss -> reduce (map2 (*)) (replicate m 1) xss) xss yb

-- Column maxima with ties: the lowest row wins.
-- ==
-- entry: vectorised_max
-- input { [[1.0, 5.0], [3.0, 5.0], [3.0, 2.0]] [1.0, 2.0] }
-- output { [[0.0, 2.0], [1.0, 0.0], [0.0, 0.0]] }
entry vectorised_max [n][m] (xss: [n][m]f64) (yb: [m]f64) =
  vjp (\xss -> reduce (map2 f64.max) (replicate m (-f64.inf)) xss) xss yb

-- Reductions inside a map: products of rows.
-- ==
-- entry: rows
-- input { [[2.0, 3.0, 4.0], [2.0, 0.0, 4.0], [0.0, 3.0, 0.0]] [1.0, 1.0, 2.0] }
-- output { [[12.0, 8.0, 6.0], [0.0, 8.0, 0.0], [0.0, 0.0, 0.0]] }
entry rows [n][m] (xss: [n][m]f64) (yb: [n]f64) =
  vjp (map (\xs -> reduce (*) 1 xs)) xss yb
