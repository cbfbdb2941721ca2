-- id, const, curry, uncurry, foldl, foldr, all, any, tabulate*.

-- ==
-- entry: basics
-- input { 3 } output { 3 [5, 5] 7 7 }
entry basics (x: i32) : (i32, []i32, i32, i32) =
  let add (a: i32) (b: i32) = a + b
  let add_pair (p: (i32, i32)) = p.0 + p.1
  in (id x, map (const 5) [x, x], uncurry add (x, 4), curry add_pair x 4)

-- foldl and foldr visit the elements in opposite orders.
-- ==
-- entry: folds
-- input { [1, 2, 3] } output { -6 2 123 321 }
-- input { empty([0]i32) } output { 0 0 0 0 }
entry folds (xs: []i32) : (i32, i32, i32, i32) =
  ( foldl (-) 0 xs
  , foldr (-) 0 xs
  , foldl (\acc d -> acc * 10 + d) 0 xs
  , foldr (\d acc -> acc * 10 + d) 0 xs )

-- foldl with different accumulator and element types.
-- ==
-- entry: fold_types
-- input { [1, 2, 3] } output { 6.0 }
entry fold_types (xs: []i32) : f64 = foldl (\acc x -> acc + f64.i32 x) 0 xs

-- ==
-- entry: all_any
-- input { [2, 4, 6] } output { true true false }
-- input { [2, 3, 6] } output { false true true }
-- input { empty([0]i32) } output { true false false }
entry all_any (xs: []i32) : (bool, bool, bool) =
  (all (\x -> x % 2 == 0) xs, any (\x -> x % 2 == 0) xs, any (\x -> x % 2 == 1) xs)

-- ==
-- entry: tab
-- input { 2i64 3i64 }
-- output { [0i64, 1i64] [[0i64, 1i64, 2i64], [10i64, 11i64, 12i64]]
--          [[[0i64, 1i64], [10i64, 11i64], [20i64, 21i64]], [[100i64, 101i64], [110i64, 111i64], [120i64, 121i64]]] }
entry tab (n: i64) (m: i64) : ([]i64, [][]i64, [][][]i64) =
  ( tabulate n (\i -> i)
  , tabulate_2d n m (\i j -> i * 10 + j)
  , tabulate_3d n m 2 (\i j k -> i * 100 + j * 10 + k) )

-- tabulate with a function returning an array.
-- ==
-- entry: tab_rows
-- input { 3i64 } output { [[1, 0, 0], [0, 1, 0], [0, 0, 1]] }
entry tab_rows (n: i64) : [][]i32 = tabulate n (\i -> replicate n 0 with [i] = 1)
