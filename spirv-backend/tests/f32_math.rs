//! f32 transcendental functions on the device (`src/codegen/f32math.rs`): the functions vkad
//! computes itself (`exp`, `log`, `log2`, `log10`, `log1p`, `atan`, `atan2`, `asin`, `acos`,
//! `sinh`, `cosh`, `asinh`, `acosh`, `atanh`, `cbrt`, `erf`, `erfc`, `sin`, `cos` and `tan`
//! below 2^16, and `tanh` below 1) over
//! special, subnormal, tiny, huge, negative and random arguments, in one `map` kernel each,
//! within a few ulp of the interpreter (Rust's `f32` methods, glibc's libm here), and bit for
//! bit equal to it at the special values (NaN, ±inf, ±0 arguments or results). The bounds are
//! those of the algorithms on lavapipe (Cephes' `expf`, `logf` and `atanf` are within 1-2 ulp;
//! the functions built from them add an ulp or two; `erfc`'s rational fit is within 1.2e-7
//! relative): they use no GLSL.std.450 function but `Pow` (in `cbrt`, refined by a Newton step),
//! and `Tanh` from 1 on. On a device whose division and `sqrt`
//! are less precise (Vulkan allows 2.5 ulp; NVIDIA's H200 driver) they are an ulp or two
//! further (docs/language.md has the measured maxima).
mod common;
// Only its `Rng` (the rest is for the f64 tests).
#[allow(dead_code)]
#[path = "../src/codegen/f64math/test_support.rs"]
mod test_support;
use test_support::Rng;
use vkad_core::value::{ArrayValue, Buffer, Value};

/// The distance in ulps between `a` and `b` (0 when both are NaN, infinite when only one is).
fn ulps(a: f32, b: f32) -> f64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if a == b {
        return if a.is_sign_negative() == b.is_sign_negative() {
            0.0
        } else {
            1.0
        };
    }
    let key = |x: f32| {
        let b = x.to_bits() as i32;
        if b < 0 {
            -((b & i32::MAX) as i64)
        } else {
            b as i64
        }
    };
    (key(a) - key(b)).unsigned_abs() as f64
}

/// Special values and the edges of the functions' ranges, with their negations.
fn specials() -> Vec<f32> {
    let mut v = vec![
        0.0,
        1.0,
        0.5,
        2.0,
        f32::INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-45,
        1e-40,
        3e-39,
        1e-30,
        1e-10,
        1e-4,
        0.414_213_57,
        2.414_213_5,
        std::f32::consts::FRAC_1_SQRT_2,
        std::f32::consts::SQRT_2,
        0.999_999_9,
        1.000_000_1,
        4096.0,
        4097.0,
        1e10,
        1.8e19,
        1e30,
        f32::MAX,
        std::f32::consts::PI,
    ];
    let neg: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

/// The specials and random arguments over many magnitudes.
fn arguments(seed: u64) -> Vec<f32> {
    let mut v = specials();
    let mut r = Rng(seed);
    for (lo, hi, n) in [
        (-45.0, -10.0, 200),
        (-10.0, 0.0, 300),
        (-1.0, 1.0, 600),
        (0.0, 3.0, 400),
        (3.0, 38.5, 200),
    ] {
        v.extend((0..n).map(|_| r.log_uniform(lo, hi) as f32));
    }
    v.extend((0..400).map(|_| r.uniform(-4.0, 4.0) as f32));
    v.extend((0..400).map(|_| r.uniform(-1.0, 1.0) as f32));
    v.extend((0..200).map(|_| r.uniform(0.5, 2.0) as f32));
    v
}

fn f32s(v: &[f32]) -> Value {
    Value::Array(ArrayValue::new(vec![v.len()], Buffer::F32(v.to_vec())))
}

fn unf32s(v: &Value) -> Vec<f32> {
    match v {
        Value::Array(ArrayValue {
            data: Buffer::F32(d),
            ..
        }) => d.clone(),
        v => panic!("not a []f32: {v:?}"),
    }
}

/// Runs `entry` (a `map` over its arguments) on the interpreter and the device; returns the
/// largest ulp distance with its arguments, and fails on any special-value difference.
fn measure(src: &str, entry: &str, args: &[Vec<f32>]) -> (f64, Vec<f32>, f32, f32) {
    let c = vkad_core::compile("f32_math.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let vals: Vec<Value> = args.iter().map(|a| f32s(a)).collect();
    let want = unf32s(&c.run_interp(entry, vals.clone()).unwrap()[0]);
    let got = unf32s(&vkad_spirv::run_entry(&common::ctx(), &c, entry, vals).unwrap()[0]);
    let mut worst = (0.0, vec![], 0.0, 0.0);
    for i in 0..want.len() {
        let (g, w) = (got[i], want[i]);
        let at: Vec<f32> = args.iter().map(|a| a[i]).collect();
        let special = !w.is_finite() || w == 0.0 || at.iter().any(|x| !x.is_finite() || *x == 0.0);
        if special {
            assert!(
                (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits(),
                "{entry}{at:?}: device {g:e}, interpreter {w:e}"
            );
        }
        let d = ulps(g, w);
        if d > worst.0 {
            worst = (d, at, g, w);
        }
    }
    worst
}

/// Measures every entry of `src` in `cases` on its arguments (printing each maximum), then
/// requires each to be within its bound of the interpreter.
fn assert_within(src: &str, cases: &[(&str, &[Vec<f32>], f64)]) {
    let mut report = Vec::new();
    for &(f, args, bound) in cases {
        let (d, at, g, w) = measure(src, f, args);
        eprintln!("{f}: max {d} ulp (at {at:?}: device {g:e}, interpreter {w:e})");
        report.push((f, d, bound, at, g, w));
    }
    for (f, d, bound, at, g, w) in &report {
        assert!(
            d <= bound,
            "{f}: {d} ulp (more than {bound}) at {at:?}: device {g:e}, interpreter {w:e}"
        );
    }
}

/// The functions and their bounds in ulp.
const UNARY: &[(&str, f64)] = &[
    ("log", 2.0),
    ("log2", 2.0),
    ("log10", 2.0),
    ("log1p", 3.0),
    ("atan", 2.0),
    ("asin", 3.0),
    ("acos", 3.0),
    ("asinh", 3.0),
    ("acosh", 3.0),
    ("atanh", 3.0),
    ("cbrt", 2.0),
    ("exp", 2.0),
    ("sinh", 2.0),
    ("cosh", 2.0),
    ("erf", 2.0),
    ("erfc", 8.0),
];

#[test]
fn own_unary_functions_within_a_few_ulp() {
    let xs = arguments(1);
    let mut src = String::new();
    for (f, _) in UNARY {
        src.push_str(&format!("entry {f} (xs: []f32) : []f32 = map f32.{f} xs\n"));
    }
    let args = std::slice::from_ref(&xs);
    let cases: Vec<_> = UNARY.iter().map(|&(f, b)| (f, args, b)).collect();
    assert_within(&src, &cases);
}

/// `sin`, `cos` and `tan` below 2^16, where they are vkad's (exact reduction by π/2).
#[test]
fn trigonometric_functions_below_2_16_within_a_few_ulp() {
    let xs: Vec<f32> = arguments(4)
        .into_iter()
        .filter(|x| x.is_nan() || x.abs() < 65536.0)
        .collect();
    let src = "entry sin (xs: []f32) : []f32 = map f32.sin xs
entry cos (xs: []f32) : []f32 = map f32.cos xs
entry tan (xs: []f32) : []f32 = map f32.tan xs\n";
    let args = std::slice::from_ref(&xs);
    assert_within(
        src,
        &[("sin", args, 2.0), ("cos", args, 2.0), ("tan", args, 4.0)],
    );
}

/// `tanh` below 1, where it is vkad's (from `sinh`'s Taylor series).
#[test]
fn tanh_below_one_within_a_few_ulp() {
    let xs: Vec<f32> = arguments(3)
        .into_iter()
        .filter(|x| x.is_nan() || x.abs() < 1.0)
        .collect();
    let src = "entry tanh (xs: []f32) : []f32 = map f32.tanh xs\n";
    let args = std::slice::from_ref(&xs);
    assert_within(src, &[("tanh", args, 3.0)]);
}

#[test]
fn atan2_within_a_few_ulp() {
    let sp = specials();
    let mut r = Rng(2);
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &a in &sp {
        for &b in &sp {
            xs.push(a);
            ys.push(b);
        }
    }
    for _ in 0..2000 {
        xs.push(r.log_uniform(-40.0, 38.0) as f32);
        ys.push(r.log_uniform(-40.0, 38.0) as f32);
        xs.push(r.uniform(-3.0, 3.0) as f32);
        ys.push(r.uniform(-3.0, 3.0) as f32);
    }
    let src = "entry atan2 (ys: []f32) (xs: []f32) : []f32 = map2 f32.atan2 ys xs\n";
    assert_within(src, &[("atan2", &[ys, xs][..], 3.0)]);
}
