-- Size bindings in `let`: `let [n] (xs: [n]t) = e` binds `n` to the size of `e`, usable as a
-- value and in types. Expected values worked out by hand.

-- filter (> 0) [1, -2, 3] = [1, 3]: n = 2.
-- ==
-- entry: one
-- input { [1, -2, 3] } output { 2i64 [0i64, 1i64] }
-- input { [-1] } output { 0i64 empty([0]i64) }
entry one (xs: []i32) : (i64, []i64) =
  let [n] (ys: [n]i32) = filter (> 0) xs
  in (n, iota n)

-- Two sizes, used in a type: [[1, 2, 0], [-3, 4, 5]] is 2 by 3, its transpose 3 by 2.
-- ==
-- entry: two
-- input { [[1f32, 2f32, 0f32], [-3f32, 4f32, 5f32]] }
-- output { 2i64 3i64 [[1f32, -3f32], [2f32, 4f32], [0f32, 5f32]] }
entry two (xss: [][]f32) : (i64, i64, [][]f32) =
  let [n][m] (yss: [n][m]f32) = xss
  let zs : [m][n]f32 = transpose yss
  in (n, m, zs)

-- A size shared by a tuple's components: k = 3; take (k - 1) of the pairs.
-- ==
-- entry: tuple
-- input { [1, -2, 3] } output { [1, -2] [2, -4] }
entry tuple (xs: []i32) : ([]i32, []i32) =
  let [k] ((a, b): ([k]i32, [k]i32)) = (xs, map (* 2) xs)
  in unzip (take (k - 1) (zip a b))

-- The size in a later size inference: unflatten with the bound sizes; and under `vjp`
-- (d/dx of sum (x * x) is 2x).
-- ==
-- entry: sized_ad
-- input { [1.0, 2.0, 3.0, 4.0] } output { [[1.0, 2.0], [3.0, 4.0]] [2.0, 4.0, 6.0, 8.0] }
entry sized_ad (xs: []f64) : ([][]f64, []f64) =
  let [n] (ys: [n]f64) = xs
  let h = n / 2
  let m : [h][2]f64 = unflatten (ys :> [h * 2]f64)
  in (m, vjp (\zs -> let [k] (ws: [k]f64) = zs in f64.sum (map (\w -> w * w) ws)) xs 1.0)
