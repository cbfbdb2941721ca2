-- In-place updates: `with [i] = v`, `with [i, j] = v`, row and slice
-- updates, `let xs[i] = v`.

-- ==
-- entry: one
-- input { [1, 2, 3] 1i64 9 } output { [1, 9, 3] }
entry one (xs: *[]i32) (i: i64) (v: i32) : []i32 = xs with [i] = v

-- The original array is unchanged when it is still used (a copy is made).
-- ==
-- entry: keep_original
-- input { [1, 2, 3] } output { [1, 2, 3] [0, 2, 3] }
entry keep_original (xs: []i32) : ([]i32, []i32) =
  let ys = copy xs with [0] = 0
  in (xs, ys)

-- ==
-- entry: two_d
-- input { [[1, 2], [3, 4]] } output { [[1, 2], [3, 40]] [[1, 2], [7, 8]] }
entry two_d (m: [][]i32) : ([][]i32, [][]i32) =
  (copy m with [1, 1] = 40, copy m with [1] = [7, 8])

-- ==
-- entry: three_d
-- input { 2i64 } output { [[[0, 0], [0, 0]], [[0, 5], [0, 0]]] }
entry three_d (n: i64) : [][][]i32 =
  replicate n (replicate n (replicate n 0)) with [1, 0, 1] = 5

-- Updating a slice.
-- ==
-- entry: slice
-- input { [1, 2, 3, 4, 5] } output { [1, 7, 8, 4, 5] [0, 2, 0, 4, 0] }
entry slice (xs: []i32) : ([]i32, []i32) =
  (copy xs with [1:3] = [7, 8], copy xs with [::2] = [0, 0, 0])

-- `let xs[i] = v` and repeated updates in a loop.
-- ==
-- entry: let_form
-- input { 4i64 } output { [0, 1, 2, 3] [[1, 0], [0, 1]] }
entry let_form (n: i64) : ([]i32, [][]i32) =
  let xs = replicate n 0
  let xs = loop xs for i < n do
             let xs[i] = i32.i64 i
             in xs
  let m = replicate 2 (replicate 2 0)
  let m[0, 0] = 1
  let m[1, 1] = 1
  in (xs, m)

-- The value written can be computed from the array itself.
-- ==
-- entry: swap_elems
-- input { [1, 2, 3] 0i64 2i64 } output { [3, 2, 1] }
entry swap_elems (xs: *[]i32) (i: i64) (j: i64) : []i32 =
  let a = xs[i]
  let b = xs[j]
  in (xs with [i] = b) with [j] = a

-- Updating an array of tuples.
-- ==
-- entry: tuple_elems
-- input { [1, 2] [1.0, 2.0] } output { [1, 5] [1.0, 5.5] }
entry tuple_elems (xs: []i32) (ys: []f64) : ([]i32, []f64) =
  let ps = zip xs ys
  let ps = copy ps with [1] = (5, 5.5)
  in unzip ps

-- An update after a kernel that reads the array, with nothing read back in between: the
-- kernel sees the old elements (on Vulkan both are recorded in one submission, in order, and
-- the update writes in place).
-- ==
-- entry: after_a_reader
-- input { [1, 2, 3] } output { [2, 4, 6] [5, 2, 3] }
-- input { [7] } output { [14] [5] }
entry after_a_reader (xs: *[]i32) : ([]i32, []i32) =
  let s = map (* 2) xs
  in (s, xs with [0] = 5)

-- The same in a loop: each iteration's kernel reads the array its update then overwrites.
-- ==
-- entry: readers_in_a_loop
-- input { [1, 2, 3, 4] 3i64 } output { [100, 101, 102, 4] 163 }
entry readers_in_a_loop [n] (xs: *[n]i32) (k: i64) : ([n]i32, i32) =
  loop (xs, acc) = (xs, 0) for i < k do
    let s = i32.sum (map (* 2) xs)
    in (xs with [i] = 100 + i32.i64 i, acc + s / 4)
