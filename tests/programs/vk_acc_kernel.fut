-- Gradients whose accumulators are updated inside loops in a `map` (reads of a free array in a
-- loop body): on Vulkan the map runs as one kernel with atomic accumulator updates
-- (spirv-backend/src/codegen/acc.rs): f32 `+` with the device's float atomic where it has one,
-- f64 `+` by compare-exchange (lavapipe). Each entry is a dot-product test
-- ⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩ (forward mode has no accumulators) at sizes up to many workgroups.

-- A stencil: linear in x, three reads per element through a loop.
def stencil [n] (x: [n]f64) : [n]f64 =
  map (\i -> loop s = 0 for j < 3 do s + x[(i + j) % n] * f64.i64 (j + 1)) (iota n)

-- Nonlinear loop: the return sweep needs the loop's per-iteration values (per-thread arrays).
def powers [n] (x: [n]f64) : [n]f64 =
  map (\i -> loop s = x[i] for j < 4 do s * x[(i + j + 1) % n] + 1) (iota n)

-- A while loop and a branch around the read.
def branchy [n] (x: [n]f64) : [n]f64 =
  map (\i ->
         let (_, s) =
           loop (j, s) = (0, 0) while j < i % 5 do
             (j + 1, if (i + j) % 2 == 0 then s + x[(i * 3 + j) % n] else s - 2 * x[j % n])
         in s)
      (iota n)

def stencil32 [n] (x: [n]f32) : [n]f32 =
  map (\i -> loop s = 0 for j < 3 do s + x[(i + 2 * j) % n] * f32.i64 (j + 1)) (iota n)

def inputs (n: i64) : ([n]f64, [n]f64, [n]f64) =
  ( map (\i -> f64.i64 (i % 17) / 8 + 0.5) (iota n)
  , map (\i -> f64.i64 (i % 5) - 2) (iota n)
  , map (\i -> f64.i64 (i % 7) / 3) (iota n) )

def dot [n] (f: [n]f64 -> [n]f64) (x: [n]f64) (xd: [n]f64) (yb: [n]f64) : bool =
  let lhs = f64.sum (map2 (*) yb (jvp f x xd))
  let rhs = f64.sum (map2 (*) (vjp f x yb) xd)
  in f64.abs (lhs - rhs) <= 1e-9 * (1 + f64.abs lhs)

-- ==
-- entry: stencil_dot powers_dot branchy_dot
-- input { 1i64 } output { true }
-- input { 7i64 } output { true }
-- input { 1000i64 } output { true }
-- input { 20000i64 } output { true }
entry stencil_dot (n: i64) : bool = let (x, xd, yb) = inputs n in dot stencil x xd yb
entry powers_dot (n: i64) : bool = let (x, xd, yb) = inputs n in dot powers x xd yb
entry branchy_dot (n: i64) : bool = let (x, xd, yb) = inputs n in dot branchy x xd yb

-- Rows of a free matrix read in a loop: each row's adjoint is added by an inner map of
-- element updates, run in order inside the thread.
def rows_f [n][m] (xss: [n][m]f64) : [n]f64 =
  map (\i -> loop s = 0 for j < 2 do s + f64.sum (map (\x -> x * x) xss[(i + j) % n])) (iota n)

-- ==
-- entry: rows_dot
-- input { 1i64 1i64 } output { true }
-- input { 300i64 7i64 } output { true }
-- input { 5000i64 3i64 } output { true }
entry rows_dot (n: i64) (m: i64) : bool =
  let x = map (\i -> map (\j -> f64.i64 ((i * 31 + j) % 17) / 8 - 1) (iota m)) (iota n)
  let xd = map (\i -> map (\j -> f64.i64 ((i + 2 * j) % 5) - 2) (iota m)) (iota n)
  let yb = map (\i -> f64.i64 (i % 7) / 3) (iota n)
  let lhs = f64.sum (map2 (*) yb (jvp rows_f x xd))
  let rhs = f64.sum (map2 (\a b -> f64.sum (map2 (*) a b)) (vjp rows_f x yb) xd)
  in f64.abs (lhs - rhs) <= 1e-9 * (1 + f64.abs lhs)

-- ==
-- entry: stencil32_dot
-- input { 5i64 } output { true }
-- input { 20000i64 } output { true }
entry stencil32_dot (n: i64) : bool =
  let x = map (\i -> f32.i64 (i % 17) / 8 + 0.5) (iota n)
  let xd = map (\i -> f32.i64 (i % 5) - 2) (iota n)
  let yb = map (\i -> f32.i64 (i % 7) / 4) (iota n)
  let lhs = f32.sum (map2 (*) yb (jvp stencil32 x xd))
  let rhs = f32.sum (map2 (*) (vjp stencil32 x yb) xd)
  in f32.abs (lhs - rhs) <= 1e-4 * (1 + f32.abs lhs)

-- The gradient itself, small enough to write down: x̄[k] = Σ_j (j+1)·ȳ[(k-j) mod n].
-- ==
-- entry: stencil_grad
-- input { [1.0, 2.0, 3.0, 4.0, 5.0] [1.0, 0.0, 0.0, 0.0, 2.0] }
-- output { [5.0, 8.0, 3.0, 0.0, 2.0] }
entry stencil_grad [n] (x: [n]f64) (yb: [n]f64) : [n]f64 = vjp stencil x yb
