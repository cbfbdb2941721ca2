//! SPIR-V generation: turns an operation into a SPIR-V module with its argument layout
//! ([`KernelCode`]: where the host takes each argument word and array binding from), without
//! inputs and without a device. Nothing here knows of `vkad-vk` or of the executor: the facts
//! of a device a kernel depends on are parameters (the addressing of arrays, [`gen::Addressing`];
//! lavapipe's loop limit; the atomics of `acc::AccKernel`) and the host decides which kernels
//! to make and launches them (`crate::exec`, [`crate::runtime`]).
//!
//! One module per construct:
//! - [`map`]: a segmented map (`segmap`) over a space of any rank, and the `map` of a lambda
//!   (a primitive per segment, an operator on pairs of rows): one thread per point (a
//!   grid-stride loop over the flattened space);
//! - `copy`: strided copies and fills, `iota`;
//! - `chunked`: the chunked reduction/scan kernel (its shared part, [`chunked::Phase`]), with
//!   `red` and `scan` (the reduce- and scan-only phases) and `fold` (the folds and workgroup
//!   trees they and `segmented` share);
//! - `columns`: reductions and scans over arrays of arrays with a vectorised operator, one
//!   thread per column;
//! - `hist` (`reduce_by_index`), `scatter`, `segmented` (a reduction or scan per row, a
//!   workgroup per row), `sort` (the passes of the radix sort);
//! - `module`: a generated module as `vkad spirv` exports it.
//!
//! The per-thread code of every kernel is compiled by [`thread::KCtx`] (scalar code, indexing,
//! `if`, `loop`, inlined calls, inner SOACs run sequentially, lazy arrays), with per-thread
//! arrays in scratch memory (`scratch`) and accumulator updates (`acc`, whose updates of one
//! element by a whole subgroup are combined first, `subgroup`, where `variance` finds the
//! index the same in every thread). Below it: the module
//! builder `gen`, scalar operations with the interpreter's semantics (`scalar`), IEEE float
//! semantics (`ieee`) and the `f32` and `f64` transcendental functions (`f32math`,
//! `f64math`); `operator` holds what generators need to know of an operator.
//!
//! Reductions, scans, histograms and scatters of the kernel IR are planned by
//! [`crate::runtime`] as a `segmap` that computes their operands followed by these primitive
//! kernels over those operands.

pub(crate) mod acc;
pub(crate) mod chunked;
pub(crate) mod columns;
pub(crate) mod copy;
pub(crate) mod f32math;
pub(crate) mod f64math;
pub(crate) mod fold;
pub(crate) mod gen;
pub(crate) mod group;
pub(crate) mod hist;
pub(crate) mod ieee;
pub(crate) mod layout;
pub(crate) mod loop_limit;
pub mod map;
pub(crate) mod module;
pub(crate) mod operator;
pub(crate) mod red;
pub(crate) mod reuse;
pub(crate) mod scalar;
pub(crate) mod scan;
pub(crate) mod scatter;
pub(crate) mod scratch;
pub(crate) mod segmented;
pub(crate) mod sort;
pub(crate) mod subgroup;
#[cfg(test)]
mod tests;
pub(crate) mod thread;
pub(crate) mod variance;

pub(crate) use layout::{ArgSrc, BindSrc, HostTy, KernelCode};
