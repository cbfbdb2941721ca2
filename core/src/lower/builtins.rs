//! The meaning of the intrinsics ([`crate::builtins::INTRINSICS`]) and of the numeric module
//! functions ([`crate::builtins::MODULE_FNS`]).

use super::env::{Head, SV};
use super::expr::scalar;
use super::types::{arr_var, outer_dim};
use super::{internal, Lowerer, SizeArith, R};
use crate::builtins::{applies, bits_type, INTRINSICS, MODULE_FNS};
use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp as B, DimIndex, Exp, MathFn as M, Operator, Soac, SubExp, Type, UnOp as U};
use crate::prim::{FloatType, IntType, PrimType, PrimValue};
use crate::syntax::ast::BinOp;

const I64: Type = Type::Prim(PrimType::Int(IntType::I64));

/// Number of top-level arrows in a signature `'a ... : t1 -> t2 -> t`.
fn sig_arity(sig: &str) -> usize {
    let ty = sig.split_once(':').map(|(_, t)| t).unwrap_or(sig);
    let (mut depth, mut n) = (0i32, 0usize);
    let b = ty.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'-' if depth == 0 && b.get(i + 1) == Some(&b'>') => n += 1,
            _ => {}
        }
    }
    n
}

/// The static name of an intrinsic.
pub(crate) fn intrinsic_name(n: &str) -> Option<&'static str> {
    INTRINSICS.iter().find(|(m, _)| *m == n).map(|(m, _)| *m)
}

/// The number of sizes of intrinsic `n` that the type checker infers from the context of each
/// use (`unflatten`: `n` and `m` of `[n*m]t -> [n][m]t`); lowering passes them as leading
/// `i64` arguments (see `with_inferred_sizes` in `expr.rs`).
pub(crate) fn inferred_sizes(n: &str) -> usize {
    match n {
        "rep" => 1,
        "unflatten" | "split" => 2,
        "unflatten_3d" => 3,
        "unflatten_4d" => 4,
        _ => 0,
    }
}

/// The number of arguments of intrinsic `n`, including its inferred sizes.
pub(crate) fn intrinsic_arity(n: &str) -> usize {
    INTRINSICS
        .iter()
        .find(|(m, _)| *m == n)
        .map(|(_, s)| sig_arity(s))
        .unwrap_or(1)
        + inferred_sizes(n)
}

fn modfn(n: &str, m: PrimType) -> Option<(&'static str, &'static str)> {
    MODULE_FNS
        .iter()
        .find(|(f, a, _)| *f == n && applies(*a, m))
        .map(|(f, _, s)| (*f, *s))
}

pub(crate) fn modfn_arity(n: &str) -> usize {
    MODULE_FNS
        .iter()
        .find(|(f, _, _)| *f == n)
        .map(|(_, _, s)| sig_arity(s))
        .unwrap_or(1)
}

/// Whether module `m` (a primitive type name) has a member `n`.
pub(crate) fn mod_has(m: PrimType, n: &str) -> bool {
    PrimType::from_name(n).is_some() || modfn(n, m).is_some()
}

fn ast_op(sym: &str) -> Option<BinOp> {
    use BinOp::*;
    [
        Add, Sub, Mul, Div, Mod, Quot, Rem, Pow, Shl, Shr, UShr, BitAnd, BitOr, BitXor, Eq, Neq,
        Lt, Le, Gt, Ge,
    ]
    .into_iter()
    .find(|o| o.symbol() == sym)
}

fn highest(t: PrimType) -> PrimValue {
    match t {
        PrimType::Int(it) if it.signed() => PrimValue::int(it, (1i128 << (it.bits() - 1)) - 1),
        PrimType::Int(it) => PrimValue::int(it, (1i128 << it.bits()) - 1),
        PrimType::Float(ft) => PrimValue::float(ft, f64::INFINITY),
        PrimType::Bool => PrimValue::Bool(true),
    }
}

fn lowest(t: PrimType) -> PrimValue {
    match t {
        PrimType::Int(it) if it.signed() => PrimValue::int(it, -(1i128 << (it.bits() - 1))),
        PrimType::Int(it) => PrimValue::int(it, 0),
        PrimType::Float(ft) => PrimValue::float(ft, f64::NEG_INFINITY),
        PrimType::Bool => PrimValue::Bool(false),
    }
}

fn one(t: PrimType) -> PrimValue {
    match t {
        PrimType::Int(it) => PrimValue::int(it, 1),
        PrimType::Float(ft) => PrimValue::float(ft, 1.0),
        PrimType::Bool => PrimValue::Bool(true),
    }
}

fn float_fn(n: &str, f: FloatType) -> Option<(M, usize)> {
    Some(match n {
        "sqrt" => (M::Sqrt(f), 1),
        "cbrt" => (M::Cbrt(f), 1),
        "exp" => (M::Exp(f), 1),
        "log" => (M::Log(f), 1),
        "log2" => (M::Log2(f), 1),
        "log10" => (M::Log10(f), 1),
        "log1p" => (M::Log1p(f), 1),
        "sin" => (M::Sin(f), 1),
        "cos" => (M::Cos(f), 1),
        "tan" => (M::Tan(f), 1),
        "asin" => (M::Asin(f), 1),
        "acos" => (M::Acos(f), 1),
        "atan" => (M::Atan(f), 1),
        "sinh" => (M::Sinh(f), 1),
        "cosh" => (M::Cosh(f), 1),
        "tanh" => (M::Tanh(f), 1),
        "asinh" => (M::Asinh(f), 1),
        "acosh" => (M::Acosh(f), 1),
        "atanh" => (M::Atanh(f), 1),
        "atan2" => (M::Atan2(f), 2),
        "hypot" => (M::Hypot(f), 2),
        "erf" => (M::Erf(f), 1),
        "erfc" => (M::Erfc(f), 1),
        "gamma" => (M::Gamma(f), 1),
        "lgamma" => (M::Lgamma(f), 1),
        "floor" => (M::Floor(f), 1),
        "ceil" => (M::Ceil(f), 1),
        "round" => (M::Round(f), 1),
        "trunc" => (M::Trunc(f), 1),
        "fma" => (M::Fma(f), 3),
        "lerp" => (M::Lerp(f), 3),
        "copysign" => (M::CopySign(f), 2),
        "nextafter" => (M::NextAfter(f), 2),
        "ldexp" => (M::Ldexp(f), 2),
        _ => return None,
    })
}

impl<'a> Lowerer<'a> {
    /// The member `n` of numeric module `m`: a function value, or a constant's value.
    pub fn mod_member(&mut self, m: PrimType, n: &str, span: Span) -> R<SV<'a>> {
        if PrimType::from_name(n).is_some() {
            // `m.t x` converts `x` (of type `t`) to `m`.
            return Ok(SV::fun(Head::Conv(m)));
        }
        let (name, sig) = modfn(n, m)
            .ok_or_else(|| internal(span, &format!("unknown module function {m}.{n}")))?;
        if sig_arity(sig) == 0 {
            return self.call_modfn(m, name, vec![], span);
        }
        Ok(SV::fun(Head::ModFn(m, name)))
    }

    pub fn call_modfn(&mut self, m: PrimType, n: &str, args: Vec<SV<'a>>, span: Span) -> R<SV<'a>> {
        let t = m;
        let val = |s: SubExp, t: PrimType| SV::Val(s, Type::Prim(t));
        let c = |v: PrimValue| SV::Val(SubExp::Const(v), Type::Prim(v.prim_type()));
        let arg = |i: usize| -> R<SubExp> {
            Ok(scalar(args.get(i).ok_or_else(|| internal(span, "arity"))?, span)?.0)
        };
        let ft = match t {
            PrimType::Float(f) => Some(f),
            _ => None,
        };
        let it = match t {
            PrimType::Int(i) => Some(i),
            _ => None,
        };
        if let Some(op) = ast_op(n) {
            let mut a = args.into_iter();
            return match (a.next(), a.next()) {
                (Some(x), Some(y)) => self.binop(op, x, y, span),
                _ => Err(internal(span, "arity")),
            };
        }
        let tt = Type::Prim(t);
        let un = |l: &mut Self, op: U, x: SubExp| l.let1(n, tt.clone(), Exp::UnOp(op, x));
        let bin =
            |l: &mut Self, op: B, x: SubExp, y: SubExp| l.let1(n, tt.clone(), Exp::BinOp(op, x, y));
        Ok(match n {
            "max" => val(bin(self, B::Max(t), arg(0)?, arg(1)?), t),
            "min" => val(bin(self, B::Min(t), arg(0)?, arg(1)?), t),
            "abs" => val(un(self, U::Abs(t), arg(0)?), t),
            "sgn" => val(un(self, U::Signum(t), arg(0)?), t),
            "neg" => val(un(self, U::Neg(t), arg(0)?), t),
            "not" => val(un(self, U::Not(t), arg(0)?), t),
            "highest" => c(highest(t)),
            "lowest" => c(lowest(t)),
            "num_bits" => {
                let bits = match t {
                    PrimType::Int(i) => i.bits(),
                    PrimType::Float(f) => f.bits(),
                    PrimType::Bool => 8,
                };
                c(PrimValue::I32(bits as i32))
            }
            "sum" | "product" | "maximum" | "minimum" => {
                let (op, ne) = match n {
                    "sum" => (B::Add(t), PrimValue::zero(t)),
                    "product" => (B::Mul(t), one(t)),
                    "maximum" => (B::Max(t), lowest(t)),
                    _ => (B::Min(t), highest(t)),
                };
                let xs = args.first().ok_or_else(|| internal(span, "arity"))?;
                let w = outer_dim(xs, span)?;
                let arr = match xs {
                    SV::Val(s, Type::Array { .. }) => arr_var(s, span)?,
                    _ => return Err(internal(span, "expected an array of scalars")),
                };
                let lam = self.scalar_lambda(t, op);
                let r = self.let1(
                    n,
                    tt.clone(),
                    Exp::Soac(Soac::Reduce {
                        w,
                        arrs: vec![arr],
                        op: Operator {
                            lam,
                            neutral: vec![SubExp::Const(ne)],
                            commutative: true,
                        },
                    }),
                );
                val(r, t)
            }
            "to_i64" => val(self.conv(arg(0)?, t, PrimType::I64), PrimType::I64),
            "get_bit" | "set_bit" if ft.is_some() => {
                // On the IEEE bit pattern (Futhark: `u32.get_bit bit (to_bits x)`, ...).
                let f = ft.ok_or_else(|| internal(span, "float bit function"))?;
                let ut = PrimType::Int(bits_type(f));
                let bits = self.let1(
                    "bits",
                    Type::Prim(ut),
                    Exp::Math(M::ToBits(f), vec![arg(1)?]),
                );
                let mut uargs = vec![args[0].clone(), val(bits, ut)];
                if n == "set_bit" {
                    uargs.push(args.get(2).ok_or_else(|| internal(span, "arity"))?.clone());
                    let (b, _) = scalar(&self.call_modfn(ut, n, uargs, span)?, span)?;
                    val(
                        self.let1(n, tt.clone(), Exp::Math(M::FromBits(f), vec![b])),
                        t,
                    )
                } else {
                    self.call_modfn(ut, n, uargs, span)?
                }
            }
            "get_bit" => {
                let it = it.ok_or_else(|| internal(span, "get_bit on a float"))?;
                let bit = self.conv(arg(0)?, PrimType::I32, t);
                let sh = bin(self, B::Shr(it), arg(1)?, bit);
                let a = bin(self, B::And(t), sh, SubExp::Const(one(t)));
                val(self.conv(a, t, PrimType::I32), PrimType::I32)
            }
            "set_bit" => {
                // `(x & !(1 << bit)) | (b << bit)`, computed in `t` (Futhark computes it in
                // `i32` for types of up to 32 bits, which keeps the same low bits, and in `t`
                // for the 64-bit ones).
                let it = it.ok_or_else(|| internal(span, "set_bit on a float"))?;
                let (bit, x, b) = (arg(0)?, arg(1)?, arg(2)?);
                let bit = self.conv(bit, PrimType::I32, t);
                let sh = bin(self, B::Shl(it), SubExp::Const(one(t)), bit.clone());
                let mask = un(self, U::Not(t), sh);
                let cleared = bin(self, B::And(t), x, mask);
                let b = self.conv(b, PrimType::I32, t);
                let bs = bin(self, B::Shl(it), b, bit);
                val(bin(self, B::Or(t), cleared, bs), t)
            }
            "popc" | "clz" | "ctz" => {
                let it = it.ok_or_else(|| internal(span, "bit function on a float"))?;
                let f = match n {
                    "popc" => M::Popc(it),
                    "clz" => M::Clz(it),
                    _ => M::Ctz(it),
                };
                val(
                    self.let1(n, Type::Prim(PrimType::I32), Exp::Math(f, vec![arg(0)?])),
                    PrimType::I32,
                )
            }
            "mul_hi" => {
                let it = it.ok_or_else(|| internal(span, "mul_hi on a float"))?;
                val(
                    self.let1(
                        n,
                        tt.clone(),
                        Exp::Math(M::MulHi(it), vec![arg(0)?, arg(1)?]),
                    ),
                    t,
                )
            }
            "mad_hi" => {
                let it = it.ok_or_else(|| internal(span, "mad_hi on a float"))?;
                let hi = self.let1(
                    "hi",
                    tt.clone(),
                    Exp::Math(M::MulHi(it), vec![arg(0)?, arg(1)?]),
                );
                val(bin(self, B::Add(t), hi, arg(2)?), t)
            }
            "to_f64" => val(self.conv(arg(0)?, t, PrimType::F64), PrimType::F64),
            "recip" | "rsqrt" => {
                // `1 / x`, `1 / sqrt x` (Futhark's C backend).
                let x = if n == "rsqrt" {
                    let f = ft.ok_or_else(|| internal(span, "rsqrt on an integer"))?;
                    self.let1("sqrt", tt.clone(), Exp::Math(M::Sqrt(f), vec![arg(0)?]))
                } else {
                    arg(0)?
                };
                val(bin(self, B::Div(t), SubExp::Const(one(t)), x), t)
            }
            "sinpi" | "cospi" | "tanpi" => {
                // `sin (pi * x)` and so on, with `pi` of the module's type (as Futhark's C
                // backend does).
                let f = ft.ok_or_else(|| internal(span, "sinpi on an integer"))?;
                let pi = SubExp::Const(PrimValue::float(f, std::f64::consts::PI));
                let px = bin(self, B::Mul(t), pi, arg(0)?);
                let (mf, _) = float_fn(&n[..3], f).ok_or_else(|| internal(span, "sinpi"))?;
                val(self.let1(n, tt.clone(), Exp::Math(mf, vec![px])), t)
            }
            "asinpi" | "acospi" | "atanpi" | "atan2pi" => {
                // `asin x / pi` and so on.
                let f = ft.ok_or_else(|| internal(span, "asinpi on an integer"))?;
                let base = &n[..n.len() - 2];
                let (mf, k) = float_fn(base, f).ok_or_else(|| internal(span, "asinpi"))?;
                let xs = (0..k).map(arg).collect::<R<Vec<_>>>()?;
                let r = self.let1(base, tt.clone(), Exp::Math(mf, xs));
                let pi = SubExp::Const(PrimValue::float(f, std::f64::consts::PI));
                val(bin(self, B::Div(t), r, pi), t)
            }
            "pow" => val(bin(self, B::Pow(t), arg(0)?, arg(1)?), t),
            "isnan" | "isinf" | "isfinite" => {
                let f = ft.ok_or_else(|| internal(span, "float function on an integer"))?;
                let bt = Type::Prim(PrimType::Bool);
                let x = arg(0)?;
                let r = match n {
                    "isnan" => self.let1(n, bt, Exp::Math(M::IsNan(f), vec![x])),
                    "isinf" => self.let1(n, bt, Exp::Math(M::IsInf(f), vec![x])),
                    _ => {
                        let a =
                            self.let1("isnan", bt.clone(), Exp::Math(M::IsNan(f), vec![x.clone()]));
                        let b = self.let1("isinf", bt.clone(), Exp::Math(M::IsInf(f), vec![x]));
                        let o = self.let1("bad", bt.clone(), Exp::BinOp(B::LogOr, a, b));
                        self.let1(n, bt, Exp::UnOp(U::Not(PrimType::Bool), o))
                    }
                };
                val(r, PrimType::Bool)
            }
            "inf" | "nan" | "pi" | "e" | "epsilon" => {
                let f = ft.ok_or_else(|| internal(span, "float constant of an integer module"))?;
                let v = match n {
                    "inf" => f64::INFINITY,
                    "nan" => f64::NAN,
                    "pi" => std::f64::consts::PI,
                    "e" => std::f64::consts::E,
                    _ => match f {
                        FloatType::F16 => 0.0009765625,
                        FloatType::F32 => f32::EPSILON as f64,
                        FloatType::F64 => f64::EPSILON,
                    },
                };
                c(PrimValue::float(f, v))
            }
            "to_bits" => {
                let f = ft.ok_or_else(|| internal(span, "to_bits on an integer"))?;
                let ut = PrimType::Int(bits_type(f));
                val(
                    self.let1(n, Type::Prim(ut), Exp::Math(M::ToBits(f), vec![arg(0)?])),
                    ut,
                )
            }
            "from_bits" => {
                let f = ft.ok_or_else(|| internal(span, "from_bits on an integer"))?;
                val(
                    self.let1(n, tt.clone(), Exp::Math(M::FromBits(f), vec![arg(0)?])),
                    t,
                )
            }
            "mad" => {
                let p = bin(self, B::Mul(t), arg(0)?, arg(1)?);
                val(bin(self, B::Add(t), p, arg(2)?), t)
            }
            "from_fraction" => {
                let a = self.conv(arg(0)?, PrimType::I64, t);
                let b = self.conv(arg(1)?, PrimType::I64, t);
                val(bin(self, B::Div(t), a, b), t)
            }
            _ => {
                let f =
                    ft.ok_or_else(|| internal(span, &format!("unknown module function {m}.{n}")))?;
                let (mf, k) = float_fn(n, f)
                    .ok_or_else(|| internal(span, &format!("unknown module function {m}.{n}")))?;
                let xs = (0..k).map(arg).collect::<R<Vec<_>>>()?;
                val(self.let1(n, tt.clone(), Exp::Math(mf, xs)), t)
            }
        })
    }

    pub fn call_intrinsic(&mut self, n: &str, args: Vec<SV<'a>>, span: Span) -> R<SV<'a>> {
        let a = |i: usize| args.get(i).ok_or_else(|| internal(span, "intrinsic arity"));
        match n {
            "map" => self.soac_map(a(0)?, a(1)?, span),
            "reduce" => self.soac_reduce(a(0)?, a(1)?, a(2)?, false, span),
            "reduce_comm" => self.soac_reduce(a(0)?, a(1)?, a(2)?, true, span),
            "scan" => self.soac_scan(a(0)?, a(1)?, a(2)?, span),
            "reduce_by_index" => self.soac_reduce_by_index(a(0)?, a(1)?, a(2)?, a(3)?, a(4)?, span),
            "hist" => self.soac_hist(a(0)?, a(1)?, a(2)?, a(3)?, a(4)?, span),
            "scatter" => self.soac_scatter(a(0)?, a(1)?, a(2)?, 1, span),
            "scatter_2d" => self.soac_scatter(a(0)?, a(1)?, a(2)?, 2, span),
            "scatter_3d" => self.soac_scatter(a(0)?, a(1)?, a(2)?, 3, span),
            "intrinsics.scatter_stream" => self.acc_stream(a(0)?, None, a(1)?, a(2)?, span),
            "intrinsics.hist_stream" => {
                self.acc_stream(a(0)?, Some((a(1)?, a(2)?)), a(3)?, a(4)?, span)
            }
            "intrinsics.acc_write" => self.acc_write(a(0)?, a(1)?, a(2)?, span),
            "iota" => {
                let (k, t) = scalar(a(0)?, span)?;
                let k = self.i64_of(k, t);
                let ty = Type::array(PrimType::I64, vec![k.clone()]);
                let r = self.let1(
                    "iota",
                    ty.clone(),
                    Exp::Iota {
                        n: k,
                        start: SubExp::i64(0),
                        stride: SubExp::i64(1),
                        it: IntType::I64,
                    },
                );
                Ok(SV::Val(r, ty))
            }
            "replicate" => {
                let (k, t) = scalar(a(0)?, span)?;
                let k = self.i64_of(k, t);
                let x = a(1)?;
                if x.contains_fun() {
                    return Err(Diagnostic::not_supported(span, "arrays of functions"));
                }
                x.clone().with_unit_carrier().map_leaves(&mut |s, t| {
                    let ty = t.array_of(k.clone());
                    Ok((
                        self.let1(
                            "rep",
                            ty.clone(),
                            Exp::Replicate {
                                shape: vec![k.clone()],
                                value: s.clone(),
                            },
                        ),
                        ty,
                    ))
                })
            }
            "zip" => {
                let x = a(0)?.clone();
                let w = outer_dim(&x, span)?;
                let y = self.coerce_outer(a(1)?.clone(), &w, span)?;
                Ok(SV::Tuple(vec![x, y]))
            }
            "unzip" | "opaque" | "trace" => Ok(a(0)?.clone()),
            "copy" | "manifest" => self.copy_leaves(a(0)?, span),
            "length" => Ok(SV::Val(outer_dim(a(0)?, span)?, I64)),
            "transpose" => a(0)?.map_leaves(&mut |s, t| {
                let (elem, shape) = match t {
                    Type::Array { elem, shape } if shape.len() >= 2 => (*elem, shape),
                    _ => return Err(internal(span, "transpose of an array of rank < 2")),
                };
                let mut perm: Vec<usize> = (0..shape.len()).collect();
                perm.swap(0, 1);
                let mut ns = shape.clone();
                ns.swap(0, 1);
                let ty = Type::array(elem, ns);
                Ok((
                    self.let1("tr", ty.clone(), Exp::Rearrange(perm, arr_var(s, span)?)),
                    ty,
                ))
            }),
            "flatten" => a(0)?.map_leaves(&mut |s, t| {
                let (elem, shape) = match t {
                    Type::Array { elem, shape } if shape.len() >= 2 => (*elem, shape),
                    _ => return Err(internal(span, "flatten of an array of rank < 2")),
                };
                let nm = self.checked_size(
                    SizeArith::Mul,
                    shape[0].clone(),
                    shape[1].clone(),
                    "`flatten`",
                );
                let mut ns = vec![nm];
                ns.extend(shape[2..].iter().cloned());
                let ty = Type::array(elem, ns.clone());
                Ok((
                    self.let1("flat", ty.clone(), Exp::Reshape(ns, arr_var(s, span)?)),
                    ty,
                ))
            }),
            "unflatten" => {
                let (k, kt) = scalar(a(0)?, span)?;
                let (m, mt) = scalar(a(1)?, span)?;
                let k = self.i64_of(k, kt);
                let m = self.i64_of(m, mt);
                let xs = a(2)?.clone();
                let total = outer_dim(&xs, span)?;
                let km = self.checked_size(SizeArith::Mul, k.clone(), m.clone(), "`unflatten`");
                let ok = self.let1(
                    "ok",
                    Type::Prim(PrimType::Bool),
                    Exp::CmpOp(crate::ir::CmpOp::Eq(PrimType::I64), km, total),
                );
                self.assert(
                    ok,
                    "unflatten: the sizes do not match the array's size".to_string(),
                );
                xs.map_leaves(&mut |s, t| {
                    let (elem, shape) = match t {
                        Type::Array { elem, shape } => (*elem, shape),
                        _ => return Err(internal(span, "unflatten of a non-array")),
                    };
                    let mut ns = vec![k.clone(), m.clone()];
                    ns.extend(shape[1..].iter().cloned());
                    let ty = Type::array(elem, ns.clone());
                    Ok((
                        self.let1("unflat", ty.clone(), Exp::Reshape(ns, arr_var(s, span)?)),
                        ty,
                    ))
                })
            }
            "unflatten_3d" => self.unflatten_nd(&args, 3, span),
            "unflatten_4d" => self.unflatten_nd(&args, 4, span),
            "rep" => {
                let k = a(0)?.clone();
                self.call_intrinsic("replicate", vec![k, a(1)?.clone()], span)
            }
            "split" => {
                let (n, nt) = scalar(a(0)?, span)?;
                let (m, mt) = scalar(a(1)?, span)?;
                let n = self.i64_of(n, nt);
                let m = self.i64_of(m, mt);
                let xs = a(2)?.clone();
                let total = outer_dim(&xs, span)?;
                let nm = self.checked_size(SizeArith::Add, n.clone(), m.clone(), "`split`");
                let ok = self.let1(
                    "ok",
                    Type::Prim(PrimType::Bool),
                    Exp::CmpOp(crate::ir::CmpOp::Eq(PrimType::I64), nm, total),
                );
                self.assert(
                    ok,
                    "split: the sizes do not match the array's size".to_string(),
                );
                let front = DimIndex::Slice {
                    start: SubExp::i64(0),
                    len: n.clone(),
                    stride: SubExp::i64(1),
                };
                let back = DimIndex::Slice {
                    start: n.clone(),
                    len: m.clone(),
                    stride: SubExp::i64(1),
                };
                let x = self.index_with(&xs, &[front], &[n], span)?;
                let y = self.index_with(&xs, &[back], &[m], span)?;
                Ok(SV::Tuple(vec![x, y]))
            }
            ">->" => {
                let y = self.apply(a(0)?.clone(), vec![a(2)?.clone()], span)?;
                self.apply(a(1)?.clone(), vec![y], span)
            }
            "<-<" => {
                let y = self.apply(a(1)?.clone(), vec![a(2)?.clone()], span)?;
                self.apply(a(0)?.clone(), vec![y], span)
            }
            "concat" => self.concat(a(0)?.clone(), a(1)?.clone(), span),
            "reverse" => {
                let xs = a(0)?;
                let n = outer_dim(xs, span)?;
                let last = self.last_index(n.clone());
                let d = DimIndex::Slice {
                    start: last,
                    len: n.clone(),
                    stride: SubExp::i64(-1),
                };
                self.index_with(xs, &[d], &[n], span)
            }
            "rotate" => {
                let (r, rt) = scalar(a(0)?, span)?;
                let r = self.i64_of(r, rt);
                let xs = a(1)?.clone();
                let n = outer_dim(&xs, span)?;
                let iota_t = Type::array(PrimType::I64, vec![n.clone()]);
                let is = self.let1(
                    "is",
                    iota_t.clone(),
                    Exp::Iota {
                        n: n.clone(),
                        start: SubExp::i64(0),
                        stride: SubExp::i64(1),
                        it: IntType::I64,
                    },
                );
                let row_t = Type::Prim(PrimType::I64);
                let (lam, shape) = {
                    let i = self.names.fresh("i");
                    let (stms, res) = self.in_body(|s| {
                        let j = s.let1(
                            "j",
                            I64,
                            Exp::BinOp(B::Add(PrimType::I64), SubExp::Var(i.clone()), r.clone()),
                        );
                        let j = s.let1("j", I64, Exp::BinOp(B::Mod(PrimType::I64), j, n.clone()));
                        s.index_with(&xs, &[DimIndex::Fix(j)], &[], span)
                    })?;
                    let leaves = res.leaves();
                    (
                        crate::ir::Lambda {
                            params: vec![crate::ir::Param { name: i, ty: row_t }],
                            body: crate::ir::Body {
                                stms,
                                result: leaves.iter().map(|l| l.0.clone()).collect(),
                            },
                            ret: leaves.iter().map(|l| l.1.clone()).collect(),
                        },
                        res,
                    )
                };
                let tys: Vec<Type> = lam.ret.iter().map(|t| t.array_of(n.clone())).collect();
                let names = self.letn(
                    "rot",
                    tys.clone(),
                    Exp::Soac(Soac::Map {
                        w: n,
                        arrs: vec![arr_var(&is, span)?],
                        lam,
                    }),
                );
                Ok(shape.rebuild(&mut names.into_iter().map(SubExp::Var).zip(tys)))
            }
            "jvp" | "jvp2" => {
                self.lower_ad(super::ad::Mode::Fwd, a(0)?, a(1)?, a(2)?, n == "jvp2", span)
            }
            "vjp" | "vjp2" => {
                self.lower_ad(super::ad::Mode::Rev, a(0)?, a(1)?, a(2)?, n == "vjp2", span)
            }
            "with_vjp" => self.lower_with_vjp(a(0)?, a(1)?, a(2)?, span),
            _ => Err(internal(span, &format!("unknown intrinsic `{n}`"))),
        }
    }

    /// `unflatten_3d`/`unflatten_4d`: the `rank` inferred sizes, then the array; the product of
    /// the sizes must be the array's length (checked at run time, as in Futhark).
    fn unflatten_nd(&mut self, args: &[SV<'a>], rank: usize, span: Span) -> R<SV<'a>> {
        let a = |i: usize| args.get(i).ok_or_else(|| internal(span, "intrinsic arity"));
        let mut dims = vec![];
        for i in 0..rank {
            let (d, dt) = scalar(a(i)?, span)?;
            dims.push(self.i64_of(d, dt));
        }
        let xs = a(rank)?.clone();
        let total = outer_dim(&xs, span)?;
        let name = format!("unflatten_{rank}d");
        let what = format!("`{name}`");
        let mut prod = dims[0].clone();
        for d in &dims[1..] {
            prod = self.checked_size(SizeArith::Mul, prod, d.clone(), &what);
        }
        let ok = self.let1(
            "ok",
            Type::Prim(PrimType::Bool),
            Exp::CmpOp(crate::ir::CmpOp::Eq(PrimType::I64), prod, total),
        );
        self.assert(
            ok,
            format!("{name}: the sizes do not match the array's size"),
        );
        xs.map_leaves(&mut |s, t| {
            let (elem, shape) = match t {
                Type::Array { elem, shape } => (*elem, shape),
                _ => return Err(internal(span, "unflattening a non-array")),
            };
            let mut ns = dims.clone();
            ns.extend(shape[1..].iter().cloned());
            let ty = Type::array(elem, ns.clone());
            Ok((
                self.let1("unflat", ty.clone(), Exp::Reshape(ns, arr_var(s, span)?)),
                ty,
            ))
        })
    }

    /// `xs ++ ys` (each leaf concatenated along the outer dimension).
    pub fn concat(&mut self, x: SV<'a>, y: SV<'a>, span: Span) -> R<SV<'a>> {
        let (xl, yl) = (x.leaves(), y.leaves());
        if xl.len() != yl.len() || xl.is_empty() {
            return Err(internal(span, "concatenating arrays of different types"));
        }
        let mut out = vec![];
        for ((a, ta), (b, tb)) in xl.into_iter().zip(yl) {
            let (elem, sa) = match &ta {
                Type::Array { elem, shape } => (*elem, shape.clone()),
                _ => return Err(internal(span, "concatenating non-arrays")),
            };
            let sb = tb.shape().to_vec();
            if sb.len() != sa.len() {
                return Err(internal(span, "concatenating arrays of different ranks"));
            }
            let mut want = sa.clone();
            want[0] = sb[0].clone();
            let b = self.coerce(b, &tb, &want, span)?;
            let w = self.checked_size(
                SizeArith::Add,
                sa[0].clone(),
                sb[0].clone(),
                "concatenation",
            );
            let mut rs = sa.clone();
            rs[0] = w.clone();
            let ty = Type::array(elem, rs);
            let r = self.let1(
                "concat",
                ty.clone(),
                Exp::Concat {
                    dim: 0,
                    arrs: vec![arr_var(&a, span)?, arr_var(&b, span)?],
                    w,
                },
            );
            out.push((r, ty));
        }
        Ok(x.rebuild(&mut out.into_iter()))
    }
}
