//! Reverse-mode automatic differentiation (VJP). Placeholder until the real module lands.

use crate::ir::{Lambda, NameSource};

/// Differentiates `lam` in reverse mode. The result takes the primal params followed by one
/// adjoint param per primal result, and returns the primal results followed by one adjoint per
/// primal param. The error names the construct that cannot be differentiated.
pub fn vjp_lambda(_lam: &Lambda, _ns: &mut NameSource) -> Result<Lambda, String> {
    Err("reverse mode (vjp)".into())
}
