//! Reverse-mode automatic differentiation (VJP) as an IR → IR transformation, by redundant
//! execution (Schenck et al., paper 000 §4; the anchor implementation is Futhark's
//! `Futhark.AD.Rev`). There is no tape:
//!
//! - The differentiated body is the **forward sweep** (the primal statements, with arrays that a
//!   statement consumes copied first so the return sweep can still read them) followed by the
//!   **return sweep**: for each statement in reverse order, its rule adds the contributions of the
//!   adjoints of its results to the adjoints of its operands (`ā += ∂f/∂a · ȳ`).
//! - A construct with a nested scope (a `map`'s lambda, an `if`'s branches, a loop's body)
//!   **re-executes** that scope's forward sweep inside its return sweep (renamed fresh), followed
//!   by the scope's own return sweep. The simplifier later removes re-executed statements whose
//!   results the return sweep does not need, so perfect nests re-execute nothing.
//! - Adjoints live in a map from primal variables to [`Adj`]; an absent entry is a symbolic zero:
//!   an input with no path to an output costs nothing. Zeros are materialised only where a
//!   construct needs a value (branch and loop results, SOAC inputs).
//! - Inside a `map`'s lambda, the adjoint of a free array is an **accumulator** (see
//!   [`Frame`]): updates to it become `upd_acc`, and the `map` is wrapped in a `withacc` whose
//!   operator is `+` (or passes on the accumulator of an enclosing `map`). Adjoints of free
//!   scalars are returned per iteration and summed by a `reduce`.
//!
//! Integers and bools are differentiated formally, as Futhark does (a bool adjoint is a bool,
//! multiplied with `&&` and added with `||`); accumulators have no adjoint.
//! One module per rule: [`scalar`], [`arrays`], [`branch`], [`map`] (and the modules of the
//! other SOACs and loops).

mod acc;
mod arrays;
mod branch;
pub(crate) mod custom;
mod free_ops;
mod hist;
mod loops;
mod map;
mod radix;
mod reduce;
mod rename;
mod scalar;
mod scan;
mod scatter;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_sizes;

use crate::ir::builder::binop_operator;
use crate::ir::*;
use crate::prim::{PrimType, PrimValue};
use std::collections::{HashMap, HashSet};

/// Results of the rules: an error names the construct that cannot be differentiated.
pub(crate) type R<T> = Result<T, String>;

/// Differentiates the closed lambda `lam` in reverse mode (a lambda with free variables needs
/// their types: [`vjp_lambda_in`]). The result takes the primal params followed by one
/// adjoint param per primal *result* (same types as `lam.ret`), and returns the primal results
/// followed by one adjoint per primal *param* (same types as the params; zero for bools). The
/// error names the construct that cannot be differentiated.
pub fn vjp_lambda(lam: &Lambda, ns: &mut NameSource) -> Result<Lambda, String> {
    vjp_lambda_in(lam, ns, &HashMap::new())
}

/// [`vjp_lambda`] for a lambda whose free variables have the types in `env` (the variables
/// bound around it, see [`fun_types`]). Free variables are constants of the differentiated
/// function: they get no adjoint. Every free variable must be in `env` (sizes and the
/// integers computed from them included: the rules ask the types of operands); one that is
/// not is an internal error of the caller, reported here rather than by whichever rule first
/// meets it.
pub fn vjp_lambda_in(
    lam: &Lambda,
    ns: &mut NameSource,
    env: &HashMap<VName, Type>,
) -> Result<Lambda, String> {
    if let Some(v) = free_vars(lam).into_iter().find(|v| !env.contains_key(v)) {
        return Err(format!(
            "a free variable of unknown type ({v}) (internal error)"
        ));
    }
    let mut r = Rev::new(ns);
    r.types = env.clone();
    let inside = binder_types(&lam.params, &lam.body);
    r.outside = env
        .keys()
        .filter(|v| !inside.contains_key(*v))
        .cloned()
        .collect();
    for p in &lam.params {
        r.types.insert(p.name.clone(), p.ty.clone());
        for d in p.ty.shape() {
            if let SubExp::Var(v) = d {
                r.sizes.insert(v.clone());
            }
        }
    }
    r.carrying = Some(loops::Carrying::of(&lam.params, &lam.body));
    let seeds: Vec<Param> = lam
        .ret
        .iter()
        .map(|t| {
            let name = r.ns.fresh("adj");
            r.types.insert(name.clone(), t.clone());
            Param {
                name,
                ty: t.clone(),
            }
        })
        .collect();
    r.fwd_stms(&lam.body.stms)?;
    for (res, seed) in lam.body.result.iter().zip(&seeds) {
        r.add_adj_se(res, SubExp::Var(seed.name.clone()), false)?;
    }
    r.rev_stms(&lam.body.stms)?;
    let mut result = lam.body.result.clone();
    for p in &lam.params {
        let a = r.adj_value(&p.name)?;
        result.push(a);
    }
    let mut params = lam.params.clone();
    params.extend(seeds);
    let mut ret = lam.ret.clone();
    ret.extend(lam.params.iter().map(|p| p.ty.clone()));
    Ok(Lambda {
        params,
        body: Body {
            stms: r.stms,
            result,
        },
        ret,
    })
}

/// The free variables of `lam`: the variables it uses (in types too) that it does not bind,
/// sorted. The certificates of accumulator types are not variables and are left out.
pub fn free_vars(lam: &Lambda) -> Vec<VName> {
    let mut uses = crate::passes::traverse::UseCounter::default();
    let mut binders = crate::passes::traverse::Binders::default();
    let mut l = lam.clone();
    crate::passes::traverse::walk_lambda(&mut uses, &mut l);
    crate::passes::traverse::walk_lambda(&mut binders, &mut l);
    let bound: HashSet<VName> = binders.names.into_iter().collect();
    let certs: HashSet<VName> = binder_types(&lam.params, &lam.body)
        .into_values()
        .filter_map(|t| match t {
            Type::Acc { cert, .. } => Some(cert),
            _ => None,
        })
        .collect();
    let mut out: Vec<VName> = uses
        .uses
        .into_keys()
        .filter(|v| !bound.contains(v) && !certs.contains(v))
        .collect();
    out.sort();
    out
}

/// The types of every variable bound in the function `f`: its size parameters (`i64`), its
/// params and everything its body binds (see [`binder_types`]). This is the environment of the
/// lambda of an AD node in `f` ([`vjp_lambda_in`]): the lambda's free variables are among them,
/// the sizes of the function's arguments and the integers computed from them included.
pub fn fun_types(f: &FunDef) -> HashMap<VName, Type> {
    let mut out = binder_types(&f.params, &f.body);
    out.extend(size_types(&f.size_params));
    out
}

/// The environment of size parameters: each is an `i64`.
pub fn size_types(sizes: &[VName]) -> HashMap<VName, Type> {
    sizes
        .iter()
        .map(|s| (s.clone(), Type::Prim(PrimType::I64)))
        .collect()
}

/// The types of every variable bound by `fun_params` and `fun_body`: the params and everything
/// the body binds (patterns, lambda and loop params, loop variables), at any depth.
pub fn binder_types(fun_params: &[Param], fun_body: &Body) -> HashMap<VName, Type> {
    fn lam(l: &Lambda, out: &mut HashMap<VName, Type>) {
        params(&l.params, out);
        body(&l.body, out);
    }
    fn params(ps: &[Param], out: &mut HashMap<VName, Type>) {
        for p in ps {
            out.insert(p.name.clone(), p.ty.clone());
        }
    }
    fn body(b: &Body, out: &mut HashMap<VName, Type>) {
        for s in &b.stms {
            params(&s.pat.elems, out);
            match &s.exp {
                Exp::If { then_b, else_b, .. } => {
                    body(then_b, out);
                    body(else_b, out);
                }
                Exp::Loop {
                    params: ps,
                    form,
                    body: lb,
                } => {
                    for (p, _) in ps {
                        out.insert(p.name.clone(), p.ty.clone());
                    }
                    if let LoopForm::For { i, it, .. } = form {
                        out.insert(i.clone(), Type::Prim(PrimType::Int(*it)));
                    }
                    body(lb, out);
                }
                Exp::Soac(Soac::Map { lam: l, .. }) => lam(l, out),
                Exp::Soac(Soac::Reduce { op, .. })
                | Exp::Soac(Soac::Scan { op, .. })
                | Exp::Soac(Soac::Hist { op, .. }) => lam(&op.lam, out),
                Exp::WithAcc { inputs, lam: l } => {
                    for i in inputs {
                        if let Some(op) = &i.op {
                            lam(&op.lam, out);
                        }
                    }
                    lam(l, out);
                }
                Exp::Jvp { lam: l, .. } | Exp::Vjp { lam: l, .. } => lam(l, out),
                _ => {}
            }
        }
    }
    let mut out = HashMap::new();
    params(fun_params, &mut out);
    body(fun_body, &mut out);
    out
}

/// The adjoint of a variable.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Adj {
    /// A value of the primal's type. `owned`: the variable was made for this adjoint alone, so
    /// it may be updated in place; otherwise it is shared (a seed, another variable's adjoint)
    /// and is copied before an in-place update.
    Val { v: SubExp, owned: bool },
    /// An accumulator variable (inside a `map` lambda, for an array bound outside it).
    Acc(VName),
}

/// How a free array's accumulator reaches the lambda of a [`Frame`].
#[derive(Clone, Debug)]
pub(crate) struct FrameAcc {
    /// The primal array whose adjoint this accumulates.
    pub array: VName,
    /// The lambda param that receives the accumulator.
    pub param: Param,
    /// `Some(c)`: the accumulator `c` of the enclosing scope is passed in as a `map` input.
    /// `None`: a new `withacc` (operator `+`) around the `map` creates it from the adjoint.
    pub outer: Option<VName>,
}

/// The return sweep of a `map`'s lambda. Its adjoint map starts empty (contributions inside are
/// per iteration); arrays bound outside the lambda get accumulators on their first contribution.
#[derive(Debug)]
pub(crate) struct Frame {
    /// Names bound inside the lambda (params and statements at any depth), as processed.
    pub locals: HashSet<VName>,
    /// Accumulators created for free arrays, in order of creation.
    pub accs: Vec<FrameAcc>,
    /// The adjoint map of the enclosing scope, restored when the frame is popped.
    pub outer_adjs: HashMap<VName, Adj>,
}

/// The state of the transformation.
pub(crate) struct Rev<'a> {
    pub ns: &'a mut NameSource,
    /// Types of every variable in scope (primal and generated).
    pub types: HashMap<VName, Type>,
    /// Adjoints of the current scope; absent = zero.
    pub adjs: HashMap<VName, Adj>,
    /// The statements being emitted (the current body).
    pub stms: Vec<Stm>,
    /// Enclosing `map` lambdas, innermost last.
    pub frames: Vec<Frame>,
    /// Variables bound outside the differentiated function: constants, with no adjoint.
    pub outside: HashSet<VName>,
    /// What the forward sweep of each loop left for its return sweep (see [`loops`]).
    pub loop_tapes: HashMap<VName, loops::LoopTape>,
    /// How many dry runs of reverse-loop bodies enclose the code being generated (see
    /// [`loops`]): inside one, nested reverse loops get an empty body, since the dry run only
    /// looks at which adjoints change, and building them in full would make the work
    /// exponential in the depth of a loop nest.
    pub dry_runs: usize,
    /// Dry-run results by loop shape ([`loops`]): a loop's reverse body is dry-run again for
    /// every enclosing dry run, and once more for real; its outcome depends only on the loop's
    /// code up to renaming and on the state of its free variables, so it is computed once.
    pub dry_cache: HashMap<String, Vec<(usize, loops::Carry)>>,
    /// Which variables of the differentiated function may carry a derivative of its
    /// parameters (`None`: not analysed, so that no loop is taken to be inert).
    pub carrying: Option<loops::Carrying>,
    /// Variables known not to be negative: the dimensions of the differentiated function's
    /// parameters (arrays of those sizes exist). A loop over one of them runs that many
    /// iterations, which its checkpoints' arrays then have as their size.
    pub sizes: HashSet<VName>,
}

/// Does a value of this type have an adjoint? (Integers, floats and bools, scalars or arrays:
/// as in Futhark, a bool adjoint is a bool, multiplied with `&&` and added with `||`.)
pub(crate) fn has_adjoint(t: &Type) -> bool {
    !matches!(t, Type::Acc { .. })
}

pub(crate) fn zero_of(p: PrimType) -> SubExp {
    SubExp::Const(PrimValue::zero(p))
}

pub(crate) fn one_stm(p: Param, exp: Exp) -> Stm {
    Stm {
        pat: Pat { elems: vec![p] },
        exp,
        attrs: Attrs::default(),
        loc: None,
    }
}

/// The type of `a[idx]` for `a: ty`.
pub(crate) fn slice_type(ty: &Type, idx: &[DimIndex]) -> Type {
    let shape = ty.shape();
    let mut out = vec![];
    for (i, d) in shape.iter().enumerate() {
        match idx.get(i) {
            Some(DimIndex::Fix(_)) => {}
            Some(DimIndex::Slice { len, .. }) => out.push(len.clone()),
            None => out.push(d.clone()),
        }
    }
    match ty.elem() {
        Some(e) => Type::array(e, out),
        None => ty.clone(),
    }
}

/// The concrete type of an existential result type, given the construct's results.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn ext_to_type(t: &ExtType, results: &[SubExp]) -> R<Type> {
    Ok(match t {
        ExtType::Prim(p) => Type::Prim(*p),
        ExtType::Array { elem, shape } => Type::Array {
            elem: *elem,
            shape: shape
                .iter()
                .map(|d| match d {
                    ExtDim::Free(s) => Ok(s.clone()),
                    ExtDim::Ext(i) => results
                        .get(*i)
                        .cloned()
                        .ok_or_else(|| "an existential size out of range".to_string()),
                })
                .collect::<R<_>>()?,
        },
        ExtType::Acc { cert, shape, elems } => Type::Acc {
            cert: cert.clone(),
            shape: shape.clone(),
            elems: elems.clone(),
        },
    })
}

/// Names bound anywhere inside `stms` (patterns, lambda and loop params, loop variables).
pub(crate) fn bound_in(stms: &[Stm]) -> HashSet<VName> {
    let mut b = crate::passes::traverse::Binders::default();
    let mut stms = stms.to_vec();
    for s in &mut stms {
        crate::passes::traverse::walk_stm(&mut b, s);
    }
    b.names.into_iter().collect()
}

/// The arrays a statement consumes (updates in place).
fn consumed(e: &Exp) -> Vec<VName> {
    match e {
        Exp::Update(a, ..) => vec![a.clone()],
        Exp::Soac(Soac::Hist { dest, .. }) | Exp::Soac(Soac::Scatter { dest, .. }) => dest.clone(),
        Exp::WithAcc { inputs, .. } => inputs.iter().flat_map(|i| i.arrs.clone()).collect(),
        _ => vec![],
    }
}

fn rename_consumed(e: &mut Exp, from: &VName, to: &VName) {
    let r = |v: &mut VName| {
        if v == from {
            *v = to.clone();
        }
    };
    match e {
        Exp::Update(a, ..) => r(a),
        Exp::Soac(Soac::Hist { dest, .. }) | Exp::Soac(Soac::Scatter { dest, .. }) => {
            dest.iter_mut().for_each(r)
        }
        Exp::WithAcc { inputs, .. } => inputs
            .iter_mut()
            .for_each(|i| i.arrs.iter_mut().for_each(r)),
        _ => {}
    }
}

impl<'a> Rev<'a> {
    pub fn new(ns: &'a mut NameSource) -> Rev<'a> {
        Rev {
            ns,
            types: HashMap::new(),
            adjs: HashMap::new(),
            stms: vec![],
            frames: vec![],
            outside: HashSet::new(),
            loop_tapes: HashMap::new(),
            dry_runs: 0,
            dry_cache: HashMap::new(),
            carrying: None,
            sizes: HashSet::new(),
        }
    }

    // --- emitting statements ----------------------------------------------------------------

    /// Appends a statement, recording the types (and, inside a lambda, the locality) of what
    /// it binds.
    pub fn emit(&mut self, stm: Stm) {
        self.record_pat(&stm.pat);
        if let Some(f) = self.frames.last_mut() {
            f.locals.extend(bound_in(std::slice::from_ref(&stm)));
        }
        self.stms.push(stm);
    }

    pub fn record_pat(&mut self, pat: &Pat) {
        for p in &pat.elems {
            self.types.insert(p.name.clone(), p.ty.clone());
        }
    }

    /// Records a param bound by a construct the caller is building (lambda, loop).
    pub fn record_param(&mut self, p: &Param) {
        self.types.insert(p.name.clone(), p.ty.clone());
        if let Some(f) = self.frames.last_mut() {
            f.locals.insert(p.name.clone());
        }
    }

    pub fn fresh_param(&mut self, base: &str, ty: Type) -> Param {
        let p = Param {
            name: self.ns.fresh(base),
            ty,
        };
        self.record_param(&p);
        p
    }

    /// `let x: ty = exp`.
    pub fn bind(&mut self, base: &str, ty: Type, exp: Exp) -> VName {
        let p = Param {
            name: self.ns.fresh(base),
            ty,
        };
        let v = p.name.clone();
        self.emit(one_stm(p, exp));
        v
    }

    /// `let x = exp` for several results.
    pub fn bind_many(&mut self, pat: Vec<(&str, Type)>, exp: Exp) -> Vec<VName> {
        let elems: Vec<Param> = pat
            .into_iter()
            .map(|(b, t)| Param {
                name: self.ns.fresh(b),
                ty: t,
            })
            .collect();
        let names = elems.iter().map(|p| p.name.clone()).collect();
        self.emit(Stm {
            pat: Pat { elems },
            exp,
            attrs: Attrs::default(),
            loc: None,
        });
        names
    }

    pub fn binop(&mut self, op: BinOp, a: SubExp, b: SubExp) -> SubExp {
        let t = crate::ir::check::binop_sig(op).1;
        SubExp::Var(self.bind("x", Type::Prim(t), Exp::BinOp(op, a, b)))
    }

    /// Emits the statements of a [`crate::ir::builder::Builder`] run on this name source.
    pub fn build<T>(&mut self, f: impl FnOnce(&mut crate::ir::builder::Builder) -> T) -> T {
        let mut b = crate::ir::builder::Builder::new(self.ns);
        let out = f(&mut b);
        let stms = std::mem::take(&mut b.stms);
        for s in stms {
            self.emit(s);
        }
        out
    }

    /// Runs `f` with an empty statement list and returns the statements it emitted as a body
    /// with `f`'s results.
    pub fn in_body(&mut self, f: impl FnOnce(&mut Self) -> R<Vec<SubExp>>) -> R<Body> {
        let saved = std::mem::take(&mut self.stms);
        let res = f(self);
        let stms = std::mem::replace(&mut self.stms, saved);
        Ok(Body { stms, result: res? })
    }

    pub fn ty(&self, s: &SubExp) -> R<Type> {
        match s {
            SubExp::Const(c) => Ok(Type::Prim(c.prim_type())),
            SubExp::Var(v) => self.ty_of(v),
        }
    }

    pub fn ty_of(&self, v: &VName) -> R<Type> {
        self.types
            .get(v)
            .cloned()
            .ok_or_else(|| format!("a variable of unknown type ({v}) (internal error)"))
    }

    // --- values --------------------------------------------------------------------------------

    /// A zero of type `ty` (a constant, or a fresh `replicate`).
    pub fn zeros(&mut self, ty: &Type) -> R<SubExp> {
        match ty {
            Type::Prim(p) => Ok(zero_of(*p)),
            Type::Array { elem, shape } => Ok(SubExp::Var(self.bind(
                "zeros",
                ty.clone(),
                Exp::Replicate {
                    shape: shape.clone(),
                    value: zero_of(*elem),
                },
            ))),
            Type::Acc { .. } => Err("a zero accumulator (internal error)".into()),
        }
    }

    /// `a + b` elementwise for values of type `ty` (a fresh value).
    pub fn add_values(&mut self, a: SubExp, b: SubExp, ty: &Type) -> R<SubExp> {
        match ty {
            Type::Prim(p) => Ok(self.binop(crate::ad::derivatives::add_op(*p), a, b)),
            Type::Array { shape, .. } => {
                let (SubExp::Var(av), SubExp::Var(bv)) = (&a, &b) else {
                    return Err("adding a constant to an array (internal error)".into());
                };
                let row = ty.row();
                let pa = Param {
                    name: self.ns.fresh("a"),
                    ty: row.clone(),
                };
                let pb = Param {
                    name: self.ns.fresh("b"),
                    ty: row.clone(),
                };
                self.record_param(&pa);
                self.record_param(&pb);
                let (va, vb) = (SubExp::Var(pa.name.clone()), SubExp::Var(pb.name.clone()));
                let rt = row.clone();
                let body = self.in_body(|r| Ok(vec![r.add_values(va, vb, &rt)?]))?;
                let lam = Lambda {
                    params: vec![pa, pb],
                    body,
                    ret: vec![row],
                };
                let v = self.bind(
                    "sum",
                    ty.clone(),
                    Exp::Soac(Soac::Map {
                        w: shape[0].clone(),
                        arrs: vec![av.clone(), bv.clone()],
                        lam,
                    }),
                );
                Ok(SubExp::Var(v))
            }
            Type::Acc { .. } => Err("adding accumulators (internal error)".into()),
        }
    }

    /// The `+` operator on `elem` with neutral 0 (`||` with `false` on bools).
    pub fn add_operator(&mut self, elem: PrimType) -> Operator {
        binop_operator(
            self.ns,
            crate::ad::derivatives::add_op(elem),
            zero_of(elem),
            true,
        )
    }

    // --- adjoints ------------------------------------------------------------------------------

    /// Does `v` belong to the differentiated function (so that its adjoint is wanted)?
    pub fn active(&self, v: &VName) -> bool {
        self.types.contains_key(v) && !self.outside.contains(v)
    }

    /// Is `v` bound outside the innermost `map` lambda being differentiated?
    fn nonlocal(&self, v: &VName) -> bool {
        self.frames.last().is_some_and(|f| !f.locals.contains(v))
    }

    /// Removes and returns the adjoint of `v`. Used for a statement's results when its rule
    /// runs: by then the adjoint is complete (every use of `v` comes later in the program and
    /// has been processed).
    pub fn take_adj(&mut self, v: &VName) -> Option<Adj> {
        self.adjs.remove(v)
    }

    /// Takes the adjoints of a statement's results as values (accumulator adjoints cannot occur
    /// for results, which are local). `None` = zero.
    pub fn take_result_adjs(&mut self, pat: &Pat) -> Vec<Option<(SubExp, bool)>> {
        pat.elems
            .iter()
            .map(|p| match self.take_adj(&p.name) {
                Some(Adj::Val { v, owned }) => Some((v, owned)),
                _ => None,
            })
            .collect()
    }

    /// The adjoint of `v` as a value (zero materialised). Must not be an accumulator.
    pub fn adj_value(&mut self, v: &VName) -> R<SubExp> {
        let ty = self.ty_of(v)?;
        if !has_adjoint(&ty) {
            return match &ty {
                Type::Acc { .. } => Err("the adjoint of an accumulator (internal error)".into()),
                _ => self.zeros(&ty),
            };
        }
        match self.adjs.get(v) {
            Some(Adj::Val { v, .. }) => Ok(v.clone()),
            Some(Adj::Acc(_)) => Err(format!(
                "the adjoint of {v} is an accumulator here (internal error)"
            )),
            None => self.zeros(&ty),
        }
    }

    /// The adjoint of `v` as a value that may be consumed (copied if it is shared); the entry
    /// is removed (the caller installs the updated value).
    pub fn take_owned_adj(&mut self, v: &VName) -> R<SubExp> {
        let ty = self.ty_of(v)?;
        match self.adjs.remove(v) {
            Some(Adj::Val { v: a, owned: true }) => Ok(a),
            Some(Adj::Val {
                v: SubExp::Var(a),
                owned: false,
            }) if matches!(ty, Type::Array { .. }) => {
                Ok(SubExp::Var(self.bind("adj_copy", ty, Exp::Copy(a))))
            }
            Some(Adj::Val { v: a, .. }) => Ok(a),
            Some(Adj::Acc(c)) => {
                self.adjs.insert(v.clone(), Adj::Acc(c));
                Err(format!(
                    "the adjoint of {v} is an accumulator here (internal error)"
                ))
            }
            None => self.zeros(&ty),
        }
    }

    pub fn set_adj(&mut self, v: &VName, a: SubExp, owned: bool) {
        self.adjs.insert(v.clone(), Adj::Val { v: a, owned });
    }

    /// `s̄ += d` when `s` is a variable with an adjoint.
    pub fn add_adj_se(&mut self, s: &SubExp, d: SubExp, owned: bool) -> R<()> {
        match s {
            SubExp::Var(v) => self.add_adj(v, d, owned),
            SubExp::Const(_) => Ok(()),
        }
    }

    /// `v̄ += d` (`d` has `v`'s type). `owned`: `d` is a fresh value nobody else refers to.
    pub fn add_adj(&mut self, v: &VName, d: SubExp, owned: bool) -> R<()> {
        if !self.active(v) {
            return Ok(());
        }
        let ty = self.ty_of(v)?;
        if !has_adjoint(&ty) {
            return Ok(());
        }
        if matches!(ty, Type::Array { .. }) && self.nonlocal(v) {
            return self.add_adj_index(v, &[], d);
        }
        match self.adjs.remove(v) {
            None => self.set_adj(v, d, owned),
            Some(Adj::Val { v: a, .. }) => {
                let s = self.add_values(a, d, &ty)?;
                self.set_adj(v, s, true);
            }
            Some(Adj::Acc(c)) => {
                let c2 = self.acc_add(&c, &full_slice(&ty, &[]), d)?;
                self.adjs.insert(v.clone(), Adj::Acc(c2));
            }
        }
        Ok(())
    }

    /// `v̄[idx] += d` (`d` has the type of `v[idx]`).
    pub fn add_adj_index(&mut self, v: &VName, idx: &[DimIndex], d: SubExp) -> R<()> {
        if !self.active(v) {
            return Ok(());
        }
        let ty = self.ty_of(v)?;
        if !has_adjoint(&ty) {
            return Ok(());
        }
        let full = full_slice(&ty, idx);
        if self.nonlocal(v) && !matches!(self.adjs.get(v), Some(Adj::Acc(_))) {
            let level = self.frames.len();
            let c = self.ensure_acc_at(level, v)?;
            self.adjs.insert(v.clone(), Adj::Acc(c));
        }
        if let Some(Adj::Acc(c)) = self.adjs.get(v).cloned() {
            let c2 = self.acc_add(&c, &full, d)?;
            self.adjs.insert(v.clone(), Adj::Acc(c2));
            return Ok(());
        }
        if idx.is_empty() {
            return self.add_adj(v, d, false);
        }
        let a = self.take_owned_adj(v)?;
        let SubExp::Var(av) = a else {
            return Err("an array adjoint that is a constant (internal error)".into());
        };
        let st = slice_type(&ty, idx);
        let old = self.bind("adj_elem", st.clone(), Exp::Index(av.clone(), idx.to_vec()));
        let new = self.add_values(SubExp::Var(old), d, &st)?;
        let upd = self.bind("adj_upd", ty, Exp::Update(av, idx.to_vec(), new));
        self.set_adj(v, SubExp::Var(upd), true);
        Ok(())
    }

    /// The accumulator for the free array `v` at scope level `level` (0 = the function, `k` =
    /// inside the lambda of `frames[k-1]`), creating it (and those of enclosing lambdas) on
    /// first use.
    pub fn ensure_acc_at(&mut self, level: usize, v: &VName) -> R<VName> {
        let adjs = if level == self.frames.len() {
            &self.adjs
        } else {
            &self.frames[level].outer_adjs
        };
        if let Some(Adj::Acc(c)) = adjs.get(v) {
            return Ok(c.clone());
        }
        if level == 0 {
            return Err(format!(
                "an accumulator for {v} at the top (internal error)"
            ));
        }
        if let Some(fa) = self.frames[level - 1].accs.iter().find(|a| &a.array == v) {
            return Ok(fa.param.name.clone());
        }
        let enclosing_nonlocal = level >= 2 && !self.frames[level - 2].locals.contains(v);
        let (ty, outer) = if enclosing_nonlocal {
            let c = self.ensure_acc_at(level - 1, v)?;
            // The enclosing scope's accumulator is handed to this lambda's map.
            let outer_adjs = if level - 1 == self.frames.len() {
                &mut self.adjs
            } else {
                &mut self.frames[level - 1].outer_adjs
            };
            outer_adjs.insert(v.clone(), Adj::Acc(c.clone()));
            (self.ty_of(&c)?, Some(c))
        } else {
            let at = self.ty_of(v)?;
            let (Some(elem), shape) = (at.elem(), at.shape().to_vec()) else {
                return Err("an accumulator of a non-array (internal error)".into());
            };
            let cert = self.ns.fresh("acc_cert");
            (
                Type::Acc {
                    cert,
                    shape,
                    elems: vec![Type::Prim(elem)],
                },
                None,
            )
        };
        let param = Param {
            name: self.ns.fresh(&format!("{}_acc", v.base)),
            ty: ty.clone(),
        };
        self.types.insert(param.name.clone(), ty);
        self.frames[level - 1].locals.insert(param.name.clone());
        self.frames[level - 1].accs.push(FrameAcc {
            array: v.clone(),
            param: param.clone(),
            outer,
        });
        Ok(param.name)
    }

    /// Adds `d` into the accumulator `c` at the (full-rank, see [`full_slice`]) index `idx`:
    /// one `upd_acc` for a single element, a nest of `map`s over the sliced dimensions
    /// otherwise. Returns the updated accumulator.
    pub fn acc_add(&mut self, c: &VName, idx: &[DimIndex], d: SubExp) -> R<VName> {
        let acc_ty = self.ty_of(c)?;
        let Some(k) = idx.iter().position(|i| matches!(i, DimIndex::Slice { .. })) else {
            let fixed = idx
                .iter()
                .map(|i| match i {
                    DimIndex::Fix(s) => s.clone(),
                    DimIndex::Slice { .. } => unreachable!(),
                })
                .collect();
            return Ok(self.bind(
                "acc",
                acc_ty,
                Exp::UpdAcc {
                    acc: c.clone(),
                    idx: fixed,
                    vals: vec![d],
                },
            ));
        };
        let DimIndex::Slice { start, len, stride } = idx[k].clone() else {
            unreachable!()
        };
        let SubExp::Var(dv) = d else {
            return Err("a constant added to an array slice (internal error)".into());
        };
        let dty = self.ty_of(&dv)?;
        let iota = self.bind(
            "iota",
            Type::array(PrimType::Int(crate::prim::IntType::I64), vec![len.clone()]),
            Exp::Iota {
                n: len.clone(),
                start: SubExp::i64(0),
                stride: SubExp::i64(1),
                it: crate::prim::IntType::I64,
            },
        );
        let pj = self.fresh_param("j", Type::Prim(PrimType::Int(crate::prim::IntType::I64)));
        let prow = self.fresh_param("d_row", dty.row());
        let pacc = self.fresh_param("acc_p", acc_ty.clone());
        let (pjn, prown, paccn) = (pj.name.clone(), prow.name.clone(), pacc.name.clone());
        let idx = idx.to_vec();
        let body = self.in_body(|r| {
            let i64t = PrimType::Int(crate::prim::IntType::I64);
            let off = r.binop(BinOp::Mul(i64t), SubExp::Var(pjn), stride);
            let i = r.binop(BinOp::Add(i64t), start, off);
            let mut idx2 = idx.clone();
            idx2[k] = DimIndex::Fix(i);
            let c2 = r.acc_add(&paccn, &idx2, SubExp::Var(prown))?;
            Ok(vec![SubExp::Var(c2)])
        })?;
        let lam = Lambda {
            params: vec![pj, prow, pacc],
            body,
            ret: vec![acc_ty.clone()],
        };
        Ok(self.bind(
            "acc",
            acc_ty,
            Exp::Soac(Soac::Map {
                w: len,
                arrs: vec![iota, dv, c.clone()],
                lam,
            }),
        ))
    }

    // --- the sweeps ----------------------------------------------------------------------------

    /// The forward sweep of `stms`: emits them, copying every array a statement consumes first
    /// (so the return sweep can still read the original).
    pub fn fwd_stms(&mut self, stms: &[Stm]) -> R<()> {
        for s in stms {
            if matches!(s.exp, Exp::Loop { .. }) {
                self.fwd_loop(s)?;
                continue;
            }
            if matches!(s.exp, Exp::WithVjp { .. }) {
                self.fwd_with_vjp(s)?;
                continue;
            }
            let mut s = s.clone();
            for a in consumed(&s.exp) {
                let ty = self.ty_of(&a)?;
                let c = self.bind(&format!("{}_copy", a.base), ty, Exp::Copy(a.clone()));
                rename_consumed(&mut s.exp, &a, &c);
            }
            self.emit(s);
        }
        Ok(())
    }

    /// The return sweep of `stms` (already emitted by [`Rev::fwd_stms`]).
    pub fn rev_stms(&mut self, stms: &[Stm]) -> R<()> {
        for s in stms.iter().rev() {
            self.rev_stm(s)?;
        }
        Ok(())
    }

    /// The return-sweep rule of one statement.
    fn rev_stm(&mut self, stm: &Stm) -> R<()> {
        // Symbolic zeros: a statement none of whose results has an adjoint contributes nothing.
        // Accumulators are never zero: their adjoint is recorded by certificate (see [`acc`]).
        if !stm
            .pat
            .elems
            .iter()
            .any(|p| self.adjs.contains_key(&p.name) || matches!(p.ty, Type::Acc { .. }))
        {
            return Ok(());
        }
        match &stm.exp {
            Exp::SubExp(_)
            | Exp::UnOp(..)
            | Exp::BinOp(..)
            | Exp::CmpOp(..)
            | Exp::Conv(..)
            | Exp::Math(..) => self.rev_scalar(stm),
            Exp::Index(..)
            | Exp::Update(..)
            | Exp::Iota { .. }
            | Exp::SortByKey { .. }
            | Exp::Replicate { .. }
            | Exp::ArrayLit { .. }
            | Exp::Concat { .. }
            | Exp::Copy(_)
            | Exp::Reshape(..)
            | Exp::Rearrange(..) => self.rev_array(stm),
            Exp::Assert { .. } => Ok(()),
            Exp::If { .. } => self.rev_if(stm),
            Exp::Soac(Soac::Map { .. }) => self.rev_map(stm),
            Exp::Loop { .. } => self.rev_loop(stm),
            Exp::Soac(Soac::Reduce { .. }) => self.rev_reduce(stm),
            Exp::Soac(Soac::Scan { .. }) => self.rev_scan(stm),
            Exp::Soac(Soac::Hist { .. }) => self.rev_hist(stm),
            Exp::Soac(Soac::Scatter { .. }) => self.rev_scatter(stm),
            Exp::WithAcc { .. } => self.rev_with_acc(stm),
            Exp::UpdAcc { .. } => self.rev_upd_acc(stm),
            Exp::WithVjp { .. } => self.rev_with_vjp(stm),
            Exp::Apply { fun, .. } => Err(format!("a call of {fun}")),
            // `ad::transform` differentiates innermost first: none is left here.
            Exp::Jvp { .. } | Exp::Vjp { .. } => Err("nested AD (internal error)".into()),
        }
    }
}

/// `idx` extended to every dimension of `ty` (missing dimensions become full slices).
pub(crate) fn full_slice(ty: &Type, idx: &[DimIndex]) -> Vec<DimIndex> {
    let mut out = idx.to_vec();
    for d in ty.shape().iter().skip(idx.len()) {
        out.push(DimIndex::Slice {
            start: SubExp::i64(0),
            len: d.clone(),
            stride: SubExp::i64(1),
        });
    }
    out
}
