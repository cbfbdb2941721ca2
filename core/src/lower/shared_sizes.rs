//! Sizes that both branches of an `if` compute the same way.
//!
//! `if i < i64.sum ks then replicate (i64.sum ks) 0 with [i] = 1 else replicate (i64.sum ks) 0`
//! lowers each `i64.sum ks` inside its own branch, so the two results' sizes are different
//! variables bound inside the branches and the `if`'s result has an existential size. Inside a
//! `map` that size cannot be lifted out (it is a result of the `if`, which depends on the
//! element), and the map would be irregular (Futhark's `tests/ad/flatmap0.fut`, `rev_vec`).
//!
//! Where the two sizes are computed by the same statements from values bound outside the `if`
//! (the same cheap scalar arithmetic and reductions over outer arrays that a `map` may lift out
//! of its function, see `soacs::hoist_sizes`), [`share_branch_sizes`] moves the first branch's
//! statements before the `if` and makes the second branch use them: the `if`'s result then has
//! that size, bound outside it.

use super::expr::bound_names;
use crate::ir::{BinOp as B, Body, Exp, Soac, Stm, SubExp, VName};
use crate::passes::traverse::{free_vars, map_bodies_in, walk_stm, Substitute, Visitor};
use std::collections::{HashMap, HashSet};

/// For each pair `(d1, d2)` of sizes of the two branches' results (`ts` binds `d1`, `fs` binds
/// `d2`) computed the same way, removes the statements computing `d1` from `ts` and those
/// computing `d2` from `fs`, and returns the former (to be emitted before the `if`) with the
/// substitution of the second branch's names by the first's (to be applied to `fs`, what is
/// left of it, and the types of its results).
pub(crate) fn share_branch_sizes(
    ts: &mut Vec<Stm>,
    fs: &mut Vec<Stm>,
    pairs: &[(SubExp, SubExp)],
) -> (Vec<Stm>, HashMap<VName, SubExp>) {
    let mut hoisted = vec![];
    let mut subst: HashMap<VName, SubExp> = HashMap::new();
    for (d1, d2) in pairs {
        let (Some(v1), Some(v2)) = (d1.as_var(), d2.as_var()) else {
            continue;
        };
        let none = HashSet::new();
        let (Some(s1), Some(s2)) = (size_slice(ts, &none, v1), size_slice(fs, &none, v2)) else {
            continue;
        };
        let c1 = canonical(ts, &s1, v1);
        if c1.is_none() || c1 != canonical(fs, &s2, v2) {
            continue;
        }
        // The slices are the same computation: their bindings correspond in order.
        for (i, j) in s1.iter().zip(&s2) {
            for (p1, p2) in ts[*i].pat.elems.iter().zip(&fs[*j].pat.elems) {
                subst.insert(p2.name.clone(), SubExp::Var(p1.name.clone()));
            }
        }
        hoisted.extend(take(ts, &s1));
        take(fs, &s2);
    }
    (hoisted, subst)
}

/// Applies the substitution of [`share_branch_sizes`] to the statements left in a branch.
pub(crate) fn substitute(stms: &mut [Stm], subst: &HashMap<VName, SubExp>) {
    let mut v = Substitute { map: subst };
    for s in stms {
        walk_stm(&mut v, s);
    }
}

/// The positions (ascending) of the statements of `stms` that compute `v`, where all of them
/// are cheap scalar arithmetic that cannot fail or reductions with such an operator over outer
/// arrays, and read nothing else bound in `stms` or named in `params`; `None` otherwise. These
/// statements may be moved out of `stms` (a branch, a `map`'s function) and run unconditionally.
pub(super) fn size_slice(stms: &[Stm], params: &HashSet<VName>, v: &VName) -> Option<Vec<usize>> {
    let mut inner = bound_names(stms);
    inner.extend(params.iter().cloned());
    let mut todo = vec![v.clone()];
    let mut seen: HashSet<VName> = HashSet::new();
    let mut slice: HashSet<usize> = HashSet::new();
    while let Some(x) = todo.pop() {
        if !seen.insert(x.clone()) {
            continue;
        }
        let i = stms
            .iter()
            .position(|s| s.pat.elems.iter().any(|p| p.name == x))?;
        let operands: Vec<&SubExp> = match &stms[i].exp {
            Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Conv(_, a) => vec![a],
            Exp::BinOp(op, a, b) if !may_fail(op) => vec![a, b],
            Exp::CmpOp(_, a, b) => vec![a, b],
            Exp::Soac(Soac::Reduce { .. }) if invariant_reduce(&stms[i], &inner) => vec![],
            _ => return None,
        };
        slice.insert(i);
        for o in operands {
            if let SubExp::Var(y) = o {
                if inner.contains(y) {
                    todo.push(y.clone());
                }
            }
        }
    }
    let mut slice: Vec<usize> = slice.into_iter().collect();
    slice.sort_unstable();
    Some(slice)
}

fn may_fail(op: &B) -> bool {
    matches!(
        op,
        B::Div(_) | B::Mod(_) | B::Quot(_) | B::Rem(_) | B::Pow(_)
    )
}

/// Whether `stm` is a `reduce` of arrays bound outside `inner` with an operator of plain
/// arithmetic that cannot fail (`i64.sum ks` for the size of `take (i64.sum ks) xs`): it can
/// move out of a branch or a lambda unchanged.
fn invariant_reduce(stm: &Stm, inner: &HashSet<VName>) -> bool {
    let Exp::Soac(Soac::Reduce { op, .. }) = &stm.exp else {
        return false;
    };
    let simple = op.lam.body.stms.iter().all(|s| match &s.exp {
        Exp::SubExp(_) | Exp::UnOp(..) | Exp::Conv(..) | Exp::CmpOp(..) => true,
        Exp::BinOp(o, _, _) => !may_fail(o),
        _ => false,
    });
    simple
        && free_vars(std::slice::from_ref(stm), &[])
            .iter()
            .all(|v| !inner.contains(v))
}

/// The statements `slice` of `stms` with every name they bind renamed canonically (in the order
/// of binding) and without source locations or attributes, and the canonical name of `v`: two
/// slices with equal canonical forms compute the same values from the same outer variables.
fn canonical(stms: &[Stm], slice: &[usize], v: &VName) -> Option<(Body, VName)> {
    struct Canon {
        map: HashMap<VName, VName>,
    }
    impl Visitor for Canon {
        fn use_name(&mut self, v: &mut VName) {
            if let Some(r) = self.map.get(v) {
                *v = r.clone();
            }
        }
        fn bind_name(&mut self, v: &mut VName) {
            let c = VName {
                id: self.map.len() as u32,
                base: "canon".into(),
            };
            self.map.insert(v.clone(), c.clone());
            *v = c;
        }
    }
    let mut body = Body {
        stms: slice.iter().map(|&i| stms[i].clone()).collect(),
        result: vec![],
    };
    let mut canon = Canon {
        map: HashMap::new(),
    };
    for s in &mut body.stms {
        walk_stm(&mut canon, s);
    }
    let strip = |b: &mut Body| {
        for s in &mut b.stms {
            s.loc = None;
            s.attrs = Default::default();
        }
    };
    map_bodies_in(&mut body, &mut |b| strip(b));
    let v = canon.map.get(v)?.clone();
    Some((body, v))
}

/// Removes the statements at `positions` (ascending) from `stms`, returning them in order.
pub(super) fn take(stms: &mut Vec<Stm>, positions: &[usize]) -> Vec<Stm> {
    let mut out = vec![];
    let mut kept = vec![];
    for (i, s) in stms.drain(..).enumerate() {
        if positions.binary_search(&i).is_ok() {
            out.push(s);
        } else {
            kept.push(s);
        }
    }
    *stms = kept;
    out
}
