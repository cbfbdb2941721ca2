//! Simplification passes over the IR. Each pass is a function `Program -> Program` in its own
//! module; [`simplify`] runs them to a fixpoint. Every pass keeps the program valid
//! ([`crate::ir::check::check_program`]) and keeps names unique.
//!
//! - [`inline::inline`]: inlines calls, drops functions no longer called.
//! - [`copy_prop::copy_prop`]: substitutes `let x = y` / `let x = c` into uses.
//! - [`const_fold::const_fold`]: evaluates constant scalar operations, algebraic identities,
//!   constant `if` conditions, loops of zero or one iteration, `assert(true)`.
//! - [`cse::cse`]: reuses identical pure expressions.
//! - [`dce::dce`]: removes unused pure statements and unused `map`/`if` results.

pub mod acc_to_reduce;
pub mod const_fold;
pub mod copy_prop;
pub mod cse;
pub mod dce;
pub mod inline;
pub mod traverse;

use crate::ir::Program;

/// A named pass.
type Pass = (&'static str, fn(Program) -> Program);

/// The most rounds of the scalar passes [`simplify`] runs.
pub const MAX_ROUNDS: usize = 16;

/// Inlines, then runs copy propagation, constant folding, CSE and DCE until nothing changes (at
/// most [`MAX_ROUNDS`] rounds).
pub fn simplify(p: Program) -> Program {
    simplify_with(p, &mut |_, _| {})
}

/// [`simplify`], calling `after_each(pass_name, &program)` after every pass (tests use it to run
/// the IR checker between passes).
pub fn simplify_with(p: Program, after_each: &mut dyn FnMut(&'static str, &Program)) -> Program {
    let mut p = inline::inline(p);
    after_each("inline", &p);
    let round: [Pass; 4] = [
        ("copy_prop", copy_prop::copy_prop),
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

#[cfg(test)]
mod tests;
