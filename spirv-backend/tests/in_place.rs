//! In-place updates on Vulkan write the array without copying it first once the views of it
//! that the program read are dead: the runtime forgets each array of a host body after its
//! last use (`runtime::plan::PlanBody::dead_after`), so that a row read before an update no
//! longer holds the array's buffer. Reverse mode's adjoint rows (`adj[k] = adj[k] + ...` in a
//! loop) are the case this is for.

mod common;

use vkad_core::seg::Thresholds;
use vkad_core::testing::compare_values;
use vkad_core::values::parse_values;

/// A loop that reads a row of an array, computes a new row from it and writes it back: one
/// launch per update (the write), with the interpreter's results.
#[test]
fn an_update_after_reading_a_row_does_not_copy_the_array() {
    let src = "entry main [n][m] (xss: [n][m]f32) (k: i64) : [n][m]f32 =
                 loop xss = copy xss for i < k do
                   let row = xss[i % n]
                   let s = map (\\x -> x * 0.5 + 1) row
                   in xss with [(i + 1) % n] = s";
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = vkad_spirv::runtime::DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let args = parse_values(b"[[1f32, 2f32, 3f32], [4f32, 5f32, 6f32], [7f32, 8f32, 9f32]] 5i64")
        .expect("values");
    let want = c.run_interp("main", args.clone()).expect("interpreter");
    // The loop flattened (its one-thread version updates the array inside a kernel).
    let mut th = Thresholds::default();
    th.set("loop=0").expect("setting");
    let (got, timings) = prog.run(&ctx, "main", args, &th, true).expect("vulkan");
    let ms = compare_values(&got, &want);
    assert!(ms.is_empty(), "{ms:?}");
    let updates = timings
        .iter()
        .filter(|t| t.name.starts_with("update"))
        .count();
    // Five updates, one launch each, and one copy: the loop's first iteration copies the
    // array, whose initial value the enclosing body still holds (it is forgotten after the
    // loop, its last use). Copying at every update would make 10.
    assert_eq!(
        updates,
        6,
        "one launch per update: {:?}",
        timings.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
}
