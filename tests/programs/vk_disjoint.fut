-- Adjoints whose accumulator updates are provably disjoint (paper 003): reads of a free array
-- at injective indices (`x[2i]`, `x[2i+1]`, `x[i + k]`) in a `map` make histograms with
-- distinct indices, which run as plain read-modify-writes without atomics
-- (core/src/passes/hist_disjoint.rs); reads at `x[i/2]` must still accumulate. Variants of
-- the injectivity cases of ad-rules.md §7 (the cases themselves are in ad_rules_vjp.fut),
-- worked out by hand, and dot-product tests ⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩ at sizes past a workgroup.

def pairs [m] (n: i64) (x: [m]f64) : [n]f64 = map (\i -> x[2*i] * x[2*i+1]) (iota n)
def halves [n] (x: [n]f64) : [2*n]f64 = map (\i -> x[i/2] * 3) (iota (2*n))
def shifted [n] (k: i64) (x: [n]f64) : [n]f64 =
  map (\i -> f64.sin x[i] + (if i + k < n then x[i + k] else 0)) (iota n)

-- ==
-- entry: worked_pairs
-- input { [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] [1.0, 2.0, 3.0] }
-- output { [2.0, 1.0, 8.0, 6.0, 18.0, 15.0] }
entry worked_pairs (x: [6]f64) (ys: [3]f64) : [6]f64 = vjp (pairs 3) x ys

-- ==
-- entry: worked_halves
-- input { [1.0, 2.0, 3.0] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] }
-- output { [9.0, 21.0, 33.0] }
entry worked_halves (x: [3]f64) (ys: [6]f64) : [3]f64 = vjp halves x (ys :> [2*3]f64)

def dot [n] [m] (f: [n]f64 -> [m]f64) (x: [n]f64) (xd: [n]f64) (yb: [m]f64) : bool =
  let lhs = f64.sum (map2 (*) yb (jvp f x xd))
  let rhs = f64.sum (map2 (*) (vjp f x yb) xd)
  in f64.abs (lhs - rhs) <= 1e-9 * (1 + f64.abs lhs)

def ramp (n: i64) (a: i64) : [n]f64 = map (\i -> f64.i64 ((i * a) % 13) / 4 - 1) (iota n)

-- ==
-- entry: pairs_dot shifted_dot
-- input { 1i64 } output { true }
-- input { 300i64 } output { true }
-- input { 5000i64 } output { true }
entry pairs_dot (n: i64) : bool =
  dot (pairs n) (ramp (2*n) 3) (ramp (2*n) 5) (ramp n 7)

entry shifted_dot (n: i64) : bool =
  dot (shifted 3) (ramp n 3) (ramp n 5) (ramp n 7)
