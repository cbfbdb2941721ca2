//! Ahead-of-time generation of an entry point's kernel modules from its plan alone, without
//! inputs (`vkad spirv FILE -e ENTRY -o DIR`).
//!
//! The runtime makes kernels lazily, keyed by the types of the host values they read; those
//! types are the IR's static types (an array's element type and rank, a scalar's type), so the
//! plan determines every module a run can launch except for *sizes*: sizes are launch
//! parameters, but they choose among variants of the primitives (a reduction's partials per
//! workgroup for few elements, per thread for many; a GPU scan's tiled last pass; a
//! segmented reduction by teams or by several workgroups per row, with its second pass, or a
//! plain `map` kernel). This module walks the plan of an entry (every branch, every called
//! function, both versions of versioned loops) with a static type environment and generates,
//! with the same generators and arguments as the executor, every variant any size could
//! select:
//! - `segmap` kernels (`crate::codegen::map`), named `segmap/<kernel id>`;
//! - the plan's primitives ([`Prim`]: reductions and scans of scalars in all their pass
//!   layouts, column kernels of vectorised operators, histograms per component, scatters,
//!   segmented reductions and scans and the `map` kernels over segments), named as the
//!   executor records them (`reduce/pass0-reduce`);
//! - the built-in kernels (strided copies and fills for every word kind and rank of the
//!   entry's arrays, `iota`, the radix sort's passes).
//!
//! A `segmap` that updates host accumulators is generated from the accumulators' static types
//! (`acc(cert, shape, elems)`: the arrays' element types and ranks) and the operator of the
//! `with_acc` whose parameter `cert` names, as the executor binds them when it runs; the
//! pairwise passes of a reduction or scan over arrays of arrays with a non-vectorised operator
//! from the arrays' types, read through the host names the executor binds per pass.
//!
//! The result is a superset of what one run records (`spirv-backend/tests/aot.rs` checks it on
//! every dataset of `tests/programs`). The one kernel left for a run ([`Unresolved`]) is one
//! updating an accumulator whose `with_acc` the walk has not met; `vkad spirv` reports it as
//! `not supported` without an input, and records it from a run with one.

use super::plan::{MapStep, PlanBody, Prim, PrimStep, Step};
use super::DeviceProgram;
use crate::codegen::chunked::{self, Io, Phase};
use crate::codegen::gen::{word_kind, Addressing};
use crate::codegen::module::CompiledModule;
use crate::codegen::segmented::{seg_kernel, SegInputs};
use crate::codegen::{copy, hist, operator, scatter};
use crate::codegen::{BindSrc, HostTy, KernelCode};
use crate::error::{Error, Result};
use crate::exec::{hist_operators, reduce_passes, scan_passes, tiled_scan_fits, tuple_too_big};
use crate::exec::{prim_kernel_name, PrimKernel};
use std::collections::{BTreeMap, HashMap, HashSet};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, Exp, Stm, Type, VName};
use vkad_core::prim::{IntType, PrimType};
use vkad_vk::Context;

/// A kernel of the plan that cannot be generated without running the entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// What the kernel is and which run-time fact it needs.
    pub what: String,
    pub loc: Option<SrcLoc>,
}

impl Unresolved {
    /// The `not supported` error of a kernel that needs an input to be generated.
    pub fn error(&self) -> Error {
        Error::unsupported(
            format!(
                "generating without an input {} (pass an input to record it from a run)",
                self.what
            ),
            &self.loc,
        )
    }
}

/// The modules of an entry point generated from its plan.
#[derive(Debug, Default)]
pub struct AotModules {
    /// Every module the plan can launch that could be generated, without duplicates.
    pub modules: Vec<CompiledModule>,
    /// The kernels that need a run to be generated.
    pub unresolved: Vec<Unresolved>,
}

/// Generates the kernel modules of entry `entry` of `prog` for the device of `ctx` (its layout,
/// features and lavapipe's loop limit decide the variants), with descriptor bindings for
/// arrays (the layout [`CompiledModule::bindings`] documents).
pub fn generate(ctx: &Context, prog: &DeviceProgram, entry: &str) -> Result<AotModules> {
    let f = prog.ir.entry(entry).ok_or_else(|| Error::no_entry(entry))?;
    let mut g = Aot {
        ctx,
        dp: prog,
        types: HashMap::new(),
        arrays: BTreeMap::new(),
        words: HashSet::new(),
        done_funs: HashSet::new(),
        acc_ops: HashMap::new(),
        out: AotModules::default(),
    };
    crate::codegen::gen::with_addressing(Addressing::Descriptors, || {
        g.fun(&f.name)?;
        g.builtins()
    })?;
    Ok(g.out)
}

struct Aot<'a> {
    ctx: &'a Context,
    dp: &'a DeviceProgram,
    /// The static types of the host variables met so far (by id).
    types: HashMap<u32, Type>,
    /// Per word kind of the arrays met: the largest rank (for the strided built-ins).
    arrays: BTreeMap<String, (crate::codegen::gen::WordKind, usize)>,
    /// The modules made so far, to drop duplicates.
    words: HashSet<Vec<u32>>,
    done_funs: HashSet<String>,
    /// The operators of the host `with_acc`s met so far, by the id of their accumulator
    /// parameters (the certificates accumulator types name).
    acc_ops: HashMap<u32, Option<&'a ir::Operator>>,
    out: AotModules,
}

impl<'a> Aot<'a> {
    fn note_ty(&mut self, v: &VName, t: &Type) {
        if let (Some(e), r @ 1..) = (t.elem(), t.rank()) {
            let wk = word_kind(e);
            let slot = self.arrays.entry(format!("{wk:?}")).or_insert((wk, 0));
            slot.1 = slot.1.max(r);
        }
        self.types.insert(v.id, t.clone());
    }

    fn note_params(&mut self, ps: &[ir::Param]) {
        for p in ps {
            self.note_ty(&p.name, &p.ty);
        }
    }

    /// The host type of `v` as the executor sees it at run time.
    fn host_ty(&self, v: &VName) -> Option<HostTy> {
        match self.types.get(&v.id)? {
            Type::Prim(p) => Some(HostTy::Prim(*p)),
            Type::Array { elem, shape } => Some(HostTy::Arr(*elem, shape.len())),
            // As the executor binds a running `with_acc`'s accumulator (its operator's address
            // only keys the executor's kernel cache).
            Type::Acc { shape, elems, .. } => Some(HostTy::Acc {
                elems: elems.iter().map(|t| t.elem()).collect::<Option<_>>()?,
                ranks: elems.iter().map(|t| shape.len() + t.rank()).collect(),
                rank: shape.len(),
                op: 0,
            }),
        }
    }

    /// What a kernel reading host variables `free` needs to update the accumulators among
    /// them (`Ok(None)`: it updates none), as `crate::exec`'s `acc_kernel` makes it at run
    /// time; `Err` names an accumulator whose `with_acc` was not met.
    fn acc_kernel(
        &self,
        free: &[VName],
    ) -> std::result::Result<Option<crate::codegen::acc::AccKernel<'a>>, String> {
        let mut ak = crate::exec::acc::acc_kernel_on(self.ctx.info());
        for v in free {
            let Some(Type::Acc { cert, .. }) = self.types.get(&v.id) else {
                continue;
            };
            let op = self.acc_ops.get(&cert.id).ok_or_else(|| format!("`{v}`"))?;
            ak.ops.insert(v.id, *op);
        }
        Ok((!ak.ops.is_empty()).then_some(ak))
    }

    fn is_acc(&self, v: &VName) -> bool {
        matches!(self.types.get(&v.id), Some(Type::Acc { .. }))
    }

    fn rank(&self, v: &VName) -> usize {
        self.types.get(&v.id).map_or(0, |t| t.rank())
    }

    fn elem(&self, v: &VName, loc: &Option<SrcLoc>) -> Result<PrimType> {
        self.types
            .get(&v.id)
            .and_then(|t| t.elem())
            .ok_or_else(|| Error::internal(loc, format!("no static type for `{v}`")))
    }

    fn add(
        &mut self,
        name: String,
        code: KernelCode,
        loc: &Option<SrcLoc>,
        from: Option<&PrimStep>,
    ) {
        if self.words.insert(code.words.clone()) {
            let from = from.map(|p| (p as &dyn std::fmt::Display, p.loc.as_ref()));
            let mut m = CompiledModule::new(&name, &code, from);
            if m.loc.is_none() {
                m.loc = loc.as_ref().map(|l| l.to_string());
            }
            self.out.modules.push(m);
        }
    }

    fn unresolved(&mut self, what: impl Into<String>, loc: &Option<SrcLoc>) {
        self.out.unresolved.push(Unresolved {
            what: what.into(),
            loc: loc.clone(),
        });
    }

    /// A planned function (once), its parameters typed from the kernel IR.
    fn fun(&mut self, name: &str) -> Result<()> {
        if !self.done_funs.insert(name.to_string()) {
            return Ok(());
        }
        let dp = self.dp;
        let pf = dp
            .plan
            .fun(name)
            .ok_or_else(|| Error::bug(format!("function `{name}` was not planned")))?;
        let kf = dp
            .kernels
            .funs
            .iter()
            .find(|f| &*f.name == name)
            .ok_or_else(|| Error::bug(format!("function `{name}` has no kernel IR")))?;
        for s in &kf.size_params {
            self.note_ty(s, &Type::Prim(PrimType::I64));
        }
        self.note_params(&kf.params);
        self.body(&pf.body)
    }

    fn body(&mut self, b: &'a PlanBody) -> Result<()> {
        for s in &b.steps {
            self.step(s)?;
        }
        Ok(())
    }

    fn step(&mut self, s: &'a Step) -> Result<()> {
        match s {
            Step::Ir(stm) => {
                self.note_params(&stm.pat.elems);
                self.stm(stm)
            }
            Step::Call { pat, fun, .. } => {
                self.note_params(&pat.elems);
                self.fun(fun)
            }
            Step::If {
                pat,
                then_b,
                else_b,
                ..
            } => {
                self.note_params(&pat.elems);
                self.body(then_b)?;
                self.body(else_b)
            }
            Step::Loop {
                pat,
                params,
                form,
                body,
                ..
            } => {
                self.note_params(&pat.elems);
                for (p, _) in params {
                    self.note_ty(&p.name, &p.ty);
                }
                if let ir::LoopForm::For { i, it, .. } = form {
                    self.note_ty(i, &Type::Prim(PrimType::Int(*it)));
                }
                self.body(body)
            }
            Step::WithAcc {
                pat,
                inputs,
                params,
                body,
                ..
            } => {
                self.note_params(&pat.elems);
                self.note_params(params);
                for (p, input) in params.iter().zip(inputs) {
                    self.acc_ops.insert(p.name.id, input.op.as_ref());
                    if let Type::Acc { cert, .. } = &p.ty {
                        self.acc_ops.insert(cert.id, input.op.as_ref());
                    }
                }
                self.body(body)
            }
            Step::Threshold { pat, .. } => {
                self.note_params(&pat.elems);
                Ok(())
            }
            Step::VersionedLoop { pat, par, seq, .. } => {
                self.note_params(&pat.elems);
                self.body(par)?;
                self.body(seq)
            }
            Step::Map(m) => self.seg_map(m),
            Step::Prim(p) => {
                self.note_params(&p.pat.elems);
                self.prim(p)
            }
        }
    }

    fn seg_map(&mut self, m: &'a MapStep) -> Result<()> {
        let dims: Vec<ir::SubExp> = m.space.sizes().cloned().collect();
        let mut results = m.ret.iter();
        for (name, acc) in m.outs.iter().zip(&m.acc_results) {
            let t = results.next();
            match (acc, t) {
                (Some(a), _) => {
                    if let Some(t) = self.types.get(&a.id).cloned() {
                        self.note_ty(name, &t);
                    }
                }
                (None, Some(t)) => {
                    let mut shape = dims.clone();
                    shape.extend(t.shape().iter().cloned());
                    let ty = Type::array(t.elem().unwrap_or(PrimType::I64), shape);
                    self.note_ty(name, &ty);
                }
                (None, None) => return Err(Error::internal(&m.loc, "kernel outputs")),
            }
        }
        for (gtid, _) in &m.space.dims {
            self.note_ty(gtid, &Type::Prim(PrimType::I64));
        }
        let accs = match self.acc_kernel(&m.free) {
            Ok(a) => a,
            Err(v) => {
                self.unresolved(
                    format!(
                        "the kernel of `segmap` {} that updates the host accumulator {v} (its \
                         `with_acc` is not in this entry's plan)",
                        m.id.0
                    ),
                    &m.loc,
                );
                return Ok(());
            }
        };
        let ht = |v: &VName| self.host_ty(v);
        let code = crate::codegen::map::seg_map_kernel(
            &self.dp.ir,
            &crate::codegen::map::SegMapCode {
                space: &m.space,
                stms: &m.stms,
                results: &m.results,
                ret: &m.ret,
            },
            &m.loc,
            &ht,
            self.lavapipe(),
            self.ctx.info().subgroup_size,
            accs,
        )?;
        self.add(format!("segmap/{}", m.id.0), code, &m.loc, None);
        Ok(())
    }

    fn lavapipe(&self) -> bool {
        crate::exec::lavapipe_device(self.ctx)
    }

    fn gpu(&self) -> bool {
        !crate::exec::cpu_device(self.ctx)
    }

    /// Kernel `kind` of primitive `p`.
    fn prim_kernel(
        &mut self,
        p: &'a PrimStep,
        kind: PrimKernel,
        make: impl FnOnce(&ir::Program, &dyn Fn(&VName) -> Option<HostTy>) -> Result<KernelCode>,
    ) -> Result<()> {
        let ht = |v: &VName| self.host_ty(v);
        let code = make(&self.dp.ir, &ht)?;
        self.add(prim_kernel_name(&p.prim, kind), code, &p.loc, Some(p));
        Ok(())
    }

    fn stm(&mut self, stm: &'a Stm) -> Result<()> {
        let loc = &stm.loc;
        match &stm.exp {
            Exp::Iota { it, .. } => {
                let it = *it;
                self.builtin(format!("iota {it:?}"), |p| copy::iota(p, it), loc)
            }
            Exp::SortByKey { .. } => {
                self.builtin("sort count".into(), crate::codegen::sort::count, loc)?;
                self.builtin("sort scan".into(), crate::codegen::sort::scan, loc)?;
                self.builtin("sort scatter".into(), crate::codegen::sort::scatter, loc)
            }
            Exp::Soac(_) => Err(Error::internal(loc, "a SOAC as a host statement of a plan")),
            Exp::If { .. } | Exp::Loop { .. } | Exp::WithAcc { .. } | Exp::Apply { .. } => Err(
                Error::internal(loc, "control flow in a host statement of a plan"),
            ),
            // Scalars, indexing, updates, copies, reshapes, transpositions, replicates,
            // concatenations and literals use only the strided built-ins (see `builtins`).
            _ => Ok(()),
        }
    }

    fn builtin(
        &mut self,
        key: String,
        make: impl FnOnce(&ir::Program) -> Result<KernelCode>,
        loc: &Option<SrcLoc>,
    ) -> Result<()> {
        let code = make(&self.dp.ir)?;
        self.add(key, code, loc, None);
        Ok(())
    }

    /// The strided copies and fills for every word kind and rank of the entry's arrays (rank-1
    /// 32-bit fills too: scatters clear their claim words with one).
    fn builtins(&mut self) -> Result<()> {
        let mut kinds: Vec<(crate::codegen::gen::WordKind, usize)> =
            self.arrays.values().cloned().collect();
        let u32k = word_kind(PrimType::Int(IntType::U32));
        if !kinds.iter().any(|(k, _)| *k == u32k) {
            kinds.push((u32k, 1));
        }
        for (wk, max_rank) in kinds {
            for rank in 1..=max_rank {
                for scalar in [false, true] {
                    self.builtin(
                        format!("strided {wk:?} {rank} {scalar}"),
                        |p| copy::strided(p, wk, rank, scalar),
                        &None,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Every kernel primitive `p` may launch.
    fn prim(&mut self, p: &'a PrimStep) -> Result<()> {
        let loc = &p.loc;
        match &p.prim {
            Prim::PerSegment { w, arrs, lam } => {
                if p.free.iter().any(|v| self.is_acc(v)) {
                    // Flattening makes none; a run reports the same (`exec`'s per-segment
                    // primitive).
                    return Err(Error::internal(
                        loc,
                        "a primitive per segment updating accumulators",
                    ));
                }
                // Few long rows: a segmented reduction or scan; otherwise the map kernel.
                if let Some((scan, op, inputs)) = crate::codegen::segmented::segmented_of(arrs, lam)
                {
                    let ret_rank = usize::from(scan);
                    if inputs.iter().all(|v| self.rank(v) == 2)
                        && lam.ret.iter().all(|t| t.rank() == ret_rank)
                        && op.neutral.len() == inputs.len()
                    {
                        let elems = inputs
                            .iter()
                            .map(|v| self.elem(v, loc))
                            .collect::<Result<Vec<_>>>()?;
                        let names: Vec<VName> = inputs.iter().map(|v| (*v).clone()).collect();
                        self.prim_kernel(p, PrimKernel::Segmented, |prog, ht| {
                            seg_kernel(prog, op, &elems, SegInputs::Host(&names), scan, loc, ht)
                        })?;
                        // Rows in several pieces: the kernel combining the pieces' partials.
                        if !scan {
                            self.prim_kernel(p, PrimKernel::SegmentedCombine, |prog, ht| {
                                seg_kernel(prog, op, &elems, SegInputs::Partials, false, loc, ht)
                            })?;
                        }
                    }
                }
                let lavapipe = self.lavapipe();
                self.prim_kernel(p, PrimKernel::Map, |prog, ht| {
                    crate::codegen::map::map_kernel_on(prog, w, arrs, lam, loc, ht, lavapipe)
                })
            }
            Prim::Reduce { arrs, op, .. } | Prim::Scan { arrs, op, .. } => {
                let scan = matches!(p.prim, Prim::Scan { .. });
                if arrs.iter().any(|a| self.rank(a) >= 2) {
                    return self.columns(p, arrs, op, scan);
                }
                let elems = arrs
                    .iter()
                    .map(|a| self.elem(a, loc))
                    .collect::<Result<Vec<_>>>()?;
                let k = elems.len();
                let io = |src: fn(usize) -> BindSrc, base: usize| -> Vec<Io> {
                    (0..k)
                        .map(|i| Io {
                            src: src(base + i),
                            off: None,
                        })
                        .collect()
                };
                let ios: Vec<Io> = arrs
                    .iter()
                    .map(|a| Io {
                        src: BindSrc::Var(a.clone()),
                        off: Some(a.clone()),
                    })
                    .collect();
                let outs = io(BindSrc::Out, 0);
                let tmps = io(BindSrc::Tmp, 0);
                let pres = io(BindSrc::Tmp, k);
                let (gpu, big, comm) =
                    (self.gpu(), tuple_too_big(&elems), operator::commutative(op));
                let mut passes: Vec<(Phase, PrimKernel, &[Io], &[Io])> = Vec::new();
                if scan {
                    let tiled = gpu && tiled_scan_fits(self.ctx, &elems);
                    for per_thread in [false, true] {
                        for tiled in [false, tiled] {
                            let [p1, p2, p3] = scan_passes(gpu, big, per_thread, tiled, comm);
                            passes.push((p1.0, p1.1, &ios, &[]));
                            passes.push((p2.0, p2.1, &tmps, &[]));
                            passes.push((p3.0, p3.1, &ios, &pres));
                        }
                    }
                } else {
                    let strided = gpu && !big && comm;
                    // (The strided layout never gives each thread its own partial.)
                    let layouts: &[bool] = if strided { &[false] } else { &[false, true] };
                    for &per_thread in layouts {
                        let [p1, p2] = reduce_passes(gpu, big, strided, per_thread);
                        passes.push((p1.0, p1.1, &ios, &[]));
                        passes.push((p2.0, p2.1, &tmps, &[]));
                    }
                }
                for (phase, kind, ins, pre) in passes {
                    self.prim_kernel(p, kind, |prog, ht| {
                        chunked::chunked(prog, op, &elems, ins, &outs, pre, phase, loc, ht)
                    })?;
                }
                Ok(())
            }
            Prim::Hist {
                dest,
                op,
                inds,
                vals,
                disjoint,
                ..
            } => {
                let ops = hist_operators(dest.len(), op, loc)?;
                let info = self.ctx.info().clone();
                let disjoint = *disjoint;
                for (k, op1) in ops.iter().enumerate() {
                    let (d, v) = (&dest[k], &vals[k]);
                    if self.rank(d) != 1 || self.rank(v) != 1 {
                        return Err(Error::unsupported(
                            "`reduce_by_index` with array-valued bins",
                            loc,
                        ));
                    }
                    let t = self.elem(d, loc)?;
                    if t.byte_size() == 8 && !info.int64_atomics {
                        return Err(Error::NotSupported {
                            what: format!("64-bit atomics (reduce_by_index on {t})"),
                            loc: loc.clone(),
                            device: Some(info.name.clone()),
                        });
                    }
                    self.prim_kernel(p, PrimKernel::Hist(k), |prog, ht| {
                        hist::hist(
                            prog,
                            op1,
                            t,
                            inds,
                            v,
                            d,
                            info.float32_atomic_add,
                            info.int64_atomics,
                            disjoint,
                            loc,
                            ht,
                        )
                    })?;
                }
                Ok(())
            }
            Prim::Scatter {
                dest, inds, vals, ..
            } => {
                let vt = vals
                    .iter()
                    .zip(dest)
                    .map(|(v, d)| Ok((v.clone(), self.elem(d, loc)?)))
                    .collect::<Result<Vec<_>>>()?;
                for claim in [true, false] {
                    self.prim_kernel(p, PrimKernel::Scatter { claim }, |prog, ht| {
                        scatter::scatter(prog, inds, &vt, dest, claim, ht)
                    })?;
                }
                Ok(())
            }
        }
    }

    /// Reductions and scans over arrays of arrays: the column kernel of a vectorised operator
    /// over `[n][m]` arrays, else the pairwise passes.
    fn columns(
        &mut self,
        p: &'a PrimStep,
        arrs: &'a [VName],
        op: &'a ir::Operator,
        scan: bool,
    ) -> Result<()> {
        let loc = &p.loc;
        let vop = crate::codegen::columns::vectorised_op(op);
        match vop {
            Some(vop) if arrs.iter().all(|a| self.rank(a) == 2) => {
                let elems = arrs
                    .iter()
                    .map(|a| self.elem(a, loc))
                    .collect::<Result<Vec<_>>>()?;
                self.prim_kernel(p, PrimKernel::Columns, |prog, ht| {
                    crate::codegen::columns::column_kernel(
                        prog, op, &vop, arrs, &elems, scan, loc, ht,
                    )
                })
            }
            _ => {
                // The executor's pairwise passes (`exec`'s row pairs): the operator as a `map`
                // kernel over pairs of rows, which it reads through host names bound per pass
                // to views of the arrays (of the arrays' types) and their number of rows.
                let (wname, names) = crate::exec::pass_names(arrs.len());
                let k = arrs.len();
                for (i, a) in arrs.iter().enumerate() {
                    let t =
                        self.types.get(&a.id).cloned().ok_or_else(|| {
                            Error::internal(loc, format!("no static type for `{a}`"))
                        })?;
                    self.note_ty(&names[i], &t);
                    self.note_ty(&names[k + i], &t);
                }
                self.note_ty(&wname, &Type::Prim(PrimType::I64));
                let lavapipe = self.lavapipe();
                let rows = ir::SubExp::Var(wname);
                self.prim_kernel(p, PrimKernel::RowPairs { scan }, |prog, ht| {
                    crate::codegen::map::map_kernel_on(
                        prog, &rows, &names, &op.lam, loc, ht, lavapipe,
                    )
                })
            }
        }
    }
}
