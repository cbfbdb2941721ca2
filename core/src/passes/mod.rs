//! Simplification passes. (Being written.)
pub fn simplify(p: crate::ir::Program) -> crate::ir::Program {
    p
}
