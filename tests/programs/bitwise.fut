-- Bitwise operators: & | ^ ! << >> >>>. `>>` is arithmetic on signed types
-- and logical on unsigned types; `>>>` is always logical.

-- ==
-- entry: bits_i32
-- input { 12 2 } output { 0 14 14 -13 48 3 3 }
-- input { -8 1 } output { 0 -7 -7 7 -16 -4 2147483644 }
-- input { 12 10 } output { 8 14 6 -13 12288 0 0 }
entry bits_i32 (a: i32) (b: i32) : (i32, i32, i32, i32, i32, i32, i32) =
  (a & b, a | b, a ^ b, !a, a << b, a >> b, a >>> b)

-- ==
-- entry: bits_u8
-- input { 128u8 1u8 } output { 0u8 129u8 129u8 127u8 0u8 64u8 64u8 }
-- input { 240u8 4u8 } output { 0u8 244u8 244u8 15u8 0u8 15u8 15u8 }
entry bits_u8 (a: u8) (b: u8) : (u8, u8, u8, u8, u8, u8, u8) =
  (a & b, a | b, a ^ b, !a, a << b, a >> b, a >>> b)

-- ==
-- entry: bits_i8
-- input { 1i8 7i8 } output { 1i8 7i8 6i8 -2i8 -128i8 0i8 0i8 }
-- input { -128i8 7i8 } output { 0i8 -121i8 -121i8 127i8 0i8 -1i8 1i8 }
entry bits_i8 (a: i8) (b: i8) : (i8, i8, i8, i8, i8, i8, i8) =
  (a & b, a | b, a ^ b, !a, a << b, a >> b, a >>> b)

-- ==
-- entry: bits_64
-- input { 9223372036854775808u64 -1i64 } output { 1u64 1u64 0u64 15i64 -1i64 18446744073709551615u64 }
entry bits_64 (a: u64) (b: i64) : (u64, u64, u64, i64, i64, u64) =
  (a >> 63, a >>> 63, a << 1, b >>> 60, b >> 60, !0u64)

-- Hexadecimal masks and combinations.
-- ==
-- entry: masks
-- input { 3735928559u32 } output { 239u32 190u32 3735928559u32 48879u32 }
entry masks (x: u32) : (u32, u32, u32, u32) =
  (x & 0xff, (x >> 8) & 0xff, (x >> 16 << 16) | (x & 0xffff), x & 0xffff)

-- `!` on booleans is logical negation.
-- ==
-- entry: not_bool
-- input { true } output { false true }
entry not_bool (b: bool) : (bool, bool) = (!b, !(!b))
