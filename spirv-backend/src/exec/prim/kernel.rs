//! Which of a primitive's kernels: the typed identity, with the primitive's
//! [`KernelId`](crate::exec::KernelId), under which the executor caches a kernel and `vkad
//! spirv` names it.
//!
//! A primitive can need several kernels (the passes of a reduction or scan, the two passes
//! of a scatter, one per histogram of a `reduce_by_index`, a segmented operation and the
//! launch combining its pieces); each is generated once per primitive, identity and types of
//! the host values it reads.

use crate::codegen::chunked::Phase;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PrimKernel {
    /// A primitive per segment run as a `map`: one thread per segment.
    Map,
    /// Pass `pass` (from 0) of a one-dimensional reduction or scan, in `phase`
    /// ([`super::reduce_passes`], [`super::scan_passes`]).
    Pass { pass: u8, phase: Phase },
    /// The pass of a `scatter` that claims each destination index for its last writer
    /// (`claim`), or the pass that writes.
    Scatter { claim: bool },
    /// The column kernel of a reduction or scan over arrays of arrays with a vectorised
    /// operator.
    Columns,
    /// The kernel of the `k`th histogram of a `reduce_by_index`.
    Hist(usize),
    /// One pass of a reduction (or scan) over arrays of arrays by an operator that is not
    /// vectorised: the operator applied to pairs of rows.
    RowPairs { scan: bool },
    /// A segmented reduction or scan of rows.
    Segmented,
    /// The launch combining the partials of the pieces of each row of a segmented reduction.
    SegmentedCombine,
}

impl PrimKernel {
    /// Pass `pass` of a reduction or scan, with its phase (what the pass functions return).
    pub(crate) fn pass(pass: u8, phase: Phase) -> (Phase, PrimKernel) {
        (phase, PrimKernel::Pass { pass, phase })
    }
}

impl fmt::Display for PrimKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrimKernel::Map => write!(f, "map"),
            PrimKernel::Pass { pass, phase } => write!(f, "pass{pass}-{}", phase.name()),
            PrimKernel::Scatter { claim: true } => write!(f, "scatter-claim"),
            PrimKernel::Scatter { claim: false } => write!(f, "scatter-write"),
            PrimKernel::Columns => write!(f, "columns"),
            PrimKernel::Hist(k) => write!(f, "hist{k}"),
            PrimKernel::RowPairs { scan: false } => write!(f, "row-pairs-reduce"),
            PrimKernel::RowPairs { scan: true } => write!(f, "row-pairs-scan"),
            PrimKernel::Segmented => write!(f, "segmented"),
            PrimKernel::SegmentedCombine => write!(f, "segmented-combine"),
        }
    }
}
