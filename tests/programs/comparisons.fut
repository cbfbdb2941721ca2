-- Comparison operators on integers (signed and unsigned), floats, booleans,
-- tuples and arrays.

-- ==
-- entry: cmp_i32
-- input { 1 2 } output { false true true true false false }
-- input { 2 2 } output { true false false true false true }
-- input { -3 2 } output { false true true true false false }
entry cmp_i32 (a: i32) (b: i32) : (bool, bool, bool, bool, bool, bool) =
  (a == b, a != b, a < b, a <= b, a > b, a >= b)

-- Unsigned values compare as unsigned numbers.
-- ==
-- entry: cmp_u8
-- input { 255u8 1u8 } output { false false true true }
entry cmp_u8 (a: u8) (b: u8) : (bool, bool, bool, bool) = (a < b, a <= b, a > b, a >= b)

-- ==
-- entry: cmp_u64
-- input { 18446744073709551615u64 1u64 } output { true false }
entry cmp_u64 (a: u64) (b: u64) : (bool, bool) = (a > b, a < b)

-- ==
-- entry: cmp_f64
-- input { 1.5 -0.5 } output { false true false true }
entry cmp_f64 (a: f64) (b: f64) : (bool, bool, bool, bool) = (a == b, a != b, a < b, a > b)

-- Every ordered comparison with NaN is false.
-- ==
-- entry: cmp_nan
-- input { 1.0f32 } output { false false false false true }
entry cmp_nan (a: f32) : (bool, bool, bool, bool, bool) =
  let n = f32.nan in (n < a, n >= a, a <= n, n == n, n != n)

-- ==
-- entry: cmp_bool
-- input { true false } output { false true true }
entry cmp_bool (a: bool) (b: bool) : (bool, bool, bool) = (a == b, a != b, a == !b)

-- Equality on tuples and arrays is structural.
-- ==
-- entry: cmp_compound
-- input { [1, 2, 3] [1, 2, 3] [1, 5, 3] } output { true false true false true }
entry cmp_compound [n] (xs: [n]i32) (ys: [n]i32) (zs: [n]i32) : (bool, bool, bool, bool, bool) =
  (xs == ys, xs == zs, (1, 2.0) == (1, 2.0), (xs[0], true) == (xs[1], true), [[1, 2], [3, 4]] == [[1, 2], [3, 4]])

-- Logical operators short-circuit: the right operand is not evaluated when
-- the left one decides (here it would index out of bounds).
-- ==
-- entry: short_circuit
-- input { [1, 2, 3] 5i64 } output { false true }
-- input { [1, 2, 3] 1i64 } output { true true }
entry short_circuit (xs: []i32) (i: i64) : (bool, bool) =
  (i < length xs && xs[i] == 2, i >= length xs || xs[i] == 2)
