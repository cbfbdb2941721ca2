//! Fusion of producers into accumulator-updating `map`s.
//!
//! Reverse-mode AD of a map nest computes each adjoint contribution with one `map` and then adds
//! it into an accumulator with another `map` over `iota` whose lambda does the `upd_acc`:
//!
//! ```text
//! let d = map(w, {xs, ys}, \x y -> x * y)
//! let c' = map(w, {iota w, d, c}, \j dj acc -> upd_acc(acc, [j], {dj}))
//! ```
//!
//! The accumulator-to-reduction rewrite ([`super::acc_to_reduce`]) needs the value computed in
//! the updating map itself. This pass moves the producer's computation into the consumer: an
//! input of a `map` that takes an accumulator is replaced by
//! - the producer's inputs and a fresh copy of its lambda's body, when it is the result of a
//!   pure `map` (no accumulators) of the same width bound earlier in the same body;
//! - the replicated value, when it is `replicate [w] v`;
//! - the original array, when it is an alias `let a = b`.
//!
//! The producer itself stays (dead code elimination removes it when nothing else uses it), so
//! the values computed are the same; a producer used elsewhere too is computed twice. A
//! producer whose inputs are consumed (updated in place) between it and the consumer is left
//! alone. The consumer's lambda is then processed again, so fusion continues into the nests it
//! now contains.

use super::traverse::{nested_bodies, uses_in_exp, walk_lambda, Visitor};
use crate::ir::*;
use std::collections::HashMap;

/// Fuses producers into accumulator-updating maps in every function.
pub fn fuse_acc(mut p: Program) -> Program {
    let mut ns = std::mem::take(&mut p.name_source);
    for f in &mut p.funs {
        fuse_body(&mut ns, &mut f.body);
    }
    p.name_source = ns;
    p
}

fn fuse_body(ns: &mut NameSource, b: &mut Body) {
    for i in 0..b.stms.len() {
        let (before, rest) = b.stms.split_at_mut(i);
        let s = &mut rest[0];
        while fuse_one(ns, before, s) {}
        for nb in nested_bodies(&mut s.exp) {
            fuse_body(ns, nb);
        }
    }
}

/// Does the lambda take an accumulator?
fn updates_acc(lam: &Lambda) -> bool {
    lam.params.iter().any(|p| matches!(p.ty, Type::Acc { .. }))
}

/// Does the expression mention an accumulator anywhere (param, update, `with_acc`)?
pub(crate) fn has_acc(e: &Exp) -> bool {
    fn body(b: &Body) -> bool {
        b.stms.iter().any(|s| {
            s.pat.elems.iter().any(|p| matches!(p.ty, Type::Acc { .. })) || has_acc(&s.exp)
        })
    }
    match e {
        Exp::UpdAcc { .. } | Exp::WithAcc { .. } => true,
        Exp::Soac(Soac::Map { lam, .. }) => updates_acc(lam) || body(&lam.body),
        Exp::If { then_b, else_b, .. } => body(then_b) || body(else_b),
        Exp::Loop {
            params, body: lb, ..
        } => params.iter().any(|(p, _)| matches!(p.ty, Type::Acc { .. })) || body(lb),
        Exp::Soac(Soac::Reduce { op, .. })
        | Exp::Soac(Soac::Scan { op, .. })
        | Exp::Soac(Soac::Hist { op, .. }) => body(&op.lam.body),
        _ => false,
    }
}

/// The arrays an expression consumes (updates in place).
fn consumed(e: &Exp) -> Vec<VName> {
    match e {
        Exp::Update(a, ..) => vec![a.clone()],
        Exp::Soac(Soac::Hist { dest, .. }) | Exp::Soac(Soac::Scatter { dest, .. }) => dest.clone(),
        Exp::WithAcc { inputs, .. } => inputs.iter().flat_map(|i| i.arrs.clone()).collect(),
        _ => vec![],
    }
}

/// Fuses one producer into `s` if it is an accumulator-updating map; whether it did.
fn fuse_one(ns: &mut NameSource, before: &[Stm], s: &mut Stm) -> bool {
    let Exp::Soac(Soac::Map { w, arrs, lam }) = &mut s.exp else {
        return false;
    };
    if !updates_acc(lam) || lam.params.len() != arrs.len() {
        return false;
    }
    for q in 0..arrs.len() {
        if matches!(lam.params[q].ty, Type::Acc { .. }) {
            continue;
        }
        let Some(pi) = before
            .iter()
            .rposition(|t| t.pat.elems.iter().any(|p| p.name == arrs[q]))
        else {
            continue;
        };
        let prod = &before[pi];
        let r = prod
            .pat
            .elems
            .iter()
            .position(|p| p.name == arrs[q])
            .unwrap_or(0);
        match &prod.exp {
            // An alias (e.g. a param bound by an earlier fusion): use the original.
            Exp::SubExp(SubExp::Var(v)) if prod.pat.elems.len() == 1 => {
                arrs[q] = v.clone();
                return true;
            }
            Exp::Replicate { shape, value } if shape.len() == 1 && &shape[0] == w => {
                let p = lam.params.remove(q);
                arrs.remove(q);
                lam.body.stms.insert(
                    0,
                    super::traverse::mk_stm(vec![p], Exp::SubExp(value.clone())),
                );
                return true;
            }
            Exp::Soac(Soac::Map {
                w: pw,
                arrs: parrs,
                lam: plam,
            }) if pw == w && !has_acc(&prod.exp) && plam.params.len() == parrs.len() => {
                // Nothing the producer reads may be consumed before the consumer.
                let reads = uses_in_exp(&prod.exp);
                if before[pi + 1..]
                    .iter()
                    .any(|t| consumed(&t.exp).iter().any(|c| reads.contains(c)))
                {
                    continue;
                }
                let mut pl = plam.clone();
                walk_lambda(
                    &mut Fresh {
                        ns,
                        ren: HashMap::new(),
                    },
                    &mut pl,
                );
                let Some(res) = pl.body.result.get(r).cloned() else {
                    continue;
                };
                let p = lam.params.remove(q);
                arrs.remove(q);
                for (k, (pp, pa)) in pl.params.iter().zip(parrs).enumerate() {
                    lam.params.insert(q + k, pp.clone());
                    arrs.insert(q + k, pa.clone());
                }
                let mut stms = pl.body.stms;
                stms.push(super::traverse::mk_stm(vec![p], Exp::SubExp(res)));
                stms.append(&mut lam.body.stms);
                lam.body.stms = stms;
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Gives every bound name a fresh one and renames its uses.
struct Fresh<'a> {
    ns: &'a mut NameSource,
    ren: HashMap<VName, VName>,
}

impl Visitor for Fresh<'_> {
    fn use_name(&mut self, v: &mut VName) {
        if let Some(r) = self.ren.get(v) {
            *v = r.clone();
        }
    }
    fn bind_name(&mut self, v: &mut VName) {
        let n = self.ns.fresh_like(v);
        self.ren.insert(v.clone(), n.clone());
        *v = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vjp of the entry `main`, differentiated and simplified, before any accumulator pass.
    fn differentiated(src: &str) -> Program {
        let c = crate::check("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let lowered = crate::lower::lower_program(&c.ast, &c.sources);
        let p = crate::passes::simplify(crate::passes::hoist::hoist(crate::passes::simplify(
            lowered.program,
        )));
        let (p, failures) = crate::ad::transform::transform_partial(p);
        assert!(failures.is_empty());
        crate::passes::simplify(p)
    }

    /// Inputs of accumulator-updating maps that are results of maps or replicates in the same
    /// body.
    fn unfused(b: &Body) -> usize {
        let mut n = 0;
        for (i, s) in b.stms.iter().enumerate() {
            if let Exp::Soac(Soac::Map { arrs, lam, .. }) = &s.exp {
                if updates_acc(lam) {
                    n += arrs
                        .iter()
                        .filter(|a| {
                            b.stms[..i].iter().any(|t| {
                                t.pat.elems.iter().any(|p| &p.name == *a)
                                    && matches!(
                                        t.exp,
                                        Exp::Soac(Soac::Map { .. }) | Exp::Replicate { .. }
                                    )
                            })
                        })
                        .count();
                }
            }
            let mut e = s.exp.clone();
            for nb in nested_bodies(&mut e) {
                n += unfused(nb);
            }
        }
        n
    }

    const MATMUL: &str = "def matmul [n][m][p] (a: [n][m]f64) (b: [m][p]f64) : [n][p]f64 =
  map (\\xs -> map (\\ys -> reduce (+) 0 (map2 (*) xs ys)) (transpose b)) a
entry main [n][m][p] (a: [n][m]f64) (b: [m][p]f64) (c: [n][p]f64) =
  vjp (\\(a, b) -> matmul a b) (a, b) c";

    #[test]
    fn values_move_into_the_updating_maps() {
        let p = differentiated(MATMUL);
        let before = unfused(&p.entry("main").expect("main").body);
        assert!(before > 0, "{}", crate::ir::print::program_to_string(&p));
        let q = crate::passes::simplify(fuse_acc(p.clone()));
        crate::ir::check::check_program(&q).expect("valid IR");
        assert_eq!(unfused(&q.entry("main").expect("main").body), 0);
        let args = || {
            crate::values::parse_values(
                "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [[1.0], [-1.0], [2.0]] [[1.0], [2.0]]"
                    .as_bytes(),
            )
            .expect("values")
        };
        let r0 = crate::interp::run_entry(&p, "main", args()).expect("run");
        let r1 = crate::interp::run_entry(&q, "main", args()).expect("run");
        assert_eq!(r0, r1);
    }

    #[test]
    fn a_gather_adjoint_keeps_its_values() {
        let src = "entry main [n] (xs: [n]f64) (ys: [n]f64) (c: [n]f64) =
  vjp (\\xs -> map (\\i -> xs[i] * 2) (iota n)) xs c";
        let p = differentiated(src);
        let q = crate::passes::simplify(fuse_acc(p.clone()));
        crate::ir::check::check_program(&q).expect("valid IR");
        let args = || {
            crate::values::parse_values("[1.0, 2.0] [3.0, 4.0] [1.0, -1.0]".as_bytes())
                .expect("values")
        };
        assert_eq!(
            crate::interp::run_entry(&p, "main", args()).expect("run"),
            crate::interp::run_entry(&q, "main", args()).expect("run")
        );
    }
}
