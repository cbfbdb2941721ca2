-- Per-thread arrays inside a `map`: in-place updates, `scan`, `scatter`, `reduce_by_index`,
-- concatenation, array literals, `if` and `loop` with array results, reductions and scans over
-- arrays of arrays. On the Vulkan backend each thread keeps them in scratch memory.

-- ==
-- entry: update_row
-- input { [[1, 2, 3], [4, 5, 6]] [0i64, 2i64] } output { [[0, 2, 3], [4, 5, 0]] }
entry update_row (xss: [][]i32) (is: []i64) : [][]i32 =
  map2 (\xs i -> copy xs with [i] = 0) xss is

-- Out of bounds is an error.
-- ==
-- entry: update_oob
-- input { [[1, 2], [3, 4]] [0i64, 2i64] } error: out of bounds
entry update_oob (xss: [][]i32) (is: []i64) : [][]i32 =
  map2 (\xs i -> copy xs with [i] = 0) xss is

-- A loop updating a fresh array in place (checkpoints, as reverse-mode AD keeps them).
-- ==
-- entry: checkpoints
-- input { [1.0, 2.0] 4i64 } output { [[1.0, 2.0, 4.0, 8.0], [2.0, 4.0, 8.0, 16.0]] }
entry checkpoints (xs: []f64) (n: i64) : [][]f64 =
  map (\x ->
         let (_, cs) = loop (y, cs) = (x, replicate n 0.0) for i < n do
                         (y * 2.0, cs with [i] = y)
         in cs) xs

-- A loop whose array is replaced every iteration (double buffering) and one swapping arrays.
-- ==
-- entry: replaced
-- input { [[1, 2, 3], [4, 5, 6]] } output { [[3, 1, 2], [6, 4, 5]] [[4, 5, 6], [1, 2, 3]] }
entry replaced [n] (xss: [n][3]i32) : ([n][3]i32, [n][3]i32) =
  let rot = map (\xs -> loop ys = xs for _i < 4 do map (\j -> ys[(j + 2) % 3]) (iota 3)) xss
  let sw = map2 (\a b -> let (p, _) = loop (p, q) = (a, b) for _i < 3 do (q, p) in p)
                xss (reverse xss)
  in (rot, sw)

-- `scan` inside a map, on scalars and on tuples.
-- ==
-- entry: scans
-- input { [[1, 2, 3], [4, 5, 6]] }
-- output { [[1, 3, 6], [4, 9, 15]] [[1, 2, 6], [4, 20, 120]] [[3, 3, 3], [6, 6, 6]] }
entry scans (xss: [][]i32) : ([][]i32, [][]i32, [][]i32) =
  let s = map (\xs -> scan (+) 0 xs) xss
  let (_, p) = unzip (map (\xs -> unzip (scan (\(a, b) (c, d) -> (a + c, b * d)) (0, 1) (zip xs xs))) xss)
  let m = map (\xs -> map (\x -> x) (scan i32.max i32.lowest (reverse xs))) xss
  in (s, p, m)

-- `scan` over arrays of arrays inside a map.
-- ==
-- entry: scan_rows
-- input { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] }
-- output { [[[1, 2], [4, 6]], [[5, 6], [12, 14]]] }
entry scan_rows (xsss: [][][]i32) : [][][]i32 =
  map (\xss -> scan (map2 (+)) (replicate 2 0) xss) xsss

-- `reduce` over arrays of arrays inside a map.
-- ==
-- entry: reduce_rows
-- input { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] } output { [[4, 6], [12, 14]] }
entry reduce_rows (xsss: [][][]i32) : [][]i32 =
  map (\xss -> reduce (map2 (+)) (replicate 2 0) xss) xsss

-- `scatter` and `reduce_by_index` inside a map (later writes win; out-of-range ignored).
-- ==
-- entry: scatter_hist
-- input { [[1, 2, 3], [4, 5, 6]] }
-- output { [[3, 0, 1, 0], [6, 0, 4, 0]] [[4, 0, 2], [10, 0, 5]] }
entry scatter_hist (xss: [][]i32) : ([][]i32, [][]i32) =
  let s = map (\xs -> scatter (replicate 4 0) [2, 0, 9, 0] [xs[0], xs[1], 7, xs[2]]) xss
  let h = map (\xs -> hist (+) 0 3 [0, 2, 0, -1] [xs[0], xs[1], xs[2], 100]) xss
  in (s, h)

-- Concatenation and array literals.
-- ==
-- entry: concat_lit
-- input { [[1, 2], [3, 4]] }
-- output { [[1, 2, 2, 1, 0], [3, 4, 4, 3, 0]] [[[1, 2], [2, 1]], [[3, 4], [4, 3]]] }
entry concat_lit (xss: [][]i32) : ([][]i32, [][][]i32) =
  (map (\xs -> xs ++ reverse xs ++ [0]) xss, map (\xs -> [xs, reverse xs]) xss)

-- `if` with array results (different sizes per branch are allowed).
-- ==
-- entry: if_arrays
-- input { [[1, 2, 3], [4, 5, 6]] } output { [[1, 2, 3], [6, 5, 4]] [3i64, 1i64] }
entry if_arrays (xss: [][]i32) : ([][]i32, []i64) =
  let a = map (\xs -> if xs[0] > 2 then reverse xs else copy xs with [0] = xs[0]) xss
  let b = map (\xs -> length (if xs[0] > 2 then [xs[0]] else xs)) xss
  in (a, b)

-- Per-thread arrays inside an inner map, and one inner map that reads an array later updated.
-- ==
-- entry: nested
-- input { [[1, 2], [3, 4]] } output { [[3, 5], [7, 9]] [[2, 5], [6, 11]] }
entry nested (xss: [][]i32) : ([][]i32, [][]i32) =
  let a = map (\xs -> map (\x -> (scan (+) 0 [x, x + 1])[1]) xs) xss
  let b = map (\xs -> let ys = copy xs
                      let zs = map (\y -> y + ys[0]) ys
                      let ys = ys with [0] = 0
                      in map2 (+) zs ys) xss
  in (a, b)

-- A reshape of a per-thread array and a transposition of an inner map's result.
-- ==
-- entry: reshape_transpose
-- input { [[1, 2, 3, 4], [5, 6, 7, 8]] }
-- output { [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] [[[0, 1], [0, 2]], [[0, 5], [0, 6]]] }
entry reshape_transpose (xss: [][]i32) : ([][][]i32, [][][]i32) =
  (map (\xs -> unflatten (copy xs with [0] = xs[0]) :> [2][2]i32) xss,
   map (\xs -> transpose (map (\j -> map (\x -> x * j) (take 2 xs)) (iota 2 |> map i32.i64))) xss)

-- A scan and the outputs reading several results of one inner map (computed once per row).
-- ==
-- entry: shared_rows
-- input { [[1, 2, 3], [4, 5, 6]] }
-- output { [[2, 5, 9], [5, 11, 18]] [[2, 8, 48], [8, 80, 960]] [[2, 3, 4], [5, 6, 7]] }
entry shared_rows (xss: [][]i32) : ([][]i32, [][]i32, [][]i32) =
  let r = map (\xs -> let (a, b) = unzip (map (\x -> (x + 1, x * 2)) xs)
                      in unzip (scan (\(p, q) (c, d) -> (p + c, q * d)) (0, 1) (zip a b))) xss
  let (s, p) = unzip r
  let t = map (\xs -> map (+ 1) xs) xss
  in (s, p, t)
