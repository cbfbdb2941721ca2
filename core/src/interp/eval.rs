//! The evaluator: statements, expressions, bodies, loops and function calls.
//!
//! Variables live in one register file indexed by `VName::id` (ids are unique in the whole
//! program, and Futhark has no recursion, so each function has at most one activation at a time;
//! a recursive call is reported as an error). When a body finishes, the variables it bound are
//! cleared, so that an array returned by a loop body is referenced only by the loop parameter and
//! the next in-place `Update` needs no copy.

use super::val::{append_range, fill_strided, gather, shape_str, write_strided, Arr, Builder, Val};
use super::RuntimeError;
use crate::diag::SrcLoc;
use crate::ir::{
    self, BinOp, Body, DimIndex, Exp, FunDef, Lambda, LoopForm, Pat, Stm, SubExp, Type,
};
use crate::prim::{IntType, PrimType, PrimValue};
use crate::primops;
use crate::value::Buffer;
use std::collections::HashMap;

pub(crate) type R<T> = Result<T, RuntimeError>;

/// An error at a location.
pub(crate) fn err<T>(msg: impl Into<String>, loc: &Option<SrcLoc>) -> R<T> {
    Err(RuntimeError::new(msg, loc.clone()))
}

/// The state of one accumulator of a running `WithAcc`.
pub(crate) struct AccState<'p> {
    pub arrs: Vec<Arr>,
    /// The accumulator's index shape (outer dimensions of its arrays).
    pub shape: Vec<usize>,
    pub op: Option<&'p ir::Operator>,
}

pub(crate) struct Interp<'p> {
    pub env: Vec<Val>,
    pub funs: HashMap<&'p str, (usize, &'p FunDef)>,
    pub active: Vec<bool>,
    pub accs: Vec<AccState<'p>>,
    /// Evaluate `Jvp`/`Vjp` nodes with the AD oracle ([`super::dynad`]) instead of failing.
    pub oracle: bool,
    /// Where calls of functions that are not in the program go (see [`ExtFuns`]).
    pub ext: Option<&'p dyn ExtFuns<'p>>,
}

/// Functions defined outside the interpreter's [`ir::Program`]: the kernel IR evaluator
/// ([`crate::seg::eval`]) runs its host functions through this hook, so that calls from
/// per-thread code (and from host statements, which it runs with [`Interp::exec_exp`]) reach
/// them.
pub(crate) trait ExtFuns<'p> {
    /// Calls `fun` on `args` (sizes first), as [`Interp::apply`] does.
    fn apply(
        &self,
        interp: &mut Interp<'p>,
        fun: &str,
        args: Vec<Val>,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>>;
}

/// Fast paths for the common scalar binary operations; `None` defers to [`primops`].
#[inline(always)]
pub(crate) fn fast_binop(op: BinOp, x: PrimValue, y: PrimValue) -> Option<PrimValue> {
    use PrimValue as P;
    Some(match (op, x, y) {
        (BinOp::Add(_), P::I64(a), P::I64(b)) => P::I64(a.wrapping_add(b)),
        (BinOp::Sub(_), P::I64(a), P::I64(b)) => P::I64(a.wrapping_sub(b)),
        (BinOp::Mul(_), P::I64(a), P::I64(b)) => P::I64(a.wrapping_mul(b)),
        (BinOp::Add(_), P::I32(a), P::I32(b)) => P::I32(a.wrapping_add(b)),
        (BinOp::Sub(_), P::I32(a), P::I32(b)) => P::I32(a.wrapping_sub(b)),
        (BinOp::Mul(_), P::I32(a), P::I32(b)) => P::I32(a.wrapping_mul(b)),
        (BinOp::Add(_), P::F64(a), P::F64(b)) => P::F64(a + b),
        (BinOp::Sub(_), P::F64(a), P::F64(b)) => P::F64(a - b),
        (BinOp::Mul(_), P::F64(a), P::F64(b)) => P::F64(a * b),
        (BinOp::Div(_), P::F64(a), P::F64(b)) => P::F64(a / b),
        (BinOp::Add(_), P::F32(a), P::F32(b)) => P::F32(a + b),
        (BinOp::Sub(_), P::F32(a), P::F32(b)) => P::F32(a - b),
        (BinOp::Mul(_), P::F32(a), P::F32(b)) => P::F32(a * b),
        (BinOp::Div(_), P::F32(a), P::F32(b)) => P::F32(a / b),
        _ => return None,
    })
}

#[inline]
pub(crate) fn binop(op: BinOp, x: PrimValue, y: PrimValue, loc: &Option<SrcLoc>) -> R<PrimValue> {
    match fast_binop(op, x, y) {
        Some(v) => Ok(v),
        None => primops::eval_binop(op, x, y).map_err(|m| RuntimeError::new(m, loc.clone())),
    }
}

/// A non-negative `i64`-like index value as `usize`.
fn as_index(p: PrimValue) -> Option<i128> {
    p.as_i128()
}

/// One dimension of a strided view: (size, stride in elements).
pub(crate) type Dim = (usize, isize);

/// The natural row-major strides of a shape.
pub(crate) fn natural_dims(shape: &[usize]) -> Vec<Dim> {
    let mut dims = vec![(0usize, 0isize); shape.len()];
    let mut s: isize = 1;
    for (k, &n) in shape.iter().enumerate().rev() {
        dims[k] = (n, s);
        s = s.saturating_mul(n as isize);
    }
    dims
}

fn index_str(idx: &[(i128, Option<(i128, i128)>)]) -> String {
    let parts: Vec<String> = idx
        .iter()
        .map(|(i, sl)| match sl {
            None => i.to_string(),
            Some((len, stride)) => {
                if *stride == 1 {
                    format!("{}:{}", i, i + len)
                } else {
                    format!("{}:{}:{}", i, i + len * stride, stride)
                }
            }
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

impl<'p> Interp<'p> {
    pub fn new(prog: &'p ir::Program) -> Interp<'p> {
        let funs: HashMap<&'p str, (usize, &'p FunDef)> = prog
            .funs
            .iter()
            .enumerate()
            .map(|(i, f)| (&*f.name, (i, f)))
            .collect();
        Interp {
            env: Vec::with_capacity(prog.name_source.next as usize + 1),
            funs,
            active: vec![false; prog.funs.len()],
            accs: Vec::new(),
            oracle: false,
            ext: None,
        }
    }

    /// An interpreter without a program of its own: every call goes to `ext`, whose functions
    /// are numbered `0..num_funs` (for [`Interp::call_fun`]); `num_names` is a bound of the
    /// variable ids (for the register file's initial capacity).
    pub fn with_ext(ext: &'p dyn ExtFuns<'p>, num_funs: usize, num_names: usize) -> Interp<'p> {
        Interp {
            env: Vec::with_capacity(num_names + 1),
            funs: HashMap::new(),
            active: vec![false; num_funs],
            accs: Vec::new(),
            oracle: false,
            ext: Some(ext),
        }
    }

    // ----- variables -----------------------------------------------------------------------

    #[inline]
    pub fn set(&mut self, v: &ir::VName, x: Val) {
        let i = v.id as usize;
        if i >= self.env.len() {
            self.env.resize(i + 1, Val::Empty);
        }
        self.env[i] = x;
    }

    #[inline]
    pub fn clear(&mut self, v: &ir::VName) {
        if let Some(slot) = self.env.get_mut(v.id as usize) {
            *slot = Val::Empty;
        }
    }

    fn unbound(&self, v: &ir::VName, loc: &Option<SrcLoc>) -> RuntimeError {
        let what = match self.env.get(v.id as usize) {
            Some(Val::Consumed) => "used after it was consumed",
            _ => "is not bound",
        };
        RuntimeError::new(
            format!("internal error: variable `{v}` {what}"),
            loc.clone(),
        )
    }

    #[inline]
    pub fn get(&self, v: &ir::VName, loc: &Option<SrcLoc>) -> R<&Val> {
        match self.env.get(v.id as usize) {
            Some(Val::Empty) | Some(Val::Consumed) | None => Err(self.unbound(v, loc)),
            Some(x) => Ok(x),
        }
    }

    /// Takes a variable's value out of its register (for consuming operations).
    pub fn take(&mut self, v: &ir::VName, loc: &Option<SrcLoc>) -> R<Val> {
        self.get(v, loc)?;
        Ok(std::mem::replace(
            &mut self.env[v.id as usize],
            Val::Consumed,
        ))
    }

    #[inline]
    pub fn val(&self, se: &SubExp, loc: &Option<SrcLoc>) -> R<Val> {
        match se {
            SubExp::Const(c) => Ok(Val::Prim(*c)),
            SubExp::Var(v) => self.get(v, loc).cloned(),
        }
    }

    #[inline]
    pub fn prim(&self, se: &SubExp, loc: &Option<SrcLoc>) -> R<PrimValue> {
        match se {
            SubExp::Const(c) => Ok(*c),
            SubExp::Var(v) => match self.get(v, loc)? {
                Val::Prim(p) => Ok(*p),
                other => err(
                    format!(
                        "internal error: `{v}` is a {}, expected a scalar",
                        other.type_name()
                    ),
                    loc,
                ),
            },
        }
    }

    pub fn arr(&self, v: &ir::VName, loc: &Option<SrcLoc>) -> R<Arr> {
        match self.get(v, loc)? {
            Val::Arr(a) => Ok(a.clone()),
            other => err(
                format!(
                    "internal error: `{v}` is a {}, expected an array",
                    other.type_name()
                ),
                loc,
            ),
        }
    }

    pub fn bool(&self, se: &SubExp, loc: &Option<SrcLoc>) -> R<bool> {
        match self.prim(se, loc)? {
            PrimValue::Bool(b) => Ok(b),
            p => err(
                format!("internal error: expected a bool, got {}", p.prim_type()),
                loc,
            ),
        }
    }

    /// A size or count: a non-negative integer.
    pub fn size(&self, se: &SubExp, loc: &Option<SrcLoc>) -> R<usize> {
        let p = self.prim(se, loc)?;
        match as_index(p) {
            Some(n) if n >= 0 => {
                usize::try_from(n).or_else(|_| err(format!("size {n} is too large"), loc))
            }
            Some(n) => err(format!("negative size {n}"), loc),
            None => err(
                format!("internal error: size of type {}", p.prim_type()),
                loc,
            ),
        }
    }

    /// The shape of a type, with sizes evaluated where they are bound (0 where not).
    pub fn type_shape(&self, t: &Type) -> Vec<usize> {
        t.shape()
            .iter()
            .map(|d| self.size(d, &None).unwrap_or(0))
            .collect()
    }

    // ----- bodies --------------------------------------------------------------------------

    /// Runs the statements of a body (without evaluating or clearing anything else).
    pub fn exec_stms(&mut self, stms: &'p [Stm]) -> R<()> {
        for stm in stms {
            self.exec_stm(stm)?;
        }
        Ok(())
    }

    /// Clears the variables a body's statements bound.
    pub fn clear_body(&mut self, body: &Body) {
        self.clear_stms(&body.stms);
    }

    /// Clears the variables that statements bound (their patterns).
    pub fn clear_stms(&mut self, stms: &[Stm]) {
        for stm in stms {
            for p in &stm.pat.elems {
                self.clear(&p.name);
            }
        }
    }

    /// Runs a body and returns its results; the body's own variables are cleared afterwards.
    pub fn eval_body(&mut self, body: &'p Body, loc: &Option<SrcLoc>) -> R<Vec<Val>> {
        let r = self.exec_stms(&body.stms);
        let out = match r {
            Ok(()) => body
                .result
                .iter()
                .map(|se| self.val(se, loc))
                .collect::<R<Vec<Val>>>(),
            Err(e) => Err(e),
        };
        self.clear_body(body);
        out
    }

    /// Applies a lambda to arguments.
    pub fn call_lambda(
        &mut self,
        lam: &'p Lambda,
        args: Vec<Val>,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
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
        let r = self.eval_body(&lam.body, loc);
        for p in &lam.params {
            self.clear(&p.name);
        }
        r
    }

    /// Binds the values of an expression to its pattern.
    pub fn bind_pat(&mut self, pat: &Pat, loc: &Option<SrcLoc>, vals: Vec<Val>) -> R<()> {
        if vals.len() != pat.elems.len() {
            return err(
                format!(
                    "internal error: {} values bound to a pattern of {} names",
                    vals.len(),
                    pat.elems.len()
                ),
                loc,
            );
        }
        for (p, v) in pat.elems.iter().zip(vals) {
            self.set(&p.name, v);
        }
        Ok(())
    }

    fn bind1(&mut self, pat: &Pat, loc: &Option<SrcLoc>, v: Val) -> R<()> {
        match pat.elems.as_slice() {
            [p] => {
                self.set(&p.name, v);
                Ok(())
            }
            ps => err(
                format!(
                    "internal error: 1 value bound to a pattern of {} names",
                    ps.len()
                ),
                loc,
            ),
        }
    }

    // ----- statements ----------------------------------------------------------------------

    #[inline]
    pub fn exec_stm(&mut self, stm: &'p Stm) -> R<()> {
        self.exec_exp(&stm.pat, &stm.exp, &stm.loc)
    }

    /// Evaluates `exp` and binds its values to `pat`; errors are reported at `loc`.
    pub fn exec_exp(&mut self, pat: &Pat, exp: &'p Exp, loc: &Option<SrcLoc>) -> R<()> {
        let lift = |m: String| RuntimeError::new(m, loc.clone());
        match exp {
            Exp::SubExp(se) => {
                let v = self.val(se, loc)?;
                self.bind1(pat, loc, v)
            }
            Exp::BinOp(op, a, b) => {
                let (x, y) = (self.prim(a, loc)?, self.prim(b, loc)?);
                let r = binop(*op, x, y, loc)?;
                self.bind1(pat, loc, Val::Prim(r))
            }
            Exp::UnOp(op, a) => {
                let x = self.prim(a, loc)?;
                let r = primops::eval_unop(*op, x).map_err(lift)?;
                self.bind1(pat, loc, Val::Prim(r))
            }
            Exp::CmpOp(op, a, b) => {
                let (x, y) = (self.prim(a, loc)?, self.prim(b, loc)?);
                let r = primops::eval_cmpop(*op, x, y).map_err(lift)?;
                self.bind1(pat, loc, Val::Prim(PrimValue::Bool(r)))
            }
            Exp::Conv(op, a) => {
                let x = self.prim(a, loc)?;
                let r = primops::eval_conv(*op, x).map_err(lift)?;
                self.bind1(pat, loc, Val::Prim(r))
            }
            Exp::Math(f, args) => {
                let xs = args
                    .iter()
                    .map(|a| self.prim(a, loc))
                    .collect::<R<Vec<_>>>()?;
                let r = primops::eval_math(*f, &xs).map_err(lift)?;
                self.bind1(pat, loc, Val::Prim(r))
            }
            Exp::Index(v, idx) => {
                let a = self.arr(v, loc)?;
                let r = self.index(&a, idx, loc)?;
                self.bind1(pat, loc, r)
            }
            Exp::Update(v, idx, x) => {
                let x = self.val(x, loc)?;
                let a = match self.take(v, loc)? {
                    Val::Arr(a) => a,
                    other => {
                        return err(
                            format!("internal error: update of a {}", other.type_name()),
                            loc,
                        )
                    }
                };
                let r = self.update(a, idx, &x, loc)?;
                self.bind1(pat, loc, Val::Arr(r))
            }
            Exp::Iota {
                n,
                start,
                stride,
                it,
            } => {
                let n = self.size(n, loc)?;
                let (s, d) = (self.prim(start, loc)?, self.prim(stride, loc)?);
                let (s, d) = match (s.as_i128(), d.as_i128()) {
                    (Some(s), Some(d)) => (s, d),
                    _ => return err("internal error: iota of non-integers", loc),
                };
                let buf =
                    match it {
                        IntType::I64 => {
                            let mut v = crate::mem::vec_with_capacity(n).map_err(lift)?;
                            v.extend(
                                (0..n as i64)
                                    .map(|i| (s as i64).wrapping_add((d as i64).wrapping_mul(i))),
                            );
                            Buffer::I64(v)
                        }
                        IntType::I32 => {
                            let mut v = crate::mem::vec_with_capacity(n).map_err(lift)?;
                            v.extend((0..n as i64).map(|i| {
                                (s as i32).wrapping_add((d as i32).wrapping_mul(i as i32))
                            }));
                            Buffer::I32(v)
                        }
                        t => {
                            let mut b =
                                Buffer::try_with_capacity(PrimType::Int(*t), n).map_err(lift)?;
                            for i in 0..n {
                                b.push(PrimValue::int(
                                    *t,
                                    s.wrapping_add(d.wrapping_mul(i as i128)),
                                ));
                            }
                            b
                        }
                    };
                self.bind1(pat, loc, Val::Arr(Arr::from_buffer(buf, vec![n])))
            }
            Exp::Replicate { shape, value } => {
                let dims = shape
                    .iter()
                    .map(|d| self.size(d, loc))
                    .collect::<R<Vec<_>>>()?;
                let count = crate::mem::elements(&dims).map_err(lift)?;
                let v = self.val(value, loc)?;
                let r = match v {
                    Val::Prim(p) => {
                        Arr::from_buffer(Buffer::try_filled(p, count).map_err(lift)?, dims)
                    }
                    Val::Arr(a) => {
                        let mut sh = dims;
                        sh.extend(a.shape.iter());
                        let total = crate::mem::elements(&sh).map_err(lift)?;
                        let mut buf =
                            Buffer::try_with_capacity(a.elem_type(), total).map_err(lift)?;
                        for _ in 0..count {
                            append_range(&mut buf, &a.data, a.off, a.len());
                        }
                        Arr::from_buffer(buf, sh)
                    }
                    other => {
                        return err(
                            format!("internal error: replicate of a {}", other.type_name()),
                            loc,
                        )
                    }
                };
                self.bind1(pat, loc, Val::Arr(r))
            }
            Exp::ArrayLit { elems, row } => {
                let elem = match row.elem() {
                    Some(e) => e,
                    None => return err("internal error: array literal of accumulators", loc),
                };
                let mut b = Builder::new(elem, elems.len());
                for e in elems {
                    let v = self.val(e, loc)?;
                    b.push(&v).map_err(lift)?;
                }
                let default_row = self.type_shape(row);
                self.bind1(pat, loc, Val::Arr(b.finish(default_row)))
            }
            Exp::Concat { dim, arrs, w } => {
                let arrs = arrs
                    .iter()
                    .map(|a| self.arr(a, loc))
                    .collect::<R<Vec<_>>>()?;
                let w = self.size(w, loc)?;
                let r = concat(*dim, &arrs, w, loc)?;
                self.bind1(pat, loc, Val::Arr(r))
            }
            Exp::Copy(v) => {
                let r = match self.get(v, loc)? {
                    Val::Arr(a) => Val::Arr(Arr::from_buffer(a.to_buffer(), a.shape.clone())),
                    other => other.clone(),
                };
                self.bind1(pat, loc, r)
            }
            Exp::SortByKey { keys, bits } => {
                let a = self.arr(keys, loc)?;
                let Buffer::I64(ks) = a.to_buffer() else {
                    return err("internal error: sort_by_key of non-i64 keys", loc);
                };
                let bits = match self.prim(bits, loc)? {
                    PrimValue::I64(b) => b,
                    _ => return err("internal error: sort_by_key bits not i64", loc),
                };
                let perm = crate::primops::sort_by_key(&ks, bits);
                let sorted = perm.iter().map(|&i| ks[i]).collect();
                let perm = perm.iter().map(|&i| i as i64).collect();
                let n = ks.len();
                self.bind_pat(
                    pat,
                    loc,
                    vec![
                        Val::Arr(Arr::from_buffer(Buffer::I64(sorted), vec![n])),
                        Val::Arr(Arr::from_buffer(Buffer::I64(perm), vec![n])),
                    ],
                )
            }
            Exp::Reshape(shape, v) => {
                let a = self.arr(v, loc)?;
                let dims = shape
                    .iter()
                    .map(|d| self.size(d, loc))
                    .collect::<R<Vec<_>>>()?;
                let n = dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
                if n != Some(a.len()) {
                    return err(
                        format!(
                            "cannot reshape array of shape {} to shape {}",
                            shape_str(&a.shape),
                            shape_str(&dims)
                        ),
                        loc,
                    );
                }
                self.bind1(
                    pat,
                    loc,
                    Val::Arr(Arr {
                        data: a.data,
                        off: a.off,
                        shape: dims,
                    }),
                )
            }
            Exp::Rearrange(perm, v) => {
                let a = self.arr(v, loc)?;
                let mut seen = vec![false; a.shape.len()];
                if perm.len() != a.shape.len()
                    || perm
                        .iter()
                        .any(|&p| p >= seen.len() || std::mem::replace(&mut seen[p], true))
                {
                    return err(
                        format!(
                            "invalid permutation {perm:?} of an array of rank {}",
                            a.shape.len()
                        ),
                        loc,
                    );
                }
                let nat = natural_dims(&a.shape);
                let dims: Vec<Dim> = perm.iter().map(|&p| nat[p]).collect();
                let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
                let buf = gather(&a.data, a.off as isize, &dims);
                self.bind1(pat, loc, Val::Arr(Arr::from_buffer(buf, shape)))
            }
            Exp::Assert { cond, msg, args } => {
                if !self.bool(cond, loc)? {
                    let args = args
                        .iter()
                        .map(|a| Ok(crate::ir::assert_arg_text(&self.prim(a, loc)?)))
                        .collect::<R<Vec<_>>>()?;
                    return err(crate::ir::assert_message(msg, &args), loc);
                }
                self.bind_pat(pat, loc, vec![])
            }
            Exp::Apply { fun, args, .. } => {
                let args = args
                    .iter()
                    .map(|a| self.val(a, loc))
                    .collect::<R<Vec<_>>>()?;
                let r = self.apply(fun, args, loc)?;
                self.bind_pat(pat, loc, r)
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
                let r = self.eval_body(b, loc)?;
                self.bind_pat(pat, loc, r)
            }
            Exp::Loop { params, form, body } => {
                let r = self.run_loop(params, form, body, loc)?;
                self.bind_pat(pat, loc, r)
            }
            Exp::Soac(s) => {
                let r = self.soac(s, loc)?;
                self.bind_pat(pat, loc, r)
            }
            Exp::WithAcc { inputs, lam } => {
                let r = self.with_acc(inputs, lam, loc)?;
                self.bind_pat(pat, loc, r)
            }
            Exp::UpdAcc { acc, idx, vals } => {
                let r = self.upd_acc(acc, idx, vals, loc)?;
                self.bind1(pat, loc, r)
            }
            // Outside `vjp`, a function with a custom derivative is the function.
            Exp::WithVjp { primal, args, .. } => {
                let vals = args
                    .iter()
                    .map(|a| self.val(a, loc))
                    .collect::<R<Vec<_>>>()?;
                let r = self.call_lambda(primal, vals, loc)?;
                self.bind_pat(pat, loc, r)
            }
            Exp::Jvp { .. } | Exp::Vjp { .. } if self.oracle => {
                let r = super::dynad::eval_node(self, exp, loc)?;
                self.bind_pat(pat, loc, r)
            }
            Exp::Jvp { .. } | Exp::Vjp { .. } => err(
                "internal error: an AD node (`jvp`/`vjp`) reached the interpreter untransformed",
                loc,
            ),
        }
    }

    /// Calls a function of the program (or, where the program has no function of that name, of
    /// [`Interp::ext`]).
    pub fn apply(&mut self, fun: &str, args: Vec<Val>, loc: &Option<SrcLoc>) -> R<Vec<Val>> {
        let (k, f) = match self.funs.get(fun) {
            Some(&x) => x,
            None => {
                if let Some(ext) = self.ext {
                    return ext.apply(self, fun, args, loc);
                }
                return err(
                    format!("internal error: call of unknown function `{fun}`"),
                    loc,
                );
            }
        };
        let params = f.size_params.iter().chain(f.params.iter().map(|p| &p.name));
        self.call_fun(k, fun, params, args, loc, |ip| ip.eval_body(&f.body, loc))
    }

    /// The frame of a call of function number `k` (the index into [`Interp::active`]): checks
    /// the arity and that `fun` is not already running, binds `params` to `args`, runs `body`
    /// and clears the parameters.
    pub fn call_fun<'a>(
        &mut self,
        k: usize,
        fun: &str,
        params: impl Iterator<Item = &'a ir::VName> + Clone,
        args: Vec<Val>,
        loc: &Option<SrcLoc>,
        body: impl FnOnce(&mut Self) -> R<Vec<Val>>,
    ) -> R<Vec<Val>> {
        let n = params.clone().count();
        if args.len() != n {
            return err(
                format!(
                    "internal error: `{fun}` expects {n} arguments, got {}",
                    args.len()
                ),
                loc,
            );
        }
        if self.active[k] {
            return err(format!("recursive call of `{fun}` is not supported"), loc);
        }
        self.active[k] = true;
        for (name, a) in params.clone().zip(args) {
            self.set(name, a);
        }
        let r = body(self);
        for name in params {
            self.clear(name);
        }
        self.active[k] = false;
        r
    }

    fn run_loop(
        &mut self,
        params: &'p [(ir::Param, SubExp)],
        form: &'p LoopForm,
        body: &'p Body,
        loc: &Option<SrcLoc>,
    ) -> R<Vec<Val>> {
        let n = body.result.len();
        self.run_loop_with(params, form, n, loc, |ip| ip.eval_body(body, loc))
    }

    /// A loop whose body (returning `body_results` values) is run by `body`: binds the
    /// parameters to their initial values, runs the iterations and returns the final values.
    pub fn run_loop_with(
        &mut self,
        params: &[(ir::Param, SubExp)],
        form: &LoopForm,
        body_results: usize,
        loc: &Option<SrcLoc>,
        mut body: impl FnMut(&mut Self) -> R<Vec<Val>>,
    ) -> R<Vec<Val>> {
        let inits = params
            .iter()
            .map(|(_, se)| self.val(se, loc))
            .collect::<R<Vec<_>>>()?;
        for ((p, _), v) in params.iter().zip(inits) {
            self.set(&p.name, v);
        }
        if body_results != params.len() {
            return err(
                "internal error: loop body returns the wrong number of values",
                loc,
            );
        }
        match form {
            LoopForm::For { i, it, bound } => {
                let b = self.prim(bound, loc)?;
                let n = b.as_i128().unwrap_or(0).max(0);
                let mut k: i128 = 0;
                while k < n {
                    self.set(i, Val::Prim(PrimValue::int(*it, k)));
                    self.loop_iteration(params, &mut body)?;
                    k += 1;
                }
                self.clear(i);
            }
            LoopForm::While(c) => loop {
                let go = match self.get(c, loc)? {
                    Val::Prim(PrimValue::Bool(b)) => *b,
                    _ => return err("internal error: while-loop condition is not a bool", loc),
                };
                if !go {
                    break;
                }
                self.loop_iteration(params, &mut body)?;
            },
        }
        let mut out = Vec::with_capacity(params.len());
        for (p, _) in params {
            out.push(std::mem::replace(
                &mut self.env[p.name.id as usize],
                Val::Empty,
            ));
        }
        Ok(out)
    }

    fn loop_iteration(
        &mut self,
        params: &[(ir::Param, SubExp)],
        body: &mut impl FnMut(&mut Self) -> R<Vec<Val>>,
    ) -> R<()> {
        let r = body(self)?;
        for ((p, _), v) in params.iter().zip(r) {
            self.set(&p.name, v);
        }
        Ok(())
    }

    // ----- indexing ------------------------------------------------------------------------

    /// Resolves an index into a strided view (base offset and result dimensions), checking bounds.
    fn resolve(&self, a: &Arr, idx: &[DimIndex], loc: &Option<SrcLoc>) -> R<(isize, Vec<Dim>)> {
        if idx.len() > a.shape.len() {
            return err(
                format!(
                    "internal error: {} indices into an array of rank {}",
                    idx.len(),
                    a.shape.len()
                ),
                loc,
            );
        }
        let nat = natural_dims(&a.shape);
        let mut base = a.off as isize;
        let mut dims = Vec::new();
        let mut shown = Vec::with_capacity(idx.len());
        let mut ok = true;
        for (d, (n, s)) in idx.iter().zip(nat.iter()) {
            let n = *n as i128;
            match d {
                DimIndex::Fix(i) => {
                    let i = self.prim(i, loc)?.as_i128().unwrap_or(-1);
                    shown.push((i, None));
                    if i < 0 || i >= n {
                        ok = false;
                    } else {
                        base += i as isize * s;
                    }
                }
                DimIndex::Slice { start, len, stride } => {
                    let st = self.prim(start, loc)?.as_i128().unwrap_or(-1);
                    let ln = self.prim(len, loc)?.as_i128().unwrap_or(-1);
                    let sd = self.prim(stride, loc)?.as_i128().unwrap_or(0);
                    shown.push((st, Some((ln, sd))));
                    let last = st + (ln - 1) * sd;
                    let valid = ln == 0
                        || ln > 0 && sd != 0 && (0..n).contains(&st) && (0..n).contains(&last);
                    if !valid {
                        ok = false;
                    } else {
                        // An empty slice may start anywhere; it reads nothing.
                        if ln > 0 {
                            base += st as isize * s;
                        }
                        dims.push((ln as usize, sd as isize * s));
                    }
                }
            }
        }
        if !ok {
            return err(
                format!(
                    "index {} out of bounds for array of shape {}",
                    index_str(&shown),
                    shape_str(&a.shape)
                ),
                loc,
            );
        }
        dims.extend_from_slice(&nat[idx.len()..]);
        Ok((base, dims))
    }

    pub fn index(&self, a: &Arr, idx: &[DimIndex], loc: &Option<SrcLoc>) -> R<Val> {
        let (base, dims) = self.resolve(a, idx, loc)?;
        if dims.is_empty() {
            return match a.data.get(base as usize) {
                Some(p) => Ok(Val::Prim(p)),
                None => err("internal error: index out of range", loc),
            };
        }
        let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
        if shape.contains(&0) {
            let empty = Buffer::with_capacity(a.elem_type(), 0);
            return Ok(Val::Arr(Arr::from_buffer(empty, shape)));
        }
        // A contiguous row-major view needs no copy.
        if natural_dims(&shape)
            .iter()
            .zip(&dims)
            .all(|(x, y)| x.1 == y.1 || x.0 <= 1)
        {
            return Ok(Val::Arr(Arr {
                data: a.data.clone(),
                off: base as usize,
                shape,
            }));
        }
        Ok(Val::Arr(Arr::from_buffer(
            gather(&a.data, base, &dims),
            shape,
        )))
    }

    /// `a with [idx] = x`, in place when `a` holds the only reference to its buffer.
    pub fn update(&self, mut a: Arr, idx: &[DimIndex], x: &Val, loc: &Option<SrcLoc>) -> R<Arr> {
        let (base, dims) = self.resolve(&a, idx, loc)?;
        let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
        // Relative to the view, since making it unique may move it to offset 0. If `x` shares the
        // buffer, the buffer is not unique and is copied first, so `x` still reads the old values.
        let rel = base - a.off as isize;
        let ok = match x {
            Val::Prim(p) => {
                let b = a.make_unique_at(rel);
                let (b, at) = b;
                if shape.is_empty() {
                    b.set(at as usize, *p)
                } else {
                    fill_strided(b, at, &dims, *p)
                }
            }
            Val::Arr(src) if src.shape == shape => {
                let (b, at) = a.make_unique_at(rel);
                write_strided(b, at, &dims, &src.data, src.off)
            }
            other => {
                return err(
                    format!(
                        "cannot write a value of type {} into a slice of shape {}",
                        other.type_name(),
                        shape_str(&shape)
                    ),
                    loc,
                )
            }
        };
        if !ok {
            return err("internal error: type mismatch in update", loc);
        }
        Ok(a)
    }
}

/// Concatenation along `dim`.
fn concat(dim: usize, arrs: &[Arr], w: usize, loc: &Option<SrcLoc>) -> R<Arr> {
    let first = match arrs.first() {
        Some(a) => a,
        None => return err("internal error: concat of no arrays", loc),
    };
    if dim >= first.shape.len() {
        return err(
            "internal error: concat along a dimension beyond the rank",
            loc,
        );
    }
    let mut total: usize = 0;
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
                    "cannot concatenate arrays of shapes {} and {}",
                    shape_str(&first.shape),
                    shape_str(&a.shape)
                ),
                loc,
            );
        }
        total = match total.checked_add(a.shape[dim]) {
            Some(t) => t,
            None => return err("size overflow: concatenation of too many elements", loc),
        };
    }
    if total != w {
        return err(format!("concatenation has size {total}, expected {w}"), loc);
    }
    let outer: usize = first.shape[..dim].iter().product();
    let mut shape = first.shape.clone();
    shape[dim] = total;
    let n = crate::mem::elements(&shape).map_err(|m| RuntimeError::new(m, loc.clone()))?;
    let mut buf = Buffer::try_with_capacity(first.elem_type(), n)
        .map_err(|m| RuntimeError::new(m, loc.clone()))?;
    for o in 0..outer {
        for a in arrs {
            let chunk: usize = a.shape[dim..].iter().product();
            if !append_range(&mut buf, &a.data, a.off + o * chunk, chunk) {
                return err(
                    "internal error: concat of arrays of different element types",
                    loc,
                );
            }
        }
    }
    Ok(Arr::from_buffer(buf, shape))
}
