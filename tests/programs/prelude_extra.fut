-- Prelude functions beyond the core list, with Futhark's meaning (see docs/language.md).
-- Expected outputs worked out by hand.

-- ==
-- entry: filters
-- input { [1, 5, 2, 7, 3] } output { [5, 7, 3] }
-- input { [1, 2] } output { empty([0]i32) }
-- input { empty([0]i32) } output { empty([0]i32) }
entry filters (xs: []i32) : []i32 = filter (> 2) xs

-- Order is kept on both sides.
-- ==
-- entry: partitions
-- input { [1, 2, 3, 4, 5, 6] } output { [2, 4, 6] [1, 3, 5] }
-- input { [1, 3] } output { empty([0]i32) [1, 3] }
entry partitions (xs: []i32) : ([]i32, []i32) = partition (\x -> x % 2 == 0) xs

-- Exclusive scan: the neutral element first, the last total dropped.
-- ==
-- entry: exscans
-- input { [1, 2, 3, 4] [2.0, 3.0, 4.0] } output { [0, 1, 3, 6] [1.0, 2.0, 6.0] }
-- input { empty([0]i32) empty([0]f64) } output { empty([0]i32) empty([0]f64) }
entry exscans (xs: []i32) (ys: []f64) : ([]i32, []f64) = (exscan (+) 0 xs, exscan (*) 1 ys)

-- iterate 3 (*2) 1 = 8; 1, 3, 9, 27, 81, 243: the first above 100 is 243;
-- 48, 24, 12, 6, 3: halve while even gives 3.
-- ==
-- entry: iterates
-- input { 1 } output { 8 243 3 }
entry iterates (x: i32) : (i32, i32, i32) =
  (iterate 3 (* 2) x, iterate_until (> 100) (* 3) x, iterate_while (\y -> y % 2 == 0) (/ 2) (48 * x))

-- flip f b a = f a b: flip (-) 1 10 = 10 - 1.
-- ==
-- entry: flips
-- input { 1 10 } output { 9 }
entry flips (a: i32) (b: i32) : i32 = flip (-) a b

-- ==
-- entry: nulls
-- input { empty([0]i32) } output { true }
-- input { [7] } output { false }
entry nulls (xs: []i32) : bool = null xs

-- spread: a fresh array of k copies of x, then a scatter (index 7 is out of range: ignored).
-- ==
-- entry: spreads
-- input { [1i64, 3i64, 7i64] [10, 20, 30] } output { [0, 10, 0, 20, 0] }
entry spreads (is: []i64) (vs: []i32) : []i32 = spread 5 0 is vs

-- (0,1) gets 1 + 3, (1,2) gets 2, (2,0) is out of range.
-- ==
-- entry: hist2d
-- input { [0i64, 1i64, 0i64, 2i64] [1i64, 2i64, 1i64, 0i64] [1, 2, 3, 4] }
-- output { [[0, 4, 0], [0, 0, 2]] }
entry hist2d (is: []i64) (js: []i64) (vs: []i32) : [][]i32 =
  reduce_by_index_2d (replicate 2 (replicate 3 0)) (+) 0 (zip is js) vs

-- ==
-- entry: aliases
-- input { [1, 2] [3, 4] } output { [2, 3] [1, 2] [3, 4] }
entry aliases (xs: []i32) (ys: []i32) : ([]i32, []i32, []i32) =
  let (a, b) = unzip2 (zip2 xs ys)
  in (map1 (+ 1) xs, a, b)
