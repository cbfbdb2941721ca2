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

pub mod const_fold;
pub mod copy_prop;
pub mod cse;
pub mod dce;
pub mod inline;
pub mod traverse;

use crate::ir::Program;

/// The most rounds of the scalar passes [`simplify`] runs.
pub const MAX_ROUNDS: usize = 16;

/// Inlines, then runs copy propagation, constant folding, CSE and DCE until nothing changes (at
/// most [`MAX_ROUNDS`] rounds).
pub fn simplify(p: Program) -> Program {
    let mut p = inline::inline(p);
    for _ in 0..MAX_ROUNDS {
        let before = p.funs.clone();
        p = dce::dce(cse::cse(const_fold::const_fold(copy_prop::copy_prop(p))));
        if p.funs == before {
            break;
        }
    }
    p
}

#[cfg(test)]
mod tests;
