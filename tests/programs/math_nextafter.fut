-- `nextafter` and `ldexp` of the f16, f32 and f64 modules, with C's semantics: results are
-- compared bit for bit (as `to_bits`). Every call runs inside a `map`, so on the device with
-- `-b vulkan`. Expected bits are Python's: `math.nextafter` (f64) or stepping the bits from
-- `struct.pack` (f32, f16); `math.ldexp` then `struct.pack('<d'/'<f'/'<e')` (one rounding, to
-- nearest even). Cases with subnormal arguments or results are tagged `needs_denorm_fN`.

-- 1→2, 1→0, -1→-inf, -0→0 (gives y = 0), 0→-0 (gives -0), inf→0 (largest finite),
-- max→inf (inf), -inf→-inf, 3→3, -2→5; NaN in either argument gives NaN.
-- ==
-- entry: nextafter64
-- input { [1f64, 1f64, -1f64, -0f64, 0f64, f64.inf, 1.7976931348623157e308f64, -f64.inf, 3f64,
--     -2f64]
--   [2f64, 0f64, -f64.inf, 0f64, -0f64, 0f64, f64.inf, -f64.inf, 3f64, 5f64] }
-- output { [4607182418800017409u64, 4607182418800017407u64, 13830554455654793217u64, 0u64,
--     9223372036854775808u64, 9218868437227405311u64, 9218868437227405312u64,
--     18442240474082181120u64, 4613937818241073152u64, 13835058055282163711u64] }
-- needs_denorm_f64 input { [0f64, -0f64, 0f64, 2.2250738585072014e-308f64, 5e-324f64, -5e-324f64]
--   [1f64, -1f64, -f64.inf, 0f64, 1f64, 1f64] }
-- output { [1u64, 9223372036854775809u64, 9223372036854775809u64, 4503599627370495u64, 2u64,
--     9223372036854775808u64] }
entry nextafter64 (xs: []f64) (ys: []f64) = map2 (\x y -> f64.to_bits (f64.nextafter x y)) xs ys

-- ==
-- entry: nextafter_nan
-- input { [f64.nan, 1f64, f64.nan] [1f64, f64.nan, f64.nan] } output { [true, true, true] }
entry nextafter_nan (xs: []f64) (ys: []f64) = map2 (\x y -> f64.isnan (f64.nextafter x y)) xs ys

-- ==
-- entry: nextafter32
-- input { [1f32, 1f32, -1f32, f32.inf, 3.4028234663852886e38f32, 0.1f32, f32.nan]
--   [2f32, 0f32, -f32.inf, 0f32, f32.inf, 1f32, 0f32] }
-- output { [1065353217u32, 1065353215u32, 3212836865u32, 2139095039u32, 2139095040u32,
--     1036831950u32, 2143289344u32] }
-- needs_denorm_f32 input { [0f32, 1.1754943508222875e-38f32, -0f32] [1f32, 0f32, -1f32] }
-- output { [1u32, 8388607u32, 2147483649u32] }
entry nextafter32 (xs: []f32) (ys: []f32) =
  map2 (\x y -> let r = f32.nextafter x y
                -- One NaN pattern, whatever the payload.
                in if f32.isnan r then 0x7fc00000 else f32.to_bits r) xs ys

-- 1→2, 1→0, 65504 (the largest f16)→inf, inf→0; 0→1 is the smallest subnormal and the
-- smallest normal 2^-14 → 0 is the largest subnormal.
-- ==
-- entry: nextafter16
-- input { [1f16, 1f16, 65504f16, f16.inf] [2f16, 0f16, f16.inf, 0f16] }
-- output { [15361u16, 15359u16, 31744u16, 31743u16] }
-- needs_denorm_f16 input { [0f16, 6.103515625e-05f16] [1f16, 0f16] }
-- output { [1u16, 1023u16] }
entry nextafter16 (xs: []f16) (ys: []f16) = map2 (\x y -> f16.to_bits (f16.nextafter x y)) xs ys

-- 1·2^10, 3·2^-2, 2^1023, 2^1024 = inf, -2.5·2^3, inf·2^-5, 0·2^100, -0·2^-100,
-- 1·2^(i32 min) = 0, 1·2^(i32 max) = inf, (largest)·2^-2098 rounds to the smallest subnormal.
-- Subnormal results round once, to even: 1.5·2^-1074 → 2 units, 2^-1075 → 0 (tie),
-- 1.5·2^-1075 → 1, 0.75·2^-1074 → 1, (1+2^-52)·2^-1075 → 1; 3·2^-1073 = 6 units; the
-- smallest subnormal ·2^1074 = 1 and ·2^2097 = 2^1023.
-- ==
-- entry: ldexp64
-- input { [1f64, 3f64, 1f64, 1f64, -2.5f64, f64.inf, 0f64, -0f64, 1f64, 1f64]
--   [10, -2, 1023, 1024, 3, -5, 100, -100, -2147483648, 2147483647] }
-- output { [4652218415073722368u64, 4604930618986332160u64, 9214364837600034816u64,
--     9218868437227405312u64, 13849694754071117824u64, 9218868437227405312u64, 0u64,
--     9223372036854775808u64, 0u64, 9218868437227405312u64] }
-- needs_denorm_f64 input { [1.7976931348623157e308f64, 1.5f64, 1f64, 1.5f64, 0.75f64,
--     1.0000000000000002f64, 3f64, 5e-324f64, 5e-324f64]
--   [-2098, -1074, -1075, -1075, -1074, -1075, -1073, 1074, 2097] }
-- output { [1u64, 2u64, 0u64, 1u64, 1u64, 1u64, 6u64, 4607182418800017408u64,
--     9214364837600034816u64] }
entry ldexp64 (xs: []f64) (ns: []i32) = map2 (\x n -> f64.to_bits (f64.ldexp x n)) xs ns

-- 2^10, 2^128 = inf, the smallest subnormal ·2^277 = 2^128 = inf; subnormal results: 1.5·2^-149
-- → 2 units, 2^-150 → 0, 3·2^-148 → 6, -0.75·2^-149 → -1 unit, (1+2^-23)·2^-150 → 1, the
-- largest f32 ·2^-276 → 2 units, the smallest subnormal ·2^149 = 1.
-- ==
-- entry: ldexp32
-- input { [1f32, 1f32] [10, 128] }
-- output { [1149239296u32, 2139095040u32] }
-- needs_denorm_f32 input { [1.5f32, 1f32, 3f32, 1.401298464324817e-45f32,
--     1.401298464324817e-45f32, 3.4028234663852886e38f32, -0.75f32, 1.0000001192092896f32]
--   [-149, -150, -148, 149, 277, -276, -149, -150] }
-- output { [2u32, 0u32, 6u32, 1065353216u32, 2139095040u32, 2u32, 2147483649u32, 1u32] }
entry ldexp32 (xs: []f32) (ns: []i32) = map2 (\x n -> f32.to_bits (f32.ldexp x n)) xs ns

-- 2^10 = 1024, 2^16 = inf, -3·4 = -12; subnormal results 2^-24 (1 unit), 2^-25 → 0 (tie),
-- 1.5·2^-24 → 2 units, 65504·2^-40 → 1 unit.
-- ==
-- entry: ldexp16
-- input { [1f16, 1f16, -3f16] [10, 16, 2] } output { [25600u16, 31744u16, 51712u16] }
-- needs_denorm_f16 input { [1f16, 1f16, 1.5f16, 65504f16] [-24, -25, -24, -40] }
-- output { [1u16, 0u16, 2u16, 1u16] }
entry ldexp16 (xs: []f16) (ns: []i32) = map2 (\x n -> f16.to_bits (f16.ldexp x n)) xs ns

-- Derivatives: d(ldexp x n)/dx = 2^n (n = 3: 8; n = -2: 0.25), d(nextafter x y)/dx = 1 and
-- /dy = 0 (Futhark's rule), forward and reverse.
-- ==
-- entry: derivatives
-- input { 1.5 3 } output { 8.0 8.0 1.0 1.0 0.0 }
-- input { 1.5 -2 } output { 0.25 0.25 1.0 1.0 0.0 }
entry derivatives (x: f64) (n: i32) =
  let (dx, dy) = vjp (\(a, b) -> f64.nextafter a b) (x, 2.0) 1.0
  in ( jvp (\a -> f64.ldexp a n) x 1.0
     , vjp (\a -> f64.ldexp a n) x 1.0
     , jvp (\a -> f64.nextafter a 0.0) x 1.0
     , dx
     , dy )

-- Through the prelude's module type `float`: a parametric module applied to f64.
-- nextafter 1 inf = 1 + 2^-52; ldexp 1.5 1 = 3.
-- ==
-- entry: via_module
-- input { 1.0 } output { 4607182418800017409u64 3.0 }
module next_up (F: float) = {
  def up (x: F.t) : F.t = F.nextafter x F.inf
  def twice (x: F.t) : F.t = F.ldexp x 1
}

module up64 = next_up f64

entry via_module (x: f64) = (f64.to_bits (up64.up x), up64.twice (x + 0.5))
