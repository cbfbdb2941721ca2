//! Removal of unneeded copies.
//!
//! The lowering copies every array before an in-place operation consumes it (`with` updates,
//! `scatter`, `reduce_by_index`), because the type checker does not track uniqueness. This pass
//! removes a copy `c = copy x` when consuming `x` itself is safe: `x` is a fresh array (made by
//! this body, not a view of another array) or an owned loop parameter, nothing uses `x` after the
//! copy, and nothing used before the copy can alias `x`. This keeps `loop acc = ... do acc with
//! [i] = v` linear instead of quadratic.

use crate::ir::{Body, DimIndex, Exp, Soac, Stm, SubExp, Type, VName};
use std::collections::HashSet;

/// Removes unneeded copies in a function body.
pub(crate) fn remove_copies(body: &mut Body) {
    process(body, &HashSet::new());
}

fn fresh_exp(e: &Exp) -> bool {
    matches!(
        e,
        Exp::Update(..)
            | Exp::Copy(_)
            | Exp::Iota { .. }
            | Exp::Replicate { .. }
            | Exp::ArrayLit { .. }
            | Exp::Concat { .. }
            | Exp::Soac(
                Soac::Map { .. } | Soac::Scan { .. } | Soac::Hist { .. } | Soac::Scatter { .. }
            )
    )
}

/// Whether `v` is owned or names an array made fresh by one of the first `k` statements of
/// `stms`: a fresh expression, or a result of a loop that consumes its initial value (fresh
/// itself) and returns, for that result, its parameter or an array fresh in its body (the
/// state of a loop over layers inside a loop over time steps).
fn fresh_in(stms: &[Stm], result: &[SubExp], k: usize, v: &VName, owned: &HashSet<VName>) -> bool {
    if owned.contains(v) {
        return true;
    }
    let Some((i, j)) = stms[..k].iter().enumerate().find_map(|(i, s)| {
        s.pat
            .elems
            .iter()
            .position(|p| &p.name == v)
            .map(|j| (i, j))
    }) else {
        return false;
    };
    match &stms[i].exp {
        Exp::Loop { .. } => loop_consumes(stms, result, i, j, owned),
        e => fresh_exp(e),
    }
}

/// Whether the loop at statement `i` of `stms` owns its parameter number `j`: an array whose
/// initial value is fresh and may be consumed there, and for which the loop returns the
/// parameter itself or an array fresh in its body.
fn loop_consumes(
    stms: &[Stm],
    result: &[SubExp],
    i: usize,
    j: usize,
    owned: &HashSet<VName>,
) -> bool {
    let Exp::Loop { params, body, .. } = &stms[i].exp else {
        return false;
    };
    let Some((p, init)) = params.get(j) else {
        return false;
    };
    matches!(p.ty, Type::Array { .. })
        && init
            .as_var()
            .is_some_and(|v| consumable(stms, result, i, v, owned))
        && body
            .result
            .get(j)
            .and_then(|r| r.as_var())
            .is_some_and(|rv| {
                rv == &p.name
                    || fresh_in(
                        &body.stms,
                        &body.result,
                        body.stms.len(),
                        rv,
                        &HashSet::from([p.name.clone()]),
                    )
            })
}

/// Whether `v` may be consumed by statement `k` of `stms` (of a body whose result is
/// `result`), given the owned outer variables: `v` is owned or fresh, nothing uses it after
/// `k`, and no alias of it made before `k` is used from `k` on. The Vulkan backend asks this
/// too, of a loop's initial value, to run the loop in the value's memory.
pub fn consumable(
    stms: &[Stm],
    result: &[SubExp],
    k: usize,
    v: &VName,
    owned: &HashSet<VName>,
) -> bool {
    if !fresh_in(stms, result, k, v, owned) {
        return false;
    }
    if result.iter().any(|r| r.as_var() == Some(v))
        || stms[k + 1..].iter().any(|s| mentions(&s.exp, v))
    {
        return false;
    }
    // Earlier statements may make aliases of `v` (views, or branch/loop results that may be
    // `v`), and aliases of those, as long as none of them is used from the copy on: the
    // slices of a loop's state read before the state is updated (`let h = st[i]` ... `st with
    // [i] = h'`) do not keep the update from happening in place.
    let mut aliases: HashSet<&VName> = HashSet::from([v]);
    for s in &stms[..k] {
        let makes_alias = aliases.iter().any(|a| mentions(&s.exp, a))
            && !matches!(
                s.exp,
                Exp::Soac(Soac::Map { .. } | Soac::Reduce { .. } | Soac::Scan { .. })
                    | Exp::Concat { .. }
                    | Exp::Copy(_)
            );
        if makes_alias {
            for p in &s.pat.elems {
                if !matches!(p.ty, Type::Prim(_)) {
                    aliases.insert(&p.name);
                }
            }
        }
    }
    aliases.iter().filter(|a| **a != v).all(|a| {
        !result.iter().any(|r| r.as_var() == Some(*a))
            && !stms[k..].iter().any(|s| mentions(&s.exp, a))
    })
}

fn process(body: &mut Body, owned: &HashSet<VName>) {
    let mut k = 0;
    while k < body.stms.len() {
        // Nested bodies first.
        let loop_owned: HashSet<VName> = match &body.stms[k].exp {
            Exp::Loop { params, .. } => params
                .iter()
                .enumerate()
                .filter(|(j, _)| loop_consumes(&body.stms, &body.result, k, *j, owned))
                .map(|(_, (p, _))| p.name.clone())
                .collect(),
            _ => HashSet::new(),
        };
        match &mut body.stms[k].exp {
            Exp::Loop { body: lb, .. } => process(lb, &loop_owned),
            Exp::If { then_b, else_b, .. } => {
                process(then_b, &HashSet::new());
                process(else_b, &HashSet::new());
            }
            Exp::Soac(s) => match s {
                Soac::Map { lam, .. } => process(&mut lam.body, &HashSet::new()),
                Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. } => {
                    process(&mut op.lam.body, &HashSet::new())
                }
                Soac::Scatter { .. } => {}
            },
            Exp::WithAcc { lam, .. } | Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => {
                process(&mut lam.body, &HashSet::new())
            }
            Exp::WithVjp {
                primal, adjoint, ..
            } => {
                process(&mut primal.body, &HashSet::new());
                process(&mut adjoint.body, &HashSet::new())
            }
            _ => {}
        }
        if let Exp::Copy(x) = &body.stms[k].exp {
            let x = x.clone();
            if body.stms[k].pat.elems.len() == 1
                && consumable(&body.stms, &body.result, k, &x, owned)
            {
                let c = body.stms[k].pat.elems[0].name.clone();
                body.stms.remove(k);
                for s in &mut body.stms[k..] {
                    rename_exp(&mut s.exp, &c, &x);
                }
                for r in &mut body.result {
                    rename_se(r, &c, &x);
                }
                continue;
            }
        }
        k += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Variable occurrences.

fn se_is(s: &SubExp, v: &VName) -> bool {
    s.as_var() == Some(v)
}

fn dims_mention(d: &[DimIndex], v: &VName) -> bool {
    d.iter().any(|d| match d {
        DimIndex::Fix(s) => se_is(s, v),
        DimIndex::Slice { start, len, stride } => {
            se_is(start, v) || se_is(len, v) || se_is(stride, v)
        }
    })
}

fn body_mentions(b: &Body, v: &VName) -> bool {
    b.stms.iter().any(|s| mentions(&s.exp, v)) || b.result.iter().any(|r| se_is(r, v))
}

/// Whether an expression uses variable `v` (as an operand, anywhere inside).
pub(crate) fn mentions(e: &Exp, v: &VName) -> bool {
    match e {
        Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Conv(_, a) => se_is(a, v),
        Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) => se_is(a, v) || se_is(b, v),
        Exp::Math(_, xs) => xs.iter().any(|x| se_is(x, v)),
        Exp::Index(a, d) => a == v || dims_mention(d, v),
        Exp::Update(a, d, x) => a == v || dims_mention(d, v) || se_is(x, v),
        Exp::Iota {
            n, start, stride, ..
        } => se_is(n, v) || se_is(start, v) || se_is(stride, v),
        Exp::Replicate { shape, value } => shape.iter().any(|s| se_is(s, v)) || se_is(value, v),
        Exp::ArrayLit { elems, .. } => elems.iter().any(|x| se_is(x, v)),
        Exp::Concat { arrs, w, .. } => arrs.contains(v) || se_is(w, v),
        Exp::Copy(a) | Exp::Rearrange(_, a) => a == v,
        Exp::Reshape(s, a) => a == v || s.iter().any(|x| se_is(x, v)),
        Exp::SortByKey { keys, bits } => keys == v || se_is(bits, v),
        Exp::Assert { cond, args, .. } => se_is(cond, v) || args.iter().any(|x| se_is(x, v)),
        Exp::Apply { args, .. } => args.iter().any(|x| se_is(x, v)),
        Exp::If {
            cond,
            then_b,
            else_b,
            ..
        } => se_is(cond, v) || body_mentions(then_b, v) || body_mentions(else_b, v),
        Exp::Loop { params, form, body } => {
            params.iter().any(|(_, i)| se_is(i, v))
                || matches!(form, crate::ir::LoopForm::For { bound, .. } if se_is(bound, v))
                || body_mentions(body, v)
        }
        Exp::Soac(s) => match s {
            Soac::Map { w, arrs, lam } => {
                se_is(w, v) || arrs.contains(v) || body_mentions(&lam.body, v)
            }
            Soac::Reduce { w, arrs, op } | Soac::Scan { w, arrs, op } => {
                se_is(w, v)
                    || arrs.contains(v)
                    || body_mentions(&op.lam.body, v)
                    || op.neutral.iter().any(|x| se_is(x, v))
            }
            Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            } => {
                se_is(w, v)
                    || dest.contains(v)
                    || inds == v
                    || vals.contains(v)
                    || body_mentions(&op.lam.body, v)
                    || op.neutral.iter().any(|x| se_is(x, v))
            }
            Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            } => se_is(w, v) || dest.contains(v) || inds.contains(v) || vals.contains(v),
        },
        Exp::WithAcc { inputs, lam } => {
            inputs
                .iter()
                .any(|i| i.arrs.contains(v) || i.shape.iter().any(|x| se_is(x, v)))
                || body_mentions(&lam.body, v)
        }
        Exp::UpdAcc { acc, idx, vals } => {
            acc == v || idx.iter().any(|x| se_is(x, v)) || vals.iter().any(|x| se_is(x, v))
        }
        Exp::Jvp { lam, args, seeds } | Exp::Vjp { lam, args, seeds } => {
            args.iter().chain(seeds).any(|x| se_is(x, v)) || body_mentions(&lam.body, v)
        }
        Exp::WithVjp {
            primal,
            adjoint,
            args,
        } => {
            args.iter().any(|x| se_is(x, v))
                || body_mentions(&primal.body, v)
                || body_mentions(&adjoint.body, v)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Renaming (of an array variable: it never occurs in types).

fn rename_se(s: &mut SubExp, from: &VName, to: &VName) {
    if let SubExp::Var(x) = s {
        if x == from {
            *x = to.clone();
        }
    }
}

fn rename_v(x: &mut VName, from: &VName, to: &VName) {
    if x == from {
        *x = to.clone();
    }
}

fn rename_dims(d: &mut [DimIndex], from: &VName, to: &VName) {
    for d in d {
        match d {
            DimIndex::Fix(s) => rename_se(s, from, to),
            DimIndex::Slice { start, len, stride } => {
                rename_se(start, from, to);
                rename_se(len, from, to);
                rename_se(stride, from, to);
            }
        }
    }
}

fn rename_body(b: &mut Body, from: &VName, to: &VName) {
    for s in &mut b.stms {
        rename_exp(&mut s.exp, from, to);
    }
    for r in &mut b.result {
        rename_se(r, from, to);
    }
}

fn rename_exp(e: &mut Exp, from: &VName, to: &VName) {
    let (f, t) = (from, to);
    match e {
        Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Conv(_, a) => rename_se(a, f, t),
        Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) => {
            rename_se(a, f, t);
            rename_se(b, f, t);
        }
        Exp::Math(_, xs) | Exp::ArrayLit { elems: xs, .. } | Exp::Apply { args: xs, .. } => {
            xs.iter_mut().for_each(|x| rename_se(x, f, t))
        }
        Exp::Index(a, d) => {
            rename_v(a, f, t);
            rename_dims(d, f, t);
        }
        Exp::Update(a, d, x) => {
            rename_v(a, f, t);
            rename_dims(d, f, t);
            rename_se(x, f, t);
        }
        Exp::Iota {
            n, start, stride, ..
        } => {
            rename_se(n, f, t);
            rename_se(start, f, t);
            rename_se(stride, f, t);
        }
        Exp::Replicate { shape, value } => {
            shape.iter_mut().for_each(|x| rename_se(x, f, t));
            rename_se(value, f, t);
        }
        Exp::Concat { arrs, w, .. } => {
            arrs.iter_mut().for_each(|x| rename_v(x, f, t));
            rename_se(w, f, t);
        }
        Exp::Copy(a) | Exp::Rearrange(_, a) => rename_v(a, f, t),
        Exp::SortByKey { keys, bits } => {
            rename_v(keys, f, t);
            rename_se(bits, f, t);
        }
        Exp::Reshape(s, a) => {
            rename_v(a, f, t);
            s.iter_mut().for_each(|x| rename_se(x, f, t));
        }
        Exp::Assert { cond, args, .. } => {
            rename_se(cond, f, t);
            args.iter_mut().for_each(|x| rename_se(x, f, t));
        }
        Exp::If {
            cond,
            then_b,
            else_b,
            ..
        } => {
            rename_se(cond, f, t);
            rename_body(then_b, f, t);
            rename_body(else_b, f, t);
        }
        Exp::Loop { params, form, body } => {
            params.iter_mut().for_each(|(_, i)| rename_se(i, f, t));
            if let crate::ir::LoopForm::For { bound, .. } = form {
                rename_se(bound, f, t);
            }
            rename_body(body, f, t);
        }
        Exp::Soac(s) => match s {
            Soac::Map { w, arrs, lam } => {
                rename_se(w, f, t);
                arrs.iter_mut().for_each(|x| rename_v(x, f, t));
                rename_body(&mut lam.body, f, t);
            }
            Soac::Reduce { w, arrs, op } | Soac::Scan { w, arrs, op } => {
                rename_se(w, f, t);
                arrs.iter_mut().for_each(|x| rename_v(x, f, t));
                rename_body(&mut op.lam.body, f, t);
                op.neutral.iter_mut().for_each(|x| rename_se(x, f, t));
            }
            Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            } => {
                rename_se(w, f, t);
                dest.iter_mut()
                    .chain(vals.iter_mut())
                    .for_each(|x| rename_v(x, f, t));
                rename_v(inds, f, t);
                rename_body(&mut op.lam.body, f, t);
                op.neutral.iter_mut().for_each(|x| rename_se(x, f, t));
            }
            Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            } => {
                rename_se(w, f, t);
                dest.iter_mut()
                    .chain(inds.iter_mut())
                    .chain(vals.iter_mut())
                    .for_each(|x| rename_v(x, f, t));
            }
        },
        Exp::WithAcc { inputs, lam } => {
            for i in inputs {
                i.arrs.iter_mut().for_each(|x| rename_v(x, f, t));
                i.shape.iter_mut().for_each(|x| rename_se(x, f, t));
            }
            rename_body(&mut lam.body, f, t);
        }
        Exp::UpdAcc { acc, idx, vals } => {
            rename_v(acc, f, t);
            idx.iter_mut()
                .chain(vals.iter_mut())
                .for_each(|x| rename_se(x, f, t));
        }
        Exp::Jvp { lam, args, seeds } | Exp::Vjp { lam, args, seeds } => {
            args.iter_mut()
                .chain(seeds.iter_mut())
                .for_each(|x| rename_se(x, f, t));
            rename_body(&mut lam.body, f, t);
        }
        Exp::WithVjp {
            primal,
            adjoint,
            args,
        } => {
            args.iter_mut().for_each(|x| rename_se(x, f, t));
            rename_body(&mut primal.body, f, t);
            rename_body(&mut adjoint.body, f, t);
        }
    }
}
