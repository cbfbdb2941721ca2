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
    /// The pipelines made from `words` so far.
    pub pipelines: Pipelines,
}

impl KernelCode {
    /// The pipeline of this kernel on `ctx` with `bindings` descriptor bindings: made by
    /// [`vkad_vk::Context::kernel`] on first use, then found here, so that a launch does not
    /// copy and hash the whole module again to find it in the context's cache.
    pub fn pipeline(
        &self,
        ctx: &vkad_vk::Context,
        bindings: u32,
    ) -> Result<vkad_vk::Kernel, vkad_vk::VkError> {
        let mut made = self.pipelines.0.lock().unwrap_or_else(|p| p.into_inner());
        let id = ctx.id();
        if let Some((_, _, k)) = made.iter().find(|(c, b, _)| *c == id && *b == bindings) {
            return Ok(k.clone());
        }
        let k = ctx.kernel("vkad", &self.words, "main", bindings, 4)?;
        made.push((id, bindings, k.clone()));
        Ok(k)
    }
}

/// The pipelines made from a [`KernelCode`], by context ([`vkad_vk::Context::id`]) and number
/// of bindings. A pipeline keeps its device alive, so holding one here is safe after its
/// context is gone; a context's ids are never reused.
#[derive(Default)]
pub struct Pipelines(std::sync::Mutex<Vec<(u64, u32, vkad_vk::Kernel)>>);

impl Clone for Pipelines {
    fn clone(&self) -> Pipelines {
        let made = self.0.lock().unwrap_or_else(|p| p.into_inner());
        Pipelines(std::sync::Mutex::new(made.clone()))
    }
}

impl std::fmt::Debug for Pipelines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|m| m.len()).unwrap_or(0);
        write!(f, "Pipelines({n})")
    }
}
