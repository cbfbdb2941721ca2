//! Two profiles side by side (A: the current one, B: a second one; before and after a change,
//! or the same program on two devices): their programs and devices, each pair of matching runs
//! (same entry and kind) with kernel times and the ratio B ÷ A, a grouped bar chart of those,
//! the kernels of the chosen pair matched by name, and the two timelines on a linked time axis.

use crate::kernels::summarize;
use crate::model::{fmt_ns, run_label, run_picker, Loaded, View};
use egui::{Color32, RichText};
use egui_plot::{Bar, BarChart, Legend, Plot};
use std::collections::BTreeMap;
use vkad_profile::Run;

/// Colour of profile A in the charts.
pub const A_COLOUR: Color32 = Color32::from_rgb(70, 130, 200);
/// Colour of profile B in the charts.
pub const B_COLOUR: Color32 = Color32::from_rgb(230, 150, 50);

/// For each run of `a`, the run of `b` with the same entry, kind and warmth (a cold run is
/// compared with a cold one; the k-th such run of `a` matches the k-th of `b`).
pub fn match_runs(a: &[Run], b: &[Run]) -> Vec<Option<usize>> {
    let key = |r: &Run| {
        (
            r.entry.clone(),
            r.kind == vkad_profile::RunKind::Gradient,
            r.warmth() == vkad_profile::Warmth::Cold,
        )
    };
    let mut seen: BTreeMap<(String, bool, bool), usize> = BTreeMap::new();
    a.iter()
        .map(|r| {
            let k = key(r);
            let nth = seen.entry(k.clone()).or_insert(0);
            let found = b
                .iter()
                .enumerate()
                .filter(|(_, x)| key(x) == k)
                .nth(*nth)
                .map(|(k, _)| k);
            *nth += 1;
            found
        })
        .collect()
}

/// `B ÷ A` as text (`-` when A is 0).
pub fn ratio(a: u64, b: u64) -> String {
    if a == 0 {
        "-".into()
    } else {
        format!("{:.2}×", b as f64 / a as f64)
    }
}

/// One kernel name's total time in A and in B.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPair {
    pub name: String,
    pub a_ns: Option<u64>,
    pub b_ns: Option<u64>,
    pub a_launches: usize,
    pub b_launches: usize,
}

/// The kernels of two runs matched by name, the largest (in either) first.
pub fn kernel_pairs(a: &Run, b: &Run) -> Vec<KernelPair> {
    let mut m: BTreeMap<String, KernelPair> = BTreeMap::new();
    for r in summarize(&a.launches) {
        m.insert(
            r.name.clone(),
            KernelPair {
                name: r.name,
                a_ns: Some(r.total_ns),
                b_ns: None,
                a_launches: r.launches,
                b_launches: 0,
            },
        );
    }
    for r in summarize(&b.launches) {
        let e = m.entry(r.name.clone()).or_insert(KernelPair {
            name: r.name,
            a_ns: None,
            b_ns: None,
            a_launches: 0,
            b_launches: 0,
        });
        e.b_ns = Some(r.total_ns);
        e.b_launches = r.launches;
    }
    let mut v: Vec<KernelPair> = m.into_values().collect();
    v.sort_by_key(|p| std::cmp::Reverse(p.a_ns.unwrap_or(0).max(p.b_ns.unwrap_or(0))));
    v
}

fn profile_facts(ui: &mut egui::Ui, tag: &str, colour: Color32, l: &Loaded) {
    ui.vertical(|ui| {
        ui.label(
            RichText::new(format!("{tag}: {}", l.title()))
                .strong()
                .color(colour),
        );
        let d = &l.profile.device;
        ui.label(format!(
            "device: {} ({}, {})",
            d.name, d.device_type, d.driver
        ));
        ui.label(format!("{} run(s)", l.profile.runs.len()));
    });
}

/// The panel. Without a second profile it says how to open one.
pub fn ui(ui: &mut egui::Ui, a: &Loaded, b: Option<&Loaded>, view: &mut View) {
    let Some(b) = b else {
        ui.label(
            "Compare this profile with another: File > Open profile to compare…, or \
             “Keep as comparison” before changing the program or the device and running again.",
        );
        return;
    };
    ui.columns(2, |cols| {
        profile_facts(&mut cols[0], "A", A_COLOUR, a);
        profile_facts(&mut cols[1], "B", B_COLOUR, b);
    });
    if a.profile.program.source != b.profile.program.source {
        ui.label(RichText::new("The programs differ (source text).").italics());
    }
    ui.separator();
    let matches = match_runs(&a.profile.runs, &b.profile.runs);
    egui::Grid::new("compare-runs")
        .striped(true)
        .num_columns(6)
        .spacing([14.0, 4.0])
        .show(ui, |ui| {
            for h in ["run", "A kernels", "B kernels", "B ÷ A", "A wall", "B wall"] {
                ui.strong(h);
            }
            ui.end_row();
            for (ra, mb) in a.profile.runs.iter().zip(&matches) {
                ui.label(run_label(ra));
                ui.label(fmt_ns(ra.kernel_ns() as f64));
                match mb.and_then(|k| b.profile.runs.get(k)) {
                    Some(rb) => {
                        ui.label(fmt_ns(rb.kernel_ns() as f64));
                        ui.label(ratio(ra.kernel_ns(), rb.kernel_ns()));
                        ui.label(fmt_ns(ra.wall_ns as f64));
                        ui.label(fmt_ns(rb.wall_ns as f64));
                    }
                    None => {
                        ui.label("not in B");
                        ui.label("");
                        ui.label(fmt_ns(ra.wall_ns as f64));
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
    chart(ui, a, b, &matches);
    ui.separator();
    ui.horizontal(|ui| run_picker(ui, a, view, "compare-run"));
    let Some(ra) = a.run(view.run) else { return };
    let Some(rb) = matches
        .get(view.run)
        .copied()
        .flatten()
        .and_then(|k| b.profile.runs.get(k))
    else {
        ui.label(format!("B has no run of {}", run_label(ra)));
        return;
    };
    ui.columns(2, |cols| {
        egui::ScrollArea::vertical()
            .id_salt("compare-kernels")
            .max_height(cols[0].available_height() * 0.5)
            .auto_shrink([false, true])
            .show(&mut cols[0], |ui| {
                egui::Grid::new("compare-kernel-grid")
                    .striped(true)
                    .num_columns(4)
                    .show(ui, |ui| {
                        for h in ["kernel", "A", "B", "B ÷ A"] {
                            ui.strong(h);
                        }
                        ui.end_row();
                        for p in kernel_pairs(ra, rb) {
                            ui.label(RichText::new(&p.name).monospace().small());
                            let cell = |ns: Option<u64>, n: usize| {
                                ns.map(|t| format!("{} ({n}×)", fmt_ns(t as f64)))
                                    .unwrap_or_else(|| "-".into())
                            };
                            ui.label(cell(p.a_ns, p.a_launches));
                            ui.label(cell(p.b_ns, p.b_launches));
                            match (p.a_ns, p.b_ns) {
                                (Some(x), Some(y)) => ui.label(ratio(x, y)),
                                _ => ui.label(""),
                            };
                            ui.end_row();
                        }
                    });
            });
        let link = cols[1].scope_id().with("compare-link");
        let h = (cols[1].available_height() / 2.0 - 30.0).max(90.0);
        let ui = &mut cols[1];
        ui.label(RichText::new("A").color(A_COLOUR).strong());
        if let Some(s) = crate::timeline::plot(ui, a, ra, view.selected, "tl-a", Some(link), h) {
            view.select(Some(s));
        }
        ui.label(RichText::new("B").color(B_COLOUR).strong());
        // Scope ids of B index B's tree: a click there selects nothing in A.
        crate::timeline::plot(ui, b, rb, None, "tl-b", Some(link), h);
    });
}

/// Grouped bars: each run's kernel time in A and in B.
fn chart(ui: &mut egui::Ui, a: &Loaded, b: &Loaded, matches: &[Option<usize>]) {
    let mut ba = Vec::new();
    let mut bb = Vec::new();
    for (k, (ra, mb)) in a.profile.runs.iter().zip(matches).enumerate() {
        ba.push(
            Bar::new(k as f64 - 0.17, ra.kernel_ns() as f64 / 1e3)
                .width(0.32)
                .name(format!(
                    "A {}: {}",
                    run_label(ra),
                    fmt_ns(ra.kernel_ns() as f64)
                )),
        );
        if let Some(rb) = mb.and_then(|j| b.profile.runs.get(j)) {
            bb.push(
                Bar::new(k as f64 + 0.17, rb.kernel_ns() as f64 / 1e3)
                    .width(0.32)
                    .name(format!(
                        "B {}: {}",
                        run_label(rb),
                        fmt_ns(rb.kernel_ns() as f64)
                    )),
            );
        }
    }
    let labels: Vec<String> = a.profile.runs.iter().map(run_label).collect();
    Plot::new("compare-chart")
        .height(150.0)
        .legend(Legend::default())
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .show_grid([false, true])
        .include_y(0.0)
        .y_axis_label("kernel µs")
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
                BarChart::new("A", ba)
                    .color(A_COLOUR)
                    .element_formatter(fmt()),
            );
            pu.add(
                BarChart::new("B", bb)
                    .color(B_COLOUR)
                    .element_formatter(fmt()),
            );
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use vkad_profile::{Launch, RunKind};

    fn run(entry: &str, kind: RunKind, names: &[(&str, u64)]) -> Run {
        Run {
            entry: entry.into(),
            kind,
            wall_ns: 0,
            cold: None,
            launches: names
                .iter()
                .map(|(n, d)| Launch {
                    name: n.to_string(),
                    what: "map".into(),
                    loc: None,
                    scope: None,
                    submission: 0,
                    start_ns: 0,
                    end_ns: *d,
                    workgroups: [1, 1, 1],
                    bytes: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn runs_match_by_entry_kind_and_order() {
        let a = vec![
            run("loss", RunKind::Primal, &[]),
            run("main", RunKind::Gradient, &[]),
            run("loss", RunKind::Primal, &[]),
            run("other", RunKind::Primal, &[]),
        ];
        let b = vec![
            run("main", RunKind::Gradient, &[]),
            run("loss", RunKind::Primal, &[]),
            run("loss", RunKind::Primal, &[]),
        ];
        assert_eq!(match_runs(&a, &b), vec![Some(1), Some(0), Some(2), None]);
        // A cold run matches a cold one, a warm (or unrecorded) one a warm one.
        let with = |mut r: Run, cold| {
            r.cold = cold;
            r
        };
        let a = vec![
            with(run("main", RunKind::Gradient, &[]), Some(true)),
            with(run("main", RunKind::Gradient, &[]), Some(false)),
        ];
        let b = vec![
            with(run("main", RunKind::Gradient, &[]), Some(false)),
            with(run("main", RunKind::Gradient, &[]), Some(true)),
        ];
        assert_eq!(match_runs(&a, &b), vec![Some(1), Some(0)]);
        assert_eq!(ratio(0, 5), "-");
        assert_eq!(ratio(2, 5), "2.50×");
    }

    #[test]
    fn kernels_pair_by_name() {
        let a = run("m", RunKind::Primal, &[("x", 10), ("y", 50), ("x", 10)]);
        let b = run("m", RunKind::Primal, &[("x", 5), ("z", 70)]);
        let p = kernel_pairs(&a, &b);
        let names: Vec<&str> = p.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["z", "y", "x"]);
        assert_eq!(p[2].a_ns, Some(20));
        assert_eq!(p[2].a_launches, 2);
        assert_eq!(p[2].b_ns, Some(5));
        assert_eq!(p[0].a_ns, None);
    }
}
