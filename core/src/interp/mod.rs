//! Interpreter. (Being written.)
use crate::diag::SrcLoc;
use crate::value::Value;
#[derive(Debug, Clone)]
pub struct RuntimeError {
    pub message: String,
    pub loc: Option<SrcLoc>,
}
impl RuntimeError {
    pub fn new(message: impl Into<String>, loc: Option<SrcLoc>) -> RuntimeError {
        RuntimeError { message: message.into(), loc }
    }
}
pub fn run_entry(_p: &crate::ir::Program, _e: &str, _a: Vec<Value>) -> Result<Vec<Value>, RuntimeError> {
    Err(RuntimeError::new("interpreter not written yet", None))
}
