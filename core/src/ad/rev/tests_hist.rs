//! Tests of the `reduce_by_index` rules: every hist case of ad-rules.md §7 with its expected
//! values, finite-difference checks (where the function is differentiable at the point), and
//! edge cases (no elements, one bin, every index out of range, ties).

use super::super::tests::{check_vjp, close, vals, vjp_program};
use crate::value::{Buffer, Value};

/// The adjoints of the vjp of `f` at `args` with `seeds`, without a finite-difference check
/// (for points where `f` is not differentiable, e.g. ties of `max`, and for types the
/// finite-difference check does not handle: `f32` and `i32` adjoints are returned too).
pub(crate) fn vjp_at(src: &str, args: &str, seeds: &str) -> Vec<f64> {
    let (_, prog) = vjp_program(src);
    let seeds = vals(seeds);
    let nres = seeds.len();
    let mut all = vals(args);
    all.extend(seeds);
    let out = crate::interp::run_entry(&prog, "g", all).unwrap_or_else(|e| panic!("run: {e}"));
    let mut adjs = vec![];
    for v in &out[nres..] {
        match v {
            Value::Scalar(crate::prim::PrimValue::F64(x)) => adjs.push(*x),
            Value::Array(a) => match &a.data {
                Buffer::F64(xs) => adjs.extend(xs.iter().copied()),
                Buffer::F32(xs) => adjs.extend(xs.iter().map(|x| *x as f64)),
                Buffer::I32(xs) => adjs.extend(xs.iter().map(|x| *x as f64)),
                _ => {}
            },
            _ => {}
        }
    }
    adjs
}

const IS: &str = "[0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64]";
const YBAR: &str = "[1.0, 2.0, 3.0, 4.0]";

fn hist_src(op: &str, ne: &str) -> String {
    format!(
        "entry f (h: [4]f64) (is: [8]i64) (xs: [8]f64) = reduce_by_index (copy h) ({op}) {ne} is xs"
    )
}

#[test]
fn hist_add_worked_case() {
    // ad-rules.md §7: h̄ = [1,2,3,4], ā = [1,2,3,2,2,1,0,0].
    let a = check_vjp(
        &hist_src("+", "0"),
        &format!("[10.0, 20.0, 30.0, 40.0] {IS} [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 2.0, 2.0, 1.0, 0.0, 0.0],
    );
}

#[test]
fn hist_add_vectorised_and_hist_builtin() {
    let a = check_vjp(
        "entry f (h: [3][2]f64) (is: [4]i64) (xs: [4][2]f64) = map (map (\\x -> x * x)) (reduce_by_index (copy h) (map2 (+)) (replicate 2 0) is xs)",
        "[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] [2i64, 0i64, 2i64, 3i64] [[1.0, -1.0], [0.5, 2.0], [1.5, 1.0], [4.0, 4.0]]",
        "[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]",
    );
    // y = [[1.5,4],[3,4],[7.5,6]]; ȳ = 2·y·seed = [[3,16],[18,32],[75,72]].
    close(
        &a,
        &[
            3.0, 16.0, 18.0, 32.0, 75.0, 72.0, 75.0, 72.0, 3.0, 16.0, 75.0, 72.0, 0.0, 0.0,
        ],
    );
    // `hist` starts from replicated neutral elements.
    let a = check_vjp(
        "entry f (is: [5]i64) (xs: [5]f64) = hist (+) 0 3 is xs",
        "[2i64, 1i64, 5i64, 2i64, 0i64] [1.0, 2.0, 3.0, 4.0, 5.0]",
        "[1.0, 2.0, 3.0]",
    );
    close(&a, &[3.0, 2.0, 0.0, 3.0, 1.0]);
}

#[test]
fn hist_add_edge_cases() {
    // No elements.
    let a = check_vjp(
        "entry f (h: [2]f64) (is: [0]i64) (xs: [0]f64) = reduce_by_index (copy h) (+) 0 is xs",
        "[1.0, 2.0] empty([0]i64) empty([0]f64)",
        "[3.0, 4.0]",
    );
    close(&a, &[3.0, 4.0]);
    // One bin, every index out of range but one.
    let a = check_vjp(
        "entry f (h: [1]f64) (is: [3]i64) (xs: [3]f64) = reduce_by_index (copy h) (+) 0 is xs",
        "[1.0] [1i64, 0i64, -5i64] [1.0, 2.0, 3.0]",
        "[3.0]",
    );
    close(&a, &[3.0, 0.0, 3.0, 0.0]);
}

#[test]
fn hist_mul_worked_cases() {
    let src = hist_src("*", "1");
    // ad-rules.md §7: h̄ = [8,60,18,4], ā = [16,15,−3,10,6,2,0,0].
    let a = check_vjp(
        &src,
        &format!("[2.0, 0.5, -1.0, 3.0] {IS} [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[
            8.0, 60.0, 18.0, 4.0, 16.0, 15.0, -3.0, 10.0, 6.0, 2.0, 0.0, 0.0,
        ],
    );
    // With as[0] = 0: h̄ = [0,60,18,4], ā = [16,15,−3,10,6,0,0,0].
    let a = check_vjp(
        &src,
        &format!("[2.0, 0.5, -1.0, 3.0] {IS} [0.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[
            0.0, 60.0, 18.0, 4.0, 16.0, 15.0, -3.0, 10.0, 6.0, 0.0, 0.0, 0.0,
        ],
    );
    // With as[1] = as[4] = 0: h̄ = [8,0,18,4], ā = [16,0,−3,0,0,2,0,0].
    let a = check_vjp(
        &src,
        &format!("[2.0, 0.5, -1.0, 3.0] {IS} [1.0, 0.0, 6.0, 3.0, 0.0, 8.0, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[
            8.0, 0.0, 18.0, 4.0, 16.0, 0.0, -3.0, 0.0, 0.0, 2.0, 0.0, 0.0,
        ],
    );
}

#[test]
fn hist_mul_zero_in_destination() {
    // A zero bin value: h̄ is still the product of the bin's elements; the elements get 0.
    let a = check_vjp(
        &hist_src("*", "1"),
        &format!("[0.0, 0.5, -1.0, 3.0] {IS} [1.5, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[
            12.0, 60.0, 18.0, 4.0, 0.0, 15.0, -3.0, 10.0, 6.0, 0.0, 0.0, 0.0,
        ],
    );
}

#[test]
fn hist_max_worked_case() {
    // ad-rules.md §7 (ties: the original value wins bin 0, the lower index wins bin 1):
    // h̄ = [1,0,0,4], ā = [0,0,3,2,0,0,0,0].
    let a = vjp_at(
        &hist_src("f64.max", "f64.lowest"),
        &format!("[8.0, 0.0, 1.0, 7.0] {IS} [1.0, 2.0, 6.0, 5.0, 5.0, 8.0, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[1.0, 0.0, 0.0, 4.0, 0.0, 0.0, 3.0, 2.0, 0.0, 0.0, 0.0, 0.0],
    );
}

#[test]
fn hist_min_max_without_ties() {
    let a = check_vjp(
        &hist_src("f64.max", "f64.lowest"),
        &format!("[8.0, 0.0, 1.0, 7.0] {IS} [1.0, 2.0, 6.0, 5.5, 5.0, 8.5, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 3.0, 2.0, 0.0, 1.0, 0.0, 0.0],
    );
    let a = check_vjp(
        &hist_src("f64.min", "f64.highest"),
        &format!("[8.0, 0.0, 1.0, 7.0] {IS} [1.0, 2.0, 6.0, -5.5, 5.0, 8.5, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[0.0, 0.0, 3.0, 4.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0],
    );
    // `hist` with min: empty bins keep the neutral element, whose adjoint goes nowhere.
    let a = check_vjp(
        "entry f (is: [4]i64) (xs: [4]f64) = hist f64.min 100 3 is xs",
        "[2i64, 0i64, 2i64, 7i64] [3.0, 2.0, 1.0, 0.5]",
        "[1.0, 2.0, 3.0]",
    );
    close(&a, &[0.0, 1.0, 3.0, 0.0]);
}

#[test]
fn hist_min_ties() {
    // Equal elements in one bin: the lowest index wins; an equal original wins over both.
    let a = vjp_at(
        &hist_src("f64.min", "f64.highest"),
        "[1.0, 5.0, 9.0, 9.0] [0i64, 0i64, 1i64, 1i64, 2i64, 2i64, 2i64, 3i64] [1.0, 1.0, 2.0, 2.0, 3.0, 4.0, 3.0, 9.0]",
        YBAR,
    );
    close(
        &a,
        &[1.0, 0.0, 0.0, 4.0, 0.0, 0.0, 2.0, 0.0, 3.0, 0.0, 0.0, 0.0],
    );
}

const GENERIC: &str = "\\x y -> x + y + x * y";

#[test]
fn hist_generic_worked_cases() {
    // ad-rules.md §7: x⊙y = x+y+xy (ne 0), h = [.5,1,−.5,2] → h̄ = [18,144,21,4],
    // ā = [13.5,96,1.5,72,48,3,0,0].
    let src = hist_src(GENERIC, "0");
    let a = check_vjp(
        &src,
        &format!("[0.5, 1.0, -0.5, 2.0] {IS} [1.0, 2.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[
            18.0, 144.0, 21.0, 4.0, 13.5, 96.0, 1.5, 72.0, 48.0, 3.0, 0.0, 0.0,
        ],
    );
    // With as[1] = −1 (an absorbing element: no division on this path): h̄ = [18,0,21,4],
    // ā = [13.5,96,1.5,0,0,3,0,0].
    let a = check_vjp(
        &src,
        &format!("[0.5, 1.0, -0.5, 2.0] {IS} [1.0, -1.0, 6.0, 3.0, 5.0, 8.0, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[
            18.0, 0.0, 21.0, 4.0, 13.5, 96.0, 1.5, 0.0, 0.0, 3.0, 0.0, 0.0,
        ],
    );
}

#[test]
fn hist_generic_edge_cases() {
    let src = |m: usize, w: usize| {
        format!("entry f (h: [{w}]f64) (is: [{m}]i64) (xs: [{m}]f64) = reduce_by_index (copy h) ({GENERIC}) 0 is xs")
    };
    // No elements.
    let a = check_vjp(
        &src(0, 2),
        "[1.0, 2.0] empty([0]i64) empty([0]f64)",
        "[3.0, 4.0]",
    );
    close(&a, &[3.0, 4.0]);
    // Every index out of range.
    let a = check_vjp(
        &src(2, 2),
        "[1.0, 2.0] [2i64, -1i64] [5.0, 6.0]",
        "[3.0, 4.0]",
    );
    close(&a, &[3.0, 4.0, 0.0, 0.0]);
    // One bin (0 radix bits), one element.
    let a = check_vjp(&src(1, 1), "[0.5] [0i64] [2.0]", "[2.0]");
    close(&a, &[6.0, 3.0]);
    // One bin, several elements: (1+y) = (1+h)·Π(1+xᵢ).
    let a = check_vjp(
        &src(3, 1),
        "[0.5] [0i64, 0i64, 0i64] [1.0, 2.0, 0.5]",
        "[1.0]",
    );
    close(&a, &[9.0, 6.75, 4.5, 9.0]);
    // Many bins (several radix bits), unsorted and repeated indices.
    check_vjp(
        &src(12, 9),
        "[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] [8i64, 3i64, 0i64, 8i64, 5i64, 3i64, 9i64, 1i64, 8i64, 0i64, 7i64, 3i64] [0.5, -0.2, 0.3, 0.1, 0.25, 0.4, 0.9, -0.3, 0.2, 0.6, 0.15, -0.4]",
        "[1.0, -1.0, 2.0, 0.5, 1.5, -0.5, 1.0, 2.0, 0.25]",
    );
}

#[test]
fn hist_generic_other_operators() {
    // max written as a lambda (not recognised as `max`), without ties.
    let a = check_vjp(
        &hist_src("\\a b -> if a < b then b else a", "(-1000)"),
        &format!("[8.0, 0.0, 1.0, 7.0] {IS} [1.0, 2.0, 6.0, 5.5, 5.0, 8.5, 7.0, 9.0]"),
        YBAR,
    );
    close(
        &a,
        &[0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 3.0, 2.0, 0.0, 1.0, 0.0, 0.0],
    );
    // A tuple operator: complex multiplication.
    check_vjp(
        "entry f (hr: [3]f64) (hi: [3]f64) (is: [5]i64) (xr: [5]f64) (xi: [5]f64) = unzip (reduce_by_index (zip (copy hr) (copy hi)) (\\(a, b) (c, d) -> (a*c - b*d, a*d + b*c)) (1, 0) is (zip xr xi))",
        "[1.0, 0.5, -1.0] [0.0, 1.0, 0.5] [2i64, 0i64, 2i64, 1i64, 2i64] [0.5, 1.5, -1.0, 2.0, 0.3] [1.0, -0.5, 0.2, 0.1, 0.7]",
        "[1.0, 2.0, -1.0] [0.5, 1.0, 3.0]",
    );
    // Vectorised `*` goes through the generic rule with array rows.
    check_vjp(
        "entry f (h: [2][2]f64) (is: [3]i64) (xs: [3][2]f64) = reduce_by_index (copy h) (map2 (*)) (replicate 2 1) is xs",
        "[[1.0, 2.0], [3.0, 4.0]] [1i64, 0i64, 1i64] [[0.5, 2.0], [1.5, -1.0], [2.0, 0.25]]",
        "[[1.0, 2.0], [3.0, 4.0]]",
    );
}

#[test]
fn hist_other_types() {
    // f32 and i32 (integers are differentiated formally).
    let a = vjp_at(
        "entry f (h: [2]f32) (is: [3]i64) (xs: [3]f32) = reduce_by_index (copy h) (*) 1 is xs",
        "[2.0f32, 3.0f32] [1i64, 1i64, 0i64] [4.0f32, 0.5f32, 2.0f32]",
        "[1.0f32, 2.0f32]",
    );
    close(&a, &[2.0, 4.0, 3.0, 24.0, 2.0]);
    let a = vjp_at(
        "entry f (h: [2]i32) (is: [3]i64) (xs: [3]i32) = reduce_by_index (copy h) (i32.max) i32.lowest is xs",
        "[2i32, 3i32] [1i64, 1i64, 0i64] [4i32, 5i32, 2i32]",
        "[1i32, 2i32]",
    );
    close(&a, &[1.0, 0.0, 0.0, 2.0, 0.0]);
}

#[test]
fn hist_inside_map() {
    // The values are free in the lambda (their adjoint is an accumulator) or local to it.
    for (op, ne) in [
        ("+", "0"),
        ("*", "1"),
        ("f64.max", "f64.lowest"),
        (GENERIC, "0"),
    ] {
        check_vjp(
            &format!("entry f (ss: [2]f64) (is: [4]i64) (xs: [4]f64) = map (\\s -> let h = reduce_by_index (replicate 3 0.5) ({op}) {ne} is (map (* s) xs) in map (* s) h) ss"),
            "[1.5, -0.5] [2i64, 0i64, 2i64, 7i64] [1.0, 2.0, 3.0, 4.0]",
            "[[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]",
        );
    }
}

#[test]
fn hist_no_elements_or_no_bins() {
    for (op, ne) in [("*", "1"), ("f64.min", "f64.highest"), (GENERIC, "0")] {
        let a = check_vjp(
            &format!("entry f (h: [2]f64) (is: [0]i64) (xs: [0]f64) = reduce_by_index (copy h) ({op}) {ne} is xs"),
            "[1.0, 2.0] empty([0]i64) empty([0]f64)",
            "[3.0, 4.0]",
        );
        close(&a, &[3.0, 4.0]);
        let a = check_vjp(
            &format!("entry f (h: [0]f64) (is: [2]i64) (xs: [2]f64) = reduce_by_index (copy h) ({op}) {ne} is xs"),
            "empty([0]f64) [0i64, 1i64] [1.0, 2.0]",
            "empty([0]f64)",
        );
        close(&a, &[0.0, 0.0]);
    }
}
