//! Per-thread arrays in `map` kernels and lavapipe's loop limit (see `codegen::scratch`).
mod common;
use vkad_core::values::parse_values;
use vkad_spirv::error::Error;

fn vals(s: &str) -> Vec<vkad_core::value::Value> {
    parse_values(s.as_bytes()).unwrap()
}

fn lavapipe() -> bool {
    common::ctx().info().name.to_string().contains("llvmpipe")
}

const LOOP: &str = "entry main (xs: []i64) (n: i64) : []i64 =
  map (\\x -> loop acc = x for i < n do (acc + i) % 1000003) xs";

#[test]
fn loop_below_lavapipe_limit_is_right() {
    // lavapipe runs a loop of 65535 iterations completely.
    common::same(LOOP, "main", vals("[1i64, 2i64, 3i64] 65535i64"));
}

#[test]
fn loop_beyond_lavapipe_limit() {
    let args = vals("[1i64, 2i64, 3i64] 65536i64");
    if lavapipe() {
        let e = common::run(LOOP, "main", args).unwrap_err();
        assert!(
            matches!(&e, Error::LoopLimit { .. })
                && e.to_string()
                    .contains("loop exceeded lavapipe's 65535-iteration limit at t.fut:2:"),
            "{e}"
        );
    } else {
        common::same(LOOP, "main", args);
    }
}

const TWO_LOOPS: &str = "entry main (xs: []i64) (n: i64) (m: i64) : []i64 =
  map (\\x -> let a = loop acc = x for i < n do (acc + i) % 1000003
              in loop acc = a for i < m do (acc + i) % 1000003) xs";

/// Every loop exit costs lavapipe's limiter one iteration too.
#[test]
fn two_loops_at_lavapipe_limit() {
    common::same(TWO_LOOPS, "main", vals("[1i64, 2i64] 30000i64 35534i64"));
    let args = vals("[1i64, 2i64] 30000i64 35535i64");
    if lavapipe() {
        let e = common::run(TWO_LOOPS, "main", args).unwrap_err();
        assert!(
            matches!(&e, Error::LoopLimit { .. })
                && e.to_string()
                    .contains("loop exceeded lavapipe's 65535-iteration limit at t.fut:3:"),
            "{e}"
        );
    } else {
        common::same(TWO_LOOPS, "main", args);
    }
}

/// Loops that check no limit of their own (inner folds, copies of per-thread arrays) share
/// lavapipe's limiter with the others: past it the kernel reports the limit (checked at the
/// end of the kernel: a loop that left while its condition still held) instead of returning
/// what the cut loops left behind. Elsewhere the results match the interpreter.
#[test]
fn unchecked_loops_past_the_limit_are_reported() {
    let src = "entry main (xs: []i64) (m: i64) (k: i64) : []i64 =
  map (\\x -> loop s = x for i < m do s + reduce (+) 0 (map (+i) (iota k))) xs
entry cp (xs: []i64) (m: i64) (k: i64) : []i64 =
  map (\\x -> let a = loop a = replicate k x for i < m do map (+i) (copy a) in a[k-1]) xs";
    for entry in ["main", "cp"] {
        for args in ["3i64 10000i64", "3i64 30000i64", "5i64 30000i64"] {
            let a = vals(&format!("[1i64, 2i64] {args}"));
            match common::run(src, entry, a.clone()) {
                Err(e) if lavapipe() => assert!(
                    matches!(&e, Error::LoopLimit { .. })
                        && e.to_string().contains("65535-iteration limit"),
                    "{entry} {args}: {e}"
                ),
                _ => common::same(src, entry, a),
            }
        }
    }
}

/// Per-thread sizes that depend on the data: the host's first guess is too small and the
/// kernel reports what it needs.
#[test]
fn sizes_from_data_grow_scratch() {
    common::same(
        "entry main (ns: []i64) : []i64 =
  map (\\n -> let a = scan (+) 0 (replicate n 1) in a[n - 1] + length (a ++ a)) ns",
        "main",
        vals("[1i64, 300i64, 5000i64, 7i64]"),
    );
}

/// Many threads with large per-thread arrays: fewer threads run at a time.
#[test]
fn many_threads_large_arrays() {
    common::same(
        "entry main (n: i64) (m: i64) : []i64 =
  map (\\i -> let a = scan (+) 0 (map (+i) (iota m)) in a[m - 1]) (iota n)",
        "main",
        vals("3000i64 20000i64"),
    );
}

/// An in-place update of a loop-carried array inside a `map` (reverse-mode AD's checkpoints).
#[test]
fn checkpoints_in_place() {
    common::same(
        "entry main (xs: []f64) (n: i64) : [][]f64 =
  map (\\x -> (loop (y, cs) = (x, replicate n 0.0) for i < n do (y * 1.5, cs with [i] = y)).1) xs",
        "main",
        vals("[1.0, 2.0, 3.0] 100i64"),
    );
}
