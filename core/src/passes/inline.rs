//! Inlining: every `Apply` of a function defined in the program (entry points included, except a
//! function calling itself) is replaced by the callee's body, with all of the callee's variables
//! renamed fresh from [`Program::name_source`]. The callee's size parameters and parameters are
//! bound to the arguments by copies (`let n = arg`), and the call's pattern to the callee's results,
//! so [`copy_prop`](super::copy_prop) cleans up after. The call's attributes are added to the
//! inlined statements; inlined statements without a location get the call's.
//!
//! Calls in inlined bodies are inlined in turn (up to [`MAX_DEPTH`] levels, which only recursive
//! programs reach; Futhark has no recursion). Afterwards, non-entry functions no longer called are
//! removed.

use super::traverse::{map_bodies_in, mk_stm, walk_body, walk_param, Binders, Rename};
use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// How many rounds of inlining are done at most.
pub const MAX_DEPTH: usize = 64;

/// Inlines all calls and removes the functions that are then unused.
pub fn inline(mut p: Program) -> Program {
    let mut ns = std::mem::take(&mut p.name_source);
    for _ in 0..MAX_DEPTH {
        let snapshot: HashMap<std::sync::Arc<str>, FunDef> =
            p.funs.iter().map(|f| (f.name.clone(), f.clone())).collect();
        let mut changed = false;
        for f in &mut p.funs {
            let me = f.name.clone();
            map_bodies_in(&mut f.body, &mut |b: &mut Body| {
                let mut out = Vec::with_capacity(b.stms.len());
                for s in std::mem::take(&mut b.stms) {
                    match &s.exp {
                        Exp::Apply { fun, args, .. } if *fun != me => match snapshot.get(fun) {
                            Some(callee)
                                if args.len() == callee.size_params.len() + callee.params.len() =>
                            {
                                expand(&s, callee, &mut ns, &mut out);
                                changed = true;
                            }
                            _ => out.push(s),
                        },
                        _ => out.push(s),
                    }
                }
                b.stms = out;
            });
        }
        if !changed {
            break;
        }
    }
    p.name_source = ns;
    remove_unused(p)
}

fn expand(call: &Stm, callee: &FunDef, ns: &mut NameSource, out: &mut Vec<Stm>) {
    let Exp::Apply { args, .. } = &call.exp else {
        return;
    };
    let mut f = callee.clone();
    // Rename every binder of the callee.
    let mut bs = Binders::default();
    for p in &mut f.params {
        walk_param(&mut bs, p);
    }
    walk_body(&mut bs, &mut f.body);
    let mut map: HashMap<VName, VName> = HashMap::new();
    for v in f.size_params.iter().chain(bs.names.iter()) {
        map.insert(v.clone(), ns.fresh_like(v));
    }
    let mut rn = Rename { map: &map };
    for sp in &mut f.size_params {
        if let Some(n) = map.get(sp) {
            *sp = n.clone();
        }
    }
    for p in &mut f.params {
        walk_param(&mut rn, p);
    }
    walk_body(&mut rn, &mut f.body);

    let nsz = f.size_params.len();
    let with_call_info = |mut s: Stm| {
        for a in &call.attrs.0 {
            if !s.attrs.0.contains(a) {
                s.attrs.0.push(a.clone());
            }
        }
        if s.loc.is_none() {
            s.loc = call.loc.clone();
        }
        s
    };
    for (sp, a) in f.size_params.iter().zip(args) {
        out.push(with_call_info(mk_stm(
            vec![Param {
                name: sp.clone(),
                ty: Type::Prim(crate::prim::PrimType::I64),
            }],
            Exp::SubExp(a.clone()),
        )));
    }
    for (p, a) in f.params.iter().zip(&args[nsz..]) {
        out.push(with_call_info(mk_stm(
            vec![p.clone()],
            Exp::SubExp(a.clone()),
        )));
    }
    out.extend(f.body.stms.into_iter().map(with_call_info));
    for (pe, r) in call.pat.elems.iter().zip(f.body.result) {
        out.push(with_call_info(mk_stm(vec![pe.clone()], Exp::SubExp(r))));
    }
}

/// Removes non-entry functions that are not called from an entry point (directly or indirectly).
pub fn remove_unused(p: Program) -> Program {
    let roots: Vec<std::sync::Arc<str>> = p.entries().map(|f| f.name.clone()).collect();
    retain_reachable(p, &roots)
}

/// The program with only entry point `entry` and the functions it calls, directly or not (the
/// other entry points and what only they call are removed); `None` when there is no such
/// entry. What runs one entry once (`vkad run`, a test) prepares only this.
pub fn only_entry(p: &Program, entry: &str) -> Option<Program> {
    let root = p.entry(entry)?.name.clone();
    Some(retain_reachable(p.clone(), &[root]))
}

/// Keeps the functions `roots` call, directly or not, and `roots` themselves.
fn retain_reachable(mut p: Program, roots: &[std::sync::Arc<str>]) -> Program {
    let mut calls: HashMap<std::sync::Arc<str>, HashSet<std::sync::Arc<str>>> = HashMap::new();
    for f in &mut p.funs {
        let mut cs = HashSet::new();
        map_bodies_in(&mut f.body, &mut |b: &mut Body| {
            for s in &b.stms {
                if let Exp::Apply { fun, .. } = &s.exp {
                    cs.insert(fun.clone());
                }
            }
        });
        calls.insert(f.name.clone(), cs);
    }
    let mut live: HashSet<std::sync::Arc<str>> = roots.iter().cloned().collect();
    let mut work: Vec<std::sync::Arc<str>> = live.iter().cloned().collect();
    while let Some(f) = work.pop() {
        for g in calls.get(&f).into_iter().flatten() {
            if live.insert(g.clone()) {
                work.push(g.clone());
            }
        }
    }
    p.funs.retain(|f| live.contains(&f.name));
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::*;
    use crate::ir::check::check_program;
    use crate::prim::PrimType;

    /// `sq x = x*x`, `quad x = sq (sq x)`, `main x = quad x + sq x`, and an unused `dead`.
    fn prog() -> Program {
        let mut ns = NameSource::default();
        let sq = fun(
            &mut ns,
            "sq",
            false,
            &[],
            &[("x", f32t())],
            vec![f32t()],
            |b, ps| {
                let r = b.binop(BinOp::Mul(PrimType::F32), var(&ps[0]), var(&ps[0]));
                vec![var(&r)]
            },
        );
        let call = |b: &mut Builder, f: &str, x: SubExp| {
            b.bind(
                "c",
                f32t(),
                Exp::Apply {
                    fun: f.into(),
                    args: vec![x],
                    ret: vec![f32t().to_ext()],
                },
            )
        };
        let quad = fun(
            &mut ns,
            "quad",
            false,
            &[],
            &[("x", f32t())],
            vec![f32t()],
            |b, ps| {
                let a = call(b, "sq", var(&ps[0]));
                let r = call(b, "sq", var(&a));
                vec![var(&r)]
            },
        );
        let dead = fun(&mut ns, "dead", false, &[], &[], vec![f32t()], |_, _| {
            vec![f32c(0.0)]
        });
        let main = fun(
            &mut ns,
            "main",
            true,
            &[],
            &[("x", f32t())],
            vec![f32t()],
            |b, ps| {
                let a = call(b, "quad", var(&ps[0]));
                b.attr("unsafe");
                let c = call(b, "sq", var(&ps[0]));
                let r = b.binop(BinOp::Add(PrimType::F32), var(&a), var(&c));
                vec![var(&r)]
            },
        );
        let p = program(ns, vec![sq, quad, dead, main]);
        check_program(&p).unwrap();
        p
    }

    #[test]
    fn inlines_everything_and_drops_unused_functions() {
        let q = inline(prog());
        check_program(&q).unwrap();
        assert_eq!(q.funs.len(), 1);
        assert_eq!(&*q.funs[0].name, "main");
        let text = q.to_string();
        assert!(!text.contains("apply"), "{text}");
        assert_eq!(text.matches("f32.mul").count(), 3, "{text}");
        // The call's attribute reaches the inlined statements.
        assert!(text.contains("#[unsafe] let x_"), "{text}");
    }

    #[test]
    fn only_entry_keeps_one_entry_and_what_it_calls() {
        let mut p = prog();
        let mut ns = std::mem::take(&mut p.name_source);
        let other = fun(&mut ns, "other", true, &[], &[], vec![f32t()], |b, _| {
            let r = b.bind(
                "d",
                f32t(),
                Exp::Apply {
                    fun: "dead".into(),
                    args: vec![],
                    ret: vec![f32t().to_ext()],
                },
            );
            vec![var(&r)]
        });
        p.funs.push(other);
        p.name_source = ns;
        check_program(&p).unwrap();
        let names = |q: &Program| {
            let mut v: Vec<String> = q.funs.iter().map(|f| f.name.to_string()).collect();
            v.sort();
            v
        };
        let main = only_entry(&p, "main").unwrap();
        check_program(&main).unwrap();
        assert_eq!(names(&main), ["main", "quad", "sq"]);
        let other = only_entry(&p, "other").unwrap();
        check_program(&other).unwrap();
        assert_eq!(names(&other), ["dead", "other"]);
        assert!(only_entry(&p, "sq").is_none(), "not an entry point");
        assert!(only_entry(&p, "nothing").is_none());
    }

    #[test]
    fn renames_inlined_variables_fresh() {
        let p = prog();
        let next = p.name_source.next;
        let q = inline(p);
        assert!(q.name_source.next > next);
        // Unique ids everywhere is what check_program verifies.
        check_program(&q).unwrap();
    }

    #[test]
    fn keeps_entries_and_functions_still_called() {
        let mut ns = NameSource::default();
        // A self-recursive function is not inlined into itself, so it stays.
        let rec = fun(
            &mut ns,
            "rec",
            false,
            &[],
            &[("x", f32t())],
            vec![f32t()],
            |b, ps| {
                let r = b.bind(
                    "r",
                    f32t(),
                    Exp::Apply {
                        fun: "rec".into(),
                        args: vec![var(&ps[0])],
                        ret: vec![f32t().to_ext()],
                    },
                );
                vec![var(&r)]
            },
        );
        let other = fun(&mut ns, "other", true, &[], &[], vec![f32t()], |_, _| {
            vec![f32c(1.0)]
        });
        let p = program(ns, vec![rec, other]);
        let q = inline(p);
        check_program(&q).unwrap();
        assert_eq!(q.funs.len(), 1);
        assert_eq!(&*q.funs[0].name, "other");
    }
}
