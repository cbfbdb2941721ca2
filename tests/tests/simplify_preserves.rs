//! Differential property test: random well-typed programs give the same results on the
//! interpreter before and after simplification (inline, copy propagation, constant folding, CSE,
//! DCE), and their IR passes the checker at both points.
//!
//! Programs are integer-only (exact comparison; wrapping arithmetic) and avoid operations that can
//! fail, since DCE may legitimately remove an unused failing operation.

use proptest::prelude::*;
use vkad_core::prim::PrimValue;
use vkad_core::value::{ArrayValue, Buffer, Value};

/// An i32 expression over the variables in `vars`, at most `depth` deep.
fn expr(vars: Vec<String>, depth: u32) -> BoxedStrategy<String> {
    let leaf = {
        let vars = vars.clone();
        prop_oneof![
            (0..vars.len()).prop_map(move |i| vars[i].clone()),
            (-20i32..20).prop_map(|c| if c < 0 {
                format!("({c})")
            } else {
                c.to_string()
            }),
        ]
        .boxed()
    };
    if depth == 0 {
        return leaf;
    }
    let sub = move |extra: Option<&str>| {
        let mut v = vars.clone();
        if let Some(e) = extra {
            v.push(e.to_string());
        }
        expr(v, depth - 1)
    };
    let binop = (
        sub(None),
        prop_oneof![Just("+"), Just("-"), Just("*"), Just("&"), Just("^")],
        sub(None),
    )
        .prop_map(|(a, op, b)| format!("({a} {op} {b})"));
    let cond = (sub(None), sub(None), sub(None), sub(None))
        .prop_map(|(a, b, t, e)| format!("(if {a} < {b} then {t} else {e})"));
    let let_ = (sub(None), sub(Some("v"))).prop_map(|(a, body)| format!("(let v = {a} in {body})"));
    let red = sub(Some("a")).prop_map(|f| format!("(reduce (+) 0 (map (\\a -> {f}) xs))"));
    let scan_last = sub(Some("a"))
        .prop_map(|f| format!("(let s = scan (+) 0 (map (\\a -> {f}) xs) in if length s == 0 then 0 else s[length s - 1])"));
    let lp = (sub(None), sub(Some("acc")))
        .prop_map(|(init, step)| format!("(loop acc = {init} for i < 3 do acc + {step})"));
    let same = sub(None).prop_map(|a| format!("(let w = {a} in w + w - {a})"));
    prop_oneof![2 => leaf, 3 => binop, 1 => cond, 1 => let_, 1 => red, 1 => scan_last, 1 => lp, 1 => same]
        .boxed()
}

fn program() -> impl Strategy<Value = String> {
    let vars = vec!["x".to_string(), "y".to_string()];
    (expr(vars.clone(), 3), expr(vec!["x".into(), "y".into(), "e".into()], 2)).prop_map(|(body, elem)| {
        format!(
            "entry main (x: i32) (y: i32) (xs: []i32) : (i32, []i32) =\n  ({body}, map (\\e -> {elem}) xs)\n"
        )
    })
}

fn args(x: i32, y: i32, xs: Vec<i32>) -> Vec<Value> {
    vec![
        Value::Scalar(PrimValue::I32(x)),
        Value::Scalar(PrimValue::I32(y)),
        Value::Array(ArrayValue::new(vec![xs.len()], Buffer::I32(xs))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn simplification_preserves_results(
        src in program(),
        x in -50i32..50,
        y in -50i32..50,
        xs in proptest::collection::vec(-50i32..50, 0..6),
    ) {
        let checked = vkad_core::check("random.fut", &src)
            .unwrap_or_else(|e| panic!("generated program does not type-check:\n{src}\n{}", e.render()));
        let lowered = vkad_core::lower::lower_program(&checked.ast, &checked.sources);
        prop_assert!(lowered.entry_errors.is_empty(), "{src}");
        vkad_core::ir::check::check_program(&lowered.program)
            .unwrap_or_else(|e| panic!("lowered IR invalid for\n{src}\n{e}"));
        let before = vkad_core::interp::run_entry(&lowered.program, "main", args(x, y, xs.clone()));
        let simplified = vkad_core::passes::simplify(lowered.program);
        vkad_core::ir::check::check_program(&simplified)
            .unwrap_or_else(|e| panic!("simplified IR invalid for\n{src}\n{e}"));
        let after = vkad_core::interp::run_entry(&simplified, "main", args(x, y, xs));
        match (before, after) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", src),
            (a, b) => prop_assert!(false, "{src}\nbefore: {a:?}\nafter: {b:?}"),
        }
    }
}
