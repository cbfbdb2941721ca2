//! Functor application by substitution: `F A` evaluates `F`'s body again, in the scope `F` was
//! declared in, with the parameter bound to `A` seen through the parameter's module type. Each
//! application makes its own copies of the definitions in the body, named after the module
//! being defined (`module linalg_f64 = mk_linalg f64` defines `linalg_f64.dotprod`, ...), as
//! Futhark's defunctorisation does. A functor of several parameters takes them one at a time.

use std::rc::Rc;

use super::env::{Functor, ModVal};
use super::eval::{Ctx, Elab};
use super::sigs::{eval_sig, restrict};
use crate::diag::{Diagnostic, Span};

type R<T> = Result<T, Diagnostic>;

/// The most functor applications one program may make (each copies a functor's body, so nested
/// applications can grow exponentially).
pub(crate) const MAX_APPLICATIONS: u32 = 100_000;

/// Applies the module `f` to the argument `arg`; `span` is the application's.
pub(crate) fn apply(elab: &mut Elab, f: ModVal, arg: ModVal, span: Span, ctx: &Ctx) -> R<ModVal> {
    let ModVal::Functor(f) = f else {
        return Err(Diagnostic::error(
            span,
            "this module is not parametric: it cannot be applied to an argument",
        )
        .with_label("too many arguments, or not a parametric module"));
    };
    let Some((param, rest)) = f.params.split_first() else {
        return Err(Diagnostic::error(
            span,
            "internal error: a functor without parameters",
        ));
    };
    let ModVal::Struct(arg) = arg else {
        return Err(Diagnostic::error(
            span,
            format!(
                "the argument for parameter `{}` of `{}` is a parametric module; it must be applied to its arguments first",
                param.name, f.name
            ),
        ));
    };
    let sig = eval_sig(&param.sig, &f.closure)?;
    let what = format!(
        "the argument for parameter `{}` of `{}`",
        param.name, f.name
    );
    let view = restrict(&arg, &sig, span, &what)?;
    let mut closure = f.closure.clone();
    closure
        .mods
        .insert(param.name.clone(), ModVal::Struct(Rc::new(view)));
    if !rest.is_empty() {
        return Ok(ModVal::Functor(Rc::new(Functor {
            name: f.name.clone(),
            params: rest.to_vec(),
            closure,
            sig: f.sig.clone(),
            body: f.body.clone(),
        })));
    }
    elab.applications += 1;
    if elab.applications > MAX_APPLICATIONS {
        return Err(Diagnostic::not_supported(
            span,
            format!("more than {MAX_APPLICATIONS} functor applications in one program"),
        ));
    }
    let body = elab.mod_exp(&f.body, &closure, ctx)?;
    match &f.sig {
        None => Ok(body),
        Some(s) => {
            let sig = eval_sig(s, &closure)?;
            let ModVal::Struct(m) = body else {
                return Err(Diagnostic::error(
                    span,
                    format!("the body of `{}` is a parametric module", f.name),
                ));
            };
            let what = format!("the result of `{}`", f.name);
            Ok(ModVal::Struct(Rc::new(restrict(
                &m,
                &sig,
                s.span(),
                &what,
            )?)))
        }
    }
}
