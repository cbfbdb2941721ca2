//! Accumulators inside kernels: a `map` at host level whose lambda updates accumulators of a
//! running `withacc` (what reverse-mode AD makes of free arrays read inside loops in a `map`)
//! runs as one kernel in which `upd_acc acc [i…] v` is an atomic update of the accumulator's
//! array: the device's atomic for the operator where it has one (`+` on integers and `f32`
//! with `shaderBufferFloat32AtomicAdd`, integer min/max), a compare-exchange loop running the
//! operator otherwise (f64 `+` on lavapipe, `*`, …). Out-of-range indices are ignored, as in the
//! interpreter. Accumulators pass through the lambda's loops and `if`s as compile-time handles.
//!
//! An inner `map` that takes accumulators (AD's update of a row: a `map` over the row's
//! elements, each an `upd_acc`) runs eagerly, its iterations in order in the thread.
//!
//! Supported: accumulators of one array of scalars (an element per index) with an operator.
//! Anything else (several arrays, row updates, no operator (plain writes, whose order would
//! matter), inner maps returning other values besides accumulators) is "not supported" here,
//! and the host then runs the `map` iteration by iteration (module `acc` of the executor).

use super::{unsupported, KCtx, KVal, View};
use crate::gen::{word_kind, Gen, Ie, WordKind, R};
use rspirv::spirv;
use std::collections::HashMap;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{BinOp, Operator, SubExp, VName};
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
}

/// An accumulator bound in a kernel.
#[derive(Clone)]
pub(super) struct KAcc<'p> {
    view: View,
    op: &'p Operator,
    /// The device atomic for the operator (`None`: compare-exchange).
    fast: Option<(BinOp, bool)>,
    wk: WordKind,
}

impl<'p> KCtx<'p> {
    /// Binds host accumulator `v` (arrays of `elems`, of rank `rank`).
    pub(super) fn host_acc(
        &mut self,
        g: &mut Gen,
        v: &VName,
        elems: &[PrimType],
        rank: usize,
        loc: &Option<SrcLoc>,
    ) -> R<KVal> {
        let info = self
            .acc_info
            .clone()
            .ok_or_else(|| unsupported("accumulators inside this kernel", loc))?;
        let op = match info.ops.get(&v.id) {
            Some(Some(op)) => *op,
            Some(None) => {
                return Err(unsupported(
                    "an accumulator without an operator inside a kernel",
                    loc,
                ))
            }
            None => return Err(format!("internal error: accumulator `{v}` unknown")),
        };
        let [t] = elems else {
            return Err(unsupported(
                "an accumulator of several arrays inside a kernel",
                loc,
            ));
        };
        let t = *t;
        if t.byte_size() == 8 && !info.i64_atomics {
            return Err(unsupported(
                "a 64-bit accumulator on a device without 64-bit atomics",
                loc,
            ));
        }
        if t.byte_size() < 4 {
            return Err(unsupported(
                "an accumulator of 8- or 16-bit elements inside a kernel",
                loc,
            ));
        }
        let fast = crate::prims::atomic_op(op, t, info.f32_add, info.i64_atomics);
        let wk = if fast.is_some() && t == PrimType::Float(FloatType::F32) {
            WordKind::F32
        } else {
            word_kind(t)
        };
        let bi = g.binding(wk);
        self.binds.push(super::BindSrc::AccArr(v.clone(), 0));
        let off = self.arg(g, super::ArgSrc::AccOff(v.clone(), 0), PrimType::I64)?;
        let mut sizes = Vec::with_capacity(rank);
        for d in 0..rank {
            sizes.push(self.arg(g, super::ArgSrc::AccDim(v.clone(), 0, d), PrimType::I64)?);
        }
        let dims = super::natural(g, &sizes)?;
        self.accs.push(KAcc {
            view: View {
                bi,
                elem: t,
                off,
                dims,
            },
            op,
            fast,
            wk,
        });
        let k = KVal::Acc(self.accs.len() - 1);
        self.env.insert(v.id, k.clone());
        Ok(k)
    }

    /// `upd_acc acc [idx…] vals`: an atomic update of the element, when in range.
    pub(super) fn upd_acc(
        &mut self,
        g: &mut Gen,
        acc: &VName,
        idx: &[SubExp],
        vals: &[SubExp],
        loc: &Option<SrcLoc>,
    ) -> R<KVal> {
        let a = match self.var(g, acc, loc)? {
            KVal::Acc(a) => a,
            _ => return Err(format!("internal error: `{acc}` is not an accumulator")),
        };
        let ka = self.accs[a].clone();
        if idx.len() != ka.view.dims.len() || vals.len() != 1 {
            return Err(unsupported(
                "an accumulator update of a whole row inside a kernel",
                loc,
            ));
        }
        let (u64t, bt) = (g.t_u64(), g.t_bool());
        let mut ok = g.c_bool(true);
        let mut at = ka.view.off;
        for (ix, &(size, stride)) in idx.iter().zip(&ka.view.dims) {
            // Negative indices are huge as u64: one unsigned comparison checks both ends.
            let i = self.index(g, ix, loc)?;
            let inb = g.b.u_less_than(bt, None, i, size).ie()?;
            ok = g.b.logical_and(bt, None, ok, inb).ie()?;
            let m = g.b.i_mul(u64t, None, i, stride).ie()?;
            at = g.b.i_add(u64t, None, at, m).ie()?;
        }
        let x = self.scalar(g, &vals[0], loc)?;
        let t = ka.view.elem;
        g.if_then(ok, |g| {
            let p = g.word_ptr(ka.view.bi, at)?;
            let wt = g.word_ty(ka.wk);
            let dev = g.c_u32(spirv::Scope::Device as u32);
            let sem = g.c_u32(0);
            if t.byte_size() == 8 {
                g.b.capability(spirv::Capability::Int64Atomics);
            }
            match ka.fast {
                Some((bop, signed)) => {
                    let _ = match (bop, ka.wk) {
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
                    let r =
                        self.lambda(g, &ka.op.lam, vec![KVal::S(oldr, t), KVal::S(x, t)], loc)?;
                    let Some(KVal::S(newr, _)) = r.into_iter().next() else {
                        return Err(unsupported("an operator returning arrays", loc));
                    };
                    let neww = g.reg_to_word(t, newr)?;
                    let prev =
                        g.b.atomic_compare_exchange(wt, None, p, dev, sem, sem, neww, old)
                            .ie()?;
                    let same = g.b.i_equal(bt, None, prev, old).ie()?;
                    g.store(done, same)?;
                    g.end_loop(ls)
                }
            }
        })?;
        Ok(KVal::Acc(a))
    }

    /// An inner `map` over accumulators (and rows of `inputs`) whose results are all
    /// accumulators: its iterations run now, in order; its results are the accumulators.
    pub(super) fn acc_inner_map(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        n: rspirv::spirv::Word,
        inputs: &[KVal],
        lam: &'p Lambda,
    ) -> R<()> {
        let loc = &stm.loc;
        if lam.ret.iter().any(|t| !matches!(t, Type::Acc { .. })) {
            return Err(unsupported(
                "an inner `map` taking accumulators and returning other values",
                loc,
            ));
        }
        let (u64t, bt) = (g.t_u64(), g.t_bool());
        let iv = g.var(u64t);
        let z = g.c_u64(0);
        g.store(iv, z)?;
        let st = g.begin_loop()?;
        let i = g.load(u64t, iv)?;
        let c = g.b.u_less_than(bt, None, i, n).ie()?;
        let c = self.live(g, c)?;
        g.loop_cond(st, c)?;
        let i = g.load(u64t, iv)?;
        let mark = self.mark(g)?;
        let args = self.rows_of(g, inputs, i, loc)?;
        let r = self.lambda(g, lam, args, loc)?;
        self.reset(g, mark)?;
        let one = g.c_u64(1);
        let i1 = g.b.i_add(u64t, None, i, one).ie()?;
        g.store(iv, i1)?;
        self.backedge_lt(g, i1, n, loc)?;
        g.end_loop(st)?;
        // Accumulators are compile-time handles: the same whatever the iteration.
        if r.iter().any(|x| !matches!(x, KVal::Acc(_))) {
            return Err("internal error: an inner map's accumulator results".into());
        }
        self.bind(stm, r)
    }
}
