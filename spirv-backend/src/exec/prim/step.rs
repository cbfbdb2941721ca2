//! A plan's primitive step: what the runtime's plan (`crate::runtime::plan`) asks the executor
//! to run over materialised arrays, with its kernel identity.

use crate::exec::KernelId;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Attrs, Exp, Lambda, Operator, Pat, Soac, Stm, SubExp, VName};

/// A primitive over arrays in device memory, run by the executor's chunked kernels, bound to
/// `pat`. All its kernels (the passes of a reduction or scan, a scatter's two passes, …) are
/// kept in the executor's caches under `id`.
#[derive(Debug)]
pub struct PrimStep {
    pub id: KernelId,
    pub pat: Pat,
    pub prim: Prim,
    /// The host variables it reads (its arrays and sizes, and those its operators read;
    /// sorted by id), whose types its kernels depend on.
    pub free: Vec<VName>,
    pub loc: Option<SrcLoc>,
}

/// What a [`PrimStep`] computes.
#[derive(Clone, Debug)]
pub enum Prim {
    /// The reduction of the `w` elements of `arrs` by `op`.
    Reduce {
        w: SubExp,
        arrs: Vec<VName>,
        op: Operator,
    },
    /// The inclusive scan of the `w` elements of `arrs` by `op`.
    Scan {
        w: SubExp,
        arrs: Vec<VName>,
        op: Operator,
    },
    /// `reduce_by_index` of the `w` elements of `vals` at `inds` into `dest` (consumed);
    /// `disjoint`: the indices are provably distinct (`vkad_core::passes::hist_disjoint`).
    Hist {
        w: SubExp,
        dest: Vec<VName>,
        op: Operator,
        inds: VName,
        vals: Vec<VName>,
        disjoint: bool,
    },
    /// The writes of `vals` at `inds` (one index array per dimension of `dest`'s written
    /// part) into `dest` (consumed); later writes win.
    Scatter {
        w: SubExp,
        dest: Vec<VName>,
        inds: Vec<VName>,
        vals: Vec<VName>,
    },
    /// One primitive per segment: `lam` (whose body is a reduction, scan or histogram of its
    /// parameters, rows of `arrs`) over the `w` segments, by segmented kernels (a team of
    /// threads per row) or a `map` kernel (a thread per segment).
    PerSegment {
        w: SubExp,
        arrs: Vec<VName>,
        lam: Lambda,
    },
}

impl Prim {
    /// The construct's name, as profiles and kernel names show it (`reduce/pass0-reduce`).
    pub fn label(&self) -> &'static str {
        match self {
            Prim::Reduce { .. } => "reduce",
            Prim::Scan { .. } => "scan",
            Prim::Hist { .. } => "hist",
            Prim::Scatter { .. } => "scatter",
            Prim::PerSegment { .. } => "map",
        }
    }

    /// The primitive as the SOAC it computes (the IR's printer shows it; free variables).
    pub fn as_soac(&self) -> Soac {
        match self.clone() {
            Prim::Reduce { w, arrs, op } => Soac::Reduce { w, arrs, op },
            Prim::Scan { w, arrs, op } => Soac::Scan { w, arrs, op },
            Prim::Hist {
                w,
                dest,
                op,
                inds,
                vals,
                ..
            } => Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            },
            Prim::Scatter {
                w,
                dest,
                inds,
                vals,
            } => Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            },
            Prim::PerSegment { w, arrs, lam } => Soac::Map { w, arrs, lam },
        }
    }
}

impl std::fmt::Display for PrimStep {
    /// `let {pat} = <the primitive as a SOAC>` (the IR's printer; a disjoint histogram with its
    /// `#[disjoint_indices]`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut attrs = Attrs::default();
        if let Prim::Hist { disjoint: true, .. } = self.prim {
            attrs
                .0
                .push(vkad_core::passes::hist_disjoint::DISJOINT_INDICES.into());
        }
        let s = Stm {
            pat: self.pat.clone(),
            exp: Exp::Soac(self.prim.as_soac()),
            attrs,
            loc: self.loc.clone(),
        };
        write!(f, "{s}")
    }
}
