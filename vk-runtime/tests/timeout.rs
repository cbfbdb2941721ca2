//! A kernel that never finishes gives VkError::Timeout, not a hang. (Its own test binary: the
//! hung submission keeps a driver thread busy until the process exits.)

mod common;

use common::*;
use std::time::Instant;
use vkad_vk::{Dispatch, VkError};

#[test]
fn a_hung_kernel_times_out() {
    let ctx = context();
    ctx.set_timeout(1);
    let k = ctx.kernel("spin", &spin(), "main", 1, 0).unwrap();
    let buf = ctx.alloc(8).unwrap();
    ctx.upload(&buf, 0, &f32_bytes(&[0.0, 0.0])).unwrap();
    let t0 = Instant::now();
    let r = ctx.run(&[Dispatch {
        kernel: &k,
        buffers: vec![&buf],
        push: vec![],
        groups: [65535, 65535, 1],
    }]);
    assert!(matches!(r, Err(VkError::Timeout(1))), "{r:?}");
    assert!(t0.elapsed().as_secs_f64() < 30.0);
    // The device is still busy: later work is refused at once rather than queued behind it.
    let again = ctx.download(&buf, 0, 8);
    assert!(matches!(again, Err(VkError::Timeout(_))), "{again:?}");
    // Dropping everything leaks what the hung submission may still use, without hanging.
    drop(buf);
    drop(k);
    drop(ctx);
}
