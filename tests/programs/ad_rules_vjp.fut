-- The worked cases of the AD rules digest (design/ad-rules.md §7), in reverse mode: `vjp f x ȳ`
-- is the adjoint of `x`, `vjp2` also returns `f x`. Until reverse mode lands, the interpreter
-- skips these (`not supported: vjp of ...`); the AD oracle (`-b oracle`) checks them now.

-- Scalar: f(x1, x2) = ln x1 + x1·x2 − sin x2 at (2, 5): y = 11.652, x̄ = (5.5, 2 − cos 5).
-- ==
-- entry: scalar
-- input { 2.0 5.0 } output { 11.652071455223084 5.5 1.7163378145367738 }
entry scalar (x1: f64) (x2: f64) =
  let (y, (a1, a2)) = vjp2 (\(a, b) -> f64.log a + a * b - f64.sin b) (x1, x2) 1
  in (y, a1, a2)

-- Reduce with `*`, ȳ = 1 (no division on the zero paths).
-- ==
-- entry: reduce_mul
-- input { [2.0, 3.0, 4.0] } output { 24.0 [12.0, 8.0, 6.0] }
-- input { [2.0, 0.0, 4.0] } output { 0.0 [0.0, 8.0, 0.0] }
-- input { [0.0, 3.0, 0.0] } output { 0.0 [0.0, 0.0, 0.0] }
-- input { [5.0] } output { 5.0 [1.0] }
entry reduce_mul (xs: []f64) = vjp2 (\xs -> reduce (*) 1 xs) xs 1

-- Reduce with `min`: the lowest index wins ties.
-- ==
-- entry: reduce_min
-- input { [3.0, 1.0, 2.0, 1.0] } output { [0.0, 1.0, 0.0, 0.0] }
-- input { [2.0, 2.0, 2.0] } output { [1.0, 0.0, 0.0] }
entry reduce_min (xs: []f64) = vjp (\xs -> reduce f64.min f64.inf xs) xs 1

-- Vectorised reduce `map2 (*)`.
-- ==
-- entry: reduce_vec
-- input { [[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]] [1.0, 1.0] }
-- output { [0.0, 0.0] [[0.0, 0.0], [4.0, 0.0], [0.0, 6.0]] }
entry reduce_vec [n] (xss: [][n]f64) (ybar: [n]f64) =
  vjp2 (\xss -> reduce (map2 (*)) (replicate n 1) xss) xss ybar

-- Scan of linear functions (α,β)⊙(α',β') = (αα', α'β+β'), e = (1,0).
-- ==
-- entry: scan_linear
-- input { [2.0, 3.0, 0.5] [1.0, -1.0, 4.0] [1.0, 0.0, 1.0] [0.0, 1.0, 1.0] }
-- output { [2.0, 6.0, 3.0] [1.0, 2.0, 5.0] [2.5, 2.5, 8.0] [4.5, 1.5, 1.0] }
entry scan_linear [n] (as: [n]f64) (bs: [n]f64) (ca: [n]f64) (cb: [n]f64) =
  let f (as, bs) =
    unzip (scan (\(a, b) (a', b') -> (a * a', a' * b + b')) (1, 0) (zip as bs))
  let ((xa, xb), (aa, ab)) = vjp2 f (as, bs) (ca, cb)
  in (xa, xb, aa, ab)

-- Scan of 2×2 matrix products (row-major (a, b, c, d)), X ⊙ Y = X·Y.
-- ==
-- entry: scan_matrix
-- input { [[1.0, 2.0, 0.0, 1.0], [2.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 3.0]]
--         [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]] }
-- output { [[3.0, 6.0, 2.0, 5.0], [1.0, 5.0, 3.0, 14.0], [5.0, 5.0, 3.0, 3.0]] }
entry scan_matrix [n] (ms: [n][4]f64) (cs: [n][4]f64) =
  let mul (a, b, c, d) (e, f, g, h) = (a * e + b * g, a * f + b * h, c * e + d * g, c * f + d * h)
  let to4 (m: [4]f64) = (m[0], m[1], m[2], m[3])
  let of4 (a, b, c, d) : [4]f64 = [a, b, c, d]
  let f (ms: [n][4]f64) = map of4 (scan mul (1, 0, 0, 1) (map to4 ms))
  in vjp f ms cs

-- reduce_by_index, is = [0,1,2,1,1,0,−1,4], w = 4, ȳ = [1,2,3,4]: results y, h̄, ā.
-- ==
-- entry: hist_add
-- input { [10.0, 20.0, 30.0, 40.0] [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] }
-- output { [19.0, 30.0, 36.0, 40.0] [1.0, 2.0, 3.0, 4.0] [1.0, 2.0, 3.0, 2.0, 2.0, 1.0, 0.0, 0.0] }
entry hist_add (h: [4]f64) (as: [8]f64) =
  let is = [0, 1, 2, 1, 1, 0, -1, 4]
  let (y, (hb, ab)) =
    vjp2 (\(h, as) -> reduce_by_index (copy h) (+) 0 is as) (h, as) [1, 2, 3, 4]
  in (y, hb, ab)

-- ==
-- entry: hist_mul
-- input { [2.0, 0.5, -1.0, 3.0] [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] }
-- output { [16.0, 15.0, -6.0, 3.0] [8.0, 60.0, 18.0, 4.0] [16.0, 15.0, -3.0, 10.0, 6.0, 2.0, 0.0, 0.0] }
-- input { [2.0, 0.5, -1.0, 3.0] [0.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] }
-- output { [0.0, 15.0, -6.0, 3.0] [0.0, 60.0, 18.0, 4.0] [16.0, 15.0, -3.0, 10.0, 6.0, 0.0, 0.0, 0.0] }
-- input { [2.0, 0.5, -1.0, 3.0] [1.0, 0.0, 6.0, 3.0, 0.0, 8.0, 7.0, 9.0] }
-- output { [16.0, 0.0, -6.0, 3.0] [8.0, 0.0, 18.0, 4.0] [16.0, 0.0, -3.0, 0.0, 0.0, 2.0, 0.0, 0.0] }
entry hist_mul (h: [4]f64) (as: [8]f64) =
  let is = [0, 1, 2, 1, 1, 0, -1, 4]
  let (y, (hb, ab)) =
    vjp2 (\(h, as) -> reduce_by_index (copy h) (*) 1 is as) (h, as) [1, 2, 3, 4]
  in (y, hb, ab)

-- A generic operator x ⊙ y = x + y + xy (neutral 0).
-- ==
-- entry: hist_generic
-- input { [0.5, 1.0, -0.5, 2.0] [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] }
-- output { [26.0, 143.0, 2.5, 2.0] [18.0, 144.0, 21.0, 4.0] [13.5, 96.0, 1.5, 72.0, 48.0, 3.0, 0.0, 0.0] }
-- input { [0.5, 1.0, -0.5, 2.0] [1.0, -1.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0] }
-- output { [26.0, -1.0, 2.5, 2.0] [18.0, 0.0, 21.0, 4.0] [13.5, 96.0, 1.5, 0.0, 0.0, 3.0, 0.0, 0.0] }
entry hist_generic (h: [4]f64) (as: [8]f64) =
  let is = [0, 1, 2, 1, 1, 0, -1, 4]
  let op x y = x + y + x * y
  let (y, (hb, ab)) =
    vjp2 (\(h, as) -> reduce_by_index (copy h) op 0 is as) (h, as) [1, 2, 3, 4]
  in (y, hb, ab)

-- `max`: equal values go to the lower index, and the histogram's own value wins ties.
-- ==
-- entry: hist_max
-- input { [8.0, 0.0, 1.0, 7.0] [1.0, 2.0, 6.0, 5.0, 5.0, 8.0, 7.0, 9.0] }
-- output { [8.0, 5.0, 6.0, 7.0] [1.0, 0.0, 0.0, 4.0] [0.0, 0.0, 3.0, 2.0, 0.0, 0.0, 0.0, 0.0] }
entry hist_max (h: [4]f64) (as: [8]f64) =
  let is = [0, 1, 2, 1, 1, 0, -1, 4]
  let (y, (hb, ab)) =
    vjp2 (\(h, as) -> reduce_by_index (copy h) f64.max (-f64.inf) is as) (h, as) [1, 2, 3, 4]
  in (y, hb, ab)

-- Scatter with duplicate indices: later writes win; out-of-range indices are ignored.
-- ==
-- entry: scatter_dups
-- input { [0.0, 0.0, 0.0] [10.0, 20.0, 30.0] }
-- output { [0.0, 20.0, 0.0] [1.0, 0.0, 3.0] [0.0, 2.0, 0.0] }
entry scatter_dups (dst: [3]f64) (vs: [3]f64) =
  let (y, (db, vb)) =
    vjp2 (\(dst, vs) -> scatter (copy dst) [1, 1, 5] vs) (dst, vs) [1, 2, 3]
  in (y, db, vb)

-- Reads from a free array inside a map: disjoint (2i, 2i+1) and shared (i/2) indices.
-- ==
-- entry: gather_disjoint
-- input { [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] } output { [1.0, 1.0, 2.0, 2.0, 3.0, 3.0] }
entry gather_disjoint (x: [6]f64) =
  vjp (\x -> map (\i -> x[2 * i] + x[2 * i + 1]) (iota 3)) x [1, 2, 3]

-- ==
-- entry: gather_shared
-- input { [1.0, 2.0, 3.0] } output { [3.0, 7.0, 11.0] }
entry gather_shared (x: [3]f64) =
  vjp (\x -> map (\i -> x[i / 2]) (iota 6)) x [1, 2, 3, 4, 5, 6]

-- Address inversion (004): j = 1; while j < 6 { k = j+1; j = k+2; a[j] = a[k]·a[j] },
-- loss a[4] + a[7].
-- ==
-- entry: while_updates
-- input { [0.0, 0.0, 2.0, 0.0, 3.0, 5.0, 0.0, 7.0] }
-- output { [0.0, 0.0, 3.0, 0.0, 2.0, 7.0, 0.0, 5.0] }
entry while_updates (a: [8]f64) =
  let loss (a: [8]f64) =
    let (a, _) =
      loop (a, j) = (copy a, 1) while j < 6 do
        let k = j + 1
        let j = k + 2
        in (a with [j] = a[k] * a[j], j)
    in a[4] + a[7]
  in vjp loss a 1
