//! Segmented reductions and scans: a host-level `map (\row -> reduce op ne row) xss` (or
//! `scan`) over few long rows.
//!
//! A `map` kernel gives each row to one thread, which reduces it sequentially: with fewer rows
//! than the device has threads (a handful of rows of a million elements) most of the device
//! idles. Here each row is a segment reduced by a whole workgroup (threads fold parts of the
//! row, a tree combines them, thread 0 writes the row's result; for a scan the tree scans the
//! threads' partials and each thread scans its run again from its prefix), workgroups taking
//! rows `group, group + groups, …`.
//!
//! On lavapipe this also runs rows longer than its per-thread loop limit (65535 iterations),
//! which one thread per row cannot finish.
//!
//! Threads read a commutative operator's elements at stride `WG` (coalesced), any other
//! operator's as contiguous runs (the tree combines runs in order), so the result is the
//! sequential one for any associative operator.

use crate::codegen::chunked::{io_view, Io};
use crate::codegen::fold::{fold_batched, fold_range, tree};
use crate::codegen::gen::{word_kind, Gen, Ie, R, WG};
use crate::codegen::thread::{finish, lit, KCtx, View};
use crate::codegen::{BindSrc, HostTy, KernelCode};
use rspirv::spirv;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Exp, Lambda, Operator, Program, Soac, SubExp, VName};
use vkad_core::prim::PrimType;

/// Literals: 0 = rows, 1 = row length. `inputs`: host arrays `[rows][len]` of `elems`;
/// outputs: one value per row and component (`scan`: the rows' inclusive scans, `[rows][len]`
/// row-major).
pub fn seg_kernel<'p>(
    prog: &'p Program,
    op: &'p Operator,
    elems: &[PrimType],
    inputs: &[VName],
    scan: bool,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, host_types);
    let rows = lit(&mut k, &mut g, 0)?;
    let len = lit(&mut k, &mut g, 1)?;
    let mut ins = Vec::with_capacity(inputs.len());
    for (v, &t) in inputs.iter().zip(elems) {
        ins.push(k.host_array(&mut g, v, t, 2)?);
    }
    let big = g.c_u64(u32::MAX as u64);
    let mut outs = Vec::with_capacity(elems.len());
    for (i, &t) in elems.iter().enumerate() {
        let io = Io {
            src: BindSrc::Out(i),
            off: None,
        };
        outs.push(io_view(&mut k, &mut g, &io, t, big)?);
    }
    let (u64t, bt) = (g.t_u64(), g.t_bool());
    let mut neutral = Vec::with_capacity(elems.len());
    for (ne, &t) in op.neutral.iter().zip(elems) {
        neutral.push((k.scalar(&mut g, ne, loc)?, t));
    }
    let mut accs = Vec::with_capacity(elems.len());
    let mut shared = Vec::with_capacity(elems.len());
    for &(_, t) in &neutral {
        let rt = g.reg_ty(t);
        accs.push((g.var(rt), rt, t));
        let wt = g.word_ty(word_kind(t));
        shared.push((g.shared_array(wt, WG), wt, t, rt));
    }
    let lid = g.local_id()?;
    let lid64 = g.b.u_convert(u64t, None, lid).ie()?;
    // (A scan needs each thread's elements contiguous.)
    let strided = !scan && crate::codegen::operator::commutative(op);
    // Contiguous runs: thread l folds [l·c, (l+1)·c) with c = ⌈len / WG⌉.
    let wg = g.c_u64(WG as u64);
    let wg1 = g.c_u64(WG as u64 - 1);
    let lw = g.b.i_add(u64t, None, len, wg1).ie()?;
    let c = g.b.u_div(u64t, None, lw, wg).ie()?;
    let gid = g.group_id()?;
    let gid = g.b.u_convert(u64t, None, gid).ie()?;
    let ng = g.num_groups()?;
    let ng = g.b.u_convert(u64t, None, ng).ie()?;
    // Rows `group, group + groups, …`: the same trip count in the whole workgroup, so the
    // tree's barriers may sit inside.
    g.for_range(gid, rows, ng, |g, row| {
        for (&(v, _, _), &(x, _)) in accs.iter().zip(&neutral) {
            g.store(v, x)?;
        }
        let mut row_views = Vec::with_capacity(ins.len());
        for v in &ins {
            let (_, s0) = v.dims[0];
            let m = g.b.i_mul(u64t, None, row, s0).ie()?;
            let off = g.b.i_add(u64t, None, v.off, m).ie()?;
            row_views.push(View {
                bi: v.bi,
                elem: v.elem,
                off,
                dims: vec![(len, v.dims[1].1)],
            });
        }
        if strided {
            fold_batched(
                &mut k, g, op, &row_views, &accs, lid64, len, WG as u64, None, loc,
            )?;
        } else {
            let lo = g.b.i_mul(u64t, None, lid64, c).ie()?;
            let lo = g.glsl(u64t, spirv::GlslStd450Op::UMin, &[lo, len])?;
            let hi = g.b.i_add(u64t, None, lo, c).ie()?;
            let hi = g.glsl(u64t, spirv::GlslStd450Op::UMin, &[hi, len])?;
            fold_range(&mut k, g, op, &row_views, &accs, lo, hi, None, loc)?;
        }
        for (&(v, rt, t), &(arr, wt, _, _)) in accs.iter().zip(&shared) {
            let x = g.load(rt, v)?;
            let w = g.reg_to_word(t, x)?;
            let p = g.shared_ptr(arr, wt, lid)?;
            g.store(p, w)?;
        }
        g.control_barrier()?;
        tree(&mut k, g, op, &shared, lid, scan, loc)?;
        let z32 = g.c_u32(0);
        if scan {
            // Thread l's run again, from the inclusive scan of the runs before it.
            let gt0 = g.b.u_greater_than(bt, None, lid, z32).ie()?;
            for (&(v, _, _), &(x, _)) in accs.iter().zip(&neutral) {
                g.store(v, x)?;
            }
            g.if_then(gt0, |g| {
                let u32t = g.t_u32();
                let one = g.c_u32(1);
                let prev = g.b.i_sub(u32t, None, lid, one).ie()?;
                for (&(v, _, t), &(arr, wt, _, _)) in accs.iter().zip(&shared) {
                    let p = g.shared_ptr(arr, wt, prev)?;
                    let w = g.load(wt, p)?;
                    let x = g.word_to_reg(t, w)?;
                    g.store(v, x)?;
                }
                Ok(())
            })?;
            let mut out_rows = Vec::with_capacity(outs.len());
            for o in &outs {
                let m = g.b.i_mul(u64t, None, row, len).ie()?;
                let off = g.b.i_add(u64t, None, o.off, m).ie()?;
                out_rows.push(View {
                    bi: o.bi,
                    elem: o.elem,
                    off,
                    dims: vec![(len, g.c_u64(1))],
                });
            }
            let lo = g.b.i_mul(u64t, None, lid64, c).ie()?;
            let lo = g.glsl(u64t, spirv::GlslStd450Op::UMin, &[lo, len])?;
            let hi = g.b.i_add(u64t, None, lo, c).ie()?;
            let hi = g.glsl(u64t, spirv::GlslStd450Op::UMin, &[hi, len])?;
            fold_range(
                &mut k,
                g,
                op,
                &row_views,
                &accs,
                lo,
                hi,
                Some(&out_rows),
                loc,
            )?;
        } else {
            let is0 = g.b.i_equal(bt, None, lid, z32).ie()?;
            g.if_then(is0, |g| {
                for (&(arr, wt, t, _), o) in shared.iter().zip(&outs) {
                    let p = g.shared_ptr(arr, wt, z32)?;
                    let w = g.load(wt, p)?;
                    let x = g.word_to_reg(t, w)?;
                    let idx = g.b.i_add(u64t, None, o.off, row).ie()?;
                    g.store_elem(o.bi, t, idx, x)?;
                }
                Ok(())
            })?;
        }
        // The next row's partials overwrite the shared arrays.
        g.control_barrier()
    })?;
    finish(g, k)
}

/// `map (\ps -> reduce op ne ps') arrs` (or `scan`) where the reduce reads the lambda's
/// parameters (rows of `arrs`) and its results are the lambda's: whether it is a scan, the
/// operator and, per reduced array, the `arrs` element it reads.
pub(crate) fn segmented_of<'p>(
    arrs: &'p [VName],
    lam: &'p Lambda,
) -> Option<(bool, &'p Operator, Vec<&'p VName>)> {
    let [stm] = lam.body.stms.as_slice() else {
        return None;
    };
    let (scan, rarrs, op) = match &stm.exp {
        Exp::Soac(Soac::Reduce { arrs, op, .. }) => (false, arrs, op),
        Exp::Soac(Soac::Scan { arrs, op, .. }) => (true, arrs, op),
        _ => return None,
    };
    let results_ok = stm.pat.elems.len() == lam.body.result.len()
        && stm
            .pat
            .elems
            .iter()
            .zip(&lam.body.result)
            .all(|(p, r)| *r == SubExp::Var(p.name.clone()));
    if !results_ok || lam.params.len() != arrs.len() {
        return None;
    }
    let inputs = rarrs
        .iter()
        .map(|r| {
            lam.params
                .iter()
                .position(|p| p.name == *r)
                .map(|j| &arrs[j])
        })
        .collect::<Option<Vec<_>>>()?;
    Some((scan, op, inputs))
}
