-- `loop ... while cond do ...`.

-- Collatz: the number of steps to reach 1.
-- ==
-- entry: collatz
-- input { 6 } output { 8 }
-- input { 1 } output { 0 }
-- input { 27 } output { 111 }
entry collatz (n: i32) : i32 =
  let (_, steps) =
    loop (x, steps) = (n, 0) while x != 1 do
      if x % 2 == 0 then (x / 2, steps + 1) else (3 * x + 1, steps + 1)
  in steps

-- Euclid's algorithm.
-- ==
-- entry: gcd
-- input { 48 18 } output { 6 }
-- input { 17 5 } output { 1 }
-- input { 0 9 } output { 9 }
entry gcd (a: i32) (b: i32) : i32 =
  let (a, _) = loop (a, b) while b != 0 do (b, a % b)
  in a

-- The condition is tested before each iteration: zero iterations possible.
-- ==
-- entry: zero_iters
-- input { 10 } output { 10 }
-- input { 3 } output { 18 }
entry zero_iters (x: i32) : i32 = loop x while x < 10 do x * 2 + 2

-- A while loop over floats (Newton's method for the square root).
-- ==
-- entry: newton
-- input { 2.0 } output { 1.4142135623730951 }
-- input { 9.0 } output { 3.0 }
entry newton (a: f64) : f64 =
  loop x = a while f64.abs (x * x - a) > 1e-12 do (x + a / x) / 2

-- A while loop that grows an array.
-- ==
-- entry: grow
-- input { 5i64 } output { [0i64, 1i64, 2i64, 3i64, 4i64, 5i64] }
entry grow (n: i64) : []i64 =
  loop xs = [0] while length xs <= n do xs ++ [length xs]
