//! Tests of the reverse-mode rule for loops: finite-difference checks (`check_vjp`) and the
//! worked case of ad-rules.md §7 (address inversion, 004).

use super::super::tests::{check_vjp, close, vals, vjp_program};
use super::super::tests::{FOUR_LEVELS, FOUR_LEVELS_ARGS, TRUE_DEP_INNER};
use super::super::vjp_lambda;
use crate::ir::*;
use crate::value::Value;

/// The vjp of the entry `f` of `src` as a checked, simplified program with entry `g` (args, then
/// seeds), and the result of running it.
fn run_vjp(src: &str, args: &str, seeds: &str) -> (Program, Result<Vec<Value>, String>) {
    let (_, prog) = vjp_program(src);
    let mut all = vals(args);
    all.extend(vals(seeds));
    let out = crate::interp::run_entry(&prog, "g", all).map_err(|e| e.to_string());
    (prog, out)
}

/// The vjp of `f` must fail at run time with a message containing `msg`.
fn vjp_fails(src: &str, args: &str, seeds: &str, msg: &str) {
    let (_, out) = run_vjp(src, args, seeds);
    match out {
        Ok(v) => panic!("expected an error containing {msg:?}, got {v:?}"),
        Err(e) => assert!(e.contains(msg), "{e}"),
    }
}

#[test]
fn scalar_for_loop() {
    // x ← x² + sin x five times: dx_{k+1}/dx_k = 2x_k + cos x_k.
    let a = check_vjp(
        "entry f (x: f64) = loop x for _i < 5 do x * x + f64.sin x",
        "0.3",
        "1.0",
    );
    let (mut x, mut d) = (0.3f64, 1.0f64);
    for _ in 0..5 {
        d *= 2.0 * x + x.cos();
        x = x * x + x.sin();
    }
    close(&a, &[d]);
    // Two results, a seed on each, and a loop-invariant parameter.
    check_vjp(
        "entry f (x: f64) (y: f64) (c: f64) = loop (x, y, c) for i < 4 do (x * y + c, f64.sin x * c + f64.f64 (f64.i64 i), c)",
        "0.5 -0.7 1.25",
        "1.0 0.5 2.0",
    );
}

#[test]
fn in_place_updates() {
    let src =
        "entry f [n] (a: [n]f64) = loop a = copy a for i < n do a with [i] = a[i] * a[(i+1)%n]";
    check_vjp(src, "[1.5, 0.5, -2.0, 0.75]", "[1.0, 2.0, 3.0, -1.0]");
    let a = check_vjp(src, "[2.0, 3.0]", "[1.0, 0.0]");
    // y0 = a0·a1: ȳ0 = 1 gives (a1, a0).
    close(&a, &[3.0, 2.0]);
    // n = 1: a0 ← a0·a0.
    let a = check_vjp(src, "[3.0]", "[1.0]");
    close(&a, &[6.0]);
}

#[test]
fn free_array_and_free_scalar() {
    check_vjp(
        "entry f [n] (xs: [n]f64) (s: f64) (y: f64) = loop y for i < n do y * s + xs[i] * f64.sin y",
        "[0.5, -1.0, 2.0] 0.8 0.3",
        "1.0",
    );
    // The free array is also the initial value; the result is an array.
    check_vjp(
        "entry f [n] (xs: [n]f64) (s: f64) = loop ys = copy xs for i < 3 do map2 (\\y x -> y * s + x * x) ys xs",
        "[0.5, -1.0, 2.0] 0.8",
        "[1.0, -2.0, 0.5]",
    );
}

#[test]
fn loop_in_map() {
    check_vjp(
        "entry f [n] (xs: [n]f64) (a: [3]f64) (s: f64) = map (\\x -> loop y = x for i < 3 do y * a[i] + s * f64.sin y) xs",
        "[0.5, -1.0, 2.0, 0.1] [1.5, -0.5, 0.75] 0.8",
        "[1.0, 2.0, -1.0, 0.5]",
    );
    // A loop with in-place updates of a local array inside a map.
    check_vjp(
        "entry f [n] (xss: [n][3]f64) (w: [3]f64) = map (\\xs -> let r = loop ys = copy xs for i < 2 do ys with [i+1] = ys[i] * w[i] + ys[i+1] in r[2]) xss",
        "[[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]] [1.5, -0.5, 0.75]",
        "[1.0, 2.0]",
    );
}

#[test]
fn map_in_loop() {
    check_vjp(
        "entry f [n] (xs: [n]f64) (w: [n]f64) = loop xs for _i < 3 do map2 (\\x v -> f64.sin (x * v) + x) xs w",
        "[0.5, -1.0, 2.0] [1.5, -0.5, 0.75]",
        "[1.0, 2.0, -1.0]",
    );
    // The map reads a free array of the loop at computed indices (an accumulator in the map).
    check_vjp(
        "entry f [n] (xs: [n]f64) (w: [n]f64) = loop ys = xs for i < 2 do map (\\j -> ys[j] * w[(j+i) % n]) (iota n)",
        "[0.5, -1.0, 2.0] [1.5, -0.5, 0.75]",
        "[1.0, 2.0, -1.0]",
    );
}

#[test]
fn nested_loops() {
    check_vjp(
        "entry f [n] (xs: [n]f64) (s: f64) = loop acc = s for i < n do loop acc for j < i + 1 do acc * 0.9 + xs[j] * f64.cos acc",
        "[0.5, -1.0, 2.0] 0.3",
        "1.0",
    );
    check_vjp(
        "entry f [n] (xs: [n]f64) = loop ys = copy xs for i < 3 do loop ys for j < n - 1 do ys with [j+1] = ys[j+1] + ys[j] * f64.sin ys[j+1]",
        "[0.5, -1.0, 2.0, 0.3]",
        "[1.0, 0.5, -1.0, 2.0]",
    );
}

#[test]
fn while_loops() {
    let plain = "entry f (x: f64) (y: f64) = let (_, r) = loop (i, acc) = (0i64, x) while i < 4 do (i + 1, acc * y + f64.sin acc) in r";
    let bounded = "entry f (x: f64) (y: f64) = let (_, r) = #[bound(10)] loop (i, acc) = (0i64, x) while i < 4 do (i + 1, acc * y + f64.sin acc) in r";
    let forl = "entry f (x: f64) (y: f64) = loop acc = x for _i < 4 do acc * y + f64.sin acc";
    let a = check_vjp(plain, "0.5 1.5", "1.0");
    let b = check_vjp(bounded, "0.5 1.5", "1.0");
    let c = check_vjp(forl, "0.5 1.5", "1.0");
    close(&a, &c);
    close(&b, &c);
    // A condition on the differentiated value.
    check_vjp(
        "entry f (x: f64) (y: f64) = loop x while x < 10 do x * 1.5 + y",
        "1.0 0.3",
        "1.0",
    );
    check_vjp(
        "entry f (x: f64) (y: f64) = #[bound(20)] loop x while x < 10 do x * 1.5 + y",
        "1.0 0.3",
        "1.0",
    );
    // Zero iterations.
    let a = check_vjp(
        "entry f (x: f64) (y: f64) = loop x while x < 10 do x * 1.5 + y",
        "11.0 0.3",
        "2.0",
    );
    close(&a, &[2.0, 0.0]);
    // Too small a bound is an error, not a wrong gradient.
    vjp_fails(
        "entry f (x: f64) (y: f64) = #[bound(3)] loop x while x < 10 do x * 1.5 + y",
        "1.0 0.3",
        "1.0",
        "#[bound(3)]",
    );
}

/// The `while` and `for` loops of a program (nested ones included).
fn loop_forms(p: &Program) -> (usize, usize) {
    fn body(b: &Body, n: &mut (usize, usize)) {
        for s in &b.stms {
            if let Exp::Loop { form, .. } = &s.exp {
                match form {
                    LoopForm::While(_) => n.0 += 1,
                    LoopForm::For { .. } => n.1 += 1,
                }
            }
            for nb in crate::passes::traverse::nested_bodies_ref(&s.exp) {
                body(nb, n);
            }
        }
    }
    let mut n = (0, 0);
    for f in &p.funs {
        body(&f.body, &mut n);
    }
    n
}

#[test]
fn inert_while_loops_run_once() {
    // A binary search (integer state, float comparisons) picks the interval that a linear
    // interpolation differentiates: the search carries no adjoint, so reverse mode runs it
    // as it is, once, instead of counting its iterations and repeating them in a `for` loop.
    let src = "def search [g] (es: [g]f64) (e: f64) : i64 =
                 let (lo, _) = loop (lo, hi) = (0, g - 1) while hi - lo > 1 do
                   let mid = lo + (hi - lo) / 2
                   in if es[mid] > e then (lo, mid) else (mid, hi)
                 in lo
               entry f [g] (es: [g]f64) (ys: [g]f64) (e: f64) : f64 =
                 let lo = search es e
                 let t = (e - es[lo]) / (es[lo + 1] - es[lo])
                 in ys[lo] + t * (ys[lo + 1] - ys[lo])";
    let args = "[0.0, 0.25, 0.5, 1.0, 2.0] [1.0, 3.0, -2.0, 0.5, 4.0] 0.7";
    // On the interval [0.5, 1.0] (t = 0.4) of ys from -2 to 0.5: the ys adjoint is (1 - t, t),
    // dy/de = 2.5/0.5 = 5, and the es adjoint is -dy/de·(1 - t) and -dy/de·t.
    let a = check_vjp(src, args, "1.0");
    close(
        &a,
        &[0.0, 0.0, -3.0, -2.0, 0.0, 0.0, 0.0, 0.6, 0.4, 0.0, 5.0],
    );
    let (prog, _) = run_vjp(src, args, "1.0");
    assert_eq!(loop_forms(&prog), (1, 0), "one while loop and no for loop");
    // A while loop over a float is still rewritten (it carries an adjoint).
    let (prog, _) = run_vjp(
        "entry f (x: f64) (y: f64) = loop x while x < 10 do x * 1.5 + y",
        "1.0 0.3",
        "1.0",
    );
    assert!(loop_forms(&prog).1 > 0, "a for loop carries the adjoint");
    // Integers carry derivatives too: a loop whose integer state depends on the integer being
    // differentiated is rewritten, and its gradient is `want`.
    let carries = |src: &str, args: &str, want: &str| {
        let (prog, out) = run_vjp(src, args, "1i32");
        let out = out.expect("runs");
        assert_eq!(
            format!("{:?}", out.last()),
            format!("{:?}", vals(want).last()),
            "{src}"
        );
        assert!(
            loop_forms(&prog).1 > 0,
            "a for loop carries the adjoint: {src}"
        );
    };
    // Multiplying by x (Futhark's tests/ad/while0.fut): d(x^3)/dx at 4 is 48.
    carries(
        "entry f (y: i32) (x: i32) : i32 =
           let (_, r) = loop (i, acc) = (0, 1) while i < y do (i + 1, acc * x) in r",
        "3i32 4i32",
        "48i32",
    );
    // Through an initial value: acc = x · 2^y, so d/dx = 8 at y = 3.
    carries(
        "entry f (y: i32) (x: i32) : i32 =
           let (_, r) = loop (i, acc) = (0, x) while i < y do (i + 1, acc * 2) in r",
        "3i32 5i32",
        "8i32",
    );
}

#[test]
fn stripmine() {
    let body = "loop x for i < n do x * 0.9 + f64.sin (x + f64.i64 i) * 0.5";
    for n in ["0", "1", "4", "10", "17"] {
        let plain = check_vjp(
            &format!("entry f (x: f64) (n: i64) = {body}"),
            &format!("0.7 {n}i64"),
            "1.0",
        );
        for k in [2, 3] {
            let mined = check_vjp(
                &format!("entry f (x: f64) (n: i64) = #[stripmine({k})] {body}"),
                &format!("0.7 {n}i64"),
                "1.0",
            );
            close(&mined, &plain);
        }
    }
    // k = 1 is the loop itself; an absurd depth is refused.
    let one = check_vjp(
        &format!("entry f (x: f64) (n: i64) = #[stripmine(1)] {body}"),
        "0.7 10i64",
        "1.0",
    );
    let plain = check_vjp(
        &format!("entry f (x: f64) (n: i64) = {body}"),
        "0.7 10i64",
        "1.0",
    );
    close(&one, &plain);
    let c = crate::compile(
        "test.fut",
        &format!("entry f (x: f64) (n: i64) = #[stripmine(100)] {body}"),
    )
    .unwrap_or_else(|e| panic!("{}", e.render()));
    let f = c.ir.entry("f").expect("entry f");
    let lam = Lambda {
        params: f.params.clone(),
        body: f.body.clone(),
        ret: vec![Type::Prim(crate::prim::PrimType::Float(
            crate::prim::FloatType::F64,
        ))],
    };
    let mut ns = c.ir.name_source.clone();
    let e = vjp_lambda(&lam, &mut ns).expect_err("a 100-deep nest");
    assert!(e.contains("stripmine(100)"), "{e}");
    // An i32 loop counter.
    let body32 = "loop x for i < n do x * 0.9 + f64.sin (x + f64.i32 i) * 0.5";
    let plain = check_vjp(
        &format!("entry f (x: f64) (n: i32) = {body32}"),
        "0.7 11i32",
        "1.0",
    );
    let mined = check_vjp(
        &format!("entry f (x: f64) (n: i32) = #[stripmine(2)] {body32}"),
        "0.7 11i32",
        "1.0",
    );
    close(&mined, &plain);
    // An array loop, as Futhark's stripmine2.fut.
    let src = |a: &str| {
        format!(
            "entry f [n] (y: i64) (xs: [n]f64) = {a} loop accs = replicate n 1 for _i < y do map2 (*) accs xs"
        )
    };
    let plain = check_vjp(&src(""), "5i64 [1.0, 2.0, 3.0]", "[1.0, 1.0, 1.0]");
    let mined = check_vjp(
        &src("#[stripmine(2)]"),
        "5i64 [1.0, 2.0, 3.0]",
        "[1.0, 1.0, 1.0]",
    );
    close(&mined, &plain);
    close(&plain, &[5.0, 80.0, 405.0]);
}

#[test]
fn zero_iterations() {
    let a = check_vjp(
        "entry f (x: f64) (n: i64) = loop y = x for _i < n do y * y",
        "3.0 0i64",
        "2.0",
    );
    close(&a, &[2.0]);
    let a = check_vjp(
        "entry f [n] (xs: [n]f64) (m: i64) = loop ys = copy xs for i < m do ys with [i] = ys[i] * 2",
        "[1.0, 2.0] -3i64",
        "[1.0, 5.0]",
    );
    close(&a, &[1.0, 5.0]);
}

#[test]
fn address_inversion_worked_case() {
    // ad-rules.md §7 (004): j=1; while j<6 { k=j+1; j=k+2; a[j]=a[k]*a[j] }, loss a4+a7
    // → ā2 = 3, ā4 = 2, ā5 = 7, ā7 = 5, others 0.
    let src = "entry f (a: [8]f64) = let (_, a) = loop (j, a) = (1i64, copy a) while j < 6 do let k = j + 1 let j = k + 2 in (j, a with [j] = a[k] * a[j]) in a[4] + a[7]";
    let a = check_vjp(src, "[0.0, 0.0, 2.0, 0.0, 3.0, 5.0, 0.0, 7.0]", "1.0");
    close(&a, &[0.0, 0.0, 3.0, 0.0, 2.0, 7.0, 0.0, 5.0]);
}

/// The checkpoint arrays (`*_saved` loop parameters) of the differentiated entry `g`, by type.
fn checkpoint_types(p: &Program) -> Vec<String> {
    let text = crate::ir::print::program_to_string(p);
    let g = &text[text.find("entry g").unwrap_or(0)..];
    g.split(", ")
        .flat_map(|s| s.split('{'))
        .filter_map(|s| {
            let (name, ty) = s.split_once(": ")?;
            let ty = ty.split(" = ").next()?;
            // Loop parameters `<param>_saved_<n>` (not the updates, tapes or initial values).
            let name = name.trim();
            let (stem, num) = name.rsplit_once('_')?;
            (stem.ends_with("_saved")
                && !stem.contains("empty")
                && num.chars().all(|c| c.is_ascii_digit()))
            .then(|| ty.trim_end_matches('}').to_string())
        })
        .collect()
}

#[test]
fn inverted_integer_state() {
    // Paper 004: the address `j` of the worked case is recovered by inversion (j = j' - 2 - 1
    // in the reverse loop), not saved; only the array is checkpointed.
    let src = "entry f (a: [8]f64) = let (_, a) = loop (j, a) = (1i64, copy a) while j < 6 do let k = j + 1 let j = k + 2 in (j, a with [j] = a[k] * a[j]) in a[4] + a[7]";
    let (_, p) = vjp_program(src);
    let cps = checkpoint_types(&p);
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert!(cps[0].ends_with("[8i64]f64"), "{cps:?}");
    // Every invertible form (+ and - on either side, xor, the loop index, a free variable,
    // a copy), on i64 and i32, with wrap-around; the integer state feeds the float result.
    for (body, args, inverted) in [
        (
            "let j = j + 3 in (j, x * f64.i64 j)",
            "0.9 5i64 -2i64",
            true,
        ),
        (
            "let j = 7 - j in (j, x * f64.i64 j + 1)",
            "0.9 5i64 2i64",
            true,
        ),
        (
            "let j = (j - c) ^ 5 in (j, f64.sin (x * f64.i64 j))",
            "0.4 5i64 3i64",
            true,
        ),
        (
            "let j = j + i * c in (j, x * f64.i64 j)",
            "0.9 4i64 2i64",
            true,
        ),
        (
            "let k = j in let j = c + k in (j, x * 0.5 + f64.i64 j * x)",
            "0.9 5i64 -4i64",
            true,
        ),
        // Not invertible: saved.
        (
            "let j = j * 2 + 1 in (j, x * f64.i64 (j % 7))",
            "0.9 5i64 1i64",
            false,
        ),
        (
            "let j = i64.max j 3 + 1 in (j, x * f64.i64 j)",
            "0.9 5i64 1i64",
            false,
        ),
    ] {
        let src = format!(
            "entry f (x: f64) (n: i64) (c: i64) = let (_, y) = loop (j, x) = (c, x) for i < n do {body} in y"
        );
        check_vjp(&src, args, "1.0");
        let (_, p) = vjp_program(&src);
        let cps = checkpoint_types(&p);
        assert_eq!(
            cps.iter().any(|t| t.contains("i64")),
            !inverted,
            "{body}: {cps:?}"
        );
    }
    let src = "entry f (x: f64) (n: i32) = let (_, y) = loop (j, x) = (2147483600i32, x) for _i < n do let j = j + 30 in (j, x * f64.i32 (j % 5)) in y";
    check_vjp(src, "0.9 4i32", "1.0");
    let (_, p) = vjp_program(src);
    assert!(!checkpoint_types(&p).iter().any(|t| t.contains("i32")));
}

#[test]
fn true_dep() {
    // Futhark's truedep0.fut (on floats): the final array stands in for every iteration.
    let src = |a: &str| {
        format!(
            "entry f [n] (xs: [n]f64) = {a} loop ys = copy xs for i < n - 1 do ys with [i + 1] = ys[i] * ys[i]"
        )
    };
    let args = "[1.5, 2.0, 3.0, 4.0, 5.0]";
    let seeds = "[1.0, 0.5, 0.25, 2.0, 1.0]";
    let plain = check_vjp(&src(""), args, seeds);
    let dep = check_vjp(&src("#[true_dep]"), args, seeds);
    close(&dep, &plain);
    // Only the first element matters: y_k = x0^(2^k).
    let x0 = 1.5f64;
    let want: f64 = [1.0, 0.5, 0.25, 2.0, 1.0]
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let p = 2f64.powi(k as i32);
            s * p * x0.powf(p - 1.0)
        })
        .sum();
    close(&dep, &[want, 0.0, 0.0, 0.0, 0.0]);
    // Futhark's form, on the parameter: that parameter alone is not checkpointed.
    let on_param = "entry f [n] (xs: [n]f64) (c: f64) = loop (#[true_dep] ys, s) = (copy xs, c) for i < n - 1 do (ys with [i + 1] = ys[i] * ys[i], s * ys[i])";
    let param_attr = check_vjp(on_param, &format!("{args} 0.5"), &format!("{seeds} 1.0"));
    let both = "entry f [n] (xs: [n]f64) (c: f64) = loop (ys, s) = (copy xs, c) for i < n - 1 do (ys with [i + 1] = ys[i] * ys[i], s * ys[i])";
    close(
        &param_attr,
        &check_vjp(both, &format!("{args} 0.5"), &format!("{seeds} 1.0")),
    );
    let (_, p) = vjp_program(on_param);
    let text = crate::ir::print::program_to_string(&p);
    let g = &text[text.find("entry g").unwrap_or(0)..];
    // The marked array is not saved; the scalar is.
    assert!(g.contains(crate::ad::TRUE_DEP_PARAM), "{g}");
    assert!(
        !g.contains(&format!("{}_saved", crate::ad::TRUE_DEP_PARAM)),
        "{g}"
    );
    assert!(g.contains("_saved"), "{g}");
    let (_, p) = vjp_program(both);
    let text = crate::ir::print::program_to_string(&p);
    assert!(!text.contains(crate::ad::TRUE_DEP_PARAM), "{text}");
}

#[test]
fn loop_with_size_parameters() {
    // A rotation whose size the type checker cannot prove constant (a size parameter).
    check_vjp(
        "entry f [n] (xs: [n]f64) = let r = loop (ys: []f64) = xs for _i < 3 do concat (map f64.sin ys[1:]) (ys[:1]) in r[0] * r[1] + r[2] * r[3]",
        "[0.5, -1.0, 2.0, 0.3]",
        "1.0",
    );
    // A size that changes is reported.
    vjp_fails(
        "entry f [n] (xs: [n]f64) = let r = loop (ys: []f64) = xs for _i < 3 do concat ys (ys[:1]) in r[0]",
        "[0.5, -1.0]",
        "1.0",
        "sizes change",
    );
}

#[test]
fn odd_shapes_of_loops() {
    // Results that are a free variable, a constant, another parameter (a swap); a bool
    // parameter; two parameters with the same initial value.
    check_vjp(
        "entry f (x: f64) (y: f64) = loop (a, b, c, d, e) = (x, x, y, true, 0.0) for i < 5 do if d then (b * y, a + f64.sin b, y, !d, 1.0) else (b, a * c, c * c, !d, e + a)",
        "0.7 -0.4",
        "1.0 2.0 -1.0 false 3.0",
    );
    // `for x in xs`.
    check_vjp(
        "entry f [n] (xs: [n]f64) (y: f64) = loop acc = y for x in xs do acc * x + f64.sin acc",
        "[0.5, -1.0, 2.0] 0.3",
        "1.0",
    );
}

#[test]
fn loop_in_if_and_if_in_loop() {
    let src = "entry f [n] (xs: [n]f64) (y: f64) = if y > 0 then loop a = copy xs for i < n do if a[i] > 0 then a with [i] = a[i] * y else a with [i] = f64.sin a[(i+1)%n] else map (*y) xs";
    check_vjp(src, "[0.5, -1.0, 2.0] 0.3", "[1.0, 2.0, -0.5]");
    check_vjp(src, "[0.5, -1.0, 2.0] -0.3", "[1.0, 2.0, -0.5]");
}

#[test]
fn loop_in_map_in_loop() {
    // Accumulators for `a` at two levels: the map's and the inner loop's.
    check_vjp(
        "entry f [n] (xs: [n]f64) (a: [3]f64) = loop xs for j < 2 do map (\\x -> loop y = x for i < 3 do y * a[(i + j) % 3] + f64.sin y) xs",
        "[0.5, -1.0, 2.0, 0.1] [1.5, -0.5, 0.75]",
        "[1.0, 2.0, -1.0, 0.5]",
    );
    // Nested loops inside a map, with a stripmined inner loop.
    check_vjp(
        "entry f [n] (xs: [n]f64) (a: [3]f64) = map (\\x -> loop y = x for i < 3 do #[stripmine(2)] loop y for j < 5 do y * a[(i + j) % 3] * 0.5 + f64.sin y) xs",
        "[0.5, -1.0] [1.5, -0.5, 0.75]",
        "[1.0, 2.0]",
    );
}

/// `vjp` of `n` nested loops (issue 16, item 6): each reverse loop's dry run (which finds the
/// free variables its body contributes to) used to build the nested reverse loops in full,
/// twice the work per level: 16 levels took 4 s, 40 never finished. The names drawn while
/// compiling measure the work, without timing it. The derivative code is quadratic in `n`
/// (each level re-executes the forward sweeps of the loops inside it), and so is building it:
/// a loop's dry run, repeated by every enclosing one, was cubic until its result was cached by
/// the loop's shape (`Rev::cached_dry_run`). Doubling `n` multiplies the names by at most 5
/// (quadratic plus lower terms; they grew by more than 30 from 5 to 10 levels at first, and
/// up to 8 with the uncached dry runs).
#[test]
fn vjp_of_a_deep_loop_nest_is_polynomial_work() {
    use crate::prim::PrimValue;
    let compiled = |n: usize| {
        crate::compile("nest.fut", &crate::testing::nests::loop_nest(n))
            .unwrap_or_else(|e| panic!("{}", e.render()))
    };
    let names: Vec<f64> = [5, 10, 20, 40]
        .iter()
        .map(|&n| compiled(n).ir.name_source.next as f64)
        .collect();
    for w in names.windows(2) {
        assert!(
            w[1] <= 5.0 * w[0],
            "doubling the depth multiplied the names drawn by {} ({names:?})",
            w[1] / w[0]
        );
    }
    // The derivative is still right: 2^5 iterations of x ← x/2 + 1.
    let out = compiled(5)
        .run_interp("main", vec![Value::Scalar(PrimValue::F64(1.5))])
        .expect("runs");
    match out.as_slice() {
        [Value::Scalar(PrimValue::F64(d))] => assert_eq!(*d, 0.5f64.powi(32)),
        other => panic!("expected one f64, got {other:?}"),
    }
}

#[test]
fn row_checkpoints() {
    // The body reads and updates only row `i` of `st` (a stacked LSTM's layer loop): the loop
    // saves one `[2][b]` row per iteration, not the whole `[l][2][b]` state.
    let src = "entry f [l][b] (w: [l][b]f64) (st: [l][2][b]f64) (x: [b]f64) = \
        loop (st, x) = (copy st, x) for i < l do \
          let h = map3 (\\a w c -> f64.tanh (a * w + c)) x w[i] st[i, 0] \
          let c = map3 (\\c h a -> c * h + a) st[i, 1] h x \
          in (st with [i] = [h, c], h)";
    check_vjp(
        src,
        "[[0.5, -1.0], [0.25, 2.0], [1.5, -0.5]] \
         [[[0.1, 0.2], [0.3, -0.4]], [[-0.5, 0.6], [0.7, 0.8]], [[0.9, -1.0], [1.1, 1.2]]] \
         [0.3, -0.7]",
        "[[[1.0, 0.5], [-2.0, 0.25]], [[0.5, 1.5], [1.0, -1.0]], [[2.0, 0.0], [0.5, 0.75]]] \
         [1.0, -0.5]",
    );
    let (_, p) = vjp_program(src);
    let ranks: Vec<usize> = checkpoint_types(&p)
        .iter()
        .map(|t| t.matches('[').count())
        .collect();
    assert!(ranks.contains(&3) && !ranks.contains(&4), "{ranks:?}");
    // Scalar rows, read twice, with a loop-carried scalar.
    let src = "entry f [n] (a: [n]f64) (s: f64) = \
        loop (a, s) = (copy a, s) for i < n do (a with [i] = f64.sin a[i] * s, s + a[i] * a[i])";
    check_vjp(
        src,
        "[0.5, -1.0, 2.0, 0.25] 0.8",
        "[1.0, -2.0, 0.5, 3.0] 0.7",
    );
    let (_, p) = vjp_program(src);
    let cps = checkpoint_types(&p);
    assert!(
        !cps.is_empty() && cps.iter().all(|t| t.matches('[').count() == 1),
        "{cps:?}"
    );
    // Saved whole: a read of another row, and an update whose result the body reads again.
    for src in [
        "entry f [n] (a: [n]f64) = loop a = copy a for i < n do a with [i] = a[i] * a[(i+1)%n]",
        "entry f [n] (a: [n]f64) = loop a = copy a for i < n do \
           let b = a with [i] = a[i] * 2 in b with [(i+1)%n] = b[(i+1)%n] * b[i]",
    ] {
        check_vjp(src, "[1.5, 0.5, -2.0, 0.75]", "[1.0, 2.0, 3.0, -1.0]");
        let (_, p) = vjp_program(src);
        let cps = checkpoint_types(&p);
        assert!(
            cps.iter().any(|t| t.matches('[').count() == 2),
            "{src}: {cps:?}"
        );
    }
}

/// The loop parameters of `p` (in every loop) that hold checkpoints or kept results, by the
/// `_saved` in their names (`x_saved_12: [n]t = ...`).
fn saved_params(p: &Program) -> usize {
    format!("{p}")
        .lines()
        .filter_map(|l| {
            l.split_once("= loop {")
                .map(|(_, params)| params.to_string())
        })
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|t| t.contains("_saved_") && t.ends_with(':'))
        .count()
}

#[test]
fn products_in_a_loop_body_are_kept_not_run_again() {
    // z = W h (a map of sums, of h's type) is kept, one row per iteration, next to the
    // checkpoint of h; tanh (elementwise) runs again in the return sweep.
    let src = "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
                 loop h = h0 for _i < 3 do
                   let z = map (\\row -> f64.sum (map2 (*) row h)) w
                   in map (\\x -> f64.tanh x) z";
    let args = "[[0.5, -0.25, 0.1], [0.3, 0.2, -0.4], [-0.1, 0.6, 0.2]] [0.7, -0.3, 0.2]";
    check_vjp(src, args, "[1.0, -2.0, 0.5]");
    assert_eq!(saved_params(&vjp_program(src).1), 2);
    // A scalar sum is kept too (a scalar never outgrows a checkpoint).
    let src = "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
                 loop h = h0 for _i < 3 do
                   let s = f64.sum h
                   let z = map (\\row -> f64.sum (map2 (*) row h)) w
                   in map (\\x -> f64.tanh (x * s)) z";
    check_vjp(src, args, "[1.0, -2.0, 0.5]");
    assert_eq!(saved_params(&vjp_program(src).1), 3);
}

#[test]
fn consumed_or_larger_results_are_run_again() {
    let args = "[[0.5, -0.25, 0.1], [0.3, 0.2, -0.4], [-0.1, 0.6, 0.2]] [0.7, -0.3, 0.2]";
    // z is updated in place: keeping it would keep a value the body consumes.
    let src = "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
                 loop h = h0 for _i < 3 do
                   let z = map (\\row -> f64.sum (map2 (*) row h)) w
                   let z = z with [0] = z[1] * 2
                   in map (\\x -> f64.tanh x) z";
    check_vjp(src, args, "[1.0, -2.0, 0.5]");
    assert_eq!(saved_params(&vjp_program(src).1), 1);
    // An [n][n] product of an [n] state: larger than the checkpoint of h, not kept.
    let src = "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
                 loop h = h0 for _i < 3 do
                   let m = map (\\row -> map (\\x -> f64.sum (map2 (*) row h) * x) row) w
                   in map (\\r -> f64.tanh (f64.sum r)) m";
    check_vjp(src, args, "[1.0, -2.0, 0.5]");
    assert_eq!(saved_params(&vjp_program(src).1), 1);
}

#[test]
fn a_product_whose_size_changes_between_iterations_is_not_kept() {
    // z: [m]f64 with m a loop parameter (not a size parameter) that shrinks: its type is h's
    // only in the first iteration.
    let src = "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
                 let (_, h) = loop (m, h) = (n, h0) for _i < 3 do
                   let z = map (\\k -> f64.sum (map2 (*) w[k] h)) (iota m)
                   in (m - 1, map (\\j -> if j < m then f64.tanh z[j] else h[j]) (iota n))
                 in h";
    let args = "[[0.5, -0.25, 0.1], [0.3, 0.2, -0.4], [-0.1, 0.6, 0.2]] [0.7, -0.3, 0.2]";
    check_vjp(src, args, "[1.0, -2.0, 0.5]");
    assert_eq!(saved_params(&vjp_program(src).1), 1);
}

#[test]
fn kept_products_in_rows_nests_strip_mined_loops_and_several_results() {
    let args = "[[0.5, -0.25, 0.1], [0.3, 0.2, -0.4], [-0.1, 0.6, 0.2]] [0.7, -0.3, 0.2]";
    let seeds = "[1.0, -2.0, 0.5]";
    // A row-checkpointed parameter: z has the type of a row of st.
    check_vjp(
        "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
           let st = loop st = replicate 2 h0 for i < 2 do
             let z = map (\\row -> f64.sum (map2 (*) row st[i])) w
             in st with [i] = map f64.tanh z
           in st[1]",
        args,
        seeds,
    );
    // Nested loops: the inner loop keeps its product in each outer iteration.
    check_vjp(
        "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
           loop h = h0 for _j < 2 do
             loop g = h for _i < 3 do
               map f64.tanh (map (\\row -> f64.sum (map2 (*) row g)) w)",
        args,
        seeds,
    );
    // Strip-mined: each level of the nest keeps what its body computes.
    check_vjp(
        "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
           #[stripmine(2)]
           loop h = h0 for _i < 5 do
             map f64.tanh (map (\\row -> f64.sum (map2 (*) row h)) w)",
        args,
        seeds,
    );
    // A map with two results, and a scan: all three kept, next to h's checkpoint.
    let src = "entry f [n] (w: [n][n]f64) (h0: [n]f64) =
                 loop h = h0 for _i < 3 do
                   let (a, b) = unzip (map (\\row -> (f64.sum (map2 (*) row h),
                                                    f64.maximum (map2 (*) row h))) w)
                   let c = scan (+) 0 h
                   in map3 (\\x y z -> f64.tanh (x + y * z)) a b c";
    check_vjp(src, args, seeds);
    assert_eq!(saved_params(&vjp_program(src).1), 4);
}

/// How many `loop`s `p` has (at any depth).
fn loops_in(p: &Program) -> usize {
    format!("{p}").matches("= loop {").count()
}

/// A loop over the layers of a stacked cell inside a loop over time steps (the ADBench LSTM's
/// shape): the row-checkpointed state, a carried input, and a sum of the last layer's output.
const LAYERS: &str = "entry f [l][n] (w: [l][n]f64) (s0: [l][n]f64) (x0: [n]f64) : f64 =
  let (_, tot) = loop (s, tot) = (s0, 0f64) for _t < 3 do
    let (s', x) = loop (st, x) = (s, x0) for i < l do
      let h = map3 (\\a b c -> f64.tanh (a * b + c)) w[i] x st[i]
      in (st with [i] = h, h)
    in (s', tot + f64.sum (map (\\y -> y * y) x))
  in tot";
const LAYERS_ARGS: &str =
    "[[0.5, -0.25, 0.1], [0.3, 0.2, -0.4]] [[0.7, -0.3, 0.2], [0.1, 0.4, -0.6]] [0.9, -0.2, 0.35]";

#[test]
fn inner_loops_run_once_in_the_return_sweep_of_the_outer_loop() {
    // The forward sweep of the time loop runs the layer loop with its checkpoints and keeps
    // them, with its results; the return sweep of the time loop reads them instead of running
    // the layer loop's forward sweep again: four loops (time forward, layers forward, time
    // reverse, layers reverse), not five.
    check_vjp(LAYERS, LAYERS_ARGS, "1.0");
    let (_, p) = vjp_program(LAYERS);
    assert_eq!(loops_in(&p), 4, "{p}");
    // Three levels, each updating rows of the one outside: the middle loop keeps the innermost
    // one's tapes, the outer loop the middle one's.
    let src = "entry f [n] (a: [n]f64) (s0: [n][n]f64) : f64 =
      let s = loop s = s0 for _t < 2 do
        loop s = s for j < n do
          let row = loop r = copy s[j] for k < n do
            r with [k] = f64.sin (r[k] * a[k] + a[(k + j) % n])
          in s with [j] = row
      in f64.sum (map f64.sum s)";
    check_vjp(
        src,
        "[0.5, -0.75, 0.25] [[0.1, 0.2, 0.3], [-0.4, 0.5, 0.6], [0.7, -0.8, 0.9]]",
        "1.0",
    );
    let (_, p) = vjp_program(src);
    assert_eq!(loops_in(&p), 6, "{p}");
}

/// A time loop over a layer loop (see [`LAYERS`]), with its initial state and input as given.
fn layers(s0: &str, x0: &str) -> String {
    format!(
        "loop (s, tot) = ({s0}, 0f64) for _t < 3 do
    let (s', x) = loop (st, x) = (s, {x0}) for i < l do
      let h = map3 (\\a b c -> f64.tanh (a * b + c)) w[i] x st[i]
      in (st with [i] = h, h)
    in (s', tot + f64.sum (map (\\y -> y * y) x))"
    )
}
const LW: &str = "[[0.5, -0.25, 0.1], [0.3, 0.2, -0.4]]";
const LS: &str = "[[0.7, -0.3, 0.2], [0.1, 0.4, -0.6]]";
const LX: &str = "[0.9, -0.2, 0.35]";

#[test]
fn kept_inner_loops_of_every_kind() {
    // A literal (i32) bound: tapes of a constant size, kept.
    let src = "entry f [n] (w: [2][n]f64) (s0: [2][n]f64) (x0: [n]f64) : f64 =
      let (_, tot) = loop (s, tot) = (s0, 0f64) for _t < 3 do
        let (s', x) = loop (st, x) = (s, x0) for i < 2 do
          let h = map3 (\\a b c -> f64.tanh (a * b + c)) w[i] x st[i]
          in (st with [i] = h, h)
        in (s', tot + f64.sum (map (\\y -> y * y) x))
      in tot";
    check_vjp(src, &format!("{LW} {LS} {LX}"), "1.0");
    assert_eq!(loops_in(&vjp_program(src).1), 4);
    // #[true_dep] (the parameter and the statement form): ys is restored from its final value,
    // c from the kept tape; the same gradient as without the attribute.
    let src = TRUE_DEP_INNER;
    let args = "[0.5, -0.75, 0.25] [0.1, 0.2, 0.3] [0.4, -0.6]";
    let a = check_vjp(src, args, "1.0");
    assert_eq!(loops_in(&vjp_program(src).1), 4);
    let b = check_vjp(&src.replace("#[true_dep] ", ""), args, "1.0");
    close(&a, &b);
    let stm_form = src
        .replace("#[true_dep] ys", "ys")
        .replace("let (ys, c) = loop", "let (ys, c) = #[true_dep] loop");
    close(&check_vjp(&stm_form, args, "1.0"), &b);
    // A branch, a scan (a kept product of the layer loop's own) and the time index in the
    // layer loop; no layers; no time steps.
    let src = "entry f [l][n] (w: [l][n]f64) (s0: [l][n]f64) (x0: [n]f64) : f64 =
      let (_, tot) = loop (s, tot) = (s0, 0f64) for t < 3 do
        let (s', x) = loop (st, x) = (s, x0) for i < l do
          let c = scan (+) 0 x
          let r = st[i]
          let h = if (i + t) % 2 == 0
                  then map3 (\\a b c -> f64.tanh (a * b + c)) w[i] c r
                  else map3 (\\a b c -> f64.sin (a * b - c)) w[(i + t) % l] x r
          in (st with [i] = h, h)
        in (s', tot + f64.sum (map (\\y -> y * y) x) * f64.i64 (t + 1))
      in tot";
    check_vjp(src, &format!("{LW} {LS} {LX}"), "1.0");
    assert_eq!(loops_in(&vjp_program(src).1), 4);
    let src = format!(
        "entry f [l][n] (w: [l][n]f64) (s0: [l][n]f64) (x0: [n]f64) : f64 =
           let (_, tot) = {} in tot",
        layers("s0", "x0")
    );
    check_vjp(
        &src,
        "empty([0][3]f64) empty([0][3]f64) [0.9, -0.2, 0.35]",
        "1.0",
    );
    check_vjp(
        &src.replace("_t < 3", "_t < 0"),
        &format!("{LW} {LS} {LX}"),
        "1.0",
    );
    // In a map's lambda (accumulators for w and x0) in the body of a loop: the kept layer loop
    // runs in that loop's return sweep and dry run.
    let src = format!(
        "entry f [l][n] (w: [l][n]f64) (s0s: [2][l][n]f64) (x0: [n]f64) : f64 =
           let (_, acc) = loop (ss, acc) = (s0s, 0f64) for _u < 2 do
             let tots = map (\\s0 -> let (_, tot) = {} in tot) ss
             in (map (\\s -> map (\\r -> map (\\v -> f64.sin (v + tots[0])) r) s) ss,
                 acc + tots[0] * tots[1])
           in acc",
        layers("s0", "x0")
    );
    check_vjp(&src, &format!("{LW} [{LS}, {LW}] {LX}"), "1.0");
    // Four levels with kept products at levels 2 and 3: level 1 keeps level 2, whose tapes
    // ([n][n][n]) are a row of level 1's checkpoint.
    let src = FOUR_LEVELS;
    check_vjp(src, FOUR_LEVELS_ARGS, "1.0");
    assert_eq!(loops_in(&vjp_program(src).1), 6);
}

#[test]
fn inner_loops_whose_results_are_consumed_run_again() {
    let base = "entry f [l][n] (w: [l][n]f64) (s0: [l][n]f64) (x0: [n]f64) : f64 =
      let (_, tot) = loop (s, tot) = (s0, 0f64) for _t < 3 do
        let (s', x) = loop (st, x) = (s, x0) for i < l do
          let h = map3 (\\a b c -> f64.tanh (a * b + c)) w[i] x st[i]
          in (st with [i] = h, h)
        CONSUME
        in (s2, tot + f64.sum (map (\\y -> y * y) x2))
      in tot";
    // `x with` updates a copy of x (the lowering makes it): kept; `s' with` consumes s' itself:
    // not kept.
    for (consume, loops) in [
        ("let s2 = s'\n let x2 = x with [0] = x[1] * 0.5", 4),
        (
            "let x2 = map (\\v -> v * 2.0) s'[1]\n let s2 = s' with [0] = x",
            5,
        ),
    ] {
        let src = base.replace("CONSUME", consume);
        check_vjp(&src, &format!("{LW} {LS} {LX}"), "1.0");
        assert_eq!(loops_in(&vjp_program(&src).1), loops, "{consume}");
    }
    // Two layer loops in a time step: the second consumes the first's state (the first is not
    // kept) or starts from a new array computed from it (both kept). A non-invertible integer
    // parameter (j * 2 + ks[i]) is saved in an [l]i64 tape, which fits in the checkpoint of ks.
    let body = |init: &str| {
        format!(
            "entry f [l][n] (w: [l][n]f64) (s0: [l][n]f64) (x0: [n]f64) (k0: [l]i64) : f64 =
      let (_, _, tot) = loop (s, ks, tot) = (s0, k0, 0f64) for _t < 3 do
        let (s1, x1, j1) = loop (st, x, j) = (s, x0, 1i64) for i < l do
          let h = map3 (\\a b c -> f64.tanh (a * b + c + f64.i64 (j % 3) * 0.1)) w[i] x st[i]
          in (st with [i] = h, h, j * 2 + ks[i])
        let (s2, x2) = loop (st, x) = ({init}, x1) for i < l do
          let h = map3 (\\a b c -> f64.sin (a * b - c)) w[i] x st[i]
          in (st with [i] = h, h)
        let z = map (\\row -> f64.sum (map2 (*) row x2)) w
        in (s2, map (\\k -> (k + j1) % 7) ks, tot + f64.sum (map (\\y -> y * y) x2) + f64.sum z)
      in tot"
        )
    };
    for (init, loops) in [("s1", 7), ("map (\\r -> map f64.sin r) s1", 6)] {
        let src = body(init);
        check_vjp(&src, &format!("{LW} {LS} {LX} [1i64, 2i64]"), "1.0");
        assert_eq!(loops_in(&vjp_program(&src).1), loops, "{init}");
    }
}

#[test]
fn inner_loops_with_tapes_larger_than_a_checkpoint_run_again() {
    // The layer loop's tape of `ys` is [n][n], the outer loop checkpoints a scalar: not kept.
    let src = "entry f [n] (a: [n]f64) (x0: f64) : f64 =
      loop x = x0 for _t < 3 do
        let ys = loop ys = a for _i < n do map (\\y -> f64.sin (y * x)) ys
        in f64.sum ys";
    check_vjp(src, "[0.5, -0.75, 0.25] 0.3", "1.0");
    let (_, p) = vjp_program(src);
    assert_eq!(loops_in(&p), 5, "{p}");
    // An inner loop restoring a parameter by inversion (`j + 2`): not kept either.
    let src = "entry f [n] (a: [n]f64) (x0: f64) : f64 =
      loop x = x0 for _t < 3 do
        let (y, _) = loop (y, j) = (x, 0i64) for _i < 2 do (y * a[j % n] + f64.sin y, j + 2)
        in y";
    check_vjp(src, "[0.5, -0.75, 0.25] 0.3", "1.0");
    let (_, p) = vjp_program(src);
    assert_eq!(loops_in(&p), 5, "{p}");
}
