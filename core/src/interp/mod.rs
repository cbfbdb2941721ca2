//! The reference interpreter: runs an entry point of an [`ir::Program`] on [`Value`]s.
//!
//! Arrays are flat typed buffers shared by reference ([`val::Arr`] views: a buffer, an offset and
//! a shape), so indexing a row, passing rows to lambdas and reshaping copy nothing. Consuming
//! operations (`Update`, `Hist`/`Scatter` destinations, `WithAcc` inputs) take their array out of
//! its variable and update it in place when no other reference exists. Scalar semantics are those
//! of [`crate::primops`].
//!
//! In oracle mode ([`run_entry_oracle`]) the AD nodes `jvp`/`vjp` are evaluated dynamically by
//! [`dynad`], on traced values, instead of by transformed code.
//!
//! Runtime errors (index out of bounds, failed assertions, division by zero, shape mismatches)
//! are [`RuntimeError`]s carrying the location of the statement that failed; the interpreter
//! never panics on bad data.

pub mod dynad;
mod eval;
mod scalar;
mod soac;
#[cfg(test)]
mod tests;
mod val;

use crate::diag::SrcLoc;
use crate::ir::{self, SubExp, Type};
use crate::value::Value;
use eval::Interp;
use std::collections::HashMap;
use std::fmt;
use val::{Arr, Val};

/// An error while running a program: a message and, where known, the source location of the
/// statement that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeError {
    pub message: String,
    pub loc: Option<SrcLoc>,
}

impl RuntimeError {
    pub fn new(message: impl Into<String>, loc: Option<SrcLoc>) -> RuntimeError {
        RuntimeError {
            message: message.into(),
            loc,
        }
    }
}

impl fmt::Display for RuntimeError {
    /// `file:line:col: message`, or just the message without a location.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.loc {
            Some(l) => write!(f, "{l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for RuntimeError {}

/// A parameter type as users write it: `[]` for a size given by the argument, `[n]` for a fixed one.
fn param_type_name(t: &Type) -> String {
    let mut s = String::new();
    for d in t.shape() {
        match d {
            SubExp::Const(c) => s.push_str(&format!("[{}]", c.as_i128().unwrap_or(0))),
            SubExp::Var(_) => s.push_str("[]"),
        }
    }
    s.push_str(t.elem().map(|e| e.name()).unwrap_or("accumulator"));
    s
}

/// Runs entry point `entry` of `prog` on `args` (one value per IR parameter, tuples flattened)
/// and returns its results (one per IR result, tuples flattened). Existential sizes that the
/// entry's IR returns as extra results (referred to by [`ir::ExtDim::Ext`] in its return types)
/// are left out when [`ir::EntryPoint::result_counts`] counts only the other results.
pub fn run_entry(
    prog: &ir::Program,
    entry: &str,
    args: Vec<Value>,
) -> Result<Vec<Value>, RuntimeError> {
    run_entry_with(prog, entry, args, false)
}

/// [`run_entry`] in oracle mode: the program may contain AD nodes ([`ir::Exp::Jvp`],
/// [`ir::Exp::Vjp`]), which are evaluated dynamically by [`dynad`] (meant for
/// [`crate::Compiled::ir_ad`]).
pub fn run_entry_oracle(
    prog: &ir::Program,
    entry: &str,
    args: Vec<Value>,
) -> Result<Vec<Value>, RuntimeError> {
    run_entry_with(prog, entry, args, true)
}

fn run_entry_with(
    prog: &ir::Program,
    entry: &str,
    args: Vec<Value>,
    oracle: bool,
) -> Result<Vec<Value>, RuntimeError> {
    let f = match prog.entry(entry) {
        Some(f) => f,
        None => {
            return Err(RuntimeError::new(
                format!("no entry point named `{entry}`"),
                None,
            ))
        }
    };
    if args.len() != f.params.len() {
        return Err(RuntimeError::new(
            format!(
                "entry `{entry}` expects {} arguments, got {}",
                f.params.len(),
                args.len()
            ),
            None,
        ));
    }
    // Check types and infer the size parameters from the argument shapes.
    let mut sizes: HashMap<&ir::VName, (usize, usize)> = HashMap::new();
    // Sizes given by scalar parameters (`entry f (n: i64) (xs: [n]f32)`): they must agree.
    for (k, (p, a)) in f.params.iter().zip(&args).enumerate() {
        if let Value::Scalar(v) = a {
            if let Some(n) = v.as_i128().and_then(|n| usize::try_from(n).ok()) {
                sizes.insert(&p.name, (n, k));
            }
        }
    }
    let mut vals = Vec::with_capacity(args.len());
    for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
        let bad = || {
            RuntimeError::new(
                format!(
                    "argument {}: expected {}, got {}",
                    k + 1,
                    param_type_name(&p.ty),
                    a.type_name()
                ),
                None,
            )
        };
        if p.ty.elem() != Some(a.elem_type()) || p.ty.rank() != a.shape().len() {
            return Err(bad());
        }
        for (d, (dim, &n)) in p.ty.shape().iter().zip(a.shape()).enumerate() {
            match dim {
                SubExp::Const(c) => {
                    if c.as_i128() != Some(n as i128) {
                        return Err(bad());
                    }
                }
                SubExp::Var(v) => match sizes.get(v) {
                    Some(&(m, k0)) if m != n => {
                        return Err(RuntimeError::new(
                            format!(
                                "shape mismatch: argument {} has size {n} in dimension {} where argument {} has size {m} for the same size `{}`",
                                k + 1,
                                d + 1,
                                k0 + 1,
                                v.base
                            ),
                            None,
                        ))
                    }
                    Some(_) => {}
                    None => {
                        sizes.insert(v, (n, k));
                    }
                },
            }
        }
        vals.push(match a {
            Value::Scalar(p) => Val::Prim(p),
            Value::Array(arr) => {
                if arr.shape.iter().product::<usize>() != arr.data.len() {
                    return Err(RuntimeError::new(
                        format!(
                            "argument {}: array of shape {:?} has {} elements",
                            k + 1,
                            arr.shape,
                            arr.data.len()
                        ),
                        None,
                    ));
                }
                Val::Arr(Arr::from_buffer(arr.data, arr.shape))
            }
        });
    }
    let mut all = Vec::with_capacity(f.size_params.len() + vals.len());
    for s in &f.size_params {
        match sizes.get(s) {
            Some(&(n, _)) => all.push(Val::Prim(crate::prim::PrimValue::I64(n as i64))),
            None => {
                return Err(RuntimeError::new(
                    format!(
                        "entry `{entry}`: size `{}` cannot be inferred from the arguments",
                        s.base
                    ),
                    None,
                ))
            }
        }
    }
    all.extend(vals);
    let mut interp = Interp::new(prog);
    interp.oracle = oracle;
    let results = interp.apply(&f.name, all, &None)?;
    results
        .into_iter()
        // Existential result sizes come first and are not user-visible results.
        .skip(f.num_ext_results())
        .map(|v| match v {
            Val::Prim(p) => Ok(Value::Scalar(p)),
            Val::Arr(a) => {
                let shape = a.shape.clone();
                Ok(Value::Array(crate::value::ArrayValue {
                    shape,
                    data: a.into_buffer(),
                }))
            }
            other => Err(RuntimeError::new(
                format!("entry `{entry}` returned a {}", other.type_name()),
                None,
            )),
        })
        .collect()
}
