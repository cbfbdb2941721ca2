-- The worked cases of the AD rules digest (design/ad-rules.md §7) that forward mode expresses:
-- checked both by the forward-mode transformation (the interpreter) and the AD oracle.

-- Scalar: f(x1, x2) = ln x1 + x1·x2 − sin x2 at (2, 5) along (1, 0): 5.5.
-- ==
-- entry: scalar
-- input { 2.0 5.0 } output { 11.652071455223084 5.5 }
entry scalar (x1: f64) (x2: f64) =
  jvp2 (\(a, b) -> f64.log a + a * b - f64.sin b) (x1, x2) (1, 0)

-- Scan with `*`: a = [2,0,4], ȧ = [1,1,1] → x = [2,0,0], ẋ = [1,2,8].
-- ==
-- entry: scan_mul
-- input { [2.0, 0.0, 4.0] [1.0, 1.0, 1.0] } output { [2.0, 0.0, 0.0] [1.0, 2.0, 8.0] }
entry scan_mul (as: []f64) (das: []f64) = jvp2 (scan (*) 1) as das

-- Scan of linear functions (α,β)⊙(α',β') = (αα', α'β+β') along ȧ = ĉ = [(1,0),(0,1),(1,1)].
-- ==
-- entry: scan_linear
-- input { [2.0, 3.0, 0.5] [1.0, -1.0, 4.0] [1.0, 0.0, 1.0] [0.0, 1.0, 1.0] }
-- output { [2.0, 6.0, 3.0] [1.0, 2.0, 5.0] [1.0, 3.0, 7.5] [0.0, 1.0, 3.5] }
entry scan_linear [n] (as: [n]f64) (bs: [n]f64) (da: [n]f64) (db: [n]f64) =
  let f (as, bs) =
    unzip (scan (\(a, b) (a', b') -> (a * a', a' * b + b')) (1, 0) (zip as bs))
  let ((xa, xb), (ta, tb)) = jvp2 f (as, bs) (da, db)
  in (xa, xb, ta, tb)

-- The dot-product test of the same scan: Σ⟨ĉ, ẋ⟩ = 13.
-- ==
-- entry: scan_linear_dot
-- input { [2.0, 3.0, 0.5] [1.0, -1.0, 4.0] [1.0, 0.0, 1.0] [0.0, 1.0, 1.0] } output { 13.0 }
entry scan_linear_dot [n] (as: [n]f64) (bs: [n]f64) (ca: [n]f64) (cb: [n]f64) =
  let (ta, tb) = jvp (\(as, bs) -> unzip (scan (\(a, b) (a', b') -> (a * a', a' * b + b')) (1, 0) (zip as bs))) (as, bs) (ca, cb)
  in f64.sum (map2 (*) ca ta) + f64.sum (map2 (*) cb tb)
