-- Reverse-mode AD of reduce_by_index: `vjp f (h, as) ȳ` gives the adjoints of the histogram
-- and of the values. Expected values are the worked cases of ad-rules.md §7
-- (is = [0,1,2,1,1,0,-1,4], 4 bins: index -1 and 4 are out of range and get 0).

-- `+`: h̄ = ȳ, āᵢ = ȳ[isᵢ].
-- ==
-- entry: add
-- input { [10.0, 20.0, 30.0, 40.0] [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] [1.0, 2.0, 3.0, 4.0] }
-- output { [1.0, 2.0, 3.0, 4.0] [1.0, 2.0, 3.0, 2.0, 2.0, 1.0, 0.0, 0.0] }
-- input { [1.0, 2.0] empty([0]i64) empty([0]f64) [3.0, 4.0] }
-- output { [3.0, 4.0] empty([0]f64) }
entry add [k] [n] (h: [k]f64) (is: [n]i64) (as: [n]f64) (yb: [k]f64) =
  vjp (\(h, as) -> reduce_by_index (copy h) (+) 0 is as) (h, as) yb

-- `*`, with zeros among the values.
-- ==
-- entry: mul
-- input { [2.0, 0.5, -1.0, 3.0] [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] [1.0, 2.0, 3.0, 4.0] }
-- output { [8.0, 60.0, 18.0, 4.0] [16.0, 15.0, -3.0, 10.0, 6.0, 2.0, 0.0, 0.0] }
-- input { [2.0, 0.5, -1.0, 3.0] [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [0.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] [1.0, 2.0, 3.0, 4.0] }
-- output { [0.0, 60.0, 18.0, 4.0] [16.0, 15.0, -3.0, 10.0, 6.0, 0.0, 0.0, 0.0] }
-- input { [2.0, 0.5, -1.0, 3.0] [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [1.0, 0.0, 6.0, 3.0, 0.0, 8.0, 7.0, 9.0] [1.0, 2.0, 3.0, 4.0] }
-- output { [8.0, 0.0, 18.0, 4.0] [16.0, 0.0, -3.0, 0.0, 0.0, 2.0, 0.0, 0.0] }
entry mul [k] [n] (h: [k]f64) (is: [n]i64) (as: [n]f64) (yb: [k]f64) =
  vjp (\(h, as) -> reduce_by_index (copy h) (*) 1 is as) (h, as) yb

-- `max`: the original value wins its ties (bin 0), then the lowest index (bin 1).
-- ==
-- entry: max
-- input { [8.0, 0.0, 1.0, 7.0] [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [1.0, 2.0, 6.0, 5.0, 5.0, 8.0, 7.0, 9.0] [1.0, 2.0, 3.0, 4.0] }
-- output { [1.0, 0.0, 0.0, 4.0] [0.0, 0.0, 3.0, 2.0, 0.0, 0.0, 0.0, 0.0] }
entry max [k] [n] (h: [k]f64) (is: [n]i64) (as: [n]f64) (yb: [k]f64) =
  vjp (\(h, as) -> reduce_by_index (copy h) f64.max f64.lowest is as) (h, as) yb

-- A generic operator x⊙y = x+y+xy (neutral 0); with as[1] = -1 (absorbing).
-- ==
-- entry: generic
-- input { [0.5, 1.0, -0.5, 2.0] [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] [1.0, 2.0, 3.0, 4.0] }
-- output { [18.0, 144.0, 21.0, 4.0] [13.5, 96.0, 1.5, 72.0, 48.0, 3.0, 0.0, 0.0] }
-- input { [0.5, 1.0, -0.5, 2.0] [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [1.0, -1.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] [1.0, 2.0, 3.0, 4.0] }
-- output { [18.0, 0.0, 21.0, 4.0] [13.5, 96.0, 1.5, 0.0, 0.0, 3.0, 0.0, 0.0] }
entry generic [k] [n] (h: [k]f64) (is: [n]i64) (as: [n]f64) (yb: [k]f64) =
  vjp (\(h, as) -> reduce_by_index (copy h) (\x y -> x + y + x * y) 0 is as) (h, as) yb

-- Vectorised `+` (rows are arrays), through `hist`.
-- ==
-- entry: vec_add
-- input { [2i64, 0i64, 2i64, 3i64] [[1.0, -1.0], [0.5, 2.0], [1.5, 1.0], [4.0, 4.0]] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] }
-- output { [[5.0, 6.0], [1.0, 2.0], [5.0, 6.0], [0.0, 0.0]] }
entry vec_add [n] (is: [n]i64) (as: [n][2]f64) (yb: [3][2]f64) =
  vjp (\as -> hist (map2 (+)) (replicate 2 0) 3 is as) as yb
