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
//!
//! Free float variables of the operator (only possible in the generic case) get the sum of
//! their contributions from every application (see [`super::free_ops`]).

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

/// Binds the params of `op` (a fresh copy, used once) to `args` and emits its statements;
/// returns its results.
fn inline_op(b: &mut Builder, op: Lambda, args: &[SubExp]) -> Vec<SubExp> {
    for (p, a) in op.params.into_iter().zip(args) {
        b.push(super::one_stm(p, Exp::SubExp(a.clone())));
    }
    for s in op.body.stms {
        b.push(s);
    }
    op.body.result
}

/// A segmented inclusive scan of the `k` arrays `arrs` (rows `rows`) with the operator `op`
/// (a fresh copy), segments starting where `flags` is true: the operator on (flag, values)
/// pairs is `(f1, v1) ⊕ (f2, v2) = (f1 || f2, f2 ? v2 : v1 ⊙ v2)` (`v2 ⊙ v1` when `flip`).
#[allow(clippy::too_many_arguments)] // the pieces of one scan
fn seg_scan(
    b: &mut Builder,
    n: &SubExp,
    flags: &VName,
    arrs: &[VName],
    rows: &[Type],
    op: Lambda,
    ne: &[SubExp],
    flip: bool,
) -> Vec<VName> {
    let k = rows.len();
    let bt = Type::Prim(PrimType::Bool);
    let mut ps: Vec<(&str, Type)> = vec![("f1", bt.clone())];
    ps.extend(rows.iter().map(|t| ("v1", t.clone())));
    ps.push(("f2", bt.clone()));
    ps.extend(rows.iter().map(|t| ("v2", t.clone())));
    let mut ret = vec![bt.clone()];
    ret.extend(rows.iter().cloned());
    let lam = lambda(b.ns, &ps, ret.clone(), |b, ps| {
        let v1: Vec<SubExp> = ps[1..=k].iter().map(var).collect();
        let v2: Vec<SubExp> = ps[k + 2..].iter().map(var).collect();
        let f = b.binop(BinOp::LogOr, var(&ps[0]), var(&ps[k + 1]));
        let then_b = b.body(|_| v2.clone());
        let else_b = b.body(|b| {
            let mut args = if flip { v2.clone() } else { v1.clone() };
            args.extend(if flip { v1.clone() } else { v2.clone() });
            inline_op(b, op, &args)
        });
        let pat: Vec<(&str, Type)> = rows.iter().map(|t| ("v", t.clone())).collect();
        let vs = b.bind_many(
            &pat,
            Exp::If {
                cond: var(&ps[k + 1]),
                then_b,
                else_b,
                ret: rows.iter().map(|t| t.to_ext()).collect(),
            },
        );
        let mut out = vec![var(&f)];
        out.extend(vs.iter().map(var));
        out
    });
    let mut neutral = vec![SubExp::Const(PrimValue::Bool(false))];
    neutral.extend(ne.iter().cloned());
    let mut inputs = vec![flags.clone()];
    inputs.extend(arrs.iter().cloned());
    let pat: Vec<(&str, Type)> = ret
        .iter()
        .map(|t| ("segscan", t.array_of(n.clone())))
        .collect();
    let res = b.bind_many(
        &pat,
        Exp::Soac(Soac::Scan {
            w: n.clone(),
            arrs: inputs,
            op: Operator {
                lam,
                neutral,
                commutative: false,
            },
        }),
    );
    res[1..].to_vec()
}

/// `arr[i]` for an array of rows `row`.
fn at(b: &mut Builder, arr: &VName, i: SubExp, row: &Type) -> SubExp {
    var(&b.bind(
        "x",
        row.clone(),
        Exp::Index(arr.clone(), vec![DimIndex::Fix(i)]),
    ))
}

/// `map (\i -> arr[i]) idx` for an `[len]i64` array `idx`.
fn gather(b: &mut Builder, len: &SubExp, idx: &VName, arr: &VName, row: &Type) -> VName {
    let lam = lambda(b.ns, &[("i", i64t())], vec![row.clone()], |b, ps| {
        vec![at(b, arr, var(&ps[0]), row)]
    });
    b.map(len.clone(), vec![idx.clone()], lam)[0].clone()
}

/// What the generic rule keeps for the adjoints of the operator's free variables.
struct FvParts {
    /// The number of elements with an in-range bin.
    cnt: SubExp,
    /// The bin reductions.
    s: Vec<VName>,
    /// `lis`, the sorted elements and `ris` (`cnt` rows each).
    lar_arrs: Vec<VName>,
    /// `s̄[bin]` of the sorted elements.
    sbars: Vec<VName>,
}

/// Fresh copies of the operator for the generic rule.
struct OpCopies {
    left: Lambda,
    right: Lambda,
    outer: Lambda,
    lar1: Lambda,
    lar2: Lambda,
}

impl Rev<'_> {
    /// Any other (associative, commutative) operator ⊙ (paper 001): the elements with an
    /// in-range bin are filtered out, radix-sorted by bin (⌈log₂ w⌉ bits, stable), and for each
    /// sorted element the exclusive segmented scans from the left (`lis`) and from the right
    /// (`ris`, on the reversed data) give the rest of its bin, so
    /// `ā = ∂(lis ⊙ a ⊙ ris)/∂a · s̄[bin]` where `s` are the bin reductions (`ne` when empty),
    /// `y = h ⊙ s`, `h̄ = ∂(h ⊙ s)/∂h · ȳ` and `s̄ = ∂(h ⊙ s)/∂s · ȳ`. The adjoints are
    /// scattered back to the original positions; filtered elements get 0.
    fn rev_hist_generic(
        &mut self,
        stm: &Stm,
        h: &HistParts,
        adjs: Vec<Option<(SubExp, bool)>>,
    ) -> R<()> {
        let Exp::Soac(Soac::Hist { dest, op, vals, .. }) = &stm.exp else {
            return Err("reduce_by_index (internal error)".into());
        };
        let k = dest.len();
        let mut rows = vec![];
        for v in vals {
            rows.push(self.ty_of(v)?.row());
        }
        let n = h.nbins.clone();
        let m = h.w.clone();
        let mut ybars = vec![];
        for (t, a) in adjs.iter().enumerate() {
            ybars.push(match a {
                Some((SubExp::Var(v), _)) => v.clone(),
                _ => {
                    let ty = rows[t].array_of(n.clone());
                    match self.zeros(&ty)? {
                        SubExp::Var(v) => v,
                        SubExp::Const(_) => return Err("a constant array (internal error)".into()),
                    }
                }
            });
        }
        let copies = OpCopies {
            left: self.rename_lambda(&op.lam),
            right: self.rename_lambda(&op.lam),
            outer: self.rename_lambda(&op.lam),
            lar1: self.rename_lambda(&op.lam),
            lar2: self.rename_lambda(&op.lam),
        };
        let ne = op.neutral.clone();
        // The free variables of the operator are constants of its derivatives.
        let env = self.types.clone();
        let (hbars, abars, fv) = self.build(|b| -> R<(Vec<VName>, Vec<VName>, FvParts)> {
            // 1. Keep the elements whose bin is in range, in order.
            let lam = lambda(
                b.ns,
                &[("i", Type::Prim(h.it))],
                vec![i64t(), i64t()],
                |b, ps| {
                    let (bin, inb) = h.bin(b, &ps[0]);
                    let f = select(b, inb, SubExp::i64(1), SubExp::i64(0), &i64t());
                    vec![var(&f), bin]
                },
            );
            let fb = b.map(m.clone(), vec![h.inds.clone()], lam);
            let (kf, bins) = (fb[0].clone(), fb[1].clone());
            let pos = super::radix::scan_add_i64(b, &m, &kf);
            let cnt = var(&super::radix::sum_i64(b, &m, &kf));
            let lam = lambda(
                b.ns,
                &[("f", i64t()), ("p", i64t())],
                vec![i64t()],
                |b, ps| {
                    let keep = b.cmp(CmpOp::Eq(I64), var(&ps[0]), SubExp::i64(1));
                    let p1 = b.binop(BinOp::Sub(I64), var(&ps[1]), SubExp::i64(1));
                    vec![var(&select(
                        b,
                        var(&keep),
                        var(&p1),
                        SubExp::i64(-1),
                        &i64t(),
                    ))]
                },
            );
            let tgt = b.map(m.clone(), vec![kf, pos], lam)[0].clone();
            let js = iota(b, &m);
            let z1 = replicate(b, &cnt, SubExp::i64(0), &i64t());
            let z2 = replicate(b, &cnt, SubExp::i64(0), &i64t());
            let kept = scatter(
                b,
                &m,
                vec![(z1, i64s(&cnt)), (z2, i64s(&cnt))],
                vec![tgt],
                vec![bins, js],
            );
            // 2. Sort them by bin.
            let bits = super::radix::key_bits(b, &n);
            let (sb, perm) = super::radix::radix_sort_by_key(b, &cnt, &kept[0], &bits);
            let sp = gather(b, &cnt, &perm, &kept[1], &i64t());
            let sa: Vec<VName> = vals
                .iter()
                .zip(&rows)
                .map(|(v, r)| gather(b, &cnt, &sp, v, r))
                .collect();
            // 3. Segment start and end flags.
            let bt = Type::Prim(PrimType::Bool);
            let last = var(&b.binop(BinOp::Sub(I64), cnt.clone(), SubExp::i64(1)));
            let lam = lambda(
                b.ns,
                &[("j", i64t())],
                vec![bt.clone(), bt.clone()],
                |b, ps| {
                    let j = var(&ps[0]);
                    let first = b.cmp(CmpOp::Eq(I64), j.clone(), SubExp::i64(0));
                    let sf = if_then_else(
                        b,
                        var(&first),
                        &bt,
                        |_| SubExp::Const(PrimValue::Bool(true)),
                        |b| {
                            let jm = b.binop(BinOp::Sub(I64), j.clone(), SubExp::i64(1));
                            let x = at(b, &sb, var(&jm), &i64t());
                            let y = at(b, &sb, j.clone(), &i64t());
                            let eq = b.cmp(CmpOp::Eq(I64), x, y);
                            var(&b.unop(UnOp::Not(PrimType::Bool), var(&eq)))
                        },
                    );
                    let is_last = b.cmp(CmpOp::Eq(I64), j.clone(), last.clone());
                    let ef = if_then_else(
                        b,
                        var(&is_last),
                        &bt,
                        |_| SubExp::Const(PrimValue::Bool(true)),
                        |b| {
                            let jp = b.binop(BinOp::Add(I64), j.clone(), SubExp::i64(1));
                            let x = at(b, &sb, var(&jp), &i64t());
                            let y = at(b, &sb, j.clone(), &i64t());
                            let eq = b.cmp(CmpOp::Eq(I64), x, y);
                            var(&b.unop(UnOp::Not(PrimType::Bool), var(&eq)))
                        },
                    );
                    vec![var(&sf), var(&ef)]
                },
            );
            let jc = iota(b, &cnt);
            let fl = b.map(cnt.clone(), vec![jc.clone()], lam);
            let (sflag, eflag) = (fl[0].clone(), fl[1].clone());
            // 4. Segmented scans from the left and (on reversed data) from the right.
            let incl = seg_scan(b, &cnt, &sflag, &sa, &rows, copies.left, &ne, false);
            let rev_idx = {
                let lam = lambda(b.ns, &[("j", i64t())], vec![i64t()], |b, ps| {
                    vec![var(&b.binop(BinOp::Sub(I64), last.clone(), var(&ps[0])))]
                });
                b.map(cnt.clone(), vec![jc.clone()], lam)[0].clone()
            };
            let rflag = gather(b, &cnt, &rev_idx, &eflag, &bt);
            let ra: Vec<VName> = sa
                .iter()
                .zip(&rows)
                .map(|(a, r)| gather(b, &cnt, &rev_idx, a, r))
                .collect();
            let rincl = seg_scan(b, &cnt, &rflag, &ra, &rows, copies.right, &ne, true);
            // lis[j] = sflag[j] ? ne : incl[j-1]; ris[j] = eflag[j] ? ne : rincl[cnt-2-j].
            let ps: Vec<(&str, Type)> = vec![("j", i64t()), ("sf", bt.clone()), ("ef", bt.clone())];
            let mut ret = rows.clone();
            ret.extend(rows.iter().cloned());
            let lam = lambda(b.ns, &ps, ret.clone(), |b, ps| {
                let j = var(&ps[0]);
                let tl = b.body(|_| ne.clone());
                let el = b.body(|b| {
                    let jm = var(&b.binop(BinOp::Sub(I64), j.clone(), SubExp::i64(1)));
                    incl.iter()
                        .zip(&rows)
                        .map(|(a, r)| at(b, a, jm.clone(), r))
                        .collect()
                });
                let tr = b.body(|_| ne.clone());
                let er = b.body(|b| {
                    let t = var(&b.binop(BinOp::Sub(I64), last.clone(), j.clone()));
                    let t = var(&b.binop(BinOp::Sub(I64), t, SubExp::i64(1)));
                    rincl
                        .iter()
                        .zip(&rows)
                        .map(|(a, r)| at(b, a, t.clone(), r))
                        .collect()
                });
                let ext: Vec<ExtType> = rows.iter().map(|t| t.to_ext()).collect();
                let pat: Vec<(&str, Type)> = rows.iter().map(|t| ("lis", t.clone())).collect();
                let l = b.bind_many(
                    &pat,
                    Exp::If {
                        cond: var(&ps[1]),
                        then_b: tl,
                        else_b: el,
                        ret: ext.clone(),
                    },
                );
                let pat: Vec<(&str, Type)> = rows.iter().map(|t| ("ris", t.clone())).collect();
                let r = b.bind_many(
                    &pat,
                    Exp::If {
                        cond: var(&ps[2]),
                        then_b: tr,
                        else_b: er,
                        ret: ext,
                    },
                );
                l.iter().chain(&r).map(var).collect()
            });
            let lr = b.map(cnt.clone(), vec![jc.clone(), sflag, eflag.clone()], lam);
            let (lis, ris) = (lr[..k].to_vec(), lr[k..].to_vec());
            // 5. Bin reductions s (ne for empty bins): the inclusive scan at segment ends.
            let lam = lambda(
                b.ns,
                &[("e", bt.clone()), ("b", i64t())],
                vec![i64t()],
                |b, ps| {
                    vec![var(&select(
                        b,
                        var(&ps[0]),
                        var(&ps[1]),
                        SubExp::i64(-1),
                        &i64t(),
                    ))]
                },
            );
            let ends = b.map(cnt.clone(), vec![eflag, sb.clone()], lam)[0].clone();
            let mut sdest = vec![];
            for (r, e) in rows.iter().zip(&ne) {
                let d = replicate(b, &n, e.clone(), r);
                sdest.push((d, r.array_of(n.clone())));
            }
            let s = scatter(b, &cnt, sdest, vec![ends], incl.clone());
            // 6. h̄ and s̄ from the vjp of h ⊙ s.
            let vo = super::vjp_lambda_in(&copies.outer, b.ns, &env)?;
            let mut arrs: Vec<VName> = dest.to_vec();
            arrs.extend(s.iter().cloned());
            arrs.extend(ybars.iter().cloned());
            let outs = b.map(n.clone(), arrs, vo);
            let hbars = outs[k..2 * k].to_vec();
            let sbars = outs[2 * k..3 * k].to_vec();
            // 7. ā (sorted) = ∂(lis ⊙ a ⊙ ris)/∂a · s̄[bin].
            let mut ps: Vec<(&str, Type)> = vec![];
            for name in ["l", "a", "r"] {
                ps.extend(rows.iter().map(|t| (name, t.clone())));
            }
            let lar = lambda(b.ns, &ps, rows.clone(), |b, ps| {
                let mut args: Vec<SubExp> = ps[..2 * k].iter().map(var).collect();
                let la = inline_op(b, copies.lar1, &args);
                args = la;
                args.extend(ps[2 * k..].iter().map(var));
                inline_op(b, copies.lar2, &args)
            });
            let vlar = super::vjp_lambda_in(&lar, b.ns, &env)?;
            let sbg: Vec<VName> = sbars
                .iter()
                .zip(&rows)
                .map(|(sbar, r)| gather(b, &cnt, &sb, sbar, r))
                .collect();
            let mut lar_arrs: Vec<VName> = lis;
            lar_arrs.extend(sa.iter().cloned());
            lar_arrs.extend(ris);
            let mut arrs = lar_arrs.clone();
            arrs.extend(sbg.iter().cloned());
            let outs = b.map(cnt.clone(), arrs, vlar);
            let asorted = outs[2 * k..3 * k].to_vec();
            // 8. Back to the original positions.
            let mut adest = vec![];
            for r in &rows {
                let z = zeros_in(b, r);
                let d = replicate(b, &m, z, r);
                adest.push((d, r.array_of(m.clone())));
            }
            let abars = scatter(b, &cnt, adest, vec![sp], asorted);
            let fv = FvParts {
                cnt,
                s,
                lar_arrs,
                sbars: sbg,
            };
            Ok((hbars, abars, fv))
        })?;
        for t in 0..k {
            self.add_adj(&vals[t], var(&abars[t]), true)?;
            self.add_adj(&dest[t], var(&hbars[t]), true)?;
        }

        // Free variables of the operator (see [`super::free_ops`]): the application `h ⊙ s`
        // per bin (seed ȳ), and the applications inside each bin (seed s̄ of the bin).
        let fvs = self.operator_free_vars(&op.lam);
        if !fvs.is_empty() {
            let mut arrs: Vec<VName> = dest.to_vec();
            arrs.extend(fv.s.iter().cloned());
            let seeds: Vec<Option<VName>> = adjs
                .iter()
                .zip(&ybars)
                .map(|(a, y)| a.as_ref().map(|_| y.clone()))
                .collect();
            self.free_var_adjoints(&n, op.lam.clone(), &arrs, &seeds)?;
            let lam = self.fold_application(&op.lam, &fvs)?;
            let seeds: Vec<Option<VName>> = fv.sbars.into_iter().map(Some).collect();
            self.free_var_adjoints(&fv.cnt, lam, &fv.lar_arrs, &seeds)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "tests_hist.rs"]
pub(super) mod tests_hist;
