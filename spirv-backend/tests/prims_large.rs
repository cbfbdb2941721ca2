//! `reduce` and `scan` on the large-size path (more than `WG * 512` elements: one partial per
//! thread, see `exec::chunking`), compared with the interpreter: sizes just past the switch,
//! partial last chunks, every element type, skewed data and a non-commutative operator (which
//! fails if any pass combines partials out of order).

mod common;
use common::same;
use vkad_core::prim::{FloatType, IntType, PrimType, PrimValue};
use vkad_core::value::{ArrayValue, Buffer, Value};

/// The switch to one partial per thread (exec::chunking).
const SWITCH: usize = 256 * 512;

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
                PrimType::Int(it) => PrimValue::int(it, (r % 2001) as i128 - 1000),
                PrimType::Float(ft) => PrimValue::float(ft, ((r % 2001) as f64 - 1000.0) / 64.0),
            };
            b.push(v);
        }
        Value::Array(ArrayValue::new(vec![n], b))
    }
}

fn sizes() -> [usize; 3] {
    [SWITCH + 1, 2 * SWITCH + 4097, 1 << 21]
}

#[test]
fn sums_and_scans_of_every_type() {
    let mut rng = Rng(11);
    let types: Vec<PrimType> = IntType::ALL
        .iter()
        .map(|&i| PrimType::Int(i))
        .chain([FloatType::F32, FloatType::F64].map(PrimType::Float))
        .collect();
    for t in types {
        let n = t.name();
        let src = format!(
            "entry red (xs: []{n}) = (reduce (+) 0 xs, reduce {n}.max {n}.lowest xs)
entry sc (xs: []{n}) = scan (+) 0 xs\n"
        );
        for (k, &size) in sizes().iter().enumerate() {
            // One size per type keeps the test short; every size is covered by some type.
            if k != (t.byte_size() + n.len()) % 3 && size != SWITCH + 1 {
                continue;
            }
            let xs = rng.array(t, size);
            same(&src, "red", vec![xs.clone()]);
            same(&src, "sc", vec![xs]);
        }
    }
}

#[test]
fn bools_and_skewed_data() {
    let mut rng = Rng(12);
    let src = "entry red (xs: []bool) = (reduce (||) false xs, reduce (&&) true xs)
entry sc (xs: []bool) = scan (||) false xs
entry skew (xs: []i64) = (reduce (+) 0 xs, scan (+) 0 xs)\n";
    for size in sizes() {
        same(src, "red", vec![rng.array(PrimType::Bool, size)]);
        // A single true at the very end, and all false.
        let mut last = vec![false; size];
        last[size - 1] = true;
        let bools = |v: Vec<bool>| Value::Array(ArrayValue::new(vec![size], Buffer::Bool(v)));
        same(src, "sc", vec![bools(last.clone())]);
        same(src, "red", vec![bools(last)]);
        same(src, "red", vec![bools(vec![false; size])]);
        // Skewed: zeros with huge values in the last partial chunk only.
        let mut v = vec![0i64; size];
        for x in v.iter_mut().rev().take(37) {
            *x = 1 << 40;
        }
        same(
            src,
            "skew",
            vec![Value::Array(ArrayValue::new(vec![size], Buffer::I64(v)))],
        );
    }
}

#[test]
fn a_non_commutative_operator_keeps_its_order() {
    let mut rng = Rng(13);
    // Composition of affine maps x -> a*x + b (wrapping i32): associative, not commutative.
    let src = "def comp (a1: i32, b1: i32) (a2: i32, b2: i32) = (a1 * a2, b1 * a2 + b2)
entry red (as: []i32) (bs: []i32) = reduce comp (1, 0) (zip as bs)
entry sc (as: []i32) (bs: []i32) = unzip (scan comp (1, 0) (zip as bs))\n";
    for size in sizes() {
        let a = rng.array(PrimType::I32, size);
        let b = rng.array(PrimType::I32, size);
        same(src, "red", vec![a.clone(), b.clone()]);
        same(src, "sc", vec![a, b]);
    }
}

#[test]
fn operators_on_wide_tuples_use_no_shared_memory() {
    // Nine i64 components: one word per thread and component would need 18 KiB of shared
    // memory, more than the 16 KiB every device has; such reductions and scans use only the
    // per-thread phases (`exec::tuple_too_big`). The validation layer checks the limit.
    let mut rng = Rng(14);
    let src = "def op (a1: i64, b1: i64, c1: i64, d1: i64, e1: i64, f1: i64, g1: i64, h1: i64, i1: i64)
       (a2: i64, b2: i64, c2: i64, d2: i64, e2: i64, f2: i64, g2: i64, h2: i64, i2: i64) =
  (a1 * a2, b1 * a2 + b2, c1 + c2, d1 + d2, i64.max e1 e2, f1 + f2, g1 + g2, h1 + h2, i1 + i2)
def wide (x: i64) (y: i64) = (x % 3, y, x, y, x, x * y, x - y, 1i64, x)
entry red (xs: []i64) (ys: []i64) = reduce op (1, 0, 0, 0, i64.lowest, 0, 0, 0, 0) (map2 wide xs ys)
entry sc (xs: []i64) (ys: []i64) =
  let r = scan op (1, 0, 0, 0, i64.lowest, 0, 0, 0, 0) (map2 wide xs ys)
  in map (\\(a, b, c, d, e, f, g, h, i) -> a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f + 17 * g + 19 * h + 23 * i) r\n";
    for size in [1, 3, 1000, SWITCH + 1, 1 << 20] {
        let xs = rng.array(PrimType::I64, size);
        let ys = rng.array(PrimType::I64, size);
        same(src, "red", vec![xs.clone(), ys.clone()]);
        same(src, "sc", vec![xs, ys]);
    }
}
