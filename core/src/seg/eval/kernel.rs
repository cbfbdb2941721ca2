//! Running a segmented operation: its threads in row-major order, collecting what each
//! returns, then the operators (per segment), the writes and the stacking of map outputs.

use super::Host;
use crate::diag::SrcLoc;
use crate::interp::{err, Arr, Builder, Interp, RuntimeError, Val, R};
use crate::ir::{Operator, Type};
use crate::prim::PrimValue;
use crate::seg::{HistOp, KernelResult, SegKind, SegOp};
use crate::value::Buffer;

/// What the threads of a kernel returned for one of its results, in thread order.
enum Col {
    /// Values (scalars or arrays of one shape), one per thread.
    Rows(Builder),
    /// An accumulator (the same for every thread): the last thread's, `None` before one ran.
    Acc(Option<Val>),
    /// The writes of a [`KernelResult::Write`]: the index (one `i64` per destination
    /// dimension; -1 where not an integer) and the value, per thread.
    Write(Vec<Vec<i64>>, Builder),
}

/// The threads of a kernel: the sizes of its space and their product.
struct Space {
    dims: Vec<usize>,
    threads: usize,
}

impl Space {
    /// The outer (segment) dimensions, the number of segments and the innermost size; an
    /// error for a space without dimensions.
    fn segments(&self, what: &str, loc: &Option<SrcLoc>) -> R<(&[usize], usize, usize)> {
        let Some((&w, outer)) = self.dims.split_last() else {
            return err(
                format!("internal error: {what} over a space of no dimensions"),
                loc,
            );
        };
        Ok((outer, outer.iter().product(), w))
    }
}

impl<'p> Host<'p> {
    /// Runs a kernel and returns its results (see the module documentation).
    pub(super) fn seg(
        &self,
        ip: &mut Interp<'p>,
        op: &'p SegOp,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let space = space(ip, op, loc)?;
        self.count(op, &space);
        if op.ret.len() != op.body.results.len() {
            return err(
                "internal error: a kernel's result types do not match its results",
                loc,
            );
        }
        let mut cols = columns(op, space.threads, loc)?;
        run_threads(ip, op, &space, &mut cols, loc)?;
        let m = op.kind.num_op_results();
        if cols.len() < m {
            return err(
                "internal error: a kernel returns too few operator values",
                loc,
            );
        }
        let map_cols = cols.split_off(m);
        let op_cols = cols.into_iter().zip(&op.ret[..m]).collect();
        let mut out = match &op.kind {
            SegKind::Map => vec![],
            SegKind::Red(ops) => segmented(ip, ops, op_cols, &space, false, loc)?,
            SegKind::Scan(ops) => segmented(ip, ops, op_cols, &space, true, loc)?,
            SegKind::Hist(hs) => histograms(ip, hs, op_cols, &space, loc)?,
        };
        let results = &op.body.results[m..];
        for ((col, r), t) in map_cols.into_iter().zip(results).zip(&op.ret[m..]) {
            out.push(map_output(ip, col, r, t, &space, loc)?);
        }
        Ok(out)
    }

    fn count(&self, op: &SegOp, space: &Space) {
        let mut s = self.stats.borrow_mut();
        s.kernels += 1;
        *s.by_kind.entry(op.kind.name()).or_default() += 1;
        s.threads += space.threads as u128;
    }
}

/// The sizes of a kernel's space.
fn space(ip: &Interp, op: &SegOp, loc: &Option<SrcLoc>) -> R<Space> {
    let dims = op
        .space
        .sizes()
        .map(|d| ip.size(d, loc))
        .collect::<R<Vec<_>>>()?;
    let threads = dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
    match threads {
        Some(threads) => Ok(Space { dims, threads }),
        None => err("kernel space too large", loc),
    }
}

/// Empty columns for the results of a kernel of `n` threads.
fn columns(op: &SegOp, n: usize, loc: &Option<SrcLoc>) -> R<Vec<Col>> {
    let col = |(r, t): (&KernelResult, &Type)| match (r, t) {
        (KernelResult::Returns(_), Type::Acc { .. }) => Ok(Col::Acc(None)),
        (KernelResult::Returns(_), t) => Ok(Col::Rows(builder(t, n))),
        (KernelResult::Write { idx, .. }, t) if t.elem().is_some() => Ok(Col::Write(
            vec![Vec::with_capacity(n); idx.len()],
            builder(t, n),
        )),
        (KernelResult::Write { .. }, _) => err("internal error: a write of an accumulator", loc),
    };
    op.body.results.iter().zip(&op.ret).map(col).collect()
}

fn builder(t: &Type, n: usize) -> Builder {
    Builder::new(t.elem().unwrap_or(crate::prim::PrimType::Bool), n)
}

/// Runs the threads in row-major order of the space, collecting their results into `cols`.
fn run_threads<'p>(
    ip: &mut Interp<'p>,
    op: &'p SegOp,
    space: &Space,
    cols: &mut [Col],
    loc: &Option<SrcLoc>,
) -> R<()> {
    let mut idx = vec![0usize; space.dims.len()];
    let mut r = Ok(());
    for _ in 0..space.threads {
        for (v, &i) in op.space.indices().zip(&idx) {
            ip.set(v, Val::Prim(PrimValue::I64(i as i64)));
        }
        r = ip
            .exec_stms(&op.body.stms)
            .and_then(|()| collect(ip, &op.body.results, cols, loc));
        ip.clear_stms(&op.body.stms);
        if r.is_err() {
            break;
        }
        next_index(&mut idx, &space.dims);
    }
    for v in op.space.indices() {
        ip.clear(v);
    }
    r
}

/// The next point of a space in row-major order.
fn next_index(idx: &mut [usize], dims: &[usize]) {
    for (i, &n) in idx.iter_mut().zip(dims).rev() {
        *i += 1;
        if *i < n {
            return;
        }
        *i = 0;
    }
}

/// Adds one thread's results to the columns.
fn collect(ip: &Interp, results: &[KernelResult], cols: &mut [Col], loc: &Option<SrcLoc>) -> R<()> {
    let lift = |m: String| RuntimeError::new(m, loc.clone());
    for (r, c) in results.iter().zip(cols) {
        match (r, c) {
            (KernelResult::Returns(se), Col::Rows(b)) => b.push(&ip.val(se, loc)?).map_err(lift)?,
            (KernelResult::Returns(se), Col::Acc(a)) => *a = Some(ip.val(se, loc)?),
            (KernelResult::Write { idx, val, .. }, Col::Write(ix, b)) => {
                for (i, v) in idx.iter().zip(ix.iter_mut()) {
                    let i = ip.prim(i, loc)?.as_i128();
                    v.push(i.and_then(|i| i64::try_from(i).ok()).unwrap_or(-1));
                }
                b.push(&ip.val(val, loc)?).map_err(lift)?;
            }
            _ => return err("internal error: a kernel result of the wrong kind", loc),
        }
    }
    Ok(())
}

/// The values of a column of values (of type `t`): an array `[threads]` followed by the
/// values' shape (`t`'s shape where no thread ran).
fn rows(ip: &Interp, (col, t): (Col, &Type), loc: &Option<SrcLoc>) -> R<Arr> {
    match col {
        Col::Rows(b) => Ok(b.finish(ip.type_shape(t))),
        _ => err(
            "internal error: an operator operand that is not a value",
            loc,
        ),
    }
}

/// Rows `[s * w, (s + 1) * w)` of an array (segment `s` of `w` threads), as a view.
fn segment(a: &Arr, s: usize, w: usize) -> Val {
    let mut shape = vec![w];
    shape.extend_from_slice(&a.shape[1..]);
    Val::Arr(Arr {
        data: a.data.clone(),
        off: a.off + s * w * a.row_len(),
        shape,
    })
}

/// An array of rows `[count]...` reshaped to `outer...` (its single row where `outer` is
/// empty).
fn stack(a: Arr, outer: &[usize]) -> Val {
    if outer.is_empty() {
        return a.row(0);
    }
    let mut shape = outer.to_vec();
    shape.extend_from_slice(&a.shape[1..]);
    Val::Arr(Arr { shape, ..a })
}

/// The results of a [`SegKind::Red`] (`scan` false) or [`SegKind::Scan`] from the columns of
/// the operators' operands (with their types): per segment, the interpreter's `reduce` or
/// `scan` of the segment's values.
fn segmented<'p>(
    ip: &mut Interp<'p>,
    ops: &'p [Operator],
    cols: Vec<(Col, &Type)>,
    space: &Space,
    scan: bool,
    loc: &Option<SrcLoc>,
) -> R<Vec<Val>> {
    let (outer, nseg, w) = space.segments(if scan { "segscan" } else { "segred" }, loc)?;
    let arrs = cols
        .into_iter()
        .map(|c| rows(ip, c, loc))
        .collect::<R<Vec<_>>>()?;
    let mut outs: Vec<Builder> = arrs
        .iter()
        .map(|a| Builder::new(a.elem_type(), nseg))
        .collect();
    for s in 0..nseg {
        let mut k = 0;
        for op in ops {
            let m = op.neutral.len();
            let Some(part) = arrs.get(k..k + m) else {
                return err("internal error: too few operator operands", loc);
            };
            let inputs: Vec<Val> = part.iter().map(|a| segment(a, s, w)).collect();
            let r = if scan {
                ip.scan(w, &inputs, op, loc)?
            } else {
                ip.reduce(w, &inputs, op, loc)?
            };
            for (b, v) in outs[k..k + m].iter_mut().zip(&r) {
                b.push(v).map_err(|m| RuntimeError::new(m, loc.clone()))?;
            }
            k += m;
        }
    }
    let row = |a: &Arr| {
        let mut r = if scan { vec![w] } else { vec![] };
        r.extend_from_slice(&a.shape[1..]);
        r
    };
    Ok(outs
        .into_iter()
        .zip(&arrs)
        .map(|(b, a)| stack(b.finish(row(a)), outer))
        .collect())
}

/// The results of a [`SegKind::Hist`]: each histogram's destinations, updated per segment.
fn histograms<'p>(
    ip: &mut Interp<'p>,
    hs: &'p [HistOp],
    cols: Vec<(Col, &Type)>,
    space: &Space,
    loc: &Option<SrcLoc>,
) -> R<Vec<Val>> {
    let (outer, nseg, w) = space.segments("seghist", loc)?;
    let mut cols = cols.into_iter();
    let mut out = Vec::new();
    for h in hs {
        let bins = match cols.next() {
            Some(c) => rows(ip, c, loc)?,
            None => return err("internal error: too few histogram operands", loc),
        };
        let mut vals = Vec::with_capacity(h.dest.len());
        for c in cols.by_ref().take(h.dest.len()) {
            vals.push(Val::Arr(rows(ip, c, loc)?));
        }
        let width = ip.size(&h.width, loc)?;
        let mut dests = ip.take_dests(&h.dest, loc)?;
        let shapes = flatten_bins(&mut dests, outer, width, loc)?;
        for s in 0..nseg {
            let js = s * w..(s + 1) * w;
            ip.hist_apply(&mut dests, (s * width, width), &bins, &vals, js, &h.op, loc)?;
        }
        for (mut d, shape) in dests.into_iter().zip(shapes) {
            d.shape = shape;
            out.push(Val::Arr(d));
        }
    }
    Ok(out)
}

/// Checks that histogram destinations have the shape `outer ++ [width] ++ ...` and views each
/// as `[segments * width] ++ ...` (one row per bin of every segment); returns their shapes.
fn flatten_bins(
    dests: &mut [Arr],
    outer: &[usize],
    width: usize,
    loc: &Option<SrcLoc>,
) -> R<Vec<Vec<usize>>> {
    let mut bins = outer.to_vec();
    bins.push(width);
    let mut shapes = Vec::with_capacity(dests.len());
    for d in dests {
        if !d.shape.starts_with(&bins) {
            return err(
                format!(
                    "histogram destination of shape {} does not start with {}",
                    shape_str(&d.shape),
                    shape_str(&bins)
                ),
                loc,
            );
        }
        let mut flat = vec![bins.iter().product()];
        flat.extend_from_slice(&d.shape[bins.len()..]);
        shapes.push(std::mem::replace(&mut d.shape, flat));
    }
    Ok(shapes)
}

fn shape_str(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

/// A map output: the stacked values, the accumulator, or the written destination.
fn map_output(
    ip: &mut Interp,
    col: Col,
    r: &KernelResult,
    t: &Type,
    space: &Space,
    loc: &Option<SrcLoc>,
) -> R<Val> {
    match (col, r) {
        (Col::Rows(b), _) => Ok(stack(b.finish(ip.type_shape(t)), &space.dims)),
        (Col::Acc(Some(a)), _) => Ok(a),
        // No thread ran: the accumulator of the `with_acc` that `t` names.
        (Col::Acc(None), _) => match t {
            Type::Acc { cert, .. } => ip.get(cert, loc).cloned(),
            _ => err(
                "internal error: an accumulator result of a non-accumulator type",
                loc,
            ),
        },
        (Col::Write(ix, b), KernelResult::Write { dest, .. }) => {
            let n = space.threads;
            let inds: Vec<Val> = ix
                .into_iter()
                .map(|v| Val::Arr(Arr::from_buffer(Buffer::I64(v), vec![n])))
                .collect();
            let vals = [Val::Arr(b.finish(ip.type_shape(t)))];
            let mut dests = ip.take_dests(std::slice::from_ref(dest), loc)?;
            ip.scatter_apply(&mut dests, &inds, &vals, n, loc)?;
            Ok(Val::Arr(dests.remove(0)))
        }
        (Col::Write(..), _) => err("internal error: a write without a destination", loc),
    }
}
