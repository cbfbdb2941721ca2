//! Compile once, run many: a program prepared for a device generates its kernels on the first
//! call and none on the next 99, whose inputs differ; every result is the interpreter's.

mod common;

use vkad_core::seg::Thresholds;
use vkad_core::testing::compare_values;
use vkad_core::value::Value;

#[test]
fn an_entry_compiled_once_runs_100_times_without_new_kernels() {
    let ctx = common::ctx();
    let c =
        vkad_core::compile("t.fut", common::LOSS_SRC).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = vkad_spirv::runtime::DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let th = Thresholds::all(Thresholds::DEFAULT);
    let mut after_first = None;
    let pipelines = ctx.cached_kernels();
    for k in 0..100u64 {
        let args = vec![
            Value::Array(common::f64s(1000, k)),
            Value::Scalar(vkad_core::prim::PrimValue::F64(0.5 + k as f64 / 100.0)),
        ];
        let want = c.run_interp("main", args.clone()).expect("interpreter");
        let (got, _) = prog.run(&ctx, "main", args, &th, false).expect("vulkan");
        let ms = compare_values(&got, &want);
        assert!(ms.is_empty(), "call {k}: {ms:?}");
        match after_first {
            None => after_first = Some((prog.kernels_made(), ctx.cached_kernels())),
            Some(first) => assert_eq!(
                (prog.kernels_made(), ctx.cached_kernels()),
                first,
                "call {k} generated kernels"
            ),
        }
    }
    let (made, pipes) = after_first.expect("ran");
    assert!(
        made > 0 && pipes > pipelines,
        "the first call made the kernels"
    );
}
