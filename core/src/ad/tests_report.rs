//! Tests of the AD report: `before` is a compiled program with an entry `f`, `after` the same
//! program with `f` replaced by its vjp (simplified), as the pipeline does.

use super::{ad_report, AdReport, Checkpoint, ScopeKind, ScopeReport};
use crate::ir::*;

fn before_after(src: &str) -> (Program, Program) {
    let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let before = c.ir.clone();
    let mut prog = c.ir.clone();
    let pos = prog
        .funs
        .iter()
        .position(|f| f.entry.as_ref().is_some_and(|e| &*e.name == "f"))
        .expect("entry f");
    let f = prog.funs[pos].clone();
    let ret: Vec<Type> = f
        .ret
        .iter()
        .map(|t| crate::ad::rev::ext_to_type(t, &[]).expect("closed result type"))
        .collect();
    let lam = Lambda {
        params: f.params.clone(),
        body: f.body.clone(),
        ret,
    };
    let env = crate::ad::rev::size_types(&f.size_params);
    let g = crate::ad::rev::vjp_lambda_in(&lam, &mut prog.name_source, &env).expect("vjp");
    prog.funs[pos] = FunDef {
        entry: Some(EntryPoint {
            name: "f".into(),
            param_counts: vec![1; g.params.len()],
            result_counts: vec![1; g.ret.len()],
        }),
        params: g.params,
        ret: g.ret.iter().map(|t| t.to_ext()).collect(),
        body: g.body,
        ..f
    };
    crate::ir::check::check_program(&prog).expect("IR check");
    (before, crate::passes::simplify(prog))
}

fn fun<'a>(r: &'a AdReport, name: &str) -> &'a ScopeReport {
    r.funs
        .iter()
        .find(|s| s.kind == ScopeKind::Function(name.into()))
        .expect("function in the report")
}

#[test]
fn map_lambda_is_re_executed_once() {
    let (b, a) =
        before_after("entry f [n] (x: [n]f64) = map (\\i -> f64.sin x[i] * x[i]) (iota n)");
    let r = ad_report(&b, &a);
    let f = fun(&r, "f");
    assert_eq!(f.runs, Some(1), "{r}");
    let m = &f.children[0];
    assert_eq!(m.kind, ScopeKind::Map, "{r}");
    assert!(m.located_stms > 0, "{r}");
    // The primal map and the re-execution in the return sweep.
    assert_eq!(m.runs, Some(2), "{r}");
    // Without AD, every scope runs once.
    let r1 = ad_report(&b, &b);
    assert_eq!(fun(&r1, "f").children[0].runs, Some(1), "{r1}");
    let text = r.to_string();
    assert!(
        text.starts_with("function f: forward sweep runs 1×"),
        "{text}"
    );
    assert!(
        text.contains("\n  map at test.fut:1:") && text.contains(": forward sweep runs 2×"),
        "{text}"
    );
}

#[test]
fn scopes_keep_the_locations_of_their_own_statements() {
    let (b, a) = before_after(
        "entry f [n] (x: [n]f64) =\n  let y = map (\\v ->\n    f64.sin v * v) x\n  in reduce (+) 0 y",
    );
    let r = ad_report(&b, &a);
    let f = fun(&r, "f");
    let m = &f.children[0];
    assert_eq!(m.kind, ScopeKind::Map, "{r}");
    assert_eq!(
        m.stm_locs.len(),
        m.stm_locs
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len()
    );
    // The lambda's statements are on line 3; the function's own (the map, the reduce) are not.
    assert!(
        !m.stm_locs.is_empty() && m.stm_locs.iter().all(|l| l.line == 3),
        "{:?}",
        m.stm_locs
    );
    assert!(!f.stm_locs.is_empty(), "{r}");
    assert!(f.stm_locs.iter().all(|l| l.line != 3), "{:?}", f.stm_locs);
    assert!(f.stm_locs.iter().any(|l| l.line == 2), "{:?}", f.stm_locs);
}

#[test]
fn if_branches_and_nested_maps_are_scopes() {
    let (b, a) = before_after(
        "entry f [n][m] (xss: [n][m]f64) (y: f64) = map (\\xs -> map (\\x -> if x > 0 then x * y else f64.sin x) xs) xss",
    );
    let r = ad_report(&b, &a);
    let f = fun(&r, "f");
    let outer = &f.children[0];
    assert_eq!(outer.kind, ScopeKind::Map, "{r}");
    let inner = outer
        .children
        .iter()
        .find(|c| c.kind == ScopeKind::Map)
        .expect("inner map");
    let kinds: Vec<&ScopeKind> = inner.children.iter().map(|c| &c.kind).collect();
    assert_eq!(kinds, vec![&ScopeKind::Then, &ScopeKind::Else], "{r}");
    for c in &inner.children {
        let n = c.runs.expect("located statements in the branches");
        assert!((1..=3).contains(&n), "{r}");
    }
}

#[test]
fn loop_checkpoints_as_a_formula_of_the_sizes() {
    // `after` stands for the forward sweep of reverse-mode loops: the loop gains a parameter
    // `<param>_saved` of one row per iteration (ad::rev::loops).
    let src = "entry f [n][m] (xs: [m]f64) (k: i64) = loop ys = copy xs for i < n do map (\\y -> y * 2) ys";
    let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let before = c.ir.clone();
    let mut after = c.ir.clone();
    let mut ns = after.name_source.clone();
    let f = after
        .funs
        .iter_mut()
        .find(|f| f.entry.as_ref().is_some_and(|e| &*e.name == "f"))
        .expect("entry f");
    let sizes = f.size_params.clone();
    let mut found = false;
    for s in &mut f.body.stms {
        if let Exp::Loop { params, .. } = &mut s.exp {
            let ty = params[0].0.ty.array_of(SubExp::Var(sizes[0].clone()));
            params.push((
                Param {
                    name: ns.fresh("ys_saved"),
                    ty,
                },
                SubExp::i64(0),
            ));
            found = true;
        }
    }
    assert!(found, "a loop in f");
    let r = ad_report(&before, &after);
    let l = fun(&r, "f")
        .children
        .iter()
        .find(|c| c.kind == ScopeKind::Loop)
        .expect("loop scope");
    let want = format!("{}*{}", sizes[0], sizes[1]);
    assert_eq!(l.checkpoint_elements(), Some(want.clone()), "{r}");
    assert!(matches!(
        l.checkpoints.as_slice(),
        [Checkpoint { shape, .. }] if shape.len() == 2
    ));
    assert!(
        r.to_string()
            .contains(&format!("checkpoints: {want} elements")),
        "{r}"
    );
    // Before AD: no checkpoints.
    let r0 = ad_report(&before, &before);
    let l0 = fun(&r0, "f")
        .children
        .iter()
        .find(|c| c.kind == ScopeKind::Loop)
        .expect("loop scope");
    assert_eq!(l0.checkpoint_elements(), None);
}

#[test]
fn products_multiply_constants() {
    let n = VName {
        id: 3,
        base: "n".into(),
    };
    assert_eq!(
        super::product(&[SubExp::i64(4), SubExp::Var(n.clone()), SubExp::i64(2)]),
        "8*n_3"
    );
    assert_eq!(super::product(&[SubExp::i64(4), SubExp::i64(2)]), "8");
    assert_eq!(super::product(&[SubExp::Var(n)]), "n_3");
}

#[test]
fn inverted_parameters_are_listed() {
    // ad-rules.md §7 (paper 004): the address `j` is recovered by inversion; only the array
    // is checkpointed.
    let (b, a) = before_after(
        "entry f (a: [8]f64) = let (_, a) = loop (j, a) = (1i64, copy a) while j < 6 do let k = j + 1 let j = k + 2 in (j, a with [j] = a[k] * a[j]) in a[4] + a[7]",
    );
    let r = ad_report(&b, &a);
    let l = fun(&r, "f")
        .children
        .iter()
        .find(|c| c.kind == ScopeKind::Loop)
        .expect("loop scope");
    assert_eq!(l.inverted.len(), 1, "{r}");
    assert_eq!(l.checkpoints.len(), 1, "{r}");
    assert!(r.to_string().contains("recovered by inversion: "), "{r}");
}
