//! Contiguous copies and fills run as transfer commands (`vkCmdCopyBuffer`, `vkCmdFillBuffer`)
//! in the batch, in order with the kernels around them, instead of as copy kernels: a row
//! update in a loop (reverse mode's adjoint rows), a `replicate` of a scalar whose storage
//! repeats a 4-byte word. Profiles show them with 0 workgroups; the run's statistics count
//! them apart from kernel launches.

mod common;

use vkad_core::seg::Thresholds;
use vkad_core::testing::compare_values;
use vkad_core::values::parse_values;
use vkad_spirv::runtime::{DeviceProgram, RunOptions};

/// Each row update of a loop is one copy command; the results are the interpreter's, and the
/// statistics of an unprofiled run count the same launches and transfers as the profile.
#[test]
fn row_updates_are_copy_commands() {
    let src = "entry main [n][m] (xss: [n][m]f32) (k: i64) : [n][m]f32 =
                 loop xss = copy xss for i < k do
                   let row = xss[i % n]
                   let s = map (\\x -> x * 0.5 + 1) row
                   in xss with [(i + 1) % n] = s";
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let args = parse_values(b"[[1f32, 2f32, 3f32], [4f32, 5f32, 6f32], [7f32, 8f32, 9f32]] 5i64")
        .expect("values");
    let want = c.run_interp("main", args.clone()).expect("interpreter");
    let mut th = Thresholds::default();
    th.set("loop=0").expect("setting");
    let (got, timings) = prog
        .run(&ctx, "main", args.clone(), &th, true)
        .expect("vulkan");
    let ms = compare_values(&got, &want);
    assert!(ms.is_empty(), "{ms:?}");
    let names: Vec<(&str, [u32; 3])> = timings.iter().map(|t| (&*t.name, t.groups)).collect();
    let updates: Vec<_> = names
        .iter()
        .filter(|(n, _)| n.starts_with("update"))
        .collect();
    // Five updates and the loop's first copy of the array (see `in_place.rs`), each a copy
    // command.
    assert_eq!(updates.len(), 6, "{names:?}");
    assert!(updates.iter().all(|(_, g)| *g == [0; 3]), "{names:?}");
    let transfers = names.iter().filter(|(_, g)| *g == [0; 3]).count();
    // The same run timed per submission: the same commands, counted.
    let opts = RunOptions {
        device_time: true,
        ..Default::default()
    };
    let (got, out) = prog
        .run_host(&ctx, "main", args, &th, &opts)
        .expect("vulkan");
    assert!(compare_values(&got, &want).is_empty());
    assert!(out.timings.is_empty());
    let s = out.stats;
    assert_eq!(
        (s.launches, s.transfers),
        (timings.len() - transfers, transfers),
        "{s:?}"
    );
    assert!(s.submissions >= 1 && s.device_ns > 0, "{s:?}");
}

/// A `replicate` of a scalar is a fill command where its storage repeats one 4-byte word (any
/// 32-bit value, a 64-bit value with equal halves such as 0 or -1) and a fill kernel otherwise
/// (a 64-bit value whose halves differ).
#[test]
fn fills_of_repeating_words_are_fill_commands() {
    let src = "entry main (n: i64) (x: f64) (y: f32) : ([n]f64, [n]f64, [n]f32, [n]i64) =
                 (replicate n 0f64, replicate n x, replicate n y, replicate n (-1i64))";
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let args = parse_values(b"1000i64 1.5f64 2.5f32").expect("values");
    let want = c.run_interp("main", args.clone()).expect("interpreter");
    let (got, timings) = prog
        .run(&ctx, "main", args, &Thresholds::default(), true)
        .expect("vulkan");
    let ms = compare_values(&got, &want);
    assert!(ms.is_empty(), "{ms:?}");
    let groups: Vec<[u32; 3]> = timings
        .iter()
        .filter(|t| t.name.starts_with("replicate"))
        .map(|t| t.groups)
        .collect();
    // 0f64, y and -1i64 repeat a word; 1.5f64 (0x3ff8000000000000) does not.
    assert_eq!(groups.len(), 4, "{timings:?}");
    assert_eq!(
        groups.iter().filter(|g| **g == [0; 3]).count(),
        3,
        "{timings:?}"
    );
}
