//! Compiling IR lambdas to SPIR-V code run by one thread ([`KCtx`]): scalar statements
//! (module [`crate::codegen::scalar`]), indexing of arrays in buffers (views with bounds checks),
//! `if`, `loop`, function calls (inlined), assertions, and inner `reduce`s (sequential loops).
//! Inner `map`s, `iota` and `replicate` are lazy arrays, computed where they are used.
//! Per-thread arrays (in-place updates, `scan`, `scatter`, `reduce_by_index`, concatenation,
//! array literals, `if`/`loop` with array results, the arrays of a `withacc`) live in a scratch
//! buffer (module [`crate::codegen::scratch`]) where the kernel has one (top-level `map`
//! kernels); elsewhere they are reported as "not supported on the Vulkan backend".
//! Accumulators: module [`crate::codegen::acc`].

use crate::codegen::acc::{self, AccKernel};
use crate::codegen::gen::{Gen, Ie, ERR_ASSERT, ERR_BOUNDS, R};
use crate::codegen::group::Group;
use crate::codegen::layout::{ArgSrc, BindSrc, HostTy, KernelCode};
use crate::codegen::scratch::Scratch;
use crate::error::Error;
use rspirv::spirv::Word;
use std::collections::{HashMap, HashSet};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{
    Body, DimIndex, Exp, Lambda, LoopForm, Operator, Program, Soac, Stm, SubExp, Type, VName,
};
use vkad_core::prim::{FloatType, PrimType, PrimValue};

/// An array in a buffer as seen by a thread: element `off + sum(i_k * stride_k)` (u64 ids).
#[derive(Clone, Debug)]
pub struct View {
    pub bi: u32,
    pub elem: PrimType,
    pub off: Word,
    pub dims: Vec<(Word, Word)>,
}

/// A value in kernel code.
#[derive(Clone, Debug)]
pub enum KVal {
    S(Word, PrimType),
    V(View),
    /// A lazily computed array: the result of an inner `map` (an index into [`KCtx`]'s table);
    /// its rows are computed where they are used.
    L(usize),
    /// An accumulator: an index into [`KCtx`]'s accumulators, those of the host's running
    /// `withacc` (updated with atomics) and those of a `withacc` of the thread (arrays in
    /// scratch memory), see module [`crate::codegen::acc`].
    Acc(usize),
}

/// An array whose elements are computed on demand: an inner `map`, `iota` or `replicate`.
#[derive(Clone)]
pub(super) enum Lazy<'p> {
    Map {
        lam: &'p Lambda,
        inputs: Vec<KVal>,
        res: usize,
        n: Word,
        /// The shape of one row (from the statement's type), where it could be computed.
        shape: Option<Vec<Word>>,
    },
    Iota {
        n: Word,
        start: Word,
        stride: Word,
        it: vkad_core::prim::IntType,
    },
    Rep {
        n: Word,
        row: KVal,
    },
}

/// Where the statement being compiled is: statement `k` of `stms`, followed by `result`.
#[derive(Clone, Copy)]
pub(super) struct Place<'p> {
    pub stms: &'p [Stm],
    pub result: &'p [SubExp],
    pub k: usize,
    /// The body's results are written into memory as soon as the body ends (a kernel's
    /// results, the rows of an inner `map` computed at once), not held as values.
    pub written: bool,
}

/// Compiles IR code inside one kernel.
pub struct KCtx<'p> {
    pub prog: &'p Program,
    pub env: HashMap<u32, KVal>,
    pub args: Vec<ArgSrc>,
    pub binds: Vec<BindSrc>,
    /// Host variables already bound (arrays: binding index).
    /// Host arrays already given a binding (their loads are re-emitted at every use, so that
    /// no value defined in one block is used where it does not dominate).
    pub(super) bound_host: HashMap<u32, u32>,
    pub host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
    pub(super) active: HashSet<String>,
    pub(super) lazies: Vec<Lazy<'p>>,
    /// Per-thread memory for arrays computed in the kernel (`None`: not available here).
    pub scratch: Option<Scratch>,
    /// Count loop iterations and report lavapipe's limit (see `Gen::begin_loop`).
    pub loop_check: bool,
    /// The host accumulators this kernel may update (`None`: none).
    pub acc_info: Option<AccKernel<'p>>,
    pub(super) accs: Vec<acc::KAcc<'p>>,
    /// The variables whose values may differ between threads ([`crate::codegen::variance`]),
    /// where the kernel updates host accumulators: float additions at indices outside it are
    /// summed per subgroup first where the whole subgroup updates one element (checked at run
    /// time, [`crate::codegen::subgroup`]).
    pub(crate) variant: Option<HashSet<u32>>,
    /// In a group kernel, its workgroup (module [`crate::codegen::group`]).
    pub(crate) group: Option<Group>,
    /// The statements around the one being compiled (for the liveness questions of
    /// [`KCtx::loop_arrays`] and the reuse counts of [`super::reuse`]).
    pub(super) place: Option<Place<'p>>,
    /// The variables the body being compiled owns: the parameters of the loop it is the body
    /// of (their memory is the loop's slots, [`KCtx::body_owning`]), else none.
    pub(super) owned: HashSet<VName>,
    /// The workgroup arrays of a group kernel's reductions, by (value type, position).
    pub(crate) group_shared: HashMap<(Word, usize), Word>,
}

impl<'p> KCtx<'p> {
    pub fn new(prog: &'p Program, host_types: &'p dyn Fn(&VName) -> Option<HostTy>) -> KCtx<'p> {
        KCtx {
            prog,
            env: HashMap::new(),
            args: Vec::new(),
            binds: Vec::new(),
            bound_host: HashMap::new(),
            host_types,
            active: HashSet::new(),
            lazies: Vec::new(),
            scratch: None,
            loop_check: false,
            acc_info: None,
            accs: Vec::new(),
            variant: None,
            group: None,
            place: None,
            owned: HashSet::new(),
            group_shared: HashMap::new(),
        }
    }

    /// Reserves an argument word and loads it as type `t`.
    pub fn arg(&mut self, g: &mut Gen, src: ArgSrc, t: PrimType) -> R<Word> {
        let k = match self.args.iter().position(|a| *a == src) {
            Some(k) => k,
            None => {
                self.args.push(src);
                self.args.len() - 1
            }
        };
        g.arg(k as u32, t)
    }

    /// Binds a host array: a new binding plus offset and dimension arguments.
    pub fn host_array(&mut self, g: &mut Gen, v: &VName, elem: PrimType, rank: usize) -> R<View> {
        let bi = match self.bound_host.get(&v.id) {
            Some(&bi) => bi,
            None => {
                let bi = g.binding(crate::codegen::gen::word_kind(elem));
                self.binds.push(BindSrc::Var(v.clone()));
                self.bound_host.insert(v.id, bi);
                bi
            }
        };
        let off = self.arg(g, ArgSrc::Off(v.clone()), PrimType::I64)?;
        let mut sizes = Vec::with_capacity(rank);
        for k in 0..rank {
            sizes.push(self.arg(g, ArgSrc::Dim(v.clone(), k), PrimType::I64)?);
        }
        let dims = natural(g, &sizes)?;
        Ok(View {
            bi,
            elem,
            off,
            dims,
        })
    }

    /// The value of a variable: kernel-local, or a host variable (loaded on first use).
    pub fn var(&mut self, g: &mut Gen, v: &VName, loc: &Option<SrcLoc>) -> R<KVal> {
        if let Some(x) = self.env.get(&v.id) {
            return Ok(x.clone());
        }
        let x = match (self.host_types)(v) {
            Some(HostTy::Prim(t)) => {
                KVal::S(self.arg(g, ArgSrc::Sub(SubExp::Var(v.clone())), t)?, t)
            }
            Some(HostTy::Arr(t, r)) => KVal::V(self.host_array(g, v, t, r)?),
            Some(HostTy::Acc {
                elems, ranks, rank, ..
            }) => self.host_acc(g, v, &elems, &ranks, rank, loc)?,
            None => {
                return Err(Error::bug(format!(
                    "variable `{v}` is not bound in kernel code{}",
                    loc.as_ref().map(|l| format!(" at {l}")).unwrap_or_default()
                )))
            }
        };
        Ok(x)
    }

    pub fn sub(&mut self, g: &mut Gen, se: &SubExp, loc: &Option<SrcLoc>) -> R<KVal> {
        match se {
            SubExp::Const(c) => Ok(KVal::S(constant(g, *c), c.prim_type())),
            SubExp::Var(v) => self.var(g, v, loc),
        }
    }

    pub fn scalar(&mut self, g: &mut Gen, se: &SubExp, loc: &Option<SrcLoc>) -> R<Word> {
        match self.sub(g, se, loc)? {
            KVal::S(w, _) => Ok(w),
            _ => Err(Error::bug(format!(
                "`{se:?}` is an array, expected a scalar"
            ))),
        }
    }

    /// A size or index operand as u64 (i64 bits).
    pub fn index(&mut self, g: &mut Gen, se: &SubExp, loc: &Option<SrcLoc>) -> R<Word> {
        match self.sub(g, se, loc)? {
            KVal::S(w, PrimType::Int(t)) => g.int_to_u64(t, w),
            _ => Err(Error::bug("index of a non-integer type")),
        }
    }

    pub(super) fn bind(&mut self, stm: &Stm, vals: Vec<KVal>) -> R<()> {
        if vals.len() != stm.pat.elems.len() {
            return Err(Error::bug(format!(
                "{} values bound to {} names",
                vals.len(),
                stm.pat.elems.len()
            )));
        }
        for (p, v) in stm.pat.elems.iter().zip(vals) {
            self.env.insert(p.name.id, v);
        }
        Ok(())
    }

    /// Runs a body's statements and returns its results.
    pub fn body(&mut self, g: &mut Gen, body: &'p Body, loc: &Option<SrcLoc>) -> R<Vec<KVal>> {
        self.body_owning(g, body, HashSet::new(), loc)
    }

    /// [`KCtx::body`] of a body that owns the variables `owned` (a loop's parameters).
    pub(super) fn body_owning(
        &mut self,
        g: &mut Gen,
        body: &'p Body,
        owned: HashSet<VName>,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<KVal>> {
        self.body_in(g, body, owned, false, loc)
    }

    /// [`KCtx::body_owning`], the body's results `written` into memory as soon as it ends
    /// ([`Place::written`]).
    fn body_in(
        &mut self,
        g: &mut Gen,
        body: &'p Body,
        owned: HashSet<VName>,
        written: bool,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<KVal>> {
        let outer_owned = std::mem::replace(&mut self.owned, owned);
        let outer_place = self.place;
        self.stms(g, &body.stms, &body.result, written)?;
        self.place = outer_place;
        self.owned = outer_owned;
        body.result.iter().map(|r| self.sub(g, r, loc)).collect()
    }

    /// Compiles the statements `stms` of a body whose results are `result` (a body, or a
    /// kernel's code), each with its [`Place`] (`written`: [`Place::written`]).
    pub(super) fn stms(
        &mut self,
        g: &mut Gen,
        stms: &'p [Stm],
        result: &'p [SubExp],
        written: bool,
    ) -> R<()> {
        for (k, stm) in stms.iter().enumerate() {
            self.place = Some(Place {
                stms,
                result,
                k,
                written,
            });
            self.stm(g, stm)?;
        }
        Ok(())
    }

    /// Applies a lambda.
    pub fn lambda(
        &mut self,
        g: &mut Gen,
        lam: &'p Lambda,
        args: Vec<KVal>,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<KVal>> {
        self.lambda_in(g, lam, args, false, loc)
    }

    /// [`KCtx::lambda`] whose results the caller writes into memory at once
    /// ([`Place::written`]).
    pub(super) fn lambda_written(
        &mut self,
        g: &mut Gen,
        lam: &'p Lambda,
        args: Vec<KVal>,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<KVal>> {
        self.lambda_in(g, lam, args, true, loc)
    }

    fn lambda_in(
        &mut self,
        g: &mut Gen,
        lam: &'p Lambda,
        args: Vec<KVal>,
        written: bool,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<KVal>> {
        if args.len() != lam.params.len() {
            return Err(Error::bug("lambda arity"));
        }
        for (p, a) in lam.params.iter().zip(args) {
            self.env.insert(p.name.id, a);
        }
        self.body_in(g, &lam.body, HashSet::new(), written, loc)
    }

    /// Row `i` (u64) of a view: a scalar (loaded, with bounds check skipped: callers iterate in
    /// range) or a view.
    pub fn row(&mut self, g: &mut Gen, v: &View, i: Word) -> R<KVal> {
        let u64t = g.t_u64();
        let (_, s) = v.dims[0];
        let m = g.b.i_mul(u64t, None, i, s).ie()?;
        let off = g.b.i_add(u64t, None, v.off, m).ie()?;
        if v.dims.len() == 1 {
            Ok(KVal::S(self.ld(g, v.bi, v.elem, off)?, v.elem))
        } else {
            Ok(KVal::V(View {
                bi: v.bi,
                elem: v.elem,
                off,
                dims: v.dims[1..].to_vec(),
            }))
        }
    }

    /// Row `i` of an array value (a view or a lazy array).
    pub fn row_of(&mut self, g: &mut Gen, x: &KVal, i: Word, loc: &Option<SrcLoc>) -> R<KVal> {
        match x {
            KVal::V(v) => self.row(g, v, i),
            KVal::L(k) => match self.lazies[*k].clone() {
                Lazy::Map {
                    lam, inputs, res, ..
                } => {
                    let lam: &'p Lambda = lam;
                    let mut args = Vec::with_capacity(inputs.len());
                    for a in &inputs {
                        args.push(self.row_of(g, a, i, loc)?);
                    }
                    let r = self.lambda(g, lam, args, loc)?;
                    r.into_iter()
                        .nth(res)
                        .ok_or_else(|| Error::bug("lazy result"))
                }
                Lazy::Iota {
                    start, stride, it, ..
                } => {
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
                    Ok(KVal::S(v, PrimType::Int(it)))
                }
                Lazy::Rep { row, .. } => Ok(row),
            },
            KVal::S(..) => Err(Error::bug("row of a scalar")),
            // A `map` over accumulators gives each iteration the accumulator itself.
            KVal::Acc(a) => Ok(KVal::Acc(*a)),
        }
    }

    /// The outer size of an array value (u64).
    pub fn len_of(&self, x: &KVal) -> R<Word> {
        match x {
            KVal::V(v) => Ok(v.dims[0].0),
            KVal::L(k) => Ok(match &self.lazies[*k] {
                Lazy::Map { n, .. } | Lazy::Iota { n, .. } | Lazy::Rep { n, .. } => *n,
            }),
            KVal::S(..) | KVal::Acc(_) => Err(Error::bug("length of a scalar")),
        }
    }

    /// Writes an array value (or a scalar) into a destination view of the same shape.
    pub fn write_into(&mut self, g: &mut Gen, dst: &View, x: &KVal, loc: &Option<SrcLoc>) -> R<()> {
        if dst.dims.is_empty() {
            return match x {
                KVal::S(w, _) => self.st(g, dst.bi, dst.elem, dst.off, *w),
                _ => Err(Error::bug("array written into an element")),
            };
        }
        if self.at_group_level() && dst.dims.len() > 1 && matches!(x, KVal::V(_)) {
            return self.write_elements(g, dst, x, loc);
        }
        let n = dst.dims[0].0;
        self.par_loop(g, n, loc, &mut |k, g, i| {
            let u64t = g.t_u64();
            let src = k.row_of(g, x, i, loc)?;
            let m = g.b.i_mul(u64t, None, i, dst.dims[0].1).ie()?;
            let off = g.b.i_add(u64t, None, dst.off, m).ie()?;
            let drow = View {
                bi: dst.bi,
                elem: dst.elem,
                off,
                dims: dst.dims[1..].to_vec(),
            };
            k.write_into(g, &drow, &src, loc)
        })
    }

    /// [`KCtx::write_into`] of an array of rank 2 or more in memory at group level: one
    /// distributed loop over all elements (a loop over the rows would leave all but a few
    /// invocations idle where the outer dimensions are short), each element's indices
    /// recovered by division.
    fn write_elements(&mut self, g: &mut Gen, dst: &View, x: &KVal, loc: &Option<SrcLoc>) -> R<()> {
        let u64t = g.t_u64();
        let mut total = g.c_u64(1);
        for &(d, _) in &dst.dims {
            total = g.b.i_mul(u64t, None, total, d).ie()?;
        }
        let dims = dst.dims.clone();
        self.par_loop(g, total, loc, &mut |k, g, e| {
            let sizes: Vec<Word> = dims.iter().map(|&(d, _)| d).collect();
            let idx = unflatten(g, e, &sizes)?;
            let mut src = x.clone();
            let mut off = dst.off;
            for (&i, &(_, s)) in idx.iter().zip(&dims) {
                src = k.row_of(g, &src, i, loc)?;
                let m = g.b.i_mul(u64t, None, i, s).ie()?;
                off = g.b.i_add(u64t, None, off, m).ie()?;
            }
            match src {
                KVal::S(w, _) => k.st(g, dst.bi, dst.elem, off, w),
                _ => Err(Error::bug("element of an array is not a scalar")),
            }
        })
    }

    fn index_view(&mut self, g: &mut Gen, v: &View, idx: &[DimIndex], stm: &Stm) -> R<KVal> {
        let r = self.locate(g, v, idx, stm)?;
        if r.dims.is_empty() {
            Ok(KVal::S(self.ld(g, r.bi, r.elem, r.off)?, r.elem))
        } else {
            Ok(KVal::V(r))
        }
    }

    /// The part of view `v` that `idx` selects (bounds-checked unless `#[unsafe]`; out of
    /// bounds, the error is reported and the view starts at element 0 of the buffer).
    pub(super) fn locate(&mut self, g: &mut Gen, v: &View, idx: &[DimIndex], stm: &Stm) -> R<View> {
        let loc = &stm.loc;
        let u64t = g.t_u64();
        let bt = g.t_bool();
        let checked = !stm.attrs.has("unsafe");
        let mut ok = g.c_bool(true);
        let mut off = v.off;
        let mut dims = Vec::new();
        if idx.len() > v.dims.len() {
            return Err(Error::bug("too many indices"));
        }
        for (d, &(n, s)) in idx.iter().zip(&v.dims) {
            match d {
                DimIndex::Fix(i) => {
                    let i = self.index(g, i, loc)?;
                    // Unsigned comparison: negative indices are huge.
                    let inb = g.b.u_less_than(bt, None, i, n).ie()?;
                    ok = g.b.logical_and(bt, None, ok, inb).ie()?;
                    let m = g.b.i_mul(u64t, None, i, s).ie()?;
                    off = g.b.i_add(u64t, None, off, m).ie()?;
                }
                DimIndex::Slice { start, len, stride } => {
                    let st = self.index(g, start, loc)?;
                    let ln = self.index(g, len, loc)?;
                    let sd = self.index(g, stride, loc)?;
                    // valid = len == 0 || (len > 0 && stride != 0 && start in range && last in range)
                    let z = g.c_u64(0);
                    let one = g.c_u64(1);
                    let lz = g.b.i_equal(bt, None, ln, z).ie()?;
                    let lpos = g.b.s_greater_than(bt, None, ln, z).ie()?;
                    let snz = g.b.i_not_equal(bt, None, sd, z).ie()?;
                    let sin = g.b.u_less_than(bt, None, st, n).ie()?;
                    let lm1 = g.b.i_sub(u64t, None, ln, one).ie()?;
                    let span = g.b.i_mul(u64t, None, lm1, sd).ie()?;
                    let last = g.b.i_add(u64t, None, st, span).ie()?;
                    let lin = g.b.u_less_than(bt, None, last, n).ie()?;
                    let a = g.b.logical_and(bt, None, lpos, snz).ie()?;
                    let a = g.b.logical_and(bt, None, a, sin).ie()?;
                    let a = g.b.logical_and(bt, None, a, lin).ie()?;
                    let valid = g.b.logical_or(bt, None, lz, a).ie()?;
                    ok = g.b.logical_and(bt, None, ok, valid).ie()?;
                    let st0 = g.b.select(u64t, None, lz, z, st).ie()?;
                    let m = g.b.i_mul(u64t, None, st0, s).ie()?;
                    off = g.b.i_add(u64t, None, off, m).ie()?;
                    let ns = g.b.i_mul(u64t, None, sd, s).ie()?;
                    dims.push((ln, ns));
                }
            }
        }
        dims.extend_from_slice(&v.dims[idx.len()..]);
        if checked {
            let bad = g.b.logical_not(bt, None, ok).ie()?;
            let site = g.site(loc, "index out of bounds");
            g.fail_if(bad, ERR_BOUNDS, site)?;
        }
        // Out of bounds: read element 0 of the buffer instead (the error is reported).
        let z = g.c_u64(0);
        let off = g.b.select(u64t, None, ok, off, z).ie()?;
        Ok(View {
            bi: v.bi,
            elem: v.elem,
            off,
            dims,
        })
    }

    /// Compiles one statement.
    pub fn stm(&mut self, g: &mut Gen, stm: &'p Stm) -> R<()> {
        let loc = &stm.loc;
        match &stm.exp {
            Exp::SubExp(se) => {
                let v = self.sub(g, se, loc)?;
                self.bind(stm, vec![v])
            }
            Exp::UnOp(op, a) => {
                let x = self.scalar(g, a, loc)?;
                let r = g.unop(*op, x)?;
                self.bind(stm, vec![KVal::S(r, pat_prim(stm, 0)?)])
            }
            Exp::BinOp(op, a, b) => {
                let x = self.scalar(g, a, loc)?;
                let y = self.scalar(g, b, loc)?;
                let r = g.binop(*op, x, y, loc)?;
                self.bind(stm, vec![KVal::S(r, pat_prim(stm, 0)?)])
            }
            Exp::CmpOp(op, a, b) => {
                let x = self.scalar(g, a, loc)?;
                let y = self.scalar(g, b, loc)?;
                let r = g.cmpop(*op, x, y)?;
                self.bind(stm, vec![KVal::S(r, PrimType::Bool)])
            }
            Exp::Conv(op, a) => {
                let x = self.scalar(g, a, loc)?;
                let r = g.conv(*op, x)?;
                self.bind(stm, vec![KVal::S(r, op.to)])
            }
            Exp::Math(f, args) => {
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    xs.push(self.scalar(g, a, loc)?);
                }
                let r = g.math(*f, &xs)?;
                self.bind(stm, vec![KVal::S(r, pat_prim(stm, 0)?)])
            }
            Exp::Index(v, idx) => {
                let mut x = self.var(g, v, loc)?;
                let mut idx: &[DimIndex] = idx;
                // Lazy arrays: fixed outer indices compute the row.
                while let KVal::L(_) = x {
                    match idx.split_first() {
                        Some((DimIndex::Fix(i), rest)) => {
                            let n = self.len_of(&x)?;
                            let i = self.index(g, i, loc)?;
                            let bt = g.t_bool();
                            let inb = g.b.u_less_than(bt, None, i, n).ie()?;
                            if !stm.attrs.has("unsafe") {
                                let bad = g.b.logical_not(bt, None, inb).ie()?;
                                let site = g.site(loc, "index out of bounds");
                                g.fail_if(bad, ERR_BOUNDS, site)?;
                            }
                            let z = g.c_u64(0);
                            let u64t = g.t_u64();
                            let i = g.b.select(u64t, None, inb, i, z).ie()?;
                            x = self.row_of(g, &x, i, loc)?;
                            idx = rest;
                        }
                        Some(_) => {
                            let e = self.elem_of(&x)?;
                            x = KVal::V(self.materialize(g, &x, e, stm)?);
                        }
                        None => break,
                    }
                }
                let r = match x {
                    KVal::V(view) if !idx.is_empty() => self.index_view(g, &view, idx, stm)?,
                    other if idx.is_empty() => other,
                    _ => return Err(Error::bug("index of a scalar")),
                };
                self.bind(stm, vec![r])
            }
            Exp::Soac(Soac::Map { w, arrs, lam }) => {
                let n = self.index(g, w, loc)?;
                let mut inputs = Vec::with_capacity(arrs.len());
                for a in arrs {
                    inputs.push(self.var(g, a, loc)?);
                }
                if inputs.iter().any(|x| matches!(x, KVal::Acc(_)))
                    || lam.ret.iter().any(|t| matches!(t, Type::Acc { .. }))
                {
                    return self.acc_inner_map(g, stm, n, &inputs, lam);
                }
                // Computed now where later in-place updates must not change it, or where its
                // rows would be recomputed at a higher cost than storing them.
                if (self.reads_scratch(&inputs, &lam.body) && !self.read_at_once(stm))
                    || self.compute_once(g, stm, &inputs, lam)
                {
                    let out = self.eager_map(g, stm, n, &inputs, lam)?;
                    return self.bind(stm, out);
                }
                let mut out = Vec::with_capacity(lam.ret.len());
                for res in 0..lam.ret.len() {
                    let shape = self.row_shape(g, stm, res, 1).ok();
                    self.lazies.push(Lazy::Map {
                        lam,
                        inputs: inputs.clone(),
                        res,
                        n,
                        shape,
                    });
                    out.push(KVal::L(self.lazies.len() - 1));
                }
                self.bind(stm, out)
            }
            Exp::Copy(v) => {
                let x = self.var(g, v, loc)?;
                // A copy of a per-thread array is a fresh array (it may be updated in place).
                let x = if self.is_scratch_val(&x) {
                    let e = self.elem_of(&x)?;
                    KVal::V(self.materialize(g, &x, e, stm)?)
                } else {
                    x
                };
                self.bind(stm, vec![x])
            }
            Exp::Iota {
                n,
                start,
                stride,
                it,
            } => {
                let n = self.index(g, n, loc)?;
                let start = self.index(g, start, loc)?;
                let stride = self.index(g, stride, loc)?;
                self.lazies.push(Lazy::Iota {
                    n,
                    start,
                    stride,
                    it: *it,
                });
                let x = KVal::L(self.lazies.len() - 1);
                self.bind(stm, vec![x])
            }
            Exp::Replicate { shape, value } => {
                let mut x = self.sub(g, value, loc)?;
                if self.is_scratch_val(&x) {
                    let e = self.elem_of(&x)?;
                    x = KVal::V(self.materialize(g, &x, e, stm)?);
                    // The row is copied once; the replicate itself stays lazy.
                }
                for d in shape.iter().rev() {
                    let n = self.index(g, d, loc)?;
                    self.lazies.push(Lazy::Rep { n, row: x });
                    x = KVal::L(self.lazies.len() - 1);
                }
                self.bind(stm, vec![x])
            }
            Exp::Reshape(shape, v) => {
                let x = self.var(g, v, loc)?;
                let mut sizes = Vec::with_capacity(shape.len());
                for d in shape {
                    sizes.push(self.index(g, d, loc)?);
                }
                match x {
                    // Same rank (size coercions): the sizes must agree dimension by dimension.
                    KVal::V(view) if view.dims.len() == sizes.len() => {
                        let bt = g.t_bool();
                        let mut ok = g.c_bool(true);
                        for (&(n, _), &m) in view.dims.iter().zip(&sizes) {
                            let e = g.b.i_equal(bt, None, n, m).ie()?;
                            ok = g.b.logical_and(bt, None, ok, e).ie()?;
                        }
                        let bad = g.b.logical_not(bt, None, ok).ie()?;
                        let site = g.site(
                            loc,
                            "not supported on the Vulkan backend: a reshape changing the dimensions of an array inside a parallel operator",
                        );
                        g.fail_if(bad, ERR_ASSERT, site)?;
                        self.bind(stm, vec![KVal::V(view)])
                    }
                    // A one-dimensional lazy array stays lazy; one of more dimensions (a
                    // `replicate` of rows flattened) is copied below.
                    KVal::L(k)
                        if sizes.len() == 1
                            && matches!(self.shape_of(&x), Ok(s) if s.len() == 1) =>
                    {
                        self.bind(stm, vec![KVal::L(k)])
                    }
                    x @ (KVal::V(_) | KVal::L(_)) => {
                        // A fresh row-major copy, seen with the new shape.
                        let e = self.elem_of(&x)?;
                        let c = self.materialize(g, &x, e, stm)?;
                        let unit = c
                            .dims
                            .last()
                            .map(|&(_, s)| s)
                            .ok_or_else(|| Error::bug("reshape of a scalar"))?;
                        let dims = natural_from(g, &sizes, unit)?;
                        self.bind(stm, vec![KVal::V(View { dims, ..c })])
                    }
                    KVal::S(..) | KVal::Acc(_) => Err(Error::bug("reshape of a scalar")),
                }
            }
            Exp::Rearrange(perm, v) => match self.var(g, v, loc)? {
                x @ KVal::L(_) => {
                    let e = self.elem_of(&x)?;
                    let view = self.materialize(g, &x, e, stm)?;
                    let mut dims = Vec::with_capacity(perm.len());
                    for &p in perm {
                        dims.push(*view.dims.get(p).ok_or_else(|| Error::bug("permutation"))?);
                    }
                    self.bind(stm, vec![KVal::V(View { dims, ..view })])
                }
                KVal::V(view) if perm.len() == view.dims.len() => {
                    let mut dims = Vec::with_capacity(perm.len());
                    for &p in perm {
                        dims.push(*view.dims.get(p).ok_or_else(|| Error::bug("permutation"))?);
                    }
                    self.bind(stm, vec![KVal::V(View { dims, ..view })])
                }
                _ => Err(Error::unsupported(
                    "transposing a computed array inside a parallel operator",
                    loc,
                )),
            },
            Exp::Assert { cond, msg, args } => {
                let c = self.scalar(g, cond, loc)?;
                let bt = g.t_bool();
                let bad = g.b.logical_not(bt, None, c).ie()?;
                // Integer arguments (the sizes of a shape check) travel with the error.
                let mut words = Vec::with_capacity(args.len());
                for a in args {
                    match self.sub(g, a, loc)? {
                        KVal::S(_, PrimType::Int(_)) => words.push(self.index(g, a, loc)?),
                        _ => {
                            words.clear();
                            break;
                        }
                    }
                }
                let site = g.site_with_args(loc, msg.clone(), words.len());
                g.fail_if_args(bad, ERR_ASSERT, site, &words)?;
                self.bind(stm, vec![])
            }
            Exp::If {
                cond,
                then_b,
                else_b,
                ..
            } => {
                let c = self.scalar(g, cond, loc)?;
                if stm.pat.elems.iter().any(|p| p.ty.rank() > 0) {
                    return self.if_arrays(g, stm, c, then_b, else_b);
                }
                // Accumulator results are compile-time handles (the same in both branches).
                let is_acc: Vec<bool> = stm
                    .pat
                    .elems
                    .iter()
                    .map(|p| matches!(p.ty, Type::Acc { .. }))
                    .collect();
                let mut vars = Vec::with_capacity(is_acc.len());
                for (p, &a) in stm.pat.elems.iter().zip(&is_acc) {
                    if a {
                        continue;
                    }
                    let Type::Prim(t) = p.ty else {
                        return Err(Error::unsupported("an `if` returning arrays", loc));
                    };
                    let rt = g.reg_ty(t);
                    vars.push((g.var(rt), rt, t));
                }
                let split = |r: Vec<KVal>| -> (Vec<KVal>, Vec<KVal>) {
                    let (a, s): (Vec<_>, Vec<_>) =
                        r.into_iter().zip(&is_acc).partition(|(_, &a)| a);
                    (
                        a.into_iter().map(|(x, _)| x).collect(),
                        s.into_iter().map(|(x, _)| x).collect(),
                    )
                };
                let st = g.begin_if(c)?;
                let r = self.body(g, then_b, loc)?;
                let (then_accs, r) = split(r);
                self.store_results(g, &vars, r, stm)?;
                g.else_(st)?;
                let r = self.body(g, else_b, loc)?;
                let (else_accs, r) = split(r);
                self.store_results(g, &vars, r, stm)?;
                g.end_if(st)?;
                let same = then_accs
                    .iter()
                    .zip(&else_accs)
                    .all(|(x, y)| matches!((x, y), (KVal::Acc(a), KVal::Acc(b)) if a == b));
                if !same {
                    return Err(Error::unsupported(
                        "an `if` choosing between accumulators inside a kernel",
                        loc,
                    ));
                }
                let mut out = Vec::with_capacity(is_acc.len());
                let (mut accs, mut vs) = (then_accs.into_iter(), vars.iter());
                for &a in &is_acc {
                    out.push(if a {
                        accs.next().ok_or_else(|| Error::bug("if results"))?
                    } else {
                        let &(var, rt, t) = vs.next().ok_or_else(|| Error::bug("if results"))?;
                        KVal::S(g.load(rt, var)?, t)
                    });
                }
                self.bind(stm, out)
            }
            Exp::Loop { params, form, body } if params.iter().any(|(p, _)| p.ty.rank() > 0) => {
                self.loop_arrays(g, stm, params, form, body)
            }
            Exp::Loop { params, form, body } => {
                // Accumulator parameters are compile-time handles: bound to their initial
                // accumulator throughout; `vars`/`slot` cover the scalar parameters.
                let mut accs: Vec<Option<KVal>> = Vec::with_capacity(params.len());
                let mut slot: Vec<Option<usize>> = Vec::with_capacity(params.len());
                let mut vars = Vec::with_capacity(params.len());
                for (p, init) in params {
                    if matches!(p.ty, Type::Acc { .. }) {
                        match self.sub(g, init, loc)? {
                            x @ KVal::Acc(_) => accs.push(Some(x)),
                            _ => return Err(Error::bug("accumulator loop parameter")),
                        }
                        slot.push(None);
                        continue;
                    }
                    accs.push(None);
                    slot.push(Some(vars.len()));
                    let t = match &p.ty {
                        Type::Prim(t) => *t,
                        _ => {
                            return Err(Error::unsupported(
                                "a loop over arrays inside a parallel operator",
                                loc,
                            ))
                        }
                    };
                    let rt = g.reg_ty(t);
                    let var = g.var(rt);
                    let x = self.scalar(g, init, loc)?;
                    g.store(var, x)?;
                    vars.push((var, rt, t));
                }
                let bt = g.t_bool();
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
                        let k = params
                            .iter()
                            .position(|(p, _)| p.name == *c)
                            .and_then(|k| slot[k])
                            .ok_or_else(|| Error::bug("while condition is not a loop parameter"))?;
                        g.load(vars[k].1, vars[k].0)?
                    }
                    _ => return Err(Error::bug("loop form")),
                };
                let c = self.live(g, c)?;
                g.loop_cond(st, c)?;
                let mark = self.mark(g)?;
                for (k, (p, _)) in params.iter().enumerate() {
                    let x = match (&accs[k], slot[k]) {
                        (Some(a), _) => a.clone(),
                        (None, Some(j)) => KVal::S(g.load(vars[j].1, vars[j].0)?, vars[j].2),
                        (None, None) => return Err(Error::bug("loop parameter")),
                    };
                    self.env.insert(p.name.id, x);
                }
                if let (LoopForm::For { i, .. }, Some((cv, rt, it))) = (form, counter) {
                    let x = g.load(rt, cv)?;
                    self.env.insert(i.id, KVal::S(x, PrimType::Int(it)));
                }
                let r = self.body(g, body, loc)?;
                if let Some((cv, rt, it)) = counter {
                    let x = g.load(rt, cv)?;
                    let one = g.c_int(it, 1);
                    let n = g.b.i_add(rt, None, x, one).ie()?;
                    let n = g.canon(it, n)?;
                    g.store(cv, n)?;
                }
                let r = r
                    .into_iter()
                    .zip(&accs)
                    .filter(|(_, a)| a.is_none())
                    .map(|(x, _)| x)
                    .collect();
                self.store_results(g, &vars, r, stm)?;
                self.reset(g, mark)?;
                let cond = match form {
                    LoopForm::While(c) => params
                        .iter()
                        .position(|(p, _)| p.name == *c)
                        .and_then(|k| slot[k])
                        .map(|k| (vars[k].0, vars[k].1)),
                    LoopForm::For { .. } => None,
                };
                self.loop_backedge(g, form, counter, cond, loc)?;
                g.end_loop(st)?;
                let mut out = Vec::with_capacity(params.len());
                for (a, k) in accs.into_iter().zip(slot) {
                    out.push(match (a, k) {
                        (Some(a), _) => a,
                        (None, Some(j)) => KVal::S(g.load(vars[j].1, vars[j].0)?, vars[j].2),
                        (None, None) => return Err(Error::bug("loop parameter")),
                    });
                }
                self.bind(stm, out)
            }
            Exp::Apply { fun, args, .. } => {
                let f = self
                    .prog
                    .fun(fun)
                    .ok_or_else(|| Error::bug(format!("unknown function `{fun}`")))?;
                if !self.active.insert(fun.to_string()) {
                    return Err(Error::internal(loc, format!("recursive call of `{fun}`")));
                }
                let names: Vec<&VName> = f
                    .size_params
                    .iter()
                    .chain(f.params.iter().map(|p| &p.name))
                    .collect();
                if names.len() != args.len() {
                    return Err(Error::bug(format!("`{fun}` arity")));
                }
                for (n, a) in names.into_iter().zip(args) {
                    let x = self.sub(g, a, loc)?;
                    self.env.insert(n.id, x);
                }
                let r = self.body(g, &f.body, loc)?;
                self.active.remove(&**fun);
                self.bind(stm, r)
            }
            Exp::Soac(Soac::Reduce { w, arrs, op })
                if self.scratch.is_some() && (stm.pat.elems.iter().any(|p| p.ty.rank() > 0)) =>
            {
                let n = self.index(g, w, loc)?;
                self.fold(g, stm, n, arrs, op, false)
            }
            Exp::Soac(Soac::Scan { w, arrs, op }) => {
                let n = self.index(g, w, loc)?;
                self.fold(g, stm, n, arrs, op, true)
            }
            Exp::Update(x, idx, v) => self.update(g, stm, x, idx, v),
            Exp::Concat { dim, arrs, .. } => self.concat(g, stm, *dim, arrs),
            Exp::ArrayLit { elems, .. } => self.array_lit(g, stm, elems),
            Exp::Soac(Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            }) => self.scatter(g, stm, w, dest, inds, vals),
            Exp::Soac(Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            }) => self.hist(g, stm, w, dest, op, inds, vals),
            Exp::Soac(Soac::Reduce { w, arrs, op }) => {
                let n = self.index(g, w, loc)?;
                let mut views = Vec::with_capacity(arrs.len());
                for a in arrs {
                    match self.var(g, a, loc)? {
                        KVal::V(v) if v.dims.len() > 1 => {
                            return Err(Error::unsupported(
                                "a reduction over arrays of arrays inside a parallel operator",
                                loc,
                            ))
                        }
                        x @ (KVal::V(_) | KVal::L(_)) => views.push(x),
                        KVal::S(..) | KVal::Acc(_) => return Err(Error::bug("reduce of a scalar")),
                    }
                }
                let tys = pat_prims(
                    stm,
                    "a reduction with array results inside a parallel operator",
                )?;
                if self.at_group_level() && !tys.contains(&PrimType::Bool) {
                    return self.group_reduce(g, stm, n, &views, op, &tys);
                }
                let vars = self.fold_vars(g, &tys, op, loc)?;
                let z = g.c_u64(0);
                self.fold_range(g, z, n, &views, op, &vars, stm)?;
                let mut out = Vec::with_capacity(vars.len());
                for &(var, rt, t) in &vars {
                    out.push(KVal::S(g.load(rt, var)?, t));
                }
                self.bind(stm, out)
            }
            Exp::UpdAcc { acc, idx, vals } => {
                let r = self.upd_acc(g, stm, acc, idx, vals)?;
                self.bind(stm, vec![r])
            }
            Exp::WithAcc { inputs, lam } => self.with_acc(g, stm, inputs, lam),
            other => Err(Error::unsupported(construct_name(other), loc)),
        }
    }

    /// Function variables `(variable, register type, type)` holding the accumulators of a
    /// reduction to scalars of types `tys`, set to `op`'s neutral elements.
    pub(super) fn fold_vars(
        &mut self,
        g: &mut Gen,
        tys: &[PrimType],
        op: &'p Operator,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<(Word, Word, PrimType)>> {
        let mut vars = Vec::with_capacity(tys.len());
        for (&t, ne) in tys.iter().zip(&op.neutral) {
            let rt = g.reg_ty(t);
            let var = g.var(rt);
            let x = self.scalar(g, ne, loc)?;
            g.store(var, x)?;
            vars.push((var, rt, t));
        }
        Ok(vars)
    }

    /// Folds elements `[lo, hi)` (u64) of `inputs` into the accumulator variables `vars`
    /// ([`KCtx::fold_vars`]) with `op`'s function: a sequential loop of the thread. `stm` is
    /// the reduction (for its location and errors).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fold_range(
        &mut self,
        g: &mut Gen,
        lo: Word,
        hi: Word,
        inputs: &[KVal],
        op: &'p Operator,
        vars: &[(Word, Word, PrimType)],
        stm: &Stm,
    ) -> R<()> {
        let loc = &stm.loc;
        let one = g.c_u64(1);
        self.range_loop(g, [lo, hi, one], loc, &mut |k, g, i| {
            let mut args = Vec::with_capacity(2 * vars.len());
            for &(var, rt, t) in vars {
                args.push(KVal::S(g.load(rt, var)?, t));
            }
            args.extend(k.rows_of(g, inputs, i, loc)?);
            let r = k.lambda(g, &op.lam, args, loc)?;
            k.store_results(g, vars, r, stm)
        })
    }

    fn store_results(
        &mut self,
        g: &mut Gen,
        vars: &[(Word, Word, PrimType)],
        r: Vec<KVal>,
        stm: &Stm,
    ) -> R<()> {
        if r.len() != vars.len() {
            return Err(Error::bug("result count"));
        }
        for (&(var, _, _), x) in vars.iter().zip(r) {
            match x {
                KVal::S(w, _) => g.store(var, w)?,
                KVal::V(_) | KVal::L(_) | KVal::Acc(_) => {
                    return Err(Error::unsupported(
                        "an array-valued result inside a parallel operator",
                        &stm.loc,
                    ))
                }
            }
        }
        Ok(())
    }
}

/// The row-major indices (outermost first, u64 ids) of element `i` of an array of `sizes`:
/// the innermost is `i % d_n`, and so on outwards; the outermost is what is left, so a
/// one-dimensional array divides nothing (a 64-bit division per element costs a copy kernel
/// half its speed on lavapipe).
pub(crate) fn unflatten(g: &mut Gen, i: Word, sizes: &[Word]) -> R<Vec<Word>> {
    let u64t = g.t_u64();
    let mut idx = vec![0; sizes.len()];
    let mut rest = i;
    for (j, &d) in sizes.iter().enumerate().rev() {
        if j == 0 {
            idx[j] = rest;
            break;
        }
        let q = g.b.u_div(u64t, None, rest, d).ie()?;
        let qd = g.b.i_mul(u64t, None, q, d).ie()?;
        idx[j] = g.b.i_sub(u64t, None, rest, qd).ie()?;
        rest = q;
    }
    Ok(idx)
}

/// The natural row-major strides for sizes (u64 ids).
pub fn natural(g: &mut Gen, sizes: &[Word]) -> R<Vec<(Word, Word)>> {
    let one = g.c_u64(1);
    natural_from(g, sizes, one)
}

/// Row-major strides for sizes whose elements are `unit` words apart (u64 ids; a per-thread
/// array of interleaved scratch memory, `crate::codegen::scratch::Scratch::new`).
pub fn natural_from(g: &mut Gen, sizes: &[Word], unit: Word) -> R<Vec<(Word, Word)>> {
    let u64t = g.t_u64();
    let mut dims = vec![(0, 0); sizes.len()];
    let mut s = unit;
    for k in (0..sizes.len()).rev() {
        dims[k] = (sizes[k], s);
        s = g.b.i_mul(u64t, None, s, sizes[k]).ie()?;
    }
    Ok(dims)
}

/// A constant register.
pub fn constant(g: &mut Gen, c: PrimValue) -> Word {
    match c {
        PrimValue::Bool(b) => g.c_bool(b),
        // +0.0 as a value the driver cannot fold (see `crate::codegen::ieee`).
        PrimValue::F16(x) => g.ieee_float(FloatType::F16, x.to_f64()),
        PrimValue::F32(x) => g.ieee_float(FloatType::F32, x as f64),
        PrimValue::F64(x) => g.ieee_float(FloatType::F64, x),
        _ => match (c.prim_type(), c.as_i128()) {
            (PrimType::Int(t), Some(v)) => g.c_int(t, v),
            _ => g.c_u32(0),
        },
    }
}

fn pat_prim(stm: &Stm, k: usize) -> R<PrimType> {
    match stm.pat.elems.get(k).map(|p| &p.ty) {
        Some(Type::Prim(t)) => Ok(*t),
        _ => Err(Error::bug("scalar statement with a non-scalar pattern")),
    }
}

fn pat_prims(stm: &Stm, what: &str) -> R<Vec<PrimType>> {
    stm.pat
        .elems
        .iter()
        .map(|p| match &p.ty {
            Type::Prim(t) => Ok(*t),
            _ => Err(Error::unsupported(what, &stm.loc)),
        })
        .collect()
}

/// A short name of an expression's construct for messages.
pub fn construct_name(e: &Exp) -> &'static str {
    match e {
        Exp::SubExp(_) => "a copy",
        Exp::UnOp(..) | Exp::BinOp(..) | Exp::CmpOp(..) | Exp::Conv(..) | Exp::Math(..) => {
            "a scalar operation"
        }
        Exp::Index(..) => "indexing",
        Exp::Update(..) => "an in-place update inside a parallel operator",
        Exp::Iota { .. } => "`iota` inside a parallel operator",
        Exp::Replicate { .. } => "`replicate` inside a parallel operator",
        Exp::ArrayLit { .. } => "an array literal inside a parallel operator",
        Exp::Concat { .. } => "concatenation inside a parallel operator",
        Exp::Copy(_) => "a copy",
        Exp::Reshape(..) => "a reshape inside a parallel operator",
        Exp::Rearrange(..) => "a transposition inside a parallel operator",
        Exp::SortByKey { .. } => "a sort inside a parallel operator",
        Exp::Assert { .. } => "an assertion",
        Exp::Apply { .. } => "a function call",
        Exp::If { .. } => "`if`",
        Exp::Loop { .. } => "`loop`",
        Exp::Soac(Soac::Map { .. }) => "a `map` inside a parallel operator",
        Exp::Soac(Soac::Reduce { .. }) => "`reduce`",
        Exp::Soac(Soac::Scan { .. }) => "a `scan` inside a parallel operator",
        Exp::Soac(Soac::Hist { .. }) => "`reduce_by_index` inside a parallel operator",
        Exp::Soac(Soac::Scatter { .. }) => "`scatter` inside a parallel operator",
        Exp::WithAcc { .. } => "accumulators (`withacc`)",
        Exp::UpdAcc { .. } => "accumulator updates",
        // `ad::transform` removes these before a backend sees the program.
        Exp::Jvp { .. } | Exp::Vjp { .. } => "an untransformed `jvp`/`vjp`",
        Exp::WithVjp { .. } => "an untransformed `with_vjp`",
    }
}

pub(crate) fn finish(mut g: Gen, mut k: KCtx<'_>) -> R<KernelCode> {
    k.report_scratch_need(&mut g)?;
    let uses_f64 = g.uses_f64;
    let errors = g.errors.clone();
    let words = g.finish()?;
    Ok(KernelCode {
        words,
        args: k.args,
        binds: k.binds,
        errors,
        uses_f64,
    })
}

/// Launch-time literal `i` as u64.
pub(crate) fn lit(k: &mut KCtx<'_>, g: &mut Gen, i: usize) -> R<Word> {
    k.arg(g, ArgSrc::Lit(i), PrimType::I64)
}
