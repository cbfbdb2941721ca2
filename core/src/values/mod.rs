//! Futhark's value formats: the textual format (as written in test blocks and printed by
//! Futhark programs) and the binary format (`docs/binary-data-format.rst`).
//!
//! [`parse_values`] reads a sequence of values in either format, freely mixed, as Futhark's
//! `futhark-data` reader does: values are separated by whitespace (or nothing at all), `--`
//! starts a comment that runs to the end of the line, and a value starting with the byte `b`
//! is binary.
//!
//! The textual format follows `futhark-data`'s parser:
//!
//! * integers: optional sign, decimal, `0x` hexadecimal or `0b` binary digits (underscores
//!   allowed after the first digit), optional suffix `i8`..`u64`; unsuffixed integers are
//!   `i32`. Out-of-range literals wrap to the type's width, as in `futhark-data`.
//! * floats: optional sign, `digits[.digits][(e|E)[+|-]digits]` with an optional suffix
//!   `f16`/`f32`/`f64`; an integer with a float suffix (`3f32`) is a float; unsuffixed decimals
//!   are `f64`. Special values: `f32.nan`, `f64.inf`, `-f16.inf` and so on.
//! * `true`, `false`;
//! * arrays `[v, v, ...]` (a trailing comma is allowed); all elements must have the same type
//!   and shape. The first primitive element of an array literal decides the type of unsuffixed
//!   literals in the rest of it (futhark-data 1.1.4, as `futhark-test.rst` documents):
//!   `[1f32, 2, 3.5]` is `[3]f32`, `[[1i64], [2]]` is `[2][1]i64`, while `[1, 2i64]` is an
//!   error (the first element makes it an `i32` array) and so is `[1i32, 2.5]`;
//! * `empty([2][0]f32)`: an empty array, of which at least one dimension must be zero;
//! * string literals `"abc"`: a `[]u8` array of the UTF-8 bytes.
//!
//! [`write_text`] prints values like Futhark programs do: arrays as `[1i32, 2i32]` (nested
//! arrays on one line, separated by `, `), empty arrays as `empty([0]i32)`, and floats in the
//! format Futhark's interpreter and `futhark-data` use (Haskell's `show`: the shortest digits
//! that read back to the same value, always with a decimal point, exponent notation below 0.1
//! and from 10^7 on: `1.0f32`, `0.1f64`, `1.0e-10f64`, `1.2345678e7f64`).
//! [`write_text_line`] writes the same text to an `io::Write` as it is made, in pieces, for
//! results too large to hold twice (`vkad run` prints with it); neither allocates per element.

mod binary;
pub mod gzip;
mod text;

pub use binary::{read_binary, write_binary};
pub(crate) use text::Reader;
pub use text::{format_float, format_prim, write_text, write_text_line};

use crate::prim::PrimType;
use crate::value::Value;
use std::fmt;

/// A malformed value: a message and the 1-based line and column where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError {
    pub message: String,
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ValueError {}

/// 1-based line and column (in bytes) of byte offset `pos` in `src`.
pub(crate) fn line_col(src: &[u8], pos: usize) -> (u32, u32) {
    let pos = pos.min(src.len());
    let before = &src[..pos];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    (line as u32, (pos - line_start) as u32 + 1)
}

/// Read all values in `input`, each in the text or the binary format.
pub fn parse_values(input: &[u8]) -> Result<Vec<Value>, ValueError> {
    let mut reader = Reader::new(input, 0, input.len());
    let mut values = Vec::new();
    loop {
        reader.skip_space();
        if reader.at_end() {
            return Ok(values);
        }
        if reader.peek() == Some(b'b') {
            let start = reader.pos();
            let (v, used) = read_binary(&input[start..]).map_err(|msg| {
                let (line, col) = line_col(input, start);
                ValueError {
                    message: format!("binary value: {msg}"),
                    line,
                    col,
                }
            })?;
            reader.set_pos(start + used);
            values.push(v);
        } else {
            values.push(reader.parse_value()?);
        }
    }
}

/// Parse a value type such as `[10][2]f32` or `i64` into its shape and element type.
pub fn parse_value_type(s: &str) -> Result<(Vec<usize>, PrimType), ValueError> {
    let mut reader = Reader::new(s.as_bytes(), 0, s.len());
    reader.skip_space();
    let t = reader.parse_value_type()?;
    reader.skip_space();
    if !reader.at_end() {
        return Err(reader.error("unexpected text after the type"));
    }
    Ok(t)
}

/// The type of a value with the given shape and element type, like `[3][2]f32`.
pub fn type_text(shape: &[usize], elem: PrimType) -> String {
    let mut s: String = shape.iter().map(|d| format!("[{d}]")).collect();
    s.push_str(elem.name());
    s
}

/// Whether `v` has exactly this shape and element type.
pub fn value_type_matches(v: &Value, shape: &[usize], elem: PrimType) -> bool {
    v.elem_type() == elem && v.shape() == shape
}

/// All values written in the text format, separated by newlines (each value on its own line).
pub fn write_text_all(vs: &[Value]) -> String {
    let mut s = String::new();
    for v in vs {
        s.push_str(&write_text(v));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::{FloatType, IntType, PrimValue};
    use crate::value::{ArrayValue, Buffer};
    use half::f16;

    fn one(s: &str) -> Value {
        let vs = parse_values(s.as_bytes()).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(vs.len(), 1, "{s}");
        vs.into_iter().next().unwrap()
    }
    fn err(s: &str) -> ValueError {
        match parse_values(s.as_bytes()) {
            Ok(v) => panic!("{s} parsed as {v:?}"),
            Err(e) => e,
        }
    }
    fn arr(shape: Vec<usize>, data: Buffer) -> Value {
        Value::Array(ArrayValue::new(shape, data))
    }

    #[test]
    fn scalars() {
        assert_eq!(one("1i32"), Value::Scalar(PrimValue::I32(1)));
        assert_eq!(one("3"), Value::Scalar(PrimValue::I32(3)));
        assert_eq!(one("-3i8"), Value::Scalar(PrimValue::I8(-3)));
        assert_eq!(one("+3i16"), Value::Scalar(PrimValue::I16(3)));
        assert_eq!(one("255u8"), Value::Scalar(PrimValue::U8(255)));
        assert_eq!(one("1_000i64"), Value::Scalar(PrimValue::I64(1000)));
        assert_eq!(one("0x1Fi32"), Value::Scalar(PrimValue::I32(31)));
        assert_eq!(one("-0x10i64"), Value::Scalar(PrimValue::I64(-16)));
        assert_eq!(one("0b101u16"), Value::Scalar(PrimValue::U16(5)));
        assert_eq!(
            one("18446744073709551615u64"),
            Value::Scalar(PrimValue::U64(u64::MAX))
        );
        assert_eq!(one("-128i8"), Value::Scalar(PrimValue::I8(-128)));
        assert_eq!(
            one("-9223372036854775808i64"),
            Value::Scalar(PrimValue::I64(i64::MIN))
        );
        // Hexadecimal and binary values may be bit patterns of a signed type's width.
        assert_eq!(one("0xffi8"), Value::Scalar(PrimValue::I8(-1)));
        assert_eq!(one("0b10000000i8"), Value::Scalar(PrimValue::I8(-128)));
        assert_eq!(one("0xffu8"), Value::Scalar(PrimValue::U8(255)));
        assert_eq!(one("1.5f32"), Value::Scalar(PrimValue::F32(1.5)));
        assert_eq!(one("2e3f64"), Value::Scalar(PrimValue::F64(2000.0)));
        assert_eq!(one("2.5E-1"), Value::Scalar(PrimValue::F64(0.25)));
        assert_eq!(one("1.0"), Value::Scalar(PrimValue::F64(1.0)));
        assert_eq!(one("3f32"), Value::Scalar(PrimValue::F32(3.0)));
        assert_eq!(
            one("-0.5f16"),
            Value::Scalar(PrimValue::F16(f16::from_f32(-0.5)))
        );
        assert_eq!(one("true"), Value::Scalar(PrimValue::Bool(true)));
        assert_eq!(one("false"), Value::Scalar(PrimValue::Bool(false)));
        assert_eq!(one("f32.inf"), Value::Scalar(PrimValue::F32(f32::INFINITY)));
        assert_eq!(
            one("-f64.inf"),
            Value::Scalar(PrimValue::F64(f64::NEG_INFINITY))
        );
        match one("f64.nan") {
            Value::Scalar(PrimValue::F64(x)) => assert!(x.is_nan()),
            v => panic!("{v:?}"),
        }
        assert_eq!(one("0.1f32"), Value::Scalar(PrimValue::F32(0.1)));
    }

    /// Values out of range of their type are errors naming the value and the type (they used
    /// to wrap around: `3000000000` was read as the i32 `-1294967296`).
    #[test]
    fn out_of_range_values() {
        let cases = [
            (
                "3000000000",
                "value 3000000000 is out of range for type i32",
            ),
            (
                "-2147483649",
                "value -2147483649 is out of range for type i32",
            ),
            ("256u8", "value 256 is out of range for type u8"),
            ("-1u8", "value -1 is out of range for type u8"),
            ("128i8", "value 128 is out of range for type i8"),
            ("0x100u8", "value 256 is out of range for type u8"),
            ("0x1ffi8", "value 511 is out of range for type i8"),
            ("-0xffi8", "value -255 is out of range for type i8"),
            ("-1u64", "value -1 is out of range for type u64"),
            ("1e39f32", "value 1e39 is out of range for type f32"),
            ("70000f16", "value 70000 is out of range for type f16"),
        ];
        for (text, msg) in cases {
            let e = err(text);
            assert!(e.message.starts_with(msg), "{text}: {}", e.message);
            assert_eq!((e.line, e.col), (1, 1), "{text}");
        }
        // In an array, at the element.
        let e = err("[1i16, 2, 40000]");
        assert_eq!((e.line, e.col), (1, 11));
        assert!(e
            .message
            .starts_with("value 40000 is out of range for type i16"));
        assert_eq!(one("f32.inf"), Value::Scalar(PrimValue::F32(f32::INFINITY)));
        assert_eq!(one("65504f16"), Value::Scalar(PrimValue::F16(f16::MAX)));
    }

    #[test]
    fn arrays() {
        assert_eq!(one("[1, 2, 3]"), arr(vec![3], Buffer::I32(vec![1, 2, 3])));
        assert_eq!(one("[1,2,3,]"), arr(vec![3], Buffer::I32(vec![1, 2, 3])));
        assert_eq!(
            one("[[1.0f32, 2.0f32], [3f32, 4f32]]"),
            arr(vec![2, 2], Buffer::F32(vec![1.0, 2.0, 3.0, 4.0]))
        );
        assert_eq!(one("empty([0]i32)"), arr(vec![0], Buffer::I32(vec![])));
        assert_eq!(
            one("empty([3][0]f32)"),
            arr(vec![3, 0], Buffer::F32(vec![]))
        );
        assert_eq!(
            one("[empty([0]i64), empty([0]i64)]"),
            arr(vec![2, 0], Buffer::I64(vec![]))
        );
        assert_eq!(one("\"ab\""), arr(vec![2], Buffer::U8(vec![b'a', b'b'])));
        assert_eq!(
            one("[true, false]"),
            arr(vec![2], Buffer::Bool(vec![true, false]))
        );
    }

    #[test]
    fn first_element_decides_type() {
        assert_eq!(
            one("[1.0f32, 2.0, 3]"),
            arr(vec![3], Buffer::F32(vec![1.0, 2.0, 3.0]))
        );
        assert_eq!(
            one("[4f32, 5, 6]"),
            arr(vec![3], Buffer::F32(vec![4.0, 5.0, 6.0]))
        );
        assert_eq!(
            one("[[1i64, 2], [3, 4]]"),
            arr(vec![2, 2], Buffer::I64(vec![1, 2, 3, 4]))
        );
        assert_eq!(one("[1u8, 0x10]"), arr(vec![2], Buffer::U8(vec![1, 16])));
        // The first element's type applies to the others' range too.
        assert_eq!(
            err("[1u8, 256]").message,
            "value 256 is out of range for type u8 (0 to 255)"
        );
        assert_eq!(
            one("[1f16, 0.5]"),
            arr(vec![2], Buffer::F16(vec![f16::ONE, f16::from_f32(0.5)]))
        );
        assert!(err("[1, 2i64]").message.contains("multiple types"));
        assert!(err("[1i32, 2.5]").message.contains("multiple types"));
        assert!(err("[true, 1]").message.contains("multiple types"));
        // Separate top-level values do not share a type.
        assert_eq!(
            parse_values(b"1f32 2").unwrap()[1],
            Value::Scalar(PrimValue::I32(2))
        );
    }

    #[test]
    fn sequences_and_comments() {
        let vs = parse_values(b"1 -- one\n [2i64]\n-- comment\n3.0f32 4").unwrap();
        assert_eq!(
            vs,
            vec![
                Value::Scalar(PrimValue::I32(1)),
                arr(vec![1], Buffer::I64(vec![2])),
                Value::Scalar(PrimValue::F32(3.0)),
                Value::Scalar(PrimValue::I32(4)),
            ]
        );
        assert_eq!(parse_values(b"  \n -- nothing\n").unwrap(), vec![]);
    }

    #[test]
    fn errors() {
        let e = err("[1, 2i64]");
        assert!(e.message.contains("element 1"), "{e}");
        assert_eq!((e.line, e.col), (1, 1));
        let e = err("[[1], [2, 3]]");
        assert!(e.message.contains("irregular"), "{e}");
        let e = err("\n  [1, 2");
        assert_eq!(e.line, 2, "{e}");
        assert!(err("[]").message.contains("empty"));
        assert!(err("empty([2]i32)").message.contains("zero"));
        assert!(err("1.").message.contains("digit"));
        assert!(err("1i3").message.contains("suffix"));
        assert!(err("foo").message.contains("expected a value"));
        assert!(err("empty([0]i33)").message.contains("type"));
        assert!(err("99999999999999999999999999999999999999999i64")
            .message
            .contains("too large"));
    }

    #[test]
    fn float_text() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1.0f64"),
            (0.1, "0.1f64"),
            (-0.5, "-0.5f64"),
            (0.0, "0.0f64"),
            (-0.0, "-0.0f64"),
            (1e-10, "1.0e-10f64"),
            (0.05, "5.0e-2f64"),
            (1234567.0, "1234567.0f64"),
            (12345678.0, "1.2345678e7f64"),
            (1e7, "1.0e7f64"),
            (100.0, "100.0f64"),
            (123.45, "123.45f64"),
            (f64::NAN, "f64.nan"),
            (f64::INFINITY, "f64.inf"),
            (f64::NEG_INFINITY, "-f64.inf"),
        ];
        for &(x, s) in cases {
            assert_eq!(write_text(&Value::Scalar(PrimValue::F64(x))), s);
        }
        assert_eq!(write_text(&Value::Scalar(PrimValue::F32(1.0))), "1.0f32");
        assert_eq!(write_text(&Value::Scalar(PrimValue::F32(0.1))), "0.1f32");
        assert_eq!(
            write_text(&Value::Scalar(PrimValue::F32(f32::NAN))),
            "f32.nan"
        );
        assert_eq!(
            write_text(&Value::Scalar(PrimValue::F16(f16::from_f32(0.5)))),
            "0.5f16"
        );
        assert_eq!(format_float(FloatType::F32, 3.0e-5), "3.0e-5");
    }

    #[test]
    fn text_output() {
        assert_eq!(write_text(&Value::Scalar(PrimValue::I32(-1))), "-1i32");
        assert_eq!(
            write_text(&Value::Scalar(PrimValue::U64(u64::MAX))),
            "18446744073709551615u64"
        );
        assert_eq!(write_text(&Value::Scalar(PrimValue::Bool(true))), "true");
        assert_eq!(
            write_text(&arr(vec![3], Buffer::I32(vec![1, 2, 3]))),
            "[1i32, 2i32, 3i32]"
        );
        assert_eq!(
            write_text(&arr(vec![2, 1], Buffer::I32(vec![1, 2]))),
            "[[1i32], [2i32]]"
        );
        assert_eq!(
            write_text(&arr(vec![0], Buffer::I32(vec![]))),
            "empty([0]i32)"
        );
        assert_eq!(
            write_text(&arr(vec![2, 0], Buffer::F32(vec![]))),
            "empty([2][0]f32)"
        );
        assert_eq!(
            write_text(&arr(vec![2], Buffer::Bool(vec![true, false]))),
            "[true, false]"
        );
    }

    fn sample_values() -> Vec<Value> {
        vec![
            Value::Scalar(PrimValue::I8(-5)),
            Value::Scalar(PrimValue::U16(65535)),
            Value::Scalar(PrimValue::I64(i64::MIN)),
            Value::Scalar(PrimValue::F16(f16::from_f32(0.1))),
            Value::Scalar(PrimValue::F32(-3.25e-20)),
            Value::Scalar(PrimValue::F64(std::f64::consts::PI)),
            Value::Scalar(PrimValue::F64(f64::NEG_INFINITY)),
            Value::Scalar(PrimValue::Bool(false)),
            arr(
                vec![2, 3],
                Buffer::F64(vec![0.1, 1e300, -2.5, 7.0, 1e-300, 123456789.125]),
            ),
            arr(vec![3], Buffer::U32(vec![0, 1, u32::MAX])),
            arr(vec![2, 0, 3], Buffer::I16(vec![])),
            arr(vec![1, 1, 2], Buffer::Bool(vec![true, false])),
            arr(
                vec![4],
                Buffer::F32(vec![f32::MIN_POSITIVE, f32::MAX, 1.0e-45, 16777217.0]),
            ),
        ]
    }

    #[test]
    fn text_round_trip() {
        for v in sample_values() {
            let s = write_text(&v);
            assert_eq!(one(&s), v, "{s}");
        }
        let all = write_text_all(&sample_values());
        assert_eq!(parse_values(all.as_bytes()).unwrap(), sample_values());
    }

    /// A writer that takes `room` bytes, then fails.
    struct Full {
        got: Vec<u8>,
        room: usize,
    }

    impl std::io::Write for Full {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.got.len() + b.len() > self.room {
                return Err(std::io::Error::other("full"));
            }
            self.got.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_large_value_is_written_in_pieces_as_write_text_makes_it() {
        // About 1.6 MB of text: written in pieces, the same as write_text's whole string.
        let big = arr(
            vec![300, 300],
            Buffer::F64((0..90_000).map(|i| f64::from(i) / 7.0 - 1e4).collect()),
        );
        for v in sample_values().into_iter().chain([big]) {
            let mut w = Full {
                got: Vec::new(),
                room: usize::MAX,
            };
            write_text_line(&v, &mut w).unwrap();
            assert_eq!(String::from_utf8(w.got).unwrap(), write_text(&v) + "\n");
        }
        // A failing writer's error is returned, and nothing after it is written.
        let big = arr(vec![100_000], Buffer::I64((0..100_000).collect()));
        let mut w = Full {
            got: Vec::new(),
            room: 100_000,
        };
        assert!(write_text_line(&big, &mut w).is_err());
        assert!(w.got.len() <= 100_000);
    }

    #[test]
    fn binary_round_trip_and_mixing() {
        let mut bytes = Vec::new();
        for (i, v) in sample_values().iter().enumerate() {
            if i % 2 == 0 {
                write_binary(v, &mut bytes);
            } else {
                bytes.extend_from_slice(write_text(v).as_bytes());
            }
            bytes.extend_from_slice(b" \n");
        }
        assert_eq!(parse_values(&bytes).unwrap(), sample_values());
    }

    #[test]
    fn binary_layout() {
        let mut out = Vec::new();
        write_binary(&arr(vec![2], Buffer::I32(vec![1, -1])), &mut out);
        let mut expected = vec![b'b', 2, 1];
        expected.extend_from_slice(b" i32");
        expected.extend_from_slice(&2u64.to_le_bytes());
        expected.extend_from_slice(&1i32.to_le_bytes());
        expected.extend_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(out, expected);
        let mut out = Vec::new();
        write_binary(&Value::Scalar(PrimValue::Bool(true)), &mut out);
        assert_eq!(out, b"b\x02\x00bool\x01");
        let mut out = Vec::new();
        write_binary(&Value::Scalar(PrimValue::int(IntType::U8, 7)), &mut out);
        assert_eq!(out, b"b\x02\x00  u8\x07");
    }

    #[test]
    fn binary_errors() {
        assert!(err("b\x01\x00 i32\x01\x00\x00\x00")
            .message
            .contains("version"));
        assert!(err("b\x02\x00 i33\x01\x00\x00\x00")
            .message
            .contains("type"));
        assert!(err("b\x02\x00 i32\x01\x00").message.contains("truncated"));
        assert!(err("b\x02").message.contains("truncated"));
        let mut bytes = b"b\x02\x01 f64".to_vec();
        bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_values(&bytes).is_err());
    }

    #[test]
    fn reads_a_futhark_binary_data_file() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../futhark-ref/tests/ad/reducebyindexminmax7.in");
        let Ok(bytes) = std::fs::read(path) else {
            return; // The reference tree is not available here.
        };
        let vs = parse_values(&bytes).unwrap();
        let types: Vec<(usize, PrimType)> = vs
            .iter()
            .map(|v| (v.shape().len(), v.elem_type()))
            .collect();
        assert_eq!(
            types,
            vec![(1, PrimType::I64), (2, PrimType::F32), (2, PrimType::F32)]
        );
        assert_eq!(vs[0].shape()[0], vs[2].shape()[0]);
        assert_eq!(vs[1].shape()[1], vs[2].shape()[1]);
        // Writing it back in the binary format gives the same bytes.
        let mut out = Vec::new();
        for v in &vs {
            write_binary(v, &mut out);
        }
        assert_eq!(out, bytes);
    }

    #[test]
    fn value_types() {
        assert_eq!(
            parse_value_type("[10][2]f32").unwrap(),
            (vec![10, 2], PrimType::F32)
        );
        assert_eq!(parse_value_type("bool").unwrap(), (vec![], PrimType::Bool));
        assert!(parse_value_type("[x]f32").is_err());
        assert_eq!(type_text(&[3, 2], PrimType::I64), "[3][2]i64");
        let v = one("[[1f32],[2f32]]");
        assert!(value_type_matches(&v, &[2, 1], PrimType::F32));
        assert!(!value_type_matches(&v, &[2], PrimType::F32));
    }

    fn same_scalar(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Scalar(x), Value::Scalar(y)) => match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) if p.is_nan() && q.is_nan() => x.prim_type() == y.prim_type(),
                _ => {
                    x == y
                        && x.as_f64().map(|v| v.is_sign_negative())
                            == y.as_f64().map(|v| v.is_sign_negative())
                }
            },
            _ => a == b,
        }
    }

    proptest::proptest! {
        #[test]
        fn floats_round_trip_through_text(bits64: u64, bits32: u32, bits16: u16) {
            for v in [
                Value::Scalar(PrimValue::F64(f64::from_bits(bits64))),
                Value::Scalar(PrimValue::F32(f32::from_bits(bits32))),
                Value::Scalar(PrimValue::F16(f16::from_bits(bits16))),
            ] {
                let s = write_text(&v);
                let back = one(&s);
                proptest::prop_assert!(same_scalar(&back, &v), "{} read back as {:?}", s, back);
            }
        }

        #[test]
        fn ints_round_trip(x: i64, y: u64, z: i8) {
            let v = arr(vec![3], Buffer::I64(vec![x, y as i64, z as i64]));
            proptest::prop_assert_eq!(one(&write_text(&v)), v.clone());
            let mut b = Vec::new();
            write_binary(&v, &mut b);
            proptest::prop_assert_eq!(parse_values(&b).unwrap(), vec![v]);
            let u = Value::Scalar(PrimValue::U64(y));
            proptest::prop_assert_eq!(one(&write_text(&u)), u);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes: Vec<u8>) {
            let _ = parse_values(&bytes);
            let mut with_b = vec![b'b', 2];
            with_b.extend_from_slice(&bytes);
            let _ = parse_values(&with_b);
        }
    }

    #[test]
    fn never_panics_on_garbage() {
        let inputs: &[&[u8]] = &[
            b"[",
            b"]",
            b"[1,,2]",
            b"empty(",
            b"empty([",
            b"empty([0]",
            b"\"abc",
            b"\"\\q\"",
            b"-",
            b"0x",
            b"1e",
            b"1e+",
            b"f32.",
            b"b",
            b"\xff\xfe",
            b"[1 2]",
            b"--",
            b"1.5f33",
            b"[[[[",
            b"empty([0]i32",
        ];
        for s in inputs {
            let _ = parse_values(s);
        }
    }
}
