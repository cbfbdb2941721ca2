-- The accumulator functions of Futhark's `intrinsics` module (as Futhark's
-- tests/accs/intrinsics.fut wraps them): `scatter_stream`, `hist_stream` and `acc_write`.
-- Expected values worked out by hand in the comments.

type~ acc 't = intrinsics.acc t

def write [n] 't (acc: *acc ([n]t)) (i: i64) (v: t) : *acc ([n]t) =
  intrinsics.acc_write acc i v

-- Writes 10*i at i for i in [0, 2, 7]; 7 is out of bounds and ignored: [0, 0, 20, 0, 40]
-- with 4 -> 40 as well.
-- ==
-- entry: scatter
-- input { [0i64, 2i64, 7i64, 4i64] } output { [0i64, 0i64, 20i64, 0i64, 40i64] }
entry scatter (is: []i64) =
  intrinsics.scatter_stream (replicate 5 0i64) (\acc i -> write acc i (10 * i)) is

-- Adds 1 at every index into [1, 1, 1, 1]: counts 1, 2, 0, 3 of indices 0..3 give
-- [2, 3, 1, 4]; -1 and 4 are ignored.
-- ==
-- entry: histogram
-- input { [0i64, 1i64, 1i64, 3i64, 3i64, 3i64, -1i64, 4i64] } output { [2i32, 3i32, 1i32, 4i32] }
entry histogram (is: []i64) =
  intrinsics.hist_stream (replicate 4 1i32) (+) 0 (\acc i -> write acc i 1) is

-- Two updates per element: 1 at i and 10 at i+1. For is = [0, 0, 2]: cell 0 gets 1+1 = 2,
-- cell 1 gets 10+10 = 20, cell 2 gets 1, cell 3 gets 10: [2, 20, 1, 10].
-- ==
-- entry: two_writes
-- input { [0i64, 0i64, 2i64] } output { [2i32, 20i32, 1i32, 10i32] }
entry two_writes (is: []i64) =
  intrinsics.hist_stream (replicate 4 0i32) (+) 0
                         (\acc i -> write (write acc i 1) (i + 1) 10) is

-- A destination of two arrays (an array of pairs) with the operator (+, max), neutral
-- (0, -inf): cell 0 gets (1+3, max 0.5 2.5), cell 1 is untouched (0, 0), cell 2 gets (2, 7).
-- ==
-- entry: pairs
-- input { [0i64, 2i64, 0i64] [1i32, 2i32, 3i32] [0.5, 7.0, 2.5] }
-- output { [4i32, 0i32, 2i32] [2.5, 0.0, 7.0] }
entry pairs [n] (is: [n]i64) (as: [n]i32) (bs: [n]f64) =
  let dest = replicate 3 (0i32, 0f64)
  let op (a1, b1) (a2, b2) = (a1 + a2, f64.max b1 b2)
  in unzip (intrinsics.hist_stream dest op (0, -f64.inf)
                                   (\acc (i, a, b) -> write acc i (a, b))
                                   (zip3 is as bs))

-- Rows of a 2-d destination: row i of a 3x2 zero matrix becomes [x, 2x].
-- ==
-- entry: rows
-- input { [2i64, 0i64] [1.5, 4.0] } output { [[4.0, 8.0], [0.0, 0.0], [1.5, 3.0]] }
entry rows [n] (is: [n]i64) (xs: [n]f64) =
  intrinsics.scatter_stream (replicate 3 (replicate 2 0f64))
                            (\acc (i, x) -> write acc i [x, 2 * x])
                            (zip is xs)

-- Rows with a vectorised operator (`map2 (+)`, as Futhark's tests/accs/hist2.fut): each
-- (i, x) adds [x, 10x] to row i of a 3x2 matrix of ones; -1 and 3 are out of range and
-- ignored. Row 0 gets [2, 20], row 2 gets [1, 10] + [3, 30]: [[3, 21], [1, 1], [5, 41]].
-- ==
-- entry: vector_rows
-- input { [2i64, 0i64, 2i64, -1i64, 3i64] [1i32, 2i32, 3i32, 4i32, 5i32] }
-- output { [[3i32, 21i32], [1i32, 1i32], [5i32, 41i32]] }
entry vector_rows [n] (is: [n]i64) (xs: [n]i32) =
  intrinsics.hist_stream (replicate 3 (replicate 2 1i32)) (map2 (+)) (replicate 2 0)
                         (\acc (i, x) -> write acc i [x, 10 * x])
                         (zip is xs)

-- The same with `map2 f64.max` (no device atomic: a compare-exchange per element). Rows of
-- zeros; (i, x) gives [x, -x, 2x]: row 0 is the maximum of 0, [1.5, -1.5, 3] and
-- [0.5, -0.5, 1], row 1 of 0 and [-2, 2, -4].
-- ==
-- entry: vector_rows_max
-- input { [0i64, 1i64, 0i64] [1.5, -2.0, 0.5] }
-- output { [[1.5, 0.0, 3.0], [0.0, 2.0, 0.0]] }
entry vector_rows_max [n] (is: [n]i64) (xs: [n]f64) =
  intrinsics.hist_stream (replicate 2 (replicate 3 0f64)) (map2 f64.max)
                         (replicate 3 (-f64.inf))
                         (\acc (i, x) -> write acc i [x, -x, 2 * x])
                         (zip is xs)

-- Rows of pairs with a vectorised operator on pairs (+ on the first, max on the second):
-- (i, x) gives the row [(1, x), (2, -x)]. Rows start at (0, 0). Row 1 gets (1, 3), (2, -3)
-- and (1, 5), (2, -5): [(2, 5), (4, 0)]; row 0 is untouched.
-- ==
-- entry: vector_pairs
-- input { [1i64, 1i64] [3.0, 5.0] }
-- output { [[0i32, 0i32], [2i32, 4i32]] [[0.0, 0.0], [5.0, 0.0]] }
entry vector_pairs [n] (is: [n]i64) (xs: [n]f64) =
  let op (a1: []i32, b1: []f64) (a2: []i32, b2: []f64) =
    unzip (map2 (\(x1, y1) (x2, y2) -> (x1 + x2, f64.max y1 y2)) (zip a1 b1) (zip a2 b2))
  let dest = (replicate 2 (replicate 2 0i32), replicate 2 (replicate 2 0f64))
  let r = intrinsics.hist_stream (zip dest.0 dest.1 |> map (\(a, b) -> zip a b))
                                 (\x y -> let (a1, b1) = unzip x
                                          let (a2, b2) = unzip y
                                          let (a, b) = op (a1, b1) (a2, b2)
                                          in zip a b)
                                 (replicate 2 (0i32, -f64.inf))
                                 (\acc (i, x) -> write acc i [(1, x), (2, -x)])
                                 (zip is xs)
  in (map (map (.0)) r, map (map (.1)) r)

-- AD through `hist_stream`: r = hist (+) (copy xs) at is of x^2, so
-- dr_j/dx_k = [j = k] + [is_k = j] 2 x_k. With is = [1, 0, 1], xs = [1, 2, 3]:
-- r = [1 + 4, 2 + 1 + 9, 3] = [5, 12, 3]; the Jacobian's rows are [1, 4, 0], [2, 1, 6],
-- [0, 0, 1]; its row sums (jvp with tangent 1s) are [5, 9, 1].
def squares [n] (is: [n]i64) (xs: [n]f64) =
  intrinsics.hist_stream (copy xs) (+) 0 (\acc (i, x) -> write acc i (x * x)) (zip is xs)

-- ==
-- entry: squares_primal
-- input { [1i64, 0i64, 1i64] [1.0, 2.0, 3.0] } output { [5.0, 12.0, 3.0] }
entry squares_primal [n] (is: [n]i64) (xs: [n]f64) = squares is xs

-- ==
-- entry: squares_rev
-- input { [1i64, 0i64, 1i64] [1.0, 2.0, 3.0] }
-- output { [[1.0, 4.0, 0.0], [2.0, 1.0, 6.0], [0.0, 0.0, 1.0]] }
entry squares_rev [n] (is: [n]i64) (xs: [n]f64) =
  map (\j -> vjp (squares is) xs (tabulate n (\k -> f64.bool (j == k)))) (iota n)

-- ==
-- entry: squares_fwd
-- input { [1i64, 0i64, 1i64] [1.0, 2.0, 3.0] } output { [5.0, 9.0, 1.0] }
entry squares_fwd [n] (is: [n]i64) (xs: [n]f64) = jvp (squares is) xs (replicate n 1)

-- AD through `scatter_stream`: r = [3 v1, 0, 3 v0] for is = [2, 0]; the adjoint of seed e_j
-- is row j of the Jacobian: [0, 3], [0, 0], [3, 0].
-- ==
-- entry: scatter_rev
-- input { [5.0, 7.0] } output { [[0.0, 3.0], [0.0, 0.0], [3.0, 0.0]] }
entry scatter_rev (vs: [2]f64) =
  let f (vs: [2]f64) =
    intrinsics.scatter_stream (replicate 3 0f64) (\acc (i, v) -> write acc i (v * 3))
                              (zip [2, 0] vs)
  in map (\j -> vjp f vs (tabulate 3 (\k -> f64.bool (j == k)))) (iota 3)
