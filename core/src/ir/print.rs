//! A printer for the IR that people can read, in a style close to Futhark's IR pretty printer.
//!
//! Conventions:
//! - Variables print as `base_id`; constants with a type suffix (`1i32`, `2.5f64`, `true`,
//!   `f32.nan`, `-f64.inf`).
//! - Scalar operations print as `TYPE.OP a b` (`f32.add x_1 1.0f32`, `i64.lt i_2 n_3`), conversions
//!   as `TO.FROM x` (`f32.i64 n_1`, Futhark's source spelling), math functions as `f32.sqrt x_1`.
//! - Types: `f32`, `[n_1][3i64]f32`; result types with existential sizes print `[?0]f32` for
//!   [`ExtDim::Ext`]`(0)`; accumulators print `acc(cert_4, [n_1], {f32})`.
//! - A statement prints as `let x_1: f32 = EXP` (several results: `let {a_1: f32, b_2: i64} = EXP`),
//!   preceded by its attributes (`#[unsafe] let ...`). Source locations are not printed.
//! - A body prints as `{ stms... in {results} }` over several lines; lambdas as
//!   `\(x_1: f32) (y_2: f32) : {f32} -> { ... }`.

use super::*;
use std::fmt::{self, Display, Write};

const INDENT: &str = "  ";

/// The whole program as text, functions separated by blank lines.
pub fn program_to_string(p: &Program) -> String {
    p.to_string()
}

pub(crate) fn pad(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str(INDENT);
    }
}

fn float_text(v: f64, t: &str) -> String {
    if v.is_nan() {
        format!("{t}.nan")
    } else if v.is_infinite() {
        if v > 0.0 {
            format!("{t}.inf")
        } else {
            format!("-{t}.inf")
        }
    } else {
        format!("{v:?}{t}")
    }
}

/// A constant with its type suffix.
pub fn prim_value_text(v: &PrimValue) -> String {
    use PrimValue::*;
    match *v {
        Bool(b) => b.to_string(),
        I8(x) => format!("{x}i8"),
        I16(x) => format!("{x}i16"),
        I32(x) => format!("{x}i32"),
        I64(x) => format!("{x}i64"),
        U8(x) => format!("{x}u8"),
        U16(x) => format!("{x}u16"),
        U32(x) => format!("{x}u32"),
        U64(x) => format!("{x}u64"),
        // f16 -> f64 is exact.
        F16(x) => float_text(x.to_f64(), "f16"),
        F32(x) => {
            if x.is_finite() {
                format!("{x:?}f32")
            } else {
                float_text(x as f64, "f32")
            }
        }
        F64(x) => float_text(x, "f64"),
    }
}

impl Display for SubExp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubExp::Const(v) => f.write_str(&prim_value_text(v)),
            SubExp::Var(v) => write!(f, "{v}"),
        }
    }
}

impl Display for ExtDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExtDim::Free(d) => write!(f, "{d}"),
            ExtDim::Ext(i) => write!(f, "?{i}"),
        }
    }
}

impl<D: Display> Display for TypeBase<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeBase::Prim(p) => write!(f, "{p}"),
            TypeBase::Array { elem, shape } => {
                for d in shape {
                    write!(f, "[{d}]")?;
                }
                write!(f, "{elem}")
            }
            TypeBase::Acc { cert, shape, elems } => {
                write!(f, "acc({cert}, [{}], {{{}}})", comma(shape), comma(elems))
            }
        }
    }
}

pub(crate) fn comma<T: Display>(xs: &[T]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn braces<T: Display>(xs: &[T]) -> String {
    format!("{{{}}}", comma(xs))
}

impl Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.ty)
    }
}

impl Display for Pat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.elems.len() == 1 {
            write!(f, "{}", self.elems[0])
        } else {
            f.write_str(&braces(&self.elems))
        }
    }
}

fn unop_name(op: &UnOp) -> (PrimType, &'static str) {
    match *op {
        UnOp::Neg(t) => (t, "neg"),
        UnOp::Not(t) => (t, "not"),
        UnOp::Abs(t) => (t, "abs"),
        UnOp::Signum(t) => (t, "signum"),
    }
}

/// The type and the name a binary operator prints with.
fn binop_name(op: &BinOp) -> (PrimType, &'static str) {
    use BinOp::*;
    let i = PrimType::Int;
    match *op {
        Add(t) => (t, "add"),
        Sub(t) => (t, "sub"),
        Mul(t) => (t, "mul"),
        Div(t) => (t, "div"),
        Mod(t) => (t, "mod"),
        Quot(t) => (i(t), "quot"),
        Rem(t) => (i(t), "rem"),
        Pow(t) => (t, "pow"),
        Shl(t) => (i(t), "shl"),
        Shr(t) => (i(t), "shr"),
        UShr(t) => (i(t), "ushr"),
        And(t) => (t, "and"),
        Or(t) => (t, "or"),
        Xor(t) => (i(t), "xor"),
        Min(t) => (t, "min"),
        Max(t) => (t, "max"),
        LogAnd => (PrimType::Bool, "logand"),
        LogOr => (PrimType::Bool, "logor"),
    }
}

fn cmpop_name(op: &CmpOp) -> (PrimType, &'static str) {
    match *op {
        CmpOp::Eq(t) => (t, "eq"),
        CmpOp::Lt(t) => (t, "lt"),
        CmpOp::Le(t) => (t, "le"),
    }
}

/// The type and the name a math function prints with.
pub(crate) fn math_name(m: &MathFn) -> (PrimType, &'static str) {
    use MathFn::*;
    let fl = PrimType::Float;
    let it = PrimType::Int;
    match *m {
        Sqrt(t) => (fl(t), "sqrt"),
        Cbrt(t) => (fl(t), "cbrt"),
        Exp(t) => (fl(t), "exp"),
        Log(t) => (fl(t), "log"),
        Log2(t) => (fl(t), "log2"),
        Log10(t) => (fl(t), "log10"),
        Log1p(t) => (fl(t), "log1p"),
        Sin(t) => (fl(t), "sin"),
        Cos(t) => (fl(t), "cos"),
        Tan(t) => (fl(t), "tan"),
        Asin(t) => (fl(t), "asin"),
        Acos(t) => (fl(t), "acos"),
        Atan(t) => (fl(t), "atan"),
        Sinh(t) => (fl(t), "sinh"),
        Cosh(t) => (fl(t), "cosh"),
        Tanh(t) => (fl(t), "tanh"),
        Asinh(t) => (fl(t), "asinh"),
        Acosh(t) => (fl(t), "acosh"),
        Atanh(t) => (fl(t), "atanh"),
        Atan2(t) => (fl(t), "atan2"),
        Hypot(t) => (fl(t), "hypot"),
        Erf(t) => (fl(t), "erf"),
        Erfc(t) => (fl(t), "erfc"),
        Gamma(t) => (fl(t), "gamma"),
        Lgamma(t) => (fl(t), "lgamma"),
        Floor(t) => (fl(t), "floor"),
        Ceil(t) => (fl(t), "ceil"),
        Round(t) => (fl(t), "round"),
        Trunc(t) => (fl(t), "trunc"),
        IsNan(t) => (fl(t), "isnan"),
        IsInf(t) => (fl(t), "isinf"),
        ToBits(t) => (fl(t), "to_bits"),
        FromBits(t) => (fl(t), "from_bits"),
        Fma(t) => (fl(t), "fma"),
        Lerp(t) => (fl(t), "lerp"),
        CopySign(t) => (fl(t), "copysign"),
        NextAfter(t) => (fl(t), "nextafter"),
        Ldexp(t) => (fl(t), "ldexp"),
        Clz(t) => (it(t), "clz"),
        Popc(t) => (it(t), "popc"),
        Ctz(t) => (it(t), "ctz"),
        MulHi(t) => (it(t), "mul_hi"),
    }
}

impl Display for UnOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (t, n) = unop_name(self);
        write!(f, "{t}.{n}")
    }
}

impl Display for BinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (t, n) = binop_name(self);
        write!(f, "{t}.{n}")
    }
}

impl Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (t, n) = cmpop_name(self);
        write!(f, "{t}.{n}")
    }
}

impl Display for ConvOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.to, self.from)
    }
}

impl Display for MathFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (t, n) = math_name(self);
        write!(f, "{t}.{n}")
    }
}

impl Display for DimIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DimIndex::Fix(i) => write!(f, "{i}"),
            DimIndex::Slice { start, len, stride } => write!(f, "{start}:+{len}*{stride}"),
        }
    }
}

fn shape_text(shape: &[SubExp]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

fn names_text(xs: &[VName]) -> String {
    braces(xs)
}

fn write_body(out: &mut String, b: &Body, level: usize) {
    out.push_str("{\n");
    for s in &b.stms {
        write_stm(out, s, level + 1);
        out.push('\n');
    }
    pad(out, level + 1);
    let _ = writeln!(out, "in {}", braces(&b.result));
    pad(out, level);
    out.push('}');
}

pub(crate) fn write_stm(out: &mut String, s: &Stm, level: usize) {
    pad(out, level);
    for a in &s.attrs.0 {
        let _ = write!(out, "#[{a}] ");
    }
    let _ = write!(out, "let {} = ", s.pat);
    write_exp(out, &s.exp, level);
}

fn write_lambda(out: &mut String, l: &Lambda, level: usize) {
    out.push('\\');
    for p in &l.params {
        let _ = write!(out, "({p}) ");
    }
    let _ = write!(out, ": {} -> ", braces(&l.ret));
    write_body(out, &l.body, level);
}

pub(crate) fn write_operator(out: &mut String, op: &Operator, level: usize) {
    if op.commutative {
        out.push_str("commutative ");
    }
    write_lambda(out, &op.lam, level);
    let _ = write!(out, ", {}", braces(&op.neutral));
}

fn write_soac(out: &mut String, s: &Soac, level: usize) {
    match s {
        Soac::Map { w, arrs, lam } => {
            let _ = write!(out, "map({w}, {}, ", names_text(arrs));
            write_lambda(out, lam, level);
            out.push(')');
        }
        Soac::Reduce { w, arrs, op } => {
            let _ = write!(out, "reduce({w}, {}, ", names_text(arrs));
            write_operator(out, op, level);
            out.push(')');
        }
        Soac::Scan { w, arrs, op } => {
            let _ = write!(out, "scan({w}, {}, ", names_text(arrs));
            write_operator(out, op, level);
            out.push(')');
        }
        Soac::Hist {
            w,
            dest,
            op,
            inds,
            vals,
        } => {
            let _ = write!(
                out,
                "hist({w}, {}, {inds}, {}, ",
                names_text(dest),
                names_text(vals)
            );
            write_operator(out, op, level);
            out.push(')');
        }
        Soac::Scatter {
            w,
            dest,
            inds,
            vals,
        } => {
            let _ = write!(
                out,
                "scatter({w}, {}, {}, {})",
                names_text(dest),
                names_text(inds),
                names_text(vals)
            );
        }
    }
}

fn write_exp(out: &mut String, e: &Exp, level: usize) {
    match e {
        Exp::SubExp(s) => {
            let _ = write!(out, "{s}");
        }
        Exp::UnOp(op, x) => {
            let _ = write!(out, "{op} {x}");
        }
        Exp::BinOp(op, a, b) => {
            let _ = write!(out, "{op} {a} {b}");
        }
        Exp::CmpOp(op, a, b) => {
            let _ = write!(out, "{op} {a} {b}");
        }
        Exp::Conv(op, x) => {
            let _ = write!(out, "{op} {x}");
        }
        Exp::Math(m, args) => {
            let _ = write!(out, "{m}");
            for a in args {
                let _ = write!(out, " {a}");
            }
        }
        Exp::Index(a, idx) => {
            let _ = write!(out, "{a}[{}]", comma(idx));
        }
        Exp::Update(a, idx, v) => {
            let _ = write!(out, "{a} with [{}] = {v}", comma(idx));
        }
        Exp::Iota {
            n,
            start,
            stride,
            it,
        } => {
            let _ = write!(out, "iota_{}({n}, {start}, {stride})", it.name());
        }
        Exp::Replicate { shape, value } => {
            let _ = write!(out, "replicate({}, {value})", shape_text(shape));
        }
        Exp::ArrayLit { elems, row } => {
            let _ = write!(out, "[{}]: [{}]{row}", comma(elems), elems.len());
        }
        Exp::Concat { dim, arrs, w } => {
            let _ = write!(out, "concat@{dim}({w}, {})", comma(arrs));
        }
        Exp::Copy(a) => {
            let _ = write!(out, "copy({a})");
        }
        Exp::Reshape(shape, a) => {
            let _ = write!(out, "reshape({}, {a})", shape_text(shape));
        }
        Exp::Rearrange(perm, a) => {
            let _ = write!(out, "rearrange(({}), {a})", comma(perm));
        }
        Exp::SortByKey { keys, bits } => {
            let _ = write!(out, "sort_by_key({bits}, {keys})");
        }
        Exp::Assert { cond, msg, args } if args.is_empty() => {
            let _ = write!(out, "assert({cond}, {msg:?})");
        }
        Exp::Assert { cond, msg, args } => {
            let _ = write!(out, "assert({cond}, {msg:?}, {})", comma(args));
        }
        Exp::Apply { fun, args, ret } => {
            let _ = write!(out, "apply {fun}({}) : {}", comma(args), braces(ret));
        }
        Exp::If {
            cond,
            then_b,
            else_b,
            ret,
        } => {
            let _ = writeln!(out, "if {cond} : {}", braces(ret));
            pad(out, level + 1);
            out.push_str("then ");
            write_body(out, then_b, level + 1);
            out.push('\n');
            pad(out, level + 1);
            out.push_str("else ");
            write_body(out, else_b, level + 1);
        }
        Exp::Loop { params, form, body } => {
            write_loop_head(out, params, form);
            write_body(out, body, level);
        }
        Exp::Soac(s) => write_soac(out, s, level),
        Exp::WithAcc { inputs, lam } => {
            out.push_str("with_acc(");
            write_acc_inputs(out, inputs, level);
            out.push_str(", ");
            write_lambda(out, lam, level);
            out.push(')');
        }
        Exp::Jvp { lam, args, seeds } | Exp::Vjp { lam, args, seeds } => {
            out.push_str(if matches!(e, Exp::Jvp { .. }) {
                "jvp ("
            } else {
                "vjp ("
            });
            write_lambda(out, lam, level);
            let _ = write!(out, ") ({}) ({})", comma(args), comma(seeds));
        }
        Exp::WithVjp {
            primal,
            adjoint,
            args,
        } => {
            out.push_str("with_vjp (");
            write_lambda(out, primal, level);
            out.push_str(") (");
            write_lambda(out, adjoint, level);
            let _ = write!(out, ") ({})", comma(args));
        }
        Exp::UpdAcc { acc, idx, vals } => {
            let _ = write!(out, "upd_acc({acc}, [{}], {})", comma(idx), braces(vals));
        }
    }
}

/// `loop {p_1: t = init, ...} for i_2: i64 < n_3 do ` (or `while c_4 do `), before the body.
pub(crate) fn write_loop_head(out: &mut String, params: &[(Param, SubExp)], form: &LoopForm) {
    let ps: Vec<String> = params
        .iter()
        .map(|(p, init)| format!("{p} = {init}"))
        .collect();
    let _ = write!(out, "loop {{{}}} ", ps.join(", "));
    match form {
        LoopForm::For { i, it, bound } => {
            let _ = write!(out, "for {i}: {} < {bound} do ", it.name());
        }
        LoopForm::While(c) => {
            let _ = write!(out, "while {c} do ");
        }
    }
}

/// The inputs of a `with_acc`: `{([n_1], {xs_2}, none), ...}`.
pub(crate) fn write_acc_inputs(out: &mut String, inputs: &[AccInput], level: usize) {
    out.push('{');
    for (k, inp) in inputs.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let _ = write!(
            out,
            "({}, {}, ",
            shape_text(&inp.shape),
            names_text(&inp.arrs)
        );
        match &inp.op {
            None => out.push_str("none"),
            Some(op) => write_operator(out, op, level),
        }
        out.push(')');
    }
    out.push('}');
}

fn write_fun(out: &mut String, fd: &FunDef) {
    write_fun_head(
        out,
        &fd.attrs,
        &fd.name,
        &fd.entry,
        &fd.size_params,
        &fd.params,
        &fd.ret,
    );
    write_body(out, &fd.body, 0);
}

/// A function up to its body: `#[attrs] entry name [sizes] (params) : {ret} = `.
pub(crate) fn write_fun_head(
    out: &mut String,
    attrs: &Attrs,
    name: &str,
    entry: &Option<EntryPoint>,
    size_params: &[VName],
    params: &[Param],
    ret: &[ExtType],
) {
    for a in &attrs.0 {
        let _ = writeln!(out, "#[{a}]");
    }
    match entry {
        Some(e) if *e.name == *name => {
            let _ = write!(out, "entry {name}");
        }
        Some(e) => {
            let _ = write!(out, "entry({:?}) {name}", &*e.name);
        }
        None => {
            let _ = write!(out, "fun {name}");
        }
    }
    if !size_params.is_empty() {
        let _ = write!(out, " [{}]", comma(size_params));
    }
    for p in params {
        let _ = write!(out, " ({p})");
    }
    let _ = write!(out, " : {} = ", braces(ret));
}

impl Display for Exp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_exp(&mut s, self, 0);
        f.write_str(&s)
    }
}

impl Display for Stm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_stm(&mut s, self, 0);
        f.write_str(&s)
    }
}

impl Display for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_body(&mut s, self, 0);
        f.write_str(&s)
    }
}

impl Display for Soac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_soac(&mut s, self, 0);
        f.write_str(&s)
    }
}

impl Display for Lambda {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_lambda(&mut s, self, 0);
        f.write_str(&s)
    }
}

impl Display for FunDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_fun(&mut s, self);
        f.write_str(&s)
    }
}

impl Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, fd) in self.funs.iter().enumerate() {
            if k > 0 {
                f.write_str("\n\n")?;
            }
            write!(f, "{fd}")?;
        }
        if !self.funs.is_empty() {
            f.write_str("\n")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::*;
    use crate::prim::FloatType;

    #[test]
    fn constants() {
        let texts: Vec<String> = [
            PrimValue::Bool(true),
            PrimValue::I8(-3),
            PrimValue::U16(7),
            PrimValue::I32(1),
            PrimValue::I64(-42),
            PrimValue::U64(u64::MAX),
            PrimValue::F16(half::f16::from_f32(0.5)),
            PrimValue::F32(2.5),
            PrimValue::F32(1.0),
            PrimValue::F64(-0.0),
            PrimValue::F64(1e-300),
            PrimValue::F32(f32::NAN),
            PrimValue::F64(f64::NEG_INFINITY),
            PrimValue::F16(half::f16::INFINITY),
        ]
        .iter()
        .map(prim_value_text)
        .collect();
        assert_eq!(
            texts.join(" "),
            "true -3i8 7u16 1i32 -42i64 18446744073709551615u64 0.5f16 2.5f32 1.0f32 -0.0f64 1e-300f64 f32.nan -f64.inf f16.inf"
        );
    }

    #[test]
    fn types() {
        let mut ns = NameSource::default();
        let n = ns.fresh("n");
        let t = arr(PrimType::F32, vec![var(&n), i64c(3)]);
        assert_eq!(t.to_string(), "[n_1][3i64]f32");
        let e = ExtType::Array {
            elem: PrimType::I64,
            shape: vec![ExtDim::Ext(0), ExtDim::Free(var(&n))],
        };
        assert_eq!(e.to_string(), "[?0][n_1]i64");
        let a = Type::Acc {
            cert: ns.fresh("c"),
            shape: vec![var(&n)],
            elems: vec![Type::Prim(PrimType::F32)],
        };
        assert_eq!(a.to_string(), "acc(c_2, [n_1], {f32})");
    }

    /// A program using every construct (not type-correct: only the printing matters here).
    #[test]
    fn every_construct() {
        let mut ns = NameSource::default();
        let f32t = Type::Prim(PrimType::F32);
        let i64t = Type::Prim(PrimType::I64);
        let helper = fun(
            &mut ns,
            "helper",
            false,
            &[],
            &[("x", f32t.clone())],
            vec![f32t.clone()],
            |b, ps| {
                let y = b.unop(UnOp::Neg(PrimType::F32), var(&ps[0]));
                vec![var(&y)]
            },
        );
        let n = ns.fresh("n");
        let xs_t = arr(PrimType::F32, vec![var(&n)]);
        let mut main = fun_sized(
            &mut ns,
            "main_impl",
            true,
            vec![n.clone()],
            |_, _| {
                vec![
                    ("xs".into(), xs_t.clone()),
                    ("c".into(), Type::Prim(PrimType::Bool)),
                ]
            },
            vec![
                xs_t.to_ext(),
                ExtType::Array {
                    elem: PrimType::I64,
                    shape: vec![ExtDim::Ext(0)],
                },
            ],
            |b, ps| {
                let (n, xs, c) = (var(&ps[0]), ps[1].clone(), var(&ps[2]));
                let x0 = b.index(f32t.clone(), &xs, vec![i64c(0)]);
                b.attr("unsafe");
                let s = b.bind(
                    "s",
                    xs_t.clone(),
                    Exp::Index(
                        xs.clone(),
                        vec![DimIndex::Slice {
                            start: i64c(0),
                            len: n.clone(),
                            stride: i64c(-1),
                        }],
                    ),
                );
                let u = b.bind(
                    "u",
                    xs_t.clone(),
                    Exp::Update(s, vec![DimIndex::Fix(i64c(1))], var(&x0)),
                );
                let io = b.bind(
                    "io",
                    arr(PrimType::I64, vec![n.clone()]),
                    Exp::Iota {
                        n: n.clone(),
                        start: i64c(0),
                        stride: i64c(1),
                        it: IntType::I64,
                    },
                );
                let r = b.bind(
                    "r",
                    arr(PrimType::F32, vec![i64c(2), n.clone()]),
                    Exp::Replicate {
                        shape: vec![i64c(2)],
                        value: var(&u),
                    },
                );
                let l = b.bind(
                    "l",
                    arr(PrimType::F32, vec![i64c(2)]),
                    Exp::ArrayLit {
                        elems: vec![var(&x0), f32c(1.5)],
                        row: f32t.clone(),
                    },
                );
                let cc = b.bind(
                    "cc",
                    arr(PrimType::F32, vec![i64c(4)]),
                    Exp::Concat {
                        dim: 0,
                        arrs: vec![l.clone(), l.clone()],
                        w: i64c(4),
                    },
                );
                let cp = b.bind("cp", arr(PrimType::F32, vec![i64c(4)]), Exp::Copy(cc));
                let rs = b.bind(
                    "rs",
                    arr(PrimType::F32, vec![i64c(2), i64c(2)]),
                    Exp::Reshape(vec![i64c(2), i64c(2)], cp),
                );
                let _tr = b.bind(
                    "tr",
                    arr(PrimType::F32, vec![n.clone(), i64c(2)]),
                    Exp::Rearrange(vec![1, 0], r),
                );
                let _ = rs;
                b.assert(c.clone(), "c must hold");
                let h = b.bind(
                    "h",
                    f32t.clone(),
                    Exp::Apply {
                        fun: "helper".into(),
                        args: vec![var(&x0)],
                        ret: vec![f32t.to_ext()],
                    },
                );
                let k = b.conv(PrimType::F32, PrimType::I64, var(&h));
                let sq = b.math(
                    MathFn::Fma(FloatType::F32),
                    vec![var(&h), var(&h), f32c(1.0)],
                );
                let then_b = b.body(|b| {
                    let m = b.binop(BinOp::Add(PrimType::I64), var(&k), i64c(1));
                    vec![var(&m), var(&io)]
                });
                let else_b = b.body(|_| vec![n.clone(), var(&io)]);
                let sz = b.fresh("sz");
                let ys = b.fresh("ys");
                b.push(Stm {
                    pat: Pat {
                        elems: vec![
                            Param {
                                name: sz.clone(),
                                ty: i64t.clone(),
                            },
                            Param {
                                name: ys.clone(),
                                ty: arr(PrimType::I64, vec![var(&sz)]),
                            },
                        ],
                    },
                    exp: Exp::If {
                        cond: c.clone(),
                        then_b,
                        else_b,
                        ret: vec![
                            i64t.to_ext(),
                            ExtType::Array {
                                elem: PrimType::I64,
                                shape: vec![ExtDim::Ext(0)],
                            },
                        ],
                    },
                    attrs: Attrs::default(),
                    loc: None,
                });
                let acc = b.param("acc", f32t.clone());
                let accn = acc.name.clone();
                let i = b.fresh("i");
                let body = b.body(|b| {
                    vec![var(&b.binop(
                        BinOp::Mul(PrimType::F32),
                        var(&accn),
                        var(&sq),
                    ))]
                });
                let lp = b.bind(
                    "lp",
                    f32t.clone(),
                    Exp::Loop {
                        params: vec![(acc, f32c(1.0))],
                        form: LoopForm::For {
                            i,
                            it: IntType::I32,
                            bound: i32c(10),
                        },
                        body,
                    },
                );
                let go = b.param("go", Type::Prim(PrimType::Bool));
                let gon = go.name.clone();
                let wbody = b.body(|b| vec![var(&b.unop(UnOp::Not(PrimType::Bool), var(&gon)))]);
                b.bind(
                    "w",
                    Type::Prim(PrimType::Bool),
                    Exp::Loop {
                        params: vec![(go.clone(), c.clone())],
                        form: LoopForm::While(go.name.clone()),
                        body: wbody,
                    },
                );
                let lam = b.lambda(&[("x", f32t.clone())], vec![f32t.clone()], |b, lp2| {
                    vec![var(&b.binop(
                        BinOp::Add(PrimType::F32),
                        var(&lp2[0]),
                        var(&lp),
                    ))]
                });
                let m = b.map(n.clone(), vec![xs.clone()], lam);
                let op = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
                b.reduce(n.clone(), vec![m[0].clone()], op);
                let op = binop_operator(
                    b.ns,
                    BinOp::Max(PrimType::F32),
                    f32c(f32::NEG_INFINITY),
                    false,
                );
                b.bind(
                    "sc",
                    xs_t.clone(),
                    Exp::Soac(Soac::Scan {
                        w: n.clone(),
                        arrs: vec![xs.clone()],
                        op,
                    }),
                );
                let op = binop_operator(b.ns, BinOp::Add(PrimType::F32), f32c(0.0), true);
                let d = b.bind(
                    "d",
                    arr(PrimType::F32, vec![i64c(4)]),
                    Exp::Replicate {
                        shape: vec![i64c(4)],
                        value: f32c(0.0),
                    },
                );
                let hi = b.bind(
                    "hi",
                    arr(PrimType::F32, vec![i64c(4)]),
                    Exp::Soac(Soac::Hist {
                        w: n.clone(),
                        dest: vec![d],
                        op,
                        inds: io.clone(),
                        vals: vec![xs.clone()],
                    }),
                );
                b.bind(
                    "sct",
                    arr(PrimType::F32, vec![i64c(4)]),
                    Exp::Soac(Soac::Scatter {
                        w: n.clone(),
                        dest: vec![hi.clone()],
                        inds: vec![io.clone()],
                        vals: vec![xs.clone()],
                    }),
                );
                let cert = b.fresh("cert");
                let acc_t = Type::Acc {
                    cert,
                    shape: vec![n.clone()],
                    elems: vec![f32t.clone()],
                };
                let lam = b.lambda(&[("a", acc_t.clone())], vec![acc_t.clone()], |b, lp2| {
                    vec![var(&b.bind(
                        "a",
                        acc_t.clone(),
                        Exp::UpdAcc {
                            acc: lp2[0].clone(),
                            idx: vec![i64c(0)],
                            vals: vec![f32c(2.0)],
                        },
                    ))]
                });
                let wa = b.bind(
                    "wa",
                    xs_t.clone(),
                    Exp::WithAcc {
                        inputs: vec![AccInput {
                            shape: vec![n.clone()],
                            arrs: vec![u.clone()],
                            op: None,
                        }],
                        lam,
                    },
                );
                vec![var(&wa), var(&sz), var(&ys)]
            },
        );
        main.entry.as_mut().unwrap().name = "main".into();
        main.attrs.0.push("noinline".into());
        let p = program(ns, vec![helper, main]);
        insta::assert_snapshot!(program_to_string(&p));
    }
}
