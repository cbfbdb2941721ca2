//! The vkad IR: typed, first-order, A-normal form, with second-order array combinators (SOACs).
//!
//! Modelled on Futhark's SOACS IR. Key properties every pass may rely on (checked by
//! [`check`](crate::ir::check)):
//! - Every variable is a [`VName`], bound exactly once in the whole program (unique ids).
//! - Operands are [`SubExp`]s (a constant or a variable); compound expressions appear only as the
//!   right-hand side of a [`Stm`].
//! - There are no tuples: a tuple is several variables, an array of tuples is several arrays
//!   (structure of arrays). Lambdas, loops, ifs and functions take and return several values.
//! - Every array type has its full shape as [`SubExp`]s (constants or `i64` size variables in scope).
//!   Where a size is only known at run time (an `if` whose branches return different sizes, a loop
//!   whose arrays change size, a function returning a fresh size) the construct returns the size as
//!   an extra `i64` result and its result types refer to it with [`ExtDim::Ext`]. The pattern binds
//!   those sizes first.
//! - Arrays are values: `Update` and the destinations of `Hist`/`Scatter`/`WithAcc` *consume* their
//!   input array (it must not be used afterwards), which lets backends update in place.

pub mod builder;
pub mod check;
pub mod print;

use crate::diag::SrcLoc;
use crate::prim::{FloatType, IntType, PrimType, PrimValue};
use std::fmt;
use std::sync::Arc;

/// A variable name: a base name for people plus a program-unique id. Printed as `base_id`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct VName {
    pub id: u32,
    pub base: Arc<str>,
}

/// Hashes the id alone: names that are equal have equal ids, and the passes' maps and sets of
/// names hash them all the time (hashing the base string too took a sixth of the time of
/// kernel extraction).
impl std::hash::Hash for VName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Display for VName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.base, self.id)
    }
}

/// Makes fresh [`VName`]s. One per program; passes continue from [`Program::name_source`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NameSource {
    pub next: u32,
}

impl NameSource {
    pub fn fresh(&mut self, base: &str) -> VName {
        self.next += 1;
        VName {
            id: self.next,
            base: Arc::from(base),
        }
    }
    /// A fresh name with the same base as `v`.
    pub fn fresh_like(&mut self, v: &VName) -> VName {
        self.next += 1;
        VName {
            id: self.next,
            base: v.base.clone(),
        }
    }
}

/// An operand: a constant or a variable.
#[derive(Clone, Debug, PartialEq)]
pub enum SubExp {
    Const(PrimValue),
    Var(VName),
}

impl SubExp {
    pub fn i64(v: i64) -> SubExp {
        SubExp::Const(PrimValue::I64(v))
    }
    pub fn as_var(&self) -> Option<&VName> {
        match self {
            SubExp::Var(v) => Some(v),
            SubExp::Const(_) => None,
        }
    }
}

/// A dimension of a result type that may be existential.
#[derive(Clone, Debug, PartialEq)]
pub enum ExtDim {
    Free(SubExp),
    /// The size is the `i`-th result of the construct (an `i64` result bound before the arrays).
    Ext(usize),
}

/// Types of values in the IR. `D` is the dimension representation: [`SubExp`] for ordinary
/// types, [`ExtDim`] for result types of `if`, `loop`-free function returns and `Apply`.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeBase<D> {
    Prim(PrimType),
    /// An array of `elem` with `shape.len()` dimensions, outermost first.
    Array {
        elem: PrimType,
        shape: Vec<D>,
    },
    /// An accumulator (see [`Exp::WithAcc`]): updates scatter into arrays of the given row shape and
    /// element types. `cert` is the name that ties it to its `WithAcc`.
    Acc {
        cert: VName,
        shape: Vec<SubExp>,
        elems: Vec<Type>,
    },
}

pub type Type = TypeBase<SubExp>;
pub type ExtType = TypeBase<ExtDim>;

impl<D: Clone> TypeBase<D> {
    pub fn rank(&self) -> usize {
        match self {
            TypeBase::Array { shape, .. } => shape.len(),
            _ => 0,
        }
    }
    pub fn elem(&self) -> Option<PrimType> {
        match self {
            TypeBase::Prim(p) | TypeBase::Array { elem: p, .. } => Some(*p),
            TypeBase::Acc { .. } => None,
        }
    }
}

impl Type {
    pub fn array(elem: PrimType, shape: Vec<SubExp>) -> Type {
        if shape.is_empty() {
            Type::Prim(elem)
        } else {
            Type::Array { elem, shape }
        }
    }
    pub fn shape(&self) -> &[SubExp] {
        match self {
            TypeBase::Array { shape, .. } => shape,
            _ => &[],
        }
    }
    /// The type of one row (drops the outermost dimension).
    pub fn row(&self) -> Type {
        match self {
            TypeBase::Array { elem, shape } => Type::array(*elem, shape[1..].to_vec()),
            t => t.clone(),
        }
    }
    /// `[d]self`.
    pub fn array_of(&self, d: SubExp) -> Type {
        match self {
            TypeBase::Prim(p) => Type::Array {
                elem: *p,
                shape: vec![d],
            },
            TypeBase::Array { elem, shape } => {
                let mut s = vec![d];
                s.extend(shape.iter().cloned());
                Type::Array {
                    elem: *elem,
                    shape: s,
                }
            }
            TypeBase::Acc { .. } => panic!("array of accumulators"),
        }
    }
    pub fn to_ext(&self) -> ExtType {
        match self {
            TypeBase::Prim(p) => ExtType::Prim(*p),
            TypeBase::Array { elem, shape } => ExtType::Array {
                elem: *elem,
                shape: shape.iter().map(|d| ExtDim::Free(d.clone())).collect(),
            },
            TypeBase::Acc { cert, shape, elems } => ExtType::Acc {
                cert: cert.clone(),
                shape: shape.clone(),
                elems: elems.clone(),
            },
        }
    }
}

/// A typed variable binding.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: VName,
    pub ty: Type,
}

/// The left-hand side of a statement: one element per result.
#[derive(Clone, Debug, PartialEq)]
pub struct Pat {
    pub elems: Vec<Param>,
}

/// Attributes carried from the source (`#[unsafe]`, `#[bound(n)]`, `#[stripmine(k)]`,
/// `#[true_dep]`, ...), as their printed text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs(pub Vec<String>);

impl Attrs {
    pub fn has(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|a| a == name || a.starts_with(&format!("{name}(")))
    }
    /// The integer argument of `name(k)`, if present.
    pub fn int_arg(&self, name: &str) -> Option<i64> {
        let prefix = format!("{name}(");
        self.0.iter().find_map(|a| {
            a.strip_prefix(&prefix)?
                .strip_suffix(')')?
                .trim()
                .parse()
                .ok()
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stm {
    pub pat: Pat,
    pub exp: Exp,
    pub attrs: Attrs,
    /// Where in the source this came from (for runtime errors); `None` for generated code.
    pub loc: Option<SrcLoc>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    pub stms: Vec<Stm>,
    pub result: Vec<SubExp>,
}

/// An anonymous first-order function, used by SOACs and `WithAcc`.
#[derive(Clone, Debug, PartialEq)]
pub struct Lambda {
    pub params: Vec<Param>,
    pub body: Body,
    pub ret: Vec<Type>,
}

// ---------------------------------------------------------------------------------------------
// Scalar operations. Their exact semantics are in `crate::primops`.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation (wrapping for integers).
    Neg(PrimType),
    /// Logical not (bool) or bitwise complement (integers).
    Not(PrimType),
    Abs(PrimType),
    /// -1, 0 or 1 (NaN stays NaN for floats).
    Signum(PrimType),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// Wrapping for integers.
    Add(PrimType),
    Sub(PrimType),
    Mul(PrimType),
    /// Integers: rounds toward negative infinity; division by zero is a runtime error. Floats: IEEE.
    Div(PrimType),
    /// Integers: modulo with the sign of the divisor (pairs with `Div`). Floats: `x - y*floor(x/y)`.
    Mod(PrimType),
    /// Integer division truncating toward zero (`//`).
    Quot(IntType),
    /// Remainder with the sign of the dividend (`%%`).
    Rem(IntType),
    /// Integers: exponentiation by squaring (negative exponent is an error); floats: `powf`.
    Pow(PrimType),
    /// Shift left; the amount is taken as unsigned and a shift by the bit width or more gives 0
    /// (as Futhark's C backend does for `<<` after masking: see `primops` for the exact rule).
    Shl(IntType),
    /// Arithmetic shift right for signed types, logical for unsigned.
    Shr(IntType),
    /// Logical shift right.
    UShr(IntType),
    And(PrimType),
    Or(PrimType),
    Xor(IntType),
    /// Minimum/maximum; for floats, NaN loses (returns the other operand) as in Futhark.
    Min(PrimType),
    Max(PrimType),
    /// Logical and/or of bools (both operands are already evaluated: no short-circuit here; the
    /// frontend lowers `&&`/`||` to `If` where the right operand could fail).
    LogAnd,
    LogOr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq(PrimType),
    /// `<` (unsigned comparison for unsigned types; `false` on NaN).
    Lt(PrimType),
    Le(PrimType),
}

/// A conversion `from -> to` with Futhark's semantics (`f64.i32`, `i32.f64` truncates toward zero,
/// `i32.bool`, `bool.i32` = nonzero). Integer conversions wrap; widening sign-extends only when both
/// types are signed and zero-extends otherwise (as Futhark's prelude: `u64.i32 (-1)` is
/// `4294967295u64`, `i64.i8 (-1)` is `-1i64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvOp {
    pub from: PrimType,
    pub to: PrimType,
}

/// Builtin scalar functions. Each has a fixed arity; the type is the float (or int) type given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    Sqrt(FloatType),
    Cbrt(FloatType),
    Exp(FloatType),
    Log(FloatType),
    Log2(FloatType),
    Log10(FloatType),
    Log1p(FloatType),
    Sin(FloatType),
    Cos(FloatType),
    Tan(FloatType),
    Asin(FloatType),
    Acos(FloatType),
    Atan(FloatType),
    Sinh(FloatType),
    Cosh(FloatType),
    Tanh(FloatType),
    Asinh(FloatType),
    Acosh(FloatType),
    Atanh(FloatType),
    /// Two arguments (y, x).
    Atan2(FloatType),
    /// Two arguments.
    Hypot(FloatType),
    Erf(FloatType),
    Erfc(FloatType),
    Gamma(FloatType),
    Lgamma(FloatType),
    Floor(FloatType),
    Ceil(FloatType),
    /// Round half to even, as Futhark.
    Round(FloatType),
    Trunc(FloatType),
    IsNan(FloatType),
    IsInf(FloatType),
    /// Reinterpret a float's bits as the unsigned integer of the same width.
    ToBits(FloatType),
    /// Reinterpret an unsigned integer's bits as the float of the same width.
    FromBits(FloatType),
    /// Three arguments: `a*b + c` (fused where the platform has it).
    Fma(FloatType),
    /// Three arguments: `lerp v0 v1 t`.
    Lerp(FloatType),
    /// Copy the sign of the second argument onto the first.
    CopySign(FloatType),
    /// Two arguments: the next representable number after the first in the direction of the
    /// second (C's `nextafter`).
    NextAfter(FloatType),
    /// Two arguments, the second an `i32`: `x * 2^n` rounded once (C's `ldexp`).
    Ldexp(FloatType),
    /// Number of leading zeros / population count / count trailing zeros (result i32).
    Clz(IntType),
    Popc(IntType),
    Ctz(IntType),
    /// High half of the full product (`mul_hi`).
    MulHi(IntType),
}

/// One dimension of an index or slice.
#[derive(Clone, Debug, PartialEq)]
pub enum DimIndex {
    /// A single index: removes the dimension.
    Fix(SubExp),
    /// `len` elements starting at `start`, every `stride`-th (stride may be negative, never 0).
    Slice {
        start: SubExp,
        len: SubExp,
        stride: SubExp,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum LoopForm {
    /// `for i < bound`: `i` has type `it` and runs 0..bound.
    For {
        i: VName,
        it: IntType,
        bound: SubExp,
    },
    /// Runs while the named loop parameter (a bool) is true; the body computes its next value.
    While(VName),
}

/// The operator of a reduction-like SOAC: a lambda of `2k` params (`k` accumulators then `k`
/// elements) returning `k` values, plus `k` neutral elements.
#[derive(Clone, Debug, PartialEq)]
pub struct Operator {
    pub lam: Lambda,
    pub neutral: Vec<SubExp>,
    pub commutative: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Soac {
    /// `map lam arrs`: all `arrs` have outer size `w`; `lam` takes one row of each.
    /// Results are arrays `[w]t` for each lambda result `t`.
    Map {
        w: SubExp,
        arrs: Vec<VName>,
        lam: Lambda,
    },
    /// `reduce op arrs` (a monoid over `k` arrays). Results are `k` values of the row types.
    Reduce {
        w: SubExp,
        arrs: Vec<VName>,
        op: Operator,
    },
    /// Inclusive `scan op arrs`. Results are `k` arrays of size `w`.
    Scan {
        w: SubExp,
        arrs: Vec<VName>,
        op: Operator,
    },
    /// `reduce_by_index dest op inds vals`: for each `j < w`, if `0 <= inds[j] < len(dest)`,
    /// `dest[inds[j]] = op(dest[inds[j]], vals[j])`. `dest` (k arrays) are consumed; results are the
    /// updated `k` arrays. `vals` rows may themselves be arrays (vectorised operators).
    Hist {
        w: SubExp,
        dest: Vec<VName>,
        op: Operator,
        inds: VName,
        vals: Vec<VName>,
    },
    /// `scatter dest inds vals`: for each `j < w`, if the index (one array per dimension of `dest`
    /// written, i.e. `inds.len()` dims) is in bounds, write `vals[j]` there; later writes win.
    /// `dest` (k arrays) are consumed; results are the updated arrays.
    Scatter {
        w: SubExp,
        dest: Vec<VName>,
        inds: Vec<VName>,
        vals: Vec<VName>,
    },
}

/// One input of a `WithAcc`: arrays whose outer dimensions are `shape`, and optionally an operator
/// combining an update with the current value (`op(old, new)`). With `None`, an update overwrites.
#[derive(Clone, Debug, PartialEq)]
pub struct AccInput {
    pub shape: Vec<SubExp>,
    pub arrs: Vec<VName>,
    pub op: Option<Operator>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Exp {
    SubExp(SubExp),
    UnOp(UnOp, SubExp),
    BinOp(BinOp, SubExp, SubExp),
    CmpOp(CmpOp, SubExp, SubExp),
    Conv(ConvOp, SubExp),
    Math(MathFn, Vec<SubExp>),
    /// `a[idx...]`; fewer indices than the rank index the outer dimensions.
    Index(VName, Vec<DimIndex>),
    /// `a with [idx...] = v` (consumes `a`). `v` is a scalar or an array matching the slice.
    Update(VName, Vec<DimIndex>, SubExp),
    /// `[start, start+stride, ...]` of length `n`, element type `it`.
    Iota {
        n: SubExp,
        start: SubExp,
        stride: SubExp,
        it: IntType,
    },
    /// An array of shape `shape` filled with `value` (a scalar or array variable).
    Replicate {
        shape: Vec<SubExp>,
        value: SubExp,
    },
    /// An array literal of rows of type `row` (each element a scalar or array of type `row`).
    ArrayLit {
        elems: Vec<SubExp>,
        row: Type,
    },
    /// Concatenation along dimension `dim`. `w` is the size of the result along `dim`.
    Concat {
        dim: usize,
        arrs: Vec<VName>,
        w: SubExp,
    },
    /// A fresh copy.
    Copy(VName),
    /// Change the shape (same number of elements, row-major).
    Reshape(Vec<SubExp>, VName),
    /// Permute dimensions: result dimension `i` is input dimension `perm[i]`.
    Rearrange(Vec<usize>, VName),
    /// `sort_by_key(bits, keys)` with `keys: [n]i64`: a stable sort of the keys by their `bits`
    /// low bits (read as unsigned; `bits` is clamped to `0..=64`, higher bits are ignored).
    /// Binds two `[n]i64` arrays: the keys in sorted order and the permutation `perm` with
    /// `sorted[j] = keys[perm[j]]`. Reverse-mode AD's generic histogram rule and
    /// [`crate::passes::hist_sort`] group elements by bin with it; the Vulkan backend runs it as
    /// a radix sort kernel, and [`crate::passes::sort_lower`] rewrites it into a loop of
    /// SOACs where a backend has no kernel for it (inside parallel operators).
    SortByKey {
        keys: VName,
        bits: SubExp,
    },
    /// Runtime check; a false condition is an error reporting `msg` and the statement's location.
    /// Each `{}` in `msg` stands for the value of the next of `args` (`i64` scalars: the sizes
    /// a shape check compares), filled in by [`assert_message`]. Binds nothing (an empty
    /// pattern).
    Assert {
        cond: SubExp,
        msg: String,
        args: Vec<SubExp>,
    },
    /// Call of a function in the program. Arguments are the callee's params in order (sizes first).
    Apply {
        fun: Arc<str>,
        args: Vec<SubExp>,
        ret: Vec<ExtType>,
    },
    If {
        cond: SubExp,
        then_b: Body,
        else_b: Body,
        ret: Vec<ExtType>,
    },
    /// `loop (params = inits) for/while ... do body`: the body returns the new values of `params`;
    /// the loop's results are the final values. Size parameters are ordinary `i64` params that other
    /// params' types refer to.
    Loop {
        params: Vec<(Param, SubExp)>,
        form: LoopForm,
        body: Body,
    },
    Soac(Soac),
    /// `withacc inputs lam`: `lam` takes one accumulator per input (of type `Acc`) and returns them
    /// updated, followed by any extra results. The statement's results are the arrays of every input
    /// (with all updates applied, in input order) followed by the extra results.
    WithAcc {
        inputs: Vec<AccInput>,
        lam: Lambda,
    },
    /// `upd acc [idx] vals`: add (with the input's operator) or write `vals` at `idx` in the
    /// accumulator; out-of-bounds indices are ignored. Returns the new accumulator.
    UpdAcc {
        acc: VName,
        idx: Vec<SubExp>,
        vals: Vec<SubExp>,
    },
    /// Forward-mode derivative (`jvp2`): `lam` applied to `args` (one per param) with tangents
    /// `seeds` (one per param, same types). Results: `lam`'s results, then one tangent per
    /// result (same types; bool tangents are `false`).
    ///
    /// Left by lowering and removed by [`crate::ad::transform()`] (innermost first) before
    /// optimisation; the interpreter evaluates it directly only in oracle mode. The lambda's
    /// param types may refer to sizes in scope outside it; its `ret` types mention only names in
    /// scope outside the lambda (where a result size is computed inside the function, lowering
    /// differentiates immediately instead of emitting this node).
    Jvp {
        lam: Lambda,
        args: Vec<SubExp>,
        seeds: Vec<SubExp>,
    },
    /// Reverse-mode derivative (`vjp2`): `lam` applied to `args` (one per param) with adjoints
    /// `seeds` (one per result, the types of `lam.ret`). Results: `lam`'s results, then one
    /// adjoint per param (the param types).
    ///
    /// Same life cycle and scoping rules as [`Exp::Jvp`].
    Vjp {
        lam: Lambda,
        args: Vec<SubExp>,
        seeds: Vec<SubExp>,
    },
    /// A function with a custom derivative (`with_vjp f f' x`): the results of `primal`
    /// applied to `args` (one per param). Reverse-mode AD does not differentiate `primal` but
    /// calls `adjoint` in the return sweep with the primal results, then their adjoints (the
    /// types of `primal.ret`, twice), for the adjoints of `args` (`adjoint.ret` is the types of
    /// `primal`'s params); forward-mode AD differentiates `primal`.
    ///
    /// Left by lowering and removed by [`crate::ad::transform()`] (inlined as `primal` where
    /// no `vjp` differentiates it), so later passes and the backends never see it.
    WithVjp {
        primal: Lambda,
        adjoint: Lambda,
        args: Vec<SubExp>,
    },
}

/// Describes how an entry point's IR parameters map to the source-level arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryPoint {
    /// The name users call it by (`-e NAME`).
    pub name: Arc<str>,
    /// For each source-level parameter, how many IR value params it became (tuples are flattened).
    pub param_counts: Vec<usize>,
    /// For each source-level result, how many IR results it became.
    pub result_counts: Vec<usize>,
}

impl Exp {
    /// Whether this is an operation on scalars alone (an operand, a unary, binary, comparison
    /// or conversion operator, a math function): no array, no control flow, no effect.
    pub fn is_scalar_op(&self) -> bool {
        matches!(
            self,
            Exp::SubExp(_)
                | Exp::UnOp(..)
                | Exp::BinOp(..)
                | Exp::CmpOp(..)
                | Exp::Conv(..)
                | Exp::Math(..)
        )
    }
}

impl EntryPoint {
    /// How many of a function's `num_results` results are existential sizes, returned before
    /// the values the user asked for (see [`FunDef::num_ext_results`]).
    pub fn num_ext_results(&self, num_results: usize) -> usize {
        num_results.saturating_sub(self.result_counts.iter().sum())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunDef {
    pub name: Arc<str>,
    pub entry: Option<EntryPoint>,
    /// Size parameters (`i64`); for entry points their values are taken from the shapes of the
    /// arguments, for `Apply` they are passed first.
    pub size_params: Vec<VName>,
    pub params: Vec<Param>,
    pub ret: Vec<ExtType>,
    pub body: Body,
    pub attrs: Attrs,
}

impl FunDef {
    /// For an entry point: how many leading results are existential sizes (returned before the
    /// values, see the module doc) rather than values the user asked for. They are not part of
    /// the entry point's user-visible results.
    pub fn num_ext_results(&self) -> usize {
        self.entry
            .as_ref()
            .map_or(0, |e| e.num_ext_results(self.ret.len()))
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub funs: Vec<FunDef>,
    /// Continue here to make fresh names.
    pub name_source: NameSource,
}

impl Program {
    pub fn fun(&self, name: &str) -> Option<&FunDef> {
        self.funs.iter().find(|f| &*f.name == name)
    }
    pub fn entry(&self, name: &str) -> Option<&FunDef> {
        self.funs
            .iter()
            .find(|f| f.entry.as_ref().is_some_and(|e| &*e.name == name))
    }
    pub fn entries(&self) -> impl Iterator<Item = &FunDef> {
        self.funs.iter().filter(|f| f.entry.is_some())
    }
}

/// The message of a failed [`Exp::Assert`]: `msg` with each `{}` replaced by the next of
/// `args` (as the values print); placeholders beyond `args` stay as they are.
pub fn assert_message(msg: &str, args: &[String]) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    let mut args = args.iter();
    while let Some(i) = rest.find("{}") {
        out.push_str(&rest[..i]);
        match args.next() {
            Some(a) => out.push_str(a),
            None => out.push_str("{}"),
        }
        rest = &rest[i + 2..];
    }
    out.push_str(rest);
    out
}

/// How an argument of a failed [`Exp::Assert`] shows in its message: an integer as a plain
/// number (a size reads `3`, not `3i64`), anything else as it prints.
pub fn assert_arg_text(p: &PrimValue) -> String {
    match p.as_i128() {
        Some(i) if !matches!(p, PrimValue::Bool(_)) => i.to_string(),
        _ => crate::values::format_prim(*p),
    }
}

#[cfg(test)]
mod assert_message_tests {
    use super::{assert_arg_text, assert_message};
    use crate::prim::PrimValue;

    #[test]
    fn placeholders_take_the_arguments_in_order() {
        let args = [
            assert_arg_text(&PrimValue::I64(3)),
            assert_arg_text(&PrimValue::I64(-2)),
        ];
        assert_eq!(
            assert_message("size {} where {} is required", &args),
            "size 3 where -2 is required"
        );
        // Too few arguments leave the placeholder; extra arguments are ignored.
        assert_eq!(assert_message("{} and {}", &args[..1]), "3 and {}");
        assert_eq!(assert_message("no sizes", &args), "no sizes");
    }
}
