//! Seeded random values for `random input { [100]f32 ... }` datasets.
//!
//! The value ranges are those of `futhark dataset` (`futhark-data`'s
//! `initialRandomConfiguration`): integers uniform over the whole range of their type, floats
//! uniform in [0, 1), booleans uniform. The generator is SplitMix64, so a dataset gets the
//! same values on every run; they are not the values Futhark itself would generate.

use crate::prim::{FloatType, IntType, PrimType, PrimValue};
use crate::value::{ArrayValue, Buffer, Value};
use half::f16;

/// The SplitMix64 pseudo-random generator.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    fn next_prim(&mut self, t: PrimType) -> PrimValue {
        match t {
            PrimType::Bool => PrimValue::Bool(self.next_u64() & 1 == 1),
            PrimType::Int(it) => PrimValue::int(it, self.next_u64() as i128),
            PrimType::Float(FloatType::F16) => PrimValue::F16(f16::from_f32(
                (self.next_u64() >> 40) as f32 / (1u32 << 24) as f32,
            )),
            PrimType::Float(FloatType::F32) => {
                PrimValue::F32((self.next_u64() >> 40) as f32 / (1u32 << 24) as f32)
            }
            PrimType::Float(FloatType::F64) => PrimValue::F64(self.next_f64()),
        }
    }
}

/// A 64-bit FNV-1a hash, used to derive seeds from dataset names.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A random value of the given shape and element type. At most `max_elems` elements are
/// generated (an error otherwise, to keep a typo like `[100000000000]f32` from exhausting memory).
pub fn random_value(
    shape: &[usize],
    elem: PrimType,
    seed: u64,
    max_elems: usize,
) -> Result<Value, String> {
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= max_elems)
        .ok_or_else(|| {
            format!(
                "random value of type {} is too large",
                crate::values::type_text(shape, elem)
            )
        })?;
    let mut rng = SplitMix64::new(seed);
    if shape.is_empty() {
        return Ok(Value::Scalar(rng.next_prim(elem)));
    }
    let data = match elem {
        PrimType::Bool => Buffer::Bool((0..n).map(|_| rng.next_u64() & 1 == 1).collect()),
        PrimType::Int(IntType::I8) => Buffer::I8((0..n).map(|_| rng.next_u64() as i8).collect()),
        PrimType::Int(IntType::I16) => Buffer::I16((0..n).map(|_| rng.next_u64() as i16).collect()),
        PrimType::Int(IntType::I32) => Buffer::I32((0..n).map(|_| rng.next_u64() as i32).collect()),
        PrimType::Int(IntType::I64) => Buffer::I64((0..n).map(|_| rng.next_u64() as i64).collect()),
        PrimType::Int(IntType::U8) => Buffer::U8((0..n).map(|_| rng.next_u64() as u8).collect()),
        PrimType::Int(IntType::U16) => Buffer::U16((0..n).map(|_| rng.next_u64() as u16).collect()),
        PrimType::Int(IntType::U32) => Buffer::U32((0..n).map(|_| rng.next_u64() as u32).collect()),
        PrimType::Int(IntType::U64) => Buffer::U64((0..n).map(|_| rng.next_u64()).collect()),
        PrimType::Float(_) => {
            let mut b = Buffer::with_capacity(elem, n);
            for _ in 0..n {
                b.push(rng.next_prim(elem));
            }
            b
        }
    };
    Ok(Value::Array(ArrayValue::new(shape.to_vec(), data)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_shaped() {
        let a = random_value(&[10, 3], PrimType::F32, 7, 1000).unwrap();
        let b = random_value(&[10, 3], PrimType::F32, 7, 1000).unwrap();
        let c = random_value(&[10, 3], PrimType::F32, 8, 1000).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.shape(), &[10, 3]);
        let Value::Array(arr) = &a else { panic!() };
        for i in 0..30 {
            let x = arr.data.get(i).unwrap().as_f64().unwrap();
            assert!((0.0..1.0).contains(&x));
        }
    }

    #[test]
    fn all_types_and_limits() {
        for t in PrimType::all() {
            let v = random_value(&[5], t, 1, 100).unwrap();
            assert_eq!(v.elem_type(), t);
            assert_eq!(
                random_value(&[], t, 1, 100).unwrap().shape(),
                &[] as &[usize]
            );
        }
        assert!(random_value(&[1000, 1000], PrimType::I32, 1, 100).is_err());
        assert!(random_value(&[usize::MAX, 3], PrimType::I32, 1, usize::MAX).is_err());
        // Integers cover the whole range (some negative values among 100 i32s).
        let Value::Array(a) = random_value(&[100], PrimType::I32, 3, 1000).unwrap() else {
            panic!()
        };
        assert!((0..100).any(|i| a.data.get(i).unwrap().as_i128().unwrap() < 0));
    }
}
