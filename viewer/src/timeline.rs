//! The kernel timeline: the launches of one run on a time axis, one lane per queue submission,
//! coloured by construct (`map`, `reduce`, ...). Scroll or pinch to zoom the time axis, drag to
//! pan, double-click to reset; hovering a launch names it; clicking one selects its scope.
//! Launches outside the selected scope are dimmed.

use crate::model::{fmt_bytes, fmt_ns, run_label, run_picker, what_colour, Loaded, View};
use egui::{Color32, RichText, Stroke};
use egui_plot::{Bar, BarChart, Legend, Plot};
use std::collections::BTreeMap;
use vkad_profile::{Launch, Run};

/// Where a launch is drawn: its lane and its start and end on the time axis (µs; launch
/// numbers when the device has no timestamps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    pub lane: usize,
    pub start: f64,
    pub end: f64,
}

/// The submissions of `run` in order (one lane each), and each launch's place. Without
/// timestamps (every launch 0 ns) launches are laid out one after another, one unit each.
pub fn layout(run: &Run) -> (Vec<u32>, Vec<Placed>) {
    let mut subs: Vec<u32> = run.launches.iter().map(|l| l.submission).collect();
    subs.sort_unstable();
    subs.dedup();
    let timed = run.launches.iter().any(|l| l.end_ns > 0);
    let placed = run
        .launches
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let lane = subs.binary_search(&l.submission).unwrap_or(0);
            if timed {
                Placed {
                    lane,
                    start: l.start_ns as f64 / 1e3,
                    end: l.end_ns.max(l.start_ns) as f64 / 1e3,
                }
            } else {
                Placed {
                    lane,
                    start: k as f64,
                    end: k as f64 + 0.9,
                }
            }
        })
        .collect();
    (subs, placed)
}

/// The launch drawn at `(x, y)` in plot coordinates, if any.
pub fn launch_at(placed: &[Placed], x: f64, y: f64) -> Option<usize> {
    let lane = y.round();
    if lane < 0.0 || (y - lane).abs() > 0.45 {
        return None;
    }
    let lane = lane as usize;
    placed
        .iter()
        .position(|p| p.lane == lane && p.start <= x && x <= p.end)
}

fn describe(l: &Launch) -> String {
    let what = match l.workgroups {
        [0, 0, 0] => "transfer command (no kernel)".to_string(),
        [x, y, z] => format!("workgroups {x}×{y}×{z}"),
    };
    format!(
        "{}\n{} · {} · {:.2} GB/s · {what}",
        l.name,
        fmt_ns(l.duration_ns() as f64),
        fmt_bytes(l.bytes),
        l.gb_per_s(),
    )
}

/// The timeline plot of `run`; returns the scope of the launch clicked, if one was.
/// `link` links the time axes of plots with the same id (the comparison view).
pub fn plot(
    ui: &mut egui::Ui,
    loaded: &Loaded,
    run: &Run,
    selected: Option<u32>,
    id: &str,
    link: Option<egui::Id>,
    height: f32,
) -> Option<u32> {
    let (subs, placed) = layout(run);
    let timed = run.launches.iter().any(|l| l.end_ns > 0);
    // One chart per construct, so that the legend names the colours.
    let mut charts: BTreeMap<&str, Vec<Bar>> = BTreeMap::new();
    for (l, p) in run.launches.iter().zip(&placed) {
        let base = what_colour(&l.what);
        let dim = selected.is_some_and(|s| !loaded.launch_within(l, s));
        let fill = if dim { base.gamma_multiply(0.25) } else { base };
        let stroke = if selected.is_some() && !dim {
            Stroke::new(1.5, Color32::WHITE)
        } else {
            Stroke::new(0.5, base.gamma_multiply(0.6))
        };
        charts.entry(&l.what).or_default().push(
            Bar::new(p.lane as f64, (p.end - p.start).max(1e-3))
                .base_offset(p.start)
                .width(0.7)
                .name(describe(l))
                .fill(fill)
                .stroke(stroke),
        );
    }
    let lanes = subs.len();
    let lane_names: Vec<String> = subs.iter().map(|s| format!("sub {s}")).collect();
    let mut plot = Plot::new(id)
        .height(height)
        .legend(Legend::default())
        .invert_y(true)
        .allow_zoom([true, false])
        .allow_scroll([true, false])
        .allow_drag([true, false])
        .allow_boxed_zoom(false)
        .show_grid([true, false])
        .include_y(-0.6)
        .include_y(lanes as f64 - 0.4)
        .x_axis_label(if timed { "time (µs)" } else { "launch" })
        .y_axis_min_width(48.0)
        .y_axis_formatter(move |mark, _| {
            let v = mark.value;
            if (v - v.round()).abs() < 1e-6 && v >= 0.0 {
                lane_names.get(v as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .label_formatter(|_| None);
    if let Some(link) = link {
        plot = plot.link_axis(link, [true, false]);
    }
    let resp = plot.show(ui, |pu| {
        for (what, bars) in charts {
            pu.add(
                BarChart::new(what, bars)
                    .horizontal()
                    .color(what_colour(what))
                    .element_formatter(Box::new(|b, _| b.name.clone())),
            );
        }
        if pu.response().clicked() {
            pu.pointer_coordinate()
        } else {
            None
        }
    });
    let p = resp.inner?;
    let k = launch_at(&placed, p.x, p.y)?;
    run.launches[k].scope
}

/// The panel: a run picker, the run's totals and its timeline.
pub fn ui(ui: &mut egui::Ui, loaded: &Loaded, view: &mut View) {
    ui.horizontal(|ui| run_picker(ui, loaded, view, "timeline-run"));
    let Some(run) = loaded.run(view.run) else {
        ui.label("The profile has no runs: run an entry point (Run) or open a saved profile.");
        return;
    };
    let subs = layout(run).0.len();
    ui.label(format!(
        "{}: wall {} on the host, {} of kernels in {} launches, {} submission(s)",
        run_label(run),
        fmt_ns(run.wall_ns as f64),
        fmt_ns(run.kernel_ns() as f64),
        run.launches.len(),
        subs
    ));
    if !loaded.profile.device.timestamps || run.launches.iter().all(|l| l.end_ns == 0) {
        ui.label(
            RichText::new(
                "The device recorded no timestamps: launches are shown in order, one unit each.",
            )
            .italics()
            .weak(),
        );
    }
    let h = ui.available_height().max(120.0);
    if let Some(s) = plot(ui, loaded, run, view.selected, "timeline", None, h) {
        view.select(Some(s));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vkad_profile::RunKind;

    fn launch(sub: u32, start: u64, end: u64) -> Launch {
        Launch {
            name: "map.0".into(),
            what: "map".into(),
            loc: None,
            scope: None,
            submission: sub,
            start_ns: start,
            end_ns: end,
            workgroups: [1, 1, 1],
            bytes: 0,
        }
    }

    #[test]
    fn lanes_are_submissions_and_clicks_find_launches() {
        let run = Run {
            entry: "main".into(),
            kind: RunKind::Primal,
            wall_ns: 0,
            cold: None,
            launches: vec![
                launch(3, 0, 2000),
                launch(3, 2000, 3000),
                launch(7, 5000, 9000),
            ],
        };
        let (subs, placed) = layout(&run);
        assert_eq!(subs, vec![3, 7]);
        assert_eq!(placed[2].lane, 1);
        assert_eq!(placed[1].start, 2.0);
        assert_eq!(launch_at(&placed, 2.5, 0.1), Some(1));
        assert_eq!(launch_at(&placed, 6.0, 1.0), Some(2));
        assert_eq!(launch_at(&placed, 6.0, 0.0), None);
        assert_eq!(launch_at(&placed, 6.0, 0.5), None);
    }

    #[test]
    fn without_timestamps_launches_are_laid_out_in_order() {
        let run = Run {
            entry: "main".into(),
            kind: RunKind::Primal,
            wall_ns: 0,
            cold: None,
            launches: vec![launch(0, 0, 0), launch(0, 0, 0)],
        };
        let (_, placed) = layout(&run);
        assert!(placed[1].start > placed[0].end - 1e-9);
    }
}
