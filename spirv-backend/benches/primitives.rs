//! End-to-end time of `reduce`, `scan` and `map` programs on the default Vulkan device
//! (lavapipe on machines without a GPU) at 2^16 and 2^20 `f32` elements: compile once, then
//! each iteration uploads the input, runs the kernels and downloads the result. Prints a note
//! and measures nothing when there is no Vulkan device.
//!
//! `cargo bench -p vkad-spirv --bench primitives` (device-only times: `vkad bench primitives`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use vkad_core::value::{ArrayValue, Buffer, Value};
use vkad_spirv::{ContextOptions, VulkanBackend};

const PROGRAMS: [(&str, &str); 3] = [
    ("reduce", "entry main (xs: []f32) : f32 = reduce (+) 0 xs\n"),
    ("scan", "entry main (xs: []f32) : []f32 = scan (+) 0 xs\n"),
    (
        "map",
        "entry main (xs: []f32) : []f32 = map (\\x -> x * 2 + 1) xs\n",
    ),
];

fn primitives(c: &mut Criterion) {
    let backend = VulkanBackend::new(ContextOptions::default());
    let ctx = match backend.context() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("skipping the Vulkan benchmarks: {e}");
            return;
        }
    };
    let mut group = c.benchmark_group("vulkan_end_to_end");
    group.sample_size(10);
    for (name, src) in PROGRAMS {
        let compiled = vkad_core::compile("bench.fut", src).expect("bench program compiles");
        for n in [1usize << 16, 1 << 20] {
            let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
            let arg = Value::Array(ArrayValue::new(vec![n], Buffer::F32(data)));
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::new(name, n), &arg, |b, arg| {
                b.iter(|| {
                    let r = vkad_spirv::run_entry(&ctx, &compiled, "main", vec![arg.clone()])
                        .expect("runs");
                    black_box(r)
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, primitives);
criterion_main!(benches);
