//! `reduce_by_index` with any operator, by sorting: for backends whose histograms combine each
//! element with atomics (one scalar at a time), a histogram whose operator mixes the components
//! of a tuple (an argmin's `(value, index)` pairs, what `vjp` makes of `min`/`max` and `*`)
//! becomes
//!
//! 1. the elements' bins as keys (out-of-range indices get key `m`, past every bin);
//! 2. a stable LSD radix sort of the keys by ⌈log₂(m + 1)⌉ bits, one bit per round of a `loop`
//!    (`map`, two `scan (+)`s, a `reduce` and two `scatter`s per bit), carrying the permutation;
//! 3. the values gathered in sorted order and combined by a segmented inclusive `scan` whose
//!    operator is the histogram's, lifted to `(start flag, values)` pairs;
//! 4. each segment's last element (a bin's total) combined with the bin's old value and
//!    `scatter`ed into the destination.
//!
//! Everything is `map`/`scan`/`reduce`/`scatter`, which every backend runs in parallel; the
//! work is O(n log m). Only host-level statements are rewritten (those of functions, loops,
//! branches): a histogram inside a SOAC's lambda runs sequentially in one thread, where any
//! operator works. The operator must be associative and commutative, as `reduce_by_index`
//! requires. Rows that are arrays (array-valued bins) are left as they are.

use super::traverse::{fresh_lambda, mk_stm, rewrite_host_stms};
use crate::ir::builder::{var, Builder};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};

const I64: PrimType = PrimType::Int(IntType::I64);

fn i64c(v: i64) -> SubExp {
    SubExp::Const(PrimValue::I64(v))
}

/// Rewrites every `reduce_by_index` for which `wanted` holds (and whose rows are scalars and
/// indices `i64`), innermost first.
pub fn hist_sort(p: Program, wanted: &dyn Fn(&Operator) -> bool) -> Program {
    rewrite_host_stms(p, &mut |ns, s| match &s.exp {
        Exp::Soac(Soac::Hist { op, .. }) if wanted(op) => rewrite(ns, s),
        _ => None,
    })
}

/// The statements replacing the histogram `s`.
fn rewrite(ns: &mut NameSource, s: &Stm) -> Option<Vec<Stm>> {
    let Exp::Soac(Soac::Hist {
        w,
        dest,
        op,
        inds,
        vals,
    }) = &s.exp
    else {
        return None;
    };
    let k = dest.len();
    if k == 0 || vals.len() != k || s.pat.elems.len() != k || op.neutral.len() != k {
        return None;
    }
    // Element types and the number of bins, from the result pattern (`[m]t` each).
    let mut elems = Vec::with_capacity(k);
    let mut m = None;
    for pe in &s.pat.elems {
        match &pe.ty {
            Type::Array { elem, shape } if shape.len() == 1 => {
                elems.push(*elem);
                m = Some(shape[0].clone());
            }
            _ => return None,
        }
    }
    let m = m?;
    if op.lam.params.len() != 2 * k || op.lam.ret.iter().any(|t| t.elem().is_none()) {
        return None;
    }
    let n = w.clone();
    let arr = |t: PrimType| Type::Array {
        elem: t,
        shape: vec![n.clone()],
    };
    let mut b = Builder::new(ns);

    // 1. Keys: the bin, or m when out of range.
    let key_lam = b.lambda(&[("i", Type::Prim(I64))], vec![Type::Prim(I64)], |b, ps| {
        let ge = b.cmp(CmpOp::Le(I64), i64c(0), var(&ps[0]));
        let lt = b.cmp(CmpOp::Lt(I64), var(&ps[0]), m.clone());
        let ok = b.binop(BinOp::LogAnd, var(&ge), var(&lt));
        let k = if_scalar(b, var(&ok), var(&ps[0]), m.clone(), I64);
        vec![var(&k)]
    });
    let keys0 = b.map(n.clone(), vec![inds.clone()], key_lam)[0].clone();
    // Bits: the smallest B with 2^B > m.
    let bits = bit_count(&mut b, &m);

    // 2. A stable sort of the keys by those bits, carrying the permutation.
    let sorted = b.bind_many(
        &[("keys_sorted", arr(I64)), ("perm_sorted", arr(I64))],
        Exp::SortByKey {
            keys: keys0,
            bits: var(&bits),
        },
    );
    let (keys, perm) = (sorted[0].clone(), sorted[1].clone());

    // 3. Values in sorted order, segment starts, segmented scan.
    let mut sorted_vals = Vec::with_capacity(k);
    for (v, &t) in vals.iter().zip(&elems) {
        let g = b.lambda(&[("p", Type::Prim(I64))], vec![Type::Prim(t)], |b, ps| {
            vec![var(&b.index(Type::Prim(t), v, vec![var(&ps[0])]))]
        });
        sorted_vals.push(b.map(n.clone(), vec![perm.clone()], g)[0].clone());
    }
    let iota = b.bind(
        "j",
        arr(I64),
        Exp::Iota {
            n: n.clone(),
            start: i64c(0),
            stride: i64c(1),
            it: IntType::I64,
        },
    );
    let n_1 = b.binop(BinOp::Sub(I64), n.clone(), i64c(1));
    let start_lam = b.lambda(
        &[("j", Type::Prim(I64))],
        vec![Type::Prim(PrimType::Bool)],
        |b, ps| {
            let first = b.cmp(CmpOp::Eq(I64), var(&ps[0]), i64c(0));
            let t = if_body(
                b,
                var(&first),
                |_| vec![SubExp::Const(PrimValue::Bool(true))],
                |b| {
                    let jm1 = b.binop(BinOp::Sub(I64), var(&ps[0]), i64c(1));
                    let a = b.index(Type::Prim(I64), &keys, vec![var(&ps[0])]);
                    let p = b.index(Type::Prim(I64), &keys, vec![var(&jm1)]);
                    let same = b.cmp(CmpOp::Eq(I64), var(&a), var(&p));
                    vec![var(&b.unop(UnOp::Not(PrimType::Bool), var(&same)))]
                },
                PrimType::Bool,
            );
            vec![var(&t)]
        },
    );
    let starts = b.map(n.clone(), vec![iota.clone()], start_lam)[0].clone();
    // (f1, xs) ⊕ (f2, ys) = (f1 || f2, if f2 then ys else xs ⊙ ys)
    let mut sparams: Vec<(&str, Type)> = vec![("f1", Type::Prim(PrimType::Bool))];
    sparams.extend(elems.iter().map(|&t| ("x", Type::Prim(t))));
    sparams.push(("f2", Type::Prim(PrimType::Bool)));
    sparams.extend(elems.iter().map(|&t| ("y", Type::Prim(t))));
    let mut sret = vec![Type::Prim(PrimType::Bool)];
    sret.extend(elems.iter().map(|&t| Type::Prim(t)));
    let seg_lam = b.lambda(&sparams, sret, |b, ps| {
        let f1 = &ps[0];
        let xs: Vec<SubExp> = ps[1..=k].iter().map(var).collect();
        let f2 = &ps[k + 1];
        let ys: Vec<SubExp> = ps[k + 2..].iter().map(var).collect();
        let f = b.binop(BinOp::LogOr, var(f1), var(f2));
        let then_ys = ys.clone();
        let r = if_many(b, var(f2), |_| then_ys, |b| apply(b, op, &xs, &ys), &elems);
        let mut out = vec![var(&f)];
        out.extend(r.iter().map(var));
        out
    });
    let mut sneutral = vec![SubExp::Const(PrimValue::Bool(false))];
    sneutral.extend(op.neutral.iter().cloned());
    let mut scan_pat: Vec<(&str, Type)> = vec![("seg_f", arr(PrimType::Bool))];
    scan_pat.extend(elems.iter().map(|&t| ("seg", arr(t))));
    let mut scan_in = vec![starts];
    scan_in.extend(sorted_vals);
    let seg = b.bind_many(
        &scan_pat,
        Exp::Soac(Soac::Scan {
            w: n.clone(),
            arrs: scan_in,
            op: Operator {
                lam: seg_lam,
                neutral: sneutral,
                commutative: false,
            },
        }),
    );

    // 4. At each segment's end: the bin's index (-1 elsewhere) and old ⊙ total.
    let mut eret = vec![Type::Prim(I64)];
    eret.extend(elems.iter().map(|&t| Type::Prim(t)));
    let mut eparams: Vec<(&str, Type)> = vec![("j", Type::Prim(I64))];
    eparams.extend(elems.iter().map(|&t| ("s", Type::Prim(t))));
    let end_lam = b.lambda(&eparams, eret, |b, ps| {
        let j = &ps[0];
        let totals: Vec<SubExp> = ps[1..].iter().map(var).collect();
        let key = b.index(Type::Prim(I64), &keys, vec![var(j)]);
        let last = b.cmp(CmpOp::Eq(I64), var(j), var(&n_1));
        let end = if_body(
            b,
            var(&last),
            |_| vec![SubExp::Const(PrimValue::Bool(true))],
            |b| {
                let j1 = b.binop(BinOp::Add(I64), var(j), i64c(1));
                let next = b.index(Type::Prim(I64), &keys, vec![var(&j1)]);
                let same = b.cmp(CmpOp::Eq(I64), var(&key), var(&next));
                vec![var(&b.unop(UnOp::Not(PrimType::Bool), var(&same)))]
            },
            PrimType::Bool,
        );
        let inb = b.cmp(CmpOp::Lt(I64), var(&key), m.clone());
        let write = b.binop(BinOp::LogAnd, var(&end), var(&inb));
        let mut types = vec![I64];
        types.extend(elems.iter().copied());
        let neutral = op.neutral.clone();
        let r = if_many(
            b,
            var(&write),
            |b| {
                let olds: Vec<SubExp> = dest
                    .iter()
                    .zip(&elems)
                    .map(|(d, &t)| var(&b.index(Type::Prim(t), d, vec![var(&key)])))
                    .collect();
                let mut out = vec![var(&key)];
                out.extend(apply(b, op, &olds, &totals));
                out
            },
            |_| {
                let mut out = vec![i64c(-1)];
                out.extend(neutral);
                out
            },
            &types,
        );
        r.iter().map(var).collect()
    });
    let mut ends_pat: Vec<(&str, Type)> = vec![("at", arr(I64))];
    ends_pat.extend(elems.iter().map(|&t| ("new", arr(t))));
    let mut ends_in = vec![iota];
    ends_in.extend(seg[1..].iter().cloned());
    let ends = b.bind_many(
        &ends_pat,
        Exp::Soac(Soac::Map {
            w: n.clone(),
            arrs: ends_in,
            lam: end_lam,
        }),
    );
    b.push(Stm {
        pat: s.pat.clone(),
        exp: Exp::Soac(Soac::Scatter {
            w: n,
            dest: dest.clone(),
            inds: vec![ends[0].clone()],
            vals: ends[1..].to_vec(),
        }),
        attrs: s.attrs.clone(),
        loc: s.loc.clone(),
    });
    let mut stms = b.stms;
    for t in &mut stms {
        if t.loc.is_none() {
            t.loc = s.loc.clone();
        }
    }
    Some(stms)
}

/// `let b = smallest B >= 1 with 2^B > m` (a short loop on the host).
fn bit_count(b: &mut Builder, m: &SubExp) -> VName {
    let bits_p = b.param("bits", Type::Prim(I64));
    let cond_p = b.param("more", Type::Prim(PrimType::Bool));
    let init_more = b.cmp(CmpOp::Le(I64), i64c(2), m.clone());
    let body = b.body(|b| {
        let nb = b.binop(BinOp::Add(I64), var(&bits_p.name), i64c(1));
        let p = b.binop(BinOp::Shl(IntType::I64), i64c(1), var(&nb));
        let more = b.cmp(CmpOp::Le(I64), var(&p), m.clone());
        vec![var(&nb), var(&more)]
    });
    let more_name = cond_p.name.clone();
    let r = b.bind_many(
        &[
            ("bits", Type::Prim(I64)),
            ("more", Type::Prim(PrimType::Bool)),
        ],
        Exp::Loop {
            params: vec![(bits_p, i64c(1)), (cond_p, var(&init_more))],
            form: LoopForm::While(more_name),
            body,
        },
    );
    r[0].clone()
}

/// `op(xs, ys)` inlined: a fresh copy of the operator's body with its parameters bound.
fn apply(b: &mut Builder, op: &Operator, xs: &[SubExp], ys: &[SubExp]) -> Vec<SubExp> {
    let lam = fresh_lambda(b.ns, &op.lam);
    for (p, a) in lam.params.iter().zip(xs.iter().chain(ys)) {
        b.push(mk_stm(vec![p.clone()], Exp::SubExp(a.clone())));
    }
    b.stms.extend(lam.body.stms);
    lam.body.result
}

/// `if c then t else e` of one scalar of type `t`.
pub(super) fn if_scalar(b: &mut Builder, c: SubExp, t: SubExp, e: SubExp, ty: PrimType) -> VName {
    if_body(b, c, |_| vec![t], |_| vec![e], ty)
}

fn if_body(
    b: &mut Builder,
    c: SubExp,
    t: impl FnOnce(&mut Builder) -> Vec<SubExp>,
    e: impl FnOnce(&mut Builder) -> Vec<SubExp>,
    ty: PrimType,
) -> VName {
    if_many(b, c, t, e, &[ty])[0].clone()
}

fn if_many(
    b: &mut Builder,
    c: SubExp,
    t: impl FnOnce(&mut Builder) -> Vec<SubExp>,
    e: impl FnOnce(&mut Builder) -> Vec<SubExp>,
    tys: &[PrimType],
) -> Vec<VName> {
    let then_b = b.body(t);
    let else_b = b.body(e);
    let pat: Vec<(&str, Type)> = tys.iter().map(|&t| ("sel", Type::Prim(t))).collect();
    b.bind_many(
        &pat,
        Exp::If {
            cond: c,
            then_b,
            else_b,
            ret: tys.iter().map(|&t| ExtType::Prim(t)).collect(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::{count_exps, rewrite_and_compare};

    /// Rewrites every histogram of `src` and checks: valid IR, none left, same results.
    fn check(src: &str, entry: &str, args: &str) {
        let hists = |p: &Program| count_exps(p, &|e| matches!(e, Exp::Soac(Soac::Hist { .. })));
        let (before, after) = rewrite_and_compare(src, entry, args, |p| hist_sort(p, &|_| true));
        assert!(hists(&before) > 0, "no histogram");
        assert_eq!(hists(&after), 0);
    }

    const ARGMAX: &str = "
let amax (a: f64, i: i64) (b: f64, j: i64) =
  if a > b || (a == b && i < j) then (a, i) else (b, j)
entry argmax [n] (m: i64) (is: [n]i64) (vs: [n]f64) =
  unzip (reduce_by_index (replicate m (-f64.inf, -1)) amax (-f64.inf, -1) is (zip vs (iota n)))
entry argmax32 [n] (m: i64) (is: [n]i64) (vs: [n]i32) =
  let f (a: i32, i: i64) (b: i32, j: i64) = if a > b || (a == b && i < j) then (a, i) else (b, j)
  in unzip (reduce_by_index (replicate m (i32.lowest, -1)) f (i32.lowest, -1) is (zip vs (iota n)))
";

    #[test]
    fn argmax_histograms_at_many_sizes() {
        check(ARGMAX, "argmax", "4i64 [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [1.0, 2.0, 6.0, 5.0, 5.0, 8.0, 7.0, 9.0]");
        check(ARGMAX, "argmax", "1i64 [0i64, 0i64, 0i64] [3.0, 1.0, 3.0]");
        check(ARGMAX, "argmax", "3i64 empty([0]i64) empty([0]f64)");
        check(ARGMAX, "argmax", "0i64 [0i64, 1i64] [1.0, 2.0]");
        // Many bins (several radix bits), duplicates, out-of-range on both sides.
        let n = 300;
        let is: Vec<String> = (0..n)
            .map(|i| format!("{}i64", (i * 37 % 71) as i64 - 3))
            .collect();
        let vs: Vec<String> = (0..n).map(|i| format!("{}i32", i * 13 % 17 - 8)).collect();
        check(
            ARGMAX,
            "argmax32",
            &format!("64i64 [{}] [{}]", is.join(", "), vs.join(", ")),
        );
        check(
            ARGMAX,
            "argmax32",
            &format!("1000i64 [{}] [{}]", is.join(", "), vs.join(", ")),
        );
    }

    #[test]
    fn the_adjoint_of_a_max_histogram() {
        // vjp of a max histogram: its forward sweep is an argmax histogram (ad-rules.md §7).
        let src = "
entry hist_max (h: [4]f64) (xs: [8]f64) =
  vjp (\\(h, xs) -> reduce_by_index (copy h) f64.max f64.lowest [0, 1, 2, 1, 1, 0, -1, 4] xs) (h, xs) [1, 2, 3, 4]
";
        check(
            src,
            "hist_max",
            "[8.0, 0.0, 1.0, 7.0] [1.0, 2.0, 6.0, 5.0, 5.0, 8.0, 7.0, 9.0]",
        );
    }
}
