//! The textual value format: a reader over bytes (also used by the test-spec parser, which
//! parses values inside `input { ... }` blocks) and the writer.

use super::{line_col, ValueError};
use crate::prim::{FloatType, IntType, PrimType, PrimValue};
use crate::value::{ArrayValue, Buffer, Value};
use half::f16;

/// A cursor over `src[pos..end]` that reads textual values. Positions are absolute offsets in
/// `src`, so errors report line and column in the whole of `src`.
pub(crate) struct Reader<'a> {
    src: &'a [u8],
    pos: usize,
    end: usize,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Appends `src` to `dst` if both hold the same element type.
fn extend_buffer(dst: &mut Buffer, src: &Buffer) -> bool {
    macro_rules! ext {
        ($($v:ident),*) => {
            match (dst, src) {
                $((Buffer::$v(d), Buffer::$v(s)) => { d.extend_from_slice(s); true })*
                _ => false,
            }
        };
    }
    ext!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64)
}

impl<'a> Reader<'a> {
    pub(crate) fn new(src: &'a [u8], pos: usize, end: usize) -> Reader<'a> {
        let end = end.min(src.len());
        Reader {
            src,
            pos: pos.min(end),
            end,
        }
    }
    /// The whole input.
    pub(crate) fn src(&self) -> &'a [u8] {
        self.src
    }
    /// The text of `src[start..end]` (empty if not UTF-8).
    pub(crate) fn slice(&self, start: usize, end: usize) -> &'a str {
        self.src
            .get(start..end)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }
    pub(crate) fn set_pos(&mut self, pos: usize) {
        self.pos = pos.min(self.end);
    }
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.end
    }
    pub(crate) fn peek(&self) -> Option<u8> {
        self.peek_at(0)
    }
    fn peek_at(&self, k: usize) -> Option<u8> {
        let i = self.pos.checked_add(k)?;
        if i < self.end {
            Some(self.src[i])
        } else {
            None
        }
    }
    pub(crate) fn starts_with(&self, s: &str) -> bool {
        self.src[self.pos..self.end].starts_with(s.as_bytes())
    }
    /// Consume `s` if the input continues with it.
    pub(crate) fn eat(&mut self, s: &str) -> bool {
        if self.starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }
    /// An error at the current position.
    pub(crate) fn error(&self, msg: impl Into<String>) -> ValueError {
        self.error_at(self.pos, msg)
    }
    pub(crate) fn error_at(&self, pos: usize, msg: impl Into<String>) -> ValueError {
        let (line, col) = line_col(self.src, pos);
        ValueError {
            message: msg.into(),
            line,
            col,
        }
    }
    /// A short description of what is at the current position, for error messages.
    pub(crate) fn found(&self) -> String {
        match self.peek() {
            None => "end of input".to_string(),
            Some(b) if is_ident_byte(b) => {
                let mut e = self.pos;
                while e < self.end && is_ident_byte(self.src[e]) && e - self.pos < 20 {
                    e += 1;
                }
                format!("`{}`", String::from_utf8_lossy(&self.src[self.pos..e]))
            }
            Some(b) if b.is_ascii_graphic() => format!("`{}`", b as char),
            Some(b) => format!("byte 0x{b:02x}"),
        }
    }

    /// The longest run of bytes satisfying `f` at the current position (not consumed).
    pub(crate) fn peek_while(&self, f: impl Fn(u8) -> bool) -> &'a str {
        let mut e = self.pos;
        while e < self.end && f(self.src[e]) {
            e += 1;
        }
        std::str::from_utf8(&self.src[self.pos..e]).unwrap_or("")
    }
    /// Consume the longest run of bytes satisfying `f`.
    pub(crate) fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &'a str {
        let s = self.peek_while(f);
        self.pos += s.len();
        s
    }
    /// Consume the rest of the current line (not the newline).
    pub(crate) fn rest_of_line(&mut self) -> String {
        let mut e = self.pos;
        while e < self.end && self.src[e] != b'\n' {
            e += 1;
        }
        let s = String::from_utf8_lossy(&self.src[self.pos..e]).into_owned();
        self.pos = e;
        s
    }
    /// Skip spaces and tabs, not newlines.
    pub(crate) fn skip_hspace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Skip whitespace and `--` comments.
    pub(crate) fn skip_space(&mut self) {
        loop {
            while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
                self.pos += 1;
            }
            if self.starts_with("--") {
                while self.peek().is_some_and(|b| b != b'\n') {
                    self.pos += 1;
                }
            } else {
                return;
            }
        }
    }

    /// Parse one value and skip the space after it.
    pub(crate) fn parse_value(&mut self) -> Result<Value, ValueError> {
        let v = self.parse_value_inner(0, &mut None)?;
        self.skip_space();
        Ok(v)
    }

    /// `hint` is the type of the first primitive element of the enclosing array literal: the
    /// type unsuffixed literals in it take (as in futhark-data 1.1.4 and `futhark test`).
    fn parse_value_inner(
        &mut self,
        depth: usize,
        hint: &mut Option<PrimType>,
    ) -> Result<Value, ValueError> {
        if depth > 64 {
            return Err(self.error("arrays nested too deeply"));
        }
        match self.peek() {
            Some(b'[') => self.parse_array(depth, hint),
            Some(b'"') => self.parse_string(),
            _ if self.starts_with("empty") && !self.peek_at(5).is_some_and(is_ident_byte) => {
                self.parse_empty()
            }
            _ => {
                let p = self.parse_prim_with(*hint)?;
                hint.get_or_insert(p.prim_type());
                Ok(Value::Scalar(p))
            }
        }
    }

    fn parse_array(
        &mut self,
        depth: usize,
        hint: &mut Option<PrimType>,
    ) -> Result<Value, ValueError> {
        let start = self.pos;
        self.pos += 1; // '['
        let mut elems: Vec<(usize, Value)> = Vec::new();
        loop {
            self.skip_space();
            if self.eat("]") {
                break;
            }
            let at = self.pos;
            let v = self.parse_value_inner(depth + 1, hint)?;
            elems.push((at, v));
            self.skip_space();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                break;
            }
            return Err(self.error(format!(
                "expected `,` or `]` in array, found {}",
                self.found()
            )));
        }
        let Some((_, first)) = elems.first() else {
            return Err(self.error_at(
                start,
                "empty array literal `[]`: write `empty([0]t)` with the element type t",
            ));
        };
        let elem_type = first.elem_type();
        let row_shape = first.shape().to_vec();
        for (i, (at, v)) in elems.iter().enumerate().skip(1) {
            if v.elem_type() != elem_type || v.shape() != row_shape.as_slice() {
                let what = if v.elem_type() != elem_type {
                    "has elements of multiple types"
                } else {
                    "is irregular"
                };
                let (l, c) = line_col(self.src, *at);
                return Err(self.error_at(
                    start,
                    format!(
                        "array {what}: element {i} (at {l}:{c}) has type {}, but element 0 has type {}",
                        v.type_name(),
                        first.type_name()
                    ),
                ));
            }
        }
        let row_len: usize = row_shape.iter().product();
        let mut data = Buffer::with_capacity(elem_type, row_len.saturating_mul(elems.len()));
        for (_, v) in &elems {
            let ok = match v {
                Value::Scalar(p) => data.push(*p),
                Value::Array(a) => extend_buffer(&mut data, &a.data),
            };
            if !ok {
                return Err(self.error_at(start, "internal error: array element of the wrong type"));
            }
        }
        let mut shape = vec![elems.len()];
        shape.extend(row_shape);
        Ok(Value::Array(ArrayValue::new(shape, data)))
    }

    fn parse_string(&mut self) -> Result<Value, ValueError> {
        self.pos += 1; // '"'
        let mut bytes = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error("unterminated string literal"));
            };
            self.pos += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let (ch, end) = crate::syntax::lexer::char_escape(self.src, self.pos)
                        .map_err(|(msg, _)| self.error_at(self.pos - 1, msg))?;
                    self.pos = end;
                    let mut buf = [0u8; 4];
                    bytes.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => bytes.push(b),
            }
        }
        let n = bytes.len();
        Ok(Value::Array(ArrayValue::new(vec![n], Buffer::U8(bytes))))
    }

    fn parse_empty(&mut self) -> Result<Value, ValueError> {
        let start = self.pos;
        self.pos += 5; // "empty"
        self.skip_space();
        if !self.eat("(") {
            return Err(self.error(format!(
                "expected `(` after `empty`, found {}",
                self.found()
            )));
        }
        self.skip_space();
        let (shape, t) = self.parse_value_type()?;
        self.skip_space();
        if !self.eat(")") {
            return Err(self.error(format!("expected `)`, found {}", self.found())));
        }
        if shape.is_empty() || shape.iter().product::<usize>() != 0 {
            return Err(self.error_at(
                start,
                "empty() needs an array type with at least one dimension of size zero",
            ));
        }
        Ok(Value::Array(ArrayValue::new(
            shape,
            Buffer::with_capacity(t, 0),
        )))
    }

    /// A value type: `[d1]...[dn]t`.
    pub(crate) fn parse_value_type(&mut self) -> Result<(Vec<usize>, PrimType), ValueError> {
        let mut shape = Vec::new();
        while self.eat("[") {
            self.skip_space();
            let at = self.pos;
            let mut d: usize = 0;
            let mut any = false;
            while let Some(b) = self.peek().filter(|b| b.is_ascii_digit() || *b == b'_') {
                self.pos += 1;
                if b == b'_' {
                    continue;
                }
                any = true;
                d = d
                    .checked_mul(10)
                    .and_then(|d| d.checked_add((b - b'0') as usize))
                    .ok_or_else(|| self.error_at(at, "dimension too large"))?;
            }
            if !any {
                return Err(
                    self.error(format!("expected a dimension size, found {}", self.found()))
                );
            }
            self.skip_space();
            if !self.eat("]") {
                return Err(self.error(format!("expected `]`, found {}", self.found())));
            }
            shape.push(d);
        }
        let at = self.pos;
        let mut e = self.pos;
        while e < self.end && is_ident_byte(self.src[e]) {
            e += 1;
        }
        let name = String::from_utf8_lossy(&self.src[self.pos..e]).into_owned();
        match PrimType::from_name(&name) {
            Some(t) => {
                self.pos = e;
                Ok((shape, t))
            }
            None => Err(self.error_at(
                at,
                format!("expected a primitive type, found {}", self.found()),
            )),
        }
    }

    fn check_no_suffix_garbage(&self, start: usize) -> Result<(), ValueError> {
        match self.peek() {
            Some(b) if is_ident_byte(b) || b == b'.' => Err(self.error_at(
                start,
                format!("invalid literal: unexpected {} (valid suffixes are i8..i64, u8..u64, f16, f32, f64)", self.found()),
            )),
            _ => Ok(()),
        }
    }

    /// A primitive value: an integer, float or boolean literal.
    pub(crate) fn parse_prim(&mut self) -> Result<PrimValue, ValueError> {
        self.parse_prim_with(None)
    }

    /// A primitive value; an unsuffixed integer literal takes the type `hint` if that is a
    /// numeric type, an unsuffixed decimal literal if it is a float type.
    fn parse_prim_with(&mut self, hint: Option<PrimType>) -> Result<PrimValue, ValueError> {
        let start = self.pos;
        for t in FloatType::ALL {
            let name = t.name();
            for (prefix, x) in [
                ("", f64::NAN),
                ("", f64::INFINITY),
                ("-", f64::NEG_INFINITY),
            ] {
                let word = if x.is_nan() {
                    format!("{name}.nan")
                } else {
                    format!("{prefix}{name}.inf")
                };
                if self.starts_with(&word) {
                    self.pos += word.len();
                    self.check_no_suffix_garbage(start)?;
                    return Ok(PrimValue::float(t, x));
                }
            }
        }
        for (word, b) in [("true", true), ("false", false)] {
            if self.starts_with(word) && !self.peek_at(word.len()).is_some_and(is_ident_byte) {
                self.pos += word.len();
                return Ok(PrimValue::Bool(b));
            }
        }
        let negative = match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                true
            }
            Some(b'+') => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos = start;
            return Err(self.error(format!("expected a value, found {}", self.found())));
        }
        // Radix-prefixed integers.
        let radix = if self.starts_with("0x") || self.starts_with("0X") {
            16
        } else if self.starts_with("0b") || self.starts_with("0B") {
            2
        } else {
            10
        };
        if radix != 10 {
            self.pos += 2;
            let digits = self.take_digits(radix);
            if digits.is_empty() {
                return Err(self.error("expected digits after the radix prefix"));
            }
            return self.finish_int(start, negative, &digits, radix, hint);
        }
        let int_digits = self.take_digits(10);
        let mut text = String::new();
        if negative {
            text.push('-');
        }
        text.push_str(&int_digits);
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let frac = self.take_digits(10);
            if frac.is_empty() {
                return Err(self.error("expected a digit after `.`"));
            }
            text.push('.');
            text.push_str(&frac);
            is_float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            text.push('e');
            match self.peek() {
                Some(b'-') => {
                    self.pos += 1;
                    text.push('-');
                }
                Some(b'+') => self.pos += 1,
                _ => {}
            }
            let exp = self.take_digits(10);
            if exp.is_empty() {
                return Err(self.error("expected a digit in the exponent"));
            }
            text.push_str(&exp);
            is_float = true;
        }
        let float_suffix = FloatType::ALL
            .into_iter()
            .find(|t| self.starts_with(t.name()));
        if let Some(t) = float_suffix {
            self.pos += 3;
            self.check_no_suffix_garbage(start)?;
            return self.make_float(start, t, &text);
        }
        if is_float {
            self.check_no_suffix_garbage(start)?;
            let t = match hint {
                Some(PrimType::Float(t)) => t,
                _ => FloatType::F64,
            };
            return self.make_float(start, t, &text);
        }
        self.finish_int(start, negative, &int_digits, 10, hint)
    }

    /// Digits of the given radix with underscores allowed after the first; underscores removed.
    fn take_digits(&mut self, radix: u32) -> String {
        let mut s = String::new();
        while let Some(b) = self.peek() {
            if (b as char).is_digit(radix) {
                s.push(b as char);
            } else if b == b'_' && !s.is_empty() {
            } else {
                break;
            }
            self.pos += 1;
        }
        s
    }

    fn finish_int(
        &mut self,
        start: usize,
        negative: bool,
        digits: &str,
        radix: u32,
        hint: Option<PrimType>,
    ) -> Result<PrimValue, ValueError> {
        let mut mag: u128 = 0;
        for c in digits.chars() {
            let d = c.to_digit(radix).unwrap_or(0) as u128;
            mag = mag
                .checked_mul(radix as u128)
                .and_then(|m| m.checked_add(d))
                .filter(|m| *m <= u64::MAX as u128)
                .ok_or_else(|| self.error_at(start, "integer literal too large"))?;
        }
        let v = if negative {
            -(mag as i128)
        } else {
            mag as i128
        };
        let suffix = IntType::ALL.into_iter().find(|t| {
            self.starts_with(t.name())
                && !self
                    .peek_at(t.name().len())
                    .is_some_and(|b| b.is_ascii_digit())
        });
        let t = match suffix {
            Some(t) => {
                self.pos += t.name().len();
                t
            }
            None => match hint {
                Some(PrimType::Int(t)) => t,
                Some(PrimType::Float(ft)) => {
                    self.check_no_suffix_garbage(start)?;
                    let x = PrimValue::float(ft, v as f64);
                    if !x.as_f64().is_some_and(f64::is_finite) {
                        return Err(self.error_at(
                            start,
                            format!("value {v} is out of range for type {}", ft.name()),
                        ));
                    }
                    return Ok(x);
                }
                _ => IntType::I32,
            },
        };
        self.check_no_suffix_garbage(start)?;
        // In the range of the type (as a source literal: a hexadecimal or binary value may also
        // be any bit pattern of a signed type's width, `0xffi8` is `-1i8`).
        let pattern = radix != 10 && !negative && t.bit_pattern(v);
        if !t.contains(v) && !pattern {
            let (lo, hi) = t.min_max();
            return Err(self.error_at(
                start,
                format!(
                    "value {v} is out of range for type {} ({lo} to {hi})",
                    t.name()
                ),
            ));
        }
        Ok(PrimValue::int(t, v))
    }

    fn make_float(&self, start: usize, t: FloatType, text: &str) -> Result<PrimValue, ValueError> {
        let bad = || self.error_at(start, format!("invalid float literal `{text}`"));
        let x = self.parse_float(t, text).ok_or_else(bad)?;
        // A finite number that is too large for the type (`f32.inf` and `f32.nan` are written
        // as such).
        if !x.as_f64().is_some_and(f64::is_finite) {
            return Err(self.error_at(
                start,
                format!("value {text} is out of range for type {}", t.name()),
            ));
        }
        Ok(x)
    }

    fn parse_float(&self, t: FloatType, text: &str) -> Option<PrimValue> {
        Some(match t {
            FloatType::F16 => PrimValue::F16(f16::from_f64(text.parse::<f64>().ok()?)),
            FloatType::F32 => PrimValue::F32(text.parse::<f32>().ok()?),
            FloatType::F64 => PrimValue::F64(text.parse::<f64>().ok()?),
        })
    }
}

/// A fixed-capacity byte buffer that Rust's float formatting writes into, so that printing a
/// float allocates nothing (printing a large array is millions of them). 40 bytes hold the
/// longest `{:e}` of a non-negative `f64` ("4.9406564584124654e-324", 23 bytes).
struct SciBuf {
    buf: [u8; 40],
    len: usize,
}

impl std::fmt::Write for SciBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The shortest round-trip decimal digits of a positive finite `x` of type `t` (`f16` through
/// `f32`), with trailing zeros dropped, and the exponent `e` such that `x = 0.digits * 10^e`:
/// `(digits, count, e)`, read from Rust's `{:e}` formatting ("1.25e3" is `125`, `e = 4`).
fn shortest_digits(t: FloatType, x: f64) -> ([u8; 40], usize, i32) {
    use std::fmt::Write;
    let mut sci = SciBuf {
        buf: [0; 40],
        len: 0,
    };
    // Cannot fail: the buffer holds the longest output (see SciBuf).
    let _ = match t {
        FloatType::F16 | FloatType::F32 => write!(sci, "{:e}", x as f32),
        FloatType::F64 => write!(sci, "{:e}", x),
    };
    let text = &sci.buf[..sci.len];
    let (mant, exp) = match text.iter().position(|&b| b == b'e') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, &b"0"[..]),
    };
    let mut digits = [0u8; 40];
    let mut n = 0;
    for &b in mant.iter().filter(|b| b.is_ascii_digit()) {
        digits[n] = b;
        n += 1;
    }
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    if n == 0 {
        digits[0] = b'0';
        n = 1;
    }
    let e = std::str::from_utf8(exp)
        .ok()
        .and_then(|e| e.parse::<i32>().ok())
        .unwrap_or(0);
    (digits, n, e + 1)
}

/// Appends a float as Futhark prints it, without the type suffix: `1.0`, `-2.5e-3`; NaN and
/// infinities as `f32.nan`, `-f64.inf` and so on. The digits are the shortest that read back
/// as the same value of type `t` (`f16` values are shown through `f32`, as Haskell does), laid
/// out as Haskell's `show`: positional for exponents 0 to 7 (`0.ds * 10^e`), else scientific.
fn write_float(out: &mut String, t: FloatType, x: f64) {
    if x.is_nan() {
        out.push_str(t.name());
        out.push_str(".nan");
        return;
    }
    if x.is_infinite() {
        if x < 0.0 {
            out.push('-');
        }
        out.push_str(t.name());
        out.push_str(".inf");
        return;
    }
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    let (digits, n, e) = shortest_digits(t, x.abs());
    let ds = &digits[..n];
    // (The digits are ASCII, read from a `str`.)
    let push = |out: &mut String, bytes: &[u8]| {
        out.push_str(std::str::from_utf8(bytes).unwrap_or_default());
    };
    if !(0..=7).contains(&e) {
        push(out, &ds[..1]);
        out.push('.');
        if n > 1 {
            push(out, &ds[1..]);
        } else {
            out.push('0');
        }
        out.push('e');
        // (An i32 is written without allocating through String's fmt::Write.)
        let _ = std::fmt::Write::write_fmt(out, format_args!("{}", e - 1));
    } else if e == 0 {
        out.push_str("0.");
        push(out, ds);
    } else {
        let e = e as usize;
        if n > e {
            push(out, &ds[..e]);
            out.push('.');
            push(out, &ds[e..]);
        } else {
            push(out, ds);
            out.extend(std::iter::repeat_n('0', e - n));
            out.push_str(".0");
        }
    }
}

/// A float printed as Futhark does, without the type suffix (see [`write_float`]).
pub fn format_float(t: FloatType, x: f64) -> String {
    let mut s = String::new();
    write_float(&mut s, t, x);
    s
}

/// Appends a scalar in Futhark's text format, with its type suffix (`1i32`, `2.5f32`, `true`).
fn write_prim(out: &mut String, p: PrimValue) {
    let float = |out: &mut String, t: FloatType, x: f64| {
        write_float(out, t, x);
        if x.is_finite() {
            out.push_str(t.name());
        }
    };
    match p {
        PrimValue::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        PrimValue::F16(x) => float(out, FloatType::F16, x.to_f64()),
        PrimValue::F32(x) => float(out, FloatType::F32, x as f64),
        PrimValue::F64(x) => float(out, FloatType::F64, x),
        p => {
            let _ = std::fmt::Write::write_fmt(
                out,
                format_args!("{}{}", p.as_i128().unwrap_or(0), p.prim_type().name()),
            );
        }
    }
}

/// A scalar in Futhark's text format, with its type suffix (`1i32`, `2.5f32`, `true`).
pub fn format_prim(p: PrimValue) -> String {
    let mut s = String::new();
    write_prim(&mut s, p);
    s
}

/// Appends the array of `shape` at `offset` of `data`; `flush` is offered the text so far
/// after each element (to write it out and clear it: a large array is not held whole).
fn write_array(
    out: &mut String,
    data: &Buffer,
    shape: &[usize],
    offset: usize,
    flush: &mut dyn FnMut(&mut String),
) {
    match shape.split_first() {
        None => {
            if let Some(p) = data.get(offset) {
                write_prim(out, p);
            }
            flush(out);
        }
        Some((&n, rest)) => {
            let row: usize = rest.iter().product();
            out.push('[');
            for i in 0..n {
                if i > 0 {
                    out.push_str(", ");
                }
                write_array(out, data, rest, offset + i * row, flush);
            }
            out.push(']');
        }
    }
}

/// Appends `v` in Futhark's text format, offering the text so far to `flush` as it grows.
fn write_value(out: &mut String, v: &Value, flush: &mut dyn FnMut(&mut String)) {
    match v {
        Value::Scalar(p) => write_prim(out, *p),
        Value::Array(a) => {
            if a.shape.iter().product::<usize>() == 0 {
                out.push_str(&format!(
                    "empty({})",
                    super::type_text(&a.shape, a.elem_type())
                ));
            } else {
                write_array(out, &a.data, &a.shape, 0, flush);
            }
        }
    }
}

/// [`write_text`] of `v` written to `w` as it is made (in pieces of about 64 KiB), followed by
/// a newline: what printing a large result takes without holding all of its text.
pub fn write_text_line(v: &Value, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    const PIECE: usize = 1 << 16;
    let mut out = String::with_capacity(2 * PIECE);
    let mut failed = None;
    // After a failed write nothing more is written, and the text is still dropped piece by
    // piece (so that it does not grow to the whole value).
    let mut flush = |out: &mut String| {
        if out.len() >= PIECE {
            if failed.is_none() {
                failed = w.write_all(out.as_bytes()).err();
            }
            out.clear();
        }
    };
    write_value(&mut out, v, &mut flush);
    if let Some(e) = failed {
        return Err(e);
    }
    out.push('\n');
    w.write_all(out.as_bytes())
}

/// A value in Futhark's text format, as Futhark programs print it.
pub fn write_text(v: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, v, &mut |_| {});
    s
}
