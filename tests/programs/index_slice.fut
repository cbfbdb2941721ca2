-- Indexing and slicing.

-- ==
-- entry: index
-- input { [10, 20, 30] [[1, 2, 3], [4, 5, 6]] } output { 10 30 6 [4, 5, 6] 2 }
entry index (xs: []i32) (m: [][]i32) : (i32, i32, i32, []i32, i32) =
  (xs[0], xs[2], m[1, 2], m[1], m[0][1])

-- Indices are i64 and may be computed.
-- ==
-- entry: computed
-- input { [10, 20, 30, 40] 1i64 } output { 30 40 }
entry computed (xs: []i32) (i: i64) : (i32, i32) = (xs[i + 1], xs[length xs - 1])

-- ==
-- entry: three_d
-- input { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] } output { 7 [5, 6] [[1, 2], [3, 4]] }
entry three_d (a: [][][]i32) : (i32, []i32, [][]i32) = (a[1, 1, 0], a[1, 0], a[0])

-- Slices with start and end; either may be omitted.
-- ==
-- entry: slices
-- input { [0, 1, 2, 3, 4, 5] } output { [1, 2] [3, 4, 5] [0, 1] [0, 1, 2, 3, 4, 5] empty([0]i32) }
entry slices (xs: []i32) : ([]i32, []i32, []i32, []i32, []i32) =
  (xs[1:3], xs[3:], xs[:2], xs[:], xs[2:2])

-- Strided slices; a negative stride runs backwards.
-- ==
-- entry: strides
-- input { [0, 1, 2, 3, 4, 5] } output { [0, 2, 4] [1, 4] [5, 4, 3, 2, 1, 0] [4, 3, 2] [5, 3, 1] }
entry strides (xs: []i32) : ([]i32, []i32, []i32, []i32, []i32) =
  (xs[::2], xs[1:6:3], xs[::-1], xs[4:1:-1], xs[::-2])

-- Slicing several dimensions, mixed with indexing.
-- ==
-- entry: multi
-- input { [[1, 2, 3], [4, 5, 6], [7, 8, 9]] }
-- output { [2, 5, 8] [[4, 5, 6], [7, 8, 9]] [[4, 5], [7, 8]] [7, 9] [[3, 2, 1], [6, 5, 4], [9, 8, 7]] }
entry multi (m: [][]i32) : ([]i32, [][]i32, [][]i32, []i32, [][]i32) =
  (m[:, 1], m[1:], m[1:, :2], m[2, ::2], m[:, ::-1])

-- Indexing a parenthesised expression and the result of a function.
-- ==
-- entry: paren
-- input { [1, 2, 3] } output { 4 6 }
entry paren (xs: []i32) : (i32, i32) = ((map (+ 1) xs)[2], (reverse (map (* 2) xs))[0])

-- Slices used as values: sums of windows.
-- ==
-- entry: windows
-- input { [1, 2, 3, 4, 5] 2i64 } output { [3, 5, 7, 9] }
entry windows (xs: []i32) (w: i64) : []i32 =
  map (\i -> i32.sum xs[i:i + w]) (iota (length xs - w + 1))

-- With a space before `[`, it is an application to an array literal.
-- ==
-- entry: space
-- input { [5, 6] } output { 8 }
entry space (xs: []i32) : i32 =
  let sum3 (ys: []i32) = i32.sum ys
  in sum3 [1, 2, xs[0]]
