-- Run-time errors: out-of-bounds indexing and slicing, division by zero,
-- failed assertions, invalid ranges, size mismatches, negative exponents.

-- ==
-- entry: index
-- input { [1, 2, 3] 1i64 } output { 2 }
-- input { [1, 2, 3] 3i64 } error: out of bounds
-- input { [1, 2, 3] -1i64 } error: out of bounds
-- input { empty([0]i32) 0i64 } error: out of bounds
entry index (xs: []i32) (i: i64) : i32 = xs[i]

-- ==
-- entry: index_2d
-- input { [[1, 2], [3, 4]] 1i64 2i64 } error: out of bounds
entry index_2d (m: [][]i32) (i: i64) (j: i64) : i32 = m[i, j]

-- ==
-- entry: slice
-- input { [1, 2, 3] 1i64 3i64 } output { [2, 3] }
-- input { [1, 2, 3] 1i64 4i64 } error: out of bounds
-- input { [1, 2, 3] 2i64 1i64 } error: out of bounds
entry slice (xs: []i32) (i: i64) (j: i64) : []i32 = xs[i:j]

-- ==
-- entry: update
-- input { [1, 2, 3] 5i64 } error: out of bounds
entry update (xs: *[]i32) (i: i64) : []i32 = xs with [i] = 0

-- ==
-- entry: head_empty
-- input { empty([0]f64) } error: out of bounds
entry head_empty (xs: []f64) : f64 = head xs

-- ==
-- entry: divide
-- input { 7 0 } error: division by zero
-- input { 7 2 } output { 3 }
entry divide (a: i32) (b: i32) : i32 = a / b

-- ==
-- entry: modulo
-- input { 7i64 0i64 } error: division by zero
entry modulo (a: i64) (b: i64) : i64 = a % b

-- ==
-- entry: quot_rem
-- input { 7u8 0u8 } error: division by zero
entry quot_rem (a: u8) (b: u8) : (u8, u8) = (a // b, a %% b)

-- ==
-- entry: in_map
-- input { [1, 2, 3] [1, 0, 1] } error: division by zero
entry in_map (xs: []i32) (ys: []i32) : []i32 = map2 (/) xs ys

-- ==
-- entry: assertion
-- input { 1 } output { 2 }
-- input { -1 } error: [Aa]ssertion
entry assertion (x: i32) : i32 = assert (x > 0) (x * 2)

-- ==
-- entry: bad_range
-- input { 5 1 } error: invalid
-- input { 1 5 } output { [1, 2, 3, 4] }
entry bad_range (a: i32) (b: i32) : []i32 = a..<b

-- ==
-- entry: zero_stride
-- input { 3 } error: invalid
entry zero_stride (a: i32) : []i32 = a..a...10

-- Arrays of different sizes where equal sizes are required.
-- ==
-- entry: map2_sizes
-- input { [1, 2, 3] [1, 2] } error: size|shape
entry map2_sizes (xs: []i32) (ys: []i32) : []i32 =
  let n = length xs
  in map2 (+) xs (ys :> [n]i32)

-- ==
-- entry: entry_sizes
-- input { [1, 2, 3] [1, 2] } error: size|shape
entry entry_sizes [n] (xs: [n]i32) (ys: [n]i32) : [n]i32 = map2 (+) xs ys

-- ==
-- entry: coercion
-- input { [1, 2, 3] 2i64 } error: size|shape
entry coercion (xs: []i32) (k: i64) : [k]i32 = xs :> [k]i32

-- ==
-- entry: unflatten_sizes
-- input { [1, 2, 3, 4, 5] } error: size|shape
entry unflatten_sizes (xs: []i32) : [2][2]i32 = unflatten (xs :> [2*2]i32)

-- ==
-- entry: neg_exponent
-- input { 2 -1 } error: negative exponent
entry neg_exponent (a: i32) (b: i32) : i32 = a ** b
