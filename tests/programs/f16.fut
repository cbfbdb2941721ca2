-- Half-precision floats.

-- ==
-- entry: arith
-- input { 1.5f16 2.25f16 } output { 3.75f16 -0.75f16 3.375f16 0.6665f16 }
entry arith (a: f16) (b: f16) : (f16, f16, f16, f16) = (a + b, a - b, a * b, a / b)

-- f16 has a small range: 65504 is the largest finite value.
-- ==
-- entry: range
-- input { 60000.0f16 } output { f16.inf 65504.0f16 true false }
entry range (x: f16) : (f16, f16, bool, bool) = (x + x, x + 5504, f16.isinf (x * 2), f16.isinf (x + 5504))

-- ==
-- entry: functions
-- input { 2.0f16 } output { 1.414f16 7.389f16 0.6934f16 }
entry functions (x: f16) : (f16, f16, f16) = (f16.sqrt x, f16.exp x, f16.log x)

-- Conversions to and from f16.
-- ==
-- entry: convert
-- input { 2.75f16 } output { 2.75f32 2 3.0f16 0.1f16 }
entry convert (x: f16) : (f32, i32, f16, f16) = (f32.f16 x, i32.f16 x, f16.i32 3, f16.f64 0.1)

-- Sums of f16 arrays.
-- ==
-- entry: sum
-- input { [0.5f16, 0.25f16, 1.0f16, 2.0f16] } output { 3.75f16 }
-- input { empty([0]f16) } output { 0.0f16 }
entry sum (xs: []f16) : f16 = f16.sum xs
