//! Accumulators (`withacc` / `upd_acc`) on the host executor.
//!
//! An accumulator is its destination arrays on the device. `withacc` makes its input arrays
//! unique (copying shared ones), keeps them in [`Exec`]'s accumulator stack and binds each
//! accumulator parameter of its lambda to [`HVal::Acc`] (an index into that stack); the lambda's
//! body runs at host level like any body (accumulators pass through loops, ifs and calls as
//! ordinary values). Its results are the updated arrays followed by the lambda's extra results.
//!
//! `upd_acc` at host level is a read-modify-write of the element (or row) on the device: without
//! an operator it overwrites, with one it runs the operator on the old and new values (at host
//! level, so any operator works, including ones on rows). Out-of-range indices are ignored, as in
//! the interpreter.
//!
//! A `map` that takes or returns accumulators (what reverse-mode AD makes of free arrays read in
//! a `map`) does not run here: the plan makes it a `segmap` kernel whose `upd_acc`s are atomic
//! updates (module `crate::codegen::acc`, with the accumulators' operators and the device's
//! atomics from [`Exec::acc_kernel`]); the executor reports one it meets as an internal error.

use super::{Exec, HVal, E};
use crate::error::{Error, RuntimeKind};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, AccInput, Body, DimIndex, Exp, Lambda, Soac, SubExp, Type, VName};
use vkad_core::prim::PrimValue;

/// The state of one accumulator of a running `withacc`.
pub(super) struct AccState<'a> {
    /// Its destination arrays (unique: updated in place).
    pub arrs: Vec<super::DArr>,
    /// The index shape (outer dimensions of the arrays).
    pub shape: Vec<usize>,
    /// The operator combining an update with the current value (`None`: overwrite).
    pub op: Option<&'a ir::Operator>,
}

/// Whether a `map` over these inputs with this lambda involves accumulators (and so cannot run
/// on the executor).
pub(super) fn map_uses_acc(ex: &Exec<'_>, arrs: &[VName], lam: &Lambda) -> bool {
    lam.ret.iter().any(|t| matches!(t, Type::Acc { .. }))
        || lam.params.iter().any(|p| matches!(p.ty, Type::Acc { .. }))
        || arrs
            .iter()
            .any(|a| matches!(ex.env.get(&a.id), Some(HVal::Acc(_))))
        || body_updates(&lam.body)
}

/// Whether a body contains `upd_acc` or `withacc` anywhere (then it cannot be a kernel).
fn body_updates(b: &Body) -> bool {
    b.stms.iter().any(|s| exp_updates(&s.exp))
}

fn exp_updates(e: &Exp) -> bool {
    match e {
        Exp::UpdAcc { .. } | Exp::WithAcc { .. } => true,
        Exp::If { then_b, else_b, .. } => body_updates(then_b) || body_updates(else_b),
        Exp::Loop { body, .. } => body_updates(body),
        Exp::Soac(Soac::Map { lam, .. }) => body_updates(&lam.body),
        Exp::Soac(Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. }) => {
            body_updates(&op.lam.body)
        }
        _ => false,
    }
}

/// Whatever holds the executor: the executor itself, or a runtime that runs host code around it
/// (so that `withacc` can run a body of either).
pub(crate) trait HasExec<'a> {
    fn exec(&mut self) -> &mut Exec<'a>;
}

fn fix(i: usize) -> DimIndex {
    DimIndex::Fix(SubExp::Const(PrimValue::I64(i as i64)))
}

impl<'a> Exec<'a> {
    /// Runs `withacc inputs` with the accumulator parameters `params` bound while `body` runs
    /// on `state` (the executor, or a runtime around it); the body's first results are the
    /// accumulators, which give their arrays.
    pub(crate) fn with_acc_then<S: HasExec<'a>>(
        state: &mut S,
        inputs: &'a [AccInput],
        params: &[ir::Param],
        loc: &Option<SrcLoc>,
        body: impl FnOnce(&mut S) -> E<Vec<HVal>>,
    ) -> E<Vec<HVal>> {
        if params.len() != inputs.len() {
            return Err(Error::internal(
                loc,
                "withacc lambda must take one accumulator per input",
            ));
        }
        let ex = state.exec();
        let base = ex.accs.len();
        let r = match ex.acc_begin(inputs, params, base, loc) {
            Ok(()) => body(state),
            Err(e) => Err(e),
        };
        let ex = state.exec();
        for p in params {
            ex.env.remove(&p.name.id);
        }
        let states = ex.accs.split_off(base);
        let res = r?;
        let mut out: Vec<HVal> = states
            .into_iter()
            .flat_map(|s| s.arrs.into_iter().map(HVal::A))
            .collect();
        out.extend(res.into_iter().skip(inputs.len()));
        Ok(out)
    }

    /// Makes the accumulators of `inputs` (numbered from `base`) and binds `params` to them.
    fn acc_begin(
        &mut self,
        inputs: &'a [AccInput],
        params: &[ir::Param],
        base: usize,
        loc: &Option<SrcLoc>,
    ) -> E<()> {
        for inp in inputs {
            let shape = inp
                .shape
                .iter()
                .map(|d| self.size(d, loc))
                .collect::<E<Vec<_>>>()?;
            let mut arrs = Vec::with_capacity(inp.arrs.len());
            for v in &inp.arrs {
                let a = self.take(v, loc)?;
                if a.shape.len() < shape.len() || a.shape[..shape.len()] != shape[..] {
                    return Err(Error::runtime(
                        RuntimeKind::Shape,
                        loc,
                        format!(
                            "accumulator array of shape {} does not start with {}",
                            super::shape_str(&a.shape),
                            super::shape_str(&shape)
                        ),
                    ));
                }
                arrs.push(self.unique(a, loc)?);
            }
            if let Some(op) = &inp.op {
                if op.lam.params.len() != 2 * arrs.len() {
                    return Err(Error::internal(
                        loc,
                        "accumulator operator arity does not match its arrays",
                    ));
                }
            }
            self.accs.push(AccState {
                arrs,
                shape,
                op: inp.op.as_ref(),
            });
        }
        for (k, p) in params.iter().enumerate() {
            self.set(&p.name, HVal::Acc(base + k));
        }
        Ok(())
    }

    /// Runs `upd_acc acc [idx] vals` at host level; returns the accumulator.
    pub(super) fn upd_acc(
        &mut self,
        acc: &VName,
        idx: &[SubExp],
        vals: &[SubExp],
        loc: &Option<SrcLoc>,
    ) -> E<HVal> {
        let k = match self.get(acc, loc)? {
            HVal::Acc(k) => *k,
            _ => {
                return Err(Error::internal(
                    loc,
                    format!("`{acc}` is not an accumulator"),
                ))
            }
        };
        let ix = idx
            .iter()
            .map(|i| self.prim(i, loc).map(|p| p.as_i128().unwrap_or(-1)))
            .collect::<E<Vec<_>>>()?;
        let vs = vals
            .iter()
            .map(|v| self.val(v, loc))
            .collect::<E<Vec<_>>>()?;
        let (op, nd) = match self.accs.get(k) {
            Some(st) => {
                if vs.len() != st.arrs.len() || ix.len() != st.shape.len() {
                    return Err(Error::internal(
                        loc,
                        "accumulator update of the wrong arity",
                    ));
                }
                // Out-of-bounds updates are ignored.
                if ix
                    .iter()
                    .zip(&st.shape)
                    .any(|(&i, &n)| i < 0 || i >= n as i128)
                {
                    return Ok(HVal::Acc(k));
                }
                (st.op, st.arrs.len())
            }
            None => return Err(Error::internal(loc, "accumulator used outside its withacc")),
        };
        let didx: Vec<DimIndex> = ix.iter().map(|&i| fix(i as usize)).collect();
        let new = match op {
            None => vs,
            Some(op) => {
                let mut args = Vec::with_capacity(2 * nd);
                for m in 0..nd {
                    let a = self.accs[k].arrs[m].clone();
                    let old = self.index(&a, &didx, loc)?;
                    // A row read as a view would make the array look shared: copy it.
                    let old = match old {
                        HVal::A(r) if std::sync::Arc::ptr_eq(&r.buf, &a.buf) => {
                            HVal::A(self.copy(&r, loc)?)
                        }
                        o => o,
                    };
                    args.push(old);
                }
                args.extend(vs);
                self.call_lam(&op.lam, args, loc)?
            }
        };
        for (m, v) in new.into_iter().enumerate().take(nd) {
            // Taken out of the stack so that `update` sees it unshared (no copy).
            let a = self.accs[k].arrs.remove(m);
            let r = self.update(a, &didx, v, loc)?;
            self.accs[k].arrs.insert(m, r);
        }
        Ok(HVal::Acc(k))
    }

    /// Applies a lambda at host level.
    fn call_lam(&mut self, lam: &'a Lambda, args: Vec<HVal>, loc: &Option<SrcLoc>) -> E<Vec<HVal>> {
        if lam.params.len() != args.len() {
            return Err(Error::internal(loc, "lambda arity"));
        }
        for (p, a) in lam.params.iter().zip(args) {
            self.set(&p.name, a);
        }
        let r = self.body(&lam.body, loc);
        for p in &lam.params {
            self.env.remove(&p.name.id);
        }
        r
    }

    /// What a kernel reading the host variables `names` needs to update the accumulators among
    /// them, and those accumulators' arrays (to restore them when a launch must be repeated).
    pub(crate) fn acc_kernel(
        &self,
        names: &[VName],
    ) -> (crate::codegen::acc::AccKernel<'a>, Vec<super::DArr>) {
        let mut ak = acc_kernel_on(self.ctx.info());
        let mut acc_arrs = Vec::new();
        for v in names {
            if let Some(HVal::Acc(k)) = self.env.get(&v.id) {
                let st = &self.accs[*k];
                if ak.ops.insert(v.id, st.op).is_none() {
                    acc_arrs.extend(st.arrs.iter().cloned());
                }
            }
        }
        (ak, acc_arrs)
    }
}

/// What a kernel updating host accumulators needs of device `info` (the accumulators' operators
/// still to be added): its atomics and whether it sums updates per subgroup.
pub(crate) fn acc_kernel_on<'a>(info: &vkad_vk::DeviceInfo) -> crate::codegen::acc::AccKernel<'a> {
    crate::codegen::acc::AccKernel {
        ops: Default::default(),
        f32_add: info.float32_atomic_add,
        i64_atomics: info.int64_atomics,
        subgroups: info.subgroup_arithmetic && info.subgroup_vote,
    }
}
