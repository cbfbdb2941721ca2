//! Every AD test program (a file under tests/programs that uses `jvp`, `vjp` or their variants)
//! checked both ways: on the interpreter, which runs the code of the AD transformation, and on
//! the AD oracle, which evaluates `jvp`/`vjp` dynamically on traced values. Both must agree with
//! the expected outputs. The oracle must run every dataset; the interpreter may skip only the
//! datasets of entry points whose differentiation is not supported yet (`not supported: vjp of
//! ...`, until reverse mode covers them).

use std::path::PathBuf;
use vkad_core::testing::{run_paths, Backend, InterpBackend, OracleBackend, Summary};

fn ad_programs() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("programs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/programs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fut"))
        .filter(|p| {
            std::fs::read_to_string(p).is_ok_and(|t| {
                ["jvp", "vjp", "jmp", "mjp"]
                    .iter()
                    .any(|f| t.contains(&format!("{f} ")) || t.contains(&format!("{f}2 ")))
            })
        })
        .collect();
    files.sort();
    files
}

fn run(backend: &dyn Backend, files: &[PathBuf]) -> (Summary, String) {
    let mut out = Vec::new();
    let s = run_paths(files, backend, &mut out).expect("test runner I/O");
    (s, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn ad_programs_pass_on_the_interpreter_and_the_oracle() {
    let files = ad_programs();
    assert!(
        files.iter().any(|f| f.ends_with("ad_rules_vjp.fut")),
        "{files:?}"
    );
    let (oracle, text) = run(&OracleBackend, &files);
    println!("oracle:\n{text}");
    assert!(oracle.passed > 0, "{text}");
    assert!(oracle.success(), "oracle failures:\n{text}");
    assert_eq!(oracle.skipped, 0, "the oracle skipped datasets:\n{text}");

    let (interp, text) = run(&InterpBackend, &files);
    println!("interp:\n{text}");
    assert!(interp.success(), "interpreter failures:\n{text}");
    // Every skip is an entry point whose AD transformation is not supported.
    let skips = text.lines().filter(|l| l.contains(": skipped")).count();
    let ad_skips = text
        .lines()
        .filter(|l| l.contains(": skipped") && l.contains("entry `"))
        .count();
    assert_eq!(skips, ad_skips, "{text}");
    for l in text
        .lines()
        .filter(|l| l.trim_start().starts_with("error: "))
    {
        assert!(
            l.contains("not supported: vjp of") || l.contains("not supported: jvp of"),
            "{l}"
        );
    }
    assert_eq!(
        interp.passed + interp.skipped,
        oracle.passed,
        "the two runs saw different datasets"
    );
}
