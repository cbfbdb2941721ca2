//! Reductions and scans over arrays of arrays (`[n][m]t`): with a vectorised operator (`map2
//! f` of a scalar `f`) over two-dimensional arrays, one thread per column; otherwise the
//! operator applied to pairs of rows (`super::row_pairs`).

use super::{PrimKernel, PrimStep};
use crate::codegen;
use crate::error::Error;
use crate::exec::{DArr, Exec, HVal, E};
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, SubExp};
use vkad_vk::Buffer;

impl<'a> Exec<'a> {
    /// Reduce/scan of `[n][m]` arrays with a vectorised operator (`map f` of a scalar `f`):
    /// one thread per column.
    pub(super) fn columns(
        &mut self,
        p: &'a PrimStep,
        w: &SubExp,
        arrs: &'a [ir::VName],
        op: &'a ir::Operator,
        scan: bool,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<HVal>> {
        let what = if scan {
            "a scan over arrays of arrays with this operator"
        } else {
            "a reduction over arrays of arrays with this operator"
        };
        // Operators other than `map2 f` (and deeper arrays): the general pairwise passes.
        let Some(vop) = codegen::columns::vectorised_op(op) else {
            return self.row_pairs(p, w, arrs, op, scan, loc);
        };
        if arrs
            .iter()
            .any(|a| self.arr(a, loc).is_ok_and(|d| d.shape.len() != 2))
        {
            return self.row_pairs(p, w, arrs, op, scan, loc);
        }
        let n = self.size(w, loc)?;
        let mut elems = Vec::new();
        let mut m = 0;
        for a in arrs {
            let d = self.arr(a, loc)?;
            if d.shape.len() != 2 {
                return Err(Error::unsupported(what, loc));
            }
            m = d.shape[1];
            elems.push(d.elem);
        }
        if n == 0 && !scan {
            return op.neutral.iter().map(|ne| self.val(ne, loc)).collect();
        }
        let outs: Vec<DArr> = elems
            .iter()
            .map(|&t| self.alloc(t, if scan { vec![n, m] } else { vec![m] }))
            .collect::<E<_>>()?;
        if m > 0 && n > 0 {
            let prog = self.prog;
            let e = elems.clone();
            let sig: Vec<&ir::VName> = arrs.iter().collect();
            let code = self.prim_kernel(p, PrimKernel::Columns, &sig, |_, ht| {
                codegen::columns::column_kernel(prog, op, &vop, arrs, &e, scan, loc, ht)
            })?;
            let bufs: Vec<Arc<Buffer>> = outs.iter().map(|o| o.buf.clone()).collect();
            // At most 32768 rows per launch: lavapipe stops a thread's loops after 65535
            // iterations in total.
            let mut r0 = 0;
            while r0 < n {
                let r1 = (r0 + 32768).min(n);
                self.launch(
                    &code,
                    &[r1 as u64, m as u64, r0 as u64],
                    &bufs,
                    &[],
                    Self::groups_for(m),
                    loc,
                )?;
                r0 = r1;
            }
        }
        Ok(outs.into_iter().map(HVal::A).collect())
    }
}
