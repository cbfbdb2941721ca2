-- reduce_by_index: generalised histograms into an existing array.

-- ==
-- entry: add
-- input { [0, 0, 0, 0] [0i64, 1i64, 0i64, 3i64, 1i64, 0i64] [1, 2, 3, 4, 5, 6] } output { [10, 7, 0, 4] }
-- input { [1, 1] empty([0]i64) empty([0]i32) } output { [1, 1] }
entry add (dest: *[]i32) (is: []i64) (vs: []i32) : []i32 = reduce_by_index dest (+) 0 is vs

-- The destination's initial values are combined too.
-- ==
-- entry: initial
-- input { [100, 200] [1i64, 1i64] [1, 2] } output { [100, 203] }
entry initial (dest: *[]i32) (is: []i64) (vs: []i32) : []i32 = reduce_by_index dest (+) 0 is vs

-- Indices outside the destination are ignored.
-- ==
-- entry: out_of_bounds
-- input { [-1i64, 0i64, 3i64, 2i64, 100i64] [1, 2, 3, 4, 5] } output { [2, 0, 4] }
entry out_of_bounds (is: []i64) (vs: []i32) : []i32 = reduce_by_index (replicate 3 0) (+) 0 is vs

-- Other operators: max, multiplication, on floats.
-- ==
-- entry: ops
-- input { [0i64, 1i64, 0i64, 1i64] [2.0, 3.0, 5.0, 0.5] }
-- output { [5.0, 3.0] [10.0, 1.5] }
entry ops (is: []i64) (vs: []f64) : ([]f64, []f64) =
  ( reduce_by_index (replicate 2 (-f64.inf)) f64.max (-f64.inf) is vs
  , reduce_by_index (replicate 2 1) (*) 1 is vs )

-- A tuple-valued operator: (count, sum) per bucket.
-- ==
-- entry: tuple_op
-- input { [1i64, 1i64, 0i64] [5, 6, 7] } output { [1, 2] [7, 11] }
entry tuple_op (is: []i64) (vs: []i32) : ([]i32, []i32) =
  let dest = replicate 2 (0, 0)
  in unzip (reduce_by_index dest (\(c1, s1) (c2, s2) -> (c1 + c2, s1 + s2)) (0, 0) is (map (\v -> (1, v)) vs))

-- Agrees with a sequential loop.
-- ==
-- entry: vs_loop
-- random input { [1000]i64 [1000]i32 } output { true }
entry vs_loop [n] (is0: [n]i64) (vs: [n]i32) : bool =
  let k = 17i64
  let is = map (\i -> i % (k + 3) - 2) is0
  let a = reduce_by_index (replicate k 0) (+) 0 is vs
  let b = loop acc = replicate k 0 for j < n do
            let i = is[j]
            in if i >= 0 && i < k then acc with [i] = acc[i] + vs[j] else acc
  in a == b
