//! Custom derivatives (`with_vjp f f' x`, [`Exp::WithVjp`]).
//!
//! For `y = with_vjp primal adjoint x`, the forward sweep runs `primal` (inlined, with fresh
//! names) and the return sweep does not differentiate it: it runs the user's `adjoint` on the
//! primal result and its adjoint, `x̄ += adjoint y ȳ` (a result without an adjoint passes
//! zeros). As in Futhark, free variables of `primal` get no adjoint through it.

use super::{one_stm, Rev, R};
use crate::ir::*;

impl Rev<'_> {
    /// The forward sweep of a [`Exp::WithVjp`] statement: `primal` inlined.
    pub(super) fn fwd_with_vjp(&mut self, stm: &Stm) -> R<()> {
        let Exp::WithVjp { primal, args, .. } = &stm.exp else {
            return Err("with_vjp rule on another statement (internal error)".into());
        };
        let lam = self.rename_lambda(primal);
        for s in inline_lambda(lam, args, &stm.pat) {
            self.emit(s);
        }
        Ok(())
    }

    /// The return sweep of a [`Exp::WithVjp`] statement: the user's adjoint function.
    pub(super) fn rev_with_vjp(&mut self, stm: &Stm) -> R<()> {
        let Exp::WithVjp { adjoint, args, .. } = &stm.exp else {
            return Err("with_vjp rule on another statement (internal error)".into());
        };
        let adjs = self.take_result_adjs(&stm.pat);
        let mut inputs: Vec<SubExp> = stm
            .pat
            .elems
            .iter()
            .map(|p| SubExp::Var(p.name.clone()))
            .collect();
        for (p, a) in stm.pat.elems.iter().zip(adjs) {
            inputs.push(match a {
                Some((v, _)) => v,
                None => self.zeros(&p.ty)?,
            });
        }
        let lam = self.rename_lambda(adjoint);
        if lam.params.len() != inputs.len() || lam.body.result.len() != args.len() {
            return Err("with_vjp's adjoint function has the wrong arity (internal error)".into());
        }
        for (p, v) in lam.params.iter().zip(inputs) {
            self.emit(one_stm(p.clone(), Exp::SubExp(v)));
        }
        for s in lam.body.stms {
            self.emit(s);
        }
        for (a, d) in args.iter().zip(lam.body.result) {
            self.add_adj_se(a, d, false)?;
        }
        Ok(())
    }
}

/// The statements of `lam` applied to `args`, binding its results to `pat` (`lam`'s names must
/// be fresh where the statements go).
pub(crate) fn inline_lambda(lam: Lambda, args: &[SubExp], pat: &Pat) -> Vec<Stm> {
    let mut out = vec![];
    for (p, a) in lam.params.into_iter().zip(args) {
        out.push(one_stm(p, Exp::SubExp(a.clone())));
    }
    out.extend(lam.body.stms);
    for (pe, r) in pat.elems.iter().zip(lam.body.result) {
        out.push(one_stm(pe.clone(), Exp::SubExp(r)));
    }
    out
}

/// Replaces every [`Exp::WithVjp`] in `body` (nested ones too) by its primal function inlined:
/// what remains of custom derivatives where no `vjp` used them.
pub(crate) fn inline_all(body: &mut Body) {
    let stms = std::mem::take(&mut body.stms);
    for mut s in stms {
        for b in crate::passes::traverse::nested_bodies(&mut s.exp) {
            inline_all(b);
        }
        match s.exp {
            Exp::WithVjp { primal, args, .. } => {
                body.stms.extend(inline_lambda(primal, &args, &s.pat))
            }
            _ => body.stms.push(s),
        }
    }
}
