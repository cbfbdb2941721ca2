-- Array statements in a map nest that flattening distributes (rule 4): `replicate`, `copy`
-- and in-place updates of rows get kernels over the nest and the row
-- (core/src/flatten/array_ops.rs), where before each thread looped over its row. The nests
-- below have a `reduce` after the array statements, so below the nest threshold they are
-- distributed; above it (and on the interpreter) they run as written. Expected values worked
-- out by hand.

-- Row i of the result is xs weighted by the one-hot row e_i, summed: xs[i]; and the sum of
-- a copy of xs, each element times 2: 2 * (1 + 2 + 4) = 14 for every row.
-- ==
-- entry: onehot
-- input { [1f32, 2f32, 4f32] } output { [1f32, 2f32, 4f32] [14f32, 14f32, 14f32] }
-- input { empty([0]f32) } output { empty([0]f32) empty([0]f32) }
entry onehot [n] (xs: [n]f32) : ([n]f32, [n]f32) =
  unzip (map (\i -> let e = replicate n 0f32 with [i] = 1f32
                    let c = copy xs
                    let c2 = map (* 2) c
                    in (f32.sum (map2 (*) e xs), f32.sum c2))
             (iota n))

-- Rows as seeds: row i of the [n][k] one-hot matrix is all ones at row i. Summing the matrix
-- times xss gives the sum of row i of xss: [1 + 2, 3 + 4, 5 + 6] = [3, 7, 11].
-- ==
-- entry: onehot_rows
-- input { [[1f64, 2f64], [3f64, 4f64], [5f64, 6f64]] } output { [3f64, 7f64, 11f64] }
entry onehot_rows [n][k] (xss: [n][k]f64) : [n]f64 =
  map (\i -> let e = replicate n (replicate k 0f64) with [i] = replicate k 1f64
             in f64.sum (map2 (\er xr -> f64.sum (map2 (*) er xr)) e xss))
      (iota n)

-- The update's index is checked as the update itself would be: i + 1 is out of bounds for
-- the last row.
-- ==
-- entry: shifted
-- input { [1f32, 2f32, 4f32] } error: out of bounds
-- input { empty([0]f32) } output { empty([0]f32) }
entry shifted [n] (xs: [n]f32) : [n]f32 =
  map (\i -> let e = replicate n 0f32 with [i + 1] = 1f32
             in f32.sum (map2 (*) e xs))
      (iota n)
