//! Primitive types and scalar values, shared by the frontend, the IR, the interpreter and values.
//! The semantics of scalar operations on them live in [`crate::primops`].

use half::f16;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatType {
    F16,
    F32,
    F64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrimType {
    Bool,
    Int(IntType),
    Float(FloatType),
}

impl IntType {
    pub const ALL: [IntType; 8] = [
        IntType::I8,
        IntType::I16,
        IntType::I32,
        IntType::I64,
        IntType::U8,
        IntType::U16,
        IntType::U32,
        IntType::U64,
    ];
    pub fn bits(self) -> u32 {
        match self {
            IntType::I8 | IntType::U8 => 8,
            IntType::I16 | IntType::U16 => 16,
            IntType::I32 | IntType::U32 => 32,
            IntType::I64 | IntType::U64 => 64,
        }
    }
    pub fn signed(self) -> bool {
        matches!(
            self,
            IntType::I8 | IntType::I16 | IntType::I32 | IntType::I64
        )
    }
    /// The smallest and the largest value of the type.
    pub fn min_max(self) -> (i128, i128) {
        let b = self.bits();
        if self.signed() {
            (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
        } else {
            (0, (1i128 << b) - 1)
        }
    }
    /// Whether `v` is a value of the type.
    pub fn contains(self, v: i128) -> bool {
        let (lo, hi) = self.min_max();
        (lo..=hi).contains(&v)
    }
    /// Whether `v` is a bit pattern of the type's width (`0 <= v < 2^bits`): how a hexadecimal
    /// or binary literal with a signed type's suffix may be written (`0xffi8` is `-1i8`).
    pub fn bit_pattern(self, v: i128) -> bool {
        (0..1i128 << self.bits()).contains(&v)
    }
    pub fn name(self) -> &'static str {
        match self {
            IntType::I8 => "i8",
            IntType::I16 => "i16",
            IntType::I32 => "i32",
            IntType::I64 => "i64",
            IntType::U8 => "u8",
            IntType::U16 => "u16",
            IntType::U32 => "u32",
            IntType::U64 => "u64",
        }
    }
}

impl FloatType {
    pub const ALL: [FloatType; 3] = [FloatType::F16, FloatType::F32, FloatType::F64];
    pub fn bits(self) -> u32 {
        match self {
            FloatType::F16 => 16,
            FloatType::F32 => 32,
            FloatType::F64 => 64,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            FloatType::F16 => "f16",
            FloatType::F32 => "f32",
            FloatType::F64 => "f64",
        }
    }
}

impl PrimType {
    pub const I32: PrimType = PrimType::Int(IntType::I32);
    pub const I64: PrimType = PrimType::Int(IntType::I64);
    pub const F32: PrimType = PrimType::Float(FloatType::F32);
    pub const F64: PrimType = PrimType::Float(FloatType::F64);

    /// Every primitive type, in a fixed order.
    pub fn all() -> impl Iterator<Item = PrimType> {
        std::iter::once(PrimType::Bool)
            .chain(IntType::ALL.into_iter().map(PrimType::Int))
            .chain(FloatType::ALL.into_iter().map(PrimType::Float))
    }
    pub fn name(self) -> &'static str {
        match self {
            PrimType::Bool => "bool",
            PrimType::Int(t) => t.name(),
            PrimType::Float(t) => t.name(),
        }
    }
    pub fn from_name(s: &str) -> Option<PrimType> {
        PrimType::all().find(|t| t.name() == s)
    }
    /// Size in bytes of one element (bool is one byte).
    pub fn byte_size(self) -> usize {
        match self {
            PrimType::Bool => 1,
            PrimType::Int(t) => t.bits() as usize / 8,
            PrimType::Float(t) => t.bits() as usize / 8,
        }
    }
}

impl fmt::Display for PrimType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One scalar value with its type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrimValue {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F16(f16),
    F32(f32),
    F64(f64),
}

impl PrimValue {
    pub fn prim_type(&self) -> PrimType {
        use PrimValue::*;
        match self {
            Bool(_) => PrimType::Bool,
            I8(_) => PrimType::Int(IntType::I8),
            I16(_) => PrimType::Int(IntType::I16),
            I32(_) => PrimType::Int(IntType::I32),
            I64(_) => PrimType::Int(IntType::I64),
            U8(_) => PrimType::Int(IntType::U8),
            U16(_) => PrimType::Int(IntType::U16),
            U32(_) => PrimType::Int(IntType::U32),
            U64(_) => PrimType::Int(IntType::U64),
            F16(_) => PrimType::Float(FloatType::F16),
            F32(_) => PrimType::Float(FloatType::F32),
            F64(_) => PrimType::Float(FloatType::F64),
        }
    }
    /// An integer value of the given type, wrapping `v` to its width.
    pub fn int(t: IntType, v: i128) -> PrimValue {
        match t {
            IntType::I8 => PrimValue::I8(v as i8),
            IntType::I16 => PrimValue::I16(v as i16),
            IntType::I32 => PrimValue::I32(v as i32),
            IntType::I64 => PrimValue::I64(v as i64),
            IntType::U8 => PrimValue::U8(v as u8),
            IntType::U16 => PrimValue::U16(v as u16),
            IntType::U32 => PrimValue::U32(v as u32),
            IntType::U64 => PrimValue::U64(v as u64),
        }
    }
    /// A float value of the given type, rounding `v`.
    pub fn float(t: FloatType, v: f64) -> PrimValue {
        match t {
            FloatType::F16 => PrimValue::F16(f16::from_f64(v)),
            FloatType::F32 => PrimValue::F32(v as f32),
            FloatType::F64 => PrimValue::F64(v),
        }
    }
    /// The zero (false) of a type.
    pub fn zero(t: PrimType) -> PrimValue {
        match t {
            PrimType::Bool => PrimValue::Bool(false),
            PrimType::Int(it) => PrimValue::int(it, 0),
            PrimType::Float(ft) => PrimValue::float(ft, 0.0),
        }
    }
    /// The integer value, if this is an integer (unsigned values are zero-extended).
    pub fn as_i128(&self) -> Option<i128> {
        use PrimValue::*;
        Some(match *self {
            I8(v) => v as i128,
            I16(v) => v as i128,
            I32(v) => v as i128,
            I64(v) => v as i128,
            U8(v) => v as i128,
            U16(v) => v as i128,
            U32(v) => v as i128,
            U64(v) => v as i128,
            _ => return None,
        })
    }
    /// The float value widened to f64, if this is a float.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            PrimValue::F16(v) => Some(v.to_f64()),
            PrimValue::F32(v) => Some(v as f64),
            PrimValue::F64(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            PrimValue::Bool(b) => Some(b),
            _ => None,
        }
    }
}
