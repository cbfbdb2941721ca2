//! Comparing results with expected values, as `futhark test` does.
//!
//! The rule is `futhark-data`'s `Futhark.Data.Compare.compareValues` with the tolerance 0.002
//! that `futhark test` passes (`src/Futhark/Test.hs`):
//!
//! * the number of values, the element types and the shapes must be equal;
//! * integers and booleans must be equal;
//! * floats: per value, an absolute tolerance `tol = max(0.002, max over the finite expected
//!   elements e of 0.002 * e)` is computed (note: `0.002 * e`, not `0.002 * |e|`, so negative
//!   expected elements do not widen it, exactly as in futhark-data); an element matches if both
//!   are NaN, or both are infinite with the same sign, or `|got - expected| <= tol`. The
//!   arithmetic is done in the element type, as in futhark-data.

use crate::prim::PrimValue;
use crate::value::{Buffer, Value};
use crate::values::format_prim;
use half::f16;
use std::fmt;

/// The relative tolerance `futhark test` uses.
pub const TOLERANCE: f64 = 0.002;

/// How results differ from the expected values.
#[derive(Clone, Debug, PartialEq)]
pub enum Mismatch {
    /// Different numbers of values.
    Count { got: usize, expected: usize },
    /// Value `index` has a different element type or rank.
    Type {
        index: usize,
        got: String,
        expected: String,
    },
    /// Value `index` has a different shape.
    Shape {
        index: usize,
        got: Vec<usize>,
        expected: Vec<usize>,
    },
    /// Elements of value `index` differ: the first one at `at` (empty for a scalar), and
    /// `count` of `total` elements in all.
    Elements {
        index: usize,
        at: Vec<usize>,
        got: PrimValue,
        expected: PrimValue,
        count: usize,
        total: usize,
    },
}

fn shape_text(s: &[usize]) -> String {
    format!(
        "[{}]",
        s.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Count { got, expected } => {
                write!(f, "expected {expected} results, got {got}")
            }
            Mismatch::Type {
                index,
                got,
                expected,
            } => {
                write!(
                    f,
                    "result {index}: expected a value of type {expected}, got {got}"
                )
            }
            Mismatch::Shape {
                index,
                got,
                expected,
            } => write!(
                f,
                "result {index}: expected an array of shape {}, got shape {}",
                shape_text(expected),
                shape_text(got)
            ),
            Mismatch::Elements {
                index,
                at,
                got,
                expected,
                count,
                total,
            } => {
                write!(f, "result {index}: ")?;
                if !at.is_empty() {
                    write!(f, "value at {}: ", shape_text(at))?;
                }
                write!(
                    f,
                    "expected {}, got {}",
                    format_prim(*expected),
                    format_prim(*got)
                )?;
                if *count > 1 {
                    write!(f, " ({count} of {total} elements differ)")?;
                }
                Ok(())
            }
        }
    }
}

/// The multi-dimensional index of flat index `i` in an array of the given shape.
fn unflatten(shape: &[usize], mut i: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (k, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            idx[k] = i % d;
            i /= d;
        }
    }
    idx
}

/// Positions of the differing elements: (first differing flat index, count).
fn diff_positions<T>(
    got: &[T],
    expected: &[T],
    same: impl Fn(&T, &T) -> bool,
) -> Option<(usize, usize)> {
    let mut first = None;
    let mut count = 0;
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        if !same(g, e) {
            first.get_or_insert(i);
            count += 1;
        }
    }
    first.map(|f| (f, count))
}

macro_rules! float_compare {
    ($got:expr, $exp:expr, $ty:ty, $tol:expr) => {{
        let tol: $ty = $tol;
        let abstol = $exp.iter().filter(|x| x.is_finite()).fold(tol, |t, &x| {
            let c = tol * x;
            if c > t {
                c
            } else {
                t
            }
        });
        diff_positions($got, $exp, |&g, &e| {
            (g.is_nan() && e.is_nan())
                || (g.is_infinite()
                    && e.is_infinite()
                    && g.is_sign_positive() == e.is_sign_positive())
                || {
                    let d = g - e;
                    d <= abstol && -d <= abstol
                }
        })
    }};
}

/// Compare one result (number `index`) with the expected value.
pub fn compare_value(index: usize, got: &Value, expected: &Value) -> Option<Mismatch> {
    if got.elem_type() != expected.elem_type() || got.shape().len() != expected.shape().len() {
        return Some(Mismatch::Type {
            index,
            got: got.type_name(),
            expected: expected.type_name(),
        });
    }
    if got.shape() != expected.shape() {
        return Some(Mismatch::Shape {
            index,
            got: got.shape().to_vec(),
            expected: expected.shape().to_vec(),
        });
    }
    let (gb, eb) = match (got, expected) {
        (Value::Scalar(g), Value::Scalar(e)) => (Buffer::filled(*g, 1), Buffer::filled(*e, 1)),
        (Value::Array(g), Value::Array(e)) => (g.data.clone(), e.data.clone()),
        _ => {
            return Some(Mismatch::Type {
                index,
                got: got.type_name(),
                expected: expected.type_name(),
            })
        }
    };
    let total = eb.len();
    let diff = match (&gb, &eb) {
        (Buffer::Bool(g), Buffer::Bool(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::I8(g), Buffer::I8(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::I16(g), Buffer::I16(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::I32(g), Buffer::I32(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::I64(g), Buffer::I64(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::U8(g), Buffer::U8(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::U16(g), Buffer::U16(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::U32(g), Buffer::U32(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::U64(g), Buffer::U64(e)) => diff_positions(g, e, |a, b| a == b),
        (Buffer::F16(g), Buffer::F16(e)) => float_compare!(g, e, f16, f16::from_f64(TOLERANCE)),
        (Buffer::F32(g), Buffer::F32(e)) => float_compare!(g, e, f32, TOLERANCE as f32),
        (Buffer::F64(g), Buffer::F64(e)) => float_compare!(g, e, f64, TOLERANCE),
        _ => {
            return Some(Mismatch::Type {
                index,
                got: got.type_name(),
                expected: expected.type_name(),
            })
        }
    };
    let (first, count) = diff?;
    Some(Mismatch::Elements {
        index,
        at: unflatten(expected.shape(), first),
        got: gb.get(first)?,
        expected: eb.get(first)?,
        count,
        total,
    })
}

/// Compare all results with the expected values; the first mismatch of each value.
pub fn compare_values(got: &[Value], expected: &[Value]) -> Vec<Mismatch> {
    if got.len() != expected.len() {
        return vec![Mismatch::Count {
            got: got.len(),
            expected: expected.len(),
        }];
    }
    got.iter()
        .zip(expected)
        .enumerate()
        .filter_map(|(i, (g, e))| compare_value(i, g, e))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::parse_values;

    fn vals(s: &str) -> Vec<Value> {
        parse_values(s.as_bytes()).unwrap()
    }
    fn cmp(got: &str, expected: &str) -> Vec<String> {
        compare_values(&vals(got), &vals(expected))
            .iter()
            .map(|m| m.to_string())
            .collect()
    }

    #[test]
    fn exact_and_tolerant() {
        assert!(cmp("1i32 [1, 2]", "1i32 [1, 2]").is_empty());
        assert!(cmp("[1.001f32, 2.0f32]", "[1.0f32, 2.0f32]").is_empty());
        // Tolerance is absolute 0.002 * max expected element: 100 * 0.002 = 0.2.
        assert!(cmp("[0.15, 100.0]", "[0.0, 100.0]").is_empty());
        assert_eq!(
            cmp("[0.25, 100.0]", "[0.0, 100.0]"),
            vec!["result 0: value at [0]: expected 0.0f64, got 0.25f64"]
        );
        // Negative expected elements do not widen the tolerance (as in futhark-data).
        assert_eq!(
            cmp("-1000.5", "-1000.0"),
            vec!["result 0: expected -1000.0f64, got -1000.5f64"]
        );
        assert!(cmp("1000.5", "1000.0").is_empty());
        assert!(cmp("0.0019", "0.0").is_empty());
        assert_eq!(cmp("0.0021", "0.0").len(), 1);
    }

    #[test]
    fn specials() {
        assert!(cmp("f32.nan", "f32.nan").is_empty());
        assert!(cmp("[f64.inf, -f64.inf]", "[f64.inf, -f64.inf]").is_empty());
        assert_eq!(cmp("f64.inf", "-f64.inf").len(), 1);
        assert_eq!(cmp("f64.nan", "1.0").len(), 1);
        assert_eq!(cmp("1.0", "f64.nan").len(), 1);
        assert_eq!(cmp("f64.inf", "1.0").len(), 1);
        assert!(cmp("1.0f16", "1.001f16").is_empty());
        assert_eq!(cmp("1.0f16", "1.5f16").len(), 1);
    }

    #[test]
    fn messages() {
        assert_eq!(cmp("1i32", "1i32 2i32"), vec!["expected 2 results, got 1"]);
        assert_eq!(
            cmp("1i64", "1i32"),
            vec!["result 0: expected a value of type i32, got i64"]
        );
        assert_eq!(
            cmp("[1]", "[[1]]"),
            vec!["result 0: expected a value of type [1][1]i32, got [1]i32"]
        );
        assert_eq!(
            cmp("[1, 2]", "[1, 2, 3]"),
            vec!["result 0: expected an array of shape [3], got shape [2]"]
        );
        assert_eq!(
            cmp("[[1, 2, 3], [4, 9, 9]]", "[[1, 2, 3], [4, 5, 6]]"),
            vec!["result 0: value at [1, 1]: expected 5i32, got 9i32 (2 of 6 elements differ)"]
        );
        assert_eq!(
            cmp("true 2", "false 3"),
            vec![
                "result 0: expected false, got true",
                "result 1: expected 3i32, got 2i32"
            ]
        );
        assert!(cmp("empty([0]i32)", "empty([0]i32)").is_empty());
        assert_eq!(cmp("empty([0]i32)", "empty([2][0]i32)").len(), 1);
    }

    #[test]
    fn unflatten_index() {
        assert_eq!(unflatten(&[2, 3, 4], 23), vec![1, 2, 3]);
        assert_eq!(unflatten(&[5], 3), vec![3]);
        assert_eq!(unflatten(&[], 0), Vec::<usize>::new());
    }
}
