//! What the generators (and the executor, and the Vulkan passes) need to know about an
//! operator: whether it is commutative, which device atomic runs it (if any), and whether its
//! components combine on their own (then it splits into one scalar operator per component);
//! and the variables a statement mentions.

use vkad_core::ir::{self, BinOp, Body, Exp, Operator, Stm, SubExp};
use vkad_core::prim::PrimType;

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

/// The atomic fast path for a histogram operator, if it has one on this device.
pub(crate) fn atomic_op(
    op: &Operator,
    t: PrimType,
    f32_add: bool,
    i64_atomics: bool,
) -> Option<(BinOp, bool)> {
    let lam = &op.lam;
    if lam.params.len() != 2 || lam.body.stms.len() != 1 || lam.body.result.len() != 1 {
        return None;
    }
    let c = Component {
        old: 0,
        new: 1,
        res: 0,
    };
    component_atomic(lam, &[true], c, t, f32_add, i64_atomics)
}

/// One component of an operator on tuples, read off a lambda: the parameters of the old and
/// the new value and the result. An operator on `k`-tuples has `Component { old: m, new: k + m,
/// res: m }`; the scalar lambda inside a vectorised operator may take its parameters in
/// another order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Component {
    pub old: usize,
    pub new: usize,
    pub res: usize,
}

impl Component {
    /// The components of an operator on `k`-tuples, in order.
    pub(crate) fn of_tuple(k: usize) -> Vec<Component> {
        (0..k)
            .map(|m| Component {
                old: m,
                new: k + m,
                res: m,
            })
            .collect()
    }
}

/// The binary operator that component `c` of `lam` (its statements those `keep` selects) is:
/// one binary operator applied to its two parameters, in either order.
fn component_binop(lam: &ir::Lambda, keep: &[bool], c: Component) -> Option<BinOp> {
    let mut kept = lam.body.stms.iter().zip(keep).filter(|(_, &k)| k);
    let (stm, _) = kept.next()?;
    if kept.next().is_some() {
        return None;
    }
    let (a, b) = (&lam.params.get(c.old)?.name, &lam.params.get(c.new)?.name);
    let res_ok = *lam.body.result.get(c.res)? == SubExp::Var(stm.pat.elems.first()?.name.clone());
    let Exp::BinOp(bop, x, y) = &stm.exp else {
        return None;
    };
    let args_ok = (x.as_var() == Some(a) && y.as_var() == Some(b))
        || (x.as_var() == Some(b) && y.as_var() == Some(a));
    (res_ok && args_ok).then_some(*bop)
}

/// The device atomic that runs component `c` of `lam` (its statements those `keep` selects),
/// if it has one on this device: the component is one binary operator applied to its two
/// parameters, in either order.
pub(crate) fn component_atomic(
    lam: &ir::Lambda,
    keep: &[bool],
    c: Component,
    t: PrimType,
    f32_add: bool,
    i64_atomics: bool,
) -> Option<(BinOp, bool)> {
    match (component_binop(lam, keep, c)?, t) {
        (bop @ (BinOp::Add(_) | BinOp::Min(_) | BinOp::Max(_)), PrimType::Int(it))
            if it.bits() == 32 || (it.bits() == 64 && i64_atomics) =>
        {
            Some((bop, it.signed()))
        }
        (bop @ BinOp::Add(_), PrimType::Float(vkad_core::prim::FloatType::F32)) if f32_add => {
            Some((bop, true))
        }
        _ => None,
    }
}

/// Whether values combined as component `c` of `lam` (its statements those `keep` selects)
/// can be combined by a subgroup reduction first: the component is float addition (`f32`,
/// `f64`), the operator of AD's adjoints of floats. (Integer additions, which the adjoints of
/// integers make, are left to their atomics: not summed per subgroup yet.)
pub(crate) fn component_group_add(
    lam: &ir::Lambda,
    keep: &[bool],
    c: Component,
    t: PrimType,
) -> bool {
    use vkad_core::prim::FloatType;
    matches!(
        (component_binop(lam, keep, c), t),
        (
            Some(BinOp::Add(_)),
            PrimType::Float(FloatType::F32 | FloatType::F64)
        )
    )
}

/// Splits an operator on `k`-tuples into `k` scalar operators when result `i` depends only on
/// parameters `i` and `k + i` (and free variables).
pub(crate) fn split_operator(op: &Operator) -> Option<Vec<Operator>> {
    let lam = &op.lam;
    let k = lam.body.result.len();
    if op.neutral.len() != k {
        return None;
    }
    let slices = operator_slices(lam)?;
    let mut out = Vec::with_capacity(k);
    for (i, keep) in slices.into_iter().enumerate() {
        let stms: Vec<Stm> = lam
            .body
            .stms
            .iter()
            .zip(&keep)
            .filter(|(_, &kp)| kp)
            .map(|(s, _)| s.clone())
            .collect();
        out.push(ir::Operator {
            lam: ir::Lambda {
                params: vec![lam.params[i].clone(), lam.params[k + i].clone()],
                body: Body {
                    stms,
                    result: vec![lam.body.result[i].clone()],
                },
                ret: vec![lam.ret.get(i)?.clone()],
            },
            neutral: vec![op.neutral[i].clone()],
            commutative: op.commutative,
        });
    }
    Some(out)
}

/// For an operator on `k`-tuples (`2k` parameters, `k` results) whose result `i` depends only
/// on parameters `i` and `k + i` (and free variables): for each result, which statements of
/// the body it needs. `None` where a result depends on other parameters.
pub(crate) fn operator_slices(lam: &ir::Lambda) -> Option<Vec<Vec<bool>>> {
    let k = lam.body.result.len();
    if lam.params.len() != 2 * k {
        return None;
    }
    component_slices(lam, &Component::of_tuple(k))
}

/// For each component of `lam`, which statements of the body its result needs; `None` where
/// a result depends on parameters other than the component's own two.
pub(crate) fn component_slices(lam: &ir::Lambda, comps: &[Component]) -> Option<Vec<Vec<bool>>> {
    let mut out = Vec::with_capacity(comps.len());
    for c in comps {
        let mut needed: Vec<ir::VName> = Vec::new();
        se_vars(lam.body.result.get(c.res)?, &mut needed);
        let mut keep = vec![false; lam.body.stms.len()];
        for (j, s) in lam.body.stms.iter().enumerate().rev() {
            if s.pat.elems.iter().any(|p| needed.contains(&p.name)) {
                keep[j] = true;
                free_vars_stm(s, &mut needed);
            }
        }
        for (j, p) in lam.params.iter().enumerate() {
            if j != c.old && j != c.new && needed.contains(&p.name) {
                return None;
            }
        }
        out.push(keep);
    }
    Some(out)
}

fn se_vars(s: &SubExp, out: &mut Vec<ir::VName>) {
    if let SubExp::Var(v) = s {
        out.push(v.clone());
    }
}

/// All variables a statement mentions (over-approximates the free ones):
/// `vkad_core::passes::traverse::uses_in_exp`.
pub(crate) fn free_vars_stm(stm: &Stm, out: &mut Vec<ir::VName>) {
    out.extend(vkad_core::passes::traverse::uses_in_exp(&stm.exp));
}
