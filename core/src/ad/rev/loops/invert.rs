//! Recovering integer loop state by inversion instead of checkpointing (paper 004).
//!
//! An integer loop parameter whose new value is an invertible function of its old value, such
//! as `j' = j + 3` or the chain `k = j + 1; j' = k + 2`, need not be saved per iteration: the
//! reverse loop carries the parameter backwards, starting from the loop's final value, and
//! computes the entry value of each iteration from its exit value by undoing the chain
//! (`j = j' - 3`). Integer storage per loop drops from O(n) to O(1).
//!
//! A chain is a sequence of top-level statements of the body, from the body's result back to
//! the parameter, each `y = x + c`, `y = c + x`, `y = x - c`, `y = c - x`, `y = x ^ c`,
//! `y = c ^ x` or `y = x`, where `c` is invariant in the loop: a constant, a variable bound
//! outside the loop, the loop's index (restored before the inversion runs), or a scalar the
//! body computes from those alone (`i * c`: recomputed before the inversion). Integer
//! addition and subtraction wrap, so every step is exactly invertible. Anything else (`max`,
//! division, a chain through an `if` or through another loop parameter) is checkpointed.

use crate::ir::*;
use crate::prim::{IntType, PrimType};
use std::collections::HashSet;

/// One undone step: how to get a chain's value `x` back from the next value `y`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Undo {
    /// `y = x + c` or `y = c + x`: `x = y - c`.
    Sub(IntType, SubExp),
    /// `y = x - c`: `x = y + c`.
    Add(IntType, SubExp),
    /// `y = c - x`: `x = c - y`.
    SubFrom(IntType, SubExp),
    /// `y = x ^ c`: `x = y ^ c`.
    Xor(IntType, SubExp),
}

impl Undo {
    /// The expression computing `x` from `y`.
    pub(crate) fn exp(&self, y: SubExp) -> Exp {
        match self {
            Undo::Sub(t, c) => Exp::BinOp(BinOp::Sub(PrimType::Int(*t)), y, c.clone()),
            Undo::Add(t, c) => Exp::BinOp(BinOp::Add(PrimType::Int(*t)), y, c.clone()),
            Undo::SubFrom(t, c) => Exp::BinOp(BinOp::Sub(PrimType::Int(*t)), c.clone(), y),
            Undo::Xor(t, c) => Exp::BinOp(BinOp::Xor(*t), y, c.clone()),
        }
    }

    /// The step's invariant operand.
    pub(crate) fn operand(&self) -> &SubExp {
        match self {
            Undo::Sub(_, c) | Undo::Add(_, c) | Undo::SubFrom(_, c) | Undo::Xor(_, c) => c,
        }
    }

    /// The step with its invariant operand replaced.
    pub(crate) fn with_operand(&self, c: SubExp) -> Undo {
        match self {
            Undo::Sub(t, _) => Undo::Sub(*t, c),
            Undo::Add(t, _) => Undo::Add(*t, c),
            Undo::SubFrom(t, _) => Undo::SubFrom(*t, c),
            Undo::Xor(t, _) => Undo::Xor(*t, c),
        }
    }
}

/// How to recover a parameter's entry value from its exit value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Inversion {
    /// Statements of the body that compute the steps' operands from loop-invariant values and
    /// the loop index (in body order; emitted renamed before the steps).
    pub pre: Vec<Stm>,
    /// The steps, in the order they are applied.
    pub steps: Vec<Undo>,
}

/// Finds which operands are invariant: constants, variables bound outside the loop (not
/// parameters), the loop index, and scalars the body computes from those alone.
struct Invariance<'b> {
    body: &'b Body,
    index: &'b VName,
    params: &'b HashSet<VName>,
    bound: HashSet<VName>,
    /// Body statements known to be recomputable (by bound name).
    recomputable: HashSet<VName>,
}

impl Invariance<'_> {
    fn subexp(&mut self, s: &SubExp, depth: usize) -> bool {
        match s {
            SubExp::Const(_) => true,
            SubExp::Var(v) => self.var(v, depth),
        }
    }

    fn var(&mut self, v: &VName, depth: usize) -> bool {
        if v == self.index || self.recomputable.contains(v) {
            return true;
        }
        if self.params.contains(v) || depth > 16 {
            return false;
        }
        if !self.bound.contains(v) {
            return true;
        }
        let body = self.body;
        let Some(stm) = body
            .stms
            .iter()
            .find(|s| s.pat.elems.len() == 1 && &s.pat.elems[0].name == v)
        else {
            return false;
        };
        let ok = match &stm.exp {
            Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Conv(_, a) => self.subexp(a, depth + 1),
            Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) => {
                self.subexp(a, depth + 1) && self.subexp(b, depth + 1)
            }
            _ => false,
        };
        if ok {
            self.recomputable.insert(v.clone());
        }
        ok
    }
}

/// How to recover the entry value of parameter `p` from its exit value `result` (the body's
/// result for `p`); `None` when the update is not an invertible chain (or `p` is
/// loop-invariant). `index` is the loop's index variable; `params` are the names of all loop
/// parameters (never invariant operands).
pub(crate) fn inversion(
    body: &Body,
    p: &Param,
    result: &SubExp,
    index: &VName,
    params: &HashSet<VName>,
) -> Option<Inversion> {
    let Type::Prim(PrimType::Int(pt)) = p.ty else {
        return None;
    };
    let p = &p.name;
    let mut inv = Invariance {
        body,
        index,
        params,
        bound: crate::ad::rev::bound_in(&body.stms),
        recomputable: HashSet::new(),
    };
    let mut steps = vec![];
    let mut cur = match result {
        SubExp::Var(v) => v.clone(),
        SubExp::Const(_) => return None,
    };
    // At most one step per statement: a chain cannot loop (every name is bound once).
    for _ in 0..=body.stms.len() {
        if &cur == p {
            if steps.is_empty() {
                return None;
            }
            let pre = body
                .stms
                .iter()
                .filter(|s| {
                    s.pat
                        .elems
                        .first()
                        .is_some_and(|e| inv.recomputable.contains(&e.name))
                })
                .cloned()
                .collect();
            return Some(Inversion { pre, steps });
        }
        let stm = body
            .stms
            .iter()
            .find(|s| s.pat.elems.len() == 1 && s.pat.elems[0].name == cur)?;
        let mut var = |s: &SubExp| match s {
            SubExp::Var(v) if !inv.var(v, 0) => Some(v.clone()),
            _ => None,
        };
        let (step, next) = match &stm.exp {
            Exp::SubExp(SubExp::Var(x)) => {
                cur = x.clone();
                continue;
            }
            Exp::BinOp(BinOp::Add(PrimType::Int(t)), a, b) if *t == pt => match (var(a), var(b)) {
                (Some(x), None) => (Undo::Sub(*t, b.clone()), x),
                (None, Some(x)) => (Undo::Sub(*t, a.clone()), x),
                _ => return None,
            },
            Exp::BinOp(BinOp::Sub(PrimType::Int(t)), a, b) if *t == pt => match (var(a), var(b)) {
                (Some(x), None) => (Undo::Add(*t, b.clone()), x),
                (None, Some(x)) => (Undo::SubFrom(*t, a.clone()), x),
                _ => return None,
            },
            Exp::BinOp(BinOp::Xor(t), a, b) if *t == pt => match (var(a), var(b)) {
                (Some(x), None) => (Undo::Xor(*t, b.clone()), x),
                (None, Some(x)) => (Undo::Xor(*t, a.clone()), x),
                _ => return None,
            },
            _ => return None,
        };
        steps.push(step);
        cur = next;
    }
    None
}
