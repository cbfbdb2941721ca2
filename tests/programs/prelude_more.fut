-- Futhark prelude functions added after the first list: flatmap, flatmap', partition2, rep,
-- flatten_4d, unflatten_4d, r32/t32/r64/t64, not, and more members of the numeric modules.
-- Expected values worked out by hand (and with a few lines of Python for the derivatives).

-- flatmap with segments of 2, 0, 3 and 1 elements: sizes, flags (true where a nonempty
-- segment starts), offsets, the data, and the per-element values.
-- ==
-- entry: flatmaps
-- input { [2i64, 0i64, 3i64, 1i64] [1.0, 2.0, 3.0, 4.0] }
-- output { [2i64, 0i64, 3i64, 1i64] [true, false, true, false, false, true] [0i64, 2i64, 2i64, 5i64]
--          [1.0, 1.0, 3.0, 3.0, 3.0, 4.0] [2.0, 4.0, 6.0, 8.0] }
-- input { [0i64, 0i64] [1.0, 2.0] }
-- output { [0i64, 0i64] empty([0]bool) [0i64, 0i64] empty([0]f64) [2.0, 4.0] }
entry flatmaps (ks: []i64) (xs: []f64) =
  flatmap (\(k, x) -> (replicate k x, x * 2)) (zip ks xs)

-- Segments of rows (b = [2]i32): 1 -> [[1, 2]], 2 -> [[2, 3], [2, 3]]; and flatmap'.
-- ==
-- entry: flatmap_rows
-- input { [1, 2] } output { [[1, 2], [2, 3], [2, 3]] [1, 2, 2] }
entry flatmap_rows (xs: []i32) : ([][]i32, []i32) =
  let (_, _, _, d, _) = flatmap (\x -> (replicate (i64.i32 x) [x, x + 1], x)) xs
  let (_, _, _, d') = flatmap' (\x -> replicate (i64.i32 x) x) xs
  in (d, d')

-- Derivatives through flatmap: data replicate k (x*x), values x*3. With ks = [1, 0, 2] and
-- xs = [1, 2, 3]: jvp with tangent [1, 1, 1] gives data [2, 6, 6] and values [3, 3, 3]; the
-- vjp of sum data + sum values is k*2x + 3 = [5, 3, 15].
-- ==
-- entry: flatmap_ad
-- input { [1i64, 0i64, 2i64] [1.0, 2.0, 3.0] } output { [2.0, 6.0, 6.0] [3.0, 3.0, 3.0] [5.0, 3.0, 15.0] }
entry flatmap_ad [n] (ks: [n]i64) (xs: [n]f64) : ([]f64, []f64, []f64) =
  let f (ys: [n]f64) =
    let (_, _, _, d, c) = flatmap (\(k, y) -> (replicate k (y * y), y * 3)) (zip ks ys)
    in (d, c)
  let (dd, dc) = jvp f xs (replicate n 1)
  let g ys = let (d, c) = f ys in f64.sum d + f64.sum c
  in (dd, dc, vjp g xs 1)

-- partition2: multiples of 3, then those that are 1 modulo 3, then the rest, each in order.
-- ==
-- entry: partition2s
-- input { [5, 3, 4, 0, 8, 1] } output { [3, 0] [4, 1] [5, 8] }
-- input { empty([0]i32) } output { empty([0]i32) empty([0]i32) empty([0]i32) }
entry partition2s (xs: []i32) : ([]i32, []i32, []i32) =
  partition2 (\x -> x % 3 == 0) (\x -> x % 3 == 1) xs

-- vjp through partition (2 * positives, 3 * the rest) and partition2 (squares weighted 1, 2
-- and 3 for x > 1, x < 0 and the rest): [2, 3, 2, 3] and [2x, 4x, 6x] per class.
-- ==
-- entry: partition_ad
-- input { [1.0, -2.0, 3.0, -0.5] [2.0, -1.0, 0.5, 3.0] } output { [2.0, 3.0, 2.0, 3.0] [4.0, -4.0, 3.0, 6.0] }
entry partition_ad (xs: []f64) (ys: []f64) : ([]f64, []f64) =
  let f zs = let (a, b) = partition (> 0) zs in f64.sum (map (* 2) a) + f64.sum (map (* 3) b)
  let g zs =
    let (a, b, c) = partition2 (> 1) (< 0) zs
    let sq = map (\z -> z * z)
    in f64.sum (sq a) + 2 * f64.sum (sq b) + 3 * f64.sum (sq c)
  in (vjp f xs 1, vjp g ys 1)

-- rep: replicate with the size taken from the context; its derivatives (sum of 4 copies).
-- ==
-- entry: reps
-- input { [1, 2, 3] 2.0 } output { [2, 3, 4] [7, 7] 4.0 4.0 }
entry reps [n] (xs: [n]i32) (x: f64) : ([n]i32, [2]i32, f64, f64) =
  let f (y: f64) = f64.sum (rep y : [4]f64)
  in (map2 (+) xs (rep 1), rep 7, jvp f x 1, vjp f x 1)

-- flatten_4d and unflatten_4d (the sizes must multiply to the length, checked at run time).
-- ==
-- entry: fourd
-- input { 24i64 } output { [0i64, 2i64, 12i64, 14i64] 23i64 [[[[0i64, 1i64], [2i64, 3i64]]]] }
-- input { 23i64 } error: unflatten_4d: the sizes do not match
entry fourd (k: i64) : ([]i64, i64, [1][1][2][2]i64) =
  let a : [2][3][2][2]i64 = unflatten_4d (iota k)
  let b = unflatten_4d (iota 4 :> [1 * 1 * 2 * 2]i64)
  in (flatten_4d a[:, :1, :, :1], (flatten_4d a)[23], b)

-- r32/t32/r64/t64 (conversions truncating toward zero) and not.
-- ==
-- entry: convs
-- input { 3 -3.7f32 -2.5 } output { 3.0f32 -3 3.0 -2 [false, true] }
entry convs (i: i32) (f: f32) (d: f64) : (f32, i32, f64, i32, []bool) =
  (r32 i, t32 f, r64 i, t64 d, map not [true, false])

-- Numeric module members: recip, rsqrt, sinpi, cospi, tanpi, asinpi, acospi, atanpi, atan2pi,
-- to_f64, mad_hi (high half of the product plus c), get_bit/set_bit on floats (on the bits:
-- 0.5f32 is 0x3f000000; 4.0 is 0x4010000000000000, whose bit 52 is set), set_bit on i64.
--   sin(pi/4) = 0.70711, cos(pi/3) = 0.5, atan2(1, -1)/pi = 0.75, asin(0.5)/pi = 1/6,
--   acos(0.5)/pi = 1/3, atan(1)/pi = 0.25, tan(pi/4) = 1;
--   100000 * 100000 = 1e10 = 2 * 2^32 + ..., so mad_hi = 2 + 5 = 7; 200 * 200 = 0x9c40: 156 + 1;
--   i64.set_bit 40 1 1 = 2^40 + 1 = 1099511627777.
-- ==
-- entry: modfns
-- input { 0.5f32 4.0 100000 200u8 }
-- output { 2.0f32 0.5 0.70710678 0.5 1.0 0.75 0.16666667f32 0.33333333 0.25 0.5 7 157u8
--          1 0 -0.5f32 2.0 1099511627777i64 }
entry modfns (x: f32) (y: f64) (a: i32) (b: u8) =
  ( f32.recip x, f64.rsqrt y, f64.sinpi 0.25, f64.cospi (1 / 3), f64.tanpi 0.25
  , f64.atan2pi 1 (-1), f32.asinpi x, f64.acospi 0.5, f64.atanpi 1, f32.to_f64 x
  , i32.mad_hi a a 5, u8.mad_hi b b 1, f32.get_bit 31 (-x), f32.get_bit 23 x, f32.set_bit 31 x 1
  , f64.set_bit 52 y 0, i64.set_bit 40 1 1
  )
