//! Lowering of `jvp`/`jvp2` and `vjp`/`vjp2`: the function argument becomes an [`ir::Lambda`]
//! over the flattened primal inputs and the call becomes an [`Exp::Jvp`] / [`Exp::Vjp`] node
//! applying it to the actual primal point and seeds. [`crate::ad::transform()`] later replaces the
//! node by the derivative code (after a first simplification, so that inlined helpers and
//! constant sizes are cleaned up first); the interpreter's AD oracle evaluates it directly.
//!
//! The node's result types must only mention names in scope outside its lambda. When a result
//! size is computed inside the function (`jvp (\n -> replicate n 1.0) ...`), the node could not
//! be typed, so lowering differentiates at once ([`crate::ad::fwd::jvp_lambda`] /
//! [`crate::ad::rev::vjp_lambda`]) and binds the derivative body inline, where those sizes stay
//! in scope.

use super::env::SV;
use super::{internal, Lowerer, R};
use crate::diag::{Diagnostic, Span};
use crate::ir::{self, Exp, Pat, Stm, SubExp};
use crate::passes::traverse::{walk_lambda, Binders};
use std::collections::{HashMap, HashSet};

/// Which derivative a call asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `jvp`/`jvp2`: the seed is a tangent of the argument.
    Fwd,
    /// `vjp`/`vjp2`: the seed is an adjoint of the result.
    Rev,
}

impl<'a> Lowerer<'a> {
    /// `jvp f x dx` / `vjp f x dy` (the derivative) or, with `both`, `jvp2`/`vjp2` (the pair of
    /// the primal result and the derivative).
    pub fn lower_ad(
        &mut self,
        mode: Mode,
        f: &SV<'a>,
        x: &SV<'a>,
        seed: &SV<'a>,
        both: bool,
        span: Span,
    ) -> R<SV<'a>> {
        let what = match mode {
            Mode::Fwd => "jvp",
            Mode::Rev => "vjp",
        };
        let (mut lam, shape) = self.function_lambda(f, x, what, span)?;
        let args: Vec<SubExp> = x.leaves().into_iter().map(|(s, _)| s).collect();
        let seeds: Vec<SubExp> = seed.leaves().into_iter().map(|(s, _)| s).collect();
        let n_seeds = match mode {
            Mode::Fwd => lam.params.len(),
            Mode::Rev => lam.ret.len(),
        };
        if args.len() != lam.params.len() || seeds.len() != n_seeds {
            return Err(internal(
                span,
                &format!("{what}: arguments do not match the function"),
            ));
        }
        let loc = Some(self.loc_of(span));
        let k = lam.ret.len();
        let results: Vec<(SubExp, ir::Type)> = if ret_mentions_inner(&mut lam) {
            // The lambda's free variables are what `f` captured and the sizes of `x`.
            let mut env = HashMap::new();
            let mut seen = HashSet::new();
            for v in [f, x, seed] {
                v.var_types(&mut env, &mut seen);
            }
            self.differentiate_inline(mode, &lam, &env, x.leaves(), seed.leaves(), span)?
        } else {
            let mut tys = lam.ret.clone();
            match mode {
                Mode::Fwd => tys.extend(lam.ret.iter().cloned()),
                Mode::Rev => tys.extend(lam.params.iter().map(|p| p.ty.clone())),
            }
            let elems: Vec<ir::Param> = tys
                .iter()
                .map(|ty| ir::Param {
                    name: self.names.fresh(what),
                    ty: ty.clone(),
                })
                .collect();
            let exp = match mode {
                Mode::Fwd => Exp::Jvp { lam, args, seeds },
                Mode::Rev => Exp::Vjp { lam, args, seeds },
            };
            let out = elems
                .iter()
                .map(|p| (SubExp::Var(p.name.clone()), p.ty.clone()))
                .collect();
            self.stms.push(Stm {
                pat: Pat { elems },
                exp,
                attrs: ir::Attrs(self.attrs.clone()),
                loc,
            });
            out
        };
        let (prim, der) = results.split_at(k);
        let der_v = match mode {
            Mode::Fwd => shape.rebuild(&mut der.iter().cloned()),
            Mode::Rev => x.rebuild(&mut der.iter().cloned()),
        };
        if both {
            let prim_v = shape.rebuild(&mut prim.iter().cloned());
            Ok(SV::Tuple(vec![prim_v, der_v]))
        } else {
            Ok(der_v)
        }
    }

    /// Differentiates `lam` now and binds the derivative's body inline to `args` and `seeds`
    /// (with their types); returns its results (primal results, then the derivatives). `env`:
    /// the types of the lambda's free variables.
    fn differentiate_inline(
        &mut self,
        mode: Mode,
        lam: &ir::Lambda,
        env: &HashMap<ir::VName, ir::Type>,
        args: Vec<(SubExp, ir::Type)>,
        seeds: Vec<(SubExp, ir::Type)>,
        span: Span,
    ) -> R<Vec<(SubExp, ir::Type)>> {
        let loc = Some(self.loc_of(span));
        let dl = match mode {
            Mode::Fwd => crate::ad::fwd::jvp_lambda(lam, &mut self.names)
                .map_err(|c| Diagnostic::not_supported(span, format!("jvp of {c}")))?,
            Mode::Rev => crate::ad::rev::vjp_lambda_in(lam, &mut self.names, env)
                .map_err(|c| Diagnostic::not_supported(span, format!("vjp of {c}")))?,
        };
        let inputs: Vec<(SubExp, ir::Type)> = args.into_iter().chain(seeds).collect();
        if inputs.len() != dl.params.len() {
            return Err(internal(span, "AD: arguments do not match the function"));
        }
        // A param gets the type of its input: the seeds of a vjp have the function's result
        // types, whose sizes are bound only by the derivative's body (the seed's own sizes are
        // in scope here and equal).
        for (p, (a, ty)) in dl.params.iter().zip(inputs) {
            self.stms.push(Stm {
                pat: Pat {
                    elems: vec![ir::Param {
                        name: p.name.clone(),
                        ty,
                    }],
                },
                exp: Exp::SubExp(a),
                attrs: ir::Attrs::default(),
                loc: loc.clone(),
            });
        }
        self.stms.extend(dl.body.stms);
        Ok(dl.body.result.into_iter().zip(dl.ret).collect())
    }
}

/// Whether a result type of `lam` mentions a name bound inside it (a param or a statement).
fn ret_mentions_inner(lam: &mut ir::Lambda) -> bool {
    let mut b = Binders::default();
    walk_lambda(&mut b, lam);
    let inner: HashSet<ir::VName> = b.names.into_iter().collect();
    lam.ret.iter().any(|t| {
        t.shape()
            .iter()
            .any(|d| d.as_var().is_some_and(|v| inner.contains(v)))
    })
}

impl<'a> Lowerer<'a> {
    /// `v` rebuilt over fresh parameters (named after `base`, one per leaf, appended to
    /// `params`).
    fn params_like(&mut self, v: &SV<'a>, base: &str, params: &mut Vec<ir::Param>) -> R<SV<'a>> {
        v.map_leaves(&mut |_, ty| -> R<(SubExp, ir::Type)> {
            let n = self.names.fresh(base);
            params.push(ir::Param {
                name: n.clone(),
                ty: ty.clone(),
            });
            Ok((SubExp::Var(n), ty.clone()))
        })
    }

    /// `f` applied to fresh parameters shaped like `x`, as a lambda, and the shape of its
    /// result (`what` names the caller in the error for a function-valued result).
    fn function_lambda(
        &mut self,
        f: &SV<'a>,
        x: &SV<'a>,
        what: &str,
        span: Span,
    ) -> R<(ir::Lambda, SV<'a>)> {
        let mut params = vec![];
        let arg = self.params_like(x, "x", &mut params)?;
        let (stms, shape) = self.in_body(|s| s.apply(f.clone(), vec![arg], span))?;
        if shape.contains_fun() {
            return Err(Diagnostic::not_supported(
                span,
                format!("{what} of a function returning a function"),
            ));
        }
        let leaves = shape.leaves();
        let lam = ir::Lambda {
            params,
            body: ir::Body {
                stms,
                result: leaves.iter().map(|l| l.0.clone()).collect(),
            },
            ret: leaves.iter().map(|l| l.1.clone()).collect(),
        };
        Ok((lam, shape))
    }

    /// `with_vjp f f' x`: `f x`, with `f'` as its derivative in reverse mode (an
    /// [`Exp::WithVjp`] node over `f` and `f'` as lambdas, removed by [`crate::ad::transform()`]).
    pub fn lower_with_vjp(
        &mut self,
        f: &SV<'a>,
        f_adj: &SV<'a>,
        x: &SV<'a>,
        span: Span,
    ) -> R<SV<'a>> {
        let (mut primal, shape) = self.function_lambda(f, x, "with_vjp", span)?;
        if ret_mentions_inner(&mut primal) {
            return Err(Diagnostic::not_supported(
                span,
                "with_vjp of a function whose result sizes are computed inside it",
            ));
        }
        // The adjoint function over the result and its adjoint, shaped like the result.
        let mut adj_params = vec![];
        let res = self.params_like(&shape, "res", &mut adj_params)?;
        let res_adj = self.params_like(&shape, "res_adj", &mut adj_params)?;
        let (adj_stms, x_adj) =
            self.in_body(|s| s.apply(f_adj.clone(), vec![res, res_adj], span))?;
        let x_leaves = x_adj.leaves();
        if x_leaves.len() != primal.params.len() {
            return Err(internal(
                span,
                "with_vjp: the adjoint function does not match the argument",
            ));
        }
        let adjoint = ir::Lambda {
            params: adj_params,
            body: ir::Body {
                stms: adj_stms,
                result: x_leaves.iter().map(|l| l.0.clone()).collect(),
            },
            ret: primal.params.iter().map(|p| p.ty.clone()).collect(),
        };
        let args: Vec<SubExp> = x.leaves().into_iter().map(|(s, _)| s).collect();
        let elems: Vec<ir::Param> = primal
            .ret
            .iter()
            .map(|ty| ir::Param {
                name: self.names.fresh("custom"),
                ty: ty.clone(),
            })
            .collect();
        let out: Vec<(SubExp, ir::Type)> = elems
            .iter()
            .map(|p| (SubExp::Var(p.name.clone()), p.ty.clone()))
            .collect();
        let loc = Some(self.loc_of(span));
        self.stms.push(Stm {
            pat: Pat { elems },
            exp: Exp::WithVjp {
                primal,
                adjoint,
                args,
            },
            attrs: ir::Attrs(self.attrs.clone()),
            loc,
        });
        Ok(shape.rebuild(&mut out.into_iter()))
    }
}
