//! Lowering of the accumulator functions of Futhark's `intrinsics` module, as Futhark's
//! `tests/accs/intrinsics.fut` wraps them:
//!
//! - `scatter_stream dest f bs` becomes `with_acc [dest] (\acc -> map (\acc b -> f acc b) acc bs)`:
//!   one accumulator over the arrays of `dest` (consumed), passed to every application of `f`,
//!   whose updates overwrite (`op` absent);
//! - `hist_stream dest op ne f bs` is the same with the operator `op` (neutral `ne`) combining
//!   each update with the current value;
//! - `acc_write acc i v` becomes `upd_acc acc [i] v` (ignored when `i` is out of bounds, as in
//!   Futhark).
//!
//! An accumulator is one value leaf ([`SV::Val`]) of IR type [`Type::Acc`], whose certificate is
//! the `with_acc` lambda's parameter. Accumulators exist only inside the function passed to the
//! stream (the type checker's signatures ensure it returns one).

use super::env::SV;
use super::expr::scalar;
use super::types::{arr_vars, outer_dim, row_template};
use super::{internal, Lowerer, R};
use crate::diag::Span;
use crate::ir::{AccInput, Body, Exp, Lambda, Param, Soac, SubExp, Type};

impl<'a> Lowerer<'a> {
    /// `scatter_stream dest f bs` (`op` is `None`) or `hist_stream dest op ne f bs` (`op` is the
    /// operator and its neutral element).
    pub fn acc_stream(
        &mut self,
        dest: &SV<'a>,
        op: Option<(&SV<'a>, &SV<'a>)>,
        f: &SV<'a>,
        bs: &SV<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let dest = self.copy_leaves(dest, span)?;
        let k = outer_dim(&dest, span)?;
        let row = row_template(&dest, span)?;
        let op = match op {
            Some((op, ne)) => Some(self.operator(op, ne, &row, true, span)?),
            None => None,
        };
        let dl = dest.leaves();
        let arrs = arr_vars(&dl, span)?;
        let cert = self.names.fresh("acc");
        let acc_ty = Type::Acc {
            cert: cert.clone(),
            shape: vec![k.clone()],
            elems: row.leaves().into_iter().map(|l| l.1).collect(),
        };
        let acc = SV::Val(SubExp::Var(cert.clone()), acc_ty.clone());
        let (stms, res) = self.in_body(|s| {
            let w = outer_dim(bs, span)?;
            let brow = row_template(bs, span)?;
            let (lam, _) = s.make_lambda(f, &[acc, brow], span)?;
            if !matches!(lam.ret.as_slice(), [Type::Acc { cert: c, .. }] if *c == cert) {
                return Err(internal(
                    span,
                    "the function of an accumulator stream returns no accumulator",
                ));
            }
            let mut marrs = vec![cert.clone()];
            marrs.extend(arr_vars(&bs.leaves(), span)?);
            Ok(s.let1(
                "acc",
                acc_ty.clone(),
                Exp::Soac(Soac::Map {
                    w,
                    arrs: marrs,
                    lam,
                }),
            ))
        })?;
        let tys: Vec<Type> = dl.into_iter().map(|l| l.1).collect();
        let names = self.letn(
            "acc_res",
            tys.clone(),
            Exp::WithAcc {
                inputs: vec![AccInput {
                    shape: vec![k],
                    arrs,
                    op,
                }],
                lam: Lambda {
                    params: vec![Param {
                        name: cert,
                        ty: acc_ty.clone(),
                    }],
                    body: Body {
                        stms,
                        result: vec![res],
                    },
                    ret: vec![acc_ty],
                },
            },
        );
        Ok(dest.rebuild(&mut names.into_iter().map(SubExp::Var).zip(tys)))
    }

    /// `acc_write acc i v`.
    pub fn acc_write(&mut self, acc: &SV<'a>, i: &SV<'a>, v: &SV<'a>, span: Span) -> R<SV<'a>> {
        let SV::Val(SubExp::Var(a), t @ Type::Acc { elems, .. }) = acc else {
            return Err(internal(
                span,
                "acc_write on a value that is no accumulator",
            ));
        };
        let (i, it) = scalar(i, span)?;
        let i = self.i64_of(i, it);
        let leaves = v.leaves();
        if leaves.len() != elems.len() {
            return Err(internal(span, "acc_write of a value of the wrong type"));
        }
        let mut vals = vec![];
        for ((s, st), et) in leaves.into_iter().zip(elems) {
            vals.push(self.coerce(s, &st, et.shape(), span)?);
        }
        let r = self.let1(
            "acc",
            t.clone(),
            Exp::UpdAcc {
                acc: a.clone(),
                idx: vec![i],
                vals,
            },
        );
        Ok(SV::Val(r, t.clone()))
    }
}
