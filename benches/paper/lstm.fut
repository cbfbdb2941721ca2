-- The ADBench LSTM objective (the "D-LSTM" of paper 000's Table 1): l layers of an LSTM cell
-- with elementwise (diagonal) weights over hidden vectors of width b, run over a sequence of c
-- characters (each a vector of width b), predicting each next character:
--
--   for t < c-1:  (state, y) = predict(state, seq[t]);  total += Σ_j seq[t+1][j] (y_j - logsumexp y)
--   loss = -total / ((c-1) b)
--
-- predict: x = seq[t] ⊙ extra[0]; for each layer i, with weights main[i][0] and biases
-- main[i][1] (rows: forget, input, output and change gates),
--   forget = σ(x ⊙ w_f + b_f), ingate = σ(h ⊙ w_i + b_i), outgate = σ(x ⊙ w_o + b_o),
--   change = tanh(h ⊙ w_c + b_c), cell' = cell ⊙ forget + ingate ⊙ change,
--   h' = outgate ⊙ tanh(cell'), and x = h' for the next layer;
-- then y = x ⊙ extra[1] + extra[2].
--
-- Entries: `objective` (primal) and `grad` (the gradient with respect to the main and extra
-- parameters, by `vjp`). The expected outputs of the test blocks are JAX's (benches/peers).

def sigmoid (x: f64) : f64 = 1 / (1 + f64.exp (0 - x))

def logsumexp [n] (xs: [n]f64) : f64 =
  let m = f64.maximum xs
  in m + f64.log (f64.sum (map (\x -> f64.exp (x - m)) xs))

def cell_step [b] (weight: [4][b]f64) (bias: [4][b]f64) (hidden: [b]f64) (cell: [b]f64)
                  (input: [b]f64) : ([b]f64, [b]f64) =
  let forget = map3 (\x w c -> sigmoid (x * w + c)) input weight[0] bias[0]
  let ingate = map3 (\h w c -> sigmoid (h * w + c)) hidden weight[1] bias[1]
  let outgate = map3 (\x w c -> sigmoid (x * w + c)) input weight[2] bias[2]
  let change = map3 (\h w c -> f64.tanh (h * w + c)) hidden weight[3] bias[3]
  let cell' = map4 (\c f i ch -> c * f + i * ch) cell forget ingate change
  let hidden' = map2 (\o c -> o * f64.tanh c) outgate cell'
  in (hidden', cell')

def predict [l][b] (main: [l][2][4][b]f64) (extra: [3][b]f64) (state: [l][2][b]f64) (input: [b]f64)
                  : ([l][2][b]f64, [b]f64) =
  let x0 = map2 (*) input extra[0]
  let (state', x) =
    loop (st, x) = (state, x0) for i < l do
      let (h, c) = cell_step main[i, 0] main[i, 1] st[i, 0] st[i, 1] x
      in (st with [i] = [h, c], h)
  in (state', map3 (\y w c -> y * w + c) x extra[1] extra[2])

def lstm_objective [l][c][b] (main: [l][2][4][b]f64) (extra: [3][b]f64) (state: [l][2][b]f64)
                             (sequence: [c][b]f64) : f64 =
  let (_, total) =
    loop (st, total) = (state, 0f64) for t < c - 1 do
      let (st', ypred) = predict main extra st sequence[t]
      let lse = logsumexp ypred
      in (st', total + f64.sum (map2 (\g y -> g * (y - lse)) sequence[t + 1] ypred))
  in 0 - total / f64.i64 ((c - 1) * b)

-- ==
-- entry: objective
-- input @ small/lstm_small.in output @ small/lstm_small.objective.out
entry objective [l][c][b] (main: [l][2][4][b]f64) (extra: [3][b]f64) (state: [l][2][b]f64)
                          (sequence: [c][b]f64) : f64 =
  lstm_objective main extra state sequence

-- ==
-- entry: grad
-- input @ small/lstm_small.in output @ small/lstm_small.grad.out
entry grad [l][c][b] (main: [l][2][4][b]f64) (extra: [3][b]f64) (state: [l][2][b]f64)
                     (sequence: [c][b]f64) : ([l][2][4][b]f64, [3][b]f64) =
  vjp (\(mp, ep) -> lstm_objective mp ep state sequence) (main, extra) 1
