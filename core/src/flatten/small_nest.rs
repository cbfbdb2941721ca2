//! Nests whose sequentialised version does little work take it whatever their size: their
//! nest threshold is or-ed with a [`ThresholdKind::SmallNest`] on the work, counted on the host.
//!
//! Rules 4 and 5 version a nest on whether its outer parallelism fills the device: the
//! sequentialised version (a thread per outer element, inner parallelism run in the thread)
//! where the nest's size reaches the `threshold`, else the flattened one. Where the work is
//! small, the flattened version's extra launches cost more than any parallelism it gains: the
//! RNN's gradient sums, per time step and gate, the adjoints of 32 hidden units over a batch of
//! 64, a nest of 32 threads (below a CPU's nest default of 256), which the flattened version
//! runs as three launches (the operands stored, a reduction per segment, the addition into the
//! adjoint) where the sequentialised version is one launch of about 4,000 statements. On
//! lavapipe a launch costs some 40 µs whatever it does.
//!
//! So where the work of the sequentialised version can be counted on the host, its condition
//! becomes `c || small`, `small` a `small_nest_threshold` whose size is `i64::MAX` minus that
//! work: the statements its threads run, each counted once per iteration of the `map`s,
//! reductions, scans, histograms and `for` loops around it in the thread code, times the
//! kernel's space, plus one per thread, summed over its kernels. With the usual
//! `size >= value`, a value `i64::MAX - w` takes the sequentialised version up to `w`
//! statements ([`crate::seg::Thresholds::SMALL_NEST_WORK`] on a CPU device or without one),
//! and a GPU never takes it unless set by name or by `nest`/`small_nest` (there a launch costs
//! a few microseconds, and one thread's loop is slow). Not counted, and left alone: a version
//! with host control flow around its kernels, a `while` loop in thread code, a width computed
//! inside the version; and contended nests (`contention.rs`, which counts their updates).

use super::kernel::{host, Flattener};
use crate::ir::{BinOp, Exp, LoopForm, Param, Soac, Stm, SubExp, Type, VName};
use crate::passes::traverse::{nested_bodies_ref, walk_stm, Binders};
use crate::prim::{IntType, PrimType};
use crate::seg::{HostBody, HostExp, HostStm, ThresholdKind};
use std::collections::HashSet;

/// A sum of products: each term a count and the sizes whose product it multiplies.
type Terms = Vec<(i64, Vec<SubExp>)>;

/// Or-s the threshold of every nest of `body` (and of the bodies nested in it) whose
/// sequentialised version's work can be counted with a `small_nest_threshold` of that work
/// (see the module doc).
pub(super) fn mark_small_nests(body: &mut HostBody, fl: &mut Flattener) {
    for s in &mut body.stms {
        for b in s.exp.host_bodies_mut() {
            mark_small_nests(b, fl);
        }
    }
    let nest_conds: HashSet<VName> = body
        .stms
        .iter()
        .filter(|s| {
            matches!(
                s.exp,
                HostExp::Threshold {
                    kind: ThresholdKind::Nest,
                    ..
                }
            )
        })
        .flat_map(|s| s.pat.elems.iter().map(|p| p.name.clone()))
        .collect();
    if nest_conds.is_empty() {
        return;
    }
    let old = std::mem::take(&mut body.stms);
    for mut s in old {
        if let HostExp::If {
            cond: SubExp::Var(c),
            then_b,
            nest_versions: true,
            ..
        } = &mut s.exp
        {
            if nest_conds.contains(c) {
                if let Some(terms) = version_work(then_b, fl) {
                    let small = small_cond(&terms, fl, &s.loc, &mut body.stms);
                    let or = fl.fresh_param(
                        &VName {
                            id: 0,
                            base: "suff_or_small".into(),
                        },
                        Type::Prim(PrimType::Bool),
                    );
                    body.stms.push(host(
                        vec![or.clone()],
                        HostExp::Plain(Exp::BinOp(
                            BinOp::LogOr,
                            SubExp::Var(c.clone()),
                            SubExp::Var(small.name),
                        )),
                        &None,
                    ));
                    *c = or.name;
                }
            }
        }
        body.stms.push(s);
    }
}

/// `small_nest_threshold(name) (i64::MAX - Σ count · Π sizes)` as host statements (into `out`).
fn small_cond(
    terms: &Terms,
    fl: &mut Flattener,
    loc: &Option<crate::diag::SrcLoc>,
    out: &mut Vec<HostStm>,
) -> Param {
    let products: Vec<Vec<SubExp>> = terms
        .iter()
        .map(|(count, sizes)| {
            std::iter::once(SubExp::i64(*count))
                .chain(sizes.iter().cloned())
                .collect()
        })
        .collect();
    let headroom = fl.headroom(&products, ("nest_work", "nest_work_headroom"), out);
    fl.threshold("small_nest", headroom, ThresholdKind::SmallNest, loc, out)
}

/// The work of the kernels of the version `b` (see the module doc), as terms whose sizes are
/// all `i64`s known before `b` runs (a constant of another integer type converted); `None`
/// where it cannot be counted so.
fn version_work(b: &HostBody, fl: &Flattener) -> Option<Terms> {
    // Names bound inside the version (by its host statements or in its kernels): a size that
    // is one of them is not known before it runs.
    let mut bound: HashSet<VName> = HashSet::new();
    for s in &b.stms {
        bound.extend(s.pat.elems.iter().map(|p| p.name.clone()));
    }
    let mut terms: Terms = Vec::new();
    for s in &b.stms {
        match &s.exp {
            HostExp::Seg(op) => {
                let space: Vec<SubExp> = op.space.sizes().cloned().collect();
                // The kernel's own names: its thread indices and what its statements bind.
                let mut binders = Binders::default();
                for st in &op.body.stms {
                    walk_stm(&mut binders, &mut st.clone());
                }
                let local: HashSet<VName> =
                    op.space.indices().cloned().chain(binders.names).collect();
                // One per thread, then its statements.
                add_term(&mut terms, 1, space.clone());
                count_stms(&op.body.stms, &space, &mut terms)?;
                let known = |d: &SubExp| !matches!(d, SubExp::Var(v) if bound.contains(v) || local.contains(v));
                if !terms.iter().flat_map(|(_, ds)| ds).all(known) {
                    return None;
                }
            }
            HostExp::Plain(_) | HostExp::Threshold { .. } => {}
            // Host control flow around kernels: not counted.
            _ => return None,
        }
    }
    let i64t = Type::Prim(PrimType::Int(IntType::I64));
    terms
        .into_iter()
        .map(|(count, sizes)| {
            let sizes = sizes
                .into_iter()
                .map(|d| match d {
                    SubExp::Const(c) => Some(SubExp::i64(i64::try_from(c.as_i128()?).ok()?)),
                    v => (fl.type_of(&v) == i64t).then_some(v),
                })
                .collect::<Option<Vec<_>>>()?;
            Some((count, sizes))
        })
        .collect()
}

/// Adds `count · Π sizes` to `terms`, merging it with an equal product.
fn add_term(terms: &mut Terms, count: i64, sizes: Vec<SubExp>) {
    match terms.iter_mut().find(|(_, ds)| *ds == sizes) {
        Some((c, _)) => *c = c.saturating_add(count),
        None => terms.push((count, sizes)),
    }
}

/// Counts the statements of `stms`, each times the sizes `around` it, into `terms`; `None`
/// for a `while` loop (its trip count is not known).
fn count_stms(stms: &[Stm], around: &[SubExp], terms: &mut Terms) -> Option<()> {
    for s in stms {
        add_term(terms, 1, around.to_vec());
        let width = match &s.exp {
            Exp::Soac(
                Soac::Map { w, .. }
                | Soac::Reduce { w, .. }
                | Soac::Scan { w, .. }
                | Soac::Hist { w, .. }
                | Soac::Scatter { w, .. },
            ) => Some(w.clone()),
            Exp::Loop {
                form: LoopForm::For { bound, .. },
                ..
            } => Some(bound.clone()),
            Exp::Loop {
                form: LoopForm::While(_),
                ..
            } => return None,
            _ => None,
        };
        let mut inner = around.to_vec();
        if let Some(w) = width {
            // A scatter has no body: its writes are the work.
            if matches!(s.exp, Exp::Soac(Soac::Scatter { .. })) {
                let mut each = inner.clone();
                each.push(w);
                add_term(terms, 1, each);
                continue;
            }
            inner.push(w);
        }
        for nb in nested_bodies_ref(&s.exp) {
            count_stms(&nb.stms, &inner, terms)?;
        }
    }
    Some(())
}
