//! Sum types and `match`.
//!
//! A value of a sum type `#a t1 | #b t2 t3` (constructors sorted by name) is represented as
//! Futhark does, by a tag and payloads: the tuple `(tag, (payload of #a), (payload of #b))`,
//! where `tag: i8` is the position of the value's constructor and the payloads of the other
//! constructors are *blank*: zeros, and arrays of zeros with every dimension 0. (Futhark also
//! shares payload components of the same type between constructors; vkad keeps one slot per
//! payload component, which costs memory but not time.) As every payload is always present and
//! blank where unused, two values are equal exactly when their representations are.
//!
//! `match v case p1 -> e1 case p2 -> e2 ...` is lowered to `if c1 then e1 else if c2 then e2
//! ... else en`, where `ci` tests the tags and literals of pattern `pi` against `v`; the type
//! checker has ensured that the cases are exhaustive, so the last case needs no test.

use super::env::{Env, SV};
use super::expr::{record_pat_fields, scalar};
use super::types::{resolve_tyvars, stype_to_sv};
use super::{internal, Lowerer, R};
use crate::diag::{Diagnostic, Span};
use crate::ir::{Exp, SubExp, Type};
use crate::prim::{IntType, PrimType, PrimValue};
use crate::syntax::ast::{BinOp, Expr, Literal, Pat, PatKind};
use crate::syntax::types::Type as SType;

/// The type of a sum value's tag.
pub(crate) const TAG: IntType = IntType::I8;

/// A sum type's constructors with their payload types.
type Constructors = Vec<(String, Vec<SType>)>;

/// The constructors of the sum type `t` (following type variables bound in `env`) and the
/// position of constructor `c` among them.
fn constructors(env: &Env<'_>, t: Option<&SType>, c: &str, span: Span) -> R<(Constructors, usize)> {
    let Some(SType::Sum(cs)) = resolve_tyvars(env, t) else {
        return Err(internal(
            span,
            "constructor of a value whose type is not a sum",
        ));
    };
    let k = cs
        .iter()
        .position(|(d, _)| d == c)
        .ok_or_else(|| internal(span, "constructor not in its type"))?;
    Ok((cs, k))
}

/// The tag of the constructor at position `k`.
pub(crate) fn tag<'a>(k: usize) -> SV<'a> {
    SV::Val(
        SubExp::Const(PrimValue::int(TAG, k as i128)),
        Type::Prim(PrimType::Int(TAG)),
    )
}

impl<'a> Lowerer<'a> {
    /// A blank value of type `t`: zeros, with every array dimension 0.
    fn blank(&mut self, env: &Env<'a>, t: &SType, span: Span) -> R<SV<'a>> {
        let template = stype_to_sv(env, t, &mut |_| Ok(SubExp::i64(0)))?;
        template.map_leaves(&mut |_, lt| match lt {
            Type::Prim(p) => Ok((SubExp::Const(PrimValue::zero(*p)), lt.clone())),
            Type::Array { elem, shape } => {
                let v = self.let1(
                    "blank",
                    lt.clone(),
                    Exp::Replicate {
                        shape: shape.clone(),
                        value: SubExp::Const(PrimValue::zero(*elem)),
                    },
                );
                Ok((v, lt.clone()))
            }
            Type::Acc { .. } => Err(Diagnostic::not_supported(
                span,
                "accumulators in the payload of a sum type",
            )),
        })
    }

    /// `#c e1 e2 ...` of type `e.ty`.
    pub(crate) fn lower_constr(
        &mut self,
        env: &Env<'a>,
        e: &'a Expr,
        c: &str,
        args: &'a [Expr],
    ) -> R<SV<'a>> {
        let (cs, k) = constructors(env, e.ty.as_ref(), c, e.span)?;
        let mut parts = vec![tag(k)];
        for (j, (_, payload)) in cs.iter().enumerate() {
            let mut vals = vec![];
            if j == k {
                for a in args {
                    vals.push(self.lower_expr(env, a)?);
                }
            } else {
                for t in payload {
                    vals.push(self.blank(env, t, e.span)?);
                }
            }
            parts.push(SV::Tuple(vals));
        }
        Ok(SV::Tuple(parts))
    }

    /// `match scrutinee case ...`.
    pub(crate) fn lower_match(
        &mut self,
        env: &Env<'a>,
        scrutinee: &'a Expr,
        cases: &'a [(Pat, Expr)],
        span: Span,
    ) -> R<SV<'a>> {
        let v = self.lower_expr(env, scrutinee)?;
        self.lower_cases(env, &v, cases, span)
    }

    fn lower_cases(
        &mut self,
        env: &Env<'a>,
        v: &SV<'a>,
        cases: &'a [(Pat, Expr)],
        span: Span,
    ) -> R<SV<'a>> {
        let Some(((pat, body), rest)) = cases.split_first() else {
            return Err(internal(span, "`match` without cases"));
        };
        let cond = if rest.is_empty() {
            None
        } else {
            self.match_cond(env, pat, v)?
        };
        let Some(cond) = cond else {
            let env2 = self.bind_pat(env, pat, v.clone())?;
            return self.lower_expr(&env2, body);
        };
        let (ts, tv) = self.in_body(|s| {
            let env2 = s.bind_pat(env, pat, v.clone())?;
            s.lower_expr(&env2, body)
        })?;
        let (fs, fv) = self.in_body(|s| s.lower_cases(env, v, rest, span))?;
        self.join_if(cond, ts, tv, fs, fv, span)
    }

    /// Whether `v` matches `p`, as a boolean; `None` when it always does.
    fn match_cond(&mut self, env: &Env<'a>, p: &'a Pat, v: &SV<'a>) -> R<Option<SubExp>> {
        match &p.kind {
            PatKind::Id(_) | PatKind::Wildcard => Ok(None),
            PatKind::Ascribed(q, _) | PatKind::Attr(_, q) => self.match_cond(env, q, v),
            PatKind::Tuple(ps) if ps.len() == 1 => self.match_cond(env, &ps[0], v),
            PatKind::Tuple(ps) => match v {
                SV::Tuple(vs) if vs.len() == ps.len() => {
                    let pairs: Vec<(&'a Pat, SV<'a>)> = ps.iter().zip(vs.iter().cloned()).collect();
                    self.conjunction(env, pairs, p.span)
                }
                _ => Err(internal(p.span, "tuple pattern does not match the value")),
            },
            PatKind::Record(fs) => {
                let pairs = record_pat_fields(fs, v.clone(), p.span)?;
                self.conjunction(env, pairs, p.span)
            }
            PatKind::Constr(c, ps) => {
                let (_, k) = constructors(env, p.ty.as_ref(), c, p.span)?;
                let SV::Tuple(parts) = v else {
                    return Err(internal(p.span, "sum value is not a tuple"));
                };
                let payload = match parts.get(k + 1) {
                    Some(SV::Tuple(vs)) if vs.len() == ps.len() => vs.clone(),
                    _ => return Err(internal(p.span, "sum payload does not match the pattern")),
                };
                let (t, _) = scalar(&parts[0], p.span)?;
                let tag_t = Type::Prim(PrimType::Int(TAG));
                let is_c = self.binop(BinOp::Eq, SV::Val(t, tag_t), tag(k), p.span)?;
                let (is_c, _) = scalar(&is_c, p.span)?;
                let pairs: Vec<(&'a Pat, SV<'a>)> = ps.iter().zip(payload).collect();
                let rest = self.conjunction(env, pairs, p.span)?;
                Ok(Some(
                    self.and(Some(is_c), rest, p.span)?
                        .unwrap_or(SubExp::Const(PrimValue::Bool(true))),
                ))
            }
            PatKind::Lit(l, neg) => {
                let (x, t) = scalar(v, p.span)?;
                let lit = literal_value(l, *neg, t)
                    .ok_or_else(|| internal(p.span, "literal pattern of the wrong type"))?;
                let c = self.binop(
                    BinOp::Eq,
                    SV::Val(x, Type::Prim(t)),
                    SV::Val(SubExp::Const(lit), Type::Prim(t)),
                    p.span,
                )?;
                Ok(Some(scalar(&c, p.span)?.0))
            }
        }
    }

    /// The conjunction of the match conditions of several subpatterns.
    fn conjunction(
        &mut self,
        env: &Env<'a>,
        pairs: Vec<(&'a Pat, SV<'a>)>,
        span: Span,
    ) -> R<Option<SubExp>> {
        let mut acc = None;
        for (q, w) in pairs {
            let c = self.match_cond(env, q, &w)?;
            acc = self.and(acc, c, span)?;
        }
        Ok(acc)
    }

    fn and(&mut self, a: Option<SubExp>, b: Option<SubExp>, span: Span) -> R<Option<SubExp>> {
        Ok(match (a, b) {
            (Some(a), Some(b)) => {
                let bool_t = Type::Prim(PrimType::Bool);
                let c = self.binop(
                    BinOp::LogAnd,
                    SV::Val(a, bool_t.clone()),
                    SV::Val(b, bool_t),
                    span,
                )?;
                Some(scalar(&c, span)?.0)
            }
            (a, None) => a,
            (None, b) => b,
        })
    }

    /// Binds the payload patterns of constructor pattern `#c ps` (of type `t`) to the payload of
    /// `v`.
    pub(crate) fn bind_constr(
        &mut self,
        env: &Env<'a>,
        p: &'a Pat,
        c: &str,
        ps: &'a [Pat],
        v: SV<'a>,
    ) -> R<Env<'a>> {
        let (_, k) = constructors(env, p.ty.as_ref(), c, p.span)?;
        let payload = match v {
            SV::Tuple(mut parts) if k + 1 < parts.len() => parts.swap_remove(k + 1),
            _ => return Err(internal(p.span, "sum value is not a tuple")),
        };
        match payload {
            SV::Tuple(vs) if vs.len() == ps.len() => {
                let mut env = env.clone();
                for (q, w) in ps.iter().zip(vs) {
                    env = self.bind_pat(&env, q, w)?;
                }
                Ok(env)
            }
            _ => Err(internal(p.span, "sum payload does not match the pattern")),
        }
    }
}

/// The value of a literal pattern at type `t` (negated when `neg`).
fn literal_value(l: &Literal, neg: bool, t: PrimType) -> Option<PrimValue> {
    let v = match (l, t) {
        (Literal::Bool(b), PrimType::Bool) => return Some(PrimValue::Bool(*b)),
        (Literal::Int(v, _), PrimType::Int(it)) => {
            let v = *v as i128;
            PrimValue::int(it, if neg { -v } else { v })
        }
        (Literal::Int(v, _), PrimType::Float(ft)) => {
            let v = *v as f64;
            PrimValue::float(ft, if neg { -v } else { v })
        }
        (Literal::Float(v, _), PrimType::Float(ft)) => {
            PrimValue::float(ft, if neg { -*v } else { *v })
        }
        _ => return None,
    };
    Some(v)
}
