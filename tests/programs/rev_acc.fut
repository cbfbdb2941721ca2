-- Nested AD through accumulators: the vjp of a map that reads a free array accumulates its
-- adjoint in a withacc; vjp of vjp (Hessian-vector products) and jvp of vjp (forward over
-- reverse) differentiate those accumulators. Also the derivatives of gamma and lgamma (digamma).
-- Expected values worked out by hand; core/src/ad/rev/tests_acc.rs checks the same functions
-- against finite differences.

-- f(x)ᵢ = sin(xᵢ)·xᵢ², f'(x) = cos x·x² + 2x·sin x, f''(x) = −sin x·x² + 4x·cos x + 2·sin x.
def f [n] (x: [n]f64) : [n]f64 = map (\i -> f64.sin x[i] * x[i] * x[i]) (iota n)

-- vjp of (x ↦ vjp f x ȳ) with seed v: vᵢ·ȳᵢ·f''(xᵢ).
-- ==
-- entry: hvp
-- input { [0.5, -1.25, 2.0] [1.0, 2.0, -0.5] [0.25, 1.0, 3.0] }
-- output { [0.6485399540845251, -3.983585165888824, 7.721654319042754] }
-- input { empty([0]f64) empty([0]f64) empty([0]f64) } output { empty([0]f64) }
entry hvp [n] (x: [n]f64) (ybar: [n]f64) (v: [n]f64) : [n]f64 =
  vjp (\x -> vjp f x ybar) x v

-- jvp of (x ↦ vjp f x ȳ) along ẋ: ȳᵢ·f''(xᵢ)·ẋᵢ.
-- ==
-- entry: fwd_over_rev
-- input { [0.5, -1.25, 2.0] [1.0, 2.0, -0.5] [1.0, 0.5, -1.0] }
-- output { [2.5941598163381006, -1.991792582944412, -2.5738847730142513] }
entry fwd_over_rev [n] (x: [n]f64) (ybar: [n]f64) (dx: [n]f64) : [n]f64 =
  jvp (\x -> vjp f x ybar) x dx

-- Γ'(x) = Γ(x)·ψ(x), (ln Γ)'(x) = ψ(x): ψ(1) = −γ, ψ(1/2) = −γ − 2 ln 2, Γ(1/2) = √π.
-- ==
-- entry: dgamma
-- input { 1.0 } output { -0.5772156649015329 -0.5772156649015329 }
-- input { 0.5 } output { -3.480230906913262 -1.9635100260214235 }
entry dgamma (x: f64) : (f64, f64) = (jvp f64.gamma x 1, jvp f64.lgamma x 1)
