-- Parametric modules (functors) applied to the numeric modules f64 and f32 and to modules
-- defined in source; several parameters; nested applications; ascription with refinement.

module type field = {
  type t
  val + : t -> t -> t
  val * : t -> t -> t
  val i64 : i64 -> t
  val sqrt : t -> t
}

module mk_vec (T: field) = {
  type t = T.t
  def dot [n] (xs: [n]t) (ys: [n]t) : t = T.(reduce (+) (i64 0) (map2 (*) xs ys))
  def norm [n] (xs: [n]t) : t = T.sqrt (dot xs xs)
  def scale [n] (k: t) (xs: [n]t) : [n]t = map (T.* k) xs
  def total [n] (xs: [n]t) : t = reduce (T.+) (T.i64 0) xs
  def plus_one (x: t) : t = x T.+ T.i64 1
}

module v64 = mk_vec f64
module v32 = mk_vec f32

-- 1*4 + 2*5 + 3*6 = 32; |(3, 4)| = 5.
-- ==
-- entry: with_f64
-- input { [1.0, 2.0, 3.0] [4.0, 5.0, 6.0] } output { 32.0 5.0 [2.0, 4.0, 6.0] 6.0 2.5 }
entry with_f64 (xs: []f64) (ys: []f64) : (f64, f64, []f64, f64, f64) =
  (v64.dot xs ys, v64.norm [3.0, 4.0], v64.scale 2.0 xs, v64.total xs, v64.plus_one 1.5)

-- ==
-- entry: with_f32
-- input { [1f32, 2f32, 3f32] [4f32, 5f32, 6f32] } output { 32f32 5f32 [3f32, 6f32, 9f32] }
entry with_f32 (xs: []f32) (ys: []f32) : (f32, f32, []f32) =
  (v32.dot xs ys, v32.norm [3f32, 4f32], v32.scale 3f32 xs)

-- A module defined in source as the argument: integers with an integer square root. It
-- gets the operators by including the module i64.
module int_field = {
  include i64
  def sqrt (x: i64) : i64 = i64.f64 (f64.sqrt (f64.i64 x))
}

module vint = mk_vec int_field

-- ==
-- entry: with_user_module
-- input { [1i64, 2i64, 3i64] } output { 14i64 5i64 }
entry with_user_module (xs: []i64) : (i64, i64) = (vint.dot xs xs, vint.norm [3, 4])

module type monoid = {
  type t
  val zero : t
  val op : t -> t -> t
}

module fold (M: monoid) = {
  def all [n] (xs: [n]M.t) : M.t = reduce M.op M.zero xs
}

module max_i32 = {
  type t = i32
  def zero : t = i32.lowest
  def op (a: t) (b: t) : t = i32.max a b
}

module maxes = fold max_i32
module sums = fold { type t = f64 def zero : f64 = 0 def op (a: f64) (b: f64) : f64 = a + b }

-- A functor whose result is ascribed a refined module type.
module flipped (M: monoid) : monoid with t = M.t = {
  type t = M.t
  def zero = M.zero
  def op (a: t) (b: t) : t = M.op b a
}

-- Nested application: `fold (flipped max_i32)`.
module maxes2 = fold (flipped max_i32)

-- Two parameters.
module both (A: monoid) (B: monoid) = {
  def all [n] (xs: [n]A.t) (ys: [n]B.t) : (A.t, B.t) =
    (reduce A.op A.zero xs, reduce B.op B.zero ys)
}

module mb = both max_i32 (flipped { type t = f64 def zero : f64 = 0 def op (a: f64) (b: f64) : f64 = a + b })

-- ==
-- entry: monoids
-- input { [3, 9, 2] [1.5, 2.5, 4.0] } output { 9 8.0 9 9 8.0 }
entry monoids [n] (xs: [n]i32) (ys: [n]f64) : (i32, f64, i32, i32, f64) =
  let (a, b) = mb.all xs ys
  in (maxes.all xs, sums.all ys, maxes2.all xs, a, b)

-- The type of an applied functor's result, through the refinement: `flipped max_i32`'s t is
-- i32.
module fm = flipped max_i32

-- ==
-- entry: refined
-- input { 4 } output { 4 }
entry refined (x: fm.t) : i32 = fm.op x fm.zero
