//! Type checker. (Being written.)
use crate::diag::{Diagnostic, Diagnostics, SourceMap};
use crate::syntax::ast::Program;
pub fn check_program(_p: &mut Program, _s: &SourceMap) -> Result<Vec<Diagnostic>, Diagnostics> {
    Ok(vec![])
}
