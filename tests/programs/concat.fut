-- Concatenation: `++` and `concat`.

-- ==
-- entry: one_d
-- input { [1, 2] [3, 4, 5] } output { [1, 2, 3, 4, 5] [3, 4, 5, 1, 2] 5i64 }
-- input { empty([0]i32) [3] } output { [3] [3] 1i64 }
-- input { empty([0]i32) empty([0]i32) } output { empty([0]i32) empty([0]i32) 0i64 }
entry one_d (xs: []i32) (ys: []i32) : ([]i32, []i32, i64) =
  (xs ++ ys, concat ys xs, length (xs ++ ys))

-- Concatenating 2-D arrays joins their rows.
-- ==
-- entry: two_d
-- input { [[1, 2]] [[3, 4], [5, 6]] } output { [[1, 2], [3, 4], [5, 6]] }
entry two_d [m] (a: [][m]i32) (b: [][m]i32) : [][m]i32 = a ++ b

-- `++` is left-associative and binds like `+`.
-- ==
-- entry: chain
-- input { [1] [2] [3] } output { [1, 2, 3, 1] }
entry chain (a: []i32) (b: []i32) (c: []i32) : []i32 = a ++ b ++ c ++ [1]

-- Concatenation of arrays of tuples and of floats.
-- ==
-- entry: tuples
-- input { [1, 2] [1.0, 2.0] } output { [1, 2, 1, 2] [1.0, 2.0, 1.0, 2.0] }
entry tuples (xs: []i32) (ys: []f64) : ([]i32, []f64) =
  let ps = zip xs ys
  in unzip (ps ++ ps)
