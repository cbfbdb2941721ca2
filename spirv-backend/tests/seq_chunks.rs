//! One-thread loops run in chunks on Vulkan: the gradient of a loop, whose forward sweep
//! keeps a tape of the loop's values (written a chunk of rows at a time, the host copying them
//! into place) and whose return sweep reads it, gives the interpreter's results for every
//! `seq_chunk`, and the number of launches follows `seq_chunk` (a `seq_chunk` of 1 launches
//! once per iteration of each of the two loops; a larger one fewer times).

mod common;

use vkad_core::prim::PrimValue;
use vkad_core::seg::Thresholds;
use vkad_core::testing::compare_values;
use vkad_core::value::{ArrayValue, Buffer, Value};

const SRC: &str = "entry main [n] (xs: [n]f64) (k: i64) : [n]f64 =
  vjp (\\xs -> let (ys, s) = loop (ys, s) = (xs, 0f64) for i < k do
                   let ys' = map (\\y -> f64.sin y * 0.5 + f64.i64 i) ys
                   in (ys', s + f64.sum (map2 (*) ys' ys))
               in s + f64.sum ys) xs 1";

#[test]
fn a_loop_gradient_in_chunks_of_any_size_gives_the_interpreters_results() {
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", SRC).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = vkad_spirv::runtime::DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let xs = Value::Array(ArrayValue::new(vec![3], Buffer::F64(vec![1.0, -2.0, 4.0])));
    let k = 6i64;
    let args = || vec![xs.clone(), Value::Scalar(PrimValue::I64(k))];
    let want = c.run_interp("main", args()).expect("interpreter");
    let mut launches = Vec::new();
    for chunk in [1i64, 4, 100] {
        // Every loop in one thread, `chunk` iterations per launch.
        let mut th = Thresholds::all(i64::MAX);
        th.set(&format!("seq_chunk={chunk}")).expect("setting");
        let (got, timings) = prog.run(&ctx, "main", args(), &th, true).expect("vulkan");
        let ms = compare_values(&got, &want);
        assert!(ms.is_empty(), "seq_chunk = {chunk}: {ms:?}");
        launches.push(timings.len() as i64);
    }
    // Two loops of 6 iterations: at least 6 + 6 one-thread launches at 1 per launch (the
    // forward loop's chunks also copy their rows into the tape), 2 + 2 at 4, 1 + 1 at 100; the
    // other launches are the same in every run.
    assert!(
        launches[0] - launches[2] >= 2 * (k - 1) && launches[1] > launches[2],
        "{launches:?}"
    );
    assert!(launches[0] > launches[1], "{launches:?}");
}

/// A nest whose sequentialised version gives each thread more work than lavapipe lets one
/// thread do (rows of 70,000 elements, read twice: over its 65,535-iteration loop limit) runs
/// its distributed version instead, with the interpreter's results, both where the nest
/// threshold forces the sequentialised version (a nest in two versions, rules 4 and 5) and
/// for a nest that has inner parallelism but cannot be distributed (rule 5's host-loop
/// fallback: the rows are filtered to a size of each thread's own). A GPU runs the
/// sequentialised versions themselves; the results are the same.
#[test]
fn nests_whose_threads_the_device_cuts_short_run_their_other_version() {
    let ctx = common::ctx();
    let src = "entry normalise [n][m] (xss: [n][m]f64) : [n][m]f64 =
                 map (\\r -> let s = f64.sum r in map (\\x -> x / s) r) xss
               entry positives [n][m] (xss: [n][m]f64) : [n]f64 =
                 map (\\r -> let ps = filter (> 0) r
                            in f64.sum ps + f64.sum (map (\\p -> p * p) ps)) xss";
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = vkad_spirv::runtime::DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let (n, m) = (2usize, 70_000usize);
    let data: Vec<f64> = (0..n * m)
        .map(|i| ((i * 7919) % 1000) as f64 / 100.0 - 2.0)
        .collect();
    let xss = Value::Array(ArrayValue::new(vec![n, m], Buffer::F64(data)));
    for entry in ["normalise", "positives"] {
        let want = c.run_interp(entry, vec![xss.clone()]).expect("interpreter");
        // `nest=0`: every versioned nest takes its sequentialised version first.
        let mut th = Thresholds::default();
        th.set("nest=0").expect("setting");
        let (got, _) = prog
            .run(&ctx, entry, vec![xss.clone()], &th, false)
            .unwrap_or_else(|e| panic!("{entry}: {e}"));
        let ms = compare_values(&got, &want);
        assert!(ms.is_empty(), "{entry}: {ms:?}");
    }
}

/// A nest whose sequentialised version adds into an accumulator (the adjoint of `w`, read by
/// every point) and whose threads loop over 70,000 elements, past lavapipe's loop limit: the
/// runtime saves the accumulator's array before that version runs (its zeros, which no launch
/// has reached yet, as their value rather than a copy), puts it back after the limiter cut it,
/// and runs the distributed version, giving the interpreter's gradient (the cut version's
/// partial updates, left in place, would count twice; so would a wrong refill).
#[test]
fn a_cut_version_that_added_into_an_accumulator_is_undone_before_the_other_runs() {
    let ctx = common::ctx();
    let src = "entry g [n][m] (xss: [n][m]f64) (w: [m]f64) : [m]f64 =
                 vjp (\\w -> f64.sum (map (\\xs -> let s = f64.sum (map2 (*) xs w)
                                                 in f64.sum (map (\\x -> x * s) w)) xss)) w 1";
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = vkad_spirv::runtime::DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let (n, m) = (2usize, 70_000usize);
    let xs: Vec<f64> = (0..n * m)
        .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
        .collect();
    let w: Vec<f64> = (0..m)
        .map(|j| ((j * 31) % 100) as f64 / 50.0 - 1.0)
        .collect();
    let args = vec![
        Value::Array(ArrayValue::new(vec![n, m], Buffer::F64(xs))),
        Value::Array(ArrayValue::new(vec![m], Buffer::F64(w))),
    ];
    let want = c.run_interp("g", args.clone()).expect("interpreter");
    // `nest=0`: the sequentialised version first.
    let mut th = Thresholds::default();
    th.set("nest=0").expect("setting");
    let (got, _) = prog
        .run(&ctx, "g", args, &th, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let ms = compare_values(&got, &want);
    assert!(ms.is_empty(), "{ms:?}");
}

/// The host-loop version of a nest (chosen by `host_map=0`) runs its body at host level, where
/// the backend's host-level passes apply: the body's histogram, whose operator is a `map2` over
/// rows of `(value, tangent)` pairs (the `jvp` of a `max` histogram), becomes a histogram of
/// scalars run by sorting, which Vulkan's histogram kernels need (Futhark's
/// `tests/ad/reducebyindexminmax7.fut`, whose nest lavapipe cuts short).
#[test]
fn the_host_loop_version_of_a_nest_gets_the_backends_host_passes() {
    let ctx = common::ctx();
    let src = "def primal [n][m][k] (is: [n]i64) (dst: [m][k]f32) (vs: [n][k]f32) =
                 reduce_by_index (copy dst) (map2 f32.max) (replicate k f32.lowest) is vs
               entry fwd [n][m][k] (is: [n]i64) (dst: [m][k]f32) (vs: [n][k]f32) =
                 tabulate n (\\i -> jvp (primal is dst) vs
                                     (replicate n (replicate k 0) with [i] = replicate k 1))";
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = vkad_spirv::runtime::DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let (n, m, k) = (5usize, 3usize, 2usize);
    let is = Value::Array(ArrayValue::new(vec![n], Buffer::I64(vec![0, 2, 0, 7, 2])));
    let f = |len: usize, seed: usize| {
        let data = (0..len)
            .map(|i| ((i * 37 + seed) % 11) as f32 - 5.0)
            .collect();
        Buffer::F32(data)
    };
    let dst = Value::Array(ArrayValue::new(vec![m, k], f(m * k, 3)));
    let vs = Value::Array(ArrayValue::new(vec![n, k], f(n * k, 8)));
    let args = vec![is, dst, vs];
    let want = c.run_interp("fwd", args.clone()).expect("interpreter");
    let mut th = Thresholds::default();
    th.set("host_map=0").expect("setting");
    let (got, _) = prog
        .run(&ctx, "fwd", args, &th, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let ms = compare_values(&got, &want);
    assert!(ms.is_empty(), "{ms:?}");
}

/// A one-thread loop too long for one launch on lavapipe (20,000 iterations of the gradient's
/// forward and return sweeps, over its 65,535-iteration loop limit): the runtime cuts it into
/// shorter chunks until they fit and gives the interpreter's results. The forward sweep's tape
/// is copied into place a chunk at a time, which a cut run repeats with the same rows.
#[test]
fn a_one_thread_loop_too_long_for_one_launch_runs_in_shorter_chunks() {
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", SRC).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = vkad_spirv::runtime::DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let xs = Value::Array(ArrayValue::new(vec![3], Buffer::F64(vec![1.0, -2.0, 4.0])));
    let args = || vec![xs.clone(), Value::Scalar(PrimValue::I64(20_000))];
    let want = c.run_interp("main", args()).expect("interpreter");
    // Every loop in one thread, the whole loop per launch unless the device cuts it.
    let th = Thresholds::all(i64::MAX);
    let (got, _) = prog
        .run(&ctx, "main", args(), &th, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let ms = compare_values(&got, &want);
    assert!(ms.is_empty(), "{ms:?}");
}
