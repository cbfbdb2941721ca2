-- Records: types, expressions (with field punning), field access, projection sections,
-- updates (nested, type-changing), patterns, records inside tuples and arrays, records as
-- entry-point parameters and results (passed as their fields in field order), and through
-- loops, conditionals, reductions, jvp and vjp. Expected values are worked out by hand.

type vec = {x: f64, y: f64, z: f64}

def vadd (a: vec) (b: vec) : vec = {x = a.x + b.x, y = a.y + b.y, z = a.z + b.z}
def vscale (s: f64) ({x, y, z}: vec) : vec = {x = s * x, y = s * y, z = s * z}
def dot (a: vec) (b: vec) : f64 = a.x * b.x + a.y * b.y + a.z * b.z

-- v = {1,2,3}; w = v with y = 5 = {1,5,3}; vadd v w = {2,7,6}; dot v {2,7,6} = 2+14+18 = 34.
-- The nested update makes r.p.z = 4; (vscale 2 v).z = 6.
-- ==
-- entry: basics
-- input { 1.0 2.0 3.0 } output { 34.0 4.0 6.0 5.0 }
entry basics (a: f64) (b: f64) (c: f64) =
  let v = {x = a, y = b, z = c}
  let w = v with y = 5.0
  let r = {p = v, q = w}
  let r = r with p.z = 4.0
  in (dot v (vadd v w), r.p.z, (vscale 2 v).z, r.q.y)

-- Field punning, numbered fields, a pattern with a nested tuple and an ascription, and a
-- type-changing update (field `a` goes from i32 to bool).
-- { a = 7, b = (7+1, 7*2) = (8, 14) }: c + d = 22; {0 = 3, 1 = 4} is the tuple (3, 4).
-- ==
-- entry: patterns
-- input { 7 } output { 22 7 true 7 }
entry patterns (a: i32) =
  let b = (a + 1, a * 2)
  let r = {a, b}
  let {a = e, b = (c, d): (i32, i32)} = r
  let t: (i32, i32) = {0 = 3, 1 = 4}
  let r2 = r with a = (t.0 + t.1 == e)
  in (c + d, e, r2.a, r2.b.1 / 2)

-- Arrays of records: map with a projection section, zip of records, a reduction with a record
-- operator, and a lambda with a record pattern.
-- xs = [1, 2, 3, 4]: sum = 10, max of -x*x = -1, count of even = 2.
-- ==
-- entry: arrays
-- input { [1.0, 2.0, 3.0, 4.0] } output { 10.0 -1.0 2i64 [2.0, 4.0, 6.0, 8.0] }
entry arrays (xs: []f64) =
  let rs = map (\x -> {v = x, sq = {neg = -(x * x)}, even = f64.i64 (i64.f64 x / 2) * 2 == x}) xs
  let acc =
    reduce (\p q -> {s = p.s + q.s, m = f64.max p.m q.m})
           {s = 0, m = -f64.inf}
           (map (\r -> {s = r.v, m = r.sq.neg}) rs)
  let evens = map (\{v = _, sq = _, even} -> i64.bool even) rs |> i64.sum
  in (acc.s, acc.m, evens, map (.v) rs |> map (* 2))

-- Records as entry-point parameters and results: a record is passed as its fields in field
-- order (`n` before `w`), here n = 3, w = 2.5: {area = 7.5, half = {n = 1, w = 2.5}}; the
-- result record has fields `area`, `half`, so it is returned as 7.5 then (1, 2.5).
-- ==
-- entry: interface
-- input { 3i64 2.5 } output { 7.5 1i64 2.5 }
entry interface (r: {w: f64, n: i64}) : {area: f64, half: {n: i64, w: f64}} =
  {area = f64.i64 r.n * r.w, half = r with n = r.n / 2}

-- A loop whose state is a record, and a conditional returning records: Fibonacci in (a, b),
-- n = 10 steps from {a = 0, b = 1}: a = 55; the branch picks {a = 55 * 2} as 55 > 50.
-- ==
-- entry: loops
-- input { 10 } output { 55 110 }
entry loops (n: i32) =
  let r = loop st = {a = 0, b = 1} for _i < n do {a = st.b, b = st.a + st.b}
  let q = if r.a > 50 then {a = r.a * 2} else {a = 0}
  in (r.a, q.a)

-- AD: the derivative of dot v v with respect to v is 2v (a record adjoint); the tangent of
-- |v|^2 along {1, 0, 1} at {1, 2, 3} is 2*1 + 2*3 = 8.
-- ==
-- entry: grad
-- input { 1.0 2.0 3.0 } output { 2.0 4.0 6.0 8.0 }
entry grad (a: f64) (b: f64) (c: f64) =
  let v = {x = a, y = b, z = c}
  let g = vjp (\u -> dot u u) v 1.0
  let t = jvp (\u -> dot u u) v {x = 1, y = 0, z = 1}
  in (g.x, g.y, g.z, t)

-- vjp of a function from a record of arrays to a record: d/dxs sum(xs * ys) = ys and
-- d/dys = xs under the adjoint {s = 1, m = 0} of the result.
-- ==
-- entry: grad_arrays
-- input { [1.0, 2.0] [3.0, 4.0] } output { [3.0, 4.0] [1.0, 2.0] }
entry grad_arrays (xs: []f64) (ys: []f64) =
  let f (r: {xs: []f64, ys: []f64}) = {s = f64.sum (map2 (*) r.xs r.ys), m = f64.maximum r.xs}
  let adj = vjp f {xs, ys} {s = 1, m = 0}
  in (adj.xs, adj.ys)
