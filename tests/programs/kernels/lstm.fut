-- The ADBench LSTM objective (l layers, 4 gates with elementwise weights, a sequence of c
-- steps of width b) and its gradient with respect to the weights and biases. The
-- kernel-extraction test (tests/tests/kernels.rs) checks that the gradient's kernel count per
-- time step does not depend on b, and compares it with the SOAC-level Vulkan backend.

def sigmoid (x: f64) : f64 = 1 / (1 + f64.exp (0 - x))

def logsumexp [n] (xs: [n]f64) : f64 =
  let m = f64.maximum xs
  in m + f64.log (f64.sum (map (\x -> f64.exp (x - m)) xs))

-- One layer: weight and bias rows 0..3 are the forget, input, output and change gates.
def layer [b] (weight: [4][b]f64) (bias: [4][b]f64) (hidden: [b]f64) (cell: [b]f64) (input: [b]f64) : ([b]f64, [b]f64) =
  let forget = map3 (\x w c -> sigmoid (x * w + c)) input weight[0] bias[0]
  let ingate = map3 (\h w c -> sigmoid (h * w + c)) hidden weight[1] bias[1]
  let outgate = map3 (\x w c -> sigmoid (x * w + c)) input weight[2] bias[2]
  let change = map3 (\h w c -> f64.tanh (h * w + c)) hidden weight[3] bias[3]
  let cell' = map4 (\c f i ch -> c * f + i * ch) cell forget ingate change
  let hidden' = map2 (\o c -> o * f64.tanh c) outgate cell'
  in (hidden', cell')

def objective [l][c][b] (count: f64) (weight: [l][4][b]f64) (bias: [l][4][b]f64) (extra: [3][b]f64) (state: [l][2][b]f64) (seq: [c][b]f64) : f64 =
  let (_, total) =
    loop (state, total) = (state, 0f64) for t < c - 1 do
      let x0 = map2 (*) seq[t] extra[0]
      let (state', x) =
        loop (st, x) = (state, x0) for i < l do
          let (h, cl) = layer weight[i] bias[i] st[i, 0] st[i, 1] x
          in (st with [i] = [h, cl], h)
      let ypred = map3 (\y w c -> y * w + c) x extra[1] extra[2]
      let lse = logsumexp ypred
      let ygold = seq[t + 1]
      in (state', total + f64.sum (map2 (\g y -> g * (y - lse)) ygold ypred))
  in 0 - total / count

-- b = 1, l = 1: logsumexp of one value is the value itself, so every ynorm is 0 and the loss 0
-- whatever the weights, and so is its gradient.
-- ==
-- entry: loss
-- input { 1.0 [[[1.0], [1.0], [1.0], [1.0]]] [[[0.0], [0.0], [0.0], [0.0]]] [[1.0], [1.0], [0.0]] [[[0.0], [0.0]]] [[1.0], [2.0]] }
-- output { 0.0 }
-- input { 2.0 [[[0.5, -0.5], [0.25, 0.1], [1.0, 0.3], [-0.2, 0.7]]] [[[0.1, 0.0], [0.0, 0.2], [0.3, -0.1], [0.0, 0.0]]] [[1.0, 0.5], [2.0, -1.0], [0.1, 0.2]] [[[0.0, 0.1], [0.2, 0.0]]] [[1.0, 0.0], [0.0, 1.0]] }
-- output { 0.37751469115743275 }
entry loss [l][c][b] (count: f64) (weight: [l][4][b]f64) (bias: [l][4][b]f64) (extra: [3][b]f64) (state: [l][2][b]f64) (seq: [c][b]f64) : f64 =
  objective count weight bias extra state seq

-- ==
-- entry: grad
-- input { 1.0 [[[1.0], [1.0], [1.0], [1.0]]] [[[0.0], [0.0], [0.0], [0.0]]] [[1.0], [1.0], [0.0]] [[[0.0], [0.0]]] [[1.0], [2.0]] }
-- output { [[[0.0], [0.0], [0.0], [0.0]]] [[[0.0], [0.0], [0.0], [0.0]]] }
entry grad [l][c][b] (count: f64) (weight: [l][4][b]f64) (bias: [l][4][b]f64) (extra: [3][b]f64) (state: [l][2][b]f64) (seq: [c][b]f64) : ([l][4][b]f64, [l][4][b]f64) =
  vjp (\(w, bi) -> objective count w bi extra state seq) (weight, bias) 1
