//! The host cost of one submission: `cargo run --release -p vkad-vk --example submission_cost`.
//!
//! Times (wall clock, on the host) small operations that are dominated by what a submission
//! costs rather than by the device's work: a run of 1 and of 8 tiny dispatches, a run with an
//! inline write and a read-back (what the executor submits per batch), a 64-byte upload and
//! download, and allocating and dropping a small buffer; then runs of 8 dispatches, 8 copies
//! and 8 fills with each [`Timing`] (what timestamps cost). Prints the median of each in
//! microseconds.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use std::time::Instant;
use vkad_vk::{
    Command, Context, ContextOptions, CopyRegion, Dispatch, FillRegion, PipelineCacheMode, Timing,
};

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
    let (src, dst) = (ctx.alloc(8192).unwrap(), ctx.alloc(8192).unwrap());
    let copies: Vec<Command<'_>> = (0..8)
        .map(|i| {
            Command::Copy(CopyRegion {
                src: &src,
                src_offset: 1024 * i,
                dst: &dst,
                dst_offset: 1024 * i,
                size: 1024,
            })
        })
        .collect();
    let fills: Vec<Command<'_>> = (0..8)
        .map(|i| {
            Command::Fill(FillRegion {
                dst: &dst,
                offset: 1024 * i,
                size: 1024,
                word: 0x3f80_0000,
            })
        })
        .collect();
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
                        &[Command::Dispatch(Dispatch {
                            kernel: &k,
                            buffers: vec![&buf],
                            push: axpb_push(64, 1.0, 1.0),
                            groups: groups(64),
                        })],
                        Some((&buf, 0, 64)),
                        Timing::Commands,
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
    // What timestamps cost: 8 commands of each kind with each way of timing them.
    let dispatches: Vec<Command<'_>> = (0..8)
        .map(|_| {
            Command::Dispatch(Dispatch {
                kernel: &k,
                buffers: vec![&buf],
                push: axpb_push(64, 1.0, 1.0),
                groups: groups(64),
            })
        })
        .collect();
    println!(
        "{:<36} {:>12} {:>12} {:>12}",
        "run of", "Off", "Submission", "Commands"
    );
    for (what, commands) in [
        ("8 dispatches of 64 threads", &dispatches),
        ("8 copies of 1 KiB", &copies),
        ("8 fills of 1 KiB", &fills),
    ] {
        let t = [Timing::Off, Timing::Submission, Timing::Commands].map(|timing| {
            median_us(
                || drop(ctx.run_with(&[], commands, None, timing).unwrap()),
                reps,
            )
        });
        println!(
            "{what:<36} {:>9.1} us {:>9.1} us {:>9.1} us",
            t[0], t[1], t[2]
        );
    }
    // What the timestamps measure: the span of a submission, and the sum of its commands'
    // intervals, for 1 and 8 commands (median of `reps` runs).
    println!(
        "{:<36} {:>12} {:>12} {:>12}",
        "device time of", "span (Sub.)", "span (Cmd.)", "sum (Cmd.)"
    );
    for (what, commands) in [
        ("1 dispatch of 64 threads", &dispatches[..1]),
        ("8 dispatches of 64 threads", &dispatches[..]),
        ("1 copy of 1 KiB", &copies[..1]),
        ("8 copies of 1 KiB", &copies[..]),
    ] {
        let median = |timing: Timing, sum: bool| {
            let mut v: Vec<u64> = (0..reps)
                .map(|_| {
                    let r = ctx.run_with(&[], commands, None, timing).unwrap();
                    if sum {
                        r.timings.iter().map(|t| t.end_ns - t.start_ns).sum()
                    } else {
                        r.device_ns
                    }
                })
                .collect();
            v.sort_unstable();
            v[v.len() / 2] as f64 / 1000.0
        };
        println!(
            "{what:<36} {:>9.1} us {:>9.1} us {:>9.1} us",
            median(Timing::Submission, false),
            median(Timing::Commands, false),
            median(Timing::Commands, true)
        );
    }
    println!("{:?}", ctx.object_counts());
}
