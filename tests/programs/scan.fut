-- scan (inclusive prefix scan).

-- ==
-- entry: prefix_sum
-- input { [1, 2, 3, 4] } output { [1, 3, 6, 10] }
-- input { empty([0]i32) } output { empty([0]i32) }
entry prefix_sum (xs: []i32) : []i32 = scan (+) 0 xs

-- ==
-- entry: ops
-- input { [3, 1, 4, 1, 5] } output { [3, 3, 12, 12, 60] [3, 3, 4, 4, 5] [3, 1, 1, 1, 1] }
entry ops (xs: []i32) : ([]i32, []i32, []i32) =
  (scan (*) 1 xs, scan i32.max i32.lowest xs, scan i32.min i32.highest xs)

-- Scan with a tuple operator: running sum and count of positives.
-- ==
-- entry: tuple_scan
-- input { [1.0, -2.0, 3.0] } output { [1.0, -1.0, 2.0] [1, 1, 2] }
entry tuple_scan (xs: []f64) : ([]f64, []i32) =
  unzip (scan (\(a, n) (b, m) -> (a + b, n + m)) (0, 0) (map (\x -> (x, if x > 0 then 1 else 0)) xs))

-- Scan over rows of a matrix with a vector operator.
-- ==
-- entry: rows
-- input { [[1, 2], [3, 4], [5, 6]] } output { [[1, 2], [4, 6], [9, 12]] }
entry rows [m] (xss: [][m]i32) : [][m]i32 = scan (map2 (+)) (replicate m 0) xss

-- Scan with a non-commutative operator (composition of affine maps x -> a*x + b).
-- ==
-- entry: affine
-- input { [2, 3, 1] [1, 0, 5] } output { [2, 6, 6] [1, 3, 8] }
entry affine (as: []i32) (bs: []i32) : ([]i32, []i32) =
  unzip (scan (\(a1, b1) (a2, b2) -> (a2 * a1, a2 * b1 + b2)) (1, 0) (zip as bs))

-- The last element of a scan equals the reduction.
-- ==
-- entry: last_is_reduce
-- random input { [500]i32 } output { true }
entry last_is_reduce (xs: []i32) : bool =
  let s = scan (+) 0 xs
  in length xs == 0 || s[length xs - 1] == reduce (+) 0 xs
