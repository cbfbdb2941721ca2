-- Index sections `(.[i])`, `(.[i, j])`, `(.[i:j])`: the functions `\x -> x[i]` and so on.
-- Expected values worked out by hand.

-- xss = [[1, 2, 0], [-3, 4, 5]]: first column [1, -3]; rows without their first element
-- [2, 0, 4, 5] (flattened); the block xss[0:1, 1:] = [[2, 0]]; column xss[0, 0] = 1: [2, 4];
-- element [1, 2] of each of [xss] = [5].
-- ==
-- input { [[1, 2, 0], [-3, 4, 5]] }
-- output { [1, -3] [2, 0, 4, 5] [[2, 0]] [2, 4] [5] }
entry main (xss: [][]i32) : ([]i32, []i32, [][]i32, []i32, []i32) =
  ( map (.[0]) xss
  , map (.[1:]) xss |> flatten
  , (.[0:1, 1:]) xss
  , map (.[i64.i32 xss[0, 0]]) xss
  , map (.[1, 2]) [xss]
  )

-- Out of bounds is the usual run-time error.
-- ==
-- entry: oob
-- input { [[1, 2], [3, 4]] 2i64 } error: out of bounds
entry oob (xss: [][]i32) (i: i64) : []i32 = map (.[i]) xss

-- Through `vjp`: the adjoint of sum (map (.[1]) xss) puts 1 in column 1.
-- ==
-- entry: rev
-- input { [[1.0, 2.0], [3.0, 4.0]] } output { [[0.0, 1.0], [0.0, 1.0]] }
entry rev (xss: [][]f64) : [][]f64 = vjp (\m -> f64.sum (map (.[1]) m)) xss 1.0
