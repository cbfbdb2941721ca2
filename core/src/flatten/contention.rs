//! Nests whose sequentialised version contends on an accumulator that the flattened version
//! reduces (after rule 7 of [`super`]) get a threshold of their own kind,
//! [`ThresholdKind::ContendedNest`], whose default depends on the device.
//!
//! Rule 5 versions a nest on whether its outer parallelism fills the device: the
//! sequentialised version (one thread per outer element, inner parallelism run in the thread)
//! against the flattened one. When the sequentialised kernel adds into a host accumulator at
//! indices that are not its thread index (k-means' Newton step: every point adds its one-hot
//! adjoint into the `[k][d]` centres), every element is updated by every outer thread, and on
//! a GPU those atomic updates serialise: 681 ms of kernels for n = 494,019 points on an H200,
//! where the flattened version, whose updates rule 7 turned into a segmented reduction, takes
//! about 0.9 ms per 20,000 points. On a CPU (lavapipe) the flattened version wins too, now
//! that its reductions run a thread per element where there are enough elements (k-means at
//! n = 20,000: 44-63 ms against 58-70 ms; it lost, 1.39 s against 0.83 s, while its reductions
//! stored every value first). The size alone cannot choose, so such a nest's threshold becomes
//! a [`ThresholdKind::ContendedNest`] (printed `contended_threshold`), which the Vulkan
//! runtime's thresholds never meet unless set by name or by `nest`/`contended_nest`, and
//! which is the nest threshold where there is no device (the kernel IR's evaluator).
//!
//! Recognised: `let c = threshold(name) size` of kind `Nest` and, later in the same body,
//! the nest's two versions `if versions c then A else B` where a `segmap` of `A` updates an accumulator that is not its own
//! (not made by a `with_acc` inside the kernel) at indices none of which is one of its thread
//! indices, and `B` holds an accumulator-reduction threshold (rule 7's versioning).

use crate::ir::{Body, Exp, SubExp, Type, VName};
use crate::passes::traverse::nested_bodies_ref;
use crate::seg::{HostBody, HostExp, SegKind, SegOp, ThresholdKind};
use std::collections::HashSet;

/// Gives every contended nest threshold of `body` (and of the bodies nested in it) its kind.
pub(super) fn mark_contended_nests(body: &mut HostBody) {
    for s in &mut body.stms {
        s.exp
            .host_bodies_mut()
            .into_iter()
            .for_each(mark_contended_nests);
    }
    let contended: Vec<VName> = body
        .stms
        .iter()
        .filter_map(|s| match &s.exp {
            HostExp::If {
                cond: SubExp::Var(c),
                then_b,
                else_b,
                nest_versions: true,
                ..
            } if has_contended_kernel(then_b) && has_acc_reduction(else_b) => Some(c.clone()),
            _ => None,
        })
        .collect();
    for s in &mut body.stms {
        if let HostExp::Threshold { kind, .. } = &mut s.exp {
            if *kind == ThresholdKind::Nest
                && s.pat.elems.iter().any(|p| contended.contains(&p.name))
            {
                *kind = ThresholdKind::ContendedNest;
            }
        }
    }
}

/// Whether a `segmap` of `b` (at any depth of host code) makes a contended update.
fn has_contended_kernel(b: &HostBody) -> bool {
    b.stms.iter().any(|s| match &s.exp {
        HostExp::Seg(op) => op.kind == SegKind::Map && contends(op),
        e => e.host_bodies().into_iter().any(has_contended_kernel),
    })
}

/// Whether `b` holds rule 7's accumulator-reduction threshold (at any depth of host code).
fn has_acc_reduction(b: &HostBody) -> bool {
    b.stms.iter().any(|s| match &s.exp {
        HostExp::Threshold { kind, .. } => *kind == ThresholdKind::AccRed,
        e => e.host_bodies().into_iter().any(has_acc_reduction),
    })
}

/// Whether kernel `op` updates an accumulator it did not make at indices none of which is a
/// thread index of its space.
fn contends(op: &SegOp) -> bool {
    let gtids: HashSet<&VName> = op.space.dims.iter().map(|(g, _)| g).collect();
    let body = Body {
        stms: op.body.stms.clone(),
        result: Vec::new(),
    };
    let mut local = HashSet::new();
    local_certs(&body, &mut local);
    any_contended(&body, &gtids, &local)
}

/// The certificates of the accumulators that `with_acc`s inside `b` make.
fn local_certs(b: &Body, out: &mut HashSet<VName>) {
    for s in &b.stms {
        if let Exp::WithAcc { lam, .. } = &s.exp {
            out.extend(lam.params.iter().map(|p| p.name.clone()));
        }
        for nb in nested_bodies_ref(&s.exp) {
            local_certs(nb, out);
        }
    }
}

fn any_contended(b: &Body, gtids: &HashSet<&VName>, local: &HashSet<VName>) -> bool {
    b.stms.iter().any(|s| {
        let own = match (&s.exp, s.pat.elems.first().map(|p| &p.ty)) {
            (Exp::UpdAcc { idx, .. }, Some(Type::Acc { cert, .. })) => {
                !local.contains(cert)
                    && !idx
                        .iter()
                        .any(|i| matches!(i, SubExp::Var(v) if gtids.contains(v)))
            }
            _ => false,
        };
        own || nested_bodies_ref(&s.exp)
            .into_iter()
            .any(|nb| any_contended(nb, gtids, local))
    })
}
