-- Integer division: `/` and `%` round toward negative infinity, `//` and
-- `%%` truncate toward zero.

-- ==
-- entry: div_i32
-- input { 7 2 }   output { 3 1 3 1 }
-- input { -7 2 }  output { -4 1 -3 -1 }
-- input { 7 -2 }  output { -4 -1 -3 1 }
-- input { -7 -2 } output { 3 -1 3 -1 }
-- input { -6 3 }  output { -2 0 -2 0 }
-- input { -1 5 }  output { -1 4 0 -1 }
-- input { 0 5 }   output { 0 0 0 0 }
entry div_i32 (a: i32) (b: i32) : (i32, i32, i32, i32) = (a / b, a % b, a // b, a %% b)

-- ==
-- entry: div_i64
-- input { -9000000001i64 1000i64 } output { -9000001i64 999i64 -9000000i64 -1i64 }
entry div_i64 (a: i64) (b: i64) : (i64, i64, i64, i64) = (a / b, a % b, a // b, a %% b)

-- ==
-- entry: div_i8
-- input { -100i8 7i8 } output { -15i8 5i8 -14i8 -2i8 }
entry div_i8 (a: i8) (b: i8) : (i8, i8, i8, i8) = (a / b, a % b, a // b, a %% b)

-- Unsigned division is ordinary.
-- ==
-- entry: div_u8
-- input { 255u8 7u8 } output { 36u8 3u8 36u8 3u8 }
entry div_u8 (a: u8) (b: u8) : (u8, u8, u8, u8) = (a / b, a % b, a // b, a %% b)

-- ==
-- entry: div_u32
-- input { 4294967295u32 10u32 } output { 429496729u32 5u32 }
entry div_u32 (a: u32) (b: u32) : (u32, u32) = (a / b, a % b)

-- The invariant x == (x / y) * y + x % y, for both pairs of operators.
-- ==
-- entry: div_invariant
-- input { [7, -7, 7, -7, 13, -13, 0] [2, 2, -2, -2, -5, 4, 3] } output { true }
entry div_invariant (xs: []i32) (ys: []i32) : bool =
  and (map2 (\x y -> x == (x / y) * y + x % y && x == (x // y) * y + x %% y) xs ys)

-- Float division.
-- ==
-- entry: div_f64
-- input { 7.0 2.0 } output { 3.5 1.0 }
-- input { 7.5 2.0 } output { 3.75 1.5 }
-- input { 1.0 4.0 } output { 0.25 1.0 }
entry div_f64 (a: f64) (b: f64) : (f64, f64) = (a / b, a % b)
