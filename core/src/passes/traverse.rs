//! Generic traversal of the IR, shared by the passes: a [`Visitor`] sees every operand, every use of
//! a variable and every binding, mutably, in program order.

use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// Hooks called by the `walk_*` functions. Defaults: an operand that is a variable is passed to
/// [`Visitor::use_name`]; nothing else happens.
pub trait Visitor {
    /// An operand (including array dimensions in types).
    fn subexp(&mut self, s: &mut SubExp) {
        if let SubExp::Var(v) = s {
            self.use_name(v);
        }
    }
    /// A use of a variable (an operand, or a position that must be a variable: arrays of SOACs,
    /// indexed arrays, accumulators, `while` conditions, accumulator certificates).
    fn use_name(&mut self, _v: &mut VName) {}
    /// A binding (pattern elements, params, loop variables, size params).
    fn bind_name(&mut self, _v: &mut VName) {}
}

pub fn walk_type<V: Visitor>(v: &mut V, t: &mut Type) {
    match t {
        TypeBase::Prim(_) => {}
        TypeBase::Array { shape, .. } => shape.iter_mut().for_each(|d| v.subexp(d)),
        TypeBase::Acc { cert, shape, elems } => {
            v.use_name(cert);
            shape.iter_mut().for_each(|d| v.subexp(d));
            elems.iter_mut().for_each(|t| walk_type(v, t));
        }
    }
}

pub fn walk_ext_type<V: Visitor>(v: &mut V, t: &mut ExtType) {
    match t {
        TypeBase::Prim(_) => {}
        TypeBase::Array { shape, .. } => shape.iter_mut().for_each(|d| {
            if let ExtDim::Free(d) = d {
                v.subexp(d)
            }
        }),
        TypeBase::Acc { cert, shape, elems } => {
            v.use_name(cert);
            shape.iter_mut().for_each(|d| v.subexp(d));
            elems.iter_mut().for_each(|t| walk_type(v, t));
        }
    }
}

/// The param's type, then its name.
pub fn walk_param<V: Visitor>(v: &mut V, p: &mut Param) {
    walk_type(v, &mut p.ty);
    v.bind_name(&mut p.name);
}

pub fn walk_body<V: Visitor>(v: &mut V, b: &mut Body) {
    for s in &mut b.stms {
        walk_stm(v, s);
    }
    b.result.iter_mut().for_each(|r| v.subexp(r));
}

/// The expression, then the pattern.
pub fn walk_stm<V: Visitor>(v: &mut V, s: &mut Stm) {
    walk_exp(v, &mut s.exp);
    s.pat.elems.iter_mut().for_each(|p| walk_param(v, p));
}

pub fn walk_lambda<V: Visitor>(v: &mut V, l: &mut Lambda) {
    l.params.iter_mut().for_each(|p| walk_param(v, p));
    walk_body(v, &mut l.body);
    l.ret.iter_mut().for_each(|t| walk_type(v, t));
}

fn walk_operator<V: Visitor>(v: &mut V, op: &mut Operator) {
    op.neutral.iter_mut().for_each(|n| v.subexp(n));
    walk_lambda(v, &mut op.lam);
}

fn walk_dim_index<V: Visitor>(v: &mut V, d: &mut DimIndex) {
    match d {
        DimIndex::Fix(i) => v.subexp(i),
        DimIndex::Slice { start, len, stride } => {
            v.subexp(start);
            v.subexp(len);
            v.subexp(stride);
        }
    }
}

pub fn walk_exp<V: Visitor>(v: &mut V, e: &mut Exp) {
    match e {
        Exp::SubExp(s) | Exp::UnOp(_, s) | Exp::Conv(_, s) => v.subexp(s),
        Exp::BinOp(_, a, b) | Exp::CmpOp(_, a, b) => {
            v.subexp(a);
            v.subexp(b);
        }
        Exp::Math(_, args) => args.iter_mut().for_each(|a| v.subexp(a)),
        Exp::Index(a, idx) => {
            v.use_name(a);
            idx.iter_mut().for_each(|d| walk_dim_index(v, d));
        }
        Exp::Update(a, idx, x) => {
            v.use_name(a);
            idx.iter_mut().for_each(|d| walk_dim_index(v, d));
            v.subexp(x);
        }
        Exp::Iota {
            n, start, stride, ..
        } => {
            v.subexp(n);
            v.subexp(start);
            v.subexp(stride);
        }
        Exp::Replicate { shape, value } => {
            shape.iter_mut().for_each(|d| v.subexp(d));
            v.subexp(value);
        }
        Exp::ArrayLit { elems, row } => {
            elems.iter_mut().for_each(|x| v.subexp(x));
            walk_type(v, row);
        }
        Exp::Concat { arrs, w, .. } => {
            arrs.iter_mut().for_each(|a| v.use_name(a));
            v.subexp(w);
        }
        Exp::Copy(a) => v.use_name(a),
        Exp::Reshape(shape, a) => {
            shape.iter_mut().for_each(|d| v.subexp(d));
            v.use_name(a);
        }
        Exp::Rearrange(_, a) => v.use_name(a),
        Exp::SortByKey { keys, bits } => {
            v.use_name(keys);
            v.subexp(bits);
        }
        Exp::Assert { cond, args, .. } => {
            v.subexp(cond);
            args.iter_mut().for_each(|a| v.subexp(a));
        }
        Exp::Apply { args, ret, .. } => {
            args.iter_mut().for_each(|a| v.subexp(a));
            ret.iter_mut().for_each(|t| walk_ext_type(v, t));
        }
        Exp::If {
            cond,
            then_b,
            else_b,
            ret,
        } => {
            v.subexp(cond);
            ret.iter_mut().for_each(|t| walk_ext_type(v, t));
            walk_body(v, then_b);
            walk_body(v, else_b);
        }
        Exp::Loop { params, form, body } => {
            params.iter_mut().for_each(|(_, init)| v.subexp(init));
            if let LoopForm::For { bound, .. } = form {
                v.subexp(bound);
            }
            params.iter_mut().for_each(|(p, _)| walk_param(v, p));
            match form {
                LoopForm::For { i, .. } => v.bind_name(i),
                LoopForm::While(c) => v.use_name(c),
            }
            walk_body(v, body);
        }
        Exp::Soac(s) => match s {
            Soac::Map { w, arrs, lam } => {
                v.subexp(w);
                arrs.iter_mut().for_each(|a| v.use_name(a));
                walk_lambda(v, lam);
            }
            Soac::Reduce { w, arrs, op } | Soac::Scan { w, arrs, op } => {
                v.subexp(w);
                arrs.iter_mut().for_each(|a| v.use_name(a));
                walk_operator(v, op);
            }
            Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            } => {
                v.subexp(w);
                dest.iter_mut().for_each(|a| v.use_name(a));
                v.use_name(inds);
                vals.iter_mut().for_each(|a| v.use_name(a));
                walk_operator(v, op);
            }
            Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            } => {
                v.subexp(w);
                dest.iter_mut().for_each(|a| v.use_name(a));
                inds.iter_mut().for_each(|a| v.use_name(a));
                vals.iter_mut().for_each(|a| v.use_name(a));
            }
        },
        Exp::WithAcc { inputs, lam } => {
            for inp in inputs.iter_mut() {
                inp.shape.iter_mut().for_each(|d| v.subexp(d));
                inp.arrs.iter_mut().for_each(|a| v.use_name(a));
                if let Some(op) = &mut inp.op {
                    walk_operator(v, op);
                }
            }
            walk_lambda(v, lam);
        }
        Exp::UpdAcc { acc, idx, vals } => {
            v.use_name(acc);
            idx.iter_mut().for_each(|i| v.subexp(i));
            vals.iter_mut().for_each(|x| v.subexp(x));
        }
        Exp::Jvp { lam, args, seeds } | Exp::Vjp { lam, args, seeds } => {
            args.iter_mut().for_each(|a| v.subexp(a));
            seeds.iter_mut().for_each(|a| v.subexp(a));
            walk_lambda(v, lam);
        }
        Exp::WithVjp {
            primal,
            adjoint,
            args,
        } => {
            args.iter_mut().for_each(|a| v.subexp(a));
            walk_lambda(v, primal);
            walk_lambda(v, adjoint);
        }
    }
}

/// Counts uses of variables.
#[derive(Default)]
pub struct UseCounter {
    pub uses: HashMap<VName, usize>,
}

impl Visitor for UseCounter {
    fn use_name(&mut self, v: &mut VName) {
        *self.uses.entry(v.clone()).or_default() += 1;
    }
}

/// Collects every bound name.
#[derive(Default)]
pub struct Binders {
    pub names: Vec<VName>,
}

impl Visitor for Binders {
    fn bind_name(&mut self, v: &mut VName) {
        self.names.push(v.clone());
    }
}

/// The set of variables used anywhere in `e` (including variables bound inside it).
pub fn uses_in_exp(e: &Exp) -> HashSet<VName> {
    let mut c = UseCounter::default();
    walk_exp(&mut c, &mut e.clone());
    c.uses.into_keys().collect()
}

/// How many times each variable is used in function `f` (its body, result types and parameter
/// types; names are unique program-wide, so the counts are exact).
pub fn fun_uses(f: &mut FunDef) -> HashMap<VName, usize> {
    let mut uc = UseCounter::default();
    walk_body(&mut uc, &mut f.body);
    for t in &mut f.ret {
        walk_ext_type(&mut uc, t);
    }
    for prm in &mut f.params {
        walk_type(&mut uc, &mut prm.ty);
    }
    uc.uses
}

/// The free variables of statements followed by operands (names are unique program-wide, so
/// "used and not bound here" is exact).
pub fn free_vars(stms: &[Stm], extra: &[SubExp]) -> HashSet<VName> {
    let mut uses = UseCounter::default();
    let mut bound = HashSet::new();
    for s in stms {
        let mut s = s.clone();
        walk_stm(&mut uses, &mut s);
        let mut b = Binders::default();
        walk_stm(&mut b, &mut s);
        bound.extend(b.names);
    }
    let mut out: HashSet<VName> = uses
        .uses
        .into_keys()
        .filter(|v| !bound.contains(v))
        .collect();
    out.extend(extra.iter().filter_map(|e| e.as_var().cloned()));
    out
}

/// Replaces variables: operands by [`SubExp`]s, variable-only positions only where the replacement
/// is itself a variable. Bindings are not touched.
pub struct Substitute<'a> {
    pub map: &'a HashMap<VName, SubExp>,
}

impl Visitor for Substitute<'_> {
    fn subexp(&mut self, s: &mut SubExp) {
        if let SubExp::Var(v) = s {
            if let Some(r) = self.map.get(v) {
                *s = r.clone();
            }
        }
    }
    fn use_name(&mut self, v: &mut VName) {
        if let Some(SubExp::Var(r)) = self.map.get(v) {
            *v = r.clone();
        }
    }
}

/// Renames every occurrence (bindings and uses) of the names in the map.
pub struct Rename<'a> {
    pub map: &'a HashMap<VName, VName>,
}

impl Visitor for Rename<'_> {
    fn use_name(&mut self, v: &mut VName) {
        if let Some(r) = self.map.get(v) {
            *v = r.clone();
        }
    }
    fn bind_name(&mut self, v: &mut VName) {
        self.use_name(v)
    }
}

/// Whether `e` (or anything nested in it) is an `Assert`, or calls a function in `effectful`.
pub fn has_effect(e: &Exp, effectful: &HashSet<std::sync::Arc<str>>) -> bool {
    fn body(b: &Body, eff: &HashSet<std::sync::Arc<str>>) -> bool {
        b.stms.iter().any(|s| has_effect(&s.exp, eff))
    }
    fn lam(l: &Lambda, eff: &HashSet<std::sync::Arc<str>>) -> bool {
        body(&l.body, eff)
    }
    match e {
        Exp::Assert { .. } => true,
        Exp::Apply { fun, .. } => effectful.contains(fun),
        Exp::If { then_b, else_b, .. } => body(then_b, effectful) || body(else_b, effectful),
        Exp::Loop { body: b, .. } => body(b, effectful),
        Exp::Soac(s) => match s {
            Soac::Map { lam: l, .. } => lam(l, effectful),
            Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. } => {
                lam(&op.lam, effectful)
            }
            Soac::Scatter { .. } => false,
        },
        Exp::Jvp { lam: l, .. } | Exp::Vjp { lam: l, .. } => lam(l, effectful),
        Exp::WithVjp {
            primal, adjoint, ..
        } => lam(primal, effectful) || lam(adjoint, effectful),
        Exp::WithAcc { inputs, lam: l } => {
            lam(l, effectful)
                || inputs
                    .iter()
                    .any(|i| i.op.as_ref().is_some_and(|op| lam(&op.lam, effectful)))
        }
        _ => false,
    }
}

/// The functions that contain an `Assert`, directly or through calls.
pub fn effectful_funs(p: &Program) -> HashSet<std::sync::Arc<str>> {
    let mut eff = HashSet::new();
    loop {
        let before = eff.len();
        for f in &p.funs {
            if !eff.contains(&f.name) && f.body.stms.iter().any(|s| has_effect(&s.exp, &eff)) {
                eff.insert(f.name.clone());
            }
        }
        if eff.len() == before {
            return eff;
        }
    }
}

/// Applies `f` to every body in the program, innermost bodies first (the nested bodies of a
/// statement are visited before the body containing it).
pub fn map_bodies(p: &mut Program, f: &mut impl FnMut(&mut Body)) {
    for fd in &mut p.funs {
        map_bodies_in(&mut fd.body, f);
    }
}

/// Applies `f` to `b` and every body nested in it, innermost first.
pub fn map_bodies_in(b: &mut Body, f: &mut impl FnMut(&mut Body)) {
    for s in &mut b.stms {
        for nb in nested_bodies(&mut s.exp) {
            map_bodies_in(nb, f);
        }
    }
    f(b);
}

/// The bodies directly nested in an expression (branches, loop bodies, lambda bodies).
pub fn nested_bodies(e: &mut Exp) -> Vec<&mut Body> {
    match e {
        Exp::If { then_b, else_b, .. } => vec![then_b, else_b],
        Exp::Loop { body, .. } => vec![body],
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. } => vec![&mut lam.body],
            Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. } => {
                vec![&mut op.lam.body]
            }
            Soac::Scatter { .. } => vec![],
        },
        Exp::WithAcc { inputs, lam } => {
            let mut v: Vec<&mut Body> = inputs
                .iter_mut()
                .filter_map(|i| i.op.as_mut().map(|op| &mut op.lam.body))
                .collect();
            v.push(&mut lam.body);
            v
        }
        Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => vec![&mut lam.body],
        Exp::WithVjp {
            primal, adjoint, ..
        } => vec![&mut primal.body, &mut adjoint.body],
        _ => vec![],
    }
}

/// [`nested_bodies`] of a shared expression (no copy of it needed to look inside).
pub fn nested_bodies_ref(e: &Exp) -> Vec<&Body> {
    match e {
        Exp::If { then_b, else_b, .. } => vec![then_b, else_b],
        Exp::Loop { body, .. } => vec![body],
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. } => vec![&lam.body],
            Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. } => {
                vec![&op.lam.body]
            }
            Soac::Scatter { .. } => vec![],
        },
        Exp::WithAcc { inputs, lam } => {
            let mut v: Vec<&Body> = inputs
                .iter()
                .filter_map(|i| i.op.as_ref().map(|op| &op.lam.body))
                .collect();
            v.push(&lam.body);
            v
        }
        Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => vec![&lam.body],
        Exp::WithVjp {
            primal, adjoint, ..
        } => vec![&primal.body, &adjoint.body],
        _ => vec![],
    }
}

/// The bodies of `e` that run where `e` runs (branches of an `if`, a loop's body, a
/// `with_acc`'s lambda), not those of SOAC lambdas (which a backend may run inside kernels).
pub fn host_bodies(e: &mut Exp) -> Vec<&mut Body> {
    match e {
        Exp::If { then_b, else_b, .. } => vec![then_b, else_b],
        Exp::Loop { body, .. } => vec![body],
        Exp::WithAcc { lam, .. } => vec![&mut lam.body],
        _ => vec![],
    }
}

/// Replaces, in every function of `p`, each host-level statement (see [`host_bodies`]) for
/// which `rewrite` gives statements by those, innermost first.
pub fn rewrite_host_stms(
    mut p: Program,
    rewrite: &mut dyn FnMut(&mut NameSource, &Stm) -> Option<Vec<Stm>>,
) -> Program {
    fn body(
        ns: &mut NameSource,
        b: &mut Body,
        rewrite: &mut dyn FnMut(&mut NameSource, &Stm) -> Option<Vec<Stm>>,
    ) {
        let mut out = Vec::with_capacity(b.stms.len());
        for mut s in std::mem::take(&mut b.stms) {
            for nb in host_bodies(&mut s.exp) {
                body(ns, nb, rewrite);
            }
            match rewrite(ns, &s) {
                Some(stms) => out.extend(stms),
                None => out.push(s),
            }
        }
        b.stms = out;
    }
    let mut ns = std::mem::take(&mut p.name_source);
    for f in &mut p.funs {
        body(&mut ns, &mut f.body, rewrite);
    }
    p.name_source = ns;
    p
}

/// `lam` with every name it binds replaced by a fresh one from `ns` (a copy that can live in the
/// same program as the original).
pub fn fresh_lambda(ns: &mut NameSource, lam: &Lambda) -> Lambda {
    struct Renamer<'a> {
        ns: &'a mut NameSource,
        map: std::collections::HashMap<VName, VName>,
    }
    impl Visitor for Renamer<'_> {
        fn use_name(&mut self, v: &mut VName) {
            if let Some(n) = self.map.get(v) {
                *v = n.clone();
            }
        }
        fn bind_name(&mut self, v: &mut VName) {
            let n = self.ns.fresh_like(v);
            self.map.insert(v.clone(), n.clone());
            *v = n;
        }
    }
    let mut l = lam.clone();
    walk_lambda(
        &mut Renamer {
            ns,
            map: Default::default(),
        },
        &mut l,
    );
    l
}

/// A statement `let pat = exp` with no attributes and no location.
pub fn mk_stm(elems: Vec<Param>, exp: Exp) -> Stm {
    Stm {
        pat: Pat { elems },
        exp,
        attrs: Attrs::default(),
        loc: None,
    }
}
