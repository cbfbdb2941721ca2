//! The surface language: tokens, the AST, semantic types and the parser.

pub mod ast;
pub mod lexer;
pub mod parser;
pub mod types;
