-- Nested maps: matrix operations and maps with inner reductions.

-- ==
-- entry: add_matrices
-- input { [[1, 2], [3, 4]] [[10, 20], [30, 40]] } output { [[11, 22], [33, 44]] }
entry add_matrices [n][m] (a: [n][m]i32) (b: [n][m]i32) : [n][m]i32 = map2 (map2 (+)) a b

-- Row sums and column sums.
-- ==
-- entry: sums
-- input { [[1, 2, 3], [4, 5, 6]] } output { [6, 15] [5, 7, 9] }
entry sums (m: [][]i32) : ([]i32, []i32) =
  (map (reduce (+) 0) m, map (reduce (+) 0) (transpose m))

-- Matrix multiplication.
-- ==
-- entry: matmul
-- input { [[1.0, 2.0], [3.0, 4.0]] [[5.0, 6.0], [7.0, 8.0]] } output { [[19.0, 22.0], [43.0, 50.0]] }
-- input { [[1.0, 2.0, 3.0]] [[1.0], [2.0], [3.0]] } output { [[14.0]] }
entry matmul [n][k][m] (a: [n][k]f64) (b: [k][m]f64) : [n][m]f64 =
  map (\row -> map (\col -> f64.sum (map2 (*) row col)) (transpose b)) a

-- Outer product with an index-based map.
-- ==
-- entry: outer
-- input { [1, 2] [3, 4, 5] } output { [[3, 4, 5], [6, 8, 10]] }
entry outer (xs: []i32) (ys: []i32) : [][]i32 = map (\x -> map (\y -> x * y) ys) xs

-- Three levels of map.
-- ==
-- entry: three
-- input { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] } output { [[[2, 3], [4, 5]], [[6, 7], [8, 9]]] }
entry three (a: [][][]i32) : [][][]i32 = map (map (map (+ 1))) a

-- An inner map whose function uses the outer element.
-- ==
-- entry: dependent
-- input { [1, 2, 3] } output { [[0, 1, 2], [0, 2, 4], [0, 3, 6]] }
entry dependent (xs: []i32) : [][]i32 =
  map (\x -> map (\i -> x * i32.i64 i) (indices xs)) xs
