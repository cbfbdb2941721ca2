//! The IR panel: the program's source and its IR at each stage (before AD, after AD, after
//! simplification) side by side, with the lines of the selected scope highlighted in each.
//!
//! The IR printer writes no source locations, so the IR text of a profile is linked to the
//! source by compiling the profile's source again ([`link_stages`]): each stage's text is
//! matched against the printed IR of the pipeline's programs, and where one prints the same
//! text its statements give each line a location.

use crate::model::{Loaded, Mark, View};
use egui::{Color32, RichText, Sense, Shape, TextWrapMode};
use vkad_core::ir::{Body, Program};
use vkad_core::passes::traverse::nested_bodies;
use vkad_profile::{Loc, Profile};

/// Background of a line of the selected scope's own statements.
pub const OWN_BG: Color32 = Color32::from_rgba_premultiplied(60, 110, 170, 150);
/// Background of a line of a scope nested in the selected one.
pub const NESTED_BG: Color32 = Color32::from_rgba_premultiplied(40, 70, 100, 90);

/// Per IR stage of `profile`, per line of its text, the source location of the statement
/// printed there (a line of a statement without a location gets its enclosing statement's);
/// and, when some stage could not be linked, why. A stage that could not be linked has an empty
/// vector.
pub fn link_stages(profile: &Profile) -> (Vec<Vec<Option<Loc>>>, Option<String>) {
    let empty = vec![Vec::new(); profile.ir.len()];
    if profile.ir.is_empty() {
        return (empty, None);
    }
    let name = &profile.program.path;
    let source = &profile.program.source;
    let compiled = match vkad_core::compile_with(name, source, &mut vkad_core::modules::FileLoader)
    {
        Ok(c) => c,
        Err(e) => {
            let first = e.render().lines().next().unwrap_or_default().to_string();
            return (
                empty,
                Some(format!(
                    "IR lines are not linked to the source: the source does not compile now ({first})"
                )),
            );
        }
    };
    let mut candidates: Vec<Program> = Vec::new();
    if let Ok(checked) = vkad_core::check_with(name, source, &mut vkad_core::modules::FileLoader) {
        candidates.push(vkad_core::lower::lower_program(&checked.ast, &checked.sources).program);
    }
    let (after_ad, _) = vkad_core::ad::transform::transform_partial(compiled.ir_ad.clone());
    let simplified = vkad_core::passes::simplify(after_ad.clone());
    candidates.push(compiled.ir_ad);
    candidates.push(after_ad);
    candidates.push(simplified);
    candidates.push(compiled.ir);
    let printed: Vec<String> = candidates
        .iter()
        .map(vkad_core::ir::print::program_to_string)
        .collect();
    let mut unlinked = Vec::new();
    let mut out = Vec::new();
    for stage in &profile.ir {
        match printed.iter().position(|t| *t == stage.text) {
            Some(k) => out.push(line_locs(&mut candidates[k], &stage.text)),
            None => {
                unlinked.push(stage.name.clone());
                out.push(Vec::new());
            }
        }
    }
    let note = (!unlinked.is_empty()).then(|| {
        format!(
            "IR lines of {} are not linked to the source: this vkad compiles the program to \
             different IR than the one that made the profile",
            unlinked.join(", ")
        )
    });
    (out, note)
}

/// The source location of each line of `text`, the printed form of `p`.
pub fn line_locs(p: &mut Program, text: &str) -> Vec<Option<Loc>> {
    let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
    let mut out = vec![None; lines.len()];
    let mut cursor = 0;
    for fd in &mut p.funs {
        while cursor < lines.len() && lines[cursor].is_empty() {
            cursor += 1;
        }
        let n = fd.to_string().lines().count();
        let hi = (cursor + n).min(lines.len());
        link_body(&mut fd.body, &lines, cursor, hi, None, &mut out);
        cursor = hi;
    }
    out
}

/// Links the statements of `body`, printed within lines `lo..hi`.
fn link_body(
    body: &mut Body,
    lines: &[&str],
    lo: usize,
    hi: usize,
    inherited: Option<&Loc>,
    out: &mut [Option<Loc>],
) {
    let mut cursor = lo;
    for s in &mut body.stms {
        let text = s.to_string();
        let first = text.lines().next().unwrap_or_default().trim_start();
        let n = text.lines().count().max(1);
        let found = (cursor..hi)
            .find(|&i| lines[i] == first)
            .or_else(|| (lo..hi).find(|&i| lines[i] == first));
        let Some(i) = found else { continue };
        let loc = s
            .loc
            .as_ref()
            .map(|l| Loc {
                file: l.file.to_string(),
                line: l.line,
                col: l.col,
            })
            .or_else(|| inherited.cloned());
        let end = (i + n).min(hi);
        for slot in &mut out[i..end] {
            *slot = loc.clone();
        }
        for nb in nested_bodies(&mut s.exp) {
            link_body(nb, lines, i + 1, end, loc.as_ref(), out);
        }
        cursor = end;
    }
}

/// The deepest scope with a statement at `loc` (or, with `line_only`, on the same line).
pub fn scope_at(loaded: &Loaded, file: &str, line: u32, col: Option<u32>) -> Option<u32> {
    let mut best = None;
    for s in loaded.profile.all_scopes() {
        let hit = s
            .stm_locs
            .iter()
            .chain(s.loc.iter())
            .any(|l| l.file == file && l.line == line && col.is_none_or(|c| c == l.col));
        if hit {
            // all_scopes lists parents before children: the last hit is the deepest.
            best = Some(s.id);
        }
    }
    best
}

/// One column of numbered lines: `marks[i]` colours line i; clicking line i returns i.
/// Scrolls to the first marked line when `scroll` is set.
fn lines_view(
    ui: &mut egui::Ui,
    id: &str,
    lines: &[&str],
    marks: &[Mark],
    scroll: bool,
) -> Option<usize> {
    let row_h = ui.text_style_height(&egui::TextStyle::Monospace) + ui.spacing().item_spacing.y;
    let mut area = egui::ScrollArea::both()
        .id_salt(id)
        .auto_shrink([false, false]);
    if scroll {
        if let Some(first) = marks.iter().position(|m| *m != Mark::None) {
            area = area.vertical_scroll_offset((first as f32 - 3.0).max(0.0) * row_h);
        }
    }
    let width = lines.len().to_string().len();
    let mut clicked = None;
    area.show_rows(ui, row_h, lines.len(), |ui, range| {
        for i in range {
            let bg = ui.painter().add(Shape::Noop);
            let text = format!("{:>width$}  {}", i + 1, lines[i]);
            let r = ui.add(
                egui::Label::new(RichText::new(text).monospace())
                    .wrap_mode(TextWrapMode::Extend)
                    .sense(Sense::click()),
            );
            let fill = match marks.get(i) {
                Some(Mark::Own) => Some(OWN_BG),
                Some(Mark::Nested) => Some(NESTED_BG),
                _ => None,
            };
            if let Some(fill) = fill {
                let rect = egui::Rect::from_min_max(
                    r.rect.min,
                    egui::pos2(ui.max_rect().right().max(r.rect.right()), r.rect.max.y),
                );
                ui.painter().set(bg, Shape::rect_filled(rect, 0.0, fill));
            }
            if r.clicked() {
                clicked = Some(i);
            }
        }
    });
    clicked
}

/// The panel: source and IR stages side by side; clicking a line selects the deepest scope
/// with a statement there.
pub fn ui(ui: &mut egui::Ui, loaded: &Loaded, view: &mut View) {
    let profile = &loaded.profile;
    let file = profile.program.path.as_str();
    let sel = view.selected.map(|id| loaded.scope_locs(id));
    ui.horizontal_wrapped(|ui| {
        ui.label("Show:");
        for (k, stage) in profile.ir.iter().enumerate() {
            let mut shown = !view.hidden_stages.contains(&k);
            if ui.checkbox(&mut shown, &stage.name).changed() {
                if shown {
                    view.hidden_stages.remove(&k);
                } else {
                    view.hidden_stages.insert(k);
                }
            }
        }
        if let Some(note) = &loaded.ir_note {
            ui.label(RichText::new(note).weak().italics());
        }
    });
    ui.separator();
    let shown: Vec<usize> = (0..profile.ir.len())
        .filter(|k| !view.hidden_stages.contains(k))
        .collect();
    let scroll = view.scroll_to_selection;
    let mut pick: Option<u32> = None;
    ui.columns(shown.len() + 1, |cols| {
        // The source.
        let src_lines: Vec<&str> = profile.program.source.lines().collect();
        let (own, nested) = sel.as_ref().map(|s| s.lines(file)).unwrap_or_default();
        let marks: Vec<Mark> = (1..=src_lines.len() as u32)
            .map(|n| {
                if own.contains(&n) {
                    Mark::Own
                } else if nested.contains(&n) {
                    Mark::Nested
                } else {
                    Mark::None
                }
            })
            .collect();
        cols[0].strong(format!("source: {file}"));
        if let Some(i) = lines_view(&mut cols[0], "source", &src_lines, &marks, scroll) {
            pick = scope_at(loaded, file, i as u32 + 1, None);
        }
        // The IR stages.
        for (c, &k) in shown.iter().enumerate() {
            let ui = &mut cols[c + 1];
            let stage = &profile.ir[k];
            let locs = loaded.ir_locs.get(k).map(Vec::as_slice).unwrap_or(&[]);
            let lines: Vec<&str> = stage.text.lines().collect();
            let marks: Vec<Mark> = (0..lines.len())
                .map(|i| match (&sel, locs.get(i)) {
                    (Some(s), Some(Some(l))) => s.mark(l),
                    _ => Mark::None,
                })
                .collect();
            ui.strong(format!("IR {}", stage.name));
            if let Some(i) = lines_view(ui, &format!("ir{k}"), &lines, &marks, scroll) {
                if let Some(Some(l)) = locs.get(i) {
                    pick = scope_at(loaded, &l.file, l.line, Some(l.col));
                }
            }
        }
    });
    view.scroll_to_selection = false;
    if let Some(id) = pick {
        view.select(Some(id));
        // The click's own view is where the user is looking: do not jump.
        view.scroll_to_selection = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "\
def f (x: f64) : f64 =
  let y = x * x
  in y + 1

entry main (xs: []f64) : []f64 =
  map f xs
";

    #[test]
    fn every_statement_line_of_the_optimised_ir_gets_its_location() {
        let mut c = vkad_core::compile("p.fut", SRC).unwrap();
        let text = vkad_core::ir::print::program_to_string(&c.ir);
        let locs = line_locs(&mut c.ir, &text);
        assert_eq!(locs.len(), text.lines().count());
        // The map statement's line carries line 6 of the source; the body of `f`, inlined into
        // the map's lambda, carries lines 2 and 3.
        let lines: Vec<&str> = text.lines().collect();
        let map_line = lines.iter().position(|l| l.contains("map(")).unwrap();
        assert_eq!(locs[map_line].as_ref().map(|l| l.line), Some(6));
        let mul = lines.iter().position(|l| l.contains("f64.mul")).unwrap();
        assert_eq!(locs[mul].as_ref().map(|l| l.line), Some(2));
        let add = lines.iter().position(|l| l.contains("f64.add")).unwrap();
        assert_eq!(locs[add].as_ref().map(|l| l.line), Some(3));
        // Lines outside statements (function headers, results) have none.
        assert!(locs[0].is_none());
    }

    #[test]
    fn stages_that_print_differently_are_not_linked() {
        let c = vkad_core::compile("p.fut", SRC).unwrap();
        let text = vkad_core::ir::print::program_to_string(&c.ir);
        let mut profile = vkad_profile::Profile {
            version: vkad_profile::FORMAT_VERSION,
            program: vkad_profile::ProgramInfo {
                path: "p.fut".into(),
                source: SRC.into(),
            },
            device: vkad_profile::DeviceInfo {
                name: "d".into(),
                device_type: "cpu".into(),
                driver: String::new(),
                subgroup_size: 0,
                timestamps: false,
            },
            ir: vec![
                vkad_profile::IrStage {
                    name: "optimised".into(),
                    text: text.clone(),
                },
                vkad_profile::IrStage {
                    name: "edited".into(),
                    text: format!("{text}\nfun extra : {{}} = {{ in {{}} }}\n"),
                },
            ],
            scopes: vec![],
            runs: vec![],
        };
        let (locs, note) = link_stages(&profile);
        assert_eq!(locs.len(), 2);
        assert!(locs[0].iter().any(Option::is_some));
        assert!(locs[1].is_empty());
        assert!(note.unwrap().contains("edited"));
        profile.program.source = "entry main = ".into();
        let (locs, note) = link_stages(&profile);
        assert!(locs.iter().all(Vec::is_empty));
        assert!(note.unwrap().contains("does not compile"));
    }
}
