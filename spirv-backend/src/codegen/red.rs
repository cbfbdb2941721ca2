//! What only a reduction does in the chunked kernels of [`super::chunked`]: each thread's
//! partial ([`ThreadReduce`]) and the workgroup's result, combined by one thread in order
//! ([`Reduce`]) or by a tree ([`TreeReduce`], [`StridedReduce`]).
//!
//! [`ThreadReduce`]: super::chunked::Phase::ThreadReduce
//! [`Reduce`]: super::chunked::Phase::Reduce
//! [`TreeReduce`]: super::chunked::Phase::TreeReduce
//! [`StridedReduce`]: super::chunked::Phase::StridedReduce

use crate::codegen::fold::{fold_range, store_all, Chunk};
use crate::codegen::gen::{Gen, Ie, R, WG};
use crate::codegen::thread::{KCtx, KVal};
use rspirv::spirv::Word;
use vkad_core::prim::PrimType;

/// [`Phase::ThreadReduce`](super::chunked::Phase::ThreadReduce): the thread folds its
/// sub-chunk and writes its partial `out[tid]`.
pub(super) fn thread_reduce<'p>(k: &mut KCtx<'p>, g: &mut Gen, c: &Chunk<'p, '_>) -> R<()> {
    let Chunk {
        op,
        ref ins,
        ref outs,
        ref accs,
        lo,
        hi,
        tid,
        u64t,
        loc,
        ..
    } = *c;
    fold_range(k, g, op, ins, accs, lo, hi, None, loc)?;
    for (&(v, rt, t), o) in accs.iter().zip(outs) {
        let x = g.load(rt, v)?;
        let idx = g.b.i_add(u64t, None, o.off, tid).ie()?;
        g.store_elem(o.bi, t, idx, x)?;
    }
    Ok(())
}

/// The end of a tree reduction (`TreeReduce`, `StridedReduce`): after
/// [`tree`](super::fold::tree), thread 0 writes the workgroup's result (`shared[0]`) to
/// `out[group]`.
pub(super) fn tree_result(
    g: &mut Gen,
    c: &Chunk<'_, '_>,
    shared: &[(Word, Word, PrimType, Word)],
    is0: Word,
    z32: Word,
) -> R<()> {
    let Chunk {
        ref outs,
        gid64,
        u64t,
        ..
    } = *c;
    // shared[0] holds the workgroup's result.
    let st = g.begin_if(is0)?;
    for (&(arr, wt, t, _), o) in shared.iter().zip(outs) {
        let p = g.shared_ptr(arr, wt, z32)?;
        let w = g.load(wt, p)?;
        let x = g.word_to_reg(t, w)?;
        let idx = g.b.i_add(u64t, None, o.off, gid64).ie()?;
        g.store_elem(o.bi, t, idx, x)?;
    }
    g.else_(st)?;
    g.end_if(st)?;
    Ok(())
}

/// The end of [`Phase::Reduce`](super::chunked::Phase::Reduce): thread 0 folds the workgroup's
/// partials in `shared` in order and writes the result to `out[group]`.
pub(super) fn serial_result<'p>(
    k: &mut KCtx<'p>,
    g: &mut Gen,
    c: &Chunk<'p, '_>,
    shared: &[(Word, Word, PrimType, Word)],
    is0: Word,
) -> R<()> {
    let Chunk {
        op,
        ref outs,
        ref neutral,
        gid64,
        u64t,
        u32t,
        bt,
        loc,
        ..
    } = *c;
    let st = g.begin_if(is0)?;
    // Fold the WG partial results in order.
    let mut cur = Vec::new();
    for &(x, t) in neutral {
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
    for &(arr, wt, t, _) in shared {
        let p = g.shared_ptr(arr, wt, j)?;
        let w = g.load(wt, p)?;
        args.push(KVal::S(g.word_to_reg(t, w)?, t));
    }
    let r = k.lambda(g, &op.lam, args, loc)?;
    store_all(g, &cur, r, loc)?;
    let j1 = g.b.i_add(u32t, None, j, one).ie()?;
    g.store(jv, j1)?;
    g.end_loop(ls)?;
    for (&(v, rt, t), o) in cur.iter().zip(outs) {
        let x = g.load(rt, v)?;
        let idx = g.b.i_add(u64t, None, o.off, gid64).ie()?;
        g.store_elem(o.bi, t, idx, x)?;
    }
    g.else_(st)?;
    g.end_if(st)?;
    Ok(())
}
