//! Compile once, run many: a program prepared for a device generates its kernels on the first
//! call and none on the next 99, whose inputs differ; every result is the interpreter's.

mod common;

use vkad_core::seg::Thresholds;
use vkad_core::testing::compare_values;
use vkad_core::value::{ArrayValue, Buffer, Value};

const SRC: &str = "
def loss [n] (xs: [n]f64) (w: f64) : f64 =
  f64.sum (map (\\x -> (x * w - 1.0) ** 2.0) xs)

entry main [n] (xs: [n]f64) (w: f64) : (f64, [n]f64, [n]f64) =
  let g = vjp (\\ys -> loss ys w) xs 1.0
  in (loss xs w, g, scan (+) 0.0 (map (* w) xs))
";

fn f64s(n: usize, seed: u64) -> Value {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let data: Vec<f64> = (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    Value::Array(ArrayValue {
        shape: vec![n],
        data: Buffer::F64(data),
    })
}

#[test]
fn an_entry_compiled_once_runs_100_times_without_new_kernels() {
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", SRC).unwrap_or_else(|e| panic!("{}", e.render()));
    let prog = vkad_spirv::runtime::DeviceProgram::new(&ctx, &c.ir).expect("prepared");
    let th = Thresholds::all(Thresholds::DEFAULT);
    let mut after_first = None;
    let pipelines = ctx.cached_kernels();
    for k in 0..100u64 {
        let args = vec![
            f64s(1000, k),
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
