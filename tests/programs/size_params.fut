-- Size parameters, size annotations, type ascription and size coercion.

def dot [n] (xs: [n]f64) (ys: [n]f64) : f64 = f64.sum (map2 (*) xs ys)

-- A size parameter can be used as a value.
def len [n] 't (_: [n]t) : i64 = n

-- A named parameter used in the return type.
def zeros (k: i64) : [k]f64 = replicate k 0

-- ==
-- entry: dot_test
-- input { [1.0, 2.0, 3.0] [4.0, 5.0, 6.0] } output { 32.0 }
entry dot_test [n] (xs: [n]f64) (ys: [n]f64) : f64 = dot xs ys

-- ==
-- entry: sizes
-- input { [[1, 2, 3], [4, 5, 6]] } output { 2i64 3i64 3i64 [0.0, 0.0, 0.0] }
entry sizes [n][m] (a: [n][m]i32) : (i64, i64, i64, [m]f64) = (n, m, len a[0], zeros m)

-- A size parameter taken from an inner dimension.
-- ==
-- entry: inner
-- input { [[1, 2], [3, 4], [5, 6]] } output { [1, 2, 1, 2, 1, 2] }
entry inner [n][m] (a: [n][m]i32) : []i32 = flatten (replicate n (iota m |> map (\i -> i32.i64 i + 1)))

-- Constant sizes in types.
-- ==
-- entry: const_size
-- input { [1.0, 2.0, 3.0] } output { [2.0, 4.0, 6.0] }
entry const_size (v: [3]f64) : [3]f64 = map (* 2) v

-- Type ascription on expressions, fixing literal types.
-- ==
-- entry: ascription
-- input { } output { 255u8 [1i64, 2i64] 2.5f32 }
entry ascription : (u8, []i64, f32) = ((255 : u8), ([1, 2] : []i64), (2.5 : f32))

-- Size coercion with :> (checked at run time).
-- ==
-- entry: coerce
-- input { [1, 2, 3] [4, 5, 6] } output { [5, 7, 9] }
entry coerce [n][m] (xs: [n]i32) (ys: [m]i32) : [n]i32 = map2 (+) xs (ys :> [n]i32)

-- An existential size in a return type.
-- ==
-- entry: existential
-- input { [1, -2, 3, -4] } output { [1, 3] }
entry existential (xs: []i32) : ?[k].[k]i32 =
  let positives = loop acc = [] for x in xs do if x > 0 then acc ++ [x] else acc
  in positives

-- Sizes of slices and filtered results are unknown statically.
-- ==
-- entry: dynamic
-- input { [1, 2, 3, 4, 5] 2i64 } output { [3, 4, 5] 3i64 }
entry dynamic (xs: []i32) (k: i64) : ([]i32, i64) =
  let ys = xs[k:]
  in (ys, length ys)
