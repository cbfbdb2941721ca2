//! Lowering of the SOAC intrinsics: `map`, `reduce`, `scan`, `reduce_by_index`, `hist`,
//! `scatter`. Function arguments become [`ir::Lambda`]s whose bodies are the inlined functions.

use super::env::SV;
use super::expr::bound_names;
use super::shared_sizes::{size_slice, take};
use super::types::{arr_var, arr_vars, map_inputs, outer_dim, row_template};
use super::{internal, Lowerer, R};
use crate::diag::{Diagnostic, Span};
use crate::ir::{Body, Exp, Lambda, Operator, Param, Soac, Stm, SubExp, Type, VName};
use std::collections::HashSet;

impl<'a> Lowerer<'a> {
    /// Builds a lambda applying `f` to fresh parameters shaped like `templates`. Returns the
    /// lambda and the structure of its result.
    pub fn make_lambda(
        &mut self,
        f: &SV<'a>,
        templates: &[SV<'a>],
        span: Span,
    ) -> R<(Lambda, SV<'a>)> {
        let mut params: Vec<Param> = vec![];
        let mut args = vec![];
        for t in templates {
            args.push(t.map_leaves(&mut |_, ty| -> R<(SubExp, Type)> {
                let v = self.names.fresh("x");
                params.push(Param {
                    name: v.clone(),
                    ty: ty.clone(),
                });
                Ok((SubExp::Var(v), ty.clone()))
            })?);
        }
        let saved_attrs = std::mem::take(&mut self.attrs);
        self.attrs = saved_attrs
            .iter()
            .filter(|a| *a == "unsafe")
            .cloned()
            .collect();
        let r = self.in_body(|s| s.apply(f.clone(), args, span));
        self.attrs = saved_attrs;
        let (mut stms, r) = r?;
        if r.contains_fun() {
            return Err(Diagnostic::not_supported(
                span,
                "a function passed to a SOAC that returns a function",
            ));
        }
        let leaves = r.leaves();
        let needed: Vec<VName> = leaves
            .iter()
            .flat_map(|(_, t)| t.shape().iter().filter_map(|d| d.as_var().cloned()))
            .collect();
        let hoisted = hoist_sizes(&mut stms, &params, &needed, span)?;
        self.stms.extend(hoisted);
        let lam = Lambda {
            params,
            body: Body {
                stms,
                result: leaves.iter().map(|l| l.0.clone()).collect(),
            },
            ret: leaves.iter().map(|l| l.1.clone()).collect(),
        };
        Ok((lam, r))
    }

    pub fn soac_map(&mut self, f: &SV<'a>, xs: &SV<'a>, span: Span) -> R<SV<'a>> {
        let w = outer_dim(xs, span)?;
        let (row, arrs) = map_inputs(xs, span)?;
        let (mut lam, mut shape) = self.make_lambda(f, &[row], span)?;
        let carrier = shape.clone().with_unit_carrier();
        if let SV::Units(c, t) = &carrier {
            // A map to empty tuples: its result carries the shape (see `SV::Units`).
            lam.body.result.push(c.clone());
            lam.ret.push(t.clone());
            shape = carrier;
        }
        let tys: Vec<Type> = lam.ret.iter().map(|t| t.array_of(w.clone())).collect();
        let names = self.letn(
            "map_res",
            tys.clone(),
            Exp::Soac(Soac::Map { w, arrs, lam }),
        );
        Ok(shape.rebuild(&mut names.into_iter().map(SubExp::Var).zip(tys)))
    }

    pub(super) fn operator(
        &mut self,
        op: &SV<'a>,
        ne: &SV<'a>,
        row: &SV<'a>,
        commutative: bool,
        span: Span,
    ) -> R<Operator> {
        let (mut lam, _) = self.make_lambda(op, &[row.clone(), row.clone()], span)?;
        let rows = row.leaves();
        let nel = ne.leaves();
        if nel.len() != lam.ret.len() || rows.len() != lam.ret.len() {
            return Err(internal(
                span,
                "neutral element does not match the operator",
            ));
        }
        // The neutral element and the operator's results must have the rows' exact shapes.
        let mut neutral = vec![];
        for ((s, t), (_, rt)) in nel.into_iter().zip(&rows) {
            neutral.push(self.coerce(s, &t, rt.shape(), span)?);
        }
        if lam.ret.iter().zip(&rows).any(|(a, (_, b))| a != b) {
            let (res, ret) = (lam.body.result.clone(), lam.ret.clone());
            let (stms, res) = self.in_body(|s| {
                res.into_iter()
                    .zip(&ret)
                    .zip(&rows)
                    .map(|((r, t), (_, want))| s.coerce(r, t, want.shape(), span))
                    .collect::<R<Vec<_>>>()
            })?;
            lam.body.stms.extend(stms);
            lam.body.result = res;
            lam.ret = rows.iter().map(|l| l.1.clone()).collect();
        }
        Ok(Operator {
            lam,
            neutral,
            commutative,
        })
    }

    pub fn soac_reduce(
        &mut self,
        op: &SV<'a>,
        ne: &SV<'a>,
        xs: &SV<'a>,
        commutative: bool,
        span: Span,
    ) -> R<SV<'a>> {
        let w = outer_dim(xs, span)?;
        let row = row_template(xs, span)?;
        let arrs = arr_vars(&xs.leaves(), span)?;
        let op = self.operator(op, ne, &row, commutative, span)?;
        let tys: Vec<Type> = row.leaves().into_iter().map(|l| l.1).collect();
        let names = self.letn("red", tys.clone(), Exp::Soac(Soac::Reduce { w, arrs, op }));
        Ok(row.rebuild(&mut names.into_iter().map(SubExp::Var).zip(tys)))
    }

    pub fn soac_scan(&mut self, op: &SV<'a>, ne: &SV<'a>, xs: &SV<'a>, span: Span) -> R<SV<'a>> {
        let w = outer_dim(xs, span)?;
        let row = row_template(xs, span)?;
        let arrs = arr_vars(&xs.leaves(), span)?;
        let op = self.operator(op, ne, &row, false, span)?;
        let tys: Vec<Type> = row
            .leaves()
            .into_iter()
            .map(|l| l.1.array_of(w.clone()))
            .collect();
        let names = self.letn("scan", tys.clone(), Exp::Soac(Soac::Scan { w, arrs, op }));
        Ok(xs.rebuild(&mut names.into_iter().map(SubExp::Var).zip(tys)))
    }

    /// Fresh copies of the leaves of an array value (for consumption).
    pub fn copy_leaves(&mut self, v: &SV<'a>, span: Span) -> R<SV<'a>> {
        v.map_leaves(&mut |s, t| match t {
            Type::Array { .. } => {
                let var = arr_var(s, span)?;
                Ok((self.let1("copy", t.clone(), Exp::Copy(var)), t.clone()))
            }
            _ => Ok((s.clone(), t.clone())),
        })
    }

    /// `Hist` into `dest` (already fresh arrays).
    fn hist_into(
        &mut self,
        dest: SV<'a>,
        op: &SV<'a>,
        ne: &SV<'a>,
        is: &SV<'a>,
        vs: &SV<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let w = outer_dim(is, span)?;
        let inds = match is.leaves().as_slice() {
            [(s, _)] => arr_var(s, span)?,
            _ => {
                return Err(Diagnostic::not_supported(
                    span,
                    "multi-dimensional `reduce_by_index`",
                ))
            }
        };
        let vs = self.coerce_outer(vs.clone(), &w, span)?;
        let row = row_template(&vs, span)?;
        let op = self.operator(op, ne, &row, true, span)?;
        let vals = arr_vars(&vs.leaves(), span)?;
        let dl = dest.leaves();
        let dests = arr_vars(&dl, span)?;
        let tys: Vec<Type> = dl.into_iter().map(|l| l.1).collect();
        let names = self.letn(
            "hist",
            tys.clone(),
            Exp::Soac(Soac::Hist {
                w,
                dest: dests,
                op,
                inds,
                vals,
            }),
        );
        Ok(dest.rebuild(&mut names.into_iter().map(SubExp::Var).zip(tys)))
    }

    pub fn soac_reduce_by_index(
        &mut self,
        dest: &SV<'a>,
        op: &SV<'a>,
        ne: &SV<'a>,
        is: &SV<'a>,
        vs: &SV<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let dest = self.copy_leaves(dest, span)?;
        self.hist_into(dest, op, ne, is, vs, span)
    }

    pub fn soac_hist(
        &mut self,
        op: &SV<'a>,
        ne: &SV<'a>,
        k: &SV<'a>,
        is: &SV<'a>,
        vs: &SV<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let (k, _) = super::expr::scalar(k, span)?;
        let dest = ne.map_leaves(&mut |s, t| {
            let at = t.array_of(k.clone());
            Ok((
                self.let1(
                    "bins",
                    at.clone(),
                    Exp::Replicate {
                        shape: vec![k.clone()],
                        value: s.clone(),
                    },
                ),
                at,
            ))
        })?;
        self.hist_into(dest, op, ne, is, vs, span)
    }

    pub fn soac_scatter(
        &mut self,
        dest: &SV<'a>,
        is: &SV<'a>,
        vs: &SV<'a>,
        dims: usize,
        span: Span,
    ) -> R<SV<'a>> {
        let w = outer_dim(is, span)?;
        let vs = self.coerce_outer(vs.clone(), &w, span)?;
        let inds = arr_vars(&is.leaves(), span)?;
        if inds.len() != dims {
            return Err(internal(span, "scatter index arity"));
        }
        let dest = self.copy_leaves(dest, span)?;
        let dl = dest.leaves();
        let dests = arr_vars(&dl, span)?;
        let vals = arr_vars(&vs.leaves(), span)?;
        let tys: Vec<Type> = dl.into_iter().map(|l| l.1).collect();
        let names = self.letn(
            "scatter",
            tys.clone(),
            Exp::Soac(Soac::Scatter {
                w,
                dest: dests,
                inds,
                vals,
            }),
        );
        Ok(dest.rebuild(&mut names.into_iter().map(SubExp::Var).zip(tys)))
    }
}

/// The statements of a lambda's body `stms` that compute the sizes `needed` of its results, moved
/// out (to run before the SOAC): each must be a [`size_slice`] of the body over its `params`,
/// or the SOAC is irregular.
fn hoist_sizes(stms: &mut Vec<Stm>, params: &[Param], needed: &[VName], span: Span) -> R<Vec<Stm>> {
    let params: HashSet<VName> = params.iter().map(|p| p.name.clone()).collect();
    let inner = bound_names(stms);
    let mut hoist: Vec<usize> = vec![];
    for v in needed {
        if !inner.contains(v) && !params.contains(v) {
            continue;
        }
        let slice = size_slice(stms, &params, v).ok_or_else(|| {
            Diagnostic::not_supported(
                span,
                "a function passed to a SOAC whose result size depends on its argument \
                 (irregular arrays)",
            )
        })?;
        hoist.extend(slice);
    }
    hoist.sort_unstable();
    hoist.dedup();
    Ok(take(stms, &hoist))
}
