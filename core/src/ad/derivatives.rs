//! Partial derivatives of the scalar operations of the IR ([`UnOp`], [`BinOp`], [`ConvOp`],
//! [`MathFn`]) with respect to each float operand, as statements emitted into a [`Builder`].
//! Shared by forward mode (tangent = Σ ∂ᵢ·ẋᵢ) and reverse mode (x̄ᵢ += ∂ᵢ·ȳ).
//!
//! Partials are of the operation's result type. Integer operations are differentiated formally
//! (as Futhark does); bool operands and results get [`Partial::Zero`]. Non-differentiable points
//! follow Futhark's
//! `Futhark.AD.Derivatives`: `floor`/`ceil`/`round`/`trunc`/`signum` have derivative zero, `min`
//! and `max` give the whole derivative to the operand they return (the first one on ties).

use crate::ir::builder::Builder;
use crate::ir::{BinOp, CmpOp, ConvOp, MathFn, SubExp, Type, UnOp};
use crate::prim::{FloatType, PrimType, PrimValue};

/// One partial derivative.
#[derive(Clone, Debug, PartialEq)]
pub enum Partial {
    /// Identically zero (the operand does not influence the result, or it is not a float).
    Zero,
    /// Identically one.
    One,
    /// Identically minus one.
    NegOne,
    /// A computed value (a float of the result's type).
    Val(SubExp),
}

/// A float constant of type `t`.
pub fn fconst(t: FloatType, v: f64) -> SubExp {
    SubExp::Const(PrimValue::float(t, v))
}

/// Emits a float binary operation.
fn fb(b: &mut Builder, op: fn(PrimType) -> BinOp, t: FloatType, x: SubExp, y: SubExp) -> SubExp {
    SubExp::Var(b.binop(op(PrimType::Float(t)), x, y))
}

fn mul(b: &mut Builder, t: FloatType, x: SubExp, y: SubExp) -> SubExp {
    fb(b, BinOp::Mul, t, x, y)
}
fn add(b: &mut Builder, t: FloatType, x: SubExp, y: SubExp) -> SubExp {
    fb(b, BinOp::Add, t, x, y)
}
fn sub(b: &mut Builder, t: FloatType, x: SubExp, y: SubExp) -> SubExp {
    fb(b, BinOp::Sub, t, x, y)
}
fn div(b: &mut Builder, t: FloatType, x: SubExp, y: SubExp) -> SubExp {
    fb(b, BinOp::Div, t, x, y)
}
fn neg(b: &mut Builder, t: FloatType, x: SubExp) -> SubExp {
    SubExp::Var(b.unop(UnOp::Neg(PrimType::Float(t)), x))
}
fn math(b: &mut Builder, f: MathFn, xs: Vec<SubExp>) -> SubExp {
    SubExp::Var(b.math(f, xs))
}
/// `1.0` if `c` else `0.0`.
fn of_bool(b: &mut Builder, t: FloatType, c: SubExp) -> SubExp {
    SubExp::Var(b.conv(PrimType::Bool, PrimType::Float(t), c))
}
/// `x <= y` on floats.
fn le(b: &mut Builder, t: FloatType, x: SubExp, y: SubExp) -> SubExp {
    SubExp::Var(b.cmp(CmpOp::Le(PrimType::Float(t)), x, y))
}
fn lt(b: &mut Builder, t: FloatType, x: SubExp, y: SubExp) -> SubExp {
    SubExp::Var(b.cmp(CmpOp::Lt(PrimType::Float(t)), x, y))
}
/// `1 / sqrt(s)`.
fn rsqrt(b: &mut Builder, t: FloatType, s: SubExp) -> SubExp {
    let r = math(b, MathFn::Sqrt(t), vec![s]);
    div(b, t, fconst(t, 1.0), r)
}
/// `x * x`.
fn sq(b: &mut Builder, t: FloatType, x: &SubExp) -> SubExp {
    mul(b, t, x.clone(), x.clone())
}

/// A constant of type `t` (an integer or float type).
fn pconst(t: PrimType, v: i64) -> SubExp {
    SubExp::Const(match t {
        PrimType::Int(it) => PrimValue::int(it, v as i128),
        PrimType::Float(ft) => PrimValue::float(ft, v as f64),
        PrimType::Bool => PrimValue::Bool(v != 0),
    })
}

/// Does a value of this type have a tangent? (Integers and floats; bools do not.)
pub fn differentiable(t: PrimType) -> bool {
    !matches!(t, PrimType::Bool)
}

/// Does a value of this type have a tangent in forward mode? (All of them: as in Futhark, a bool
/// tangent is a bool, multiplied with `&&` and added with `||`; reverse mode treats bool
/// adjoints the same way.)
pub fn has_tangent(_t: PrimType) -> bool {
    true
}

/// Tangent multiplication in type `t`: `*`, or `&&` on bools (as Futhark's `~*~`).
pub fn mul_op(t: PrimType) -> BinOp {
    match t {
        PrimType::Bool => BinOp::LogAnd,
        t => BinOp::Mul(t),
    }
}

/// Tangent addition in type `t`: `+`, or `||` on bools (as Futhark's `~+~`).
pub fn add_op(t: PrimType) -> BinOp {
    match t {
        PrimType::Bool => BinOp::LogOr,
        t => BinOp::Add(t),
    }
}

/// Partial derivative of a unary operation with respect to its operand.
pub fn unop(b: &mut Builder, op: UnOp, x: &SubExp) -> Result<Partial, String> {
    let t = match op {
        UnOp::Neg(t) | UnOp::Not(t) | UnOp::Abs(t) | UnOp::Signum(t) => t,
    };
    if !differentiable(t) {
        // As Futhark (`pdUnOp (Neg Bool) x = x`): the tangent of `!x` is `ẋ && x`.
        return Ok(match op {
            UnOp::Not(_) => Partial::Val(x.clone()),
            _ => Partial::Zero,
        });
    }
    Ok(match op {
        UnOp::Neg(_) => Partial::NegOne,
        UnOp::Abs(_) => Partial::Val(SubExp::Var(b.unop(UnOp::Signum(t), x.clone()))),
        UnOp::Signum(_) => Partial::Zero,
        // Bitwise complement: !x = -x - 1.
        UnOp::Not(_) => Partial::NegOne,
    })
}

/// Partial derivatives of a binary operation with respect to `x` and `y`. Integer operations
/// follow Futhark (`Div`/`Quot`: `(1 quot y, -(x quot y²))`, `Mod`/`Rem`: `(1, 0)`, shifts as
/// multiplication/division by `2^y` with no derivative in `y`, bitwise operations: zero).
pub fn binop(
    b: &mut Builder,
    op: BinOp,
    x: &SubExp,
    y: &SubExp,
) -> Result<(Partial, Partial), String> {
    use BinOp::*;
    let t = crate::ir::check::binop_sig(op).1;
    if !differentiable(t) {
        // As Futhark's `pdBinOp`: `x && y` has partials `(y, x)`, `x || y` `(true, false)`.
        return Ok(match op {
            LogAnd | And(_) => (Partial::Val(y.clone()), Partial::Val(x.clone())),
            LogOr | Or(_) => (Partial::One, Partial::Zero),
            _ => (Partial::Zero, Partial::Zero),
        });
    }
    let (x, y) = (x.clone(), y.clone());
    let ft = match t {
        PrimType::Float(ft) => Some(ft),
        _ => None,
    };
    let it = match t {
        PrimType::Int(it) => Some(it),
        _ => None,
    };
    let bin = |b: &mut Builder, op: BinOp, p: SubExp, q: SubExp| SubExp::Var(b.binop(op, p, q));
    Ok(match (op, ft, it) {
        (Add(_), _, _) => (Partial::One, Partial::One),
        (Sub(_), _, _) => (Partial::One, Partial::NegOne),
        (Mul(_), _, _) => (Partial::Val(y), Partial::Val(x)),
        (Div(_), Some(ft), _) => {
            // d/dx = 1/y; d/dy = -x/y².
            let dx = div(b, ft, fconst(ft, 1.0), y.clone());
            let q = div(b, ft, x, y.clone());
            let q = div(b, ft, q, y);
            (Partial::Val(dx), Partial::Val(neg(b, ft, q)))
        }
        (Div(_), None, Some(it)) | (Quot(it), _, _) => {
            let dx = bin(b, Quot(it), pconst(t, 1), y.clone());
            let y2 = bin(b, Mul(t), y.clone(), y);
            let q = bin(b, Quot(it), x, y2);
            let dy = SubExp::Var(b.unop(UnOp::Neg(t), q));
            (Partial::Val(dx), Partial::Val(dy))
        }
        (Mod(_), Some(ft), _) => {
            // x - y*floor(x/y): d/dx = 1, d/dy = -floor(x/y).
            let q = div(b, ft, x, y);
            let f = math(b, MathFn::Floor(ft), vec![q]);
            (Partial::One, Partial::Val(neg(b, ft, f)))
        }
        (Mod(_), None, _) | (Rem(_), _, _) => (Partial::One, Partial::Zero),
        (Pow(_), Some(ft), _) => {
            // d/dx = y·x^(y-1) (0 where x = 0 and y < 1, as Futhark);
            // d/dy = x^y·ln x (0 where x <= 0).
            let y1 = sub(b, ft, y.clone(), fconst(ft, 1.0));
            let p = fb(b, Pow, ft, x.clone(), y1);
            let dx = mul(b, ft, y.clone(), p);
            let x0 = SubExp::Var(b.cmp(CmpOp::Eq(t), x.clone(), fconst(ft, 0.0)));
            let ylt1 = lt(b, ft, y.clone(), fconst(ft, 1.0));
            let bad = SubExp::Var(b.binop(BinOp::LogAnd, x0, ylt1));
            let notbad = SubExp::Var(b.unop(UnOp::Not(PrimType::Bool), bad));
            let keep = of_bool(b, ft, notbad);
            let dx = guarded(b, ft, keep, dx);
            let xy = fb(b, Pow, ft, x.clone(), y);
            let xpos = lt(b, ft, fconst(ft, 0.0), x.clone());
            let keep = of_bool(b, ft, xpos);
            // log of a non-positive x would be NaN; replace x by 1 there (log 1 = 0).
            let one_minus = sub(b, ft, fconst(ft, 1.0), keep.clone());
            let xm = mul(b, ft, x, keep);
            let safe = add(b, ft, xm, one_minus);
            let l = math(b, MathFn::Log(ft), vec![safe]);
            (Partial::Val(dx), Partial::Val(mul(b, ft, xy, l)))
        }
        (Pow(_), None, _) => {
            // y·x^max(y-1, 0): 0 when y = 0 (and no negative exponent is evaluated).
            let y1 = bin(b, Sub(t), y.clone(), pconst(t, 1));
            let y1 = bin(b, Max(t), y1, pconst(t, 0));
            let p = bin(b, Pow(t), x, y1);
            (Partial::Val(bin(b, Mul(t), p, y)), Partial::Zero)
        }
        (Min(_), Some(ft), _) | (Max(_), Some(ft), _) => {
            // The operand returned gets the derivative; NaN loses (the other operand is returned).
            let c = if matches!(op, Min(_)) {
                le(b, ft, x.clone(), y.clone())
            } else {
                le(b, ft, y.clone(), x.clone())
            };
            let ynan = SubExp::Var(b.math(MathFn::IsNan(ft), vec![y]));
            let xnan = SubExp::Var(b.math(MathFn::IsNan(ft), vec![x]));
            let notxnan = SubExp::Var(b.unop(UnOp::Not(PrimType::Bool), xnan));
            let c = SubExp::Var(b.binop(BinOp::LogOr, c, ynan));
            let c = SubExp::Var(b.binop(BinOp::LogAnd, c, notxnan));
            let dx = of_bool(b, ft, c);
            let dy = sub(b, ft, fconst(ft, 1.0), dx.clone());
            (Partial::Val(dx), Partial::Val(dy))
        }
        (Min(_), None, _) | (Max(_), None, _) => {
            let c = if matches!(op, Min(_)) {
                SubExp::Var(b.cmp(CmpOp::Le(t), x, y))
            } else {
                SubExp::Var(b.cmp(CmpOp::Le(t), y, x))
            };
            let dx = SubExp::Var(b.conv(PrimType::Bool, t, c));
            let dy = bin(b, Sub(t), pconst(t, 1), dx.clone());
            (Partial::Val(dx), Partial::Val(dy))
        }
        (Shl(it), _, _) => {
            let p = bin(b, Shl(it), pconst(t, 1), y);
            (Partial::Val(p), Partial::Zero)
        }
        (Shr(it), _, _) | (UShr(it), _, _) => {
            let p = bin(b, Shl(it), pconst(t, 1), y);
            let d = bin(b, Quot(it), pconst(t, 1), p);
            (Partial::Val(d), Partial::Zero)
        }
        _ => (Partial::Zero, Partial::Zero),
    })
}

/// `keep * v`, but 0 (not NaN) where `keep` is 0 and `v` is not finite.
fn guarded(b: &mut Builder, ft: FloatType, keep: SubExp, v: SubExp) -> SubExp {
    let kb = SubExp::Var(b.cmp(CmpOp::Eq(PrimType::Float(ft)), keep, fconst(ft, 1.0)));
    let then_b = Builder::new(b.ns).finish(vec![v]);
    let else_b = Builder::new(b.ns).finish(vec![fconst(ft, 0.0)]);
    let t = Type::Prim(PrimType::Float(ft));
    SubExp::Var(b.bind(
        "d",
        t.clone(),
        crate::ir::Exp::If {
            cond: kb,
            then_b,
            else_b,
            ret: vec![t.to_ext()],
        },
    ))
}

/// How a conversion acts on tangents: `One` when the tangent is converted along (integer or
/// float to integer or float, except float → integer), `Zero` otherwise (float → integer is a
/// step function; bools have no tangent).
pub fn conv(op: ConvOp) -> Partial {
    // As Futhark (tests/ad/conv1.fut): every numeric conversion, float → int included, converts
    // the tangent (`jvp i32.f64 x 1 == 1`).
    match (op.from, op.to) {
        (f, t) if differentiable(f) && differentiable(t) => Partial::One,
        _ => Partial::Zero,
    }
}

/// Partial derivatives of a math function with respect to each argument; `res` is the result of
/// the primal call (reused where the derivative mentions it).
pub fn math_fn(
    b: &mut Builder,
    f: MathFn,
    args: &[SubExp],
    res: &SubExp,
) -> Result<Vec<Partial>, String> {
    use MathFn::*;
    let arg = |i: usize| {
        args.get(i)
            .cloned()
            .ok_or_else(|| "a math function with too few arguments".to_string())
    };
    let v = Partial::Val;
    Ok(match f {
        Sqrt(t) => {
            let d = mul(b, t, fconst(t, 2.0), res.clone());
            vec![v(div(b, t, fconst(t, 1.0), d))]
        }
        Cbrt(t) => {
            let r2 = sq(b, t, res);
            let d = mul(b, t, fconst(t, 3.0), r2);
            vec![v(div(b, t, fconst(t, 1.0), d))]
        }
        Exp(t) => {
            let _ = t;
            vec![v(res.clone())]
        }
        Log(t) => vec![v(div(b, t, fconst(t, 1.0), arg(0)?))],
        Log2(t) | Log10(t) => {
            let base: f64 = if matches!(f, Log2(_)) { 2.0 } else { 10.0 };
            let d = mul(b, t, arg(0)?, fconst(t, base.ln()));
            vec![v(div(b, t, fconst(t, 1.0), d))]
        }
        Log1p(t) => {
            let d = add(b, t, fconst(t, 1.0), arg(0)?);
            vec![v(div(b, t, fconst(t, 1.0), d))]
        }
        Sin(t) => vec![v(math(b, Cos(t), vec![arg(0)?]))],
        Cos(t) => {
            let s = math(b, Sin(t), vec![arg(0)?]);
            vec![v(neg(b, t, s))]
        }
        Tan(t) => {
            let r2 = sq(b, t, res);
            vec![v(add(b, t, fconst(t, 1.0), r2))]
        }
        Asin(t) | Acos(t) => {
            let x2 = sq(b, t, &arg(0)?);
            let s = sub(b, t, fconst(t, 1.0), x2);
            let d = rsqrt(b, t, s);
            vec![v(if matches!(f, Acos(_)) {
                neg(b, t, d)
            } else {
                d
            })]
        }
        Atan(t) => {
            let x2 = sq(b, t, &arg(0)?);
            let s = add(b, t, fconst(t, 1.0), x2);
            vec![v(div(b, t, fconst(t, 1.0), s))]
        }
        Sinh(t) => vec![v(math(b, Cosh(t), vec![arg(0)?]))],
        Cosh(t) => vec![v(math(b, Sinh(t), vec![arg(0)?]))],
        Tanh(t) => {
            let r2 = sq(b, t, res);
            vec![v(sub(b, t, fconst(t, 1.0), r2))]
        }
        Asinh(t) => {
            let x2 = sq(b, t, &arg(0)?);
            let s = add(b, t, x2, fconst(t, 1.0));
            vec![v(rsqrt(b, t, s))]
        }
        Acosh(t) => {
            let x2 = sq(b, t, &arg(0)?);
            let s = sub(b, t, x2, fconst(t, 1.0));
            vec![v(rsqrt(b, t, s))]
        }
        Atanh(t) => {
            let x2 = sq(b, t, &arg(0)?);
            let s = sub(b, t, fconst(t, 1.0), x2);
            vec![v(div(b, t, fconst(t, 1.0), s))]
        }
        Atan2(t) => {
            // atan2(y, x): d/dy = x/(x²+y²), d/dx = -y/(x²+y²).
            let (y, x) = (arg(0)?, arg(1)?);
            let x2 = sq(b, t, &x);
            let y2 = sq(b, t, &y);
            let r = add(b, t, x2, y2);
            let dy = div(b, t, x, r.clone());
            let ny = neg(b, t, y);
            let dx = div(b, t, ny, r);
            vec![v(dy), v(dx)]
        }
        Hypot(t) => {
            let (x, y) = (arg(0)?, arg(1)?);
            let dx = div(b, t, x, res.clone());
            let dy = div(b, t, y, res.clone());
            vec![v(dx), v(dy)]
        }
        Erf(t) | Erfc(t) => {
            // d erf/dx = 2/sqrt(pi)·exp(-x²).
            let x2 = sq(b, t, &arg(0)?);
            let nx2 = neg(b, t, x2);
            let e = math(b, Exp(t), vec![nx2]);
            let c = 2.0 / std::f64::consts::PI.sqrt();
            let c = if matches!(f, Erfc(_)) { -c } else { c };
            vec![v(mul(b, t, fconst(t, c), e))]
        }
        // Γ'(x) = Γ(x)·ψ(x); (ln|Γ|)'(x) = ψ(x).
        Gamma(t) => {
            let psi = digamma(b, t, arg(0)?);
            vec![v(mul(b, t, res.clone(), psi))]
        }
        Lgamma(t) => vec![v(digamma(b, t, arg(0)?))],
        Floor(_) | Ceil(_) | Round(_) | Trunc(_) => vec![Partial::Zero],
        // ToBits/FromBits reinterpret the tangent (Futhark's rule); `fwd` handles them.
        IsNan(_) | IsInf(_) | ToBits(_) | FromBits(_) => vec![Partial::Zero; args.len()],
        Fma(_) => vec![v(arg(1)?), v(arg(0)?), Partial::One],
        Lerp(t) => {
            // v0 + (v1 - v0)·t (no clamping, as the IR's Lerp).
            let (v0, v1, tt) = (arg(0)?, arg(1)?, arg(2)?);
            let d0 = sub(b, t, fconst(t, 1.0), tt.clone());
            let dt = sub(b, t, v1, v0);
            vec![v(d0), v(tt), v(dt)]
        }
        CopySign(t) => {
            // |x|·sign(y): d/dx = sign(x)·sign(y) (as ±1), d/dy = 0.
            let one = fconst(t, 1.0);
            let sx = math(b, CopySign(t), vec![one.clone(), arg(0)?]);
            let sy = math(b, CopySign(t), vec![one, arg(1)?]);
            let d = mul(b, t, sx, sy);
            vec![v(d), Partial::Zero]
        }
        // nextafter x y: 1 for x, 0 for y (Futhark's rule).
        NextAfter(_) => vec![Partial::One, Partial::Zero],
        // ldexp x n = x·2^n: 2^n (as `ldexp 1 n`) for x; n is an integer.
        Ldexp(t) => {
            let p = math(b, Ldexp(t), vec![fconst(t, 1.0), arg(1)?]);
            vec![v(p), Partial::Zero]
        }
        Clz(_) | Popc(_) | Ctz(_) | MulHi(_) => vec![Partial::Zero; args.len()],
    })
}

/// `if c then x else y` for float scalars (both already computed).
fn select(b: &mut Builder, t: FloatType, c: SubExp, x: SubExp, y: SubExp) -> SubExp {
    let then_b = Builder::new(b.ns).finish(vec![x]);
    let else_b = Builder::new(b.ns).finish(vec![y]);
    let ty = Type::Prim(PrimType::Float(t));
    SubExp::Var(b.bind(
        "sel",
        ty.clone(),
        crate::ir::Exp::If {
            cond: c,
            then_b,
            else_b,
            ret: vec![ty.to_ext()],
        },
    ))
}

/// How far [`digamma`] shifts its argument up before the asymptotic series.
const DIGAMMA_SHIFT: usize = 8;

/// The digamma function ψ = Γ'/Γ as statements (there is no IR primitive for it), for the
/// derivatives of `gamma` and `lgamma`:
/// - for `x ≥ 0`, the recurrence ψ(x) = ψ(x + 8) − Σ_{j<8} 1/(x + j), then the asymptotic series
///   ψ(y) ≈ ln y − 1/(2y) − Σ_k B₂ₖ/(2k·y²ᵏ) at y = x + 8 ≥ 8 (terms to y⁻¹²; the first term left
///   out is below 1e-13, so the result is accurate to about 1e-12 relative in f64);
/// - for `x < 0`, the reflection ψ(x) = ψ(1 − x) − π/tan(πx).
///
/// Poles (0 and negative integers) give ±inf or NaN, as ψ has no value there.
pub fn digamma(b: &mut Builder, t: FloatType, x: SubExp) -> SubExp {
    let neg = lt(b, t, x.clone(), fconst(t, 0.0));
    let one_minus = sub(b, t, fconst(t, 1.0), x.clone());
    let z = select(b, t, neg.clone(), one_minus, x.clone());
    // Σ_{j<8} 1/(z + j).
    let mut shift_sum = fconst(t, 0.0);
    for j in 0..DIGAMMA_SHIFT {
        let zj = if j == 0 {
            z.clone()
        } else {
            add(b, t, z.clone(), fconst(t, j as f64))
        };
        let r = div(b, t, fconst(t, 1.0), zj);
        shift_sum = if j == 0 { r } else { add(b, t, shift_sum, r) };
    }
    let y = add(b, t, z, fconst(t, DIGAMMA_SHIFT as f64));
    let iy = div(b, t, fconst(t, 1.0), y.clone());
    let iy2 = mul(b, t, iy.clone(), iy.clone());
    // B₂ₖ/(2k) for k = 1..6, evaluated in y⁻² by Horner's rule.
    let coefs = [
        1.0 / 12.0,
        -1.0 / 120.0,
        1.0 / 252.0,
        -1.0 / 240.0,
        1.0 / 132.0,
        -691.0 / 32760.0,
    ];
    let mut poly = fconst(t, coefs[coefs.len() - 1]);
    for c in coefs.iter().rev().skip(1) {
        let m = mul(b, t, poly, iy2.clone());
        poly = add(b, t, fconst(t, *c), m);
    }
    let series = mul(b, t, poly, iy2);
    let ln = math(b, MathFn::Log(t), vec![y]);
    let half = mul(b, t, fconst(t, 0.5), iy);
    let a = sub(b, t, ln, half);
    let a = sub(b, t, a, series);
    let psi = sub(b, t, a, shift_sum);
    // Reflection for x < 0: ψ(x) = ψ(1 − x) − π/tan(πx).
    let pi = fconst(t, std::f64::consts::PI);
    let px = mul(b, t, pi.clone(), x);
    let tn = math(b, MathFn::Tan(t), vec![px]);
    let cot = div(b, t, pi, tn);
    let reflected = sub(b, t, psi.clone(), cot);
    select(b, t, neg, reflected, psi)
}

#[cfg(test)]
#[path = "tests_gamma.rs"]
mod tests_gamma;
