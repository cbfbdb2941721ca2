//! Adjoints of the free variables of `reduce`/`scan`/`reduce_by_index` operators.
//!
//! An operator `⊙_v` that reads a free float variable `v` (a scalar or an array) is applied
//! once per element; the adjoint of `v` is the sum over all those applications of
//! `(∂(x ⊙_v y)/∂v)ᵀ · z̄`, where `z̄` is the adjoint of that application's result. The rules
//! give it in terms of values they already compute:
//!
//! - `reduce` (a left fold `y = (((e ⊙ a₀) ⊙ a₁) ⊙ …)`, equal to any other bracketing because
//!   `⊙_v` is associative for every `v`): application `i` computes `lsᵢ ⊙ aᵢ`, and the rest of
//!   the fold is `x ↦ x ⊙ rsᵢ`, so its contribution is the `v`-adjoint of
//!   `λ l a r → (l ⊙_v a) ⊙_{v'} r` at `(lsᵢ, aᵢ, rsᵢ)` with seed `ȳ`, where `v'` is a frozen
//!   copy of `v` (a constant of the derivative: the second application is not application `i`).
//! - `scan`: application `i` computes `ysᵢ = ysᵢ₋₁ ⊙ aᵢ`, whose total adjoint `r̄sᵢ` the scan
//!   rule has computed: the `v`-adjoint of `λ x a → x ⊙_v a` at `(ysᵢ₋₁, aᵢ)` (`ys₋₁ = e`)
//!   with seed `r̄sᵢ`.
//! - `reduce_by_index`: per bin `y_b = h_b ⊙ s_b` (the bin's reduction `s_b`) with seed `ȳ_b`,
//!   and inside each bin as for `reduce`, with seed `s̄_b`.
//!
//! Each sum is built as the return sweep of an ordinary `map` of that lambda over the rule's
//! arrays, with the given seeds as the adjoints of its results ([`Rev::rev_map`]): the `map`
//! rule already sums scalar contributions with a `reduce` and accumulates into free arrays
//! (inside enclosing `map`s too). The arrays the `map` reads are made inactive for the
//! occasion, so only the free variables receive adjoints.
//!
//! Free variables of float and integer types are differentiated (integer programs have
//! integer adjoints, as in Futhark); booleans have none. The neutral element must be neutral for every value of `v` (as Futhark
//! requires); it gets no adjoint.

use super::{has_adjoint, Rev, R};
use crate::ir::*;
use crate::passes::traverse::{walk_lambda, Binders, Substitute, UseCounter};
use crate::prim::PrimType;
use std::collections::{HashMap, HashSet};

impl Rev<'_> {
    /// The free variables of an operator lambda that get an adjoint: active, of a float or
    /// integer type (scalars or arrays). Sorted, for determinism.
    pub(super) fn operator_free_vars(&self, lam: &Lambda) -> Vec<VName> {
        let mut uses = UseCounter::default();
        let mut binders = Binders::default();
        let mut l = lam.clone();
        walk_lambda(&mut uses, &mut l);
        walk_lambda(&mut binders, &mut l);
        let bound: HashSet<VName> = binders.names.into_iter().collect();
        let mut out: Vec<VName> = uses
            .uses
            .into_keys()
            .filter(|v| !bound.contains(v) && self.active(v))
            .filter(|v| {
                self.types.get(v).is_some_and(|t| {
                    has_adjoint(t)
                        && matches!(t.elem(), Some(PrimType::Float(_) | PrimType::Int(_)))
                })
            })
            .collect();
        out.sort();
        out
    }

    /// `lam` with its free variables `fvs` replaced by frozen copies: fresh names bound to the
    /// same values here but inactive (constants of the derivative).
    pub(super) fn freeze_free_vars(&mut self, lam: &Lambda, fvs: &[VName]) -> R<Lambda> {
        let mut map = HashMap::new();
        for v in fvs {
            let ty = self.ty_of(v)?;
            let c = self.bind(
                &format!("{}_frozen", v.base),
                ty,
                Exp::SubExp(SubExp::Var(v.clone())),
            );
            self.outside.insert(c.clone());
            map.insert(v.clone(), SubExp::Var(c));
        }
        let mut l = lam.clone();
        walk_lambda(&mut Substitute { map: &map }, &mut l);
        Ok(l)
    }

    /// `λ l a r → (l ⊙ a) ⊙' r` where `⊙'` is `⊙` with its free variables `fvs` frozen: the
    /// lambda whose free-variable adjoint is one application's contribution in a fold.
    pub(super) fn fold_application(&mut self, op: &Lambda, fvs: &[VName]) -> R<Lambda> {
        let k = op.ret.len();
        let frozen = self.freeze_free_vars(op, fvs)?;
        let mut params = vec![];
        for base in ["l", "a", "r"] {
            for t in &op.ret {
                params.push(self.fresh_param(base, t.clone()));
            }
        }
        let args: Vec<SubExp> = params.iter().map(|p| SubExp::Var(p.name.clone())).collect();
        let body = self.in_body(|r| {
            let mut la = r.inline_lambda(op, &args[..2 * k])?;
            la.extend(args[2 * k..].iter().cloned());
            r.inline_lambda(&frozen, &la)
        })?;
        Ok(Lambda {
            params,
            body,
            ret: op.ret.clone(),
        })
    }

    /// Adds `Σᵢ (∂lam(rowsᵢ)/∂fv)ᵀ · seedsᵢ` to the adjoint of every free variable `fv` of
    /// `lam`, where `rowsᵢ` are the rows of `arrs` (outer size `w`) and `seeds` the adjoints of
    /// the rows of `lam`'s results (`None`: zero). Nothing is added to the adjoints of `arrs`.
    pub(super) fn free_var_adjoints(
        &mut self,
        w: &SubExp,
        lam: Lambda,
        arrs: &[VName],
        seeds: &[Option<VName>],
    ) -> R<()> {
        if lam.ret.len() != seeds.len() || lam.params.len() != arrs.len() {
            return Err("free-variable adjoints: arity (internal error)".into());
        }
        let elems: Vec<Param> = lam
            .ret
            .iter()
            .map(|t| Param {
                name: self.ns.fresh("fv_app"),
                ty: t.array_of(w.clone()),
            })
            .collect();
        let stm = Stm {
            pat: Pat { elems },
            exp: Exp::Soac(Soac::Map {
                w: w.clone(),
                arrs: arrs.to_vec(),
                lam,
            }),
            attrs: Attrs::default(),
            loc: None,
        };
        // The results are never computed: the map rule re-executes the lambda itself.
        self.record_pat(&stm.pat);
        if let Some(f) = self.frames.last_mut() {
            f.locals
                .extend(stm.pat.elems.iter().map(|p| p.name.clone()));
        }
        for (p, s) in stm.pat.elems.iter().zip(seeds) {
            if let Some(s) = s {
                self.set_adj(&p.name, SubExp::Var(s.clone()), false);
            }
        }
        // The inputs are inactive for the occasion (their adjoints come from the rule itself).
        let made_inactive: Vec<VName> = arrs
            .iter()
            .filter(|a| self.outside.insert((*a).clone()))
            .cloned()
            .collect();
        let res = self.rev_map(&stm);
        for a in made_inactive {
            self.outside.remove(&a);
        }
        res
    }

    /// `replicate w v` for a value `v` of type `ty`.
    pub(super) fn replicate_w(&mut self, w: &SubExp, v: SubExp, ty: &Type) -> VName {
        self.bind(
            "rep",
            ty.array_of(w.clone()),
            Exp::Replicate {
                shape: vec![w.clone()],
                value: v,
            },
        )
    }
}

#[cfg(test)]
#[path = "tests_free_ops.rs"]
mod tests;
