-- | Literals: decimal, hexadecimal and binary integers, underscores, type
-- suffixes, float forms, booleans, and the types of unsuffixed literals.

-- Integer literal forms.
-- ==
-- entry: int_forms
-- input { 0 } output { 1000000 255 255 10 240 3735928559u32 }
entry int_forms (z: i32) : (i32, i32, i32, i32, i32, u32) =
  (z + 1_000_000, z + 0xff, z + 0XFF, z + 0b1010, z + 0B1111_0000, u32.i32 z + 0xdead_beefu32)

-- Type suffixes on integer literals.
-- ==
-- entry: int_suffixes
-- input { } output { 42i8 -3i16 7i32 9000000000i64 255u8 65535u16 4000000000u32 18446744073709551615u64 }
entry int_suffixes : (i8, i16, i32, i64, u8, u16, u32, u64) =
  (42i8, -3i16, 7i32, 9000000000i64, 0xffu8, 65535u16, 4_000_000_000u32, 18446744073709551615u64)

-- Float literal forms: point, exponent, suffixes, integer with a float suffix,
-- underscores, hexadecimal floats (0x1.8p1 = 1.5 * 2 = 3).
-- ==
-- entry: float_forms
-- input { } output { 1.5 1500.0 0.0015 2.5f32 3.0f32 1000.5 3.0 200.0 0.25f16 }
entry float_forms : (f64, f64, f64, f32, f32, f64, f64, f64, f16) =
  (1.5, 1.5e3, 1.5e-3, 2.5f32, 3f32, 1_000.5, 0x1.8p1, 2E+2, 0.25f16)

-- Boolean literals.
-- ==
-- entry: bools
-- input { } output { true false }
entry bools : (bool, bool) = (true, false)

-- Unconstrained literals default to i32 and f64.
-- ==
-- entry: defaults
-- input { } output { 3 2.5 }
entry defaults = (1 + 2, 1.5 + 1)

-- Unsuffixed literals take the type their use requires.
-- ==
-- entry: inferred
-- input { 2.0f32 [10u8, 20u8, 30u8] 5u64 } output { 3.0f32 20u8 11u64 0.5f32 }
entry inferred (x: f32) (xs: []u8) (y: u64) : (f32, u8, u64, f32) =
  (x + 1, xs[1], y * 2 + 1, x / 4)

-- Literals in let bindings with type annotations.
-- ==
-- entry: annotated
-- input { } output { 200u8 -1i64 }
entry annotated =
  let a : u8 = 100
  let b : i64 = -1
  in (a + a, b)

-- Trailing commas are allowed.
-- ==
-- entry: trailing
-- input { } output { 3 [1, 2] }
entry trailing : (i32, []i32) =
  let (a, b,) : (i32, i32,) = (1, 2,)
  in (a + b, [a, b,])
