//! f64 transcendental functions on the device (`src/codegen/f64math`): every function over special,
//! tiny (1e-300, subnormal), huge (1e10, 1e300), negative and random arguments, in one `map`
//! kernel each, within 2 ulp of the interpreter (Rust's `f64` methods, glibc's libm here), and
//! bit for bit equal to it at the special values (NaN, ±inf, ±0); `gamma` and `lgamma` (which
//! follow the interpreter's `libm` algorithms operation for operation) over their own arguments.
mod common;
#[path = "../src/codegen/f64math/test_support.rs"]
mod test_support;
use test_support::Rng;
use vkad_core::value::{ArrayValue, Buffer, Value};

/// The distance in ulps between `a` and `b` (0 when both are NaN, infinite when only one is).
fn ulps(a: f64, b: f64) -> f64 {
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
    let key = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            -((b & i64::MAX) as i128)
        } else {
            b as i128
        }
    };
    (key(a) - key(b)).unsigned_abs() as f64
}

/// Special values and the edges of the functions' ranges, with their negations.
fn specials() -> Vec<f64> {
    let mut v = vec![
        0.0,
        1.0,
        0.5,
        2.0,
        f64::INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        5e-324,
        1e-310,
        1e-300,
        1e-20,
        1e-10,
        1e10,
        1e20,
        1e22,
        1e300,
        f64::MAX,
        std::f64::consts::PI,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::FRAC_PI_4,
        709.78,
        709.79,
        710.47,
        745.1,
        745.2,
        20.0,
        22.0,
        0.999_999_99,
        1.000_000_01,
        1.0 - 1e-16,
        6_381_956_970_095_103.0 * 2f64.powi(797),
    ];
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

/// The specials and random arguments over many magnitudes.
fn arguments(seed: u64) -> Vec<f64> {
    let mut v = specials();
    let mut r = Rng(seed);
    for (lo, hi, n) in [
        (-310.0, -20.0, 100),
        (-20.0, 0.0, 200),
        (-1.0, 1.0, 400),
        (0.0, 3.0, 300),
        (3.0, 308.0, 200),
    ] {
        v.extend((0..n).map(|_| r.log_uniform(lo, hi)));
    }
    v.extend((0..300).map(|_| r.uniform(-4.0, 4.0)));
    v
}

fn f64s(v: &[f64]) -> Value {
    Value::Array(ArrayValue::new(vec![v.len()], Buffer::F64(v.to_vec())))
}

fn unf64s(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(ArrayValue {
            data: Buffer::F64(d),
            ..
        }) => d.clone(),
        v => panic!("not a []f64: {v:?}"),
    }
}

/// Runs `entry` (a `map` over its arguments) on the interpreter and the device; returns the
/// largest ulp distance with its arguments, and fails on any special-value difference.
fn measure(src: &str, entry: &str, args: &[Vec<f64>]) -> (f64, Vec<f64>, f64, f64) {
    let c = vkad_core::compile("f64_math.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let vals: Vec<Value> = args.iter().map(|a| f64s(a)).collect();
    let mut want = unf64s(&c.run_interp(entry, vals.clone()).unwrap()[0]);
    if let [xs] = args {
        for (w, x) in want.iter_mut().zip(xs) {
            *w = test_support::reference(entry, *x, |_| *w);
        }
    }
    let got = unf64s(&vkad_spirv::run_entry(&common::ctx(), &c, entry, vals).unwrap()[0]);
    let mut worst = (0.0, vec![], 0.0, 0.0);
    for i in 0..want.len() {
        let (g, w) = (got[i], want[i]);
        let at: Vec<f64> = args.iter().map(|a| a[i]).collect();
        let special = !w.is_finite() || w == 0.0 || at.iter().any(|x| !x.is_finite());
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

const UNARY: &[&str] = &[
    "exp", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "erf", "erfc",
];

/// Measures every entry of `src` in `cases` on its arguments (printing each maximum), then
/// requires each to be within 2 ulp of the interpreter.
fn assert_within_2_ulp(src: &str, cases: &[(&str, &[Vec<f64>])]) {
    let mut report = Vec::new();
    for &(f, args) in cases {
        let (d, at, g, w) = measure(src, f, args);
        eprintln!("{f}: max {d} ulp (at {at:?}: device {g:e}, interpreter {w:e})");
        report.push((f, d, at, g, w));
    }
    for (f, d, at, g, w) in &report {
        assert!(
            *d <= 2.0,
            "{f}: {d} ulp at {at:?}: device {g:e}, interpreter {w:e}"
        );
    }
}

#[test]
fn unary_functions_within_2_ulp() {
    let xs = arguments(1);
    let mut src = String::new();
    for f in UNARY {
        src.push_str(&format!("entry {f} (xs: []f64) : []f64 = map f64.{f} xs\n"));
    }
    let args = std::slice::from_ref(&xs);
    let cases: Vec<(&str, &[Vec<f64>])> = UNARY.iter().map(|&f| (f, args)).collect();
    assert_within_2_ulp(&src, &cases);
}

#[test]
fn binary_functions_within_2_ulp() {
    let sp = specials();
    let mut r = Rng(2);
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &a in &sp {
        for &b in &sp {
            xs.push(a);
            ys.push(b);
        }
    }
    for _ in 0..1500 {
        xs.push(r.log_uniform(-300.0, 300.0));
        ys.push(r.log_uniform(-300.0, 300.0));
        xs.push(r.uniform(-3.0, 3.0));
        ys.push(r.uniform(-3.0, 3.0));
        // pow with |y log x| up to 700, and negative bases with integral exponents.
        let x = r.log_uniform(-300.0, 300.0).abs();
        xs.push(x);
        ys.push(r.uniform(-700.0, 700.0) / x.ln());
        xs.push(-r.uniform(0.5, 2.0));
        ys.push(r.uniform(-200.0, 200.0).round());
    }
    let src = "entry atan2 (ys: []f64) (xs: []f64) : []f64 = map2 f64.atan2 ys xs
entry pow (xs: []f64) (ys: []f64) : []f64 = map2 (**) xs ys\n";
    let (yx, xy) = ([ys.clone(), xs.clone()], [xs, ys]);
    assert_within_2_ulp(src, &[("atan2", &yx[..]), ("pow", &xy[..])]);
}

/// `gamma` and `lgamma` over [`test_support::gamma_arguments`] (about 20,000: near the poles,
/// near 1 and 2, tiny, huge, the edges of the algorithms' regions): within 2 ulp of the
/// interpreter, and bit for bit at the special values (on lavapipe, every result is the same bits;
/// the maxima printed are 0).
#[test]
fn gamma_and_lgamma_within_2_ulp() {
    let xs = test_support::gamma_arguments(2000, 3);
    let src = "entry gamma (xs: []f64) : []f64 = map f64.gamma xs
entry lgamma (xs: []f64) : []f64 = map f64.lgamma xs\n";
    let args = std::slice::from_ref(&xs);
    assert_within_2_ulp(src, &[("gamma", args), ("lgamma", args)]);
}

/// On a device without float controls (`shaderSignedZeroInfNanPreserveFloat32/64`), the
/// modules lose their `SignedZeroInfNanPreserve` modes (with the capability and extension) and
/// still validate and run; here lavapipe pretends not to have them.
#[test]
fn runs_without_float_controls() {
    let mut c = vkad_spirv::Context::new(&vkad_spirv::ContextOptions {
        device: None,
        validation: true,
        pipeline_cache: vkad_vk::PipelineCacheMode::Off,
    })
    .expect("a Vulkan device (install mesa-vulkan-drivers)");
    c.set_validate_spirv(true);
    c.restrict_info(|i| i.signed_zero_inf_nan_preserve = [false; 3]);
    let src =
        "entry main (xs: []f64) (ys: []f32) = (map (\\x -> f64.sin x + x * 2) xs, map (* 3) ys)";
    let prog = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let args = vec![
        f64s(&[0.5, 1e10]),
        Value::Array(ArrayValue::new(vec![1], Buffer::F32(vec![1.5]))),
    ];
    let got = vkad_spirv::run_entry(&c, &prog, "main", args.clone()).unwrap();
    let want = prog.run_interp("main", args).unwrap();
    assert_eq!(got, want);
}
