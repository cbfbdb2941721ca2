//! What a generated kernel is: its SPIR-V module ([`KernelCode::words`]) and its argument
//! layout, i.e. where the host takes each argument word ([`ArgSrc`]) and each array binding
//! ([`BindSrc`]) from when it launches the kernel, plus the types of the host values a kernel
//! was made for ([`HostTy`]).

use crate::codegen::gen::ErrorSite;
use vkad_core::ir::{SubExp, VName};
use vkad_core::prim::PrimType;

/// Where a kernel argument word comes from (resolved by the host at launch).
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSrc {
    /// A scalar operand (constant or host scalar variable).
    Sub(SubExp),
    /// The element offset of a host array.
    Off(VName),
    /// Dimension `k` of a host array.
    Dim(VName, usize),
    /// Launch-time literal `i` (sizes the host computes).
    Lit(usize),
    /// The element offset of array `m` of a host accumulator.
    AccOff(VName, usize),
    /// Dimension `k` of array `m` of a host accumulator.
    AccDim(VName, usize, usize),
}

/// Where a binding (from 2 on) comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum BindSrc {
    Var(VName),
    /// Output `k` of the kernel (allocated by the host).
    Out(usize),
    /// A temporary buffer `k` the host allocates (of the size the kernel kind says).
    Tmp(usize),
    /// Array `m` of a host accumulator.
    AccArr(VName, usize),
}

/// The type of a host value, as a kernel needs it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HostTy {
    Prim(PrimType),
    Arr(PrimType, usize),
    /// An accumulator: its arrays' element types and ranks, its index rank, and (only to tell
    /// kernels apart) the address of its operator (0 without one).
    Acc {
        elems: Vec<PrimType>,
        ranks: Vec<usize>,
        rank: usize,
        op: usize,
    },
}

/// A kernel made from IR, with how to launch it.
#[derive(Clone, Debug)]
pub struct KernelCode {
    pub words: Vec<u32>,
    pub args: Vec<ArgSrc>,
    pub binds: Vec<BindSrc>,
    pub errors: Vec<ErrorSite>,
    pub uses_f64: bool,
}
