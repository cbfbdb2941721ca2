//! Differential property test (issue 16): random well-typed programs run on the reference
//! interpreter and on the Vulkan backend (the default `-b vulkan` path, with the validation
//! layer and `spirv-val` on) must agree: both succeed with results that [`compare_values`]
//! accepts (the `vkad test` comparison: float tolerance, NaN = NaN), or both fail with a runtime
//! error of the same kind.
//!
//! Each case is a program and its inputs, made from a sequence of random `u32` choices (which
//! proptest draws from a fixed seed, so that CI runs the same cases every time):
//!
//! * an entry point `main` with one or two size parameters, arrays of `f32`/`f64`/`i32`/`i64`
//!   of those sizes (0..=70, often 0, 1, 2 or 70) and scalars, whose values include NaN,
//!   ±inf, ±0.0, subnormals (`1e-40f32`, `-1.4e-45f32`, `5e-324f64`, ...), the smallest normal
//!   numbers, tiny and huge values (`±1e30`, `f32.highest`, `1e300`, ...) and the integer
//!   extremes;
//! * a body of `let`s and a tuple of one to three results (scalars, arrays, arrays of arrays)
//!   built from `+ - * / % **` (floats and integers; `//` and `%%` too), comparisons, `&&`,
//!   `||`, `!`, `min`/`max`, `abs`, `neg`, `sgn`, `floor`/`ceil`/`round`/`trunc`/`sqrt`, the
//!   float modules' functions (`exp log log2 log10 log1p sin cos tan asin acos atan sinh cosh
//!   tanh asinh acosh atanh cbrt erf pow atan2 hypot`), `isnan`/`isinf`, conversions between
//!   all the types (float-to-integer ones guarded, see below), `if`, `let`, `loop ... for i <
//!   n` and `loop ... for x in xs`, `map`, `map2`, `map` over `zip`, nested `map`s (also over
//!   the rows of an array of arrays), `reduce`/`scan` with `(+)`/`min`/`max`,
//!   `T.sum`/`T.minimum`/`T.maximum`, `iota`, `replicate`, `reverse`, `length` and indexing.
//!
//! **Errors.** Each program has one *fault mode*: no unguarded error at all (every index is
//! checked against the length, every integer divisor against zero, every integer exponent
//! masked to 0..=7, `map2`/`zip` only over arrays of the same size), or unguarded indexing
//! (bounds errors), integer division (division by zero), `map2`/`zip` of arrays of unrelated
//! sizes (shape errors) or integer powers (negative exponents). A program may fail in one way
//! only, because a parallel backend may legitimately report any one of several failing
//! operations (the first error of a Vulkan kernel wins, in whatever order the threads run).
//! Programs of the fault-free mode must succeed on both backends. Errors are compared by
//! [`Kind`]: Vulkan's [`RuntimeKind`], and for the interpreter, whose `RuntimeError` has only a
//! message, the category of the message (`... out of bounds ...`, `division by zero`,
//! `negative exponent ...`, `... shape mismatch ...`/sizes). Mismatched `map2`/`zip` operands
//! are assertions of the lowered program on both backends (Vulkan's kind is `Assert`), so for
//! `Assert` and `Arithmetic` errors Vulkan's message is classified the same way.
//!
//! **Floats.** The generator keeps out what the two backends may compute differently by design
//! (so that every difference it finds is a real one), tracking for each float expression an
//! [`Attr`]:
//! * its precision ([`Prec`]): bit for bit (IEEE `+ - * / %`, `sqrt`, `floor`..., `abs`,
//!   conversions), up to the sign of a zero (`min`/`max` of `0.0` and `-0.0` may return either,
//!   as docs/language.md says), or approximate: the transcendental functions (Vulkan computes
//!   `f32` ones from the device's GLSL.std.450 functions, whose error may be absolute near 0)
//!   and `(+)`-reductions (the order of the additions
//!   differs). Operations that turn a small difference into a large one take only operands
//!   precise enough for them: comparisons, `floor`/`ceil`/`round`/`trunc`, `sgn`, `%`,
//!   float-to-integer conversions, `**`/`pow`/`atan2`, both operands of `/`, and the arguments
//!   of `log`/`sqrt`/`cbrt`/`asin`/`acos`/`acosh`/`atanh` (exact up to the sign of zero), `log1p`
//!   (exact); an approximate factor is multiplied only by moderate ones (|y| <= 16);
//! * a bound on the magnitude of its finite values: `(+)`-reductions and scans of floats only
//!   add elements small enough (|x| <= 8 for `f32`, 1e6 for `f64`) that the order of the
//!   additions changes the sum by less than the tolerance (huge values cancelling or
//!   overflowing in one order and not in the other would differ by design); `sin`/`cos` take
//!   |x| <= 10 and `tan` |x| <= 1.5 (Vulkan specifies their precision on [-π, π] only:
//!   `f32.sin 1e10` is -1.0 on lavapipe); an approximate result is at most 256 (`f32`) or 1e9
//!   (`f64`) in magnitude, because `compare_values` allows an absolute difference of 0.002,
//!   more only where the expected value has large *positive* elements (as futhark-data).
//!
//! Infinities and NaN are never restricted: they propagate the same way in any order. The
//! neutral element of float `min`/`max` in `reduce`/`scan` is NaN, the only true one (with
//! `f32.inf`, a scan over NaNs depends on where the neutral element is applied, see Findings).
//! Float-to-integer conversions are guarded (their result for NaN, infinities and out-of-range
//! values is unspecified).
//!
//! **Unused failing values.** A value that no result depends on may be left uncomputed, and its
//! error unreported (docs/language.md, "Run-time errors of unused values"): Vulkan's kernels
//! skip them where the interpreter computes everything. So in the fault modes every failing
//! value is used: no empty arrays (a value used only by an inner `map` over an empty array is
//! unused: `map (\x -> let y = x / k in map (\_ -> y) (iota n)) xs` with `n = 0`, `k = 0`
//! succeeds on Vulkan) and loop bodies use their accumulator (the initial value of `loop acc =
//! x / k for i < 2 do 0` is unused). `VKAD_RANDPROG_UNUSED_ERRORS=1` makes such programs too.
//!
//! **Fixed bugs** this test found in Vulkan kernels on lavapipe (Mesa 22.3), each with a
//! minimal program (`vkad run -b interp` vs `-b vulkan`) in `tests/programs/vk_math_special.fut`:
//! `hypot` of NaN and ±0 was 0.0 (`FMax` drops a NaN); `f32.atan2` of zeros was ±2.356 and of
//! subnormals NaN; `f32.acosh` below -4096 was `-inf` and `f32.acosh`/`asinh` beyond 1.8e19
//! infinite; `f32.log1p (-inf)` was `-inf`; `f32.log`/`log2`/`log10` of subnormals were off by
//! up to 4; `f32.asin`/`acos` were off by up to 4e-4 (spirv-backend/src/codegen/f32math.rs has
//! the fixes); a number converted from a boolean or an integer that the driver could prove
//! constant was a `+0.0` that gallivm folded arithmetic with, ignoring IEEE (`y / f32.bool
//! (f32.isnan (f32.i64 n))` was 0.0; `crate::codegen::ieee`'s opaque zero); a sign-extended
//! `i32` (`i64.i32 x`, `OpSConvert`) compared with a constant was compared as if `x` were not
//! negative (`Gen::int_to_u64` extends the sign by hand).
//!
//! **Findings** that are not backend bugs, kept out as described above: `f32.min`/`f32.max`
//! with neutral element `f32.inf`/`-f32.inf` are not a monoid over NaN (`f32.min f32.inf
//! f32.nan` is `inf`), and `map (\x -> scan f64.min f64.highest (map (\_ -> x) ys)) xs` with x
//! NaN gives `[inf, inf, ...]` on the interpreter but `[nan, nan, inf, inf]` on Vulkan (the
//! segmented scan applies the neutral element per block, not at the start of a segment);
//! kernels' `f32` transcendental functions are within a few ulp of libm on moderate arguments
//! and near 0, but `f32.sin`/`cos`/`tan` of |x| >= 1e10 are ±1.0 on lavapipe (GLSL specifies
//! them on [-π, π]; the generator gives them |x| <= 10).
//!
//! **Failures** print the program, its inputs (in `vkad run`'s input syntax, `vkad run
//! random.fut < input` reproduces them) and both outcomes, after a reduction that zeroes the
//! choices while the failure stays the same kind (a smaller program with simpler values); the
//! original case is printed too.
//!
//! Environment: `VKAD_RANDPROG_CASES` (default 64) sets the number of cases,
//! `VKAD_RANDPROG_SEED` (a number) draws other cases than CI's, `VKAD_RANDPROG_UNUSED_ERRORS=1`
//! also makes programs with unused failing values, and `VKAD_RANDPROG_VERBOSE=1` prints every
//! program with its outcome.

// One Vulkan context for the test binary: validation layer on, every module through spirv-val,
// no pipeline cache on disk (the Vulkan backend's own test helpers).
#[path = "../../spirv-backend/tests/common/mod.rs"]
mod common;
use common::ctx;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::fmt::Write as _;
use vkad_core::prim::PrimValue;
use vkad_core::testing::compare_values;
use vkad_core::value::{ArrayValue, Buffer, Value};
use vkad_spirv::error::{Error as VkError, RuntimeKind};

// ---------------------------------------------------------------------------------------------
// The choice sequence.

/// Random choices, read in order; past the end every choice is 0. Option 0 of every choice is
/// the simplest one (a leaf, a small value, no guard removed), so that zeroing choices gives
/// simpler programs (see [`reduce_failure`]).
struct Choices<'a> {
    data: &'a [u32],
    pos: usize,
}

impl Choices<'_> {
    fn next(&mut self) -> u32 {
        let v = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }
    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        self.next() as usize % n
    }
    /// True with probability `percent`% (false for the choice 0).
    fn flip(&mut self, percent: usize) -> bool {
        self.below(100) >= 100 - percent
    }
    /// An index into `weights`, with those relative weights (0 picks the first non-zero).
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut x = self.below(total.max(1));
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        0
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

// ---------------------------------------------------------------------------------------------
// Types and attributes.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum S {
    Bool,
    I32,
    I64,
    F32,
    F64,
}

const NUMERIC: [S; 4] = [S::F32, S::F64, S::I32, S::I64];

impl S {
    fn name(self) -> &'static str {
        match self {
            S::Bool => "bool",
            S::I32 => "i32",
            S::I64 => "i64",
            S::F32 => "f32",
            S::F64 => "f64",
        }
    }
    fn is_float(self) -> bool {
        matches!(self, S::F32 | S::F64)
    }
    fn is_int(self) -> bool {
        matches!(self, S::I32 | S::I64)
    }
    /// The largest magnitude of a value of an integer type (as a bound, not exactly).
    fn int_cap(self) -> f64 {
        match self {
            S::I32 => 2147483648.0,
            S::I64 => 9223372036854775808.0,
            _ => f64::INFINITY,
        }
    }
    /// The largest magnitude of the elements of a float `(+)`-reduction or scan: 70 terms of
    /// at most this size, added in any order, differ by much less than `compare_values`' 0.002.
    fn sum_mag(self) -> f64 {
        match self {
            S::F32 => 8.0,
            S::F64 => 1e6,
            _ => f64::INFINITY,
        }
    }
}

/// How precisely both backends agree on a float value (ordered: each level allows more).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Prec {
    /// Bit for bit (up to NaN payloads).
    Exact,
    /// Bit for bit except that a zero may have either sign.
    ZeroSign,
    /// Approximately: within a small absolute error (a few ulp of max(1, |x|) for the
    /// transcendental functions, a rounding error per element for sums).
    Inexact,
}

/// What an expression's value is known to satisfy: its precision, and a bound on the
/// magnitude of its finite values (infinity: none). Integers and booleans are always exact.
#[derive(Clone, Copy, Debug)]
struct Attr {
    prec: Prec,
    mag: f64,
}

impl Attr {
    const EXACT_ANY: Attr = Attr {
        prec: Prec::Exact,
        mag: f64::INFINITY,
    };
    fn fits(self, need: Attr) -> bool {
        self.prec <= need.prec && self.mag <= need.mag
    }
    fn join(self, o: Attr) -> Attr {
        Attr {
            prec: self.prec.max(o.prec),
            mag: self.mag.max(o.mag),
        }
    }
    fn with_prec(self, p: Prec) -> Attr {
        Attr {
            prec: self.prec.max(p),
            ..self
        }
    }
    fn with_mag(self, mag: f64) -> Attr {
        Attr { mag, ..self }
    }
}

/// The size of an array: the entry point's size parameter `n{i}`, or a constant.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Size {
    Param(usize),
    Const(i64),
}

#[derive(Clone, PartialEq, Debug)]
enum Ty {
    Scalar(S),
    Arr(S, Size),
    Arr2(S, Size, Size),
}

struct Var {
    name: String,
    ty: Ty,
    attr: Attr,
}

/// A generated expression: its text and what its (element) values satisfy.
struct E {
    text: String,
    attr: Attr,
}

/// A generated one-dimensional array expression.
struct A {
    text: String,
    attr: Attr,
    size: Size,
}

/// Which unguarded runtime errors a program may contain (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Safe,
    Bounds,
    Division,
    Shape,
    NegExp,
}

/// A complete case.
struct Case {
    src: String,
    args: Vec<Value>,
    mode: Mode,
}

// ---------------------------------------------------------------------------------------------
// Values.

fn lit(p: PrimValue) -> String {
    let s = vkad_core::values::format_prim(p);
    if s.starts_with('-') {
        format!("({s})")
    } else {
        s
    }
}

fn prim(t: S, x: f64) -> PrimValue {
    match t {
        S::Bool => PrimValue::Bool(x != 0.0),
        S::I32 => PrimValue::I32(x as i32),
        S::I64 => PrimValue::I64(x as i64),
        S::F32 => PrimValue::F32(x as f32),
        S::F64 => PrimValue::F64(x),
    }
}

/// A float of type `t` with finite magnitude at most `mag` (non-finite values are always
/// allowed): special values are frequent.
fn float_value(c: &mut Choices, t: S, mag: f64) -> PrimValue {
    let f32 = t == S::F32;
    loop {
        let x: f64 = match c.below(22) {
            0 => 0.0,
            1 => -0.0,
            2 => 1.0,
            3 => -1.0,
            4 => f64::NAN,
            5 => f64::INFINITY,
            6 => f64::NEG_INFINITY,
            // Subnormals.
            7 => {
                if f32 {
                    1e-40
                } else {
                    5e-324
                }
            }
            8 => {
                if f32 {
                    -1.4e-45
                } else {
                    -2.5e-308
                }
            }
            // Tiny normal numbers.
            9 => {
                if f32 {
                    1.1754944e-38
                } else {
                    2.2250738585072014e-308
                }
            }
            10 => -1e-30,
            // Huge numbers.
            11 => {
                if f32 {
                    f32::MAX as f64
                } else {
                    f64::MAX
                }
            }
            12 => {
                if f32 {
                    -1e38
                } else {
                    -1e300
                }
            }
            13 => 1e30,
            14 => 0.5,
            15 => 2.5,
            16 => (c.below(21) as f64) - 10.0,
            17 => (c.below(21) as f64) - 10.0,
            18..=19 => (c.below(2001) as f64 - 1000.0) / 100.0,
            20 => (c.below(2001) as f64 - 1000.0) / 1000.0 * 3.0,
            _ => std::f64::consts::PI,
        };
        let x = if f32 { (x as f32) as f64 } else { x };
        if !x.is_finite() || x.abs() <= mag {
            return prim(t, x);
        }
        // Out of the bound: another draw (past the end of the choices, 0.0 comes).
    }
}

fn int_value(c: &mut Choices, t: S, mag: f64) -> PrimValue {
    loop {
        let x: i128 = match c.below(12) {
            0 => 0,
            1 => 1,
            2 => -1,
            3 => 2,
            4..=6 => c.below(21) as i128 - 10,
            7 => c.below(141) as i128 - 70,
            8 => {
                if t == S::I32 {
                    i32::MIN as i128
                } else {
                    i64::MIN as i128
                }
            }
            9 => {
                if t == S::I32 {
                    i32::MAX as i128
                } else {
                    i64::MAX as i128
                }
            }
            10 => c.next() as i32 as i128,
            _ => ((c.next() as u64) << 32 | c.next() as u64) as i64 as i128,
        };
        let x = if t == S::I32 {
            x as i32 as i128
        } else {
            x as i64 as i128
        };
        if (x as f64).abs() <= mag {
            return match t {
                S::I32 => PrimValue::I32(x as i32),
                _ => PrimValue::I64(x as i64),
            };
        }
    }
}

fn value(c: &mut Choices, t: S, mag: f64) -> PrimValue {
    match t {
        S::Bool => PrimValue::Bool(c.flip(50)),
        S::I32 | S::I64 => int_value(c, t, mag),
        S::F32 | S::F64 => float_value(c, t, mag),
    }
}

fn buffer(t: S, xs: Vec<PrimValue>) -> Buffer {
    let mut b = Buffer::with_capacity(prim(t, 0.0).prim_type(), xs.len());
    for x in xs {
        assert!(b.push(x), "{x:?} in a buffer of {}", t.name());
    }
    b
}

// ---------------------------------------------------------------------------------------------
// The program generator.

struct Gen<'a> {
    c: Choices<'a>,
    mode: Mode,
    scope: Vec<Var>,
    /// The values of the size parameters `n0`, `n1`, ...
    sizes: Vec<usize>,
    names: usize,
    /// Expression nodes left; at 0 only leaves are made.
    fuel: usize,
    /// Also make programs where a failing value may go unused (see `Mode`).
    unused_errors: bool,
}

/// The largest factor an approximate value may be multiplied by.
const INEXACT_FACTOR: f64 = 16.0;

/// The attribute a result or binding may have: anything.
const ANY: Attr = Attr {
    prec: Prec::Inexact,
    mag: f64::INFINITY,
};

/// The primitive types' names, which are also the names of their modules.
const PRIM_NAMES: [&str; 11] = [
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64",
];

impl Gen<'_> {
    fn fresh(&mut self, base: &str) -> String {
        // Never a type's name (`f32`, `i64`, …): a variable of that name would shadow the
        // numeric module that `f32.abs` means.
        loop {
            self.names += 1;
            let name = format!("{base}{}", self.names);
            if !PRIM_NAMES.contains(&name.as_str()) {
                return name;
            }
        }
    }

    fn bind(&mut self, name: &str, ty: Ty, attr: Attr) {
        self.scope.push(Var {
            name: name.to_string(),
            ty,
            attr,
        });
    }

    fn spend(&mut self, depth: u32) -> bool {
        if depth == 0 || self.fuel == 0 {
            return false;
        }
        self.fuel -= 1;
        true
    }

    /// The text of a size (an `i64`).
    fn size_text(&self, s: Size) -> String {
        match s {
            Size::Param(i) => format!("n{i}"),
            Size::Const(k) => format!("{k}i64"),
        }
    }

    fn size_value(&self, s: Size) -> usize {
        match s {
            Size::Param(i) => self.sizes[i],
            Size::Const(k) => k as usize,
        }
    }

    fn any_size(&mut self) -> Size {
        if self.c.flip(80) {
            Size::Param(self.c.below(self.sizes.len()))
        } else {
            // No empty arrays in fault modes (a failing value used only by an inner `map` over
            // an empty array is unused: its error may go unreported, see `Mode`).
            let k = self.c.pick(&[0, 1, 2, 3, 5, 17]);
            Size::Const(if self.mode == Mode::Safe || self.unused_errors {
                k
            } else {
                k.max(1)
            })
        }
    }

    /// A literal of type `t` fitting `need`.
    fn literal(&mut self, t: S, need: Attr) -> E {
        let p = value(&mut self.c, t, need.mag);
        let mag = match p {
            PrimValue::F32(x) if x.is_finite() => x.abs() as f64,
            PrimValue::F64(x) if x.is_finite() => x.abs(),
            PrimValue::F32(_) | PrimValue::F64(_) => 0.0,
            p => p.as_i128().map_or(1.0, |x| (x as f64).abs()),
        };
        E {
            text: lit(p),
            attr: Attr {
                prec: Prec::Exact,
                mag,
            },
        }
    }

    /// A variable or a literal of type `t` fitting `need`.
    fn leaf(&mut self, t: S, need: Attr) -> E {
        let mut same = Vec::new();
        let mut converted = Vec::new();
        for v in &self.scope {
            if let Ty::Scalar(vt) = v.ty {
                if let Some((text, attr)) = convert(vt, t, &v.name, v.attr) {
                    if attr.fits(need) {
                        if vt == t {
                            same.push(E { text, attr });
                        } else {
                            converted.push(E { text, attr });
                        }
                    }
                }
            }
        }
        if self.c.flip(85) {
            // Mostly a variable of the type, the innermost one (a lambda's or loop's
            // parameter, the last `let`) most often; else one converted.
            let vars = if !same.is_empty() && (converted.is_empty() || self.c.flip(70)) {
                same
            } else {
                converted
            };
            if !vars.is_empty() {
                let k = if self.c.flip(50) {
                    vars.len() - 1
                } else {
                    self.c.below(vars.len())
                };
                return vars.into_iter().nth(k).unwrap();
            }
        }
        self.literal(t, need)
    }

    /// A scalar expression of type `t` fitting `need`.
    fn scalar(&mut self, t: S, need: Attr, depth: u32) -> E {
        // Choice 0 is a leaf, so that zeroed choices make small programs.
        if !self.spend(depth) || self.c.weighted(&[1, 6]) == 0 {
            return self.leaf(t, need);
        }
        let d = depth - 1;
        let e = match t {
            S::Bool => self.boolean(d),
            S::I32 | S::I64 => self.int(t, need, d),
            S::F32 | S::F64 => self.float(t, need, d),
        };
        debug_assert!(
            t == S::Bool || e.attr.fits(need),
            "{} {:?} does not fit {:?}",
            e.text,
            e.attr,
            need
        );
        e
    }

    /// Productions common to every scalar type (`which`): `if`, `let`, indexing, loops.
    fn common(&mut self, t: S, need: Attr, d: u32, which: usize) -> E {
        match which {
            0 => {
                let c = self.scalar(S::Bool, ANY, d);
                let a = self.scalar(t, need, d);
                let b = self.scalar(t, need, d);
                E {
                    text: format!("(if {} then {} else {})", c.text, a.text, b.text),
                    attr: a.attr.join(b.attr),
                }
            }
            1 => {
                // A `let` of a scalar or an array, then the body.
                let name = self.fresh("v");
                let len = self.scope.len();
                let bound = if self.c.flip(40) {
                    let et = self.c.pick(&NUMERIC);
                    let need = self.binding_need(et);
                    let a = self.array(et, None, need, d);
                    self.bind(&name, Ty::Arr(et, a.size), a.attr);
                    a.text
                } else {
                    let st = self.c.pick(&[S::F32, S::F64, S::I32, S::I64, S::Bool]);
                    let need = self.binding_need(st);
                    let e = self.scalar(st, need, d);
                    self.bind(&name, Ty::Scalar(st), e.attr);
                    e.text
                };
                let body = self.scalar(t, need, d);
                self.scope.truncate(len);
                E {
                    text: format!("(let {name} = {bound} in {})", body.text),
                    attr: body.attr,
                }
            }
            2 => self.index(t, need, d),
            _ => self.lp(t, need, d),
        }
    }

    /// Which production of [`Gen::common`]: indexing more often where it may fail.
    fn common_choice(&mut self) -> usize {
        let index = self.boost(Mode::Bounds, 1);
        self.c.weighted(&[1, 1, index, 1])
    }

    /// The neutral element of `t.min` or `t.max` (`f`) in a `reduce` or `scan`: for floats NaN,
    /// the only true one (`f32.min f32.inf f32.nan` is `f32.inf`, not NaN: with `f32.inf`, a
    /// `scan` over NaNs depends on where the implementation applies the neutral element, and
    /// Vulkan's segmented scans skip it at the start of a segment; see "Findings").
    fn minmax_ne(&self, t: S, f: &str) -> String {
        match (t.is_float(), f) {
            (true, _) => format!("{}.nan", t.name()),
            (false, "min") => format!("{}.highest", t.name()),
            (false, _) => format!("{}.lowest", t.name()),
        }
    }

    /// `weight`, made larger in fault mode `mode` (for the operations that may fail in it).
    fn boost(&self, mode: Mode, weight: usize) -> usize {
        if self.mode == mode {
            weight * 8
        } else {
            weight
        }
    }

    /// What a result (or its elements) must satisfy: [`compare_values`] allows an absolute
    /// difference of 0.002, more only for arrays with large positive elements (0.002 times the
    /// largest: not for large negative ones, as in futhark-data), so an approximate float
    /// result must be moderate; an exact one may be anything.
    fn result_need(&mut self, t: S) -> Attr {
        if t.is_float() && self.c.flip(50) {
            Attr {
                prec: Prec::Inexact,
                mag: if t == S::F32 { 256.0 } else { 1e9 },
            }
        } else {
            Attr {
                prec: Prec::ZeroSign,
                mag: f64::INFINITY,
            }
        }
    }

    /// What a `let`-bound value is asked to satisfy: sometimes exactness, so that exact
    /// variables exist for the operations that need them.
    fn binding_need(&mut self, t: S) -> Attr {
        if t.is_float() && self.c.flip(65) {
            ANY
        } else {
            Attr::EXACT_ANY
        }
    }

    /// `arr[i]`, guarded against out-of-bounds indices unless the mode allows bounds errors.
    fn index(&mut self, t: S, need: Attr, d: u32) -> E {
        let a = self.array(t, None, need, d);
        if self.mode == Mode::Bounds && self.c.flip(75) {
            let i = self.index_expr(a.size, d, true);
            return E {
                text: format!("{}[{}]", paren_array(&a.text), i),
                attr: a.attr,
            };
        }
        let i = self.index_expr(a.size, d, false);
        let dflt = self.leaf(t, need);
        let (arr, j) = (self.fresh("xs"), self.fresh("j"));
        E {
            text: format!(
                "(let {arr} = {} in let {j} = {i} in if 0 <= {j} && {j} < length {arr} then {arr}[{j}] else {})",
                a.text, dflt.text
            ),
            attr: a.attr.join(dflt.attr),
        }
    }

    /// An `i64` index into an array of size `s` (of the size it has in this case): in bounds
    /// more often than not, unless `risky`.
    fn index_expr(&mut self, s: Size, d: u32, risky: bool) -> String {
        let n = self.size_value(s) as i64;
        let which = if risky {
            self.c.pick(&[3, 4, 6, 7, 7])
        } else {
            self.c.below(6)
        };
        match which {
            0 => "0i64".to_string(),
            1 => format!("{}i64", self.c.below(n.max(1) as usize)),
            2 => format!("({} - 1)", self.size_text(s)),
            3 => {
                let k = self.c.pick(&[-1i64, n, n + 1, 70, 71]);
                lit(PrimValue::I64(k))
            }
            4 => {
                let e = self.scalar(S::I64, Attr::EXACT_ANY, d);
                format!("({} % {}i64)", e.text, n.max(1))
            }
            5 => {
                let e = self.i64_of_i32(d);
                format!("({e} % {}i64)", n + 1)
            }
            6 => {
                let e = self.scalar(S::I64, Attr::EXACT_ANY, d);
                format!("({} % {}i64)", e.text, n + 1)
            }
            _ => {
                // `%%` has the dividend's sign: negative indices too.
                let e = self.i64_of_i32(d);
                format!("({e} %% {}i64)", n + 1)
            }
        }
    }

    /// An `i32` expression as an `i64` (`i64.i32`), or an `i64` expression.
    fn i64_of_i32(&mut self, d: u32) -> String {
        if self.c.flip(50) {
            let e = self.scalar(S::I32, Attr::EXACT_ANY, d);
            format!("(i64.i32 {})", e.text)
        } else {
            self.scalar(S::I64, Attr::EXACT_ANY, d).text
        }
    }

    /// `loop acc = init for i < n do body` or `loop acc = init for x in xs do body`.
    fn lp(&mut self, t: S, need: Attr, d: u32) -> E {
        // The accumulator fits `need` in every iteration, by induction.
        let init = self.scalar(t, need, d);
        let acc = self.fresh("acc");
        let len = self.scope.len();
        let head = if self.c.flip(50) {
            let i = self.fresh("i");
            let bound = match self.c.below(3) {
                0 => format!("{}i64", self.c.below(6)),
                1 => {
                    let p = self.c.below(self.sizes.len());
                    format!("n{p}")
                }
                _ => {
                    let s = self.any_size();
                    self.size_text(s)
                }
            };
            self.bind(
                &i,
                Ty::Scalar(S::I64),
                Attr {
                    prec: Prec::Exact,
                    mag: 70.0,
                },
            );
            format!("for {i} < {bound}")
        } else {
            let et = self.c.pick(&NUMERIC);
            let need_x = self.binding_need(et);
            let xs = self.array(et, None, need_x, d);
            let x = self.fresh("x");
            self.bind(&x, Ty::Scalar(et), xs.attr);
            format!("for {x} in {}", paren_array(&xs.text))
        };
        self.bind(&acc, Ty::Scalar(t), need);
        let mut body = self.scalar(t, need, d);
        if self.mode != Mode::Safe && !self.unused_errors {
            // The initial value of a loop whose body ignores the accumulator is unused: its
            // error may go unreported (see `Mode`). In the fault modes the body uses the
            // accumulator (comparing it keeps exact values exact).
            let other = self.scalar(t, need, d);
            let v = self.fresh("b");
            body = E {
                text: if t == S::Bool {
                    format!("(if {acc} then {} else {})", body.text, other.text)
                } else if need.prec == Prec::Inexact {
                    // Comparing approximate values is not continuous; `max` is.
                    format!("({}.max {acc} {})", t.name(), body.text)
                } else {
                    format!(
                        "(let {v} = {} in if {acc} < {v} then {v} else {})",
                        body.text, other.text
                    )
                },
                attr: body.attr.join(other.attr),
            };
        }
        self.scope.truncate(len);
        E {
            text: format!("(loop {acc} = {} {head} do {})", init.text, body.text),
            attr: init.attr.join(body.attr),
        }
    }

    fn boolean(&mut self, d: u32) -> E {
        let exact = |text: String| E {
            text,
            attr: Attr {
                prec: Prec::Exact,
                mag: 1.0,
            },
        };
        match self.c.weighted(&[1, 4, 2, 1, 2, 2]) {
            0 => {
                let w = self.common_choice();
                self.common(S::Bool, ANY, d, w)
            }
            1 => {
                let t = self.c.pick(&NUMERIC);
                // Comparisons amplify any difference: operands exact up to the sign of zero.
                let need = Attr {
                    prec: Prec::ZeroSign,
                    mag: f64::INFINITY,
                };
                let a = self.scalar(t, need, d);
                let b = self.scalar(t, need, d);
                let op = self.c.pick(&["<", "<=", ">", ">=", "==", "!="]);
                exact(format!("({} {op} {})", a.text, b.text))
            }
            2 => {
                let a = self.scalar(S::Bool, ANY, d);
                let b = self.scalar(S::Bool, ANY, d);
                let op = self.c.pick(&["&&", "||"]);
                exact(format!("({} {op} {})", a.text, b.text))
            }
            3 => {
                let a = self.scalar(S::Bool, ANY, d);
                exact(format!("(!{})", a.text))
            }
            4 => {
                let t = self.c.pick(&[S::F32, S::F64]);
                let a = self.scalar(t, ANY, d);
                let f = self.c.pick(&["isnan", "isinf"]);
                exact(format!("({}.{f} {})", t.name(), a.text))
            }
            _ => {
                let t = self.c.pick(&[S::I32, S::I64, S::F32, S::F64]);
                let need = Attr {
                    prec: Prec::ZeroSign,
                    mag: f64::INFINITY,
                };
                let a = self.scalar(t, need, d);
                exact(format!("(bool.{} {})", t.name(), a.text))
            }
        }
    }

    fn int(&mut self, t: S, need: Attr, d: u32) -> E {
        let tn = t.name();
        let cap = t.int_cap();
        // Integers wrap around: a bound below the type's range must be kept by every operand.
        let bounded = need.mag < cap;
        let child = |m: f64| Attr {
            prec: Prec::Exact,
            mag: if bounded { m } else { f64::INFINITY },
        };
        let mk = |text: String, mag: f64| E {
            text,
            attr: Attr {
                prec: Prec::Exact,
                mag: mag.min(cap),
            },
        };
        let which = self.c.weighted(&[
            4,                                                   // 0 common
            4,                                                   // 1 + - *
            self.boost(Mode::Division, 2),                       // 2 / % // %%
            usize::from(!bounded) * self.boost(Mode::NegExp, 1), // 3 **
            2,                                                   // 4 min max abs neg sgn
            2, // 5 conversion from another integer or bool
            2, // 6 conversion from a float
            usize::from(t == S::I64 && need.mag >= 70.0) * 2, // 7 length
            3, // 8 reduce
        ]);
        match which {
            0 => {
                let w = self.common_choice();
                self.common(t, need, d, w)
            }
            1 => {
                let op = self.c.pick(&["+", "-", "*"]);
                let m = if op == "*" {
                    need.mag.sqrt()
                } else {
                    need.mag / 2.0
                };
                let a = self.scalar(t, child(m), d);
                let b = self.scalar(t, child(m), d);
                let mag = if op == "*" {
                    mul_mag(a.attr.mag, b.attr.mag)
                } else {
                    a.attr.mag + b.attr.mag
                };
                mk(format!("({} {op} {})", a.text, b.text), mag)
            }
            2 => {
                let op = self.c.pick(&["/", "%", "//", "%%"]);
                let quot = op == "/" || op == "//";
                // |a / b| <= |a|, |a % b| < |b| (quotients wrap only for MIN / -1 = MIN).
                let a = self.scalar(
                    t,
                    if quot {
                        child(need.mag)
                    } else {
                        Attr::EXACT_ANY
                    },
                    d,
                );
                let b = self.scalar(
                    t,
                    if quot {
                        Attr::EXACT_ANY
                    } else {
                        child(need.mag)
                    },
                    d,
                );
                // A zero divisor becomes 1 (guarded), and then `a % 1 == 0`.
                let mag = if quot { a.attr.mag } else { b.attr.mag };
                if self.mode == Mode::Division && self.c.flip(75) {
                    mk(format!("({} {op} {})", a.text, b.text), mag)
                } else {
                    let v = self.fresh("d");
                    mk(
                        format!(
                            "({} {op} (let {v} = {} in if {v} == 0 then 1 else {v}))",
                            a.text, b.text
                        ),
                        mag,
                    )
                }
            }
            3 => {
                let a = self.scalar(t, Attr::EXACT_ANY, d);
                let b = self.scalar(t, Attr::EXACT_ANY, d);
                if self.mode == Mode::NegExp && self.c.flip(75) {
                    mk(format!("({} ** ({} %% 4))", a.text, b.text), cap)
                } else {
                    mk(format!("({} ** ({} & 7))", a.text, b.text), cap)
                }
            }
            4 => {
                let f = self.c.pick(&["min", "max", "abs", "neg", "sgn"]);
                if f == "min" || f == "max" {
                    let a = self.scalar(t, child(need.mag), d);
                    let b = self.scalar(t, child(need.mag), d);
                    mk(
                        format!("({tn}.{f} {} {})", a.text, b.text),
                        a.attr.mag.max(b.attr.mag),
                    )
                } else if f == "sgn" {
                    if need.mag < 1.0 {
                        return self.leaf(t, need);
                    }
                    let a = self.scalar(t, Attr::EXACT_ANY, d);
                    mk(format!("({tn}.sgn {})", a.text), 1.0)
                } else {
                    let a = self.scalar(t, child(need.mag), d);
                    let text = if f == "neg" && self.c.flip(50) {
                        format!("(-{})", a.text)
                    } else {
                        format!("({tn}.{f} {})", a.text)
                    };
                    mk(text, a.attr.mag)
                }
            }
            5 => {
                let from = self.c.pick(&[S::I32, S::I64, S::Bool]);
                if from == S::Bool && need.mag < 1.0 {
                    return self.leaf(t, need);
                }
                let a = self.scalar(
                    from,
                    if from == S::Bool {
                        Attr::EXACT_ANY
                    } else {
                        child(need.mag)
                    },
                    d,
                );
                // Narrowing keeps the low bits: the bound holds only if it held before.
                let mag = if from == S::Bool { 1.0 } else { a.attr.mag };
                mk(format!("({tn}.{} {})", from.name(), a.text), mag)
            }
            6 => {
                // Float to integer: unspecified for NaN, infinities and values out of range, so
                // guarded; the float must be exact (truncation is discontinuous).
                let from = self.c.pick(&[S::F32, S::F64]);
                let a = self.scalar(
                    from,
                    Attr {
                        prec: Prec::ZeroSign,
                        mag: f64::INFINITY,
                    },
                    d,
                );
                let limit = need.mag.min(if t == S::I32 { 2e9 } else { 9e18 }).floor();
                let v = self.fresh("f");
                let fl = from.name();
                mk(
                    format!(
                        "(let {v} = {} in if {fl}.abs {v} <= {} then {tn}.{fl} {v} else 0)",
                        a.text,
                        lit(prim(from, limit))
                    ),
                    limit,
                )
            }
            7 => {
                let et = self.c.pick(&NUMERIC);
                let a = self.array(et, None, ANY, d);
                mk(format!("(length {})", paren_array(&a.text)), 70.0)
            }
            _ => self.reduction(t, need, d),
        }
    }

    /// `reduce`, `T.sum`, `T.minimum`, `T.maximum` of a numeric array.
    fn reduction(&mut self, t: S, need: Attr, d: u32) -> E {
        let tn = t.name();
        let cap = t.int_cap();
        let plus_ok = if t.is_float() {
            need.prec == Prec::Inexact
        } else {
            need.mag >= cap
        };
        let minmax_ok =
            (t.is_int() && need.mag >= cap) || (t.is_float() && need.prec >= Prec::ZeroSign);
        let which = self
            .c
            .weighted(&[usize::from(plus_ok), usize::from(minmax_ok)]);
        if which == 0 && plus_ok {
            let elem_need = if t.is_float() {
                Attr {
                    prec: Prec::Inexact,
                    mag: t.sum_mag().min(need.mag / 70.0),
                }
            } else {
                Attr::EXACT_ANY
            };
            let a = self.array(t, None, elem_need, d);
            let text = if self.c.flip(50) {
                format!("({tn}.sum {})", paren_array(&a.text))
            } else {
                format!(
                    "(reduce (+) {} {})",
                    lit(prim(t, 0.0)),
                    paren_array(&a.text)
                )
            };
            let attr = if t.is_float() {
                a.attr.with_prec(Prec::Inexact).with_mag(a.attr.mag * 70.0)
            } else {
                Attr::EXACT_ANY.with_mag(cap)
            };
            E { text, attr }
        } else if minmax_ok {
            let a = self.array(t, None, need, d);
            let f = self.c.pick(&["min", "max"]);
            let text = match (self.c.flip(50), f) {
                (true, "min") => format!("({tn}.minimum {})", paren_array(&a.text)),
                (true, _) => format!("({tn}.maximum {})", paren_array(&a.text)),
                (false, _) => {
                    let ne = self.minmax_ne(t, f);
                    format!("(reduce {tn}.{f} {ne} {})", paren_array(&a.text))
                }
            };
            let attr = if t.is_float() {
                a.attr.with_prec(Prec::ZeroSign)
            } else {
                Attr::EXACT_ANY.with_mag(cap)
            };
            E { text, attr }
        } else {
            self.leaf(t, need)
        }
    }

    fn float(&mut self, t: S, need: Attr, d: u32) -> E {
        let tn = t.name();
        let inexact_ok = need.prec == Prec::Inexact;
        let zs_ok = need.prec >= Prec::ZeroSign;
        let unbounded = need.mag == f64::INFINITY;
        let which = self.c.weighted(&[
            4,                                    // 0 common
            5,                                    // 1 + - *
            usize::from(unbounded) * 2,           // 2 /
            usize::from(unbounded),               // 3 %
            usize::from(unbounded && inexact_ok), // 4 **, pow
            usize::from(zs_ok) * 2,               // 5 min, max
            2,                                    // 6 abs, neg
            usize::from(inexact_ok) * 10,         // 7 unary functions
            2,                                    // 8 floor, ceil, round, trunc, sqrt, sgn
            usize::from(inexact_ok) * 3,          // 9 atan2, hypot
            3,                                    // 10 conversions
            3,                                    // 11 reduce
        ]);
        match which {
            0 => {
                let w = self.common_choice();
                self.common(t, need, d, w)
            }
            1 => {
                let op = self.c.pick(&["+", "-", "*"]);
                let m = if op == "*" {
                    need.mag.sqrt()
                } else {
                    need.mag / 2.0
                };
                let cn = need.with_mag(m);
                let a = self.scalar(t, cn, d);
                // An approximate value's error is absolute near 0 (`f32.sin 1e-30` may be 0 on
                // Vulkan): a product amplifies it by the other factor, which must be moderate.
                let cn = if op != "*" {
                    cn
                } else if a.attr.prec == Prec::Inexact {
                    cn.with_mag(cn.mag.min(INEXACT_FACTOR))
                } else if a.attr.mag > INEXACT_FACTOR {
                    Attr {
                        prec: cn.prec.min(Prec::ZeroSign),
                        ..cn
                    }
                } else {
                    cn
                };
                let b = self.scalar(t, cn, d);
                let mag = if op == "*" {
                    mul_mag(a.attr.mag, b.attr.mag)
                } else {
                    a.attr.mag + b.attr.mag
                };
                E {
                    text: format!("({} {op} {})", a.text, b.text),
                    attr: a.attr.join(b.attr).with_mag(mag),
                }
            }
            2 => {
                // The divisor exact: 1/0 and 1/-0, 1/tiny and 1/-tiny differ grossly; the
                // dividend too (`tiny / 0.0` is an infinity, `0.0 / 0.0` NaN).
                let a = self.scalar(
                    t,
                    Attr {
                        prec: need.prec.min(Prec::ZeroSign),
                        ..need
                    },
                    d,
                );
                let b = self.scalar(t, Attr::EXACT_ANY, d);
                E {
                    text: format!("({} / {})", a.text, b.text),
                    attr: a.attr.join(b.attr).with_mag(f64::INFINITY),
                }
            }
            3 => {
                let a = self.scalar(t, Attr::EXACT_ANY, d);
                let b = self.scalar(t, Attr::EXACT_ANY, d);
                E {
                    text: format!("({} % {})", a.text, b.text),
                    attr: Attr::EXACT_ANY,
                }
            }
            4 => {
                let a = self.scalar(t, Attr::EXACT_ANY, d);
                let b = self.scalar(t, Attr::EXACT_ANY, d);
                let text = if self.c.flip(50) {
                    format!("({} ** {})", a.text, b.text)
                } else {
                    format!("({tn}.pow {} {})", a.text, b.text)
                };
                E { text, attr: ANY }
            }
            5 => {
                let a = self.scalar(t, need, d);
                let b = self.scalar(t, need, d);
                let f = self.c.pick(&["min", "max"]);
                E {
                    text: format!("({tn}.{f} {} {})", a.text, b.text),
                    attr: a.attr.join(b.attr).with_prec(Prec::ZeroSign),
                }
            }
            6 => {
                let a = self.scalar(t, need, d);
                let text = match self.c.below(3) {
                    0 => format!("({tn}.abs {})", a.text),
                    1 => format!("(-{})", a.text),
                    _ => format!("({tn}.neg {})", a.text),
                };
                E { text, attr: a.attr }
            }
            7 => self.math(t, need, d),
            8 => {
                let f = self
                    .c
                    .pick(&["floor", "ceil", "round", "trunc", "sqrt", "sgn"]);
                let m = if f == "sqrt" {
                    need.mag * need.mag
                } else if f == "sgn" {
                    f64::INFINITY
                } else {
                    need.mag
                };
                if f == "sgn" && need.mag < 1.0 {
                    return self.leaf(t, need);
                }
                let a = self.scalar(
                    t,
                    Attr {
                        prec: need.prec.min(Prec::ZeroSign),
                        mag: m,
                    },
                    d,
                );
                let mag = match f {
                    "sqrt" => a.attr.mag.sqrt(),
                    "sgn" => 1.0,
                    // Rounding up may pass the bound by less than 1.
                    _ => a.attr.mag.ceil(),
                };
                if mag > need.mag {
                    return self.leaf(t, need);
                }
                E {
                    text: format!("({tn}.{f} {})", a.text),
                    attr: a.attr.with_mag(mag),
                }
            }
            9 => {
                if self.c.flip(50) {
                    let a = self.scalar(t, Attr::EXACT_ANY, d);
                    let b = self.scalar(t, Attr::EXACT_ANY, d);
                    E {
                        text: format!("({tn}.atan2 {} {})", a.text, b.text),
                        attr: Attr {
                            prec: Prec::Inexact,
                            mag: 3.15,
                        },
                    }
                    .fit(t, need, self)
                } else {
                    let cn = need.with_mag(need.mag / 1.5);
                    let a = self.scalar(t, cn, d);
                    let b = self.scalar(t, cn, d);
                    E {
                        text: format!("({tn}.hypot {} {})", a.text, b.text),
                        attr: Attr {
                            prec: Prec::Inexact,
                            mag: 1.4143 * a.attr.mag.max(b.attr.mag),
                        },
                    }
                }
            }
            10 => {
                let from = self.c.pick(&[S::I32, S::I64, S::Bool, S::F32, S::F64]);
                if from == t || (from == S::Bool && need.mag < 1.0) {
                    return self.leaf(t, need);
                }
                let cn = if from.is_int() {
                    Attr::EXACT_ANY.with_mag(need.mag)
                } else if from == S::Bool {
                    Attr::EXACT_ANY
                } else {
                    need
                };
                let a = self.scalar(from, cn, d);
                let attr = match from {
                    S::Bool => Attr {
                        prec: Prec::Exact,
                        mag: 1.0,
                    },
                    // Integers convert exactly (to the nearest float).
                    S::I32 | S::I64 => Attr::EXACT_ANY.with_mag(a.attr.mag),
                    _ => a.attr,
                };
                E {
                    text: format!("({tn}.{} {})", from.name(), a.text),
                    attr,
                }
            }
            _ => self.reduction(t, need, d),
        }
    }

    /// A unary function of the float modules (all approximate on Vulkan).
    fn math(&mut self, t: S, need: Attr, d: u32) -> E {
        // (name, the argument's precision, the argument's bound, the result's bound)
        let big = if t == S::F32 { 104.0 } else { 745.0 };
        let table: [(&str, Prec, f64, f64); 19] = [
            ("exp", Prec::Inexact, need.mag.ln().max(0.0), need.mag),
            ("log", Prec::ZeroSign, f64::INFINITY, big),
            ("log2", Prec::ZeroSign, f64::INFINITY, big * 1.45),
            ("log10", Prec::ZeroSign, f64::INFINITY, big * 0.44),
            ("log1p", Prec::Exact, f64::INFINITY, big),
            ("sin", Prec::Inexact, 10.0, 1.0),
            ("cos", Prec::Inexact, 10.0, 1.0),
            ("tan", Prec::Inexact, 1.5, 15.0),
            ("asin", Prec::ZeroSign, f64::INFINITY, 1.58),
            ("acos", Prec::ZeroSign, f64::INFINITY, 3.15),
            ("atan", Prec::Inexact, f64::INFINITY, 1.58),
            ("sinh", Prec::Inexact, need.mag.asinh(), need.mag),
            ("cosh", Prec::Inexact, need.mag.acosh().max(0.0), need.mag),
            ("tanh", Prec::Inexact, f64::INFINITY, 1.0),
            ("asinh", Prec::Inexact, need.mag.sinh(), big),
            ("acosh", Prec::ZeroSign, f64::INFINITY, big),
            ("atanh", Prec::ZeroSign, f64::INFINITY, f64::INFINITY),
            // `cbrt` is steep at 0: an approximate argument near 0 (a device's `f32.tanh` may be
            // off by 3e-8 there) would be off by 3e-3.
            ("cbrt", Prec::ZeroSign, need.mag.powi(3), need.mag),
            ("erf", Prec::Inexact, f64::INFINITY, 1.0),
        ];
        let fits: Vec<_> = table
            .iter()
            .copied()
            .filter(|(f, _, arg, res)| {
                *res <= need.mag && !(matches!(*f, "exp" | "cosh") && need.mag < 1.0) && *arg >= 0.0
            })
            .collect::<Vec<_>>();
        if fits.is_empty() {
            return self.leaf(t, need);
        }
        let (f, prec, arg, res) = fits[self.c.below(fits.len())];
        let a = self.scalar(t, Attr { prec, mag: arg }, d);
        let res = match f {
            "exp" => a.attr.mag.exp(),
            "sinh" => a.attr.mag.sinh(),
            "cosh" => a.attr.mag.cosh(),
            "cbrt" => a.attr.mag.cbrt(),
            _ => res,
        }
        .min(res);
        E {
            text: format!("({}.{f} {})", t.name(), a.text),
            attr: Attr {
                prec: Prec::Inexact,
                mag: res,
            },
        }
    }

    /// A one-dimensional array of element type `t` (of size `size` if given), whose elements
    /// fit `need`.
    fn array(&mut self, t: S, size: Option<Size>, need: Attr, depth: u32) -> A {
        let vars: Vec<(String, Attr, Size)> = self
            .scope
            .iter()
            .filter_map(|v| match v.ty {
                Ty::Arr(et, s) if et == t && size.is_none_or(|z| z == s) && v.attr.fits(need) => {
                    Some((v.name.clone(), v.attr, s))
                }
                _ => None,
            })
            .collect();
        let rows: Vec<(String, Attr, Size, Size)> = self
            .scope
            .iter()
            .filter_map(|v| match v.ty {
                Ty::Arr2(et, s, r) if size.is_none_or(|z| z == s) => {
                    Some((v.name.clone(), v.attr, s, r)).filter(|_| et.is_float() || et.is_int())
                }
                _ => None,
            })
            .collect();
        if !self.spend(depth) {
            return self.array_leaf(t, size, need, &vars);
        }
        let d = depth - 1;
        let sum_ok = if t.is_float() {
            need.prec == Prec::Inexact
        } else {
            true
        };
        let which = self.c.weighted(&[
            3,                                                // 0 leaf
            6,                                                // 1 map
            self.boost(Mode::Shape, 4),                       // 2 map2 / zip
            usize::from(t != S::Bool) * 2,                    // 3 scan
            1,                                                // 4 reverse
            1,                                                // 5 replicate
            usize::from(t == S::I64 && need.mag >= 70.0) * 2, // 6 iota
            1,                                                // 7 if
            usize::from(!rows.is_empty()) * 3,                // 8 map over rows
        ]);
        match which {
            0 => self.array_leaf(t, size, need, &vars),
            1 => {
                let st = if self.c.flip(40) {
                    t
                } else {
                    self.c.pick(&[S::F32, S::F64, S::I32, S::I64, S::Bool])
                };
                let sn = self.binding_need(st);
                let src = self.array(st, size, sn, d);
                let x = self.fresh("x");
                let len = self.scope.len();
                self.bind(&x, Ty::Scalar(st), src.attr);
                let body = self.scalar(t, need, d);
                self.scope.truncate(len);
                A {
                    text: format!("map (\\{x} -> {}) {}", body.text, paren_array(&src.text)),
                    attr: body.attr,
                    size: src.size,
                }
            }
            2 => {
                let s1 = self.c.pick(&NUMERIC);
                let s2 = self.c.pick(&NUMERIC);
                let n1 = self.binding_need(s1);
                let n2 = self.binding_need(s2);
                let a = self.array(s1, size, n1, d);
                let other = if self.mode == Mode::Shape && size.is_none() && self.c.flip(60) {
                    None
                } else {
                    Some(a.size)
                };
                let b = self.array(s2, other, n2, d);
                let (x, y) = (self.fresh("x"), self.fresh("y"));
                let len = self.scope.len();
                self.bind(&x, Ty::Scalar(s1), a.attr);
                self.bind(&y, Ty::Scalar(s2), b.attr);
                let body = self.scalar(t, need, d);
                self.scope.truncate(len);
                let text = if self.c.flip(50) {
                    format!(
                        "map2 (\\{x} {y} -> {}) {} {}",
                        body.text,
                        paren_array(&a.text),
                        paren_array(&b.text)
                    )
                } else {
                    format!(
                        "map (\\({x}, {y}) -> {}) (zip {} {})",
                        body.text,
                        paren_array(&a.text),
                        paren_array(&b.text)
                    )
                };
                A {
                    text,
                    attr: body.attr,
                    size: a.size,
                }
            }
            3 => {
                let tn = t.name();
                // Integer sums wrap: not where the elements must stay bounded.
                let plus = sum_ok && (t.is_float() || need.mag >= t.int_cap()) && self.c.flip(50);
                if plus {
                    let elem_need = if t.is_float() {
                        Attr {
                            prec: Prec::Inexact,
                            mag: t.sum_mag().min(need.mag / 70.0),
                        }
                    } else {
                        Attr::EXACT_ANY
                    };
                    let a = self.array(t, size, elem_need, d);
                    let attr = if t.is_float() {
                        a.attr.with_prec(Prec::Inexact).with_mag(a.attr.mag * 70.0)
                    } else {
                        Attr::EXACT_ANY
                    };
                    A {
                        text: format!("scan (+) {} {}", lit(prim(t, 0.0)), paren_array(&a.text)),
                        attr,
                        size: a.size,
                    }
                } else if t.is_int() || need.prec >= Prec::ZeroSign {
                    let a = self.array(t, size, need, d);
                    let f = self.c.pick(&["min", "max"]);
                    let ne = self.minmax_ne(t, f);
                    A {
                        text: format!("scan {tn}.{f} {ne} {}", paren_array(&a.text)),
                        attr: a.attr.with_prec(if t.is_float() {
                            Prec::ZeroSign
                        } else {
                            Prec::Exact
                        }),
                        size: a.size,
                    }
                    .fit_array(t, need, self)
                } else {
                    self.array_leaf(t, size, need, &vars)
                }
            }
            4 => {
                let a = self.array(t, size, need, d);
                A {
                    text: format!("reverse {}", paren_array(&a.text)),
                    ..a
                }
            }
            5 => {
                let s = size.unwrap_or_else(|| self.any_size());
                let e = self.scalar(t, need, d);
                A {
                    text: format!("replicate {} {}", self.size_text(s), e.text),
                    attr: e.attr,
                    size: s,
                }
            }
            6 => {
                let s = size.unwrap_or_else(|| self.any_size());
                A {
                    text: format!("iota {}", self.size_text(s)),
                    attr: Attr::EXACT_ANY.with_mag(70.0),
                    size: s,
                }
            }
            7 => {
                let c = self.scalar(S::Bool, ANY, d);
                let a = self.array(t, size, need, d);
                let b = self.array(t, Some(a.size), need, d);
                A {
                    text: format!("if {} then {} else {}", c.text, a.text, b.text),
                    attr: a.attr.join(b.attr),
                    size: a.size,
                }
            }
            _ => {
                // `map` over the rows of a two-dimensional array.
                let (name, attr, outer, inner) = rows[self.c.below(rows.len())].clone();
                let et = self
                    .scope
                    .iter()
                    .find_map(|v| match v.ty {
                        Ty::Arr2(et, _, _) if v.name == name => Some(et),
                        _ => None,
                    })
                    .unwrap_or(S::F32);
                let r = self.fresh("row");
                let len = self.scope.len();
                self.bind(&r, Ty::Arr(et, inner), attr);
                let body = self.scalar(t, need, d);
                self.scope.truncate(len);
                A {
                    text: format!("map (\\{r} -> {}) {name}", body.text),
                    attr: body.attr,
                    size: outer,
                }
            }
        }
    }

    fn array_leaf(
        &mut self,
        t: S,
        size: Option<Size>,
        need: Attr,
        vars: &[(String, Attr, Size)],
    ) -> A {
        if !vars.is_empty() && self.c.flip(80) {
            let (text, attr, size) = vars[self.c.below(vars.len())].clone();
            return A { text, attr, size };
        }
        // An array of another element type, converted.
        let converted: Vec<A> = self
            .scope
            .iter()
            .filter_map(|v| match v.ty {
                Ty::Arr(et, s) if et != t && size.is_none_or(|z| z == s) => {
                    convert(et, t, "", v.attr)
                        .filter(|c| c.1.fits(need))
                        .map(|(f, attr)| A {
                            text: format!(
                                "map {} {}",
                                f.trim_matches(|c| c == '(' || c == ')').trim(),
                                v.name
                            ),
                            attr,
                            size: s,
                        })
                }
                _ => None,
            })
            .collect();
        if !converted.is_empty() && self.c.flip(80) {
            let k = self.c.below(converted.len());
            return converted.into_iter().nth(k).unwrap();
        }
        let s = size.unwrap_or_else(|| self.any_size());
        let e = self.leaf(t, need);
        A {
            text: format!("replicate {} {}", self.size_text(s), e.text),
            attr: e.attr,
            size: s,
        }
    }

    /// A two-dimensional array: a `map` whose function returns an array of a size that does
    /// not depend on the element (so the result is regular), or a `replicate` of an array.
    fn array2(&mut self, t: S, need: Attr, depth: u32) -> (String, Attr, Size, Size) {
        let inner = self.any_size();
        if self.c.flip(20) {
            let a = self.array(t, Some(inner), need, depth.saturating_sub(1));
            let outer = self.any_size();
            return (
                format!(
                    "replicate {} {}",
                    self.size_text(outer),
                    paren_array(&a.text)
                ),
                a.attr,
                outer,
                inner,
            );
        }
        let st = self.c.pick(&NUMERIC);
        let sn = self.binding_need(st);
        let src = self.array(st, None, sn, depth.saturating_sub(1));
        let x = self.fresh("x");
        let len = self.scope.len();
        self.bind(&x, Ty::Scalar(st), src.attr);
        let body = self.array(t, Some(inner), need, depth.saturating_sub(1));
        self.scope.truncate(len);
        (
            format!("map (\\{x} -> {}) {}", body.text, paren_array(&src.text)),
            body.attr,
            src.size,
            inner,
        )
    }
}

impl E {
    /// The expression if it fits `need`, else a literal of type `t` that does.
    fn fit(self, t: S, need: Attr, g: &mut Gen) -> E {
        if self.attr.fits(need) {
            self
        } else {
            g.literal(t, need)
        }
    }
}

impl A {
    fn fit_array(self, t: S, need: Attr, g: &mut Gen) -> A {
        if self.attr.fits(need) {
            self
        } else {
            let e = g.literal(t, need);
            A {
                text: format!("replicate {} {}", g.size_text(self.size), e.text),
                attr: e.attr,
                size: self.size,
            }
        }
    }
}

/// `text` (a value of type `from` with attribute `attr`) converted to type `to`, with the
/// attribute of the result; `None` where the conversion is not exact (floats to integers are
/// unspecified out of range, and discontinuous). With an empty `text`, the conversion function.
fn convert(from: S, to: S, text: &str, attr: Attr) -> Option<(String, Attr)> {
    if from == to {
        return Some((text.to_string(), attr));
    }
    let f = format!("({}.{} {text})", to.name(), from.name());
    let exact = |mag: f64| Attr {
        prec: Prec::Exact,
        mag,
    };
    match (from, to) {
        (S::Bool, _) => Some((f, exact(1.0))),
        (_, S::Bool) if attr.prec <= Prec::ZeroSign => Some((f, exact(1.0))),
        (_, S::Bool) => None,
        // Integers convert to the nearest float.
        (S::I32 | S::I64, S::F32 | S::F64) => Some((f, exact(attr.mag))),
        // Narrowing keeps the low bits: the bound holds only if it holds before.
        (S::I32 | S::I64, S::I32 | S::I64) => Some((
            f,
            exact(if attr.mag <= to.int_cap() {
                attr.mag
            } else {
                to.int_cap()
            }),
        )),
        (S::F32 | S::F64, S::F32 | S::F64) => Some((f, attr)),
        _ => None,
    }
}

/// The bound of a product (0 times an unbounded magnitude is 0, not NaN).
fn mul_mag(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        0.0
    } else {
        a * b
    }
}

/// `text` as an argument of a function application.
fn paren_array(text: &str) -> String {
    if text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || (text.starts_with('(') && text.ends_with(')') && balanced_outer(text))
    {
        text.to_string()
    } else {
        format!("({text})")
    }
}

/// Whether the first `(` of `text` closes at its last character.
fn balanced_outer(text: &str) -> bool {
    let mut depth = 0;
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i + 1 != text.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// The program and inputs of the choices `data`.
fn generate(data: &[u32]) -> Case {
    let mut c = Choices { data, pos: 0 };
    let mode = match c.weighted(&[8, 3, 3, 2, 2]) {
        0 => Mode::Safe,
        1 => Mode::Bounds,
        2 => Mode::Division,
        3 => Mode::Shape,
        _ => Mode::NegExp,
    };
    let unused_errors = std::env::var("VKAD_RANDPROG_UNUSED_ERRORS").is_ok_and(|v| v == "1");
    let nsizes = 1 + c.below(2);
    let sizes: Vec<usize> = (0..nsizes)
        .map(|_| match c.below(8) {
            0 => 0,
            1 => 1,
            2 => 70,
            3 => 2,
            4 => c.below(8),
            _ => c.below(71),
        })
        // No empty arrays in fault modes (see `Gen::any_size`).
        .map(|n| {
            if mode == Mode::Safe || unused_errors {
                n
            } else {
                n.max(1)
            }
        })
        .collect();
    let mut g = Gen {
        c,
        mode,
        scope: Vec::new(),
        sizes: sizes.clone(),
        names: 0,
        fuel: 0,
        unused_errors,
    };
    let mut params = Vec::new();
    let mut args = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        g.bind(
            &format!("n{i}"),
            Ty::Scalar(S::I64),
            Attr {
                prec: Prec::Exact,
                mag: n as f64,
            },
        );
    }
    // Arrays: at least one of each size.
    let narrays = nsizes + g.c.below(4);
    for k in 0..narrays {
        let p = if k < nsizes { k } else { g.c.below(nsizes) };
        let t = g.c.pick(&NUMERIC);
        // Tame arrays have small finite values (and every non-finite one); wild arrays any.
        let tame = g.c.flip(50);
        let mag = if tame { 10.0 } else { f64::INFINITY };
        let xs: Vec<PrimValue> = (0..sizes[p]).map(|_| value(&mut g.c, t, mag)).collect();
        let name = format!("a{k}");
        params.push(format!("({name}: [n{p}]{})", t.name()));
        args.push(Value::Array(ArrayValue::new(vec![sizes[p]], buffer(t, xs))));
        g.bind(
            &name,
            Ty::Arr(t, Size::Param(p)),
            Attr {
                prec: Prec::Exact,
                mag,
            },
        );
    }
    for k in 0..g.c.below(4) {
        let t = g.c.pick(&[S::F32, S::F64, S::I32, S::I64, S::Bool]);
        let mag = if g.c.flip(50) { 10.0 } else { f64::INFINITY };
        let x = value(&mut g.c, t, mag);
        let name = format!("s{k}");
        params.push(format!("({name}: {})", t.name()));
        args.push(Value::Scalar(x));
        g.bind(
            &name,
            Ty::Scalar(t),
            Attr {
                prec: Prec::Exact,
                mag,
            },
        );
    }
    let mut body = String::new();
    let nlets = g.c.below(4);
    for _ in 0..nlets {
        g.fuel = 16;
        let name = g.fresh("l");
        match g.c.below(3) {
            0 => {
                let t = g.c.pick(&[S::F32, S::F64, S::I32, S::I64, S::Bool]);
                let need = g.binding_need(t);
                let e = g.scalar(t, need, 4);
                let _ = writeln!(body, "  let {name} = {} in", e.text);
                g.bind(&name, Ty::Scalar(t), e.attr);
            }
            1 => {
                let t = g.c.pick(&NUMERIC);
                let need = g.binding_need(t);
                let a = g.array(t, None, need, 4);
                let _ = writeln!(body, "  let {name} = {} in", a.text);
                g.bind(&name, Ty::Arr(t, a.size), a.attr);
            }
            _ => {
                let t = g.c.pick(&NUMERIC);
                let need = g.binding_need(t);
                let (text, attr, outer, inner) = g.array2(t, need, 4);
                let _ = writeln!(body, "  let {name} = {text} in",);
                g.bind(&name, Ty::Arr2(t, outer, inner), attr);
            }
        }
    }
    let nres = 1 + g.c.below(3);
    let mut results = Vec::new();
    for _ in 0..nres {
        g.fuel = 20;
        let text = match g.c.below(5) {
            0 | 1 => {
                let t = g.c.pick(&[S::F32, S::F64, S::I32, S::I64, S::Bool]);
                let need = g.result_need(t);
                g.scalar(t, need, 5).text
            }
            2 | 3 => {
                let t = g.c.pick(&[S::F32, S::F64, S::I32, S::I64, S::Bool]);
                let need = g.result_need(t);
                g.array(t, None, need, 5).text
            }
            _ => {
                let t = g.c.pick(&NUMERIC);
                let need = g.result_need(t);
                g.array2(t, need, 4).0
            }
        };
        results.push(text);
    }
    let src = format!(
        "entry main {} {} =\n{body}  ({})\n",
        (0..nsizes)
            .map(|i| format!("[n{i}]"))
            .collect::<Vec<_>>()
            .join(" "),
        params.join(" "),
        results.join(",\n   ")
    );
    Case { src, args, mode }
}

// ---------------------------------------------------------------------------------------------
// Running a case.

/// The kind of a runtime error, as both backends can tell it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Bounds,
    Division,
    NegExp,
    Shape,
    Assert,
    Other(String),
}

/// The kind of an interpreter error, from its message (`RuntimeError` has only a message):
/// the categories of `core/src/primops.rs` and `core/src/interp` messages.
fn interp_kind(msg: &str) -> Kind {
    if msg.contains("out of bounds") {
        Kind::Bounds
    } else if msg.contains("division by zero") {
        Kind::Division
    } else if msg.contains("negative exponent") {
        Kind::NegExp
    } else if msg.contains("Assertion") {
        Kind::Assert
    } else if msg.contains("size") || msg.contains("shape") {
        // Both `size` and `shape` messages: the interpreter reports mismatched sizes of
        // `map2`/`zip` operands through the coercions of the lowered program.
        Kind::Shape
    } else {
        Kind::Other(msg.to_string())
    }
}

/// The kind of a Vulkan runtime error; `None` for errors that are not the program's (not
/// supported, device, internal, ...).
fn vulkan_kind(e: &VkError) -> Option<Kind> {
    match e {
        VkError::Runtime { kind, message, .. } => Some(match kind {
            RuntimeKind::Bounds => Kind::Bounds,
            RuntimeKind::Division => Kind::Division,
            RuntimeKind::NegativeExponent => Kind::NegExp,
            RuntimeKind::Shape | RuntimeKind::Size => Kind::Shape,
            // Mismatched sizes of `map2`/`zip` operands are assertions of the lowered program
            // (`array sizes do not match (shape mismatch)`): the message tells them apart.
            RuntimeKind::Assert => match interp_kind(message) {
                Kind::Other(_) => Kind::Assert,
                k => k,
            },
            // Scalar operations on the host fail with the interpreter's `primops` messages.
            RuntimeKind::Arithmetic => interp_kind(message),
            RuntimeKind::Arguments => Kind::Other(message.clone()),
        }),
        _ => None,
    }
}

/// What happened to a case that passed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Passed {
    Values,
    Failed(Kind),
}

/// Runs `case` on both backends: `Ok` when they agree, else why not (with a short tag first
/// that says what kind of disagreement it is, for [`reduce_failure`]).
fn check(case: &Case) -> Result<Passed, (String, String)> {
    let c = vkad_core::compile("random.fut", &case.src).map_err(|e| {
        (
            "compile".to_string(),
            format!(
                "the generator made a program that does not compile (a generator bug):\n{}",
                e.render()
            ),
        )
    })?;
    let want = c.run_interp("main", case.args.clone());
    let ctx = ctx();
    let th = vkad_spirv::runtime::tuned_thresholds(&ctx, &[]).expect("default thresholds");
    let got = vkad_spirv::run_entry_kernels(&ctx, &c, "main", case.args.clone(), &th, false)
        .map(|(v, _)| v);
    match (&want, &got) {
        (Ok(w), Ok(g)) => {
            let ms = compare_values(g, w);
            if ms.is_empty() {
                Ok(Passed::Values)
            } else {
                Err((
                    "values".to_string(),
                    format!(
                        "different results:\n  {}\ninterpreter: {}\nvulkan:      {}",
                        ms.iter().map(|m| m.to_string()).collect::<Vec<_>>().join("\n  "),
                        show_values(w),
                        show_values(g)
                    ),
                ))
            }
        }
        (Err(w), Err(g)) => {
            let wk = interp_kind(&w.message);
            match vulkan_kind(g) {
                Some(gk) if gk == wk && !matches!(wk, Kind::Other(_)) && !w.not_supported => {
                    Ok(Passed::Failed(wk))
                }
                _ => Err((
                    format!("errors {wk:?}"),
                    format!("different errors:\ninterpreter: {w}\nvulkan:      {g} ({g:?})"),
                )),
            }
        }
        (Ok(w), Err(g)) => Err((
            format!("vulkan fails {:?}", vulkan_kind(g)),
            format!(
                "the interpreter succeeds but Vulkan fails:\ninterpreter: {}\nvulkan:      {g} ({g:?})",
                show_values(w)
            ),
        )),
        (Err(w), Ok(g)) => Err((
            format!("interpreter fails {:?}", interp_kind(&w.message)),
            format!(
                "Vulkan succeeds but the interpreter fails:\ninterpreter: {w}\nvulkan:      {}",
                show_values(g)
            ),
        )),
    }
}

fn show_values(vs: &[Value]) -> String {
    vs.iter()
        .map(vkad_core::values::write_text)
        .collect::<Vec<_>>()
        .join(" ")
}

fn describe(case: &Case, why: &str) -> String {
    format!(
        "fault mode {:?}\n--- program:\n{}--- input (`vkad run random.fut < input`):\n{}\n--- {why}",
        case.mode,
        case.src,
        case.args
            .iter()
            .map(vkad_core::values::write_text)
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// Zeroes chunks of the choices of a failing case while it fails the same way (the same tag),
/// within a budget of runs: a smaller program with simpler values.
fn reduce_failure(data: &[u32], tag: &str) -> Vec<u32> {
    let mut best = data.to_vec();
    // Past the choices the generator reads zeros: trailing zeros are no choices.
    while best.last() == Some(&0) {
        best.pop();
    }
    let budget = std::time::Instant::now();
    let mut chunk = best.len().next_power_of_two();
    while chunk >= 1 {
        let mut i = 0;
        while i < best.len() {
            if budget.elapsed().as_secs() > 120 {
                return best;
            }
            let end = (i + chunk).min(best.len());
            if best[i..end].iter().any(|&x| x != 0) {
                let mut cand = best.clone();
                if end == cand.len() {
                    cand.truncate(i);
                } else {
                    cand[i..end].iter_mut().for_each(|x| *x = 0);
                }
                let case = generate(&cand);
                if matches!(check(&case), Err((t, _)) if t == tag) {
                    best = cand;
                    continue;
                }
            }
            i += chunk;
        }
        chunk /= 2;
    }
    best
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

/// How many `u32` choices a case draws from (a program uses a few hundred).
const CHOICES: usize = 1500;

#[test]
fn vulkan_agrees_with_the_interpreter_on_random_programs() {
    let cases = env_number("VKAD_RANDPROG_CASES").unwrap_or(64) as u32;
    let seed = env_number("VKAD_RANDPROG_SEED").unwrap_or(0x16);
    let verbose = std::env::var("VKAD_RANDPROG_VERBOSE").is_ok_and(|v| v == "1");
    let config = Config {
        cases,
        failure_persistence: None,
        // The choices are reduced by `reduce_failure`, which knows their meaning.
        max_shrink_iters: 0,
        ..Config::default()
    };
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let stats = std::cell::RefCell::new(Vec::<(Mode, Passed)>::new());
    let start = std::time::Instant::now();
    let result = runner.run(&vec(any::<u32>(), CHOICES), |data| {
        let case = generate(&data);
        let r = check(&case);
        if verbose {
            eprintln!("{}\n=> {r:?}\n", describe(&case, ""));
        }
        match r {
            Ok(p) => {
                stats.borrow_mut().push((case.mode, p));
                Ok(())
            }
            Err((tag, why)) => {
                let small = reduce_failure(&data, &tag);
                let small_case = generate(&small);
                let small_why = match check(&small_case) {
                    Err((_, w)) => w,
                    Ok(_) => "(passes: the reduction is flaky)".to_string(),
                };
                Err(TestCaseError::fail(format!(
                    "Vulkan and the interpreter disagree ({tag}).\n\n=== reduced case:\n{}\n\n=== original case:\n{}",
                    describe(&small_case, &small_why),
                    describe(&case, &why)
                )))
            }
        }
    });
    match result {
        Ok(()) => {}
        // The reason has the program and its inputs; the choices themselves are no help.
        Err(proptest::test_runner::TestError::Fail(reason, _)) => panic!("{reason}"),
        Err(e) => panic!("{e}"),
    }
    let stats = stats.into_inner();
    let count = |f: &dyn Fn(&(Mode, Passed)) -> bool| stats.iter().filter(|s| f(s)).count();
    let values = count(&|s| s.1 == Passed::Values);
    let mut summary = format!(
        "{} random programs in {:.1} s: {values} agreed on their results",
        stats.len(),
        start.elapsed().as_secs_f64()
    );
    for k in [Kind::Bounds, Kind::Division, Kind::Shape, Kind::NegExp] {
        let n = count(&|s| s.1 == Passed::Failed(k.clone()));
        let _ = write!(summary, ", {n} failed with {k:?} on both");
    }
    for m in [
        Mode::Safe,
        Mode::Bounds,
        Mode::Division,
        Mode::Shape,
        Mode::NegExp,
    ] {
        let n = count(&|s| s.0 == m);
        let f = count(&|s| s.0 == m && s.1 != Passed::Values);
        let _ = write!(summary, "\n  fault mode {m:?}: {n} programs, {f} failed");
    }
    eprintln!("{summary}");
    // Most programs must compute something: a generator whose programs all fail would test
    // little.
    assert!(
        values * 2 >= stats.len(),
        "too few programs ran to the end: {summary}"
    );
}
