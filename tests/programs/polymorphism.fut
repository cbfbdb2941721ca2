-- Polymorphic functions: explicit type parameters, inferred polymorphism,
-- instantiation at several types.

def identity 't (x: t) : t = x

def swap 'a 'b (x: a) (y: b) : (b, a) = (y, x)

def first 't (xs: []t) : t = xs[0]

-- No type parameters written: the function is still polymorphic.
def pair_up x y = (x, y)

def apply_n 'a (n: i32) (f: a -> a) (x: a) : a = loop x for _i < n do f x

-- Polymorphic over arrays of any rank.
def count 't (xs: []t) : i64 = length xs

-- ==
-- entry: several_types
-- input { 1 2.5 true } output { 1 2.5 true 2.5 1 }
entry several_types (a: i32) (b: f64) (c: bool) : (i32, f64, bool, f64, i32) =
  let (x, y) = swap a b
  in (identity a, identity b, identity c, x, y)

-- ==
-- entry: arrays
-- input { [3, 4] [[1.0, 2.0], [3.0, 4.0]] } output { 3 [1.0, 2.0] 2i64 2i64 }
entry arrays (xs: []i32) (m: [][]f64) : (i32, []f64, i64, i64) = (first xs, first m, count xs, count m)

-- ==
-- entry: inferred
-- input { 1 2.0 } output { 1 2.0 2.0 1 }
entry inferred (a: i32) (b: f64) : (i32, f64, f64, i32) =
  let (p, q) = pair_up a b
  let (r, s) = pair_up b a
  in (p, q, r, s)

-- ==
-- entry: hof_poly
-- input { 3 } output { 24 [3, 4] }
entry hof_poly (x: i32) : (i32, []i32) = (apply_n 3 (* 2) x, apply_n 2 (\xs -> map (+ 1) xs) [1, 2])

-- A polymorphic local function used at two types.
-- ==
-- entry: local_poly
-- input { 5 1.5f32 } output { [5, 5] [1.5f32, 1.5f32] }
entry local_poly (a: i32) (b: f32) : ([]i32, []f32) =
  let dup 't (x: t) : []t = [x, x]
  in (dup a, dup b)

-- Polymorphic function over tuples with a size parameter.
-- ==
-- entry: sized_poly
-- input { [1, 2, 3] [true, false, true] } output { [true, false, true] [1, 2, 3] }
entry sized_poly [n] (xs: [n]i32) (ys: [n]bool) : ([n]bool, [n]i32) =
  let flip_all [m] 'a 'b (ps: [m](a, b)) : [m](b, a) = map (\(p, q) -> (q, p)) ps
  in unzip (flip_all (zip xs ys))

-- A size-lifted type parameter '~a: may be instantiated with a type whose
-- size is only known at run time.
def apply_to '~a 'b (f: a -> b) (x: a) : b = f x

-- ==
-- entry: size_lifted
-- input { [1, -2, 3] } output { 2i64 }
entry size_lifted (xs: []i32) : i64 =
  let ys = loop acc = [] for x in xs do if x > 0 then acc ++ [x] else acc
  in apply_to length ys
