//! Which of a SOAC statement's kernels: the typed identity, with the statement, under which
//! the executor caches a kernel and `vkad spirv` names it.
//!
//! A statement can need several kernels (the passes of a reduction or scan, the two passes
//! of a scatter, one per histogram of a `reduce_by_index`, a segmented operation and the
//! launch combining its pieces); each is generated once per statement, identity and types of
//! the host values it reads.

use crate::codegen::chunked::Phase;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StmKernel {
    /// The statement run as a `map`: one thread per element.
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

impl StmKernel {
    /// Pass `pass` of a reduction or scan, with its phase (what the pass functions return).
    pub(crate) fn pass(pass: u8, phase: Phase) -> (Phase, StmKernel) {
        (phase, StmKernel::Pass { pass, phase })
    }
}

impl fmt::Display for StmKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StmKernel::Map => write!(f, "map"),
            StmKernel::Pass { pass, phase } => write!(f, "pass{pass}-{}", phase.name()),
            StmKernel::Scatter { claim: true } => write!(f, "scatter-claim"),
            StmKernel::Scatter { claim: false } => write!(f, "scatter-write"),
            StmKernel::Columns => write!(f, "columns"),
            StmKernel::Hist(k) => write!(f, "hist{k}"),
            StmKernel::RowPairs { scan: false } => write!(f, "row-pairs-reduce"),
            StmKernel::RowPairs { scan: true } => write!(f, "row-pairs-scan"),
            StmKernel::Segmented => write!(f, "segmented"),
            StmKernel::SegmentedCombine => write!(f, "segmented-combine"),
        }
    }
}
