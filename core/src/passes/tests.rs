//! Tests of [`simplify`](super::simplify) as a whole: every pass keeps the program valid.

use super::*;
use crate::ir::builder::*;
use crate::ir::check::check_program;
use crate::ir::*;
use crate::prim::{IntType, PrimType};

/// `scale k x = x * k`; `main xs = map (\x -> scale (1+1) x * 1 + dead) xs` with a duplicated
/// reduction, a constant `if`, and an unused computation.
fn prog() -> Program {
    let mut ns = NameSource::default();
    let scale = fun(
        &mut ns,
        "scale",
        false,
        &[],
        &[("k", f32t()), ("x", f32t())],
        vec![f32t()],
        |b, ps| {
            let r = b.binop(BinOp::Mul(PrimType::F32), var(&ps[1]), var(&ps[0]));
            vec![var(&r)]
        },
    );
    let n = ns.fresh("n");
    let xs_t = arr(PrimType::F32, vec![var(&n)]);
    let main = fun_sized(
        &mut ns,
        "main",
        true,
        vec![n.clone()],
        |_, _| vec![("xs".into(), xs_t.clone())],
        vec![xs_t.to_ext(), f32t().to_ext()],
        |b, ps| {
            let two = b.binop(BinOp::Add(PrimType::F32), f32c(1.0), f32c(1.0));
            let lam = b.lambda(&[("x", f32t())], vec![f32t()], |b, lp| {
                let s = b.bind(
                    "s",
                    f32t(),
                    Exp::Apply {
                        fun: "scale".into(),
                        args: vec![var(&two), var(&lp[0])],
                        ret: vec![f32t().to_ext()],
                    },
                );
                let t = b.binop(BinOp::Mul(PrimType::F32), var(&s), f32c(1.0));
                let _unused = b.math(MathFn::Sin(crate::prim::FloatType::F32), vec![var(&t)]);
                vec![var(&t)]
            });
            let ys = b.map(var(&ps[0]), vec![ps[1].clone()], lam);
            let op1 = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
            let op2 = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
            let s1 = b.reduce(var(&ps[0]), vec![ys[0].clone()], op1);
            let s2 = b.reduce(var(&ps[0]), vec![ys[0].clone()], op2);
            let sum = b.binop(BinOp::Add(PrimType::F32), var(&s1[0]), var(&s2[0]));
            let then_b = b.body(|_| vec![var(&sum)]);
            let else_b = b.body(|_| vec![f32c(0.0)]);
            let c = b.cmp(CmpOp::Lt(PrimType::I64), i64c(0), i64c(1));
            let r = b.bind(
                "r",
                f32t(),
                Exp::If {
                    cond: var(&c),
                    then_b,
                    else_b,
                    ret: vec![f32t().to_ext()],
                },
            );
            let _dead_iota = b.bind(
                "d",
                arr(PrimType::I64, vec![var(&ps[0])]),
                Exp::Iota {
                    n: var(&ps[0]),
                    start: i64c(0),
                    stride: i64c(1),
                    it: IntType::I64,
                },
            );
            vec![var(&ys[0]), var(&r)]
        },
    );
    let p = program(ns, vec![scale, main]);
    check_program(&p).unwrap();
    p
}

#[test]
fn each_pass_keeps_the_program_valid() {
    type Pass = fn(Program) -> Program;
    let passes: [(&str, Pass); 5] = [
        ("inline", inline::inline),
        ("copy_prop", copy_prop::copy_prop),
        ("const_fold", const_fold::const_fold),
        ("cse", cse::cse),
        ("dce", dce::dce),
    ];
    let mut p = prog();
    for round in 0..4 {
        for (name, pass) in passes {
            p = pass(p);
            if let Err(e) = check_program(&p) {
                panic!("after {name} (round {round}): {e}\n{p}");
            }
        }
    }
}

#[test]
fn simplify_reaches_a_small_fixpoint() {
    let p = simplify(prog());
    check_program(&p).unwrap();
    insta::assert_snapshot!(p.to_string());
    // Simplifying again changes nothing.
    let q = simplify(p.clone());
    assert_eq!(p.funs, q.funs);
}

/// Malformed IR (wrong arities, existential indices out of range, unknown callees) must not make
/// any pass panic.
#[test]
fn malformed_programs_do_not_panic() {
    let mut ns = NameSource::default();
    let i32t = Type::Prim(PrimType::I32);
    let f = fun(
        &mut ns,
        "main",
        true,
        &[],
        &[("c", Type::Prim(PrimType::Bool))],
        vec![i32t.clone()],
        |b, ps| {
            let then_b = b.body(|_| vec![i32c(1)]);
            let else_b = b.body(|_| vec![i32c(1), i32c(2)]);
            b.bind_many(
                &[("a", i32t.clone()), ("d", i32t.clone())],
                Exp::If {
                    cond: var(&ps[0]),
                    then_b,
                    else_b,
                    ret: vec![
                        i32t.to_ext(),
                        ExtType::Array {
                            elem: PrimType::I32,
                            shape: vec![ExtDim::Ext(7)],
                        },
                    ],
                },
            );
            let lam = b.lambda(
                &[("x", i32t.clone())],
                vec![i32t.clone(), i32t.clone()],
                |_, lp| vec![var(&lp[0])],
            );
            b.bind_many(
                &[("m", i32t.clone())],
                Exp::Soac(Soac::Map {
                    w: i64c(3),
                    arrs: vec![],
                    lam,
                }),
            );
            b.bind(
                "ap",
                i32t.clone(),
                Exp::Apply {
                    fun: "nope".into(),
                    args: vec![],
                    ret: vec![],
                },
            );
            b.bind(
                "ap2",
                i32t.clone(),
                Exp::Apply {
                    fun: "main".into(),
                    args: vec![],
                    ret: vec![],
                },
            );
            let body = b.body(|_| vec![]);
            let p = b.param("p", i32t.clone());
            let i = b.fresh("i");
            b.bind_many(
                &[("l", i32t.clone())],
                Exp::Loop {
                    params: vec![(p, i32c(0))],
                    form: LoopForm::For {
                        i,
                        it: IntType::I32,
                        bound: i32c(1),
                    },
                    body,
                },
            );
            vec![i32c(0)]
        },
    );
    let p = program(ns, vec![f]);
    assert!(check_program(&p).is_err());
    let _ = simplify(p.clone());
    let _ = dce::dce(p.clone());
    let _ = cse::cse(p.clone());
    let _ = const_fold::const_fold(p.clone());
    let _ = copy_prop::copy_prop(p.clone());
    let _ = inline::inline(p);
}

/// Paper 000 §6.1 on AD's real output: the vjp of matrix multiplication becomes two
/// matrix-product-like map/reduce nests, with no accumulator left (after hoisting, fusion into
/// the updating maps and the accumulator-to-reduction rewrite, as [`crate::compile`] runs them).
#[test]
fn matmul_vjp_has_no_accumulator() {
    let src = "def matmul [n][m][p] (a: [n][m]f64) (b: [m][p]f64) : [n][p]f64 =
  map (\\xs -> map (\\ys -> reduce (+) 0 (map2 (*) xs ys)) (transpose b)) a
entry grad [n][m][p] (a: [n][m]f64) (b: [m][p]f64) (cbar: [n][p]f64) =
  vjp (\\(a, b) -> matmul a b) (a, b) cbar";
    let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    check_program(&c.ir).expect("valid IR");
    let text = crate::ir::print::program_to_string(&c.ir);
    assert!(!text.contains("with_acc"), "{text}");
    assert!(!text.contains("upd_acc"), "{text}");
    insta::assert_snapshot!("matmul_vjp", text);
    // Ā = C̄·Bᵀ, B̄ = Aᵀ·C̄ (A 2×3, B 3×2).
    let args = crate::values::parse_values(
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [[1.0, 0.5], [-1.0, 2.0], [2.0, 0.0]] [[1.0, 2.0], [0.5, -1.0]]"
            .as_bytes(),
    )
    .expect("values");
    let out = c.run_interp("grad", args).expect("run");
    let a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let b = [[1.0, 0.5], [-1.0, 2.0], [2.0, 0.0]];
    let cb = [[1.0, 2.0], [0.5, -1.0]];
    let mut abar = vec![];
    for row in &cb {
        for brow in &b {
            abar.push(row[0] * brow[0] + row[1] * brow[1]);
        }
    }
    let mut bbar = vec![];
    let at: Vec<[f64; 2]> = (0..3).map(|k| [a[0][k], a[1][k]]).collect();
    for acol in &at {
        for (c0, c1) in cb[0].iter().zip(&cb[1]) {
            bbar.push(acol[0] * c0 + acol[1] * c1);
        }
    }
    let flat = |v: &crate::value::Value| match v {
        crate::value::Value::Array(arr) => match &arr.data {
            crate::value::Buffer::F64(xs) => xs.clone(),
            _ => panic!("f64 array"),
        },
        _ => panic!("array"),
    };
    assert_eq!(flat(&out[0]), abar);
    assert_eq!(flat(&out[1]), bbar);
}
