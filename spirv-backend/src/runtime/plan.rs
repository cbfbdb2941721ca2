//! The execution plan of a kernel IR program: what the runtime does, decided once per program
//! (before any input is seen) and run any number of times.
//!
//! Host code maps one to one onto steps: host statements the executor runs as they are
//! ([`Step::Ir`]: scalar arithmetic, indexing, in-place updates, the array primitives), calls,
//! `if`, `loop`, `with_acc`, thresholds. A segmented operation becomes:
//! - `segmap` of results ([`KernelResult::Returns`]): one [`Step::Map`] kernel;
//! - `segred` / `segscan` / `seghist`: a [`Step::Map`] that computes the operators' operands
//!   (and the map outputs) into arrays of the space's shape, then the primitive over those
//!   arrays ([`Step::Prim`], a [`Prim`] with a kernel identity of its own) that the executor
//!   runs with its chunked kernels: a reduction, scan or histogram for a one-dimensional
//!   space. For more dimensions, scans
//!   of scalars computed by the kernel are one flat scan of the flattened operands with the
//!   operator lifted to restart at each segment's first element (the kernel computes those
//!   flags); reductions,
//!   histograms and scans of arrays reshape the operands to `[segments][inner]` and run the
//!   primitive per segment ([`Prim::PerSegment`]: a team of threads or one thread per
//!   segment).
//!   The results are reshaped back. Where every operand is the element of a host array at
//!   the thread's point (`xs[gtid_1, …, gtid_n]`), the arrays are used directly (no kernel,
//!   and scans of them run per segment too);
//! - [`KernelResult::Write`]: the map kernel also computes the written indices and values, and
//!   a scatter ([`Prim::Scatter`]; later writes win, as in the kernel IR) applies them.
//!
//! Kernels and primitives get a [`KernelId`], their identity in the executor's caches.

use crate::error::Error;
use std::collections::HashMap;
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{
    self, AccInput, Attrs, BinOp, DimIndex, Exp, Lambda, LoopForm, NameSource, Operator, Param,
    Pat, Soac, Stm, SubExp, Type, VName,
};
use vkad_core::passes::traverse::free_vars;
use vkad_core::prim::{IntType, PrimType, PrimValue};
use vkad_core::seg::{
    self, HostBody, HostExp, KernelResult, SegKind, SegOp, SegSpace, SeqChunk, ThresholdKind,
};

pub use crate::exec::{KernelId, Prim, PrimStep};

/// A planned program.
#[derive(Debug)]
pub struct Plan {
    pub funs: Vec<PlanFun>,
    /// The number of kernels ([`KernelId`]s run from 0 to this).
    pub kernels: usize,
}

impl Plan {
    pub fn fun(&self, name: &str) -> Option<&PlanFun> {
        self.funs.iter().find(|f| &*f.name == name)
    }
}

#[derive(Debug)]
pub struct PlanFun {
    pub name: Arc<str>,
    /// Size parameters, then value parameters.
    pub params: Vec<VName>,
    pub body: PlanBody,
}

#[derive(Debug, Default)]
pub struct PlanBody {
    pub steps: Vec<Step>,
    pub result: Vec<SubExp>,
    /// For each step, the arrays bound in this body that nothing after it uses (nor the
    /// result): the runtime forgets them after the step, so that an in-place update of an
    /// array whose views are dead writes it without copying it first.
    pub dead_after: Vec<Vec<VName>>,
}

#[derive(Debug)]
pub enum Step {
    /// A host statement the executor runs itself: scalar arithmetic, indexing, in-place
    /// updates, the array primitives (`iota`, `replicate`, copies, reshapes, sorts) — never a
    /// SOAC, `if`, `loop`, `with_acc` or call.
    Ir(Stm),
    Call {
        pat: Pat,
        fun: Arc<str>,
        args: Vec<SubExp>,
        loc: Option<SrcLoc>,
    },
    If {
        pat: Pat,
        cond: SubExp,
        then_b: PlanBody,
        else_b: PlanBody,
        loc: Option<SrcLoc>,
    },
    Loop {
        pat: Pat,
        params: Vec<(Param, SubExp)>,
        form: LoopForm,
        body: PlanBody,
        loc: Option<SrcLoc>,
    },
    /// `with_acc`: the accumulators' arrays, then the body's other results.
    WithAcc {
        pat: Pat,
        inputs: Vec<AccInput>,
        params: Vec<Param>,
        body: PlanBody,
        loc: Option<SrcLoc>,
    },
    Threshold {
        pat: Pat,
        size: SubExp,
        name: Arc<str>,
        kind: ThresholdKind,
    },
    /// A host loop in two versions (`seg::HostExp::VersionedLoop`): `par` where `par_cond`
    /// holds, else `seq`, or `par` where the device cannot run `seq`. `id` names the loop
    /// among the program's versioned loops.
    VersionedLoop {
        id: usize,
        pat: Pat,
        par_cond: SubExp,
        par: PlanBody,
        seq: PlanBody,
        /// How `seq` runs in chunks of iterations (one launch each), if it does.
        chunk: Option<SeqChunk>,
        /// What `seq` may change outside itself
        /// ([`vkad_core::seg::effects::written_outside`]: arrays, accumulators by their
        /// certificate): a runtime that may abandon `seq` part-way copies these first and
        /// copies them back before it runs `par` (empty: `seq` may simply be abandoned).
        undo: Vec<VName>,
        loc: Option<SrcLoc>,
    },
    Map(MapStep),
    /// A primitive over materialised operand arrays (what a `segred`, `segscan` or `seghist`
    /// computes after its map kernel, and the scatter of a kernel's writes).
    Prim(PrimStep),
}

/// A `segmap` kernel: its outputs are bound to `outs` (an accumulator result to the
/// accumulator).
#[derive(Debug)]
pub struct MapStep {
    pub id: KernelId,
    pub space: SegSpace,
    pub stms: Vec<Stm>,
    pub results: Vec<SubExp>,
    pub ret: Vec<Type>,
    pub outs: Vec<VName>,
    /// For each accumulator result, the host accumulator it is (a free variable of the body
    /// with the same certificate); `None` for the other results.
    pub acc_results: Vec<Option<VName>>,
    /// The host variables the body reads (sorted by id), whose types the kernel depends on.
    pub free: Vec<VName>,
    pub loc: Option<SrcLoc>,
}

/// Plans every function of `prog`.
pub fn plan(prog: &seg::Program) -> crate::error::Result<Plan> {
    let mut p = Planner {
        names: prog.name_source.clone(),
        kernels: 0,
        versioned_loops: 0,
        types: HashMap::new(),
    };
    let mut funs = Vec::with_capacity(prog.funs.len());
    for f in &prog.funs {
        p.note(&f.params);
        funs.push(PlanFun {
            name: f.name.clone(),
            params: f
                .size_params
                .iter()
                .cloned()
                .chain(f.params.iter().map(|p| p.name.clone()))
                .collect(),
            body: p.body(&f.body)?,
        });
    }
    Ok(Plan {
        funs,
        kernels: p.kernels,
    })
}

struct Planner {
    names: NameSource,
    kernels: usize,
    /// Versioned loops planned so far.
    versioned_loops: usize,
    /// The types of the host variables planned so far (by id).
    types: HashMap<u32, Type>,
}

/// For each statement of `b`, the arrays bound by `b`'s statements whose last use (by
/// [`seg::uses::host_stm_uses`]) it is, or that are never used after their statement; not
/// those in `b`'s result.
fn dead_arrays(b: &HostBody) -> Vec<Vec<VName>> {
    // The last statement using each name (a later one overwrites an earlier one).
    let mut last_use: HashMap<VName, usize> = HashMap::new();
    for (i, s) in b.stms.iter().enumerate() {
        last_use.extend(seg::uses::host_stm_uses(s).into_iter().map(|v| (v, i)));
    }
    let in_result: std::collections::HashSet<&VName> =
        b.result.iter().filter_map(|r| r.as_var()).collect();
    let mut dead = vec![Vec::new(); b.stms.len()];
    for (j, s) in b.stms.iter().enumerate() {
        for pe in &s.pat.elems {
            if !matches!(pe.ty, Type::Array { .. }) || in_result.contains(&pe.name) {
                continue;
            }
            let last = last_use
                .get(&pe.name)
                .copied()
                .filter(|&i| i > j)
                .unwrap_or(j);
            dead[last].push(pe.name.clone());
        }
    }
    dead
}

fn stm(pat: Pat, exp: Exp, loc: &Option<SrcLoc>) -> Stm {
    Stm {
        pat,
        exp,
        attrs: Attrs::default(),
        loc: loc.clone(),
    }
}

fn var(v: &VName) -> SubExp {
    SubExp::Var(v.clone())
}

impl Planner {
    fn body(&mut self, b: &HostBody) -> crate::error::Result<PlanBody> {
        let mut steps = Vec::with_capacity(b.stms.len());
        let mut dead_after: Vec<Vec<VName>> = Vec::with_capacity(b.stms.len());
        for (s, dead) in b.stms.iter().zip(dead_arrays(b)) {
            self.host_stm(s, &mut steps)?;
            dead_after.resize_with(steps.len(), Vec::new);
            // (A statement planned as no step uses nothing: its dead arrays go after the
            // step before it.)
            if let Some(d) = dead_after.last_mut() {
                d.extend(dead);
            }
        }
        Ok(PlanBody {
            steps,
            result: b.result.clone(),
            dead_after,
        })
    }

    fn note(&mut self, params: &[Param]) {
        for p in params {
            self.types.insert(p.name.id, p.ty.clone());
        }
    }

    fn host_stm(&mut self, s: &seg::HostStm, out: &mut Vec<Step>) -> crate::error::Result<()> {
        self.note(&s.pat.elems);
        match &s.exp {
            HostExp::Loop { params, .. } => {
                let ps: Vec<Param> = params.iter().map(|(p, _)| p.clone()).collect();
                self.note(&ps);
            }
            HostExp::WithAcc { lam, .. } => self.note(&lam.params),
            _ => {}
        }
        let pat = s.pat.clone();
        let loc = s.loc.clone();
        match &s.exp {
            HostExp::Plain(Exp::Apply { fun, args, .. }) => out.push(Step::Call {
                pat,
                fun: fun.clone(),
                args: args.clone(),
                loc,
            }),
            // (Flattening leaves no SOAC in host code: every one is a segmented operation.)
            HostExp::Plain(Exp::Soac(_)) => {
                return Err(Error::bug("a SOAC in the host code of the kernel IR"))
            }
            HostExp::Plain(e) => out.push(Step::Ir(Stm {
                pat,
                exp: e.clone(),
                attrs: s.attrs.clone(),
                loc,
            })),
            HostExp::If {
                cond: SubExp::Var(c),
                then_b,
                else_b,
                nest_versions: true,
                ..
            } => self.nest_versions(s, c, then_b, else_b, out)?,
            HostExp::If {
                cond,
                then_b,
                else_b,
                ..
            } => out.push(Step::If {
                pat,
                cond: cond.clone(),
                then_b: self.body(then_b)?,
                else_b: self.body(else_b)?,
                loc,
            }),
            HostExp::Loop { params, form, body } => out.push(Step::Loop {
                pat,
                params: params.clone(),
                form: form.clone(),
                body: self.body(body)?,
                loc,
            }),
            HostExp::WithAcc { inputs, lam } => out.push(Step::WithAcc {
                pat,
                inputs: inputs.clone(),
                params: lam.params.clone(),
                body: self.body(&lam.body)?,
                loc,
            }),
            HostExp::Threshold { size, name, kind } => out.push(Step::Threshold {
                pat,
                size: size.clone(),
                name: name.clone(),
                kind: *kind,
            }),
            HostExp::VersionedLoop {
                par_cond,
                par,
                seq,
                chunk,
                ..
            } => {
                self.versioned_loops += 1;
                out.push(Step::VersionedLoop {
                    id: self.versioned_loops - 1,
                    pat,
                    par_cond: par_cond.clone(),
                    par: self.body(par)?,
                    seq: self.body(seq)?,
                    chunk: chunk.clone(),
                    // A chunked one-thread loop writes outside itself only the rows it copies
                    // into its tapes (`vkad_core::flatten::seq_loop`): written before they are
                    // read, the same rows by every version and every run, so it may restart.
                    undo: if chunk.is_some() {
                        Vec::new()
                    } else {
                        seg::effects::written_outside(seq)
                    },
                    loc,
                })
            }
            HostExp::Seg(op) => self.seg_op(&s.pat, op, &loc, out)?,
        }
        Ok(())
    }

    /// A map nest in two versions (flattening's rules 4 and 5: `if versions cond then seq
    /// else dist`, `cond` a nest threshold): planned as a versioned loop whose `par` is the distributed
    /// version, taken where `cond` does not hold, so that a device that cannot run the
    /// sequentialised version's threads (lavapipe's loop limit) runs the distributed one
    /// instead, as for the one-thread version of a host loop. Where the sequentialised version
    /// changes something outside itself (an accumulator, an array in place), those are what
    /// the runtime copies first to undo a version it abandons (`undo`).
    fn nest_versions(
        &mut self,
        s: &seg::HostStm,
        cond: &VName,
        seq: &HostBody,
        dist: &HostBody,
        out: &mut Vec<Step>,
    ) -> crate::error::Result<()> {
        let bool_t = PrimType::Bool;
        let not = Param {
            name: self.fresh("dist_cond"),
            ty: Type::Prim(bool_t),
        };
        self.note(std::slice::from_ref(&not));
        out.push(Step::Ir(stm(
            Pat {
                elems: vec![not.clone()],
            },
            Exp::UnOp(ir::UnOp::Not(bool_t), var(cond)),
            &s.loc,
        )));
        self.versioned_loops += 1;
        out.push(Step::VersionedLoop {
            id: self.versioned_loops - 1,
            pat: s.pat.clone(),
            par_cond: var(&not.name),
            par: self.body(dist)?,
            seq: self.body(seq)?,
            chunk: None,
            undo: seg::effects::written_outside(seq),
            loc: s.loc.clone(),
        });
        Ok(())
    }

    fn fresh(&mut self, base: &str) -> VName {
        self.names.fresh(base)
    }

    /// `prim` bound to `pat`, as a step with a kernel identity of its own.
    fn prim(&mut self, pat: Pat, prim: Prim, loc: &Option<SrcLoc>, out: &mut Vec<Step>) {
        let as_stm = stm(pat, Exp::Soac(prim.as_soac()), loc);
        let mut free: Vec<VName> = free_vars(std::slice::from_ref(&as_stm), &[])
            .into_iter()
            .collect();
        free.sort_by_key(|v| v.id);
        out.push(Step::Prim(PrimStep {
            id: self.kernel_id(),
            pat: as_stm.pat,
            prim,
            free,
            loc: loc.clone(),
        }));
    }

    fn kernel_id(&mut self) -> KernelId {
        self.kernels += 1;
        KernelId(self.kernels - 1)
    }

    /// `a * b` as a host statement (`i64`), returned as an operand.
    fn mul(&mut self, a: SubExp, b: SubExp, loc: &Option<SrcLoc>, out: &mut Vec<Step>) -> SubExp {
        if a == SubExp::Const(PrimValue::I64(1)) {
            return b;
        }
        let v = self.fresh("n");
        out.push(Step::Ir(stm(
            Pat {
                elems: vec![Param {
                    name: v.clone(),
                    ty: Type::Prim(PrimType::I64),
                }],
            },
            Exp::BinOp(BinOp::Mul(PrimType::Int(IntType::I64)), a, b),
            loc,
        )));
        var(&v)
    }

    /// The product of `dims` as a host operand.
    fn product(&mut self, dims: &[SubExp], loc: &Option<SrcLoc>, out: &mut Vec<Step>) -> SubExp {
        let mut n = SubExp::Const(PrimValue::I64(1));
        for d in dims {
            n = self.mul(n, d.clone(), loc, out);
        }
        n
    }

    /// `reshape shape v` bound to a fresh name of type `[shape]elem`.
    fn reshape(
        &mut self,
        v: &VName,
        shape: Vec<SubExp>,
        elem: PrimType,
        loc: &Option<SrcLoc>,
        out: &mut Vec<Step>,
    ) -> VName {
        let r = self.fresh(&v.base);
        out.push(Step::Ir(stm(
            Pat {
                elems: vec![Param {
                    name: r.clone(),
                    ty: Type::array(elem, shape.clone()),
                }],
            },
            Exp::Reshape(shape, v.clone()),
            loc,
        )));
        r
    }

    /// `v`, an array of the space's shape whose elements are of type `t`, reshaped to `[n]t`
    /// (`n` the number of points of the space).
    fn flatten(
        &mut self,
        v: &VName,
        t: &Type,
        n: &SubExp,
        loc: &Option<SrcLoc>,
        out: &mut Vec<Step>,
    ) -> VName {
        let mut shape = vec![n.clone()];
        shape.extend(t.shape().iter().cloned());
        let elem = t.elem().unwrap_or(PrimType::I64);
        self.reshape(v, shape, elem, loc, out)
    }

    fn seg_op(
        &mut self,
        pat: &Pat,
        op: &SegOp,
        loc: &Option<SrcLoc>,
        out: &mut Vec<Step>,
    ) -> crate::error::Result<()> {
        let dims: Vec<SubExp> = op.space.sizes().cloned().collect();
        let nops = op.kind.num_op_results();
        let npat_ops = match &op.kind {
            SegKind::Map => 0,
            SegKind::Red(_) | SegKind::Scan(_) => nops,
            SegKind::Hist(hs) => hs.iter().map(|h| h.dest.len()).sum(),
        };
        if pat.elems.len() != npat_ops + op.body.results.len() - nops
            || op.ret.len() != op.body.results.len()
        {
            return Err(Error::bug("segmented operation of the wrong arity"));
        }
        // The map kernel: operands first, then the map part's values.
        let mut results = Vec::new();
        let mut ret = Vec::new();
        let mut outs = Vec::new();
        let mut operands = Vec::new();
        for (r, t) in op.body.results.iter().zip(&op.ret).take(nops) {
            let KernelResult::Returns(se) = r else {
                return Err(Error::bug("an operator operand written to an array"));
            };
            let v = self.fresh("operand");
            results.push(se.clone());
            ret.push(t.clone());
            outs.push(v.clone());
            operands.push((v, t.clone()));
        }
        let mut writes: Vec<Write> = Vec::new();
        for ((r, t), p) in op
            .body
            .results
            .iter()
            .zip(&op.ret)
            .skip(nops)
            .zip(&pat.elems[npat_ops..])
        {
            match r {
                KernelResult::Returns(se) => {
                    results.push(se.clone());
                    ret.push(t.clone());
                    outs.push(p.name.clone());
                }
                KernelResult::Write { dest, idx, val } => {
                    if writes.iter().any(|w| w.dest == *dest) {
                        return Err(Error::unsupported(
                            "two writes to one array in a kernel",
                            loc,
                        ));
                    }
                    let mut ivs = Vec::with_capacity(idx.len());
                    for i in idx {
                        let v = self.fresh("index");
                        results.push(i.clone());
                        ret.push(Type::Prim(PrimType::I64));
                        outs.push(v.clone());
                        ivs.push(v);
                    }
                    let v = self.fresh("value");
                    results.push(val.clone());
                    ret.push(t.clone());
                    outs.push(v.clone());
                    writes.push(Write {
                        dest: dest.clone(),
                        pat: p.clone(),
                        indices: ivs,
                        value: (v, t.clone()),
                    });
                }
            }
        }
        // Operands that are whole host arrays need no kernel: those of a reduction, scan or
        // histogram, and the indices and values of a kernel that only writes (a scatter).
        let only_writes = !writes.is_empty()
            && op
                .body
                .results
                .iter()
                .all(|r| matches!(r, KernelResult::Write { .. }));
        let direct = match &op.kind {
            SegKind::Map if only_writes => direct_operands(op, &results, &ret, &self.types),
            SegKind::Map => None,
            _ if results.len() == nops => direct_operands(op, &results, &ret, &self.types),
            _ => None,
        };
        // Segmented scans over more than one dimension whose operands a kernel computes run
        // as one flat scan whose operator restarts at every segment's first element: the
        // kernel also computes that flag. Scans of host arrays run per segment (as the `map`
        // of a scan: a team of threads or a workgroup per row where rows are too few for a
        // thread each).
        let mut extra_stms = Vec::new();
        let mut flag = None;
        let scalar_ops = match &op.kind {
            SegKind::Scan(ops) => ops
                .iter()
                .all(|o| o.lam.params.iter().all(|p| p.ty.rank() == 0)),
            _ => false,
        };
        if scalar_ops && dims.len() > 1 && direct.is_none() {
            let (inner, _) = &op.space.dims[dims.len() - 1];
            let f = self.fresh("seg_start");
            extra_stms.push(stm(
                Pat {
                    elems: vec![Param {
                        name: f.clone(),
                        ty: Type::Prim(PrimType::Bool),
                    }],
                },
                Exp::CmpOp(
                    ir::CmpOp::Eq(PrimType::Int(IntType::I64)),
                    var(inner),
                    SubExp::Const(PrimValue::I64(0)),
                ),
                loc,
            ));
            let fo = self.fresh("seg_starts");
            results.push(var(&f));
            ret.push(Type::Prim(PrimType::Bool));
            outs.push(fo.clone());
            flag = Some(fo);
        }
        // The outputs a kernel of only writes would have, where host arrays replace it.
        let written_outs = (only_writes && direct.is_some()).then(|| outs.clone());
        let operand_arrays: Vec<(VName, Type)> = match direct {
            // Arrays read in another order are transposed first: the segmented primitives
            // read each segment contiguously.
            Some(arrs) => arrs
                .into_iter()
                .map(|d| match d.rearrange {
                    None => (d.array, d.elem),
                    Some((perm, ty)) => {
                        let t = self.fresh("operand_t");
                        self.types.insert(t.id, ty.clone());
                        out.push(Step::Ir(stm(
                            Pat {
                                elems: vec![Param {
                                    name: t.clone(),
                                    ty,
                                }],
                            },
                            Exp::Rearrange(perm, d.array),
                            loc,
                        )));
                        (t, d.elem)
                    }
                })
                .collect(),
            None => {
                let id = self.kernel_id();
                let dims_names: Vec<SubExp> = op.space.sizes().cloned().collect();
                let mut extra = results.clone();
                extra.extend(dims_names);
                let mut stms = op.body.stms.clone();
                stms.extend(extra_stms);
                let mut free: Vec<VName> = free_vars(&stms, &extra)
                    .into_iter()
                    .filter(|v| op.space.indices().all(|i| i != v))
                    .collect();
                free.sort_by_key(|v| v.id);
                let mut acc_results = Vec::with_capacity(ret.len());
                for t in &ret {
                    acc_results.push(match t {
                        // The accumulator is the `with_acc` parameter named by the cert (whose
                        // own type may still carry the cert it had before AD renamed it), else
                        // a variable of the same accumulator type.
                        Type::Acc { cert, .. } => Some(
                            free.iter()
                                .find(|v| {
                                    *v == cert
                                        && matches!(self.types.get(&v.id), Some(Type::Acc { .. }))
                                })
                                .or_else(|| {
                                    free.iter().find(|v| {
                                        matches!(self.types.get(&v.id),
                                            Some(Type::Acc { cert: c, .. }) if c == cert)
                                    })
                                })
                                .cloned()
                                .ok_or_else(|| {
                                    Error::bug("a kernel returns an accumulator it was not given")
                                })?,
                        ),
                        _ => None,
                    });
                }
                out.push(Step::Map(MapStep {
                    id,
                    space: op.space.clone(),
                    stms,
                    results,
                    ret,
                    outs,
                    acc_results,
                    free,
                    loc: loc.clone(),
                }));
                operands
            }
        };
        // A kernel that only writes host arrays' elements is no kernel: the scatters read the
        // arrays (`operand_arrays` holds them, one per output of the kernel it replaces).
        if let Some(outs) = &written_outs {
            let direct: HashMap<&VName, &VName> = outs
                .iter()
                .zip(&operand_arrays)
                .map(|(o, (a, _))| (o, a))
                .collect();
            for w in &mut writes {
                for i in &mut w.indices {
                    if let Some(a) = direct.get(&*i) {
                        *i = (*a).clone();
                    }
                }
                if let Some(a) = direct.get(&w.value.0) {
                    w.value.0 = (*a).clone();
                }
            }
        }
        // Scatters of the writes, over the flattened space.
        if !writes.is_empty() {
            let n = self.product(&dims, loc, out);
            for Write {
                dest,
                pat: p,
                indices: ivs,
                value: (v, t),
            } in writes
            {
                let flat = |me: &mut Self, a: &VName, t: &Type, out: &mut Vec<Step>| {
                    if dims.len() == 1 {
                        a.clone()
                    } else {
                        me.flatten(a, t, &n, loc, out)
                    }
                };
                let inds: Vec<VName> = ivs
                    .iter()
                    .map(|i| flat(self, i, &Type::Prim(PrimType::I64), out))
                    .collect();
                let vals = vec![flat(self, &v, &t, out)];
                let prim = Prim::Scatter {
                    w: n.clone(),
                    dest: vec![dest],
                    inds,
                    vals,
                };
                self.prim(Pat { elems: vec![p] }, prim, loc, out);
            }
        }
        let pat_ops = &pat.elems[..npat_ops];
        match &op.kind {
            SegKind::Map => {}
            SegKind::Red(ops) | SegKind::Scan(ops) => {
                let scan = matches!(op.kind, SegKind::Scan(_));
                let mut k = 0;
                for o in ops {
                    let m = o.neutral.len();
                    if let Some(flag) = &flag {
                        let arrs = &operand_arrays[k..k + m];
                        self.flat_scan(&dims, arrs, flag, &pat_ops[k..k + m], o, loc, out);
                        k += m;
                        continue;
                    }
                    self.segmented(
                        &dims,
                        &operand_arrays[k..k + m],
                        &pat_ops[k..k + m],
                        Operands::RedScan(o, scan),
                        loc,
                        out,
                    );
                    k += m;
                }
            }
            SegKind::Hist(hs) => {
                let (mut k, mut d) = (0, 0);
                for h in hs {
                    let m = h.dest.len();
                    self.segmented(
                        &dims,
                        &operand_arrays[k..k + 1 + m],
                        &pat_ops[d..d + m],
                        Operands::Hist(h),
                        loc,
                        out,
                    );
                    k += 1 + m;
                    d += m;
                }
            }
        }
        Ok(())
    }

    /// A segmented scan over the space `dims` (more than one dimension) as one scan of the
    /// flattened operands `arrs` with the operator lifted to (segment start, value) pairs:
    /// `(fa, a) ⊕ (fb, b) = (fa || fb, if fb then b else a ⊕ b)`, which is associative when `⊕`
    /// is and restarts at every element whose flag (`flag`, true at each segment's first
    /// element) is set. The results are reshaped back to `dims` and bound to `pat`.
    #[allow(clippy::too_many_arguments)] // the scan's space, operands, flags, pattern, operator
    fn flat_scan(
        &mut self,
        dims: &[SubExp],
        arrs: &[(VName, Type)],
        flag: &VName,
        pat: &[Param],
        op: &Operator,
        loc: &Option<SrcLoc>,
        out: &mut Vec<Step>,
    ) {
        let n = self.product(dims, loc, out);
        let mut inputs = vec![self.flatten(flag, &Type::Prim(PrimType::Bool), &n, loc, out)];
        for (v, t) in arrs {
            inputs.push(self.flatten(v, t, &n, loc, out));
        }
        let k = op.neutral.len();
        let bool_param = |me: &mut Self| Param {
            name: me.fresh("seg_start"),
            ty: Type::Prim(PrimType::Bool),
        };
        let (fa, fb) = (bool_param(self), bool_param(self));
        let (xs, ys) = op.lam.params.split_at(k);
        let mut params = vec![fa.clone()];
        params.extend(xs.iter().cloned());
        params.push(fb.clone());
        params.extend(ys.iter().cloned());
        let f = bool_param(self);
        let r: Vec<Param> = op
            .lam
            .ret
            .iter()
            .map(|t| Param {
                name: self.fresh("seg_scan"),
                ty: t.clone(),
            })
            .collect();
        let body = ir::Body {
            stms: vec![
                stm(
                    Pat {
                        elems: vec![f.clone()],
                    },
                    Exp::BinOp(BinOp::LogOr, var(&fa.name), var(&fb.name)),
                    loc,
                ),
                stm(
                    Pat { elems: r.clone() },
                    Exp::If {
                        cond: var(&fb.name),
                        then_b: ir::Body {
                            stms: vec![],
                            result: ys.iter().map(|p| var(&p.name)).collect(),
                        },
                        else_b: op.lam.body.clone(),
                        ret: op.lam.ret.iter().map(|t| t.to_ext()).collect(),
                    },
                    loc,
                ),
            ],
            result: std::iter::once(var(&f.name))
                .chain(r.iter().map(|p| var(&p.name)))
                .collect(),
        };
        let mut ret = vec![Type::Prim(PrimType::Bool)];
        ret.extend(op.lam.ret.iter().cloned());
        let mut neutral = vec![SubExp::Const(PrimValue::Bool(false))];
        neutral.extend(op.neutral.iter().cloned());
        let lifted = Operator {
            lam: Lambda { params, body, ret },
            neutral,
            commutative: false,
        };
        let mut res = vec![Param {
            name: self.fresh("seg_starts"),
            ty: Type::array(PrimType::Bool, vec![n.clone()]),
        }];
        for p in pat {
            let elem = p.ty.elem().unwrap_or(PrimType::Bool);
            let mut shape = vec![n.clone()];
            shape.extend(p.ty.shape()[dims.len()..].iter().cloned());
            res.push(Param {
                name: self.fresh("scanned"),
                ty: Type::array(elem, shape),
            });
        }
        let scan = Prim::Scan {
            w: n.clone(),
            arrs: inputs,
            op: lifted,
        };
        self.prim(Pat { elems: res.clone() }, scan, loc, out);
        for (r, p) in res[1..].iter().zip(pat) {
            out.push(Step::Ir(stm(
                Pat {
                    elems: vec![p.clone()],
                },
                Exp::Reshape(p.ty.shape().to_vec(), r.name.clone()),
                loc,
            )));
        }
    }

    /// The primitive `prim` over the operand arrays `arrs` (of shape `dims`, then each
    /// operand's own shape), bound to `pat`: directly for one dimension, per segment of the
    /// innermost dimension otherwise.
    fn segmented(
        &mut self,
        dims: &[SubExp],
        arrs: &[(VName, Type)],
        pat: &[Param],
        prim: Operands<'_>,
        loc: &Option<SrcLoc>,
        out: &mut Vec<Step>,
    ) {
        let (outer, inner) = dims.split_at(dims.len() - 1);
        let w = inner[0].clone();
        if outer.is_empty() {
            let names: Vec<VName> = arrs.iter().map(|(v, _)| v.clone()).collect();
            let p = prim.over(w, names);
            self.prim(
                Pat {
                    elems: pat.to_vec(),
                },
                p,
                loc,
                out,
            );
            return;
        }
        // Reshape to [segments][w]..., one primitive per segment, reshape the results back.
        let s = self.product(outer, loc, out);
        let mut params = Vec::with_capacity(arrs.len());
        let mut flat = Vec::with_capacity(arrs.len());
        for (v, t) in arrs {
            let elem = t.elem().unwrap_or(PrimType::I64);
            let mut shape = vec![s.clone(), w.clone()];
            shape.extend(t.shape().iter().cloned());
            flat.push(self.reshape(v, shape, elem, loc, out));
            let mut row = vec![w.clone()];
            row.extend(t.shape().iter().cloned());
            params.push(Param {
                name: self.fresh("row"),
                ty: Type::array(elem, row),
            });
        }
        // Histograms: the destinations are per segment too, and come first.
        let mut lam_params = Vec::new();
        let mut map_inputs = Vec::new();
        let mut dest_rows = Vec::new();
        if let Operands::Hist(h) = &prim {
            for (d, p) in h.dest.iter().zip(pat) {
                let elem = p.ty.elem().unwrap_or(PrimType::I64);
                let row: Vec<SubExp> = p.ty.shape()[outer.len()..].to_vec();
                let mut shape = vec![s.clone()];
                shape.extend(row.iter().cloned());
                map_inputs.push(self.reshape(d, shape, elem, loc, out));
                let dp = Param {
                    name: self.fresh("hist_row"),
                    ty: Type::array(elem, row),
                };
                dest_rows.push(dp.name.clone());
                lam_params.push(dp);
            }
        }
        map_inputs.extend(flat);
        let names: Vec<VName> = params.iter().map(|p| p.name.clone()).collect();
        lam_params.extend(params);
        // Per-segment result types: the pattern's types without the outer dimensions.
        let seg_ret: Vec<Type> = pat
            .iter()
            .map(|p| {
                Type::array(
                    p.ty.elem().unwrap_or(PrimType::I64),
                    p.ty.shape()[outer.len()..].to_vec(),
                )
            })
            .collect();
        let res: Vec<Param> = seg_ret
            .iter()
            .map(|t| Param {
                name: self.fresh("seg"),
                ty: t.clone(),
            })
            .collect();
        let exp = match &prim {
            Operands::Hist(h) => Exp::Soac(Soac::Hist {
                w: w.clone(),
                dest: dest_rows,
                op: h.op.clone(),
                inds: names[0].clone(),
                vals: names[1..].to_vec(),
            }),
            p => Exp::Soac(p.over(w.clone(), names).as_soac()),
        };
        let lam = Lambda {
            params: lam_params,
            body: ir::Body {
                stms: vec![stm(Pat { elems: res.clone() }, exp, loc)],
                result: res.iter().map(|p| var(&p.name)).collect(),
            },
            ret: seg_ret.clone(),
        };
        let mapped: Vec<Param> = seg_ret
            .iter()
            .map(|t| Param {
                name: self.fresh("segs"),
                ty: t.array_of(s.clone()),
            })
            .collect();
        let per_segment = Prim::PerSegment {
            w: s.clone(),
            arrs: map_inputs,
            lam,
        };
        self.prim(
            Pat {
                elems: mapped.clone(),
            },
            per_segment,
            loc,
            out,
        );
        for (m, p) in mapped.iter().zip(pat) {
            out.push(Step::Ir(stm(
                Pat {
                    elems: vec![p.clone()],
                },
                Exp::Reshape(p.ty.shape().to_vec(), m.name.clone()),
                loc,
            )));
        }
    }
}

/// A kernel's write result, planned: the kernel computes the index arrays and the value array;
/// a `scatter` into `dest` binds `pat`.
struct Write {
    dest: VName,
    pat: Param,
    indices: Vec<VName>,
    value: (VName, Type),
}

/// A primitive applied to materialised operands.
enum Operands<'o> {
    /// A reduction (`false`) or inclusive scan (`true`).
    RedScan(&'o Operator, bool),
    Hist(&'o seg::HistOp),
}

impl Operands<'_> {
    /// The primitive over `w` elements of `arrs` (for a histogram: bins, then values).
    fn over(&self, w: SubExp, arrs: Vec<VName>) -> Prim {
        match self {
            Operands::RedScan(op, false) => Prim::Reduce {
                w,
                arrs,
                op: (*op).clone(),
            },
            Operands::RedScan(op, true) => Prim::Scan {
                w,
                arrs,
                op: (*op).clone(),
            },
            Operands::Hist(h) => Prim::Hist {
                w,
                dest: h.dest.clone(),
                op: h.op.clone(),
                inds: arrs[0].clone(),
                vals: arrs[1..].to_vec(),
                disjoint: h.disjoint,
            },
        }
    }
}

/// When every operand of a reduction, scan or histogram is the element `xs[gtid_1, …, gtid_n]`
/// of a host array `xs` at the thread's point (a body of such indexings only, possibly one
/// dimension at a time, as flattening's nests write them), those arrays, each with the
/// permutation that brings its dimensions into the space's order where the indices are the
/// thread indices in another order (`xs[gtid_2, gtid_1]`: a reduction along `xs`'s outer
/// dimension, such as flattening's rule 7 makes).
fn direct_operands(
    op: &SegOp,
    operands: &[SubExp],
    operand_types: &[Type],
    types: &HashMap<u32, Type>,
) -> Option<Vec<DirectOperand>> {
    let gtids: Vec<&VName> = op.space.indices().collect();
    let widths: Vec<&SubExp> = op.space.sizes().collect();
    let def = |v: &VName| {
        op.body
            .stms
            .iter()
            .find(|s| s.pat.elems.len() == 1 && s.pat.elems[0].name == *v)
    };
    let mut used: Vec<&VName> = Vec::new();
    let mut out = Vec::with_capacity(operands.len());
    for (r, t) in operands.iter().zip(operand_types) {
        let SubExp::Var(v) = r else {
            return None;
        };
        // Back along the indexings to the host array, collecting the indices (innermost
        // first).
        let mut idx: Vec<&VName> = Vec::new();
        let mut cur = v;
        while let Some(s) = def(cur) {
            let Exp::Index(xs, is) = &s.exp else {
                return None;
            };
            for d in is.iter().rev() {
                match d {
                    DimIndex::Fix(SubExp::Var(i)) => idx.push(i),
                    _ => return None,
                }
            }
            if !used.contains(&&s.pat.elems[0].name) {
                used.push(&s.pat.elems[0].name);
            }
            cur = xs;
        }
        idx.reverse();
        // The whole host array, the space's dimensions in front in some order.
        if idx.len() != gtids.len() {
            return None;
        }
        let mut perm: Vec<usize> = gtids
            .iter()
            .map(|g| idx.iter().position(|i| i == g))
            .collect::<Option<_>>()?;
        let shape = types.get(&cur.id)?.shape().to_vec();
        if shape.len() < widths.len()
            || perm
                .iter()
                .zip(&widths)
                .any(|(&p, w)| shape.get(p) != Some(*w))
        {
            return None;
        }
        let permuted = perm.iter().enumerate().any(|(i, &p)| i != p);
        perm.extend(widths.len()..shape.len());
        let rearranged = Type::Array {
            elem: types.get(&cur.id)?.elem()?,
            shape: perm.iter().map(|&p| shape[p].clone()).collect(),
        };
        out.push(DirectOperand {
            array: cur.clone(),
            elem: t.clone(),
            rearrange: permuted.then_some((perm, rearranged)),
        });
    }
    // Every statement must be one of those indexings (nothing else to compute).
    (op.body.stms.len() == used.len()).then_some(out)
}

/// An operand of a segmented operation read straight from a host array ([`direct_operands`]).
struct DirectOperand {
    array: VName,
    /// The operand's type (an element of the space).
    elem: Type,
    /// The permutation of the array's dimensions that puts them in the space's order, if it
    /// is not the identity, and the type of the array rearranged so.
    rearrange: Option<(Vec<usize>, Type)>,
}

#[cfg(test)]
mod tests {
    use super::{plan, PlanBody, Step};
    use vkad_core::ir::Exp;

    /// The plan of `src`.
    fn planned(src: &str) -> super::Plan {
        let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        plan(&vkad_core::flatten::extract_kernels(&c.ir)).expect("planned")
    }

    /// Whether `b` (or a body nested in it) transposes a host array.
    fn has_rearrange(b: &PlanBody) -> bool {
        b.steps.iter().any(|s| match s {
            Step::Ir(st) => matches!(st.exp, Exp::Rearrange(..)),
            Step::If { then_b, else_b, .. } => has_rearrange(then_b) || has_rearrange(else_b),
            Step::Loop { body, .. } | Step::WithAcc { body, .. } => has_rearrange(body),
            Step::VersionedLoop { par, seq, .. } => has_rearrange(par) || has_rearrange(seq),
            _ => false,
        })
    }

    #[test]
    fn scatter_of_host_arrays_needs_no_kernel() {
        let p = planned(
            "entry main [n] (dest: *[n]f32) (is: [n]i64) (xs: [n]f32) : [n]f32 = scatter dest is xs",
        );
        let main = p.fun("main").expect("main");
        // (Size parameters first: `n`, `dest`, `is`, `xs`.)
        let (is, xs) = (&main.params[2], &main.params[3]);
        let steps = &main.body.steps;
        assert!(
            !steps.iter().any(|s| matches!(s, Step::Map(_))),
            "no map kernel"
        );
        let scatter = steps.iter().find_map(|s| match s {
            Step::Prim(super::PrimStep {
                prim: super::Prim::Scatter { inds, vals, .. },
                ..
            }) => Some((inds, vals)),
            _ => None,
        });
        let (inds, vals) = scatter.expect("a scatter");
        assert_eq!(&inds[0], is, "the scatter reads `is` directly");
        assert_eq!(&vals[0], xs, "the scatter reads `xs` directly");
    }

    #[test]
    fn histograms_with_provably_distinct_indices_are_planned_disjoint() {
        let src = "entry main [n] (d: [n]f64) (vs: [3]f64) (is: [3]i64) =
                     (reduce_by_index (copy d) (+) 0 (map (+1) (iota 3)) vs,
                      reduce_by_index (copy d) (+) 0 is vs)";
        let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let ir = vkad_core::passes::hist_disjoint::hist_disjoint(c.ir);
        let p = plan(&vkad_core::flatten::extract_kernels(&ir)).expect("planned");
        let disjoint: Vec<bool> = p
            .fun("main")
            .expect("main")
            .body
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Prim(super::PrimStep {
                    prim: super::Prim::Hist { disjoint, .. },
                    ..
                }) => Some(*disjoint),
                _ => None,
            })
            .collect();
        // `map (+1) (iota 3)` is injective (paper 003); a parameter's indices are not known.
        assert_eq!(disjoint, [true, false]);
    }

    #[test]
    fn kmeans_newton_step_fuses_its_updates_and_transposes_nothing() {
        // k-means' Newton step used to materialise each point's one-hot adjoint rows
        // (`r0: [n][k][d]`) and reduce them over n, which the plan served by transposing `r0`.
        // Since fusion moves the accumulating map into the `with_acc` that makes the rows
        // (`vkad_core::passes::fusion::into_with_acc`), no host array is reduced along its
        // outer dimension, and the plan transposes nothing.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/programs/kernels/kmeans.fut");
        let src = std::fs::read_to_string(path).expect("kmeans.fut");
        let c = vkad_core::compile("kmeans.fut", &src).unwrap_or_else(|e| panic!("{}", e.render()));
        let p = plan(&vkad_core::flatten::extract_kernels(&c.ir)).expect("planned");
        let f = p.fun("newton").expect("planned entry");
        assert!(!has_rearrange(&f.body), "nothing is transposed");
    }

    /// A reduction along the outer dimension of a host array (column sums, of a transposed
    /// array) reads the array in another order than the segmented primitives do: the plan
    /// transposes it first (tests/programs/column_reductions.fut runs these on every backend).
    #[test]
    fn reductions_along_the_outer_dimension_of_a_host_array_transpose_it() {
        for src in [
            "entry main [n][m] (xss: [n][m]f64) : [m]f64 = map f64.sum (transpose xss)",
            "entry main [n][m] (xss: [n][m]f64) : [m]f64 =
               map (\\c -> reduce f64.max (-f64.inf) c) (transpose xss)",
            "entry main [n][m] (xss: [n][m]f64) : [m]f64 =
               map (\\c -> f64.sum (map (\\x -> x * x) c)) (transpose xss)",
        ] {
            let p = planned(src);
            let f = p.fun("main").expect("planned entry");
            assert!(has_rearrange(&f.body), "a transposition: {src}");
        }
        // Along the inner dimension, nothing is transposed.
        let p = planned("entry main [n][m] (xss: [n][m]f64) : [n]f64 = map f64.sum xss");
        assert!(!has_rearrange(&p.fun("main").expect("planned entry").body));
    }
}
