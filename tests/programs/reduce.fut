-- reduce and reduce_comm.

-- ==
-- entry: sum
-- input { [1, 2, 3, 4] } output { 10 }
-- input { empty([0]i32) } output { 0 }
entry sum (xs: []i32) : i32 = reduce (+) 0 xs

-- ==
-- entry: product_max_min
-- input { [3, -1, 4, 1, -5] } output { 60 4 -5 }
-- input { empty([0]i32) } output { 1 -2147483648 2147483647 }
entry product_max_min (xs: []i32) : (i32, i32, i32) =
  (reduce (*) 1 xs, reduce i32.max i32.lowest xs, reduce i32.min i32.highest xs)

-- The neutral element is returned for an empty array.
-- ==
-- entry: neutral
-- input { empty([0]f64) } output { 42.0 }
entry neutral (xs: []f64) : f64 = reduce (+) 42 xs

-- Reduction with a tuple operator: index of the maximum (first one on ties).
-- ==
-- entry: argmax
-- input { [3.0, 9.0, 2.0, 9.0, 4.0] } output { 9.0 1i64 }
entry argmax (xs: []f64) : (f64, i64) =
  let op (x1: f64, i1: i64) (x2: f64, i2: i64) =
    if x1 > x2 then (x1, i1)
    else if x2 > x1 then (x2, i2)
    else (x1, i64.min i1 i2)
  in reduce op (-f64.inf, -1) (zip xs (indices xs))

-- A non-commutative (but associative) operator: the result follows the order.
-- ==
-- entry: last_nonzero
-- input { [0, 5, 0, 7, 0] } output { 7 }
entry last_nonzero (xs: []i32) : i32 = reduce (\a b -> if b != 0 then b else a) 0 xs

-- Reducing arrays with an array operator: column sums.
-- ==
-- entry: vector_sum
-- input { [[1, 2], [3, 4], [5, 6]] } output { [9, 12] }
entry vector_sum [m] (xss: [][m]i32) : [m]i32 = reduce (map2 (+)) (replicate m 0) xss

-- ==
-- entry: comm
-- input { [1, 2, 3, 4] } output { 10 24 }
entry comm (xs: []i32) : (i32, i32) = (reduce_comm (+) 0 xs, reduce_comm (*) 1 xs)

-- Logical reductions.
-- ==
-- entry: logic
-- input { [true, true, false] } output { false true }
-- input { empty([0]bool) } output { true false }
entry logic (bs: []bool) : (bool, bool) = (reduce (&&) true bs, reduce (||) false bs)

-- reduce agrees with a sequential loop (integers: exactly, with wraparound).
-- ==
-- entry: vs_loop_i32
-- random input { [1000]i32 } output { true }
-- random input { [0]i32 } output { true }
entry vs_loop_i32 (xs: []i32) : bool =
  reduce (+) 0 xs == (loop s = 0 for x in xs do s + x)

-- reduce agrees with a sequential loop (floats: up to rounding).
-- ==
-- entry: vs_loop_f32
-- random input { [1000]f32 } output { true }
entry vs_loop_f32 (xs0: []f32) : bool =
  let xs = map (\x -> if f32.isfinite x then f32.max (-1e6) (f32.min 1e6 x) else 0) xs0
  let a = reduce (+) 0 xs
  let b = loop s = 0 for x in xs do s + x
  let scale = reduce (+) 0 (map f32.abs xs)
  in f32.abs (a - b) <= 1e-4 * scale + 1e-6
