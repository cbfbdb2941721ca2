//! Profiles end to end: `vkad run --profile-out`, `vkad bench FILE`, `vkad profile`.
//! (Here rather than in `tests/`: only this package's tests can run the `vkad` binary.)

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use vkad_profile::{Profile, RunKind};

fn vkad(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vkad"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vkad starts");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vkad-profile-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Whether the command failed for want of a Vulkan device (the test is then skipped).
fn no_device(out: &Output) -> bool {
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("no Vulkan device") {
        eprintln!("skipped: {err}");
        return true;
    }
    false
}

/// The checks every profile of examples/gradient.fut passes.
fn check_profile(p: &Profile) {
    assert_eq!(p.program.path, "examples/gradient.fut");
    assert!(p.program.source.contains("entry main"));
    assert!(!p.scopes.is_empty());
    assert!(p.all_scopes().iter().any(|s| s.kind == "vjp"));
    let names: Vec<&str> = p.ir.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["before AD", "after AD", "optimised"]);
    for run in &p.runs {
        assert!(!run.launches.is_empty(), "{}", run.entry);
        for l in &run.launches {
            if l.loc.is_some() {
                let id = l.scope.unwrap_or_else(|| panic!("{} has no scope", l.name));
                assert!(p.scope(id).is_some(), "{}: scope {id}", l.name);
            }
            assert!(l.end_ns >= l.start_ns && l.bytes > 0, "{l:?}");
            // Kernels dispatch workgroups; copies and fills run as transfer commands (none).
            assert!(
                l.workgroups.iter().all(|&g| g > 0) || l.workgroups == [0; 3],
                "{l:?}"
            );
        }
        assert_eq!(run.launches[0].submission, 0);
    }
}

#[test]
fn run_writes_a_profile_that_vkad_profile_summarises() {
    let json = tmp("main.json");
    let input = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/gradient.in"
    ))
    .unwrap();
    let out = vkad(
        &[
            "run",
            "examples/gradient.fut",
            "-e",
            "main",
            "--profile-out",
            json.to_str().unwrap(),
        ],
        &input,
    );
    if no_device(&out) {
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The results are printed as without profiling, and nothing else.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "34.375f64\n[-48.5f64, -62.0f64]\n"
    );
    let text = std::fs::read_to_string(&json).unwrap();
    let p = Profile::from_json(&text).unwrap();
    check_profile(&p);
    assert_eq!(p.runs.len(), 1);
    assert_eq!(
        (p.runs[0].entry.as_str(), p.runs[0].kind),
        ("main", RunKind::Gradient)
    );
    // The only run of a fresh process made its pipelines: cold.
    assert_eq!(p.runs[0].cold, Some(true));
    // Some launch of the gradient is attributed to the vjp's scope.
    let vjp: Vec<u32> = p
        .all_scopes()
        .iter()
        .filter(|s| s.kind == "vjp")
        .map(|s| s.id)
        .collect();
    assert!(
        p.runs[0]
            .launches
            .iter()
            .any(|l| l.scope.is_some_and(|id| vjp.contains(&id))),
        "{:?}",
        p.runs[0].launches
    );
    // A Chrome trace too: one complete event per launch.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let complete = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .count();
    assert_eq!(complete, p.runs[0].launches.len());

    let sum = vkad(&["profile", json.to_str().unwrap()], b"");
    assert!(sum.status.success());
    let s = String::from_utf8_lossy(&sum.stdout);
    assert!(s.contains("1. main (gradient, cold)"), "{s}");
    assert!(s.contains("top kernels"), "{s}");
    assert!(s.contains("time per scope"), "{s}");
    assert!(s.contains("vjp at examples/gradient.fut:"), "{s}");
    // One kind of run: no AD overhead.
    assert!(!s.contains("AD overhead"), "{s}");
}

#[test]
fn bench_times_both_entries_and_reports_the_ad_overhead() {
    let json = tmp("bench.json");
    let out = vkad(
        &[
            "bench",
            "examples/gradient.fut",
            "--reps",
            "2",
            "--profile-out",
            json.to_str().unwrap(),
        ],
        b"",
    );
    if no_device(&out) {
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("2 timed runs per entry point"), "{stdout}");
    let row = |e: &str| stdout.lines().find(|l| l.starts_with(&format!("{e} ")));
    assert!(
        row("loss").is_some_and(|l| l.contains("primal")),
        "{stdout}"
    );
    assert!(
        row("main").is_some_and(|l| l.contains("gradient")),
        "{stdout}"
    );
    assert!(stdout.contains("AD overhead: "), "{stdout}");
    let p = Profile::from_json(&std::fs::read_to_string(&json).unwrap()).unwrap();
    check_profile(&p);
    let kinds: Vec<(&str, RunKind)> = p.runs.iter().map(|r| (r.entry.as_str(), r.kind)).collect();
    assert_eq!(
        kinds,
        [("loss", RunKind::Primal), ("main", RunKind::Gradient)]
    );
    // The timed runs follow a warm-up run: warm.
    assert!(p.runs.iter().all(|r| r.cold == Some(false)), "{:?}", p.runs);
    let sum = vkad(&["profile", json.to_str().unwrap()], b"");
    let s = String::from_utf8_lossy(&sum.stdout);
    assert!(
        s.contains("AD overhead: ") && s.contains("warm gradient runs main [2]"),
        "{s}"
    );

    // One entry, by name; an entry without a dataset or an unknown one is an error.
    let one = vkad(
        &[
            "bench",
            "examples/gradient.fut",
            "-e",
            "loss",
            "--reps",
            "1",
        ],
        b"",
    );
    let so = String::from_utf8_lossy(&one.stdout);
    assert!(one.status.success(), "{so}");
    assert!(so.contains("loss") && !so.contains("AD overhead"), "{so}");
    let bad = vkad(&["bench", "examples/gradient.fut", "-e", "nope"], b"");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no entry point `nope`"));
}

#[test]
fn bench_subcommands_and_bad_profiles() {
    // `bench` needs a program or `primitives`; `primitives` still parses its own options.
    assert_eq!(vkad(&["bench"], b"").status.code(), Some(2));
    let h = vkad(&["bench", "primitives", "--help"], b"");
    assert!(h.status.success());
    assert!(String::from_utf8_lossy(&h.stdout).contains("--sizes"));
    let bad = vkad(&["bench", "primitives", "--sizes", "9..3"], b"");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--sizes must be"));
    // A program without datasets.
    let prog = tmp("nodata.fut");
    std::fs::write(&prog, "entry main (x: i32) : i32 = x\n").unwrap();
    let none = vkad(&["bench", prog.to_str().unwrap()], b"");
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no datasets"));

    // `vkad profile` on files that are not profiles: exit 1 with a message, no panic.
    let missing = vkad(&["profile", "/nonexistent/p.json"], b"");
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).starts_with("error: cannot read"));
    for (name, text) in [
        ("garbage.json", "not json"),
        ("trace.json", r#"{"traceEvents": []}"#),
        ("partial.json", r#"{"vkad": {"version": 1}}"#),
    ] {
        let f = tmp(name);
        std::fs::write(&f, text).unwrap();
        let out = vkad(&["profile", f.to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not a vkad profile"), "{name}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // --profile-out needs the Vulkan backend.
    let interp = vkad(
        &[
            "run",
            "examples/gradient.fut",
            "-b",
            "interp",
            "--profile-out",
            "x.json",
        ],
        b"",
    );
    assert_eq!(interp.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&interp.stderr).contains("--profile-out needs the Vulkan"));
}
