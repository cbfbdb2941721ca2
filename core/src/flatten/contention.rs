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
//! about 0.9 ms per 20,000 points. On a CPU (lavapipe) the flattened version wins where the
//! updates are many (k-means at n = 20,000: 44-63 ms against 58-70 ms; GMM's gradient at
//! d = 10, K = 25: 30-44 against 45-67 ms), and loses where they are few, to its extra
//! launches (GMM at d = 2, K = 5: 4.1-5.6 ms against 2.6-3.9 ms). The nest's size cannot
//! tell these apart (both GMMs have n = 1,000), so such a nest's threshold becomes a
//! [`ThresholdKind::ContendedNest`] (printed `contended_threshold`) whose size, where the host
//! can count them, is `i64::MAX` minus the contended updates of the sequentialised version:
//! the product of the kernel's space and of the widths of the `map`s and the bounds of the
//! `for` loops around each update, summed over the updates (k-means: `n * k * d`; GMM:
//! `n * (2 K + K d + K d²)`). With the usual `size >= value`, the value `i64::MAX - u` takes
//! the sequentialised version up to `u` updates: `u` is [`crate::seg::Thresholds::CONTENDED_UPDATES`]
//! on a CPU device or without one (the kernel IR's evaluator), and the Vulkan runtime never
//! takes it on a GPU unless set by name or by `nest`/`contended_nest`. Where the updates
//! cannot be counted (a width computed in the kernel, a `while` loop), the size stays the
//! nest's, which such a value never reaches: the flattened version.
//!
//! Recognised: `let c = threshold(name) size` of kind `Nest` and, later in the same body,
//! the nest's two versions `if versions c then A else B` where a `segmap` of `A` updates an accumulator that is not its own
//! (not made by a `with_acc` inside the kernel) at indices none of which is one of its thread
//! indices, and `B` holds an accumulator-reduction threshold (rule 7's versioning).

use super::kernel::Flattener;
use crate::ir::{Exp, LoopForm, Soac, Stm, SubExp, Type, VName};
use crate::passes::traverse::{free_vars, nested_bodies_ref};
use crate::seg::{HostBody, HostExp, SegKind, SegOp, ThresholdKind};
use std::collections::HashSet;

/// Gives every contended nest threshold of `body` (and of the bodies nested in it) its kind,
/// and where the contended updates of the nest's sequentialised version can be counted on the
/// host, the size `i64::MAX - u` for `u` updates (see the module doc).
pub(super) fn mark_contended_nests(body: &mut HostBody, fl: &mut Flattener) {
    for s in &mut body.stms {
        for b in s.exp.host_bodies_mut() {
            mark_contended_nests(b, fl);
        }
    }
    let contended: Vec<(VName, Option<Vec<Vec<SubExp>>>)> = body
        .stms
        .iter()
        .filter_map(|s| match &s.exp {
            HostExp::If {
                cond: SubExp::Var(c),
                then_b,
                else_b,
                nest_versions: true,
                ..
            } if has_contended_kernel(then_b) && has_acc_reduction(else_b) => {
                Some((c.clone(), contended_updates(then_b)))
            }
            _ => None,
        })
        .collect();
    let old = std::mem::take(&mut body.stms);
    // Names bound from each statement on: a count's sizes must be bound before its threshold.
    let mut later: Vec<HashSet<VName>> = vec![HashSet::new(); old.len() + 1];
    for (i, s) in old.iter().enumerate().rev() {
        let mut names = later[i + 1].clone();
        names.extend(s.pat.elems.iter().map(|p| p.name.clone()));
        later[i] = names;
    }
    for (i, mut s) in old.into_iter().enumerate() {
        if let HostExp::Threshold { kind, size, .. } = &mut s.exp {
            let sites = contended
                .iter()
                .find(|(c, _)| s.pat.elems.iter().any(|p| &p.name == c))
                .map(|(_, sites)| sites);
            if let (ThresholdKind::Nest, Some(sites)) = (*kind, sites) {
                *kind = ThresholdKind::ContendedNest;
                let in_scope = |d: &SubExp| !matches!(d, SubExp::Var(v) if later[i].contains(v));
                if let Some(sites) = sites
                    .as_ref()
                    .filter(|ss| ss.iter().flatten().all(in_scope))
                {
                    *size = fl.headroom(
                        sites,
                        ("contended_updates", "contended_headroom"),
                        &mut body.stms,
                    );
                }
            }
        }
        body.stms.push(s);
    }
}

/// The contended updates the kernels of `b` make, one entry per place in thread code that
/// makes them: the sizes whose product is how many times it runs (the kernel's space, the
/// widths of the `map`s and the bounds of the `for` loops around it). `None` where that is not
/// known on the host (a size computed inside a kernel, a `while` loop, a kernel inside host
/// control flow).
fn contended_updates(b: &HostBody) -> Option<Vec<Vec<SubExp>>> {
    let mut sites = Vec::new();
    for s in &b.stms {
        match &s.exp {
            HostExp::Seg(op) if op.kind == SegKind::Map => {
                let found = kernel_updates(op);
                // Names from outside the kernel: its free names and its space's sizes.
                let space: Vec<SubExp> = op.space.dims.iter().map(|(_, d)| d.clone()).collect();
                let outside: HashSet<VName> = free_vars(&op.body.stms, &space)
                    .into_iter()
                    .filter(|v| !op.space.dims.iter().any(|(g, _)| g == v))
                    .collect();
                let known = |d: &SubExp| !matches!(d, SubExp::Var(v) if !outside.contains(v));
                if !found.iter().flatten().all(known) {
                    return None;
                }
                sites.extend(found);
            }
            HostExp::Seg(_) | HostExp::Plain(_) | HostExp::Threshold { .. } => {}
            e => {
                if e.host_bodies().into_iter().any(has_contended_kernel) {
                    return None;
                }
            }
        }
    }
    Some(sites)
}

/// The places in `stms` that make contended updates ([`contended_update`]), each with the
/// sizes `around` it times those of the constructs in `stms` around it. A `while` loop's
/// condition stands for its unknown trip count (a name of the kernel, so the count is not
/// known).
fn count_updates(
    stms: &[Stm],
    gtids: &HashSet<&VName>,
    local: &HashSet<VName>,
    around: &[SubExp],
    out: &mut Vec<Vec<SubExp>>,
) {
    for s in stms {
        if contended_update(s, gtids, local) {
            out.push(around.to_vec());
        }
        let mut inner = around.to_vec();
        match &s.exp {
            Exp::Soac(Soac::Map { w, .. }) => inner.push(w.clone()),
            Exp::Loop {
                form: LoopForm::For { bound, .. },
                ..
            } => inner.push(bound.clone()),
            Exp::Loop {
                form: LoopForm::While(c),
                ..
            } => inner.push(SubExp::Var(c.clone())),
            _ => {}
        }
        for nb in nested_bodies_ref(&s.exp) {
            count_updates(&nb.stms, gtids, local, &inner, out);
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
    !kernel_updates(op).is_empty()
}

/// The places in kernel `op` that make contended updates, with the sizes whose product is how
/// often each runs ([`count_updates`] from the kernel's space).
fn kernel_updates(op: &SegOp) -> Vec<Vec<SubExp>> {
    let gtids: HashSet<&VName> = op.space.dims.iter().map(|(g, _)| g).collect();
    let mut local = HashSet::new();
    local_certs(&op.body.stms, &mut local);
    let space: Vec<SubExp> = op.space.dims.iter().map(|(_, d)| d.clone()).collect();
    let mut found = Vec::new();
    count_updates(&op.body.stms, &gtids, &local, &space, &mut found);
    found
}

/// The certificates of the accumulators that `with_acc`s inside `stms` make.
fn local_certs(stms: &[Stm], out: &mut HashSet<VName>) {
    for s in stms {
        if let Exp::WithAcc { lam, .. } = &s.exp {
            out.extend(lam.params.iter().map(|p| p.name.clone()));
        }
        for nb in nested_bodies_ref(&s.exp) {
            local_certs(&nb.stms, out);
        }
    }
}

/// Whether `s` updates an accumulator not made in the kernel (`local`: the certificates of
/// those that are) at indices none of which is a thread index (`gtids`).
fn contended_update(s: &Stm, gtids: &HashSet<&VName>, local: &HashSet<VName>) -> bool {
    match (&s.exp, s.pat.elems.first().map(|p| &p.ty)) {
        (Exp::UpdAcc { idx, .. }, Some(Type::Acc { cert, .. })) => {
            !local.contains(cert)
                && !idx
                    .iter()
                    .any(|i| matches!(i, SubExp::Var(v) if gtids.contains(v)))
        }
        _ => false,
    }
}
