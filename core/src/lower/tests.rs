//! Tests of the lowering: type-checked programs lowered to IR, checked with the IR checker and
//! run on the reference interpreter.

use super::*;

/// Parses, type-checks and lowers `src` (after the prelude).
fn lower_src(src: &str) -> (Lowered, SourceMap) {
    let checked = match crate::check("test.fut", src) {
        Ok(c) => c,
        Err(e) => panic!("front end failed:\n{}", e.render()),
    };
    let l = lower_program(&checked.ast, &checked.sources);
    (l, checked.sources)
}

/// Lowers, requires every entry point to succeed and the IR to pass the checker.
fn lower_ok(src: &str) -> ir::Program {
    let (l, sources) = lower_src(src);
    if let Some((n, d)) = l.entry_errors.first() {
        panic!("entry {n} failed to lower:\n{}", d.render(&sources));
    }
    if let Err(e) = crate::ir::check::check_program(&l.program) {
        panic!(
            "IR check failed: {e}\n{}",
            crate::ir::print::program_to_string(&l.program)
        );
    }
    l.program
}

/// Runs entry `entry` on `args` (Futhark value syntax); the results as text, one per line.
fn run(src: &str, entry: &str, args: &str) -> Result<String, String> {
    let prog = crate::passes::simplify(lower_ok(src));
    if let Err(e) = crate::ir::check::check_program(&prog) {
        panic!(
            "IR check failed after simplification: {e}\n{}",
            crate::ir::print::program_to_string(&prog)
        );
    }
    let args = crate::values::parse_values(args.as_bytes())
        .map_err(|e| format!("bad test input: {e:?}"))?;
    let f = prog.entry(entry).ok_or("no such entry")?;
    let n: usize = f
        .entry
        .as_ref()
        .map(|e| e.result_counts.iter().sum())
        .unwrap_or(0);
    match crate::interp::run_entry(&prog, entry, args) {
        Ok(vs) => {
            // Existential sizes come first.
            let skip = vs.len().saturating_sub(n);
            Ok(crate::values::write_text_all(&vs[skip..])
                .trim_end()
                .to_string())
        }
        Err(e) => Err(e.message),
    }
}

fn check_run(src: &str, args: &str, expected: &str) {
    match run(src, "main", args) {
        Ok(out) => assert_eq!(out, expected, "program:\n{src}"),
        Err(e) => panic!("runtime error: {e}\nprogram:\n{src}"),
    }
}

#[test]
fn scalar_arithmetic() {
    check_run(
        "entry main (x: i32) (y: i32) : i32 = x + y * 2 - x / 2",
        "7 3",
        "10i32",
    );
    check_run(
        "entry main (x: f64) : f64 = f64.sqrt x + 1",
        "16.0",
        "5.0f64",
    );
    check_run("entry main (x: i32) : bool = x > 3 && x != 5", "4", "true");
    check_run(
        "entry main (x: i32) : (i32, i32, i32, i32) = (x % 3, x // 3, x %% 3, -x)",
        "-7",
        "2i32\n-2i32\n-1i32\n7i32",
    );
}

#[test]
fn map_reduce_scan() {
    check_run(
        "entry main (xs: []f64) : f64 = reduce (+) 0 (map (\\x -> x * 2) xs)",
        "[1.0, 2.0, 3.0]",
        "12.0f64",
    );
    check_run(
        "entry main (xs: []i32) : []i32 = scan (+) 0 xs",
        "[1, 2, 3]",
        "[1i32, 3i32, 6i32]",
    );
    check_run(
        "entry main (xs: []i32) : i32 = i32.sum xs + i32.maximum xs",
        "[1, 5, 3]",
        "14i32",
    );
}

#[test]
fn tuples_and_arrays_of_tuples() {
    check_run(
        "entry main (xs: []i32) (ys: []f64) : ([]f64, []i32) = unzip (map (\\(x, y) -> (y * 2, x + 1)) (zip xs ys))",
        "[1, 2] [0.5, 1.5]",
        "[1.0f64, 3.0f64]\n[2i32, 3i32]",
    );
    check_run(
        "entry main (xs: []i32) (ys: []i32) : []i32 = map2 (+) xs ys",
        "[1, 2] [10, 20]",
        "[11i32, 22i32]",
    );
    check_run(
        "entry main (xs: []i32) : (i32, i32) = reduce (\\(a, b) (c, d) -> (a + c, i32.max b d)) (0, i32.lowest) (zip xs xs)",
        "[3, 9, 4]",
        "16i32\n9i32",
    );
    check_run(
        "entry main (xs: []i32) : ([]i32, []i32, []i32) = unzip3 (zip3 xs (map (*2) xs) (map (\\x -> x - 1) xs))",
        "[1, 2]",
        "[1i32, 2i32]\n[2i32, 4i32]\n[0i32, 1i32]",
    );
}

#[test]
fn higher_order_functions() {
    let src = "
def twice 'a (f: a -> a) (x: a) : a = f (f x)
def compose 'a 'b 'c (g: b -> c) (f: a -> b) : a -> c = \\x -> g (f x)
entry main (x: i32) : (i32, i32, i32) =
  let add k y = y + k
  let h = compose (add 1) (twice (add 10))
  in (h x, twice (\\y -> y * 3) x, (x |> (+ 2)) - (5 - x |> (2 -)))";
    check_run(src, "1", "22i32\n9i32\n5i32");
    check_run(
        "entry main (xs: [][]i32) : [][]i32 = map (map (\\x -> x * x)) xs",
        "[[1, 2], [3, 4]]",
        "[[1i32, 4i32], [9i32, 16i32]]",
    );
    check_run(
        "entry main (xs: []i32) : i32 = foldl (-) 100 xs + foldr (-) 0 xs",
        "[1, 2, 3]",
        "96i32",
    );
}

#[test]
fn loops() {
    check_run(
        "entry main (n: i32) : i32 = loop acc = 1 for i < n do acc * (i + 1)",
        "5",
        "120i32",
    );
    check_run("entry main (n: i32) : i32 = loop x = n while x > 1 do if x % 2 == 0 then x / 2 else 3 * x + 1", "27", "1i32");
    check_run(
        "entry main (xs: []f64) : f64 = loop s = 0 for x in xs do s + x",
        "[1.0, 2.5]",
        "3.5f64",
    );
    check_run(
        "entry main (n: i64) : []i64 = loop xs = replicate n 0 for i < n do xs with [i] = i * i",
        "3i64",
        "[0i64, 1i64, 4i64]",
    );
    // The array grows: the loop needs a size parameter.
    check_run(
        "entry main (n: i32) : []i32 = loop xs = [0] for i < n do xs ++ [i + 1]",
        "3",
        "[0i32, 1i32, 2i32, 3i32]",
    );
    check_run(
        "entry main (n: i32) : (i32, []i32) = loop (k, xs) = (0, [1]) while k < n do (k + 1, map (*2) xs ++ xs)",
        "2",
        "2i32\n[4i32, 2i32, 2i32, 1i32]",
    );
}

#[test]
fn if_with_different_sizes() {
    check_run(
        "entry main (b: bool) (n: i64) : []i64 = if b then iota n else iota (n + 1)",
        "false 2i64",
        "[0i64, 1i64, 2i64]",
    );
    check_run(
        "entry main (b: bool) (xs: []i32) : []i32 = if b then xs else xs[1:]",
        "true [1, 2]",
        "[1i32, 2i32]",
    );
}

/// Both branches compute their result's size as `i64.sum ks`: the computation runs once before
/// the `if`, whose result then has that size (no existential), so a `map` can lift it out of
/// its function (Futhark's tests/ad/flatmap0.fut, `rev_vec`). Branches whose sizes differ keep
/// an existential size, and such a `map` stays irregular.
#[test]
fn sizes_both_branches_compute_alike_are_shared() {
    let src = "entry main (ks: []i64) (c: bool) = \
               if c then replicate (i64.sum ks) 1i32 else replicate (i64.sum ks) 2i32";
    let prog = lower_ok(src);
    let text = crate::ir::print::program_to_string(&prog);
    let f = &prog.funs[0];
    let ifs: Vec<&ir::Stm> = f
        .body
        .stms
        .iter()
        .filter(|s| matches!(s.exp, ir::Exp::If { .. }))
        .collect();
    assert_eq!(ifs.len(), 1, "{text}");
    assert_eq!(
        ifs[0].pat.elems.len(),
        1,
        "the if has an existential size:\n{text}"
    );
    check_run(src, "[1i64, 2i64] false", "[2i32, 2i32, 2i32]");
    check_run(
        "entry main (ks: []i64) (n: i64) = \
         tabulate n (\\i -> if i < i64.sum ks then replicate (i64.sum ks) 0i32 with [i] = 1 \
                              else replicate (i64.sum ks) 0i32)",
        "[1i64, 1i64] 3i64",
        "[[1i32, 0i32], [0i32, 1i32], [0i32, 0i32]]",
    );
    let (l, _) = lower_src(
        "entry main (ks: []i64) (n: i64) = \
         tabulate n (\\i -> if i < 1 then replicate (i64.sum ks) 0i32 \
                              else replicate (i64.sum ks + 1) 0i32)",
    );
    let msg = &l.entry_errors.first().expect("an irregular map").1.message;
    assert!(msg.contains("irregular"), "{msg}");
}

#[test]
fn filter_and_partition() {
    check_run(
        "entry main (xs: []i32) : []i32 = filter (\\x -> x % 2 == 0) xs",
        "[1, 2, 3, 4, 6]",
        "[2i32, 4i32, 6i32]",
    );
    check_run(
        "entry main (xs: []i32) : []i32 = filter (\\x -> x > 10) xs",
        "[1, 2]",
        "empty([0]i32)",
    );
    check_run(
        "entry main (xs: []i32) : ([]i32, []i32) = partition (\\x -> x < 3) xs",
        "[5, 1, 4, 2, 3]",
        "[1i32, 2i32]\n[5i32, 4i32, 3i32]",
    );
}

#[test]
fn ranges_and_slices() {
    check_run(
        "entry main (n: i32) : []i32 = 0..<n",
        "3",
        "[0i32, 1i32, 2i32]",
    );
    check_run(
        "entry main (n: i32) : []i32 = 1...n",
        "3",
        "[1i32, 2i32, 3i32]",
    );
    check_run(
        "entry main (n: i32) : []i32 = n..>0",
        "3",
        "[3i32, 2i32, 1i32]",
    );
    check_run(
        "entry main (n: i64) : []i64 = 1..3...n",
        "8i64",
        "[1i64, 3i64, 5i64, 7i64]",
    );
    check_run(
        "entry main (n: i64) : []i64 = 10..7..>n",
        "0i64",
        "[10i64, 7i64, 4i64, 1i64]",
    );
    check_run(
        "entry main (n: i64) : []i64 = 5..4...n",
        "2i64",
        "[5i64, 4i64, 3i64, 2i64]",
    );
    assert!(run("entry main (n: i32) : []i32 = 5..<n", "main", "3").is_err());
    check_run(
        "entry main (xs: []i32) : ([]i32, []i32, []i32, []i32) = (xs[1:3], xs[::-1], xs[::2], xs[3:0:-2])",
        "[0, 1, 2, 3, 4]",
        "[1i32, 2i32]\n[4i32, 3i32, 2i32, 1i32, 0i32]\n[0i32, 2i32, 4i32]\n[3i32, 1i32]",
    );
    check_run(
        "entry main (xss: [][]i32) : []i32 = xss[:, 1]",
        "[[1, 2], [3, 4]]",
        "[2i32, 4i32]",
    );
}

#[test]
fn array_builtins() {
    check_run(
        "entry main (xs: []i32) : []i32 = reverse xs ++ rotate 1 xs",
        "[1, 2, 3]",
        "[3i32, 2i32, 1i32, 2i32, 3i32, 1i32]",
    );
    check_run(
        "entry main (xss: [][]i32) : [][]i32 = transpose xss",
        "[[1, 2, 3], [4, 5, 6]]",
        "[[1i32, 4i32], [2i32, 5i32], [3i32, 6i32]]",
    );
    check_run(
        "entry main [n] [m] (xss: [n][m]i32) : [m][n]i32 = unflatten (flatten xss :> [m*n]i32)",
        "[[1, 2, 3], [4, 5, 6]]",
        "[[1i32, 2i32], [3i32, 4i32], [5i32, 6i32]]",
    );
    check_run(
        "entry main (x: i32) : [][]i32 = [[x, 2], [3, x]]",
        "7",
        "[[7i32, 2i32], [3i32, 7i32]]",
    );
    check_run(
        "entry main (xs: []i32) : (i32, i32, []i32, []i32, []i32, []i32, i64) = (head xs, last xs, tail xs, init xs, take 2 xs, drop 2 xs, length xs)",
        "[1, 2, 3]",
        "1i32\n3i32\n[2i32, 3i32]\n[1i32, 2i32]\n[1i32, 2i32]\n[3i32]\n3i64",
    );
    check_run(
        "entry main (n: i64) : [][]i64 = tabulate_2d n 2 (\\i j -> i * 10 + j)",
        "2i64",
        "[[0i64, 1i64], [10i64, 11i64]]",
    );
    check_run(
        "entry main (xs: []i32) : []i32 = exscan (+) 0 xs",
        "[1, 2, 3]",
        "[0i32, 1i32, 3i32]",
    );
}

#[test]
fn scatter_and_histograms() {
    check_run(
        "entry main (xs: []i32) : []i32 = scatter (replicate 4 0) [0, 2, 7] xs",
        "[5, 6, 7]",
        "[5i32, 0i32, 6i32, 0i32]",
    );
    check_run(
        "entry main (is: []i64) (vs: []f64) : []f64 = hist (+) 0 3 is vs",
        "[0i64, 2i64, 0i64, 5i64] [1.0, 2.0, 3.0, 4.0]",
        "[4.0f64, 0.0f64, 2.0f64]",
    );
    check_run(
        "entry main (is: []i64) (vs: []i32) : []i32 = reduce_by_index (replicate 2 100) i32.min i32.highest is vs",
        "[1i64, 1i64, 0i64] [5, 3, 200]",
        "[100i32, 3i32]",
    );
    check_run(
        "entry main (m: [][]i32) : [][]i32 = scatter_2d m [(0, 1), (1, 0)] [8, 9]",
        "[[1, 2], [3, 4]]",
        "[[1i32, 8i32], [9i32, 4i32]]",
    );
}

#[test]
fn updates_and_equality() {
    check_run(
        "entry main (xs: []i32) : ([]i32, []i32) = let ys = xs with [0] = 9 let zs = copy xs let zs[1] = 7 in (ys, zs)",
        "[1, 2]",
        "[9i32, 2i32]\n[1i32, 7i32]",
    );
    check_run(
        "entry main (xs: []i32) (ys: []i32) : (bool, bool, bool) = (xs == ys, (1, xs) != (1, ys), [xs] == [ys[:1]])",
        "[1, 2] [1, 2]",
        "true\nfalse\nfalse",
    );
}

#[test]
fn numeric_module_functions() {
    check_run(
        "entry main (x: i32) : (i32, i32, i32, u32, f32, f64) = (i32.get_bit 2 x, i32.set_bit 0 x 1, i32.popc x, f32.to_bits 1.0, f32.from_fraction 1 4, f64.(pi - pi + e * 0 + abs (-2)))",
        "6",
        "1i32\n7i32\n2i32\n1065353216u32\n0.25f32\n2.0f64",
    );
    check_run(
        "entry main (x: f32) : (bool, bool, i64) = (f32.isnan x, f32.isfinite x, f32.to_i64 x)",
        "2.5f32",
        "false\ntrue\n2i64",
    );
    check_run(
        "entry main (x: u8) : (u8, u8, i32) = (u8.highest, x >> 1, u8.num_bits)",
        "9u8",
        "255u8\n4u8\n8i32",
    );
}

#[test]
fn runtime_errors_have_locations() {
    let e = run("entry main (xs: []i32) : i32 =\n  xs[3]", "main", "[1, 2]").unwrap_err();
    assert!(!e.is_empty());
    let e = run(
        "entry main (x: i32) : i32 = assert (x > 0) (x + 1)",
        "main",
        "-1",
    )
    .unwrap_err();
    assert!(e.contains("x > 0"), "{e}");
    // Both sides of `&&` evaluate only when needed.
    check_run(
        "entry main (xs: []i32) (i: i64) : bool = i < length xs && xs[i] > 0",
        "[1] 5i64",
        "false",
    );
}

#[test]
fn sum_types_at_entry_points_fail_alone() {
    let (l, sources) = lower_src(
        "type opt = #none | #some i32
entry good (x: i32) : i32 = match (#some x : opt) case #none -> 0 case #some v -> v
entry param (x: opt) : i32 = match x case #none -> 0 case #some v -> v
entry result (x: i32) : opt = #some x
entry arr (x: i32) = [#some x, #none] : []opt
entry free = \\(x: opt) -> x",
    );
    let names: Vec<&str> = l.entry_errors.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["param", "result", "arr", "free"]);
    let msgs: Vec<String> = l
        .entry_errors
        .iter()
        .map(|(_, d)| d.render(&sources))
        .collect();
    for (m, (what, at)) in msgs.iter().zip([
        ("parameter", ":3:13"),
        ("result", ":4:25"),
        ("result", ":5:7"),
        ("parameter or result", ":6:7"),
    ]) {
        assert!(
            m.contains(&format!("not supported: sum types in the {what} type"))
                && m.contains(at)
                && m.contains("opaque"),
            "{m}"
        );
    }
    assert!(l.entry_errors.iter().all(|(_, d)| d.not_supported));
    assert!(l.program.entry("good").is_some());
}

#[test]
fn unsupported_entry_fails_alone() {
    let (l, sources) = lower_src(
        "entry good (x: f64) : f64 = x * 2
entry bad (ns: []i64) : [][]i64 = map (\\n -> iota n) ns",
    );
    assert_eq!(l.entry_errors.len(), 1);
    let (name, d) = &l.entry_errors[0];
    assert_eq!(name, "bad");
    assert!(
        d.render(&sources).contains("not supported"),
        "{}",
        d.render(&sources)
    );
    assert!(l.program.entry("good").is_some());
}

#[test]
fn attributes_and_locations_are_carried() {
    let p = lower_ok("entry main (xs: []i32) (n: i32) : i32 = #[bound(10)] loop s = 0 for i < n do s + #[unsafe] xs[i]");
    let f = p.entry("main").unwrap();
    let lp = f
        .body
        .stms
        .iter()
        .find(|s| matches!(s.exp, ir::Exp::Loop { .. }))
        .expect("a loop");
    assert!(lp.attrs.has("bound"), "{:?}", lp.attrs);
    assert_eq!(lp.attrs.int_arg("bound"), Some(10));
    let ir::Exp::Loop { body, .. } = &lp.exp else {
        unreachable!()
    };
    let idx = body
        .stms
        .iter()
        .find(|s| matches!(s.exp, ir::Exp::Index(..)))
        .expect("an index");
    assert!(idx.attrs.has("unsafe"));
    assert!(!idx.attrs.has("bound"));
    let loc = idx.loc.as_ref().expect("a location");
    assert_eq!(&*loc.file, "test.fut");
}

#[test]
fn entry_signatures() {
    let p = lower_ok(
        "entry main [n] (xs: [n]i32) (p: (f64, [n]f64)) : ([n]i32, []i32, f64) = (xs, xs[1:], p.0)",
    );
    let f = p.entry("main").unwrap();
    let e = f.entry.as_ref().unwrap();
    assert_eq!(e.param_counts, vec![1, 2]);
    assert_eq!(e.result_counts, vec![1, 1, 1]);
    assert_eq!(f.size_params.len(), 1);
    // One existential size (n - 1) comes first.
    assert_eq!(f.ret.len(), 4);
    assert_eq!(f.ret[0], ir::ExtType::Prim(PrimType::I64));
    check_run(
        "entry main [n] (xs: [n]i32) (p: (f64, [n]f64)) : ([n]i32, []i32, f64) = (xs, xs[1:], p.0)",
        "[1, 2] 1.5 [0.0, 0.0]",
        "[1i32, 2i32]\n[2i32]\n1.5f64",
    );
}

#[test]
fn polymorphism_and_constants() {
    let src = "
def k = 3i32
def empty_like 't (_: []t) : []t = []
def pair 'a (x: a) = (x, x)
entry main (xs: []f64) : ([]f64, i32, (i32, i32)) = (empty_like xs, k * 2, pair k)";
    check_run(src, "[1.0]", "empty([0]f64)\n6i32\n3i32\n3i32");
}

#[test]
fn more_prelude_and_sugar() {
    check_run(
        "entry main (xs: []i32) : (bool, bool, bool, bool, i32, i32, i32) =
  (all (> 0) xs, any (> 2) xs, and (map (> 0) xs), or [false],
   iterate 3 (* 2) 1, uncurry (+) (curry (\\(a, b) -> a - b) 5 2, 1), flip (-) 1 10 + const 0 true + id 0)",
        "[1, 2]",
        "true\nfalse\ntrue\nfalse\n8i32\n4i32\n9i32",
    );
    check_run(
        "entry main (xss: [][][]i32) : ([]i32, [1][2][2]i32, []i64) = (flatten_3d xss, unflatten_3d (flatten_3d xss :> [1*2*2]i32), indices xss)",
        "[[[1, 2], [3, 4]]]",
        "[1i32, 2i32, 3i32, 4i32]\n[[[1i32, 2i32], [3i32, 4i32]]]\n[0i64]",
    );
    check_run(
        "entry main (xs: []f32) : []f32 = spread 3 0 [2, 0] xs",
        "[1f32, 2f32]",
        "[2.0f32, 0.0f32, 1.0f32]",
    );
    check_run(
        "entry main (xs: [](i32, f32)) : [](f32, i32) = map (\\p -> (p.1, p.0)) xs",
        "[1, 2] [0.5f32, 1.5f32]",
        "[0.5f32, 1.5f32]\n[1i32, 2i32]",
    );
    check_run(
        "entry main (xs: []i32) (ys: []i32) : []i32 = map (.0) (zip xs ys)",
        "[1, 2] [3, 4]",
        "[1i32, 2i32]",
    );
}

#[test]
fn nested_arrays_in_soacs() {
    // Vectorised reduce with an array neutral element and rows computed inside a lambda whose
    // result size is computed from outer sizes (hoisted out of the lambda).
    check_run(
        "entry main [n][m] (xss: [n][m]i32) : ([]i32, [][]i32) = (reduce (map2 (+)) (replicate m 0) xss, map (\\r -> r[1:]) xss)",
        "[[1, 2, 3], [4, 5, 6]]",
        "[5i32, 7i32, 9i32]\n[[2i32, 3i32], [5i32, 6i32]]",
    );
    check_run(
        "entry main (xs: []i32) : [][]i32 = map (\\x -> map (\\y -> x * y) xs) xs",
        "[1, 2]",
        "[[1i32, 2i32], [2i32, 4i32]]",
    );
    check_run(
        "entry main (xs: []i32) : []i32 = let (a, b) = (copy xs, scan (+) 0 xs) in map2 (\\x y -> if x > 1 then x else y) a b",
        "[1, 2, 3]",
        "[1i32, 2i32, 3i32]",
    );
}

#[test]
fn local_open_and_shadowing() {
    check_run(
        "entry main (x: f64) : f64 = f64.(let pi = 1 in pi + sqrt x)",
        "4.0",
        "3.0f64",
    );
    check_run(
        "entry main (e: f32) : f32 = e + f32.(e * 0)",
        "1f32",
        "1.0f32",
    );
    check_run(
        "def f (x: i32) = x + 1
def g (x: i32) = f x * 2
def f (x: i32) = x + 100
entry main (x: i32) : (i32, i32) = (g x, f x)",
        "1",
        "4i32\n101i32",
    );
}

#[test]
fn irregular_maps_are_not_supported() {
    let (l, sources) = lower_src("entry main (ns: []i64) : [][]i64 = map (\\n -> iota n) ns");
    assert_eq!(l.entry_errors.len(), 1);
    let msg = l.entry_errors[0].1.render(&sources);
    assert!(msg.contains("not supported"), "{msg}");
}

/// Counts the `Copy` statements anywhere in a body.
fn count_copies(b: &ir::Body) -> usize {
    b.stms
        .iter()
        .map(|s| {
            let nested = match &s.exp {
                ir::Exp::Loop { body, .. } => count_copies(body),
                ir::Exp::If { then_b, else_b, .. } => count_copies(then_b) + count_copies(else_b),
                ir::Exp::Soac(ir::Soac::Map { lam, .. }) => count_copies(&lam.body),
                _ => 0,
            };
            nested + usize::from(matches!(s.exp, ir::Exp::Copy(_)))
        })
        .sum()
}

#[test]
fn copies_before_in_place_updates() {
    // The accumulator is fresh and owned by the loop: no copy per iteration.
    let p = lower_ok(
        "entry main (n: i64) : []i64 = loop xs = replicate n 0 for i < n do xs with [i] = i",
    );
    assert_eq!(count_copies(&p.entry("main").unwrap().body), 0);
    // The parameter is still used afterwards: it must be copied.
    let src = "entry main (xs: []i32) : ([]i32, []i32) = (xs with [0] = 5, xs)";
    let p = lower_ok(src);
    assert_eq!(count_copies(&p.entry("main").unwrap().body), 1);
    check_run(src, "[1, 2]", "[5i32, 2i32]\n[1i32, 2i32]");
    // A loop over a parameter copies it once, before the loop.
    let src = "entry main (ys: []i64) : []i64 = loop xs = ys for i < length ys do xs with [i] = xs[i] * 2";
    let p = lower_ok(src);
    let f = p.entry("main").unwrap();
    assert_eq!(count_copies(&f.body), 1);
    assert!(matches!(
        f.body
            .stms
            .iter()
            .find(|s| matches!(s.exp, ir::Exp::Copy(_)))
            .map(|s| &s.exp),
        Some(ir::Exp::Copy(_))
    ));
    check_run(src, "[1i64, 2i64]", "[2i64, 4i64]");
    // A loop whose initial value is used after the loop keeps its copies.
    let src = "entry main (n: i64) : ([]i64, []i64) = let ys = iota n let zs = loop xs = ys for i < n do xs with [i] = 0 in (ys, zs)";
    let p = lower_ok(src);
    assert!(count_copies(&p.entry("main").unwrap().body) >= 1);
    check_run(src, "2i64", "[0i64, 1i64]\n[0i64, 0i64]");
    // Slices of a loop's state read before the update, and dead by then, do not keep the
    // update from being in place (the LSTM's `st with [i] = [h, c]` after reading `st[i]`).
    let src = "entry main (st0: [][]i64) : [][]i64 = \
               loop st = copy st0 for i < length st0 do \
               let h = map (* 2) st[i] in st with [i] = h";
    let p = lower_ok(src);
    assert_eq!(count_copies(&p.entry("main").unwrap().body), 1);
    check_run(
        src,
        "[[1i64, 2i64], [3i64, 4i64]]",
        "[[2i64, 4i64], [6i64, 8i64]]",
    );
    // A loop over layers inside a loop over time steps consumes the outer state: the inner
    // loop's result is fresh (its initial value or its own updates), so the outer loop owns
    // its state too and copies nothing per step.
    let src = "entry main (st0: [][]i64) (k: i64) : [][]i64 = \
               loop st = copy st0 for t < k do \
               loop s = st for i < length st0 do s with [i] = map (+ t) s[i]";
    let p = lower_ok(src);
    assert_eq!(count_copies(&p.entry("main").unwrap().body), 1);
    check_run(
        src,
        "[[1i64, 2i64], [3i64, 4i64]] 3i64",
        "[[4i64, 5i64], [6i64, 7i64]]",
    );
    // ... but not where the outer state is used after the inner loop.
    let src = "entry main (st0: [][]i64) (k: i64) : ([][]i64, [][]i64) = \
               loop (st, prev) = (copy st0, copy st0) for t < k do \
               let s' = loop s = st for i < length st0 do s with [i] = map (+ t) s[i] \
               in (s', st)";
    let p = lower_ok(src);
    assert!(count_copies(&p.entry("main").unwrap().body) >= 3);
    check_run(
        src,
        "[[1i64, 2i64], [3i64, 4i64]] 3i64",
        "[[4i64, 5i64], [6i64, 7i64]]\n[[2i64, 3i64], [4i64, 5i64]]",
    );
    // A slice still used after the update keeps the copy: it must see the old row.
    let src = "entry main (st0: [][]i64) : ([][]i64, []i64) = \
               loop (st, old) = (copy st0, st0[0]) for i < length st0 do \
               let r = st[i] in (st with [i] = map (* 2) r, r)";
    let p = lower_ok(src);
    assert_eq!(count_copies(&p.entry("main").unwrap().body), 2);
    check_run(
        src,
        "[[1i64, 2i64], [3i64, 4i64]]",
        "[[2i64, 4i64], [6i64, 8i64]]\n[3i64, 4i64]",
    );
}

#[test]
fn multi_dimensional_histograms_and_sized() {
    check_run(
        "entry main (m: [][]i32) : [][]i32 = reduce_by_index_2d m (+) 0 [(0, 1), (1, 0), (0, 1), (2, 0)] [1, 2, 3, 4]",
        "[[0, 0], [0, 0]]",
        "[[0i32, 4i32], [2i32, 0i32]]",
    );
    check_run(
        "entry main (m: [][][]i32) : [][][]i32 = reduce_by_index_3d m (+) 0 [(0, 1, 1), (0, 0, 0)] [5, 6]",
        "[[[0, 0], [0, 0]]]",
        "[[[6i32, 0i32], [0i32, 5i32]]]",
    );
    check_run(
        "entry main (xs: []i32) : []i32 = sized 2 xs",
        "[1, 2]",
        "[1i32, 2i32]",
    );
    assert!(run(
        "entry main (xs: []i32) : []i32 = sized 3 xs",
        "main",
        "[1, 2]"
    )
    .is_err());
}

/// Lowers Futhark's AD test programs and reports what fails for reasons other than AD.
#[test]
#[ignore]
fn survey_futhark_ad_tests() {
    let dir = "/work/futhark-ref/tests/ad";
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let (mut fe, mut ok, mut errs) = (0, 0, 0);
    for p in entries {
        if p.extension().and_then(|e| e.to_str()) != Some("fut") {
            continue;
        }
        let src = std::fs::read_to_string(&p).unwrap();
        let checked = match crate::check("t.fut", &src) {
            Ok(c) => c,
            Err(e) => {
                fe += 1;
                println!(
                    "FRONTEND {}: {}",
                    p.display(),
                    e.render().lines().next().unwrap_or("")
                );
                continue;
            }
        };
        let l = lower_program(&checked.ast, &checked.sources);
        for (n, d) in &l.entry_errors {
            if !d.message.contains("automatic differentiation") {
                errs += 1;
                println!("LOWER {} {n}: {}", p.display(), d.message);
            }
        }
        if let Err(e) = crate::ir::check::check_program(&l.program) {
            println!("CHECK {}: {e}", p.display());
        }
        ok += l.program.funs.len();
    }
    println!("frontend failures {fe}, lowered entries {ok}, lowering errors {errs}");
}

#[test]
fn conversions_follow_futhark() {
    check_run(
        "entry main (c: i8) (e: i32) (d: u8) : (u32, u64, i32, i8, f32) = (u32.i8 c, u64.i32 e, i32.u8 d, i8.i32 300, f32.i64 (-2))",
        "-1i8 -1 255u8",
        "255u32\n4294967295u64\n255i32\n44i8\n-2.0f32",
    );
}

#[test]
fn main_is_an_entry_point() {
    check_run("def main (x: i32) : i32 = x + 1", "41", "42i32");
}

#[test]
fn point_free_entry_points() {
    let src = "def mult_list (xs: []i32) (k: i32) : i32 = k * reduce (*) 1 xs
entry main = mult_list";
    check_run(src, "[2, 3] 2", "12i32");
    let p = lower_ok(src);
    assert_eq!(
        p.entry("main")
            .unwrap()
            .entry
            .as_ref()
            .unwrap()
            .param_counts,
        vec![1, 1]
    );
}

#[test]
fn vectorised_operators_with_other_sizes() {
    // The neutral element's size is a different variable than the rows' size.
    check_run(
        "entry main (k: i64) (xss: [][]i32) : ([]i32, [][]i32) = (reduce (map2 (+)) (replicate k 0) xss, scan (map2 (+)) (replicate k 0) xss)",
        "2i64 [[1, 2], [3, 4]]",
        "[4i32, 6i32]\n[[1i32, 2i32], [4i32, 6i32]]",
    );
    assert!(run(
        "entry main (k: i64) (xss: [][]i32) : []i32 = reduce (map2 (+)) (replicate k 0) xss",
        "main",
        "3i64 [[1, 2], [3, 4]]"
    )
    .is_err());
}

#[test]
fn unflatten_and_split_with_inferred_sizes() {
    check_run(
        "entry main (n: i64) (m: i64) : [n][m]i64 = unflatten (iota (n * m))",
        "2i64 3i64",
        "[[0i64, 1i64, 2i64], [3i64, 4i64, 5i64]]",
    );
    check_run(
        "entry main [n] [m] (xs: [n]i32) (ys: [m]i32) : ([n]i32, [m]i32) = split (ys ++ xs :> [n+m]i32)",
        "[1, 2] [3, 4, 5]",
        "[3i32, 4i32]\n[5i32, 1i32, 2i32]",
    );
    check_run(
        "entry main (k: i64) : [2][k][1]i64 = unflatten_3d (iota (2 * k * 1))",
        "2i64",
        "[[[0i64], [1i64]], [[2i64], [3i64]]]",
    );
    // The sizes are checked at run time.
    let e = run(
        "entry main [k] (xs: [k]i32) : [2][2]i32 = unflatten (xs :> [2*2]i32)",
        "main",
        "[1, 2, 3]",
    )
    .expect_err("unflatten of 3 elements into 2x2");
    assert!(e.contains("size"), "{e}");
    let e = run(
        "entry main [k] (xs: [k]i32) : ([1]i32, [1]i32) = split (xs :> [1+1]i32)",
        "main",
        "[1, 2, 3]",
    )
    .expect_err("split of 3 elements into 1 + 1");
    assert!(e.contains("size"), "{e}");
}

#[test]
fn function_composition() {
    check_run(
        "entry main (x: i32) : (i32, i32, []i32) = (((+ 1) >-> (* 2)) x, ((+ 1) <-< (* 2)) x, map (f64.i32 >-> f64.sqrt >-> i32.f64) [x, 9])",
        "4",
        "10i32\n9i32\n[2i32, 3i32]",
    );
}

/// A chain `f_i x = f_{i-1} (f_{i-1} x)` (issue 16, item 6): `2^n` calls once inlined. 10
/// levels lower and run; 40 levels (30 used to take more than 6 GB and abort) are rejected as
/// not supported at a call, once the entry point's size budget runs out.
#[test]
fn a_doubling_call_chain_is_inlined_up_to_a_size_budget() {
    use crate::testing::nests::call_chain;
    check_run(&call_chain(10), "5", "1029i32");
    let src = call_chain(40);
    let (l, sources) = lower_src(&src);
    assert!(l.program.funs.is_empty());
    let [(entry, d)] = l.entry_errors.as_slice() else {
        panic!("expected one entry error, got {:?}", l.entry_errors);
    };
    assert_eq!(entry, "main");
    assert!(d.not_supported, "{}", d.render(&sources));
    assert!(
        d.message.contains(&MAX_LOWERED_NAMES.to_string()),
        "{}",
        d.message
    );
    // At a call of one of the chain's functions, in the user's file.
    let at = &src[d.span.lo as usize..d.span.hi as usize];
    assert!(at.starts_with('f') && at.contains('('), "{at:?}");
    assert_eq!(&*sources.file(d.span.file).name, "test.fut");
}

/// Generated code nests deeply (issue 16, item 8): 66 nested parentheses, a 2001-term sum,
/// about 1990 `let`s and a chain of 201 calls used to be rejected (the last as "recursive
/// functions" although the type checker accepts it). The limits are 10,000 levels now
/// (docs/language.md), on threads with large stacks; these compile and run.
#[test]
fn deeply_nested_generated_code_compiles_and_runs() {
    use crate::prim::PrimValue;
    let n = 9_900;
    let run = |src: &str| {
        let c = crate::compile("deep.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        match c
            .run_interp("main", vec![crate::value::Value::Scalar(PrimValue::I32(2))])
            .expect("runs")
            .as_slice()
        {
            [crate::value::Value::Scalar(PrimValue::I32(v))] => *v,
            other => panic!("expected one i32, got {other:?}"),
        }
    };
    let parens = format!(
        "entry main (x: i32) : i32 = {}x{}",
        "(".repeat(n),
        ")".repeat(n)
    );
    assert_eq!(run(&parens), 2);
    let sum = format!("entry main (x: i32) : i32 = {}", vec!["x"; n].join(" + "));
    assert_eq!(run(&sum), 2 * n as i32);
    let lets: String = (0..n)
        .map(|i| format!("let x{} = x{i} + 1 in ", i + 1))
        .collect();
    let lets = format!("entry main (x0: i32) : i32 = {lets}x{n}");
    assert_eq!(run(&lets), 2 + n as i32);
    let mut chain = String::from("def f0 (x: i32) : i32 = x\n");
    for i in 1..=1000 {
        chain += &format!("def f{i} (x: i32) : i32 = f{} (x + 1)\n", i - 1);
    }
    chain += "entry main (x: i32) : i32 = f1000 x\n";
    assert_eq!(run(&chain), 1002);
}
