//! The kernel IR: host code around segmented operations.
//!
//! This is the stage between the SOAC IR ([`crate::ir`]) and a GPU backend, modelled on
//! Futhark's GPU representation (`Futhark.IR.GPU`, `Futhark.IR.SegOp`). [`crate::flatten`]
//! produces it from the SOAC IR; [`check`] verifies it, [`print`] shows it, and [`eval`] runs it
//! on the reference interpreter, so every program can be run before and after flattening and
//! the results compared.
//!
//! A program is a list of functions whose bodies are **host code** ([`HostBody`]): sequential
//! statements that the host runs itself (scalar arithmetic, size computations, the array
//! primitives a runtime provides as built-in operations: `iota`, `replicate`, `copy`, `concat`,
//! `reshape`, `rearrange`, in-place updates of single elements or slices, `sort_by_key`), and
//! the structured control around kernels (`if`, `loop`, `with_acc`). All data parallelism is in
//! **segmented operations** ([`SegOp`]): a [`SegSpace`] of one or more dimensions, one thread per
//! point of the space, and a [`KernelBody`] of *sequential* per-thread code. A thread body is
//! ordinary SOAC IR ([`ir::Stm`]); any SOAC inside it runs sequentially within the thread, and
//! an `upd_acc` inside it is an update of a device accumulator (atomic, compare-exchange, or a
//! plain read-modify-write where paper 003's analysis proved the indices distinct).
//!
//! Host code never iterates over the elements of an array: [`check`] rejects SOACs in host
//! code.
//!
//! ## Results of a segmented operation
//! With space dimensions `[d_1]…[d_n]` and per-thread result types `ret`:
//! - [`SegKind::Map`]: a [`KernelResult::Returns`] of type `t` gives an array `[d_1]…[d_n]t`; an
//!   accumulator returned by every thread gives the accumulator itself (the threads' updates all
//!   applied); a [`KernelResult::Write`] gives the updated destination array.
//! - [`SegKind::Red`]: the innermost dimension is reduced. The body first returns one value per
//!   operand of each operator (in operator order); these give arrays `[d_1]…[d_{n-1}]t` (a
//!   scalar of type `t` when `n = 1`), one reduction per segment. The remaining results are
//!   *map outputs*, as for `Map`.
//! - [`SegKind::Scan`]: the first values are scanned (inclusively) along the innermost
//!   dimension, giving `[d_1]…[d_n]t`; the rest are map outputs.
//! - [`SegKind::Hist`]: for each [`HistOp`], the body returns a bin index (an integer) and one
//!   value per destination array; the operation gives the updated destinations (of shape
//!   `[d_1]…[d_{n-1}][width]…`: a histogram per segment). Out-of-range bins are ignored. The
//!   remaining results are map outputs.
//!
//! Thresholds ([`HostExp::Threshold`]) compare a size with a tuning value known only at run
//! time (from the device's properties); [`crate::flatten`] uses them to choose between
//! versions of a nest (incremental flattening).

pub mod check;
pub mod effects;
pub mod eval;
pub mod print;
#[cfg(test)]
mod tests;
pub mod uses;

use crate::diag::SrcLoc;
use crate::ir::{self, AccInput, Attrs, EntryPoint, ExtType, LoopForm, NameSource, Operator};
use crate::ir::{Param, Pat, SubExp, Type, VName};
use std::sync::Arc;

/// A program in the kernel IR: the functions of the SOAC IR program it came from, with host
/// bodies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub funs: Vec<FunDef>,
    /// Continue here to make fresh names.
    pub name_source: NameSource,
}

impl Program {
    pub fn fun(&self, name: &str) -> Option<&FunDef> {
        self.funs.iter().find(|f| &*f.name == name)
    }
    pub fn entry(&self, name: &str) -> Option<&FunDef> {
        self.funs
            .iter()
            .find(|f| f.entry.as_ref().is_some_and(|e| &*e.name == name))
    }
}

/// A function: as [`ir::FunDef`], with a host body.
#[derive(Clone, Debug, PartialEq)]
pub struct FunDef {
    pub name: Arc<str>,
    pub entry: Option<EntryPoint>,
    pub size_params: Vec<VName>,
    pub params: Vec<Param>,
    pub ret: Vec<ExtType>,
    pub body: HostBody,
    pub attrs: Attrs,
}

impl FunDef {
    /// See [`ir::FunDef::num_ext_results`].
    pub fn num_ext_results(&self) -> usize {
        self.entry
            .as_ref()
            .map_or(0, |e| e.num_ext_results(self.ret.len()))
    }
}

/// Host code: statements run in order by the host, then the results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostBody {
    pub stms: Vec<HostStm>,
    pub result: Vec<SubExp>,
}

/// A host statement. `loc` is the source location of the SOAC IR statement it came from; a
/// segmented operation is named by it in profiles and errors.
#[derive(Clone, Debug, PartialEq)]
pub struct HostStm {
    pub pat: Pat,
    pub exp: HostExp,
    pub attrs: Attrs,
    pub loc: Option<SrcLoc>,
}

/// A lambda whose body is host code (the function of a host-level `with_acc`).
#[derive(Clone, Debug, PartialEq)]
pub struct HostLambda {
    pub params: Vec<Param>,
    pub body: HostBody,
    pub ret: Vec<Type>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum HostExp {
    /// An expression of the SOAC IR that the host runs itself: scalar operations, indexing,
    /// in-place updates, `iota`, `replicate`, array literals, `concat`, `copy`, `reshape`,
    /// `rearrange`, `sort_by_key`, `assert`, `upd_acc` of one element, and calls. Never a SOAC,
    /// `if`, `loop`, `with_acc`, `jvp` or `vjp` (those have their own forms here or are gone).
    Plain(ir::Exp),
    If {
        cond: SubExp,
        then_b: HostBody,
        else_b: HostBody,
        ret: Vec<ExtType>,
        /// Whether this `if` chooses between two versions of one map nest (flattening's
        /// rules 4 and 5, and rule 7's reductions): `then_b` the sequentialised version, taken
        /// where `cond` (a `threshold`, `contended_threshold` or `seg_threads_threshold` of the
        /// nest's size) holds, `else_b` the distributed one. Both compute the same, so a device that cannot run the first
        /// (lavapipe's per-thread loop limit) may run the second instead. Printed
        /// `if versions cond`.
        nest_versions: bool,
    },
    Loop {
        params: Vec<(Param, SubExp)>,
        form: LoopForm,
        body: HostBody,
    },
    /// As [`ir::Exp::WithAcc`]: the accumulators live on the device while `lam` runs; kernels
    /// in `lam` update them.
    WithAcc {
        inputs: Vec<AccInput>,
        lam: HostLambda,
    },
    /// A host `loop` generated twice (flattening's rule 6): `par`, the loop flattened (its
    /// SOACs kernels of their own), where `par_cond` holds (a [`HostExp::Threshold`] on the
    /// width of those kernels), and `seq`, the whole loop as the thread code of one `segmap`
    /// thread, otherwise. Both compute the same values, so a backend that cannot run `seq`
    /// (lavapipe's loop limit on one thread's iterations) may run `par` instead. For a `for`
    /// loop, `seq` runs the loop in chunks ([`SeqChunk`]): one launch per chunk of iterations.
    VersionedLoop {
        par_cond: SubExp,
        par: HostBody,
        seq: HostBody,
        chunk: Option<SeqChunk>,
        ret: Vec<ExtType>,
    },
    /// `size >= threshold(name)`, a `bool`. The threshold is a tuning value given at run time
    /// ([`Thresholds`]).
    Threshold {
        size: SubExp,
        name: Arc<str>,
        kind: ThresholdKind,
    },
    /// A kernel.
    Seg(SegOp),
}

impl HostExp {
    /// The host bodies directly inside this expression (both branches of an `if`, a loop's
    /// body, both versions of a versioned loop, a `with_acc`'s lambda body).
    pub fn host_bodies(&self) -> Vec<&HostBody> {
        match self {
            HostExp::If { then_b, else_b, .. } => vec![then_b, else_b],
            HostExp::Loop { body, .. } => vec![body],
            HostExp::VersionedLoop { par, seq, .. } => vec![par, seq],
            HostExp::WithAcc { lam, .. } => vec![&lam.body],
            HostExp::Plain(_) | HostExp::Threshold { .. } | HostExp::Seg(_) => vec![],
        }
    }

    /// [`HostExp::host_bodies`], mutable.
    pub fn host_bodies_mut(&mut self) -> Vec<&mut HostBody> {
        match self {
            HostExp::If { then_b, else_b, .. } => vec![then_b, else_b],
            HostExp::Loop { body, .. } => vec![body],
            HostExp::VersionedLoop { par, seq, .. } => vec![par, seq],
            HostExp::WithAcc { lam, .. } => vec![&mut lam.body],
            HostExp::Plain(_) | HostExp::Threshold { .. } | HostExp::Seg(_) => vec![],
        }
    }
}

/// The chunking of the one-thread version `seq` of a versioned `for` loop of `bound`
/// iterations: `seq` is a host loop whose every iteration launches the one-thread kernel on
/// the next `param` iterations of the loop (the last chunk may be shorter), carrying the loop's
/// values from launch to launch. `param` (an `i64`, at least 1) is bound by whoever runs the
/// loop, not by a statement, and every value gives the same results: `bound` (or more) runs the
/// whole loop in one launch; a device that limits the iterations one thread may run (lavapipe)
/// takes smaller chunks.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqChunk {
    pub param: Param,
    pub bound: SubExp,
}

/// The iteration space of a segmented operation: one `i64` thread index per dimension,
/// outermost first. Every point of the space is one thread.
#[derive(Clone, Debug, PartialEq)]
pub struct SegSpace {
    pub dims: Vec<(VName, SubExp)>,
}

impl SegSpace {
    pub fn sizes(&self) -> impl Iterator<Item = &SubExp> {
        self.dims.iter().map(|(_, d)| d)
    }
    pub fn indices(&self) -> impl Iterator<Item = &VName> {
        self.dims.iter().map(|(i, _)| i)
    }
}

/// A segmented operation (a kernel).
#[derive(Clone, Debug, PartialEq)]
pub struct SegOp {
    pub kind: SegKind,
    pub space: SegSpace,
    /// The types of the values the body returns per thread (a [`KernelResult::Write`]'s entry
    /// is the type of the value written).
    pub ret: Vec<Type>,
    pub body: KernelBody,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SegKind {
    Map,
    /// Reduction of the innermost dimension, one per segment (the outer dimensions).
    Red(Vec<Operator>),
    /// Inclusive scan along the innermost dimension, one per segment.
    Scan(Vec<Operator>),
    /// Histograms, one per segment.
    Hist(Vec<HistOp>),
}

impl SegKind {
    /// How many of the body's leading results the operators take (the rest are map outputs).
    pub fn num_op_results(&self) -> usize {
        match self {
            SegKind::Map => 0,
            SegKind::Red(ops) | SegKind::Scan(ops) => ops.iter().map(|o| o.neutral.len()).sum(),
            SegKind::Hist(hs) => hs.iter().map(|h| 1 + h.dest.len()).sum(),
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            SegKind::Map => "segmap",
            SegKind::Red(_) => "segred",
            SegKind::Scan(_) => "segscan",
            SegKind::Hist(_) => "seghist",
        }
    }
}

/// One histogram of a [`SegKind::Hist`]: `dest` (consumed) has `width` bins per segment,
/// combined with `op`. `disjoint`: no two threads update one bin (the SOAC was marked
/// `#[disjoint_indices]` by [`crate::passes::hist_disjoint`], paper 003), so a backend may
/// update bins without atomics.
#[derive(Clone, Debug, PartialEq)]
pub struct HistOp {
    pub dest: Vec<VName>,
    pub width: SubExp,
    pub op: Operator,
    pub disjoint: bool,
}

/// Per-thread code: sequential statements, then what the thread contributes.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelBody {
    pub stms: Vec<ir::Stm>,
    pub results: Vec<KernelResult>,
}

impl KernelBody {
    /// A body's statements as thread code that returns the body's results.
    pub fn returning(body: ir::Body) -> KernelBody {
        KernelBody {
            stms: body.stms,
            results: body.result.into_iter().map(KernelResult::Returns).collect(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum KernelResult {
    /// A value for this thread's point of the space (or an operand of the operators).
    Returns(SubExp),
    /// Write `val` at `idx` of `dest` (consumed; out-of-range indices are ignored; where two
    /// threads write the same place, the one later in row-major order of the space wins, as
    /// `scatter` in the SOAC IR).
    Write {
        dest: VName,
        idx: Vec<SubExp>,
        val: SubExp,
    },
}

/// What a [`HostExp::Threshold`] decides, which gives it its default value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdKind {
    /// Whether a nest's outer parallelism fills the device (true: the sequentialised version;
    /// flattening's rules 4 and 5).
    Nest,
    /// Whether the kernels of a host loop are wide enough to run as kernels of their own
    /// (true: the flattened loop; false: the whole loop in one thread; rule 6).
    Loop,
    /// Whether the threads updating each element of an accumulator are many enough that a
    /// segmented reduction beats atomic updates (true: the reduction; rule 7).
    AccRed,
    /// [`ThresholdKind::Nest`] of a nest whose sequentialised version updates an accumulator
    /// from every outer thread at indices that are not the thread's (contended atomics) while
    /// its flattened version reduces those updates (rule 7; `flatten/contention.rs`). Its size
    /// is `i64::MAX` minus the number of those updates where the host can count them (the
    /// nest's size otherwise), so that a value `i64::MAX - u` takes the sequentialised version
    /// up to `u` updates, 0 always and `i64::MAX` never. Its default
    /// ([`Thresholds::contended_default`]) depends on the device where it is not set.
    ContendedNest,
    /// Whether a sequentialised nest with inner parallelism runs as a host loop over its
    /// points instead (true; rule 5's fallback, `flatten/host_map.rs`). Its default
    /// ([`Thresholds::host_map_default`]) is never met.
    HostMap,
    /// Whether the segments of a reduction are many enough for a thread each, summing its
    /// segment sequentially with nothing stored, rather than a segmented reduction that
    /// stores every value first (true: a thread per segment; rule 7's reduction,
    /// `flatten/acc_red.rs`). Its default ([`Thresholds::seg_threads_default`]) is about the
    /// number of threads that fill the device.
    SegThreads,
    /// Whether a nest's sequentialised version does so little work in all that it beats the
    /// flattened version's extra launches although its outer parallelism does not fill the
    /// device (true: the sequentialised version, as for [`ThresholdKind::Nest`], with which
    /// it is or-ed; `flatten/small_nest.rs`). Its size is `i64::MAX` minus that work (the
    /// statements the version's threads run, counted on the host), so that a value
    /// `i64::MAX - w` takes the sequentialised version up to `w`, 0 always and `i64::MAX`
    /// never. Its default ([`Thresholds::small_nest_default`]) depends on the device where it
    /// is not set.
    SmallNest,
}

/// Tuning values for [`HostExp::Threshold`], by name; a name not listed uses the default of
/// its kind ([`Thresholds::nest_default`], [`Thresholds::loop_default`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    pub values: std::collections::BTreeMap<String, i64>,
    pub nest_default: i64,
    pub loop_default: i64,
    pub acc_red_default: i64,
    /// The default of [`ThresholdKind::ContendedNest`]; `None` (the default): the device
    /// decides ([`Thresholds::get_on`]; without a device, as a CPU). Setting `nest` sets it
    /// too (0 and `i64::MAX` mean for contended nests what they mean for the others).
    pub contended_default: Option<i64>,
    /// The default of [`ThresholdKind::HostMap`]: `i64::MAX`, the host loop over a nest's
    /// points is never chosen, only run where the device cannot run the nest's one-thread
    /// version; 0 always chooses it. [`Thresholds::all`] leaves it.
    pub host_map_default: i64,
    /// The default of [`ThresholdKind::SegThreads`]: [`Thresholds::SEG_THREADS_DEFAULT`], or
    /// [`Thresholds::CPU_SEG_THREADS_PER_4_CORES`] per 4 cores on a CPU device.
    pub seg_threads_default: i64,
    /// The default of [`ThresholdKind::SmallNest`]; `None` (the default): the device decides
    /// ([`Thresholds::get_on`]; without a device, as a CPU). Setting `nest` sets it too.
    pub small_nest_default: Option<i64>,
    /// The iterations per launch of every one-thread loop run in chunks ([`SeqChunk`]);
    /// `None`: the whole loop in one launch. Any value gives the same results.
    pub seq_chunk: Option<i64>,
}

impl Thresholds {
    /// The default of a GPU that needs about this many threads to be full (Futhark's default
    /// `threshold` is 2^15).
    pub const DEFAULT: i64 = 1 << 15;
    /// The default width below which a host loop's kernels run in one thread: about the
    /// number of element operations that one thread does in the time of one more launch.
    pub const LOOP_DEFAULT: i64 = 1 << 8;
    /// The default number of updates per accumulator element from which they are reduced
    /// first rather than made atomically.
    pub const ACC_RED_DEFAULT: i64 = 32;
    /// The nest default of a CPU device (lavapipe): a few workgroups of threads fill its
    /// cores, and a nest's sequentialised version beats its distributed one from there. Where a thread
    /// has more work than lavapipe's loop limiter allows, the Vulkan runtime runs the other
    /// version instead.
    pub const CPU_NEST_DEFAULT: i64 = 256;
    /// The contended updates (every outer thread of a nest updating the same accumulator
    /// elements) from which a CPU device takes a contended nest's flattened version, whose
    /// updates are reduced: below, the flattened version's extra launches cost more than the
    /// updates (lavapipe, 2 cores: GMM's gradient at n = 1,000, d = 2, K = 5, 40,000 updates,
    /// 2.6-3.9 ms per point against 4.1-5.6 ms flattened; at d = 10, K = 25, 2.8 million
    /// updates, 45-67 ms against 30-44 ms; k-means' Newton step at n = 5,000, d = 35, k = 5,
    /// 875,000 updates, 15-25 ms against 13-17 ms).
    pub const CONTENDED_UPDATES: i64 = 1 << 18;
    /// The default of [`ThresholdKind::SegThreads`] on a GPU: segments that give this many
    /// threads fill one (the runtime's choice between a thread per row and teams of threads
    /// per row in `segmented` uses the same figure).
    pub const SEG_THREADS_DEFAULT: i64 = 8192;
    /// [`Thresholds::SEG_THREADS_DEFAULT`] on a CPU device, per 4 cores (at least 1): storing
    /// a value costs lavapipe about five times a step of a thread's loop (k-means' Newton step:
    /// 175 sums of 5,000 values took 15 ms as a segmented reduction; GMM's gradient at d = 2,
    /// K = 5, whose sums have 5 to 20 elements, 4.1-5.6 ms with a thread each against
    /// 5.0-6.9 ms), so one thread per segment, though it leaves cores idle where the segments
    /// are fewer than the cores' SIMD lanes, wins unless they are fewer than a fifth of the
    /// cores.
    pub const CPU_SEG_THREADS_PER_4_CORES: i64 = 1;
    /// The work (statements run by all the threads of a nest's sequentialised version) up to
    /// which a CPU device takes that version whatever the nest's size
    /// ([`ThresholdKind::SmallNest`]): about what lavapipe's cores run in the time of the one or
    /// two launches more that the flattened version makes, 40-90 µs each (the RNN's gradient
    /// sums 32 rows of 64 batch elements, about 4,000 statements, in one launch instead of
    /// three). 2^17 rather than 2^15: GMM's gradient at n = 1,000, d = 10, K = 25 then makes 39
    /// launches instead of 48 and the RNN's at a batch of 16 267 instead of 297, and in four
    /// alternating rounds each took at most the time it took with 2^15 (GMM 32.5-42.9 ms
    /// against 41.1-48.8, RNN 22.4-29.8 against 28.3-37.9); RSBench, k-means and the others
    /// make the same launches either way.
    pub const SMALL_NEST_WORK: i64 = 1 << 17;

    /// Every threshold at `v` (0: always take the sequentialised version of a map nest, the
    /// flattened version of a host loop and the reduction of accumulator updates; `i64::MAX`:
    /// the fully flattened nest, the one-thread loop and atomic accumulator updates).
    pub fn all(v: i64) -> Thresholds {
        Thresholds {
            values: Default::default(),
            nest_default: v,
            loop_default: v,
            acc_red_default: v,
            contended_default: Some(v),
            host_map_default: i64::MAX,
            seg_threads_default: v,
            small_nest_default: Some(v),
            seq_chunk: None,
        }
    }
    /// The value of threshold `name` of kind `kind` where no device is known (the kernel IR's
    /// evaluator): a contended nest's default is the nest default.
    pub fn get(&self, name: &str, kind: ThresholdKind) -> i64 {
        self.get_on(name, kind, false)
    }

    /// The value of threshold `name` of kind `kind` on a device. A contended nest not set by
    /// name or by `nest`/`contended_nest` (whose size is `i64::MAX` minus the contended updates
    /// of its sequentialised version, where the host can count them: `flatten/contention.rs`)
    /// takes its flattened version at every size on a GPU (`gpu`; contended atomics serialise
    /// there: k-means' Newton step at n = 494,019 took 681 ms of kernels in its per-point
    /// version on an H200, where the reduction takes about 0.9 ms per 20,000 points), and
    /// elsewhere from [`Thresholds::CONTENDED_UPDATES`] updates on. A small nest's threshold
    /// (`flatten/small_nest.rs`) not set by name or by `nest`/`small_nest` is never met on a
    /// GPU, and elsewhere up to [`Thresholds::SMALL_NEST_WORK`] statements of work.
    pub fn get_on(&self, name: &str, kind: ThresholdKind, gpu: bool) -> i64 {
        self.values.get(name).copied().unwrap_or(match kind {
            ThresholdKind::Nest => self.nest_default,
            ThresholdKind::Loop => self.loop_default,
            ThresholdKind::AccRed => self.acc_red_default,
            ThresholdKind::ContendedNest => match self.contended_default {
                Some(v) => v,
                None if gpu => i64::MAX,
                None => i64::MAX - Thresholds::CONTENDED_UPDATES,
            },
            ThresholdKind::HostMap => self.host_map_default,
            ThresholdKind::SegThreads => self.seg_threads_default,
            ThresholdKind::SmallNest => match self.small_nest_default {
                Some(v) => v,
                None if gpu => i64::MAX,
                None => i64::MAX - Thresholds::SMALL_NEST_WORK,
            },
        })
    }
}

/// A tuning setting that is not `NAME=VALUE` with an `i64` value ([`Thresholds::set`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "invalid threshold setting `{0}`: expected NAME=VALUE, VALUE an integer and NAME `nest`, \
     `contended_nest`, `small_nest`, `loop`, `acc_red`, `host_map` or `seg_threads` (the defaults \
     of each kind), \
     `seq_chunk`, or a \
     threshold's name as \
     `vkad dump-ir --kernels` prints it (`loop_par_3`)"
)]
pub struct ThresholdSettingError(pub String);

impl Thresholds {
    /// Applies the setting `NAME=VALUE`: `nest` (for contended nests too), `contended_nest`,
    /// `loop`, `acc_red`, `host_map` and `seg_threads` set the default of their kind, `seq_chunk` the iterations per launch
    /// of chunked one-thread loops, any other name that threshold.
    pub fn set(&mut self, setting: &str) -> Result<(), ThresholdSettingError> {
        let bad = || ThresholdSettingError(setting.to_string());
        let (name, value) = setting.split_once('=').ok_or_else(bad)?;
        let (name, value) = (name.trim(), value.trim());
        let value: i64 = value.parse().map_err(|_| bad())?;
        match name {
            "" => return Err(bad()),
            "nest" => {
                self.nest_default = value;
                self.contended_default = Some(value);
                self.small_nest_default = Some(value);
            }
            "contended_nest" => self.contended_default = Some(value),
            "small_nest" => self.small_nest_default = Some(value),
            "loop" => self.loop_default = value,
            "acc_red" => self.acc_red_default = value,
            "host_map" => self.host_map_default = value,
            "seg_threads" => self.seg_threads_default = value,
            "seq_chunk" if value >= 1 => self.seq_chunk = Some(value),
            "seq_chunk" => return Err(bad()),
            _ => {
                self.values.insert(name.to_string(), value);
            }
        }
        Ok(())
    }
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            values: Default::default(),
            nest_default: Thresholds::DEFAULT,
            loop_default: Thresholds::LOOP_DEFAULT,
            acc_red_default: Thresholds::ACC_RED_DEFAULT,
            contended_default: None,
            host_map_default: i64::MAX,
            seg_threads_default: Thresholds::SEG_THREADS_DEFAULT,
            small_nest_default: None,
            seq_chunk: None,
        }
    }
}
