//! Hand-written compute kernels for the runtime tests, built with rspirv so that each test
//! says what its shader does.

#![allow(dead_code)] // each test binary uses a subset

use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, MemoryModel, SelectionControl, StorageClass,
};
use vkad_vk::{Context, ContextOptions, PipelineCacheMode};

/// Workgroup size of the test kernels.
pub const LOCAL: u32 = 64;

/// What the tests' contexts are made with: the default device, the validation layer on, and
/// no pipeline cache on disk (tests do not write to the user's cache directory; the tests of
/// the cache give it a directory of their own).
pub fn options() -> ContextOptions {
    ContextOptions {
        device: None,
        validation: true,
        pipeline_cache: PipelineCacheMode::Off,
    }
}

/// A context on the default device with the validation layer on, as every test uses.
pub fn context() -> Context {
    context_with(&options())
}

/// A context made with `opts`.
pub fn context_with(opts: &ContextOptions) -> Context {
    Context::new(opts)
    .expect("a Vulkan device with the validation layer (apt install mesa-vulkan-drivers libvulkan1 vulkan-validationlayers)")
}

/// `y[i] = x[i] * a + b` for `i < n`, SPIR-V 1.3, GLSL450 memory model, local size 64.
/// Push constants: `{ n: u32, a: f32, b: f32 }` (12 bytes). With `in_place` there is one
/// buffer (binding 0 is both x and y), otherwise x is binding 0 and y is binding 1.
/// `extra` capabilities are declared (to provoke validation errors).
pub fn axpb(in_place: bool, extra: &[Capability]) -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 3);
    b.capability(Capability::Shader);
    for &c in extra {
        b.capability(c);
    }
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);

    let void = b.type_void();
    let u32t = b.type_int(32, 0);
    let f32t = b.type_float(32, None);
    let boolt = b.type_bool();
    let uvec3 = b.type_vector(u32t, 3);
    let c0 = b.constant_bit32(u32t, 0);
    let c1 = b.constant_bit32(u32t, 1);
    let c2 = b.constant_bit32(u32t, 2);

    // Storage buffers: struct { float data[]; }.
    let arr = b.type_runtime_array(f32t);
    b.decorate(arr, Decoration::ArrayStride, [Operand::LiteralBit32(4)]);
    let block = b.type_struct([arr]);
    b.decorate(block, Decoration::Block, []);
    b.member_decorate(block, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
    let block_ptr = b.type_pointer(None, StorageClass::StorageBuffer, block);
    let elem_ptr = b.type_pointer(None, StorageClass::StorageBuffer, f32t);
    let nbuf = if in_place { 1 } else { 2 };
    let bufs: Vec<u32> = (0..nbuf)
        .map(|i| {
            let v = b.variable(block_ptr, None, StorageClass::StorageBuffer, None);
            b.decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
            b.decorate(v, Decoration::Binding, [Operand::LiteralBit32(i)]);
            v
        })
        .collect();

    // Push constants: struct { uint n; float a; float b; }.
    let pc = b.type_struct([u32t, f32t, f32t]);
    b.decorate(pc, Decoration::Block, []);
    for (m, off) in [0u32, 4, 8].into_iter().enumerate() {
        b.member_decorate(
            pc,
            m as u32,
            Decoration::Offset,
            [Operand::LiteralBit32(off)],
        );
    }
    let pc_ptr = b.type_pointer(None, StorageClass::PushConstant, pc);
    let pc_u32_ptr = b.type_pointer(None, StorageClass::PushConstant, u32t);
    let pc_f32_ptr = b.type_pointer(None, StorageClass::PushConstant, f32t);
    let pcv = b.variable(pc_ptr, None, StorageClass::PushConstant, None);

    let in_ptr = b.type_pointer(None, StorageClass::Input, uvec3);
    let gid = b.variable(in_ptr, None, StorageClass::Input, None);
    b.decorate(
        gid,
        Decoration::BuiltIn,
        [Operand::BuiltIn(BuiltIn::GlobalInvocationId)],
    );

    let fn_ty = b.type_function(void, []);
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fn_ty)
        .unwrap();
    b.begin_block(None).unwrap();
    let g = b.load(uvec3, None, gid, None, []).unwrap();
    let i = b.composite_extract(u32t, None, g, [0]).unwrap();
    let n_ptr = b.access_chain(pc_u32_ptr, None, pcv, [c0]).unwrap();
    let n = b.load(u32t, None, n_ptr, None, []).unwrap();
    let inside = b.u_less_than(boolt, None, i, n).unwrap();
    let body = b.id();
    let merge = b.id();
    b.selection_merge(merge, SelectionControl::NONE).unwrap();
    b.branch_conditional(inside, body, merge, []).unwrap();

    b.begin_block(Some(body)).unwrap();
    let x_ptr = b.access_chain(elem_ptr, None, bufs[0], [c0, i]).unwrap();
    let x = b.load(f32t, None, x_ptr, None, []).unwrap();
    let a_ptr = b.access_chain(pc_f32_ptr, None, pcv, [c1]).unwrap();
    let a = b.load(f32t, None, a_ptr, None, []).unwrap();
    let k_ptr = b.access_chain(pc_f32_ptr, None, pcv, [c2]).unwrap();
    let k = b.load(f32t, None, k_ptr, None, []).unwrap();
    let ax = b.f_mul(f32t, None, x, a).unwrap();
    let y = b.f_add(f32t, None, ax, k).unwrap();
    let y_ptr = b
        .access_chain(elem_ptr, None, *bufs.last().unwrap(), [c0, i])
        .unwrap();
    b.store(y_ptr, y, None, []).unwrap();
    b.branch(merge).unwrap();

    b.begin_block(Some(merge)).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();

    b.entry_point(ExecutionModel::GLCompute, main, "main", [gid]);
    b.execution_mode(main, ExecutionMode::LocalSize, [LOCAL, 1, 1]);
    b.module().assemble()
}

/// The push-constant block of [`axpb`].
pub fn axpb_push(n: u32, a: f32, b: f32) -> Vec<u8> {
    let mut p = Vec::with_capacity(12);
    p.extend_from_slice(&n.to_le_bytes());
    p.extend_from_slice(&a.to_le_bytes());
    p.extend_from_slice(&b.to_le_bytes());
    p
}

/// Workgroups for `n` elements.
pub fn groups(n: u32) -> [u32; 3] {
    [n.div_ceil(LOCAL), 1, 1]
}

pub fn f32_bytes(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A slow kernel: `do { data[0] += 1.0 } while (data[0] != -1.0)` (starting at 0, the value
/// climbs to 2^24 and stays there), an endless loop on a GPU. llvmpipe caps a loop nest at
/// 65535 iterations, so the timeout test also dispatches billions of workgroups.
pub fn spin() -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 3);
    b.capability(Capability::Shader);
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
    let void = b.type_void();
    let u32t = b.type_int(32, 0);
    let f32t = b.type_float(32, None);
    let boolt = b.type_bool();
    let c0 = b.constant_bit32(u32t, 0);
    let minus_one = b.constant_bit32(f32t, (-1.0f32).to_bits());
    let one = b.constant_bit32(f32t, 1.0f32.to_bits());
    let arr = b.type_runtime_array(f32t);
    b.decorate(arr, Decoration::ArrayStride, [Operand::LiteralBit32(4)]);
    let block = b.type_struct([arr]);
    b.decorate(block, Decoration::Block, []);
    b.member_decorate(block, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
    let block_ptr = b.type_pointer(None, StorageClass::StorageBuffer, block);
    let elem_ptr = b.type_pointer(None, StorageClass::StorageBuffer, f32t);
    let buf = b.variable(block_ptr, None, StorageClass::StorageBuffer, None);
    b.decorate(buf, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
    b.decorate(buf, Decoration::Binding, [Operand::LiteralBit32(0)]);
    let fn_ty = b.type_function(void, []);
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fn_ty)
        .unwrap();
    b.begin_block(None).unwrap();
    let (header, body, cont, merge) = (b.id(), b.id(), b.id(), b.id());
    b.branch(header).unwrap();
    b.begin_block(Some(header)).unwrap();
    b.loop_merge(merge, cont, rspirv::spirv::LoopControl::NONE, [])
        .unwrap();
    b.branch(body).unwrap();
    b.begin_block(Some(body)).unwrap();
    let p0 = b.access_chain(elem_ptr, None, buf, [c0, c0]).unwrap();
    let x = b.load(f32t, None, p0, None, []).unwrap();
    let x1 = b.f_add(f32t, None, x, one).unwrap();
    b.store(p0, x1, None, []).unwrap();
    let x2 = b.load(f32t, None, p0, None, []).unwrap();
    let go_on = b.f_ord_not_equal(boolt, None, x2, minus_one).unwrap();
    b.branch_conditional(go_on, cont, merge, []).unwrap();
    b.begin_block(Some(cont)).unwrap();
    b.branch(header).unwrap();
    b.begin_block(Some(merge)).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::GLCompute, main, "main", []);
    b.execution_mode(main, ExecutionMode::LocalSize, [1, 1, 1]);
    b.module().assemble()
}
