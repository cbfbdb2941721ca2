//! Segmented reductions and scans: a plan's primitive per segment (`map (\row -> reduce op ne
//! row) xss`, or `scan`) over rows that one thread each would not use the device well for.
//!
//! A `map` kernel gives each row to one thread, which reduces it sequentially: with fewer rows
//! than the device has threads (a handful of rows of a million elements) most of the device
//! idles. Here each row (segment) is reduced by a *team* of threads: consecutive threads of a
//! workgroup, `team` of them (a power of two up to the whole workgroup). The threads of a team
//! fold parts of the row, a tree in shared memory combines them, and the team's first thread
//! writes the row's result; for a scan the tree scans the threads' partials and each thread
//! scans its run again from its prefix. A workgroup holds `WG / team` teams, and teams take
//! rows `t, t + teams, …` in step, so that the trip count, and the barriers inside, are the
//! same for the whole workgroup.
//!
//! Where even one workgroup per row leaves the device idle (a few very long rows), each row is
//! cut into `parts` pieces reduced by separate workgroups into `[rows][parts]` partials, which
//! a second launch of the same kernel reduces per row ([`Strategy::Teams`]; reductions only:
//! a scan's pieces would need each other's totals). [`strategy`] chooses among one thread per
//! row (the `map` kernel), teams and parts from the sizes at run time, as Futhark's segmented
//! reductions choose between small segments (several per workgroup), one workgroup per segment
//! and several workgroups per segment.
//!
//! On lavapipe this also runs rows longer than its per-thread loop limit (65535 iterations),
//! which one thread per row cannot finish.
//!
//! Threads read a commutative operator's elements at stride `team` (coalesced), any other
//! operator's as contiguous runs (the tree combines runs in order, and parts are combined in
//! order), so the result is the sequential one for any associative operator.

use crate::codegen::chunked::{io_view, Io};
use crate::codegen::fold::{fold_batched, fold_range, team_tree};
use crate::codegen::gen::{word_kind, Gen, Ie, LAVAPIPE_LOOP_LIMIT, R, WG};
use crate::codegen::thread::{finish, lit, KCtx, View};
use crate::codegen::{BindSrc, HostTy, KernelCode};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Exp, Lambda, Operator, Program, Soac, SubExp, VName};
use vkad_core::prim::PrimType;

/// How the rows of a segmented reduction or scan are spread over the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// One thread per row: the plain `map` kernel.
    Thread,
    /// `team` threads per row (a power of two dividing WG; WG is one workgroup per row), each
    /// row in `parts` pieces (`parts` > 1 only for reductions, with whole-workgroup teams),
    /// reduced by separate teams into partials that a second launch combines.
    Teams { team: u32, parts: u32 },
}

/// The strategy for `rows` rows of `len` elements on a GPU (`gpu`) or lavapipe.
///
/// - Enough rows to fill the device (8192 on a GPU, 64 on lavapipe, whose threads are SIMD
///   lanes of a few cores) and rows short enough for one thread: a thread per row.
/// - Otherwise a team of about `len / 4` threads per row, rounded up to a power of two, at most
///   a workgroup; rows of 8 elements or fewer stay one thread's. Rows longer than half of
///   lavapipe's loop limit always get a whole workgroup.
/// - A reduction whose rows get whole workgroups but are too few to fill the device (1024
///   workgroups on a GPU, 8 on lavapipe) is cut into as many parts per row as fill it, as long
///   as each thread still folds at least 8 elements of its part.
pub fn strategy(rows: usize, len: usize, scan: bool, gpu: bool) -> Strategy {
    let busy_rows: usize = if gpu { 8192 } else { 64 };
    let fill_groups: usize = if gpu { 1024 } else { 8 };
    let too_long = !gpu && len >= LAVAPIPE_LOOP_LIMIT as usize / 2;
    if rows == 0 || len == 0 || (rows >= busy_rows && !too_long) {
        return Strategy::Thread;
    }
    let wg = WG as usize;
    let team = if too_long { wg } else { team_for(len) };
    if team < 4 {
        return Strategy::Thread;
    }
    let parts = if scan || team < wg {
        1
    } else {
        fill_groups.div_ceil(rows).min(len / (8 * wg)).clamp(1, wg)
    };
    Strategy::Teams {
        team: team as u32,
        parts: parts as u32,
    }
}

/// The team for rows of `len` elements: about `len / 4` threads, rounded up to a power of two,
/// at most a workgroup.
pub fn team_for(len: usize) -> usize {
    len.div_ceil(4).next_power_of_two().min(WG as usize)
}

/// Where a segmented kernel reads its rows.
#[derive(Clone, Copy, Debug)]
pub enum SegInputs<'a> {
    /// Host arrays `[rows][len]`, one per component.
    Host(&'a [VName]),
    /// A first pass's partials: temporary buffer `i` holds component `i` as `[rows][len]`,
    /// row-major from element 0.
    Partials,
}

/// Literals: 0 = rows, 1 = row length, 2 = team (threads per row piece, a power of two
/// dividing WG), 3 = parts (pieces per row; not read by a scan, whose rows are whole).
/// Outputs: one value per row piece and component, `[rows][parts]` row-major (`scan`: the
/// rows' inclusive scans, `[rows][len]`). Launch with any number of workgroups: teams take
/// row pieces in step.
pub fn seg_kernel<'p>(
    prog: &'p Program,
    op: &'p Operator,
    elems: &[PrimType],
    inputs: SegInputs<'_>,
    scan: bool,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, host_types);
    let rows = lit(&mut k, &mut g, 0)?;
    let len = lit(&mut k, &mut g, 1)?;
    let team = lit(&mut k, &mut g, 2)?;
    // (A constant for a scan, whose rows are never cut: lavapipe's scans of rows are a fifth
    // slower with the pieces' offsets unknown at compile time.)
    let parts = if scan {
        g.c_u64(1)
    } else {
        lit(&mut k, &mut g, 3)?
    };
    let (u64t, u32t, bt) = (g.t_u64(), g.t_u32(), g.t_bool());
    let big = g.c_u64(u32::MAX as u64);
    let one = g.c_u64(1);
    let mut ins = Vec::with_capacity(elems.len());
    match inputs {
        SegInputs::Host(vs) => {
            for (v, &t) in vs.iter().zip(elems) {
                ins.push(k.host_array(&mut g, v, t, 2)?);
            }
        }
        SegInputs::Partials => {
            for (i, &t) in elems.iter().enumerate() {
                let io = Io {
                    src: BindSrc::Tmp(i),
                    off: None,
                };
                let mut v = io_view(&mut k, &mut g, &io, t, big)?;
                v.dims = vec![(rows, len), (len, one)];
                ins.push(v);
            }
        }
    }
    let mut outs = Vec::with_capacity(elems.len());
    for (i, &t) in elems.iter().enumerate() {
        let io = Io {
            src: BindSrc::Out(i),
            off: None,
        };
        outs.push(io_view(&mut k, &mut g, &io, t, big)?);
    }
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
    // Team `tm` of the workgroup, lane `lane` in it; its first thread `lead`.
    let team32 = g.b.u_convert(u32t, None, team).ie()?;
    let tm = g.b.u_div(u64t, None, lid64, team).ie()?;
    let lane = g.b.u_mod(u64t, None, lid64, team).ie()?;
    let lead = g.b.i_mul(u64t, None, tm, team).ie()?;
    let lead = g.b.u_convert(u32t, None, lead).ie()?;
    let wg = g.c_u64(WG as u64);
    let teams = g.b.u_div(u64t, None, wg, team).ie()?;
    // (A scan needs each thread's elements contiguous.)
    let strided = !scan && crate::codegen::operator::commutative(op);
    let units = g.b.i_mul(u64t, None, rows, parts).ie()?;
    let gid = g.group_id()?;
    let gid = g.b.u_convert(u64t, None, gid).ie()?;
    let ng = g.num_groups()?;
    let ng = g.b.u_convert(u64t, None, ng).ie()?;
    let first = g.b.i_mul(u64t, None, gid, teams).ie()?;
    let step = g.b.i_mul(u64t, None, ng, teams).ie()?;
    // Row pieces `first + tm, first + tm + step, …`: the loop runs over the workgroup's
    // first pieces, the same trip count in the whole workgroup, so the tree's barriers may
    // sit inside; a team past the last piece folds nothing and writes nothing.
    g.for_range(first, units, step, |g, base| {
        let unit = g.b.i_add(u64t, None, base, tm).ie()?;
        let active = g.b.u_less_than(bt, None, unit, units).ie()?;
        let z = g.c_u64(0);
        let unit = g.b.select(u64t, None, active, unit, z).ie()?;
        let row = g.b.u_div(u64t, None, unit, parts).ie()?;
        let part = g.b.u_mod(u64t, None, unit, parts).ie()?;
        // The piece: [plo, phi) of the row, empty for an idle team.
        let (plo, phi) = g.split_range(len, parts, part)?;
        let plen = g.b.i_sub(u64t, None, phi, plo).ie()?;
        let plen = g.b.select(u64t, None, active, plen, z).ie()?;
        for (&(v, _, _), &(x, _)) in accs.iter().zip(&neutral) {
            g.store(v, x)?;
        }
        let mut row_views = Vec::with_capacity(ins.len());
        for v in &ins {
            let ((_, s0), (_, s1)) = (v.dims[0], v.dims[1]);
            let m = g.b.i_mul(u64t, None, row, s0).ie()?;
            let off = g.b.i_add(u64t, None, v.off, m).ie()?;
            let m = g.b.i_mul(u64t, None, plo, s1).ie()?;
            let off = g.b.i_add(u64t, None, off, m).ie()?;
            row_views.push(View {
                bi: v.bi,
                elem: v.elem,
                off,
                dims: vec![(plen, s1)],
            });
        }
        // Contiguous runs: lane l folds [l·c, (l+1)·c) of the piece with c = ⌈plen / team⌉.
        let run = |g: &mut Gen| g.split_range(plen, team, lane);
        if strided {
            fold_batched(
                &mut k, g, op, &row_views, &accs, lane, plen, team, None, loc,
            )?;
        } else {
            let (lo, hi) = run(g)?;
            fold_range(&mut k, g, op, &row_views, &accs, lo, hi, None, loc)?;
        }
        for (&(v, rt, t), &(arr, wt, _, _)) in accs.iter().zip(&shared) {
            let x = g.load(rt, v)?;
            let w = g.reg_to_word(t, x)?;
            let p = g.shared_ptr(arr, wt, lid)?;
            g.store(p, w)?;
        }
        g.control_barrier()?;
        team_tree(&mut k, g, op, &shared, lid, team32, scan, loc)?;
        let z32 = g.c_u32(0);
        let lane32 = g.b.u_convert(u32t, None, lane).ie()?;
        if scan {
            // Lane l's run again, from the inclusive scan of the runs before it.
            let gt0 = g.b.u_greater_than(bt, None, lane32, z32).ie()?;
            for (&(v, _, _), &(x, _)) in accs.iter().zip(&neutral) {
                g.store(v, x)?;
            }
            g.if_then(gt0, |g| {
                let one32 = g.c_u32(1);
                let prev = g.b.i_sub(u32t, None, lid, one32).ie()?;
                for (&(v, _, t), &(arr, wt, _, _)) in accs.iter().zip(&shared) {
                    let p = g.shared_ptr(arr, wt, prev)?;
                    let w = g.load(wt, p)?;
                    let x = g.word_to_reg(t, w)?;
                    g.store(v, x)?;
                }
                Ok(())
            })?;
            // (Scans have one piece per row: the row starts at element row·len.)
            let mut out_rows = Vec::with_capacity(outs.len());
            for o in &outs {
                let m = g.b.i_mul(u64t, None, row, len).ie()?;
                let off = g.b.i_add(u64t, None, o.off, m).ie()?;
                out_rows.push(View {
                    bi: o.bi,
                    elem: o.elem,
                    off,
                    dims: vec![(plen, one)],
                });
            }
            let (lo, hi) = run(g)?;
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
            let is0 = g.b.i_equal(bt, None, lane32, z32).ie()?;
            let write = g.b.logical_and(bt, None, is0, active).ie()?;
            g.if_then(write, |g| {
                for (&(arr, wt, t, _), o) in shared.iter().zip(&outs) {
                    let p = g.shared_ptr(arr, wt, lead)?;
                    let w = g.load(wt, p)?;
                    let x = g.word_to_reg(t, w)?;
                    let idx = g.b.i_add(u64t, None, o.off, unit).ie()?;
                    g.store_elem(o.bi, t, idx, x)?;
                }
                Ok(())
            })?;
        }
        // The next pieces' partials overwrite the shared arrays.
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

#[cfg(test)]
mod tests {
    use super::{strategy, Strategy};
    use crate::codegen::gen::WG;

    fn teams(team: u32, parts: u32) -> Strategy {
        Strategy::Teams { team, parts }
    }

    #[test]
    fn rows_get_a_thread_a_team_a_workgroup_or_several_workgroups_by_their_sizes() {
        for gpu in [false, true] {
            let many = if gpu { 8192 } else { 64 };
            // Nothing to do, very short rows, or enough rows for a thread each.
            assert_eq!(strategy(0, 1000, false, gpu), Strategy::Thread);
            assert_eq!(strategy(10, 0, false, gpu), Strategy::Thread);
            assert_eq!(strategy(10, 8, false, gpu), Strategy::Thread);
            assert_eq!(strategy(many, 5000, false, gpu), Strategy::Thread);
            // Teams of about len / 4 threads, a power of two.
            assert_eq!(strategy(10, 9, false, gpu), teams(4, 1));
            assert_eq!(strategy(10, 60, true, gpu), teams(16, 1));
            assert_eq!(strategy(10, 65, false, gpu), teams(32, 1));
            assert_eq!(strategy(many - 1, 1024, false, gpu), teams(WG, 1));
            // Scans are never cut into pieces.
            assert_eq!(strategy(1, 1 << 20, true, gpu), teams(WG, 1));
        }
        // A few long rows: pieces enough to fill the device, each thread folding at least 8
        // elements of its piece.
        let wg = WG as usize;
        assert_eq!(strategy(1, 200_000, false, true), teams(WG, 97));
        assert_eq!(strategy(1, 1 << 24, false, true), teams(WG, WG));
        assert_eq!(strategy(3, 40 * wg, false, true), teams(WG, 5));
        assert_eq!(strategy(1, 1 << 20, false, false), teams(WG, 8));
        assert_eq!(strategy(3, 1 << 20, false, false), teams(WG, 3));
        assert_eq!(strategy(3, 16 * wg - 1, false, false), teams(WG, 1));
        // Rows past half of lavapipe's loop limit get whole workgroups there, however many
        // (64 rows: enough for a thread each otherwise).
        assert_eq!(strategy(100, 40_000, false, false), teams(WG, 1));
        assert_eq!(strategy(64, 40_000, true, false), teams(WG, 1));
        assert_eq!(strategy(64, 30_000, true, false), Strategy::Thread);
    }
}
