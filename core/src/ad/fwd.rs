//! Forward-mode automatic differentiation (JVP) as an IR → IR transformation.
//!
//! Follows the forward-mode rules of Schenck et al. (paper 000) as implemented by Futhark's
//! `Futhark.AD.Fwd`: every statement is kept and followed by statements computing the tangents
//! of its results, `v̇ = Σ ∂f/∂aᵢ · ȧᵢ` (partials from [`super::derivatives`]). Tangents are
//! carried by a map from each primal variable to its tangent operand.
//!
//! - Integer and float values (scalars or arrays) have tangents of the same type as the primal;
//!   integers are differentiated formally, as Futhark does (`jvp (\x -> x*x) 3i32 1` = 6, with
//!   Futhark's integer partials). Bools have no tangent. Conversions carry the tangent along
//!   (`f64.i32 ẋ`), except float → integer, whose derivative is zero (Futhark converts the
//!   tangent instead). Comparisons, `floor`-like functions and bit reinterpretations have zero
//!   derivative.
//! - A variable absent from the map has a zero tangent (symbolic: nothing is computed for it).
//!   Zeros are materialized (a constant or a `replicate`) only where a construct needs a value:
//!   loop-carried tangents, branch results, SOAC inputs/outputs.
//! - SOACs carry tangents alongside primals: `map` gets extra tangent inputs/outputs; `reduce`,
//!   `scan` and `hist` run the operator on (x, ẋ) pairs, `[x,ẋ]⊕[y,ẏ] = [x⊙y, ∂⊙(x,y)·(ẋ,ẏ)]`
//!   with neutral (e, 0); `scatter` scatters the tangent values into the tangent destination.
//! - Accumulators (`withacc`, made by reverse mode: jvp of vjp) carry their tangents: a
//!   `withacc` input's float arrays get their tangent arrays as extra arrays of the same
//!   accumulator, and `upd_acc` adds the tangents of its values alongside.
//! - Not supported (an error naming the construct): function calls (`Apply`; lowering inlines
//!   every function).

use super::derivatives::{self, Partial};
use crate::ir::builder::Builder;
use crate::ir::*;
use crate::prim::{PrimType, PrimValue};
use std::collections::HashMap;

/// Differentiates `lam` in forward mode. The result takes the primal params followed by one
/// tangent param per primal param (same types), and returns the primal results followed by one
/// tangent result per primal result (same types; bool tangents are `false`, and bool tangent
/// params are ignored). The lambda's result types may mention sizes its body computes (it is
/// meant to be bound inline, see `lower::ad`). The error names the construct that cannot be
/// differentiated.
pub fn jvp_lambda(lam: &Lambda, ns: &mut NameSource) -> Result<Lambda, String> {
    let mut fwd = Fwd {
        ns,
        tans: HashMap::new(),
        types: HashMap::new(),
    };
    let mut tparams = vec![];
    for p in &lam.params {
        fwd.types.insert(p.name.clone(), p.ty.clone());
        let tp = Param {
            name: fwd.ns.fresh(&format!("{}_tan", p.name.base)),
            ty: p.ty.clone(),
        };
        if is_float(&p.ty) {
            fwd.types.insert(tp.name.clone(), tp.ty.clone());
            fwd.tans
                .insert(p.name.clone(), SubExp::Var(tp.name.clone()));
        }
        tparams.push(tp);
    }
    let mut stms = fwd.stms(&lam.body.stms)?;
    let mut result = lam.body.result.clone();
    for (r, t) in lam.body.result.iter().zip(&lam.ret) {
        let tan = fwd.tan_of(r);
        let z = fwd.materialize(tan, t, &mut stms);
        result.push(z);
    }
    let mut params = lam.params.clone();
    params.extend(tparams);
    let mut ret = lam.ret.clone();
    ret.extend(lam.ret.iter().cloned());
    Ok(Lambda {
        params,
        body: Body { stms, result },
        ret,
    })
}

/// Does a value of this type have a tangent?
fn is_float(t: &Type) -> bool {
    matches!(t.elem(), Some(p) if derivatives::has_tangent(p))
}

/// The element type of a value with a tangent.
fn float_elem(t: &Type) -> Option<PrimType> {
    t.elem().filter(|p| derivatives::has_tangent(*p))
}

fn zero_of(p: PrimType) -> SubExp {
    SubExp::Const(PrimValue::zero(p))
}

fn stm1(p: Param, exp: Exp) -> Stm {
    Stm {
        pat: Pat { elems: vec![p] },
        exp,
        attrs: Attrs::default(),
        loc: None,
    }
}

/// The type of `a[idx]` for `a: ty`.
fn slice_type(ty: &Type, idx: &[DimIndex]) -> Type {
    let shape = ty.shape();
    let mut out = vec![];
    for (i, d) in shape.iter().enumerate() {
        match idx.get(i) {
            Some(DimIndex::Fix(_)) => {}
            Some(DimIndex::Slice { len, .. }) => out.push(len.clone()),
            None => out.push(d.clone()),
        }
    }
    match ty.elem() {
        Some(e) => Type::array(e, out),
        None => ty.clone(),
    }
}

/// Replaces variables in a type's shape.
fn subst_type(t: &Type, s: &HashMap<VName, SubExp>) -> Type {
    match t {
        Type::Array { elem, shape } => Type::Array {
            elem: *elem,
            shape: shape
                .iter()
                .map(|d| match d {
                    SubExp::Var(v) => s.get(v).cloned().unwrap_or_else(|| d.clone()),
                    c => c.clone(),
                })
                .collect(),
        },
        t => t.clone(),
    }
}

/// The concrete type of an existential result type, given the construct's results.
fn ext_to_type(t: &ExtType, results: &[SubExp]) -> Result<Type, String> {
    Ok(match t {
        ExtType::Prim(p) => Type::Prim(*p),
        ExtType::Array { elem, shape } => Type::Array {
            elem: *elem,
            shape: shape
                .iter()
                .map(|d| match d {
                    ExtDim::Free(s) => Ok(s.clone()),
                    ExtDim::Ext(i) => results
                        .get(*i)
                        .cloned()
                        .ok_or_else(|| "an existential size out of range".to_string()),
                })
                .collect::<Result<_, String>>()?,
        },
        ExtType::Acc { .. } => return Err("accumulators".to_string()),
    })
}

/// A transformed lambda: its params, body statements and the tangents of its results.
type LambdaParts = (Vec<Param>, Vec<Stm>, Vec<Option<SubExp>>);

struct Fwd<'a> {
    ns: &'a mut NameSource,
    /// Tangent of each primal variable that has a (possibly) nonzero one.
    tans: HashMap<VName, SubExp>,
    /// Types of the variables bound inside the differentiated lambda (primal and tangent).
    types: HashMap<VName, Type>,
}

impl Fwd<'_> {
    fn tan_of(&self, s: &SubExp) -> Option<SubExp> {
        match s {
            SubExp::Var(v) => self.tans.get(v).cloned(),
            SubExp::Const(_) => None,
        }
    }

    /// The tangent variable of an array, if it has one.
    fn tan_arr(&self, v: &VName) -> Option<VName> {
        self.tans.get(v).and_then(|s| s.as_var().cloned())
    }

    fn fresh_param(&mut self, base: &str, ty: Type) -> Param {
        let p = Param {
            name: self.ns.fresh(base),
            ty: ty.clone(),
        };
        self.types.insert(p.name.clone(), ty);
        p
    }

    /// Binds `exp` to a fresh tangent variable of type `ty`.
    fn bind_tan(&mut self, base: &str, ty: Type, exp: Exp, out: &mut Vec<Stm>) -> SubExp {
        let p = self.fresh_param(&format!("{base}_tan"), ty);
        let v = SubExp::Var(p.name.clone());
        out.push(stm1(p, exp));
        v
    }

    /// `tan` as a value of type `ty` (zero when `None`; integer/bool types are always zero).
    fn materialize(&mut self, tan: Option<SubExp>, ty: &Type, out: &mut Vec<Stm>) -> SubExp {
        if let Some(t) = tan {
            if is_float(ty) {
                return t;
            }
        }
        match ty {
            Type::Array { elem, shape } => self.bind_tan(
                "zero",
                ty.clone(),
                Exp::Replicate {
                    shape: shape.clone(),
                    value: zero_of(*elem),
                },
                out,
            ),
            Type::Prim(p) => zero_of(*p),
            // Not reachable: accumulators are rejected before.
            Type::Acc { .. } => zero_of(PrimType::Bool),
        }
    }

    fn record_pat(&mut self, pat: &Pat) {
        for p in &pat.elems {
            self.types.insert(p.name.clone(), p.ty.clone());
        }
    }

    fn stms(&mut self, stms: &[Stm]) -> Result<Vec<Stm>, String> {
        let mut out = vec![];
        for s in stms {
            self.stm(s, &mut out)?;
        }
        Ok(out)
    }

    /// Σ ∂ᵢ·ȧᵢ over the nonzero tangents, as a scalar of type `t`.
    fn combine(
        &mut self,
        pt: PrimType,
        terms: Vec<(Partial, Option<SubExp>)>,
        out: &mut Vec<Stm>,
    ) -> Option<SubExp> {
        let mut b = Builder::new(self.ns);
        let mut acc: Option<SubExp> = None;
        for (p, tan) in terms {
            let Some(tan) = tan else { continue };
            let term = match p {
                Partial::Zero => continue,
                Partial::One => tan,
                Partial::NegOne => SubExp::Var(b.unop(UnOp::Neg(pt), tan)),
                Partial::Val(d) => SubExp::Var(b.binop(derivatives::mul_op(pt), d, tan)),
            };
            acc = Some(match acc {
                None => term,
                Some(a) => SubExp::Var(b.binop(derivatives::add_op(pt), a, term)),
            });
        }
        let stms = b.stms;
        for s in &stms {
            self.record_pat(&s.pat);
        }
        out.extend(stms);
        acc
    }

    /// Records the tangent of the single result of `stm`, if any.
    fn set_tan(&mut self, stm: &Stm, tan: Option<SubExp>) {
        if let (Some(t), Some(p)) = (tan, stm.pat.elems.first()) {
            self.tans.insert(p.name.clone(), t);
        }
    }

    fn stm(&mut self, stm: &Stm, out: &mut Vec<Stm>) -> Result<(), String> {
        self.record_pat(&stm.pat);
        let res_ty = stm.pat.elems.first().map(|p| p.ty.clone());
        let float_res = res_ty.as_ref().and_then(float_elem);
        match &stm.exp {
            Exp::SubExp(s) => {
                out.push(stm.clone());
                let t = self.tan_of(s);
                match (&t, &res_ty) {
                    (Some(SubExp::Var(tv)), Some(ty @ Type::Array { .. }))
                        if float_res.is_some() =>
                    {
                        // Arrays: a separate binding, mirroring the primal's aliasing.
                        let v = self.bind_tan(
                            "v",
                            ty.clone(),
                            Exp::SubExp(SubExp::Var(tv.clone())),
                            out,
                        );
                        self.set_tan(stm, Some(v));
                    }
                    _ if float_res.is_some() => self.set_tan(stm, t),
                    _ => {}
                }
            }
            Exp::UnOp(op, x) => {
                out.push(stm.clone());
                if let Some(ft) = float_res {
                    let mut b = Builder::new(self.ns);
                    let p = derivatives::unop(&mut b, *op, x)?;
                    let pre = b.stms;
                    self.emit(pre, out);
                    let tx = self.tan_of(x);
                    let t = self.combine(ft, vec![(p, tx)], out);
                    self.set_tan(stm, t);
                }
            }
            Exp::BinOp(op, x, y) => {
                out.push(stm.clone());
                if let Some(ft) = float_res {
                    let (tx, ty) = (self.tan_of(x), self.tan_of(y));
                    if tx.is_some() || ty.is_some() {
                        let mut b = Builder::new(self.ns);
                        let (px, py) = derivatives::binop(&mut b, *op, x, y)?;
                        let pre = b.stms;
                        self.emit(pre, out);
                        let t = self.combine(ft, vec![(px, tx), (py, ty)], out);
                        self.set_tan(stm, t);
                    }
                }
            }
            Exp::CmpOp(..) => out.push(stm.clone()),
            Exp::Conv(op, x) => {
                out.push(stm.clone());
                if let Some(ft) = float_res {
                    // As Futhark, conversions from or to bool convert the tangent too.
                    let boolish = op.from == PrimType::Bool || op.to == PrimType::Bool;
                    let p = derivatives::conv(*op);
                    if p != Partial::Zero || boolish {
                        if let Some(tx) = self.tan_of(x) {
                            // float → float: convert the tangent.
                            let v = self.bind_tan("conv", Type::Prim(ft), Exp::Conv(*op, tx), out);
                            self.set_tan(stm, Some(v));
                        }
                    }
                }
            }
            Exp::Math(f @ (MathFn::ToBits(_) | MathFn::FromBits(_)), args) => {
                // As Futhark (tests/ad/issue2292.fut): the tangent is reinterpreted too.
                out.push(stm.clone());
                if let (Some(ty), Some(tx)) = (&res_ty, args.first().and_then(|a| self.tan_of(a))) {
                    let v = self.bind_tan("bits", ty.clone(), Exp::Math(*f, vec![tx]), out);
                    self.set_tan(stm, Some(v));
                }
            }
            Exp::Math(f, args) => {
                out.push(stm.clone());
                if let Some(ft) = float_res {
                    let tans: Vec<Option<SubExp>> = args.iter().map(|a| self.tan_of(a)).collect();
                    if tans.iter().any(|t| t.is_some()) {
                        let res = SubExp::Var(stm.pat.elems[0].name.clone());
                        let mut b = Builder::new(self.ns);
                        let ps = derivatives::math_fn(&mut b, *f, args, &res)?;
                        let pre = b.stms;
                        self.emit(pre, out);
                        let t = self.combine(ft, ps.into_iter().zip(tans).collect(), out);
                        self.set_tan(stm, t);
                    }
                }
            }
            Exp::Index(a, idx) => {
                out.push(stm.clone());
                if let (Some(ty), Some(ta)) = (&res_ty, self.tan_arr(a)) {
                    if float_res.is_some() {
                        let v = self.bind_tan("idx", ty.clone(), Exp::Index(ta, idx.clone()), out);
                        self.set_tan(stm, Some(v));
                    }
                }
            }
            Exp::Update(a, idx, v) => {
                out.push(stm.clone());
                if let (Some(ty), Some(_)) = (&res_ty, float_res) {
                    let (ta, tv) = (self.tan_arr(a), self.tan_of(v));
                    if ta.is_some() || tv.is_some() {
                        let ta = self.materialize(ta.map(SubExp::Var), ty, out);
                        let vty = slice_type(ty, idx);
                        let tv = self.materialize(tv, &vty, out);
                        let ta = ta.as_var().cloned().ok_or("an update of a scalar")?;
                        let r =
                            self.bind_tan("upd", ty.clone(), Exp::Update(ta, idx.clone(), tv), out);
                        self.set_tan(stm, Some(r));
                    }
                }
            }
            Exp::Iota { .. } | Exp::Assert { .. } => out.push(stm.clone()),
            Exp::SortByKey { keys, .. } => {
                out.push(stm.clone());
                // The sorted keys are the keys gathered by the permutation: ṡ[j] = k̇[perm[j]]
                // (integers get tangents formally, as indexing gives them).
                if let (Some(tk), [sorted, perm]) = (self.tan_arr(keys), &stm.pat.elems[..]) {
                    let i64t = Type::Prim(crate::prim::PrimType::I64);
                    let mut b = Builder::new(self.ns);
                    let lam = b.lambda(&[("p", i64t.clone())], vec![i64t.clone()], |b, ps| {
                        vec![SubExp::Var(b.index(
                            i64t.clone(),
                            &tk,
                            vec![SubExp::Var(ps[0].clone())],
                        ))]
                    });
                    let w = sorted
                        .ty
                        .shape()
                        .first()
                        .cloned()
                        .ok_or("sort of a scalar")?;
                    let map = Exp::Soac(Soac::Map {
                        w,
                        arrs: vec![perm.name.clone()],
                        lam,
                    });
                    let t = self.bind_tan("sort_tan", sorted.ty.clone(), map, out);
                    self.set_tan(stm, Some(t));
                }
            }
            Exp::Replicate { shape, value } => {
                out.push(stm.clone());
                if let (Some(ty), Some(_), Some(tv)) = (&res_ty, float_res, self.tan_of(value)) {
                    let r = self.bind_tan(
                        "rep",
                        ty.clone(),
                        Exp::Replicate {
                            shape: shape.clone(),
                            value: tv,
                        },
                        out,
                    );
                    self.set_tan(stm, Some(r));
                }
            }
            Exp::ArrayLit { elems, row } => {
                out.push(stm.clone());
                if let (Some(ty), Some(_)) = (&res_ty, float_res) {
                    let tans: Vec<Option<SubExp>> = elems.iter().map(|e| self.tan_of(e)).collect();
                    if tans.iter().any(|t| t.is_some()) {
                        let mut tes = vec![];
                        for t in tans {
                            tes.push(self.materialize(t, row, out));
                        }
                        let r = self.bind_tan(
                            "lit",
                            ty.clone(),
                            Exp::ArrayLit {
                                elems: tes,
                                row: row.clone(),
                            },
                            out,
                        );
                        self.set_tan(stm, Some(r));
                    }
                }
            }
            Exp::Concat { dim, arrs, w } => {
                out.push(stm.clone());
                if let (Some(ty), Some(_)) = (&res_ty, float_res) {
                    let tans: Vec<Option<VName>> = arrs.iter().map(|a| self.tan_arr(a)).collect();
                    if tans.iter().any(|t| t.is_some()) {
                        let mut tas = vec![];
                        for (a, t) in arrs.iter().zip(tans) {
                            let v = match t {
                                Some(t) => t,
                                None => {
                                    let aty = self.types.get(a).cloned().ok_or(
                                        "`concat` of an array bound outside the differentiated function",
                                    )?;
                                    let z = self.materialize(None, &aty, out);
                                    z.as_var().cloned().ok_or("concat of a scalar")?
                                }
                            };
                            tas.push(v);
                        }
                        let r = self.bind_tan(
                            "concat",
                            ty.clone(),
                            Exp::Concat {
                                dim: *dim,
                                arrs: tas,
                                w: w.clone(),
                            },
                            out,
                        );
                        self.set_tan(stm, Some(r));
                    }
                }
            }
            Exp::Copy(a) | Exp::Reshape(_, a) | Exp::Rearrange(_, a) => {
                out.push(stm.clone());
                if let (Some(ty), Some(_), Some(ta)) = (&res_ty, float_res, self.tan_arr(a)) {
                    let e = match &stm.exp {
                        Exp::Copy(_) => Exp::Copy(ta),
                        Exp::Reshape(s, _) => Exp::Reshape(s.clone(), ta),
                        Exp::Rearrange(p, _) => Exp::Rearrange(p.clone(), ta),
                        _ => unreachable!("matched above"),
                    };
                    let r = self.bind_tan("re", ty.clone(), e, out);
                    self.set_tan(stm, Some(r));
                }
            }
            Exp::Apply { fun, .. } => return Err(format!("a call of `{fun}`")),
            Exp::WithAcc { inputs, lam } => self.with_acc_stm(stm, inputs, lam, out)?,
            Exp::UpdAcc { acc, idx, vals } => {
                self.upd_acc_stm(stm, acc, idx, vals, out)?;
            }
            // Forward mode differentiates the primal function of a custom derivative.
            Exp::WithVjp { primal, args, .. } => {
                let lam = crate::passes::traverse::fresh_lambda(self.ns, primal);
                for s in crate::ad::rev::custom::inline_lambda(lam, args, &stm.pat) {
                    self.stm(&s, out)?;
                }
            }
            // `ad::transform` differentiates the innermost AD node first, so none is left here.
            Exp::Jvp { .. } | Exp::Vjp { .. } => {
                return Err("a nested `jvp`/`vjp` that was not transformed first".to_string())
            }
            Exp::If {
                cond,
                then_b,
                else_b,
                ret,
            } => self.if_stm(stm, cond, then_b, else_b, ret, out)?,
            Exp::Loop { params, form, body } => self.loop_stm(stm, params, form, body, out)?,
            Exp::Soac(soac) => self.soac_stm(stm, soac, out)?,
        }
        Ok(())
    }

    fn emit(&mut self, stms: Vec<Stm>, out: &mut Vec<Stm>) {
        for s in &stms {
            self.record_pat(&s.pat);
        }
        out.extend(stms);
    }

    /// Transforms a branch; returns the body and the tangents (`None` = zero) of its results
    /// at `which`.
    fn branch(&mut self, b: &Body, which: &[usize]) -> Result<(Body, Vec<Option<SubExp>>), String> {
        let stms = self.stms(&b.stms)?;
        let tans: Vec<Option<SubExp>> = which.iter().map(|&i| self.tan_of(&b.result[i])).collect();
        Ok((
            Body {
                stms,
                result: b.result.clone(),
            },
            tans,
        ))
    }

    fn if_stm(
        &mut self,
        stm: &Stm,
        cond: &SubExp,
        then_b: &Body,
        else_b: &Body,
        ret: &[ExtType],
        out: &mut Vec<Stm>,
    ) -> Result<(), String> {
        let which: Vec<usize> = stm
            .pat
            .elems
            .iter()
            .enumerate()
            .filter(|(_, p)| is_float(&p.ty))
            .map(|(i, _)| i)
            .collect();
        let (mut tb, tt) = self.branch(then_b, &which)?;
        let (mut eb, et) = self.branch(else_b, &which)?;
        let mut pat = stm.pat.clone();
        let mut ret2 = ret.to_vec();
        for (k, &i) in which.iter().enumerate() {
            if tt[k].is_none() && et[k].is_none() {
                continue; // zero in both branches
            }
            for (body, t) in [(&mut tb, tt[k].clone()), (&mut eb, et[k].clone())] {
                let ty = ext_to_type(&ret[i], &body.result)?;
                let mut extra = vec![];
                let z = self.materialize(t, &ty, &mut extra);
                body.stms.extend(extra);
                body.result.push(z);
            }
            ret2.push(ret[i].clone());
            let p = stm.pat.elems[i].clone();
            let tp = self.fresh_param(&format!("{}_tan", p.name.base), p.ty.clone());
            self.tans
                .insert(p.name.clone(), SubExp::Var(tp.name.clone()));
            pat.elems.push(tp);
        }
        out.push(Stm {
            pat,
            exp: Exp::If {
                cond: cond.clone(),
                then_b: tb,
                else_b: eb,
                ret: ret2,
            },
            attrs: stm.attrs.clone(),
            loc: stm.loc.clone(),
        });
        Ok(())
    }

    fn loop_stm(
        &mut self,
        stm: &Stm,
        params: &[(Param, SubExp)],
        form: &LoopForm,
        body: &Body,
        out: &mut Vec<Stm>,
    ) -> Result<(), String> {
        // Sizes of the initial values: param names → inits.
        let init_sub: HashMap<VName, SubExp> = params
            .iter()
            .map(|(p, i)| (p.name.clone(), i.clone()))
            .collect();
        let res_sub: HashMap<VName, SubExp> = params
            .iter()
            .zip(&body.result)
            .map(|((p, _), r)| (p.name.clone(), r.clone()))
            .collect();
        let mut new_params = params.to_vec();
        for (p, init) in params {
            self.types.insert(p.name.clone(), p.ty.clone());
            if !is_float(&p.ty) {
                continue;
            }
            let ity = subst_type(&p.ty, &init_sub);
            let ti = self.tan_of(init);
            let ti = self.materialize(ti, &ity, out);
            let tp = self.fresh_param(&format!("{}_tan", p.name.base), p.ty.clone());
            self.tans
                .insert(p.name.clone(), SubExp::Var(tp.name.clone()));
            new_params.push((tp, ti));
        }
        if let LoopForm::For { i, it, .. } = form {
            self.types.insert(i.clone(), Type::Prim(PrimType::Int(*it)));
        }
        let mut stms = self.stms(&body.stms)?;
        let mut result = body.result.clone();
        for ((p, _), r) in params.iter().zip(&body.result) {
            if !is_float(&p.ty) {
                continue;
            }
            let rty = subst_type(&p.ty, &res_sub);
            let t = self.tan_of(r);
            let z = self.materialize(t, &rty, &mut stms);
            result.push(z);
        }
        let mut pat = stm.pat.clone();
        for (pe, (p, _)) in stm.pat.elems.iter().zip(params) {
            if !is_float(&p.ty) {
                continue;
            }
            let tp = self.fresh_param(&format!("{}_tan", pe.name.base), pe.ty.clone());
            self.tans
                .insert(pe.name.clone(), SubExp::Var(tp.name.clone()));
            pat.elems.push(tp);
        }
        out.push(Stm {
            pat,
            exp: Exp::Loop {
                params: new_params,
                form: form.clone(),
                body: Body { stms, result },
            },
            attrs: stm.attrs.clone(),
            loc: stm.loc.clone(),
        });
        Ok(())
    }

    /// Transforms a lambda whose params `params[i]` have tangents where `has_tan[i]`. Returns
    /// the new params (primal, then the tangent params in order), the transformed body, and
    /// the tangents of its results (`None` = zero).
    fn lambda_parts(&mut self, lam: &Lambda, has_tan: &[bool]) -> Result<LambdaParts, String> {
        let mut params = lam.params.clone();
        for (p, &h) in lam.params.iter().zip(has_tan) {
            self.types.insert(p.name.clone(), p.ty.clone());
            if h && is_float(&p.ty) {
                let tp = self.fresh_param(&format!("{}_tan", p.name.base), p.ty.clone());
                self.tans
                    .insert(p.name.clone(), SubExp::Var(tp.name.clone()));
                params.push(tp);
            }
        }
        let stms = self.stms(&lam.body.stms)?;
        let tans = lam.body.result.iter().map(|r| self.tan_of(r)).collect();
        Ok((params, stms, tans))
    }

    /// Materializes the tangent of each input array (`types`: the arrays' types).
    fn input_tans(&mut self, arrs: &[VName], tys: &[Type], out: &mut Vec<Stm>) -> Vec<VName> {
        let mut v = vec![];
        for (a, ty) in arrs.iter().zip(tys) {
            let t = self.tan_arr(a).map(SubExp::Var);
            let z = self.materialize(t, ty, out);
            if let SubExp::Var(z) = z {
                v.push(z);
            }
        }
        v
    }

    /// The tangent-augmented operator: params (x, ẋ, y, ẏ) grouped as (x.., ẋ.., y.., ẏ..) for the
    /// float components; the tangent neutral elements are zeros. Returns the operator and the
    /// indices of the float components.
    fn tan_operator(
        &mut self,
        op: &Operator,
        out: &mut Vec<Stm>,
    ) -> Result<(Operator, Vec<usize>), String> {
        let k = op.neutral.len();
        let lam = &op.lam;
        if lam.params.len() != 2 * k || lam.ret.len() != k {
            return Err("an operator of the wrong arity".to_string());
        }
        let fl: Vec<usize> = (0..k).filter(|&i| is_float(&lam.ret[i])).collect();
        let mut params: Vec<Param> = lam.params[..k].to_vec();
        let mut tx = vec![];
        for &i in &fl {
            let p = &lam.params[i];
            let tp = self.fresh_param(&format!("{}_tan", p.name.base), p.ty.clone());
            self.tans
                .insert(p.name.clone(), SubExp::Var(tp.name.clone()));
            tx.push(tp);
        }
        params.extend(tx);
        params.extend(lam.params[k..].iter().cloned());
        for &i in &fl {
            let p = &lam.params[k + i];
            let tp = self.fresh_param(&format!("{}_tan", p.name.base), p.ty.clone());
            self.tans
                .insert(p.name.clone(), SubExp::Var(tp.name.clone()));
            params.push(tp);
        }
        for p in &lam.params {
            self.types.insert(p.name.clone(), p.ty.clone());
        }
        let mut stms = self.stms(&lam.body.stms)?;
        let mut result = lam.body.result.clone();
        let mut ret = lam.ret.clone();
        let mut neutral = op.neutral.clone();
        for &i in &fl {
            let t = self.tan_of(&lam.body.result[i]);
            let z = self.materialize(t, &lam.ret[i], &mut stms);
            result.push(z);
            ret.push(lam.ret[i].clone());
            let n = self.materialize(None, &lam.ret[i], out);
            neutral.push(n);
        }
        Ok((
            Operator {
                lam: Lambda {
                    params,
                    body: Body { stms, result },
                    ret,
                },
                neutral,
                commutative: op.commutative,
            },
            fl,
        ))
    }

    /// Adds tangent pattern elements for the pattern elements at `idx`.
    fn tan_pat(&mut self, pat: &Pat, idx: &[usize]) -> Pat {
        let mut p = pat.clone();
        for &i in idx {
            let pe = &pat.elems[i];
            let tp = self.fresh_param(&format!("{}_tan", pe.name.base), pe.ty.clone());
            self.tans
                .insert(pe.name.clone(), SubExp::Var(tp.name.clone()));
            p.elems.push(tp);
        }
        p
    }

    fn soac_stm(&mut self, stm: &Stm, soac: &Soac, out: &mut Vec<Stm>) -> Result<(), String> {
        let with = |pat: Pat, soac: Soac| Stm {
            pat,
            exp: Exp::Soac(soac),
            attrs: stm.attrs.clone(),
            loc: stm.loc.clone(),
        };
        match soac {
            Soac::Map { w, arrs, lam } => {
                let has: Vec<bool> = arrs.iter().map(|a| self.tan_arr(a).is_some()).collect();
                let (params, stms, tans) = self.lambda_parts(lam, &has)?;
                let mut new_arrs = arrs.clone();
                for ((a, &h), p) in arrs.iter().zip(&has).zip(&lam.params) {
                    if let (true, true, Some(t)) = (h, is_float(&p.ty), self.tan_arr(a)) {
                        new_arrs.push(t);
                    }
                }
                // Keep params and arrs aligned: tangent params were added exactly for the
                // float params with a tangent array.
                if new_arrs.len() != params.len() {
                    return Err("a map over arrays of unknown type".to_string());
                }
                let mut result = lam.body.result.clone();
                let mut ret = lam.ret.clone();
                let mut idx = vec![];
                for (i, t) in tans.into_iter().enumerate() {
                    if let (Some(t), true) = (t, is_float(&lam.ret[i])) {
                        result.push(t);
                        ret.push(lam.ret[i].clone());
                        idx.push(i);
                    }
                }
                let pat = self.tan_pat(&stm.pat, &idx);
                out.push(with(
                    pat,
                    Soac::Map {
                        w: w.clone(),
                        arrs: new_arrs,
                        lam: Lambda {
                            params,
                            body: Body { stms, result },
                            ret,
                        },
                    },
                ));
            }
            Soac::Reduce { w, arrs, op } | Soac::Scan { w, arrs, op } => {
                let k = op.neutral.len();
                let any = arrs.iter().any(|a| self.tan_arr(a).is_some());
                let free_tan = self.lambda_has_free_tangent(&op.lam);
                if !any && !free_tan {
                    out.push(stm.clone());
                    return Ok(());
                }
                let (op2, fl) = self.tan_operator(op, out)?;
                let tys: Vec<Type> = fl
                    .iter()
                    .map(|&i| op.lam.params[k + i].ty.array_of(w.clone()))
                    .collect();
                let fl_arrs: Vec<VName> = fl.iter().map(|&i| arrs[i].clone()).collect();
                let tarrs = self.input_tans(&fl_arrs, &tys, out);
                // The operator's params are (x.., ẋ.., y.., ẏ..): inputs are (arrs.., tarrs..).
                let mut new_arrs = arrs.clone();
                new_arrs.extend(tarrs);
                let pat = self.tan_pat(&stm.pat, &fl);
                let s = match soac {
                    Soac::Reduce { .. } => Soac::Reduce {
                        w: w.clone(),
                        arrs: new_arrs,
                        op: op2,
                    },
                    _ => Soac::Scan {
                        w: w.clone(),
                        arrs: new_arrs,
                        op: op2,
                    },
                };
                out.push(with(pat, s));
            }
            Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            } => {
                let any = dest.iter().chain(vals).any(|a| self.tan_arr(a).is_some());
                if !any && !self.lambda_has_free_tangent(&op.lam) {
                    out.push(stm.clone());
                    return Ok(());
                }
                let (op2, fl) = self.tan_operator(op, out)?;
                let dtys: Vec<Type> = fl.iter().map(|&i| stm.pat.elems[i].ty.clone()).collect();
                let fl_dest: Vec<VName> = fl.iter().map(|&i| dest[i].clone()).collect();
                let tdest = self.input_tans(&fl_dest, &dtys, out);
                let mut vtys = vec![];
                let k = op.neutral.len();
                for &i in &fl {
                    let ty = match self.types.get(&vals[i]) {
                        Some(t) => t.clone(),
                        None => op.lam.params[k + i].ty.array_of(w.clone()),
                    };
                    vtys.push(ty);
                }
                let fl_vals: Vec<VName> = fl.iter().map(|&i| vals[i].clone()).collect();
                let tvals = self.input_tans(&fl_vals, &vtys, out);
                let mut nd = dest.clone();
                nd.extend(tdest);
                let mut nv = vals.clone();
                nv.extend(tvals);
                let pat = self.tan_pat(&stm.pat, &fl);
                out.push(with(
                    pat,
                    Soac::Hist {
                        w: w.clone(),
                        dest: nd,
                        op: op2,
                        inds: inds.clone(),
                        vals: nv,
                    },
                ));
            }
            Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            } => {
                let mut nd = dest.clone();
                let mut nv = vals.clone();
                let mut idx = vec![];
                for (i, (d, v)) in dest.iter().zip(vals).enumerate() {
                    let dty = stm.pat.elems[i].ty.clone();
                    if !is_float(&dty) {
                        continue;
                    }
                    let (td, tv) = (self.tan_arr(d), self.tan_arr(v));
                    if td.is_none() && tv.is_none() {
                        continue;
                    }
                    let mut vshape = vec![w.clone()];
                    vshape.extend(dty.shape()[inds.len().min(dty.rank())..].iter().cloned());
                    let vty = Type::array(dty.elem().unwrap_or(PrimType::Bool), vshape);
                    let td = self.materialize(td.map(SubExp::Var), &dty, out);
                    let tv = self.materialize(tv.map(SubExp::Var), &vty, out);
                    match (td, tv) {
                        (SubExp::Var(td), SubExp::Var(tv)) => {
                            nd.push(td);
                            nv.push(tv);
                        }
                        _ => return Err("a scatter into a scalar".to_string()),
                    }
                    idx.push(i);
                }
                let pat = self.tan_pat(&stm.pat, &idx);
                out.push(with(
                    pat,
                    Soac::Scatter {
                        w: w.clone(),
                        dest: nd,
                        inds: inds.clone(),
                        vals: nv,
                    },
                ));
            }
        }
        Ok(())
    }

    /// `withacc` with tangents: each input's float arrays get their tangent arrays as extra
    /// arrays of the same accumulator (so an accumulator carries values and tangents
    /// together), with the tangent operator of [`Fwd::tan_operator`] (for `+`: `+` on both);
    /// the accumulator types inside the lambda gain the tangent elements, `upd_acc` adds the
    /// tangents of its values, and the lambda's extra float results get tangents.
    fn with_acc_stm(
        &mut self,
        stm: &Stm,
        inputs: &[AccInput],
        lam: &Lambda,
        out: &mut Vec<Stm>,
    ) -> Result<(), String> {
        let n = inputs.len();
        let any = inputs
            .iter()
            .flat_map(|i| &i.arrs)
            .any(|a| self.tan_arr(a).is_some());
        if !any && !self.lambda_has_free_tangent(lam) {
            for p in &lam.params {
                self.types.insert(p.name.clone(), p.ty.clone());
            }
            out.push(stm.clone());
            return Ok(());
        }
        if lam.params.len() != n {
            return Err("a withacc of the wrong arity".to_string());
        }
        // Per input: the indices of its float arrays.
        let mut new_inputs = vec![];
        let mut fls: HashMap<VName, Vec<usize>> = HashMap::new();
        let mut pat = vec![];
        let mut pe = stm.pat.elems.iter();
        for (inp, p) in inputs.iter().zip(&lam.params) {
            let tys: Vec<Type> = inp
                .arrs
                .iter()
                .map(|a| {
                    self.types
                        .get(a)
                        .cloned()
                        .ok_or_else(|| format!("a withacc input of unknown type ({a})"))
                })
                .collect::<Result<_, String>>()?;
            let fl: Vec<usize> = (0..tys.len()).filter(|&i| is_float(&tys[i])).collect();
            let (op, fl) = match &inp.op {
                Some(op) => {
                    let (op2, fl2) = self.tan_operator(op, out)?;
                    (Some(op2), fl2)
                }
                None => (None, fl),
            };
            let fl_arrs: Vec<VName> = fl.iter().map(|&i| inp.arrs[i].clone()).collect();
            let fl_tys: Vec<Type> = fl.iter().map(|&i| tys[i].clone()).collect();
            let tarrs = self.input_tans(&fl_arrs, &fl_tys, out);
            let mut arrs = inp.arrs.clone();
            arrs.extend(tarrs);
            new_inputs.push(AccInput {
                shape: inp.shape.clone(),
                arrs,
                op,
            });
            fls.insert(p.name.clone(), fl.clone());
            // The pattern: this input's arrays, then their tangents.
            let mine: Vec<Param> = pe.by_ref().take(inp.arrs.len()).cloned().collect();
            pat.extend(mine.iter().cloned());
            for &i in &fl {
                let m = mine.get(i).ok_or("a withacc pattern of the wrong arity")?;
                let tp = self.fresh_param(&format!("{}_tan", m.name.base), m.ty.clone());
                self.tans
                    .insert(m.name.clone(), SubExp::Var(tp.name.clone()));
                pat.push(tp);
            }
        }
        let extras: Vec<Param> = pe.cloned().collect();
        let mut lam = lam.clone();
        retype_lambda(&mut lam, &fls);
        for p in &lam.params {
            self.types.insert(p.name.clone(), p.ty.clone());
        }
        let mut stms = self.stms(&lam.body.stms)?;
        let mut result = lam.body.result.clone();
        let mut ret = lam.ret.clone();
        pat.extend(extras.iter().cloned());
        for (i, e) in extras.iter().enumerate() {
            if !is_float(&e.ty) {
                continue;
            }
            let t = self.tan_of(&lam.body.result[n + i]);
            let z = self.materialize(t, &lam.ret[n + i], &mut stms);
            result.push(z);
            ret.push(lam.ret[n + i].clone());
            let tp = self.fresh_param(&format!("{}_tan", e.name.base), e.ty.clone());
            self.tans
                .insert(e.name.clone(), SubExp::Var(tp.name.clone()));
            pat.push(tp);
        }
        self.record_pat(&Pat { elems: pat.clone() });
        out.push(Stm {
            pat: Pat { elems: pat },
            exp: Exp::WithAcc {
                inputs: new_inputs,
                lam: Lambda {
                    params: lam.params,
                    body: Body { stms, result },
                    ret,
                },
            },
            attrs: stm.attrs.clone(),
            loc: stm.loc.clone(),
        });
        Ok(())
    }

    /// `upd_acc` on an accumulator that carries tangents (its type has more elements than the
    /// update has values): the tangents of the float values follow the values.
    fn upd_acc_stm(
        &mut self,
        stm: &Stm,
        acc: &VName,
        idx: &[SubExp],
        vals: &[SubExp],
        out: &mut Vec<Stm>,
    ) -> Result<(), String> {
        let elems = match self.types.get(acc) {
            Some(Type::Acc { elems, .. }) => elems.clone(),
            _ => return Err(format!("upd_acc of {acc}, not a known accumulator")),
        };
        if elems.len() == vals.len() {
            out.push(stm.clone());
            return Ok(());
        }
        let mut vs = vals.to_vec();
        for (v, t) in vals.iter().zip(&elems) {
            if is_float(t) {
                let tv = self.tan_of(v);
                vs.push(self.materialize(tv, t, out));
            }
        }
        if vs.len() != elems.len() {
            return Err("an accumulator update of the wrong arity".to_string());
        }
        out.push(Stm {
            pat: stm.pat.clone(),
            exp: Exp::UpdAcc {
                acc: acc.clone(),
                idx: idx.to_vec(),
                vals: vs,
            },
            attrs: stm.attrs.clone(),
            loc: stm.loc.clone(),
        });
        Ok(())
    }

    /// Does the lambda mention a free variable that has a tangent?
    fn lambda_has_free_tangent(&self, lam: &Lambda) -> bool {
        let mut found = false;
        visit_body_vars(&lam.body, &mut |v| {
            if self.tans.contains_key(v) {
                found = true;
            }
        });
        found
    }
}

/// Calls `f` on every variable used in `b` (including nested bodies).
fn visit_body_vars(b: &Body, f: &mut impl FnMut(&VName)) {
    let se = |s: &SubExp, f: &mut dyn FnMut(&VName)| {
        if let SubExp::Var(v) = s {
            f(v)
        }
    };
    for s in &b.stms {
        visit_exp_vars(&s.exp, f);
    }
    for r in &b.result {
        se(r, f);
    }
}

fn visit_exp_vars(e: &Exp, f: &mut impl FnMut(&VName)) {
    let se = |s: &SubExp, f: &mut dyn FnMut(&VName)| {
        if let SubExp::Var(v) = s {
            f(v)
        }
    };
    let idx = |d: &[DimIndex], f: &mut dyn FnMut(&VName)| {
        for i in d {
            match i {
                DimIndex::Fix(s) => se(s, f),
                DimIndex::Slice { start, len, stride } => {
                    se(start, f);
                    se(len, f);
                    se(stride, f);
                }
            }
        }
    };
    match e {
        Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Conv(_, a) => se(a, f),
        Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) => {
            se(a, f);
            se(b, f);
        }
        Exp::Math(_, xs) | Exp::ArrayLit { elems: xs, .. } | Exp::Apply { args: xs, .. } => {
            xs.iter().for_each(|x| se(x, f))
        }
        Exp::Index(a, d) => {
            f(a);
            idx(d, f);
        }
        Exp::Update(a, d, v) => {
            f(a);
            idx(d, f);
            se(v, f);
        }
        Exp::Replicate { value, .. } => se(value, f),
        Exp::Concat { arrs, .. } => arrs.iter().for_each(&mut *f),
        Exp::Copy(a) | Exp::Reshape(_, a) | Exp::Rearrange(_, a) => f(a),
        Exp::Iota { .. } | Exp::Assert { .. } => {}
        Exp::SortByKey { keys, bits } => {
            f(keys);
            se(bits, f);
        }
        Exp::If { then_b, else_b, .. } => {
            visit_body_vars(then_b, f);
            visit_body_vars(else_b, f);
        }
        Exp::Loop { params, body, .. } => {
            params.iter().for_each(|(_, i)| se(i, f));
            visit_body_vars(body, f);
        }
        Exp::Soac(s) => match s {
            Soac::Map { arrs, lam, .. } => {
                arrs.iter().for_each(&mut *f);
                visit_body_vars(&lam.body, f);
            }
            Soac::Reduce { arrs, op, .. } | Soac::Scan { arrs, op, .. } => {
                arrs.iter().for_each(&mut *f);
                visit_body_vars(&op.lam.body, f);
            }
            Soac::Hist { dest, op, vals, .. } => {
                dest.iter().chain(vals).for_each(&mut *f);
                visit_body_vars(&op.lam.body, f);
            }
            Soac::Scatter { dest, vals, .. } => dest.iter().chain(vals).for_each(&mut *f),
        },
        Exp::WithAcc { inputs, lam } => {
            inputs.iter().flat_map(|i| &i.arrs).for_each(&mut *f);
            visit_body_vars(&lam.body, f);
        }
        Exp::UpdAcc { acc, vals, .. } => {
            f(acc);
            vals.iter().for_each(|x| se(x, f));
        }
        Exp::Jvp { lam, args, seeds } | Exp::Vjp { lam, args, seeds } => {
            args.iter().chain(seeds).for_each(|x| se(x, f));
            visit_body_vars(&lam.body, f);
        }
        Exp::WithVjp {
            primal,
            adjoint,
            args,
        } => {
            args.iter().for_each(|x| se(x, f));
            visit_body_vars(&primal.body, f);
            visit_body_vars(&adjoint.body, f);
        }
    }
}

/// The accumulator types of the certificates in `fls` gain the elements `fls[cert]` again (their
/// tangents), everywhere in `lam` (params, patterns, results, nested lambdas and bodies).
fn retype_lambda(lam: &mut Lambda, fls: &HashMap<VName, Vec<usize>>) {
    lam.params.iter_mut().for_each(|p| retype(&mut p.ty, fls));
    lam.ret.iter_mut().for_each(|t| retype(t, fls));
    retype_body(&mut lam.body, fls);
}

fn retype<D: Clone>(t: &mut TypeBase<D>, fls: &HashMap<VName, Vec<usize>>) {
    if let TypeBase::Acc { cert, elems, .. } = t {
        if let Some(fl) = fls.get(cert) {
            let extra: Vec<Type> = fl.iter().filter_map(|&i| elems.get(i).cloned()).collect();
            elems.extend(extra);
        }
    }
}

fn retype_body(b: &mut Body, fls: &HashMap<VName, Vec<usize>>) {
    for s in &mut b.stms {
        s.pat.elems.iter_mut().for_each(|p| retype(&mut p.ty, fls));
        match &mut s.exp {
            Exp::If {
                then_b,
                else_b,
                ret,
                ..
            } => {
                retype_body(then_b, fls);
                retype_body(else_b, fls);
                ret.iter_mut().for_each(|t| retype(t, fls));
            }
            Exp::Loop { params, body, .. } => {
                params.iter_mut().for_each(|(p, _)| retype(&mut p.ty, fls));
                retype_body(body, fls);
            }
            Exp::Apply { ret, .. } => ret.iter_mut().for_each(|t| retype(t, fls)),
            Exp::WithAcc { lam, inputs } => {
                retype_lambda(lam, fls);
                for i in inputs {
                    if let Some(op) = &mut i.op {
                        retype_lambda(&mut op.lam, fls);
                    }
                }
            }
            Exp::Soac(soac) => match soac {
                Soac::Map { lam, .. } => retype_lambda(lam, fls),
                Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. } => {
                    retype_lambda(&mut op.lam, fls)
                }
                Soac::Scatter { .. } => {}
            },
            _ => {}
        }
    }
}
