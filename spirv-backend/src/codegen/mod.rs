//! Kernels generated from the kernel IR ([`vkad_core::seg`]): SPIR-V modules and their argument
//! layouts ([`KernelCode`]), made without inputs and without a device.
//!
//! One module per construct:
//! - [`map`]: a segmented map (`segmap`) over a space of any rank: one thread per point (a
//!   grid-stride loop over the flattened space), the per-thread code compiled by
//!   [`thread::KCtx`] (scalar code, indexing, `if`, `loop`, inner SOACs run
//!   sequentially, per-thread arrays in scratch memory, accumulator updates as atomics).
//!
//! Reductions, scans, histograms and scatters of the kernel IR are planned by
//! [`crate::runtime`] as a `segmap` that computes their operands followed by the chunked
//! primitive kernels of [`crate::prims`] and [`crate::segmented`] over those operands.

pub(crate) mod acc;
pub(crate) mod chunked;
pub(crate) mod columns;
pub(crate) mod copy;
pub(crate) mod f64math;
pub(crate) mod gen;
pub(crate) mod hist;
pub(crate) mod ieee;
pub(crate) mod layout;
pub mod map;
pub(crate) mod module;
pub(crate) mod operator;
pub(crate) mod red;
pub(crate) mod scalar;
pub(crate) mod scan;
pub(crate) mod scatter;
pub(crate) mod scratch;
pub(crate) mod segmented;
pub(crate) mod sort;
#[cfg(test)]
mod tests;
pub(crate) mod thread;

pub(crate) use layout::{ArgSrc, BindSrc, HostTy, KernelCode};
