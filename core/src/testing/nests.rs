//! Generated programs whose size grows with a depth `n`, for the compile-time tests and the
//! `compile_nests` benchmark (`core/benches/compile_nests.rs`): each is a construct that once
//! made some stage of the compiler exponential in `n` (issue 16, item 6).

/// `vjp` of `n` nested `for` loops around `x * 0.5 + 1`: reverse mode re-executes each loop's
/// body in its return sweep, so the derivative code is quadratic in `n` (each level holds the
/// forward sweeps of the loops inside it), and must not be more.
pub fn loop_nest(n: usize) -> String {
    let mut s = String::from("def f (x: f64) : f64 =\n");
    for i in 0..n {
        s += &format!("{}loop x = x for i{i} < 2 do\n", "  ".repeat(i + 1));
    }
    s += &format!("{}x * 0.5 + 1\n", "  ".repeat(n + 1));
    s += "entry main (x: f64) : f64 = vjp f x 1.0\n";
    s
}

/// `p (p (… (p x)))`, `n` calls of the polymorphic `p x = (x, x)`: the result's type is a
/// tree of `2^n` leaves, but built by sharing, `n` distinct nodes, and the type checker must
/// treat it as such. (The entry point drops the value: its IR would be exponential.)
pub fn pair_nest(n: usize) -> String {
    let mut e = String::from("x");
    for _ in 0..n {
        e = format!("p ({e})");
    }
    format!("def p 't (x: t) : (t, t) = (x, x)\nentry main (x: i32) : i32 = let _ = {e} in x\n")
}

/// `f_i x = f_{i-1} (f_{i-1} x)` for `i` up to `n`, and an entry calling `f_n`: `2^n` calls
/// of `f_0` once inlined. Lowering inlines every call, so past a size budget
/// ([`crate::lower::MAX_LOWERED_NAMES`]) the entry point is rejected as not supported, in
/// time and memory bounded by that budget.
pub fn call_chain(n: usize) -> String {
    let mut s = String::from("def f0 (x: i32) : i32 = x + 1\n");
    for i in 1..=n {
        s += &format!("def f{i} (x: i32) : i32 = f{} (f{} x)\n", i - 1, i - 1);
    }
    s += &format!("entry main (x: i32) : i32 = f{n} x\n");
    s
}
