//! Tests of the lexer and parser: AST shapes (via a compact S-expression rendering), precedence,
//! error messages, the Futhark AD test corpus, and property tests that no input panics.

use super::*;
use crate::diag::SourceMap;

const F: FileId = FileId(0);

// ------------------------------------------------------------------ S-expression rendering

fn q(n: &QualName) -> String {
    n.to_string()
}

fn op(o: &OpRef) -> String {
    match o {
        OpRef::Builtin(b) => b.symbol().to_string(),
        OpRef::Fun(f) => format!("`{}`", e(f)),
    }
}

fn lit(l: &Literal) -> String {
    match l {
        Literal::Int(v, None) => v.to_string(),
        Literal::Int(v, Some(t)) => format!("{v}{t}"),
        Literal::Float(v, None) => format!("{v:?}"),
        Literal::Float(v, Some(t)) => format!("{v:?}{t}"),
        Literal::Bool(b) => b.to_string(),
    }
}

fn attr(a: &Attr) -> String {
    match a {
        Attr::Atom(n, _) => n.clone(),
        Attr::Int(i, _) => i.to_string(),
        Attr::Call(n, args, _) => format!(
            "{n}({})",
            args.iter().map(attr).collect::<Vec<_>>().join(",")
        ),
    }
}

fn size(s: &SizeExp) -> String {
    match s {
        SizeExp::Any => String::new(),
        SizeExp::Const(c) => c.to_string(),
        SizeExp::Named(n) => q(n),
        SizeExp::Bin(o, a, b) => format!("({} {} {})", size(a), o.symbol(), size(b)),
        SizeExp::Expr(x) => format!("<{}>", e(x)),
    }
}

fn t(ty: &TypeExp) -> String {
    match ty {
        TypeExp::Named(n, args, _) if args.is_empty() => q(n),
        TypeExp::Named(n, args, _) => {
            let a: Vec<String> = args
                .iter()
                .map(|a| match a {
                    TypeArgExp::Size(s, _) => format!("[{}]", size(s)),
                    TypeArgExp::Type(ty) => t(ty),
                })
                .collect();
            format!("({} {})", q(n), a.join(" "))
        }
        TypeExp::Tuple(ts, _) => format!("({})", ts.iter().map(t).collect::<Vec<_>>().join(", ")),
        TypeExp::Record(fs, _) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, _, ty)| format!("{n}: {}", t(ty)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TypeExp::Sum(cs, _) => format!(
            "({})",
            cs.iter()
                .map(|(c, _, ts)| {
                    let mut s = format!("#{c}");
                    for x in ts {
                        s.push(' ');
                        s.push_str(&t(x));
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        TypeExp::Array(s, el, _) => format!("[{}]{}", size(s), t(el)),
        TypeExp::Unique(el, _) => format!("*{}", t(el)),
        TypeExp::Arrow(None, a, b, _) => format!("({} -> {})", t(a), t(b)),
        TypeExp::Arrow(Some(n), a, b, _) => format!("(({n}: {}) -> {})", t(a), t(b)),
        TypeExp::Exists(ns, el, _) => format!(
            "?{}.{}",
            ns.iter().map(|n| format!("[{n}]")).collect::<String>(),
            t(el)
        ),
    }
}

fn tparam(p: &TypeParam) -> String {
    match p {
        TypeParam::Size(n, _) => format!("[{n}]"),
        TypeParam::Type {
            name,
            liftedness: Liftedness::Unlifted,
            ..
        } => format!("'{name}"),
        TypeParam::Type {
            name,
            liftedness: Liftedness::Lifted,
            ..
        } => format!("'^{name}"),
        TypeParam::Type {
            name,
            liftedness: Liftedness::SizeLifted,
            ..
        } => format!("'~{name}"),
    }
}

fn p(pat: &Pat) -> String {
    match &pat.kind {
        PatKind::Id(n) => n.clone(),
        PatKind::Wildcard => "_".into(),
        PatKind::Tuple(ps) => format!("({})", ps.iter().map(p).collect::<Vec<_>>().join(", ")),
        PatKind::Record(fs) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, _, q)| format!("{n} = {}", p(q)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        PatKind::Constr(c, ps) if ps.is_empty() => format!("#{c}"),
        PatKind::Constr(c, ps) => {
            format!("(#{c} {})", ps.iter().map(p).collect::<Vec<_>>().join(" "))
        }
        PatKind::Lit(l, neg) => format!("{}{}", if *neg { "-" } else { "" }, lit(l)),
        PatKind::Ascribed(inner, ty) => format!("({}: {})", p(inner), t(ty)),
        PatKind::Attr(a, inner) => format!("#[{}] {}", attr(a), p(inner)),
    }
}

fn idx(d: &DimIndex) -> String {
    let o = |x: &Option<Expr>| x.as_ref().map(e).unwrap_or_default();
    match d {
        DimIndex::Fix(x) => e(x),
        DimIndex::Slice(a, b, None) => format!("{}:{}", o(a), o(b)),
        DimIndex::Slice(a, b, c) => format!("{}:{}:{}", o(a), o(b), o(c)),
    }
}

fn idxs(ds: &[DimIndex]) -> String {
    ds.iter().map(idx).collect::<Vec<_>>().join(", ")
}

fn e(x: &Expr) -> String {
    let all = |xs: &[Expr]| xs.iter().map(e).collect::<Vec<_>>().join(" ");
    match &x.kind {
        ExprKind::Lit(l) => lit(l),
        ExprKind::Var(n) => q(n),
        ExprKind::Tuple(xs) => format!("(tuple {})", all(xs)),
        ExprKind::ArrayLit(xs) => format!("[{}]", xs.iter().map(e).collect::<Vec<_>>().join(", ")),
        ExprKind::Range {
            start,
            second,
            end,
            kind,
        } => {
            let k = match kind {
                RangeKind::UpToExclusive => "..<",
                RangeKind::DownToExclusive => "..>",
                RangeKind::Inclusive => "...",
            };
            match second {
                Some(s) => format!("(range {} {} {k} {})", e(start), e(s), e(end)),
                None => format!("(range {} {k} {})", e(start), e(end)),
            }
        }
        ExprKind::BinOp(o, a, b) => format!("({} {} {})", op(o), e(a), e(b)),
        ExprKind::UnOp(UnOp::Neg, a) => format!("(neg {})", e(a)),
        ExprKind::UnOp(UnOp::Not, a) => format!("(not {})", e(a)),
        ExprKind::Apply(f, args) => format!("(app {} {})", e(f), all(args)),
        ExprKind::Lambda { params, ret, body } => {
            let ps = params.iter().map(p).collect::<Vec<_>>().join(" ");
            match ret {
                Some(r) => format!("(\\{ps} : {} -> {})", t(r), e(body)),
                None => format!("(\\{ps} -> {})", e(body)),
            }
        }
        ExprKind::OpSection(o) => format!("(section {})", op(o)),
        ExprKind::LeftSection(o, a) => format!("(lsection {} {})", e(a), op(o)),
        ExprKind::RightSection(o, a) => format!("(rsection {} {})", op(o), e(a)),
        ExprKind::ProjectSection(fs) => format!("(.{})", fs.join(".")),
        ExprKind::Project(a, f) => format!("{}.{f}", e(a)),
        ExprKind::Record(fs) => format!(
            "{{{}}}",
            fs.iter()
                .map(|(n, _, v)| format!("{n} = {}", e(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Constr(c, xs) if xs.is_empty() => format!("#{c}"),
        ExprKind::Constr(c, xs) => format!("(#{c} {})", all(xs)),
        ExprKind::Match(x, cases) => {
            let cs: Vec<String> = cases
                .iter()
                .map(|(pt, b)| format!("(case {} {})", p(pt), e(b)))
                .collect();
            format!("(match {} {})", e(x), cs.join(" "))
        }
        ExprKind::RecordUpdate {
            record,
            path,
            value,
        } => {
            let path: Vec<&str> = path.iter().map(|(f, _)| f.as_str()).collect();
            format!("(with {} {} {})", e(record), path.join("."), e(value))
        }
        ExprKind::If(c, a, b) => format!("(if {} {} {})", e(c), e(a), e(b)),
        ExprKind::Let { pat, value, body } => format!("(let {} {} {})", p(pat), e(value), e(body)),
        ExprKind::LetFun {
            name,
            type_params,
            params,
            ret,
            value,
            body,
            ..
        } => {
            let tps: String = type_params
                .iter()
                .map(|x| format!("{} ", tparam(x)))
                .collect();
            let ps = params.iter().map(p).collect::<Vec<_>>().join(" ");
            let r = ret
                .as_ref()
                .map(|r| format!(" : {}", t(r)))
                .unwrap_or_default();
            format!("(letfun {name} {tps}{ps}{r} = {} in {})", e(value), e(body))
        }
        ExprKind::LetWith {
            name,
            indices,
            value,
            body,
            ..
        } => {
            format!(
                "(letwith {name}[{}] {} {})",
                idxs(indices),
                e(value),
                e(body)
            )
        }
        ExprKind::Update {
            array,
            indices,
            value,
        } => format!("(with {} [{}] {})", e(array), idxs(indices), e(value)),
        ExprKind::Loop {
            pat,
            init,
            form,
            body,
        } => {
            let i = init
                .as_ref()
                .map(|i| format!(" = {}", e(i)))
                .unwrap_or_default();
            let f = match form {
                LoopForm::For(n, _, b) => format!("for {n} < {}", e(b)),
                LoopForm::ForIn(pt, xs) => format!("for {} in {}", p(pt), e(xs)),
                LoopForm::While(c) => format!("while {}", e(c)),
            };
            format!("(loop {}{i} {f} do {})", p(pat), e(body))
        }
        ExprKind::Index(a, ds) => format!("{}[{}]", e(a), idxs(ds)),
        ExprKind::Ascribe(a, ty) => format!("({} : {})", e(a), t(ty)),
        ExprKind::Coerce(a, ty) => format!("({} :> {})", e(a), t(ty)),
        ExprKind::Attr(a, b) => format!("(#[{}] {})", attr(a), e(b)),
        ExprKind::LocalOpen(m, b) => format!("{}.({})", q(m), e(b)),
        ExprKind::Assert(c, b) => format!("(assert {} {})", e(c), e(b)),
    }
}

/// Parse `src` as the body of a definition and render it.
fn pe(src: &str) -> String {
    let prog = format!("def x = {src}");
    match parse_program(&prog, F) {
        Ok(p) => match &p.decs[..] {
            [Dec::Val(v)] => e(&v.body),
            _ => panic!("expected one declaration for {src:?}"),
        },
        Err(d) => panic!("{src:?} failed to parse:\n{}", render(&prog, &d)),
    }
}

fn render(src: &str, d: &Diagnostics) -> String {
    let mut sm = SourceMap::default();
    sm.add("test.fut", src);
    d.render(&sm)
}

/// Parse a whole program that must fail; return the first message and the rendering.
fn perr(src: &str) -> (String, String) {
    match parse_program(src, F) {
        Ok(p) => panic!("{src:?} parsed but should not: {:?}", p.decs.len()),
        Err(d) => (d.0[0].message.clone(), render(src, &d)),
    }
}

/// The message of the error for expression `src`.
fn eerr(src: &str) -> String {
    perr(&format!("def x = {src}")).0
}

fn pt(src: &str) -> String {
    match parse_type(src, F) {
        Ok(ty) => t(&ty),
        Err(d) => panic!("type {src:?} failed:\n{}", render(src, &d)),
    }
}

// ------------------------------------------------------------------ lexer

#[test]
fn lex_numbers() {
    assert_eq!(pe("42"), "42");
    assert_eq!(pe("1_000_000"), "1000000");
    assert_eq!(pe("0xff"), "255");
    assert_eq!(pe("0xFF_FFu8"), "65535u8");
    assert_eq!(pe("0b1010"), "10");
    assert_eq!(pe("0b1010i64"), "10i64");
    assert_eq!(pe("7i8"), "7i8");
    assert_eq!(pe("7u64"), "7u64");
    assert_eq!(pe("1f32"), "1f32");
    assert_eq!(pe("1.5"), "1.5");
    assert_eq!(pe("1.5f32"), "1.5f32");
    assert_eq!(pe("1e-3"), "0.001");
    assert_eq!(pe("2.5E2f64"), "250.0f64");
    assert_eq!(pe("1_0.2_5"), "10.25");
    assert_eq!(pe("0x1.8p1"), "3.0");
    assert_eq!(pe("0x1p-2f32"), "0.25f32");
    assert_eq!(
        pe("340282366920938463463374607431768211455"),
        u128::MAX.to_string()
    );
    assert_eq!(pe("true"), "true");
    assert_eq!(pe("false"), "false");
}

#[test]
fn lex_number_errors() {
    assert_eq!(
        eerr("340282366920938463463374607431768211456"),
        "literal out of range"
    );
    assert!(eerr("1x").contains("invalid numeric literal suffix `x`"));
    assert!(eerr("1.5i32").contains("integer suffix"));
    assert!(eerr("0x").contains("no digits"));
    assert_eq!(eerr("1e400"), "literal out of range");
    assert_eq!(eerr("0x1p99999"), "literal out of range");
    assert!(parse_program("\u{feff}def x = 1", F).is_ok());
}

#[test]
fn lex_strings_and_characters() {
    // A string is its UTF-8 bytes as u8 literals; a character literal is its code point.
    assert_eq!(pe("\"aé\""), "[97u8, 195u8, 169u8]");
    assert_eq!(
        pe(r#""\t\\\"\'\65\x42\o103""#),
        "[9u8, 92u8, 34u8, 39u8, 65u8, 66u8, 67u8]"
    );
    assert_eq!(pe("\"\""), "([] : [0]u8)");
    assert_eq!(pe("'a'"), "97");
    assert_eq!(pe("'é'"), "233");
    assert_eq!(pe(r"'\n'"), "10");
    assert_eq!(pe(r"'\''"), "39");
    assert_eq!(pe(r"'\x41'"), "65");
    assert_eq!(pe("f 'a' 'b'"), "(app f 97 98)");
    assert!(eerr(r#""a\qb""#).contains("not supported: this escape sequence"));
    assert!(eerr(r#""\x""#).contains("expected digits"));
    assert!(eerr(r#""\1114112""#).contains("invalid character escape"));
    assert!(eerr("\"ab\ncd\"").contains("newline in a string literal"));
    // As in Haskell, a numeric escape takes every digit that follows: `\x62c` is U+062C.
    assert_eq!(pe(r#""\x62c""#), "[216u8, 172u8]");
    let (path, _) = match &parse_program(r#"import "a\98c""#, F).unwrap().decs[0] {
        Dec::Import(path, span) => (path.clone(), *span),
        _ => panic!(),
    };
    assert_eq!(path, "abc");
}

#[test]
fn lex_comments_and_identifiers() {
    let p = parse_program(
        "-- a comment\n-- ==\n-- input { 1 }\ndef x' = a_b' -- trailing\n-- | doc\ndef _y = 1",
        F,
    )
    .unwrap();
    assert_eq!(p.decs.len(), 2);
    match &p.decs[0] {
        Dec::Val(v) => {
            assert_eq!(v.name, "x'");
            assert_eq!(e(&v.body), "a_b'");
        }
        _ => panic!(),
    }
    assert_eq!(pe("x--1"), "x");
}

#[test]
fn lex_index_bracket_depends_on_space() {
    assert_eq!(pe("a[1]"), "a[1]");
    assert_eq!(pe("f [1]"), "(app f [1])");
    assert_eq!(pe("f a[1]"), "(app f a[1])");
    assert_eq!(pe("(f a)[1]"), "(app f a)[1]");
    assert_eq!(pe("a[1][2]"), "a[1][2]");
    assert_eq!(pe("x.0[1]"), "x.0[1]");
}

// ------------------------------------------------------------------ expressions

#[test]
fn variables_and_qualified_names() {
    assert_eq!(pe("x"), "x");
    assert_eq!(pe("f64.sqrt"), "f64.sqrt");
    assert_eq!(pe("f64.sqrt 2.0"), "(app f64.sqrt 2.0)");
    assert_eq!(pe("i32.max a b"), "(app i32.max a b)");
    assert_eq!(pe("f64.(sqrt x + pi)"), "f64.((+ (app sqrt x) pi))");
}

#[test]
fn tuples_arrays_projection() {
    assert_eq!(pe("()"), "(tuple )");
    assert_eq!(pe("(1, 2)"), "(tuple 1 2)");
    assert_eq!(pe("(1, 2,)"), "(tuple 1 2)");
    assert_eq!(pe("(1)"), "1");
    assert_eq!(pe("[1, 2, 3]"), "[1, 2, 3]");
    assert_eq!(pe("[]"), "[]");
    assert_eq!(pe("[[1], [2],]"), "[[1], [2]]");
    assert_eq!(pe("x.0"), "x.0");
    assert_eq!(pe("x.0.1"), "x.0.1");
    assert_eq!(pe("(f x).1"), "(app f x).1");
    assert_eq!(pe("f x.1"), "(app f x.1)");
}

#[test]
fn ranges() {
    assert_eq!(pe("0..<n"), "(range 0 ..< n)");
    assert_eq!(pe("n..>0"), "(range n ..> 0)");
    assert_eq!(pe("1...n"), "(range 1 ... n)");
    assert_eq!(pe("0..2...n"), "(range 0 2 ... n)");
    assert_eq!(pe("0..2..<n"), "(range 0 2 ..< n)");
    assert_eq!(pe("n..n-1..>0"), "(range n (- n 1) ..> 0)");
    assert_eq!(pe("i+1..<n*2"), "(range (+ i 1) ..< (* n 2))");
    assert!(eerr("1..n").contains("expected `...`, `..<` or `..>`"));
    assert!(eerr("1..<2..<3").contains("ranges cannot be chained"));
}

#[test]
fn application_groups() {
    assert_eq!(pe("f a b c"), "(app f a b c)");
    assert_eq!(pe("f (g a) b"), "(app f (app g a) b)");
    assert_eq!(pe("map (\\x -> x + 1) xs"), "(app map (\\x -> (+ x 1)) xs)");
    assert_eq!(pe("f x \\y -> y + 1"), "(app f x (\\y -> (+ y 1)))");
    assert_eq!(pe("f -1"), "(- f 1)");
    assert_eq!(pe("f (-1)"), "(app f (neg 1))");
}

#[test]
fn precedence() {
    assert_eq!(pe("a + b * c"), "(+ a (* b c))");
    assert_eq!(pe("a * b + c"), "(+ (* a b) c)");
    assert_eq!(pe("a - b - c"), "(- (- a b) c)");
    assert_eq!(pe("a ** b ** c"), "(** (** a b) c)");
    assert_eq!(pe("a * b ** c"), "(* a (** b c))");
    assert_eq!(pe("a == b && c < d || e"), "(|| (&& (== a b) (< c d)) e)");
    assert_eq!(pe("a & b == c"), "(== (& a b) c)");
    assert_eq!(pe("a << 1 + 2"), "(<< a (+ 1 2))");
    assert_eq!(pe("a >>> 1 | b"), "(| (>>> a 1) b)");
    assert_eq!(pe("a ^ b & c"), "(& (^ a b) c)");
    assert_eq!(pe("a // b %% c % d / e"), "(/ (% (%% (// a b) c) d) e)");
    assert_eq!(pe("xs ++ ys ++ zs"), "(++ (++ xs ys) zs)");
    assert_eq!(pe("xs |> f |> g"), "(|> (|> xs f) g)");
    assert_eq!(pe("f <| g <| x"), "(<| f (<| g x))");
    assert_eq!(pe("x |> f a || b"), "(|> x (|| (app f a) b))");
    assert_eq!(pe("a + b |> f"), "(|> (+ a b) f)");
    assert_eq!(pe("f x + g y"), "(+ (app f x) (app g y))");
    assert_eq!(pe("-x + y"), "(+ (neg x) y)");
    assert_eq!(pe("-f x"), "(neg (app f x))");
    assert_eq!(pe("-x ** 2"), "(** (neg x) 2)");
    assert_eq!(pe("!a && b"), "(&& (not a) b)");
    assert_eq!(pe("- -x"), "(neg (neg x))");
    assert_eq!(pe("a != b"), "(!= a b)");
    assert_eq!(pe("a <= b"), "(<= a b)");
    assert_eq!(pe("a >= b"), "(>= a b)");
    assert_eq!(pe("a > b"), "(> a b)");
    assert_eq!(pe("x `f` y + 1"), "(`f` x (+ y 1))");
    assert_eq!(pe("a `f` b `g` c"), "(`g` (`f` a b) c)");
    assert_eq!(pe("x `f64.max` y"), "(`f64.max` x y)");
    assert_eq!(pe("1 + if c then 2 else 3 + 4"), "(+ 1 (if c 2 (+ 3 4)))");
    assert_eq!(pe("x : i32"), "(x : i32)");
    assert_eq!(pe("a + b : i32"), "((+ a b) : i32)");
    assert_eq!(pe("xs :> [n]f32"), "(xs :> [n]f32)");
    assert_eq!(pe("0..<n |> map f"), "(range 0 ..< (|> n (app map f)))");
}

#[test]
fn sections() {
    assert_eq!(pe("(+)"), "(section +)");
    assert_eq!(pe("(-)"), "(section -)");
    assert_eq!(pe("(++)"), "(section ++)");
    assert_eq!(pe("(+ 2)"), "(rsection + 2)");
    assert_eq!(pe("(2 +)"), "(lsection 2 +)");
    assert_eq!(pe("(a * b +)"), "(lsection (* a b) +)");
    assert_eq!(pe("(* 2 + 1)"), "(rsection * (+ 2 1))");
    assert_eq!(pe("(`f`)"), "(section `f`)");
    assert_eq!(pe("(`f` x)"), "(rsection `f` x)");
    assert_eq!(pe("(x `f`)"), "(lsection x `f`)");
    assert_eq!(pe("(`gather` is)"), "(rsection `gather` is)");
    assert_eq!(pe("(-x)"), "(neg x)");
    assert_eq!(pe("(-1)"), "(neg 1)");
    assert_eq!(pe("(!x)"), "(not x)");
    assert_eq!(pe("(.0)"), "(.0)");
    assert_eq!(pe("(.1.0)"), "(.1.0)");
    assert_eq!(pe("map (.1) xs"), "(app map (.1) xs)");
}

#[test]
fn indexing_and_slices() {
    assert_eq!(pe("a[i, j]"), "a[i, j]");
    assert_eq!(pe("a[i:j]"), "a[i:j]");
    assert_eq!(pe("a[i:]"), "a[i:]");
    assert_eq!(pe("a[:j]"), "a[:j]");
    assert_eq!(pe("a[:]"), "a[:]");
    assert_eq!(pe("a[i:j:s]"), "a[i:j:s]");
    assert_eq!(pe("a[::-1]"), "a[::(neg 1)]");
    assert_eq!(pe("a[1:, i+1]"), "a[1:, (+ i 1)]");
    assert_eq!(pe("a[i,]"), "a[i]");
    assert_eq!(pe("(xs)[0]"), "xs[0]");
    assert_eq!(pe("xs[f i]"), "xs[(app f i)]");
}

#[test]
fn if_let_loop() {
    assert_eq!(pe("if a then b else c"), "(if a b c)");
    assert_eq!(
        pe("if a then b else if c then d else e"),
        "(if a b (if c d e))"
    );
    assert_eq!(pe("let x = 1 in x"), "(let x 1 x)");
    assert_eq!(
        pe("let a = 1 let b = 2 in a + b"),
        "(let a 1 (let b 2 (+ a b)))"
    );
    assert_eq!(pe("let a = 1 in let b = 2 in a"), "(let a 1 (let b 2 a))");
    assert_eq!(pe("let (a, b) = p in a"), "(let (a, b) p a)");
    assert_eq!(pe("let _ = p in 0"), "(let _ p 0)");
    assert_eq!(pe("let x: i32 = 1 in x"), "(let (x: i32) 1 x)");
    assert_eq!(
        pe("let (a, b): (i32, i32) = p in a"),
        "(let ((a, b): (i32, i32)) p a)"
    );
    assert_eq!(
        pe("let f x y = x + y in f 1 2"),
        "(letfun f x y = (+ x y) in (app f 1 2))"
    );
    assert_eq!(
        pe("let f (x: i32) : i32 = x in f"),
        "(letfun f (x: i32) : i32 = x in f)"
    );
    assert_eq!(
        pe("let f 't [n] (xs: [n]t) = xs in f"),
        "(letfun f 't [n] (xs: [n]t) = xs in f)"
    );
    assert_eq!(pe("let xs[i] = v in xs"), "(letwith xs[i] v xs)");
    assert_eq!(pe("let xs[i, j:k] = v in xs"), "(letwith xs[i, j:k] v xs)");
    assert_eq!(pe("let xs[i][j] = v in xs"), "(letwith xs[i, j] v xs)");
    assert_eq!(pe("xs with [i] = v"), "(with xs [i] v)");
    assert_eq!(pe("xs with [i, j] = v + 1"), "(with xs [i, j] (+ v 1))");
    assert_eq!(pe("xs with [i:j] = ys"), "(with xs [i:j] ys)");
    assert_eq!(
        pe("f xs with [0] = 1 |> g"),
        "(with (app f xs) [0] (|> 1 g))"
    );
    assert_eq!(
        pe("replicate n 0 with [j] = 1"),
        "(with (app replicate n 0) [j] 1)"
    );
    assert_eq!(
        pe("loop acc = 0 for i < n do acc + i"),
        "(loop acc = 0 for i < n do (+ acc i))"
    );
    assert_eq!(
        pe("loop acc for x in xs do acc + x"),
        "(loop acc for x in xs do (+ acc x))"
    );
    assert_eq!(
        pe("loop (x, y) = (1, 2) while x < y do (x + 1, y)"),
        "(loop (x, y) = (tuple 1 2) while (< x y) do (tuple (+ x 1) y))"
    );
    assert_eq!(
        pe("loop (x: i32) = 0 for (a, b) in zip xs ys do x"),
        "(loop (x: i32) = 0 for (a, b) in (app zip xs ys) do x)"
    );
    assert_eq!(pe("let x = 1 in x + 1 : i32"), "(let x 1 ((+ x 1) : i32))");
}

#[test]
fn lambdas_attrs_assert() {
    assert_eq!(pe("\\x y -> x * y"), "(\\x y -> (* x y))");
    assert_eq!(pe("\\(a, b) -> a"), "(\\(a, b) -> a)");
    assert_eq!(pe("\\x : f32 -> x"), "(\\x : f32 -> x)");
    assert_eq!(pe("\\(x: f32) -> x"), "(\\(x: f32) -> x)");
    assert_eq!(pe("\\_ -> 0"), "(\\_ -> 0)");
    assert_eq!(pe("#[unsafe] a[i]"), "(#[unsafe] a[i])");
    assert_eq!(
        pe("#[bound(100)] loop x = 0 for i < n do x"),
        "(#[bound(100)] (loop x = 0 for i < n do x))"
    );
    assert_eq!(pe("#[stripmine(2)] x"), "(#[stripmine(2)] x)");
    assert_eq!(pe("#[attr(a, b(1))] x"), "(#[attr(a,b(1))] x)");
    assert_eq!(pe("#[true_dep] x"), "(#[true_dep] x)");
    assert_eq!(pe("assert (x > 0) (f x)"), "(assert (> x 0) (app f x))");
    assert_eq!(pe("let #[a] x = 1 in x"), "(let #[a] x 1 x)");
}

// ------------------------------------------------------------------ declarations, types

#[test]
fn declarations() {
    let src = "#[noinline] def f 't [n] (xs: [n]t) (y: i32) : [n]t = xs\n\
               entry main (x: f64) = f [x] 1\n\
               let g = 1\n\
               def h = 2\n\
               type vec [n] 't = [n]t\n\
               type^ fn 'a = a -> a\n\
               type~ ex = ?[k].[k]i32\n\
               def k '^a '~b = 0";
    let prog = match parse_program(src, F) {
        Ok(p) => p,
        Err(d) => panic!("{}", render(src, &d)),
    };
    assert_eq!(prog.decs.len(), 8);
    let Dec::Val(f) = &prog.decs[0] else { panic!() };
    assert!(!f.entry);
    assert_eq!(f.name, "f");
    assert_eq!(
        f.attrs.iter().map(attr).collect::<Vec<_>>(),
        vec!["noinline"]
    );
    assert_eq!(
        f.type_params.iter().map(tparam).collect::<Vec<_>>(),
        vec!["'t", "[n]"]
    );
    assert_eq!(
        f.params.iter().map(p).collect::<Vec<_>>(),
        vec!["(xs: [n]t)", "(y: i32)"]
    );
    assert_eq!(f.ret.as_ref().map(t).as_deref(), Some("[n]t"));
    assert_eq!(&src[f.name_span.lo as usize..f.name_span.hi as usize], "f");
    assert_eq!(
        &src[f.span.lo as usize..f.span.hi as usize],
        "#[noinline] def f 't [n] (xs: [n]t) (y: i32) : [n]t = xs"
    );
    let Dec::Val(m) = &prog.decs[1] else { panic!() };
    assert!(m.entry);
    assert_eq!(e(&m.body), "(app f [x] 1)");
    let Dec::Val(g) = &prog.decs[2] else { panic!() };
    assert_eq!(g.name, "g");
    let Dec::Val(h) = &prog.decs[3] else { panic!() };
    assert_eq!(h.name, "h");
    let Dec::Type(v) = &prog.decs[4] else {
        panic!()
    };
    assert_eq!(
        (v.name.as_str(), v.liftedness),
        ("vec", Liftedness::Unlifted)
    );
    assert_eq!(
        v.params.iter().map(tparam).collect::<Vec<_>>(),
        vec!["[n]", "'t"]
    );
    assert_eq!(t(&v.def), "[n]t");
    let Dec::Type(fnt) = &prog.decs[5] else {
        panic!()
    };
    assert_eq!(fnt.liftedness, Liftedness::Lifted);
    assert_eq!(t(&fnt.def), "(a -> a)");
    let Dec::Type(ex) = &prog.decs[6] else {
        panic!()
    };
    assert_eq!(ex.liftedness, Liftedness::SizeLifted);
    assert_eq!(t(&ex.def), "?[k].[k]i32");
    let Dec::Val(k) = &prog.decs[7] else { panic!() };
    assert_eq!(
        k.type_params.iter().map(tparam).collect::<Vec<_>>(),
        vec!["'^a", "'~b"]
    );
}

#[test]
fn types() {
    assert_eq!(pt("i32"), "i32");
    assert_eq!(pt("[n]f32"), "[n]f32");
    assert_eq!(pt("[]f32"), "[]f32");
    assert_eq!(pt("[2][3]f32"), "[2][3]f32");
    assert_eq!(pt("*[n]t"), "*[n]t");
    assert_eq!(pt("(i32, f64)"), "(i32, f64)");
    assert_eq!(pt("()"), "()");
    assert_eq!(pt("(i32)"), "i32");
    assert_eq!(pt("a -> b -> c"), "(a -> (b -> c))");
    assert_eq!(pt("(a -> b) -> c"), "((a -> b) -> c)");
    assert_eq!(pt("(n: i64) -> [n]i32"), "((n: i64) -> [n]i32)");
    assert_eq!(pt("?[n][m].[n][m]f32"), "?[n][m].[n][m]f32");
    assert_eq!(pt("vec [n] f32"), "(vec [n] f32)");
    assert_eq!(pt("pair i32 (vec [] f64)"), "(pair i32 (vec [] f64))");
    assert_eq!(pt("[n]vec [m] f32"), "[n](vec [m] f32)");
    assert_eq!(pt("*[]t -> t"), "(*[]t -> t)");
    assert_eq!(pt("[n*m]t"), "[(n * m)]t");
    assert_eq!(pt("[3i64]t"), "[3]t");
}

#[test]
fn val_specs_of_every_builtin() {
    let (ps, ty) = parse_val_spec("'a '^b : (a -> b) -> []a -> *[]b", F).unwrap();
    assert_eq!(ps.iter().map(tparam).collect::<Vec<_>>(), vec!["'a", "'^b"]);
    assert_eq!(t(&ty), "((a -> b) -> ([]a -> *[]b))");
    let (ps, ty) = parse_val_spec("'t [n] : (n: i64) -> *[n]i64", F).unwrap();
    assert_eq!(ps.iter().map(tparam).collect::<Vec<_>>(), vec!["'t", "[n]"]);
    assert_eq!(t(&ty), "((n: i64) -> *[n]i64)");
    for (name, sig) in crate::builtins::INTRINSICS {
        if let Err(d) = parse_val_spec(sig, F) {
            panic!("intrinsic {name}: {}", render(sig, &d));
        }
    }
    for (name, _, sig) in crate::builtins::MODULE_FNS {
        if let Err(d) = parse_val_spec(&format!(": {sig}"), F) {
            panic!("module function {name}: {}", render(sig, &d));
        }
    }
}

#[test]
fn spans_cover_their_source() {
    let src = "def f (x: i32) = let y = x + 1 in (y, y)";
    let prog = parse_program(src, FileId(3)).unwrap();
    let Dec::Val(f) = &prog.decs[0] else { panic!() };
    let text = |s: Span| &src[s.lo as usize..s.hi as usize];
    assert_eq!(f.body.span.file, FileId(3));
    assert_eq!(text(f.body.span), "let y = x + 1 in (y, y)");
    assert_eq!(text(f.params[0].span), "(x: i32)");
    let ExprKind::Let { pat, value, body } = &f.body.kind else {
        panic!()
    };
    assert_eq!(text(pat.span), "y");
    assert_eq!(text(value.span), "x + 1");
    assert_eq!(text(body.span), "(y, y)");
    let PatKind::Ascribed(_, ty) = &f.params[0].kind else {
        panic!()
    };
    assert_eq!(text(ty.span()), "i32");
}

// ------------------------------------------------------------------ errors

#[test]
fn error_messages_have_location_and_caret() {
    let src = "def f x =\n  let y = (1 + in y";
    let (msg, r) = perr(src);
    assert_eq!(msg, "expected an expression, found `in`");
    assert!(r.contains("test.fut:2:16"), "{r}");
    // The snippet shows the line and underlines the offending token.
    assert!(r.contains("let y = (1 + in y"), "{r}");
    assert!(r.contains("─┬") || r.contains('^'), "{r}");
    assert!(r.contains("expected an expression"), "{r}");

    let (msg, r) = perr("def f = (1, 2");
    assert_eq!(msg, "expected `,` or `)`, found end of file");
    assert!(r.contains("test.fut:1:14"), "{r}");

    let (msg, _) = perr("def f = let x = 1");
    assert_eq!(msg, "expected `in`, found end of file");
    let (msg, _) = perr("def f = if a then b");
    assert_eq!(msg, "expected `else`, found end of file");
    let (msg, _) = perr("def f x");
    assert!(msg.starts_with("expected `=`"), "{msg}");
    let (msg, _) = perr("x = 1");
    assert!(msg.starts_with("expected a declaration"), "{msg}");
    let (msg, r) = perr("def f = 1 $ 2");
    assert_eq!(msg, "unexpected character `$`");
    assert!(r.contains("test.fut:1:11"), "{r}");
    let (msg, _) = perr("def f = \"abc");
    assert_eq!(msg, "unterminated string literal");
}

#[test]
fn unsupported_constructs_are_named() {
    let ns = |src: &str| {
        let (msg, _) = perr(src);
        assert!(msg.starts_with("not supported: "), "{src}: {msg}");
        msg
    };
    assert!(ns("module type s = (p: t) -> u").contains("parametric module types"));
    assert!(ns("module m = \\(p: s) -> p").contains("anonymous parametric modules"));
    assert!(ns("entry (+^) a b = a").contains("entry point named by an operator"));
    assert!(ns("def f = xs with .0 = 1").contains("field updates"));
    assert!(ns("def f = ???").contains("holes"));
}

#[test]
fn sums_and_match() {
    assert_eq!(pe("#foo"), "#foo");
    assert_eq!(pe("#foo 1 (x + y)"), "(#foo 1 (+ x y))");
    assert_eq!(
        pe("match x case #a y -> y case (#b, -1) -> 2 case _ -> 3"),
        "(match x (case (#a y) y) (case (#b, -1) 2) (case _ 3))"
    );
    assert_eq!(pt("#a | #b i32 [n]f64"), "(#a | #b i32 [n]f64)");
    assert_eq!(eerr("match x"), "expected `case`, found end of file");
}

#[test]
fn records() {
    assert_eq!(pe("{a = 1, b}"), "{a = 1, b = b}");
    assert_eq!(pe("{}"), "(tuple )");
    assert_eq!(pe("{0 = x, 1 = y}"), "{0 = x, 1 = y}");
    // `r.a.b` is a qualified name until the type checker sees that `r` is a variable.
    assert_eq!(pe("r.a.b"), "r.a.b");
    assert_eq!(pe("(g x).a.0"), "(app g x).a.0");
    assert_eq!(pe("xs[0].a"), "xs[0].a");
    assert_eq!(pe("(.a.1.b)"), "(.a.1.b)");
    assert_eq!(pe("r with a.b = 1 + 2"), "(with r a.b (+ 1 2))");
    assert_eq!(pe("r with [0] = 1"), "(with r [0] 1)");
    assert_eq!(
        pe("let {a, b = (c, _), d: i32} = r in c"),
        "(let {a = a, b = (c, _), d = (d: i32)} r c)"
    );
    assert_eq!(pt("{b: f32, a: [n]i32}"), "{b: f32, a: [n]i32}");
    assert_eq!(pt("{}"), "()");
    assert_eq!(eerr("{a = 1"), "expected `,` or `}`, found end of file");
    assert_eq!(
        eerr("{0}"),
        "expected `=` after a numbered field, found `}`"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // Run on a thread with a 2 MiB stack (the default for test threads) to be sure.
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let cases = [
                format!(
                    "def f = {}1{}",
                    "(".repeat(1_000_000),
                    ")".repeat(1_000_000)
                ),
                format!("def f = {}1", "- ".repeat(1_000_000)),
                format!("def f = {}1", "! ".repeat(1_000_000)),
                format!("def f = {}", "[".repeat(1_000_000)),
                format!("def f = {}x", "\\x -> ".repeat(1_000_000)),
                format!("def f = {}1", "if a then b else ".repeat(1_000_000)),
                format!("def f = {}1", "f <| ".repeat(1_000_000)),
                format!("def f (x: {}i32) = 1", "(".repeat(1_000_000)),
                format!("def f {} = 1", "(".repeat(1_000_000)),
                format!("def f = #[{}] x", "a(".repeat(1_000_000)),
            ];
            for c in &cases {
                let r = parse_program(c, F);
                let d = r.expect_err("must fail");
                assert!(
                    d.0[0].message.contains("nested too deeply"),
                    "{}",
                    d.0[0].message
                );
            }
            // Long chains build deep trees without recursion: fine up to a bound, then an error
            // (the tree is dropped recursively, so this also checks that dropping is safe).
            let lets: String = (0..1000).map(|i| format!("let x{i} = {i} ")).collect();
            parse_program(&format!("def f = {lets} in 0"), F).unwrap();
            let sum = vec!["1"; 1000].join(" + ");
            parse_program(&format!("def f = {sum}"), F).unwrap();
            let too_deep = [
                format!(
                    "def f = {} in 0",
                    (0..100_000)
                        .map(|i| format!("let x{i} = {i} "))
                        .collect::<String>()
                ),
                format!("def f = {}", vec!["1"; 100_000].join(" + ")),
                format!("def f = {}", vec!["1"; 100_000].join(" `f` ")),
                format!("def f = a{}", "[0]".repeat(100_000)),
                format!("def f = a{}", ".0".repeat(100_000)),
            ];
            for c in &too_deep {
                let d = parse_program(c, F).expect_err("must fail");
                assert!(
                    d.0[0].message.contains("nested too deeply"),
                    "{}",
                    d.0[0].message
                );
            }
            // Moderate nesting parses.
            parse_program(&format!("def f = {}1{}", "(".repeat(40), ")".repeat(40)), F).unwrap();
        })
        .unwrap();
    handle.join().unwrap();
}

// ------------------------------------------------------------------ the Futhark AD corpus

fn corpus_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var("FUTHARK_REF").unwrap_or_else(|_| "/work/futhark-ref".into());
    let dir = std::path::Path::new(&base).join("tests").join("ad");
    dir.is_dir().then_some(dir)
}

#[test]
fn futhark_ad_corpus() {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipping: Futhark reference tests not found (set FUTHARK_REF)");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fut"))
        .collect();
    files.sort();
    let mut ok = 0;
    let mut syntax_errors = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        match parse_program(&src, F) {
            Ok(_) => ok += 1,
            Err(d) => {
                let msg = &d.0[0].message;
                eprintln!("{name}: {}", render(&src, &d).lines().next().unwrap_or(msg));
                if !d.0[0].not_supported {
                    syntax_errors.push(format!("{name}: {}", render(&src, &d)));
                }
            }
        }
    }
    eprintln!("parsed {ok} of {} corpus files", files.len());
    assert!(
        syntax_errors.is_empty(),
        "programs in the subset failed to parse:\n{}",
        syntax_errors.join("\n")
    );
}

// ------------------------------------------------------------------ property tests

mod props {
    use super::*;
    use proptest::prelude::*;

    const VOCAB: &[&str] = &[
        "def",
        "entry",
        "let",
        "in",
        "if",
        "then",
        "else",
        "loop",
        "for",
        "while",
        "do",
        "with",
        "type",
        "type^",
        "assert",
        "x",
        "y",
        "f",
        "xs",
        "f64.sqrt",
        "i32",
        "f32",
        "0",
        "1",
        "2.5",
        "1i64",
        "0xff",
        "(",
        ")",
        "[",
        "]",
        "a[",
        "{",
        "}",
        ",",
        ":",
        ":>",
        "=",
        "->",
        "\\",
        "+",
        "-",
        "*",
        "/",
        "**",
        "==",
        "<",
        "<=",
        "&&",
        "||",
        "|>",
        "<|",
        "!",
        "`f`",
        "`",
        ".",
        ".0",
        "..",
        "...",
        "..<",
        "..>",
        "'t",
        "'^t",
        "[n]",
        "?",
        "#[unsafe]",
        "#[",
        "_",
        "true",
        "--c\n",
        "\n",
        " ",
        "match",
        "module",
        "\"s\"",
        "'c'",
        "#c",
        "???",
        "é",
        "++",
    ];

    const PROGRAMS: &[&str] = &[
        "def f (x: f64) : f64 = f64.sqrt x * 2.0 + 1",
        "entry main [n] (xs: [n]i32) = map (\\x -> x + 1) xs |> reduce (+) 0",
        "def g xs = let ys = xs with [0] = 1 let zs = ys[1:] in loop acc = 0 for i < 10 do acc + zs[i]",
        "type t [n] 'a = ([n]a, i32)\ndef h 'a (p: (i32, a)) = #[unsafe] (p.0, (.1) p, (`f` 2), (2 -))",
        "def r = if 1 ..< 5 == x then [1, 2, 3][0] else -1 : i32",
    ];

    fn tokens() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(VOCAB), 0..40).prop_map(|ts| ts.join(" "))
    }

    fn mutated() -> impl Strategy<Value = String> {
        (
            prop::sample::select(PROGRAMS),
            prop::collection::vec(
                (
                    0u8..4,
                    any::<prop::sample::Index>(),
                    any::<prop::sample::Index>(),
                ),
                1..6,
            ),
        )
            .prop_map(|(prog, muts)| {
                let mut chars: Vec<char> = prog.chars().collect();
                for (kind, a, b) in muts {
                    if chars.is_empty() {
                        break;
                    }
                    let i = a.index(chars.len());
                    let j = b.index(chars.len());
                    match kind {
                        0 => {
                            chars.remove(i);
                        }
                        1 => {
                            let c = chars[i];
                            chars.insert(j, c);
                        }
                        2 => chars.swap(i, j),
                        _ => {
                            let (lo, hi) = (i.min(j), i.max(j));
                            let piece: Vec<char> = chars[lo..hi].to_vec();
                            chars.splice(j..j, piece);
                        }
                    }
                }
                chars.into_iter().collect()
            })
    }

    fn mutated_tokens() -> impl Strategy<Value = String> {
        (
            prop::sample::select(PROGRAMS),
            prop::collection::vec(
                (
                    0u8..3,
                    any::<prop::sample::Index>(),
                    any::<prop::sample::Index>(),
                ),
                1..6,
            ),
        )
            .prop_map(|(prog, muts)| {
                let mut toks: Vec<&str> = prog.split(' ').collect();
                for (kind, a, b) in muts {
                    if toks.is_empty() {
                        break;
                    }
                    let i = a.index(toks.len());
                    let j = b.index(toks.len());
                    match kind {
                        0 => {
                            toks.remove(i);
                        }
                        1 => {
                            let t = toks[i];
                            toks.insert(j, t);
                        }
                        _ => toks.swap(i, j),
                    }
                }
                toks.join(" ")
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn random_token_streams_do_not_panic(s in tokens()) {
            let _ = parse_program(&s, F);
            let _ = parse_program(&format!("def x = {s}"), F);
            let _ = parse_type(&s, F);
            let _ = parse_val_spec(&s, F);
        }

        #[test]
        fn mutated_programs_do_not_panic(s in mutated()) {
            let _ = parse_program(&s, F);
        }

        #[test]
        fn token_mutated_programs_do_not_panic(s in mutated_tokens()) {
            let _ = parse_program(&s, F);
        }

        #[test]
        fn arbitrary_strings_do_not_panic(s in "\\PC{0,60}") {
            let _ = parse_program(&s, F);
        }
    }

    #[test]
    fn seed_programs_parse() {
        for prog in PROGRAMS {
            if let Err(d) = parse_program(prog, F) {
                panic!("{}", render(prog, &d));
            }
        }
    }
}

#[test]
fn qualified_operator_sections() {
    assert_eq!(pe("(f32.*)"), "(section `f32.*`)");
    assert_eq!(
        pe("map2 (f64.+) xs ys"),
        "(app map2 (section `f64.+`) xs ys)"
    );
    assert_eq!(pe("(i32.+ 1)"), "(rsection `i32.+` 1)");
    // Qualified operators in infix position, with their symbol's precedence; any module's
    // operator (whether `m` is a module is decided by `crate::modules`).
    assert_eq!(pe("a i32.+ b i32.* c"), "(`i32.+` a (`i32.*` b c))");
    assert_eq!(pe("f a f64.< g b"), "(`f64.<` (app f a) (app g b))");
    assert_eq!(pe("(x u8.-)"), "(lsection x `u8.-`)");
    assert_eq!(pe("(m.n.+)"), "(section `m.n.+`)");
    assert_eq!(pe("a T.< b + c"), "(`T.<` a (+ b c))");
    assert_eq!(pe("f a T.* b"), "(`T.*` (app f a) b)");
}

#[test]
fn operators_by_leading_characters() {
    // An operator that is not built in is the function of that name, placed by the
    // precedence and associativity of its leading characters (Futhark's rules).
    assert_eq!(pe("a + b <=> c"), "(`<=>` (+ a b) c)");
    assert_eq!(pe("a +^ b *^ c"), "(`+^` a (`*^` b c))");
    assert_eq!(pe("a *^ b +^ c"), "(`+^` (`*^` a b) c)");
    assert_eq!(pe("a +^ b +^ c"), "(`+^` (`+^` a b) c)");
    assert_eq!(pe("a <|^ b <|^ c"), "(`<|^` a (`<|^` b c))");
    assert_eq!(pe("a |>^ b |>^ c"), "(`|>^` (`|>^` a b) c)");
    assert_eq!(pe("a ==^ b &^ c"), "(`==^` a (`&^` b c))");
    assert_eq!(pe("a &&^ b ||^ c"), "(`||^` (`&&^` a b) c)");
    assert_eq!(pe("a <<^ b **^ c"), "(`<<^` a (`**^` b c))");
    assert_eq!(pe("a !^ b + c"), "(`!^` a (+ b c))");
    assert_eq!(pe("(+^)"), "(section `+^`)");
    assert_eq!(pe("(+^ 1)"), "(rsection `+^` 1)");
    assert_eq!(pe("(1 +^)"), "(lsection 1 `+^`)");
    assert!(eerr("a ! b").starts_with("expected an infix operator"));
}

#[test]
fn user_defined_operators() {
    let decs = |src: &str| match parse_program(src, F) {
        Ok(p) => p
            .decs
            .iter()
            .map(|d| match d {
                Dec::Val(v) => format!("{} = {}", v.name, e(&v.body)),
                _ => "type".to_string(),
            })
            .collect::<Vec<_>>(),
        Err(d) => panic!("{src:?} failed to parse:\n{}", render(src, &d)),
    };
    assert_eq!(decs("def (+^) a b = a + b"), ["+^ = (+ a b)"]);
    assert_eq!(decs("def a +^ b = a"), ["+^ = a"]);
    assert_eq!(decs("def (a: i32) +^ (b: i32) : i32 = a"), ["+^ = a"]);
    // A definition of a built-in operator shadows it from there on (not in its own body).
    assert_eq!(
        decs("def f = 1 + 2\ndef (+) a b = a + b\ndef g = 1 + 2"),
        ["f = (+ 1 2)", "+ = (+ a b)", "g = (`+` 1 2)"]
    );
    // Local bindings of operators: patterns, local functions, parameters; only in scope.
    assert_eq!(pe("let (+) = f in 1 + 2"), "(let + f (`+` 1 2))");
    assert_eq!(
        pe("(let (*) a b = a in 1 * 2) * 3"),
        "(* (letfun * a b = a in (`*` 1 2)) 3)"
    );
    assert_eq!(pe("(\\(-) -> 1 - 2) - 3"), "(- (\\- -> (`-` 1 2)) 3)");
    let (msg, _) = perr("def (!) a b = a");
    assert!(msg.contains("prefix operator"), "{msg}");
}

#[test]
fn size_bindings_and_index_sections() {
    assert_eq!(
        pe("let [n] (xs: [n]i32) = ys in n"),
        "(letfun let[1]#16 [n] (xs: [n]i32) = n in (app let[1]#16 ys))"
    );
    let (msg, _) = perr("def f = let [n] xs = ys in n");
    assert_eq!(msg, "size `n` unused in pattern");
    assert_eq!(pe("(.[0])"), "(\\#section -> #section[0])");
    assert_eq!(pe("(.[i, 1:])"), "(\\#section -> #section[i, 1:])");
}

#[test]
fn minus_and_spacing() {
    assert_eq!(pe("x-1"), "(- x 1)");
    assert_eq!(pe("x - -1"), "(- x (neg 1))");
    assert_eq!(pe("a[i]-1"), "(- a[i] 1)");
    assert_eq!(pe("xs[0:n:-1]"), "xs[0:n:(neg 1)]");
    assert_eq!(
        pe("loop x = 0 for i<n-1 do x"),
        "(loop x = 0 for i < (- n 1) do x)"
    );
    assert_eq!(pe("#[unsafe] a[i] + 1"), "(#[unsafe] (+ a[i] 1))");
    assert_eq!(
        pe("tabulate n \\i -> i * 2"),
        "(app tabulate n (\\i -> (* i 2)))"
    );
    assert_eq!(pe("f x |> \\y -> y"), "(|> (app f x) (\\y -> y))");
    // As in Futhark, operator characters run together: `==-` is one operator (a name that the
    // type checker reports unknown unless the program defines it).
    assert_eq!(pe("x==-1"), "(`==-` x 1)");
}

// ------------------------------------------------------------------ size expressions, composition

#[test]
fn size_expressions_in_types() {
    assert_eq!(pt("[n*m]i32"), "[(n * m)]i32");
    assert_eq!(pt("[n+m]f64"), "[(n + m)]f64");
    assert_eq!(pt("[n-1][2*k]f64"), "[(n - 1)][(2 * k)]f64");
    // Precedence as in expressions: n*m+l is (n*m)+l; parentheses group.
    assert_eq!(pt("[n*m+l]i32"), "[((n * m) + l)]i32");
    assert_eq!(pt("[n*(m+l)]i32"), "[(n * (m + l))]i32");
    assert_eq!(pt("[n]i32"), "[n]i32");
    assert_eq!(pt("[3]i32"), "[3]i32");
    // Other expressions are size expressions of their own, also as operands.
    assert_eq!(pt("[n/2]i32"), "[<(/ n 2)>]i32");
    assert_eq!(pt("[f x]i32"), "[<(app f x)>]i32");
    assert_eq!(pt("[opaque 1*b][b]i32"), "[(<(app opaque 1)> * b)][b]i32");
}

#[test]
fn composition_operators() {
    // `>->` and `<-<` are the prelude's composition functions, at the precedence of the
    // comparison operators (left associative): below `+`, above `&&` and `|>`.
    assert_eq!(pe("f >-> g"), "(`>->` f g)");
    assert_eq!(pe("g <-< f"), "(`<-<` g f)");
    assert_eq!(pe("f >-> g >-> h"), "(`>->` (`>->` f g) h)");
    assert_eq!(pe("a + b >-> c"), "(`>->` (+ a b) c)");
    assert_eq!(pe("x |> f >-> g"), "(|> x (`>->` f g))");
    assert_eq!(pe("(>->)"), pe("(>->)"));
    assert!(pe("(>-> g)").contains(">->"));
    assert!(pe("(f >->)").contains(">->"));
}

/// Module-level declarations: `module`, `module type`, functors, `open`, `local`, `import`,
/// specifications and refinements.
#[test]
fn module_declarations() {
    let prog = parse_program(
        r#"
import "lib/github.com/diku-dk/linalg/linalg"
module type field = {
  type t
  type^ f 'a
  type vec [n] = [n]t
  val + : t -> t -> t
  val (*) : t -> t -> t
  val dot [n] 'a : [n]t -> [n]t -> t
  module inner: { val x : i32 }
  include other
}
module mk (T: field) (U: field) : field with t = T.t with vec [n] = [n]T.t = {
  type t = T.t
  def x = T.(a + b)
  def y = a T.+ b
  def z = map (T.* 2) xs
  local open T
}
local module n = mk f64 (g { def x = 1 })
open import "other"
include n
"#,
        F,
    )
    .unwrap_or_else(|e| panic!("{}", render("", &e)));
    assert_eq!(prog.decs.len(), 6);
    let Dec::ModType(ft) = &prog.decs[1] else {
        panic!()
    };
    let SigExp::Specs(specs, _) = &ft.sig else {
        panic!()
    };
    assert_eq!(specs.len(), 8);
    assert!(matches!(&specs[3], Spec::Val { name, .. } if name == "+"));
    assert!(matches!(&specs[4], Spec::Val { name, .. } if name == "*"));
    assert!(
        matches!(&specs[5], Spec::Val { name, type_params, .. } if name == "dot" && type_params.len() == 2)
    );
    assert!(
        matches!(&specs[1], Spec::Type { liftedness: Liftedness::Lifted, params, def: None, .. } if params.len() == 1)
    );
    let Dec::Module(mk) = &prog.decs[2] else {
        panic!()
    };
    assert_eq!(mk.params.len(), 2);
    let Some(SigExp::With(inner, r2, _)) = &mk.sig else {
        panic!()
    };
    assert_eq!(r2.name.name, "vec");
    assert_eq!(r2.params.len(), 1);
    assert!(matches!(inner.as_ref(), SigExp::With(_, r1, _) if r1.name.name == "t"));
    let ModExp::Struct(body, _) = &mk.body else {
        panic!()
    };
    let Dec::Val(y) = &body[2] else { panic!() };
    assert_eq!(e(&y.body), "(`T.+` a b)");
    let Dec::Local(n, _) = &prog.decs[3] else {
        panic!()
    };
    let Dec::Module(n) = n.as_ref() else { panic!() };
    // `mk f64 (g {...})` is `(mk f64) (g {...})`.
    let ModExp::Apply(f, arg, _) = &n.body else {
        panic!()
    };
    assert!(matches!(f.as_ref(), ModExp::Apply(..)));
    assert!(matches!(arg.as_ref(), ModExp::Apply(..)));
    assert!(matches!(&prog.decs[4], Dec::Open(ModExp::Import(p, _), _) if p == "other"));
    assert!(
        matches!(&prog.decs[0], Dec::Import(p, _) if p == "lib/github.com/diku-dk/linalg/linalg")
    );
}
