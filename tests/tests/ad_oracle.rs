//! Every AD test program (a file under tests/programs that uses `jvp`, `vjp` or their variants)
//! checked both ways: on the interpreter, which runs the code of the AD transformation, and on
//! the AD oracle, which evaluates `jvp`/`vjp` dynamically on traced values. Both must agree with
//! the expected outputs. The oracle must run every dataset; the interpreter may skip only the
//! datasets of entry points whose differentiation is not supported yet (`not supported: vjp of
//! ...`, until reverse mode covers them).

use std::path::PathBuf;
use vkad_core::testing::{run_paths, Backend, InterpBackend, OracleBackend, Summary};

fn ad_programs() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("programs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/programs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fut"))
        .filter(|p| {
            std::fs::read_to_string(p).is_ok_and(|t| {
                ["jvp", "vjp", "jmp", "mjp"]
                    .iter()
                    .any(|f| t.contains(&format!("{f} ")) || t.contains(&format!("{f}2 ")))
            })
        })
        .collect();
    files.sort();
    files
}

fn run(backend: &dyn Backend, files: &[PathBuf]) -> (Summary, String) {
    let mut out = Vec::new();
    let s = run_paths(files, backend, &mut out).expect("test runner I/O");
    (s, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn ad_programs_pass_on_the_interpreter_and_the_oracle() {
    let files = ad_programs();
    assert!(
        files.iter().any(|f| f.ends_with("ad_rules_vjp.fut")),
        "{files:?}"
    );
    let (oracle, text) = run(&OracleBackend, &files);
    println!("oracle:\n{text}");
    assert!(oracle.passed > 0, "{text}");
    assert!(oracle.success(), "oracle failures:\n{text}");
    // Custom derivatives (`with_vjp`) replace differentiation by the user's function, so the
    // oracle, which differentiates, has nothing to check them against (the interpreter and
    // Vulkan check them against hand-worked values); any other skip is a gap.
    let custom = text
        .lines()
        .filter(|l| l.contains("not supported by the AD oracle: `with_vjp`"))
        .count();
    assert_eq!(
        oracle.skipped, custom,
        "the oracle skipped datasets:\n{text}"
    );

    let (interp, text) = run(&InterpBackend, &files);
    println!("interp:\n{text}");
    assert!(interp.success(), "interpreter failures:\n{text}");
    // Every skip is an entry point whose AD transformation is not supported.
    let skips = text.lines().filter(|l| l.contains(": skipped")).count();
    let ad_skips = text
        .lines()
        .filter(|l| l.contains(": skipped") && l.contains("entry `"))
        .count();
    assert_eq!(skips, ad_skips, "{text}");
    for l in text
        .lines()
        .filter(|l| l.trim_start().starts_with("error: "))
    {
        assert!(
            l.contains("not supported: vjp of") || l.contains("not supported: jvp of"),
            "{l}"
        );
    }
    assert_eq!(
        interp.passed + interp.skipped,
        oracle.passed + custom,
        "the two runs saw different datasets"
    );
}

mod random {
    //! Random programs: the oracle's `jvp` agrees with the forward-mode transformation's, and
    //! with the oracle's own `vjp` through the dot-product identity ⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩.

    use proptest::prelude::*;
    use vkad_core::prim::PrimValue;
    use vkad_core::value::{ArrayValue, Buffer, Value};

    /// An f64 expression over `vars` (scalars) and the array `xs`, at most `depth` deep.
    fn expr(vars: Vec<String>, depth: u32) -> BoxedStrategy<String> {
        let leaf = {
            let vars = vars.clone();
            prop_oneof![
                3 => (0..vars.len()).prop_map(move |i| vars[i].clone()),
                1 => (1u32..20).prop_map(|c| format!("{:.1}", c as f64 / 10.0)),
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
            prop_oneof![Just("+"), Just("-"), Just("*"), Just("/")],
            sub(None),
        )
            .prop_map(|(a, op, b)| {
                if op == "/" {
                    format!("({a} / (1.5 + f64.sin {b}))")
                } else {
                    format!("({a} {op} {b})")
                }
            });
        let unary = (
            prop_oneof![Just("f64.sin"), Just("f64.exp"), Just("f64.atan")],
            sub(None),
        )
            .prop_map(|(f, a)| format!("({f} ({a} * 0.3))"));
        let minmax = (
            prop_oneof![Just("f64.min"), Just("f64.max")],
            sub(None),
            sub(None),
        )
            .prop_map(|(f, a, b)| format!("({f} {a} {b})"));
        let red = sub(Some("a")).prop_map(|f| format!("(f64.sum (map (\\a -> {f}) xs))"));
        let scn =
            sub(Some("a")).prop_map(|f| format!("(last (scan (+) 0.0 (map (\\a -> {f}) xs)))"));
        let idx =
            sub(None).prop_map(|a| format!("(if length xs > 1 then {a} * xs[1] + xs[0] else {a})"));
        let lp = (sub(None), sub(Some("acc"))).prop_map(|(init, step)| {
            format!("(loop acc = {init} for i < 2 do acc * 0.5 + {step})")
        });
        prop_oneof![2 => leaf, 3 => binop, 2 => unary, 1 => minmax, 1 => red, 1 => scn, 1 => idx, 1 => lp]
            .boxed()
    }

    fn program() -> impl Strategy<Value = String> {
        (expr(vec!["x".into(), "y".into()], 3), expr(vec!["x".into(), "y".into()], 2)).prop_map(
            |(b1, b2)| {
                format!(
                    "def f (x: f64, y: f64, xs: []f64) : (f64, f64) = ({b1}, {b2})\n\
                     entry tangent (x: f64) (y: f64) (xs: []f64) (dx: f64) (dy: f64) (dxs: []f64) =\n  \
                     jvp f (x, y, xs) (dx, dy, dxs)\n\
                     entry adjoint (x: f64) (y: f64) (xs: []f64) (b1: f64) (b2: f64) =\n  \
                     vjp f (x, y, xs) (b1, b2)\n"
                )
            },
        )
    }

    fn vals(x: f64, y: f64, xs: &[f64]) -> Vec<Value> {
        vec![
            Value::Scalar(PrimValue::F64(x)),
            Value::Scalar(PrimValue::F64(y)),
            Value::Array(ArrayValue::new(vec![xs.len()], Buffer::F64(xs.to_vec()))),
        ]
    }

    fn f64s(v: &[Value]) -> Vec<f64> {
        let mut out = vec![];
        for x in v {
            match x {
                Value::Scalar(PrimValue::F64(a)) => out.push(*a),
                Value::Array(a) => {
                    if let Buffer::F64(b) = &a.data {
                        out.extend(b.iter().copied())
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn oracle_agrees_with_the_transformation_and_itself(
            src in program(),
            (x, y, dx, dy, b1, b2) in (-1.5f64..1.5, -1.5f64..1.5, -1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0),
            pts in proptest::collection::vec((-1.5f64..1.5, -1.0f64..1.0), 1..4),
        ) {
            let c = vkad_core::compile("random.fut", &src)
                .unwrap_or_else(|e| panic!("generated program does not compile:\n{src}\n{}", e.render()));
            let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
            let dxs: Vec<f64> = pts.iter().map(|p| p.1).collect();
            let mut targs = vals(x, y, &xs);
            targs.extend(vals(dx, dy, &dxs));
            let oracle_t = f64s(&c.run_oracle("tangent", targs.clone()).expect("oracle jvp runs"));
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()));
            let trans_t = f64s(&c.run_interp("tangent", targs).expect("jvp runs"));
            prop_assert_eq!(oracle_t.len(), 2);
            for (o, t) in oracle_t.iter().zip(&trans_t) {
                prop_assert!(close(*o, *t), "{src}\noracle jvp {oracle_t:?}, transformation {trans_t:?}");
            }
            let mut aargs = vals(x, y, &xs);
            aargs.extend([Value::Scalar(PrimValue::F64(b1)), Value::Scalar(PrimValue::F64(b2))]);
            let adj = f64s(&c.run_oracle("adjoint", aargs).expect("oracle vjp runs"));
            let mut dirs = vec![dx, dy];
            dirs.extend(&dxs);
            let lhs = b1 * oracle_t[0] + b2 * oracle_t[1];
            let rhs: f64 = adj.iter().zip(&dirs).map(|(a, d)| a * d).sum();
            prop_assert!(
                (lhs - rhs).abs() <= 1e-9 * (1.0 + lhs.abs().max(rhs.abs())),
                "{src}\n<ȳ, Jẋ> = {lhs}, <Jᵀȳ, ẋ> = {rhs}"
            );
        }
    }
}
