//! Fusion of SOACs at the SOAC level: `map` into `map`, and `reduce`s over one `map` together.
//!
//! The SOAC IR has no redomap/screma form, so a `map` feeding a `reduce`, `scan`,
//! `reduce_by_index` or `scatter` is fused later, when flattening to the kernel IR. Here:
//!
//! - **Vertical** ([`vertical`]): `let ys = map f xs ... let zs = map g ys as` becomes one `map`
//!   computing `g ∘ f` (the producer's lambda body, then the consumer's, with the consumer's
//!   row params of `ys` replaced by the producer's lambda results).
//! - **Replicates into maps** ([`vertical`]): an input `replicate [w] v` of a map becomes `v`.
//! - **Horizontal** ([`horizontal`]): two independent `map`s of the same width in the same body
//!   become one `map` returning the results of both; two independent `reduce`s to scalars over
//!   results of the same `map` become one `reduce` ([`reductions`]).
//!
//! [`fuse`] runs them on every body of the program (lambda, loop, branch and `with_acc` bodies
//! included, innermost first) until nothing changes (at most [`MAX_ROUNDS`] rounds), vertical
//! fusion until it finds nothing before horizontal fusion in each round (see [`fuse`]). Fusing never
//! creates names: the fused lambda reuses the params and bound names of the two lambdas it is
//! made of (their statements are removed), so names stay unique. The producer's row results are
//! substituted for the consumer's params; a constant result is bound with a `let`, and a
//! consumer param reading the same array as a producer param becomes that param. Run
//! [`super::simplify`] afterwards to clean up.
//!
//! # Rules
//!
//! What fuses:
//! 1. A producer `map` into a consumer `map` of the same width (syntactically equal widths,
//!    equal constants, or sizes proven equal by an `assert (a == b)` that dominates both, as
//!    the lowering of size coercions emits) when the consumer uses each array of the producer
//!    that it reads only as an input (a row param), not freely in its lambda.
//! 2. If the producer's arrays are also used by other statements or the body's result, the
//!    fused map returns them too (extra outputs, as Futhark); their values are computed once,
//!    by the fused map, so no work is duplicated. Arrays used only by the consumer are dropped.
//! 3. The fused map is placed where the consumer was (the producer's computation moves later),
//!    or, when a statement between them uses the producer's arrays, where the producer was (the
//!    consumer's computation moves earlier), if everything it uses is bound before the producer.
//! 4. Two `map`s of the same width in the same body, neither of which uses the other's results
//!    (directly or through the statements in between), fuse horizontally into one map returning
//!    the results of both, placed where the later one was or, if the earlier one's results are
//!    used in between, where the earlier one was.
//! 5. An input `replicate [w] v` (`v` a scalar) of a map of width `w` becomes `let x = v` at the
//!    start of the lambda, for the input's row param `x` (a replicate fused into its consumer;
//!    the replicate itself is left to DCE). The map then no longer depends on where the
//!    replicate is, which lets it move across it (AD seeds its adjoints with such replicates).
//! 6. A `map` that takes accumulators (a `map` over `Acc` inputs, as reverse-mode AD emits) may be
//!    either side of a vertical or a horizontal fusion (its accumulator results are returned
//!    like any other). Maps nested inside lambdas, loops, branches and `with_acc` lambdas fuse
//!    within their own body the same way.
//! 7. **Into `with_acc`** ([`into_with_acc`]): a `map` that takes accumulators, right after a
//!    `with_acc` whose extra (non-accumulated) results it alone reads as inputs, moves to the
//!    end of the `with_acc`'s lambda, reading the lambda's results, where rule 1 can fuse it
//!    with the `map` producing them (AD's adjoint rows of an inner map, which would otherwise
//!    be materialised for every iteration of the enclosing one).
//! 8. **Reductions over one map** ([`reductions`]): two independent `reduce`s to scalars of the
//!    same width whose arrays are all results of one `map` become one `reduce` with both
//!    operators side by side, so that the map's function runs once per element for both.
//! 9. **Views move up** (before horizontal fusion, in host-level bodies: function, loop,
//!    branch and `with_acc` bodies, not SOAC lambdas): a statement that only makes a view of
//!    an array (an index or slice whose result is an array) moves up to just after what it
//!    depends on or may not cross, keeping its order among views. A map reading the view can
//!    then move up to an earlier map that statements in between keep from moving down (the
//!    RNN gradient's first gate reads its weight adjoint's row after the other gates' updates,
//!    and its weight sums now fuse with theirs).
//!
//! What does not fuse, and why:
//! - Never across a consumption: a statement moves past another only if neither consumes (in-place
//!   update, `reduce_by_index`/`scatter` destination, `with_acc` input, call argument, also
//!   through the aliases that statements of the same body make by slicing, reshaping,
//!   rearranging, binding a variable, branching or looping) an array that the other reads, and
//!   two maps fuse only if neither consumes an array the other reads.
//!   The producer's inputs are thus still intact where its computation ends up, and a consumer
//!   that updates its rows in place does not update an array the producer reads (nor a producer
//!   result, whose row would then alias the producer's input or extra output).
//! - Never duplicates work: a producer is fused only into a consumer in the same body (never
//!   into a map nested in a lambda or a loop, where it would be recomputed per iteration), and
//!   it is removed; a producer with several consumers fuses into one of them and returns its
//!   arrays to the others.
//! - Maps of different widths (not proven equal) do not fuse.
//! - Accumulator updates keep their order relative to the other uses of accumulators: a
//!   statement that mentions an accumulator never moves across another one that does, a consumer
//!   never takes an accumulator that its producer updates (the two maps' updates would
//!   interleave), and two maps taking accumulators of the same `with_acc` input never fuse.
//! - A statement containing an `assert` does not move across another one containing an
//!   `assert`, and two maps that both contain one do not fuse (which would interleave their
//!   checks): the first failing check stays the first. Other run-time failures (bounds, division
//!   by zero) are not ordered: as in Futhark, a failing program may then report another error.
//! - Maps with different attributes (`#[unsafe]`, `#[stripmine(k)]`, ...) do not fuse.
//! - `reduce`, `scan`, `reduce_by_index` and `scatter` are neither producers nor consumers here
//!   (see above).

pub mod horizontal;
pub mod into_with_acc;
pub mod reductions;
pub mod vertical;

use super::traverse::{
    effectful_funs, has_effect, nested_bodies, uses_in_exp, walk_type, UseCounter,
};
use crate::ir::*;
use crate::prim::PrimType;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The most rounds of vertical and horizontal fusion [`fuse`] runs (and the most passes of
/// vertical fusion in one round).
pub const MAX_ROUNDS: usize = 16;

/// Fuses `map`s vertically and horizontally in every body of `p` until nothing changes (at
/// most [`MAX_ROUNDS`] rounds). See the module documentation for the rules.
///
/// Each round fuses vertically until nothing more fuses that way, and only then horizontally.
/// Fusing two outer maps makes a new lambda whose inner maps can fuse only in the next pass,
/// and a horizontal fusion made first could take a map that its producer would have taken:
/// a `map` reading its producer's rows element by element, paired instead with an independent
/// `map` that reads the producer's rows whole, ends up after the kernel boundary that the
/// whole-row read makes when flattening (RNN's gradient computed each gate's adjoint with the
/// previous gate's matrix product, one gate per kernel).
pub fn fuse(mut p: Program) -> Program {
    for _ in 0..MAX_ROUNDS {
        let (q, v) = vertical_until_done(p);
        let (q, h) = horizontal::fuse_horizontal_counted(q);
        let (q, s) = into_with_acc::sink_counted(q);
        let (q, r) = reductions::fuse_reductions_counted(q);
        p = q;
        if v + h + s + r == 0 {
            break;
        }
    }
    p
}

/// Vertical fusion of `p` repeated until it fuses nothing (at most [`MAX_ROUNDS`] passes), and
/// how many fusions it made.
fn vertical_until_done(mut p: Program) -> (Program, usize) {
    let mut total = 0;
    for _ in 0..MAX_ROUNDS {
        let (q, v) = vertical::fuse_vertical_counted(p);
        p = q;
        total += v;
        if v == 0 {
            break;
        }
    }
    (p, total)
}

/// A fusion of the statements of one body, given what is known at its start and the functions
/// with effects; returns how many fusions it made.
type BodyFusion<'a> = dyn FnMut(&mut Body, &Facts, &HashSet<Arc<str>>) -> usize + 'a;

/// Runs `f` on every body of every function of `p`, innermost first, with the size equalities
/// that hold at the start of each body; returns `p` and the sum of what `f` returned.
fn on_every_body(mut p: Program, f: &mut BodyFusion) -> (Program, usize) {
    let eff = effectful_funs(&p);
    let mut n = 0;
    for fd in &mut p.funs {
        n += each_body(&mut fd.body, &Facts::default(), &eff, f);
    }
    (p, n)
}

fn each_body(b: &mut Body, outer: &Facts, eff: &HashSet<Arc<str>>, f: &mut BodyFusion) -> usize {
    let mut n = 0;
    let mut facts = outer.clone();
    for s in &mut b.stms {
        for nb in nested_bodies(&mut s.exp) {
            n += each_body(nb, &facts, eff, f);
        }
        facts.observe(s);
    }
    n + f(b, outer, eff)
}

/// What is known at a point of the program from the statements before it (on every path to
/// it): size equalities `a == b` checked by an `assert`, and the arrays that are
/// `replicate [w] v` of a scalar `v`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts {
    /// `c = (a == b)` comparisons of integers seen so far.
    conds: HashMap<VName, (SubExp, SubExp)>,
    /// Equalities asserted so far.
    eqs: Vec<(SubExp, SubExp)>,
    /// `r = replicate [w] v` with `v` a scalar: `r -> (w, v)`.
    replicates: HashMap<VName, (SubExp, SubExp)>,
}

impl Facts {
    /// Records what statement `s` proves for the statements after it.
    pub(crate) fn observe(&mut self, s: &Stm) {
        match (&s.exp, &s.pat.elems[..]) {
            (Exp::CmpOp(CmpOp::Eq(PrimType::Int(_)), a, b), [c]) => {
                self.conds.insert(c.name.clone(), (a.clone(), b.clone()));
            }
            (
                Exp::Assert {
                    cond: SubExp::Var(c),
                    ..
                },
                _,
            ) => {
                if let Some(e) = self.conds.get(c) {
                    self.eqs.push(e.clone());
                }
            }
            (Exp::Replicate { shape, value }, [r]) if shape.len() == 1 && r.ty.rank() == 1 => {
                self.replicates
                    .insert(r.name.clone(), (shape[0].clone(), value.clone()));
            }
            _ => {}
        }
    }

    /// `(w, v)` if `a` is `replicate [w] v` of a scalar `v`.
    pub(crate) fn replicate(&self, a: &VName) -> Option<&(SubExp, SubExp)> {
        self.replicates.get(a)
    }

    /// `self` with what `stms` prove.
    pub(crate) fn after(&self, stms: &[Stm]) -> Facts {
        let mut f = self.clone();
        stms.iter().for_each(|s| f.observe(s));
        f
    }

    /// Whether the sizes `a` and `b` are known to be equal.
    pub(crate) fn equal(&self, a: &SubExp, b: &SubExp) -> bool {
        let same = |x: &SubExp, y: &SubExp| match (x, y) {
            (SubExp::Const(p), SubExp::Const(q)) => {
                p.as_i128().is_some() && p.as_i128() == q.as_i128()
            }
            _ => x == y,
        };
        // The closure of the asserted equalities, from `a`.
        let mut class = vec![a.clone()];
        let mut k = 0;
        while k < class.len() {
            if same(&class[k], b) {
                return true;
            }
            for (x, y) in &self.eqs {
                for (from, to) in [(x, y), (y, x)] {
                    if same(from, &class[k]) && !class.iter().any(|c| same(c, to)) {
                        class.push(to.clone());
                    }
                }
            }
            k += 1;
        }
        false
    }
}

/// What fusion needs to know about one statement of a body.
pub(crate) struct StmInfo {
    /// The variables it uses (operands, types, nested bodies) and the arrays those may alias.
    pub reads: HashSet<VName>,
    /// The names it binds (its pattern).
    pub binds: HashSet<VName>,
    /// The arrays it may consume, and the arrays those may alias.
    pub consumes: HashSet<VName>,
    /// Whether it contains an `assert` (or calls a function that does).
    pub effect: bool,
    /// Whether it mentions an accumulator (binds one, takes one, updates one, `with_acc`).
    pub acc: bool,
}

/// What [`StmInfo`] takes from a statement alone, before the aliases made by the statements
/// before it are added: the costly part (a walk of the statement's nested bodies), which a pass
/// changing a body a few statements at a time keeps for the statements it leaves alone.
pub(crate) struct OwnInfo {
    reads: HashSet<VName>,
    consumes: HashSet<VName>,
    effect: bool,
    acc: bool,
}

/// The [`OwnInfo`] of statement `s` (`eff`: the functions with effects).
pub(crate) fn own_info(s: &Stm, eff: &HashSet<Arc<str>>) -> OwnInfo {
    let mut reads = uses_in_exp(&s.exp);
    for p in &s.pat.elems {
        let mut t = p.ty.clone();
        let mut uc = UseCounter::default();
        walk_type(&mut uc, &mut t);
        reads.extend(uc.uses.into_keys());
    }
    OwnInfo {
        reads,
        consumes: consumed(&s.exp),
        effect: has_effect(&s.exp, eff),
        acc: s.pat.elems.iter().any(|p| matches!(p.ty, Type::Acc { .. }))
            || super::fuse_acc::has_acc(&s.exp),
    }
}

/// The [`StmInfo`] of every statement of `stms`. Aliases are those made by the statements
/// themselves (views of arrays, branch and loop results); a consumption or a use of an alias
/// counts for the arrays it may alias.
pub(crate) fn infos(stms: &[Stm], eff: &HashSet<Arc<str>>) -> Vec<StmInfo> {
    let own: Vec<OwnInfo> = stms.iter().map(|s| own_info(s, eff)).collect();
    infos_of(stms, &own)
}

/// [`infos`] from the [`OwnInfo`] of each statement of `stms` (`own[k]` of `stms[k]`).
pub(crate) fn infos_of(stms: &[Stm], own: &[OwnInfo]) -> Vec<StmInfo> {
    let mut alias: HashMap<VName, HashSet<VName>> = HashMap::new();
    let mut out = Vec::with_capacity(stms.len());
    for (s, o) in stms.iter().zip(own) {
        let reads = close(&alias, &o.reads);
        let consumes = close(&alias, &o.consumes);
        record_aliases(&mut alias, s);
        out.push(StmInfo {
            reads,
            binds: s.pat.elems.iter().map(|p| p.name.clone()).collect(),
            consumes,
            effect: o.effect,
            acc: o.acc,
        });
    }
    out
}

/// `names` and every array they may alias.
pub(crate) fn close(
    alias: &HashMap<VName, HashSet<VName>>,
    names: &HashSet<VName>,
) -> HashSet<VName> {
    let mut out = names.clone();
    if alias.is_empty() {
        return out;
    }
    let mut todo: Vec<VName> = names.iter().cloned().collect();
    while let Some(v) = todo.pop() {
        for a in alias.get(&v).into_iter().flatten() {
            if out.insert(a.clone()) {
                todo.push(a.clone());
            }
        }
    }
    out
}

/// Records the arrays each result of `s` may alias: views (`Index`, `Reshape`, `Rearrange`),
/// copies of variables, and the results of branches and loops (which may be an input array).
pub(crate) fn record_aliases(alias: &mut HashMap<VName, HashSet<VName>>, s: &Stm) {
    let arrays = |p: &Param| !matches!(p.ty, Type::Prim(_));
    let mut add = |name: &VName, srcs: HashSet<VName>| {
        if !srcs.is_empty() {
            alias.entry(name.clone()).or_default().extend(srcs);
        }
    };
    match &s.exp {
        Exp::Index(a, _) | Exp::Reshape(_, a) | Exp::Rearrange(_, a) => {
            for p in s.pat.elems.iter().filter(|p| arrays(p)) {
                add(&p.name, HashSet::from([a.clone()]));
            }
        }
        Exp::SubExp(SubExp::Var(a)) => {
            for p in s.pat.elems.iter().filter(|p| arrays(p)) {
                add(&p.name, HashSet::from([a.clone()]));
            }
        }
        Exp::If { .. } | Exp::Loop { .. } | Exp::Apply { .. } => {
            // Any array the statement uses may be returned as it is.
            let used = uses_in_exp(&s.exp);
            for p in s.pat.elems.iter().filter(|p| arrays(p)) {
                add(&p.name, used.clone());
            }
        }
        _ => {}
    }
}

/// The variables `e` may consume (update in place): in-place updates, destinations of
/// `reduce_by_index`/`scatter`, `with_acc` inputs, the arguments of calls, and what nested
/// bodies consume, where a consumed lambda or loop param stands for the array it comes from.
/// May contain names bound inside `e` (names are unique, so they never match outer ones).
pub(crate) fn consumed(e: &Exp) -> HashSet<VName> {
    let mut out = HashSet::new();
    match e {
        Exp::Update(a, ..) => {
            out.insert(a.clone());
        }
        Exp::Soac(Soac::Hist { dest, op, .. }) => {
            out.extend(dest.iter().cloned());
            out.extend(consumed_body(&op.lam.body));
        }
        Exp::Soac(Soac::Scatter { dest, .. }) => out.extend(dest.iter().cloned()),
        Exp::Soac(Soac::Map { arrs, lam, .. }) => {
            out.extend(through_params(&lam.params, arrs, consumed_body(&lam.body)));
        }
        Exp::Soac(Soac::Reduce { arrs, op, .. }) | Exp::Soac(Soac::Scan { arrs, op, .. }) => {
            let c = consumed_body(&op.lam.body);
            // A consumed operator param may be any element: all the inputs.
            if op.lam.params.iter().any(|p| c.contains(&p.name)) {
                out.extend(arrs.iter().cloned());
            }
            out.extend(c);
        }
        Exp::WithAcc { inputs, lam } => {
            out.extend(inputs.iter().flat_map(|i| i.arrs.iter().cloned()));
            for i in inputs {
                if let Some(op) = &i.op {
                    out.extend(consumed_body(&op.lam.body));
                }
            }
            out.extend(consumed_body(&lam.body));
        }
        Exp::Loop { params, body, .. } => {
            let c = consumed_body(body);
            for (p, init) in params {
                if let (true, SubExp::Var(v)) = (c.contains(&p.name), init) {
                    out.insert(v.clone());
                }
            }
            out.extend(c);
        }
        Exp::If { then_b, else_b, .. } => {
            out.extend(consumed_body(then_b));
            out.extend(consumed_body(else_b));
        }
        Exp::Apply { args, .. } => out.extend(args.iter().filter_map(|a| a.as_var().cloned())),
        Exp::Jvp { lam, args, .. } | Exp::Vjp { lam, args, .. } => {
            let c = consumed_body(&lam.body);
            let vars: Vec<VName> = args.iter().filter_map(|a| a.as_var().cloned()).collect();
            if lam.params.iter().any(|p| c.contains(&p.name)) {
                out.extend(vars);
            }
            out.extend(c);
        }
        _ => {}
    }
    out
}

/// What a body consumes, through the aliases its statements make.
pub(crate) fn consumed_body(b: &Body) -> HashSet<VName> {
    let mut alias = HashMap::new();
    let mut out = HashSet::new();
    for s in &b.stms {
        out.extend(close(&alias, &consumed(&s.exp)));
        record_aliases(&mut alias, s);
    }
    out
}

/// `c` with each consumed param of `params` replaced by the array it takes its rows from.
fn through_params(params: &[Param], arrs: &[VName], c: HashSet<VName>) -> HashSet<VName> {
    let mut out = c.clone();
    for (p, a) in params.iter().zip(arrs) {
        if c.contains(&p.name) {
            out.insert(a.clone());
        }
    }
    out
}

/// Whether statement `m`, moving past statement `k` (either way), keeps the program's meaning
/// as far as consumption, effects and accumulators go: neither consumes what the other reads,
/// they do not both contain an `assert`, and they do not both mention accumulators (so
/// accumulator updates keep their order relative to other uses of accumulators).
pub(crate) fn can_cross(m: &StmInfo, k: &StmInfo) -> bool {
    m.consumes.is_disjoint(&k.reads)
        && k.consumes.is_disjoint(&m.reads)
        && !(m.effect && k.effect)
        && !(m.acc && k.acc)
}

/// The parts of a `map` statement whose lambda takes one param per input.
pub(crate) fn as_map(s: &Stm) -> Option<(&SubExp, &Vec<VName>, &Lambda)> {
    match &s.exp {
        Exp::Soac(Soac::Map { w, arrs, lam }) if lam.params.len() == arrs.len() => {
            Some((w, arrs, lam))
        }
        _ => None,
    }
}

/// Whether a lambda param is an accumulator.
/// The param of the first map that already reads `arr`, which a second map's param `cp` of
/// the same array can be replaced by when the two fuse (never for accumulators, whose
/// params are threaded through each map separately).
fn shared_param(arrs: &[VName], params: &[Param], cp: &Param, arr: &VName) -> Option<VName> {
    arrs.iter()
        .position(|a| a == arr)
        .filter(|&k| !is_acc(cp) && !is_acc(&params[k]))
        .map(|k| params[k].name.clone())
}

/// Applies `subst` to a lambda's body and return types (the second map's, once its params
/// are replaced by the first map's).
fn substitute_lambda(body: &mut Body, ret: &mut [Type], subst: &HashMap<VName, SubExp>) {
    let mut sub = super::traverse::Substitute { map: subst };
    super::traverse::walk_body(&mut sub, body);
    ret.iter_mut().for_each(|t| walk_type(&mut sub, t));
}

/// `let pat = map w arrs (\params -> stms in result)`, with the consumer's attributes.
#[allow(clippy::too_many_arguments)]
fn map_stm(
    pat: Vec<Param>,
    w: SubExp,
    arrs: Vec<VName>,
    params: Vec<Param>,
    body: Body,
    ret: Vec<Type>,
    attrs: Attrs,
    loc: Option<crate::diag::SrcLoc>,
) -> Stm {
    Stm {
        pat: Pat { elems: pat },
        exp: Exp::Soac(Soac::Map {
            w,
            arrs,
            lam: Lambda { params, body, ret },
        }),
        attrs,
        loc,
    }
}

pub(crate) fn is_acc(p: &Param) -> bool {
    matches!(p.ty, Type::Acc { .. })
}

/// The certificates of the accumulators a lambda takes (one per `with_acc` input).
pub(crate) fn certs(l: &Lambda) -> Vec<VName> {
    l.params
        .iter()
        .filter_map(|p| match &p.ty {
            Type::Acc { cert, .. } => Some(cert.clone()),
            _ => None,
        })
        .collect()
}

/// How many times `e` uses each variable.
pub(crate) fn use_counts(e: &Exp) -> HashMap<VName, usize> {
    let mut uc = UseCounter::default();
    super::traverse::walk_exp(&mut uc, &mut e.clone());
    uc.uses
}

#[cfg(test)]
mod tests;
