//! Reduce and scan over arrays of arrays (`[n][m]t`, deeper, or tuples of them) with an
//! arbitrary associative operator: each pass is a `map` kernel (`codegen::map::map_kernel_on`) whose
//! lambda is the operator, applied to pairs of rows.
//!
//! - Reduce: a tree of ⌈log₂ n⌉ passes; each gathers the even and the odd rows (strided copies)
//!   and combines row 2i with row 2i+1 (an odd last row is carried over), so the order of the
//!   operands is kept (the operator need not be commutative).
//! - Scan: Hillis–Steele, ⌈log₂ n⌉ passes; pass d computes `new[i] = op(cur[i-d], cur[i])` for
//!   i ≥ d (both operands are contiguous views of `cur`) and copies `cur[0..d]`.
//!
//! The pass kernels read their rows and their size through fresh host names bound for the
//! launch (ids at the top of the `u32` range, never used by lowered programs).

use super::{PrimKernel, PrimStep};
use crate::codegen;
use crate::error::Error;
use crate::exec::map_scratch::uses_scratch;
use crate::exec::{DArr, Exec, HVal, E};
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, SubExp};
use vkad_core::prim::PrimValue;
use vkad_vk::Buffer;

/// A host name for the pass kernels' inputs.
fn fresh(id: u32, base: &str) -> ir::VName {
    ir::VName {
        id: u32::MAX - id,
        base: Arc::from(base),
    }
}

/// The host names a pass kernel of an operator on `k`-tuples of rows reads: the number of
/// rows, then the `k` left and the `k` right operands (the operator's parameters, in order).
pub(crate) fn pass_names(k: usize) -> (ir::VName, Vec<ir::VName>) {
    let wname = fresh(0, "pass_rows");
    let xs = (0..k).map(|i| fresh(1 + i as u32, "x"));
    let ys = (0..k).map(|i| fresh(1 + (k + i) as u32, "y"));
    (wname, xs.chain(ys).collect())
}

impl<'a> Exec<'a> {
    /// Reduce (`scan` false) or scan of the arrays `arrs` (each `[n]` of rows) with `op`.
    pub(super) fn row_pairs(
        &mut self,
        p: &'a PrimStep,
        w: &SubExp,
        arrs: &'a [ir::VName],
        op: &'a ir::Operator,
        scan: bool,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<HVal>> {
        let what = if scan {
            "a scan over arrays of arrays with this operator"
        } else {
            "a reduction over arrays of arrays with this operator"
        };
        let n = self.size(w, loc)?;
        let k = arrs.len();
        if op.lam.params.len() != 2 * k || op.lam.ret.len() != k {
            return Err(Error::unsupported(what, loc));
        }
        let mut cur = Vec::with_capacity(k);
        for a in arrs {
            let d = self.arr(a, loc)?;
            if d.shape.is_empty() || d.shape[0] != n {
                return Err(Error::unsupported(what, loc));
            }
            cur.push(d);
        }
        if n == 0 {
            if scan {
                return cur
                    .iter()
                    .map(|d| self.alloc(d.elem, d.shape.clone()).map(HVal::A))
                    .collect();
            }
            return op.neutral.iter().map(|ne| self.val(ne, loc)).collect();
        }
        let (wname, names) = pass_names(k);
        let r = if scan {
            self.hillis_steele(p, &wname, &names, op, cur, loc)
        } else {
            self.tree(p, &wname, &names, op, cur, loc)
        };
        self.env.remove(&wname.id);
        for v in &names {
            self.env.remove(&v.id);
        }
        let res = r?;
        if scan {
            Ok(res.into_iter().map(HVal::A).collect())
        } else {
            res.into_iter()
                .map(|d| {
                    let shape = d.shape[1..].to_vec();
                    let row = DArr { shape, ..d };
                    Ok(HVal::A(self.copy(&row, loc)?))
                })
                .collect()
        }
    }

    #[allow(clippy::too_many_arguments)] // the pass's primitive, names and sizes
    /// One pass: `op` applied to row i of the `x` and `y` views bound in `names`, for `rows`
    /// rows; returns fresh `[rows]` arrays.
    fn pair_pass(
        &mut self,
        p: &'a PrimStep,
        kind: PrimKernel,
        wname: &ir::VName,
        names: &[ir::VName],
        op: &'a ir::Operator,
        rows: usize,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<DArr>> {
        self.env
            .insert(wname.id, HVal::P(PrimValue::I64(rows as i64)));
        let mut outs = Vec::with_capacity(op.lam.ret.len());
        for t in &op.lam.ret {
            let e = t.elem().ok_or_else(|| {
                Error::unsupported("an operator over arrays returning accumulators", loc)
            })?;
            let mut shape = vec![rows];
            for d in t.shape() {
                shape.push(self.size(d, loc)?);
            }
            outs.push(self.alloc(e, shape)?);
        }
        let prog = self.prog;
        let lavapipe = self.is_lavapipe();
        let wsub = SubExp::Var(wname.clone());
        let sig: Vec<&ir::VName> = names.iter().collect();
        let lam = &op.lam;
        let code = self.prim_kernel(p, kind, &sig, |_, ht| {
            codegen::map::map_kernel_on(prog, &wsub, names, lam, loc, ht, lavapipe)
        })?;
        let bufs: Vec<Arc<Buffer>> = outs.iter().map(|o| o.buf.clone()).collect();
        if uses_scratch(&code) {
            let key = crate::exec::map_scratch::ScratchKey::Prim(p.id, kind);
            self.launch_map_scratch(&code, key, &lam.body.stms, rows, &bufs, &[], loc)?;
        } else {
            let r = self.launch(&code, &[], &bufs, &[], Self::groups_for(rows), loc);
            r?;
        }
        Ok(outs)
    }

    /// Rows `[from, from + len)` of `d` with stride `step` as a fresh contiguous array.
    fn gather_rows(
        &mut self,
        d: &DArr,
        from: usize,
        step: usize,
        len: usize,
        loc: &Option<SrcLoc>,
    ) -> E<DArr> {
        let row: usize = d.shape[1..].iter().product();
        let mut shape = d.shape.clone();
        shape[0] = len;
        let out = self.alloc(d.elem, shape)?;
        if len > 0 && row > 0 {
            self.strided(
                Some(&d.buf),
                (d.off + from * row) as i64,
                0,
                &out.buf,
                d.elem,
                0,
                &[(len, (step * row) as i64, row as i64), (row, 1, 1)],
                loc,
            )?;
        }
        Ok(out)
    }

    /// Copies all rows of `src` into `dst` from row `at`.
    fn put_rows(&mut self, src: &DArr, dst: &DArr, at: usize, loc: &Option<SrcLoc>) -> E<()> {
        let row: usize = dst.shape[1..].iter().product();
        let total = src.shape[0] * row;
        if total == 0 {
            return Ok(());
        }
        self.strided(
            Some(&src.buf),
            src.off as i64,
            0,
            &dst.buf,
            dst.elem,
            (dst.off + at * row) as i64,
            &[(total, 1, 1)],
            loc,
        )
    }

    fn tree(
        &mut self,
        p: &'a PrimStep,
        wname: &ir::VName,
        names: &[ir::VName],
        op: &'a ir::Operator,
        mut cur: Vec<DArr>,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<DArr>> {
        let k = cur.len();
        let mut len = cur[0].shape[0];
        while len > 1 {
            let h = len / 2;
            for (i, d) in cur.iter().enumerate() {
                let x = self.gather_rows(d, 0, 2, h, loc)?;
                let y = self.gather_rows(d, 1, 2, h, loc)?;
                self.env.insert(names[i].id, HVal::A(x));
                self.env.insert(names[k + i].id, HVal::A(y));
            }
            let outs = self.pair_pass(
                p,
                PrimKernel::RowPairs { scan: false },
                wname,
                names,
                op,
                h,
                loc,
            )?;
            let next = if len % 2 == 1 {
                let mut next = Vec::with_capacity(k);
                for (o, d) in outs.iter().zip(&cur) {
                    let mut shape = o.shape.clone();
                    shape[0] = h + 1;
                    let t = self.alloc(o.elem, shape)?;
                    self.put_rows(o, &t, 0, loc)?;
                    let last = self.gather_rows(d, len - 1, 1, 1, loc)?;
                    self.put_rows(&last, &t, h, loc)?;
                    next.push(t);
                }
                next
            } else {
                outs
            };
            cur = next;
            len = len.div_ceil(2);
        }
        Ok(cur)
    }

    fn hillis_steele(
        &mut self,
        p: &'a PrimStep,
        wname: &ir::VName,
        names: &[ir::VName],
        op: &'a ir::Operator,
        cur: Vec<DArr>,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<DArr>> {
        let k = cur.len();
        let n = cur[0].shape[0];
        // Results are fresh arrays (the inputs may be shared).
        let mut cur: Vec<DArr> = cur.iter().map(|d| self.copy(d, loc)).collect::<E<_>>()?;
        let mut d = 1;
        while d < n {
            for (i, a) in cur.iter().enumerate() {
                let row: usize = a.shape[1..].iter().product();
                let mut shape = a.shape.clone();
                shape[0] = n - d;
                let x = DArr {
                    buf: a.buf.clone(),
                    elem: a.elem,
                    shape: shape.clone(),
                    off: a.off,
                };
                let y = DArr {
                    buf: a.buf.clone(),
                    elem: a.elem,
                    shape,
                    off: a.off + d * row,
                };
                self.env.insert(names[i].id, HVal::A(x));
                self.env.insert(names[k + i].id, HVal::A(y));
            }
            let outs = self.pair_pass(
                p,
                PrimKernel::RowPairs { scan: true },
                wname,
                names,
                op,
                n - d,
                loc,
            )?;
            let mut next = Vec::with_capacity(k);
            for (o, a) in outs.iter().zip(&cur) {
                let mut shape = o.shape.clone();
                shape[0] = n;
                let t = self.alloc(o.elem, shape)?;
                let head = self.gather_rows(a, 0, 1, d, loc)?;
                self.put_rows(&head, &t, 0, loc)?;
                self.put_rows(o, &t, d, loc)?;
                next.push(t);
            }
            for v in names {
                self.env.remove(&v.id);
            }
            cur = next;
            d *= 2;
        }
        Ok(cur)
    }
}
