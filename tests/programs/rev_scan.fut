-- Reverse-mode AD of inclusive scan: `vjp f x ȳ` is the adjoint of `x` for the result
-- adjoint `ȳ`. Expected values are the worked cases of ad-rules.md §7 and hand-derived ones.

-- Prefix sums: āᵢ = Σ_{j ≥ i} ȳⱼ.
-- ==
-- entry: sum
-- input { [1.0, 2.0, 3.0] [1.0, 2.0, 3.0] } output { [6.0, 5.0, 3.0] }
-- input { empty([0]f64) empty([0]f64) } output { empty([0]f64) }
entry sum (xs: []f64) (yb: []f64) = vjp (scan (+) 0) xs yb

-- Prefix products with a zero (ad-rules.md §7: the jvp along [1,1,1] is [1,2,8]).
-- ==
-- entry: product
-- input { [2.0, 0.0, 4.0] [1.0, 1.0, 1.0] } output { [1.0, 10.0, 0.0] }
-- input { [3.0] [2.0] } output { [2.0] }
entry product (xs: []f64) (yb: []f64) = vjp (scan (*) 1) xs yb

-- Linear functions (α,β) ⊙ (α',β') = (αα', α'β + β') (ad-rules.md §7):
-- a = [(2,1),(3,−1),(.5,4)], ĉ = [(1,0),(0,1),(1,1)] → â = [(2.5,4.5),(2.5,1.5),(8,1)].
-- ==
-- entry: linear
-- input { [2.0, 3.0, 0.5] [1.0, -1.0, 4.0] [1.0, 0.0, 1.0] [0.0, 1.0, 1.0] }
-- output { [2.5, 2.5, 8.0] [4.5, 1.5, 1.0] }
entry linear [n] (as: [n]f64) (bs: [n]f64) (ca: [n]f64) (cb: [n]f64) =
  vjp (\(as, bs) -> unzip (scan (\(a1, b1) (a2, b2) -> (a1 * a2, a2 * b1 + b2)) (1, 0) (zip as bs)))
      (as, bs) (ca, cb)

-- Products of 2×2 matrices [[a,b],[c,d]] (ad-rules.md §7): A0=[[1,2],[0,1]],
-- A1=[[2,0],[1,1]], A2=[[0,1],[1,3]]; ĉ = [[[1,0],[0,0]], [[0,1],[0,0]], [[1,1],[1,1]]] →
-- â = [[[3,6],[2,5]], [[1,5],[3,14]], [[5,5],[3,3]]].
-- ==
-- entry: matrices
-- input { [1.0, 2.0, 0.0] [2.0, 0.0, 1.0] [0.0, 1.0, 1.0] [1.0, 1.0, 3.0]
--         [1.0, 0.0, 1.0] [0.0, 1.0, 1.0] [0.0, 0.0, 1.0] [0.0, 0.0, 1.0] }
-- output { [3.0, 1.0, 5.0] [6.0, 5.0, 5.0] [2.0, 3.0, 3.0] [5.0, 14.0, 3.0] }
entry matrices [n] (a: [n]f64) (b: [n]f64) (c: [n]f64) (d: [n]f64)
                   (ca: [n]f64) (cb: [n]f64) (cc: [n]f64) (cd: [n]f64) =
  vjp (\(a, b, c, d) ->
         unzip4 (scan (\(a1, b1, c1, d1) (a2, b2, c2, d2) ->
                         (a1*a2 + b1*c2, a1*b2 + b1*d2, c1*a2 + d1*c2, c1*b2 + d1*d2))
                      (1, 0, 0, 1) (zip4 a b c d)))
      (a, b, c, d) (ca, cb, cc, cd)

-- A segmented sum: the flags steer the operator and have no adjoint.
-- ==
-- entry: segmented
-- input { [1.0, 2.0, 3.0, 4.0, 5.0] [true, false, true, false, false] [1.0, 2.0, 3.0, 4.0, 5.0] }
-- output { [3.0, 2.0, 12.0, 9.0, 5.0] }
entry segmented [n] (xs: [n]f64) (fs: [n]bool) (yb: [n]f64) =
  vjp (\xs -> (unzip (scan (\(v1, f1) (v2, f2) -> (if f2 then v2 else v1 + v2, f1 || f2))
                           (0, false) (zip xs fs))).0)
      xs yb

-- A vectorised operator: prefix sums of the rows.
-- ==
-- entry: vectorised
-- input { [[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]] [[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]] }
-- output { [[4.0, 2.0], [3.0, 0.0], [3.0, -1.0]] }
entry vectorised [n][m] (xss: [n][m]f64) (yb: [n][m]f64) =
  vjp (\xss -> scan (map2 (+)) (replicate m 0) xss) xss yb
