//! Tests of the kernel IR evaluator on hand-built programs, with results worked out by hand.

use super::{run_entry, Stats};
use crate::diag::SrcLoc;
use crate::interp::RuntimeError;
use crate::ir::builder::{i64c, var, Builder};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};
use crate::seg::*;
use crate::seg::{FunDef, Program};
use crate::value::{ArrayValue, Buffer, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

const I64: PrimType = PrimType::I64;
const F64: PrimType = PrimType::F64;

fn t(p: PrimType) -> Type {
    Type::Prim(p)
}
fn arr(p: PrimType, dims: &[&VName]) -> Type {
    Type::array(p, dims.iter().map(|d| var(d)).collect())
}
fn param(v: &VName, ty: Type) -> Param {
    Param {
        name: v.clone(),
        ty,
    }
}
fn pat(elems: &[(&VName, Type)]) -> Pat {
    Pat {
        elems: elems.iter().map(|(v, t)| param(v, t.clone())).collect(),
    }
}
fn at(line: u32) -> Option<SrcLoc> {
    Some(SrcLoc {
        file: Arc::from("k.fut"),
        line,
        col: 3,
    })
}
fn hstm(elems: &[(&VName, Type)], exp: HostExp) -> HostStm {
    HostStm {
        pat: pat(elems),
        exp,
        attrs: Attrs::default(),
        loc: None,
    }
}
fn plain(elems: &[(&VName, Type)], exp: Exp) -> HostStm {
    hstm(elems, HostExp::Plain(exp))
}
fn seg(kind: SegKind, dims: &[(&VName, SubExp)], ret: Vec<Type>, body: KernelBody) -> HostExp {
    HostExp::Seg(SegOp {
        kind,
        space: SegSpace {
            dims: dims
                .iter()
                .map(|(i, d)| ((*i).clone(), d.clone()))
                .collect(),
        },
        ret,
        body,
    })
}
/// A kernel body built with `f`, which returns the thread's results.
fn kbody(ns: &mut NameSource, f: impl FnOnce(&mut Builder) -> Vec<KernelResult>) -> KernelBody {
    let mut b = Builder::new(ns);
    let results = f(&mut b);
    KernelBody {
        stms: b.stms,
        results,
    }
}
fn ret(v: &VName) -> KernelResult {
    KernelResult::Returns(var(v))
}
/// A binary operator lambda `\a b -> a op b` on `p`, with neutral element `ne`.
fn binop_op(ns: &mut NameSource, op: BinOp, p: PrimType, ne: SubExp) -> Operator {
    let lam = builder::lambda(ns, &[("a", t(p)), ("b", t(p))], vec![t(p)], |b, ps| {
        vec![var(&b.binop(op, var(&ps[0]), var(&ps[1])))]
    });
    Operator {
        lam,
        neutral: vec![ne],
        commutative: false,
    }
}
/// `\a b -> a * 10 + b` on `i64` (not associative: shows the order of application).
fn digits_lam(ns: &mut NameSource) -> Lambda {
    builder::lambda(
        ns,
        &[("a", t(I64)), ("b", t(I64))],
        vec![t(I64)],
        |b, ps| {
            let x = b.binop(BinOp::Mul(I64), var(&ps[0]), i64c(10));
            vec![var(&b.binop(BinOp::Add(I64), var(&x), var(&ps[1])))]
        },
    )
}
fn entry(name: &str, sizes: &[&VName], params: Vec<Param>, body: HostBody) -> FunDef {
    let nres = body.result.len();
    FunDef {
        name: Arc::from(name),
        entry: Some(EntryPoint {
            name: Arc::from(name),
            param_counts: vec![1; params.len()],
            result_counts: vec![1; nres],
        }),
        size_params: sizes.iter().map(|s| (*s).clone()).collect(),
        params,
        ret: vec![],
        body,
        attrs: Attrs::default(),
    }
}
fn program(ns: NameSource, funs: Vec<FunDef>) -> Program {
    Program {
        funs,
        name_source: ns,
    }
}
fn body(stms: Vec<HostStm>, result: &[&VName]) -> HostBody {
    HostBody {
        stms,
        result: result.iter().map(|v| var(v)).collect(),
    }
}
fn vi64(shape: &[usize], xs: &[i64]) -> Value {
    Value::Array(ArrayValue::new(shape.to_vec(), Buffer::I64(xs.to_vec())))
}
fn vf64(shape: &[usize], xs: &[f64]) -> Value {
    Value::Array(ArrayValue::new(shape.to_vec(), Buffer::F64(xs.to_vec())))
}
fn s64(x: i64) -> Value {
    Value::Scalar(PrimValue::I64(x))
}
fn run(p: &Program, args: Vec<Value>) -> (Vec<Value>, Stats) {
    run_with(p, args, &Thresholds::default()).unwrap()
}
fn run_with(
    p: &Program,
    args: Vec<Value>,
    th: &Thresholds,
) -> Result<(Vec<Value>, Stats), RuntimeError> {
    run_entry(p, "main", args, th)
}
fn stats(kinds: &[(&'static str, usize)], threads: u128, builtins: usize) -> Stats {
    Stats {
        kernels: kinds.iter().map(|k| k.1).sum(),
        by_kind: kinds.iter().copied().collect::<BTreeMap<_, _>>(),
        builtins,
        threads,
    }
}

/// `segmap [i < n][j < m]`: `x = xss[i, j]`, returns `x * 10` and `[x, -x]`.
#[test]
fn segmap_2d_with_array_results() {
    let mut ns = NameSource::default();
    let (n, m, xss, i, j) = (
        ns.fresh("n"),
        ns.fresh("m"),
        ns.fresh("xss"),
        ns.fresh("i"),
        ns.fresh("j"),
    );
    let kb = kbody(&mut ns, |b| {
        let x = b.index(t(I64), &xss, vec![var(&i), var(&j)]);
        let y = b.binop(BinOp::Mul(I64), var(&x), i64c(10));
        let nx = b.binop(BinOp::Sub(I64), i64c(0), var(&x));
        let row = Type::Prim(I64);
        let pair = b.bind(
            "pair",
            Type::array(I64, vec![i64c(2)]),
            Exp::ArrayLit {
                elems: vec![var(&x), var(&nx)],
                row,
            },
        );
        vec![ret(&y), ret(&pair)]
    });
    let (ys, ps) = (ns.fresh("ys"), ns.fresh("ps"));
    let k = seg(
        SegKind::Map,
        &[(&i, var(&n)), (&j, var(&m))],
        vec![t(I64), Type::array(I64, vec![i64c(2)])],
        kb,
    );
    let ps_t = Type::array(I64, vec![var(&n), var(&m), i64c(2)]);
    let stms = vec![hstm(&[(&ys, arr(I64, &[&n, &m])), (&ps, ps_t)], k)];
    let f = entry(
        "main",
        &[&n, &m],
        vec![param(&xss, arr(I64, &[&n, &m]))],
        body(stms, &[&ys, &ps]),
    );
    let p = program(ns, vec![f]);
    let (r, st) = run(&p, vec![vi64(&[2, 3], &[1, 2, 3, 4, 5, 6])]);
    assert_eq!(r[0], vi64(&[2, 3], &[10, 20, 30, 40, 50, 60]));
    assert_eq!(
        r[1],
        vi64(&[2, 3, 2], &[1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6])
    );
    assert_eq!(st, stats(&[("segmap", 1)], 6, 0));
    // An empty space gives empty arrays of the full shape.
    let (r, st) = run(&p, vec![vi64(&[0, 3], &[])]);
    assert_eq!(r[0], vi64(&[0, 3], &[]));
    assert_eq!(r[1], vi64(&[0, 3, 2], &[]));
    assert_eq!(st, stats(&[("segmap", 1)], 0, 0));
}

/// `segred [i < n][j < m]` of `(xss[i, j], j + 1)` with the operator
/// `(a1, a2) (b1, b2) -> (a1 + b1, a2 * 10 + b2)` (neutral `(0, 9)`), and the map output
/// `xss[i, j] * 2`; then a one-dimensional `segred (+)` of row 0, a scalar.
#[test]
fn segred_2d_with_map_output_and_two_operand_operator() {
    let mut ns = NameSource::default();
    let (n, m, xss, i, j) = (
        ns.fresh("n"),
        ns.fresh("m"),
        ns.fresh("xss"),
        ns.fresh("i"),
        ns.fresh("j"),
    );
    let lam = builder::lambda(
        &mut ns,
        &[
            ("a1", t(F64)),
            ("a2", t(I64)),
            ("b1", t(F64)),
            ("b2", t(I64)),
        ],
        vec![t(F64), t(I64)],
        |b, ps| {
            let s = b.binop(BinOp::Add(F64), var(&ps[0]), var(&ps[2]));
            let x = b.binop(BinOp::Mul(I64), var(&ps[1]), i64c(10));
            let d = b.binop(BinOp::Add(I64), var(&x), var(&ps[3]));
            vec![var(&s), var(&d)]
        },
    );
    let op = Operator {
        lam,
        neutral: vec![SubExp::Const(PrimValue::F64(0.0)), i64c(9)],
        commutative: false,
    };
    let kb = kbody(&mut ns, |b| {
        let x = b.index(t(F64), &xss, vec![var(&i), var(&j)]);
        let k = b.binop(BinOp::Add(I64), var(&j), i64c(1));
        let two = SubExp::Const(PrimValue::F64(2.0));
        let d = b.binop(BinOp::Mul(F64), var(&x), two);
        vec![ret(&x), ret(&k), ret(&d)]
    });
    let red = seg(
        SegKind::Red(vec![op]),
        &[(&i, var(&n)), (&j, var(&m))],
        vec![t(F64), t(I64), t(F64)],
        kb,
    );
    let (sums, digits, ds) = (ns.fresh("sums"), ns.fresh("digits"), ns.fresh("ds"));
    let (j2, total) = (ns.fresh("j2"), ns.fresh("total"));
    let plus = binop_op(
        &mut ns,
        BinOp::Add(F64),
        F64,
        SubExp::Const(PrimValue::F64(0.0)),
    );
    let kb2 = kbody(&mut ns, |b| {
        vec![ret(&b.index(t(F64), &xss, vec![i64c(0), var(&j2)]))]
    });
    let red1 = seg(
        SegKind::Red(vec![plus]),
        &[(&j2, var(&m))],
        vec![t(F64)],
        kb2,
    );
    let stms = vec![
        hstm(
            &[
                (&sums, arr(F64, &[&n])),
                (&digits, arr(I64, &[&n])),
                (&ds, arr(F64, &[&n, &m])),
            ],
            red,
        ),
        hstm(&[(&total, t(F64))], red1),
    ];
    let f = entry(
        "main",
        &[&n, &m],
        vec![param(&xss, arr(F64, &[&n, &m]))],
        body(stms, &[&sums, &digits, &ds, &total]),
    );
    let p = program(ns, vec![f]);
    // Left to right, 1e16 + 1 rounds back to 1e16: row 0 sums to 0, not 1.
    let xs = [1e16, 1.0, -1e16, 0.5, 0.25, 2.0];
    let (r, st) = run(&p, vec![vf64(&[2, 3], &xs)]);
    assert_eq!(r[0], vf64(&[2], &[0.0, 2.75]));
    assert_eq!(r[1], vi64(&[2], &[9123, 9123]));
    assert_eq!(r[2], vf64(&[2, 3], &[2e16, 2.0, -2e16, 1.0, 0.5, 4.0]));
    assert_eq!(r[3], Value::Scalar(PrimValue::F64(0.0)));
    assert_eq!(st, stats(&[("segred", 2)], 9, 0));
    // Empty segments reduce to the neutral elements.
    let (r, _) = run(&p, vec![vf64(&[2, 0], &[])]);
    assert_eq!(r[0], vf64(&[2], &[0.0, 0.0]));
    assert_eq!(r[1], vi64(&[2], &[9, 9]));
    assert_eq!(r[3], Value::Scalar(PrimValue::F64(0.0)));
}

/// `segred [i < n][j < 2]` of `i * 10 + j` with `+`: no segments give an empty array.
#[test]
fn segred_without_segments() {
    let mut ns = NameSource::default();
    let (n, i, j, sums) = (
        ns.fresh("n"),
        ns.fresh("i"),
        ns.fresh("j"),
        ns.fresh("sums"),
    );
    let plus = binop_op(&mut ns, BinOp::Add(I64), I64, i64c(0));
    let kb = kbody(&mut ns, |b| {
        let x = b.binop(BinOp::Mul(I64), var(&i), i64c(10));
        vec![ret(&b.binop(BinOp::Add(I64), var(&x), var(&j)))]
    });
    let k = seg(
        SegKind::Red(vec![plus]),
        &[(&i, var(&n)), (&j, i64c(2))],
        vec![t(I64)],
        kb,
    );
    let stms = vec![hstm(&[(&sums, arr(I64, &[&n]))], k)];
    let f = entry("main", &[], vec![param(&n, t(I64))], body(stms, &[&sums]));
    let p = program(ns, vec![f]);
    let (r, st) = run(&p, vec![s64(2)]);
    assert_eq!(r[0], vi64(&[2], &[1, 21]));
    assert_eq!(st, stats(&[("segred", 1)], 4, 0));
    let (r, st) = run(&p, vec![s64(0)]);
    assert_eq!(r[0], vi64(&[0], &[]));
    assert_eq!(st, stats(&[("segred", 1)], 0, 0));
}

/// `segscan [i < n][j < m]` with two operators: `a * 10 + b` on `xss[i, j]` (neutral 0) and
/// `+` on `f64(j) + 0.5` (neutral 1), and the map output `i * 100 + j`.
#[test]
fn segscan_2d_two_operators() {
    let mut ns = NameSource::default();
    let (n, m, xss, i, j) = (
        ns.fresh("n"),
        ns.fresh("m"),
        ns.fresh("xss"),
        ns.fresh("i"),
        ns.fresh("j"),
    );
    let digits = Operator {
        lam: digits_lam(&mut ns),
        neutral: vec![i64c(0)],
        commutative: false,
    };
    let plus = binop_op(
        &mut ns,
        BinOp::Add(F64),
        F64,
        SubExp::Const(PrimValue::F64(1.0)),
    );
    let kb = kbody(&mut ns, |b| {
        let x = b.index(t(I64), &xss, vec![var(&i), var(&j)]);
        let jf = b.conv(I64, F64, var(&j));
        let half = SubExp::Const(PrimValue::F64(0.5));
        let y = b.binop(BinOp::Add(F64), var(&jf), half);
        let ii = b.binop(BinOp::Mul(I64), var(&i), i64c(100));
        let z = b.binop(BinOp::Add(I64), var(&ii), var(&j));
        vec![ret(&x), ret(&y), ret(&z)]
    });
    let k = seg(
        SegKind::Scan(vec![digits, plus]),
        &[(&i, var(&n)), (&j, var(&m))],
        vec![t(I64), t(F64), t(I64)],
        kb,
    );
    let (a, b, c) = (ns.fresh("a"), ns.fresh("b"), ns.fresh("c"));
    let stms = vec![hstm(
        &[
            (&a, arr(I64, &[&n, &m])),
            (&b, arr(F64, &[&n, &m])),
            (&c, arr(I64, &[&n, &m])),
        ],
        k,
    )];
    let f = entry(
        "main",
        &[&n, &m],
        vec![param(&xss, arr(I64, &[&n, &m]))],
        body(stms, &[&a, &b, &c]),
    );
    let p = program(ns, vec![f]);
    let (r, st) = run(&p, vec![vi64(&[2, 3], &[1, 2, 3, 4, 5, 6])]);
    assert_eq!(r[0], vi64(&[2, 3], &[1, 12, 123, 4, 45, 456]));
    assert_eq!(r[1], vf64(&[2, 3], &[1.5, 3.0, 5.5, 1.5, 3.0, 5.5]));
    assert_eq!(r[2], vi64(&[2, 3], &[0, 1, 2, 100, 101, 102]));
    assert_eq!(st, stats(&[("segscan", 1)], 6, 0));
}

/// `seghist [s < 2][j < 4]` with two histograms: `+` into `h1: [2][3]` at bins `bins[s, j]`
/// (some out of range: -1, 3, 5) of `vals[s, j]`, and `a * 10 + b` into `h2: [2][2]` at bin
/// `j % 2` of `j + 1`; map output `j`.
#[test]
fn seghist_segments_and_out_of_range_bins() {
    let mut ns = NameSource::default();
    let (ns_, nj, bins, vals, h1, h2, s, j) = (
        ns.fresh("segs"),
        ns.fresh("nj"),
        ns.fresh("bins"),
        ns.fresh("vals"),
        ns.fresh("h1"),
        ns.fresh("h2"),
        ns.fresh("s"),
        ns.fresh("j"),
    );
    let plus = binop_op(&mut ns, BinOp::Add(I64), I64, i64c(0));
    let digits = Operator {
        lam: digits_lam(&mut ns),
        neutral: vec![i64c(0)],
        commutative: false,
    };
    let kb = kbody(&mut ns, |b| {
        let bin = b.index(t(I64), &bins, vec![var(&s), var(&j)]);
        let v = b.index(t(I64), &vals, vec![var(&s), var(&j)]);
        let bin2 = b.binop(BinOp::Mod(I64), var(&j), i64c(2));
        let v2 = b.binop(BinOp::Add(I64), var(&j), i64c(1));
        vec![ret(&bin), ret(&v), ret(&bin2), ret(&v2), ret(&j)]
    });
    let hists = vec![
        HistOp {
            dest: vec![h1.clone()],
            width: i64c(3),
            op: plus,
            disjoint: false,
        },
        HistOp {
            dest: vec![h2.clone()],
            width: i64c(2),
            op: digits,
            disjoint: false,
        },
    ];
    let k = seg(
        SegKind::Hist(hists),
        &[(&s, var(&ns_)), (&j, var(&nj))],
        vec![t(I64); 5],
        kb,
    );
    let (r1, r2, js) = (ns.fresh("r1"), ns.fresh("r2"), ns.fresh("js"));
    let h1_t = Type::array(I64, vec![var(&ns_), i64c(3)]);
    let h2_t = Type::array(I64, vec![var(&ns_), i64c(2)]);
    let stms = vec![hstm(
        &[
            (&r1, h1_t.clone()),
            (&r2, h2_t.clone()),
            (&js, arr(I64, &[&ns_, &nj])),
        ],
        k,
    )];
    let f = entry(
        "main",
        &[&ns_, &nj],
        vec![
            param(&bins, arr(I64, &[&ns_, &nj])),
            param(&vals, arr(I64, &[&ns_, &nj])),
            param(&h1, h1_t),
            param(&h2, h2_t),
        ],
        body(stms, &[&r1, &r2, &js]),
    );
    let p = program(ns, vec![f]);
    let args = vec![
        vi64(&[2, 4], &[0, 2, 5, 2, -1, 1, 1, 3]),
        vi64(&[2, 4], &[1, 2, 3, 4, 5, 6, 7, 8]),
        vi64(&[2, 3], &[100, 100, 100, 0, 0, 0]),
        vi64(&[2, 2], &[0, 0, 0, 0]),
    ];
    let (r, st) = run(&p, args);
    // Segment 0: bin 0 += 1, bin 2 += 2 + 4 (bin 5 ignored); segment 1: bin 1 += 6 + 7 (bins
    // -1 and 3 ignored, although they lie inside the array).
    assert_eq!(r[0], vi64(&[2, 3], &[101, 100, 106, 0, 13, 0]));
    // In thread order: bin 0 gets 1 then 3, bin 1 gets 2 then 4.
    assert_eq!(r[1], vi64(&[2, 2], &[13, 24, 13, 24]));
    assert_eq!(r[2], vi64(&[2, 4], &[0, 1, 2, 3, 0, 1, 2, 3]));
    assert_eq!(st, stats(&[("seghist", 1)], 8, 0));
}

/// `segmap [i < n]` writing `vs[i]` at `xs[is[i]]` (out-of-range and duplicate indices) and
/// `i + 1` at `ys[i / 2, (i % 2) * 2]` (the column out of range for odd `i`), returning `i`.
#[test]
fn write_out_of_range_and_duplicate_indices() {
    let mut ns = NameSource::default();
    let (n, is, vs, xs, ys, i) = (
        ns.fresh("n"),
        ns.fresh("is"),
        ns.fresh("vs"),
        ns.fresh("xs"),
        ns.fresh("ys"),
        ns.fresh("i"),
    );
    let kb = kbody(&mut ns, |b| {
        let ix = b.index(t(I64), &is, vec![var(&i)]);
        let v = b.index(t(I64), &vs, vec![var(&i)]);
        let r = b.binop(BinOp::Div(I64), var(&i), i64c(2));
        let c0 = b.binop(BinOp::Mod(I64), var(&i), i64c(2));
        let c = b.binop(BinOp::Mul(I64), var(&c0), i64c(2));
        let v2 = b.binop(BinOp::Add(I64), var(&i), i64c(1));
        vec![
            KernelResult::Write {
                dest: xs.clone(),
                idx: vec![var(&ix)],
                val: var(&v),
            },
            ret(&i),
            KernelResult::Write {
                dest: ys.clone(),
                idx: vec![var(&r), var(&c)],
                val: var(&v2),
            },
        ]
    });
    let k = seg(SegKind::Map, &[(&i, var(&n))], vec![t(I64); 3], kb);
    let (xs2, is2, ys2) = (ns.fresh("xs2"), ns.fresh("is2"), ns.fresh("ys2"));
    let xs_t = Type::array(I64, vec![i64c(5)]);
    let ys_t = Type::array(I64, vec![i64c(2), i64c(2)]);
    let stms = vec![hstm(
        &[
            (&xs2, xs_t.clone()),
            (&is2, arr(I64, &[&n])),
            (&ys2, ys_t.clone()),
        ],
        k,
    )];
    let f = entry(
        "main",
        &[&n],
        vec![
            param(&is, arr(I64, &[&n])),
            param(&vs, arr(I64, &[&n])),
            param(&xs, xs_t),
            param(&ys, ys_t),
        ],
        body(stms, &[&xs2, &is2, &ys2]),
    );
    let p = program(ns, vec![f]);
    let args = vec![
        vi64(&[4], &[1, 7, -1, 1]),
        vi64(&[4], &[10, 20, 30, 40]),
        vi64(&[5], &[0; 5]),
        vi64(&[2, 2], &[-1; 4]),
    ];
    let (r, st) = run(&p, args);
    assert_eq!(r[0], vi64(&[5], &[0, 40, 0, 0, 0]));
    assert_eq!(r[1], vi64(&[4], &[0, 1, 2, 3]));
    assert_eq!(r[2], vi64(&[2, 2], &[1, -1, 3, -1]));
    assert_eq!(st, stats(&[("segmap", 1)], 4, 0));
}

/// `with_acc([3] hs, +) \acc -> segmap [i < n]: upd acc [is[i]] vs[i]`, also returning
/// `is[i] * 2` from the kernel and the lambda.
#[test]
fn with_acc_updated_by_segmap() {
    let mut ns = NameSource::default();
    let (n, is, vs, hs, acc, i) = (
        ns.fresh("n"),
        ns.fresh("is"),
        ns.fresh("vs"),
        ns.fresh("hs"),
        ns.fresh("acc"),
        ns.fresh("i"),
    );
    let acc_t = Type::Acc {
        cert: acc.clone(),
        shape: vec![i64c(3)],
        elems: vec![t(F64)],
    };
    let kb = kbody(&mut ns, |b| {
        let ix = b.index(t(I64), &is, vec![var(&i)]);
        let v = b.index(t(F64), &vs, vec![var(&i)]);
        let a2 = b.bind(
            "acc2",
            acc_t.clone(),
            Exp::UpdAcc {
                acc: acc.clone(),
                idx: vec![var(&ix)],
                vals: vec![var(&v)],
            },
        );
        let d = b.binop(BinOp::Mul(I64), var(&ix), i64c(2));
        vec![ret(&a2), ret(&d)]
    });
    let k = seg(
        SegKind::Map,
        &[(&i, var(&n))],
        vec![acc_t.clone(), t(I64)],
        kb,
    );
    let (a3, ds) = (ns.fresh("acc3"), ns.fresh("ds"));
    let lam = HostLambda {
        params: vec![param(&acc, acc_t.clone())],
        body: body(
            vec![hstm(&[(&a3, acc_t.clone()), (&ds, arr(I64, &[&n]))], k)],
            &[&a3, &ds],
        ),
        ret: vec![acc_t, arr(I64, &[&n])],
    };
    let plus = binop_op(
        &mut ns,
        BinOp::Add(F64),
        F64,
        SubExp::Const(PrimValue::F64(0.0)),
    );
    let wa = HostExp::WithAcc {
        inputs: vec![AccInput {
            shape: vec![i64c(3)],
            arrs: vec![hs.clone()],
            op: Some(plus),
        }],
        lam,
    };
    let (hs2, ds2) = (ns.fresh("hs2"), ns.fresh("ds2"));
    let hs_t = Type::array(F64, vec![i64c(3)]);
    let stms = vec![hstm(&[(&hs2, hs_t.clone()), (&ds2, arr(I64, &[&n]))], wa)];
    let f = entry(
        "main",
        &[&n],
        vec![
            param(&is, arr(I64, &[&n])),
            param(&vs, arr(F64, &[&n])),
            param(&hs, hs_t),
        ],
        body(stms, &[&hs2, &ds2]),
    );
    let p = program(ns, vec![f]);
    let args = vec![
        vi64(&[5], &[2, 0, 3, 2, -1]),
        vf64(&[5], &[1.0, 2.0, 4.0, 8.0, 16.0]),
        vf64(&[3], &[0.5, 0.5, 0.5]),
    ];
    let (r, st) = run(&p, args);
    assert_eq!(r[0], vf64(&[3], &[2.5, 0.5, 9.5]));
    assert_eq!(r[1], vi64(&[5], &[4, 0, 6, 4, -2]));
    assert_eq!(st, stats(&[("segmap", 1)], 5, 0));
    // No thread: the accumulator is the `with_acc`'s, unchanged.
    let args = vec![
        vi64(&[0], &[]),
        vf64(&[0], &[]),
        vf64(&[3], &[1.0, 2.0, 3.0]),
    ];
    let (r, _) = run(&p, args);
    assert_eq!(r[0], vf64(&[3], &[1.0, 2.0, 3.0]));
    assert_eq!(r[1], vi64(&[0], &[]));
}

/// `xs = iota n; loop xs for k < 3 do segmap [i < n]: xs[i] * 2 + k`, then a `reshape` (not
/// a builtin) and a `copy` (one).
#[test]
fn loop_around_segmap() {
    let mut ns = NameSource::default();
    let (n, xs0, xs, k, i, ys, zs, ws) = (
        ns.fresh("n"),
        ns.fresh("xs0"),
        ns.fresh("xs"),
        ns.fresh("k"),
        ns.fresh("i"),
        ns.fresh("ys"),
        ns.fresh("zs"),
        ns.fresh("ws"),
    );
    let kb = kbody(&mut ns, |b| {
        let x = b.index(t(I64), &xs, vec![var(&i)]);
        let y = b.binop(BinOp::Mul(I64), var(&x), i64c(2));
        vec![ret(&b.binop(BinOp::Add(I64), var(&y), var(&k)))]
    });
    let xs1 = ns.fresh("xs1");
    let kernel = seg(SegKind::Map, &[(&i, var(&n))], vec![t(I64)], kb);
    let tn = arr(I64, &[&n]);
    let lp = HostExp::Loop {
        params: vec![(param(&xs, tn.clone()), var(&xs0))],
        form: LoopForm::For {
            i: k.clone(),
            it: IntType::I64,
            bound: i64c(3),
        },
        body: body(vec![hstm(&[(&xs1, tn.clone())], kernel)], &[&xs1]),
    };
    let iota = Exp::Iota {
        n: var(&n),
        start: i64c(0),
        stride: i64c(1),
        it: IntType::I64,
    };
    let stms = vec![
        plain(&[(&xs0, tn.clone())], iota),
        hstm(&[(&ys, tn.clone())], lp),
        plain(
            &[(&zs, tn.clone())],
            Exp::Reshape(vec![var(&n)], ys.clone()),
        ),
        plain(&[(&ws, tn)], Exp::Copy(zs.clone())),
    ];
    let f = entry("main", &[], vec![param(&n, t(I64))], body(stms, &[&ws]));
    let p = program(ns, vec![f]);
    let (r, st) = run(&p, vec![s64(3)]);
    // [0, 1, 2] -> [0, 2, 4] -> [1, 5, 9] -> [4, 12, 20].
    assert_eq!(r[0], vi64(&[3], &[4, 12, 20]));
    assert_eq!(st, stats(&[("segmap", 3)], 9, 2));
}

/// `if threshold(n, "t") then segmap [i < n]: xs[i] + 1 else replicate n 7`.
#[test]
fn if_on_threshold() {
    let mut ns = NameSource::default();
    let (n, xs, c, i, r, ys, zs) = (
        ns.fresh("n"),
        ns.fresh("xs"),
        ns.fresh("c"),
        ns.fresh("i"),
        ns.fresh("r"),
        ns.fresh("ys"),
        ns.fresh("zs"),
    );
    let kb = kbody(&mut ns, |b| {
        let x = b.index(t(I64), &xs, vec![var(&i)]);
        vec![ret(&b.binop(BinOp::Add(I64), var(&x), i64c(1)))]
    });
    let tn = arr(I64, &[&n]);
    let then_b = body(
        vec![hstm(
            &[(&ys, tn.clone())],
            seg(SegKind::Map, &[(&i, var(&n))], vec![t(I64)], kb),
        )],
        &[&ys],
    );
    let rep = Exp::Replicate {
        shape: vec![var(&n)],
        value: i64c(7),
    };
    let else_b = body(vec![plain(&[(&zs, tn.clone())], rep)], &[&zs]);
    let th = HostExp::Threshold {
        size: var(&n),
        name: Arc::from("t"),
        kind: crate::seg::ThresholdKind::Nest,
    };
    let stms = vec![
        hstm(&[(&c, t(PrimType::Bool))], th),
        hstm(
            &[(&r, tn.clone())],
            HostExp::If {
                cond: var(&c),
                then_b,
                else_b,
                ret: vec![tn.to_ext()],
                nest_versions: true,
            },
        ),
    ];
    let f = entry("main", &[&n], vec![param(&xs, tn)], body(stms, &[&r]));
    let p = program(ns, vec![f]);
    let xs = || vec![vi64(&[3], &[1, 2, 3])];
    // 3 >= 3: the kernel.
    let mut th = Thresholds::all(i64::MAX);
    th.values.insert("t".into(), 3);
    let (r, st) = run_with(&p, xs(), &th).unwrap();
    assert_eq!(r[0], vi64(&[3], &[2, 3, 4]));
    assert_eq!(st, stats(&[("segmap", 1)], 3, 0));
    // 3 < 4: the replicate.
    let mut th = Thresholds::all(0);
    th.values.insert("t".into(), 4);
    let (r, st) = run_with(&p, xs(), &th).unwrap();
    assert_eq!(r[0], vi64(&[3], &[7, 7, 7]));
    assert_eq!(st, stats(&[], 0, 1));
    // Names not listed use the default.
    let (r, _) = run_with(&p, xs(), &Thresholds::all(0)).unwrap();
    assert_eq!(r[0], vi64(&[3], &[2, 3, 4]));
}

/// Errors in threads: `xs[i + 1]` (line 7) is out of bounds in the last thread; `10 / xs[i]`
/// (line 9) divides by zero where `xs[i] = 0`.
#[test]
fn thread_errors_report_their_location() {
    let mut ns = NameSource::default();
    let (n, xs, i) = (ns.fresh("n"), ns.fresh("xs"), ns.fresh("i"));
    let kb = kbody(&mut ns, |b| {
        let j = b.binop(BinOp::Add(I64), var(&i), i64c(1));
        let x = b.index(t(I64), &xs, vec![var(&j)]);
        b.stms.last_mut().unwrap().loc = at(7);
        let d = b.binop(BinOp::Div(I64), i64c(10), var(&x));
        b.stms.last_mut().unwrap().loc = at(9);
        vec![ret(&d)]
    });
    let tn = arr(I64, &[&n]);
    let k = seg(SegKind::Map, &[(&i, var(&n))], vec![t(I64)], kb);
    let ys = ns.fresh("ys");
    let stms = vec![hstm(&[(&ys, tn.clone())], k)];
    let f = entry("main", &[&n], vec![param(&xs, tn)], body(stms, &[&ys]));
    let p = program(ns, vec![f]);
    let th = Thresholds::default();
    let e = run_with(&p, vec![vi64(&[3], &[1, 2, 5])], &th).unwrap_err();
    assert_eq!(e.loc, at(7));
    assert!(e.message.contains("out of bounds"), "{e}");
    let e = run_with(&p, vec![vi64(&[4], &[1, 2, 0, 5])], &th).unwrap_err();
    assert_eq!(e.loc, at(9));
    assert!(e.message.contains("division by zero"), "{e}");
}

/// A host function called from a thread and from host code: `sq x = x * x`;
/// `main xs = (segmap [i < n]: sq xs[i], sq 7)`.
#[test]
fn host_function_calls() {
    let mut ns = NameSource::default();
    let (x, x2) = (ns.fresh("x"), ns.fresh("x2"));
    let sq = FunDef {
        name: Arc::from("sq"),
        entry: None,
        size_params: vec![],
        params: vec![param(&x, t(I64))],
        ret: vec![t(I64).to_ext()],
        body: body(
            vec![plain(
                &[(&x2, t(I64))],
                Exp::BinOp(BinOp::Mul(I64), var(&x), var(&x)),
            )],
            &[&x2],
        ),
        attrs: Attrs::default(),
    };
    let call = |a: SubExp| Exp::Apply {
        fun: Arc::from("sq"),
        args: vec![a],
        ret: vec![t(I64).to_ext()],
    };
    let (n, xs, i, ys, s) = (
        ns.fresh("n"),
        ns.fresh("xs"),
        ns.fresh("i"),
        ns.fresh("ys"),
        ns.fresh("s"),
    );
    let kb = kbody(&mut ns, |b| {
        let v = b.index(t(I64), &xs, vec![var(&i)]);
        vec![ret(&b.bind("r", t(I64), call(var(&v))))]
    });
    let tn = arr(I64, &[&n]);
    let stms = vec![
        hstm(
            &[(&ys, tn.clone())],
            seg(SegKind::Map, &[(&i, var(&n))], vec![t(I64)], kb),
        ),
        plain(&[(&s, t(I64))], call(i64c(7))),
    ];
    let f = entry("main", &[&n], vec![param(&xs, tn)], body(stms, &[&ys, &s]));
    let p = program(ns, vec![sq, f]);
    let (r, st) = run(&p, vec![vi64(&[3], &[1, -2, 3])]);
    assert_eq!(r, vec![vi64(&[3], &[1, 4, 9]), s64(49)]);
    assert_eq!(st, stats(&[("segmap", 1)], 3, 0));
}

/// Arguments are checked as by the interpreter.
#[test]
fn entry_argument_errors() {
    let mut ns = NameSource::default();
    let (n, xs) = (ns.fresh("n"), ns.fresh("xs"));
    let f = entry(
        "main",
        &[&n],
        vec![param(&xs, arr(I64, &[&n]))],
        body(vec![], &[&xs]),
    );
    let p = program(ns, vec![f]);
    let th = Thresholds::default();
    let e = run_with(&p, vec![], &th).unwrap_err();
    assert_eq!(e.message, "entry `main` expects 1 arguments, got 0");
    let e = run_with(&p, vec![vf64(&[1], &[1.0])], &th).unwrap_err();
    assert_eq!(e.message, "argument 1: expected []i64, got [1]f64");
    let e = run_entry(&p, "nope", vec![], &th).unwrap_err();
    assert_eq!(e.message, "no entry point named `nope`");
}
