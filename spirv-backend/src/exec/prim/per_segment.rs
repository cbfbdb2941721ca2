//! A primitive per segment ([`Prim::PerSegment`](super::Prim::PerSegment)): `map (\row ->
//! reduce op ne row) xss` (or `scan`, or a histogram per row). Reductions and scans of few,
//! long rows run as a segmented reduction (scan) with the kernel of
//! [`crate::codegen::segmented`]: a team of threads per row, or several workgroups per row
//! and a second launch combining their partials, as [`strategy`] chooses from the sizes.
//! Otherwise the `map` kernel: a thread per segment running the primitive sequentially.

use super::{PrimKernel, PrimStep};
use crate::codegen;
use crate::codegen::gen::WG;
use crate::codegen::segmented::{
    seg_kernel, segmented_of, strategy, team_for, SegInputs, Strategy,
};
use crate::error::Error;
use crate::exec::{acc, map_scratch, DArr, Exec, HVal, Kernel, E};
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Lambda, SubExp, VName};
use vkad_vk::Buffer;

impl<'a> Exec<'a> {
    /// `lam` (a primitive over rows of `arrs`) over the `w` segments (primitive `p`).
    pub(super) fn per_segment(
        &mut self,
        p: &'a PrimStep,
        w: &'a SubExp,
        arrs: &'a [VName],
        lam: &'a Lambda,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<HVal>> {
        if acc::map_uses_acc(self, arrs, lam) {
            return Err(Error::internal(
                loc,
                "a primitive per segment updating accumulators",
            ));
        }
        if let Some(r) = self.try_segmented(p, arrs, lam, loc)? {
            return Ok(r);
        }
        let n = self.size(w, loc)?;
        // Output shapes (scalar results only).
        let mut outs = Vec::new();
        for t in &lam.ret {
            let e = t
                .elem()
                .ok_or_else(|| Error::unsupported("a `map` returning accumulators", loc))?;
            let mut shape = vec![n];
            for d in t.shape() {
                shape.push(self.size(d, loc)?);
            }
            outs.push(self.alloc(e, shape)?);
        }
        if n == 0 {
            return Ok(outs.into_iter().map(HVal::A).collect());
        }
        let prog = self.prog;
        let lavapipe = self.is_lavapipe();
        let code = self.prim_kernel(p, PrimKernel::Map, &[], |_, ht| {
            codegen::map::map_kernel_on(prog, w, arrs, lam, loc, ht, lavapipe)
        })?;
        let bufs: Vec<Arc<Buffer>> = outs.iter().map(|o| o.buf.clone()).collect();
        if map_scratch::uses_scratch(&code) {
            let key = map_scratch::ScratchKey::Prim(p.id, PrimKernel::Map);
            self.launch_map_scratch(&code, key, &lam.body.stms, n, &bufs, &[], loc)?;
        } else {
            let r = self.launch(&code, &[], &bufs, &[], Self::groups_for(n), loc);
            r?;
        }
        Ok(outs.into_iter().map(HVal::A).collect())
    }

    /// Runs `map (\row -> reduce op ne row) xss` (or `scan`) as a segmented reduction (scan)
    /// when its rows are few and long (see the module); `None` when the map is not of that
    /// form or the plain map kernel suits it better.
    fn try_segmented(
        &mut self,
        p: &'a PrimStep,
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
        let gpu = self.gpu_layout();
        let Strategy::Teams { team, parts } = strategy(rows, len, scan, gpu) else {
            return Ok(None);
        };
        let prog = self.prog;
        let input_names: Vec<VName> = inputs.iter().map(|v| (*v).clone()).collect();
        let sig: Vec<&VName> = inputs.clone();
        let e2 = elems.clone();
        let code = self.prim_kernel(p, PrimKernel::Segmented, &sig, |_, ht| {
            seg_kernel(prog, op, &e2, SegInputs::Host(&input_names), scan, loc, ht)
        })?;
        let shape = if scan { vec![rows, len] } else { vec![rows] };
        let outs: Vec<DArr> = elems
            .iter()
            .map(|&t| self.alloc(t, shape.clone()))
            .collect::<Result<_, _>>()?;
        let bufs: Vec<Arc<Buffer>> = outs.iter().map(|o| o.buf.clone()).collect();
        if parts == 1 {
            self.launch_seg(&code, [rows, len], team, 1, &bufs, &[], loc)?;
        } else {
            // Each row in `parts` pieces, one workgroup each, into `[rows][parts]` partials;
            // then the partials' rows, reduced by teams as wide as they need.
            let partials: Vec<Arc<Buffer>> = elems
                .iter()
                .map(|&t| Ok(self.alloc(t, vec![rows, parts as usize])?.buf))
                .collect::<E<_>>()?;
            self.launch_seg(&code, [rows, len], team, parts, &partials, &[], loc)?;
            let e3 = elems.clone();
            let combine = self.prim_kernel(p, PrimKernel::SegmentedCombine, &sig, |_, ht| {
                seg_kernel(prog, op, &e3, SegInputs::Partials, false, loc, ht)
            })?;
            self.launch_seg(
                &combine,
                [rows, parts as usize],
                team_for(parts as usize) as u32,
                1,
                &bufs,
                &partials,
                loc,
            )?;
        }
        Ok(Some(outs.into_iter().map(HVal::A).collect()))
    }

    /// Launches a [`seg_kernel`] over `rows` rows of `len` elements with `team` threads per
    /// piece of a row and `parts` pieces per row: as many workgroups as hold all pieces (at
    /// most 65535; teams then take several).
    #[allow(clippy::too_many_arguments)]
    fn launch_seg(
        &mut self,
        code: &Arc<Kernel>,
        [rows, len]: [usize; 2],
        team: u32,
        parts: u32,
        outs: &[Arc<Buffer>],
        tmps: &[Arc<Buffer>],
        loc: &Option<SrcLoc>,
    ) -> E<()> {
        let teams = (WG / team) as usize;
        let groups = (rows * parts as usize).div_ceil(teams).clamp(1, 65535) as u32;
        let lits = [rows as u64, len as u64, team as u64, parts as u64];
        self.launch(code, &lits, outs, tmps, groups, loc)
    }
}
