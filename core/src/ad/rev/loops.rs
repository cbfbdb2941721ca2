//! Loops in reverse mode (paper 000 §4.3; Futhark's `Futhark.AD.Rev.Loop`): checkpointing and
//! redundant execution.
//!
//! **Forward sweep** ([`Rev::fwd_loop`], called by `fwd_stms` instead of emitting the loop as
//! is): a `for` loop runs with one extra loop parameter per loop parameter (but see inversion
//! below), an array `[n]t`
//! that receives the value of the parameter at the *entry* of each iteration (an in-place
//! update, before the body runs). Parameters returned unchanged by the body are not saved
//! (their value is the initial one), nor are array parameters of a loop marked `#[true_dep]`
//! (their final value stands in for every iteration). The checkpoint arrays are recorded in
//! [`Rev::loop_tapes`] under the name of the loop's first parameter. When nothing needs the
//! adjoint of the loop, the simplifier drops the unused checkpoint parameters again.
//!
//! **Return sweep** ([`Rev::rev_loop`]): a loop with `k` from 0 to `n-1` that runs iteration
//! `i = n-1-k`: it restores the parameters from the checkpoints, re-executes the forward sweep
//! of (a fresh copy of) the body, seeds the adjoints of the body's results with the
//! loop-carried adjoints of the parameters, runs the body's return sweep, and carries on the
//! adjoints of the body's parameters and of the free variables the body contributes to. These
//! are found by a dry run of the body's return sweep (whose output is discarded; loops nested
//! in the body get an empty reverse body during it, [`Rev::dry_runs`], so that the work stays
//! polynomial, not exponential, in the depth of a loop nest; and its result is cached by the
//! loop's shape, [`Rev::cached_dry_run`], since every enclosing dry run repeats it: so the work
//! is quadratic, as the code it makes). Adjoints of
//! free arrays that are accumulators (inside a `map` lambda) are carried as accumulator
//! parameters. Array adjoints are carried owned (copied first when shared), so the body
//! updates them in place. Size parameters get no adjoint. The sizes of the
//! parameters' arrays must not change between iterations (checkpoints are regular arrays):
//! the forward loop checks at the entry of each iteration that every size parameter still has
//! its initial value, which is then what the return sweep restores it to.
//!
//! **Kept results** ([`keepable`], [`Kept`]): redundant execution runs the body's forward code
//! twice, once in each sweep. Where a statement of the body itself computes a product (a
//! `reduce`, a `scan`, a `map` whose lambda reduces, such as a matrix times the state) whose
//! results are scalars or arrays of the same type as a checkpointed parameter (or row), of
//! sizes that do not change between iterations, and are not consumed by the body, the forward
//! sweep also saves those results, one row per iteration, in arrays named `<result>_saved` next
//! to the checkpoints, and the return sweep reads row `i` of them instead of running the
//! statement again (the statement's own return-sweep rule still reads its inputs). Elementwise
//! code still runs again: it costs no more than reading its results, and the return sweep of a
//! `map` runs its lambda again anyway. The memory stays bounded: each kept array is the size
//! of one iteration's checkpoint of a parameter. The batched LSTM of benches/paper (RNN) keeps
//! its eight gate products per time step, and its gradient at bs64 takes 10–25 % less time.
//!
//! **Kept loops** ([`KeptLoop`], [`Rev::kept_loop`]): a loop nested in the body would run
//! its forward sweep in both sweeps of the enclosing loop too, so its body would run three times
//! (once more in its own return sweep). Where a `for` loop of the body has checkpoints that each
//! fit in one of the enclosing loop's checkpoints (the same element type, the same dimensions
//! and a few more: [`fits_in`]; the ADBench LSTM's layer loop saves rows `[l][2][b]` and inputs
//! `[l][b]` of a time step whose state is `[l][2][b]`), the enclosing forward sweep runs the
//! inner loop with its checkpoints and kept results and keeps those and the loop's results, one
//! row per iteration. The enclosing return sweep binds row `i` of them instead of running the
//! inner loop, and the inner loop's return sweep restores its parameters from them. Memory stays
//! bounded as for kept results (each kept array at most one checkpoint of the enclosing loop);
//! an inner loop that restores a parameter by inversion is not kept. On the ADBench LSTM (l = 2,
//! c = 1024) this takes the layers' forward code from three runs per time step to two, as
//! for the same loop unrolled by hand.
//!
//! **Rewrites first**, whose statements are then differentiated as above:
//! - `#[stripmine(k)]` on a `for` loop of `n` iterations: a `k`-deep nest of loops of
//!   `b = ⌊n^(1/k)⌋` iterations each (iteration `((i1·b + i2)·b + …)` of the original), then a
//!   remainder loop of `n - b^k` iterations: checkpoint memory `k·b + (n - b^k)` instead of `n`,
//!   at the price of one more re-execution per level.
//! - `while` with `#[bound(N)]`: `for i < N do if cond then body else params` (then an
//!   assertion that the condition is false at the end, so too small a bound is an error rather
//!   than a wrong result).
//! - `while` without a bound: an inspector loop first counts the iterations (running the loop
//!   once more), then `for i < count do body` (the condition holds at every entry).
//!
//! **Inert `while` loops** are neither rewritten nor checkpointed: a `while` loop whose
//! parameters are all integers or booleans (or arrays of them), whose body has no accumulator,
//! and none of whose parameters may carry a derivative of the differentiated function's
//! parameters ([`Carrying`]: their initial and next values depend on those only through
//! comparisons, conditions and indices) has no adjoint to carry: every value it returns is
//! piecewise constant in them, so its return sweep contributes nothing. (Integers do carry derivatives: Futhark
//! differentiates `loop acc while i < y do acc * x` for an integer `x`, tests/ad/while0.fut,
//! so such a loop is not inert.) Its forward sweep is the loop itself, run once
//! ([`LoopTape::Inert`]).
//! XSBench's binary search inside the lookup loop ran twice per re-execution otherwise (the
//! inspector counting the iterations, then the `for` loop repeating them).
//!
//! **Inversion instead of checkpoints** (paper 004, [`invert`]): an integer parameter updated
//! by an invertible chain (`j' = j + 3`, `k = j + 1; j' = k + 2`, with loop-invariant
//! operands) is not saved: the reverse loop carries it backwards from the loop's final value
//! and undoes the chain at the start of each iteration ([`Restore::Inverted`]).
//!
//! `#[true_dep]`: Futhark puts it on a loop *parameter* (`loop #[true_dep] xs = ...`): lowering
//! names such a parameter [`crate::ad::TRUE_DEP_PARAM`] (IR params have no attributes) and it is
//! not saved, whatever its type. The statement form, `#[true_dep] loop ...`, marks every array
//! parameter of the loop (the scalar parameters are still saved).

use super::{bound_in, has_adjoint, Adj, Frame, Rev, R};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};
use std::collections::{HashMap, HashSet};

mod invert;
mod rewrite;
#[cfg(test)]
#[path = "tests_loop.rs"]
mod tests;

const I64: PrimType = PrimType::Int(IntType::I64);

/// The deepest nest `#[stripmine(k)]` may ask for (each level is one more re-execution; 64
/// levels already cut any `i64` trip count to 2 iterations per level).
const MAX_STRIPMINE: i64 = 64;

/// What the forward sweep of a loop left for its return sweep.
#[derive(Clone, Debug)]
pub(crate) enum LoopTape {
    /// The loop was rewritten into these statements (strip-mining, `while` → `for`); their
    /// forward sweep was emitted, and their return sweep is the loop's.
    Rewritten(Vec<Stm>),
    /// A `for` loop ran with checkpoints: how to restore each parameter, and the body's
    /// statements whose results it kept.
    Checkpointed(Vec<Restore>, Vec<Kept>),
    /// An inert `while` loop (see the module documentation) ran as it is: its return sweep is
    /// empty.
    Inert,
}

/// A statement of a checkpointed loop's body whose results the forward sweep kept, one row per
/// iteration (see [`keepable`]): the return sweep reads row `i` of each instead of running the
/// statement again.
#[derive(Clone, Debug)]
pub(crate) struct Kept {
    /// Its index in the body's statements.
    stm: usize,
    /// One array per result of the statement, `[n]` of its type; for a kept loop, then one per
    /// tape of the loop ([`KeptLoop::outs`]).
    tapes: Vec<VName>,
    /// Set when the statement is a loop that the forward sweep ran with its own checkpoints
    /// ([`Rev::kept_loop`]).
    lp: Option<KeptLoop>,
}

/// A `for` loop of a checkpointed loop's body whose forward sweep (its own checkpoints and kept
/// results) the enclosing forward sweep ran and kept, with the loop's results, one row per
/// iteration of the enclosing loop: the enclosing return sweep reads them instead of running the
/// inner loop's forward sweep again, so that its return sweep starts from them.
#[derive(Clone, Debug)]
pub(crate) struct KeptLoop {
    /// How the inner loop's return sweep restores its parameters. The checkpoints named are
    /// among `outs`.
    restores: Vec<Restore>,
    /// The inner loop's own kept statements (their tapes among `outs`).
    kept: Vec<Kept>,
    /// The inner loop's tapes as its forward sweep bound them (checkpoints, then kept
    /// results), in the order of their rows in [`Kept::tapes`].
    outs: Vec<VName>,
}

/// Whether the forward sweep keeps the results of statement `s` of a checkpointed loop's body
/// (a statement of the body itself, not of a nested body) instead of the return sweep running
/// it again: a `reduce` or `scan`, or a `map` whose lambda reduces (a product of matrices: more
/// work per result than a load of it; an elementwise `map` is as cheap to run again, and the
/// return sweep of a `map` runs its lambda again anyway), whose results the body does not
/// consume, each a scalar or an array of the same (outer) type as a checkpointed parameter or
/// a checkpointed row (`ckpt`), whose dimensions name no loop parameter but size parameters
/// (`sizes`, checked to keep their initial values: any other may change between iterations,
/// and with it the array's size). The type condition bounds the memory: every kept array is the
/// size of one iteration's checkpoint of a parameter, so a loop keeps at most as many times
/// its checkpoint memory as its kept statements have results.
fn keepable(
    s: &Stm,
    consumed: &HashSet<VName>,
    ckpt: &[Type],
    params: &[(Param, SubExp)],
    sizes: &HashSet<VName>,
) -> bool {
    let work = match &s.exp {
        Exp::Soac(Soac::Reduce { .. } | Soac::Scan { .. }) => true,
        Exp::Soac(Soac::Map { lam, .. }) => reduces(&lam.body),
        _ => false,
    };
    work && !s.pat.elems.is_empty()
        && s.pat
            .elems
            .iter()
            .all(|p| keepable_value(p, consumed, params, sizes, |t| ckpt.contains(t)))
}

/// Whether value `p` of the body of a loop (of parameters `params`) may be kept, one row per
/// iteration: the body does not consume it, and it is a scalar, or an array whose dimensions
/// name no loop parameter but size parameters (`sizes`, checked to keep their initial values:
/// any other may change between iterations, and with it the array's size) and whose type
/// outside the loop `array_ok` accepts.
fn keepable_value(
    p: &Param,
    consumed: &HashSet<VName>,
    params: &[(Param, SubExp)],
    sizes: &HashSet<VName>,
    array_ok: impl Fn(&Type) -> bool,
) -> bool {
    let fixed = |t: &Type| {
        t.shape().iter().all(|d| match d {
            SubExp::Var(v) => sizes.contains(v) || !params.iter().any(|(p, _)| &p.name == v),
            SubExp::Const(_) => true,
        })
    };
    !consumed.contains(&p.name)
        && match &p.ty {
            Type::Prim(_) => true,
            Type::Array { .. } => fixed(&p.ty) && array_ok(&outer_type(&p.ty, params)),
            Type::Acc { .. } => false,
        }
}

/// Whether an array of type `t` is no larger than one of the types `ckpt`: one of them has
/// `t`'s element type and every dimension of `t` (as many times), and no other dimension that
/// is a constant below 1 (`[l][b]` and `[b]` fit in `[l][2][b]`). A size among its other
/// dimensions may be 0, making the checkpoint empty; `t` is then still no larger than the
/// checkpoint's non-zero dimensions, which bounds the memory as well.
fn fits_in(t: &Type, ckpt: &[Type]) -> bool {
    let Type::Array { elem, shape } = t else {
        return matches!(t, Type::Prim(_));
    };
    ckpt.iter().any(|c| {
        let Type::Array {
            elem: ce,
            shape: cs,
        } = c
        else {
            return false;
        };
        let mut rest: Vec<&SubExp> = cs.iter().collect();
        ce == elem
            && shape
                .iter()
                .all(|d| match rest.iter().position(|r| *r == d) {
                    Some(k) => {
                        rest.remove(k);
                        true
                    }
                    None => false,
                })
            && rest.iter().all(|r| match r {
                SubExp::Const(v) => v.as_i128().is_some_and(|k| k >= 1),
                SubExp::Var(_) => true,
            })
    })
}

/// Whether statement `s` of a loop's body is a loop whose forward sweep the enclosing forward
/// sweep may run with checkpoints and keep ([`KeptLoop`]): a `for` loop with parameters that is
/// not strip-mined (whose forward sweep is a checkpointed loop, [`Rev::fwd_loop`]).
fn loop_to_keep(s: &Stm) -> bool {
    matches!(&s.exp, Exp::Loop { form: LoopForm::For { .. }, params, .. } if !params.is_empty())
        && s.attrs.int_arg("stripmine").is_none_or(|k| k < 2)
}

/// Whether `b` reduces: has a `reduce`, `scan`, `reduce_by_index` or loop, at any depth of
/// `map` lambdas and branches.
fn reduces(b: &Body) -> bool {
    b.stms.iter().any(|s| match &s.exp {
        Exp::Soac(Soac::Reduce { .. } | Soac::Scan { .. } | Soac::Hist { .. }) => true,
        Exp::Loop { .. } => true,
        Exp::Soac(Soac::Map { lam, .. }) => reduces(&lam.body),
        Exp::If { then_b, else_b, .. } => reduces(then_b) || reduces(else_b),
        _ => false,
    })
}

/// How the return sweep gets the value of a loop parameter at the entry of an iteration.
#[derive(Clone, Debug)]
pub(crate) enum Restore {
    /// Row `i` of this checkpoint array.
    Saved(VName),
    /// An array parameter of which the body uses only row `i` (the iteration's index): it reads
    /// `p[i, …]` and updates `p with [i, …] = v`, in statements of the body itself
    /// ([`rows_only`]). Row `i` of this checkpoint array is row `i` of the parameter at the
    /// entry of iteration `i`, which is all the return sweep reads: the reverse iteration's
    /// re-execution reads the row instead of the parameter (whose adjoint the reads still
    /// update at `[i, …]`). A loop over the layers of a stacked LSTM (`for i < l: state with
    /// [i] = cell state[i]`) saves `l` rows instead of `l` copies of the whole `[l]` state.
    Rows(VName),
    /// The parameter is loop-invariant: its initial value.
    Init,
    /// `#[true_dep]`: the loop's final value.
    Final,
    /// An integer parameter updated by an invertible chain (paper 004): the reverse loop
    /// carries it backwards from its final value, undoing these steps once per iteration.
    Inverted(invert::Inversion),
}

/// How the adjoint of a free variable is carried through the reverse loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Carry {
    Val,
    Acc,
}

/// The loop of a statement, taken apart.
struct LoopParts<'s> {
    params: &'s [(Param, SubExp)],
    form: &'s LoopForm,
    body: &'s Body,
}

fn loop_parts(stm: &Stm) -> R<LoopParts<'_>> {
    match &stm.exp {
        Exp::Loop { params, form, body } => Ok(LoopParts { params, form, body }),
        _ => Err("loop (internal error)".into()),
    }
}

/// The key of a loop in [`Rev::loop_tapes`]: its first parameter (bound by this statement
/// alone, since every name is bound once).
fn loop_key(stm: &Stm) -> Option<VName> {
    match &stm.exp {
        Exp::Loop { params, .. } => params.first().map(|(p, _)| p.name.clone()),
        _ => None,
    }
}

/// Whether loop statement `stm` (taken apart as `parts`) is inert (see the module
/// documentation): its parameters are integers or booleans, or arrays of them, it has no
/// accumulator, and [`Carrying`] finds that none of its parameters may carry a derivative of
/// the differentiated function's parameters (a loop it has not seen, such as a renamed copy,
/// is not inert).
fn inert(stm: &Stm, parts: &LoopParts<'_>, carrying: Option<&Carrying>) -> bool {
    let discrete = |t: &Type| matches!(t.elem(), Some(PrimType::Int(_) | PrimType::Bool));
    let Some(c) = carrying else {
        return false;
    };
    parts.params.iter().all(|(p, _)| discrete(&p.ty))
        && !crate::passes::fuse_acc::has_acc(&stm.exp)
        && parts
            .params
            .iter()
            .all(|(p, _)| c.known.contains(&p.name) && !c.carry.contains(&p.name))
}

/// Which variables of a differentiated function may carry a derivative of its parameters
/// (Futhark differentiates integers too): the parameters, and what is computed from them by
/// anything but a comparison (a boolean), an `if`'s condition or an index; `map` parameters
/// where their arrays do, loop parameters where their initial or next values do (a
/// fixpoint), and, conservatively, the results and parameters of other SOACs, accumulator
/// scopes and calls where anything they mention does. `known` holds every variable the walk
/// bound; anything else (a variable made by the transformation) counts as carrying.
#[derive(Default)]
pub(crate) struct Carrying {
    pub carry: HashSet<VName>,
    pub known: HashSet<VName>,
}

impl Carrying {
    /// The analysis of the function with parameters `params` and body `body`.
    pub(crate) fn of(params: &[Param], body: &Body) -> Carrying {
        let mut c = Carrying::default();
        for p in params {
            c.known.insert(p.name.clone());
            c.carry.insert(p.name.clone());
        }
        c.body(body);
        c
    }

    fn has(&self, s: &SubExp) -> bool {
        matches!(s, SubExp::Var(v) if self.carry.contains(v))
    }

    fn bind(&mut self, p: &Param, carries: bool) {
        self.known.insert(p.name.clone());
        // A boolean (a comparison's result) carries no derivative.
        if carries && p.ty.elem() != Some(PrimType::Bool) {
            self.carry.insert(p.name.clone());
        }
    }

    /// The parameters of a lambda all carrying where `carries`, then its body.
    fn lambda(&mut self, lam: &Lambda, carries: bool) {
        for p in &lam.params {
            self.bind(p, carries);
        }
        self.body(&lam.body);
    }

    fn body(&mut self, body: &Body) {
        for stm in &body.stms {
            self.stm(stm);
        }
    }

    fn stm(&mut self, stm: &Stm) {
        let results: Vec<bool> = match &stm.exp {
            Exp::CmpOp(..) => vec![false],
            Exp::Index(arr, _) => vec![self.carry.contains(arr)],
            Exp::If { then_b, else_b, .. } => {
                self.body(then_b);
                self.body(else_b);
                then_b
                    .result
                    .iter()
                    .zip(&else_b.result)
                    .map(|(a, b)| self.has(a) || self.has(b))
                    .collect()
            }
            Exp::Loop { params, form, body } => {
                if let LoopForm::For { i, .. } = form {
                    self.known.insert(i.clone());
                }
                let mut now: Vec<bool> = params.iter().map(|(_, init)| self.has(init)).collect();
                loop {
                    for ((p, _), &c) in params.iter().zip(&now) {
                        self.bind(p, c);
                    }
                    self.body(body);
                    let next: Vec<bool> = params
                        .iter()
                        .zip(&body.result)
                        .map(|((p, _), r)| self.carry.contains(&p.name) || self.has(r))
                        .collect();
                    if next == now {
                        break;
                    }
                    now = next;
                }
                now
            }
            Exp::Soac(Soac::Map { w, arrs, lam }) => {
                let wide = self.has(w);
                for (p, a) in lam.params.iter().zip(arrs) {
                    let c = wide || self.carry.contains(a);
                    self.bind(p, c);
                }
                self.body(&lam.body);
                lam.body
                    .result
                    .iter()
                    .map(|r| wide || self.has(r))
                    .collect()
            }
            e => {
                let any = crate::passes::traverse::uses_in_exp(e)
                    .iter()
                    .any(|v| self.carry.contains(v));
                match e {
                    Exp::Soac(Soac::Reduce { op, .. } | Soac::Scan { op, .. })
                    | Exp::Soac(Soac::Hist { op, .. }) => self.lambda(&op.lam, any),
                    Exp::WithAcc { inputs, lam } => {
                        for op in inputs.iter().filter_map(|i| i.op.as_ref()) {
                            self.lambda(&op.lam, any);
                        }
                        self.lambda(lam, any);
                    }
                    _ => {}
                }
                vec![any; stm.pat.elems.len()]
            }
        };
        for (p, c) in stm.pat.elems.iter().zip(results) {
            self.bind(p, c);
        }
    }
}

/// The size parameters of a loop: parameters that the types of other parameters refer to.
fn size_params(params: &[(Param, SubExp)]) -> HashSet<VName> {
    let names: HashSet<&VName> = params.iter().map(|(p, _)| &p.name).collect();
    let mut out = HashSet::new();
    for (p, _) in params {
        for d in p.ty.shape() {
            if let SubExp::Var(v) = d {
                if names.contains(v) {
                    out.insert(v.clone());
                }
            }
        }
    }
    out
}

/// `ty` with the loop's size parameters replaced by their initial values (a type valid outside
/// the loop; the sizes are checked to stay the same).
fn outer_type(ty: &Type, params: &[(Param, SubExp)]) -> Type {
    match ty {
        Type::Array { elem, shape } => Type::Array {
            elem: *elem,
            shape: shape
                .iter()
                .map(|d| match d {
                    SubExp::Var(v) => params
                        .iter()
                        .find(|(p, _)| &p.name == v)
                        .map(|(_, init)| init.clone())
                        .unwrap_or_else(|| d.clone()),
                    c => c.clone(),
                })
                .collect(),
        },
        t => t.clone(),
    }
}

/// Whether the body uses array parameter `p` (the `k`-th) only row by row at the loop index `i`
/// ([`Restore::Rows`]): every use is a statement of the body itself that reads `p[i, …]`, except
/// one `q = p with [i, …] = v` (or `q = c with [i, …] = v` of a `c = copy p` used only there)
/// whose `q` is the body's `k`-th result and is used nowhere else.
/// Any other use (a read at another row, a use inside a nested body, `p` passed whole) needs the
/// whole array and the loop saves it whole.
fn rows_only(body: &Body, k: usize, p: &VName, i: &VName) -> bool {
    use crate::passes::traverse::{walk_body, UseCounter};
    let row = row_indices(body, i);
    let at_i = |idx: &[DimIndex]| at_row(idx, &row);
    let mut uses = UseCounter::default();
    walk_body(&mut uses, &mut body.clone());
    let count = |v: &VName| uses.uses.get(v).copied().unwrap_or(0);
    // The update may be of a copy of `p` used only there (`p` is read after it).
    let copies: Vec<&VName> = body
        .stms
        .iter()
        .filter(|s| matches!(&s.exp, Exp::Copy(a) if a == p))
        .map(|s| &s.pat.elems[0].name)
        .collect();
    let (mut reads, mut updates) = (0, 0);
    for s in &body.stms {
        match &s.exp {
            Exp::Index(a, idx) if a == p && at_i(idx) => reads += 1,
            Exp::Copy(a) if a == p => {}
            Exp::Update(a, idx, _) if (a == p || copies.contains(&a)) && at_i(idx) => {
                if a != p && count(a) != 1 {
                    return false;
                }
                let q = &s.pat.elems[0].name;
                let in_result = body.result.get(k) == Some(&SubExp::Var(q.clone()));
                // (An update by `p` itself counts as one more use of `p`, below.)
                if !in_result || count(q) != 1 {
                    return false;
                }
                updates += 1;
            }
            _ => {}
        }
    }
    updates == 1 && copies.len() <= 1 && count(p) == reads + updates
}

/// The names of the loop index `i` in `body`: `i` itself and its conversions to integer types
/// at least as wide, made by statements of the body itself (`i64.i32 i`, which indexing with an
/// `i32` loop index makes): each has `i`'s value, which is never negative.
fn row_indices(body: &Body, i: &VName) -> HashSet<VName> {
    let mut names: HashSet<VName> = [i.clone()].into_iter().collect();
    for s in &body.stms {
        if let (
            Exp::Conv(
                ConvOp {
                    from: PrimType::Int(from),
                    to: PrimType::Int(to),
                },
                SubExp::Var(v),
            ),
            [e],
        ) = (&s.exp, &s.pat.elems[..])
        {
            if v == i && to.bits() >= from.bits() {
                names.insert(e.name.clone());
            }
        }
    }
    names
}

/// Whether `idx` starts with a fixed index among `row` (the names of the loop index,
/// [`row_indices`]): it reads or updates within row `i`.
fn at_row(idx: &[DimIndex], row: &HashSet<VName>) -> bool {
    matches!(idx.first(), Some(DimIndex::Fix(SubExp::Var(j))) if row.contains(j))
}

/// `body` with its reads `p[i, …]` of the row-checkpointed parameters `p` ([`rows_only`])
/// reading `row[…]` of their restored rows instead (`rows`: each `p` with its row).
fn rows_read(body: &Body, rows: &[(VName, VName)], i: &VName) -> Body {
    let mut body = body.clone();
    let index = row_indices(&body, i);
    for s in &mut body.stms {
        let Exp::Index(a, idx) = &s.exp else { continue };
        let Some((_, row)) = rows.iter().find(|(p, _)| p == a) else {
            continue;
        };
        if !at_row(idx, &index) {
            continue;
        }
        s.exp = if idx.len() == 1 {
            Exp::SubExp(SubExp::Var(row.clone()))
        } else {
            Exp::Index(row.clone(), idx[1..].to_vec())
        };
    }
    body
}

fn int_const(it: IntType, v: i64) -> SubExp {
    SubExp::Const(PrimValue::int(it, v as i128))
}

fn stm_of(pat: Vec<Param>, exp: Exp, attrs: Attrs, loc: Option<crate::diag::SrcLoc>) -> Stm {
    Stm {
        pat: Pat { elems: pat },
        exp,
        attrs,
        loc,
    }
}

impl Rev<'_> {
    // --- the forward sweep -------------------------------------------------------------------

    /// The forward sweep of a loop statement (see the module documentation).
    pub(super) fn fwd_loop(&mut self, stm: &Stm) -> R<()> {
        let Some(key) = loop_key(stm) else {
            self.emit(stm.clone());
            return Ok(());
        };
        let parts = loop_parts(stm)?;
        if matches!(parts.form, LoopForm::While(_)) && inert(stm, &parts, self.carrying.as_ref()) {
            self.emit(stm.clone());
            self.loop_tapes.insert(key, LoopTape::Inert);
            return Ok(());
        }
        let stripmine = stm.attrs.int_arg("stripmine").filter(|k| *k >= 2);
        let rewritten = match (parts.form, stripmine) {
            (LoopForm::While(_), _) => Some(self.while_to_for(stm)?),
            (LoopForm::For { .. }, Some(k)) if k > MAX_STRIPMINE => {
                return Err(format!(
                    "#[stripmine({k})]: a nest deeper than {MAX_STRIPMINE} loops"
                ))
            }
            (LoopForm::For { .. }, Some(k)) => Some(self.stripmine(stm, k as usize)?),
            _ => None,
        };
        let tape = match rewritten {
            Some(stms) => {
                self.fwd_stms(&stms)?;
                LoopTape::Rewritten(stms)
            }
            None => {
                let (restores, kept) = self.checkpointed_loop(stm)?;
                LoopTape::Checkpointed(restores, kept)
            }
        };
        self.loop_tapes.insert(key, tape);
        Ok(())
    }

    /// Emits the `for` loop `stm` with checkpoints of its parameters and the kept results of
    /// its body ([`keepable`]); returns how to restore each parameter, and what was kept.
    fn checkpointed_loop(&mut self, stm: &Stm) -> R<(Vec<Restore>, Vec<Kept>)> {
        let LoopParts { params, form, body } = loop_parts(stm)?;
        let LoopForm::For { i, it, bound } = form else {
            return Err("a while loop to checkpoint (internal error)".into());
        };
        let true_dep = stm.attrs.has("true_dep");
        let sizes = size_params(params);
        let n = self.iterations_i64(bound, *it);
        let names: HashSet<VName> = params.iter().map(|(p, _)| p.name.clone()).collect();

        let mut restores = vec![];
        let mut checked = vec![];
        let mut cp_params: Vec<(Param, SubExp)> = vec![];
        for (k, (p, _)) in params.iter().enumerate() {
            if matches!(p.ty, Type::Acc { .. }) {
                return Err("a loop carrying an accumulator".into());
            }
            let invariant = body.result.get(k) == Some(&SubExp::Var(p.name.clone()));
            if invariant {
                restores.push(Restore::Init);
                continue;
            }
            if sizes.contains(&p.name) {
                // Checked below to keep its initial value.
                checked.push(p.name.clone());
                restores.push(Restore::Init);
                continue;
            }
            if (true_dep && matches!(p.ty, Type::Array { .. }))
                || &*p.name.base == crate::ad::TRUE_DEP_PARAM
            {
                restores.push(Restore::Final);
                continue;
            }
            if let Some(inv) = body
                .result
                .get(k)
                .and_then(|r| invert::inversion(body, p, r, i, &names))
            {
                restores.push(Restore::Inverted(inv));
                continue;
            }
            let ot = outer_type(&p.ty, params);
            let rows = ot.rank() > 0 && rows_only(body, k, &p.name, i);
            let ot = if rows { ot.row() } else { ot };
            let (cp, init) = self.empty_tape(&p.name.base, &ot, &n);
            restores.push(if rows {
                Restore::Rows(cp.name.clone())
            } else {
                Restore::Saved(cp.name.clone())
            });
            cp_params.push((cp, init));
        }

        // The kept statements, each result with its tape parameter (after the checkpoints),
        // of the type of a checkpoint's row.
        let ckpt: Vec<Type> = cp_params.iter().map(|(cp, _)| cp.ty.row()).collect();
        let consumed = crate::passes::fusion::consumed_body(body);
        // Per kept statement: its index, each value with its tape parameter, and for a loop
        // what its return sweep needs; a kept loop's forward sweep replaces it in the body.
        type KeptTapes = (usize, Vec<(VName, Param)>, Option<KeptLoop>);
        let mut kept_stms: Vec<KeptTapes> = vec![];
        let mut inner_fwd: HashMap<usize, Vec<Stm>> = HashMap::new();
        for (j, s) in body.stms.iter().enumerate() {
            if ckpt.is_empty() {
                break;
            }
            let (values, lp) = if keepable(s, &consumed, &ckpt, params, &sizes) {
                (s.pat.elems.clone(), None)
            } else if let Some((fwd, lp, outs)) =
                self.kept_loop(s, &consumed, &ckpt, params, &sizes)
            {
                inner_fwd.insert(j, fwd);
                let mut values = s.pat.elems.clone();
                values.extend(outs);
                (values, Some(lp))
            } else {
                continue;
            };
            let mut tapes = vec![];
            for e in &values {
                let (cp, init) = self.empty_tape(&e.name.base, &outer_type(&e.ty, params), &n);
                cp_params.push((cp.clone(), init));
                tapes.push((e.name.clone(), cp));
            }
            kept_stms.push((j, tapes, lp));
        }

        // The body: checks that the sizes are unchanged, saves the checkpoints, then the
        // original body (each kept loop's forward sweep in its place) and the kept results.
        let mut stms = vec![];
        let mut saved_res = vec![];
        let at_i = || vec![DimIndex::Fix(SubExp::Var(i.clone()))];
        {
            let mut b = crate::ir::builder::Builder::new(self.ns);
            for (p, init) in params {
                if checked.contains(&p.name) {
                    let same = b.cmp(CmpOp::Eq(I64), SubExp::Var(p.name.clone()), init.clone());
                    b.assert(
                        SubExp::Var(same),
                        "reverse-mode AD of a loop whose array sizes change between \
                         iterations is not supported",
                    );
                }
            }
            let mut cps = cp_params.iter();
            for ((p, _), r) in params.iter().zip(&restores) {
                let saved = match r {
                    Restore::Saved(_) => SubExp::Var(p.name.clone()),
                    Restore::Rows(_) => SubExp::Var(b.bind(
                        &format!("{}_row", p.name.base),
                        p.ty.row(),
                        Exp::Index(p.name.clone(), at_i()),
                    )),
                    _ => continue,
                };
                let (cp, _) = cps.next().ok_or("checkpoints (internal error)")?;
                let upd = b.bind(
                    &format!("{}_saved_upd", p.name.base),
                    cp.ty.clone(),
                    Exp::Update(cp.name.clone(), at_i(), saved),
                );
                saved_res.push(SubExp::Var(upd));
            }
            stms.append(&mut b.stms);
        }
        // The kept results, each into row `i` of its tape: a kept loop's right after it (before
        // any later statement may consume what its results alias), the others at the end.
        let mut saves: HashMap<usize, Vec<Stm>> = HashMap::new();
        let mut at_end = vec![];
        {
            let mut b = crate::ir::builder::Builder::new(self.ns);
            for (j, tapes, lp) in &kept_stms {
                for (v, cp) in tapes {
                    let upd = b.bind(
                        &format!("{}_saved_upd", v.base),
                        cp.ty.clone(),
                        Exp::Update(cp.name.clone(), at_i(), SubExp::Var(v.clone())),
                    );
                    saved_res.push(SubExp::Var(upd));
                }
                let made = std::mem::take(&mut b.stms);
                match lp {
                    Some(_) => {
                        saves.insert(*j, made);
                    }
                    None => at_end.extend(made),
                }
            }
        }
        for (j, s) in body.stms.iter().enumerate() {
            match inner_fwd.remove(&j) {
                Some(fwd) => {
                    stms.extend(fwd);
                    stms.extend(saves.remove(&j).unwrap_or_default());
                }
                None => stms.push(s.clone()),
            }
        }
        stms.extend(at_end);
        let mut result = body.result.clone();
        result.extend(saved_res);

        let mut all_params = params.to_vec();
        let mut cp_outs = vec![];
        for (cp, init) in cp_params {
            cp_outs.push(Param {
                name: self.ns.fresh(&format!("{}_tape", cp.name.base)),
                ty: cp.ty.clone(),
            });
            all_params.push((cp, init));
        }
        let outs: Vec<VName> = cp_outs.iter().map(|p| p.name.clone()).collect();
        let mut pat = stm.pat.elems.clone();
        pat.extend(cp_outs);
        self.emit(stm_of(
            pat,
            Exp::Loop {
                params: all_params,
                form: form.clone(),
                body: Body { stms, result },
            },
            stm.attrs.clone(),
            stm.loc.clone(),
        ));
        // The restores and the kept statements refer to the loop's outputs, not its params.
        let mut outs = outs.into_iter();
        let restores = restores
            .into_iter()
            .map(|r| match r {
                Restore::Saved(_) => outs
                    .next()
                    .map(Restore::Saved)
                    .ok_or_else(|| "checkpoints (internal error)".to_string()),
                Restore::Rows(_) => outs
                    .next()
                    .map(Restore::Rows)
                    .ok_or_else(|| "checkpoints (internal error)".to_string()),
                r => Ok(r),
            })
            .collect::<R<Vec<_>>>()?;
        let kept = kept_stms
            .into_iter()
            .map(|(stm, tapes, lp)| {
                let tapes = tapes
                    .iter()
                    .map(|_| outs.next().ok_or("kept results (internal error)"))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Kept { stm, tapes, lp })
            })
            .collect::<R<Vec<_>>>()?;
        Ok((restores, kept))
    }

    /// Statement `s` of a checkpointed loop's body (of parameters `params`, whose checkpoints'
    /// rows have the types `ckpt`) run by the forward sweep as a loop with its own checkpoints,
    /// when the forward sweep keeps it ([`KeptLoop`]): the statements that run it (its tapes'
    /// initial values, then the loop), what its return sweep needs, and its tapes. Kept where
    /// [`loop_to_keep`] allows, where it restores no parameter by inversion (whose steps name
    /// its body's variables, which the return sweep's copy of the body renames), and where its
    /// results and tapes are not consumed and each fits in a checkpoint's row ([`fits_in`]) with
    /// sizes that stay the same between iterations: the memory is bounded as for [`keepable`].
    fn kept_loop(
        &mut self,
        s: &Stm,
        consumed: &HashSet<VName>,
        ckpt: &[Type],
        params: &[(Param, SubExp)],
        sizes: &HashSet<VName>,
    ) -> Option<(Vec<Stm>, KeptLoop, Vec<Param>)> {
        if !loop_to_keep(s) || !self.tapes_may_fit(s, ckpt, params) {
            return None;
        }
        let outer = std::mem::take(&mut self.stms);
        let made = self.checkpointed_loop(s);
        let fwd = std::mem::replace(&mut self.stms, outer);
        let (restores, kept) = made.ok()?;
        if restores.iter().any(|r| matches!(r, Restore::Inverted(_))) {
            return None;
        }
        let outs = fwd.last()?.pat.elems.get(s.pat.elems.len()..)?.to_vec();
        let fits = |p: &Param| keepable_value(p, consumed, params, sizes, |t| fits_in(t, ckpt));
        if !s.pat.elems.iter().chain(&outs).all(fits) {
            return None;
        }
        let lp = KeptLoop {
            restores,
            kept,
            outs: outs.iter().map(|p| p.name.clone()).collect(),
        };
        Some((fwd, lp, outs))
    }

    /// Whether the checkpoints of the loop `s` (in the body of a loop of parameters `params`
    /// whose checkpoints' rows have the types `ckpt`) may fit in those ([`fits_in`]), each
    /// parameter saved whole or by rows, and so do its results: checked before the loop's
    /// forward sweep is made for [`Rev::kept_loop`], which would otherwise make it for nothing
    /// at every level of a deep nest of loops that cannot be kept.
    fn tapes_may_fit(&self, s: &Stm, ckpt: &[Type], params: &[(Param, SubExp)]) -> bool {
        let Exp::Loop {
            params: inner,
            form: LoopForm::For { it, bound, .. },
            body,
        } = &s.exp
        else {
            return false;
        };
        // The tapes' length, as `iterations_i64` makes it (any other is a fresh variable, which
        // no checkpoint's type names).
        let Some(n) = self.static_iterations(bound, *it) else {
            return false;
        };
        let fits = |t: &Type| fits_in(&outer_type(t, params), ckpt);
        let saved = inner.iter().enumerate().all(|(k, (p, _))| {
            let t = outer_type(&p.ty, inner);
            body.result.get(k) == Some(&SubExp::Var(p.name.clone()))
                || fits(&t.array_of(n.clone()))
                || (t.rank() > 0 && fits(&t.row().array_of(n.clone())))
        });
        saved && s.pat.elems.iter().all(|p| fits(&p.ty))
    }

    /// A fresh loop parameter `<base>_saved: [n]t` (a checkpoint or a kept result, one row
    /// per iteration, of type `t`) and its initial value, zeros bound here.
    fn empty_tape(&mut self, base: &str, t: &Type, n: &SubExp) -> (Param, SubExp) {
        let ty = t.array_of(n.clone());
        let mut shape = vec![n.clone()];
        shape.extend(t.shape().iter().cloned());
        let init = self.bind(
            &format!("{base}_empty_saved"),
            ty.clone(),
            Exp::Replicate {
                shape,
                value: SubExp::Const(PrimValue::zero(t.elem().unwrap_or(I64))),
            },
        );
        let cp = self.fresh_param(&format!("{base}_saved"), ty);
        (cp, SubExp::Var(init))
    }

    /// The number of iterations of `for i < bound` (index type `it`) as an `i64` without
    /// computing it: a literal bound's (whatever `it`), or an `i64` bound known not to be
    /// negative ([`Rev::sizes`]). Checkpoints of that length have a size the enclosing code
    /// knows ([`Rev::tapes_may_fit`]).
    fn static_iterations(&self, bound: &SubExp, it: IntType) -> Option<SubExp> {
        match bound {
            SubExp::Const(c) => Some(SubExp::i64(c.as_i128().unwrap_or(0).max(0) as i64)),
            SubExp::Var(v) if it == IntType::I64 && self.sizes.contains(v) => Some(bound.clone()),
            SubExp::Var(_) => None,
        }
    }

    /// `max(0, bound)` as an `i64` (the number of iterations of `for i < bound`), or
    /// [`Rev::static_iterations`] where it knows it.
    fn iterations_i64(&mut self, bound: &SubExp, it: IntType) -> SubExp {
        if let Some(n) = self.static_iterations(bound, it) {
            return n;
        }
        let b = if it == IntType::I64 {
            bound.clone()
        } else {
            SubExp::Var(self.bind(
                "bound_i64",
                Type::Prim(I64),
                Exp::Conv(
                    ConvOp {
                        from: PrimType::Int(it),
                        to: I64,
                    },
                    bound.clone(),
                ),
            ))
        };
        self.binop(BinOp::Max(I64), b, SubExp::i64(0))
    }

    /// A fresh copy of a loop statement (pattern, params, loop variable and body renamed).
    fn rename_loop(&mut self, stm: &Stm) -> R<Stm> {
        let b = self.rename_body(&Body {
            stms: vec![stm.clone()],
            result: vec![],
        });
        b.stms
            .into_iter()
            .next()
            .ok_or_else(|| "renaming a loop (internal error)".into())
    }

    // --- the return sweep --------------------------------------------------------------------

    /// The return sweep of a loop statement (see the module documentation).
    pub(super) fn rev_loop(&mut self, stm: &Stm) -> R<()> {
        let key = loop_key(stm).ok_or("a loop without parameters (internal error)")?;
        match self.loop_tapes.remove(&key) {
            Some(LoopTape::Rewritten(stms)) => self.rev_stms(&stms),
            Some(LoopTape::Checkpointed(restores, kept)) => {
                self.rev_checkpointed(stm, &restores, &kept)
            }
            Some(LoopTape::Inert) => {
                // The results' adjoints (of integers and booleans) stop here.
                self.take_result_adjs(&stm.pat);
                Ok(())
            }
            None => Err("a loop whose forward sweep is missing (internal error)".into()),
        }
    }

    fn rev_checkpointed(&mut self, stm: &Stm, restores: &[Restore], kept: &[Kept]) -> R<()> {
        let LoopParts { params, form, .. } = loop_parts(stm)?;
        let LoopForm::For { it, bound, .. } = form else {
            return Err("a checkpointed while loop (internal error)".into());
        };
        let res_adjs = self.take_result_adjs(&stm.pat);
        let sizes = size_params(params);
        // Which parameters have an adjoint.
        let diff: Vec<bool> = params
            .iter()
            .map(|(p, _)| has_adjoint(&p.ty) && !sizes.contains(&p.name))
            .collect();
        let r = self.rename_loop(stm)?;
        let ip = PrimType::Int(*it);
        let last = self.binop(BinOp::Sub(ip), bound.clone(), int_const(*it, 1));
        let ctx = RevCtx {
            stm,
            renamed: &r,
            restores,
            kept,
            it: *it,
            last,
        };

        // The dry run: which free variables does the body contribute to?
        let carried = self.cached_dry_run(&ctx, &diff)?;

        // Initial values of the loop-carried adjoints.
        let saved = self.adjs.clone();
        let mut lparams: Vec<(Param, SubExp)> = vec![];
        let mut pbars: Vec<Option<VName>> = vec![];
        for (k, (p, _)) in params.iter().enumerate() {
            if !diff[k] {
                pbars.push(None);
                continue;
            }
            let ty = outer_type(&p.ty, params);
            let init = match &res_adjs[k] {
                Some((v, owned)) => self.owned_value(v.clone(), *owned, &ty),
                None => self.zeros(&ty)?,
            };
            let prm = self.fresh_param(&format!("{}_adj", p.name.base), ty);
            pbars.push(Some(prm.name.clone()));
            lparams.push((prm, init));
        }
        let mut fparams: Vec<(VName, Carry, VName)> = vec![];
        for (f, carry) in &carried {
            let (ty, init) = match carry {
                Carry::Val => (self.ty_of(f)?, self.take_owned_adj(f)?),
                Carry::Acc => {
                    let c = match self.adjs.get(f) {
                        Some(Adj::Acc(c)) => c.clone(),
                        _ => {
                            let level = self.frames.len();
                            self.ensure_acc_at(level, f)?
                        }
                    };
                    (self.ty_of(&c)?, SubExp::Var(c))
                }
            };
            let prm = self.fresh_param(&format!("{}_adj", f.base), ty);
            fparams.push((f.clone(), *carry, prm.name.clone()));
            lparams.push((prm, init));
        }
        // Inverted parameters, carried backwards from their final values.
        let mut curs = vec![];
        for (((p, _), r), pe) in params.iter().zip(restores).zip(&stm.pat.elems) {
            if let Restore::Inverted(_) = r {
                let prm = self.fresh_param(&format!("{}_inv", p.name.base), p.ty.clone());
                curs.push(prm.name.clone());
                lparams.push((prm, SubExp::Var(pe.name.clone())));
            }
        }

        // The reverse loop.
        let kvar = self.ns.fresh("k");
        self.types
            .insert(kvar.clone(), Type::Prim(PrimType::Int(*it)));
        if let Some(f) = self.frames.last_mut() {
            f.locals.insert(kvar.clone());
        }
        let body = if self.dry_runs > 0 {
            // Inside an enclosing loop's dry run, which discards this code and only compares
            // the adjoints before and after: the loop-carried values pass through unchanged.
            // What the loop does to the enclosing adjoints is set below, from `carried` and
            // `pbars`, exactly as for the full loop (whose body's own changes to `adjs` are
            // dropped by `self.adjs = saved`).
            Body {
                stms: vec![],
                result: lparams
                    .iter()
                    .map(|(p, _)| SubExp::Var(p.name.clone()))
                    .collect(),
            }
        } else {
            self.in_body(|rv| rv.rev_iteration(&ctx, &kvar, &pbars, &fparams, &curs))?
        };
        let pat: Vec<(String, Type)> = lparams
            .iter()
            .map(|(p, _)| (p.name.base.to_string(), p.ty.clone()))
            .collect();
        let outs = self.bind_many(
            pat.iter().map(|(n, t)| (n.as_str(), t.clone())).collect(),
            Exp::Loop {
                params: lparams,
                form: LoopForm::For {
                    i: kvar,
                    it: *it,
                    bound: bound.clone(),
                },
                body,
            },
        );
        // The reverse loop has the loop's location (profiles attribute its kernels to it; the
        // AD report finds its inverted parameters there).
        if let Some(last) = self.stms.last_mut() {
            last.loc = stm.loc.clone();
        }

        // After the loop: the adjoints of the free variables, then of the initial values.
        self.adjs = saved;
        let mut outs = outs.into_iter();
        let pouts: Vec<Option<VName>> = pbars
            .iter()
            .map(|p| p.as_ref().and_then(|_| outs.next()))
            .collect();
        for (f, carry, _) in &fparams {
            let o = outs.next().ok_or("reverse loop results (internal error)")?;
            match carry {
                Carry::Val => self.set_adj(f, SubExp::Var(o), true),
                Carry::Acc => {
                    self.adjs.insert(f.clone(), Adj::Acc(o));
                }
            }
        }
        for ((_, init), o) in params.iter().zip(pouts) {
            if let Some(o) = o {
                self.add_adj_se(init, SubExp::Var(o), true)?;
            }
        }
        Ok(())
    }

    /// `v` as a value that may be updated in place (an array copied when shared).
    fn owned_value(&mut self, v: SubExp, owned: bool, ty: &Type) -> SubExp {
        match (&v, owned, ty) {
            (SubExp::Var(a), false, Type::Array { .. }) => {
                SubExp::Var(self.bind("adj_copy", ty.clone(), Exp::Copy(a.clone())))
            }
            _ => v,
        }
    }

    /// [`Rev::dry_run`], or its earlier result for a loop of the same shape whose free
    /// variables were in the same state ([`Rev::dry_key`]), mapped to this loop's free
    /// variables. Without a key (inverted parameters), or where a changed adjoint is not one of
    /// the loop's free variables, the dry run is not cached. Debug builds check every hit
    /// against a fresh dry run.
    fn cached_dry_run(&mut self, ctx: &RevCtx, diff: &[bool]) -> R<Vec<(VName, Carry)>> {
        let Some((key, frees)) = self.dry_key(ctx) else {
            return self.dry_run(ctx, diff);
        };
        if let Some(hit) = self.dry_cache.get(&key) {
            let carried: Vec<(VName, Carry)> =
                hit.iter().map(|(i, c)| (frees[*i].clone(), *c)).collect();
            if cfg!(debug_assertions) {
                // The check leaves no trace: its names are drawn again, its types forgotten.
                let (next, types) = (self.ns.next, self.types.clone());
                let fresh = self.dry_run(ctx, diff)?;
                (self.ns.next, self.types) = (next, types);
                assert_eq!(carried, fresh, "cached dry run of {key}");
            }
            return Ok(carried);
        }
        let carried = self.dry_run(ctx, diff)?;
        let pos: HashMap<&VName, usize> = frees.iter().enumerate().map(|(i, v)| (v, i)).collect();
        let indexed: Option<Vec<(usize, Carry)>> = carried
            .iter()
            .map(|(v, c)| pos.get(v).map(|i| (*i, *c)))
            .collect();
        if let Some(indexed) = indexed {
            self.dry_cache.insert(key, indexed);
        }
        Ok(carried)
    }

    /// The shape of the loop `ctx.stm` for [`Rev::cached_dry_run`], with its free variables in
    /// order of first use: the loop printed with its bound names and then its free names
    /// renamed canonically, followed by, for each free variable, its type, its adjoint (none, a
    /// value or an accumulator), whether it is a constant of the differentiated function, and
    /// the innermost `map` frame it is bound in; then how each parameter is restored. `None`
    /// for a loop with inverted parameters (their inversion names variables too).
    fn dry_key(&self, ctx: &RevCtx) -> Option<(String, Vec<VName>)> {
        use crate::passes::traverse::{walk_stm, Binders, Rename, Visitor};
        use std::fmt::Write as _;
        struct FirstUses<'b> {
            bound: &'b HashSet<VName>,
            seen: HashSet<VName>,
            order: Vec<VName>,
        }
        impl Visitor for FirstUses<'_> {
            fn use_name(&mut self, v: &mut VName) {
                if !self.bound.contains(v) && self.seen.insert(v.clone()) {
                    self.order.push(v.clone());
                }
            }
        }
        let mut restores = String::new();
        for k in ctx.kept {
            let lp = if k.lp.is_some() { "l" } else { "" };
            let _ = write!(restores, "k{}{lp} ", k.stm);
        }
        for r in ctx.restores {
            restores.push(match r {
                Restore::Saved(_) => 's',
                Restore::Rows(_) => 'r',
                Restore::Init => 'i',
                Restore::Final => 'f',
                Restore::Inverted(_) => return None,
            });
        }
        let mut s = ctx.stm.clone();
        let mut bs = Binders::default();
        walk_stm(&mut bs, &mut s);
        let bound: HashSet<VName> = bs.names.iter().cloned().collect();
        let mut fu = FirstUses {
            bound: &bound,
            seen: HashSet::new(),
            order: vec![],
        };
        walk_stm(&mut fu, &mut s);
        let canon = |base: &str, k: usize| VName {
            id: k as u32,
            base: std::sync::Arc::from(base),
        };
        let mut map: HashMap<VName, VName> = HashMap::new();
        for (k, v) in bs.names.iter().enumerate() {
            map.insert(v.clone(), canon("b", k));
        }
        for (k, v) in fu.order.iter().enumerate() {
            map.insert(v.clone(), canon("f", k));
        }
        walk_stm(&mut Rename { map: &map }, &mut s);
        let mut key = format!("{:?} = {}\n{restores}\n", s.pat, s.exp);
        for v in &fu.order {
            let adj = match self.adjs.get(v) {
                None => 'n',
                Some(Adj::Val { .. }) => 'v',
                Some(Adj::Acc(_)) => 'a',
            };
            let frame = self.frames.iter().rposition(|f| f.locals.contains(v));
            let _ = writeln!(
                key,
                "{:?} {adj} {} {frame:?}",
                self.types.get(v),
                self.outside.contains(v)
            );
        }
        Some((key, fu.order))
    }

    /// Runs the body of the reverse loop once, discarding what it emits, and returns the free
    /// variables whose adjoints it changes (sorted, for determinism), with how to carry them.
    fn dry_run(&mut self, ctx: &RevCtx, diff: &[bool]) -> R<Vec<(VName, Carry)>> {
        let snap_adjs = self.adjs.clone();
        let snap_frames: Vec<Frame> = self
            .frames
            .iter()
            .map(|f| Frame {
                locals: f.locals.clone(),
                accs: f.accs.clone(),
                outer_adjs: f.outer_adjs.clone(),
            })
            .collect();
        let LoopParts { params, .. } = loop_parts(ctx.stm)?;
        let mut pbars = vec![];
        for ((p, _), d) in params.iter().zip(diff) {
            pbars.push(if *d {
                let q = self.fresh_param("dry_adj", p.ty.clone());
                Some(q.name)
            } else {
                None
            });
        }
        let kvar = self.ns.fresh("k");
        self.types
            .insert(kvar.clone(), Type::Prim(PrimType::Int(ctx.it)));
        let curs: Vec<VName> = ctx
            .restores
            .iter()
            .filter(|r| matches!(r, Restore::Inverted(_)))
            .map(|_| self.ns.fresh("dry_inv"))
            .collect();
        self.dry_runs += 1;
        let res = self.in_body(|rv| rv.rev_iteration(ctx, &kvar, &pbars, &[], &curs));
        self.dry_runs -= 1;
        let after = std::mem::replace(&mut self.adjs, snap_adjs);
        self.frames = snap_frames;
        let body = res?;
        let mut inner: HashSet<VName> = bound_in(&body.stms);
        inner.extend(bound_in(std::slice::from_ref(ctx.renamed)));
        let before = &self.adjs;
        let mut changed: Vec<(VName, Carry)> = vec![];
        let keys: HashSet<&VName> = after.keys().chain(before.keys()).collect();
        for k in keys {
            if inner.contains(k) || after.get(k) == before.get(k) {
                continue;
            }
            let carry = match after.get(k) {
                Some(Adj::Acc(_)) => Carry::Acc,
                _ => Carry::Val,
            };
            changed.push((k.clone(), carry));
        }
        changed.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(changed)
    }

    /// One iteration of the reverse loop (into the current body): restore, re-execute, seed,
    /// return sweep. Returns the new loop-carried values: the adjoints of the parameters with
    /// `pbars`, then of `free`, then the entry values of the inverted parameters (whose exit
    /// values are `curs`).
    fn rev_iteration(
        &mut self,
        ctx: &RevCtx,
        kvar: &VName,
        pbars: &[Option<VName>],
        free: &[(VName, Carry, VName)],
        curs: &[VName],
    ) -> R<Vec<SubExp>> {
        let LoopParts { params, form, .. } = loop_parts(ctx.stm)?;
        let LoopParts {
            params: rparams,
            form: rform,
            body: rbody,
        } = loop_parts(ctx.renamed)?;
        let (LoopForm::For { i: oi, .. }, LoopForm::For { i: ri, .. }) = (form, rform) else {
            return Err("a checkpointed while loop (internal error)".into());
        };
        for (f, carry, p) in free {
            match carry {
                Carry::Val => self.set_adj(f, SubExp::Var(p.clone()), true),
                Carry::Acc => {
                    self.adjs.insert(f.clone(), Adj::Acc(p.clone()));
                }
            }
        }
        // i = bound - 1 - k
        let ip = PrimType::Int(ctx.it);
        self.emit(stm_of(
            vec![Param {
                name: ri.clone(),
                ty: Type::Prim(ip),
            }],
            Exp::BinOp(BinOp::Sub(ip), ctx.last.clone(), SubExp::Var(kvar.clone())),
            Attrs::default(),
            None,
        ));
        // Restore the parameters.
        let mut curs = curs.iter();
        let mut entries = vec![];
        let mut rows: Vec<(VName, VName)> = vec![];
        for (((rp, _), (_, init)), (restore, pe)) in rparams
            .iter()
            .zip(params)
            .zip(ctx.restores.iter().zip(&ctx.stm.pat.elems))
        {
            let exp = match restore {
                Restore::Saved(cp) => {
                    Exp::Index(cp.clone(), vec![DimIndex::Fix(SubExp::Var(ri.clone()))])
                }
                Restore::Rows(cp) => {
                    // The row the body reads; the parameter itself is read only by the update
                    // of its row, whose value the return sweep does not need (dead code).
                    let row = self.fresh_param(&format!("{}_row", rp.name.base), rp.ty.row());
                    let at = vec![DimIndex::Fix(SubExp::Var(ri.clone()))];
                    self.emit(stm_of(
                        vec![row.clone()],
                        Exp::Index(cp.clone(), at),
                        Attrs::default(),
                        None,
                    ));
                    rows.push((rp.name.clone(), row.name));
                    let Type::Array { elem, shape } = &rp.ty else {
                        return Err("a row checkpoint of a scalar (internal error)".into());
                    };
                    Exp::Replicate {
                        shape: shape.clone(),
                        value: super::zero_of(*elem),
                    }
                }
                Restore::Init => Exp::SubExp(init.clone()),
                Restore::Final => Exp::SubExp(SubExp::Var(pe.name.clone())),
                Restore::Inverted(inv) => {
                    let cur = curs.next().ok_or("inverted parameters (internal error)")?;
                    // The operands, recomputed (renamed, with this iteration's index).
                    let pre = self.rename_body_subst(
                        &Body {
                            stms: inv.pre.clone(),
                            result: inv.steps.iter().map(|s| s.operand().clone()).collect(),
                        },
                        [(oi.clone(), ri.clone())].into_iter().collect(),
                    );
                    for s in pre.stms {
                        self.emit(s);
                    }
                    let mut y = SubExp::Var(cur.clone());
                    for (step, c) in inv.steps.iter().zip(pre.result) {
                        let step = step.with_operand(c);
                        y = SubExp::Var(self.bind("inv", rp.ty.clone(), step.exp(y)));
                    }
                    entries.push(SubExp::Var(rp.name.clone()));
                    Exp::SubExp(y)
                }
            };
            self.emit(stm_of(vec![rp.clone()], exp, Attrs::default(), None));
        }
        // Re-execute, seed, return sweep. The re-execution's reads of row-checkpointed
        // parameters read the restored rows; the return sweep keeps the reads of the
        // parameters, which add into their adjoints at `[i, …]` in place (it needs no value).
        let mut again = rows_read(rbody, &rows, ri).stms;
        for k in ctx.kept.iter().rev() {
            // Row `i` of the kept results instead of the statement; for a kept loop, also row
            // `i` of its tapes, from which its return sweep starts.
            let s = again.remove(k.stm);
            let row_of = |p: Param, tape: &VName| {
                let at = vec![DimIndex::Fix(SubExp::Var(ri.clone()))];
                stm_of(
                    vec![p],
                    Exp::Index(tape.clone(), at),
                    Attrs::default(),
                    None,
                )
            };
            let mut rows_of: Vec<Stm> = s
                .pat
                .elems
                .iter()
                .zip(&k.tapes)
                .map(|(e, tape)| row_of(e.clone(), tape))
                .collect();
            if let Some(lp) = &k.lp {
                let mut names: HashMap<VName, VName> = HashMap::new();
                let tapes = k.tapes.get(s.pat.elems.len()..).unwrap_or_default();
                for (old, tape) in lp.outs.iter().zip(tapes) {
                    let row = self.fresh_param(&old.base, self.ty_of(tape)?.row());
                    names.insert(old.clone(), row.name.clone());
                    rows_of.push(row_of(row, tape));
                }
                let key = loop_key(&s).ok_or("a kept loop without parameters (internal error)")?;
                let rename = |v: &VName| names.get(v).cloned().unwrap_or_else(|| v.clone());
                let restores = lp
                    .restores
                    .iter()
                    .map(|r| match r {
                        Restore::Saved(cp) => Restore::Saved(rename(cp)),
                        Restore::Rows(cp) => Restore::Rows(rename(cp)),
                        r => r.clone(),
                    })
                    .collect();
                let kept = lp
                    .kept
                    .iter()
                    .map(|k| Kept {
                        tapes: k.tapes.iter().map(rename).collect(),
                        ..k.clone()
                    })
                    .collect();
                self.loop_tapes
                    .insert(key, LoopTape::Checkpointed(restores, kept));
            }
            again.splice(k.stm..k.stm, rows_of);
        }
        self.fwd_stms(&again)?;
        for (res, pb) in rbody.result.iter().zip(pbars) {
            if let Some(pb) = pb {
                self.add_adj_se(res, SubExp::Var(pb.clone()), true)?;
            }
        }
        self.rev_stms(&rbody.stms)?;
        let mut out = vec![];
        for ((rp, _), pb) in rparams.iter().zip(pbars) {
            if pb.is_some() {
                out.push(self.adj_value(&rp.name)?);
            }
        }
        for (f, carry, p) in free {
            match carry {
                Carry::Val => out.push(self.adj_value(f)?),
                Carry::Acc => match self.adjs.get(f) {
                    Some(Adj::Acc(c)) => out.push(SubExp::Var(c.clone())),
                    _ => out.push(SubExp::Var(p.clone())),
                },
            }
        }
        out.extend(entries);
        Ok(out)
    }
}

/// What [`Rev::rev_iteration`] needs to know about the loop.
struct RevCtx<'s> {
    /// The original loop statement.
    stm: &'s Stm,
    /// A fresh copy of it, re-executed by the reverse loop.
    renamed: &'s Stm,
    restores: &'s [Restore],
    kept: &'s [Kept],
    it: IntType,
    /// `bound - 1`: the first iteration the reverse loop runs.
    last: SubExp,
}
