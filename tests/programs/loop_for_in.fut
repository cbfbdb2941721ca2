-- `loop ... for x in xs do ...`.

-- ==
-- entry: sum
-- input { [1, 2, 3, 4] } output { 10 }
-- input { empty([0]i32) } output { 0 }
entry sum (xs: []i32) : i32 = loop s = 0 for x in xs do s + x

-- The elements are visited in order.
-- ==
-- entry: horner
-- input { [1, 2, 3] 10 } output { 123 }
entry horner (ds: []i32) (base: i32) : i32 = loop acc = 0 for d in ds do acc * base + d

-- A tuple pattern over zipped arrays.
-- ==
-- entry: dot
-- input { [1.0, 2.0, 3.0] [4.0, 5.0, 6.0] } output { 32.0 }
entry dot (xs: []f64) (ys: []f64) : f64 = loop acc = 0 for (x, y) in zip xs ys do acc + x * y

-- Iterating over the rows of a matrix.
-- ==
-- entry: rows
-- input { [[1, 2], [3, 4], [5, 6]] } output { [9, 12] }
entry rows [m] (xss: [][m]i32) : [m]i32 =
  loop acc = replicate m 0 for row in xss do map2 (+) acc row

-- A tuple of loop parameters with a for-in loop: running maximum and its index.
-- ==
-- entry: argmax
-- input { [3, 9, 2, 9, 4] } output { 9 1i64 }
entry argmax (xs: []i32) : (i32, i64) =
  let (m, i, _) =
    loop (m, i, j) = (i32.lowest, -1, 0) for x in xs do
      if x > m then (x, j, j + 1) else (m, i, j + 1)
  in (m, i)

-- Iterating over a range.
-- ==
-- entry: over_range
-- input { 4 } output { 30 }
entry over_range (n: i32) : i32 = loop s = 0 for i in 1...n do s + i * i
