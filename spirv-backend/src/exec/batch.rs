//! The batching of device work: what a run records (kernel launches, and copies and fills
//! that need no kernel) is held in a [`Batch`] and submitted in one command buffer at the next
//! point where the host must see device data ([`Exec::flush`]).
//!
//! A contiguous copy or a fill of a 4-byte pattern is recorded as a transfer command
//! (`vkCmdCopyBuffer`, `vkCmdFillBuffer`) rather than a kernel launch: lavapipe runs one as a
//! `memcpy` on its queue thread, a few µs, where a kernel launch costs about 50 µs; a GPU
//! runs it on its copy path without a pipeline.

use super::{Exec, E};
use crate::codegen::gen::{ErrorSite, MAX_ERROR_ARGS, STATUS_SLOT_WORDS};
use crate::error::Error;
use crate::exec::pipeline::Kernel;
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_vk::{Buffer, Command, CopyRegion, Dispatch, FillRegion, KernelTiming};

/// Commands a batch may hold before it is submitted.
const MAX_BATCH: usize = 256;

/// The most threads that make the new pipelines of one batch at once ([`Exec::pipelines`]).
const PIPELINE_THREADS: usize = 8;

/// Status slots (of 4 words) in the status buffer: launches that can fail in one batch.
pub(crate) const STATUS_SLOTS: usize = 256;
/// Bytes per status slot ([`STATUS_SLOT_WORDS`] words).
pub(crate) const SLOT_BYTES: usize = STATUS_SLOT_WORDS * 4;

/// A kernel launch recorded for the next submission.
pub(crate) struct Launch {
    /// The kernel, whose pipeline (with `bindings` descriptor bindings) is made, if it is not
    /// yet, when the batch is submitted (see [`Exec::pipelines`]).
    pub code: Arc<Kernel>,
    pub bindings: u32,
    /// The argument words' bytes.
    pub args: Vec<u8>,
    /// Every array the kernel reaches (kept alive until the launch has run); the first
    /// `bound` are its descriptor bindings 2.. (none when it uses device addresses).
    pub arrays: Vec<Arc<Buffer>>,
    pub bound: usize,
    pub groups: u32,
    /// The kernel's error sites (empty: it cannot fail and gets no status slot).
    pub errors: Vec<ErrorSite>,
    pub loc: Option<SrcLoc>,
    /// The name profiles show.
    pub name: String,
}

/// A copy or fill recorded for the next submission: no kernel, no argument buffer, and it
/// cannot fail (`transfer_op` makes one only where its ranges lie in its buffers).
pub(crate) struct Transfer {
    pub op: TransferOp,
    /// The name profiles show.
    pub name: String,
}

/// What a [`Transfer`] does, in bytes.
pub(crate) enum TransferOp {
    /// `size` bytes of `src` from `src_offset` to `dst` from `dst_offset` (distinct buffers).
    Copy {
        src: Arc<Buffer>,
        src_offset: u64,
        dst: Arc<Buffer>,
        dst_offset: u64,
        size: u64,
    },
    /// `size` bytes of `dst` from `offset` set to `word` repeated (both multiples of 4).
    Fill {
        dst: Arc<Buffer>,
        offset: u64,
        size: u64,
        word: u32,
    },
}

impl TransferOp {
    /// The buffers it reaches.
    fn buffers(&self) -> impl Iterator<Item = &Arc<Buffer>> {
        let (a, b) = match self {
            TransferOp::Copy { src, dst, .. } => (Some(src), dst),
            TransferOp::Fill { dst, .. } => (None, dst),
        };
        a.into_iter().chain(std::iter::once(b))
    }
}

/// One command recorded for the next submission.
pub(crate) enum Entry {
    /// With its status slot and argument buffer.
    Kernel(Launch, Option<usize>, Arc<Buffer>),
    Transfer(Transfer),
}

/// The commands recorded since the last submission.
#[derive(Default)]
pub(crate) struct Batch {
    pub entries: Vec<Entry>,
    /// Status slots given out in this batch.
    pub slots: usize,
    /// Argument buffers free for the next batch.
    pub free_args: Vec<Arc<Buffer>>,
    /// Small uploads into fresh buffers, written at the start of the next submission.
    pub writes: Vec<(Arc<Buffer>, Vec<u8>)>,
    /// Kernels (with their descriptor bindings) whose pipelines the next submission makes
    /// without launching them ([`Exec::prepare`]).
    pub prepare: Vec<(Arc<Kernel>, u32)>,
}

impl Batch {
    /// How many times the recorded commands and uploads reach `buf`.
    pub fn uses(&self, buf: &Arc<Buffer>) -> usize {
        let commands: usize = self
            .entries
            .iter()
            .map(|e| match e {
                Entry::Kernel(l, _, _) => l.arrays.iter().filter(|x| Arc::ptr_eq(x, buf)).count(),
                Entry::Transfer(t) => t.op.buffers().filter(|x| Arc::ptr_eq(x, buf)).count(),
            })
            .sum();
        commands
            + self
                .writes
                .iter()
                .filter(|(x, _)| Arc::ptr_eq(x, buf))
                .count()
    }
}

/// What a run's submissions did ([`Exec::flush`]), counted whatever [`vkad_vk::Timing`] it runs with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Kernel launches.
    pub launches: usize,
    /// Copies and fills recorded as transfer commands.
    pub transfers: usize,
    /// Queue submissions with commands.
    pub submissions: usize,
    /// Device time of the submissions (from the start of each one's first command to the end
    /// of its last), in ns: 0 unless the run is timed ([`vkad_vk::Timing::Submission`] or
    /// [`vkad_vk::Timing::Commands`]).
    pub device_ns: u64,
}

impl<'a> Exec<'a> {
    /// Adds a launch to the batch (submitting the batch first when it is full).
    pub(crate) fn enqueue(&self, l: Launch) -> E<()> {
        let full = {
            let b = self.batch.borrow();
            b.entries.len() >= MAX_BATCH
                || (!l.errors.is_empty() && b.slots >= STATUS_SLOTS)
                || l.args.len() as u64 > vkad_vk::MAX_INLINE_WRITE
        };
        if full {
            self.flush()?;
        }
        let mut b = self.batch.borrow_mut();
        let slot = if l.errors.is_empty() {
            None
        } else {
            b.slots += 1;
            Some(b.slots - 1)
        };
        // An argument buffer of the pool, written in the batch's own submission (or uploaded
        // now when too large for that: the batch is empty then).
        let need = l.args.len().max(8) as u64;
        let argbuf = match b.free_args.iter().position(|a| a.size() >= need) {
            Some(k) => b.free_args.swap_remove(k),
            None => Arc::new(self.ctx.alloc(need.max(256))?),
        };
        if l.args.len() as u64 > vkad_vk::MAX_INLINE_WRITE {
            self.ctx.upload(&argbuf, 0, &l.args)?;
        }
        b.entries.push(Entry::Kernel(l, slot, argbuf));
        Ok(())
    }

    /// Adds a copy or fill to the batch (submitting the batch first when it is full), named
    /// as a launch of the statement being run would be.
    pub(crate) fn enqueue_transfer(&mut self, op: TransferOp, loc: &Option<SrcLoc>) -> E<()> {
        self.launches_made += 1;
        let arrays: Vec<Arc<Buffer>> = op.buffers().cloned().collect();
        // A filled buffer that is written is no longer known to hold its fill.
        self.fills.retain(|f| f.alive() && !f.in_any(&arrays));
        let name = self.launch_name(loc);
        if self.batch.borrow().entries.len() >= MAX_BATCH {
            self.flush()?;
        }
        self.batch
            .borrow_mut()
            .entries
            .push(Entry::Transfer(Transfer { op, name }));
        Ok(())
    }

    /// The pipelines of the batch's kernel launches, in order. Those not made yet, and those
    /// of the `prepare`d kernels, are made first, on as many threads as the host has (up to
    /// [`PIPELINE_THREADS`]) when there are several: a driver compiles each module on the
    /// thread that asks for it, so a batch's new kernels then compile side by side. Errors are
    /// reported in launch order.
    fn pipelines(
        &self,
        entries: &[Entry],
        prepare: &[(Arc<Kernel>, u32)],
    ) -> E<Vec<vkad_vk::Kernel>> {
        let launches = || {
            entries.iter().filter_map(|e| match e {
                Entry::Kernel(l, _, _) => Some(l),
                Entry::Transfer(_) => None,
            })
        };
        let mut missing: Vec<(&Arc<Kernel>, u32)> = Vec::new();
        let wanted = launches().map(|l| (&l.code, l.bindings));
        for (code, bindings) in wanted.chain(prepare.iter().map(|(k, b)| (k, *b))) {
            let seen = missing
                .iter()
                .any(|(k, b)| Arc::ptr_eq(k, code) && *b == bindings);
            if !seen && !code.has_pipeline(self.ctx, bindings) {
                missing.push((code, bindings));
            }
        }
        // (The host's parallelism is asked only when there is a choice: on Linux it reads the
        // cgroup's CPU limit from files.)
        let threads = if missing.len() > 1 {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(PIPELINE_THREADS)
                .min(missing.len())
        } else {
            1
        };
        if threads > 1 {
            // Each thread takes the next pipeline to make; a failure is kept in the kernel's
            // place and reported below, when its launch asks for its pipeline again (a
            // prepared kernel's, when a later launch does).
            let next = std::sync::atomic::AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((k, b)) = missing.get(i) else { break };
                        k.make_pipeline(self.ctx, *b);
                    });
                }
            });
        } else {
            for (k, b) in &missing {
                k.make_pipeline(self.ctx, *b);
            }
        }
        launches()
            .map(|l| Ok(l.code.pipeline(self.ctx, l.bindings)?))
            .collect()
    }

    /// Submits the recorded commands (one submission, a barrier between consecutive
    /// commands) and waits for them; reports the first kernel error in launch order.
    pub(crate) fn flush(&self) -> E<()> {
        let mut b = self.batch.borrow_mut();
        if b.entries.is_empty() {
            // Uploads with no command after them: written now.
            for (buf, bytes) in std::mem::take(&mut b.writes) {
                self.ctx.upload(&buf, 0, &bytes)?;
            }
            return Ok(());
        }
        let entries = std::mem::take(&mut b.entries);
        let uploads = std::mem::take(&mut b.writes);
        let slots = std::mem::replace(&mut b.slots, 0);
        let prepare = std::mem::take(&mut b.prepare);
        let give_back = |b: &mut Batch| {
            for e in &entries {
                if let Entry::Kernel(_, _, a) = e {
                    b.free_args.push(a.clone());
                }
            }
        };
        let kernels = match self.pipelines(&entries, &prepare) {
            Ok(k) => k,
            Err(e) => {
                give_back(&mut b);
                return Err(e);
            }
        };
        let writes: Vec<(&Buffer, u64, &[u8])> = uploads
            .iter()
            .map(|(buf, bytes)| (&**buf, 0u64, &bytes[..]))
            .chain(entries.iter().filter_map(|e| match e {
                Entry::Kernel(l, _, a) if l.args.len() as u64 <= vkad_vk::MAX_INLINE_WRITE => {
                    let bytes: &[u8] = if l.args.is_empty() {
                        &[0u8; 8]
                    } else {
                        &l.args
                    };
                    Some((&**a, 0u64, bytes))
                }
                Entry::Kernel(..) | Entry::Transfer(_) => None,
            }))
            .collect();
        let mut kernel = kernels.iter();
        let commands: E<Vec<Command<'_>>> = entries
            .iter()
            .map(|e| match e {
                Entry::Kernel(l, slot, a) => {
                    let mut buffers: Vec<&Buffer> = vec![&self.status, a];
                    buffers.extend(l.arrays[..l.bound].iter().map(|b| &**b));
                    Ok(Command::Dispatch(Dispatch {
                        kernel: kernel
                            .next()
                            .ok_or_else(|| Error::bug("a launch without a pipeline"))?,
                        buffers,
                        push: (slot.unwrap_or(0) as u32).to_le_bytes().to_vec(),
                        groups: [l.groups, 1, 1],
                    }))
                }
                Entry::Transfer(t) => Ok(match &t.op {
                    TransferOp::Copy {
                        src,
                        src_offset,
                        dst,
                        dst_offset,
                        size,
                    } => Command::Copy(CopyRegion {
                        src,
                        src_offset: *src_offset,
                        dst,
                        dst_offset: *dst_offset,
                        size: *size,
                    }),
                    TransferOp::Fill {
                        dst,
                        offset,
                        size,
                        word,
                    } => Command::Fill(FillRegion {
                        dst,
                        offset: *offset,
                        size: *size,
                        word: *word,
                    }),
                }),
            })
            .collect::<E<_>>();
        let commands = match commands {
            Ok(c) => c,
            Err(e) => {
                give_back(&mut b);
                return Err(e);
            }
        };
        let read = (slots > 0).then_some((&*self.status, 0u64, (slots * SLOT_BYTES) as u64));
        let r = self.ctx.run_with(&writes, &commands, read, self.timing);
        drop(commands);
        give_back(&mut b);
        drop(b);
        let ran = r?;
        {
            let mut s = self.stats.borrow_mut();
            s.submissions += 1;
            s.device_ns = s.device_ns.saturating_add(ran.device_ns);
            for e in &entries {
                match e {
                    Entry::Kernel(..) => s.launches += 1,
                    Entry::Transfer(_) => s.transfers += 1,
                }
            }
        }
        if let Some(prof) = &mut *self.timings.borrow_mut() {
            prof.extend(ran.timings.into_iter().zip(&entries).map(|(t, e)| {
                let name = match e {
                    Entry::Kernel(l, _, _) => &l.name,
                    Entry::Transfer(t) => &t.name,
                };
                KernelTiming {
                    name: name.clone(),
                    ..t
                }
            }));
        }
        let st = ran.read;
        let word = |i: usize| {
            st.get(4 * i..4 * i + 4)
                .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        };
        for e in &entries {
            let Entry::Kernel(l, Some(k), _) = e else {
                continue;
            };
            let z = STATUS_SLOT_WORDS * k;
            if word(z) != 0 {
                self.ctx
                    .upload(&self.status, 0, &vec![0u8; slots * SLOT_BYTES])?;
                let site = l.errors.get(word(z + 2) as usize);
                let args: Vec<i64> = (0..MAX_ERROR_ARGS)
                    .map(|i| {
                        let (lo, hi) = (word(z + 4 + 2 * i), word(z + 5 + 2 * i));
                        (((hi as u64) << 32) | lo as u64) as i64
                    })
                    .collect();
                return Err(crate::codegen::gen::kernel_error(
                    word(z + 1),
                    site,
                    &l.loc,
                    &self.ctx.info().name,
                    &args,
                ));
            }
        }
        Ok(())
    }
}
