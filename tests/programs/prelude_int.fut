-- Functions and constants of the integer modules.

-- ==
-- entry: numeric
-- input { 3 -5 } output { 3 -5 5 -1 0 1 -3 5 }
entry numeric (a: i32) (b: i32) : (i32, i32, i32, i32, i32, i32, i32, i32) =
  (i32.max a b, i32.min a b, i32.abs b, i32.sgn b, i32.sgn 0, i32.sgn a, i32.neg a, i32.neg b)

-- ==
-- entry: limits
-- input { } output { 2147483647 -2147483648 127i8 -128i8 255u8 0u8 18446744073709551615u64 -9223372036854775808i64 8 64 32 16 }
entry limits : (i32, i32, i8, i8, u8, u8, u64, i64, i32, i32, i32, i32) =
  ( i32.highest, i32.lowest, i8.highest, i8.lowest, u8.highest, u8.lowest, u64.highest, i64.lowest
  , i8.num_bits, u64.num_bits, f32.num_bits, f16.num_bits )

-- ==
-- entry: abs_edge
-- input { -128i8 -7i64 200u8 } output { -128i8 7i64 200u8 1u8 }
entry abs_edge (a: i8) (b: i64) (c: u8) : (i8, i64, u8, u8) = (i8.abs a, i64.abs b, u8.abs c, u8.sgn c)

-- ==
-- entry: array_fns
-- input { [3, -1, 4] } output { 6 -12 4 -1 }
-- input { empty([0]i32) } output { 0 1 -2147483648 2147483647 }
entry array_fns (xs: []i32) : (i32, i32, i32, i32) = (i32.sum xs, i32.product xs, i32.maximum xs, i32.minimum xs)

-- ==
-- entry: u8_sums
-- input { [200u8, 100u8] } output { 44u8 32u8 200u8 }
entry u8_sums (xs: []u8) : (u8, u8, u8) = (u8.sum xs, u8.product xs, u8.maximum xs)

-- ==
-- entry: bit_fns
-- input { 10 } output { 1 0 11 2 2 28 1 }
entry bit_fns (x: i32) : (i32, i32, i32, i32, i32, i32, i32) =
  (i32.get_bit 3 x, i32.get_bit 0 x, i32.set_bit 0 x 1, i32.set_bit 3 x 0, i32.popc x, i32.clz x, i32.ctz x)

-- ==
-- entry: counts
-- input { } output { 8 32 31 7 32 0 3 32 16 64 }
entry counts : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) =
  ( u8.popc 255, i32.popc (-1), i32.clz 1, u8.clz 1, i32.clz 0, i32.clz (-1)
  , i32.ctz 8, i32.ctz 0, u16.ctz 0, u64.popc u64.highest )

-- ==
-- entry: mul_hi
-- input { } output { 2u32 -1 1i64 18446744073709551614u64 0u8 }
entry mul_hi : (u32, i32, i64, u64, u8) =
  ( u32.mul_hi 0x80000000 4, i32.mul_hi (-1) 1, i64.mul_hi 0x4000000000000000 4
  , u64.mul_hi u64.highest u64.highest, u8.mul_hi 15 16 )

-- The operators as module functions.
-- ==
-- entry: op_fns
-- input { -7 2 } output { -3 -1 -4 1 0 -5 -7 -28 6 -1 }
entry op_fns (a: i32) (b: i32) : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) =
  ( (i32.//) a b, (i32.%%) a b, (i32./) a b, (i32.%) a b, (i32.&) a (b + 4)
  , (i32.|) a b, (i32.^) a 0, (i32.<<) a b, (i32.>>>) 24 b, i32.not 0 )

-- Comparisons as module functions.
-- ==
-- entry: cmp_fns
-- input { 200u8 100u8 } output { true false true false }
entry cmp_fns (a: u8) (b: u8) : (bool, bool, bool, bool) = ((u8.>) a b, (u8.<) a b, (u8.!=) a b, (u8.==) a b)

-- More operators as module functions.
-- ==
-- entry: op_fns2
-- input { 12 5 } output { 7 8 60 6 false true 17 }
entry op_fns2 (a: i32) (b: i32) : (i32, i32, i32, i32, bool, bool, i32) =
  ((i32.-) a b, (i32.**) 2 3, (i32.*) a b, (i32.>>) a 1, (i32.<=) a b, (i32.>=) a b, (i32.+) a b)
