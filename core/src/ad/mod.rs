//! Automatic differentiation as IR → IR transformations.
//!
//! - [`fwd`]: forward mode (`jvp`, `jvp2`).
//! - [`derivatives`]: partial derivatives of every scalar operation, shared by the modes.

pub mod derivatives;
pub mod fwd;
pub mod rev;

#[cfg(test)]
mod tests;
