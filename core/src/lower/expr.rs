//! Lowering of expressions: names, application (inlining), patterns, `if`, `loop`, indexing,
//! updates, ranges, literals and operators.

use super::env::{Env, Found, FunVal, Head, SV};
use super::types::{outer_dim, scope_dim, stype_to_sv};
use super::{attr_text, internal, Lowerer, SizeArith, MAX_INLINE_DEPTH, MAX_LOWERED_NAMES, R};
use crate::diag::{Diagnostic, Span, SrcLoc};
use crate::ir::{
    self, Body, ConvOp, DimIndex as IrDim, Exp, ExtDim, ExtType, LoopForm as IrLoopForm, Param,
    Stm, SubExp, Type, UnOp as IrUnOp, VName,
};
use crate::prim::{IntType, PrimType, PrimValue};
use crate::syntax::ast::{
    BinOp, DimIndex, Expr, ExprKind, Literal, LoopForm, OpRef, Pat, PatKind, RangeKind, TypeExp,
    TypeParam, UnOp, ValDec,
};
use crate::syntax::types::{field_order, Size, SizeOp, Type as SType};
use std::collections::HashSet;
use std::rc::Rc;

const BOOL: Type = Type::Prim(PrimType::Bool);
const I64: Type = Type::Prim(PrimType::Int(IntType::I64));

pub(crate) fn bool_c(b: bool) -> SubExp {
    SubExp::Const(PrimValue::Bool(b))
}

/// Names bound by the top-level statements of a body.
pub(crate) fn bound_names(stms: &[Stm]) -> HashSet<VName> {
    stms.iter()
        .flat_map(|s| s.pat.elems.iter().map(|p| p.name.clone()))
        .collect()
}

/// Whether evaluating the statements can never fail (so `&&`/`||` need not short-circuit).
fn safe_stms(stms: &[Stm]) -> bool {
    use crate::ir::BinOp as B;
    stms.iter().all(|s| match &s.exp {
        Exp::SubExp(_) | Exp::UnOp(..) | Exp::CmpOp(..) | Exp::Conv(..) => true,
        Exp::BinOp(op, _, _) => !matches!(
            op,
            B::Div(PrimType::Int(_))
                | B::Mod(PrimType::Int(_))
                | B::Quot(_)
                | B::Rem(_)
                | B::Pow(PrimType::Int(_))
        ),
        _ => false,
    })
}

impl<'a> Lowerer<'a> {
    /// Lowers `e`; the statements it makes carry its location, except inside an inlined
    /// prelude function called from the user's code: there they carry the location of the
    /// user's expression, so that a run-time error in `map2`'s size check, a kernel in a
    /// profile or a scope in the AD report points at the user's call, not at `<prelude>`.
    pub fn lower_expr(&mut self, env: &Env<'a>, e: &'a Expr) -> R<SV<'a>> {
        let loc = self.loc_of(e.span);
        let in_user_code = |l: &SrcLoc| &*l.file != crate::PRELUDE_NAME;
        let keep = &*loc.file == crate::PRELUDE_NAME && self.loc.as_ref().is_some_and(in_user_code);
        let saved = if keep {
            self.loc.clone()
        } else {
            self.loc.replace(loc)
        };
        let r = self.lower_expr_inner(env, e);
        self.loc = saved;
        if let Ok(SV::Val(s, Type::Prim(PrimType::Int(IntType::I64)))) = &r {
            // The value of the size `Size::Expr` at this span, if one names it.
            let frame = *self.frames.last().unwrap_or(&0);
            self.size_exprs.insert(e.span, (s.clone(), frame));
        }
        r
    }

    /// Evaluates the expressions given as sizes in a coercion's or ascription's type
    /// (`a :> [opaque 1 * b][b]t`), after the value: their values are the sizes
    /// ([`crate::syntax::types::Size::Expr`]) that the coercion checks and the result has.
    fn lower_size_exprs(&mut self, env: &Env<'a>, te: &'a TypeExp) -> R<()> {
        for e in te.size_exprs() {
            self.lower_expr(env, e)?;
        }
        Ok(())
    }

    /// Lowers a scalar expression.
    pub fn lower_scalar(&mut self, env: &Env<'a>, e: &'a Expr) -> R<(SubExp, PrimType)> {
        let v = self.lower_expr(env, e)?;
        scalar(&v, e.span)
    }

    /// The primitive type of an expression (resolving type variables).
    fn prim_type_of(&self, env: &Env<'a>, e: &Expr) -> Option<PrimType> {
        match &e.ty {
            Some(SType::Prim(p)) => Some(*p),
            Some(SType::Var(v)) => match env.lookup_tyvar(&v.0) {
                Some(SType::Prim(p)) => Some(p),
                _ => None,
            },
            _ => None,
        }
    }

    fn lower_expr_inner(&mut self, env: &Env<'a>, e: &'a Expr) -> R<SV<'a>> {
        let span = e.span;
        match &e.kind {
            ExprKind::Lit(l) => {
                let t = self.prim_type_of(env, e);
                let v = match (l, t) {
                    (Literal::Bool(b), _) => PrimValue::Bool(*b),
                    (Literal::Int(v, _), Some(PrimType::Int(it))) => PrimValue::int(it, *v as i128),
                    (Literal::Int(v, _), Some(PrimType::Float(ft))) => {
                        PrimValue::float(ft, *v as f64)
                    }
                    (Literal::Int(v, Some(PrimType::Int(it))), None) => {
                        PrimValue::int(*it, *v as i128)
                    }
                    (Literal::Int(v, Some(PrimType::Float(ft))), None) => {
                        PrimValue::float(*ft, *v as f64)
                    }
                    (Literal::Int(v, _), None) => PrimValue::int(IntType::I32, *v as i128),
                    (Literal::Float(f, _), Some(PrimType::Float(ft))) => PrimValue::float(ft, *f),
                    (Literal::Float(f, Some(PrimType::Float(ft))), None) => {
                        PrimValue::float(*ft, *f)
                    }
                    (Literal::Float(f, _), None) => PrimValue::F64(*f),
                    _ => return Err(internal(span, "literal of a non-numeric type")),
                };
                Ok(SV::Val(SubExp::Const(v), Type::Prim(v.prim_type())))
            }
            ExprKind::Var(q) => {
                let v = self.resolve(env, q, span)?;
                self.with_inferred_sizes(env, v, e)
            }
            ExprKind::Tuple(es) => Ok(SV::Tuple(
                es.iter()
                    .map(|x| self.lower_expr(env, x))
                    .collect::<R<_>>()?,
            )),
            ExprKind::ArrayLit(es) => self.lower_array_lit(env, es, e),
            ExprKind::Range {
                start,
                second,
                end,
                kind,
            } => self.lower_range(env, start, second.as_deref(), end, *kind, span),
            ExprKind::BinOp(op, a, b) => match op {
                OpRef::Builtin(o @ (BinOp::LogAnd | BinOp::LogOr)) => {
                    self.short_circuit(env, *o, a, b)
                }
                OpRef::Builtin(BinOp::PipeRight) => {
                    let x = self.lower_expr(env, a)?;
                    let f = self.lower_expr(env, b)?;
                    self.apply(f, vec![x], span)
                }
                OpRef::Builtin(BinOp::PipeLeft) => {
                    let f = self.lower_expr(env, a)?;
                    let x = self.lower_expr(env, b)?;
                    self.apply(f, vec![x], span)
                }
                OpRef::Builtin(o) => {
                    let x = self.lower_expr(env, a)?;
                    let y = self.lower_expr(env, b)?;
                    self.binop(*o, x, y, span)
                }
                OpRef::Fun(f) => {
                    let f = self.lower_expr(env, f)?;
                    let x = self.lower_expr(env, a)?;
                    let y = self.lower_expr(env, b)?;
                    self.apply(f, vec![x, y], span)
                }
            },
            ExprKind::UnOp(op, x) => {
                let (s, t) = self.lower_scalar(env, x)?;
                Ok(SV::Val(self.unop(*op, s, t, span)?, Type::Prim(t)))
            }
            ExprKind::Apply(f, args) => {
                let fv = self.lower_expr(env, f)?;
                let args = args
                    .iter()
                    .map(|a| self.lower_expr(env, a))
                    .collect::<R<Vec<_>>>()?;
                self.apply(fv, args, span)
            }
            ExprKind::Lambda { params, body, .. } => Ok(SV::fun(Head::Closure {
                params,
                tparams: &[],
                body,
                env: env.clone(),
            })),
            ExprKind::OpSection(op) => self.op_value(env, op, span),
            ExprKind::LeftSection(op, x) => {
                let f = self.op_value(env, op, span)?;
                let x = self.lower_expr(env, x)?;
                self.apply(f, vec![x], span)
            }
            ExprKind::RightSection(op, y) => {
                let f = self.op_value(env, op, span)?;
                let y = self.lower_expr(env, y)?;
                Ok(SV::fun(Head::RightSection(Box::new(f), Box::new(y))))
            }
            ExprKind::ProjectSection(fs) => {
                let mut t = match e.ty.as_ref() {
                    Some(SType::Fun(a, _)) => Some((**a).clone()),
                    _ => None,
                };
                let mut path = vec![];
                for f in fs {
                    let (i, ft) = field_pos(env, t.as_ref(), f, span)?;
                    path.push(i);
                    t = ft;
                }
                Ok(SV::fun(Head::Project(path)))
            }
            ExprKind::Project(x, f) => {
                let v = self.lower_expr(env, x)?;
                let (i, _) = field_pos(env, x.ty.as_ref(), f, span)?;
                project(v, i, span)
            }
            ExprKind::Record(fs) => {
                let mut vals: Vec<(&String, SV<'a>)> = vec![];
                for (n, _, x) in fs {
                    vals.push((n, self.lower_expr(env, x)?));
                }
                vals.sort_by(|a, b| field_order(a.0, b.0));
                Ok(SV::Tuple(vals.into_iter().map(|(_, v)| v).collect()))
            }
            ExprKind::Constr(c, args) => self.lower_constr(env, e, c, args),
            ExprKind::Match(scrutinee, cases) => self.lower_match(env, scrutinee, cases, span),
            ExprKind::RecordUpdate {
                record,
                path,
                value,
            } => {
                let r = self.lower_expr(env, record)?;
                let v = self.lower_expr(env, value)?;
                update_path(env, r, record.ty.as_ref(), path, v, span)
            }
            ExprKind::If(c, t, f) => self.lower_if(env, c, t, f, span),
            ExprKind::Let { pat, value, body } => {
                let v = self.lower_expr(env, value)?;
                let env2 = self.bind_pat(env, pat, v)?;
                self.lower_expr(&env2, body)
            }
            ExprKind::LetFun {
                name,
                type_params,
                params,
                value,
                body,
                ..
            } => {
                let v = if params.is_empty() {
                    self.lower_expr(env, value)?
                } else {
                    SV::fun(Head::Closure {
                        params,
                        tparams: type_params,
                        body: value,
                        env: env.clone(),
                    })
                };
                let env2 = env.bind(name, v);
                self.lower_expr(&env2, body)
            }
            ExprKind::LetWith {
                name,
                name_span,
                indices,
                value,
                body,
            } => {
                let arr = env
                    .lookup_var(name)
                    .ok_or_else(|| internal(*name_span, "unknown variable in `let ... with`"))?;
                let v = self.lower_expr(env, value)?;
                let r = self.lower_update(env, arr, indices, v, span)?;
                let env2 = env.bind(name, r);
                self.lower_expr(&env2, body)
            }
            ExprKind::Update {
                array,
                indices,
                value,
            } => {
                let arr = self.lower_expr(env, array)?;
                let v = self.lower_expr(env, value)?;
                self.lower_update(env, arr, indices, v, span)
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.lower_loop(env, pat, init.as_deref(), form, body, span),
            ExprKind::Index(a, idx) => {
                let arr = self.lower_expr(env, a)?;
                self.lower_index(env, arr, idx, span)
            }
            ExprKind::Ascribe(x, te) => {
                let v = self.lower_expr(env, x)?;
                self.lower_size_exprs(env, te)?;
                Ok(v)
            }
            ExprKind::Coerce(x, te) => {
                let v = self.lower_expr(env, x)?;
                self.lower_size_exprs(env, te)?;
                self.coerce_to_stype(env, v, e.ty.as_ref(), span)
            }
            ExprKind::Attr(a, x) => {
                let n = self.attrs.len();
                self.attrs.push(attr_text(a));
                let r = self.lower_expr(env, x);
                self.attrs.truncate(n);
                r
            }
            ExprKind::LocalOpen(q, x) => {
                let m = match (q.quals.is_empty(), PrimType::from_name(&q.name)) {
                    (true, Some(m)) => m,
                    _ => {
                        return Err(Diagnostic::not_supported(
                            span,
                            format!("opening module `{q}`"),
                        ))
                    }
                };
                self.lower_expr(&env.open(m), x)
            }
            ExprKind::Assert(c, x) => {
                let (cv, _) = self.lower_scalar(env, c)?;
                let text = self
                    .sources
                    .file(c.span.file)
                    .text
                    .get(c.span.lo as usize..c.span.hi as usize)
                    .unwrap_or("")
                    .to_string();
                self.assert(cv, format!("Assertion is false: {text}"));
                self.lower_expr(env, x)
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Names and application.

    fn resolve(
        &mut self,
        env: &Env<'a>,
        q: &crate::syntax::ast::QualName,
        span: Span,
    ) -> R<SV<'a>> {
        if q.quals.is_empty() {
            match env.lookup(&q.name, &|m, n| super::builtins::mod_has(m, n)) {
                Some(Found::Var(v)) => return Ok(v),
                Some(Found::Open(m)) => return self.mod_member(m, &q.name, span),
                None => {}
            }
            if let Some(i) = self.top(&q.name, env.top) {
                if self.valdec(i).params.is_empty() {
                    return self.call_topdef(i, vec![], vec![], span);
                }
                return Ok(SV::fun(Head::TopDef(i)));
            }
            if let Some(n) = super::builtins::intrinsic_name(&q.name) {
                return Ok(SV::fun(Head::Intrinsic(n)));
            }
            return Err(internal(span, &format!("unknown name `{q}`")));
        }
        if q.quals.len() == 1 {
            if let Some(m) = PrimType::from_name(&q.quals[0]) {
                if super::builtins::mod_has(m, &q.name) {
                    return self.mod_member(m, &q.name, span);
                }
            }
            if q.quals[0] == crate::builtins::INTRINSICS_MODULE {
                if let Some(n) = crate::builtins::intrinsics_member(&q.name) {
                    return Ok(SV::fun(Head::Intrinsic(n)));
                }
            }
        }
        Err(Diagnostic::not_supported(
            span,
            format!("the qualified name `{q}`"),
        ))
    }

    /// An intrinsic whose sizes the type checker inferred from the context (`unflatten`,
    /// `split`, see [`super::builtins::inferred_sizes`]) becomes a [`Head::SizedIntrinsic`];
    /// a top-level function with size parameters only in size expressions gets their values
    /// ([`Lowerer::with_call_sizes`]).
    fn with_inferred_sizes(&mut self, env: &Env<'a>, v: SV<'a>, e: &'a Expr) -> R<SV<'a>> {
        match &v {
            SV::Fun(fv) if fv.args.is_empty() => match fv.head {
                Head::Intrinsic(name) if super::builtins::inferred_sizes(name) > 0 => {
                    Ok(SV::fun(Head::SizedIntrinsic {
                        name,
                        at: e,
                        env: env.clone(),
                    }))
                }
                Head::TopDef(i) => self.with_call_sizes(env, i, v, e),
                _ => Ok(v),
            },
            _ => Ok(v),
        }
    }

    /// The sizes of a use `e` of an intrinsic with inferred sizes, as its leading `i64`
    /// arguments, computed from the name's type `e.ty` in the environment of the use.
    fn inferred_size_args(
        &mut self,
        env: &Env<'a>,
        name: &'static str,
        e: &'a Expr,
    ) -> R<Vec<SV<'a>>> {
        let count = super::builtins::inferred_sizes(name);
        let mut ret = e.ty.as_ref();
        while let Some(SType::Fun(_, r)) = ret {
            ret = Some(r);
        }
        let sizes: Vec<Size> = match ret {
            Some(SType::Array { shape, .. }) if shape.len() >= count => shape[..count].to_vec(),
            Some(SType::Tuple(ts)) if ts.len() == count => ts
                .iter()
                .map(|t| match t {
                    SType::Array { shape, .. } if !shape.is_empty() => shape[0].clone(),
                    _ => Size::Unknown,
                })
                .collect(),
            _ => vec![Size::Unknown; count],
        };
        let mut args = vec![];
        for d in &sizes {
            let s = self.size_value(env, d).ok_or_else(|| {
                Diagnostic::error(
                    e.span,
                    format!(
                        "cannot determine the sizes of `{name}`'s result here (the size `{}` is \
                         not known at this point)",
                        if *d == Size::Unknown {
                            "[]".to_string()
                        } else {
                            d.to_string()
                        }
                    ),
                )
                .with_note("add a type annotation such as `: [n][m]t`")
            })?;
            args.push(SV::Val(s, Type::Prim(PrimType::I64)));
        }
        Ok(args)
    }

    /// A top-level function with size parameters that no parameter's shape gives (those only in
    /// size expressions of its parameters' types or only in its result's, [`size_expr_params`])
    /// becomes a function value with their values as leading arguments (see
    /// [`Lowerer::call_topdef`]). The type checker gave the name the function's type at this
    /// use, with those parameters resolved (`[p*q]t` became `[a*b]t`), so each is the size at
    /// the same place of that type ([`size_at`]), in a parameter's type or in the result's
    /// (`ValDec::ret_ty`).
    fn with_call_sizes(&mut self, env: &Env<'a>, i: usize, v: SV<'a>, e: &'a Expr) -> R<SV<'a>> {
        if size_expr_params(self.valdec(i)).is_empty() {
            return Ok(v);
        }
        Ok(SV::fun(Head::SizedTopDef {
            index: i,
            at: e,
            env: env.clone(),
        }))
    }

    /// The values of the hidden size parameters of the top-level function `i` at the use `e`
    /// (see [`Lowerer::with_call_sizes`]), evaluated in the environment `env` of the use.
    fn call_sizes(
        &mut self,
        env: &Env<'a>,
        i: usize,
        e: &'a Expr,
        call_args: &[SV<'a>],
    ) -> R<Vec<SV<'a>>> {
        let d = self.valdec(i);
        let hidden = size_expr_params(d);
        let mut used = e.ty.as_ref();
        let mut pairs = vec![];
        for p in &d.params {
            match (used, &p.ty) {
                (Some(SType::Fun(a, r)), Some(t)) => {
                    pairs.push((t, &**a));
                    used = Some(r);
                }
                _ => break,
            }
        }
        // The result's type, for sizes that only it mentions.
        if let (true, Some(t), Some(u)) = (pairs.len() == d.params.len(), &d.ret_ty, used) {
            pairs.push((t, u));
        }
        let mut args = vec![];
        for n in hidden {
            let size = pairs.iter().find_map(|(t, u)| size_at(t, u, n));
            let mut value = size.as_ref().and_then(|s| self.size_value(env, s));
            if value.is_none() {
                value = self.solve_from_shapes(env, n, &pairs, call_args, e.span)?;
            }
            let value = value.ok_or_else(|| {
                Diagnostic::error(
                    e.span,
                    format!(
                        "cannot determine the size parameter `{n}` of `{}` at this call",
                        d.name
                    ),
                )
                .with_note(format!(
                    "the size is `{}` here, which is not known at this point",
                    size.map_or("[]".to_string(), |s| s.to_string())
                ))
            })?;
            args.push(SV::Val(value, Type::Prim(PrimType::I64)));
        }
        Ok(args)
    }

    /// The value of the hidden size parameter `n` from the actual shape of an argument, where
    /// the size the type checker inferred for it has no value here (the value of an expression
    /// lowered in another call: `seeds ks` returns `[i64.sum ks * 2]t`, whose `i64.sum ks` was
    /// computed inside that call). A parameter of type `[n * q]t` (or `[q * n]`, `[n + q]`,
    /// `[n - q]`, `[q + n]`, `[q - n]`) given an argument of `v` rows, where `q`'s inferred size
    /// has a value, gives `n = v / q` (checked to be exact), `v - q`, `v + q`, `q - v`. `pairs`
    /// are the declared and used types of the parameters, in order, then of the result.
    fn solve_from_shapes(
        &mut self,
        env: &Env<'a>,
        n: &str,
        pairs: &[(&SType, &SType)],
        call_args: &[SV<'a>],
        span: Span,
    ) -> R<Option<SubExp>> {
        let is_n = |d: &Size| matches!(d, Size::Named(m) if m == n);
        for ((decl, used), arg) in pairs.iter().zip(call_args) {
            let (
                SType::Array { shape: ds, .. },
                SType::Array { shape: us, .. },
                Some((_, Type::Array { shape: actual, .. })),
            ) = (decl, used, arg.leaves().first().cloned())
            else {
                continue;
            };
            for (k, (d, u)) in ds.iter().zip(us).enumerate() {
                let (Size::Bin(op, x, y), Size::Bin(uop, ux, uy), Some(v)) = (d, u, actual.get(k))
                else {
                    continue;
                };
                if op != uop {
                    continue;
                }
                let (left, other) = if is_n(x) {
                    (true, uy)
                } else if is_n(y) {
                    (false, ux)
                } else {
                    continue;
                };
                let Some(q) = self.size_value(env, other) else {
                    continue;
                };
                let i64t = PrimType::I64;
                let p = match (op, left) {
                    (SizeOp::Mul, _) => {
                        let (p, _) =
                            self.scalar_binop(BinOp::Div, v.clone(), q.clone(), i64t, span)?;
                        let (back, _) = self.scalar_binop(BinOp::Mul, p.clone(), q, i64t, span)?;
                        let ok = self.let1(
                            "size_ok",
                            Type::Prim(PrimType::Bool),
                            Exp::CmpOp(crate::ir::CmpOp::Eq(i64t), back, v.clone()),
                        );
                        self.assert(
                            ok,
                            format!("the argument's size is not a multiple as the size `{d}` says"),
                        );
                        p
                    }
                    (SizeOp::Add, _) => self.scalar_binop(BinOp::Sub, v.clone(), q, i64t, span)?.0,
                    (SizeOp::Sub, true) => {
                        self.scalar_binop(BinOp::Add, v.clone(), q, i64t, span)?.0
                    }
                    (SizeOp::Sub, false) => {
                        self.scalar_binop(BinOp::Sub, q, v.clone(), i64t, span)?.0
                    }
                };
                return Ok(Some(p));
            }
        }
        Ok(None)
    }

    /// The value of a size (constants, `i64` variables in scope, the values of expressions
    /// given as sizes where they were evaluated, and size expressions over them), or `None`
    /// where it is unknown.
    fn size_value(&mut self, env: &Env<'a>, d: &Size) -> Option<SubExp> {
        match d {
            Size::Const(k) => Some(SubExp::i64(*k)),
            Size::Named(n) => match env.lookup_var(n) {
                Some(SV::Val(s, Type::Prim(p @ PrimType::Int(_)))) => Some(self.i64_of(s, p)),
                _ => None,
            },
            Size::Unknown => None,
            Size::Expr(span, _) => match self.size_exprs.get(span) {
                Some((s, f)) if self.frames.contains(f) => Some(s.clone()),
                _ => None,
            },
            Size::Bin(op, a, b) => {
                let a = self.size_value(env, a)?;
                let b = self.size_value(env, b)?;
                let op = match op {
                    SizeOp::Add => SizeArith::Add,
                    SizeOp::Sub => SizeArith::Sub,
                    SizeOp::Mul => SizeArith::Mul,
                };
                Some(self.checked_size(op, a, b, &format!("the size `{d}`")))
            }
        }
    }

    fn op_value(&mut self, env: &Env<'a>, op: &'a OpRef, _span: Span) -> R<SV<'a>> {
        match op {
            OpRef::Builtin(b) => Ok(SV::fun(Head::Op(*b))),
            OpRef::Fun(f) => self.lower_expr(env, f),
        }
    }

    fn arity(&self, h: &Head<'a>) -> usize {
        match h {
            Head::Closure { params, .. } => params.len(),
            Head::TopDef(i) | Head::SizedTopDef { index: i, .. } => self.valdec(*i).params.len(),
            Head::Intrinsic(n) => super::builtins::intrinsic_arity(n),
            Head::SizedIntrinsic { name, .. } => {
                super::builtins::intrinsic_arity(name) - super::builtins::inferred_sizes(name)
            }
            Head::ModFn(_, n) => super::builtins::modfn_arity(n),
            Head::Conv(_) | Head::RightSection(..) | Head::Project(_) => 1,
            Head::Op(_) => 2,
        }
    }

    /// Applies a function value to arguments (inlining it once all its arguments are known).
    pub fn apply(&mut self, f: SV<'a>, args: Vec<SV<'a>>, span: Span) -> R<SV<'a>> {
        let fv = match f {
            SV::Fun(fv) => fv,
            _ => return Err(internal(span, "applying a value that is not a function")),
        };
        let mut all = fv.args.clone();
        all.extend(args);
        let arity = self.arity(&fv.head);
        if all.len() < arity {
            return Ok(SV::Fun(Rc::new(FunVal {
                head: fv.head.clone(),
                args: all,
            })));
        }
        let rest = all.split_off(arity);
        let r = self.call(&fv.head, all, span)?;
        if rest.is_empty() {
            Ok(r)
        } else {
            self.apply(r, rest, span)
        }
    }

    fn call(&mut self, h: &Head<'a>, args: Vec<SV<'a>>, span: Span) -> R<SV<'a>> {
        match h {
            Head::Closure {
                params,
                tparams,
                body,
                env,
            } => self.inline(env.clone(), tparams, params, args, body, span),
            Head::TopDef(i) => self.call_topdef(*i, vec![], args, span),
            Head::SizedTopDef { index, at, env } => {
                let sizes = self.call_sizes(env, *index, at, &args)?;
                self.call_topdef(*index, sizes, args, span)
            }
            Head::Intrinsic(n) => self.call_intrinsic(n, args, span),
            Head::SizedIntrinsic { name, at, env } => {
                let mut all = self.inferred_size_args(env, name, at)?;
                all.extend(args);
                self.call_intrinsic(name, all, span)
            }
            Head::ModFn(m, n) => self.call_modfn(*m, n, args, span),
            Head::Conv(to) => {
                let (s, from) = scalar(&args[0], span)?;
                Ok(SV::Val(self.conv(s, from, *to), Type::Prim(*to)))
            }
            Head::Op(op) => {
                let mut it = args.into_iter();
                let (x, y) = (it.next(), it.next());
                match (x, y) {
                    (Some(x), Some(y)) => self.binop(*op, x, y, span),
                    _ => Err(internal(span, "operator arity")),
                }
            }
            Head::RightSection(op, y) => {
                let x = args
                    .into_iter()
                    .next()
                    .ok_or_else(|| internal(span, "section arity"))?;
                self.apply((**op).clone(), vec![x, (**y).clone()], span)
            }
            Head::Project(path) => {
                let mut v = args
                    .into_iter()
                    .next()
                    .ok_or_else(|| internal(span, "projection arity"))?;
                for i in path {
                    v = project(v, *i, span)?;
                }
                Ok(v)
            }
        }
    }

    /// Calls a top-level function with the values of its hidden size parameters
    /// ([`Lowerer::call_sizes`], none where it has none or they are not known) and its
    /// arguments.
    pub fn call_topdef(
        &mut self,
        i: usize,
        sizes: Vec<SV<'a>>,
        args: Vec<SV<'a>>,
        span: Span,
    ) -> R<SV<'a>> {
        let d = self.valdec(i);
        let mut env = Env::new(i);
        for (n, v) in size_expr_params(d).into_iter().zip(sizes) {
            env = env.bind(n, v);
        }
        self.in_frame(|s| s.inline(env, &d.type_params, &d.params, args, &d.body, span))
    }

    /// Inlines a function body with its parameters bound to the arguments.
    fn inline(
        &mut self,
        env: Env<'a>,
        tparams: &'a [TypeParam],
        params: &'a [Pat],
        args: Vec<SV<'a>>,
        body: &'a Expr,
        span: Span,
    ) -> R<SV<'a>> {
        if self.depth >= MAX_INLINE_DEPTH {
            return Err(Diagnostic::not_supported(
                span,
                format_args!("function calls nested more than {MAX_INLINE_DEPTH} deep"),
            ));
        }
        if self.names.next.saturating_sub(self.entry_names) > MAX_LOWERED_NAMES {
            return Err(Diagnostic::not_supported(
                span,
                format_args!(
                    "an entry point larger than {MAX_LOWERED_NAMES} IR variables once every \
                     function call is inlined"
                ),
            )
            .with_label("the budget ran out inlining this call")
            .with_note(
                "vkad inlines every call, so a function that calls another twice doubles its \
                 size; compute a shared value once (a `let`) or repeat work with a `loop`",
            ));
        }
        self.depth += 1;
        let mut env = env;
        for (p, a) in params.iter().zip(&args) {
            if let Some(t) = &p.ty {
                env = match_type(env, tparams, t, a, 0);
            }
        }
        let r = (|| {
            for (p, a) in params.iter().zip(args) {
                env = self.bind_pat(&env, p, a)?;
            }
            self.lower_expr(&env, body)
        })();
        self.depth -= 1;
        r
    }

    /// Binds a pattern to a value.
    pub fn bind_pat(&mut self, env: &Env<'a>, p: &'a Pat, v: SV<'a>) -> R<Env<'a>> {
        match &p.kind {
            PatKind::Id(n) => Ok(env.bind(n, v)),
            PatKind::Wildcard => Ok(env.clone()),
            PatKind::Tuple(ps) => match v {
                SV::Tuple(vs) if vs.len() == ps.len() => {
                    let mut env = env.clone();
                    for (p, v) in ps.iter().zip(vs) {
                        env = self.bind_pat(&env, p, v)?;
                    }
                    Ok(env)
                }
                v if ps.len() == 1 => self.bind_pat(env, &ps[0], v),
                _ => Err(internal(p.span, "tuple pattern does not match the value")),
            },
            PatKind::Record(fs) => {
                let mut env = env.clone();
                for (p, v) in record_pat_fields(fs, v, p.span)? {
                    env = self.bind_pat(&env, p, v)?;
                }
                Ok(env)
            }
            PatKind::Constr(c, ps) => self.bind_constr(env, p, c, ps, v),
            PatKind::Lit(..) => Ok(env.clone()),
            PatKind::Ascribed(p, _) | PatKind::Attr(_, p) => self.bind_pat(env, p, v),
        }
    }

    /// The value of the variables of a pattern (for `loop x for ...` without an initial value).
    fn pat_value(&self, env: &Env<'a>, p: &Pat) -> R<SV<'a>> {
        match &p.kind {
            PatKind::Id(n) => env
                .lookup_var(n)
                .ok_or_else(|| internal(p.span, "loop variable without initial value")),
            PatKind::Tuple(ps) => Ok(SV::Tuple(
                ps.iter()
                    .map(|p| self.pat_value(env, p))
                    .collect::<R<_>>()?,
            )),
            PatKind::Record(fs) => {
                let mut vals = vec![];
                for (n, _, q) in fs {
                    vals.push((n, self.pat_value(env, q)?));
                }
                vals.sort_by(|a, b| field_order(a.0, b.0));
                Ok(SV::Tuple(vals.into_iter().map(|(_, v)| v).collect()))
            }
            PatKind::Ascribed(p, _) | PatKind::Attr(_, p) => self.pat_value(env, p),
            PatKind::Constr(..) | PatKind::Lit(..) => {
                Err(internal(p.span, "refutable pattern in a loop"))
            }
            PatKind::Wildcard => Err(Diagnostic::not_supported(
                p.span,
                "`_` in a loop pattern without an initial value",
            )),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Scalars and operators.

    pub fn conv(&mut self, s: SubExp, from: PrimType, to: PrimType) -> SubExp {
        if from == to {
            return s;
        }
        // `Conv` has Futhark's rule itself (signed to unsigned zero-extends; see `primops`).
        self.let1("conv", Type::Prim(to), Exp::Conv(ConvOp { from, to }, s))
    }

    /// `max(n - 1, 0)`: the index of the last element, where a reversed slice starts; 0 for an
    /// empty array, so that its (empty) slice is still in bounds.
    pub fn last_index(&mut self, n: SubExp) -> SubExp {
        let last = self.let1(
            "last",
            I64,
            Exp::BinOp(ir::BinOp::Sub(PrimType::I64), n, SubExp::i64(1)),
        );
        self.let1(
            "last",
            I64,
            Exp::BinOp(ir::BinOp::Max(PrimType::I64), last, SubExp::i64(0)),
        )
    }

    pub fn i64_of(&mut self, s: SubExp, t: PrimType) -> SubExp {
        self.conv(s, t, PrimType::I64)
    }

    fn unop(&mut self, op: UnOp, s: SubExp, t: PrimType, span: Span) -> R<SubExp> {
        if let (UnOp::Neg, SubExp::Const(c)) = (op, &s) {
            if let Some(v) = c.as_i128() {
                if let PrimType::Int(it) = t {
                    return Ok(SubExp::Const(PrimValue::int(it, v.wrapping_neg())));
                }
            }
            if let (Some(v), PrimType::Float(ft)) = (c.as_f64(), t) {
                return Ok(SubExp::Const(PrimValue::float(ft, -v)));
            }
        }
        let op = match (op, t) {
            (UnOp::Neg, PrimType::Bool) => return Err(internal(span, "negating a bool")),
            (UnOp::Neg, t) => IrUnOp::Neg(t),
            (UnOp::Not, PrimType::Float(_)) => return Err(internal(span, "`!` on a float")),
            (UnOp::Not, t) => IrUnOp::Not(t),
        };
        Ok(self.let1("un", Type::Prim(t), Exp::UnOp(op, s)))
    }

    /// `x op y` for already evaluated operands.
    pub fn binop(&mut self, op: BinOp, x: SV<'a>, y: SV<'a>, span: Span) -> R<SV<'a>> {
        match op {
            BinOp::Eq | BinOp::Neq => {
                let c = self.sv_eq(&x, &y, span)?;
                let c = if op == BinOp::Neq {
                    self.let1("neq", BOOL, Exp::UnOp(IrUnOp::Not(PrimType::Bool), c))
                } else {
                    c
                };
                Ok(SV::Val(c, BOOL))
            }
            BinOp::Concat => self.concat(x, y, span),
            BinOp::PipeRight => self.apply(y, vec![x], span),
            BinOp::PipeLeft => self.apply(x, vec![y], span),
            _ => {
                let (a, t) = scalar(&x, span)?;
                let (b, _) = scalar(&y, span)?;
                let (s, rt) = self.scalar_binop(op, a, b, t, span)?;
                Ok(SV::Val(s, Type::Prim(rt)))
            }
        }
    }

    /// A scalar binary operator; returns the result and its type.
    pub fn scalar_binop(
        &mut self,
        op: BinOp,
        a: SubExp,
        b: SubExp,
        t: PrimType,
        span: Span,
    ) -> R<(SubExp, PrimType)> {
        use crate::ir::{BinOp as B, CmpOp as C};
        let int = || match t {
            PrimType::Int(it) => Ok(it),
            _ => Err(internal(span, "integer operator on a non-integer")),
        };
        let (e, rt) = match op {
            BinOp::Add => (Exp::BinOp(B::Add(t), a, b), t),
            BinOp::Sub => (Exp::BinOp(B::Sub(t), a, b), t),
            BinOp::Mul => (Exp::BinOp(B::Mul(t), a, b), t),
            BinOp::Div => (Exp::BinOp(B::Div(t), a, b), t),
            BinOp::Mod => (Exp::BinOp(B::Mod(t), a, b), t),
            BinOp::Quot => (Exp::BinOp(B::Quot(int()?), a, b), t),
            BinOp::Rem => (Exp::BinOp(B::Rem(int()?), a, b), t),
            BinOp::Pow => (Exp::BinOp(B::Pow(t), a, b), t),
            BinOp::Shl => (Exp::BinOp(B::Shl(int()?), a, b), t),
            BinOp::Shr => (Exp::BinOp(B::Shr(int()?), a, b), t),
            BinOp::UShr => (Exp::BinOp(B::UShr(int()?), a, b), t),
            BinOp::BitAnd => (Exp::BinOp(B::And(t), a, b), t),
            BinOp::BitOr => (Exp::BinOp(B::Or(t), a, b), t),
            BinOp::BitXor => (Exp::BinOp(B::Xor(int()?), a, b), t),
            BinOp::LogAnd => (Exp::BinOp(B::LogAnd, a, b), PrimType::Bool),
            BinOp::LogOr => (Exp::BinOp(B::LogOr, a, b), PrimType::Bool),
            BinOp::Eq => (Exp::CmpOp(C::Eq(t), a, b), PrimType::Bool),
            BinOp::Neq => {
                let c = self.let1("eq", BOOL, Exp::CmpOp(C::Eq(t), a, b));
                (Exp::UnOp(IrUnOp::Not(PrimType::Bool), c), PrimType::Bool)
            }
            BinOp::Lt => (Exp::CmpOp(C::Lt(t), a, b), PrimType::Bool),
            BinOp::Le => (Exp::CmpOp(C::Le(t), a, b), PrimType::Bool),
            BinOp::Gt => (Exp::CmpOp(C::Lt(t), b, a), PrimType::Bool),
            BinOp::Ge => (Exp::CmpOp(C::Le(t), b, a), PrimType::Bool),
            BinOp::PipeLeft | BinOp::PipeRight | BinOp::Concat => {
                return Err(internal(span, "not a scalar operator"))
            }
        };
        Ok((self.let1("bop", Type::Prim(rt), e), rt))
    }

    fn short_circuit(&mut self, env: &Env<'a>, op: BinOp, a: &'a Expr, b: &'a Expr) -> R<SV<'a>> {
        let (ca, _) = self.lower_scalar(env, a)?;
        let (stms, (cb, _)) = self.in_body(|s| s.lower_scalar(env, b))?;
        let and = op == BinOp::LogAnd;
        if safe_stms(&stms) {
            self.stms.extend(stms);
            let bop = if and {
                crate::ir::BinOp::LogAnd
            } else {
                crate::ir::BinOp::LogOr
            };
            return Ok(SV::Val(
                self.let1("sc", BOOL, Exp::BinOp(bop, ca, cb)),
                BOOL,
            ));
        }
        let rhs = Body {
            stms,
            result: vec![cb],
        };
        let other = Body {
            stms: vec![],
            result: vec![bool_c(!and)],
        };
        let (then_b, else_b) = if and { (rhs, other) } else { (other, rhs) };
        let r = self.let1(
            "sc",
            BOOL,
            Exp::If {
                cond: ca,
                then_b,
                else_b,
                ret: vec![ExtType::Prim(PrimType::Bool)],
            },
        );
        Ok(SV::Val(r, BOOL))
    }

    /// Structural equality of two values of the same type.
    fn sv_eq(&mut self, x: &SV<'a>, y: &SV<'a>, span: Span) -> R<SubExp> {
        if x.contains_fun() || y.contains_fun() {
            return Err(internal(span, "comparing functions"));
        }
        let (xl, yl) = (x.leaves(), y.leaves());
        if xl.len() != yl.len() {
            return Err(internal(span, "comparing values of different types"));
        }
        let mut acc = bool_c(true);
        for ((a, ta), (b, tb)) in xl.into_iter().zip(yl) {
            let c = match (&ta, &tb) {
                (Type::Prim(t), Type::Prim(_)) => {
                    self.let1("eq", BOOL, Exp::CmpOp(crate::ir::CmpOp::Eq(*t), a, b))
                }
                (Type::Array { .. }, Type::Array { .. }) => self.array_eq(a, &ta, b, &tb, span)?,
                _ => return Err(internal(span, "comparing values of different types")),
            };
            acc = if acc == bool_c(true) {
                c
            } else {
                self.let1("and", BOOL, Exp::BinOp(crate::ir::BinOp::LogAnd, acc, c))
            };
        }
        Ok(acc)
    }

    fn array_eq(&mut self, a: SubExp, ta: &Type, b: SubExp, tb: &Type, span: Span) -> R<SubExp> {
        use crate::ir::{BinOp as B, CmpOp as C, Lambda, Operator, Soac};
        let (sa, sb) = (ta.shape().to_vec(), tb.shape().to_vec());
        let elem = ta
            .elem()
            .ok_or_else(|| internal(span, "array of accumulators"))?;
        if sa.len() != sb.len() {
            return Err(internal(span, "comparing arrays of different ranks"));
        }
        let mut shapes_eq = bool_c(true);
        for (x, y) in sa.iter().zip(&sb) {
            let c = self.let1(
                "dim_eq",
                BOOL,
                Exp::CmpOp(C::Eq(PrimType::I64), x.clone(), y.clone()),
            );
            shapes_eq = if shapes_eq == bool_c(true) {
                c
            } else {
                self.let1("and", BOOL, Exp::BinOp(B::LogAnd, shapes_eq, c))
            };
        }
        let (av, bv) = (
            super::types::arr_var(&a, span)?,
            super::types::arr_var(&b, span)?,
        );
        let (stms, r) = self.in_body(|s| {
            let mut total = SubExp::i64(1);
            for d in &sa {
                total = s.checked_size(SizeArith::Mul, total, d.clone(), "`==` on arrays");
            }
            let flat_t = Type::array(elem, vec![total.clone()]);
            let fa = s.let1(
                "flat",
                flat_t.clone(),
                Exp::Reshape(vec![total.clone()], av),
            );
            let fb = s.let1("flat", flat_t, Exp::Reshape(vec![total.clone()], bv));
            let (px, py) = (s.names.fresh("x"), s.names.fresh("y"));
            let pe = s.names.fresh("eq");
            let map_lam = Lambda {
                params: vec![
                    Param {
                        name: px.clone(),
                        ty: Type::Prim(elem),
                    },
                    Param {
                        name: py.clone(),
                        ty: Type::Prim(elem),
                    },
                ],
                body: Body {
                    stms: vec![Stm {
                        pat: ir::Pat {
                            elems: vec![Param {
                                name: pe.clone(),
                                ty: BOOL,
                            }],
                        },
                        exp: Exp::CmpOp(C::Eq(elem), SubExp::Var(px), SubExp::Var(py)),
                        attrs: Default::default(),
                        loc: None,
                    }],
                    result: vec![SubExp::Var(pe)],
                },
                ret: vec![BOOL],
            };
            let (fa, fb) = (
                super::types::arr_var(&fa, span)?,
                super::types::arr_var(&fb, span)?,
            );
            let eqs = s.let1(
                "eqs",
                Type::array(PrimType::Bool, vec![total.clone()]),
                Exp::Soac(Soac::Map {
                    w: total.clone(),
                    arrs: vec![fa, fb],
                    lam: map_lam,
                }),
            );
            let lam = s.scalar_lambda(PrimType::Bool, B::LogAnd);
            let eqs = super::types::arr_var(&eqs, span)?;
            Ok(s.let1(
                "all_eq",
                BOOL,
                Exp::Soac(Soac::Reduce {
                    w: total,
                    arrs: vec![eqs],
                    op: Operator {
                        lam,
                        neutral: vec![bool_c(true)],
                        commutative: true,
                    },
                }),
            ))
        })?;
        if shapes_eq == bool_c(true) {
            self.stms.extend(stms);
            return Ok(r);
        }
        Ok(self.let1(
            "arr_eq",
            BOOL,
            Exp::If {
                cond: shapes_eq,
                then_b: Body {
                    stms,
                    result: vec![r],
                },
                else_b: Body {
                    stms: vec![],
                    result: vec![bool_c(false)],
                },
                ret: vec![ExtType::Prim(PrimType::Bool)],
            },
        ))
    }

    /// `\a b -> a op b` on scalars of type `t`.
    pub fn scalar_lambda(&mut self, t: PrimType, op: crate::ir::BinOp) -> crate::ir::Lambda {
        let (a, b, r) = (
            self.names.fresh("a"),
            self.names.fresh("b"),
            self.names.fresh("r"),
        );
        let rt = match op {
            crate::ir::BinOp::LogAnd | crate::ir::BinOp::LogOr => PrimType::Bool,
            _ => t,
        };
        crate::ir::Lambda {
            params: vec![
                Param {
                    name: a.clone(),
                    ty: Type::Prim(t),
                },
                Param {
                    name: b.clone(),
                    ty: Type::Prim(t),
                },
            ],
            body: Body {
                stms: vec![Stm {
                    pat: ir::Pat {
                        elems: vec![Param {
                            name: r.clone(),
                            ty: Type::Prim(rt),
                        }],
                    },
                    exp: Exp::BinOp(op, SubExp::Var(a), SubExp::Var(b)),
                    attrs: Default::default(),
                    loc: None,
                }],
                result: vec![SubExp::Var(r)],
            },
            ret: vec![Type::Prim(rt)],
        }
    }

    // -----------------------------------------------------------------------------------------
    // Arrays: literals, ranges, indexing, updates, coercions.

    fn lower_array_lit(&mut self, env: &Env<'a>, es: &'a [Expr], e: &'a Expr) -> R<SV<'a>> {
        if es.is_empty() {
            let row =
                e.ty.as_ref()
                    .and_then(|t| t.row())
                    .ok_or_else(|| internal(e.span, "empty array literal without an array type"))?;
            let mut dim = scope_dim(env, e.span);
            let tmpl =
                stype_to_sv(env, &row, &mut dim).map_err(|d| Diagnostic { span: e.span, ..d })?;
            return tmpl.map_leaves(&mut |_, t| {
                let at = t.array_of(SubExp::i64(0));
                Ok((
                    self.let1(
                        "empty",
                        at.clone(),
                        Exp::ArrayLit {
                            elems: vec![],
                            row: t.clone(),
                        },
                    ),
                    at,
                ))
            });
        }
        let vs = es
            .iter()
            .map(|x| Ok(self.lower_expr(env, x)?.with_unit_carrier()))
            .collect::<R<Vec<_>>>()?;
        if vs[0].contains_fun() {
            return Err(Diagnostic::not_supported(e.span, "arrays of functions"));
        }
        let first = vs[0].leaves();
        let all: Vec<Vec<(SubExp, Type)>> = vs.iter().map(|v| v.leaves()).collect();
        let n = SubExp::i64(vs.len() as i64);
        let mut out = vec![];
        for (j, (_, row)) in first.iter().enumerate() {
            let mut elems = vec![];
            for l in &all {
                let (s, t) = l
                    .get(j)
                    .ok_or_else(|| internal(e.span, "array literal elements of different types"))?;
                elems.push(self.coerce(s.clone(), t, row.shape(), e.span)?);
            }
            let at = row.array_of(n.clone());
            out.push((
                self.let1(
                    "arr",
                    at.clone(),
                    Exp::ArrayLit {
                        elems,
                        row: row.clone(),
                    },
                ),
                at,
            ));
        }
        Ok(vs[0].rebuild(&mut out.into_iter()))
    }

    /// Makes an array have exactly the dimensions `want` (checked at run time).
    pub fn coerce(&mut self, s: SubExp, have: &Type, want: &[SubExp], span: Span) -> R<SubExp> {
        let (elem, shape) = match have {
            Type::Array { elem, shape } => (*elem, shape),
            _ => return Ok(s),
        };
        if shape.as_slice() == want {
            return Ok(s);
        }
        if shape.len() != want.len() {
            return Err(internal(span, "coercing between different ranks"));
        }
        let rank = shape.len();
        for (d, (a, b)) in shape.iter().zip(want).enumerate() {
            if a != b {
                let c = self.let1(
                    "dim_ok",
                    BOOL,
                    Exp::CmpOp(crate::ir::CmpOp::Eq(PrimType::I64), a.clone(), b.clone()),
                );
                let which = if rank == 1 {
                    "an array".to_string()
                } else {
                    format!("dimension {} of an array", d + 1)
                };
                self.assert_with(
                    c,
                    format!("shape mismatch: {which} has size {{}} where size {{}} is required"),
                    vec![a.clone(), b.clone()],
                );
            }
        }
        let v = super::types::arr_var(&s, span)?;
        Ok(self.let1(
            "coerced",
            Type::array(elem, want.to_vec()),
            Exp::Reshape(want.to_vec(), v),
        ))
    }

    /// Makes every leaf of an array value have outer dimension `w`.
    pub fn coerce_outer(&mut self, v: SV<'a>, w: &SubExp, span: Span) -> R<SV<'a>> {
        v.map_leaves(&mut |s, t| {
            let mut want = t.shape().to_vec();
            if want.is_empty() {
                return Err(internal(span, "expected an array"));
            }
            want[0] = w.clone();
            let s = self.coerce(s.clone(), t, &want, span)?;
            Ok((s, Type::array(t.elem().unwrap_or(PrimType::Bool), want)))
        })
    }

    /// `e :> t`: checks the sizes that the target type names.
    fn coerce_to_stype(
        &mut self,
        env: &Env<'a>,
        v: SV<'a>,
        ty: Option<&SType>,
        span: Span,
    ) -> R<SV<'a>> {
        let Some(ty) = ty else { return Ok(v) };
        let unknown = SubExp::Const(PrimValue::Bool(false));
        // Size expressions (`:> [n*m]t`) are computed first; those not computable are unknown.
        let mut dims = vec![];
        collect_dims(ty, &mut dims);
        let mut values = std::collections::HashMap::new();
        for d in dims
            .into_iter()
            .filter(|d| matches!(d, Size::Bin(..) | Size::Expr(..)))
        {
            if let Some(s) = self.size_value(env, d) {
                values.insert(d.clone(), s);
            }
        }
        let tmpl = match stype_to_sv(env, ty, &mut |s: &Size| {
            Ok(match s {
                Size::Const(k) => SubExp::i64(*k),
                Size::Named(n) => match env.lookup_var(n) {
                    Some(SV::Val(s, _)) => s,
                    _ => unknown.clone(),
                },
                Size::Bin(..) | Size::Expr(..) => {
                    values.get(s).cloned().unwrap_or_else(|| unknown.clone())
                }
                Size::Unknown => unknown.clone(),
            })
        }) {
            Ok(t) => t,
            Err(_) => return Ok(v),
        };
        let tl = tmpl.leaves();
        let vl = v.leaves();
        if tl.len() != vl.len() {
            return Ok(v);
        }
        let mut out = vec![];
        for ((s, t), (_, want)) in vl.into_iter().zip(tl) {
            if t.rank() != want.rank() {
                return Err(internal(span, "size coercion changes the rank"));
            }
            let dims: Vec<SubExp> = t
                .shape()
                .iter()
                .zip(want.shape())
                .map(|(h, w)| if *w == unknown { h.clone() } else { w.clone() })
                .collect();
            let s2 = self.coerce(s, &t, &dims, span)?;
            let t2 = match &t {
                Type::Array { elem, .. } => Type::array(*elem, dims),
                t => t.clone(),
            };
            out.push((s2, t2));
        }
        Ok(v.rebuild(&mut out.into_iter()))
    }

    fn lower_range(
        &mut self,
        env: &Env<'a>,
        start: &'a Expr,
        second: Option<&'a Expr>,
        end: &'a Expr,
        kind: RangeKind,
        span: Span,
    ) -> R<SV<'a>> {
        use crate::ir::{BinOp as B, CmpOp as C};
        let (s, t) = self.lower_scalar(env, start)?;
        let it = match t {
            PrimType::Int(it) => it,
            _ => {
                return Err(Diagnostic::not_supported(
                    span,
                    "ranges of non-integer type",
                ))
            }
        };
        let sec = match second {
            Some(x) => Some(self.lower_scalar(env, x)?.0),
            None => None,
        };
        let (e, _) = self.lower_scalar(env, end)?;
        let text = self
            .sources
            .file(span.file)
            .text
            .get(span.lo as usize..span.hi as usize)
            .unwrap_or("")
            .trim()
            .to_string();
        let msg = format!("Range {text} is invalid.");
        let what = format!("the range `{text}`");
        let lt =
            |l: &mut Self, a: SubExp, b: SubExp| l.let1("lt", BOOL, Exp::CmpOp(C::Lt(t), a, b));
        let not =
            |l: &mut Self, a: SubExp| l.let1("ok", BOOL, Exp::UnOp(IrUnOp::Not(PrimType::Bool), a));
        let Some(sec) = sec else {
            // Stride +-1: simple sizes (`0..<n` has size `n`). The assertion comes first, so the
            // distance is taken in the direction of the range.
            let (n, stride) = match kind {
                RangeKind::UpToExclusive => {
                    let bad = lt(self, e.clone(), s.clone());
                    let ok = not(self, bad);
                    self.assert(ok, msg);
                    (self.size_distance(e.clone(), s.clone(), it, &what), 1)
                }
                RangeKind::Inclusive => {
                    let bad = lt(self, e.clone(), s.clone());
                    let ok = not(self, bad);
                    self.assert(ok, msg);
                    let d = self.size_distance(e.clone(), s.clone(), it, &what);
                    (
                        self.checked_size(SizeArith::Add, d, SubExp::i64(1), &what),
                        1,
                    )
                }
                RangeKind::DownToExclusive => {
                    let bad = lt(self, s.clone(), e.clone());
                    let ok = not(self, bad);
                    self.assert(ok, msg);
                    (self.size_distance(s.clone(), e.clone(), it, &what), -1)
                }
            };
            let stride = SubExp::Const(PrimValue::int(it, stride));
            let r = self.let1(
                "range",
                Type::array(t, vec![n.clone()]),
                Exp::Iota {
                    n: n.clone(),
                    start: s,
                    stride,
                    it,
                },
            );
            return Ok(SV::Val(r, Type::array(t, vec![n])));
        };
        let step = self.let1(
            "step",
            Type::Prim(t),
            Exp::BinOp(B::Sub(t), sec.clone(), s.clone()),
        );
        let step_zero = self.let1(
            "step_zero",
            BOOL,
            Exp::CmpOp(C::Eq(t), s.clone(), sec.clone()),
        );
        let sign = self.let1(
            "sign",
            Type::Prim(t),
            Exp::UnOp(IrUnOp::Signum(t), step.clone()),
        );
        let one = SubExp::Const(PrimValue::int(it, 1));
        let negone = SubExp::Const(PrimValue::int(it, -1));
        let inv_down = lt(self, s.clone(), e.clone());
        let inv_up = lt(self, e.clone(), s.clone());
        let (wrong_dir, bounds_invalid) = match kind {
            RangeKind::DownToExclusive => {
                let w = self.let1("wrong_dir", BOOL, Exp::CmpOp(C::Eq(t), sign.clone(), one));
                (w, inv_down)
            }
            RangeKind::UpToExclusive => {
                let w = self.let1(
                    "wrong_dir",
                    BOOL,
                    Exp::CmpOp(C::Eq(t), sign.clone(), negone),
                );
                (w, inv_up)
            }
            RangeKind::Inclusive => {
                let down = self.let1("down", BOOL, Exp::CmpOp(C::Eq(t), sign, negone));
                let bad = self.select(down, inv_down, inv_up, PrimType::Bool);
                (bool_c(false), bad)
            }
        };
        let a = self.let1("bad", BOOL, Exp::BinOp(B::LogOr, wrong_dir, step_zero));
        let bad = self.let1("bad", BOOL, Exp::BinOp(B::LogOr, a, bounds_invalid));
        let ok = not(self, bad);
        self.assert(ok, msg);
        // The exact distance from the start to the end and the stride's magnitude, as `u64`s
        // (any two 64-bit integers are less than 2^64 apart; the range is valid here, so the end
        // lies on the side the stride goes to), and from them the length without overflow:
        // `ceil(distance / stride)` for `..<` and `..>`, `floor(distance / stride) + 1` for
        // `...`. It must fit in an `i64`.
        let u64t = PrimType::Int(IntType::U64);
        let max = |l: &mut Self, a: SubExp, b: SubExp| {
            l.let1("max", Type::Prim(t), Exp::BinOp(B::Max(t), a, b))
        };
        let min = |l: &mut Self, a: SubExp, b: SubExp| {
            l.let1("min", Type::Prim(t), Exp::BinOp(B::Min(t), a, b))
        };
        let (hi, lo) = (max(self, s.clone(), e.clone()), min(self, s.clone(), e));
        let distance = self.distance_u64(hi, lo, it);
        let (hi, lo) = (max(self, s.clone(), sec.clone()), min(self, s.clone(), sec));
        let stride = self.distance_u64(hi, lo, it);
        let u64op = |l: &mut Self, op: B, a: SubExp, b: SubExp| {
            l.let1("n", Type::Prim(u64t), Exp::BinOp(op, a, b))
        };
        let q = u64op(self, B::Div(u64t), distance.clone(), stride.clone());
        let (n, least) = match kind {
            RangeKind::Inclusive => {
                let one = SubExp::Const(PrimValue::U64(1));
                // Wraps around to 0 only where the length is 2^64.
                (u64op(self, B::Add(u64t), q, one), 1)
            }
            RangeKind::UpToExclusive | RangeKind::DownToExclusive => {
                let r = u64op(self, B::Mod(u64t), distance, stride);
                let exact = self.let1(
                    "exact",
                    BOOL,
                    Exp::CmpOp(C::Eq(u64t), r, SubExp::Const(PrimValue::U64(0))),
                );
                let inexact = not(self, exact);
                let up = self.conv(inexact, PrimType::Bool, u64t);
                (u64op(self, B::Add(u64t), q, up), 0)
            }
        };
        let n = self.i64_of(n, u64t);
        let fits = self.let1(
            "fits",
            BOOL,
            Exp::CmpOp(C::Le(PrimType::I64), SubExp::i64(least), n.clone()),
        );
        self.assert(
            fits,
            format!("size overflow in {what}: the result does not fit in an i64"),
        );
        let r = self.let1(
            "range",
            Type::array(t, vec![n.clone()]),
            Exp::Iota {
                n: n.clone(),
                start: s,
                stride: step,
                it,
            },
        );
        Ok(SV::Val(r, Type::array(t, vec![n])))
    }

    /// The length of a slice with stride `s` (not a known constant) whose end is `d` elements
    /// after its start: `(d + s - signum s) // s` (a negative length is an invalid slice), computed
    /// without overflow. Where `d` and `s` have the same sign that is `ceil(d / s)`, which is
    /// `d // s + (d %% s != 0)`; otherwise `d + s - signum s` cannot overflow. The two are
    /// blended without a branch: `other + same * (exact - other)` in wrapping arithmetic.
    fn slice_len(&mut self, d: SubExp, s: SubExp) -> SubExp {
        use crate::ir::{BinOp as B, CmpOp as C};
        let i64op =
            |l: &mut Self, op: B, a: SubExp, b: SubExp| l.let1("len", I64, Exp::BinOp(op, a, b));
        let sg = self.let1(
            "sg",
            I64,
            Exp::UnOp(IrUnOp::Signum(PrimType::I64), s.clone()),
        );
        let t = i64op(self, B::Sub(PrimType::I64), s.clone(), sg);
        let x = i64op(self, B::Add(PrimType::I64), d.clone(), t);
        let other = i64op(self, B::Quot(IntType::I64), x, s.clone());
        let q = i64op(self, B::Quot(IntType::I64), d.clone(), s.clone());
        let r = i64op(self, B::Rem(IntType::I64), d.clone(), s.clone());
        let inexact = self.let1(
            "inexact",
            BOOL,
            Exp::CmpOp(C::Eq(PrimType::I64), r, SubExp::i64(0)),
        );
        let inexact = self.let1(
            "inexact",
            BOOL,
            Exp::UnOp(IrUnOp::Not(PrimType::Bool), inexact),
        );
        let inexact = self.conv(inexact, PrimType::Bool, PrimType::I64);
        let exact = i64op(self, B::Add(PrimType::I64), q, inexact);
        let dpos = self.let1(
            "dpos",
            BOOL,
            Exp::CmpOp(C::Lt(PrimType::I64), SubExp::i64(0), d),
        );
        let spos = self.let1(
            "spos",
            BOOL,
            Exp::CmpOp(C::Lt(PrimType::I64), SubExp::i64(0), s),
        );
        let same = self.let1("same", BOOL, Exp::CmpOp(C::Eq(PrimType::Bool), dpos, spos));
        let same = self.conv(same, PrimType::Bool, PrimType::I64);
        let diff = i64op(self, B::Sub(PrimType::I64), exact, other.clone());
        let diff = i64op(self, B::Mul(PrimType::I64), same, diff);
        i64op(self, B::Add(PrimType::I64), other, diff)
    }

    /// `hi - lo` for `lo <= hi` of integer type `it`, exactly, as a `u64` (in which the
    /// difference of any two 64-bit integers fits).
    fn distance_u64(&mut self, hi: SubExp, lo: SubExp, it: IntType) -> SubExp {
        let (t, u64t) = (PrimType::Int(it), PrimType::Int(IntType::U64));
        // Signed values are sign-extended to i64 first (a direct conversion to u64 would
        // zero-extend them); modulo 2^64 their difference is then the exact one.
        let wide = |l: &mut Self, x: SubExp| {
            let x = if it.signed() { l.i64_of(x, t) } else { x };
            let from = if it.signed() { PrimType::I64 } else { t };
            l.conv(x, from, u64t)
        };
        let (hi, lo) = (wide(self, hi), wide(self, lo));
        self.let1(
            "d",
            Type::Prim(u64t),
            Exp::BinOp(crate::ir::BinOp::Sub(u64t), hi, lo),
        )
    }

    /// `hi - lo` for `lo <= hi` of integer type `it`, exactly, as an `i64` size: an error
    /// `size overflow in WHAT` where it does not fit (only possible for `i64` and `u64`).
    fn size_distance(&mut self, hi: SubExp, lo: SubExp, it: IntType, what: &str) -> SubExp {
        use crate::ir::{BinOp as B, CmpOp as C};
        match it {
            IntType::I64 => self.checked_size(SizeArith::Sub, hi, lo, what),
            IntType::U64 => {
                let d = self.let1(
                    "d",
                    Type::Prim(PrimType::Int(IntType::U64)),
                    Exp::BinOp(B::Sub(PrimType::Int(IntType::U64)), hi, lo),
                );
                let d = self.i64_of(d, PrimType::Int(IntType::U64));
                let ok = self.let1(
                    "ok",
                    BOOL,
                    Exp::CmpOp(C::Le(PrimType::I64), SubExp::i64(0), d.clone()),
                );
                self.assert(
                    ok,
                    format!("size overflow in {what}: the result does not fit in an i64"),
                );
                d
            }
            _ => {
                let t = PrimType::Int(it);
                let (hi, lo) = (self.i64_of(hi, t), self.i64_of(lo, t));
                self.let1("d", I64, Exp::BinOp(B::Sub(PrimType::I64), hi, lo))
            }
        }
    }

    /// `if c then a else b` on scalars, as an `If` statement.
    pub fn select(&mut self, c: SubExp, a: SubExp, b: SubExp, t: PrimType) -> SubExp {
        if let SubExp::Const(PrimValue::Bool(k)) = c {
            return if k { a } else { b };
        }
        self.let1(
            "sel",
            Type::Prim(t),
            Exp::If {
                cond: c,
                then_b: Body {
                    stms: vec![],
                    result: vec![a],
                },
                else_b: Body {
                    stms: vec![],
                    result: vec![b],
                },
                ret: vec![ExtType::Prim(t)],
            },
        )
    }

    /// The IR indices for source indices into an array of shape `shape`; also the sizes of the
    /// sliced dimensions.
    fn index_dims(
        &mut self,
        env: &Env<'a>,
        shape: &[SubExp],
        idx: &'a [DimIndex],
        span: Span,
    ) -> R<(Vec<IrDim>, Vec<SubExp>)> {
        use crate::ir::CmpOp as C;
        if idx.len() > shape.len() {
            return Err(internal(span, "too many indices"));
        }
        let mut dims = vec![];
        let mut sliced = vec![];
        for (k, di) in idx.iter().enumerate() {
            let n = shape[k].clone();
            match di {
                DimIndex::Fix(i) => {
                    let (s, t) = self.lower_scalar(env, i)?;
                    dims.push(IrDim::Fix(self.i64_of(s, t)));
                }
                DimIndex::Slice(a, b, st) => {
                    let get = |l: &mut Self, x: &'a Option<Expr>| -> R<Option<SubExp>> {
                        Ok(match x {
                            Some(x) => {
                                let (s, t) = l.lower_scalar(env, x)?;
                                Some(l.i64_of(s, t))
                            }
                            None => None,
                        })
                    };
                    let a = get(self, a)?;
                    let b = get(self, b)?;
                    let stride = get(self, st)?.unwrap_or(SubExp::i64(1));
                    let known = match &stride {
                        SubExp::Const(PrimValue::I64(k)) => Some(*k),
                        _ => None,
                    };
                    let pos = match known {
                        Some(k) => bool_c(k > 0),
                        None => self.let1(
                            "pos",
                            BOOL,
                            Exp::CmpOp(C::Lt(PrimType::I64), SubExp::i64(0), stride.clone()),
                        ),
                    };
                    let start = match a {
                        Some(a) => a,
                        None => {
                            let last = self.last_index(n.clone());
                            self.select(pos.clone(), SubExp::i64(0), last, PrimType::I64)
                        }
                    };
                    let end = match b {
                        Some(b) => b,
                        None => self.select(pos, n.clone(), SubExp::i64(-1), PrimType::I64),
                    };
                    let what = "a slice";
                    let len = match known {
                        Some(1) => self.checked_size(SizeArith::Sub, end, start.clone(), what),
                        Some(-1) => self.checked_size(SizeArith::Sub, start.clone(), end, what),
                        _ => {
                            let d = self.checked_size(SizeArith::Sub, end, start.clone(), what);
                            self.slice_len(d, stride.clone())
                        }
                    };
                    if let SubExp::Var(_) = len {
                        let ok = self.let1(
                            "slice_ok",
                            BOOL,
                            Exp::CmpOp(C::Le(PrimType::I64), SubExp::i64(0), len.clone()),
                        );
                        self.assert(
                            ok,
                            "index out of bounds: the slice has a negative length".to_string(),
                        );
                    }
                    sliced.push(len.clone());
                    dims.push(IrDim::Slice { start, len, stride });
                }
            }
        }
        Ok((dims, sliced))
    }

    pub fn lower_index(
        &mut self,
        env: &Env<'a>,
        arr: SV<'a>,
        idx: &'a [DimIndex],
        span: Span,
    ) -> R<SV<'a>> {
        let leaves = arr.leaves();
        let shape = match leaves.first() {
            Some((_, t)) => t.shape().to_vec(),
            None => {
                return Err(Diagnostic::not_supported(
                    span,
                    "indexing arrays of empty tuples",
                ))
            }
        };
        let (dims, sliced) = self.index_dims(env, &shape, idx, span)?;
        self.index_with(&arr, &dims, &sliced, span)
    }

    /// Indexes every leaf of an array value.
    pub fn index_with(
        &mut self,
        arr: &SV<'a>,
        dims: &[IrDim],
        sliced: &[SubExp],
        span: Span,
    ) -> R<SV<'a>> {
        arr.map_leaves(&mut |s, t| {
            let (elem, shape) = match t {
                Type::Array { elem, shape } if shape.len() >= dims.len() => (*elem, shape),
                _ => return Err(internal(span, "indexing a non-array")),
            };
            let mut rs = sliced.to_vec();
            rs.extend(shape[dims.len()..].iter().cloned());
            let rt = Type::array(elem, rs);
            let v = super::types::arr_var(s, span)?;
            Ok((
                self.let1("idx", rt.clone(), Exp::Index(v, dims.to_vec())),
                rt,
            ))
        })
    }

    fn lower_update(
        &mut self,
        env: &Env<'a>,
        arr: SV<'a>,
        idx: &'a [DimIndex],
        v: SV<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let leaves = arr.leaves();
        let shape = match leaves.first() {
            Some((_, t)) => t.shape().to_vec(),
            None => {
                return Err(Diagnostic::not_supported(
                    span,
                    "updating arrays of empty tuples",
                ))
            }
        };
        let (dims, sliced) = self.index_dims(env, &shape, idx, span)?;
        let vl = v.leaves();
        if vl.len() != leaves.len() {
            return Err(internal(span, "update value does not match the array"));
        }
        let mut out = vec![];
        for ((a, t), (x, xt)) in leaves.into_iter().zip(vl) {
            let mut want = sliced.clone();
            want.extend(t.shape()[dims.len()..].iter().cloned());
            let x = self.coerce(x, &xt, &want, span)?;
            let av = super::types::arr_var(&a, span)?;
            let c = self.let1("upd_src", t.clone(), Exp::Copy(av));
            let cv = super::types::arr_var(&c, span)?;
            out.push((
                self.let1("upd", t.clone(), Exp::Update(cv, dims.clone(), x)),
                t,
            ));
        }
        Ok(arr.rebuild(&mut out.into_iter()))
    }

    // -----------------------------------------------------------------------------------------
    // Control flow.

    fn lower_if(
        &mut self,
        env: &Env<'a>,
        c: &'a Expr,
        t: &'a Expr,
        f: &'a Expr,
        span: Span,
    ) -> R<SV<'a>> {
        let (cv, _) = self.lower_scalar(env, c)?;
        if let SubExp::Const(PrimValue::Bool(b)) = cv {
            return self.lower_expr(env, if b { t } else { f });
        }
        let (ts, tv) = self.in_body(|s| s.lower_expr(env, t))?;
        let (fs, fv) = self.in_body(|s| s.lower_expr(env, f))?;
        self.join_if(cv, ts, tv, fs, fv, span)
    }

    /// Emits an `If` of two lowered branches, with existential sizes where they differ (after
    /// sizes both branches compute the same way are computed once before it,
    /// [`super::shared_sizes`]).
    pub fn join_if(
        &mut self,
        cond: SubExp,
        mut ts: Vec<Stm>,
        tv: SV<'a>,
        mut fs: Vec<Stm>,
        fv: SV<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        if tv.contains_fun() || fv.contains_fun() {
            return Err(Diagnostic::not_supported(span, "`if` returning a function"));
        }
        let (tl, mut fl) = (tv.leaves(), fv.leaves());
        if tl.len() != fl.len() {
            return Err(internal(span, "branches of different types"));
        }
        let mut differing = vec![];
        for ((_, a), (_, b)) in tl.iter().zip(&fl) {
            for (d1, d2) in a.shape().iter().zip(b.shape()) {
                if d1 != d2 {
                    differing.push((d1.clone(), d2.clone()));
                }
            }
        }
        let (hoisted, subst) =
            super::shared_sizes::share_branch_sizes(&mut ts, &mut fs, &differing);
        self.stms.extend(hoisted);
        if !subst.is_empty() {
            super::shared_sizes::substitute(&mut fs, &subst);
            for (s, t) in &mut fl {
                let mut v = crate::passes::traverse::Substitute { map: &subst };
                crate::passes::traverse::walk_type(&mut v, t);
                if let SubExp::Var(x) = s {
                    if let Some(r) = subst.get(x) {
                        *s = r.clone();
                    }
                }
            }
        }
        let (bt, bf) = (bound_names(&ts), bound_names(&fs));
        let inside = |d: &SubExp| d.as_var().is_some_and(|v| bt.contains(v) || bf.contains(v));
        let mut ext: Vec<(SubExp, SubExp)> = vec![];
        let mut rets = vec![];
        for ((_, a), (_, b)) in tl.iter().zip(&fl) {
            rets.push(match (a, b) {
                (Type::Prim(p), Type::Prim(_)) => ExtType::Prim(*p),
                (Type::Array { elem, shape: s1 }, Type::Array { shape: s2, .. })
                    if s1.len() == s2.len() =>
                {
                    ExtType::Array {
                        elem: *elem,
                        shape: s1
                            .iter()
                            .zip(s2)
                            .map(|(d1, d2)| {
                                if d1 == d2 && !inside(d1) {
                                    ExtDim::Free(d1.clone())
                                } else {
                                    let pair = (d1.clone(), d2.clone());
                                    let k =
                                        ext.iter().position(|p| *p == pair).unwrap_or_else(|| {
                                            ext.push(pair);
                                            ext.len() - 1
                                        });
                                    ExtDim::Ext(k)
                                }
                            })
                            .collect(),
                    }
                }
                _ => return Err(internal(span, "branches of different types")),
            });
        }
        let ext_vars: Vec<VName> = ext.iter().map(|_| self.names.fresh("ext")).collect();
        let mut elems: Vec<Param> = ext_vars
            .iter()
            .map(|v| Param {
                name: v.clone(),
                ty: I64,
            })
            .collect();
        let mut out = vec![];
        for r in &rets {
            let ty = instantiate_ext(r, &ext_vars);
            let v = self.names.fresh("if_res");
            elems.push(Param {
                name: v.clone(),
                ty: ty.clone(),
            });
            out.push((SubExp::Var(v), ty));
        }
        let mut tres: Vec<SubExp> = ext.iter().map(|p| p.0.clone()).collect();
        tres.extend(tl.into_iter().map(|l| l.0));
        let mut fres: Vec<SubExp> = ext.iter().map(|p| p.1.clone()).collect();
        fres.extend(fl.into_iter().map(|l| l.0));
        let mut ret: Vec<ExtType> = ext.iter().map(|_| ExtType::Prim(PrimType::I64)).collect();
        ret.extend(rets);
        self.emit(
            elems,
            Exp::If {
                cond,
                then_b: Body {
                    stms: ts,
                    result: tres,
                },
                else_b: Body {
                    stms: fs,
                    result: fres,
                },
                ret,
            },
        );
        Ok(tv.rebuild(&mut out.into_iter()))
    }

    fn lower_loop(
        &mut self,
        env: &Env<'a>,
        pat: &'a Pat,
        init: Option<&'a Expr>,
        form: &'a LoopForm,
        body: &'a Expr,
        span: Span,
    ) -> R<SV<'a>> {
        let init_sv = match init {
            Some(e) => self.lower_expr(env, e)?,
            None => self.pat_value(env, pat)?,
        };
        if init_sv.contains_fun() {
            return Err(Diagnostic::not_supported(
                span,
                "loop parameters of function type",
            ));
        }
        // Computed before the loop.
        let mut bound: Option<(SubExp, IntType)> = None;
        let mut xs: Option<SV<'a>> = None;
        let mut cond0 = None;
        match form {
            LoopForm::For(_, _, b) => {
                let (b, t) = self.lower_scalar(env, b)?;
                let it = match t {
                    PrimType::Int(it) => it,
                    _ => return Err(internal(span, "loop bound is not an integer")),
                };
                bound = Some((b, it));
            }
            LoopForm::ForIn(_, arr) => {
                let v = self.lower_expr(env, arr)?;
                bound = Some((outer_dim(&v, arr.span)?, IntType::I64));
                xs = Some(v);
            }
            LoopForm::While(c) => {
                let env0 = self.bind_pat(env, pat, init_sv.clone())?;
                cond0 = Some(self.lower_scalar(&env0, c)?.0);
            }
        }
        let leaves = init_sv.leaves();
        let mut gen: Vec<Vec<bool>> = leaves.iter().map(|(_, t)| vec![false; t.rank()]).collect();
        let loop_attrs = std::mem::take(&mut self.attrs);
        self.attrs = loop_attrs
            .iter()
            .filter(|a| *a == "unsafe")
            .cloned()
            .collect();
        let result = (|| {
            for _attempt in 0..=leaves.iter().map(|(_, t)| t.rank()).sum::<usize>() {
                let mut size_params: Vec<(Param, SubExp)> = vec![];
                let mut vparams: Vec<(Param, SubExp)> = vec![];
                let mut pleaves = vec![];
                for (j, (s, t)) in leaves.iter().enumerate() {
                    let mut t2 = t.clone();
                    if let Type::Array { shape, .. } = &mut t2 {
                        for (d, g) in shape.iter_mut().zip(&gen[j]) {
                            if *g {
                                let v = self.names.fresh("loop_sz");
                                size_params.push((
                                    Param {
                                        name: v.clone(),
                                        ty: I64,
                                    },
                                    d.clone(),
                                ));
                                *d = SubExp::Var(v);
                            }
                        }
                    }
                    let v = self.names.fresh("loop_p");
                    vparams.push((
                        Param {
                            name: v.clone(),
                            ty: t2.clone(),
                        },
                        s.clone(),
                    ));
                    pleaves.push((SubExp::Var(v), t2));
                }
                let params_sv = init_sv.rebuild(&mut pleaves.clone().into_iter());
                let cond_param = cond0.clone().map(|c| {
                    (
                        Param {
                            name: self.names.fresh("loop_cond"),
                            ty: BOOL,
                        },
                        c,
                    )
                });
                let ivar = self.names.fresh(match form {
                    LoopForm::For(i, _, _) => i.as_str(),
                    _ => "i",
                });
                let (stms, (res, cres)) = self.in_body(|s| {
                    let mut benv = s.bind_pat(env, pat, params_sv.clone())?;
                    match form {
                        LoopForm::For(i, _, _) => {
                            let it = bound.as_ref().map(|b| b.1).unwrap_or(IntType::I64);
                            benv = benv.bind(
                                i,
                                SV::Val(SubExp::Var(ivar.clone()), Type::Prim(PrimType::Int(it))),
                            );
                        }
                        LoopForm::ForIn(p, arr) => {
                            let xs = xs
                                .as_ref()
                                .ok_or_else(|| internal(arr.span, "loop array"))?;
                            let row = s.index_with(
                                xs,
                                &[IrDim::Fix(SubExp::Var(ivar.clone()))],
                                &[],
                                arr.span,
                            )?;
                            benv = s.bind_pat(&benv, p, row)?;
                        }
                        LoopForm::While(_) => {}
                    }
                    let r = s.lower_expr(&benv, body)?;
                    if r.contains_fun() {
                        return Err(Diagnostic::not_supported(
                            span,
                            "loop parameters of function type",
                        ));
                    }
                    let cres = match form {
                        LoopForm::While(c) => {
                            let cenv = s.bind_pat(env, pat, r.clone())?;
                            Some(s.lower_scalar(&cenv, c)?.0)
                        }
                        _ => None,
                    };
                    Ok((r.leaves(), cres))
                })?;
                if res.len() != leaves.len() {
                    return Err(internal(
                        span,
                        "loop body result does not match the loop parameters",
                    ));
                }
                let mut retry = false;
                for (j, ((_, rt), (_, pt))) in res.iter().zip(&pleaves).enumerate() {
                    if rt.rank() != pt.rank() {
                        return Err(internal(
                            span,
                            "loop body result rank differs from the parameter",
                        ));
                    }
                    for (k, (a, b)) in rt.shape().iter().zip(pt.shape()).enumerate() {
                        if !gen[j][k] && a != b {
                            gen[j][k] = true;
                            retry = true;
                        }
                    }
                }
                if retry {
                    continue;
                }
                // The loop statement.
                let mut result = vec![];
                for (j, (_, rt)) in res.iter().enumerate() {
                    for (k, d) in rt.shape().iter().enumerate() {
                        if gen[j][k] {
                            result.push(d.clone());
                        }
                    }
                }
                let mut params = size_params.clone();
                if let (Some(p), Some(c)) = (&cond_param, cres) {
                    params.push(p.clone());
                    result.push(c);
                }
                // A parameter updated in place gets one copy of its initial value before the
                // loop, so that the iterations need not copy it (see `copies`).
                for (j, (p, init)) in vparams.iter_mut().enumerate() {
                    let v = match (&p.ty, &*init) {
                        (Type::Array { .. }, SubExp::Var(v)) => v.clone(),
                        _ => continue,
                    };
                    if stms
                        .iter()
                        .any(|s| matches!(&s.exp, Exp::Copy(x) if *x == p.name))
                    {
                        *init = self.let1("loop_init", leaves[j].1.clone(), Exp::Copy(v));
                    }
                }
                params.extend(vparams.iter().cloned());
                result.extend(res.into_iter().map(|l| l.0));
                // Pattern: sizes, condition, values (value types refer to the pattern's sizes).
                let mut subst: Vec<(VName, SubExp)> = vec![];
                let mut elems = vec![];
                for (p, _) in &size_params {
                    let v = self.names.fresh("loop_sz");
                    subst.push((p.name.clone(), SubExp::Var(v.clone())));
                    elems.push(Param { name: v, ty: I64 });
                }
                if cond_param.is_some() {
                    elems.push(Param {
                        name: self.names.fresh("loop_cond"),
                        ty: BOOL,
                    });
                }
                let mut out = vec![];
                for (p, _) in &vparams {
                    let ty = match &p.ty {
                        Type::Array { elem, shape } => Type::Array {
                            elem: *elem,
                            shape: shape
                                .iter()
                                .map(|d| {
                                    match d
                                        .as_var()
                                        .and_then(|v| subst.iter().find(|(n, _)| n == v))
                                    {
                                        Some((_, s)) => s.clone(),
                                        None => d.clone(),
                                    }
                                })
                                .collect(),
                        },
                        t => t.clone(),
                    };
                    let v = self.names.fresh("loop_res");
                    elems.push(Param {
                        name: v.clone(),
                        ty: ty.clone(),
                    });
                    out.push((SubExp::Var(v), ty));
                }
                let lform = match (form, &cond_param) {
                    (LoopForm::While(_), Some((p, _))) => IrLoopForm::While(p.name.clone()),
                    _ => {
                        let (b, it) = bound.clone().ok_or_else(|| internal(span, "loop bound"))?;
                        IrLoopForm::For {
                            i: ivar,
                            it,
                            bound: b,
                        }
                    }
                };
                self.attrs = loop_attrs.clone();
                let mut exp = Exp::Loop {
                    params,
                    form: lform,
                    body: Body { stms, result },
                };
                // Parameters marked `#[true_dep]` in the pattern get the base name reverse mode
                // recognises (see `crate::ad::TRUE_DEP_PARAM`).
                let mut marked = vec![];
                true_dep_leaves(pat, &params_sv, false, &mut marked);
                if !marked.is_empty() {
                    let map: std::collections::HashMap<VName, VName> = marked
                        .into_iter()
                        .map(|v| (v, self.names.fresh(crate::ad::TRUE_DEP_PARAM)))
                        .collect();
                    crate::passes::traverse::walk_exp(
                        &mut crate::passes::traverse::Rename { map: &map },
                        &mut exp,
                    );
                }
                self.emit(elems, exp);
                return Ok(init_sv.rebuild(&mut out.into_iter()));
            }
            Err(internal(span, "loop parameter sizes do not stabilise"))
        })();
        self.attrs = loop_attrs;
        result
    }
}

/// The variables among the leaves of `v` that the loop pattern `p` binds under a `#[true_dep]`
/// attribute (`marked`: inside one already).
fn true_dep_leaves(p: &Pat, v: &SV<'_>, marked: bool, out: &mut Vec<VName>) {
    match &p.kind {
        PatKind::Id(_) | PatKind::Wildcard => {
            if marked {
                out.extend(v.leaves().into_iter().filter_map(|(s, _)| match s {
                    SubExp::Var(x) => Some(x),
                    SubExp::Const(_) => None,
                }));
            }
        }
        PatKind::Tuple(ps) => match v {
            SV::Tuple(vs) if vs.len() == ps.len() => {
                for (p, v) in ps.iter().zip(vs) {
                    true_dep_leaves(p, v, marked, out);
                }
            }
            v if ps.len() == 1 => true_dep_leaves(&ps[0], v, marked, out),
            _ => {}
        },
        PatKind::Constr(..) | PatKind::Lit(..) => {}
        PatKind::Record(fs) => {
            if let Ok(pairs) = record_pat_fields(fs, v.clone(), p.span) {
                for (q, w) in pairs {
                    true_dep_leaves(q, &w, marked, out);
                }
            }
        }
        PatKind::Ascribed(q, _) => true_dep_leaves(q, v, marked, out),
        PatKind::Attr(a, q) => {
            let m = marked || a.name() == Some("true_dep");
            true_dep_leaves(q, v, m, out)
        }
    }
}

/// The type of a result with existential dimensions replaced by the bound size variables.
pub(crate) fn instantiate_ext(t: &ExtType, ext_vars: &[VName]) -> Type {
    match t {
        ExtType::Prim(p) => Type::Prim(*p),
        ExtType::Array { elem, shape } => Type::Array {
            elem: *elem,
            shape: shape
                .iter()
                .map(|d| match d {
                    ExtDim::Free(s) => s.clone(),
                    ExtDim::Ext(k) => SubExp::Var(ext_vars[*k].clone()),
                })
                .collect(),
        },
        ExtType::Acc { cert, shape, elems } => Type::Acc {
            cert: cert.clone(),
            shape: shape.clone(),
            elems: elems.clone(),
        },
    }
}

/// The scalar of a value.
pub(crate) fn scalar(v: &SV<'_>, span: Span) -> R<(SubExp, PrimType)> {
    match v {
        SV::Val(s, Type::Prim(p)) => Ok((s.clone(), *p)),
        _ => Err(internal(span, "expected a scalar")),
    }
}

/// Component `i` of a tuple or record value.
fn project<'a>(v: SV<'a>, i: usize, span: Span) -> R<SV<'a>> {
    match v {
        SV::Tuple(mut vs) if i < vs.len() => Ok(vs.swap_remove(i)),
        _ => Err(internal(span, "projection from a non-tuple")),
    }
}

/// The position of field `f` among the components of a value of type `t` (a record's fields
/// in [`field_order`], a tuple's by number), and the field's type.
fn field_pos(env: &Env<'_>, t: Option<&SType>, f: &str, span: Span) -> R<(usize, Option<SType>)> {
    if let Some(t) = &super::types::resolve_tyvars(env, t) {
        if let Some(i) = t.field_index(f) {
            let ft = t
                .components()
                .and_then(|cs| cs.get(i).map(|c| (*c).clone()));
            return Ok((i, ft));
        }
    }
    match f.parse::<usize>() {
        Ok(i) => Ok((i, None)),
        Err(_) => Err(internal(
            span,
            &format!("the type of the record with field `{f}` is unknown"),
        )),
    }
}

/// `r with path = v`: the value `r` (of type `t`) with the component at `path` replaced.
fn update_path<'a>(
    env: &Env<'_>,
    r: SV<'a>,
    t: Option<&SType>,
    path: &[(String, Span)],
    v: SV<'a>,
    span: Span,
) -> R<SV<'a>> {
    let Some(((f, _), rest)) = path.split_first() else {
        return Ok(v);
    };
    let (i, ft) = field_pos(env, t, f, span)?;
    match r {
        SV::Tuple(mut vs) if i < vs.len() => {
            let old = std::mem::replace(&mut vs[i], SV::Tuple(vec![]));
            vs[i] = update_path(env, old, ft.as_ref(), rest, v, span)?;
            Ok(SV::Tuple(vs))
        }
        _ => Err(internal(span, "record update of a non-record")),
    }
}

/// The subpatterns of a record pattern paired with the field values of `v` (the record's
/// components in field order).
pub(crate) fn record_pat_fields<'p, 'a>(
    fs: &'p [(String, Span, Pat)],
    v: SV<'a>,
    span: Span,
) -> R<Vec<(&'p Pat, SV<'a>)>> {
    let mut order: Vec<&(String, Span, Pat)> = fs.iter().collect();
    order.sort_by(|a, b| field_order(&a.0, &b.0));
    match v {
        SV::Tuple(vs) if vs.len() == order.len() => {
            Ok(order.into_iter().map(|(_, _, p)| p).zip(vs).collect())
        }
        _ => Err(internal(span, "record pattern does not match the value")),
    }
}

/// Binds the size parameters and type variables of a parameter type from the argument. Only
/// the declared size parameters are bound (other sizes name variables already in scope); type
/// variables are bound when declared or not yet known.
fn match_type<'a>(
    env: Env<'a>,
    tparams: &[TypeParam],
    ty: &SType,
    sv: &SV<'a>,
    strip: usize,
) -> Env<'a> {
    let declared = |n: &str, size: bool| {
        tparams.iter().any(|p| match p {
            TypeParam::Size(m, _) => size && m == n,
            TypeParam::Type { name, .. } => !size && name == n,
        })
    };
    match ty {
        SType::Var(v) if declared(&v.0, false) || env.lookup_tyvar(&v.0).is_none() => {
            env.bind_tyvar(&v.0, super::types::sv_to_stype(sv, strip))
        }
        SType::Tuple(_) | SType::Record(_) => match (ty.components(), sv) {
            (Some(ts), SV::Tuple(vs)) if vs.len() == ts.len() => ts
                .into_iter()
                .zip(vs)
                .fold(env, |e, (t, v)| match_type(e, tparams, t, v, strip)),
            _ => env,
        },
        SType::Sum(cs) => match sv {
            SV::Tuple(parts) if parts.len() == cs.len() + 1 => {
                cs.iter()
                    .zip(&parts[1..])
                    .fold(env, |e, ((_, ts), p)| match p {
                        SV::Tuple(vs) if vs.len() == ts.len() => ts
                            .iter()
                            .zip(vs)
                            .fold(e, |e, (t, v)| match_type(e, tparams, t, v, strip)),
                        _ => e,
                    })
            }
            _ => env,
        },
        SType::Array { elem, shape, .. } => {
            let mut env = env;
            if let Some((_, t)) = sv.leaves().first() {
                for (k, s) in shape.iter().enumerate() {
                    if let (Size::Named(n), Some(d)) = (s, t.shape().get(strip + k)) {
                        if declared(n, true) {
                            env = env.bind(n, SV::Val(d.clone(), I64));
                        }
                    }
                }
            }
            match_type(env, tparams, elem, sv, strip + shape.len())
        }
        _ => env,
    }
}

/// The dimensions occurring in a type.
fn collect_dims<'t>(t: &'t SType, out: &mut Vec<&'t Size>) {
    match t {
        SType::Array { elem, shape, .. } => {
            out.extend(shape);
            collect_dims(elem, out)
        }
        SType::Tuple(ts) => ts.iter().for_each(|t| collect_dims(t, out)),
        SType::Record(fs) => fs.iter().for_each(|(_, t)| collect_dims(t, out)),
        SType::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .for_each(|t| collect_dims(t, out)),
        SType::Fun(a, r) => {
            collect_dims(a, out);
            collect_dims(r, out)
        }
        SType::Acc(t) => collect_dims(t, out),
        SType::Prim(_) | SType::Var(_) => {}
    }
}

/// The size parameters of a top-level function that its parameters' types never have as a
/// plain dimension (`[p]t`, which the argument's shape gives, see [`match_type`]), as the type
/// checker found them.
pub(crate) fn size_expr_params(d: &ValDec) -> Vec<&str> {
    d.hidden_sizes.iter().map(String::as_str).collect()
}

/// The size that the type `used` has where the declared type `decl` mentions the size
/// parameter `p`: `[p*q]t` against `[a*b]t` gives `a` (the syntactic matching of the type
/// checker's `unify_size`).
fn size_at(decl: &SType, used: &SType, p: &str) -> Option<Size> {
    fn in_size(d: &Size, u: &Size, p: &str) -> Option<Size> {
        match (d, u) {
            (Size::Named(n), u) if n == p && *u != Size::Unknown => Some(u.clone()),
            (Size::Bin(o1, a1, b1), Size::Bin(o2, a2, b2)) if o1 == o2 => {
                in_size(a1, a2, p).or_else(|| in_size(b1, b2, p))
            }
            _ => None,
        }
    }
    match (decl, used) {
        (
            SType::Array {
                elem: e1,
                shape: s1,
                ..
            },
            SType::Array {
                elem: e2,
                shape: s2,
                ..
            },
        ) => s1
            .iter()
            .zip(s2)
            .find_map(|(d, u)| in_size(d, u, p))
            .or_else(|| (s1.len() == s2.len()).then(|| size_at(e1, e2, p)).flatten()),
        (SType::Fun(a1, r1), SType::Fun(a2, r2)) => {
            size_at(a1, a2, p).or_else(|| size_at(r1, r2, p))
        }
        _ => match (decl.components(), used.components()) {
            (Some(ds), Some(us)) if ds.len() == us.len() => {
                ds.into_iter().zip(us).find_map(|(d, u)| size_at(d, u, p))
            }
            _ => None,
        },
    }
}
