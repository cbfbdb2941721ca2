//! Test helpers shared by the passes' tests: a rewrite checked against the interpreter.

use super::traverse::nested_bodies;
use crate::ir::check::check_program;
use crate::ir::*;
use crate::testing::compare_values;

/// Compiles `src`, applies `pass` to its IR and checks that the result is valid IR and that
/// `entry` gives the same results on `args` (Futhark values) before and after. Returns the IR
/// before and after, for the caller's own assertions on the rewrite.
pub fn rewrite_and_compare(
    src: &str,
    entry: &str,
    args: &str,
    pass: impl FnOnce(Program) -> Program,
) -> (Program, Program) {
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = pass(c.ir.clone());
    check_program(&p).unwrap_or_else(|e| panic!("invalid IR: {e:?}"));
    let args = crate::values::parse_values(args.as_bytes()).expect("values");
    let want = crate::interp::run_entry(&c.ir, entry, args.clone()).expect("before");
    let got = crate::interp::run_entry(&p, entry, args.clone()).expect("after");
    let ms = compare_values(&got, &want);
    assert!(ms.is_empty(), "{entry} {args:?}: {ms:?}");
    (c.ir, p)
}

/// The statements of `p` (nested ones included) whose expression satisfies `f`.
pub fn count_exps(p: &Program, f: &dyn Fn(&Exp) -> bool) -> usize {
    fn body(b: &Body, f: &dyn Fn(&Exp) -> bool) -> usize {
        b.stms
            .iter()
            .map(|s| {
                let mut e = s.exp.clone();
                usize::from(f(&s.exp))
                    + nested_bodies(&mut e)
                        .into_iter()
                        .map(|b| body(b, f))
                        .sum::<usize>()
            })
            .sum()
    }
    p.funs.iter().map(|fd| body(&fd.body, f)).sum()
}
