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

-- Size parameters that the parameters' types mention only inside size expressions (`[p*q]t`,
-- `[1+n]t`, `[n*2]t`) are found at each call by matching the argument's type (as in Futhark).

def row_sums [p] [q] (xs: [p * q]f64) : ([p]f64, i64) =
  (map f64.sum (unflatten xs : [p][q]f64), q)

-- a = [[1,2,3],[4,5,6]]: flatten a : [2*3]f64, so p = 2, q = 3; rows sum to 6 and 15.
-- ==
-- entry: rows
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] } output { [6.0, 15.0] 3i64 }
entry rows [n] [m] (a: [n][m]f64) = row_sums (flatten a)

def tail1 [n] (xs: [1 + n]i64) : ([n]i64, i64) = (xs[1:] :> [n]i64, n)

-- iota (1 + 3) : [1+3]i64, so n = 3: the tail is [1, 2, 3].
-- ==
-- entry: tails
-- input { 3i64 } output { [1i64, 2i64, 3i64] 3i64 }
entry tails (k: i64) = tail1 (iota (1 + k))

def halves [n] (xs: [n * 2]i32) : [n][2]i32 = unflatten xs

-- As in adbench's lstm: `sized (h * 2) xs` gives the argument the type `[h*2]i32`, so n = h = 3.
-- ==
-- entry: pairs
-- input { [1, 2, 3, 4, 5, 6] } output { [[1, 2], [3, 4], [5, 6]] }
entry pairs [l] (xs: [l]i32) =
  let h = l / 2
  in halves (sized (h * 2) xs)

def jac [k] [p] [q] (rows: [p * q][k]f64) : [k][p][q]f64 = map unflatten (transpose rows)

-- a : [1][3][2]f64, flatten a : [1*3][2]f64, so k = 2, p = 1, q = 3; out[c][i][j] = a[i][j][c].
-- ==
-- entry: jacobian
-- input { [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]] }
-- output { [[[1.0, 3.0, 5.0]], [[2.0, 4.0, 6.0]]] }
entry jacobian [n] [m] [k] (a: [n][m][k]f64) = jac (flatten a)

def sumsq_rows [p] [q] (xs: [p * q]f64) : [p]f64 =
  map (\r -> f64.sum (map (\x -> x * x) r)) (unflatten xs : [p][q]f64)

-- d/dx of sum_j x[i,j]^2 is 2*x[i,j], scaled by the seed of row i:
-- a = [[1,2],[3,4]], seed = [1,10]: [2*1*1, 2*2*1, 2*3*10, 2*4*10] = [2, 4, 60, 80].
-- ==
-- entry: grad
-- input { [[1.0, 2.0], [3.0, 4.0]] [1.0, 10.0] } output { [2.0, 4.0, 60.0, 80.0] }
entry grad [n] [m] (a: [n][m]f64) (seed: [n]f64) = vjp sumsq_rows (flatten a) seed

-- The same through a lambda, and jvp: the tangent [1,0,0,1] gives [2*1*1 + 0, 0 + 2*4*1].
-- ==
-- entry: grad_lambda
-- input { [[1.0, 2.0], [3.0, 4.0]] [1.0, 10.0] }
-- output { [2.0, 4.0, 60.0, 80.0] [2.0, 8.0] }
entry grad_lambda [n] [m] (a: [n][m]f64) (seed: [n]f64) =
  let xs = flatten a
  in ( vjp (\ys -> sumsq_rows ys) xs seed
     , jvp sumsq_rows xs (map (\i -> if i == 0 || i == n * m - 1 then 1 else 0) (iota (n * m)))
     )

-- An argument of tabulate that is not a size expression gives the size `[i64.sum ks + n]`, so
-- split finds `i64.sum ks` and `n` (futhark/tests/ad/flatmap0.fut): ks = [1, 2], n = 2, so
-- the rows of the transpose are [10i, 10i+1, ..., 10i+4] for i = 0, 1, split after 3.
-- ==
-- entry: split_expr
-- input { [1i64, 2i64] } output { [[0i64, 1i64, 2i64], [10i64, 11i64, 12i64]] [[3i64, 4i64], [13i64, 14i64]] }
entry split_expr [n] (ks: [n]i64) =
  unzip
  <| map split
  <| transpose
  <| tabulate (i64.sum ks + n) (\j -> map (\i -> i * 10 + j) (iota n))

-- Any expression of type i64 as a size in a coercion (`opaque`, a call, a field): evaluated at
-- the coercion, checked against the array, and the size of the result (as linalg's lu does
-- with `a :> [opaque 1*b][b]t`, then `unflatten`).
-- ==
-- entry: coerce_opaque
-- input { [[1.0, 2.0], [3.0, 4.0]] } output { [[2.0, 4.0], [6.0, 8.0]] }
entry coerce_opaque [b] (a: [b][b]f64) : [b][b]f64 =
  map (\m -> map (map (* 2)) m) (unflatten (a :> [opaque 1 * b][b]f64)) |> head

-- ==
-- entry: coerce_call
-- input { [1, 2, 3, 4, 5, 6] } output { [[1, 2, 3], [4, 5, 6]] }
-- input { [1, 2, 3, 4, 5] } error: size
entry coerce_call (xs: []i32) : [][]i32 =
  let half (n: i64) = n / 2
  in unflatten (xs :> [half 4 * i64.i32 (i32.abs (-3))]i32)

-- ==
-- entry: ascribe_expr
-- input { [1, 2, 3] } output { 3i64 }
entry ascribe_expr [n] (xs: [n]i32) : i64 =
  let ys = (xs : [opaque n]i32) in length ys

-- A function whose inferred result size is an expression over its argument (`seeds` of
-- Futhark's tests/ad/flatmap1.fut): `pairs2 ks` has type `[i64.sum ks * 2]f64`, so `rows2`
-- solves its `[p*q]` parameter as p = i64.sum ks, q = 2, from the argument's 2*(1+2) = 6 rows.
-- Two calls with different arguments each give their own size (3 and 4 rows), and a call
-- inside a map works per element (sums 3 and 3). Rows of `pairs2 [1, 2]`: [0, 1], [2, 3], [4, 5].
-- ==
-- entry: result_exprs
-- input { [1i64, 2i64] [4i64] } output { 3i64 4i64 [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]] [3i64, 3i64] }
def rows2 [p] [q] (xs: [p*q]f64) : [p][q]f64 = unflatten xs
def pairs2 (ks: []i64) = flatten (tabulate_2d (i64.sum ks) 2 (\i j -> f64.i64 (i * 2 + j)))

entry result_exprs (ks: []i64) (ls: []i64) =
  let a = pairs2 ks
  let b = pairs2 ls
  in ( length (rows2 a)
     , length (rows2 b)
     , rows2 (pairs2 ks)
     , map (\k -> length (rows2 (pairs2 [k, 3 - k]))) [1, 2]
     )
