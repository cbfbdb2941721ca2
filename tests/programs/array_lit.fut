-- Array literals of one, two and three dimensions; empty arrays.

-- ==
-- entry: one_d
-- input { 4 } output { [1, 2, 4] [true, false] [1.5f32, 4.0f32] }
entry one_d (x: i32) : ([]i32, []bool, []f32) = ([1, 2, x], [x > 0, x < 0], [1.5, f32.i32 x])

-- ==
-- entry: two_d
-- input { 5 } output { [[1, 2], [3, 5]] 2i64 2i64 }
entry two_d (x: i32) : ([][]i32, i64, i64) =
  let m = [[1, 2], [3, x]]
  in (m, length m, length m[0])

-- ==
-- entry: three_d
-- input { 0u8 } output { [[[0u8, 1u8], [2u8, 3u8]], [[4u8, 5u8], [6u8, 7u8]]] }
entry three_d (z: u8) : [][][]u8 = [[[z, 1], [2, 3]], [[4, 5], [6, 7]]]

-- Elements can be arbitrary expressions, including arrays built by functions.
-- ==
-- entry: rows
-- input { 3i64 } output { [[0i64, 1i64, 2i64], [7i64, 7i64, 7i64]] }
entry rows (n: i64) : [][]i64 = [iota n, replicate n 7]

-- Empty arrays: `[]` takes its type from an annotation or its use.
-- ==
-- entry: empty
-- input { 1 } output { empty([0]i32) 0i64 [1] }
entry empty (x: i32) : ([]i32, i64, []i32) =
  let e : []i32 = []
  in (e, length e, e ++ [x])

-- Empty arrays as entry arguments and results.
-- ==
-- entry: pass_empty
-- input { empty([0]f64) empty([0][3]i32) } output { empty([0]f64) 0i64 empty([0][3]i32) }
-- input { [1.5] empty([2][0]i32) } output { [3.0] 2i64 empty([2][0]i32) }
entry pass_empty (xs: []f64) (m: [][]i32) : ([]f64, i64, [][]i32) = (map (* 2) xs, length m, m)

-- An array literal of tuples (stored as separate arrays).
-- ==
-- entry: tuple_array
-- input { 2.5 } output { [1, 2] [0.5, 2.5] }
entry tuple_array (y: f64) : ([]i32, []f64) = unzip [(1, 0.5), (2, y)]
