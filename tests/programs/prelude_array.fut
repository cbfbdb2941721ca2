-- Array functions of the prelude.

-- ==
-- entry: build
-- input { 4i64 } output { [0i64, 1i64, 2i64, 3i64] [7, 7, 7, 7] 4i64 [0i64, 1i64, 2i64, 3i64] }
-- input { 0i64 } output { empty([0]i64) empty([0]i32) 0i64 empty([0]i64) }
entry build (n: i64) : ([]i64, []i32, i64, []i64) =
  let xs = replicate n 7
  in (iota n, xs, length xs, indices xs)

-- replicate of an array gives a 2-D array.
-- ==
-- entry: replicate_2d
-- input { [1, 2] } output { [[1, 2], [1, 2], [1, 2]] }
entry replicate_2d (xs: []i32) : [][]i32 = replicate 3 xs

-- ==
-- entry: shape_ops
-- input { [[1, 2, 3], [4, 5, 6]] }
-- output { [[1, 4], [2, 5], [3, 6]] [1, 2, 3, 4, 5, 6] [[1, 2], [3, 4], [5, 6]] }
entry shape_ops [n] [m] (a: [n][m]i32) : ([m][n]i32, [n*m]i32, [m][n]i32) =
  (transpose a, flatten a, unflatten (flatten a :> [m*n]i32))

-- ==
-- entry: flatten3
-- input { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] } output { [1, 2, 3, 4, 5, 6, 7, 8] }
entry flatten3 (a: [][][]i32) : []i32 = flatten_3d a

-- ==
-- entry: order
-- input { [1, 2, 3, 4, 5] }
-- output { [5, 4, 3, 2, 1] [3, 4, 5, 1, 2] [4, 5, 1, 2, 3] [1, 2, 3, 4, 5] }
entry order (xs: []i32) : ([]i32, []i32, []i32, []i32) =
  (reverse xs, rotate 2 xs, rotate (-2) xs, rotate 5 xs)

-- ==
-- entry: ends
-- input { [1, 2, 3, 4, 5] } output { 1 5 [2, 3, 4, 5] [1, 2, 3, 4] [1, 2] [3, 4, 5] }
entry ends (xs: []i32) : (i32, i32, []i32, []i32, []i32, []i32) =
  (head xs, last xs, tail xs, init xs, take 2 xs, drop 2 xs)

-- take 0 and drop everything give empty arrays.
-- ==
-- entry: ends_empty
-- input { [1, 2] } output { empty([0]i32) empty([0]i32) [1, 2] }
entry ends_empty (xs: []i32) : ([]i32, []i32, []i32) = (take 0 xs, drop 2 xs, drop 0 xs)

-- ==
-- entry: copies
-- input { [1, 2, 3] } output { [1, 2, 3] [1, 2, 3] [1, 2, 3] [1, 2, 3] }
entry copies (xs: []i32) : ([]i32, []i32, []i32, []i32) = (copy xs, manifest xs, opaque xs, trace xs)

-- ==
-- entry: bools
-- input { [true, false, true] } output { false true }
-- input { [true, true] } output { true true }
-- input { empty([0]bool) } output { true false }
entry bools (bs: []bool) : (bool, bool) = (and bs, or bs)

-- length of a 2-D array is its number of rows.
-- ==
-- entry: lengths
-- input { [[1, 2, 3], [4, 5, 6]] } output { 2i64 3i64 }
entry lengths (m: [][]i32) : (i64, i64) = (length m, length (transpose m))
