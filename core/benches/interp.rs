//! Reference-interpreter throughput: a map-reduce over n f32 elements, next to the same
//! computation as a native Rust loop in the same run (report the ratio, not absolute times:
//! these machines are shared and noisy).
//!
//! `cargo bench -p vkad-core --bench interp`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use vkad_core::prim::PrimValue;
use vkad_core::value::{ArrayValue, Buffer, Value};

const PROGRAM: &str = "entry main (xs: []f32): f32 = reduce (+) 0 (map (\\x -> x * 2 + 1) xs)\n";

fn map_reduce(c: &mut Criterion) {
    let compiled = vkad_core::compile("bench.fut", PROGRAM).expect("bench program compiles");
    let mut group = c.benchmark_group("map_reduce_f32");
    group.sample_size(10);
    for n in [1usize << 16, 1 << 20, 10_000_000] {
        let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("interp", n), &data, |b, data| {
            b.iter(|| {
                let arg =
                    Value::Array(ArrayValue::new(vec![data.len()], Buffer::F32(data.clone())));
                let r = compiled.run_interp("main", vec![arg]).expect("runs");
                black_box(r)
            })
        });
        group.bench_with_input(BenchmarkId::new("native", n), &data, |b, data| {
            b.iter(|| {
                // The same work, including the argument copy the interpreter call makes.
                let xs = data.clone();
                let s: f32 = xs.iter().map(|x| x * 2.0 + 1.0).fold(0.0, |a, x| a + x);
                black_box(PrimValue::F32(s))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, map_reduce);
criterion_main!(benches);
