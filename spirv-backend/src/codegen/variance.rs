//! Which variables of a kernel's per-thread code may differ between its threads.
//!
//! A variable is *thread-variant* when its value may depend on the thread's point: the
//! thread indices themselves, or anything computed from them, or from an element of an array
//! that a thread-variant value indexes or chooses. Everything else (sizes, host scalars,
//! elements that inner loops and `map`s over host arrays take in step) is the same in every
//! thread that computes it. [`subgroup::aggregated`](super::subgroup::aggregated) is emitted
//! only for accumulator updates at thread-invariant indices, which is where a whole subgroup
//! updates one element; its run-time check stays, so a wrong guess here costs time, never a
//! wrong result. (An update at a data-dependent index, such as k-means' nearest centre,
//! gains nothing from the check and pays for it on lavapipe: 10-20 % of the kernel.)
//!
//! The analysis propagates forward through the statements: a `map`'s parameter is variant
//! where its array (or the width) is, a loop's parameters by fixpoint over the body, and any
//! other statement's results where anything it mentions is.

use crate::codegen::operator::free_vars_stm;
use std::collections::HashSet;
use vkad_core::ir::{Body, Exp, LoopForm, Soac, Stm, SubExp, VName};

/// The ids of the variables of `stms` (and of their nested bodies) that may differ between
/// threads, given the variant variables `seeds` (the thread indices, or a lambda's
/// parameters).
pub(crate) fn thread_variant<'a>(
    stms: &[Stm],
    seeds: impl IntoIterator<Item = &'a VName>,
) -> HashSet<u32> {
    let mut t: HashSet<u32> = seeds.into_iter().map(|v| v.id).collect();
    for s in stms {
        stm(s, &mut t);
    }
    t
}

fn variant(t: &HashSet<u32>, s: &SubExp) -> bool {
    matches!(s, SubExp::Var(v) if t.contains(&v.id))
}

fn body(b: &Body, t: &mut HashSet<u32>) {
    for s in &b.stms {
        stm(s, t);
    }
}

fn stm(s: &Stm, t: &mut HashSet<u32>) {
    let mark_all = |t: &mut HashSet<u32>| {
        for p in &s.pat.elems {
            t.insert(p.name.id);
        }
    };
    match &s.exp {
        Exp::Soac(Soac::Map { w, arrs, lam }) => {
            let wide = variant(t, w);
            for (p, a) in lam.params.iter().zip(arrs) {
                if wide || t.contains(&a.id) {
                    t.insert(p.name.id);
                }
            }
            body(&lam.body, t);
            for (p, r) in s.pat.elems.iter().zip(&lam.body.result) {
                if wide || variant(t, r) {
                    t.insert(p.name.id);
                }
            }
        }
        Exp::Loop {
            params,
            form,
            body: b,
        } => {
            // A trip count that differs between threads: iterations do not line up.
            let diverges = match form {
                LoopForm::For { i, bound, .. } => {
                    let v = variant(t, bound);
                    if v {
                        t.insert(i.id);
                    }
                    v
                }
                LoopForm::While(_) => false,
            };
            for (p, init) in params {
                if diverges || variant(t, init) {
                    t.insert(p.name.id);
                }
            }
            loop {
                let before = t.len();
                body(b, t);
                for ((p, _), r) in params.iter().zip(&b.result) {
                    if variant(t, r) {
                        t.insert(p.name.id);
                    }
                }
                if let LoopForm::While(c) = form {
                    if t.contains(&c.id) {
                        for (p, _) in params {
                            t.insert(p.name.id);
                        }
                    }
                }
                if t.len() == before {
                    break;
                }
            }
            for (e, (p, _)) in s.pat.elems.iter().zip(params) {
                if t.contains(&p.name.id) {
                    t.insert(e.name.id);
                }
            }
        }
        other => {
            let mut mentioned = Vec::new();
            free_vars_stm(s, &mut mentioned);
            let any = mentioned.iter().any(|v| t.contains(&v.id));
            // Nested bodies: their own statements propagate; the parameters of their lambdas
            // (operators, accumulator scopes) vary where the statement's inputs do.
            let mut lams = Vec::new();
            match other {
                Exp::If { then_b, else_b, .. } => {
                    body(then_b, t);
                    body(else_b, t);
                }
                Exp::Soac(Soac::Reduce { op, .. } | Soac::Scan { op, .. })
                | Exp::Soac(Soac::Hist { op, .. }) => lams.push(&op.lam),
                Exp::WithAcc { inputs, lam } => {
                    lams.extend(inputs.iter().filter_map(|i| i.op.as_ref().map(|o| &o.lam)));
                    lams.push(lam);
                }
                _ => {}
            }
            for l in lams {
                if any {
                    for p in &l.params {
                        t.insert(p.name.id);
                    }
                }
                body(&l.body, t);
            }
            let inner_variant = match other {
                Exp::If { then_b, else_b, .. } => then_b
                    .result
                    .iter()
                    .chain(&else_b.result)
                    .any(|r| variant(t, r)),
                _ => false,
            };
            if any || inner_variant {
                mark_all(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_from_the_thread_index_vary_and_the_rest_does_not() {
        // `i` stands for the thread index; `n` and `ys` for host values.
        let src = "entry main (i: i64) (n: i64) (ys: []f64) : (f64, i64, f64) =
                     let a = i + 1
                     let b = n * 2
                     let s = loop acc = 0f64 for j < n do acc + ys[j]
                     let r = loop acc = 0f64 for j < n do acc + f64.i64 (j + i)
                     let c = if b > 3 then a else b
                     in (s + r, c, ys[b])";
        let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let main = c.ir.entry("main").expect("main");
        let t = thread_variant(&main.body.stms, [&main.params[0].name]);
        // The statements as lowered: a, b, s, r, b > 3, c, s + r, ys[b].
        let varies: Vec<bool> = main
            .body
            .stms
            .iter()
            .map(|s| t.contains(&s.pat.elems[0].name.id))
            .collect();
        assert_eq!(
            varies,
            [true, false, false, true, false, true, true, false],
            "{}",
            vkad_core::ir::print::program_to_string(&c.ir)
        );
        // Inside the loops: `ys[j]` is the same in every thread, `j + i` is not.
        let Exp::Loop { body: s_body, .. } = &main.body.stms[2].exp else {
            panic!("s is a loop")
        };
        assert!(!t.contains(&s_body.stms[0].pat.elems[0].name.id));
        let Exp::Loop { body: r_body, .. } = &main.body.stms[3].exp else {
            panic!("r is a loop")
        };
        assert!(t.contains(&r_body.stms[0].pat.elems[0].name.id));
    }

    #[test]
    fn a_map_parameter_varies_where_its_array_does() {
        let src = "entry main [m] (i: i64) (ws: [m]f64) : [m]f64 =
                     let zs = map (\\w -> w * f64.i64 i) ws
                     in map2 (\\w z -> w + z) ws zs";
        let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let main = c.ir.entry("main").expect("main");
        let t = thread_variant(&main.body.stms, [&main.params[0].name]);
        let maps: Vec<&vkad_core::ir::Lambda> = main
            .body
            .stms
            .iter()
            .filter_map(|s| match &s.exp {
                Exp::Soac(Soac::Map { lam, .. }) => Some(lam),
                _ => None,
            })
            .collect();
        let printed = vkad_core::ir::print::program_to_string(&c.ir);
        let last = maps.last().unwrap_or_else(|| panic!("a map: {printed}"));
        let varies: Vec<bool> = last.params.iter().map(|p| t.contains(&p.name.id)).collect();
        assert_eq!(varies, [false, true], "{printed}");
    }
}
