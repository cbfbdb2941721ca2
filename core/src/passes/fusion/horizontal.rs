//! Horizontal fusion: two independent `map`s of the same width in the same body become one
//! `map` returning the results of both. See [`super`] for the rules.

use super::{as_map, can_cross, certs, infos, map_stm, on_every_body, Facts, StmInfo};
use super::{shared_param, substitute_lambda};
use crate::ir::*;
use crate::passes::traverse::effectful_funs;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Fuses independent `map`s of the same width in every body of `p`, until no more fuse.
pub fn fuse_horizontal(p: Program) -> Program {
    fuse_horizontal_counted(p).0
}

/// [`fuse_horizontal`], and how many fusions it made.
pub fn fuse_horizontal_counted(mut p: Program) -> (Program, usize) {
    hoist_host_views(&mut p);
    on_every_body(p, &mut fuse_body)
}

fn fuse_body(b: &mut Body, outer: &Facts, eff: &HashSet<Arc<str>>) -> usize {
    fuse_pairs(b, |b| find(b, outer, eff), fuse_pair)
}

/// [`hoist_views`] in every host-level body of `p`: function bodies and the bodies of the
/// loops, branches and `with_acc`s in them, not the lambdas of SOACs (whose statements
/// flattening distributes: there a view's place decides what each kernel reads).
fn hoist_host_views(p: &mut Program) {
    fn each(b: &mut Body, eff: &HashSet<Arc<str>>) {
        for s in &mut b.stms {
            match &mut s.exp {
                Exp::Loop { body, .. } => each(body, eff),
                Exp::If { then_b, else_b, .. } => {
                    each(then_b, eff);
                    each(else_b, eff);
                }
                Exp::WithAcc { lam, .. } => each(&mut lam.body, eff),
                _ => {}
            }
        }
        hoist_views(b, eff);
    }
    let eff = effectful_funs(p);
    for f in &mut p.funs {
        each(&mut f.body, &eff);
    }
}

/// Moves each statement of `b` that makes a view of an array (an index or slice whose result
/// is an array: no computation, no data moved) up to just after the last statement it
/// depends on or may not cross (rule 9), so that a later map reading the view can move up to
/// an earlier map with it.
fn hoist_views(b: &mut Body, eff: &HashSet<Arc<str>>) {
    let is_view =
        |s: &Stm| matches!(s.exp, Exp::Index(..)) && s.pat.elems.iter().all(|p| p.ty.rank() > 0);
    // What fusion knows of each statement, made again only after a statement has moved.
    let mut known: Option<Vec<StmInfo>> = None;
    for k in 0..b.stms.len() {
        if !is_view(&b.stms[k]) {
            continue;
        }
        let info = known.get_or_insert_with(|| infos(&b.stms, eff));
        let mut to = k;
        // (Views keep their order among themselves, so that hoisting again moves nothing.)
        while to > 0
            && !is_view(&b.stms[to - 1])
            && info[k].reads.is_disjoint(&info[to - 1].binds)
            && can_cross(&info[k], &info[to - 1])
        {
            to -= 1;
        }
        if to < k {
            let s = b.stms.remove(k);
            b.stms.insert(to, s);
            known = None;
        }
    }
}

/// Fuses pairs of statements of `b` while `find` finds one (`(i, j, late)`: statements
/// `i < j`, fused where `j` was if `late`, else where `i` was) with `fuse(first, second,
/// late)`; returns how many fusions it made.
pub(super) fn fuse_pairs(
    b: &mut Body,
    find: impl Fn(&Body) -> Option<(usize, usize, bool)>,
    fuse: fn(Stm, Stm, bool) -> Stm,
) -> usize {
    let mut n = 0;
    while let Some((i, j, late)) = find(b) {
        let second = b.stms.remove(j);
        let first = b.stms.remove(i);
        let at = if late { j - 1 } else { i };
        b.stms.insert(at, fuse(first, second, late));
        n += 1;
    }
    n
}

/// The first pair `(i, j)` of maps that fuse (later maps in order, for each the earlier maps
/// nearest first), and whether the fused map goes where the later one was.
fn find(b: &Body, outer: &Facts, eff: &HashSet<Arc<str>>) -> Option<(usize, usize, bool)> {
    let maps: Vec<usize> = (0..b.stms.len())
        .filter(|&k| as_map(&b.stms[k]).is_some())
        .collect();
    if maps.len() < 2 {
        return None;
    }
    let info = infos(&b.stms, eff);
    for (n, &j) in maps.iter().enumerate() {
        for &i in maps[..n].iter().rev() {
            if let Some(late) = fusible(b, &info, outer, i, j) {
                return Some((i, j, late));
            }
        }
    }
    None
}

/// Whether maps `i < j` fuse; if so, whether the fused map goes at `j` (else at `i`).
fn fusible(b: &Body, info: &[StmInfo], outer: &Facts, i: usize, j: usize) -> Option<bool> {
    let (aw, _, alam) = as_map(&b.stms[i])?;
    let (cw, _, clam) = as_map(&b.stms[j])?;
    // Not two maps updating accumulators of the same `with_acc` input.
    if certs(alam).iter().any(|x| certs(clam).contains(x)) {
        return None;
    }
    sibling_placement(b, info, outer, i, j, aw, cw)
}

/// Where SOACs `i < j` of `b`, of widths `iw` and `jw`, can be fused side by side
/// ([`placement`]), if they have the same attributes, not both an effect, and widths known
/// to be equal before `i`.
pub(super) fn sibling_placement(
    b: &Body,
    info: &[StmInfo],
    outer: &Facts,
    i: usize,
    j: usize,
    iw: &SubExp,
    jw: &SubExp,
) -> Option<bool> {
    if b.stms[i].attrs != b.stms[j].attrs
        || (info[i].effect && info[j].effect)
        || !outer.after(&b.stms[..i]).equal(iw, jw)
    {
        return None;
    }
    placement(info, i, j)
}

/// Where statements `i < j` of a body, when independent, can be fused: at `j` (`Some(true)`:
/// `i` moves down past the statements in between) or at `i` (`Some(false)`: `j` moves up);
/// `None` where they are not independent or neither can move. Independent: the later one does
/// not use the earlier one's results, and neither consumes what the other reads.
fn placement(info: &[StmInfo], i: usize, j: usize) -> Option<bool> {
    if !info[j].reads.is_disjoint(&info[i].binds)
        || !info[i].consumes.is_disjoint(&info[j].reads)
        || !info[j].consumes.is_disjoint(&info[i].reads)
    {
        return None;
    }
    let between = i + 1..j;
    let late = between
        .clone()
        .all(|k| info[k].reads.is_disjoint(&info[i].binds) && can_cross(&info[i], &info[k]));
    if late {
        return Some(true);
    }
    let early = between
        .clone()
        .all(|k| info[j].reads.is_disjoint(&info[k].binds) && can_cross(&info[j], &info[k]));
    early.then_some(false)
}

/// One map computing `a` then `c` in each iteration and returning the results of both; an
/// input of `c` that is also an input of `a` is read through `a`'s param.
fn fuse_pair(a: Stm, c: Stm, late: bool) -> Stm {
    let (
        Exp::Soac(Soac::Map {
            w: aw,
            arrs: aarrs,
            lam: alam,
        }),
        Exp::Soac(Soac::Map {
            w: cw,
            arrs: carrs,
            lam: clam,
        }),
    ) = (a.exp, c.exp)
    else {
        unreachable!("fuse_pair of non-maps")
    };
    let mut subst: HashMap<VName, SubExp> = HashMap::new();
    let mut params = alam.params;
    let mut arrs = aarrs;
    let na = arrs.len();
    for (cp, ca) in clam.params.into_iter().zip(carrs) {
        match shared_param(&arrs[..na], &params[..na], &cp, &ca) {
            Some(ap) => {
                subst.insert(cp.name, SubExp::Var(ap));
            }
            None => {
                params.push(cp);
                arrs.push(ca);
            }
        }
    }
    let mut cbody = clam.body;
    let mut cret = clam.ret;
    substitute_lambda(&mut cbody, &mut cret, &subst);
    let mut stms = alam.body.stms;
    stms.extend(cbody.stms);
    let mut result = alam.body.result;
    result.extend(cbody.result);
    let mut ret = alam.ret;
    ret.extend(cret);
    let mut pat = a.pat.elems;
    pat.extend(c.pat.elems);
    let (w, loc) = if late { (cw, c.loc) } else { (aw, a.loc) };
    map_stm(
        pat,
        w,
        arrs,
        params,
        Body { stms, result },
        ret,
        c.attrs,
        loc,
    )
}
