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
    // The reduce between uses ys: the consumer moves up to the producer, which returns ys.
    let src = "entry main [n] (xs: [n]f64) (k: f64) : (f64, [n]f64) =
  let ys = map (*2) xs
  let s = reduce (+) 0 ys
  in (s, map (+k) ys)";
    let (b, a, q) = fused(src, "main", "[1.0, 2.5, -3.0] 2.0");
    assert_eq!((b, a), (2, 1));
    let stms = &q.entry("main").unwrap().body.stms;
    let m = stms
        .iter()
        .position(|s| matches!(s.exp, Exp::Soac(Soac::Map { .. })));
    let r = stms
        .iter()
        .position(|s| matches!(s.exp, Exp::Soac(Soac::Reduce { .. })));
    assert!(m < r, "{q}");
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
fn a_consumer_that_indexes_the_produced_array_does_not_fuse() {
    // ys is read as a row and also indexed freely: its rows are not all computed before
    // the consumer's iteration needs them in a fused map.
    let src = "entry main [n] (xs: [n]f64) : [n]f64 =
  let ys = map (*2) xs
  in map2 (\\y i -> y + ys[(i + 1) % n]) ys (iota n)";
    let (b, a, _) = fused(src, "main", "[1.0, 2.5, -3.0]");
    assert_eq!((b, a), (2, 2));
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

/// `with_acc` over a copy of `dest` (adding): a map over `xs`, `is` and the accumulator
/// computes `ys = xs * 2` and adds `xs[j]` at `is[j]`; then either a map computes `ys + 1`
/// (`thread = false`) or a map over `ys`, `is` and the updated accumulator adds `ys[j]` at
/// `is[j]` (`thread = true`). Returns the accumulated array and `ys + 1` (or `ys`).
fn acc_producer(thread: bool) -> Program {
    use crate::ir::builder::*;
    use crate::prim::PrimType;
    const F64: PrimType = PrimType::F64;
    const I64: PrimType = PrimType::I64;
    let mut ns = NameSource::default();
    let n = ns.fresh("n");
    let f64t = Type::Prim(F64);
    let i64t = Type::Prim(I64);
    let xs_t = arr(F64, vec![var(&n)]);
    let is_t = arr(I64, vec![var(&n)]);
    let main = fun_sized(
        &mut ns,
        "main",
        true,
        vec![n.clone()],
        |_, _| {
            vec![
                ("xs".into(), xs_t.clone()),
                ("is".into(), is_t.clone()),
                ("dest".into(), xs_t.clone()),
            ]
        },
        vec![xs_t.to_ext(), xs_t.to_ext()],
        |b, ps| {
            let (n, xs, is) = (&ps[0], &ps[1], &ps[2]);
            let dest = b.bind("dest", xs_t.clone(), Exp::Copy(ps[3].clone()));
            let cert = b.fresh("acc_cert");
            let acc_t = Type::Acc {
                cert: cert.clone(),
                shape: vec![var(n)],
                elems: vec![f64t.clone()],
            };
            let upd = |b: &mut Builder, a: &VName, i: &VName, v: &VName| {
                b.bind(
                    "acc",
                    acc_t.clone(),
                    Exp::UpdAcc {
                        acc: a.clone(),
                        idx: vec![var(i)],
                        vals: vec![var(v)],
                    },
                )
            };
            let body = b.body(|b| {
                let plam = b.lambda(
                    &[
                        ("x", f64t.clone()),
                        ("i", i64t.clone()),
                        ("a", acc_t.clone()),
                    ],
                    vec![f64t.clone(), acc_t.clone()],
                    |b, lp| {
                        let y = b.binop(BinOp::Mul(F64), var(&lp[0]), f64c(2.0));
                        let a = upd(b, &lp[2], &lp[1], &lp[0]);
                        vec![var(&y), var(&a)]
                    },
                );
                let pr = b.bind_many(
                    &[("ys", xs_t.clone()), ("acc", acc_t.clone())],
                    Exp::Soac(Soac::Map {
                        w: var(n),
                        arrs: vec![xs.clone(), is.clone(), cert.clone()],
                        lam: plam,
                    }),
                );
                if thread {
                    let clam = b.lambda(
                        &[
                            ("y", f64t.clone()),
                            ("i", i64t.clone()),
                            ("a", acc_t.clone()),
                        ],
                        vec![acc_t.clone()],
                        |b, lp| vec![var(&upd(b, &lp[2], &lp[1], &lp[0]))],
                    );
                    let cr = b.bind_many(
                        &[("acc", acc_t.clone())],
                        Exp::Soac(Soac::Map {
                            w: var(n),
                            arrs: vec![pr[0].clone(), is.clone(), pr[1].clone()],
                            lam: clam,
                        }),
                    );
                    vec![var(&cr[0]), var(&pr[0])]
                } else {
                    let clam = b.lambda(&[("y", f64t.clone())], vec![f64t.clone()], |b, lp| {
                        vec![var(&b.binop(BinOp::Add(F64), var(&lp[0]), f64c(1.0)))]
                    });
                    let zs = b.map(var(n), vec![pr[0].clone()], clam);
                    vec![var(&pr[1]), var(&zs[0])]
                }
            });
            let lam = Lambda {
                params: vec![Param {
                    name: cert.clone(),
                    ty: acc_t.clone(),
                }],
                body,
                ret: vec![acc_t.clone(), xs_t.clone()],
            };
            let op = binop_operator(b.ns, BinOp::Add(F64), f64c(0.0), true);
            let r = b.bind_many(
                &[("out", xs_t.clone()), ("extra", xs_t.clone())],
                Exp::WithAcc {
                    inputs: vec![AccInput {
                        shape: vec![var(n)],
                        arrs: vec![dest],
                        op: Some(op),
                    }],
                    lam,
                },
            );
            vec![var(&r[0]), var(&r[1])]
        },
    );
    let p = program(ns, vec![main]);
    check_program(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
    p
}

/// Runs `main` of `p` and of `q` on `args`; both must give `want`.
fn both_give(p: &Program, q: &Program, args: &str, want: &str) {
    let args = || crate::values::parse_values(args.as_bytes()).expect("values");
    let want = crate::values::parse_values(want.as_bytes()).expect("values");
    assert_eq!(
        crate::interp::run_entry(p, "main", args()).expect("run"),
        want
    );
    assert_eq!(
        crate::interp::run_entry(q, "main", args()).expect("run"),
        want
    );
}

const ACC_ARGS: &str = "[1.0, 2.0, 3.0] [2i64, 0i64, 2i64] [10.0, 20.0, 30.0]";

#[test]
fn an_accumulator_updating_producer_fuses_into_a_map() {
    let p = acc_producer(false);
    let q = fuse(p.clone());
    check_program(&q).expect("valid IR");
    assert_eq!((maps(&p), maps(&q)), (2, 1), "{q}");
    both_give(&p, &q, ACC_ARGS, "[12.0, 20.0, 34.0] [3.0, 5.0, 7.0]");
}

#[test]
fn a_consumer_does_not_take_the_accumulator_its_producer_updates() {
    let p = acc_producer(true);
    let q = fuse(p.clone());
    check_program(&q).expect("valid IR");
    assert_eq!((maps(&p), maps(&q)), (2, 2), "{q}");
    both_give(&p, &q, ACC_ARGS, "[16.0, 20.0, 42.0] [2.0, 4.0, 6.0]");
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
/// records the programs whose fused IR does not check or is not a fixpoint of [`fuse`]
/// (compared as text: NaN constants are not equal to themselves), and the maps before and
/// after.
#[derive(Default)]
struct Fused {
    invalid: Mutex<Vec<String>>,
    counts: Mutex<Vec<(String, usize, usize)>>,
}

impl Backend for Fused {
    fn name(&self) -> &str {
        "interp"
    }
    fn run(
        &self,
        c: &Compiled,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Vec<Value>, crate::testing::RunError> {
        InterpBackend.run(c, entry, args)
    }
    fn compile(&self, name: &str, text: &str) -> Result<Compiled, CompileError> {
        let mut c = crate::compile_with(name, text, &mut crate::modules::FileLoader)?;
        let before = maps(&c.ir);
        c.ir = fuse(c.ir);
        if let Err(e) = check_program(&c.ir) {
            self.invalid.lock().unwrap().push(format!("{name}: {e}"));
        } else if fuse(c.ir.clone()).to_string() != c.ir.to_string() {
            self.invalid
                .lock()
                .unwrap()
                .push(format!("{name}: fusing again changes the program"));
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

/// Accumulator-taking maps that read a result of the `with_acc` right before them.
fn acc_maps_reading_a_with_acc(p: &Program) -> usize {
    let mut n = 0;
    crate::passes::traverse::map_bodies(&mut p.clone(), &mut |b: &mut Body| {
        for w in b.stms.windows(2) {
            if let (Exp::WithAcc { .. }, Exp::Soac(Soac::Map { arrs, lam, .. })) =
                (&w[0].exp, &w[1].exp)
            {
                if lam.params.iter().any(is_acc)
                    && w[0].pat.elems.iter().any(|e| arrs.contains(&e.name))
                {
                    n += 1;
                }
            }
        }
    });
    n
}

/// GMM's shape: an outer map over points whose inner map reads the clusters' matrices as rows
/// (its adjoints of them are its results) and the point freely (accumulated by a `with_acc`).
const POINTS_AND_MATRICES: &str = "entry main [n][k][d] (qs: [k][d][d]f64) (xs: [n][d]f64) =
  vjp (\\qs -> f64.sum (map (\\x -> f64.sum (map (\\q -> f64.sum (map (\\row -> f64.sum (map2 (*) row x) * x[0]) q)) qs)) xs)) qs 1";

#[test]
fn an_accumulating_map_after_a_with_acc_moves_into_it_and_fuses_there() {
    let args = "[[[1.0, 2.0], [3.0, -1.0]], [[0.5, 0.0], [-2.0, 4.0]], [[1.5, 1.0], [0.0, 2.0]]] \
                [[1.0, -1.0], [2.0, 0.5], [-3.0, 1.0], [0.25, 2.0]]";
    let (before, after) = rewrite_and_compare(POINTS_AND_MATRICES, "main", args, fuse);
    assert!(
        acc_maps_reading_a_with_acc(&before) > 0,
        "the case has the pattern:\n{}",
        crate::ir::print::program_to_string(&before)
    );
    assert_eq!(
        acc_maps_reading_a_with_acc(&after),
        0,
        "{}",
        crate::ir::print::program_to_string(&after)
    );
    // Fused there: no accumulator-taking map reads a map's result in its body any more.
    assert_eq!(acc_map_inputs_from_maps(&after), 0);
}

/// The `reduce` SOACs of `p`, nested ones included.
fn reduces(p: &Program) -> usize {
    count_exps(p, &|e| matches!(e, Exp::Soac(Soac::Reduce { .. })))
}

#[test]
fn reductions_over_one_map_fuse_into_one_reduction() {
    // Inside a map (as in a kernel's thread code) and at the top level: the sum and the maximum
    // of one map's two results become one reduction, as do the sum and minimum below, whatever
    // the statement between them.
    let src = "entry main [n][m] (xss: [n][m]f64) (ys: [m]f64) : ([n]f64, f64, f64) =
  let r = map (\\xs -> let (a, b) = unzip (map (\\x -> (x * 2, f64.sin x)) xs)
                      in f64.sum a + f64.maximum b) xss
  let (c, d) = unzip (map (\\y -> (y + 1, y * y)) ys)
  let s = f64.sum c
  let k = s * 2
  in (r, k, f64.minimum d)";
    let (before, after) = rewrite_and_compare(
        src,
        "main",
        "[[1.0, -2.5, 3.0], [0.5, 4.0, -1.0]] [2.0, -3.5, 0.25]",
        fuse,
    );
    assert_eq!((reduces(&before), reduces(&after)), (4, 2));
}

#[test]
fn reductions_of_an_input_and_of_a_map_stay_apart() {
    // `xs` has no producer in the body: sharing a loop would not save an evaluation.
    let src = "entry main [n] (xs: [n]f64) : f64 =
  f64.sum (map (\\x -> x * x) xs) + f64.maximum xs";
    let (before, after) = rewrite_and_compare(src, "main", "[1.0, -2.5, 3.0]", fuse);
    assert_eq!((reduces(&before), reduces(&after)), (2, 2));
}

#[test]
fn a_row_view_moves_up_so_that_its_reader_fuses_with_an_earlier_map() {
    // `b` reads the row `r`, bound after `s` uses `a`'s result: `a` cannot move down to `b`,
    // and `b` could not move up past `r` to `a` (the RNN gradient's weight sums of its first
    // gate, whose adjoint row is read after the other gates' updates). The view moves up
    // first (rule 9), then the two maps fuse where `a` is.
    let src = "entry main [n] (xss: [2][n]f64) (ys: [n]f64) : ([n]f64, f64, [n]f64) =
  let a = map (\\y -> y * 2) ys
  let s = f64.sum a
  let r = xss[1]
  let b = map (\\x -> x + 1) r
  in (a, s, b)";
    let (b, a, _) = fused(
        src,
        "main",
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [0.5, 0.25, 4.0]",
    );
    assert_eq!((b, a), (2, 1));
}
