-- | Top-level declarations: constants and functions declared with `def` and
-- (deprecated) `let`, referring to earlier declarations; documentation comments.

-- | A constant.
def offset : i32 = 10

-- | A constant declared with top-level `let`.
let scale : f64 = 2.5

-- A constant computed from other declarations.
def table : []i32 = map (+ offset) [1, 2, 3]

def add_offset (x: i32) : i32 = x + offset

-- A function without annotations: its types are inferred.
def twice_plus x y = 2 * x + y

-- A function without parameters that is not a constant: it returns a function.
def inc : i32 -> i32 = \x -> x + 1

-- | Uses earlier functions.
def compute (x: i32) : i32 = add_offset (add_offset x) |> inc

-- ==
-- entry: constants
-- input { } output { 10 2.5 [11, 12, 13] }
entry constants : (i32, f64, []i32) = (offset, scale, table)

-- ==
-- entry: functions
-- input { 1 } output { 22 5 [2.5, 5.0] }
entry functions (x: i32) : (i32, i32, []f64) = (compute x, twice_plus x 3, map (* scale) [1, 2])

-- Functions with the same parameter name as a global: the parameter wins.
def shadowing (offset: i32) : i32 = offset * 2

-- ==
-- entry: shadow
-- input { 4 } output { 8 }
entry shadow (x: i32) : i32 = shadowing x
