//! Hoisting of invariant `iota`, `rearrange` and scalar statements out of `map` and `with_acc`
//! lambdas, and of invariant `iota`s out of loops.
//!
//! A statement of a lambda's body that is `iota n` (with `n` a constant `≥ 0` or a size of the
//! function's params, so it cannot fail), `rearrange` of an array, or a scalar operator or
//! comparison that cannot fail (not an integer division, remainder or power), and that uses
//! no name bound inside the lambda (its params or earlier statements), is moved before the
//! `map`/`with_acc`. All are cheap and pure, so this never changes what the program computes;
//! it turns per-iteration index arrays and transpositions into values bound once outside the
//! nest, which is the form [`super::acc_to_reduce`] needs (AD's return sweeps put `iota`s and
//! transpositions inside the maps they make), and it makes sizes computed from invariant
//! values (the `min w 1` of a `min`/`max` reduction's adjoint) known outside the nest, which
//! is what flattening needs to distribute the nest. Nested lambdas are processed first, so a
//! statement moves out of as many levels as it is invariant to.
//!
//! Out of a loop's body only an `iota` moves (of the same sizes, using nothing the loop binds)
//! whose array the body only reads ([`only_read`]): one array then serves every iteration. AD's
//! reverse loops make index arrays in every iteration (each a launch on a GPU: 470 of the RNN
//! benchmark's 1,689 launches per gradient before this).

use super::traverse::{nested_bodies, uses_in_exp, walk_body, walk_stm, Binders};
use crate::ir::*;
use std::collections::HashSet;

/// Hoists invariant `iota`/`rearrange` statements out of `map` and `with_acc` lambdas in every
/// function.
pub fn hoist(mut p: Program) -> Program {
    for f in &mut p.funs {
        // Sizes known to be non-negative: the function's size params and its params' dims.
        let mut sizes: HashSet<VName> = f.size_params.iter().cloned().collect();
        for prm in &f.params {
            for d in prm.ty.shape() {
                if let SubExp::Var(v) = d {
                    sizes.insert(v.clone());
                }
            }
        }
        hoist_body(&mut f.body, &sizes);
    }
    p
}

fn hoist_body(b: &mut Body, sizes: &HashSet<VName>) {
    let old = std::mem::take(&mut b.stms);
    let mut out = Vec::with_capacity(old.len());
    // The `iota`s moved here out of loops: an equal one later is bound to the first.
    let mut iotas: Vec<(Exp, VName)> = Vec::new();
    for mut s in old {
        for nb in nested_bodies(&mut s.exp) {
            hoist_body(nb, sizes);
        }
        let lam = match &mut s.exp {
            Exp::Soac(Soac::Map { lam, .. }) | Exp::WithAcc { lam, .. } => Some(lam),
            _ => None,
        };
        if let Some(lam) = lam {
            let mut bound: HashSet<VName> = lam.params.iter().map(|p| p.name.clone()).collect();
            let mut keep = Vec::with_capacity(lam.body.stms.len());
            for mut st in std::mem::take(&mut lam.body.stms) {
                if hoistable(&st, &bound, sizes) {
                    out.push(st);
                } else {
                    let mut bs = Binders::default();
                    walk_stm(&mut bs, &mut st);
                    bound.extend(bs.names);
                    keep.push(st);
                }
            }
            lam.body.stms = keep;
        }
        if let Exp::Loop { params, form, body } = &mut s.exp {
            // Every name the loop binds, at any depth (names are unique, so this is what an
            // invariant statement must not use).
            let mut bs = Binders::default();
            walk_body(&mut bs, body);
            let mut bound: HashSet<VName> = bs.names.into_iter().collect();
            bound.extend(params.iter().map(|(p, _)| p.name.clone()));
            if let LoopForm::For { i, .. } = form {
                bound.insert(i.clone());
            }
            let consumed = crate::passes::fusion::consumed_body(body);
            let stms = std::mem::take(&mut body.stms);
            let moves: Vec<bool> =
                stms.iter()
                    .enumerate()
                    .map(|(k, st)| {
                        matches!(st.exp, Exp::Iota { .. })
                            && hoistable(st, &bound, sizes)
                            && st.pat.elems.iter().all(|x| {
                                only_read(&x.name, &consumed, &stms[k + 1..], &body.result)
                            })
                    })
                    .collect();
            for (mut st, moved) in stms.into_iter().zip(moves) {
                if moved {
                    // Only read, as the first is: one array serves both.
                    match iotas.iter().find(|(e, _)| *e == st.exp) {
                        Some((_, first)) => st.exp = Exp::SubExp(SubExp::Var(first.clone())),
                        None => iotas.push((st.exp.clone(), st.pat.elems[0].name.clone())),
                    }
                    out.push(st);
                } else {
                    body.stms.push(st);
                }
            }
        }
        out.push(s);
    }
    b.stms = out;
}

/// Whether array `x`, bound in a loop's body (whose statements after it are `after`, then
/// `result`), is only read there, so that one array bound before the loop can serve every
/// iteration: nothing consumes it (`consumed`, through aliases), no iteration passes it on to
/// the next, and every statement that mentions it makes fresh arrays or scalars of it (a SOAC
/// reading it, a `with_acc` whose function does not return it, a scalar element).
fn only_read(x: &VName, consumed: &HashSet<VName>, after: &[Stm], result: &[SubExp]) -> bool {
    if consumed.contains(x) || result.iter().any(|r| r.as_var() == Some(x)) {
        return false;
    }
    after.iter().all(|st| {
        if !uses_in_exp(&st.exp).contains(x) {
            return true;
        }
        match &st.exp {
            Exp::Soac(_) => true,
            Exp::WithAcc { lam, .. } => !lam.body.result.iter().any(|r| r.as_var() == Some(x)),
            Exp::Index(_, idx) => {
                idx.iter().all(|d| matches!(d, DimIndex::Fix(_)))
                    && st.pat.elems.iter().all(|p| p.ty.rank() == 0)
            }
            _ => false,
        }
    })
}

/// An `iota` that cannot fail or a `rearrange`, using nothing in `bound`.
fn hoistable(st: &Stm, bound: &HashSet<VName>, sizes: &HashSet<VName>) -> bool {
    let ok_exp = match &st.exp {
        Exp::Iota { n, .. } => match n {
            SubExp::Const(c) => c.as_i128().is_some_and(|v| v >= 0),
            SubExp::Var(v) => sizes.contains(v),
        },
        Exp::Rearrange(..) => true,
        Exp::BinOp(op, ..) => !can_fail(*op),
        Exp::CmpOp(..) => true,
        _ => false,
    };
    if !ok_exp {
        return false;
    }
    let mut uses = uses_in_exp(&st.exp);
    for p in &st.pat.elems {
        for d in p.ty.shape() {
            if let SubExp::Var(v) = d {
                uses.insert(v.clone());
            }
        }
    }
    uses.iter().all(|u| !bound.contains(u))
}

/// Whether `op` can fail at run time: integer division and remainder (by zero) and integer
/// powers (negative exponents). Every other operator is total (integers wrap).
fn can_fail(op: BinOp) -> bool {
    use crate::prim::PrimType;
    match op {
        BinOp::Div(t) | BinOp::Mod(t) | BinOp::Pow(t) => !matches!(t, PrimType::Float(_)),
        BinOp::Quot(_) | BinOp::Rem(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lowered and simplified, not hoisted.
    fn compile(src: &str) -> Program {
        let c = crate::check("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let lowered = crate::lower::lower_program(&c.ast, &c.sources);
        crate::passes::simplify(lowered.program)
    }

    /// The number of `iota`/`rearrange` statements directly in the entry's body.
    fn top_level(p: &Program, what: &str) -> usize {
        let f = p.entry("main").expect("main");
        f.body
            .stms
            .iter()
            .filter(|s| {
                matches!(
                    (&s.exp, what),
                    (Exp::Iota { .. }, "iota") | (Exp::Rearrange(..), "rearrange")
                )
            })
            .count()
    }

    #[test]
    fn invariant_iota_and_rearrange_leave_the_nest() {
        let src = "entry main [n][m] (xss: [n][m]f64) (b: [m][n]f64) = map (\\xs -> map (\\ys -> reduce (+) 0 (map2 (*) xs ys)) (transpose b) |> map2 (\\j x -> x + f64.i64 j) (iota n)) xss";
        let before = compile(src);
        let after = crate::passes::simplify(hoist(before.clone()));
        crate::ir::check::check_program(&after).expect("valid IR");
        assert_eq!(top_level(&before, "rearrange"), 0);
        assert_eq!(top_level(&after, "rearrange"), 1);
        assert!(top_level(&after, "iota") >= top_level(&before, "iota"));
        let args = || {
            crate::values::parse_values(
                "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]]"
                    .as_bytes(),
            )
            .expect("values")
        };
        let r0 = crate::interp::run_entry(&before, "main", args()).expect("run");
        let r1 = crate::interp::run_entry(&after, "main", args()).expect("run");
        assert_eq!(r0, r1);
    }

    /// `iota` statements anywhere inside the loops of the entry's body.
    fn in_loops(p: &Program) -> usize {
        fn count(b: &Body, in_loop: bool) -> usize {
            b.stms
                .iter()
                .map(|s| {
                    let here = usize::from(in_loop && matches!(s.exp, Exp::Iota { .. }));
                    let inner = matches!(s.exp, Exp::Loop { .. });
                    here + crate::passes::traverse::nested_bodies_ref(&s.exp)
                        .into_iter()
                        .map(|nb| count(nb, in_loop || inner))
                        .sum::<usize>()
                })
                .sum()
        }
        count(&p.entry("main").expect("main").body, false)
    }

    #[test]
    fn an_iota_only_read_in_a_loop_leaves_it_and_one_consumed_or_carried_stays() {
        let run = |p: &Program, args: &str| {
            crate::interp::run_entry(
                p,
                "main",
                crate::values::parse_values(args.as_bytes()).expect("values"),
            )
            .expect("run")
        };
        let args = "[1i64, 2i64, 3i64] 4i64";
        // Read: one array serves every iteration.
        let src = "entry main [n] (xs: [n]i64) (k: i64) =
          loop acc = xs for i < k do map2 (\\a j -> a + j * i) acc (iota n)";
        let before = compile(src);
        let after = crate::passes::simplify(hoist(before.clone()));
        crate::ir::check::check_program(&after).expect("valid IR");
        assert_eq!(in_loops(&before), 1);
        assert_eq!(in_loops(&after), 0);
        assert_eq!(run(&before, args), run(&after, args));
        // Updated in place in each iteration, or carried to the next: it stays.
        for src in [
            "entry main [n] (xs: [n]i64) (k: i64) =
               loop acc = xs for i < k do map2 (+) acc (iota n with [0] = i)",
            "entry main [n] (xs: [n]i64) (k: i64) =
               (loop (acc, js) = (xs, xs) for i < k do (map2 (+) acc (js with [0] = i), iota n)).0",
        ] {
            let before = compile(src);
            let after = crate::passes::simplify(hoist(before.clone()));
            crate::ir::check::check_program(&after).expect("valid IR");
            assert_eq!(in_loops(&before), 1, "{src}");
            assert_eq!(in_loops(&after), 1, "{src}");
            assert_eq!(run(&before, args), run(&after, args));
        }
    }

    #[test]
    fn variant_and_unsafe_statements_stay() {
        // The iota's size is computed in the lambda (variant); `iota k` with a free `k` that is
        // not a size of the params could fail, so it stays inside (the map may not run).
        let src = "entry main [n] (xs: [n]i64) (k: i64) = map (\\x -> (i64.sum (iota x), i64.sum (iota k))) xs";
        let p = hoist(compile(src));
        assert_eq!(top_level(&p, "iota"), 0);
        let out = crate::interp::run_entry(
            &p,
            "main",
            crate::values::parse_values("empty([0]i64) -1i64".as_bytes()).expect("values"),
        )
        .expect("no iota of a negative size runs");
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn total_scalar_operators_leave_the_nest_and_divisions_stay() {
        let src =
            "entry main [n] (xs: [n]i64) (k: i64) (d: i64) = map (\\x -> x + k * 3 + k / d) xs";
        let count = |p: &Program, div: bool| {
            p.entry("main")
                .expect("main")
                .body
                .stms
                .iter()
                .filter(|s| match &s.exp {
                    Exp::BinOp(BinOp::Mul(_), ..) => !div,
                    Exp::BinOp(BinOp::Div(_), ..) => div,
                    _ => false,
                })
                .count()
        };
        let p = hoist(compile(src));
        crate::ir::check::check_program(&p).expect("valid IR");
        assert_eq!(count(&p, false), 1, "k * 3 is bound once, before the map");
        assert_eq!(count(&p, true), 0, "k / d could fail: it stays in the map");
        // The map runs no iteration: no division by zero.
        let out = crate::interp::run_entry(
            &p,
            "main",
            crate::values::parse_values("empty([0]i64) 1i64 0i64".as_bytes()).expect("values"),
        );
        assert!(out.is_ok(), "{out:?}");
    }
}
