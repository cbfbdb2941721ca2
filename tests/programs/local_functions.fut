-- Local function definitions: `let f params = e in body`.

-- ==
-- entry: simple
-- input { 3 } output { 10 }
entry simple (x: i32) : i32 =
  let sq (y: i32) = y * y
  in sq x + 1

-- Local functions capture variables in scope.
-- ==
-- entry: closure
-- input { [1, 2, 3] 5 } output { [6, 7, 8] }
entry closure (xs: []i32) (k: i32) : []i32 =
  let add_k x = x + k
  in map add_k xs

-- Several parameters, tuple parameters, a return type annotation.
-- ==
-- entry: params
-- input { 2.0 3.0 } output { 13.0 5.0 }
entry params (a: f64) (b: f64) : (f64, f64) =
  let norm2 (x: f64) (y: f64) : f64 = x * x + y * y
  let sum_pair ((x, y): (f64, f64)) = x + y
  in (norm2 a b, sum_pair (a, b))

-- Local functions calling other local functions.
-- ==
-- entry: chain
-- input { 2 } output { 9 }
entry chain (x: i32) : i32 =
  let f y = y + 1
  let g y = f y * f y
  in g x

-- A local function with a size parameter.
-- ==
-- entry: sized
-- input { [1, 2, 3] } output { 3i64 [3, 2, 1] }
entry sized (xs: []i32) : (i64, []i32) =
  let rev [n] (ys: [n]i32) : [n]i32 = map (\i -> ys[n - 1 - i]) (iota n)
  in (length (rev xs), rev xs)

-- A local function used inside a loop and in a SOAC.
-- ==
-- entry: in_soacs
-- input { [1, 2, 3] } output { 14 [1, 4, 9] }
entry in_soacs (xs: []i32) : (i32, []i32) =
  let sq x = x * x
  in (loop s = 0 for x in xs do s + sq x, map sq xs)
