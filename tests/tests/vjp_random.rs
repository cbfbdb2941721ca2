//! Property test for reverse mode: on random programs built from maps, reduces, scans, hists
//! (some with operators that read free variables), scatters, loops and ifs over an array and a
//! scalar, the vjp passes the dot-product test against the jvp, ⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩, and
//! agrees with central finite differences of the primal, for random points, tangents and
//! cotangents.
//!
//! Cases where two finite-difference step sizes disagree straddle a kink (an `if`, a max) and
//! are discarded rather than judged; the dot-product test is exact up to rounding everywhere.

use proptest::prelude::*;
use vkad_core::prim::PrimValue;
use vkad_core::value::{ArrayValue, Buffer, Value};

/// A scalar expression over `a` (the element), `s` (the scalar state) and `x`, `y`.
fn scalar_expr(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        3 => prop_oneof![Just("a"), Just("s"), Just("x"), Just("y")].prop_map(|v| v.to_string()),
        1 => (1u32..20).prop_map(|c| format!("{:.1}", c as f64 / 10.0)),
    ]
    .boxed();
    if depth == 0 {
        return leaf;
    }
    let sub = move || scalar_expr(depth - 1);
    prop_oneof![
        2 => leaf,
        3 => (sub(), prop_oneof![Just("+"), Just("-"), Just("*")], sub())
            .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
        2 => (prop_oneof![Just("f64.sin"), Just("f64.cos"), Just("f64.tanh"), Just("f64.atan")], sub())
            .prop_map(|(f, a)| format!("({f} {a})")),
        1 => (sub(), sub(), sub()).prop_map(|(c, t, e)| format!("(if {c} < 0.3 then {t} else {e})")),
    ]
    .boxed()
}

/// One stage of the program, transforming `(v: [n]f64, s: f64)`.
fn stage() -> BoxedStrategy<String> {
    let e = || scalar_expr(2);
    prop_oneof![
        3 => e().prop_map(|f| format!("let v = map (\\a -> {f}) v")),
        1 => Just("let v = scan (+) 0.0 v".to_string()),
        1 => Just("let v = scan (*) 1.0 (map (\\a -> 0.5 + f64.tanh a) v)".to_string()),
        1 => Just("let v = scan (\\p q -> p + q + p * q) 0.0 (map (\\a -> 0.3 * f64.sin a) v)".to_string()),
        2 => e().prop_map(|f| format!("let s = s + reduce (+) 0.0 (map (\\a -> {f}) v)")),
        1 => Just("let s = s * reduce (*) 1.0 (map (\\a -> 0.5 + 0.4 * f64.sin a) v)".to_string()),
        1 => Just("let s = s + reduce f64.max (-1000.0) v".to_string()),
        1 => (1i64..4).prop_map(|k| format!("let v = reduce_by_index (replicate n 0.0) (+) 0.0 (map (\\i -> (i * {k}) % n) (iota n)) v")),
        1 => (1i64..4).prop_map(|k| format!("let v = reduce_by_index (map (\\a -> a * 0.5) v) (*) 1.0 (map (\\i -> (i * {k}) % n) (iota n)) (map (\\a -> 0.5 + 0.4 * f64.cos a) v)")),
        1 => (1i64..4).prop_map(|k| format!("let v = scatter (copy v) (map (\\i -> (i * {k}) % n) (iota n)) (map (\\a -> a * s) v)")),
        1 => (1i64..4).prop_map(|k| format!("let v = map (\\i -> v[(i + {k}) % n] * v[i] + s) (iota n)")),
        1 => e().prop_map(|f| format!("let v = loop v for _i < 2 do map (\\a -> 0.5 * {f}) v")),
        1 => e().prop_map(|f| format!("let s = loop s for _i < 3 do (let a = s in 0.9 * {f})")),
        1 => e().prop_map(|f| format!("let v = if s > 0.0 then map (\\a -> {f}) v else reverse v")),
        // Operators reading free variables (a scalar computed from the state, an array element):
        // x ⊙_c y = x + y + c·x·y is associative for every c, with neutral 0.
        1 => Just("let v = scan (\\p q -> p + q + (0.3 * f64.tanh s) * p * q) 0.0 (map (\\a -> 0.3 * f64.sin a) v)".to_string()),
        1 => Just("let s = s + reduce (\\p q -> p + q + (0.5 * f64.sin s) * p * q) 0.0 (map (\\a -> 0.3 * f64.sin a) v)".to_string()),
        1 => Just("let s = s + reduce (\\p q -> p + q + 0.2 * v[n - 1] * p * q) 0.0 (map (\\a -> 0.3 * f64.cos a) v)".to_string()),
        1 => (1i64..4).prop_map(|k| format!("let v = reduce_by_index (map (\\a -> 0.5 * a) v) (\\p q -> p + q + (0.2 * s) * p * q) 0.0 (map (\\i -> (i * {k}) % n) (iota n)) (map (\\a -> 0.3 * f64.sin a) v)")),
    ]
    .boxed()
}

fn program() -> impl Strategy<Value = String> {
    proptest::collection::vec(stage(), 1..5).prop_map(|stages| {
        format!(
            "def f (x: f64) (y: f64) (xs: []f64) : ([]f64, f64) =\n  \
             let n = length xs\n  let v = map (\\a -> a + x) xs\n  let s = y\n  {}\n  in (v, s)\n\
             entry primal (x: f64) (y: f64) (xs: []f64) = f x y xs\n\
             entry tangent (x: f64) (y: f64) (xs: []f64) (dx: f64) (dy: f64) (dxs: []f64) =\n  \
             jvp (\\(x, y, xs) -> f x y xs) (x, y, xs) (dx, dy, dxs)\n\
             entry adjoint (x: f64) (y: f64) (xs: []f64) (vb: []f64) (sb: f64) =\n  \
             vjp (\\(x, y, xs) -> f x y xs) (x, y, xs) (vb, sb)\n",
            stages.join("\n  ")
        )
    })
}

fn arr(xs: &[f64]) -> Value {
    Value::Array(ArrayValue::new(vec![xs.len()], Buffer::F64(xs.to_vec())))
}
fn sc(x: f64) -> Value {
    Value::Scalar(PrimValue::F64(x))
}

fn floats(vs: &[Value]) -> Vec<f64> {
    let mut out = vec![];
    for v in vs {
        match v {
            Value::Scalar(PrimValue::F64(x)) => out.push(*x),
            Value::Array(a) => match &a.data {
                Buffer::F64(xs) => out.extend(xs.iter().copied()),
                other => panic!("unexpected array {other:?}"),
            },
            other => panic!("unexpected value {other:?}"),
        }
    }
    out
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn vjp_passes_dot_product_test_and_finite_differences(
        src in program(),
        (x, y, dx, dy, sb) in (-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0),
        pts in proptest::collection::vec((-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0), 1..6),
    ) {
        let c = vkad_core::compile("random.fut", &src)
            .unwrap_or_else(|e| panic!("generated program does not compile:\n{src}\n{}", e.render()));
        let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        let dxs: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let vb: Vec<f64> = pts.iter().map(|p| p.2).collect();
        let run = |e: &str, args: Vec<Value>| -> Vec<f64> {
            floats(&c.run_interp(e, args).unwrap_or_else(|err| panic!("{e}: {err}\n{src}")))
        };
        let tan = run("tangent", vec![sc(x), sc(y), arr(&xs), sc(dx), sc(dy), arr(&dxs)]);
        let adj = run("adjoint", vec![sc(x), sc(y), arr(&xs), arr(&vb), sc(sb)]);
        let mut ybar = vb.clone();
        ybar.push(sb);
        let mut xdot = vec![dx, dy];
        xdot.extend(&dxs);
        let lhs = dot(&ybar, &tan);
        let rhs = dot(&adj, &xdot);
        let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()));
        prop_assert!(close(lhs, rhs, 1e-9), "dot-product test: ⟨ȳ, Jẋ⟩ = {lhs}, ⟨Jᵀȳ, ẋ⟩ = {rhs}\n{src}");
        let f = |t: f64| {
            let moved: Vec<f64> = xs.iter().zip(&dxs).map(|(a, d)| a + t * d).collect();
            dot(&ybar, &run("primal", vec![sc(x + t * dx), sc(y + t * dy), arr(&moved)]))
        };
        let fd = |h: f64| (f(h) - f(-h)) / (2.0 * h);
        let (fd1, fd2) = (fd(1e-5), fd(1e-6));
        prop_assume!(fd1.is_finite() && close(fd1, fd2, 1e-4));
        prop_assert!(close(rhs, fd1, 1e-4), "vjp gives {rhs}, finite differences {fd1}\n{src}");
    }
}
