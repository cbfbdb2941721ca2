-- Bool adjoints in reverse mode, as Futhark gives them: a bool's adjoint is a bool, adjoints
-- add with `||` and multiply with `&&`; `!x` has partial x, `a && b` has partials (b, a),
-- `a || b` has (true, false), and a conversion to or from bool converts the adjoint back.
-- Derived by hand from those rules (checked on the transformation and on the AD oracle).

-- ==
-- entry: convert
-- input { 3.0 true } output { 1.0 true }
-- input { 3.0 false } output { 0.0 true }
-- input { 0.0 true } output { 1.0 false }
entry convert (x: f64) (c: bool) = vjp (\(x, c) -> f64.bool c * x) (x, c) 1.0

-- f a b = a && (b || !a); seed true.
-- (T,T): r = T, a' = r = T, r' = a = T, b' = T, (!a)' = F -> (T, T)
-- (T,F): r = F, a' = F, b' = T -> (F, T)
-- (F,T): r = T, a' = T, r' = a = F -> (T, F)
-- ==
-- entry: logic
-- input { true true } output { true true }
-- input { true false } output { false true }
-- input { false true } output { true false }
entry logic (x: bool) (y: bool) = vjp (\(a, b) -> a && (b || !a)) (x, y) true
