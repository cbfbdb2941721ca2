//! Reductions and inclusive scans over `[n][m]` arrays with a vectorised operator (`map f` of a
//! scalar `f`, e.g. `reduce (map2 (+))`): one thread per column.

use crate::codegen::gen::{Gen, Ie, R};
use crate::codegen::layout::{ArgSrc, BindSrc, HostTy, KernelCode};
use crate::codegen::thread::{KCtx, KVal};
use crate::error::Error;
use std::collections::HashMap;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Exp, Lambda, Program, Soac, VName};
use vkad_core::prim::PrimType;

/// The scalar operator inside a vectorised operator `\accs elems -> map f ...`: for each map
/// input, which operator parameter (accumulator `k` or element `k`, as index into the
/// operator's parameters) it is; and for each operator result, which map result it is.
pub struct VecOp<'p> {
    pub inner: &'p Lambda,
    pub inputs: Vec<usize>,
    pub results: Vec<usize>,
}

/// Recognises `\xs ys -> map f (params...)` (with size coercions of the parameters allowed
/// before the `map`).
pub fn vectorised_op(op: &vkad_core::ir::Operator) -> Option<VecOp<'_>> {
    let params = &op.lam.params;
    let mut alias: HashMap<u32, usize> = params
        .iter()
        .enumerate()
        .map(|(k, p)| (p.name.id, k))
        .collect();
    let mut map = None;
    for stm in &op.lam.body.stms {
        match &stm.exp {
            Exp::Reshape(_, v) if stm.pat.elems.len() == 1 => {
                let k = *alias.get(&v.id)?;
                alias.insert(stm.pat.elems[0].name.id, k);
            }
            Exp::Soac(Soac::Map { arrs, lam, .. }) if map.is_none() => {
                if lam.ret.iter().any(|t| t.rank() != 0) {
                    return None;
                }
                let inputs = arrs
                    .iter()
                    .map(|a| alias.get(&a.id).copied())
                    .collect::<Option<Vec<_>>>()?;
                map = Some((stm, lam, inputs));
            }
            _ => return None,
        }
    }
    let (stm, inner, inputs) = map?;
    let results = op
        .lam
        .body
        .result
        .iter()
        .map(|r| {
            let v = r.as_var()?;
            stm.pat.elems.iter().position(|p| p.name == *v)
        })
        .collect::<Option<Vec<_>>>()?;
    Some(VecOp {
        inner,
        inputs,
        results,
    })
}

/// A reduction or inclusive scan over `[n][m]` arrays with a vectorised operator: one thread
/// per column `j < m` folds (or scans) `arrs[.][j]` in order. Literals: 0 = n, 1 = m.
/// Outputs: `[m]` (reduce) or `[n][m]` (scan) arrays.
#[allow(clippy::too_many_arguments)]
pub fn column_kernel<'p>(
    prog: &'p Program,
    op: &'p vkad_core::ir::Operator,
    vop: &VecOp<'p>,
    arrs: &[VName],
    elems: &[PrimType],
    scan: bool,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, host_types);
    let n = k.arg(&mut g, ArgSrc::Lit(0), PrimType::I64)?;
    let m = k.arg(&mut g, ArgSrc::Lit(1), PrimType::I64)?;
    // Rows [r0, n) in this launch; when r0 > 0 the fold continues from the outputs.
    let r0 = k.arg(&mut g, ArgSrc::Lit(2), PrimType::I64)?;
    let mut ins = Vec::new();
    for a in arrs {
        ins.push(k.var(&mut g, a, loc)?);
    }
    let mut neutral = Vec::new();
    for ne in &op.neutral {
        neutral.push(k.sub(&mut g, ne, loc)?);
    }
    let mut outs = Vec::new();
    for (j, &t) in elems.iter().enumerate() {
        outs.push(g.binding(crate::codegen::gen::word_kind(t)));
        k.binds.push(BindSrc::Out(j));
    }
    let u64t = g.t_u64();
    let bt = g.t_bool();
    let nk = elems.len();
    let gid = g.global_id()?;
    let gid = g.b.u_convert(u64t, None, gid).ie()?;
    let ng = g.num_groups()?;
    let ng = g.b.u_convert(u64t, None, ng).ie()?;
    let wg = g.c_u64(crate::codegen::gen::WG as u64);
    let total = g.b.i_mul(u64t, None, ng, wg).ie()?;
    let jv = g.var(u64t);
    g.store(jv, gid)?;
    let st = g.begin_loop()?;
    let j = g.load(u64t, jv)?;
    let c = g.b.u_less_than(bt, None, j, m).ie()?;
    g.loop_cond(st, c)?;
    let j = g.load(u64t, jv)?;
    let mut accs = Vec::new();
    let z = g.c_u64(0);
    let first = g.b.i_equal(bt, None, r0, z).ie()?;
    // Continuing: the previous value is out[j] (reduce) or out[(r0-1)*m + j] (scan).
    let one = g.c_u64(1);
    let prev_row = g.b.i_sub(u64t, None, r0, one).ie()?;
    let pm = g.b.i_mul(u64t, None, prev_row, m).ie()?;
    let prev_at = if scan {
        g.b.i_add(u64t, None, pm, j).ie()?
    } else {
        j
    };
    let safe_prev = g.b.select(u64t, None, first, z, prev_at).ie()?;
    for ((ne, &t), &bi) in neutral.iter().zip(elems).zip(&outs) {
        let x = match k.row_of(&mut g, ne, j, loc)? {
            KVal::S(x, _) => x,
            _ => {
                return Err(Error::unsupported(
                    "a vectorised operator on nested arrays",
                    loc,
                ))
            }
        };
        let prev = g.load_elem(bi, t, safe_prev)?;
        let rt = g.reg_ty(t);
        let x = g.b.select(rt, None, first, x, prev).ie()?;
        let v = g.var(rt);
        g.store(v, x)?;
        accs.push((v, rt, t));
    }
    let iv = g.var(u64t);
    g.store(iv, r0)?;
    let ls = g.begin_loop()?;
    let i = g.load(u64t, iv)?;
    let c = g.b.u_less_than(bt, None, i, n).ie()?;
    g.loop_cond(ls, c)?;
    let i = g.load(u64t, iv)?;
    let mut params = Vec::with_capacity(2 * nk);
    for &(v, rt, t) in &accs {
        params.push(KVal::S(g.load(rt, v)?, t));
    }
    for x in &ins {
        let row = k.row_of(&mut g, x, i, loc)?;
        params.push(k.row_of(&mut g, &row, j, loc)?);
    }
    let args: Vec<KVal> = vop.inputs.iter().map(|&p| params[p].clone()).collect();
    let r = k.lambda(&mut g, vop.inner, args, loc)?;
    for (&(v, _, _), &ri) in accs.iter().zip(&vop.results) {
        match r.get(ri) {
            Some(KVal::S(x, _)) => g.store(v, *x)?,
            _ => return Err(Error::bug("vectorised operator result")),
        }
    }
    if scan {
        let im = g.b.i_mul(u64t, None, i, m).ie()?;
        let at = g.b.i_add(u64t, None, im, j).ie()?;
        for (&(v, rt, t), &bi) in accs.iter().zip(&outs) {
            let x = g.load(rt, v)?;
            g.store_elem(bi, t, at, x)?;
        }
    }
    let one = g.c_u64(1);
    let i1 = g.b.i_add(u64t, None, i, one).ie()?;
    g.store(iv, i1)?;
    g.end_loop(ls)?;
    if !scan {
        for (&(v, rt, t), &bi) in accs.iter().zip(&outs) {
            let x = g.load(rt, v)?;
            g.store_elem(bi, t, j, x)?;
        }
    }
    let j1 = g.b.i_add(u64t, None, j, total).ie()?;
    g.store(jv, j1)?;
    g.end_loop(st)?;
    crate::codegen::thread::finish(g, k)
}
