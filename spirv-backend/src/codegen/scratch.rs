//! Per-thread arrays in kernels ("memory expansion"): every thread of a `map` kernel owns a slice
//! of a scratch buffer the host allocates (threads × per-thread capacity), one buffer of 32-bit
//! words and one of 64-bit words. Inside its slice a thread allocates like a stack: a `top`
//! variable per buffer, reset at every row the thread computes and restored at the end of every
//! loop iteration (values that live on are copied out first).
//!
//! The capacity is not computed from the program: the host guesses it (module `exec`), and a
//! thread whose allocations go beyond it records how much it needed (atomic max into the "need"
//! buffer, at its first overflow), stops its loops, and the host launches again with more. All
//! scratch accesses are clamped to the buffer, so an overflowing thread never touches memory
//! outside it. Map kernels only write their own fresh outputs, so running one again is safe.
//!
//! Per-thread arrays follow the IR's uniqueness rules: an `Update` (and the destinations of
//! `scatter`/`reduce_by_index`) writes in place when its source already is a per-thread array,
//! and copies it there first otherwise (host arrays and lazy arrays are shared or computed). A
//! `copy` of a per-thread array is a fresh one; an inner `map` that reads per-thread arrays is
//! computed at once (a lazy one would see later in-place updates). Loops carrying arrays keep two
//! slots per array: a result that is the parameter updated in place stays, any other is written
//! into the other slot (double buffering). `if` results are per-thread arrays whose place is
//! chosen at run time.
//!
//! Bindings: temporary 0 is the need buffer (`u32` words: 32-bit, 64-bit), temporaries 1 and 2
//! the 32-bit and 64-bit scratch buffers; literals 0 and 1 the per-thread capacities in words,
//! literal 4 the number of threads that have scratch (threads beyond it get no rows).

use crate::codegen::gen::{word_kind, Gen, Ie, WordKind, ERR_LOOP_LIMIT, LAVAPIPE_LOOP_LIMIT, R};
use crate::codegen::layout::{ArgSrc, BindSrc};
use crate::codegen::reuse;
use crate::codegen::thread::{construct_name, natural_from, KCtx, KVal, Lazy, View};
use crate::error::Error;
use rspirv::spirv::Word;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{
    Body, DimIndex, Exp, Lambda, LoopForm, Operator, Param, Soac, Stm, SubExp, Type, VName,
};
use vkad_core::prim::PrimType;

/// A kernel's scratch memory (see the module doc). Index 0: 32-bit words, 1: 64-bit words.
pub struct Scratch {
    /// Per-thread capacity in words (u64).
    cap: [Word; 2],
    /// This thread's first word.
    base: [Word; 2],
    /// The distance between two consecutive words of the thread (see [`Scratch::new`]).
    unit: Word,
    /// Words in the whole buffer.
    total: [Word; 2],
    /// Function variables: the next free word (relative to `base`).
    top: [Word; 2],
    /// Function variable (bool): this thread has overflowed its capacity.
    ovf: Word,
    /// Function variables (u64): the words the thread's allocations needed when it first
    /// overflowed, of the kind that overflowed (0 for the other); the kernel's end reports it
    /// ([`KCtx::report_scratch_need`]).
    first_need: [Word; 2],
    /// The scratch bindings, declared on first use.
    bi: [Option<u32>; 2],
    need: Option<u32>,
}

fn kind_ix(t: PrimType) -> usize {
    match word_kind(t) {
        WordKind::U64 => 1,
        _ => 0,
    }
}

impl Scratch {
    /// Reads the capacities and computes the base of thread `gid` (a `u64`: the invocation's
    /// global index, or a group kernel's workgroup index); must be called in the entry block.
    ///
    /// With `interleaved` (one thread per `gid`), word `j` of thread `gid` is word
    /// `gid + j · threads` of the buffer: the invocations of a subgroup, which run the same
    /// code, read and write neighbouring words (one cache line, or one coalesced transaction
    /// on a GPU, instead of one per invocation, `cap` words apart). A group kernel's
    /// invocations share their workgroup's words and work on neighbouring elements of one
    /// array, so there each workgroup's words are contiguous (word `gid · cap + j`).
    pub fn new(g: &mut Gen, k: &mut KCtx, gid: Word, interleaved: bool) -> R<Scratch> {
        let u64t = g.t_u64();
        let cap = [
            k.arg(g, ArgSrc::Lit(0), PrimType::I64)?,
            k.arg(g, ArgSrc::Lit(1), PrimType::I64)?,
        ];
        // The threads that have scratch (literal 4).
        let threads = k.arg(g, ArgSrc::Lit(4), PrimType::I64)?;
        let mut base = [0; 2];
        let mut total = [0; 2];
        let mut top = [0; 2];
        let z = g.c_u64(0);
        for i in 0..2 {
            base[i] = if interleaved {
                gid
            } else {
                g.b.i_mul(u64t, None, gid, cap[i]).ie()?
            };
            total[i] = g.b.i_mul(u64t, None, threads, cap[i]).ie()?;
            top[i] = g.var(u64t);
            g.store(top[i], z)?;
        }
        let unit = if interleaved { threads } else { g.c_u64(1) };
        let bt = g.t_bool();
        let ovf = g.var(bt);
        let f = g.c_bool(false);
        g.store(ovf, f)?;
        let first_need = [g.var_init(u64t, z), g.var_init(u64t, z)];
        Ok(Scratch {
            cap,
            base,
            unit,
            total,
            top,
            ovf,
            first_need,
            bi: [None, None],
            need: None,
        })
    }
}

/// Every variable a body mentions (over-approximation of its free variables).
pub(super) fn body_vars(b: &Body, out: &mut Vec<u32>) {
    for s in &b.stms {
        exp_vars(&s.exp, out);
    }
    for r in &b.result {
        se(r, out);
    }
}

fn se(s: &SubExp, out: &mut Vec<u32>) {
    if let SubExp::Var(v) = s {
        out.push(v.id);
    }
}

fn lam_vars(l: &Lambda, out: &mut Vec<u32>) {
    body_vars(&l.body, out);
    for t in &l.ret {
        for d in t.shape() {
            se(d, out);
        }
    }
}

fn idx_vars(idx: &[DimIndex], out: &mut Vec<u32>) {
    for d in idx {
        match d {
            DimIndex::Fix(i) => se(i, out),
            DimIndex::Slice { start, len, stride } => {
                se(start, out);
                se(len, out);
                se(stride, out);
            }
        }
    }
}

pub(super) fn exp_vars(e: &Exp, out: &mut Vec<u32>) {
    let vs = |vs: &[VName], out: &mut Vec<u32>| out.extend(vs.iter().map(|v| v.id));
    match e {
        Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Conv(_, a) => se(a, out),
        Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) => {
            se(a, out);
            se(b, out);
        }
        Exp::Math(_, args) | Exp::Apply { args, .. } => args.iter().for_each(|a| se(a, out)),
        Exp::Index(v, idx) => {
            out.push(v.id);
            idx_vars(idx, out);
        }
        Exp::Update(v, idx, x) => {
            out.push(v.id);
            idx_vars(idx, out);
            se(x, out);
        }
        Exp::Iota {
            n, start, stride, ..
        } => {
            se(n, out);
            se(start, out);
            se(stride, out);
        }
        Exp::Replicate { shape, value } => {
            shape.iter().for_each(|d| se(d, out));
            se(value, out);
        }
        Exp::ArrayLit { elems, .. } => elems.iter().for_each(|a| se(a, out)),
        Exp::Concat { arrs, w, .. } => {
            vs(arrs, out);
            se(w, out);
        }
        Exp::Copy(v) | Exp::Rearrange(_, v) => out.push(v.id),
        Exp::Reshape(shape, v) => {
            shape.iter().for_each(|d| se(d, out));
            out.push(v.id);
        }
        Exp::SortByKey { keys, bits } => {
            out.push(keys.id);
            se(bits, out);
        }
        Exp::Assert { cond, args, .. } => {
            se(cond, out);
            args.iter().for_each(|x| se(x, out));
        }
        Exp::If {
            cond,
            then_b,
            else_b,
            ..
        } => {
            se(cond, out);
            body_vars(then_b, out);
            body_vars(else_b, out);
        }
        Exp::Loop { params, form, body } => {
            params.iter().for_each(|(_, i)| se(i, out));
            if let LoopForm::For { bound, .. } = form {
                se(bound, out);
            }
            body_vars(body, out);
        }
        Exp::Soac(s) => match s {
            Soac::Map { w, arrs, lam } => {
                se(w, out);
                vs(arrs, out);
                lam_vars(lam, out);
            }
            Soac::Reduce { w, arrs, op } | Soac::Scan { w, arrs, op } => {
                se(w, out);
                vs(arrs, out);
                lam_vars(&op.lam, out);
                op.neutral.iter().for_each(|a| se(a, out));
            }
            Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            } => {
                se(w, out);
                vs(dest, out);
                out.push(inds.id);
                vs(vals, out);
                lam_vars(&op.lam, out);
                op.neutral.iter().for_each(|a| se(a, out));
            }
            Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            } => {
                se(w, out);
                vs(dest, out);
                vs(inds, out);
                vs(vals, out);
            }
        },
        Exp::WithAcc { inputs, lam } => {
            for i in inputs {
                vs(&i.arrs, out);
                if let Some(op) = &i.op {
                    lam_vars(&op.lam, out);
                }
            }
            lam_vars(lam, out);
        }
        Exp::UpdAcc { acc, idx, vals } => {
            out.push(acc.id);
            idx.iter().chain(vals).for_each(|a| se(a, out));
        }
        Exp::Jvp { lam, args, seeds } | Exp::Vjp { lam, args, seeds } => {
            lam_vars(lam, out);
            args.iter().chain(seeds).for_each(|a| se(a, out));
        }
        Exp::WithVjp {
            primal,
            adjoint,
            args,
        } => {
            lam_vars(primal, out);
            lam_vars(adjoint, out);
            args.iter().for_each(|a| se(a, out));
        }
    }
}

/// One loop parameter while its loop is compiled.
enum LoopVar {
    Scalar(Word, Word, PrimType),
    /// An accumulator: a compile-time handle, the same in every iteration.
    Acc(usize),
    /// An array in two slots: `cur` holds the offset of the current one, `sum` the sum of both
    /// offsets (the other is `sum - cur`).
    Array {
        bi: u32,
        elem: PrimType,
        cur: Word,
        sum: Word,
        dims: Vec<(Word, Word)>,
    },
}

/// One component of a `reduce`/`scan` with array operands.
enum FoldVar {
    Scalar(Word, Word, PrimType),
    /// The accumulator's offset variable; for `reduce` the sum of the two slots' offsets.
    Array {
        bi: u32,
        elem: PrimType,
        cur: Word,
        sum: Word,
        dims: Vec<(Word, Word)>,
    },
}

impl<'p> KCtx<'p> {
    // ----- memory ----------------------------------------------------------------------------

    fn is_scratch_bi(&self, bi: u32) -> Option<usize> {
        let s = self.scratch.as_ref()?;
        (0..2).find(|&k| s.bi[k] == Some(bi))
    }

    /// Whether `x` is (or reads) memory of this thread's scratch.
    pub(super) fn is_scratch_val(&self, x: &KVal) -> bool {
        match x {
            KVal::V(v) => self.is_scratch_bi(v.bi).is_some(),
            KVal::L(k) => match &self.lazies[*k] {
                Lazy::Rep { row, .. } => self.is_scratch_val(row),
                _ => false,
            },
            KVal::S(..) | KVal::Acc(_) => false,
        }
    }

    /// The scratch binding of word kind `k` (declared on first use).
    fn scratch_bi(&mut self, g: &mut Gen, k: usize) -> R<u32> {
        let s = self
            .scratch
            .as_ref()
            .ok_or_else(|| Error::bug("no scratch memory"))?;
        if let Some(bi) = s.bi[k] {
            return Ok(bi);
        }
        if s.need.is_none() {
            let nb = g.binding(WordKind::U32);
            self.binds.push(BindSrc::Tmp(0));
            if let Some(s) = self.scratch.as_mut() {
                s.need = Some(nb);
            }
        }
        let bi = g.binding(if k == 1 { WordKind::U64 } else { WordKind::U32 });
        self.binds.push(BindSrc::Tmp(1 + k));
        if let Some(s) = self.scratch.as_mut() {
            s.bi[k] = Some(bi);
        }
        Ok(bi)
    }

    /// A fresh per-thread array of `elem` with the given sizes (row-major). `what` names the
    /// construct for the error where the kernel has no scratch memory.
    pub(super) fn alloc(
        &mut self,
        g: &mut Gen,
        elem: PrimType,
        sizes: &[Word],
        what: &str,
        loc: &Option<SrcLoc>,
    ) -> R<View> {
        if self.scratch.is_none() {
            return Err(Error::unsupported(what, loc));
        }
        self.check_group_alloc(loc)?;
        let k = kind_ix(elem);
        let bi = self.scratch_bi(g, k)?;
        let (cap, base, unit, top, ovf, first_need) = match &self.scratch {
            Some(s) => (
                s.cap[k],
                s.base[k],
                s.unit,
                s.top[k],
                s.ovf,
                s.first_need[k],
            ),
            None => return Err(Error::bug("no scratch memory")),
        };
        let u64t = g.t_u64();
        let bt = g.t_bool();
        let mut n = g.c_u64(1);
        for &s in sizes {
            n = g.b.i_mul(u64t, None, n, s).ie()?;
        }
        let t = g.load(u64t, top)?;
        let nt = g.b.i_add(u64t, None, t, n).ie()?;
        g.store(top, nt)?;
        let over = g.b.u_greater_than(bt, None, nt, cap).ie()?;
        let o = g.load(bt, ovf)?;
        let no = g.b.logical_not(bt, None, o).ie()?;
        // The first overflow's need is kept without a branch, as checks are (`Gen::fail_if`).
        let first = g.b.logical_and(bt, None, over, no).ie()?;
        let was = g.load(u64t, first_need)?;
        let kept = g.b.select(u64t, None, first, nt, was).ie()?;
        g.store(first_need, kept)?;
        let now = g.b.logical_or(bt, None, o, over).ie()?;
        g.store(ovf, now)?;
        let at = g.b.i_mul(u64t, None, t, unit).ie()?;
        let off = g.b.i_add(u64t, None, base, at).ie()?;
        Ok(View {
            bi,
            elem,
            off,
            dims: natural_from(g, sizes, unit)?,
        })
    }

    /// At the kernel's end: a thread that overflowed its scratch raises the need buffer's word
    /// of each kind to what it needed (`atomicMax`), for the host to grow the scratch and run
    /// the kernel again.
    pub(crate) fn report_scratch_need(&mut self, g: &mut Gen) -> R<()> {
        let Some(s) = &self.scratch else {
            return Ok(());
        };
        let Some(need) = s.need else {
            return Ok(());
        };
        let (ovf, first_need, used) = (s.ovf, s.first_need, s.bi.map(|b| b.is_some()));
        let (bt, u32t, u64t) = (g.t_bool(), g.t_u32(), g.t_u64());
        let o = g.load(bt, ovf)?;
        g.if_then(o, |g| {
            for k in (0..2).filter(|&k| used[k]) {
                let n = g.load(u64t, first_need[k])?;
                let lim = g.c_u64(u32::MAX as u64);
                let c = g.glsl(u64t, rspirv::spirv::GlslStd450Op::UMin, &[n, lim])?;
                let c = g.b.u_convert(u32t, None, c).ie()?;
                let idx = g.c_u64(k as u64);
                let p = g.word_ptr(need, idx)?;
                let dev = g.c_u32(rspirv::spirv::Scope::Device as u32);
                let sem = g.c_u32(0);
                g.b.atomic_u_max(u32t, None, p, dev, sem, c).ie()?;
            }
            Ok(())
        })
    }

    /// Scratch accesses are clamped to the buffer (an overflowing thread's are meaningless).
    fn guard(&mut self, g: &mut Gen, bi: u32, idx: Word) -> R<Word> {
        match (self.is_scratch_bi(bi), &self.scratch) {
            (Some(k), Some(s)) => {
                let total = s.total[k];
                let bt = g.t_bool();
                let u64t = g.t_u64();
                let ok = g.b.u_less_than(bt, None, idx, total).ie()?;
                let z = g.c_u64(0);
                g.b.select(u64t, None, ok, idx, z).ie()
            }
            _ => Ok(idx),
        }
    }

    /// Loads element `idx` of binding `bi`.
    pub(super) fn ld(&mut self, g: &mut Gen, bi: u32, t: PrimType, idx: Word) -> R<Word> {
        let idx = self.guard(g, bi, idx)?;
        g.load_elem(bi, t, idx)
    }

    /// Stores element `idx` of binding `bi`.
    pub(super) fn st(&mut self, g: &mut Gen, bi: u32, t: PrimType, idx: Word, x: Word) -> R<()> {
        let idx = self.guard(g, bi, idx)?;
        if self.at_group_level() {
            return self.group_store(g, bi, t, idx, x);
        }
        g.store_elem(bi, t, idx, x)
    }

    /// The current scratch tops (to free what is allocated after this point with `reset`).
    pub(super) fn mark(&mut self, g: &mut Gen) -> R<Option<[Word; 2]>> {
        match &self.scratch {
            Some(s) => {
                let (a, b) = (s.top[0], s.top[1]);
                let u64t = g.t_u64();
                Ok(Some([g.load(u64t, a)?, g.load(u64t, b)?]))
            }
            None => Ok(None),
        }
    }

    pub(super) fn reset(&mut self, g: &mut Gen, m: Option<[Word; 2]>) -> R<()> {
        if let (Some(m), Some(s)) = (m, &self.scratch) {
            let (a, b) = (s.top[0], s.top[1]);
            g.store(a, m[0])?;
            g.store(b, m[1])?;
        }
        Ok(())
    }

    /// Frees all of this thread's scratch (a new row of the `map`).
    pub(crate) fn scratch_restart(&mut self, g: &mut Gen) -> R<()> {
        if let Some(s) = &self.scratch {
            let (a, b) = (s.top[0], s.top[1]);
            let z = g.c_u64(0);
            g.store(a, z)?;
            g.store(b, z)?;
        }
        Ok(())
    }

    /// A loop condition that is also false once the thread has overflowed its scratch.
    pub(crate) fn live(&mut self, g: &mut Gen, c: Word) -> R<Word> {
        match &self.scratch {
            Some(s) => {
                let ovf = s.ovf;
                let bt = g.t_bool();
                let o = g.load(bt, ovf)?;
                let no = g.b.logical_not(bt, None, o).ie()?;
                g.b.logical_and(bt, None, c, no).ie()
            }
            None => Ok(c),
        }
    }

    /// At the end of a loop body (before its back edge), where `more` tells whether the loop
    /// goes on: reports lavapipe's loop limit at `loc` if lavapipe would stop the loop here
    /// (it decrements a limiter at every back edge and loop exit, and leaves the loop at a
    /// back edge once it has done so `LAVAPIPE_LOOP_LIMIT` times). The back edge only notes
    /// it in a flag of the loop; the loop's exit reports it ([`Gen::limit_hit`]).
    pub(super) fn backedge(&mut self, g: &mut Gen, more: Word, loc: &Option<SrcLoc>) -> R<()> {
        if !self.loop_check {
            return Ok(());
        }
        let Some(cv) = g.loop_limit.as_ref().map(|l| l.count) else {
            return Ok(());
        };
        let bt = g.t_bool();
        let u32t = g.t_u32();
        let x = g.load(u32t, cv)?;
        let lim = g.c_u32(LAVAPIPE_LOOP_LIMIT - 1);
        let out = g.b.u_greater_than_equal(bt, None, x, lim).ie()?;
        let bad = g.b.logical_and(bt, None, out, more).ie()?;
        let site = g.site(loc, "lavapipe's loop limit");
        g.limit_hit(bad, site)
    }

    /// At the end of the kernel: reports lavapipe's loop limit if a loop of the thread was cut
    /// short by it (`LoopLimit::cut`: loops without a check of their own, such as copies,
    /// fills and inner folds, would otherwise stop early silently).
    pub(crate) fn exhausted(&mut self, g: &mut Gen, loc: &Option<SrcLoc>) -> R<()> {
        if !self.loop_check {
            return Ok(());
        }
        let Some(cut) = g.loop_limit.as_ref().map(|l| l.cut) else {
            return Ok(());
        };
        let bt = g.t_bool();
        let bad = g.load(bt, cut)?;
        let site = g.site(loc, "lavapipe's loop limit");
        g.fail_if(bad, ERR_LOOP_LIMIT, site)
    }

    /// [`KCtx::backedge`] for a loop that goes on while `next < n` (u64).
    pub(crate) fn backedge_lt(
        &mut self,
        g: &mut Gen,
        next: Word,
        n: Word,
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        if !self.loop_check {
            return Ok(());
        }
        let bt = g.t_bool();
        let more = g.b.u_less_than(bt, None, next, n).ie()?;
        self.backedge(g, more, loc)
    }

    /// [`KCtx::backedge`] for an IR loop: `counter` (the variable of a `for` loop, already
    /// advanced) or `cond` (the variable of a `while` loop's condition parameter, updated).
    pub(super) fn loop_backedge(
        &mut self,
        g: &mut Gen,
        form: &LoopForm,
        counter: Option<(Word, Word, vkad_core::prim::IntType)>,
        cond: Option<(Word, Word)>,
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        if !self.loop_check {
            return Ok(());
        }
        let bt = g.t_bool();
        let more = match (form, counter, cond) {
            (LoopForm::For { bound, .. }, Some((cv, rt, it)), _) => {
                let n = self.scalar(g, bound, loc)?;
                let i = g.load(rt, cv)?;
                if it.signed() {
                    g.b.s_less_than(bt, None, i, n).ie()?
                } else {
                    g.b.u_less_than(bt, None, i, n).ie()?
                }
            }
            (LoopForm::While(_), _, Some((var, rt))) => g.load(rt, var)?,
            _ => return Err(Error::bug("loop form")),
        };
        self.backedge(g, more, loc)
    }

    // ----- values ------------------------------------------------------------------------------

    /// The element type of an array value.
    pub(super) fn elem_of(&self, x: &KVal) -> R<PrimType> {
        match x {
            KVal::V(v) => Ok(v.elem),
            KVal::S(_, t) => Ok(*t),
            KVal::L(k) => match &self.lazies[*k] {
                Lazy::Map { lam, res, .. } => lam
                    .ret
                    .get(*res)
                    .and_then(|t| t.elem())
                    .ok_or_else(|| Error::bug("lazy element type")),
                Lazy::Iota { it, .. } => Ok(PrimType::Int(*it)),
                Lazy::Rep { row, .. } => self.elem_of(row),
            },
            KVal::Acc(_) => Err(Error::bug("element type of an accumulator")),
        }
    }

    /// The shape of a value (empty for scalars).
    pub(super) fn shape_of(&self, x: &KVal) -> R<Vec<Word>> {
        match x {
            KVal::V(v) => Ok(v.dims.iter().map(|d| d.0).collect()),
            KVal::S(..) => Ok(Vec::new()),
            KVal::Acc(_) => Err(Error::bug("shape of an accumulator")),
            KVal::L(k) => match &self.lazies[*k] {
                Lazy::Map { n, shape, .. } => {
                    let mut s = vec![*n];
                    s.extend(
                        shape
                            .as_ref()
                            .ok_or_else(|| Error::bug("unknown shape of an inner `map`"))?,
                    );
                    Ok(s)
                }
                Lazy::Iota { n, .. } => Ok(vec![*n]),
                Lazy::Rep { n, row } => {
                    let mut s = vec![*n];
                    s.extend(self.shape_of(row)?);
                    Ok(s)
                }
            },
        }
    }

    /// The sizes of pattern element `k` of `stm`, without the first `skip` dimensions.
    pub(super) fn row_shape(
        &mut self,
        g: &mut Gen,
        stm: &Stm,
        k: usize,
        skip: usize,
    ) -> R<Vec<Word>> {
        let t = &stm
            .pat
            .elems
            .get(k)
            .ok_or_else(|| Error::bug("pattern element"))?
            .ty;
        let mut out = Vec::new();
        for d in t.shape().iter().skip(skip) {
            out.push(self.index(g, d, &stm.loc)?);
        }
        Ok(out)
    }

    /// A fresh per-thread copy of an array value.
    pub(super) fn materialize(
        &mut self,
        g: &mut Gen,
        x: &KVal,
        elem: PrimType,
        stm: &Stm,
    ) -> R<View> {
        let shape = self.shape_of(x)?;
        let dst = self.alloc(g, elem, &shape, construct_name(&stm.exp), &stm.loc)?;
        self.write_into(g, &dst, x, &stm.loc)?;
        Ok(dst)
    }

    /// Row `i` of a view, as a view (no load).
    pub(super) fn row_view(&mut self, g: &mut Gen, v: &View, i: Word) -> R<View> {
        let u64t = g.t_u64();
        let (_, s) = *v
            .dims
            .first()
            .ok_or_else(|| Error::bug("row of an element"))?;
        let m = g.b.i_mul(u64t, None, i, s).ie()?;
        let off = g.b.i_add(u64t, None, v.off, m).ie()?;
        Ok(View {
            bi: v.bi,
            elem: v.elem,
            off,
            dims: v.dims[1..].to_vec(),
        })
    }

    /// A per-thread array that may be updated in place: `x` itself when it already is one.
    pub(super) fn own(&mut self, g: &mut Gen, x: KVal, stm: &Stm) -> R<View> {
        match x {
            KVal::V(v) if self.is_scratch_bi(v.bi).is_some() => Ok(v),
            KVal::S(..) => Err(Error::bug("in-place update of a scalar")),
            x => {
                let e = self.elem_of(&x)?;
                self.materialize(g, &x, e, stm)
            }
        }
    }

    /// An integer scalar as a u64 index (negative values are huge).
    fn idx_u64(&mut self, g: &mut Gen, x: &KVal) -> R<Word> {
        match x {
            KVal::S(w, PrimType::Int(t)) => g.int_to_u64(*t, *w),
            _ => Err(Error::bug("index of a non-integer type")),
        }
    }

    /// `for i in 0..n` (u64) with the scratch freed after every iteration and the loop stopped
    /// for an overflowing thread.
    pub(super) fn kloop(
        &mut self,
        g: &mut Gen,
        n: Word,
        loc: &Option<SrcLoc>,
        body: &mut dyn FnMut(&mut KCtx<'p>, &mut Gen, Word) -> R<()>,
    ) -> R<()> {
        let (z, one) = (g.c_u64(0), g.c_u64(1));
        self.range_loop(g, [z, n, one], loc, body)
    }

    /// `for (i = start; i < end; i += step)` (u64 words `[start, end, step]`), as
    /// [`KCtx::kloop`]: the scratch freed after every iteration, the loop stopped for an
    /// overflowing thread, lavapipe's limiter counted.
    pub(crate) fn range_loop(
        &mut self,
        g: &mut Gen,
        [start, end, step]: [Word; 3],
        loc: &Option<SrcLoc>,
        body: &mut dyn FnMut(&mut KCtx<'p>, &mut Gen, Word) -> R<()>,
    ) -> R<()> {
        let u64t = g.t_u64();
        let bt = g.t_bool();
        let iv = g.var(u64t);
        g.store(iv, start)?;
        let st = g.begin_loop()?;
        let i = g.load(u64t, iv)?;
        let c = g.b.u_less_than(bt, None, i, end).ie()?;
        let c = self.live(g, c)?;
        g.loop_cond(st, c)?;
        let i = g.load(u64t, iv)?;
        let mark = self.mark(g)?;
        body(self, g, i)?;
        self.reset(g, mark)?;
        let i1 = g.b.i_add(u64t, None, i, step).ie()?;
        g.store(iv, i1)?;
        self.backedge_lt(g, i1, end, loc)?;
        g.end_loop(st)
    }

    /// Whether the inner `map` `stm` over `inputs` with lambda `lam`, the statement being
    /// compiled, is better computed at once into per-thread arrays ([`super::reuse`]): there
    /// is scratch memory, the shapes of its rows are known here, and recomputing its rows
    /// where they are read would cost more loads than storing them.
    pub(super) fn compute_once(
        &mut self,
        g: &mut Gen,
        stm: &Stm,
        inputs: &[KVal],
        lam: &Lambda,
    ) -> bool {
        if self.scratch.is_none() {
            return false;
        }
        let Some(p) = self.place_of(stm) else {
            return false;
        };
        if !reuse::compute_once(p.stms, p.result, p.k, self.row_loads(inputs, lam)) {
            return false;
        }
        (0..stm.pat.elems.len()).all(|r| self.row_shape(g, stm, r, 0).is_ok())
    }

    /// Whether the inner `map` `stm`, the statement being compiled, may stay lazy though it
    /// reads per-thread arrays: all of its rows are read before anything can update those
    /// arrays in place ([`reuse::only_reduced_next`], [`reuse::only_returned`] where the
    /// body's results are written at once).
    pub(super) fn read_at_once(&self, stm: &Stm) -> bool {
        self.place_of(stm).is_some_and(|p| {
            reuse::only_reduced_next(p.stms, p.result, p.k)
                || (p.written && reuse::only_returned(p.stms, p.result, p.k))
        })
    }

    /// The [`Place`](super::thread::Place) of `stm` where it is the statement being compiled.
    fn place_of(&self, stm: &Stm) -> Option<super::thread::Place<'p>> {
        self.place
            .filter(|p| p.stms.get(p.k).is_some_and(|s| std::ptr::eq(s, stm)))
    }

    /// [`reuse::row_loads`] of a `map` over `inputs` with lambda `lam`: inputs that are
    /// arrays in buffers or lazy `map`s count, `iota`s and `replicate`s do not.
    fn row_loads(&self, inputs: &[KVal], lam: &Lambda) -> u32 {
        let in_buffers = inputs
            .iter()
            .filter(|x| match x {
                KVal::V(_) => true,
                KVal::L(k) => matches!(self.lazies[*k], Lazy::Map { .. }),
                KVal::S(..) | KVal::Acc(_) => false,
            })
            .count();
        reuse::row_loads(in_buffers.try_into().unwrap_or(u32::MAX), &lam.body)
    }

    /// Whether an inner `map` over `inputs` with body `body` reads per-thread arrays.
    pub(super) fn reads_scratch(&self, inputs: &[KVal], body: &Body) -> bool {
        if self.scratch.is_none() {
            return false;
        }
        if inputs.iter().any(|x| self.is_scratch_val(x)) {
            return true;
        }
        let mut vs = Vec::new();
        body_vars(body, &mut vs);
        vs.iter()
            .any(|id| self.env.get(id).is_some_and(|x| self.is_scratch_val(x)))
    }

    /// An inner `map` computed now into per-thread arrays.
    pub(super) fn eager_map(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        n: Word,
        inputs: &[KVal],
        lam: &'p Lambda,
    ) -> R<Vec<KVal>> {
        let loc = &stm.loc;
        let mut outs = Vec::with_capacity(lam.ret.len());
        for (res, t) in lam.ret.iter().enumerate() {
            let e = t.elem().ok_or_else(|| Error::bug("map of accumulators"))?;
            let shape = self.row_shape(g, stm, res, 0)?;
            outs.push(self.alloc(g, e, &shape, "a `map` inside a parallel operator", loc)?);
        }
        let inputs = inputs.to_vec();
        let outs2 = outs.clone();
        self.par_loop(g, n, loc, &mut |k, g, i| {
            let args = k.rows_of(g, &inputs, i, loc)?;
            let r = k.lambda_written(g, lam, args, loc)?;
            for (x, o) in r.iter().zip(&outs2) {
                let dst = k.row_view(g, o, i)?;
                k.write_into(g, &dst, x, loc)?;
            }
            Ok(())
        })?;
        Ok(outs.into_iter().map(KVal::V).collect())
    }

    /// The key of a lazy `map` result's computation (results of one `map` share it).
    fn lazy_key(&self, x: &KVal) -> Option<String> {
        match x {
            KVal::L(k) => match &self.lazies[*k] {
                Lazy::Map { lam, inputs, n, .. } => {
                    Some(format!("{:p}/{n}/{inputs:?}", *lam as *const Lambda))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Row `i` of each of `xs`, computing the function of an inner `map` once for all of its
    /// results among `xs` (instead of once per result).
    pub(crate) fn rows_of(
        &mut self,
        g: &mut Gen,
        xs: &[KVal],
        i: Word,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<KVal>> {
        let mut done: Vec<(String, Vec<KVal>)> = Vec::new();
        let mut out = Vec::with_capacity(xs.len());
        for x in xs {
            let key = self.lazy_key(x);
            let shared = key.as_ref().is_some_and(|k| {
                xs.iter()
                    .filter(|y| self.lazy_key(y).as_ref() == Some(k))
                    .count()
                    > 1
            });
            match (key, x) {
                (Some(key), KVal::L(k)) if shared => {
                    let (lam, inputs, res) = match &self.lazies[*k] {
                        Lazy::Map {
                            lam, inputs, res, ..
                        } => (*lam, inputs.clone(), *res),
                        _ => return Err(Error::bug("lazy map")),
                    };
                    let pos = match done.iter().position(|(d, _)| *d == key) {
                        Some(p) => p,
                        None => {
                            let mut args = Vec::with_capacity(inputs.len());
                            for a in &inputs {
                                args.push(self.row_of(g, a, i, loc)?);
                            }
                            let r = self.lambda(g, lam, args, loc)?;
                            done.push((key, r));
                            done.len() - 1
                        }
                    };
                    out.push(
                        done[pos]
                            .1
                            .get(res)
                            .cloned()
                            .ok_or_else(|| Error::bug("lazy result"))?,
                    );
                }
                _ => out.push(self.row_of(g, x, i, loc)?),
            }
        }
        Ok(out)
    }

    /// Writes each of `xs` into the view of the same index in `dsts`; results of one inner
    /// `map` with rows of the same length are written in one loop (computing its function
    /// once per row).
    pub(crate) fn write_all(
        &mut self,
        g: &mut Gen,
        dsts: &[View],
        xs: &[KVal],
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        let mut groups: Vec<(Option<String>, Vec<usize>)> = Vec::new();
        for (k, x) in xs.iter().enumerate() {
            let key = self.lazy_key(x).filter(|_| !dsts[k].dims.is_empty());
            match groups.iter_mut().find(|(g, _)| key.is_some() && *g == key) {
                Some((_, v)) => v.push(k),
                None => groups.push((key, vec![k])),
            }
        }
        for (_, ks) in groups {
            if ks.len() == 1 {
                self.write_into(g, &dsts[ks[0]], &xs[ks[0]], loc)?;
                continue;
            }
            let n = dsts[ks[0]].dims[0].0;
            let gx: Vec<KVal> = ks.iter().map(|&k| xs[k].clone()).collect();
            let gd: Vec<View> = ks.iter().map(|&k| dsts[k].clone()).collect();
            self.par_loop(g, n, loc, &mut |kc, g, i| {
                let rows = kc.rows_of(g, &gx, i, loc)?;
                for (d, r) in gd.iter().zip(&rows) {
                    let dr = kc.row_view(g, d, i)?;
                    kc.write_into(g, &dr, r, loc)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    // ----- statements --------------------------------------------------------------------------

    /// `x with [idx] = v`.
    pub(super) fn update(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        x: &VName,
        idx: &[DimIndex],
        v: &SubExp,
    ) -> R<()> {
        let loc = &stm.loc;
        let src = self.var(g, x, loc)?;
        if self.scratch.is_none() {
            return Err(Error::unsupported(construct_name(&stm.exp), loc));
        }
        let dst = self.own(g, src, stm)?;
        let target = self.locate(g, &dst, idx, stm)?;
        let val = self.sub(g, v, loc)?;
        self.write_into(g, &target, &val, loc)?;
        self.bind(stm, vec![KVal::V(dst)])
    }

    /// Concatenation along dimension `dim`.
    pub(super) fn concat(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        dim: usize,
        arrs: &[VName],
    ) -> R<()> {
        let loc = &stm.loc;
        let elem = pat_elem(stm, 0)?;
        let shape = self.row_shape(g, stm, 0, 0)?;
        let out = self.alloc(g, elem, &shape, construct_name(&stm.exp), loc)?;
        let u64t = g.t_u64();
        let (_, stride) = *out
            .dims
            .get(dim)
            .ok_or_else(|| Error::bug("concat dimension"))?;
        let mut start = g.c_u64(0);
        for a in arrs {
            let x = self.var(g, a, loc)?;
            let len = *self
                .shape_of(&x)?
                .get(dim)
                .ok_or_else(|| Error::bug("concat dimension"))?;
            let m = g.b.i_mul(u64t, None, start, stride).ie()?;
            let off = g.b.i_add(u64t, None, out.off, m).ie()?;
            let mut dims = out.dims.clone();
            dims[dim].0 = len;
            let sub = View {
                bi: out.bi,
                elem,
                off,
                dims,
            };
            self.write_into(g, &sub, &x, loc)?;
            start = g.b.i_add(u64t, None, start, len).ie()?;
        }
        self.bind(stm, vec![KVal::V(out)])
    }

    /// An array literal.
    pub(super) fn array_lit(&mut self, g: &mut Gen, stm: &'p Stm, elems: &[SubExp]) -> R<()> {
        let loc = &stm.loc;
        let elem = pat_elem(stm, 0)?;
        let shape = self.row_shape(g, stm, 0, 0)?;
        let out = self.alloc(g, elem, &shape, construct_name(&stm.exp), loc)?;
        for (j, e) in elems.iter().enumerate() {
            let x = self.sub(g, e, loc)?;
            let i = g.c_u64(j as u64);
            let row = self.row_view(g, &out, i)?;
            self.write_into(g, &row, &x, loc)?;
        }
        self.bind(stm, vec![KVal::V(out)])
    }

    /// `scatter dest inds vals` (sequential: later writes win; out-of-bounds indices ignored).
    pub(super) fn scatter(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        w: &SubExp,
        dest: &[VName],
        inds: &[VName],
        vals: &[VName],
    ) -> R<()> {
        let loc = &stm.loc;
        if self.scratch.is_none() {
            return Err(Error::unsupported(construct_name(&stm.exp), loc));
        }
        let n = self.index(g, w, loc)?;
        let mut dsts = Vec::with_capacity(dest.len());
        for d in dest {
            let x = self.var(g, d, loc)?;
            dsts.push(self.own(g, x, stm)?);
        }
        let mut is = Vec::new();
        for v in inds {
            is.push(self.var(g, v, loc)?);
        }
        let mut vs = Vec::new();
        for v in vals {
            vs.push(self.var(g, v, loc)?);
        }
        if vs.len() != dsts.len() || dsts.iter().any(|d| d.dims.len() < is.len()) {
            return Err(Error::bug("scatter shapes"));
        }
        let r = is.len();
        let dsts2 = dsts.clone();
        self.kloop(g, n, loc, &mut |k, g, j| {
            let mut idx = Vec::with_capacity(r);
            for a in &is {
                let x = k.row_of(g, a, j, loc)?;
                idx.push(k.idx_u64(g, &x)?);
            }
            for (d, v) in dsts2.iter().zip(&vs) {
                let (off, ok) = KCtx::element_at(g, d, &idx)?;
                let target = View {
                    bi: d.bi,
                    elem: d.elem,
                    off,
                    dims: d.dims[r..].to_vec(),
                };
                let st = g.begin_if(ok)?;
                let x = k.row_of(g, v, j, loc)?;
                k.write_into(g, &target, &x, loc)?;
                g.else_(st)?;
                g.end_if(st)?;
            }
            Ok(())
        })?;
        self.bind(stm, dsts.into_iter().map(KVal::V).collect())
    }

    /// `reduce_by_index dest op inds vals` (sequential; out-of-range indices ignored).
    #[allow(clippy::too_many_arguments)] // the fields of `Soac::Hist`
    pub(super) fn hist(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        w: &SubExp,
        dest: &[VName],
        op: &'p Operator,
        inds: &VName,
        vals: &[VName],
    ) -> R<()> {
        let loc = &stm.loc;
        if self.scratch.is_none() {
            return Err(Error::unsupported(construct_name(&stm.exp), loc));
        }
        let n = self.index(g, w, loc)?;
        let mut dsts = Vec::with_capacity(dest.len());
        for d in dest {
            let x = self.var(g, d, loc)?;
            dsts.push(self.own(g, x, stm)?);
        }
        let is = self.var(g, inds, loc)?;
        let mut vs = Vec::new();
        for v in vals {
            vs.push(self.var(g, v, loc)?);
        }
        let len = dsts
            .first()
            .and_then(|d| d.dims.first())
            .map(|d| d.0)
            .ok_or_else(|| Error::bug("reduce_by_index without destination"))?;
        let dsts2 = dsts.clone();
        self.kloop(g, n, loc, &mut |k, g, j| {
            let x = k.row_of(g, &is, j, loc)?;
            let i = k.idx_u64(g, &x)?;
            let bt = g.t_bool();
            let inb = g.b.u_less_than(bt, None, i, len).ie()?;
            let st = g.begin_if(inb)?;
            let mut args = Vec::new();
            let mut rows = Vec::new();
            for d in &dsts2 {
                let row = k.row_view(g, d, i)?;
                args.push(if row.dims.is_empty() {
                    KVal::S(k.ld(g, row.bi, row.elem, row.off)?, row.elem)
                } else {
                    KVal::V(row.clone())
                });
                rows.push(row);
            }
            args.extend(k.rows_of(g, &vs, j, loc)?);
            let r = k.lambda(g, &op.lam, args, loc)?;
            // Array results may read the rows they replace: computed first, then copied.
            let mut res = Vec::with_capacity(r.len());
            for x in r {
                res.push(match x {
                    x @ KVal::S(..) => x,
                    x => {
                        let e = k.elem_of(&x)?;
                        KVal::V(k.materialize(g, &x, e, stm)?)
                    }
                });
            }
            for (row, x) in rows.iter().zip(&res) {
                k.write_into(g, row, x, loc)?;
            }
            g.else_(st)?;
            g.end_if(st)
        })?;
        self.bind(stm, dsts.into_iter().map(KVal::V).collect())
    }

    /// `if` with array results: each branch leaves its arrays in scratch memory (copying those
    /// that are not per-thread arrays already) and the place of each is kept in variables.
    pub(super) fn if_arrays(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        c: Word,
        then_b: &'p Body,
        else_b: &'p Body,
    ) -> R<()> {
        let loc = &stm.loc;
        if self.scratch.is_none() {
            return Err(Error::unsupported(
                "an `if` returning arrays inside a parallel operator",
                loc,
            ));
        }
        let u64t = g.t_u64();
        // Per result: scalar (var, rt, t) or array (bi, elem, off var, [(size var, stride var)]).
        // Accumulators are compile-time handles (the same in both branches).
        enum Res {
            S(Word, Word, PrimType),
            A(u32, PrimType, Word, Vec<(Word, Word)>),
            Acc,
        }
        let mut res = Vec::with_capacity(stm.pat.elems.len());
        for p in &stm.pat.elems {
            match &p.ty {
                Type::Prim(t) => {
                    let rt = g.reg_ty(*t);
                    res.push(Res::S(g.var(rt), rt, *t));
                }
                Type::Array { elem, shape } => {
                    let bi = self.scratch_bi(g, kind_ix(*elem))?;
                    let off = g.var(u64t);
                    let dims = (0..shape.len())
                        .map(|_| (g.var(u64t), g.var(u64t)))
                        .collect();
                    res.push(Res::A(bi, *elem, off, dims));
                }
                Type::Acc { .. } => res.push(Res::Acc),
            }
        }
        let mut branch_accs: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        let st = g.begin_if(c)?;
        for (k, b) in [then_b, else_b].into_iter().enumerate() {
            if k == 1 {
                g.else_(st)?;
            }
            let r = self.body(g, b, loc)?;
            if r.len() != res.len() {
                return Err(Error::bug("if result count"));
            }
            for (x, slot) in r.into_iter().zip(&res) {
                match (slot, x) {
                    (Res::S(var, _, _), KVal::S(w, _)) => g.store(*var, w)?,
                    (Res::Acc, KVal::Acc(a)) => branch_accs[k].push(a),
                    (Res::A(bi, elem, off, dims), x) => {
                        let v = match x {
                            KVal::V(v) if v.bi == *bi => v,
                            KVal::S(..) => return Err(Error::bug("if result")),
                            x => self.materialize(g, &x, *elem, stm)?,
                        };
                        if v.dims.len() != dims.len() {
                            return Err(Error::bug("if result rank"));
                        }
                        g.store(*off, v.off)?;
                        for (&(sv, tv), &(s, t)) in dims.iter().zip(&v.dims) {
                            g.store(sv, s)?;
                            g.store(tv, t)?;
                        }
                    }
                    _ => return Err(Error::bug("if result")),
                }
            }
        }
        g.end_if(st)?;
        if branch_accs[0] != branch_accs[1] {
            return Err(Error::unsupported(
                "an `if` choosing between accumulators inside a kernel",
                loc,
            ));
        }
        let mut accs = branch_accs[0].iter();
        let mut out = Vec::with_capacity(res.len());
        for r in &res {
            out.push(match r {
                Res::Acc => KVal::Acc(*accs.next().ok_or_else(|| Error::bug("if results"))?),
                Res::S(var, rt, t) => KVal::S(g.load(*rt, *var)?, *t),
                Res::A(bi, elem, off, dims) => {
                    let mut ds = Vec::with_capacity(dims.len());
                    for &(sv, tv) in dims {
                        ds.push((g.load(u64t, sv)?, g.load(u64t, tv)?));
                    }
                    KVal::V(View {
                        bi: *bi,
                        elem: *elem,
                        off: g.load(u64t, *off)?,
                        dims: ds,
                    })
                }
            });
        }
        self.bind(stm, out)
    }

    /// A loop whose parameters include arrays (two slots per array, see the module doc).
    pub(super) fn loop_arrays(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        params: &'p [(Param, SubExp)],
        form: &'p LoopForm,
        body: &'p Body,
    ) -> R<()> {
        let loc = &stm.loc;
        if self.scratch.is_none() {
            return Err(Error::unsupported(
                "a loop over arrays inside a parallel operator",
                loc,
            ));
        }
        let u64t = g.t_u64();
        let bt = g.t_bool();
        let names: Vec<u32> = params.iter().map(|(p, _)| p.name.id).collect();
        let mut vars = Vec::with_capacity(params.len());
        for (p, init) in params {
            match &p.ty {
                Type::Prim(t) => {
                    let rt = g.reg_ty(*t);
                    let var = g.var(rt);
                    let x = self.scalar(g, init, loc)?;
                    g.store(var, x)?;
                    vars.push(LoopVar::Scalar(var, rt, *t));
                }
                Type::Array { elem, shape } => {
                    if shape
                        .iter()
                        .any(|d| d.as_var().is_some_and(|v| names.contains(&v.id)))
                    {
                        return Err(Error::unsupported(
                            "a loop whose arrays change size inside a parallel operator",
                            loc,
                        ));
                    }
                    let mut sizes = Vec::with_capacity(shape.len());
                    for d in shape {
                        sizes.push(self.index(g, d, loc)?);
                    }
                    let what = "a loop over arrays inside a parallel operator";
                    let a = self.alloc(g, *elem, &sizes, what, loc)?;
                    let b = self.alloc(g, *elem, &sizes, what, loc)?;
                    let x = self.sub(g, init, loc)?;
                    // The first slot is the initial value's own memory where the loop may
                    // consume it (a per-thread array of the same layout that nothing reads
                    // after the loop), else a copy of it.
                    let first = match &x {
                        KVal::V(v) if v.bi == a.bi && self.consumes_init(init) => {
                            let same = Self::same_layout(g, v, &a)?;
                            self.write_unless(g, same, &a, &x, loc)?;
                            g.b.select(u64t, None, same, v.off, a.off).ie()?
                        }
                        _ => {
                            self.write_into(g, &a, &x, loc)?;
                            a.off
                        }
                    };
                    let cur = g.var(u64t);
                    g.store(cur, first)?;
                    let sum = g.b.i_add(u64t, None, first, b.off).ie()?;
                    vars.push(LoopVar::Array {
                        bi: a.bi,
                        elem: *elem,
                        cur,
                        sum,
                        dims: a.dims,
                    });
                }
                Type::Acc { .. } => match self.sub(g, init, loc)? {
                    KVal::Acc(a) => vars.push(LoopVar::Acc(a)),
                    _ => return Err(Error::bug("accumulator loop parameter")),
                },
            }
        }
        let counter = match form {
            LoopForm::For { it, .. } => {
                let t = PrimType::Int(*it);
                let rt = g.reg_ty(t);
                let cv = g.var(rt);
                let z = g.c_int(*it, 0);
                g.store(cv, z)?;
                Some((cv, rt, *it))
            }
            LoopForm::While(_) => None,
        };
        let st = g.begin_loop()?;
        let c = match (form, counter) {
            (LoopForm::For { bound, .. }, Some((cv, rt, it))) => {
                let n = self.scalar(g, bound, loc)?;
                let i = g.load(rt, cv)?;
                if it.signed() {
                    g.b.s_less_than(bt, None, i, n).ie()?
                } else {
                    g.b.u_less_than(bt, None, i, n).ie()?
                }
            }
            (LoopForm::While(c), _) => {
                let k = names
                    .iter()
                    .position(|&id| id == c.id)
                    .ok_or_else(|| Error::bug("while condition is not a loop parameter"))?;
                match &vars[k] {
                    LoopVar::Scalar(var, rt, _) => g.load(*rt, *var)?,
                    _ => return Err(Error::bug("array loop condition")),
                }
            }
            _ => return Err(Error::bug("loop form")),
        };
        let c = self.live(g, c)?;
        g.loop_cond(st, c)?;
        let mark = self.mark(g)?;
        let mut cur_offs = Vec::with_capacity(vars.len());
        for ((p, _), v) in params.iter().zip(&vars) {
            let x = match v {
                LoopVar::Scalar(var, rt, t) => KVal::S(g.load(*rt, *var)?, *t),
                LoopVar::Acc(a) => KVal::Acc(*a),
                LoopVar::Array {
                    bi,
                    elem,
                    cur,
                    dims,
                    ..
                } => KVal::V(View {
                    bi: *bi,
                    elem: *elem,
                    off: g.load(u64t, *cur)?,
                    dims: dims.clone(),
                }),
            };
            cur_offs.push(match &x {
                KVal::V(v) => Some(v.off),
                _ => None,
            });
            self.env.insert(p.name.id, x);
        }
        if let (LoopForm::For { i, .. }, Some((cv, rt, it))) = (form, counter) {
            let x = g.load(rt, cv)?;
            self.env.insert(i.id, KVal::S(x, PrimType::Int(it)));
        }
        let owned = params.iter().map(|(p, _)| p.name.clone()).collect();
        let r = self.body_owning(g, body, owned, loc)?;
        if r.len() != vars.len() {
            return Err(Error::bug("loop result count"));
        }
        if let Some((cv, rt, it)) = counter {
            let x = g.load(rt, cv)?;
            let one = g.c_int(it, 1);
            let n = g.b.i_add(rt, None, x, one).ie()?;
            let n = g.canon(it, n)?;
            g.store(cv, n)?;
        }
        let mut toggles = Vec::new();
        for ((x, v), off) in r.iter().zip(&vars).zip(&cur_offs) {
            match (v, x) {
                (LoopVar::Scalar(var, _, _), KVal::S(w, _)) => g.store(*var, *w)?,
                (LoopVar::Acc(a), KVal::Acc(b)) if a == b => {}
                (LoopVar::Acc(_), _) => {
                    return Err(Error::unsupported(
                        "a loop changing which accumulator it carries inside a kernel",
                        loc,
                    ))
                }
                (
                    LoopVar::Array {
                        bi,
                        elem,
                        sum,
                        dims,
                        cur,
                    },
                    x,
                ) => {
                    // Updated in place: nothing to do.
                    if let KVal::V(rv) = x {
                        if rv.bi == *bi && Some(rv.off) == *off && rv.dims == *dims {
                            continue;
                        }
                    }
                    let c = off.ok_or_else(|| Error::bug("loop slot"))?;
                    let other = g.b.i_sub(u64t, None, *sum, c).ie()?;
                    let dst = View {
                        bi: *bi,
                        elem: *elem,
                        off: other,
                        dims: dims.clone(),
                    };
                    match x {
                        // A per-thread array that may be the current slot itself (the result
                        // of an inner loop that ran in it): copied only where it is not.
                        KVal::V(rv) if rv.bi == *bi && rv.dims.len() == dims.len() => {
                            let cur_view = View {
                                off: c,
                                ..dst.clone()
                            };
                            let same_layout = Self::same_layout(g, rv, &cur_view)?;
                            let same_off = g.b.i_equal(bt, None, rv.off, c).ie()?;
                            let same = g.b.logical_and(bt, None, same_off, same_layout).ie()?;
                            self.write_unless(g, same, &dst, x, loc)?;
                            let next = g.b.select(u64t, None, same, c, other).ie()?;
                            toggles.push((*cur, next));
                        }
                        _ => {
                            self.write_into(g, &dst, x, loc)?;
                            toggles.push((*cur, other));
                        }
                    }
                }
                _ => return Err(Error::bug("loop result")),
            }
        }
        for (cur, other) in toggles {
            g.store(cur, other)?;
        }
        self.reset(g, mark)?;
        let cond = match form {
            LoopForm::While(c) => names
                .iter()
                .position(|&id| id == c.id)
                .and_then(|k| match &vars[k] {
                    LoopVar::Scalar(var, rt, _) => Some((*var, *rt)),
                    _ => None,
                }),
            LoopForm::For { .. } => None,
        };
        self.loop_backedge(g, form, counter, cond, loc)?;
        g.end_loop(st)?;
        let mut out = Vec::with_capacity(vars.len());
        for v in &vars {
            out.push(match v {
                LoopVar::Scalar(var, rt, t) => KVal::S(g.load(*rt, *var)?, *t),
                LoopVar::Acc(a) => KVal::Acc(*a),
                LoopVar::Array {
                    bi,
                    elem,
                    cur,
                    dims,
                    ..
                } => KVal::V(View {
                    bi: *bi,
                    elem: *elem,
                    off: g.load(u64t, *cur)?,
                    dims: dims.clone(),
                }),
            });
        }
        self.bind(stm, out)
    }

    /// Whether the loop being compiled (the current statement) may consume its initial value
    /// `init` ([`vkad_core::lower::consumable`] on the body around it).
    fn consumes_init(&self, init: &SubExp) -> bool {
        match (self.place, init.as_var()) {
            (Some(p), Some(v)) => {
                vkad_core::lower::consumable(p.stms, p.result, p.k, v, &self.owned)
            }
            _ => false,
        }
    }

    /// [`KCtx::write_into`] where the `bool` word `skip` is false (`x` is already there where
    /// it is true).
    fn write_unless(
        &mut self,
        g: &mut Gen,
        skip: Word,
        dst: &View,
        x: &KVal,
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        let bt = g.t_bool();
        let write = g.b.logical_not(bt, None, skip).ie()?;
        let st = g.begin_if(write)?;
        self.write_into(g, dst, x, loc)?;
        g.else_(st)?;
        g.end_if(st)
    }

    /// Whether two views of the same shape lay their elements out alike (equal strides: the
    /// sizes are equal by type), a `bool` word.
    fn same_layout(g: &mut Gen, x: &View, y: &View) -> R<Word> {
        let bt = g.t_bool();
        let mut same = g.c_bool(true);
        for (&(_, sx), &(_, sy)) in x.dims.iter().zip(&y.dims) {
            let eq = g.b.i_equal(bt, None, sx, sy).ie()?;
            same = g.b.logical_and(bt, None, same, eq).ie()?;
        }
        Ok(same)
    }

    /// `reduce` with array operands or results, and every `scan`: a sequential loop. Array
    /// accumulators of `reduce` are double-buffered; `scan` reads its previous output row.
    pub(super) fn fold(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        n: Word,
        arrs: &[VName],
        op: &'p Operator,
        scan: bool,
    ) -> R<()> {
        let loc = &stm.loc;
        let u64t = g.t_u64();
        if self.scratch.is_none() {
            return Err(Error::unsupported(construct_name(&stm.exp), loc));
        }
        let mut inputs = Vec::with_capacity(arrs.len());
        for a in arrs {
            inputs.push(self.var(g, a, loc)?);
        }
        let k = op.neutral.len();
        if stm.pat.elems.len() != k || arrs.len() != k {
            return Err(Error::bug("operator arity"));
        }
        let skip = usize::from(scan);
        let mut vars = Vec::with_capacity(k);
        let mut outs = Vec::with_capacity(k);
        for j in 0..k {
            let elem = pat_elem(stm, j)?;
            let row = self.row_shape(g, stm, j, skip)?;
            if scan {
                let mut shape = vec![n];
                shape.extend(&row);
                outs.push(self.alloc(g, elem, &shape, construct_name(&stm.exp), loc)?);
            }
            let ne = self.sub(g, &op.neutral[j], loc)?;
            if row.is_empty() {
                let rt = g.reg_ty(elem);
                let var = g.var(rt);
                match ne {
                    KVal::S(w, _) => g.store(var, w)?,
                    _ => return Err(Error::bug("neutral element")),
                }
                vars.push(FoldVar::Scalar(var, rt, elem));
            } else {
                let what = construct_name(&stm.exp);
                let a = self.alloc(g, elem, &row, what, loc)?;
                self.write_into(g, &a, &ne, loc)?;
                let sum = if scan {
                    g.c_u64(0)
                } else {
                    let b = self.alloc(g, elem, &row, what, loc)?;
                    g.b.i_add(u64t, None, a.off, b.off).ie()?
                };
                let cur = g.var(u64t);
                g.store(cur, a.off)?;
                vars.push(FoldVar::Array {
                    bi: a.bi,
                    elem,
                    cur,
                    sum,
                    dims: a.dims,
                });
            }
        }
        let outs2 = outs.clone();
        let vars_ref = &vars;
        self.kloop(g, n, loc, &mut |kc, g, i| {
            let mut args = Vec::with_capacity(2 * k);
            for v in vars_ref {
                args.push(match v {
                    FoldVar::Scalar(var, rt, t) => KVal::S(g.load(*rt, *var)?, *t),
                    FoldVar::Array {
                        bi,
                        elem,
                        cur,
                        dims,
                        ..
                    } => KVal::V(View {
                        bi: *bi,
                        elem: *elem,
                        off: g.load(u64t, *cur)?,
                        dims: dims.clone(),
                    }),
                });
            }
            let accs: Vec<Option<Word>> = args
                .iter()
                .map(|a| match a {
                    KVal::V(v) => Some(v.off),
                    _ => None,
                })
                .collect();
            args.extend(kc.rows_of(g, &inputs, i, loc)?);
            let r = kc.lambda(g, &op.lam, args, loc)?;
            if r.len() != k {
                return Err(Error::bug("operator result count"));
            }
            let mut toggles = Vec::new();
            for (j, (x, v)) in r.iter().zip(vars_ref).enumerate() {
                match (v, x) {
                    (FoldVar::Scalar(var, _, _), KVal::S(w, _)) => {
                        g.store(*var, *w)?;
                        if scan {
                            let o = &outs2[j];
                            let dst = kc.row_view(g, o, i)?;
                            kc.st(g, dst.bi, dst.elem, dst.off, *w)?;
                        }
                    }
                    (
                        FoldVar::Array {
                            bi,
                            elem,
                            cur,
                            sum,
                            dims,
                        },
                        x,
                    ) => {
                        let dst = if scan {
                            kc.row_view(g, &outs2[j], i)?
                        } else {
                            let c = accs[j].ok_or_else(|| Error::bug("accumulator"))?;
                            let other = g.b.i_sub(u64t, None, *sum, c).ie()?;
                            View {
                                bi: *bi,
                                elem: *elem,
                                off: other,
                                dims: dims.clone(),
                            }
                        };
                        kc.write_into(g, &dst, x, loc)?;
                        toggles.push((*cur, dst.off));
                    }
                    _ => return Err(Error::bug("operator result")),
                }
            }
            for (cur, off) in toggles {
                g.store(cur, off)?;
            }
            Ok(())
        })?;
        let out = if scan {
            outs.into_iter().map(KVal::V).collect()
        } else {
            let mut out = Vec::with_capacity(k);
            for v in &vars {
                out.push(match v {
                    FoldVar::Scalar(var, rt, t) => KVal::S(g.load(*rt, *var)?, *t),
                    FoldVar::Array {
                        bi,
                        elem,
                        cur,
                        dims,
                        ..
                    } => KVal::V(View {
                        bi: *bi,
                        elem: *elem,
                        off: g.load(u64t, *cur)?,
                        dims: dims.clone(),
                    }),
                });
            }
            out
        };
        self.bind(stm, out)
    }
}

fn pat_elem(stm: &Stm, k: usize) -> R<PrimType> {
    stm.pat
        .elems
        .get(k)
        .and_then(|p| p.ty.elem())
        .ok_or_else(|| Error::bug("pattern element type"))
}
