-- Derivatives of functions defined in a parametric module, applied to f64 and f32.

module mk_poly (T: real) = {
  def f (x: T.t) : T.t = T.(x * x * x + i64 2 * x)
  def g (v: [2]T.t) : T.t = T.(sin v[0] * v[1])
}

module p64 = mk_poly f64
module p32 = mk_poly f32

-- f' x = 3x^2 + 2: 14 at 2.
-- ==
-- entry: df
-- input { 2.0 } output { 14.0 }
entry df (x: f64) : f64 = jvp p64.f x 1.0

-- The gradient of sin a * b is (cos a * b, sin a): (3, 0) at (0, 3).
-- ==
-- entry: grad_g
-- input { 0.0 3.0 } output { [3.0, 0.0] }
entry grad_g (a: f64) (b: f64) : [2]f64 = vjp p64.g [a, b] 1.0

-- f' 1 = 5.
-- ==
-- entry: df32
-- input { 1f32 } output { 5f32 }
entry df32 (x: f32) : f32 = vjp p32.f x 1f32
