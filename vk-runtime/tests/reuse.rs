//! Submissions reuse the context's command buffer, fence, descriptor pool, query pool and
//! staging buffers instead of making new ones (issue 13): the counts of made objects stop
//! growing after the first submissions, while every result stays right and the validation
//! layer (on in every test) sees the reused objects reset and synchronised correctly.

mod common;

use common::*;
use vkad_vk::{Command, Dispatch, ObjectCounts, Timing};

#[test]
fn fifty_submissions_make_each_object_once() {
    let ctx = context();
    let k = ctx
        .kernel("scale", &axpb(true, &[]), "main", 1, 12)
        .unwrap();
    let n = 1000u32;
    let bytes = 4 * u64::from(n);
    let buf = ctx.alloc(bytes).unwrap();
    let mut want: Vec<f32> = (0..n).map(|i| i as f32).collect();
    ctx.upload(&buf, 0, &f32_bytes(&want)).unwrap();
    let timestamps = ctx.info().timestamp_bits > 0;
    for round in 0..50u32 {
        // Alternately: a run with a read-back, a plain run, an upload and a download, each with
        // different data, so that a stale staging buffer, descriptor set or query would show.
        let add = round as f32;
        let dispatch = Dispatch {
            kernel: &k,
            buffers: vec![&buf],
            push: axpb_push(n, 1.0, add),
            groups: groups(n),
        };
        for x in &mut want {
            *x += add;
        }
        match round % 4 {
            0 => {
                let at = u64::from(round) * 4;
                let r = ctx
                    .run_with(
                        &[],
                        &[Command::Dispatch(dispatch)],
                        Some((&buf, at, 8)),
                        Timing::Commands,
                    )
                    .unwrap();
                assert_eq!(r.timings.len(), 1);
                let i = round as usize;
                assert_eq!(f32s(&r.read), want[i..i + 2], "round {round}");
            }
            1 => {
                let t = ctx.run(&[dispatch]).unwrap();
                assert!(t[0].end_ns >= t[0].start_ns);
            }
            2 => {
                ctx.run(&[dispatch]).unwrap();
                want = (0..n).map(|i| (i + round) as f32).collect();
                ctx.upload(&buf, 0, &f32_bytes(&want)).unwrap();
            }
            _ => {
                ctx.run(&[dispatch]).unwrap();
                let got = f32s(&ctx.download(&buf, 0, bytes).unwrap());
                assert!(got == want, "round {round}");
            }
        }
    }
    let counts = ctx.object_counts();
    assert_eq!(
        counts,
        ObjectCounts {
            command_buffers: 1,
            fences: 1,
            descriptor_pools: 1,
            query_pools: u64::from(timestamps),
            // One for uploads, one for downloads and read-backs.
            staging_buffers: 2,
            // The first upload, 50 runs, 12 uploads and 12 downloads.
            submissions: 1 + 50 + 12 + 12,
        }
    );
    assert!(ctx.take_validation_messages().is_empty());
}

#[test]
fn pools_grow_to_the_largest_submission_and_stay() {
    let ctx = context();
    let k = ctx
        .kernel("scale", &axpb(true, &[]), "main", 1, 12)
        .unwrap();
    let n = 256u32;
    let buf = ctx.alloc(4 * u64::from(n)).unwrap();
    ctx.upload(&buf, 0, &f32_bytes(&vec![0.0; n as usize]))
        .unwrap();
    let run = |dispatches: u32| {
        let ds: Vec<_> = (0..dispatches)
            .map(|_| Dispatch {
                kernel: &k,
                buffers: vec![&buf],
                push: axpb_push(n, 1.0, 1.0),
                groups: groups(n),
            })
            .collect();
        let t = ctx.run(&ds).unwrap();
        assert_eq!(t.len(), dispatches as usize);
    };
    run(1);
    let small = ctx.object_counts();
    // More sets (and timestamps) than the first pools hold: each pool is replaced once...
    run(300);
    let big = ctx.object_counts();
    assert_eq!(big.descriptor_pools, small.descriptor_pools + 1);
    assert_eq!(
        big.query_pools,
        small.query_pools + small.query_pools.min(1)
    );
    // ...and then serves every smaller run, and runs as large, without growing again.
    for d in [1, 300, 7, 299, 64] {
        run(d);
    }
    let after = ctx.object_counts();
    assert_eq!(after.descriptor_pools, big.descriptor_pools);
    assert_eq!(after.query_pools, big.query_pools);
    assert_eq!(after.command_buffers, 1);
    assert_eq!(after.fences, 1);
    let total: u32 = (0..n).map(|_| 1 + 300 + 1 + 300 + 7 + 299 + 64).sum();
    let got: f32 = f32s(&ctx.download(&buf, 0, 4 * u64::from(n)).unwrap())
        .iter()
        .sum();
    assert_eq!(got, total as f32);
    assert!(ctx.take_validation_messages().is_empty());
}

#[test]
fn staging_buffers_grow_and_large_ones_are_not_kept() {
    let ctx = context();
    let buf = ctx.alloc(16 << 20).unwrap();
    let data = |len: usize, seed: u8| -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    };
    let count = || ctx.object_counts().staging_buffers;
    // Small transfers share one buffer each way.
    for (i, len) in [100usize, 4096, 3, 2000].into_iter().enumerate() {
        let d = data(len, i as u8);
        ctx.upload(&buf, 7, &d).unwrap();
        assert_eq!(ctx.download(&buf, 7, len as u64).unwrap(), d);
    }
    assert_eq!(count(), 2);
    // A larger one replaces the buffer it outgrew, which then serves the smaller ones.
    let d = data(100_000, 9);
    ctx.upload(&buf, 0, &d).unwrap();
    assert_eq!(ctx.download(&buf, 0, d.len() as u64).unwrap(), d);
    assert_eq!(count(), 4);
    ctx.upload(&buf, 1, &d[..10]).unwrap();
    assert_eq!(ctx.download(&buf, 1, 10).unwrap(), &d[..10]);
    assert_eq!(count(), 4);
    // A very large one gets buffers of its own, dropped after it: the next small transfers
    // make small ones again.
    let d = data(12 << 20, 3);
    ctx.upload(&buf, 0, &d).unwrap();
    assert_eq!(ctx.download(&buf, 0, d.len() as u64).unwrap(), d);
    assert_eq!(count(), 6);
    ctx.upload(&buf, 0, &d[..64]).unwrap();
    assert_eq!(ctx.download(&buf, 0, 64).unwrap(), &d[..64]);
    assert_eq!(count(), 8);
    assert!(ctx.take_validation_messages().is_empty());
}
