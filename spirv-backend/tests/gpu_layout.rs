//! The GPU layout of reduce and scan (short sub-chunks, many workgroups, partials combined by
//! trees: `Phase::TreeReduce`/`TreeScan`, chosen when the device is not a CPU) tested on
//! lavapipe by presenting it as a discrete GPU: every size class, every element type, tuples
//! and non-commutative operators (which fail if any level combines partials out of order),
//! against the interpreter. Also the GPU's choices of segmented reductions and scans over rows
//! (teams of threads per row, several workgroups per row: `codegen::segmented::strategy`).

use std::sync::{Arc, OnceLock};
use vkad_core::prim::{FloatType, IntType, PrimType, PrimValue};
use vkad_core::testing::compare_values;
use vkad_core::value::{ArrayValue, Buffer, Value};
use vkad_spirv::{run_entry, Context, ContextOptions};

fn gpu_ctx() -> Arc<Context> {
    static CTX: OnceLock<Arc<Context>> = OnceLock::new();
    CTX.get_or_init(|| {
        let mut c = Context::new(&ContextOptions {
            device: None,
            validation: true,
            pipeline_cache: vkad_vk::PipelineCacheMode::Off,
        })
        .expect("a Vulkan device (install mesa-vulkan-drivers)");
        c.set_validate_spirv(true);
        c.restrict_info(|i| i.device_type = "discrete".into());
        Arc::new(c)
    })
    .clone()
}

fn same(src: &str, entry: &str, args: Vec<Value>) {
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let want = c.run_interp(entry, args.clone()).expect("interpreter");
    let got = run_entry(&gpu_ctx(), &c, entry, args).unwrap_or_else(|e| panic!("{entry}: {e}"));
    let ms = compare_values(&got, &want);
    assert!(
        ms.is_empty(),
        "{entry}: {:?}",
        ms.iter().take(3).map(|m| m.to_string()).collect::<Vec<_>>()
    );
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn array(&mut self, t: PrimType, n: usize) -> Value {
        let mut b = Buffer::with_capacity(t, n);
        for _ in 0..n {
            let r = self.next();
            let v = match t {
                PrimType::Bool => PrimValue::Bool(r.is_multiple_of(97)),
                PrimType::Int(it) => PrimValue::int(it, (r % 7) as i128 - 3),
                PrimType::Float(ft) => PrimValue::float(ft, ((r % 2001) as f64 - 1000.0) / 64.0),
            };
            b.push(v);
        }
        Value::Array(ArrayValue::new(vec![n], b))
    }
}

/// 1, around one workgroup (256), around the switch to 8 elements per thread (256 * 64),
/// around one workgroup's share of that (2048), and sizes with many workgroups.
const SIZES: [usize; 14] = [
    1,
    2,
    255,
    256,
    257,
    2047,
    2048,
    2049,
    16383,
    16384,
    16385,
    100_003,
    1 << 20,
    3_000_001,
];

#[test]
fn sums_scans_and_extrema_of_every_type() {
    let mut rng = Rng(5);
    let types: Vec<PrimType> = IntType::ALL
        .iter()
        .map(|&i| PrimType::Int(i))
        .chain([FloatType::F32, FloatType::F64].map(PrimType::Float))
        .collect();
    for (k, t) in types.iter().enumerate() {
        let n = t.name();
        let src = format!(
            "entry red (xs: []{n}) = (reduce (+) 0 xs, reduce {n}.max {n}.lowest xs)
entry sc (xs: []{n}) = scan (+) 0 xs\n"
        );
        for (j, &size) in SIZES.iter().enumerate() {
            // Every size for some types: keeps the test short.
            if (j + k) % 3 != 0 && size > 4096 {
                continue;
            }
            let xs = rng.array(*t, size);
            same(&src, "red", vec![xs.clone()]);
            // Float sums are exact here: the values are multiples of 1/64 and small.
            if !(matches!(t, PrimType::Float(FloatType::F32)) && size > 100_000) {
                same(&src, "sc", vec![xs]);
            }
        }
    }
}

#[test]
fn non_commutative_tuple_operators_keep_their_order() {
    // Composition of affine maps over i32 (wrapping): associative, not commutative.
    let src = r#"
let comp (a1: i32, b1: i32) (a2: i32, b2: i32) = (a1 * a2, b1 * a2 + b2)
entry affine (as: []i32) (bs: []i32) = reduce comp (1, 0) (zip as bs)
entry scan_affine (as: []i32) (bs: []i32) = unzip (scan comp (1, 0) (zip as bs))
-- "the first non-zero": associative, not commutative.
entry first (xs: []i64) = reduce (\a b -> if a != 0 then a else b) 0 xs
entry scan_first (xs: []i64) = scan (\a b -> if a != 0 then a else b) 0 xs
"#;
    let mut rng = Rng(9);
    for &n in &SIZES {
        let a = rng.array(PrimType::Int(IntType::I32), n);
        let b = rng.array(PrimType::Int(IntType::I32), n);
        same(src, "affine", vec![a.clone(), b.clone()]);
        same(src, "scan_affine", vec![a, b]);
        // Mostly zeros, so the first non-zero is somewhere inside.
        let mut buf = Buffer::with_capacity(PrimType::Int(IntType::I64), n);
        for i in 0..n {
            let r = rng.next();
            let v = if r.is_multiple_of(1000) {
                i as i128 + 1
            } else {
                0
            };
            buf.push(PrimValue::int(IntType::I64, v));
        }
        let xs = Value::Array(ArrayValue::new(vec![n], buf));
        same(src, "first", vec![xs.clone()]);
        same(src, "scan_first", vec![xs]);
    }
}

#[test]
fn rows_are_reduced_and_scanned_in_every_strategy_a_gpu_chooses() {
    // A commutative sum (read at stride) and the composition of affine maps (contiguous runs,
    // combined in order), over rows of a matrix.
    let src = r#"
let comp (a1: i32, b1: i32) (a2: i32, b2: i32) = (a1 * a2, b1 * a2 + b2)
entry sums [m][k] (xss: [m][k]i32) = map (\row -> reduce (+) 0 row) xss
entry affine [m][k] (as: [m][k]i32) (bs: [m][k]i32) =
  unzip (map2 (\a b -> reduce comp (1, 0) (zip a b)) as bs)
entry scans [m][k] (xss: [m][k]i32) = map (\row -> scan (+) 0 row) xss
"#;
    let mut rng = Rng(13);
    let mut matrix = |m: usize, k: usize| {
        let Value::Array(a) = rng.array(PrimType::Int(IntType::I32), m * k) else {
            unreachable!()
        };
        Value::Array(ArrayValue::new(vec![m, k], a.data))
    };
    // A thread per row (9000 rows), teams of 4 and 32 threads, a workgroup per row, and
    // several workgroups per row: 48 pieces of a row of 100003 elements, 3 pieces of each of
    // 500 rows of 7000.
    for (m, k) in [
        (9000, 30),
        (2000, 9),
        (300, 100),
        (40, 3000),
        (1, 100_003),
        (500, 7000),
    ] {
        same(src, "sums", vec![matrix(m, k)]);
        same(src, "affine", vec![matrix(m, k), matrix(m, k)]);
        same(src, "scans", vec![matrix(m, k)]);
    }
}
