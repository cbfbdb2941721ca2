//! Horizontal fusion of reductions (rule 8 of [`super`]): two independent `reduce`s to scalars
//! of the same width, in the same body, whose arrays are all results of one `map` of that
//! body, become one `reduce` over the arrays of both, with both operators side by side.
//!
//! ```text
//! let {a, b} = map(n, {xs}, \x -> {f x, g x})
//! let s = reduce(n, {a}, (+), 0)          =>     let {s, t} = reduce(n, {a, b}, \sa ta sb tb ->
//! let t = reduce(n, {b}, max, -inf)                               {sa + sb, max ta tb}, {0, -inf})
//! ```
//!
//! Inside a kernel an inner `map` is computed where its rows are used, and the rows of several
//! of its results that one reduction reads come from one evaluation of its function
//! (`rows_of` in the Vulkan backend). Separate reductions each evaluate it again: RSBench's
//! lookup reduces three results of a map over poles, and four results of a map over nuclides
//! around it, so each pole's Faddeeva function ran twelve times per lookup. Fused, once.
//!
//! Only reductions to scalars: an operator over arrays (a vectorised reduction) keeps its own
//! kernel shape. Only where one `map` produces every array: two reductions over different
//! producers gain nothing from sharing a loop and would make a top-level reduction read two
//! producers, which flattening does not fuse into one kernel. The fused operator is
//! commutative only where both were; the reductions' results are those of the two separate
//! ones (each component is combined by its own operator, in the same order).

use super::horizontal::{fuse_pairs, sibling_placement};
use super::{infos, on_every_body, Facts};
use crate::ir::*;
use std::collections::HashSet;
use std::sync::Arc;

/// Fuses the reductions of every body of `p` as the module doc says, until no more fuse; and
/// how many fusions it made.
pub fn fuse_reductions_counted(p: Program) -> (Program, usize) {
    on_every_body(p, &mut fuse_body)
}

fn fuse_body(b: &mut Body, outer: &Facts, eff: &HashSet<Arc<str>>) -> usize {
    fuse_pairs(b, |b| find(b, outer, eff), fuse_pair)
}

/// A reduction to scalars: its width, arrays and operator.
fn as_scalar_reduce(s: &Stm) -> Option<(&SubExp, &Vec<VName>, &Operator)> {
    match &s.exp {
        Exp::Soac(Soac::Reduce { w, arrs, op })
            if op.lam.params.len() == 2 * arrs.len()
                && op.neutral.len() == arrs.len()
                && s.pat.elems.iter().all(|p| p.ty.rank() == 0) =>
        {
            Some((w, arrs, op))
        }
        _ => None,
    }
}

/// The index of the statement of `stms` that binds `v`, where it is a `map`.
fn producer(stms: &[Stm], v: &VName) -> Option<usize> {
    stms.iter().position(|s| {
        matches!(s.exp, Exp::Soac(Soac::Map { .. })) && s.pat.elems.iter().any(|p| p.name == *v)
    })
}

/// The one `map` statement producing every array of `arrs`, if there is one.
fn sole_producer(stms: &[Stm], arrs: &[VName]) -> Option<usize> {
    let first = producer(stms, arrs.first()?)?;
    arrs.iter()
        .all(|a| producer(stms, a) == Some(first))
        .then_some(first)
}

/// The first pair `(i, j)` of reductions that fuse, and whether the fused one goes where the
/// later one was.
fn find(b: &Body, outer: &Facts, eff: &HashSet<Arc<str>>) -> Option<(usize, usize, bool)> {
    let reds: Vec<(usize, usize)> = (0..b.stms.len())
        .filter_map(|k| {
            let (_, arrs, _) = as_scalar_reduce(&b.stms[k])?;
            Some((k, sole_producer(&b.stms, arrs)?))
        })
        .collect();
    if reds.len() < 2 {
        return None;
    }
    let info = infos(&b.stms, eff);
    for (n, &(j, pj)) in reds.iter().enumerate() {
        for &(i, pi) in reds[..n].iter().rev() {
            if pi != pj {
                continue;
            }
            let (aw, ..) = as_scalar_reduce(&b.stms[i])?;
            let (cw, ..) = as_scalar_reduce(&b.stms[j])?;
            if let Some(late) = sibling_placement(b, &info, outer, i, j, aw, cw) {
                return Some((i, j, late));
            }
        }
    }
    None
}

/// One reduction of the arrays of `a` then those of `c`: its operator takes the accumulators
/// of both, then the elements of both, and returns both results.
fn fuse_pair(a: Stm, c: Stm, late: bool) -> Stm {
    let (
        Exp::Soac(Soac::Reduce {
            w: aw,
            arrs: aarrs,
            op: aop,
        }),
        Exp::Soac(Soac::Reduce {
            w: cw,
            arrs: carrs,
            op: cop,
        }),
    ) = (a.exp, c.exp)
    else {
        unreachable!("fuse_pair of non-reductions")
    };
    let (na, nc) = (aarrs.len(), carrs.len());
    let mut aparams = aop.lam.params;
    let aelems = aparams.split_off(na);
    let mut cparams = cop.lam.params;
    let celems = cparams.split_off(nc);
    let mut params = aparams;
    params.extend(cparams);
    params.extend(aelems);
    params.extend(celems);
    let mut stms = aop.lam.body.stms;
    stms.extend(cop.lam.body.stms);
    let mut result = aop.lam.body.result;
    result.extend(cop.lam.body.result);
    let mut ret = aop.lam.ret;
    ret.extend(cop.lam.ret);
    let mut arrs = aarrs;
    arrs.extend(carrs);
    let mut neutral = aop.neutral;
    neutral.extend(cop.neutral);
    let mut pat = a.pat.elems;
    pat.extend(c.pat.elems);
    let (w, loc) = if late { (cw, c.loc) } else { (aw, a.loc) };
    Stm {
        pat: Pat { elems: pat },
        exp: Exp::Soac(Soac::Reduce {
            w,
            arrs,
            op: Operator {
                lam: Lambda {
                    params,
                    body: Body { stms, result },
                    ret,
                },
                neutral,
                commutative: aop.commutative && cop.commutative,
            },
        }),
        attrs: c.attrs,
        loc,
    }
}
