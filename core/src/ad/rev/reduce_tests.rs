//! Tests of the `reduce` rules: the worked cases of ad-rules.md §7 (exact values), finite
//! differences on smooth inputs (`check_vjp`), and edge cases (empty and one-element arrays,
//! zeros, ties) where the function is not differentiable and only the convention is checked.

use super::super::tests::{check_vjp, close, try_vjp_program, vals};
use crate::ir::*;
use crate::value::{Buffer, Value};

/// The vjp of entry `f` as an entry `g` (args, then seeds), checked and simplified; the error
/// of `vjp_lambda` if it fails.
pub(in crate::ad::rev) fn vjp_prog(src: &str) -> Result<Program, String> {
    try_vjp_program(src).map(|(_, p)| p)
}

/// All results of the vjp of `f` (primal results, then adjoints), without a finite-difference
/// check (for points where `f` is not differentiable: ties, the conventions).
pub(in crate::ad::rev) fn vjp_run(src: &str, args: &str, seeds: &str) -> Vec<Value> {
    let p = vjp_prog(src).unwrap_or_else(|e| panic!("vjp: {e}"));
    let mut all = vals(args);
    all.extend(vals(seeds));
    crate::interp::run_entry(&p, "g", all).unwrap_or_else(|e| panic!("run g: {e}"))
}

/// The values as f64s (floats and integers), flattened.
pub(in crate::ad::rev) fn nums(vs: &[Value]) -> Vec<f64> {
    let mut out = vec![];
    for v in vs {
        match v {
            Value::Scalar(p) => out.extend(p.as_f64().or(p.as_i128().map(|i| i as f64))),
            Value::Array(a) => match &a.data {
                Buffer::F64(xs) => out.extend(xs.iter().copied()),
                Buffer::F32(xs) => out.extend(xs.iter().map(|&x| x as f64)),
                Buffer::I64(xs) => out.extend(xs.iter().map(|&x| x as f64)),
                Buffer::I32(xs) => out.extend(xs.iter().map(|&x| x as f64)),
                _ => panic!("unexpected buffer in {v:?}"),
            },
        }
    }
    out
}

/// The adjoints (the results after the `nres` primal ones) of the vjp, as f64s.
fn adjoints(src: &str, args: &str, seeds: &str, nres: usize) -> Vec<f64> {
    nums(&vjp_run(src, args, seeds)[nres..])
}

const SUM: &str = "entry f (xs: []f64) = reduce (+) 0 xs";
const PROD: &str = "entry f (xs: []f64) = reduce (*) 1 xs";
const MIN: &str = "entry f (xs: []f64) = reduce f64.min f64.inf xs";
const MAX: &str = "entry f (xs: []f64) = reduce f64.max (-f64.inf) xs";

#[test]
fn sum() {
    let a = check_vjp(SUM, "[1.0, 2.0, 3.0]", "2.0");
    close(&a, &[2.0, 2.0, 2.0]);
    close(&adjoints(SUM, "empty([0]f64)", "2.0", 1), &[]);
    let a = check_vjp(
        "entry f (xs: []f64) = reduce (+) 0 (map (\\x -> x * x) xs) * 3",
        "[1.0, -2.0, 0.5]",
        "1.0",
    );
    close(&a, &[6.0, -12.0, 3.0]);
}

#[test]
fn product_worked_cases() {
    // ad-rules.md §7: reduce `*`, ȳ = 1.
    for (xs, y, adj) in [
        ("[2.0, 3.0, 4.0]", 24.0, vec![12.0, 8.0, 6.0]),
        ("[2.0, 0.0, 4.0]", 0.0, vec![0.0, 8.0, 0.0]),
        ("[0.0, 3.0, 0.0]", 0.0, vec![0.0, 0.0, 0.0]),
        ("[5.0]", 5.0, vec![1.0]),
    ] {
        let out = nums(&vjp_run(PROD, xs, "1.0"));
        close(&out[..1], &[y]);
        close(&out[1..], &adj);
        // The product is smooth: finite differences agree everywhere, zeros included.
        close(&check_vjp(PROD, xs, "1.0"), &adj);
    }
    close(&adjoints(PROD, "empty([0]f64)", "1.0", 1), &[]);
    // Seeds other than 1, and a non-trivial neutral-free composition.
    let a = check_vjp(PROD, "[0.5, -2.0, 3.0, 1.5]", "-2.0");
    close(&a, &[18.0, -4.5, 3.0, 6.0]);
}

#[test]
fn product_no_division_on_zero_paths() {
    // An infinite element next to a zero: division would give NaN or inf.
    let out = adjoints(PROD, "[0.0, 3.0, f64.inf]", "1.0", 1);
    assert!(
        out[0].is_infinite() && out[1] == 0.0 && out[2] == 0.0,
        "{out:?}"
    );
    // Integers (formal derivatives): exact division.
    let out = nums(&vjp_run(
        "entry f (xs: []i64) = reduce (*) 1 xs",
        "[2i64, 3i64, 4i64]",
        "1i64",
    ));
    assert_eq!(out, vec![24.0, 12.0, 8.0, 6.0]);
}

#[test]
fn min_max_worked_cases() {
    // ad-rules.md §7: lowest index wins.
    close(
        &adjoints(MIN, "[3.0, 1.0, 2.0, 1.0]", "1.0", 1),
        &[0.0, 1.0, 0.0, 0.0],
    );
    close(
        &adjoints(MIN, "[2.0, 2.0, 2.0]", "1.0", 1),
        &[1.0, 0.0, 0.0],
    );
    close(
        &adjoints(MAX, "[2.0, 2.0, 2.0]", "3.0", 1),
        &[3.0, 0.0, 0.0],
    );
    close(
        &adjoints(MAX, "[1.0, 7.0, 2.0, 7.0]", "1.0", 1),
        &[0.0, 1.0, 0.0, 0.0],
    );
    // Away from ties: finite differences.
    close(
        &check_vjp(MAX, "[1.0, 7.0, 2.0, 6.0]", "2.0"),
        &[0.0, 2.0, 0.0, 0.0],
    );
    close(&check_vjp(MIN, "[4.0]", "1.0"), &[1.0]);
}

#[test]
fn min_max_neutral_loses_ties_and_empty() {
    // Elements equal to the neutral element still win.
    close(
        &adjoints(MAX, "[-f64.inf, -f64.inf]", "1.0", 1),
        &[1.0, 0.0],
    );
    // The neutral element wins (every element is below it): nobody gets an adjoint.
    close(
        &adjoints(
            "entry f (xs: []f64) = reduce f64.max 0 xs",
            "[-1.0, -2.0]",
            "1.0",
            1,
        ),
        &[0.0, 0.0],
    );
    close(&adjoints(MIN, "empty([0]f64)", "1.0", 1), &[]);
    // The operands in the other order, and integers.
    close(
        &adjoints(
            "entry f (xs: []f64) = reduce (\\a b -> f64.min b a) f64.inf xs",
            "[3.0, 1.0, 2.0, 1.0]",
            "1.0",
            1,
        ),
        &[0.0, 1.0, 0.0, 0.0],
    );
    close(
        &adjoints(
            "entry f (xs: []i32) = reduce i32.max i32.lowest xs",
            "[3, 9, 9, 1]",
            "2",
            1,
        ),
        &[0.0, 2.0, 0.0, 0.0],
    );
}

#[test]
fn generic_scalar_operator() {
    // x ⊙ y = x + y + xy (neutral 0): ∂/∂aᵢ = ∏_{j≠i}(1 + aⱼ).
    let src = "entry f (xs: []f64) = reduce (\\x y -> x + y + x * y) 0 xs";
    let a = check_vjp(src, "[0.5, 1.0, -0.5, 2.0]", "1.0");
    close(&a, &[3.0, 2.25, 9.0, 1.5]);
    close(&check_vjp(src, "[0.25]", "2.0"), &[2.0]);
    close(&adjoints(src, "empty([0]f64)", "1.0", 1), &[]);
    // A branchy (associative) operator: the element of largest magnitude.
    let a = check_vjp(
        "entry f (xs: []f64) = reduce (\\x y -> if f64.abs x > f64.abs y then x else y) 0 xs",
        "[3.0, -5.0, 2.0, 4.5]",
        "2.0",
    );
    close(&a, &[0.0, 2.0, 0.0, 0.0]);
}

#[test]
fn generic_non_commutative_tuple_operator() {
    // Composition of linear functions (α,β) ⊙ (α',β') = (αα', α'β + β') is not commutative.
    let src = "entry f (as: []f64) (bs: []f64) = reduce (\\(a1, b1) (a2, b2) -> (a1 * a2, a2 * b1 + b2)) (1, 0) (zip as bs)";
    // a = [(2,1),(3,−1),(.5,4)]: result (3, 5) = fold; adjoints with ȳ = (1, 1):
    // α = a0·a1·a2; β = ((b0·a1 + b1)·a2 + b2).
    let a = check_vjp(src, "[2.0, 3.0, 0.5] [1.0, -1.0, 4.0]", "1.0 1.0");
    close(&a, &[1.5, 1.5, 8.0, 1.5, 0.5, 1.0]);
    check_vjp(
        src,
        "[1.5, -0.5, 2.0, 0.75, 1.25] [0.5, 2.0, -1.0, 3.0, 0.25]",
        "0.5 -2.0",
    );
    close(
        &adjoints(src, "empty([0]f64) empty([0]f64)", "1.0 1.0", 2),
        &[],
    );
}

#[test]
fn generic_tuple_operator_with_index() {
    // argmax as a tuple operator (value, index): the adjoint of the value goes to the winner.
    let src = "entry f (xs: []f64) = reduce (\\(x1, i1) (x2, i2) -> if x1 > x2 then (x1, i1) else if x2 > x1 then (x2, i2) else (x1, i64.min i1 i2)) (-f64.inf, -1) (zip xs (indices xs))";
    let out = vjp_run(src, "[3.0, 9.0, 2.0, 5.0]", "2.0 0i64");
    close(&nums(&out[2..]), &[0.0, 2.0, 0.0, 0.0]);
}

#[test]
fn vectorised_worked_case() {
    // ad-rules.md §7: reduce (map2 (*)) over [[1,2],[0,3],[4,0]], ȳ = [1,1].
    let src = "entry f [n][m] (xss: [n][m]f64) : [m]f64 = reduce (map2 (*)) (replicate m 1) xss";
    let out = nums(&vjp_run(
        src,
        "[[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]]",
        "[1.0, 1.0]",
    ));
    close(&out, &[0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 6.0]);
    close(
        &check_vjp(src, "[[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]]", "[1.0, 1.0]"),
        &[0.0, 0.0, 4.0, 0.0, 0.0, 6.0],
    );
}

#[test]
fn vectorised_operators() {
    let a = check_vjp(
        "entry f [n][m] (xss: [n][m]f64) : [m]f64 = reduce (map2 (+)) (replicate m 0) xss",
        "[[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]]",
        "[1.0, -2.0]",
    );
    close(&a, &[1.0, -2.0, 1.0, -2.0, 1.0, -2.0]);
    // Generic operator inside, params in the other order.
    check_vjp(
        "entry f [n][m] (xss: [n][m]f64) : [m]f64 = reduce (\\xs ys -> map2 (\\y x -> x + y + x * y) ys xs) (replicate m 0) xss",
        "[[0.5, 2.0, 1.0], [0.25, 3.0, -1.0], [1.0, -0.5, 2.0]]",
        "[1.0, -2.0, 0.5]",
    );
    // Max per column with ties: lowest row wins.
    let out = adjoints(
        "entry f [n][m] (xss: [n][m]f64) : [m]f64 = reduce (map2 f64.max) (replicate m (-f64.inf)) xss",
        "[[1.0, 5.0], [3.0, 5.0], [3.0, 2.0]]",
        "[1.0, 2.0]",
        1,
    );
    close(&out, &[0.0, 2.0, 1.0, 0.0, 0.0, 0.0]);
    // Rank 3: map2 (map2 (+)).
    let a = check_vjp(
        "entry f [n][m][k] (x: [n][m][k]f64) : [m][k]f64 = reduce (map2 (map2 (*))) (replicate m (replicate k 1)) x",
        "[[[1.0, 2.0], [0.5, 3.0]], [[2.0, -1.0], [4.0, 0.5]]]",
        "[[1.0, 1.0], [1.0, 2.0]]",
    );
    close(&a, &[2.0, -1.0, 4.0, 1.0, 1.0, 2.0, 0.5, 6.0]);
    // No rows.
    close(
        &adjoints(
            "entry f [n][m] (xss: [n][m]f64) : [m]f64 = reduce (map2 (*)) (replicate m 1) xss",
            "empty([0][2]f64)",
            "[1.0, 1.0]",
            1,
        ),
        &[],
    );
}

#[test]
fn reductions_inside_map() {
    check_vjp(
        "entry f [n][m] (xss: [n][m]f64) = map (\\xs -> reduce (*) 1 xs + reduce (+) 0 xs + reduce f64.max (-f64.inf) xs) xss",
        "[[1.0, 2.0, 3.0], [0.0, 3.0, -1.0], [4.0, 0.0, 0.0]]",
        "[1.0, 2.0, -1.0]",
    );
    check_vjp(
        "entry f [n][m] (xss: [n][m]f64) (c: [m]f64) = map (\\xs -> reduce (\\x y -> x + y + x * y) 0 (map2 (*) xs c)) xss",
        "[[0.5, 2.0, 1.0], [0.25, 3.0, -1.0]] [1.0, 0.5, 2.0]",
        "[1.0, -2.0]",
    );
    // min inside a map over a free array: a sparse update through an accumulator.
    let out = adjoints(
        "entry f (xs: [5]f64) (k: i64) = map (\\j -> reduce f64.min f64.inf (xs[j:j+k])) (iota 4)",
        "[3.0, 1.0, 2.0, 1.0, 5.0] 2i64",
        "[1.0, 2.0, 3.0, 4.0]",
        1,
    );
    close(&out, &[0.0, 3.0, 0.0, 7.0, 0.0, 0.0]);
}

#[test]
fn array_operators_that_are_not_vectorised() {
    // Linear functions per column as a tuple of two maps; only the first result is used.
    check_vjp(
        "entry f [n][m] (as: [n][m]f64) (bs: [n][m]f64) = let (x, y) = reduce (\\(a1, b1) (a2, b2) -> (map2 (*) a1 a2, map3 (\\x y z -> x * y + z) a2 b1 b2)) (replicate m 1, replicate m 0) (zip as bs) in map2 (+) x (map (* 2) y)",
        "[[2.0, 1.0], [3.0, -1.0], [0.5, 2.0]] [[1.0, 0.5], [-1.0, 2.0], [4.0, 1.0]]",
        "[1.0, -0.5]",
    );
    check_vjp(
        "entry f [n][m] (as: [n][m]f64) (bs: [n][m]f64) = (reduce (\\(a1, b1) (a2, b2) -> (map2 (*) a1 a2, map3 (\\x y z -> x * y + z) a2 b1 b2)) (replicate m 1, replicate m 0) (zip as bs)).0",
        "[[2.0, 1.0], [3.0, -1.0], [0.5, 2.0]] [[1.0, 0.5], [-1.0, 2.0], [4.0, 1.0]]",
        "[1.0, -0.5]",
    );
    // 2×2 matrices as [4]f64 rows: the product A0·A1·A2 of the scan worked case.
    let src = "entry f [n] (ms: [n][4]f64) = reduce (\\a b -> [a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]]) [1, 0, 0, 1] ms";
    let a = check_vjp(
        src,
        "[[1.0, 2.0, 0.0, 1.0], [2.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 3.0]]",
        "[1.0, 1.0, 1.0, 1.0]",
    );
    // ȳ = J (all ones): ā0 = J·(A1·A2)ᵀ, ā1 = A0ᵀ·J·A2ᵀ, ā2 = (A0·A1)ᵀ·J.
    close(
        &a,
        &[2.0, 5.0, 2.0, 5.0, 1.0, 4.0, 3.0, 12.0, 5.0, 5.0, 3.0, 3.0],
    );
    close(
        &adjoints(src, "empty([0][4]f64)", "[1.0, 1.0, 1.0, 1.0]", 1),
        &[],
    );
}

/// `n` pseudo-random values in about [-1.5, 1.5] (no zeros), as a Futhark array literal.
pub(in crate::ad::rev) fn random_array(n: usize, seed: u64) -> String {
    if n == 0 {
        return "empty([0]f64)".into();
    }
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let xs: Vec<String> = (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((s >> 33) % 1000) as f64 / 1000.0;
            let v = if u < 0.5 {
                u * 3.0 - 1.6
            } else {
                u * 3.0 - 1.4
            };
            format!("{v:.3}")
        })
        .collect();
    format!("[{}]", xs.join(", "))
}

#[test]
fn random_inputs_against_finite_differences() {
    let ops = [
        SUM,
        PROD,
        MAX,
        "entry f (xs: []f64) = reduce (\\x y -> x + y + x * y) 0 xs",
        "entry f (xs: []f64) = reduce (\\x y -> if f64.abs x > f64.abs y then x else y) 0 xs",
        "entry f (xs: []f64) = reduce (\\x y -> x + y) 0 (map f64.sin xs) * reduce (*) 1 xs",
    ];
    for (k, src) in ops.iter().enumerate() {
        for n in 1..7 {
            check_vjp(src, &random_array(n, (k * 10 + n) as u64), "1.5");
        }
    }
    let tuple = "entry f (as: []f64) (bs: []f64) = reduce (\\(a1, b1) (a2, b2) -> (a1 * a2, a2 * b1 + b2)) (1, 0) (zip as bs)";
    for n in 1..7 {
        let args = format!(
            "{} {}",
            random_array(n, n as u64),
            random_array(n, 100 + n as u64)
        );
        check_vjp(tuple, &args, "0.5 -1.25");
    }
    // A reduction of a free array inside a map: the adjoint goes through an accumulator.
    check_vjp(
        "entry f [n] (xs: [n]f64) (ys: []f64) = map (\\y -> y * reduce (\\a b -> a + b + a * b) 0 xs + reduce (*) 1 xs) ys",
        &format!("{} [1.0, -2.0, 0.5]", random_array(5, 7)),
        "[1.0, 0.5, 2.0]",
    );
}
