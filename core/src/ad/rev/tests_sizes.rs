//! Reverse mode of functions that read size parameters and integers computed from them (issue
//! 14): `f64.i64 n`, sums over `1...p` and `iota p`, division by `f64.i64 (d * (m - 1))`.
//! Sizes are free variables of the differentiated function without an adjoint; the vjp's
//! environment gives them their type (`i64`).
//!
//! First the rules, on an entry's body with the entry's sizes free ([`check_vjp`]: finite
//! differences and hand-worked values); then whole programs through the pipeline (lowering, the
//! simplifier, the AD pass; the IR checked after each), run on the interpreter and compared
//! with the AD oracle, finite differences of the primal and hand-worked values.

use super::tests::{check_vjp, close, floats, perturb, vals};
use super::{free_vars, fun_types, size_types, vjp_lambda_in};
use crate::ir::check::check_program;
use crate::ir::*;
use crate::prim::PrimType;
use std::collections::HashMap;

// --- the rules ------------------------------------------------------------------------------

#[test]
fn sum_times_size() {
    let a = check_vjp(
        "entry f [n] (xs: [n]f64) = f64.sum xs * f64.i64 n",
        "[1.0, 2.0, 3.0]",
        "1.0",
    );
    close(&a, &[3.0, 3.0, 3.0]);
}

#[test]
fn sum_over_a_range_up_to_a_size() {
    // Σ_{j=1..p} ln (a + j): ā = Σ_j 1/(a + j) = 1/2 + 1/3 + 1/4 at a = 1, p = 3.
    let a = check_vjp(
        "entry f [p] (a: f64) (ws: [p]f64) = f64.sum (map (\\j -> f64.log (a + f64.i64 j)) (1...p))",
        "1.0 [7.0, 8.0, 9.0]",
        "1.0",
    );
    close(&a, &[13.0 / 12.0, 0.0, 0.0, 0.0]);
}

#[test]
fn gmm_log_gamma_term() {
    // ln Γ_p(a) = p(p−1)/4 · ln π + Σ_{j=1..p} ln Γ(a + (1−j)/2): ā = ψ(3) + ψ(2.5) at a = 3,
    // p = 2.
    let a = check_vjp(
        "entry f [p] (a: f64) (ws: [p]f64) = 0.25 * f64.i64 (p * (p - 1)) * f64.log f64.pi + f64.sum (map (\\j -> f64.lgamma (a + 0.5 * (1 - f64.i64 j))) (1...p))",
        "3.0 [0.0, 0.0]",
        "1.0",
    );
    close(&a, &[1.6259409757437102, 0.0, 0.0]);
}

#[test]
fn iota_of_a_size_as_floats() {
    // Σ_j ws[j] · a^j over j = 0..p−1: ā = Σ_j j · ws[j] · a^(j−1) = 5 and w̄s = a^j at a = 2,
    // ws = [1, 1, 1].
    let a = check_vjp(
        "entry f [p] (a: f64) (ws: [p]f64) = f64.sum (map2 (\\w j -> w * a ** j) ws (map f64.i64 (iota p)))",
        "2.0 [1.0, 1.0, 1.0]",
        "1.0",
    );
    close(&a, &[5.0, 1.0, 2.0, 4.0]);
}

#[test]
fn division_by_a_product_of_sizes() {
    // LSTM's normalisation Σ y² / (d·(m−1)): ȳ = 2y / (d·(m−1)) = y/2 at d = 2, m = 3.
    let a = check_vjp(
        "entry f [d][m] (xss: [d][m]f64) = f64.sum (map (\\ys -> f64.sum (map (\\y -> y * y) ys)) xss) / f64.i64 (d * (m - 1))",
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]",
        "1.0",
    );
    close(&a, &[0.5, 1.0, 1.5, 2.0, 2.5, 3.0]);
    // The divisor inside a `map` nest: ȳ = 2y / 4 · seed.
    let a = check_vjp(
        "entry f [d][m] (xss: [d][m]f64) = map (map (\\y -> y * y / f64.i64 (d * (m - 1)))) xss",
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]",
        "[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]",
    );
    close(&a, &[0.5, 1.0, 1.5, 4.0, 5.0, 6.0]);
    // A divisor that changes per loop iteration: row i is divided by d·(m−1) + i.
    let a = check_vjp(
        "entry f [d][m] (xss: [d][m]f64) = loop acc = 0 for i < d do acc + f64.sum xss[i] / f64.i64 (d * (m - 1) + i)",
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]",
        "1.0",
    );
    close(&a, &[0.25, 0.25, 0.25, 0.2, 0.2, 0.2]);
}

// --- the environment ------------------------------------------------------------------------

/// The lambda of the entry `f` of `src` and its size params.
fn entry_lambda(src: &str) -> (Lambda, Vec<VName>, NameSource) {
    let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let f = c.ir.entry("f").expect("entry f").clone();
    let ret = f
        .ret
        .iter()
        .map(|t| super::ext_to_type(t, &[]).expect("closed result type"))
        .collect();
    let lam = Lambda {
        params: f.params,
        body: f.body,
        ret,
    };
    (lam, f.size_params, c.ir.name_source)
}

#[test]
fn a_function_binds_its_sizes() {
    let c = crate::compile(
        "test.fut",
        "entry main [d][m] (xss: [d][m]f64) = f64.sum (flatten xss) / f64.i64 (d * (m - 1))",
    )
    .unwrap_or_else(|e| panic!("{}", e.render()));
    let f = c.ir.entry("main").expect("entry main");
    let env = fun_types(f);
    assert_eq!(f.size_params.len(), 2);
    for s in &f.size_params {
        assert_eq!(env.get(s), Some(&Type::Prim(PrimType::I64)), "{s}");
    }
    for p in &f.params {
        assert_eq!(env.get(&p.name), Some(&p.ty), "{}", p.name);
    }
}

#[test]
fn free_variables_need_a_type() {
    let (lam, sizes, mut ns) = entry_lambda(
        "entry f [d][m] (xss: [d][m]f64) = f64.sum (flatten xss) / f64.i64 (d * (m - 1))",
    );
    let mut want = sizes.clone();
    want.sort();
    assert_eq!(free_vars(&lam), want);
    // Without the sizes' types the error names the first one, before any rule runs.
    let e = vjp_lambda_in(&lam, &mut ns, &HashMap::new()).expect_err("untyped sizes");
    assert!(
        e.starts_with("a free variable of unknown type") && e.contains(&want[0].to_string()),
        "{e}"
    );
    // With them, the sizes stay free (constants) and the lambda is differentiated.
    let g = vjp_lambda_in(&lam, &mut ns, &size_types(&sizes)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(free_vars(&g), want);
}

// --- whole programs -------------------------------------------------------------------------

/// Compiles `src`, checking the IR after lowering, after every simplifier pass, after the AD
/// pass and at the end (no AD node is left, no entry failed).
fn compile_checked(src: &str) -> crate::Compiled {
    let checked = crate::check("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let lowered = crate::lower::lower_program(&checked.ast, &checked.sources);
    assert!(
        lowered.entry_errors.is_empty(),
        "{:?}",
        lowered.entry_errors
    );
    check_program(&lowered.program).unwrap_or_else(|e| panic!("lowered: {e:?}"));
    let simplified = crate::passes::simplify_with(lowered.program, &mut |name, p| {
        check_program(p).unwrap_or_else(|e| panic!("after {name}: {e:?}"))
    });
    let differentiated =
        crate::ad::transform::transform(simplified).unwrap_or_else(|e| panic!("AD: {e:?}"));
    check_program(&differentiated).unwrap_or_else(|e| {
        panic!(
            "after AD: {e:?}\n{}",
            crate::ir::print::program_to_string(&differentiated)
        )
    });
    crate::passes::simplify_with(differentiated, &mut |name, p| {
        check_program(p).unwrap_or_else(|e| panic!("after AD, {name}: {e:?}"))
    });
    let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    assert!(c.entry_errors.is_empty(), "{:?}", c.entry_errors);
    check_program(&c.ir).unwrap_or_else(|e| panic!("final IR: {e:?}"));
    let text = crate::ir::print::program_to_string(&c.ir);
    assert!(
        !text.contains("vjp (") && !text.contains("jvp ("),
        "AD nodes left:\n{text}"
    );
    c
}

/// Runs `entry` at `args` on the interpreter and on the AD oracle (which must agree), compares
/// with `expected`, and returns the results as f64s.
fn run_both(c: &crate::Compiled, entry: &str, args: &str, expected: &[f64]) -> Vec<f64> {
    let got = c
        .run_interp(entry, vals(args))
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
    let oracle = c
        .run_oracle(entry, vals(args))
        .unwrap_or_else(|e| panic!("{entry} on the oracle: {e}"));
    let got = floats(&got);
    close(&got, &floats(&oracle));
    close(&got, expected);
    got
}

/// [`run_both`] for the gradient entry `grad` of the scalar function `primal` (same args;
/// `grad` returns the adjoints of every f64 arg, in order), checked against central finite
/// differences of `primal` along a direction.
fn check_grad(c: &crate::Compiled, primal: &str, grad: &str, args: &str, expected: &[f64]) {
    let g = run_both(c, grad, args, expected);
    let args = vals(args);
    let n = floats(&args).len();
    assert_eq!(g.len(), n, "{grad}: one adjoint per f64 argument");
    let dirs: Vec<f64> = (0..n)
        .map(|i| ((i * 7919 + 13) % 17) as f64 / 8.0 - 1.0)
        .collect();
    let h = 1e-6;
    let at = |s: f64| {
        let r = c
            .run_interp(primal, perturb(&args, &dirs, s * h))
            .unwrap_or_else(|e| panic!("{primal}: {e}"));
        floats(&r)[0]
    };
    let fd = (at(1.0) - at(-1.0)) / (2.0 * h);
    let lhs: f64 = g.iter().zip(&dirs).map(|(a, d)| a * d).sum();
    assert!(
        (lhs - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
        "{grad}: ⟨x̄, ẋ⟩ = {lhs} but finite differences give {fd}"
    );
}

const PROGRAM: &str = "
def lgd [p] (a: f64) (_ks: [p]i64) =
  0.25 * f64.i64 (p * (p - 1)) * f64.log f64.pi
  + f64.sum (map (\\j -> f64.lgamma (a + 0.5 * (1 - f64.i64 j))) (1...p))
def powsum [p] (a: f64) (ws: [p]f64) =
  f64.sum (map2 (\\w j -> w * a ** j) ws (map f64.i64 (iota p)))
def sqnorm [d][m] (yss: [d][m]f64) =
  f64.sum (map (\\ys -> f64.sum (map (\\y -> y * y) ys)) yss) / f64.i64 (d * (m - 1))

entry sum_times_size [n] (xs: [n]f64) = vjp (\\ys -> f64.sum ys * f64.i64 n) xs 1
entry sum_times_size_f [n] (xs: [n]f64) = f64.sum xs * f64.i64 n
entry log_gamma [p] (a: f64) (ks: [p]i64) = vjp (\\a -> lgd a ks) a 1
entry log_gamma_f [p] (a: f64) (ks: [p]i64) = lgd a ks
entry range_sum [p] (a: f64) (_ks: [p]i64) =
  vjp (\\a -> f64.sum (map (\\j -> f64.log (a + f64.i64 j)) (1...p))) a 1
entry range_sum_f [p] (a: f64) (_ks: [p]i64) = f64.sum (map (\\j -> f64.log (a + f64.i64 j)) (1...p))
entry iota_size [p] (a: f64) (ws: [p]f64) = vjp (\\(a, ws) -> powsum a ws) (a, ws) 1
entry iota_size_f [p] (a: f64) (ws: [p]f64) = powsum a ws
entry normalised [d][m] (xss: [d][m]f64) =
  vjp (\\yss -> f64.sum (map (\\ys -> f64.sum (map (\\y -> y * y) ys)) yss) / f64.i64 (d * (m - 1))) xss 1
entry normalised_def [d][m] (xss: [d][m]f64) = vjp sqnorm xss 1
entry normalised_f [d][m] (xss: [d][m]f64) = sqnorm xss
entry inner_size [d][m] (xs: [d]f64) (_ks: [m]i64) =
  vjp (\\ys -> map (\\i -> f64.i64 i * f64.sum ys / f64.i64 (d * (m - 1))) (iota (d * m)))
      xs (replicate (d * m) 1)
entry per_row [d][m] (xss: [d][m]f64) = map (\\xs -> vjp (\\ys -> f64.sum ys / f64.i64 (m - 1)) xs 1) xss
";

#[test]
fn programs_with_sizes_in_the_differentiated_function() {
    let c = compile_checked(PROGRAM);
    check_grad(
        &c,
        "sum_times_size_f",
        "sum_times_size",
        "[1.0, 2.0, 3.0]",
        &[3.0, 3.0, 3.0],
    );
    // ψ(3) + ψ(2.5).
    check_grad(
        &c,
        "log_gamma_f",
        "log_gamma",
        "3.0 [0i64, 0i64]",
        &[1.6259409757437102],
    );
    check_grad(
        &c,
        "range_sum_f",
        "range_sum",
        "1.0 [0i64, 0i64, 0i64]",
        &[13.0 / 12.0],
    );
    check_grad(
        &c,
        "iota_size_f",
        "iota_size",
        "2.0 [1.0, 1.0, 1.0]",
        &[5.0, 1.0, 2.0, 4.0],
    );
    let xss = "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]";
    let half = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0];
    check_grad(&c, "normalised_f", "normalised", xss, &half);
    check_grad(&c, "normalised_f", "normalised_def", xss, &half);
    // d = 3, m = 2: ȳ = 2y/3.
    check_grad(
        &c,
        "normalised_f",
        "normalised",
        "[[1.0, -1.0], [2.0, 0.5], [3.0, 1.0]]",
        &[2.0 / 3.0, -2.0 / 3.0, 4.0 / 3.0, 1.0 / 3.0, 2.0, 2.0 / 3.0],
    );
    // A result size computed inside the function (differentiated by lowering): Σ_i i / 4.
    run_both(
        &c,
        "inner_size",
        "[1.0, 2.0] [0i64, 0i64, 0i64]",
        &[3.75, 3.75],
    );
    // A vjp inside a map, reading the size of the rows: 1/(m−1).
    run_both(&c, "per_row", xss, &[0.5; 6]);
}
