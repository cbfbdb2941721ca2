//! Tests of forward-mode AD: every program's `jvp` is compared with central finite differences
//! of the primal (run on the interpreter), and some with hand-worked values.
//!
//! Each program defines `entry prim` (the function) and `entry tan` (its inputs followed by the
//! tangents, returning `jvp`). The harness perturbs every `f64` input along the tangent.

use crate::value::{ArrayValue, Buffer, Value};
use crate::values::parse_values;

fn compile(src: &str) -> crate::Compiled {
    let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    assert!(
        c.entry_errors.is_empty(),
        "{:?}",
        c.entry_errors
            .values()
            .map(|d| d.render(&c.sources))
            .collect::<Vec<_>>()
    );
    crate::ir::check::check_program(&c.ir).unwrap_or_else(|e| panic!("IR check: {e:?}"));
    c
}

fn vals(s: &str) -> Vec<Value> {
    parse_values(s.as_bytes()).expect("test values")
}

/// The `f64`s of a list of values, in order (other types contribute nothing).
fn floats(vs: &[Value]) -> Vec<f64> {
    let mut out = vec![];
    for v in vs {
        match v {
            Value::Scalar(p) => {
                if let crate::prim::PrimValue::F64(x) = p {
                    out.push(*x)
                }
            }
            Value::Array(a) => {
                if let Buffer::F64(xs) = &a.data {
                    out.extend(xs.iter().copied())
                }
            }
        }
    }
    out
}

/// `x + h*dx` for every `f64` input (others unchanged).
fn perturb(xs: &[Value], dxs: &[Value], h: f64) -> Vec<Value> {
    xs.iter()
        .zip(dxs)
        .map(|(x, d)| match (x, d) {
            (
                Value::Scalar(crate::prim::PrimValue::F64(a)),
                Value::Scalar(crate::prim::PrimValue::F64(b)),
            ) => Value::Scalar(crate::prim::PrimValue::F64(a + h * b)),
            (Value::Array(a), Value::Array(b)) => match (&a.data, &b.data) {
                (Buffer::F64(p), Buffer::F64(q)) => Value::Array(ArrayValue::new(
                    a.shape.clone(),
                    Buffer::F64(p.iter().zip(q).map(|(u, v)| u + h * v).collect()),
                )),
                _ => x.clone(),
            },
            _ => x.clone(),
        })
        .collect()
}

/// Runs `tan` at `xs` along `dxs` and compares with central differences of `prim`.
fn fd_check(src: &str, xs: &str, dxs: &str) -> Vec<f64> {
    let c = compile(src);
    let (xs, dxs) = (vals(xs), vals(dxs));
    let mut args = xs.clone();
    args.extend(dxs.iter().cloned());
    let got = floats(&c.run_interp("tan", args).expect("tan runs"));
    let h = 1e-6;
    let plus = floats(
        &c.run_interp("prim", perturb(&xs, &dxs, h))
            .expect("prim runs"),
    );
    let minus = floats(
        &c.run_interp("prim", perturb(&xs, &dxs, -h))
            .expect("prim runs"),
    );
    assert_eq!(got.len(), plus.len(), "number of tangent results");
    for (i, g) in got.iter().enumerate() {
        let fd = (plus[i] - minus[i]) / (2.0 * h);
        let tol = 1e-5 * (1.0 + fd.abs());
        assert!(
            (g - fd).abs() <= tol || (g.is_nan() && fd.is_nan()),
            "result {i}: jvp {g}, finite differences {fd} (all: {got:?})"
        );
    }
    got
}

/// A program from a one-argument function body `f` over `x: ty`.
fn unary(ty: &str, f: &str) -> String {
    format!(
        "def f (x: {ty}) = {f}\nentry prim (x: {ty}) = f x\nentry tan (x: {ty}) (dx: {ty}) = jvp f x dx\n"
    )
}

/// A program from a two-argument function `f x y`.
fn binary(tx: &str, ty: &str, f: &str) -> String {
    format!(
        "def f (x: {tx}) (y: {ty}) = {f}\nentry prim (x: {tx}) (y: {ty}) = f x y\n\
         entry tan (x: {tx}) (y: {ty}) (dx: {tx}) (dy: {ty}) = jvp (\\(a, b) -> f a b) (x, y) (dx, dy)\n"
    )
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-9 * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

#[test]
fn cube_hand_worked() {
    let got = fd_check(&unary("f64", "x * x * x"), "2.0f64", "1.0f64");
    close(&got, &[12.0]);
}

#[test]
fn scalar_worked_case() {
    // ln x1 + x1·x2 − sin x2 at (2, 5) along (1, 0): 1/2 + 5 = 5.5.
    let src = binary("f64", "f64", "f64.log x + x * y - f64.sin y");
    close(&fd_check(&src, "2.0f64 5.0f64", "1.0f64 0.0f64"), &[5.5]);
    fd_check(&src, "2.0f64 5.0f64", "0.3f64 -0.7f64");
}

#[test]
fn every_unary_math_function() {
    let fs = [
        ("sqrt", "1.3"),
        ("cbrt", "1.3"),
        ("exp", "0.4"),
        ("log", "1.3"),
        ("log2", "1.3"),
        ("log10", "1.3"),
        ("log1p", "0.3"),
        ("sin", "0.4"),
        ("cos", "0.4"),
        ("tan", "0.4"),
        ("asin", "0.4"),
        ("acos", "0.4"),
        ("atan", "0.4"),
        ("sinh", "0.4"),
        ("cosh", "0.4"),
        ("tanh", "0.4"),
        ("asinh", "0.4"),
        ("acosh", "1.4"),
        ("atanh", "0.4"),
        ("erf", "0.4"),
        ("erfc", "0.4"),
        ("abs", "-0.4"),
        ("floor", "1.4"),
        ("ceil", "1.4"),
        ("round", "1.4"),
        ("trunc", "1.4"),
        ("neg", "1.4"),
    ];
    for (f, x) in fs {
        let src = unary("f64", &format!("f64.{f} x * 2.0 + x"));
        fd_check(&src, &format!("{x}f64"), "1.0f64");
    }
}

#[test]
fn binary_math_and_operators() {
    for f in [
        "f64.atan2 x y",
        "f64.hypot x y",
        "x ** y",
        "x / y",
        "x - y",
        "f64.min x y",
        "f64.max x y",
        "f64.copysign x y",
        "f64.copysign x (-y)",
        "f64.fma x y x",
        "f64.lerp x y 0.3",
        "f64.lerp 0.5 x y",
        "x % y",
        "f64.mad x y y",
    ] {
        let src = binary("f64", "f64", f);
        fd_check(&src, "1.7f64 0.6f64", "0.3f64 -0.7f64");
        fd_check(&src, "-1.7f64 2.6f64", "1.0f64 0.5f64");
    }
}

#[test]
fn conversions_and_f32() {
    // f64 → f32 → f64 keeps the tangent; so does f64 → i64 → f64, formally, as in Futhark:
    // d(a*x) with a = f64.i64 (i64.f64 x) = 1 and da = 1 is 1*1.5 + 1*1 = 2.5, plus 2.
    let src = unary(
        "f64",
        "f64.f32 (f32.f64 x * 2f32) + f64.i64 (i64.f64 x) * x",
    );
    // (Hand-worked: the f32 round trip is too coarse for finite differences.)
    let c = compile(&src);
    let got = floats(&c.run_interp("tan", vals("1.5f64 1.0f64")).expect("runs"));
    close(&got, &[4.5]);
    let c = compile("entry tan (x: f32) = jvp (\\x -> f32.sin x * x) x 1f32\n");
    let r = c.run_interp("tan", vals("0.5f32")).expect("runs");
    let want = 0.5f32.cos() * 0.5 + 0.5f32.sin();
    match &r[0] {
        Value::Scalar(crate::prim::PrimValue::F32(v)) => assert!((v - want).abs() < 1e-6),
        v => panic!("{v:?}"),
    }
}

#[test]
fn integer_tangents_follow_futhark() {
    // Integers are differentiated formally, as Futhark does (`jvp (\x -> x*x) 3i32 1i32` = 6).
    let c = compile(
        "entry sq (x: i32) = jvp (\\x -> x * x) x 1\n\
         entry pw (y: i32) (x: i32) = jvp (\\x -> x ** y) x 1\n\
         entry cv (x: i32) = jvp (\\x -> f64.i32 x * 2.5) x 1\n",
    );
    assert_eq!(c.run_interp("sq", vals("3i32")).unwrap(), vals("6i32"));
    assert_eq!(
        c.run_interp("pw", vals("3i32 4i32")).unwrap(),
        vals("48i32")
    );
    assert_eq!(c.run_interp("pw", vals("0i32 4i32")).unwrap(), vals("0i32"));
    assert_eq!(c.run_interp("cv", vals("3i32")).unwrap(), vals("2.5f64"));
}

#[test]
fn jvp2_returns_primal_and_tangent() {
    let c = compile("entry f (x: f64) = jvp2 (\\x -> f64.exp (2 * x)) x 1\n");
    let r = c.run_interp("f", vals("0.5f64")).unwrap();
    close(&floats(&r), &[1f64.exp(), 2.0 * 1f64.exp()]);
}

#[test]
fn map_and_nested_map() {
    let src = unary("[]f64", "map (\\a -> f64.sin a * a) x");
    fd_check(&src, "[0.5f64, 1.0, 2.0]", "[1.0f64, -2.0, 0.5]");
    let src = unary(
        "[][]f64",
        "map (\\r -> map (\\a -> a * r[0] + f64.exp a) r) x",
    );
    fd_check(
        &src,
        "[[0.5f64, 1.0], [2.0, 3.0]]",
        "[[1.0f64, -2.0], [0.5, 0.25]]",
    );
    // A free float variable of the lambda carries its tangent in.
    let src = binary("[]f64", "f64", "map (\\a -> a * y + y * y) x");
    fd_check(
        &src,
        "[0.5f64, 1.0, 2.0] 1.5f64",
        "[1.0f64, -2.0, 0.5] 0.7f64",
    );
    // map2 over a pair of arrays of which one is constant.
    let src = unary("[]f64", "map2 (\\a b -> a * f64.i64 b) x (iota (length x))");
    fd_check(&src, "[0.5f64, 1.0, 2.0]", "[1.0f64, -2.0, 0.5]");
}

#[test]
fn reductions() {
    for f in [
        "reduce (+) 0 x",
        "reduce (*) 1 x",
        "reduce f64.min f64.inf x",
        "reduce f64.max (-f64.inf) x",
        "reduce (\\a b -> a * b + a + b) 0 x",
        "f64.sum (map (\\a -> a * a) x)",
    ] {
        fd_check(
            &unary("[]f64", f),
            "[0.5f64, 1.5, -2.0, 0.7]",
            "[1.0f64, -2.0, 0.5, 0.3]",
        );
    }
    // A tuple operator (argmax-like, with a float payload).
    let src = unary(
        "[]f64",
        "let (v, w) = reduce (\\(a, p) (b, q) -> if a >= b then (a, p) else (b, q)) (-f64.inf, 0) (zip x (map (\\a -> a * a) x)) in v + w",
    );
    fd_check(&src, "[0.5f64, 1.5, -2.0, 0.7]", "[1.0f64, -2.0, 0.5, 0.3]");
}

#[test]
fn operators_with_free_tangents_and_rows() {
    // The operator mentions a free variable with a tangent (no array tangent at all).
    let src = binary(
        "[]f64",
        "f64",
        "reduce (\\a b -> a + b * y) 0 (map (\\_ -> 1.0) x)",
    );
    fd_check(
        &src,
        "[0.5f64, 1.5, -2.0] 1.5f64",
        "[1.0f64, -2.0, 0.5] 0.7f64",
    );
    // A vectorised operator over rows, and a tuple scan.
    let src = unary("[][]f64", "reduce (map2 (+)) (replicate 2 0) x");
    fd_check(
        &src,
        "[[0.5f64, 1.5], [-2.0, 4.0], [1.0, 2.0]]",
        "[[1.0f64, -2.0], [0.5, 0.1], [0.2, 0.3]]",
    );
    let src = unary(
        "[]f64",
        "let (a, b) = unzip (scan (\\(a1, b1) (a2, b2) -> (a1 * a2, a2 * b1 + b2)) (1, 0) (zip x (map (* 2) x))) in map2 (+) a b",
    );
    fd_check(&src, "[0.5f64, 1.5, -2.0]", "[1.0f64, -2.0, 0.5]");
    let src = binary(
        "[]f64",
        "[]f64",
        "hist f64.max (-f64.inf) 2 [0, 1, 1, 0] (map2 (*) x y)",
    );
    fd_check(
        &src,
        "[0.5f64, 1.5, -2.0, 3.0] [1.0f64, 2.0, 3.0, 4.0]",
        "[1.0f64, -2.0, 0.5, 0.3] [0.1f64, 0.2, 0.3, 0.4]",
    );
}

#[test]
fn scans() {
    // Worked case: scan (*) over [2, 0, 4] along [1, 1, 1] → [1, 2, 8].
    let got = fd_check(
        &unary("[]f64", "scan (*) 1 x"),
        "[2.0f64, 0.0, 4.0]",
        "[1.0f64, 1.0, 1.0]",
    );
    close(&got, &[1.0, 2.0, 8.0]);
    fd_check(
        &unary("[]f64", "scan (+) 0 x"),
        "[2.0f64, 0.5, 4.0]",
        "[1.0f64, -1.0, 3.0]",
    );
    fd_check(
        &unary("[]f64", "scan (\\a b -> a * b + b) 0 x"),
        "[2.0f64, 0.5, 4.0]",
        "[1.0f64, -1.0, 3.0]",
    );
}

#[test]
fn hist_and_scatter() {
    let src = binary(
        "[]f64",
        "[]f64",
        "hist (+) 0 3 [0, 1, 0, 2, 5] (map2 (*) x y[0:5])",
    );
    fd_check(
        &src,
        "[1.0f64, 2.0, 3.0, 4.0, 5.0] [0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5]",
        "[1.0f64, -1.0, 0.5, 0.2, 0.3] [0.1f64, 0.2, 0.3, 0.4, 0.5, 0.6]",
    );
    let src = binary(
        "[]f64",
        "[]f64",
        "reduce_by_index (copy y) (*) 1 [0, 1, 0, 2, -1] x",
    );
    fd_check(
        &src,
        "[1.0f64, 2.0, 3.0, 4.0, 5.0] [0.5f64, 1.5, 2.5]",
        "[1.0f64, -1.0, 0.5, 0.2, 0.3] [0.1f64, 0.2, 0.3]",
    );
    let src = binary(
        "[]f64",
        "[]f64",
        "scatter (copy y) [1, 1, 5, 0] (map (* 2) x)",
    );
    let got = fd_check(
        &src,
        "[10.0f64, 20.0, 30.0, 40.0] [0.5f64, 1.5, 2.5]",
        "[1.0f64, 2.0, 3.0, 4.0] [0.1f64, 0.2, 0.3]",
    );
    close(&got, &[8.0, 4.0, 0.3]);
}

#[test]
fn loops_and_branches() {
    let src = unary("f64", "loop y = x for i < 4 do y * y - f64.i64 i * y");
    fd_check(&src, "0.7f64", "1.0f64");
    let src = unary("f64", "loop y = x while y < 100 do y * 3 + 1");
    fd_check(&src, "0.7f64", "1.0f64");
    let src = unary("f64", "if x > 0 then f64.sin x else x * x * 3");
    fd_check(&src, "0.7f64", "1.0f64");
    fd_check(&src, "-0.7f64", "1.0f64");
    let src = unary(
        "[]f64",
        "loop acc = replicate (length x) 1 for i < length x do map2 (*) acc (rotate i x)",
    );
    fd_check(&src, "[0.5f64, 1.5, -2.0]", "[1.0f64, -2.0, 0.5]");
    // A branch returning a free constant in one arm.
    let src = binary("f64", "f64", "if x > y then 2.0 else x * y");
    fd_check(&src, "0.5f64 1.5f64", "1.0f64 0.3f64");
    fd_check(&src, "2.5f64 1.5f64", "1.0f64 0.3f64");
}

#[test]
fn existential_sizes() {
    // A loop whose array grows, and a branch returning arrays of different sizes.
    let src = unary("[]f64", "loop y = x for i < 2 do y ++ map (* 2) y");
    fd_check(&src, "[0.5f64, 1.5]", "[1.0f64, -2.0]");
    let src = unary("[]f64", "if x[0] > 0 then map (\\a -> a * a) x else x ++ x");
    fd_check(&src, "[0.5f64, 1.5]", "[1.0f64, -2.0]");
    fd_check(&src, "[-0.5f64, 1.5]", "[1.0f64, -2.0]");
    let src = unary("[]f64", "filter (> 0) (map (* 3) x)");
    fd_check(&src, "[0.5f64, -1.5, 2.0]", "[1.0f64, -2.0, 0.5]");
}

#[test]
fn in_place_updates_and_slices() {
    let src = unary(
        "[]f64",
        "let y = copy x with [1] = x[0] * x[2] in y with [0] = 2.0",
    );
    fd_check(&src, "[0.5f64, 1.5, -2.0]", "[1.0f64, -2.0, 0.5]");
    let src = unary("[]f64", "x[1:] ++ x[:2] ++ reverse x");
    fd_check(&src, "[0.5f64, 1.5, -2.0]", "[1.0f64, -2.0, 0.5]");
    let src = unary("[][]f64", "transpose x |> flatten |> map (* 3)");
    fd_check(
        &src,
        "[[0.5f64, 1.5], [-2.0, 4.0]]",
        "[[1.0f64, -2.0], [0.5, 0.1]]",
    );
    let src = unary(
        "f64",
        "let a = [x, 2 * x, 3.0] in (replicate 2 a)[1][1] + a[0]",
    );
    close(&fd_check(&src, "0.5f64", "1.0f64"), &[3.0]);
    let src = unary(
        "[]f64",
        "loop y = copy x for i < length x - 1 do y with [i + 1] = y[i] * y[i + 1]",
    );
    fd_check(&src, "[0.5f64, 1.5, -2.0]", "[1.0f64, -2.0, 0.5]");
}

#[test]
fn jvp_of_gamma_uses_digamma() {
    // Formerly not supported; now Γ'(x) = Γ(x)·ψ(x): Γ'(1) = −γ (Euler's constant).
    let r = crate::compile("t.fut", "entry f (x: f64) = jvp f64.gamma x 1\n").expect("compiles");
    assert!(!r.entry_errors.contains_key("f"), "an error for f");
    let out = r
        .run_interp("f", vec![Value::Scalar(crate::prim::PrimValue::F64(1.0))])
        .expect("run");
    close(&floats(&out), &[-0.577_215_664_901_532_9]);
}
