-- hist: histograms into a fresh array of k neutral elements.

-- ==
-- entry: counts
-- input { 4i64 [0i64, 2i64, 2i64, 3i64, 2i64] } output { [1, 0, 3, 1] }
-- input { 2i64 empty([0]i64) } output { [0, 0] }
entry counts [n] (k: i64) (is: [n]i64) : []i32 = hist (+) 0 k is (replicate n 1)

-- ==
-- entry: sums
-- input { 3i64 [2i64, 0i64, 2i64, 5i64, -1i64] [1.5, 2.0, 2.5, 9.0, 9.0] } output { [2.0, 0.0, 4.0] }
entry sums (k: i64) (is: []i64) (vs: []f64) : []f64 = hist (+) 0 k is vs

-- ==
-- entry: minimum
-- input { 2i64 [0i64, 0i64, 1i64] [5, 3, 8] } output { [3, 8] [2147483647, 2147483647, 2147483647] }
entry minimum (k: i64) (is: []i64) (vs: []i32) : ([]i32, []i32) =
  (hist i32.min i32.highest k is vs, hist i32.min i32.highest 3 (map (+ 5) is) vs)

-- hist agrees with reduce_by_index into a replicated neutral array.
-- ==
-- entry: vs_rbi
-- random input { [200]i64 [200]i32 } output { true }
entry vs_rbi [n] (is0: [n]i64) (vs: [n]i32) : bool =
  let is = map (\i -> i % 10) is0
  in hist (+) 0 7 is vs == reduce_by_index (replicate 7 0) (+) 0 is vs

-- Indices that are provably distinct (`i + 1`, `2 n - 1 - i`: paper 003) make histograms whose
-- backends may update bins without atomics; the results are those of any histogram.
-- ==
-- entry: disjoint
-- input { [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] [0.5, -1.0, 2.0] [8, 9, -3] }
-- output { [1.0, 2.5, 2.0, 6.0, 5.0, 6.0, 7.0] [1, 2, 3, 4, 9, 8, 7] }
entry disjoint [n][m] (d: [n]f64) (vs: [m]f64) (ws: [m]i32) : ([n]f64, [n]i32) =
  (reduce_by_index (copy d) (+) 0 (map (+ 1) (iota m)) vs,
   reduce_by_index (map (\x -> i32.f64 x) d) i32.max i32.lowest (map (\i -> 2 * m - 1 - i) (iota m)) ws)
