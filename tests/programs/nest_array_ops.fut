-- Array statements in a map nest that flattening distributes (rule 4): `replicate`, `copy`,
-- `iota` and in-place updates of rows get kernels over the nest and the row
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

-- A row of indices per thread (`iota k`), reduced twice: sum (i + x) = k(k-1)/2 + k x and
-- max (i * x) = (k-1) x for x >= 0, 0 for x < 0. For k = 100000 (one thread per row would
-- write 100000 indices), x = 3: 4999950000 + 300000 and 299997; x = -1: 4999950000 - 100000
-- and 0.
-- ==
-- entry: index_rows
-- input { [3i64, -1i64] 100000i64 } output { [5000250000i64, 4999850000i64] [299997i64, 0i64] }
-- input { [2i64] 0i64 } output { [0i64] [-9223372036854775808i64] }
-- input { empty([0]i64) 5i64 } output { empty([0]i64) empty([0]i64) }
entry index_rows [n] (xs: [n]i64) (k: i64) : ([n]i64, [n]i64) =
  unzip (map (\x -> let is = iota k
                    in (i64.sum (map (+ x) is), i64.maximum (map (* x) is)))
             xs)
