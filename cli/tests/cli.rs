//! The `vkad` binary end to end: exit codes, stdin/stdout, error output.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn vkad(args: &[&str], stdin: &[u8]) -> Output {
    vkad_env(args, stdin, &[])
}

/// `vkad` with the pipeline cache in a directory of this test process (not the user's cache
/// directory) and the environment variables `env` set.
fn vkad_env(args: &[&str], stdin: &[u8], env: &[(&str, &std::path::Path)]) -> Output {
    let cache = std::env::temp_dir().join(format!("vkad-cli-cache-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_vkad"))
        .args(args)
        .env("VKAD_PIPELINE_CACHE", cache)
        .envs(env.iter().copied())
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vkad starts");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn tmp_program(name: &str, src: &str) -> String {
    let dir = std::env::temp_dir().join(format!("vkad-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, src).unwrap();
    path.display().to_string()
}

#[test]
fn run_reads_stdin_and_prints_results() {
    let p = tmp_program(
        "sum.fut",
        "entry main (xs: []i32) (k: i32): (i32, []i32) = (reduce (+) 0 xs, map (* k) xs)\n",
    );
    let out = vkad(&["run", &p], b"[1, 2, 3] 10");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "6i32\n[10i32, 20i32, 30i32]\n"
    );
}

#[test]
fn run_selects_entry_and_binary_output_round_trips() {
    let p = tmp_program(
        "two.fut",
        "entry a (x: f64): f64 = x * 2.0\nentry b (x: f64): f64 = x + 1.0\n",
    );
    let out = vkad(&["run", &p, "-e", "b"], b"1.5");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2.5f64\n");
    let bin = vkad(&["run", &p, "-e", "a", "--binary-output"], b"1.5");
    assert!(bin.status.success());
    assert_eq!(bin.stdout[0], b'b');
    let back = vkad_core::values::parse_values(&bin.stdout).unwrap();
    assert_eq!(
        back,
        vec![vkad_core::value::Value::Scalar(
            vkad_core::prim::PrimValue::F64(3.0)
        )]
    );
}

#[test]
fn program_errors_exit_1_with_location() {
    let p = tmp_program("bad.fut", "def main (x: i32): i32 = x +\n");
    let out = vkad(&["check", &p], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.fut:2:1") || err.contains("bad.fut:1:"),
        "{err}"
    );
    assert!(err.contains('^'), "{err}");
}

#[test]
fn runtime_errors_exit_1_with_location() {
    let p = tmp_program("oob.fut", "entry main (xs: []i32) (i: i64): i32 = xs[i]\n");
    let out = vkad(&["run", &p], b"[1, 2, 3] 7i64");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("oob.fut:1:"), "{err}");
    assert!(err.contains("out of bounds"), "{err}");
}

#[test]
fn bad_input_value_exits_1() {
    let p = tmp_program("id.fut", "entry main (x: i32): i32 = x\n");
    let out = vkad(&["run", &p], b"[1, 2");
    assert_eq!(out.status.code(), Some(1));
    let wrong_type = vkad(&["run", &p], b"1.5f32");
    assert_eq!(wrong_type.status.code(), Some(1));
}

/// Sizes that do not fit in an i64 are run-time errors with the location, on the interpreter
/// and the AD oracle (they used to wrap around: this printed `0i64` and exited 0).
#[test]
fn size_overflow_exits_1_with_location() {
    let p = tmp_program(
        "overflow.fut",
        "entry main (n: i64): i64 =\n  length (flatten (replicate n (replicate 1048576 1f32)))\n",
    );
    for backend in ["interp", "oracle"] {
        let out = vkad(&["run", &p, "-b", backend], b"17592186044416i64");
        assert_eq!(out.status.code(), Some(1), "{backend}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("overflow.fut:2:10: size overflow in `flatten`"),
            "{backend}: {err}"
        );
        let out = vkad(&["run", &p, "-b", backend], b"3i64");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "3145728i64\n");
    }
}

/// A literal out of range of its type is a compile-time error naming the value and the type,
/// with the location and a caret (it used to wrap around: `x + 300u8` added 44).
#[test]
fn literal_out_of_range_is_a_compile_error() {
    let p = tmp_program("lit.fut", "entry main (x: u8): u8 =\n  x + 300u8\n");
    let out = vkad(&["check", &p], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("literal 300 is out of range for type `u8`"),
        "{err}"
    );
    assert!(err.contains("lit.fut:2:7"), "{err}");
    assert!(err.contains("^^^^^ `u8` holds 0 to 255"), "{err}");
}

/// An input value out of range of its type is an error naming the value and the type (it used
/// to wrap around: `3000000000` was read as the i32 -1294967296).
#[test]
fn input_value_out_of_range_exits_1() {
    let p = tmp_program("id32.fut", "entry main (x: i32): i32 = x\n");
    let out = vkad(&["run", &p, "-b", "interp"], b"3000000000");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1:1: value 3000000000 is out of range for type i32"),
        "{err}"
    );
    let out = vkad(&["run", &p, "-b", "interp"], b"2147483647");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2147483647i32\n");
}

/// An allocation over the memory budget is a run-time error with the location, never an abort:
/// the budget is `--max-memory` (or `VKAD_MAX_MEMORY`), else the memory the machine has.
#[test]
fn allocations_over_the_budget_are_errors() {
    let p = tmp_program(
        "alloc.fut",
        "entry main (n: i64): f32 =\n  f32.sum (opaque (replicate n 1f32))\n",
    );
    let out = vkad(
        &["--max-memory", "1M", "run", &p, "-b", "interp"],
        b"1000000i64",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "alloc.fut:2:19: out of memory: needs 4000000 bytes, more than the limit of 1048576 \
             bytes (--max-memory)"
        ),
        "{err}"
    );
    let out = vkad(
        &["run", &p, "-b", "interp", "--max-memory", "4M"],
        b"1000000i64",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1000000.0f32\n");
    let dir = std::path::Path::new("100k");
    let out = vkad_env(
        &["run", &p, "-b", "oracle"],
        b"1000000i64",
        &[("VKAD_MAX_MEMORY", dir)],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of memory"));
    // Without a limit: 10^15 f32s are more than any machine has (this aborted the process).
    let out = vkad(&["run", &p, "-b", "interp"], b"1000000000000000i64");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("alloc.fut:2:19: out of memory: needs 4000000000000000 bytes"),
        "{err}"
    );
    // The AD oracle's tape is within the budget too (it grew until the process was killed).
    let p = tmp_program(
        "tape.fut",
        "entry main (n: i64) (x: f64): f64 =\n  vjp (\\x -> loop y = x for _i < n do y * 1.0000001) x 1\n",
    );
    let out = vkad(
        &["--max-memory", "64M", "run", &p, "-b", "oracle"],
        b"100000000i64 1.0",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tape.fut:2:") && err.contains("out of memory: the AD oracle's tape needs"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(vkad(&["frobnicate"], b"").status.code(), Some(2));
    assert_eq!(vkad(&["run"], b"").status.code(), Some(2));
}

#[test]
fn missing_entry_is_reported() {
    let p = tmp_program("noentry.fut", "entry main (x: i32): i32 = x\n");
    let out = vkad(&["run", &p, "-e", "nope"], b"1");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no entry point `nope`"));
}

#[test]
fn dump_ir_prints_the_entry() {
    let p = tmp_program(
        "dump.fut",
        "entry main (xs: []f32): f32 = reduce (+) 0 (map (* 2) xs)\n",
    );
    let out = vkad(&["dump-ir", &p], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ir = String::from_utf8_lossy(&out.stdout);
    assert!(ir.contains("main"), "{ir}");
    assert!(ir.contains("reduce"), "{ir}");
}

#[test]
fn test_command_reports_summary() {
    let p = tmp_program(
        "t.fut",
        "-- ==\n-- input { 1 } output { 2 }\n-- input { 2 } output { 5 }\nentry main (x: i32): i32 = x * 2\n",
    );
    let out = vkad(&["test", &p], b"");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.trim() == "1 passed, 1 failed, 0 skipped"),
        "{text}"
    );
}

#[test]
fn ad_report_shows_scopes_runs_and_checkpoints() {
    let p = tmp_program(
        "report.fut",
        "entry lp (x: f64) (n: i64) = vjp (\\x -> loop y = x for i < n do f64.sin y * y) x 1.0\n\
         entry m (xs: []f64) = vjp (map (\\x -> x * x)) xs (map (const 1.0) xs)\n",
    );
    let out = vkad(&["dump-ir", &p, "--ad-report"], b"");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("function lp"), "{text}");
    assert!(text.contains("loop at"), "{text}");
    assert!(text.contains("checkpoints:"), "{text}");
    assert!(text.contains("function m"), "{text}");
    assert!(text.contains("map at"), "{text}");
}

#[test]
fn unsupported_entry_reports_once_with_location() {
    let p = tmp_program(
        "ad.fut",
        "entry main (x: f64): f64 = vjp (\\c -> #[stripmine(100)] loop y = c for i < 4 do y * c) x 1.0\nentry ok (x: f64): f64 = x\n",
    );
    let out = vkad(&["run", &p], b"2.0");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: not supported: vjp of #[stripmine(100)]"),
        "{err}"
    );
    assert!(!err.contains("error: error"), "{err}");
    assert!(err.contains("ad.fut:1:28"), "{err}");
    // The program's other entry points still run.
    let ok = vkad(&["run", &p, "-e", "ok"], b"2.0");
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "2.0f64\n");
}

#[test]
fn devices_lists_the_vulkan_devices() {
    let out = vkad(&["devices"], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    match vkad_vk::list_devices() {
        Ok(devices) => {
            assert!(out.status.success(), "{err}");
            for d in &devices {
                assert!(text.contains(&d.name), "{text}");
            }
            assert!(text.contains("subgroup size"), "{text}");
            // CI installs lavapipe (mesa-vulkan-drivers).
            if std::env::var_os("CI").is_some() {
                assert!(text.contains("llvmpipe"), "{text}");
            }
        }
        Err(e) => {
            assert_eq!(out.status.code(), Some(1));
            assert!(err.contains("no Vulkan device"), "{err} ({e})");
            assert!(err.contains("mesa-vulkan-drivers"), "{err}");
        }
    }
    // With no driver for the loader to find: exit 1 and the install hint.
    let none = Command::new(env!("CARGO_BIN_EXE_vkad"))
        .arg("devices")
        .env("VK_ICD_FILENAMES", "/nonexistent/vkad-no-driver.json")
        .env("VK_DRIVER_FILES", "/nonexistent/vkad-no-driver.json")
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(1));
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(err.starts_with("error: no Vulkan device"), "{err}");
    assert!(
        err.contains("apt install mesa-vulkan-drivers libvulkan1"),
        "{err}"
    );
}

#[test]
fn spirv_writes_validated_modules_for_dot() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let dir = std::env::temp_dir().join(format!("vkad-spirv-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let prog = format!("{root}/examples/dot.fut");
    let input = format!("{root}/examples/dot.in");
    let out = vkad(
        &[
            "spirv",
            &prog,
            "-e",
            "main",
            "-o",
            dir.to_str().unwrap(),
            "--input",
            &input,
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    if err.contains("no Vulkan device") {
        eprintln!("skipped: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    let index = std::fs::read_to_string(dir.join("index.txt")).unwrap();
    let mut spv: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "spv"))
        .collect();
    spv.sort();
    assert!(!spv.is_empty(), "no modules written; index:\n{index}");
    for p in &spv {
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(
            index.contains(&format!("[{name}]")),
            "{name} not in index:\n{index}"
        );
        let bytes = std::fs::read(p).unwrap();
        assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "{name}: magic");
        let val = std::process::Command::new("spirv-val")
            .args(["--target-env", "vulkan1.2"])
            .arg(p)
            .output()
            .expect("spirv-val (spirv-tools) is needed");
        assert!(
            val.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&val.stderr)
        );
    }
    // dot is a map and a reduction: the index names them with their source locations.
    assert!(index.contains("bindings = "), "{index}");
    assert!(index.contains("dot.fut:"), "{index}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `.spv` files of a `vkad spirv` output directory, each checked with `spirv-val`: their
/// contents, sorted.
fn validated_modules(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let index = std::fs::read_to_string(dir.join("index.txt")).unwrap();
    let mut mods = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "spv") {
            continue;
        }
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        assert!(index.contains(&format!("[{name}]")), "{name} not in index");
        let val = std::process::Command::new("spirv-val")
            .args(["--target-env", "vulkan1.2"])
            .arg(&p)
            .output()
            .expect("spirv-val (spirv-tools) is needed");
        assert!(
            val.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&val.stderr)
        );
        mods.push(std::fs::read(&p).unwrap());
    }
    mods.sort();
    mods
}

/// `vkad spirv` without an input generates the modules from the kernel IR alone; a run on
/// gradient.in records nothing that the generation missed.
#[test]
fn spirv_without_input_generates_what_a_run_needs() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let base = std::env::temp_dir().join(format!("vkad-spirv-aot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let prog = format!("{root}/examples/gradient.fut");
    let input = format!("{root}/examples/gradient.in");
    let (plain, with_input) = (base.join("plain"), base.join("input"));
    let out = vkad(
        &["spirv", &prog, "-e", "main", "-o", plain.to_str().unwrap()],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    if err.contains("no Vulkan device") {
        eprintln!("skipped: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    let generated = validated_modules(&plain);
    // Segmaps, the reduction of scalars, the column kernel, the segmented reduction and its
    // per-segment map kernel, the fills and copies: more than a handful.
    assert!(generated.len() >= 8, "{} modules", generated.len());
    let index = std::fs::read_to_string(plain.join("index.txt")).unwrap();
    assert!(index.contains("name = segmap/"), "{index}");
    assert!(index.contains("gradient.fut:"), "{index}");
    let out = vkad(
        &[
            "spirv",
            &prog,
            "-e",
            "main",
            "-o",
            with_input.to_str().unwrap(),
            "--input",
            &input,
        ],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The run adds the modules it made that were not generated: none.
    assert_eq!(validated_modules(&with_input), generated);
    let _ = std::fs::remove_dir_all(&base);
}

/// Kernels that depend on more than the plan's types are generated without an input too: a
/// `segmap` updating a host accumulator (bound from the accumulator's type and its
/// `with_acc`'s operator) and the pairwise passes of a reduction over arrays of arrays with a
/// non-vectorised operator. A run on an input records nothing the generation missed.
#[test]
fn spirv_without_input_makes_accumulator_and_row_pair_kernels() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let base = std::env::temp_dir().join(format!("vkad-spirv-acc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let cases = [
        (
            "vk_acc.fut",
            "rows",
            "[[1.0, 2.0], [3.0, 4.0]] [1i64, 0i64, 1i64] [1.0, 2.0, 3.0]",
            "segmap/",
        ),
        (
            "vk_array_scan.fut",
            "reduce_mat",
            "5i64",
            "row-pairs-reduce",
        ),
    ];
    for (file, entry, input, kernel) in cases {
        let prog = format!("{root}/tests/programs/{file}");
        let (plain, with_input) = (base.join(entry), base.join(format!("{entry}-input")));
        let out = vkad(
            &["spirv", &prog, "-e", entry, "-o", plain.to_str().unwrap()],
            b"",
        );
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        if err.contains("no Vulkan device") {
            eprintln!("skipped: {err}");
            return;
        }
        assert!(out.status.success(), "{file} {entry}: {err}");
        let generated = validated_modules(&plain);
        let index = std::fs::read_to_string(plain.join("index.txt")).unwrap();
        assert!(
            index.contains(kernel),
            "{file} {entry}: no {kernel} in\n{index}"
        );
        let input_file = base.join(format!("{entry}.in"));
        std::fs::write(&input_file, input).unwrap();
        let out = vkad(
            &[
                "spirv",
                &prog,
                "-e",
                entry,
                "-o",
                with_input.to_str().unwrap(),
                "--input",
                input_file.to_str().unwrap(),
            ],
            b"",
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(validated_modules(&with_input), generated, "{file} {entry}");
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// `dump-ir --kernels --vulkan default` prints the kernel IR as the Vulkan backend runs it:
/// the adjoint's accumulator of an indexed read has become a histogram there, not in the
/// device-independent kernel IR.
#[test]
fn kernel_ir_after_the_vulkan_passes_is_printed() {
    let p = tmp_program(
        "gather.fut",
        "entry main [n][m] (xs: [n]f64) (is: [m]i64) (s: [m]f64) : [n]f64 =\n  \
         vjp (\\xs -> map (\\i -> xs[i] * 2) is) xs s\n",
    );
    let plain = vkad(&["dump-ir", &p, "--kernels"], b"");
    assert_eq!(plain.status.code(), Some(0));
    let plain = String::from_utf8_lossy(&plain.stdout);
    assert!(
        plain.contains("with_acc") && !plain.contains("seghist"),
        "{plain}"
    );
    let vulkan = vkad(&["dump-ir", &p, "--kernels", "--vulkan", "default"], b"");
    let err = String::from_utf8_lossy(&vulkan.stderr).to_string();
    if err.contains("no Vulkan device") {
        eprintln!("skipped: {err}");
        return;
    }
    assert_eq!(
        vulkan.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&vulkan.stderr)
    );
    let vulkan = String::from_utf8_lossy(&vulkan.stdout);
    assert!(
        vulkan.contains("seghist") && !vulkan.contains("with_acc"),
        "{vulkan}"
    );
    let bad = vkad(&["dump-ir", &p, "--kernels", "--vulkan", "first"], b"");
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("device index or `default`"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// The kernel IR from the command line: `dump-ir --kernels` prints segmented operations,
/// `run -b kernels` gives the interpreter's results and `--profile` counts the kernels: one
/// for this small input at the defaults (a nest of little work takes its sequentialised
/// version, `flatten/small_nest.rs`), three with `small_nest=MAX` (the flattened version).
#[test]
fn kernel_ir_is_printed_and_run() {
    let dump = vkad(&["dump-ir", "examples/normalise.fut", "--kernels"], b"");
    assert_eq!(dump.status.code(), Some(0));
    let text = String::from_utf8_lossy(&dump.stdout);
    for needle in [
        "segred (gtid_",
        "segmap (gtid_",
        "threshold(suff_outer_par_",
    ] {
        assert!(text.contains(needle), "no `{needle}` in:\n{text}");
    }
    let input = b"[[1.0, 2.0], [3.0, 4.0]] [[1.0, 1.0], [1.0, 1.0]]";
    let max = format!("small_nest={}", i64::MAX);
    let run = |backend: &str, extra: &[&str]| {
        let mut args = vec!["run", "examples/normalise.fut", "-e", "grad", "-b", backend];
        args.extend_from_slice(extra);
        vkad(&args, input)
    };
    let interp = run("interp", &[]);
    for (extra, want) in [
        (vec!["--profile"], "kernels: 1 (1 segmap)"),
        (
            vec!["--profile", "--threshold", max.as_str()],
            "kernels: 3 (1 segmap, 2 segred)",
        ),
    ] {
        let kernels = run("kernels", &extra);
        assert_eq!(kernels.status.code(), Some(0));
        assert_eq!(kernels.stdout, interp.stdout);
        let err = String::from_utf8_lossy(&kernels.stderr);
        assert!(err.contains(want), "{extra:?}: unexpected profile: {err}");
    }
}

#[test]
fn pipeline_cache_is_written_unless_turned_off() {
    let base = std::env::temp_dir().join(format!("vkad-cli-pcache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let p = tmp_program(
        "pcache.fut",
        "entry main (xs: []f32): []f32 = map (* 2f32) xs\n",
    );
    let files = |d: &std::path::Path| match std::fs::read_dir(d) {
        Ok(rd) => rd.map(|e| e.unwrap().file_name()).collect::<Vec<_>>(),
        Err(_) => Vec::new(),
    };
    let run = |extra: &[&str], env: &[(&str, &std::path::Path)]| {
        let mut args = vec!["run", p.as_str()];
        args.extend_from_slice(extra);
        let out = vkad_env(&args, b"[1f32, 2f32]", env);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "[2.0f32, 4.0f32]\n");
    };
    // VKAD_PIPELINE_CACHE=DIR: one file, kept by the second run.
    let dir = base.join("dir");
    run(&[], &[("VKAD_PIPELINE_CACHE", &dir)]);
    let first = files(&dir);
    assert_eq!(first.len(), 1, "{first:?}");
    run(&[], &[("VKAD_PIPELINE_CACHE", &dir)]);
    assert_eq!(files(&dir), first);
    // --no-pipeline-cache writes nothing, on `run` and on `test`.
    let off = base.join("off");
    run(&["--no-pipeline-cache"], &[("VKAD_PIPELINE_CACHE", &off)]);
    let out = vkad_env(
        &["test", "--no-pipeline-cache", "examples/dot.fut"],
        b"",
        &[("VKAD_PIPELINE_CACHE", &off)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!off.exists());
    // VKAD_PIPELINE_CACHE=0 turns it off; otherwise $XDG_CACHE_HOME/vkad/pipelines.
    let xdg = base.join("xdg");
    let zero = std::path::Path::new("0");
    run(
        &[],
        &[("VKAD_PIPELINE_CACHE", zero), ("XDG_CACHE_HOME", &xdg)],
    );
    // (Mesa may keep its own shader cache in $XDG_CACHE_HOME/mesa_shader_cache.)
    assert!(!xdg.join("vkad").exists());
    let one = std::path::Path::new("1");
    run(
        &[],
        &[("VKAD_PIPELINE_CACHE", one), ("XDG_CACHE_HOME", &xdg)],
    );
    assert_eq!(files(&xdg.join("vkad/pipelines")).len(), 1);
    std::fs::remove_dir_all(&base).unwrap();
}
