-- scatter, scatter_2d, scatter_3d.

-- ==
-- entry: basic
-- input { [0, 0, 0, 0] [3i64, 1i64] [7, 8] } output { [0, 8, 0, 7] }
-- input { [1, 2] empty([0]i64) empty([0]i32) } output { [1, 2] }
entry basic (dest: *[]i32) (is: []i64) (vs: []i32) : []i32 = scatter dest is vs

-- Out-of-bounds indices are ignored.
-- ==
-- entry: oob
-- input { [-1i64, 5i64, 2i64, 3i64] [1.0, 2.0, 3.0, 4.0] } output { [0.0, 0.0, 3.0] }
entry oob (is: []i64) (vs: []f64) : []f64 = scatter (replicate 3 0) is vs

-- Scatter into a copy: the original is unchanged.
-- ==
-- entry: copy_dest
-- input { [1, 2, 3] } output { [1, 2, 3] [9, 2, 3] }
entry copy_dest (xs: []i32) : ([]i32, []i32) = (xs, scatter (copy xs) [0] [9])

-- Permutation by scatter: the inverse of a permutation.
-- ==
-- entry: inverse_perm
-- input { [2i64, 0i64, 1i64] } output { [1i64, 2i64, 0i64] }
entry inverse_perm [n] (p: [n]i64) : [n]i64 = scatter (replicate n 0) p (iota n)

-- ==
-- entry: two_d
-- input { 2i64 3i64 [0i64, 1i64, 5i64] [2i64, 0i64, 0i64] [1, 2, 3] } output { [[0, 0, 1], [2, 0, 0]] }
entry two_d (n: i64) (m: i64) (is: []i64) (js: []i64) (vs: []i32) : [][]i32 =
  scatter_2d (replicate n (replicate m 0)) (zip is js) vs

-- ==
-- entry: three_d
-- input { [1i64, 0i64] [0i64, 1i64] [1i64, 0i64] [5, 6] } output { [[[0, 0], [6, 0]], [[0, 5], [0, 0]]] }
entry three_d (is: []i64) (js: []i64) (ks: []i64) (vs: []i32) : [][][]i32 =
  scatter_3d (replicate 2 (replicate 2 (replicate 2 0))) (zip3 is js ks) vs
