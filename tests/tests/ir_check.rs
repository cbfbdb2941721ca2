//! Every test program's IR passes the IR checker right after lowering and after every
//! simplification pass.

use std::path::{Path, PathBuf};
use vkad_core::ir::check::check_program;

fn fut_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fut_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "fut") {
            out.push(p);
        }
    }
}

#[test]
fn ir_is_valid_after_lowering_and_after_every_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    fut_files(&root.join("tests/programs"), &mut files);
    fut_files(&root.join("examples"), &mut files);
    let mut problems = Vec::new();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.display().to_string();
        // Files that are meant not to compile are covered by the test runner.
        let Ok(c) = vkad_core::check(&name, &text) else {
            continue;
        };
        let lowered = vkad_core::lower::lower_program(&c.ast, &c.sources);
        if let Err(e) = check_program(&lowered.program) {
            problems.push(format!("{name}: after lowering: {e}"));
            continue;
        }
        vkad_core::passes::simplify_with(lowered.program, &mut |pass, p| {
            if let Err(e) = check_program(p) {
                problems.push(format!("{name}: after {pass}: {e}"));
            }
        });
        checked += 1;
    }
    assert!(checked > 20, "only {checked} programs checked");
    assert!(
        problems.is_empty(),
        "{} IR check failures:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
