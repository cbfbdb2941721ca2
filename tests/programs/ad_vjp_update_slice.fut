-- Reverse mode of a loop that updates a row in place: the return sweep reads the row's adjoint
-- ȳ[j] and zeroes it in ȳ (in place when ȳ is owned). The row's adjoint is later read by the
-- map's return sweep, so it must not be a view of the ȳ that was zeroed (it once was: the
-- one-thread version of the reverse loop on `-b vulkan` read zeros, as did the LSTM's
-- gradient from its second time step on).
-- ==
-- entry: main
-- input { [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] [1.5, 0.5] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] }
-- output { [[17.625, 4.25], [0.0, 0.0], [0.0, 0.0]] [27.75, 31.0] }
-- input { [[1.0, -2.0, 0.5], [3.0, 4.0, 1.0]] [0.5, 2.0, -1.0] [[1.0, 1.0, 2.0], [-1.0, 3.0, 0.5]] }
-- output { [[-0.25, 10.0, 1.5], [0.0, 0.0, 0.0]] [1.0, -13.0, 0.25] }
def f [l][b] (xs: [l][b]f64) (v: [b]f64) : [l][b]f64 =
  loop xs for i < l do
    let j = l - 1 - i
    in xs with [j] = map2 (\x w -> x * w + 1) xs[(j + 1) % l] v

entry main [l][b] (xs: [l][b]f64) (v: [b]f64) (s: [l][b]f64) : ([l][b]f64, [b]f64) =
  vjp (\(xs, v) -> f xs v) (xs, v) s
