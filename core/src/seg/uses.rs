//! The variables a host statement of the kernel IR uses: its operands, and every use in the
//! host bodies, kernels and lambdas nested in it (a superset of its free variables: names
//! bound inside it are never used outside, so the difference does not matter to a caller
//! asking whether a variable of an enclosing body is still needed).
//!
//! Used by the Vulkan runtime's planner to forget each array of a host body after its last
//! use, so that an in-place update of an array whose views are dead does not copy it.

use super::{HostBody, HostExp, HostStm, KernelBody, KernelResult, SegKind, SegOp};
use crate::ir::{LoopForm, Operator, SubExp, VName};
use crate::passes::traverse::{uses_in_exp, walk_lambda, UseCounter};
use std::collections::HashSet;

/// Every variable `s` uses (see the module documentation).
pub fn host_stm_uses(s: &HostStm) -> HashSet<VName> {
    let mut out = HashSet::new();
    exp_uses(&s.exp, &mut out);
    out
}

fn subexp(se: &SubExp, out: &mut HashSet<VName>) {
    if let SubExp::Var(v) = se {
        out.insert(v.clone());
    }
}

fn body_uses(b: &HostBody, out: &mut HashSet<VName>) {
    for s in &b.stms {
        exp_uses(&s.exp, out);
    }
    for r in &b.result {
        subexp(r, out);
    }
}

fn operator_uses(op: &Operator, out: &mut HashSet<VName>) {
    let mut c = UseCounter::default();
    walk_lambda(&mut c, &mut op.lam.clone());
    out.extend(c.uses.into_keys());
    for n in &op.neutral {
        subexp(n, out);
    }
}

fn exp_uses(e: &HostExp, out: &mut HashSet<VName>) {
    match e {
        HostExp::Plain(e) => out.extend(uses_in_exp(e)),
        HostExp::If {
            cond,
            then_b,
            else_b,
            ..
        } => {
            subexp(cond, out);
            body_uses(then_b, out);
            body_uses(else_b, out);
        }
        HostExp::Loop { params, form, body } => {
            for (_, init) in params {
                subexp(init, out);
            }
            match form {
                LoopForm::For { bound, .. } => subexp(bound, out),
                LoopForm::While(c) => {
                    out.insert(c.clone());
                }
            }
            body_uses(body, out);
        }
        HostExp::WithAcc { inputs, lam } => {
            for i in inputs {
                for d in &i.shape {
                    subexp(d, out);
                }
                out.extend(i.arrs.iter().cloned());
                if let Some(op) = &i.op {
                    operator_uses(op, out);
                }
            }
            body_uses(&lam.body, out);
        }
        HostExp::VersionedLoop {
            par_cond,
            par,
            seq,
            chunk,
            ..
        } => {
            subexp(par_cond, out);
            body_uses(par, out);
            body_uses(seq, out);
            if let Some(c) = chunk {
                subexp(&c.bound, out);
            }
        }
        HostExp::Threshold { size, .. } => subexp(size, out),
        HostExp::Seg(op) => seg_uses(op, out),
    }
}

fn seg_uses(op: &SegOp, out: &mut HashSet<VName>) {
    for d in op.space.sizes() {
        subexp(d, out);
    }
    match &op.kind {
        SegKind::Map => {}
        SegKind::Red(ops) | SegKind::Scan(ops) => {
            for o in ops {
                operator_uses(o, out);
            }
        }
        SegKind::Hist(hs) => {
            for h in hs {
                out.extend(h.dest.iter().cloned());
                subexp(&h.width, out);
                operator_uses(&h.op, out);
            }
        }
    }
    kernel_body_uses(&op.body, out);
}

fn kernel_body_uses(b: &KernelBody, out: &mut HashSet<VName>) {
    for s in &b.stms {
        out.extend(uses_in_exp(&s.exp));
    }
    for r in &b.results {
        match r {
            KernelResult::Returns(se) => subexp(se, out),
            KernelResult::Write { dest, idx, val } => {
                out.insert(dest.clone());
                for i in idx {
                    subexp(i, out);
                }
                subexp(val, out);
            }
        }
    }
}
