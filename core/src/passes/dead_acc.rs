//! Dead `with_acc` results: the updates of a `with_acc` input whose result arrays nothing uses
//! are dropped (`let a' = upd_acc(a, idx, vs)` becomes `let a' = a`), so that copy propagation
//! and DCE remove them and the values they would have added; an extra (non-accumulator) result
//! that nothing uses is removed from the statement and its lambda (DCE then removes what
//! computed it, which may leave an inner `with_acc`'s arrays unused for the next round).
//!
//! Reverse-mode AD makes such inputs for the free arrays of a differentiated function: their
//! adjoints are accumulated (a map reading a free array adds into its adjoint) and the
//! function's own adjoint then drops them unless they are asked for (GMM's data points `x`:
//! `vjp` with respect to the parameters only still added `K·d` elements per point into the
//! adjoint of `x`). An update has no effect but on its `with_acc`'s results (out-of-bounds
//! indices are ignored, not errors), so without a use of those results it can go. The
//! accumulator itself stays threaded through the code (its parameters and results), unused.

use super::traverse::fun_uses;
use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// Drops the updates of every `with_acc` input whose arrays are not used.
pub fn dead_acc(mut p: Program) -> Program {
    for f in &mut p.funs {
        let uses = fun_uses(f);
        drop_extras(&mut f.body, &uses);
        let mut dead = HashSet::new();
        find(&f.body, &uses, &mut dead);
        if !dead.is_empty() {
            drop_updates(&mut f.body, &dead);
        }
    }
    p
}

/// Removes the unused extra results of the `with_acc`s in `b` (nested bodies included).
fn drop_extras(b: &mut Body, uses: &HashMap<VName, usize>) {
    for s in &mut b.stms {
        if let Exp::WithAcc { inputs, lam } = &mut s.exp {
            let arrays: usize = inputs.iter().map(|i| i.arrs.len()).sum();
            let accs = inputs.len();
            let extras = s.pat.elems.len().saturating_sub(arrays);
            if lam.body.result.len() == accs + extras && lam.ret.len() == accs + extras {
                for j in (0..extras).rev() {
                    let e = &s.pat.elems[arrays + j];
                    let used = uses.get(&e.name).copied().unwrap_or(0) > 0;
                    // (A result another result's type mentions is used by that type.)
                    if !used {
                        s.pat.elems.remove(arrays + j);
                        lam.body.result.remove(accs + j);
                        lam.ret.remove(accs + j);
                    }
                }
            }
        }
        for nb in super::traverse::nested_bodies(&mut s.exp) {
            drop_extras(nb, uses);
        }
    }
}

/// The accumulator parameters (their certificates) of the `with_acc` inputs in `b` (nested
/// bodies included) none of whose result arrays is used.
fn find(b: &Body, uses: &HashMap<VName, usize>, dead: &mut HashSet<VName>) {
    for s in &b.stms {
        if let Exp::WithAcc { inputs, lam } = &s.exp {
            let mut at = 0;
            for (input, param) in inputs.iter().zip(&lam.params) {
                let arrays = s.pat.elems.get(at..at + input.arrs.len());
                at += input.arrs.len();
                let unused = |e: &Param| uses.get(&e.name).copied().unwrap_or(0) == 0;
                if arrays.is_some_and(|a| a.iter().all(unused)) {
                    dead.insert(param.name.clone());
                }
            }
        }
        for nb in super::traverse::nested_bodies_ref(&s.exp) {
            find(nb, uses, dead);
        }
    }
}

/// Replaces the updates of accumulators certified by `dead` by their accumulator.
fn drop_updates(b: &mut Body, dead: &HashSet<VName>) {
    for s in &mut b.stms {
        if let Exp::UpdAcc { acc, .. } = &s.exp {
            if let [Param {
                ty: Type::Acc { cert, .. },
                ..
            }] = s.pat.elems.as_slice()
            {
                if dead.contains(cert) {
                    s.exp = Exp::SubExp(SubExp::Var(acc.clone()));
                    continue;
                }
            }
        }
        for nb in super::traverse::nested_bodies(&mut s.exp) {
            drop_updates(nb, dead);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::{count_exps, rewrite_and_compare};

    fn updates(p: &Program) -> usize {
        count_exps(p, &|e| matches!(e, Exp::UpdAcc { .. }))
    }

    /// Per point, per component, per row of `Q_k`: the squared dot product with the point.
    fn objective(wrt: &str, args: &str) -> String {
        format!(
            "entry main [n][d][k] (x: [n][d]f64) (q: [k][d][d]f64) =
  vjp (\\{args} -> f64.sum (map (\\xi -> f64.sum (map (\\qk ->
         f64.sum (map (\\row -> let s = f64.sum (map2 (*) row xi) in s * s) qk)) q)) x)) {wrt} 1"
        )
    }
    const ARGS: &str = "[[1.0, 2.0], [3.0, -4.0], [0.5, 0.25]] [[[2.0, -1.0], [0.5, 1.0]]]";

    #[test]
    fn the_adjoint_of_a_free_array_not_asked_for_is_not_accumulated() {
        // `vjp` with respect to `q` only: the adjoint of the points `x`, accumulated per point
        // because the inner maps read the point freely, is dropped by the vjp. Without the
        // pass its updates stay.
        let src = objective("q", "q");
        let c = crate::compile("t.fut", &src).unwrap_or_else(|e| panic!("{}", e.render()));
        assert_eq!(updates(&c.ir), 2, "the adjoints of x and q are accumulated");
        let p = crate::passes::dead_accumulators(c.ir);
        assert_eq!(updates(&p), 1, "only the adjoint of q is accumulated");
        let both = objective("(x, q)", "(x, q)");
        let c2 = crate::compile("t.fut", &both).unwrap_or_else(|e| panic!("{}", e.render()));
        let p2 = crate::passes::dead_accumulators(c2.ir);
        assert_eq!(updates(&p2), 2, "the adjoints of x and q are accumulated");
    }

    #[test]
    fn dead_results_go_and_the_values_stay_the_same() {
        // The pass on a program before simplification: the values are the interpreter's.
        let src = objective("q", "q");
        let (before, after) =
            rewrite_and_compare(&src, "main", ARGS, crate::passes::dead_accumulators);
        assert!(updates(&after) < updates(&before));
    }

    #[test]
    fn updates_of_used_results_stay() {
        let src = objective("(x, q)", "(x, q)");
        let (before, after) = rewrite_and_compare(&src, "main", ARGS, dead_acc);
        assert_eq!(updates(&before), updates(&after));
    }
}
