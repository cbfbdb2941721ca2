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
pub(crate) use eval::{err, ExtFuns, Interp, R};
use std::collections::HashMap;
use std::fmt;
pub(crate) use val::{Arr, Builder, Val};

/// An error while running a program: a message and, where known, the source location of the
/// statement that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeError {
    pub message: String,
    pub loc: Option<SrcLoc>,
    /// The program uses something this evaluator cannot run (the message starts with
    /// "not supported"), rather than failing on its input.
    pub not_supported: bool,
}

impl RuntimeError {
    pub fn new(message: impl Into<String>, loc: Option<SrcLoc>) -> RuntimeError {
        RuntimeError {
            message: message.into(),
            loc,
            not_supported: false,
        }
    }
    /// A construct this evaluator cannot run (see [`RuntimeError::not_supported`]).
    pub fn not_supported(message: impl Into<String>, loc: Option<SrcLoc>) -> RuntimeError {
        RuntimeError {
            not_supported: true,
            ..RuntimeError::new(message, loc)
        }
    }
    /// The error of running an entry point that could not be compiled (`d`, rendered with its
    /// snippet, without the `error: ` prefix that callers add).
    pub fn of_entry(d: &crate::diag::Diagnostic, sources: &crate::diag::SourceMap) -> RuntimeError {
        let text = d.render(sources);
        let text = text.strip_prefix("error: ").unwrap_or(&text);
        RuntimeError {
            not_supported: d.not_supported,
            ..RuntimeError::new(text, None)
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
    let f = prog.entry(entry).ok_or_else(|| no_entry(entry))?;
    let all = entry_args(entry, &f.size_params, &f.params, args)?;
    let mut interp = Interp::new(prog);
    interp.oracle = oracle;
    let results = interp.apply(&f.name, all, &None)?;
    entry_results(entry, results, f.num_ext_results())
}

/// The error for a missing entry point.
pub(crate) fn no_entry(entry: &str) -> RuntimeError {
    RuntimeError::new(format!("no entry point named `{entry}`"), None)
}

/// The arguments of a call of entry point `entry` (size parameters `size_params`, parameters
/// `params`): checks the number, types and shapes of `args` and infers the sizes from the
/// argument shapes (and scalar arguments that are sizes). Returns the sizes, then the
/// arguments.
pub(crate) fn entry_args(
    entry: &str,
    size_params: &[ir::VName],
    params: &[ir::Param],
    args: Vec<Value>,
) -> Result<Vec<Val>, RuntimeError> {
    if args.len() != params.len() {
        return Err(RuntimeError::new(
            format!(
                "entry `{entry}` expects {} arguments, got {}",
                params.len(),
                args.len()
            ),
            None,
        ));
    }
    // Check types and infer the size parameters from the argument shapes.
    let mut sizes: HashMap<&ir::VName, (usize, usize)> = HashMap::new();
    // Sizes given by scalar parameters (`entry f (n: i64) (xs: [n]f32)`): they must agree.
    for (k, (p, a)) in params.iter().zip(&args).enumerate() {
        if let Value::Scalar(v) = a {
            if let Some(n) = v.as_i128().and_then(|n| usize::try_from(n).ok()) {
                sizes.insert(&p.name, (n, k));
            }
        }
    }
    let mut vals = Vec::with_capacity(args.len());
    for (k, (p, a)) in params.iter().zip(args).enumerate() {
        check_arg(k, p, &a, &mut sizes)?;
        vals.push(arg_val(k, a)?);
    }
    let mut all = Vec::with_capacity(size_params.len() + vals.len());
    for s in size_params {
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
    Ok(all)
}

/// Checks argument `k` against its parameter's type; records the sizes it gives in `sizes`
/// (size name -> (size, the argument that gave it)) and checks it against those known.
fn check_arg<'a>(
    k: usize,
    p: &'a ir::Param,
    a: &Value,
    sizes: &mut HashMap<&'a ir::VName, (usize, usize)>,
) -> Result<(), RuntimeError> {
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
    Ok(())
}

/// Argument `k` as an interpreter value.
fn arg_val(k: usize, a: Value) -> Result<Val, RuntimeError> {
    Ok(match a {
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
    })
}

/// The results of entry point `entry` as values, without the first `num_ext` (the existential
/// sizes, which are not user-visible results).
pub(crate) fn entry_results(
    entry: &str,
    results: Vec<Val>,
    num_ext: usize,
) -> Result<Vec<Value>, RuntimeError> {
    results
        .into_iter()
        .skip(num_ext)
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
