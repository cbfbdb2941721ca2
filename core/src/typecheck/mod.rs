//! The type checker: Hindley–Milner inference for the vkad language (a subset of Futhark),
//! following Futhark's typing rules, that fills in every `Expr::ty` and `Pat::ty` of the AST.
//!
//! # What is checked
//!
//! - Unification with inference variables; let-polymorphism for top-level `def`s and for local
//!   `let` functions (syntactic functions only, as in Futhark). Variables constrained by
//!   overloading are never generalised; explicit type parameters (`'t`, `'^t`) are rigid.
//! - Overloading as in Futhark: an unsuffixed integer literal may have any numeric type, a decimal
//!   literal any float type; `+ - * / % **` work on numeric types, `// %% & | ^ << >> >>>` on
//!   integers, `== !=` on any type without functions, `< <= > >=` on primitive types (including
//!   `bool`), `&& ||` on `bool`, unary `-` on numbers, `!` on `bool` and integers. At the end of
//!   each top-level declaration an ambiguous overloaded type defaults to `i32` (if allowed), else
//!   `f64`. Inside `m.(e)` the builtin operators of module `m` are monomorphic at type `m`.
//! - Names: locals, earlier top-level definitions (a definition referring to itself is the error
//!   "recursion is not supported (as in Futhark)"), the intrinsics of [`crate::builtins`], numeric
//!   module members (`f64.sqrt`, `i32.max`, `f32.i64`, `bool.i32`) and local opens.
//! - Ranks of arrays (`[]i32` does not unify with `[][]i32`), tuple arity and projections,
//!   indexing (signed integer indices, `i64` slice bounds), ranges (integer types), loops,
//!   `with` updates, ascriptions and coercions, type abbreviations with type and size
//!   parameters (expanded), and entry points (no function types or type parameters in their
//!   parameter and result types).
//! - Function values where Futhark forbids them: in arrays, as `if` results, as loop
//!   parameters, compared with `==`, or instantiating a non-lifted type parameter (`'t`); inside
//!   a definition a lifted parameter (`'^t`) counts as a function. These constraints are kept on
//!   inference variables, so they also catch types that become functions later.
//! - Names bound twice in one binding (`(x, x)`, `f (x: i32) (x: i32)`, `'a 'a`), and uses of
//!   names starting with `_`.
//! - A top-level `def main` is an entry point (its `entry` flag is set), as in Futhark.
//!   Point-free entry points (`entry f = g`) take the parameters of their function type.
//! - Attributes: the known ones are accepted; any other gives a warning.
//! - Literals against their final types, as in Futhark: an integer literal must be in the range
//!   of its integer type (a negated literal is checked negated: `-128i8`; a hexadecimal or
//!   binary literal with a type suffix may be any bit pattern of its width: `0xffi8`), and a
//!   numeric literal of a float type must be finite in it (`1e40f32` is an error).
//! - Types larger than `MAX_TYPE_SIZE` (100 000) nodes (let-polymorphism can make them
//!   exponential) are an error rather than an out-of-memory.
//!
//! # What is lenient
//!
//! - **Sizes are not checked.** Array types carry sizes
//!   ([`Size`](crate::syntax::types::Size): constants, names of size parameters or variables,
//!   size expressions `n*m`, `n+m`, `n-1` over sizes, the value of another expression given as a
//!   size ([`Size::Expr`]), or unknown) as far as they are easily known, but unification never
//!   fails because two sizes differ: every valid Futhark program must be accepted, and a real
//!   size mismatch is caught at run time by the interpreter.
//! - **Size variables** exist to infer sizes that no argument gives directly: those of
//!   `unflatten`, `unflatten_3d` and `split` (`[n*m]t -> [n][m]t`), and the size parameters of
//!   top-level functions that occur only inside size expressions of their parameters' types
//!   (`def jacobian [k] [p] [q] (rows: [p*q][k]f64)`, as in Futhark). At each use of a builtin or
//!   top-level function, its size parameters (`[n]`) and its parameters used as sizes
//!   (`(n: i64) -> [n]t`) become fresh size variables ([`Checker::fresh_size`]); the latter are
//!   bound to the argument's size ([`Checker::size_of_arg`]: a constant, a name, `+ - *` of
//!   sizes, or else the argument itself as a [`Size::Expr`], so `tabulate (i64.sum ks + n) f`
//!   has type `[i64.sum ks + n]t`). Unification binds a size variable to the other side (unless
//!   that is unknown) and unifies size expressions with the same operator operand by operand
//!   (syntactically: `[a*b]` against `[p*q]` gives `p = a`, `q = b`); anything else is accepted.
//!   At the end of a declaration the sizes of every such use must be known (else the error
//!   "cannot determine the sizes of `unflatten`'s result here", or for a function "ambiguous
//!   size `p` in this call of `f`"); the use's name gets its type with those sizes
//!   (`[n*m]f64 -> [n][m]f64`), from which lowering computes them. Every other node's type
//!   keeps no size that was inferred through a size variable (it is unknown, as before), so
//!   lowering sees only sizes written in the program. A local function is not instantiated
//!   per call, so its size parameters must occur as plain dimensions (`[n]t`).
//! - **Uniqueness is not checked.** `*t` is accepted in written types and ignored; consumption
//!   and aliasing are not tracked (the interpreter has value semantics).
//! - A local `let` function's type is generalised only over variables not constrained by
//!   overloading or projections (as in Futhark); the others are resolved by later uses or by
//!   defaulting at the end of the enclosing top-level declaration.
//!
//! Errors stop at the first failing declaration; the checker never panics on any input.

pub(crate) mod builtins;
mod env;
mod expr;
mod patterns;
mod ty;
mod unify;

#[cfg(test)]
mod tests;

use crate::diag::{Diagnostic, Diagnostics, SourceMap, Span};
use crate::prim::{FloatType, PrimType};
use crate::syntax::ast::DimIndex;
use crate::syntax::ast::{
    Attr, Dec, Expr, ExprKind, Literal, LoopForm, OpRef, Pat, PatKind, Program, TypeDec, TypeExp,
    UnOp, ValDec,
};
use crate::syntax::types::{Size, Type};
use env::{Binding, Scheme, Scope, TypeAbbr, TypeBind};
use std::collections::HashMap;
use ty::Ty;
use unify::VarInfo;

/// A use of a function whose sizes must be inferred from the context (see
/// [`Checker::check_sized_uses`]): the span of its name, the name, its instantiated type, and
/// each size parameter to infer with its size variable.
type SizedUse = (Span, String, Ty, Vec<(String, Size)>);

/// Attributes the language knows; any other is accepted with a warning.
const KNOWN_ATTRS: &[&str] = &[
    "unsafe",
    "bound",
    "stripmine",
    "true_dep",
    "noinline",
    "inline",
    "sequential",
    "sequential_outer",
    "sequential_inner",
    "unroll",
    "incremental_flattening",
];

/// Type-check a whole program (the prelude's declarations first, then the user's), filling in
/// every `Expr::ty` and `Pat::ty`. Returns the warnings, or the errors of the first failing
/// declaration.
pub fn check_program(
    prog: &mut Program,
    sources: &SourceMap,
) -> Result<Vec<Diagnostic>, Diagnostics> {
    // The checker recurses over the AST; the parser accepts `let` chains up to ~2000 deep, more
    // than a default thread stack holds in a debug build. Run on a thread with a large stack
    // (address space only reserved, not committed).
    let crashed = || {
        Diagnostics(vec![Diagnostic::error(
            Span::default(),
            "internal error: the type checker could not run",
        )])
    };
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name("vkad-typecheck".into())
            .stack_size(CHECKER_STACK)
            .spawn_scoped(s, move || check_program_here(prog, sources));
        match handle {
            Ok(h) => h.join().unwrap_or_else(|_| Err(crashed())),
            Err(_) => Err(crashed()),
        }
    })
}

/// The stack size of the checker's thread.
const CHECKER_STACK: usize = crate::COMPILER_STACK;

fn check_program_here(
    prog: &mut Program,
    sources: &SourceMap,
) -> Result<Vec<Diagnostic>, Diagnostics> {
    let mut c = Checker::new();
    c.texts = sources.files.iter().map(|f| f.text.clone()).collect();
    for dec in &mut prog.decs {
        let r = match dec {
            Dec::Val(v) => c.check_val_dec(v),
            Dec::Type(t) => c.check_type_dec(t),
            // `crate::modules::elaborate` removes every module-level declaration first.
            other => Err(Diagnostic::error(
                other.span(),
                "internal error: a module declaration reached the type checker",
            )),
        };
        if let Err(d) = r {
            return Err(Diagnostics(vec![d]));
        }
    }
    Ok(c.warnings)
}

/// The state of the checker.
pub(crate) struct Checker {
    vars: Vec<VarInfo>,
    /// Current let-nesting level (for generalisation of local functions).
    level: u32,
    scopes: Vec<Scope>,
    type_scopes: Vec<HashMap<String, TypeBind>>,
    globals: HashMap<String, Scheme>,
    type_abbrs: HashMap<String, TypeAbbr>,
    intrinsics: HashMap<String, Scheme>,
    warnings: Vec<Diagnostic>,
    /// Counter for names of generalised type variables.
    gen_counter: u32,
    /// Internal names of the lifted type parameters (`'^t`) of the definitions being checked.
    lifted: std::collections::HashSet<String>,
    /// Current expression nesting depth.
    depth: u32,
    /// Size variables (see [`Checker::fresh_size`]): their links, per declaration.
    size_vars: Vec<Option<crate::syntax::types::Size>>,
    /// Uses of builtins whose sizes must be inferred from the context (`unflatten`, `split`):
    /// the span of the name and its instantiated type, per declaration.
    sized_uses: Vec<SizedUse>,
    /// For uses of functions with parameters named in sizes ([`env::Scheme::named_params`]):
    /// the span of the name, and each such parameter's position and size variable.
    size_args: HashMap<Span, Vec<(usize, Size)>>,
    /// The final types of those uses, with their sizes resolved, for [`Checker::fill_expr`].
    sized_types: HashMap<Span, Type>,
    /// The text of every source file (to tell how a literal is written).
    texts: Vec<std::sync::Arc<str>>,
}

impl Checker {
    fn new() -> Checker {
        let (intrinsics, _errs) = builtins::intrinsic_schemes();
        Checker {
            vars: vec![],
            level: 0,
            scopes: vec![],
            type_scopes: vec![],
            globals: HashMap::new(),
            type_abbrs: HashMap::new(),
            intrinsics,
            warnings: vec![],
            gen_counter: 0,
            depth: 0,
            lifted: Default::default(),
            size_vars: vec![],
            sized_uses: vec![],
            size_args: HashMap::new(),
            sized_types: HashMap::new(),
            texts: vec![],
        }
    }

    pub(crate) fn check_attr(&mut self, a: &Attr) {
        if let Some(n) = a.name() {
            if !KNOWN_ATTRS.contains(&n) {
                self.warnings.push(
                    Diagnostic::warning(a.span(), format!("unknown attribute `{n}` ignored"))
                        .with_label("unknown attribute"),
                );
            }
        }
    }

    fn check_type_dec(&mut self, td: &mut TypeDec) -> Result<(), Diagnostic> {
        self.vars.clear();
        self.size_vars.clear();
        let r = self
            .push_type_params(&td.params)
            .and_then(|_| self.conv_type(&td.def));
        self.type_scopes.pop();
        r?;
        self.type_abbrs.insert(
            td.name.clone(),
            TypeAbbr {
                params: td.params.clone(),
                def: td.def.clone(),
            },
        );
        Ok(())
    }

    /// A fresh name for a generalised type variable, distinct from the type parameters in scope
    /// and from `avoid`.
    pub(crate) fn gen_name(&mut self, avoid: &[String]) -> String {
        loop {
            self.gen_counter += 1;
            let n = format!("t_{}", self.gen_counter);
            if !avoid.contains(&n) && !self.type_scopes.iter().any(|m| m.contains_key(&n)) {
                return n;
            }
        }
    }

    /// Check the parameters, return annotation and body of a function (top-level or local);
    /// returns the function type. Scopes are pushed and popped here; type parameters must already
    /// be in scope. Binds `name` as [`Binding::Recursive`] while checking.
    pub(crate) fn check_function(
        &mut self,
        name: &str,
        sizes: &[(String, Span)],
        params: &mut [Pat],
        ret: &Option<crate::syntax::ast::TypeExp>,
        body: &mut Expr,
        local: bool,
    ) -> Result<Ty, Diagnostic> {
        self.push_vars();
        self.bind_var(name, Binding::Recursive);
        self.push_vars();
        for (n, _) in sizes {
            self.bind_var(n, Binding::Val(Scheme::mono(Ty::i64())));
        }
        let r = (|| {
            let pts = self.infer_pats(params)?;
            if local {
                self.check_constructive(sizes, &pts)?;
            }
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
        self.pop_scope();
        r
    }

    /// A size parameter of a local function that a parameter's type mentions only inside size
    /// expressions (`[2*n]`) must also be the size of an array of some parameter: local
    /// functions are not instantiated per call, so nothing would find its value. (Top-level
    /// functions may have such parameters: each call finds them by unification, see
    /// [`Checker::check_sized_uses`].)
    fn check_constructive(
        &mut self,
        sizes: &[(String, Span)],
        pts: &[Ty],
    ) -> Result<(), Diagnostic> {
        let zs: Vec<Ty> = pts.iter().map(|p| self.zonk(p)).collect();
        for (n, span) in sizes {
            let used = std::cell::Cell::new(false);
            let in_exp = std::cell::Cell::new(false);
            for t in &zs {
                map_sizes(t, &|d| {
                    match d {
                        Size::Named(m) if m == n => used.set(true),
                        Size::Bin(..) if d.mentions(n) => in_exp.set(true),
                        _ => {}
                    }
                    d.clone()
                });
            }
            if in_exp.get() && !used.get() {
                return Err(Diagnostic::error(
                    *span,
                    format!(
                        "size parameter `{n}` is used only in size expressions of the \
                         parameters' types"
                    ),
                )
                .with_label("not used constructively")
                .with_note(
                    "in a local function a size parameter must also appear on its own as a \
                     dimension of a parameter's type (`[n]t`); pass `n` as an argument, give \
                     the parameter the type `[m]t` with its own size, or make the function a \
                     top-level `def`",
                ));
            }
        }
        Ok(())
    }

    fn check_val_dec(&mut self, d: &mut ValDec) -> Result<(), Diagnostic> {
        self.vars.clear();
        self.size_vars.clear();
        self.sized_uses.clear();
        self.size_args.clear();
        self.sized_types.clear();
        self.lifted.clear();
        // "Any top-level function named `main` is treated as if it had been defined with
        // `entry`" (Futhark's language reference).
        if d.name == "main" {
            d.entry = true;
        }
        self.level = 1;
        for a in &d.attrs {
            self.check_attr(a);
        }
        let tps = self.push_type_params(&d.type_params);
        let r = tps.as_ref().map_err(|e| e.clone()).and_then(|tps| {
            let sizes = tps.sizes.clone();
            self.check_function(&d.name, &sizes, &mut d.params, &d.ret, &mut d.body, false)
        });
        self.type_scopes.pop();
        let ft = r?;
        // A type known only from the constructors used with it is the sum of those.
        for v in 0..self.vars.len() {
            let info = &self.vars[v];
            if info.link.is_none() && !info.constrs.is_empty() {
                let cs = info.constrs.clone().into_iter().collect();
                self.vars[v].link = Some(Ty::sum(cs));
            }
        }
        // Defaulting of ambiguous overloaded types.
        for v in 0..self.vars.len() {
            let info = &self.vars[v];
            if info.link.is_none() {
                if let Some(p) = info.prims.and_then(|s| s.default_type()) {
                    self.vars[v].link = Some(Ty::Prim(p));
                }
            }
        }
        for info in &self.vars {
            if info.link.is_none() && !info.fields.is_empty() {
                return Err(Diagnostic::error(
                    info.span,
                    "type of tuple or record must be known before projection",
                )
                .with_label("the type of this is not known here")
                .with_note("add a type annotation where the value is bound"));
            }
        }
        // Generalise the remaining variables of the definition's type.
        if self.size_exceeds(&ft, MAX_TYPE_SIZE) {
            return Err(too_large(d.name_span));
        }
        let ft = self.zonk(&ft);
        let mut fv = vec![];
        self.free_vars(&ft, &mut fv);
        let tps = tps?;
        let mut params = tps.tys;
        let mut nofun_params = tps.nofun;
        for v in fv {
            let n = self.gen_name(&params);
            if self.vars[v as usize].nofun {
                nofun_params.push(n.clone());
            }
            self.vars[v as usize].link = Some(Ty::Param(n.clone()));
            params.push(n);
        }
        let ft = self.zonk(&ft);
        if d.entry {
            self.check_entry(d, &ft)?;
        }
        self.check_sized_uses()?;
        let size_params: Vec<String> = tps.sizes.iter().map(|(n, _)| n.clone()).collect();
        let hidden_sizes = builtins::size_expr_params(&ft, &size_params);
        d.hidden_sizes = hidden_sizes.clone();
        let mut ret = &ft;
        for _ in &d.params {
            if let Ty::Fun(_, r) = ret {
                ret = r;
            }
        }
        d.ret_ty = Some(ret.to_type());
        for p in &mut d.params {
            self.fill_irrefutable(p)?;
        }
        self.fill_expr(&mut d.body)?;
        self.globals.insert(
            d.name.clone(),
            Scheme {
                params,
                nofun_params,
                ty: ft,
                erase_sizes: true,
                hidden_sizes,
                size_params,
                named_params: d
                    .params
                    .iter()
                    .enumerate()
                    .filter_map(|(k, p)| pat_name(p).map(|n| (k, n)))
                    .collect(),
            },
        );
        self.level = 0;
        Ok(())
    }

    fn check_entry(&self, d: &ValDec, ft: &Ty) -> Result<(), Diagnostic> {
        let mut t = ft.clone();
        let mut items: Vec<(Ty, Span, &str)> = vec![];
        for p in &d.params {
            match t {
                Ty::Fun(a, r) => {
                    items.push((*a, p.span, "parameter"));
                    t = *r;
                }
                _ => break,
            }
        }
        let ret_span = d.ret.as_ref().map(|r| r.span()).unwrap_or(d.name_span);
        // A point-free entry point (`entry f = g`) takes the parameters of its function type.
        while let Ty::Fun(a, r) = t {
            items.push((*a, ret_span, "parameter"));
            t = *r;
        }
        items.push((t, ret_span, "result"));
        for (t, span, what) in items {
            if t.contains_fun() {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "entry point `{}` cannot have a functional {what} type `{t}`",
                        d.name
                    ),
                ));
            }
            if has_param(&t) {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "entry point `{}` must have a fully known {what} type, not `{t}`",
                        d.name
                    ),
                )
                .with_note("entry points cannot be polymorphic; add a type annotation"));
            }
        }
        Ok(())
    }

    /// Checks that the sizes of every use of a function with sizes inferred from the context
    /// (the builtins `unflatten` and `split`, and top-level functions with size parameters
    /// only in size expressions, `[p*q]t`) are known, and records its final type with those
    /// sizes (for lowering, which computes them as `i64` values).
    fn check_sized_uses(&mut self) -> Result<(), Diagnostic> {
        for (span, name, t, hidden) in std::mem::take(&mut self.sized_uses) {
            let z = self.zonk(&t);
            let unknown = hidden.iter().find(|(_, d)| {
                let d = self.zonk_size(d);
                d == Size::Unknown || self.has_size_var(&d)
            });
            if let Some((p, _)) = unknown {
                return Err(if self.globals.contains_key(&name) {
                    ambiguous_size(span, &name, p, &clean_sizes(&z))
                } else {
                    undetermined_sizes(span, &name, &clean_sizes(&z))
                });
            }
            self.sized_types.insert(span, clean_sizes(&z).to_type());
        }
        Ok(())
    }

    /// The final type of a node: substituted, with no inference variables left; sizes that
    /// were inferred through size variables are unknown (as in the lenient size tracking;
    /// only the uses recorded by [`Checker::check_sized_uses`] keep them).
    fn final_type(&self, t: &Option<Type>, span: Span) -> Result<Type, Diagnostic> {
        let Some(t) = t else {
            return Err(Diagnostic::error(
                span,
                "internal error: the type checker missed this expression",
            ));
        };
        let t = Ty::from_type(t);
        if self.size_exceeds(&t, MAX_TYPE_SIZE) {
            return Err(too_large(span));
        }
        let z = self.zonk(&t);
        let mut fv = vec![];
        self.free_vars(&z, &mut fv);
        if !fv.is_empty() {
            return Err(Diagnostic::error(span, format!("type is ambiguous: `{z}`"))
                .with_label("the type of this cannot be inferred")
                .with_note("add a type annotation"));
        }
        Ok(self.zonk_erasing_size_vars(&t).to_type())
    }

    fn fill_pat(&self, p: &mut Pat) -> Result<(), Diagnostic> {
        p.ty = Some(self.final_type(&p.ty, p.span)?);
        match &mut p.kind {
            PatKind::Id(_) | PatKind::Wildcard => Ok(()),
            PatKind::Tuple(ps) => ps.iter_mut().try_for_each(|p| self.fill_pat(p)),
            PatKind::Record(fs) => fs.iter_mut().try_for_each(|(_, _, p)| self.fill_pat(p)),
            PatKind::Constr(_, ps) => ps.iter_mut().try_for_each(|p| self.fill_pat(p)),
            PatKind::Lit(l, neg) => {
                let t = p.ty.clone().unwrap_or_else(Type::unit);
                self.check_literal(l, &t, *neg, p.span, p.span)
            }
            PatKind::Ascribed(p, _) | PatKind::Attr(_, p) => self.fill_pat(p),
        }
    }

    /// [`Checker::fill_pat`] for a pattern that must match every value of its type (all but
    /// `match` cases).
    fn fill_irrefutable(&self, p: &mut Pat) -> Result<(), Diagnostic> {
        self.fill_pat(p)?;
        match patterns::refutable_part(p) {
            Some(q) => Err(Diagnostic::error(
                q.span,
                "refutable pattern: this does not match every value of its type",
            )
            .with_label("may fail to match")
            .with_note("use `match` to test a value against patterns")),
            None => Ok(()),
        }
    }

    fn fill_dims(&self, ds: &mut [DimIndex]) -> Result<(), Diagnostic> {
        for d in ds {
            match d {
                DimIndex::Fix(e) => self.fill_expr(e)?,
                DimIndex::Slice(a, b, c) => {
                    for e in [a, b, c].into_iter().flatten() {
                        self.fill_expr(e)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The expressions given as sizes in a coercion's or ascription's type (checked by
    /// `Checker::check_size_exprs`).
    fn fill_size_exprs(&self, te: &mut TypeExp) -> Result<(), Diagnostic> {
        te.size_exprs_mut()
            .into_iter()
            .try_for_each(|e| self.fill_expr(e))
    }

    fn fill_op(&self, op: &mut OpRef) -> Result<(), Diagnostic> {
        match op {
            OpRef::Builtin(_) => Ok(()),
            OpRef::Fun(f) => self.fill_expr(f),
        }
    }

    fn fill_expr(&self, e: &mut Expr) -> Result<(), Diagnostic> {
        if let ExprKind::Var(_) = e.kind {
            if let Some(t) = self.sized_types.get(&e.span) {
                e.ty = Some(t.clone());
                return Ok(());
            }
        }
        match &mut e.kind {
            ExprKind::Lit(l) => {
                let t = self.final_type(&e.ty, e.span)?;
                self.check_literal(l, &t, false, e.span, e.span)?;
                e.ty = Some(t);
                return Ok(());
            }
            // A negated integer literal is checked as a negative number (`-128i8` fits).
            ExprKind::UnOp(UnOp::Neg, x) if matches!(x.kind, ExprKind::Lit(Literal::Int(..))) => {
                let t = self.final_type(&x.ty, x.span)?;
                if let ExprKind::Lit(l) = &x.kind {
                    self.check_literal(l, &t, true, x.span, e.span.to(x.span))?;
                }
                x.ty = Some(t);
            }
            ExprKind::Var(_) | ExprKind::ProjectSection(_) => {}
            ExprKind::Tuple(es) | ExprKind::ArrayLit(es) => {
                es.iter_mut().try_for_each(|e| self.fill_expr(e))?
            }
            ExprKind::Record(fs) => fs.iter_mut().try_for_each(|(_, _, e)| self.fill_expr(e))?,
            ExprKind::RecordUpdate { record, value, .. } => {
                self.fill_expr(record)?;
                self.fill_expr(value)?;
            }
            ExprKind::Constr(_, es) => es.iter_mut().try_for_each(|e| self.fill_expr(e))?,
            ExprKind::Match(scrutinee, cases) => {
                self.fill_expr(scrutinee)?;
                for (p, body) in cases.iter_mut() {
                    self.fill_pat(p)?;
                    self.fill_expr(body)?;
                }
                let st = scrutinee.ty.clone().unwrap_or_else(Type::unit);
                let pats: Vec<&Pat> = cases.iter().map(|(p, _)| p).collect();
                if let Some(missing) = patterns::missing_case(&pats, &st) {
                    return Err(Diagnostic::error(
                        e.span,
                        format!("unmatched case: `{missing}` is not matched by any pattern"),
                    )
                    .with_label("not exhaustive")
                    .with_note(format!("the value has type `{st}`")));
                }
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                self.fill_expr(start)?;
                if let Some(s) = second {
                    self.fill_expr(s)?;
                }
                self.fill_expr(end)?;
            }
            ExprKind::BinOp(op, a, b) => {
                self.fill_op(op)?;
                self.fill_expr(a)?;
                self.fill_expr(b)?;
            }
            ExprKind::Ascribe(a, te) | ExprKind::Coerce(a, te) => {
                self.fill_expr(a)?;
                self.fill_size_exprs(te)?;
            }
            ExprKind::UnOp(_, a)
            | ExprKind::Project(a, _)
            | ExprKind::Attr(_, a)
            | ExprKind::LocalOpen(_, a) => self.fill_expr(a)?,
            ExprKind::Apply(f, args) => {
                self.fill_expr(f)?;
                args.iter_mut().try_for_each(|e| self.fill_expr(e))?;
            }
            ExprKind::Lambda { params, body, .. } => {
                params
                    .iter_mut()
                    .try_for_each(|p| self.fill_irrefutable(p))?;
                self.fill_expr(body)?;
            }
            ExprKind::OpSection(op) => self.fill_op(op)?,
            ExprKind::LeftSection(op, a) | ExprKind::RightSection(op, a) => {
                self.fill_op(op)?;
                self.fill_expr(a)?;
            }
            ExprKind::If(c, a, b) => {
                self.fill_expr(c)?;
                self.fill_expr(a)?;
                self.fill_expr(b)?;
            }
            ExprKind::Let { pat, value, body } => {
                self.fill_irrefutable(pat)?;
                self.fill_expr(value)?;
                self.fill_expr(body)?;
            }
            ExprKind::LetFun {
                params,
                value,
                body,
                ..
            } => {
                params
                    .iter_mut()
                    .try_for_each(|p| self.fill_irrefutable(p))?;
                self.fill_expr(value)?;
                self.fill_expr(body)?;
            }
            ExprKind::LetWith {
                indices,
                value,
                body,
                ..
            } => {
                self.fill_dims(indices)?;
                self.fill_expr(value)?;
                self.fill_expr(body)?;
            }
            ExprKind::Update {
                array,
                indices,
                value,
            } => {
                self.fill_expr(array)?;
                self.fill_dims(indices)?;
                self.fill_expr(value)?;
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => {
                self.fill_irrefutable(pat)?;
                if let Some(i) = init {
                    self.fill_expr(i)?;
                }
                match form {
                    LoopForm::For(_, _, n) => self.fill_expr(n)?,
                    LoopForm::ForIn(p, xs) => {
                        self.fill_irrefutable(p)?;
                        self.fill_expr(xs)?;
                    }
                    LoopForm::While(c) => self.fill_expr(c)?,
                }
                self.fill_expr(body)?;
            }
            ExprKind::Index(a, idx) => {
                self.fill_expr(a)?;
                self.fill_dims(idx)?;
            }
            ExprKind::Assert(c, a) => {
                self.fill_expr(c)?;
                self.fill_expr(a)?;
            }
        }
        e.ty = Some(self.final_type(&e.ty, e.span)?);
        Ok(())
    }
}

impl Checker {
    /// Checks that a literal of type `t` (negated when `neg`) is a value of that type, as
    /// Futhark does: an integer literal in the range of its integer type (a hexadecimal or binary
    /// literal with a type suffix, not negated, may also be any bit pattern of the type's width:
    /// `0xffi8` is `-1i8`), any numeric literal finite in its float type. `span` is the literal's, `whole`
    /// the span reported (with the `-`).
    fn check_literal(
        &self,
        l: &Literal,
        t: &Type,
        neg: bool,
        span: Span,
        whole: Span,
    ) -> Result<(), Diagnostic> {
        let Type::Prim(p) = t else { return Ok(()) };
        let bad = |shown: String, range: String| {
            Err(Diagnostic::error(
                whole,
                format!("literal {shown} is out of range for type `{p}`"),
            )
            .with_label(format!("`{p}` holds {range}")))
        };
        let radix_prefixed = || {
            self.texts
                .get(span.file.0 as usize)
                .and_then(|t| t.get(span.lo as usize..))
                .is_some_and(|t| {
                    let t = t.as_bytes();
                    t.len() > 1 && t[0] == b'0' && matches!(t[1], b'x' | b'X' | b'b' | b'B')
                })
        };
        match (l, p) {
            (Literal::Int(v, suffix), PrimType::Int(it)) => {
                let x = i128::try_from(*v).unwrap_or(i128::MAX);
                let x = if neg { -x } else { x };
                let ok = it.contains(x)
                    || (!neg && suffix.is_some() && radix_prefixed() && it.bit_pattern(*v as i128));
                if !ok {
                    let (lo, hi) = it.min_max();
                    let shown = if neg { format!("-{v}") } else { v.to_string() };
                    return bad(shown, format!("{lo} to {hi}"));
                }
            }
            (Literal::Int(v, _), PrimType::Float(ft)) if !float_fits(*ft, *v as f64) => {
                let shown = if neg { format!("-{v}") } else { v.to_string() };
                return bad(shown, format_float_range(*ft));
            }
            (Literal::Float(x, _), PrimType::Float(ft)) if !float_fits(*ft, *x) => {
                return bad(format!("{x:e}"), format_float_range(*ft));
            }
            _ => {}
        }
        Ok(())
    }
}

/// Whether the finite `x` stays finite in float type `t`.
fn float_fits(t: FloatType, x: f64) -> bool {
    match t {
        FloatType::F16 => half::f16::from_f64(x).is_finite(),
        FloatType::F32 => (x as f32).is_finite(),
        FloatType::F64 => x.is_finite(),
    }
}

/// The finite range of a float type, for messages.
fn format_float_range(t: FloatType) -> String {
    let max = match t {
        FloatType::F16 => "65504",
        FloatType::F32 => "3.4028235e38",
        FloatType::F64 => "1.7976931348623157e308",
    };
    format!("finite values up to ±{max}")
}

/// The largest type (in nodes) the checker writes into the AST.
pub(crate) const MAX_TYPE_SIZE: usize = 100_000;

pub(crate) fn too_large(span: Span) -> Diagnostic {
    Diagnostic::error(span, "the type of this is too large")
        .with_note(format!("types are limited to {MAX_TYPE_SIZE} nodes"))
}

/// The error for a use of a builtin whose result sizes are not known (`unflatten xs` with
/// `xs: []t`); `shown` is its type at the use.
fn undetermined_sizes(span: Span, name: &str, shown: &Ty) -> Diagnostic {
    let mut ret = shown;
    while let Ty::Fun(_, r) = ret {
        ret = r;
    }
    Diagnostic::error(
        span,
        format!(
            "cannot determine the sizes of `{name}`'s result `{ret}` here; add a type \
             annotation such as `: [n][m]t`"
        ),
    )
    .with_label(format!("this has type `{shown}`"))
    .with_note(
        "the sizes come from the argument's type (`[n*m]t` for `unflatten`, `[n+m]t` for \
         `split`, e.g. by a coercion `xs :> [n*m]t`) or from the expected type of the result (a \
         type annotation or a declared return type)",
    )
}

/// The error for a call of a top-level function whose size parameter `p`, used only in size
/// expressions of its parameters' types, is not determined by the arguments' types (Futhark:
/// "ambiguous size").
fn ambiguous_size(span: Span, name: &str, p: &str, shown: &Ty) -> Diagnostic {
    Diagnostic::error(
        span,
        format!("ambiguous size `{p}` in this call of `{name}`"),
    )
    .with_label(format!("`{name}` has type `{shown}` here"))
    .with_note(format!(
        "`{p}` is the size of no parameter (it occurs only inside size expressions such as \
         `[{p}*q]t`, or only in the result's type), so each call finds it by matching the \
         function's type against the use: an argument of type `[a*b]t` for a parameter of type \
         `[{p}*q]t` gives `{p} = a`, and so does a result expected to be `[a*b]t` where the \
         result's type is `[{p}*q]t`; give the argument or the result such a type, e.g. by a \
         coercion `xs :> [a*b]t` or an ascription `(f x : [a]t)`"
    ))
}

/// Whether a type parameter occurs in a type.
fn has_param(t: &Ty) -> bool {
    match t {
        Ty::Param(_) | Ty::Var(_) => true,
        Ty::Prim(_) => false,
        Ty::Array(_, e) | Ty::Acc(e) => has_param(e),
        Ty::Tuple(ts) => ts.iter().any(has_param),
        Ty::Record(fs) => fs.iter().any(|(_, t)| has_param(t)),
        Ty::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(has_param),
        Ty::Fun(a, r) => has_param(a) || has_param(r),
    }
}

/// `t` with every size that mentions a size variable made unknown.
fn erase_size_vars(t: &Ty) -> Ty {
    map_sizes(t, &|d| {
        if ty::mentions_var(d) {
            Size::Unknown
        } else {
            d.clone()
        }
    })
}

/// `t` (substituted) with unresolved size variables shown as unknown sizes.
fn clean_sizes(t: &Ty) -> Ty {
    erase_size_vars(t)
}

fn map_sizes(t: &Ty, f: &dyn Fn(&Size) -> Size) -> Ty {
    match t {
        Ty::Array(d, e) => Ty::arr(f(d), map_sizes(e, f)),
        _ => t.map_children(&mut |c| map_sizes(c, f)),
    }
}

/// The name a parameter pattern binds, if it is a single name (`n`, `(n: i64)`).
fn pat_name(p: &Pat) -> Option<String> {
    match &p.kind {
        PatKind::Id(n) => Some(n.clone()),
        PatKind::Ascribed(q, _) | PatKind::Attr(_, q) => pat_name(q),
        _ => None,
    }
}
