-- Sizes are computed with checked arithmetic: a size that does not fit in an
-- i64 is a run-time error at the expression that computes it, never a size
-- that wrapped around (2^44 * 2^20 = 2^64 would be 0; the length of
-- i64.lowest..<i64.highest would be -1).

-- ==
-- entry: flatten_length
-- input { 3i64 4i64 } output { 12i64 }
-- input { 17592186044416i64 1048576i64 }
-- error: size_overflow\.fut:12:10: size overflow in `flatten`
entry flatten_length (n: i64) (m: i64) : i64 =
  length (flatten (replicate n (replicate m 1f32)))

-- ==
-- entry: flatten_sum
-- input { 2i64 3i64 } output { 6f32 }
-- input { 1125899906842624i64 16384i64 }
-- error: size_overflow\.fut:20:\d+: size overflow
entry flatten_sum (n: i64) (m: i64) : f32 =
  f32.sum (flatten (replicate n (replicate m 1f32)))

-- ==
-- entry: flatten_3d_length
-- input { 2i64 3i64 4i64 } output { 24i64 }
-- input { 1048576i64 1048576i64 16777216i64 } error: size overflow
entry flatten_3d_length (n: i64) (m: i64) (l: i64) : i64 =
  length (flatten_3d (replicate n (replicate m (replicate l 0u8))))

-- ==
-- entry: range_exclusive
-- input { -2i64 3i64 } output { 5i64 }
-- input { -9223372036854775808i64 9223372036854775807i64 }
-- error: size_overflow\.fut:35:10: size overflow in the range `\(a\.\.<b\)`
entry range_exclusive (a: i64) (b: i64) : i64 =
  length (a..<b)

-- ==
-- entry: range_inclusive
-- input { 0i64 3i64 } output { 4i64 }
-- input { 0i64 9223372036854775807i64 } error: size overflow in the range
-- input { -1i64 9223372036854775807i64 } error: size overflow in the range
entry range_inclusive (a: i64) (b: i64) : i64 =
  length (a...b)

-- ==
-- entry: range_down
-- input { 9223372036854775807i64 -9223372036854775808i64 }
-- error: size overflow in the range
-- input { 3i64 -3i64 } output { 6i64 }
entry range_down (a: i64) (b: i64) : i64 =
  length (a..>b)

-- A stride as large as the distance: two elements, although distance + stride
-- does not fit in an i64.
-- ==
-- entry: range_strided
-- input { 0i64 9223372036854775807i64 9223372036854775807i64 }
-- output { [0i64, 9223372036854775807i64] }
-- input { 9223372036854775807i64 0i64 -9223372036854775807i64 }
-- output { [9223372036854775807i64, 0i64, -9223372036854775807i64] }
-- input { 0i64 1i64 9223372036854775807i64 } error: size overflow in the range
-- input { 0i64 3i64 10i64 } output { [0i64, 3i64, 6i64, 9i64] }
-- input { 10i64 7i64 0i64 } output { [10i64, 7i64, 4i64, 1i64] }
entry range_strided (a: i64) (s: i64) (b: i64) : []i64 =
  a..s...b

-- ==
-- entry: range_strided_exclusive
-- input { 0i64 4611686018427387904i64 9223372036854775807i64 }
-- output { [0i64, 4611686018427387904i64] }
-- input { 0i64 3i64 9i64 } output { [0i64, 3i64, 6i64] }
-- input { 0i64 3i64 10i64 } output { [0i64, 3i64, 6i64, 9i64] }
-- input { 9i64 6i64 0i64 } output { [9i64, 6i64, 3i64] }
-- input { -9223372036854775808i64 -9223372036854775807i64 9223372036854775807i64 }
-- error: size overflow in the range
entry range_strided_exclusive (a: i64) (s: i64) (b: i64) : []i64 =
  if s < a then a..s..>b else a..s..<b

-- Unsigned ranges longer than i64.highest.
-- ==
-- entry: range_u64
-- input { 0u64 5u64 } output { 5i64 }
-- input { 0u64 18446744073709551615u64 } error: size overflow in the range
entry range_u64 (a: u64) (b: u64) : i64 =
  length (a..<b)

-- ==
-- entry: concat_length
-- input { 2i64 3i64 } output { 5i64 }
-- input { 9223372036854775807i64 1i64 } error: size overflow in concatenation
entry concat_length (n: i64) (m: i64) : i64 =
  length (iota n ++ iota m)

-- A size expression in a type.
-- ==
-- entry: size_expr
-- input { 2i64 3i64 [1, 2, 3, 4, 5, 6] } output { 6i64 }
-- input { 4294967296i64 4294967296i64 empty([0]i32) }
-- error: size overflow in the size `\[n\*m\]`
entry size_expr (n: i64) (m: i64) (xs: []i32) : i64 =
  length (xs :> [n*m]i32)

-- ==
-- entry: unflatten_sizes
-- input { 2i64 3i64 [1, 2, 3, 4, 5, 6] } output { [4, 5, 6] }
-- input { 4294967296i64 4294967296i64 empty([0]i32) } error: size overflow
entry unflatten_sizes (n: i64) (m: i64) (xs: []i32) : []i32 =
  let ys : [n][m]i32 = unflatten (xs :> [n*m]i32)
  in ys[n - 1]

-- A slice with a huge stride has one element (the length is computed without
-- overflow).
-- ==
-- entry: slice_stride
-- input { [1, 2, 3, 4, 5] 0i64 5i64 9223372036854775807i64 } output { [1] }
-- input { [1, 2, 3, 4, 5] 4i64 -1i64 -9223372036854775807i64 } output { [5] }
-- input { [1, 2, 3, 4, 5] 0i64 5i64 2i64 } output { [1, 3, 5] }
-- input { [1, 2, 3, 4, 5] 4i64 0i64 -2i64 } output { [5, 3] }
-- input { [1, 2, 3, 4, 5] 0i64 5i64 0i64 } error: .
entry slice_stride (xs: []i32) (i: i64) (j: i64) (s: i64) : []i32 =
  xs[i:j:s]
