//! What the generators need to know about an operator.

use vkad_core::ir::{BinOp, Exp, Operator, SubExp};

/// Whether `op` is known to be commutative: marked so, or one commutative binary operator
/// (`+`, `*`, min, max, bitwise and logical and/or/xor) applied to its two parameters.
pub fn commutative(op: &Operator) -> bool {
    if op.commutative {
        return true;
    }
    let lam = &op.lam;
    if lam.params.len() != 2 || lam.body.stms.len() != 1 || lam.body.result.len() != 1 {
        return false;
    }
    let stm = &lam.body.stms[0];
    let (a, b) = (&lam.params[0].name, &lam.params[1].name);
    let Some(res) = stm.pat.elems.first() else {
        return false;
    };
    let Exp::BinOp(bop, x, y) = &stm.exp else {
        return false;
    };
    let args_ok = (x.as_var() == Some(a) && y.as_var() == Some(b))
        || (x.as_var() == Some(b) && y.as_var() == Some(a));
    lam.body.result[0] == SubExp::Var(res.name.clone())
        && args_ok
        && matches!(
            bop,
            BinOp::Add(_)
                | BinOp::Mul(_)
                | BinOp::Min(_)
                | BinOp::Max(_)
                | BinOp::And(_)
                | BinOp::Or(_)
                | BinOp::Xor(_)
                | BinOp::LogAnd
                | BinOp::LogOr
        )
}
