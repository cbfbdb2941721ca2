-- Sum types and `match`: constructors with and without payloads, polymorphic sums through
-- type abbreviations, literal, tuple, record and nested constructor patterns, arrays of sums,
-- sums as loop state, equality, and jvp/vjp through constructors and matches. Expected values
-- are worked out by hand in the comments.

type shape = #circle f64 | #rect f64 f64 | #empty

def area (s: shape) : f64 =
  match s
  case #circle r -> 3.0 * r * r
  case #rect w h -> w * h
  case #empty -> 0

type opt 'a = #some a | #none

def get_or 'a (d: a) (o: opt a) : a =
  match o
  case #some x -> x
  case #none -> d

def safe_div (x: f64) (y: f64) : opt f64 = if y == 0 then #none else #some (x / y)

-- a = 2, b = 3: circle 3*2*2 = 12, rect 2*3 = 6, empty 0; 12+6+0 = 18.
-- safe_div 2 3 ... get_or 7 (#some 2/3) + get_or 7 #none = 0.666.. + 7; checked as
-- get_or: (safe_div 6 3 = #some 2) -> 2, (safe_div 1 0 = #none) -> 7.
-- ==
-- entry: shapes
-- input { 2.0 3.0 } output { [12.0, 6.0, 0.0] 18.0 2.0 7.0 }
entry shapes (a: f64) (b: f64) =
  let ss = [#circle a, #rect a b, #empty]
  let areas = map area ss
  in (areas, f64.sum areas, get_or 7 (safe_div 6 3), get_or 7 (safe_div 1 0))

-- Literal patterns on integers (also negative), floats and booleans, with catch-alls.
-- ==
-- entry: literals
-- input { [0, -1, 5, 2] } output { [10, 20, 30, 40] }
entry literals (xs: []i32) =
  map (\x -> match (x, x > 1)
             case (0, _) -> 10
             case (-1, _) -> 20
             case (_, false) -> 99
             case (2, true) -> 40
             case (_, true) -> 30) xs

-- Nested patterns: a pair of a bool and an option; records in payloads and record patterns.
-- (true, #some 3) -> 3; (false, #some 3) -> -1; (true, #none) -> 0.
-- #pt {x = 1, y = 2} -> x + y = 3; #origin -> 0.
-- ==
-- entry: nested
-- input { 3 } output { 3 -1 0 3 0 }
entry nested (x: i32) =
  let f (v: (bool, opt i32)) =
    match v
    case (true, #some y) -> y
    case (false, #some _) -> -1
    case (_, #none) -> 0
  let g (p: #pt {x: i32, y: i32} | #origin) =
    match p
    case #pt {x, y} -> x + y
    case #origin -> 0
  in (f (true, #some x), f (false, #some x), f (true, #none), g (#pt {x = 1, y = 2}), g #origin)

-- A sum as loop state: a small state machine counting to n = 5, then stopping.
-- #counting 0 -> ... -> #counting 5 -> #done 5 (steps: 6 iterations of 10), result 5 * 2 = 10.
-- Equality of sums compares the constructor and its payload.
-- ==
-- entry: machine
-- input { 5 } output { 10 true false false }
entry machine (n: i32) =
  let st = loop (st: #counting i32 | #done i32) = #counting 0 for _i < 10 do
             match st
             case #counting k -> if k == n then #done k else #counting (k + 1)
             case #done k -> #done k
  let r = match st
          case #done k -> k * 2
          case #counting _ -> -1
  let a : opt i32 = #some 1
  in (r, a == #some 1, a == #some 2, a == #none)

-- AD through a match: d/dr area (#circle r) = 6r = 12 at r = 2; d/dw area (#rect w h) = h = 3;
-- the tangent of the rectangle's area along (1, 1) at (2, 3) is h + w = 5.
-- ==
-- entry: grad
-- input { 2.0 3.0 } output { 12.0 3.0 5.0 }
entry grad (a: f64) (b: f64) =
  ( vjp (\r -> area (#circle r)) a 1.0
  , vjp (\w -> area (#rect w b)) a 1.0
  , jvp (\(w, h) -> area (#rect w h)) (a, b) (1.0, 1.0) )

-- vjp through a map that builds sums from an array, chooses a constructor per element and
-- matches: f(xs) = sum of (x*x if x > 0 else 2x); gradient 2x or 2: [2, 4, 2] at [1, 2, -3].
-- ==
-- entry: grad_map
-- input { [1.0, 2.0, -3.0] } output { [2.0, 4.0, 2.0] }
entry grad_map (xs: []f64) =
  let f (xs: []f64) =
    map (\x -> if x > 0 then #sq x else #lin x) xs
    |> map (\(s: #sq f64 | #lin f64) -> match s case #sq v -> v * v case #lin v -> 2 * v)
    |> f64.sum
  in vjp f xs 1.0
