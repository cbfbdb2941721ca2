//! Fast path for scalar lambdas: a lambda whose parameters and results are scalars and whose body
//! is only scalar operations (`BinOp`, `UnOp`, `CmpOp`, `Conv`, `Math`, `SubExp`) is compiled, once
//! per SOAC execution, to a straight-line register program. Free variables are read when it is
//! compiled (they cannot change during the SOAC), so running it touches no environment.

use super::eval::{binop, fast_binop, R};
use super::RuntimeError;
use crate::diag::SrcLoc;
use crate::ir::{BinOp, CmpOp, ConvOp, Exp, Lambda, MathFn, SubExp, UnOp, VName};
use crate::prim::PrimValue;
use crate::primops;
use crate::value::Buffer;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Opnd {
    Reg(usize),
    Const(PrimValue),
}

#[derive(Debug)]
enum Op {
    Bin(BinOp, Opnd, Opnd),
    Un(UnOp, Opnd),
    Cmp(CmpOp, Opnd, Opnd),
    Conv(ConvOp, Opnd),
    Math(MathFn, Vec<Opnd>),
    Move(Opnd),
}

#[derive(Debug)]
struct Instr<'p> {
    op: Op,
    dst: usize,
    loc: &'p Option<SrcLoc>,
}

/// A compiled scalar lambda. Registers `0..params` hold the arguments.
#[derive(Debug)]
pub(crate) struct ScalarProg<'p> {
    nregs: usize,
    instrs: Vec<Instr<'p>>,
    results: Vec<Opnd>,
}

impl<'p> ScalarProg<'p> {
    /// Compiles `lam` if it is a scalar lambda; `free` looks up the value of a free variable
    /// (`None` if it is not a scalar, which makes the lambda ineligible).
    pub fn compile(
        lam: &'p Lambda,
        free: impl Fn(&VName) -> Option<PrimValue>,
    ) -> Option<ScalarProg<'p>> {
        let mut regs: HashMap<&VName, usize> = HashMap::new();
        for (k, p) in lam.params.iter().enumerate() {
            if p.ty.rank() != 0 || p.ty.elem().is_none() {
                return None;
            }
            regs.insert(&p.name, k);
        }
        if lam.ret.iter().any(|t| t.rank() != 0 || t.elem().is_none()) {
            return None;
        }
        let opnd = |se: &SubExp, regs: &HashMap<&VName, usize>| -> Option<Opnd> {
            match se {
                SubExp::Const(c) => Some(Opnd::Const(*c)),
                SubExp::Var(v) => match regs.get(v) {
                    Some(&r) => Some(Opnd::Reg(r)),
                    None => free(v).map(Opnd::Const),
                },
            }
        };
        let mut instrs = Vec::with_capacity(lam.body.stms.len());
        let mut next = lam.params.len();
        for stm in &lam.body.stms {
            let [pe] = stm.pat.elems.as_slice() else {
                return None;
            };
            let op = match &stm.exp {
                Exp::BinOp(op, a, b) => Op::Bin(*op, opnd(a, &regs)?, opnd(b, &regs)?),
                Exp::UnOp(op, a) => Op::Un(*op, opnd(a, &regs)?),
                Exp::CmpOp(op, a, b) => Op::Cmp(*op, opnd(a, &regs)?, opnd(b, &regs)?),
                Exp::Conv(op, a) => Op::Conv(*op, opnd(a, &regs)?),
                Exp::Math(f, args) => Op::Math(
                    *f,
                    args.iter()
                        .map(|a| opnd(a, &regs))
                        .collect::<Option<Vec<_>>>()?,
                ),
                Exp::SubExp(a) => Op::Move(opnd(a, &regs)?),
                _ => return None,
            };
            regs.insert(&pe.name, next);
            instrs.push(Instr {
                op,
                dst: next,
                loc: &stm.loc,
            });
            next += 1;
        }
        let results = lam
            .body
            .result
            .iter()
            .map(|r| opnd(r, &regs))
            .collect::<Option<Vec<_>>>()?;
        Some(ScalarProg {
            nregs: next,
            instrs,
            results,
        })
    }

    /// A register file for [`ScalarProg::run`].
    pub fn regs(&self) -> Vec<PrimValue> {
        vec![PrimValue::Bool(false); self.nregs]
    }

    /// Runs the program on `regs` (arguments already in `regs[..nparams]`); results via `out`.
    #[inline(always)]
    pub fn run(
        &self,
        regs: &mut [PrimValue],
        mut out: impl FnMut(usize, PrimValue) -> R<()>,
    ) -> R<()> {
        #[inline]
        fn rd(regs: &[PrimValue], o: Opnd) -> PrimValue {
            match o {
                Opnd::Reg(r) => regs.get(r).copied().unwrap_or(PrimValue::Bool(false)),
                Opnd::Const(c) => c,
            }
        }
        for ins in &self.instrs {
            let lift = |m: String| RuntimeError::new(m, ins.loc.clone());
            let v = match &ins.op {
                Op::Bin(op, a, b) => {
                    let (x, y) = (rd(regs, *a), rd(regs, *b));
                    match fast_binop(*op, x, y) {
                        Some(v) => v,
                        None => binop(*op, x, y, ins.loc)?,
                    }
                }
                Op::Un(op, a) => primops::eval_unop(*op, rd(regs, *a)).map_err(lift)?,
                Op::Cmp(op, a, b) => PrimValue::Bool(
                    primops::eval_cmpop(*op, rd(regs, *a), rd(regs, *b)).map_err(lift)?,
                ),
                Op::Conv(op, a) => primops::eval_conv(*op, rd(regs, *a)).map_err(lift)?,
                Op::Math(f, args) => {
                    let xs: Vec<PrimValue> = args.iter().map(|a| rd(regs, *a)).collect();
                    primops::eval_math(*f, &xs).map_err(lift)?
                }
                Op::Move(a) => rd(regs, *a),
            };
            if let Some(slot) = regs.get_mut(ins.dst) {
                *slot = v;
            }
        }
        for (k, r) in self.results.iter().enumerate() {
            out(k, rd(regs, *r))?;
        }
        Ok(())
    }
}

/// An operand column: a register's values for a chunk of elements, or a constant.
enum Src<'a, T> {
    S(&'a [T]),
    C(T),
}

fn zip_with<T: Copy, U: Clone>(a: Src<T>, b: Src<T>, n: usize, f: impl Fn(T, T) -> U) -> Vec<U> {
    match (a, b) {
        (Src::S(x), Src::S(y)) => x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect(),
        (Src::S(x), Src::C(c)) => x.iter().map(|&p| f(p, c)).collect(),
        (Src::C(c), Src::S(y)) => y.iter().map(|&q| f(c, q)).collect(),
        (Src::C(c), Src::C(d)) => vec![f(c, d); n],
    }
}

macro_rules! src_fn {
    ($name:ident, $t:ty, $var:ident) => {
        fn $name<'a>(cols: &'a [Option<Buffer>], o: Opnd) -> Option<Src<'a, $t>> {
            match o {
                Opnd::Const(PrimValue::$var(c)) => Some(Src::C(c)),
                Opnd::Reg(r) => match cols.get(r)? {
                    Some(Buffer::$var(v)) => Some(Src::S(v)),
                    _ => None,
                },
                _ => None,
            }
        }
    };
}
src_fn!(src_i64, i64, I64);
src_fn!(src_i32, i32, I32);
src_fn!(src_f64, f64, F64);
src_fn!(src_f32, f32, F32);

/// Typed whole-column kernels for the common arithmetic; `None` defers to the element-wise path.
fn bin_column(op: BinOp, cols: &[Option<Buffer>], a: Opnd, b: Opnd, n: usize) -> Option<Buffer> {
    use BinOp::*;
    macro_rules! kern {
        ($src:ident, $var:ident, $f:expr) => {
            match ($src(cols, a), $src(cols, b)) {
                (Some(x), Some(y)) => return Some(Buffer::$var(zip_with(x, y, n, $f))),
                _ => {}
            }
        };
    }
    match op {
        Add(_) => {
            kern!(src_i64, I64, i64::wrapping_add);
            kern!(src_i32, I32, i32::wrapping_add);
            kern!(src_f64, F64, |p: f64, q: f64| p + q);
            kern!(src_f32, F32, |p: f32, q: f32| p + q);
        }
        Sub(_) => {
            kern!(src_i64, I64, i64::wrapping_sub);
            kern!(src_i32, I32, i32::wrapping_sub);
            kern!(src_f64, F64, |p: f64, q: f64| p - q);
            kern!(src_f32, F32, |p: f32, q: f32| p - q);
        }
        Mul(_) => {
            kern!(src_i64, I64, i64::wrapping_mul);
            kern!(src_i32, I32, i32::wrapping_mul);
            kern!(src_f64, F64, |p: f64, q: f64| p * q);
            kern!(src_f32, F32, |p: f32, q: f32| p * q);
        }
        Div(_) => {
            kern!(src_f64, F64, |p: f64, q: f64| p / q);
            kern!(src_f32, F32, |p: f32, q: f32| p / q);
        }
        Min(_) => {
            kern!(src_f64, F64, f64::min);
            kern!(src_i64, I64, i64::min);
        }
        Max(_) => {
            kern!(src_f64, F64, f64::max);
            kern!(src_i64, I64, i64::max);
        }
        _ => {}
    }
    None
}

fn col_get(cols: &[Option<Buffer>], o: Opnd, i: usize) -> Option<PrimValue> {
    match o {
        Opnd::Const(c) => Some(c),
        Opnd::Reg(r) => cols.get(r)?.as_ref()?.get(i),
    }
}

impl ScalarProg<'_> {
    /// Runs the program on `n` elements at once, one instruction over all elements at a time
    /// (`inputs[k]` is parameter `k`'s column), and appends the results to `outs`. Returns `false`
    /// (having appended nothing) if any operation fails: the caller then reruns these elements
    /// one at a time, which reports the first error in element order exactly.
    pub fn run_columns(&self, inputs: Vec<Buffer>, n: usize, outs: &mut [Buffer]) -> bool {
        let mut cols: Vec<Option<Buffer>> = inputs.into_iter().map(Some).collect();
        cols.resize(self.nregs, None);
        for ins in &self.instrs {
            let col = match &ins.op {
                Op::Bin(op, a, b) => match bin_column(*op, &cols, *a, *b, n) {
                    Some(c) => c,
                    None => {
                        let mut c = match col_get(&cols, *a, 0).zip(col_get(&cols, *b, 0)) {
                            Some((x, y)) => match primops::eval_binop(*op, x, y) {
                                Ok(v) => Buffer::with_capacity(v.prim_type(), n),
                                Err(_) => return false,
                            },
                            None => return false,
                        };
                        for i in 0..n {
                            let r =
                                col_get(&cols, *a, i)
                                    .zip(col_get(&cols, *b, i))
                                    .map(|(x, y)| {
                                        fast_binop(*op, x, y)
                                            .map(Ok)
                                            .unwrap_or_else(|| primops::eval_binop(*op, x, y))
                                    });
                            match r {
                                Some(Ok(v)) if c.push(v) => {}
                                _ => return false,
                            }
                        }
                        c
                    }
                },
                op => {
                    let mut c: Option<Buffer> = None;
                    for i in 0..n {
                        let get = |o: &Opnd| col_get(&cols, *o, i);
                        let r = match op {
                            Op::Un(f, a) => get(a).map(|x| primops::eval_unop(*f, x)),
                            Op::Cmp(f, a, b) => get(a)
                                .zip(get(b))
                                .map(|(x, y)| primops::eval_cmpop(*f, x, y).map(PrimValue::Bool)),
                            Op::Conv(f, a) => get(a).map(|x| primops::eval_conv(*f, x)),
                            Op::Math(f, args) => args
                                .iter()
                                .map(get)
                                .collect::<Option<Vec<_>>>()
                                .map(|xs| primops::eval_math(*f, &xs)),
                            Op::Move(a) => get(a).map(Ok),
                            Op::Bin(..) => None,
                        };
                        let v = match r {
                            Some(Ok(v)) => v,
                            _ => return false,
                        };
                        let buf = c.get_or_insert_with(|| Buffer::with_capacity(v.prim_type(), n));
                        if !buf.push(v) {
                            return false;
                        }
                    }
                    match c {
                        Some(c) => c,
                        // n == 0: nothing to compute.
                        None => return true,
                    }
                }
            };
            if let Some(slot) = cols.get_mut(ins.dst) {
                *slot = Some(col);
            }
        }
        // Check every result first, so that nothing is appended on failure.
        for (k, r) in self.results.iter().enumerate() {
            let ok = match (r, outs.get(k)) {
                (Opnd::Reg(x), Some(o)) => cols
                    .get(*x)
                    .and_then(|c| c.as_ref())
                    .is_some_and(|c| c.len() == n && c.elem_type() == o.elem_type()),
                (Opnd::Const(c), Some(o)) => c.prim_type() == o.elem_type(),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        for (k, r) in self.results.iter().enumerate() {
            match r {
                Opnd::Reg(x) => {
                    if let (Some(Some(c)), Some(o)) = (cols.get(*x), outs.get_mut(k)) {
                        super::val::append_range(o, c, 0, n);
                    }
                }
                Opnd::Const(c) => {
                    if let Some(o) = outs.get_mut(k) {
                        for _ in 0..n {
                            o.push(*c);
                        }
                    }
                }
            }
        }
        true
    }
}
