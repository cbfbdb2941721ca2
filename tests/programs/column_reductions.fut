-- Reductions and scans along the outer dimension of an array (over its columns): the Vulkan
-- runtime transposes the array before its segmented primitives read it row by row (see
-- spirv-backend/src/runtime/plan.rs). Expected values worked out by hand.
--
-- xss = [[1, -2, 3], [4, 5, -6]]: column sums [5, 3, -3]; column maxima [4, 5, 3]; column
-- sums of squares [17, 29, 45].

-- ==
-- entry: sums
-- input { [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]] } output { [5.0, 3.0, -3.0] }
-- input { empty([0][2]f64) } output { [0.0, 0.0] }
entry sums [n][m] (xss: [n][m]f64) : [m]f64 = map f64.sum (transpose xss)

-- ==
-- entry: maxima
-- input { [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]] } output { [4.0, 5.0, 3.0] }
entry maxima [n][m] (xss: [n][m]f64) : [m]f64 =
  map (\c -> reduce f64.max (-f64.inf) c) (transpose xss)

-- ==
-- entry: squares
-- input { [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]] } output { [17.0, 29.0, 45.0] }
entry squares [n][m] (xss: [n][m]f64) : [m]f64 =
  map (\c -> f64.sum (map (\x -> x * x) c)) (transpose xss)

-- Running sums down each column of [[1, 2], [3, 4], [5, 6]]: [[1, 2], [4, 6], [9, 12]].
-- ==
-- entry: running
-- input { [[1i32, 2i32], [3i32, 4i32], [5i32, 6i32]] } output { [[1i32, 2i32], [4i32, 6i32], [9i32, 12i32]] }
entry running [n][m] (xss: [n][m]i32) : [n][m]i32 =
  transpose (map (scan (+) 0) (transpose xss))

-- The gradient of the sum of squared column sums, f = Σ_j (Σ_i x_ij)^2: df/dx_ij = 2 Σ_i x_ij,
-- each column's sum doubled in every row: [[10, 6, -6], [10, 6, -6]].
-- ==
-- entry: grad
-- input { [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]] } output { [[10.0, 6.0, -6.0], [10.0, 6.0, -6.0]] }
entry grad [n][m] (xss: [n][m]f64) : [n][m]f64 =
  vjp (\xss -> f64.sum (map (\s -> s * s) (map f64.sum (transpose xss)))) xss 1
