//! Generated modules validate (`spirv-val` rules, through `vkad_vk::validate_spirv`).

use crate::codegen::copy::{iota, strided};
use crate::codegen::gen::WordKind;
use crate::codegen::map::{map_kernel, map_kernel_on};
use crate::codegen::{HostTy, KernelCode};
use vkad_core::ir::{Exp, FunDef, Program, Soac, Stm, VName};
use vkad_core::prim::{IntType, PrimType};

fn valid(code: &KernelCode) {
    vkad_vk::validate_spirv(&code.words).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn builtin_kernels_validate() {
    use crate::codegen::gen::{with_addressing, Addressing};
    let prog = Program::default();
    for mode in [Addressing::Descriptors, Addressing::Addresses] {
        with_addressing(mode, || {
            for wk in [WordKind::U32, WordKind::U64] {
                for rank in 0..4 {
                    for scalar in [false, true] {
                        valid(&strided(&prog, wk, rank, scalar).unwrap());
                    }
                }
            }
            for it in IntType::ALL {
                valid(&iota(&prog, it).unwrap());
            }
        });
    }
}

/// Every kernel the program's entry `main` needs for its top-level maps validates.
fn map_kernels_validate(src: &str) {
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let f = c.ir.entry("main").unwrap();
    let types: std::collections::HashMap<u32, HostTy> = f
        .params
        .iter()
        .map(|p| {
            let e = p.ty.elem().unwrap();
            let t = if p.ty.rank() == 0 {
                HostTy::Prim(e)
            } else {
                HostTy::Arr(e, p.ty.rank())
            };
            (p.name.id, t)
        })
        .chain(
            f.size_params
                .iter()
                .map(|s| (s.id, HostTy::Prim(PrimType::I64))),
        )
        .collect();
    let ht = |v: &VName| types.get(&v.id).cloned();
    let mut n = 0;
    for stm in &f.body.stms {
        if let Exp::Soac(Soac::Map { w, arrs, lam }) = &stm.exp {
            valid(&map_kernel(&c.ir, w, arrs, lam, &stm.loc, &ht).unwrap());
            n += 1;
        }
    }
    assert!(n > 0, "no map in {src}");
}

/// The host type of variable `v` in entry `f`: its parameters' types, `i64` for anything else
/// (the sizes).
fn param_type(f: &FunDef, v: &VName) -> Option<HostTy> {
    f.params
        .iter()
        .find(|p| p.name.id == v.id)
        .filter(|p| p.ty.rank() > 0)
        .map(|p| HostTy::Arr(p.ty.elem().unwrap(), p.ty.rank()))
        .or(Some(HostTy::Prim(PrimType::I64)))
}

/// The first top-level `map` of `f`'s body.
fn first_map(f: &FunDef) -> &Stm {
    f.body
        .stms
        .iter()
        .find(|s| matches!(s.exp, Exp::Soac(Soac::Map { .. })))
        .expect("a map")
}

/// The (validated) kernel of the first `map` of entry `main` of `src` (for lavapipe with
/// `lavapipe`).
fn first_map_kernel(src: &str, lavapipe: bool) -> KernelCode {
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let f = c.ir.entry("main").unwrap();
    let ht = |v: &VName| param_type(f, v);
    let stm = first_map(f);
    let Exp::Soac(Soac::Map { w, arrs, lam }) = &stm.exp else {
        unreachable!()
    };
    let code = map_kernel_on(&c.ir, w, arrs, lam, &stm.loc, &ht, lavapipe).unwrap();
    valid(&code);
    code
}

/// A thread records its first failed check, and the scratch memory it needed when it first
/// ran out, in variables, and the kernel reports them once at its end: however many checks
/// and per-thread arrays a kernel has, it has one atomic on the status buffer and one on the
/// scratch need buffer per word size it uses.
#[test]
fn a_kernel_reports_its_checks_and_scratch_needs_once_at_its_end() {
    let src = "entry main [n] (xs: [n]i32) (is: [n]i64) = \
               map (\\i -> let a = xs[i] / xs[i + 1] \
                          let ys = map (\\j -> xs[j] * a) (iota i) \
                          let zs = scan (+) 0 (map (\\y -> y % a) ys) \
                          in loop a for j < i do a % zs[j]) is";
    let code = first_map_kernel(src, false);
    let module = rspirv::dr::load_words(&code.words).unwrap();
    let count = |op: rspirv::spirv::Op| {
        module
            .functions
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.instructions)
            .filter(|i| i.class.opcode == op)
            .count()
    };
    assert!(code.errors.len() >= 4, "{} error sites", code.errors.len());
    assert_eq!(count(rspirv::spirv::Op::AtomicCompareExchange), 1);
    let scratch = |k| {
        code.binds
            .contains(&crate::codegen::layout::BindSrc::Tmp(k))
    };
    assert!(scratch(0) && scratch(1), "the arrays are 32-bit scratch");
    assert_eq!(count(rspirv::spirv::Op::AtomicUMax), 1);
}

/// On lavapipe, the threads of a kernel whose points loop take no new point once the launch
/// has failed (one atomic load of the launch's status flag per point); a kernel whose points do
/// not loop, and every kernel for other devices, check nothing.
#[test]
fn lavapipe_kernels_whose_points_loop_stop_once_their_launch_failed() {
    let atomic_loads = |src: &str, lavapipe: bool| {
        let code = first_map_kernel(src, lavapipe);
        let module = rspirv::dr::load_words(&code.words).unwrap();
        module
            .functions
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.instructions)
            .filter(|i| i.class.opcode == rspirv::spirv::Op::AtomicLoad)
            .count()
    };
    let looping = "entry main [n] (xs: [n]f64) (is: [n]i64) = \
                   map (\\i -> loop a = 0f64 for j < i do a + xs[j]) is";
    let straight = "entry main [n] (xs: [n]f64) = map (\\x -> x * 2 + 1) xs";
    assert_eq!(atomic_loads(looping, true), 1);
    assert_eq!(atomic_loads(looping, false), 0);
    assert_eq!(atomic_loads(straight, true), 0);
}

#[test]
fn map_kernels_validate_with_device_addresses() {
    use crate::codegen::gen::{with_addressing, Addressing};
    with_addressing(Addressing::Addresses, || {
        map_kernels_validate(
            "entry main [n] (xs: [n]f64) (ys: [n]i32) (zs: [n]bool) = map3 (\\x y z -> if z then (x + f64.i32 y, ys[0]) else (x, y)) xs ys zs",
        );
    });
}

#[test]
fn scalar_code_validates_for_every_type() {
    for it in IntType::ALL {
        let t = it.name();
        map_kernels_validate(&format!(
            "entry main [n] (xs: [n]{t}) (ys: [n]{t}) = map2 (\\x y -> (x + y, x / y, x % y, x // y, x %% y, x ** y, x << y, x >> y, x >>> y, {t}.popc x, {t}.clz x, {t}.ctz x, {t}.mul_hi x y, {t}.abs x, {t}.sgn x, f64.{t} x, f16.{t} x, u8.{t} x, i64.{t} x, x < y)) xs ys"
        ));
    }
    for ft in vkad_core::prim::FloatType::ALL {
        let t = ft.name();
        map_kernels_validate(&format!(
            "entry main [n] (xs: [n]{t}) (ys: [n]{t}) = map2 (\\x y -> (x + y, x % y, x ** y, {t}.sqrt x, {t}.exp x, {t}.log x, {t}.sin x, {t}.gamma x, {t}.lgamma x, {t}.erfc x, {t}.round x, {t}.to_bits x, i8.{t} x, u64.{t} x, f16.{t} x, {t}.hypot x y, {t}.lerp x y x, {t}.mad x y x)) xs ys"
        ));
    }
}

/// A `segmap` of one point whose body loops over inner `map`s is a group kernel (module
/// `codegen::group`): a workgroup of the device's [`GroupShape`], with barriers around its
/// distributed loops (subgroup barriers where the workgroup is one subgroup: lavapipe). A
/// point whose inner `map` makes arrays of its own (which a distributed loop cannot), and a
/// `segmap` of more points, are ordinary kernels of one thread per point.
#[test]
fn one_point_segmaps_with_inner_maps_are_group_kernels() {
    use crate::codegen::group::GroupShape;
    use crate::codegen::map::{seg_map_kernel, SegMapCode};
    use vkad_core::ir::SubExp;
    use vkad_core::prim::PrimValue;
    use vkad_core::seg::SegSpace;
    // (workgroup size, barriers) of the kernel of `main`'s `map`'s function as a `segmap`
    // over one point, or over `k` points, for lavapipe (with subgroups of 8) or a GPU; the
    // barriers must all have the scope the shape asks for.
    let kernel = |src: &str, one_point: bool, lavapipe: bool| -> (u32, usize) {
        kernel_with(src, one_point, lavapipe, 8)
    };
    fn kernel_with(src: &str, one_point: bool, lavapipe: bool, subgroup: u32) -> (u32, usize) {
        let shape = GroupShape::for_device(lavapipe, subgroup);
        let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let f = c.ir.entry("main").unwrap();
        let ht = |v: &VName| param_type(f, v);
        let stm = first_map(f);
        let Exp::Soac(Soac::Map { lam, .. }) = &stm.exp else {
            unreachable!()
        };
        let size = if one_point {
            SubExp::Const(PrimValue::I64(1))
        } else {
            SubExp::Var(f.params[1].name.clone())
        };
        // (The function has no parameter: `iota 1`'s element is unused.)
        let gtid = VName {
            id: u32::MAX,
            base: "gtid".into(),
        };
        let space = SegSpace {
            dims: vec![(gtid, size)],
        };
        let code = SegMapCode {
            space: &space,
            stms: &lam.body.stms,
            results: &lam.body.result,
            ret: &lam.ret,
        };
        let code = seg_map_kernel(&c.ir, &code, &stm.loc, &ht, lavapipe, subgroup, None).unwrap();
        valid(&code);
        let module = rspirv::dr::load_words(&code.words).unwrap();
        let local = module
            .execution_modes
            .iter()
            .find_map(|i| match i.operands.get(2) {
                Some(rspirv::dr::Operand::LiteralBit32(x))
                    if i.operands.get(1)
                        == Some(&rspirv::dr::Operand::ExecutionMode(
                            rspirv::spirv::ExecutionMode::LocalSize,
                        )) =>
                {
                    Some(*x)
                }
                _ => None,
            })
            .expect("a LocalSize");
        let barriers = module
            .functions
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.instructions)
            .filter(|i| i.class.opcode == rspirv::spirv::Op::ControlBarrier)
            .collect::<Vec<_>>();
        // The scope operands are constants: find their values.
        let scope = |id: &rspirv::dr::Operand| {
            let id = id.id_ref_any().expect("a scope id");
            module
                .types_global_values
                .iter()
                .find(|i| i.result_id == Some(id))
                .and_then(|i| match i.operands.first() {
                    Some(rspirv::dr::Operand::LiteralBit32(x)) => Some(*x),
                    _ => None,
                })
                .expect("a constant scope")
        };
        let want = if shape.one_subgroup {
            rspirv::spirv::Scope::Subgroup
        } else {
            rspirv::spirv::Scope::Workgroup
        } as u32;
        for b in &barriers {
            assert_eq!((scope(&b.operands[0]), scope(&b.operands[1])), (want, want));
        }
        (local, barriers.len())
    }
    let loops = "entry main [n] (xs: [n]f64) (k: i64) = \
                 map (\\_ -> loop ys = xs for t < k do \
                             let zs = map (\\y -> y * 0.5 + f64.i64 t) ys \
                             in copy zs with [t % n] = 1) (iota 1)";
    // lavapipe: one subgroup of 8 invocations, or of 4 (128-bit vectors).
    let (local, barriers) = kernel(loops, true, true);
    assert_eq!(local, 8);
    assert!(barriers >= 4, "{barriers} barriers");
    let (local, _) = kernel_with(loops, true, true, 4);
    assert_eq!(local, 4);
    // lavapipe whose subgroup size is unknown: 8 invocations, workgroup barriers.
    assert!(!GroupShape::for_device(true, 0).one_subgroup);
    let (local, barriers) = kernel_with(loops, true, true, 0);
    assert_eq!(local, 8);
    assert!(barriers >= 4, "{barriers} barriers");
    // A GPU: a workgroup of `WG`.
    let (local, barriers) = kernel(loops, true, false);
    assert_eq!(local, crate::codegen::gen::WG);
    assert!(barriers >= 4, "{barriers} barriers");
    assert_eq!(kernel(loops, false, true), (crate::codegen::gen::WG, 0));
    // A reduction in the loop is shared too (combined in workgroup memory).
    let reducing = "entry main [n] (xs: [n]f64) (k: i64) = \
                    map (\\_ -> loop s = 0f64 for t < k do \
                                s + f64.maximum (map (\\x -> x * f64.i64 t) xs)) (iota 1)";
    let (local, barriers) = kernel(reducing, true, true);
    assert_eq!(local, 8);
    // log2(8) combination steps, one barrier each, and the two around the result.
    assert!(barriers >= 5, "{barriers} barriers");
    let allocating = "entry main [n][m] (a: [n][m]i32) (k: i64) = \
                      map (\\_ -> loop a for _t < k do \
                                  map (\\row -> scan (+) 0 row) a) (iota 1)";
    assert_eq!(kernel(allocating, true, true), (crate::codegen::gen::WG, 0));
}
