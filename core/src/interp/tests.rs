//! Interpreter tests on hand-built IR.

use super::*;
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};
use crate::value::{ArrayValue, Buffer};
use std::sync::Arc;

const I64: PrimType = PrimType::I64;
const F64: PrimType = PrimType::F64;
const BOOL: PrimType = PrimType::Bool;

/// A tiny IR builder for tests.
#[derive(Default)]
struct B {
    ns: NameSource,
}

impl B {
    fn v(&mut self, base: &str) -> VName {
        self.ns.fresh(base)
    }
}

fn var(v: &VName) -> SubExp {
    SubExp::Var(v.clone())
}
fn c64(x: i64) -> SubExp {
    SubExp::i64(x)
}
fn cf(x: f64) -> SubExp {
    SubExp::Const(PrimValue::F64(x))
}
fn prim(t: PrimType) -> Type {
    Type::Prim(t)
}
fn arr(t: PrimType, dims: Vec<SubExp>) -> Type {
    Type::array(t, dims)
}
fn param(v: &VName, ty: Type) -> Param {
    Param {
        name: v.clone(),
        ty,
    }
}
fn loc(line: u32) -> Option<SrcLoc> {
    Some(SrcLoc {
        file: Arc::from("t.fut"),
        line,
        col: 5,
    })
}
fn stm(pat: &[(&VName, Type)], exp: Exp) -> Stm {
    Stm {
        pat: Pat {
            elems: pat.iter().map(|(v, t)| param(v, t.clone())).collect(),
        },
        exp,
        attrs: Attrs::default(),
        loc: None,
    }
}
fn stm_at(pat: &[(&VName, Type)], exp: Exp, line: u32) -> Stm {
    Stm {
        loc: loc(line),
        ..stm(pat, exp)
    }
}
fn body(stms: Vec<Stm>, result: Vec<SubExp>) -> Body {
    Body { stms, result }
}
fn lam(params: Vec<Param>, stms: Vec<Stm>, result: Vec<SubExp>, ret: Vec<Type>) -> Lambda {
    Lambda {
        params,
        body: body(stms, result),
        ret,
    }
}
/// `\a b -> a op b` on type `t`.
fn binop_lam(b: &mut B, op: BinOp, t: PrimType) -> Lambda {
    let (x, y, r) = (b.v("x"), b.v("y"), b.v("r"));
    lam(
        vec![param(&x, prim(t)), param(&y, prim(t))],
        vec![stm(&[(&r, prim(t))], Exp::BinOp(op, var(&x), var(&y)))],
        vec![var(&r)],
        vec![prim(t)],
    )
}
fn entry(
    name: &str,
    size_params: Vec<VName>,
    params: Vec<Param>,
    body: Body,
    nret: usize,
) -> FunDef {
    FunDef {
        name: Arc::from(name),
        entry: Some(EntryPoint {
            name: Arc::from(name),
            param_counts: vec![1; params.len()],
            result_counts: vec![1; nret],
        }),
        size_params,
        params,
        ret: vec![],
        body,
        attrs: Attrs::default(),
    }
}
fn program(b: B, funs: Vec<FunDef>) -> Program {
    Program {
        funs,
        name_source: b.ns,
    }
}
fn vi64(xs: &[i64]) -> Value {
    Value::Array(ArrayValue::new(vec![xs.len()], Buffer::I64(xs.to_vec())))
}
fn vf64(xs: &[f64]) -> Value {
    Value::Array(ArrayValue::new(vec![xs.len()], Buffer::F64(xs.to_vec())))
}
fn vi64_2d(rows: usize, cols: usize, xs: &[i64]) -> Value {
    Value::Array(ArrayValue::new(vec![rows, cols], Buffer::I64(xs.to_vec())))
}
fn s64(x: i64) -> Value {
    Value::Scalar(PrimValue::I64(x))
}
fn run(p: &Program, args: Vec<Value>) -> Result<Vec<Value>, RuntimeError> {
    run_entry(p, "main", args)
}

/// `main [n] (xs: [n]i64) = map (\x -> x*2+1) xs |> reduce (+) 0`, also returning the map.
fn map_reduce_prog() -> Program {
    let mut b = B::default();
    let (n, xs, x, t1, t2, ys, s) = (
        b.v("n"),
        b.v("xs"),
        b.v("x"),
        b.v("t1"),
        b.v("t2"),
        b.v("ys"),
        b.v("s"),
    );
    let f = lam(
        vec![param(&x, prim(I64))],
        vec![
            stm(
                &[(&t1, prim(I64))],
                Exp::BinOp(BinOp::Mul(I64), var(&x), c64(2)),
            ),
            stm(
                &[(&t2, prim(I64))],
                Exp::BinOp(BinOp::Add(I64), var(&t1), c64(1)),
            ),
        ],
        vec![var(&t2)],
        vec![prim(I64)],
    );
    let plus = binop_lam(&mut b, BinOp::Add(I64), I64);
    let tn = arr(I64, vec![var(&n)]);
    let bd = body(
        vec![
            stm(
                &[(&ys, tn.clone())],
                Exp::Soac(Soac::Map {
                    w: var(&n),
                    arrs: vec![xs.clone()],
                    lam: f,
                }),
            ),
            stm(
                &[(&s, prim(I64))],
                Exp::Soac(Soac::Reduce {
                    w: var(&n),
                    arrs: vec![ys.clone()],
                    op: Operator {
                        lam: plus,
                        neutral: vec![c64(0)],
                        commutative: true,
                    },
                }),
            ),
        ],
        vec![var(&s), var(&ys)],
    );
    program(
        b,
        vec![entry("main", vec![n.clone()], vec![param(&xs, tn)], bd, 2)],
    )
}

#[test]
fn map_reduce_small() {
    let p = map_reduce_prog();
    let r = run(&p, vec![vi64(&[1, 2, 3])]).unwrap();
    assert_eq!(r, vec![s64(3 + 5 + 7), vi64(&[3, 5, 7])]);
    let r = run(&p, vec![vi64(&[])]).unwrap();
    assert_eq!(r, vec![s64(0), vi64(&[])]);
}

#[test]
fn map_reduce_large() {
    let p = map_reduce_prog();
    let n = 1_000_000i64;
    let xs: Vec<i64> = (0..n).collect();
    let r = run(&p, vec![vi64(&xs)]).unwrap();
    assert_eq!(r[0], s64(n * n));
}

/// Release-mode timing: `cargo test --release -p vkad-core --lib interp::tests::map_reduce_10m -- --ignored --nocapture`.
#[test]
#[ignore]
fn map_reduce_10m() {
    let p = map_reduce_prog();
    let n = 10_000_000i64;
    let xs: Vec<i64> = (0..n).collect();
    let t = std::time::Instant::now();
    let r = run(&p, vec![vi64(&xs)]).unwrap();
    println!("map-reduce over 10^7 elements: {:?}", t.elapsed());
    // For calibration on a loaded machine: the same computation in native Rust with a copy.
    let t = std::time::Instant::now();
    let ys: Vec<i64> = std::hint::black_box(&xs)
        .iter()
        .map(|x| x * 2 + 1)
        .collect();
    let s: i64 = ys.iter().sum();
    println!("native Rust (map into a Vec, then sum): {:?}", t.elapsed());
    assert_eq!(s, n * n);
    assert_eq!(r[0], s64(n * n));
}

#[test]
fn entry_argument_errors() {
    let p = map_reduce_prog();
    let e = run(&p, vec![]).unwrap_err();
    assert_eq!(e.message, "entry `main` expects 1 arguments, got 0");
    let e = run(&p, vec![vf64(&[1.0, 2.0, 3.0])]).unwrap_err();
    assert_eq!(e.message, "argument 1: expected []i64, got [3]f64");
    let e = run(&p, vec![s64(1)]).unwrap_err();
    assert_eq!(e.message, "argument 1: expected []i64, got i64");
    assert!(run_entry(&p, "nope", vec![])
        .unwrap_err()
        .message
        .contains("no entry point"));
    assert_eq!(e.to_string(), "argument 1: expected []i64, got i64");
}

#[test]
fn shape_mismatch_between_arguments() {
    // main [n] (xs: [n]i64) (ys: [n]i64) = xs
    let mut b = B::default();
    let (n, xs, ys) = (b.v("n"), b.v("xs"), b.v("ys"));
    let tn = arr(I64, vec![var(&n)]);
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone()],
            vec![param(&xs, tn.clone()), param(&ys, tn)],
            body(vec![], vec![var(&xs)]),
            1,
        )],
    );
    let e = run(&p, vec![vi64(&[1, 2]), vi64(&[1, 2, 3])]).unwrap_err();
    assert!(e.message.starts_with("shape mismatch"), "{}", e.message);
    assert_eq!(
        run(&p, vec![vi64(&[1, 2]), vi64(&[3, 4])]).unwrap(),
        vec![vi64(&[1, 2])]
    );
}

/// `main (xs: []i64) (i: i64) = xs[i]` at line 7, plus a slice `xs[i:i+2]` and a reversed copy.
#[test]
fn index_and_bounds() {
    let mut b = B::default();
    let (n, xs, i, r, i2, sl, rev) = (
        b.v("n"),
        b.v("xs"),
        b.v("i"),
        b.v("r"),
        b.v("i2"),
        b.v("sl"),
        b.v("rev"),
    );
    let tn = arr(I64, vec![var(&n)]);
    let bd = body(
        vec![
            stm_at(
                &[(&r, prim(I64))],
                Exp::Index(xs.clone(), vec![DimIndex::Fix(var(&i))]),
                7,
            ),
            stm(
                &[(&i2, prim(I64))],
                Exp::BinOp(BinOp::Add(I64), var(&i), c64(2)),
            ),
            stm_at(
                &[(&sl, arr(I64, vec![c64(2)]))],
                Exp::Index(
                    xs.clone(),
                    vec![DimIndex::Slice {
                        start: var(&i),
                        len: c64(2),
                        stride: c64(1),
                    }],
                ),
                8,
            ),
            stm_at(
                &[(&rev, tn.clone())],
                Exp::Index(
                    xs.clone(),
                    vec![DimIndex::Slice {
                        start: SubExp::Var(i.clone()),
                        len: SubExp::Var(i2.clone()),
                        stride: c64(-1),
                    }],
                ),
                9,
            ),
        ],
        vec![var(&r), var(&sl), var(&rev)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone()],
            vec![param(&xs, tn), param(&i, prim(I64))],
            bd,
            3,
        )],
    );
    let xs5 = vi64(&[10, 11, 12, 13, 14]);
    // i = 2: rev is xs[2:-1:-1] of length 4 -> out of bounds (needs indices 2,1,0,-1).
    let e = run(&p, vec![xs5.clone(), s64(2)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.fut:9:5: index [2:-2:-1] out of bounds for array of shape [5]"
    );
    let e = run(&p, vec![xs5.clone(), s64(5)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.fut:7:5: index [5] out of bounds for array of shape [5]"
    );
    let e = run(&p, vec![xs5.clone(), s64(-1)]).unwrap_err();
    assert_eq!(e.loc, loc(7));
    // i = 4: slice 4:6 out of bounds.
    let e = run(&p, vec![xs5.clone(), s64(4)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.fut:8:5: index [4:6] out of bounds for array of shape [5]"
    );
    // A 1-element array, i = 0: rev has length 2 -> out of bounds; use a longer array instead.
    let p2 = {
        let mut p2 = p.clone();
        // Change rev's length to i + 1 by pointing it at `i` plus a constant stride -1 over i+1.
        if let Exp::Index(_, d) = &mut p2.funs[0].body.stms[3].exp {
            d[0] = DimIndex::Slice {
                start: var(&i),
                len: c64(3),
                stride: c64(-1),
            };
        }
        p2
    };
    let r = run(&p2, vec![xs5, s64(2)]).unwrap();
    assert_eq!(r, vec![s64(12), vi64(&[12, 13]), vi64(&[12, 11, 10])]);
}

#[test]
fn two_dimensional_index_and_strided_slices() {
    // main (xss: [3][4]i64) = (xss[1], xss[:, 2], xss[2, 3], xss[0:3:2, 1:3])
    let mut b = B::default();
    let (xss, row, col, e, sub) = (b.v("xss"), b.v("row"), b.v("col"), b.v("e"), b.v("sub"));
    let t = arr(I64, vec![c64(3), c64(4)]);
    let full = |n: i64| DimIndex::Slice {
        start: c64(0),
        len: c64(n),
        stride: c64(1),
    };
    let bd = body(
        vec![
            stm(
                &[(&row, arr(I64, vec![c64(4)]))],
                Exp::Index(xss.clone(), vec![DimIndex::Fix(c64(1))]),
            ),
            stm(
                &[(&col, arr(I64, vec![c64(3)]))],
                Exp::Index(xss.clone(), vec![full(3), DimIndex::Fix(c64(2))]),
            ),
            stm(
                &[(&e, prim(I64))],
                Exp::Index(
                    xss.clone(),
                    vec![DimIndex::Fix(c64(2)), DimIndex::Fix(c64(3))],
                ),
            ),
            stm(
                &[(&sub, arr(I64, vec![c64(2), c64(2)]))],
                Exp::Index(
                    xss.clone(),
                    vec![
                        DimIndex::Slice {
                            start: c64(0),
                            len: c64(2),
                            stride: c64(2),
                        },
                        DimIndex::Slice {
                            start: c64(1),
                            len: c64(2),
                            stride: c64(1),
                        },
                    ],
                ),
            ),
        ],
        vec![var(&row), var(&col), var(&e), var(&sub)],
    );
    let p = program(b, vec![entry("main", vec![], vec![param(&xss, t)], bd, 4)]);
    let xs: Vec<i64> = (0..12).collect();
    let r = run(&p, vec![vi64_2d(3, 4, &xs)]).unwrap();
    assert_eq!(
        r,
        vec![
            vi64(&[4, 5, 6, 7]),
            vi64(&[2, 6, 10]),
            s64(11),
            vi64_2d(2, 2, &[1, 2, 9, 10])
        ]
    );
    let e = run(&p, vec![vi64_2d(2, 6, &xs)]).unwrap_err();
    assert_eq!(e.message, "argument 1: expected [3][4]i64, got [2][6]i64");
}

/// `loop xs = replicate n 0 for i < n do xs with [i] = i*i` must update in place: with copying
/// it would take O(n^2) time, which for n = 300000 would not finish in any reasonable time.
#[test]
fn loop_with_in_place_updates() {
    let mut b = B::default();
    let (n, z, xs, xs2, i, sq) = (
        b.v("n"),
        b.v("z"),
        b.v("xs"),
        b.v("xs2"),
        b.v("i"),
        b.v("sq"),
    );
    let tn = arr(I64, vec![var(&n)]);
    let bd = body(
        vec![
            stm(
                &[(&z, tn.clone())],
                Exp::Replicate {
                    shape: vec![var(&n)],
                    value: c64(0),
                },
            ),
            stm(
                &[(&xs2, tn.clone())],
                Exp::Loop {
                    params: vec![(param(&xs, tn.clone()), var(&z))],
                    form: LoopForm::For {
                        i: i.clone(),
                        it: IntType::I64,
                        bound: var(&n),
                    },
                    body: body(
                        vec![
                            stm(
                                &[(&sq, prim(I64))],
                                Exp::BinOp(BinOp::Mul(I64), var(&i), var(&i)),
                            ),
                            stm(&[(&b.v("u"), tn.clone())], Exp::SubExp(c64(0))),
                        ],
                        vec![],
                    ),
                },
            ),
        ],
        vec![var(&xs2)],
    );
    // Replace the placeholder statement with the update (needs the name of its own result).
    let mut bd = bd;
    let upd = b.v("upd");
    if let Exp::Loop { body: lb, .. } = &mut bd.stms[1].exp {
        lb.stms[1] = stm(
            &[(&upd, tn.clone())],
            Exp::Update(xs.clone(), vec![DimIndex::Fix(var(&i))], var(&sq)),
        );
        lb.result = vec![var(&upd)];
    }
    let p = program(
        b,
        vec![entry("main", vec![], vec![param(&n, prim(I64))], bd, 1)],
    );
    assert_eq!(run(&p, vec![s64(4)]).unwrap(), vec![vi64(&[0, 1, 4, 9])]);
    let n = 300_000;
    let r = run(&p, vec![s64(n)]).unwrap();
    match &r[0] {
        Value::Array(a) => {
            assert_eq!(a.shape, vec![n as usize]);
            assert_eq!(
                a.data.get(n as usize - 1),
                Some(PrimValue::I64((n - 1) * (n - 1)))
            );
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn update_does_not_affect_other_references() {
    // main (xs: [3]i64) = let ys = copy xs in (xs with [0] = 9, ys): consuming `xs` leaves `ys`.
    let mut b = B::default();
    let (xs, ys, zs, ws) = (b.v("xs"), b.v("ys"), b.v("zs"), b.v("ws"));
    let t = arr(I64, vec![c64(3)]);
    let bd = body(
        vec![
            stm(&[(&ys, t.clone())], Exp::SubExp(var(&xs))),
            stm(
                &[(&zs, t.clone())],
                Exp::Update(xs.clone(), vec![DimIndex::Fix(c64(0))], c64(9)),
            ),
            // A slice update with an array value.
            stm(
                &[(&ws, t.clone())],
                Exp::Update(
                    zs.clone(),
                    vec![DimIndex::Slice {
                        start: c64(1),
                        len: c64(2),
                        stride: c64(1),
                    }],
                    var(&b.v("unused")),
                ),
            ),
        ],
        vec![var(&zs), var(&ys)],
    );
    let mut bd = bd;
    bd.stms.pop();
    let p = program(b, vec![entry("main", vec![], vec![param(&xs, t)], bd, 2)]);
    assert_eq!(
        run(&p, vec![vi64(&[1, 2, 3])]).unwrap(),
        vec![vi64(&[9, 2, 3]), vi64(&[1, 2, 3])]
    );
}

#[test]
fn slice_update_with_array_and_out_of_bounds() {
    // main (xs: [4]i64) (i: i64) = xs with [i:i+2] = [7, 8]
    let mut b = B::default();
    let (xs, i, lit, r) = (b.v("xs"), b.v("i"), b.v("lit"), b.v("r"));
    let t = arr(I64, vec![c64(4)]);
    let bd = body(
        vec![
            stm(
                &[(&lit, arr(I64, vec![c64(2)]))],
                Exp::ArrayLit {
                    elems: vec![c64(7), c64(8)],
                    row: prim(I64),
                },
            ),
            stm_at(
                &[(&r, t.clone())],
                Exp::Update(
                    xs.clone(),
                    vec![DimIndex::Slice {
                        start: var(&i),
                        len: c64(2),
                        stride: c64(1),
                    }],
                    var(&lit),
                ),
                3,
            ),
        ],
        vec![var(&r)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![],
            vec![param(&xs, t), param(&i, prim(I64))],
            bd,
            1,
        )],
    );
    assert_eq!(
        run(&p, vec![vi64(&[1, 2, 3, 4]), s64(1)]).unwrap(),
        vec![vi64(&[1, 7, 8, 4])]
    );
    let e = run(&p, vec![vi64(&[1, 2, 3, 4]), s64(3)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.fut:3:5: index [3:5] out of bounds for array of shape [4]"
    );
}

#[test]
fn map_with_mismatched_sizes() {
    // main (xs: []i64) (ys: []i64) = map2 (+) xs ys, with w taken from xs.
    let mut b = B::default();
    let (n, m, xs, ys, r) = (b.v("n"), b.v("m"), b.v("xs"), b.v("ys"), b.v("r"));
    let plus = binop_lam(&mut b, BinOp::Add(I64), I64);
    let bd = body(
        vec![stm_at(
            &[(&r, arr(I64, vec![var(&n)]))],
            Exp::Soac(Soac::Map {
                w: var(&n),
                arrs: vec![xs.clone(), ys.clone()],
                lam: plus,
            }),
            4,
        )],
        vec![var(&r)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone(), m.clone()],
            vec![
                param(&xs, arr(I64, vec![var(&n)])),
                param(&ys, arr(I64, vec![var(&m)])),
            ],
            bd,
            1,
        )],
    );
    assert_eq!(
        run(&p, vec![vi64(&[1, 2]), vi64(&[10, 20])]).unwrap(),
        vec![vi64(&[11, 22])]
    );
    let e = run(&p, vec![vi64(&[1, 2]), vi64(&[10, 20, 30])]).unwrap_err();
    assert_eq!(e.loc, loc(4));
    assert!(
        e.message.contains("does not have outer size 2"),
        "{}",
        e.message
    );
}

#[test]
fn division_by_zero_reports_location() {
    let mut b = B::default();
    let (x, y, r) = (b.v("x"), b.v("y"), b.v("r"));
    let bd = body(
        vec![stm_at(
            &[(&r, prim(I64))],
            Exp::BinOp(BinOp::Div(I64), var(&x), var(&y)),
            12,
        )],
        vec![var(&r)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![],
            vec![param(&x, prim(I64)), param(&y, prim(I64))],
            bd,
            1,
        )],
    );
    assert_eq!(run(&p, vec![s64(-7), s64(2)]).unwrap(), vec![s64(-4)]);
    let e = run(&p, vec![s64(1), s64(0)]).unwrap_err();
    assert_eq!(e.to_string(), "t.fut:12:5: division by zero");
}

#[test]
fn reshape_rearrange_and_errors() {
    // main (xs: [6]i64) (k: i64) = let a = reshape [2][3] xs in (transpose a, reshape [k] xs)
    let mut b = B::default();
    let (xs, k, a, t, r) = (b.v("xs"), b.v("k"), b.v("a"), b.v("t"), b.v("r"));
    let bd = body(
        vec![
            stm(
                &[(&a, arr(I64, vec![c64(2), c64(3)]))],
                Exp::Reshape(vec![c64(2), c64(3)], xs.clone()),
            ),
            stm(
                &[(&t, arr(I64, vec![c64(3), c64(2)]))],
                Exp::Rearrange(vec![1, 0], a.clone()),
            ),
            stm_at(
                &[(&r, arr(I64, vec![var(&k)]))],
                Exp::Reshape(vec![var(&k)], xs.clone()),
                2,
            ),
        ],
        vec![var(&t), var(&r)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![],
            vec![param(&xs, arr(I64, vec![c64(6)])), param(&k, prim(I64))],
            bd,
            2,
        )],
    );
    let xs = vi64(&[0, 1, 2, 3, 4, 5]);
    assert_eq!(
        run(&p, vec![xs.clone(), s64(6)]).unwrap(),
        vec![vi64_2d(3, 2, &[0, 3, 1, 4, 2, 5]), xs.clone()]
    );
    let e = run(&p, vec![xs, s64(5)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.fut:2:5: cannot reshape array of shape [6] to shape [5]"
    );
}

#[test]
fn iota_replicate_arraylit_concat_copy() {
    let mut b = B::default();
    let (io, row, rep, lit, c0, c1, cp, io8) = (
        b.v("io"),
        b.v("row"),
        b.v("rep"),
        b.v("lit"),
        b.v("c0"),
        b.v("c1"),
        b.v("cp"),
        b.v("io8"),
    );
    let t = |d: Vec<i64>| arr(I64, d.into_iter().map(c64).collect());
    let bd = body(
        vec![
            stm(
                &[(&io, t(vec![4]))],
                Exp::Iota {
                    n: c64(4),
                    start: c64(10),
                    stride: c64(-3),
                    it: IntType::I64,
                },
            ),
            stm(
                &[(&io8, arr(PrimType::Int(IntType::I8), vec![c64(3)]))],
                Exp::Iota {
                    n: c64(3),
                    start: SubExp::Const(PrimValue::I8(126)),
                    stride: SubExp::Const(PrimValue::I8(1)),
                    it: IntType::I8,
                },
            ),
            stm(
                &[(&row, t(vec![2]))],
                Exp::ArrayLit {
                    elems: vec![c64(1), c64(2)],
                    row: prim(I64),
                },
            ),
            stm(
                &[(&rep, t(vec![3, 2]))],
                Exp::Replicate {
                    shape: vec![c64(3)],
                    value: var(&row),
                },
            ),
            stm(
                &[(&lit, t(vec![2, 2]))],
                Exp::ArrayLit {
                    elems: vec![var(&row), var(&row)],
                    row: t(vec![2]),
                },
            ),
            stm(
                &[(&c0, t(vec![5, 2]))],
                Exp::Concat {
                    dim: 0,
                    arrs: vec![rep.clone(), lit.clone()],
                    w: c64(5),
                },
            ),
            stm(
                &[(&c1, t(vec![2, 4]))],
                Exp::Concat {
                    dim: 1,
                    arrs: vec![lit.clone(), lit.clone()],
                    w: c64(4),
                },
            ),
            stm(&[(&cp, t(vec![4]))], Exp::Copy(io.clone())),
        ],
        vec![var(&cp), var(&io8), var(&c0), var(&c1)],
    );
    let p = program(b, vec![entry("main", vec![], vec![], bd, 4)]);
    let r = run(&p, vec![]).unwrap();
    assert_eq!(r[0], vi64(&[10, 7, 4, 1]));
    assert_eq!(
        r[1],
        Value::Array(ArrayValue::new(vec![3], Buffer::I8(vec![126, 127, -128])))
    );
    assert_eq!(r[2], vi64_2d(5, 2, &[1, 2, 1, 2, 1, 2, 1, 2, 1, 2]));
    assert_eq!(r[3], vi64_2d(2, 4, &[1, 2, 1, 2, 1, 2, 1, 2]));
}

#[test]
fn concat_size_mismatch_and_empty_literal() {
    let mut b = B::default();
    let (xs, ys, c, e) = (b.v("xs"), b.v("ys"), b.v("c"), b.v("e"));
    let bd = body(
        vec![
            stm(
                &[(&e, arr(F64, vec![c64(0), c64(3)]))],
                Exp::ArrayLit {
                    elems: vec![],
                    row: arr(F64, vec![c64(3)]),
                },
            ),
            stm_at(
                &[(&c, arr(I64, vec![c64(4)]))],
                Exp::Concat {
                    dim: 0,
                    arrs: vec![xs.clone(), ys.clone()],
                    w: c64(4),
                },
                6,
            ),
        ],
        vec![var(&c), var(&e)],
    );
    let t = arr(I64, vec![c64(2)]);
    let p = program(
        b,
        vec![entry(
            "main",
            vec![],
            vec![param(&xs, t.clone()), param(&ys, t)],
            bd,
            2,
        )],
    );
    let r = run(&p, vec![vi64(&[1, 2]), vi64(&[3, 4])]).unwrap();
    assert_eq!(r[0], vi64(&[1, 2, 3, 4]));
    assert_eq!(
        r[1],
        Value::Array(ArrayValue::new(vec![0, 3], Buffer::F64(vec![])))
    );
    // Wrong declared size (the argument types are not checked against constants here: use w).
    let mut p2 = p.clone();
    if let Exp::Concat { w, .. } = &mut p2.funs[0].body.stms[1].exp {
        *w = c64(5);
    }
    let e = run(&p2, vec![vi64(&[1, 2]), vi64(&[3, 4])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.fut:6:5: concatenation has size 4, expected 5"
    );
}

#[test]
fn assert_if_and_apply() {
    // def f [n] (xs: [n]i64) (d: i64) = assert (d != 0) (map (\x -> x / d) xs)
    // main xs d = if d < 0 then f xs (-d) else f xs d
    let mut b = B::default();
    let (n, xs, d, ok, nz, r, x, q) = (
        b.v("n"),
        b.v("xs"),
        b.v("d"),
        b.v("ok"),
        b.v("nz"),
        b.v("r"),
        b.v("x"),
        b.v("q"),
    );
    let tn = arr(I64, vec![var(&n)]);
    let div = lam(
        vec![param(&x, prim(I64))],
        vec![stm(
            &[(&q, prim(I64))],
            Exp::BinOp(BinOp::Div(I64), var(&x), var(&d)),
        )],
        vec![var(&q)],
        vec![prim(I64)],
    );
    let f = FunDef {
        name: Arc::from("f"),
        entry: None,
        size_params: vec![n.clone()],
        params: vec![param(&xs, tn.clone()), param(&d, prim(I64))],
        ret: vec![tn.to_ext()],
        body: body(
            vec![
                stm(
                    &[(&ok, prim(BOOL))],
                    Exp::CmpOp(CmpOp::Eq(I64), var(&d), c64(0)),
                ),
                stm(&[(&nz, prim(BOOL))], Exp::UnOp(UnOp::Not(BOOL), var(&ok))),
                stm_at(
                    &[],
                    Exp::Assert {
                        cond: var(&nz),
                        msg: "divisor is zero".into(),
                        args: vec![],
                    },
                    20,
                ),
                stm(
                    &[(&r, tn.clone())],
                    Exp::Soac(Soac::Map {
                        w: var(&n),
                        arrs: vec![xs.clone()],
                        lam: div,
                    }),
                ),
            ],
            vec![var(&r)],
        ),
        attrs: Attrs::default(),
    };
    let (m, ys, e, neg, nd, ra, rb, res) = (
        b.v("m"),
        b.v("ys"),
        b.v("e"),
        b.v("neg"),
        b.v("nd"),
        b.v("ra"),
        b.v("rb"),
        b.v("res"),
    );
    let tm = arr(I64, vec![var(&m)]);
    let call = |arg: SubExp, out: &VName| {
        stm(
            &[(out, tm.clone())],
            Exp::Apply {
                fun: Arc::from("f"),
                args: vec![var(&m), var(&ys), arg],
                ret: vec![tm.to_ext()],
            },
        )
    };
    let main = entry(
        "main",
        vec![m.clone()],
        vec![param(&ys, tm.clone()), param(&e, prim(I64))],
        body(
            vec![
                stm(
                    &[(&neg, prim(BOOL))],
                    Exp::CmpOp(CmpOp::Lt(I64), var(&e), c64(0)),
                ),
                stm(
                    &[(&res, tm.clone())],
                    Exp::If {
                        cond: var(&neg),
                        then_b: body(
                            vec![
                                stm(&[(&nd, prim(I64))], Exp::UnOp(UnOp::Neg(I64), var(&e))),
                                call(var(&nd), &ra),
                            ],
                            vec![var(&ra)],
                        ),
                        else_b: body(vec![call(var(&e), &rb)], vec![var(&rb)]),
                        ret: vec![tm.to_ext()],
                    },
                ),
            ],
            vec![var(&res)],
        ),
        1,
    );
    let p = program(b, vec![f, main]);
    assert_eq!(
        run(&p, vec![vi64(&[-7, 7, 8]), s64(2)]).unwrap(),
        vec![vi64(&[-4, 3, 4])]
    );
    assert_eq!(
        run(&p, vec![vi64(&[-7, 7, 8]), s64(-2)]).unwrap(),
        vec![vi64(&[-4, 3, 4])]
    );
    let err = run(&p, vec![vi64(&[1]), s64(0)]).unwrap_err();
    assert_eq!(err.to_string(), "t.fut:20:5: divisor is zero");
}

#[test]
fn while_loop() {
    // main (x: i64) = loop (x, go = true) while go do let x' = x * 2 in (x', x' < 100)
    let mut b = B::default();
    let (x0, x, go, x2, go2, rx, rg) = (
        b.v("x0"),
        b.v("x"),
        b.v("go"),
        b.v("x2"),
        b.v("go2"),
        b.v("rx"),
        b.v("rg"),
    );
    let bd = body(
        vec![stm(
            &[(&rx, prim(I64)), (&rg, prim(BOOL))],
            Exp::Loop {
                params: vec![
                    (param(&x, prim(I64)), var(&x0)),
                    (param(&go, prim(BOOL)), SubExp::Const(PrimValue::Bool(true))),
                ],
                form: LoopForm::While(go.clone()),
                body: body(
                    vec![
                        stm(
                            &[(&x2, prim(I64))],
                            Exp::BinOp(BinOp::Mul(I64), var(&x), c64(2)),
                        ),
                        stm(
                            &[(&go2, prim(BOOL))],
                            Exp::CmpOp(CmpOp::Lt(I64), var(&x2), c64(100)),
                        ),
                    ],
                    vec![var(&x2), var(&go2)],
                ),
            },
        )],
        vec![var(&rx)],
    );
    let p = program(
        b,
        vec![entry("main", vec![], vec![param(&x0, prim(I64))], bd, 1)],
    );
    assert_eq!(run(&p, vec![s64(3)]).unwrap(), vec![s64(192)]);
}

#[test]
fn nested_maps_over_2d_arrays() {
    // main (xss: [n][m]f64) = (map (map (*2)) xss, map (reduce (+) 0) xss)
    let mut b = B::default();
    let (n, m, xss, row, x, y, inner, r1, row2, s, r2) = (
        b.v("n"),
        b.v("m"),
        b.v("xss"),
        b.v("row"),
        b.v("x"),
        b.v("y"),
        b.v("inner"),
        b.v("r1"),
        b.v("row2"),
        b.v("s"),
        b.v("r2"),
    );
    let tm = arr(F64, vec![var(&m)]);
    let tnm = arr(F64, vec![var(&n), var(&m)]);
    let times2 = lam(
        vec![param(&x, prim(F64))],
        vec![stm(
            &[(&y, prim(F64))],
            Exp::BinOp(BinOp::Mul(F64), var(&x), cf(2.0)),
        )],
        vec![var(&y)],
        vec![prim(F64)],
    );
    let outer = lam(
        vec![param(&row, tm.clone())],
        vec![stm(
            &[(&inner, tm.clone())],
            Exp::Soac(Soac::Map {
                w: var(&m),
                arrs: vec![row.clone()],
                lam: times2,
            }),
        )],
        vec![var(&inner)],
        vec![tm.clone()],
    );
    let plus = binop_lam(&mut b, BinOp::Add(F64), F64);
    let sum_rows = lam(
        vec![param(&row2, tm.clone())],
        vec![stm(
            &[(&s, prim(F64))],
            Exp::Soac(Soac::Reduce {
                w: var(&m),
                arrs: vec![row2.clone()],
                op: Operator {
                    lam: plus,
                    neutral: vec![cf(0.0)],
                    commutative: true,
                },
            }),
        )],
        vec![var(&s)],
        vec![prim(F64)],
    );
    let bd = body(
        vec![
            stm(
                &[(&r1, tnm.clone())],
                Exp::Soac(Soac::Map {
                    w: var(&n),
                    arrs: vec![xss.clone()],
                    lam: outer,
                }),
            ),
            stm(
                &[(&r2, arr(F64, vec![var(&n)]))],
                Exp::Soac(Soac::Map {
                    w: var(&n),
                    arrs: vec![xss.clone()],
                    lam: sum_rows,
                }),
            ),
        ],
        vec![var(&r1), var(&r2)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone(), m.clone()],
            vec![param(&xss, tnm)],
            bd,
            2,
        )],
    );
    let input = Value::Array(ArrayValue::new(
        vec![2, 3],
        Buffer::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    ));
    let r = run(&p, vec![input]).unwrap();
    assert_eq!(
        r[0],
        Value::Array(ArrayValue::new(
            vec![2, 3],
            Buffer::F64(vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0])
        ))
    );
    assert_eq!(r[1], vf64(&[6.0, 15.0]));
    // Empty outer dimension keeps the inner size.
    let empty = Value::Array(ArrayValue::new(vec![0, 3], Buffer::F64(vec![])));
    let r = run(&p, vec![empty]).unwrap();
    assert_eq!(
        r[0],
        Value::Array(ArrayValue::new(vec![0, 3], Buffer::F64(vec![])))
    );
}

#[test]
fn scans_and_general_reduce() {
    // main (xs: [n]i64) = (scan (+) 0 xs, scan (-) 0 xs  [generic path: Sub is not a fast op],
    //   reduce argmax over (xs, iota n))
    let mut b = B::default();
    let (n, xs, s1, s2, io, mv, mi) = (
        b.v("n"),
        b.v("xs"),
        b.v("s1"),
        b.v("s2"),
        b.v("io"),
        b.v("mv"),
        b.v("mi"),
    );
    let tn = arr(I64, vec![var(&n)]);
    let plus = binop_lam(&mut b, BinOp::Add(I64), I64);
    let minus = binop_lam(&mut b, BinOp::Sub(I64), I64);
    // argmax: (v1, i1) (v2, i2) -> if v2 > v1 then (v2, i2) else (v1, i1)
    let (v1, i1, v2, i2, gt, rv, ri) = (
        b.v("v1"),
        b.v("i1"),
        b.v("v2"),
        b.v("i2"),
        b.v("gt"),
        b.v("rv"),
        b.v("ri"),
    );
    let argmax = lam(
        vec![
            param(&v1, prim(I64)),
            param(&i1, prim(I64)),
            param(&v2, prim(I64)),
            param(&i2, prim(I64)),
        ],
        vec![
            stm(
                &[(&gt, prim(BOOL))],
                Exp::CmpOp(CmpOp::Lt(I64), var(&v1), var(&v2)),
            ),
            stm(
                &[(&rv, prim(I64)), (&ri, prim(I64))],
                Exp::If {
                    cond: var(&gt),
                    then_b: body(vec![], vec![var(&v2), var(&i2)]),
                    else_b: body(vec![], vec![var(&v1), var(&i1)]),
                    ret: vec![ExtType::Prim(I64), ExtType::Prim(I64)],
                },
            ),
        ],
        vec![var(&rv), var(&ri)],
        vec![prim(I64), prim(I64)],
    );
    let bd = body(
        vec![
            stm(
                &[(&s1, tn.clone())],
                Exp::Soac(Soac::Scan {
                    w: var(&n),
                    arrs: vec![xs.clone()],
                    op: Operator {
                        lam: plus,
                        neutral: vec![c64(0)],
                        commutative: true,
                    },
                }),
            ),
            stm(
                &[(&s2, tn.clone())],
                Exp::Soac(Soac::Scan {
                    w: var(&n),
                    arrs: vec![xs.clone()],
                    op: Operator {
                        lam: minus,
                        neutral: vec![c64(0)],
                        commutative: false,
                    },
                }),
            ),
            stm(
                &[(&io, tn.clone())],
                Exp::Iota {
                    n: var(&n),
                    start: c64(0),
                    stride: c64(1),
                    it: IntType::I64,
                },
            ),
            stm(
                &[(&mv, prim(I64)), (&mi, prim(I64))],
                Exp::Soac(Soac::Reduce {
                    w: var(&n),
                    arrs: vec![xs.clone(), io.clone()],
                    op: Operator {
                        lam: argmax,
                        neutral: vec![c64(i64::MIN), c64(-1)],
                        commutative: false,
                    },
                }),
            ),
        ],
        vec![var(&s1), var(&s2), var(&mv), var(&mi)],
    );
    let p = program(
        b,
        vec![entry("main", vec![n.clone()], vec![param(&xs, tn)], bd, 4)],
    );
    let r = run(&p, vec![vi64(&[3, 9, 2, 9, 1])]).unwrap();
    assert_eq!(
        r,
        vec![
            vi64(&[3, 12, 14, 23, 24]),
            vi64(&[-3, -12, -14, -23, -24]),
            s64(9),
            s64(1)
        ]
    );
}

#[test]
fn hist_with_out_of_range_and_duplicates() {
    // main (dest: [4]i64) (is: [n]i64) (vs: [n]i64) = reduce_by_index dest (+) 0 is vs, and the same
    // with a generic operator (max written as a lambda with an if) on f64.
    let mut b = B::default();
    let (n, dest, is, vs, r) = (b.v("n"), b.v("dest"), b.v("is"), b.v("vs"), b.v("r"));
    let tn = arr(I64, vec![var(&n)]);
    let plus = binop_lam(&mut b, BinOp::Add(I64), I64);
    let bd = body(
        vec![stm(
            &[(&r, arr(I64, vec![c64(4)]))],
            Exp::Soac(Soac::Hist {
                w: var(&n),
                dest: vec![dest.clone()],
                op: Operator {
                    lam: plus,
                    neutral: vec![c64(0)],
                    commutative: true,
                },
                inds: is.clone(),
                vals: vec![vs.clone()],
            }),
        )],
        vec![var(&r)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone()],
            vec![
                param(&dest, arr(I64, vec![c64(4)])),
                param(&is, tn.clone()),
                param(&vs, tn),
            ],
            bd,
            1,
        )],
    );
    let r = run(
        &p,
        vec![
            vi64(&[100, 0, 0, 0]),
            vi64(&[0, 2, 2, -1, 4, 0, 3]),
            vi64(&[1, 2, 3, 4, 5, 6, 7]),
        ],
    )
    .unwrap();
    assert_eq!(r, vec![vi64(&[107, 0, 5, 7])]);
}

#[test]
fn hist_with_array_rows_and_generic_operator() {
    // dest: [3][2]i64, vals: [n][2]i64, op = map2 (+) as a lambda over rows.
    let mut b = B::default();
    let (n, dest, is, vs, r) = (b.v("n"), b.v("dest"), b.v("is"), b.v("vs"), b.v("r"));
    let t2 = arr(I64, vec![c64(2)]);
    let (a, c, s) = (b.v("a"), b.v("c"), b.v("s"));
    let plus = binop_lam(&mut b, BinOp::Add(I64), I64);
    let vec_plus = lam(
        vec![param(&a, t2.clone()), param(&c, t2.clone())],
        vec![stm(
            &[(&s, t2.clone())],
            Exp::Soac(Soac::Map {
                w: c64(2),
                arrs: vec![a.clone(), c.clone()],
                lam: plus,
            }),
        )],
        vec![var(&s)],
        vec![t2.clone()],
    );
    let zero2 = b.v("zero2");
    let bd = body(
        vec![
            stm(
                &[(&zero2, t2.clone())],
                Exp::Replicate {
                    shape: vec![c64(2)],
                    value: c64(0),
                },
            ),
            stm(
                &[(&r, arr(I64, vec![c64(3), c64(2)]))],
                Exp::Soac(Soac::Hist {
                    w: var(&n),
                    dest: vec![dest.clone()],
                    op: Operator {
                        lam: vec_plus,
                        neutral: vec![var(&zero2)],
                        commutative: true,
                    },
                    inds: is.clone(),
                    vals: vec![vs.clone()],
                }),
            ),
        ],
        vec![var(&r)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone()],
            vec![
                param(&dest, arr(I64, vec![c64(3), c64(2)])),
                param(&is, arr(I64, vec![var(&n)])),
                param(&vs, arr(I64, vec![var(&n), c64(2)])),
            ],
            bd,
            1,
        )],
    );
    let r = run(
        &p,
        vec![
            vi64_2d(3, 2, &[0; 6]),
            vi64(&[1, 5, 1, 0]),
            vi64_2d(4, 2, &[1, 2, 3, 4, 5, 6, 7, 8]),
        ],
    )
    .unwrap();
    assert_eq!(r, vec![vi64_2d(3, 2, &[7, 8, 6, 8, 0, 0])]);
}

#[test]
fn scatter_1d_and_2d() {
    // main (d: [5]i64) (is: [n]i64) (vs: [n]i64) (m: [2][3]i64) (rs: [k]i64) (cs: [k]i64) (ws: [k]i64)
    let mut b = B::default();
    let (n, k, d, is, vs, m, rs, cs, ws, r1, r2) = (
        b.v("n"),
        b.v("k"),
        b.v("d"),
        b.v("is"),
        b.v("vs"),
        b.v("m"),
        b.v("rs"),
        b.v("cs"),
        b.v("ws"),
        b.v("r1"),
        b.v("r2"),
    );
    let tn = arr(I64, vec![var(&n)]);
    let tk = arr(I64, vec![var(&k)]);
    let bd = body(
        vec![
            stm(
                &[(&r1, arr(I64, vec![c64(5)]))],
                Exp::Soac(Soac::Scatter {
                    w: var(&n),
                    dest: vec![d.clone()],
                    inds: vec![is.clone()],
                    vals: vec![vs.clone()],
                }),
            ),
            stm(
                &[(&r2, arr(I64, vec![c64(2), c64(3)]))],
                Exp::Soac(Soac::Scatter {
                    w: var(&k),
                    dest: vec![m.clone()],
                    inds: vec![rs.clone(), cs.clone()],
                    vals: vec![ws.clone()],
                }),
            ),
        ],
        vec![var(&r1), var(&r2)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone(), k.clone()],
            vec![
                param(&d, arr(I64, vec![c64(5)])),
                param(&is, tn.clone()),
                param(&vs, tn),
                param(&m, arr(I64, vec![c64(2), c64(3)])),
                param(&rs, tk.clone()),
                param(&cs, tk.clone()),
                param(&ws, tk),
            ],
            bd,
            2,
        )],
    );
    let r = run(
        &p,
        vec![
            vi64(&[0, 0, 0, 0, 0]),
            vi64(&[1, 7, 1, -1, 4]),
            vi64(&[10, 20, 30, 40, 50]),
            vi64_2d(2, 3, &[0; 6]),
            vi64(&[0, 1, 2, 1]),
            vi64(&[2, 0, 0, 3]),
            vi64(&[1, 2, 3, 4]),
        ],
    )
    .unwrap();
    assert_eq!(
        r,
        vec![vi64(&[0, 30, 0, 0, 50]), vi64_2d(2, 3, &[0, 0, 1, 2, 0, 0])]
    );
}

#[test]
fn with_acc_and_upd_acc() {
    // withacc [(shape [4], [dest], Some (+))] (\acc -> map (\acc' i v -> upd acc' [i] v) acc is vs)
    // plus a second input with op None (overwrite); the lambda also returns an extra result.
    let mut b = B::default();
    let (n, dest, dest2, is, vs, acc, acc2, a_in, i, v, upd1, mapped, r1, r2, extra) = (
        b.v("n"),
        b.v("dest"),
        b.v("dest2"),
        b.v("is"),
        b.v("vs"),
        b.v("acc"),
        b.v("acc2"),
        b.v("a_in"),
        b.v("i"),
        b.v("v"),
        b.v("upd1"),
        b.v("mapped"),
        b.v("r1"),
        b.v("r2"),
        b.v("extra"),
    );
    let (acc2b,) = (b.v("acc2b"),);
    let t4 = arr(I64, vec![c64(4)]);
    let acc_t = |c: &VName| Type::Acc {
        cert: c.clone(),
        shape: vec![c64(4)],
        elems: vec![prim(I64)],
    };
    let plus = binop_lam(&mut b, BinOp::Add(I64), I64);
    let upd_lam = lam(
        vec![
            param(&a_in, acc_t(&acc)),
            param(&i, prim(I64)),
            param(&v, prim(I64)),
        ],
        vec![stm(
            &[(&upd1, acc_t(&acc))],
            Exp::UpdAcc {
                acc: a_in.clone(),
                idx: vec![var(&i)],
                vals: vec![var(&v)],
            },
        )],
        vec![var(&upd1)],
        vec![acc_t(&acc)],
    );
    let body_lam = lam(
        vec![param(&acc, acc_t(&acc)), param(&acc2, acc_t(&acc2))],
        vec![
            stm(
                &[(&mapped, acc_t(&acc))],
                Exp::Soac(Soac::Map {
                    w: var(&n),
                    arrs: vec![acc.clone(), is.clone(), vs.clone()],
                    lam: upd_lam,
                }),
            ),
            stm(
                &[(&acc2b, acc_t(&acc2))],
                Exp::UpdAcc {
                    acc: acc2.clone(),
                    idx: vec![c64(2)],
                    vals: vec![c64(99)],
                },
            ),
            stm(&[(&extra, prim(I64))], Exp::SubExp(c64(5))),
        ],
        vec![var(&mapped), var(&acc2b), var(&extra)],
        vec![acc_t(&acc), acc_t(&acc2), prim(I64)],
    );
    let bd = body(
        vec![stm(
            &[
                (&r1, t4.clone()),
                (&r2, t4.clone()),
                (&b.v("ex"), prim(I64)),
            ],
            Exp::WithAcc {
                inputs: vec![
                    AccInput {
                        shape: vec![c64(4)],
                        arrs: vec![dest.clone()],
                        op: Some(Operator {
                            lam: plus,
                            neutral: vec![c64(0)],
                            commutative: true,
                        }),
                    },
                    AccInput {
                        shape: vec![c64(4)],
                        arrs: vec![dest2.clone()],
                        op: None,
                    },
                ],
                lam: body_lam,
            },
        )],
        vec![var(&r1), var(&r2)],
    );
    let tn = arr(I64, vec![var(&n)]);
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone()],
            vec![
                param(&dest, t4.clone()),
                param(&dest2, t4),
                param(&is, tn.clone()),
                param(&vs, tn),
            ],
            bd,
            2,
        )],
    );
    let r = run(
        &p,
        vec![
            vi64(&[1, 1, 1, 1]),
            vi64(&[0, 0, 0, 0]),
            vi64(&[3, 3, 9, -2, 0]),
            vi64(&[1, 2, 3, 4, 5]),
        ],
    )
    .unwrap();
    assert_eq!(r, vec![vi64(&[6, 1, 1, 4]), vi64(&[0, 0, 99, 0])]);
}

#[test]
fn runtime_error_display() {
    let e = RuntimeError::new("boom", loc(3));
    assert_eq!(e.to_string(), "t.fut:3:5: boom");
    assert_eq!(RuntimeError::new("boom", None).to_string(), "boom");
}

/// `main (xs: [n]i64) (d: i64) = map (\x -> if x < 0 then 0 else x / d) xs` (not a straight-line
/// lambda: runs on the general path) and `map (\x -> x / d) xs` (the register-program path); both
/// report division by zero at the division's location.
#[test]
fn map_general_and_register_paths_agree_and_report_errors() {
    let mut b = B::default();
    let (n, xs, d, x, neg, q, r, y, q2, r2) = (
        b.v("n"),
        b.v("xs"),
        b.v("d"),
        b.v("x"),
        b.v("neg"),
        b.v("q"),
        b.v("r"),
        b.v("y"),
        b.v("q2"),
        b.v("r2"),
    );
    let qv = b.v("qv");
    let tn = arr(I64, vec![var(&n)]);
    let general = lam(
        vec![param(&x, prim(I64))],
        vec![
            stm(
                &[(&neg, prim(BOOL))],
                Exp::CmpOp(CmpOp::Lt(I64), var(&x), c64(0)),
            ),
            stm(
                &[(&q, prim(I64))],
                Exp::If {
                    cond: var(&neg),
                    then_b: body(vec![], vec![c64(0)]),
                    else_b: body(
                        vec![stm_at(
                            &[(&qv, prim(I64))],
                            Exp::BinOp(BinOp::Div(I64), var(&x), var(&d)),
                            30,
                        )],
                        vec![var(&qv)],
                    ),
                    ret: vec![ExtType::Prim(I64)],
                },
            ),
        ],
        vec![var(&q)],
        vec![prim(I64)],
    );
    let straight = lam(
        vec![param(&y, prim(I64))],
        vec![stm_at(
            &[(&q2, prim(I64))],
            Exp::BinOp(BinOp::Div(I64), var(&y), var(&d)),
            31,
        )],
        vec![var(&q2)],
        vec![prim(I64)],
    );
    let bd = body(
        vec![
            stm(
                &[(&r, tn.clone())],
                Exp::Soac(Soac::Map {
                    w: var(&n),
                    arrs: vec![xs.clone()],
                    lam: general,
                }),
            ),
            stm(
                &[(&r2, tn.clone())],
                Exp::Soac(Soac::Map {
                    w: var(&n),
                    arrs: vec![xs.clone()],
                    lam: straight,
                }),
            ),
        ],
        vec![var(&r), var(&r2)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone()],
            vec![param(&xs, tn), param(&d, prim(I64))],
            bd,
            2,
        )],
    );
    let r = run(&p, vec![vi64(&[7, -7, 9]), s64(2)]).unwrap();
    assert_eq!(r, vec![vi64(&[3, 0, 4]), vi64(&[3, -4, 4])]);
    assert_eq!(
        run(&p, vec![vi64(&[7]), s64(0)]).unwrap_err().to_string(),
        "t.fut:30:5: division by zero"
    );
    // With only negative inputs the general map never divides; the register program does.
    assert_eq!(
        run(&p, vec![vi64(&[-1]), s64(0)]).unwrap_err().to_string(),
        "t.fut:31:5: division by zero"
    );
}

/// `map (\i -> xs[i]) is` with an out-of-bounds index reports the index's location; a map whose
/// rows differ in shape is an error.
#[test]
fn errors_inside_map_lambdas() {
    let mut b = B::default();
    let (n, m, xs, is, i, e, r) = (
        b.v("n"),
        b.v("m"),
        b.v("xs"),
        b.v("is"),
        b.v("i"),
        b.v("e"),
        b.v("r"),
    );
    let get = lam(
        vec![param(&i, prim(I64))],
        vec![stm_at(
            &[(&e, prim(I64))],
            Exp::Index(xs.clone(), vec![DimIndex::Fix(var(&i))]),
            40,
        )],
        vec![var(&e)],
        vec![prim(I64)],
    );
    let bd = body(
        vec![stm(
            &[(&r, arr(I64, vec![var(&m)]))],
            Exp::Soac(Soac::Map {
                w: var(&m),
                arrs: vec![is.clone()],
                lam: get,
            }),
        )],
        vec![var(&r)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone(), m.clone()],
            vec![
                param(&xs, arr(I64, vec![var(&n)])),
                param(&is, arr(I64, vec![var(&m)])),
            ],
            bd,
            1,
        )],
    );
    assert_eq!(
        run(&p, vec![vi64(&[5, 6, 7]), vi64(&[2, 0])]).unwrap(),
        vec![vi64(&[7, 5])]
    );
    let err = run(&p, vec![vi64(&[5, 6, 7]), vi64(&[2, 3])]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.fut:40:5: index [3] out of bounds for array of shape [3]"
    );

    // map (\k -> iota k) [1, 2]: irregular.
    let mut b = B::default();
    let (ks, k, io, r) = (b.v("ks"), b.v("k"), b.v("io"), b.v("r"));
    let mk = lam(
        vec![param(&k, prim(I64))],
        vec![stm(
            &[(&io, arr(I64, vec![var(&k)]))],
            Exp::Iota {
                n: var(&k),
                start: c64(0),
                stride: c64(1),
                it: IntType::I64,
            },
        )],
        vec![var(&io)],
        vec![arr(I64, vec![var(&k)])],
    );
    let bd = body(
        vec![stm_at(
            &[(&r, arr(I64, vec![c64(2), c64(2)]))],
            Exp::Soac(Soac::Map {
                w: c64(2),
                arrs: vec![ks.clone()],
                lam: mk,
            }),
            41,
        )],
        vec![var(&r)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![],
            vec![param(&ks, arr(I64, vec![c64(2)]))],
            bd,
            1,
        )],
    );
    assert_eq!(
        run(&p, vec![vi64(&[2, 2])]).unwrap(),
        vec![vi64_2d(2, 2, &[0, 1, 0, 1])]
    );
    let err = run(&p, vec![vi64(&[1, 2])]).unwrap_err();
    assert_eq!(err.loc, loc(41));
    assert!(err.message.contains("irregular"), "{}", err.message);
}

/// Hist with an operator that is not a single binary operation (`\a b -> if a < b then b else a`)
/// over f64, and scatter into two destinations at once; row update of a 2-D array.
#[test]
fn hist_generic_scatter_two_dests_and_row_update() {
    let mut b = B::default();
    let (dest, is, vs, h, a, c, lt, mx) = (
        b.v("dest"),
        b.v("is"),
        b.v("vs"),
        b.v("h"),
        b.v("a"),
        b.v("c"),
        b.v("lt"),
        b.v("mx"),
    );
    let maxop = lam(
        vec![param(&a, prim(F64)), param(&c, prim(F64))],
        vec![
            stm(
                &[(&lt, prim(BOOL))],
                Exp::CmpOp(CmpOp::Lt(F64), var(&a), var(&c)),
            ),
            stm(
                &[(&mx, prim(F64))],
                Exp::If {
                    cond: var(&lt),
                    then_b: body(vec![], vec![var(&c)]),
                    else_b: body(vec![], vec![var(&a)]),
                    ret: vec![ExtType::Prim(F64)],
                },
            ),
        ],
        vec![var(&mx)],
        vec![prim(F64)],
    );
    let (d1, d2, s1, s2, ws, xss, row, upd) = (
        b.v("d1"),
        b.v("d2"),
        b.v("s1"),
        b.v("s2"),
        b.v("ws"),
        b.v("xss"),
        b.v("row"),
        b.v("upd"),
    );
    let t3 = arr(F64, vec![c64(3)]);
    let t4i = arr(I64, vec![c64(4)]);
    let bd = body(
        vec![
            stm(
                &[(&h, t3.clone())],
                Exp::Soac(Soac::Hist {
                    w: c64(4),
                    dest: vec![dest.clone()],
                    op: Operator {
                        lam: maxop,
                        neutral: vec![cf(f64::NEG_INFINITY)],
                        commutative: true,
                    },
                    inds: is.clone(),
                    vals: vec![vs.clone()],
                }),
            ),
            stm(
                &[(&s1, t4i.clone()), (&s2, t4i.clone())],
                Exp::Soac(Soac::Scatter {
                    w: c64(4),
                    dest: vec![d1.clone(), d2.clone()],
                    inds: vec![is.clone()],
                    vals: vec![ws.clone(), is.clone()],
                }),
            ),
            stm(
                &[(&row, arr(I64, vec![c64(2)]))],
                Exp::ArrayLit {
                    elems: vec![c64(8), c64(9)],
                    row: prim(I64),
                },
            ),
            stm(
                &[(&upd, arr(I64, vec![c64(2), c64(2)]))],
                Exp::Update(xss.clone(), vec![DimIndex::Fix(c64(1))], var(&row)),
            ),
        ],
        vec![var(&h), var(&s1), var(&s2), var(&upd)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![],
            vec![
                param(&dest, t3),
                param(&is, t4i.clone()),
                param(&vs, arr(F64, vec![c64(4)])),
                param(&d1, t4i.clone()),
                param(&d2, t4i.clone()),
                param(&ws, t4i),
                param(&xss, arr(I64, vec![c64(2), c64(2)])),
            ],
            bd,
            4,
        )],
    );
    let r = run(
        &p,
        vec![
            vf64(&[0.0, 0.0, 0.0]),
            vi64(&[2, 0, 2, 3]),
            vf64(&[5.0, -1.0, 4.0, 100.0]),
            vi64(&[0; 4]),
            vi64(&[-1; 4]),
            vi64(&[10, 20, 30, 40]),
            vi64_2d(2, 2, &[1, 2, 3, 4]),
        ],
    )
    .unwrap();
    // Index 3 is out of range for the hist destination ([3]) but not for the scatter ones ([4]).
    assert_eq!(
        r,
        vec![
            vf64(&[0.0, 0.0, 5.0]),
            vi64(&[20, 0, 30, 40]),
            vi64(&[0, -1, 2, 3]),
            vi64_2d(2, 2, &[1, 2, 8, 9])
        ]
    );
}

#[test]
fn for_loop_with_i32_counter_and_unsigned_bound() {
    // loop s = 0i32 for i < 5i32 do s + i; loop t = 0u8 for j < 0u8 do t + 1 (no iterations)
    let mut b = B::default();
    let (s, i, s2, r, t, j, t2, r2) = (
        b.v("s"),
        b.v("i"),
        b.v("s2"),
        b.v("r"),
        b.v("t"),
        b.v("j"),
        b.v("t2"),
        b.v("r2"),
    );
    let i32t = PrimType::I32;
    let u8t = PrimType::Int(IntType::U8);
    let bd = body(
        vec![
            stm(
                &[(&r, prim(i32t))],
                Exp::Loop {
                    params: vec![(param(&s, prim(i32t)), SubExp::Const(PrimValue::I32(0)))],
                    form: LoopForm::For {
                        i: i.clone(),
                        it: IntType::I32,
                        bound: SubExp::Const(PrimValue::I32(5)),
                    },
                    body: body(
                        vec![stm(
                            &[(&s2, prim(i32t))],
                            Exp::BinOp(BinOp::Add(i32t), var(&s), var(&i)),
                        )],
                        vec![var(&s2)],
                    ),
                },
            ),
            stm(
                &[(&r2, prim(u8t))],
                Exp::Loop {
                    params: vec![(param(&t, prim(u8t)), SubExp::Const(PrimValue::U8(7)))],
                    form: LoopForm::For {
                        i: j.clone(),
                        it: IntType::U8,
                        bound: SubExp::Const(PrimValue::U8(0)),
                    },
                    body: body(
                        vec![stm(
                            &[(&t2, prim(u8t))],
                            Exp::BinOp(BinOp::Add(u8t), var(&t), SubExp::Const(PrimValue::U8(1))),
                        )],
                        vec![var(&t2)],
                    ),
                },
            ),
        ],
        vec![var(&r), var(&r2)],
    );
    let p = program(b, vec![entry("main", vec![], vec![], bd, 2)]);
    assert_eq!(
        run(&p, vec![]).unwrap(),
        vec![
            Value::Scalar(PrimValue::I32(10)),
            Value::Scalar(PrimValue::U8(7))
        ]
    );
}

#[test]
fn size_given_by_a_scalar_parameter_must_match() {
    // entry main (n: i64) (xs: [n]i64) = xs
    let mut b = B::default();
    let (n, xs) = (b.v("n"), b.v("xs"));
    let p = program(
        b,
        vec![entry(
            "main",
            vec![],
            vec![param(&n, prim(I64)), param(&xs, arr(I64, vec![var(&n)]))],
            body(vec![], vec![var(&xs)]),
            1,
        )],
    );
    assert_eq!(
        run(&p, vec![s64(2), vi64(&[1, 2])]).unwrap(),
        vec![vi64(&[1, 2])]
    );
    let e = run(&p, vec![s64(3), vi64(&[1, 2])]).unwrap_err();
    assert!(
        e.message
            .starts_with("shape mismatch: argument 2 has size 2"),
        "{}",
        e.message
    );
}

/// A straight-line map over more elements than one column chunk, mixing typed kernels
/// (`*`, `+`), element-wise column operations (`Conv`, `Math`, `CmpOp`, integer `/`) and
/// constants; then a division by zero in the second chunk.
#[test]
fn column_wise_map_over_several_chunks() {
    let mut b = B::default();
    let (n, xs, x, f, sq, d, q, c, r1, one) = (
        b.v("n"),
        b.v("xs"),
        b.v("x"),
        b.v("f"),
        b.v("sq"),
        b.v("d"),
        b.v("q"),
        b.v("c"),
        b.v("r1"),
        b.v("one"),
    );
    let (rq, rc, ro) = (b.v("rq"), b.v("rc"), b.v("ro"));
    let tn = |t: PrimType| arr(t, vec![var(&n)]);
    let l = lam(
        vec![param(&x, prim(I64))],
        vec![
            stm(
                &[(&f, prim(F64))],
                Exp::Conv(ConvOp { from: I64, to: F64 }, var(&x)),
            ),
            stm(
                &[(&sq, prim(F64))],
                Exp::Math(MathFn::Sqrt(crate::prim::FloatType::F64), vec![var(&f)]),
            ),
            stm(
                &[(&d, prim(I64))],
                Exp::BinOp(BinOp::Sub(I64), var(&x), c64(6000)),
            ),
            stm_at(
                &[(&q, prim(I64))],
                Exp::BinOp(BinOp::Div(I64), c64(12000), var(&d)),
                50,
            ),
            stm(
                &[(&c, prim(BOOL))],
                Exp::CmpOp(CmpOp::Lt(I64), var(&q), c64(0)),
            ),
            stm(&[(&one, prim(F64))], Exp::SubExp(cf(1.0))),
        ],
        vec![var(&sq), var(&q), var(&c), var(&one)],
        vec![prim(F64), prim(I64), prim(BOOL), prim(F64)],
    );
    let bd = body(
        vec![stm(
            &[
                (&r1, tn(F64)),
                (&rq, tn(I64)),
                (&rc, tn(BOOL)),
                (&ro, tn(F64)),
            ],
            Exp::Soac(Soac::Map {
                w: var(&n),
                arrs: vec![xs.clone()],
                lam: l,
            }),
        )],
        vec![var(&r1), var(&rq), var(&rc), var(&ro)],
    );
    let p = program(
        b,
        vec![entry(
            "main",
            vec![n.clone()],
            vec![param(&xs, tn(I64))],
            bd,
            4,
        )],
    );
    let xs: Vec<i64> = (0..5000).chain(6001..11000).collect();
    let r = run(&p, vec![vi64(&xs)]).unwrap();
    let expect_sq: Vec<f64> = xs.iter().map(|&x| (x as f64).sqrt()).collect();
    let expect_q: Vec<i64> = xs
        .iter()
        .map(|&x| {
            (12000i64).div_euclid(x - 6000)
                - if (x - 6000) < 0 && 12000 % (x - 6000) != 0 {
                    1
                } else {
                    0
                }
        })
        .collect();
    assert_eq!(r[0], vf64(&expect_sq));
    assert_eq!(r[1], vi64(&expect_q));
    assert_eq!(
        r[2],
        Value::Array(ArrayValue::new(
            vec![9999],
            Buffer::Bool(xs.iter().map(|&x| x < 6000).collect())
        ))
    );
    assert_eq!(r[3], vf64(&vec![1.0; 9999]));
    // Element 6000 divides by zero.
    let xs: Vec<i64> = (0..11000).collect();
    assert_eq!(
        run(&p, vec![vi64(&xs)]).unwrap_err().to_string(),
        "t.fut:50:5: division by zero"
    );
}

/// An entry returning an array of existential size: the IR returns the size first; the caller
/// sees only the array. Also reversing an empty array (`xs[-1:len 0:-1]`) is an empty slice.
#[test]
fn existential_results_and_empty_reversed_slice() {
    let mut b = B::default();
    let (n, xs, k, io, rv) = (b.v("n"), b.v("xs"), b.v("k"), b.v("io"), b.v("rv"));
    let mut f = entry(
        "main",
        vec![n.clone()],
        vec![param(&xs, arr(I64, vec![var(&n)])), param(&k, prim(I64))],
        body(
            vec![
                stm(
                    &[(&io, arr(I64, vec![var(&k)]))],
                    Exp::Iota {
                        n: var(&k),
                        start: c64(0),
                        stride: c64(1),
                        it: IntType::I64,
                    },
                ),
                stm_at(
                    &[(&rv, arr(I64, vec![var(&n)]))],
                    Exp::Index(
                        xs.clone(),
                        vec![DimIndex::Slice {
                            start: c64(-1),
                            len: var(&n),
                            stride: c64(-1),
                        }],
                    ),
                    60,
                ),
            ],
            vec![var(&k), var(&io), var(&rv)],
        ),
        2,
    );
    f.ret = vec![
        ExtType::Prim(I64),
        ExtType::Array {
            elem: I64,
            shape: vec![ExtDim::Ext(0)],
        },
        ExtType::Array {
            elem: I64,
            shape: vec![ExtDim::Free(var(&n))],
        },
    ];
    let p = program(b, vec![f]);
    assert_eq!(
        run(&p, vec![vi64(&[]), s64(3)]).unwrap(),
        vec![vi64(&[0, 1, 2]), vi64(&[])]
    );
    // On a non-empty array the same slice is out of bounds.
    let e = run(&p, vec![vi64(&[1]), s64(3)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.fut:60:5: index [-1:-2:-1] out of bounds for array of shape [1]"
    );
}
