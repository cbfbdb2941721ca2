-- map and map2 ... map5.

-- ==
-- entry: map1
-- input { [1, 2, 3] } output { [2, 4, 6] }
-- input { empty([0]i32) } output { empty([0]i32) }
entry map1 (xs: []i32) : []i32 = map (* 2) xs

-- map changes the element type.
-- ==
-- entry: map_types
-- input { [1, 2, 3] } output { [1.0, 2.0, 3.0] [false, true, false] }
entry map_types (xs: []i32) : ([]f64, []bool) = (map f64.i32 xs, map (\x -> x % 2 == 0) xs)

-- ==
-- entry: map_n
-- input { [1, 2] [10, 20] [100, 200] [1000, 2000] [10000, 20000] }
-- output { [11, 22] [111, 222] [1111, 2222] [11111, 22222] }
entry map_n (a: []i32) (b: []i32) (c: []i32) (d: []i32) (e: []i32) : ([]i32, []i32, []i32, []i32) =
  ( map2 (+) a b
  , map3 (\x y z -> x + y + z) a b c
  , map4 (\x y z w -> x + y + z + w) a b c d
  , map5 (\x y z w v -> x + y + z + w + v) a b c d e )

-- map over the rows of a matrix.
-- ==
-- entry: rows
-- input { [[1, 2], [3, 4]] } output { [3, 7] [[2, 1], [4, 3]] }
entry rows (m: [][]i32) : ([]i32, [][]i32) = (map (\r -> r[0] + r[1]) m, map reverse m)

-- map producing tuples, then unzipped.
-- ==
-- entry: tuple_out
-- input { [1, 2, 3] } output { [1, 2, 3] [1, 4, 9] }
entry tuple_out (xs: []i32) : ([]i32, []i32) = unzip (map (\x -> (x, x * x)) xs)

-- map producing arrays (a 2-D result).
-- ==
-- entry: array_out
-- input { [1, 2] } output { [[1, 1, 1], [2, 2, 2]] }
entry array_out (xs: []i32) : [][]i32 = map (\x -> replicate 3 x) xs

-- map with a function that uses free variables, including arrays.
-- ==
-- entry: free_vars
-- input { [0i64, 2i64, 1i64] [10, 20, 30] } output { [10, 30, 20] }
entry free_vars (is: []i64) (table: []i32) : []i32 = map (\i -> table[i]) is

-- Mismatched lengths are caught at run time (see errors_runtime.fut); here equal.
-- ==
-- entry: map2_f32
-- input { [1.0f32, 2.0f32] [0.5f32, 0.25f32] } output { [0.5f32, 0.5f32] }
entry map2_f32 (xs: []f32) (ys: []f32) : []f32 = map2 (*) xs ys
