//! Accumulator-updating `map`s moved into the `with_acc` whose results they read, so that they
//! fuse there with the `map` that produces those results (rule 7 of [`super`]).
//!
//! Reverse-mode AD of a nest such as GMM's objective (`map` over points of a `map` over the
//! clusters, which reads the clusters' matrices `qs: [K][d][d]` as mapped rows) gives the inner
//! `map`'s adjoints of `qs` as its results, one `[d][d]` row per cluster, inside the `with_acc`
//! that accumulates the adjoint of the point (a free variable of the inner `map`); the outer
//! `map`'s accumulator of the adjoint of `qs` then receives them by a second `map`, after the
//! `with_acc`:
//!
//! ```text
//! let {x_adj, r} = with_acc({([d], {zeros}, +)}, \acc ->
//!   let {acc', r'} = map(K, {qs, ..., acc}, \q .. a -> ...; {a', q_adj})    -- r': [K][d][d]
//!   in {acc', r'})
//! let qacc' = map(K, {iota K, r, qacc}, \j row a -> upd_acc(a, [j, ..], row ..))
//! ```
//!
//! Vertical fusion cannot join the two (the producer is inside the `with_acc` lambda), so the
//! flattened program materialises `r` for every point: `[n][K][d][d]`, 8.2 GB for GMM's
//! n = 10,000, d = 64, K = 25, over a GPU's largest buffer. Here the consumer moves into the
//! lambda, reading the lambda's result for `r`, and its results become results of the
//! `with_acc` in place of `r`:
//!
//! ```text
//! let {x_adj, qacc'} = with_acc({([d], {zeros}, +)}, \acc ->
//!   let {acc', r'} = map(K, ...)
//!   let qacc' = map(K, {iota K, r', qacc}, \j row a -> upd_acc(a, [j, ..], row ..))
//!   in {acc', qacc'})
//! ```
//!
//! where vertical fusion then makes one `map` that updates `qacc` with each row as it computes
//! it. The meaning is unchanged: the consumer ran right after the `with_acc`, and now runs at
//! the end of its lambda, after every statement of it, reading the same values; its updates go
//! to an accumulator of another `with_acc` (the lambda's own accumulators are not in scope
//! outside it), whose order relative to the lambda's updates does not matter.
//!
//! Conditions (otherwise the statement stays):
//! - the statement right after the `with_acc` is a `map` that takes an accumulator;
//! - of the `with_acc`'s results it reads only non-accumulated ones (extra results of the
//!   lambda), and only as input arrays, not freely in its lambda;
//! - each of those results is used by nothing else (later statements, the body's result), so
//!   that it can stop being a result of the `with_acc`;
//! - at least one of them is the result of a `map` in the lambda's body (what fusion needs).

use super::on_every_body;
use super::Facts;
use crate::ir::*;
use crate::passes::traverse::uses_in_exp;
use std::collections::HashSet;
use std::sync::Arc;

/// Moves accumulator-updating maps into the `with_acc`s whose results they read, in every body
/// of `p`; returns `p` and how many it moved.
pub fn sink_counted(mut p: Program) -> (Program, usize) {
    let mut ns = std::mem::take(&mut p.name_source);
    let (mut p, n) = on_every_body(p, &mut |b: &mut Body, _: &Facts, _: &HashSet<Arc<str>>| {
        sink_body(b, &mut ns)
    });
    p.name_source = ns;
    (p, n)
}

fn sink_body(b: &mut Body, ns: &mut NameSource) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i + 1 < b.stms.len() {
        if sink_one(b, i, ns) {
            n += 1;
        } else {
            i += 1;
        }
    }
    n
}

/// Moves statement `i + 1` into the `with_acc` at `i` if the module doc's conditions hold.
/// Inside the lambda the moved statement binds fresh names; the `with_acc` binds the original
/// ones, so the statements after it are unchanged.
fn sink_one(b: &mut Body, i: usize, ns: &mut NameSource) -> bool {
    let Some(plan) = plan(b, i) else {
        return false;
    };
    let mut consumer = b.stms.remove(i + 1);
    let w = &mut b.stms[i];
    let Exp::WithAcc { lam, .. } = &mut w.exp else {
        unreachable!("plan checked the with_acc");
    };
    if let Exp::Soac(Soac::Map { arrs, .. }) = &mut consumer.exp {
        for a in arrs.iter_mut() {
            if let Some((_, _, inner)) = plan.extras.iter().find(|(_, n, _)| n == a) {
                *a = inner.clone();
            }
        }
    }
    // The extras the consumer read stop being results (highest position first).
    let mut positions: Vec<usize> = plan.extras.iter().map(|(k, _, _)| *k).collect();
    positions.sort_unstable_by(|a, b| b.cmp(a));
    for k in positions {
        w.pat.elems.remove(plan.n_acc_arrs + k);
        lam.ret.remove(plan.n_inputs + k);
        lam.body.result.remove(plan.n_inputs + k);
    }
    for p in &mut consumer.pat.elems {
        w.pat.elems.push(p.clone());
        p.name = ns.fresh(&p.name.base);
        lam.ret.push(p.ty.clone());
        lam.body.result.push(SubExp::Var(p.name.clone()));
    }
    lam.body.stms.push(consumer);
    true
}

/// What moving statement `i + 1` into the `with_acc` at `i` takes: the number of inputs and of
/// accumulated arrays, and the extra results the consumer reads, as (position among the
/// extras, name outside, the lambda's result inside).
struct Plan {
    n_inputs: usize,
    n_acc_arrs: usize,
    extras: Vec<(usize, VName, VName)>,
}

fn plan(b: &Body, i: usize) -> Option<Plan> {
    let w = &b.stms[i];
    let c = &b.stms[i + 1];
    let Exp::WithAcc { inputs, lam } = &w.exp else {
        return None;
    };
    let Exp::Soac(Soac::Map {
        arrs, lam: clam, ..
    }) = &c.exp
    else {
        return None;
    };
    if !clam.params.iter().any(|p| matches!(p.ty, Type::Acc { .. })) {
        return None;
    }
    let n_inputs = inputs.len();
    let n_acc_arrs: usize = inputs.iter().map(|inp| inp.arrs.len()).sum();
    if w.pat.elems.len() < n_acc_arrs
        || lam.body.result.len() != lam.ret.len()
        || lam.ret.len() < n_inputs
        || w.pat.elems.len() - n_acc_arrs != lam.ret.len() - n_inputs
    {
        return None;
    }
    let uses = uses_in_exp(&c.exp);
    // The accumulated arrays exist only once the with_acc is done.
    if w.pat.elems[..n_acc_arrs]
        .iter()
        .any(|p| uses.contains(&p.name))
    {
        return None;
    }
    let lam_uses = uses_in_exp(&Exp::Soac(Soac::Map {
        w: SubExp::Const(crate::prim::PrimValue::I64(0)),
        arrs: vec![],
        lam: clam.clone(),
    }));
    let later: HashSet<VName> = b.stms[i + 2..]
        .iter()
        .flat_map(|s| uses_in_exp(&s.exp))
        .chain(b.result.iter().filter_map(|r| match r {
            SubExp::Var(v) => Some(v.clone()),
            SubExp::Const(_) => None,
        }))
        .collect();
    let produced_by_map: HashSet<&VName> = lam
        .body
        .stms
        .iter()
        .filter(|s| matches!(s.exp, Exp::Soac(Soac::Map { .. })))
        .flat_map(|s| s.pat.elems.iter().map(|p| &p.name))
        .collect();
    let mut extras = Vec::new();
    let mut feeds_a_map = false;
    for (k, p) in w.pat.elems[n_acc_arrs..].iter().enumerate() {
        if !uses.contains(&p.name) {
            continue;
        }
        if lam_uses.contains(&p.name) || later.contains(&p.name) || !arrs.contains(&p.name) {
            return None;
        }
        let SubExp::Var(inner) = lam.body.result.get(n_inputs + k)? else {
            return None;
        };
        feeds_a_map |= produced_by_map.contains(inner);
        extras.push((k, p.name.clone(), inner.clone()));
    }
    (feeds_a_map && !extras.is_empty()).then_some(Plan {
        n_inputs,
        n_acc_arrs,
        extras,
    })
}
