//! One positive and at least one negative test per check of [`check_program`].

use super::*;
use crate::ir::builder::*;
use crate::prim::{FloatType, IntType, PrimValue};

fn t(p: PrimType) -> Type {
    Type::Prim(p)
}
fn f32t() -> Type {
    t(PrimType::F32)
}
fn i64t() -> Type {
    t(PrimType::I64)
}
fn boolt() -> Type {
    t(PrimType::Bool)
}

/// `entry main [n] (xs: [n]f32) (x: f32) (i: i64) (c: bool) : ret`; `f` gets `[n, xs, x, i, c]`.
fn main_fn(ret: Vec<Type>, f: impl FnOnce(&mut Builder, &[VName]) -> Vec<SubExp>) -> Program {
    let mut ns = NameSource::default();
    let n = ns.fresh("n");
    let xs_t = arr(PrimType::F32, vec![var(&n)]);
    let fd = fun_sized(
        &mut ns,
        "main",
        true,
        vec![n],
        |_, _| {
            vec![
                ("xs".into(), xs_t.clone()),
                ("x".into(), f32t()),
                ("i".into(), i64t()),
                ("c".into(), boolt()),
            ]
        },
        ret.into_iter().map(|t| t.to_ext()).collect(),
        f,
    );
    program(ns, vec![fd])
}

fn ok(p: &Program) {
    if let Err(e) = check_program(p) {
        panic!("unexpected error: {e}\n{p}");
    }
}

fn bad(p: &Program, what: &str) {
    match check_program(p) {
        Ok(()) => panic!("expected an error containing {what:?}\n{p}"),
        Err(e) => assert!(
            e.to_string().contains(what),
            "error {e} does not contain {what:?}\n{p}"
        ),
    }
}

fn xs_t(ps: &[VName]) -> Type {
    arr(PrimType::F32, vec![var(&ps[0])])
}

#[test]
fn scoping_and_unique_names() {
    ok(&main_fn(vec![f32t()], |b, ps| {
        let y = b.binop(BinOp::Add(PrimType::F32), var(&ps[2]), f32c(1.0));
        vec![var(&y)]
    }));
    let mut ns = NameSource::default();
    let ghost = ns.fresh("ghost");
    let mut p = main_fn(vec![f32t()], |_, _| vec![var(&ghost)]);
    p.name_source.next += 1;
    bad(&p, "ghost_1 is not in scope");
    // Bound twice.
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let dup = Param {
                name: ps[2].clone(),
                ty: f32t(),
            };
            b.push(Stm {
                pat: Pat { elems: vec![dup] },
                exp: Exp::SubExp(f32c(1.0)),
                attrs: Attrs::default(),
                loc: None,
            });
            vec![var(&ps[2])]
        }),
        "bound more than once",
    );
    // A variable of a branch used after the `if`.
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let mut inner = None;
            let then_b = b.body(|b| {
                let v = b.binop(BinOp::Add(PrimType::F32), var(&ps[2]), f32c(1.0));
                inner = Some(v.clone());
                vec![var(&v)]
            });
            let else_b = b.body(|_| vec![f32c(0.0)]);
            b.bind(
                "r",
                f32t(),
                Exp::If {
                    cond: var(&ps[4]),
                    then_b,
                    else_b,
                    ret: vec![f32t().to_ext()],
                },
            );
            vec![var(&inner.unwrap())]
        }),
        "not in scope",
    );
    // An id beyond the name source.
    let mut p = main_fn(vec![f32t()], |_, ps| vec![var(&ps[2])]);
    p.name_source.next = 1;
    bad(&p, "beyond the name source");
}

#[test]
fn types_are_well_formed() {
    let mut ns = NameSource::default();
    let ghost = ns.fresh("ghost");
    let mut p = main_fn(vec![f32t()], |b, ps| {
        b.bind(
            "a",
            arr(PrimType::F32, vec![var(&ghost)]),
            Exp::SubExp(var(&ps[1])),
        );
        vec![var(&ps[2])]
    });
    p.name_source.next += 1;
    bad(&p, "not in scope");
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            b.bind(
                "a",
                arr(PrimType::F32, vec![var(&ps[2])]),
                Exp::SubExp(var(&ps[1])),
            );
            vec![var(&ps[2])]
        }),
        "expected an integer",
    );
}

#[test]
fn scalar_operations() {
    ok(&main_fn(
        vec![
            boolt(),
            t(PrimType::I32),
            f32t(),
            boolt(),
            t(PrimType::Int(IntType::U32)),
        ],
        |b, ps| {
            let c = b.cmp(CmpOp::Lt(PrimType::F32), var(&ps[2]), f32c(0.0));
            let k = b.conv(PrimType::F32, PrimType::I32, var(&ps[2]));
            let h = b.math(MathFn::Atan2(FloatType::F32), vec![var(&ps[2]), f32c(1.0)]);
            let nan = b.math(MathFn::IsNan(FloatType::F32), vec![var(&h)]);
            let bits = b.math(MathFn::ToBits(FloatType::F32), vec![var(&h)]);
            let n = b.unop(UnOp::Not(PrimType::Bool), var(&c));
            let l = b.binop(BinOp::LogAnd, var(&n), var(&nan));
            vec![var(&l), var(&k), var(&h), var(&nan), var(&bits)]
        },
    ));
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let y = b.bind(
                "y",
                f32t(),
                Exp::BinOp(BinOp::Add(PrimType::F32), var(&ps[2]), i32c(1)),
            );
            vec![var(&y)]
        }),
        "second operand of f32.add",
    );
    bad(
        &main_fn(vec![t(PrimType::I32)], |b, ps| {
            let y = b.bind(
                "y",
                t(PrimType::I32),
                Exp::CmpOp(CmpOp::Eq(PrimType::F32), var(&ps[2]), var(&ps[2])),
            );
            vec![var(&y)]
        }),
        "pattern",
    );
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let y = b.bind(
                "y",
                f32t(),
                Exp::Conv(
                    ConvOp {
                        from: PrimType::I32,
                        to: PrimType::F32,
                    },
                    var(&ps[3]),
                ),
            );
            vec![var(&y)]
        }),
        "operand of f32.i32",
    );
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let y = b.bind(
                "y",
                f32t(),
                Exp::Math(MathFn::Hypot(FloatType::F32), vec![var(&ps[2])]),
            );
            vec![var(&y)]
        }),
        "takes 2 arguments",
    );
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let y = b.bind(
                "y",
                f32t(),
                Exp::Math(MathFn::Sqrt(FloatType::F32), vec![var(&ps[3])]),
            );
            vec![var(&y)]
        }),
        "argument 0 of f32.sqrt",
    );
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let y = b.bind(
                "y",
                f32t(),
                Exp::UnOp(UnOp::Not(PrimType::F32), var(&ps[2])),
            );
            vec![var(&y)]
        }),
        "is not an operation",
    );
}

#[test]
fn indexing_and_updates() {
    ok(&main_fn(
        vec![f32t(), arr(PrimType::F32, vec![i64c(2)])],
        |b, ps| {
            let e = b.bind(
                "e",
                f32t(),
                Exp::Index(ps[1].clone(), vec![DimIndex::Fix(var(&ps[3]))]),
            );
            let s = b.bind(
                "s",
                arr(PrimType::F32, vec![i64c(2)]),
                Exp::Index(
                    ps[1].clone(),
                    vec![DimIndex::Slice {
                        start: i64c(0),
                        len: i64c(2),
                        stride: i64c(1),
                    }],
                ),
            );
            let u = b.bind(
                "u",
                xs_t(ps),
                Exp::Update(ps[1].clone(), vec![DimIndex::Fix(i32c(0))], f32c(1.0)),
            );
            let _ = u;
            vec![var(&e), var(&s)]
        },
    ));
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let e = b.bind(
                "e",
                f32t(),
                Exp::Index(
                    ps[1].clone(),
                    vec![DimIndex::Fix(i64c(0)), DimIndex::Fix(i64c(0))],
                ),
            );
            vec![var(&e)]
        }),
        "2 indices into xs_2 of rank 1",
    );
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            let e = b.bind(
                "e",
                f32t(),
                Exp::Index(ps[1].clone(), vec![DimIndex::Fix(var(&ps[2]))]),
            );
            vec![var(&e)]
        }),
        "index: x_3 has type f32",
    );
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            b.bind(
                "s",
                f32t(),
                Exp::Index(
                    ps[1].clone(),
                    vec![DimIndex::Slice {
                        start: i64c(0),
                        len: i64c(2),
                        stride: i64c(1),
                    }],
                ),
            );
            vec![var(&ps[2])]
        }),
        "pattern",
    );
    bad(
        &main_fn(vec![f32t()], |b, ps| {
            b.bind(
                "u",
                xs_t(ps),
                Exp::Update(ps[1].clone(), vec![DimIndex::Fix(i64c(0))], var(&ps[3])),
            );
            vec![var(&ps[2])]
        }),
        "update of a slice",
    );
}

#[test]
fn array_constructors() {
    ok(&main_fn(vec![], |b, ps| {
        b.bind(
            "io",
            arr(PrimType::I32, vec![i64c(5)]),
            Exp::Iota {
                n: i64c(5),
                start: i32c(0),
                stride: i32c(1),
                it: IntType::I32,
            },
        );
        b.bind(
            "r",
            arr(PrimType::F32, vec![i64c(3), var(&ps[0])]),
            Exp::Replicate {
                shape: vec![i64c(3)],
                value: var(&ps[1]),
            },
        );
        b.bind(
            "l",
            arr(PrimType::F32, vec![i64c(2)]),
            Exp::ArrayLit {
                elems: vec![var(&ps[2]), f32c(1.0)],
                row: f32t(),
            },
        );
        b.bind(
            "cc",
            arr(PrimType::F32, vec![var(&ps[3])]),
            Exp::Concat {
                dim: 0,
                arrs: vec![ps[1].clone(), ps[1].clone()],
                w: var(&ps[3]),
            },
        );
        b.bind("cp", xs_t(ps), Exp::Copy(ps[1].clone()));
        let m = b.bind(
            "m",
            arr(PrimType::F32, vec![i64c(1), var(&ps[0])]),
            Exp::Reshape(vec![i64c(1), var(&ps[0])], ps[1].clone()),
        );
        b.bind(
            "t",
            arr(PrimType::F32, vec![var(&ps[0]), i64c(1)]),
            Exp::Rearrange(vec![1, 0], m),
        );
        vec![]
    }));
    bad(
        &main_fn(vec![], |b, _| {
            b.bind(
                "io",
                arr(PrimType::I64, vec![i64c(5)]),
                Exp::Iota {
                    n: i64c(5),
                    start: i32c(0),
                    stride: i32c(1),
                    it: IntType::I64,
                },
            );
            vec![]
        }),
        "iota start",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            b.bind(
                "r",
                arr(PrimType::F32, vec![i64c(3)]),
                Exp::Replicate {
                    shape: vec![i64c(3)],
                    value: var(&ps[1]),
                },
            );
            vec![]
        }),
        "pattern",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            b.bind(
                "l",
                arr(PrimType::F32, vec![i64c(2)]),
                Exp::ArrayLit {
                    elems: vec![var(&ps[2]), i32c(1)],
                    row: f32t(),
                },
            );
            vec![]
        }),
        "array literal element 1",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            b.bind(
                "l",
                arr(PrimType::F32, vec![i64c(3)]),
                Exp::ArrayLit {
                    elems: vec![var(&ps[2]), f32c(1.0)],
                    row: f32t(),
                },
            );
            vec![]
        }),
        "pattern",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            let is = b.bind(
                "is",
                arr(PrimType::I64, vec![i64c(5)]),
                Exp::Iota {
                    n: i64c(5),
                    start: i64c(0),
                    stride: i64c(1),
                    it: IntType::I64,
                },
            );
            b.bind(
                "cc",
                arr(PrimType::F32, vec![var(&ps[3])]),
                Exp::Concat {
                    dim: 0,
                    arrs: vec![ps[1].clone(), is],
                    w: var(&ps[3]),
                },
            );
            vec![]
        }),
        "concat of",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            b.bind(
                "cc",
                arr(PrimType::F32, vec![var(&ps[3])]),
                Exp::Concat {
                    dim: 1,
                    arrs: vec![ps[1].clone()],
                    w: var(&ps[3]),
                },
            );
            vec![]
        }),
        "concat along dimension 1",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            b.bind(
                "cp",
                arr(PrimType::I32, vec![var(&ps[0])]),
                Exp::Copy(ps[1].clone()),
            );
            vec![]
        }),
        "pattern",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            b.bind(
                "m",
                arr(PrimType::F32, vec![var(&ps[0])]),
                Exp::Reshape(vec![var(&ps[2])], ps[1].clone()),
            );
            vec![]
        }),
        "reshape shape",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            b.bind("t", xs_t(ps), Exp::Rearrange(vec![1], ps[1].clone()));
            vec![]
        }),
        "not a permutation",
    );
}

#[test]
fn shapes_compared_only_when_constant() {
    // [n]f32 where [i]f32 is expected: variables are trusted.
    ok(&main_fn(vec![], |b, ps| {
        b.bind(
            "a",
            arr(PrimType::F32, vec![var(&ps[3])]),
            Exp::SubExp(var(&ps[1])),
        );
        vec![]
    }));
    bad(
        &main_fn(vec![], |b, _| {
            b.bind(
                "a",
                arr(PrimType::F32, vec![i64c(3)]),
                Exp::ArrayLit {
                    elems: vec![f32c(1.0); 4],
                    row: f32t(),
                },
            );
            vec![]
        }),
        "pattern: value 0 has type [3i64]f32, expected [4i64]f32",
    );
}

#[test]
fn ifs() {
    // Existential result: if c then iota 3 else iota 4.
    ok(&main_fn(vec![], |b, ps| {
        let then_b = b.body(|b| {
            let a = b.bind(
                "a",
                arr(PrimType::I64, vec![i64c(3)]),
                Exp::Iota {
                    n: i64c(3),
                    start: i64c(0),
                    stride: i64c(1),
                    it: IntType::I64,
                },
            );
            vec![i64c(3), var(&a)]
        });
        let else_b = b.body(|b| {
            let a = b.bind(
                "a",
                arr(PrimType::I64, vec![i64c(4)]),
                Exp::Iota {
                    n: i64c(4),
                    start: i64c(0),
                    stride: i64c(1),
                    it: IntType::I64,
                },
            );
            vec![i64c(4), var(&a)]
        });
        let m = b.fresh("m");
        let ys = b.fresh("ys");
        b.push(Stm {
            pat: Pat {
                elems: vec![
                    Param {
                        name: m.clone(),
                        ty: i64t(),
                    },
                    Param {
                        name: ys,
                        ty: arr(PrimType::I64, vec![var(&m)]),
                    },
                ],
            },
            exp: Exp::If {
                cond: var(&ps[4]),
                then_b,
                else_b,
                ret: vec![
                    i64t().to_ext(),
                    ExtType::Array {
                        elem: PrimType::I64,
                        shape: vec![ExtDim::Ext(0)],
                    },
                ],
            },
            attrs: Attrs::default(),
            loc: None,
        });
        vec![]
    }));
    let mk = |cond_i64: bool, else_val: SubExp| {
        main_fn(vec![], move |b, ps| {
            let then_b = b.body(|_| vec![f32c(1.0)]);
            let else_b = b.body(|_| vec![else_val]);
            let cond = if cond_i64 { var(&ps[3]) } else { var(&ps[4]) };
            b.bind(
                "r",
                f32t(),
                Exp::If {
                    cond,
                    then_b,
                    else_b,
                    ret: vec![f32t().to_ext()],
                },
            );
            vec![]
        })
    };
    ok(&mk(false, f32c(2.0)));
    bad(&mk(true, f32c(2.0)), "if condition");
    bad(&mk(false, i32c(2)), "else branch");
    bad(
        &main_fn(vec![], |b, ps| {
            let then_b = b.body(|_| vec![f32c(1.0)]);
            let else_b = b.body(|_| vec![f32c(1.0)]);
            b.bind(
                "r",
                f32t(),
                Exp::If {
                    cond: var(&ps[4]),
                    then_b,
                    else_b,
                    ret: vec![ExtType::Array {
                        elem: PrimType::F32,
                        shape: vec![ExtDim::Ext(3)],
                    }],
                },
            );
            vec![]
        }),
        "existential size ?3 out of range",
    );
}

/// `loop (acc: init_t = init) for i < bound / while c do acc + 1`.
fn loop_prog(init: SubExp, bound: Option<SubExp>, while_bool: bool, body_extra: bool) -> Program {
    main_fn(vec![], move |b, ps| {
        let acc = b.param("acc", f32t());
        let go = b.param("go", if while_bool { boolt() } else { f32t() });
        let (accn, gon) = (acc.name.clone(), go.name.clone());
        let body = b.body(|b| {
            let r = b.binop(BinOp::Add(PrimType::F32), var(&accn), f32c(1.0));
            let mut res = vec![var(&r), var(&gon)];
            if body_extra {
                res.push(f32c(0.0));
            }
            res
        });
        let form = match bound {
            Some(bound) => LoopForm::For {
                i: b.fresh("i"),
                it: IntType::I64,
                bound,
            },
            None => LoopForm::While(go.name.clone()),
        };
        let go_init = if while_bool { var(&ps[4]) } else { f32c(0.0) };
        let go_t = go.ty.clone();
        b.bind_many(
            &[("r", f32t()), ("g", go_t)],
            Exp::Loop {
                params: vec![(acc, init), (go, go_init)],
                form,
                body,
            },
        );
        vec![]
    })
}

#[test]
fn loops() {
    ok(&loop_prog(f32c(0.0), Some(i64c(10)), true, false));
    ok(&loop_prog(f32c(0.0), None, true, false));
    bad(
        &loop_prog(i32c(0), Some(i64c(10)), true, false),
        "initialised with 0i32",
    );
    bad(
        &loop_prog(f32c(0.0), Some(f32c(10.0)), true, false),
        "loop bound",
    );
    bad(
        &loop_prog(f32c(0.0), None, false, false),
        "while loop condition",
    );
    bad(
        &loop_prog(f32c(0.0), Some(i64c(3)), true, true),
        "loop body result: 3 values, expected 2",
    );
}

#[test]
fn maps() {
    ok(&main_fn(vec![], |b, ps| {
        let lam = b.lambda(&[("x", f32t())], vec![boolt()], |b, lp| {
            vec![var(&b.cmp(
                CmpOp::Lt(PrimType::F32),
                var(&lp[0]),
                f32c(0.0),
            ))]
        });
        b.map(var(&ps[0]), vec![ps[1].clone()], lam);
        vec![]
    }));
    bad(
        &main_fn(vec![], |b, ps| {
            let lam = b.lambda(&[("x", i64t())], vec![i64t()], |_, lp| vec![var(&lp[0])]);
            b.map(var(&ps[0]), vec![ps[1].clone()], lam);
            vec![]
        }),
        "map lambda params",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            let lam = b.lambda(&[("x", f32t())], vec![f32t()], |_, lp| vec![var(&lp[0])]);
            b.bind(
                "m",
                f32t(),
                Exp::Soac(Soac::Map {
                    w: var(&ps[0]),
                    arrs: vec![ps[1].clone()],
                    lam,
                }),
            );
            vec![]
        }),
        "pattern",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            let lam = b.lambda(&[("x", f32t())], vec![f32t()], |_, _| vec![i64c(1)]);
            b.map(var(&ps[0]), vec![ps[1].clone()], lam);
            vec![]
        }),
        "lambda result",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            let lam = b.lambda(&[("x", f32t())], vec![f32t()], |_, lp| vec![var(&lp[0])]);
            b.map(var(&ps[2]), vec![ps[1].clone()], lam);
            vec![]
        }),
        "map width",
    );
}

#[test]
fn reductions_and_scans() {
    ok(&main_fn(vec![], |b, ps| {
        let op = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
        b.reduce(var(&ps[0]), vec![ps[1].clone()], op);
        let op = binop_operator(
            b.ns,
            BinOp::Max(PrimType::F32),
            f32c(f32::NEG_INFINITY),
            true,
        );
        b.bind(
            "s",
            xs_t(ps),
            Exp::Soac(Soac::Scan {
                w: var(&ps[0]),
                arrs: vec![ps[1].clone()],
                op,
            }),
        );
        vec![]
    }));
    bad(
        &main_fn(vec![], |b, ps| {
            let op = binop_operator(b.ns, BinOp::Add(PrimType::F32), i32c(0), true);
            b.reduce(var(&ps[0]), vec![ps[1].clone()], op);
            vec![]
        }),
        "reduce neutral elements",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            let mut op = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
            op.lam.params.pop();
            b.reduce(var(&ps[0]), vec![ps[1].clone()], op);
            vec![]
        }),
        "needs 2 params",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            let op = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
            b.bind(
                "s",
                f32t(),
                Exp::Soac(Soac::Scan {
                    w: var(&ps[0]),
                    arrs: vec![ps[1].clone()],
                    op,
                }),
            );
            vec![]
        }),
        "pattern",
    );
}

#[test]
fn hist_and_scatter() {
    let is_t = arr(PrimType::I64, vec![i64c(4)]);
    let iota4 = || Exp::Iota {
        n: i64c(4),
        start: i64c(0),
        stride: i64c(1),
        it: IntType::I64,
    };
    let vals4 = || Exp::Replicate {
        shape: vec![i64c(4)],
        value: f32c(1.0),
    };
    let hist = |ndest: usize, scatter: bool| {
        let is_t = is_t.clone();
        main_fn(vec![], move |b, ps| {
            let is = b.bind("is", is_t.clone(), iota4());
            let vs = b.bind("vs", arr(PrimType::F32, vec![i64c(4)]), vals4());
            let dest: Vec<VName> = (0..ndest)
                .map(|_| {
                    b.bind(
                        "d",
                        arr(PrimType::F32, vec![i64c(8)]),
                        Exp::Replicate {
                            shape: vec![i64c(8)],
                            value: f32c(0.0),
                        },
                    )
                })
                .collect();
            let exp = if scatter {
                Exp::Soac(Soac::Scatter {
                    w: i64c(4),
                    dest,
                    inds: vec![is],
                    vals: vec![vs],
                })
            } else {
                let op = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
                Exp::Soac(Soac::Hist {
                    w: i64c(4),
                    dest,
                    op,
                    inds: is,
                    vals: vec![vs],
                })
            };
            let _ = ps;
            b.bind("h", arr(PrimType::F32, vec![i64c(8)]), exp);
            vec![]
        })
    };
    ok(&hist(1, false));
    ok(&hist(1, true));
    bad(
        &hist(2, false),
        "hist with 2 destinations and 1 value arrays",
    );
    bad(&hist(2, true), "scatter with 2 destinations");
    bad(
        &main_fn(vec![], |b, _| {
            let vs = b.bind("vs", arr(PrimType::F32, vec![i64c(4)]), vals4());
            let d = b.bind(
                "d",
                arr(PrimType::F32, vec![i64c(8)]),
                Exp::Replicate {
                    shape: vec![i64c(8)],
                    value: f32c(0.0),
                },
            );
            b.bind(
                "h",
                arr(PrimType::F32, vec![i64c(8)]),
                Exp::Soac(Soac::Scatter {
                    w: i64c(4),
                    dest: vec![d],
                    inds: vec![vs.clone()],
                    vals: vec![vs],
                }),
            );
            vec![]
        }),
        "scatter indices are not integers",
    );
}

/// `with_acc (xs) (\acc -> upd_acc acc [i] {v})`.
fn withacc_prog(v: SubExp, nidx: usize) -> Program {
    main_fn(vec![], move |b, ps| {
        let cert = b.fresh("cert");
        let acc_t = Type::Acc {
            cert,
            shape: vec![var(&ps[0])],
            elems: vec![f32t()],
        };
        let i = ps[3].clone();
        let lam = b.lambda(&[("acc", acc_t.clone())], vec![acc_t.clone()], |b, lp| {
            let a = b.bind(
                "a",
                acc_t.clone(),
                Exp::UpdAcc {
                    acc: lp[0].clone(),
                    idx: vec![var(&i); nidx],
                    vals: vec![v],
                },
            );
            vec![var(&a)]
        });
        let op = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
        b.bind(
            "r",
            xs_t(ps),
            Exp::WithAcc {
                inputs: vec![AccInput {
                    shape: vec![var(&ps[0])],
                    arrs: vec![ps[1].clone()],
                    op: Some(op),
                }],
                lam,
            },
        );
        vec![]
    })
}

#[test]
fn accumulators() {
    ok(&withacc_prog(f32c(1.0), 1));
    bad(&withacc_prog(i32c(1), 1), "upd_acc values");
    bad(&withacc_prog(f32c(1.0), 2), "upd_acc with 2 indices");
    bad(
        &main_fn(vec![], |b, ps| {
            let lam = b.lambda(&[], vec![], |_, _| vec![]);
            b.bind(
                "r",
                xs_t(ps),
                Exp::WithAcc {
                    inputs: vec![AccInput {
                        shape: vec![var(&ps[0])],
                        arrs: vec![ps[1].clone()],
                        op: None,
                    }],
                    lam,
                },
            );
            vec![]
        }),
        "with_acc of 1 inputs",
    );
}

fn call_prog(args: impl FnOnce(&[VName]) -> Vec<SubExp>, ret: Vec<ExtType>) -> Program {
    let mut ns = NameSource::default();
    let m = ns.fresh("m");
    let ys_t = arr(PrimType::F32, vec![var(&m)]);
    let callee = fun_sized(
        &mut ns,
        "sum",
        false,
        vec![m],
        |_, _| vec![("ys".into(), ys_t.clone())],
        vec![f32t().to_ext()],
        |b, ps| {
            let op = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
            let r = b.reduce(var(&ps[0]), vec![ps[1].clone()], op);
            vec![var(&r[0])]
        },
    );
    let n = ns.fresh("n");
    let xs_t = arr(PrimType::F32, vec![var(&n)]);
    let main = fun_sized(
        &mut ns,
        "main",
        true,
        vec![n],
        |_, _| vec![("xs".into(), xs_t.clone()), ("x".into(), f32t())],
        vec![],
        |b, ps| {
            b.bind(
                "r",
                f32t(),
                Exp::Apply {
                    fun: "sum".into(),
                    args: args(ps),
                    ret,
                },
            );
            vec![]
        },
    );
    program(ns, vec![callee, main])
}

#[test]
fn calls() {
    ok(&call_prog(
        |ps| vec![var(&ps[0]), var(&ps[1])],
        vec![f32t().to_ext()],
    ));
    bad(
        &call_prog(|ps| vec![var(&ps[1])], vec![f32t().to_ext()]),
        "sum takes 1 size arguments and 1 arguments",
    );
    bad(
        &call_prog(|ps| vec![var(&ps[0]), var(&ps[2])], vec![f32t().to_ext()]),
        "argument 0 of sum",
    );
    bad(
        &call_prog(|ps| vec![var(&ps[2]), var(&ps[1])], vec![f32t().to_ext()]),
        "size argument of sum",
    );
    bad(
        &call_prog(|ps| vec![var(&ps[0]), var(&ps[1])], vec![i64t().to_ext()]),
        "call of sum returns",
    );
    let mut p = call_prog(|ps| vec![var(&ps[0]), var(&ps[1])], vec![f32t().to_ext()]);
    p.funs[1].body.stms[0].exp = Exp::Apply {
        fun: "nope".into(),
        args: vec![],
        ret: vec![],
    };
    bad(&p, "unknown function nope");
}

#[test]
fn function_results_and_asserts() {
    ok(&main_fn(vec![f32t()], |b, ps| {
        b.assert(var(&ps[4]), "c");
        vec![var(&ps[2])]
    }));
    bad(
        &main_fn(vec![f32t()], |_, ps| vec![var(&ps[3])]),
        "function result: value 0 has type i64",
    );
    bad(
        &main_fn(vec![f32t()], |_, _| vec![]),
        "function result: 0 values, expected 1",
    );
    bad(
        &main_fn(vec![], |b, ps| {
            b.assert(var(&ps[2]), "c");
            vec![]
        }),
        "assertion",
    );
}

#[test]
fn error_names_function_and_statement() {
    let p = main_fn(vec![f32t()], |b, ps| {
        let y = b.bind(
            "y",
            f32t(),
            Exp::BinOp(
                BinOp::Add(PrimType::F32),
                var(&ps[2]),
                SubExp::Const(PrimValue::I8(1)),
            ),
        );
        vec![var(&y)]
    });
    let e = check_program(&p).unwrap_err();
    assert_eq!(e.fun, "main");
    assert_eq!(e.stm.as_deref(), Some("let y_6: f32 = f32.add x_3 1i8"));
}
