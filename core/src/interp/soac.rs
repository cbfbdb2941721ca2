//! SOACs (map, reduce, scan, hist, scatter) and accumulators (withacc, upd).
//!
//! Map lambdas run in place in the register file: each iteration binds the parameters to rows
//! (scalars or views, never copies), runs the body and appends the results to preallocated
//! output buffers. Reductions and scans whose operator is a single binary operation of its two
//! parameters run as typed loops over the flat buffer.

use super::eval::{binop, err, AccState, Interp, R};
use super::scalar::ScalarProg;
use super::val::{copy_range, shape_str, Arr, Builder, Val};
use crate::diag::SrcLoc;
use crate::ir::{AccInput, BinOp, Exp, Lambda, Operator, Soac, SubExp, Type, VName};
use crate::prim::PrimValue;
use crate::value::Buffer;

/// If `lam` is `\a b -> a op b`, the operator.
fn simple_binop(lam: &Lambda) -> Option<BinOp> {
    let [a, b] = lam.params.as_slice() else {
        return None;
    };
    let [stm] = lam.body.stms.as_slice() else {
        return None;
    };
    let [r] = stm.pat.elems.as_slice() else {
        return None;
    };
    match (&stm.exp, lam.body.result.as_slice()) {
        (Exp::BinOp(op, SubExp::Var(x), SubExp::Var(y)), [SubExp::Var(res)])
            if x == &a.name && y == &b.name && res == &r.name =>
        {
            Some(*op)
        }
        _ => None,
    }
}

/// Left fold of `op` over `buf[off..off+len]` starting from `ne`, as a typed loop where possible.
fn fold_fast(
    op: BinOp,
    ne: PrimValue,
    buf: &Buffer,
    off: usize,
    len: usize,
    loc: &Option<SrcLoc>,
) -> R<PrimValue> {
    use BinOp::*;
    use PrimValue as P;
    macro_rules! fold {
        ($v:expr, $z:expr, $f:expr) => {
            match $v.get(off..off + len) {
                Some(s) => s.iter().fold($z, |a, &b| $f(a, b)),
                None => return err("internal error: reduction range out of bounds", loc),
            }
        };
    }
    Ok(match (op, ne, buf) {
        (Add(_), P::I64(z), Buffer::I64(v)) => P::I64(fold!(v, z, i64::wrapping_add)),
        (Mul(_), P::I64(z), Buffer::I64(v)) => P::I64(fold!(v, z, i64::wrapping_mul)),
        (Min(_), P::I64(z), Buffer::I64(v)) => P::I64(fold!(v, z, i64::min)),
        (Max(_), P::I64(z), Buffer::I64(v)) => P::I64(fold!(v, z, i64::max)),
        (Add(_), P::I32(z), Buffer::I32(v)) => P::I32(fold!(v, z, i32::wrapping_add)),
        (Mul(_), P::I32(z), Buffer::I32(v)) => P::I32(fold!(v, z, i32::wrapping_mul)),
        (Min(_), P::I32(z), Buffer::I32(v)) => P::I32(fold!(v, z, i32::min)),
        (Max(_), P::I32(z), Buffer::I32(v)) => P::I32(fold!(v, z, i32::max)),
        (Add(_), P::F64(z), Buffer::F64(v)) => P::F64(fold!(v, z, |a: f64, b: f64| a + b)),
        (Mul(_), P::F64(z), Buffer::F64(v)) => P::F64(fold!(v, z, |a: f64, b: f64| a * b)),
        (Min(_), P::F64(z), Buffer::F64(v)) => P::F64(fold!(v, z, f64::min)),
        (Max(_), P::F64(z), Buffer::F64(v)) => P::F64(fold!(v, z, f64::max)),
        (Add(_), P::F32(z), Buffer::F32(v)) => P::F32(fold!(v, z, |a: f32, b: f32| a + b)),
        (Mul(_), P::F32(z), Buffer::F32(v)) => P::F32(fold!(v, z, |a: f32, b: f32| a * b)),
        (Min(_), P::F32(z), Buffer::F32(v)) => P::F32(fold!(v, z, f32::min)),
        (Max(_), P::F32(z), Buffer::F32(v)) => P::F32(fold!(v, z, f32::max)),
        (LogAnd, P::Bool(z), Buffer::Bool(v)) => P::Bool(fold!(v, z, |a: bool, b: bool| a && b)),
        (LogOr, P::Bool(z), Buffer::Bool(v)) => P::Bool(fold!(v, z, |a: bool, b: bool| a || b)),
        _ => {
            let mut acc = ne;
            for i in off..off + len {
                match buf.get(i) {
                    Some(x) => acc = binop(op, acc, x, loc)?,
                    None => return err("internal error: reduction range out of bounds", loc),
                }
            }
            acc
        }
    })
}

/// Inclusive scan of `op` over `buf[off..off+len]` starting from `ne`.
fn scan_fast(
    op: BinOp,
    ne: PrimValue,
    buf: &Buffer,
    off: usize,
    len: usize,
    loc: &Option<SrcLoc>,
) -> R<Buffer> {
    use BinOp::*;
    use PrimValue as P;
    macro_rules! scan {
        ($v:expr, $z:expr, $f:expr) => {
            match $v.get(off..off + len) {
                Some(s) => {
                    let mut acc = $z;
                    s.iter()
                        .map(|&b| {
                            acc = $f(acc, b);
                            acc
                        })
                        .collect()
                }
                None => return err("internal error: scan range out of bounds", loc),
            }
        };
    }
    Ok(match (op, ne, buf) {
        (Add(_), P::I64(z), Buffer::I64(v)) => Buffer::I64(scan!(v, z, i64::wrapping_add)),
        (Add(_), P::I32(z), Buffer::I32(v)) => Buffer::I32(scan!(v, z, i32::wrapping_add)),
        (Add(_), P::F64(z), Buffer::F64(v)) => Buffer::F64(scan!(v, z, |a: f64, b: f64| a + b)),
        (Add(_), P::F32(z), Buffer::F32(v)) => Buffer::F32(scan!(v, z, |a: f32, b: f32| a + b)),
        (Mul(_), P::F64(z), Buffer::F64(v)) => Buffer::F64(scan!(v, z, |a: f64, b: f64| a * b)),
        (Max(_), P::I64(z), Buffer::I64(v)) => Buffer::I64(scan!(v, z, i64::max)),
        (Min(_), P::I64(z), Buffer::I64(v)) => Buffer::I64(scan!(v, z, i64::min)),
        _ => {
            let mut out = Buffer::with_capacity(ne.prim_type(), len);
            let mut acc = ne;
            for i in off..off + len {
                match buf.get(i) {
                    Some(x) => acc = binop(op, acc, x, loc)?,
                    None => return err("internal error: scan range out of bounds", loc),
                }
                if !out.push(acc) {
                    return err("internal error: scan result of the wrong type", loc);
                }
            }
            out
        }
    })
}

/// A row that does not share storage with its array (so the array can be updated in place).
fn detached(v: Val) -> Val {
    match v {
        Val::Arr(a) => Val::Arr(Arr::from_buffer(a.to_buffer(), a.shape.clone())),
        v => v,
    }
}

/// Writes row value `v` at element offset `rel` (relative to the view) of `a`; `row` is the
/// expected row shape.
fn write_row(a: &mut Arr, rel: usize, row: &[usize], v: &Val, loc: &Option<SrcLoc>) -> R<()> {
    let ok = match v {
        Val::Prim(p) if row.is_empty() => {
            let (b, at) = a.make_unique_at(rel as isize);
            b.set(at as usize, *p)
        }
        Val::Arr(src) if src.shape == row => {
            let n = src.len();
            let (b, at) = a.make_unique_at(rel as isize);
            copy_range(b, at as usize, &src.data, src.off, n)
        }
        other => {
            return err(
                format!(
                    "cannot write a value of type {} into a row of shape {}",
                    other.type_name(),
                    shape_str(row)
                ),
                loc,
            )
        }
    };
    if ok {
        Ok(())
    } else {
        err("internal error: element type mismatch in a write", loc)
    }
}

impl<'p> Interp<'p> {
    /// The arrays of a SOAC, checking that each has outer size `w` (accumulators pass through).
    fn soac_inputs(
        &self,
        arrs: &[VName],
        w: usize,
        what: &str,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let mut out = Vec::with_capacity(arrs.len());
        for a in arrs {
            let v = self.get(a, loc)?.clone();
            match &v {
                Val::Arr(x) if !x.shape.is_empty() && x.shape[0] == w => {}
                Val::Acc(_) if what == "map" => {}
                other => {
                    return err(
                        format!(
                            "{what}: input array of type {} does not have outer size {w}",
                            other.type_name()
                        ),
                        loc,
                    )
                }
            }
            out.push(v);
        }
        Ok(out)
    }

    pub fn take_dests(&mut self, dest: &[VName], loc: &Option<SrcLoc>) -> R<Vec<Arr>> {
        let mut out = Vec::with_capacity(dest.len());
        for d in dest {
            match self.take(d, loc)? {
                Val::Arr(a) if !a.shape.is_empty() => out.push(a),
                other => {
                    return err(
                        format!("internal error: destination is a {}", other.type_name()),
                        loc,
                    )
                }
            }
        }
        Ok(out)
    }

    fn neutral(&self, op: &Operator, k: usize, loc: &Option<SrcLoc>) -> R<Vec<Val>> {
        if op.neutral.len() != k || op.lam.params.len() != 2 * k {
            return err(
                "internal error: operator arity does not match its arrays",
                loc,
            );
        }
        op.neutral.iter().map(|n| self.val(n, loc)).collect()
    }

    pub fn soac(&mut self, s: &'p Soac, loc: &Option<SrcLoc>) -> R<Vec<Val>> {
        match s {
            Soac::Map { w, arrs, lam } => {
                let w = self.size(w, loc)?;
                let inputs = self.soac_inputs(arrs, w, "map", loc)?;
                self.map(w, &inputs, lam, loc)
            }
            Soac::Reduce { w, arrs, op } => {
                let w = self.size(w, loc)?;
                let inputs = self.soac_inputs(arrs, w, "reduce", loc)?;
                self.reduce(w, &inputs, op, loc)
            }
            Soac::Scan { w, arrs, op } => {
                let w = self.size(w, loc)?;
                let inputs = self.soac_inputs(arrs, w, "scan", loc)?;
                self.scan(w, &inputs, op, loc)
            }
            Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            } => {
                let w = self.size(w, loc)?;
                let inds_v =
                    self.soac_inputs(std::slice::from_ref(inds), w, "reduce_by_index", loc)?;
                let vals_v = self.soac_inputs(vals, w, "reduce_by_index", loc)?;
                let mut dests = self.take_dests(dest, loc)?;
                let inds_a = match inds_v.first() {
                    Some(Val::Arr(a)) => a.clone(),
                    _ => return err("internal error: reduce_by_index without indices", loc),
                };
                // An index is in range when it is for every destination.
                let width = dests.iter().map(|d| d.outer()).min().unwrap_or(0);
                self.hist_apply(&mut dests, (0, width), &inds_a, &vals_v, 0..w, op, loc)?;
                Ok(dests.into_iter().map(Val::Arr).collect())
            }
            Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            } => {
                let w = self.size(w, loc)?;
                let inds_v = self.soac_inputs(inds, w, "scatter", loc)?;
                let vals_v = self.soac_inputs(vals, w, "scatter", loc)?;
                let mut dests = self.take_dests(dest, loc)?;
                self.scatter_apply(&mut dests, &inds_v, &vals_v, w, loc)?;
                Ok(dests.into_iter().map(Val::Arr).collect())
            }
        }
    }

    /// `reduce op ne inputs` over `w` rows of `inputs` (arrays of outer size `w`): a left fold
    /// from the neutral elements.
    pub fn reduce(
        &mut self,
        w: usize,
        inputs: &[Val],
        op: &'p Operator,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let ne = self.neutral(op, inputs.len(), loc)?;
        if let (Some(bop), [Val::Arr(a)], [Val::Prim(z)]) =
            (simple_binop(&op.lam), inputs, ne.as_slice())
        {
            if a.shape.len() == 1 {
                return Ok(vec![Val::Prim(fold_fast(bop, *z, &a.data, a.off, w, loc)?)]);
            }
        }
        if let Some((acc, _)) = self.reduce_scalar(w, inputs, &ne, op, false)? {
            return Ok(acc.into_iter().map(Val::Prim).collect());
        }
        let mut acc = ne;
        for i in 0..w {
            let mut args = acc;
            args.extend(inputs.iter().map(|a| row_of(a, i)));
            acc = self.call_lambda(&op.lam, args, loc)?;
        }
        Ok(acc)
    }

    /// The inclusive `scan op ne inputs` over `w` rows of `inputs`.
    pub fn scan(
        &mut self,
        w: usize,
        inputs: &[Val],
        op: &'p Operator,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let ne = self.neutral(op, inputs.len(), loc)?;
        if let (Some(bop), [Val::Arr(a)], [Val::Prim(z)]) =
            (simple_binop(&op.lam), inputs, ne.as_slice())
        {
            if a.shape.len() == 1 {
                let buf = scan_fast(bop, *z, &a.data, a.off, w, loc)?;
                return Ok(vec![Val::Arr(Arr::from_buffer(buf, vec![w]))]);
            }
        }
        if let Some((_, bufs)) = self.reduce_scalar(w, inputs, &ne, op, true)? {
            return Ok(bufs
                .into_iter()
                .map(|b| Val::Arr(Arr::from_buffer(b, vec![w])))
                .collect());
        }
        let mut builders = Vec::with_capacity(ne.len());
        for (k, n) in ne.iter().enumerate() {
            let elem = match op.lam.ret.get(k).and_then(|t| t.elem()) {
                Some(e) => e,
                None => n
                    .to_value()
                    .map(|v| v.elem_type())
                    .unwrap_or(crate::prim::PrimType::Bool),
            };
            builders.push(Builder::new(elem, w));
        }
        let mut acc = ne.clone();
        for i in 0..w {
            let mut args = acc;
            args.extend(inputs.iter().map(|a| row_of(a, i)));
            acc = self.call_lambda(&op.lam, args, loc)?;
            for (b, v) in builders.iter_mut().zip(&acc) {
                b.push(v)
                    .map_err(|m| super::RuntimeError::new(m, loc.clone()))?;
            }
        }
        Ok(builders
            .into_iter()
            .zip(&ne)
            .map(|(b, n)| Val::Arr(b.finish(n.shape().to_vec())))
            .collect())
    }

    /// The updates of a `reduce_by_index`: for each `j` in `js` in order, the values `vals[j]`
    /// are combined with `op` into bin `start + inds[j]` (a row of each destination) when
    /// `0 <= inds[j] < width`, where `(start, width) = bins`; other indices are ignored.
    #[allow(clippy::too_many_arguments)]
    pub fn hist_apply(
        &mut self,
        dests: &mut [Arr],
        bins: (usize, usize),
        inds: &Arr,
        vals: &[Val],
        js: std::ops::Range<usize>,
        op: &'p Operator,
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        self.neutral(op, dests.len(), loc)?;
        if vals.len() != dests.len() {
            return err(
                "internal error: reduce_by_index with different numbers of arrays and values",
                loc,
            );
        }
        let (start, width) = bins;
        let fast = match (simple_binop(&op.lam), &*dests, vals) {
            (Some(bop), [d], [Val::Arr(v)]) if d.shape.len() == 1 && v.shape.len() == 1 => {
                Some(bop)
            }
            _ => None,
        };
        for j in js {
            let idx = inds
                .data
                .get(inds.off + j)
                .and_then(|p| p.as_i128())
                .unwrap_or(-1);
            // Out-of-range indices are ignored.
            if idx < 0 || idx >= width as i128 {
                continue;
            }
            let i = start + idx as usize;
            if let Some(bop) = fast {
                if let (Val::Prim(o), Val::Prim(x)) = (dests[0].row(i), row_of(&vals[0], j)) {
                    let r = binop(bop, o, x, loc)?;
                    write_row(&mut dests[0], i, &[], &Val::Prim(r), loc)?;
                    continue;
                }
            }
            let mut args: Vec<Val> = dests.iter().map(|d| detached(d.row(i))).collect();
            args.extend(vals.iter().map(|v| row_of(v, j)));
            let res = self.call_lambda(&op.lam, args, loc)?;
            for (d, r) in dests.iter_mut().zip(&res) {
                let rl = d.row_len();
                let row = d.shape[1..].to_vec();
                write_row(d, i * rl, &row, r, loc)?;
            }
        }
        Ok(())
    }

    /// The writes of a `scatter`: for each `j < w` in order, row `j` of each of `vals` is
    /// written at the index given by row `j` of `inds` (one array per index dimension) in the
    /// corresponding destination, unless the index is out of range.
    pub fn scatter_apply(
        &self,
        dests: &mut [Arr],
        inds: &[Val],
        vals: &[Val],
        w: usize,
        loc: &Option<SrcLoc>,
    ) -> R<()> {
        if vals.len() != dests.len() {
            return err(
                "internal error: scatter with different numbers of arrays and values",
                loc,
            );
        }
        let r = inds.len();
        let mut idx = vec![0i128; r];
        for j in 0..w {
            for (d, iv) in inds.iter().enumerate() {
                idx[d] = match iv {
                    Val::Arr(a) => a
                        .data
                        .get(a.off + j)
                        .and_then(|p| p.as_i128())
                        .unwrap_or(-1),
                    _ => -1,
                };
            }
            for (dst, v) in dests.iter_mut().zip(vals) {
                if dst.shape.len() < r {
                    return err(
                        "internal error: scatter with more indices than dimensions",
                        loc,
                    );
                }
                let mut rel: usize = 0;
                let mut inb = true;
                for (d, &i) in idx.iter().enumerate() {
                    let n = dst.shape[d];
                    if i < 0 || i >= n as i128 {
                        inb = false;
                        break;
                    }
                    rel = rel * n + i as usize;
                }
                if !inb {
                    continue;
                }
                let row = dst.shape[r..].to_vec();
                let rl: usize = row.iter().product();
                write_row(dst, rel * rl, &row, &row_of(v, j), loc)?;
            }
        }
        Ok(())
    }

    fn map(
        &mut self,
        w: usize,
        inputs: &[Val],
        lam: &'p Lambda,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        if inputs.len() != lam.params.len() {
            return err(
                format!(
                    "internal error: map lambda of {} parameters over {} arrays",
                    lam.params.len(),
                    inputs.len()
                ),
                loc,
            );
        }
        if lam.ret.len() != lam.body.result.len() {
            return err(
                "internal error: map lambda returns the wrong number of values",
                loc,
            );
        }
        if let Some(r) = self.map_scalar(w, inputs, lam)? {
            return Ok(r);
        }
        let mut builders: Vec<Option<Builder>> = lam
            .ret
            .iter()
            .map(|t| match t {
                Type::Acc { .. } => None,
                t => t.elem().map(|e| Builder::new(e, w)),
            })
            .collect();
        // Accumulator results: the accumulator passed in (updates happen in the shared state).
        let acc_in = inputs.iter().find_map(|v| match v {
            Val::Acc(k) => Some(*k),
            _ => None,
        });
        let mut acc_out: Vec<Option<Val>> = vec![None; lam.ret.len()];
        for i in 0..w {
            for (p, inp) in lam.params.iter().zip(inputs) {
                let v = row_of(inp, i);
                self.set(&p.name, v);
            }
            if let Err(e) = self.exec_stms(&lam.body.stms) {
                self.clear_body(&lam.body);
                return Err(e);
            }
            for ((b, se), ao) in builders
                .iter_mut()
                .zip(&lam.body.result)
                .zip(acc_out.iter_mut())
            {
                let r = match se {
                    SubExp::Const(c) => match b {
                        Some(b) => b.push(&Val::Prim(*c)),
                        None => Ok(()),
                    },
                    SubExp::Var(v) => {
                        let x = self.get(v, loc)?;
                        match b {
                            Some(b) => b.push(x),
                            None => {
                                *ao = Some(x.clone());
                                Ok(())
                            }
                        }
                    }
                };
                r.map_err(|m| super::RuntimeError::new(m, loc.clone()))?;
            }
            self.clear_body(&lam.body);
        }
        for p in &lam.params {
            self.clear(&p.name);
        }
        let mut out = Vec::with_capacity(builders.len());
        for ((b, t), ao) in builders.into_iter().zip(&lam.ret).zip(acc_out) {
            match b {
                Some(b) => {
                    let default_row = self.type_shape(t);
                    out.push(Val::Arr(b.finish(default_row)));
                }
                None => match ao.or(acc_in.map(Val::Acc)) {
                    Some(a) => out.push(a),
                    None => {
                        return err(
                            "internal error: map returns an accumulator it was not given",
                            loc,
                        )
                    }
                },
            }
        }
        Ok(out)
    }

    /// Compiles a scalar lambda, reading free variables from the environment.
    fn compile_scalar(&self, lam: &'p Lambda) -> Option<ScalarProg<'p>> {
        ScalarProg::compile(lam, |v| match self.env.get(v.id as usize) {
            Some(Val::Prim(p)) => Some(*p),
            _ => None,
        })
    }

    /// `map` of a scalar lambda over 1-D arrays, as a register program; `None` if not applicable.
    fn map_scalar(&mut self, w: usize, inputs: &[Val], lam: &'p Lambda) -> R<Option<Vec<Val>>> {
        let mut ins: Vec<&Arr> = Vec::with_capacity(inputs.len());
        for v in inputs {
            match v {
                Val::Arr(a) if a.shape.len() == 1 => ins.push(a),
                _ => return Ok(None),
            }
        }
        let Some(prog) = self.compile_scalar(lam) else {
            return Ok(None);
        };
        let mut bufs = Vec::with_capacity(lam.ret.len());
        for t in &lam.ret {
            match t.elem() {
                Some(e) => bufs.push(Buffer::with_capacity(e, w)),
                None => return Ok(None),
            }
        }
        let mut regs = prog.regs();
        // Column-wise in chunks; a chunk that fails anywhere is rerun element by element below,
        // which reports the first error in element order.
        const CHUNK: usize = 4096;
        let mut lo = 0;
        while lo < w {
            let hi = (lo + CHUNK).min(w);
            let cols = ins
                .iter()
                .map(|a| super::val::slice(&a.data, a.off + lo, a.off + hi))
                .collect();
            if prog.run_columns(cols, hi - lo, &mut bufs) {
                lo = hi;
                continue;
            }
            break;
        }
        for i in lo..w {
            for (k, a) in ins.iter().enumerate() {
                if let (Some(x), Some(r)) = (a.data.get(a.off + i), regs.get_mut(k)) {
                    *r = x;
                }
            }
            prog.run(&mut regs, |k, v| {
                if bufs.get_mut(k).is_some_and(|b| b.push(v)) {
                    Ok(())
                } else {
                    err(format!("internal error: map result of type {} does not match the lambda's type", v.prim_type()), &None)
                }
            })?;
        }
        Ok(Some(
            bufs.into_iter()
                .map(|b| Val::Arr(Arr::from_buffer(b, vec![w])))
                .collect(),
        ))
    }

    /// A reduction or scan with a scalar operator over 1-D arrays, as a register program.
    /// Returns the final accumulator and, for a scan, the result arrays.
    fn reduce_scalar(
        &mut self,
        w: usize,
        inputs: &[Val],
        ne: &[Val],
        op: &'p Operator,
        scan: bool,
    ) -> R<Option<(Vec<PrimValue>, Vec<Buffer>)>> {
        let k = inputs.len();
        let mut ins: Vec<&Arr> = Vec::with_capacity(k);
        for v in inputs {
            match v {
                Val::Arr(a) if a.shape.len() == 1 => ins.push(a),
                _ => return Ok(None),
            }
        }
        let mut acc = Vec::with_capacity(k);
        for n in ne {
            match n {
                Val::Prim(p) => acc.push(*p),
                _ => return Ok(None),
            }
        }
        let Some(prog) = self.compile_scalar(&op.lam) else {
            return Ok(None);
        };
        let mut bufs: Vec<Buffer> = if scan {
            acc.iter()
                .map(|a| Buffer::with_capacity(a.prim_type(), w))
                .collect()
        } else {
            vec![]
        };
        let mut regs = prog.regs();
        for i in 0..w {
            for (j, a) in acc.iter().enumerate() {
                if let Some(r) = regs.get_mut(j) {
                    *r = *a;
                }
            }
            for (j, a) in ins.iter().enumerate() {
                if let (Some(x), Some(r)) = (a.data.get(a.off + i), regs.get_mut(k + j)) {
                    *r = x;
                }
            }
            prog.run(&mut regs, |j, v| {
                if let Some(a) = acc.get_mut(j) {
                    *a = v;
                }
                if scan && !bufs.get_mut(j).is_some_and(|b| b.push(v)) {
                    return err("internal error: scan result of the wrong type", &None);
                }
                Ok(())
            })?;
        }
        Ok(Some((acc, bufs)))
    }

    // ----- accumulators --------------------------------------------------------------------

    pub fn with_acc(
        &mut self,
        inputs: &'p [AccInput],
        lam: &'p Lambda,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let base = self.begin_acc(inputs, lam.params.len(), loc)?;
        let args = (0..inputs.len()).map(|k| Val::Acc(base + k)).collect();
        let res = self.call_lambda(lam, args, loc);
        self.end_acc(base, inputs.len(), res)
    }

    /// Sets up the accumulators of a `with_acc` whose function takes `num_params` parameters
    /// (one accumulator per input), consuming the input arrays. The accumulators are
    /// `Val::Acc(base + k)` for the returned `base`.
    pub fn begin_acc(
        &mut self,
        inputs: &'p [AccInput],
        num_params: usize,
        loc: &Option<SrcLoc>,
    ) -> R<usize> {
        if num_params != inputs.len() {
            return err(
                "internal error: withacc lambda must take one accumulator per input",
                loc,
            );
        }
        let base = self.accs.len();
        for inp in inputs {
            let shape = inp
                .shape
                .iter()
                .map(|d| self.size(d, loc))
                .collect::<R<Vec<_>>>()?;
            let arrs = self.take_dests(&inp.arrs, loc)?;
            for a in &arrs {
                if a.shape.len() < shape.len() || a.shape[..shape.len()] != shape[..] {
                    self.accs.truncate(base);
                    return err(
                        format!(
                            "accumulator array of shape {} does not start with {}",
                            shape_str(&a.shape),
                            shape_str(&shape)
                        ),
                        loc,
                    );
                }
            }
            if let Some(op) = &inp.op {
                if op.lam.params.len() != 2 * arrs.len() {
                    self.accs.truncate(base);
                    return err(
                        "internal error: accumulator operator arity does not match its arrays",
                        loc,
                    );
                }
            }
            self.accs.push(AccState {
                arrs,
                shape,
                op: inp.op.as_ref(),
            });
        }
        Ok(base)
    }

    /// Ends a `with_acc` begun by [`Interp::begin_acc`] with `num_inputs` inputs, given the
    /// results of its function: the arrays of every accumulator, then the function's results
    /// after its accumulators.
    pub fn end_acc(&mut self, base: usize, num_inputs: usize, res: R<Vec<Val>>) -> R<Vec<Val>> {
        let states = self.accs.split_off(base);
        let res = res?;
        let mut out: Vec<Val> = states
            .into_iter()
            .flat_map(|s| s.arrs.into_iter().map(Val::Arr))
            .collect();
        out.extend(res.into_iter().skip(num_inputs));
        Ok(out)
    }

    pub fn upd_acc(
        &mut self,
        acc: &VName,
        idx: &[SubExp],
        vals: &[SubExp],
        loc: &Option<SrcLoc>,
    ) -> R<Val> {
        let k = match self.get(acc, loc)? {
            Val::Acc(k) => *k,
            other => {
                return err(
                    format!(
                        "internal error: update of a {}, not an accumulator",
                        other.type_name()
                    ),
                    loc,
                )
            }
        };
        let ix = idx
            .iter()
            .map(|i| self.prim(i, loc).map(|p| p.as_i128().unwrap_or(-1)))
            .collect::<R<Vec<_>>>()?;
        let vs = vals
            .iter()
            .map(|v| self.val(v, loc))
            .collect::<R<Vec<_>>>()?;
        let (op, nd) = match self.accs.get(k) {
            Some(st) => {
                if vs.len() != st.arrs.len() || ix.len() != st.shape.len() {
                    return err("internal error: accumulator update of the wrong arity", loc);
                }
                // Out-of-bounds updates are ignored.
                if ix
                    .iter()
                    .zip(&st.shape)
                    .any(|(&i, &n)| i < 0 || i >= n as i128)
                {
                    return Ok(Val::Acc(k));
                }
                (st.op, st.arrs.len())
            }
            None => return err("internal error: accumulator used outside its withacc", loc),
        };
        // Row offsets of the index in each array.
        let offs: Vec<(usize, Vec<usize>)> = self.accs[k]
            .arrs
            .iter()
            .map(|a| {
                let mut rel = 0usize;
                for (d, &i) in ix.iter().enumerate() {
                    rel = rel * a.shape[d] + i as usize;
                }
                let row = a.shape[ix.len()..].to_vec();
                (rel * row.iter().product::<usize>(), row)
            })
            .collect();
        let new = match op {
            None => vs,
            Some(op) => {
                let mut args: Vec<Val> = (0..nd)
                    .map(|m| {
                        let a = &self.accs[k].arrs[m];
                        let (rel, row) = &offs[m];
                        if row.is_empty() {
                            a.data.get(a.off + rel).map(Val::Prim).unwrap_or(Val::Empty)
                        } else {
                            let n = row.iter().product::<usize>();
                            Val::Arr(Arr::from_buffer(
                                super::val::slice(&a.data, a.off + rel, a.off + rel + n),
                                row.clone(),
                            ))
                        }
                    })
                    .collect();
                args.extend(vs);
                self.call_lambda(&op.lam, args, loc)?
            }
        };
        for (m, v) in new.iter().enumerate().take(nd) {
            let (rel, row) = &offs[m];
            write_row(&mut self.accs[k].arrs[m], *rel, row, v, loc)?;
        }
        Ok(Val::Acc(k))
    }
}

/// Row `i` of a SOAC input (an accumulator is passed to every iteration).
fn row_of(v: &Val, i: usize) -> Val {
    match v {
        Val::Arr(a) => a.row(i),
        other => other.clone(),
    }
}
