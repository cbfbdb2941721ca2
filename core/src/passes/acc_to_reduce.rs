//! The accumulator-to-reduction rewrite (paper 000 §6.1; Futhark's `GenRedOpt` does the same on
//! GPU kernels).
//!
//! Reverse-mode AD of a map that reads a free array accumulates that array's adjoint with
//! `withacc` and `upd_acc` (atomic additions on a GPU). When the accumulation sits in a perfect
//! map nest and its index does not depend on one of the nest's parallel dimensions, every
//! element of the accumulated array receives the *sum* over that dimension: the dimension can
//! become an inner `reduce (+)` and the other dimensions a plain map producing the array.
//!
//! Recognised form (one input `k` of a `with_acc` at a time):
//!
//! ```text
//! let {.., d_k, ..} = with_acc({.., ([s_0..s_r-1], {d0}, +), ..}, \(.., acc, ..) ->
//!   .. map(w_1, {xs_1.., acc}, \(p_1.., a_1) ->           -- level 1
//!        .. map(w_2, {xs_2.., a_1}, \(p_2.., a_2) -> ..    -- level 2 ...
//!             code; let a' = upd_acc(a_K, [idx_0..idx_r-1], {v}) in {.., a', ..}
//! ```
//!
//! becomes, before the `with_acc` (which loses input `k`, and disappears with its last input):
//!
//! ```text
//! let d_k = map(s_0, iota s_0, \i_0 -> .. map(s_r-1, iota s_r-1, \i_r-1 ->
//!              let vs = map(w_j, iota w_j, \i_j -> params of all levels by indexing; code; v)
//!              let s = reduce(+, 0, vs)
//!              in d0[i_0..i_r-1] + s))
//! ```
//!
//! Conditions (each checked; otherwise the statement is left alone):
//! - the input has one array of scalars (the accumulator's shape is the array's full shape) and
//!   its operator is `+` (an `add` of the two params) with neutral element 0;
//! - the accumulator is used only by the chain of maps leading to the one `upd_acc`, each of which
//!   passes it along and returns it unchanged as its result (so the control flow leading to the
//!   update is the map nest itself: no `if` or loop around the update);
//! - every level's width and arrays are defined outside the `with_acc` or are rows of an outer
//!   level's params, and the code computing `v` uses only level params, names defined outside the
//!   `with_acc` and its own statements (so it can be re-executed in the new nest); it contains no
//!   accumulator operation;
//! - one level `j` (the innermost such one is chosen) is *invariant*: no index depends on its
//!   params; every index is the param of a distinct other level mapping `iota(w, 0, 1)` (so the
//!   index is the iteration number), the levels other than `j` are exactly those, and each one's
//!   width is syntactically the accumulator's extent in that position. Then every element is
//!   updated exactly once per iteration of `j`, none out of bounds, and the map nest computes
//!   exactly what the accumulator did (up to the order of the floating-point additions).
//!
//! Run after [`crate::ad::transform()`], before the final simplification, by [`crate::compile`].

use super::traverse::{mk_stm, uses_in_exp, walk_exp, walk_lambda, Visitor};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};
use std::collections::{HashMap, HashSet};

/// Rewrites every accumulation of the recognised form (see the module doc) into map/reduce nests.
pub fn acc_to_reduce(mut p: Program) -> Program {
    let mut ns = std::mem::take(&mut p.name_source);
    let iotas = collect_iotas(&p);
    for f in &mut p.funs {
        rewrite_in_body(&mut ns, &iotas, &mut f.body);
    }
    p.name_source = ns;
    p
}

/// Names bound to `iota(n, 0, 1)` anywhere in the program, with `n`.
fn collect_iotas(p: &Program) -> HashMap<VName, SubExp> {
    fn body(b: &Body, out: &mut HashMap<VName, SubExp>) {
        for s in &b.stms {
            if let Exp::Iota {
                n,
                start: SubExp::Const(st),
                stride: SubExp::Const(sd),
                ..
            } = &s.exp
            {
                if st.as_i128() == Some(0) && sd.as_i128() == Some(1) && s.pat.elems.len() == 1 {
                    out.insert(s.pat.elems[0].name.clone(), n.clone());
                }
            }
            let mut e = s.exp.clone();
            for nb in super::traverse::nested_bodies(&mut e) {
                body(nb, out);
            }
        }
    }
    let mut out = HashMap::new();
    for f in &p.funs {
        body(&f.body, &mut out);
    }
    out
}

/// Innermost first: nested bodies, then this body's `with_acc` statements.
fn rewrite_in_body(ns: &mut NameSource, iotas: &HashMap<VName, SubExp>, b: &mut Body) {
    for s in &mut b.stms {
        for nb in super::traverse::nested_bodies(&mut s.exp) {
            rewrite_in_body(ns, iotas, nb);
        }
    }
    let old = std::mem::take(&mut b.stms);
    let mut out = Vec::with_capacity(old.len());
    for mut s in old {
        if matches!(s.exp, Exp::WithAcc { .. }) {
            let mut k = 0;
            loop {
                let n_inputs = match &s.exp {
                    Exp::WithAcc { inputs, .. } => inputs.len(),
                    _ => 0,
                };
                if k >= n_inputs {
                    break;
                }
                match try_split(ns, iotas, &s, k) {
                    Some((new_stms, rest)) => {
                        out.extend(new_stms);
                        s = rest;
                    }
                    None => k += 1,
                }
            }
            // A with_acc with no inputs left: its lambda's body, inlined.
            if let Exp::WithAcc { inputs, lam } = &s.exp {
                if inputs.is_empty() {
                    out.extend(lam.body.stms.iter().cloned());
                    for (pe, r) in s.pat.elems.iter().zip(&lam.body.result) {
                        out.push(mk_stm(vec![pe.clone()], Exp::SubExp(r.clone())));
                    }
                    continue;
                }
            }
        }
        out.push(s);
    }
    b.stms = out;
}

/// One level of the map nest: its width, non-accumulator arrays and params.
struct Level {
    w: SubExp,
    arrs: Vec<VName>,
    params: Vec<Param>,
}

/// Where the accumulator flows in one body: the statement using it and the result position of
/// the updated accumulator.
struct Hop {
    stm: usize,
    /// Position of the accumulator among the map's arrays (unused for the `upd_acc`).
    pos: usize,
    /// Position of the updated accumulator among the body's results.
    res: usize,
}

/// Follows accumulator `acc` through `body`: returns the chain of hops (outermost first) and the
/// levels of maps crossed, ending at an `upd_acc`.
fn follow(body: &Body, acc: &VName, hops: &mut Vec<Hop>, levels: &mut Vec<Level>) -> Option<()> {
    let users: Vec<usize> = (0..body.stms.len())
        .filter(|&i| uses_in_exp(&body.stms[i].exp).contains(acc))
        .collect();
    if users.len() != 1 || body.result.iter().any(|r| r.as_var() == Some(acc)) {
        return None;
    }
    let i = users[0];
    let s = &body.stms[i];
    let out_pos = |name: &VName| -> Option<usize> {
        let rs: Vec<usize> = (0..body.result.len())
            .filter(|&r| body.result[r].as_var() == Some(name))
            .collect();
        let used_later = body.stms.iter().any(|t| uses_in_exp(&t.exp).contains(name));
        (rs.len() == 1 && !used_later).then(|| rs[0])
    };
    match &s.exp {
        Exp::UpdAcc { acc: a, vals, .. } if a == acc && vals.len() == 1 => {
            let res = out_pos(&s.pat.elems.first()?.name)?;
            hops.push(Hop {
                stm: i,
                pos: 0,
                res,
            });
            Some(())
        }
        Exp::Soac(Soac::Map { w, arrs, lam }) => {
            let qs: Vec<usize> = (0..arrs.len()).filter(|&q| &arrs[q] == acc).collect();
            if qs.len() != 1 || lam.params.len() != arrs.len() {
                return None;
            }
            let q = qs[0];
            let inner = &lam.params[q].name;
            let at = hops.len();
            hops.push(Hop {
                stm: i,
                pos: q,
                res: 0,
            });
            levels.push(Level {
                w: w.clone(),
                arrs: arrs
                    .iter()
                    .enumerate()
                    .filter(|(x, _)| *x != q)
                    .map(|(_, a)| a.clone())
                    .collect(),
                params: lam
                    .params
                    .iter()
                    .enumerate()
                    .filter(|(x, _)| *x != q)
                    .map(|(_, p)| p.clone())
                    .collect(),
            });
            follow(&lam.body, inner, hops, levels)?;
            // The lambda returns the accumulator as its result `r`: the map's result `r`.
            let r = hops[at + 1].res;
            hops[at].res = out_pos(&s.pat.elems.get(r)?.name)?;
            Some(())
        }
        _ => None,
    }
}

/// Every name bound anywhere inside `lam` (params included).
fn bound_in_lambda(lam: &Lambda) -> HashSet<VName> {
    struct B(HashSet<VName>);
    impl Visitor for B {
        fn bind_name(&mut self, v: &mut VName) {
            self.0.insert(v.clone());
        }
    }
    let mut b = B(HashSet::new());
    walk_lambda(&mut b, &mut lam.clone());
    b.0
}

/// Whether `op` is `\a b -> a + b` (either order) with neutral element zero.
fn is_plus(op: &Operator) -> Option<PrimType> {
    let l = &op.lam;
    if l.params.len() != 2 || l.body.stms.len() != 1 || op.neutral.len() != 1 {
        return None;
    }
    let s = &l.body.stms[0];
    let Exp::BinOp(BinOp::Add(t), SubExp::Var(x), SubExp::Var(y)) = &s.exp else {
        return None;
    };
    let (a, b) = (&l.params[0].name, &l.params[1].name);
    let ok_args = (x == a && y == b) || (x == b && y == a);
    let r = s.pat.elems.first()?;
    let ok_res = l.body.result.len() == 1 && l.body.result[0].as_var() == Some(&r.name);
    let zero = match op.neutral[0] {
        SubExp::Const(v) => v == PrimValue::zero(*t),
        _ => false,
    };
    (ok_args && ok_res && zero).then_some(*t)
}

/// Tries the rewrite of input `k` of the `with_acc` statement `s`: the statements computing
/// input `k`'s result, and the `with_acc` without input `k`.
fn try_split(
    ns: &mut NameSource,
    iotas: &HashMap<VName, SubExp>,
    s: &Stm,
    k: usize,
) -> Option<(Vec<Stm>, Stm)> {
    let Exp::WithAcc { inputs, lam } = &s.exp else {
        return None;
    };
    let input = &inputs[k];
    if input.arrs.len() != 1 || lam.params.len() != inputs.len() {
        return None;
    }
    let elem = is_plus(input.op.as_ref()?)?;
    let pat_pos: usize = inputs[..k].iter().map(|i| i.arrs.len()).sum();
    let out = s.pat.elems.get(pat_pos)?.clone();
    // Scalars only: the accumulator's shape is the whole array's.
    if out.ty.shape() != input.shape.as_slice() || out.ty.elem() != Some(elem) {
        return None;
    }
    let acc = &lam.params[k].name;
    let mut hops = Vec::new();
    let mut levels = Vec::new();
    follow(&lam.body, acc, &mut hops, &mut levels)?;
    if hops.first()?.res != k || levels.is_empty() {
        return None;
    }
    // The innermost body and the update.
    let mut inner = &lam.body;
    for h in &hops[..hops.len() - 1] {
        let Exp::Soac(Soac::Map { lam, .. }) = &inner.stms[h.stm].exp else {
            return None;
        };
        inner = &lam.body;
    }
    let upd_at = hops.last()?.stm;
    let Exp::UpdAcc { idx, vals, .. } = &inner.stms[upd_at].exp else {
        return None;
    };
    let v = vals[0].clone();
    let bound_inside = bound_in_lambda(lam);
    let level_of: HashMap<VName, usize> = levels
        .iter()
        .enumerate()
        .flat_map(|(l, lv)| lv.params.iter().map(move |p| (p.name.clone(), l)))
        .collect();
    // Widths and arrays: outside the with_acc, or params of an outer level.
    for (l, lv) in levels.iter().enumerate() {
        if let SubExp::Var(w) = &lv.w {
            if bound_inside.contains(w) {
                return None;
            }
        }
        for a in &lv.arrs {
            if bound_inside.contains(a) && level_of.get(a).is_none_or(|&m| m >= l) {
                return None;
            }
        }
    }
    // The slice of the innermost body that computes `v`.
    let mut needed: HashSet<VName> = v.as_var().into_iter().cloned().collect();
    let mut slice = vec![false; upd_at];
    for i in (0..upd_at).rev() {
        let st = &inner.stms[i];
        if st.pat.elems.iter().any(|p| needed.contains(&p.name)) {
            if matches!(st.exp, Exp::UpdAcc { .. } | Exp::WithAcc { .. })
                || st
                    .pat
                    .elems
                    .iter()
                    .any(|p| matches!(p.ty, TypeBase::Acc { .. }))
            {
                return None;
            }
            slice[i] = true;
            needed.extend(uses_in_exp(&st.exp));
        }
    }
    let slice_stms: Vec<&Stm> = (0..upd_at)
        .filter(|&i| slice[i])
        .map(|i| &inner.stms[i])
        .collect();
    let mut slice_bound: HashSet<VName> = HashSet::new();
    for st in &slice_stms {
        let mut e = st.exp.clone();
        struct B<'a>(&'a mut HashSet<VName>);
        impl Visitor for B<'_> {
            fn bind_name(&mut self, v: &mut VName) {
                self.0.insert(v.clone());
            }
        }
        walk_exp(&mut B(&mut slice_bound), &mut e);
        slice_bound.extend(st.pat.elems.iter().map(|p| p.name.clone()));
    }
    for u in &needed {
        if bound_inside.contains(u) && !level_of.contains_key(u) && !slice_bound.contains(u) {
            return None;
        }
    }
    // Each index is the iteration number of a distinct level; the remaining level is `j`.
    let mut idx_levels = Vec::new();
    for d in idx {
        let SubExp::Var(x) = d else { return None };
        let &l = level_of.get(x)?;
        let q = levels[l].params.iter().position(|p| &p.name == x)?;
        let n = iotas.get(&levels[l].arrs[q])?;
        if n != &levels[l].w || idx_levels.contains(&l) {
            return None;
        }
        idx_levels.push(l);
    }
    if idx_levels.len() + 1 != levels.len() {
        return None;
    }
    let j = (0..levels.len()).find(|l| !idx_levels.contains(l))?;
    for (d, &l) in idx_levels.iter().enumerate() {
        if levels[l].w != input.shape[d] {
            return None;
        }
    }

    // Build the new nest. Fresh iteration indices, one per level.
    let ity = Type::Prim(PrimType::I64);
    let iters: Vec<VName> = (0..levels.len()).map(|_| ns.fresh("it")).collect();
    let mut pre = Vec::new();
    let iota_of = |ns: &mut NameSource, pre: &mut Vec<Stm>, w: &SubExp| -> VName {
        let p = Param {
            name: ns.fresh("iota"),
            ty: Type::array(PrimType::I64, vec![w.clone()]),
        };
        let n = p.name.clone();
        pre.push(mk_stm(
            vec![p],
            Exp::Iota {
                n: w.clone(),
                start: SubExp::i64(0),
                stride: SubExp::i64(1),
                it: IntType::I64,
            },
        ));
        n
    };
    // The reduce's map lambda: every level's params by indexing, then the slice, renamed.
    let mut ren: HashMap<VName, VName> = HashMap::new();
    let mut lam_stms = Vec::new();
    // A param that is a row of an outer level's param is indexed in the outer level's array
    // directly (`a[i, j]`, not `let r = a[i]` then `r[j]`): no intermediate row.
    let mut indexed: HashMap<VName, (VName, Vec<DimIndex>)> = HashMap::new();
    for (l, lv) in levels.iter().enumerate() {
        for (p, a) in lv.params.iter().zip(&lv.arrs) {
            let np = ns.fresh_like(&p.name);
            let src = ren.get(a).cloned().unwrap_or_else(|| a.clone());
            let mut ty = p.ty.clone();
            rename_type(&ren, &mut ty);
            let (arr, mut idx) = indexed
                .get(&src)
                .cloned()
                .unwrap_or_else(|| (src.clone(), vec![]));
            idx.push(DimIndex::Fix(SubExp::Var(iters[l].clone())));
            indexed.insert(np.clone(), (arr.clone(), idx.clone()));
            lam_stms.push(mk_stm(
                vec![Param {
                    name: np.clone(),
                    ty,
                }],
                Exp::Index(arr, idx),
            ));
            ren.insert(p.name.clone(), np);
        }
    }
    for st in &slice_stms {
        let mut st = (*st).clone();
        fresh_bindings(ns, &mut ren, &mut st);
        lam_stms.push(st);
    }
    let v_new = match &v {
        SubExp::Var(x) => SubExp::Var(ren.get(x).cloned().unwrap_or_else(|| x.clone())),
        c => c.clone(),
    };
    let et = Type::Prim(elem);
    let red_lam = Lambda {
        params: vec![Param {
            name: iters[j].clone(),
            ty: ity.clone(),
        }],
        body: Body {
            stms: lam_stms,
            result: vec![v_new],
        },
        ret: vec![et.clone()],
    };
    let iota_j = iota_of(ns, &mut pre, &levels[j].w);
    let idx_iotas: Vec<VName> = input
        .shape
        .iter()
        .map(|w| iota_of(ns, &mut pre, w))
        .collect();
    let wj = levels[j].w.clone();
    let vs = ns.fresh("red_in");
    let sum = ns.fresh("red_sum");
    let old = ns.fresh("acc_old");
    let new = ns.fresh("acc_new");
    let mut op = input.op.clone()?;
    let mut opren = HashMap::new();
    for st in &mut op.lam.body.stms {
        fresh_bindings(ns, &mut opren, st);
    }
    for p in &mut op.lam.params {
        let np = ns.fresh_like(&p.name);
        opren.insert(p.name.clone(), np.clone());
        p.name = np;
    }
    rename_lambda_uses(&opren, &mut op.lam);
    let d0 = input.arrs[0].clone();
    let mut body = Body {
        stms: vec![
            mk_stm(
                vec![Param {
                    name: vs.clone(),
                    ty: Type::array(elem, vec![wj.clone()]),
                }],
                Exp::Soac(Soac::Map {
                    w: wj.clone(),
                    arrs: vec![iota_j],
                    lam: red_lam,
                }),
            ),
            mk_stm(
                vec![Param {
                    name: sum.clone(),
                    ty: et.clone(),
                }],
                Exp::Soac(Soac::Reduce {
                    w: wj,
                    arrs: vec![vs],
                    op,
                }),
            ),
            // In bounds by construction (the iterators range over the accumulator's shape):
            // `unsafe`, which also lets index folding read a `replicate`d array's value.
            Stm {
                attrs: Attrs(vec!["unsafe".into()]),
                ..mk_stm(
                    vec![Param {
                        name: old.clone(),
                        ty: et.clone(),
                    }],
                    Exp::Index(
                        d0,
                        idx_levels
                            .iter()
                            .map(|&l| DimIndex::Fix(SubExp::Var(iters[l].clone())))
                            .collect(),
                    ),
                )
            },
            mk_stm(
                vec![Param {
                    name: new.clone(),
                    ty: et.clone(),
                }],
                Exp::BinOp(BinOp::Add(elem), SubExp::Var(old), SubExp::Var(sum)),
            ),
        ],
        result: vec![SubExp::Var(new)],
    };
    let r = input.shape.len();
    let mut ret_ty = et;
    for d in (0..r).rev() {
        let l = idx_levels[d];
        let w = input.shape[d].clone();
        let res_ty = ret_ty.array_of(w.clone());
        let res = if d == 0 {
            out.name.clone()
        } else {
            ns.fresh("acc_rows")
        };
        let m = mk_stm(
            vec![Param {
                name: res.clone(),
                ty: res_ty.clone(),
            }],
            Exp::Soac(Soac::Map {
                w,
                arrs: vec![idx_iotas[d].clone()],
                lam: Lambda {
                    params: vec![Param {
                        name: iters[l].clone(),
                        ty: ity.clone(),
                    }],
                    body,
                    ret: vec![ret_ty],
                },
            }),
        );
        if d == 0 {
            pre.push(m);
            break;
        }
        body = Body {
            stms: vec![m],
            result: vec![SubExp::Var(res)],
        };
        ret_ty = res_ty;
    }

    // The with_acc without input k.
    let mut rest = s.clone();
    let Exp::WithAcc { inputs, lam } = &mut rest.exp else {
        return None;
    };
    inputs.remove(k);
    lam.params.remove(k);
    lam.ret.remove(k);
    rest.pat.elems.remove(pat_pos);
    remove_hops(&mut lam.body, &hops);
    Some((pre, rest))
}

/// Removes the accumulator from the chain of maps (and the update) described by `hops`.
fn remove_hops(body: &mut Body, hops: &[Hop]) {
    let h = &hops[0];
    body.result.remove(h.res);
    if hops.len() == 1 {
        body.stms.remove(h.stm);
        return;
    }
    let r = hops[1].res;
    let st = &mut body.stms[h.stm];
    st.pat.elems.remove(r);
    if let Exp::Soac(Soac::Map { arrs, lam, .. }) = &mut st.exp {
        arrs.remove(h.pos);
        lam.params.remove(h.pos);
        lam.ret.remove(r);
        remove_hops(&mut lam.body, &hops[1..]);
    }
}

/// Gives every name bound by `st` (its pattern and inside it) a fresh name, recording it in
/// `ren`, and applies `ren` to its uses.
fn fresh_bindings(ns: &mut NameSource, ren: &mut HashMap<VName, VName>, st: &mut Stm) {
    struct F<'a> {
        ns: &'a mut NameSource,
        ren: &'a mut HashMap<VName, VName>,
    }
    impl Visitor for F<'_> {
        fn use_name(&mut self, v: &mut VName) {
            if let Some(r) = self.ren.get(v) {
                *v = r.clone();
            }
        }
        fn bind_name(&mut self, v: &mut VName) {
            let n = self.ns.fresh_like(v);
            self.ren.insert(v.clone(), n.clone());
            *v = n;
        }
    }
    let mut f = F { ns, ren };
    walk_exp(&mut f, &mut st.exp);
    for p in &mut st.pat.elems {
        super::traverse::walk_param(&mut f, p);
    }
}

fn rename_type(ren: &HashMap<VName, VName>, t: &mut Type) {
    super::traverse::walk_type(&mut super::traverse::Rename { map: ren }, t);
}

fn rename_lambda_uses(ren: &HashMap<VName, VName>, l: &mut Lambda) {
    walk_lambda(&mut super::traverse::Rename { map: ren }, l);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::run_entry;
    use crate::ir::builder::*;
    use crate::ir::check::check_program;
    use crate::value::{ArrayValue, Buffer, Value};

    fn count_with_acc(b: &Body) -> usize {
        b.stms
            .iter()
            .map(|s| {
                let own = usize::from(matches!(s.exp, Exp::WithAcc { .. }));
                let mut e = s.exp.clone();
                own + super::super::traverse::nested_bodies(&mut e)
                    .into_iter()
                    .map(|nb| count_with_acc(nb))
                    .sum::<usize>()
            })
            .sum()
    }

    /// `main [n][m] (a: [n][m]f64) : [m]f64`: a with_acc over `zeros m` whose lambda is
    /// `map (\row -> map (\x k -> upd acc [idx] (x*x + c)) row (iota m)) (zip a (iota n))`,
    /// with `idx = k` (invariant to the outer dimension: the rewrite applies) or `idx = i + k`
    /// (depends on both: it must not).
    fn prog(both: bool) -> Program {
        let f64t = PrimType::F64;
        let mut ns = NameSource::default();
        let n = ns.fresh("n");
        let m = ns.fresh("m");
        let (nv, mv) = (var(&n), var(&m));
        let a_t = arr(f64t, vec![nv.clone(), mv.clone()]);
        let out_t = arr(f64t, vec![mv.clone()]);
        let main = fun_sized(
            &mut ns,
            "main",
            true,
            vec![n.clone(), m.clone()],
            |_, _| vec![("a".into(), a_t.clone()), ("c".into(), Type::Prim(f64t))],
            vec![out_t.to_ext()],
            |b, ps| {
                let (a, c) = (ps[2].clone(), ps[3].clone());
                let z = b.bind(
                    "zeros",
                    out_t.clone(),
                    Exp::Replicate {
                        shape: vec![mv.clone()],
                        value: f64c(0.0),
                    },
                );
                let iota = |b: &mut Builder, w: &SubExp| {
                    b.bind(
                        "iota",
                        arr(PrimType::I64, vec![w.clone()]),
                        Exp::Iota {
                            n: w.clone(),
                            start: i64c(0),
                            stride: i64c(1),
                            it: IntType::I64,
                        },
                    )
                };
                let io_n = iota(b, &nv);
                let io_m = iota(b, &mv);
                let op = binop_operator(b.ns, BinOp::Add(f64t), f64c(0.0), true);
                let cert = b.fresh("acc_cert");
                let acc_t = Type::Acc {
                    cert: cert.clone(),
                    shape: vec![mv.clone()],
                    elems: vec![Type::Prim(f64t)],
                };
                let row_t = arr(f64t, vec![mv.clone()]);
                let mut lb = Builder::new(b.ns);
                let outer = lb.lambda(
                    &[
                        ("row", row_t),
                        ("i", Type::Prim(PrimType::I64)),
                        ("acc1", acc_t.clone()),
                    ],
                    vec![acc_t.clone()],
                    |b, ps| {
                        let (row, i, acc1) = (ps[0].clone(), ps[1].clone(), ps[2].clone());
                        let inner = b.lambda(
                            &[
                                ("x", Type::Prim(f64t)),
                                ("k", Type::Prim(PrimType::I64)),
                                ("acc2", acc_t.clone()),
                            ],
                            vec![acc_t.clone()],
                            |b, ps| {
                                let sq = b.binop(BinOp::Mul(f64t), var(&ps[0]), var(&ps[0]));
                                let v = b.binop(BinOp::Add(f64t), var(&sq), var(&c));
                                let idx = if both {
                                    var(&b.binop(BinOp::Add(PrimType::I64), var(&i), var(&ps[1])))
                                } else {
                                    var(&ps[1])
                                };
                                let r = b.bind(
                                    "acc3",
                                    acc_t.clone(),
                                    Exp::UpdAcc {
                                        acc: ps[2].clone(),
                                        idx: vec![idx],
                                        vals: vec![var(&v)],
                                    },
                                );
                                vec![var(&r)]
                            },
                        );
                        let r = b.bind(
                            "acc4",
                            acc_t.clone(),
                            Exp::Soac(Soac::Map {
                                w: mv.clone(),
                                arrs: vec![row, io_m.clone(), acc1],
                                lam: inner,
                            }),
                        );
                        vec![var(&r)]
                    },
                );
                let accp = Param {
                    name: cert.clone(),
                    ty: acc_t.clone(),
                };
                let r = lb.bind(
                    "acc5",
                    acc_t.clone(),
                    Exp::Soac(Soac::Map {
                        w: nv.clone(),
                        arrs: vec![a, io_n, cert.clone()],
                        lam: outer,
                    }),
                );
                let body = lb.finish(vec![var(&r)]);
                let res = b.bind(
                    "res",
                    out_t.clone(),
                    Exp::WithAcc {
                        inputs: vec![AccInput {
                            shape: vec![mv.clone()],
                            arrs: vec![z],
                            op: Some(op),
                        }],
                        lam: Lambda {
                            params: vec![accp],
                            body,
                            ret: vec![acc_t.clone()],
                        },
                    },
                );
                vec![var(&res)]
            },
        );
        program(ns, vec![main])
    }

    /// A deterministic pseudo-random matrix.
    fn input(n: usize, m: usize, seed: u64) -> Value {
        let mut x = seed;
        let data = (0..n * m)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
            })
            .collect();
        Value::Array(ArrayValue::new(vec![n, m], Buffer::F64(data)))
    }

    fn close(a: &[Value], b: &[Value]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| match (x, y) {
                (Value::Array(x), Value::Array(y)) => {
                    x.shape == y.shape
                        && match (&x.data, &y.data) {
                            (Buffer::F64(p), Buffer::F64(q)) => p
                                .iter()
                                .zip(q)
                                .all(|(u, v)| (u - v).abs() <= 1e-9 * (1.0 + u.abs())),
                            _ => false,
                        }
                }
                _ => x == y,
            })
    }

    #[test]
    fn invariant_dimension_becomes_a_reduce() {
        let p = prog(false);
        check_program(&p).unwrap();
        assert_eq!(count_with_acc(&p.funs[0].body), 1);
        let q = acc_to_reduce(p.clone());
        check_program(&q).unwrap();
        assert_eq!(count_with_acc(&q.funs[0].body), 0, "with_acc left");
        let text = crate::ir::print::program_to_string(&q);
        assert!(!text.contains("upd_acc"), "{text}");
        assert!(text.contains("reduce"), "{text}");
        let qs = crate::passes::simplify(q);
        check_program(&qs).unwrap();
        for (k, &(n, m)) in [(0, 3), (1, 1), (3, 4), (7, 5), (4, 0)].iter().enumerate() {
            let args = vec![
                input(n, m, k as u64 + 1),
                Value::Scalar(PrimValue::F64(0.5)),
            ];
            let before = run_entry(&p, "main", args.clone()).unwrap();
            let after = run_entry(&qs, "main", args.clone()).unwrap();
            assert!(close(&before, &after), "{n}x{m}: {before:?} vs {after:?}");
            // The expected sums, directly.
            let Value::Array(a) = &args[0] else { panic!() };
            let Buffer::F64(d) = &a.data else { panic!() };
            let want: Vec<f64> = (0..m)
                .map(|kk| (0..n).map(|i| d[i * m + kk] * d[i * m + kk] + 0.5).sum())
                .collect();
            let want = vec![Value::Array(ArrayValue::new(vec![m], Buffer::F64(want)))];
            assert!(close(&after, &want), "{after:?} vs {want:?}");
        }
    }

    #[test]
    fn index_depending_on_every_dimension_is_left_alone() {
        let p = prog(true);
        check_program(&p).unwrap();
        let q = acc_to_reduce(p.clone());
        assert_eq!(q, p);
    }
}
