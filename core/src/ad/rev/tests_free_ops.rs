//! Tests of the adjoints of free variables of `reduce`/`scan`/`reduce_by_index` operators: a
//! hand-worked case, finite-difference checks (scalars, arrays, tuples, nested in `map`s,
//! vectorised operators) and edge cases (empty and one-element arrays).

use super::super::tests::{check_vjp, close};

/// `x ⊙_c y = x + y + c·x·y` is associative for every `c` (it is `(1+cx)(1+cy) = 1 + c(x⊙y)`)
/// with neutral 0.
const OP: &str = "(\\a b -> a + b + c * a * b)";

#[test]
fn reduce_free_scalar_worked_case() {
    // xs = [1, 2], c = 0.5: y = 1 + 2 + 0.5·2 = 4; x̄ = (1 + c·2, 1 + c·1) = (2, 1.5);
    // c̄ = x0·x1 = 2.
    let a = check_vjp(
        &format!("entry f [n] (xs: [n]f64) (c: f64) = reduce {OP} 0 xs"),
        "[1.0, 2.0] 0.5",
        "1.0",
    );
    close(&a, &[2.0, 1.5, 2.0]);
    // Three elements: y = ((1+c·x0)(1+c·x1)(1+c·x2) − 1)/c.
    check_vjp(
        &format!("entry f [n] (xs: [n]f64) (c: f64) = reduce {OP} 0 xs"),
        "[0.5, -1.0, 2.0, 0.25] 0.3",
        "2.0",
    );
}

#[test]
fn reduce_free_scalar_edge_cases() {
    // n = 0: y = 0, c̄ = 0; n = 1: y = x0, c̄ = 0.
    let a = check_vjp(
        &format!("entry f [n] (xs: [n]f64) (c: f64) = reduce {OP} 0 xs"),
        "empty([0]f64) 0.5",
        "1.0",
    );
    close(&a, &[0.0]);
    let a = check_vjp(
        &format!("entry f [n] (xs: [n]f64) (c: f64) = reduce {OP} 0 xs"),
        "[3.0] 0.5",
        "1.0",
    );
    close(&a, &[1.0, 0.0]);
}

#[test]
fn reduce_free_array_and_nonlinear_use() {
    // The free variable is an element of a free array (an accumulator) and is used non-linearly.
    check_vjp(
        "entry f [n] (xs: [n]f64) (cs: [3]f64) = reduce (\\a b -> a + b + f64.sin cs[1] * a * b) 0 xs",
        "[0.5, -1.0, 2.0] [9.0, 0.3, 7.0]",
        "1.5",
    );
}

#[test]
fn reduce_free_variable_in_a_map() {
    // The free variable is local to the enclosing map (its param), and also an outer scalar.
    check_vjp(
        &format!(
            "entry f [n][m] (xs: [n]f64) (cs: [m]f64) (d: f64) = map (\\c0 -> let c = c0 * d in reduce {OP} 0 xs) cs"
        ),
        "[0.5, -1.0, 2.0] [0.1, 0.2] 1.5",
        "[1.0, -2.0]",
    );
}

#[test]
fn reduce_tuple_operator_with_free_variable() {
    // Composition of affine maps x ↦ e^{k·a}·x + b: associative for every k, neutral (0, 0).
    check_vjp(
        "entry f [n] (as: [n]f64) (bs: [n]f64) (k: f64) = reduce (\\(a1, b1) (a2, b2) -> (a1 + a2, b1 * f64.exp (k * a2) + b2)) (0, 0) (zip as bs)",
        "[0.5, -1.0, 2.0] [1.0, 2.0, 3.0] 0.3",
        "1.0 -0.5",
    );
}

#[test]
fn vectorised_reduce_with_free_variable() {
    check_vjp(
        "entry f [n][m] (xss: [n][m]f64) (c: f64) = reduce (map2 (\\a b -> a + b + c * a * b)) (replicate m 0) xss",
        "[[0.5, 1.0], [-1.0, 0.5], [2.0, 0.25]] 0.3",
        "[1.0, -1.0]",
    );
}

#[test]
fn scan_free_scalar() {
    // xs = [1, 2], c = 0.5: ys = [1, 4]; ȳ = [0, 1]: c̄ = x0·x1 = 2, x̄ = (2, 1.5).
    let a = check_vjp(
        &format!("entry f [n] (xs: [n]f64) (c: f64) = scan {OP} 0 xs"),
        "[1.0, 2.0] 0.5",
        "[0.0, 1.0]",
    );
    close(&a, &[2.0, 1.5, 2.0]);
    check_vjp(
        &format!("entry f [n] (xs: [n]f64) (c: f64) = scan {OP} 0 xs"),
        "[0.5, -1.0, 2.0, 0.25] 0.3",
        "[1.0, 2.0, -1.0, 0.5]",
    );
    let a = check_vjp(
        &format!("entry f [n] (xs: [n]f64) (c: f64) = scan {OP} 0 xs"),
        "empty([0]f64) 0.3",
        "empty([0]f64)",
    );
    close(&a, &[0.0]);
}

#[test]
fn scan_tuple_operator_and_free_array() {
    check_vjp(
        "entry f [n] (as: [n]f64) (bs: [n]f64) (ks: [2]f64) = scan (\\(a1, b1) (a2, b2) -> (a1 + a2, b1 * f64.exp (ks[1] * a2) + b2)) (0, 0) (zip as bs) |> unzip",
        "[0.5, -1.0, 2.0] [1.0, 2.0, 3.0] [5.0, 0.3]",
        "[1.0, 0.0, 2.0] [-0.5, 1.0, 0.25]",
    );
}

#[test]
fn scan_array_operator_with_free_variable() {
    // Rows are arrays and the operator is not vectorised: Paszke et al.'s rule.
    check_vjp(
        "entry f [n] (xss: [n][2]f64) (c: f64) = scan (\\u v -> [u[0] + v[0] + c * u[0] * v[0], u[1] + v[1] * c]) [0, 0] xss",
        "[[0.5, 1.0], [-1.0, 0.5], [2.0, 0.25]] 0.3",
        "[[1.0, -1.0], [0.5, 2.0], [1.0, 1.0]]",
    );
}

#[test]
fn scan_free_variable_in_a_map() {
    check_vjp(
        &format!(
            "entry f [n][m] (xss: [m][n]f64) (cs: [m]f64) = map2 (\\xs c -> scan {OP} 0 xs) xss cs"
        ),
        "[[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]] [0.1, 0.2]",
        "[[1.0, 2.0, 3.0], [-1.0, 0.5, 1.0]]",
    );
}

#[test]
fn hist_free_scalar() {
    // Duplicates, an empty bin and out-of-range indices.
    check_vjp(
        &format!(
            "entry f [n] (h: [3]f64) (is: [n]i64) (xs: [n]f64) (c: f64) = reduce_by_index (copy h) {OP} 0 is xs"
        ),
        "[0.5, 1.0, -0.25] [0i64, 2i64, 0i64, 5i64, 0i64, -1i64] [1.0, 2.0, 0.5, 9.0, -1.0, 4.0] 0.3",
        "[1.0, 2.0, -1.0]",
    );
    // One element in one bin: y0 = h0 + x0 + c·h0·x0: c̄ = h0·x0 = 2.
    let a = check_vjp(
        &format!(
            "entry f [n] (h: [1]f64) (is: [n]i64) (xs: [n]f64) (c: f64) = reduce_by_index (copy h) {OP} 0 is xs"
        ),
        "[0.5] [0i64] [4.0] 0.3",
        "[1.0]",
    );
    close(&a, &[1.0 + 0.3 * 4.0, 1.0 + 0.3 * 0.5, 2.0]);
}

#[test]
fn hist_free_array_in_a_map() {
    check_vjp(
        "entry f [n] (h: [2]f64) (is: [n]i64) (xs: [n]f64) (cs: [3]f64) = map (\\j -> reduce_by_index (copy h) (\\a b -> a + b + cs[j] * a * b) 0 is xs) (iota 2)",
        "[0.5, 1.0] [0i64, 1i64, 0i64, 1i64] [1.0, 2.0, 0.5, -1.0] [0.3, 0.1, 9.0]",
        "[[1.0, 2.0], [-1.0, 0.5]]",
    );
}

#[test]
fn free_integer_variables() {
    // Integer programs are differentiated too (as Futhark does): on i64,
    // y = Σxᵢ + c·Σ_{i<j} xᵢxⱼ + c²·x0x1x2 for xs = [1, 2, 3], c = 2: y = 52,
    // x̄ = (35, 21, 15), c̄ = (2 + 3 + 6) + 2c·6 = 35.
    use super::super::tests::{vals, vjp_program};
    // Through reduce, scan and reduce_by_index (one bin).
    for body in [
        format!("reduce {OP} 0 xs"),
        format!("let s = scan {OP} 0 xs in s[n - 1]"),
        format!("(reduce_by_index (replicate 1 0) {OP} 0 (replicate n 0) xs)[0]"),
    ] {
        let (_, p) = vjp_program(&format!("entry f [n] (xs: [n]i64) (c: i64) = {body}"));
        let mut args = vals("[1i64, 2i64, 3i64] 2i64");
        args.extend(vals("1i64"));
        let out = crate::interp::run_entry(&p, "g", args).expect("vjp runs");
        let shown: Vec<String> = out.iter().map(crate::values::write_text).collect();
        assert_eq!(
            shown,
            ["52i64", "[35i64, 21i64, 15i64]", "35i64"],
            "{body}: {shown:?}"
        );
    }
}
