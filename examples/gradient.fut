-- Reverse-mode AD (`vjp`) of a least-squares loss: the gradient of
--
--   loss(w) = ½ Σᵢ (Σⱼ aᵢⱼ wⱼ − bᵢ)²
--
-- with respect to the weights w, for an n×m matrix a and targets b. By hand the gradient is
-- aᵀ(a w − b); `vjp` computes it from the program of the loss, with seed 1.
--
--   cargo run --release -p vkad -- run examples/gradient.fut -e main < examples/gradient.in
--
-- The input (gradient.in) is a, b and w. `loss` is the primal program alone; `main` returns
-- the loss and its gradient.

-- | Half the sum of the squared residuals of a w ≈ b. a w is summed column by column
-- (column j scaled by wⱼ), so that w is mapped over rather than used inside the map over
-- rows: the reverse of a map that uses w freely accumulates w's adjoint with `withacc`, which
-- the Vulkan backend does not run yet; this form runs on every backend.
def sq_loss [n][m] (a: [n][m]f64) (b: [n]f64) (w: [m]f64) : f64 =
  let cols = map2 (\col wj -> map (\x -> x * wj) col) (transpose a) w
  let aw = reduce (map2 (+)) (replicate n 0) cols
  let r = map2 (-) aw b
  in 0.5 * reduce (+) 0 (map (\x -> x * x) r)

-- The residuals of gradient.in are a w − b = [−2.5, −4.5, −6.5], so the loss is
-- ½(6.25 + 20.25 + 42.25) = 34.375 and the gradient aᵀr = [−48.5, −62.0].
-- ==
-- entry: loss
-- input @ gradient.in output { 34.375 }
-- input { [[1.0, 0.0], [0.0, 2.0]] [1.0, 2.0] [1.0, 1.0] } output { 0.0 }
entry loss [n][m] (a: [n][m]f64) (b: [n]f64) (w: [m]f64) : f64 =
  sq_loss a b w

-- The gradient is zero at the exact solution w = [1, 1] of the second input.
-- ==
-- entry: main
-- input @ gradient.in output { 34.375 [-48.5, -62.0] }
-- input { [[1.0, 0.0], [0.0, 2.0]] [1.0, 2.0] [1.0, 1.0] } output { 0.0 [0.0, 0.0] }
entry main [n][m] (a: [n][m]f64) (b: [n]f64) (w: [m]f64) : (f64, [m]f64) =
  (sq_loss a b w, vjp (sq_loss a b) w 1.0)
