//! The embedding API (`vkad_spirv::Program`): an entry compiled once and called 100 times with
//! different inputs (host values and device buffers, results on the host and on the device)
//! generates no kernel after the first call, and every result is the interpreter's; its typed
//! errors.

mod common;

use vkad_core::prim::PrimValue;
use vkad_core::testing::compare_values;
use vkad_core::value::Value;
use vkad_spirv::error::{Error, RuntimeKind};
use vkad_spirv::{Arg, CallOptions, DeviceArray, Out, Program, Source, TimelinePoint};

#[test]
fn an_entry_called_100_times_through_the_api_makes_its_kernels_once() {
    let ctx = common::ctx();
    let c =
        vkad_core::compile("t.fut", common::LOSS_SRC).unwrap_or_else(|e| panic!("{}", e.render()));
    let program = Program::compile(&ctx, &c).expect("compiled");
    let main = program.entry("main").expect("entry");
    let mut after_first = None;
    for k in 0..100u64 {
        // Sizes from 1 to 3000, every third call on a device buffer with device results.
        let n = 1 + (k as usize * 997) % 3000;
        let xs = common::f64s(n, k);
        let w = PrimValue::F64(0.5 + k as f64 / 100.0);
        let want = c
            .run_interp("main", vec![Value::Array(xs.clone()), Value::Scalar(w)])
            .expect("interpreter");
        let on_device = k % 3 == 0;
        let x_arg = if on_device {
            Arg::Device(DeviceArray::from_host(&ctx, &xs).expect("upload"))
        } else {
            Arg::Host(Value::Array(xs))
        };
        let opts = if on_device {
            CallOptions::default().device_results()
        } else {
            CallOptions::default()
        };
        let outs = main
            .call_with(&ctx, vec![x_arg, Arg::Host(Value::Scalar(w))], &opts)
            .unwrap_or_else(|e| panic!("call {k}: {e}"))
            .outs;
        if on_device {
            assert!(
                matches!(&outs[..], [Out::Host(_), Out::Device(_), Out::Device(_)]),
                "call {k}: {outs:?}"
            );
        }
        let got: Vec<Value> = outs
            .iter()
            .map(|o| o.to_host(&ctx).expect("download"))
            .collect();
        let ms = compare_values(&got, &want);
        assert!(ms.is_empty(), "call {k} (n = {n}): {ms:?}");
        let made = (program.kernels_made(), ctx.cached_kernels());
        match after_first {
            None => after_first = Some(made),
            Some(first) => assert_eq!(made, first, "call {k} generated kernels"),
        }
    }
    let (made, _) = after_first.expect("ran");
    assert!(made > 0, "the first call made the kernels");
}

#[test]
fn programs_compile_from_source_text_and_name_their_errors() {
    let ctx = common::ctx();
    let src = "entry twice (x: i32) : i32 = x + x";
    let program = Program::compile(
        &ctx,
        Source::Text {
            name: "t.fut",
            text: src,
        },
    )
    .expect("compiled");
    assert_eq!(program.entry_names().collect::<Vec<_>>(), ["twice"]);
    let outs = program
        .entry("twice")
        .expect("entry")
        .call(&ctx, vec![Arg::Host(Value::Scalar(PrimValue::I32(21)))])
        .expect("called");
    assert!(
        matches!(&outs[..], [Out::Host(Value::Scalar(PrimValue::I32(42)))]),
        "{outs:?}"
    );
    match program.entry("thrice") {
        Err(Error::Runtime {
            kind: RuntimeKind::Arguments,
            ..
        }) => {}
        Err(e) => panic!("wrong error {e:?}"),
        Ok(_) => panic!("no error for a missing entry"),
    }
    match Program::compile(
        &ctx,
        Source::Text {
            name: "bad.fut",
            text: "entry f (x: i32) : i32 = x +",
        },
    ) {
        Err(Error::Compile(e)) => assert!(e.render().contains("bad.fut"), "{}", e.render()),
        Err(e) => panic!("wrong error {e:?}"),
        Ok(_) => panic!("bad source compiled"),
    }
}

#[test]
fn timeline_semaphores_need_the_device_feature() {
    // A context of its own: the feature is cleared on it.
    let mut ctx = vkad_vk::Context::new(&vkad_vk::ContextOptions {
        device: None,
        validation: true,
        pipeline_cache: vkad_vk::PipelineCacheMode::Off,
    })
    .expect("a Vulkan device");
    ctx.restrict_info(|i| i.timeline_semaphore = false);
    let program = Program::compile(
        &ctx,
        Source::Text {
            name: "t.fut",
            text: "entry twice (x: i32) : i32 = x + x",
        },
    )
    .expect("compiled");
    let twice = program.entry("twice").expect("entry");
    // SAFETY: the call is refused before the (null) semaphore would be used.
    let opts = unsafe {
        CallOptions::default().signal(TimelinePoint {
            semaphore: vkad_vk::ash::vk::Semaphore::null(),
            value: 1,
        })
    };
    let arg = || vec![Arg::Host(Value::Scalar(PrimValue::I32(1)))];
    match twice.call_with(&ctx, arg(), &opts) {
        Err(e @ Error::NotSupported { .. }) => {
            assert!(e.to_string().contains("timelineSemaphore"), "{e}")
        }
        Err(e) => panic!("wrong error {e:?}"),
        Ok(_) => panic!("signalled without the feature"),
    }
    // Another context than the program's is refused too.
    match twice.call(&common::ctx(), arg()) {
        Err(Error::Runtime {
            kind: RuntimeKind::Arguments,
            ..
        }) => {}
        Err(e) => panic!("wrong error {e:?}"),
        Ok(_) => panic!("ran on another context"),
    }
}
