//! Worked cases of fusion compiled from source, checked on the interpreter, and every test
//! program run with fusion applied.

use super::*;
use crate::ir::check::check_program;
use crate::passes::differential::{count_exps, rewrite_and_compare};
use crate::testing::{run_paths, Backend, InterpBackend};
use crate::value::Value;
use crate::{CompileError, Compiled};
use std::path::PathBuf;
use std::sync::Mutex;

/// The `map` SOACs of `p`, nested ones included.
fn maps(p: &Program) -> usize {
    count_exps(p, &|e| matches!(e, Exp::Soac(Soac::Map { .. })))
}

/// The patterns of the `map` statements of `p`, nested ones included.
fn map_pats(p: &Program) -> Vec<Vec<VName>> {
    fn body(b: &Body, out: &mut Vec<Vec<VName>>) {
        for s in &b.stms {
            if matches!(s.exp, Exp::Soac(Soac::Map { .. })) {
                out.push(s.pat.elems.iter().map(|e| e.name.clone()).collect());
            }
            let mut e = s.exp.clone();
            for nb in crate::passes::traverse::nested_bodies(&mut e) {
                body(nb, out);
            }
        }
    }
    let mut out = Vec::new();
    p.funs.iter().for_each(|f| body(&f.body, &mut out));
    out
}

/// Compiles `src`, fuses, checks the IR and the results of `entry` on `args`; returns the
/// numbers of maps before and after.
fn fused(src: &str, entry: &str, args: &str) -> (usize, usize, Program) {
    let (before, after) = rewrite_and_compare(src, entry, args, fuse);
    (maps(&before), maps(&after), after)
}

#[test]
fn map_of_map_is_one_map() {
    let src = "entry main [n] (xs: [n]f64) : [n]f64 = map (+1) (map (*2) xs)";
    let (b, a, _) = fused(src, "main", "[1.0, 2.5, -3.0]");
    assert_eq!((b, a), (2, 1));
}

#[test]
fn chains_and_zips_fuse_into_one_map() {
    let src = "entry main [n] (xs: [n]f64) (ys: [n]f64) : [n]f64 =
  let a = map (\\x -> x * 2) xs
  let b = map2 (+) a ys
  let c = map (\\y -> f64.sin y) ys
  in map2 (*) b c";
    let (b, a, _) = fused(src, "main", "[1.0, 2.5, -3.0] [0.5, 0.25, 4.0]");
    assert_eq!((b, a), (4, 1));
}

#[test]
fn independent_maps_fuse_horizontally() {
    let src = "entry main [n] (xs: [n]f64) : ([n]f64, [n]f64) = (map (+1) xs, map (*2) xs)";
    let (b, a, q) = fused(src, "main", "[1.0, 2.5, -3.0]");
    assert_eq!((b, a), (2, 1));
    // One input: the second map reads xs through the first one's param.
    let Some(Exp::Soac(Soac::Map { arrs, .. })) = q
        .entry("main")
        .unwrap()
        .body
        .stms
        .iter()
        .map(|s| &s.exp)
        .find(|e| matches!(e, Exp::Soac(Soac::Map { .. })))
    else {
        panic!("no map")
    };
    assert_eq!(arrs.len(), 1);
}

#[test]
fn a_producer_used_twice_returns_its_array() {
    let src = "entry main [n] (xs: [n]f64) : ([n]f64, f64) =
  let ys = map (*2) xs
  let zs = map (+1) ys
  in (zs, reduce (+) 0 ys)";
    let (b, a, q) = fused(src, "main", "[1.0, 2.5, -3.0]");
    assert_eq!((b, a), (2, 1));
    assert_eq!(
        map_pats(&q).iter().map(|p| p.len()).collect::<Vec<_>>(),
        [2]
    );
}

#[test]
fn a_producer_used_in_between_fuses_at_its_place() {
    // The reduce between uses ys: the consumer moves up to the producer.
    let src = "entry main [n] (xs: [n]f64) (k: f64) : [n]f64 =
  let ys = map (*2) xs
  let s = reduce (+) 0 ys
  in map (\\y -> y + k) ys |> map (\\z -> z * s)";
    let (b, a, _) = fused(src, "main", "[1.0, 2.5, -3.0] 2.0");
    assert_eq!((b, a), (3, 2));
}

/// `xs` is fresh (a copy), so its update is in place: the producer's computation cannot move
/// after it, and the consumer, which reads the updated array, cannot move before it.
const UPDATE_BETWEEN: &str = "entry main [n] (input: [n]f64) (ys: [n]f64) : ([n]f64, [n]f64) =
  let xs = copy input
  let a = map (*2) xs
  let xs' = xs with [0] = 5
  let s = xs'[1]
  in (map2 (+) a xs', map (+s) ys)";

#[test]
fn no_fusion_across_an_in_place_update_of_an_input() {
    let (b, a, q) = fused(UPDATE_BETWEEN, "main", "[1.0, 2.5, -3.0] [0.5, 1.0, 2.0]");
    let text = q.to_string();
    assert!(text.contains("with [0i64]"), "{text}");
    // Neither the producer into its consumer nor, horizontally, the producer with the map
    // over ys (which needs s, computed after the update).
    assert_eq!((b, a), (3, 2), "{text}");
}

#[test]
fn no_horizontal_move_across_an_in_place_update_of_an_input() {
    // The map over xs cannot move after the update of xs, and the map over ys, which needs
    // s, cannot move before it.
    let src = "entry main [n] (input: [n]f64) (ys: [n]f64) : ([n]f64, [n]f64, [n]f64) =
  let xs = copy input
  let a = map (*2) xs
  let xs' = xs with [0] = 5
  let s = xs'[1]
  in (a, map (+s) ys, xs')";
    let (b, a, _) = fused(src, "main", "[1.0, 2.5, -3.0] [0.5, 1.0, 2.0]");
    assert_eq!((b, a), (2, 2));
}

/// `map (\\r -> r[0]) xss` and `map (\\r -> r with [1] = 0) xss`, the second updating its
/// rows in place (the lowering copies them; the copy is removed by hand here).
fn reader_and_updater() -> Program {
    let src = "entry main [n] (xss: [n][2]f64) : ([n]f64, [n][2]f64) =
  let xss = copy xss
  in (map (\\r -> r[0]) xss, map (\\r -> copy r with [1] = 0) xss)";
    let mut p = crate::compile("t.fut", src).unwrap().ir;
    let mut n = 0;
    crate::passes::traverse::map_bodies(&mut p, &mut |b: &mut Body| {
        let copies: HashMap<VName, VName> = b
            .stms
            .iter()
            .filter_map(|s| match (&s.exp, &s.pat.elems[..]) {
                (Exp::Copy(a), [r]) => Some((r.name.clone(), a.clone())),
                _ => None,
            })
            .collect();
        for s in &mut b.stms {
            if let Exp::Update(a, ..) = &mut s.exp {
                if let Some(src) = copies.get(a) {
                    *a = src.clone();
                    n += 1;
                }
            }
        }
    });
    assert_eq!(n, 1, "{p}");
    check_program(&p).expect("valid IR");
    p
}

#[test]
fn no_horizontal_fusion_when_one_consumes_what_the_other_reads() {
    let p = reader_and_updater();
    assert_eq!(maps(&p), 2);
    let q = fuse(p);
    check_program(&q).expect("valid IR");
    assert_eq!(maps(&q), 2, "{q}");
}

#[test]
fn maps_of_different_widths_do_not_fuse() {
    let src = "entry main [n][m] (xs: [n]f64) (ys: [m]f64) : ([n]f64, [m]f64) =
  (map (+1) xs, map (*2) ys)";
    let (b, a, _) = fused(src, "main", "[1.0, 2.5, -3.0] [1.0]");
    assert_eq!((b, a), (2, 2));
}

#[test]
fn widths_proven_equal_by_a_size_check_fuse() {
    let src = "entry main [n][m] (xs: [n]f64) (ys: [m]f64) : ([n]f64, [m]f64) =
  let ys' = ys :> [n]f64
  in (map (+1) xs, map (*2) ys)";
    let (b, a, _) = fused(src, "main", "[1.0, 2.5, -3.0] [1.0, 2.0, 3.0]");
    assert_eq!((b, a), (2, 1));
}

#[test]
fn nested_maps_fuse_inside_the_outer_lambda() {
    let src = "entry main [n][m] (xss: [n][m]f64) : [n][m]f64 =
  map (\\xs -> map (+1) (map (*2) xs)) xss";
    let (b, a, _) = fused(src, "main", "[[1.0, 2.0], [3.0, 4.0]]");
    assert_eq!((b, a), (3, 2));
}

#[test]
fn nested_producers_fuse_after_their_outer_maps_do() {
    // Once the outer maps fuse, their inner maps are in one lambda and fuse too.
    let src = "entry main [n][m] (xss: [n][m]f64) : [n][m]f64 =
  let yss = map (\\xs -> map (*2) xs) xss
  in map (\\ys -> map (+1) ys) yss";
    let (b, a, _) = fused(src, "main", "[[1.0, 2.0], [3.0, 4.0]]");
    assert_eq!((b, a), (4, 2));
}

#[test]
fn a_replicated_input_becomes_a_scalar_and_the_maps_fuse() {
    // The replicate is bound after the reduce that uses ys: only once it is gone can the
    // consumer move up to the producer.
    let src = "entry main [n] (xs: [n]f64) : (f64, [n]f64) =
  let ys = map (*2) xs
  let s = reduce (+) 0 ys
  in (s, map2 (*) ys (replicate n 3.0))";
    let (b, a, q) = fused(src, "main", "[1.0, 2.5, -3.0]");
    assert_eq!((b, a), (2, 1), "{q}");
}

/// `vjp` of `sum (map (^2) (map sin xs))`: the primal map and the two adjoint maps.
const VJP_SIN_SQ: &str =
    "def f [n] (xs: [n]f64) : f64 = reduce (+) 0 (map (\\x -> x * x) (map f64.sin xs))
entry main [n] (xs: [n]f64) = vjp f xs 1.0";

#[test]
fn the_maps_of_a_vjp_fuse() {
    let (b, a, _) = fused(VJP_SIN_SQ, "main", "[1.0, 2.5, -3.0]");
    assert_eq!((b, a), (3, 1));
}

/// The vjp of the entry `main`, differentiated and simplified, before the accumulator passes
/// (which fuse into accumulator-updating maps themselves, with [`crate::passes::fuse_acc`]).
fn differentiated(src: &str) -> Program {
    let c = crate::check("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let lowered = crate::lower::lower_program(&c.ast, &c.sources);
    let p = crate::passes::simplify(crate::passes::hoist::hoist(crate::passes::simplify(
        lowered.program,
    )));
    let (p, failures) = crate::ad::transform::transform_partial(p);
    assert!(failures.is_empty());
    crate::passes::simplify(p)
}

/// Inputs of accumulator-taking maps that a map of the same body produces.
fn acc_map_inputs_from_maps(p: &Program) -> usize {
    let mut n = 0;
    crate::passes::traverse::map_bodies(&mut p.clone(), &mut |b: &mut Body| {
        for (j, s) in b.stms.iter().enumerate() {
            if let Exp::Soac(Soac::Map { arrs, lam, .. }) = &s.exp {
                if lam.params.iter().any(is_acc) {
                    n += arrs
                        .iter()
                        .filter(|a| {
                            b.stms[..j].iter().any(|t| {
                                matches!(t.exp, Exp::Soac(Soac::Map { .. }))
                                    && t.pat.elems.iter().any(|e| &e.name == *a)
                            })
                        })
                        .count();
                }
            }
        }
    });
    n
}

/// Matrix multiplication: its vjp adds adjoint contributions computed by maps into
/// accumulators with other maps.
const MATMUL: &str = "def matmul [n][m][p] (a: [n][m]f64) (b: [m][p]f64) : [n][p]f64 =
  map (\\xs -> map (\\ys -> reduce (+) 0 (map2 (*) xs ys)) (transpose b)) a
entry main [n][m][p] (a: [n][m]f64) (b: [m][p]f64) (c: [n][p]f64) =
  vjp (\\(a, b) -> matmul a b) (a, b) c";

#[test]
fn producers_fuse_into_accumulator_updating_maps() {
    let src = MATMUL;
    let p = differentiated(src);
    assert!(acc_map_inputs_from_maps(&p) > 0, "{p}");
    let q = fuse(p.clone());
    check_program(&q).expect("valid IR");
    assert_eq!(acc_map_inputs_from_maps(&q), 0, "{q}");
    assert!(maps(&q) < maps(&p));
    let args = || {
        crate::values::parse_values(
            "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [[1.0], [-1.0], [2.0]] [[1.0], [2.0]]".as_bytes(),
        )
        .expect("values")
    };
    assert_eq!(
        crate::interp::run_entry(&p, "main", args()).expect("run"),
        crate::interp::run_entry(&q, "main", args()).expect("run")
    );
}

/// Maps before and after fusion in the AD programs (printed with `--nocapture`); fusion must
/// remove some in each.
#[test]
fn ad_programs_have_fewer_maps() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    for f in [
        "examples/gradient.fut",
        "tests/programs/ad_rules_vjp.fut",
        "tests/programs/rev_free_ops.fut",
        "tests/programs/rev_hist.fut",
        "tests/programs/rev_loop.fut",
        "tests/programs/rev_reduce.fut",
        "tests/programs/rev_scan.fut",
        "tests/programs/rev_scatter.fut",
        "tests/programs/vk_acc_kernel.fut",
    ] {
        let src = std::fs::read_to_string(root.join(f)).expect("source");
        let c = crate::compile(f, &src).unwrap_or_else(|e| panic!("{}", e.render()));
        let q = fuse(c.ir.clone());
        check_program(&q).unwrap_or_else(|e| panic!("{f}: {e}"));
        println!("{f}: {} -> {} maps", maps(&c.ir), maps(&q));
        assert!(maps(&q) < maps(&c.ir), "{f}");
    }
}

/// The reference interpreter on the program with [`fuse`] applied after [`crate::compile`];
/// records the programs whose fused IR does not check, and the maps before and after.
#[derive(Default)]
struct Fused {
    invalid: Mutex<Vec<String>>,
    counts: Mutex<Vec<(String, usize, usize)>>,
}

impl Backend for Fused {
    fn name(&self) -> &str {
        "interp"
    }
    fn run(&self, c: &Compiled, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, String> {
        InterpBackend.run(c, entry, args)
    }
    fn compile(&self, name: &str, text: &str) -> Result<Compiled, CompileError> {
        let mut c = crate::compile(name, text)?;
        let before = maps(&c.ir);
        c.ir = fuse(c.ir);
        if let Err(e) = check_program(&c.ir) {
            self.invalid.lock().unwrap().push(format!("{name}: {e}"));
        }
        let after = maps(&c.ir);
        self.counts
            .lock()
            .unwrap()
            .push((name.to_string(), before, after));
        Ok(c)
    }
}

#[test]
fn every_test_program_passes_fused() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("core/ has a parent")
        .to_path_buf();
    let backend = Fused::default();
    let mut out = Vec::new();
    let paths = [root.join("tests/programs"), root.join("examples")];
    let summary = run_paths(&paths, &backend, &mut out).expect("test runner I/O");
    let text = String::from_utf8_lossy(&out);
    let invalid = backend.invalid.lock().unwrap();
    assert!(
        invalid.is_empty(),
        "invalid IR after fusion:\n{}",
        invalid.join("\n")
    );
    assert!(summary.passed > 0, "no dataset ran:\n{text}");
    assert!(summary.success(), "failures with fusion:\n{text}");
    let counts = backend.counts.lock().unwrap();
    let (b, a) = counts
        .iter()
        .fold((0, 0), |(b, a), (_, x, y)| (b + x, a + y));
    for (name, x, y) in counts.iter() {
        println!("{name}: {x} -> {y} maps");
    }
    println!("all: {b} -> {a} maps; {summary}");
    assert!(a < b, "nothing fused in the test programs");
}
