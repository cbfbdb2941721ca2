//! Worked cases of the flattening rules: the kernels a program becomes.

use crate::ir::SubExp;
use crate::seg::{HostBody, HostExp, SegKind, SegOp, ThresholdKind};

/// The kernels of entry `entry` of `src`, in program order (both versions of a versioned nest).
fn kernels(src: &str, entry: &str) -> Vec<SegOp> {
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::flatten_program(&c.ir);
    let f = p.entry(entry).expect("entry");
    let mut out = Vec::new();
    collect(&f.body, &mut out);
    out
}

fn collect(b: &HostBody, out: &mut Vec<SegOp>) {
    for s in &b.stms {
        match &s.exp {
            HostExp::Seg(op) => out.push(op.clone()),
            HostExp::If { then_b, else_b, .. } => {
                collect(then_b, out);
                collect(else_b, out);
            }
            HostExp::VersionedLoop { par, seq, .. } => {
                collect(par, out);
                collect(seq, out);
            }
            HostExp::Loop { body, .. } => collect(body, out),
            HostExp::WithAcc { lam, .. } => collect(&lam.body, out),
            _ => {}
        }
    }
}

fn shape(ks: &[SegOp]) -> Vec<(&'static str, usize)> {
    ks.iter()
        .map(|k| (k.kind.name(), k.space.dims.len()))
        .collect()
}

#[test]
fn perfect_nest_of_three_maps_is_one_segmap_over_three_dimensions() {
    let ks = kernels(
        "entry main (a: [][][]f32) = map (map (map (\\x -> x * 2 + 1))) a",
        "main",
    );
    assert_eq!(shape(&ks), vec![("segmap", 3)]);
}

#[test]
fn map_of_reduce_is_a_segmented_reduction_with_the_producer_fused() {
    let ks = kernels(
        "entry main (a: [][]f32) = map (\\r -> f32.sum (map (\\x -> x * x) r)) a",
        "main",
    );
    assert_eq!(shape(&ks), vec![("segred", 2)]);
}

#[test]
fn host_level_reduce_of_map_is_one_kernel() {
    let ks = kernels(
        "entry main (xs: []f64) (ys: []f64) = f64.sum (map2 (*) xs ys)",
        "main",
    );
    assert_eq!(shape(&ks), vec![("segred", 1)]);
}

#[test]
fn scalar_prefix_is_sunk_into_the_inner_map() {
    let ks = kernels(
        "entry main (a: [][]f32) (b: []f32) = map2 (\\r y -> let z = y * 2 in map (\\x -> x + z) r) a b",
        "main",
    );
    assert_eq!(shape(&ks), vec![("segmap", 2)]);
}

#[test]
fn map_with_two_inner_operations_is_distributed_and_versioned() {
    let ks = kernels(
        "entry main (a: [][]f32) = map (\\r -> let s = f32.sum r in map (\\x -> x / s) r) a",
        "main",
    );
    // Sequential version, then the distributed one: a segmented reduction and a 2-D map.
    assert_eq!(
        shape(&ks),
        vec![("segmap", 1), ("segred", 2), ("segmap", 2)]
    );
}

#[test]
fn array_statements_of_a_distributed_nest_are_kernels_over_their_rows() {
    // A one-hot row per thread (`replicate`, then an update of one element), a copy of a
    // row of the input, then two reductions: distributed, the array statements are kernels
    // over the nest and the row, the update one thread per element written.
    let src = "entry main [n] (xs: [n]f32) : ([n]f32, [n]f32) =
                 unzip (map (\\i -> let e = replicate n 0f32 with [i] = 1f32
                                    let c = copy xs
                                    in (f32.sum (map2 (*) e xs), f32.sum (map (* 2) c)))
                            (iota n))";
    let ks = kernels(src, "main");
    let writes = |k: &SegOp| {
        k.body
            .results
            .iter()
            .filter(|r| matches!(r, crate::seg::KernelResult::Write { .. }))
            .count()
    };
    // The sequential version (one thread per point), then: the replicate (2-D), the update
    // (1-D, one write per thread), the copy (2-D) and the two reductions.
    assert_eq!(
        shape(&ks),
        vec![
            ("segmap", 1),
            ("segmap", 2),
            ("segmap", 1),
            ("segmap", 2),
            ("segred", 2),
            ("segred", 2)
        ]
    );
    assert_eq!(writes(&ks[2]), 1);
    check_both_versions(src, "main", "[1f32, 2f32, 4f32]");
}

#[test]
fn an_iota_of_a_distributed_nest_is_a_kernel_over_its_indices() {
    // A row of indices per thread, then two reductions over it: distributed, the `iota` is
    // one `segmap` over the nest and the row, each thread computing its own element
    // `start + i·stride`, instead of one thread writing a whole row.
    let src = "entry main [n] (xs: [n]i64) (k: i64) : [n]i64 =
                 map (\\x -> let is = iota k
                              in i64.sum (map (+ x) is) + i64.maximum (map (* x) is))
                     xs";
    let ks = kernels(src, "main");
    let iotas: Vec<&SegOp> = ks
        .iter()
        .filter(|k| {
            k.kind == SegKind::Map
                && k.space.dims.len() == 2
                && k.body
                    .stms
                    .iter()
                    .all(|s| matches!(s.exp, crate::ir::Exp::BinOp(..)))
        })
        .collect();
    assert_eq!(iotas.len(), 1, "{:?}", shape(&ks));
    check_both_versions(src, "main", "[1i64, -5i64, 7i64] 1000i64");
}

#[test]
fn histogram_per_row_is_a_segmented_histogram() {
    let ks = kernels(
        "entry main (is: [][]i64) (vs: [][]f32) = map2 (\\i v -> reduce_by_index (replicate 4 0f32) (+) 0 i v) is vs",
        "main",
    );
    assert!(shape(&ks).contains(&("seghist", 2)), "{:?}", shape(&ks));
    assert!(matches!(ks.last().unwrap().kind, SegKind::Hist(_)));
}

/// Every test program and example flattens into kernel IR that passes the checker (the
/// results are compared with the interpreter's in tests/tests/kernels.rs).
#[test]
fn every_test_program_flattens_into_checked_kernel_ir() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests/programs", "tests/programs/kernels", "examples"] {
        for e in std::fs::read_dir(root.join(dir)).expect("directory") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "fut") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let Ok(c) = crate::compile(&f.display().to_string(), &text) else {
            continue;
        };
        let k = super::extract_kernels(&c.ir);
        if let Err(e) = crate::seg::check::check_program(&k) {
            failures.push(format!("{}: {e}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn seg_locs(b: &HostBody, out: &mut Vec<Option<crate::diag::SrcLoc>>) {
    for s in &b.stms {
        match &s.exp {
            HostExp::Seg(_) => out.push(s.loc.clone()),
            HostExp::If { then_b, else_b, .. } => {
                seg_locs(then_b, out);
                seg_locs(else_b, out);
            }
            HostExp::VersionedLoop { par, seq, .. } => {
                seg_locs(par, out);
                seg_locs(seq, out);
            }
            HostExp::Loop { body, .. } => seg_locs(body, out),
            HostExp::WithAcc { lam, .. } => seg_locs(&lam.body, out),
            _ => {}
        }
    }
}

/// AD and fusion make statements without a source location; their kernels are named by the
/// host statement they came from (profiles and errors need a location).
#[test]
fn kernels_of_generated_code_have_the_host_statement_s_location() {
    let src = "def f [m] (r: [m]f64) : [m]f64 = let s = f64.sum (map (\\x -> x * x) r) in map (\\x -> x / s) r\n\
               entry grad [n][m] (a: [n][m]f64) (b: [n][m]f64) : [n][m]f64 = vjp (map f) a b";
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::extract_kernels(&c.ir);
    let mut locs = Vec::new();
    seg_locs(&p.entry("grad").expect("entry").body, &mut locs);
    assert!(locs.len() >= 3, "{} kernels", locs.len());
    assert!(locs.iter().all(|l| l.is_some()), "{locs:?}");
}

#[test]
fn host_loop_with_kernels_is_versioned_with_a_one_thread_version() {
    let src = "entry main [n] (xs: [n]f64) (k: i64) : f64 =
      let (_, s) = loop (ys, s) = (xs, 0f64) for _i < k do
        let ys' = map (\\y -> y * 2) ys
        in (ys', s + f64.sum ys')
      in s";
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::flatten_program(&c.ir);
    crate::seg::check::check_program(&p).expect("kernel IR checks");
    let f = p.entry("main").expect("entry");
    let th = f.body.stms.iter().find_map(|s| match &s.exp {
        HostExp::Threshold { name, .. } => Some(name.to_string()),
        _ => None,
    });
    assert!(th.is_some_and(|n| n.starts_with("loop_par_")));
    let (then_b, else_b) = f
        .body
        .stms
        .iter()
        .find_map(|s| match &s.exp {
            HostExp::VersionedLoop { par, seq, .. } => Some((par, seq)),
            _ => None,
        })
        .expect("the versions");
    assert!(matches!(
        then_b.stms[..],
        [crate::seg::HostStm {
            exp: HostExp::Loop { .. },
            ..
        }]
    ));
    let mut seq = Vec::new();
    collect(else_b, &mut seq);
    assert_eq!(shape(&seq), vec![("segmap", 1)]);
    assert_eq!(seq[0].space.dims[0].1, crate::ir::SubExp::i64(1));
}

/// The one-thread version of a `for` loop runs in chunks of `Thresholds::seq_chunk`
/// iterations (one launch each, the loop's values carried by the host): every chunk size gives
/// the interpreter's results, including the loop index seen by the body, zero iterations and
/// a chunk larger than the loop.
#[test]
fn one_thread_loop_in_chunks_gives_the_same_results_for_every_chunk_size() {
    use crate::prim::PrimValue;
    use crate::value::{ArrayValue, Buffer, Value};
    let src = "entry main [n] (xs: [n]f64) (k: i64) : ([n]f64, f64) =
      loop (ys, s) = (xs, 0f64) for i < k do
        let ys' = map (\\y -> y * 0.5 + f64.i64 i) ys
        in (ys' with [i % n] = s, s + f64.sum ys')";
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::flatten_program(&c.ir);
    let f = p.entry("main").expect("entry");
    assert!(
        f.body
            .stms
            .iter()
            .any(|s| matches!(&s.exp, HostExp::VersionedLoop { chunk: Some(_), .. })),
        "the loop is versioned with a chunked one-thread version"
    );
    let xs = Value::Array(ArrayValue {
        shape: vec![3],
        data: Buffer::F64(vec![1.0, -2.0, 4.0]),
    });
    for k in [0i64, 1, 7] {
        let args = || vec![xs.clone(), Value::Scalar(PrimValue::I64(k))];
        let want = c.run_interp("main", args()).expect("interpreter");
        for chunk in [1, 2, 3, 100] {
            let mut th = crate::seg::Thresholds::all(i64::MAX);
            th.set(&format!("seq_chunk={chunk}")).unwrap();
            let (got, stats) = c.run_kernels("main", args(), &th).expect("kernel IR");
            assert_eq!(got, want, "k = {k}, chunk = {chunk}");
            // One launch of the one-thread kernel per chunk.
            let launches = stats.by_kind.get("segmap").copied().unwrap_or(0) as i64;
            assert_eq!(
                launches,
                (k + chunk - 1) / chunk,
                "k = {k}, chunk = {chunk}"
            );
        }
    }
    let mut th = crate::seg::Thresholds::default();
    for bad in ["seq_chunk=0", "loop", "=3", "nest=x"] {
        assert!(th.set(bad).is_err(), "{bad}");
    }
}

/// A tape of a chunked one-thread loop (reverse-mode AD's checkpoints of a loop's values: an
/// array the body only writes, row `i` at iteration `i`) is not carried through the kernel:
/// the thread returns its chunk's rows and the host copies them into place, so that a launch
/// moves the rows it makes rather than the whole tape. Every chunk size gives the
/// interpreter's gradient.
#[test]
fn a_tape_of_a_chunked_one_thread_loop_is_written_a_chunk_of_rows_at_a_time() {
    use crate::prim::PrimValue;
    use crate::value::{ArrayValue, Buffer, Value};
    let src = "entry main [n] (xs: [n]f64) (k: i64) : [n]f64 =
      vjp (\\xs -> let (ys, s) = loop (ys, s) = (xs, 0f64) for i < k do
                       let ys' = map (\\y -> f64.sin y * 0.5 + f64.i64 i) ys
                       in (ys', s + f64.sum (map2 (*) ys' ys))
                     in s + f64.sum ys) xs 1";
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::flatten_program(&c.ir);
    let printed = crate::seg::print::program_to_string(&p);
    assert!(
        printed.contains(":+chunk_len"),
        "a chunk's rows are copied into the tape on the host:\n{printed}"
    );
    let xs = Value::Array(ArrayValue {
        shape: vec![3],
        data: Buffer::F64(vec![1.0, -2.0, 4.0]),
    });
    for k in [0i64, 1, 5] {
        let args = || vec![xs.clone(), Value::Scalar(PrimValue::I64(k))];
        let want = c.run_interp("main", args()).expect("interpreter");
        for chunk in [1, 2, 3, 100] {
            let mut th = crate::seg::Thresholds::all(i64::MAX);
            th.set(&format!("seq_chunk={chunk}")).unwrap();
            let (got, _) = c.run_kernels("main", args(), &th).expect("kernel IR");
            assert_eq!(got, want, "k = {k}, chunk = {chunk}");
        }
    }
}

#[test]
fn reduction_of_a_map_with_inner_parallelism_is_versioned_and_split() {
    // The producer `map` has an inner reduction: fused, each thread of the segred sums a row
    // sequentially; split, the rows are a segmented reduction and the outer sum reads them.
    let src = "entry main (a: [][]f32) = f32.sum (map (\\r -> f32.sum r * 2) a)";
    let ks = kernels(src, "main");
    assert_eq!(
        shape(&ks),
        vec![("segred", 1), ("segred", 2), ("segmap", 1), ("segred", 1)],
        "the fused version, then the split one (the rows' sums, their doubling, the sum)"
    );
    check_both_versions(src, "main", "[[1f32, 2f32, 3f32], [4f32, 5f32, 6f32]]");
}

#[test]
fn with_acc_in_a_nest_is_interchanged_with_the_nest() {
    // A GMM gradient: the reverse sweep of the map over points accumulates each point's
    // adjoint from the inner map over the components in a `with_acc` inside the map.
    // Distributed, that `with_acc` is one host `with_acc` over all points ([n][d]).
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/programs/kernels/gmm.fut");
    let src = std::fs::read_to_string(path).expect("gmm.fut");
    let c = crate::compile("gmm.fut", &src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::extract_kernels(&c.ir);
    crate::seg::check::check_program(&p).expect("checked kernel IR");
    fn host_with_acc_over(b: &HostBody, dims: usize) -> bool {
        b.stms.iter().any(|s| match &s.exp {
            HostExp::WithAcc { inputs, lam } => {
                inputs.iter().any(|i| i.shape.len() == dims) || host_with_acc_over(&lam.body, dims)
            }
            HostExp::If { then_b, else_b, .. } => {
                host_with_acc_over(then_b, dims) || host_with_acc_over(else_b, dims)
            }
            _ => false,
        })
    }
    let f = p.entry("grad").expect("entry");
    assert!(
        host_with_acc_over(&f.body, 2),
        "a host with_acc over [n][d]:\n{}",
        crate::seg::print::program_to_string(&p)
    );
    check_both_versions(
        &src,
        "grad",
        "2.0 [[0.0, 1.0], [1.0, -1.0]] [0.5, -0.5] [[0.0, 0.0], [1.0, 1.0]] [[0.1, -0.2], [0.0, 0.3]]",
    );
}

/// Runs `entry` on the kernel IR with every nest sequentialised and with every nest
/// distributed, and compares both with the interpreter.
fn check_both_versions(src: &str, entry: &str, args: &str) {
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let args = || crate::values::parse_values(args.as_bytes()).expect("values");
    let want = c.run_interp(entry, args()).expect("interpreter");
    for nest in [0, i64::MAX] {
        let mut th = crate::seg::Thresholds::default();
        th.set(&format!("nest={nest}")).unwrap();
        let (got, _) = c.run_kernels(entry, args(), &th).expect("kernel IR");
        assert_eq!(got, want, "nest threshold {nest}");
    }
}

#[test]
fn accumulator_updates_from_many_threads_become_a_versioned_segmented_reduction() {
    // k-means' Newton step: the reverse sweep sums every point's contribution into the
    // [k][d] adjoint of the centres, a kernel over (n, k, d) updating element (j, l) from n
    // threads. Rule 7 versions it with a reduction over n, then one update per element.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/programs/kernels/kmeans.fut");
    let src = std::fs::read_to_string(path).expect("kmeans.fut");
    let c = crate::compile("kmeans.fut", &src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::extract_kernels(&c.ir);
    crate::seg::check::check_program(&p).expect("checked kernel IR");
    fn acc_versions(b: &HostBody, out: &mut Vec<(SegOp, SegOp)>) {
        for s in &b.stms {
            match &s.exp {
                HostExp::If { then_b, else_b, .. } => {
                    // The reduction's version: a segred whose space is the updated element's
                    // indices plus the reduced one (or, in its other version, a segmap over
                    // the elements summing in each thread), then a segmap over the elements.
                    if let [.., red, upd] = then_b.stms.as_slice() {
                        if let (
                            HostExp::If {
                                then_b: by_thread,
                                else_b: by_seg,
                                nest_versions: true,
                                ..
                            },
                            HostExp::Seg(u),
                        ) = (&red.exp, &upd.exp)
                        {
                            // Per thread: the pieces' sums, then each element's.
                            if let ([.., t], [r]) =
                                (by_thread.stms.as_slice(), by_seg.stms.as_slice())
                            {
                                if let (HostExp::Seg(t), HostExp::Seg(r)) = (&t.exp, &r.exp) {
                                    if matches!(r.kind, SegKind::Red(_))
                                        && t.kind == SegKind::Map
                                        && u.kind == SegKind::Map
                                        && r.space.dims.len() == u.space.dims.len() + 1
                                        && t.space.dims.len() == u.space.dims.len()
                                    {
                                        out.push((r.clone(), u.clone()));
                                    }
                                }
                            }
                        }
                    }
                    acc_versions(then_b, out);
                    acc_versions(else_b, out);
                }
                HostExp::WithAcc { lam, .. } => acc_versions(&lam.body, out),
                HostExp::VersionedLoop { par, seq, .. } => {
                    acc_versions(par, out);
                    acc_versions(seq, out);
                }
                HostExp::Loop { body, .. } => acc_versions(body, out),
                _ => {}
            }
        }
    }
    let f = p.entry("newton").expect("entry");
    let mut found = Vec::new();
    acc_versions(&f.body, &mut found);
    let printed = crate::seg::print::program_to_string(&p);
    assert!(
        found
            .iter()
            .any(|(r, u)| r.space.dims.len() == 3 && u.space.dims.len() == 2),
        "a segred over (k, d, n) and a segmap over (k, d):\n{printed}"
    );
    assert!(printed.contains("acc_threshold(acc_red_"), "{printed}");
    // Both versions agree with the interpreter.
    let args = "[[0.0, 0.0], [4.0, 4.0], [1.0, 2.0], [3.0, 3.5]] [[1.0, 0.0], [3.0, 5.0]]";
    let args = || crate::values::parse_values(args.as_bytes()).expect("values");
    let want = c.run_interp("newton", args()).expect("interpreter");
    for (v, s) in [(0, 0), (0, i64::MAX), (i64::MAX, 0)] {
        let mut th = crate::seg::Thresholds::default();
        th.set(&format!("acc_red={v}")).unwrap();
        th.set(&format!("seg_threads={s}")).unwrap();
        let (got, _) = c.run_kernels("newton", args(), &th).expect("kernel IR");
        assert_eq!(got, want, "acc_red threshold {v}, seg_threads {s}");
    }
}

#[test]
fn gmm_gradient_materialises_no_per_point_adjoint_of_the_q_matrices() {
    // ADBench GMM's gradient: the map over points reads the clusters' Q matrices ([K][d][d])
    // as rows of an inner map over clusters, whose adjoints of them are that map's results,
    // inside the with_acc of the point's own adjoint. Fusion moves the outer accumulator's
    // updating map into that with_acc (fusion rule 7), where it fuses with the inner map, so
    // no kernel returns the [n][K][d][d] array of every point's adjoint rows (8.2 GB at the
    // paper's n = 10,000, d = 64, K = 25, over a GPU's largest buffer): every array the kernel
    // IR binds with a dimension of n points has rank at most 3 (the `[K][d][d][8]` partial
    // sums of rule 7's pieces have rank 4).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/paper");
    let src = std::fs::read_to_string(root.join("gmm.fut")).expect("gmm.fut");
    let c = crate::compile("gmm.fut", &src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::extract_kernels(&c.ir);
    crate::seg::check::check_program(&p).expect("checked kernel IR");
    fn max_rank(b: &HostBody, n: &SubExp) -> usize {
        b.stms
            .iter()
            .map(|s| {
                let own = s
                    .pat
                    .elems
                    .iter()
                    .filter(|e| e.ty.shape().contains(n))
                    .map(|e| e.ty.rank())
                    .max()
                    .unwrap_or(0);
                let inner = s
                    .exp
                    .host_bodies()
                    .into_iter()
                    .map(|b| max_rank(b, n))
                    .max();
                own.max(inner.unwrap_or(0))
            })
            .max()
            .unwrap_or(0)
    }
    let printed = crate::seg::print::program_to_string(&p);
    let f = p.entry("grad").expect("entry");
    let n = SubExp::Var(f.size_params[0].clone());
    let rank = max_rank(&f.body, &n);
    assert!(
        rank <= 3,
        "an array of rank {rank} with a dimension {n} in the kernel IR:\n{printed}"
    );
    // The flattened version stores the points' `[K][d]` vectors its updates need, and
    // reduces the updates over the points (`acc_store::materialize`, rule 7).
    assert!(printed.contains("_rows_"), "{printed}");
    // The per-point and the flattened versions agree with the interpreter, the flattened
    // one with its reductions as a thread per element and as segmented reductions.
    let data = std::fs::read(root.join("small/gmm_small.in")).expect("gmm_small.in");
    let args = || crate::values::parse_values(&data).expect("values");
    let want = c.run_interp("grad", args()).expect("interpreter");
    for (v, s) in [(0, 0), (i64::MAX, 0), (i64::MAX, i64::MAX)] {
        let mut th = crate::seg::Thresholds::default();
        th.set(&format!("nest={v}")).unwrap();
        th.set(&format!("seg_threads={s}")).unwrap();
        let (got, _) = c.run_kernels("grad", args(), &th).expect("kernel IR");
        let mismatches = crate::testing::compare_values(&got, &want);
        assert!(
            mismatches.is_empty(),
            "nest {v}, seg_threads {s}: {mismatches:?}"
        );
    }
}

#[test]
fn costly_values_of_contended_updates_are_stored_and_the_updates_reduced() {
    // Every point adds the outer product of 2 (m x) and x into the adjoint of the matrix it
    // reads whole. The flattened kernel over (point, row) computes (m x)_i by an inner
    // reduction, then updates row i of the adjoint: the reduction is not cheap enough to
    // repeat per element, so a kernel stores it per point and row, and the updates, over
    // (point, row, column), become a reduction over the points (rule 7): a thread per
    // element summing over the points, or a segmented reduction, chosen by a `seg_threads`
    // threshold.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/programs/ad_vjp_outer_products.fut");
    let src = std::fs::read_to_string(path).expect("ad_vjp_outer_products.fut");
    let c = crate::compile("t.fut", &src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::extract_kernels(&c.ir);
    crate::seg::check::check_program(&p).expect("checked kernel IR");
    let printed = crate::seg::print::program_to_string(&p);
    assert!(printed.contains("_rows_"), "a stored value:\n{printed}");
    assert!(
        printed.contains("seg_threads_threshold(seg_threads_"),
        "a thread per element:\n{printed}"
    );
    let args = "[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.1, 0.2, 0.3]] \
                [[1.0, 0.5, -0.4], [0.2, 0.3, 0.4], [-0.7, 0.9, 1.1], [2.0, -1.0, 0.5]]";
    let args = || crate::values::parse_values(args.as_bytes()).expect("values");
    let want = c.run_interp("grad", args()).expect("interpreter");
    for nest in [0, i64::MAX] {
        for seg_threads in [0, i64::MAX] {
            for acc_red in [0, i64::MAX] {
                let mut th = crate::seg::Thresholds::default();
                th.set(&format!("nest={nest}")).unwrap();
                th.set(&format!("seg_threads={seg_threads}")).unwrap();
                th.set(&format!("acc_red={acc_red}")).unwrap();
                let (got, _) = c.run_kernels("grad", args(), &th).expect("kernel IR");
                let mismatches = crate::testing::compare_values(&got, &want);
                assert!(
                    mismatches.is_empty(),
                    "nest {nest}, seg_threads {seg_threads}, acc_red {acc_red}: {mismatches:?}"
                );
            }
        }
    }
}

#[test]
fn a_nest_contending_on_an_accumulator_its_flattened_version_reduces_gets_a_contended_threshold() {
    // k-means' Newton step: the per-point version of the reverse sweep adds each point's
    // one-hot adjoint into the [k][d] accumulator (every thread, the same elements), while
    // the flattened version reduces those updates (rule 7). So does GMM's gradient, since its
    // flattened version stores the values its updates need (`acc_store::materialize`).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/paper");
    let kinds = |file: &str| {
        let src = std::fs::read_to_string(root.join(file)).expect("source");
        let c = crate::compile(file, &src).unwrap_or_else(|e| panic!("{}", e.render()));
        let p = super::extract_kernels(&c.ir);
        crate::seg::check::check_program(&p).expect("checked kernel IR");
        fn walk(b: &HostBody, out: &mut Vec<ThresholdKind>) {
            for s in &b.stms {
                if let HostExp::Threshold { kind, .. } = &s.exp {
                    out.push(*kind);
                }
                s.exp.host_bodies().into_iter().for_each(|b| walk(b, out));
            }
        }
        let mut out = Vec::new();
        for f in &p.funs {
            walk(&f.body, &mut out);
        }
        (c, out, crate::seg::print::program_to_string(&p))
    };
    // Their sizes count the updates of the per-point versions (`i64::MAX` minus them).
    let counted = |printed: &str| {
        printed
            .lines()
            .filter(|l| l.contains("contended_threshold("))
            .all(|l| l.contains(") contended_headroom_"))
    };
    let (c, km, printed) = kinds("kmeans.fut");
    assert!(km.contains(&ThresholdKind::ContendedNest), "{km:?}");
    assert!(counted(&printed), "{printed}");
    let (_, gmm, printed) = kinds("gmm.fut");
    assert!(gmm.contains(&ThresholdKind::ContendedNest), "{gmm:?}");
    assert!(counted(&printed), "{printed}");
    // Both versions of the contended nests agree with the interpreter.
    let data = std::fs::read(root.join("small/kmeans_small.in")).expect("kmeans_small.in");
    let args = || crate::values::parse_values(&data).expect("values");
    let want = c.run_interp("newton", args()).expect("interpreter");
    for v in [0, i64::MAX] {
        let mut th = crate::seg::Thresholds::default();
        th.set(&format!("contended_nest={v}")).unwrap();
        let (got, _) = c.run_kernels("newton", args(), &th).expect("kernel IR");
        let mismatches = crate::testing::compare_values(&got, &want);
        assert!(mismatches.is_empty(), "contended_nest {v}: {mismatches:?}");
    }
}

/// Rule 5's fallback (module `host_map`): a nest whose threads filter and sort a row of a size
/// that depends on the thread (irregular: not distributable) is one `segmap` running that
/// sequentially, and also a host loop over the nest's points running the body's SOACs as
/// kernels of their own. The `segmap` is what runs by default, one launch; with
/// `host_map=0`, the loop runs, a few kernels per point; both give the interpreter's results.
#[test]
fn an_irregular_nest_with_inner_parallelism_also_runs_as_a_host_loop_over_its_points() {
    use crate::value::{ArrayValue, Buffer, Value};
    let src = "entry main [n][m] (xss: [n][m]i64) (ts: [n]i64) : [n]i64 =
      map2 (\\xs t -> let ys = filter (\\x -> x > t) xs
                     let k = length ys
                     in i64.sum (map (\\y -> y * k) ys) + i64.maximum (map (\\y -> y - t) ys)) xss ts";
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::flatten_program(&c.ir);
    let f = p.entry("main").expect("entry");
    let versioned = f.body.stms.iter().find_map(|s| match &s.exp {
        HostExp::VersionedLoop {
            par, seq, chunk, ..
        } => Some((par, seq, chunk)),
        _ => None,
    });
    let (par, seq, chunk) = versioned.expect("the nest is versioned");
    assert!(chunk.is_none());
    let mut seq_ks = Vec::new();
    collect(seq, &mut seq_ks);
    assert_eq!(shape(&seq_ks), vec![("segmap", 1)], "one thread per row");
    assert!(
        par.stms
            .iter()
            .any(|s| matches!(&s.exp, HostExp::Loop { .. })),
        "a host loop over the rows"
    );
    let mut par_ks = Vec::new();
    collect(par, &mut par_ks);
    assert!(
        par_ks.len() > 1,
        "the row's SOACs are kernels: {:?}",
        shape(&par_ks)
    );
    crate::seg::check::check_program(&p).expect("kernel IR check");
    let xss = Value::Array(ArrayValue {
        shape: vec![3, 4],
        data: Buffer::I64(vec![5, -1, 7, 2, 0, 0, 0, 0, 9, 8, 7, 6]),
    });
    let ts = Value::Array(ArrayValue {
        shape: vec![3],
        data: Buffer::I64(vec![1, -1, 6]),
    });
    let args = || vec![xss.clone(), ts.clone()];
    let want = c.run_interp("main", args()).expect("interpreter");
    // Row 0: ys = [5, 7, 2], k = 3: 42 + 6; row 1: [0, 0, 0, 0], k = 4: 0 + 1; row 2:
    // [9, 8, 7], k = 3: 72 + 3.
    assert_eq!(
        want,
        vec![Value::Array(ArrayValue {
            shape: vec![3],
            data: Buffer::I64(vec![48, 1, 75]),
        })]
    );
    let (got, stats) = c
        .run_kernels("main", args(), &crate::seg::Thresholds::default())
        .expect("kernel IR");
    assert_eq!(got, want);
    assert_eq!(stats.kernels, 1, "the sequentialised segmap alone");
    let mut th = crate::seg::Thresholds::default();
    th.set("host_map=0").unwrap();
    let (got, stats) = c.run_kernels("main", args(), &th).expect("kernel IR");
    assert_eq!(got, want);
    assert!(stats.kernels >= 3 * 2, "kernels per row: {stats:?}");
}

/// A nest of few threads with little work each (rows of a batch summed per hidden unit, as the
/// RNN's gradient does per gate) takes its sequentialised version by default although its size
/// is below the nest default: its `threshold` is or-ed with a `small_nest_threshold` whose size
/// is `i64::MAX` minus the version's work. With `small_nest=MAX` (or `nest=MAX`) it takes the
/// flattened version, with more kernels; a nest with much work (long rows) takes the flattened
/// version by default. All agree with the interpreter.
#[test]
fn a_nest_with_little_work_takes_its_sequentialised_version_whatever_its_size() {
    let src = "entry main [b][h] (xss: [b][h]f64) (ys: [h]f64) : [h]f64 =
      map2 (\\j y -> y + f64.sum (map (\\r -> r[j] * 2) xss)) (iota h) ys";
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::extract_kernels(&c.ir);
    crate::seg::check::check_program(&p).expect("checked kernel IR");
    let printed = crate::seg::print::program_to_string(&p);
    assert!(
        printed
            .lines()
            .any(|l| l.contains("small_nest_threshold(") && l.contains(") nest_work_headroom_")),
        "{printed}"
    );
    let args = |b: usize, h: usize| {
        let xs: Vec<String> = (0..b)
            .map(|i| {
                let row: Vec<String> = (0..h).map(|j| format!("{}f64", i * h + j)).collect();
                format!("[{}]", row.join(", "))
            })
            .collect();
        let ys: Vec<String> = (0..h).map(|j| format!("{j}f64")).collect();
        crate::values::parse_values(format!("[{}] [{}]", xs.join(", "), ys.join(", ")).as_bytes())
            .expect("values")
    };
    let run = |b: usize, h: usize, setting: Option<&str>| {
        let want = c.run_interp("main", args(b, h)).expect("interpreter");
        let mut th = crate::seg::Thresholds {
            nest_default: crate::seg::Thresholds::CPU_NEST_DEFAULT,
            ..Default::default()
        };
        if let Some(s) = setting {
            th.set(s).unwrap();
        }
        let (got, stats) = c.run_kernels("main", args(b, h), &th).expect("kernel IR");
        let mismatches = crate::testing::compare_values(&got, &want);
        assert!(mismatches.is_empty(), "{b}x{h} {setting:?}: {mismatches:?}");
        stats.kernels
    };
    // 8 threads of 64 rows: one kernel; flattened: more.
    let small = run(64, 8, None);
    assert_eq!(small, 1, "the sequentialised version");
    for s in ["small_nest=9223372036854775807", "nest=9223372036854775807"] {
        assert!(run(64, 8, Some(s)) > small, "{s}: the flattened version");
    }
    // 8 threads of 20,000 rows each (over the CPU's work limit): flattened.
    assert!(run(20000, 8, None) > 1, "much work: the flattened version");
}

#[test]
fn an_elementwise_map_fuses_into_its_producer_before_a_row_reader_can_take_it() {
    // `e` reads `a` element by element; `b` and `c` read whole rows of `a` and `e`. Fusing the
    // outer maps makes one lambda whose inner maps fuse in the next round: `e` must join `a`
    // (vertically) before horizontal fusion pairs it with `b`, which reads `a`'s rows and so
    // comes after a kernel boundary, or `c` would wait for a third kernel (the RNN gradient's
    // gates: each gate's adjoint was computed with the previous gate's matrix product).
    let src = "entry main [n][m] (xs: [n][m]f32) (w: [m][m]f32) : ([n][m]f32, [n][m]f32) =
      let a = map (map (\\x -> x * 2)) xs
      let b = map (\\r -> map (\\j -> f32.sum (map2 (*) r w[j])) (iota m)) a
      let e = map (map (\\x -> x + 1)) a
      let c = map (\\r -> map (\\j -> f32.sum (map2 (*) r w[j])) (iota m)) e
      in (b, c)";
    let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let p = super::extract_kernels(&c.ir);
    crate::seg::check::check_program(&p).expect("checked kernel IR");
    let mut ks = Vec::new();
    collect(&p.entry("main").expect("entry").body, &mut ks);
    // The flattened version: `a` and `e` in one kernel, both products in the next (their
    // reductions are the segmented reductions); before, `a` | `b` with `e` | `c`.
    assert_eq!(
        shape(&ks),
        vec![
            ("segmap", 1),
            ("segmap", 2),
            ("segmap", 2),
            ("segmap", 2),
            ("segred", 3),
            ("segred", 3)
        ],
        "{}",
        crate::seg::print::program_to_string(&p)
    );
    check_both_versions(
        src,
        "main",
        "[[1f32, 2f32], [3f32, 4f32], [5f32, 6f32]] [[1f32, 0f32], [2f32, -1f32]]",
    );
}
