//! The builtin names of the language: the single table that the type checker (for their types)
//! and lowering (for their meaning) both read. Everything else in the prelude is ordinary vkad
//! source in `prelude.fut`, type-checked and lowered like user code.
//!
//! Signatures are written in Futhark syntax as `'a 'b ... : type`; sizes (`[n]`, `[n*m]`) are
//! checked only as far as the type checker checks sizes (see docs/language.md): they are used to
//! infer the sizes of `unflatten`, `unflatten_3d` and `split` at each use.

use crate::prim::{FloatType, IntType, PrimType};

/// Top-level intrinsic functions: `(name, signature)`.
pub const INTRINSICS: &[(&str, &str)] = &[
    ("map", "'a '^b [n] : (a -> b) -> [n]a -> *[n]b"),
    ("reduce", "'a : (a -> a -> a) -> a -> []a -> a"),
    ("reduce_comm", "'a : (a -> a -> a) -> a -> []a -> a"),
    ("scan", "'a [n] : (a -> a -> a) -> a -> [n]a -> *[n]a"),
    (
        "reduce_by_index",
        "'a [k] [n] : *[k]a -> (a -> a -> a) -> a -> [n]i64 -> [n]a -> *[k]a",
    ),
    (
        "hist",
        "'a [n] : (a -> a -> a) -> a -> (k: i64) -> [n]i64 -> [n]a -> *[k]a",
    ),
    ("scatter", "'t [k] [n] : *[k]t -> [n]i64 -> [n]t -> *[k]t"),
    (
        "scatter_2d",
        "'t [k1] [k2] [n] : *[k1][k2]t -> [n](i64, i64) -> [n]t -> *[k1][k2]t",
    ),
    (
        "scatter_3d",
        "'t [k1] [k2] [k3] [n] : *[k1][k2][k3]t -> [n](i64, i64, i64) -> [n]t -> *[k1][k2][k3]t",
    ),
    ("iota", "'t : (n: i64) -> *[n]i64"),
    ("replicate", "'t : (n: i64) -> t -> *[n]t"),
    ("zip", "'a 'b [n] : [n]a -> [n]b -> [n](a, b)"),
    ("unzip", "'a 'b [n] : [n](a, b) -> ([n]a, [n]b)"),
    ("transpose", "'t [n] [m] : [n][m]t -> [m][n]t"),
    ("flatten", "'t [n] [m] : [n][m]t -> [n*m]t"),
    // The sizes `n`, `m` (and `l`) of `unflatten`, `unflatten_3d` and `split` are inferred by
    // the type checker from the argument's size or the expected type of each use.
    ("unflatten", "'t [n] [m] : [n*m]t -> [n][m]t"),
    ("unflatten_3d", "'t [n] [m] [l] : [n*m*l]t -> [n][m][l]t"),
    (
        "unflatten_4d",
        "'t [n] [m] [l] [k] : [n*m*l*k]t -> [n][m][l][k]t",
    ),
    // `rep x` is `replicate n x` with `n` inferred from the context, like the sizes above.
    ("rep", "'t [n] : t -> *[n]t"),
    ("split", "'t [n] [m] : [n+m]t -> ([n]t, [m]t)"),
    // Function composition (Futhark's prelude operators `>->` and `<-<`).
    (">->", "'^a '^b '^c : (a -> b) -> (b -> c) -> a -> c"),
    ("<-<", "'^a '^b '^c : (b -> c) -> (a -> b) -> a -> c"),
    ("concat", "'t [n] [m] : [n]t -> [m]t -> *[n+m]t"),
    ("length", "'t [n] : [n]t -> i64"),
    ("reverse", "'t [n] : [n]t -> [n]t"),
    ("rotate", "'t [n] : i64 -> [n]t -> [n]t"),
    ("copy", "'t : t -> *t"),
    ("manifest", "'t : t -> *t"),
    ("opaque", "'t : t -> t"),
    ("trace", "'t : t -> t"),
    // AD (as Futhark's prelude/ad.fut; `jmp`/`mjp` and their `2` forms are in the prelude).
    ("jvp", "'a 'b : (a -> b) -> a -> a -> b"),
    ("jvp2", "'a 'b : (a -> b) -> a -> a -> (b, b)"),
    ("vjp", "'a 'b : (a -> b) -> a -> b -> a"),
    ("vjp2", "'a 'b : (a -> b) -> a -> b -> (b, a)"),
    // A custom derivative: `f'` is called with `f`'s result and its adjoint.
    ("with_vjp", "'a 'b : (a -> b) -> (b -> b -> a) -> a -> b"),
    // The accumulator functions of Futhark's `intrinsics` module (those that Futhark's
    // `tests/accs/intrinsics.fut` wraps), reached only by their qualified names (see
    // [`intrinsics_member`]). `f` is applied to every element of `bs` in parallel, each call
    // updating the accumulator with `acc_write`; lowered to a `with_acc` around a `map`.
    (
        "intrinsics.scatter_stream",
        "'a 'b [k] : *[k]a -> (*intrinsics.acc ([k]a) -> b -> intrinsics.acc ([k]a)) -> []b -> *[k]a",
    ),
    (
        "intrinsics.hist_stream",
        "'a 'b [k] : *[k]a -> (a -> a -> a) -> a -> (*intrinsics.acc ([k]a) -> b -> intrinsics.acc ([k]a)) -> []b -> *[k]a",
    ),
    (
        "intrinsics.acc_write",
        "'a [k] : *intrinsics.acc ([k]a) -> i64 -> a -> *intrinsics.acc ([k]a)",
    ),
];

/// The module name of Futhark's compiler-internal module, of which vkad knows the accumulator
/// type and functions.
pub const INTRINSICS_MODULE: &str = "intrinsics";

/// The key in [`INTRINSICS`] of the member `name` of the `intrinsics` module, if vkad has it.
pub fn intrinsics_member(name: &str) -> Option<&'static str> {
    INTRINSICS
        .iter()
        .find(|(k, _)| k.strip_prefix("intrinsics.") == Some(name))
        .map(|(k, _)| *k)
}

/// Whether a qualified type name is the accumulator type `intrinsics.acc`.
pub fn is_acc_type(quals: &[String], name: &str) -> bool {
    matches!(quals, [m] if m == INTRINSICS_MODULE) && name == "acc"
}

/// Which numeric modules a module function exists in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Every numeric module (`i8`..`u64`, `f16`..`f64`).
    Num,
    /// Integer modules only.
    Int,
    /// Float modules only.
    Float,
}

/// Functions and constants of the numeric modules (`f64.sqrt`, `i32.max`, `f32.pi`, ...).
/// In the signature, `t` is the module's own type and `u` the unsigned integer type of the same
/// width (for `to_bits`/`from_bits`). Conversions from every primitive type (`f64.i32`,
/// `i64.bool`, ...) are given by [`conversion_names`], not listed here.
pub const MODULE_FNS: &[(&str, Applies, &str)] = &[
    // arithmetic as functions
    ("+", Applies::Num, "t -> t -> t"),
    ("-", Applies::Num, "t -> t -> t"),
    ("*", Applies::Num, "t -> t -> t"),
    ("/", Applies::Num, "t -> t -> t"),
    ("%", Applies::Num, "t -> t -> t"),
    ("**", Applies::Num, "t -> t -> t"),
    ("//", Applies::Int, "t -> t -> t"),
    ("%%", Applies::Int, "t -> t -> t"),
    ("&", Applies::Int, "t -> t -> t"),
    ("|", Applies::Int, "t -> t -> t"),
    ("^", Applies::Int, "t -> t -> t"),
    ("<<", Applies::Int, "t -> t -> t"),
    (">>", Applies::Int, "t -> t -> t"),
    (">>>", Applies::Int, "t -> t -> t"),
    ("==", Applies::Num, "t -> t -> bool"),
    ("!=", Applies::Num, "t -> t -> bool"),
    ("<", Applies::Num, "t -> t -> bool"),
    ("<=", Applies::Num, "t -> t -> bool"),
    (">", Applies::Num, "t -> t -> bool"),
    (">=", Applies::Num, "t -> t -> bool"),
    ("max", Applies::Num, "t -> t -> t"),
    ("min", Applies::Num, "t -> t -> t"),
    ("abs", Applies::Num, "t -> t"),
    ("sgn", Applies::Num, "t -> t"),
    ("neg", Applies::Num, "t -> t"),
    ("not", Applies::Int, "t -> t"),
    ("highest", Applies::Num, "t"),
    ("lowest", Applies::Num, "t"),
    ("num_bits", Applies::Num, "i32"),
    ("sum", Applies::Num, "[]t -> t"),
    ("product", Applies::Num, "[]t -> t"),
    ("maximum", Applies::Num, "[]t -> t"),
    ("minimum", Applies::Num, "[]t -> t"),
    ("to_i64", Applies::Num, "t -> i64"),
    ("get_bit", Applies::Num, "i32 -> t -> i32"),
    ("set_bit", Applies::Num, "i32 -> t -> i32 -> t"),
    ("popc", Applies::Int, "t -> i32"),
    ("clz", Applies::Int, "t -> i32"),
    ("ctz", Applies::Int, "t -> i32"),
    ("mul_hi", Applies::Int, "t -> t -> t"),
    ("mad_hi", Applies::Int, "t -> t -> t -> t"),
    ("sqrt", Applies::Float, "t -> t"),
    ("cbrt", Applies::Float, "t -> t"),
    ("exp", Applies::Float, "t -> t"),
    ("log", Applies::Float, "t -> t"),
    ("log2", Applies::Float, "t -> t"),
    ("log10", Applies::Float, "t -> t"),
    ("log1p", Applies::Float, "t -> t"),
    ("sin", Applies::Float, "t -> t"),
    ("cos", Applies::Float, "t -> t"),
    ("tan", Applies::Float, "t -> t"),
    ("asin", Applies::Float, "t -> t"),
    ("acos", Applies::Float, "t -> t"),
    ("atan", Applies::Float, "t -> t"),
    ("sinh", Applies::Float, "t -> t"),
    ("cosh", Applies::Float, "t -> t"),
    ("tanh", Applies::Float, "t -> t"),
    ("asinh", Applies::Float, "t -> t"),
    ("acosh", Applies::Float, "t -> t"),
    ("atanh", Applies::Float, "t -> t"),
    ("atan2", Applies::Float, "t -> t -> t"),
    ("hypot", Applies::Float, "t -> t -> t"),
    ("erf", Applies::Float, "t -> t"),
    ("erfc", Applies::Float, "t -> t"),
    ("gamma", Applies::Float, "t -> t"),
    ("lgamma", Applies::Float, "t -> t"),
    ("pow", Applies::Float, "t -> t -> t"),
    ("floor", Applies::Float, "t -> t"),
    ("ceil", Applies::Float, "t -> t"),
    ("round", Applies::Float, "t -> t"),
    ("trunc", Applies::Float, "t -> t"),
    ("isnan", Applies::Float, "t -> bool"),
    ("isinf", Applies::Float, "t -> bool"),
    ("isfinite", Applies::Float, "t -> bool"),
    ("inf", Applies::Float, "t"),
    ("nan", Applies::Float, "t"),
    ("pi", Applies::Float, "t"),
    ("e", Applies::Float, "t"),
    ("epsilon", Applies::Float, "t"),
    ("to_bits", Applies::Float, "t -> u"),
    ("from_bits", Applies::Float, "u -> t"),
    ("fma", Applies::Float, "t -> t -> t -> t"),
    ("mad", Applies::Float, "t -> t -> t -> t"),
    ("lerp", Applies::Float, "t -> t -> t -> t"),
    ("copysign", Applies::Float, "t -> t -> t"),
    ("nextafter", Applies::Float, "t -> t -> t"),
    ("ldexp", Applies::Float, "t -> i32 -> t"),
    ("from_fraction", Applies::Float, "i64 -> i64 -> t"),
    ("to_f64", Applies::Float, "t -> f64"),
    ("recip", Applies::Float, "t -> t"),
    ("rsqrt", Applies::Float, "t -> t"),
    ("sinpi", Applies::Float, "t -> t"),
    ("cospi", Applies::Float, "t -> t"),
    ("tanpi", Applies::Float, "t -> t"),
    ("asinpi", Applies::Float, "t -> t"),
    ("acospi", Applies::Float, "t -> t"),
    ("atanpi", Applies::Float, "t -> t"),
    ("atan2pi", Applies::Float, "t -> t -> t"),
];

/// The numeric module names: every primitive type except `bool`.
pub fn numeric_modules() -> impl Iterator<Item = PrimType> {
    PrimType::all().filter(|t| *t != PrimType::Bool)
}

/// Whether module `m`'s functions include one that `applies`.
pub fn applies(a: Applies, m: PrimType) -> bool {
    matches!(
        (a, m),
        (Applies::Num, PrimType::Int(_) | PrimType::Float(_))
            | (Applies::Int, PrimType::Int(_))
            | (Applies::Float, PrimType::Float(_))
    )
}

/// Conversion functions of a numeric module: `T.P : P -> T` for every primitive type `P`
/// (including `bool`). Also the module `bool` has `bool.P : P -> bool` for numeric `P`
/// (nonzero is true), and `bool.bool`.
pub fn conversion_names() -> impl Iterator<Item = PrimType> {
    PrimType::all()
}

/// The unsigned integer type of the same width as a float type (for `to_bits`).
pub fn bits_type(f: FloatType) -> IntType {
    match f {
        FloatType::F16 => IntType::U16,
        FloatType::F32 => IntType::U32,
        FloatType::F64 => IntType::U64,
    }
}
