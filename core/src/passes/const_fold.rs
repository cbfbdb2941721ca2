//! Constant folding and algebraic simplification.
//!
//! - Scalar operations (`UnOp`, `BinOp`, `CmpOp`, `Conv`, `Math`) whose operands are all constants
//!   are evaluated with [`crate::primops`]. An operation whose evaluation fails (integer division by
//!   zero, a negative integer exponent, ...) is left alone, so that it fails at run time.
//! - Identities: for integers `x+0`, `0+x`, `x-0`, `x-x`, `x*1`, `1*x`, `x*0`, `0*x`, `x/1`,
//!   `x//1`, `x%1`, `x%%1`, `x**1`, `x**0`, `x|0`, `x^0`, `x&0`, `x<<0`, `x>>0`, `x>>>0`;
//!   for floats only those exact for every value including `-0.0` and NaN: `x*1`, `1*x`, `x/1`,
//!   `x-0.0`, `x+(-0.0)`; `min x x`, `max x x`; for bools `true && x`, `false && x`, `x || false`,
//!   ...; `x == x`, `x <= x`, `x < x` for integers and bools; conversions to the same type.
//! - `if true`/`if false` are replaced by the statements of the branch taken; an `if` whose branches
//!   have no statements and the same results is replaced by them.
//! - A `for` loop with a constant bound `<= 0`, or a `while` loop whose condition starts `false`,
//!   is replaced by its initial values; a `for` loop with bound `1` is unrolled.
//! - `assert(true, ...)` is removed.
//!
//! Results become copies (`let x = 3i32`), which [`copy_prop`](super::copy_prop) then propagates.

use super::traverse::{map_bodies_in, mk_stm};
use crate::ir::*;
use crate::prim::{PrimType, PrimValue};
use crate::primops::{eval_binop, eval_cmpop, eval_conv, eval_math, eval_unop};

/// Folds constants in every function.
pub fn const_fold(mut p: Program) -> Program {
    for f in &mut p.funs {
        map_bodies_in(&mut f.body, &mut fold_body);
    }
    p
}

fn fold_body(b: &mut Body) {
    let mut out = Vec::with_capacity(b.stms.len());
    for s in std::mem::take(&mut b.stms) {
        fold_stm(s, &mut out);
    }
    b.stms = out;
}

fn konst(s: &SubExp) -> Option<PrimValue> {
    match s {
        SubExp::Const(v) => Some(*v),
        SubExp::Var(_) => None,
    }
}

fn is_int(s: &SubExp, k: i128) -> bool {
    konst(s).and_then(|v| v.as_i128()) == Some(k)
}

fn is_float(s: &SubExp, k: f64) -> bool {
    konst(s)
        .and_then(|v| v.as_f64())
        .is_some_and(|x| x == k && x.is_sign_negative() == k.is_sign_negative())
}

fn is_bool(s: &SubExp, b: bool) -> bool {
    konst(s).and_then(|v| v.as_bool()) == Some(b)
}

fn copies(pat: &Pat, vals: &[SubExp], stm: &Stm, out: &mut Vec<Stm>) {
    for (pe, v) in pat.elems.iter().zip(vals) {
        let mut s = mk_stm(vec![pe.clone()], Exp::SubExp(v.clone()));
        s.loc = stm.loc.clone();
        out.push(s);
    }
}

fn fold_stm(mut s: Stm, out: &mut Vec<Stm>) {
    match &mut s.exp {
        Exp::Assert { cond, .. } if is_bool(cond, true) => {}
        Exp::If {
            cond,
            then_b,
            else_b,
            ..
        } if konst(cond).is_some()
            || (then_b.stms.is_empty()
                && else_b.stms.is_empty()
                && then_b.result == else_b.result) =>
        {
            let take_then = konst(cond).and_then(|c| c.as_bool()).unwrap_or(true);
            let b = std::mem::replace(
                if take_then { then_b } else { else_b },
                Body {
                    stms: vec![],
                    result: vec![],
                },
            );
            out.extend(b.stms);
            copies(&s.pat, &b.result, &s, out);
        }
        Exp::Loop { params, form, body } => {
            let iterations = match form {
                LoopForm::For { bound, .. } => konst(bound).and_then(|v| v.as_i128()),
                LoopForm::While(c) => {
                    let init = params.iter().find(|(p, _)| &p.name == c).map(|(_, i)| i);
                    match init {
                        Some(i) if is_bool(i, false) => Some(0),
                        _ => None,
                    }
                }
            };
            match (iterations, &*form) {
                (Some(n), _) if n <= 0 => {
                    let inits: Vec<SubExp> = params.iter().map(|(_, i)| i.clone()).collect();
                    copies(&s.pat, &inits, &s, out);
                }
                (Some(1), LoopForm::For { i, it, .. }) => {
                    for (p, init) in params.iter() {
                        out.push(mk_stm(vec![p.clone()], Exp::SubExp(init.clone())));
                    }
                    out.push(mk_stm(
                        vec![Param {
                            name: i.clone(),
                            ty: Type::Prim(PrimType::Int(*it)),
                        }],
                        Exp::SubExp(SubExp::Const(PrimValue::int(*it, 0))),
                    ));
                    let b = std::mem::replace(
                        body,
                        Body {
                            stms: vec![],
                            result: vec![],
                        },
                    );
                    out.extend(b.stms);
                    copies(&s.pat, &b.result, &s, out);
                }
                _ => out.push(s),
            }
        }
        e => {
            if let Some(new) = fold_exp(e) {
                s.exp = new;
            }
            out.push(s);
        }
    }
}

/// The simplified form of a scalar expression, if any.
fn fold_exp(e: &Exp) -> Option<Exp> {
    let c = |v: PrimValue| Some(Exp::SubExp(SubExp::Const(v)));
    match e {
        Exp::UnOp(op, x) => eval_unop(*op, konst(x)?).ok().and_then(c),
        Exp::Conv(op, x) => {
            if let Some(v) = konst(x) {
                return eval_conv(*op, v).ok().and_then(c);
            }
            (op.from == op.to).then(|| Exp::SubExp(x.clone()))
        }
        Exp::Math(m, args) => {
            let vs: Option<Vec<PrimValue>> = args.iter().map(konst).collect();
            eval_math(*m, &vs?).ok().and_then(c)
        }
        Exp::CmpOp(op, a, b) => {
            if let (Some(x), Some(y)) = (konst(a), konst(b)) {
                return eval_cmpop(*op, x, y)
                    .ok()
                    .and_then(|r| c(PrimValue::Bool(r)));
            }
            let t = match op {
                CmpOp::Eq(t) | CmpOp::Lt(t) | CmpOp::Le(t) => *t,
            };
            if a == b && !matches!(t, PrimType::Float(_)) {
                return c(PrimValue::Bool(!matches!(op, CmpOp::Lt(_))));
            }
            None
        }
        Exp::BinOp(op, a, b) => {
            if let (Some(x), Some(y)) = (konst(a), konst(b)) {
                return eval_binop(*op, x, y).ok().and_then(c);
            }
            simplify_binop(*op, a, b)
        }
        _ => None,
    }
}

fn simplify_binop(op: BinOp, a: &SubExp, b: &SubExp) -> Option<Exp> {
    use BinOp::*;
    let same = |x: &SubExp| Some(Exp::SubExp(x.clone()));
    let zero = |t: PrimType| Some(Exp::SubExp(SubExp::Const(PrimValue::zero(t))));
    let one = |t: PrimType| match t {
        PrimType::Int(it) => Some(Exp::SubExp(SubExp::Const(PrimValue::int(it, 1)))),
        _ => None,
    };
    let int_t = |t: PrimType| matches!(t, PrimType::Int(_));
    let float_t = |t: PrimType| matches!(t, PrimType::Float(_));
    match op {
        Add(t) if int_t(t) && is_int(b, 0) => same(a),
        Add(t) if int_t(t) && is_int(a, 0) => same(b),
        Add(t) if float_t(t) && is_float(b, -0.0) => same(a),
        Add(t) if float_t(t) && is_float(a, -0.0) => same(b),
        Sub(t) if int_t(t) && is_int(b, 0) => same(a),
        Sub(t) if int_t(t) && a == b => zero(t),
        Sub(t) if float_t(t) && is_float(b, 0.0) => same(a),
        Mul(t) if int_t(t) && (is_int(a, 0) || is_int(b, 0)) => zero(t),
        Mul(t) if int_t(t) && is_int(b, 1) => same(a),
        Mul(t) if int_t(t) && is_int(a, 1) => same(b),
        Mul(t) if float_t(t) && is_float(b, 1.0) => same(a),
        Mul(t) if float_t(t) && is_float(a, 1.0) => same(b),
        Div(t) if int_t(t) && is_int(b, 1) => same(a),
        Div(t) if float_t(t) && is_float(b, 1.0) => same(a),
        Quot(_) if is_int(b, 1) => same(a),
        Mod(t) if int_t(t) && is_int(b, 1) => zero(t),
        Rem(it) if is_int(b, 1) => zero(PrimType::Int(it)),
        Pow(t) if int_t(t) && is_int(b, 1) => same(a),
        Pow(t) if int_t(t) && is_int(b, 0) => one(t),
        Or(t) if int_t(t) && is_int(b, 0) => same(a),
        Or(t) if int_t(t) && is_int(a, 0) => same(b),
        Xor(_) if is_int(b, 0) => same(a),
        Xor(_) if is_int(a, 0) => same(b),
        And(t) if int_t(t) && (is_int(a, 0) || is_int(b, 0)) => zero(t),
        Shl(_) | Shr(_) | UShr(_) if is_int(b, 0) => same(a),
        Min(_) | Max(_) if a == b => same(a),
        LogAnd | And(PrimType::Bool) if is_bool(a, true) => same(b),
        LogAnd | And(PrimType::Bool) if is_bool(b, true) => same(a),
        LogAnd | And(PrimType::Bool) if is_bool(a, false) || is_bool(b, false) => {
            zero(PrimType::Bool)
        }
        LogOr | Or(PrimType::Bool) if is_bool(a, false) => same(b),
        LogOr | Or(PrimType::Bool) if is_bool(b, false) => same(a),
        LogOr | Or(PrimType::Bool) if is_bool(a, true) || is_bool(b, true) => {
            Some(Exp::SubExp(SubExp::Const(PrimValue::Bool(true))))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::*;
    use crate::ir::check::check_program;
    use crate::prim::IntType;

    fn i32t() -> Type {
        Type::Prim(PrimType::I32)
    }

    fn one_fun(
        params: &[(&str, Type)],
        ret: Vec<Type>,
        f: impl FnOnce(&mut Builder, &[VName]) -> Vec<SubExp>,
    ) -> Program {
        let mut ns = NameSource::default();
        let fd = fun(&mut ns, "main", true, &[], params, ret, f);
        let p = program(ns, vec![fd]);
        check_program(&p).unwrap();
        p
    }

    fn exps(p: &Program) -> Vec<Exp> {
        p.funs[0].body.stms.iter().map(|s| s.exp.clone()).collect()
    }

    #[test]
    fn folds_constant_operations() {
        let p = one_fun(
            &[],
            vec![i32t(), Type::Prim(PrimType::Bool), f32t(), f32t()],
            |b, _| {
                let a = b.binop(BinOp::Add(PrimType::I32), i32c(2), i32c(3));
                let c = b.cmp(CmpOp::Lt(PrimType::I32), i32c(2), i32c(3));
                let s = b.math(MathFn::Sqrt(crate::prim::FloatType::F32), vec![f32c(4.0)]);
                let v = b.conv(PrimType::I32, PrimType::F32, i32c(7));
                vec![var(&a), var(&c), var(&s), var(&v)]
            },
        );
        let q = const_fold(p);
        check_program(&q).unwrap();
        assert_eq!(
            exps(&q),
            vec![
                Exp::SubExp(i32c(5)),
                Exp::SubExp(boolc(true)),
                Exp::SubExp(f32c(2.0)),
                Exp::SubExp(f32c(7.0))
            ]
        );
    }

    #[test]
    fn never_folds_failing_operations() {
        let p = one_fun(&[], vec![i32t(), i32t()], |b, _| {
            let a = b.binop(BinOp::Div(PrimType::I32), i32c(1), i32c(0));
            let c = b.binop(BinOp::Pow(PrimType::I32), i32c(2), i32c(-1));
            vec![var(&a), var(&c)]
        });
        let before = exps(&p);
        let q = const_fold(p);
        check_program(&q).unwrap();
        assert_eq!(exps(&q), before);
    }

    #[test]
    fn algebraic_identities_respect_floats() {
        let p = one_fun(
            &[("x", i32t()), ("y", f32t())],
            vec![i32t(), i32t(), f32t(), f32t(), i32t()],
            |b, ps| {
                let x = var(&ps[0]);
                let y = var(&ps[1]);
                let a = b.binop(BinOp::Add(PrimType::I32), x.clone(), i32c(0));
                let m = b.binop(BinOp::Mul(PrimType::I32), i32c(0), x.clone());
                let fadd = b.binop(BinOp::Add(PrimType::F32), y.clone(), f32c(0.0));
                let fmul = b.binop(BinOp::Mul(PrimType::F32), y.clone(), f32c(1.0));
                let s = b.binop(BinOp::Sub(PrimType::I32), x.clone(), x.clone());
                vec![var(&a), var(&m), var(&fadd), var(&fmul), var(&s)]
            },
        );
        let q = const_fold(p);
        check_program(&q).unwrap();
        let e = exps(&q);
        let x = SubExp::Var(q.funs[0].params[0].name.clone());
        let y = SubExp::Var(q.funs[0].params[1].name.clone());
        assert_eq!(e[0], Exp::SubExp(x));
        assert_eq!(e[1], Exp::SubExp(i32c(0)));
        // x + 0.0 is not x for x = -0.0: kept.
        assert_eq!(
            e[2],
            Exp::BinOp(BinOp::Add(PrimType::F32), y.clone(), f32c(0.0))
        );
        assert_eq!(e[3], Exp::SubExp(y));
        assert_eq!(e[4], Exp::SubExp(i32c(0)));
    }

    #[test]
    fn constant_if_takes_the_branch() {
        let p = one_fun(&[("x", i32t())], vec![i32t()], |b, ps| {
            let x = ps[0].clone();
            let then_b = b.body(|b| {
                let r = b.binop(BinOp::Mul(PrimType::I32), var(&x), i32c(2));
                vec![var(&r)]
            });
            let else_b = b.body(|_| vec![i32c(0)]);
            let r = b.bind(
                "r",
                i32t(),
                Exp::If {
                    cond: boolc(true),
                    then_b,
                    else_b,
                    ret: vec![i32t().to_ext()],
                },
            );
            vec![var(&r)]
        });
        let q = const_fold(p);
        check_program(&q).unwrap();
        let e = exps(&q);
        assert_eq!(e.len(), 2);
        assert!(matches!(e[0], Exp::BinOp(BinOp::Mul(_), _, _)));
        assert!(matches!(e[1], Exp::SubExp(SubExp::Var(_))));
    }

    fn loop_prog(bound: i64) -> Program {
        one_fun(&[("x", i32t())], vec![i32t()], |b, ps| {
            let acc = b.param("acc", i32t());
            let i = b.fresh("i");
            let accn = acc.name.clone();
            let body = b.body(|b| {
                let r = b.binop(BinOp::Add(PrimType::I32), var(&accn), i32c(1));
                vec![var(&r)]
            });
            let r = b.bind(
                "r",
                i32t(),
                Exp::Loop {
                    params: vec![(acc, var(&ps[0]))],
                    form: LoopForm::For {
                        i,
                        it: IntType::I64,
                        bound: i64c(bound),
                    },
                    body,
                },
            );
            vec![var(&r)]
        })
    }

    #[test]
    fn loops_of_zero_and_one_iterations() {
        let q = const_fold(loop_prog(0));
        check_program(&q).unwrap();
        let x = SubExp::Var(q.funs[0].params[0].name.clone());
        assert_eq!(exps(&q), vec![Exp::SubExp(x)]);
        let q = const_fold(loop_prog(1));
        check_program(&q).unwrap();
        assert_eq!(exps(&q).len(), 4);
        assert!(matches!(exps(&q)[2], Exp::BinOp(..)));
        let q = const_fold(loop_prog(5));
        assert!(matches!(exps(&q)[0], Exp::Loop { .. }));
    }

    #[test]
    fn removes_true_asserts_only() {
        let p = one_fun(&[("c", Type::Prim(PrimType::Bool))], vec![], |b, ps| {
            b.assert(boolc(true), "fine");
            b.assert(boolc(false), "fails");
            b.assert(var(&ps[0]), "maybe");
            vec![]
        });
        let q = const_fold(p);
        check_program(&q).unwrap();
        assert_eq!(exps(&q).len(), 2);
    }
}
