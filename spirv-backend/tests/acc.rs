//! Accumulators (`withacc`/`upd_acc`, made by reverse-mode AD from free arrays read in a `map`)
//! on Vulkan, checked against the interpreter with the validation layer and spirv-val on.

mod common;

use common::same;
use std::path::PathBuf;
use vkad_core::testing::{run_paths_with, RunOptions};
use vkad_core::value::{ArrayValue, Buffer, Value};
use vkad_spirv::{ContextOptions, VulkanBackend};

fn f64s(xs: &[f64]) -> Value {
    Value::Array(ArrayValue::new(vec![xs.len()], Buffer::F64(xs.to_vec())))
}

fn i64s(xs: &[i64]) -> Value {
    Value::Array(ArrayValue::new(vec![xs.len()], Buffer::I64(xs.to_vec())))
}

#[test]
fn gather_adjoint_adds_repeated_reads() {
    let src = "entry main [n][m] (x: [n]f64) (idx: [m]i64) (y: [m]f64) : [n]f64 =
  vjp (\\x -> map (\\i -> x[i] * x[i]) idx) x y";
    same(
        src,
        "main",
        vec![
            f64s(&[1.0, 2.0, 3.0]),
            i64s(&[0, 2, 0, 1, 0, 2]),
            f64s(&[1.0, 10.0, 100.0, 1000.0, 10000.0, 0.5]),
        ],
    );
    same(src, "main", vec![f64s(&[1.0]), i64s(&[]), f64s(&[])]);
}

#[test]
fn accumulators_through_loops_ifs_and_second_order() {
    let src = "entry main [n] (b: bool) (x: [n]f64) (v: [n]f64) : [n]f64 =
  vjp (\\x -> vjp (\\x -> loop y = x for _i < 2 do
                   if b then map (\\i -> y[i] * y[(i + 1) % n]) (iota n)
                   else map (\\i -> 2.0 * y[i]) (iota n)) x v) x v";
    for b in [true, false] {
        same(
            src,
            "main",
            vec![
                Value::Scalar(vkad_core::prim::PrimValue::Bool(b)),
                f64s(&[0.5, -1.0, 2.0, 3.0]),
                f64s(&[1.0, 2.0, -1.0, 0.25]),
            ],
        );
    }
}

#[test]
fn rows_of_a_matrix() {
    let src = "entry main [n][k][m] (a: [n][k]f64) (idx: [m]i64) (y: [m]f64) : [n][k]f64 =
  vjp (\\a -> map (\\i -> f64.sum (map (\\v -> v * v) a[i])) idx) a y";
    let a = Value::Array(ArrayValue::new(
        vec![3, 2],
        Buffer::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    ));
    same(
        src,
        "main",
        vec![a, i64s(&[2, 0, 2, 1]), f64s(&[1.0, 2.0, 3.0, 4.0])],
    );
}

/// `tests/programs/vk_acc.fut` runs on Vulkan with nothing skipped.
#[test]
fn vk_acc_program_runs_unskipped() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/programs/vk_acc.fut");
    let backend = VulkanBackend::new(ContextOptions {
        device: None,
        validation: true,
        pipeline_cache: vkad_vk::PipelineCacheMode::Off,
    });
    let mut out = Vec::new();
    let s = run_paths_with(&[file], &backend, &RunOptions::default(), &mut out)
        .expect("writing to a Vec");
    let text = String::from_utf8_lossy(&out);
    assert_eq!(s.failed, 0, "{text}");
    assert!(!text.contains("skipped:"), "{text}");
    assert!(s.passed >= 9, "{text}");
}

/// Accumulator updates that many threads make to each element (the reverse sweeps of the
/// k-means Newton step and of the GMM gradient) run as a segmented reduction with
/// `acc_red=0` and as atomic updates with `acc_red=MAX`: both pass
/// `tests/programs/kernels/{kmeans,gmm}.fut` on Vulkan.
#[test]
fn accumulator_updates_reduced_first_or_atomic() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/programs/kernels");
    let files = [dir.join("kmeans.fut"), dir.join("gmm.fut")];
    for setting in ["acc_red=0", "acc_red=9223372036854775807"] {
        let backend = VulkanBackend::tuned(
            ContextOptions {
                device: None,
                validation: true,
                pipeline_cache: vkad_vk::PipelineCacheMode::Off,
            },
            vec![setting.to_string()],
        )
        .expect("a valid setting");
        let mut out = Vec::new();
        let s = run_paths_with(&files, &backend, &RunOptions::default(), &mut out)
            .expect("writing to a Vec");
        let text = String::from_utf8_lossy(&out);
        assert_eq!(s.failed, 0, "{setting}: {text}");
        assert!(!text.contains("skipped:"), "{setting}: {text}");
        assert!(s.passed >= 4, "{setting}: {text}");
    }
}

/// A row update of a host accumulator whose operator on rows is not `map` of a scalar
/// operator (here a loop over the row) cannot be split into atomic updates of elements: the
/// call is refused as not supported, naming the construct, rather than run wrongly.
#[test]
fn row_updates_with_an_operator_that_is_not_vectorised_are_not_supported() {
    let src = "type~ acc 't = intrinsics.acc t
def vecadd [m] (xs: [m]i32) (ys: [m]i32) : [m]i32 =
  loop r = replicate m 0 for j < m do r with [j] = xs[j] + ys[j]
entry main [n] (is: [n]i64) : [3][2]i32 =
  intrinsics.hist_stream (replicate 3 (replicate 2 0i32)) vecadd (replicate 2 0)
                         (\\(acc: *acc ([3][2]i32)) i -> intrinsics.acc_write acc i [1, 2]) is";
    let c = vkad_core::compile("rows.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let arg = Value::Array(ArrayValue::new(vec![3], Buffer::I64(vec![0, 2, 0])));
    let want = c
        .run_interp("main", vec![arg.clone()])
        .expect("interpreter");
    let want = format!("{want:?}");
    assert!(want.contains("[2, 4, 0, 0, 1, 2]"), "{want}");
    let ctx = common::ctx();
    let program = vkad_spirv::Program::compile(&ctx, &c).expect("compiled");
    let main = program.entry("main").expect("entry");
    match main.call(&ctx, vec![vkad_spirv::Arg::Host(arg)]) {
        Err(e @ vkad_spirv::error::Error::NotSupported { .. }) => {
            assert!(e.to_string().contains("map` of a scalar operator"), "{e}")
        }
        Err(e) => panic!("wrong error {e:?}"),
        Ok(r) => panic!("ran: {r:?}"),
    }
}
