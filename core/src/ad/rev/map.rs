//! The return sweep of `map` (paper 000 §4.2): a `map` over the primal inputs and the result
//! adjoints whose lambda re-executes the forward sweep of the original lambda and then runs its
//! return sweep, returning the adjoints of the rows of its inputs. Free variables:
//! - an array bound outside gets an accumulator ([`super::Frame`]): either passed on from an
//!   enclosing `map` or made by a `withacc` (operator `+`) wrapped around this `map`;
//! - a scalar bound outside gets one contribution per iteration, returned as an extra result
//!   and summed with a `reduce`.

use super::{has_adjoint, Adj, Frame, Rev, R};
use crate::ir::*;
use std::collections::HashSet;

/// What the lambda of the return-sweep `map` returns, besides accumulators.
struct MapResults {
    /// For each primal lambda param: does the lambda return its adjoint?
    param_adjs: Vec<bool>,
    /// Free scalars with a contribution, in result order.
    scalars: Vec<VName>,
}

impl Rev<'_> {
    pub(super) fn rev_map(&mut self, stm: &Stm) -> R<()> {
        let Exp::Soac(Soac::Map { w, arrs, lam }) = &stm.exp else {
            return Err("map (internal error)".into());
        };
        let res_adjs = self.take_result_adjs(&stm.pat);
        let lam = self.rename_lambda(lam);

        // Inputs: the primal rows, then the rows of the nonzero result adjoints.
        let mut inputs: Vec<VName> = arrs.clone();
        let mut params: Vec<Param> = lam.params.clone();
        let mut seeds: Vec<Option<SubExp>> = vec![];
        for (i, a) in res_adjs.iter().enumerate() {
            match a {
                Some((SubExp::Var(v), _)) => {
                    let p = Param {
                        name: self.ns.fresh("adj_row"),
                        ty: lam.ret[i].clone(),
                    };
                    self.types.insert(p.name.clone(), p.ty.clone());
                    seeds.push(Some(SubExp::Var(p.name.clone())));
                    inputs.push(v.clone());
                    params.push(p);
                }
                _ => seeds.push(None),
            }
        }
        for p in &params {
            self.types.insert(p.name.clone(), p.ty.clone());
        }
        let outer = std::mem::take(&mut self.adjs);
        self.frames.push(Frame {
            locals: params.iter().map(|p| p.name.clone()).collect(),
            accs: vec![],
            outer_adjs: outer,
        });
        let mut meta = MapResults {
            param_adjs: vec![],
            scalars: vec![],
        };
        let body = self.in_body(|r| {
            r.fwd_stms(&lam.body.stms)?;
            for (res, s) in lam.body.result.iter().zip(&seeds) {
                if let Some(s) = s {
                    r.add_adj_se(res, s.clone(), false)?;
                }
            }
            r.rev_stms(&lam.body.stms)?;
            let mut result = vec![];
            for p in &lam.params {
                match r.adjs.get(&p.name) {
                    Some(Adj::Val { v, .. }) if has_adjoint(&p.ty) => {
                        result.push(v.clone());
                        meta.param_adjs.push(true);
                    }
                    _ => meta.param_adjs.push(false),
                }
            }
            let locals: &HashSet<VName> = &r.frames.last().expect("frame").locals;
            let mut scalars: Vec<VName> = r
                .adjs
                .iter()
                .filter(|(k, a)| !locals.contains(*k) && matches!(a, Adj::Val { .. }))
                .map(|(k, _)| k.clone())
                .collect();
            scalars.sort();
            for s in &scalars {
                result.push(r.adj_value(s)?);
            }
            meta.scalars = scalars;
            let frame = r.frames.last().expect("frame");
            let accs: Vec<(VName, VName)> = frame
                .accs
                .iter()
                .map(|a| (a.array.clone(), a.param.name.clone()))
                .collect();
            for (array, param) in accs {
                match r.adjs.get(&array) {
                    Some(Adj::Acc(c)) => result.push(SubExp::Var(c.clone())),
                    _ => result.push(SubExp::Var(param)),
                }
            }
            Ok(result)
        });
        let frame = self.frames.pop().expect("frame");
        self.adjs = frame.outer_adjs;
        let body = body?;

        // The lambda's result types and the statement's pattern.
        let mut ret = vec![];
        let mut pat = vec![];
        for (p, has) in lam.params.iter().zip(&meta.param_adjs) {
            if *has {
                ret.push(p.ty.clone());
                pat.push((format!("{}_adj", p.name.base), p.ty.array_of(w.clone())));
            }
        }
        for s in &meta.scalars {
            let t = self.ty_of(s)?;
            ret.push(t.clone());
            pat.push((format!("{}_contrib", s.base), t.array_of(w.clone())));
        }
        for a in &frame.accs {
            ret.push(a.param.ty.clone());
            pat.push((format!("{}_acc", a.array.base), a.param.ty.clone()));
            params.push(a.param.clone());
            match &a.outer {
                Some(c) => inputs.push(c.clone()),
                None => match &a.param.ty {
                    Type::Acc { cert, .. } => inputs.push(cert.clone()),
                    _ => return Err("an accumulator param (internal error)".into()),
                },
            }
        }
        let map_exp = Exp::Soac(Soac::Map {
            w: w.clone(),
            arrs: inputs,
            lam: Lambda { params, body, ret },
        });

        // New accumulators need a `withacc` around the map.
        let new_accs: Vec<_> = frame.accs.iter().filter(|a| a.outer.is_none()).collect();
        let results: Vec<VName> = if new_accs.is_empty() {
            let pat: Vec<(&str, Type)> = pat.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
            self.bind_many(pat, map_exp)
        } else {
            self.wrap_withacc(
                &new_accs.into_iter().cloned().collect::<Vec<_>>(),
                &frame.accs,
                pat,
                map_exp,
            )?
        };

        // Results of the map, in order: param adjoints, scalar contributions, accumulators.
        let mut it = results.into_iter();
        let mut param_res = vec![];
        for (a, has) in arrs.iter().zip(&meta.param_adjs) {
            if *has {
                param_res.push((a.clone(), it.next().ok_or("map results (internal error)")?));
            }
        }
        let mut scalar_res = vec![];
        for s in &meta.scalars {
            scalar_res.push((s.clone(), it.next().ok_or("map results (internal error)")?));
        }
        // Accumulators first: a `withacc` took the adjoint of its array as it was before the map
        // (its result includes it), and an input array may also be free in the lambda.
        for a in &frame.accs {
            let v = it.next().ok_or("map results (internal error)")?;
            if self
                .types
                .get(&v)
                .is_some_and(|t| matches!(t, Type::Acc { .. }))
            {
                self.adjs.insert(a.array.clone(), Adj::Acc(v));
            } else {
                self.set_adj(&a.array, SubExp::Var(v), true);
            }
        }
        for (a, v) in param_res {
            self.add_adj(&a, SubExp::Var(v), true)?;
        }
        for (s, v) in scalar_res {
            let t = self.ty_of(&s)?;
            let sum = self.sum_rows(w, v, &t)?;
            self.add_adj(&s, sum, true)?;
        }
        Ok(())
    }

    /// Emits `withacc` around `map_exp` for the accumulators `new` (made here from the current
    /// adjoints of their arrays). Returns the results in the order of the map's pattern `pat`,
    /// except that the accumulators of `new` are replaced by the updated adjoint arrays.
    fn wrap_withacc(
        &mut self,
        new: &[super::FrameAcc],
        all: &[super::FrameAcc],
        pat: Vec<(String, Type)>,
        map_exp: Exp,
    ) -> R<Vec<VName>> {
        let mut inputs = vec![];
        let mut acc_params = vec![];
        for a in new {
            let Type::Acc { cert, shape, elems } = &a.param.ty else {
                return Err("an accumulator param (internal error)".into());
            };
            let elem = elems
                .first()
                .and_then(|t| t.elem())
                .ok_or("an accumulator element (internal error)")?;
            let init = self.take_owned_adj(&a.array)?;
            let SubExp::Var(init) = init else {
                return Err("an array adjoint that is a constant (internal error)".into());
            };
            let op = self.add_operator(elem);
            inputs.push(AccInput {
                shape: shape.clone(),
                arrs: vec![init],
                op: Some(op),
            });
            let p = Param {
                name: cert.clone(),
                ty: a.param.ty.clone(),
            };
            self.types.insert(p.name.clone(), p.ty.clone());
            acc_params.push(p);
        }
        // Inside the withacc: the map, then its results reordered: new accumulators first.
        let map_pat: Vec<Param> = pat
            .iter()
            .map(|(n, t)| Param {
                name: self.ns.fresh(n),
                ty: t.clone(),
            })
            .collect();
        for p in &map_pat {
            self.types.insert(p.name.clone(), p.ty.clone());
        }
        let nacc_first = pat.len() - all.len();
        let mut acc_res = vec![];
        let mut extra_res = vec![];
        let mut extra_ty = vec![];
        for (i, p) in map_pat.iter().enumerate() {
            let is_new = i >= nacc_first && all[i - nacc_first].outer.is_none();
            if is_new {
                acc_res.push(SubExp::Var(p.name.clone()));
            } else {
                extra_res.push(SubExp::Var(p.name.clone()));
                extra_ty.push(p.ty.clone());
            }
        }
        let mut lam_ret: Vec<Type> = acc_params.iter().map(|p| p.ty.clone()).collect();
        lam_ret.extend(extra_ty.iter().cloned());
        let mut result = acc_res;
        result.extend(extra_res);
        let body = Body {
            stms: vec![Stm {
                pat: Pat { elems: map_pat },
                exp: map_exp,
                attrs: Attrs::default(),
                loc: None,
            }],
            result,
        };
        let mut out_pat: Vec<(String, Type)> = vec![];
        for a in new {
            out_pat.push((format!("{}_adj", a.array.base), self.ty_of(&a.array)?));
        }
        for (i, t) in extra_ty.iter().enumerate() {
            out_pat.push((format!("r{i}"), t.clone()));
        }
        let names = self.bind_many(
            out_pat
                .iter()
                .map(|(n, t)| (n.as_str(), t.clone()))
                .collect(),
            Exp::WithAcc {
                inputs,
                lam: Lambda {
                    params: acc_params,
                    body,
                    ret: lam_ret,
                },
            },
        );
        // Back to the map's order.
        let (accs, extra) = names.split_at(new.len());
        let mut out = vec![];
        let mut ai = accs.iter();
        let mut ei = extra.iter();
        for i in 0..pat.len() {
            let is_new = i >= nacc_first && all[i - nacc_first].outer.is_none();
            let v = if is_new { ai.next() } else { ei.next() };
            out.push(v.ok_or("withacc results (internal error)")?.clone());
        }
        Ok(out)
    }
}
