-- Functions and constants of the float modules (f64, f32, f16).

-- ==
-- entry: exp_log
-- input { 0.5 }
-- output { 1.4142135623730951 1.2599210498948732 1.6487212707001282 0.6931471805599453
--          3.321928094887362 3.0 0.4054651081081644 }
entry exp_log (x: f64) : (f64, f64, f64, f64, f64, f64, f64) =
  (f64.sqrt 2, f64.cbrt 2, f64.exp x, f64.log 2, f64.log2 10, f64.log10 1000, f64.log1p x)

-- ==
-- entry: trig
-- input { 0.5 }
-- output { 0.479425538604203 0.8775825618903728 0.5463024898437905 0.5235987755982989
--          1.0471975511965979 0.4636476090008061 2.356194490192345 }
entry trig (x: f64) : (f64, f64, f64, f64, f64, f64, f64) =
  (f64.sin x, f64.cos x, f64.tan x, f64.asin x, f64.acos x, f64.atan x, f64.atan2 1 (-1))

-- ==
-- entry: hyperbolic
-- input { 0.5 }
-- output { 0.5210953054937474 1.1276259652063807 0.46211715726000974 0.48121182505960347
--          1.3169578969248166 0.5493061443340548 }
entry hyperbolic (x: f64) : (f64, f64, f64, f64, f64, f64) =
  (f64.sinh x, f64.cosh x, f64.tanh x, f64.asinh x, f64.acosh 2, f64.atanh x)

-- ==
-- entry: special
-- input { 0.5 4.5 }
-- output { 0.5204998778130465 0.4795001221869535 11.631728396567446 2.453736570842443 5.0 1024.0 }
entry special (x: f64) (y: f64) : (f64, f64, f64, f64, f64, f64) =
  (f64.erf x, f64.erfc x, f64.gamma y, f64.lgamma y, f64.hypot 3 4, f64.pow 2 10)

-- round rounds halves to even.
-- ==
-- entry: rounding
-- input { [-3.7, 2.5, 3.5, -2.5, 0.2] }
-- output { [-4.0, 2.0, 3.0, -3.0, 0.0] [-3.0, 3.0, 4.0, -2.0, 1.0] [-3.0, 2.0, 3.0, -2.0, 0.0] [-4.0, 2.0, 4.0, -2.0, 0.0] }
entry rounding (xs: []f64) : ([]f64, []f64, []f64, []f64) =
  (map f64.floor xs, map f64.ceil xs, map f64.trunc xs, map f64.round xs)

-- ==
-- entry: classify
-- input { [1.0f32, f32.inf, f32.nan, -f32.inf] }
-- output { [false, false, true, false] [false, true, false, true] [true, false, false, false] }
entry classify (xs: []f32) : ([]bool, []bool, []bool) =
  (map f32.isnan xs, map f32.isinf xs, map f32.isfinite xs)

-- ==
-- entry: constants
-- input { } output { 3.141592653589793 2.718281828459045 2.220446049250313e-16 3.1415927f32 1.1920929e-7f32 true true f64.inf -f32.inf }
entry constants : (f64, f64, f64, f32, f32, bool, bool, f64, f32) =
  (f64.pi, f64.e, f64.epsilon, f32.pi, f32.epsilon, f64.isnan f64.nan, f64.isinf f64.inf, f64.highest, f32.lowest)

-- ==
-- entry: bits
-- input { 1.0f32 -2.0 } output { 1065353216u32 13835058055282163712u64 3.1415927f32 15360u16 -2.0 }
entry bits (x: f32) (y: f64) : (u32, u64, f32, u16, f64) =
  (f32.to_bits x, f64.to_bits y, f32.from_bits 0x40490fdb, f16.to_bits 1, f64.from_bits (f64.to_bits y))

-- ==
-- entry: fused
-- input { 2.0 3.0 4.0 }
-- output { 10.0 10.0 2.5 3.0 15.0 -2.0 0.25 }
entry fused (a: f64) (b: f64) (c: f64) : (f64, f64, f64, f64, f64, f64, f64) =
  (f64.fma a b c, f64.mad a b c, f64.lerp 0 10 0.25, f64.lerp a c 0.5, f64.lerp 0 10 1.5,
   f64.copysign a (-b), f64.from_fraction 1 4)

-- The generic numeric functions on floats.
-- ==
-- entry: numeric
-- input { [1.5, -2.0, 4.0] }
-- output { 4.0 -2.0 2.0 1.5 -1.0 -1.5 3.5 -12.0 4.0 -2.0 }
entry numeric (xs: []f64) : (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64) =
  ( f64.max xs[0] xs[2], f64.min xs[0] xs[1], f64.abs xs[1], f64.abs xs[0], f64.sgn xs[1]
  , f64.neg xs[0], f64.sum xs, f64.product xs, f64.maximum xs, f64.minimum xs )

-- f32 and f16 versions of some functions.
-- ==
-- entry: other_widths
-- input { 4.0f32 0.5f16 } output { 2.0f32 0.47942555f32 0.4795f16 2.0f32 1.6487f16 }
entry other_widths (x: f32) (y: f16) : (f32, f32, f16, f32, f16) =
  (f32.sqrt x, f32.sin 0.5, f16.sin y, f32.log2 x, f16.exp y)

-- sum, product, maximum and minimum of empty arrays.
-- ==
-- entry: empty_reductions
-- input { empty([0]f32) } output { 0.0f32 1.0f32 -f32.inf f32.inf }
entry empty_reductions (xs: []f32) : (f32, f32, f32, f32) =
  (f32.sum xs, f32.product xs, f32.maximum xs, f32.minimum xs)

-- Local open of a float module (see local_open.fut for more).
-- ==
-- entry: opened
-- input { 1.0 } output { 6.141592653589793 }
entry opened (x: f64) : f64 = f64.(sqrt (x * 9) + pi)
