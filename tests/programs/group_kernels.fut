-- Sequential loops over small parallel operations: on a device their one-thread version is a
-- `segmap` of one point, which the Vulkan backend runs as a group kernel (all invocations of
-- a workgroup share the inner maps, copies and stores; `codegen/group.rs`). Each entry runs
-- such a loop over a different construct in its body.

-- An LSTM-like state update: slices of the state read, then the state updated in place.
-- ==
-- entry: state
-- input { 5i64 [[1f64, 2f64, 3f64], [4f64, 5f64, 6f64]] } output { [[5.177410221761209f64, 5.290554552316791f64, 5.41293768394906f64], [-0.9811896089813308f64, -0.972134884531827f64, -0.9698480165497942f64]] }
entry state [b] (k: i64) (st0: [2][b]f64) : [2][b]f64 =
  loop st = copy st0 for t < k do
    let h = map2 (\x y -> x * 0.5 + y * 0.25 + f64.i64 t) st[0] st[1]
    let c = map (\x -> f64.sin x) h
    in st with [t % 2] = (if t % 2 == 0 then h else c)

-- A two-dimensional state copied and updated element by element; an array literal of rows.
-- ==
-- entry: grid
-- input { 4i64 [[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]] } output { [[0i32, 2i32, 20i32], [30i32, 10i32, 6i32]] [[31i32, 11i32, 7i32], [62i32, 22i32, 14i32]] }
entry grid [n][m] (k: i64) (g0: [n][m]i32) : ([n][m]i32, [2][m]i32) =
  let (g, lit) =
    loop (g, lit) = (copy g0, replicate 2 (replicate m 0)) for t < k do
      let g' = copy g with [t % n, t % m] = i32.i64 t * 10
      let row = map (+ 1) g'[t % n]
      in (g', [row, map (* 2) row])
  in (g, lit)

-- Scans, reductions and a histogram inside the loop body.
-- ==
-- entry: scans
-- input { 3i64 [1i64, 2i64, 3i64, 4i64, 5i64, 6i64, 7i64] } output { [1i64, 5i64, 15i64, 35i64, 70i64, 29i64, 16i64] 322i64 [9i64, 10i64, 13i64, 10i64] }
entry scans [n] (k: i64) (xs0: [n]i64) : ([n]i64, i64, [4]i64) =
  let (xs, s, h) =
    loop (xs, s, h) = (xs0, 0i64, replicate 4 0i64) for t < k do
      let ys = scan (+) 0 xs
      let m = reduce i64.max i64.lowest ys
      let h' = reduce_by_index (copy h) (+) 0 (map (\y -> y % 4) ys) (map (\_ -> t + 1) ys)
      in (map (\y -> y % 97) ys, s + m, h')
  in (xs, s, h)

-- A scatter and an `if` choosing between arrays.
-- ==
-- entry: scatters
-- input { 6i64 [0f32, 1f32, 2f32, 3f32, 4f32] } output { [4.8125f32, 4.75f32, 4.6875f32, 4.625f32, 4.5625f32] }
entry scatters [n] (k: i64) (xs0: [n]f32) : [n]f32 =
  loop xs = copy xs0 for t < k do
    let is = map (\i -> (i * 3 + t) % n) (iota n)
    let ys = scatter (copy xs) is (map (\x -> x + f32.i64 t) xs)
    in if t % 3 == 0 then ys else map (\y -> y * 0.5) ys

-- An inner `map` whose function makes arrays of its own: the group kernel cannot run it
-- distributed (every invocation would take the same scratch memory), so the loop runs as an
-- ordinary one-thread kernel.
-- ==
-- entry: nested
-- input { 3i64 [[1i32, 2i32], [3i32, 4i32], [5i32, 6i32]] } output { [[12i32, 33i32], [28i32, 73i32], [44i32, 113i32]] }
entry nested [n][m] (k: i64) (a0: [n][m]i32) : [n][m]i32 =
  loop a = a0 for t < k do
    map (\row -> let s = scan (+) 0 row in map2 (\x y -> x + y + i32.i64 t) s row) a

-- The gradient of a loop over small maps (the reverse sweep is such a loop too).
-- ==
-- entry: grad
-- input { 4i64 [0.5f64, -0.25f64, 1f64] } output { [0.5816585304534669f64, 7.79236921802489e-3f64, 0.7954165853040226f64] }
entry grad [b] (k: i64) (w: [b]f64) : [b]f64 =
  let f (w: [b]f64) =
    let h = loop h = replicate b 1f64 for _t < k do map2 (\x y -> f64.tanh (x * y + 0.1)) h w
    in f64.sum h
  in vjp f w 1f64

-- Reductions inside the loop: shared by the workgroup (each invocation folds a contiguous
-- chunk; partial results are combined in order), with a commutative operator and with an
-- associative one that is not (composition of affine maps x -> a x + b), over more elements
-- than a workgroup has invocations.
-- ==
-- entry: reductions
-- input { 3i64 [1i64, 2i64, 3i64, -1i64, 2i64, 1i64, 0i64, 3i64, 1i64, 2i64, -2i64, 1i64, 1i64, 2i64, 3i64, 1i64, 2i64, -1i64, 1i64, 2i64] } output { 144i64 923687i64 958403i64 }
entry reductions [n] (k: i64) (xs: [n]i64) : (i64, i64, i64) =
  loop (s, a, b) = (0i64, 1i64, 0i64) for t < k do
    let ys = map (\x -> x + t) xs
    let m = reduce i64.max i64.lowest ys
    let (a', b') =
      reduce (\(a1, b1) (a2, b2) -> (a1 * a2 % 1000003, (b1 * a2 + b2) % 1000003)) (1i64, 0i64)
             (map (\y -> (y % 5 + 1, y)) ys)
    in (s + m + reduce (+) 0 ys, (a * a') % 1000003, (b * a' + b') % 1000003)

-- An inner loop over the outer state runs in the state's memory only where nothing reads the
-- state after it: here the old state is a result too.
-- ==
-- entry: keep_init
-- input { 3i64 [1i64, 2i64, 3i64] } output { [12i64, 20i64, 28i64] [5i64, 9i64, 13i64] }
entry keep_init [n] (k: i64) (xs0: [n]i64) : ([n]i64, [n]i64) =
  loop (xs, _prev) = (copy xs0, copy xs0) for t < k do
    let zs = loop zs = xs for i < n do zs with [i] = zs[i] * 2 + t
    in (zs, xs)

-- Reductions of special values inside the loop body: NaN, infinities and signed zeros, where
-- IEEE arithmetic fixes the result whatever the order of combination. The group kernel
-- combines its invocations' partial results in a tree (another order than the interpreter's)
-- and must give the same results: NaN through a sum, +inf through a sum of +inf and finite
-- values, the finite sum exactly (small integers), the minimum and maximum of a row with NaN
-- and both infinities, and the signs of zeros (seen through 1/x) from a sum of negative zeros
-- (+0: the neutral element is +0), a maximum of negative zeros (-0) and a product of zeros
-- (the parity of the negative ones).
-- ==
-- entry: specials
-- input { 3i64 [1.0, -0.0, f64.nan, f64.inf, 2.0, -0.0, -3.0, 0.0, 5.0, -f64.inf, 7.0, 0.0, -2.0, 4.0, 1.0, -1.0, 8.0, 3.0, -0.0, 6.0] }
-- output { [-f64.inf, 7.0, 0.0, -2.0, 4.0, 1.0, -1.0, 8.0, 3.0, -0.0, 6.0, 1.0, -0.0, f64.nan, f64.inf, 2.0, -0.0, -3.0, 0.0, 5.0] f64.nan 31.0 f64.inf f64.inf -f64.inf f64.inf -f64.inf -f64.inf }
entry specials [n] (k: i64) (xs0: [n]f64) : ([n]f64, f64, f64, f64, f64, f64, f64, f64, f64) =
  let zero = 0f64
  let nzero = f64.neg zero
  in loop (xs, s, sf, si, mx, mn, zs, zm, zp) = (xs0, 0, 0, 0, 0, 0, 0, 0, 0) for _t < k do
       let fin = map (\x -> if f64.isnan x || f64.isinf x then 0 else x) xs
       let pinf = map (\x -> if f64.isnan x || x == -f64.inf then 1 else x) xs
       let zeros = map (\x -> if x == 0 then x else 1) xs
       in (map (\i -> xs[(i + 3) % n]) (iota n),
           f64.sum xs,
           f64.sum fin,
           f64.sum pinf,
           f64.maximum xs,
           f64.minimum xs,
           1 / f64.sum (map (\_ -> nzero) xs),
           1 / f64.maximum (map (\_ -> nzero) xs),
           1 / f64.product zeros)
