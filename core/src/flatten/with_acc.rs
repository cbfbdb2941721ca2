//! Interchange of a `with_acc` with the map nest around it (rule 4 of [`super`], as loop
//! interchange is for `for` loops).
//!
//! A `with_acc` in a nest, whose accumulators are arrays of each thread (rows of host arrays,
//! one per thread) and whose body has inner parallelism,
//!
//! ```text
//! map (\x -> ... with_acc (shape, [a], op) (\acc -> B) ...) xs        -- a: [m]t per thread
//! ```
//!
//! becomes one host `with_acc` over the expanded arrays, whose body is flattened in the nest:
//!
//! ```text
//! with_acc ([n] ++ shape, [as], op) (\acc -> B')                       -- as: [n][m]t
//! ```
//!
//! where `B'` is `B` with every accumulator type of the `with_acc` widened by the nest's
//! widths and every `upd_acc` on it indexed by the nest's thread indices first. Threads update
//! disjoint rows, so the result is the same; the accumulators' operator must not depend on the
//! thread. Without this the `with_acc` (and all parallelism in its body) would run
//! sequentially in each thread of the nest: the reverse sweep of a `map` whose body has an
//! inner `map` with free arrays (ADBench GMM's gradient) is such a nest.

use super::kernel::{host, Flattener};
use super::nest::{invariant, invariant_operator, Nest};
use crate::ir::{AccInput, Body, Exp, ExtType, Lambda, Param, Soac, Stm, SubExp};
use crate::ir::{Type, TypeBase, VName};
use crate::seg::{HostBody, HostExp, HostLambda, HostStm};
use std::collections::HashSet;

impl Flattener<'_> {
    /// Flattens the `with_acc` statement `s` of `nest`, binding `host_pat` to the expanded
    /// values of `outputs` (some of `s`'s results). Returns `false`, doing nothing, where the
    /// interchange does not apply: an accumulator's arrays are not rows of host arrays, one
    /// per thread; its shape or operator depends on the thread; or a result of the body has a
    /// shape that does.
    pub(super) fn interchange_acc(
        &mut self,
        nest: &Nest,
        s: &Stm,
        outputs: &[Param],
        host_pat: &[Param],
        versions: usize,
        out: &mut Vec<HostStm>,
    ) -> bool {
        let Exp::WithAcc { inputs, lam } = &s.exp else {
            return false;
        };
        let bound = nest.bound();
        let op_free = |i: &AccInput| {
            i.op.as_ref()
                .is_none_or(|op| invariant_operator(op, &bound))
        };
        let regular = inputs
            .iter()
            .all(|i| i.shape.iter().all(|d| invariant(d, &bound)) && op_free(i))
            && lam.ret[inputs.len()..]
                .iter()
                .all(|t| nest.invariant_type(t, &bound));
        if !regular {
            return false;
        }
        let Some(dests) = inputs
            .iter()
            .map(|i| {
                i.arrs
                    .iter()
                    .map(|a| self.resolve_dest(nest, a))
                    .collect::<Option<Vec<_>>>()
            })
            .collect::<Option<Vec<_>>>()
        else {
            return false;
        };
        let widths = nest.widths();
        let host_inputs: Vec<AccInput> = inputs
            .iter()
            .zip(dests)
            .map(|(i, arrs)| AccInput {
                shape: widths.iter().chain(&i.shape).cloned().collect(),
                arrs,
                op: i.op.clone(),
            })
            .collect();
        // The body, its accumulators widened; the lambda keeps its parameters' names (the
        // certificates its types mention), now bound on the host.
        let certs: HashSet<VName> = lam.params.iter().map(|p| p.name.clone()).collect();
        let mut wide = lam.clone();
        let expand = Expand {
            certs: &certs,
            widths: &widths,
            gtids: &nest.gtids(),
        };
        expand.lambda(&mut wide);
        for (v, t) in types_bound(&wide.body) {
            self.types.insert(v, t);
        }
        for p in &wide.params {
            self.types.insert(p.name.clone(), p.ty.clone());
        }
        // One host value per result of the body: the accumulators, then the expanded others.
        let body_pat: Vec<Param> = wide
            .ret
            .iter()
            .zip(&lam.body.result)
            .map(|(t, r)| {
                let like = r.as_var().cloned().unwrap_or_else(|| VName {
                    id: 0,
                    base: "acc_res".into(),
                });
                self.fresh_param(&like, nest.expand(t))
            })
            .collect();
        let mut stms = Vec::new();
        self.nest_body(nest, &wide.body, &body_pat, &s.loc, versions, &mut stms);
        // The statement binds every array of the accumulators and every other result; the
        // group's outputs are some of them.
        let ret: Vec<Type> = wide.ret.iter().map(|t| nest.expand(t)).collect();
        let with_pat = self.expanded_pat(nest, s, outputs, host_pat);
        out.push(host(
            with_pat,
            HostExp::WithAcc {
                inputs: host_inputs,
                lam: HostLambda {
                    params: wide.params.clone(),
                    body: HostBody {
                        stms,
                        result: body_pat
                            .iter()
                            .map(|p| SubExp::Var(p.name.clone()))
                            .collect(),
                    },
                    ret,
                },
            },
            &s.loc,
        ));
        true
    }
}

/// The widening of a nest's accumulators: every accumulator type whose certificate is in
/// `certs` gets the nest's `widths` in front of its shape, and every `upd_acc` on one is
/// indexed by the nest's thread indices `gtids` first.
struct Expand<'a> {
    certs: &'a HashSet<VName>,
    widths: &'a [SubExp],
    gtids: &'a [VName],
}

impl Expand<'_> {
    fn ty(&self, t: &mut Type) {
        if let TypeBase::Acc { cert, shape, .. } = t {
            if self.certs.contains(cert) {
                let mut s = self.widths.to_vec();
                s.append(shape);
                *shape = s;
            }
        }
    }

    fn ext_ty(&self, t: &mut ExtType) {
        if let TypeBase::Acc { cert, shape, .. } = t {
            if self.certs.contains(cert) {
                let mut s = self.widths.to_vec();
                s.append(shape);
                *shape = s;
            }
        }
    }

    fn lambda(&self, lam: &mut Lambda) {
        lam.params.iter_mut().for_each(|p| self.ty(&mut p.ty));
        lam.ret.iter_mut().for_each(|t| self.ty(t));
        self.body(&mut lam.body);
    }

    fn body(&self, b: &mut Body) {
        for s in &mut b.stms {
            self.stm(s);
        }
    }

    fn stm(&self, s: &mut Stm) {
        s.pat.elems.iter_mut().for_each(|p| self.ty(&mut p.ty));
        match &mut s.exp {
            Exp::If {
                then_b,
                else_b,
                ret,
                ..
            } => {
                self.body(then_b);
                self.body(else_b);
                ret.iter_mut().for_each(|t| self.ext_ty(t));
            }
            Exp::Loop { params, body, .. } => {
                params.iter_mut().for_each(|(p, _)| self.ty(&mut p.ty));
                self.body(body);
            }
            Exp::Apply { ret, .. } => ret.iter_mut().for_each(|t| self.ext_ty(t)),
            Exp::WithAcc { lam, inputs } => {
                self.lambda(lam);
                for i in inputs {
                    if let Some(op) = &mut i.op {
                        self.lambda(&mut op.lam);
                    }
                }
            }
            Exp::Soac(soac) => match soac {
                Soac::Map { lam, .. } => self.lambda(lam),
                Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. } => {
                    self.lambda(&mut op.lam)
                }
                Soac::Scatter { .. } => {}
            },
            Exp::UpdAcc { idx, .. } => {
                // Whether this accumulator is one of the nest's: its type, already widened,
                // says so through the pattern (an `upd_acc` returns the accumulator).
                let ours = s.pat.elems.first().is_some_and(
                    |p| matches!(&p.ty, Type::Acc { cert, .. } if self.certs.contains(cert)),
                );
                if ours {
                    let mut i: Vec<SubExp> = self.gtids.iter().cloned().map(SubExp::Var).collect();
                    i.append(idx);
                    *idx = i;
                }
            }
            _ => {}
        }
    }
}

/// The type of every name bound in `b` (at any depth).
fn types_bound(b: &Body) -> Vec<(VName, Type)> {
    let mut out = Vec::new();
    super::collect_stms(&b.stms, &mut out);
    out
}
