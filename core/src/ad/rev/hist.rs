//! The return sweep of `reduce_by_index` (ad-rules.md §4, paper 001). With `w` bins, `m`
//! elements and `b = is[i]` (elements with `b` outside `[0, w)` are ignored and get a zero
//! adjoint), by the operator:
//! - `+` (also vectorised, rows that are arrays): `h̄ += ȳ`, `āᵢ += ȳ[b]`.
//! - `*`: recomputes zero counts `zc` and products of the non-zero elements `nzp` per bin;
//!   `h̄_b += (zc_b > 0 ? 0 : nzp_b)·ȳ_b`; `āᵢ += h_b·nzp_b/aᵢ·ȳ_b` when `zc_b = 0`,
//!   `h_b·nzp_b·ȳ_b` when `zc_b = 1` and `aᵢ = 0`, else 0 (no division by zero anywhere).
//! - `min`/`max`: recomputes the histogram of (value, index) pairs whose operator keeps the lower
//!   index on equal values; the original bin value carries index −1 so it wins its ties. Then
//!   `h̄_b += ȳ_b` where the original won, else `ā[winner_b] += ȳ_b` (a conflict-free scatter).
//! - any other operator ⊙ (scalar rows, one or more arrays): the generic rule of
//!   [`Rev::rev_hist_generic`].

use super::radix::{
    i64s, i64t, if_then_else, in_range, iota, replicate, scatter, select, to_i64, zeros_in, I64,
};
use super::{Rev, R};
use crate::ir::builder::{lambda, var, Builder};
use crate::ir::*;
use crate::prim::{PrimType, PrimValue};

/// `\a b -> a op b` (or `b op a` for a commutative `op`), or a `map` of such a lambda over two
/// arrays (any depth): the operator and the number of `map` levels around it.
pub(super) fn elementwise_binop(lam: &Lambda) -> Option<(BinOp, usize)> {
    let [a, b] = lam.params.as_slice() else {
        return None;
    };
    let [stm] = lam.body.stms.as_slice() else {
        return None;
    };
    let [r] = stm.pat.elems.as_slice() else {
        return None;
    };
    if lam.body.result.as_slice() != [SubExp::Var(r.name.clone())] {
        return None;
    }
    match &stm.exp {
        Exp::BinOp(op, SubExp::Var(x), SubExp::Var(y)) => {
            let commutative = matches!(
                op,
                BinOp::Add(_) | BinOp::Mul(_) | BinOp::Min(_) | BinOp::Max(_)
            );
            if (x == &a.name && y == &b.name) || (commutative && x == &b.name && y == &a.name) {
                Some((*op, 0))
            } else {
                None
            }
        }
        Exp::Soac(Soac::Map {
            arrs, lam: inner, ..
        }) if arrs.as_slice() == [a.name.clone(), b.name.clone()] => {
            elementwise_binop(inner).map(|(op, d)| (op, d + 1))
        }
        _ => None,
    }
}

impl Rev<'_> {
    pub(super) fn rev_hist(&mut self, stm: &Stm) -> R<()> {
        let Exp::Soac(Soac::Hist {
            w,
            dest,
            op,
            inds,
            vals,
        }) = &stm.exp
        else {
            return Err("reduce_by_index (internal error)".into());
        };
        let adjs = self.take_result_adjs(&stm.pat);
        let it = match self.ty_of(inds)?.elem() {
            Some(p @ PrimType::Int(_)) => p,
            _ => return Err("reduce_by_index with non-integer indices (internal error)".into()),
        };
        let hty = stm.pat.elems[0].ty.clone();
        let nbins = hty
            .shape()
            .first()
            .cloned()
            .ok_or("reduce_by_index into a non-array (internal error)")?;
        let h = HistParts {
            w: w.clone(),
            nbins,
            inds: inds.clone(),
            it,
        };
        if dest.len() == 1 {
            if let Some((bop, depth)) = elementwise_binop(&op.lam) {
                let Some((ybar, owned)) = adjs[0].clone() else {
                    return Ok(());
                };
                let SubExp::Var(yb) = ybar else {
                    return Err("a constant array adjoint (internal error)".into());
                };
                match (bop, depth) {
                    (BinOp::Add(_), _) => {
                        return self.rev_hist_add(&h, &dest[0], &vals[0], yb, owned)
                    }
                    (BinOp::Mul(p), 0) => return self.rev_hist_mul(&h, p, &dest[0], &vals[0], &yb),
                    (BinOp::Min(p) | BinOp::Max(p), 0) => {
                        return self.rev_hist_minmax(&h, bop, p, op, &dest[0], &vals[0], &yb)
                    }
                    _ => {}
                }
            }
        }
        self.rev_hist_generic(stm, &h, adjs)
    }

    /// `+`: `h̄ += ȳ`, `āᵢ += ȳ[b]` (rows of any rank).
    fn rev_hist_add(
        &mut self,
        h: &HistParts,
        dest: &VName,
        vals: &VName,
        yb: VName,
        owned: bool,
    ) -> R<()> {
        let row = self.ty_of(vals)?.row();
        let abar = self.build(|b| {
            let lam = lambda(
                b.ns,
                &[("i", Type::Prim(h.it))],
                vec![row.clone()],
                |b, ps| {
                    let (bin, inb) = h.bin(b, &ps[0]);
                    let g = if_then_else(
                        b,
                        inb,
                        &row,
                        |b| {
                            var(&b.bind(
                                "g",
                                row.clone(),
                                Exp::Index(yb.clone(), vec![DimIndex::Fix(bin)]),
                            ))
                        },
                        |b| zeros_in(b, &row),
                    );
                    vec![var(&g)]
                },
            );
            b.map(h.w.clone(), vec![h.inds.clone()], lam)[0].clone()
        });
        self.add_adj(vals, var(&abar), true)?;
        self.add_adj(dest, var(&yb), owned)
    }

    /// `*`, by zero counts and products of the non-zero elements.
    fn rev_hist_mul(
        &mut self,
        h: &HistParts,
        p: PrimType,
        dest: &VName,
        vals: &VName,
        yb: &VName,
    ) -> R<()> {
        let n = h.nbins.clone();
        let pt = Type::Prim(p);
        let zero = SubExp::Const(PrimValue::zero(p));
        let one = one_of(p);
        let (hbar, abar) = self.build(|b| {
            // Zero counts and non-zero products per bin.
            let lam = lambda(
                b.ns,
                &[("a", pt.clone())],
                vec![i64t(), pt.clone()],
                |b, ps| {
                    let z = b.cmp(CmpOp::Eq(p), var(&ps[0]), zero.clone());
                    let c = select(b, var(&z), SubExp::i64(1), SubExp::i64(0), &i64t());
                    let v = select(b, var(&z), one.clone(), var(&ps[0]), &pt);
                    vec![var(&c), var(&v)]
                },
            );
            let cv = b.map(h.w.clone(), vec![vals.clone()], lam);
            let zc0 = replicate(b, &n, SubExp::i64(0), &i64t());
            let zc = h.hist(b, zc0, &i64t(), BinOp::Add(I64), SubExp::i64(0), &cv[0]);
            let nzp0 = replicate(b, &n, one.clone(), &pt);
            let nzp = h.hist(b, nzp0, &pt, BinOp::Mul(p), one.clone(), &cv[1]);
            // h̄_b = (zc_b > 0 ? 0 : nzp_b)·ȳ_b
            let lam = lambda(
                b.ns,
                &[("zc", i64t()), ("nzp", pt.clone()), ("y", pt.clone())],
                vec![pt.clone()],
                |b, ps| {
                    let has0 = b.cmp(CmpOp::Lt(I64), SubExp::i64(0), var(&ps[0]));
                    let f = select(b, var(&has0), zero.clone(), var(&ps[1]), &pt);
                    vec![var(&b.binop(BinOp::Mul(p), var(&f), var(&ps[2])))]
                },
            );
            let hbar = b.map(n.clone(), vec![zc.clone(), nzp.clone(), yb.clone()], lam)[0].clone();
            // āᵢ
            let lam = lambda(
                b.ns,
                &[("i", Type::Prim(h.it)), ("a", pt.clone())],
                vec![pt.clone()],
                |b, ps| {
                    let (bin, inb) = h.bin(b, &ps[0]);
                    let a = var(&ps[1]);
                    let r = if_then_else(
                        b,
                        inb,
                        &pt,
                        |b| {
                            let at = |b: &mut Builder, arr: &VName, t: &Type| {
                                var(&b.bind(
                                    "x",
                                    t.clone(),
                                    Exp::Index(arr.clone(), vec![DimIndex::Fix(bin.clone())]),
                                ))
                            };
                            let z = at(b, &zc, &i64t());
                            let q = at(b, &nzp, &pt);
                            let hb = at(b, dest, &pt);
                            let y = at(b, yb, &pt);
                            let hq = b.binop(BinOp::Mul(p), hb, q);
                            let hqy = var(&b.binop(BinOp::Mul(p), var(&hq), y));
                            let no_zero = b.cmp(CmpOp::Eq(I64), z.clone(), SubExp::i64(0));
                            var(&if_then_else(
                                b,
                                var(&no_zero),
                                &pt,
                                |b| var(&b.binop(BinOp::Div(p), hqy.clone(), a.clone())),
                                |b| {
                                    let one_zero = b.cmp(CmpOp::Eq(I64), z.clone(), SubExp::i64(1));
                                    let is0 = b.cmp(CmpOp::Eq(p), a.clone(), zero.clone());
                                    let both = b.binop(BinOp::LogAnd, var(&one_zero), var(&is0));
                                    var(&select(b, var(&both), hqy.clone(), zero.clone(), &pt))
                                },
                            ))
                        },
                        |_| zero.clone(),
                    );
                    vec![var(&r)]
                },
            );
            let abar = b.map(h.w.clone(), vec![h.inds.clone(), vals.clone()], lam)[0].clone();
            (hbar, abar)
        });
        self.add_adj(vals, var(&abar), true)?;
        self.add_adj(dest, var(&hbar), true)
    }

    /// `min`/`max`: the winner of every bin (−1 for the original value), then a scatter.
    #[allow(clippy::too_many_arguments)] // the pieces of one hist statement
    fn rev_hist_minmax(
        &mut self,
        h: &HistParts,
        bop: BinOp,
        p: PrimType,
        op: &Operator,
        dest: &VName,
        vals: &VName,
        yb: &VName,
    ) -> R<()> {
        let n = h.nbins.clone();
        let pt = Type::Prim(p);
        let zero = SubExp::Const(PrimValue::zero(p));
        let ne = op.neutral[0].clone();
        let (hbar, abar) = self.build(|b| {
            let hv = b.bind("hist_copy", pt.array_of(n.clone()), Exp::Copy(dest.clone()));
            let hi = replicate(b, &n, SubExp::i64(-1), &i64t());
            let js = iota(b, &h.w);
            // (v1, i1) ⊙ (v2, i2): the better value; on equal values the lower index.
            let lam = lambda(
                b.ns,
                &[
                    ("v1", pt.clone()),
                    ("i1", i64t()),
                    ("v2", pt.clone()),
                    ("i2", i64t()),
                ],
                vec![pt.clone(), i64t()],
                |b, ps| {
                    let (v1, i1, v2, i2) = (var(&ps[0]), var(&ps[1]), var(&ps[2]), var(&ps[3]));
                    let r = b.binop(bop, v1.clone(), v2.clone());
                    let eq = b.cmp(CmpOp::Eq(p), v1.clone(), v2);
                    let lo = var(&b.binop(BinOp::Min(I64), i1.clone(), i2.clone()));
                    let first = b.cmp(CmpOp::Eq(p), var(&r), v1);
                    let pick = var(&select(b, var(&first), i1, i2, &i64t()));
                    let i = select(b, var(&eq), lo, pick, &i64t());
                    vec![var(&r), var(&i)]
                },
            );
            let op2 = Operator {
                lam,
                neutral: vec![ne.clone(), SubExp::i64(i64::MAX)],
                commutative: true,
            };
            let res = b.bind_many(
                &[("hist_v", pt.array_of(n.clone())), ("winner", i64s(&n))],
                Exp::Soac(Soac::Hist {
                    w: h.w.clone(),
                    dest: vec![hv, hi],
                    op: op2,
                    inds: h.inds.clone(),
                    vals: vec![vals.clone(), js],
                }),
            );
            let win = res[1].clone();
            // h̄_b = ȳ_b where the original won.
            let lam = lambda(
                b.ns,
                &[("w", i64t()), ("y", pt.clone())],
                vec![pt.clone()],
                |b, ps| {
                    let orig = b.cmp(CmpOp::Eq(I64), var(&ps[0]), SubExp::i64(-1));
                    vec![var(&select(b, var(&orig), var(&ps[1]), zero.clone(), &pt))]
                },
            );
            let hbar = b.map(n.clone(), vec![win.clone(), yb.clone()], lam)[0].clone();
            // ā[winner_b] = ȳ_b (−1 is out of range: ignored).
            let z = replicate(b, &h.w, zero.clone(), &pt);
            let abar = scatter(
                b,
                &n,
                vec![(z, pt.array_of(h.w.clone()))],
                vec![win],
                vec![yb.clone()],
            )[0]
            .clone();
            (hbar, abar)
        });
        self.add_adj(vals, var(&abar), true)?;
        self.add_adj(dest, var(&hbar), true)
    }
}

/// The parts of a `reduce_by_index` every rule uses.
pub(super) struct HistParts {
    /// Number of elements.
    pub w: SubExp,
    /// Number of bins.
    pub nbins: SubExp,
    /// The bin of every element.
    pub inds: VName,
    /// The type of the bins.
    pub it: PrimType,
}

impl HistParts {
    /// The bin (an `i64`) of the index param `i`, and whether it is in range.
    pub fn bin(&self, b: &mut Builder, i: &VName) -> (SubExp, SubExp) {
        let bin = to_i64(b, var(i), self.it);
        let inb = in_range(b, &bin, &self.nbins);
        (bin, inb)
    }

    /// `reduce_by_index init (op) ne inds vals` for scalar `op` on elements of type `ty`.
    pub fn hist(
        &self,
        b: &mut Builder,
        init: VName,
        ty: &Type,
        op: BinOp,
        ne: SubExp,
        vals: &VName,
    ) -> VName {
        let op = crate::ir::builder::binop_operator(b.ns, op, ne, true);
        b.bind(
            "hist",
            ty.array_of(self.nbins.clone()),
            Exp::Soac(Soac::Hist {
                w: self.w.clone(),
                dest: vec![init],
                op,
                inds: self.inds.clone(),
                vals: vec![vals.clone()],
            }),
        )
    }
}

/// The one of a type.
pub(super) fn one_of(p: PrimType) -> SubExp {
    SubExp::Const(match p {
        PrimType::Int(it) => PrimValue::int(it, 1),
        PrimType::Float(ft) => PrimValue::float(ft, 1.0),
        PrimType::Bool => PrimValue::Bool(true),
    })
}

impl Rev<'_> {
    /// Any other operator: not supported yet.
    fn rev_hist_generic(
        &mut self,
        _stm: &Stm,
        _h: &HistParts,
        _adjs: Vec<Option<(SubExp, bool)>>,
    ) -> R<()> {
        Err("reduce_by_index with this operator".into())
    }
}

#[cfg(test)]
#[path = "tests_hist.rs"]
mod tests_hist;
