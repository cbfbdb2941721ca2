//! Histograms whose indices are provably distinct are marked `#[disjoint_indices]` (paper 003):
//!
//! ```text
//! let is = map(w, {iota w, ..}, \i .. -> 2 * i + 1)          -- injective in i
//! let r  = hist(w, {d}, op, is, {vs})
//! ==>
//! let r  = #[disjoint_indices] hist(w, {d}, op, is, {vs})
//! ```
//!
//! When no two in-range indices are equal, every element of the destination receives at most
//! one update, so a backend may apply each update as a plain read-modify-write, with no
//! atomics and no compare-exchange loop (the Vulkan backend does). The meaning is unchanged.
//! Reverse-mode AD turns reads of free arrays in a `map` into accumulator updates, which
//! [`super::acc_to_hist`] turns into histograms; reads at `x[2i]` and `x[2i+1]` thus become two
//! such histograms, each with provably distinct indices, while `x[i/2]` stays unmarked (its
//! updates must be combined).
//!
//! **What is proved injective** (in-range values pairwise distinct), per body, following
//! the statements in order (names are bound once):
//! - `iota n start stride` of 64-bit integers with a constant non-zero stride (narrower ones
//!   may wrap around);
//! - a result of a `map` whose lambda computes it from a parameter fed by an injective array
//!   through `x ± c`, `c ± x`, `x ^ c`, `c · x` (`c` a non-zero constant of magnitude at most
//!   2²⁰: wrap-around would need 2⁴³ elements), widening integer conversions and copies, `c`
//!   being the same in every iteration (a constant, free in the lambda, or computed in it from
//!   those alone, as `n - 1`).
//!
//! Vectorised histograms after [`super::hist_flatten`] have flattened indices
//! (`b * k + t % k`), which this analysis does not follow: they stay unmarked.

use super::traverse::host_bodies;
use crate::ir::*;
use crate::prim::{IntType, PrimType};
use std::collections::HashSet;

/// The attribute of a `reduce_by_index` whose in-range indices are distinct: backends may
/// update without atomics.
pub const DISJOINT_INDICES: &str = "disjoint_indices";

/// The largest constant factor `c · x` may have to count as injective.
const MAX_FACTOR: i128 = 1 << 20;

/// Rewrites every histogram whose indices are provably distinct.
pub fn hist_disjoint(mut p: Program) -> Program {
    for f in &mut p.funs {
        let mut inj = HashSet::new();
        body(&mut inj, &mut f.body);
    }
    p
}

/// `inj`: the arrays known to be injective so far (shared by nested bodies: names are unique).
fn body(inj: &mut HashSet<VName>, b: &mut Body) {
    let mut out = Vec::with_capacity(b.stms.len());
    for mut s in std::mem::take(&mut b.stms) {
        learn(inj, &s);
        for nb in host_bodies(&mut s.exp) {
            body(inj, nb);
        }
        match rewrite(inj, &s) {
            Some(t) => out.push(t),
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
    /// The statement of the lambda's body that binds `v` alone.
    fn def(&self, v: &VName) -> Option<&Stm> {
        self.body
            .stms
            .iter()
            .find(|t| t.pat.elems.len() == 1 && &t.pat.elems[0].name == v)
    }

    /// The same in every iteration: a constant, a variable free in the lambda, or a scalar the
    /// lambda computes from those alone (`n - 1`).
    fn invariant(&self, s: &SubExp) -> bool {
        self.invariant_at(s, 0)
    }

    fn invariant_at(&self, s: &SubExp, depth: usize) -> bool {
        let v = match s {
            SubExp::Const(_) => return true,
            SubExp::Var(v) => v,
        };
        if self.params.contains(v) || depth > 32 {
            return false;
        }
        if !self.bound.contains(v) {
            return true;
        }
        let Some(stm) = self.def(v) else {
            return false;
        };
        match &stm.exp {
            Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Conv(_, a) => self.invariant_at(a, depth + 1),
            Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) => {
                self.invariant_at(a, depth + 1) && self.invariant_at(b, depth + 1)
            }
            _ => false,
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
        let Some(stm) = self.def(v) else {
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

/// `s` marked [`DISJOINT_INDICES`], when it is a histogram with injective indices.
fn rewrite(inj: &HashSet<VName>, s: &Stm) -> Option<Stm> {
    let Exp::Soac(Soac::Hist { inds, .. }) = &s.exp else {
        return None;
    };
    if !inj.contains(inds) || s.attrs.has(DISJOINT_INDICES) {
        return None;
    }
    let mut t = s.clone();
    t.attrs.0.push(DISJOINT_INDICES.into());
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::{count_exps, rewrite_and_compare};

    fn hists(p: &Program) -> usize {
        count_exps(p, &|e| matches!(e, Exp::Soac(Soac::Hist { .. })))
    }
    /// Histograms marked disjoint.
    fn marked(p: &Program) -> usize {
        fn body(b: &Body) -> usize {
            b.stms
                .iter()
                .map(|s| {
                    let mut e = s.exp.clone();
                    usize::from(s.attrs.has(DISJOINT_INDICES))
                        + crate::passes::traverse::nested_bodies(&mut e)
                            .into_iter()
                            .map(|b| body(b))
                            .sum::<usize>()
                })
                .sum()
        }
        p.funs.iter().map(|f| body(&f.body)).sum()
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
        assert_eq!(hists(&one), 2);
        assert_eq!(marked(&one), 2);
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
        assert_eq!(marked(&one), 0);
    }

    #[test]
    fn injective_forms() {
        // Each index form, with out-of-range indices (ignored), other operators, tuples and
        // a stride; the result must match the histogram on the interpreter.
        for (idx, proved) in [
            ("i", true),
            ("i + k", true),
            ("k - i", true),
            ("k * 2 - 1 - i", true),
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
            let want = if proved { 3 } else { 0 };
            assert_eq!(marked(&after), want, "{idx}");
        }
        // Narrowing conversions are not injective (i32 → i8 wraps).
        let src = "entry f [n] (d: [n]f64) (vs: []f64) =
                     let is = map (\\i -> i64.i8 (i8.i64 (i * 200))) (indices vs)
                     in reduce_by_index (copy d) (+) 0 is vs";
        let (_, after) = rewrite_and_compare(src, "f", "[1.0, 2.0] [1.0, 2.0, 3.0]", hist_disjoint);
        assert_eq!(marked(&after), 0);
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
        assert_eq!(marked(&after), 1);
    }
}
