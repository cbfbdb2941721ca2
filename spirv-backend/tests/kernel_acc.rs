//! Accumulators of a thread (a `withacc` inside a `map`'s function, run as sequential code of
//! each thread with its arrays in scratch memory) in forms that source programs do not reach
//! through AD: updates of whole rows with an operator on rows, an accumulator of two arrays,
//! an accumulator without operator (an update overwrites, the last one wins), out-of-range
//! indices (ignored), accumulators carried by a loop that also carries an array and chosen by
//! an `if` that returns an array. Built as IR and run on the interpreter (the oracle), on the
//! kernel IR's evaluator and on the Vulkan runtime of the kernel IR, with spirv-val and the
//! validation layer on.

mod common;

use vkad_core::ir::builder::{fun_sized, i64c, lambda, program, var, Builder};
use vkad_core::ir::*;
use vkad_core::prim::{PrimType, PrimValue};
use vkad_core::seg::Thresholds;
use vkad_core::testing::compare_values;
use vkad_core::value::{ArrayValue, Buffer, Value};

const F64: PrimType = PrimType::F64;
const I64: PrimType = PrimType::I64;

fn f64c(x: f64) -> SubExp {
    SubExp::Const(PrimValue::F64(x))
}

fn stm(pat: Vec<Param>, exp: Exp) -> Stm {
    Stm {
        pat: Pat { elems: pat },
        exp,
        attrs: Attrs::default(),
        loc: None,
    }
}

/// `main [n][m][k] (xs: [n][m]f64) (is: [n][k]i64) (vs: [n][k]f64)`: for each row, with
/// `a`, `b` two `[m][2]f64` arrays and `c` the row of `xs` with element 0 set to 5,
///
/// ```text
/// with_acc {([m], {a, b}, \p q r s -> (map2 (+) p r, map2 max q s)), ([m], {c}, none)}
///   \accA accB -> loop (accA, accB, cnt = [0, 0]) for j < k do
///     let accA = upd_acc accA [is[j]] {[v, 1], [v, -v]}     -- v = vs[j]
///     let (accB, cnt) = if v > 0 then (upd_acc accB [is[j]] {v}, cnt with [0] = cnt[0] + 1)
///                       else (accB, cnt with [1] = cnt[1] + 1)
///     in (accA, accB, cnt)
/// ```
///
/// returning `a`, `b`, `c` and `cnt`.
fn program_rows() -> Program {
    let mut ns = NameSource::default();
    let (n, m, k) = (ns.fresh("n"), ns.fresh("m"), ns.fresh("k"));
    let row2 = Type::array(F64, vec![i64c(2)]);
    let cnt_t = Type::array(I64, vec![i64c(2)]);
    let mat = Type::array(F64, vec![var(&m), i64c(2)]);
    let (n2, m2, k2) = (n.clone(), m.clone(), k.clone());
    let ret = vec![
        Type::array(F64, vec![var(&n), var(&m), i64c(2)]).to_ext(),
        Type::array(F64, vec![var(&n), var(&m), i64c(2)]).to_ext(),
        Type::array(F64, vec![var(&n), var(&m)]).to_ext(),
        Type::array(I64, vec![var(&n), i64c(2)]).to_ext(),
    ];
    let f = fun_sized(
        &mut ns,
        "main",
        true,
        vec![n.clone(), m.clone(), k.clone()],
        move |_, _| {
            vec![
                ("xs".into(), Type::array(F64, vec![var(&n2), var(&m2)])),
                ("is".into(), Type::array(I64, vec![var(&n2), var(&k2)])),
                ("vs".into(), Type::array(F64, vec![var(&n2), var(&k2)])),
            ]
        },
        ret,
        |b, ps| {
            let (xs, is, vs) = (ps[3].clone(), ps[4].clone(), ps[5].clone());
            let row_t = |t: PrimType, d: &VName| Type::array(t, vec![var(d)]);
            let lam = lambda(
                b.ns,
                &[
                    ("x", row_t(F64, &m)),
                    ("ix", row_t(I64, &k)),
                    ("v", row_t(F64, &k)),
                ],
                vec![mat.clone(), mat.clone(), row_t(F64, &m), cnt_t.clone()],
                |b, ps| {
                    let (x, ix, v) = (ps[0].clone(), ps[1].clone(), ps[2].clone());
                    let za = b.bind(
                        "za",
                        mat.clone(),
                        Exp::Replicate {
                            shape: vec![var(&m), i64c(2)],
                            value: f64c(0.0),
                        },
                    );
                    let zb = b.bind(
                        "zb",
                        mat.clone(),
                        Exp::Replicate {
                            shape: vec![var(&m), i64c(2)],
                            value: f64c(-1.0),
                        },
                    );
                    let nz = b.bind(
                        "nz",
                        row2.clone(),
                        Exp::Replicate {
                            shape: vec![i64c(2)],
                            value: f64c(0.0),
                        },
                    );
                    let op = row_op(b, var(&nz));
                    // A per-thread array: the accumulator updates it in place.
                    let xu = b.bind(
                        "xu",
                        row_t(F64, &m),
                        Exp::Update(x, vec![DimIndex::Fix(i64c(0))], f64c(5.0)),
                    );
                    let (ca, cb) = (b.fresh("acc_a"), b.fresh("acc_b"));
                    let acc_a = Type::Acc {
                        cert: ca.clone(),
                        shape: vec![var(&m)],
                        elems: vec![row2.clone(), row2.clone()],
                    };
                    let acc_b = Type::Acc {
                        cert: cb.clone(),
                        shape: vec![var(&m)],
                        elems: vec![Type::Prim(F64)],
                    };
                    let body = acc_body(b, &acc_a, &acc_b, &ca, &cb, &ix, &v, &k, &cnt_t);
                    let wl = Lambda {
                        params: vec![
                            Param {
                                name: ca.clone(),
                                ty: acc_a.clone(),
                            },
                            Param {
                                name: cb.clone(),
                                ty: acc_b.clone(),
                            },
                        ],
                        body,
                        ret: vec![acc_a.clone(), acc_b.clone(), cnt_t.clone()],
                    };
                    let r = b.bind_many(
                        &[
                            ("ra", mat.clone()),
                            ("rb", mat.clone()),
                            ("rc", row_t(F64, &m)),
                            ("cnt", cnt_t.clone()),
                        ],
                        Exp::WithAcc {
                            inputs: vec![
                                AccInput {
                                    shape: vec![var(&m)],
                                    arrs: vec![za, zb],
                                    op: Some(op),
                                },
                                AccInput {
                                    shape: vec![var(&m)],
                                    arrs: vec![xu],
                                    op: None,
                                },
                            ],
                            lam: wl,
                        },
                    );
                    r.iter().map(var).collect()
                },
            );
            let r = b.map(var(&n), vec![xs, is, vs], lam);
            r.iter().map(var).collect()
        },
    );
    program(ns, vec![f])
}

/// The operator on rows of the first accumulator of [`program_rows`]:
/// `\p q r s -> (map2 (+) p r, map2 max q s)` on `[2]f64` rows.
fn row_op(b: &mut Builder, neutral: SubExp) -> Operator {
    let row2 = Type::array(F64, vec![i64c(2)]);
    let lam = lambda(
        b.ns,
        &[
            ("p", row2.clone()),
            ("q", row2.clone()),
            ("r", row2.clone()),
            ("s", row2.clone()),
        ],
        vec![row2.clone(), row2],
        |b, ps| {
            let scalar = |b: &mut Builder, op: BinOp| {
                b.lambda(
                    &[("x", Type::Prim(F64)), ("y", Type::Prim(F64))],
                    vec![Type::Prim(F64)],
                    |b, ps| vec![var(&b.binop(op, var(&ps[0]), var(&ps[1])))],
                )
            };
            let add = scalar(b, BinOp::Add(F64));
            let max = scalar(b, BinOp::Max(F64));
            let u = b.map(i64c(2), vec![ps[0].clone(), ps[2].clone()], add);
            let w = b.map(i64c(2), vec![ps[1].clone(), ps[3].clone()], max);
            vec![var(&u[0]), var(&w[0])]
        },
    );
    Operator {
        lam,
        neutral: vec![neutral.clone(), neutral],
        commutative: false,
    }
}

/// The function of the `with_acc` of [`program_rows`].
#[allow(clippy::too_many_arguments)]
fn acc_body(
    b: &mut Builder,
    acc_a: &Type,
    acc_b: &Type,
    ca: &VName,
    cb: &VName,
    ix: &VName,
    v: &VName,
    k: &VName,
    cnt_t: &Type,
) -> Body {
    b.body(|b| {
        let c0 = b.bind(
            "c0",
            cnt_t.clone(),
            Exp::ArrayLit {
                elems: vec![i64c(0), i64c(0)],
                row: Type::Prim(I64),
            },
        );
        let pa = b.param("aA", acc_a.clone());
        let pb = b.param("aB", acc_b.clone());
        let pc = b.param("c", cnt_t.clone());
        let j = b.fresh("j");
        let lbody = b.body(|b| {
            let i = b.index(Type::Prim(I64), ix, vec![var(&j)]);
            let w = b.index(Type::Prim(F64), v, vec![var(&j)]);
            let row2 = Type::array(F64, vec![i64c(2)]);
            let r1 = b.bind(
                "r1",
                row2.clone(),
                Exp::ArrayLit {
                    elems: vec![var(&w), f64c(1.0)],
                    row: Type::Prim(F64),
                },
            );
            let nw = b.unop(UnOp::Neg(F64), var(&w));
            let r2 = b.bind(
                "r2",
                row2,
                Exp::ArrayLit {
                    elems: vec![var(&w), var(&nw)],
                    row: Type::Prim(F64),
                },
            );
            let a2 = b.bind(
                "aA2",
                acc_a.clone(),
                Exp::UpdAcc {
                    acc: pa.name.clone(),
                    idx: vec![var(&i)],
                    vals: vec![var(&r1), var(&r2)],
                },
            );
            let pos = b.cmp(CmpOp::Lt(F64), f64c(0.0), var(&w));
            let bump = |b: &mut Builder, at: i64| {
                let c = b.index(Type::Prim(I64), &pc.name, vec![i64c(at)]);
                let c1 = b.binop(BinOp::Add(I64), var(&c), i64c(1));
                b.bind(
                    "c2",
                    cnt_t.clone(),
                    Exp::Update(pc.name.clone(), vec![DimIndex::Fix(i64c(at))], var(&c1)),
                )
            };
            let then_b = b.body(|b| {
                let b2 = b.bind(
                    "aB2",
                    acc_b.clone(),
                    Exp::UpdAcc {
                        acc: pb.name.clone(),
                        idx: vec![var(&i)],
                        vals: vec![var(&w)],
                    },
                );
                let c2 = bump(b, 0);
                vec![var(&b2), var(&c2)]
            });
            let else_b = b.body(|b| {
                let c2 = bump(b, 1);
                vec![var(&pb.name), var(&c2)]
            });
            let r = b.bind_many(
                &[("aB3", acc_b.clone()), ("c3", cnt_t.clone())],
                Exp::If {
                    cond: var(&pos),
                    then_b,
                    else_b,
                    ret: vec![acc_b.to_ext(), cnt_t.to_ext()],
                },
            );
            vec![var(&a2), var(&r[0]), var(&r[1])]
        });
        let pats = vec![
            b.param("fA", acc_a.clone()),
            b.param("fB", acc_b.clone()),
            b.param("fc", cnt_t.clone()),
        ];
        let names: Vec<VName> = pats.iter().map(|p| p.name.clone()).collect();
        b.push(stm(
            pats,
            Exp::Loop {
                params: vec![(pa, var(ca)), (pb, var(cb)), (pc, var(&c0))],
                form: LoopForm::For {
                    i: j,
                    it: vkad_core::prim::IntType::I64,
                    bound: var(k),
                },
                body: lbody,
            },
        ));
        names.iter().map(var).collect()
    })
}

fn arr(shape: Vec<usize>, b: Buffer) -> Value {
    Value::Array(ArrayValue::new(shape, b))
}

fn same(what: &str, got: &[Value], want: &[Value]) {
    let ms = compare_values(got, want);
    assert!(
        ms.is_empty(),
        "{what}: {:?}",
        ms.iter().map(|m| m.to_string()).collect::<Vec<_>>()
    );
}

/// Runs `main` on every backend and compares with the interpreter.
fn check_all(prog: &Program, args: Vec<Value>) -> Vec<Value> {
    vkad_core::ir::check::check_program(prog).expect("valid IR");
    let want = vkad_core::interp::run_entry(prog, "main", args.clone()).expect("interpreter");
    let kp = vkad_core::flatten::extract_kernels(prog);
    for th in [Thresholds::all(0), Thresholds::default()] {
        let (got, _) =
            vkad_core::seg::eval::run_entry(&kp, "main", args.clone(), &th).expect("kernel IR");
        same("kernel IR evaluator", &got, &want);
    }
    let ctx = common::ctx();
    let dp = vkad_spirv::runtime::DeviceProgram::new(&ctx, prog).expect("plan");
    for th in [Thresholds::all(0), Thresholds::default()] {
        let (got, _) = dp
            .run(&ctx, "main", args.clone(), &th, false)
            .expect("vulkan");
        same("vulkan", &got, &want);
    }
    want
}

#[test]
fn rows_two_arrays_and_overwrites_in_a_loop() {
    let prog = program_rows();
    // n = 3 rows of m = 4, k = 6 updates each; indices -1 and 4 are out of range.
    let xs = arr(vec![3, 4], Buffer::F64((0..12).map(|i| i as f64).collect()));
    let is = arr(
        vec![3, 6],
        Buffer::I64(vec![
            0, 2, 0, -1, 4, 3, //
            1, 1, 1, 1, 1, 1, //
            3, 2, 1, 0, 3, 2,
        ]),
    );
    let vs = arr(
        vec![3, 6],
        Buffer::F64(vec![
            1.0, 2.0, -3.0, 4.0, 5.0, 6.0, //
            -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, //
            0.5, -0.5, 0.25, -0.25, 2.0, 3.0,
        ]),
    );
    let out = check_all(&prog, vec![xs, is, vs]);
    // Row 0 by hand: index 0 gets [1,1] then [-3,1] onto [0,0] → a = [-2, 2]; b: max of
    // [-1,-1], [1,-1], [-3,3] → [1, 3]; c = [5,1,2,3] overwritten where v > 0: c[0] = 1
    // (v = 1; v = -3 does not write), c[2] = 2, c[3] = 6 → [1, 1, 2, 6]; counts [5, 1] of the
    // 5 positive and 1 negative values (out-of-range updates are ignored, not the counting).
    let Value::Array(a) = &out[0] else {
        panic!("array")
    };
    let Buffer::F64(a) = &a.data else {
        panic!("f64")
    };
    assert_eq!(&a[0..2], &[-2.0, 2.0]);
    let Value::Array(c) = &out[2] else {
        panic!("array")
    };
    let Buffer::F64(c) = &c.data else {
        panic!("f64")
    };
    assert_eq!(&c[0..4], &[1.0, 1.0, 2.0, 6.0]);
    let Value::Array(cnt) = &out[3] else {
        panic!("array")
    };
    let Buffer::I64(cnt) = &cnt.data else {
        panic!("i64")
    };
    assert_eq!(&cnt[0..2], &[5, 1]);
}

#[test]
fn empty_updates() {
    let prog = program_rows();
    let xs = arr(vec![2, 3], Buffer::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    let is = arr(vec![2, 0], Buffer::I64(vec![]));
    let vs = arr(vec![2, 0], Buffer::F64(vec![]));
    check_all(&prog, vec![xs, is, vs]);
}

/// `main [m][k] (a: [m]f64) (c: [m]i64) (is: [k]i64) (vs: [k]f64) (ws: [k]i64)`:
///
/// ```text
/// with_acc {([m], {a, c}, \p q r s -> (p * r, q + s), {1.0, 0})}
///   \acc -> map (\i v w acc -> loop acc for _j < 1 do upd_acc acc [i] {v, w}) is vs ws acc
/// ```
///
/// at host level: one kernel updating the accumulator atomically (a compare-exchange loop for
/// `*`, the device's atomic add for `+`), or a reduction first. Updates by a component's
/// neutral element (1.0 for `*`, 0 for `+`) are skipped there; the data mixes them with values
/// that are the other component's neutral element (0.0, 1), which must not be.
fn program_neutral_updates() -> Program {
    let mut ns = NameSource::default();
    let (m, k) = (ns.fresh("m"), ns.fresh("k"));
    let (m2, k2) = (m.clone(), k.clone());
    let ret = vec![
        Type::array(F64, vec![var(&m)]).to_ext(),
        Type::array(I64, vec![var(&m)]).to_ext(),
    ];
    let f = fun_sized(
        &mut ns,
        "main",
        true,
        vec![m.clone(), k.clone()],
        move |_, _| {
            vec![
                ("a".into(), Type::array(F64, vec![var(&m2)])),
                ("c".into(), Type::array(I64, vec![var(&m2)])),
                ("is".into(), Type::array(I64, vec![var(&k2)])),
                ("vs".into(), Type::array(F64, vec![var(&k2)])),
                ("ws".into(), Type::array(I64, vec![var(&k2)])),
            ]
        },
        ret,
        |b, ps| {
            let (a, c) = (ps[2].clone(), ps[3].clone());
            let (is, vs, ws) = (ps[4].clone(), ps[5].clone(), ps[6].clone());
            let lam = lambda(
                b.ns,
                &[
                    ("p", Type::Prim(F64)),
                    ("q", Type::Prim(I64)),
                    ("r", Type::Prim(F64)),
                    ("s", Type::Prim(I64)),
                ],
                vec![Type::Prim(F64), Type::Prim(I64)],
                |b, ps| {
                    let x = b.binop(BinOp::Mul(F64), var(&ps[0]), var(&ps[2]));
                    let y = b.binop(BinOp::Add(I64), var(&ps[1]), var(&ps[3]));
                    vec![var(&x), var(&y)]
                },
            );
            let op = Operator {
                lam,
                neutral: vec![f64c(1.0), i64c(0)],
                commutative: true,
            };
            let cert = b.fresh("acc");
            let acc_t = Type::Acc {
                cert: cert.clone(),
                shape: vec![var(&m)],
                elems: vec![Type::Prim(F64), Type::Prim(I64)],
            };
            let body = b.body(|b| {
                let upd = b.lambda(
                    &[
                        ("i", Type::Prim(I64)),
                        ("v", Type::Prim(F64)),
                        ("w", Type::Prim(I64)),
                        ("accp", acc_t.clone()),
                    ],
                    vec![acc_t.clone()],
                    |b, ps| {
                        // A loop of one step around the update: a `map` of bare updates would
                        // become a histogram (`acc_to_hist`) instead of this kernel.
                        let pa = b.param("acc_l", acc_t.clone());
                        let step = b.body(|b| {
                            let r = b.bind(
                                "upd",
                                acc_t.clone(),
                                Exp::UpdAcc {
                                    acc: pa.name.clone(),
                                    idx: vec![var(&ps[0])],
                                    vals: vec![var(&ps[1]), var(&ps[2])],
                                },
                            );
                            vec![var(&r)]
                        });
                        let j = b.fresh("j");
                        let r = b.bind(
                            "acc_loop",
                            acc_t.clone(),
                            Exp::Loop {
                                params: vec![(pa.clone(), var(&ps[3]))],
                                form: LoopForm::For {
                                    i: j,
                                    it: vkad_core::prim::IntType::I64,
                                    bound: i64c(1),
                                },
                                body: step,
                            },
                        );
                        vec![var(&r)]
                    },
                );
                let r = b.bind(
                    "acc_res",
                    acc_t.clone(),
                    Exp::Soac(Soac::Map {
                        w: var(&k),
                        arrs: vec![is, vs, ws, cert.clone()],
                        lam: upd,
                    }),
                );
                vec![var(&r)]
            });
            let wl = Lambda {
                params: vec![Param {
                    name: cert.clone(),
                    ty: acc_t.clone(),
                }],
                body,
                ret: vec![acc_t.clone()],
            };
            let r = b.bind_many(
                &[
                    ("ra", Type::array(F64, vec![var(&m)])),
                    ("rc", Type::array(I64, vec![var(&m)])),
                ],
                Exp::WithAcc {
                    inputs: vec![AccInput {
                        shape: vec![var(&m)],
                        arrs: vec![a, c],
                        op: Some(op),
                    }],
                    lam: wl,
                },
            );
            r.iter().map(var).collect()
        },
    );
    program(ns, vec![f])
}

#[test]
fn updates_by_the_neutral_element_change_nothing_and_others_apply() {
    let prog = program_neutral_updates();
    let a = arr(vec![3], Buffer::F64(vec![2.0, 3.0, -0.5]));
    let c = arr(vec![3], Buffer::I64(vec![10, 20, 30]));
    // Element 0: × 1, 4, 1, 0.5 → 4; + 1, 0, 0, 2 → 13. Element 1: × 0 (applies), 1 → 0;
    // + 0, 5 → 25. Element 2: × 1, 1 and -inf (not neutral: applies) → +inf, + 0 only →
    // unchanged. Index 3 is out of range.
    let is = arr(vec![10], Buffer::I64(vec![0, 0, 1, 0, 2, 1, 0, 2, 3, 2]));
    let vs = arr(
        vec![10],
        Buffer::F64(vec![
            1.0,
            4.0,
            0.0,
            1.0,
            1.0,
            1.0,
            0.5,
            1.0,
            7.0,
            f64::NEG_INFINITY,
        ]),
    );
    let ws = arr(vec![10], Buffer::I64(vec![1, 0, 0, 0, 0, 5, 2, 0, 9, 0]));
    let out = check_all(&prog, vec![a, c, is, vs, ws]);
    same(
        "by hand",
        &out,
        &[
            arr(vec![3], Buffer::F64(vec![4.0, 0.0, f64::INFINITY])),
            arr(vec![3], Buffer::I64(vec![13, 25, 30])),
        ],
    );
}
