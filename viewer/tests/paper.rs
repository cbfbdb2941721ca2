//! Item 1 of issue 14: each program of `benches/paper` (those present) opened and run in the
//! viewer through the path the window takes: `ViewerApp::new` with the program, the worker
//! compiling it and making its profile, the input taken from its test block, **Run all
//! entries** clicked, the worker's replies polled by the frames. The window shows the scope
//! nest with re-execution counts as soon as the program is open, and after the runs a
//! timeline and the AD overhead over warm runs (each entry's first run is cold, marked, and
//! run again). Text is laid out with the viewer's fonts and a missing glyph panics (no tofu).
//!
//! The runs use the small data sets (`benches/paper/small`) on the first Vulkan device
//! (lavapipe in CI); without a device the test says so and checks only what opening shows.

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vkad_profile::{RunKind, Warmth};
use vkad_viewer::app::Tab;
use vkad_viewer::ViewerApp;

/// The programs of `benches/paper`, sorted.
fn paper_programs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/paper");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("benches/paper")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fut"))
        .collect();
    v.sort();
    v
}

fn harness(app: ViewerApp) -> Harness<'static, ViewerApp> {
    let mut h = Harness::builder()
        .with_size([1400.0, 860.0])
        .build_ui_state(|ui, app: &mut ViewerApp| app.ui_frame(ui), app);
    vkad_viewer::fonts::install(&h.ctx);
    h.ctx
        .set_missing_glyph_policy(egui::MissingGlyphPolicy::Panic);
    h.step();
    h
}

/// Steps frames until the worker is idle (at most `limit`); returns how many frames were
/// drawn while it worked and the longest frame.
fn settle(h: &mut Harness<'_, ViewerApp>, limit: Duration) -> (usize, Duration) {
    let start = Instant::now();
    let mut frames = 0;
    let mut longest = Duration::ZERO;
    loop {
        let t = Instant::now();
        h.step();
        longest = longest.max(t.elapsed());
        if !h.state().busy() {
            break;
        }
        frames += 1;
        assert!(
            start.elapsed() < limit,
            "the worker is still busy after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    h.step();
    (frames, longest)
}

/// Whether some node's label contains `text`.
fn shows(h: &Harness<'_, ViewerApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

fn has_device() -> bool {
    vkad_vk::list_devices().is_ok_and(|d| !d.is_empty())
}

/// One program: what the window shows after opening it, and after running every entry.
fn open_and_run(path: &Path, device: bool) {
    let name = path.display().to_string();
    let ctx = egui::Context::default();
    let app = ViewerApp::new(&ctx, Some(path.to_path_buf()), None, None);
    let mut h = harness(app);
    let (frames, longest) = settle(&mut h, Duration::from_secs(300));
    // The window kept drawing while the worker listed devices and compiled.
    assert!(frames > 0, "{name}: no frame while the worker compiled");
    assert!(
        longest < Duration::from_secs(5),
        "{name}: a frame took {longest:?}"
    );
    assert_eq!(h.state().errors(), Vec::<&str>::new(), "{name}");
    // The input is the data file of the program's test block.
    let input = h.state().input().to_string();
    assert!(
        input.contains("small/") && input.ends_with("_small.in"),
        "{name}: input {input:?}"
    );
    if !device {
        eprintln!("{name}: no Vulkan device: not run");
        return;
    }
    // Opened with a device: the profile without runs shows the scope nest with run counts.
    {
        let main = h.state().main.as_ref().expect("a profile once opened");
        assert!(main.profile.runs.is_empty());
        assert!(
            main.profile.scopes.len() >= 2,
            "{name}: {} scope trees",
            main.profile.scopes.len()
        );
        assert!(
            main.profile.all_scopes().iter().any(|s| s.runs.is_some()),
            "{name}: no run counts"
        );
        assert!(main.ir_note.is_none(), "{name}: {:?}", main.ir_note);
    }
    assert!(h.query_all_by_label("Scopes").next().is_some(), "{name}");
    assert!(shows(&h, "runs once"), "{name}");

    h.get_by_label("Run all entries").click();
    h.step();
    assert!(h.state().busy(), "{name}: the run did not start");
    let (frames, longest) = settle(&mut h, Duration::from_secs(300));
    assert!(frames > 0, "{name}: no frame while the worker ran");
    assert!(
        longest < Duration::from_secs(5),
        "{name}: a frame took {longest:?}"
    );
    assert_eq!(h.state().errors(), Vec::<&str>::new(), "{name}");

    let main = h.state().main.clone().expect("the profile");
    let p = &main.profile;
    // Each entry ran cold, then warm.
    let entries: Vec<&str> = {
        let mut v: Vec<&str> = p.runs.iter().map(|r| r.entry.as_str()).collect();
        v.dedup();
        v
    };
    assert!(entries.len() >= 2, "{name}: {entries:?}");
    for e in &entries {
        let w: Vec<Warmth> = (p.runs.iter())
            .filter(|r| &r.entry == e)
            .map(|r| r.warmth())
            .collect();
        assert_eq!(w, [Warmth::Cold, Warmth::Warm], "{name}: {e}");
    }
    assert!(p.runs.iter().any(|r| r.kind == RunKind::Gradient), "{name}");
    assert!(p.runs.iter().any(|r| r.kind == RunKind::Primal), "{name}");
    // Every run has launches, most of them in a scope.
    for r in &p.runs {
        assert!(!r.launches.is_empty(), "{name}: {} ran no kernel", r.entry);
        assert!(
            r.launches.iter().any(|l| l.scope.is_some()),
            "{name}: no launch of {} has a scope",
            r.entry
        );
    }
    // The overhead compares the warm runs and leaves the cold ones out.
    let o = p.ad_overhead_runs().expect("both kinds");
    assert!(o.ratio().is_some(), "{name}: {o:?}");
    assert!(o
        .primal
        .iter()
        .chain(&o.gradient)
        .all(|&i| p.runs[i].warmth() == Warmth::Warm));
    assert_eq!(o.cold.len(), entries.len(), "{name}");

    // The timeline of the newest run (a warm gradient or primal run).
    h.state_mut().tab = Tab::Timeline;
    h.step();
    let run = &p.runs[h.state().view.run];
    let (lanes, placed) = vkad_viewer::timeline::layout(run);
    assert!(!lanes.is_empty() && placed.len() == run.launches.len());
    assert!(shows(&h, "run:"), "{name}");

    // The Kernels tab: the overhead line names warm and cold runs; the cold runs are marked.
    h.state_mut().tab = Tab::Kernels;
    h.step();
    assert!(
        shows(&h, "AD overhead: ") && shows(&h, "warm runs") && shows(&h, "cold runs left out"),
        "{name}: no overhead line"
    );
    h.state_mut().view.run = 0;
    h.step();
    assert!(shows(&h, ", cold)"), "{name}: the cold run is not marked");
    // Source & IR: the source's notation is laid out without missing glyphs (a missing one
    // panics).
    h.state_mut().tab = Tab::SourceIr;
    h.step();
}

#[test]
fn paper_benchmarks_open_and_run_in_the_viewer() {
    let programs = paper_programs();
    assert!(
        programs.iter().any(|p| p.ends_with("kmeans.fut")),
        "{programs:?}"
    );
    let device = has_device();
    for p in &programs {
        let t = Instant::now();
        open_and_run(p, device);
        eprintln!("{}: {:.1} s", p.display(), t.elapsed().as_secs_f64());
    }
}
