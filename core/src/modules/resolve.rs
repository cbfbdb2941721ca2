//! Name resolution inside declarations: every name in a value or type declaration that refers to
//! a module-level definition is replaced by that definition's internal name, and every name
//! that refers to a local binding is left as written.
//!
//! Scoping is lexical. Locals (parameters, `let`, lambda and loop bindings, size and type
//! parameters) shadow module-level names; `M.(e)` opens `M` inside `e`, where its members
//! shadow the outer locals and are shadowed by the locals bound inside `e`. The resolver keeps,
//! for each local name, the stack of its bindings (each marked with how many opens were active
//! when it was bound), and the stack of opens; a lookup is `O(opens)`, so deep `let` chains stay
//! linear.
//!
//! What stays for the type checker: locals, the names of the intrinsics (`map`, `iota`, ...),
//! and the local open of a numeric module `f64.(e)`, which the type checker implements itself
//! (it makes the operators in `e` those of `f64`). A name that is in scope nowhere is an
//! `unknown name` (or `unknown type`) error here: passed on, it could be taken for a definition
//! of the flat program that is not in scope where it is used.

use std::collections::HashMap;
use std::rc::Rc;

use super::env::{Env, TypeRef, ValRef};
use crate::diag::{Diagnostic, Span};
use crate::prim::PrimType;
use crate::syntax::ast::*;

type R<T> = Result<T, Diagnostic>;

/// A module opened by `M.(e)`.
enum Open {
    /// A module defined in vkad source (or a view of one): its members are resolved here.
    User(Rc<Env>),
    /// A numeric module (all its members): left to the type checker as `p.(e)`; its member
    /// names are not resolved.
    Prim(Rc<Env>),
}

/// The resolver of the names in one declaration, in the scope `env`.
pub(crate) struct Resolver<'e> {
    env: &'e Env,
    /// Local value names: for each, the stack of the numbers of active opens at its bindings.
    vals: HashMap<String, Vec<usize>>,
    /// Local type names (type parameters), likewise.
    types: HashMap<String, Vec<usize>>,
    opens: Vec<Open>,
    /// Every local binding in scope, in order (`true` for a type): undone by
    /// [`Resolver::release`] back to a [`Resolver::mark`].
    log: Vec<(bool, String)>,
    /// How deeply the resolver has recursed (bounded like the parser's trees).
    depth: u32,
}

/// What a qualified or unqualified value name found.
enum Found {
    Local,
    Ref(ValRef),
    /// A name of an open numeric module (kept for the type checker's local open).
    PrimMember,
    None,
}

impl<'e> Resolver<'e> {
    pub fn new(env: &'e Env) -> Resolver<'e> {
        Resolver {
            env,
            vals: HashMap::new(),
            types: HashMap::new(),
            opens: Vec::new(),
            log: Vec::new(),
            depth: 0,
        }
    }

    // ------------------------------------------------------------------ declarations

    /// Resolves a value declaration: type parameters, parameters, return type and body.
    pub fn val_dec(&mut self, v: &mut ValDec) -> R<()> {
        let mark = self.mark();
        self.bind_type_params(&v.type_params);
        for p in &mut v.params {
            self.pat(p)?;
        }
        if let Some(t) = &mut v.ret {
            self.type_exp(t)?;
        }
        self.expr(&mut v.body)?;
        self.release(mark);
        Ok(())
    }

    /// Resolves the definition of a type declaration (its parameters are local).
    pub fn type_dec(&mut self, t: &mut TypeDec) -> R<()> {
        let mark = self.mark();
        self.bind_type_params(&t.params);
        self.type_exp(&mut t.def)?;
        self.release(mark);
        Ok(())
    }

    /// Resolves a type expression with the given type parameters in scope (a refinement
    /// `with t 'a = ...`).
    pub fn type_with_params(&mut self, params: &[TypeParam], t: &mut TypeExp) -> R<()> {
        let mark = self.mark();
        self.bind_type_params(params);
        self.type_exp(t)?;
        self.release(mark);
        Ok(())
    }

    // ------------------------------------------------------------------ scopes

    fn mark(&self) -> usize {
        self.log.len()
    }

    /// Undoes the local bindings made since `mark`.
    fn release(&mut self, mark: usize) {
        while self.log.len() > mark {
            let Some((is_type, name)) = self.log.pop() else {
                break;
            };
            let map = if is_type {
                &mut self.types
            } else {
                &mut self.vals
            };
            if let Some(stack) = map.get_mut(&name) {
                stack.pop();
                if stack.is_empty() {
                    map.remove(&name);
                }
            }
        }
    }

    fn bind_val(&mut self, name: &str) {
        self.vals
            .entry(name.to_string())
            .or_default()
            .push(self.opens.len());
        self.log.push((false, name.to_string()));
    }

    fn bind_type(&mut self, name: &str) {
        self.types
            .entry(name.to_string())
            .or_default()
            .push(self.opens.len());
        self.log.push((true, name.to_string()));
    }

    /// Binds type parameters (as types) and size parameters (as values).
    fn bind_type_params(&mut self, params: &[TypeParam]) {
        for p in params {
            match p {
                TypeParam::Size(n, _) => self.bind_val(n),
                TypeParam::Type { name, .. } => self.bind_type(name),
            }
        }
    }

    // ------------------------------------------------------------------ lookups

    /// An unqualified value name.
    fn lookup_val(&self, name: &str) -> Found {
        let local = self.vals.get(name).and_then(|s| s.last().copied());
        for open in self.opens[local.unwrap_or(0)..].iter().rev() {
            match open {
                Open::User(env) => {
                    if let Some(r) = env.vals.get(name) {
                        return Found::Ref(r.clone());
                    }
                }
                Open::Prim(m) => {
                    if m.vals.contains_key(name) {
                        return Found::PrimMember;
                    }
                }
            }
        }
        if local.is_some() {
            return Found::Local;
        }
        match self.env.vals.get(name) {
            Some(r) => Found::Ref(r.clone()),
            None => Found::None,
        }
    }

    /// An unqualified type name: `None` for a local type parameter or a name no module defines
    /// (a primitive type, or an unknown one the type checker reports).
    fn lookup_type(&self, name: &str) -> Option<TypeRef> {
        let local = self.types.get(name).and_then(|s| s.last().copied());
        for open in self.opens[local.unwrap_or(0)..].iter().rev() {
            if let Open::User(env) = open {
                if let Some(r) = env.types.get(name) {
                    return Some(r.clone());
                }
            }
        }
        if local.is_some() {
            return None;
        }
        self.env.types.get(name).cloned()
    }

    /// The module a path of qualifiers `M.N` names.
    fn lookup_mod(&self, quals: &[String], span: Span) -> R<Rc<Env>> {
        let Some((first, rest)) = quals.split_first() else {
            return Err(Diagnostic::error(
                span,
                "internal error: an empty module path",
            ));
        };
        let mut m = None;
        let local = self.vals.get(first).and_then(|s| s.last().copied());
        for open in self.opens[local.unwrap_or(0)..].iter().rev() {
            if let Open::User(env) = open {
                if let Some(v) = env.mods.get(first) {
                    m = Some(v.clone());
                    break;
                }
            }
        }
        let m = match m.or_else(|| self.env.mods.get(first).cloned()) {
            Some(m) => m,
            None if local.is_some() || self.env.vals.contains_key(first) => {
                return Err(Diagnostic::error(
                    span,
                    format!("`{first}` is a value, not a module"),
                ))
            }
            None => return Err(super::eval::unknown_module(first, span)),
        };
        super::eval::walk_path(m, first, rest, span)
    }

    /// Whether the module path `quals` is Futhark's built-in `intrinsics` module (not shadowed
    /// by a module of the program), whose known members the type checker resolves.
    fn is_builtin_intrinsics(&self, quals: &[String], span: Span) -> bool {
        matches!(quals, [m] if m == crate::builtins::INTRINSICS_MODULE)
            && self.lookup_mod(quals, span).is_err()
    }

    /// A qualified value name `M.N.x`.
    fn qualified_val(&self, q: &QualName, span: Span) -> R<ValRef> {
        let m = self.lookup_mod(&q.quals, span)?;
        m.vals.get(&q.name).cloned().ok_or_else(|| {
            let path = q.quals.join(".");
            Diagnostic::error(span, format!("module `{path}` has no member `{}`", q.name))
                .with_label("unknown member")
        })
    }

    /// The name a value reference becomes.
    fn val_name(r: ValRef) -> QualName {
        match r {
            ValRef::Entity(n) => QualName::unqual(n),
            ValRef::Builtin(p, n) => QualName {
                quals: vec![p.name().to_string()],
                name: n,
            },
        }
    }

    /// Resolves a value name in place.
    fn var(&self, q: &mut QualName, span: Span) -> R<()> {
        if q.quals.is_empty() {
            return match self.lookup_val(&q.name) {
                Found::Ref(r) => {
                    *q = Self::val_name(r);
                    Ok(())
                }
                Found::Local | Found::PrimMember => Ok(()),
                // The type checker's message for these.
                Found::None if q.name.starts_with('_') => Ok(()),
                // Reported here: left as it is, the name could mean a definition that is not
                // in scope here (a `local` one of an imported file, say).
                Found::None => Err(Diagnostic::error(span, format!("unknown name `{q}`"))
                    .with_label("not in scope")),
            };
        }
        // `r.a.b` with `r` a value in scope is record field access (a local value shadows a
        // module of the same name), left to the type checker with `r` resolved.
        let head = self.lookup_val(&q.quals[0]);
        if let Found::Local = head {
            return Ok(());
        }
        if self.is_builtin_intrinsics(&q.quals, span) {
            return match crate::builtins::intrinsics_member(&q.name) {
                Some(_) => Ok(()),
                None => Err(Diagnostic::not_supported(
                    span,
                    format!("`{q}` of the `intrinsics` module"),
                )),
            };
        }
        match (self.qualified_val(q, span), head) {
            (Ok(r), _) => {
                *q = Self::val_name(r);
                Ok(())
            }
            (Err(_), Found::Ref(ValRef::Entity(n)))
                if self.lookup_mod(&q.quals[..1], span).is_err() =>
            {
                q.quals[0] = n;
                Ok(())
            }
            (Err(e), _) => Err(e),
        }
    }

    /// A built-in operator used inside `M.(e)` where `M` (a module defined in source that
    /// opens or includes a numeric module) has it as a member: that member.
    fn builtin_op(&self, op: BinOp) -> Option<ValRef> {
        if self.opens.is_empty() {
            return None;
        }
        match self.lookup_val(op.symbol()) {
            Found::Ref(r @ ValRef::Builtin(..)) => Some(r),
            _ => None,
        }
    }

    // ------------------------------------------------------------------ types

    pub fn type_exp(&mut self, t: &mut TypeExp) -> R<()> {
        self.deeper(t.span())?;
        let r = self.type_exp_inner(t);
        self.depth -= 1;
        r
    }

    fn type_exp_inner(&mut self, t: &mut TypeExp) -> R<()> {
        match t {
            TypeExp::Named(q, args, span)
                if crate::builtins::is_acc_type(&q.quals, &q.name)
                    && self.is_builtin_intrinsics(&q.quals, *span) =>
            {
                for a in args {
                    if let TypeArgExp::Type(t) = a {
                        self.type_exp(t)?;
                    }
                }
                Ok(())
            }
            TypeExp::Named(q, args, span) => {
                let r = if q.quals.is_empty() {
                    self.lookup_type(&q.name)
                } else {
                    let m = self.lookup_mod(&q.quals, *span)?;
                    let r = m.types.get(&q.name).cloned().ok_or_else(|| {
                        let path = q.quals.join(".");
                        Diagnostic::error(
                            *span,
                            format!("module `{path}` has no type `{}`", q.name),
                        )
                        .with_label("unknown type")
                    })?;
                    Some(r)
                };
                match r {
                    Some(TypeRef::Entity(n)) => *q = QualName::unqual(n),
                    Some(TypeRef::Prim(p)) => *q = QualName::unqual(p.name()),
                    // Reported here, like unknown value names (a size argument the parser
                    // read as a type name is a local value).
                    None if !self.types.contains_key(&q.name)
                        && !self.vals.contains_key(&q.name)
                        && PrimType::from_name(&q.name).is_none() =>
                    {
                        return Err(Diagnostic::error(*span, format!("unknown type `{q}`"))
                            .with_label("unknown type"))
                    }
                    None => {}
                }
                for a in args {
                    match a {
                        TypeArgExp::Size(d, s) => self.size(d, *s)?,
                        TypeArgExp::Type(t) => self.type_exp(t)?,
                    }
                }
                Ok(())
            }
            TypeExp::Tuple(ts, _) => {
                for t in ts {
                    self.type_exp(t)?;
                }
                Ok(())
            }
            TypeExp::Record(fs, _) => {
                for (_, _, t) in fs {
                    self.type_exp(t)?;
                }
                Ok(())
            }
            TypeExp::Sum(cs, _) => {
                for t in cs.iter_mut().flat_map(|(_, _, ts)| ts) {
                    self.type_exp(t)?;
                }
                Ok(())
            }
            TypeExp::Array(d, t, s) => {
                self.size(d, *s)?;
                self.type_exp(t)
            }
            TypeExp::Unique(t, _) => self.type_exp(t),
            TypeExp::Arrow(name, t1, t2, _) => {
                self.type_exp(t1)?;
                let mark = self.mark();
                if let Some(n) = name {
                    self.bind_val(n);
                }
                let r = self.type_exp(t2);
                self.release(mark);
                r
            }
            TypeExp::Exists(names, t, _) => {
                let mark = self.mark();
                for n in names.iter() {
                    self.bind_val(n);
                }
                let r = self.type_exp(t);
                self.release(mark);
                r
            }
        }
    }

    fn size(&mut self, d: &mut SizeExp, span: Span) -> R<()> {
        match d {
            SizeExp::Any | SizeExp::Const(_) => Ok(()),
            SizeExp::Named(q) => {
                if q.quals.is_empty() {
                    // An unknown size name is the type checker's to report.
                    if let Found::Ref(r) = self.lookup_val(&q.name) {
                        *q = Self::val_name(r);
                    }
                    Ok(())
                } else {
                    self.var(q, span)
                }
            }
            SizeExp::Bin(_, a, b) => {
                self.size(a, span)?;
                self.size(b, span)
            }
            SizeExp::Expr(e) => self.expr_inner(e),
        }
    }

    // ------------------------------------------------------------------ patterns

    /// Resolves the types in a pattern, then binds its names.
    fn pat(&mut self, p: &mut Pat) -> R<()> {
        self.pat_types(p)?;
        let mut names = Vec::new();
        pat_names(p, &mut names);
        for n in names {
            self.bind_val(&n);
        }
        Ok(())
    }

    fn pat_types(&mut self, p: &mut Pat) -> R<()> {
        self.deeper(p.span)?;
        let r = match &mut p.kind {
            PatKind::Id(_) | PatKind::Wildcard | PatKind::Lit(..) => Ok(()),
            PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
                ps.iter_mut().try_for_each(|p| self.pat_types(p))
            }
            PatKind::Record(fs) => fs.iter_mut().try_for_each(|(_, _, p)| self.pat_types(p)),
            PatKind::Ascribed(p, t) => {
                self.pat_types(p)?;
                self.type_exp(t)
            }
            PatKind::Attr(_, p) => self.pat_types(p),
        };
        self.depth -= 1;
        r
    }

    // ------------------------------------------------------------------ expressions

    fn deeper(&mut self, span: Span) -> R<()> {
        self.depth += 1;
        if self.depth > crate::syntax::parser::MAX_TREE_DEPTH + 100 {
            self.depth -= 1;
            return Err(Diagnostic::error(span, "expression is nested too deeply"));
        }
        Ok(())
    }

    pub fn expr(&mut self, e: &mut Expr) -> R<()> {
        self.deeper(e.span)?;
        let r = self.expr_inner(e);
        self.depth -= 1;
        r
    }

    fn op(&mut self, op: &mut OpRef) -> R<()> {
        match op {
            OpRef::Builtin(b) => {
                if let Some(r) = self.builtin_op(*b) {
                    // The span of the operator is not kept; the section's or application's is
                    // close enough for the messages about it.
                    let q = Self::val_name(r);
                    *op = OpRef::Fun(Box::new(Expr::new(ExprKind::Var(q), Span::default())));
                }
                Ok(())
            }
            OpRef::Fun(f) => self.expr(f),
        }
    }

    fn dim_indices(&mut self, is: &mut [DimIndex]) -> R<()> {
        for i in is {
            match i {
                DimIndex::Fix(e) => self.expr(e)?,
                DimIndex::Slice(a, b, c) => {
                    for e in [a, b, c].into_iter().flatten() {
                        self.expr(e)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn expr_inner(&mut self, e: &mut Expr) -> R<()> {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Lit(_) | ExprKind::ProjectSection(_) => Ok(()),
            ExprKind::Var(q) => self.var(q, span),
            ExprKind::Tuple(es) | ExprKind::ArrayLit(es) => {
                es.iter_mut().try_for_each(|e| self.expr(e))
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                self.expr(start)?;
                if let Some(s) = second {
                    self.expr(s)?;
                }
                self.expr(end)
            }
            ExprKind::BinOp(op, a, b) => {
                self.op(op)?;
                fix_op_span(op, span);
                self.expr(a)?;
                self.expr(b)
            }
            ExprKind::UnOp(_, a) => self.expr(a),
            ExprKind::Apply(f, args) => {
                self.expr(f)?;
                args.iter_mut().try_for_each(|a| self.expr(a))
            }
            ExprKind::Lambda { params, ret, body } => {
                let mark = self.mark();
                let r = (|| {
                    for p in params.iter_mut() {
                        self.pat(p)?;
                    }
                    if let Some(t) = ret {
                        self.type_exp(t)?;
                    }
                    self.expr(body)
                })();
                self.release(mark);
                r
            }
            ExprKind::OpSection(op) => {
                self.op(op)?;
                fix_op_span(op, span);
                Ok(())
            }
            ExprKind::LeftSection(op, x) | ExprKind::RightSection(op, x) => {
                self.op(op)?;
                fix_op_span(op, span);
                self.expr(x)
            }
            ExprKind::Project(x, _) => self.expr(x),
            ExprKind::Record(fs) => fs.iter_mut().try_for_each(|(_, _, x)| self.expr(x)),
            ExprKind::RecordUpdate { record, value, .. } => {
                self.expr(record)?;
                self.expr(value)
            }
            ExprKind::Constr(_, es) => es.iter_mut().try_for_each(|x| self.expr(x)),
            ExprKind::Match(scrutinee, cases) => {
                self.expr(scrutinee)?;
                for (pat, body) in cases.iter_mut() {
                    let mark = self.mark();
                    let r = self.pat(pat).and_then(|()| self.expr(body));
                    self.release(mark);
                    r?;
                }
                Ok(())
            }
            ExprKind::If(c, a, b) => {
                self.expr(c)?;
                self.expr(a)?;
                self.expr(b)
            }
            ExprKind::Let { pat, value, body } => {
                self.expr(value)?;
                let mark = self.mark();
                let r = self.pat(pat).and_then(|()| self.expr(body));
                self.release(mark);
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
                let mark = self.mark();
                // The function's own name is bound in its body too, so that a recursive
                // reference reaches the type checker as one (and is reported as recursion).
                self.bind_val(name);
                let r = (|| {
                    self.bind_type_params(type_params);
                    for p in params.iter_mut() {
                        self.pat(p)?;
                    }
                    if let Some(t) = ret {
                        self.type_exp(t)?;
                    }
                    self.expr(value)
                })();
                self.release(mark);
                r?;
                let mark = self.mark();
                self.bind_val(name);
                let r = self.expr(body);
                self.release(mark);
                r
            }
            ExprKind::LetWith {
                name,
                indices,
                value,
                body,
                ..
            } => {
                self.dim_indices(indices)?;
                self.expr(value)?;
                let mark = self.mark();
                self.bind_val(name);
                let r = self.expr(body);
                self.release(mark);
                r
            }
            ExprKind::Update {
                array,
                indices,
                value,
            } => {
                self.expr(array)?;
                self.dim_indices(indices)?;
                self.expr(value)
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => {
                if let Some(i) = init {
                    self.expr(i)?;
                }
                match form {
                    LoopForm::For(_, _, bound) => self.expr(bound)?,
                    LoopForm::ForIn(_, xs) => self.expr(xs)?,
                    LoopForm::While(_) => {}
                }
                let mark = self.mark();
                let r = (|| {
                    self.pat(pat)?;
                    match form {
                        LoopForm::For(i, _, _) => self.bind_val(i),
                        LoopForm::ForIn(p, _) => self.pat(p)?,
                        LoopForm::While(c) => self.expr(c)?,
                    }
                    self.expr(body)
                })();
                self.release(mark);
                r
            }
            ExprKind::Index(x, is) => {
                self.expr(x)?;
                self.dim_indices(is)
            }
            ExprKind::Ascribe(x, t) | ExprKind::Coerce(x, t) => {
                self.expr(x)?;
                self.type_exp(t)
            }
            ExprKind::Attr(_, x) => self.expr(x),
            ExprKind::Assert(c, x) => {
                self.expr(c)?;
                self.expr(x)
            }
            ExprKind::LocalOpen(q, x) => {
                let mut path = q.quals.clone();
                path.push(q.name.clone());
                let m = self.lookup_mod(&path, span)?;
                match m.prim {
                    Some(p) => {
                        self.opens.push(Open::Prim(Env::numeric_module(p)));
                        let r = self.expr(x);
                        self.opens.pop();
                        *q = QualName::unqual(p.name());
                        r
                    }
                    None => {
                        self.opens.push(Open::User(m));
                        let r = self.expr(x);
                        self.opens.pop();
                        r?;
                        // The open is resolved: the node is its body.
                        let inner =
                            std::mem::replace(x.as_mut(), Expr::new(ExprKind::Tuple(vec![]), span));
                        *e = inner;
                        Ok(())
                    }
                }
            }
        }
    }
}

/// Gives an operator made from a module member ([`Resolver::builtin_op`]) the span of the
/// section it is in.
fn fix_op_span(op: &mut OpRef, span: Span) {
    if let OpRef::Fun(f) = op {
        if f.span == Span::default() {
            f.span = span;
        }
    }
}

/// The names a pattern binds, in order.
pub(crate) fn pat_names(p: &Pat, out: &mut Vec<String>) {
    match &p.kind {
        PatKind::Id(n) => out.push(n.clone()),
        PatKind::Wildcard => {}
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter().for_each(|p| pat_names(p, out)),
        PatKind::Record(fs) => fs.iter().for_each(|(_, _, p)| pat_names(p, out)),
        PatKind::Lit(..) => {}
        PatKind::Ascribed(p, _) | PatKind::Attr(_, p) => pat_names(p, out),
    }
}
