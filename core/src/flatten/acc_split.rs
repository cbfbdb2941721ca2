//! Kernels of accumulator updates split into one kernel per accumulator, with inner `map`s of
//! updates made dimensions of the space, so that rule 7 ([`super::acc_red`]) can turn each
//! into a segmented reduction (part of rule 7 in [`super`]).
//!
//! The reverse sweep of GMM's objective left, after distribution, kernels such as
//!
//! ```text
//! segmap (gi < n, gk < k, gl < d) {
//!   ...; a1 = map(d, {iota_d, row, acc1}) (\j v a -> upd_acc(a, [gk, gl, j], v))   -- acc1: [k][d][d]
//!   a2 = upd_acc(acc2, [gk, gl], w)                                              -- acc2: [k][d]
//!   return {a1, a2}
//! }
//! ```
//!
//! Rule 7 needs every result to be one update at the same thread indices, so it leaves this
//! kernel to n-way contended atomics (GMM d = 10, K = 25: 85 % of the gradient's time on
//! lavapipe). Here it becomes one kernel per result, each with only the statements its update
//! needs, the inner `map` over `iota d` becoming a fourth dimension:
//!
//! ```text
//! segmap (gi < n, gk < k, gl < d, gj < d) { ...; v = row[gj]; j = iota_d[gj];
//!                                          return upd_acc(acc1, [gk, gl, j], v) }
//! segmap (gi < n, gk < k, gl < d) { ...; return upd_acc(acc2, [gk, gl], w) }
//! ```
//!
//! which rule 7 then reduces over `gi`. Splitting is valid because updates of an accumulator
//! with an operator commute with everything else the kernels do (they only read their
//! inputs). It is done only where every statement the kernels keep is cheap scalar or indexing
//! code (a made dimension repeats the statements before the inner `map` once per element of
//! it), the inner `map`s' widths are known on the host, and rule 7 then applies to at least one
//! of the kernels; otherwise the kernel is left as it is.
//!
//! GMM's gradient no longer has the cheap form: since fusion moved the update of the Q
//! matrices' adjoint into the kernel of the point's own adjoint
//! ([`crate::passes::fusion::into_with_acc`]), the kernel over `(n, K)` computes `Q (x - μ)`
//! and its adjoint (d² steps each) before its updates. `acc_store::materialize` splits such a kernel
//! in two first (module `acc_store`): one kernel runs the costly code and stores the values
//! the updates read (the point's `[d]` vectors, `[n][K][d]` in all, never the `[n][K][d][d]`
//! outer products), and one of cheap code reads them and makes the updates, which [`split`]
//! then splits as above.
//! A result that passes an accumulator through unchanged goes with the first kernel.

use crate::ir::{Attrs, DimIndex, Exp, Lambda, NameSource, Param, Pat, Soac, Stm, SubExp, Type};
use crate::ir::{Body, VName};
use crate::seg::{HostExp, HostStm, KernelBody, KernelResult, SegKind, SegOp, SegSpace};
use std::collections::HashSet;

/// The kernels `s` splits into (one per result, in the order of its results), or `None` where
/// it is not such a kernel or there is nothing to split or expand.
pub(super) fn split(s: &HostStm, ns: &mut NameSource) -> Option<Vec<HostStm>> {
    let HostExp::Seg(op) = &s.exp else {
        return None;
    };
    if op.kind != SegKind::Map
        || op.body.results.len() != s.pat.elems.len()
        || !s.pat.elems.iter().all(|p| matches!(p.ty, Type::Acc { .. }))
        || !op.body.stms.iter().all(cheap)
    {
        return None;
    }
    let mut pieces = Vec::new();
    let mut expanded = false;
    // Results that are a host accumulator passed through without an update: the first
    // kernel returns them too.
    let mut passed = Vec::new();
    for (i, r) in op.body.results.iter().enumerate() {
        let KernelResult::Returns(SubExp::Var(r)) = r else {
            return None;
        };
        if let Some(chain) = pass_through_chain(&op.body.stms, r) {
            passed.push((r.clone(), i, chain));
            continue;
        }
        let mut stms = op.body.stms.clone();
        let mut dims = op.space.dims.clone();
        let mut result = r.clone();
        while let Some(at) = stms
            .iter()
            .position(|st| st.pat.elems.iter().any(|p| p.name == result))
        {
            // What a width must not be: a name of the kernel (bound in it, or a thread index).
            let bound: HashSet<VName> = stms
                .iter()
                .flat_map(|st| st.pat.elems.iter().map(|p| p.name.clone()))
                .chain(dims.iter().map(|(g, _)| g.clone()))
                .collect();
            let Some((inlined, res, dim)) = inline_map(&stms[at], &result, &bound, ns) else {
                break;
            };
            stms.splice(at..=at, inlined);
            dims.push(dim);
            result = res;
            expanded = true;
        }
        // Unneeded updates are the other kernels' accumulators'.
        let stms = super::acc_red::live(stms, &[SubExp::Var(result.clone())], |st| {
            matches!(st.exp, Exp::UpdAcc { .. }) || acc_map(st)
        });
        // The kernel's only update is the one it returns.
        let updates = stms
            .iter()
            .filter(|st| matches!(st.exp, Exp::UpdAcc { .. }) || acc_map(st))
            .count();
        if updates != 1 {
            return None;
        }
        pieces.push((dims, stms, result, i));
    }
    if pieces.len() < 2 && !expanded || pieces.is_empty() {
        return None;
    }
    let i64t = Type::Prim(crate::prim::PrimType::Int(crate::prim::IntType::I64));
    let out = pieces
        .into_iter()
        .enumerate()
        .map(|(k, (dims, stms, result, i))| {
            let mut results = vec![(result, i)];
            let mut stms = stms;
            if k == 0 {
                results.extend(passed.iter().map(|(r, i, _)| (r.clone(), *i)));
                let mut chains: Vec<Stm> = passed
                    .iter()
                    .flat_map(|(_, _, c)| c.iter().cloned())
                    .collect();
                let bound: HashSet<VName> = stms
                    .iter()
                    .flat_map(|st| st.pat.elems.iter().map(|p| p.name.clone()))
                    .collect();
                chains.retain(|st| !bound.contains(&st.pat.elems[0].name));
                chains.extend(stms);
                stms = chains;
            }
            // Fresh names for each kernel (they copy the original's statements).
            let lam = crate::passes::traverse::fresh_lambda(
                ns,
                &Lambda {
                    params: dims
                        .iter()
                        .map(|(g, _)| Param {
                            name: g.clone(),
                            ty: i64t.clone(),
                        })
                        .collect(),
                    body: Body {
                        stms,
                        result: results
                            .iter()
                            .map(|(r, _)| SubExp::Var(r.clone()))
                            .collect(),
                    },
                    ret: results.iter().map(|&(_, i)| op.ret[i].clone()).collect(),
                },
            );
            let elems = results
                .iter()
                .map(|&(_, i)| s.pat.elems[i].clone())
                .collect();
            lambda_segmap(s, elems, lam, &dims)
        })
        .collect();
    Some(out)
}

/// A `segmap` bound to `elems` (with `s`'s attributes and location) whose thread indices are
/// `lam`'s params, over the sizes of `dims` (one per param), running `lam`'s body.
pub(super) fn lambda_segmap(
    s: &HostStm,
    elems: Vec<Param>,
    lam: Lambda,
    dims: &[(VName, SubExp)],
) -> HostStm {
    HostStm {
        pat: Pat { elems },
        exp: HostExp::Seg(SegOp {
            kind: SegKind::Map,
            space: SegSpace {
                dims: lam
                    .params
                    .iter()
                    .zip(dims)
                    .map(|(p, (_, d))| (p.name.clone(), d.clone()))
                    .collect(),
            },
            ret: lam.ret,
            body: KernelBody::returning(lam.body),
        }),
        attrs: s.attrs.clone(),
        loc: s.loc.clone(),
    }
}

/// The alias statements (`let a = b`) of `stms` leading from `r` back to a name they do not
/// bind, in the order of `stms`; empty where `r` is not bound by such a chain.
fn alias_chain(stms: &[Stm], r: &VName) -> Vec<Stm> {
    let mut chain = Vec::new();
    let mut at = r;
    while let Some(st) = stms
        .iter()
        .find(|st| st.pat.elems.iter().any(|p| &p.name == at))
    {
        match &st.exp {
            Exp::SubExp(SubExp::Var(v)) if st.pat.elems.len() == 1 => {
                chain.push(st.clone());
                at = v;
            }
            _ => return Vec::new(),
        }
    }
    chain.reverse();
    chain
}

/// Where result `r` of a kernel of statements `stms` is an accumulator the kernel passes
/// through without an update, the alias chain back to the name from outside the kernel.
fn pass_through_chain(stms: &[Stm], r: &VName) -> Option<Vec<Stm>> {
    let chain = alias_chain(stms, r);
    let accs = chain
        .iter()
        .all(|st| matches!(st.pat.elems[0].ty, Type::Acc { .. }));
    (!chain.is_empty() && accs).then_some(chain)
}

/// Statement `st` binds `result` by a `map` of accumulator updates whose width is known outside
/// the kernel (not in `bound`, the kernel's own names): its lambda's statements with the
/// parameters bound to the inputs' elements at a new thread index, the name that is `result`
/// in them, and the new dimension.
fn inline_map(
    st: &Stm,
    result: &VName,
    bound: &HashSet<VName>,
    ns: &mut NameSource,
) -> Option<(Vec<Stm>, VName, (VName, SubExp))> {
    let Exp::Soac(Soac::Map { w, arrs, lam }) = &st.exp else {
        return None;
    };
    if !acc_map(st) || lam.params.len() != arrs.len() {
        return None;
    }
    if let SubExp::Var(v) = w {
        if bound.contains(v) {
            return None;
        }
    }
    let j = st.pat.elems.iter().position(|p| &p.name == result)?;
    let SubExp::Var(res) = lam.body.result.get(j)? else {
        return None;
    };
    let g = ns.fresh("gtid");
    let mut out = Vec::new();
    for (p, a) in lam.params.iter().zip(arrs) {
        let exp = if matches!(p.ty, Type::Acc { .. }) {
            Exp::SubExp(SubExp::Var(a.clone()))
        } else {
            Exp::Index(a.clone(), vec![DimIndex::Fix(SubExp::Var(g.clone()))])
        };
        let attrs = if matches!(exp, Exp::Index(..)) {
            Attrs(vec!["unsafe".into()])
        } else {
            Attrs::default()
        };
        out.push(Stm {
            pat: Pat {
                elems: vec![p.clone()],
            },
            exp,
            attrs,
            loc: None,
        });
    }
    out.extend(lam.body.stms.iter().cloned());
    Some((out, res.clone(), (g, w.clone())))
}

/// A `map` all of whose results are accumulators (a map of accumulator updates).
pub(super) fn acc_map(st: &Stm) -> bool {
    matches!(st.exp, Exp::Soac(Soac::Map { .. }))
        && st
            .pat
            .elems
            .iter()
            .all(|p| matches!(p.ty, Type::Acc { .. }))
}

/// What a kernel may repeat per element of a made dimension: scalar code (rule 2's
/// [`super::kernel::cheap`]), rows of arrays (point indexes), aliases of accumulators,
/// accumulator updates and maps of them.
pub(super) fn cheap(st: &Stm) -> bool {
    super::kernel::cheap(st)
        || match &st.exp {
            Exp::SubExp(_) | Exp::UpdAcc { .. } => true,
            Exp::Index(_, idx) => idx.iter().all(|d| matches!(d, DimIndex::Fix(_))),
            Exp::Soac(Soac::Map { lam, .. }) => acc_map(st) && lam.body.stms.iter().all(cheap),
            _ => false,
        }
}
