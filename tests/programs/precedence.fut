-- Operator precedence and associativity (Futhark's table).

-- ==
-- entry: arith
-- input { 7 3 5 } output { 22 -1 1 6 -4 }
entry arith (a: i32) (b: i32) (c: i32) : (i32, i32, i32, i32, i32) =
  (a + b * c, a - b - c, a * b % c, a / 2 * 2, -a + b)

-- `**` is left-associative and binds tighter than `*`; prefix `-` binds
-- tighter than `**`.
-- ==
-- entry: pow
-- input { 3 } output { 64 9 18 }
entry pow (x: i32) : (i32, i32, i32) = (2 ** 3 ** 2, -x ** 2, 2 * x ** 2)

-- Bitwise operators bind tighter than comparisons and looser than shifts,
-- which bind looser than `+`.
-- ==
-- entry: bitwise
-- input { 6 } output { true 8 5 3 }
entry bitwise (x: i32) : (bool, i32, i32, i32) =
  (x & 1 == 0, 1 << 2 + 1, 1 << 2 | 1, x & 3 ^ 1 | 2)

-- `&&` binds tighter than `||`; `!` binds tighter than both.
-- ==
-- entry: logic
-- input { true false false } output { true true false false }
-- input { false false true } output { false true true true }
entry logic (a: bool) (b: bool) (c: bool) : (bool, bool, bool, bool) =
  (a || b && c, a && b || !b, b || !a || c, !a && c)

-- Comparisons bind looser than arithmetic.
-- ==
-- entry: cmp
-- input { 4 3 } output { true false }
entry cmp (a: i32) (b: i32) : (bool, bool) = (a + 1 < b * 2, a * 2 == b + 4)

-- Function application binds tighter than any operator; `|>` binds looser
-- than every other operator; a backticked function binds looser than arithmetic.
-- ==
-- entry: application
-- input { 5 1 } output { 7 12 5 9 }
entry application (a: i32) (b: i32) : (i32, i32, i32, i32) =
  let f x = x + 1
  in (f a + b, a + b |> (* 2), a `i32.max` b + 1, f <| a + 3)
