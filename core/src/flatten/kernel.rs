//! The flattening rules (see the module docs of [`super`]) applied to host bodies and map
//! nests.

use super::nest::{free_in, invariant, rename_se, rename_stms, Entry, Level, Nest, Types};
use super::MAX_VERSIONED_DEPTH;
use crate::diag::SrcLoc;
use crate::ir::{self, Attrs, BinOp, Body, Exp, ExtType, LoopForm, NameSource};
use crate::ir::{Param, Soac, Stm, SubExp, Type, VName};
use crate::passes::traverse::fresh_lambda;
use crate::prim::{IntType, PrimType};
use crate::seg::{HistOp, HostBody, HostExp, HostLambda, HostStm, KernelBody, KernelResult};
use crate::seg::{SegKind, SegOp};
use std::collections::{HashMap, HashSet};

pub(super) struct Flattener<'a> {
    pub ns: &'a mut NameSource,
    pub types: Types,
    /// Thresholds made so far (each [`HostExp::Threshold`] has its own name).
    pub thresholds: &'a mut usize,
}

/// A unit of flattening: a statement, or a producer `map` fused into the SOAC that consumes
/// its results (rule 3).
enum Unit<'s> {
    One(&'s Stm),
    Fused {
        producer: &'s Stm,
        consumer: &'s Stm,
        /// The producer's results that statements other than the consumer use: map outputs.
        map_outs: Vec<usize>,
    },
}

impl Unit<'_> {
    /// The names the unit binds, in the order of its kernel's results (consumer, then map
    /// outputs).
    fn pat(&self) -> Vec<Param> {
        match self {
            Unit::One(s) => s.pat.elems.clone(),
            Unit::Fused {
                producer,
                consumer,
                map_outs,
            } => {
                let mut p = consumer.pat.elems.clone();
                p.extend(map_outs.iter().map(|&k| producer.pat.elems[k].clone()));
                p
            }
        }
    }
    fn stms(&self) -> Vec<Stm> {
        match self {
            Unit::One(s) => vec![(*s).clone()],
            Unit::Fused {
                producer, consumer, ..
            } => vec![(*producer).clone(), (*consumer).clone()],
        }
    }
    fn stm(&self) -> &Stm {
        match self {
            Unit::One(s) => s,
            Unit::Fused { consumer, .. } => consumer,
        }
    }
    fn is_soac(&self) -> bool {
        matches!(self.stm().exp, Exp::Soac(_))
    }
}

/// Whether a body contains a SOAC anywhere (inner parallelism).
fn has_soac(b: &Body) -> bool {
    b.stms.iter().any(stm_has_soac)
}

fn stm_has_soac(s: &Stm) -> bool {
    match &s.exp {
        Exp::Soac(_) => true,
        Exp::If { then_b, else_b, .. } => has_soac(then_b) || has_soac(else_b),
        Exp::Loop { body, .. } => has_soac(body),
        Exp::WithAcc { lam, .. } => has_soac(&lam.body),
        _ => false,
    }
}

/// A statement cheap enough to be recomputed by every thread of an inner map (rule 2).
fn cheap(s: &Stm) -> bool {
    s.pat.elems.iter().all(|p| matches!(p.ty, Type::Prim(_)))
        && matches!(
            s.exp,
            Exp::SubExp(_)
                | Exp::UnOp(..)
                | Exp::BinOp(..)
                | Exp::CmpOp(..)
                | Exp::Conv(..)
                | Exp::Math(..)
                | Exp::Index(..)
        )
}

/// The arrays a statement consumes (updates in place).
fn consumed(s: &Stm) -> Vec<VName> {
    match &s.exp {
        Exp::Update(v, ..) => vec![v.clone()],
        Exp::Soac(Soac::Hist { dest, .. }) | Exp::Soac(Soac::Scatter { dest, .. }) => dest.clone(),
        Exp::WithAcc { inputs, .. } => inputs.iter().flat_map(|i| i.arrs.clone()).collect(),
        Exp::Loop { params, .. } => params
            .iter()
            .filter_map(|(_, init)| init.as_var().cloned())
            .collect(),
        _ => Vec::new(),
    }
}

/// The width and the input arrays (not destinations) of a SOAC that a producer map can be
/// fused into.
fn consumer_inputs(s: &Stm) -> Option<(&SubExp, Vec<&VName>)> {
    match &s.exp {
        Exp::Soac(Soac::Reduce { w, arrs, .. }) | Exp::Soac(Soac::Scan { w, arrs, .. }) => {
            Some((w, arrs.iter().collect()))
        }
        Exp::Soac(Soac::Hist { w, inds, vals, .. }) => {
            Some((w, std::iter::once(inds).chain(vals).collect()))
        }
        Exp::Soac(Soac::Scatter { w, inds, vals, .. }) => {
            Some((w, inds.iter().chain(vals).collect()))
        }
        _ => None,
    }
}

fn uses_of(stms: &[Stm], extra: &[SubExp]) -> HashSet<VName> {
    let mut u: HashSet<VName> = stms
        .iter()
        .flat_map(|s| use_counts(s).into_keys())
        .collect();
    u.extend(extra.iter().filter_map(|e| e.as_var().cloned()));
    u
}

/// Splits `stms` into units, fusing each producer map into the first SOAC that reads its
/// results where that is safe (rule 3). `result` is what the enclosing body returns.
fn units<'s>(stms: &'s [Stm], result: &[SubExp], types: &Types) -> Vec<Unit<'s>> {
    let uses: Vec<HashMap<VName, usize>> = stms.iter().map(use_counts).collect();
    let mut fused_into: Vec<Option<usize>> = vec![None; stms.len()];
    let mut producer_of: Vec<Option<usize>> = vec![None; stms.len()];
    for (i, p) in stms.iter().enumerate() {
        let Exp::Soac(Soac::Map { w: pw, arrs, .. }) = &p.exp else {
            continue;
        };
        if arrs
            .iter()
            .any(|a| matches!(types.get(a), Some(Type::Acc { .. })))
        {
            continue;
        }
        let outs: HashSet<&VName> = p.pat.elems.iter().map(|e| &e.name).collect();
        let reads = free_in(std::slice::from_ref(p), &[]);
        for j in i + 1..stms.len() {
            let c = &stms[j];
            if let Some((w, inputs)) = consumer_inputs(c) {
                if w == pw && producer_of[j].is_none() && inputs.iter().any(|a| outs.contains(a)) {
                    // The consumer must read the producer's results only as inputs.
                    let only_inputs = outs.iter().all(|o| {
                        let as_input = inputs.iter().filter(|a| **a == *o).count();
                        uses[j].get(*o).copied().unwrap_or(0) == as_input
                    });
                    if only_inputs {
                        fused_into[i] = Some(j);
                        producer_of[j] = Some(i);
                    }
                    break;
                }
            }
            // Stop at the first statement that reads the results or consumes an input.
            if outs.iter().any(|o| uses[j].contains_key(*o))
                || consumed(c).iter().any(|v| reads.contains(v))
            {
                break;
            }
        }
    }
    let mut out = Vec::new();
    for (j, s) in stms.iter().enumerate() {
        if fused_into[j].is_some() {
            continue;
        }
        match producer_of[j] {
            None => out.push(Unit::One(s)),
            Some(i) => {
                let producer = &stms[i];
                let result_vars: HashSet<&VName> =
                    result.iter().filter_map(|r| r.as_var()).collect();
                let map_outs = producer
                    .pat
                    .elems
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| {
                        result_vars.contains(&e.name)
                            || uses[j + 1..].iter().any(|u| u.contains_key(&e.name))
                    })
                    .map(|(k, _)| k)
                    .collect();
                out.push(Unit::Fused {
                    producer,
                    consumer: s,
                    map_outs,
                });
            }
        }
    }
    out
}

/// How often each variable is used in `s` (at any depth).
fn use_counts(s: &Stm) -> HashMap<VName, usize> {
    let mut c = crate::passes::traverse::UseCounter::default();
    crate::passes::traverse::walk_stm(&mut c, &mut s.clone());
    c.uses
}

fn i64t() -> Type {
    Type::Prim(PrimType::Int(IntType::I64))
}

fn host(pat: Vec<Param>, exp: HostExp, loc: &Option<SrcLoc>) -> HostStm {
    HostStm {
        pat: ir::Pat { elems: pat },
        exp,
        attrs: Attrs::default(),
        loc: loc.clone(),
    }
}

impl Flattener<'_> {
    fn type_of(&self, se: &SubExp) -> Type {
        match se {
            SubExp::Const(c) => Type::Prim(c.prim_type()),
            SubExp::Var(v) => self.types.get(v).cloned().unwrap_or_else(i64t),
        }
    }

    fn fresh_param(&mut self, like: &VName, ty: Type) -> Param {
        let name = self.ns.fresh_like(like);
        self.types.insert(name.clone(), ty.clone());
        Param { name, ty }
    }

    // ----- host code ---------------------------------------------------------------------

    pub fn host_body(&mut self, b: &Body) -> HostBody {
        let mut out = Vec::new();
        for u in units(&b.stms, &b.result, &self.types) {
            self.host_unit(&u, &mut out);
        }
        HostBody {
            stms: out,
            result: b.result.clone(),
        }
    }

    fn host_unit(&mut self, u: &Unit, out: &mut Vec<HostStm>) {
        let s = u.stm();
        if u.is_soac() {
            let pat = u.pat();
            self.par_unit(&Nest::default(), u, &pat, MAX_VERSIONED_DEPTH, out);
            return;
        }
        let exp = match &s.exp {
            Exp::If {
                cond,
                then_b,
                else_b,
                ret,
            } => HostExp::If {
                cond: cond.clone(),
                then_b: self.host_body(then_b),
                else_b: self.host_body(else_b),
                ret: ret.clone(),
            },
            Exp::Loop { params, form, body } => HostExp::Loop {
                params: params.clone(),
                form: form.clone(),
                body: self.host_body(body),
            },
            Exp::WithAcc { inputs, lam } => HostExp::WithAcc {
                inputs: inputs.clone(),
                lam: HostLambda {
                    params: lam.params.clone(),
                    body: self.host_body(&lam.body),
                    ret: lam.ret.clone(),
                },
            },
            e => HostExp::Plain(e.clone()),
        };
        out.push(HostStm {
            pat: s.pat.clone(),
            exp,
            attrs: s.attrs.clone(),
            loc: s.loc.clone(),
        });
    }

    // ----- nests -------------------------------------------------------------------------

    /// Flattens a SOAC unit in `nest`, binding `pat` (the unit's results expanded by the nest).
    fn par_unit(
        &mut self,
        nest: &Nest,
        u: &Unit,
        pat: &[Param],
        versions: usize,
        out: &mut Vec<HostStm>,
    ) {
        let s = u.stm();
        if let (Unit::One(_), Exp::Soac(Soac::Map { w, arrs, lam })) = (u, &s.exp) {
            if invariant(w, &nest.bound()) {
                let gtid = self.ns.fresh("gtid");
                let inner = nest.push_map(gtid, w.clone(), arrs, lam, &self.types);
                self.nest_body(&inner, &lam.body, pat, &s.loc, versions, out);
                return;
            }
        } else if let Some(stm) = self.segop(nest, u, pat) {
            out.push(stm);
            return;
        }
        // Irregular: run the unit sequentially in each thread of the nest.
        let stms = u.stms();
        let results = u
            .pat()
            .iter()
            .map(|p| SubExp::Var(p.name.clone()))
            .collect();
        out.push(self.segmap(nest, stms, results, pat.to_vec(), &s.loc));
    }

    /// Flattens the body `b` of the innermost map of `nest`; `pat` binds its results expanded.
    fn nest_body(
        &mut self,
        nest: &Nest,
        b: &Body,
        pat: &[Param],
        loc: &Option<SrcLoc>,
        versions: usize,
        out: &mut Vec<HostStm>,
    ) {
        if !has_soac(b) {
            out.push(self.segmap(nest, b.stms.clone(), b.result.clone(), pat.to_vec(), loc));
            return;
        }
        // Rules 2 and 3: cheap statements, then one SOAC unit returning the body's results.
        let n_cheap = b.stms.iter().take_while(|s| cheap(s)).count();
        let tail = units(&b.stms[n_cheap..], &b.result, &self.types);
        if let [u] = tail.as_slice() {
            let returns: Vec<SubExp> = u
                .pat()
                .iter()
                .map(|p| SubExp::Var(p.name.clone()))
                .collect();
            if u.is_soac() && returns == b.result {
                let mut sunk = nest.clone();
                sunk.entries
                    .extend(b.stms[..n_cheap].iter().cloned().map(Entry::Stm));
                self.par_unit(&sunk, u, pat, versions, out);
                return;
            }
        }
        // Rule 4, versioned with rule 5.
        if versions > 0 && self.distributable(nest, b) {
            let size = self.nest_size(nest, out);
            *self.thresholds += 1;
            let cond = self.fresh_param(
                &VName {
                    id: 0,
                    base: "suff_outer_par".into(),
                },
                Type::Prim(PrimType::Bool),
            );
            out.push(host(
                vec![cond.clone()],
                HostExp::Threshold {
                    size,
                    name: format!("suff_outer_par_{}", self.thresholds).into(),
                },
                loc,
            ));
            let seq_pat: Vec<Param> = pat
                .iter()
                .map(|p| self.fresh_param(&p.name, p.ty.clone()))
                .collect();
            let dist_pat: Vec<Param> = pat
                .iter()
                .map(|p| self.fresh_param(&p.name, p.ty.clone()))
                .collect();
            let copy = self.fresh_body(b);
            let seq = vec![self.segmap(nest, copy.stms, copy.result, seq_pat.clone(), loc)];
            let mut dist = Vec::new();
            self.distribute(nest, b, &dist_pat, loc, versions - 1, &mut dist);
            let vars = |ps: &[Param]| ps.iter().map(|p| SubExp::Var(p.name.clone())).collect();
            out.push(host(
                pat.to_vec(),
                HostExp::If {
                    cond: SubExp::Var(cond.name),
                    then_b: HostBody {
                        stms: seq,
                        result: vars(&seq_pat),
                    },
                    else_b: HostBody {
                        stms: dist,
                        result: vars(&dist_pat),
                    },
                    ret: pat.iter().map(|p| p.ty.to_ext()).collect::<Vec<ExtType>>(),
                },
                loc,
            ));
            return;
        }
        out.push(self.segmap(nest, b.stms.clone(), b.result.clone(), pat.to_vec(), loc));
    }

    /// A copy of `b` with every name it binds fresh.
    fn fresh_body(&mut self, b: &Body) -> Body {
        let lam = ir::Lambda {
            params: Vec::new(),
            body: b.clone(),
            ret: Vec::new(),
        };
        let copy = fresh_lambda(self.ns, &lam).body;
        let mut found = Vec::new();
        super::collect_stms(&copy.stms, &mut found);
        self.types.extend(found);
        copy
    }

    /// The number of threads of `nest`, computed on the host.
    fn nest_size(&mut self, nest: &Nest, out: &mut Vec<HostStm>) -> SubExp {
        let mut widths = nest.widths().into_iter();
        let mut size = widths.next().unwrap_or(SubExp::i64(1));
        for w in widths {
            let p = self.fresh_param(
                &VName {
                    id: 0,
                    base: "nest_size".into(),
                },
                i64t(),
            );
            out.push(host(
                vec![p.clone()],
                HostExp::Plain(Exp::BinOp(BinOp::Mul(PrimType::Int(IntType::I64)), size, w)),
                &None,
            ));
            size = SubExp::Var(p.name);
        }
        size
    }

    /// A `SegMap` over `nest` running `stms` per thread and returning `results` (bound to `pat`).
    fn segmap(
        &mut self,
        nest: &Nest,
        stms: Vec<Stm>,
        results: Vec<SubExp>,
        pat: Vec<Param>,
        loc: &Option<SrcLoc>,
    ) -> HostStm {
        let ret = results.iter().map(|r| self.type_of(r)).collect();
        let results = results.into_iter().map(KernelResult::Returns).collect();
        self.kernel(nest, SegKind::Map, stms, results, ret, pat, loc)
    }

    /// A kernel over `nest` with thread code `stms` (whose uses of the nest's names are
    /// renamed to the kernel's prologue).
    #[allow(clippy::too_many_arguments)]
    fn kernel(
        &mut self,
        nest: &Nest,
        kind: SegKind,
        mut stms: Vec<Stm>,
        results: Vec<KernelResult>,
        ret: Vec<Type>,
        pat: Vec<Param>,
        loc: &Option<SrcLoc>,
    ) -> HostStm {
        let mut operands: Vec<SubExp> = Vec::new();
        for r in &results {
            match r {
                KernelResult::Returns(se) => operands.push(se.clone()),
                KernelResult::Write { idx, val, .. } => {
                    operands.extend(idx.iter().cloned());
                    operands.push(val.clone());
                }
            }
        }
        let needed = free_in(&stms, &operands);
        let super::nest::Instance {
            space,
            prologue,
            renaming: map,
        } = nest.instantiate(self.ns, &needed);
        rename_stms(&map, &mut stms);
        let results = results
            .into_iter()
            .map(|r| match r {
                KernelResult::Returns(se) => KernelResult::Returns(rename_se(&map, &se)),
                KernelResult::Write { dest, idx, val } => KernelResult::Write {
                    dest,
                    idx: idx.iter().map(|i| rename_se(&map, i)).collect(),
                    val: rename_se(&map, &val),
                },
            })
            .collect();
        let mut body = prologue;
        body.extend(stms);
        host(
            pat,
            HostExp::Seg(SegOp {
                kind,
                space: crate::seg::SegSpace { dims: space },
                ret,
                body: KernelBody {
                    stms: body,
                    results,
                },
            }),
            loc,
        )
    }

    /// Rule 3: a reduce, scan, reduce_by_index or scatter (with its fused producer) in `nest`
    /// as one segmented operation; `None` where its operator or destinations depend on the
    /// nest's threads or its width is not known outside the nest.
    fn segop(&mut self, nest: &Nest, u: &Unit, pat: &[Param]) -> Option<HostStm> {
        let c = u.stm();
        let Exp::Soac(soac) = &c.exp else { return None };
        let bound = nest.bound();
        let (w, _) = consumer_inputs(c)?;
        if !invariant(w, &bound) {
            return None;
        }
        let op_free = |op: &ir::Operator| {
            let mut f = free_in(&op.lam.body.stms, &op.lam.body.result);
            f.extend(op.neutral.iter().filter_map(|n| n.as_var().cloned()));
            f.iter().all(|v| !bound.contains(v))
        };
        match soac {
            Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. }
                if !op_free(op) =>
            {
                return None
            }
            _ => {}
        }
        let gtid = self.ns.fresh("gtid");
        let mut inner = nest.clone();
        inner.levels.push(Level {
            gtid: gtid.clone(),
            width: w.clone(),
        });
        // Per-element values of the consumer's inputs.
        let mut stms = Vec::new();
        let mut elem: HashMap<VName, SubExp> = HashMap::new();
        let mut map_out = Vec::new();
        if let Unit::Fused {
            producer, map_outs, ..
        } = u
        {
            let Exp::Soac(Soac::Map { arrs, lam, .. }) = &producer.exp else {
                return None;
            };
            for (p, a) in lam.params.iter().zip(arrs) {
                inner.entries.push(Entry::Index {
                    param: p.clone(),
                    arr: a.clone(),
                    idx: vec![gtid.clone()],
                });
            }
            stms.extend(lam.body.stms.iter().cloned());
            for (k, e) in producer.pat.elems.iter().enumerate() {
                elem.insert(e.name.clone(), lam.body.result[k].clone());
            }
            map_out = map_outs
                .iter()
                .map(|&k| (lam.body.result[k].clone(), lam.ret[k].clone()))
                .collect();
        }
        let (_, inputs) = consumer_inputs(c)?;
        for a in inputs {
            if !elem.contains_key(a) {
                let row = self.type_of(&SubExp::Var(a.clone())).row();
                let p = self.fresh_param(a, row);
                inner.entries.push(Entry::Index {
                    param: p.clone(),
                    arr: a.clone(),
                    idx: vec![gtid.clone()],
                });
                elem.insert(a.clone(), SubExp::Var(p.name));
            }
        }
        let el = |a: &VName| elem[a].clone();
        let (kind, mut results, mut ret) = match soac {
            Soac::Reduce { arrs, op, .. } | Soac::Scan { arrs, op, .. } => {
                let vals: Vec<SubExp> = arrs.iter().map(el).collect();
                let ret: Vec<Type> = vals.iter().map(|v| self.type_of(v)).collect();
                let kind = if matches!(soac, Soac::Reduce { .. }) {
                    SegKind::Red(vec![op.clone()])
                } else {
                    SegKind::Scan(vec![op.clone()])
                };
                (
                    kind,
                    vals.into_iter()
                        .map(KernelResult::Returns)
                        .collect::<Vec<_>>(),
                    ret,
                )
            }
            Soac::Hist {
                dest,
                op,
                inds,
                vals,
                ..
            } => {
                let dests = dest
                    .iter()
                    .map(|d| self.resolve_dest(nest, d))
                    .collect::<Option<Vec<_>>>()?;
                let width = self
                    .type_of(&SubExp::Var(dest[0].clone()))
                    .shape()
                    .first()?
                    .clone();
                if !invariant(&width, &bound) {
                    return None;
                }
                let mut rs = vec![el(inds)];
                rs.extend(vals.iter().map(el));
                let ret = rs.iter().map(|v| self.type_of(v)).collect();
                (
                    SegKind::Hist(vec![HistOp {
                        dest: dests,
                        width,
                        op: op.clone(),
                    }]),
                    rs.into_iter().map(KernelResult::Returns).collect(),
                    ret,
                )
            }
            Soac::Scatter {
                dest, inds, vals, ..
            } => {
                let dests = dest
                    .iter()
                    .map(|d| self.resolve_dest(nest, d))
                    .collect::<Option<Vec<_>>>()?;
                let mut idx: Vec<SubExp> = nest.gtids().into_iter().map(SubExp::Var).collect();
                idx.extend(inds.iter().map(el));
                let results: Vec<KernelResult> = dests
                    .into_iter()
                    .zip(vals)
                    .map(|(d, v)| KernelResult::Write {
                        dest: d,
                        idx: idx.clone(),
                        val: el(v),
                    })
                    .collect();
                let ret = vals.iter().map(|v| self.type_of(&el(v))).collect();
                (SegKind::Map, results, ret)
            }
            Soac::Map { .. } => return None,
        };
        for (r, t) in map_out {
            results.push(KernelResult::Returns(r));
            ret.push(t);
        }
        Some(self.kernel(&inner, kind, stms, results, ret, pat.to_vec(), &c.loc))
    }

    /// The host array whose rows, one per thread of `nest`, are the thread's value of `d` (the
    /// destination of a histogram or scatter in the nest).
    fn resolve_dest(&self, nest: &Nest, d: &VName) -> Option<VName> {
        let bound = nest.bound();
        let mut name = d.clone();
        let mut idx: Vec<VName> = Vec::new();
        while bound.contains(&name) {
            let e = nest.entries.iter().find(|e| match e {
                Entry::Index { param, .. } => param.name == name,
                _ => false,
            })?;
            let Entry::Index { arr, idx: i, .. } = e else {
                return None;
            };
            let mut full = i.clone();
            full.extend(idx);
            idx = full;
            name = arr.clone();
        }
        (idx == nest.gtids()).then_some(name)
    }

    // ----- distribution --------------------------------------------------------------------

    /// Whether every value that distribution would expand has a shape known outside `nest`.
    fn distributable(&self, nest: &Nest, b: &Body) -> bool {
        let mut bound = nest.bound();
        for s in &b.stms {
            bound.extend(s.pat.elems.iter().map(|p| p.name.clone()));
        }
        b.stms.iter().all(|s| {
            s.pat
                .elems
                .iter()
                .all(|p| nest.invariant_type(&p.ty, &bound))
        })
    }

    /// Rule 4: the statements of `b` as kernels of `nest` in groups, values passed between
    /// groups expanded.
    fn distribute(
        &mut self,
        nest: &Nest,
        b: &Body,
        pat: &[Param],
        loc: &Option<SrcLoc>,
        versions: usize,
        out: &mut Vec<HostStm>,
    ) {
        let all = units(&b.stms, &b.result, &self.types);
        // Groups: a SOAC unit or a for loop with inner parallelism alone, other statements
        // together.
        let mut groups: Vec<Vec<Unit>> = Vec::new();
        let mut seq: Vec<Unit> = Vec::new();
        for u in all {
            let alone = u.is_soac()
                || matches!(&u.stm().exp, Exp::Loop { form: LoopForm::For { .. }, body, .. } if has_soac(body));
            if alone {
                if !seq.is_empty() {
                    groups.push(std::mem::take(&mut seq));
                }
                groups.push(vec![u]);
            } else {
                seq.push(u);
            }
        }
        if !seq.is_empty() {
            groups.push(seq);
        }
        let result_vars: Vec<Option<&VName>> = b.result.iter().map(|r| r.as_var()).collect();
        let mut named: HashSet<usize> = HashSet::new();
        let mut nest_d = nest.clone();
        for (g, group) in groups.iter().enumerate() {
            let later_stms: Vec<Stm> = groups[g + 1..]
                .iter()
                .flat_map(|gr| gr.iter().flat_map(|u| u.stms()))
                .collect();
            let later = uses_of(&later_stms, &b.result);
            // Host names for what the group binds (all of a SOAC unit's pattern; what later
            // groups use of a sequential group).
            let binds: Vec<Param> = group.iter().flat_map(|u| u.pat()).collect();
            let single_par = group.len() == 1 && group[0].is_soac();
            let outputs: Vec<Param> = binds
                .into_iter()
                .filter(|p| single_par || later.contains(&p.name))
                .collect();
            let host_pat: Vec<Param> = outputs
                .iter()
                .map(|p| {
                    let k = result_vars
                        .iter()
                        .enumerate()
                        .position(|(k, r)| *r == Some(&p.name) && !named.contains(&k));
                    match k {
                        Some(k) => {
                            named.insert(k);
                            pat[k].clone()
                        }
                        None => self.fresh_param(&p.name, nest.expand(&p.ty)),
                    }
                })
                .collect();
            match group.as_slice() {
                [u] if u.is_soac() => self.par_unit(&nest_d, u, &host_pat, versions, out),
                [u] if matches!(u.stm().exp, Exp::Loop { .. }) => {
                    self.interchange(&nest_d, u.stm(), &outputs, &host_pat, versions, out)
                }
                _ => {
                    let stms: Vec<Stm> = group.iter().flat_map(|u| u.stms()).collect();
                    let results = outputs
                        .iter()
                        .map(|p| SubExp::Var(p.name.clone()))
                        .collect();
                    out.push(self.segmap(&nest_d, stms, results, host_pat.clone(), loc));
                }
            }
            for (p, h) in outputs.iter().zip(&host_pat) {
                nest_d.entries.push(if matches!(p.ty, Type::Acc { .. }) {
                    Entry::Same {
                        param: p.clone(),
                        value: SubExp::Var(h.name.clone()),
                    }
                } else {
                    Entry::Index {
                        param: p.clone(),
                        arr: h.name.clone(),
                        idx: nest.gtids(),
                    }
                });
            }
        }
        // Results not bound by a group (the nest's own values, invariant values, constants):
        // one more kernel returns them.
        let rest: Vec<usize> = (0..pat.len()).filter(|k| !named.contains(k)).collect();
        if !rest.is_empty() {
            let results = rest.iter().map(|&k| b.result[k].clone()).collect();
            let pats = rest.iter().map(|&k| pat[k].clone()).collect();
            out.push(self.segmap(&nest_d, Vec::new(), results, pats, loc));
        }
    }

    /// Loop interchange: a `for` loop in `nest` whose body has inner parallelism runs on the
    /// host, its parameters expanded, and its body is flattened in the nest.
    fn interchange(
        &mut self,
        nest: &Nest,
        s: &Stm,
        outputs: &[Param],
        host_pat: &[Param],
        versions: usize,
        out: &mut Vec<HostStm>,
    ) {
        let Exp::Loop {
            params,
            form: form @ LoopForm::For { bound: lb, .. },
            body,
        } = &s.exp
        else {
            unreachable!("interchange of a non-loop")
        };
        let bound = nest.bound();
        let regular = invariant(lb, &bound)
            && params
                .iter()
                .all(|(p, _)| nest.invariant_type(&p.ty, &bound))
            && params.iter().all(|(p, i)| {
                !matches!(p.ty, Type::Acc { .. }) || self.resolve_acc(nest, i).is_some()
            });
        if !regular {
            let results = outputs
                .iter()
                .map(|p| SubExp::Var(p.name.clone()))
                .collect();
            out.push(self.segmap(nest, vec![s.clone()], results, host_pat.to_vec(), &s.loc));
            return;
        }
        // Initial values as host arrays: expanded values as they are, the others broadcast by
        // one kernel.
        let mut inits = Vec::new();
        let mut broadcast: Vec<(usize, SubExp, Param)> = Vec::new();
        for (k, (p, init)) in params.iter().enumerate() {
            if let Type::Acc { .. } = p.ty {
                inits.push(SubExp::Var(
                    self.resolve_acc(nest, init).expect("checked above"),
                ));
                continue;
            }
            match init.as_var().and_then(|v| self.resolve_dest(nest, v)) {
                Some(h) => inits.push(SubExp::Var(h)),
                None => {
                    let h = self.fresh_param(&p.name, nest.expand(&p.ty));
                    inits.push(SubExp::Var(h.name.clone()));
                    broadcast.push((k, init.clone(), h));
                }
            }
        }
        if !broadcast.is_empty() {
            let results = broadcast.iter().map(|(_, i, _)| i.clone()).collect();
            let pats = broadcast.iter().map(|(_, _, h)| h.clone()).collect();
            out.push(self.segmap(nest, Vec::new(), results, pats, &s.loc));
        }
        let host_params: Vec<Param> = params
            .iter()
            .map(|(p, _)| self.fresh_param(&p.name, nest.expand(&p.ty)))
            .collect();
        let mut inner = nest.clone();
        for ((p, _), h) in params.iter().zip(&host_params) {
            inner.entries.push(if matches!(p.ty, Type::Acc { .. }) {
                Entry::Same {
                    param: p.clone(),
                    value: SubExp::Var(h.name.clone()),
                }
            } else {
                Entry::Index {
                    param: p.clone(),
                    arr: h.name.clone(),
                    idx: nest.gtids(),
                }
            });
        }
        let new_vals: Vec<Param> = host_params
            .iter()
            .map(|h| self.fresh_param(&h.name, h.ty.clone()))
            .collect();
        let mut stms = Vec::new();
        self.nest_body(&inner, body, &new_vals, &s.loc, versions, &mut stms);
        // The loop binds every parameter; the group's outputs are some of them.
        let loop_pat: Vec<Param> = s
            .pat
            .elems
            .iter()
            .map(|e| match outputs.iter().position(|o| o.name == e.name) {
                Some(k) => host_pat[k].clone(),
                None => self.fresh_param(&e.name, nest.expand(&e.ty)),
            })
            .collect();
        out.push(host(
            loop_pat,
            HostExp::Loop {
                params: host_params.into_iter().zip(inits).collect(),
                form: form.clone(),
                body: HostBody {
                    stms,
                    result: new_vals
                        .iter()
                        .map(|p| SubExp::Var(p.name.clone()))
                        .collect(),
                },
            },
            &s.loc,
        ));
    }

    /// The host accumulator that the nest's accumulator `init` is.
    fn resolve_acc(&self, nest: &Nest, init: &SubExp) -> Option<VName> {
        let bound = nest.bound();
        let mut name = init.as_var()?.clone();
        while bound.contains(&name) {
            name = nest.entries.iter().find_map(|e| match e {
                Entry::Same { param, value } if param.name == name => value.as_var().cloned(),
                _ => None,
            })?;
        }
        Some(name)
    }
}
