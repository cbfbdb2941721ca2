//! Bool adjoints, as Futhark's reverse mode gives them: a bool adjoint is a bool, multiplied
//! with `&&` and added with `||`; `!x` has the partial `x`, `a && b` the partials `(b, a)`,
//! `a || b` the partials `(true, false)`; conversions to and from bool convert the adjoint back
//! (`b̄ += ȳ != 0` for `f64.bool b`); comparisons and branch conditions get nothing.

use super::super::reduce::tests::vjp_run;
use crate::prim::PrimValue;
use crate::value::{Buffer, Value};

fn b(v: bool) -> Value {
    Value::Scalar(PrimValue::Bool(v))
}
fn f(v: f64) -> Value {
    Value::Scalar(PrimValue::F64(v))
}

#[test]
fn logical_operators() {
    // !b: b̄ = ȳ && b.
    assert_eq!(
        vjp_run("entry f (x: bool) = !x", "true", "true"),
        [b(false), b(true)]
    );
    assert_eq!(
        vjp_run("entry f (x: bool) = !x", "false", "true"),
        [b(true), b(false)]
    );
    // a && b: (ȳ && b, ȳ && a).
    let out = vjp_run("entry f (a: bool) (c: bool) = a && c", "true false", "true");
    assert_eq!(out, [b(false), b(false), b(true)]);
    // a || b: (ȳ, false).
    let out = vjp_run("entry f (a: bool) (c: bool) = a || c", "false true", "true");
    assert_eq!(out, [b(true), b(true), b(false)]);
    // A false seed gives false adjoints.
    let out = vjp_run("entry f (a: bool) (c: bool) = a && c", "true true", "false");
    assert_eq!(out, [b(true), b(false), b(false)]);
}

#[test]
fn conversions_and_conditions() {
    // f64.bool c * x: x̄ = f64.bool c · ȳ, c̄ = (x · ȳ != 0).
    let src = "entry f (x: f64) (c: bool) = f64.bool c * x";
    assert_eq!(vjp_run(src, "3.0 true", "1.0"), [f(3.0), f(1.0), b(true)]);
    assert_eq!(vjp_run(src, "0.0 true", "1.0"), [f(0.0), f(1.0), b(false)]);
    // A branch condition and a comparison get nothing.
    let src = "entry f (x: f64) (c: bool) = if c && x > 1 then x * 2 else x";
    assert_eq!(vjp_run(src, "3.0 true", "1.0"), [f(6.0), f(2.0), b(false)]);
    // A bool result's seed does not reach a float input through a comparison.
    let src = "entry f (x: f64) = (x * 2, x > 1)";
    assert_eq!(vjp_run(src, "3.0", "1.0 true"), [f(6.0), b(true), f(2.0)]);
}

#[test]
fn bool_arrays_in_a_map() {
    let out = vjp_run(
        "entry f [n] (cs: [n]bool) (xs: [n]f64) = map2 (\\c x -> f64.bool c * x) cs xs",
        "[true, false, true] [2.0, 0.0, -1.0]",
        "[1.0, 1.0, 0.0]",
    );
    let Value::Array(cbar) = &out[1] else {
        panic!("{out:?}")
    };
    assert_eq!(cbar.data, Buffer::Bool(vec![true, false, false]));
    let Value::Array(xbar) = &out[2] else {
        panic!("{out:?}")
    };
    assert_eq!(xbar.data, Buffer::F64(vec![1.0, 0.0, 0.0]));
    // A free bool read in every iteration: its adjoint is the `||` of the contributions.
    let out = vjp_run(
        "entry f [n] (c: bool) (xs: [n]f64) = map (\\x -> f64.bool c * x) xs",
        "true [0.0, 2.0]",
        "[1.0, 1.0]",
    );
    assert_eq!(out[1], b(true));
}
