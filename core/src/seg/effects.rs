//! What running host code may change outside itself.
//!
//! A runtime may start one version of a versioned nest or loop, find part-way that the device
//! cannot run it (lavapipe's loop limit stops a thread), and run the other version instead.
//! That is sound only where the abandoned version changed nothing the other one reads or
//! writes: its own results are discarded, but an array it updated in place, or an accumulator
//! it added to, would keep its partial effects (an accumulator would count them twice).
//! [`writes_outside`] says whether a body may do that.

use super::{HostBody, HostExp, KernelResult, SegKind};
use crate::ir::{Exp, Soac, SubExp, Type, VName};
use std::collections::{HashMap, HashSet};

/// Whether running `b` may change a value bound outside it: an in-place update (`with`) of
/// an outer array or of a name aliasing one (a reshape, a slice, a loop parameter starting
/// from it, …), a `with_acc` over outer arrays (it updates them in place), a kernel's writes
/// or histogram into an outer destination, or an update of an accumulator whose `with_acc`
/// is outside `b`, by a kernel or on the host.
pub fn writes_outside(b: &HostBody) -> bool {
    !written_outside(b).is_empty()
}

/// The names bound outside `b` whose values running `b` may change (see [`writes_outside`]),
/// each once, in the order first written: arrays (the roots of the names written, through
/// their aliases) and accumulators (by their certificate). A runtime that copies these before
/// it runs `b` can undo `b`'s effects by copying them back.
pub fn written_outside(b: &HostBody) -> Vec<VName> {
    let mut w = Walk::default();
    w.body(b);
    let mut seen = HashSet::new();
    w.written
        .into_iter()
        .filter(|v| !w.bound.contains(v) && seen.insert(v.clone()))
        .collect()
}

#[derive(Default)]
struct Walk {
    /// Names bound inside the body (patterns, loop parameters and indices, `with_acc`
    /// parameters: the accumulators' certificates).
    bound: HashSet<VName>,
    /// For a name bound inside that may share memory with others: those others.
    alias: HashMap<VName, Vec<VName>>,
    /// The roots of the names written (accumulators by their certificate).
    written: Vec<VName>,
}

impl Walk {
    /// The names `v` may share memory with that alias nothing themselves (`v` itself if it
    /// aliases nothing). Aliases always point to names bound earlier, so this ends.
    fn roots(&self, v: &VName) -> Vec<VName> {
        match self.alias.get(v) {
            None => vec![v.clone()],
            Some(xs) => xs.iter().flat_map(|x| self.roots(x)).collect(),
        }
    }

    fn write(&mut self, v: &VName) {
        let r = self.roots(v);
        self.written.extend(r);
    }

    fn alias_se(&mut self, name: &VName, se: &SubExp) {
        if let SubExp::Var(v) = se {
            self.alias.entry(name.clone()).or_default().push(v.clone());
        }
    }

    fn acc_types(&mut self, ts: &[Type]) {
        for t in ts {
            if let Type::Acc { cert, .. } = t {
                self.written.push(cert.clone());
            }
        }
    }

    fn body(&mut self, b: &HostBody) {
        for s in &b.stms {
            let names: Vec<VName> = s.pat.elems.iter().map(|p| p.name.clone()).collect();
            self.bound.extend(names.iter().cloned());
            let types: Vec<Type> = s.pat.elems.iter().map(|p| p.ty.clone()).collect();
            self.acc_types(&types);
            match &s.exp {
                HostExp::Plain(e) => match e {
                    Exp::Update(v, _, _) => {
                        self.write(v);
                        if let Some(n) = names.first() {
                            self.alias_se(n, &SubExp::Var(v.clone()));
                        }
                    }
                    Exp::SubExp(x) => {
                        if let Some(n) = names.first() {
                            self.alias_se(n, x);
                        }
                    }
                    Exp::Reshape(_, v) | Exp::Rearrange(_, v) | Exp::Index(v, _) => {
                        if let Some(n) = names.first() {
                            self.alias_se(n, &SubExp::Var(v.clone()));
                        }
                    }
                    Exp::UpdAcc { acc, .. } => self.write(acc),
                    Exp::Soac(Soac::Scatter { dest, .. }) | Exp::Soac(Soac::Hist { dest, .. }) => {
                        dest.iter().for_each(|d| self.write(d))
                    }
                    _ => {}
                },
                HostExp::If { then_b, else_b, .. } => {
                    self.body(then_b);
                    self.body(else_b);
                    self.alias_results(&names, &[then_b, else_b]);
                }
                HostExp::VersionedLoop {
                    par, seq, chunk, ..
                } => {
                    if let Some(c) = chunk {
                        self.bound.insert(c.param.name.clone());
                    }
                    self.body(par);
                    self.body(seq);
                    self.alias_results(&names, &[par, seq]);
                }
                HostExp::Loop { params, form, body } => {
                    for (p, init) in params {
                        self.bound.insert(p.name.clone());
                        self.alias_se(&p.name, init);
                    }
                    if let crate::ir::LoopForm::For { i, .. } = form {
                        self.bound.insert(i.clone());
                    }
                    self.body(body);
                    for (n, (p, _)) in names.iter().zip(params) {
                        self.alias_se(n, &SubExp::Var(p.name.clone()));
                    }
                }
                HostExp::WithAcc { inputs, lam } => {
                    for i in inputs {
                        i.arrs.iter().for_each(|a| self.write(a));
                    }
                    self.bound.extend(lam.params.iter().map(|p| p.name.clone()));
                    self.body(&lam.body);
                }
                HostExp::Threshold { .. } => {}
                HostExp::Seg(op) => {
                    for r in &op.body.results {
                        if let KernelResult::Write { dest, .. } = r {
                            self.write(dest);
                        }
                    }
                    if let SegKind::Hist(hs) = &op.kind {
                        hs.iter()
                            .flat_map(|h| h.dest.iter())
                            .for_each(|d| self.write(d));
                    }
                    self.acc_types(&op.ret);
                }
            }
        }
    }

    /// The results of a statement with several bodies may be any body's results.
    fn alias_results(&mut self, names: &[VName], bodies: &[&HostBody]) {
        for b in bodies {
            for (n, r) in names.iter().zip(&b.result) {
                self.alias_se(n, r);
            }
        }
    }
}
