-- User-defined operators: `def (op)`, the infix form `def x op y`, local operators, operator
-- parameters, sections, and shadowing of built-in operators. Precedence and associativity come
-- from an operator's leading characters, as in Futhark. Expected values worked out by hand.

def (+^) (a: i32) (b: i32) : i32 = a * 10 + b
def (a: i32) *^ (b: i32) : i32 = a * b + 1
def x <=> y : bool = x == y
def (<|^) (a: i32) (b: i32) : i32 = a - b
def (|>^) (a: i32) (b: i32) : i32 = a - b
def (**^) (a: i32) (b: i32) : i32 = a - b
def (&^) (a: i32) (b: i32) : i32 = a & b

-- x = 3, y = 4:
--   x +^ y = 34; x +^ y * 2 = 3 +^ 8 = 38; (x +^ y) +^ 1 = 341;
--   1 +^ 2 *^ 3 = 1 +^ 7 = 17 (`*^` binds tighter than `+^`);
--   10 <|^ 3 <|^ 2 = 10 - (3 - 2) = 9 (right-associative, like `<|`);
--   10 |>^ 3 |>^ 2 = (10 - 3) - 2 = 5 (left-associative);
--   2 **^ 3 **^ 4 = (2 - 3) - 4 = -5 (left-associative, like `**`);
--   6 &^ 3 <=> 2 = (6 & 3) == 2 = true (`&` binds tighter than comparisons);
--   sections: map (+^ 1) [3, 4] = [31, 41], map (1 +^) [3, 4] = [13, 14];
--   reduce_comm-free fold: foldl (+^) 0 [1, 2, 3] = ((0*10+1)*10+2)*10+3 = 123.
-- ==
-- input { 3 4 }
-- output { 34 38 341 17 9 5 -5 true [31, 41] [13, 14] 123 false }
entry main (x: i32) (y: i32) =
  ( x +^ y
  , x +^ y * 2
  , x +^ y +^ 1
  , 1 +^ 2 *^ 3
  , 10 <|^ 3 <|^ 2
  , 10 |>^ 3 |>^ 2
  , 2 **^ 3 **^ 4
  , 6 &^ 3 <=> 2
  , map (+^ 1) [x, y]
  , map (1 +^) [x, y]
  , foldl (+^) 0 [1, 2, 3]
  , x <=> y
  )

-- Local operators: a local function `let (op) a b = ...` and a pattern `let (op) = ...`;
-- an operator as a lambda parameter. x = 3: 3 %^ 2 |^ 1 = (300 + 2) - 1 = 301;
-- (\(&&^) -> x &&^ 5) (\a b -> a * b) = 15.
-- ==
-- entry: local_ops
-- input { 3 } output { 301 15 }
entry local_ops (x: i32) : (i32, i32) =
  let (%^) a b = a * 100 + b
  let (|^) = \a b -> a - b
  in (x %^ 2 |^ 1, (\(&&^) -> x &&^ 5) (\a b -> a * b))

-- Operators in higher-order functions and with polymorphism.
def (>>=) 'a 'b (x: a) (f: a -> b) : b = f x

-- 5 >>= (+ 1) >>= (* 2) = 12 (`>>=` has the precedence of `>>`, left-associative).
-- ==
-- entry: poly
-- input { 5 } output { 12 }
entry poly (x: i32) : i32 = x >>= (+ 1) >>= (* 2)

-- A definition of a built-in operator shadows it from there on: `+` is subtraction below,
-- `-` (binary) is addition; prefix negation is unchanged; `f64.(+)` is still f64's.
-- x = 3: x + 1 + 1 = (3 - 1) - 1 = 1; 10 - 2 = 12; -x = -3; (+) 5 2 = 3; f64.(1.5 + 2.0) = 3.5.
def (+) (a: i32) (b: i32) : i32 = a - b
def (-) (a: i32) (b: i32) : i32 = a i32.+ b

-- ==
-- entry: shadow
-- input { 3 } output { 1 12 -3 3 3.5 }
entry shadow (x: i32) : (i32, i32, i32, i32, f64) =
  (x + 1 + 1, 10 - 2, -x, (+) 5 2, f64.(1.5 + 2.0))
