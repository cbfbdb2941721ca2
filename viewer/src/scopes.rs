//! The scope nest: the AD report's scope tree as nested boxes. Each box is coloured by how many
//! times the scope's forward sweep runs after AD and simplification (green: once, no
//! re-execution; yellow, orange, red: 2, 3, more; grey: simplified away or unknown), shows the
//! checkpoint memory of loops and the device time of the scope's kernels in the selected run.
//! Clicking a box selects the scope: the other panels highlight its source lines, IR lines and
//! kernels, and [`details`] lists its kernels.

use crate::model::{fmt_ns, runs_colour, runs_text, Loaded, View};
use egui::{Color32, RichText, Sense, Stroke};
use std::collections::BTreeMap;
use vkad_profile::{Launch, Run, Scope};

/// Whether a function's scope tree comes from the prelude: it has statements, none of them in
/// the program's file.
fn from_prelude(loaded: &Loaded, s: &Scope) -> bool {
    fn locs<'a>(s: &'a Scope, out: &mut Vec<&'a vkad_profile::Loc>) {
        out.extend(s.stm_locs.iter());
        out.extend(s.loc.iter());
        for c in &s.children {
            locs(c, out);
        }
    }
    let mut all = Vec::new();
    locs(s, &mut all);
    !all.is_empty() && all.iter().all(|l| !loaded.in_program(l))
}

/// The legend of the colours.
pub fn legend(ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for (runs, text) in [
            (Some(1), "1× (no re-execution)"),
            (Some(2), "2×"),
            (Some(3), "3×"),
            (Some(4), "≥4×"),
            (Some(0), "simplified away"),
            (None, "unknown"),
        ] {
            let (r, p) = ui.allocate_painter(egui::vec2(12.0, 12.0), Sense::hover());
            p.rect_filled(r.rect, 2.0, runs_colour(runs));
            ui.label(RichText::new(text).small());
            ui.add_space(6.0);
        }
    });
}

/// The panel: legend, the tree of every function (those of the prelude only when
/// [`View::show_prelude`]), and the selected scope's [`details`] below.
pub fn ui(ui: &mut egui::Ui, loaded: &Loaded, view: &mut View) {
    legend(ui);
    ui.checkbox(&mut view.show_prelude, "prelude functions");
    let show_prelude = view.show_prelude;
    let run = loaded.run(view.run);
    if let Some(run) = run {
        ui.label(
            RichText::new(format!(
                "kernel time: {} ({} kernels)",
                crate::model::run_label(run),
                run.launches.len()
            ))
            .small()
            .weak(),
        );
    }
    ui.separator();
    if loaded.profile.scopes.is_empty() {
        ui.label("The profile has no scope tree.");
        return;
    }
    let mut pick = None;
    let avail = ui.available_height();
    egui::ScrollArea::vertical()
        .id_salt("scopes")
        .max_height(if view.selected.is_some() {
            avail * 0.6
        } else {
            avail
        })
        .auto_shrink([false, true])
        .show(ui, |ui| {
            for s in &loaded.profile.scopes {
                if !show_prelude && from_prelude(loaded, s) {
                    continue;
                }
                scope_box(ui, loaded, run, s, view.selected, &mut pick);
            }
        });
    if let Some(id) = pick {
        view.select(if view.selected == Some(id) {
            None
        } else {
            Some(id)
        });
    }
    if view.selected.is_some() {
        ui.separator();
        details(ui, loaded, view);
    }
}

/// One scope as a box holding its children's boxes.
fn scope_box(
    ui: &mut egui::Ui,
    loaded: &Loaded,
    run: Option<&Run>,
    s: &Scope,
    selected: Option<u32>,
    pick: &mut Option<u32>,
) {
    let colour = runs_colour(s.runs);
    let is_sel = selected == Some(s.id);
    let stroke = if is_sel {
        Stroke::new(2.5, ui.visuals().strong_text_color())
    } else {
        Stroke::new(1.0, colour)
    };
    let fill = colour.gamma_multiply(if is_sel { 0.45 } else { 0.18 });
    egui::Frame::new()
        .fill(fill)
        .stroke(stroke)
        .corner_radius(4.0)
        .inner_margin(egui::Margin::symmetric(6, 3))
        .outer_margin(egui::Margin::symmetric(0, 2))
        .show(ui, |ui| {
            ui.set_min_width(ui.available_width());
            let header = ui
                .horizontal_wrapped(|ui| {
                    ui.label(RichText::new(&s.label).strong());
                    ui.label(RichText::new(runs_text(s.runs)).color(colour).small());
                    if !s.checkpoint_elems.is_empty() {
                        ui.label(
                            RichText::new(format!("checkpoints: {} elems", s.checkpoint_elems))
                                .small()
                                .color(Color32::from_rgb(190, 150, 230)),
                        );
                    }
                    if let Some(run) = run {
                        let ns = loaded.scope_ns(run, s.id);
                        if ns > 0 {
                            ui.label(RichText::new(fmt_ns(ns as f64)).small().weak());
                        }
                    }
                    if let Some(l) = &s.loc {
                        ui.label(RichText::new(format!("line {}", l.line)).small().weak());
                    }
                })
                .response;
            let header = ui.interact(
                header.rect,
                ui.scope_id().with(("scope", s.id)),
                Sense::click(),
            );
            if header.clicked() {
                *pick = Some(s.id);
            }
            header.on_hover_text(format!(
                "{} (id {}): {}; {} statement(s){}",
                s.kind,
                s.id,
                runs_text(s.runs),
                s.stm_locs.len(),
                s.loc
                    .as_ref()
                    .map(|l| format!(", opened at {l}"))
                    .unwrap_or_default()
            ));
            for c in &s.children {
                scope_box(ui, loaded, run, c, selected, pick);
            }
        });
}

/// Kernels of one name: launches and total device time.
struct KernelGroup {
    launches: usize,
    ns: u64,
}

/// The selected scope: what it is, and the kernels it (and the scopes in it) launched in the
/// selected run.
pub fn details(ui: &mut egui::Ui, loaded: &Loaded, view: &mut View) {
    let Some(id) = view.selected else { return };
    let Some(s) = loaded.profile.scope(id) else {
        ui.label(format!("scope {id} is not in this profile"));
        return;
    };
    ui.horizontal(|ui| {
        ui.strong(&s.label);
        if ui.small_button("clear selection").clicked() {
            view.select(None);
        }
    });
    let mut facts = vec![s.kind.clone(), runs_text(s.runs)];
    if let Some(l) = &s.loc {
        facts.push(format!("at {l}"));
    }
    if !s.checkpoint_elems.is_empty() {
        facts.push(format!("checkpoint memory {} elements", s.checkpoint_elems));
    }
    ui.label(facts.join(" · "));
    let Some(run) = loaded.run(view.run) else {
        return;
    };
    let mut groups: BTreeMap<&str, KernelGroup> = BTreeMap::new();
    for l in run.launches.iter().filter(|l| loaded.launch_within(l, id)) {
        let g = groups
            .entry(&l.name)
            .or_insert(KernelGroup { launches: 0, ns: 0 });
        g.launches += 1;
        g.ns += Launch::duration_ns(l);
    }
    if groups.is_empty() {
        ui.label(RichText::new(format!("no kernels in {}", crate::model::run_label(run))).weak());
        return;
    }
    let total: u64 = groups.values().map(|g| g.ns).sum();
    let run_ns = run.kernel_ns().max(1);
    ui.label(format!(
        "{} kernel(s) in {}: {} ({:.0}% of the run's kernel time)",
        groups.len(),
        crate::model::run_label(run),
        fmt_ns(total as f64),
        100.0 * total as f64 / run_ns as f64
    ));
    let mut rows: Vec<(&str, KernelGroup)> = groups.into_iter().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1.ns));
    egui::ScrollArea::vertical()
        .id_salt("scope-kernels")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            egui::Grid::new("scope-kernels-grid")
                .striped(true)
                .num_columns(3)
                .show(ui, |ui| {
                    ui.strong("kernel");
                    ui.strong("launches");
                    ui.strong("time");
                    ui.end_row();
                    for (name, g) in rows {
                        ui.label(RichText::new(name).monospace().small());
                        ui.label(g.launches.to_string());
                        ui.label(fmt_ns(g.ns as f64));
                        ui.end_row();
                    }
                });
        });
}
