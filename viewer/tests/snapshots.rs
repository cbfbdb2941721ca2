//! Every panel of the viewer rendered headlessly (egui_kittest through wgpu: Vulkan, lavapipe
//! where there is no GPU) on the checked-in sample profiles, compared with the images in
//! `tests/snapshots/`. After an intended change of the look, regenerate them with
//! `UPDATE_SNAPSHOTS=1 cargo test -p vkad-viewer --test snapshots` and look at the images.
//!
//! The sample profiles (`tests/data/sample.json`, `tests/data/sample-b.json`) are real
//! profiles of `tests/data/sample.fut` (and of `sample-b.fut`, the same program with fewer loop
//! iterations), made on lavapipe by the ignored test `regenerate_sample_profiles` before runs
//! recorded whether they were cold: they also show how such profiles read. `sample-warm.json`
//! (the ignored test `regenerate_warm_sample_profile`) has each entry's cold first run and a
//! warm second run, as the viewer records them.

use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, SnapshotOptions};
use std::path::{Path, PathBuf};
use vkad_profile::{Profile, Scope, Warmth};
use vkad_viewer::app::Tab;
use vkad_viewer::{Loaded, View, ViewerApp};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn load(name: &str) -> Loaded {
    let text = std::fs::read_to_string(data(name)).expect("sample profile");
    let p = Profile::from_json(&text).expect("a vkad profile");
    Loaded::with_links(p, Some(format!("tests/data/{name}")))
}

/// Per-pixel colour tolerance and a few failing pixels: font rasterisation may differ slightly
/// between lavapipe versions and GPUs.
fn options() -> SnapshotOptions {
    SnapshotOptions::new().threshold(2.0).max_failed_pixels(40)
}

/// The first scope, depth first, for which `f` holds.
fn find_scope(p: &Profile, f: impl Fn(&Scope) -> bool) -> u32 {
    p.all_scopes()
        .into_iter()
        .find(|s| f(s))
        .map(|s| s.id)
        .expect("a scope")
}

/// The loop of the gradient entry's `vjp`: re-executed map inside, checkpoints.
fn vjp_loop(p: &Profile) -> u32 {
    let vjp = find_scope(p, |s| s.kind == "vjp");
    let l = &loaded_scope(p, vjp).children;
    l.iter()
        .find(|s| s.kind == "loop")
        .map(|s| s.id)
        .expect("a loop in the vjp")
}

fn loaded_scope(p: &Profile, id: u32) -> &Scope {
    p.scope(id).expect("scope")
}

/// The index of the gradient run.
fn gradient_run(p: &Profile) -> usize {
    p.runs
        .iter()
        .position(|r| r.kind == vkad_profile::RunKind::Gradient)
        .expect("a gradient run")
}

fn harness<'a, S>(
    size: [f32; 2],
    state: S,
    app: impl FnMut(&mut egui::Ui, &mut S) + 'a,
) -> Harness<'a, S> {
    let h = Harness::builder()
        .with_size(size)
        .with_pixels_per_point(1.0)
        .with_options(options())
        .wgpu()
        .build_ui_state(app, state);
    // The fonts of the window, and no tofu: a character without a glyph fails the test.
    vkad_viewer::fonts::install(&h.ctx);
    h.ctx
        .set_missing_glyph_policy(egui::MissingGlyphPolicy::Panic);
    h
}

#[test]
fn sample_profiles_have_what_the_panels_show() {
    let l = load("sample.json");
    let p = &l.profile;
    assert!(p.runs.len() >= 2);
    assert!(p
        .runs
        .iter()
        .any(|r| r.kind == vkad_profile::RunKind::Primal));
    assert_eq!(p.ir.len(), 3);
    // Every IR stage is linked to the source (the sample is compiled by this vkad).
    assert!(l.ir_note.is_none(), "{:?}", l.ir_note);
    assert!(l.ir_locs.iter().all(|v| v.iter().any(Option::is_some)));
    let lp = vjp_loop(p);
    assert!(!loaded_scope(p, lp).checkpoint_elems.is_empty());
    let run = &p.runs[gradient_run(p)];
    assert!(run.launches.iter().any(|x| x.scope.is_some()));
    // Made before runs recorded their warmth: unknown, and the overhead says so.
    assert!(p.runs.iter().all(|r| r.warmth() == Warmth::Unknown));
    let line = vkad_viewer::kernels::overhead_text(p).expect("both kinds");
    assert!(
        line.contains("does not record which runs were cold"),
        "{line}"
    );
}

#[test]
fn scopes_panel() {
    let l = load("sample.json");
    let mut view = View {
        run: gradient_run(&l.profile),
        ..View::default()
    };
    view.select(Some(vjp_loop(&l.profile)));
    let mut h = harness([420.0, 760.0], view, |ui, view| {
        vkad_viewer::scopes::ui(ui, &l, view)
    });
    h.run();
    h.snapshot("scopes");
}

#[test]
fn ir_panel() {
    let l = load("sample.json");
    let mut view = View::default();
    view.select(Some(vjp_loop(&l.profile)));
    let mut h = harness([1500.0, 700.0], view, |ui, view| {
        vkad_viewer::ir::ui(ui, &l, view)
    });
    h.run();
    h.snapshot("ir");
}

#[test]
fn timeline_panel() {
    let l = load("sample.json");
    let mut view = View {
        run: gradient_run(&l.profile),
        ..View::default()
    };
    view.select(Some(vjp_loop(&l.profile)));
    let mut h = harness([1000.0, 420.0], view, |ui, view| {
        vkad_viewer::timeline::ui(ui, &l, view)
    });
    h.run();
    h.snapshot("timeline");
}

#[test]
fn kernels_panel() {
    let l = load("sample.json");
    let view = View {
        run: gradient_run(&l.profile),
        ..View::default()
    };
    let mut h = harness([1000.0, 600.0], view, |ui, view| {
        vkad_viewer::kernels::ui(ui, &l, view)
    });
    h.run();
    h.snapshot("kernels");
}

/// Item 2 of issue 14: cold runs are marked (`cold` in their names; pale bars when the chart
/// shows them) and the AD overhead compares the warm runs, naming them and the cold runs left
/// out.
#[test]
fn kernels_panel_with_cold_and_warm_runs() {
    let l = load("sample-warm.json");
    let p = &l.profile;
    let warmth: Vec<(&str, Warmth)> = p
        .runs
        .iter()
        .map(|r| (r.entry.as_str(), r.warmth()))
        .collect();
    assert_eq!(
        warmth,
        [
            ("loss", Warmth::Cold),
            ("loss", Warmth::Warm),
            ("main", Warmth::Cold),
            ("main", Warmth::Warm)
        ]
    );
    let view = View {
        run: 2,
        ..View::default()
    };
    let mut h = harness([1000.0, 600.0], view, |ui, view| {
        vkad_viewer::kernels::ui(ui, &l, view)
    });
    h.run();
    let line = vkad_viewer::kernels::overhead_text(p).expect("both kinds");
    assert!(
        line.contains("warm runs main [4] and loss [2]")
            && line.ends_with("cold runs left out: 1, 3"),
        "{line}"
    );
    assert!(h.query_all_by_label(&line).next().is_some(), "{line}");
    // The run picker names the chosen run as cold.
    assert!(h
        .query_all_by_value("3: main (gradient, cold)")
        .next()
        .is_some());
    // The chart leaves the cold runs out until asked.
    h.snapshot("kernels-warm");
    h.get_by_label("show the cold runs (pale bars)").click();
    h.run();
    assert!(h.state().show_cold_runs);
}

#[test]
fn compare_panel() {
    let a = load("sample.json");
    let b = load("sample-b.json");
    let view = View {
        run: gradient_run(&a.profile),
        ..View::default()
    };
    let mut h = harness([1300.0, 760.0], view, |ui, view| {
        vkad_viewer::compare::ui(ui, &a, Some(&b), view)
    });
    h.run();
    h.snapshot("compare");
}

#[test]
fn whole_window() {
    let mut app = ViewerApp::with_profiles(Some(load("sample.json")), Some(load("sample-b.json")));
    app.view.run = gradient_run(&app.main.as_ref().expect("main").profile);
    app.tab = Tab::Timeline;
    let mut h = harness([1400.0, 860.0], app, |ui, app| app.ui_frame(ui));
    h.run();
    h.snapshot("window");
}

/// Clicking a scope's box selects it; clicking a kernel row selects the kernel's scope.
#[test]
fn clicking_selects_scopes() {
    let l = load("sample.json");
    let vjp = find_scope(&l.profile, |s| s.kind == "vjp");
    let view = View::default();
    let mut h = harness([420.0, 760.0], view, |ui, view| {
        vkad_viewer::scopes::ui(ui, &l, view)
    });
    h.run();
    h.get_by_label("vjp").click();
    h.run();
    assert_eq!(h.state().selected, Some(vjp));
}

/// Regenerates `sample-warm.json` on the first Vulkan device (lavapipe in CI): each entry run
/// twice on one context, cold then warm:
/// `cargo test -p vkad-viewer --test snapshots -- --ignored regenerate_warm`.
#[test]
#[ignore = "needs a Vulkan device; rewrites tests/data/sample-warm.json"]
fn regenerate_warm_sample_profile() {
    let ctx = vkad_vk::Context::new(&vkad_vk::ContextOptions::default()).expect("a device");
    let input = std::fs::read(data("sample.in")).expect("input");
    let args = vkad_core::values::parse_values(&input).expect("values");
    let src = "sample.fut";
    let source = std::fs::read_to_string(data(src)).expect("program");
    let compiled = vkad_core::compile(src, &source).expect("compiles");
    let mut p = vkad_spirv::profile::new_profile(&compiled, src, &source, ctx.info());
    for entry in ["loss", "main"] {
        for _ in 0..2 {
            let (_, run) =
                vkad_spirv::profile::profile_run(&ctx, &compiled, &p, entry, args.clone())
                    .expect("runs");
            p.runs.push(run);
        }
    }
    std::fs::write(data("sample-warm.json"), p.to_json()).expect("write");
}

/// Regenerates the sample profiles on the first Vulkan device (lavapipe in CI):
/// `cargo test -p vkad-viewer --test snapshots -- --ignored regenerate`.
#[test]
#[ignore = "needs a Vulkan device; rewrites tests/data/*.json"]
fn regenerate_sample_profiles() {
    let ctx = vkad_vk::Context::new(&vkad_vk::ContextOptions::default()).expect("a device");
    let input = std::fs::read(data("sample.in")).expect("input");
    let args = vkad_core::values::parse_values(&input).expect("values");
    for (src, out) in [
        ("sample.fut", "sample.json"),
        ("sample-b.fut", "sample-b.json"),
    ] {
        let source = std::fs::read_to_string(data(src)).expect("program");
        let compiled = vkad_core::compile(src, &source).expect("compiles");
        let mut p = vkad_spirv::profile::new_profile(&compiled, src, &source, ctx.info());
        for entry in ["loss", "main"] {
            let (_, mut run) =
                vkad_spirv::profile::profile_run(&ctx, &compiled, &p, entry, args.clone())
                    .expect("runs");
            // These samples stand for profiles made before runs recorded whether they were
            // cold (`sample-warm.json` has the warmth).
            run.cold = None;
            p.runs.push(run);
        }
        std::fs::write(data(out), p.to_json()).expect("write");
    }
}
