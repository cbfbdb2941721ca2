//! `reduce_by_index`: one thread per update, with the device's atomic for the operator where it
//! has one ([`atomic_op`](super::operator::atomic_op): integer add/min/max, `f32` add), a
//! compare-exchange loop running the operator otherwise. Out-of-range indices are ignored.

use crate::codegen::gen::{word_kind, Gen, Ie, WordKind, R};
use crate::codegen::thread::{finish, lit, KCtx, KVal};
use crate::codegen::{ArgSrc, HostTy, KernelCode};
use crate::error::Error;
use rspirv::spirv::{self};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{BinOp, Operator, Program, VName};
use vkad_core::prim::PrimType;

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
        crate::codegen::operator::atomic_op(op, t, f32_add, i64_atomics)
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
