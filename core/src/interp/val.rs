//! Runtime values of the interpreter: scalars, array *views* over shared flat buffers, and
//! accumulator handles; plus the buffer helpers (strided gather/write, appends) they need.

use crate::prim::{PrimType, PrimValue};
use crate::value::{ArrayValue, Buffer, Value};
use std::sync::Arc;

/// Applies `$e` to the inner `Vec` of a buffer and wraps the resulting `Vec` in the same variant.
macro_rules! map_buf {
    ($b:expr, $v:ident => $e:expr) => {
        match $b {
            Buffer::Bool($v) => Buffer::Bool($e),
            Buffer::I8($v) => Buffer::I8($e),
            Buffer::I16($v) => Buffer::I16($e),
            Buffer::I32($v) => Buffer::I32($e),
            Buffer::I64($v) => Buffer::I64($e),
            Buffer::U8($v) => Buffer::U8($e),
            Buffer::U16($v) => Buffer::U16($e),
            Buffer::U32($v) => Buffer::U32($e),
            Buffer::U64($v) => Buffer::U64($e),
            Buffer::F16($v) => Buffer::F16($e),
            Buffer::F32($v) => Buffer::F32($e),
            Buffer::F64($v) => Buffer::F64($e),
        }
    };
}

/// Runs `$e` on the inner `Vec`s of two buffers of the same element type; `$else` otherwise.
macro_rules! with_pair {
    ($a:expr, $b:expr, $x:ident, $y:ident => $e:expr, else $else:expr) => {
        match ($a, $b) {
            (Buffer::Bool($x), Buffer::Bool($y)) => $e,
            (Buffer::I8($x), Buffer::I8($y)) => $e,
            (Buffer::I16($x), Buffer::I16($y)) => $e,
            (Buffer::I32($x), Buffer::I32($y)) => $e,
            (Buffer::I64($x), Buffer::I64($y)) => $e,
            (Buffer::U8($x), Buffer::U8($y)) => $e,
            (Buffer::U16($x), Buffer::U16($y)) => $e,
            (Buffer::U32($x), Buffer::U32($y)) => $e,
            (Buffer::U64($x), Buffer::U64($y)) => $e,
            (Buffer::F16($x), Buffer::F16($y)) => $e,
            (Buffer::F32($x), Buffer::F32($y)) => $e,
            (Buffer::F64($x), Buffer::F64($y)) => $e,
            _ => $else,
        }
    };
}

/// A regular array as a row-major view into a shared buffer: elements
/// `data[off .. off + product(shape)]`.
#[derive(Clone, Debug)]
pub(crate) struct Arr {
    pub data: Arc<Buffer>,
    pub off: usize,
    pub shape: Vec<usize>,
}

/// One runtime value.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Prim(PrimValue),
    Arr(Arr),
    /// An accumulator: an index into the interpreter's accumulator stack.
    Acc(usize),
    /// Not bound (yet, or any more: its scope ended).
    Empty,
    /// Taken by a consuming operation (an in-place update).
    Consumed,
}

impl Arr {
    pub fn from_buffer(data: Buffer, shape: Vec<usize>) -> Arr {
        Arr {
            data: Arc::new(data),
            off: 0,
            shape,
        }
    }
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn elem_type(&self) -> PrimType {
        self.data.elem_type()
    }
    pub fn outer(&self) -> usize {
        self.shape.first().copied().unwrap_or(1)
    }
    pub fn row_len(&self) -> usize {
        self.shape.iter().skip(1).product()
    }
    /// Row `i` (a scalar for a 1-D array, a view otherwise). `i` must be in range.
    pub fn row(&self, i: usize) -> Val {
        if self.shape.len() <= 1 {
            match self.data.get(self.off + i) {
                Some(p) => Val::Prim(p),
                None => Val::Empty,
            }
        } else {
            let rl = self.row_len();
            Val::Arr(Arr {
                data: self.data.clone(),
                off: self.off + i * rl,
                shape: self.shape[1..].to_vec(),
            })
        }
    }
    /// Is this view the whole of its buffer?
    fn whole(&self) -> bool {
        self.off == 0 && self.len() == self.data.len()
    }
    /// The elements as a fresh buffer.
    pub fn to_buffer(&self) -> Buffer {
        if self.whole() {
            (*self.data).clone()
        } else {
            slice(&self.data, self.off, self.off + self.len())
        }
    }
    /// The elements as a buffer, without copying when this is the only reference to all of it.
    pub fn into_buffer(self) -> Buffer {
        if self.whole() {
            let len = self.len();
            let off = self.off;
            Arc::try_unwrap(self.data).unwrap_or_else(|a| slice(&a, off, off + len))
        } else {
            slice(&self.data, self.off, self.off + self.len())
        }
    }
    /// Mutable access to the buffer for an in-place update at view-relative element offset `rel`:
    /// copies the viewed elements first unless this view holds the only reference to the buffer.
    /// Returns the buffer and the buffer offset of `rel`.
    pub fn make_unique_at(&mut self, rel: isize) -> (&mut Buffer, isize) {
        if Arc::get_mut(&mut self.data).is_none() {
            self.data = Arc::new(slice(&self.data, self.off, self.off + self.len()));
            self.off = 0;
        }
        let at = self.off as isize + rel;
        (Arc::make_mut(&mut self.data), at)
    }
}

impl Val {
    pub fn to_value(&self) -> Option<Value> {
        match self {
            Val::Prim(p) => Some(Value::Scalar(*p)),
            Val::Arr(a) => Some(Value::Array(ArrayValue {
                shape: a.shape.clone(),
                data: a.to_buffer(),
            })),
            _ => None,
        }
    }
    pub fn shape(&self) -> &[usize] {
        match self {
            Val::Arr(a) => &a.shape,
            _ => &[],
        }
    }
    /// A human-readable type like `[3][2]f32`.
    pub fn type_name(&self) -> String {
        match self {
            Val::Prim(p) => p.prim_type().name().to_string(),
            Val::Arr(a) => {
                let mut s: String = a.shape.iter().map(|d| format!("[{d}]")).collect();
                s.push_str(a.elem_type().name());
                s
            }
            Val::Acc(_) => "accumulator".to_string(),
            Val::Empty | Val::Consumed => "<no value>".to_string(),
        }
    }
}

/// Elements `lo..hi` of a buffer as a new buffer (empty if the range is out of bounds, which the
/// interpreter's invariants rule out; this never panics).
pub(crate) fn slice(b: &Buffer, lo: usize, hi: usize) -> Buffer {
    map_buf!(b, v => v.get(lo..hi).map(|s| s.to_vec()).unwrap_or_default())
}

/// Calls `f` with every offset of a strided view `base + sum(i_k * stride_k)`, `i_k < size_k`,
/// in row-major order.
pub(crate) fn for_each_offset(base: isize, dims: &[(usize, isize)], f: &mut impl FnMut(usize)) {
    match dims.split_first() {
        None => f(base as usize),
        Some((&(n, s), rest)) => {
            if rest.is_empty() {
                let mut o = base;
                for _ in 0..n {
                    f(o as usize);
                    o += s;
                }
            } else {
                for i in 0..n {
                    for_each_offset(base + i as isize * s, rest, f);
                }
            }
        }
    }
}

fn gather_vec<T: Copy>(v: &[T], base: isize, dims: &[(usize, isize)]) -> Vec<T> {
    let n: usize = dims.iter().map(|d| d.0).product();
    let mut out = Vec::with_capacity(n);
    for_each_offset(base, dims, &mut |o| {
        if let Some(x) = v.get(o) {
            out.push(*x)
        }
    });
    out
}

/// The elements of a strided view (offsets must be in range) as a new buffer.
pub(crate) fn gather(src: &Buffer, base: isize, dims: &[(usize, isize)]) -> Buffer {
    map_buf!(src, v => gather_vec(v, base, dims))
}

fn write_vec<T: Copy>(dst: &mut [T], base: isize, dims: &[(usize, isize)], src: &[T]) {
    let mut k = 0;
    for_each_offset(base, dims, &mut |o| {
        if let (Some(d), Some(s)) = (dst.get_mut(o), src.get(k)) {
            *d = *s;
        }
        k += 1;
    });
}

/// Writes `src[src_off ..]` into the strided view of `dst` (offsets must be in range).
/// Returns false on an element type mismatch.
pub(crate) fn write_strided(
    dst: &mut Buffer,
    base: isize,
    dims: &[(usize, isize)],
    src: &Buffer,
    src_off: usize,
) -> bool {
    with_pair!(dst, src, d, s => { write_vec(d, base, dims, s.get(src_off..).unwrap_or(&[])); true }, else false)
}

/// Writes `v` at every offset of the strided view. Returns false on a type mismatch.
pub(crate) fn fill_strided(
    dst: &mut Buffer,
    base: isize,
    dims: &[(usize, isize)],
    v: PrimValue,
) -> bool {
    let mut ok = true;
    for_each_offset(base, dims, &mut |o| ok &= dst.set(o, v));
    ok
}

/// Appends `src[off .. off+len]` to `dst`. Returns false on a type mismatch.
pub(crate) fn append_range(dst: &mut Buffer, src: &Buffer, off: usize, len: usize) -> bool {
    with_pair!(dst, src, d, s => match s.get(off..off + len) {
        Some(part) => { d.extend_from_slice(part); true }
        None => false,
    }, else false)
}

/// Copies `src[src_off .. src_off+len]` to `dst[dst_off ..]`. Returns false on a type mismatch or
/// a range out of bounds.
pub(crate) fn copy_range(
    dst: &mut Buffer,
    dst_off: usize,
    src: &Buffer,
    src_off: usize,
    len: usize,
) -> bool {
    with_pair!(dst, src, d, s => match (d.get_mut(dst_off..dst_off + len), s.get(src_off..src_off + len)) {
        (Some(a), Some(b)) => { a.copy_from_slice(b); true }
        _ => false,
    }, else false)
}

/// Collects the rows (scalars or arrays) that a SOAC produces into one array.
pub(crate) struct Builder {
    pub buf: Buffer,
    pub row_shape: Option<Vec<usize>>,
    pub count: usize,
    /// How many rows are expected (room for them is made when the first row's size is known).
    pub rows: usize,
}

impl Builder {
    /// A builder for `rows` rows (more may be pushed).
    pub fn new(elem: PrimType, rows: usize) -> Builder {
        Builder {
            buf: Buffer::with_capacity(elem, rows),
            row_shape: None,
            count: 0,
            rows,
        }
    }
    /// Appends one row; all rows must have the same shape and element type.
    pub fn push(&mut self, v: &Val) -> Result<(), String> {
        if let (Val::Prim(p), Some(rs)) = (v, &self.row_shape) {
            if rs.is_empty() && self.buf.push(*p) {
                self.count += 1;
                return Ok(());
            }
        }
        let shape = v.shape();
        match &self.row_shape {
            None => {
                // Room for all the rows, within the memory budget (growing an array of arrays
                // as it fills would abort the process where memory runs out).
                let mut all = vec![self.rows.max(1)];
                all.extend_from_slice(shape);
                let n = crate::mem::elements(&all)?;
                self.buf.try_reserve(n.saturating_sub(self.buf.len()))?;
                self.row_shape = Some(shape.to_vec());
            }
            Some(s) if s.as_slice() != shape => {
                return Err(format!(
                    "irregular array: a row of shape {} after rows of shape {}",
                    shape_str(shape),
                    shape_str(s)
                ))
            }
            Some(_) => {}
        }
        let ok = match v {
            Val::Prim(p) => self.buf.push(*p),
            Val::Arr(a) => append_range(&mut self.buf, &a.data, a.off, a.len()),
            _ => false,
        };
        if !ok {
            return Err(format!(
                "cannot store a {} in an array of {}",
                v.type_name(),
                self.buf.elem_type()
            ));
        }
        self.count += 1;
        Ok(())
    }
    /// The array of all rows; `default_row` is the row shape used when there are no rows.
    pub fn finish(self, default_row: Vec<usize>) -> Arr {
        let mut shape = vec![self.count];
        shape.extend(self.row_shape.unwrap_or(default_row));
        Arr::from_buffer(self.buf, shape)
    }
}

/// `[3][2]` style.
pub(crate) fn shape_str(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}
