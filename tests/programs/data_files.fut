-- Test cases whose values are in files (`input @ file`, `output @ file`),
-- in the text and binary value formats.

-- ==
-- entry: matvec
-- input @ data/matvec.in output @ data/matvec.out
entry matvec [n][m] (a: [n][m]f64) (v: [m]f64) : [n]f64 =
  map (\row -> f64.sum (map2 (*) row v)) a

-- data/mixed.in holds a binary [2][3]f64 matrix, a binary i64 scalar and
-- a text [3]i32 array.
-- ==
-- entry: mixed
-- input @ data/mixed.in output { [6.0, 15.0] -3i64 60 }
entry mixed (a: [][]f64) (k: i64) (xs: []i32) : ([]f64, i64, i32) = (map f64.sum a, k, i32.sum xs)
