//! The accuracy of every function on the CPU ([`Cpu`]), against Rust's `f64` methods (the
//! interpreter's libm), in ulps, over special, tiny, huge, negative and random arguments.

use super::test_support::{gamma_arguments, reference, Rng};
use super::*;
use vkad_core::prim::PrimValue;
use vkad_core::primops::eval_math;

/// The interpreter's `f` on `f64` (what the device must match).
pub(crate) fn interp(f: fn(FloatType) -> MathFn) -> impl Fn(f64) -> f64 {
    move |x| match eval_math(f(FloatType::F64), &[PrimValue::F64(x)]) {
        Ok(PrimValue::F64(r)) => r,
        r => panic!("{r:?}"),
    }
}

/// The distance in ulps between `a` and `b` (0 when both are NaN or equal, infinite when one
/// is NaN or their signs differ beyond zero).
pub(crate) fn ulps(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if a == b {
        return 0.0;
    }
    let key = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            -(b & i64::MAX) as i128
        } else {
            b as i128
        }
    };
    (key(a) - key(b)).unsigned_abs() as f64
}

/// Special and edge arguments every function is tried on.
pub(crate) fn specials() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        1e-310,
        1e-300,
        -1e-300,
        1e-20,
        1e-10,
        1e10,
        -1e10,
        1e20,
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN,
        std::f64::consts::PI,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::FRAC_PI_4,
        709.78,
        709.79,
        -745.1,
        -745.2,
        710.4,
        22.0,
        0.34657359027997264,
        std::f64::consts::LN_2,
        1e22,
        6381956970095103.0 * 2f64.powi(797), // closest to a multiple of pi/2 (Kahan)
        5.0e-8,
        0.99999999,
        1.00000001,
    ];
    let more: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(more);
    v
}

/// Arguments: the specials and `n` random ones per decade band given.
pub(crate) fn arguments(n: usize, seed: u64, bands: &[(f64, f64)]) -> Vec<f64> {
    let mut v = specials();
    let mut r = Rng(seed);
    for &(lo, hi) in bands {
        for _ in 0..n {
            v.push(r.log_uniform(lo, hi));
        }
    }
    v
}

/// The largest ulp distance of `f` (the algorithm on [`Cpu`]) from `reference` over `xs`,
/// with the worst argument.
pub(crate) fn worst(
    xs: &[f64],
    f: impl Fn(&mut Cpu, f64) -> R<f64>,
    reference: impl Fn(f64) -> f64,
) -> (f64, f64, f64, f64) {
    let mut w = (0.0, f64::NAN, 0.0, 0.0);
    for &x in xs {
        let got = f(&mut Cpu, x).unwrap();
        let want = reference(x);
        let d = ulps(got, want);
        if d > w.0 || (d.is_infinite() && w.0.is_finite()) {
            w = (d, x, got, want);
        }
    }
    w
}

fn check(name: &str, xs: &[f64], f: impl Fn(&mut Cpu, f64) -> R<f64>, r: impl Fn(f64) -> f64) {
    let (d, x, got, want) = worst(xs, f, |x| reference(name, x, &r));
    eprintln!("{name}: max {d} ulp (at {x:e}: {got:e} vs {want:e})");
    assert!(
        d <= 2.0,
        "{name}: {d} ulp at {x:e}: got {got:e}, want {want:e}"
    );
}

const N: usize = 2000;

#[test]
fn exp_accuracy() {
    let xs = arguments(N, 1, &[(-20.0, 0.0), (-1.0, 2.0), (2.0, 2.852)]);
    check("exp", &xs, exp::exp, interp(MathFn::Exp));
}

#[test]
fn expm1_accuracy() {
    let xs = arguments(N, 2, &[(-20.0, 0.0), (-1.0, 2.0), (2.0, 2.852)]);
    check("expm1", &xs, exp::expm1, f64::exp_m1);
}

#[test]
fn log_accuracy() {
    let mut xs = arguments(N, 3, &[(-320.0, 308.0), (-1.0, 1.0)]);
    let mut r = Rng(33);
    xs.extend((0..N).map(|_| r.uniform(0.5, 2.0)));
    check("log", &xs, log::log, interp(MathFn::Log));
    check("log2", &xs, log::log2, interp(MathFn::Log2));
    check("log10", &xs, log::log10, interp(MathFn::Log10));
    check("log1p", &xs, log::log1p, interp(MathFn::Log1p));
}

#[test]
fn trig_accuracy() {
    let mut xs = arguments(N, 4, &[(-20.0, 0.0), (-1.0, 1.0), (1.0, 6.0), (6.0, 308.0)]);
    let mut r = Rng(44);
    xs.extend((0..N).map(|_| r.uniform(-10.0, 10.0)));
    // Near multiples of pi/2.
    xs.extend((1..200).map(|k| k as f64 * std::f64::consts::FRAC_PI_2));
    xs.extend((1..200).map(|k| (k as f64 * 1e5).round() * std::f64::consts::FRAC_PI_2));
    check("sin", &xs, trig::sin, interp(MathFn::Sin));
    check("cos", &xs, trig::cos, interp(MathFn::Cos));
    check("tan", &xs, trig::tan, interp(MathFn::Tan));
}

#[test]
fn atan_accuracy() {
    let mut xs = arguments(
        N,
        5,
        &[(-20.0, 0.0), (-1.0, 1.0), (1.0, 30.0), (30.0, 308.0)],
    );
    let mut r = Rng(55);
    xs.extend((0..N).map(|_| r.uniform(-2.0, 2.0)));
    check("atan", &xs, atan::atan, interp(MathFn::Atan));
    let mut us: Vec<f64> = (0..4 * N).map(|_| r.uniform(-1.0, 1.0)).collect();
    us.extend(arguments(N, 6, &[(-20.0, 0.0), (-3.0, 0.0)]));
    us.extend([
        1.0 - 1e-16,
        -1.0 + 1e-16,
        0.999_999_999_999_999_9,
        1.0 + 1e-15,
    ]);
    check("asin", &us, atan::asin, interp(MathFn::Asin));
    check("acos", &us, atan::acos, interp(MathFn::Acos));
}

#[test]
fn atan2_accuracy() {
    let sp = specials();
    let mut r = Rng(66);
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    for &y in &sp {
        for &x in &sp {
            pairs.push((y, x));
        }
    }
    for _ in 0..4 * N {
        pairs.push((r.log_uniform(-300.0, 300.0), r.log_uniform(-300.0, 300.0)));
        pairs.push((r.uniform(-3.0, 3.0), r.uniform(-3.0, 3.0)));
    }
    let mut worst = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (y, x) in pairs {
        let got = atan::atan2(&mut Cpu, y, x).unwrap();
        let want = y.atan2(x);
        let d = ulps(got, want);
        if d > worst.0 {
            worst = (d, y, x, got, want);
        }
    }
    eprintln!(
        "atan2: max {} ulp (at {:e}, {:e}: {:e} vs {:e})",
        worst.0, worst.1, worst.2, worst.3, worst.4
    );
    assert!(worst.0 <= 2.0, "atan2: {worst:?}");
}

#[test]
fn hyperbolic_accuracy() {
    let mut xs = arguments(
        N,
        7,
        &[(-20.0, 0.0), (-1.0, 1.0), (1.0, 2.86), (2.86, 308.0)],
    );
    let mut r = Rng(77);
    xs.extend((0..N).map(|_| r.uniform(-3.0, 3.0)));
    xs.extend([710.4, 710.47, 710.48, -710.47, 0.999, 1.001, 19.9, 20.1]);
    check("sinh", &xs, hyperbolic::sinh, interp(MathFn::Sinh));
    check("cosh", &xs, hyperbolic::cosh, interp(MathFn::Cosh));
    check("tanh", &xs, hyperbolic::tanh, interp(MathFn::Tanh));
    check("asinh", &xs, hyperbolic::asinh, interp(MathFn::Asinh));
    let mut ys: Vec<f64> = xs.iter().map(|x| 1.0 + x.abs()).collect();
    ys.extend(xs.iter().copied());
    ys.extend((0..N).map(|_| 1.0 + r.log_uniform(-16.0, 0.0).abs()));
    check("acosh", &ys, hyperbolic::acosh, interp(MathFn::Acosh));
    let mut us: Vec<f64> = (0..4 * N).map(|_| r.uniform(-1.0, 1.0)).collect();
    us.extend(arguments(N, 8, &[(-20.0, 0.0)]));
    us.extend([1.0 - 1e-16, -1.0 + 1e-16]);
    check("atanh", &us, hyperbolic::atanh, interp(MathFn::Atanh));
}

#[test]
fn pow_accuracy() {
    let sp = specials();
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    for &x in &sp {
        for &y in &sp {
            pairs.push((x, y));
        }
        for y in [
            3.0,
            -3.0,
            0.5,
            -0.5,
            2.0,
            -2.0,
            1e15 + 1.0,
            2f64.powi(53),
            9.007199254740993e15,
        ] {
            pairs.push((x, y));
        }
    }
    let mut r = Rng(88);
    for _ in 0..4 * N {
        pairs.push((r.log_uniform(-3.0, 3.0).abs(), r.log_uniform(-3.0, 2.0)));
        let x = r.log_uniform(-300.0, 300.0).abs();
        // y with |y log x| up to about 700.
        pairs.push((x, r.uniform(-700.0, 700.0) / x.ln()));
        pairs.push((-r.uniform(0.5, 2.0), (r.uniform(-200.0, 200.0)).round()));
    }
    let mut worst = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (x, y) in pairs {
        let got = pow::pow(&mut Cpu, x, y).unwrap();
        let want = match vkad_core::primops::eval_binop(
            vkad_core::ir::BinOp::Pow(PrimType::Float(FloatType::F64)),
            PrimValue::F64(x),
            PrimValue::F64(y),
        ) {
            Ok(PrimValue::F64(r)) => r,
            r => panic!("{r:?}"),
        };
        let d = ulps(got, want);
        if d > worst.0 {
            worst = (d, x, y, got, want);
        }
    }
    eprintln!(
        "pow: max {} ulp (at {:e}, {:e}: {:e} vs {:e})",
        worst.0, worst.1, worst.2, worst.3, worst.4
    );
    assert!(worst.0 <= 2.0, "pow: {worst:?}");
}

#[test]
fn cbrt_accuracy() {
    let mut xs = arguments(N, 9, &[(-320.0, 308.0), (-1.0, 1.0)]);
    xs.extend((1..100).map(|k| (k * k * k) as f64));
    check("cbrt", &xs, cbrt::cbrt, interp(MathFn::Cbrt));
}

#[test]
fn erf_accuracy() {
    let mut xs = arguments(N, 10, &[(-20.0, 0.0), (-1.0, 1.0), (1.0, 1.5)]);
    let mut r = Rng(1010);
    xs.extend((0..4 * N).map(|_| r.uniform(-7.0, 7.0)));
    xs.extend((0..N).map(|_| r.uniform(-28.0, 28.0)));
    xs.extend([2.5, -2.5, 2.499_999_999_999_999_6, 6.0, 27.2, 27.3, 26.55]);
    check("erf", &xs, erf::erf, interp(MathFn::Erf));
    check("erfc", &xs, erf::erfc, interp(MathFn::Erfc));
}

/// Whether `got` and `want` are the same bits (any NaN matches any NaN).
fn same(got: f64, want: f64) -> bool {
    (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits()
}

/// Requires `f` (on [`Cpu`]) to give the bits of `reference` at every argument, and reports
/// the largest ulp distance (0 when it does).
fn check_exact(
    name: &str,
    xs: &[f64],
    f: impl Fn(&mut Cpu, f64) -> R<f64>,
    reference: impl Fn(f64) -> f64,
) {
    let mut bad = Vec::new();
    for &x in xs {
        let (got, want) = (f(&mut Cpu, x).unwrap(), reference(x));
        if !same(got, want) {
            bad.push((x, got, want, ulps(got, want)));
        }
    }
    let max = bad.iter().map(|b| b.3).fold(0.0, f64::max);
    eprintln!(
        "{name}: {} of {} arguments differ, max {max} ulp",
        bad.len(),
        xs.len()
    );
    assert!(
        bad.is_empty(),
        "{name}: {} differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
fn gamma_is_the_interpreters() {
    let xs = gamma_arguments(N, 11); // about 20,000
    check_exact("gamma", &xs, gamma::gamma, interp(MathFn::Gamma));
    check_exact("lgamma", &xs, gamma::lgamma, interp(MathFn::Lgamma));
    check("gamma", &xs, gamma::gamma, interp(MathFn::Gamma));
    check("lgamma", &xs, gamma::lgamma, interp(MathFn::Lgamma));
}

/// The helpers of `gamma` and `lgamma` are `libm`'s, bit for bit, over the arguments they get.
#[test]
fn fdlibm_helpers_are_libms() {
    let mut r = Rng(12);
    let xs: Vec<f64> = (0..4 * N).map(|_| -r.uniform(1.04, 708.0)).collect();
    check_exact("exp", &xs, fdlibm::exp_neg, libm::exp);
    let mut xs = arguments(N, 13, &[(-320.0, 308.0), (-1.0, 1.0)]);
    xs.retain(|x| *x >= 0.0 || x.is_nan());
    xs.extend((0..N).map(|_| r.uniform(0.5, 2.0)));
    check_exact("log", &xs, fdlibm::log, libm::log);
    let mut pairs = Vec::new();
    for _ in 0..4 * N {
        let x = r.uniform(5.5, 190.0);
        pairs.push((x, r.uniform(-92.0, 92.0)));
        pairs.push((x, r.uniform(-92.0, 92.0).round() * 0.25));
        pairs.push((r.uniform(1e-3, 1e3), r.uniform(-50.0, 50.0)));
    }
    for y in [
        0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -0.5, 0.25, -0.25, 91.75, -91.75,
    ] {
        pairs.push((7.3, y));
    }
    let mut bad = 0;
    for &(x, y) in &pairs {
        let got = fdlibm::pow(&mut Cpu, x, y).unwrap();
        if !same(got, libm::pow(x, y)) {
            bad += 1;
            eprintln!("pow({x:e}, {y:e}): {got:e} vs {:e}", libm::pow(x, y));
        }
    }
    assert_eq!(bad, 0, "pow differs from libm's at {bad} arguments");
}
