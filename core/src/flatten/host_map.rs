//! Rule 5's fallback: a sequentialised nest with inner parallelism, also as a host loop over
//! the nest's threads.
//!
//! Rule 5 runs a nest whose body `B` has inner SOACs that cannot be distributed (irregular
//! nested parallelism: `B` sorts or filters an array whose size depends on the thread) as one
//! `segmap` whose threads run `B`'s SOACs sequentially. That is the right version wherever it
//! can run, but a device may refuse one thread that much work: lavapipe's loop limiter stops a
//! thread after 65535 loop iterations in all (Futhark's `tests/ad/reducebyindexminmax7.fut`:
//! each of 100 threads sorts and scans 500 rows of 30 elements). So such a nest is generated
//! twice, as a [`HostExp::VersionedLoop`] whose one-thread-per-point version `seq` is the
//! rule-5 `segmap`, and whose other version `par` is a host `for` loop over the nest's
//! points, one loop per level, whose body binds the point's entries (rows of the nest's
//! arrays, its cheap statements) and runs `B` flattened at host level (its SOACs kernels of
//! their own, every size known by then), writing `B`'s results into row `(i, j, …)` of the
//! nest's result arrays. `par` is chosen where `threshold(host_map_N)` holds for the nest's
//! size, whose default ([`crate::seg::Thresholds::host_map_default`]) is never: a device runs
//! it only where it cannot run `seq` (the Vulkan runtime on a [`crate::seg`] `LoopLimit`),
//! and tests set it to 0 to check it. It iterates on the host over the points of a map, which
//! the rules above never do, so it is only ever a way to run what otherwise could not run.
//!
//! Not generated for nests that pass accumulators to their threads or return them (a host
//! loop would carry the accumulator through its iterations, which the kernels that update it
//! do not need), nor inside the `par` version of another (a bound on the code size, as
//! [`super::MAX_VERSIONED_DEPTH`]).

use super::kernel::{host, Flattener};
use super::nest::{Entry, Nest};
use crate::diag::SrcLoc;
use crate::ir::{Attrs, Body, DimIndex, Exp, FunDef, LoopForm, Param, Program, Stm, SubExp, Type};
use crate::passes::traverse::free_vars;
use crate::prim::{IntType, PrimType, PrimValue};
use crate::seg::{HostBody, HostExp, HostStm, ThresholdKind};

impl Flattener<'_> {
    /// Rule 5 for the body `stms`/`results` of `nest`'s innermost map, binding `pat` (the
    /// results expanded by the nest): the sequentialised `segmap`, and, where `stms` have inner
    /// parallelism, its host-loop fallback (see the module).
    pub(super) fn sequentialised(
        &mut self,
        nest: &Nest,
        stms: Vec<Stm>,
        results: Vec<SubExp>,
        pat: Vec<Param>,
        loc: &Option<SrcLoc>,
        out: &mut Vec<HostStm>,
    ) {
        if !self.host_map_ok(nest, &stms, &pat) {
            out.push(self.segmap(nest, stms, results, pat, loc));
            return;
        }
        let body = Body {
            stms: stms.clone(),
            result: results.clone(),
        };
        let seq_pat = self.fresh_params(&pat);
        let seq = self.segmap(nest, stms, results, seq_pat.clone(), loc);
        let mut pre = Vec::new();
        let size = self.nest_size(nest, &mut pre);
        let cond = self.threshold("host_map", size, ThresholdKind::HostMap, loc, &mut pre);
        self.host_maps += 1;
        let (par, par_res) = self.host_map(nest, &body, &pat, loc);
        self.host_maps -= 1;
        out.extend(pre);
        let vars = |ps: &[Param]| ps.iter().map(|p| SubExp::Var(p.name.clone())).collect();
        out.push(host(
            pat.clone(),
            HostExp::VersionedLoop {
                par_cond: SubExp::Var(cond.name),
                par: HostBody {
                    stms: par,
                    result: par_res,
                },
                seq: HostBody {
                    stms: vec![seq],
                    result: vars(&seq_pat),
                },
                chunk: None,
                ret: pat.iter().map(|p| p.ty.to_ext()).collect(),
            },
            loc,
        ));
    }

    /// Whether the nest gets the host-loop fallback: its body has inner parallelism, no
    /// accumulator enters or leaves it, and this is not already inside such a fallback.
    fn host_map_ok(&self, nest: &Nest, stms: &[Stm], pat: &[Param]) -> bool {
        let is_acc = |t: &Type| matches!(t, Type::Acc { .. });
        self.host_maps == 0
            && !nest.levels.is_empty()
            && stms.iter().any(super::kernel::stm_has_soac)
            && !pat.iter().any(|p| is_acc(&p.ty))
            && !nest.entries.iter().any(|e| match e {
                Entry::Index { param, .. } | Entry::Same { param, .. } => is_acc(&param.ty),
                Entry::Stm(s) => s.pat.elems.iter().any(|p| is_acc(&p.ty)),
            })
    }

    /// The host-loop version of the nest: statements binding fresh names, and the names of
    /// its results (`pat`'s arrays).
    fn host_map(
        &mut self,
        nest: &Nest,
        body: &Body,
        pat: &[Param],
        loc: &Option<SrcLoc>,
    ) -> (Vec<HostStm>, Vec<SubExp>) {
        // The result arrays, filled row by row.
        let mut host_stms = Vec::new();
        let mut outs = Vec::with_capacity(pat.len());
        for p in pat {
            let init = self.fresh_param(&p.name, p.ty.clone());
            let elem = p.ty.elem().unwrap_or(PrimType::Int(IntType::I64));
            host_stms.push(host(
                vec![init.clone()],
                HostExp::Plain(Exp::Replicate {
                    shape: p.ty.shape().to_vec(),
                    value: SubExp::Const(PrimValue::zero(elem)),
                }),
                loc,
            ));
            outs.push(init);
        }
        // The innermost body: the point's entries, the nest's body, the rows written.
        let gtids: Vec<_> = nest.levels.iter().map(|l| l.gtid.clone()).collect();
        let keep = nest.needed_entries(&free_vars(&body.stms, &body.result));
        let mut inner: Vec<Stm> = (nest.entries.iter().zip(keep))
            .filter(|(_, k)| *k)
            .map(|(e, _)| e.stm())
            .collect();
        inner.extend(body.stms.iter().cloned());
        // One loop per level, innermost first; each carries the result arrays.
        let mut carried: Vec<Vec<Param>> = Vec::with_capacity(gtids.len());
        for _ in &gtids {
            carried.push(
                pat.iter()
                    .map(|p| self.fresh_param(&p.name, p.ty.clone()))
                    .collect(),
            );
        }
        let innermost = carried.last().expect("a nest has a level").clone();
        let mut written = Vec::with_capacity(pat.len());
        for (o, r) in innermost.iter().zip(&body.result) {
            let w = self.fresh_param(&o.name, o.ty.clone());
            let idx = gtids
                .iter()
                .map(|g| DimIndex::Fix(SubExp::Var(g.clone())))
                .collect();
            inner.push(stm(
                vec![w.clone()],
                Exp::Update(o.name.clone(), idx, r.clone()),
                loc,
            ));
            written.push(SubExp::Var(w.name));
        }
        let mut loop_body = Body {
            stms: inner,
            result: written,
        };
        for (k, (level, g)) in nest.levels.iter().zip(&gtids).enumerate().rev() {
            let inits = if k == 0 { &outs } else { &carried[k - 1] };
            let res: Vec<Param> = pat
                .iter()
                .map(|p| self.fresh_param(&p.name, p.ty.clone()))
                .collect();
            let params = carried[k]
                .iter()
                .cloned()
                .zip(inits.iter().map(|p| SubExp::Var(p.name.clone())))
                .collect();
            let l = stm(
                res.clone(),
                Exp::Loop {
                    params,
                    form: LoopForm::For {
                        i: g.clone(),
                        it: IntType::I64,
                        bound: level.width.clone(),
                    },
                    body: loop_body,
                },
                loc,
            );
            loop_body = Body {
                stms: vec![l],
                result: res.iter().map(|p| SubExp::Var(p.name.clone())).collect(),
            };
        }
        // Fresh names throughout: the `segmap` version and other kernels of the nest bind
        // the same entries and body.
        let fresh = self.fresh_body(&loop_body);
        // Host code now: the backend's host-level passes apply (a histogram whose operator
        // the backend's kernels cannot combine, say, becomes a sort and a scan).
        let fresh = self.host_passes_on(fresh);
        // The outermost loop, flattened at host level (its body's SOACs become kernels), as
        // a plain host loop: its one-thread version would be the `segmap` again.
        let versions = std::mem::replace(&mut self.loop_versions, 0);
        let flat = self.host_body(&Body {
            stms: fresh.stms,
            result: Vec::new(),
        });
        self.loop_versions = versions;
        host_stms.extend(flat.stms);
        (host_stms, fresh.result)
    }
}

impl Flattener<'_> {
    /// `body` (host code whose free variables have types in `self.types`) after the backend's
    /// host-level passes ([`super::HostPasses`]), run on a function that takes its free
    /// variables; the names the passes bind get their types.
    fn host_passes_on(&mut self, body: Body) -> Body {
        let mut free: Vec<_> = free_vars(&body.stms, &[]).into_iter().collect();
        free.sort();
        let params = free
            .into_iter()
            .filter_map(|v| {
                let ty = self.types.get(&v)?.clone();
                Some(Param { name: v, ty })
            })
            .collect();
        let fun = FunDef {
            name: "host_map".into(),
            entry: None,
            size_params: Vec::new(),
            params,
            ret: Vec::new(),
            body,
            attrs: Attrs::default(),
        };
        let p = (self.host_passes)(Program {
            funs: vec![fun],
            name_source: self.ns.clone(),
        });
        *self.ns = p.name_source;
        let body = p.funs.into_iter().next().expect("one function").body;
        let mut found = Vec::new();
        super::collect_stms(&body.stms, &mut found);
        self.types.extend(found);
        body
    }
}

/// `pat = exp`, at `loc`.
fn stm(pat: Vec<Param>, exp: Exp, loc: &Option<SrcLoc>) -> Stm {
    Stm {
        loc: loc.clone(),
        ..crate::passes::traverse::mk_stm(pat, exp)
    }
}
