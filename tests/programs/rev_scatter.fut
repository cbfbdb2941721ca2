-- Reverse-mode AD of scatter: `vjp f (dst, vs) ȳ` gives the adjoints of the destination and of
-- the values. Later writes win; out-of-range writes are ignored. Expected values: the worked
-- case of ad-rules.md §7 and hand-derived ones.

-- Duplicates: only the write that won gets ȳ; the written positions of dst get 0.
-- ==
-- entry: scatter1
-- input { [0.0, 0.0, 0.0] [1i64, 1i64, 5i64] [10.0, 20.0, 30.0] [1.0, 2.0, 3.0] }
-- output { [1.0, 0.0, 3.0] [0.0, 2.0, 0.0] }
-- input { [1.0, 2.0, 3.0, 4.0] [2i64, 0i64, 2i64, -1i64, 0i64, 9i64, 2i64] [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5] [1.0, 2.0, 3.0, 4.0] }
-- output { [0.0, 2.0, 0.0, 4.0] [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 3.0] }
-- input { [1.0, 2.0] empty([0]i64) empty([0]f64) [3.0, 4.0] }
-- output { [3.0, 4.0] empty([0]f64) }
entry scatter1 [k] [n] (dst: [k]f64) (is: [n]i64) (vs: [n]f64) (yb: [k]f64) =
  vjp (\(dst, vs) -> scatter (copy dst) is vs) (dst, vs) yb

-- Two dimensions: (1, 3) is out of range; (0, 2) is written twice.
-- ==
-- entry: scatter2
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [0i64, 1i64, 0i64, 1i64] [2i64, 0i64, 2i64, 3i64] [7.0, 8.0, 9.0, 10.0] [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] }
-- output { [[1.0, 2.0, 0.0], [0.0, 5.0, 6.0]] [0.0, 4.0, 3.0, 0.0] }
entry scatter2 [k1] [k2] [n] (dst: [k1][k2]f64) (is: [n]i64) (js: [n]i64) (vs: [n]f64) (yb: [k1][k2]f64) =
  vjp (\(dst, vs) -> scatter_2d (copy dst) (zip is js) vs) (dst, vs) yb
