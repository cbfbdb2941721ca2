//! Tests of the type checker on source programs (parsed with the real parser).

use super::check_program;
use crate::diag::{Diagnostic, SourceMap};
use crate::prim::PrimType;
use crate::syntax::ast::{
    Dec, DimIndex, Expr, ExprKind, Literal, LoopForm, OpRef, Pat, PatKind, Program, ValDec,
};
use crate::syntax::parser::parse_program;
use crate::syntax::types::Type;

/// Parse and check; on failure, the first diagnostic (message + the source text it points at).
fn check(src: &str) -> Result<(Program, Vec<Diagnostic>), (String, String)> {
    let mut sources = SourceMap::default();
    let file = sources.add("test.fut", src);
    let mut prog = match parse_program(src, file) {
        Ok(p) => p,
        Err(d) => panic!("parse error in test program: {}", d.render(&sources)),
    };
    match check_program(&mut prog, &sources) {
        Ok(w) => Ok((prog, w)),
        Err(ds) => {
            let d = &ds.0[0];
            let text = src
                .get(d.span.lo as usize..d.span.hi as usize)
                .unwrap_or("")
                .to_string();
            Err((d.message.clone(), text))
        }
    }
}

fn ok(src: &str) -> Program {
    match check(src) {
        Ok((p, _)) => p,
        Err((m, t)) => panic!("unexpected type error: {m} at `{t}`\nin:\n{src}"),
    }
}

fn err(src: &str) -> (String, String) {
    match check(src) {
        Ok(_) => panic!("expected a type error in:\n{src}"),
        Err(e) => e,
    }
}

fn dec<'p>(p: &'p Program, name: &str) -> &'p ValDec {
    p.decs
        .iter()
        .rev()
        .find_map(|d| match d {
            Dec::Val(v) if v.name == name => Some(v),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no def {name}"))
}

/// The type of the body of def `name`, in Futhark syntax.
fn body_ty(p: &Program, name: &str) -> String {
    dec(p, name)
        .body
        .ty
        .as_ref()
        .expect("body type")
        .to_string()
}

/// Every expression of a program, in pre-order.
fn all_exprs(p: &Program) -> Vec<&Expr> {
    fn go<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
        out.push(e);
        let dims = |ds: &'a [DimIndex], out: &mut Vec<&'a Expr>| {
            for d in ds {
                match d {
                    DimIndex::Fix(e) => go(e, out),
                    DimIndex::Slice(a, b, c) => {
                        for e in [a, b, c].into_iter().flatten() {
                            go(e, out)
                        }
                    }
                }
            }
        };
        let op = |o: &'a OpRef, out: &mut Vec<&'a Expr>| {
            if let OpRef::Fun(f) = o {
                go(f, out)
            }
        };
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::ProjectSection(_) => {}
            ExprKind::Tuple(es) | ExprKind::ArrayLit(es) => es.iter().for_each(|e| go(e, out)),
            ExprKind::Record(fs) => fs.iter().for_each(|(_, _, e)| go(e, out)),
            ExprKind::Constr(_, es) => es.iter().for_each(|e| go(e, out)),
            ExprKind::Match(x, cases) => {
                go(x, out);
                cases.iter().for_each(|(_, e)| go(e, out))
            }
            ExprKind::RecordUpdate { record, value, .. } => {
                go(record, out);
                go(value, out)
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                go(start, out);
                if let Some(s) = second {
                    go(s, out)
                }
                go(end, out)
            }
            ExprKind::BinOp(o, a, b) => {
                op(o, out);
                go(a, out);
                go(b, out)
            }
            ExprKind::UnOp(_, a)
            | ExprKind::Project(a, _)
            | ExprKind::Ascribe(a, _)
            | ExprKind::Coerce(a, _)
            | ExprKind::Attr(_, a)
            | ExprKind::LocalOpen(_, a) => go(a, out),
            ExprKind::Apply(f, args) => {
                go(f, out);
                args.iter().for_each(|e| go(e, out))
            }
            ExprKind::Lambda { body, .. } => go(body, out),
            ExprKind::OpSection(o) => op(o, out),
            ExprKind::LeftSection(o, a) | ExprKind::RightSection(o, a) => {
                op(o, out);
                go(a, out)
            }
            ExprKind::If(c, a, b) => {
                go(c, out);
                go(a, out);
                go(b, out)
            }
            ExprKind::Let { value, body, .. } | ExprKind::LetFun { value, body, .. } => {
                go(value, out);
                go(body, out)
            }
            ExprKind::LetWith {
                indices,
                value,
                body,
                ..
            } => {
                dims(indices, out);
                go(value, out);
                go(body, out)
            }
            ExprKind::Update {
                array,
                indices,
                value,
            } => {
                go(array, out);
                dims(indices, out);
                go(value, out)
            }
            ExprKind::Loop {
                init, form, body, ..
            } => {
                if let Some(i) = init {
                    go(i, out)
                }
                match form {
                    LoopForm::For(_, _, n) => go(n, out),
                    LoopForm::ForIn(_, xs) => go(xs, out),
                    LoopForm::While(c) => go(c, out),
                }
                go(body, out)
            }
            ExprKind::Index(a, idx) => {
                go(a, out);
                dims(idx, out)
            }
            ExprKind::Assert(c, a) => {
                go(c, out);
                go(a, out)
            }
        }
    }
    let mut out = vec![];
    for d in &p.decs {
        if let Dec::Val(v) = d {
            go(&v.body, &mut out);
        }
    }
    out
}

/// The types of the literals of a program, in source order.
fn lit_types(p: &Program) -> Vec<String> {
    all_exprs(p)
        .into_iter()
        .filter(|e| matches!(e.kind, ExprKind::Lit(_)))
        .map(|e| e.ty.as_ref().map(|t| t.to_string()).unwrap_or_default())
        .collect()
}

/// The type of the first variable reference to `name`.
fn var_ty(p: &Program, name: &str) -> String {
    all_exprs(p)
        .into_iter()
        .find(|e| matches!(&e.kind, ExprKind::Var(q) if q.to_string() == name))
        .and_then(|e| e.ty.as_ref())
        .map(|t| t.to_string())
        .unwrap_or_else(|| panic!("no use of {name}"))
}

// ---------------------------------------------------------------- literals and overloading

#[test]
fn integer_literal_defaults_to_i32() {
    let p = ok("def main = let x = 1 in x");
    assert_eq!(body_ty(&p, "main"), "i32");
    assert_eq!(lit_types(&p), ["i32"]);
}

#[test]
fn float_literal_defaults_to_f64() {
    let p = ok("def main = 2.5");
    assert_eq!(body_ty(&p, "main"), "f64");
}

#[test]
fn int_literal_becomes_float() {
    let p = ok("def main = 1 + 2.5");
    assert_eq!(body_ty(&p, "main"), "f64");
    assert_eq!(lit_types(&p), ["f64", "f64"]);
}

#[test]
fn literal_takes_type_from_parameter() {
    let p = ok("def f (x: f32) = x + 1");
    assert_eq!(body_ty(&p, "f"), "f32");
    assert_eq!(lit_types(&p), ["f32"]);
}

#[test]
fn suffixed_literals() {
    let p = ok("def main = (1i64, 2u8, 3f32, 1.5f32, true)");
    assert_eq!(body_ty(&p, "main"), "(i64, u8, f32, f32, bool)");
}

#[test]
fn overloaded_function_defaults_at_definition() {
    // As in Futhark, the overloading of `add` is resolved at its definition (i32).
    let p = ok("def add x y = x + y");
    assert_eq!(
        dec(&p, "add").params[0].ty.as_ref().unwrap().to_string(),
        "i32"
    );
    let (m, t) = err("def add x y = x + y\ndef main (a: f32) = add a a");
    assert!(m.contains("expected `i32`, found `f32`"), "{m}");
    assert_eq!(t, "a");
}

#[test]
fn float_literal_is_not_an_int() {
    let (m, t) = err("def f (x: i32) = x + 1.5");
    assert_eq!(
        m,
        "type mismatch: expected `i32`, found a floating-point type"
    );
    assert_eq!(t, "1.5");
}

#[test]
fn mismatch_message_and_span() {
    let (m, t) = err("def f (x: f32) (y: i32) = x + y");
    assert_eq!(m, "type mismatch: expected `f32`, found `i32`");
    assert_eq!(t, "y");
}

/// Literals out of range of their (possibly inferred) type are errors at the literal (they used
/// to wrap around: `x + 300u8` added 44), as in Futhark; negated literals are checked negated.
#[test]
fn literals_out_of_range() {
    let cases = [
        (
            "def f (x: u8) = x + 300u8",
            "literal 300 is out of range for type `u8`",
            "300u8",
        ),
        (
            "def f (x: u8) = x + 300",
            "literal 300 is out of range for type `u8`",
            "300",
        ),
        (
            "def f = [300u8]",
            "literal 300 is out of range for type `u8`",
            "300u8",
        ),
        (
            "def f = -1u8",
            "literal -1 is out of range for type `u8`",
            "-1u8",
        ),
        (
            "def f = - 1u8",
            "literal -1 is out of range for type `u8`",
            "- 1u8",
        ),
        (
            "def f = 128i8",
            "literal 128 is out of range for type `i8`",
            "128i8",
        ),
        (
            "def f = -129i8",
            "literal -129 is out of range for type `i8`",
            "-129i8",
        ),
        (
            "def f = 3000000000",
            "literal 3000000000 is out of range for type `i32`",
            "3000000000",
        ),
        (
            "def f : i32 = 0xffffffff",
            "literal 4294967295 is out of range for type `i32`",
            "0xffffffff",
        ),
        (
            "def f = 0x1ffu8",
            "literal 511 is out of range for type `u8`",
            "0x1ffu8",
        ),
        (
            "def f = 9223372036854775808i64",
            "literal 9223372036854775808 is out of range for type `i64`",
            "9223372036854775808i64",
        ),
        (
            "def f (x: i16) = x * 40000",
            "literal 40000 is out of range for type `i16`",
            "40000",
        ),
        (
            "def f = 1e40f32",
            "literal 1e40 is out of range for type `f32`",
            "1e40f32",
        ),
        (
            "def f : f16 = 70000",
            "literal 70000 is out of range for type `f16`",
            "70000",
        ),
        (
            "def f (xs: []u8) = map (+ 256) xs",
            "literal 256 is out of range for type `u8`",
            "256",
        ),
    ];
    for (src, msg, at) in cases {
        let (m, t) = err(src);
        assert_eq!((m.as_str(), t.as_str()), (msg, at), "{src}");
    }
    // In range: extremes, negated minimums, and hexadecimal/binary bit patterns with a suffix.
    ok("def f = (-128i8, 127i8, 255u8, 0u8, -2147483648, 2147483647, -9223372036854775808i64)");
    ok("def f = (18446744073709551615u64, 0xffi8, 0x80i8, 0b11111111i8, 0xffffffffi32, -0x80i8)");
    ok("def f (x: u8) = (x + 255, -0)");
    ok("def f = (65504f16, 3.4e38f32, 1e308)");
}

#[test]
fn bool_is_not_numeric() {
    let (m, t) = err("def f = true + 1");
    assert!(m.contains("numeric"), "{m}");
    assert_eq!(t, "true");
    let (m, _) = err("def f (x: f32) = x & x");
    assert!(m.contains("integer"), "{m}");
    let (m, _) = err("def f = -true");
    assert!(m.contains("numeric"), "{m}");
}

#[test]
fn operator_classes() {
    let p = ok("def f (a: i8) (b: u64) (c: bool) (d: f16) =
                  (a // a, a %% a, b & b, b | b, b ^ b, b << b, b >> b, b >>> b,
                   !c, !a, -d, d ** d, c < c, d >= d, c && c || c, a == a, (a, b) != (a, b))");
    assert_eq!(
        body_ty(&p, "f"),
        "(i8, i8, u64, u64, u64, u64, u64, u64, bool, i8, f16, f16, bool, bool, bool, bool, bool)"
    );
}

#[test]
fn equality_on_functions_is_rejected() {
    let (m, _) = err("def f (g: i32 -> i32) = g == g");
    assert!(m.contains("type mismatch"), "{m}");
}

#[test]
fn comparison_defaults() {
    let p = ok("def main = 1 < 2");
    assert_eq!(lit_types(&p), ["i32", "i32"]);
}

// ---------------------------------------------------------------- names

#[test]
fn unknown_name() {
    let (m, t) = err("def f x = x + y");
    assert_eq!(m, "unknown name `y`");
    assert_eq!(t, "y");
    let (m, _) = err("def f = f64.nosuch 1");
    assert_eq!(m, "unknown name `f64.nosuch`");
}

#[test]
fn recursion_is_rejected() {
    let (m, t) = err("def f (x: i32): i32 = if x == 0 then 0 else f (x - 1)");
    assert!(
        m.starts_with("recursion is not supported (as in Futhark)"),
        "{m}"
    );
    assert_eq!(t, "f");
    let (m, _) = err("def main = let g (x: i32): i32 = g x in g 1");
    assert!(m.starts_with("recursion is not supported"), "{m}");
}

#[test]
fn later_definitions_are_not_visible() {
    let (m, _) = err("def f = g 1\ndef g x = x");
    assert_eq!(m, "unknown name `g`");
}

#[test]
fn shadowing_by_parameter_is_not_recursion() {
    let p = ok("def f (f: i32) = f + 1");
    assert_eq!(body_ty(&p, "f"), "i32");
}

#[test]
fn module_functions_and_conversions() {
    let p = ok("def f (x: f32) (n: i32) = (f32.sqrt x, f32.i32 n, i64.f32 x, bool.i32 n, i32.max n 3, f64.pi, f32.to_bits x, u8.bool true)");
    assert_eq!(body_ty(&p, "f"), "(f32, f32, i64, bool, i32, f64, u32, u8)");
}

#[test]
fn local_open() {
    let p = ok("def f x = f64.(sqrt x + pi)");
    assert_eq!(body_ty(&p, "f"), "f64");
    // Operators inside an open module are monomorphic at its type.
    let p = ok("def g a b = f32.(a + b)");
    assert_eq!(
        dec(&p, "g").params[0].ty.as_ref().unwrap().to_string(),
        "f32"
    );
    let p = ok("def h = i64.(1 + 2)");
    assert_eq!(lit_types(&p), ["i64", "i64"]);
    // Module members shadow globals inside the open.
    let p = ok("def max (x: bool) = x\ndef k (a: f32) = f32.(max a 1)");
    assert_eq!(body_ty(&p, "k"), "f32");
}

// ---------------------------------------------------------------- polymorphism

#[test]
fn let_polymorphism_top_level() {
    let p = ok("def id x = x\ndef main = (id 1i64, id true)");
    assert_eq!(body_ty(&p, "main"), "(i64, bool)");
    assert_eq!(var_ty(&p, "id"), "i64 -> i64");
}

#[test]
fn explicit_type_params() {
    // A generated type variable name never clashes with a written one.
    let p = ok("def f 't_1 (x: t_1) y = (x, y)");
    assert_eq!(body_ty(&p, "f"), "(t_1, t_2)");
    let p =
        ok("def pair 'a 'b (x: a) (y: b): (a, b) = (x, y)\ndef main = pair 1f32 (pair true 2u16)");
    assert_eq!(body_ty(&p, "pair"), "(a, b)");
    assert_eq!(body_ty(&p, "main"), "(f32, (bool, u16))");
}

#[test]
fn rigid_type_params() {
    let (m, _) = err("def f 'a (x: a): a = x + x");
    assert!(m.contains("numeric"), "{m}");
    let (m, _) = err("def f 'a 'b (x: a): b = x");
    assert!(m.contains("expected `b`, found `a`"), "{m}");
}

#[test]
fn local_function_polymorphism() {
    let p = ok(
        "def main = let twice f x = f (f x) in (twice (\\x -> x + 1i8) 0, twice (\\b -> !b) true)",
    );
    assert_eq!(body_ty(&p, "main"), "(i8, bool)");
}

#[test]
fn local_overloaded_function_not_generalised() {
    let p = ok("def main = let inc x = x + 1 in inc 2f32");
    assert_eq!(body_ty(&p, "main"), "f32");
    assert_eq!(lit_types(&p), ["f32", "f32"]);
}

#[test]
fn let_bound_non_functions_are_monomorphic() {
    let (m, _) = err("def main = let f = \\x -> x in (f 1i32, f true)");
    assert!(m.contains("type mismatch"), "{m}");
}

#[test]
fn prelude_like_higher_order_definitions() {
    let src = "
def map2 'a 'b 'c [n] (f: a -> b -> c) (as: [n]a) (bs: [n]b): *[n]c = map (\\(a, b) -> f a b) (zip as bs)
def foldl 'a 'b (f: a -> b -> a) (acc: a) (bs: []b): a = loop acc for b in bs do f acc b
def sum [n] (xs: [n]f32) = reduce (+) 0 xs
def main (xs: []f32) (ys: []f32) = foldl (+) 0 (map2 (*) xs ys) + sum xs
";
    let p = ok(src);
    assert_eq!(body_ty(&p, "main"), "f32");
    assert_eq!(body_ty(&p, "map2"), "[]c");
    assert_eq!(
        var_ty(&p, "map2"),
        "(f32 -> f32 -> f32) -> []f32 -> []f32 -> []f32"
    );
    assert_eq!(
        var_ty(&p, "foldl"),
        "(f32 -> f32 -> f32) -> f32 -> []f32 -> f32"
    );
}

#[test]
fn polymorphic_use_type_is_instantiated() {
    let p = ok("def main (xs: []i32) = map (\\x -> x * 2) xs");
    assert_eq!(var_ty(&p, "map"), "(i32 -> i32) -> []i32 -> []i32");
    assert_eq!(body_ty(&p, "main"), "[]i32");
}

#[test]
fn sizes_are_lenient() {
    // Different sizes unify; ranks do not.
    let p = ok("def f [n] [m] (xs: [n]i32) (ys: [m]i32): [n]i32 = ys\ndef g [n] (xs: [n]f32) = n");
    assert_eq!(body_ty(&p, "f"), "[m]i32");
    assert_eq!(body_ty(&p, "g"), "i64");
    let (m, _) = err("def f (xs: []i32): [][]i32 = xs");
    assert_eq!(m, "type mismatch: expected `[][]i32`, found `[]i32`");
}

#[test]
fn size_params_in_types_are_kept() {
    // A variable used as a size is an i64.
    let p = ok("def g n (xs: [n]f32) = n");
    assert_eq!(body_ty(&p, "g"), "i64");
    let p = ok("def f [n] (xs: [n]f32) = xs");
    assert_eq!(body_ty(&p, "f"), "[n]f32");
    let p = ok("def main = [1, 2, 3]");
    assert_eq!(body_ty(&p, "main"), "[3]i32");
}

// ---------------------------------------------------------------- constructs

#[test]
fn tuples_and_projection() {
    let p = ok("def f (p: (i32, (f32, bool))) = (p.1.0, p.0)");
    assert_eq!(body_ty(&p, "f"), "(f32, i32)");
    let p = ok("def main (xs: [](i32, f64)) = map (.1) xs");
    assert_eq!(body_ty(&p, "main"), "[]f64");
    // The tuple's type may become known after the projection (deferred).
    let p = ok("def main (xs: [](i32, f64)) = map (\\x -> x.0) xs");
    assert_eq!(body_ty(&p, "main"), "[]i32");
    // A local function projecting from its parameter is monomorphic in the projected type.
    let p = ok("def main (x: i32) (y: i32) = let f v = v.0 in f (x, y)");
    assert_eq!(body_ty(&p, "main"), "i32");
    let (m, _) = err("def f x = x.0");
    assert_eq!(m, "type of tuple or record must be known before projection");
    let (m, _) = err("def f (p: (i32, i32)) = p.2");
    assert_eq!(m, "type `(i32, i32)` has no field `2`");
}

#[test]
fn sections_and_backticks() {
    let p = ok("def add (x: f32) (y: f32) = x + y
def sections = ((+) 1i8 2, (1i16 -), (* 2u32), (`add` 1), 3 `add` 4, (.0) (1i64, true))");
    assert_eq!(
        body_ty(&p, "sections"),
        "(i8, i16 -> i16, u32 -> u32, f32 -> f32, f32, i64)"
    );
}

#[test]
fn pipes() {
    let p = ok("def main (xs: []f32) = xs |> map (\\x -> x * 2) |> reduce (+) 0");
    assert_eq!(body_ty(&p, "main"), "f32");
    let p = ok("def main (x: i32) = i64.i32 <| x + 1");
    assert_eq!(body_ty(&p, "main"), "i64");
}

#[test]
fn concat_and_ranges() {
    let p = ok("def main (xs: []f32) = (xs ++ [1, 2], 0..<10i64, 1..2...7, 10..>0)");
    assert_eq!(body_ty(&p, "main"), "([]f32, []i64, []i32, []i32)");
    let (m, _) = err("def main = 0.0..<1.0");
    assert!(m.contains("integer"), "{m}");
}

#[test]
fn indexing_and_slicing() {
    let p = ok("def f (a: [][]f32) (i: i32) (j: i64) = (a[i], a[i, j], a[1:3], a[:, 0], a[i][j])");
    assert_eq!(body_ty(&p, "f"), "([]f32, f32, [][]f32, []f32, f32)");
    let (m, _) = err("def f (a: []f32) = a[0, 1]");
    assert!(m.contains("cannot index 2 dimension(s)"), "{m}");
    let (m, _) = err("def f (a: []f32) (i: u8) = a[i]");
    assert!(m.contains("signed integer"), "{m}");
    let (m, _) = err("def f (a: []f32) = a[0.5]");
    assert!(m.contains("type mismatch"), "{m}");
}

#[test]
fn updates() {
    let p = ok("def f (a: *[][]f32) = let a[0, 1] = 2 in a with [1] = [3, 4]");
    assert_eq!(body_ty(&p, "f"), "[][]f32");
    assert_eq!(lit_types(&p), ["i32", "i32", "f32", "i32", "f32", "f32"]);
    let (m, _) = err("def f (a: *[]f32) = a with [0] = true");
    assert_eq!(m, "type mismatch: expected `f32`, found `bool`");
}

#[test]
fn if_branches_unify() {
    let p = ok("def f (b: bool) = if b then 1 else 2.0");
    assert_eq!(body_ty(&p, "f"), "f64");
    let (m, t) = err("def f (b: bool) = if b then 1i32 else true");
    assert_eq!(m, "type mismatch: expected `i32`, found `bool`");
    assert_eq!(t, "true");
    let (m, _) = err("def f = if 1 then 2 else 3");
    assert!(m.contains("bool"), "{m}");
}

#[test]
fn loops() {
    let p = ok("def f (n: i64) = loop acc = 0f32 for i < n do acc + f32.i64 i");
    assert_eq!(body_ty(&p, "f"), "f32");
    let p =
        ok("def f (xs: [](i32, i32)) = loop (a, b) = (0, 0) for (x, y) in xs do (a + x, b + y)");
    assert_eq!(body_ty(&p, "f"), "(i32, i32)");
    let p = ok("def f (x: f64) = loop x while x > 1 do x / 2");
    assert_eq!(body_ty(&p, "f"), "f64");
    let p = ok("def f = loop i = 0u8 for j < 10u8 do i + j");
    assert_eq!(lit_types(&p), ["u8", "u8"]);
    let (m, t) = err("def f = loop acc = 0i32 for i < 10 do true");
    assert_eq!(m, "type mismatch: expected `i32`, found `bool`");
    assert_eq!(t, "true");
}

#[test]
fn lambdas_and_partial_application() {
    let p = ok("def f (x: i32) (y: f32) (z: bool) = z\ndef main = let g = f 1 in g 2");
    assert_eq!(body_ty(&p, "main"), "bool -> bool");
    let p = ok("def main = (\\(x: i16) y : i16 -> x + y) 1");
    assert_eq!(body_ty(&p, "main"), "i16 -> i16");
    let (m, _) = err("def main = 1i32 2i32");
    assert!(m.contains("not a function"), "{m}");
    let (m, _) = err("def f (x: i32) = x\ndef main = f 1 2");
    assert!(m.contains("not a function"), "{m}");
}

#[test]
fn assert_ascribe_coerce() {
    let p = ok("def f (x: i64) = assert (x > 0) (iota x :> [x]i64)\ndef g = (1 : u16)");
    assert_eq!(body_ty(&p, "f"), "[x]i64");
    assert_eq!(body_ty(&p, "g"), "u16");
    let (m, _) = err("def g = (true : i32)");
    assert_eq!(m, "type mismatch: expected `i32`, found `bool`");
}

#[test]
fn type_abbreviations() {
    let p = ok("type vec [n] 't = [n]t
type point = (f32, f32)
def f (v: vec [3] point) (w: vec [] f64): point = v[0]");
    assert_eq!(
        dec(&p, "f").params[0].ty.as_ref().unwrap().to_string(),
        "[3](f32, f32)"
    );
    assert_eq!(
        dec(&p, "f").params[1].ty.as_ref().unwrap().to_string(),
        "[]f64"
    );
    let (m, _) = err("def f (x: nosuch) = x");
    assert_eq!(m, "unknown type `nosuch`");
    let (m, _) = err("type t 'a = a\ndef f (x: t) = x");
    assert!(m.contains("expects 1 argument"), "{m}");
}

#[test]
fn attributes() {
    let (p, w) = check("def f (xs: []i32) = #[unsafe] xs[0] + #[sequential] 1\n#[noinline] def g = #[frobnicate] 1").unwrap();
    assert_eq!(body_ty(&p, "g"), "i32");
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].message, "unknown attribute `frobnicate` ignored");
}

#[test]
fn entry_points() {
    ok("entry main [n] (xs: [n]f32) (k: i64): ([n]f32, i64) = (xs, k)");
    let (m, _) = err("entry main (f: i32 -> i32) = f 1");
    assert!(m.contains("functional"), "{m}");
    let (m, _) = err("entry main 'a (x: a) = x");
    assert!(m.contains("fully known"), "{m}");
    let (m, _) = err("entry main x = x");
    assert!(m.contains("fully known"), "{m}");
    // Point-free entry points take the parameters of their function type.
    ok("def sq (x: f32) = x * x\nentry main = sq\nentry d = vjp sq");
    let (m, _) = err("def app (f: i32 -> i32) (x: i32) = f x\nentry main = app");
    assert!(m.contains("functional parameter"), "{m}");
}

#[test]
fn main_is_an_entry_point() {
    // As in Futhark, a top-level `main` is an entry point even without `entry`.
    let p = ok("def main (x: i32) = x");
    assert!(dec(&p, "main").entry);
    let (m, _) = err("def main (x: i32) (f: i32 -> i32, n: i32) = f x + n");
    assert!(m.contains("functional parameter"), "{m}");
}

#[test]
fn ad_intrinsics() {
    let p = ok("def f (x: f64) = x * x\ndef main (x: f64) = (vjp f x 1, jvp f x 1, jvp2 f x 1)");
    assert_eq!(body_ty(&p, "main"), "(f64, f64, (f64, f64))");
}

#[test]
fn every_node_gets_a_type_and_literals_are_prim() {
    let src = "def f 't (g: t -> t) (x: t) = g (g x)
def main (xs: []f32) (n: i64) =
  let ys = map (\\x -> x + 1) xs
  let (a, b) = (reduce (+) 0 ys, 2)
  let k = loop k = 0 for i < n do k + i32.i64 i
  in (f (\\x -> x * 2) a, b, k, [1, 2][0], (.0) (1, 2))";
    let p = ok(src);
    for e in all_exprs(&p) {
        let t = e.ty.as_ref().expect("every expression has a type");
        if matches!(e.kind, ExprKind::Lit(Literal::Int(..) | Literal::Float(..))) {
            assert!(matches!(t, Type::Prim(_)), "literal with type {t}");
        }
    }
    fn pats(p: &Pat) {
        assert!(p.ty.is_some());
        match &p.kind {
            PatKind::Tuple(ps) => ps.iter().for_each(pats),
            PatKind::Ascribed(q, _) | PatKind::Attr(_, q) => pats(q),
            _ => {}
        }
    }
    for d in &p.decs {
        if let Dec::Val(v) = d {
            v.params.iter().for_each(pats);
        }
    }
    assert_eq!(body_ty(&p, "main"), "(f32, i32, i32, i32, i32)");
    assert_eq!(var_ty(&p, "g"), "t -> t");
}

#[test]
fn function_restrictions() {
    // Non-lifted type parameters cannot be instantiated with functions; lifted ones can.
    let (m, _) = err("def id 'a (x: a) : a = x\ndef main = (id (\\(x: i32) -> x)) 1");
    assert!(m.contains("type mismatch"), "{m}");
    ok("def id '^a (x: a) : a = x\ndef main = (id (\\(x: i32) -> x)) 1");
    let (m, _) = err("def f (b: bool) (g: i32 -> i32) = (if b then g else g) 1");
    assert!(
        m.starts_with("the branches of a conditional cannot be functions"),
        "{m}"
    );
    // Deferred: the array element's type becomes a function later.
    let (m, _) = err("def f x = ([x], x 2)");
    assert!(m.contains("type mismatch"), "{m}");
    // Inside a definition, a lifted type parameter may be a function.
    let (m, _) = err("def cond '^a (b: bool) (x: a) (y: a) : a = if b then x else y");
    assert!(m.starts_with("the branches of a conditional"), "{m}");
    let (m, _) = err("def arr '^a (x: a) = [x]");
    assert_eq!(m, "arrays of functions are not permitted");
    ok("def cond 'a (b: bool) (x: a) (y: a) : a = if b then x else y");
    let (m, _) = err("def f (g: i32 -> i32) = loop h = g for i < 3 do h");
    assert_eq!(m, "a loop parameter cannot be a function");
}

#[test]
fn names_bound_twice_and_underscore_names() {
    let (m, t) = err("def main (x: i32) (x: i32) : i32 = x");
    assert_eq!(m, "`x` is also bound earlier in this binding");
    assert_eq!(t, "x");
    let (m, _) = err("def main (x: i32) = let (y, y) = (x, x) in y");
    assert_eq!(m, "`y` is also bound earlier in this binding");
    let (m, _) = err("def f 'a 'a (x: a) = x");
    assert!(m.contains("also bound"), "{m}");
    let (m, _) = err("def main (_x: i32) : i32 = _x");
    assert!(
        m.starts_with("names starting with an underscore cannot be used"),
        "{m}"
    );
    ok("def main (x: i32) = let (_, _) = (x, x) in loop s = 0 for _i < 3 do s + x");
}

#[test]
fn ambiguous_type_is_an_error() {
    let (m, _) = err("def main (x: i32) = let _ = [] in x");
    assert!(m.starts_with("type is ambiguous"), "{m}");
}

#[test]
fn never_panics_on_odd_programs() {
    for src in [
        "def f = f",
        "def f x = x x",
        "def f = (1, 2).5",
        "def f = [1, true]",
        "def f = let (a, b) = 1 in a",
        "def f = loop x for i < 10 do x",
        "def f = loop _ for i < 10 do 1",
        "def f = x.y",
        "def f = (.a) (1, 2)",
        "def f (x: [][]i32) = x with [0] = 1",
        "type t = t",
        "def f = iota 10 ++ [true]",
        "def f = \\x -> x.0 + x.1",
        "def f = [\\x -> x]",
    ] {
        let mut sources = SourceMap::default();
        let file = sources.add("odd.fut", src);
        if let Ok(mut prog) = parse_program(src, file) {
            let _ = check_program(&mut prog, &sources);
        }
    }
    assert!(err("def f x = x x").0.contains("infinite"));
    assert!(err("def f = [\\(x: i32) -> x]")
        .0
        .contains("arrays of functions"));
}

#[test]
fn builtin_signatures_all_convert() {
    let (_, errs) = super::builtins::intrinsic_schemes();
    assert!(errs.is_empty(), "{errs:?}");
    let errs = super::builtins::module_fn_errors();
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        super::builtins::module_member(PrimType::F32, "to_bits").map(|t| t.to_string()),
        Some("f32 -> u32".into())
    );
    assert!(super::builtins::module_member(PrimType::I32, "sqrt").is_none());
}

/// The Futhark AD test corpus (when present): every program is parsed after the prelude and
/// type-checked. Prints the files that fail with their first error; checks that the checker never
/// reports an internal error and that the number of accepted programs does not regress.
#[test]
fn futhark_ad_corpus() {
    let dir = std::path::Path::new("/work/futhark-ref/tests/ad");
    let Ok(rd) = std::fs::read_dir(dir) else {
        eprintln!("corpus not present; skipped");
        return;
    };
    let prelude = std::env::var("VKAD_TC_PRELUDE")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_else(|| crate::PRELUDE.to_string());
    let mut files: Vec<_> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fut"))
        .collect();
    files.sort();
    let (mut checked, mut parse_fail, mut type_fail) = (0, vec![], vec![]);
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let mut sources = SourceMap::default();
        let pid = sources.add(crate::PRELUDE_NAME, prelude.as_str());
        let fid = sources.add(f.display().to_string(), text.as_str());
        let parsed = parse_program(&prelude, pid).and_then(|mut p| {
            p.decs.extend(parse_program(&text, fid)?.decs);
            Ok(p)
        });
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut prog = match parsed {
            Ok(p) => p,
            Err(d) => {
                parse_fail.push(format!("{name}: {}", d.0[0].message));
                continue;
            }
        };
        match check_program(&mut prog, &sources) {
            Ok(_) => checked += 1,
            Err(d) => {
                let d = &d.0[0];
                assert!(
                    !d.message.contains("internal error"),
                    "{name}: {}",
                    d.message
                );
                let text = sources
                    .file(d.span.file)
                    .text
                    .get(d.span.lo as usize..d.span.hi as usize)
                    .unwrap_or("")
                    .to_string();
                type_fail.push(format!("{name}: {} at `{text}`", d.message));
            }
        }
    }
    eprintln!(
        "AD corpus: {} files, {checked} type-check, {} fail to parse, {} fail to type-check",
        files.len(),
        parse_fail.len(),
        type_fail.len()
    );
    for m in parse_fail.iter().chain(&type_fail) {
        eprintln!("  {m}");
    }
    // Regression guard: with a prelude that provides Futhark's library functions (`map2`,
    // `tabulate`, ...) nearly all of the corpus is accepted; without one, about a third.
    let min = if prelude.contains("def map2") {
        120
    } else {
        50
    };
    assert!(checked >= min, "only {checked} corpus programs type-check");
}

/// Not part of the suite: run over every Futhark test program to look for panics and to collect
/// the most common errors (`cargo test ... all_futhark_tests -- --ignored --nocapture`).
#[test]
#[ignore]
fn all_futhark_tests() {
    fn walk(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        if let Ok(rd) = std::fs::read_dir(d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out)
                } else if p.extension().is_some_and(|x| x == "fut") {
                    out.push(p)
                }
            }
        }
    }
    let prelude = std::env::var("VKAD_TC_PRELUDE")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_else(|| crate::PRELUDE.to_string());
    let mut files = vec![];
    let root = std::env::var("VKAD_TC_TESTS").unwrap_or_else(|_| "/work/futhark-ref/tests".into());
    walk(std::path::Path::new(&root), &mut files);
    files.sort();
    let (mut parsed, mut ok) = (0, 0);
    let mut msgs: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let mut sources = SourceMap::default();
        let pid = sources.add(crate::PRELUDE_NAME, prelude.as_str());
        let fid = sources.add(f.display().to_string(), text.as_str());
        let Ok(mut prog) = parse_program(&prelude, pid).and_then(|mut p| {
            p.decs.extend(parse_program(&text, fid)?.decs);
            Ok(p)
        }) else {
            continue;
        };
        parsed += 1;
        match check_program(&mut prog, &sources) {
            Ok(_) => {
                ok += 1;
                if std::env::var("VKAD_TC_ALL").is_ok() {
                    eprintln!("ACCEPTED {}", f.display());
                }
            }
            Err(d) => {
                let m = &d.0[0].message;
                let key: String = m.split('`').next().unwrap_or("").to_string();
                msgs.entry(key)
                    .or_default()
                    .push(format!("{}: {m}", f.display()));
            }
        }
    }
    eprintln!("{} files, {parsed} parse, {ok} type-check", files.len());
    for (k, v) in &msgs {
        eprintln!("{:5} {k}", v.len());
        for x in v.iter().take(if std::env::var("VKAD_TC_ALL").is_ok() {
            10000
        } else {
            4
        }) {
            eprintln!("        {x}");
        }
    }
}

/// Not part of the suite: mutate the AD corpus programs (delete, duplicate and swap words) and
/// check that parsing + type checking never panics
/// (`cargo test ... mutation_fuzz -- --ignored --nocapture`).
#[test]
#[ignore]
fn mutation_fuzz() {
    let Ok(rd) = std::fs::read_dir("/work/futhark-ref/tests/ad") else {
        return;
    };
    let prelude = std::env::var("VKAD_TC_PRELUDE")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_else(|| crate::PRELUDE.to_string());
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let mut rnd = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    let (mut runs, mut checked) = (0, 0);
    for e in rd.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let words: Vec<&str> = text.split_inclusive(|c: char| c.is_whitespace()).collect();
        for _ in 0..60 {
            let mut w = words.clone();
            for _ in 0..1 + rnd(3) {
                let i = rnd(w.len());
                let j = rnd(w.len());
                match rnd(3) {
                    0 if !w.is_empty() => {
                        w.remove(i);
                    }
                    1 if !w.is_empty() => {
                        let x = w[j];
                        w.insert(i, x);
                    }
                    _ if !w.is_empty() => w.swap(i, j),
                    _ => {}
                }
            }
            let src: String = w.concat();
            let mut sources = SourceMap::default();
            let pid = sources.add(crate::PRELUDE_NAME, prelude.as_str());
            let fid = sources.add("m.fut", src.as_str());
            runs += 1;
            let Ok(mut prog) = parse_program(&prelude, pid).and_then(|mut p| {
                p.decs.extend(parse_program(&src, fid)?.decs);
                Ok(p)
            }) else {
                continue;
            };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                check_program(&mut prog, &sources)
            }));
            match r {
                Ok(Ok(_)) => checked += 1,
                Ok(Err(d)) => assert!(
                    !d.0[0].message.contains("internal error"),
                    "{}\n{src}",
                    d.0[0].message
                ),
                Err(_) => panic!("type checker panicked on:\n{src}"),
            }
        }
    }
    eprintln!("{runs} mutants, {checked} type-check");
}

#[test]
fn long_let_chains() {
    // The parser reads `let` chains iteratively, so they can be much deeper than other nesting.
    let mut src = String::from("def main (x: i32) =\n");
    for i in 0..1900 {
        src.push_str(&format!("  let x{i} = x + {i}\n"));
    }
    src.push_str("  in x1899");
    let p = ok(&src);
    assert_eq!(body_ty(&p, "main"), "i32");
}

#[test]
fn exponential_types_are_rejected_not_built() {
    // Each application doubles the type; without a limit the final types would have 2^40 nodes.
    let mut e = String::from("1i32");
    for _ in 0..40 {
        e = format!("f ({e})");
    }
    let (m, _) = err(&format!("def main = let f x = (x, x) in {e}"));
    assert_eq!(m, "the type of this is too large");
    let mut e = String::from("1i32");
    for _ in 0..5 {
        e = format!("f ({e})");
    }
    ok(&format!("def main = let f x = (x, x) in {e}"));
}

// ---------------------------------------------------------------- sizes inferred for unflatten and split

/// The type recorded on the first use of `name` (with the inferred sizes for `unflatten`).
fn use_ty(src: &str, name: &str) -> String {
    var_ty(&ok(src), name)
}

#[test]
fn unflatten_sizes_from_the_result_annotation() {
    assert_eq!(
        use_ty(
            "def f [n] [m] (xs: []f64) : [n][m]f64 = unflatten (xs :> [n*m]f64)",
            "unflatten"
        ),
        "[n*m]f64 -> [n][m]f64"
    );
    assert_eq!(
        use_ty(
            "def f (n: i64) (m: i64) (xs: []f64) = let ys: [n][m]f64 = unflatten xs in ys",
            "unflatten"
        ),
        "[n*m]f64 -> [n][m]f64"
    );
}

#[test]
fn unflatten_sizes_from_the_argument() {
    assert_eq!(
        use_ty(
            "def f [n] [m] (xss: [n][m]i32) = unflatten (flatten xss)",
            "unflatten"
        ),
        "[n*m]i32 -> [n][m]i32"
    );
    // Through a named parameter used as a size (`tabulate (n: i64) ... : [n]a`) and a pipe.
    assert_eq!(
        use_ty(
            "def tab (n: i64) (f: i64 -> i64) : [n]i64 = map f (iota n)\n\
             def f (a: i64) (b: i64) = tab (a * (b + 1)) (\\i -> i) |> unflatten",
            "unflatten"
        ),
        "[a*(b+1)]i64 -> [a][b+1]i64"
    );
    assert_eq!(
        use_ty(
            "def f (k: i64) = unflatten_3d (iota (2 * k * 3))",
            "unflatten_3d"
        ),
        "[(2*k)*3]i64 -> [2][k][3]i64"
    );
}

#[test]
fn split_sizes_from_concatenation() {
    assert_eq!(
        use_ty(
            "def f [n] [m] (xs: [n]i32) (ys: [m]i32) = split (xs ++ ys)",
            "split"
        ),
        "[n+m]i32 -> ([n]i32, [m]i32)"
    );
    assert_eq!(
        use_ty(
            "def f [n] (xs: [n]i32) = let (a: [1]i32, b: [n-1]i32) = split (xs :> [1+(n-1)]i32) in (a, b)",
            "split"
        ),
        "[1+(n-1)]i32 -> ([1]i32, [n-1]i32)"
    );
}

#[test]
fn undeterminable_sizes_are_an_error_at_the_use() {
    let (m, t) = err("def f (xs: []f64) = let ys = unflatten xs in ys");
    assert!(
        m.contains("cannot determine the sizes of `unflatten`'s result"),
        "{m}"
    );
    assert!(
        m.contains("add a type annotation such as `: [n][m]t`"),
        "{m}"
    );
    assert_eq!(t, "unflatten");
    let (m, t) = err("def f (xs: []f64) = split xs");
    assert!(m.contains("`split`"), "{m}");
    assert_eq!(t, "split");
    // A polymorphic definition does not fix the sizes either.
    let (m, _) = err("def f 't (xs: []t) = unflatten xs");
    assert!(m.contains("cannot determine"), "{m}");
}

#[test]
fn sizes_stay_lenient_elsewhere() {
    // Different sizes never make unification fail; ordinary nodes keep no inferred sizes.
    let p = ok("def f [n] [m] (xs: [n]i32) (ys: [m]i32) : [n]i32 = let zs = xs ++ ys in zs");
    assert_eq!(body_ty(&p, "f"), "[]i32");
    ok("def f [n] (xs: [n]i32) : [n*2]i32 = xs ++ xs");
    ok("def f [n] (xs: [n]i32) : [3]i32 = xs");
}

#[test]
fn composition_operators_are_polymorphic() {
    let p =
        ok("def f = (+ 1i32) >-> f64.i32 >-> f64.sqrt\ndef g = f64.sqrt <-< f64.i32 <-< (+ 1i32)");
    assert_eq!(
        dec(&p, "f")
            .body
            .ty
            .as_ref()
            .map(|t| t.to_string())
            .as_deref(),
        Some("i32 -> f64")
    );
    assert_eq!(
        dec(&p, "g")
            .body
            .ty
            .as_ref()
            .map(|t| t.to_string())
            .as_deref(),
        Some("i32 -> f64")
    );
    let (m, _) = err("def f = (+ 1i32) >-> f64.sqrt");
    assert!(m.contains("type mismatch"), "{m}");
}

#[test]
fn long_size_expressions_are_handled_in_linear_time() {
    // A 1000-term size: inference of unflatten's sizes must not be quadratic per level.
    let s = vec!["n"; 1000].join("+");
    let src = format!("def f (n: i64) (xs: []i32) : [1][{s}]i32 = unflatten (xs :> [1*({s})]i32)");
    let start = std::time::Instant::now();
    ok(&src);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn size_parameters_only_in_size_expressions_are_found_at_each_call() {
    // As in Futhark: each call finds `p` and `q` by matching the argument's type `[n*m]f64`.
    let rows = "def rows [p] [q] (xs: [p*q]f64) : [p][q]f64 = unflatten xs\n";
    ok(&format!(
        "{rows}def g [n] [m] (a: [n][m]f64) = rows (flatten a)"
    ));
    ok("def tail1 [n] (xs: [1+n]i64) : [n]i64 = xs[1:] :> [n]i64\n\
        def g (k: i64) = tail1 (iota (1+k))");
    // With a constructive use as well, the size expression is fine.
    ok("def f [n] (x: [n]f64) (y: [2*n]f64) : f64 = x[0] + y[0]");
}

#[test]
fn undetermined_size_parameters_are_ambiguous_at_the_call() {
    let rows = "def rows [p] [q] (xs: [p*q]f64) : [p][q]f64 = unflatten xs\n";
    let (m, at) = err(&format!("{rows}def g (xs: []f64) = rows xs"));
    assert_eq!(
        (m.as_str(), at.as_str()),
        ("ambiguous size `p` in this call of `rows`", "rows")
    );
    // `[n]` gives no `p*q`: the sizes stay unknown.
    let (m, _) = err(&format!(
        "{rows}def g [n] (xs: [n]f64) = map f64.sum (rows xs)"
    ));
    assert!(m.contains("ambiguous size `p`"), "{m}");
    // A local function is not instantiated per call, so it still needs a constructive use.
    let (m, _) = err("def f (k: i64) = let g [n] (y: [2*n]f64) = n in g (replicate (2*k) 0)");
    assert!(
        m.contains("size parameter `n` is used only in size expressions"),
        "{m}"
    );
}

/// A size parameter that only the result's type mentions (`fill [n] (x: i32) : [n]i32`, and
/// onehot's `arr [n] [m] : gen [m] a -> gen [n * m] ([n]a)`) is found at each call from the type
/// the context expects of the result; a call whose context gives none is ambiguous.
#[test]
fn result_only_size_parameters_come_from_the_context_of_each_call() {
    let fill = "def fill [n] (x: i32) : [n]i32 = replicate n x\n";
    ok(&format!("{fill}def g (k: i64) : [k]i32 = fill 3"));
    ok(&format!("{fill}def g (k: i64) = zip (iota k) (fill 3)"));
    let (m, at) = err(&format!("{fill}def g (k: i64) = i32.sum (fill 3)"));
    assert_eq!(
        (m.as_str(), at.as_str()),
        ("ambiguous size `n` in this call of `fill`", "fill")
    );
    let widen = "def widen [n] [m] (xs: [m]i32) : [n * m]i32 = replicate (n * m) 0\n";
    ok(&format!(
        "{widen}def g (k: i64) = widen [1, 2] : [k * 2]i32"
    ));
    let (m, _) = err(&format!("{widen}def g (k: i64) = widen [1, 2] : [k]i32"));
    assert!(m.contains("ambiguous size `n`"), "{m}");
}

/// A function's inferred result keeps a size that is the value of an expression (`seeds` of
/// Futhark's tests/ad/flatmap1.fut: `[i64.sum ks * 2]`), so a call solving `[p*q]` against it
/// finds `p` and `q`; the branches of a conditional or a `match` that differ on a size make it
/// unknown (existential, as in Futhark), so the same call on such a value is ambiguous.
#[test]
fn result_size_expressions_reach_the_caller_and_branches_that_differ_hide_them() {
    let rows = "def rows [p] [q] (xs: [p*q]f64) : [p][q]f64 = unflatten xs\n\
                def mk (ks: []i64) = flatten (replicate (i64.sum ks) (replicate 2 0f64))\n";
    ok(&format!("{rows}def g (ks: []i64) = rows (mk ks)"));
    ok(&format!(
        "{rows}def g (c: bool) (ks: []i64) = rows (if c then mk ks else mk ks)"
    ));
    let (m, _) = err(&format!(
        "{rows}def g (c: bool) (ks: []i64) (n: i64) = \
         rows (if c then mk ks else flatten (replicate n (replicate 2 0f64)))"
    ));
    assert!(m.contains("ambiguous size `p`"), "{m}");
    let (m, _) = err(&format!(
        "{rows}def g (c: i32) (ks: []i64) (n: i64) = \
         rows (match c case 0 -> mk ks case _ -> flatten (replicate n (replicate 2 0f64)))"
    ));
    assert!(m.contains("ambiguous size `p`"), "{m}");
}

/// `p (p (… x))` with `p x = (x, x)` (issue 16, item 6): the type of the result is a tree of
/// `2^n` leaves built by sharing. Checking that it holds no function walked it as a tree (26
/// levels took 6 s before the size limit was reached; 40 never finished); it is walked as a
/// graph now, so 40 levels reach the limit on types at once.
#[test]
fn nested_calls_of_a_pairing_function_are_checked_as_a_shared_type() {
    use crate::testing::nests::pair_nest;
    assert_eq!(body_ty(&ok(&pair_nest(12)), "main"), "i32");
    let (msg, at) = err(&pair_nest(40));
    assert_eq!(
        (msg.as_str(), at.as_str()),
        ("the type of this is too large", "_")
    );
}

#[test]
fn records() {
    let p = ok("def f (r: {b: f32, a: i32}) = (r.a, r.b)");
    assert_eq!(body_ty(&p, "f"), "(i32, f32)");
    // Fields are ordered by name; punning; a type-changing update.
    let p = ok("def f (a: i32) = let r = {b = true, a} in r with a = 1.5f32");
    assert_eq!(body_ty(&p, "f"), "{a: f32, b: bool}");
    // `r.a` with `r` a variable is field access; sections project from a record type that
    // becomes known later.
    let p = ok("def f (rs: []{x: f64, y: i32}) = map (.y) rs");
    assert_eq!(body_ty(&p, "f"), "[]i32");
    let p = ok("def f (r: {p: {q: i64}}) = r.p.q");
    assert_eq!(body_ty(&p, "f"), "i64");
    // A record of fields 0 and 1 is a pair.
    let p = ok("def f = {1 = 2i32, 0 = true}");
    assert_eq!(body_ty(&p, "f"), "(bool, i32)");
    let (m, _) = err("def f = {a = 1, a = 2}");
    assert_eq!(m, "field `a` is given twice");
    let (m, _) = err("def f (r: {a: i32}) = r.b");
    assert_eq!(m, "type `{a: i32}` has no field `b`");
    let (m, _) = err("def f (r: {a: i32}) = r with b = 1");
    assert_eq!(m, "type `{a: i32}` has no field `b`");
    let (m, _) = err("def f (r: {a: i32}) : {a: i32, b: i32} = r");
    assert_eq!(
        m,
        "type mismatch: expected `{a: i32, b: i32}`, found `{a: i32}`"
    );
    let (m, _) = err("def f r = r with a = 1");
    assert!(
        m.starts_with("the type of the updated value must be known"),
        "{m}"
    );
    let (m, _) = err("def f (x: i32) = x.a");
    assert_eq!(
        m,
        "type mismatch: cannot project field `a` from a value of type `i32`"
    );
    let (m, _) = err("def f ({a, a = b}: {a: i32}) = b");
    assert_eq!(m, "field `a` is given twice");
}

#[test]
fn sum_types_and_match() {
    let p = ok("type t = #b i32 | #a
                def f (x: t) = match x case #a -> 0 case #b y -> y");
    assert_eq!(body_ty(&p, "f"), "i32");
    // A type known only from its constructors is the sum of those.
    let p = ok("def f (c: bool) = if c then #yes 1i64 else #no");
    assert_eq!(body_ty(&p, "f"), "#no | #yes i64");
    let (m, _) = err("type t = #a | #b i32
                      def f (x: t) = match x case #a -> 1");
    assert_eq!(m, "unmatched case: `#b _` is not matched by any pattern");
    let (m, _) = err("def f (x: (bool, bool)) = match x case (true, _) -> 1 case (_, true) -> 2");
    assert_eq!(
        m,
        "unmatched case: `(false, false)` is not matched by any pattern"
    );
    let (m, _) = err("def f (x: i32) = match x case 1 -> 1 case 2 -> 2");
    assert_eq!(m, "unmatched case: `_` is not matched by any pattern");
    let (m, _) = err("type t = #a | #b i32
                      def f (x: t) = let #b y = x in y");
    assert_eq!(
        m,
        "refutable pattern: this does not match every value of its type"
    );
    let (m, _) = err("def f (1) = 0");
    assert_eq!(
        m,
        "refutable pattern: this does not match every value of its type"
    );
    let (m, _) = err("type t = #a | #b i32
                      def f : t = #b true");
    assert!(m.starts_with("type mismatch"), "{m}");
    let (m, _) = err("type t = #a | #b i32
                      def f : t = #c");
    assert_eq!(
        m,
        "type mismatch: `#a | #b i32` has no constructor `#c` with 0 payload value(s)"
    );
    let (m, _) = err("type t = #a | #a i32");
    assert_eq!(m, "constructor `#a` is given twice");
    // A sum type at an entry point type-checks (lowering rejects that entry point alone).
    ok("entry main (x: i32) : (#a | #b i32) = #b x");
    let (m, _) = err("def f (x: bool) = match x case true -> 1 case false -> \\y -> y");
    assert!(m.starts_with("type mismatch"), "{m}");
}
