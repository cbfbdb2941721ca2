//! The kernel IR evaluator (to be written).
