//! Arrays larger than `maxStorageBufferRange`, kernels with more arrays than
//! `maxPerStageDescriptorStorageBuffers`, and arrays larger than one allocation. With
//! `bufferDeviceAddress` (every Vulkan 1.3 device, lavapipe included) kernels reach arrays
//! through device addresses, so neither descriptor limit applies. Skipped (with a message) when
//! there is no Vulkan device or the device lacks `bufferDeviceAddress`. Runs with the
//! validation layer on: any message fails the test.

use std::sync::{Arc, OnceLock};
use vkad_core::prim::PrimValue;
use vkad_core::value::{ArrayValue, Buffer, Value};
use vkad_spirv::{run_entry, Context, ContextOptions};

/// A validated context with `bufferDeviceAddress`, or None (and a note) without one.
fn ctx() -> Option<Arc<Context>> {
    static CTX: OnceLock<Option<Arc<Context>>> = OnceLock::new();
    CTX.get_or_init(|| {
        match Context::new(&ContextOptions {
            device: None,
            validation: true,
            pipeline_cache: vkad_vk::PipelineCacheMode::Off,
        }) {
            Ok(c) if c.buffer_device_address() => {
                c.set_validate_spirv(true);
                Some(Arc::new(c))
            }
            Ok(c) => {
                eprintln!(
                    "skipped: {} has no bufferDeviceAddress (arrays are descriptor bindings)",
                    c.info().name
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: no Vulkan device ({e})");
                None
            }
        }
    })
    .clone()
}

fn run(c: &Context, src: &str, args: Vec<Value>) -> Result<Vec<Value>, vkad_spirv::error::Error> {
    let p = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    run_entry(c, &p, "main", args)
}

fn f32s(v: Vec<f32>) -> Value {
    let n = v.len();
    Value::Array(ArrayValue::new(vec![n], Buffer::F32(v)))
}

#[test]
fn a_200_mib_array_maps_and_reduces() {
    let Some(c) = ctx() else { return };
    let n = (200usize << 20) / 4;
    assert!(4 * n as u64 > c.info().max_storage_buffer_range);
    // Small integers: the map is exact, and the f64 sum of the mapped values is the reference.
    let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32).collect();
    let want_sum: f64 = xs.iter().map(|&x| 2.0 * f64::from(x) + 1.0).sum();
    let src = "entry main [n] (xs: [n]f32) : ([n]f32, f32) =
  let ys = map (\\x -> x * 2 + 1) xs
  in (ys, reduce (+) 0 ys)\n";
    let out = run(&c, src, vec![f32s(xs.clone())]).expect("runs");
    let Value::Array(ys) = &out[0] else {
        panic!("an array")
    };
    let Buffer::F32(ys) = &ys.data else {
        panic!("f32")
    };
    assert_eq!(ys.len(), n);
    for (i, (&x, &y)) in xs.iter().zip(ys).enumerate() {
        assert_eq!(y, x * 2.0 + 1.0, "element {i}");
    }
    let Value::Scalar(PrimValue::F32(s)) = out[1] else {
        panic!("an f32")
    };
    let rel = ((f64::from(s) - want_sum) / want_sum).abs();
    assert!(rel < 1e-4, "sum {s} vs {want_sum} (relative error {rel})");
    assert!(c.take_validation_messages().is_empty());
}

#[test]
fn a_kernel_with_40_arrays() {
    let Some(c) = ctx() else { return };
    let k = 40;
    let params: Vec<String> = (0..k).map(|i| format!("(a{i}: [n]f32)")).collect();
    let terms: Vec<String> = (0..k).map(|i| format!("a{i}[i] * {}", i + 1)).collect();
    // Every array is a free variable of the one map kernel (more than lavapipe's 32
    // storage-buffer bindings per stage).
    let src = format!(
        "entry main [n] {} : [n]f32 = map (\\i -> {}) (iota n)\n",
        params.join(" "),
        terms.join(" + ")
    );
    let n = 1000;
    let args: Vec<Value> = (0..k)
        .map(|a| f32s((0..n).map(|i| ((i + a) % 5) as f32).collect()))
        .collect();
    let p = vkad_core::compile("t.fut", &src).unwrap_or_else(|e| panic!("{}", e.render()));
    let want = p.run_interp("main", args.clone()).expect("interpreter");
    let got = run_entry(&c, &p, "main", args).expect("vulkan");
    let ms = vkad_core::testing::compare_values(&got, &want);
    assert!(
        ms.is_empty(),
        "{:?}",
        ms.iter().map(|m| m.to_string()).collect::<Vec<_>>()
    );
    assert!(c.take_validation_messages().is_empty());
}

#[test]
fn an_array_larger_than_one_allocation_is_a_clear_error() {
    let Some(c) = ctx() else { return };
    // One element more than the largest allocation holds: refused before any allocation.
    let n = (c.info().max_allocation / 4 + 1) as i64;
    let src = "entry main (n: i64) : f32 = let xs = replicate n 1f32 in xs[n - 1]\n";
    let e = run(&c, src, vec![Value::Scalar(PrimValue::I64(n))]).expect_err("too large");
    assert!(
        matches!(
            e,
            vkad_spirv::error::Error::Allocation {
                source: vkad_spirv::VkError::OutOfMemory(_),
                loc: Some(_),
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("larger than the device allows"),
        "{e}"
    );
}
