//! Fast path for scalar lambdas: a lambda whose parameters and results are scalars and whose body
//! is only scalar operations (`BinOp`, `UnOp`, `CmpOp`, `Conv`, `Math`, `SubExp`) is compiled, once
//! per SOAC execution, to a straight-line register program. Free variables are read when it is
//! compiled (they cannot change during the SOAC), so running it touches no environment.

use super::eval::{binop, R};
use super::RuntimeError;
use crate::diag::SrcLoc;
use crate::ir::{BinOp, CmpOp, ConvOp, Exp, Lambda, MathFn, SubExp, UnOp, VName};
use crate::prim::PrimValue;
use crate::primops;
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
    #[inline]
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
                Op::Bin(op, a, b) => binop(*op, rd(regs, *a), rd(regs, *b), ins.loc)?,
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
