//! Futhark's binary value format (`docs/binary-data-format.rst`): the byte `b`, the format
//! version (2), the rank as one byte, the element type as four ASCII bytes (`" i32"`,
//! `"bool"`, ...), each dimension as a little-endian 64-bit integer, then the elements in
//! row-major order, little-endian (a `bool` is one byte).

use crate::prim::PrimType;
use crate::value::{ArrayValue, Buffer, Value};
use half::f16;

const VERSION: u8 = 2;

/// The four-byte type tag of an element type.
fn type_tag(t: PrimType) -> [u8; 4] {
    let name = t.name().as_bytes();
    let mut tag = [b' '; 4];
    tag[4 - name.len()..].copy_from_slice(name);
    tag
}

/// Append `v` in the binary format to `out`.
pub fn write_binary(v: &Value, out: &mut Vec<u8>) {
    let (shape, data): (&[usize], Buffer) = match v {
        Value::Scalar(p) => (&[], Buffer::filled(*p, 1)),
        Value::Array(a) => (&a.shape, a.data.clone()),
    };
    out.push(b'b');
    out.push(VERSION);
    out.push(shape.len() as u8);
    out.extend_from_slice(&type_tag(data.elem_type()));
    for &d in shape {
        out.extend_from_slice(&(d as u64).to_le_bytes());
    }
    match &data {
        Buffer::Bool(xs) => out.extend(xs.iter().map(|&b| b as u8)),
        Buffer::I8(xs) => out.extend(xs.iter().map(|&x| x as u8)),
        Buffer::U8(xs) => out.extend_from_slice(xs),
        Buffer::I16(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Buffer::U16(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Buffer::I32(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Buffer::U32(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Buffer::I64(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Buffer::U64(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Buffer::F16(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Buffer::F32(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Buffer::F64(xs) => xs
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
    }
}

fn decode<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
    bytes
        .chunks_exact(N)
        .map(|c| {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            f(a)
        })
        .collect()
}

/// Read one binary value from the start of `input` (which must begin with `b`). Returns the
/// value and the number of bytes it took, or a message saying what is wrong.
pub fn read_binary(input: &[u8]) -> Result<(Value, usize), String> {
    let truncated = || "truncated binary value".to_string();
    if input.len() < 7 {
        return Err(truncated());
    }
    if input[0] != b'b' {
        return Err("a binary value must start with the byte `b`".into());
    }
    if input[1] != VERSION {
        return Err(format!(
            "unsupported binary format version {} (expected {VERSION})",
            input[1]
        ));
    }
    let rank = input[2] as i8;
    if rank < 0 {
        return Err(format!("negative rank {rank}"));
    }
    let tag = &input[3..7];
    let Some(t) = PrimType::all().find(|&t| type_tag(t) == tag) else {
        return Err(format!(
            "unknown element type {:?}",
            String::from_utf8_lossy(tag)
        ));
    };
    let mut pos = 7;
    let mut shape = Vec::with_capacity(rank as usize);
    for _ in 0..rank {
        let bytes = input.get(pos..pos + 8).ok_or_else(truncated)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(bytes);
        let d = i64::from_le_bytes(a);
        let d = usize::try_from(d).map_err(|_| format!("invalid dimension {d}"))?;
        shape.push(d);
        pos += 8;
    }
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| "array too large".to_string())?;
    let size = n
        .checked_mul(t.byte_size())
        .ok_or_else(|| "array too large".to_string())?;
    let end = pos
        .checked_add(size)
        .ok_or_else(|| "array too large".to_string())?;
    let bytes = input.get(pos..end).ok_or_else(truncated)?;
    let data = match t {
        PrimType::Bool => Buffer::Bool(bytes.iter().map(|&b| b != 0).collect()),
        PrimType::Int(it) => {
            use crate::prim::IntType::*;
            match it {
                I8 => Buffer::I8(bytes.iter().map(|&b| b as i8).collect()),
                U8 => Buffer::U8(bytes.to_vec()),
                I16 => Buffer::I16(decode(bytes, i16::from_le_bytes)),
                U16 => Buffer::U16(decode(bytes, u16::from_le_bytes)),
                I32 => Buffer::I32(decode(bytes, i32::from_le_bytes)),
                U32 => Buffer::U32(decode(bytes, u32::from_le_bytes)),
                I64 => Buffer::I64(decode(bytes, i64::from_le_bytes)),
                U64 => Buffer::U64(decode(bytes, u64::from_le_bytes)),
            }
        }
        PrimType::Float(ft) => {
            use crate::prim::FloatType::*;
            match ft {
                F16 => Buffer::F16(decode(bytes, f16::from_le_bytes)),
                F32 => Buffer::F32(decode(bytes, f32::from_le_bytes)),
                F64 => Buffer::F64(decode(bytes, f64::from_le_bytes)),
            }
        }
    };
    let v = if rank == 0 {
        match data.get(0) {
            Some(p) => Value::Scalar(p),
            None => return Err(truncated()),
        }
    } else {
        Value::Array(ArrayValue::new(shape, data))
    };
    Ok((v, end))
}
