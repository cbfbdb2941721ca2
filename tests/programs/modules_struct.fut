-- Modules with members: qualified names (values, types, nested modules), module aliases,
-- `M.(e)` for a module defined in source, and later modules shadowing earlier ones.

module vec2 = {
  type t = (f64, f64)
  def add ((a, b): t) ((c, d): t) : t = (a + c, b + d)
  def scale (k: f64) ((a, b): t) : t = (k * a, k * b)
  def dot ((a, b): t) ((c, d): t) : f64 = a * c + b * d

  module norms = {
    def l1 ((a, b): t) : f64 = f64.abs a + f64.abs b
    def l2 (v: t) : f64 = f64.sqrt (dot v v)
  }
}

module v = vec2

-- (1, 2) + 2 * (3, 4) = (7, 10).
-- ==
-- entry: combine
-- input { 1.0 2.0 3.0 4.0 } output { 7.0 10.0 }
entry combine (a: f64) (b: f64) (c: f64) (d: f64) : vec2.t =
  vec2.add (a, b) (v.scale 2.0 (c, d))

-- |(3, 4)| = 5 and |-3| + |4| = 7.
-- ==
-- entry: norms
-- input { 3.0 4.0 } output { 5.0 7.0 }
entry norms (a: f64) (b: f64) : (f64, f64) =
  (vec2.norms.l2 (a, b), v.norms.l1 (-a, b))

-- Inside `vec2.(...)` the module's `add` hides the local `add`; a `let` inside hides the
-- module's. (3, 4) . ((3, 4) + (1, 1)) = 3*4 + 4*5 = 32.
-- ==
-- entry: opened
-- input { 3.0 4.0 } output { 32.0 2.0 100.0 }
entry opened (a: f64) (b: f64) : (f64, f64, f64) =
  let add = 100.0
  in ( vec2.(dot (a, b) (add (a, b) (1.0, 1.0)))
     , vec2.(let add = 1.0 in add + 1.0)
     , add
     )

-- A module declared again shadows the first one from there on; what was defined before
-- keeps referring to the first.
module m = { def x : i32 = 1 }

def via_first : i32 = m.x

module m = { def x : i32 = 2 }

-- ==
-- entry: shadowed
-- input { 10 } output { 11 12 }
entry shadowed (y: i32) : (i32, i32) = (y + via_first, y + m.x)

-- Parameters and local bindings hide top-level definitions of the same name.
def scale : f64 = 1000.0

def top_scale (x: f64) : f64 = x + scale

-- ==
-- entry: locals_first
-- input { 3.0 } output { 6.0 1003.0 1003.0 }
entry locals_first (scale: f64) : (f64, f64, f64) =
  let r = (v.scale scale (1.0, 1.0)).0 + scale
  let s = (\(scale: f64) -> scale + 1.0) 1002.0
  in (r, s, top_scale scale)
