//! The Vulkan backend's own pass pipeline, run on the SOAC IR before flattening
//! ([`crate::runtime::DeviceProgram::new`]):
//! - accumulators that only maps update become histograms (`passes::acc_to_hist`);
//! - vectorised histograms become histograms of scalars (`passes::hist_flatten`);
//! - histograms whose indices are provably distinct are marked for plain read-modify-writes
//!   (`passes::hist_disjoint`);
//! - scans and reductions over tuples of scalars and rows become scans of columns
//!   (`passes::scan_columns`);
//! - histograms whose operator mixes tuple components (no atomics for those) run by sorting
//!   (`passes::hist_sort`);
//! - sorts run as radix sort kernels at host level, and inside parallel operators (and
//!   everywhere on devices with too little shared memory for those kernels) as loops of SOACs
//!   (`passes::sort_lower`).

use crate::codegen::operator::split_operator;
use vkad_core::ir::{self, Body, Exp, Soac};
use vkad_core::passes;
use vkad_vk::DeviceInfo;

/// `prog` rewritten for the Vulkan backend on a device described by `info`; `None` when no
/// pass applies.
pub fn vulkan_passes(prog: &ir::Program, info: &DeviceInfo) -> Option<ir::Program> {
    let mut rewritten = None;
    if any_exp(prog, &|e| {
        matches!(e, Exp::WithAcc { .. } | Exp::Soac(Soac::Hist { .. })) || row_scan(e)
    }) {
        let p = passes::acc_to_hist::acc_to_hist(prog.clone());
        let p = passes::hist_flatten::hist_flatten(p);
        let p = passes::hist_disjoint::hist_disjoint(p);
        let p = passes::scan_columns::scan_columns_where(p, &|op| row_and_scalar(op));
        rewritten = Some(passes::hist_sort::hist_sort(p, &|op| {
            op.lam.ret.len() > 1 && split_operator(op).is_none()
        }));
    }
    let cur = rewritten.as_ref().unwrap_or(prog);
    if any_exp(cur, &|e| matches!(e, Exp::SortByKey { .. })) {
        let everywhere = (info.max_shared_memory as usize) < crate::codegen::sort::SHARED_BYTES;
        rewritten = Some(passes::sort_lower::sort_lower(cur.clone(), everywhere));
    }
    rewritten
}

/// Whether any expression of `prog` (nested ones included) satisfies `f`.
fn any_exp(prog: &ir::Program, f: &dyn Fn(&Exp) -> bool) -> bool {
    fn body(b: &Body, f: &dyn Fn(&Exp) -> bool) -> bool {
        b.stms.iter().any(|s| {
            f(&s.exp)
                || match &s.exp {
                    Exp::If { then_b, else_b, .. } => body(then_b, f) || body(else_b, f),
                    Exp::Loop { body: lb, .. } => body(lb, f),
                    Exp::WithAcc { lam, .. } | Exp::Soac(Soac::Map { lam, .. }) => {
                        body(&lam.body, f)
                    }
                    Exp::Soac(
                        Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. },
                    ) => body(&op.lam.body, f),
                    _ => false,
                }
        })
    }
    prog.funs.iter().any(|fd| body(&fd.body, f))
}

/// A `scan`/`reduce` over tuples of scalars and rows (AD's segmented scans of vectorised
/// histograms; `passes::scan_columns` makes them scans of columns).
fn row_scan(e: &Exp) -> bool {
    matches!(e, Exp::Soac(Soac::Scan { op, .. } | Soac::Reduce { op, .. }) if row_and_scalar(op))
}

fn row_and_scalar(op: &ir::Operator) -> bool {
    let k = op.neutral.len();
    let ranks: Vec<usize> = op.lam.params.iter().take(k).map(|p| p.ty.rank()).collect();
    ranks.contains(&0) && ranks.contains(&1)
}
