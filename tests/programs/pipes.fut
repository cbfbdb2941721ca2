-- The pipe operators |> and <|.

-- ==
-- entry: forward
-- input { [1, 2, 3] } output { 12 }
entry forward (xs: []i32) : i32 = xs |> map (+ 1) |> map (* 2) |> reduce (+) 0 |> (\s -> s - 6 + 6 - 6)

-- ==
-- entry: backward
-- input { [1, 2, 3] } output { 18 }
entry backward (xs: []i32) : i32 = reduce (+) 0 <| map (* 2) <| map (+ 1) <| xs

-- `<|` is right-associative: f <| g <| x is f (g x).
-- ==
-- entry: right_assoc
-- input { 3 } output { 8 }
entry right_assoc (x: i32) : i32 = (* 2) <| (+ 1) <| x

-- `|>` binds looser than arithmetic.
-- ==
-- entry: loose
-- input { 3 } output { 8 16 }
entry loose (x: i32) : (i32, i32) =
  let a = x + 1 |> (* 2)
  let b = x + 1 |> (* 2) |> (* 2)
  in (a, b)

-- Pipes with user functions of several arguments (partial application).
-- ==
-- entry: partial
-- input { [1.0, 2.0, 3.0] } output { [2.0, 4.0, 6.0] 12.0 }
entry partial (xs: []f64) : ([]f64, f64) =
  let scale (k: f64) (ys: []f64) = map (* k) ys
  let ys = xs |> scale 2
  in (ys, ys |> f64.sum)
