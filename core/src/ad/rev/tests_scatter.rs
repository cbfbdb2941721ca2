//! Tests of the `scatter` rule: the worked case of ad-rules.md §7, duplicates (the last write
//! wins), out-of-range indices, rows that are arrays, several destinations, `scatter_2d`, f32 and
//! the edge cases n = 0 and 1; every one also checked against finite differences.

use super::super::tests::{check_vjp, close};

#[test]
fn scatter_worked_case() {
    // ad-rules.md §7: dst = [0,0,0], is = [1,1,5], vs = [10,20,30], ȳ = [1,2,3] →
    // v̄s = [0,2,0], d̄st = [1,0,3].
    let a = check_vjp(
        "entry f (dst: [3]f64) (is: [3]i64) (vs: [3]f64) = scatter (copy dst) is vs",
        "[0.0, 0.0, 0.0] [1i64, 1i64, 5i64] [10.0, 20.0, 30.0]",
        "[1.0, 2.0, 3.0]",
    );
    close(&a, &[1.0, 0.0, 3.0, 0.0, 2.0, 0.0]);
}

#[test]
fn scatter_duplicates_and_out_of_range() {
    // Writes: 0→2, 1→0, 2→2, 3→-1 (ignored), 4→0, 5→9 (ignored), 6→2. Winners: 4 (pos 0), 6 (pos 2).
    let a = check_vjp(
        "entry f (dst: [4]f64) (is: [7]i64) (vs: [7]f64) = map (\\x -> x * x) (scatter (copy dst) is vs)",
        "[1.0, 2.0, 3.0, 4.0] [2i64, 0i64, 2i64, -1i64, 0i64, 9i64, 2i64] [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5]",
        "[1.0, 2.0, 3.0, 4.0]",
    );
    // y = [5.5, 2, 7.5, 4]; ∂(y²)/∂y·ȳ = [11, 8, 45, 32].
    close(
        &a,
        &[0.0, 8.0, 0.0, 32.0, 0.0, 0.0, 0.0, 0.0, 11.0, 0.0, 45.0],
    );
}

#[test]
fn scatter_edge_cases() {
    // No writes.
    let a = check_vjp(
        "entry f (dst: [2]f64) (is: [0]i64) (vs: [0]f64) = scatter (copy dst) is vs",
        "[1.0, 2.0] empty([0]i64) empty([0]f64)",
        "[3.0, 4.0]",
    );
    close(&a, &[3.0, 4.0]);
    // One write into a one-element array.
    let a = check_vjp(
        "entry f (dst: [1]f64) (is: [1]i64) (vs: [1]f64) = scatter (copy dst) is vs",
        "[1.0] [0i64] [5.0]",
        "[3.0]",
    );
    close(&a, &[0.0, 3.0]);
    // An empty destination: every index is out of range.
    let a = check_vjp(
        "entry f (dst: [0]f64) (is: [2]i64) (vs: [2]f64) = scatter (copy dst) is vs",
        "empty([0]f64) [0i64, 0i64] [5.0, 6.0]",
        "empty([0]f64)",
    );
    close(&a, &[0.0, 0.0]);
}

#[test]
fn scatter_uses_values_twice() {
    // The values also flow elsewhere: their adjoints add up.
    let a = check_vjp(
        "entry f (dst: [3]f64) (is: [3]i64) (vs: [3]f64) = let y = scatter (copy dst) is (map (\\v -> v * v) vs) in map2 (*) y (map (\\i -> vs[i % 3]) (iota 3))",
        "[1.0, 2.0, 3.0] [2i64, 2i64, 0i64] [1.5, -2.0, 0.5]",
        "[1.0, 2.0, 3.0]",
    );
    // y = [0.25, 2, 4]; z = y * [1.5, -2, 0.5].
    // ȳ = [1.5, -4, 1.5]; d̄st = [0, -4, 0]; v̄s from the scatter: [0, 2·(-2)·1.5, 2·0.5·1.5]
    // = [0, -6, 1.5]; from the gather: vs[k]·... = [1·0.25, 2·2, 3·4] = [0.25, 4, 12].
    close(&a, &[0.0, -4.0, 0.0, 0.25, -2.0, 13.5]);
}

#[test]
fn scatter_rows_and_tuples() {
    // Rows that are arrays (the fallback that finds winners in a separate i64 array).
    let a = check_vjp(
        "entry f (dst: [3][2]f64) (is: [3]i64) (vs: [3][2]f64) = scatter (copy dst) is vs",
        "[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] [2i64, 7i64, 2i64] [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]",
        "[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]",
    );
    close(
        &a,
        &[1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 6.0],
    );
    // Two destinations written with the same indices.
    let a = check_vjp(
        "entry f (a: [3]f64) (b: [3]f64) (is: [2]i64) (x: [2]f64) (y: [2]f64) = let (r, s) = unzip (scatter (zip (copy a) (copy b)) is (zip x y)) in (r, map (\\v -> 2 * v) s)",
        "[1.0, 2.0, 3.0] [4.0, 5.0, 6.0] [1i64, 1i64] [7.0, 8.0] [9.0, 10.0]",
        "[1.0, 2.0, 3.0] [1.0, 1.0, 1.0]",
    );
    close(&a, &[1.0, 0.0, 3.0, 2.0, 0.0, 2.0, 0.0, 2.0, 0.0, 2.0]);
}

#[test]
fn scatter_2d() {
    let a = check_vjp(
        "entry f (dst: [2][3]f64) (is: [4]i64) (js: [4]i64) (vs: [4]f64) = scatter_2d (copy dst) (zip is js) vs",
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [0i64, 1i64, 0i64, 1i64] [2i64, 0i64, 2i64, 3i64] [7.0, 8.0, 9.0, 10.0]",
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]",
    );
    // (0,2) written by 0 then 2 (2 wins); (1,0) by 1; (1,3) out of range.
    close(&a, &[1.0, 2.0, 0.0, 0.0, 5.0, 6.0, 0.0, 4.0, 3.0, 0.0]);
}

#[test]
fn scatter_other_types() {
    use super::super::hist::tests_hist::vjp_at;
    // f32 (the index codes are bit patterns) and i32 (codes are converted indices).
    let a = vjp_at(
        "entry f (dst: [3]f32) (is: [4]i64) (vs: [4]f32) = scatter (copy dst) is vs",
        "[1.0f32, 2.0f32, 3.0f32] [2i64, 0i64, 2i64, 3i64] [4.0f32, 5.0f32, 6.0f32, 7.0f32]",
        "[1.0f32, 2.0f32, 3.0f32]",
    );
    close(&a, &[0.0, 2.0, 0.0, 0.0, 1.0, 3.0, 0.0]);
    let a = vjp_at(
        "entry f (dst: [3]i32) (is: [4]i64) (vs: [4]i32) = scatter (copy dst) is vs",
        "[1i32, 2i32, 3i32] [2i64, 0i64, 2i64, 3i64] [4i32, 5i32, 6i32, 7i32]",
        "[1i32, 2i32, 3i32]",
    );
    close(&a, &[0.0, 2.0, 0.0, 0.0, 1.0, 3.0, 0.0]);
}

#[test]
fn scatter_inside_map() {
    // Values free in the lambda (accumulated) and local to it.
    check_vjp(
        "entry f (ss: [2]f64) (is: [3]i64) (vs: [3]f64) = map (\\s -> let y = scatter (replicate 4 s) is (map (* s) vs) in map (* s) y) ss",
        "[1.5, -0.5] [2i64, 0i64, 2i64] [1.0, 2.0, 3.0]",
        "[[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 1.0]]",
    );
}
