-- Size expressions in types ([n*m], [n+m], [n-1]), and the functions whose result sizes the
-- type checker infers from them: unflatten, unflatten_3d, split; plus sized and the function
-- composition operators >-> and <-<.

-- unflatten takes n and m from the declared result type.
-- ==
-- entry: unflatten_ret
-- input { [1, 2, 3, 4, 5, 6] } output { [[1, 2, 3], [4, 5, 6]] }
-- input { [1, 2, 3, 4, 5] } error: size
entry unflatten_ret (xs: []i32) : [2][3]i32 = unflatten (xs :> [2*3]i32)

-- unflatten takes n and m from the argument's type [n*m] (here from flatten).
-- ==
-- entry: unflatten_arg
-- input { [[1, 2], [3, 4], [5, 6]] } output { [[2, 3], [4, 5], [6, 7]] }
entry unflatten_arg [n] [m] (xss: [n][m]i32) : [n][m]i32 =
  let ys = map (+ 1) (flatten xss)
  in unflatten ys

-- A type annotation on a let binding fixes the sizes; n*m is computed at run time.
-- ==
-- entry: unflatten_let
-- input { 2i64 3i64 } output { [[0i64, 1i64, 2i64], [3i64, 4i64, 5i64]] }
-- input { 3i64 1i64 } output { [[0i64], [1i64], [2i64]] }
entry unflatten_let (n: i64) (m: i64) : [n][m]i64 =
  let xss: [n][m]i64 = unflatten (iota (n * m))
  in xss

-- A size-coerced argument gives the sizes; m is a local variable.
-- ==
-- entry: unflatten_coerce
-- input { 2i64 [1.0, 2.0, 3.0, 4.0] } output { [3.0, 7.0] }
-- input { 3i64 [1.0, 2.0, 3.0, 4.0] } error: size
entry unflatten_coerce [k] (n: i64) (xs: [k]f64) : [n]f64 =
  let m = k / n
  let xss = unflatten (xs :> [n*m]f64)
  in map f64.sum xss

-- unflatten_3d with the sizes from the result type.
-- ==
-- entry: unflatten3
-- input { [1, 2, 3, 4, 5, 6, 7, 8] }
-- output { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] }
entry unflatten3 (xs: [8]i32) : [2][2][2]i32 = unflatten_3d (xs :> [2*2*2]i32)

-- unflatten through a pipeline (sizes from tabulate's argument).
-- ==
-- entry: unflatten_tabulate
-- input { 2i64 2i64 } output { [[0i64, 10i64], [20i64, 30i64]] }
entry unflatten_tabulate (n: i64) (m: i64) =
  tabulate (n * m) (\i -> i * 10) |> unflatten

-- split takes n and m from the argument's type [n+m] (xs ++ ys).
-- ==
-- entry: split_sizes
-- input { [1, 2] [3, 4, 5] } output { 2i64 3i64 [3, 4, 5] }
-- input { empty([0]i32) [7] } output { 0i64 1i64 [7] }
entry split_sizes [n] [m] (xs: [n]i32) (ys: [m]i32) : (i64, i64, [m]i32) =
  let (a, b) = split (xs ++ ys)
  in (length a, length b, b)

-- split with the sizes from a type annotation; n - 1 is a size expression.
-- ==
-- entry: split_annot
-- input { [1, 2, 3, 4] } output { [1] [2, 3, 4] }
entry split_annot [n] (xs: [n]i32) : ([1]i32, [n-1]i32) =
  let (a: [1]i32, b: [n-1]i32) = split (xs :> [1+(n-1)]i32)
  in (a, b)

-- sized changes an array's size (checked at run time).
-- ==
-- entry: sized_ok
-- input { [1, 2, 3] } output { [2, 4, 6] }
-- input { [1, 2] } error: size
entry sized_ok (xs: []i32) : [3]i32 = map (* 2) (sized 3 xs)

-- Function composition: (f >-> g) x = g (f x), (g <-< f) x = g (f x).
-- ==
-- entry: compose
-- input { 5 } output { 12 11 [2, 4, 6] 6 }
entry compose (x: i32) : (i32, i32, []i32, i32) =
  let f = (+ 1) >-> (* 2)
  let g = (+ 1) <-< (* 2)
  let h = (+ 1) >-> (* 2) >-> (\y -> y / 2)
  in (f x, g x, map ((* 2) <-< (+ 1)) [0, 1, 2], h x)

-- >-> has the precedence of the comparison operators, below + and above |>.
-- ==
-- entry: compose_prec
-- input { [1, 2, 3] } output { 9 }
entry compose_prec (xs: []i32) : i32 =
  xs |> map (+ 1) >-> i32.sum

-- A coercion to a size expression is checked at run time.
-- ==
-- entry: coerce_expr
-- input { 2i64 [1, 2, 3, 4, 5, 6] } output { [1, 2, 3, 4, 5, 6] }
-- input { 2i64 [1, 2, 3, 4, 5] } error: size
entry coerce_expr (n: i64) (xs: []i32) : [n*3]i32 = xs :> [n*3]i32
