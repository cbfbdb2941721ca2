-- Reverse-mode AD of reduce, scan and reduce_by_index whose operator reads a free variable:
-- the variable's adjoint sums the contributions of every application of the operator.
-- The operator x ⊙_c y = x + y + c·x·y is associative for every c, with neutral 0:
-- 1 + c·(x ⊙_c y) = (1 + c·x)(1 + c·y), so a reduction is y = (∏(1 + c·xᵢ) − 1)/c,
-- ∂y/∂xᵢ = ∏_{j≠i}(1 + c·xⱼ) and ∂y/∂c = (Σᵢ xᵢ ∏_{j≠i}(1 + c·xⱼ))/c − y/c.

-- [1, 2] at c = 0.5: y = 4, x̄ = (1 + 0.5·2, 1 + 0.5·1), c̄ = 1·2.
-- [1, 2, 3] at c = 1: y = 23, x̄ = (12, 8, 6), c̄ = (12 + 16 + 18) − 23 = 23.
-- ==
-- entry: reduce_free
-- input { [1.0, 2.0] 0.5 1.0 } output { [2.0, 1.5] 2.0 }
-- input { [1.0, 2.0, 3.0] 1.0 1.0 } output { [12.0, 8.0, 6.0] 23.0 }
-- input { [1.0, 2.0, 3.0] 1.0 -2.0 } output { [-24.0, -16.0, -12.0] -46.0 }
-- input { [4.0] 1.0 1.0 } output { [1.0] 0.0 }
-- input { empty([0]f64) 1.0 1.0 } output { empty([0]f64) 0.0 }
entry reduce_free [n] (xs: [n]f64) (c: f64) (yb: f64) =
  vjp (\(xs, c) -> reduce (\a b -> a + b + c * a * b) 0 xs) (xs, c) yb

-- The free variable is the element of an enclosing map: c = 1 gives the case above; at c = 0
-- the derivative in c is Σ_{i<j} xᵢxⱼ = 2 + 3 + 6 = 11 and x̄ = (1, 1, 1).
-- ==
-- entry: reduce_in_map
-- input { [1.0, 2.0, 3.0] [1.0, 0.0] } output { [13.0, 9.0, 7.0] [23.0, 11.0] }
entry reduce_in_map [n][m] (xs: [n]f64) (cs: [m]f64) =
  vjp (\(xs, cs) -> map (\c -> reduce (\a b -> a + b + c * a * b) 0 xs) cs) (xs, cs) (replicate m 1)

-- The free variable is an element of a free array.
-- ==
-- entry: reduce_free_array
-- input { [1.0, 2.0, 3.0] [5.0, 1.0] } output { [12.0, 8.0, 6.0] [0.0, 23.0] }
entry reduce_free_array [n] (xs: [n]f64) (cs: [2]f64) =
  vjp (\(xs, cs) -> reduce (\a b -> a + b + cs[1] * a * b) 0 xs) (xs, cs) 1

-- scan: ys = [1, 5, 23] at c = 1. ȳ = [0, 0, 1] is the reduction; ȳ = [1, 1, 1] sums the
-- derivatives of the three prefixes: x̄ = (1 + 3 + 12, 2 + 8, 6), c̄ = 0 + 2 + 23.
-- ==
-- entry: scan_free
-- input { [1.0, 2.0, 3.0] 1.0 [0.0, 0.0, 1.0] } output { [12.0, 8.0, 6.0] 23.0 }
-- input { [1.0, 2.0, 3.0] 1.0 [1.0, 1.0, 1.0] } output { [16.0, 10.0, 6.0] 25.0 }
-- input { empty([0]f64) 1.0 empty([0]f64) } output { empty([0]f64) 0.0 }
entry scan_free [n] (xs: [n]f64) (c: f64) (ys: [n]f64) =
  vjp (\(xs, c) -> scan (\a b -> a + b + c * a * b) 0 xs) (xs, c) ys

-- reduce_by_index at c = 1: bin 0 is 1 ⊙ 1 ⊙ 2 ⊙ 3 = 2·2·3·4 − 1 = 47, with
-- ∂/∂c = (1·24 + 1·24 + 2·16 + 3·12) − 47 = 69; bin 1 is 0 ⊙ 5 = 5 (∂/∂c = 0, h̄₁ = 1 + c·5); the index 7
-- is out of range (its element gets 0).
-- ==
-- entry: hist_free
-- input { [1.0, 0.0] [0i64, 1i64, 0i64, 0i64, 7i64] [1.0, 5.0, 2.0, 3.0, 9.0] 1.0 [1.0, 1.0] }
-- output { [24.0, 6.0] [24.0, 1.0, 16.0, 12.0, 0.0] 69.0 }
entry hist_free [n] (h: [2]f64) (is: [n]i64) (xs: [n]f64) (c: f64) (yb: [2]f64) =
  vjp (\(h, xs, c) -> reduce_by_index (copy h) (\a b -> a + b + c * a * b) 0 is xs) (h, xs, c) yb
