//! Copies and fills: one strided kernel serves index/slice gathers, in-place updates,
//! concatenation, transposition, replication and copies (negative strides included); `iota` has
//! its own. Both read their sizes from launch-time literals (`ArgSrc::Lit`).

use crate::codegen::gen::{word_kind, Gen, Ie, WordKind, R};
use crate::codegen::thread::{finish, lit, unflatten, KCtx};
use crate::codegen::{BindSrc, HostTy, KernelCode};
use vkad_core::ir::{Program, VName};
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
        let mut so = sbase;
        let mut dof = dbase;
        // Row-major decomposition of `i` (`i < n`, the product of the sizes): the outermost
        // index is what the inner ones leave, so a one-dimensional copy divides nothing.
        let sizes: Vec<_> = dims.iter().map(|&(s, _, _)| s).collect();
        let idx = unflatten(g, i, &sizes)?;
        for (&ik, &(_, ss, ds)) in idx.iter().zip(&dims) {
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
