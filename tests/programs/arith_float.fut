-- Floating-point arithmetic on f32 and f64: + - * / % ** and negation,
-- infinities and NaN.

-- ==
-- entry: basic_f64
-- input { 1.5 -2.25 } output { -0.75 3.75 -3.375 -0.6666666666666666 -1.5 }
entry basic_f64 (a: f64) (b: f64) : (f64, f64, f64, f64, f64) =
  (a + b, a - b, a * b, a / b, -a)

-- ==
-- entry: basic_f32
-- input { 1.5f32 -2.25f32 } output { -0.75f32 3.75f32 -3.375f32 -0.6666667f32 -1.5f32 }
entry basic_f32 (a: f32) (b: f32) : (f32, f32, f32, f32, f32) =
  (a + b, a - b, a * b, a / b, -a)

-- ==
-- entry: powers
-- input { 2.0 } output { 1024.0 1.4142135623730951 0.25 3.0 }
entry powers (x: f64) : (f64, f64, f64, f64) =
  (x ** 10, x ** 0.5, x ** (-2), 9 ** 0.5)

-- Float remainder with positive operands.
-- ==
-- entry: fmod
-- input { 7.5f32 2.0f32 } output { 1.5f32 }
-- input { 1.25f32 0.5f32 } output { 0.25f32 }
entry fmod (a: f32) (b: f32) : f32 = a % b

-- Division by zero gives infinities; 0/0 is NaN, and NaN is unequal to itself.
-- ==
-- entry: specials
-- input { 0.0 } output { f64.inf -f64.inf true false true }
entry specials (z: f64) : (f64, f64, bool, bool, bool) =
  let n = z / z
  in (1 / z, -1 / z, f64.isnan n, n == n, n != n)

-- Values given as f32.inf / f32.nan in input.
-- ==
-- entry: special_inputs
-- input { f32.inf f32.nan } output { true true -f32.inf }
entry special_inputs (a: f32) (b: f32) : (bool, bool, f32) = (f32.isinf a, f32.isnan b, -a)

-- f32 rounding: 0.1 + 0.2 is close to 0.3.
-- ==
-- entry: sum_f32
-- input { 0.1f32 0.2f32 } output { 0.3f32 true }
entry sum_f32 (a: f32) (b: f32) : (f32, bool) =
  let s = a + b in (s, f32.abs (s - 0.3) < 1e-6)
