//! Launching `map` kernels that use per-thread scratch memory (see `codegen::scratch`): the host
//! picks a per-thread capacity (the last one that sufficed for this kernel, else an estimate
//! from the sizes it knows), limits the number of threads so the buffers stay within
//! [`SCRATCH_BUDGET`], and launches again with more when a thread reports that it overflowed.

use super::{Exec, HVal, E};
use crate::codegen::gen::WG;
use crate::codegen::{BindSrc, KernelCode};
use crate::error::Error;
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, Body, Exp, Soac, SubExp, Type};
use vkad_vk::Buffer;

/// Bytes of scratch memory (both buffers) a launch aims to stay within.
pub const SCRATCH_BUDGET: u64 = 256 << 20;

/// Launches at most this many times before giving up.
const MAX_TRIES: usize = 12;

/// What a scratch capacity is remembered by: a kernel of a plan's primitive (the primitive and
/// which of its kernels) or a `segmap` kernel of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScratchKey {
    Prim(super::KernelId, super::PrimKernel),
    Kernel(super::KernelId),
}

/// Whether a kernel uses scratch memory.
pub fn uses_scratch(code: &KernelCode) -> bool {
    code.binds.iter().any(|b| matches!(b, BindSrc::Tmp(_)))
}

impl<'a> Exec<'a> {
    /// Whether the device is lavapipe (which stops loops after 65535 iterations per thread).
    pub(crate) fn is_lavapipe(&self) -> bool {
        crate::exec::lavapipe_device(self.ctx)
    }

    /// Launches the `map` kernel `code` over `n` rows with scratch memory.
    #[allow(clippy::too_many_arguments)] // the map's kernel, sizes, outputs and accumulators
    pub(crate) fn launch_map_scratch(
        &mut self,
        code: &Arc<super::Kernel>,
        key: ScratchKey,
        stms: &[ir::Stm],
        n: usize,
        outs: &[Arc<Buffer>],
        accs: &[super::DArr],
        loc: &Option<SrcLoc>,
    ) -> E<()> {
        let mut caps = match self.kernels.scratch_caps.get(&key) {
            Some(&c) => c,
            None => {
                let mut c = [0u64; 2];
                self.estimate_stms(stms, &mut c, 0);
                c
            }
        };
        let info = self.ctx.info();
        // Each buffer must be bindable (and indexable with 32-bit indices).
        let range = match info.max_storage_buffer_range {
            0 => SCRATCH_BUDGET,
            r => r.min(SCRATCH_BUDGET).min(u32::MAX as u64),
        };
        let alloc_max = match info.max_allocation {
            0 => SCRATCH_BUDGET,
            m => m.min(SCRATCH_BUDGET),
        };
        // Rows are launched in chunks of one row per thread (lavapipe limits the loop
        // iterations of a thread, and a chunk is what an overflow makes run again).
        let mut r0 = 0usize;
        let mut tries = 0;
        while r0 < n {
            let per_thread = caps[0] * 4 + caps[1] * 8;
            let wg = WG as u64;
            let widest = (caps[0] * 4).max(caps[1] * 8).max(1);
            let max_threads = (alloc_max / per_thread.max(1)).min(range / widest);
            if max_threads == 0 {
                return Err(Error::NotSupported {
                    what: format!(
                        "{per_thread} bytes of per-thread arrays in a `map` (the limit per buffer is {range} bytes)"
                    ),
                    loc: loc.clone(),
                    device: Some(info.name.clone()),
                });
            }
            // Threads beyond `threads` (in the last workgroup) have no rows and no scratch.
            let threads = ((n - r0) as u64).min(max_threads).min(65535 * wg);
            let groups = threads.div_ceil(wg) as u32;
            let r1 = r0 as u64 + threads;
            let s32 = self.scratch_buffer(threads * caps[0] * 4)?;
            let s64 = self.scratch_buffer(threads * caps[1] * 8)?;
            let need = self.scratch_buffer(8)?;
            self.ctx.upload(&need, 0, &[0u8; 8])?;
            let lits = [caps[0], caps[1], r0 as u64, r1, threads];
            // Accumulators the kernel updates: kept, to undo a run that must be repeated (in
            // the copies a one-thread version around it has just taken, where it has).
            let backups = self.undo_copies(accs, loc)?;
            let tmps = [need.clone(), s32, s64];
            // The need buffer is read right after the launch: its batch is submitted now (a
            // kernel error of an overflowing thread is meaningless and dropped below).
            let r = self
                .launch(code, &lits, outs, &tmps, groups, loc)
                .and_then(|_| self.flush());
            // A thread the loop limiter stopped reports no meaningful need: the cut is the
            // result (the caller may run another version).
            if let Err(e @ Error::LoopLimit { .. }) = r {
                return Err(e);
            }
            let bytes = self.ctx.download(&need, 0, 8)?;
            let word = |i: usize| {
                u32::from_le_bytes([
                    bytes[4 * i],
                    bytes[4 * i + 1],
                    bytes[4 * i + 2],
                    bytes[4 * i + 3],
                ]) as u64
            };
            let got = [word(0), word(1)];
            if got[0] > caps[0] || got[1] > caps[1] {
                // Some thread ran out: its results (and errors) are meaningless. Grow and run
                // this chunk again (with the accumulators as they were).
                self.restore(&backups, loc)?;
                tries += 1;
                if tries > MAX_TRIES {
                    return Err(super::Error::internal(
                        loc,
                        "per-thread memory of a `map` kept growing",
                    ));
                }
                for k in 0..2 {
                    if got[k] > caps[k] {
                        caps[k] = got[k].max(caps[k] * 2);
                    }
                }
                continue;
            }
            r?;
            self.kernels.scratch_caps.insert(key, caps);
            r0 = r1 as usize;
        }
        Ok(())
    }

    fn scratch_buffer(&self, bytes: u64) -> E<Arc<Buffer>> {
        self.ctx
            .alloc(bytes.max(8))
            .map(Arc::new)
            .map_err(Error::from)
    }

    /// A host-side size if it is known here (a constant or a host scalar).
    fn known(&self, d: &SubExp) -> Option<u64> {
        match d {
            SubExp::Const(c) => c.as_i128().and_then(|v| u64::try_from(v).ok()),
            SubExp::Var(v) => match self.env.get(&v.id) {
                Some(HVal::P(p)) => p.as_i128().and_then(|v| u64::try_from(v).ok()),
                _ => None,
            },
        }
    }

    /// Adds the words of an array type whose sizes are known (`copies` times) to `c`.
    fn add_type(&self, t: &Type, copies: u64, c: &mut [u64; 2]) {
        if let Type::Array { elem, shape } = t {
            let mut n: u64 = copies;
            for d in shape {
                match self.known(d) {
                    Some(s) => n = n.saturating_mul(s),
                    None => return,
                }
            }
            let k = usize::from(
                crate::codegen::gen::word_kind(*elem) == crate::codegen::gen::WordKind::U64,
            );
            c[k] = c[k].saturating_add(n);
        }
    }

    /// A first guess of the per-thread scratch a body needs: the sizes of the arrays its
    /// statements create, where the host knows them (the kernel reports anything more).
    fn estimate_body(&self, b: &Body, c: &mut [u64; 2], depth: usize) {
        self.estimate_stms(&b.stms, c, depth)
    }

    /// [`Exec::estimate_body`] of statements.
    fn estimate_stms(&self, stms: &[ir::Stm], c: &mut [u64; 2], depth: usize) {
        if depth > 8 {
            return;
        }
        for s in stms {
            let creates = matches!(
                &s.exp,
                Exp::Update(..)
                    | Exp::Concat { .. }
                    | Exp::ArrayLit { .. }
                    | Exp::Copy(_)
                    | Exp::If { .. }
                    | Exp::WithAcc { .. }
                    | Exp::Soac(Soac::Scan { .. } | Soac::Scatter { .. } | Soac::Hist { .. })
            );
            if creates {
                for p in &s.pat.elems {
                    self.add_type(&p.ty, 1, c);
                }
            }
            match &s.exp {
                Exp::Loop { params, body, .. } => {
                    for (p, _) in params {
                        self.add_type(&p.ty, 2, c);
                    }
                    self.estimate_body(body, c, depth + 1);
                }
                Exp::If { then_b, else_b, .. } => {
                    self.estimate_body(then_b, c, depth + 1);
                    self.estimate_body(else_b, c, depth + 1);
                }
                Exp::Soac(Soac::Map { lam, .. }) | Exp::WithAcc { lam, .. } => {
                    self.estimate_body(&lam.body, c, depth + 1)
                }
                Exp::Soac(Soac::Reduce { op, .. } | Soac::Scan { op, .. }) => {
                    for p in &s.pat.elems {
                        self.add_type(&p.ty, 2, c);
                    }
                    self.estimate_body(&op.lam.body, c, depth + 1)
                }
                Exp::Apply { fun, .. } => {
                    if let Some(f) = self.prog.fun(fun) {
                        self.estimate_body(&f.body, c, depth + 1);
                    }
                }
                _ => {}
            }
        }
    }
}
