//! Bad programs give errors with file:line:col, a caret snippet and a clear message; none panics.

fn error_of(src: &str) -> String {
    match vkad_core::check("bad.fut", src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e.render(),
    }
}

/// Asserts the rendered error points at `line:col` with a caret and mentions `needle`.
fn expect_error(src: &str, line: u32, col: u32, needle: &str) {
    let out = error_of(src);
    assert!(
        out.contains(&format!("bad.fut:{line}:{col}")),
        "wrong location in:\n{out}"
    );
    assert!(out.contains('^'), "no caret in:\n{out}");
    assert!(out.contains(needle), "expected {needle:?} in:\n{out}");
}

#[test]
fn parse_error_points_at_the_token() {
    expect_error(
        "def main (x: i32) =\n  let y = (x + in y\n",
        2,
        16,
        "expected",
    );
}

#[test]
fn unclosed_bracket() {
    expect_error("def main = [1, 2", 1, 17, "expected");
}

#[test]
fn type_mismatch() {
    expect_error("def main (x: f32): i32 = x", 1, 26, "f32");
}

#[test]
fn unknown_name() {
    expect_error("def main (x: i32) = x + y", 1, 25, "`y`");
}

#[test]
fn recursion_is_rejected() {
    let out = error_of("def f (x: i32): i32 = if x == 0 then 0 else f (x - 1)");
    assert!(out.contains("recursion"), "{out}");
}

#[test]
fn module_errors_have_locations() {
    expect_error(
        "module m = { def x = 1 }\ndef main = m.y",
        2,
        12,
        "module `m` has no member `y`",
    );
    expect_error("def main = q.y", 1, 12, "unknown module `q`");
    expect_error(
        "import \"nothere\"\ndef main = 1",
        1,
        1,
        "cannot import \"nothere\"",
    );
}

#[test]
fn typed_holes_are_not_supported() {
    expect_error(
        "def main (x: i32) = ???",
        1,
        21,
        "not supported: typed holes",
    );
}

#[test]
fn garbage_does_not_panic() {
    for src in [
        "",
        ")",
        "def",
        "def main =",
        "entry",
        "let let let",
        "def f = \\",
        "[[[[[[",
        "def x = 1 +",
        "\u{0}\u{ffff}",
    ] {
        let _ = vkad_core::check("bad.fut", src);
    }
}
