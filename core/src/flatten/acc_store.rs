//! Accumulator updates whose values come from costly thread code: the values stored by a
//! kernel of their own first, so that the updates become a kernel of cheap code that
//! [`super::acc_split`] and rule 7 ([`super::acc_red`]) turn into reductions.
//!
//! GMM's gradient, flattened, has a kernel over `(n, K)` (point, cluster) that computes
//! `Q (x - μ)` and its adjoint, d² steps each, then adds their outer product into the
//! `[K][d][d]` adjoint of the Q matrices and a vector into the `[K][d]` adjoint of the means:
//! every element updated by all `n` points, atomically. Its statements are not cheap enough
//! for [`super::acc_split::split`] to repeat per element, so here it becomes
//!
//! ```text
//! let {xc_rows, adj_rows} = segmap (gi < n, gk < K) { ...costly...; return {xc, adj} }
//! segmap (gi < n, gk < K) { xc = xc_rows[gi, gk]; adj = adj_rows[gi, gk];
//!                           map(d) (\i -> map(d) (\j -> upd_acc(q, [gk, i, j], adj[i] * xc[j]))) }
//! ```
//!
//! which is of the form `acc_split` splits and rule 7 reduces over `gi`: `[n][K][d]` vectors
//! stored, where the outer products, `[n][K][d][d]`, would not fit a GPU at the paper's sizes.

use super::acc_split::{acc_map, cheap, lambda_segmap};
use crate::ir::{
    Attrs, Body, DimIndex, Exp, Lambda, NameSource, Param, Pat, Soac, Stm, SubExp, Type, VName,
};
use crate::seg::{HostExp, HostStm, KernelResult, SegKind};
use std::collections::HashSet;

/// A kernel of accumulator updates whose values come from costly per-thread code (GMM's
/// reverse sweep: each (point, cluster) thread computes `Q (x - μ)` and its adjoint, a
/// d²-step loop, then adds their outer product into the `[K][d][d]` adjoint of the Q
/// matrices) split in two: a kernel `c` running the thread's code and returning the values
/// the updates read that are not cheap to recompute (the `[d]` vectors, as `[n][K][d]`
/// arrays), and a kernel `u` of the updates and the cheap code between, which reads those
/// values as rows of `c`'s results. [`super::acc_split::split`] and rule 7 then apply to `u` as to any kernel
/// of cheap code: the outer products become a segmented reduction over the points instead of
/// `n` contended atomic updates of each element.
///
/// Applies to a `segmap` all of whose results are accumulators, whose statements are either
/// updates (`upd_acc`, maps of them, aliases of accumulators) or values that read no
/// accumulator, where some value an update needs comes from a statement that is not cheap and
/// has a type whose sizes are known outside the kernel. A `map` that passes an accumulator
/// through unchanged next to other results first loses it (the accumulator becomes an alias).
/// The updates commute with the other statements (they only read their inputs), so running
/// all values first changes nothing but the order of the operator's applications.
pub(super) fn materialize(s: &HostStm, ns: &mut NameSource) -> Option<(HostStm, HostStm)> {
    let HostExp::Seg(op) = &s.exp else {
        return None;
    };
    if op.kind != SegKind::Map
        || op.body.results.len() != s.pat.elems.len()
        || !s.pat.elems.iter().all(|p| matches!(p.ty, Type::Acc { .. }))
        || op.body.stms.iter().all(cheap)
    {
        return None;
    }
    let mut stms = Vec::with_capacity(op.body.stms.len());
    for st in &op.body.stms {
        stms.extend(unthread(st)?);
    }
    let is_acc_stm = |st: &Stm| {
        st.pat
            .elems
            .iter()
            .any(|p| matches!(p.ty, Type::Acc { .. }))
    };
    // The accumulators' names: bound by update statements or aliased by them.
    let mut accs: HashSet<VName> = HashSet::new();
    for st in stms.iter().filter(|st| is_acc_stm(st)) {
        if !(matches!(st.exp, Exp::UpdAcc { .. } | Exp::SubExp(_)) || acc_map(st)) {
            return None;
        }
        accs.extend(st.pat.elems.iter().map(|p| p.name.clone()));
        match &st.exp {
            Exp::SubExp(SubExp::Var(v)) => {
                accs.insert(v.clone());
            }
            Exp::UpdAcc { acc, .. } => {
                accs.insert(acc.clone());
            }
            Exp::Soac(Soac::Map { arrs, lam, .. }) => {
                for (a, p) in arrs.iter().zip(&lam.params) {
                    if matches!(p.ty, Type::Acc { .. }) {
                        accs.insert(a.clone());
                    }
                }
            }
            _ => {}
        }
    }
    let (updates, values): (Vec<Stm>, Vec<Stm>) = stms.into_iter().partition(|st| is_acc_stm(st));
    for st in &values {
        let free = crate::passes::traverse::free_vars(std::slice::from_ref(st), &[]);
        if free.iter().any(|v| accs.contains(v)) || contains_acc_op(&st.exp) {
            return None;
        }
    }
    // Backwards from the updates: cheap values are recomputed, the others materialised.
    let mut needed = crate::passes::traverse::free_vars(&updates, &[]);
    let mut recompute = vec![false; values.len()];
    let mut stored: Vec<(VName, Type)> = Vec::new();
    for (i, st) in values.iter().enumerate().rev() {
        let used: Vec<_> = st
            .pat
            .elems
            .iter()
            .filter(|p| needed.contains(&p.name))
            .collect();
        if used.is_empty() {
            continue;
        }
        if cheap(st) {
            recompute[i] = true;
            needed.extend(crate::passes::traverse::free_vars(
                std::slice::from_ref(st),
                &[],
            ));
        } else {
            stored.extend(used.into_iter().map(|p| (p.name.clone(), p.ty.clone())));
        }
    }
    stored.reverse();
    // What the updates read (stored or through cheap code) must not be consumed by the
    // values' code, which runs whole before them now.
    // (`needed` holds the stored values too.)
    let consumed: HashSet<VName> = values.iter().flat_map(super::kernel::consumed).collect();
    if needed.iter().any(|v| consumed.contains(v)) {
        return None;
    }
    // Sizes of the stored values must be known outside the kernel.
    let bound: HashSet<&VName> = values
        .iter()
        .flat_map(|st| st.pat.elems.iter().map(|p| &p.name))
        .chain(op.space.dims.iter().map(|(g, _)| g))
        .collect();
    let known = |t: &Type| match t {
        Type::Prim(_) => true,
        Type::Array { shape, .. } => shape
            .iter()
            .all(|d| !matches!(d, SubExp::Var(v) if bound.contains(v))),
        Type::Acc { .. } => false,
    };
    if stored.is_empty() || !stored.iter().all(|(_, t)| known(t)) {
        return None;
    }
    let i64t = Type::Prim(crate::prim::PrimType::Int(crate::prim::IntType::I64));
    let gtids: Vec<Param> = op
        .space
        .dims
        .iter()
        .map(|(g, _)| Param {
            name: g.clone(),
            ty: i64t.clone(),
        })
        .collect();
    // A `segmap` over `op`'s space (whose thread indices are `lam`'s params) running `lam`.
    let kernel = |elems: Vec<Param>, lam: Lambda| lambda_segmap(s, elems, lam, &op.space.dims);
    // `c`: every value statement (as the kernel ran them), returning the stored values.
    let c_lam = crate::passes::traverse::fresh_lambda(
        ns,
        &Lambda {
            params: gtids.clone(),
            body: Body {
                stms: values.clone(),
                result: stored.iter().map(|(v, _)| SubExp::Var(v.clone())).collect(),
            },
            ret: stored.iter().map(|(_, t)| t.clone()).collect(),
        },
    );
    let whole = |t: &Type| {
        op.space
            .dims
            .iter()
            .rev()
            .fold(t.clone(), |t, (_, d)| t.array_of(d.clone()))
    };
    let arrays: Vec<Param> = stored
        .iter()
        .map(|(v, t)| Param {
            name: ns.fresh(&format!("{}_rows", v.base)),
            ty: whole(t),
        })
        .collect();
    let c = kernel(arrays.clone(), c_lam);
    // `u`: the stored values read back, the cheap values recomputed, the updates.
    let at: Vec<DimIndex> = op
        .space
        .dims
        .iter()
        .map(|(g, _)| DimIndex::Fix(SubExp::Var(g.clone())))
        .collect();
    let mut u_stms: Vec<Stm> = stored
        .iter()
        .zip(&arrays)
        .map(|((v, t), a)| Stm {
            pat: Pat {
                elems: vec![Param {
                    name: v.clone(),
                    ty: t.clone(),
                }],
            },
            exp: Exp::Index(a.name.clone(), at.clone()),
            attrs: Attrs(vec!["unsafe".into()]),
            loc: None,
        })
        .collect();
    u_stms.extend(
        values
            .into_iter()
            .zip(recompute)
            .filter_map(|(st, r)| r.then_some(st)),
    );
    u_stms.extend(updates);
    let results: Vec<SubExp> = op
        .body
        .results
        .iter()
        .map(|r| match r {
            KernelResult::Returns(x) => Some(x.clone()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let u_lam = crate::passes::traverse::fresh_lambda(
        ns,
        &Lambda {
            params: gtids,
            body: Body {
                stms: u_stms,
                result: results,
            },
            ret: op.ret.clone(),
        },
    );
    Some((c, kernel(s.pat.elems.clone(), u_lam)))
}

/// `st` without the accumulators a `map` passes through unchanged next to other results (a
/// result that is its accumulator parameter, which nothing else in the lambda uses): the map
/// of the other results, then each such accumulator bound as an alias of its input. `None`
/// where a map has both accumulator and other results and an accumulator is not passed
/// through so.
fn unthread(st: &Stm) -> Option<Vec<Stm>> {
    let Exp::Soac(Soac::Map { w, arrs, lam }) = &st.exp else {
        return Some(vec![st.clone()]);
    };
    let is_acc = |t: &Type| matches!(t, Type::Acc { .. });
    let n_acc = st.pat.elems.iter().filter(|p| is_acc(&p.ty)).count();
    if n_acc == 0 || n_acc == st.pat.elems.len() {
        return Some(vec![st.clone()]);
    }
    let used = crate::passes::traverse::free_vars(&lam.body.stms, &[]);
    let mut drop_params = HashSet::new();
    let mut aliases = Vec::new();
    let mut keep_results = Vec::new();
    for (j, p) in st.pat.elems.iter().enumerate() {
        if !is_acc(&p.ty) {
            keep_results.push(j);
            continue;
        }
        let SubExp::Var(r) = lam.body.result.get(j)? else {
            return None;
        };
        let i = lam.params.iter().position(|q| &q.name == r)?;
        let returned = lam
            .body
            .result
            .iter()
            .filter(|x| x.as_var() == Some(r))
            .count();
        if used.contains(r) || returned != 1 {
            return None;
        }
        drop_params.insert(i);
        aliases.push(Stm {
            pat: Pat {
                elems: vec![p.clone()],
            },
            exp: Exp::SubExp(SubExp::Var(arrs[i].clone())),
            attrs: Attrs::default(),
            loc: None,
        });
    }
    let keep = |i: &usize| !drop_params.contains(i);
    let map = Stm {
        pat: Pat {
            elems: keep_results
                .iter()
                .map(|&j| st.pat.elems[j].clone())
                .collect(),
        },
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            arrs: (0..arrs.len())
                .filter(keep)
                .map(|i| arrs[i].clone())
                .collect(),
            lam: Lambda {
                params: (0..lam.params.len())
                    .filter(keep)
                    .map(|i| lam.params[i].clone())
                    .collect(),
                body: Body {
                    stms: lam.body.stms.clone(),
                    result: keep_results
                        .iter()
                        .map(|&j| lam.body.result[j].clone())
                        .collect(),
                },
                ret: keep_results.iter().map(|&j| lam.ret[j].clone()).collect(),
            },
        }),
        attrs: st.attrs.clone(),
        loc: st.loc.clone(),
    };
    let mut out = vec![map];
    out.extend(aliases);
    Some(out)
}

/// Whether `e` has an accumulator operation (`upd_acc`, `with_acc`) at any depth.
fn contains_acc_op(e: &Exp) -> bool {
    match e {
        Exp::UpdAcc { .. } | Exp::WithAcc { .. } => true,
        e => crate::passes::traverse::nested_bodies_ref(e)
            .into_iter()
            .any(|b| b.stms.iter().any(|st| contains_acc_op(&st.exp))),
    }
}
