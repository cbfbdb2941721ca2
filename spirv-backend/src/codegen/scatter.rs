//! `scatter`: later writes win, as in the interpreter: a claim pass (atomic max of the writer's
//! index into an owner array), then a write pass by the owners.

use crate::codegen::gen::{word_kind, Gen, Ie, WordKind, R};
use crate::codegen::thread::{finish, lit, KCtx, KVal};
use crate::codegen::{ArgSrc, BindSrc, HostTy, KernelCode};
use crate::error::Error;
use rspirv::spirv::{self};
use vkad_core::ir::{Program, VName};
use vkad_core::prim::PrimType;

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
