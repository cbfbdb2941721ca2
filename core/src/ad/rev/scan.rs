//! The return sweep of inclusive `scan` (paper 000 §5.2; the anchor is Futhark's
//! `Futhark.AD.Rev.Scan`). The operator is recognised structurally:
//!
//! - `+` (one `BinOp::Add` of the two params): `ās += reverse (scan (+) 0 (reverse ȳs))`.
//! - vectorised operators (`scan (map2 ⊙) nes xss`): rewritten to `transpose (map (λ col ne →
//!   scan ⊙ ne col) (transpose xss) nes)`, emitted afresh and differentiated by the ordinary
//!   rules (so the scalar rules apply per column).
//! - anything else on scalars, tuple operators of `d` scalars included: the backward linear
//!   recurrence `r̄sₙ₋₁ = ȳₙ₋₁`, `r̄sᵢ = ȳᵢ + cᵢ·r̄sᵢ₊₁` with `cᵢ = (∂(ysᵢ ⊙ aᵢ₊₁)/∂ysᵢ)ᵀ` (a
//!   `d×d` matrix, manifest: one vjp of the operator per unit seed) is solved by a `scan` whose
//!   operator composes linear functions, `(d₁,c₁) ∘ (d₂,c₂) = (d₂ + c₂·d₁, c₂·c₁)` with neutral
//!   `(0, I)`, over the reversed elements; then `ā₀ = r̄s₀` and `āᵢ = (∂(ysᵢ₋₁ ⊙ aᵢ)/∂aᵢ)ᵀ·r̄sᵢ`
//!   (a `map` of the operator's vjp). The partial derivatives come from [`super::vjp_lambda`]
//!   of the operator.
//!
//!   In a tuple operator, the components of the first float type (or, with no float
//!   component, of the first integer type) are differentiated; bools and integers beside
//!   floats are treated as constants (they get no adjoint, though they may steer the operator,
//!   e.g. the flags of a segmented scan). Futhark's block-diagonal special cases (independent
//!   scans for a block-diagonal Jacobian) are not implemented: the cost is `O(d³)` per element.
//! - operators on arrays that are not vectorised (e.g. a tuple of two `map`s, or an operator
//!   mixing the columns), and tuples of floats of different types: Paszke et al.'s
//!   non-manifesting rule (paper 002 §3.3, see [`Rev::rev_scan_ppad`]), one vjp of the operator
//!   per combination. Every differentiable component gets an adjoint there.
//!
//! As for `reduce`, the neutral element gets no adjoint, free float variables of the operator
//! get the sum of their contributions from every application (see [`super::free_ops`]), and
//! free integer variables get no adjoint.

use super::reduce::{lam_binop, one_of, vectorised_op, I64};
use super::{has_adjoint, zero_of, Rev, R};
use crate::ir::*;
use crate::prim::PrimType;

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;

impl Rev<'_> {
    pub(super) fn rev_scan(&mut self, stm: &Stm) -> R<()> {
        let Exp::Soac(Soac::Scan { w, arrs, op }) = &stm.exp else {
            return Err("scan (internal error)".into());
        };
        let adjs = self.take_result_adjs(&stm.pat);
        if adjs.iter().all(|a| a.is_none()) {
            return Ok(());
        }

        if let Some(inner) = vectorised_op(&op.lam) {
            if op.neutral.iter().all(|n| matches!(n, SubExp::Var(_))) {
                return self.rev_vectorised(stm, w, arrs, op, inner, adjs, true);
            }
        }

        let mut ybars = vec![];
        for (p, a) in stm.pat.elems.iter().zip(&adjs) {
            ybars.push(match a {
                Some((SubExp::Var(v), _)) => v.clone(),
                Some((SubExp::Const(_), _)) => {
                    return Err("a constant array adjoint (internal error)".into())
                }
                None => match self.zeros(&p.ty)? {
                    SubExp::Var(v) => v,
                    SubExp::Const(_) => {
                        return Err("a scan result that is not an array (internal error)".into())
                    }
                },
            });
        }
        let row_tys = op.lam.ret.clone();
        let ys: Vec<VName> = stm.pat.elems.iter().map(|p| p.name.clone()).collect();
        if row_tys.iter().any(|t| !matches!(t, Type::Prim(_))) {
            return self.rev_scan_ppad(w, arrs, &ys, op, &ybars);
        }
        if let (Some(BinOp::Add(_)), [a], [yb]) = (lam_binop(&op.lam), &arrs[..], &ybars[..]) {
            // ās += reverse (scan (+) 0 (reverse ȳs))
            let t = row_tys[0].elem().unwrap_or(I64);
            let rev = self.reverse(w, yb)?;
            let add = self.add_operator(t);
            let ty = self.ty_of(a)?;
            let sc = self.bind(
                "scan_adj_rev",
                ty,
                Exp::Soac(Soac::Scan {
                    w: w.clone(),
                    arrs: vec![rev],
                    op: add,
                }),
            );
            let back = self.reverse(w, &sc)?;
            return self.add_adj(a, SubExp::Var(back), false);
        }

        // The differentiated components: those of the first float type (else the first
        // integer type).
        let prims: Vec<PrimType> = row_tys.iter().filter_map(|t| t.elem()).collect();
        let t = prims
            .iter()
            .copied()
            .find(|p| matches!(p, PrimType::Float(_)))
            .or_else(|| {
                prims
                    .iter()
                    .copied()
                    .find(|p| matches!(p, PrimType::Int(_)))
            });
        let Some(t) = t else {
            return Ok(());
        };
        if prims
            .iter()
            .any(|p| matches!(p, PrimType::Float(_)) && *p != t)
        {
            return self.rev_scan_ppad(w, arrs, &ys, op, &ybars);
        }
        let dims: Vec<usize> = (0..prims.len()).filter(|&i| prims[i] == t).collect();
        self.rev_scan_generic(w, arrs, &ys, op, &ybars, &prims, &dims, t)
    }

    /// The generic rule with manifest Jacobians of the components `dims` (all of type `t`).
    #[allow(clippy::too_many_arguments)] // the parts of the statement being differentiated
    fn rev_scan_generic(
        &mut self,
        w: &SubExp,
        arrs: &[VName],
        ys: &[VName],
        op: &Operator,
        ybars: &[VName],
        prims: &[PrimType],
        dims: &[usize],
        t: PrimType,
    ) -> R<()> {
        let k = prims.len();
        let d = dims.len();
        let st = Type::Prim(t);
        // (x.., a.., seeds..) -> (x⊙a.., x̄.., ā..)
        let vop = super::vjp_lambda_in(&op.lam, self.ns, &self.types)?;
        // Seeds: `unit(q)` is the seed e_q on the differentiated components, zero elsewhere.
        let zero_seeds: Vec<SubExp> = prims.iter().map(|p| zero_of(*p)).collect();

        // 1. Elements of the linear recurrence, reversed: j ↦ (ȳᵢ, cᵢ) with i = w-1-j, the
        //    Jacobian transposed (`c[p][q]` = ∂(x⊙a)_q/∂x_p), identity for i = w-1.
        let lin_tys = vec![st.clone(); d + d * d];
        let elems = self.map_iota("lin", w, &[], lin_tys, |r, j, _| {
            let wm1 = r.binop(BinOp::Sub(I64), w.clone(), SubExp::i64(1));
            let i = r.binop(BinOp::Sub(I64), wm1, j.clone());
            let mut out = vec![];
            for &p in dims {
                out.push(SubExp::Var(r.bind(
                    "yb",
                    st.clone(),
                    Exp::Index(ybars[p].clone(), vec![DimIndex::Fix(i.clone())]),
                )));
            }
            let last = r.eq(I64, j, SubExp::i64(0));
            let th = r.in_body(|_| {
                let mut id = vec![];
                for p in 0..d {
                    for q in 0..d {
                        id.push(if p == q { one_of(t) } else { zero_of(t) });
                    }
                }
                Ok(id)
            })?;
            let el = r.in_body(|r| {
                let i1 = r.binop(BinOp::Add(I64), i.clone(), SubExp::i64(1));
                let mut args = r.rows_at(ys, &i)?;
                args.extend(r.rows_at(arrs, &i1)?);
                let mut c = vec![zero_of(t); d * d];
                for (qi, &q) in dims.iter().enumerate() {
                    let mut a = args.clone();
                    let mut seeds = zero_seeds.clone();
                    seeds[q] = one_of(t);
                    a.extend(seeds);
                    let res = r.inline_lambda(&vop, &a)?;
                    for (pi, &p) in dims.iter().enumerate() {
                        c[pi * d + qi] = res[k + p].clone();
                    }
                }
                Ok(c)
            })?;
            out.extend(r.select(last, th, el, &vec![st.clone(); d * d])?);
            Ok(out)
        })?;

        // 2. The recurrence as a scan of compositions of linear functions.
        let lin = self.lin_operator(d, t)?;
        let scanned = self.bind_many(
            (0..d + d * d)
                .map(|_| ("lin_scan", Type::array(t, vec![w.clone()])))
                .collect(),
            Exp::Soac(Soac::Scan {
                w: w.clone(),
                arrs: elems,
                op: lin,
            }),
        );

        // 3. āᵢ = r̄s₀ for i = 0, else the vjp of ysᵢ₋₁ ⊙ aᵢ with respect to aᵢ at r̄sᵢ.
        let contribs = self.map_iota(
            "scan_contrib",
            w,
            arrs,
            dims.iter().map(|&p| Type::Prim(prims[p])).collect(),
            |r, i, rows| {
                let wm1 = r.binop(BinOp::Sub(I64), w.clone(), SubExp::i64(1));
                let j = r.binop(BinOp::Sub(I64), wm1, i.clone());
                let rs = r.rows_at(&scanned[..d], &j)?;
                let first = r.eq(I64, i.clone(), SubExp::i64(0));
                let rs2 = rs.clone();
                let th = r.in_body(|_| Ok(rs2))?;
                let el = r.in_body(|r| {
                    let im1 = r.binop(BinOp::Sub(I64), i, SubExp::i64(1));
                    let mut args = r.rows_at(ys, &im1)?;
                    args.extend(rows.iter().cloned());
                    let mut seeds = zero_seeds.clone();
                    for (pi, &p) in dims.iter().enumerate() {
                        seeds[p] = rs[pi].clone();
                    }
                    args.extend(seeds);
                    let res = r.inline_lambda(&vop, &args)?;
                    Ok(dims.iter().map(|&p| res[2 * k + p].clone()).collect())
                })?;
                r.select(first, th, el, &vec![st.clone(); d])
            },
        )?;
        for (&p, c) in dims.iter().zip(contribs) {
            self.add_adj(&arrs[p], SubExp::Var(c), true)?;
        }

        // Free variables of the operator: the seeds are r̄s (in element order).
        if !self.operator_free_vars(&op.lam).is_empty() {
            let mut seeds = vec![None; k];
            for (pi, &p) in dims.iter().enumerate() {
                seeds[p] = Some(self.reverse(w, &scanned[pi])?);
            }
            self.scan_free_vars(w, arrs, ys, op, &seeds)?;
        }
        Ok(())
    }

    /// Paszke et al.'s rule (paper 002 §3.3), which never manifests a Jacobian: for operators
    /// on arrays that are not vectorised, and tuples of floats of different types. With
    /// `m[i] = (ys[i], a[i+1], ȳ[i])` (`a[w] = e`) and `[x₁,a₁,ŷ₁] ⊗ [x₂,a₂,ŷ₂] = [x₁, a₁⊙a₂,
    /// ∂₁ᵀ⊙(x₁,a₁)·ŷ₂ + ŷ₁]`, `r̄s` is the third component of the scan from the right of `⊗`
    /// over `m` (a scan of the flipped operator over the reversed elements, reversed), and
    /// `āᵢ = ∂₂ᵀ⊙(ys[i-1], aᵢ)·r̄sᵢ` (`ys[-1] = e`).
    fn rev_scan_ppad(
        &mut self,
        w: &SubExp,
        arrs: &[VName],
        ys: &[VName],
        op: &Operator,
        ybars: &[VName],
    ) -> R<()> {
        let k = arrs.len();
        let row_tys = op.lam.ret.clone();
        let ne = op.neutral.clone();
        let vop = super::vjp_lambda_in(&op.lam, self.ns, &self.types)?;

        // a[i+1], or e past the end.
        let ne2 = ne.clone();
        let rt = row_tys.clone();
        let a_next = self.map_iota("a_next", w, &[], row_tys.clone(), |r, i, _| {
            let wm1 = r.binop(BinOp::Sub(I64), w.clone(), SubExp::i64(1));
            let last = r.eq(I64, i.clone(), wm1);
            let th = r.in_body(|_| Ok(ne2))?;
            let el = r.in_body(|r| {
                let i1 = r.binop(BinOp::Add(I64), i, SubExp::i64(1));
                r.rows_at(arrs, &i1)
            })?;
            r.select(last, th, el, &rt)
        })?;

        // The lifted operator, flipped (its params are [x₂,a₂,ŷ₂] then [x₁,a₁,ŷ₁]).
        let mut params = vec![];
        for base in ["x1", "a1", "y1", "x2", "a2", "y2"] {
            for t in &row_tys {
                params.push(self.fresh_param(base, t.clone()));
            }
        }
        let pv: Vec<SubExp> = params.iter().map(|p| SubExp::Var(p.name.clone())).collect();
        let (x1, a1, y1) = (&pv[..k], &pv[k..2 * k], &pv[2 * k..3 * k]);
        let (a2, y2) = (&pv[4 * k..5 * k], &pv[5 * k..]);
        let rt = row_tys.clone();
        let body = self.in_body(|r| {
            let mut out = x1.to_vec();
            let mut args = a1.to_vec();
            args.extend(a2.iter().cloned());
            out.extend(r.inline_lambda(&op.lam, &args)?);
            let mut args = x1.to_vec();
            args.extend(a1.iter().cloned());
            args.extend(y2.iter().cloned());
            let g = r.inline_lambda(&vop, &args)?;
            for p in 0..k {
                out.push(if has_adjoint(&rt[p]) {
                    r.add_values(g[k + p].clone(), y1[p].clone(), &rt[p])?
                } else {
                    y1[p].clone()
                });
            }
            Ok(out)
        })?;
        params.rotate_left(3 * k);
        let mut ret = row_tys.clone();
        ret.extend(row_tys.iter().cloned());
        ret.extend(row_tys.iter().cloned());
        let mut neutral = ne.clone();
        neutral.extend(ne.iter().cloned());
        for t in &row_tys {
            neutral.push(self.zeros(t)?);
        }
        let lifted = Operator {
            lam: Lambda { params, body, ret },
            neutral,
            commutative: false,
        };
        let mut m = vec![];
        for a in ys.iter().chain(&a_next).chain(ybars) {
            m.push(self.reverse(w, a)?);
        }
        let tys: Vec<Type> = (0..3)
            .flat_map(|_| row_tys.iter().map(|t| t.array_of(w.clone())))
            .collect();
        let scanned = self.bind_many(
            tys.into_iter().map(|t| ("ppad_scan", t)).collect(),
            Exp::Soac(Soac::Scan {
                w: w.clone(),
                arrs: m,
                op: lifted,
            }),
        );
        let mut rs = vec![];
        for s in &scanned[2 * k..] {
            rs.push(self.reverse(w, s)?);
        }

        // āᵢ = ∂₂ᵀ⊙(ys[i-1], aᵢ)·r̄sᵢ
        let fv_seeds: Vec<Option<VName>> = rs
            .iter()
            .zip(&row_tys)
            .map(|(v, t)| has_adjoint(t).then(|| v.clone()))
            .collect();
        let mut inputs = arrs.to_vec();
        inputs.extend(rs);
        let rt = row_tys.clone();
        let contribs = self.map_iota("scan_contrib", w, &inputs, row_tys, |r, i, rows| {
            let first = r.eq(I64, i.clone(), SubExp::i64(0));
            let th = r.in_body(|_| Ok(ne))?;
            let el = r.in_body(|r| {
                let im1 = r.binop(BinOp::Sub(I64), i, SubExp::i64(1));
                r.rows_at(ys, &im1)
            })?;
            let mut args = r.select(first, th, el, &rt)?;
            args.extend(rows.iter().cloned());
            let res = r.inline_lambda(&vop, &args)?;
            Ok(res[2 * k..3 * k].to_vec())
        })?;
        for (a, c) in arrs.iter().zip(contribs) {
            self.add_adj(a, SubExp::Var(c), true)?;
        }
        if !self.operator_free_vars(&op.lam).is_empty() {
            self.scan_free_vars(w, arrs, ys, op, &fv_seeds)?;
        }
        Ok(())
    }

    /// The adjoints of the operator's free variables (see [`super::free_ops`]): application
    /// `i` computes `ysᵢ₋₁ ⊙ aᵢ` (`ys₋₁ = e`) and `seeds` are the total adjoints `r̄s` of the
    /// `ysᵢ` (`None`: zero).
    fn scan_free_vars(
        &mut self,
        w: &SubExp,
        arrs: &[VName],
        ys: &[VName],
        op: &Operator,
        seeds: &[Option<VName>],
    ) -> R<()> {
        let row_tys = op.lam.ret.clone();
        let ne = op.neutral.clone();
        let rt = row_tys.clone();
        let mut inputs = self.map_iota("ys_prev", w, &[], row_tys, |r, i, _| {
            let first = r.eq(I64, i.clone(), SubExp::i64(0));
            let th = r.in_body(|_| Ok(ne))?;
            let el = r.in_body(|r| {
                let im1 = r.binop(BinOp::Sub(I64), i, SubExp::i64(1));
                r.rows_at(ys, &im1)
            })?;
            r.select(first, th, el, &rt)
        })?;
        inputs.extend(arrs.iter().cloned());
        self.free_var_adjoints(w, op.lam.clone(), &inputs, seeds)
    }

    /// `[a[i] | a <- arrs]`.
    fn rows_at(&mut self, arrs: &[VName], i: &SubExp) -> R<Vec<SubExp>> {
        let mut out = vec![];
        for a in arrs {
            let t = self.ty_of(a)?.row();
            out.push(SubExp::Var(self.bind(
                &format!("{}_i", a.base),
                t,
                Exp::Index(a.clone(), vec![DimIndex::Fix(i.clone())]),
            )));
        }
        Ok(out)
    }

    /// Composition of linear functions `x ↦ d + c·x` on `t^n` (`c` an `n×n` matrix, row major):
    /// `(d₁,c₁) ∘ (d₂,c₂) = (d₂ + c₂·d₁, c₂·c₁)` (first `(d₁,c₁)`, then `(d₂,c₂)`), neutral
    /// `(0, I)`.
    fn lin_operator(&mut self, n: usize, t: PrimType) -> R<Operator> {
        let st = Type::Prim(t);
        let mut params = vec![];
        for base in ["d1", "c1", "d2", "c2"] {
            let count = if base.starts_with('d') { n } else { n * n };
            for _ in 0..count {
                params.push(self.fresh_param(base, st.clone()));
            }
        }
        let v = |i: usize| SubExp::Var(params[i].name.clone());
        let m = n + n * n;
        let d1: Vec<SubExp> = (0..n).map(v).collect();
        let c1: Vec<SubExp> = (n..m).map(v).collect();
        let d2: Vec<SubExp> = (m..m + n).map(v).collect();
        let c2: Vec<SubExp> = (m + n..2 * m).map(v).collect();
        let body = self.in_body(|r| {
            let mut out = vec![];
            for p in 0..n {
                let mut acc = d2[p].clone();
                for q in 0..n {
                    let prod = r.binop(BinOp::Mul(t), c2[p * n + q].clone(), d1[q].clone());
                    acc = r.binop(BinOp::Add(t), acc, prod);
                }
                out.push(acc);
            }
            for p in 0..n {
                for q in 0..n {
                    let mut acc = zero_of(t);
                    for s in 0..n {
                        let prod =
                            r.binop(BinOp::Mul(t), c2[p * n + s].clone(), c1[s * n + q].clone());
                        acc = if s == 0 {
                            prod
                        } else {
                            r.binop(BinOp::Add(t), acc, prod)
                        };
                    }
                    out.push(acc);
                }
            }
            Ok(out)
        })?;
        let mut neutral = vec![zero_of(t); n];
        for p in 0..n {
            for q in 0..n {
                neutral.push(if p == q { one_of(t) } else { zero_of(t) });
            }
        }
        Ok(Operator {
            lam: Lambda {
                params,
                body,
                ret: vec![st; m],
            },
            neutral,
            commutative: false,
        })
    }
}
