-- Reverse mode adds the adjoint of each row a function reads into its array's adjoint one row
-- at a time (`w̄ with [i, 1] = w̄[i, 1] + r̄₁`, then a read of the new array at [i, 0], ...).
-- The kernel pipeline reads the rows not yet written from the array before the updates
-- (core/src/passes/update_reads.rs), so that the additions fuse into the cell's adjoint map;
-- the state's adjoint row is cleared then read (the zero row it reads is a `replicate`). The
-- results are the interpreter's, which does not run that pass.
-- ==
-- entry: grad
-- input { [[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.1, 0.2, 0.3], [-0.7, 0.9, 1.1]],
--          [[-0.3, 0.6, 1.2], [0.4, -0.8, 0.05], [1.0, 1.0, -1.0], [0.2, 0.3, 0.4]]]
--         [[0.3, -0.2, 0.9], [1.0, 0.5, -0.4]] }
-- output { [[[-2.7856471010571917e-3, 1.1635642185176669e-2, 1.0324234314775206e-2],
--             [-9.285490336857306e-3, -5.817821092588334e-2, 1.147137146086134e-2],
--             [-0.7739377691033303, -1.0937848622293899e-2, 0.1267736396188485],
--             [0.2277919504002895, -9.941697795464078e-3, 0.3670732234442101]],
--            [[2.4373391053132325, 0.5102161348327449, 5.779080174769017e-4],
--             [1.8643550044476611, 0.41715251837113265, -6.5492809668612085e-3],
--             [7.296763635479734e-3, -1.3740052943925296e-2, 1.8877139860752293e-2],
--             [-1.307336370754842, -1.2230925437655282, 8.823991830569888e-2]]] }
def cell [b] (w: [4][b]f64) (h: [b]f64) (c: [b]f64) : ([b]f64, [b]f64) =
  let c' = map4 (\h c a u -> c * f64.tanh (h * a + u)) h c w[0] w[1]
  let h' = map4 (\h c a u -> f64.exp (c * a) - h * u) h c' w[2] w[3]
  in (h', c')

entry grad [l][b] (ws: [l][4][b]f64) (state: [2][b]f64) : [l][4][b]f64 =
  vjp (\ws ->
         let (h, c) = loop (h, c) = (state[0], state[1]) for i < l do cell ws[i] h c
         in f64.sum h + f64.sum c)
      ws 1
