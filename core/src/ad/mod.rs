//! Automatic differentiation as IR → IR transformations.
//!
//! - [`mod@transform`]: replaces the IR's AD nodes ([`crate::ir::Exp::Jvp`], [`crate::ir::Exp::Vjp`])
//!   by derivative code, innermost first.
//! - [`fwd`]: forward mode (`jvp`, `jvp2`).
//! - [`rev`]: reverse mode (`vjp`, `vjp2`).
//! - [`derivatives`]: partial derivatives of every scalar operation, shared by the modes.
//! - [`report`]: the AD report (scopes, re-executions, checkpoint memory).

pub mod derivatives;
pub mod fwd;
pub mod report;
pub mod rev;
pub mod transform;

pub use transform::transform;

/// The base name that lowering gives a loop parameter marked `#[true_dep]` (Futhark's
/// per-parameter form, `loop #[true_dep] xs = ...`). IR params carry no attributes, and a base
/// name survives every renaming, so this is how the mark reaches reverse mode: such a parameter
/// is not checkpointed, its final value stands in for every iteration (see [`rev`]'s loops).
pub const TRUE_DEP_PARAM: &str = "true_dep_p";

#[cfg(test)]
mod tests;
