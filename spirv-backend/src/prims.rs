//! The built-in kernels: strided copies and fills (index/slice gathers, updates, concatenation,
//! transposition, replication), `iota`, chunked reduction and scan phases, histograms and scatter.
//! Every kernel reads its sizes from launch-time literals (`ArgSrc::Lit`).

use crate::codegen::gen::{word_kind, Gen, Ie, WordKind, R, WG};
use crate::codegen::thread::{finish, lit, KCtx, KVal, View};
use crate::codegen::{ArgSrc, BindSrc, HostTy, KernelCode};
use crate::error::Error;
use rspirv::spirv::{self, Word};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{BinOp, Exp, Operator, Program, SubExp, VName};
use vkad_core::prim::{IntType, PrimType};

fn no_host(_: &VName) -> Option<HostTy> {
    None
}

/// `dst[dbase + sum i_k*ds_k] = src[sbase + sum i_k*ss_k]` (or `= value` when `scalar`) over the
/// index space of `rank` dims. Literals: 0 = total count, 1 = src base (or the value word),
/// 2 = dst base, then per dim (size, src stride, dst stride). Bindings: src (unless scalar), dst.
pub fn strided(prog: &Program, wk: WordKind, rank: usize, scalar: bool) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, &no_host);
    let n = lit(&mut k, &mut g, 0)?;
    let sbase = lit(&mut k, &mut g, 1)?;
    let dbase = lit(&mut k, &mut g, 2)?;
    let mut dims = Vec::with_capacity(rank);
    for d in 0..rank {
        let s = lit(&mut k, &mut g, 3 + 3 * d)?;
        let ss = lit(&mut k, &mut g, 4 + 3 * d)?;
        let ds = lit(&mut k, &mut g, 5 + 3 * d)?;
        dims.push((s, ss, ds));
    }
    let src = if scalar {
        None
    } else {
        k.binds.push(BindSrc::Tmp(0));
        Some(g.binding(wk))
    };
    k.binds.push(BindSrc::Tmp(1));
    let dst = g.binding(wk);
    g.grid_loop(n, |g, i| {
        let u64t = g.t_u64();
        let mut rem = i;
        let mut so = sbase;
        let mut dof = dbase;
        for &(s, ss, ds) in dims.iter().rev() {
            let ik = g.b.u_mod(u64t, None, rem, s).ie()?;
            rem = g.b.u_div(u64t, None, rem, s).ie()?;
            let a = g.b.i_mul(u64t, None, ik, ss).ie()?;
            so = g.b.i_add(u64t, None, so, a).ie()?;
            let b = g.b.i_mul(u64t, None, ik, ds).ie()?;
            dof = g.b.i_add(u64t, None, dof, b).ie()?;
        }
        let w = match src {
            Some(bi) => g.load_word(bi, so)?,
            None => {
                if wk == WordKind::U64 {
                    sbase
                } else {
                    let u = g.t_u32();
                    g.b.u_convert(u, None, sbase).ie()?
                }
            }
        };
        g.store_word(dst, dof, w)
    })?;
    finish(g, k)
}

/// `iota`: literals 0 = n, 1 = start, 2 = stride (as i64 bits). Binding: dst.
pub fn iota(prog: &Program, it: IntType) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, &no_host);
    let n = lit(&mut k, &mut g, 0)?;
    let start = lit(&mut k, &mut g, 1)?;
    let stride = lit(&mut k, &mut g, 2)?;
    k.binds.push(BindSrc::Tmp(0));
    let dst = g.binding(word_kind(PrimType::Int(it)));
    g.grid_loop(n, |g, i| {
        let u64t = g.t_u64();
        let m = g.b.i_mul(u64t, None, i, stride).ie()?;
        let v = g.b.i_add(u64t, None, start, m).ie()?;
        let v = if it.bits() == 64 {
            v
        } else {
            let u = g.t_u32();
            let lo = g.b.u_convert(u, None, v).ie()?;
            g.canon(it, lo)?
        };
        g.store_word(dst, i, v)
    })?;
    finish(g, k)
}

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
    /// As `TreeReduce` for commutative operators ([`commutative`]): thread `l` of the workgroup
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

/// Whether `op` is known to be commutative: marked so, or one commutative binary operator
/// (`+`, `*`, min, max, bitwise and logical and/or/xor) applied to its two parameters.
pub fn commutative(op: &Operator) -> bool {
    if op.commutative {
        return true;
    }
    let lam = &op.lam;
    if lam.params.len() != 2 || lam.body.stms.len() != 1 || lam.body.result.len() != 1 {
        return false;
    }
    let stm = &lam.body.stms[0];
    let (a, b) = (&lam.params[0].name, &lam.params[1].name);
    let Some(res) = stm.pat.elems.first() else {
        return false;
    };
    let Exp::BinOp(bop, x, y) = &stm.exp else {
        return false;
    };
    let args_ok = (x.as_var() == Some(a) && y.as_var() == Some(b))
        || (x.as_var() == Some(b) && y.as_var() == Some(a));
    lam.body.result[0] == SubExp::Var(res.name.clone())
        && args_ok
        && matches!(
            bop,
            BinOp::Add(_)
                | BinOp::Mul(_)
                | BinOp::Min(_)
                | BinOp::Max(_)
                | BinOp::And(_)
                | BinOp::Or(_)
                | BinOp::Xor(_)
                | BinOp::LogAnd
                | BinOp::LogOr
        )
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
    match phase {
        Phase::ThreadReduce => {
            fold_range(&mut k, &mut g, op, &ins, &accs, lo, hi, None, loc)?;
            for (&(v, rt, t), o) in accs.iter().zip(&outs) {
                let x = g.load(rt, v)?;
                let idx = g.b.i_add(u64t, None, o.off, tid).ie()?;
                g.store_elem(o.bi, t, idx, x)?;
            }
            return finish(g, k);
        }
        Phase::ThreadScan => {
            if !pre.is_empty() {
                let z = g.c_u64(0);
                let has = g.b.u_greater_than(bt, None, tid, z).ie()?;
                g.if_then(has, |g| {
                    let one = g.c_u64(1);
                    let tm1 = g.b.i_sub(u64t, None, tid, one).ie()?;
                    for (&(v, _, t), p) in accs.iter().zip(&pre) {
                        let idx = g.b.i_add(u64t, None, p.off, tm1).ie()?;
                        let x = g.load_elem(p.bi, t, idx)?;
                        g.store(v, x)?;
                    }
                    Ok(())
                })?;
            }
            fold_range(&mut k, &mut g, op, &ins, &accs, lo, hi, Some(&outs), loc)?;
            return finish(g, k);
        }
        Phase::TiledScan { .. } => {
            // Load the group's tile (coalesced), scan in shared memory, store it (coalesced).
            let c = TILE_CHUNK as u32;
            let mut tiles = Vec::new();
            for &(_, rt, t) in &accs {
                let wt = g.word_ty(word_kind(t));
                tiles.push((g.shared_array(wt, WG * c), wt, t, rt));
            }
            let tile_io = |g: &mut Gen, store: bool, k: &mut KCtx<'p>| -> R<()> {
                for j in 0..c {
                    let off = g.c_u32(j * WG);
                    let e = g.b.i_add(u32t, None, off, lid).ie()?;
                    let e64 = g.b.u_convert(u64t, None, e).ie()?;
                    let idx = g.b.i_add(u64t, None, gstart, e64).ie()?;
                    let ok = g.b.u_less_than(bt, None, idx, n).ie()?;
                    g.if_then(ok, |g| {
                        for (m, &(arr, wt, t, _)) in tiles.iter().enumerate() {
                            let p = g.shared_ptr(arr, wt, e)?;
                            if store {
                                let w = g.load(wt, p)?;
                                let x = g.word_to_reg(t, w)?;
                                let at = g.b.i_add(u64t, None, outs[m].off, idx).ie()?;
                                g.store_elem(outs[m].bi, t, at, x)?;
                            } else {
                                let KVal::S(x, _) = k.row(g, &ins[m], idx)? else {
                                    return Err(Error::bug("scan of arrays"));
                                };
                                let w = g.reg_to_word(t, x)?;
                                g.store(p, w)?;
                            }
                        }
                        Ok(())
                    })?;
                }
                Ok(())
            };
            tile_io(&mut g, false, &mut k)?;
            g.control_barrier()?;
            // Thread l's run: tile[l*c .. l*c + c] (elements < n).
            let cc = g.c_u32(c);
            let base = g.b.i_mul(u32t, None, lid, cc).ie()?;
            let run = |g: &mut Gen, k: &mut KCtx<'p>, write: bool| -> R<()> {
                for m in 0..c {
                    let cm = g.c_u32(m);
                    let e = g.b.i_add(u32t, None, base, cm).ie()?;
                    let e64 = g.b.u_convert(u64t, None, e).ie()?;
                    let idx = g.b.i_add(u64t, None, gstart, e64).ie()?;
                    let ok = g.b.u_less_than(bt, None, idx, n).ie()?;
                    g.if_then(ok, |g| {
                        let mut args = Vec::new();
                        for &(v, rt, t) in &accs {
                            args.push(KVal::S(g.load(rt, v)?, t));
                        }
                        let mut ptrs = Vec::new();
                        for &(arr, wt, t, _) in &tiles {
                            let p = g.shared_ptr(arr, wt, e)?;
                            let w = g.load(wt, p)?;
                            args.push(KVal::S(g.word_to_reg(t, w)?, t));
                            ptrs.push(p);
                        }
                        let r = k.lambda(g, &op.lam, args, loc)?;
                        store_all(g, &accs, r, loc)?;
                        if write {
                            for (&(v, rt, t), &p) in accs.iter().zip(&ptrs) {
                                let x = g.load(rt, v)?;
                                let w = g.reg_to_word(t, x)?;
                                g.store(p, w)?;
                            }
                        }
                        Ok(())
                    })?;
                }
                Ok(())
            };
            run(&mut g, &mut k, false)?;
            // The threads' partials, scanned by a tree.
            let mut shared = Vec::new();
            for &(v, rt, t) in &accs {
                let wt = g.word_ty(word_kind(t));
                let arr = g.shared_array(wt, WG);
                let x = g.load(rt, v)?;
                let w = g.reg_to_word(t, x)?;
                let p = g.shared_ptr(arr, wt, lid)?;
                g.store(p, w)?;
                shared.push((arr, wt, t, rt));
            }
            g.control_barrier()?;
            tree(&mut k, &mut g, op, &shared, lid, true, loc)?;
            thread_prefix(
                &mut k, &mut g, op, &shared, &accs, &neutral, &pre, lid, gid64, loc,
            )?;
            run(&mut g, &mut k, true)?;
            g.control_barrier()?;
            tile_io(&mut g, true, &mut k)?;
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
            &mut k, &mut g, op, &ins, &accs, first, end, stride, None, loc,
        )?;
    } else if tree_phase {
        fold_batched(&mut k, &mut g, op, &ins, &accs, lo, hi, 1, None, loc)?;
    } else {
        fold_range(&mut k, &mut g, op, &ins, &accs, lo, hi, None, loc)?;
    }
    // Shared memory per component.
    let mut shared = Vec::new();
    for &(v, rt, t) in &accs {
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
            // shared[0] holds the workgroup's result.
            let st = g.begin_if(is0)?;
            for (&(arr, wt, t, _), o) in shared.iter().zip(&outs) {
                let p = g.shared_ptr(arr, wt, z32)?;
                let w = g.load(wt, p)?;
                let x = g.word_to_reg(t, w)?;
                let idx = g.b.i_add(u64t, None, o.off, gid64).ie()?;
                g.store_elem(o.bi, t, idx, x)?;
            }
            g.else_(st)?;
            g.end_if(st)?;
            return finish(g, k);
        }
        thread_prefix(
            &mut k, &mut g, op, &shared, &accs, &neutral, &pre, lid, gid64, loc,
        )?;
        fold_batched(&mut k, &mut g, op, &ins, &accs, lo, hi, 1, Some(&outs), loc)?;
        return finish(g, k);
    }
    match phase {
        Phase::Reduce => {
            let st = g.begin_if(is0)?;
            // Fold the WG partial results in order.
            let mut cur = Vec::new();
            for &(x, t) in &neutral {
                let rt = g.reg_ty(t);
                let v = g.var(rt);
                g.store(v, x)?;
                cur.push((v, rt, t));
            }
            let c0 = g.c_u32(0);
            let cwg = g.c_u32(WG);
            let one = g.c_u32(1);
            let jv = g.var(u32t);
            g.store(jv, c0)?;
            let ls = g.begin_loop()?;
            let j = g.load(u32t, jv)?;
            let c = g.b.u_less_than(bt, None, j, cwg).ie()?;
            g.loop_cond(ls, c)?;
            let j = g.load(u32t, jv)?;
            let mut args = Vec::new();
            for &(v, rt, t) in &cur {
                args.push(KVal::S(g.load(rt, v)?, t));
            }
            for &(arr, wt, t, _) in &shared {
                let p = g.shared_ptr(arr, wt, j)?;
                let w = g.load(wt, p)?;
                args.push(KVal::S(g.word_to_reg(t, w)?, t));
            }
            let r = k.lambda(&mut g, &op.lam, args, loc)?;
            store_all(&mut g, &cur, r, loc)?;
            let j1 = g.b.i_add(u32t, None, j, one).ie()?;
            g.store(jv, j1)?;
            g.end_loop(ls)?;
            for (&(v, rt, t), o) in cur.iter().zip(&outs) {
                let x = g.load(rt, v)?;
                let idx = g.b.i_add(u64t, None, o.off, gid64).ie()?;
                g.store_elem(o.bi, t, idx, x)?;
            }
            g.else_(st)?;
            g.end_if(st)?;
        }
        Phase::Scan { .. } => {
            let st = g.begin_if(is0)?;
            // Exclusive scan of the WG partials in place, from the group's prefix.
            let mut cur = Vec::new();
            for &(x, t) in &neutral {
                let rt = g.reg_ty(t);
                let v = g.var(rt);
                g.store(v, x)?;
                cur.push((v, rt, t));
            }
            if !pre.is_empty() {
                let z = g.c_u64(0);
                let has = g.b.u_greater_than(bt, None, gid64, z).ie()?;
                let ps = g.begin_if(has)?;
                let one = g.c_u64(1);
                let gm1 = g.b.i_sub(u64t, None, gid64, one).ie()?;
                for (&(v, _, t), p) in cur.iter().zip(&pre) {
                    let idx = g.b.i_add(u64t, None, p.off, gm1).ie()?;
                    let x = g.load_elem(p.bi, t, idx)?;
                    g.store(v, x)?;
                }
                g.else_(ps)?;
                g.end_if(ps)?;
            }
            let c0 = g.c_u32(0);
            let cwg = g.c_u32(WG);
            let one = g.c_u32(1);
            let jv = g.var(u32t);
            g.store(jv, c0)?;
            let ls = g.begin_loop()?;
            let j = g.load(u32t, jv)?;
            let c = g.b.u_less_than(bt, None, j, cwg).ie()?;
            g.loop_cond(ls, c)?;
            let j = g.load(u32t, jv)?;
            let mut args = Vec::new();
            let mut elems_here = Vec::new();
            for &(v, rt, t) in &cur {
                args.push(KVal::S(g.load(rt, v)?, t));
            }
            for &(arr, wt, t, _) in &shared {
                let p = g.shared_ptr(arr, wt, j)?;
                let w = g.load(wt, p)?;
                elems_here.push(p);
                args.push(KVal::S(g.word_to_reg(t, w)?, t));
            }
            // shared[j] = cur (exclusive), then cur = op(cur, old shared[j]).
            for (&(v, rt, t), &p) in cur.iter().zip(&elems_here) {
                let x = g.load(rt, v)?;
                let w = g.reg_to_word(t, x)?;
                g.store(p, w)?;
            }
            let r = k.lambda(&mut g, &op.lam, args, loc)?;
            store_all(&mut g, &cur, r, loc)?;
            let j1 = g.b.i_add(u32t, None, j, one).ie()?;
            g.store(jv, j1)?;
            g.end_loop(ls)?;
            g.else_(st)?;
            g.end_if(st)?;
            g.control_barrier()?;
            // Each thread rescans its sub-chunk from its exclusive prefix.
            for (&(v, _, t), &(arr, wt, _, _)) in accs.iter().zip(&shared) {
                let p = g.shared_ptr(arr, wt, lid)?;
                let w = g.load(wt, p)?;
                let x = g.word_to_reg(t, w)?;
                g.store(v, x)?;
            }
            fold_range(&mut k, &mut g, op, &ins, &accs, lo, hi, Some(&outs), loc)?;
        }
        Phase::ThreadReduce
        | Phase::ThreadScan
        | Phase::TreeReduce
        | Phase::TreeScan { .. }
        | Phase::TiledScan { .. }
        | Phase::StridedReduce => {}
    }
    finish(g, k)
}

/// Sets `accs` of thread `lid` to the group's prefix (`pre[gid - 1]`, neutral without one or
/// for group 0) combined with element `lid - 1` of the inclusive scan in `shared` (after
/// [`tree`]).
#[allow(clippy::too_many_arguments)]
fn thread_prefix<'p>(
    k: &mut KCtx<'p>,
    g: &mut Gen,
    op: &'p Operator,
    shared: &[(Word, Word, PrimType, Word)],
    accs: &[(Word, Word, PrimType)],
    neutral: &[(Word, PrimType)],
    pre: &[View],
    lid: Word,
    gid64: Word,
    loc: &Option<SrcLoc>,
) -> R<()> {
    let u64t = g.t_u64();
    let u32t = g.t_u32();
    let bt = g.t_bool();
    let z32 = g.c_u32(0);
    // Thread l starts from the group's prefix combined with the inclusive scan of the
    // partials of threads 0..l-1.
    for (&(v, _, _), &(x, _)) in accs.iter().zip(neutral) {
        g.store(v, x)?;
    }
    if !pre.is_empty() {
        let z = g.c_u64(0);
        let has = g.b.u_greater_than(bt, None, gid64, z).ie()?;
        g.if_then(has, |g| {
            let one = g.c_u64(1);
            let gm1 = g.b.i_sub(u64t, None, gid64, one).ie()?;
            for (&(v, _, t), p) in accs.iter().zip(pre) {
                let idx = g.b.i_add(u64t, None, p.off, gm1).ie()?;
                let x = g.load_elem(p.bi, t, idx)?;
                g.store(v, x)?;
            }
            Ok(())
        })?;
    }
    let gt0 = g.b.u_greater_than(bt, None, lid, z32).ie()?;
    let st = g.begin_if(gt0)?;
    let one = g.c_u32(1);
    let lm1 = g.b.i_sub(u32t, None, lid, one).ie()?;
    let mut args = Vec::new();
    for &(v, rt, t) in accs {
        args.push(KVal::S(g.load(rt, v)?, t));
    }
    for &(arr, wt, t, _) in shared {
        let p = g.shared_ptr(arr, wt, lm1)?;
        let w = g.load(wt, p)?;
        args.push(KVal::S(g.word_to_reg(t, w)?, t));
    }
    let r = k.lambda(g, &op.lam, args, loc)?;
    store_all(g, accs, r, loc)?;
    g.else_(st)?;
    g.end_if(st)?;
    Ok(())
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

fn store_all(
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

/// Loads issued together by [`fold_unrolled`].
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

/// The atomic fast path for a histogram operator, if it has one on this device.
pub(crate) fn atomic_op(
    op: &Operator,
    t: PrimType,
    f32_add: bool,
    i64_atomics: bool,
) -> Option<(BinOp, bool)> {
    let lam = &op.lam;
    if lam.params.len() != 2 || lam.body.stms.len() != 1 || lam.body.result.len() != 1 {
        return None;
    }
    let stm = &lam.body.stms[0];
    let (a, b) = (&lam.params[0].name, &lam.params[1].name);
    let res_ok = lam.body.result[0] == SubExp::Var(stm.pat.elems.first()?.name.clone());
    let Exp::BinOp(bop, x, y) = &stm.exp else {
        return None;
    };
    let args_ok = (x.as_var() == Some(a) && y.as_var() == Some(b))
        || (x.as_var() == Some(b) && y.as_var() == Some(a));
    if !res_ok || !args_ok {
        return None;
    }
    match (bop, t) {
        (BinOp::Add(_) | BinOp::Min(_) | BinOp::Max(_), PrimType::Int(it))
            if it.bits() == 32 || (it.bits() == 64 && i64_atomics) =>
        {
            Some((*bop, it.signed()))
        }
        (BinOp::Add(_), PrimType::Float(vkad_core::prim::FloatType::F32)) if f32_add => {
            Some((*bop, true))
        }
        _ => None,
    }
}

/// `reduce_by_index`: literals 0 = w, 1 = dest length. Bindings: inds, vals, dest (in place).
#[allow(clippy::too_many_arguments)]
pub fn hist<'p>(
    prog: &'p Program,
    op: &'p Operator,
    t: PrimType,
    inds: &VName,
    vals: &VName,
    dest: &VName,
    f32_add: bool,
    i64_atomics: bool,
    disjoint: bool,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, host_types);
    let w = lit(&mut k, &mut g, 0)?;
    let len = lit(&mut k, &mut g, 1)?;
    let iv = k.host_array(&mut g, inds, PrimType::I64, 1)?;
    let vv = k.host_array(&mut g, vals, t, 1)?;
    let fast = if disjoint {
        None
    } else {
        atomic_op(op, t, f32_add, i64_atomics)
    };
    let wk = if matches!(fast, Some((_, _))) && matches!(t, PrimType::Float(_)) {
        g.uses_float_atomic = true;
        g.b.capability(spirv::Capability::AtomicFloat32AddEXT);
        g.b.extension("SPV_EXT_shader_atomic_float_add");
        WordKind::F32
    } else {
        word_kind(t)
    };
    if t.byte_size() == 8 && !disjoint {
        g.b.capability(spirv::Capability::Int64Atomics);
    }
    let dbi = g.binding(wk);
    k.binds.push(crate::codegen::BindSrc::Var(dest.clone()));
    let doff = k.arg(&mut g, ArgSrc::Off(dest.clone()), PrimType::I64)?;
    let u64t = g.t_u64();
    let bt = g.t_bool();
    let dev = g.c_u32(spirv::Scope::Device as u32);
    let sem = g.c_u32(0);
    g.grid_loop(w, |g, j| {
        let KVal::S(ix, _) = k.row(g, &iv, j)? else {
            return Err(Error::bug("hist index"));
        };
        let KVal::S(x, _) = k.row(g, &vv, j)? else {
            return Err(Error::bug("hist value"));
        };
        let inb = g.b.u_less_than(bt, None, ix, len).ie()?;
        let st = g.begin_if(inb)?;
        let at = g.b.i_add(u64t, None, doff, ix).ie()?;
        let p = g.word_ptr(dbi, at)?;
        let wt = g.word_ty(wk);
        match fast {
            Some((bop, signed)) => {
                let _ = match (bop, wk) {
                    (BinOp::Add(_), WordKind::F32) => {
                        g.b.atomic_f_add_ext(wt, None, p, dev, sem, x).ie()?
                    }
                    (BinOp::Add(_), _) => g.b.atomic_i_add(wt, None, p, dev, sem, x).ie()?,
                    (BinOp::Min(_), _) if signed => {
                        g.b.atomic_s_min(wt, None, p, dev, sem, x).ie()?
                    }
                    (BinOp::Min(_), _) => g.b.atomic_u_min(wt, None, p, dev, sem, x).ie()?,
                    (BinOp::Max(_), _) if signed => {
                        g.b.atomic_s_max(wt, None, p, dev, sem, x).ie()?
                    }
                    _ => g.b.atomic_u_max(wt, None, p, dev, sem, x).ie()?,
                };
            }
            None if disjoint => {
                // Distinct indices (`#[disjoint_indices]`, paper 003): no other thread updates
                // this element, a plain read-modify-write.
                let old = g.load_ptr(dbi, p)?;
                let oldr = g.word_to_reg(t, old)?;
                let r = k.lambda(g, &op.lam, vec![KVal::S(oldr, t), KVal::S(x, t)], loc)?;
                let Some(KVal::S(newr, _)) = r.into_iter().next() else {
                    return Err(Error::unsupported("an operator returning arrays", loc));
                };
                let neww = g.reg_to_word(t, newr)?;
                g.store_ptr(dbi, p, neww)?;
            }
            None => {
                // Compare-exchange loop.
                let done = g.var(bt);
                let f = g.c_bool(false);
                g.store(done, f)?;
                let ls = g.begin_loop()?;
                let d = g.load(bt, done)?;
                let nd = g.b.logical_not(bt, None, d).ie()?;
                g.loop_cond(ls, nd)?;
                let old = g.b.atomic_load(wt, None, p, dev, sem).ie()?;
                let oldr = g.word_to_reg(t, old)?;
                let r = k.lambda(g, &op.lam, vec![KVal::S(oldr, t), KVal::S(x, t)], loc)?;
                let Some(KVal::S(newr, _)) = r.into_iter().next() else {
                    return Err(Error::unsupported("an operator returning arrays", loc));
                };
                let neww = g.reg_to_word(t, newr)?;
                let prev =
                    g.b.atomic_compare_exchange(wt, None, p, dev, sem, sem, neww, old)
                        .ie()?;
                let ok = g.b.i_equal(bt, None, prev, old).ie()?;
                g.store(done, ok)?;
                g.end_loop(ls)?;
            }
        }
        g.else_(st)?;
        g.end_if(st)
    })?;
    finish(g, k)
}

/// `scatter`, pass 1 (`claim`): `owner[flat] = max(owner[flat], j + 1)` for in-bounds indices;
/// pass 2 (`!claim`): threads that own their target write their row. Later writes win.
/// Literals: 0 = w, 1 = row length, then per indexed dim (size, stride in rows... elements).
/// Bindings: index arrays, owner, then (pass 2) value arrays and destinations.
#[allow(clippy::too_many_arguments)]
pub fn scatter<'p>(
    prog: &'p Program,
    inds: &[VName],
    vals: &[(VName, PrimType)],
    dests: &[VName],
    claim: bool,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, host_types);
    let w = lit(&mut k, &mut g, 0)?;
    let rowlen = lit(&mut k, &mut g, 1)?;
    let mut dims = Vec::new();
    for d in 0..inds.len() {
        let s = lit(&mut k, &mut g, 2 + 2 * d)?;
        let st = lit(&mut k, &mut g, 3 + 2 * d)?;
        dims.push((s, st));
    }
    let mut iviews = Vec::new();
    for v in inds {
        iviews.push(k.host_array(&mut g, v, PrimType::I64, 1)?);
    }
    let obi = g.binding(WordKind::U32);
    k.binds.push(BindSrc::Tmp(0));
    let mut vviews = Vec::new();
    let mut dviews = Vec::new();
    if !claim {
        for (v, t) in vals {
            let r = match host_types(v) {
                Some(HostTy::Arr(_, r)) => r,
                _ => 1,
            };
            vviews.push(k.host_array(&mut g, v, *t, r)?);
        }
        for (d, (_, t)) in dests.iter().zip(vals) {
            let bi = g.binding(word_kind(*t));
            k.binds.push(BindSrc::Var(d.clone()));
            let off = k.arg(&mut g, ArgSrc::Off(d.clone()), PrimType::I64)?;
            dviews.push((bi, off, *t));
        }
    }
    let u64t = g.t_u64();
    let u32t = g.t_u32();
    let bt = g.t_bool();
    let dev = g.c_u32(spirv::Scope::Device as u32);
    let sem = g.c_u32(0);
    g.grid_loop(w, |g, j| {
        let mut ok = g.c_bool(true);
        let mut flat = g.c_u64(0);
        for (v, &(s, st)) in iviews.iter().zip(&dims) {
            let KVal::S(ix, _) = k.row(g, v, j)? else {
                return Err(Error::bug("scatter index"));
            };
            let inb = g.b.u_less_than(bt, None, ix, s).ie()?;
            ok = g.b.logical_and(bt, None, ok, inb).ie()?;
            let m = g.b.i_mul(u64t, None, ix, st).ie()?;
            flat = g.b.i_add(u64t, None, flat, m).ie()?;
        }
        let sti = g.begin_if(ok)?;
        // Owner slot: the flat row index.
        let one = g.c_u64(1);
        let rowidx = g.b.u_div(u64t, None, flat, rowlen).ie()?;
        let p = g.word_ptr(obi, rowidx)?;
        let j1 = g.b.i_add(u64t, None, j, one).ie()?;
        let j1_32 = g.b.u_convert(u32t, None, j1).ie()?;
        if claim {
            g.b.atomic_u_max(u32t, None, p, dev, sem, j1_32).ie()?;
        } else {
            let o = g.load_ptr(obi, p)?;
            let mine = g.b.i_equal(bt, None, o, j1_32).ie()?;
            let sm = g.begin_if(mine)?;
            for (vv, &(bi, off, t)) in vviews.iter().zip(&dviews) {
                let base = g.b.i_add(u64t, None, off, flat).ie()?;
                match k.row(g, vv, j)? {
                    KVal::S(x, _) => g.store_elem(bi, t, base, x)?,
                    KVal::L(_) | KVal::Acc(_) => return Err(Error::bug("lazy scatter value")),
                    KVal::V(row) => {
                        // Copy the row (contiguous in both).
                        let z = g.c_u64(0);
                        g.for_range(z, rowlen, one, |g, e| {
                            let src = g.b.i_add(u64t, None, row.off, e).ie()?;
                            let x = g.load_word(row.bi, src)?;
                            let dst = g.b.i_add(u64t, None, base, e).ie()?;
                            g.store_word(bi, dst, x)
                        })?;
                    }
                }
            }
            g.else_(sm)?;
            g.end_if(sm)?;
        }
        g.else_(sti)?;
        g.end_if(sti)
    })?;
    finish(g, k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::map::map_kernel;
    use vkad_core::ir::Soac;

    fn valid(code: &KernelCode) {
        vkad_vk::validate_spirv(&code.words).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn builtin_kernels_validate() {
        use crate::codegen::gen::{with_addressing, Addressing};
        let prog = Program::default();
        for mode in [Addressing::Descriptors, Addressing::Addresses] {
            with_addressing(mode, || {
                for wk in [WordKind::U32, WordKind::U64] {
                    for rank in 0..4 {
                        for scalar in [false, true] {
                            valid(&strided(&prog, wk, rank, scalar).unwrap());
                        }
                    }
                }
                for it in IntType::ALL {
                    valid(&iota(&prog, it).unwrap());
                }
            });
        }
    }

    /// Every kernel the program's entry `main` needs for its top-level maps validates.
    fn map_kernels_validate(src: &str) {
        let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let f = c.ir.entry("main").unwrap();
        let types: std::collections::HashMap<u32, HostTy> = f
            .params
            .iter()
            .map(|p| {
                let e = p.ty.elem().unwrap();
                let t = if p.ty.rank() == 0 {
                    HostTy::Prim(e)
                } else {
                    HostTy::Arr(e, p.ty.rank())
                };
                (p.name.id, t)
            })
            .chain(
                f.size_params
                    .iter()
                    .map(|s| (s.id, HostTy::Prim(PrimType::I64))),
            )
            .collect();
        let ht = |v: &VName| types.get(&v.id).cloned();
        let mut n = 0;
        for stm in &f.body.stms {
            if let vkad_core::ir::Exp::Soac(Soac::Map { w, arrs, lam }) = &stm.exp {
                valid(&map_kernel(&c.ir, w, arrs, lam, &stm.loc, &ht).unwrap());
                n += 1;
            }
        }
        assert!(n > 0, "no map in {src}");
    }

    #[test]
    fn map_kernels_validate_with_device_addresses() {
        use crate::codegen::gen::{with_addressing, Addressing};
        with_addressing(Addressing::Addresses, || {
            map_kernels_validate(
                "entry main [n] (xs: [n]f64) (ys: [n]i32) (zs: [n]bool) = map3 (\\x y z -> if z then (x + f64.i32 y, ys[0]) else (x, y)) xs ys zs",
            );
        });
    }

    #[test]
    fn scalar_code_validates_for_every_type() {
        for it in IntType::ALL {
            let t = it.name();
            map_kernels_validate(&format!(
                "entry main [n] (xs: [n]{t}) (ys: [n]{t}) = map2 (\\x y -> (x + y, x / y, x % y, x // y, x %% y, x ** y, x << y, x >> y, x >>> y, {t}.popc x, {t}.clz x, {t}.ctz x, {t}.mul_hi x y, {t}.abs x, {t}.sgn x, f64.{t} x, f16.{t} x, u8.{t} x, i64.{t} x, x < y)) xs ys"
            ));
        }
        for ft in vkad_core::prim::FloatType::ALL {
            let t = ft.name();
            map_kernels_validate(&format!(
                "entry main [n] (xs: [n]{t}) (ys: [n]{t}) = map2 (\\x y -> (x + y, x % y, x ** y, {t}.sqrt x, {t}.exp x, {t}.log x, {t}.sin x, {t}.gamma x, {t}.lgamma x, {t}.erfc x, {t}.round x, {t}.to_bits x, i8.{t} x, u64.{t} x, f16.{t} x, {t}.hypot x y, {t}.lerp x y x, {t}.mad x y x)) xs ys"
            ));
        }
    }
}
