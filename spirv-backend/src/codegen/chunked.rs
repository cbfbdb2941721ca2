//! Chunked reduction and scan kernels over tuples of scalars, for any associative operator,
//! keeping the order of operands: each workgroup takes a chunk of the elements, each of its
//! threads a sub-chunk, and a [`Phase`] says what a launch computes. The kernel's shared part
//! is here (the arrays, the thread's sub-chunk and its fold, the workgroup's partials in shared
//! memory); what only a reduction does is in [`super::red`], what only a scan does in
//! [`super::scan`], the folds and trees they all use in [`super::fold`].

use crate::codegen::fold::{fold_batched, fold_range, tree, Chunk};
use crate::codegen::gen::{word_kind, Gen, Ie, R, WG};
use crate::codegen::thread::{finish, lit, KCtx, View};
use crate::codegen::{red, scan};
use crate::codegen::{ArgSrc, BindSrc, HostTy, KernelCode};
use rspirv::spirv::{self, Word};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Operator, Program, VName};
use vkad_core::prim::PrimType;

/// One input or output array of a reduction/scan phase.
#[derive(Clone, Debug)]
pub struct Io {
    pub src: BindSrc,
    /// The element offset: a host array's offset, or 0.
    pub off: Option<VName>,
}

pub(crate) fn io_view(k: &mut KCtx<'_>, g: &mut Gen, io: &Io, t: PrimType, n: Word) -> R<View> {
    let bi = g.binding(word_kind(t));
    k.binds.push(io.src.clone());
    let off = match &io.off {
        Some(v) => k.arg(g, ArgSrc::Off(v.clone()), PrimType::I64)?,
        None => g.c_u64(0),
    };
    let one = g.c_u64(1);
    Ok(View {
        bi,
        elem: t,
        off,
        dims: vec![(n, one)],
    })
}

/// Which chunked phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Each workgroup reduces its chunk to one value per component: `out[group]`.
    Reduce,
    /// Each workgroup scans its chunk (inclusive), starting from `prefix[group - 1]` when a
    /// prefix input is given.
    Scan { prefix: bool },
    /// Each thread reduces its sub-chunk to one value per component: `out[t]` for global
    /// thread `t = group * WG + local` (neutral for threads past the end). No shared memory,
    /// no barrier: the first pass of the big reductions and scans.
    ThreadReduce,
    /// Each thread scans its sub-chunk (inclusive) starting from `prefix[t - 1]` (the
    /// inclusive scan of the `ThreadReduce` partials; neutral for `t = 0`): the last pass of a
    /// scan, reading and writing each element once.
    ThreadScan,
    /// As `Reduce`, but the workgroup combines its threads' partials with a tree (log₂ WG
    /// steps with barriers) instead of one thread folding them all: for GPUs, where a serial
    /// fold by one thread idles the workgroup.
    TreeReduce,
    /// As `Scan`, with the threads' partials scanned by a tree (Hillis–Steele, log₂ WG steps).
    TreeScan { prefix: bool },
    /// As `TreeScan`, for GPUs, with chunk [`TILE_CHUNK`](super::scan::TILE_CHUNK): the
    /// workgroup's elements go through shared memory so that every global load and store is
    /// coalesced (neighbouring threads, neighbouring elements) while each thread still scans a
    /// contiguous run in order. Needs [`tiled_scan_bytes`](super::scan::tiled_scan_bytes) of
    /// shared memory.
    TiledScan { prefix: bool },
    /// As `TreeReduce` for commutative operators
    /// ([`commutative`](crate::codegen::operator::commutative)): thread `l` of the workgroup
    /// takes elements `l, l + WG, l + 2 WG, ...` of the group's chunk, so that neighbouring
    /// threads read neighbouring elements (coalesced).
    StridedReduce,
}

impl Phase {
    /// A short name, for kernel names (`tree-scan-prefix`).
    pub fn name(&self) -> &'static str {
        match self {
            Phase::Reduce => "reduce",
            Phase::Scan { prefix: false } => "scan",
            Phase::Scan { prefix: true } => "scan-prefix",
            Phase::ThreadReduce => "thread-reduce",
            Phase::ThreadScan => "thread-scan",
            Phase::TreeReduce => "tree-reduce",
            Phase::TreeScan { prefix: false } => "tree-scan",
            Phase::TreeScan { prefix: true } => "tree-scan-prefix",
            Phase::TiledScan { prefix: false } => "tiled-scan",
            Phase::TiledScan { prefix: true } => "tiled-scan-prefix",
            Phase::StridedReduce => "strided-reduce",
        }
    }
}

/// A chunked reduce/scan phase for operator `op` over `k` scalar components of types `elems`.
/// Literals: 0 = n (elements), 1 = chunk (elements per thread). Workgroup `g` handles elements
/// `[g*WG*chunk, (g+1)*WG*chunk)`, thread `l` the `l`-th sub-chunk of it, in order (so global
/// thread `t = g*WG + l` has `[t*chunk, (t+1)*chunk)`).
#[allow(clippy::too_many_arguments)]
pub fn chunked<'p>(
    prog: &'p Program,
    op: &'p Operator,
    elems: &[PrimType],
    inputs: &[Io],
    outputs: &[Io],
    prefix: &[Io],
    phase: Phase,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, host_types);
    let n = lit(&mut k, &mut g, 0)?;
    let chunk = lit(&mut k, &mut g, 1)?;
    let mut ins = Vec::new();
    for (io, &t) in inputs.iter().zip(elems) {
        ins.push(io_view(&mut k, &mut g, io, t, n)?);
    }
    let big = g.c_u64(u32::MAX as u64);
    let mut outs = Vec::new();
    for (io, &t) in outputs.iter().zip(elems) {
        outs.push(io_view(&mut k, &mut g, io, t, big)?);
    }
    let mut pre = Vec::new();
    for (io, &t) in prefix.iter().zip(elems) {
        pre.push(io_view(&mut k, &mut g, io, t, big)?);
    }
    let u64t = g.t_u64();
    let u32t = g.t_u32();
    let bt = g.t_bool();
    // Neutral elements.
    let mut neutral = Vec::new();
    for (ne, &t) in op.neutral.iter().zip(elems) {
        let x = k.scalar(&mut g, ne, loc)?;
        neutral.push((x, t));
    }
    let lid = g.local_id()?;
    let lid64 = g.b.u_convert(u64t, None, lid).ie()?;
    let gid = g.group_id()?;
    let gid64 = g.b.u_convert(u64t, None, gid).ie()?;
    let wg = g.c_u64(WG as u64);
    let gsize = g.b.i_mul(u64t, None, wg, chunk).ie()?;
    let gstart = g.b.i_mul(u64t, None, gid64, gsize).ie()?;
    let lo_off = g.b.i_mul(u64t, None, lid64, chunk).ie()?;
    let lo = g.b.i_add(u64t, None, gstart, lo_off).ie()?;
    let hi = g.b.i_add(u64t, None, lo, chunk).ie()?;
    let hi = g.glsl(u64t, spirv::GlslStd450Op::UMin, &[hi, n])?;
    // acc = fold of the sub-chunk.
    let mut accs = Vec::new();
    for &(x, t) in &neutral {
        let rt = g.reg_ty(t);
        let v = g.var(rt);
        g.store(v, x)?;
        accs.push((v, rt, t));
    }
    let gw = g.b.i_mul(u64t, None, gid64, wg).ie()?;
    let tid = g.b.i_add(u64t, None, gw, lid64).ie()?;
    let c = Chunk {
        op,
        ins,
        outs,
        pre,
        neutral,
        accs,
        n,
        lid,
        gid64,
        gstart,
        lo,
        hi,
        tid,
        u64t,
        u32t,
        bt,
        loc,
    };
    match phase {
        Phase::ThreadReduce => {
            red::thread_reduce(&mut k, &mut g, &c)?;
            return finish(g, k);
        }
        Phase::ThreadScan => {
            scan::thread_scan(&mut k, &mut g, &c)?;
            return finish(g, k);
        }
        Phase::TiledScan { .. } => {
            scan::tiled_scan(&mut k, &mut g, &c)?;
            return finish(g, k);
        }
        Phase::Reduce
        | Phase::Scan { .. }
        | Phase::TreeReduce
        | Phase::TreeScan { .. }
        | Phase::StridedReduce => {}
    }
    let tree_phase = matches!(phase, Phase::TreeReduce | Phase::TreeScan { .. });
    if phase == Phase::StridedReduce {
        // Thread l: elements gstart + l + j*WG of the group's chunk.
        let first = g.b.i_add(u64t, None, gstart, lid64).ie()?;
        let end = g.b.i_add(u64t, None, gstart, gsize).ie()?;
        let end = g.glsl(u64t, spirv::GlslStd450Op::UMin, &[end, n])?;
        let stride = g.c_u64(WG as u64);
        fold_batched(
            &mut k, &mut g, op, &c.ins, &c.accs, first, end, stride, None, loc,
        )?;
    } else if tree_phase {
        let one = g.c_u64(1);
        fold_batched(&mut k, &mut g, op, &c.ins, &c.accs, lo, hi, one, None, loc)?;
    } else {
        fold_range(&mut k, &mut g, op, &c.ins, &c.accs, lo, hi, None, loc)?;
    }
    // Shared memory per component.
    let mut shared = Vec::new();
    for &(v, rt, t) in &c.accs {
        let wt = g.word_ty(word_kind(t));
        let arr = g.shared_array(wt, WG);
        let x = g.load(rt, v)?;
        let w = g.reg_to_word(t, x)?;
        let p = g.shared_ptr(arr, wt, lid)?;
        g.store(p, w)?;
        shared.push((arr, wt, t, rt));
    }
    g.control_barrier()?;
    let z32 = g.c_u32(0);
    let is0 = g.b.i_equal(bt, None, lid, z32).ie()?;
    if let Phase::TreeReduce | Phase::TreeScan { .. } | Phase::StridedReduce = phase {
        let scan = matches!(phase, Phase::TreeScan { .. });
        tree(&mut k, &mut g, op, &shared, lid, scan, loc)?;
        if !scan {
            red::tree_result(&mut g, &c, &shared, is0, z32)?;
            return finish(g, k);
        }
        scan::tree_rescan(&mut k, &mut g, &c, &shared)?;
        return finish(g, k);
    }
    match phase {
        Phase::Reduce => red::serial_result(&mut k, &mut g, &c, &shared, is0)?,
        Phase::Scan { .. } => scan::serial_rescan(&mut k, &mut g, &c, &shared, is0)?,
        Phase::ThreadReduce
        | Phase::ThreadScan
        | Phase::TreeReduce
        | Phase::TreeScan { .. }
        | Phase::TiledScan { .. }
        | Phase::StridedReduce => {}
    }
    finish(g, k)
}
