//! Scopes: value bindings (with type schemes), locally opened modules, type parameters and type
//! abbreviations; conversion of written types ([`TypeExp`]) to inference types.

use super::ty::Ty;
use super::Checker;
use crate::diag::{Diagnostic, Span};
use crate::prim::PrimType;
use crate::syntax::ast::{Liftedness, QualName, SizeExp, TypeArgExp, TypeExp, TypeParam};
use crate::syntax::types::Size;
use std::collections::HashMap;

/// A polymorphic type: `params` are the names of the [`Ty::Param`]s to instantiate afresh at
/// each use; those in `nofun_params` must be instantiated with types containing no function
/// (non-lifted type parameters, and inferred ones used with `==`). For functions
/// (`erase_sizes`), named sizes (which name the function's own size parameters and parameters)
/// become unknown at each use.
#[derive(Clone, Debug)]
pub(crate) struct Scheme {
    pub params: Vec<String>,
    pub nofun_params: Vec<String>,
    pub ty: Ty,
    pub erase_sizes: bool,
    /// Size parameters (`[n]`, builtins only) instantiated with fresh size variables at each
    /// use, so that sizes flow between a builtin's arguments and result.
    pub size_params: Vec<String>,
    /// The size parameters that occur in no parameter type as a plain dimension (of builtins:
    /// `unflatten`, `split`; of top-level functions: those only in size expressions, `[p*q]t`):
    /// the sizes of each use must then be inferred from the context (see
    /// [`super::Checker::check_sized_uses`]).
    pub hidden_sizes: Vec<String>,
    /// Parameters (by position) whose names are used as sizes (`(n: i64) -> [n]t`): at each
    /// use the size is a fresh size variable, unified with the argument when that is a size
    /// expression (`iota (n*m) : [n*m]i64`).
    pub named_params: Vec<(usize, String)>,
}

impl Scheme {
    pub fn mono(ty: Ty) -> Scheme {
        Scheme {
            params: vec![],
            nofun_params: vec![],
            ty,
            erase_sizes: false,
            size_params: vec![],
            hidden_sizes: vec![],
            named_params: vec![],
        }
    }
}

/// Replace every size other than a constant or one built from the names in `keep` (and
/// constants) by an unknown one.
fn erase_named_sizes(t: &Ty, keep: &[&String]) -> Ty {
    fn kept(d: &Size, keep: &[&String]) -> bool {
        match d {
            Size::Const(_) => true,
            Size::Named(n) => keep.contains(&n),
            Size::Bin(_, a, b) => kept(a, keep) && kept(b, keep),
            Size::Unknown | Size::Expr(..) => false,
        }
    }
    let er = |t: &Ty| erase_named_sizes(t, keep);
    match t {
        Ty::Array(d, e) if kept(d, keep) => Ty::arr(d.clone(), er(e)),
        Ty::Array(_, e) => Ty::arr(Size::Unknown, er(e)),
        _ => t.map_children(&mut |c| er(c)),
    }
}

/// [`erase_named_sizes`] on a function's type, except that the final result keeps the sizes
/// that are values of expressions (`Size::Expr`): a function whose body makes
/// `tabulate (i64.sum ks * 2) f` returns `[i64.sum ks * 2]t`, and the caller may need that
/// size's structure to infer another call's sizes (`[p * q]t` against it gives `p = i64.sum ks`,
/// `q = 2`, Futhark's `tests/ad/flatmap1.fut`). Futhark instantiates such a size with the
/// call's arguments; vkad's lowering never reads the expression's value outside the call that
/// computed it, but solves the sizes that depend on it from the actual shapes of the arguments
/// where they are needed (`Lowerer::solve_from_shapes`).
fn keep_result_exprs(t: &Ty, keep: &[&String]) -> Ty {
    fn exprs_kept(t: &Ty, keep: &[&String]) -> Ty {
        fn kept(d: &Size, keep: &[&String]) -> bool {
            match d {
                Size::Const(_) | Size::Expr(..) => true,
                Size::Named(n) => keep.contains(&n),
                Size::Bin(_, a, b) => kept(a, keep) && kept(b, keep),
                Size::Unknown => false,
            }
        }
        match t {
            Ty::Array(d, e) if kept(d, keep) => Ty::arr(d.clone(), exprs_kept(e, keep)),
            Ty::Array(_, e) => Ty::arr(Size::Unknown, exprs_kept(e, keep)),
            Ty::Fun(..) => erase_named_sizes(t, keep),
            _ => t.map_children(&mut |c| exprs_kept(c, keep)),
        }
    }
    match t {
        Ty::Fun(a, r) => Ty::fun(erase_named_sizes(a, keep), keep_result_exprs(r, keep)),
        _ => exprs_kept(t, keep),
    }
}

/// What a value name is bound to.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    Val(Scheme),
    /// The function being defined (a reference to it is recursion, which is not supported).
    Recursive,
}

#[derive(Clone, Debug)]
pub(crate) enum Scope {
    Vars(HashMap<String, Binding>),
    /// `m.(e)`: the members of a numeric module, unqualified.
    Module(PrimType),
}

/// What a name in a written type refers to inside the current type scope.
#[derive(Clone, Debug)]
pub(crate) enum TypeBind {
    Type(Ty),
    Size(Size),
}

/// Type parameters bound by [`Checker::push_type_params`].
pub(crate) struct TypeParams {
    /// Internal names of the rigid type parameters.
    pub tys: Vec<String>,
    /// Those that are not lifted (`'t`, `'~t`): they cannot be instantiated with functions.
    pub nofun: Vec<String>,
    /// Size parameters with their spans.
    pub sizes: Vec<(String, Span)>,
}

/// A type abbreviation `type name params = def`.
#[derive(Clone, Debug)]
pub(crate) struct TypeAbbr {
    pub params: Vec<TypeParam>,
    pub def: TypeExp,
}

impl Checker {
    pub(crate) fn push_vars(&mut self) {
        self.scopes.push(Scope::Vars(HashMap::new()));
    }

    pub(crate) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Bind a value name in the innermost scope (which must be a `Vars` scope).
    pub(crate) fn bind_var(&mut self, name: &str, b: Binding) {
        if !matches!(self.scopes.last(), Some(Scope::Vars(_))) {
            self.push_vars();
        }
        if let Some(Scope::Vars(m)) = self.scopes.last_mut() {
            m.insert(name.to_string(), b);
        }
    }

    /// Look up an unqualified name among locals and opened modules (innermost first), then
    /// top-level definitions, then intrinsics.
    pub(crate) fn lookup_unqual(&mut self, name: &str) -> Option<Binding> {
        for s in self.scopes.iter().rev() {
            match s {
                Scope::Vars(m) => {
                    if let Some(b) = m.get(name) {
                        return Some(b.clone());
                    }
                }
                Scope::Module(p) => {
                    if let Some(t) = super::builtins::module_member(*p, name) {
                        return Some(Binding::Val(Scheme::mono(t)));
                    }
                }
            }
        }
        if let Some(s) = self.globals.get(name) {
            return Some(Binding::Val(s.clone()));
        }
        self.intrinsics.get(name).map(|s| Binding::Val(s.clone()))
    }

    /// The innermost locally opened module, if any.
    pub(crate) fn open_module(&self) -> Option<PrimType> {
        self.scopes.iter().rev().find_map(|s| match s {
            Scope::Module(p) => Some(*p),
            _ => None,
        })
    }

    /// Instantiate a scheme with fresh variables.
    pub(crate) fn instantiate(&mut self, s: &Scheme, span: Span) -> Ty {
        let mut ty = if s.erase_sizes {
            let keep: Vec<&String> = s
                .size_params
                .iter()
                .chain(s.named_params.iter().map(|(_, n)| n))
                .collect();
            keep_result_exprs(&s.ty, &keep)
        } else {
            s.ty.clone()
        };
        let mut hidden = vec![];
        if !s.size_params.is_empty() || !s.named_params.is_empty() {
            let mut m = HashMap::new();
            for p in &s.size_params {
                let v = self.fresh_size();
                if s.hidden_sizes.contains(p) {
                    hidden.push((p.clone(), v.clone()));
                }
                m.insert(p.clone(), v);
            }
            let mut args = vec![];
            for (k, p) in &s.named_params {
                let v = self.fresh_size();
                args.push((*k, v.clone()));
                m.insert(p.clone(), v);
            }
            if !args.is_empty() {
                self.size_args.insert(span, args);
            }
            ty = ty.subst_sizes(&|n| m.get(n).cloned());
        }
        if s.params.is_empty() {
            if !hidden.is_empty() {
                self.sized_uses
                    .push((span, String::new(), ty.clone(), hidden));
            }
            return ty;
        }
        let mut m = HashMap::new();
        for p in &s.params {
            let v = self.fresh(span);
            if s.nofun_params.contains(p) {
                if let Ty::Var(i) = v {
                    self.vars[i as usize].nofun = true;
                }
            }
            m.insert(p.clone(), v);
        }
        let ty = ty.subst_params(&|n| m.get(n).cloned());
        if !hidden.is_empty() {
            self.sized_uses
                .push((span, String::new(), ty.clone(), hidden));
        }
        ty
    }

    fn lookup_type_bind(&self, name: &str) -> Option<TypeBind> {
        self.type_scopes
            .iter()
            .rev()
            .find_map(|m| m.get(name).cloned())
    }

    /// Bind type parameters (`'t` as rigid parameters, `[n]` as named sizes) in a new type scope
    /// (pushed even on error).
    pub(crate) fn push_type_params(&mut self, tps: &[TypeParam]) -> Result<TypeParams, Diagnostic> {
        let mut m = HashMap::new();
        let mut tys = vec![];
        let mut nofun = vec![];
        let mut sizes = vec![];
        let mut seen: Vec<&str> = vec![];
        for tp in tps {
            let (n, span) = match tp {
                TypeParam::Type { name, span, .. } => (name, span),
                TypeParam::Size(name, span) => (name, span),
            };
            if seen.contains(&n.as_str()) {
                self.type_scopes.push(m);
                return Err(Diagnostic::error(
                    *span,
                    format!("`{n}` is also bound as a parameter"),
                )
                .with_label("bound twice"));
            }
            seen.push(n);
            match tp {
                TypeParam::Type {
                    name, liftedness, ..
                } => {
                    // Keep the source name unless an enclosing type parameter has it.
                    let mut internal = name.clone();
                    let mut k = 1;
                    while self.lookup_type_bind(&internal).is_some() || tys.contains(&internal) {
                        internal = format!("{name}_{k}");
                        k += 1;
                    }
                    m.insert(name.clone(), TypeBind::Type(Ty::Param(internal.clone())));
                    if *liftedness == Liftedness::Lifted {
                        self.lifted.insert(internal.clone());
                    } else {
                        nofun.push(internal.clone());
                    }
                    tys.push(internal);
                }
                TypeParam::Size(n, span) => {
                    m.insert(n.clone(), TypeBind::Size(Size::Named(n.clone())));
                    sizes.push((n.clone(), *span));
                }
            }
        }
        self.type_scopes.push(m);
        Ok(TypeParams { tys, nofun, sizes })
    }

    fn conv_size(&mut self, d: &SizeExp) -> Size {
        match d {
            SizeExp::Bin(op, a, b) => match (self.conv_size(a), self.conv_size(b)) {
                (Size::Unknown, _) | (_, Size::Unknown) => Size::Unknown,
                (a, b) => Size::bin(*op, a, b),
            },
            SizeExp::Any => Size::Unknown,
            SizeExp::Const(n) => Size::Const(*n),
            SizeExp::Named(q) if q.quals.is_empty() => match self.lookup_type_bind(&q.name) {
                Some(TypeBind::Size(s)) => s,
                // A value variable in scope, or a name we do not track: kept by name (sizes are
                // not checked, see the module documentation).
                _ => {
                    // A variable used as a size has type `i64` (as in Futhark: `def f n (xs:
                    // [n]f32)` makes `n` an `i64`). Leniently, a variable of another type is
                    // not an error here.
                    if let Some(Binding::Val(s)) = self.lookup_unqual(&q.name) {
                        if s.params.is_empty() && !s.erase_sizes {
                            let _ = self.unify(&Ty::i64(), &s.ty);
                        }
                    }
                    Size::Named(q.name.clone())
                }
            },
            SizeExp::Named(_) => Size::Unknown,
            // Checked (and given a type) only in coercions and ascriptions, see
            // `Checker::check_size_exprs`.
            SizeExp::Expr(e) if e.ty.is_some() => Size::Expr(e.span, self.source_text(e.span)),
            SizeExp::Expr(_) => Size::Unknown,
        }
    }

    /// Convert a written type.
    pub(crate) fn conv_type(&mut self, te: &TypeExp) -> Result<Ty, Diagnostic> {
        match te {
            TypeExp::Named(q, args, span) => self.conv_named(q, args, *span),
            TypeExp::Tuple(ts, _) => {
                let mut out = vec![];
                for t in ts {
                    out.push(self.conv_type(t)?);
                }
                if out.len() == 1 {
                    return Ok(out.pop().unwrap_or_else(Ty::unit));
                }
                Ok(Ty::Tuple(out))
            }
            TypeExp::Record(fs, _) => {
                super::expr::check_distinct_fields(fs.iter().map(|(n, s, _)| (n, *s)))?;
                let mut out = vec![];
                for (n, _, t) in fs {
                    out.push((n.clone(), self.conv_type(t)?));
                }
                Ok(Ty::record(out))
            }
            TypeExp::Sum(cs, _) => {
                let mut out: Vec<(String, Vec<Ty>)> = vec![];
                for (c, span, ts) in cs {
                    if out.iter().any(|(d, _)| d == c) {
                        return Err(Diagnostic::error(
                            *span,
                            format!("constructor `#{c}` is given twice"),
                        ));
                    }
                    let mut payload = vec![];
                    for t in ts {
                        payload.push(self.conv_type(t)?);
                    }
                    out.push((c.clone(), payload));
                }
                Ok(Ty::sum(out))
            }
            TypeExp::Array(d, t, _) => {
                let d = self.conv_size(d);
                let t = self.conv_type(t)?;
                Ok(Ty::arr(d, t))
            }
            TypeExp::Unique(t, _) => self.conv_type(t),
            TypeExp::Arrow(_, a, r, _) => {
                let a = self.conv_type(a)?;
                let r = self.conv_type(r)?;
                Ok(Ty::fun(a, r))
            }
            TypeExp::Exists(names, t, _) => {
                let m = names
                    .iter()
                    .map(|n| (n.clone(), TypeBind::Size(Size::Unknown)))
                    .collect();
                self.type_scopes.push(m);
                let r = self.conv_type(t);
                self.type_scopes.pop();
                r
            }
        }
    }

    fn conv_named(
        &mut self,
        q: &QualName,
        args: &[TypeArgExp],
        span: Span,
    ) -> Result<Ty, Diagnostic> {
        if crate::builtins::is_acc_type(&q.quals, &q.name) {
            return match args {
                [TypeArgExp::Type(t)] => Ok(Ty::Acc(Box::new(self.conv_type(t)?))),
                _ => Err(Diagnostic::error(
                    span,
                    format!("`{q}` takes one type argument, the array type it updates"),
                )),
            };
        }
        if !q.quals.is_empty() {
            return Err(
                Diagnostic::error(span, format!("unknown type `{q}`")).with_label("unknown type")
            );
        }
        if args.is_empty() {
            if let Some(TypeBind::Type(t)) = self.lookup_type_bind(&q.name) {
                return Ok(t);
            }
            if let Some(p) = PrimType::from_name(&q.name) {
                if !self.type_abbrs.contains_key(&q.name) {
                    return Ok(Ty::Prim(p));
                }
            }
        }
        let Some(abbr) = self.type_abbrs.get(&q.name).cloned() else {
            if args.is_empty() {
                return Err(Diagnostic::error(span, format!("unknown type `{q}`"))
                    .with_label("unknown type"));
            }
            return Err(
                Diagnostic::error(span, format!("unknown type constructor `{q}`"))
                    .with_label("not a parametric type abbreviation"),
            );
        };
        if abbr.params.len() != args.len() {
            return Err(Diagnostic::error(
                span,
                format!(
                    "type `{q}` expects {} argument(s), but was given {}",
                    abbr.params.len(),
                    args.len()
                ),
            ));
        }
        let mut m = HashMap::new();
        for (p, a) in abbr.params.iter().zip(args) {
            match (p, a) {
                (
                    TypeParam::Type {
                        name, liftedness, ..
                    },
                    TypeArgExp::Type(t),
                ) => {
                    let ty = self.conv_type(t)?;
                    if *liftedness != Liftedness::Lifted && self.zonk(&ty).contains_fun() {
                        return Err(Diagnostic::error(
                            t.span(),
                            format!("type parameter `{name}` of `{q}` cannot be instantiated with a function type"),
                        ));
                    }
                    m.insert(name.clone(), TypeBind::Type(ty));
                }
                (TypeParam::Size(name, _), TypeArgExp::Size(d, _)) => {
                    m.insert(name.clone(), TypeBind::Size(self.conv_size(d)));
                }
                (TypeParam::Size(name, _), TypeArgExp::Type(TypeExp::Named(qn, a2, _)))
                    if a2.is_empty() && qn.quals.is_empty() =>
                {
                    // The parser cannot always tell `t [n]`-style size arguments from names.
                    let d = self.conv_size(&SizeExp::Named(qn.clone()));
                    m.insert(name.clone(), TypeBind::Size(d));
                }
                (TypeParam::Size(name, _), _) => {
                    return Err(Diagnostic::error(
                        span,
                        format!("expected a size argument for `[{name}]` of `{q}`"),
                    ))
                }
                (TypeParam::Type { name, .. }, TypeArgExp::Size(_, s)) => {
                    return Err(Diagnostic::error(
                        *s,
                        format!("expected a type argument for `'{name}` of `{q}`"),
                    ))
                }
            }
        }
        // Expand the definition in a scope holding only its parameters.
        let saved = std::mem::replace(&mut self.type_scopes, vec![m]);
        let r = self.conv_type(&abbr.def);
        self.type_scopes = saved;
        r
    }
}
