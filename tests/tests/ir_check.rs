//! Every test program's IR passes the IR checker right after lowering and after every
//! simplification pass, and again after the AD pass and every pass after it.

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
        let name = f.display().to_string();
        // Files that are meant not to compile are covered by the test runner.
        let Ok(c) = vkad_core::check_file(f) else {
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

/// The AD pass and the passes after it keep the IR valid: every test program's IR passes the
/// checker after [`vkad_core::ad::transform::transform_partial`] and after every simplification
/// pass that follows.
#[test]
fn ir_is_valid_after_ad_and_after_every_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    fut_files(&root.join("tests/programs"), &mut files);
    fut_files(&root.join("examples"), &mut files);
    let mut problems = Vec::new();
    let mut checked = 0;
    for f in &files {
        let name = f.display().to_string();
        let Ok(c) = vkad_core::check_file(f) else {
            continue;
        };
        let lowered = vkad_core::lower::lower_program(&c.ast, &c.sources);
        // As `vkad_core::compile` does.
        let before = vkad_core::passes::simplify(vkad_core::passes::hoist::hoist(
            vkad_core::passes::simplify(lowered.program),
        ));
        let (p, _) = vkad_core::ad::transform::transform_partial(before);
        if let Err(e) = check_program(&p) {
            problems.push(format!("{name}: after AD: {e}"));
            continue;
        }
        let p = vkad_core::passes::simplify_with(p, &mut |pass, p| {
            if let Err(e) = check_program(p) {
                problems.push(format!("{name}: after AD, after {pass}: {e}"));
            }
        });
        let p = vkad_core::passes::accumulations_to_reductions(p);
        if let Err(e) = check_program(&p) {
            problems.push(format!("{name}: after accumulations_to_reductions: {e}"));
        }
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
