//! What the chunked reduction and scan kernels ([`super::chunked`], [`super::red`],
//! [`super::scan`]) and the segmented ones ([`super::segmented`]) share: a thread's fold of a
//! range of elements ([`fold_range`], [`fold_batched`]), the tree that combines a workgroup's
//! values in shared memory ([`tree`]), and the state a chunked kernel's phases start from
//! ([`Chunk`]).

use crate::codegen::gen::{Gen, Ie, R, WG};
use crate::codegen::thread::{KCtx, KVal, View};
use crate::error::Error;
use rspirv::spirv::Word;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::Operator;
use vkad_core::prim::PrimType;

/// What every phase of a chunked kernel starts from ([`super::chunked::chunked`] makes it;
/// the phases of [`super::red`] and [`super::scan`] take it): the operator and the arrays, and the sub-chunk
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
    let wg = g.c_u32(WG);
    team_tree(k, g, op, shared, lid, wg, scan, loc)
}

/// [`tree`] within each team of `width` consecutive threads (`width` a power of two dividing
/// WG, a u32 value the same in the whole workgroup): team `j` combines elements
/// `[j·width, (j+1)·width)` of `shared`, leaving its total in element `j·width` (`scan`
/// false) or its inclusive scan in place (`scan` true). Ends with a barrier. Every thread of
/// the workgroup must call it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn team_tree<'p>(
    k: &mut KCtx<'p>,
    g: &mut Gen,
    op: &'p Operator,
    shared: &[(Word, Word, PrimType, Word)],
    lid: Word,
    width: Word,
    scan: bool,
    loc: &Option<SrcLoc>,
) -> R<()> {
    let u32t = g.t_u32();
    let bt = g.t_bool();
    let dv = g.var(u32t);
    let one = g.c_u32(1);
    g.store(dv, one)?;
    let z32 = g.c_u32(0);
    // The thread's place in its team.
    let wm = g.b.i_sub(u32t, None, width, one).ie()?;
    let lane = g.b.bitwise_and(u32t, None, lid, wm).ie()?;
    // The partners' values, read before the barrier that precedes the writes (scan).
    let mut tmp = Vec::new();
    for &(_, _, t, rt) in shared {
        let v = g.var(rt);
        tmp.push((v, rt, t));
    }
    let ls = g.begin_loop()?;
    let d = g.load(u32t, dv)?;
    let c = g.b.u_less_than(bt, None, d, width).ie()?;
    g.loop_cond(ls, c)?;
    let d = g.load(u32t, dv)?;
    // (Reduce) thread l with l % 2d == 0: shared[l] = shared[l] ⊙ shared[l + d] (teams start
    // at multiples of `width` ≥ 2d, so l + d is in l's team).
    // (Scan) thread l whose lane is ≥ d: shared[l] = shared[l - d] ⊙ shared[l].
    let (active, left, right) = if scan {
        let a = g.b.u_greater_than_equal(bt, None, lane, d).ie()?;
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
    stride: Word,
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
        let jc = g.c_u64(j as u64);
        let off = g.b.i_mul(u64t, None, jc, stride).ie()?;
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
    let unroll = g.c_u64(UNROLL as u64);
    let step = g.b.i_mul(u64t, None, unroll, stride).ie()?;
    let i1 = g.b.i_add(u64t, None, i, step).ie()?;
    g.store(iv, i1)?;
    g.end_loop(st)
}
