//! Running a host-level `map (\row -> reduce op ne row) xss` (or `scan`) over few long rows as
//! a segmented reduction (scan): one workgroup per row, with the kernel of
//! [`crate::codegen::segmented`].

use super::{DArr, Exec, HVal};
use crate::codegen::gen::WG;
use crate::codegen::segmented::{seg_kernel, segmented_of};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Lambda, Stm, VName};

impl<'a> Exec<'a> {
    /// Runs `map (\row -> reduce op ne row) xss` (or `scan`) as a segmented reduction (scan)
    /// when its rows are few and long (see the module); `None` when the map is not of that
    /// form or the plain map kernel suits it better.
    pub(crate) fn try_segmented(
        &mut self,
        stm: &'a Stm,
        arrs: &'a [VName],
        lam: &'a Lambda,
        loc: &Option<SrcLoc>,
    ) -> crate::error::Result<Option<Vec<HVal>>> {
        let Some((scan, op, inputs)) = segmented_of(arrs, lam) else {
            return Ok(None);
        };
        let mut elems = Vec::with_capacity(inputs.len());
        let mut shape = None;
        for v in &inputs {
            let a: DArr = self.arr(v, loc)?;
            if a.shape.len() != 2 || shape.is_some_and(|s| s != a.shape) {
                return Ok(None);
            }
            shape = Some(a.shape.clone());
            elems.push(a.elem);
        }
        let Some([rows, len]) = shape.as_deref().map(|s| [s[0], s[1]]) else {
            return Ok(None);
        };
        let ret_rank = usize::from(scan);
        if lam.ret.iter().any(|t| t.rank() != ret_rank) || op.neutral.len() != elems.len() {
            return Ok(None);
        }
        // One thread per row keeps the device busy once there are enough rows; a workgroup
        // per row pays off for long rows when there are fewer. On lavapipe, rows that one
        // thread could not even finish (its loop limit) are always segmented.
        let gpu = self.gpu_layout();
        let busy_rows = if gpu { 8192 } else { 64 };
        let too_long = !gpu && len >= crate::codegen::gen::LAVAPIPE_LOOP_LIMIT as usize / 2;
        if rows == 0 || len < 4 * WG as usize || (rows >= busy_rows && !too_long) {
            return Ok(None);
        }
        let prog = self.prog;
        let input_names: Vec<VName> = inputs.iter().map(|v| (*v).clone()).collect();
        let sig: Vec<&VName> = inputs.clone();
        let e2 = elems.clone();
        let code = self.lambda_kernel(stm, 50, &sig, |_, ht| {
            seg_kernel(prog, op, &e2, &input_names, scan, loc, ht)
        })?;
        let shape = if scan { vec![rows, len] } else { vec![rows] };
        let outs: Vec<DArr> = elems
            .iter()
            .map(|&t| self.alloc(t, shape.clone()))
            .collect::<Result<_, _>>()?;
        let bufs: Vec<std::sync::Arc<vkad_vk::Buffer>> =
            outs.iter().map(|o| o.buf.clone()).collect();
        let groups = rows.min(65535) as u32;
        self.launch(&code, &[rows as u64, len as u64], &bufs, &[], groups, loc)?;
        Ok(Some(outs.into_iter().map(HVal::A).collect()))
    }
}
