-- split: the sizes come from the argument's type [n+m].
-- ==
-- entry: split_concat
-- input { [1, 2] [3, 4, 5] } output { [2, 3] [4, 5, 6] }
entry split_concat [n][m] (xs: [n]i32) (ys: [m]i32) : ([n]i32, [m]i32) =
  let (a, b) = split (xs ++ ys)
  in (map (+ 1) a, map (+ 1) b)

