//! Chunked reduction and scan kernels over tuples of scalars, for any associative operator,
//! keeping the order of operands: each workgroup takes a chunk of the elements, each of its
//! threads a sub-chunk, and a [`Phase`] says what a launch computes. The kernel's shared part
//! is here (the arrays, the thread's sub-chunk and its fold, the workgroup's partials in shared
//! memory, the tree that combines them, [`fold_range`], [`fold_batched`]); what only a
//! reduction does is in [`super::red`], what only a scan does in [`super::scan`].

use crate::codegen::gen::{word_kind, Gen, Ie, R, WG};
use crate::codegen::thread::{finish, lit, KCtx, KVal, View};
use crate::codegen::{red, scan};
use crate::codegen::{ArgSrc, BindSrc, HostTy, KernelCode};
use crate::error::Error;
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
#[derive(Clone, Copy, Debug, PartialEq)]
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
    /// As `TreeScan`, for GPUs, with chunk [`TILE_CHUNK`]: the workgroup's elements go through
    /// shared memory so that every global load and store is coalesced (neighbouring threads,
    /// neighbouring elements) while each thread still scans a contiguous run in order. Needs
    /// [`tiled_scan_bytes`] of shared memory.
    TiledScan { prefix: bool },
    /// As `TreeReduce` for commutative operators
    /// ([`commutative`](crate::codegen::operator::commutative)): thread `l` of the workgroup
    /// takes elements `l, l + WG, l + 2 WG, ...` of the group's chunk, so that neighbouring
    /// threads read neighbouring elements (coalesced).
    StridedReduce,
}

/// Elements per thread of [`Phase::TiledScan`].
pub const TILE_CHUNK: usize = 8;

/// Shared memory [`Phase::TiledScan`] needs for components of these sizes (bytes each).
pub fn tiled_scan_bytes(word_bytes: &[usize]) -> usize {
    word_bytes.iter().sum::<usize>() * WG as usize * (TILE_CHUNK + 1)
}

/// What every phase of a chunked kernel starts from ([`chunked`] makes it; the phases of
/// [`super::red`] and [`super::scan`] take it): the operator and the arrays, and the sub-chunk
/// `[lo, hi)` of thread `lid` of workgroup `gid64` (global thread `tid`) with the thread's
/// running value `accs`, neutral so far.
pub(super) struct Chunk<'p, 'a> {
    pub op: &'p Operator,
    pub ins: Vec<View>,
    pub outs: Vec<View>,
    pub pre: Vec<View>,
    /// The neutral element: per component, its value and type.
    pub neutral: Vec<(Word, PrimType)>,
    /// The thread's running value: per component, its variable, register type and type.
    pub accs: Vec<(Word, Word, PrimType)>,
    /// The number of elements.
    pub n: Word,
    pub lid: Word,
    pub gid64: Word,
    /// The workgroup's first element.
    pub gstart: Word,
    pub lo: Word,
    pub hi: Word,
    pub tid: Word,
    pub u64t: Word,
    pub u32t: Word,
    pub bt: Word,
    pub loc: &'a Option<SrcLoc>,
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
        let stride = WG as u64;
        fold_batched(
            &mut k, &mut g, op, &c.ins, &c.accs, first, end, stride, None, loc,
        )?;
    } else if tree_phase {
        fold_batched(&mut k, &mut g, op, &c.ins, &c.accs, lo, hi, 1, None, loc)?;
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

/// Combines the WG values in `shared` (one array per component, after a barrier) in order:
/// a reduction tree leaving the total in element 0 (`scan` false), or a Hillis–Steele inclusive
/// scan (`scan` true). Ends with a barrier. Every thread of the workgroup must call it.
pub(crate) fn tree<'p>(
    k: &mut KCtx<'p>,
    g: &mut Gen,
    op: &'p Operator,
    shared: &[(Word, Word, PrimType, Word)],
    lid: Word,
    scan: bool,
    loc: &Option<SrcLoc>,
) -> R<()> {
    let u32t = g.t_u32();
    let bt = g.t_bool();
    let dv = g.var(u32t);
    let one = g.c_u32(1);
    g.store(dv, one)?;
    let cwg = g.c_u32(WG);
    let z32 = g.c_u32(0);
    // The partners' values, read before the barrier that precedes the writes (scan).
    let mut tmp = Vec::new();
    for &(_, _, t, rt) in shared {
        let v = g.var(rt);
        tmp.push((v, rt, t));
    }
    let ls = g.begin_loop()?;
    let d = g.load(u32t, dv)?;
    let c = g.b.u_less_than(bt, None, d, cwg).ie()?;
    g.loop_cond(ls, c)?;
    let d = g.load(u32t, dv)?;
    // (Reduce) thread l with l % 2d == 0: shared[l] = shared[l] ⊙ shared[l + d].
    // (Scan) thread l >= d: shared[l] = shared[l - d] ⊙ shared[l].
    let (active, left, right) = if scan {
        let a = g.b.u_greater_than_equal(bt, None, lid, d).ie()?;
        let l = g.b.i_sub(u32t, None, lid, d).ie()?;
        (a, l, lid)
    } else {
        let d2 = g.b.i_add(u32t, None, d, d).ie()?;
        let m = g.b.i_sub(u32t, None, d2, one).ie()?;
        let low = g.b.bitwise_and(u32t, None, lid, m).ie()?;
        let a = g.b.i_equal(bt, None, low, z32).ie()?;
        let r = g.b.i_add(u32t, None, lid, d).ie()?;
        (a, lid, r)
    };
    for (&(arr, wt, t, _), &(v, _, _)) in shared.iter().zip(&tmp) {
        let p = g.shared_ptr(arr, wt, lid)?;
        let w = g.load(wt, p)?;
        let x = g.word_to_reg(t, w)?;
        g.store(v, x)?;
    }
    g.if_then(active, |g| {
        let mut args = Vec::new();
        for &(arr, wt, t, _) in shared {
            let p = g.shared_ptr(arr, wt, left)?;
            let w = g.load(wt, p)?;
            args.push(KVal::S(g.word_to_reg(t, w)?, t));
        }
        for &(arr, wt, t, _) in shared {
            let p = g.shared_ptr(arr, wt, right)?;
            let w = g.load(wt, p)?;
            args.push(KVal::S(g.word_to_reg(t, w)?, t));
        }
        let r = k.lambda(g, &op.lam, args, loc)?;
        store_all(g, &tmp, r, loc)
    })?;
    g.control_barrier()?;
    for (&(arr, wt, t, _), &(v, rt, _)) in shared.iter().zip(&tmp) {
        let x = g.load(rt, v)?;
        let w = g.reg_to_word(t, x)?;
        let p = g.shared_ptr(arr, wt, lid)?;
        g.store(p, w)?;
    }
    g.control_barrier()?;
    let d2 = g.b.i_add(u32t, None, d, d).ie()?;
    g.store(dv, d2)?;
    g.end_loop(ls)
}

pub(super) fn store_all(
    g: &mut Gen,
    vars: &[(Word, Word, PrimType)],
    r: Vec<KVal>,
    loc: &Option<SrcLoc>,
) -> R<()> {
    for (&(v, _, _), x) in vars.iter().zip(r) {
        match x {
            KVal::S(w, _) => g.store(v, w)?,
            _ => return Err(Error::unsupported("an operator returning arrays", loc)),
        }
    }
    Ok(())
}

/// `accs = fold op accs ins[lo..hi]`, writing each running value to `outs` when given.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fold_range<'p>(
    k: &mut KCtx<'p>,
    g: &mut Gen,
    op: &'p Operator,
    ins: &[View],
    accs: &[(Word, Word, PrimType)],
    lo: Word,
    hi: Word,
    outs: Option<&[View]>,
    loc: &Option<SrcLoc>,
) -> R<()> {
    let u64t = g.t_u64();
    let bt = g.t_bool();
    let iv = g.var(u64t);
    g.store(iv, lo)?;
    let st = g.begin_loop()?;
    let i = g.load(u64t, iv)?;
    let c = g.b.u_less_than(bt, None, i, hi).ie()?;
    g.loop_cond(st, c)?;
    let i = g.load(u64t, iv)?;
    let mut args = Vec::new();
    for &(v, rt, t) in accs {
        args.push(KVal::S(g.load(rt, v)?, t));
    }
    for v in ins {
        args.push(k.row(g, v, i)?);
    }
    let r = k.lambda(g, &op.lam, args, loc)?;
    store_all(g, accs, r, loc)?;
    if let Some(outs) = outs {
        for (&(v, rt, t), o) in accs.iter().zip(outs) {
            let x = g.load(rt, v)?;
            let idx = g.b.i_add(u64t, None, o.off, i).ie()?;
            g.store_elem(o.bi, t, idx, x)?;
        }
    }
    let one = g.c_u64(1);
    let i1 = g.b.i_add(u64t, None, i, one).ie()?;
    g.store(iv, i1)?;
    g.end_loop(st)
}

/// Loads issued together by [`fold_batched`].
const UNROLL: usize = 8;

/// [`fold_range`] with the loads of [`UNROLL`] elements issued before they are combined
/// (independent loads in flight, which a GPU needs to reach its memory bandwidth): elements
/// `first, first + stride, first + 2 stride, ...` below `end` (`stride` 1: a contiguous run,
/// optionally writing each running value to `outs`; `stride` WG: the coalesced first pass of
/// commutative reductions). Elements past `end` are not combined.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fold_batched<'p>(
    k: &mut KCtx<'p>,
    g: &mut Gen,
    op: &'p Operator,
    ins: &[View],
    accs: &[(Word, Word, PrimType)],
    first: Word,
    end: Word,
    stride: u64,
    outs: Option<&[View]>,
    loc: &Option<SrcLoc>,
) -> R<()> {
    let u64t = g.t_u64();
    let bt = g.t_bool();
    let iv = g.var(u64t);
    g.store(iv, first)?;
    let st = g.begin_loop()?;
    let i = g.load(u64t, iv)?;
    let c = g.b.u_less_than(bt, None, i, end).ie()?;
    g.loop_cond(st, c)?;
    let i = g.load(u64t, iv)?;
    // Loads (indices past `end` read element `i`, which exists, and are not used).
    let mut rows = Vec::with_capacity(UNROLL);
    for j in 0..UNROLL {
        let off = g.c_u64(j as u64 * stride);
        let idx = g.b.i_add(u64t, None, i, off).ie()?;
        let ok = g.b.u_less_than(bt, None, idx, end).ie()?;
        let safe = g.b.select(u64t, None, ok, idx, i).ie()?;
        let mut xs = Vec::with_capacity(ins.len());
        for v in ins {
            xs.push(k.row(g, v, safe)?);
        }
        rows.push((idx, ok, xs));
    }
    for (idx, ok, xs) in rows {
        g.if_then(ok, |g| {
            let mut args = Vec::new();
            for &(v, rt, t) in accs {
                args.push(KVal::S(g.load(rt, v)?, t));
            }
            args.extend(xs);
            let r = k.lambda(g, &op.lam, args, loc)?;
            store_all(g, accs, r, loc)?;
            if let Some(outs) = outs {
                for (&(v, rt, t), o) in accs.iter().zip(outs) {
                    let x = g.load(rt, v)?;
                    let at = g.b.i_add(u64t, None, o.off, idx).ie()?;
                    g.store_elem(o.bi, t, at, x)?;
                }
            }
            Ok(())
        })?;
    }
    let step = g.c_u64(UNROLL as u64 * stride);
    let i1 = g.b.i_add(u64t, None, i, step).ie()?;
    g.store(iv, i1)?;
    g.end_loop(st)
}
