//! The kernel IR evaluator: runs an entry point of a [`Program`] on the reference interpreter,
//! so that every program's results can be compared before and after [`crate::flatten`].
//!
//! It is the interpreter ([`crate::interp`]) with host code on top: the same register file,
//! values, in-place updates, accumulators and operators, and the same errors. Arguments are
//! checked, sizes inferred and existential results dropped as by [`crate::interp::run_entry`].
//!
//! ## Host code
//! Host statements run in order. [`HostExp::Plain`] runs its expression as the interpreter
//! does (a call goes to the program's host function of that name, also from per-thread code);
//! `if`, `loop` and `with_acc` are the interpreter's, with host bodies
//! (`with_acc` gives the accumulators' arrays, then the lambda's other results);
//! [`HostExp::Threshold`] is `size >= thresholds.get(name)`.
//!
//! ## Kernels
//! A [`SegOp`] runs one thread per point of its space, in row-major order, the thread indices
//! bound to `i64` values. Each thread runs the kernel body's statements as the interpreter
//! runs a lambda's, then its results are collected; an error in a thread is returned at once,
//! with the location of the statement that failed. Once all threads have run:
//! - map outputs ([`Returns`]) are stacked into arrays of the space's shape (followed by the
//!   value's own shape); an accumulator result is the accumulator (its updates went to the
//!   shared accumulator state as the threads ran);
//! - a [`Write`] consumes its destination and writes, thread by thread, the thread's value at
//!   its index when the index is in range (later threads win), exactly as `scatter` does: in
//!   place when nothing else references the array;
//! - [`SegKind::Red`]: each segment (a point of all dimensions but the innermost) reduces the
//!   operands of its threads, in order, starting from the neutral elements: the interpreter's
//!   `reduce` on the segment's values, so that results (floats included) are those of the
//!   SOAC program bit for bit; [`SegKind::Scan`] likewise with the interpreter's `scan`;
//! - [`SegKind::Hist`]: each histogram consumes its destinations (`[segments][width]...`);
//!   for each thread in order, when `0 <= bin < width`, the segment's bin becomes
//!   `op(bin's values, thread's values)`, as `reduce_by_index` does.
//!
//! [`SegOp`]: super::SegOp
//! [`Returns`]: super::KernelResult::Returns
//! [`Write`]: super::KernelResult::Write
//! [`SegKind::Red`]: super::SegKind::Red
//! [`SegKind::Scan`]: super::SegKind::Scan
//! [`SegKind::Hist`]: super::SegKind::Hist
//!
//! ## Statistics
//! [`Stats`] counts what a GPU runtime would launch: kernels (by kind) and their threads, and the
//! host statements that are array primitives ([`Stats::builtins`]).

mod kernel;
#[cfg(test)]
mod tests;

use super::{FunDef, HostBody, HostExp, HostLambda, HostStm, Program, Thresholds};
use crate::diag::SrcLoc;
use crate::interp::{self, err, ExtFuns, Interp, RuntimeError, Val, R};
use crate::ir::{AccInput, DimIndex, Exp, SubExp};
use crate::prim::PrimValue;
use crate::value::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

/// What running a program did, in the terms of a GPU runtime.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Segmented operations (kernels) run.
    pub kernels: usize,
    /// Kernels run by kind ([`super::SegKind::name`]: `"segmap"`, `"segred"`, `"segscan"`,
    /// `"seghist"`); kinds that did not run are absent.
    pub by_kind: BTreeMap<&'static str, usize>,
    /// Host statements that are array primitives a runtime launches or copies for: `iota`,
    /// `replicate`, `copy`, `concat`, array literals, `sort_by_key`, `rearrange`, and in-place
    /// updates that write an array or a slice. Not `reshape` (a new view of the same memory)
    /// nor an update of one element.
    pub builtins: usize,
    /// Threads run: the sum of the kernels' space sizes.
    pub threads: u128,
}

/// Runs entry point `entry` of `prog` on `args`, with the tuning values `thresholds`, as
/// [`crate::interp::run_entry`] runs the SOAC IR; returns the results and what was run.
pub fn run_entry(
    prog: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Result<(Vec<Value>, Stats), RuntimeError> {
    let f = prog.entry(entry).ok_or_else(|| interp::no_entry(entry))?;
    let args = interp::entry_args(entry, &f.size_params, &f.params, args)?;
    let host = Host::new(prog, thresholds);
    let results = {
        let mut ip = Interp::with_ext(&host, prog.funs.len(), prog.name_source.next as usize);
        host.apply(&mut ip, &f.name, args, &None)?
    };
    let results = interp::entry_results(entry, results, f.num_ext_results())?;
    Ok((results, host.stats.take()))
}

/// The host side of the evaluator: the program's functions, the thresholds and the counts.
struct Host<'p> {
    /// By name: (number, for [`Interp::active`]; definition).
    funs: HashMap<&'p str, (usize, &'p FunDef)>,
    thresholds: &'p Thresholds,
    stats: RefCell<Stats>,
}

impl<'p> ExtFuns<'p> for Host<'p> {
    fn apply(
        &self,
        ip: &mut Interp<'p>,
        fun: &str,
        args: Vec<Val>,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let Some(&(k, f)) = self.funs.get(fun) else {
            return err(
                format!("internal error: call of unknown function `{fun}`"),
                loc,
            );
        };
        let params = f.size_params.iter().chain(f.params.iter().map(|p| &p.name));
        ip.call_fun(k, fun, params, args, loc, |ip| {
            self.eval_body(ip, &f.body, loc)
        })
    }
}

impl<'p> Host<'p> {
    fn new(prog: &'p Program, thresholds: &'p Thresholds) -> Host<'p> {
        let funs = prog
            .funs
            .iter()
            .enumerate()
            .map(|(i, f)| (&*f.name, (i, f)))
            .collect();
        Host {
            funs,
            thresholds,
            stats: RefCell::default(),
        }
    }

    /// Runs a host body and returns its results; its variables are cleared afterwards.
    fn eval_body(
        &self,
        ip: &mut Interp<'p>,
        body: &'p HostBody,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let out = body
            .stms
            .iter()
            .try_for_each(|stm| self.exec_stm(ip, stm))
            .and_then(|()| body.result.iter().map(|se| ip.val(se, loc)).collect());
        for stm in &body.stms {
            for p in &stm.pat.elems {
                ip.clear(&p.name);
            }
        }
        out
    }

    fn exec_stm(&self, ip: &mut Interp<'p>, stm: &'p HostStm) -> R<()> {
        let loc = &stm.loc;
        let vals = match &stm.exp {
            HostExp::Plain(e) => {
                if is_builtin(ip, e) {
                    self.stats.borrow_mut().builtins += 1;
                }
                return ip.exec_exp(&stm.pat, e, loc);
            }
            HostExp::If {
                cond,
                then_b,
                else_b,
                ..
            } => {
                let b = if ip.bool(cond, loc)? { then_b } else { else_b };
                self.eval_body(ip, b, loc)?
            }
            // A versioned loop's versions compute the same values: the one its condition picks,
            // the one-thread version in chunks of `Thresholds::seq_chunk` iterations.
            HostExp::VersionedLoop {
                par_cond,
                par,
                seq,
                chunk,
                ..
            } => {
                if ip.bool(par_cond, loc)? {
                    self.eval_body(ip, par, loc)?
                } else {
                    if let Some(c) = chunk {
                        let Some(n) = ip.prim(&c.bound, loc)?.as_i128() else {
                            return err("internal error: a loop bound that is not an integer", loc);
                        };
                        let k = self.thresholds.seq_chunk.map_or(n, i128::from).max(1);
                        let k = i64::try_from(k).unwrap_or(i64::MAX);
                        let pat = crate::ir::Pat {
                            elems: vec![c.param.clone()],
                        };
                        ip.bind_pat(&pat, loc, vec![Val::Prim(PrimValue::I64(k))])?;
                    }
                    self.eval_body(ip, seq, loc)?
                }
            }
            HostExp::Loop { params, form, body } => {
                let n = body.result.len();
                ip.run_loop_with(params, form, n, loc, |ip| self.eval_body(ip, body, loc))?
            }
            HostExp::WithAcc { inputs, lam } => self.with_acc(ip, inputs, lam, loc)?,
            HostExp::Threshold { size, name, kind } => {
                vec![self.threshold(ip, size, name, *kind, loc)?]
            }
            HostExp::Seg(op) => self.seg(ip, op, loc)?,
        };
        ip.bind_pat(&stm.pat, loc, vals)
    }

    /// A host `with_acc`: the interpreter's, with a host lambda.
    fn with_acc(
        &self,
        ip: &mut Interp<'p>,
        inputs: &'p [AccInput],
        lam: &'p HostLambda,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let base = ip.begin_acc(inputs, lam.params.len(), loc)?;
        for (k, p) in lam.params.iter().enumerate() {
            ip.set(&p.name, Val::Acc(base + k));
        }
        let res = self.eval_body(ip, &lam.body, loc);
        for p in &lam.params {
            ip.clear(&p.name);
        }
        ip.end_acc(base, inputs.len(), res)
    }

    /// `size >= thresholds.get(name)`.
    fn threshold(
        &self,
        ip: &Interp<'p>,
        size: &SubExp,
        name: &str,
        kind: super::ThresholdKind,
        loc: &Option<SrcLoc>,
    ) -> R<Val> {
        let Some(n) = ip.prim(size, loc)?.as_i128() else {
            return err("internal error: threshold of a non-integer size", loc);
        };
        let t = self.thresholds.get(name, kind);
        Ok(Val::Prim(PrimValue::Bool(n >= i128::from(t))))
    }
}

/// Is `e` an array primitive that a GPU runtime launches or copies for (see
/// [`Stats::builtins`])?
fn is_builtin(ip: &Interp, e: &Exp) -> bool {
    match e {
        Exp::Iota { .. }
        | Exp::Replicate { .. }
        | Exp::Copy(_)
        | Exp::Concat { .. }
        | Exp::ArrayLit { .. }
        | Exp::SortByKey { .. }
        | Exp::Rearrange(..) => true,
        Exp::Update(_, idx, x) => {
            idx.iter().any(|d| matches!(d, DimIndex::Slice { .. }))
                || matches!(x, SubExp::Var(v) if matches!(ip.get(v, &None), Ok(Val::Arr(_))))
        }
        _ => false,
    }
}
