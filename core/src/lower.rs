//! Lowering. (Being written.)
use crate::diag::{Diagnostic, SourceMap};
use crate::syntax::ast::Program;
pub struct Lowered {
    pub program: crate::ir::Program,
    pub entry_errors: Vec<(String, Diagnostic)>,
}
pub fn lower_program(_p: &Program, _s: &SourceMap) -> Lowered {
    Lowered { program: Default::default(), entry_errors: vec![] }
}
