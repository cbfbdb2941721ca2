-- A batched LSTM network with a linear output layer, in 32-bit floats: the "RNN" case study of
-- paper 000 (Schenck et al., SC22, §7.7, "Case Study 3: LSTM", Table 6), with the LSTM cell of
-- Hochreiter & Schmidhuber (1997) in the form with a forget gate (Gers et al., 2000) that NLP
-- taggers and torch.nn.LSTM use. Written for this project from those equations.
--
-- Sizes: bs (batch), n (time steps), d (input width), h (hidden width); the output width is d
-- (the network predicts an embedding of width d). Inputs, in entry-parameter order:
--
--   xs [n][bs][d], targets [n][bs][d]          the input and target sequences,
--   W [4][h][d], U [4][h][h], b [4][h]         input weights, recurrent weights and biases of
--                                              the gates i, f, g, o (in that order),
--   Wy [d][h], by [d]                          the output layer,
--   h0 [bs][h], c0 [bs][h]                     the initial state.
--
-- Per step t (rows are batch elements, so x Wᵀ is a (bs×d)·(d×h) matrix product):
--
--   a_k = x_t W_kᵀ + h_{t-1} U_kᵀ + b_k        (bs×h, k ∈ {i, f, g, o})
--   i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o)
--   c_t = f ⊙ c_{t-1} + i ⊙ g,   h_t = o ⊙ tanh(c_t)
--   y_t = h_t Wyᵀ + by                          (bs×d)
--
--   loss = Σ_t Σ_batch Σ_j (y_t - target_t)² / (n · bs · d)    (the mean squared error)
--
-- Entries: `objective` (the loss) and `grad` (the gradient of the loss with respect to
-- (W, U, b, Wy, by), by `vjp` with seed 1). The matrix products are maps of dot products, the
-- time loop a sequential `loop`. The expected outputs of the test blocks are JAX's
-- (benches/peers/rnn_jax.py).

def sigmoid (x: f32) : f32 = 1 / (1 + f32.exp (0 - x))

def dot [k] (a: [k]f32) (b: [k]f32) : f32 = f32.sum (map2 (*) a b)

-- a mᵀ for a [r][k] and m [c][k]: [r][c].
def matmul_t [r][k][c] (a: [r][k]f32) (m: [c][k]f32) : [r][c]f32 =
  map (\row -> map (\col -> dot row col) m) a

-- The pre-activation of gate k for the whole batch: x W_kᵀ + h U_kᵀ + b_k.
def gate [bs][d][h] (x: [bs][d]f32) (hp: [bs][h]f32) (w: [h][d]f32) (u: [h][h]f32) (bk: [h]f32)
                    : [bs][h]f32 =
  map2 (\xw hu -> map3 (\p q c -> p + q + c) xw hu bk) (matmul_t x w) (matmul_t hp u)

def lstm_step [bs][d][h] (w: [4][h][d]f32) (u: [4][h][h]f32) (b: [4][h]f32)
                         (hp: [bs][h]f32) (cp: [bs][h]f32) (x: [bs][d]f32)
                         : ([bs][h]f32, [bs][h]f32) =
  let i = map (map sigmoid) (gate x hp w[0] u[0] b[0])
  let f = map (map sigmoid) (gate x hp w[1] u[1] b[1])
  let g = map (map f32.tanh) (gate x hp w[2] u[2] b[2])
  let o = map (map sigmoid) (gate x hp w[3] u[3] b[3])
  let c = map4 (map4 (\fe ce ie ge -> fe * ce + ie * ge)) f cp i g
  let hn = map2 (map2 (\oe ce -> oe * f32.tanh ce)) o c
  in (hn, c)

def rnn_loss [n][bs][d][h] (w: [4][h][d]f32) (u: [4][h][h]f32) (b: [4][h]f32)
                           (wy: [d][h]f32) (by: [d]f32)
                           (xs: [n][bs][d]f32) (targets: [n][bs][d]f32)
                           (h0: [bs][h]f32) (c0: [bs][h]f32) : f32 =
  let (_, _, total) =
    loop (hp, cp, total) = (h0, c0, 0f32) for t < n do
      let (hn, cn) = lstm_step w u b hp cp xs[t]
      let y = map (\yr -> map2 (+) yr by) (matmul_t hn wy)
      let se = f32.sum (map2 (\yr tr -> f32.sum (map2 (\ye te -> (ye - te) * (ye - te)) yr tr))
                             y targets[t])
      in (hn, cn, total + se)
  in total / f32.i64 (n * bs * d)

-- ==
-- entry: objective
-- input @ small/rnn_small.in output @ small/rnn_small.objective.out
entry objective [n][bs][d][h] (xs: [n][bs][d]f32) (targets: [n][bs][d]f32)
                              (w: [4][h][d]f32) (u: [4][h][h]f32) (b: [4][h]f32)
                              (wy: [d][h]f32) (by: [d]f32)
                              (h0: [bs][h]f32) (c0: [bs][h]f32) : f32 =
  rnn_loss w u b wy by xs targets h0 c0

-- ==
-- entry: grad
-- input @ small/rnn_small.in output @ small/rnn_small.grad.out
entry grad [n][bs][d][h] (xs: [n][bs][d]f32) (targets: [n][bs][d]f32)
                         (w: [4][h][d]f32) (u: [4][h][h]f32) (b: [4][h]f32)
                         (wy: [d][h]f32) (by: [d]f32)
                         (h0: [bs][h]f32) (c0: [bs][h]f32)
                         : ([4][h][d]f32, [4][h][h]f32, [4][h]f32, [d][h]f32, [d]f32) =
  vjp (\(w', u', b', wy', by') -> rnn_loss w' u' b' wy' by' xs targets h0 c0)
      (w, u, b, wy, by) 1
