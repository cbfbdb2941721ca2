-- Reverse mode of functions that turn size parameters, and integers computed from them, into
-- floats (issue 14). Sizes are integers: they have no adjoint, they are constants of the
-- differentiated function, but the derivative code reads them.

-- The sum times the size: f(ys) = (Σ ys)·n, ȳs = n.
-- ==
-- entry: sum_times_size
-- input { [1.0, 2.0, 3.0] } output { 18.0 [3.0, 3.0, 3.0] }
-- input { [0.5, -1.5] } output { -2.0 [2.0, 2.0] }
entry sum_times_size [n] (xs: [n]f64) = vjp2 (\ys -> f64.sum ys * f64.i64 n) xs 1

-- The same through a function with its own size parameter.
def scaled_sum [k] (ys: [k]f64) = f64.sum ys * f64.i64 k

-- ==
-- entry: sum_times_size_def
-- input { [1.0, 2.0, 3.0, 4.0] } output { 40.0 [4.0, 4.0, 4.0, 4.0] }
entry sum_times_size_def [n] (xs: [n]f64) = vjp2 scaled_sum xs 1

-- GMM's log-gamma term: ln Γ_p(a) = p(p−1)/4 · ln π + Σ_{j=1..p} ln Γ(a + (1−j)/2), with p the
-- size of the argument `ws`: d/da = Σ_j ψ(a + (1−j)/2). At a = 3, p = 2: ψ(3) + ψ(2.5).
-- ==
-- entry: log_gamma_distrib
-- input { 3.0 [0.0, 0.0] } output { 1.5501949939575645 1.6259409757437102 }
entry log_gamma_distrib [p] (a: f64) (ws: [p]f64) =
  let lgd (a: f64) =
    0.25 * f64.i64 (p * (p - 1)) * f64.log f64.pi
    + f64.sum (map (\j -> f64.lgamma (a + 0.5 * (1 - f64.i64 j))) (1...p))
  in vjp2 lgd a 1

-- A sum over `1...p`: Σ_{j=1..p} ln (a + j), d/da = Σ_j 1/(a + j). At a = 1, p = 3:
-- ln 24 and 1/2 + 1/3 + 1/4.
-- ==
-- entry: sum_range_size
-- input { 1.0 [7.0, 8.0, 9.0] } output { 3.1780538303479458 1.0833333333333333 }
entry sum_range_size [p] (a: f64) (ws: [p]f64) =
  vjp2 (\a -> f64.sum (map (\j -> f64.log (a + f64.i64 j)) (1...p))) a 1

-- `map f64.i64 (iota p)`: f(a, ws) = Σ_j ws[j] · a^j, ∂/∂a = Σ_j j · ws[j] · a^(j−1),
-- ∂/∂ws[j] = a^j. At a = 2, ws = [1, 1, 1]: f = 7, ∂/∂a = 1 + 4 = 5, ∂/∂ws = [1, 2, 4].
-- ==
-- entry: iota_size
-- input { 2.0 [1.0, 1.0, 1.0] } output { 7.0 5.0 [1.0, 2.0, 4.0] }
-- input { 0.5 [2.0, -1.0] } output { 1.5 -1.0 [1.0, 0.5] }
entry iota_size [p] (a: f64) (ws: [p]f64) =
  let (y, (da, dws)) =
    vjp2 (\(a, ws) -> f64.sum (map2 (\w j -> w * a ** j) ws (map f64.i64 (iota p)))) (a, ws) 1
  in (y, da, dws)

-- LSTM's normalisation: Σ y² / (d·(m−1)) with d, m the sizes of the argument; ȳ = 2y/(d·(m−1)).
-- At d = 2, m = 3: 91/4 and y/2.
-- ==
-- entry: normalised
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] }
-- output { 22.75 [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]] }
-- input { [[1.0, -1.0], [2.0, 0.5], [3.0, 1.0]] }
-- output { 5.416666666666667 [[0.6666666666666666, -0.6666666666666666], [1.3333333333333333, 0.3333333333333333], [2.0, 0.6666666666666666]] }
entry normalised [d][m] (xss: [d][m]f64) =
  vjp2 (\yss -> f64.sum (map (\ys -> f64.sum (map (\y -> y * y) ys)) yss) / f64.i64 (d * (m - 1)))
       xss 1

-- The same divisor inside a `map`, and in a loop over the rows (a divisor that changes per
-- iteration: row i is divided by d·(m−1) + i).
-- ==
-- entry: normalised_map_loop
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] }
-- output { [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]] [[0.25, 0.25, 0.25], [0.2, 0.2, 0.2]] }
entry normalised_map_loop [d][m] (xss: [d][m]f64) =
  let a = vjp (\yss -> map (map (\y -> y * y / f64.i64 (d * (m - 1)))) yss) xss
              (replicate d (replicate m 1))
  let b = vjp (\yss -> loop acc = 0 for i < d do acc + f64.sum yss[i] / f64.i64 (d * (m - 1) + i))
              xss 1
  in (a, b)

-- A result whose size is computed inside the function (so lowering differentiates at once):
-- f(ys)_i = i · Σ ys / (d·(m−1)) for i < d·m; with ȳ = 1, ȳs = Σ_i i / (d·(m−1)).
-- At d = 2, m = 3: 15/4.
-- ==
-- entry: inner_size
-- input { [1.0, 2.0] [0.0, 0.0, 0.0] } output { [3.75, 3.75] }
entry inner_size [d][m] (xs: [d]f64) (ws: [m]f64) =
  vjp (\ys -> map (\i -> f64.i64 i * f64.sum ys / f64.i64 (d * (m - 1))) (iota (d * m)))
      xs (replicate (d * m) 1)

-- A `vjp` inside a `map`, using the size of the rows.
-- ==
-- entry: per_row
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] }
-- output { [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]] }
entry per_row [d][m] (xss: [d][m]f64) =
  map (\xs -> vjp (\ys -> f64.sum ys / f64.i64 (m - 1)) xs 1) xss
