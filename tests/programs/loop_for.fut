-- `loop ... for i < n do ...`.

-- ==
-- entry: factorial
-- input { 5 } output { 120 }
-- input { 0 } output { 1 }
-- input { -3 } output { 1 }
entry factorial (n: i32) : i32 = loop acc = 1 for i < n do acc * (i + 1)

-- The loop variable has the bound's type.
-- ==
-- entry: sum_i64
-- input { 10i64 } output { 45i64 }
entry sum_i64 (n: i64) : i64 = loop s = 0 for i < n do s + i

-- ==
-- entry: sum_u8
-- input { 30u8 } output { 179u8 }
entry sum_u8 (n: u8) : u8 = loop s = 0 for i < n do s + i

-- Tuple-valued loop parameters: Fibonacci numbers.
-- ==
-- entry: fib
-- input { 10 } output { 55 89 }
-- input { 0 } output { 0 1 }
entry fib (n: i32) : (i32, i32) = loop (a, b) = (0, 1) for _i < n do (b, a + b)

-- Nested loops.
-- ==
-- entry: nested
-- input { 4 } output { 36 }
entry nested (n: i32) : i32 =
  loop s = 0 for i < n do
    loop s for j < n do s + i * j

-- The initial value may be left out: it is taken from the variable of the same name.
-- ==
-- entry: no_init
-- input { 3 4 } output { 7 12 }
entry no_init (x: i32) (n: i32) : (i32, i32) =
  let a = x
  let b = 0
  let (a, b) = loop (a, b) for _i < n do (a + 1, b + x)
  in (a, b)

-- A loop parameter that is an array, updated in place.
-- ==
-- entry: squares
-- input { 5i64 } output { [0i64, 1i64, 4i64, 9i64, 16i64] }
entry squares (n: i64) : []i64 =
  loop xs = replicate n 0 for i < n do xs with [i] = i * i

-- Arrays in the loop may change size between iterations.
-- ==
-- entry: doubling
-- input { 3 } output { [1, 1, 1, 1, 1, 1, 1, 1] }
entry doubling (n: i32) : []i32 = loop xs = [1] for _i < n do xs ++ xs

-- A loop whose parameter has a type annotation, and a loop over floats.
-- ==
-- entry: annotated
-- input { 4 } output { 0.9375f32 }
entry annotated (n: i32) : f32 =
  loop (acc: f32) = 0 for i < n do acc + 1 / f32.i32 (2 ** (i + 1))

-- A loop inside a map.
-- ==
-- entry: in_map
-- input { [1, 2, 3] } output { [1, 4, 27] }
entry in_map (xs: []i32) : []i32 = map (\x -> loop p = 1 for _i < x do p * x) xs
