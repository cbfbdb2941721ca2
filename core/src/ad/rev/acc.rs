//! The return sweep of accumulators (`withacc`, `upd_acc`), as in Futhark's `Futhark.AD.Rev.Acc`.
//! Accumulators in a differentiated program come from an earlier reverse-mode transformation
//! (vjp of vjp, jvp of vjp), so their operator is `+` (checked: another operator is an error) or
//! absent (overwriting, as a `scatter` would).
//!
//! - **The adjoint of an accumulator** is an array of the type of its `withacc` input: the
//!   adjoint `Ā` of the `withacc`'s result. An update `acc[i] ⊕= v` has unit partials, so every
//!   version of the accumulator (every `upd_acc` result, every `map` that passes it through)
//!   has the same adjoint `Ā`. It is therefore recorded once per accumulator *certificate*
//!   (the `withacc` lambda param that its type names), in the adjoint map under the
//!   certificate's name, while the `withacc`'s lambda is being differentiated.
//! - **`upd_acc acc i v`**: `v̄ += Ā[i]` (zero when `i` is out of bounds: the update was
//!   ignored). Statements binding accumulators are never skipped as symbolic zeros (see
//!   `rev_stm`): their values have adjoints through the certificate.
//! - **`withacc inputs lam`**: the return sweep is a `withacc` over copies of the result
//!   adjoints `Ā` whose lambda re-executes the forward sweep of `lam` (renamed), seeds the
//!   adjoints of its extra results and runs its return sweep. The re-executed updates, and those
//!   of every re-execution nested inside (the return sweep of a `map` that passes the
//!   accumulator re-executes its lambda), are turned into updates by zero, so the arrays that
//!   come out are the adjoints of the inputs: `Ā` itself for `+` (the operator stays `+`), and
//!   `Ā` with the overwritten cells zeroed for an accumulator without operator (those values do
//!   not reach the result). The lambda also returns the adjoints of the free variables that its
//!   return sweep changed, as the return sweep of `if` does.
//! - Known limitation (as in Futhark): for an accumulator without operator, two updates of the
//!   same cell both get `Ā[i]` as adjoint, although only the last write reaches the result.

use super::{bound_in, one_stm, zero_of, Adj, Rev, R};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};
use std::collections::{BTreeSet, HashMap, HashSet};

impl Rev<'_> {
    /// The adjoint array of the accumulators of certificate `cert` (searched from the innermost
    /// scope outwards).
    fn acc_adjoint(&self, cert: &VName) -> Option<SubExp> {
        let found = |m: &HashMap<VName, Adj>| match m.get(cert) {
            Some(Adj::Val { v, .. }) => Some(v.clone()),
            _ => None,
        };
        found(&self.adjs).or_else(|| self.frames.iter().rev().find_map(|f| found(&f.outer_adjs)))
    }

    pub(super) fn rev_upd_acc(&mut self, stm: &Stm) -> R<()> {
        let Exp::UpdAcc { acc, idx, vals } = &stm.exp else {
            return Err("upd_acc (internal error)".into());
        };
        let Type::Acc { cert, shape, .. } = self.ty_of(acc)? else {
            return Err("upd_acc of a non-accumulator (internal error)".into());
        };
        let abar = self
            .acc_adjoint(&cert)
            .ok_or_else(|| format!("the adjoint of accumulator {cert} (internal error)"))?;
        let [v] = vals.as_slice() else {
            return Err("an accumulator of several arrays".into());
        };
        let vty = self.ty(v)?;
        if matches!(v, SubExp::Const(_)) || !super::has_adjoint(&vty) {
            return Ok(());
        }
        let SubExp::Var(abar) = abar else {
            return Err("an accumulator adjoint that is a constant (internal error)".into());
        };
        // In bounds: 0 <= i_j < shape_j for every j.
        let i64t = PrimType::Int(IntType::I64);
        let boolt = Type::Prim(PrimType::Bool);
        let mut ok = SubExp::Const(PrimValue::Bool(true));
        for (i, n) in idx.iter().zip(&shape) {
            let lo = self.bind(
                "ge0",
                boolt.clone(),
                Exp::CmpOp(CmpOp::Le(i64t), SubExp::i64(0), i.clone()),
            );
            let hi = self.bind(
                "ltn",
                boolt.clone(),
                Exp::CmpOp(CmpOp::Lt(i64t), i.clone(), n.clone()),
            );
            let both = self.binop(BinOp::LogAnd, SubExp::Var(lo), SubExp::Var(hi));
            ok = self.binop(BinOp::LogAnd, ok, both);
        }
        let index: Vec<DimIndex> = idx.iter().cloned().map(DimIndex::Fix).collect();
        let then_b = self.in_body(|r| {
            let e = r.bind("acc_adj_elem", vty.clone(), Exp::Index(abar.clone(), index));
            Ok(vec![SubExp::Var(e)])
        })?;
        let else_b = self.in_body(|r| Ok(vec![r.zeros(&vty)?]))?;
        let d = self.bind(
            "upd_adj",
            vty.clone(),
            Exp::If {
                cond: ok,
                then_b,
                else_b,
                ret: vec![vty.to_ext()],
            },
        );
        self.add_adj_se(v, SubExp::Var(d), false)
    }

    pub(super) fn rev_with_acc(&mut self, stm: &Stm) -> R<()> {
        let Exp::WithAcc { inputs, lam } = &stm.exp else {
            return Err("withacc (internal error)".into());
        };
        let n = inputs.len();
        for inp in inputs {
            if inp.arrs.len() != 1 {
                return Err("an accumulator of several arrays".into());
            }
            if let Some(op) = &inp.op {
                if !is_addition(op) {
                    return Err("an accumulator whose operator is not `+`".into());
                }
            }
        }
        let res_adjs = self.take_result_adjs(&stm.pat);
        // The adjoints of the accumulated arrays (zero when absent).
        let mut abars = vec![];
        for (k, pe) in stm.pat.elems.iter().take(n).enumerate() {
            let a = match &res_adjs[k] {
                Some((a, _)) => a.clone(),
                None => self.zeros(&pe.ty)?,
            };
            abars.push(a);
        }

        // The lambda, renamed; its params' types name their own (new) certificates.
        let mut lam = self.rename_lambda(lam);
        for p in &mut lam.params {
            if let Type::Acc { cert, .. } = &mut p.ty {
                *cert = p.name.clone();
            }
        }
        for p in &lam.params {
            self.record_param(p);
        }
        let certs: Vec<VName> = lam.params.iter().map(|p| p.name.clone()).collect();

        // Inputs of the return-sweep withacc: copies of the adjoints (the withacc consumes them,
        // while the updates' rule reads the adjoints).
        let mut new_inputs = vec![];
        for (inp, a) in inputs.iter().zip(&abars) {
            let SubExp::Var(av) = a else {
                return Err("an array adjoint that is a constant (internal error)".into());
            };
            let ty = self.ty_of(av)?;
            let init = self.bind("acc_adj_init", ty.clone(), Exp::Copy(av.clone()));
            let op = match &inp.op {
                None => None,
                Some(_) => {
                    let row = Type::array(
                        ty.elem().ok_or("an accumulator element (internal error)")?,
                        ty.shape()[inp.shape.len()..].to_vec(),
                    );
                    Some(self.row_add_operator(&row)?)
                }
            };
            new_inputs.push(AccInput {
                shape: inp.shape.clone(),
                arrs: vec![init],
                op,
            });
        }

        let before = self.adjs.clone();
        for (c, a) in certs.iter().zip(&abars) {
            self.adjs.insert(
                c.clone(),
                Adj::Val {
                    v: a.clone(),
                    owned: false,
                },
            );
        }
        let body = self.in_body(|r| {
            r.fwd_stms(&lam.body.stms)?;
            for (res, a) in lam.body.result.iter().skip(n).zip(res_adjs.iter().skip(n)) {
                if let Some((a, _)) = a {
                    r.add_adj_se(res, a.clone(), false)?;
                }
            }
            r.rev_stms(&lam.body.stms)?;
            Ok(lam.body.result[..n].to_vec())
        });
        for c in &certs {
            self.adjs.remove(c);
        }
        let mut body = body?;

        // The free variables whose adjoint the lambda changed (sorted, for determinism).
        let mut locals: HashSet<VName> = bound_in(&body.stms);
        locals.extend(certs.iter().cloned());
        let changed: Vec<VName> = self
            .adjs
            .iter()
            .filter(|(k, v)| !locals.contains(*k) && before.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut ret: Vec<Type> = lam.params.iter().map(|p| p.ty.clone()).collect();
        let mut pat: Vec<(String, Type)> = vec![];
        for (inp, a) in inputs.iter().zip(&abars) {
            pat.push((format!("{}_adj", inp.arrs[0].base), self.ty(a)?));
        }
        for k in &changed {
            let (v, ty) = match self.adjs.get(k) {
                Some(Adj::Val { v, .. }) => (v.clone(), self.ty_of(k)?),
                Some(Adj::Acc(c)) => (SubExp::Var(c.clone()), self.ty_of(c)?),
                None => return Err("withacc adjoints (internal error)".into()),
            };
            body.result.push(v);
            ret.push(ty.clone());
            pat.push((format!("{}_adj", k.base), ty));
        }
        self.adjs = before;

        // The re-executed updates of these accumulators write zeros.
        let certset: HashSet<VName> = certs.iter().cloned().collect();
        body.stms = zero_updates(self.ns, std::mem::take(&mut body.stms), &certset);

        let names = self.bind_many(
            pat.iter().map(|(b, t)| (b.as_str(), t.clone())).collect(),
            Exp::WithAcc {
                inputs: new_inputs,
                lam: Lambda {
                    params: lam.params.clone(),
                    body,
                    ret,
                },
            },
        );
        for (inp, a) in inputs.iter().zip(&names) {
            self.add_adj(&inp.arrs[0], SubExp::Var(a.clone()), true)?;
        }
        for (k, v) in changed.iter().zip(&names[n..]) {
            if matches!(self.types.get(v), Some(Type::Acc { .. })) {
                self.adjs.insert(k.clone(), Adj::Acc(v.clone()));
            } else {
                self.set_adj(k, SubExp::Var(v.clone()), false);
            }
        }
        Ok(())
    }

    /// `+` on values of type `row` (a scalar, or an array added elementwise) as an operator.
    fn row_add_operator(&mut self, row: &Type) -> R<Operator> {
        let elem = row
            .elem()
            .ok_or("an accumulator element (internal error)")?;
        if row.rank() == 0 {
            return Ok(self.add_operator(elem));
        }
        let neutral = self.zeros(row)?;
        let pa = self.fresh_param("a", row.clone());
        let pb = self.fresh_param("b", row.clone());
        let (va, vb) = (SubExp::Var(pa.name.clone()), SubExp::Var(pb.name.clone()));
        let rt = row.clone();
        let body = self.in_body(|r| Ok(vec![r.add_values(va, vb, &rt)?]))?;
        Ok(Operator {
            lam: Lambda {
                params: vec![pa, pb],
                body,
                ret: vec![row.clone()],
            },
            neutral: vec![neutral],
            commutative: true,
        })
    }
}

/// Is the operator elementwise addition `(x.., y..) → (x₀+y₀, ..)` on scalars, as made by AD?
fn is_addition(op: &Operator) -> bool {
    let k = op.neutral.len();
    let ps = &op.lam.params;
    if ps.len() != 2 * k || op.lam.body.result.len() != k {
        return false;
    }
    let defs: HashMap<&VName, &Exp> = op
        .lam
        .body
        .stms
        .iter()
        .filter_map(|s| match s.pat.elems.as_slice() {
            [p] => Some((&p.name, &s.exp)),
            _ => None,
        })
        .collect();
    (0..k).all(|i| {
        let (x, y) = (
            SubExp::Var(ps[i].name.clone()),
            SubExp::Var(ps[k + i].name.clone()),
        );
        match &op.lam.body.result[i] {
            SubExp::Var(r) => matches!(
                defs.get(r),
                Some(Exp::BinOp(BinOp::Add(_), a, b))
                    if (*a == x && *b == y) || (*a == y && *b == x)
            ),
            SubExp::Const(_) => false,
        }
    })
}

/// `stms` with every `upd_acc` on an accumulator of a certificate in `certs` (at any depth)
/// writing zeros instead of its values.
fn zero_updates(ns: &mut NameSource, stms: Vec<Stm>, certs: &HashSet<VName>) -> Vec<Stm> {
    let mut out = Vec::with_capacity(stms.len());
    for mut s in stms {
        match &mut s.exp {
            Exp::UpdAcc { vals, .. } => {
                if let Some(Type::Acc { cert, elems, .. }) = s.pat.elems.first().map(|p| &p.ty) {
                    if certs.contains(cert) {
                        let mut zs = vec![];
                        for t in elems {
                            match t {
                                Type::Prim(p) => zs.push(zero_of(*p)),
                                Type::Array { elem, shape } => {
                                    let p = Param {
                                        name: ns.fresh("zeros"),
                                        ty: t.clone(),
                                    };
                                    let z = p.name.clone();
                                    out.push(one_stm(
                                        p,
                                        Exp::Replicate {
                                            shape: shape.clone(),
                                            value: zero_of(*elem),
                                        },
                                    ));
                                    zs.push(SubExp::Var(z));
                                }
                                Type::Acc { .. } => {}
                            }
                        }
                        if zs.len() == vals.len() {
                            *vals = zs;
                        }
                    }
                }
            }
            e => zero_in_exp(ns, e, certs),
        }
        out.push(s);
    }
    out
}

fn zero_in_body(ns: &mut NameSource, b: &mut Body, certs: &HashSet<VName>) {
    b.stms = zero_updates(ns, std::mem::take(&mut b.stms), certs);
}

fn zero_in_exp(ns: &mut NameSource, e: &mut Exp, certs: &HashSet<VName>) {
    match e {
        Exp::If { then_b, else_b, .. } => {
            zero_in_body(ns, then_b, certs);
            zero_in_body(ns, else_b, certs);
        }
        Exp::Loop { body, .. } => zero_in_body(ns, body, certs),
        Exp::WithAcc { lam, .. } => zero_in_body(ns, &mut lam.body, certs),
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. } => zero_in_body(ns, &mut lam.body, certs),
            Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. } => {
                zero_in_body(ns, &mut op.lam.body, certs)
            }
            Soac::Scatter { .. } => {}
        },
        _ => {}
    }
}

#[cfg(test)]
#[path = "tests_acc.rs"]
mod tests_acc;
