//! What only a scan does in the chunked kernels of [`super::chunked`]: the last pass of the
//! big scans, each thread scanning its sub-chunk from its prefix ([`ThreadScan`]), the GPU's
//! scan through shared memory ([`TiledScan`]), and the rescan of each thread's sub-chunk after
//! the workgroup's partials are scanned by one thread ([`Scan`]) or by a tree ([`TreeScan`]).
//!
//! [`ThreadScan`]: super::chunked::Phase::ThreadScan
//! [`TiledScan`]: super::chunked::Phase::TiledScan
//! [`Scan`]: super::chunked::Phase::Scan
//! [`TreeScan`]: super::chunked::Phase::TreeScan

use crate::codegen::fold::{fold_batched, fold_range, store_all, tree, Chunk};
use crate::codegen::gen::{word_kind, Gen, Ie, R, WG};
use crate::codegen::thread::{KCtx, KVal, View};
use crate::error::Error;
use rspirv::spirv::Word;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::Operator;
use vkad_core::prim::PrimType;

/// Elements per thread of [`Phase::TiledScan`](super::chunked::Phase::TiledScan).
pub const TILE_CHUNK: usize = 8;

/// Shared memory [`Phase::TiledScan`](super::chunked::Phase::TiledScan) needs for components of these sizes (bytes each).
pub fn tiled_scan_bytes(word_bytes: &[usize]) -> usize {
    word_bytes.iter().sum::<usize>() * WG as usize * (TILE_CHUNK + 1)
}

/// [`Phase::ThreadScan`](super::chunked::Phase::ThreadScan): the thread scans its sub-chunk
/// from the inclusive prefix of the threads before it (`pre[tid - 1]`), writing every element.
pub(super) fn thread_scan<'p>(k: &mut KCtx<'p>, g: &mut Gen, c: &Chunk<'p, '_>) -> R<()> {
    let Chunk {
        op,
        ref ins,
        ref outs,
        ref pre,
        ref accs,
        lo,
        hi,
        tid,
        u64t,
        bt,
        loc,
        ..
    } = *c;
    if !pre.is_empty() {
        let z = g.c_u64(0);
        let has = g.b.u_greater_than(bt, None, tid, z).ie()?;
        g.if_then(has, |g| {
            let one = g.c_u64(1);
            let tm1 = g.b.i_sub(u64t, None, tid, one).ie()?;
            for (&(v, _, t), p) in accs.iter().zip(pre) {
                let idx = g.b.i_add(u64t, None, p.off, tm1).ie()?;
                let x = g.load_elem(p.bi, t, idx)?;
                g.store(v, x)?;
            }
            Ok(())
        })?;
    }
    fold_range(k, g, op, ins, accs, lo, hi, Some(outs), loc)?;
    Ok(())
}

/// [`Phase::TiledScan`](super::chunked::Phase::TiledScan): the workgroup's elements go through
/// shared memory (coalesced loads and stores), each thread scans its run of [`TILE_CHUNK`] in
/// order from its prefix.
pub(super) fn tiled_scan<'p>(k: &mut KCtx<'p>, g: &mut Gen, c: &Chunk<'p, '_>) -> R<()> {
    let Chunk {
        op,
        ref ins,
        ref outs,
        ref pre,
        ref neutral,
        ref accs,
        n,
        lid,
        gid64,
        gstart,
        u64t,
        u32t,
        bt,
        loc,
        ..
    } = *c;
    // Load the group's tile (coalesced), scan in shared memory, store it (coalesced).
    let c = TILE_CHUNK as u32;
    let mut tiles = Vec::new();
    for &(_, rt, t) in accs {
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
    tile_io(g, false, k)?;
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
                for &(v, rt, t) in accs {
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
                store_all(g, accs, r, loc)?;
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
    run(g, k, false)?;
    // The threads' partials, scanned by a tree.
    let mut shared = Vec::new();
    for &(v, rt, t) in accs {
        let wt = g.word_ty(word_kind(t));
        let arr = g.shared_array(wt, WG);
        let x = g.load(rt, v)?;
        let w = g.reg_to_word(t, x)?;
        let p = g.shared_ptr(arr, wt, lid)?;
        g.store(p, w)?;
        shared.push((arr, wt, t, rt));
    }
    g.control_barrier()?;
    tree(k, g, op, &shared, lid, true, loc)?;
    thread_prefix(k, g, op, &shared, accs, neutral, pre, lid, gid64, loc)?;
    run(g, k, true)?;
    g.control_barrier()?;
    tile_io(g, true, k)?;
    Ok(())
}

/// The end of [`Phase::TreeScan`](super::chunked::Phase::TreeScan): after [`tree`] scanned the
/// partials in `shared`, each thread scans its sub-chunk again from its prefix
/// ([`thread_prefix`]).
pub(super) fn tree_rescan<'p>(
    k: &mut KCtx<'p>,
    g: &mut Gen,
    c: &Chunk<'p, '_>,
    shared: &[(Word, Word, PrimType, Word)],
) -> R<()> {
    let Chunk {
        op,
        ref ins,
        ref outs,
        ref pre,
        ref neutral,
        ref accs,
        lid,
        gid64,
        lo,
        hi,
        loc,
        ..
    } = *c;
    thread_prefix(k, g, op, shared, accs, neutral, pre, lid, gid64, loc)?;
    let one = g.c_u64(1);
    fold_batched(k, g, op, ins, accs, lo, hi, one, Some(outs), loc)?;
    Ok(())
}

/// The end of [`Phase::Scan`](super::chunked::Phase::Scan): thread 0 scans the workgroup's
/// partials in `shared` (exclusively, from the group's prefix), then each thread scans its
/// sub-chunk again from its prefix.
pub(super) fn serial_rescan<'p>(
    k: &mut KCtx<'p>,
    g: &mut Gen,
    c: &Chunk<'p, '_>,
    shared: &[(Word, Word, PrimType, Word)],
    is0: Word,
) -> R<()> {
    let Chunk {
        op,
        ref ins,
        ref outs,
        ref pre,
        ref neutral,
        ref accs,
        lid,
        gid64,
        lo,
        hi,
        u64t,
        u32t,
        bt,
        loc,
        ..
    } = *c;
    let st = g.begin_if(is0)?;
    // Exclusive scan of the WG partials in place, from the group's prefix.
    let mut cur = Vec::new();
    for &(x, t) in neutral {
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
        for (&(v, _, t), p) in cur.iter().zip(pre) {
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
    for &(arr, wt, t, _) in shared {
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
    let r = k.lambda(g, &op.lam, args, loc)?;
    store_all(g, &cur, r, loc)?;
    let j1 = g.b.i_add(u32t, None, j, one).ie()?;
    g.store(jv, j1)?;
    g.end_loop(ls)?;
    g.else_(st)?;
    g.end_if(st)?;
    g.control_barrier()?;
    // Each thread rescans its sub-chunk from its exclusive prefix.
    for (&(v, _, t), &(arr, wt, _, _)) in accs.iter().zip(shared) {
        let p = g.shared_ptr(arr, wt, lid)?;
        let w = g.load(wt, p)?;
        let x = g.word_to_reg(t, w)?;
        g.store(v, x)?;
    }
    fold_range(k, g, op, ins, accs, lo, hi, Some(outs), loc)?;
    Ok(())
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
