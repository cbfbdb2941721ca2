//! Inner `map`s a thread stores instead of recomputing (`codegen::reuse`), per-thread arrays
//! interleaved between the threads (`codegen::scratch`), and `map`s that stay lazy because
//! only the next reduction reads them: each program against the interpreter.
mod common;
use vkad_core::values::parse_values;

fn vals(s: &str) -> Vec<vkad_core::value::Value> {
    parse_values(s.as_bytes()).unwrap()
}

/// `common::same`, and the same with the nests' outer parallelism chosen at every size
/// (`nest=1`), so that the inner `map`s are the code of one thread of a `segmap` kernel rather
/// than flattened into kernels of their own.
fn same(src: &str, args: Vec<vkad_core::value::Value>) {
    common::same(src, "main", args.clone());
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let want = c.run_interp("main", args.clone()).unwrap();
    let ctx = common::ctx();
    let th = vkad_spirv::runtime::tuned_thresholds(&ctx, &["nest=1".to_string()]).unwrap();
    let (got, _) = vkad_spirv::run_entry_kernels(&ctx, &c, "main", args, &th, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let ms = vkad_core::testing::compare_values(&got, &want);
    let ms: Vec<String> = ms.iter().map(|m| m.to_string()).collect();
    assert!(ms.is_empty(), "mismatch with nest=1: {ms:?}\nsrc:\n{src}");
}

/// An `f64` matrix of `m` rows of `n` numbers, element `(r, j)` being `f(r, j)`, as data text.
fn matrix(m: usize, n: usize, f: impl Fn(usize, usize) -> f64) -> String {
    let row = |r: usize| {
        let xs: Vec<String> = (0..n).map(|j| format!("{}f64", f(r, j))).collect();
        format!("[{}]", xs.join(", "))
    };
    format!("[{}]", (0..m).map(row).collect::<Vec<_>>().join(", "))
}

/// Sixteen rows of `n` numbers with varied digits.
fn rows(n: usize) -> String {
    matrix(16, n, |r, j| ((r * 7 + j * 3) % 11) as f64 * 0.25 - 1.0)
}

fn square(n: usize) -> String {
    matrix(n, n, |r, j| ((r * 5 + j) % 7) as f64 * 0.5 - 1.5)
}

/// GMM's shape: a matrix-vector product whose rows the transposed product reads in its loop
/// (stored), of `x - mu` (stored: two loads per element, read in loops), whose products feed
/// reductions directly (lazy, though they read stored arrays).
#[test]
fn matrix_vector_products_and_their_transposes() {
    let src = "entry main [n] (xs: [][n]f64) (mu: [n]f64) (q: [n][n]f64) : [][n]f64 =
  map (\\x -> let d = map2 (-) x mu
             let ys = map (\\row -> f64.sum (map2 (*) row d)) q
             in map (\\j -> f64.sum (map (\\i -> ys[i] * q[i, j] + d[j]) (iota n))) (iota n)) xs";
    for n in [1, 3, 10] {
        let mu: Vec<String> = (0..n).map(|j| format!("{}f64", j as f64 * 0.125)).collect();
        let args = format!("{} [{}] {}", rows(n), mu.join(", "), square(n));
        same(src, vals(&args));
    }
}

/// A stored row read again after the array it was computed from is updated in place keeps
/// the old values; a lazy `map` reduced at once reads the array before the update.
#[test]
fn stored_and_reduced_maps_see_the_arrays_before_later_updates() {
    let src = "entry main [n] (xs: [][n]f64) : []f64 =
  map (\\x -> let a = copy x with [0] = 2
             let s = f64.sum (map (\\v -> v * 3) a)
             let b = map (\\v -> v + s) a
             let a = a with [1] = 100
             in s + b[1] + a[1] + f64.sum (map (\\i -> b[i] * a[i]) (iota n))) xs";
    for n in [2, 5, 12] {
        same(src, vals(&rows(n)));
    }
}

/// A multi-dimensional lazy array flattened in a thread is copied into (interleaved)
/// per-thread memory and read back with the new shape; a loop double-buffers an array there.
#[test]
fn flattened_and_loop_carried_per_thread_arrays() {
    let src = "entry main [n] (xs: [][n]f64) (m: i64) : []f64 =
  map (\\x -> let f = flatten (map (\\i -> map (\\v -> v + f64.i64 i) x) (iota 3))
             let a = loop a = copy x for k < m do map (\\i -> a[(i + k) % n] * 0.5 + f[i]) (iota n)
             in f[n + 1] + f64.sum a) xs";
    for n in [2, 7] {
        same(src, vals(&format!("{} 4i64", rows(n))));
    }
}

/// The rows of a `map` computed at once: a lazy row result is written straight into them,
/// except where the row's code updates in place an array that result reads.
#[test]
fn returned_lazy_rows_and_later_updates() {
    let src = "entry main [n] (xs: [][n]f64) : [][n]f64 =
  map (\\x -> let d = map (\\v -> v * 0.5) (copy x with [0] = 3)
             let rs = map (\\j -> let a = copy d with [0] = f64.i64 j
                                 let b = map (\\v -> v * 2 + a[1]) a
                                 let a = a with [1] = 100
                                 in (b, map (\\v -> v + d[j % n]) a)) (iota 4)
             let (bs, cs) = unzip rs
             in map (\\i -> f64.sum (map (\\r -> r[i]) bs) + f64.sum (map (\\r -> r[i]) cs) + bs[i % 4, i]) (iota n)) xs";
    for n in [2, 6] {
        same(src, vals(&rows(n)));
    }
}
