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
