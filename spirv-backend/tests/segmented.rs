//! Segmented reductions (`map (\row -> reduce op ne row) xss` over rows too few for a thread
//! each, run with a team of threads per row, a workgroup per row or several workgroups per
//! row: spirv-backend/src/codegen/segmented.rs): each strategy is used where it should be (and
//! the plain map kernel for many rows or very short ones) and its results match the
//! interpreter's, for commutative and non-commutative operators, tuples and every size class
//! of rows; scans over rows give the interpreter's results.

mod common;
use common::ctx;
use vkad_core::testing::compare_values;
use vkad_core::value::{ArrayValue, Buffer, Value};
use vkad_spirv::compile_entry;

const SRC: &str = "
entry sum [m][k] (xss: [m][k]f64) : [m]f64 = map (\\row -> reduce (+) 0 row) xss
entry affine [m][k] (as: [m][k]f64) (bs: [m][k]f64) : ([m]f64, [m]f64) =
  unzip (map2 (\\a b -> reduce (\\(p, q) (r, s) -> (p * r, q * r + s)) (1, 0) (zip a b)) as bs)
entry scan_sum [m][k] (xss: [m][k]f64) : [m][k]f64 = map (\\row -> scan (+) 0 row) xss
entry scan_affine [m][k] (as: [m][k]f64) (bs: [m][k]f64) : ([m][k]f64, [m][k]f64) =
  unzip (map2 (\\a b -> unzip (scan (\\(p, q) (r, s) -> (p * r, q * r + s)) (1, 0) (zip a b))) as bs)
";

fn matrix(m: usize, k: usize, seed: u64) -> Value {
    let data = (0..m * k)
        .map(|i| {
            let x = (i as u64).wrapping_mul(2654435761).wrapping_add(seed) % 2001;
            1.0 + (x as f64 - 1000.0) / 1e6
        })
        .collect();
    Value::Array(ArrayValue::new(vec![m, k], Buffer::F64(data)))
}

/// Which kernels of a segmented operation a run made.
#[derive(Debug, PartialEq)]
enum Made {
    /// None: the plain map kernel ran, a thread per row.
    Map,
    /// The segmented kernel only: a team of threads (up to a workgroup) per row.
    Teams,
    /// The segmented kernel and the one combining the pieces of rows: several
    /// workgroups per row.
    Pieces,
}

/// Runs `entry`, checks its results against the interpreter's and says which segmented
/// kernels the run made.
fn run(entry: &str, args: Vec<Value>) -> Made {
    let c = vkad_core::compile("t.fut", SRC).unwrap_or_else(|e| panic!("{}", e.render()));
    let want = c.run_interp(entry, args.clone()).expect("interpreter");
    let (got, modules) =
        compile_entry(&ctx(), &c, entry, args).unwrap_or_else(|e| panic!("{entry}: {e}"));
    let ms = compare_values(&got, &want);
    assert!(
        ms.is_empty(),
        "{entry}: {:?}",
        ms.iter().take(3).map(|m| m.to_string()).collect::<Vec<_>>()
    );
    let made = |which: &str| modules.iter().any(|m| m.name.ends_with(which));
    match (made("/segmented"), made("/segmented-combine")) {
        (false, false) => Made::Map,
        (true, false) => Made::Teams,
        (true, true) => Made::Pieces,
        (false, true) => panic!("{entry}: the combining kernel without the segmented one"),
    }
}

fn lavapipe() -> bool {
    ctx().info().device_type == "cpu"
}

/// Checks the reductions (`sum`, `affine`) and scans of `m` rows of `k` elements: their
/// results, and that the reductions made `reductions` and the scans teams (a scan is never cut
/// into pieces: a piece would need the totals of those before it).
fn rows(m: usize, k: usize, reductions: Made) {
    assert_eq!(run("sum", vec![matrix(m, k, 1)]), reductions, "sum {m}x{k}");
    assert_eq!(
        run("affine", vec![matrix(m, k, 2), matrix(m, k, 3)]),
        reductions,
        "affine {m}x{k}"
    );
    assert_eq!(run("scan_sum", vec![matrix(m, k, 6)]), Made::Teams);
    assert_eq!(
        run("scan_affine", vec![matrix(m, k, 7), matrix(m, k, 8)]),
        Made::Teams
    );
}

#[test]
fn few_rows_get_a_team_or_a_workgroup_each() {
    // Teams of 4 to 256 threads (rows of 9 to 1024 and more elements), and whole workgroups
    // for rows too many to cut into pieces (on lavapipe, 8 workgroups fill the device; on a
    // GPU, 1024).
    let mut sizes = vec![(10, 9), (33, 40), (63, 300), (5, 1024), (3, 2047)];
    if lavapipe() {
        sizes.extend([(9, 20_000), (63, 1500)]);
    }
    for (m, k) in sizes {
        rows(m, k, Made::Teams);
    }
}

#[test]
fn few_long_rows_are_cut_into_pieces_for_several_workgroups() {
    // Rows of at least 16 · 256 elements and too few rows to fill the device with one
    // workgroup each.
    for (m, k) in [(1, 100_003), (2, 300_000), (3, 40_000), (7, 33_000)] {
        rows(m, k, Made::Pieces);
    }
}

#[test]
fn many_or_very_short_rows_keep_the_map_kernel() {
    // "Many": 64 rows on a CPU driver (lavapipe), 8192 on a GPU. "Very short": 8 elements
    // or fewer.
    let many = if lavapipe() { 64 } else { 8192 };
    for (m, k) in [(many, 2048), (many + 7, 1024), (4, 7), (100, 8), (0, 5000)] {
        assert_eq!(run("sum", vec![matrix(m, k, 4)]), Made::Map, "sum {m}x{k}");
        run("scan_sum", vec![matrix(m, k, 4)]);
    }
}

#[test]
fn rows_past_lavapipes_loop_limit_are_segmented_there() {
    // 70000 elements per row: one thread per row would exceed lavapipe's 65535 iterations
    // (80 rows: segmented on a GPU anyway).
    assert_ne!(run("sum", vec![matrix(80, 70_000, 5)]), Made::Map);
}
