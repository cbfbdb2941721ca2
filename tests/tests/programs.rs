//! Runs every `-- ==` test block under tests/programs and examples/ on the reference interpreter,
//! as `vkad test` would, and fails if any dataset fails.

use std::path::PathBuf;
use vkad_core::testing::{run_paths, InterpBackend};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

fn run_dir(dir: &str) {
    let path = repo_root().join(dir);
    let mut out = Vec::new();
    let summary = run_paths(&[path], &InterpBackend, &mut out).expect("test runner I/O");
    let text = String::from_utf8_lossy(&out);
    println!("{text}");
    assert!(summary.passed > 0, "no dataset ran in {dir}:\n{text}");
    assert!(summary.success(), "failures in {dir}:\n{text}");
}

#[test]
fn test_programs_pass_on_the_interpreter() {
    run_dir("tests/programs");
}

#[test]
fn examples_pass_on_the_interpreter() {
    run_dir("examples");
}
