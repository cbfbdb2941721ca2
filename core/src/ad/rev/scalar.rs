//! Return-sweep rules of scalar statements: `ā += ∂f/∂a · ȳ` for every operand, with the
//! partial derivatives of [`crate::ad::derivatives`]. Copies (`let y = x`) pass the adjoint on;
//! conversions convert the adjoint back (as Futhark does, integer ↔ float and bool included);
//! comparisons have none. Bool adjoints are bools (`&&` multiplies, `||` adds, as in Futhark).

use super::{Rev, R};
use crate::ad::derivatives::{self, Partial};
use crate::ir::*;
use crate::prim::PrimType;

impl Rev<'_> {
    pub(super) fn rev_scalar(&mut self, stm: &Stm) -> R<()> {
        let adjs = self.take_result_adjs(&stm.pat);
        let Some(Some((ybar, owned))) = adjs.into_iter().next() else {
            return Ok(());
        };
        let res = SubExp::Var(stm.pat.elems[0].name.clone());
        let rt = match stm.pat.elems[0].ty.elem() {
            Some(p) => p,
            None => return Ok(()),
        };
        match &stm.exp {
            Exp::SubExp(x) => self.add_adj_se(x, ybar, owned),
            Exp::CmpOp(..) => Ok(()),
            Exp::UnOp(op, x) => {
                let p = self.build(|b| derivatives::unop(b, *op, x))?;
                self.contribute(x, p, &ybar, rt)
            }
            Exp::BinOp(op, x, y) => {
                let (px, py) = self.build(|b| derivatives::binop(b, *op, x, y))?;
                self.contribute(x, px, &ybar, rt)?;
                self.contribute(y, py, &ybar, rt)
            }
            Exp::Math(f, args) => {
                let ps = self.build(|b| derivatives::math_fn(b, *f, args, &res))?;
                for (a, p) in args.iter().zip(ps) {
                    self.contribute(a, p, &ybar, rt)?;
                }
                Ok(())
            }
            Exp::Conv(op, x) => {
                // As Futhark, conversions from or to bool convert the adjoint back too.
                let boolish = op.from == PrimType::Bool || op.to == PrimType::Bool;
                if derivatives::conv(*op) == Partial::Zero && !boolish {
                    return Ok(());
                }
                let back = self.bind(
                    "conv_adj",
                    Type::Prim(op.from),
                    Exp::Conv(
                        ConvOp {
                            from: op.to,
                            to: op.from,
                        },
                        ybar,
                    ),
                );
                self.add_adj_se(x, SubExp::Var(back), true)
            }
            _ => Err("a scalar statement (internal error)".into()),
        }
    }

    /// `x̄ += p · ȳ` where `p` and `ȳ` have the result type `rt`. Operands of another type
    /// (bools, the integer exponent of a shift) get nothing.
    fn contribute(&mut self, x: &SubExp, p: Partial, ybar: &SubExp, rt: PrimType) -> R<()> {
        let SubExp::Var(xv) = x else { return Ok(()) };
        if self.ty(x)? != Type::Prim(rt) {
            return Ok(());
        }
        let d = match p {
            Partial::Zero => return Ok(()),
            Partial::One => ybar.clone(),
            Partial::NegOne => SubExp::Var(self.bind(
                "neg",
                Type::Prim(rt),
                Exp::UnOp(UnOp::Neg(rt), ybar.clone()),
            )),
            Partial::Val(d) => self.binop(derivatives::mul_op(rt), d, ybar.clone()),
        };
        self.add_adj(xv, d, true)
    }
}

#[cfg(test)]
#[path = "tests_bool.rs"]
mod tests;
