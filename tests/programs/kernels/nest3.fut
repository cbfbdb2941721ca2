-- A perfect nest of three maps: one SegMap over three dimensions (tests/tests/kernels.rs).
-- ==
-- input { [[[1.0f32, 2.0f32], [3.0f32, 4.0f32]], [[5.0f32, 6.0f32], [7.0f32, 8.0f32]]] }
-- output { [[[3.0f32, 5.0f32], [7.0f32, 9.0f32]], [[11.0f32, 13.0f32], [15.0f32, 17.0f32]]] }
entry main [a][b][c] (xss: [a][b][c]f32) : [a][b][c]f32 =
  map (map (map (\x -> 2 * x + 1))) xss
