-- Reduce and scan over arrays of arrays with non-vectorised, non-commutative operators
-- (spirv-backend/src/exec/array_ops.rs): each entry compares against a sequential loop.

def mat (i: i64) : [2][2]i32 =
  let a = i32.i64 ((i * 7 + 3) % 5) - 2
  let b = i32.i64 ((i * 3 + 1) % 4) - 1
  in [[a, 1], [b, a + b]]

def mul (x: [2][2]i32) (y: [2][2]i32) : [2][2]i32 =
  [[x[0][0]*y[0][0] + x[0][1]*y[1][0], x[0][0]*y[0][1] + x[0][1]*y[1][1]],
   [x[1][0]*y[0][0] + x[1][1]*y[1][0], x[1][0]*y[0][1] + x[1][1]*y[1][1]]]

def id2 : [2][2]i32 = [[1, 0], [0, 1]]

-- Product of n 2×2 matrices.
-- ==
-- entry: reduce_mat
-- input { 0i64 } output { true }
-- input { 1i64 } output { true }
-- input { 2i64 } output { true }
-- input { 3i64 } output { true }
-- input { 5i64 } output { true }
-- input { 7i64 } output { true }
-- input { 64i64 } output { true }
-- input { 255i64 } output { true }
-- input { 256i64 } output { true }
-- input { 257i64 } output { true }
-- input { 1000i64 } output { true }
-- input { 5000i64 } output { true }
entry reduce_mat (n: i64) =
  let ms = map mat (iota n)
  let r = reduce mul id2 ms
  let s = loop acc = id2 for i < n do mul acc (mat i)
  in r == s

-- Prefix products of 2×2 matrices.
-- ==
-- entry: scan_mat
-- input { 0i64 } output { true }
-- input { 1i64 } output { true }
-- input { 2i64 } output { true }
-- input { 3i64 } output { true }
-- input { 6i64 } output { true }
-- input { 255i64 } output { true }
-- input { 257i64 } output { true }
-- input { 1000i64 } output { true }
entry scan_mat (n: i64) =
  let ms = map mat (iota n)
  let r = scan mul id2 ms
  let (_, ok) = loop (acc, ok) = (id2, true) for i < n do
                  let acc' = mul acc (mat i) in (acc', ok && acc' == r[i])
  in ok

-- "First non-zero" on rows, with a tuple of arrays (f64 and i64 rows).
def first (x: ([3]f64, [3]i64)) (y: ([3]f64, [3]i64)) : ([3]f64, [3]i64) =
  if any (!= 0) x.0 then x else y

-- ==
-- entry: first_nonzero
-- input { 0i64 } output { true }
-- input { 1i64 } output { true }
-- input { 4i64 } output { true }
-- input { 9i64 } output { true }
-- input { 300i64 } output { true }
-- input { 3000i64 } output { true }
entry first_nonzero (n: i64) =
  let rows = map (\i -> let v = if i % 7 == 3 then f64.i64 i else 0
                        in ([v, 0, v], [i, i, i])) (iota n)
  let ne = ([0, 0, 0], [0, 0, 0])
  let (ra, rb) = reduce first ne rows
  let (sa, sb) = unzip (scan first ne rows)
  let (la, lb, ok) = loop (a, b, ok) = (ne.0, ne.1, true) for i < n do
                  let (a', b') = first (a, b) rows[i]
                  in (a', b', ok && a' == sa[i] && b' == sb[i])
  in ok && ra == la && rb == lb
