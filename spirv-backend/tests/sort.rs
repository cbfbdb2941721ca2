//! `sort_by_key` on Vulkan (the radix sort kernels of `spirv-backend/src/codegen/sort.rs`) against the
//! interpreter: sizes around the tile (4096 elements) and across many tiles, bit counts that
//! are and are not multiples of the digit (4 bits), skewed keys (all equal, two values, already
//! sorted, reversed), negative keys and keys past 2^bits (only the low bits count), an array
//! that is a slice of a bigger one; and on lavapipe presented as a GPU with too little shared
//! memory, where the sort runs as a loop of SOACs.

mod common;
use common::ctx;
use std::sync::{Arc, OnceLock};
use vkad_core::ir::builder::{fun_sized, program, var};
use vkad_core::ir::*;
use vkad_core::prim::{PrimType, PrimValue};
use vkad_core::value::{ArrayValue, Buffer, Value};
use vkad_spirv::{run_ir, Context, ContextOptions};

/// A device with 16 KiB of shared memory (Vulkan's minimum): less than the kernels need.
fn small_ctx() -> Arc<Context> {
    static CTX: OnceLock<Arc<Context>> = OnceLock::new();
    CTX.get_or_init(|| {
        let mut c = Context::new(&ContextOptions {
            device: None,
            validation: true,
            pipeline_cache: vkad_vk::PipelineCacheMode::Off,
        })
        .expect("a Vulkan device (install mesa-vulkan-drivers)");
        c.set_validate_spirv(true);
        c.restrict_info(|i| i.max_shared_memory = 16384);
        Arc::new(c)
    })
    .clone()
}

const I64: PrimType = PrimType::I64;

/// `main [n] [m] (bits: i64) (keys: [n]i64) (_: [m]i64)`: sorts the last `m` keys by `bits`
/// bits (a slice: the array does not start at offset 0) and returns the sorted keys and the
/// permutation.
fn sort_program() -> Program {
    let mut ns = NameSource::default();
    let n = ns.fresh("n");
    let m = ns.fresh("m");
    let (tn, tm) = (
        Type::array(I64, vec![var(&n)]),
        Type::array(I64, vec![var(&m)]),
    );
    let tm2 = tm.clone();
    let f = fun_sized(
        &mut ns,
        "main",
        true,
        vec![n.clone(), m.clone()],
        move |_, _| {
            vec![
                ("bits".into(), Type::Prim(I64)),
                ("keys".into(), tn.clone()),
                ("shape".into(), tm2.clone()),
            ]
        },
        vec![tm.to_ext(), tm.to_ext()],
        |b, ps| {
            let start = b.binop(BinOp::Sub(I64), var(&ps[0]), var(&ps[1]));
            let ty = Type::array(I64, vec![var(&ps[1])]);
            let tail = b.bind(
                "tail",
                ty.clone(),
                Exp::Index(
                    ps[3].clone(),
                    vec![DimIndex::Slice {
                        start: var(&start),
                        len: var(&ps[1]),
                        stride: SubExp::i64(1),
                    }],
                ),
            );
            let r = b.bind_many(
                &[("sorted", ty.clone()), ("perm", ty)],
                Exp::SortByKey {
                    keys: tail,
                    bits: var(&ps[2]),
                },
            );
            vec![var(&r[0]), var(&r[1])]
        },
    );
    program(ns, vec![f])
}

fn check_on(ctx: &Context, keys: &[i64], bits: i64, skip: usize) {
    let p = sort_program();
    vkad_core::ir::check::check_program(&p).expect("valid IR");
    let m = keys.len() - skip;
    let args = vec![
        Value::Scalar(PrimValue::I64(bits)),
        Value::Array(ArrayValue::new(
            vec![keys.len()],
            Buffer::I64(keys.to_vec()),
        )),
        Value::Array(ArrayValue::new(vec![m], Buffer::I64(vec![0; m]))),
    ];
    let want = vkad_core::interp::run_entry(&p, "main", args.clone()).expect("interpreter");
    let got = run_ir(ctx, &p, "main", args).unwrap_or_else(|e| panic!("vulkan: {e}"));
    assert_eq!(
        got,
        want,
        "n = {}, bits = {bits}, skip = {skip}",
        keys.len()
    );
}

fn check(keys: &[i64], bits: i64) {
    check_on(&ctx(), keys, bits, 0);
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn keys(&mut self, n: usize, below: u64) -> Vec<i64> {
        (0..n).map(|_| (self.next() % below) as i64).collect()
    }
}

#[test]
fn sizes_around_and_across_tiles() {
    let mut r = Rng(7);
    for n in [
        0, 1, 2, 3, 15, 16, 17, 255, 256, 257, 4095, 4096, 4097, 8191, 12289, 70001,
    ] {
        check(&r.keys(n, 1000), 10);
    }
}

#[test]
fn bit_counts() {
    let mut r = Rng(11);
    let keys = r.keys(5000, u64::MAX);
    for bits in [-1, 0, 1, 3, 4, 5, 8, 13, 32, 63, 64, 65] {
        check(&keys, bits);
    }
}

#[test]
fn skewed_keys() {
    let n = 9000;
    check(&vec![5; n], 3);
    check(&(0..n as i64).map(|i| i % 2).collect::<Vec<_>>(), 1);
    check(&(0..n as i64).collect::<Vec<_>>(), 14);
    check(&(0..n as i64).rev().collect::<Vec<_>>(), 14);
    // Negative keys: their low bits, unsigned.
    check(&(0..n as i64).map(|i| -(i % 37)).collect::<Vec<_>>(), 6);
}

#[test]
fn a_slice_of_a_bigger_array() {
    let mut r = Rng(3);
    let keys = r.keys(10000, 300);
    check_on(&ctx(), &keys, 9, 1234);
    check_on(&ctx(), &keys, 9, 9999);
}

#[test]
fn large() {
    let mut r = Rng(5);
    check(&r.keys(1 << 20, 1 << 20), 20);
}

#[test]
fn devices_with_little_shared_memory_sort_by_soacs() {
    let mut r = Rng(9);
    check_on(&small_ctx(), &r.keys(3000, 100), 7, 0);
    check_on(&small_ctx(), &r.keys(3000, 100), 7, 100);
}
