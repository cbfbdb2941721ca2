//! The runtime end to end on the machine's Vulkan device (lavapipe in CI), with the Khronos
//! validation layer on in every test.

mod common;

use common::*;
use rspirv::spirv::Capability;
use vkad_vk::{
    list_devices, validate_spirv, Command, CopyRegion, Dispatch, FillRegion, Timing, VkError,
};

#[test]
fn list_devices_finds_lavapipe() {
    let devices = list_devices().expect("devices");
    assert!(!devices.is_empty());
    let lvp = devices
        .iter()
        .find(|d| d.name.contains("llvmpipe"))
        .unwrap_or_else(|| panic!("no llvmpipe in {devices:#?}"));
    assert_eq!(lvp.device_type, "cpu");
    assert!(lvp.api_version >= (1, 2, 0), "{lvp:?}");
    assert!(lvp.subgroup_size >= 1, "{lvp:?}");
    assert!(lvp.max_workgroup_size >= 64, "{lvp:?}");
    assert!(lvp.max_storage_buffer_range >= 1 << 20, "{lvp:?}");
    assert!(lvp.max_allocation >= 1 << 20, "{lvp:?}");
    assert!(lvp.timestamp_period_ns > 0.0, "{lvp:?}");
    assert!(lvp.driver.contains("llvmpipe"), "{lvp:?}");
    for (i, d) in devices.iter().enumerate() {
        assert_eq!(d.index, i);
    }
}

#[test]
fn doubles_f32_buffers_of_many_sizes() {
    let ctx = context();
    let k = ctx
        .kernel("double", &axpb(true, &[]), "main", 1, 12)
        .unwrap();
    for n in [1u32, 63, 64, 65, 1000, 100_000] {
        let xs: Vec<f32> = (1..=n).map(|i| i as f32).collect();
        let buf = ctx.alloc(4 * u64::from(n)).unwrap();
        assert_eq!(buf.size(), 4 * u64::from(n));
        ctx.upload(&buf, 0, &f32_bytes(&xs)).unwrap();
        let t = ctx
            .run(&[Dispatch {
                kernel: &k,
                buffers: vec![&buf],
                push: axpb_push(n, 2.0, 0.0),
                groups: groups(n),
            }])
            .unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].name, "double");
        assert!(t[0].end_ns >= t[0].start_ns, "{t:?}");
        let ys = f32s(&ctx.download(&buf, 0, 4 * u64::from(n)).unwrap());
        let want: Vec<f32> = xs.iter().map(|x| x * 2.0).collect();
        assert!(
            ys == want,
            "n = {n}: first difference at {:?}",
            ys.iter().zip(&want).position(|(a, b)| a != b)
        );
    }
    assert!(ctx.take_validation_messages().is_empty());
}

#[test]
fn upload_and_download_odd_sizes_and_offsets() {
    let ctx = context();
    let small = ctx.alloc(1).unwrap();
    assert_eq!(small.size(), 4);
    let buf = ctx.alloc(13).unwrap();
    assert_eq!(buf.size(), 16);
    let pattern: Vec<u8> = (0..16).map(|i| 100 + i as u8).collect();
    ctx.upload(&buf, 0, &pattern).unwrap();
    ctx.upload(&buf, 3, &[1, 2, 3, 4, 5]).unwrap();
    ctx.upload(&buf, 15, &[9]).unwrap();
    ctx.upload(&buf, 16, &[]).unwrap();
    let mut want = pattern.clone();
    want[3..8].copy_from_slice(&[1, 2, 3, 4, 5]);
    want[15] = 9;
    assert_eq!(ctx.download(&buf, 0, 16).unwrap(), want);
    assert_eq!(ctx.download(&buf, 5, 7).unwrap(), want[5..12].to_vec());
    assert_eq!(ctx.download(&buf, 15, 1).unwrap(), vec![9]);
    assert_eq!(ctx.download(&buf, 16, 0).unwrap(), Vec::<u8>::new());
    // Out of range: errors, not panics.
    assert!(matches!(ctx.upload(&buf, 14, &[0; 3]), Err(VkError::Vk(_))));
    assert!(matches!(ctx.download(&buf, 0, 17), Err(VkError::Vk(_))));
    // A length no host could reserve is still a range error.
    assert!(matches!(
        ctx.download(&buf, 0, u64::MAX),
        Err(VkError::Vk(_))
    ));
    assert!(matches!(
        ctx.download(&buf, u64::MAX, 2),
        Err(VkError::Vk(_))
    ));
    // An odd-sized upload that spans many pages.
    let big: Vec<u8> = (0..1_000_003u32).map(|i| (i * 7 % 251) as u8).collect();
    let b2 = ctx.alloc(big.len() as u64).unwrap();
    ctx.upload(&b2, 0, &big).unwrap();
    assert_eq!(ctx.download(&b2, 0, big.len() as u64).unwrap(), big);
}

#[test]
fn buffers_made_with_their_contents_hold_them() {
    let ctx = context();
    let k = ctx
        .kernel("double", &axpb(true, &[]), "main", 1, 12)
        .unwrap();
    for n in [1u32, 5, 250_001] {
        let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 - 3.5).collect();
        let bytes = f32_bytes(&xs);
        // Room for more than the data: the rest is the buffer's, unspecified.
        let buf = ctx.alloc_init(bytes.len() as u64 + 8, &bytes).unwrap();
        assert_eq!(ctx.download(&buf, 0, bytes.len() as u64).unwrap(), bytes);
        // The device sees the contents too (not only a download through staging).
        ctx.run(&[Dispatch {
            kernel: &k,
            buffers: vec![&buf],
            push: axpb_push(n, 2.0, 0.0),
            groups: groups(n),
        }])
        .unwrap();
        let ys = f32s(&ctx.download(&buf, 0, bytes.len() as u64).unwrap());
        let want: Vec<f32> = xs.iter().map(|x| x * 2.0).collect();
        assert!(ys == want, "n = {n}");
    }
    let empty = ctx.alloc_init(8, &[]).unwrap();
    assert_eq!(empty.size(), 8);
    // More data than room: an error, not a panic.
    assert!(matches!(ctx.alloc_init(4, &[0; 5]), Err(VkError::Vk(_))));
    assert!(ctx.take_validation_messages().is_empty());
}

#[test]
fn dependent_dispatches_see_each_others_writes() {
    let ctx = context();
    let inplace = ctx
        .kernel("scale", &axpb(true, &[]), "main", 1, 12)
        .unwrap();
    let copy = ctx
        .kernel("axpb", &axpb(false, &[]), "main", 2, 12)
        .unwrap();
    let n = 50_000u32;
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let a = ctx.alloc(4 * u64::from(n)).unwrap();
    let b = ctx.alloc(4 * u64::from(n)).unwrap();
    ctx.upload(&a, 0, &f32_bytes(&xs)).unwrap();
    // a = 2a; b = a + 1; a = 3b; b = a - 5  (each reads what the previous wrote). Besides the
    // values, the validation layer's synchronization validation checks the barriers: without
    // the one between dispatches, `run` fails with SYNC-HAZARD-READ-AFTER-WRITE.
    let t = ctx
        .run(&[
            Dispatch {
                kernel: &inplace,
                buffers: vec![&a],
                push: axpb_push(n, 2.0, 0.0),
                groups: groups(n),
            },
            Dispatch {
                kernel: &copy,
                buffers: vec![&a, &b],
                push: axpb_push(n, 1.0, 1.0),
                groups: groups(n),
            },
            Dispatch {
                kernel: &copy,
                buffers: vec![&b, &a],
                push: axpb_push(n, 3.0, 0.0),
                groups: groups(n),
            },
            Dispatch {
                kernel: &copy,
                buffers: vec![&a, &b],
                push: axpb_push(n, 1.0, -5.0),
                groups: groups(n),
            },
        ])
        .unwrap();
    let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["scale", "axpb", "axpb", "axpb"]);
    for x in &t {
        assert!(x.end_ns >= x.start_ns, "{t:?}");
    }
    assert!(t.iter().any(|x| x.end_ns > 0), "no timestamps: {t:?}");
    let got_a = f32s(&ctx.download(&a, 0, 4 * u64::from(n)).unwrap());
    let got_b = f32s(&ctx.download(&b, 0, 4 * u64::from(n)).unwrap());
    for (i, x) in xs.iter().enumerate() {
        let want_a = (x * 2.0 + 1.0) * 3.0;
        assert_eq!(got_a[i], want_a, "a[{i}]");
        assert_eq!(got_b[i], want_a - 5.0, "b[{i}]");
    }
}

#[test]
fn pipelines_are_cached_by_module_entry_and_layout() {
    let ctx = context();
    let m = axpb(true, &[]);
    let k1 = ctx.kernel("one", &m, "main", 1, 12).unwrap();
    let k2 = ctx.kernel("two", &m, "main", 1, 12).unwrap();
    assert!(k1.same_pipeline(&k2));
    assert_eq!((k1.name(), k2.name()), ("one", "two"));
    assert_eq!(ctx.cached_kernels(), 1);
    let k3 = ctx
        .kernel("three", &axpb(false, &[]), "main", 2, 12)
        .unwrap();
    assert!(!k3.same_pipeline(&k1));
    assert_eq!(ctx.cached_kernels(), 2);
}

/// Threads make pipelines at once (the context's cache is not held while one is made): every
/// thread gets the one pipeline kept per module, and the kernels run.
#[test]
fn threads_make_pipelines_at_once() {
    let ctx = context();
    let mut mods: Vec<(Vec<u32>, u32)> = Vec::new();
    for extra in [&[][..], &[Capability::Int64], &[Capability::Float64]] {
        mods.push((axpb(true, extra), 1));
        mods.push((axpb(false, extra), 2));
    }
    let before = ctx.cached_kernels();
    let threads = 4;
    let made: Vec<Vec<vkad_vk::Kernel>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (ctx, mods) = (&ctx, &mods);
                s.spawn(move || {
                    // Thread t makes the modules starting at the t-th: each module is asked
                    // for by several threads at about the same time.
                    (0..mods.len())
                        .map(|i| {
                            let (m, b) = &mods[(i + t) % mods.len()];
                            ctx.kernel("k", m, "main", *b, 12).unwrap()
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(ctx.cached_kernels(), before + mods.len());
    for (i, (m, b)) in mods.iter().enumerate() {
        let kept = ctx.kernel("kept", m, "main", *b, 12).unwrap();
        for (t, ks) in made.iter().enumerate() {
            let k = &ks[(i + mods.len() - t) % mods.len()];
            assert!(k.same_pipeline(&kept), "module {i}, thread {t}");
        }
    }
    let n = 1000u32;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let buf = ctx.alloc(4 * u64::from(n)).unwrap();
    ctx.upload(&buf, 0, &f32_bytes(&xs)).unwrap();
    // Module 2: in place, with the Int64 capability declared.
    ctx.run(&[Dispatch {
        kernel: &made[3][(2 + mods.len() - 3) % mods.len()],
        buffers: vec![&buf],
        push: axpb_push(n, 3.0, 1.0),
        groups: groups(n),
    }])
    .unwrap();
    let ys = f32s(&ctx.download(&buf, 0, 4 * u64::from(n)).unwrap());
    let want: Vec<f32> = xs.iter().map(|x| x * 3.0 + 1.0).collect();
    assert_eq!(ys, want);
}

#[test]
fn bad_modules_and_arguments_are_errors() {
    let ctx = context();
    // Not SPIR-V at all (rejected before any driver sees it, even without spirv-val).
    ctx.set_validate_spirv(false);
    let e = ctx
        .kernel("junk", &[1, 2, 3, 4, 5, 6, 7], "main", 1, 0)
        .unwrap_err();
    assert!(e.to_string().contains("magic"), "{e}");
    let e = ctx.kernel("empty", &[], "main", 1, 0).unwrap_err();
    assert!(matches!(e, VkError::Vk(_)), "{e}");
    // A well-formed module without the entry point asked for.
    let e = ctx
        .kernel("k", &axpb(true, &[]), "nope", 1, 12)
        .unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    let e = ctx
        .kernel("k", &axpb(true, &[]), "ma\0in", 1, 12)
        .unwrap_err();
    assert!(matches!(e, VkError::Vk(_)), "{e}");
    // A structurally fine module that spirv-val rejects: truncated after the first function
    // instruction's header (the body is cut), with the entry point kept.
    ctx.set_validate_spirv(true);
    let mut m = axpb(true, &[]);
    let ret_pos = m.len() - 2; // OpReturn, OpFunctionEnd
    m.truncate(ret_pos);
    let e = ctx.kernel("cut", &m, "main", 1, 12).unwrap_err();
    assert!(e.to_string().contains("spirv-val"), "{e}");
    assert!(validate_spirv(&m).is_err());
    assert!(validate_spirv(&axpb(true, &[])).is_ok());
    // Bad layouts.
    assert!(ctx.kernel("k", &axpb(true, &[]), "main", 1, 13).is_err());
    assert!(ctx.kernel("k", &axpb(true, &[]), "main", 1, 256).is_err());
    // Dispatches that do not match the kernel.
    let k = ctx.kernel("k", &axpb(true, &[]), "main", 1, 12).unwrap();
    let buf = ctx.alloc(64).unwrap();
    let wrong_buffers = ctx.run(&[Dispatch {
        kernel: &k,
        buffers: vec![&buf, &buf],
        push: axpb_push(16, 1.0, 0.0),
        groups: [1, 1, 1],
    }]);
    assert!(
        matches!(wrong_buffers, Err(VkError::Vk(_))),
        "{wrong_buffers:?}"
    );
    let wrong_push = ctx.run(&[Dispatch {
        kernel: &k,
        buffers: vec![&buf],
        push: vec![0; 8],
        groups: [1, 1, 1],
    }]);
    assert!(matches!(wrong_push, Err(VkError::Vk(_))), "{wrong_push:?}");
    let too_many = ctx.run(&[Dispatch {
        kernel: &k,
        buffers: vec![&buf],
        push: axpb_push(16, 1.0, 0.0),
        groups: [u32::MAX, 1, 1],
    }]);
    assert!(
        matches!(too_many, Err(VkError::Unsupported { .. })),
        "{too_many:?}"
    );
    // A buffer or kernel of another context.
    let other = context();
    let foreign = other.alloc(64).unwrap();
    assert!(ctx.upload(&foreign, 0, &[0; 4]).is_err());
    let r = ctx.run(&[Dispatch {
        kernel: &k,
        buffers: vec![&foreign],
        push: axpb_push(16, 1.0, 0.0),
        groups: [1, 1, 1],
    }]);
    assert!(r.is_err());
    // Nothing of the above reached the validation layer.
    assert!(ctx.take_validation_messages().is_empty());
    // And the context still works.
    ctx.upload(&buf, 0, &f32_bytes(&[1.5; 16])).unwrap();
    ctx.run(&[Dispatch {
        kernel: &k,
        buffers: vec![&buf],
        push: axpb_push(16, 2.0, 0.5),
        groups: [1, 1, 1],
    }])
    .unwrap();
    assert_eq!(f32s(&ctx.download(&buf, 0, 64).unwrap()), vec![3.5; 16]);
}

#[test]
fn absurd_allocations_are_out_of_memory() {
    let ctx = context();
    for bytes in [1u64 << 50, u64::MAX] {
        match ctx.alloc(bytes) {
            Err(VkError::OutOfMemory(_)) => {}
            other => panic!("alloc({bytes}): {other:?}"),
        }
    }
    // Just over the largest allowed allocation.
    let max = ctx.info().max_allocation;
    assert!(matches!(ctx.alloc(max + 4), Err(VkError::OutOfMemory(_))));
    // The context is still usable.
    let b = ctx.alloc(8).unwrap();
    ctx.upload(&b, 0, &[7; 8]).unwrap();
    assert_eq!(ctx.download(&b, 0, 8).unwrap(), vec![7; 8]);
}

#[test]
fn validation_layer_messages_become_errors() {
    let ctx = context();
    // The module is valid SPIR-V for Vulkan, but declares a capability whose device feature
    // (shaderImageGatherExtended) vkad does not enable: only the validation layer notices.
    ctx.set_validate_spirv(false);
    let m = axpb(true, &[Capability::ImageGatherExtended]);
    match ctx.kernel("gather", &m, "main", 1, 12) {
        Err(VkError::Validation(msg)) => {
            assert!(
                msg.contains("ImageGatherExtended") || msg.contains("shaderImageGatherExtended"),
                "{msg}"
            )
        }
        other => panic!("expected a validation error, got {other:?}"),
    }
    assert!(ctx.take_validation_messages().is_empty());
    // A correct kernel afterwards runs without messages.
    let k = ctx.kernel("ok", &axpb(true, &[]), "main", 1, 12).unwrap();
    let buf = ctx.alloc(16).unwrap();
    ctx.upload(&buf, 0, &f32_bytes(&[1.0, 2.0, 3.0, 4.0]))
        .unwrap();
    ctx.run(&[Dispatch {
        kernel: &k,
        buffers: vec![&buf],
        push: axpb_push(4, -1.0, 0.0),
        groups: [1, 1, 1],
    }])
    .unwrap();
    assert_eq!(
        f32s(&ctx.download(&buf, 0, 16).unwrap()),
        vec![-1.0, -2.0, -3.0, -4.0]
    );
}

#[test]
fn device_info_matches_the_chosen_device() {
    let ctx = context();
    let devices = list_devices().unwrap();
    let info = ctx.info();
    let listed = &devices[info.index];
    assert_eq!(listed.name, info.name);
    assert_eq!(listed.api_version, info.api_version);
    // Explicit selection by index, and a missing index.
    let again = vkad_vk::Context::new(&vkad_vk::ContextOptions {
        device: Some(info.index),
        ..options()
    })
    .unwrap();
    assert_eq!(again.info().name, info.name);
    let missing = vkad_vk::Context::new(&vkad_vk::ContextOptions {
        device: Some(devices.len()),
        ..options()
    });
    assert!(
        matches!(missing, Err(VkError::NoDevice(_))),
        "{:?}",
        missing.err()
    );
}

#[test]
fn buffers_and_kernels_may_outlive_the_context() {
    let ctx = context();
    let k = ctx.kernel("k", &axpb(true, &[]), "main", 1, 12).unwrap();
    let b = ctx.alloc(1024).unwrap();
    drop(ctx);
    // The device is destroyed only after these (the layer would report leaks or use after free).
    drop(k);
    drop(b);
}

#[test]
fn transfers_larger_than_one_staging_chunk() {
    // Uploads and downloads are staged 64 MiB at a time: cross that boundary at odd offsets.
    let ctx = context();
    let len = (64 << 20) + 100;
    let data: Vec<u8> = (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let buf = ctx.alloc(len as u64 + 8192).unwrap();
    ctx.upload(&buf, 5, &data).unwrap();
    let back = ctx.download(&buf, 5, len as u64).unwrap();
    assert!(
        back == data,
        "first difference at {:?}",
        back.iter().zip(&data).position(|(a, b)| a != b)
    );
    let tail = ctx.download(&buf, (64 << 20) - 3, 50).unwrap();
    assert_eq!(tail, data[(64 << 20) - 8..(64 << 20) + 42].to_vec());
}

#[test]
fn one_context_serves_many_threads() {
    let ctx = context();
    let k = ctx.kernel("axpb", &axpb(true, &[]), "main", 1, 12).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let (ctx, k) = (&ctx, &k);
            s.spawn(move || {
                let n = 4096u32;
                let buf = ctx.alloc(4 * u64::from(n)).unwrap();
                for round in 0..5 {
                    let xs: Vec<f32> = (0..n).map(|i| (i + t * 7 + round) as f32).collect();
                    ctx.upload(&buf, 0, &f32_bytes(&xs)).unwrap();
                    ctx.run(&[Dispatch {
                        kernel: k,
                        buffers: vec![&buf],
                        push: axpb_push(n, 0.5, t as f32),
                        groups: groups(n),
                    }])
                    .unwrap();
                    let ys = f32s(&ctx.download(&buf, 0, 4 * u64::from(n)).unwrap());
                    let want: Vec<f32> = xs.iter().map(|x| x * 0.5 + t as f32).collect();
                    assert!(ys == want, "thread {t} round {round}");
                }
            });
        }
    });
    assert!(ctx.take_validation_messages().is_empty());
}

#[test]
fn run_with_writes_before_and_reads_back_in_one_submission() {
    let ctx = context();
    let k = ctx
        .kernel("scale", &axpb(true, &[]), "main", 1, 12)
        .unwrap();
    let n = 1000u32;
    let buf = ctx.alloc(4 * u64::from(n)).unwrap();
    ctx.upload(&buf, 0, &f32_bytes(&vec![7.0; n as usize]))
        .unwrap();
    // The inline write replaces elements 10..20 before the kernel doubles everything; the
    // read-back returns elements 8..24 after it. The validation layer's synchronization
    // checks (on in every test) also check the barriers around the write and the read.
    let patch = f32_bytes(&(0..10).map(|i| i as f32).collect::<Vec<_>>());
    let r = ctx
        .run_with(
            &[(&buf, 40, &patch)],
            &[Command::Dispatch(Dispatch {
                kernel: &k,
                buffers: vec![&buf],
                push: axpb_push(n, 2.0, 0.0),
                groups: groups(n),
            })],
            Some((&buf, 32, 64)),
            Timing::Commands,
        )
        .unwrap();
    let (t, back) = (r.timings, r.read);
    assert_eq!(t.len(), 1);
    let mut want = vec![14.0, 14.0];
    want.extend((0..10).map(|i| 2.0 * i as f32));
    want.extend([14.0; 4]);
    assert_eq!(f32s(&back), want);
    // Misaligned or oversized writes and a read outside the buffer are errors.
    let d = || {
        Command::Dispatch(Dispatch {
            kernel: &k,
            buffers: vec![&buf],
            push: axpb_push(n, 1.0, 0.0),
            groups: groups(n),
        })
    };
    assert!(ctx
        .run_with(&[(&buf, 2, &patch)], &[d()], None, Timing::Off)
        .is_err());
    let big = vec![0u8; 65540];
    let large = ctx.alloc(70_000).unwrap();
    assert!(ctx
        .run_with(&[(&large, 0, &big)], &[d()], None, Timing::Off)
        .is_err());
    assert!(ctx
        .run_with(&[], &[d()], Some((&buf, 3996, 8)), Timing::Off)
        .is_err());
    assert!(ctx.take_validation_messages().is_empty());
}

#[test]
fn copies_and_fills_run_in_order_with_the_dispatches_around_them() {
    let ctx = context();
    let k = ctx
        .kernel("scale", &axpb(true, &[]), "main", 1, 12)
        .unwrap();
    let n = 1000u32;
    let a = ctx.alloc(4 * u64::from(n)).unwrap();
    let b = ctx.alloc(4 * u64::from(n)).unwrap();
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    ctx.upload(&a, 0, &f32_bytes(&xs)).unwrap();
    ctx.upload(&b, 0, &f32_bytes(&vec![-1.0; n as usize]))
        .unwrap();
    // b[0..100] = 3; b[100..200] = a[0..100]; b *= 2; a[500..550] = b[0..50]; then the
    // dispatch doubles a, so it reads the copy's result. Each command depends on the one
    // before it (the validation layer's synchronization checks are on).
    let scale = |buf| {
        Command::Dispatch(Dispatch {
            kernel: &k,
            buffers: vec![buf],
            push: axpb_push(n, 2.0, 0.0),
            groups: groups(n),
        })
    };
    let commands = [
        Command::Fill(FillRegion {
            dst: &b,
            offset: 0,
            size: 400,
            word: 3.0f32.to_bits(),
        }),
        Command::Copy(CopyRegion {
            src: &a,
            src_offset: 0,
            dst: &b,
            dst_offset: 400,
            size: 400,
        }),
        scale(&b),
        Command::Copy(CopyRegion {
            src: &b,
            src_offset: 0,
            dst: &a,
            dst_offset: 2000,
            size: 200,
        }),
        scale(&a),
    ];
    let r = ctx
        .run_with(
            &[],
            &commands,
            Some((&b, 0, 4 * u64::from(n))),
            Timing::Commands,
        )
        .unwrap();
    let (t, back) = (r.timings, r.read);
    let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["fill", "copy", "scale", "copy", "scale"]);
    assert_eq!(t[0].groups, [0; 3]);
    assert_eq!((t[0].bytes, t[1].bytes), (400, 800));
    // Each command starts after the one before it has ended (the barriers), and the run's
    // device time spans them all.
    assert!(t.windows(2).all(|w| w[1].start_ns >= w[0].end_ns), "{t:?}");
    assert_eq!(r.device_ns, t[4].end_ns - t[0].start_ns, "{t:?}");
    let mut want_b = vec![6.0f32; 100];
    want_b.extend((0..100).map(|i| 2.0 * i as f32));
    want_b.extend(vec![-2.0; 800]);
    assert_eq!(f32s(&back), want_b);
    let got_a = f32s(&ctx.download(&a, 0, 4 * u64::from(n)).unwrap());
    let want_a: Vec<f32> = (0..n as usize)
        .map(|i| {
            if (500..550).contains(&i) {
                12.0
            } else {
                2.0 * i as f32
            }
        })
        .collect();
    assert_eq!(got_a, want_a);
    // Ranges outside their buffer, overlapping ranges of one buffer and misaligned fills are
    // errors, before anything is recorded.
    let copy = |src_offset, dst, dst_offset, size| {
        Command::Copy(CopyRegion {
            src: &a,
            src_offset,
            dst,
            dst_offset,
            size,
        })
    };
    assert!(ctx
        .run_with(&[], &[copy(3900, &b, 0, 200)], None, Timing::Off)
        .is_err());
    assert!(ctx
        .run_with(&[], &[copy(0, &b, 3900, 200)], None, Timing::Off)
        .is_err());
    assert!(ctx
        .run_with(&[], &[copy(0, &a, 100, 200)], None, Timing::Off)
        .is_err());
    assert!(ctx
        .run_with(&[], &[copy(0, &b, 0, 0)], None, Timing::Off)
        .is_err());
    ctx.run_with(&[], &[copy(0, &a, 200, 200)], None, Timing::Off)
        .unwrap();
    let fill = |offset, size| {
        Command::Fill(FillRegion {
            dst: &a,
            offset,
            size,
            word: 0,
        })
    };
    // One timestamp pair for the whole submission: its span, and no per-command timings.
    let r = ctx
        .run_with(&[], &commands, None, Timing::Submission)
        .unwrap();
    assert!(r.timings.is_empty() && r.device_ns > 0, "{r:?}");
    assert!(ctx.run_with(&[], &[fill(2, 8)], None, Timing::Off).is_err());
    assert!(ctx.run_with(&[], &[fill(0, 6)], None, Timing::Off).is_err());
    assert!(ctx
        .run_with(&[], &[fill(3996, 8)], None, Timing::Off)
        .is_err());
    assert!(ctx.take_validation_messages().is_empty());
}
