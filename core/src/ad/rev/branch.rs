//! The return sweep of `if`: an `if` on the same condition whose branches re-execute their
//! forward sweep, seed the adjoints of their results and run their return sweep. Each branch
//! returns the adjoints of the free variables that either branch changed (the adjoint before
//! the `if` when that branch left it alone); after the `if`, those results are the adjoints.

use super::{bound_in, Adj, Rev, R};
use crate::ir::*;
use std::collections::{BTreeSet, HashMap};

impl Rev<'_> {
    pub(super) fn rev_if(&mut self, stm: &Stm) -> R<()> {
        let Exp::If {
            cond,
            then_b,
            else_b,
            ..
        } = &stm.exp
        else {
            return Err("if (internal error)".into());
        };
        let res_adjs = self.take_result_adjs(&stm.pat);
        let before = self.adjs.clone();

        let (tb, tadjs) = self.rev_branch(then_b, &res_adjs)?;
        self.adjs = before.clone();
        let (eb, eadjs) = self.rev_branch(else_b, &res_adjs)?;
        self.adjs = before.clone();

        // The free variables whose adjoint either branch changed (sorted, for determinism).
        let local_t = bound_in(&tb.stms);
        let local_e = bound_in(&eb.stms);
        let mut changed: BTreeSet<VName> = BTreeSet::new();
        for (adjs, locals) in [(&tadjs, &local_t), (&eadjs, &local_e)] {
            for (k, v) in adjs {
                if !locals.contains(k) && before.get(k) != Some(v) {
                    changed.insert(k.clone());
                }
            }
        }
        let changed: Vec<VName> = changed.into_iter().collect();
        let tb = self.branch_results(tb, &tadjs, &before, &changed)?;
        let eb = self.branch_results(eb, &eadjs, &before, &changed)?;

        // Result types: accumulators keep their type; values have the primal's type.
        let mut pat = vec![];
        let mut ret = vec![];
        for (k, r) in changed.iter().zip(&tb.result) {
            let ty = match r {
                SubExp::Var(v) if matches!(self.types.get(v), Some(Type::Acc { .. })) => {
                    self.ty_of(v)?
                }
                _ => self.ty_of(k)?,
            };
            ret.push(ty.to_ext());
            pat.push(Param {
                name: self.ns.fresh(&format!("{}_adj", k.base)),
                ty,
            });
        }
        let names: Vec<VName> = pat.iter().map(|p| p.name.clone()).collect();
        self.emit(Stm {
            pat: Pat { elems: pat },
            exp: Exp::If {
                cond: cond.clone(),
                then_b: tb,
                else_b: eb,
                ret,
            },
            attrs: Attrs::default(),
            loc: stm.loc.clone(),
        });
        for (k, n) in changed.iter().zip(names) {
            if matches!(self.types.get(&n), Some(Type::Acc { .. })) {
                self.adjs.insert(k.clone(), Adj::Acc(n));
            } else {
                // A branch may return a shared value: not owned.
                self.set_adj(k, SubExp::Var(n), false);
            }
        }
        Ok(())
    }

    /// Re-executes `body`, seeds its results with `res_adjs` and runs its return sweep; returns
    /// the statements and the adjoint map at the end.
    fn rev_branch(
        &mut self,
        body: &Body,
        res_adjs: &[Option<(SubExp, bool)>],
    ) -> R<(Body, HashMap<VName, Adj>)> {
        let body = self.rename_body(body);
        let b = self.in_body(|r| {
            r.fwd_stms(&body.stms)?;
            for (res, a) in body.result.iter().zip(res_adjs) {
                // Only one branch runs, so each may consume an owned seed.
                if let Some((a, owned)) = a {
                    r.add_adj_se(res, a.clone(), *owned)?;
                }
            }
            r.rev_stms(&body.stms)?;
            Ok(vec![])
        })?;
        Ok((b, self.adjs.clone()))
    }

    /// Appends to a branch the adjoints of `changed` as its results.
    fn branch_results(
        &mut self,
        mut b: Body,
        adjs: &HashMap<VName, Adj>,
        before: &HashMap<VName, Adj>,
        changed: &[VName],
    ) -> R<Body> {
        let saved = std::mem::take(&mut self.stms);
        let mut result = vec![];
        for k in changed {
            let a = adjs.get(k).or_else(|| before.get(k));
            let v = match a {
                Some(Adj::Val { v, .. }) => v.clone(),
                Some(Adj::Acc(c)) => SubExp::Var(c.clone()),
                None => {
                    // Untouched here and zero before, or an accumulator first made in the
                    // other branch (then its lambda param is the value before the `if`).
                    let fa = self
                        .frames
                        .last()
                        .and_then(|f| f.accs.iter().find(|a| &a.array == k));
                    match fa {
                        Some(fa) => SubExp::Var(fa.param.name.clone()),
                        None => {
                            let ty = self.ty_of(k)?;
                            self.zeros(&ty)?
                        }
                    }
                }
            };
            result.push(v);
        }
        let extra = std::mem::replace(&mut self.stms, saved);
        b.stms.extend(extra);
        b.result = result;
        Ok(b)
    }
}
