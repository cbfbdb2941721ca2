//! Compile time of programs that grow with a depth `n` (issue 16, item 6), at 10, 20, 40 and
//! 80 levels: `vjp` of `n` nested loops, `n` nested calls of `p x = (x, x)` and a chain of `n`
//! functions that each call the previous one twice (`vkad_core::testing::nests`). Each is the
//! whole of `vkad_core::compile`. The chain is `2^n` calls once inlined: from about 17 levels
//! on, the compile is the error at the size budget (printed once before the group runs).
//!
//! `cargo bench -p vkad-core --bench compile_nests`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::Duration;
use vkad_core::testing::nests;

const DEPTHS: [usize; 4] = [10, 20, 40, 80];

/// A generator of a program of depth `n`.
type Family = (&'static str, fn(usize) -> String);

fn compile_nests(c: &mut Criterion) {
    let families: [Family; 3] = [
        ("vjp_loop_nest", nests::loop_nest),
        ("pair_calls", nests::pair_nest),
        ("call_chain", nests::call_chain),
    ];
    for (name, program) in families {
        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(100));
        for n in DEPTHS {
            let src = program(n);
            match vkad_core::compile("nest.fut", &src) {
                Ok(_) => eprintln!("{name}/{n}: compiles"),
                Err(e) => eprintln!("{name}/{n}: {}", e.render().lines().next().unwrap_or("")),
            }
            group.bench_with_input(BenchmarkId::from_parameter(n), &src, |b, src| {
                b.iter(|| black_box(vkad_core::compile("nest.fut", src).is_ok()))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, compile_nests);
criterion_main!(benches);
