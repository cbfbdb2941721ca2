//! The host executor: runs the host statements the runtime's plan gives it like the interpreter,
//! keeping scalars on the host and arrays on the device, and launches a kernel for every array
//! statement (the kernels of `crate::codegen`, kept in a [`KernelCache`] with the pipelines made
//! from them, `pipeline`), and the plan's primitives (`prim`: reductions, scans, histograms,
//! scatters and primitives per segment, one file each, their kernels cached by the
//! primitive's [`KernelId`]). It owns device memory, uploads and downloads. Contiguous copies
//! and fills are transfer commands rather than kernels. Child modules: the batching of
//! launches and transfers into submissions (`batch`), the host side of per-thread scratch
//! memory (`map_scratch`),
//! accumulators (`acc`), undoing abandoned one-thread loops (`undo`) and `sort_by_key`
//! (`sort`).

use crate::codegen::copy;
use crate::codegen::gen::{word_kind, Addressing, WordKind, WG};
use crate::codegen::module::CompiledModule;
use crate::codegen::{self, ArgSrc, BindSrc, HostTy, KernelCode};
use crate::error::{Error, RuntimeKind};
pub use batch::RunStats;
use batch::{Batch, Launch, TransferOp, SLOT_BYTES, STATUS_SLOTS};
pub(crate) use pipeline::Kernel;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, Body, DimIndex, Exp, LoopForm, Stm, SubExp, Type};
use vkad_core::prim::{FloatType, IntType, PrimType, PrimValue};
use vkad_core::primops;
use vkad_core::value::{ArrayValue, Buffer as HBuf};
use vkad_vk::{Buffer, Context, KernelTiming, Timing};

pub type E<T> = crate::error::Result<T>;

pub(crate) mod acc;
mod batch;
pub(crate) mod map_scratch;
mod pipeline;
mod prim;
mod sort;
pub(crate) mod undo;

pub(crate) use prim::{
    hist_operators, pass_names, prim_kernel_name, reduce_passes, scan_passes, tiled_scan_fits,
    tuple_too_big, PrimKernel,
};
pub use prim::{Prim, PrimStep};

/// Whether the device of `ctx` is a CPU (lavapipe): kernels are laid out for it, and host
/// loops of narrow kernels run in one thread up to a larger width.
pub(crate) fn cpu_device(ctx: &Context) -> bool {
    ctx.info().device_type == "cpu"
}

/// Whether the device of `ctx` is lavapipe (whose loop limit `map` kernels count against).
pub(crate) fn lavapipe_device(ctx: &Context) -> bool {
    let i = ctx.info();
    i.name.contains("llvmpipe") || i.driver.contains("llvmpipe")
}

/// How kernels reach arrays on the device of `ctx`: device addresses where it has
/// `bufferDeviceAddress`, descriptors otherwise.
pub(crate) fn device_addressing(ctx: &Context) -> Addressing {
    if ctx.buffer_device_address() {
        Addressing::Addresses
    } else {
        Addressing::Descriptors
    }
}

/// A kernel's identity in a plan ([`crate::runtime::plan`]): its index, in order of planning.
/// The executor's caches know kernels by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub usize);

/// Kernels made from IR and what launching them taught, kept for later runs of the same
/// program (the runtime keeps one per prepared program and way of reaching arrays).
#[derive(Default)]
pub(crate) struct KernelCache {
    /// How the kernels reach arrays (`None`: not known yet).
    pub addressing: Option<Addressing>,
    /// The status buffer (all zero between runs).
    pub status: Option<Arc<Buffer>>,
    /// Kernels of a plan's primitives, by primitive, which of its kernels, and the types of the
    /// host values they read.
    pub prims: HashMap<(KernelId, PrimKernel, Vec<HostTy>), Arc<Kernel>>,
    /// Built-in kernels (copies, fills, `iota`, sort passes), by name.
    pub builtin: HashMap<String, Arc<Kernel>>,
    /// `segmap` kernels of a plan, by kernel and the types of the host values they read.
    pub segmaps: HashMap<(KernelId, Vec<Option<HostTy>>), Arc<Kernel>>,
    /// Per `map` kernel: the per-thread scratch capacity (32-bit, 64-bit words) that sufficed.
    pub scratch_caps: HashMap<map_scratch::ScratchKey, [u64; 2]>,
    /// Kernels generated into this cache (every miss of the three maps above).
    pub generated: usize,
    /// The versioned loops of a plan whose one-thread version the device cut short (lavapipe's
    /// loop limit): later runs take their flattened version at once.
    pub seq_loops_cut: std::collections::HashSet<usize>,
    /// The iterations per launch of the chunked one-thread loops (by versioned loop) that
    /// lavapipe's loop limit cut at a larger chunk.
    pub seq_chunks: std::collections::HashMap<usize, i64>,
}

/// A device array: a contiguous row-major view into a buffer.
#[derive(Clone)]
pub struct DArr {
    pub buf: Arc<Buffer>,
    pub elem: PrimType,
    pub shape: Vec<usize>,
    /// Offset in elements.
    pub off: usize,
}

impl DArr {
    fn len(&self) -> usize {
        self.shape.iter().product()
    }
}

#[derive(Clone)]
pub enum HVal {
    P(PrimValue),
    A(DArr),
    /// An accumulator: index into [`Exec`]'s stack of running `withacc`s (see module `acc`).
    Acc(usize),
    Empty,
}

fn wsize(t: PrimType) -> usize {
    if word_kind(t) == WordKind::U64 {
        8
    } else {
        4
    }
}

/// A scalar as a kernel argument word.
pub fn encode(p: PrimValue) -> u64 {
    match p {
        PrimValue::Bool(b) => b as u64,
        PrimValue::F16(x) => x.to_f32().to_bits() as u64,
        PrimValue::F32(x) => x.to_bits() as u64,
        PrimValue::F64(x) => x.to_bits(),
        _ => p.as_i128().unwrap_or(0) as u64,
    }
}

/// A storage word back to a scalar.
fn decode(t: PrimType, w: u64) -> PrimValue {
    match t {
        PrimType::Bool => PrimValue::Bool(w != 0),
        PrimType::Float(FloatType::F16) => {
            PrimValue::F16(half::f16::from_f32(f32::from_bits(w as u32)))
        }
        PrimType::Float(FloatType::F32) => PrimValue::F32(f32::from_bits(w as u32)),
        PrimType::Float(FloatType::F64) => PrimValue::F64(f64::from_bits(w)),
        PrimType::Int(it) => PrimValue::int(it, w as i64 as i128),
    }
}

/// The storage bytes of a host buffer: the buffer's own memory where its elements are stored as
/// they are (64-bit and 32-bit words on a little-endian host), else a converted copy.
fn buf_to_bytes(b: &HBuf) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        match b {
            HBuf::F64(v) => return Cow::Borrowed(bytemuck::cast_slice(v)),
            HBuf::F32(v) => return Cow::Borrowed(bytemuck::cast_slice(v)),
            HBuf::I64(v) => return Cow::Borrowed(bytemuck::cast_slice(v)),
            HBuf::I32(v) => return Cow::Borrowed(bytemuck::cast_slice(v)),
            HBuf::U64(v) => return Cow::Borrowed(bytemuck::cast_slice(v)),
            HBuf::U32(v) => return Cow::Borrowed(bytemuck::cast_slice(v)),
            _ => {}
        }
    }
    let t = b.elem_type();
    let ws = wsize(t);
    let mut out = Vec::with_capacity(b.len() * ws);
    for i in 0..b.len() {
        let w = b.get(i).map(encode).unwrap_or(0);
        if ws == 8 {
            out.extend_from_slice(&w.to_le_bytes());
        } else {
            out.extend_from_slice(&(w as u32).to_le_bytes());
        }
    }
    Cow::Owned(out)
}

/// A host buffer of `n` zeros of `t` where `t`'s elements are stored as they are (see
/// [`buf_to_bytes`]), so that the device's bytes can be read into it ([`words_mut`]); `None`
/// for the other types, or where the host cannot allocate it (the caller's path reports that).
fn zeroed_words(t: PrimType, n: usize) -> Option<HBuf> {
    fn zeros<T: Clone + Default>(n: usize) -> Option<Vec<T>> {
        let mut v = Vec::new();
        v.try_reserve_exact(n).ok()?;
        v.resize(n, T::default());
        Some(v)
    }
    if !cfg!(target_endian = "little") {
        return None;
    }
    Some(match t {
        PrimType::Float(FloatType::F64) => HBuf::F64(zeros(n)?),
        PrimType::Float(FloatType::F32) => HBuf::F32(zeros(n)?),
        PrimType::Int(IntType::I64) => HBuf::I64(zeros(n)?),
        PrimType::Int(IntType::I32) => HBuf::I32(zeros(n)?),
        PrimType::Int(IntType::U64) => HBuf::U64(zeros(n)?),
        PrimType::Int(IntType::U32) => HBuf::U32(zeros(n)?),
        _ => return None,
    })
}

/// The bytes of a buffer [`zeroed_words`] makes, to be written.
fn words_mut(b: &mut HBuf) -> Option<&mut [u8]> {
    Some(match b {
        HBuf::F64(v) => bytemuck::cast_slice_mut(v),
        HBuf::F32(v) => bytemuck::cast_slice_mut(v),
        HBuf::I64(v) => bytemuck::cast_slice_mut(v),
        HBuf::I32(v) => bytemuck::cast_slice_mut(v),
        HBuf::U64(v) => bytemuck::cast_slice_mut(v),
        HBuf::U32(v) => bytemuck::cast_slice_mut(v),
        _ => return None,
    })
}

fn bytes_to_buf(t: PrimType, bytes: &[u8]) -> HBuf {
    // As in `buf_to_bytes`: words of the types stored as they are, straight from the bytes.
    macro_rules! words {
        ($ty:ty, $variant:ident) => {{
            const W: usize = std::mem::size_of::<$ty>();
            return HBuf::$variant(
                bytes
                    .chunks_exact(W)
                    .map(|c| {
                        let mut a = [0u8; W];
                        a.copy_from_slice(c);
                        <$ty>::from_le_bytes(a)
                    })
                    .collect(),
            );
        }};
    }
    match t {
        PrimType::Float(FloatType::F64) => words!(f64, F64),
        PrimType::Float(FloatType::F32) => words!(f32, F32),
        PrimType::Int(IntType::I64) => words!(i64, I64),
        PrimType::Int(IntType::I32) => words!(i32, I32),
        PrimType::Int(IntType::U64) => words!(u64, U64),
        PrimType::Int(IntType::U32) => words!(u32, U32),
        _ => {}
    }
    let ws = wsize(t);
    let n = bytes.len() / ws;
    let mut b = HBuf::with_capacity(t, n);
    for c in bytes.chunks_exact(ws) {
        let w = if ws == 8 {
            u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
        } else {
            u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64
        };
        b.push(decode(t, w));
    }
    b
}

pub(crate) fn shape_str(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

/// Launch-time state of one entry-point run.
pub struct Exec<'a> {
    pub ctx: &'a Context,
    pub(crate) prog: &'a ir::Program,
    env: HashMap<u32, HVal>,
    /// Kernels made so far (kept across runs by the runtime).
    pub(crate) kernels: KernelCache,
    /// The status buffer: [`STATUS_SLOTS`] slots of
    /// [`STATUS_SLOT_WORDS`](crate::codegen::gen::STATUS_SLOT_WORDS) words, one per launch of
    /// a batch that can fail (a kernel writes its errors into the slot its push constant
    /// names).
    pub(crate) status: Arc<Buffer>,
    /// Launches and transfers recorded but not yet submitted, and the launches' argument
    /// buffers.
    batch: std::cell::RefCell<Batch>,
    /// The location of the innermost enclosing host-level `loop`/`if`/`with_acc` (see
    /// [`Exec::stm`]).
    enclosing: Option<SrcLoc>,
    /// What the statement being run is (names profiled launches).
    label: &'static str,
    /// Launches made so far by that statement.
    pass: u32,
    /// Timings of every launch and transfer, when profiling.
    pub(crate) timings: std::cell::RefCell<Option<Vec<KernelTiming>>>,
    /// What the submissions time ([`Timing::Commands`] when profiling).
    pub(crate) timing: Timing,
    /// What the submissions did so far.
    pub(crate) stats: std::cell::RefCell<RunStats>,
    /// When set, every kernel module made during the run is recorded here (`vkad spirv`).
    pub record: Option<Vec<CompiledModule>>,
    /// The statement or primitive being run (innermost) and its location, for recording.
    cur: Option<(&'a dyn std::fmt::Display, Option<&'a SrcLoc>)>,
    /// How kernels reach arrays (set before the first kernel is made; see `codegen::gen::Addressing`).
    pub(crate) addressing: Addressing,
    /// The accumulators of the running `withacc`s, innermost last.
    accs: Vec<acc::AccState<'a>>,
    /// Launches and transfers recorded so far by this run (see [`undo::Pristine`]).
    launches_made: u64,
    /// The copies a one-thread version took before it ran, while they may still stand for
    /// the arrays' current contents ([`Exec::undo_copies`]).
    pristine: Option<undo::Pristine>,
    /// Buffers a `replicate` of a scalar filled that no launch has bound since
    /// ([`undo::Fill`]).
    fills: Vec<undo::Fill>,
}

impl<'a> Exec<'a> {
    /// An executor that starts with the kernels (and status buffer) of earlier runs.
    pub(crate) fn with_cache(
        ctx: &'a Context,
        prog: &'a ir::Program,
        mut kernels: KernelCache,
    ) -> E<Exec<'a>> {
        let status = match kernels.status.take() {
            Some(s) => s,
            None => {
                let status = ctx.alloc((STATUS_SLOTS * SLOT_BYTES) as u64)?;
                ctx.upload(&status, 0, &[0u8; STATUS_SLOTS * SLOT_BYTES])?;
                Arc::new(status)
            }
        };
        Ok(Exec {
            ctx,
            prog,
            env: HashMap::new(),
            kernels,
            status,
            batch: Default::default(),
            enclosing: None,
            label: "kernel",
            pass: 0,
            timings: Default::default(),
            timing: Timing::Off,
            stats: Default::default(),
            record: None,
            cur: None,
            addressing: device_addressing(ctx),
            accs: Vec::new(),
            launches_made: 0,
            pristine: None,
            fills: Vec::new(),
        })
    }

    // ----- memory ----------------------------------------------------------------------------

    pub fn alloc(&self, elem: PrimType, shape: Vec<usize>) -> E<DArr> {
        self.alloc_with(elem, shape, None)
    }

    /// A new device array of `shape`, holding `data` (its storage bytes) where given. Errors
    /// are reported at the statement that allocates.
    fn alloc_with(&self, elem: PrimType, shape: Vec<usize>, data: Option<&[u8]>) -> E<DArr> {
        let loc = || {
            self.cur
                .and_then(|(_, l)| l.cloned())
                .or(self.enclosing.clone())
        };
        // Checked: a size that wraps around would make a buffer too small for its array.
        let bytes = shape
            .iter()
            .try_fold(wsize(elem), |n, &d| n.checked_mul(d))
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| {
                Error::runtime(
                    RuntimeKind::Size,
                    &loc(),
                    format!(
                        "size overflow: an array of shape {} of {elem} needs more than 2^64 bytes",
                        shape_str(&shape)
                    ),
                )
            })?
            .max(8);
        let buf = match data {
            None => self.ctx.alloc(bytes),
            Some(data) => self.ctx.alloc_init(bytes, data),
        }
        .map_err(|e| Error::allocation(bytes, &loc(), e))?;
        Ok(DArr {
            buf: Arc::new(buf),
            elem,
            shape,
            off: 0,
        })
    }

    pub fn upload(&self, a: &ArrayValue) -> E<DArr> {
        let bytes = buf_to_bytes(&a.data);
        if bytes.len() as u64 > vkad_vk::MAX_INLINE_WRITE || !bytes.len().is_multiple_of(4) {
            return self.alloc_with(a.elem_type(), a.shape.clone(), Some(&bytes));
        }
        let d = self.alloc(a.elem_type(), a.shape.clone())?;
        if !bytes.is_empty() {
            // Small arrays are written in the next submission (before its launches): a fresh
            // buffer, so nothing earlier can be affected.
            self.batch
                .borrow_mut()
                .writes
                .push((d.buf.clone(), bytes.into_owned()));
        }
        Ok(d)
    }

    pub fn download(&self, a: &DArr) -> E<ArrayValue> {
        let off = (a.off * wsize(a.elem)) as u64;
        read_array(self.ctx, &a.buf, off, a.elem, a.shape.clone())
    }

    fn read_elem(&self, a: &DArr, at: usize) -> E<PrimValue> {
        self.flush()?;
        let ws = wsize(a.elem);
        let bytes = self.ctx.download(&a.buf, (at * ws) as u64, ws as u64)?;
        let b = bytes_to_buf(a.elem, &bytes);
        b.get(0).ok_or_else(|| Error::bug("short download"))
    }

    // ----- environment -------------------------------------------------------------------------

    pub(crate) fn get(&self, v: &ir::VName, loc: &Option<SrcLoc>) -> E<&HVal> {
        match self.env.get(&v.id) {
            Some(HVal::Empty) | None => {
                Err(Error::internal(loc, format!("variable `{v}` is not bound")))
            }
            Some(x) => Ok(x),
        }
    }
    pub(crate) fn val(&self, se: &SubExp, loc: &Option<SrcLoc>) -> E<HVal> {
        match se {
            SubExp::Const(c) => Ok(HVal::P(*c)),
            SubExp::Var(v) => self.get(v, loc).cloned(),
        }
    }
    pub(crate) fn prim(&self, se: &SubExp, loc: &Option<SrcLoc>) -> E<PrimValue> {
        match self.val(se, loc)? {
            HVal::P(p) => Ok(p),
            _ => Err(Error::internal(loc, "expected a scalar")),
        }
    }
    pub(crate) fn arr(&self, v: &ir::VName, loc: &Option<SrcLoc>) -> E<DArr> {
        match self.get(v, loc)? {
            HVal::A(a) => Ok(a.clone()),
            _ => Err(Error::internal(loc, format!("`{v}` is not an array"))),
        }
    }
    pub(crate) fn size(&self, se: &SubExp, loc: &Option<SrcLoc>) -> E<usize> {
        let p = self.prim(se, loc)?;
        match p.as_i128() {
            Some(n) if n >= 0 => usize::try_from(n).map_err(|_| {
                Error::runtime(RuntimeKind::Size, loc, format!("size {n} is too large"))
            }),
            Some(n) => Err(Error::runtime(
                RuntimeKind::Size,
                loc,
                format!("negative size {n}"),
            )),
            None => Err(Error::internal(loc, "size of a non-integer")),
        }
    }
    pub(crate) fn set(&mut self, v: &ir::VName, x: HVal) {
        self.env.insert(v.id, x);
    }
    /// Forgets `v` (its value, when nothing else holds it, is freed).
    pub(crate) fn unset(&mut self, v: &ir::VName) -> Option<HVal> {
        self.env.remove(&v.id)
    }
    pub(crate) fn take(&mut self, v: &ir::VName, loc: &Option<SrcLoc>) -> E<DArr> {
        let a = self.arr(v, loc)?;
        self.env.insert(v.id, HVal::Empty);
        Ok(a)
    }
    fn clear_body(&mut self, body: &Body) {
        for s in &body.stms {
            for p in &s.pat.elems {
                self.env.remove(&p.name.id);
            }
        }
    }

    pub(crate) fn host_ty(&self, v: &ir::VName) -> Option<HostTy> {
        match self.env.get(&v.id)? {
            HVal::P(p) => Some(HostTy::Prim(p.prim_type())),
            HVal::A(a) => Some(HostTy::Arr(a.elem, a.shape.len())),
            HVal::Acc(k) => {
                let st = self.accs.get(*k)?;
                Some(HostTy::Acc {
                    elems: st.arrs.iter().map(|a| a.elem).collect(),
                    ranks: st.arrs.iter().map(|a| a.shape.len()).collect(),
                    rank: st.shape.len(),
                    op: st.op.map_or(0, |o| o as *const ir::Operator as usize),
                })
            }
            HVal::Empty => None,
        }
    }

    /// Array `m` of the accumulator `v` (a running `withacc`'s).
    fn acc_arr(&self, v: &ir::VName, m: usize, loc: &Option<SrcLoc>) -> E<&DArr> {
        match self.get(v, loc)? {
            HVal::Acc(k) => self
                .accs
                .get(*k)
                .and_then(|s| s.arrs.get(m))
                .ok_or_else(|| Error::internal(loc, "accumulator outside its withacc")),
            _ => Err(Error::internal(loc, format!("`{v}` is not an accumulator"))),
        }
    }

    // ----- launching ---------------------------------------------------------------------------

    fn check_device(&self, code: &KernelCode) -> E<()> {
        let info = self.ctx.info();
        if code.uses_f64 && !info.float64 {
            return Err(Error::NotSupported {
                what: "float64".into(),
                loc: None,
                device: Some(info.name.clone()),
            });
        }
        if !info.int64 {
            return Err(Error::NotSupported {
                what: "int64 (vkad's kernels index with 64-bit integers)".into(),
                loc: None,
                device: Some(info.name.clone()),
            });
        }
        Ok(())
    }

    /// Has `code`'s pipeline made with the next submission's new pipelines, without launching
    /// it. For a kernel that this run skips but runs with more elements launch (the second
    /// pass of a reduction whose first pass ran in one workgroup), so that later calls of a
    /// compiled program with inputs of that size class make no pipeline. A kernel the device
    /// cannot run is left alone (its launch reports that).
    pub(crate) fn prepare(&self, code: &Arc<Kernel>) {
        if self.check_device(code).is_err() {
            return;
        }
        let bindings = 2 + self.bound(code.binds.len()) as u32;
        let mut b = self.batch.borrow_mut();
        let listed = b
            .prepare
            .iter()
            .any(|(k, n)| Arc::ptr_eq(k, code) && *n == bindings);
        if !listed && !code.has_pipeline(self.ctx, bindings) {
            b.prepare.push((code.clone(), bindings));
        }
    }

    /// How many of a kernel's `arrays` arrays are descriptor bindings (after the status and
    /// argument buffers): all where kernels reach arrays through descriptors, none with
    /// device addresses.
    fn bound(&self, arrays: usize) -> usize {
        match self.addressing {
            Addressing::Descriptors => arrays,
            Addressing::Addresses => 0,
        }
    }

    /// Launches a kernel over `groups` workgroups. `outs` and `tmps` are the buffers for
    /// `BindSrc::Out` / `BindSrc::Tmp`.
    pub(crate) fn launch(
        &mut self,
        code: &Arc<Kernel>,
        lits: &[u64],
        outs: &[Arc<Buffer>],
        tmps: &[Arc<Buffer>],
        groups: u32,
        loc: &Option<SrcLoc>,
    ) -> E<()> {
        self.check_device(code)?;
        self.launches_made += 1;
        let mut words = Vec::with_capacity(code.args.len().max(1));
        for a in &code.args {
            let w = match a {
                ArgSrc::Sub(se) => encode(self.prim(se, loc)?),
                ArgSrc::Off(v) => self.arr(v, loc)?.off as u64,
                ArgSrc::Dim(v, k) => self.arr(v, loc)?.shape.get(*k).copied().unwrap_or(0) as u64,
                ArgSrc::Lit(i) => lits.get(*i).copied().unwrap_or(0),
                ArgSrc::AccOff(v, m) => self.acc_arr(v, *m, loc)?.off as u64,
                ArgSrc::AccDim(v, m, k) => {
                    let a = self.acc_arr(v, *m, loc)?;
                    a.shape.get(*k).copied().unwrap_or(0) as u64
                }
            };
            words.push(w);
        }
        let mut arrays: Vec<Arc<Buffer>> = Vec::with_capacity(code.binds.len());
        for b in &code.binds {
            arrays.push(match b {
                BindSrc::Var(v) => self.arr(v, loc)?.buf.clone(),
                BindSrc::AccArr(v, m) => self.acc_arr(v, *m, loc)?.buf.clone(),
                BindSrc::Out(k) => outs
                    .get(*k)
                    .cloned()
                    .ok_or_else(|| Error::bug("missing output buffer"))?,
                BindSrc::Tmp(k) => tmps
                    .get(*k)
                    .cloned()
                    .ok_or_else(|| Error::bug("missing temporary buffer"))?,
            });
        }
        // A launch that reaches a filled buffer may write it (and a freed one is forgotten).
        self.fills.retain(|f| f.alive() && !f.in_any(&arrays));
        if self.addressing == Addressing::Addresses {
            // The arrays' device addresses come first (see `codegen::gen::Addressing`).
            let mut addrs = Vec::with_capacity(arrays.len() + words.len());
            for b in &arrays {
                addrs.push(b.device_address().ok_or_else(|| {
                    Error::bug(
                        "a device array without a device address (buffer device \
                     address mode)",
                    )
                })?);
            }
            addrs.append(&mut words);
            words = addrs;
        }
        if words.is_empty() {
            words.push(0);
        }
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let bound = self.bound(arrays.len());
        let name = self.launch_name(loc);
        self.enqueue(Launch {
            code: code.clone(),
            bindings: 2 + bound as u32,
            args: bytes,
            arrays,
            bound,
            groups: groups.max(1),
            errors: code.errors.clone(),
            loc: loc.clone(),
            name,
        })
    }

    /// The name profiles show for the next launch (or transfer) of the statement being run:
    /// `label.pass @ loc`.
    fn launch_name(&mut self, loc: &Option<SrcLoc>) -> String {
        self.pass += 1;
        match loc {
            Some(l) => format!("{}.{} @ {l}", self.label, self.pass),
            None => format!("{}.{}", self.label, self.pass),
        }
    }

    /// Whether kernels should be laid out for a GPU (coalesced accesses, tree combinations)
    /// rather than for a CPU driver such as lavapipe (long contiguous runs per thread).
    pub(crate) fn gpu_layout(&self) -> bool {
        !cpu_device(self.ctx)
    }

    pub(crate) fn groups_for(n: usize) -> u32 {
        n.div_ceil(WG as usize).clamp(1, 65535) as u32
    }

    pub(crate) fn builtin(
        &mut self,
        key: String,
        make: impl FnOnce(&ir::Program) -> E<KernelCode>,
    ) -> E<Arc<Kernel>> {
        if let Some(k) = self.kernels.builtin.get(&key) {
            return Ok(k.clone());
        }
        let k = Arc::new(Kernel::from(make(self.prog)?));
        self.note(&key, &k);
        self.kernels.builtin.insert(key, k.clone());
        self.kernels.generated += 1;
        Ok(k)
    }

    #[allow(clippy::too_many_arguments)] // the two sides of a strided copy
    /// `dst[dbase + ...] = src[sbase + ...]` over dims (size, src stride, dst stride), or a fill
    /// with `value` when `src` is None.
    pub(crate) fn strided(
        &mut self,
        src: Option<&Arc<Buffer>>,
        sbase: i64,
        value: u64,
        dst: &Arc<Buffer>,
        elem: PrimType,
        dbase: i64,
        dims: &[(usize, i64, i64)],
        loc: &Option<SrcLoc>,
    ) -> E<()> {
        let n: usize = dims.iter().map(|d| d.0).product();
        if n == 0 {
            return Ok(());
        }
        let dims = &merge_dims(dims);
        if let Some(op) = transfer_op(src, sbase, value, dst, elem, dbase, dims) {
            return self.enqueue_transfer(op, loc);
        }
        let wk = word_kind(elem);
        let rank = dims.len();
        let scalar = src.is_none();
        let code = self.builtin(format!("strided {wk:?} {rank} {scalar}"), |p| {
            copy::strided(p, wk, rank, scalar)
        })?;
        let mut lits = vec![
            n as u64,
            if scalar { value } else { sbase as u64 },
            dbase as u64,
        ];
        for &(s, ss, ds) in dims {
            lits.extend([s as u64, ss as u64, ds as u64]);
        }
        let tmps: Vec<Arc<Buffer>> = match src {
            Some(s) => vec![s.clone(), dst.clone()],
            None => vec![dst.clone(), dst.clone()],
        };
        self.launch(&code, &lits, &[], &tmps, Self::groups_for(n), loc)
    }

    /// A fresh contiguous copy of an array.
    pub(crate) fn copy(&mut self, a: &DArr, loc: &Option<SrcLoc>) -> E<DArr> {
        let d = self.alloc(a.elem, a.shape.clone())?;
        let n = a.len();
        self.strided(
            Some(&a.buf),
            a.off as i64,
            0,
            &d.buf,
            a.elem,
            0,
            &[(n, 1, 1)],
            loc,
        )?;
        Ok(d)
    }

    /// An array that may be updated in place: `a`, or a copy of it where another value shares
    /// its buffer. The launches and uploads recorded for the next submission share no value:
    /// they run before anything recorded after them (a barrier separates consecutive
    /// launches), so an update recorded now may write in place the buffer they read or
    /// write.
    fn unique(&mut self, a: DArr, loc: &Option<SrcLoc>) -> E<DArr> {
        let pending = self.batch.borrow().uses(&a.buf);
        if Arc::strong_count(&a.buf) == 1 + pending {
            Ok(a)
        } else {
            self.copy(&a, loc)
        }
    }

    // ----- bodies and statements ----------------------------------------------------------------

    fn body(&mut self, body: &'a Body, loc: &Option<SrcLoc>) -> E<Vec<HVal>> {
        let mut r = Ok(());
        for s in &body.stms {
            r = self.stm(s);
            if r.is_err() {
                break;
            }
        }
        let out = r.and_then(|_| body.result.iter().map(|se| self.val(se, loc)).collect());
        self.clear_body(body);
        out
    }

    fn bind(&mut self, stm: &Stm, vals: Vec<HVal>) -> E<()> {
        if vals.len() != stm.pat.elems.len() {
            return Err(Error::internal(&stm.loc, "pattern arity"));
        }
        for (p, v) in stm.pat.elems.iter().zip(vals) {
            self.set(&p.name, v);
        }
        Ok(())
    }

    /// Names the launches that follow (`label.pass @ loc` in profiles) until the next statement.
    pub(crate) fn begin_launches(&mut self, label: &'static str) {
        self.label = label;
        self.pass = 0;
    }

    /// Records a newly made kernel module when recording.
    fn note(&mut self, name: &str, code: &KernelCode) {
        let cur = self.cur;
        if let Some(rec) = &mut self.record {
            rec.push(CompiledModule::new(name, code, cur));
        }
    }

    /// Runs one statement. A statement without a location (code that AD or lowering made)
    /// reports errors and names its kernels with the location of the innermost enclosing
    /// `loop`/`if`/`with_acc` that has one, so that profiles attribute every launch.
    pub(crate) fn stm(&mut self, stm: &'a Stm) -> E<()> {
        let saved = self.enclosing.clone();
        if stm.loc.is_some()
            && matches!(
                stm.exp,
                Exp::Loop { .. } | Exp::If { .. } | Exp::WithAcc { .. }
            )
        {
            self.enclosing = stm.loc.clone();
        }
        let loc = match (&stm.loc, &saved) {
            (None, Some(_)) => saved.clone(),
            _ => stm.loc.clone(),
        };
        let r = self.stm_at(stm, &loc);
        self.enclosing = saved;
        r
    }

    fn stm_at(&mut self, stm: &'a Stm, loc: &Option<SrcLoc>) -> E<()> {
        self.cur = Some((stm, stm.loc.as_ref()));
        self.label = label(&stm.exp);
        self.pass = 0;
        let lift = |m: String| Error::runtime(RuntimeKind::Arithmetic, loc, m);
        match &stm.exp {
            Exp::SubExp(se) => {
                let v = self.val(se, loc)?;
                self.bind(stm, vec![v])
            }
            Exp::UnOp(op, a) => {
                let r = primops::eval_unop(*op, self.prim(a, loc)?).map_err(lift)?;
                self.bind(stm, vec![HVal::P(r)])
            }
            Exp::BinOp(op, a, b) => {
                let r = primops::eval_binop(*op, self.prim(a, loc)?, self.prim(b, loc)?)
                    .map_err(lift)?;
                self.bind(stm, vec![HVal::P(r)])
            }
            Exp::CmpOp(op, a, b) => {
                let r = primops::eval_cmpop(*op, self.prim(a, loc)?, self.prim(b, loc)?)
                    .map_err(lift)?;
                self.bind(stm, vec![HVal::P(PrimValue::Bool(r))])
            }
            Exp::Conv(op, a) => {
                let r = primops::eval_conv(*op, self.prim(a, loc)?).map_err(lift)?;
                self.bind(stm, vec![HVal::P(r)])
            }
            Exp::Math(f, args) => {
                let xs = args
                    .iter()
                    .map(|a| self.prim(a, loc))
                    .collect::<E<Vec<_>>>()?;
                let r = primops::eval_math(*f, &xs).map_err(lift)?;
                self.bind(stm, vec![HVal::P(r)])
            }
            Exp::Assert { cond, msg, args } => {
                if self.prim(cond, loc)? != PrimValue::Bool(true) {
                    let args = args
                        .iter()
                        .map(|a| Ok(vkad_core::ir::assert_arg_text(&self.prim(a, loc)?)))
                        .collect::<E<Vec<_>>>()?;
                    let msg = vkad_core::ir::assert_message(msg, &args);
                    return Err(Error::runtime(RuntimeKind::Assert, loc, msg));
                }
                self.bind(stm, vec![])
            }
            // Host control flow is the runtime's: plan steps, never statements of their own.
            Exp::If { .. } | Exp::Loop { .. } | Exp::Apply { .. } | Exp::WithAcc { .. } => Err(
                Error::internal(loc, "host control flow as an executor statement"),
            ),
            Exp::Index(v, idx) => {
                let a = self.arr(v, loc)?;
                let r = self.index(&a, idx, loc)?;
                self.bind(stm, vec![r])
            }
            Exp::Update(v, idx, x) => {
                let x = self.val(x, loc)?;
                let a = self.take(v, loc)?;
                let r = self.update(a, idx, x, loc)?;
                self.bind(stm, vec![HVal::A(r)])
            }
            Exp::Iota {
                n,
                start,
                stride,
                it,
            } => {
                let n = self.size(n, loc)?;
                let s = self.prim(start, loc)?.as_i128().unwrap_or(0) as i64;
                let d = self.prim(stride, loc)?.as_i128().unwrap_or(0) as i64;
                let out = self.alloc(PrimType::Int(*it), vec![n])?;
                if n > 0 {
                    let it = *it;
                    let code = self.builtin(format!("iota {it:?}"), |p| copy::iota(p, it))?;
                    self.launch(
                        &code,
                        &[n as u64, s as u64, d as u64],
                        &[],
                        std::slice::from_ref(&out.buf),
                        Self::groups_for(n),
                        loc,
                    )?;
                }
                self.bind(stm, vec![HVal::A(out)])
            }
            Exp::Replicate { shape, value } => {
                let dims = shape
                    .iter()
                    .map(|d| self.size(d, loc))
                    .collect::<E<Vec<_>>>()?;
                let r = match self.val(value, loc)? {
                    HVal::P(p) => {
                        let out = self.alloc(p.prim_type(), dims.clone())?;
                        let n = out.len();
                        self.strided(
                            None,
                            0,
                            encode(p),
                            &out.buf,
                            p.prim_type(),
                            0,
                            &[(n, 0, 1)],
                            loc,
                        )?;
                        self.fills.push(undo::Fill::new(&out.buf, n, encode(p)));
                        out
                    }
                    HVal::A(a) => {
                        let mut sh = dims.clone();
                        sh.extend(&a.shape);
                        let out = self.alloc(a.elem, sh.clone())?;
                        let nat = natural(&sh);
                        let inner = natural(&a.shape);
                        let mut d: Vec<(usize, i64, i64)> = Vec::new();
                        for (k, &n) in dims.iter().enumerate() {
                            d.push((n, 0, nat[k]));
                        }
                        for (k, &n) in a.shape.iter().enumerate() {
                            d.push((n, inner[k], nat[dims.len() + k]));
                        }
                        self.strided(
                            Some(&a.buf.clone()),
                            a.off as i64,
                            0,
                            &out.buf,
                            a.elem,
                            0,
                            &d,
                            loc,
                        )?;
                        out
                    }
                    HVal::Acc(_) | HVal::Empty => {
                        return Err(Error::internal(loc, "replicate of nothing"))
                    }
                };
                self.bind(stm, vec![HVal::A(r)])
            }
            Exp::ArrayLit { elems, row } => {
                let r = self.array_lit(elems, row, loc)?;
                self.bind(stm, vec![HVal::A(r)])
            }
            Exp::Concat { dim, arrs, w } => {
                let arrs = arrs
                    .iter()
                    .map(|a| self.arr(a, loc))
                    .collect::<E<Vec<_>>>()?;
                let w = self.size(w, loc)?;
                let r = self.concat(*dim, &arrs, w, loc)?;
                self.bind(stm, vec![HVal::A(r)])
            }
            Exp::Copy(v) => {
                let x = self.get(v, loc)?.clone();
                self.bind(stm, vec![x])
            }
            Exp::SortByKey { keys, bits } => {
                let k = self.arr(keys, loc)?;
                let bits = match self.prim(bits, loc)? {
                    PrimValue::I64(b) => b,
                    _ => return Err(Error::internal(loc, "sort_by_key bits not i64")),
                };
                let (s, p) = self.sort_by_key(&k, bits, loc)?;
                self.bind(stm, vec![HVal::A(s), HVal::A(p)])
            }
            Exp::Reshape(shape, v) => {
                let a = self.arr(v, loc)?;
                let dims = shape
                    .iter()
                    .map(|d| self.size(d, loc))
                    .collect::<E<Vec<_>>>()?;
                let n = dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
                if n != Some(a.len()) {
                    return Err(Error::runtime(
                        RuntimeKind::Shape,
                        loc,
                        format!(
                            "cannot reshape array of shape {} to shape {}",
                            shape_str(&a.shape),
                            shape_str(&dims)
                        ),
                    ));
                }
                self.bind(stm, vec![HVal::A(DArr { shape: dims, ..a })])
            }
            Exp::Rearrange(perm, v) => {
                let a = self.arr(v, loc)?;
                let mut seen = vec![false; a.shape.len()];
                if perm.len() != a.shape.len()
                    || perm
                        .iter()
                        .any(|&p| p >= seen.len() || std::mem::replace(&mut seen[p], true))
                {
                    return Err(Error::runtime(
                        RuntimeKind::Shape,
                        loc,
                        format!("invalid permutation {perm:?}"),
                    ));
                }
                let nat = natural(&a.shape);
                let shape: Vec<usize> = perm.iter().map(|&p| a.shape[p]).collect();
                let out = self.alloc(a.elem, shape.clone())?;
                let onat = natural(&shape);
                let dims: Vec<(usize, i64, i64)> = perm
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| (shape[i], nat[p], onat[i]))
                    .collect();
                self.strided(
                    Some(&a.buf.clone()),
                    a.off as i64,
                    0,
                    &out.buf,
                    a.elem,
                    0,
                    &dims,
                    loc,
                )?;
                self.bind(stm, vec![HVal::A(out)])
            }
            // SOACs are the plan's: segmented operations and primitives, never statements.
            Exp::Soac(_) => Err(Error::internal(loc, "a SOAC as an executor statement")),
            Exp::UpdAcc { acc, idx, vals } => {
                let r = self.upd_acc(acc, idx, vals, loc)?;
                self.bind(stm, vec![r])
            }
            Exp::Jvp { .. } | Exp::Vjp { .. } | Exp::WithVjp { .. } => Err(Error::unsupported(
                codegen::thread::construct_name(&stm.exp),
                loc,
            )),
        }
    }

    /// Runs a host-level `loop` on `state` (the executor, or a runtime around it): `body` runs
    /// once per iteration with the parameters (and the `for` index) bound and returns their new
    /// values; the results are the parameters' final values.
    pub(crate) fn loop_then<S: acc::HasExec<'a>>(
        state: &mut S,
        params: &[(ir::Param, SubExp)],
        form: &LoopForm,
        loc: &Option<SrcLoc>,
        mut body: impl FnMut(&mut S) -> E<Vec<HVal>>,
    ) -> E<Vec<HVal>> {
        let ex = state.exec();
        let inits = params
            .iter()
            .map(|(_, se)| ex.val(se, loc))
            .collect::<E<Vec<_>>>()?;
        for ((p, _), v) in params.iter().zip(inits) {
            ex.set(&p.name, v);
        }
        let mut step = |st: &mut S| -> E<()> {
            let r = body(st)?;
            for ((p, _), v) in params.iter().zip(r) {
                st.exec().set(&p.name, v);
            }
            Ok(())
        };
        match form {
            LoopForm::For { i, it, bound } => {
                let n = state.exec().prim(bound, loc)?.as_i128().unwrap_or(0).max(0);
                let mut k: i128 = 0;
                while k < n {
                    state.exec().set(i, HVal::P(PrimValue::int(*it, k)));
                    step(state)?;
                    k += 1;
                }
                state.exec().env.remove(&i.id);
            }
            LoopForm::While(c) => loop {
                let go = match state.exec().get(c, loc)? {
                    HVal::P(PrimValue::Bool(b)) => *b,
                    _ => return Err(Error::internal(loc, "while condition")),
                };
                if !go {
                    break;
                }
                step(state)?;
            },
        }
        let ex = state.exec();
        Ok(params
            .iter()
            .map(|(p, _)| ex.env.remove(&p.name.id).unwrap_or(HVal::Empty))
            .collect())
    }

    // ----- indexing ------------------------------------------------------------------------------

    /// Resolves an index: base offset (elements) and result dims (size, stride), with the
    /// interpreter's bounds checks and messages.
    fn resolve(
        &self,
        a: &DArr,
        idx: &[DimIndex],
        loc: &Option<SrcLoc>,
    ) -> E<(i64, Vec<(usize, i64)>)> {
        if idx.len() > a.shape.len() {
            return Err(Error::internal(loc, "too many indices"));
        }
        let nat = natural(&a.shape);
        let mut base = a.off as i64;
        let mut dims = Vec::new();
        let mut shown = Vec::new();
        let mut ok = true;
        for (k, d) in idx.iter().enumerate() {
            let n = a.shape[k] as i128;
            let s = nat[k];
            match d {
                DimIndex::Fix(i) => {
                    let i = self.prim(i, loc)?.as_i128().unwrap_or(-1);
                    shown.push(i.to_string());
                    if i < 0 || i >= n {
                        ok = false;
                    } else {
                        base += i as i64 * s;
                    }
                }
                DimIndex::Slice { start, len, stride } => {
                    let st = self.prim(start, loc)?.as_i128().unwrap_or(-1);
                    let ln = self.prim(len, loc)?.as_i128().unwrap_or(-1);
                    let sd = self.prim(stride, loc)?.as_i128().unwrap_or(0);
                    shown.push(if sd == 1 {
                        format!("{}:{}", st, st + ln)
                    } else {
                        format!("{}:{}:{}", st, st + ln * sd, sd)
                    });
                    let last = st + (ln - 1) * sd;
                    let valid = ln == 0
                        || ln > 0 && sd != 0 && (0..n).contains(&st) && (0..n).contains(&last);
                    if !valid {
                        ok = false;
                    } else {
                        if ln > 0 {
                            base += st as i64 * s;
                        }
                        dims.push((ln as usize, sd as i64 * s));
                    }
                }
            }
        }
        if !ok {
            return Err(Error::runtime(
                RuntimeKind::Bounds,
                loc,
                format!(
                    "index [{}] out of bounds for array of shape {}",
                    shown.join(", "),
                    shape_str(&a.shape)
                ),
            ));
        }
        for (&n, &s) in a.shape.iter().zip(&nat).skip(idx.len()) {
            dims.push((n, s));
        }
        Ok((base, dims))
    }

    fn index(&mut self, a: &DArr, idx: &[DimIndex], loc: &Option<SrcLoc>) -> E<HVal> {
        let (base, dims) = self.resolve(a, idx, loc)?;
        if dims.is_empty() {
            return Ok(HVal::P(self.read_elem(a, base as usize)?));
        }
        let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
        let nat = natural(&shape);
        let n: usize = shape.iter().product();
        if n > 0 && nat.iter().zip(&dims).all(|(x, y)| *x == y.1 || y.0 <= 1) {
            return Ok(HVal::A(DArr {
                buf: a.buf.clone(),
                elem: a.elem,
                shape,
                off: base as usize,
            }));
        }
        let out = self.alloc(a.elem, shape)?;
        let d: Vec<(usize, i64, i64)> = dims
            .iter()
            .zip(&nat)
            .map(|(&(s, st), &o)| (s, st, o))
            .collect();
        self.strided(Some(&a.buf.clone()), base, 0, &out.buf, a.elem, 0, &d, loc)?;
        Ok(HVal::A(out))
    }

    fn update(&mut self, a: DArr, idx: &[DimIndex], x: HVal, loc: &Option<SrcLoc>) -> E<DArr> {
        let a = self.unique(a, loc)?;
        let (base, dims) = self.resolve(&a, idx, loc)?;
        let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
        match x {
            HVal::P(p) => {
                // A fill (of one element for a single index), a transfer command or a kernel
                // (`Exec::strided`): it runs in order with the launches before it, in the same
                // submission.
                let d: Vec<(usize, i64, i64)> = if dims.is_empty() {
                    vec![(1, 0, 1)]
                } else {
                    dims.iter().map(|&(s, st)| (s, 0, st)).collect()
                };
                self.strided(None, 0, encode(p), &a.buf.clone(), a.elem, base, &d, loc)?;
            }
            HVal::A(src) if src.shape == shape => {
                let nat = natural(&shape);
                let d: Vec<(usize, i64, i64)> = dims
                    .iter()
                    .zip(&nat)
                    .map(|(&(s, st), &o)| (s, o, st))
                    .collect();
                self.strided(
                    Some(&src.buf.clone()),
                    src.off as i64,
                    0,
                    &a.buf.clone(),
                    a.elem,
                    base,
                    &d,
                    loc,
                )?;
            }
            HVal::A(src) => {
                return Err(Error::runtime(
                    RuntimeKind::Shape,
                    loc,
                    format!(
                        "cannot write a value of type {}{} into a slice of shape {}",
                        shape_str(&src.shape),
                        src.elem,
                        shape_str(&shape)
                    ),
                ))
            }
            HVal::Acc(_) | HVal::Empty => return Err(Error::internal(loc, "update with nothing")),
        }
        Ok(a)
    }

    fn array_lit(&mut self, elems: &[SubExp], row: &Type, loc: &Option<SrcLoc>) -> E<DArr> {
        let elem = row
            .elem()
            .ok_or_else(|| Error::internal(loc, "array literal of accumulators"))?;
        let vals = elems
            .iter()
            .map(|e| self.val(e, loc))
            .collect::<E<Vec<_>>>()?;
        if vals.iter().all(|v| matches!(v, HVal::P(_))) && row.rank() == 0 {
            let mut b = HBuf::with_capacity(elem, vals.len());
            for v in &vals {
                if let HVal::P(p) = v {
                    b.push(*p);
                }
            }
            return self.upload(&ArrayValue {
                shape: vec![vals.len()],
                data: b,
            });
        }
        let mut row_shape: Option<Vec<usize>> = None;
        for v in &vals {
            if let HVal::A(a) = v {
                match &row_shape {
                    None => row_shape = Some(a.shape.clone()),
                    Some(s) if *s != a.shape => {
                        return Err(Error::runtime(
                            RuntimeKind::Shape,
                            loc,
                            format!(
                                "irregular array: a row of shape {} after rows of shape {}",
                                shape_str(&a.shape),
                                shape_str(s)
                            ),
                        ))
                    }
                    _ => {}
                }
            }
        }
        let rs = match row_shape {
            Some(s) => s,
            None => row
                .shape()
                .iter()
                .map(|d| self.size(d, loc))
                .collect::<E<Vec<_>>>()?,
        };
        let mut shape = vec![vals.len()];
        shape.extend(&rs);
        let out = self.alloc(elem, shape)?;
        let rl: usize = rs.iter().product();
        for (i, v) in vals.iter().enumerate() {
            if let HVal::A(a) = v {
                self.strided(
                    Some(&a.buf.clone()),
                    a.off as i64,
                    0,
                    &out.buf.clone(),
                    elem,
                    (i * rl) as i64,
                    &[(rl, 1, 1)],
                    loc,
                )?;
            }
        }
        Ok(out)
    }

    fn concat(&mut self, dim: usize, arrs: &[DArr], w: usize, loc: &Option<SrcLoc>) -> E<DArr> {
        let first = arrs
            .first()
            .ok_or_else(|| Error::internal(loc, "concat of no arrays"))?;
        if dim >= first.shape.len() {
            return Err(Error::internal(loc, "concat beyond the rank"));
        }
        let mut total = 0;
        for a in arrs {
            let same = a.shape.len() == first.shape.len()
                && a.shape
                    .iter()
                    .zip(&first.shape)
                    .enumerate()
                    .all(|(k, (x, y))| k == dim || x == y);
            if !same {
                return Err(Error::runtime(
                    RuntimeKind::Shape,
                    loc,
                    format!(
                        "cannot concatenate arrays of shapes {} and {}",
                        shape_str(&first.shape),
                        shape_str(&a.shape)
                    ),
                ));
            }
            total += a.shape[dim];
        }
        if total != w {
            return Err(Error::runtime(
                RuntimeKind::Shape,
                loc,
                format!("concatenation has size {total}, expected {w}"),
            ));
        }
        let mut shape = first.shape.clone();
        shape[dim] = total;
        let out = self.alloc(first.elem, shape.clone())?;
        let onat = natural(&shape);
        let mut pos = 0usize;
        for a in arrs {
            let nat = natural(&a.shape);
            let d: Vec<(usize, i64, i64)> = (0..a.shape.len())
                .map(|k| (a.shape[k], nat[k], onat[k]))
                .collect();
            self.strided(
                Some(&a.buf.clone()),
                a.off as i64,
                0,
                &out.buf.clone(),
                a.elem,
                pos as i64 * onat[dim],
                &d,
                loc,
            )?;
            pos += a.shape[dim];
        }
        Ok(out)
    }
}

/// The dimensions `(size, source stride, destination stride)` of a strided copy or fill with
/// the same elements in the same order and as few dimensions as possible: dimensions of size
/// 1 are dropped, and a dimension is merged into the one inside it where both strides
/// continue it (`outer stride = inner stride · inner size`, on both sides). Each dimension
/// left costs every element of the kernel a 64-bit division, which on lavapipe makes a
/// four-dimensional copy of contiguous rows several times slower than a one-dimensional one.
/// At least one dimension is kept.
fn merge_dims(dims: &[(usize, i64, i64)]) -> Vec<(usize, i64, i64)> {
    let mut out: Vec<(usize, i64, i64)> = Vec::with_capacity(dims.len());
    for &(s, ss, ds) in dims.iter().filter(|d| d.0 != 1) {
        match out.last_mut() {
            Some(o)
                if i64::try_from(s).is_ok_and(|si| {
                    ss.checked_mul(si) == Some(o.1) && ds.checked_mul(si) == Some(o.2)
                }) =>
            {
                *o = (o.0 * s, ss, ds);
            }
            _ => out.push((s, ss, ds)),
        }
    }
    if out.is_empty() {
        out.push((1, 0, 0));
    }
    out
}

/// A strided copy or fill ([`Exec::strided`], its dimensions merged) as a transfer command,
/// where it is one: a copy of one contiguous range into another buffer, or a fill of a
/// contiguous range with a value whose storage repeats a 4-byte word (any value of 32 bits or
/// less, a 64-bit one with equal halves). Ranges outside their buffers (an error the kernel
/// would report at this statement) and copies within one Vulkan buffer stay kernels.
#[allow(clippy::too_many_arguments)] // the two sides of a strided copy
fn transfer_op(
    src: Option<&Arc<Buffer>>,
    sbase: i64,
    value: u64,
    dst: &Arc<Buffer>,
    elem: PrimType,
    dbase: i64,
    dims: &[(usize, i64, i64)],
) -> Option<TransferOp> {
    let &[(n, ss, ds)] = dims else {
        return None;
    };
    let ws = wsize(elem) as u64;
    let size = (n as u64).checked_mul(ws)?;
    let dst_offset = u64::try_from(dbase).ok()?.checked_mul(ws)?;
    let contiguous = |stride: i64| n == 1 || stride == 1;
    let fits = |b: &Buffer, offset: u64| offset.checked_add(size).is_some_and(|e| e <= b.size());
    if size == 0 || !fits(dst, dst_offset) {
        return None;
    }
    match src {
        Some(s) if contiguous(ss) && contiguous(ds) && s.raw() != dst.raw() => {
            let src_offset = u64::try_from(sbase).ok()?.checked_mul(ws)?;
            fits(s, src_offset).then(|| TransferOp::Copy {
                src: s.clone(),
                src_offset,
                dst: dst.clone(),
                dst_offset,
                size,
            })
        }
        None if contiguous(ds) => {
            let (lo, hi) = (value as u32, (value >> 32) as u32);
            (ws == 4 || lo == hi).then(|| TransferOp::Fill {
                dst: dst.clone(),
                offset: dst_offset,
                size,
                word: lo,
            })
        }
        _ => None,
    }
}

/// Row-major strides of a shape.
pub fn natural(shape: &[usize]) -> Vec<i64> {
    let mut s = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for k in (0..shape.len()).rev() {
        s[k] = acc;
        acc = acc.saturating_mul(shape[k] as i64);
    }
    s
}

/// The host array of `shape` whose `elem`s are stored in `buf` from byte `off` (see the crate
/// docs for the storage layout). Elements stored as they are are read straight into the host
/// array's memory; the others are converted.
pub(crate) fn read_array(
    ctx: &Context,
    buf: &Buffer,
    off: u64,
    elem: PrimType,
    shape: Vec<usize>,
) -> E<ArrayValue> {
    let n: usize = shape.iter().product();
    let data = if n == 0 {
        HBuf::with_capacity(elem, 0)
    } else if let Some(mut b) = zeroed_words(elem, n) {
        let bytes = words_mut(&mut b).ok_or_else(|| Error::bug("not a word buffer"))?;
        ctx.download_into(buf, off, bytes)?;
        b
    } else {
        bytes_to_buf(elem, &ctx.download(buf, off, (n * wsize(elem)) as u64)?)
    };
    Ok(ArrayValue { shape, data })
}

/// The storage bytes (see the crate docs) of a host array.
pub fn array_to_bytes(a: &ArrayValue) -> Cow<'_, [u8]> {
    buf_to_bytes(&a.data)
}

/// Bytes per element in storage: 4, or 8 for 64-bit types.
pub fn storage_bytes(t: PrimType) -> usize {
    wsize(t)
}

/// The construct a statement's kernels implement.
pub fn label(e: &Exp) -> &'static str {
    match e {
        Exp::Index(..) => "index",
        Exp::Update(..) => "update",
        Exp::Iota { .. } => "iota",
        Exp::Replicate { .. } => "replicate",
        Exp::ArrayLit { .. } => "array-literal",
        Exp::Concat { .. } => "concat",
        Exp::Copy(..) => "copy",
        Exp::Reshape(..) => "reshape",
        Exp::Rearrange(..) => "transpose",
        Exp::SortByKey { .. } => "sort",
        _ => "kernel",
    }
}

#[cfg(test)]
mod tests {
    use super::merge_dims;

    #[test]
    fn contiguous_rows_merge_into_one_dimension() {
        // `tape with [t0:+k] = rows` of a [n][2][2][14] tape: rows contiguous on both sides.
        let d = [(5, 56, 56), (2, 28, 28), (2, 14, 14), (14, 1, 1)];
        assert_eq!(merge_dims(&d), vec![(5 * 56, 1, 1)]);
        // A fill (source strides 0) of the same slice.
        let f = [(5, 0, 56), (2, 0, 28), (2, 0, 14), (14, 0, 1)];
        assert_eq!(merge_dims(&f), vec![(5 * 56, 0, 1)]);
    }

    #[test]
    fn strided_dimensions_stay() {
        // A column of a [4][3] matrix into a fresh [4]: nothing to merge.
        assert_eq!(merge_dims(&[(4, 3, 1)]), vec![(4, 3, 1)]);
        // A transposing copy keeps both dimensions; a size-1 dimension goes.
        let t = [(3, 1, 4), (1, 9, 9), (4, 3, 1)];
        assert_eq!(merge_dims(&t), vec![(3, 1, 4), (4, 3, 1)]);
        // Rows of a wider array into a contiguous one: the inner dimension stays separate.
        assert_eq!(
            merge_dims(&[(2, 10, 4), (4, 1, 1)]),
            vec![(2, 10, 4), (4, 1, 1)]
        );
        // Only dimensions of size 1: one element.
        assert_eq!(merge_dims(&[(1, 5, 7), (1, 1, 1)]), vec![(1, 0, 0)]);
    }
}
