-- Tuples: construction, projection (.0, .1, nested), tuple parameters,
-- tuple results (returned as several values), the unit value.

def swap 'a 'b ((x, y): (a, b)) : (b, a) = (y, x)

def add_pairs (a: (i32, f64)) (b: (i32, f64)) : (i32, f64) = (a.0 + b.0, a.1 + b.1)

-- ==
-- entry: project
-- input { 1 2.5 } output { 2.5 1 true 1 }
entry project (a: i32) (b: f64) : (f64, i32, bool, i32) =
  let t = (a, b, (true, a))
  in (t.1, t.0, t.2.0, t.2.1)

-- ==
-- entry: swapped
-- input { 1 2.5 } output { 2.5 1 }
entry swapped (a: i32) (b: f64) : (f64, i32) = swap (a, b)

-- ==
-- entry: added
-- input { 1 2.5 } output { 3 6.0 }
entry added (a: i32) (b: f64) : (i32, f64) = add_pairs (a, b) (2, 3.5)

-- Nested tuples, taken apart before they are returned.
-- ==
-- entry: nested
-- input { 4 } output { 4 5 6 7 }
entry nested (x: i32) : (i32, i32, i32, i32) =
  let t : (i32, (i32, (i32, i32))) = (x, (x + 1, (x + 2, x + 3)))
  let (a, (b, cd)) = t
  in (a, b, cd.0, t.1.1.1)

-- The unit value and the unit type.
-- ==
-- entry: unit
-- input { 3 } output { 3 }
entry unit (x: i32) : i32 =
  let f (_: ()) = x
  let u : () = ()
  in f u

-- Tuples of arrays.
-- ==
-- entry: arrays
-- input { [1, 2, 3] } output { [1, 2, 3] [2, 4, 6] 6 }
entry arrays (xs: []i32) : ([]i32, []i32, i32) =
  let t = (xs, map (* 2) xs)
  in (t.0, t.1, reduce (+) 0 t.0)

-- A projection of a parenthesised expression and of a function result.
-- ==
-- entry: proj_expr
-- input { 5 } output { 6 5 }
entry proj_expr (x: i32) : (i32, i32) = ((x + 1, x).0, (swap (x, x + 1)).1)
