-- Conversions between primitive types with the numeric modules' functions.

-- Integer to integer: truncation to narrower types; to wider signed types,
-- sign extension from signed and zero extension from unsigned sources; to
-- wider unsigned types, zero extension.
-- ==
-- entry: int_int
-- input { 300 200 -1i8 255u8 -1 } output { 44u8 -56i8 -1i64 255 255u32 4294967295u64 -1i16 65535u16 }
entry int_int (a: i32) (b: i32) (c: i8) (d: u8) (e: i32) : (u8, i8, i64, i32, u32, u64, i16, u16) =
  (u8.i32 a, i8.i32 b, i64.i8 c, i32.u8 d, u32.i8 c, u64.i32 e, i16.i32 e, u16.i32 e)

-- ==
-- entry: narrow_64
-- input { 4294967301u64 -4294967291i64 } output { 5 5 5u32 }
entry narrow_64 (a: u64) (b: i64) : (i32, i32, u32) = (i32.u64 a, i32.i64 b, u32.i64 b)

-- Float to integer truncates toward zero.
-- ==
-- entry: float_int
-- input { 3.7 -3.7 } output { 3 -3 3i64 -3i64 3u8 -3i8 }
entry float_int (a: f64) (b: f64) : (i32, i32, i64, i64, u8, i8) =
  (i32.f64 a, i32.f64 b, i64.f64 a, i64.f64 b, u8.f64 a, i8.f64 b)

-- ==
-- entry: float_int_f32
-- input { 65535.9f32 -2.5f32 } output { 65535u16 -2 -2i64 }
entry float_int_f32 (a: f32) (b: f32) : (u16, i32, i64) = (u16.f32 a, i32.f32 b, i64.f32 b)

-- Integer to float, float to float.
-- ==
-- entry: to_float
-- input { 7 -2i64 255u8 1.5 } output { 7.0 -2.0f32 255.0 1.5f32 1.5f16 3000000000.0 }
entry to_float (a: i32) (b: i64) (c: u8) (d: f64) : (f64, f32, f64, f32, f16, f64) =
  (f64.i32 a, f32.i64 b, f64.u8 c, f32.f64 d, f16.f64 d, f64.u32 3000000000u32)

-- Booleans and numbers.
-- ==
-- entry: bools
-- input { true false } output { 1i64 0 1.0f32 0.0 false true true }
entry bools (t: bool) (f: bool) : (i64, i32, f32, f64, bool, bool, bool) =
  (i64.bool t, i32.bool f, f32.bool t, f64.bool f, bool.i32 0, bool.f64 2.5, bool.u8 255u8)

-- to_i64 from several types.
-- ==
-- entry: to_i64s
-- input { -2.9 200u8 -5i8 4294967295u32 } output { -2i64 200i64 -5i64 4294967295i64 }
entry to_i64s (a: f64) (b: u8) (c: i8) (d: u32) : (i64, i64, i64, i64) =
  (f64.to_i64 a, u8.to_i64 b, i8.to_i64 c, u32.to_i64 d)

-- Identity conversions.
-- ==
-- entry: same
-- input { 5 2.5f32 true } output { 5 2.5f32 true }
entry same (a: i32) (b: f32) (c: bool) : (i32, f32, bool) = (i32.i32 a, f32.f32 b, bool.bool c)
