//! `sort_by_key` on the device: the passes of the radix sort of [`crate::codegen::sort`], three
//! kernels each.

use super::{DArr, Exec};
use crate::codegen::sort::{count, passes, scan, scatter, BUCKETS, SHARED_BYTES, TILE};
use crate::error::Error;
use vkad_core::diag::SrcLoc;
use vkad_core::prim::PrimType;

impl Exec<'_> {
    /// `sort_by_key(bits, keys)`: the sorted keys and the permutation, by one pass of the three
    /// kernels per [`DIGIT_BITS`](crate::codegen::sort::DIGIT_BITS) bits (at least one pass,
    /// which also makes the identity permutation when there are no bits to sort by).
    pub(crate) fn sort_by_key(
        &mut self,
        keys: &DArr,
        bits: i64,
        loc: &Option<SrcLoc>,
    ) -> crate::error::Result<(DArr, DArr)> {
        let n = keys.shape.iter().product::<usize>();
        let out = [
            self.alloc(PrimType::I64, vec![n])?,
            self.alloc(PrimType::I64, vec![n])?,
            self.alloc(PrimType::I64, vec![n])?,
            self.alloc(PrimType::I64, vec![n])?,
        ];
        if n == 0 {
            let [k, p, _, _] = out;
            return Ok((k, p));
        }
        let need = SHARED_BYTES as u32;
        if self.ctx.info().max_shared_memory < need {
            return Err(Error::bug(format!(
                "sort_by_key needs {need} bytes of shared memory (the backend \
                 should have lowered it to SOACs)"
            )));
        }
        let tiles = n.div_ceil(TILE as usize);
        let groups = tiles.min(65535) as u32;
        let counts = self.alloc(PrimType::I32, vec![BUCKETS as usize * tiles])?;
        let c_count = self.builtin("sort count".into(), count)?;
        let c_scan = self.builtin("sort scan".into(), scan)?;
        let c_scatter = self.builtin("sort scatter".into(), scatter)?;
        let mut ps = passes(bits);
        if ps.is_empty() {
            ps.push((0, 0));
        }
        let (mut src_k, mut src_p, mut koff) = (keys.buf.clone(), out[3].buf.clone(), keys.off);
        for (i, &(shift, mask)) in ps.iter().enumerate() {
            let (dk, dp) = if i % 2 == 0 {
                (&out[0], &out[1])
            } else {
                (&out[2], &out[3])
            };
            let lits = [n as u64, koff as u64, shift, mask, tiles as u64];
            self.launch(
                &c_count,
                &lits,
                &[],
                &[src_k.clone(), counts.buf.clone()],
                groups,
                loc,
            )?;
            self.launch(
                &c_scan,
                &[BUCKETS as u64 * tiles as u64],
                &[],
                std::slice::from_ref(&counts.buf),
                1,
                loc,
            )?;
            let lits = [
                n as u64,
                koff as u64,
                shift,
                mask,
                tiles as u64,
                u64::from(i == 0),
            ];
            self.launch(
                &c_scatter,
                &lits,
                &[],
                &[
                    src_k.clone(),
                    src_p.clone(),
                    counts.buf.clone(),
                    dk.buf.clone(),
                    dp.buf.clone(),
                ],
                groups,
                loc,
            )?;
            (src_k, src_p, koff) = (dk.buf.clone(), dp.buf.clone(), 0);
        }
        let [a, b, c, d] = out;
        Ok(if ps.len() % 2 == 1 { (a, b) } else { (c, d) })
    }
}
