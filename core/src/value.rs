//! Runtime values: scalars and regular multi-dimensional arrays stored as flat typed buffers
//! (row-major). Used by the interpreter, the value reader/writer and the test runner.
//! Text and binary formats are in [`crate::values`].

use crate::prim::{PrimType, PrimValue};
use half::f16;

/// A flat buffer of elements of one primitive type.
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Applies `$body` to the inner `Vec` of a buffer whatever its element type.
#[macro_export]
macro_rules! with_buffer {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            $crate::value::Buffer::Bool($v) => $body,
            $crate::value::Buffer::I8($v) => $body,
            $crate::value::Buffer::I16($v) => $body,
            $crate::value::Buffer::I32($v) => $body,
            $crate::value::Buffer::I64($v) => $body,
            $crate::value::Buffer::U8($v) => $body,
            $crate::value::Buffer::U16($v) => $body,
            $crate::value::Buffer::U32($v) => $body,
            $crate::value::Buffer::U64($v) => $body,
            $crate::value::Buffer::F16($v) => $body,
            $crate::value::Buffer::F32($v) => $body,
            $crate::value::Buffer::F64($v) => $body,
        }
    };
}

impl Buffer {
    /// `n` copies of `v`.
    pub fn filled(v: PrimValue, n: usize) -> Buffer {
        match v {
            PrimValue::Bool(x) => Buffer::Bool(vec![x; n]),
            PrimValue::I8(x) => Buffer::I8(vec![x; n]),
            PrimValue::I16(x) => Buffer::I16(vec![x; n]),
            PrimValue::I32(x) => Buffer::I32(vec![x; n]),
            PrimValue::I64(x) => Buffer::I64(vec![x; n]),
            PrimValue::U8(x) => Buffer::U8(vec![x; n]),
            PrimValue::U16(x) => Buffer::U16(vec![x; n]),
            PrimValue::U32(x) => Buffer::U32(vec![x; n]),
            PrimValue::U64(x) => Buffer::U64(vec![x; n]),
            PrimValue::F16(x) => Buffer::F16(vec![x; n]),
            PrimValue::F32(x) => Buffer::F32(vec![x; n]),
            PrimValue::F64(x) => Buffer::F64(vec![x; n]),
        }
    }
    /// `n` copies of `v`, within the memory budget ([`crate::mem`]): the error
    /// `out of memory: ...` instead of aborting.
    pub fn try_filled(v: PrimValue, n: usize) -> Result<Buffer, String> {
        use crate::mem::vec_filled;
        Ok(match v {
            PrimValue::Bool(x) => Buffer::Bool(vec_filled(x, n)?),
            PrimValue::I8(x) => Buffer::I8(vec_filled(x, n)?),
            PrimValue::I16(x) => Buffer::I16(vec_filled(x, n)?),
            PrimValue::I32(x) => Buffer::I32(vec_filled(x, n)?),
            PrimValue::I64(x) => Buffer::I64(vec_filled(x, n)?),
            PrimValue::U8(x) => Buffer::U8(vec_filled(x, n)?),
            PrimValue::U16(x) => Buffer::U16(vec_filled(x, n)?),
            PrimValue::U32(x) => Buffer::U32(vec_filled(x, n)?),
            PrimValue::U64(x) => Buffer::U64(vec_filled(x, n)?),
            PrimValue::F16(x) => Buffer::F16(vec_filled(x, n)?),
            PrimValue::F32(x) => Buffer::F32(vec_filled(x, n)?),
            PrimValue::F64(x) => Buffer::F64(vec_filled(x, n)?),
        })
    }
    /// [`Buffer::with_capacity`] within the memory budget ([`crate::mem`]).
    pub fn try_with_capacity(t: PrimType, cap: usize) -> Result<Buffer, String> {
        let mut b = Buffer::filled(PrimValue::zero(t), 0);
        b.try_reserve(cap)?;
        Ok(b)
    }
    /// Makes room for `additional` more elements, within the memory budget ([`crate::mem`]).
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), String> {
        with_buffer!(self, v => crate::mem::reserve(v, additional))
    }
    /// An empty buffer of the given element type with room for `cap` elements.
    pub fn with_capacity(t: PrimType, cap: usize) -> Buffer {
        let mut b = Buffer::filled(PrimValue::zero(t), 0);
        with_buffer!(&mut b, v => v.reserve(cap));
        b
    }
    pub fn elem_type(&self) -> PrimType {
        self.get(0).map(|v| v.prim_type()).unwrap_or_else(|| {
            // Empty: derive from the variant.
            let probe = match self {
                Buffer::Bool(_) => PrimValue::Bool(false),
                Buffer::I8(_) => PrimValue::I8(0),
                Buffer::I16(_) => PrimValue::I16(0),
                Buffer::I32(_) => PrimValue::I32(0),
                Buffer::I64(_) => PrimValue::I64(0),
                Buffer::U8(_) => PrimValue::U8(0),
                Buffer::U16(_) => PrimValue::U16(0),
                Buffer::U32(_) => PrimValue::U32(0),
                Buffer::U64(_) => PrimValue::U64(0),
                Buffer::F16(_) => PrimValue::F16(f16::ZERO),
                Buffer::F32(_) => PrimValue::F32(0.0),
                Buffer::F64(_) => PrimValue::F64(0.0),
            };
            probe.prim_type()
        })
    }
    pub fn len(&self) -> usize {
        with_buffer!(self, v => v.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Element `i` (None if out of range).
    pub fn get(&self, i: usize) -> Option<PrimValue> {
        Some(match self {
            Buffer::Bool(v) => PrimValue::Bool(*v.get(i)?),
            Buffer::I8(v) => PrimValue::I8(*v.get(i)?),
            Buffer::I16(v) => PrimValue::I16(*v.get(i)?),
            Buffer::I32(v) => PrimValue::I32(*v.get(i)?),
            Buffer::I64(v) => PrimValue::I64(*v.get(i)?),
            Buffer::U8(v) => PrimValue::U8(*v.get(i)?),
            Buffer::U16(v) => PrimValue::U16(*v.get(i)?),
            Buffer::U32(v) => PrimValue::U32(*v.get(i)?),
            Buffer::U64(v) => PrimValue::U64(*v.get(i)?),
            Buffer::F16(v) => PrimValue::F16(*v.get(i)?),
            Buffer::F32(v) => PrimValue::F32(*v.get(i)?),
            Buffer::F64(v) => PrimValue::F64(*v.get(i)?),
        })
    }
    /// Set element `i`. Returns false (and changes nothing) if out of range or of the wrong type.
    pub fn set(&mut self, i: usize, x: PrimValue) -> bool {
        macro_rules! put {
            ($v:expr, $x:expr) => {
                match $v.get_mut(i) {
                    Some(slot) => {
                        *slot = $x;
                        true
                    }
                    None => false,
                }
            };
        }
        match (self, x) {
            (Buffer::Bool(v), PrimValue::Bool(x)) => put!(v, x),
            (Buffer::I8(v), PrimValue::I8(x)) => put!(v, x),
            (Buffer::I16(v), PrimValue::I16(x)) => put!(v, x),
            (Buffer::I32(v), PrimValue::I32(x)) => put!(v, x),
            (Buffer::I64(v), PrimValue::I64(x)) => put!(v, x),
            (Buffer::U8(v), PrimValue::U8(x)) => put!(v, x),
            (Buffer::U16(v), PrimValue::U16(x)) => put!(v, x),
            (Buffer::U32(v), PrimValue::U32(x)) => put!(v, x),
            (Buffer::U64(v), PrimValue::U64(x)) => put!(v, x),
            (Buffer::F16(v), PrimValue::F16(x)) => put!(v, x),
            (Buffer::F32(v), PrimValue::F32(x)) => put!(v, x),
            (Buffer::F64(v), PrimValue::F64(x)) => put!(v, x),
            _ => false,
        }
    }
    /// Append one element (must be of the buffer's type; returns false otherwise).
    pub fn push(&mut self, x: PrimValue) -> bool {
        match (self, x) {
            (Buffer::Bool(v), PrimValue::Bool(x)) => v.push(x),
            (Buffer::I8(v), PrimValue::I8(x)) => v.push(x),
            (Buffer::I16(v), PrimValue::I16(x)) => v.push(x),
            (Buffer::I32(v), PrimValue::I32(x)) => v.push(x),
            (Buffer::I64(v), PrimValue::I64(x)) => v.push(x),
            (Buffer::U8(v), PrimValue::U8(x)) => v.push(x),
            (Buffer::U16(v), PrimValue::U16(x)) => v.push(x),
            (Buffer::U32(v), PrimValue::U32(x)) => v.push(x),
            (Buffer::U64(v), PrimValue::U64(x)) => v.push(x),
            (Buffer::F16(v), PrimValue::F16(x)) => v.push(x),
            (Buffer::F32(v), PrimValue::F32(x)) => v.push(x),
            (Buffer::F64(v), PrimValue::F64(x)) => v.push(x),
            _ => return false,
        }
        true
    }
    /// Elements `lo..hi` as a new buffer.
    pub fn slice(&self, lo: usize, hi: usize) -> Buffer {
        match self {
            Buffer::Bool(v) => Buffer::Bool(v[lo..hi].to_vec()),
            Buffer::I8(v) => Buffer::I8(v[lo..hi].to_vec()),
            Buffer::I16(v) => Buffer::I16(v[lo..hi].to_vec()),
            Buffer::I32(v) => Buffer::I32(v[lo..hi].to_vec()),
            Buffer::I64(v) => Buffer::I64(v[lo..hi].to_vec()),
            Buffer::U8(v) => Buffer::U8(v[lo..hi].to_vec()),
            Buffer::U16(v) => Buffer::U16(v[lo..hi].to_vec()),
            Buffer::U32(v) => Buffer::U32(v[lo..hi].to_vec()),
            Buffer::U64(v) => Buffer::U64(v[lo..hi].to_vec()),
            Buffer::F16(v) => Buffer::F16(v[lo..hi].to_vec()),
            Buffer::F32(v) => Buffer::F32(v[lo..hi].to_vec()),
            Buffer::F64(v) => Buffer::F64(v[lo..hi].to_vec()),
        }
    }
}

/// A regular array: `shape` outermost first, `data.len() == shape.iter().product()`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    pub shape: Vec<usize>,
    pub data: Buffer,
}

impl ArrayValue {
    pub fn new(shape: Vec<usize>, data: Buffer) -> ArrayValue {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        ArrayValue { shape, data }
    }
    pub fn elem_type(&self) -> PrimType {
        self.data.elem_type()
    }
    /// Number of elements in one row (product of all but the outer dimension).
    pub fn row_len(&self) -> usize {
        self.shape[1..].iter().product()
    }
}

/// A value as an entry point takes or returns it (tuples are already flattened).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar(PrimValue),
    Array(ArrayValue),
}

impl Value {
    pub fn elem_type(&self) -> PrimType {
        match self {
            Value::Scalar(p) => p.prim_type(),
            Value::Array(a) => a.elem_type(),
        }
    }
    pub fn shape(&self) -> &[usize] {
        match self {
            Value::Scalar(_) => &[],
            Value::Array(a) => &a.shape,
        }
    }
    /// A human-readable type like `[3][2]f32`.
    pub fn type_name(&self) -> String {
        let mut s = String::new();
        for d in self.shape() {
            s.push_str(&format!("[{d}]"));
        }
        s.push_str(self.elem_type().name());
        s
    }
}
