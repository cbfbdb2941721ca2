//! Tests of reverse mode: `vjp_lambda_in` applied to the body of a program's entry `f`, run on the
//! interpreter, compared with hand-worked values and, for every program, with central finite
//! differences along a direction: ⟨x̄, ẋ⟩ = ⟨ȳ, (f(x+hẋ) − f(x−hẋ))/2h⟩.

use super::{size_types, vjp_lambda_in};
use crate::ir::*;
use crate::value::{Buffer, Value};
use crate::values::parse_values;

pub(super) fn vals(s: &str) -> Vec<Value> {
    parse_values(s.as_bytes()).expect("test values")
}

/// The program with its entry `f` replaced by `g`: the vjp of `f` (args, then seeds; returns
/// the primal results, then the adjoints of the args). Checked and simplified.
pub(super) fn vjp_program(src: &str) -> (crate::Compiled, Program) {
    try_vjp_program(src).unwrap_or_else(|e| panic!("vjp: {e}"))
}

/// [`vjp_program`], returning the error of `vjp_lambda` when the entry cannot be differentiated.
pub(super) fn try_vjp_program(src: &str) -> Result<(crate::Compiled, Program), String> {
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
        .map(|t| super::ext_to_type(t, &[]).expect("closed result type"))
        .collect();
    let lam = Lambda {
        params: f.params.clone(),
        body: f.body.clone(),
        ret,
    };
    let vl = vjp_lambda_in(&lam, &mut prog.name_source, &size_types(&f.size_params))?;
    let n = vl.params.len();
    let g = FunDef {
        name: "g".into(),
        entry: Some(EntryPoint {
            name: "g".into(),
            param_counts: vec![1; n],
            result_counts: vec![1; vl.ret.len()],
        }),
        size_params: f.size_params.clone(),
        params: vl.params,
        ret: vl.ret.iter().map(|t| t.to_ext()).collect(),
        body: vl.body,
        attrs: Attrs::default(),
    };
    prog.funs.push(g);
    if let Err(e) = crate::ir::check::check_program(&prog) {
        panic!(
            "IR check after vjp: {e:?}\n{}",
            crate::ir::print::program_to_string(&prog)
        );
    }
    let prog = crate::passes::simplify(prog);
    crate::ir::check::check_program(&prog)
        .unwrap_or_else(|e| panic!("IR check after simplify: {e:?}"));
    Ok((c, prog))
}

fn run(p: &Program, entry: &str, args: Vec<Value>) -> Vec<Value> {
    crate::interp::run_entry(p, entry, args).unwrap_or_else(|e| panic!("run {entry}: {e}"))
}

pub(super) fn floats(vs: &[Value]) -> Vec<f64> {
    let mut out = vec![];
    for v in vs {
        match v {
            Value::Scalar(crate::prim::PrimValue::F64(x)) => out.push(*x),
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

pub(super) fn perturb(xs: &[Value], dirs: &[f64], h: f64) -> Vec<Value> {
    let mut k = 0;
    xs.iter()
        .map(|x| match x {
            Value::Scalar(crate::prim::PrimValue::F64(a)) => {
                k += 1;
                Value::Scalar(crate::prim::PrimValue::F64(a + h * dirs[k - 1]))
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
                    Value::Array(crate::value::ArrayValue::new(
                        a.shape.clone(),
                        Buffer::F64(q),
                    ))
                }
                _ => x.clone(),
            },
            v => v.clone(),
        })
        .collect()
}

/// Runs the vjp of `f` at `args` with `seeds`, checks it against finite differences along a
/// fixed pseudo-random direction, and returns the adjoints (as f64s).
pub(super) fn check_vjp(src: &str, args: &str, seeds: &str) -> Vec<f64> {
    let (c, p) = vjp_program(src);
    let args = vals(args);
    let seeds = vals(seeds);
    let nres = seeds.len();
    let mut all = args.clone();
    all.extend(seeds.clone());
    let out = run(&p, "g", all);
    let adjs = floats(&out[nres..]);
    // Finite differences of the primal along a direction.
    let n = floats(&args).len();
    let dirs: Vec<f64> = (0..n)
        .map(|i| ((i * 7919 + 13) % 17) as f64 / 8.0 - 1.0)
        .collect();
    let h = 1e-6;
    let fp = c.run_interp("f", perturb(&args, &dirs, h)).expect("f(x+h)");
    let fm = c
        .run_interp("f", perturb(&args, &dirs, -h))
        .expect("f(x-h)");
    let (fp, fm, ys) = (floats(&fp), floats(&fm), floats(&seeds));
    let fd: f64 = fp
        .iter()
        .zip(&fm)
        .zip(&ys)
        .map(|((a, b), y)| (a - b) / (2.0 * h) * y)
        .sum();
    let lhs: f64 = adjs.iter().zip(&dirs).map(|(a, d)| a * d).sum();
    assert!(
        (lhs - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
        "⟨x̄, ẋ⟩ = {lhs} but finite differences give {fd}\nadjoints: {adjs:?}\n{}",
        crate::ir::print::program_to_string(&p)
    );
    adjs
}

pub(super) fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-3 * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

#[test]
fn scalar_worked_case() {
    // ad-rules.md §7: f(x1,x2) = ln x1 + x1·x2 − sin x2 at (2,5): vjp = (5.5, 1.716).
    let a = check_vjp(
        "entry f (x1: f64) (x2: f64) = f64.log x1 + x1*x2 - f64.sin x2",
        "2.0 5.0",
        "1.0",
    );
    close(&a, &[5.5, 1.7163378145367738]);
}

#[test]
fn scalar_functions() {
    check_vjp(
        "entry f (x: f64) (y: f64) = (f64.exp (x*y) / (1 + x*x), f64.atan2 x y + f64.sqrt (y*y+1), f64.max x y * f64.tanh x)",
        "0.3 -1.2",
        "1.0 -2.0 0.5",
    );
}

#[test]
fn map_with_free_scalar_and_array() {
    let a = check_vjp(
        "entry f [n] (xs: [n]f64) (s: f64) (a: [3]f64) = map (\\x -> x * s + a[1] * x) xs",
        "[1.0, 2.0, 3.0] 2.0 [5.0, 7.0, 9.0]",
        "[1.0, 1.0, 1.0]",
    );
    close(&a, &[9.0, 9.0, 9.0, 6.0, 0.0, 6.0, 0.0]);
}

#[test]
fn map_gather_accumulates() {
    // ad-rules.md §7: map (λi → x[i/2]) (iota 6), ȳ = [1..6] → x̄ = [3,7,11].
    let a = check_vjp(
        "entry f (x: [3]f64) = map (\\i -> x[i/2]) (iota 6)",
        "[1.0, 2.0, 3.0]",
        "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
    );
    close(&a, &[3.0, 7.0, 11.0]);
    let a = check_vjp(
        "entry f (x: [6]f64) = map (\\i -> x[2*i] + x[2*i+1]) (iota 3)",
        "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
        "[1.0, 2.0, 3.0]",
    );
    close(&a, &[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]);
}

#[test]
fn nested_maps_with_free_arrays() {
    check_vjp(
        "entry f [n][m] (xss: [n][m]f64) (v: [m]f64) = map (\\xs -> map2 (\\x j -> x * v[j] * v[(j+1) % m]) xs (iota m)) xss",
        "[[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]] [2.0, 3.0]",
        "[[1.0, 0.5], [2.0, -1.0], [1.5, 1.0]]",
    );
}

#[test]
fn if_in_map_and_at_top() {
    check_vjp(
        "entry f [n] (xs: [n]f64) (y: f64) = let z = if y > 0 then y * y else -y in map (\\x -> if x > 1 then x * z else f64.sin x * y) xs",
        "[0.5, 2.0, 3.0] 1.5",
        "[1.0, 2.0, 3.0]",
    );
    check_vjp(
        "entry f [n] (xs: [n]f64) (y: f64) = let z = if y > 0 then y * y else -y in map (\\x -> if x > 1 then x * z else f64.sin x * y) xs",
        "[0.5, 2.0, 3.0] -1.5",
        "[1.0, 2.0, 3.0]",
    );
}

#[test]
fn array_operations() {
    check_vjp(
        "entry f (xs: [4]f64) (y: f64) = let a = copy xs with [1] = y * 2 in let b = concat a (reverse xs) in let c = replicate 2 b in (transpose c, a[0] * a[2], c[1][3:5])",
        "[1.0, 2.0, 3.0, 4.0] 1.5",
        "[[1.0, 2.0], [0.5, 0.5], [1.0, 1.0], [2.0, 0.0], [1.0, 1.0], [3.0, 1.0], [1.0, 2.0], [1.0, 1.0]] 2.0 [1.0, -1.0]",
    );
}

/// Paper 000, Figure 2: `map (\c as -> if c then .. else map (\a -> a*a) as) cs ass`. A perfect
/// nest: after simplification no forward sweep is re-executed (no `a*a` remains: only the
/// adjoint `2*a*x̄` is computed; the primal map is dead since only the adjoints are returned).
#[test]
fn figure2_perfect_nest_reexecutes_nothing() {
    let src = "entry f [n][m] (cs: [n]bool) (ass: [n][m]f64) = map2 (\\c as -> if c then map (\\a -> a*3) as else map (\\a -> a*a) as) cs ass";
    let (_, p) = vjp_program(src);
    // Keep only the adjoints (drop the primal result) and simplify again.
    let mut p = p;
    let g = p.funs.iter_mut().find(|f| &*f.name == "g").expect("g");
    g.body.result.remove(0);
    g.ret.remove(0);
    if let Some(e) = g.entry.as_mut() {
        e.result_counts.remove(0);
    }
    let p = crate::passes::simplify(p);
    let text = crate::ir::print::program_to_string(&p);
    let g_text = &text[text.find("entry g").unwrap_or(0)..];
    // Only the three return-sweep maps remain (outer, then-branch, else-branch).
    assert_eq!(g_text.matches("map(").count(), 3, "{g_text}");
    insta::assert_snapshot!("figure2_vjp", g_text);
}

/// Four nested loops with products at two levels: each level keeps the next one's checkpoints
/// (`ad::rev::loops`, kept loops). Its `w` and `s0`: [`FOUR_LEVELS_ARGS`].
pub(super) const FOUR_LEVELS: &str = "entry f [n] (w: [n][n]f64) (s0: [n][n][n]f64) : f64 =
      let s = loop s = s0 for t < 2 do
        let m = loop m = s[t] for j < n do
          let pm = map (\\row -> map (\\q -> f64.sum (map2 (*) q row)) w) m
          let x = loop x = m[j] for _k < n do
            let px = map (\\q -> f64.sum (map2 (*) q x)) w
            in map2 (\\a b -> f64.sin (a + 0.5 * b)) x px
          in map2 (\\r q -> map2 (\\a b -> f64.tanh (a * 0.3 + b * x[j % n])) r q) m pm
        in map (\\mm -> map2 (\\r q -> map2 (\\a b -> a * 0.9 + 0.1 * b) r q) mm m) s
      in f64.sum (map (\\mm -> f64.sum (map f64.sum mm)) s)";
pub(super) const FOUR_LEVELS_ARGS: &str =
    "[[0.5, -0.25], [0.3, 0.2]] [[[0.1, 0.2], [0.3, -0.4]], [[-0.5, 0.6], [0.7, 0.8]]]";

/// A kept inner loop restoring a `#[true_dep]` parameter from its final value. Its `a`, `s0`
/// and `v0`: `[0.5, -0.75, 0.25] [0.1, 0.2, 0.3] [0.4, -0.6]`.
pub(super) const TRUE_DEP_INNER: &str = "entry f (a: [3]f64) (s0: [3]f64) (v0: [2]f64) : f64 =
      let (s, v, tot) = loop (s, v, tot) = (s0, v0, 0f64) for _t < 3 do
        let (ys, c) = loop (#[true_dep] ys, c) = (copy s, v[0]) for i < 2i64 do
          (ys with [i + 1] = ys[i] * a[i] + c, c * ys[i] + v[1])
        in (map2 (\\x y -> f64.tanh (x + y * c)) ys a, map (\\q -> f64.sin (q + c)) v,
            tot + f64.sum ys)
      in tot + f64.sum s + f64.sum v";
