//! Partial derivatives of the scalar operations, computed numerically on [`PrimValue`]s: the
//! numeric twin of [`crate::ad::derivatives`] (which emits IR computing the same partials), for
//! the AD oracle. The rules are the same, written again independently: integers are
//! differentiated formally (integer partials, wrapping arithmetic), bools have no derivative,
//! `floor`-like functions and comparisons have derivative zero, `min`/`max` give the whole
//! derivative to the operand they return (the first one on ties; NaN loses).
//!
//! A partial is `None` when it is identically zero, else the value to multiply the operand's
//! tangent by (of the result's type).

use crate::ir::{BinOp, CmpOp, MathFn, UnOp};
use crate::prim::{FloatType, IntType, PrimType, PrimValue};
use crate::primops;

/// A partial derivative: `None` = zero.
pub type Partial = Option<PrimValue>;

/// Does a value of this type carry an adjoint in reverse mode? (Integers and floats; bools do
/// not: the transformation gives them none either.)
pub fn differentiable(t: PrimType) -> bool {
    !matches!(t, PrimType::Bool)
}

/// Does a value of this type carry a tangent in forward mode? (All of them: as in Futhark, a
/// bool tangent is a bool, multiplied with `&&` and added with `||`.)
pub fn has_tangent(_t: PrimType) -> bool {
    true
}

fn f(t: FloatType, v: f64) -> Partial {
    Some(PrimValue::float(t, v))
}

fn i(t: IntType, v: i128) -> Partial {
    Some(PrimValue::int(t, v))
}

fn x64(p: PrimValue) -> f64 {
    p.as_f64().unwrap_or(f64::NAN)
}

/// An integer operation in type `t` (wrapping); division by zero gives zero.
fn ib(op: BinOp, x: PrimValue, y: PrimValue) -> PrimValue {
    let t = x.prim_type();
    primops::eval_binop(op, x, y).unwrap_or(PrimValue::zero(t))
}

/// Partial of a unary operation with respect to its operand.
pub fn unop(op: UnOp, x: PrimValue) -> Partial {
    let t = match op {
        UnOp::Neg(t) | UnOp::Not(t) | UnOp::Abs(t) | UnOp::Signum(t) => t,
    };
    let minus_one = match t {
        PrimType::Int(it) => i(it, -1),
        PrimType::Float(ft) => f(ft, -1.0),
        // As Futhark (`pdUnOp (Neg Bool) x = x`): the tangent of `!x` is `ẋ && x`.
        PrimType::Bool => {
            return match op {
                UnOp::Not(_) => Some(x),
                _ => None,
            }
        }
    };
    match op {
        // Bitwise complement: !x = -x - 1.
        UnOp::Neg(_) | UnOp::Not(_) => minus_one,
        UnOp::Abs(_) => primops::eval_unop(UnOp::Signum(t), x).ok(),
        UnOp::Signum(_) => None,
    }
}

/// Partials of a binary operation with respect to `x` and `y`.
pub fn binop(op: BinOp, x: PrimValue, y: PrimValue) -> (Partial, Partial) {
    match primops::binop_type(op) {
        PrimType::Bool => bool_binop(op, x, y),
        PrimType::Float(ft) => float_binop(op, ft, x64(x), x64(y)),
        PrimType::Int(it) => int_binop(op, it, x, y),
    }
}

/// As Futhark's `pdBinOp`: `x && y` has partials `(y, x)`, `x || y` has `(true, false)`.
fn bool_binop(op: BinOp, x: PrimValue, y: PrimValue) -> (Partial, Partial) {
    match op {
        BinOp::LogAnd | BinOp::And(_) => (Some(y), Some(x)),
        BinOp::LogOr | BinOp::Or(_) => (Some(PrimValue::Bool(true)), None),
        _ => (None, None),
    }
}

fn float_binop(op: BinOp, t: FloatType, x: f64, y: f64) -> (Partial, Partial) {
    use BinOp::*;
    match op {
        Add(_) => (f(t, 1.0), f(t, 1.0)),
        Sub(_) => (f(t, 1.0), f(t, -1.0)),
        Mul(_) => (f(t, y), f(t, x)),
        Div(_) => (f(t, 1.0 / y), f(t, -(x / y) / y)),
        Mod(_) => (f(t, 1.0), f(t, -(x / y).floor())),
        Pow(_) => {
            // d/dx = y·x^(y-1), 0 where x = 0 and y < 1; d/dy = x^y·ln x, 0 where x <= 0.
            let dx = if x == 0.0 && y < 1.0 {
                0.0
            } else {
                y * x.powf(y - 1.0)
            };
            let dy = if x > 0.0 { x.powf(y) * x.ln() } else { 0.0 };
            (f(t, dx), f(t, dy))
        }
        Min(_) | Max(_) => {
            let c = if matches!(op, Min(_)) { x <= y } else { y <= x };
            let c = (c || y.is_nan()) && !x.is_nan();
            let dx = if c { 1.0 } else { 0.0 };
            (f(t, dx), f(t, 1.0 - dx))
        }
        _ => (None, None),
    }
}

fn int_binop(op: BinOp, it: IntType, x: PrimValue, y: PrimValue) -> (Partial, Partial) {
    use BinOp::*;
    let pt = PrimType::Int(it);
    let one = PrimValue::int(it, 1);
    match op {
        Add(_) => (i(it, 1), i(it, 1)),
        Sub(_) => (i(it, 1), i(it, -1)),
        Mul(_) => (Some(y), Some(x)),
        Div(_) | Quot(_) => {
            // (1 quot y, -(x quot y²)), as Futhark.
            let dx = ib(Quot(it), one, y);
            let y2 = ib(Mul(pt), y, y);
            let q = ib(Quot(it), x, y2);
            let dy = primops::eval_unop(UnOp::Neg(pt), q).ok();
            (Some(dx), dy)
        }
        Mod(_) | Rem(_) => (i(it, 1), None),
        Pow(_) => {
            // y·x^max(y-1, 0).
            let y1 = ib(Sub(pt), y, one);
            let y1 = ib(Max(pt), y1, PrimValue::zero(pt));
            let p = ib(Pow(pt), x, y1);
            (Some(ib(Mul(pt), p, y)), None)
        }
        Min(_) | Max(_) => {
            let (a, b) = if matches!(op, Min(_)) { (x, y) } else { (y, x) };
            let c = primops::eval_cmpop(CmpOp::Le(pt), a, b).unwrap_or(false);
            let dx = PrimValue::int(it, i128::from(c));
            (Some(dx), Some(ib(Sub(pt), one, dx)))
        }
        Shl(_) => (Some(ib(Shl(it), one, y)), None),
        Shr(_) | UShr(_) => {
            let p = ib(Shl(it), one, y);
            (Some(ib(Quot(it), one, p)), None)
        }
        _ => (None, None),
    }
}

/// The digamma function ψ = Γ'/Γ: reflection for x < 0.5, a shift to x ≥ 8 by the recurrence
/// ψ(x) = ψ(x+1) − 1/x, then the asymptotic series (error below 1e-12 there).
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return digamma(1.0 - x) - pi / (pi * x).tan();
    }
    let mut x = x;
    let mut acc = 0.0;
    while x < 8.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let y = 1.0 / (x * x);
    let series = y
        * (1.0 / 12.0
            - y * (1.0 / 120.0 - y * (1.0 / 252.0 - y * (1.0 / 240.0 - y * (1.0 / 132.0)))));
    acc + x.ln() - 0.5 / x - series
}

/// Partials of a math function with respect to each argument; `res` is the primal result.
/// `ToBits`/`FromBits` are not handled here (their tangent is reinterpreted, not scaled). The
/// error names a function whose derivative is not supported.
pub fn math_fn(fun: MathFn, args: &[PrimValue], res: PrimValue) -> Result<Vec<Partial>, String> {
    use MathFn::*;
    let a = |k: usize| args.get(k).copied().map(x64).unwrap_or(f64::NAN);
    let r = x64(res);
    let one = |t: FloatType, v: f64| vec![f(t, v)];
    Ok(match fun {
        Sqrt(t) => one(t, 1.0 / (2.0 * r)),
        Cbrt(t) => one(t, 1.0 / (3.0 * r * r)),
        Exp(t) => one(t, r),
        Log(t) => one(t, 1.0 / a(0)),
        Log2(t) => one(t, 1.0 / (a(0) * 2f64.ln())),
        Log10(t) => one(t, 1.0 / (a(0) * 10f64.ln())),
        Log1p(t) => one(t, 1.0 / (1.0 + a(0))),
        Sin(t) => one(t, a(0).cos()),
        Cos(t) => one(t, -a(0).sin()),
        Tan(t) => one(t, 1.0 + r * r),
        Asin(t) => one(t, 1.0 / (1.0 - a(0) * a(0)).sqrt()),
        Acos(t) => one(t, -1.0 / (1.0 - a(0) * a(0)).sqrt()),
        Atan(t) => one(t, 1.0 / (1.0 + a(0) * a(0))),
        Sinh(t) => one(t, a(0).cosh()),
        Cosh(t) => one(t, a(0).sinh()),
        Tanh(t) => one(t, 1.0 - r * r),
        Asinh(t) => one(t, 1.0 / (a(0) * a(0) + 1.0).sqrt()),
        Acosh(t) => one(t, 1.0 / (a(0) * a(0) - 1.0).sqrt()),
        Atanh(t) => one(t, 1.0 / (1.0 - a(0) * a(0))),
        Atan2(t) => {
            // atan2(y, x): d/dy = x/(x²+y²), d/dx = -y/(x²+y²).
            let (y, x) = (a(0), a(1));
            let d = x * x + y * y;
            vec![f(t, x / d), f(t, -y / d)]
        }
        Hypot(t) => vec![f(t, a(0) / r), f(t, a(1) / r)],
        Erf(t) | Erfc(t) => {
            let c = 2.0 / std::f64::consts::PI.sqrt() * (-a(0) * a(0)).exp();
            one(t, if matches!(fun, Erfc(_)) { -c } else { c })
        }
        // Γ' = Γ·ψ, lgamma' = ψ.
        Gamma(t) => one(t, r * digamma(a(0))),
        Lgamma(t) => one(t, digamma(a(0))),
        Floor(_) | Ceil(_) | Round(_) | Trunc(_) => vec![None],
        IsNan(_) | IsInf(_) | ToBits(_) | FromBits(_) => vec![None; args.len()],
        Fma(t) => vec![f(t, a(1)), f(t, a(0)), f(t, 1.0)],
        Lerp(t) => vec![f(t, 1.0 - a(2)), f(t, a(2)), f(t, a(1) - a(0))],
        CopySign(t) => {
            let s = 1f64.copysign(a(0)) * 1f64.copysign(a(1));
            vec![f(t, s), None]
        }
        NextAfter(t) => vec![f(t, 1.0), None],
        Ldexp(t) => {
            let n = match args.get(1) {
                Some(PrimValue::I32(n)) => *n,
                _ => return Err(format!("ldexp: bad arguments {args:?}")),
            };
            vec![f(t, libm::scalbn(1.0, n)), None]
        }
        Clz(_) | Popc(_) | Ctz(_) | MulHi(_) => vec![None; args.len()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::{FloatType::F64, IntType::I32};

    fn d(v: f64) -> PrimValue {
        PrimValue::F64(v)
    }

    #[test]
    fn float_rules() {
        let f64t = PrimType::Float(F64);
        assert_eq!(
            binop(BinOp::Mul(f64t), d(2.0), d(5.0)),
            (Some(d(5.0)), Some(d(2.0)))
        );
        assert_eq!(
            binop(BinOp::Div(f64t), d(1.0), d(2.0)),
            (Some(d(0.5)), Some(d(-0.25)))
        );
        // x^y at x = 0, y = 0.5: the x-partial is 0, not infinite; the y-partial 0, not NaN.
        assert_eq!(
            binop(BinOp::Pow(f64t), d(0.0), d(0.5)),
            (Some(d(0.0)), Some(d(0.0)))
        );
        // min: ties go to the first operand; NaN loses.
        assert_eq!(
            binop(BinOp::Min(f64t), d(1.0), d(1.0)),
            (Some(d(1.0)), Some(d(0.0)))
        );
        assert_eq!(
            binop(BinOp::Max(f64t), d(f64::NAN), d(1.0)),
            (Some(d(0.0)), Some(d(1.0)))
        );
        assert_eq!(unop(UnOp::Abs(f64t), d(-3.0)), Some(d(-1.0)));
        assert_eq!(unop(UnOp::Abs(f64t), d(0.0)), Some(d(0.0)));
        let p = math_fn(MathFn::Log(F64), &[d(2.0)], d(2f64.ln())).unwrap();
        assert_eq!(p, vec![Some(d(0.5))]);
        let p = math_fn(MathFn::Sqrt(F64), &[d(4.0)], d(2.0)).unwrap();
        assert_eq!(p, vec![Some(d(0.25))]);
        let p = math_fn(MathFn::Atan2(F64), &[d(1.0), d(1.0)], d(0.0)).unwrap();
        assert_eq!(p, vec![Some(d(0.5)), Some(d(-0.5))]);
        // ψ(1) = −γ (Euler–Mascheroni); Γ'(1) = −γ.
        let p = math_fn(MathFn::Gamma(F64), &[d(1.0)], d(1.0)).unwrap();
        assert_eq!(p.len(), 1);
        match p[0] {
            Some(PrimValue::F64(v)) => assert!((v + 0.5772156649015329).abs() < 1e-12, "{v}"),
            ref other => panic!("{other:?}"),
        }
        assert!((digamma(0.5) + 1.9635100260214235).abs() < 1e-12);
        assert!((digamma(-0.5) - 0.03648997397857652).abs() < 1e-10);
        assert_eq!(
            math_fn(MathFn::Floor(F64), &[d(1.5)], d(1.0)).unwrap(),
            vec![None]
        );
    }

    #[test]
    fn integer_rules_are_formal() {
        let t = PrimType::Int(I32);
        let v = |x: i32| PrimValue::I32(x);
        assert_eq!(binop(BinOp::Mul(t), v(3), v(4)), (Some(v(4)), Some(v(3))));
        // (1 quot y, -(x quot y²)).
        assert_eq!(binop(BinOp::Div(t), v(7), v(2)), (Some(v(0)), Some(v(-1))));
        assert_eq!(
            binop(BinOp::Quot(I32), v(7), v(1)),
            (Some(v(1)), Some(v(-7)))
        );
        assert_eq!(binop(BinOp::Mod(t), v(7), v(2)), (Some(v(1)), None));
        assert_eq!(binop(BinOp::Pow(t), v(3), v(2)), (Some(v(6)), None));
        assert_eq!(binop(BinOp::Shl(I32), v(3), v(2)), (Some(v(4)), None));
        assert_eq!(binop(BinOp::Shr(I32), v(12), v(2)), (Some(v(0)), None));
        assert_eq!(binop(BinOp::Xor(I32), v(12), v(2)), (None, None));
        assert_eq!(unop(UnOp::Not(t), v(5)), Some(v(-1)));
        assert_eq!(
            unop(UnOp::Not(PrimType::Bool), PrimValue::Bool(true)),
            Some(PrimValue::Bool(true))
        );
    }
}
