//! Accumulators to histograms: a `with_acc` whose accumulators are only updated by `map`s, each
//! iteration doing a fixed sequence of `upd_acc`s at the top of its lambda, becomes those maps
//! computing the updates' indices and values as extra results, followed by one
//! `reduce_by_index` per update into the accumulated arrays:
//!
//! ```text
//! let ys = with_acc({([n], {zs}, op)}, \acc ->
//!   map(w, {xs, acc}, \x a -> let a' = upd_acc(a, [i x], {v x}) in {a'}))
//! ==>
//! let {is, vs} = map(w, {xs}, \x -> {i x, v x})
//! let ys = reduce_by_index(w, {zs}, op, is, {vs})
//! ```
//!
//! Both mean "combine every update into its element with the operator, in some order" and both
//! ignore out-of-range indices; an accumulator over several dimensions is updated through its
//! flattened arrays, an index that is out of range in any dimension becoming -1. This is how
//! backends without accumulators of their own (the Vulkan backend) run the adjoints that
//! reverse-mode AD makes of maps reading free arrays. A `with_acc` that does anything else with
//! its accumulators (updates at host level, in loops, in branches, in nested maps, rows that
//! are arrays, inputs without an operator) is left as it is.

use super::traverse::{fresh_lambda, mk_stm, nested_bodies, uses_in_exp};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};
use std::collections::HashMap;

/// Rewrites every `with_acc` of the supported form, innermost first.
pub fn acc_to_hist(mut p: Program) -> Program {
    let mut ns = std::mem::take(&mut p.name_source);
    for f in &mut p.funs {
        body(&mut ns, &mut f.body);
    }
    p.name_source = ns;
    p
}

fn body(ns: &mut NameSource, b: &mut Body) {
    let mut out = Vec::with_capacity(b.stms.len());
    for mut s in std::mem::take(&mut b.stms) {
        for nb in nested_bodies(&mut s.exp) {
            body(ns, nb);
        }
        match rewrite(ns, &s) {
            Some(stms) => out.extend(stms),
            None => out.push(s),
        }
    }
    b.stms = out;
}

const I64: PrimType = PrimType::Int(IntType::I64);

/// One accumulator of the `with_acc`.
struct Acc<'a> {
    shape: &'a [SubExp],
    /// Element types of its arrays.
    elems: Vec<PrimType>,
    op: &'a Operator,
    /// Its arrays now (flattened when the shape has several dimensions).
    cur: Vec<VName>,
}

/// The statements replacing `s`, when it is a `with_acc` of the supported form.
fn rewrite(ns: &mut NameSource, s: &Stm) -> Option<Vec<Stm>> {
    let Exp::WithAcc { inputs, lam } = &s.exp else {
        return None;
    };
    let k = inputs.len();
    if lam.params.len() != k || lam.body.result.len() < k {
        return None;
    }
    let mut out = Vec::new();
    // Flat length of every accumulator with several dimensions.
    let mut accs = Vec::with_capacity(k);
    let mut flat_len = Vec::with_capacity(k);
    for (inp, p) in inputs.iter().zip(&lam.params) {
        let Type::Acc { elems, .. } = &p.ty else {
            return None;
        };
        let elems: Option<Vec<PrimType>> = elems
            .iter()
            .map(|t| match t {
                Type::Prim(e) => Some(*e),
                _ => None,
            })
            .collect();
        let elems = elems?;
        let op = inp.op.as_ref()?;
        if elems.len() != inp.arrs.len() || inp.shape.is_empty() {
            return None;
        }
        flat_len.push(None);
        accs.push(Acc {
            shape: &inp.shape,
            elems,
            op,
            cur: inp.arrs.clone(),
        });
    }
    let info: Vec<AccInfo> = accs
        .iter()
        .map(|a| AccInfo {
            shape: a.shape.to_vec(),
            elems: a.elems.clone(),
            neutral: a.op.neutral.clone(),
        })
        .collect();
    // Which accumulator each accumulator variable of the body is.
    let mut which: HashMap<VName, usize> = lam
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.clone(), i))
        .collect();
    let mut body_stms = Vec::new();
    for t in &lam.body.stms {
        let uses = uses_in_exp(&t.exp);
        let used: Vec<usize> = uses.iter().filter_map(|v| which.get(v).copied()).collect();
        if used.is_empty() {
            if t.pat.elems.iter().any(|p| matches!(p.ty, Type::Acc { .. })) {
                return None;
            }
            body_stms.push(t.clone());
            continue;
        }
        let Exp::Soac(Soac::Map { w, arrs, lam: ml }) = &t.exp else {
            return None;
        };
        let m = map_updates(ns, arrs, ml, &which, &info)?;
        // The map without accumulators, with the updates as extra results.
        let mut pat = Vec::new();
        if t.pat.elems.len() != m.keep_result.len() {
            return None;
        }
        for (j, pe) in t.pat.elems.iter().enumerate() {
            if m.keep_result[j] {
                pat.push(pe.clone());
            } else {
                let Type::Acc { .. } = pe.ty else {
                    return None;
                };
                // The accumulator that the map returns at this position.
                which.insert(pe.name.clone(), m.result_acc[j]?);
            }
        }
        let mut upd_arrays = Vec::new();
        for u in &m.updates {
            let is = ns.fresh("acc_inds");
            pat.push(Param {
                name: is.clone(),
                ty: Type::Array {
                    elem: I64,
                    shape: vec![w.clone()],
                },
            });
            let mut vs = Vec::new();
            for &e in &accs[u.acc].elems {
                let v = ns.fresh("acc_vals");
                pat.push(Param {
                    name: v.clone(),
                    ty: Type::Array {
                        elem: e,
                        shape: vec![w.clone()],
                    },
                });
                vs.push(v);
            }
            upd_arrays.push((u.acc, is, vs));
        }
        let mut ms = t.clone();
        ms.pat = Pat { elems: pat };
        ms.exp = Exp::Soac(Soac::Map {
            w: w.clone(),
            arrs: m.arrs,
            lam: m.lam,
        });
        body_stms.push(ms);
        // One reduce_by_index per update.
        for (a, is, vs) in upd_arrays {
            if accs[a].shape.len() > 1 && flat_len[a].is_none() {
                flatten(ns, &mut accs[a], &mut flat_len[a], &mut out);
            }
            let len = flat_len[a]
                .clone()
                .unwrap_or_else(|| accs[a].shape[0].clone());
            let dest = std::mem::take(&mut accs[a].cur);
            let mut res = Vec::new();
            for (d, &e) in dest.iter().zip(&accs[a].elems) {
                res.push(Param {
                    name: ns.fresh_like(d),
                    ty: Type::Array {
                        elem: e,
                        shape: vec![len.clone()],
                    },
                });
            }
            accs[a].cur = res.iter().map(|p| p.name.clone()).collect();
            let op = Operator {
                lam: fresh_lambda(ns, &accs[a].op.lam),
                neutral: accs[a].op.neutral.clone(),
                commutative: accs[a].op.commutative,
            };
            let mut hs = mk_stm(
                res,
                Exp::Soac(Soac::Hist {
                    w: w.clone(),
                    dest,
                    op,
                    inds: is,
                    vals: vs,
                }),
            );
            hs.loc = t.loc.clone();
            body_stms.push(hs);
        }
    }
    // The body's results: the accumulators in input order, then the extra results.
    for (i, r) in lam.body.result.iter().take(k).enumerate() {
        match r {
            SubExp::Var(v) if which.get(v) == Some(&i) => {}
            _ => return None,
        }
    }
    // The with_acc's results: each input's arrays (reshaped back), then the extras.
    let mut pi = 0;
    let mut tail = Vec::new();
    for a in &accs {
        for (c, e) in a.cur.iter().zip(&a.elems) {
            let pe = s.pat.elems.get(pi)?.clone();
            pi += 1;
            let exp = if a.shape.len() > 1 {
                Exp::Reshape(a.shape.to_vec(), c.clone())
            } else {
                Exp::SubExp(SubExp::Var(c.clone()))
            };
            if pe.ty.elem() != Some(*e) {
                return None;
            }
            tail.push(mk_stm(vec![pe], exp));
        }
    }
    for r in &lam.body.result[k..] {
        let pe = s.pat.elems.get(pi)?.clone();
        pi += 1;
        tail.push(mk_stm(vec![pe], Exp::SubExp(r.clone())));
    }
    if pi != s.pat.elems.len() {
        return None;
    }
    out.extend(body_stms);
    out.extend(tail);
    for t in &mut out {
        if t.loc.is_none() {
            t.loc = s.loc.clone();
        }
    }
    Some(out)
}

/// Reshapes the arrays of a multi-dimensional accumulator to one dimension.
fn flatten(ns: &mut NameSource, a: &mut Acc<'_>, flat: &mut Option<SubExp>, out: &mut Vec<Stm>) {
    let mut len = a.shape[0].clone();
    for d in &a.shape[1..] {
        let n = ns.fresh("acc_len");
        out.push(mk_stm(
            vec![Param {
                name: n.clone(),
                ty: Type::Prim(I64),
            }],
            Exp::BinOp(BinOp::Mul(I64), len, d.clone()),
        ));
        len = SubExp::Var(n);
    }
    let mut cur = Vec::new();
    for (c, &e) in a.cur.iter().zip(&a.elems) {
        let f = ns.fresh_like(c);
        out.push(mk_stm(
            vec![Param {
                name: f.clone(),
                ty: Type::Array {
                    elem: e,
                    shape: vec![len.clone()],
                },
            }],
            Exp::Reshape(vec![len.clone()], c.clone()),
        ));
        cur.push(f);
    }
    a.cur = cur;
    *flat = Some(len);
}

/// One `upd_acc` of a map's lambda: the accumulator, the flat index and the values.
struct Update {
    acc: usize,
    index: SubExp,
    vals: Vec<SubExp>,
}

/// What the rewrite needs to know of each accumulator.
struct AccInfo {
    shape: Vec<SubExp>,
    elems: Vec<PrimType>,
    neutral: Vec<SubExp>,
}

/// A map with its accumulators taken out.
struct MapUpdates {
    arrs: Vec<VName>,
    lam: Lambda,
    updates: Vec<Update>,
    /// Per result of the original map: kept (not an accumulator).
    keep_result: Vec<bool>,
    /// Per result of the original map: the accumulator it returns.
    result_acc: Vec<Option<usize>>,
}

/// `map(w, arrs, lam)` whose accumulator inputs (variables in `which`) are updated only by
/// `upd_acc`s in `lam`'s body, at its top or in `if`s: the map without them, returning each
/// update's flat index (-1 when out of range or not done) and values after its own results.
fn map_updates(
    ns: &mut NameSource,
    arrs: &[VName],
    lam: &Lambda,
    which: &HashMap<VName, usize>,
    info: &[AccInfo],
) -> Option<MapUpdates> {
    if lam.params.len() != arrs.len() {
        return None;
    }
    // Accumulator variables of the lambda -> accumulator.
    let mut chain: HashMap<VName, usize> = HashMap::new();
    let mut new_arrs = Vec::new();
    let mut params = Vec::new();
    for (a, p) in arrs.iter().zip(&lam.params) {
        match which.get(a) {
            Some(&i) => {
                chain.insert(p.name.clone(), i);
            }
            None => {
                if matches!(p.ty, Type::Acc { .. }) {
                    return None;
                }
                new_arrs.push(a.clone());
                params.push(p.clone());
            }
        }
    }
    let mut stms = Vec::new();
    let mut updates = Vec::new();
    lower_stms(
        ns,
        &lam.body.stms,
        &mut chain,
        which,
        info,
        &mut stms,
        &mut updates,
    )?;
    let mut keep_result = Vec::new();
    let mut result_acc = Vec::new();
    let mut results = Vec::new();
    let mut ret = Vec::new();
    for (r, ty) in lam.body.result.iter().zip(&lam.ret) {
        match r {
            SubExp::Var(v) if chain.contains_key(v) => {
                keep_result.push(false);
                result_acc.push(chain.get(v).copied());
            }
            _ => {
                if matches!(ty, Type::Acc { .. }) {
                    return None;
                }
                keep_result.push(true);
                result_acc.push(None);
                results.push(r.clone());
                ret.push(ty.clone());
            }
        }
    }
    for u in &updates {
        results.push(u.index.clone());
        ret.push(Type::Prim(I64));
        results.extend(u.vals.iter().cloned());
        ret.extend(info[u.acc].elems.iter().map(|&e| Type::Prim(e)));
    }
    Some(MapUpdates {
        arrs: new_arrs,
        lam: Lambda {
            params,
            body: Body {
                stms,
                result: results,
            },
            ret,
        },
        updates,
        keep_result,
        result_acc,
    })
}

/// Lowers `stms` of a map's lambda (or of a branch of an `if` in it) into `out`, appending the
/// updates they make to `ups` in order; `chain` maps the current accumulator variables to
/// their accumulators. `None` for a use of an accumulator this rewrite does not handle.
fn lower_stms(
    ns: &mut NameSource,
    stms: &[Stm],
    chain: &mut HashMap<VName, usize>,
    which: &HashMap<VName, usize>,
    info: &[AccInfo],
    out: &mut Vec<Stm>,
    ups: &mut Vec<Update>,
) -> Option<()> {
    for t in stms {
        if let Exp::UpdAcc { acc, idx, vals } = &t.exp {
            let &i = chain.get(acc)?;
            let a = &info[i];
            if idx.len() != a.shape.len() || t.pat.elems.len() != 1 || vals.len() != a.elems.len() {
                return None;
            }
            let index = flat_index(ns, idx, &a.shape, out);
            chain.remove(acc);
            chain.insert(t.pat.elems[0].name.clone(), i);
            ups.push(Update {
                acc: i,
                index,
                vals: vals.clone(),
            });
            continue;
        }
        let acc_pat = t.pat.elems.iter().any(|p| matches!(p.ty, Type::Acc { .. }));
        if let (
            true,
            Exp::If {
                cond,
                then_b,
                else_b,
                ret,
            },
        ) = (acc_pat, &t.exp)
        {
            lower_if(
                ns, t, cond, then_b, else_b, ret, chain, which, info, out, ups,
            )?;
            continue;
        }
        let uses = uses_in_exp(&t.exp);
        if acc_pat
            || uses
                .iter()
                .any(|v| chain.contains_key(v) || which.contains_key(v))
        {
            return None;
        }
        out.push(t.clone());
    }
    Some(())
}

/// An `if` whose branches update accumulators: each branch computes its updates' indices and
/// values as extra results, a branch doing fewer updates of an accumulator than the other
/// padding with index -1 (ignored) and the operator's neutral element.
#[allow(clippy::too_many_arguments)]
fn lower_if(
    ns: &mut NameSource,
    t: &Stm,
    cond: &SubExp,
    then_b: &Body,
    else_b: &Body,
    ret: &[ExtType],
    chain: &mut HashMap<VName, usize>,
    which: &HashMap<VName, usize>,
    info: &[AccInfo],
    out: &mut Vec<Stm>,
    ups: &mut Vec<Update>,
) -> Option<()> {
    let mut branches = Vec::new();
    for b in [then_b, else_b] {
        let mut ch = chain.clone();
        let mut stms = Vec::new();
        let mut bups = Vec::new();
        lower_stms(ns, &b.stms, &mut ch, which, info, &mut stms, &mut bups)?;
        branches.push((ch, stms, bups, &b.result));
    }
    // Per result position: the accumulator it returns (both branches must agree).
    let mut pos_acc = Vec::new();
    for (j, pe) in t.pat.elems.iter().enumerate() {
        if !matches!(pe.ty, Type::Acc { .. }) {
            pos_acc.push(None);
            continue;
        }
        let mut got = Vec::new();
        for (ch, _, _, res) in &branches {
            match res.get(j)? {
                SubExp::Var(v) => got.push(*ch.get(v)?),
                _ => return None,
            }
        }
        if got[0] != got[1] {
            return None;
        }
        pos_acc.push(Some(got[0]));
    }
    // Update slots: per accumulator, as many as the branch that does more.
    let mut slots: Vec<usize> = Vec::new();
    for i in 0..info.len() {
        let n = branches
            .iter()
            .map(|(_, _, bups, _)| bups.iter().filter(|u| u.acc == i).count())
            .max()
            .unwrap_or(0);
        slots.extend(std::iter::repeat_n(i, n));
    }
    let mut new_bodies = Vec::new();
    for (_, stms, bups, res) in branches {
        let mut result: Vec<SubExp> = res
            .iter()
            .zip(&pos_acc)
            .filter(|(_, a)| a.is_none())
            .map(|(r, _)| r.clone())
            .collect();
        let mut taken = vec![0usize; info.len()];
        for &i in &slots {
            let mine: Vec<&Update> = bups.iter().filter(|u| u.acc == i).collect();
            match mine.get(taken[i]) {
                Some(u) => {
                    result.push(u.index.clone());
                    result.extend(u.vals.iter().cloned());
                }
                None => {
                    result.push(SubExp::Const(PrimValue::I64(-1)));
                    result.extend(info[i].neutral.iter().cloned());
                }
            }
            taken[i] += 1;
        }
        new_bodies.push(Body { stms, result });
    }
    let mut pat = Vec::new();
    let mut new_ret = Vec::new();
    for ((pe, r), a) in t.pat.elems.iter().zip(ret).zip(&pos_acc) {
        if a.is_none() {
            pat.push(pe.clone());
            new_ret.push(r.clone());
        }
    }
    for &i in &slots {
        let ix = ns.fresh("acc_ix");
        pat.push(Param {
            name: ix.clone(),
            ty: Type::Prim(I64),
        });
        new_ret.push(ExtType::Prim(I64));
        let mut vals = Vec::new();
        for &e in &info[i].elems {
            let v = ns.fresh("acc_val");
            pat.push(Param {
                name: v.clone(),
                ty: Type::Prim(e),
            });
            new_ret.push(ExtType::Prim(e));
            vals.push(SubExp::Var(v));
        }
        ups.push(Update {
            acc: i,
            index: SubExp::Var(ix),
            vals,
        });
    }
    // The accumulators the `if` returns continue as its results.
    for (pe, a) in t.pat.elems.iter().zip(&pos_acc) {
        if let Some(i) = a {
            chain.retain(|_, v| v != i);
            chain.insert(pe.name.clone(), *i);
        }
    }
    let else_body = new_bodies.pop()?;
    let then_body = new_bodies.pop()?;
    let mut s = t.clone();
    s.pat = Pat { elems: pat };
    s.exp = Exp::If {
        cond: cond.clone(),
        then_b: then_body,
        else_b: else_body,
        ret: new_ret,
    };
    out.push(s);
    Some(())
}

/// The index into the flattened accumulator of `idx` (-1 when any coordinate is out of range;
/// with one dimension the index itself, which the histogram range-checks).
fn flat_index(ns: &mut NameSource, idx: &[SubExp], shape: &[SubExp], out: &mut Vec<Stm>) -> SubExp {
    if idx.len() == 1 {
        return idx[0].clone();
    }
    let bind = |ns: &mut NameSource, out: &mut Vec<Stm>, t: PrimType, e: Exp| {
        let n = ns.fresh("acc_ix");
        out.push(mk_stm(
            vec![Param {
                name: n.clone(),
                ty: Type::Prim(t),
            }],
            e,
        ));
        SubExp::Var(n)
    };
    let zero = SubExp::Const(PrimValue::I64(0));
    let mut ok: Option<SubExp> = None;
    let mut flat: Option<SubExp> = None;
    for (i, d) in idx.iter().zip(shape) {
        let ge = bind(
            ns,
            out,
            PrimType::Bool,
            Exp::CmpOp(CmpOp::Le(I64), zero.clone(), i.clone()),
        );
        let lt = bind(
            ns,
            out,
            PrimType::Bool,
            Exp::CmpOp(CmpOp::Lt(I64), i.clone(), d.clone()),
        );
        let both = bind(ns, out, PrimType::Bool, Exp::BinOp(BinOp::LogAnd, ge, lt));
        ok = Some(match ok {
            None => both,
            Some(o) => bind(ns, out, PrimType::Bool, Exp::BinOp(BinOp::LogAnd, o, both)),
        });
        flat = Some(match flat {
            None => i.clone(),
            Some(f) => {
                let m = bind(ns, out, I64, Exp::BinOp(BinOp::Mul(I64), f, d.clone()));
                bind(ns, out, I64, Exp::BinOp(BinOp::Add(I64), m, i.clone()))
            }
        });
    }
    let (Some(ok), Some(flat)) = (ok, flat) else {
        return SubExp::Const(PrimValue::I64(-1));
    };
    bind(
        ns,
        out,
        I64,
        Exp::If {
            cond: ok,
            then_b: Body {
                stms: vec![],
                result: vec![flat],
            },
            else_b: Body {
                stms: vec![],
                result: vec![SubExp::Const(PrimValue::I64(-1))],
            },
            ret: vec![ExtType::Prim(I64)],
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::{count_exps, rewrite_and_compare};

    fn with_accs(p: &Program) -> usize {
        count_exps(p, &|e| matches!(e, Exp::WithAcc { .. }))
    }

    /// Rewrites `src` and checks: valid IR, `left` `with_acc`s remain, same results.
    fn check(src: &str, entry: &str, args: &str, left: usize) {
        let (before, after) = rewrite_and_compare(src, entry, args, acc_to_hist);
        assert!(with_accs(&before) > 0, "no with_acc to rewrite");
        assert_eq!(with_accs(&after), left);
    }

    #[test]
    fn gathers_become_histograms() {
        // x̄ of a gather: duplicate and out-of-range indices, two updates per iteration.
        let src = "
entry shared (xs: []f64) (is: []i64) = vjp (\\xs -> map (\\i -> if i >= 0 && i < length xs then xs[i] * xs[i] else 0) is) xs (map f64.i64 is)
entry pairs (xs: [6]f64) = vjp (\\xs -> map (\\i -> xs[2*i] * xs[2*i+1]) (iota 3)) xs [1, 2, 3]
";
        check(
            src,
            "shared",
            "[1.0, 2.0, 3.0] [0i64, 2i64, 2i64, 5i64, -1i64, 1i64]",
            0,
        );
        check(src, "pairs", "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]", 0);
    }

    #[test]
    fn two_dimensional_accumulators_flatten() {
        let src = "
entry rows [n][m] (a: [n][m]f64) (is: []i64) (js: []i64) =
  vjp (\\a -> map2 (\\i j -> if i >= 0 && i < n && j >= 0 && j < m then a[i, j] * 3 else 0) is js) a (map f64.i64 is)
";
        check(
            src,
            "rows",
            "[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] [0i64, 2i64, 2i64, 1i64, 7i64] [1i64, 0i64, 0i64, 1i64, 0i64]",
            0,
        );
    }

    #[test]
    fn updates_in_loops_are_left_alone() {
        let src = "
entry looped [n] (xs: [n]f64) (is: []i64) =
  vjp (\\xs -> map (\\i -> loop s = 0 for j < 3 do s + xs[(i + j) % n]) is) xs (map f64.i64 is)
";
        check(src, "looped", "[1.0, 2.0, 3.0] [0i64, 2i64]", 1);
    }

    #[test]
    fn tuples_of_accumulated_arrays() {
        // jvp of vjp: the accumulator holds values and tangents.
        let src = "
entry fwd_over_rev (xs: []f64) (is: []i64) (dx: []f64) =
  jvp (\\xs -> vjp (\\xs -> map (\\i -> xs[i] * xs[i]) is) xs (map (\\_ -> 1.0) is)) xs dx
";
        check(
            src,
            "fwd_over_rev",
            "[1.0, 2.0, 3.0] [0i64, 2i64, 2i64, 1i64] [1.0, 0.5, 0.25]",
            0,
        );
    }
}
