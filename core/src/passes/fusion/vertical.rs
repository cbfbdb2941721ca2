//! Vertical (producer–consumer) fusion: `let ys = map f xs ... let zs = map g ys as` becomes
//! one `map` computing `g ∘ f`, returning `ys` too where other statements use it. See
//! [`super`] for the rules.

use super::{as_map, can_cross, certs, infos_of, is_acc, on_every_body, own_info, use_counts};
use super::{map_stm, shared_param, substitute_lambda};
use super::{Facts, OwnInfo, StmInfo};
use crate::ir::*;
use crate::passes::traverse::mk_stm;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Fuses producer `map`s into consumer `map`s in every body of `p`, until no more fuse.
pub fn fuse_vertical(p: Program) -> Program {
    fuse_vertical_counted(p).0
}

/// [`fuse_vertical`], and how many fusions it made.
pub fn fuse_vertical_counted(p: Program) -> (Program, usize) {
    on_every_body(p, &mut fuse_body)
}

/// Where the fused map goes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    /// Where the producer was: the consumer's computation moves earlier.
    Producer,
    /// Where the consumer was: the producer's computation moves later.
    Consumer,
}

/// A fusion found: producer `i`, consumer `j`, where the fused map goes, and which of the
/// producer's results it also returns.
struct Plan {
    i: usize,
    j: usize,
    place: Place,
    extra: Vec<usize>,
}

fn fuse_body(b: &mut Body, outer: &Facts, eff: &HashSet<Arc<str>>) -> usize {
    let mut n = replicate_inputs(b, outer);
    // What each statement uses and consumes, kept up to date for the statements a fusion
    // leaves alone.
    let mut own: Vec<OwnInfo> = b.stms.iter().map(|s| own_info(s, eff)).collect();
    while let Some(plan) = find(b, &own, outer) {
        let (i, j) = (plan.i, plan.j);
        let at = apply(b, plan);
        own.remove(j);
        own.remove(i);
        own.insert(at, own_info(&b.stms[at], eff));
        n += 1;
    }
    n
}

/// Fuses `replicate`s into the maps of `b` that read them: an input `replicate [w] v` (`v` a
/// scalar, `w` the map's width) becomes `let x = v` in the lambda, for its row param `x`.
/// Returns how many inputs it replaced.
fn replicate_inputs(b: &mut Body, outer: &Facts) -> usize {
    let mut n = 0;
    let mut facts = outer.clone();
    for s in &mut b.stms {
        if let Exp::Soac(Soac::Map { w, arrs, lam }) = &mut s.exp {
            if lam.params.len() == arrs.len() {
                let consumed = super::consumed_body(&lam.body);
                let mut q = 0;
                while q < arrs.len() {
                    match facts.replicate(&arrs[q]) {
                        Some((rw, v))
                            if facts.equal(rw, w)
                                && !is_acc(&lam.params[q])
                                && !consumed.contains(&lam.params[q].name) =>
                        {
                            let v = v.clone();
                            arrs.remove(q);
                            let p = lam.params.remove(q);
                            lam.body.stms.insert(0, mk_stm(vec![p], Exp::SubExp(v)));
                            n += 1;
                        }
                        _ => q += 1,
                    }
                }
            }
        }
        facts.observe(s);
    }
    n
}

/// The first fusion possible in `b`: consumers in order, for each its producers nearest first.
fn find(b: &Body, own: &[OwnInfo], outer: &Facts) -> Option<Plan> {
    let info = infos_of(&b.stms, own);
    let mut def: HashMap<&VName, usize> = HashMap::new();
    for (k, s) in b.stms.iter().enumerate() {
        for p in &s.pat.elems {
            def.insert(&p.name, k);
        }
    }
    for j in 0..b.stms.len() {
        let Some((_, carrs, _)) = as_map(&b.stms[j]) else {
            continue;
        };
        let mut producers: Vec<usize> = carrs
            .iter()
            .filter_map(|a| def.get(a).copied())
            .filter(|&i| i < j && as_map(&b.stms[i]).is_some())
            .collect();
        producers.sort_unstable();
        producers.dedup();
        for &i in producers.iter().rev() {
            if let Some(plan) = plan(b, &info, outer, i, j) {
                return Some(plan);
            }
        }
    }
    None
}

/// Whether producer `i` fuses into consumer `j`, and how.
fn plan(b: &Body, info: &[StmInfo], outer: &Facts, i: usize, j: usize) -> Option<Plan> {
    let (p, c) = (&b.stms[i], &b.stms[j]);
    let (pw, _, plam) = as_map(p)?;
    let (cw, carrs, clam) = as_map(c)?;
    // Same attributes, same width; not both containing an `assert` (fusing would interleave
    // them).
    if (info[i].effect && info[j].effect)
        || !same_attrs(&p.attrs, &c.attrs)
        || c.attrs.has(crate::passes::fission::MARK)
        || !outer.after(&b.stms[..i]).equal(pw, cw)
    {
        return None;
    }
    // The consumer does not take an accumulator the producer updates (its updates would
    // interleave with the producer's), nor one of the same `with_acc` input.
    if p.pat
        .elems
        .iter()
        .any(|e| is_acc(e) && carrs.contains(&e.name))
        || certs(plam).iter().any(|c| certs(clam).contains(c))
    {
        return None;
    }
    let ys: Vec<&VName> = p.pat.elems.iter().map(|e| &e.name).collect();
    // The consumer reads the producer's arrays only as inputs (row params).
    let counts = use_counts(&c.exp);
    for y in &ys {
        let as_input = carrs.iter().filter(|a| a == y).count();
        if counts.get(*y).copied().unwrap_or(0) != as_input {
            return None;
        }
    }
    // The consumer consumes neither the producer's rows nor what the producer reads.
    if ys.iter().any(|y| info[j].consumes.contains(*y))
        || !info[j].consumes.is_disjoint(&info[i].reads)
        || !info[i].consumes.is_disjoint(&info[j].reads)
    {
        return None;
    }
    let between = i + 1..j;
    let late = between
        .clone()
        .all(|k| ys.iter().all(|y| !info[k].reads.contains(*y)) && can_cross(&info[i], &info[k]));
    let early = || {
        between
            .clone()
            .all(|k| info[j].reads.is_disjoint(&info[k].binds) && can_cross(&info[j], &info[k]))
    };
    let place = if late {
        Place::Consumer
    } else if early() {
        Place::Producer
    } else {
        return None;
    };
    // The producer's arrays that something else uses are returned too.
    let extra = ys
        .iter()
        .enumerate()
        .filter(|(_, y)| {
            info.iter()
                .enumerate()
                .any(|(k, inf)| k != i && k != j && inf.reads.contains(**y))
                || b.result.iter().any(|r| r.as_var() == Some(**y))
        })
        .map(|(r, _)| r)
        .collect();
    Some(Plan { i, j, place, extra })
}

/// Equal attributes, apart from [`crate::passes::fission::MARK`] (a map split off by fission
/// fuses into its consumers; its producer does not fuse into it, see [`plan`]).
fn same_attrs(a: &Attrs, b: &Attrs) -> bool {
    let keep = |x: &&String| x.as_str() != crate::passes::fission::MARK;
    a.0.iter().filter(keep).eq(b.0.iter().filter(keep))
}

/// Applies `plan` to `b`; returns where the fused statement is.
fn apply(b: &mut Body, plan: Plan) -> usize {
    let c = b.stms.remove(plan.j);
    let p = b.stms.remove(plan.i);
    let fused = fuse_pair(p, c, &plan.extra, plan.place);
    let at = match plan.place {
        Place::Producer => plan.i,
        Place::Consumer => plan.j - 1,
    };
    b.stms.insert(at, fused);
    at
}

/// The map computing producer `p` then consumer `c` in each iteration. It returns the
/// consumer's results, then the producer's results `extra`.
fn fuse_pair(p: Stm, c: Stm, extra: &[usize], place: Place) -> Stm {
    let (
        Exp::Soac(Soac::Map {
            w: pw,
            arrs: parrs,
            lam: plam,
        }),
        Exp::Soac(Soac::Map {
            w: cw,
            arrs: carrs,
            lam: clam,
        }),
    ) = (p.exp, c.exp)
    else {
        unreachable!("fuse_pair of non-maps")
    };
    let ys: Vec<VName> = p.pat.elems.iter().map(|e| e.name.clone()).collect();
    let mut subst: HashMap<VName, SubExp> = HashMap::new();
    let mut params = plam.params.clone();
    let mut arrs = parrs.clone();
    let mut consts = Vec::new();
    for (cp, ca) in clam.params.into_iter().zip(carrs) {
        if let Some(r) = ys.iter().position(|y| *y == ca) {
            // A row of the producer: its lambda's result.
            match &plam.body.result[r] {
                res @ SubExp::Var(_) => {
                    subst.insert(cp.name, res.clone());
                }
                res @ SubExp::Const(_) => consts.push(mk_stm(vec![cp], Exp::SubExp(res.clone()))),
            }
        } else if let Some(pp) = shared_param(&parrs, &plam.params, &cp, &ca) {
            // The same input as one of the producer's: its param.
            subst.insert(cp.name, SubExp::Var(pp));
        } else {
            params.push(cp);
            arrs.push(ca);
        }
    }
    let mut cbody = clam.body;
    let mut cret = clam.ret;
    substitute_lambda(&mut cbody, &mut cret, &subst);
    let mut stms = plam.body.stms;
    stms.extend(consts);
    stms.extend(cbody.stms);
    let mut result = cbody.result;
    let mut ret = cret;
    let mut pat = c.pat.elems;
    for &r in extra {
        result.push(plam.body.result[r].clone());
        ret.push(plam.ret[r].clone());
        pat.push(p.pat.elems[r].clone());
    }
    let (w, loc) = match place {
        Place::Producer => (pw, p.loc),
        Place::Consumer => (cw, c.loc),
    };
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
