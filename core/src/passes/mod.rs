//! Simplification passes over the IR. Each pass is a function `Program -> Program` in its own
//! module; [`simplify`] runs them to a fixpoint. Every pass keeps the program valid
//! ([`crate::ir::check::check_program`]) and keeps names unique.
//!
//! - [`inline::inline`]: inlines calls, drops functions no longer called.
//! - [`copy_prop::copy_prop`]: substitutes `let x = y` / `let x = c` into uses.
//! - [`index_fold::index_fold`]: an index of a row `b = a[i]` reads `a` itself (`b[j]` becomes
//!   `a[i, j]`), so that reverse mode updates single elements of `a`'s adjoint; an unchecked
//!   index of a `replicate` is the replicated value.
//! - [`const_fold::const_fold`]: evaluates constant scalar operations, algebraic identities,
//!   constant `if` conditions, loops of zero or one iteration, `assert(true)`.
//! - [`cse::cse`]: reuses identical pure expressions.
//! - [`dce::dce`]: removes unused pure statements and unused `map`/`if` results.
//!
//! Run by [`crate::compile`] outside [`simplify`]: [`hoist::hoist`] (invariant `iota` and
//! `rearrange` out of lambdas, before and after AD), [`fuse_acc::fuse_acc`] (values into the
//! maps that update accumulators) and [`acc_to_reduce::acc_to_reduce`] (accumulations to
//! map/reduce nests), see [`accumulations_to_reductions`].
//!
//! Not run by [`crate::compile`]: [`fusion::fuse`] (vertical map–map fusion, with extra outputs
//! for arrays used elsewhere, and horizontal fusion of independent maps of the same width, to a
//! fixpoint; its module documents what fuses and what does not), and [`fission::fission`]
//! (nested maps returning a cheap array next to costly results split in two, so that the array
//! fuses into its consumer): fusion, fission, fusion run when flattening
//! ([`crate::flatten::extract_kernels`]), after [`dead_accumulators`] (the dead results of
//! `with_acc`s, [`dead_acc::dead_acc`], with simplification: after
//! [`accumulations_to_reductions`], whose rewrites see the accumulators AD made), then
//! [`update_reads::update_reads`] (reads of an in-place update's result at indices it did not
//! write read the array before it, so that reverse mode's additions into adjoint rows fuse).

pub mod acc_to_hist;
pub mod acc_to_reduce;
pub mod const_fold;
pub mod copy_prop;
pub mod cse;
pub mod dce;
pub mod dead_acc;
pub mod fission;
pub mod fuse_acc;
pub mod fusion;
pub mod hist_disjoint;
pub mod hist_flatten;
pub mod hist_sort;
pub mod hoist;
pub mod index_fold;
pub mod inline;
pub mod scan_columns;
pub mod sort_lower;
pub mod traverse;
pub mod update_reads;

use crate::ir::Program;

/// A named pass.
type Pass = (&'static str, fn(Program) -> Program);

/// The most rounds of the scalar passes [`simplify`] runs.
pub const MAX_ROUNDS: usize = 16;

/// Inlines, then runs copy propagation, index folding, constant folding, CSE and DCE until
/// nothing changes (at
/// most [`MAX_ROUNDS`] rounds).
pub fn simplify(p: Program) -> Program {
    simplify_with(p, &mut |_, _| {})
}

/// [`simplify`], calling `after_each(pass_name, &program)` after every pass (tests use it to run
/// the IR checker between passes).
pub fn simplify_with(p: Program, after_each: &mut dyn FnMut(&'static str, &Program)) -> Program {
    let mut p = inline::inline(p);
    after_each("inline", &p);
    let round: [Pass; 5] = [
        ("copy_prop", copy_prop::copy_prop),
        ("index_fold", index_fold::index_fold),
        ("const_fold", const_fold::const_fold),
        ("cse", cse::cse),
        ("dce", dce::dce),
    ];
    for _ in 0..MAX_ROUNDS {
        let before = p.funs.clone();
        for (name, pass) in round {
            p = pass(p);
            after_each(name, &p);
        }
        if p.funs == before {
            break;
        }
    }
    p
}

/// The accumulator optimisation of AD's output (paper 000 §6.1): two rounds of hoisting,
/// fusion into accumulator-updating maps, simplification and the accumulator-to-reduction
/// rewrite (the second round handles accumulations that the first one's rewrites exposed, e.g.
/// an outer adjoint whose value came from an inner accumulation), then hoisting once more.
pub fn accumulations_to_reductions(mut p: Program) -> Program {
    for _ in 0..2 {
        p = simplify(fuse_acc::fuse_acc(hoist::hoist(p)));
        p = simplify(acc_to_reduce::acc_to_reduce(p));
    }
    // The index arrays the last rewrite made, out of loops too.
    simplify(hoist::hoist(p))
}

/// [`dead_acc::dead_acc`] and [`simplify`] until nothing changes (each round may leave an inner
/// `with_acc`'s results unused; at most [`MAX_ROUNDS`] rounds).
pub fn dead_accumulators(mut p: Program) -> Program {
    for _ in 0..MAX_ROUNDS {
        let before = p.funs.clone();
        p = simplify(dead_acc::dead_acc(p));
        if p.funs == before {
            break;
        }
    }
    p
}

#[cfg(test)]
pub(crate) mod differential;
#[cfg(test)]
mod tests;
