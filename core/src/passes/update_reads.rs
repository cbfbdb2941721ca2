//! Reads through in-place updates: a read of `b = a with [I] = v` that does not depend on the
//! update reads `v` or `a` instead, and the update moves after it, so that the code reading it
//! no longer waits for the update.
//!
//! Why: reverse mode adds the adjoint of each row `x[I]` that a function reads into `x`'s
//! adjoint one row at a time, as a chain
//!
//! ```text
//! let ys = map ... (the adjoints of the rows, one map per row read by the primal)
//! let x1 = x0 with [i, 1, 3] = s1        -- s1 = x0[i, 1, 3] + y1
//! let zs = map ...
//! let e2 = x1[i, 0, 3]
//! let s2 = map (+) e2 z2
//! let x2 = x1 with [i, 0, 3] = s2
//! ...
//! ```
//!
//! Each `map (+)` reads a row of the array the previous update made, so fusion cannot put it
//! (nor the maps after it) into one map with the first: the LSTM cell's eight weight and bias
//! rows were eight read–add–write passes over memory per layer and time step. The rows read
//! are not the rows written: `x1[i, 0, 3]` is `x0[i, 0, 3]`. This pass makes that visible:
//!
//! 1. **Read after write.** `b[I ++ K]`, after `b = a with [I] = v` (`I` all single indices,
//!    the same operands), is `v[K]` (or `v` itself when `K` is empty); a constant in-bounds
//!    index of a `replicate` is a smaller `replicate` (or its value): the zero rows of an
//!    adjoint that AD clears and then reads.
//! 2. **Updates sink past disjoint reads.** An update `b = a with [I] = v` moves down past the
//!    statements after it up to the first that uses `b` otherwise than by a read `b[J]` with
//!    `J` and `I` differing in a constant index at some position (`[i, 0, 3]` and `[i, 1, 3]`);
//!    those reads now read `a`. Only where it passes such a read. It passes updates of other
//!    arrays too (the RNN's gradient adds each gate's rows into three weight adjoints in turn:
//!    the chains interleave), unless they consume what it reads ([`can_sink`]).
//!
//! Applied until nothing changes, the chain above becomes the maps and additions, each reading
//! a row of `x0`, then the updates; [`super::fusion`] then fuses the additions into the maps
//! making the adjoints, which read each old adjoint row and return the sums.
//!
//! Why it is safe: an update changes its array only at `I`, so a read at a disjoint `J` sees
//! the same value before it. The update moves past no statement that consumes what it reads,
//! that mentions an accumulator when it does or that contains an `assert` when it does (the
//! checks of [`super::fusion::can_cross`]), and not where a view of `a` that the statements it
//! passed made (a row read, a reshape of it, a branch returning it) is used after its new
//! place or returned: `a` is consumed there. Out-of-bounds indices are still errors, possibly
//! reported in another order (as fusion may; Futhark does not order them). Run by
//! [`crate::flatten::extract_kernels`] before fusion.

use super::fusion::{close, infos, record_aliases, StmInfo};
use super::traverse::{effectful_funs, nested_bodies, uses_in_exp};
use crate::ir::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Rewrites reads through in-place updates in every body of `p` (see the module docs).
pub fn update_reads(mut p: Program) -> Program {
    let eff = effectful_funs(&p);
    for f in &mut p.funs {
        rewrite_nest(&mut f.body, true, &eff);
    }
    p
}

/// [`rewrite_body`] on `b` and the bodies nested in it, innermost first. `host`: whether `b`
/// runs as host code (a function's body, or a loop, branch or `with_acc` body in one), not in
/// the lambda of a SOAC. Updates move (rule 2) only in host code: flattening distributes a
/// lambda's statements over several kernels and recomputes its cheap ones (reads included)
/// where they are used, which could put a rewritten read after the kernel of the update that
/// consumes its array.
fn rewrite_nest(b: &mut Body, host: bool, eff: &HashSet<Arc<str>>) {
    for s in &mut b.stms {
        let inner = host && !matches!(s.exp, Exp::Soac(_));
        let with_acc = matches!(s.exp, Exp::WithAcc { .. });
        let nested = nested_bodies(&mut s.exp);
        let last = nested.len().saturating_sub(1);
        for (k, nb) in nested.into_iter().enumerate() {
            // (A `with_acc`'s operators, before its lambda, run where the updates do.)
            rewrite_nest(nb, inner && (!with_acc || k == last), eff);
        }
    }
    rewrite_body(b, host, eff);
}

/// Both rewrites (rule 2 only in host code) on `b`'s own statements until nothing changes.
/// Rule 1 removes a read of an update's result, and rule 2 moves an update after statements
/// that were after it (never an update, never back), so the rounds are bounded; the bound
/// below only guards against a mistake.
fn rewrite_body(b: &mut Body, host: bool, eff: &HashSet<Arc<str>>) {
    if !b.stms.iter().any(|s| matches!(s.exp, Exp::Update(..))) {
        return;
    }
    let limit = 4 * b.stms.len() * b.stms.len() + 16;
    for _ in 0..limit {
        if !(read_after_write(b, eff) || (host && read_past_update(b, eff))) {
            break;
        }
    }
}

/// The update `b = a with [idx] = v` that statement `s` is, as (`b`, `a`, `idx`, `v`).
fn as_update(s: &Stm) -> Option<(&VName, &VName, &[DimIndex], &SubExp)> {
    match (&s.exp, &s.pat.elems[..]) {
        (Exp::Update(a, idx, v), [pe]) => Some((&pe.name, a, idx, v)),
        _ => None,
    }
}

/// The single index of `d`, if it is one.
fn point(d: &DimIndex) -> Option<&SubExp> {
    match d {
        DimIndex::Fix(i) => Some(i),
        DimIndex::Slice { .. } => None,
    }
}

/// Whether `i` and `j` select disjoint parts of one array: at some position both are single
/// constant indices that differ.
fn disjoint(i: &[DimIndex], j: &[DimIndex]) -> bool {
    i.iter().zip(j).any(|(x, y)| match (point(x), point(y)) {
        (Some(SubExp::Const(a)), Some(SubExp::Const(b))) => a != b,
        _ => false,
    })
}

/// Rule 1: the first read `e = b[I ++ K]` of an update `b = a with [I] = v` (all of `I`
/// single indices) becomes `e = v[K]` (`e = v` for an empty `K`). Not when `e` or `v` is
/// consumed in the body: `e` would then alias `v` instead of `b`.
fn read_after_write(b: &mut Body, eff: &HashSet<Arc<str>>) -> bool {
    // (With the arrays the consumed ones may alias: a consumed view of `e` consumes `e`.
    // Found only when there is a read to rewrite.)
    let mut consumed_here: Option<HashSet<VName>> = None;
    for p in 0..b.stms.len() {
        let Some((upd, _, idx, v)) = as_update(&b.stms[p]) else {
            continue;
        };
        if idx.iter().any(|d| point(d).is_none()) {
            continue;
        }
        let (upd, idx, v) = (upd.clone(), idx.to_vec(), v.clone());
        for q in p + 1..b.stms.len() {
            let s = &b.stms[q];
            let (Exp::Index(x, j), [pe]) = (&s.exp, &s.pat.elems[..]) else {
                continue;
            };
            if *x != upd || j.len() < idx.len() || j[..idx.len()] != idx[..] {
                continue;
            }
            let consumed_here = consumed_here.get_or_insert_with(|| {
                infos(&b.stms, eff)
                    .into_iter()
                    .flat_map(|i| i.consumes)
                    .collect()
            });
            if consumed_here.contains(&pe.name)
                || v.as_var().is_some_and(|v| consumed_here.contains(v))
            {
                continue;
            }
            let rest = j[idx.len()..].to_vec();
            let exp = match (&v, rest.is_empty()) {
                (_, true) => Exp::SubExp(v.clone()),
                (SubExp::Var(vn), false) => index_of(&b.stms[..p], vn, rest),
                (SubExp::Const(_), false) => continue,
            };
            b.stms[q].exp = exp;
            return true;
        }
    }
    false
}

/// `vn[idx]`, or the rows of the replicate that `vn` is (bound by one of `stms`) where the
/// indices are constants within its constant outer sizes: an index of a zero row that AD
/// cleared then reads becomes a `replicate`, which fusion takes into a map as a scalar.
fn index_of(stms: &[Stm], vn: &VName, idx: Vec<DimIndex>) -> Exp {
    let replicate = stms.iter().find_map(|s| match (&s.exp, &s.pat.elems[..]) {
        (Exp::Replicate { shape, value }, [pe]) if pe.name == *vn => Some((shape, value)),
        _ => None,
    });
    let within = |(d, n): (&DimIndex, &SubExp)| match (point(d), n) {
        (Some(SubExp::Const(i)), SubExp::Const(n)) => match (i.as_i128(), n.as_i128()) {
            (Some(i), Some(n)) => 0 <= i && i < n,
            _ => false,
        },
        _ => false,
    };
    match replicate {
        Some((shape, value)) if idx.len() <= shape.len() && idx.iter().zip(shape).all(within) => {
            if idx.len() == shape.len() {
                Exp::SubExp(value.clone())
            } else {
                Exp::Replicate {
                    shape: shape[idx.len()..].to_vec(),
                    value: value.clone(),
                }
            }
        }
        _ => Exp::Index(vn.clone(), idx),
    }
}

/// Rule 2: moves one update `b = a with [I] = v` down past the statements after it that do
/// not use `b` but to read it at an index disjoint from `I` (those reads now read `a`), up to
/// the first that does (updates of other arrays included). Only where it passes such a read,
/// and only where [`can_sink`] allows it.
fn read_past_update(b: &mut Body, eff: &HashSet<Arc<str>>) -> bool {
    let mut uses: Vec<Option<HashSet<VName>>> = vec![None; b.stms.len()];
    let mut info = None;
    for p in 0..b.stms.len() {
        let Some((upd, src, idx, _)) = as_update(&b.stms[p]) else {
            continue;
        };
        let disjoint_read =
            |s: &Stm| matches!(&s.exp, Exp::Index(x, j) if x == upd && disjoint(idx, j));
        if !b.stms[p + 1..].iter().any(disjoint_read) {
            continue;
        }
        // The disjoint reads of `b` after the update, up to the first other use of `b`.
        let mut reads = Vec::new();
        let mut t = p + 1;
        while t < b.stms.len() {
            let s = &b.stms[t];
            if disjoint_read(s) {
                reads.push(t);
            } else if uses[t]
                .get_or_insert_with(|| uses_in_exp(&s.exp))
                .contains(upd)
            {
                break;
            }
            t += 1;
        }
        if reads.is_empty() {
            continue;
        }
        let info = info.get_or_insert_with(|| infos(&b.stms, eff));
        if !can_sink(b, info, (p, t), &reads) {
            continue;
        }
        let src = src.clone();
        for &q in &reads {
            if let Exp::Index(x, _) = &mut b.stms[q].exp {
                *x = src.clone();
            }
        }
        b.stms[p..t].rotate_left(1);
        return true;
    }
    false
}

/// Whether the update at `p` may move to just before statement `t`, its disjoint reads
/// `reads` reading its source array `a` instead: no statement it passes consumes what it
/// reads (or a view of its result), mentions an accumulator or contains an `assert` where it
/// does, and no row that a rewritten read makes (nor a view of one: a slice, a branch or loop
/// returning it, as [`super::fusion`] tracks aliases) is used from `t` on or returned by the
/// body: `a` is consumed there. `info` describes `b`'s statements as they are.
fn can_sink(b: &Body, info: &[StmInfo], (p, t): (usize, usize), reads: &[usize]) -> bool {
    let upd = &info[p];
    if info[p + 1..t].iter().any(|k| {
        !k.consumes.is_disjoint(&upd.reads)
            || !k.consumes.is_disjoint(&upd.binds)
            || (k.acc && upd.acc)
            || (k.effect && upd.effect)
    }) {
        return false;
    }
    // The rows the rewritten reads make (a scalar read is a value, not a view).
    let rows: HashSet<VName> = reads
        .iter()
        .flat_map(|&q| &b.stms[q].pat.elems)
        .filter(|pe| !matches!(pe.ty, Type::Prim(_)))
        .map(|pe| pe.name.clone())
        .collect();
    if rows.is_empty() {
        return true;
    }
    // (A statement's reads include the arrays they may alias.)
    if info[t..].iter().any(|k| !k.reads.is_disjoint(&rows)) {
        return false;
    }
    let mut alias = HashMap::new();
    for s in &b.stms {
        record_aliases(&mut alias, s);
    }
    let returned: HashSet<VName> = b
        .result
        .iter()
        .filter_map(|r| r.as_var().cloned())
        .collect();
    close(&alias, &returned).is_disjoint(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::{count_exps, rewrite_and_compare};

    /// The additions of a chain of row adjoints move up past the updates, reading the old
    /// array: after the pass no `map` reads a row of an updated array, and the values are the
    /// interpreter's.
    #[test]
    fn row_additions_move_before_disjoint_updates() {
        let src = "
            entry main [b] (x: *[2][4][b]f64) (ys: [b]f64) (zs: [b]f64) : [2][4][b]f64 =
              let s1 = map2 (+) x[1, 3] ys
              let x1 = x with [1, 3] = s1
              let s2 = map2 (+) x1[0, 3] zs
              let x2 = x1 with [0, 3] = s2
              let s3 = map2 (*) x2[1, 2] ys
              let x3 = x2 with [1, 2] = s3
              in x3
        ";
        let args = "[[[1f64,2f64],[3f64,4f64],[5f64,6f64],[7f64,8f64]],\
                     [[9f64,10f64],[11f64,12f64],[13f64,14f64],[15f64,16f64]]] \
                     [0.5f64, 0.25f64] [2f64, 3f64]";
        let (before, after) = rewrite_and_compare(src, "main", args, update_reads);
        assert_eq!(reads_of_updates(&before), 2, "{before}");
        assert_eq!(reads_of_updates(&after), 0, "{after}");
        // Every update now comes after every map.
        let f = &after.funs[0];
        let first_update = f.body.stms.iter().position(|s| as_update(s).is_some());
        let last_map = f
            .body
            .stms
            .iter()
            .rposition(|s| matches!(s.exp, Exp::Soac(_)));
        assert!(first_update > last_map, "{after}");
        assert_eq!(count_exps(&after, &|e| matches!(e, Exp::Update(..))), 3);
    }

    /// The indexes, in the functions' bodies, of arrays that updates there made.
    fn reads_of_updates(p: &Program) -> usize {
        p.funs
            .iter()
            .map(|f| {
                let upd: HashSet<VName> = f
                    .body
                    .stms
                    .iter()
                    .filter_map(|s| as_update(s).map(|u| u.0.clone()))
                    .collect();
                f.body
                    .stms
                    .iter()
                    .filter(|s| matches!(&s.exp, Exp::Index(a, _) if upd.contains(a)))
                    .count()
            })
            .sum()
    }

    /// Two chains of row additions interleaved (the RNN's gradient adds each gate's rows into
    /// the adjoints of its input and recurrent weights, one array after the other): an update
    /// of one array moves past the updates of the other, so that every addition reads the
    /// arrays from before the chains and fusion can put them into one map.
    #[test]
    fn updates_of_different_arrays_do_not_stop_each_other() {
        let src = "
            entry main [b] (x: *[2][b]f64) (y: *[2][b]f64) (ys: [b]f64) : ([2][b]f64, [2][b]f64) =
              let x1 = x with [1] = map2 (+) x[1] ys
              let y1 = y with [1] = map2 (*) y[1] ys
              let x2 = x1 with [0] = map2 (+) x1[0] ys
              let y2 = y1 with [0] = map2 (*) y1[0] ys
              in (x2, y2)
        ";
        let args = "[[1f64,2f64],[3f64,4f64]] [[5f64,6f64],[7f64,8f64]] [0.5f64, 0.25f64]";
        let (before, after) = rewrite_and_compare(src, "main", args, update_reads);
        assert_eq!(reads_of_updates(&before), 2, "{before}");
        assert_eq!(reads_of_updates(&after), 0, "{after}");
    }

    /// A read of the row just written reads the written value; a read that may overlap the
    /// update (`[i]` then `[j, 1]`, `i` and `j` variables) stays after it, reading its result.
    #[test]
    fn reads_of_the_written_row_and_overlapping_reads() {
        let src = "
            entry main [b] (x: *[3][b]f64) (ys: [b]f64) (i: i64) (j: i64) : ([3][b]f64, f64, f64) =
              let x1 = x with [i] = ys
              let a = x1[i, 0]
              let c = x1[j, 1]
              in (x1, a, c)
        ";
        for (i, j) in [(1, 1), (1, 2), (0, 2)] {
            let args = format!("[[1f64,2f64],[3f64,4f64],[5f64,6f64]] [7f64, 8f64] {i}i64 {j}i64");
            let (_, after) = rewrite_and_compare(src, "main", &args, update_reads);
            let f = &after.funs[0];
            let ys = &f.params[1].name;
            let x1 = f
                .body
                .stms
                .iter()
                .find_map(|s| as_update(s).map(|u| u.0.clone()));
            let reads = |a: &VName| {
                f.body
                    .stms
                    .iter()
                    .filter(|s| matches!(&s.exp, Exp::Index(x, _) if x == a))
                    .count()
            };
            assert_eq!(reads(ys), 1, "{after}");
            assert_eq!(reads(&x1.expect("the update")), 1, "{after}");
        }
    }

    /// An update does not move past a disjoint read whose row is used after the update's new
    /// place (here returned, and read by a later map past the next use of the update's
    /// result): the row would alias the consumed array there.
    #[test]
    fn rows_used_after_the_update_keep_it_in_place() {
        let src = "
            entry main [b] (x: *[2][b]f64) (ys: [b]f64) : ([2][b]f64, [b]f64, [b]f64) =
              let x1 = x with [1] = ys
              let r = x1[0]
              let n = length x1[1]
              let x2 = x1 with [0] = map (+ f64.i64 n) ys
              in (x2, r, map (* 2) r)
        ";
        let args = "[[1f64,2f64],[3f64,4f64]] [5f64, 6f64]";
        let (before, after) = rewrite_and_compare(src, "main", args, update_reads);
        let order = |p: &Program| {
            p.funs[0]
                .body
                .stms
                .iter()
                .map(|s| matches!(s.exp, Exp::Update(..)))
                .collect::<Vec<_>>()
        };
        assert_eq!(order(&before), order(&after), "{after}");
    }

    #[test]
    fn disjointness_needs_different_constants() {
        let c = |v: i64| DimIndex::Fix(SubExp::i64(v));
        let n = VName {
            id: 7,
            base: Arc::from("i"),
        };
        let var = DimIndex::Fix(SubExp::Var(n));
        assert!(disjoint(&[var.clone(), c(0)], &[var.clone(), c(1)]));
        assert!(!disjoint(&[var.clone(), c(0)], &[var.clone(), c(0)]));
        assert!(!disjoint(std::slice::from_ref(&var), &[c(1), c(0)]));
        assert!(!disjoint(&[c(2)], &[var]));
    }
}
