//! Tests of the `scan` rules: the worked cases of ad-rules.md §7 (exact values), finite
//! differences (`check_vjp`), and edge cases (empty and one-element arrays, zeros, flags).

use super::super::reduce::tests::{nums, vjp_run};
use super::super::tests::{check_vjp, close};

fn adjoints(src: &str, args: &str, seeds: &str, nres: usize) -> Vec<f64> {
    nums(&vjp_run(src, args, seeds)[nres..])
}

const SUM: &str = "entry f (xs: []f64) = scan (+) 0 xs";
const PROD: &str = "entry f (xs: []f64) = scan (*) 1 xs";
const LIN: &str = "entry f (as: []f64) (bs: []f64) = unzip (scan (\\(a1, b1) (a2, b2) -> (a1 * a2, a2 * b1 + b2)) (1, 0) (zip as bs))";
const MAT: &str = "entry f (a: []f64) (b: []f64) (c: []f64) (d: []f64) =
  unzip4 (scan (\\(a1, b1, c1, d1) (a2, b2, c2, d2) -> (a1*a2 + b1*c2, a1*b2 + b1*d2, c1*a2 + d1*c2, c1*b2 + d1*d2)) (1, 0, 0, 1) (zip4 a b c d))";

#[test]
fn sum() {
    let a = check_vjp(SUM, "[1.0, 2.0, 3.0]", "[1.0, 2.0, 3.0]");
    close(&a, &[6.0, 5.0, 3.0]);
    close(&check_vjp(SUM, "[4.0]", "[-2.0]"), &[-2.0]);
    close(&adjoints(SUM, "empty([0]f64)", "empty([0]f64)", 1), &[]);
    let out = nums(&vjp_run(
        "entry f (xs: []i32) = scan (+) 0 xs",
        "[1, 2, 3, 4]",
        "[1, 0, 2, 1]",
    ));
    assert_eq!(out, vec![1.0, 3.0, 6.0, 10.0, 4.0, 3.0, 3.0, 1.0]);
}

#[test]
fn product() {
    // ad-rules.md §7 (the jvp case): a = [2,0,4], ȧ = [1,1,1] → ẋ = [1,2,8]; so with
    // ȳ = [1,1,1], Σ⟨ā, ȧ⟩ = 11. Per element: ā = [1 + 0 + 0, 2 + 8, 0].
    let out = nums(&vjp_run(PROD, "[2.0, 0.0, 4.0]", "[1.0, 1.0, 1.0]"));
    close(&out, &[2.0, 0.0, 0.0, 1.0, 10.0, 0.0]);
    close(
        &check_vjp(PROD, "[2.0, 0.0, 4.0]", "[1.0, 1.0, 1.0]"),
        &[1.0, 10.0, 0.0],
    );
    check_vjp(
        PROD,
        "[0.5, -2.0, 3.0, 1.5, 0.25]",
        "[1.0, -1.0, 0.5, 2.0, 1.0]",
    );
    close(&check_vjp(PROD, "[3.0]", "[2.0]"), &[2.0]);
    close(&adjoints(PROD, "empty([0]f64)", "empty([0]f64)", 1), &[]);
}

#[test]
fn generic_scalar_operator() {
    // x ⊙ y = x + y + xy (neutral 0).
    check_vjp(
        "entry f (xs: []f64) = scan (\\x y -> x + y + x * y) 0 xs",
        "[0.5, 1.0, -0.5, 2.0]",
        "[1.0, 2.0, -1.0, 0.5]",
    );
    // Operands in the other order: the same operator, recognised as `+` either way.
    check_vjp(
        "entry f (xs: []f64) = scan (\\x y -> y + x) 0 xs",
        "[0.5, 1.0, -0.5, 2.0]",
        "[1.0, 2.0, -1.0, 0.5]",
    );
    // Not commutative: x ⊙ y = y (the last element); only ȳᵢ reaches āᵢ.
    let a = check_vjp(
        "entry f (xs: []f64) = scan (\\_ y -> y) 0 xs",
        "[0.5, 1.0, -0.5]",
        "[1.0, 2.0, 3.0]",
    );
    close(&a, &[1.0, 2.0, 3.0]);
}

#[test]
fn linear_function_worked_case() {
    // ad-rules.md §7: a = [(2,1),(3,−1),(.5,4)] → x = [(2,1),(6,2),(3,5)];
    // ĉ = [(1,0),(0,1),(1,1)] → â = [(2.5,4.5),(2.5,1.5),(8,1)].
    let out = nums(&vjp_run(
        LIN,
        "[2.0, 3.0, 0.5] [1.0, -1.0, 4.0]",
        "[1.0, 0.0, 1.0] [0.0, 1.0, 1.0]",
    ));
    close(
        &out,
        &[2.0, 6.0, 3.0, 1.0, 2.0, 5.0, 2.5, 2.5, 8.0, 4.5, 1.5, 1.0],
    );
    let a = check_vjp(
        LIN,
        "[2.0, 3.0, 0.5] [1.0, -1.0, 4.0]",
        "[1.0, 0.0, 1.0] [0.0, 1.0, 1.0]",
    );
    // The dot-product test of §7: Σ⟨â, ȧ⟩ with ȧ = ĉ is 13.
    let dot: f64 = a
        .iter()
        .zip([1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
        .map(|(x, y)| x * y)
        .sum();
    close(&[dot], &[13.0]);
    check_vjp(
        LIN,
        "[1.5, -0.5, 2.0, 0.75, 1.25] [0.5, 2.0, -1.0, 3.0, 0.25]",
        "[0.5, -2.0, 1.0, 0.0, 1.0] [1.0, 1.0, -1.0, 2.0, 0.5]",
    );
    close(
        &adjoints(
            LIN,
            "empty([0]f64) empty([0]f64)",
            "empty([0]f64) empty([0]f64)",
            2,
        ),
        &[],
    );
}

#[test]
fn matrix_product_worked_case() {
    // ad-rules.md §7: A0=[[1,2],[0,1]], A1=[[2,0],[1,1]], A2=[[0,1],[1,3]] as (a,b,c,d);
    // ĉ = [[[1,0],[0,0]], [[0,1],[0,0]], [[1,1],[1,1]]] →
    // â = [[[3,6],[2,5]], [[1,5],[3,14]], [[5,5],[3,3]]].
    let args = "[1.0, 2.0, 0.0] [2.0, 0.0, 1.0] [0.0, 1.0, 1.0] [1.0, 1.0, 3.0]";
    let seeds = "[1.0, 0.0, 1.0] [0.0, 1.0, 1.0] [0.0, 0.0, 1.0] [0.0, 0.0, 1.0]";
    let a = check_vjp(MAT, args, seeds);
    close(
        &a,
        &[3.0, 1.0, 5.0, 6.0, 5.0, 5.0, 2.0, 3.0, 3.0, 5.0, 14.0, 3.0],
    );
    check_vjp(
        MAT,
        "[1.0, 0.5, -1.0, 2.0] [0.5, 1.0, 0.25, -1.0] [2.0, -0.5, 1.0, 0.0] [1.0, 1.5, 0.5, 1.0]",
        "[1.0, 0.5, -1.0, 2.0] [1.0, 0.0, 1.0, 1.0] [0.5, 2.0, 1.0, -1.0] [1.0, 1.0, 0.0, 3.0]",
    );
}

#[test]
fn tuple_operators_with_bools_and_ints() {
    // A segmented sum: the flags steer the operator and get no adjoint.
    let src = "entry f (xs: []f64) (fs: []bool) = unzip (scan (\\(v1, f1) (v2, f2) -> (if f2 then v2 else v1 + v2, f1 || f2)) (0, false) (zip xs fs))";
    let a = check_vjp(
        src,
        "[1.0, 2.0, 3.0, 4.0, 5.0] [true, false, true, false, false]",
        "[1.0, 2.0, 3.0, 4.0, 5.0] [false, false, false, false, false]",
    );
    close(&a, &[3.0, 2.0, 12.0, 9.0, 5.0]);
    // A running maximum with its index: the adjoint goes to the running winner.
    let src = "entry f (xs: []f64) = unzip (scan (\\(x1, i1) (x2, i2) -> if x2 > x1 then (x2, i2) else (x1, i1)) (-f64.inf, -1) (zip xs (indices xs)))";
    let out = vjp_run(
        src,
        "[1.0, 3.0, 2.0, 5.0]",
        "[1.0, 1.0, 1.0, 1.0] [0i64, 0i64, 0i64, 0i64]",
    );
    close(&nums(&out[2..]), &[1.0, 2.0, 0.0, 1.0]);
}

#[test]
fn vectorised() {
    let a = check_vjp(
        "entry f [n][m] (xss: [n][m]f64) : [n][m]f64 = scan (map2 (+)) (replicate m 0) xss",
        "[[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]]",
        "[[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]]",
    );
    close(&a, &[4.0, 2.0, 3.0, 0.0, 3.0, -1.0]);
    check_vjp(
        "entry f [n][m] (xss: [n][m]f64) : [n][m]f64 = scan (map2 (*)) (replicate m 1) xss",
        "[[1.0, 2.0, 0.5], [0.0, 3.0, -1.0], [4.0, 0.5, 2.0]]",
        "[[1.0, 2.0, 1.0], [0.0, 1.0, 1.0], [3.0, -1.0, 0.5]]",
    );
    // A tuple of vectorised operands: linear functions per column.
    check_vjp(
        "entry f [n][m] (as: [n][m]f64) (bs: [n][m]f64) = unzip (scan (\\(a1, b1) (a2, b2) -> unzip (map4 (\\x1 y1 x2 y2 -> (x1 * x2, x2 * y1 + y2)) a1 b1 a2 b2)) (replicate m 1, replicate m 0) (zip as bs))",
        "[[2.0, 1.0], [3.0, -1.0], [0.5, 2.0]] [[1.0, 0.5], [-1.0, 2.0], [4.0, 1.0]]",
        "[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]] [[0.0, 1.0], [1.0, 0.5], [1.0, -1.0]]",
    );
    close(
        &adjoints(
            "entry f [n][m] (xss: [n][m]f64) : [n][m]f64 = scan (map2 (*)) (replicate m 1) xss",
            "empty([0][2]f64)",
            "empty([0][2]f64)",
            1,
        ),
        &[],
    );
}

#[test]
fn scans_inside_map() {
    check_vjp(
        "entry f [n][m] (xss: [n][m]f64) = map (\\xs -> let p = scan (*) 1 xs let s = scan (+) 0 xs in map2 (+) p s) xss",
        "[[1.0, 2.0, 3.0], [0.0, 3.0, -1.0], [4.0, 0.5, 0.0]]",
        "[[1.0, 2.0, -1.0], [0.5, 1.0, 1.0], [1.0, 1.0, 2.0]]",
    );
    check_vjp(
        "entry f [n][m] (xss: [n][m]f64) (c: [m]f64) = map (\\xs -> scan (\\x y -> x + y + x * y) 0 (map2 (*) xs c)) xss",
        "[[0.5, 2.0, 1.0], [0.25, 3.0, -1.0]] [1.0, 0.5, 2.0]",
        "[[1.0, -2.0, 1.0], [0.0, 1.0, 2.0]]",
    );
}

#[test]
fn array_operators_that_are_not_vectorised() {
    // Linear functions per column as a tuple of two maps (not one `map2`).
    check_vjp(
        "entry f [n][m] (as: [n][m]f64) (bs: [n][m]f64) = unzip (scan (\\(a1, b1) (a2, b2) -> (map2 (*) a1 a2, map3 (\\x y z -> x * y + z) a2 b1 b2)) (replicate m 1, replicate m 0) (zip as bs))",
        "[[2.0, 1.0], [3.0, -1.0], [0.5, 2.0]] [[1.0, 0.5], [-1.0, 2.0], [4.0, 1.0]]",
        "[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]] [[0.0, 1.0], [1.0, 0.5], [1.0, -1.0]]",
    );
    // The 2×2 matrix worked case with each matrix as a [4]f64 row (the operator mixes columns).
    let src = "entry f [n] (ms: [n][4]f64) = scan (\\a b -> [a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]]) [1, 0, 0, 1] ms";
    let a = check_vjp(
        src,
        "[[1.0, 2.0, 0.0, 1.0], [2.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 3.0]]",
        "[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]",
    );
    close(
        &a,
        &[3.0, 6.0, 2.0, 5.0, 1.0, 5.0, 3.0, 14.0, 5.0, 5.0, 3.0, 3.0],
    );
    close(
        &adjoints(src, "empty([0][4]f64)", "empty([0][4]f64)", 1),
        &[],
    );
    close(
        &check_vjp(src, "[[1.0, 2.0, 0.0, 1.0]]", "[[1.0, 2.0, 3.0, 4.0]]"),
        &[1.0, 2.0, 3.0, 4.0],
    );
}

#[test]
fn tuple_of_two_float_types() {
    // (f32 sums, f64 products): Paszke's rule, every float component differentiated.
    let out = nums(&vjp_run(
        "entry f (as: []f32) (bs: []f64) = unzip (scan (\\(a1, b1) (a2, b2) -> (a1 + a2, b1 * b2)) (0, 1) (zip as bs))",
        "[1f32, 2f32, 3f32] [2.0, 3.0, 4.0]",
        "[1f32, 1f32, 1f32] [1.0, 1.0, 1.0]",
    ));
    close(&out[6..], &[3.0, 2.0, 1.0, 16.0, 10.0, 6.0]);
}

#[test]
fn random_inputs_against_finite_differences() {
    use super::super::reduce::tests::random_array;
    let ops = [
        SUM,
        PROD,
        "entry f (xs: []f64) = scan (\\x y -> x + y + x * y) 0 xs",
        "entry f (xs: []f64) = scan f64.max (-f64.inf) xs",
    ];
    for (k, src) in ops.iter().enumerate() {
        for n in 1..7 {
            let seeds = random_array(n, 50 + (k * 10 + n) as u64);
            check_vjp(src, &random_array(n, (k * 10 + n) as u64), &seeds);
        }
    }
    for n in 1..6 {
        let a = |s: u64| random_array(n, s + 10 * n as u64);
        check_vjp(
            LIN,
            &format!("{} {}", a(1), a(2)),
            &format!("{} {}", a(3), a(4)),
        );
        check_vjp(
            MAT,
            &format!("{} {} {} {}", a(1), a(2), a(3), a(4)),
            &format!("{} {} {} {}", a(5), a(6), a(7), a(8)),
        );
    }
    // Scans of a free array inside a map: the adjoint goes through an accumulator.
    check_vjp(
        "entry f [n] (xs: [n]f64) (ys: [n]f64) = map (\\y -> map2 (+) (scan (*) 1 xs) (scan (+) 0 xs) |> map (* y)) ys",
        &format!("{} {}", random_array(4, 3), random_array(4, 4)),
        "[[1.0, 0.5, 2.0, -1.0], [0.0, 1.0, 1.0, 1.0], [2.0, 1.0, 0.5, 0.25], [1.0, 1.0, 1.0, 1.0]]",
    );
}
