//! Tests of the derivatives of `gamma` and `lgamma` (through [`super::digamma`]): jvp of
//! programs using them, run on the interpreter, against reference values of ψ and against
//! central finite differences.

use crate::ad::fwd::jvp_lambda;
use crate::ir::*;
use crate::prim::PrimValue;
use crate::value::Value;

/// d/dx of the entry `f (x: f64): f64` at each x, by jvp (tangent 1).
fn derivs(src: &str, xs: &[f64]) -> Vec<f64> {
    let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let mut prog = c.ir.clone();
    let pos = prog
        .funs
        .iter()
        .position(|f| f.entry.as_ref().is_some_and(|e| &*e.name == "f"))
        .expect("entry f");
    let f = prog.funs.remove(pos);
    let lam = Lambda {
        params: f.params.clone(),
        body: f.body.clone(),
        ret: vec![Type::Prim(crate::prim::PrimType::Float(
            crate::prim::FloatType::F64,
        ))],
    };
    let g = jvp_lambda(&lam, &mut prog.name_source).unwrap_or_else(|e| panic!("jvp: {e}"));
    prog.funs.push(FunDef {
        name: "g".into(),
        entry: Some(EntryPoint {
            name: "g".into(),
            param_counts: vec![1; g.params.len()],
            result_counts: vec![1; g.ret.len()],
        }),
        size_params: vec![],
        params: g.params,
        ret: g.ret.iter().map(|t| t.to_ext()).collect(),
        body: g.body,
        attrs: Attrs::default(),
    });
    crate::ir::check::check_program(&prog).unwrap_or_else(|e| panic!("IR check: {e:?}"));
    let prog = crate::passes::simplify(prog);
    xs.iter()
        .map(|&x| {
            let args = vec![
                Value::Scalar(PrimValue::F64(x)),
                Value::Scalar(PrimValue::F64(1.0)),
            ];
            let out = crate::interp::run_entry(&prog, "g", args).expect("run g");
            match out[1] {
                Value::Scalar(PrimValue::F64(d)) => d,
                _ => panic!("not an f64"),
            }
        })
        .collect()
}

/// Euler–Mascheroni constant.
const GAMMA_E: f64 = 0.577_215_664_901_532_9;

#[test]
fn lgamma_derivative_is_digamma() {
    // Reference values of ψ: ψ(1) = −γ, ψ(1/2) = −γ − 2 ln 2, ψ(10) = H₉ − γ,
    // ψ(1/4) = −γ − π/2 − 3 ln 2, ψ(−1/2) = ψ(3/2) = 2 − γ − 2 ln 2 (reflection),
    // ψ(−5/2) = ψ(7/2) = 2 + 2/3 + 2/5 − γ − 2 ln 2, ψ(1000) ≈ ln 1000 − 1/2000 − 1/(12·10⁶),
    // ψ(x) ≈ −1/x − γ + ζ(2)x − ζ(3)x² near 0.
    let ln2 = std::f64::consts::LN_2;
    let h9: f64 = (1..10).map(|k| 1.0 / k as f64).sum();
    let pi = std::f64::consts::PI;
    let cases = [
        (1.0, -GAMMA_E),
        (0.5, -GAMMA_E - 2.0 * ln2),
        (10.0, h9 - GAMMA_E),
        (0.25, -GAMMA_E - pi / 2.0 - 3.0 * ln2),
        (-0.5, 2.0 - GAMMA_E - 2.0 * ln2),
        (-2.5, 2.0 + 2.0 / 3.0 + 2.0 / 5.0 - GAMMA_E - 2.0 * ln2),
        (
            1000.0,
            1000f64.ln() - 1.0 / 2000.0 - 1.0 / 12.0e6 + 1.0 / 120.0e12,
        ),
        (
            1e-3,
            -1000.0 - GAMMA_E + pi * pi / 6.0 * 1e-3 - 1.202_056_903_159_594_2 * 1e-6,
        ),
    ];
    let xs: Vec<f64> = cases.iter().map(|c| c.0).collect();
    let d = derivs("entry f (x: f64) = f64.lgamma x", &xs);
    for ((x, want), got) in cases.iter().zip(&d) {
        assert!(
            (got - want).abs() <= 1e-9 * (1.0 + want.abs()),
            "ψ({x}) = {got}, expected {want}"
        );
    }
}

#[test]
fn gamma_and_lgamma_against_finite_differences() {
    let xs = [0.3, 1.7, 4.2, 12.5, -0.3, -1.6, -3.4];
    for (src, f) in [
        (
            "entry f (x: f64) = f64.gamma x",
            libm_gamma as fn(f64) -> f64,
        ),
        ("entry f (x: f64) = f64.lgamma (x * x + 0.5)", |x: f64| {
            libm_lgamma(x * x + 0.5)
        }),
    ] {
        let d = derivs(src, &xs);
        for (x, got) in xs.iter().zip(&d) {
            let h = 1e-5;
            let fd = (f(x + h) - f(x - h)) / (2.0 * h);
            assert!(
                (got - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                "{src}: d/dx at {x} = {got}, finite differences {fd}"
            );
        }
    }
}

/// The interpreter's own gamma (the function whose derivative is checked).
fn libm_gamma(x: f64) -> f64 {
    prim_call(MathFn::Gamma(crate::prim::FloatType::F64), x)
}

fn libm_lgamma(x: f64) -> f64 {
    prim_call(MathFn::Lgamma(crate::prim::FloatType::F64), x)
}

fn prim_call(f: MathFn, x: f64) -> f64 {
    let mut ns = NameSource::default();
    let t = Type::Prim(crate::prim::PrimType::Float(crate::prim::FloatType::F64));
    let fd = crate::ir::builder::fun(
        &mut ns,
        "p",
        true,
        &[],
        &[("x", t.clone())],
        vec![t],
        |b, ps| {
            let r = b.math(f, vec![crate::ir::builder::var(&ps[0])]);
            vec![crate::ir::builder::var(&r)]
        },
    );
    let prog = crate::ir::builder::program(ns, vec![fd]);
    match crate::interp::run_entry(&prog, "p", vec![Value::Scalar(PrimValue::F64(x))]).expect("run")
        [0]
    {
        Value::Scalar(PrimValue::F64(y)) => y,
        _ => panic!("not an f64"),
    }
}
