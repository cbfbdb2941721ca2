-- Arrays of empty tuples, whose only content is their shape, and size parameters that only a
-- function's result mentions: the "size witness" idiom of diku-dk/autodiff's onehot module, a
-- record `{size: [0][n](), ...}` whose type carries a size that a later call reads back as a
-- size parameter. Expected values are worked out by hand.

def witness x = [] : [0][x]()

type gen [n] = {size: [0][n](), scale: f64}

def mk (x: f64) : gen [1] = {size = witness 1, scale = x}
def size [n] (_: gen [n]) = n

-- `n` occurs only in the result: every call finds it from the type its context expects.
def widen [n] [m] (g: gen [m]) : gen [n * m] = {size = witness (n * m), scale = g.scale}
def both [n] [m] (a: gen [n]) (b: gen [m]) : gen [n + m] =
  {size = witness (n + m), scale = a.scale + b.scale}

-- `fill` has size parameter `n` only in its result; `: [k]i32` gives it.
def fill [n] (x: i32) : [n]i32 = replicate n x

-- size (mk 2) = 1; widened to k*1 with k = 3: 3; both (mk 2) (mk 5) = 1 + 1 = 2; the sum of
-- `fill 7 : [3]i32` is 21; the scale of `both` is 2 + 5 = 7.
-- ==
-- entry: sizes
-- input { 3i64 } output { 1i64 3i64 2i64 21 7.0 }
entry sizes (k: i64) =
  let g = mk 2
  let w = widen g : gen [k * 1]
  let b = both g (mk 5)
  in (size g, size w, size b, i32.sum (fill 7 : [k]i32), b.scale)

-- The shape flows through a branch and a loop: k = 5 > 2 takes `witness k` (5); the loop
-- makes 1, 1+0 = 1, 1+1 = 2, 2+2 = 4, 4+3 = 7, 7+4 = 11 for i < 5. `transpose` of a
-- [0][x]() is [x][0](), so its length is x.
-- ==
-- entry: flow
-- input { 5i64 } output { 5i64 11i64 0i64 }
entry flow (k: i64) =
  let w = if k > 2 then witness k else witness 7
  let l = loop w = witness 1 for i < k do witness (length (transpose w) + i)
  in (length (transpose w), length (transpose l), length w)

-- Arrays of empty tuples built by replicate, map and a literal: their lengths are k = 4, k,
-- and 2; a map over one gives k twos (sum 8); indexing one gives (), its slice [1:] has k-1
-- rows; zipped with iota k and unzipped, the other half is 0..3 (sum 6).
-- ==
-- entry: built
-- input { 4i64 } output { 4i64 4i64 2i64 8i64 3i64 6i64 }
entry built (k: i64) =
  let r = replicate k ()
  let m = map (\_ -> ()) (iota k)
  let twos = map (\() -> 2i64) r
  let () = m[1]
  let (_, is) = unzip (zip r (iota k))
  in (length r, length m, length [(), ()], i64.sum twos, length m[1:], i64.sum is)

-- A size witness inside a record through vjp: f g x = g.scale * x * x, with the record a
-- constant of the differentiated function: d/dx at x = 3 with scale 2 is 2*2*3 = 12, and
-- jvp with tangent 1 is the same.
-- ==
-- entry: ad
-- input { 3.0 } output { 12.0 12.0 }
entry ad (x: f64) =
  let g = mk 2
  let f (y: f64) = g.scale * y * y * f64.i64 (size g)
  in (vjp f x 1, jvp f x 1)

-- The record itself differentiated: its adjoint is a record whose size field is the same
-- witness and whose scale is x*x = 9 (f = scale * x * x at scale 2, x = 3).
-- ==
-- entry: ad_record
-- input { 3.0 } output { 9.0 1i64 }
entry ad_record (x: f64) =
  let f (g: gen [1]) = g.scale * x * x
  let g' = vjp f (mk 2) 1
  in (g'.scale, size g')
