-- Integer arithmetic: + - * ** and negation, with two's-complement wraparound.

-- ==
-- entry: basic_i32
-- input { 7 3 } output { 10 4 21 343 -7 }
-- input { -5 2 } output { -3 -7 -10 25 5 }
entry basic_i32 (a: i32) (b: i32) : (i32, i32, i32, i32, i32) =
  (a + b, a - b, a * b, a ** b, -a)

-- i32 overflow wraps around.
-- ==
-- entry: wrap_i32
-- input { 2147483647 } output { -2147483648 -2 -2147483647 }
-- input { -2147483648 } output { -2147483647 0 -2147483648 }
entry wrap_i32 (x: i32) : (i32, i32, i32) = (x + 1, x * 2, -x)

-- ==
-- entry: wrap_i8
-- input { 100i8 100i8 } output { -56i8 16i8 0i8 }
-- input { -128i8 1i8 } output { -127i8 -128i8 127i8 }
entry wrap_i8 (x: i8) (y: i8) : (i8, i8, i8) = (x + y, x * y, x - y)

-- ==
-- entry: wrap_u8
-- input { 200u8 100u8 } output { 44u8 32u8 100u8 56u8 }
-- input { 1u8 2u8 } output { 3u8 2u8 255u8 255u8 }
entry wrap_u8 (x: u8) (y: u8) : (u8, u8, u8, u8) = (x + y, x * y, x - y, -x)

-- ==
-- entry: wrap_i16
-- input { 32767i16 } output { -32768i16 -2i16 }
entry wrap_i16 (x: i16) : (i16, i16) = (x + 1, x * 2)

-- ==
-- entry: wrap_u16
-- input { 65535u16 } output { 0u16 65534u16 }
entry wrap_u16 (x: u16) : (u16, u16) = (x + 1, x * 2)

-- ==
-- entry: wrap_u32
-- input { 4294967295u32 } output { 0u32 4294967294u32 1u32 }
entry wrap_u32 (x: u32) : (u32, u32, u32) = (x + 1, x * 2, x * x)

-- ==
-- entry: wrap_64
-- input { 4294967296i64 18446744073709551615u64 } output { 0i64 0u64 9223372036854775807i64 }
entry wrap_64 (x: i64) (y: u64) : (i64, u64, i64) = (x * x, y + 1, i64.highest + 0 * x)

-- Integer powers wrap around too; x ** 0 is 1.
-- ==
-- entry: powers
-- input { 2 } output { 1024 -2147483648 1 -8 1000000000000i64 0u8 }
entry powers (b: i32) : (i32, i32, i32, i32, i64, u8) =
  (b ** 10, b ** 31, b ** 0, (-b) ** 3, 10i64 ** 12, 2u8 ** 8)

-- Arithmetic on i64 and unsigned values larger than 2^31.
-- ==
-- entry: big
-- input { 3000000000i64 3000000000u32 } output { 6000000000i64 1705032704u32 1500000000u32 }
entry big (a: i64) (b: u32) : (i64, u32, u32) = (a + a, b + b, b / 2)
