-- Conditionals.

-- ==
-- entry: abs_val
-- input { -3 } output { 3 }
-- input { 4 } output { 4 }
-- input { 0 } output { 0 }
entry abs_val (x: i32) : i32 = if x < 0 then -x else x

-- else-if chains.
-- ==
-- entry: classify
-- input { -5 } output { -1 }
-- input { 0 } output { 0 }
-- input { 9 } output { 1 }
-- input { 100 } output { 2 }
entry classify (x: i32) : i32 =
  if x < 0 then -1
  else if x == 0 then 0
  else if x < 10 then 1
  else 2

-- Branches returning tuples and arrays; arrays of different sizes.
-- ==
-- entry: branches
-- input { true } output { 1 2.0 [1, 2, 3] }
-- input { false } output { 2 1.0 [4] }
entry branches (b: bool) : (i32, f64, []i32) =
  let (x, y) = if b then (1, 2.0) else (2, 1.0)
  let xs = if b then [1, 2, 3] else [4]
  in (x, y, xs)

-- Only the chosen branch is evaluated (the other would index out of bounds).
-- ==
-- entry: lazy_branch
-- input { [1, 2, 3] 1i64 } output { 2 }
-- input { [1, 2, 3] 7i64 } output { -1 }
entry lazy_branch (xs: []i32) (i: i64) : i32 =
  if i < length xs then xs[i] else -1

-- `if` inside map and an `if` as an operand.
-- ==
-- entry: in_map
-- input { [1, -2, 3, -4] } output { [1, 0, 3, 0] 10 }
entry in_map (xs: []i32) : ([]i32, i32) =
  (map (\x -> if x > 0 then x else 0) xs, 1 + (if length xs > 2 then 9 else 0))

-- Branches that compute their result's size the same way (`i64.sum ks` in each): the size is
-- computed once before the `if`, so a `map` (here `tabulate`) whose function holds it is
-- regular (Futhark's tests/ad/flatmap0.fut). ks sums to 3: row i < 3 is the unit vector e_i,
-- row 3 is zero.
-- ==
-- entry: shared_size
-- input { [1i64, 2i64] 4i64 } output { [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]] }
entry shared_size (ks: []i64) (n: i64) : [][]i32 =
  tabulate n (\i -> if i < i64.sum ks
                    then replicate (i64.sum ks) 0 with [i] = 1
                    else replicate (i64.sum ks) 0)
