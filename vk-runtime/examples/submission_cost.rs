//! The host cost of one submission: `cargo run --release -p vkad-vk --example submission_cost`.
//!
//! Times (wall clock, on the host) small operations that are dominated by what a submission
//! costs rather than by the device's work: a run of 1 and of 8 tiny dispatches, a run with an
//! inline write and a read-back (what the executor submits per batch), a 64-byte upload and
//! download, and allocating and dropping a small buffer. Prints the median of each in
//! microseconds.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use std::time::Instant;
use vkad_vk::{Context, ContextOptions, Dispatch, PipelineCacheMode};

fn median_us(mut f: impl FnMut(), reps: usize) -> f64 {
    for _ in 0..10 {
        f();
    }
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn main() {
    let validation = std::env::args().any(|a| a == "--validation");
    let ctx = Context::new(&ContextOptions {
        device: None,
        validation,
        pipeline_cache: PipelineCacheMode::Off,
    })
    .expect("a Vulkan device");
    let reps = 500;
    let k = ctx.kernel("axpb", &axpb(true, &[]), "main", 1, 12).unwrap();
    let buf = ctx.alloc(256).unwrap();
    let one = |ctx: &Context| {
        ctx.run(&[Dispatch {
            kernel: &k,
            buffers: vec![&buf],
            push: axpb_push(64, 1.0, 1.0),
            groups: groups(64),
        }])
        .unwrap();
    };
    let eight = |ctx: &Context| {
        let ds: Vec<_> = (0..8)
            .map(|_| Dispatch {
                kernel: &k,
                buffers: vec![&buf],
                push: axpb_push(64, 1.0, 1.0),
                groups: groups(64),
            })
            .collect();
        ctx.run(&ds).unwrap();
    };
    let data = [0u8; 64];
    let rows = [
        ("run, 1 dispatch", median_us(|| one(&ctx), reps)),
        ("run, 8 dispatches", median_us(|| eight(&ctx), reps)),
        (
            "run_with write + 1 dispatch + read",
            median_us(
                || {
                    ctx.run_with(
                        &[(&buf, 0, &data)],
                        &[Dispatch {
                            kernel: &k,
                            buffers: vec![&buf],
                            push: axpb_push(64, 1.0, 1.0),
                            groups: groups(64),
                        }],
                        Some((&buf, 0, 64)),
                    )
                    .unwrap();
                },
                reps,
            ),
        ),
        (
            "upload 64 B",
            median_us(|| ctx.upload(&buf, 0, &data).unwrap(), reps),
        ),
        (
            "download 64 B",
            median_us(
                || {
                    ctx.download(&buf, 0, 64).unwrap();
                },
                reps,
            ),
        ),
        (
            "alloc + drop 1 KiB",
            median_us(|| drop(ctx.alloc(1024).unwrap()), reps),
        ),
        (
            "alloc + drop 1 MiB",
            median_us(|| drop(ctx.alloc(1 << 20).unwrap()), reps),
        ),
    ];
    println!("{} (validation {validation})", ctx.info().name);
    for (what, us) in rows {
        println!("{what:<36} {us:>9.1} us");
    }
    println!("{:?}", ctx.object_counts());
}
