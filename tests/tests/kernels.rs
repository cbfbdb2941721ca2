//! The kernel IR against the interpreter: every test program and example, fused and flattened
//! into host code around segmented operations (`vkad_core::flatten`), must give the
//! interpreter's results on the kernel IR's evaluator, with the flattening thresholds set so
//! that every versioned nest runs its sequentialised version, then its distributed one (the
//! default thresholds pick the distributed one at test sizes), and its kernel IR must pass the checker. For the SC22 benchmark programs
//! (tests/programs/kernels), the number of kernels a run launches must not depend on the data
//! sizes.

use std::path::{Path, PathBuf};
use vkad_core::prim::PrimValue;
use vkad_core::seg::Thresholds;
use vkad_core::testing::{run_paths, KernelsBackend};
use vkad_core::value::{ArrayValue, Buffer, Value};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

fn run_all(thresholds: Thresholds) {
    for dir in ["tests/programs", "examples"] {
        let mut out = Vec::new();
        let backend = KernelsBackend {
            thresholds: thresholds.clone(),
        };
        let summary =
            run_paths(&[repo_root().join(dir)], &backend, &mut out).expect("test runner I/O");
        let text = String::from_utf8_lossy(&out);
        assert!(summary.passed > 0, "no dataset ran in {dir}:\n{text}");
        assert!(
            summary.success(),
            "failures in {dir} (thresholds {thresholds:?}):\n{text}"
        );
    }
}

#[test]
fn programs_pass_through_the_kernel_ir_always_sequentialising() {
    run_all(Thresholds::all(0));
}

/// Sequentialised nests with inner parallelism run as host loops over their points (rule 5's
/// fallback, `flatten/host_map.rs`, which a device takes where it cannot run the nest's
/// threads).
#[test]
fn programs_pass_through_the_kernel_ir_running_sequentialised_nests_as_host_loops() {
    let mut th = Thresholds::all(0);
    th.set("host_map=0").expect("a threshold setting");
    run_all(th);
}

#[test]
fn programs_pass_through_the_kernel_ir_always_distributing() {
    run_all(Thresholds::all(i64::MAX));
}

fn fut_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("readable directory")
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fut_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "fut") {
            out.push(p);
        }
    }
}

#[test]
fn every_program_s_kernel_ir_passes_the_checker() {
    let mut files = Vec::new();
    fut_files(&repo_root().join("tests/programs"), &mut files);
    fut_files(&repo_root().join("examples"), &mut files);
    let mut checked = 0;
    for f in files {
        // Programs that are meant not to compile are skipped.
        let Ok(c) = vkad_core::compile_file(&f) else {
            continue;
        };
        if let Err(e) = vkad_core::seg::check::check_program(c.kernels()) {
            panic!(
                "{}: kernel IR check failed: {e}\n{}",
                f.display(),
                vkad_core::seg::print::program_to_string(c.kernels())
            );
        }
        checked += 1;
    }
    assert!(checked > 50, "only {checked} programs compiled");
}

// ----- kernel counts ---------------------------------------------------------------------------

/// A deterministic f64 array of the given shape with values in [-1, 1).
fn array(shape: &[usize], seed: u64) -> Value {
    let n: usize = shape.iter().product();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let data = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect();
    Value::Array(ArrayValue {
        shape: shape.to_vec(),
        data: Buffer::F64(data),
    })
}

fn scalar(v: f64) -> Value {
    Value::Scalar(PrimValue::F64(v))
}

fn compiled(name: &str) -> vkad_core::Compiled {
    let path = repo_root().join("tests/programs/kernels").join(name);
    vkad_core::compile_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `entry` through the kernel IR and the interpreter, checks that they agree, and
/// returns the number of kernels the kernel IR launched.
fn kernels_launched(c: &vkad_core::Compiled, entry: &str, args: Vec<Value>) -> usize {
    let expected = c.run_interp(entry, args.clone()).expect("interpreter");
    let (got, stats) = c
        .run_kernels(entry, args, &Thresholds::default())
        .expect("kernel IR");
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        let (Value::Array(g), Value::Array(e)) = (g, e) else {
            assert_eq!(g, e);
            continue;
        };
        assert_eq!(g.shape, e.shape);
        assert_eq!(
            g.data, e.data,
            "{entry}: results differ from the interpreter's"
        );
    }
    stats.kernels
}

#[test]
fn perfect_nest_of_three_maps_launches_one_kernel_at_every_size() {
    let c = compiled("nest3.fut");
    for shape in [[2, 3, 4], [5, 1, 7]] {
        let a = array(&shape, 1);
        let a = match a {
            Value::Array(ArrayValue {
                shape,
                data: Buffer::F64(d),
            }) => Value::Array(ArrayValue {
                shape,
                data: Buffer::F32(d.into_iter().map(|x| x as f32).collect()),
            }),
            v => v,
        };
        assert_eq!(kernels_launched(&c, "main", vec![a]), 1, "{shape:?}");
    }
}

#[test]
fn kmeans_newton_step_launches_the_same_kernels_at_every_size() {
    let c = compiled("kmeans.fut");
    let run = |n: usize, k: usize, d: usize| {
        kernels_launched(&c, "newton", vec![array(&[n, d], 2), array(&[k, d], 3)])
    };
    // Both sizes update each element of the centres' adjoint from at least
    // `Thresholds::ACC_RED_DEFAULT` points (flattening's rule 7 picks the same version).
    let small = run(40, 2, 3);
    let large = run(120, 5, 3);
    assert_eq!(
        small, large,
        "k-means Newton step: kernels depend on n and k"
    );
    assert!(small < 60, "k-means Newton step launches {small} kernels");
}

#[test]
fn gmm_gradient_launches_the_same_kernels_at_every_size() {
    let c = compiled("gmm.fut");
    let run = |k: usize, d: usize, n: usize| {
        let args = vec![
            scalar(n as f64),
            array(&[n, d], 4),
            array(&[k], 5),
            array(&[k, d], 6),
            array(&[k, d], 7),
        ];
        (
            kernels_launched(&c, "loss", args.clone()),
            kernels_launched(&c, "grad", args),
        )
    };
    let small = run(2, 2, 3);
    let large = run(7, 4, 20);
    assert_eq!(small, large, "GMM: kernels depend on K, d or n");
}

#[test]
fn lstm_gradient_launches_the_same_kernels_per_step_at_every_width() {
    let c = compiled("lstm.fut");
    let run = |entry: &str, steps: usize, b: usize| {
        let l = 2;
        let args = vec![
            scalar((b * (steps - 1)) as f64),
            array(&[l, 4, b], 8),
            array(&[l, 4, b], 9),
            array(&[3, b], 10),
            array(&[l, 2, b], 11),
            array(&[steps, b], 12),
        ];
        kernels_launched(&c, entry, args)
    };
    for entry in ["loss", "grad"] {
        let per_step = |b| run(entry, 4, b) - run(entry, 3, b);
        assert_eq!(
            per_step(3),
            per_step(9),
            "{entry}: kernels per step depend on b"
        );
        assert_eq!(
            run(entry, 4, 3),
            run(entry, 4, 9),
            "{entry}: kernels depend on b"
        );
        println!("LSTM {entry}: {} kernels per step (l = 2)", per_step(3));
    }
}
