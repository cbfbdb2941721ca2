-- A shape mismatch names the sizes that differ, on every backend: at host level, inside a
-- kernel (each thread's own sizes, reported from the failing thread) and in one dimension of
-- a multi-dimensional array.
-- ==
-- entry: host
-- input { [1, 2] [10, 20] } output { [11, 22] }
-- input { [1, 2] [1, 2, 3] }
-- error: shape_mismatch_sizes\.fut:20:3: shape mismatch: an array has size 3 where size 2 is required
-- ==
-- entry: per_thread
-- input { [3i64, 3i64] } output { [6i64, 6i64] }
-- input { [3i64, 3i64, 5i64] }
-- error: shape_mismatch_sizes\.fut:23:22: shape mismatch: an array has size 3 where size 5 is required
-- ==
-- entry: inner_dim
-- input { [[1, 2], [3, 4]] [[1, 2, 3], [4, 5, 6]] }
-- error: shape_mismatch_sizes\.fut:26:23: shape mismatch: dimension 2 of an array has size 3 where size 2 is required

entry host (xs: []i32) (ys: []i32) : []i32 =
  map2 (+) xs ys

entry per_thread (ns: []i64) : []i64 =
  map (\n -> i64.sum (map2 (+) (iota n) (iota 3))) ns

entry inner_dim [n][m][k] (xss: [n][m]i32) (yss: [n][k]i32) : [n][m]i32 =
  map2 (map2 (+)) xss (yss :> [n][m]i32)
