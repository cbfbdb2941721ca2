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

#[cfg(test)]
mod tests;
