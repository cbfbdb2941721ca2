-- Anonymous functions: one or more parameters, tuple parameters, type
-- annotations, closures, lambdas bound by `let`, curried application.

-- ==
-- entry: simple
-- input { [1, 2, 3] } output { [2, 3, 4] }
entry simple (xs: []i32) : []i32 = map (\x -> x + 1) xs

-- ==
-- entry: two_params
-- input { [1, 2, 3] [10, 20, 30] } output { [21, 42, 63] }
entry two_params (xs: []i32) (ys: []i32) : []i32 = map2 (\x y -> x + 2 * y) xs ys

-- ==
-- entry: tuple_param
-- input { [1, 2, 3] [4, 5, 6] } output { [4, 10, 18] }
entry tuple_param (xs: []i32) (ys: []i32) : []i32 = map (\(a, b) -> a * b) (zip xs ys)

-- ==
-- entry: annotated
-- input { [1.0f32, 4.0f32] } output { [2.0f32, 5.0f32] }
entry annotated (xs: []f32) : []f32 = map (\(x: f32) : f32 -> x + 1) xs

-- A lambda captures the variables in scope.
-- ==
-- entry: closure
-- input { [1, 2, 3] 10 } output { [11, 12, 13] [10, 20, 30] }
entry closure (xs: []i32) (k: i32) : ([]i32, []i32) =
  let scale = k / 10
  in (map (\x -> x + k) xs, map (\x -> x * k * scale) xs)

-- A lambda bound by let, applied directly and partially.
-- ==
-- entry: let_bound
-- input { 3 } output { 7 [4, 5] }
entry let_bound (x: i32) : (i32, []i32) =
  let add = \a b -> a + b
  let inc = add 1
  in (add x 4, map inc [x, x + 1])

-- Nested lambdas.
-- ==
-- entry: nested
-- input { [[1, 2], [3, 4]] } output { [[2, 4], [6, 8]] }
entry nested (xss: [][]i32) : [][]i32 = map (\xs -> map (\x -> x * 2) xs) xss

-- A lambda as the last argument needs no parentheses.
-- ==
-- entry: last_arg
-- input { 3i64 } output { [0i64, 1i64, 4i64] }
entry last_arg (n: i64) : []i64 = tabulate n \i -> i * i

-- A lambda returning a tuple, and one taking a wildcard.
-- ==
-- entry: tuple_result
-- input { [1, 2] } output { [1, 2] [1, 4] [7, 7] }
entry tuple_result (xs: []i32) : ([]i32, []i32, []i32) =
  let (a, b) = unzip (map (\x -> (x, x * x)) xs)
  in (a, b, map (\_ -> 7) xs)
