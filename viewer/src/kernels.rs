//! The kernels of a run: the AD overhead (gradient ÷ primal kernel time, over warm runs only,
//! naming the runs it compares and the cold runs it leaves out), a bar chart of the runs'
//! device time (primal and gradient runs in their own colours, with the host's wall time
//! beside; cold runs only when asked for, pale), and a table of the run's kernels, one row per
//! kernel name, sortable by name, launches, total and mean time and achieved bandwidth (click
//! a column header; again to reverse). Clicking a kernel selects its scope; the rows of the
//! selected scope are highlighted.

use crate::ir::OWN_BG;
use crate::model::{fmt_bytes, fmt_ns, kind_colour, run_label, run_picker, Loaded, SortKey, View};
use egui::{Color32, RichText};
use egui_plot::{Bar, BarChart, Legend, Plot};
use std::collections::BTreeMap;
use vkad_profile::{runs_by_entry, Launch, Loc, Profile, Run, RunKind, Warmth};

/// The launches of one kernel name in a run.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelRow {
    /// The launch name (`what.pass @ file:line:col`).
    pub name: String,
    pub what: String,
    pub loc: Option<Loc>,
    pub scope: Option<u32>,
    pub launches: usize,
    /// Total device time, ns.
    pub total_ns: u64,
    /// Total bytes moved.
    pub bytes: u64,
}

impl KernelRow {
    /// Mean device time per launch, ns.
    pub fn mean_ns(&self) -> f64 {
        self.total_ns as f64 / self.launches.max(1) as f64
    }
    /// Achieved bandwidth over all launches, GB/s (0 without time).
    pub fn gb_per_s(&self) -> f64 {
        if self.total_ns == 0 {
            0.0
        } else {
            self.bytes as f64 / self.total_ns as f64
        }
    }
}

/// One row per kernel name of `launches`, in name order.
pub fn summarize(launches: &[Launch]) -> Vec<KernelRow> {
    let mut rows: BTreeMap<&str, KernelRow> = BTreeMap::new();
    for l in launches {
        let r = rows.entry(&l.name).or_insert_with(|| KernelRow {
            name: l.name.clone(),
            what: l.what.clone(),
            loc: l.loc.clone(),
            scope: l.scope,
            launches: 0,
            total_ns: 0,
            bytes: 0,
        });
        r.launches += 1;
        r.total_ns += l.duration_ns();
        r.bytes += l.bytes;
    }
    rows.into_values().collect()
}

/// Sorts `rows` by `key`, largest first when `desc` (ties by name).
pub fn sort_rows(rows: &mut [KernelRow], key: SortKey, desc: bool) {
    rows.sort_by(|a, b| {
        let o = match key {
            SortKey::Name => a.name.cmp(&b.name),
            SortKey::Launches => a.launches.cmp(&b.launches),
            SortKey::Total => a.total_ns.cmp(&b.total_ns),
            SortKey::Mean => a.mean_ns().total_cmp(&b.mean_ns()),
            SortKey::GbPerS => a.gb_per_s().total_cmp(&b.gb_per_s()),
        };
        let o = if desc { o.reverse() } else { o };
        o.then_with(|| a.name.cmp(&b.name))
    });
}

fn kind_word(k: RunKind) -> &'static str {
    match k {
        RunKind::Primal => "primal",
        RunKind::Gradient => "gradient",
    }
}

/// The AD overhead as the Kernels tab states it: gradient ÷ primal mean kernel time over the
/// warm runs ([`Profile::ad_overhead_runs`]), the runs compared (by entry and run number) and
/// the cold runs left out, or why there is no ratio; `None` when the profile lacks primal or
/// gradient runs.
pub fn overhead_text(p: &Profile) -> Option<String> {
    let o = p.ad_overhead_runs()?;
    let warm = if o.unrecorded { "" } else { "warm " };
    let mut s = match (o.missing(), o.ratio()) {
        (Some(k), _) => format!(
            "AD overhead: needs a warm {k} run: every {k} run is cold (its pipelines were made \
             during it); run the entry again",
            k = kind_word(k)
        ),
        (None, None) => "AD overhead: unknown (the primal kernel time is 0: no timestamps)".into(),
        (None, Some(x)) => format!(
            "AD overhead: {x:.2}× = gradient {} ÷ primal {} (mean kernel time of the {warm}runs \
             {} and {})",
            fmt_ns(o.gradient_ns.unwrap_or(0.0)),
            fmt_ns(o.primal_ns.unwrap_or(0.0)),
            runs_by_entry(p, &o.gradient),
            runs_by_entry(p, &o.primal),
        ),
    };
    if !o.cold.is_empty() {
        s.push_str(&format!(
            "; cold runs left out: {}",
            vkad_profile::run_numbers(&o.cold)
        ));
    }
    if o.unrecorded {
        s.push_str("; the profile does not record which runs were cold (an older vkad made it)");
    }
    Some(s)
}

/// The runs the bar chart shows (indices): all of them with `show_cold`, or when every run is
/// cold; else all but the cold ones (whose first launches, waiting for the driver's
/// compilation, can take a hundred times longer and would flatten the others' bars).
pub fn charted_runs(runs: &[Run], show_cold: bool) -> Vec<usize> {
    let all_cold = runs.iter().all(|r| r.warmth() == Warmth::Cold);
    (0..runs.len())
        .filter(|&k| show_cold || all_cold || runs[k].warmth() != Warmth::Cold)
        .collect()
}

/// The AD overhead line, and the bar chart of the runs' kernel time (coloured by kind; cold
/// runs pale, and only when [`View::show_cold_runs`] or all runs are cold) and wall time.
pub fn runs_chart(ui: &mut egui::Ui, loaded: &Loaded, view: &mut View, id: &str, height: f32) {
    let runs = &loaded.profile.runs;
    if runs.is_empty() {
        return;
    }
    if let Some(text) = overhead_text(&loaded.profile) {
        ui.label(text);
    }
    if runs.iter().any(|r| r.warmth() == Warmth::Cold) {
        ui.checkbox(&mut view.show_cold_runs, "show the cold runs (pale bars)")
            .on_hover_text(
                "a cold run made its kernels' pipelines: its first launches waited for the \
                 driver's compilation",
            );
    }
    let shown = charted_runs(runs, view.show_cold_runs);
    let mut primal = Vec::new();
    let mut gradient = Vec::new();
    let mut wall = Vec::new();
    for (k, r) in shown.iter().map(|&i| &runs[i]).enumerate() {
        let mut bar = Bar::new(k as f64 - 0.15, r.kernel_ns() as f64 / 1e3)
            .width(0.3)
            .name(format!(
                "{}: kernels {}",
                run_label(r),
                fmt_ns(r.kernel_ns() as f64)
            ));
        if r.warmth() == Warmth::Cold {
            bar = bar.fill(kind_colour(r.kind).gamma_multiply(0.4));
        }
        match r.kind {
            RunKind::Primal => primal.push(bar),
            RunKind::Gradient => gradient.push(bar),
        }
        wall.push(
            Bar::new(k as f64 + 0.15, r.wall_ns as f64 / 1e3)
                .width(0.3)
                .name(format!(
                    "{}: wall {}",
                    run_label(r),
                    fmt_ns(r.wall_ns as f64)
                )),
        );
    }
    let labels: Vec<String> = shown
        .iter()
        .map(|&i| format!("{}: {}", i + 1, run_label(&runs[i])))
        .collect();
    Plot::new(id)
        .height(height)
        .legend(Legend::default())
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .show_grid([false, true])
        .include_y(0.0)
        .y_axis_label("µs")
        .x_axis_formatter(move |mark, _| {
            let v = mark.value;
            if (v - v.round()).abs() < 1e-6 && v >= 0.0 {
                labels.get(v as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .label_formatter(|_| None)
        .show(ui, |pu| {
            let fmt = || Box::new(|b: &Bar, _: &BarChart| b.name.clone());
            pu.add(
                BarChart::new("primal (kernels)", primal)
                    .color(kind_colour(RunKind::Primal))
                    .element_formatter(fmt()),
            );
            pu.add(
                BarChart::new("gradient (kernels)", gradient)
                    .color(kind_colour(RunKind::Gradient))
                    .element_formatter(fmt()),
            );
            pu.add(
                BarChart::new("wall (host)", wall)
                    .color(Color32::from_gray(150))
                    .element_formatter(fmt()),
            );
        });
}

/// The header cell of a sortable column.
fn header(ui: &mut egui::Ui, view: &mut View, key: SortKey, text: &str) {
    let (cur, desc) = view.sort;
    let arrow = if cur == key {
        if desc {
            " (desc)"
        } else {
            " (asc)"
        }
    } else {
        ""
    };
    if ui
        .add(egui::Button::new(RichText::new(format!("{text}{arrow}")).strong()).frame(false))
        .clicked()
    {
        view.sort = if cur == key {
            (key, !desc)
        } else {
            // Names sort A to Z first, numbers largest first.
            (key, key != SortKey::Name)
        };
    }
}

/// The table of the kernels of `run`, sorted as [`View::sort`] says.
pub fn table(ui: &mut egui::Ui, loaded: &Loaded, run: &Run, view: &mut View) {
    let mut rows = summarize(&run.launches);
    sort_rows(&mut rows, view.sort.0, view.sort.1);
    let run_ns = run.kernel_ns().max(1) as f64;
    let mut pick = None;
    egui::ScrollArea::both()
        .id_salt("kernel-table")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            egui::Grid::new("kernel-grid")
                .striped(true)
                .num_columns(8)
                .spacing([14.0, 4.0])
                .show(ui, |ui| {
                    header(ui, view, SortKey::Name, "kernel");
                    ui.strong("scope");
                    header(ui, view, SortKey::Launches, "launches");
                    header(ui, view, SortKey::Total, "total");
                    ui.strong("% of run");
                    header(ui, view, SortKey::Mean, "mean");
                    ui.strong("bytes/launch");
                    header(ui, view, SortKey::GbPerS, "GB/s");
                    ui.end_row();
                    for r in &rows {
                        let marked = view
                            .selected
                            .is_some_and(|s| r.scope.is_some_and(|id| loaded.is_within(id, s)));
                        let mut name = RichText::new(&r.name).monospace();
                        if marked {
                            name = name.background_color(OWN_BG).strong();
                        }
                        let resp = ui.add(egui::Label::new(name).sense(egui::Sense::click()));
                        if resp.clicked() {
                            pick = r.scope;
                        }
                        let scope = r
                            .scope
                            .and_then(|id| loaded.profile.scope(id))
                            .map(|s| s.label.clone())
                            .unwrap_or_else(|| "-".into());
                        ui.label(scope);
                        ui.label(r.launches.to_string());
                        ui.label(fmt_ns(r.total_ns as f64));
                        ui.label(format!("{:.1}%", 100.0 * r.total_ns as f64 / run_ns));
                        ui.label(fmt_ns(r.mean_ns()));
                        ui.label(fmt_bytes(r.bytes / r.launches.max(1) as u64));
                        ui.label(format!("{:.2}", r.gb_per_s()));
                        ui.end_row();
                    }
                });
        });
    if let Some(id) = pick {
        view.select(Some(id));
    }
}

/// The panel: the runs' bar chart, a run picker and the run's kernel table.
pub fn ui(ui: &mut egui::Ui, loaded: &Loaded, view: &mut View) {
    if loaded.profile.runs.is_empty() {
        ui.label("The profile has no runs: run an entry point (Run) or open a saved profile.");
        return;
    }
    runs_chart(ui, loaded, view, "runs-chart", 170.0);
    ui.separator();
    ui.horizontal(|ui| run_picker(ui, loaded, view, "kernels-run"));
    if let Some(run) = loaded.run(view.run) {
        table(ui, loaded, run, view);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(name: &str, start: u64, end: u64, bytes: u64) -> Launch {
        Launch {
            name: name.into(),
            what: "map".into(),
            loc: None,
            scope: None,
            submission: 0,
            start_ns: start,
            end_ns: end,
            workgroups: [1, 1, 1],
            bytes,
        }
    }

    #[test]
    fn rows_group_by_name_and_sort() {
        let ls = vec![
            l("a", 0, 100, 1000),
            l("b", 100, 400, 300),
            l("a", 400, 500, 1000),
            l("c", 500, 520, 2000),
        ];
        let mut rows = summarize(&ls);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].launches, 2);
        assert_eq!(rows[0].total_ns, 200);
        assert_eq!(rows[0].gb_per_s(), 10.0);
        sort_rows(&mut rows, SortKey::Total, true);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["b", "a", "c"]);
        sort_rows(&mut rows, SortKey::GbPerS, true);
        assert_eq!(rows[0].name, "c");
        sort_rows(&mut rows, SortKey::Launches, true);
        assert_eq!(rows[0].name, "a");
        sort_rows(&mut rows, SortKey::Name, false);
        assert_eq!(rows[2].name, "c");
        sort_rows(&mut rows, SortKey::Mean, false);
        assert_eq!(rows[0].name, "c");
    }

    #[test]
    fn the_overhead_names_the_warm_runs_it_compares() {
        let run = |entry: &str, kind, cold, end| Run {
            entry: entry.into(),
            kind,
            wall_ns: 0,
            cold,
            launches: vec![l("a", 0, end, 0)],
        };
        let mut p = Profile {
            version: vkad_profile::FORMAT_VERSION,
            program: vkad_profile::ProgramInfo {
                path: "p.fut".into(),
                source: String::new(),
            },
            device: vkad_profile::DeviceInfo {
                name: "d".into(),
                device_type: "cpu".into(),
                driver: "x".into(),
                subgroup_size: 0,
                timestamps: true,
            },
            ir: vec![],
            scopes: vec![],
            runs: vec![
                run("cost", RunKind::Primal, Some(true), 90_000),
                run("cost", RunKind::Primal, Some(false), 10_000),
                run("newton", RunKind::Gradient, Some(true), 900_000),
                run("newton", RunKind::Gradient, Some(false), 30_000),
            ],
        };
        assert_eq!(
            overhead_text(&p).expect("both kinds"),
            "AD overhead: 3.00× = gradient 30.0 µs ÷ primal 10.0 µs (mean kernel time of the \
             warm runs newton [4] and cost [2]); cold runs left out: 1, 3"
        );
        assert_eq!(charted_runs(&p.runs, false), [1, 3]);
        assert_eq!(charted_runs(&p.runs, true), [0, 1, 2, 3]);
        p.runs.truncate(3);
        assert!(overhead_text(&p)
            .expect("both kinds")
            .starts_with("AD overhead: needs a warm gradient run"));
        p.runs.truncate(2);
        assert_eq!(overhead_text(&p), None);
    }
}
