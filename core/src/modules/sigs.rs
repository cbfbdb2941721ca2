//! Module types: their evaluation to the names they specify ([`Sig`]), and the matching of a
//! module against one, which checks that the module has every specified name and keeps only
//! those ("ascription": names outside the module type are not visible through it).
//!
//! vkad checks names only: the types in `val` specifications are not compared with the
//! module's definitions, and abstract types stay transparent (the type checker sees through
//! them); see "What vkad checks less strictly than Futhark" in docs/language.md. The type of a
//! refinement `S with t = T.t` is resolved, so an unknown name there is an error.

use std::rc::Rc;

use super::env::{Env, ModVal, Sig};
use super::resolve::Resolver;
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::{Liftedness, QualName, SigExp, Spec, TypeParam, TypeRefinement};

type R<T> = Result<T, Diagnostic>;

/// Evaluates a module type expression in `scope`.
pub(crate) fn eval_sig(s: &SigExp, scope: &Env) -> R<Sig> {
    eval_sig_in(s, scope, &[])
}

/// Evaluates a module type expression in `scope`, inside a module type whose specifications so
/// far declare the types `sig_types` (which a refinement may name: `include s with t = t`).
fn eval_sig_in(s: &SigExp, scope: &Env, sig_types: &[String]) -> R<Sig> {
    match s {
        SigExp::Var(q, span) => lookup_sig(q, *span, scope).map(|s| (*s).clone()),
        SigExp::Specs(specs, _) => {
            let mut sig = Sig::default();
            for spec in specs {
                match spec {
                    Spec::Val { name, .. } => {
                        if !sig.vals.contains(name) {
                            sig.vals.push(name.clone());
                        }
                    }
                    Spec::Type { name, .. } => {
                        if !sig.has_type(name) {
                            sig.types.push(name.clone());
                        }
                    }
                    Spec::Module { name, sig: s, .. } => {
                        let inner = eval_sig_in(s, scope, &sig.types)?;
                        sig.mods.retain(|(m, _)| m != name);
                        sig.mods.push((name.clone(), inner));
                    }
                    Spec::Include(s, _) => {
                        let inner = eval_sig_in(s, scope, &sig.types)?;
                        sig.include(&inner);
                    }
                }
            }
            Ok(sig)
        }
        SigExp::With(base, r, _) => {
            let sig = eval_sig_in(base, scope, sig_types)?;
            refine(sig, r, scope, sig_types)
        }
    }
}

/// The named module type `q` (`S` or `M.S`).
fn lookup_sig(q: &QualName, span: Span, scope: &Env) -> R<Rc<Sig>> {
    let unknown = || {
        Diagnostic::error(span, format!("unknown module type `{q}`"))
            .with_label("no module type of this name is in scope")
    };
    let env = match q.quals.split_first() {
        None => return scope.sigs.get(&q.name).cloned().ok_or_else(unknown),
        Some((first, rest)) => {
            let Some(m) = scope.mods.get(first) else {
                return Err(super::eval::unknown_module(first, span));
            };
            super::eval::walk_path(m.clone(), first, rest, span)?
        }
    };
    env.sigs.get(&q.name).cloned().ok_or_else(unknown)
}

/// `sig with t params = def`: the refined type must be one of `sig`'s, and `def` must resolve
/// (in `scope`, or to one of the enclosing module type's `sig_types`).
fn refine(sig: Sig, r: &TypeRefinement, scope: &Env, sig_types: &[String]) -> R<Sig> {
    let mut def = r.def.clone();
    let mut params = r.params.clone();
    params.extend(sig_types.iter().map(|t| TypeParam::Type {
        name: t.clone(),
        liftedness: Liftedness::Lifted,
        span: r.span,
    }));
    Resolver::new(scope).type_with_params(&params, &mut def)?;
    let mut target = &sig;
    for m in &r.name.quals {
        match target.mods.iter().find(|(n, _)| n == m) {
            Some((_, s)) => target = s,
            None => {
                return Err(Diagnostic::error(
                    r.span,
                    format!("the module type has no module `{m}` to refine"),
                ))
            }
        }
    }
    if !target.has_type(&r.name.name) {
        return Err(Diagnostic::error(
            r.span,
            format!("the module type has no type `{}` to refine", r.name),
        )
        .with_label("not a type of the module type"));
    }
    Ok(sig)
}

/// The view of module `m` through module type `sig`: only the specified names. `what` names
/// the module in the error when one is missing (e.g. "the argument of `mk_linalg`").
pub(crate) fn restrict(m: &Env, sig: &Sig, span: Span, what: &str) -> R<Env> {
    let missing = |kind: &str, name: &str| {
        Diagnostic::error(
            span,
            format!("{what} does not match its module type: it has no {kind} `{name}`"),
        )
        .with_label(format!("lacks {kind} `{name}`"))
    };
    let mut out = Env {
        prim: m.prim,
        ..Env::default()
    };
    for v in &sig.vals {
        let r = m.vals.get(v).ok_or_else(|| missing("value", v))?;
        out.vals.insert(v.clone(), r.clone());
    }
    for t in &sig.types {
        let r = m.types.get(t).ok_or_else(|| missing("type", t))?;
        out.types.insert(t.clone(), r.clone());
    }
    for (name, s) in &sig.mods {
        match m.mods.get(name) {
            Some(ModVal::Struct(inner)) => {
                let what = format!("module `{name}` of {what}");
                let v = restrict(inner, s, span, &what)?;
                out.mods.insert(name.clone(), ModVal::Struct(Rc::new(v)));
            }
            Some(ModVal::Functor(_)) => {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "{what} does not match its module type: its module `{name}` is parametric"
                    ),
                ))
            }
            None => return Err(missing("module", name)),
        }
    }
    Ok(out)
}
