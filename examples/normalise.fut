-- Each row divided by its squared norm, and the gradient of that by `vjp`: the worked example
-- of docs/pipeline.md, which shows this program at every stage of the compiler
-- (`vkad dump-ir --unoptimised`, `--before-ad`, the default, and `--kernels`).

def normalise [m] (row: [m]f64) : [m]f64 =
  let s = f64.sum (map (\x -> x * x) row)
  in map (\x -> x / s) row

-- Row [1, 2]: s = 5, so [0.2, 0.4]; row [3, 4]: s = 25, so [0.12, 0.16].
-- ==
-- entry: main
-- input { [[1.0, 2.0], [3.0, 4.0]] }
-- output { [[0.2, 0.4], [0.12, 0.16]] }
entry main [n][m] (a: [n][m]f64) : [n][m]f64 =
  map normalise a

-- With all-ones adjoints, ∂/∂x_j Σ_i x_i/s = 1/s − 2 x_j (Σ_i x_i)/s².
-- Row [1, 2]: 0.2 − 2·1·3/25 = −0.04 and 0.2 − 2·2·3/25 = −0.28;
-- row [3, 4]: 0.04 − 2·3·7/625 = −0.0272 and 0.04 − 2·4·7/625 = −0.0496.
-- ==
-- entry: grad
-- input { [[1.0, 2.0], [3.0, 4.0]] [[1.0, 1.0], [1.0, 1.0]] }
-- output { [[-0.04, -0.28], [-0.0272, -0.0496]] }
entry grad [n][m] (a: [n][m]f64) (abar: [n][m]f64) : [n][m]f64 =
  vjp (map normalise) a abar
