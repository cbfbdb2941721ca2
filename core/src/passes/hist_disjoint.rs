//! Histograms whose indices are provably distinct become gathers and scatters (paper 003):
//!
//! ```text
//! let is = map(w, {iota w, ..}, \i .. -> 2 * i + 1)          -- injective in i
//! let r  = hist(w, {d}, op, is, {vs})
//! ==>
//! let news = map(w, {is, vs}, \ix v -> op(if 0 <= ix < len d then d[ix] else ne, v))
//! let r    = scatter(w, {d}, {is}, {news})
//! ```
//!
//! When no two in-range indices are equal, every element of the destination receives at most
//! one update, so the read-modify-write needs no atomics and no conflict resolution (a plain
//! scatter; out-of-range indices are ignored by both). Reverse-mode AD turns reads of free
//! arrays in a `map` into accumulator updates, which [`super::acc_to_hist`] turns into
//! histograms; reads at `x[2i]` and `x[2i+1]` thus become two such histograms, each with
//! provably distinct indices, while `x[i/2]` stays a histogram (its updates must be summed).
//!
//! **What is proved injective** (in-range values pairwise distinct), per body, following
//! the statements in order (names are bound once):
//! - `iota n start stride` of 64-bit integers with a constant non-zero stride (narrower ones
//!   may wrap around);
//! - a result of a `map` whose lambda computes it from a parameter fed by an injective array
//!   through `x ± c`, `c ± x`, `x ^ c`, `c · x` (`c` a non-zero constant of magnitude at most
//!   2²⁰: wrap-around would need 2⁴³ elements), widening integer conversions and copies, `c`
//!   being constant or free in the lambda (the same in every iteration).
//!
//! The scatter is marked [`DISJOINT_INDICES`], so the Vulkan backend writes in one pass with
//! no owner array and no atomics. Only histograms of scalar rows are rewritten (vectorised ones after
//! [`super::hist_flatten`] have flattened indices, which this analysis does not follow).

use super::traverse::{fresh_lambda, host_bodies, mk_stm};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};
use std::collections::HashSet;

const I64: PrimType = PrimType::Int(IntType::I64);

/// The attribute of a `scatter` whose in-bounds indices are distinct: backends may write
/// without resolving conflicts (the Vulkan backend skips its claim pass).
pub const DISJOINT_INDICES: &str = "disjoint_indices";

/// The largest constant factor `c · x` may have to count as injective.
const MAX_FACTOR: i128 = 1 << 20;

/// Rewrites every histogram whose indices are provably distinct.
pub fn hist_disjoint(mut p: Program) -> Program {
    let mut ns = std::mem::take(&mut p.name_source);
    for f in &mut p.funs {
        let mut inj = HashSet::new();
        body(&mut ns, &mut inj, &mut f.body);
    }
    p.name_source = ns;
    p
}

/// `inj`: the arrays known to be injective so far (shared by nested bodies: names are unique).
fn body(ns: &mut NameSource, inj: &mut HashSet<VName>, b: &mut Body) {
    let mut out = Vec::with_capacity(b.stms.len());
    for mut s in std::mem::take(&mut b.stms) {
        learn(inj, &s);
        for nb in host_bodies(&mut s.exp) {
            body(ns, inj, nb);
        }
        match rewrite(ns, inj, &s) {
            Some(stms) => out.extend(stms),
            None => out.push(s),
        }
    }
    b.stms = out;
}

/// Records the injective arrays that `s` binds.
fn learn(inj: &mut HashSet<VName>, s: &Stm) {
    match (&s.exp, &s.pat.elems[..]) {
        (
            Exp::Iota {
                stride: SubExp::Const(c),
                it: IntType::I64 | IntType::U64,
                ..
            },
            [pe],
        ) if c.as_i128().is_some_and(|c| c != 0 && c.abs() <= MAX_FACTOR) => {
            inj.insert(pe.name.clone());
        }
        (Exp::Soac(Soac::Map { arrs, lam, .. }), pes) => {
            let base: HashSet<&VName> = lam
                .params
                .iter()
                .zip(arrs)
                .filter(|(_, a)| inj.contains(*a))
                .map(|(p, _)| &p.name)
                .collect();
            if base.is_empty() {
                return;
            }
            let bound = crate::ad::rev::bound_in(&lam.body.stms);
            let params: HashSet<&VName> = lam.params.iter().map(|p| &p.name).collect();
            let a = Analysis {
                body: &lam.body,
                base: &base,
                bound: &bound,
                params: &params,
            };
            for (r, pe) in lam.body.result.iter().zip(pes) {
                if matches!(pe.ty.elem(), Some(PrimType::Int(_)))
                    && pe.ty.rank() == 1
                    && a.injective(r, 0)
                {
                    inj.insert(pe.name.clone());
                }
            }
        }
        _ => {}
    }
}

/// Injectivity of a map lambda's results in one of its `base` parameters.
struct Analysis<'a> {
    body: &'a Body,
    /// Parameters fed by injective arrays.
    base: &'a HashSet<&'a VName>,
    /// Names bound in the lambda's body.
    bound: &'a HashSet<VName>,
    params: &'a HashSet<&'a VName>,
}

impl Analysis<'_> {
    /// The same in every iteration: a constant or a variable free in the lambda.
    fn invariant(&self, s: &SubExp) -> bool {
        match s {
            SubExp::Const(_) => true,
            SubExp::Var(v) => !self.bound.contains(v) && !self.params.contains(v),
        }
    }

    fn injective(&self, s: &SubExp, depth: usize) -> bool {
        let SubExp::Var(v) = s else {
            return false;
        };
        if self.base.contains(v) {
            return true;
        }
        if depth > 32 {
            return false;
        }
        let Some(stm) = self
            .body
            .stms
            .iter()
            .find(|t| t.pat.elems.len() == 1 && &t.pat.elems[0].name == v)
        else {
            return false;
        };
        let either = |a: &SubExp, b: &SubExp| {
            (self.injective(a, depth + 1) && self.invariant(b))
                || (self.injective(b, depth + 1) && self.invariant(a))
        };
        match &stm.exp {
            Exp::SubExp(a) => self.injective(a, depth + 1),
            Exp::BinOp(BinOp::Add(PrimType::Int(_)) | BinOp::Sub(PrimType::Int(_)), a, b)
            | Exp::BinOp(BinOp::Xor(_), a, b) => either(a, b),
            Exp::BinOp(BinOp::Mul(PrimType::Int(_)), a, b) => {
                let factor = |c: &SubExp| match c {
                    SubExp::Const(c) => {
                        c.as_i128().is_some_and(|c| c != 0 && c.abs() <= MAX_FACTOR)
                    }
                    _ => false,
                };
                (self.injective(a, depth + 1) && factor(b))
                    || (self.injective(b, depth + 1) && factor(a))
            }
            Exp::Conv(
                ConvOp {
                    from: PrimType::Int(f),
                    to: PrimType::Int(t),
                },
                a,
            ) => t.bits() >= f.bits() && self.injective(a, depth + 1),
            _ => false,
        }
    }
}

/// The gather and scatter replacing `s`, a histogram of scalars with injective indices.
fn rewrite(ns: &mut NameSource, inj: &HashSet<VName>, s: &Stm) -> Option<Vec<Stm>> {
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
    if !inj.contains(inds) || s.pat.elems.len() != dest.len() {
        return None;
    }
    let elems: Vec<PrimType> = s
        .pat
        .elems
        .iter()
        .map(|pe| match &pe.ty {
            Type::Array { elem, shape } if shape.len() == 1 => Some(*elem),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if op.lam.params.len() != 2 * dest.len() || vals.len() != dest.len() {
        return None;
    }
    let len = s.pat.elems[0].ty.shape().first()?.clone();
    // \ix v.. -> op(if 0 <= ix && ix < len then d[ix].. else ne.., v..)
    let ix = Param {
        name: ns.fresh("ix"),
        ty: Type::Prim(I64),
    };
    let vps: Vec<Param> = elems
        .iter()
        .map(|&e| Param {
            name: ns.fresh("v"),
            ty: Type::Prim(e),
        })
        .collect();
    let mut stms = vec![];
    let bind = |ns: &mut NameSource, stms: &mut Vec<Stm>, base: &str, t: PrimType, e: Exp| {
        let n = ns.fresh(base);
        stms.push(mk_stm(
            vec![Param {
                name: n.clone(),
                ty: Type::Prim(t),
            }],
            e,
        ));
        n
    };
    let ge = bind(
        ns,
        &mut stms,
        "ge",
        PrimType::Bool,
        Exp::CmpOp(
            CmpOp::Le(I64),
            SubExp::Const(PrimValue::I64(0)),
            SubExp::Var(ix.name.clone()),
        ),
    );
    let lt = bind(
        ns,
        &mut stms,
        "lt",
        PrimType::Bool,
        Exp::CmpOp(CmpOp::Lt(I64), SubExp::Var(ix.name.clone()), len),
    );
    let ok = bind(
        ns,
        &mut stms,
        "in_range",
        PrimType::Bool,
        Exp::BinOp(BinOp::LogAnd, SubExp::Var(ge), SubExp::Var(lt)),
    );
    let mut then_b = Body {
        stms: vec![],
        result: vec![],
    };
    for (d, &e) in dest.iter().zip(&elems) {
        let o = bind(
            ns,
            &mut then_b.stms,
            "old",
            e,
            Exp::Index(d.clone(), vec![DimIndex::Fix(SubExp::Var(ix.name.clone()))]),
        );
        then_b.result.push(SubExp::Var(o));
    }
    let olds: Vec<Param> = elems
        .iter()
        .map(|&e| Param {
            name: ns.fresh("old"),
            ty: Type::Prim(e),
        })
        .collect();
    stms.push(mk_stm(
        olds.clone(),
        Exp::If {
            cond: SubExp::Var(ok),
            then_b,
            else_b: Body {
                stms: vec![],
                result: op.neutral.clone(),
            },
            ret: elems.iter().map(|&e| ExtType::Prim(e)).collect(),
        },
    ));
    // The operator, inlined: its parameters bound to the old values and the updates.
    let f = fresh_lambda(ns, &op.lam);
    for (p, a) in f
        .params
        .iter()
        .zip(olds.iter().chain(&vps).map(|p| SubExp::Var(p.name.clone())))
    {
        stms.push(mk_stm(vec![p.clone()], Exp::SubExp(a)));
    }
    stms.extend(f.body.stms);
    let mut params = vec![ix];
    params.extend(vps);
    let lam = Lambda {
        params,
        body: Body {
            stms,
            result: f.body.result,
        },
        ret: elems.iter().map(|&e| Type::Prim(e)).collect(),
    };
    let news: Vec<Param> = elems
        .iter()
        .map(|&e| Param {
            name: ns.fresh("upd"),
            ty: Type::Array {
                elem: e,
                shape: vec![w.clone()],
            },
        })
        .collect();
    let mut arrs = vec![inds.clone()];
    arrs.extend(vals.iter().cloned());
    let mut gather = mk_stm(
        news.clone(),
        Exp::Soac(Soac::Map {
            w: w.clone(),
            arrs,
            lam,
        }),
    );
    let mut scatter = mk_stm(
        s.pat.elems.clone(),
        Exp::Soac(Soac::Scatter {
            w: w.clone(),
            dest: dest.clone(),
            inds: vec![inds.clone()],
            vals: news.into_iter().map(|p| p.name).collect(),
        }),
    );
    gather.loc = s.loc.clone();
    scatter.loc = s.loc.clone();
    scatter.attrs = s.attrs.clone();
    scatter.attrs.0.push(DISJOINT_INDICES.into());
    Some(vec![gather, scatter])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::{count_exps, rewrite_and_compare};

    fn hists(p: &Program) -> usize {
        count_exps(p, &|e| matches!(e, Exp::Soac(Soac::Hist { .. })))
    }
    fn scatters(p: &Program) -> usize {
        count_exps(p, &|e| matches!(e, Exp::Soac(Soac::Scatter { .. })))
    }

    /// `acc_to_hist` then this pass, compared with the original on the interpreter.
    fn run(src: &str, entry: &str, args: &str) -> (Program, Program) {
        rewrite_and_compare(src, entry, args, |p| {
            let p = crate::passes::acc_to_hist::acc_to_hist(p);
            hist_disjoint(p)
        })
    }

    #[test]
    fn worked_cases() {
        // ad-rules.md §7: x[2i] + x[2i+1] → x̄ = [1,1,2,2,3,3] without a histogram;
        // x[i/2] → x̄ = [3,7,11] must accumulate (stays a histogram).
        let src = "
def pairs [n] (x: [n]f64) : [3]f64 = map (\\i -> x[2*i] + x[2*i+1]) (iota 3)
entry inj (x: [6]f64) (ys: [3]f64) = vjp pairs x ys
def halves (x: [3]f64) : [6]f64 = map (\\i -> x[i/2]) (iota 6)
entry acc (x: [3]f64) (ys: [6]f64) = vjp halves x ys
";
        let (_, p) = run(src, "inj", "[1.0,2,3,4,5,6] [1.0,2,3]");
        let inj = p.funs.iter().find(|f| &*f.name == "inj").unwrap();
        let one = Program {
            funs: vec![inj.clone()],
            ..p.clone()
        };
        assert_eq!(hists(&one), 0);
        assert_eq!(scatters(&one), 2);
        let out = crate::interp::run_entry(
            &p,
            "inj",
            crate::values::parse_values(b"[1.0,2,3,4,5,6] [1.0,2,3]").unwrap(),
        )
        .unwrap();
        assert_eq!(
            format!("{:?}", out[0]),
            format!(
                "{:?}",
                crate::values::parse_values(b"[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]").unwrap()[0]
            )
        );
        let (_, p) = run(src, "acc", "[1.0,2,3] [1.0,2,3,4,5,6]");
        let acc = p.funs.iter().find(|f| &*f.name == "acc").unwrap();
        let one = Program {
            funs: vec![acc.clone()],
            ..p.clone()
        };
        assert_eq!(hists(&one), 1);
        assert_eq!(scatters(&one), 0);
    }

    #[test]
    fn injective_forms() {
        // Each index form, with out-of-range indices (ignored), other operators, tuples and
        // a stride; the result must match the histogram on the interpreter.
        for (idx, proved) in [
            ("i", true),
            ("i + k", true),
            ("k - i", true),
            ("3 * i - 2", true),
            ("i64.i32 (i32.i64 i)", false),
            ("i64.i32 (5 + i32.i64 i) ^ 2", false),
            ("i / 2", false),
            ("i % 3", false),
            ("i * 0", false),
            ("(i * 2) / 2", false),
            ("i + i", false),
        ] {
            let src = format!(
                "entry f [n] (d: [n]f64) (vs: []f64) (k: i64) =
                   let is = map (\\i -> {idx}) (indices vs)
                   in (reduce_by_index (copy d) (+) 0 is vs,
                       reduce_by_index (copy d) f64.max f64.lowest is vs,
                       reduce_by_index (zip (copy d) (copy d)) (\\(a, b) (c, e) -> (a * c, b + e)) (1, 0) is (zip vs vs))"
            );
            let args = "[1.0, 2.0, 3.0, 4.0, 5.0] [0.5, -1.0, 2.0, 7.0, 1.5, 3.0, -2.5] 2i64";
            let (before, after) = rewrite_and_compare(&src, "f", args, hist_disjoint);
            assert_eq!(hists(&before), 3);
            let want = if proved { 0 } else { 3 };
            assert_eq!(hists(&after), want, "{idx}");
        }
        // Narrowing conversions are not injective (i32 → i8 wraps).
        let src = "entry f [n] (d: [n]f64) (vs: []f64) =
                     let is = map (\\i -> i64.i8 (i8.i64 (i * 200))) (indices vs)
                     in reduce_by_index (copy d) (+) 0 is vs";
        let (_, after) = rewrite_and_compare(src, "f", "[1.0, 2.0] [1.0, 2.0, 3.0]", hist_disjoint);
        assert_eq!(hists(&after), 1);
        // iota with a stride, and an index array that is a parameter (not provable).
        let src = "entry f [n] (d: [n]f64) (vs: [3]f64) (is: [3]i64) =
                     (reduce_by_index (copy d) (+) 0 (map (+1) (iota 3)) vs,
                      reduce_by_index (copy d) (+) 0 is vs)";
        let (_, after) = rewrite_and_compare(
            src,
            "f",
            "[1.0, 2.0, 3.0] [1.0, 2.0, 3.0] [0i64, 0i64, 2i64]",
            hist_disjoint,
        );
        assert_eq!(hists(&after), 1);
    }
}
