-- Type abbreviations, with type and size parameters, and lifted ones.

type vec = []f64
type pair 'a 'b = (a, b)
type matrix [n][m] = [n][m]i32
type two_vecs [n] 't = ([n]t, [n]t)
type^ binop 't = t -> t -> t
type index = i64
type~ dyn = ?[k].[k]i32

def norm2 (v: vec) : f64 = f64.sum (map (\x -> x * x) v)

def combine 't (op: binop t) (ne: t) (xs: []t) : t = reduce op ne xs

def split_pair 'a 'b (p: pair a b) : (a, b) = p

-- ==
-- entry: simple
-- input { [3.0, 4.0] } output { 25.0 }
entry simple (v: vec) : f64 = norm2 v

-- ==
-- entry: parametric
-- input { 1 2.5 } output { 1 2.5 }
entry parametric (a: i32) (b: f64) : (i32, f64) =
  let p : pair i32 f64 = (a, b)
  in split_pair p

-- ==
-- entry: sized
-- input { [[1, 2], [3, 4]] } output { [[1, 3], [2, 4]] 2i64 }
entry sized [n] (m: matrix [n][n]) : (matrix [n][n], index) = (transpose m, n)

-- ==
-- entry: two
-- input { [1, 2] } output { [1, 2] [2, 4] }
entry two [n] (xs: [n]i32) : ([n]i32, [n]i32) =
  let t : two_vecs [n] i32 = (xs, map (* 2) xs)
  in t

-- A lifted abbreviation for a function type.
-- ==
-- entry: lifted
-- input { [1, 2, 3] } output { 6 6 }
entry lifted (xs: []i32) : (i32, i32) =
  let mul : binop i32 = (*)
  in (combine (+) 0 xs, combine mul 1 xs)

-- A size-lifted abbreviation for an array whose size is known only at run time.
def positives (xs: []i32) : dyn =
  loop acc = [] for x in xs do if x > 0 then acc ++ [x] else acc

-- ==
-- entry: size_lifted
-- input { [3, -1, 4, -1, 5] } output { [3, 4, 5] }
entry size_lifted (xs: []i32) : []i32 = positives xs
