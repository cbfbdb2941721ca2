-- Let bindings and patterns: names, tuples, nesting, wildcards, type
-- annotations, shadowing, `let` without `in`, and `let xs[i] = v`.

-- ==
-- entry: basic
-- input { 3 } output { 10 }
entry basic (x: i32) : i32 =
  let y = x + 1 in
  let z = y * 2 in
  z + 2

-- `in` may be left out before another `let`.
-- ==
-- entry: chained
-- input { 3 } output { 24 }
entry chained (x: i32) : i32 =
  let a = x + 1
  let b = a * 2
  let c = b * 3
  in c

-- ==
-- entry: tuple_pat
-- input { 1 2 3 } output { 6 3 1 }
entry tuple_pat (a: i32) (b: i32) (c: i32) : (i32, i32, i32) =
  let (x, (y, z)) = (a, (b, c))
  let (p, _) = (x + y, z)
  let (_, q, _) = (1, z, 3)
  in (p + q, q, x)

-- Type annotations in patterns.
-- ==
-- entry: annotated
-- input { 2 } output { 2.5 7i64 }
entry annotated (x: i32) : (f64, i64) =
  let (a: f64, b: i64) = (f64.i32 x + 0.5, 7)
  let c: f64 = a
  in (c, b)

-- Shadowing: a new binding hides the old one from then on.
-- ==
-- entry: shadow
-- input { 1 } output { 4 1 }
entry shadow (x: i32) : (i32, i32) =
  let y = x
  let x = x + 1
  let x = x * 2
  in (x, y)

-- `let xs[i] = v` is an in-place update of xs.
-- ==
-- entry: let_update
-- input { [1, 2, 3] } output { [1, 20, 3] [[0, 0], [0, 7]] }
entry let_update (xs: []i32) : ([]i32, [][]i32) =
  let ys = copy xs
  let ys[1] = 20
  let m = replicate 2 (replicate 2 0)
  let m[1, 1] = 7
  in (ys, m)

-- A pattern bound to a function result that is a tuple.
-- ==
-- entry: from_call
-- input { [3, 1, 2] } output { 1 3 }
entry from_call (xs: []i32) : (i32, i32) =
  let minmax (ys: []i32) = (i32.minimum ys, i32.maximum ys)
  let (lo, hi) = minmax xs
  in (lo, hi)
