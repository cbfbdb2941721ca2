//! Inference for expressions and patterns.

use super::builtins::{module_member, module_of};
use super::env::{Binding, Scheme};
use super::ty::{PrimSet, Ty};
use super::unify::field_type;
use super::Checker;
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::{
    BinOp, DimIndex, Expr, ExprKind, Literal, LoopForm, OpRef, Pat, PatKind, QualName, TypeExp,
    UnOp,
};
use crate::syntax::types::Size;

/// How deeply expressions may nest before the checker gives up (instead of overflowing the
/// stack): as deep as the parser builds them. The checker runs on a thread with
/// [`crate::COMPILER_STACK`] bytes of stack.
const MAX_DEPTH: u32 = crate::syntax::parser::MAX_TREE_DEPTH;

impl Checker {
    /// Infer the types of patterns bound together (function or lambda parameters, or one `let`
    /// pattern), rejecting a name bound twice.
    pub(crate) fn infer_pats(&mut self, ps: &mut [Pat]) -> Result<Vec<Ty>, Diagnostic> {
        let mut names: Vec<(String, Span)> = vec![];
        for p in ps.iter() {
            pat_names(p, &mut names);
        }
        for (i, (n, s)) in names.iter().enumerate() {
            if let Some((_, first)) = names[..i].iter().find(|(m, _)| m == n) {
                return Err(Diagnostic::error(
                    *s,
                    format!("`{n}` is also bound earlier in this binding"),
                )
                .with_label("bound again here")
                .with_secondary(*first, "first bound here"));
            }
        }
        ps.iter_mut().map(|p| self.infer_pat(p)).collect()
    }

    /// Infer the type of a pattern, binding its names in the innermost scope.
    pub(crate) fn infer_pat(&mut self, p: &mut Pat) -> Result<Ty, Diagnostic> {
        let t = match &mut p.kind {
            PatKind::Id(n) => {
                let t = self.fresh(p.span);
                let n = n.clone();
                self.bind_var(&n, Binding::Val(Scheme::mono(t.clone())));
                t
            }
            PatKind::Wildcard => self.fresh(p.span),
            PatKind::Tuple(ps) => {
                let mut ts = vec![];
                for q in ps.iter_mut() {
                    ts.push(self.infer_pat(q)?);
                }
                if ts.len() == 1 {
                    ts.pop().unwrap_or_else(Ty::unit)
                } else {
                    Ty::Tuple(ts)
                }
            }
            PatKind::Record(fs) => {
                check_distinct_fields(fs.iter().map(|(n, s, _)| (n, *s)))?;
                let mut ts = vec![];
                for (n, _, q) in fs.iter_mut() {
                    ts.push((n.clone(), self.infer_pat(q)?));
                }
                Ty::record(ts)
            }
            PatKind::Constr(c, ps) => {
                let mut ts = vec![];
                for q in ps.iter_mut() {
                    ts.push(self.infer_pat(q)?);
                }
                let c = c.clone();
                self.constr_type(c, ts, p.span)
            }
            PatKind::Lit(l, neg) => match l {
                Literal::Bool(_) if *neg => {
                    return Err(Diagnostic::error(p.span, "a boolean cannot be negated"))
                }
                Literal::Int(_, Some(t)) | Literal::Float(_, Some(t)) => Ty::Prim(*t),
                Literal::Int(_, None) => self.fresh_prims(PrimSet::nums(), p.span),
                Literal::Float(_, None) => self.fresh_prims(PrimSet::floats(), p.span),
                Literal::Bool(_) => Ty::bool(),
            },
            PatKind::Ascribed(q, te) => {
                let at = self.conv_type(te)?;
                let pt = self.infer_pat(q)?;
                self.expect(&at, &pt, q.span)?;
                at
            }
            PatKind::Attr(a, q) => {
                let a = a.clone();
                self.check_attr(&a);
                self.infer_pat(q)?
            }
        };
        p.ty = Some(t.to_type());
        Ok(t)
    }

    /// Infer the type of an expression (and record it in `e.ty`).
    pub(crate) fn infer(&mut self, e: &mut Expr) -> Result<Ty, Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(Diagnostic::error(e.span, "expression is nested too deeply"));
        }
        let r = self.infer_kind(e);
        self.depth -= 1;
        let t = r?;
        e.ty = Some(t.to_type());
        Ok(t)
    }

    fn lookup_var(&mut self, q: &QualName, span: Span) -> Result<Ty, Diagnostic> {
        let unknown =
            || Diagnostic::error(span, format!("unknown name `{q}`")).with_label("not in scope");
        match q.quals.as_slice() {
            [] if q.name.starts_with('_') => Err(Diagnostic::error(
                span,
                format!("names starting with an underscore cannot be used: `{q}`"),
            )),
            [] => match self.lookup_unqual(&q.name) {
                Some(Binding::Val(s)) => {
                    let t = self.instantiate(&s, span);
                    if let Some((sp, n, _, _)) = self.sized_uses.last_mut() {
                        if *sp == span && n.is_empty() {
                            *n = q.name.clone();
                        }
                    }
                    Ok(t)
                }
                Some(Binding::Recursive) => Err(Diagnostic::error(
                    span,
                    format!(
                        "recursion is not supported (as in Futhark): `{}` refers to itself",
                        q.name
                    ),
                )
                .with_label("recursive reference")),
                None => Err(unknown()),
            },
            [m] if m == crate::builtins::INTRINSICS_MODULE => {
                match crate::builtins::intrinsics_member(&q.name)
                    .and_then(|k| self.intrinsics.get(k).cloned())
                {
                    Some(s) => Ok(self.instantiate(&s, span)),
                    None => Err(unknown()),
                }
            }
            [m] => match module_of(m).and_then(|p| module_member(p, &q.name)) {
                Some(t) => Ok(t),
                None => Err(unknown()),
            },
            _ => Err(unknown()),
        }
    }

    /// Require that `t` contains no function type, now (error `msg` at `span`) and later (the
    /// variables in it are constrained).
    fn no_functions(&mut self, t: &Ty, span: Span, msg: &str) -> Result<(), Diagnostic> {
        match self.require_nofun(t) {
            Ok(()) => Ok(()),
            Err(_) => {
                let z = self.zonk(t);
                Err(Diagnostic::error(span, msg).with_label(format!("this has type `{z}`")))
            }
        }
    }

    /// Apply a function of type `ft` to an argument of type `at`; returns the result type.
    fn apply_arg(
        &mut self,
        ft: &Ty,
        at: &Ty,
        arg_span: Span,
        fun_span: Span,
    ) -> Result<Ty, Diagnostic> {
        match self.shallow(ft) {
            Ty::Fun(p, r) => {
                self.expect(&p, at, arg_span)?;
                Ok(*r)
            }
            Ty::Var(_) => {
                let r = self.fresh(fun_span);
                let f2 = Ty::fun(at.clone(), r.clone());
                self.expect(&f2, ft, fun_span)?;
                Ok(r)
            }
            other => {
                let other = self.zonk(&other);
                Err(Diagnostic::error(
                    fun_span,
                    format!("type mismatch: a value of type `{other}` is applied to an argument, but it is not a function"),
                )
                .with_label(format!("this has type `{other}`")))
            }
        }
    }

    /// The operand and result types of a builtin binary operator: `(left, right, result)`.
    fn binop_types(&mut self, op: BinOp, span: Span) -> (Ty, Ty, Ty) {
        use BinOp::*;
        let in_module = |s: &Self| {
            s.open_module()
                .filter(|m| module_member(*m, op.symbol()).is_some())
                .map(Ty::Prim)
        };
        let over = |s: &mut Self, set: PrimSet| match in_module(s) {
            Some(t) => t,
            None => s.fresh_prims(set, span),
        };
        match op {
            Add | Sub | Mul | Div | Mod | Pow => {
                let t = over(self, PrimSet::nums());
                (t.clone(), t.clone(), t)
            }
            Quot | Rem | Shl | Shr | UShr | BitAnd | BitOr | BitXor => {
                let t = over(self, PrimSet::ints());
                (t.clone(), t.clone(), t)
            }
            Eq | Neq => {
                let t = match in_module(self) {
                    Some(t) => t,
                    None => {
                        let t = self.fresh(span);
                        if let Ty::Var(v) = t {
                            self.vars[v as usize].nofun = true;
                        }
                        t
                    }
                };
                (t.clone(), t, Ty::bool())
            }
            Lt | Le | Gt | Ge => {
                let t = over(self, PrimSet::prims());
                (t.clone(), t, Ty::bool())
            }
            LogAnd | LogOr => (Ty::bool(), Ty::bool(), Ty::bool()),
            PipeRight => {
                let a = self.fresh(span);
                let b = self.fresh(span);
                (a.clone(), Ty::fun(a, b.clone()), b)
            }
            PipeLeft => {
                let a = self.fresh(span);
                let b = self.fresh(span);
                (Ty::fun(a.clone(), b.clone()), a, b)
            }
            Concat => {
                // `[n]a -> [m]a -> [n+m]a`
                let a = self.fresh(span);
                let n = self.fresh_size();
                let m = self.fresh_size();
                let nm = Size::bin(crate::syntax::types::SizeOp::Add, n.clone(), m.clone());
                (Ty::arr(n, a.clone()), Ty::arr(m, a.clone()), Ty::arr(nm, a))
            }
        }
    }

    /// Operand and result types of an operator reference (builtin or backticked function).
    fn opref_types(&mut self, op: &mut OpRef, span: Span) -> Result<(Ty, Ty, Ty), Diagnostic> {
        match op {
            OpRef::Builtin(b) => Ok(self.binop_types(*b, span)),
            OpRef::Fun(f) => {
                let ft = self.infer(f)?;
                let (l, r, res) = (self.fresh(span), self.fresh(span), self.fresh(span));
                let want = Ty::fun(l.clone(), Ty::fun(r.clone(), res.clone()));
                match self.unify(&want, &ft) {
                    Ok(()) => Ok((l, r, res)),
                    Err(_) => {
                        let ft = self.zonk(&ft);
                        Err(Diagnostic::error(
                            f.span,
                            format!("type mismatch: an infix operator must take two arguments, but this has type `{ft}`"),
                        ))
                    }
                }
            }
        }
    }

    /// Project field `field` out of a value of type `t`.
    fn project(&mut self, t: &Ty, field: &str, span: Span) -> Result<Ty, Diagnostic> {
        match self.shallow(t) {
            sh @ (Ty::Tuple(_) | Ty::Record(_)) => field_type(&sh, field).ok_or_else(|| {
                let t = self.zonk(t);
                Diagnostic::error(span, format!("type `{t}` has no field `{field}`"))
                    .with_label("no such field")
            }),
            Ty::Var(v) => {
                let info = &self.vars[v as usize];
                if let Some(s) = info.prims {
                    return Err(Diagnostic::error(
                        span,
                        format!(
                            "type mismatch: expected a tuple or a record, found {}",
                            s.describe()
                        ),
                    ));
                }
                if let Some(ft) = info.fields.get(field) {
                    return Ok(ft.clone());
                }
                let ft = self.fresh(span);
                self.vars[v as usize]
                    .fields
                    .insert(field.to_string(), ft.clone());
                Ok(ft)
            }
            other => {
                let other = self.zonk(&other);
                Err(Diagnostic::error(
                    span,
                    format!(
                        "type mismatch: cannot project field `{field}` from a value of type \
                         `{other}`"
                    ),
                )
                .with_label("not a tuple or a record"))
            }
        }
    }

    /// The type of `r with path = v` where `r : rt` and `v : vt`: `rt` with the field at `path`
    /// replaced by `vt` (a record update may change the field's type, as in Futhark). The
    /// record's type must be known here, also as in Futhark.
    fn update_field(
        &mut self,
        rt: &Ty,
        path: &[(String, Span)],
        vt: Ty,
        rspan: Span,
    ) -> Result<Ty, Diagnostic> {
        let Some(((field, fspan), rest)) = path.split_first() else {
            return Ok(vt);
        };
        let sh = self.shallow(rt);
        let Some(old) = field_type(&sh, field) else {
            let z = self.zonk(rt);
            return Err(match sh {
                Ty::Var(_) => Diagnostic::error(
                    rspan,
                    format!(
                        "the type of the updated value must be known before `with {field} = ...` \
                         (here `{z}`); add a type annotation"
                    ),
                ),
                _ => Diagnostic::error(*fspan, format!("type `{z}` has no field `{field}`"))
                    .with_label("no such field"),
            });
        };
        let new = self.update_field(&old, rest, vt, rspan)?;
        Ok(match sh {
            Ty::Tuple(mut ts) => {
                if let Ok(i) = field.parse::<usize>() {
                    ts[i] = new;
                }
                Ty::Tuple(ts)
            }
            Ty::Record(fs) => Ty::Record(
                fs.into_iter()
                    .map(|(n, t)| {
                        if n == *field {
                            (n, new.clone())
                        } else {
                            (n, t)
                        }
                    })
                    .collect(),
            ),
            _ => sh,
        })
    }

    /// The type of constructor `#c` applied to payloads of types `ts`: a variable that must
    /// become a sum type with that constructor (see [`super::unify::VarInfo::constrs`]).
    fn constr_type(&mut self, c: String, ts: Vec<Ty>, span: Span) -> Ty {
        let t = self.fresh(span);
        if let Ty::Var(v) = t {
            self.vars[v as usize].constrs.insert(c, ts);
        }
        t
    }

    /// `r.a.b` parsed as a qualified name, with `r` a variable in scope: the projections it
    /// stands for (a value variable shadows a module of the same name).
    fn as_field_access(&mut self, q: &QualName, span: Span) -> Option<Expr> {
        let first = q.quals.first()?;
        self.lookup_unqual(first)?;
        let lo = span.lo;
        let mut end = lo + first.len() as u32;
        let mut e = Expr::new(
            ExprKind::Var(QualName::unqual(first.clone())),
            Span { hi: end, ..span },
        );
        for f in q.quals[1..].iter().chain(std::iter::once(&q.name)) {
            end += 1 + f.len() as u32;
            e = Expr::new(
                ExprKind::Project(Box::new(e), f.clone()),
                Span {
                    hi: end.min(span.hi),
                    ..span
                },
            );
        }
        Some(e)
    }

    /// The type of `a[idxs]` where `a : at` (the expression at `aspan`).
    fn index_type(
        &mut self,
        at: &Ty,
        aspan: Span,
        idxs: &mut [DimIndex],
        span: Span,
    ) -> Result<Ty, Diagnostic> {
        let mut slices = 0;
        for d in idxs.iter_mut() {
            match d {
                DimIndex::Fix(e) => {
                    let t = self.infer(e)?;
                    self.require(PrimSet::signed(), &t, e.span)?;
                }
                DimIndex::Slice(a, b, c) => {
                    slices += 1;
                    for e in [a, b, c].into_iter().flatten() {
                        let t = self.infer(e)?;
                        self.expect(&Ty::i64(), &t, e.span)?;
                    }
                }
            }
        }
        let z = self.zonk(at);
        let rank = array_rank(&z);
        if rank.is_some_and(|r| r < idxs.len()) {
            return Err(Diagnostic::error(
                span,
                format!(
                    "cannot index {} dimension(s) into a value of type `{z}`",
                    idxs.len()
                ),
            )
            .with_secondary(aspan, format!("this has type `{z}`")));
        }
        let elem = self.fresh(span);
        let mut whole = elem.clone();
        for _ in 0..idxs.len() {
            whole = Ty::arr(Size::Unknown, whole);
        }
        self.expect(&whole, at, aspan)?;
        // Keep the sizes of the sliced dimensions where they are known? They change with the
        // slice, so the result's sliced dimensions are unknown.
        let mut res = elem;
        for _ in 0..slices {
            res = Ty::arr(Size::Unknown, res);
        }
        Ok(res)
    }

    /// The type of the initial value of `loop p for ...` with the initialiser omitted: the
    /// pattern's names as variables.
    fn pat_as_value(&mut self, p: &Pat) -> Result<Ty, Diagnostic> {
        match &p.kind {
            PatKind::Id(n) => self.lookup_var(&QualName::unqual(n.clone()), p.span),
            PatKind::Tuple(ps) => {
                let mut ts = vec![];
                for q in ps {
                    ts.push(self.pat_as_value(q)?);
                }
                Ok(if ts.len() == 1 {
                    ts.pop().unwrap_or_else(Ty::unit)
                } else {
                    Ty::Tuple(ts)
                })
            }
            PatKind::Record(fs) => {
                let mut ts = vec![];
                for (n, _, q) in fs {
                    ts.push((n.clone(), self.pat_as_value(q)?));
                }
                Ok(Ty::record(ts))
            }
            PatKind::Ascribed(q, _) | PatKind::Attr(_, q) => self.pat_as_value(q),
            PatKind::Constr(..) | PatKind::Lit(..) => Err(Diagnostic::error(
                p.span,
                "a loop without an initial value needs named loop parameters",
            )),
            PatKind::Wildcard => Err(Diagnostic::error(
                p.span,
                "a loop without an initial value needs named loop parameters",
            )),
        }
    }

    fn infer_kind(&mut self, e: &mut Expr) -> Result<Ty, Diagnostic> {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Lit(l) => Ok(match l {
                Literal::Int(_, Some(p)) | Literal::Float(_, Some(p)) => Ty::Prim(*p),
                Literal::Int(_, None) => self.fresh_prims(PrimSet::nums(), span),
                Literal::Float(_, None) => self.fresh_prims(PrimSet::floats(), span),
                Literal::Bool(_) => Ty::bool(),
            }),
            ExprKind::Var(q) => {
                let q = q.clone();
                if let Some(access) = self.as_field_access(&q, span) {
                    e.kind = access.kind;
                    return self.infer_kind(e);
                }
                self.lookup_var(&q, span)
            }
            ExprKind::Record(fs) => {
                check_distinct_fields(fs.iter().map(|(n, s, _)| (n, *s)))?;
                let mut ts = vec![];
                for (n, _, x) in fs.iter_mut() {
                    ts.push((n.clone(), self.infer(x)?));
                }
                Ok(Ty::record(ts))
            }
            ExprKind::Constr(c, args) => {
                let mut ts = vec![];
                for x in args.iter_mut() {
                    ts.push(self.infer(x)?);
                }
                let c = c.clone();
                Ok(self.constr_type(c, ts, span))
            }
            ExprKind::Match(scrutinee, cases) => {
                let st = self.infer(scrutinee)?;
                let res = self.fresh(span);
                let mut case_types = vec![];
                for (pat, body) in cases.iter_mut() {
                    self.push_vars();
                    let r = (|| {
                        let pt = self.infer_pats(std::slice::from_mut(pat))?.remove(0);
                        self.expect(&st, &pt, pat.span)?;
                        let bt = self.infer(body)?;
                        self.expect(&res, &bt, body.span)?;
                        Ok(bt)
                    })();
                    self.pop_scope();
                    case_types.push(r?);
                }
                self.no_functions(
                    &res,
                    span,
                    "the cases of a `match` cannot be functions (as in Futhark)",
                )?;
                Ok(case_types
                    .iter()
                    .fold(res.clone(), |j, t| self.join_branch_sizes(&j, t)))
            }
            ExprKind::RecordUpdate {
                record,
                path,
                value,
            } => {
                let rt = self.infer(record)?;
                let vt = self.infer(value)?;
                let path = path.clone();
                self.update_field(&rt, &path, vt, record.span)
            }
            ExprKind::Tuple(es) => {
                let mut ts = vec![];
                for x in es.iter_mut() {
                    ts.push(self.infer(x)?);
                }
                Ok(if ts.len() == 1 {
                    ts.pop().unwrap_or_else(Ty::unit)
                } else {
                    Ty::Tuple(ts)
                })
            }
            ExprKind::ArrayLit(es) => {
                let elem = self.fresh(span);
                for x in es.iter_mut() {
                    let t = self.infer(x)?;
                    self.expect(&elem, &t, x.span)?;
                }
                self.no_functions(&elem, span, "arrays of functions are not permitted")?;
                Ok(Ty::arr(Size::Const(es.len() as i64), elem))
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                let t = self.fresh_prims(PrimSet::ints(), span);
                for x in [Some(start), second.as_mut(), Some(end)]
                    .into_iter()
                    .flatten()
                {
                    let xt = self.infer(x)?;
                    self.expect(&t, &xt, x.span)?;
                }
                Ok(Ty::arr(Size::Unknown, t))
            }
            ExprKind::BinOp(op, l, r) => {
                let (lt, rt, res) = self.opref_types(op, span)?;
                let a = self.infer(l)?;
                self.expect(&lt, &a, l.span)?;
                let b = self.infer(r)?;
                self.expect(&rt, &b, r.span)?;
                Ok(res)
            }
            ExprKind::UnOp(op, x) => {
                let t = self.infer(x)?;
                match op {
                    UnOp::Neg => match self
                        .open_module()
                        .filter(|m| module_member(*m, "-").is_some())
                    {
                        Some(m) => self.expect(&Ty::Prim(m), &t, x.span)?,
                        None => self.require(PrimSet::nums(), &t, x.span)?,
                    },
                    UnOp::Not => self.require(PrimSet::ints_bool(), &t, x.span)?,
                }
                Ok(t)
            }
            ExprKind::Apply(f, args) => {
                let mut ft = self.infer(f)?;
                let fspan = f.span;
                if let Some(sizes) = self.size_args.remove(&fspan) {
                    for (k, v) in sizes {
                        if let Some(a) = args.get(k) {
                            let d = self.size_of_arg(a);
                            self.unify_size(&v, &d);
                        }
                    }
                }
                for a in args.iter_mut() {
                    let at = self.infer(a)?;
                    ft = self.apply_arg(&ft, &at, a.span, fspan)?;
                }
                Ok(ft)
            }
            ExprKind::Lambda { params, ret, body } => {
                self.push_vars();
                let r = (|| {
                    let pts = self.infer_pats(params)?;
                    let rt = match ret {
                        Some(te) => Some(self.conv_type(te)?),
                        None => None,
                    };
                    let bt = self.infer(body)?;
                    let rt = match rt {
                        Some(rt) => {
                            self.expect(&rt, &bt, body.span)?;
                            rt
                        }
                        None => bt,
                    };
                    Ok(pts.into_iter().rev().fold(rt, |acc, p| Ty::fun(p, acc)))
                })();
                self.pop_scope();
                r
            }
            ExprKind::OpSection(op) => {
                let (l, r, res) = self.opref_types(op, span)?;
                Ok(Ty::fun(l, Ty::fun(r, res)))
            }
            ExprKind::LeftSection(op, x) => {
                let (l, r, res) = self.opref_types(op, span)?;
                let t = self.infer(x)?;
                self.expect(&l, &t, x.span)?;
                Ok(Ty::fun(r, res))
            }
            ExprKind::RightSection(op, x) => {
                let (l, r, res) = self.opref_types(op, span)?;
                let t = self.infer(x)?;
                self.expect(&r, &t, x.span)?;
                Ok(Ty::fun(l, res))
            }
            ExprKind::ProjectSection(fields) => {
                let a = self.fresh(span);
                let mut cur = a.clone();
                for f in fields.iter() {
                    cur = self.project(&cur, f, span)?;
                }
                Ok(Ty::fun(a, cur))
            }
            ExprKind::Project(x, f) => {
                let t = self.infer(x)?;
                let f = f.clone();
                self.project(&t, &f, span)
            }
            ExprKind::If(c, a, b) => {
                let ct = self.infer(c)?;
                self.expect(&Ty::bool(), &ct, c.span)?;
                let at = self.infer(a)?;
                let bt = self.infer(b)?;
                self.expect(&at, &bt, b.span)?;
                self.no_functions(
                    &at,
                    span,
                    "the branches of a conditional cannot be functions (as in Futhark)",
                )?;
                Ok(self.join_branch_sizes(&at, &bt))
            }
            ExprKind::Let { pat, value, body } => {
                let vt = self.infer(value)?;
                self.push_vars();
                let r = (|| {
                    let pt = self.infer_pats(std::slice::from_mut(pat))?.remove(0);
                    self.expect(&pt, &vt, value.span)?;
                    self.infer(body)
                })();
                self.pop_scope();
                r
            }
            ExprKind::LetFun {
                name,
                type_params,
                params,
                ret,
                value,
                body,
                ..
            } => {
                let first_var = self.vars.len();
                self.level += 1;
                let tps = self.push_type_params(type_params);
                let r = tps.as_ref().map_err(|e| e.clone()).and_then(|tps| {
                    let sizes = tps.sizes.clone();
                    self.check_function(name, &sizes, params, ret, value, true)
                });
                self.type_scopes.pop();
                self.level -= 1;
                let ft = r?;
                if self.size_exceeds(&ft, super::MAX_TYPE_SIZE) {
                    return Err(super::too_large(span));
                }
                let ft = self.zonk(&ft);
                // Generalise the variables of the function's type that belong to it and are not
                // constrained by overloading or projections.
                let mut fv = vec![];
                self.free_vars(&ft, &mut fv);
                // Variables mentioned by the field constraints of a variable that stays
                // monomorphic must stay monomorphic too.
                let mut blocked = vec![];
                let mut work: Vec<u32> = fv.clone();
                while let Some(v) = work.pop() {
                    let info = self.vars[v as usize].clone();
                    for t in info.fields.values().chain(info.constrs.values().flatten()) {
                        let mut inner = vec![];
                        self.free_vars(t, &mut inner);
                        for w in inner {
                            if !blocked.contains(&w) {
                                blocked.push(w);
                                work.push(w);
                            }
                        }
                    }
                }
                let tps = tps?;
                let mut ps = tps.tys;
                let mut nofun_params = tps.nofun;
                for v in fv {
                    let info = self.vars[v as usize].clone();
                    if info.level > self.level
                        && info.prims.is_none()
                        && info.fields.is_empty()
                        && info.constrs.is_empty()
                        && !blocked.contains(&v)
                    {
                        let n = self.gen_name(&ps);
                        if info.nofun {
                            nofun_params.push(n.clone());
                        }
                        self.vars[v as usize].link = Some(Ty::Param(n.clone()));
                        ps.push(n);
                    }
                }
                for v in first_var..self.vars.len() {
                    let lvl = self.level;
                    let info = &mut self.vars[v];
                    info.level = info.level.min(lvl);
                }
                let scheme = Scheme {
                    params: ps,
                    nofun_params,
                    ty: self.zonk(&ft),
                    erase_sizes: true,
                    size_params: vec![],
                    hidden_sizes: vec![],
                    named_params: vec![],
                };
                self.push_vars();
                let name = name.clone();
                self.bind_var(&name, Binding::Val(scheme));
                let r = self.infer(body);
                self.pop_scope();
                r
            }
            ExprKind::LetWith {
                name,
                name_span,
                indices,
                value,
                body,
            } => {
                let at = self.lookup_var(&QualName::unqual(name.clone()), *name_span)?;
                let et = self.index_type(&at, *name_span, indices, span)?;
                let vt = self.infer(value)?;
                self.expect(&et, &vt, value.span)?;
                self.push_vars();
                let name = name.clone();
                self.bind_var(&name, Binding::Val(Scheme::mono(at)));
                let r = self.infer(body);
                self.pop_scope();
                r
            }
            ExprKind::Update {
                array,
                indices,
                value,
            } => {
                let at = self.infer(array)?;
                let et = self.index_type(&at, array.span, indices, span)?;
                let vt = self.infer(value)?;
                self.expect(&et, &vt, value.span)?;
                Ok(at)
            }
            ExprKind::Index(a, idxs) => {
                let at = self.infer(a)?;
                let aspan = a.span;
                self.index_type(&at, aspan, idxs, span)
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => {
                let (it, ispan) = match init {
                    Some(i) => (self.infer(i)?, i.span),
                    None => (self.pat_as_value(pat)?, pat.span),
                };
                // The loop bound or the iterated array is evaluated before the loop.
                let form_t = match form {
                    LoopForm::For(_, _, n) => {
                        let nt = self.infer(n)?;
                        self.require(PrimSet::ints(), &nt, n.span)?;
                        Some(nt)
                    }
                    LoopForm::ForIn(_, xs) => {
                        let xt = self.infer(xs)?;
                        let row = self.fresh(xs.span);
                        self.expect(&Ty::arr(Size::Unknown, row.clone()), &xt, xs.span)?;
                        Some(row)
                    }
                    LoopForm::While(_) => None,
                };
                self.push_vars();
                let r = (|| {
                    let pt = self.infer_pat(pat)?;
                    self.expect(&pt, &it, ispan)?;
                    self.no_functions(&pt, pat.span, "a loop parameter cannot be a function")?;
                    match (form, form_t) {
                        (LoopForm::For(i, _, _), Some(nt)) => {
                            let i = i.clone();
                            self.bind_var(&i, Binding::Val(Scheme::mono(nt)));
                        }
                        (LoopForm::ForIn(p, _), Some(row)) => {
                            let xt = self.infer_pat(p)?;
                            self.expect(&xt, &row, p.span)?;
                        }
                        (LoopForm::While(c), _) => {
                            let ct = self.infer(c)?;
                            self.expect(&Ty::bool(), &ct, c.span)?;
                        }
                        _ => {}
                    }
                    let bt = self.infer(body)?;
                    self.expect(&pt, &bt, body.span)?;
                    Ok(pt)
                })();
                self.pop_scope();
                r
            }
            ExprKind::Ascribe(x, te) | ExprKind::Coerce(x, te) => {
                let t = self.infer(x)?;
                self.check_size_exprs(te)?;
                let at = self.conv_type(te)?;
                self.expect(&at, &t, x.span)?;
                Ok(at)
            }
            ExprKind::Attr(a, x) => {
                let a = a.clone();
                self.check_attr(&a);
                self.infer(x)
            }
            ExprKind::LocalOpen(q, x) => {
                let m = if q.quals.is_empty() {
                    module_of(&q.name)
                } else {
                    None
                };
                let Some(m) = m else {
                    return Err(Diagnostic::error(span, format!("unknown module `{q}`"))
                        .with_label("not a module"));
                };
                self.scopes.push(super::env::Scope::Module(m));
                let r = self.infer(x);
                self.pop_scope();
                r
            }
            ExprKind::Assert(c, x) => {
                let ct = self.infer(c)?;
                self.expect(&Ty::bool(), &ct, c.span)?;
                self.infer(x)
            }
        }
    }
}

/// The number of array dimensions known at the top of a (zonked) type, or `None` if the element
/// type is still unknown (so the rank may be higher).
fn array_rank(t: &Ty) -> Option<usize> {
    match t {
        Ty::Array(_, e) => array_rank(e).map(|r| r + 1),
        Ty::Var(_) => None,
        _ => Some(0),
    }
}

/// The names a pattern binds, with their spans.
fn pat_names(p: &Pat, out: &mut Vec<(String, Span)>) {
    match &p.kind {
        PatKind::Id(n) => out.push((n.clone(), p.span)),
        PatKind::Wildcard => {}
        PatKind::Tuple(ps) => ps.iter().for_each(|q| pat_names(q, out)),
        PatKind::Record(fs) => fs.iter().for_each(|(_, _, q)| pat_names(q, out)),
        PatKind::Constr(_, ps) => ps.iter().for_each(|q| pat_names(q, out)),
        PatKind::Lit(..) => {}
        PatKind::Ascribed(q, _) | PatKind::Attr(_, q) => pat_names(q, out),
    }
}

impl Checker {
    /// Checks the expressions given as sizes in a coercion's or ascription's type
    /// (`a :> [opaque 1 * b][b]t`): each must be an `i64`. `infer` gives each its type, which
    /// makes `conv_type` convert it to a [`Size::Expr`], whose value lowering takes at the
    /// coercion.
    fn check_size_exprs(&mut self, te: &mut TypeExp) -> Result<(), Diagnostic> {
        for e in te.size_exprs_mut() {
            let t = self.infer(e)?;
            self.expect(&Ty::i64(), &t, e.span)?;
        }
        Ok(())
    }

    /// The size an argument expression denotes (`iota (n*m) : [n*m]i64`): an integer constant,
    /// a variable, `+`, `-`, `*` of sizes, or the value of any other expression
    /// ([`Size::Expr`]: `tabulate (i64.sum ks + n) f : [i64.sum ks + n]t`).
    fn size_of_arg(&self, e: &Expr) -> Size {
        use crate::syntax::types::SizeOp;
        let op = match &e.kind {
            ExprKind::Lit(Literal::Int(v, _)) if i64::try_from(*v).is_ok() => {
                return Size::Const(*v as i64)
            }
            ExprKind::Var(q) if q.quals.is_empty() => return Size::Named(q.name.clone()),
            ExprKind::BinOp(OpRef::Builtin(op), _, _) => match op {
                BinOp::Add => Some(SizeOp::Add),
                BinOp::Sub => Some(SizeOp::Sub),
                BinOp::Mul => Some(SizeOp::Mul),
                _ => None,
            },
            _ => None,
        };
        match (&e.kind, op) {
            (ExprKind::BinOp(_, a, b), Some(op)) => {
                Size::bin(op, self.size_of_arg(a), self.size_of_arg(b))
            }
            _ => Size::Expr(e.span, self.source_text(e.span)),
        }
    }

    /// The source text at a span (empty where it is not known).
    pub(crate) fn source_text(&self, span: Span) -> String {
        self.texts
            .get(span.file.0 as usize)
            .and_then(|t| t.get(span.lo as usize..span.hi as usize))
            .unwrap_or_default()
            .to_string()
    }
}

/// A record expression, pattern or type may not name a field twice.
pub(crate) fn check_distinct_fields<'n>(
    fields: impl Iterator<Item = (&'n String, Span)>,
) -> Result<(), Diagnostic> {
    let mut seen: Vec<(&String, Span)> = vec![];
    for (n, s) in fields {
        if let Some((_, first)) = seen.iter().find(|(m, _)| *m == n) {
            return Err(Diagnostic::error(s, format!("field `{n}` is given twice"))
                .with_label("given again here")
                .with_secondary(*first, "first given here"));
        }
        seen.push((n, s));
    }
    Ok(())
}
