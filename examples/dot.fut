-- A dot product and a matrix-vector product.
--
-- Run it with
--
--   cargo run --release -p vkad -- run examples/dot.fut -e main < examples/dot.in
--
-- The input (dot.in) is a matrix `a`, and two vectors `x` and `y`, in
-- Futhark's value syntax. The results are printed one per line: the dot
-- product x·y, then the vector a·x.

-- | The dot product of two vectors of the same length.
def dot [n] (xs: [n]f64) (ys: [n]f64) : f64 =
  reduce (+) 0 (map2 (*) xs ys)

-- | The product of an n×m matrix and a vector of length m.
def matvec [n][m] (a: [n][m]f64) (x: [m]f64) : [n]f64 =
  map (dot x) a

-- ==
-- entry: main
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [1.0, 0.5, 2.0] [2.0, 2.0, 2.0] }
-- output { 7.0 [8.0, 18.5] }
-- input @ dot.in output { 7.0 [8.0, 18.5] }
entry main [n][m] (a: [n][m]f64) (x: [m]f64) (y: [m]f64) : (f64, [n]f64) =
  (dot x y, matvec a x)
