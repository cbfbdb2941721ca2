//! A reduction of one-dimensional arrays of scalars (or tuples of them): pass 1 computes one
//! partial per workgroup (up to 2^17 elements) or per thread (more, where that saves the
//! workgroup combination; the strided layout of a GPU for commutative operators), pass 2
//! reduces the partials in one workgroup ([`super::reduce_passes`]); where pass 1 runs in one
//! workgroup (up to 256 elements, or 8192 for a commutative operator on a GPU), its single
//! partial is the result and pass 2 is not launched.

use super::{chunking, reduce_passes, strided_chunking, tuple_too_big, PrimStep};
use crate::codegen::chunked::{self, Io};
use crate::codegen::gen::WG;
use crate::codegen::operator;
use crate::codegen::BindSrc;
use crate::exec::{DArr, Exec, HVal, E};
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Operator, SubExp, VName};
use vkad_vk::Buffer;

impl<'a> Exec<'a> {
    /// The reduction of the `w` elements of `arrs` by `op` (primitive `p`).
    pub(super) fn reduce(
        &mut self,
        p: &'a PrimStep,
        w: &SubExp,
        arrs: &'a [VName],
        op: &'a Operator,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<HVal>> {
        let n = self.size(w, loc)?;
        let (elems, ios) = self.scalar_inputs(arrs, "a reduction over arrays of arrays", loc)?;
        if n == 0 {
            return op.neutral.iter().map(|ne| self.val(ne, loc)).collect();
        }
        // Pass 1: one partial per workgroup (n <= 2^17) or per thread (larger n, where
        // it saves the workgroup combination); pass 2: one workgroup reduces them.
        let big = tuple_too_big(&elems);
        let strided = self.gpu_layout() && !big && operator::commutative(op);
        let (groups, chunk, per_thread) = if strided {
            strided_chunking(n)
        } else {
            chunking(n, big, self.gpu_layout())
        };
        let [(phase1, kind1), (phase2, kind2)] =
            reduce_passes(self.gpu_layout(), big, strided, per_thread);
        let threads = if per_thread {
            groups * WG as usize
        } else {
            groups
        };
        let tmp: Vec<DArr> = elems
            .iter()
            .map(|&t| self.alloc(t, vec![threads]))
            .collect::<E<_>>()?;
        let k = elems.len();
        let outs_io: Vec<Io> = (0..k)
            .map(|i| Io {
                src: BindSrc::Out(i),
                off: None,
            })
            .collect();
        let prog = self.prog;
        let e2 = elems.clone();
        let code1 = self.prim_kernel(
            p,
            kind1,
            arrs.iter().collect::<Vec<_>>().as_slice(),
            |_, ht| chunked::chunked(prog, op, &e2, &ios, &outs_io, &[], phase1, loc, ht),
        )?;
        let tbufs: Vec<Arc<Buffer>> = tmp.iter().map(|o| o.buf.clone()).collect();
        self.launch(
            &code1,
            &[n as u64, chunk as u64],
            &tbufs,
            &[],
            groups as u32,
            loc,
        )?;
        let ins2: Vec<Io> = (0..k)
            .map(|i| Io {
                src: BindSrc::Tmp(i),
                off: None,
            })
            .collect();
        let e3 = elems.clone();
        // Pass 2 without shared memory (`big`): thread 0 folds all partials.
        let chunk2 = if big {
            threads
        } else {
            threads.div_ceil(WG as usize)
        };
        let code2 = self.prim_kernel(p, kind2, &[], |_, ht| {
            chunked::chunked(prog, op, &e3, &ins2, &outs_io, &[], phase2, loc, ht)
        })?;
        // One partial (a single workgroup's): it is the result, and pass 2 is not launched
        // (only made ready for larger inputs).
        if threads == 1 {
            self.prepare(&code2);
            return tmp
                .iter()
                .map(|t| Ok(HVal::P(self.read_elem(t, 0)?)))
                .collect();
        }
        // (With `big`, pass 2 writes one value per thread of its workgroup.)
        let res: Vec<DArr> = elems
            .iter()
            .map(|&t| self.alloc(t, vec![if big { WG as usize } else { 1 }]))
            .collect::<E<_>>()?;
        let rbufs: Vec<Arc<Buffer>> = res.iter().map(|o| o.buf.clone()).collect();
        self.launch(
            &code2,
            &[threads as u64, chunk2 as u64],
            &rbufs,
            &tbufs,
            1,
            loc,
        )?;
        res.iter()
            .map(|r| Ok(HVal::P(self.read_elem(r, 0)?)))
            .collect()
    }
}
