//! Tests of the accumulator rules through nested AD: the vjp (or jvp) of the vjp of a program's
//! entry `f`. The inner vjp of a `map` with free arrays makes accumulators (`withacc` around the
//! return-sweep `map`, `upd_acc` inside, accumulators passed to inner maps and through `if`s),
//! which the outer transformation differentiates. Every result is checked against central finite
//! differences of the inner vjp, and some against hand-worked second derivatives.

use super::super::tests::{FOUR_LEVELS, FOUR_LEVELS_ARGS, TRUE_DEP_INNER};
use super::super::{size_types, vjp_lambda, vjp_lambda_in};
use crate::ad::fwd::jvp_lambda;
use crate::ir::*;
use crate::prim::PrimValue;
use crate::value::{ArrayValue, Buffer, Value};
use crate::values::parse_values;
use std::collections::HashMap;

fn vals(s: &str) -> Vec<Value> {
    parse_values(s.as_bytes()).expect("test values")
}

/// The program of `src` without its entry `f`, `f` as a lambda, and `f`'s size params.
fn entry_lambda(src: &str) -> (Program, Lambda, Vec<VName>) {
    let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let mut prog = c.ir.clone();
    let pos = prog
        .funs
        .iter()
        .position(|f| f.entry.as_ref().is_some_and(|e| &*e.name == "f"))
        .expect("entry f");
    let f = prog.funs.remove(pos);
    let ret: Vec<Type> = f
        .ret
        .iter()
        .map(|t| super::super::ext_to_type(t, &[]).expect("closed result type"))
        .collect();
    let lam = Lambda {
        params: f.params.clone(),
        body: f.body.clone(),
        ret,
    };
    (prog, lam, f.size_params.clone())
}

/// Adds `lam` as the entry `name`.
fn add_entry(prog: &mut Program, name: &str, lam: Lambda, size_params: &[VName]) {
    let n = lam.params.len();
    prog.funs.push(FunDef {
        name: name.into(),
        entry: Some(EntryPoint {
            name: name.into(),
            param_counts: vec![1; n],
            result_counts: vec![1; lam.ret.len()],
        }),
        size_params: size_params.to_vec(),
        params: lam.params,
        ret: lam.ret.iter().map(|t| t.to_ext()).collect(),
        body: lam.body,
        attrs: Attrs::default(),
    });
}

/// Checks the IR, simplifies it and checks it again.
fn finish(prog: Program) -> Program {
    if let Err(e) = crate::ir::check::check_program(&prog) {
        panic!(
            "IR check after AD: {e:?}\n{}",
            crate::ir::print::program_to_string(&prog)
        );
    }
    let prog = crate::passes::simplify(prog);
    if let Err(e) = crate::ir::check::check_program(&prog) {
        panic!(
            "IR check after simplify: {e:?}\n{}",
            crate::ir::print::program_to_string(&prog)
        );
    }
    prog
}

/// Two programs (every name is bound once per program, and `h` contains `g`'s statements):
/// one with the entry `g` = vjp f, one with the entry `h` = `outer` g.
/// `outer` gets the types of the free variables of its lambda (`f`'s sizes).
fn nested(
    src: &str,
    outer: impl FnOnce(&Lambda, &mut NameSource, &HashMap<VName, Type>) -> Result<Lambda, String>,
) -> (Program, Program) {
    let (mut prog, lam, sizes) = entry_lambda(src);
    let env = size_types(&sizes);
    let g = vjp_lambda_in(&lam, &mut prog.name_source, &env).unwrap_or_else(|e| panic!("vjp: {e}"));
    let h = outer(&g, &mut prog.name_source, &env).unwrap_or_else(|e| panic!("nested AD: {e}"));
    let mut pg = prog.clone();
    add_entry(&mut pg, "g", g, &sizes);
    add_entry(&mut prog, "h", h, &sizes);
    (finish(pg), finish(prog))
}

/// vjp of vjp.
fn vjp_of_vjp(src: &str) -> (Program, Program) {
    nested(src, vjp_lambda_in)
}

/// jvp of vjp (forward over reverse).
fn jvp_of_vjp(src: &str) -> (Program, Program) {
    nested(src, |l, ns, _| jvp_lambda(l, ns))
}

fn run(p: &Program, entry: &str, args: Vec<Value>) -> Vec<Value> {
    crate::interp::run_entry(p, entry, args).unwrap_or_else(|e| panic!("run {entry}: {e}"))
}

fn floats(vs: &[Value]) -> Vec<f64> {
    let mut out = vec![];
    for v in vs {
        match v {
            Value::Scalar(PrimValue::F64(x)) => out.push(*x),
            Value::Array(a) => {
                if let Buffer::F64(xs) = &a.data {
                    out.extend(xs.iter().copied())
                }
            }
            _ => {}
        }
    }
    out
}

/// `xs` with the `f64`s moved by `h·dirs` (in order).
fn perturb(xs: &[Value], dirs: &[f64], h: f64) -> Vec<Value> {
    let mut k = 0;
    xs.iter()
        .map(|x| match x {
            Value::Scalar(PrimValue::F64(a)) => {
                k += 1;
                Value::Scalar(PrimValue::F64(a + h * dirs[k - 1]))
            }
            Value::Array(a) => match &a.data {
                Buffer::F64(p) => {
                    let q: Vec<f64> = p
                        .iter()
                        .map(|u| {
                            k += 1;
                            u + h * dirs[k - 1]
                        })
                        .collect();
                    Value::Array(ArrayValue::new(a.shape.clone(), Buffer::F64(q)))
                }
                _ => x.clone(),
            },
            v => v.clone(),
        })
        .collect()
}

fn directions(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7919 + 13) % 17) as f64 / 8.0 - 1.0)
        .collect()
}

/// Central differences of entry `g` at `args` along `dirs`, as f64s.
fn fd(p: &Program, args: &[Value], dirs: &[f64]) -> Vec<f64> {
    let h = 1e-6;
    let fp = floats(&run(p, "g", perturb(args, dirs, h)));
    let fm = floats(&run(p, "g", perturb(args, dirs, -h)));
    fp.iter()
        .zip(&fm)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect()
}

fn assert_close(what: &str, a: f64, b: f64, p: &Program) {
    assert!(
        (a - b).abs() <= 1e-5 * (1.0 + b.abs()),
        "{what}: {a} but expected {b}\n{}",
        crate::ir::print::program_to_string(p)
    );
}

/// Runs `h` = vjp (vjp f) at `args` (f's args then f's result seeds) with `seeds` (one per
/// result of the inner vjp: f's results, then f's args); checks ⟨adjoints, d⟩ against finite
/// differences of `g` = vjp f along d. Returns the adjoints (of f's args, then of the seeds).
fn check_vjp_vjp(src: &str, args: &str, seeds: &str) -> Vec<f64> {
    let (pg, p) = vjp_of_vjp(src);
    let args = vals(args);
    let seeds = vals(seeds);
    let nres = seeds.len();
    let mut all = args.clone();
    all.extend(seeds.clone());
    let out = run(&p, "h", all);
    // The primal results of h are g's results.
    let g_out = floats(&run(&pg, "g", args.clone()));
    let h_prim = floats(&out[..nres]);
    assert_eq!(g_out.len(), h_prim.len());
    for (a, b) in h_prim.iter().zip(&g_out) {
        assert_close("primal result of vjp of vjp", *a, *b, &p);
    }
    let adjs = floats(&out[nres..]);
    let dirs = directions(floats(&args).len());
    let d = fd(&pg, &args, &dirs);
    let ys = floats(&seeds);
    let rhs: f64 = d.iter().zip(&ys).map(|(a, b)| a * b).sum();
    let lhs: f64 = adjs.iter().zip(&dirs).map(|(a, b)| a * b).sum();
    assert_close("⟨x̄, ẋ⟩ of vjp of vjp", lhs, rhs, &p);
    adjs
}

/// Runs `h` = jvp (vjp f) at `args` along `tans`; checks the tangents against finite
/// differences of `g`. Returns the tangents.
fn check_jvp_vjp(src: &str, args: &str, tans: &str) -> Vec<f64> {
    let (pg, p) = jvp_of_vjp(src);
    let args = vals(args);
    let tans = vals(tans);
    let mut all = args.clone();
    all.extend(tans.clone());
    let out = run(&p, "h", all);
    let nres = out.len() / 2;
    let t = floats(&out[nres..]);
    let dirs = floats(&tans);
    let d = fd(&pg, &args, &dirs);
    assert_eq!(t.len(), d.len());
    for (a, b) in t.iter().zip(&d) {
        assert_close("tangent of jvp of vjp", *a, *b, &p);
    }
    t
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-6 * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

const SIN_X2: &str = "entry f [n] (x: [n]f64) = map (\\i -> f64.sin x[i] * x[i] * x[i]) (iota n)";

fn d1(x: f64) -> f64 {
    x.cos() * x * x + 2.0 * x * x.sin()
}
fn d2(x: f64) -> f64 {
    -x.sin() * x * x + 4.0 * x * x.cos() + 2.0 * x.sin()
}

#[test]
fn hessian_vector_product_of_gather() {
    // f(x)ᵢ = sin(xᵢ)·xᵢ² read through a free array: the inner vjp accumulates x̄ in a withacc.
    // g(x, ȳ) = (f(x), ȳ·f'(x)); with seeds (0, v): x̄₂ = v·ȳ·f''(x), ȳ₂ = v·f'(x).
    let x = [0.5, -1.25, 2.0];
    let yb = [1.0, 2.0, -0.5];
    let v = [0.25, 1.0, 3.0];
    let a = check_vjp_vjp(
        SIN_X2,
        "[0.5, -1.25, 2.0] [1.0, 2.0, -0.5]",
        "[0.0, 0.0, 0.0] [0.25, 1.0, 3.0]",
    );
    let mut want: Vec<f64> = (0..3).map(|i| v[i] * yb[i] * d2(x[i])).collect();
    want.extend((0..3).map(|i| v[i] * d1(x[i])));
    close(&a, &want);
    // With a seed on the primal result too: x̄₂ gains ŷ·f'(x).
    check_vjp_vjp(
        SIN_X2,
        "[0.5, -1.25, 2.0] [1.0, 2.0, -0.5]",
        "[1.0, -1.0, 0.5] [0.25, 1.0, 3.0]",
    );
}

#[test]
fn hessian_with_cross_terms() {
    // f(x)ᵢ = xᵢ·x₍ᵢ₊₁₎ mod n·sin x₍ᵢ₊₂₎ mod n: every x̄ᵢ gets three contributions.
    check_vjp_vjp(
        "entry f [n] (x: [n]f64) = map (\\i -> x[i] * x[(i+1)%n] * f64.sin x[(i+2)%n]) (iota n)",
        "[0.5, -1.25, 2.0, 0.75] [1.0, 2.0, -0.5, 1.5]",
        "[0.5, 0.0, 1.0, -1.0] [0.25, 1.0, 3.0, -2.0]",
    );
}

#[test]
fn vjp_of_vjp_n_is_0_and_1() {
    check_vjp_vjp(
        SIN_X2,
        "empty([0]f64) empty([0]f64)",
        "empty([0]f64) empty([0]f64)",
    );
    let a = check_vjp_vjp(SIN_X2, "[0.7] [2.0]", "[0.0] [1.5]");
    close(&a, &[1.5 * 2.0 * d2(0.7), 1.5 * d1(0.7)]);
}

#[test]
fn vjp_of_vjp_nested_maps_pass_accumulators() {
    // The inner vjp passes the accumulator of v̄ from the outer map to the inner one.
    check_vjp_vjp(
        "entry f [n][m] (xss: [n][m]f64) (v: [m]f64) = map (\\xs -> map2 (\\x j -> x * v[j] * v[(j+1) % m]) xs (iota m)) xss",
        "[[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]] [2.0, 3.0] [[1.0, 0.5], [2.0, -1.0], [1.5, 1.0]]",
        "[[0.5, 1.0], [0.0, 2.0], [1.0, 1.0]] [[1.0, -1.0], [0.5, 0.5], [2.0, 0.0]] [1.0, -2.0]",
    );
}

#[test]
fn vjp_of_vjp_accumulator_through_if() {
    // The accumulator of x̄ flows through an `if` inside the map.
    for x in ["[0.5, -1.25, 2.0]", "[-0.5, 1.25, -2.0]"] {
        check_vjp_vjp(
            "entry f [n] (x: [n]f64) = map (\\i -> if x[i] > 0 then x[i] * x[(i+1)%n] else f64.exp x[(i+2)%n]) (iota n)",
            &format!("{x} [1.0, 2.0, -0.5]"),
            "[0.5, 1.0, 0.0] [0.25, 1.0, 3.0]",
        );
    }
}

#[test]
fn vjp_of_vjp_duplicate_and_out_of_range_reads() {
    // Reads of the same element from several iterations (duplicates in the accumulator).
    check_vjp_vjp(
        "entry f (x: [3]f64) = map (\\i -> x[i/2] * x[i/2] * x[2 - i/2]) (iota 6)",
        "[1.0, 2.0, 3.0] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
        "[0.0, 1.0, 0.0, 1.0, 0.0, 1.0] [1.0, -1.0, 0.5]",
    );
}

#[test]
fn jvp_of_vjp_gather() {
    // Forward over reverse: the tangent of x̄ = ȳ·f'(x) along (ẋ, ẏ) is
    // ẏ·f'(x) + ȳ·f''(x)·ẋ.
    let t = check_jvp_vjp(
        SIN_X2,
        "[0.5, -1.25, 2.0] [1.0, 2.0, -0.5]",
        "[1.0, 0.5, -1.0] [0.0, 1.0, 2.0]",
    );
    let (x, yb, dx, dy) = (
        [0.5, -1.25, 2.0],
        [1.0, 2.0, -0.5],
        [1.0, 0.5, -1.0],
        [0.0, 1.0, 2.0],
    );
    let mut want: Vec<f64> = (0..3).map(|i| d1(x[i]) * dx[i]).collect();
    want.extend((0..3).map(|i| dy[i] * d1(x[i]) + yb[i] * d2(x[i]) * dx[i]));
    close(&t, &want);
}

#[test]
fn jvp_of_vjp_nested_and_if() {
    check_jvp_vjp(
        "entry f [n][m] (xss: [n][m]f64) (v: [m]f64) = map (\\xs -> map2 (\\x j -> x * v[j] * v[(j+1) % m]) xs (iota m)) xss",
        "[[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]] [2.0, 3.0] [[1.0, 0.5], [2.0, -1.0], [1.5, 1.0]]",
        "[[0.5, 1.0], [0.0, 2.0], [1.0, 1.0]] [1.0, -2.0] [[1.0, -1.0], [0.5, 0.5], [2.0, 0.0]]",
    );
    check_jvp_vjp(
        "entry f [n] (x: [n]f64) = map (\\i -> if x[i] > 0 then x[i] * x[(i+1)%n] else f64.exp x[(i+2)%n]) (iota n)",
        "[0.5, -1.25, 2.0] [1.0, 2.0, -0.5]",
        "[0.5, 1.0, 0.0] [0.25, 1.0, 3.0]",
    );
}

/// `λ(a: [4]f64, x: f64, i: i64) → withacc a (λc → upd c [i] (x·x); upd [i+1] (sin x))`,
/// with `+` as the accumulator's operator when `add` (an overwriting accumulator otherwise),
/// or `*` when `mul`.
fn acc_lambda(ns: &mut NameSource, add: bool, mul: bool) -> Lambda {
    use crate::ir::builder::{arr, binop_operator, lambda, var, Builder};
    use crate::prim::{FloatType, IntType, PrimType};
    let f64t = PrimType::Float(FloatType::F64);
    let i64t = PrimType::Int(IntType::I64);
    let at = arr(f64t, vec![SubExp::i64(4)]);
    lambda(
        ns,
        &[
            ("a", at.clone()),
            ("x", Type::Prim(f64t)),
            ("i", Type::Prim(i64t)),
        ],
        vec![at.clone()],
        |b, ps| {
            let c = b.fresh("c");
            let acc_t = Type::Acc {
                cert: c.clone(),
                shape: vec![SubExp::i64(4)],
                elems: vec![Type::Prim(f64t)],
            };
            let mut ib = Builder::new(b.ns);
            let xx = ib.binop(BinOp::Mul(f64t), var(&ps[1]), var(&ps[1]));
            let c1 = ib.bind(
                "c1",
                acc_t.clone(),
                Exp::UpdAcc {
                    acc: c.clone(),
                    idx: vec![var(&ps[2])],
                    vals: vec![var(&xx)],
                },
            );
            let s = ib.math(MathFn::Sin(crate::prim::FloatType::F64), vec![var(&ps[1])]);
            let i1 = ib.binop(BinOp::Add(i64t), var(&ps[2]), SubExp::i64(1));
            let c2 = ib.bind(
                "c2",
                acc_t.clone(),
                Exp::UpdAcc {
                    acc: c1,
                    idx: vec![var(&i1)],
                    vals: vec![var(&s)],
                },
            );
            let body = ib.finish(vec![var(&c2)]);
            let op = if mul {
                Some(binop_operator(
                    b.ns,
                    BinOp::Mul(f64t),
                    SubExp::Const(PrimValue::float(FloatType::F64, 1.0)),
                    true,
                ))
            } else if add {
                Some(binop_operator(
                    b.ns,
                    BinOp::Add(f64t),
                    SubExp::Const(PrimValue::float(FloatType::F64, 0.0)),
                    true,
                ))
            } else {
                None
            };
            let r = b.bind(
                "r",
                at.clone(),
                Exp::WithAcc {
                    inputs: vec![AccInput {
                        shape: vec![SubExp::i64(4)],
                        arrs: vec![ps[0].clone()],
                        op,
                    }],
                    lam: Lambda {
                        params: vec![Param {
                            name: c,
                            ty: acc_t.clone(),
                        }],
                        body,
                        ret: vec![acc_t],
                    },
                },
            );
            vec![var(&r)]
        },
    )
}

/// The vjp of [`acc_lambda`] at `a = [1,2,3,4]`, `x`, `i` with the seed `ȳ = [1,10,100,1000]`:
/// (ā, x̄).
fn withacc_vjp(add: bool, x: f64, i: i64) -> (Vec<f64>, f64) {
    let mut ns = NameSource::default();
    let lam = acc_lambda(&mut ns, add, false);
    let g = vjp_lambda(&lam, &mut ns).unwrap_or_else(|e| panic!("vjp: {e}"));
    let mut prog = crate::ir::builder::program(ns, vec![]);
    add_entry(&mut prog, "g", g, &[]);
    let p = finish(prog);
    let args = vals(&format!(
        "[1.0, 2.0, 3.0, 4.0] {x}f64 {i}i64 [1.0, 10.0, 100.0, 1000.0]"
    ));
    let out = run(&p, "g", args);
    let f = floats(&out);
    // Results: y, ā, x̄, ī (an i64, not a float).
    (f[4..8].to_vec(), f[8])
}

#[test]
fn withacc_add_worked_case() {
    // y = a + e_i·x² + e_{i+1}·sin x: ā = ȳ, x̄ = ȳ[i]·2x + ȳ[i+1]·cos x.
    let x: f64 = 0.5;
    let (a, xb) = withacc_vjp(true, x, 1);
    close(&a, &[1.0, 10.0, 100.0, 1000.0]);
    close(&[xb], &[10.0 * 2.0 * x + 100.0 * x.cos()]);
    // Out of range: the update at 4 (and at -1) is ignored, so is its adjoint.
    let (_, xb) = withacc_vjp(true, x, 3);
    close(&[xb], &[1000.0 * 2.0 * x]);
    let (_, xb) = withacc_vjp(true, x, -1);
    close(&[xb], &[1.0 * x.cos()]);
}

#[test]
fn withacc_overwrite_zeroes_overwritten_cells() {
    // y = a with [i] = x², [i+1] = sin x: ā = ȳ with the written cells zeroed.
    let x: f64 = 0.5;
    let (a, xb) = withacc_vjp(false, x, 1);
    close(&a, &[1.0, 0.0, 0.0, 1000.0]);
    close(&[xb], &[10.0 * 2.0 * x + 100.0 * x.cos()]);
    let (a, xb) = withacc_vjp(false, x, 3);
    close(&a, &[1.0, 10.0, 100.0, 0.0]);
    close(&[xb], &[1000.0 * 2.0 * x]);
}

#[test]
fn withacc_with_another_operator_is_an_error() {
    let mut ns = NameSource::default();
    let lam = acc_lambda(&mut ns, true, true);
    let e = vjp_lambda(&lam, &mut ns).expect_err("`*` accumulator");
    assert!(e.contains("not `+`"), "{e}");
}

#[test]
fn jvp_of_withacc() {
    // Forward mode of the same function: ẏ = ȧ + e_i·2x·ẋ + e_{i+1}·cos x·ẋ.
    for add in [true, false] {
        let mut ns = NameSource::default();
        let lam = acc_lambda(&mut ns, add, false);
        let g = jvp_lambda(&lam, &mut ns).unwrap_or_else(|e| panic!("jvp: {e}"));
        let mut prog = crate::ir::builder::program(ns, vec![]);
        add_entry(&mut prog, "g", g, &[]);
        let p = finish(prog);
        let x: f64 = 0.5;
        let args = vals(&format!(
            "[1.0, 2.0, 3.0, 4.0] {x}f64 1i64 [1.0, 10.0, 100.0, 1000.0] 2.0f64 0i64"
        ));
        let f = floats(&run(&p, "g", args));
        let (y, t) = (&f[0..4], &f[4..8]);
        if add {
            close(y, &[1.0, 2.0 + x * x, 3.0 + x.sin(), 4.0]);
            close(t, &[1.0, 10.0 + 4.0 * x, 100.0 + 2.0 * x.cos(), 1000.0]);
        } else {
            close(y, &[1.0, x * x, x.sin(), 4.0]);
            close(t, &[1.0, 4.0 * x, 2.0 * x.cos(), 1000.0]);
        }
    }
}

/// `h (xss, yss) = map (vjp f) xss yss` for `f` of one row, then vjp of `h`: the accumulators
/// of the inner vjp are made inside the lambda of a `map` that is itself differentiated.
#[test]
fn vjp_of_map_of_vjp() {
    let (mut prog, lam, sizes) =
        entry_lambda("entry f [m] (x: [m]f64) = map (\\j -> f64.sin x[j] * x[(j+1) % m]) (iota m)");
    let g = vjp_lambda_in(&lam, &mut prog.name_source, &size_types(&sizes))
        .unwrap_or_else(|e| panic!("vjp: {e}"));
    let n = prog.name_source.fresh("n");
    let nse = SubExp::Var(n.clone());
    let row_ty = g.params[0].ty.clone();
    let mat_ty = row_ty.array_of(nse.clone());
    let pxss = Param {
        name: prog.name_source.fresh("xss"),
        ty: mat_ty.clone(),
    };
    let pyss = Param {
        name: prog.name_source.fresh("yss"),
        ty: mat_ty.clone(),
    };
    let r1 = Param {
        name: prog.name_source.fresh("r1"),
        ty: mat_ty.clone(),
    };
    let r2 = Param {
        name: prog.name_source.fresh("r2"),
        ty: mat_ty.clone(),
    };
    let h = Lambda {
        params: vec![pxss.clone(), pyss.clone()],
        body: Body {
            stms: vec![Stm {
                pat: Pat {
                    elems: vec![r1.clone(), r2.clone()],
                },
                exp: Exp::Soac(Soac::Map {
                    w: nse,
                    arrs: vec![pxss.name.clone(), pyss.name.clone()],
                    lam: g.clone(),
                }),
                attrs: Attrs::default(),
                loc: None,
            }],
            result: vec![SubExp::Var(r1.name), SubExp::Var(r2.name)],
        },
        ret: vec![mat_ty.clone(), mat_ty],
    };
    let mut all_sizes = vec![n];
    all_sizes.extend(sizes);
    let hh = vjp_lambda_in(&h, &mut prog.name_source, &size_types(&all_sizes))
        .unwrap_or_else(|e| panic!("vjp of map: {e}"));
    let mut pg = prog.clone();
    // `g` here is `h` (the function whose finite differences are checked).
    add_entry(&mut pg, "g", h, &all_sizes);
    add_entry(&mut prog, "h", hh, &all_sizes);
    let (pg, p) = (finish(pg), finish(prog));
    let args = vals("[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]] [[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]]");
    let seeds = vals("[[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]] [[0.25, 1.0, -2.0], [1.0, 1.5, 0.5]]");
    let mut all = args.clone();
    all.extend(seeds.clone());
    let out = run(&p, "h", all);
    let adjs = floats(&out[2..]);
    let dirs = directions(floats(&args).len());
    let d = fd(&pg, &args, &dirs);
    let rhs: f64 = d.iter().zip(&floats(&seeds)).map(|(a, b)| a * b).sum();
    let lhs: f64 = adjs.iter().zip(&dirs).map(|(a, b)| a * b).sum();
    assert_close("⟨x̄, ẋ⟩ of vjp of map of vjp", lhs, rhs, &p);
}

#[test]
fn second_order_through_a_loop_whose_products_are_kept() {
    // The inner vjp's loop keeps W h of every iteration (`ad::rev::loops`, kept results); the
    // outer transformation differentiates that forward sweep, its tapes included.
    let src = "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
                 loop h = h0 for _i < 2 do
                   map f64.tanh (map (\\row -> f64.sum (map2 (*) row h)) w)";
    let args = "[[0.5, -0.25], [0.3, 0.2]] [0.7, -0.3] [1.0, -2.0]";
    check_vjp_vjp(
        src,
        args,
        "[0.5, 1.0] [[1.0, 0.5], [-0.5, 2.0]] [0.25, -1.0]",
    );
    check_jvp_vjp(
        src,
        args,
        "[[0.5, 1.0], [0.0, -1.0]] [1.0, 0.5] [0.25, -1.0]",
    );
}

#[test]
fn second_order_through_an_inner_loop_whose_tapes_are_kept() {
    // The inner vjp's time loop keeps the layer loop's checkpoints (`ad::rev::loops`, kept
    // loops); the outer transformation differentiates that forward sweep, its tapes included.
    let src = "entry f [l][n] (w: [l][n]f64) (s0: [l][n]f64) : [n]f64 =
      let (_, x) = loop (s, x) = (s0, replicate n 0.5) for _t < 2 do
        loop (st, x) = (s, x) for i < l do
          let h = map3 (\\a b c -> f64.tanh (a * b + c)) w[i] x st[i]
          in (st with [i] = h, h)
      in x";
    let args = "[[0.5, -0.25], [0.3, 0.2]] [[0.7, -0.3], [0.1, 0.4]] [1.0, -2.0]";
    check_vjp_vjp(
        src,
        args,
        "[0.25, -1.0] [[0.5, 1.0], [0.25, -0.5]] [[1.0, 0.5], [-0.5, 2.0]]",
    );
    check_jvp_vjp(
        src,
        args,
        "[[0.5, 1.0], [0.0, -1.0]] [[1.0, 0.5], [0.25, 0.75]] [0.25, -1.0]",
    );
}

#[test]
fn second_order_through_kept_loops_with_true_dep_products_and_accumulators() {
    // A kept inner loop restoring a #[true_dep] parameter from its final value.
    let src = TRUE_DEP_INNER;
    let args = "[0.5, -0.75, 0.25] [0.1, 0.2, 0.3] [0.4, -0.6] 1.0";
    check_vjp_vjp(
        src,
        args,
        "0.5 [1.0, 0.5, -0.5] [0.25, 1.0, -1.0] [0.5, 2.0]",
    );
    check_jvp_vjp(
        src,
        args,
        "[1.0, 0.5, -0.5] [0.25, 1.0, -1.0] [0.5, 2.0] 0.3",
    );
    // Four levels, kept products at two of them.
    let src = FOUR_LEVELS;
    let s1 = "[[[1.0, 0.5], [-0.5, 0.25]], [[0.3, -0.2], [0.1, 0.9]]]";
    let args = format!("{FOUR_LEVELS_ARGS} 1.0");
    check_vjp_vjp(src, &args, &format!("0.5 [[1.0, -1.0], [0.5, 0.25]] {s1}"));
    check_jvp_vjp(src, &args, &format!("[[1.0, -1.0], [0.5, 0.25]] {s1} 0.5"));
    // In a map's lambda: w and x0 get accumulators (jvp of vjp; vjp of vjp of a loop in a map
    // with free arrays is not supported: "a loop carrying an accumulator").
    let src = "entry f [l][n] (w: [l][n]f64) (s0s: [2][l][n]f64) (x0: [n]f64) : [2]f64 =
      map (\\s0 ->
        let (_, tot) = loop (s, tot) = (s0, 0f64) for _t < 3 do
          let (s', x) = loop (st, x) = (s, x0) for i < l do
            let h = map3 (\\a b c -> f64.tanh (a * b + c)) w[i] x st[i]
            in (st with [i] = h, h)
          in (s', tot + f64.sum (map (\\y -> y * y) x))
        in tot) s0s";
    let (lw, ls) = (
        "[[0.5, -0.25, 0.1], [0.3, 0.2, -0.4]]",
        "[[0.7, -0.3, 0.2], [0.1, 0.4, -0.6]]",
    );
    check_jvp_vjp(
        src,
        &format!("{lw} [{ls}, {lw}] [0.9, -0.2, 0.35] [1.0, -0.5]"),
        &format!("{ls} [{lw}, {ls}] [0.25, -1.0, 0.5] [0.5, 1.0]"),
    );
}
