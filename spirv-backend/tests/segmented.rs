//! Segmented reductions (`map (\row -> reduce op ne row) xss` over few long rows, run with a
//! workgroup per row: spirv-backend/src/codegen/segmented.rs): the kernel is used where it should be
//! (and not for many rows or short ones) and its results match the interpreter's, for
//! commutative and non-commutative operators, tuples and every size class of rows; scans
//! over rows (a flat scan restarting at each row) give the interpreter's results.

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

/// Runs `entry`; returns whether the segmented kernel (kind 50) was made.
fn run(entry: &str, args: Vec<Value>) -> bool {
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
    modules.iter().any(|m| m.name.ends_with("/50"))
}

#[test]
fn few_long_rows_are_segmented() {
    for (m, k) in [(1, 1024), (2, 1025), (3, 4097), (7, 100_003), (63, 1500)] {
        assert!(run("sum", vec![matrix(m, k, 1)]), "sum {m}x{k}");
        assert!(
            run("affine", vec![matrix(m, k, 2), matrix(m, k, 3)]),
            "affine {m}x{k}"
        );
        // Scans of scalars over rows are one flat scan with the operator lifted to restart
        // at each row (runtime/plan.rs), whatever the rows: only the results are checked.
        run("scan_sum", vec![matrix(m, k, 6)]);
        run("scan_affine", vec![matrix(m, k, 7), matrix(m, k, 8)]);
    }
}

#[test]
fn many_or_short_rows_keep_the_map_kernel() {
    // "Many": 64 rows on a CPU driver (lavapipe), 8192 on a GPU.
    let many = if ctx().info().device_type == "cpu" {
        64
    } else {
        8192
    };
    for (m, k) in [(many, 2048), (many + 7, 1024), (3, 1023), (4, 7), (0, 5000)] {
        assert!(!run("sum", vec![matrix(m, k, 4)]), "sum {m}x{k}");
        run("scan_sum", vec![matrix(m, k, 4)]);
    }
}

#[test]
fn rows_past_lavapipes_loop_limit_are_segmented_there() {
    // 70000 elements per row: one thread per row would exceed lavapipe's 65535 iterations
    // (80 rows: segmented on a GPU anyway).
    assert!(run("sum", vec![matrix(80, 70_000, 5)]));
}
