-- Accumulators inside kernels: reverse-mode AD of a `map` reading a free array inside a loop
-- or a nested `map` keeps its `withacc` (the adjoint of the free array) where neither
-- `acc_to_hist` nor `acc_to_reduce` can rewrite it. Inside an outer `map` the flattener keeps
-- that `withacc` as sequential code of each thread (per-thread accumulators); at host level its
-- accumulator is updated atomically from a kernel, and `jvp` of `vjp` makes accumulators of two
-- arrays (value and tangent) whose operator adds each component on its own.
-- Expected values worked out by hand (comments give the derivatives).

-- f(x)_j = Σ_{i<3} (i+1)·x[(j+i) % n] for j in `is`: the adjoint adds s_j·(i+1) at (j+i) % n.
-- Row 1: j=0 → 1,2,3 at 0,1,2; j=2 → 10,20,30 at 2,3,0; j=3 → 100,200,300 at 3,0,1.
-- ==
-- entry: loop_reads
-- input { [1.0, 2.0, 3.0, 4.0] [0i64, 2i64, 3i64] [[1.0, 10.0, 100.0], [2.0, 3.0, 4.0]] }
-- output { [[231.0, 302.0, 13.0, 120.0], [19.0, 16.0, 9.0, 10.0]] }
-- input { [1.0] empty([0]i64) empty([2][0]f64) }
-- output { [[0.0], [0.0]] }
entry loop_reads [n][m][k] (x: [n]f64) (is: [m]i64) (s: [k][m]f64) : [k][n]f64 =
  map (\sr -> vjp (\x -> map (\j -> loop a = 0f64 for i < 3 do a + x[(j + i) % n] * f64.i64 (i + 1)) is) x sr) s

-- f(x)_j = x_j² + x_{j+1}·x_j (indices mod n), read in a nested `map`: the adjoint adds
-- s_j·(2x_j + x_{j+1}) at j and s_j·x_j at j+1. The inner `map` returns arrays besides the
-- accumulator.
-- ==
-- entry: nested
-- input { [1.0, 2.0, 3.0, 4.0] [0i64, 2i64, 3i64] [[1.0, 10.0, 100.0], [2.0, 3.0, 4.0]] }
-- output { [[404.0, 1.0, 100.0, 930.0], [24.0, 2.0, 30.0, 45.0]] }
entry nested [n][m][k] (x: [n]f64) (is: [m]i64) (s: [k][m]f64) : [k][n]f64 =
  map (\sr -> vjp (\x -> map (\j -> f64.sum (map (\i -> x[(j + i) % n] * x[j % n]) (iota 2))) is) x sr) s

-- f(x)_i = x_a·x_b with a = i, b = (i+1) % n (a loop of two steps): the Hessian-vector product
-- along dx adds s_i·dx_b at a and s_i·dx_a at b. Per-thread accumulators of two arrays.
-- ==
-- entry: hvp_rows
-- input { [1.0, 2.0, 3.0] [0i64, 2i64, 0i64, 1i64] [[1.0, 10.0, 100.0, 1000.0], [2.0, 3.0, 4.0, 5.0]] [1.0, 0.5, -1.0] }
-- output { [[40.5, -899.0, 510.0], [0.0, 1.0, 5.5]] }
entry hvp_rows [n][k][m] (x: [n]f64) (is: [m]i64) (s: [k][m]f64) (dx: [n]f64) : [k][n]f64 =
  map (\sr -> jvp (\x -> vjp (\x -> map (\i -> loop a = 1 for j < 2 do a * x[(i + j) % n]) is) x sr) x dx) s

-- The same at host level: the gradient (s_i·x_b at a, s_i·x_a at b) and its tangent, from one
-- kernel updating a host accumulator of two arrays.
-- ==
-- entry: hvp_host
-- input { [1.0, 2.0, 3.0] [0i64, 2i64, 0i64, 1i64] [1.0, 10.0, 100.0, 1000.0] [1.0, 0.5, -1.0] }
-- output { [232.0, 3101.0, 2010.0] [40.5, -899.0, 510.0] }
entry hvp_host [n][m] (x: [n]f64) (is: [m]i64) (s: [m]f64) (dx: [n]f64) : ([n]f64, [n]f64) =
  jvp2 (\x -> vjp (\x -> map (\i -> loop a = 1 for j < 2 do a * x[(i + j) % n]) is) x s) x dx

-- In f32 (atomic float addition per component where the device has it).
-- ==
-- entry: hvp_host32
-- input { [1f32, 2f32, 3f32] [0i64, 2i64, 0i64, 1i64] [1f32, 10f32, 100f32, 1000f32] [1f32, 0.5f32, -1f32] }
-- output { [232f32, 3101f32, 2010f32] [40.5f32, -899f32, 510f32] }
entry hvp_host32 [n][m] (x: [n]f32) (is: [m]i64) (s: [m]f32) (dx: [n]f32) : ([n]f32, [n]f32) =
  jvp2 (\x -> vjp (\x -> map (\i -> loop a = 1 for j < 2 do a * x[(i + j) % n]) is) x s) x dx
