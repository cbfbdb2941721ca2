//! The kernels of a run: a bar chart of every run's device time (primal and gradient runs in
//! their own colours, with the host's wall time beside), and a table of the run's kernels,
//! one row per kernel name, sortable by name, launches, total and mean time and achieved
//! bandwidth (click a column header; again to reverse). Clicking a kernel selects its scope;
//! the rows of the selected scope are highlighted.

use crate::ir::OWN_BG;
use crate::model::{fmt_bytes, fmt_ns, kind_colour, run_label, run_picker, Loaded, SortKey, View};
use egui::{Color32, RichText};
use egui_plot::{Bar, BarChart, Legend, Plot};
use std::collections::BTreeMap;
use vkad_profile::{Launch, Loc, Run, RunKind};

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

/// Total kernel time of the runs of each kind: (primal, gradient), ns.
pub fn kind_totals(runs: &[Run]) -> (u64, u64) {
    let mut t = (0, 0);
    for r in runs {
        match r.kind {
            RunKind::Primal => t.0 += r.kernel_ns(),
            RunKind::Gradient => t.1 += r.kernel_ns(),
        }
    }
    t
}

/// The bar chart of every run's kernel time (coloured by kind) and wall time.
pub fn runs_chart(ui: &mut egui::Ui, loaded: &Loaded, id: &str, height: f32) {
    let runs = &loaded.profile.runs;
    if runs.is_empty() {
        return;
    }
    let (p, g) = kind_totals(runs);
    if p > 0 && g > 0 {
        ui.label(format!(
            "gradient ÷ primal kernel time: {:.2}× ({} / {})",
            g as f64 / p as f64,
            fmt_ns(g as f64),
            fmt_ns(p as f64)
        ));
    }
    let mut primal = Vec::new();
    let mut gradient = Vec::new();
    let mut wall = Vec::new();
    for (k, r) in runs.iter().enumerate() {
        let bar = Bar::new(k as f64 - 0.15, r.kernel_ns() as f64 / 1e3)
            .width(0.3)
            .name(format!(
                "{}: kernels {}",
                run_label(r),
                fmt_ns(r.kernel_ns() as f64)
            ));
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
    let labels: Vec<String> = runs.iter().map(run_label).collect();
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
    runs_chart(ui, loaded, "runs-chart", 170.0);
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
    fn totals_by_kind() {
        let run = |kind, end| Run {
            entry: "e".into(),
            kind,
            wall_ns: 0,
            cold: None,
            launches: vec![l("a", 0, end, 0)],
        };
        let runs = vec![
            run(RunKind::Primal, 10),
            run(RunKind::Gradient, 30),
            run(RunKind::Gradient, 5),
        ];
        assert_eq!(kind_totals(&runs), (10, 35));
    }
}
