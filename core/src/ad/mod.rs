//! Automatic differentiation as IR → IR transformations.
//!
//! - [`fwd`]: forward mode (`jvp`, `jvp2`).
//! - [`rev`]: reverse mode (`vjp`).
//! - [`derivatives`]: partial derivatives of every scalar operation, shared by the modes.
//! - [`report`]: the AD report (scopes, re-executions, checkpoint memory).

pub mod derivatives;
pub mod fwd;
pub mod report;
pub mod rev;

#[cfg(test)]
mod tests;
