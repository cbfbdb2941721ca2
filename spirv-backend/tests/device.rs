//! Device-resident arguments and results (`run_entry_device`) and module recording
//! (`compile_entry`).

mod common;

use std::sync::Arc;
use vkad_core::prim::{IntType, PrimType, PrimValue};
use vkad_core::value::{ArrayValue, Buffer as HBuf, Value};
use vkad_spirv::error::{Error, RuntimeKind};
use vkad_spirv::{compile_entry, run_entry_device, Arg, DeviceArray, Out};

const SRC: &str = "
entry twice [n] (xs: [n]i32) : [n]i32 = map (\\x -> x * 2) xs
entry sum [n] (xs: [n]i32) : i32 = reduce (+) 0 xs
entry same [n] (xs: [n]i32) : [n]i32 = xs
";

fn i32s(xs: &[i32]) -> ArrayValue {
    let mut b = HBuf::with_capacity(PrimType::Int(IntType::I32), xs.len());
    for &x in xs {
        b.push(PrimValue::I32(x));
    }
    ArrayValue {
        shape: vec![xs.len()],
        data: b,
    }
}

#[test]
fn device_in_device_out_chains_without_host_copies() {
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", SRC).unwrap();
    let input = DeviceArray::from_host(&ctx, &i32s(&[1, -2, 3, 40])).unwrap();
    let out = run_entry_device(&ctx, &c, "twice", vec![Arg::Device(input.clone())]).unwrap();
    let Out::Device(d) = &out[0] else {
        panic!("expected a device result")
    };
    assert_eq!(d.shape, vec![4]);
    assert_eq!(d.download(&ctx).unwrap(), i32s(&[2, -4, 6, 80]));
    // The result feeds the next run directly.
    let s = run_entry_device(&ctx, &c, "sum", vec![Arg::Device(d.clone())]).unwrap();
    assert!(matches!(
        &s[0],
        Out::Host(Value::Scalar(PrimValue::I32(84)))
    ));
    // The input is untouched; an entry returning its argument returns the same buffer.
    assert_eq!(input.download(&ctx).unwrap(), i32s(&[1, -2, 3, 40]));
    let r = run_entry_device(&ctx, &c, "same", vec![Arg::Device(input.clone())]).unwrap();
    let Out::Device(r) = &r[0] else {
        panic!("expected a device result")
    };
    assert!(Arc::ptr_eq(&r.buffer, &input.buffer));
    // Host arguments are accepted too, with array results left on the device.
    let h = run_entry_device(&ctx, &c, "twice", vec![Arg::Host(Value::Array(i32s(&[5])))]).unwrap();
    assert_eq!(h[0].to_host(&ctx).unwrap(), Value::Array(i32s(&[10])));
}

#[test]
fn device_arguments_are_checked() {
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", SRC).unwrap();
    let small = DeviceArray::from_host(&ctx, &i32s(&[1, 2])).unwrap();
    let too_long = DeviceArray {
        shape: vec![1000],
        ..small.clone()
    };
    let e = run_entry_device(&ctx, &c, "twice", vec![Arg::Device(too_long)]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Runtime {
                kind: RuntimeKind::Arguments,
                ..
            }
        ) && e.to_string().contains("needs 4000 bytes"),
        "{e}"
    );
    let wrong_type = DeviceArray {
        elem: PrimType::Int(IntType::I64),
        shape: vec![1],
        ..small
    };
    let e = run_entry_device(&ctx, &c, "twice", vec![Arg::Device(wrong_type)]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Runtime {
                kind: RuntimeKind::Arguments,
                ..
            }
        ) && e.to_string().contains("expected []i32"),
        "{e}"
    );
}

#[test]
fn compile_entry_records_the_modules_made() {
    let ctx = common::ctx();
    let c = vkad_core::compile("t.fut", SRC).unwrap();
    let (vals, mods) =
        compile_entry(&ctx, &c, "sum", vec![Value::Array(i32s(&[1, 2, 3]))]).unwrap();
    assert_eq!(vals, vec![Value::Scalar(PrimValue::I32(6))]);
    assert!(!mods.is_empty());
    for m in &mods {
        assert!(m.name.starts_with("reduce/"), "{}", m.name);
        assert!(
            m.loc.as_deref().unwrap_or("").starts_with("t.fut:3:"),
            "{m:?}"
        );
        vkad_vk::validate_spirv(&m.words).unwrap();
    }
    let dir = std::env::temp_dir().join(format!("vkad-record-{}", std::process::id()));
    let written = vkad_spirv::write_modules(&dir, "sum", &mods).unwrap();
    assert_eq!(written.len(), mods.len() + 1);
    let index = std::fs::read_to_string(dir.join("index.txt")).unwrap();
    assert!(index.contains("[0_reduce-"), "{index}");
    let _ = std::fs::remove_dir_all(&dir);
}
