-- Custom derivatives (`with_vjp f f' x`): reverse mode calls `f'` with the primal result and
-- its adjoint instead of differentiating `f`; forward mode and plain calls use `f`.
-- (The AD oracle does not support custom derivatives: those datasets are skipped there.)

-- f x = 2x with the (deliberately wrong) adjoint x̄ = ȳ + sqrt(y): at x = 2.5, y = 5,
-- vjp gives 1 + sqrt 5 = 3.2360679..., jvp the true 2, the primal 5.
def twice (x: f64) =
  with_vjp (\x -> x * 2) (\y y_adj -> y_adj + f64.sqrt y) x

-- ==
-- entry: primal
-- input { 2.5 } output { 5.0 }
entry primal x = twice x

-- ==
-- entry: rev
-- input { 2.5 } output { 3.23606797749979 }
entry rev x = vjp twice x 1

-- ==
-- entry: fwd
-- input { 2.5 } output { 2.0 }
entry fwd x = jvp twice x 1

-- A custom derivative on arrays inside a larger function: the reverse of an array with the
-- adjoint "reverse the adjoint, times 10"; g xs = sum (rev xs * [1, 2, 3]); xs̄ = 10 *
-- reverse [1, 2, 3] = [30, 20, 10]; the chain rule around it is vkad's own (`* w`, `sum`).
-- ==
-- entry: arrays
-- input { [1.0, 2.0, 3.0] } output { [30.0, 20.0, 10.0] 10.0 }
entry arrays (xs: []f64) =
  let rev [n] (v: [n]f64) : [n]f64 =
    with_vjp (\v -> reverse v) (\_ a -> map (* 10) (reverse a)) v
  let g (v: [3]f64) = f64.sum (map2 (*) (rev v) [1, 2, 3])
  in (vjp g (xs :> [3]f64) 1, g (xs :> [3]f64))

-- Inside a map (each element's custom adjoint runs in the map's return sweep):
-- h x = with_vjp (x^3) (adjoint 0 * ȳ + 1); vjp over the sum gives 1 for each element.
-- ==
-- entry: in_map
-- input { [1.0, 2.0] } output { [1.0, 1.0] 9.0 }
entry in_map (xs: []f64) =
  let h (x: f64) = with_vjp (\x -> x * x * x) (\_ _ -> 1.0) x
  let s (v: []f64) = f64.sum (map h v)
  in (vjp s xs 1, s xs)
