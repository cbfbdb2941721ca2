//! The AD oracle: evaluates [`Exp::Jvp`] and [`Exp::Vjp`] nodes dynamically, with no
//! transformation of the program.
//!
//! The node's lambda is evaluated over *traced* values: every integer and float scalar is a
//! value plus a [`tape`] node (bools too, as in Futhark: their derivatives add with `||` and multiply with `&&`; constants and values computed from
//! constants only have no node). Each scalar operation records the partial derivatives of its
//! result with respect to its operands ([`partials`], the numeric twin of
//! [`crate::ad::derivatives`]). Arrays are vectors of traced scalars, so indexing, updates,
//! SOACs, loops, branches, `scatter`, `reduce_by_index` and accumulators are simply evaluated
//! element by element, and the tape records what happened. Then `jvp` runs forward accumulation
//! from the seeds of the inputs, and `vjp` reverse accumulation from the seeds of the outputs.
//!
//! Speed does not matter here: values are plain vectors, and everything is copied freely.
//!
//! Nested AD (an AD node inside the lambda being traced) is evaluated dynamically too, on the
//! same tape: the inner arguments are copied to fresh nodes, the inner lambda is traced, and the
//! inner derivative is accumulated over the nodes it made with traced arithmetic (partials
//! recomputed on traced values from each node's [`tape::Recipe`]), so that it is differentiable
//! by the enclosing node. Locally constant partials (sums, `min`/`max`, rounding, integer
//! division) stay numeric constants there.

pub mod partials;
pub mod tape;

use super::eval::{err, Interp, R};
use super::val::{Arr, Val};
use super::RuntimeError;
use crate::diag::SrcLoc;
use crate::ir::{
    self, AccInput, Body, DimIndex, Exp, Lambda, LoopForm, Operator, Soac, Stm, SubExp, Type, VName,
};
use crate::prim::{PrimType, PrimValue};
use crate::primops;
use crate::value::Buffer;
use partials::has_tangent;
use std::collections::HashMap;
use tape::{Edge, Recipe, Tape, CONST};

/// Why tracing a scalar operation failed; the statement's location is added by
/// [`TraceError::at`].
enum TraceError {
    /// The operation failed (division by zero, an internal error, ...).
    Failed(String),
    /// The oracle cannot differentiate the operation.
    NotSupported(String),
}

impl From<String> for TraceError {
    fn from(m: String) -> TraceError {
        TraceError::Failed(m)
    }
}

impl TraceError {
    fn at(self, loc: &Option<SrcLoc>) -> RuntimeError {
        match self {
            TraceError::Failed(m) => RuntimeError::new(m, loc.clone()),
            TraceError::NotSupported(m) => RuntimeError::not_supported(m, loc.clone()),
        }
    }
}

/// A traced scalar: its value and its tape node ([`CONST`] when it has no derivative).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct T {
    pub v: PrimValue,
    pub n: u32,
}

impl T {
    fn c(v: PrimValue) -> T {
        T { v, n: CONST }
    }
}

/// A traced array: row-major elements.
#[derive(Clone, Debug)]
pub struct TArr {
    pub elem: PrimType,
    pub shape: Vec<usize>,
    pub d: Vec<T>,
}

impl TArr {
    fn row_len(&self) -> usize {
        self.shape.iter().skip(1).product()
    }
    fn row(&self, i: usize) -> TV {
        if self.shape.len() <= 1 {
            TV::S(self.d[i])
        } else {
            let rl = self.row_len();
            TV::A(TArr {
                elem: self.elem,
                shape: self.shape[1..].to_vec(),
                d: self.d[i * rl..(i + 1) * rl].to_vec(),
            })
        }
    }
}

/// A traced value.
#[derive(Clone, Debug)]
pub enum TV {
    S(T),
    A(TArr),
    /// An accumulator: an index into the tracer's accumulator states.
    Acc(usize),
}

impl TV {
    fn shape(&self) -> &[usize] {
        match self {
            TV::A(a) => &a.shape,
            _ => &[],
        }
    }
    /// All scalars, row-major.
    fn elems(&self) -> Vec<T> {
        match self {
            TV::S(t) => vec![*t],
            TV::A(a) => a.d.clone(),
            TV::Acc(_) => vec![],
        }
    }
    fn type_name(&self) -> String {
        match self {
            TV::S(t) => t.v.prim_type().name().to_string(),
            TV::A(a) => {
                let mut s: String = a.shape.iter().map(|d| format!("[{d}]")).collect();
                s.push_str(a.elem.name());
                s
            }
            TV::Acc(_) => "accumulator".to_string(),
        }
    }
}

/// A float (or integer) constant of type `t`.
fn fconst(t: PrimType, v: f64) -> PrimValue {
    match t {
        PrimType::Float(ft) => PrimValue::float(ft, v),
        PrimType::Int(it) => PrimValue::int(it, v as i128),
        PrimType::Bool => PrimValue::Bool(v != 0.0),
    }
}

/// `v` with each scalar replaced by `f` of it (same shape).
fn with_elems(v: &TV, mut f: impl FnMut(T) -> T) -> TV {
    match v {
        TV::S(t) => TV::S(f(*t)),
        TV::A(a) => TV::A(TArr {
            elem: a.elem,
            shape: a.shape.clone(),
            d: a.d.iter().map(|t| f(*t)).collect(),
        }),
        other => other.clone(),
    }
}

/// Stacks rows of the same shape into an array (`row_shape` is used when there are none).
fn stack(elem: PrimType, rows: Vec<TV>, row_shape: Vec<usize>, loc: &Option<SrcLoc>) -> R<TArr> {
    let shape0 = rows
        .first()
        .map(|r| r.shape().to_vec())
        .unwrap_or(row_shape);
    let mut d = vec![];
    let n = rows.len();
    for r in rows {
        if r.shape() != shape0.as_slice() {
            return err(
                format!(
                    "cannot combine rows of shapes {:?} and {:?}",
                    shape0,
                    r.shape()
                ),
                loc,
            );
        }
        d.extend(r.elems());
    }
    let mut shape = vec![n];
    shape.extend(shape0);
    Ok(TArr { elem, shape, d })
}

fn from_val(v: &Val, loc: &Option<SrcLoc>) -> R<TV> {
    Ok(match v {
        Val::Prim(p) => TV::S(T::c(*p)),
        Val::Arr(a) => {
            let buf = a.to_buffer();
            TV::A(TArr {
                elem: a.elem_type(),
                shape: a.shape.clone(),
                d: (0..buf.len())
                    .filter_map(|i| buf.get(i))
                    .map(T::c)
                    .collect(),
            })
        }
        other => {
            return Err(RuntimeError::not_supported(
                format!(
                    "not supported by the AD oracle: a free {} in a differentiated function",
                    other.type_name()
                ),
                loc.clone(),
            ))
        }
    })
}

fn to_val(elem: PrimType, shape: &[usize], vals: impl Iterator<Item = PrimValue>) -> R<Val> {
    if shape.is_empty() {
        let mut vals = vals;
        return match vals.next() {
            Some(p) => Ok(Val::Prim(p)),
            None => Err(RuntimeError::new(
                "internal error: AD oracle: missing scalar",
                None,
            )),
        };
    }
    let n: usize = shape.iter().product();
    let mut b = Buffer::with_capacity(elem, n);
    for p in vals {
        b.push(p);
    }
    Ok(Val::Arr(Arr::from_buffer(b, shape.to_vec())))
}

fn elem_of(v: &TV) -> PrimType {
    match v {
        TV::S(t) => t.v.prim_type(),
        TV::A(a) => a.elem,
        TV::Acc(_) => PrimType::Bool,
    }
}

/// Evaluates a `Jvp` or `Vjp` node: the lambda's results, then the tangents of the results
/// (`Jvp`) or the adjoints of the arguments (`Vjp`).
pub(crate) fn eval_node<'p>(interp: &Interp<'p>, exp: &Exp, loc: &Option<SrcLoc>) -> R<Vec<Val>> {
    let (lam, args, seeds, fwd) = match exp {
        Exp::Jvp { lam, args, seeds } => (lam, args, seeds, true),
        Exp::Vjp { lam, args, seeds } => (lam, args, seeds, false),
        _ => return err("internal error: not an AD node", loc),
    };
    let what = if fwd { "jvp" } else { "vjp" };
    let want_seeds = if fwd { lam.params.len() } else { lam.ret.len() };
    if args.len() != lam.params.len() || seeds.len() != want_seeds {
        return err(format!("internal error: {what} of the wrong arity"), loc);
    }
    let mut tr = Tracer {
        interp,
        env: HashMap::new(),
        tape: Tape::default(),
        accs: vec![],
    };
    // Inputs: a fresh node per differentiable scalar of each argument.
    let mut inputs: Vec<TV> = vec![];
    for a in args {
        let v = from_val(&interp.val(a, loc)?, loc)?;
        let v = match v {
            TV::S(t) if tr.has_deriv(t.v.prim_type()) => TV::S(T {
                v: t.v,
                n: tr.tape.input(),
            }),
            TV::A(mut arr) if tr.has_deriv(arr.elem) => {
                for t in arr.d.iter_mut() {
                    t.n = tr.tape.input();
                }
                TV::A(arr)
            }
            v => v,
        };
        inputs.push(v);
    }
    let outs = tr.lambda(lam, inputs.clone(), loc)?;
    let lift = |m: String| RuntimeError::new(format!("AD oracle: {m}"), loc.clone());
    let mut res: Vec<Val> = vec![];
    for o in &outs {
        res.push(to_val(
            elem_of(o),
            o.shape(),
            o.elems().into_iter().map(|t| t.v),
        )?);
    }
    if fwd {
        let mut sd = vec![];
        for (inp, s) in inputs.iter().zip(seeds) {
            let sv = from_val(&interp.val(s, loc)?, loc)?;
            let (ie, se) = (inp.elems(), sv.elems());
            if ie.len() != se.len() {
                return err(
                    format!(
                        "jvp: a seed of type {} for an argument of type {}",
                        sv.type_name(),
                        inp.type_name()
                    ),
                    loc,
                );
            }
            for (i, s) in ie.iter().zip(se) {
                if i.n != CONST {
                    sd.push((i.n, s.v));
                }
            }
        }
        let tan = tr.tape.forward(&sd).map_err(lift)?;
        for o in &outs {
            let e = elem_of(o);
            let vals = o.elems().into_iter().map(|t| match tan[t.n as usize] {
                Some(x) if t.n != CONST => x,
                _ => PrimValue::zero(e),
            });
            res.push(to_val(e, o.shape(), vals)?);
        }
    } else {
        let mut sd = vec![];
        for (o, s) in outs.iter().zip(seeds) {
            let sv = from_val(&interp.val(s, loc)?, loc)?;
            let (oe, se) = (o.elems(), sv.elems());
            if oe.len() != se.len() {
                return err(
                    format!(
                        "vjp: a seed of type {} for a result of type {}",
                        sv.type_name(),
                        o.type_name()
                    ),
                    loc,
                );
            }
            for (t, s) in oe.iter().zip(se) {
                if t.n != CONST && tr.has_deriv(s.v.prim_type()) {
                    sd.push((t.n, s.v));
                }
            }
        }
        let adj = tr.tape.reverse(&sd).map_err(lift)?;
        for inp in &inputs {
            let e = elem_of(inp);
            let vals = inp.elems().into_iter().map(|t| match adj[t.n as usize] {
                Some(x) if t.n != CONST => x,
                _ => PrimValue::zero(e),
            });
            res.push(to_val(e, inp.shape(), vals)?);
        }
    }
    Ok(res)
}

/// The state of one accumulator of a traced `WithAcc`.
struct AccSt {
    arrs: Vec<TArr>,
    shape: Vec<usize>,
    op: Option<Operator>,
}

struct Tracer<'a, 'p> {
    interp: &'a Interp<'p>,
    /// Values bound while tracing (by variable id); other variables are read, as constants, from
    /// the interpreter.
    env: HashMap<u32, TV>,
    tape: Tape,
    accs: Vec<AccSt>,
}

impl Tracer<'_, '_> {
    // ----- variables ---------------------------------------------------------------------

    fn get(&self, v: &VName, loc: &Option<SrcLoc>) -> R<TV> {
        match self.env.get(&v.id) {
            Some(x) => Ok(x.clone()),
            None => from_val(self.interp.get(v, loc)?, loc),
        }
    }

    fn se(&self, s: &SubExp, loc: &Option<SrcLoc>) -> R<TV> {
        match s {
            SubExp::Const(c) => Ok(TV::S(T::c(*c))),
            SubExp::Var(v) => self.get(v, loc),
        }
    }

    fn sc(&self, s: &SubExp, loc: &Option<SrcLoc>) -> R<T> {
        match self.se(s, loc)? {
            TV::S(t) => Ok(t),
            other => err(
                format!(
                    "internal error: a {} where a scalar was expected",
                    other.type_name()
                ),
                loc,
            ),
        }
    }

    fn int(&self, s: &SubExp, loc: &Option<SrcLoc>) -> R<i128> {
        match self.sc(s, loc)?.v.as_i128() {
            Some(i) => Ok(i),
            None => err("internal error: an index that is not an integer", loc),
        }
    }

    fn size(&self, s: &SubExp, loc: &Option<SrcLoc>) -> R<usize> {
        let n = self.int(s, loc)?;
        usize::try_from(n).or_else(|_| err(format!("negative size {n}"), loc))
    }

    fn arr(&self, v: &VName, loc: &Option<SrcLoc>) -> R<TArr> {
        match self.get(v, loc)? {
            TV::A(a) => Ok(a),
            other => err(
                format!(
                    "internal error: `{v}` is a {}, expected an array",
                    other.type_name()
                ),
                loc,
            ),
        }
    }

    fn bool(&self, s: &SubExp, loc: &Option<SrcLoc>) -> R<bool> {
        match self.sc(s, loc)?.v {
            PrimValue::Bool(b) => Ok(b),
            _ => err("internal error: expected a bool", loc),
        }
    }

    fn set(&mut self, v: &VName, x: TV) {
        self.env.insert(v.id, x);
    }

    /// The shape of a type (0 for sizes not known).
    fn type_shape(&self, t: &Type) -> Vec<usize> {
        t.shape()
            .iter()
            .map(|d| self.size(d, &None).unwrap_or(0))
            .collect()
    }

    // ----- bodies --------------------------------------------------------------------------

    fn body(&mut self, b: &Body, loc: &Option<SrcLoc>) -> R<Vec<TV>> {
        for s in &b.stms {
            self.stm(s)?;
        }
        b.result.iter().map(|r| self.se(r, loc)).collect()
    }

    fn lambda(&mut self, lam: &Lambda, args: Vec<TV>, loc: &Option<SrcLoc>) -> R<Vec<TV>> {
        if args.len() != lam.params.len() {
            return err(
                format!(
                    "internal error: lambda of {} parameters applied to {} arguments",
                    lam.params.len(),
                    args.len()
                ),
                loc,
            );
        }
        for (p, a) in lam.params.iter().zip(args) {
            self.set(&p.name, a);
        }
        self.body(&lam.body, loc)
    }

    fn bind(&mut self, stm: &Stm, vals: Vec<TV>) -> R<()> {
        if vals.len() != stm.pat.elems.len() {
            return err(
                format!(
                    "internal error: {} values bound to a pattern of {} names",
                    vals.len(),
                    stm.pat.elems.len()
                ),
                &stm.loc,
            );
        }
        for (p, v) in stm.pat.elems.iter().zip(vals) {
            self.set(&p.name, v);
        }
        Ok(())
    }

    // ----- scalars -------------------------------------------------------------------------

    /// Does a value of this type get a derivative here? Floats, integers and (as in Futhark's
    /// `jvp` and `vjp`) bools, whose tangents and adjoints add with `||` and multiply with `&&`.
    fn has_deriv(&self, ty: PrimType) -> bool {
        has_tangent(ty)
    }

    fn scalar(&mut self, ty: PrimType, v: PrimValue, ins: Vec<(u32, Edge)>, r: Recipe) -> T {
        let n = if self.has_deriv(ty) {
            self.tape.record(ins, r)
        } else {
            CONST
        };
        T { v, n }
    }

    /// A traced unary operation.
    fn t_un(&mut self, op: ir::UnOp, x: T) -> Result<T, TraceError> {
        let r = primops::eval_unop(op, x.v)?;
        let ins = partials::unop(op, x.v)
            .map(|p| vec![(x.n, Edge::Scale(p, 0))])
            .unwrap_or_default();
        Ok(self.scalar(r.prim_type(), r, ins, Recipe::Un(op, x)))
    }

    /// A traced binary operation.
    fn t_bin(&mut self, op: ir::BinOp, x: T, y: T) -> Result<T, TraceError> {
        let r = primops::eval_binop(op, x.v, y.v)?;
        let mut ins = vec![];
        if x.n != CONST || y.n != CONST {
            let (px, py) = partials::binop(op, x.v, y.v);
            if let Some(p) = px {
                ins.push((x.n, Edge::Scale(p, 0)));
            }
            if let Some(p) = py {
                ins.push((y.n, Edge::Scale(p, 1)));
            }
        }
        Ok(self.scalar(r.prim_type(), r, ins, Recipe::Bin(op, x, y)))
    }

    /// A traced conversion.
    fn t_conv(&mut self, op: ir::ConvOp, x: T) -> Result<T, TraceError> {
        let r = primops::eval_conv(op, x.v)?;
        let ins = if self.has_deriv(op.from) && self.has_deriv(op.to) {
            vec![(x.n, Edge::Conv(op))]
        } else {
            vec![]
        };
        Ok(self.scalar(op.to, r, ins, Recipe::Leaf))
    }

    /// A traced math function.
    fn t_math(&mut self, f: ir::MathFn, xs: Vec<T>) -> Result<T, TraceError> {
        let pv: Vec<PrimValue> = xs.iter().map(|t| t.v).collect();
        let r = primops::eval_math(f, &pv)?;
        let ins = match f {
            ir::MathFn::ToBits(_) | ir::MathFn::FromBits(_) => match xs.first() {
                Some(x) => vec![(x.n, Edge::Bits(f))],
                None => vec![],
            },
            _ if xs.iter().all(|t| t.n == CONST) => vec![],
            _ => {
                let ps = partials::math_fn(f, &pv, r).map_err(|c| {
                    TraceError::NotSupported(format!("not supported by the AD oracle: {c}"))
                })?;
                xs.iter()
                    .zip(ps)
                    .enumerate()
                    .filter_map(|(k, (t, p))| p.map(|p| (t.n, Edge::Scale(p, k as u8))))
                    .collect()
            }
        };
        Ok(self.scalar(r.prim_type(), r, ins, Recipe::Math(f, xs)))
    }

    fn stm(&mut self, stm: &Stm) -> R<()> {
        let loc = &stm.loc;
        if let Some(e) = self.tape.failed() {
            return err(e, loc);
        }
        let lift = |m: TraceError| m.at(loc);
        let one = |v: TV| vec![v];
        let vals: Vec<TV> = match &stm.exp {
            Exp::SubExp(s) => one(self.se(s, loc)?),
            Exp::UnOp(op, a) => {
                let x = self.sc(a, loc)?;
                one(TV::S(self.t_un(*op, x).map_err(lift)?))
            }
            Exp::BinOp(op, a, b) => {
                let (x, y) = (self.sc(a, loc)?, self.sc(b, loc)?);
                one(TV::S(self.t_bin(*op, x, y).map_err(lift)?))
            }
            Exp::CmpOp(op, a, b) => {
                let (x, y) = (self.sc(a, loc)?, self.sc(b, loc)?);
                let r = primops::eval_cmpop(*op, x.v, y.v).map_err(|m| lift(m.into()))?;
                one(TV::S(T::c(PrimValue::Bool(r))))
            }
            Exp::Conv(op, a) => {
                let x = self.sc(a, loc)?;
                one(TV::S(self.t_conv(*op, x).map_err(lift)?))
            }
            Exp::Math(f, args) => {
                let xs = args
                    .iter()
                    .map(|a| self.sc(a, loc))
                    .collect::<R<Vec<T>>>()?;
                one(TV::S(self.t_math(*f, xs).map_err(lift)?))
            }
            Exp::Index(v, idx) => {
                let a = self.arr(v, loc)?;
                one(self.index(&a, idx, loc)?)
            }
            Exp::Update(v, idx, x) => {
                let a = self.arr(v, loc)?;
                let x = self.se(x, loc)?;
                one(TV::A(self.update(a, idx, &x, loc)?))
            }
            Exp::Iota {
                n,
                start,
                stride,
                it,
            } => {
                let n = self.size(n, loc)?;
                let (s, d) = (self.int(start, loc)?, self.int(stride, loc)?);
                let mut v = crate::mem::vec_with_capacity(n).map_err(|m| lift(m.into()))?;
                v.extend((0..n).map(|i| {
                    T::c(PrimValue::int(
                        *it,
                        s.wrapping_add(d.wrapping_mul(i as i128)),
                    ))
                }));
                let d = v;
                one(TV::A(TArr {
                    elem: PrimType::Int(*it),
                    shape: vec![n],
                    d,
                }))
            }
            Exp::Replicate { shape, value } => {
                let dims = shape
                    .iter()
                    .map(|d| self.size(d, loc))
                    .collect::<R<Vec<_>>>()?;
                let v = self.se(value, loc)?;
                let count = crate::mem::elements(&dims).map_err(|m| lift(m.into()))?;
                let row = v.elems();
                let mut sh = dims;
                sh.extend(v.shape());
                let total = crate::mem::elements(&sh).map_err(|m| lift(m.into()))?;
                let mut d = crate::mem::vec_with_capacity(total).map_err(|m| lift(m.into()))?;
                for _ in 0..count {
                    d.extend(row.iter().copied());
                }
                one(TV::A(TArr {
                    elem: elem_of(&v),
                    shape: sh,
                    d,
                }))
            }
            Exp::ArrayLit { elems, row } => {
                let rows = elems
                    .iter()
                    .map(|e| self.se(e, loc))
                    .collect::<R<Vec<_>>>()?;
                let elem = row.elem().unwrap_or(PrimType::Bool);
                one(TV::A(stack(elem, rows, self.type_shape(row), loc)?))
            }
            Exp::Concat { dim, arrs, w } => {
                let arrs = arrs
                    .iter()
                    .map(|a| self.arr(a, loc))
                    .collect::<R<Vec<_>>>()?;
                let w = self.size(w, loc)?;
                one(TV::A(concat(*dim, &arrs, w, loc)?))
            }
            Exp::Copy(v) => one(self.get(v, loc)?),
            Exp::SortByKey { keys, bits } => {
                // The sorted keys are the keys gathered (traced, as integers are: formally);
                // the permutation is a constant.
                let a = self.arr(keys, loc)?;
                let ks: Vec<i64> =
                    a.d.iter()
                        .map(|t| t.v.as_i128().unwrap_or(0) as i64)
                        .collect();
                let perm = crate::primops::sort_by_key(&ks, self.int(bits, loc)? as i64);
                let n = ks.len();
                let sorted = perm.iter().map(|&i| a.d[i]).collect();
                let p = perm
                    .iter()
                    .map(|&i| T::c(PrimValue::I64(i as i64)))
                    .collect();
                let arr = |d| {
                    TV::A(TArr {
                        elem: PrimType::I64,
                        shape: vec![n],
                        d,
                    })
                };
                vec![arr(sorted), arr(p)]
            }
            Exp::Reshape(shape, v) => {
                let mut a = self.arr(v, loc)?;
                let dims = shape
                    .iter()
                    .map(|d| self.size(d, loc))
                    .collect::<R<Vec<_>>>()?;
                if dims.iter().product::<usize>() != a.d.len() {
                    return err(
                        format!(
                            "cannot reshape array of shape {:?} to shape {:?}",
                            a.shape, dims
                        ),
                        loc,
                    );
                }
                a.shape = dims;
                one(TV::A(a))
            }
            Exp::Rearrange(perm, v) => {
                let a = self.arr(v, loc)?;
                one(TV::A(rearrange(perm, &a, loc)?))
            }
            Exp::Assert { cond, msg, args } => {
                if !self.bool(cond, loc)? {
                    let args = args
                        .iter()
                        .map(|a| Ok(crate::ir::assert_arg_text(&self.sc(a, loc)?.v)))
                        .collect::<R<Vec<_>>>()?;
                    return err(crate::ir::assert_message(msg, &args), loc);
                }
                vec![]
            }
            Exp::Apply { fun, args, .. } => {
                let args = args
                    .iter()
                    .map(|a| self.se(a, loc))
                    .collect::<R<Vec<_>>>()?;
                let f = match self.interp.funs.get(&**fun) {
                    Some(&(_, f)) => f,
                    None => return err(format!("internal error: unknown function `{fun}`"), loc),
                };
                let names: Vec<&VName> = f
                    .size_params
                    .iter()
                    .chain(f.params.iter().map(|p| &p.name))
                    .collect();
                if names.len() != args.len() {
                    return err(
                        format!("internal error: `{fun}` given the wrong arguments"),
                        loc,
                    );
                }
                for (n, a) in names.into_iter().zip(args) {
                    self.set(n, a);
                }
                self.body(&f.body, loc)?
            }
            Exp::If {
                cond,
                then_b,
                else_b,
                ..
            } => {
                let b = if self.bool(cond, loc)? {
                    then_b
                } else {
                    else_b
                };
                self.body(b, loc)?
            }
            Exp::Loop { params, form, body } => self.run_loop(params, form, body, loc)?,
            Exp::Soac(s) => self.soac(s, loc)?,
            Exp::WithAcc { inputs, lam } => self.with_acc(inputs, lam, loc)?,
            Exp::UpdAcc { acc, idx, vals } => one(self.upd_acc(acc, idx, vals, loc)?),
            Exp::Jvp { lam, args, seeds } | Exp::Vjp { lam, args, seeds } => {
                self.nested(&stm.exp, lam, args, seeds, loc)?
            }
            // The tape holds linear edges only; the user's adjoint function is not linear in
            // general.
            Exp::WithVjp { .. } => {
                return Err(RuntimeError::not_supported(
                    "not supported by the AD oracle: `with_vjp` (custom derivatives)".to_string(),
                    loc.clone(),
                ))
            }
        };
        self.bind(stm, vals)
    }

    /// A nested AD node (inside the lambda being traced), differentiated dynamically too: its
    /// arguments are copied to fresh nodes, its lambda traced on the same tape, and the
    /// derivative accumulated over the nodes that lambda made, with *traced* arithmetic and
    /// partials recomputed on traced values ([`Tracer::traced_partial`]), so that the result is
    /// itself differentiable by the enclosing AD. Nodes made before (free variables) are
    /// constants for the inner derivative, which avoids perturbation confusion.
    fn nested(
        &mut self,
        exp: &Exp,
        lam: &Lambda,
        args: &[SubExp],
        seeds: &[SubExp],
        loc: &Option<SrcLoc>,
    ) -> R<Vec<TV>> {
        let lift = |m: TraceError| m.at(loc);
        let fwd = matches!(exp, Exp::Jvp { .. });
        let start = self.tape.next_id();
        let mut inputs = vec![];
        for a in args {
            let v = self.se(a, loc)?;
            inputs.push(self.fresh_copies(v));
        }
        let outs = self.lambda(lam, inputs.clone(), loc)?;
        let end = self.tape.next_id();
        let seedv = seeds
            .iter()
            .map(|s| self.se(s, loc))
            .collect::<R<Vec<_>>>()?;
        let inner = |n: u32| n != CONST && n >= start && n < end;
        let mut res = outs.clone();
        if fwd {
            let mut tan: HashMap<u32, T> = HashMap::new();
            for (i, s) in inputs.iter().zip(&seedv) {
                for (t, sv) in i.elems().into_iter().zip(s.elems()) {
                    if inner(t.n) {
                        tan.insert(t.n, sv);
                    }
                }
            }
            for k in start..end {
                let node = self.tape.node(k).clone();
                let mut acc: Option<T> = None;
                for (p, e) in &node.ins {
                    let Some(t) = tan.get(p).copied().filter(|_| inner(*p)) else {
                        continue;
                    };
                    let c = self.apply_edge(&node.recipe, k, e, t, true).map_err(lift)?;
                    acc = Some(match acc {
                        None => c,
                        Some(a) => self
                            .t_bin(ir::BinOp::Add(a.v.prim_type()), a, c)
                            .map_err(lift)?,
                    });
                }
                if let Some(a) = acc {
                    tan.insert(k, a);
                }
            }
            for o in &outs {
                res.push(with_elems(o, |t| {
                    tan.get(&t.n)
                        .copied()
                        .filter(|_| inner(t.n))
                        .unwrap_or(T::c(PrimValue::zero(t.v.prim_type())))
                }));
            }
        } else {
            let mut adj: HashMap<u32, T> = HashMap::new();
            for (o, s) in outs.iter().zip(&seedv) {
                for (t, sv) in o.elems().into_iter().zip(s.elems()) {
                    if inner(t.n) {
                        self.accumulate(&mut adj, t.n, sv).map_err(lift)?;
                    }
                }
            }
            for k in (start..end).rev() {
                let Some(a) = adj.get(&k).copied() else {
                    continue;
                };
                let node = self.tape.node(k).clone();
                for (p, e) in &node.ins {
                    if inner(*p) {
                        let c = self
                            .apply_edge(&node.recipe, k, e, a, false)
                            .map_err(lift)?;
                        self.accumulate(&mut adj, *p, c).map_err(lift)?;
                    }
                }
            }
            for i in &inputs {
                res.push(with_elems(i, |t| {
                    adj.get(&t.n)
                        .copied()
                        .filter(|_| inner(t.n))
                        .unwrap_or(T::c(PrimValue::zero(t.v.prim_type())))
                }));
            }
        }
        Ok(res)
    }

    /// `adj[n] += v` (traced).
    fn accumulate(&mut self, adj: &mut HashMap<u32, T>, n: u32, v: T) -> Result<(), TraceError> {
        let new = match adj.get(&n).copied() {
            None => v,
            Some(a) => self.t_bin(tape::add_op(a.v.prim_type()), a, v)?,
        };
        adj.insert(n, new);
        Ok(())
    }

    /// A value with every differentiable scalar replaced by a fresh copy node.
    fn fresh_copies(&mut self, v: TV) -> TV {
        let mut copy = |t: T| {
            if has_tangent(t.v.prim_type()) {
                let one = match t.v.prim_type() {
                    PrimType::Float(ft) => PrimValue::float(ft, 1.0),
                    PrimType::Int(it) => PrimValue::int(it, 1),
                    PrimType::Bool => PrimValue::Bool(true),
                };
                T {
                    v: t.v,
                    n: self.tape.copy_of(t.n, one),
                }
            } else {
                t
            }
        };
        match v {
            TV::S(t) => TV::S(copy(t)),
            TV::A(mut a) => {
                for t in a.d.iter_mut() {
                    *t = copy(*t);
                }
                TV::A(a)
            }
            other => other,
        }
    }

    /// A tangent (`fwd`) pushed through, or an adjoint pulled back through, edge `e` of node `k`,
    /// in traced arithmetic.
    fn apply_edge(
        &mut self,
        r: &Recipe,
        k: u32,
        e: &Edge,
        t: T,
        fwd: bool,
    ) -> Result<T, TraceError> {
        match e {
            Edge::Scale(p, i) => {
                let d = self.traced_partial(r, k, *i, *p)?;
                self.t_bin(tape::mul_op(d.v.prim_type()), d, t)
            }
            Edge::Conv(op) if fwd => self.t_conv(*op, t),
            Edge::Conv(op) => self.t_conv(
                ir::ConvOp {
                    from: op.to,
                    to: op.from,
                },
                t,
            ),
            Edge::Bits(f) if fwd => self.t_math(*f, vec![t]),
            Edge::Bits(ir::MathFn::ToBits(ft)) => self.t_math(ir::MathFn::FromBits(*ft), vec![t]),
            Edge::Bits(ir::MathFn::FromBits(ft)) => self.t_math(ir::MathFn::ToBits(*ft), vec![t]),
            Edge::Bits(f) => Err(TraceError::Failed(format!(
                "internal error: {f:?} is not a bit reinterpretation"
            ))),
        }
    }

    /// Partial `i` of node `k` (computed as `r`) as a traced value, so that derivatives of
    /// derivatives see how it depends on the operands. `p` is its numeric value, used where the
    /// partial is locally constant (sums, `min`/`max`, `floor`, integer division, ...).
    fn traced_partial(&mut self, r: &Recipe, k: u32, i: u8, p: PrimValue) -> Result<T, TraceError> {
        use ir::BinOp as B;
        use ir::MathFn as M;
        let c = |v: f64| T::c(fconst(p.prim_type(), v));
        let pt = p.prim_type();
        Ok(match r {
            Recipe::Leaf | Recipe::Un(..) => T::c(p),
            Recipe::Bin(op, x, y) => match (op, pt) {
                (B::Mul(_), _) => {
                    if i == 0 {
                        *y
                    } else {
                        *x
                    }
                }
                (B::Div(_), PrimType::Float(_)) => {
                    if i == 0 {
                        self.t_bin(B::Div(pt), c(1.0), *y)?
                    } else {
                        let q = self.t_bin(B::Div(pt), *x, *y)?;
                        let q = self.t_bin(B::Div(pt), q, *y)?;
                        self.t_un(ir::UnOp::Neg(pt), q)?
                    }
                }
                (B::Pow(_), PrimType::Float(ft)) => {
                    let (xv, yv) = (x.v.as_f64().unwrap_or(0.0), y.v.as_f64().unwrap_or(0.0));
                    if i == 0 {
                        if xv == 0.0 && yv < 1.0 {
                            c(0.0)
                        } else {
                            let y1 = self.t_bin(B::Sub(pt), *y, c(1.0))?;
                            let pw = self.t_bin(B::Pow(pt), *x, y1)?;
                            self.t_bin(B::Mul(pt), *y, pw)?
                        }
                    } else if xv > 0.0 {
                        let xy = self.t_bin(B::Pow(pt), *x, *y)?;
                        let l = self.t_math(M::Log(ft), vec![*x])?;
                        self.t_bin(B::Mul(pt), xy, l)?
                    } else {
                        c(0.0)
                    }
                }
                _ => T::c(p),
            },
            Recipe::Math(f, xs) => {
                let x = |j: usize| xs.get(j).copied().unwrap_or(T::c(p));
                let pv: Vec<PrimValue> = xs.iter().map(|t| t.v).collect();
                let res = T {
                    v: primops::eval_math(*f, &pv)?,
                    n: k,
                };
                let mul = |s: &mut Self, a: T, b: T| s.t_bin(B::Mul(pt), a, b);
                let recip = |s: &mut Self, a: T| s.t_bin(B::Div(pt), c(1.0), a);
                match f {
                    M::Sqrt(_) => {
                        let d = mul(self, c(2.0), res)?;
                        recip(self, d)?
                    }
                    M::Cbrt(_) => {
                        let r2 = mul(self, res, res)?;
                        let d = mul(self, c(3.0), r2)?;
                        recip(self, d)?
                    }
                    M::Exp(_) => res,
                    M::Log(_) => recip(self, x(0))?,
                    M::Log2(_) | M::Log10(_) => {
                        let b: f64 = if matches!(f, M::Log2(_)) { 2.0 } else { 10.0 };
                        let d = mul(self, x(0), c(b.ln()))?;
                        recip(self, d)?
                    }
                    M::Log1p(_) => {
                        let d = self.t_bin(B::Add(pt), c(1.0), x(0))?;
                        recip(self, d)?
                    }
                    M::Sin(ft) => self.t_math(M::Cos(*ft), vec![x(0)])?,
                    M::Cos(ft) => {
                        let s = self.t_math(M::Sin(*ft), vec![x(0)])?;
                        self.t_un(ir::UnOp::Neg(pt), s)?
                    }
                    M::Sinh(ft) => self.t_math(M::Cosh(*ft), vec![x(0)])?,
                    M::Cosh(ft) => self.t_math(M::Sinh(*ft), vec![x(0)])?,
                    M::Tan(_) | M::Tanh(_) => {
                        let r2 = mul(self, res, res)?;
                        if matches!(f, M::Tan(_)) {
                            self.t_bin(B::Add(pt), c(1.0), r2)?
                        } else {
                            self.t_bin(B::Sub(pt), c(1.0), r2)?
                        }
                    }
                    M::Atan(_) => {
                        let x2 = mul(self, x(0), x(0))?;
                        let d = self.t_bin(B::Add(pt), c(1.0), x2)?;
                        recip(self, d)?
                    }
                    M::Asin(ft) | M::Acos(ft) => {
                        let x2 = mul(self, x(0), x(0))?;
                        let d = self.t_bin(B::Sub(pt), c(1.0), x2)?;
                        let d = self.t_math(M::Sqrt(*ft), vec![d])?;
                        let r = recip(self, d)?;
                        if matches!(f, M::Acos(_)) {
                            self.t_un(ir::UnOp::Neg(pt), r)?
                        } else {
                            r
                        }
                    }
                    M::Atan2(_) => {
                        let (yy, xx) = (x(0), x(1));
                        let x2 = mul(self, xx, xx)?;
                        let y2 = mul(self, yy, yy)?;
                        let d = self.t_bin(B::Add(pt), x2, y2)?;
                        if i == 0 {
                            self.t_bin(B::Div(pt), xx, d)?
                        } else {
                            let ny = self.t_un(ir::UnOp::Neg(pt), yy)?;
                            self.t_bin(B::Div(pt), ny, d)?
                        }
                    }
                    M::Hypot(_) => self.t_bin(B::Div(pt), x(i as usize), res)?,
                    M::Fma(_) => match i {
                        0 => x(1),
                        1 => x(0),
                        _ => c(1.0),
                    },
                    M::Lerp(_) => match i {
                        0 => self.t_bin(B::Sub(pt), c(1.0), x(2))?,
                        1 => x(2),
                        _ => self.t_bin(B::Sub(pt), x(1), x(0))?,
                    },
                    M::Asinh(_) | M::Acosh(_) | M::Atanh(_) | M::Erf(_) | M::Erfc(_) => {
                        return Err(TraceError::NotSupported(format!(
                            "not supported by the AD oracle: a nested derivative of {f:?}"
                        )))
                    }
                    _ => T::c(p),
                }
            }
        })
    }

    // ----- arrays --------------------------------------------------------------------------

    /// The flat positions an index selects, and the shape of the result.
    fn resolve(
        &self,
        shape: &[usize],
        idx: &[DimIndex],
        loc: &Option<SrcLoc>,
    ) -> R<(Vec<usize>, Vec<usize>)> {
        if idx.len() > shape.len() {
            return err("internal error: too many indices", loc);
        }
        // Per dimension: the selected coordinates (None = removed dimension).
        let mut sel: Vec<(Vec<usize>, bool)> = vec![];
        let mut shown = vec![];
        let mut ok = true;
        for (k, &n) in shape.iter().enumerate() {
            match idx.get(k) {
                None => sel.push(((0..n).collect(), true)),
                Some(DimIndex::Fix(i)) => {
                    let i = self.int(i, loc)?;
                    shown.push(i.to_string());
                    if i < 0 || i >= n as i128 {
                        ok = false;
                        sel.push((vec![], false));
                    } else {
                        sel.push((vec![i as usize], false));
                    }
                }
                Some(DimIndex::Slice { start, len, stride }) => {
                    let (st, ln, sd) = (
                        self.int(start, loc)?,
                        self.int(len, loc)?,
                        self.int(stride, loc)?,
                    );
                    shown.push(format!("{st}:{}:{sd}", st + ln * sd));
                    let last = st + (ln - 1) * sd;
                    let n = n as i128;
                    let valid = ln == 0
                        || ln > 0 && sd != 0 && (0..n).contains(&st) && (0..n).contains(&last);
                    if !valid {
                        ok = false;
                        sel.push((vec![], true));
                    } else {
                        sel.push(((0..ln).map(|j| (st + j * sd) as usize).collect(), true));
                    }
                }
            }
        }
        if !ok {
            return err(
                format!(
                    "index [{}] out of bounds for array of shape {:?}",
                    shown.join(", "),
                    shape
                ),
                loc,
            );
        }
        let out_shape: Vec<usize> = sel.iter().filter(|s| s.1).map(|s| s.0.len()).collect();
        let mut pos = vec![0usize];
        for (k, (coords, _)) in sel.iter().enumerate() {
            let stride: usize = shape[k + 1..].iter().product();
            let mut next = Vec::with_capacity(pos.len() * coords.len());
            for p in &pos {
                for c in coords {
                    next.push(p + c * stride);
                }
            }
            pos = next;
        }
        Ok((pos, out_shape))
    }

    fn index(&self, a: &TArr, idx: &[DimIndex], loc: &Option<SrcLoc>) -> R<TV> {
        let (pos, shape) = self.resolve(&a.shape, idx, loc)?;
        let d: Vec<T> = pos.iter().map(|&p| a.d[p]).collect();
        if shape.is_empty() {
            return Ok(TV::S(d[0]));
        }
        Ok(TV::A(TArr {
            elem: a.elem,
            shape,
            d,
        }))
    }

    fn update(&self, mut a: TArr, idx: &[DimIndex], x: &TV, loc: &Option<SrcLoc>) -> R<TArr> {
        let (pos, shape) = self.resolve(&a.shape, idx, loc)?;
        match x {
            TV::S(t) => pos.iter().for_each(|&p| a.d[p] = *t),
            TV::A(src) if src.shape == shape => {
                for (&p, t) in pos.iter().zip(&src.d) {
                    a.d[p] = *t;
                }
            }
            other => {
                return err(
                    format!(
                        "cannot write a value of type {} into a slice of shape {:?}",
                        other.type_name(),
                        shape
                    ),
                    loc,
                )
            }
        }
        Ok(a)
    }

    // ----- control -------------------------------------------------------------------------

    fn run_loop(
        &mut self,
        params: &[(ir::Param, SubExp)],
        form: &LoopForm,
        body: &Body,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<TV>> {
        let inits = params
            .iter()
            .map(|(_, s)| self.se(s, loc))
            .collect::<R<Vec<_>>>()?;
        for ((p, _), v) in params.iter().zip(inits) {
            self.set(&p.name, v);
        }
        let step = |tr: &mut Self| -> R<()> {
            let r = tr.body(body, loc)?;
            for ((p, _), v) in params.iter().zip(r) {
                tr.set(&p.name, v);
            }
            Ok(())
        };
        match form {
            LoopForm::For { i, it, bound } => {
                let n = self.int(bound, loc)?;
                let mut k: i128 = 0;
                while k < n {
                    self.set(i, TV::S(T::c(PrimValue::int(*it, k))));
                    step(self)?;
                    k += 1;
                }
            }
            LoopForm::While(c) => {
                while self.bool(&SubExp::Var(c.clone()), loc)? {
                    step(self)?;
                }
            }
        }
        params.iter().map(|(p, _)| self.get(&p.name, loc)).collect()
    }

    // ----- SOACs ---------------------------------------------------------------------------

    fn inputs(&self, arrs: &[VName], w: usize, loc: &Option<SrcLoc>) -> R<Vec<TV>> {
        let mut out = vec![];
        for a in arrs {
            let v = self.get(a, loc)?;
            match &v {
                TV::A(x) if x.shape.first() == Some(&w) => {}
                TV::Acc(_) => {}
                other => {
                    return err(
                        format!(
                            "input array of type {} does not have outer size {w}",
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

    fn dests(&self, dest: &[VName], loc: &Option<SrcLoc>) -> R<Vec<TArr>> {
        dest.iter().map(|d| self.arr(d, loc)).collect()
    }

    fn soac(&mut self, s: &Soac, loc: &Option<SrcLoc>) -> R<Vec<TV>> {
        let row_of = |v: &TV, i: usize| match v {
            TV::A(a) => a.row(i),
            other => other.clone(),
        };
        match s {
            Soac::Map { w, arrs, lam } => {
                let w = self.size(w, loc)?;
                let inputs = self.inputs(arrs, w, loc)?;
                let mut cols: Vec<Vec<TV>> = vec![vec![]; lam.ret.len()];
                for i in 0..w {
                    let args = inputs.iter().map(|v| row_of(v, i)).collect();
                    let r = self.lambda(lam, args, loc)?;
                    for (c, v) in cols.iter_mut().zip(r) {
                        c.push(v);
                    }
                }
                let acc_in = inputs.iter().find(|v| matches!(v, TV::Acc(_))).cloned();
                let mut out = vec![];
                for (c, t) in cols.into_iter().zip(&lam.ret) {
                    match t {
                        Type::Acc { .. } => {
                            match c.last().cloned().or(acc_in.clone()) {
                                Some(a) => out.push(a),
                                None => return err(
                                    "internal error: map returns an accumulator it was not given",
                                    loc,
                                ),
                            }
                        }
                        t => {
                            let elem = t.elem().unwrap_or(PrimType::Bool);
                            out.push(TV::A(stack(elem, c, self.type_shape(t), loc)?));
                        }
                    }
                }
                Ok(out)
            }
            Soac::Reduce { w, arrs, op } | Soac::Scan { w, arrs, op } => {
                let scan = matches!(s, Soac::Scan { .. });
                let w = self.size(w, loc)?;
                let inputs = self.inputs(arrs, w, loc)?;
                let mut acc = op
                    .neutral
                    .iter()
                    .map(|n| self.se(n, loc))
                    .collect::<R<Vec<_>>>()?;
                let mut cols: Vec<Vec<TV>> = vec![vec![]; acc.len()];
                for i in 0..w {
                    let mut args = acc;
                    args.extend(inputs.iter().map(|v| row_of(v, i)));
                    acc = self.lambda(&op.lam, args, loc)?;
                    if scan {
                        for (c, v) in cols.iter_mut().zip(&acc) {
                            c.push(v.clone());
                        }
                    }
                }
                if !scan {
                    return Ok(acc);
                }
                let ne = op
                    .neutral
                    .iter()
                    .map(|n| self.se(n, loc))
                    .collect::<R<Vec<_>>>()?;
                cols.into_iter()
                    .zip(ne)
                    .map(|(c, n)| Ok(TV::A(stack(elem_of(&n), c, n.shape().to_vec(), loc)?)))
                    .collect()
            }
            Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            } => {
                let w = self.size(w, loc)?;
                let is = self.inputs(std::slice::from_ref(inds), w, loc)?;
                let vs = self.inputs(vals, w, loc)?;
                let mut ds = self.dests(dest, loc)?;
                let Some(TV::A(is)) = is.into_iter().next() else {
                    return err("internal error: reduce_by_index without indices", loc);
                };
                for j in 0..w {
                    let b = is.d[j].v.as_i128().unwrap_or(-1);
                    if ds
                        .iter()
                        .any(|d| b < 0 || b >= d.shape.first().copied().unwrap_or(0) as i128)
                    {
                        continue;
                    }
                    let b = b as usize;
                    let mut args: Vec<TV> = ds.iter().map(|d| d.row(b)).collect();
                    args.extend(vs.iter().map(|v| row_of(v, j)));
                    let r = self.lambda(&op.lam, args, loc)?;
                    for (d, v) in ds.iter_mut().zip(r) {
                        let rl = d.row_len();
                        write_row(d, b * rl, &v, loc)?;
                    }
                }
                Ok(ds.into_iter().map(TV::A).collect())
            }
            Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            } => {
                let w = self.size(w, loc)?;
                let is = self.inputs(inds, w, loc)?;
                let vs = self.inputs(vals, w, loc)?;
                let mut ds = self.dests(dest, loc)?;
                let r = inds.len();
                for j in 0..w {
                    let idx: Vec<i128> = is
                        .iter()
                        .map(|v| match v {
                            TV::A(a) => a.d[j].v.as_i128().unwrap_or(-1),
                            _ => -1,
                        })
                        .collect();
                    for (d, v) in ds.iter_mut().zip(&vs) {
                        if d.shape.len() < r {
                            return err(
                                "internal error: scatter with more indices than dimensions",
                                loc,
                            );
                        }
                        let mut rel = 0usize;
                        let mut inb = true;
                        for (k, &i) in idx.iter().enumerate() {
                            let n = d.shape[k];
                            if i < 0 || i >= n as i128 {
                                inb = false;
                                break;
                            }
                            rel = rel * n + i as usize;
                        }
                        if !inb {
                            continue;
                        }
                        let rl: usize = d.shape[r..].iter().product();
                        write_row(d, rel * rl, &row_of(v, j), loc)?;
                    }
                }
                Ok(ds.into_iter().map(TV::A).collect())
            }
        }
    }

    // ----- accumulators --------------------------------------------------------------------

    fn with_acc(&mut self, inputs: &[AccInput], lam: &Lambda, loc: &Option<SrcLoc>) -> R<Vec<TV>> {
        let base = self.accs.len();
        for inp in inputs {
            let shape = inp
                .shape
                .iter()
                .map(|d| self.size(d, loc))
                .collect::<R<Vec<_>>>()?;
            let arrs = self.dests(&inp.arrs, loc)?;
            for a in &arrs {
                if a.shape.len() < shape.len() || a.shape[..shape.len()] != shape[..] {
                    return err(
                        format!(
                            "accumulator array of shape {:?} does not start with {:?}",
                            a.shape, shape
                        ),
                        loc,
                    );
                }
            }
            self.accs.push(AccSt {
                arrs,
                shape,
                op: inp.op.clone(),
            });
        }
        let args = (0..inputs.len()).map(|k| TV::Acc(base + k)).collect();
        let res = self.lambda(lam, args, loc)?;
        let states = self.accs.split_off(base);
        let mut out: Vec<TV> = states
            .into_iter()
            .flat_map(|s| s.arrs.into_iter().map(TV::A))
            .collect();
        out.extend(res.into_iter().skip(inputs.len()));
        Ok(out)
    }

    fn upd_acc(
        &mut self,
        acc: &VName,
        idx: &[SubExp],
        vals: &[SubExp],
        loc: &Option<SrcLoc>,
    ) -> R<TV> {
        let TV::Acc(k) = self.get(acc, loc)? else {
            return err(
                "internal error: update of something not an accumulator",
                loc,
            );
        };
        let ix = idx
            .iter()
            .map(|i| self.int(i, loc))
            .collect::<R<Vec<_>>>()?;
        let vs = vals
            .iter()
            .map(|v| self.se(v, loc))
            .collect::<R<Vec<_>>>()?;
        let Some(st) = self.accs.get(k) else {
            return err("internal error: accumulator used outside its withacc", loc);
        };
        if vs.len() != st.arrs.len() || ix.len() != st.shape.len() {
            return err("internal error: accumulator update of the wrong arity", loc);
        }
        if ix
            .iter()
            .zip(&st.shape)
            .any(|(&i, &n)| i < 0 || i >= n as i128)
        {
            return Ok(TV::Acc(k));
        }
        let offs: Vec<usize> = st
            .arrs
            .iter()
            .map(|a| {
                let mut rel = 0usize;
                for (d, &i) in ix.iter().enumerate() {
                    rel = rel * a.shape[d] + i as usize;
                }
                rel * a.shape[ix.len()..].iter().product::<usize>()
            })
            .collect();
        let new = match st.op.clone() {
            None => vs,
            Some(op) => {
                let mut args: Vec<TV> = st
                    .arrs
                    .iter()
                    .zip(&offs)
                    .map(|(a, &off)| {
                        let row = a.shape[ix.len()..].to_vec();
                        let n: usize = row.iter().product();
                        if row.is_empty() {
                            TV::S(a.d[off])
                        } else {
                            TV::A(TArr {
                                elem: a.elem,
                                shape: row,
                                d: a.d[off..off + n].to_vec(),
                            })
                        }
                    })
                    .collect();
                args.extend(vs);
                self.lambda(&op.lam, args, loc)?
            }
        };
        for (m, v) in new.iter().enumerate() {
            let off = offs[m];
            write_row(&mut self.accs[k].arrs[m], off, v, loc)?;
        }
        Ok(TV::Acc(k))
    }
}

/// Writes a row value at flat offset `off`.
fn write_row(a: &mut TArr, off: usize, v: &TV, loc: &Option<SrcLoc>) -> R<()> {
    let e = v.elems();
    if off + e.len() > a.d.len() || matches!(v, TV::Acc(_)) {
        return err(
            format!(
                "cannot write a value of type {} into an array of shape {:?}",
                v.type_name(),
                a.shape
            ),
            loc,
        );
    }
    a.d[off..off + e.len()].copy_from_slice(&e);
    Ok(())
}

fn concat(dim: usize, arrs: &[TArr], w: usize, loc: &Option<SrcLoc>) -> R<TArr> {
    let Some(first) = arrs.first() else {
        return err("internal error: concat of no arrays", loc);
    };
    if dim >= first.shape.len() {
        return err("internal error: concat beyond the rank", loc);
    }
    let mut total = 0;
    for a in arrs {
        let same = a.shape.len() == first.shape.len()
            && a.shape
                .iter()
                .zip(&first.shape)
                .enumerate()
                .all(|(k, (x, y))| k == dim || x == y);
        if !same {
            return err(
                format!(
                    "cannot concatenate arrays of shapes {:?} and {:?}",
                    first.shape, a.shape
                ),
                loc,
            );
        }
        total += a.shape[dim];
    }
    if total != w {
        return err(format!("concatenation has size {total}, expected {w}"), loc);
    }
    let outer: usize = first.shape[..dim].iter().product();
    let mut shape = first.shape.clone();
    shape[dim] = total;
    let mut d = vec![];
    for o in 0..outer {
        for a in arrs {
            let chunk: usize = a.shape[dim..].iter().product();
            d.extend_from_slice(&a.d[o * chunk..(o + 1) * chunk]);
        }
    }
    Ok(TArr {
        elem: first.elem,
        shape,
        d,
    })
}

fn rearrange(perm: &[usize], a: &TArr, loc: &Option<SrcLoc>) -> R<TArr> {
    let r = a.shape.len();
    let mut seen = vec![false; r];
    if perm.len() != r
        || perm
            .iter()
            .any(|&p| p >= r || std::mem::replace(&mut seen[p], true))
    {
        return err(format!("invalid permutation {perm:?}"), loc);
    }
    let strides: Vec<usize> = (0..r).map(|k| a.shape[k + 1..].iter().product()).collect();
    let shape: Vec<usize> = perm.iter().map(|&p| a.shape[p]).collect();
    let n: usize = shape.iter().product();
    let mut d = Vec::with_capacity(n);
    let mut coord = vec![0usize; r];
    for _ in 0..n {
        let src: usize = coord
            .iter()
            .enumerate()
            .map(|(k, &c)| c * strides[perm[k]])
            .sum();
        d.push(a.d[src]);
        for k in (0..r).rev() {
            coord[k] += 1;
            if coord[k] < shape[k] {
                break;
            }
            coord[k] = 0;
        }
    }
    Ok(TArr {
        elem: a.elem,
        shape,
        d,
    })
}

#[cfg(test)]
mod tests {
    use crate::values::{parse_values, write_text};

    /// Runs `entry` of `src` on the oracle and on the transformed code (when the
    /// transformation supports it), returning the oracle's results as text.
    fn both(src: &str, entry: &str, args: &str) -> String {
        let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let a = parse_values(args.as_bytes()).expect("values");
        let o = c
            .run_oracle(entry, a.clone())
            .unwrap_or_else(|e| panic!("oracle: {e}"));
        let text: Vec<String> = o.iter().map(write_text).collect();
        if !c.entry_errors.contains_key(entry) {
            let t = c
                .run_interp(entry, a)
                .unwrap_or_else(|e| panic!("interp: {e}"));
            let ttext: Vec<String> = t.iter().map(write_text).collect();
            assert_eq!(text, ttext, "oracle and transformation disagree on {entry}");
        }
        text.join(" ")
    }

    #[test]
    fn scalar_rules() {
        let src = "
entry ops (x: f64) (y: f64) =
  ( jvp (\\x -> x / y) x 1, jvp (\\y -> x / y) y 1, jvp (\\x -> x ** y) x 1,
    jvp (\\y -> x ** y) y 1, jvp (\\x -> f64.max x y) x 1, jvp (\\x -> -x) x 1,
    jvp f64.abs (-x) 1, jvp (\\x -> f64.atan2 x y) x 1, jvp f64.exp 0 1 )
entry ints (x: i32) = (jvp (\\x -> x * x) x 1, jvp (\\x -> x / 2) x 1, jvp (\\x -> x % 3) x 1)
entry convs (x: f64) = (jvp i32.f64 x 1, jvp (\\x -> f64.i32 (i32.f64 x)) x 1, jvp (\\x -> x > 1) x 1)
entry bits (x: f32) = jvp (\\x -> f32.from_bits (f32.to_bits x)) x 2";
        assert_eq!(
            both(src, "ops", "2.0 4.0"),
            "0.25f64 -0.125f64 32.0f64 11.090354888959125f64 0.0f64 -1.0f64 -1.0f64 0.2f64 1.0f64"
        );
        // Integers are differentiated formally: 2x; 1 quot 2 = 0; 1.
        assert_eq!(both(src, "ints", "3"), "6i32 0i32 1i32");
        assert_eq!(both(src, "convs", "2.5"), "1i32 1.0f64 false");
        assert_eq!(both(src, "bits", "1.5f32"), "2.0f32");
    }

    #[test]
    fn reverse_accumulates_over_shared_nodes() {
        // y = (x·x, x) with ȳ = (1, 3): 2x + 3.
        let src = "entry f (x: f64) = vjp (\\x -> (x * x, x)) x (1, 3)
entry g (x: f64) = vjp (\\x -> replicate 3 x) x [1, 2, 3]
entry h (x: f64) (b: bool) = vjp (\\(x, b) -> if b then x * 2 else x) (x, b) 1";
        assert_eq!(both(src, "f", "2.0"), "7.0f64");
        assert_eq!(both(src, "g", "2.0"), "6.0f64");
        assert_eq!(both(src, "h", "2.0 true"), "2.0f64 false");
    }

    #[test]
    fn control_flow_and_arrays() {
        let src = "
entry lp (x: f64) = jvp (\\x -> loop acc = 1 for _i < 3 do acc * x) x 1
entry wh (x: f64) = vjp (\\x -> (loop (y, n) = (x, 0) while n < 2 do (y * y, n + 1)).0) x 1
entry upd (xs: [3]f64) = vjp (\\xs -> let ys = copy xs with [1] = xs[0] * xs[2] in ys[1] + ys[2]) xs 1
entry sc (xs: [3]f64) = vjp (\\xs -> scatter (replicate 2 0) [1, 0, 7] xs) xs [10, 20]
entry tr (xss: [2][2]f64) = jvp (\\xss -> map (\\r -> r[0] - r[1]) (transpose xss)) xss [[1, 0], [0, 0]]
entry conc (xs: [2]f64) = vjp (\\xs -> (xs ++ xs)[1:3]) xs [1, 2]";
        assert_eq!(both(src, "lp", "2.0"), "12.0f64");
        // y = x⁴: 4x³ = 32.
        assert_eq!(both(src, "wh", "2.0"), "32.0f64");
        assert_eq!(
            both(src, "upd", "[1.0, 2.0, 3.0]"),
            "[3.0f64, 0.0f64, 2.0f64]"
        );
        assert_eq!(
            both(src, "sc", "[1.0, 2.0, 3.0]"),
            "[20.0f64, 10.0f64, 0.0f64]"
        );
        assert_eq!(
            both(src, "tr", "[[1.0, 2.0], [3.0, 4.0]]"),
            "[1.0f64, 0.0f64]"
        );
        assert_eq!(both(src, "conc", "[1.0, 2.0]"), "[2.0f64, 1.0f64]");
    }

    #[test]
    fn nested_and_batched_ad() {
        let src = "
entry second (x: f64) = jvp (\\a -> jvp (\\y -> y * y * y) a 1) x 1
entry batch (x: f64) = mjp2 (\\x -> (x * x, x * x * x)) x [(1, 0), (0, 1)]
entry jbatch (x: f64) = jmp (\\x -> x * x) x [1, 2]";
        assert_eq!(both(src, "second", "2.0"), "12.0f64");
        // Nested reverse mode, evaluated by the oracle itself (the transformation of the
        // inner `vjp` may not exist yet: `both` then only runs the oracle).
        let nested = "
entry hvp (x: f64) = vjp (\\x -> jvp (\\y -> y * y * y) x 1) x 1
entry fov (x: f64) = jvp (\\x -> vjp (\\y -> f64.sin y * y) x 1) x 1
entry rov (x: f64) = vjp (\\x -> vjp (\\y -> y * y * x) x 1) x 1
entry confusion (x: f64) = jvp (\\x -> x * jvp (\\y -> x + y) 1 1) x 1
entry third (x: f64) = jvp (\\a -> jvp (\\b -> jvp (\\c -> f64.exp (2 * c)) b 1) a 1) x 1";
        assert_eq!(both(nested, "hvp", "2.0"), "12.0f64");
        let fov = -(2f64.sin()) * 2.0 + 2.0 * 2f64.cos();
        let got: f64 = both(nested, "fov", "2.0")
            .trim_end_matches("f64")
            .parse()
            .unwrap();
        assert!((got - fov).abs() < 1e-12, "{got} vs {fov}");
        // d/dx (2x·x) = 4x; counting the free `x` as perturbed inside would give 6x.
        assert_eq!(both(nested, "rov", "2.0"), "8.0f64");
        assert_eq!(both(nested, "confusion", "3.0"), "1.0f64");
        assert_eq!(both(nested, "third", "0.0"), "8.0f64");
        assert_eq!(both(src, "batch", "2.0"), "4.0f64 8.0f64 [4.0f64, 12.0f64]");
        assert_eq!(both(src, "jbatch", "3.0"), "[6.0f64, 12.0f64]");
    }

    #[test]
    fn gamma_derivative_uses_digamma() {
        let c = crate::compile("test.fut", "entry g (x: f64) = vjp f64.gamma x 1").unwrap();
        let out = c.run_oracle("g", parse_values(b"2.0").unwrap()).unwrap();
        // Γ'(2) = Γ(2)·ψ(2) = 1 − γ.
        match &out[..] {
            [crate::value::Value::Scalar(crate::prim::PrimValue::F64(v))] => {
                assert!((v - 0.42278433509846713).abs() < 1e-12, "{v}")
            }
            other => panic!("{other:?}"),
        }
    }
}
