//! Common subexpression elimination: a statement whose expression is identical (same operation,
//! same operands, same nested bodies) to that of an earlier statement in scope is replaced by
//! copies of the earlier results (`let y = x`), which [`copy_prop`](super::copy_prop) propagates.
//!
//! Not eliminated:
//! - expressions that consume or update (`Update`, `scatter`, `hist`, `with_acc`, `upd_acc`), fresh
//!   copies (`copy`), and accumulators;
//! - anything with an effect (an `Assert`, an `if`/loop/lambda containing one, or a call of a
//!   function containing one);
//! - expressions with array results in a function that consumes arrays anywhere (an `Update`,
//!   `scatter`, `hist`, `with_acc` or a call with arguments): sharing an array that is later
//!   consumed would be wrong, and aliasing is not tracked. Scalar results are always eligible,
//!   and so is an `iota` that the function only reads (every use of its name an index of it or
//!   an input of a `map`, `reduce` or `scan`, or the indices or values of a `scatter` or
//!   `reduce_by_index`): reverse mode's reductions and hoisting leave several identical index
//!   arrays in one body (GMM's gradient: ten, each one more launch on a device).
//!
//! Expressions are compared by their printed form after renaming the variables bound inside them
//! (lambda params, loop params, nested statements) canonically, so two `reduce`s with the same
//! operator written with different parameter names are equal. Expressions with more than
//! [`MAX_KEY_STMS`] nested statements are not compared (printing each enclosing statement's whole
//! body made the pass quadratic in the nesting depth: AD's nested loops); the sizes and effects
//! of nested bodies are found bottom-up, in the same walk.

use super::traverse::{effectful_funs, mk_stm, nested_bodies, walk_exp, Binders, Rename};
use crate::ir::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The most statements nested in an expression that is still compared with the others.
pub const MAX_KEY_STMS: usize = 64;

/// Eliminates common subexpressions in every function.
pub fn cse(mut p: Program) -> Program {
    let eff = effectful_funs(&p);
    for f in &mut p.funs {
        let arrays_ok = !consumes(&mut f.body);
        let read_only = if arrays_ok {
            HashSet::new()
        } else {
            read_only_iotas(f)
        };
        let mut c = Cse {
            eff: &eff,
            arrays_ok,
            read_only,
            avail: HashMap::new(),
            log: Vec::new(),
        };
        c.body(&mut f.body);
    }
    p
}

/// The `iota`s of `f` whose every use only reads them (see the module documentation).
fn read_only_iotas(f: &mut FunDef) -> HashSet<VName> {
    fn reads(b: &Body, iotas: &mut HashSet<VName>, n: &mut HashMap<VName, usize>) {
        for s in &b.stms {
            if let (Exp::Iota { .. }, [pe]) = (&s.exp, &s.pat.elems[..]) {
                iotas.insert(pe.name.clone());
            }
            let read: Vec<&VName> = match &s.exp {
                Exp::Index(a, _) => vec![a],
                Exp::Soac(
                    Soac::Map { arrs, .. } | Soac::Reduce { arrs, .. } | Soac::Scan { arrs, .. },
                ) => arrs.iter().collect(),
                Exp::Soac(Soac::Hist { inds, vals, .. }) => {
                    std::iter::once(inds).chain(vals).collect()
                }
                Exp::Soac(Soac::Scatter { inds, vals, .. }) => inds.iter().chain(vals).collect(),
                _ => vec![],
            };
            for v in read {
                *n.entry(v.clone()).or_default() += 1;
            }
            for nb in super::traverse::nested_bodies_ref(&s.exp) {
                reads(nb, iotas, n);
            }
        }
    }
    let mut iotas = HashSet::new();
    let mut read = HashMap::new();
    reads(&f.body, &mut iotas, &mut read);
    let uses = super::traverse::fun_uses(f);
    iotas
        .into_iter()
        .filter(|v| uses.get(v).copied().unwrap_or(0) == read.get(v).copied().unwrap_or(0))
        .collect()
}

/// Whether the body (or anything nested in it) consumes an array or calls a function with
/// arguments.
fn consumes(b: &mut Body) -> bool {
    b.stms.iter_mut().any(|s| {
        let direct = matches!(
            &s.exp,
            Exp::Update(..)
                | Exp::Soac(Soac::Scatter { .. })
                | Exp::Soac(Soac::Hist { .. })
                | Exp::WithAcc { .. }
                | Exp::UpdAcc { .. }
        ) || matches!(&s.exp, Exp::Apply { args, .. } if !args.is_empty());
        direct || nested_bodies(&mut s.exp).into_iter().any(consumes)
    })
}

/// The printed expression with the names bound inside it renamed canonically.
fn key_of(e: &Exp) -> String {
    let mut e = e.clone();
    let mut bs = Binders::default();
    walk_exp(&mut bs, &mut e);
    if bs.names.is_empty() {
        return e.to_string();
    }
    let map: HashMap<VName, VName> = bs
        .names
        .into_iter()
        .enumerate()
        .map(|(k, v)| {
            (
                v,
                VName {
                    id: k as u32,
                    base: Arc::from(""),
                },
            )
        })
        .collect();
    walk_exp(&mut Rename { map: &map }, &mut e);
    e.to_string()
}

struct Cse<'a> {
    eff: &'a HashSet<Arc<str>>,
    arrays_ok: bool,
    /// The `iota`s that may be shared although `arrays_ok` is false.
    read_only: HashSet<VName>,
    avail: HashMap<String, Vec<VName>>,
    log: Vec<String>,
}

/// What [`Cse::body`] found of a body: its statements (nested ones included) and whether any
/// has an effect.
#[derive(Clone, Copy, Default)]
struct Summary {
    stms: usize,
    effect: bool,
}

impl Cse<'_> {
    /// Whether `s` (`nested` statements inside it, `effect` whether it or any of them has an
    /// effect) may be replaced by an earlier statement.
    fn eligible(&self, s: &Stm, nested: usize, effect: bool) -> bool {
        if s.pat.elems.is_empty() || effect || nested > MAX_KEY_STMS {
            return false;
        }
        let excluded = matches!(
            &s.exp,
            Exp::Update(..)
                | Exp::Soac(Soac::Scatter { .. })
                | Exp::Soac(Soac::Hist { .. })
                | Exp::WithAcc { .. }
                | Exp::UpdAcc { .. }
                | Exp::Assert { .. }
                | Exp::Copy(_)
                | Exp::SubExp(_)
        );
        if excluded {
            return false;
        }
        s.pat.elems.iter().all(|pe| match &pe.ty {
            TypeBase::Prim(_) => true,
            TypeBase::Array { .. } => {
                self.arrays_ok
                    || (matches!(s.exp, Exp::Iota { .. }) && self.read_only.contains(&pe.name))
            }
            TypeBase::Acc { .. } => false,
        })
    }

    fn body(&mut self, b: &mut Body) -> Summary {
        let mark = self.log.len();
        let mut out = Vec::with_capacity(b.stms.len());
        let mut sum = Summary::default();
        for mut s in std::mem::take(&mut b.stms) {
            let mut nested = Summary::default();
            for nb in nested_bodies(&mut s.exp) {
                let n = self.body(nb);
                nested.stms += n.stms;
                nested.effect |= n.effect;
            }
            let effect = nested.effect || own_effect(&s.exp, self.eff);
            sum.stms += 1 + nested.stms;
            sum.effect |= effect;
            if !self.eligible(&s, nested.stms, effect) {
                out.push(s);
                continue;
            }
            let key = key_of(&s.exp);
            match self.avail.get(&key) {
                Some(prev) if prev.len() == s.pat.elems.len() => {
                    for (pe, v) in s.pat.elems.iter().zip(prev) {
                        let mut c = mk_stm(vec![pe.clone()], Exp::SubExp(SubExp::Var(v.clone())));
                        c.loc = s.loc.clone();
                        out.push(c);
                    }
                }
                _ => {
                    self.avail.insert(
                        key.clone(),
                        s.pat.elems.iter().map(|pe| pe.name.clone()).collect(),
                    );
                    self.log.push(key);
                    out.push(s);
                }
            }
        }
        for k in self.log.drain(mark..) {
            self.avail.remove(&k);
        }
        b.stms = out;
        sum
    }
}

/// Whether `e` itself, not counting its nested bodies, has an effect (an `Assert`, or a call
/// of a function that contains one).
fn own_effect(e: &Exp, eff: &HashSet<Arc<str>>) -> bool {
    match e {
        Exp::Assert { .. } => true,
        Exp::Apply { fun, .. } => eff.contains(fun),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::*;
    use crate::ir::check::check_program;
    use crate::prim::{IntType, PrimType};

    #[test]
    fn reuses_identical_scalar_expressions_also_in_lambdas() {
        let mut ns = NameSource::default();
        let n = ns.fresh("n");
        let xs_t = arr(PrimType::F32, vec![var(&n)]);
        let f = fun_sized(
            &mut ns,
            "main",
            true,
            vec![n.clone()],
            |_, _| vec![("xs".into(), xs_t.clone()), ("y".into(), f32t())],
            vec![f32t().to_ext(), f32t().to_ext(), xs_t.to_ext()],
            |b, ps| {
                let y = var(&ps[2]);
                let a = b.binop(BinOp::Mul(PrimType::F32), y.clone(), y.clone());
                let c = b.binop(BinOp::Mul(PrimType::F32), y.clone(), y.clone());
                let lam = b.lambda(&[("x", f32t())], vec![f32t()], |b, lp| {
                    let d = b.binop(BinOp::Mul(PrimType::F32), y.clone(), y.clone());
                    let r = b.binop(BinOp::Add(PrimType::F32), var(&d), var(&lp[0]));
                    vec![var(&r)]
                });
                let m = b.map(var(&ps[0]), vec![ps[1].clone()], lam);
                vec![var(&a), var(&c), var(&m[0])]
            },
        );
        let p = program(ns, vec![f]);
        let q = cse(p);
        check_program(&q).unwrap();
        let a = q.funs[0].body.stms[0].pat.elems[0].name.clone();
        assert_eq!(
            q.funs[0].body.stms[1].exp,
            Exp::SubExp(SubExp::Var(a.clone()))
        );
        let Exp::Soac(Soac::Map { lam, .. }) = &q.funs[0].body.stms[2].exp else {
            panic!()
        };
        assert_eq!(lam.body.stms[0].exp, Exp::SubExp(SubExp::Var(a)));
    }

    #[test]
    fn does_not_share_arrays_when_the_function_consumes() {
        let mut ns = NameSource::default();
        let t = arr(PrimType::I64, vec![i64c(4)]);
        let f = fun(
            &mut ns,
            "main",
            true,
            &[],
            &[],
            vec![t.clone(), t.clone()],
            |b, _| {
                let iota = || Exp::Iota {
                    n: i64c(4),
                    start: i64c(0),
                    stride: i64c(1),
                    it: IntType::I64,
                };
                let a = b.bind("a", t.clone(), iota());
                let c = b.bind("c", t.clone(), iota());
                let a2 = b.bind(
                    "a2",
                    t.clone(),
                    Exp::Update(a, vec![DimIndex::Fix(i64c(0))], i64c(9)),
                );
                vec![var(&a2), var(&c)]
            },
        );
        let q = cse(program(ns, vec![f]));
        check_program(&q).unwrap();
        assert!(matches!(q.funs[0].body.stms[1].exp, Exp::Iota { .. }));
    }

    /// In a function that consumes an array, two identical `iota`s that are only read (an
    /// index, a map's input) are one; an identical one that is returned (so may alias what a
    /// caller consumes) stays. The interpreter's results before and after.
    #[test]
    fn shares_read_only_iotas_when_the_function_consumes() {
        let src = "entry main (xs: *[4]i64) : ([4]i64, i64, [4]i64, [4]i64) =
          let ys = xs with [0] = 9
          let a = iota 4
          let b = iota 4
          let c = iota 4
          in (ys, a[2] + b[3], map (+1) b, c)";
        let (_, after) = super::super::differential::rewrite_and_compare(
            src,
            "main",
            "[5i64, 6i64, 7i64, 8i64]",
            |p| p,
        );
        let iotas =
            super::super::differential::count_exps(&after, &|e| matches!(e, Exp::Iota { .. }));
        assert_eq!(iotas, 2, "{after}");
    }

    #[test]
    fn shares_arrays_without_consumption_but_never_asserts_or_copies() {
        let mut ns = NameSource::default();
        let t = arr(PrimType::I64, vec![i64c(4)]);
        let f = fun(
            &mut ns,
            "main",
            true,
            &[],
            &[("c", Type::Prim(PrimType::Bool))],
            vec![t.clone(), t.clone(), t.clone(), t.clone()],
            |b, ps| {
                let iota = || Exp::Iota {
                    n: i64c(4),
                    start: i64c(0),
                    stride: i64c(1),
                    it: IntType::I64,
                };
                let a = b.bind("a", t.clone(), iota());
                let c = b.bind("c", t.clone(), iota());
                b.assert(var(&ps[0]), "x");
                b.assert(var(&ps[0]), "x");
                let d = b.bind("d", t.clone(), Exp::Copy(a.clone()));
                let e = b.bind("e", t.clone(), Exp::Copy(a.clone()));
                vec![var(&a), var(&c), var(&d), var(&e)]
            },
        );
        let q = cse(program(ns, vec![f]));
        check_program(&q).unwrap();
        let e: Vec<&Exp> = q.funs[0].body.stms.iter().map(|s| &s.exp).collect();
        assert!(matches!(e[1], Exp::SubExp(_)));
        assert!(matches!(e[3], Exp::Assert { .. }));
        assert!(matches!(e[5], Exp::Copy(_)));
    }
}
