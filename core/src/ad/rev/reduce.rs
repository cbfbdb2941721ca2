//! The return sweep of `reduce` (paper 000 §5.1, paper 001 eq. 4–5; the anchor is Futhark's
//! `Futhark.AD.Rev.Reduce`). The operator is recognised structurally:
//!
//! - `+` (the lambda is one `BinOp::Add` of its two params): `ās += replicate w ȳ`.
//! - `*`: the return sweep computes the product of the non-zero elements `p` and the number of
//!   zeros `z`; `z = 0`: `āᵢ += p/aᵢ·ȳ`; `z = 1`: only the zero element gets `p·ȳ`; `z ≥ 2`:
//!   nothing. No division happens on the paths where an element is zero.
//! - `min`/`max`: the return sweep computes the index of the result (the lowest index wins
//!   ties; the neutral element loses every tie) and adds `ȳ` to that one element of `ā` (a
//!   sparse update through [`Rev::add_adj_index`]; nothing when the neutral element won, e.g.
//!   for an empty array).
//! - vectorised operators (`reduce (map2 ⊙) nes xss`, the lambda is one `map` over its params):
//!   rewritten to `map (λ col ne → reduce ⊙ ne col) (transpose xss) nes`, which is then
//!   differentiated (re-executed and swept) by the ordinary rules, so the scalar special cases
//!   apply inside the `map`.
//! - anything else, tuple operators included: with exclusive scans `ls = scanexc ⊙ e as` and
//!   `rs = reverse (scanexc (flip ⊙) e (reverse as))`, `ās += map (λ l a r → ∂(l⊙a⊙r)/∂a · ȳ)
//!   ls as rs`, the partial derivative taken by [`super::vjp_lambda`] of `λ l a r → (l⊙a)⊙r`.
//!   Correct for non-commutative operators.
//!
//! The neutral element gets no adjoint (as in Futhark: it is meant to be a constant). Free float
//! variables of the operator (only possible in the generic and vectorised cases) get the sum of
//! their contributions from every application (see [`super::free_ops`]); free integer
//! variables (sizes, mostly) get no adjoint.

use super::{one_stm, zero_of, Rev, R};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};

#[cfg(test)]
#[path = "reduce_tests.rs"]
pub(super) mod tests;

pub(super) const I64: PrimType = PrimType::Int(IntType::I64);

/// The constant 1 of a numeric type.
pub(super) fn one_of(t: PrimType) -> SubExp {
    SubExp::Const(match t {
        PrimType::Int(it) => PrimValue::int(it, 1),
        PrimType::Float(ft) => PrimValue::float(ft, 1.0),
        PrimType::Bool => PrimValue::Bool(true),
    })
}

/// If the lambda is `\a b -> a ⊕ b` or `\a b -> b ⊕ a` (one binary operation of its two
/// params, nothing else): that operation.
pub(super) fn lam_binop(lam: &Lambda) -> Option<BinOp> {
    let ([p0, p1], [s], [res]) = (&lam.params[..], &lam.body.stms[..], &lam.body.result[..]) else {
        return None;
    };
    let Exp::BinOp(op, x, y) = &s.exp else {
        return None;
    };
    let [pe] = &s.pat.elems[..] else {
        return None;
    };
    if *res != SubExp::Var(pe.name.clone()) {
        return None;
    }
    let (v0, v1) = (SubExp::Var(p0.name.clone()), SubExp::Var(p1.name.clone()));
    ((*x == v0 && *y == v1) || (*x == v1 && *y == v0)).then_some(*op)
}

/// If the lambda is a vectorised operator, one `map` over its params whose results are the
/// lambda's results (`map2 ⊙`, in any order of the params): the mapped lambda with its params
/// reordered to match the outer lambda's (accumulators first, then elements).
pub(super) fn vectorised_op(lam: &Lambda) -> Option<Lambda> {
    let [s] = &lam.body.stms[..] else {
        return None;
    };
    let Exp::Soac(Soac::Map {
        arrs, lam: inner, ..
    }) = &s.exp
    else {
        return None;
    };
    let res: Vec<SubExp> = s
        .pat
        .elems
        .iter()
        .map(|p| SubExp::Var(p.name.clone()))
        .collect();
    if res != lam.body.result
        || arrs.len() != lam.params.len()
        || inner.params.len() != arrs.len()
        || lam.params.is_empty()
    {
        return None;
    }
    let mut params: Vec<Option<Param>> = vec![None; arrs.len()];
    for (j, a) in arrs.iter().enumerate() {
        let pos = lam.params.iter().position(|p| &p.name == a)?;
        if params[pos].is_some() {
            return None;
        }
        params[pos] = Some(inner.params[j].clone());
    }
    Some(Lambda {
        params: params.into_iter().collect::<Option<Vec<_>>>()?,
        body: inner.body.clone(),
        ret: inner.ret.clone(),
    })
}

/// `[1, 0, 2, 3, ...]` for an array of rank `r` (swap the two outer dimensions).
pub(super) fn swap_outer(rank: usize) -> Vec<usize> {
    let mut perm = vec![1, 0];
    perm.extend(2..rank);
    perm
}

impl Rev<'_> {
    pub(super) fn rev_reduce(&mut self, stm: &Stm) -> R<()> {
        let Exp::Soac(Soac::Reduce { w, arrs, op }) = &stm.exp else {
            return Err("reduce (internal error)".into());
        };
        let adjs = self.take_result_adjs(&stm.pat);
        if adjs.iter().all(|a| a.is_none()) {
            return Ok(());
        }
        let k = op.neutral.len();

        // Vectorised operators: transpose and map a reduction over the columns.
        if let Some(inner) = vectorised_op(&op.lam) {
            if op.neutral.iter().all(|n| matches!(n, SubExp::Var(_))) {
                return self.rev_vectorised(stm, w, arrs, op, inner, adjs, false);
            }
        }

        let mut ybars = vec![];
        for (p, a) in stm.pat.elems.iter().zip(&adjs) {
            ybars.push(match a {
                Some((v, _)) => v.clone(),
                None => self.zeros(&p.ty)?,
            });
        }
        if k == 1 {
            if let (Some(op2), Type::Prim(t)) = (lam_binop(&op.lam), &stm.pat.elems[0].ty) {
                let (a, t, yb) = (&arrs[0], *t, ybars[0].clone());
                match op2 {
                    BinOp::Add(_) => {
                        let aty = self.ty_of(a)?;
                        let rep = self.bind(
                            "red_adj_rep",
                            aty,
                            Exp::Replicate {
                                shape: vec![w.clone()],
                                value: yb,
                            },
                        );
                        return self.add_adj(a, SubExp::Var(rep), true);
                    }
                    BinOp::Mul(_) if t != PrimType::Bool => {
                        return self.rev_reduce_mul(w, a, t, &op.neutral[0], yb, op2);
                    }
                    BinOp::Min(_) | BinOp::Max(_) => {
                        return self.rev_reduce_minmax(w, a, t, &op.neutral[0], yb, op2);
                    }
                    _ => {}
                }
            }
        }
        self.rev_reduce_generic(w, arrs, op, ybars)
    }

    /// Binds `lam`'s params to `args` and emits (a fresh copy of) its body; returns its results.
    pub(super) fn inline_lambda(&mut self, lam: &Lambda, args: &[SubExp]) -> R<Vec<SubExp>> {
        if lam.params.len() != args.len() {
            return Err(
                "inlining a lambda with the wrong number of arguments (internal error)".into(),
            );
        }
        let lam = self.rename_lambda(lam);
        for (p, a) in lam.params.iter().zip(args) {
            self.emit(one_stm(p.clone(), Exp::SubExp(a.clone())));
        }
        for s in lam.body.stms {
            self.emit(s);
        }
        Ok(lam.body.result)
    }

    /// `if cond then th else el` for values of types `tys`.
    pub(super) fn select(
        &mut self,
        cond: SubExp,
        th: Body,
        el: Body,
        tys: &[Type],
    ) -> R<Vec<SubExp>> {
        let names = self.bind_many(
            tys.iter().map(|t| ("sel", t.clone())).collect(),
            Exp::If {
                cond,
                then_b: th,
                else_b: el,
                ret: tys.iter().map(|t| t.to_ext()).collect(),
            },
        );
        Ok(names.into_iter().map(SubExp::Var).collect())
    }

    /// `a == b` (a bool).
    pub(super) fn eq(&mut self, t: PrimType, a: SubExp, b: SubExp) -> SubExp {
        SubExp::Var(self.bind(
            "eq",
            Type::Prim(PrimType::Bool),
            Exp::CmpOp(CmpOp::Eq(t), a, b),
        ))
    }

    /// `iota w` (i64).
    pub(super) fn iota(&mut self, w: &SubExp) -> VName {
        self.bind(
            "iota",
            Type::array(I64, vec![w.clone()]),
            Exp::Iota {
                n: w.clone(),
                start: SubExp::i64(0),
                stride: SubExp::i64(1),
                it: IntType::I64,
            },
        )
    }

    /// `reverse a` (a slice with stride -1 of the outer dimension of length `w`).
    pub(super) fn reverse(&mut self, w: &SubExp, a: &VName) -> R<VName> {
        let ty = self.ty_of(a)?;
        let last = self.binop(BinOp::Sub(I64), w.clone(), SubExp::i64(1));
        Ok(self.bind(
            &format!("{}_rev", a.base),
            ty,
            Exp::Index(
                a.clone(),
                vec![DimIndex::Slice {
                    start: last,
                    len: w.clone(),
                    stride: SubExp::i64(-1),
                }],
            ),
        ))
    }

    /// `map f (iota w)` where `f` gets the index param and emits the body; `ret` are the
    /// lambda's result types.
    pub(super) fn map_iota(
        &mut self,
        base: &str,
        w: &SubExp,
        extra: &[VName],
        ret: Vec<Type>,
        f: impl FnOnce(&mut Self, SubExp, &[SubExp]) -> R<Vec<SubExp>>,
    ) -> R<Vec<VName>> {
        let iota = self.iota(w);
        let pi = self.fresh_param("i", Type::Prim(I64));
        let mut params = vec![pi.clone()];
        let mut arrs = vec![iota];
        let mut rows = vec![];
        for a in extra {
            let rt = self.ty_of(a)?.row();
            let p = self.fresh_param(&format!("{}_row", a.base), rt);
            rows.push(SubExp::Var(p.name.clone()));
            params.push(p);
            arrs.push(a.clone());
        }
        let body = self.in_body(|r| f(r, SubExp::Var(pi.name.clone()), &rows))?;
        let pat: Vec<(&str, Type)> = ret.iter().map(|t| (base, t.array_of(w.clone()))).collect();
        Ok(self.bind_many(
            pat,
            Exp::Soac(Soac::Map {
                w: w.clone(),
                arrs,
                lam: Lambda { params, body, ret },
            }),
        ))
    }

    /// The exclusive scan `[e, a0, a0⊙a1, …, a0⊙…⊙a(w-2)]` (an inclusive scan, then shifted).
    pub(super) fn scan_exclusive(
        &mut self,
        w: &SubExp,
        op: &Operator,
        arrs: &[VName],
    ) -> R<Vec<VName>> {
        let lam = self.rename_lambda(&op.lam);
        let row_tys = lam.ret.clone();
        let incl = self.bind_many(
            row_tys
                .iter()
                .map(|t| ("scan_incl", t.array_of(w.clone())))
                .collect(),
            Exp::Soac(Soac::Scan {
                w: w.clone(),
                arrs: arrs.to_vec(),
                op: Operator {
                    lam,
                    neutral: op.neutral.clone(),
                    commutative: op.commutative,
                },
            }),
        );
        let ne = op.neutral.clone();
        let tys = row_tys.clone();
        self.map_iota("scan_exc", w, &[], row_tys, move |r, i, _| {
            let first = r.eq(I64, i.clone(), SubExp::i64(0));
            let th = r.in_body(|_| Ok(ne))?;
            let el = r.in_body(|r| {
                let im1 = r.binop(BinOp::Sub(I64), i, SubExp::i64(1));
                Ok(incl
                    .iter()
                    .zip(&tys)
                    .map(|(a, t)| {
                        SubExp::Var(r.bind(
                            "prev",
                            t.clone(),
                            Exp::Index(a.clone(), vec![DimIndex::Fix(im1.clone())]),
                        ))
                    })
                    .collect())
            })?;
            r.select(first, th, el, &tys)
        })
    }

    /// Generic operators: `ās += map (λ l a r → ∂((l⊙a)⊙r)/∂a · ȳ) ls as rs`.
    fn rev_reduce_generic(
        &mut self,
        w: &SubExp,
        arrs: &[VName],
        op: &Operator,
        ybars: Vec<SubExp>,
    ) -> R<()> {
        let k = op.neutral.len();
        let ls = self.scan_exclusive(w, op, arrs)?;
        let mut flipped = op.clone();
        flipped.lam.params.rotate_left(k);
        let mut rev_as = vec![];
        for a in arrs {
            rev_as.push(self.reverse(w, a)?);
        }
        let rs_rev = self.scan_exclusive(w, &flipped, &rev_as)?;
        let mut rs = vec![];
        for a in &rs_rev {
            rs.push(self.reverse(w, a)?);
        }

        // f l a r = (l ⊙ a) ⊙ r
        let row_tys = op.lam.ret.clone();
        let mut params = vec![];
        for base in ["l", "a", "r"] {
            for t in &row_tys {
                params.push(self.fresh_param(base, t.clone()));
            }
        }
        let args: Vec<SubExp> = params.iter().map(|p| SubExp::Var(p.name.clone())).collect();
        let body = self.in_body(|r| {
            let la = r.inline_lambda(&op.lam, &args[..2 * k])?;
            let mut a2 = la;
            a2.extend(args[2 * k..].iter().cloned());
            r.inline_lambda(&op.lam, &a2)
        })?;
        let f = Lambda {
            params,
            body,
            ret: row_tys.clone(),
        };
        let vf = super::vjp_lambda_in(&f, self.ns, &self.types)?;

        let mut inputs = ls.clone();
        inputs.extend(arrs.iter().cloned());
        let rs_fv = rs.clone();
        inputs.extend(rs);
        let ybars_fv = ybars.clone();
        let contribs = self.map_iota("red_contrib", w, &inputs, row_tys, |r, _, rows| {
            let mut args = rows.to_vec();
            args.extend(ybars);
            let res = r.inline_lambda(&vf, &args)?;
            Ok(res[2 * k..3 * k].to_vec())
        })?;
        for (a, c) in arrs.iter().zip(contribs) {
            self.add_adj(a, SubExp::Var(c), true)?;
        }

        // The free variables of the operator: one contribution per application.
        let fvs = self.operator_free_vars(&op.lam);
        if !fvs.is_empty() {
            let lam = self.fold_application(&op.lam, &fvs)?;
            let mut seeds = vec![];
            for (yb, t) in ybars_fv.into_iter().zip(&op.lam.ret) {
                seeds.push(Some(self.replicate_w(w, yb, t)));
            }
            let mut arrs3 = ls;
            arrs3.extend(arrs.iter().cloned());
            arrs3.extend(rs_fv);
            self.free_var_adjoints(w, lam, &arrs3, &seeds)?;
        }
        Ok(())
    }

    /// `*`: products of the non-zero elements and counts of zeros; no division where an
    /// element is zero.
    fn rev_reduce_mul(
        &mut self,
        w: &SubExp,
        a: &VName,
        t: PrimType,
        ne: &SubExp,
        yb: SubExp,
        mul: BinOp,
    ) -> R<()> {
        let st = Type::Prim(t);
        let parts = self.map_iota(
            "nz",
            w,
            std::slice::from_ref(a),
            vec![st.clone(), Type::Prim(I64)],
            |r, _, rows| {
                let x = rows[0].clone();
                let is0 = r.eq(t, x.clone(), zero_of(t));
                let th = r.in_body(|_| Ok(vec![one_of(t), SubExp::i64(1)]))?;
                let el = r.in_body(|_| Ok(vec![x, SubExp::i64(0)]))?;
                r.select(is0, th, el, &[Type::Prim(t), Type::Prim(I64)])
            },
        )?;
        let mul_op = crate::ir::builder::binop_operator(self.ns, mul, ne.clone(), true);
        let nzp = self.bind(
            "nonzero_prod",
            st.clone(),
            Exp::Soac(Soac::Reduce {
                w: w.clone(),
                arrs: vec![parts[0].clone()],
                op: mul_op,
            }),
        );
        let add_op = self.add_operator(I64);
        let zc = self.bind(
            "zero_count",
            Type::Prim(I64),
            Exp::Soac(Soac::Reduce {
                w: w.clone(),
                arrs: vec![parts[1].clone()],
                op: add_op,
            }),
        );
        let (nzp, zc) = (SubExp::Var(nzp), SubExp::Var(zc));
        let tys = [st.clone()];
        let contrib = self.map_iota(
            "prod_contrib",
            w,
            std::slice::from_ref(a),
            vec![st],
            |r, _, rows| {
                let x = rows[0].clone();
                let none = r.eq(I64, zc.clone(), SubExp::i64(0));
                let th = r.in_body(|r| {
                    let q = r.binop(BinOp::Div(t), nzp.clone(), x.clone());
                    Ok(vec![r.binop(BinOp::Mul(t), q, yb.clone())])
                })?;
                let el = r.in_body(|r| {
                    let one = r.eq(I64, zc, SubExp::i64(1));
                    let is0 = r.eq(t, x, zero_of(t));
                    let both = r.binop(BinOp::LogAnd, one, is0);
                    let th = r.in_body(|r| Ok(vec![r.binop(BinOp::Mul(t), nzp, yb)]))?;
                    let el = r.in_body(|_| Ok(vec![zero_of(t)]))?;
                    r.select(both, th, el, &tys)
                })?;
                r.select(none, th, el, &tys)
            },
        )?;
        self.add_adj(a, SubExp::Var(contrib[0].clone()), true)
    }

    /// `min`/`max`: the index of the result (lowest index on ties, the neutral element losing
    /// every tie) gets `ȳ`.
    fn rev_reduce_minmax(
        &mut self,
        w: &SubExp,
        a: &VName,
        t: PrimType,
        ne: &SubExp,
        yb: SubExp,
        minmax: BinOp,
    ) -> R<()> {
        let iota = self.iota(w);
        let ps: Vec<Param> = [("acc_v", t), ("acc_i", I64), ("v", t), ("i", I64)]
            .into_iter()
            .map(|(b, pt)| self.fresh_param(b, Type::Prim(pt)))
            .collect();
        let [av, ai, bv, bi] = [0, 1, 2, 3].map(|j| SubExp::Var(ps[j].name.clone()));
        let tys = [Type::Prim(t), Type::Prim(I64)];
        let body = self.in_body(|r| {
            let same = r.eq(t, av.clone(), bv.clone());
            let th = r.in_body(|r| {
                let m = r.binop(BinOp::Min(I64), ai.clone(), bi.clone());
                Ok(vec![av.clone(), m])
            })?;
            let el = r.in_body(|r| {
                let m = r.binop(minmax, av.clone(), bv.clone());
                let keep = r.eq(t, av.clone(), m);
                let th = r.in_body(|_| Ok(vec![av, ai]))?;
                let el = r.in_body(|_| Ok(vec![bv, bi]))?;
                r.select(keep, th, el, &tys)
            })?;
            r.select(same, th, el, &tys)
        })?;
        let lam = Lambda {
            params: ps,
            body,
            ret: tys.to_vec(),
        };
        // The neutral element's index is `w`: past every element, so it loses ties.
        let res = self.bind_many(
            vec![("minmax_v", Type::Prim(t)), ("minmax_i", Type::Prim(I64))],
            Exp::Soac(Soac::Reduce {
                w: w.clone(),
                arrs: vec![a.clone(), iota],
                op: Operator {
                    lam,
                    neutral: vec![ne.clone(), w.clone()],
                    commutative: true,
                },
            }),
        );
        let idx = SubExp::Var(res[1].clone());
        // ā[start : start + n] += replicate n v, with n = min(w, 1), start = min(idx, w - n)
        // and v = ȳ if an element won (idx < w), else -0.0 for floats (x + -0.0 = x for every
        // x, -0.0 included) and 0 for integers. The slice's length depends only on `w`, not on the data: inside a `map`
        // nest the statement keeps a shape known outside the nest (so flattening can
        // distribute it), where a slice of 1 or 0 elements (won or not) would not.
        // (Integers have adjoints too, where a program asks for them: there 0 is the identity.)
        let identity = match t {
            PrimType::Float(ft) => crate::ad::derivatives::fconst(ft, -0.0),
            _ => super::zero_of(t),
        };
        let won = self.bind(
            "won",
            Type::Prim(PrimType::Bool),
            Exp::CmpOp(CmpOp::Lt(I64), idx.clone(), w.clone()),
        );
        let n = self.binop(BinOp::Min(I64), w.clone(), SubExp::i64(1));
        let last = self.binop(BinOp::Sub(I64), w.clone(), n.clone());
        let start = self.binop(BinOp::Min(I64), idx, last);
        let th = self.in_body(|_| Ok(vec![yb]))?;
        let el = self.in_body(|_| Ok(vec![identity]))?;
        let v = self.select(SubExp::Var(won), th, el, &[Type::Prim(t)])?;
        let d = self.bind(
            "minmax_adj",
            Type::array(t, vec![n.clone()]),
            Exp::Replicate {
                shape: vec![n.clone()],
                value: v[0].clone(),
            },
        );
        self.add_adj_index(
            a,
            &[DimIndex::Slice {
                start,
                len: n,
                stride: SubExp::i64(1),
            }],
            SubExp::Var(d),
        )
    }

    /// Vectorised operators (`reduce`/`scan` with `map2 ⊙`): the statement is rewritten to
    /// `transpose`s and a `map` of reductions (scans) over the columns (transposed back for a
    /// scan), which is emitted afresh (re-executed) and differentiated by the ordinary rules.
    #[allow(clippy::too_many_arguments)] // the parts of the statement being differentiated
    pub(super) fn rev_vectorised(
        &mut self,
        stm: &Stm,
        w: &SubExp,
        arrs: &[VName],
        op: &Operator,
        inner: Lambda,
        adjs: Vec<Option<(SubExp, bool)>>,
        scan: bool,
    ) -> R<()> {
        let inner = self.rename_lambda(&inner);
        let mut stms = vec![];
        let mut ts = vec![];
        let mut cols = None;
        for a in arrs {
            let aty = self.ty_of(a)?;
            let (Some(elem), shape) = (aty.elem(), aty.shape().to_vec()) else {
                return Err("a vectorised operator over non-arrays (internal error)".into());
            };
            if shape.len() < 2 {
                return Err("a vectorised operator over non-arrays (internal error)".into());
            }
            cols = Some(shape[1].clone());
            let mut tshape = shape.clone();
            tshape.swap(0, 1);
            let p = Param {
                name: self.ns.fresh(&format!("{}_tr", a.base)),
                ty: Type::array(elem, tshape),
            };
            ts.push(p.name.clone());
            stms.push(one_stm(
                p,
                Exp::Rearrange(swap_outer(shape.len()), a.clone()),
            ));
        }
        let m = cols.ok_or("a vectorised operator without inputs (internal error)")?;
        // map (λ cols.. nes.. → reduce/scan inner nes cols) m (transposed..) (nes..)
        let mut params = vec![];
        let mut inputs = ts.clone();
        for s in &stms {
            let ty = s.pat.elems[0].ty.row();
            params.push(Param {
                name: self.ns.fresh("col"),
                ty,
            });
        }
        for n in &op.neutral {
            let SubExp::Var(nv) = n else {
                return Err(
                    "a vectorised operator with a constant neutral (internal error)".into(),
                );
            };
            params.push(Param {
                name: self.ns.fresh("ne"),
                ty: self.ty_of(nv)?.row(),
            });
            inputs.push(nv.clone());
        }
        let k = op.neutral.len();
        let col_arrs: Vec<VName> = params[..k].iter().map(|p| p.name.clone()).collect();
        let nes: Vec<SubExp> = params[k..]
            .iter()
            .map(|p| SubExp::Var(p.name.clone()))
            .collect();
        let inner_op = Operator {
            lam: inner.clone(),
            neutral: nes,
            commutative: op.commutative,
        };
        let (soac, ret): (Soac, Vec<Type>) = if scan {
            (
                Soac::Scan {
                    w: w.clone(),
                    arrs: col_arrs,
                    op: inner_op,
                },
                inner.ret.iter().map(|t| t.array_of(w.clone())).collect(),
            )
        } else {
            (
                Soac::Reduce {
                    w: w.clone(),
                    arrs: col_arrs,
                    op: inner_op,
                },
                inner.ret.clone(),
            )
        };
        let res_pat: Vec<Param> = ret
            .iter()
            .map(|t| Param {
                name: self.ns.fresh("col_res"),
                ty: t.clone(),
            })
            .collect();
        let result = res_pat
            .iter()
            .map(|p| SubExp::Var(p.name.clone()))
            .collect();
        let lam = Lambda {
            params,
            body: Body {
                stms: vec![Stm {
                    pat: Pat { elems: res_pat },
                    exp: Exp::Soac(soac),
                    attrs: Attrs::default(),
                    loc: None,
                }],
                result,
            },
            ret: ret.clone(),
        };
        let map_pat: Vec<Param> = ret
            .iter()
            .map(|t| Param {
                name: self.ns.fresh("vec_res"),
                ty: t.array_of(m.clone()),
            })
            .collect();
        let map_res: Vec<VName> = map_pat.iter().map(|p| p.name.clone()).collect();
        stms.push(Stm {
            pat: Pat { elems: map_pat },
            exp: Exp::Soac(Soac::Map {
                w: m,
                arrs: inputs,
                lam,
            }),
            attrs: Attrs::default(),
            loc: None,
        });
        let mut results = map_res;
        if scan {
            let mut back = vec![];
            for (v, pe) in results.iter().zip(&stm.pat.elems) {
                let p = Param {
                    name: self.ns.fresh("vec_scan"),
                    ty: pe.ty.clone(),
                };
                back.push(p.name.clone());
                let rank = pe.ty.rank();
                stms.push(one_stm(p, Exp::Rearrange(swap_outer(rank), v.clone())));
            }
            results = back;
        }
        self.fwd_stms(&stms)?;
        for (v, a) in results.iter().zip(adjs) {
            if let Some((d, owned)) = a {
                self.set_adj(v, d, owned);
            }
        }
        self.rev_stms(&stms)
    }
}
