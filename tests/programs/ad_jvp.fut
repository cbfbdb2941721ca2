-- Forward-mode AD: `jvp f x dx` is the derivative of `f` at `x` along `dx`; `jvp2` also
-- returns `f x`. Expected values are worked out by hand.

-- d/dx x³ = 3x²: 12 at 2.
-- ==
-- entry: cube
-- input { 2.0 } output { 12.0 }
-- input { -1.0 } output { 3.0 }
entry cube (x: f64) = jvp (\x -> x * x * x) x 1.0

-- ln x1 + x1·x2 − sin x2 at (2, 5) along (1, 0): 1/x1 + x2 = 5.5.
-- ==
-- entry: two_args
-- input { 2.0 5.0 1.0 0.0 } output { 5.5 }
-- input { 2.0 0.0 0.0 1.0 } output { 1.0 }
entry two_args (x1: f64) (x2: f64) (d1: f64) (d2: f64) =
  jvp (\(a, b) -> f64.log a + a * b - f64.sin b) (x1, x2) (d1, d2)

-- ==
-- entry: primal_and_tangent
-- input { 3.0 } output { 9.0 6.0 }
entry primal_and_tangent (x: f64) = jvp2 (\x -> x * x) x 1

-- sin' 0 = 1, exp' 0 = 1, log' 2 = 0.5, sqrt' 4 = 0.25, floor' = 0, tanh' 0 = 1.
-- ==
-- entry: math
-- input { } output { 1.0 1.0 0.5 0.25 0.0 1.0 }
entry math =
  ( jvp f64.sin 0 1,
    jvp f64.exp 0 1,
    jvp f64.log 2 1,
    jvp f64.sqrt 4 1,
    jvp f64.floor 2.5 1,
    jvp f64.tanh 0 1 )

-- ==
-- entry: squares
-- input { [1.0, 2.0, 3.0] [1.0, 1.0, 1.0] } output { [2.0, 4.0, 6.0] }
entry squares (xs: []f64) (dxs: []f64) = jvp (map (\a -> a * a)) xs dxs

-- ==
-- entry: nested
-- input { [[1.0, 2.0], [3.0, 4.0]] [[1.0, 0.0], [0.0, 1.0]] }
-- output { [[2.0, 0.0], [0.0, 8.0]] }
entry nested (xss: [][]f64) (dxss: [][]f64) = jvp (map (map (\a -> a * a))) xss dxss

-- Σ x²: 2·1 + 2·2 + 2·3 = 12. Product [2, 3, 4]: 3·4 + 2·4 + 2·3 = 26. Max picks x[1].
-- ==
-- entry: reductions
-- input { [1.0, 2.0, 3.0] [1.0, 1.0, 1.0] } output { 12.0 }
entry reductions (xs: []f64) (dxs: []f64) = jvp (\xs -> f64.sum (map (\a -> a * a) xs)) xs dxs

-- ==
-- entry: product
-- input { [2.0, 3.0, 4.0] [1.0, 1.0, 1.0] } output { 26.0 }
entry product (xs: []f64) (dxs: []f64) = jvp (reduce (*) 1) xs dxs

-- ==
-- entry: maximum
-- input { [1.0, 5.0, 3.0] [1.0, 2.0, 3.0] } output { 2.0 }
entry maximum (xs: []f64) (dxs: []f64) = jvp (reduce f64.max (-f64.inf)) xs dxs

-- scan (*) over [2, 0, 4] along ones: [1, 2 + 0·1... ] = [1, 2, 8].
-- ==
-- entry: scan_mul
-- input { [2.0, 0.0, 4.0] [1.0, 1.0, 1.0] } output { [1.0, 2.0, 8.0] }
entry scan_mul (xs: []f64) (dxs: []f64) = jvp (scan (*) 1) xs dxs

-- ==
-- entry: histogram
-- input { [1.0, 2.0, 3.0] [1.0, 10.0, 100.0] } output { [101.0, 10.0, 0.0] }
entry histogram (xs: []f64) (dxs: []f64) = jvp (\xs -> hist (+) 0 3 [0, 1, 0] xs) xs dxs

-- Index 1 is written twice (the later write, 2·x[1], wins); index 5 is out of bounds.
-- ==
-- entry: scatter2
-- input { [1.0, 2.0, 3.0] [1.0, 2.0, 3.0] } output { [0.0, 4.0, 0.0] }
entry scatter2 (xs: []f64) (dxs: []f64) =
  jvp (\xs -> scatter (replicate 3 0) [1, 1, 5] (map (* 2) xs)) xs dxs

-- x⁸: 8x⁷ = 0.0625 at 0.5.
-- ==
-- entry: for_loop
-- input { 0.5 } output { 0.0625 }
entry for_loop (x: f64) = jvp (\x -> loop y = x for _i < 3 do y * y) x 1

-- 3 → 6 → 12: the result is 4x, derivative 4.
-- ==
-- entry: while_loop
-- input { 3.0 } output { 4.0 }
entry while_loop (x: f64) = jvp (\x -> loop y = x while y < 10 do y * 2) x 1

-- ==
-- entry: branch
-- input { 3.0 } output { 6.0 }
-- input { -2.0 } output { -1.0 }
entry branch (x: f64) = jvp (\x -> if x > 0 then x * x else -x) x 1

-- ==
-- entry: update
-- input { [2.0, 3.0, 4.0] [1.0, 1.0, 1.0] } output { [1.0, 6.0, 1.0] }
entry update (xs: []f64) (dxs: []f64) = jvp (\xs -> copy xs with [1] = xs[0] * xs[2]) xs dxs

-- ==
-- entry: slices
-- input { [2.0, 3.0, 4.0] [1.0, 2.0, 3.0] } output { [2.0, 3.0, 3.0, 2.0, 1.0] }
entry slices (xs: []f64) (dxs: []f64) = jvp (\xs -> xs[1:3] ++ reverse xs) xs dxs

-- Integers are differentiated formally, as Futhark does.
-- ==
-- entry: integer
-- input { 3i32 } output { 6i32 }
entry integer (x: i32) = jvp (\x -> x * x) x 1

-- Second derivative by nesting: (x³)'' = 6x.
-- ==
-- entry: second
-- input { 2.0 } output { 12.0 }
entry second (x: f64) = jvp (\x -> jvp (\y -> y * y * y) x 1) x 1

-- jvp inside a map: the derivative of sin at each element.
-- ==
-- entry: in_map
-- input { [0.0, 1.0] } output { [1.0, 0.5403023058681398] }
entry in_map (xs: []f64) = map (\x -> jvp f64.sin x 1) xs

-- As in Futhark, conversions carry the tangent, float → int included, and `to_bits`
-- reinterprets it: 1.0f32 has the bits 0x3f800000 = 1065353216.
-- ==
-- entry: conv_tangents
-- input { 1.5f64 2.0f32 } output { 1i32 1065353216u32 }
entry conv_tangents (x: f64) (y: f32) : (i32, u32) =
  (jvp i32.f64 x 1, jvp f32.to_bits y 1)

-- jmp/jmp2: one jvp per seed. f (x, y) = x*y + x; its Jacobian at (2, 3) is [y + 1, x] = [4, 2];
-- the seeds (1, 0), (0, 1), (1, 1) give 4, 2 and 6; f (2, 3) = 8.
-- ==
-- entry: batch
-- input { 2.0 3.0 } output { [4.0, 2.0, 6.0] 8.0 [4.0, 2.0, 6.0] }
entry batch (x: f64) (y: f64) : ([]f64, f64, []f64) =
  let f (a, b) = a * b + a
  let seeds = [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
  let (fx, ts) = jmp2 f (x, y) seeds
  in (jmp f (x, y) seeds, fx, ts)
