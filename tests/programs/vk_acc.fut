-- Accumulators on the Vulkan backend: reverse-mode AD turns free arrays read inside a `map`
-- into accumulators (`withacc`/`upd_acc`). These entries exercise them over f32 and f64,
-- rows of a two-dimensional array, several free arrays (several accumulators), repeated
-- reads of the same element (updates that must add up), and accumulators passing through
-- loops and ifs at host level.

-- d/dxⱼ Σᵢ y[i]·x[idx[i]] = Σ_{i: idx[i]=j} y[i].
-- ==
-- entry: gather_f64
-- input { [1.0, 2.0, 3.0] [0i64, 2i64, 0i64, 1i64, 0i64] [1.0, 10.0, 100.0, 1000.0, 10000.0] }
-- output { [10101.0, 1000.0, 10.0] }
entry gather_f64 [n][m] (x: [n]f64) (idx: [m]i64) (y: [m]f64) : [n]f64 =
  vjp (\x -> map (\i -> x[i]) idx) x y

-- ==
-- entry: gather_f32
-- input { [1f32, 2f32, 3f32, 4f32] [3i64, 3i64, 1i64] [0.5f32, 0.25f32, 2f32] }
-- output { [0f32, 2f32, 0f32, 0.75f32] }
entry gather_f32 [n][m] (x: [n]f32) (idx: [m]i64) (y: [m]f32) : [n]f32 =
  vjp (\x -> map (\i -> x[i]) idx) x y

-- Rows of a matrix: f(a)ᵢ = Σⱼ a[idx[i]][j]·a[idx[i]][j].
-- ==
-- entry: rows
-- input { [[1.0, 2.0], [3.0, 4.0]] [1i64, 0i64, 1i64] [1.0, 2.0, 3.0] }
-- output { [[4.0, 8.0], [24.0, 32.0]] }
entry rows [n][k][m] (a: [n][k]f64) (idx: [m]i64) (y: [m]f64) : [n][k]f64 =
  vjp (\a -> map (\i -> f64.sum (map (\v -> v * v) a[i])) idx) a y

-- Two free arrays: f(x, z)ᵢ = x[i]·z[(i+1) % n].
-- ==
-- entry: two
-- input { [1.0, 2.0, 3.0] [4.0, 5.0, 6.0] [1.0, 1.0, 2.0] }
-- output { [5.0, 6.0, 8.0] [6.0, 1.0, 2.0] }
entry two [n] (x: [n]f64) (z: [n]f64) (y: [n]f64) : ([n]f64, [n]f64) =
  vjp (\(x, z) -> map (\i -> x[i] * z[(i + 1) % n]) (iota n)) (x, z) y

-- A loop around a map that reads a free array: x ↦ x·c^k elementwise via gathers.
-- ==
-- entry: looped
-- input { [1.0, 2.0] 3i64 [1.0, 1.0] }
-- output { [8.0, 8.0] }
entry looped [n] (x: [n]f64) (k: i64) (y: [n]f64) : [n]f64 =
  vjp (\x -> loop v = x for _i < k do map (\i -> 2.0 * v[i]) (iota n)) x y

-- An if choosing between two maps that read the free array.
-- ==
-- entry: branch
-- input { true [1.0, 2.0, 3.0] [1.0, 1.0, 1.0] }
-- output { [2.0, 4.0, 6.0] }
-- input { false [1.0, 2.0, 3.0] [1.0, 1.0, 1.0] }
-- output { [1.0, 1.0, 1.0] }
entry branch [n] (b: bool) (x: [n]f64) (y: [n]f64) : [n]f64 =
  vjp (\x -> if b then map (\i -> x[i] * x[i]) (iota n) else map (\i -> x[(i + 1) % n]) (iota n)) x y

-- Second order (vjp of vjp): accumulators inside accumulators.
-- ==
-- entry: hess
-- input { [1.0, 2.0, 3.0] [1.0, 1.0, 1.0] [1.0, 0.0, 2.0] }
-- output { [6.0, 0.0, 36.0] }
entry hess [n] (x: [n]f64) (ybar: [n]f64) (v: [n]f64) : [n]f64 =
  vjp (\x -> vjp (\x -> map (\i -> x[i] * x[i] * x[i]) (iota n)) x ybar) x v

-- Empty input: no updates.
-- ==
-- entry: gather_empty
-- input { [1.0, 2.0] empty([0]i64) empty([0]f64) }
-- output { [0.0, 0.0] }
entry gather_empty [n][m] (x: [n]f64) (idx: [m]i64) (y: [m]f64) : [n]f64 =
  vjp (\x -> map (\i -> x[i]) idx) x y
