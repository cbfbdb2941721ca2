-- Pending: `split` takes its sizes from the argument's type `[n+m]t`, which needs size
-- expressions in types (the type checker tracks sizes leniently and has none yet). Not run by
-- CI; move back to tests/programs once size expressions exist.
-- split: the sizes come from the argument's type [n+m].
-- ==
-- entry: split_concat
-- input { [1, 2] [3, 4, 5] } output { [2, 3] [4, 5, 6] }
entry split_concat [n][m] (xs: [n]i32) (ys: [m]i32) : ([n]i32, [m]i32) =
  let (a, b) = split (xs ++ ys)
  in (map (+ 1) a, map (+ 1) b)

