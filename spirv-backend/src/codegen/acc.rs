//! Accumulators inside kernels.
//!
//! **Host accumulators.** A `map` at host level whose lambda updates accumulators of a running
//! `withacc` (what reverse-mode AD makes of free arrays read inside loops in a `map`) runs as
//! one kernel in which `upd_acc acc [i…] v` is an atomic update of the accumulator's array: the
//! device's atomic for the operator where it has one (`+` on integers and `f32` with
//! `shaderBufferFloat32AtomicAdd`, integer min/max), a compare-exchange loop running the
//! operator otherwise (f64 `+` on lavapipe, `*`, …). Out-of-range indices are ignored, as in
//! the interpreter. An accumulator of several arrays is supported where its operator combines
//! each component on its own (result `j` depends only on parameters `j` and `k + j`, checked
//! on the operator's IR): one atomic update per component, each running its slice of the
//! operator. Float additions at an index that is the same in every thread (the adjoint of a
//! free array read at thread-invariant indices, found by `codegen::variance`) are summed per
//! subgroup first where the whole subgroup updates one element, and one invocation makes the
//! update (`codegen::subgroup`). An update by the operator's neutral element (a constant) is
//! skipped: AD's adjoints are mostly zeros (a one-hot adjoint of `minimum`, a row lookup), and
//! each skip saves an atomic or a compare-exchange loop. An accumulator without operator (the
//! overwriting accumulator of `scatter_stream`) is an atomic store per component: of several
//! writes to one element, one wins, as in a parallel `scatter` with duplicate indices; a row
//! update without operator stores the row. A row update with a vectorised operator (`map2 ⊙`
//! of a scalar `⊙`, what `hist_stream` with `map2 (+)` makes) is one atomic update per element
//! of the row by `⊙`; the rows of two threads may interleave element by element, which a
//! commutative and associative `⊙` allows. Still "not supported" here: operators that mix
//! components, and row updates with an operator on rows that is not vectorised (that would
//! need a lock per row).
//!
//! **Accumulators of the thread** (a `withacc` in per-thread code: the flattener keeps one
//! nested in a `map` as sequential code of the thread): the arrays are per-thread arrays in
//! scratch memory (the inputs are copied there unless they already are per-thread arrays,
//! which the `withacc` consumes, as in-place updates do), and `upd_acc` is a plain
//! read-modify-write in the thread: the operator applied to the old and the new value (whole
//! rows where the accumulator's index is shorter than its arrays), or an overwrite without
//! operator; out-of-range indices are ignored. The `withacc` gives the arrays, then the
//! function's other results.
//!
//! Accumulators of both kinds pass through the thread's loops and `if`s as compile-time
//! handles. An inner `map` that takes or returns accumulators (AD's update of a row: a `map`
//! over the row's elements, each an `upd_acc`) runs eagerly, its iterations in order in the
//! thread; its other results are per-thread arrays.

use crate::codegen::gen::{word_kind, Gen, Ie, WordKind, ERR_ASSERT, R};
use crate::codegen::layout::{ArgSrc, BindSrc};
use crate::codegen::operator::{
    component_atomic, component_group_add, component_slices, Component,
};
use crate::codegen::subgroup;
use crate::codegen::thread::{natural, KCtx, KVal, View};
use crate::error::Error;
use rspirv::spirv;
use std::collections::HashMap;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{AccInput, BinOp, Operator, SubExp, VName};
use vkad_core::ir::{Lambda, Stm, Type};
use vkad_core::prim::{FloatType, PrimType};

/// What a kernel needs to know about the host accumulators it updates.
#[derive(Clone, Default)]
pub struct AccKernel<'p> {
    /// Per accumulator variable (by id): its operator.
    pub ops: HashMap<u32, Option<&'p Operator>>,
    /// The device has `f32` atomic add on storage buffers.
    pub f32_add: bool,
    /// The device has 64-bit integer atomics on storage buffers.
    pub i64_atomics: bool,
    /// The device can sum a subgroup's updates of one element before they are made
    /// ([`subgroup::aggregated`]: subgroup arithmetic and vote in compute shaders).
    pub subgroups: bool,
}

/// An accumulator bound in a kernel.
#[derive(Clone)]
pub(super) enum KAcc<'p> {
    /// A host accumulator (variable `var`, index rank `rank`): one atomic update per array
    /// (a store where there is no operator), per element of the row where its elements are
    /// rows.
    Host {
        var: VName,
        rank: usize,
        op: Option<&'p Operator>,
        comps: Vec<HostComp<'p>>,
    },
    /// An accumulator of the thread: its arrays in scratch memory and its index shape.
    Local {
        arrs: Vec<View>,
        shape: Vec<rspirv::spirv::Word>,
        op: Option<&'p Operator>,
    },
}

/// One array of a host accumulator.
#[derive(Clone)]
pub(super) struct HostComp<'p> {
    bi: u32,
    elem: PrimType,
    /// The array's rank (more than the index rank: updates write rows).
    rank: usize,
    /// The operator's component that combines one element (`None`: no operator, a store).
    op: Option<CompOp<'p>>,
    /// The device atomic for the operator's component (`None`: compare-exchange).
    fast: Option<(BinOp, bool)>,
    /// The operator's component is float addition and the device sums over subgroups:
    /// updates at one element are summed per subgroup first ([`subgroup::aggregated`]).
    group: bool,
    wk: WordKind,
}

/// One component of an accumulator's operator on elements: the statements of `lam` that
/// `comp`'s result needs. `lam` is the operator's own lambda, or, for a vectorised operator on
/// rows (`map2 ⊙`), the scalar lambda inside it.
#[derive(Clone)]
pub(super) struct CompOp<'p> {
    lam: &'p Lambda,
    keep: Vec<bool>,
    comp: Component,
}

impl<'p> KCtx<'p> {
    /// Binds host accumulator `v` (arrays of `elems`, of ranks `ranks`; index rank `rank`).
    pub(super) fn host_acc(
        &mut self,
        g: &mut Gen,
        v: &VName,
        elems: &[PrimType],
        ranks: &[usize],
        rank: usize,
        loc: &Option<SrcLoc>,
    ) -> R<KVal> {
        let info = self
            .acc_info
            .clone()
            .ok_or_else(|| Error::unsupported("accumulators inside this kernel", loc))?;
        let op = match info.ops.get(&v.id) {
            Some(op) => *op,
            None => return Err(Error::bug(format!("accumulator `{v}` unknown"))),
        };
        let k = elems.len();
        // Without an operator, a row update is a store of the row; with one, rows are updated
        // element by element, which needs a vectorised operator.
        let rows = ranks.iter().any(|&r| r != rank);
        let ops: Vec<Option<CompOp<'p>>> = match op {
            None => vec![None; k],
            Some(op) if !rows => Self::operator_parts(op, k, loc)?
                .into_iter()
                .map(Some)
                .collect(),
            Some(op) => Self::vectorised_parts(op, k, ranks, rank, loc)?
                .into_iter()
                .map(Some)
                .collect(),
        };
        let mut comps = Vec::with_capacity(k);
        for ((&t, &arr_rank), cop) in elems.iter().zip(ranks).zip(ops) {
            if t.byte_size() == 8 && !info.i64_atomics {
                return Err(Error::unsupported(
                    "a 64-bit accumulator on a device without 64-bit atomics",
                    loc,
                ));
            }
            if t.byte_size() < 4 {
                return Err(Error::unsupported(
                    "an accumulator of 8- or 16-bit elements inside a kernel",
                    loc,
                ));
            }
            let fast = cop.as_ref().and_then(|c| {
                component_atomic(c.lam, &c.keep, c.comp, t, info.f32_add, info.i64_atomics)
            });
            let group = info.subgroups
                && cop
                    .as_ref()
                    .is_some_and(|c| component_group_add(c.lam, &c.keep, c.comp, t));
            let wk = if fast.is_some() && t == PrimType::Float(FloatType::F32) {
                WordKind::F32
            } else {
                word_kind(t)
            };
            let bi = g.binding(wk);
            self.binds.push(BindSrc::AccArr(v.clone(), comps.len()));
            comps.push(HostComp {
                bi,
                elem: t,
                rank: arr_rank,
                op: cop,
                fast,
                group,
                wk,
            });
        }
        self.accs.push(KAcc::Host {
            var: v.clone(),
            rank,
            op,
            comps,
        });
        let a = KVal::Acc(self.accs.len() - 1);
        self.env.insert(v.id, a.clone());
        Ok(a)
    }

    /// Operator `op` on `k`-tuples of elements, one component per array: each component's
    /// result may read only its own two parameters.
    fn operator_parts(op: &'p Operator, k: usize, loc: &Option<SrcLoc>) -> R<Vec<CompOp<'p>>> {
        if op.lam.params.len() != 2 * k || op.lam.body.result.len() != k {
            return Err(Error::bug("accumulator operator arity"));
        }
        Self::component_parts(&op.lam, Component::of_tuple(k), loc)
    }

    /// A vectorised operator `op` (`map2 ⊙` of a scalar `⊙`) on `k`-tuples of rows: the
    /// components of the scalar operator inside, which update the rows element by element.
    /// Rows of rank 1 only (a vectorised operator maps a scalar operator once).
    fn vectorised_parts(
        op: &'p Operator,
        k: usize,
        ranks: &[usize],
        rank: usize,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<CompOp<'p>>> {
        let refused = || {
            Error::unsupported(
                "an accumulator update of a whole row inside a kernel, with an operator other \
                 than `map` of a scalar operator over rows of rank 1 (`map2 (+)`)",
                loc,
            )
        };
        if ranks.iter().any(|&r| r != rank + 1) || op.lam.params.len() != 2 * k {
            return Err(refused());
        }
        let v = crate::codegen::columns::vectorised_op(op).ok_or_else(refused)?;
        let param = |p: usize| v.inputs.iter().position(|&i| i == p);
        let comps = (0..k)
            .map(|m| {
                Some(Component {
                    old: param(m)?,
                    new: param(k + m)?,
                    res: *v.results.get(m)?,
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(refused)?;
        Self::component_parts(v.inner, comps, loc)
    }

    /// Components `comps` of `lam`, each with the statements its result needs; refused where a
    /// result reads another component's parameters or a statement serves no result.
    fn component_parts(
        lam: &'p Lambda,
        comps: Vec<Component>,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<CompOp<'p>>> {
        let mixes = || {
            Error::unsupported(
                "an accumulator of several arrays whose operator mixes their components inside a kernel",
                loc,
            )
        };
        let keep = component_slices(lam, &comps).ok_or_else(mixes)?;
        // Statements no component needs would not run: refused rather than dropped.
        let all = (0..lam.body.stms.len()).all(|s| keep.iter().any(|kp| kp[s]));
        if !all {
            return Err(mixes());
        }
        Ok(keep
            .into_iter()
            .zip(comps)
            .map(|(keep, comp)| CompOp { lam, keep, comp })
            .collect())
    }

    /// Array `m` of host accumulator `var` (its offset and sizes loaded here, where they are
    /// used).
    fn host_acc_view(&mut self, g: &mut Gen, var: &VName, m: usize, c: &HostComp) -> R<View> {
        let off = self.arg(g, ArgSrc::AccOff(var.clone(), m), PrimType::I64)?;
        let mut sizes = Vec::with_capacity(c.rank);
        for d in 0..c.rank {
            sizes.push(self.arg(g, ArgSrc::AccDim(var.clone(), m, d), PrimType::I64)?);
        }
        Ok(View {
            bi: c.bi,
            elem: c.elem,
            off,
            dims: natural(g, &sizes)?,
        })
    }

    /// `upd_acc acc [idx…] vals`.
    pub(super) fn upd_acc(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        acc: &VName,
        idx: &[SubExp],
        vals: &[SubExp],
    ) -> R<KVal> {
        let loc = &stm.loc;
        let a = match self.var(g, acc, loc)? {
            KVal::Acc(a) => a,
            _ => return Err(Error::bug(format!("`{acc}` is not an accumulator"))),
        };
        match self.accs[a].clone() {
            KAcc::Host {
                var,
                rank,
                op,
                comps,
            } => {
                if idx.len() != rank {
                    return Err(Error::unsupported(
                        "an accumulator update of a whole row inside a kernel",
                        loc,
                    ));
                }
                if vals.len() != comps.len() {
                    return Err(Error::bug("accumulator update of the wrong arity"));
                }
                let mut is = Vec::with_capacity(rank);
                for ix in idx {
                    is.push(self.index(g, ix, loc)?);
                }
                // Whether the index is the same in every thread ([`crate::codegen::variance`]).
                let uniform = self.variant.as_ref().is_some_and(|v| {
                    !idx.iter()
                        .any(|i| matches!(i, SubExp::Var(x) if v.contains(&x.id)))
                });
                let mut views = Vec::with_capacity(comps.len());
                for (m, c) in comps.iter().enumerate() {
                    views.push(self.host_acc_view(g, &var, m, c)?);
                }
                // Element updates by float addition at such an index: summed per subgroup first.
                let grouped: Vec<usize> = (0..comps.len())
                    .filter(|&m| uniform && comps[m].rank == rank && comps[m].group)
                    .collect();
                if !grouped.is_empty() {
                    let mut xs = Vec::with_capacity(grouped.len());
                    for &m in &grouped {
                        xs.push(self.scalar(g, &vals[m], loc)?);
                    }
                    self.grouped_update(g, &views, &is, &comps, op, &grouped, &xs, loc)?;
                }
                for ((m, c), view) in comps.iter().enumerate().zip(&views) {
                    if grouped.contains(&m) {
                        continue;
                    }
                    if c.rank > rank && c.op.is_none() {
                        let x = self.sub(g, &vals[m], loc)?;
                        self.host_store_row(g, view, &is, &x, loc)?;
                    } else if c.rank > rank {
                        let x = self.sub(g, &vals[m], loc)?;
                        self.host_update_row(g, view, &is, c, &x, loc)?;
                    } else {
                        let x = self.scalar(g, &vals[m], loc)?;
                        self.host_update(g, view, &is, c, op, m, x, loc)?;
                    }
                }
            }
            KAcc::Local { arrs, shape, op } => {
                self.local_update(g, stm, &arrs, &shape, op, idx, vals)?;
            }
        }
        Ok(KVal::Acc(a))
    }

    /// The element updates of components `grouped` (of `comps`, in `views`) at element `is`
    /// by values `xs`, at an index [`crate::codegen::variance`] finds the same in every thread:
    /// where the whole subgroup updates that element, one invocation updates it by the
    /// subgroup's combined values ([`subgroup::aggregated`]), elsewhere each by its own.
    #[allow(clippy::too_many_arguments)]
    fn grouped_update(
        &mut self,
        g: &mut Gen,
        views: &[View],
        is: &[rspirv::spirv::Word],
        comps: &[HostComp<'p>],
        op: Option<&'p Operator>,
        grouped: &[usize],
        xs: &[rspirv::spirv::Word],
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        // The components' arrays have one shape: one offset tells whether `is` is the same.
        let (at, ok) = Self::element_at(g, &views[grouped[0]], is)?;
        let parts: Vec<_> = grouped
            .iter()
            .zip(xs)
            .map(|(&m, &x)| (x, comps[m].elem))
            .collect();
        g.if_then(ok, |g| {
            subgroup::aggregated(g, at, &parts, |g, sums| {
                for (i, &m) in grouped.iter().enumerate() {
                    let x = sums.map_or(xs[i], |s| s[i]);
                    self.host_update(g, &views[m], is, &comps[m], op, m, x, loc)?;
                }
                Ok(())
            })
        })
    }

    /// The offset of element (or row) `is` of `view` and whether `is` is in range.
    pub(super) fn element_at(
        g: &mut Gen,
        view: &View,
        is: &[rspirv::spirv::Word],
    ) -> R<(rspirv::spirv::Word, rspirv::spirv::Word)> {
        let (u64t, bt) = (g.t_u64(), g.t_bool());
        let mut ok = g.c_bool(true);
        let mut at = view.off;
        for (&i, &(size, stride)) in is.iter().zip(&view.dims) {
            // Negative indices are huge as u64: one unsigned comparison checks both ends.
            let inb = g.b.u_less_than(bt, None, i, size).ie()?;
            ok = g.b.logical_and(bt, None, ok, inb).ie()?;
            let mi = g.b.i_mul(u64t, None, i, stride).ie()?;
            at = g.b.i_add(u64t, None, at, mi).ie()?;
        }
        Ok((at, ok))
    }

    /// A row update of a host accumulator without operator: the row `is` of `view` overwritten
    /// with `x`, when in range (plain stores: of two writes of one row, either may win).
    fn host_store_row(
        &mut self,
        g: &mut Gen,
        view: &View,
        is: &[rspirv::spirv::Word],
        x: &KVal,
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        let (off, ok) = Self::element_at(g, view, is)?;
        let row = View {
            bi: view.bi,
            elem: view.elem,
            off,
            dims: view.dims[is.len()..].to_vec(),
        };
        g.if_then(ok, |g| self.write_into(g, &row, x, loc))
    }

    /// A row update of a host accumulator with a vectorised operator: each element `e` of the
    /// row `is` of `view` combined with element `e` of `x` by an atomic update, when in range
    /// (the rows of two threads may interleave element by element; each element's updates
    /// are atomic, which is all a commutative, associative operator needs).
    fn host_update_row(
        &mut self,
        g: &mut Gen,
        view: &View,
        is: &[rspirv::spirv::Word],
        c: &HostComp<'p>,
        x: &KVal,
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        let n = view.dims[is.len()].0;
        self.kloop(g, n, loc, &mut |k, g, e| {
            let xe = match k.row_of(g, x, e, loc)? {
                KVal::S(w, _) => w,
                _ => return Err(Error::bug("a row update's element is not a scalar")),
            };
            let mut at = is.to_vec();
            at.push(e);
            // The vectorised operator's neutral is a row, not a constant: no update is skipped.
            k.host_update(g, view, &at, c, None, 0, xe, loc)
        })
    }

    /// One component's atomic update of a host accumulator: element `is` of `view` combined
    /// with `x` by the component's operator, when in range. `op`, where given, is the
    /// accumulator's operator, whose neutral element (component `m`) is not applied.
    #[allow(clippy::too_many_arguments)]
    fn host_update(
        &mut self,
        g: &mut Gen,
        view: &View,
        is: &[rspirv::spirv::Word],
        c: &HostComp<'p>,
        op: Option<&'p Operator>,
        m: usize,
        x: rspirv::spirv::Word,
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        let bt = g.t_bool();
        let (at, ok) = Self::element_at(g, view, is)?;
        let t = c.elem;
        let ok = match op.and_then(|op| Self::is_neutral(g, op, m, t, x).transpose()) {
            Some(neutral) => {
                let changes = g.b.logical_not(bt, None, neutral?).ie()?;
                g.b.logical_and(bt, None, ok, changes).ie()?
            }
            None => ok,
        };
        g.if_then(ok, |g| {
            let p = g.word_ptr(c.bi, at)?;
            let wt = g.word_ty(c.wk);
            let dev = g.c_u32(spirv::Scope::Device as u32);
            let sem = g.c_u32(0);
            if t.byte_size() == 8 {
                g.b.capability(spirv::Capability::Int64Atomics);
            }
            let Some(cop) = c.op.clone() else {
                let w = g.reg_to_word(t, x)?;
                return g.b.atomic_store(p, dev, sem, w).ie();
            };
            match c.fast {
                Some((bop, signed)) => {
                    let _ = match (bop, c.wk) {
                        (BinOp::Add(_), WordKind::F32) => {
                            g.uses_float_atomic = true;
                            g.b.capability(spirv::Capability::AtomicFloat32AddEXT);
                            g.b.extension("SPV_EXT_shader_atomic_float_add");
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
                    Ok(())
                }
                None => {
                    // Compare-exchange: old ⊙ x until no other thread changed the element.
                    let done = g.var(bt);
                    let f = g.c_bool(false);
                    g.store(done, f)?;
                    let ls = g.begin_loop()?;
                    let d = g.load(bt, done)?;
                    let nd = g.b.logical_not(bt, None, d).ie()?;
                    g.loop_cond(ls, nd)?;
                    let old = g.b.atomic_load(wt, None, p, dev, sem).ie()?;
                    let oldr = g.word_to_reg(t, old)?;
                    let newr = self.op_component(g, &cop, oldr, x, t, loc)?;
                    let neww = g.reg_to_word(t, newr)?;
                    let prev =
                        g.b.atomic_compare_exchange(wt, None, p, dev, sem, sem, neww, old)
                            .ie()?;
                    let same = g.b.i_equal(bt, None, prev, old).ie()?;
                    g.store(done, same)?;
                    g.end_loop(ls)
                }
            }
        })
    }

    /// Whether `x` equals component `m` of `op`'s neutral element, where that is a constant
    /// (`None` otherwise). An update by the neutral element changes nothing (`op(a, ne) = a`
    /// is what `with_acc` asks of its operator), so [`Self::host_update`] skips it: AD's
    /// adjoints are often zero almost everywhere (the one-hot adjoint of a `minimum`, of an
    /// index), and each skipped update is an atomic, or a compare-exchange loop, saved. Floats
    /// compare as numbers, so with `+` an update by `+0.0` is skipped too: that keeps an element
    /// `-0.0` where adding would give `+0.0`, the one difference, equal as a number.
    fn is_neutral(
        g: &mut Gen,
        op: &Operator,
        m: usize,
        t: PrimType,
        x: rspirv::spirv::Word,
    ) -> R<Option<rspirv::spirv::Word>> {
        let Some(SubExp::Const(ne)) = op.neutral.get(m) else {
            return Ok(None);
        };
        if ne.prim_type() != t {
            return Ok(None);
        }
        let bt = g.t_bool();
        let c = crate::codegen::thread::constant(g, *ne);
        let eq = match t {
            PrimType::Float(_) => g.b.f_ord_equal(bt, None, x, c).ie()?,
            PrimType::Bool => g.b.logical_equal(bt, None, x, c).ie()?,
            _ => g.b.i_equal(bt, None, x, c).ie()?,
        };
        Ok(Some(eq))
    }

    /// An operator's component applied to `(old, new)`: the statements it needs, then its
    /// result.
    fn op_component(
        &mut self,
        g: &mut Gen,
        cop: &CompOp<'p>,
        old: rspirv::spirv::Word,
        new: rspirv::spirv::Word,
        t: PrimType,
        loc: &Option<SrcLoc>,
    ) -> R<rspirv::spirv::Word> {
        let lam = cop.lam;
        let c = cop.comp;
        let (pa, pb) = (&lam.params[c.old], &lam.params[c.new]);
        self.env.insert(pa.name.id, KVal::S(old, t));
        self.env.insert(pb.name.id, KVal::S(new, t));
        for (s, &kp) in lam.body.stms.iter().zip(&cop.keep) {
            if kp {
                self.stm(g, s)?;
            }
        }
        match self.sub(g, &lam.body.result[c.res], loc)? {
            KVal::S(w, _) => Ok(w),
            _ => Err(Error::unsupported("an operator returning arrays", loc)),
        }
    }

    /// `upd_acc` of an accumulator of the thread: a read-modify-write of the row at `idx` of
    /// each array, when every index is in range.
    #[allow(clippy::too_many_arguments)]
    fn local_update(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        arrs: &[View],
        shape: &[rspirv::spirv::Word],
        op: Option<&'p Operator>,
        idx: &[SubExp],
        vals: &[SubExp],
    ) -> R<()> {
        let loc = &stm.loc;
        if idx.len() != shape.len() || vals.len() != arrs.len() {
            return Err(Error::bug("accumulator update of the wrong arity"));
        }
        let (u64t, bt) = (g.t_u64(), g.t_bool());
        let mut ok = g.c_bool(true);
        let mut is = Vec::with_capacity(idx.len());
        for (ix, &n) in idx.iter().zip(shape) {
            let i = self.index(g, ix, loc)?;
            let inb = g.b.u_less_than(bt, None, i, n).ie()?;
            ok = g.b.logical_and(bt, None, ok, inb).ie()?;
            is.push(i);
        }
        let mut news = Vec::with_capacity(vals.len());
        for v in vals {
            news.push(self.sub(g, v, loc)?);
        }
        let st = g.begin_if(ok)?;
        let mark = self.mark(g)?;
        // The rows updated.
        let mut rows = Vec::with_capacity(arrs.len());
        for a in arrs {
            let mut off = a.off;
            for (&i, &(_, stride)) in is.iter().zip(&a.dims) {
                let m = g.b.i_mul(u64t, None, i, stride).ie()?;
                off = g.b.i_add(u64t, None, off, m).ie()?;
            }
            rows.push(View {
                bi: a.bi,
                elem: a.elem,
                off,
                dims: a.dims[is.len()..].to_vec(),
            });
        }
        let new = match op {
            None => news,
            Some(op) => {
                let mut args = Vec::with_capacity(2 * rows.len());
                for row in &rows {
                    args.push(if row.dims.is_empty() {
                        KVal::S(self.ld(g, row.bi, row.elem, row.off)?, row.elem)
                    } else {
                        KVal::V(row.clone())
                    });
                }
                args.extend(news);
                let r = self.lambda(g, &op.lam, args, loc)?;
                // Array results may read the rows they replace: computed first, then copied.
                let mut res = Vec::with_capacity(r.len());
                for x in r {
                    res.push(match x {
                        x @ KVal::S(..) => x,
                        x => {
                            let e = self.elem_of(&x)?;
                            KVal::V(self.materialize(g, &x, e, stm)?)
                        }
                    });
                }
                res
            }
        };
        if new.len() != rows.len() {
            return Err(Error::bug("accumulator operator result count"));
        }
        for (row, x) in rows.iter().zip(&new) {
            self.write_into(g, row, x, loc)?;
        }
        self.reset(g, mark)?;
        g.else_(st)?;
        g.end_if(st)
    }

    /// `withacc` in per-thread code: the accumulators' arrays become per-thread arrays (the
    /// inputs consumed), the function runs with them, and the statement gives the arrays and
    /// then the function's other results.
    pub(super) fn with_acc(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        inputs: &'p [AccInput],
        lam: &'p Lambda,
    ) -> R<()> {
        let loc = &stm.loc;
        if self.scratch.is_none() {
            return Err(Error::unsupported(
                "accumulators (`withacc`) outside a `map` kernel",
                loc,
            ));
        }
        if lam.params.len() != inputs.len() {
            return Err(Error::bug(
                "withacc lambda must take one accumulator per input",
            ));
        }
        let bt = g.t_bool();
        let mut handles = Vec::with_capacity(inputs.len());
        for inp in inputs {
            let mut shape = Vec::with_capacity(inp.shape.len());
            for d in &inp.shape {
                shape.push(self.index(g, d, loc)?);
            }
            let mut ok = g.c_bool(true);
            let mut arrs = Vec::with_capacity(inp.arrs.len());
            for a in &inp.arrs {
                let x = self.var(g, a, loc)?;
                let v = self.own(g, x, stm)?;
                if v.dims.len() < shape.len() {
                    return Err(Error::bug("accumulator array of a lower rank"));
                }
                for (&(n, _), &s) in v.dims.iter().zip(&shape) {
                    let e = g.b.i_equal(bt, None, n, s).ie()?;
                    ok = g.b.logical_and(bt, None, ok, e).ie()?;
                }
                arrs.push(v);
            }
            let bad = g.b.logical_not(bt, None, ok).ie()?;
            let site = g.site(
                loc,
                "accumulator array does not start with the accumulator's shape",
            );
            g.fail_if(bad, ERR_ASSERT, site)?;
            if let Some(op) = &inp.op {
                if op.lam.params.len() != 2 * arrs.len() {
                    return Err(Error::bug(
                        "accumulator operator arity does not match its arrays",
                    ));
                }
            }
            self.accs.push(KAcc::Local {
                arrs,
                shape,
                op: inp.op.as_ref(),
            });
            handles.push(self.accs.len() - 1);
        }
        let args = handles.iter().map(|&h| KVal::Acc(h)).collect();
        let r = self.lambda(g, lam, args, loc)?;
        if r.len() < handles.len() {
            return Err(Error::bug("withacc results"));
        }
        let mut out = Vec::with_capacity(stm.pat.elems.len());
        for (x, &h) in r.iter().zip(&handles) {
            if !matches!(x, KVal::Acc(a) if *a == h) {
                return Err(Error::unsupported(
                    "a `withacc` whose function returns other accumulators than its own",
                    loc,
                ));
            }
            if let KAcc::Local { arrs, .. } = &self.accs[h] {
                out.extend(arrs.iter().cloned().map(KVal::V));
            }
        }
        out.extend(r.into_iter().skip(handles.len()));
        self.bind(stm, out)
    }

    /// An inner `map` that takes or returns accumulators: its iterations run now, in order;
    /// its accumulator results are the accumulators, its other results per-thread arrays.
    pub(super) fn acc_inner_map(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        n: rspirv::spirv::Word,
        inputs: &[KVal],
        lam: &'p Lambda,
    ) -> R<()> {
        let loc = &stm.loc;
        let mut outs: Vec<Option<View>> = Vec::with_capacity(lam.ret.len());
        for (res, t) in lam.ret.iter().enumerate() {
            outs.push(match t {
                Type::Acc { .. } => None,
                t => {
                    let e = t
                        .elem()
                        .ok_or_else(|| Error::bug("inner map result type"))?;
                    let shape = self.row_shape(g, stm, res, 0)?;
                    let what = "an inner `map` taking accumulators and returning other values";
                    Some(self.alloc(g, e, &shape, what, loc)?)
                }
            });
        }
        let inputs = inputs.to_vec();
        let outs2 = outs.clone();
        let mut accs: Option<Vec<Option<usize>>> = None;
        self.kloop(g, n, loc, &mut |k, g, i| {
            let args = k.rows_of(g, &inputs, i, loc)?;
            let r = k.lambda(g, lam, args, loc)?;
            if r.len() != outs2.len() {
                return Err(Error::bug("inner map result count"));
            }
            let mut got = Vec::with_capacity(r.len());
            for (x, o) in r.iter().zip(&outs2) {
                match (o, x) {
                    (None, KVal::Acc(a)) => got.push(Some(*a)),
                    (Some(o), x) => {
                        let dst = k.row_view(g, o, i)?;
                        k.write_into(g, &dst, x, loc)?;
                        got.push(None);
                    }
                    (None, _) => return Err(Error::bug("an inner map's accumulator results")),
                }
            }
            accs = Some(got);
            Ok(())
        })?;
        // Accumulators are compile-time handles: the same whatever the iteration.
        let accs = accs.ok_or_else(|| Error::bug("inner map body"))?;
        let mut out = Vec::with_capacity(outs.len());
        for (a, o) in accs.into_iter().zip(outs) {
            out.push(match (a, o) {
                (Some(a), _) => KVal::Acc(a),
                (None, Some(o)) => KVal::V(o),
                (None, None) => return Err(Error::bug("inner map results")),
            });
        }
        self.bind(stm, out)
    }
}
