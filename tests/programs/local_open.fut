-- Local open of numeric modules: m.(e).

-- ==
-- entry: f64_open
-- input { 4.0 } output { 5.141592653589793 }
entry f64_open (x: f64) : f64 = f64.(sqrt x + pi)

-- Inside f32.(...) the operators are f32's, so the literals are f32.
-- ==
-- entry: f32_lits
-- input { 2.5f32 } output { 6.0f32 }
entry f32_lits (x: f32) : f32 = f32.(x * 2 + 1)

-- ==
-- entry: i32_open
-- input { 3 5 } output { 11 }
entry i32_open (a: i32) (b: i32) : i32 = i32.(max a b + min a b * 2)

-- Names the module does not define (local variables, prelude functions)
-- are found as usual.
-- ==
-- entry: outer_names
-- input { [1.0, 4.0, 9.0] } output { 6.0 4.0 }
entry outer_names (xs: []f64) : (f64, f64) =
  let k = 2.0
  in (f64.(sum (map sqrt xs)), f64.(k * cos 0 + k))

-- Conversions and constants in an opened integer module: inside i64.(...),
-- `f64` is the function i64.f64.
-- ==
-- entry: conversions
-- input { 2.9 } output { 2i64 9223372036854775807i64 }
entry conversions (x: f64) : (i64, i64) = (i64.(f64 x), i64.(highest))

-- A local open inside a lambda.
-- ==
-- entry: in_lambda
-- input { [1.0f32, 2.0f32] } output { [2.0f32, 5.0f32] }
entry in_lambda (xs: []f32) : []f32 = map (\x -> f32.(x * x + 1)) xs
