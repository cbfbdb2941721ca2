-- Special values and argument ranges of the f32 transcendental functions (and `hypot`) in
-- kernels, bool and integer conversions the driver can fold, and sign extension: the programs
-- tests/tests/random_programs.rs found wrong on lavapipe (see its "Fixed bugs"). Every operation
-- runs inside a `map`, so on the device with `-b vulkan`; the expected values are libm's (the
-- interpreter's), compared with `vkad test`'s tolerance (special values exactly). Cases with
-- subnormal arguments or results are tagged `needs_denorm_f32` (NVIDIA's driver flushes them).

-- ==
-- entry: hypot32
-- input { [f32.nan, 0f32, -0f32, f32.nan, f32.inf, -f32.inf, 3f32, 0f32]
--   [0f32, f32.nan, f32.nan, f32.inf, f32.nan, 1f32, -4f32, 0f32] }
-- output { [f32.nan, f32.nan, f32.nan, f32.inf, f32.inf, f32.inf, 5.0f32, 0.0f32] }
-- needs_denorm_f32 input { [1e-40f32]
--   [1e-40f32] }
-- output { [1.4142e-40f32] }
entry hypot32 (xs: []f32) (ys: []f32) = map2 f32.hypot xs ys

-- ==
-- entry: hypot64
-- input { [f64.nan, 0f64, f64.inf, -f64.inf, 3f64] [0f64, f64.nan, f64.nan, 1f64, -4f64] }
-- output { [f64.nan, f64.nan, f64.inf, f64.inf, 5.0f64] }
entry hypot64 (xs: []f64) (ys: []f64) = map2 f64.hypot xs ys

-- ==
-- entry: atan2_32
-- input { [0f32, 0f32, -0f32, -0f32, 1f32, f32.inf, f32.inf, -f32.inf, 2f32, -2f32, -3f32,
--     f32.nan, 1f32, -1e-30f32]
--   [0f32, -0f32, 0f32, -0f32, 1f32, f32.inf, -f32.inf, 1f32, -3f32, 0.5f32, -1e-30f32, 1f32,
--     f32.nan, 1f32] }
-- output { [0.0f32, 3.1415927f32, -0.0f32, -3.1415927f32, 0.7853982f32, 0.7853982f32,
--     2.3561945f32, -1.5707964f32, 2.55359f32, -1.3258177f32, -1.5707963f32, f32.nan, f32.nan,
--     -1.0e-30f32] }
-- needs_denorm_f32 input { [0f32, 1e-40f32, 1e-40f32, 5e-39f32]
--   [1e-40f32, 0f32, -1e-40f32, -3e-39f32] }
-- output { [0.0f32, 1.5707964f32, 2.3561945f32, 2.111216f32] }
entry atan2_32 (ys: []f32) (xs: []f32) = map2 f32.atan2 ys xs

-- ==
-- entry: inverse
-- input { [-1e10f32, 3e38f32, -f32.inf, f32.inf, 0.9392f32, -0.5f32, 1.5f32, 5000f32, -1f32,
--     1f32, f32.nan, -0f32, 1e-3f32, -0.99999f32, 2e19f32, -2e19f32] }
-- output { [f32.nan, f32.nan, f32.nan, f32.nan, 1.2202929f32, -0.5235988f32, f32.nan, f32.nan,
--     -1.5707964f32, 1.5707964f32, f32.nan, -0.0f32, 1.0000002e-3f32, -1.5663211f32, f32.nan,
--     f32.nan]
--   [f32.nan, f32.nan, f32.nan, f32.nan, 0.35050339f32, 2.0943952f32, f32.nan, f32.nan,
--     3.1415927f32, 0.0f32, f32.nan, 1.5707964f32, 1.5697963f32, 3.1371174f32, f32.nan, f32.nan]
--   [-23.718998f32, 89.28999f32, -f32.inf, f32.inf, 0.8377215f32, -0.48121184f32, 1.1947632f32,
--     9.2103405f32, -0.8813736f32, 0.8813736f32, f32.nan, -0.0f32, 9.999999e-4f32, -0.8813665f32,
--     45.13541f32, -45.13541f32]
--   [f32.nan, 89.28999f32, f32.nan, f32.inf, f32.nan, f32.nan, 0.9624237f32, 9.2103405f32,
--     f32.nan, 0.0f32, f32.nan, f32.nan, f32.nan, f32.nan, 45.13541f32, f32.nan]
--   [-1.5707964f32, 1.5707964f32, -1.5707964f32, 1.5707964f32, 0.75405526f32, -0.4636476f32,
--     0.98279375f32, 1.5705963f32, -0.7853982f32, 0.7853982f32, f32.nan, -0.0f32, 9.999997e-4f32,
--     -0.7853932f32, 1.5707964f32, -1.5707964f32]
--   [f32.nan, f32.nan, f32.nan, f32.nan, 1.7312204f32, -0.54930615f32, f32.nan, f32.nan,
--     -f32.inf, f32.inf, f32.nan, -0.0f32, 1.0000003e-3f32, -6.1023555f32, f32.nan, f32.nan] }
-- needs_denorm_f32 input { [1e-40f32] }
-- output { [1.0e-40f32]
--   [1.5707964f32]
--   [1.0e-40f32]
--   [f32.nan]
--   [1.0e-40f32]
--   [1.0e-40f32] }
entry inverse (xs: []f32) =
  unzip4 (map (\x -> (f32.asin x, f32.acos x, (f32.asinh x, f32.acosh x), (f32.atan x, f32.atanh x))) xs)

-- ==
-- entry: logs
-- input { [-1e10f32, 3e38f32, -f32.inf, f32.inf, 1.1754944e-38f32, 0f32, -0f32, -1f32,
--     -1.0000001f32, 1e-30f32, 0.25f32, f32.nan] }
-- output { [f32.nan, 88.59685f32, f32.nan, f32.inf, -87.33655f32, -f32.inf, -f32.inf, f32.nan,
--     f32.nan, -69.07755f32, -1.3862944f32, f32.nan]
--   [f32.nan, 127.81823f32, f32.nan, f32.inf, -126.0f32, -f32.inf, -f32.inf, f32.nan, f32.nan,
--     -99.657845f32, -2.0f32, f32.nan]
--   [f32.nan, 38.47712f32, f32.nan, f32.inf, -37.92978f32, -f32.inf, -f32.inf, f32.nan, f32.nan,
--     -30.0f32, -0.60206f32, f32.nan]
--   [f32.nan, 88.59685f32, f32.nan, f32.inf, 1.1754944e-38f32, 0.0f32, -0.0f32, -f32.inf,
--     f32.nan, 1.0e-30f32, 0.22314355f32, f32.nan] }
-- needs_denorm_f32 input { [1e-40f32, 1.4e-45f32, 1.1754942e-38f32] }
-- output { [-92.10341f32, -103.27893f32, -87.33655f32]
--   [-132.87714f32, -149.0f32, -126.0f32]
--   [-40.000004f32, -44.85347f32, -37.92978f32]
--   [1.0e-40f32, 1.0e-45f32, 1.1754942e-38f32] }
entry logs (xs: []f32) =
  unzip4 (map (\x -> (f32.log x, f32.log2 x, f32.log10 x, f32.log1p x)) xs)

-- ==
-- entry: near_zero
-- input { [1e-30f32, -1e-30f32, -0f32, 0f32, 1e-3f32, -0.3f32, 0.9f32, 1f32, -1f32, 2f32, 1.1f32,
--     -104f32, 27f32, f32.inf, -f32.inf, f32.nan] }
-- output { [1.0e-30f32, -1.0e-30f32, -0.0f32, 0.0f32, 1.0000002e-3f32, -0.3045203f32,
--     1.0265167f32, 1.1752012f32, -1.1752012f32, 3.6268604f32, 1.3356476f32, -f32.inf,
--     2.6602412e11f32, f32.inf, -f32.inf, f32.nan]
--   [1.0e-30f32, -1.0e-30f32, -0.0f32, 0.0f32, 9.999997e-4f32, -0.2913126f32, 0.71629786f32,
--     0.7615942f32, -0.7615942f32, 0.9640276f32, 0.800499f32, -1.0f32, 1.0f32, 1.0f32, -1.0f32,
--     f32.nan]
--   [1.0f32, 1.0f32, 1.0f32, 1.0f32, 1.0010005f32, 0.7408182f32, 2.459603f32, 2.7182817f32,
--     0.36787945f32, 7.389056f32, 3.0041661f32, 0.0f32, 5.3204825e11f32, f32.inf, 0.0f32, f32.nan]
--   [1.0e-10f32, -1.0e-10f32, -0.0f32, 0.0f32, 0.1f32, -0.66943294f32, 0.9654894f32, 1.0f32,
--     -1.0f32, 1.2599211f32, 1.0322801f32, -4.702669f32, 3.0f32, f32.inf, -f32.inf, f32.nan] }
-- needs_denorm_f32 input { [1e-40f32, -100f32, -90f32, -8e-39f32] }
-- output { [1.0e-40f32, -f32.inf, -f32.inf, -8.0e-39f32]
--   [1.0e-40f32, -1.0f32, -1.0f32, -8.0e-39f32]
--   [1.0f32, 3.8e-44f32, 8.19401e-40f32, 1.0f32]
--   [4.6415806e-14f32, -4.6415887f32, -4.481405f32, -2.0e-13f32] }
entry near_zero (xs: []f32) =
  unzip4 (map (\x -> (f32.sinh x, f32.tanh x, f32.exp x, f32.cbrt x)) xs)

-- A boolean or an integer the driver can prove constant, converted to a float, stays an IEEE
-- operand (`y / 0.0` is ±inf or NaN, `y * 0.0` keeps NaN and the sign).
-- ==
-- entry: folded_conversions
-- input { 2i64 [1f32, -1f32, f32.inf, f32.nan, -0f32] }
-- output { [f32.inf, -f32.inf, f32.inf, f32.nan, f32.nan]
--          [0.0f32, -0.0f32, f32.nan, f32.nan, -0.0f32]
--          [f32.inf, -f32.inf, f32.inf, f32.nan, f32.nan]
--          [f32.inf, -f32.inf, f32.inf, f32.nan, f32.nan] }
entry folded_conversions (n: i64) (ys: []f32) =
  unzip4 (map (\y -> let never = f32.isnan (f32.i64 n)
                     in (y / f32.bool never,
                         y * f32.i64 (i64.bool (f32.i64 n != f32.i64 n)),
                         y / f32.i32 (i32.i64 (n - n)),
                         y / f32.u8 (u8.bool never))) ys)

-- Near 0 the functions are relatively precise: `f x / x` is 1 to within 1e-6 (lavapipe's `sinh 1e-30` was
-- 2.98e-8, its `atan 1e-3` off by 2e-5).
-- ==
-- entry: relative
-- input { [1e-30f32, -1e-20f32, 1e-10f32, -1e-5f32, 1e-3f32] }
-- output { [true, true, true, true, true]
--   [true, true, true, true, true]
--   [true, true, true, true, true]
--   [true, true, true, true, true]
--   [true, true, true, true, true] }
-- needs_denorm_f32 input { [3e-39f32] }
-- output { [true]
--   [true]
--   [true]
--   [true]
--   [true] }
entry relative (xs: []f32) =
  let near1 (r: f32) = f32.abs (r - 1) < 1e-6
  in (map (\x -> near1 (f32.sinh x / x)) xs,
      map (\x -> near1 (f32.tanh x / x)) xs,
      map (\x -> near1 (f32.asinh x / x)) xs,
      map (\x -> near1 (f32.atanh x / x)) xs,
      map (\x -> near1 (f32.atan x / x)) xs)

-- `gamma` and `lgamma`: C's values at the poles and infinities, `lgamma` exactly 0 at 1 and 2
-- (the f32 Lanczos series was 4.8e-7 there), `gamma` exact at small integers.
-- ==
-- entry: gamma_special
-- input { [1f32, 2f32, 3f32, 4f32, 0f32, -0f32, -1f32, -2f32, f32.inf, -f32.inf, f32.nan] }
-- output { [1f32, 1f32, 2f32, 6f32, f32.inf, -f32.inf, f32.nan, f32.nan, f32.inf, f32.nan,
--           f32.nan]
--          [0f32, 0f32, 0.6931472f32, 1.7917595f32, f32.inf, f32.inf, f32.inf, f32.inf, f32.inf,
--           f32.inf, f32.nan]
--          [true, true, false, false, false, false, false, false, false, false, false] }
entry gamma_special (xs: []f32) =
  (map f32.gamma xs, map f32.lgamma xs, map (\x -> f32.lgamma x == 0 && f32.sgn (f32.lgamma x) == 0) xs)

-- `sin (asin x)` and `cos (acos x)` are `x` to within 1e-6 (lavapipe's `asin 0.9392` was off by
-- 4e-4).
-- ==
-- entry: inverse_trig
-- input { [0.9392f32, 0.5f32, -0.3f32, 0.2f32, 0.99f32, -0.7f32] }
-- output { [true, true, true, true, true, true] [true, true, true, true, true, true] }
entry inverse_trig (xs: []f32) =
  let near1 (r: f32) = f32.abs (r - 1) < 1e-6
  in (map (\x -> near1 (f32.sin (f32.asin x) / x)) xs,
      map (\x -> near1 (f32.cos (f32.acos x) / x)) xs)

-- Sign extension (`i64.i32`, `i64.i8`) compared with constants.
-- ==
-- entry: sign_extension
-- input { [-11i32, 5i32, -10i32, -9i32, 2147483647i32, -2147483648i32] [-128i8, 127i8, -1i8, 0i8, 5i8, -11i8] }
-- output { [false, true, false, true, true, false]
--          [true, false, true, true, false, true]
--          [-11i64, 5i64, -10i64, -9i64, 2147483647i64, -2147483648i64]
--          [false, true, true, true, true, false] }
entry sign_extension (xs: []i32) (bs: []i8) =
  let js = map (\x -> i64.i32 x) xs
  in (map (\x -> (-10i64) < i64.i32 x) xs,
      map (\b -> i64.i8 b <= 0i64) bs,
      js,
      map (\b -> i64.i8 b > -11i64) bs)
