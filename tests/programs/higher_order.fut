-- Higher-order functions: functions as arguments, partial application,
-- functions returned from functions, functions in tuples and let bindings.

def twice 'a (f: a -> a) (x: a) : a = f (f x)

def compose '^a '^b '^c (f: b -> c) (g: a -> b) : a -> c = \x -> f (g x)

def apply_pair '^a 'b (fs: (a -> b, a -> b)) (x: a) : (b, b) = (fs.0 x, fs.1 x)

def add (a: i32) (b: i32) : i32 = a + b

def map_twice 'a (f: a -> a) (xs: []a) : []a = map (twice f) xs

-- ==
-- entry: twice_test
-- input { 3 } output { 5 12 }
entry twice_test (x: i32) : (i32, i32) = (twice (+ 1) x, twice (\y -> y * 2) x)

-- ==
-- entry: compose_test
-- input { [1, 2, 3] } output { [4, 6, 8] [3, 5, 7] }
entry compose_test (xs: []i32) : ([]i32, []i32) =
  (map (compose (* 2) (+ 1)) xs, map (compose (+ 1) (* 2)) xs)

-- Partial application of a named function.
-- ==
-- entry: partial
-- input { [1, 2, 3] } output { [11, 12, 13] 6 }
entry partial (xs: []i32) : ([]i32, i32) =
  let add10 = add 10
  in (map add10 xs, reduce add 0 xs)

-- A tuple of functions.
-- ==
-- entry: pairs
-- input { 4 } output { 5 8 }
entry pairs (x: i32) : (i32, i32) = apply_pair ((+ 1), (* 2)) x

-- A user-defined higher-order function that calls map.
-- ==
-- entry: user_hof
-- input { [1.0, 2.0] } output { [1.0, 16.0] }
entry user_hof (xs: []f64) : []f64 = map_twice (\x -> x * x) xs

-- Functions chosen by a value, applied in a loop.
-- ==
-- entry: in_loop
-- input { 5 } output { 160 }
entry in_loop (n: i32) : i32 =
  let step = \x -> x * 2
  in loop acc = n for _i < 5 do step acc

-- A function returning a function (curried definition).
-- ==
-- entry: returns_fn
-- input { [1, 2] } output { [3, 4] [5, 6] }
entry returns_fn (xs: []i32) : ([]i32, []i32) =
  let adder (k: i32) : i32 -> i32 = \x -> x + k
  in (map (adder 2) xs, map (adder 4) xs)

-- SOAC operators given as user functions and partially applied SOACs.
-- ==
-- entry: soac_args
-- input { [[1, 2], [3, 4]] } output { [3, 7] 10 }
entry soac_args (xss: [][]i32) : ([]i32, i32) =
  let sum = reduce add 0
  let row_sums = map sum xss
  in (row_sums, sum row_sums)

-- A function type with a named parameter used in the result's size.
def make_with (f: (n: i64) -> [n]i32) (k: i64) : [k]i32 = f k

-- ==
-- entry: named_param
-- input { 3i64 } output { [1, 1, 1] }
entry named_param (k: i64) : []i32 = make_with (\n -> replicate n 1) k
