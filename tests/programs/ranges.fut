-- Range expressions.

-- ==
-- entry: upto
-- input { 5 } output { [0, 1, 2, 3, 4] [2, 3, 4] empty([0]i32) }
entry upto (n: i32) : ([]i32, []i32, []i32) = (0..<n, 2..<n, n..<n)

-- ==
-- entry: inclusive
-- input { 5 } output { [1, 2, 3, 4, 5] [5] }
entry inclusive (n: i32) : ([]i32, []i32) = (1...n, n...n)

-- ==
-- entry: downto
-- input { 5 } output { [5, 4, 3, 2, 1] [5, 4] empty([0]i32) }
entry downto (n: i32) : ([]i32, []i32, []i32) = (n..>0, n..>3, n..>n)

-- Ranges with a stride given by the second element.
-- ==
-- entry: strided
-- input { 10 } output { [0, 3, 6, 9] [1, 3, 5, 7, 9] [10, 8, 6, 4] [10, 7, 4, 1] [0, 2, 4] }
entry strided (n: i32) : ([]i32, []i32, []i32, []i32, []i32) =
  (0..3..<n, 1..3...n, n..8..>3, n..7...0, 0..2...5)

-- Ranges of i64 (inferred from the bound) and of other integer types.
-- ==
-- entry: types
-- input { 3i64 } output { [0i64, 1i64, 2i64] [1u8, 2u8, 3u8] [3i64, 2i64, 1i64, 0i64] }
entry types (n: i64) : ([]i64, []u8, []i64) = (0..<n, 1u8...3u8, n..(n - 1)...0)

-- Range operators bind looser than arithmetic.
-- ==
-- entry: precedence
-- input { 2 } output { [0, 1, 2] [1, 2, 3, 4] }
entry precedence (n: i32) : ([]i32, []i32) = (0..<n + 1, n - 1...n * 2)

-- iota and ranges agree.
-- ==
-- entry: iota_eq
-- input { 7i64 } output { true }
entry iota_eq (n: i64) : bool = iota n == (0..<n)
