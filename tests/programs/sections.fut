-- Operator sections: (op), (op e), (e op), backticked functions, projection
-- sections (.0).

def sub (a: i32) (b: i32) : i32 = a - b

-- ==
-- entry: full
-- input { [1, 2, 3] [4, 5, 6] } output { 6 [4, 10, 18] [true, true, true] [false, false, false] }
entry full (xs: []i32) (ys: []i32) : (i32, []i32, []bool, []bool) =
  (reduce (+) 0 xs, map2 (*) xs ys, map2 (<) xs ys, map2 (==) xs ys)

-- Right sections (op e) give the right operand, left sections (e op) the left.
-- ==
-- entry: right_left
-- input { [8.0, 4.0] } output { [4.0, 2.0] [0.25, 0.5] [6.0, 2.0] [-6.0, -2.0] }
entry right_left (xs: []f64) : ([]f64, []f64, []f64, []f64) =
  (map (/ 2) xs, map (2 /) xs, map (+ (-2)) xs, map (2 -) xs)

-- ==
-- entry: int_sections
-- input { [1, 2, 3] } output { [2, 4, 6] [1, 4, 9] [8, 16, 32] [true, false, false] }
entry int_sections (xs: []i32) : ([]i32, []i32, []i32, []bool) =
  (map (* 2) xs, map (** 2) xs, map (2 **) (map (+ 2) xs), map (< 2) xs)

-- Backticked functions in sections: (`f` y) is \x -> f x y, (x `f`) is \y -> f x y.
-- ==
-- entry: backticks
-- input { [5, 7] } output { [4, 6] [5, 3] 7 [5, 7] }
entry backticks (xs: []i32) : ([]i32, []i32, i32, []i32) =
  (map (`sub` 1) xs, map (10 `sub`) xs, reduce (`i32.max`) i32.lowest xs, map2 (`i32.max`) xs xs)

-- A qualified operator of a numeric module as a section.
-- ==
-- entry: qualified_op
-- input { [1.5f32, 2.0f32] } output { 3.5f32 3.0f32 }
entry qualified_op (xs: []f32) : (f32, f32) = (reduce (f32.+) 0 xs, reduce (f32.*) 1 xs)

-- Logical operator sections.
-- ==
-- entry: logical
-- input { [true, false, true] } output { false true }
entry logical (bs: []bool) : (bool, bool) = (reduce (&&) true bs, reduce (||) false bs)

-- Projection sections.
-- ==
-- entry: projections
-- input { [1, 2] [3.0, 4.0] } output { [1, 2] [3.0, 4.0] [3.0, 4.0] }
entry projections (xs: []i32) (ys: []f64) : ([]i32, []f64, []f64) =
  let ps = zip xs ys
  let nested = zip xs (zip ys xs)
  in (map (.0) ps, map (.1) ps, map (.1.0) nested)

-- Bitwise and shift sections.
-- ==
-- entry: bit_sections
-- input { [1, 2, 3] } output { [2, 4, 6] [0, 1, 1] [1, 0, 1] }
entry bit_sections (xs: []i32) : ([]i32, []i32, []i32) =
  (map (<< 1) xs, map (>> 1) xs, map (& 1) xs)
