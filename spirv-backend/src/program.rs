//! The embedding API: compile a program once for a device, then call its entry points any
//! number of times, on host values or on arrays in the application's own buffers, ordered
//! with the application's work on a shared queue by timeline semaphores.
//!
//! ```text
//! let program = Program::compile(&ctx, &compiled)?;      // or Source::Text { name, text }
//! let main = program.entry("main")?;
//! let outs = main.call(&ctx, args)?;                     // arrays come back to the host
//! let opts = CallOptions::default().device_results();    // arrays stay in device buffers
//! let opts = unsafe { opts.wait_for(app_done).signal(vkad_done) };
//! let outs = main.call_with(&ctx, args, &opts)?;
//! ```
//!
//! A [`Program`] is a [`DeviceProgram`]: the Vulkan passes, the kernel IR and its plan, made
//! once; kernels are generated on the first call that needs them and kept (with their
//! pipelines, in the context) for every later call on the same context, so later calls whose
//! arguments have the same types generate nothing ([`Program::kernels_made`]).
//!
//! Synchronisation. vkad submits its work to the context's queue and waits for each
//! submission on the host before [`Entry::call_with`] returns, so results are complete when it
//! returns. [`CallOptions::wait_for`] makes the call's first submission wait *on the device*
//! for a value of one of the application's timeline semaphores (the application submits its
//! pass that signals it, then calls vkad: no `vkQueueWaitIdle`/`vkDeviceWaitIdle`);
//! [`CallOptions::signal`] (and [`CallOptions::signal_fence`]) signals a semaphore value (a
//! fence) after the call's work, so that passes the application submits later can wait for
//! vkad's kernels on the device too. Timeline semaphores need the device feature
//! `timelineSemaphore` (core in Vulkan 1.2, but optional to enable): without it a call that
//! uses them fails with [`Error::NotSupported`] before running anything.

use crate::device::{Arg, Out};
use crate::error::{Error, Result, RuntimeKind};
use crate::runtime::{device_thresholds, DeviceProgram, RunOptions};
use vkad_core::seg::Thresholds;
use vkad_core::Compiled;
use vkad_vk::ash::vk;
use vkad_vk::{Context, KernelTiming, TimelinePoint};

/// What [`Program::compile`] compiles.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A program compiled with [`vkad_core::compile`].
    Compiled(&'a Compiled),
    /// Source text in vkad's Futhark subset; `name` names it in diagnostics.
    Text { name: &'a str, text: &'a str },
}

impl<'a> From<&'a Compiled> for Source<'a> {
    fn from(c: &'a Compiled) -> Source<'a> {
        Source::Compiled(c)
    }
}

/// A program compiled for the device of one context.
pub struct Program {
    prog: DeviceProgram,
    /// The entry points and, for those that cannot run, their compile errors (the
    /// [`Error::Entry`] message and whether it is a `not supported` one).
    entries: Vec<(String, Option<(String, bool)>)>,
    /// [`Context::id`] of the context it was compiled for.
    context: u64,
    thresholds: Thresholds,
}

impl Program {
    /// Compiles `source` for the device of `ctx`: the Vulkan passes, flattening into the kernel
    /// IR and planning. Kernels are made by the first call that needs them.
    pub fn compile<'s>(ctx: &Context, source: impl Into<Source<'s>>) -> Result<Program> {
        let owned;
        let compiled = match source.into() {
            Source::Compiled(c) => c,
            Source::Text { name, text } => {
                owned = vkad_core::compile(name, text)?;
                &owned
            }
        };
        let entries = compiled
            .entry_names()
            .into_iter()
            .map(|e| {
                let err = match crate::entry_error(compiled, &e) {
                    Err(Error::Entry {
                        message,
                        not_supported,
                    }) => Some((message, not_supported)),
                    _ => None,
                };
                (e, err)
            })
            .collect();
        Ok(Program {
            prog: DeviceProgram::new(ctx, &compiled.ir)?,
            entries,
            context: ctx.id(),
            thresholds: device_thresholds(ctx),
        })
    }

    /// The entry point `name`; an error when there is none or it cannot run (its compile
    /// error, e.g. an AD rule that does not apply).
    pub fn entry(&self, name: &str) -> Result<Entry<'_>> {
        match self.entries.iter().find(|(e, _)| e == name) {
            None => Err(Error::no_entry(name)),
            Some((_, Some((message, not_supported)))) => Err(Error::Entry {
                message: message.clone(),
                not_supported: *not_supported,
            }),
            Some((e, None)) => Ok(Entry {
                program: self,
                name: e,
            }),
        }
    }

    /// The names of the entry points.
    pub fn entry_names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(e, _)| e.as_str())
    }

    /// How many kernels the calls so far have generated (unchanged by a call that needed no
    /// new kernel).
    pub fn kernels_made(&self) -> usize {
        self.prog.kernels_made()
    }

    /// The tuning thresholds calls use (by default [`device_thresholds`] of the context).
    pub fn set_thresholds(&mut self, th: Thresholds) {
        self.thresholds = th;
    }

    /// The prepared program (kernel IR and plan).
    pub fn device_program(&self) -> &DeviceProgram {
        &self.prog
    }
}

/// An entry point of a [`Program`].
#[derive(Clone, Copy)]
pub struct Entry<'p> {
    program: &'p Program,
    name: &'p str,
}

/// How [`Entry::call_with`] returns results and orders its work with the application's.
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    device_results: bool,
    profile: bool,
    waits: Vec<TimelinePoint>,
    signals: Vec<TimelinePoint>,
    fence: Option<vk::Fence>,
}

impl CallOptions {
    /// Leave array results on the device ([`Out::Device`]: buffers of the context, in the
    /// storage layout of module [`crate::device`]) instead of downloading them.
    pub fn device_results(mut self) -> CallOptions {
        self.device_results = true;
        self
    }

    /// Time every kernel launch ([`CallResult::timings`]).
    pub fn profile(mut self) -> CallOptions {
        self.profile = true;
        self
    }

    /// The call's first submission waits on the device until `point` is reached.
    ///
    /// # Safety
    /// As [`Context::wait_before_next_submission`]: a timeline semaphore of the context's
    /// device, alive until the call returns, whose value something (already submitted, or
    /// submitted by another thread) brings to `point.value`; otherwise the call waits until
    /// the context's timeout.
    pub unsafe fn wait_for(mut self, point: TimelinePoint) -> CallOptions {
        self.waits.push(point);
        self
    }

    /// After the call's work, `point`'s semaphore is signalled to `point.value`.
    ///
    /// # Safety
    /// As [`Context::signal`]: a timeline semaphore of the context's device, alive until the
    /// signal has happened, whose current value (and every value signalled before this one
    /// executes) is below `point.value`.
    pub unsafe fn signal(mut self, point: TimelinePoint) -> CallOptions {
        self.signals.push(point);
        self
    }

    /// After the call's work, `fence` is signalled.
    ///
    /// # Safety
    /// An unsignalled fence of the context's device, alive until it has signalled.
    pub unsafe fn signal_fence(mut self, fence: vk::Fence) -> CallOptions {
        self.fence = Some(fence);
        self
    }
}

/// The results of [`Entry::call_with`].
#[derive(Debug)]
pub struct CallResult {
    /// One per result of the entry point.
    pub outs: Vec<Out>,
    /// With [`CallOptions::profile`]: every launch's device timing, in order.
    pub timings: Vec<KernelTiming>,
}

impl Entry<'_> {
    /// The entry point's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Calls the entry point on `args` (one per IR parameter: host values, or arrays in device
    /// buffers of `ctx` such as the application's own, wrapped with
    /// [`vkad_vk::Buffer::from_raw`]) and waits for it; array results are downloaded
    /// ([`Out::Host`]).
    pub fn call(&self, ctx: &Context, args: Vec<Arg>) -> Result<Vec<Out>> {
        Ok(self.call_with(ctx, args, &CallOptions::default())?.outs)
    }

    /// [`Entry::call`] as `opts` says: results left on the device, timed, and the call's
    /// submissions ordered after and before the application's by timeline semaphores (see
    /// the module).
    pub fn call_with(
        &self,
        ctx: &Context,
        args: Vec<Arg>,
        opts: &CallOptions,
    ) -> Result<CallResult> {
        let p = self.program;
        if ctx.id() != p.context {
            return Err(Error::runtime(
                RuntimeKind::Arguments,
                &None,
                format!(
                    "entry `{}` called on another Vulkan context than the one its program \
                     was compiled for",
                    self.name
                ),
            ));
        }
        let uses_semaphores = !opts.waits.is_empty() || !opts.signals.is_empty();
        if uses_semaphores && !ctx.timeline_semaphores() {
            return Err(Error::NotSupported {
                what: "waiting on or signalling timeline semaphores (the device feature \
                       `timelineSemaphore` is not enabled)"
                    .into(),
                loc: None,
                device: Some(ctx.info().name.clone()),
            });
        }
        for &w in &opts.waits {
            // SAFETY: the caller promised it when making `opts` (`CallOptions::wait_for`).
            unsafe { ctx.wait_before_next_submission(w)? };
        }
        let run_opts = RunOptions {
            profile: opts.profile,
            device_time: false,
            record: false,
            device_out: opts.device_results,
        };
        let r = p
            .prog
            .run_args(ctx, self.name, args, &p.thresholds, &run_opts);
        // Signal (and consume waits no submission took, e.g. of a call that launched
        // nothing), also after a failed run, so that the application's waits end.
        // SAFETY: the caller promised it when making `opts` (`CallOptions::signal`,
        // `CallOptions::signal_fence`).
        let s = unsafe { ctx.signal(&opts.signals, opts.fence) };
        let r = r?;
        s?;
        Ok(CallResult {
            outs: r.outs,
            timings: r.timings,
        })
    }
}
