//! An inclusive scan of one-dimensional arrays of scalars (or tuples of them): pass 1 computes
//! one partial per workgroup (few elements) or per thread (many), pass 2 scans the partials in
//! one workgroup, pass 3 scans each workgroup's (or thread's) chunk from its prefix, reading
//! each element once ([`super::scan_passes`]; a GPU's last pass is tiled where it fits).
//! Where one workgroup holds every element (up to 256 elements), pass 3 alone scans them
//! (passes 1 and 2 are not launched).

use super::{chunking, scan_passes, tiled_scan_fits, tuple_too_big, PrimStep};
use crate::codegen::chunked::{self, Io};
use crate::codegen::gen::WG;
use crate::codegen::operator;
use crate::codegen::BindSrc;
use crate::exec::{DArr, Exec, HVal, E};
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, Operator, SubExp, VName};
use vkad_vk::Buffer;

impl<'a> Exec<'a> {
    /// The inclusive scan of the `w` elements of `arrs` by `op` (primitive `p`).
    pub(super) fn scan(
        &mut self,
        p: &'a PrimStep,
        w: &SubExp,
        arrs: &'a [VName],
        op: &'a Operator,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<HVal>> {
        let n = self.size(w, loc)?;
        let (elems, ios) = self.scalar_inputs(arrs, "a scan over arrays of arrays", loc)?;
        let outs: Vec<DArr> = elems
            .iter()
            .map(|&t| self.alloc(t, vec![n]))
            .collect::<E<_>>()?;
        if n == 0 {
            return Ok(outs.into_iter().map(HVal::A).collect());
        }
        let k = elems.len();
        // Pass 1: one partial per workgroup (small n) or per thread (large n); pass 2:
        // one workgroup scans them; pass 3: each workgroup (or thread) scans its chunk
        // from the partials' prefix, reading each element once.
        let big = tuple_too_big(&elems);
        let (groups, chunk, per_thread) = chunking(n, big, self.gpu_layout());
        let tiled = chunk == crate::codegen::scan::TILE_CHUNK && tiled_scan_fits(self.ctx, &elems);
        let [(phase1, kind1), (phase2, kind2), (phase3, kind3)] = scan_passes(
            self.gpu_layout(),
            big,
            per_thread,
            tiled,
            operator::commutative(op),
        );
        let threads = if per_thread {
            groups * WG as usize
        } else {
            groups
        };
        let part: Vec<DArr> = elems
            .iter()
            .map(|&t| self.alloc(t, vec![threads]))
            .collect::<E<_>>()?;
        let pscan: Vec<DArr> = elems
            .iter()
            .map(|&t| self.alloc(t, vec![threads]))
            .collect::<E<_>>()?;
        let prog = self.prog;
        let outs_io: Vec<Io> = (0..k)
            .map(|i| Io {
                src: BindSrc::Out(i),
                off: None,
            })
            .collect();
        let tmp_io: Vec<Io> = (0..k)
            .map(|i| Io {
                src: BindSrc::Tmp(i),
                off: None,
            })
            .collect();
        let pre_io: Vec<Io> = (0..k)
            .map(|i| Io {
                src: BindSrc::Tmp(k + i),
                off: None,
            })
            .collect();
        let arr_refs: Vec<&ir::VName> = arrs.iter().collect();
        let pb: Vec<Arc<Buffer>> = part.iter().map(|o| o.buf.clone()).collect();
        let sb: Vec<Arc<Buffer>> = pscan.iter().map(|o| o.buf.clone()).collect();
        let e = elems.clone();
        let c1 = self.prim_kernel(p, kind1, &arr_refs, |_, ht| {
            chunked::chunked(prog, op, &e, &ios, &outs_io, &[], phase1, loc, ht)
        })?;
        let e = elems.clone();
        let c2 = self.prim_kernel(p, kind2, &[], |_, ht| {
            chunked::chunked(prog, op, &e, &tmp_io, &outs_io, &[], phase2, loc, ht)
        })?;
        if threads > 1 {
            self.launch(&c1, &[n as u64, chunk as u64], &pb, &[], groups as u32, loc)?;
            // Pass 2 without shared memory (`big`): thread 0 scans all partials.
            let chunk2 = if big {
                threads as u64
            } else {
                threads.div_ceil(WG as usize) as u64
            };
            self.launch(&c2, &[threads as u64, chunk2], &sb, &pb, 1, loc)?;
        } else {
            // One workgroup: pass 3 alone scans everything (the first workgroup reads no
            // prefix); passes 1 and 2 are only made ready for larger inputs.
            self.prepare(&c1);
            self.prepare(&c2);
        }
        let e = elems.clone();
        let c3 = self.prim_kernel(p, kind3, &arr_refs, |_, ht| {
            chunked::chunked(prog, op, &e, &ios, &outs_io, &pre_io, phase3, loc, ht)
        })?;
        let ob: Vec<Arc<Buffer>> = outs.iter().map(|o| o.buf.clone()).collect();
        let mut tmps: Vec<Arc<Buffer>> = pb.clone();
        tmps.extend(sb.iter().cloned());
        self.launch(
            &c3,
            &[n as u64, chunk as u64],
            &ob,
            &tmps,
            groups as u32,
            loc,
        )?;
        Ok(outs.into_iter().map(HVal::A).collect())
    }
}
