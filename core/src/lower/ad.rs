//! Lowering of `jvp` and `jvp2`: the function argument becomes an [`ir::Lambda`] over the
//! flattened primal inputs, [`crate::ad::fwd::jvp_lambda`] differentiates it, and its body is
//! bound inline to the actual arguments (the primal point and the tangent).

use super::env::SV;
use super::{internal, Lowerer, R};
use crate::diag::{Diagnostic, Span};
use crate::ir::{self, Exp, Pat, Stm, SubExp};

impl<'a> Lowerer<'a> {
    /// `jvp f x dx` (the tangent of the result) or, with `both`, `jvp2 f x dx` (the pair of the
    /// primal result and its tangent).
    pub fn lower_jvp(
        &mut self,
        f: &SV<'a>,
        x: &SV<'a>,
        dx: &SV<'a>,
        both: bool,
        span: Span,
    ) -> R<SV<'a>> {
        // The function applied to fresh parameters shaped like `x`. Unlike a SOAC's lambda, the
        // body is bound inline afterwards, so result sizes computed inside it stay in scope.
        let mut params = vec![];
        let arg = x.map_leaves(&mut |_, ty| -> R<(SubExp, ir::Type)> {
            let v = self.names.fresh("x");
            params.push(ir::Param {
                name: v.clone(),
                ty: ty.clone(),
            });
            Ok((SubExp::Var(v), ty.clone()))
        })?;
        let (stms, shape) = self.in_body(|s| s.apply(f.clone(), vec![arg], span))?;
        if shape.contains_fun() {
            return Err(Diagnostic::not_supported(
                span,
                "jvp of a function returning a function",
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
        let jl = crate::ad::fwd::jvp_lambda(&lam, &mut self.names)
            .map_err(|c| Diagnostic::not_supported(span, format!("jvp of {c}")))?;
        let args: Vec<SubExp> = x
            .leaves()
            .into_iter()
            .chain(dx.leaves())
            .map(|(s, _)| s)
            .collect();
        if args.len() != jl.params.len() {
            return Err(internal(span, "jvp: arguments do not match the function"));
        }
        let loc = Some(self.loc_of(span));
        for (p, a) in jl.params.iter().zip(args) {
            self.stms.push(Stm {
                pat: Pat {
                    elems: vec![p.clone()],
                },
                exp: Exp::SubExp(a),
                attrs: ir::Attrs::default(),
                loc: loc.clone(),
            });
        }
        self.stms.extend(jl.body.stms);
        let k = lam.ret.len();
        let leaves: Vec<(SubExp, ir::Type)> = jl.body.result.into_iter().zip(jl.ret).collect();
        let (prim, tan) = leaves.split_at(k);
        let tan_v = shape.rebuild(&mut tan.iter().cloned());
        if both {
            let prim_v = shape.rebuild(&mut prim.iter().cloned());
            Ok(SV::Tuple(vec![prim_v, tan_v]))
        } else {
            Ok(tan_v)
        }
    }
}
