//! Tests of the elaboration of modules: the flat program it makes (names, resolution, functor
//! copies), imports through an in-memory [`Loader`], and the diagnostics of bad programs.

use std::collections::HashMap;

use super::{FileLoader, Loaded, Loader};
use crate::syntax::ast::{Dec, Expr, ExprKind};
use crate::value::Value;
use crate::values::parse_values;

/// Files in memory, found as [`FileLoader`] would find them on disk.
struct MemLoader(HashMap<String, String>);

impl MemLoader {
    fn new(files: &[(&str, &str)]) -> MemLoader {
        MemLoader(
            files
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
        )
    }
}

impl Loader for MemLoader {
    fn load(&mut self, importer: &str, path: &str) -> Result<Loaded, String> {
        let name = FileLoader::resolve(importer, path).display().to_string();
        let text = self.0.get(&name).ok_or(format!("no file {name}"))?.clone();
        Ok(Loaded {
            key: name.clone(),
            name,
            text,
        })
    }
}

/// The rendered error of checking `src` (as `main.fut`) with `files` importable.
fn error_with(files: &[(&str, &str)], src: &str) -> String {
    match crate::check_with("main.fut", src, &mut MemLoader::new(files)) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e.render(),
    }
}

fn error(src: &str) -> String {
    error_with(&[], src)
}

/// Asserts that the error for `src` mentions `needle` at `main.fut:line:col`.
fn expect_error(src: &str, line: u32, col: u32, needle: &str) {
    let out = error(src);
    assert!(out.contains(needle), "expected {needle:?} in:\n{out}");
    assert!(
        out.contains(&format!("main.fut:{line}:{col}")),
        "expected main.fut:{line}:{col} in:\n{out}"
    );
}

/// The names of the user's declarations (after the prelude's) in the flat program.
fn flat_names(files: &[(&str, &str)], src: &str) -> Vec<String> {
    let c = crate::check_with("main.fut", src, &mut MemLoader::new(files))
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let prelude = crate::diag::FileId(0);
    c.ast
        .decs
        .iter()
        .filter(|d| d.span().file != prelude)
        .map(|d| match d {
            Dec::Val(v) => v.name.clone(),
            Dec::Type(t) => format!("type {}", t.name),
            _ => panic!("a module declaration is left in the flat program"),
        })
        .collect()
}

/// Runs `entry` of `src` on `args` (Futhark value syntax) and returns the results.
fn run(files: &[(&str, &str)], src: &str, entry: &str, args: &str) -> Vec<Value> {
    let c = crate::compile_with("main.fut", src, &mut MemLoader::new(files))
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let args = parse_values(args.as_bytes()).expect("arguments");
    c.run_interp(entry, args).unwrap_or_else(|e| panic!("{e}"))
}

fn vals(s: &str) -> Vec<Value> {
    parse_values(s.as_bytes()).expect("values")
}

/// The body of user declaration `name` in the flat program.
fn body_of(src: &str, name: &str) -> Expr {
    let c = crate::check("main.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    c.ast
        .decs
        .into_iter()
        .find_map(|d| match d {
            Dec::Val(v) if v.name == name => Some(v.body),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no declaration {name}"))
}

#[test]
fn definitions_get_path_names_and_entries_keep_theirs() {
    let src = "module m = { type t = i32 def x : t = 1 module n = { def y = x } }\n\
               def x = m.n.y\n\
               def x = 2\n\
               entry main (a: i32) = a + x";
    assert_eq!(
        flat_names(&[], src),
        ["type m.t", "m.x", "m.n.y", "x", "x#2", "main"]
    );
}

#[test]
fn a_functor_is_copied_at_each_application() {
    let src = "module type num = { type t val + : t -> t -> t val i64 : i64 -> t }\n\
               module mk (T: num) = { def one : T.t = T.i64 1 def two = one T.+ one }\n\
               module a = mk f64\n\
               module b = mk i32\n\
               entry main = (a.two, b.two)";
    assert_eq!(
        flat_names(&[], src),
        ["a.one", "a.two", "b.one", "b.two", "main"]
    );
    assert_eq!(run(&[], src, "main", ""), vals("2.0 2i32"));
}

#[test]
fn numeric_module_members_become_the_builtins() {
    // `T.sqrt` is `f64.sqrt`, `T.(e)` is `f64.(e)`, `T.t` is `f64`.
    let src = "module type r = { type t val sqrt : t -> t val i64 : i64 -> t }\n\
               module mk (T: r) = { def f (x: T.t) : T.t = T.sqrt x def g (x: T.t) = T.(x * i64 2) }\n\
               module m = mk f64\n\
               entry main (x: f64) = (m.f x, m.g x)";
    let ExprKind::Apply(f, _) = body_of(src, "m.f").kind else {
        panic!("m.f's body is not an application")
    };
    assert!(matches!(&f.kind, ExprKind::Var(q) if q.to_string() == "f64.sqrt"));
    assert!(
        matches!(body_of(src, "m.g").kind, ExprKind::LocalOpen(q, _) if q.to_string() == "f64")
    );
    assert_eq!(run(&[], src, "main", "9.0"), vals("3.0 18.0"));
}

#[test]
fn scoping_locals_opens_and_shadowing() {
    let src = "module m = { def a : i32 = 1 def b : i32 = 2 }\n\
               def b : i32 = 10\n\
               entry main (a: i32) : (i32, i32, i32, i32) =\n\
                 ( m.(a + b)\n\
                 , a + b\n\
                 , m.(let b = 100 in a + b)\n\
                 , (\\(m: i32) -> m + 1) 5 )";
    // Inside `m.(...)` the module's `a` hides the parameter; outside the parameter hides
    // nothing but is used; a `let` inside the open hides the module's `b`; a local value named
    // like a module is a value.
    assert_eq!(
        run(&[], src, "main", "1000"),
        vals("3i32 1010i32 101i32 6i32")
    );
}

#[test]
fn ascription_hides_what_the_module_type_does_not_name() {
    let src = "module m : { val x : i32 } = { def x : i32 = 1 def y : i32 = 2 }\n\
               def main = m.y";
    expect_error(src, 2, 12, "module `m` has no member `y`");
    let src = "module m : { val x : i32 val z : i32 } = { def x : i32 = 1 }";
    expect_error(
        src,
        1,
        12,
        "module `m` does not match its module type: it has no value `z`",
    );
}

#[test]
fn refinements_resolve() {
    let ok = "module type s = { type t val x : t }\n\
              module m : s with t = i32 = { type t = i32 def x : t = 1 }\n\
              entry main (y: m.t) : i32 = y + m.x";
    assert_eq!(run(&[], ok, "main", "2"), vals("3i32"));
    // A refinement inside a module type may name the module type's own types.
    let ok = "module type s = { type t type u }\n\
              module type s2 = { type t include s with t = t }\n\
              module m : s2 = { type t = i32 type u = bool }\n\
              entry main (x: m.t) : i32 = x";
    assert_eq!(run(&[], ok, "main", "2"), vals("2i32"));
    expect_error(
        "module type s = { type t }\nmodule m : s with t = nope = { type t = i32 }",
        2,
        23,
        "unknown type `nope`",
    );
    expect_error(
        "module type s = { type t }\nmodule m : s with u = i32 = { type t = i32 }",
        2,
        14,
        "no type `u` to refine",
    );
    expect_error(
        "module type s = { type t }\nmodule m : s with t = q.t = { type t = i32 }",
        2,
        23,
        "unknown module `q`",
    );
}

#[test]
fn functor_errors() {
    let sig = "module type s = { type t val f : t -> t }\n";
    // A missing specified member.
    expect_error(
        &format!("{sig}module F (P: s) = {{ def g = P.f }}\nmodule m = F {{ type t = i32 }}"),
        3,
        12,
        "the argument for parameter `P` of `F` does not match its module type: it has no value `f`",
    );
    // The numeric modules lack what they lack.
    expect_error(
        &format!("{sig}module F (P: s) = {{ def g = P.f }}\nmodule m = F f64"),
        3,
        12,
        "it has no value `f`",
    );
    // Too many arguments.
    expect_error(
        &format!("{sig}module F (P: s) = {{ def g = P.f }}\nmodule a = {{ type t = i32 def f (x: i32) = x }}\nmodule m = F a a"),
        4,
        12,
        "not parametric",
    );
    // Too few, noticed at the use.
    expect_error(
        &format!("{sig}module F (P: s) (Q: s) = {{ def g = P.f }}\nmodule a = {{ type t = i32 def f (x: i32) = x }}\nmodule m = F a\ndef x = m.g"),
        5,
        9,
        "must be applied to 1 more argument",
    );
    // A functor's parameter is not visible outside, nor the functor's members before it is
    // applied.
    expect_error(
        &format!("{sig}module F (P: s) = {{ def g = P.f }}\ndef x = F.g"),
        3,
        9,
        "parametric module",
    );
}

#[test]
fn name_errors() {
    expect_error("def x = nomod.y", 1, 9, "unknown module `nomod`");
    expect_error(
        "module m = { def a = 1 }\ndef x = m.b",
        2,
        9,
        "module `m` has no member `b`",
    );
    expect_error(
        "module m = { }\ndef x : m.t = 1",
        2,
        9,
        "module `m` has no type `t`",
    );
    expect_error(
        "module m = { }\ndef x = m.n.y",
        2,
        9,
        "module `m` has no module `n`",
    );
    expect_error("def v = 1\nopen v", 2, 6, "`v` is a value, not a module");
    expect_error("open nothere", 1, 6, "unknown module `nothere`");
    expect_error(
        "module F (P: { }) = { }\nopen F",
        2,
        1,
        "cannot open a parametric module",
    );
    expect_error("module m = F f64", 1, 12, "unknown module `F`");
    expect_error(
        "module m : nosig = { }",
        1,
        12,
        "unknown module type `nosig`",
    );
    expect_error(
        "def f (r: i32) = r.(x)",
        1,
        18,
        "`r` is a value, not a module",
    );
    expect_error(
        "module m = { entry e (x: i32) = x }",
        1,
        20,
        "entry points must be declared at the top level",
    );
    expect_error(
        "def x = intrinsics.opaque 1",
        1,
        9,
        "not supported: `intrinsics.opaque` of the `intrinsics` module",
    );
    // Recursion through a module member is still recursion.
    let out = error("module m = { def f (x: i32) : i32 = f x }");
    assert!(out.contains("recursion"), "{out}");
}

#[test]
fn a_constant_is_not_in_scope_in_its_own_definition() {
    // As in Futhark: only functions (with parameters) see themselves.
    let src = "def k : i32 = 5
               module m = { def k = k + 1 def copy = copy }
               entry main = (m.k, m.copy [1i32])";
    assert_eq!(run(&[], src, "main", ""), vals("6i32 [1i32]"));
}

#[test]
fn imports_load_each_file_once_and_hide_local_names() {
    let files = [
        (
            "lib/util.fut",
            "def sq (x: i32) : i32 = x * x\nlocal def hidden : i32 = 7\ndef seven = hidden",
        ),
        (
            "lib/geo.fut",
            "import \"util\"\ndef quad (x: i32) = sq (sq x)",
        ),
    ];
    let src =
        "import \"lib/geo\"\nimport \"lib/util\"\nentry main (x: i32) = (quad x, sq x, seven)";
    assert_eq!(
        flat_names(&files, src),
        ["sq", "hidden", "seven", "quad", "main"]
    );
    assert_eq!(run(&files, src, "main", "2"), vals("16i32 4i32 7i32"));
    // `local` names and what an imported file imports are not visible.
    let out = error_with(&files, "import \"lib/util\"\ndef x = hidden");
    assert!(out.contains("unknown name `hidden`"), "{out}");
    let out = error_with(&files, "import \"lib/geo\"\ndef x = sq 1");
    assert!(out.contains("unknown name `sq`"), "{out}");
    // An import as a module expression.
    let src = "module u = import \"lib/util\"\nentry main (x: i32) = u.sq x";
    assert_eq!(run(&files, src, "main", "3"), vals("9i32"));
}

#[test]
fn import_errors() {
    let out = error_with(&[], "def a = 1\nimport \"missing/file\"");
    assert!(
        out.contains("cannot import \"missing/file\": no file missing/file.fut"),
        "{out}"
    );
    assert!(out.contains("main.fut:2:1"), "{out}");
    // Errors inside an imported file point into it.
    let files = [("bad.fut", "def x : i32 = 1\ndef y = x.z")];
    let out = error_with(&files, "import \"bad\"");
    assert!(out.contains("bad.fut:2:9"), "{out}");
    // Cycles are errors with the chain.
    let files = [
        ("a.fut", "import \"b\"\ndef a = 1"),
        ("b.fut", "import \"a\"\ndef b = 1"),
    ];
    let out = error_with(&files, "import \"a\"");
    assert!(
        out.contains("cyclic import: a.fut imports b.fut imports a.fut"),
        "{out}"
    );
    assert!(out.contains("b.fut:1:1"), "{out}");
    let files = [("a.fut", "import \"main\""), ("main.fut", "import \"a\"")];
    let out = error_with(&files, "import \"a\"");
    assert!(
        out.contains("cyclic import: main.fut imports a.fut imports main.fut"),
        "{out}"
    );
    // Text without a file cannot import.
    let out = match crate::check("text.fut", "import \"x\"") {
        Ok(_) => panic!("imported without a file"),
        Err(e) => e.render(),
    };
    assert!(out.contains("given as text"), "{out}");
}

#[test]
fn prelude_module_types_match_the_numeric_modules() {
    let src = "module id_real (T: real) = { def f (x: T.t) = T.(sqrt x + pi) }\n\
               module id_float (T: float) = { def f (x: T.t) = T.to_bits x }\n\
               module id_int (T: integral) = { def f (x: T.t) = T.(x // i64 2) }\n\
               module a = id_real f64\n\
               module b = id_real f32\n\
               module c = id_float f16\n\
               module d = id_int u8\n\
               module e = id_int i64\n\
               entry main = (a.f 0, b.f 0, c.f 1, d.f 9, e.f (-9))";
    assert_eq!(
        run(&[], src, "main", ""),
        vals("3.141592653589793f64 3.1415927f32 15360u16 4u8 -4i64")
    );
    let out = error("module id_int (T: integral) = { }\nmodule m = id_int f64");
    assert!(out.contains("it has no value `//`"), "{out}");
}

#[test]
fn bad_module_programs_do_not_panic() {
    for src in [
        "module",
        "module m",
        "module m =",
        "module m = {",
        "module type",
        "module type s = {",
        "module type s = { val }",
        "module type s = { val x }",
        "module F (P",
        "module F (P: ) = {}",
        "open",
        "local",
        "local local",
        "import",
        "import x",
        "module m = F (",
        "module type s = { type t } with",
        "module m : s with t = = {}",
        "def x = M.(",
        "def x = a T.",
        "def x = (T.+",
        "module m = { module n = m }",
        "module F (P: {}) = F P",
        "module m = import \"\"",
    ] {
        let _ = crate::check("bad.fut", src);
        let _ = crate::check_with("bad.fut", src, &mut MemLoader::new(&[]));
    }
}

#[test]
fn the_intrinsics_accumulators_are_reachable_unless_shadowed() {
    // Futhark's `intrinsics.acc` and its functions, as Futhark's tests/accs/intrinsics.fut uses
    // them.
    let ok = "type~ acc 't = intrinsics.acc t\n\
              def f (xs: *[3]i32) = intrinsics.scatter_stream xs \
              (\\(a: *acc ([3]i32)) (i: i64) -> intrinsics.acc_write a i 1) (iota 2)";
    if let Err(e) = crate::check_with("main.fut", ok, &mut MemLoader::new(&[])) {
        panic!("{}", e.render());
    }
    // A module of the program named `intrinsics` is an ordinary module.
    let shadow = "module intrinsics = { def acc_write (x: i32) = x + 1 }\n\
                  def y = intrinsics.acc_write 1";
    if let Err(e) = crate::check_with("main.fut", shadow, &mut MemLoader::new(&[])) {
        panic!("{}", e.render());
    }
    expect_error(
        "def f (a: intrinsics.acc i32 f32) = 0",
        1,
        11,
        "`intrinsics.acc` takes one type argument",
    );
    // The value written must have the accumulator's element type.
    let out = error(
        "def f (xs: *[3]i32) = intrinsics.scatter_stream xs \
         (\\a (i: i64) -> intrinsics.acc_write a i 1.5f32) (iota 2)",
    );
    assert!(out.contains("f32") && out.contains("i32"), "{out}");
}
