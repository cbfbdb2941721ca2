//! What the panels share: a loaded profile with indices derived from it ([`Loaded`]), the view
//! state ([`View`]), colours and number formatting.

use egui::Color32;
use std::collections::{BTreeSet, HashMap, HashSet};
use vkad_profile::{Launch, Loc, Profile, Run, RunKind, Scope, Warmth};

/// A profile and what the panels derive from it once.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub profile: Profile,
    /// Where it was read from or saved to (`None` for a profile made in this session and not
    /// saved yet).
    pub file: Option<String>,
    /// Per IR stage of the profile, per line of its text: the source location of the statement
    /// printed on that line (see [`crate::ir::link_stages`]). Empty when unknown.
    pub ir_locs: Vec<Vec<Option<Loc>>>,
    /// Why the IR lines are not linked to the source, when they are not.
    pub ir_note: Option<String>,
    /// The parent of each scope that has one.
    parent: HashMap<u32, u32>,
}

impl Loaded {
    /// Wraps `profile`, with `ir_locs` as [`crate::ir::link_stages`] computes them.
    pub fn new(
        profile: Profile,
        file: Option<String>,
        ir_locs: Vec<Vec<Option<Loc>>>,
        ir_note: Option<String>,
    ) -> Loaded {
        let mut parent = HashMap::new();
        fn go(s: &Scope, parent: &mut HashMap<u32, u32>) {
            for c in &s.children {
                parent.insert(c.id, s.id);
                go(c, parent);
            }
        }
        for s in &profile.scopes {
            go(s, &mut parent);
        }
        Loaded {
            profile,
            file,
            ir_locs,
            ir_note,
            parent,
        }
    }

    /// Wraps `profile` and links its IR to its source by compiling the source again.
    pub fn with_links(profile: Profile, file: Option<String>) -> Loaded {
        let (locs, note) = crate::ir::link_stages(&profile);
        Loaded::new(profile, file, locs, note)
    }

    /// A short name: the file name of the program, and where the profile lives.
    pub fn title(&self) -> String {
        let prog = std::path::Path::new(&self.profile.program.path)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.profile.program.path.clone());
        match &self.file {
            Some(f) => format!("{prog} ({f})"),
            None => prog,
        }
    }

    /// Whether scope `id` is `ancestor` or nested in it.
    pub fn is_within(&self, id: u32, ancestor: u32) -> bool {
        let mut cur = id;
        // A malformed profile could have a cycle; the depth of a tree is at most its size.
        for _ in 0..=self.parent.len() {
            if cur == ancestor {
                return true;
            }
            match self.parent.get(&cur) {
                Some(&p) => cur = p,
                None => return false,
            }
        }
        false
    }

    /// Whether `l` was launched by a statement of scope `sel` or of a scope nested in it.
    pub fn launch_within(&self, l: &Launch, sel: u32) -> bool {
        l.scope.is_some_and(|s| self.is_within(s, sel))
    }

    /// The run at `index`, if there is one.
    pub fn run(&self, index: usize) -> Option<&Run> {
        self.profile.runs.get(index)
    }

    /// The source locations of the scope's own statements (and the statement opening it), and
    /// those of the scopes nested in it.
    pub fn scope_locs(&self, id: u32) -> ScopeLocs {
        let mut out = ScopeLocs::default();
        let Some(s) = self.profile.scope(id) else {
            return out;
        };
        out.own.extend(s.stm_locs.iter().cloned());
        out.own.extend(s.loc.iter().cloned());
        fn nested(s: &Scope, out: &mut HashSet<Loc>) {
            for c in &s.children {
                out.extend(c.stm_locs.iter().cloned());
                out.extend(c.loc.iter().cloned());
                nested(c, out);
            }
        }
        nested(s, &mut out.nested);
        out
    }

    /// The device time of the launches of scope `id` and the scopes nested in it, in `run`.
    pub fn scope_ns(&self, run: &Run, id: u32) -> u64 {
        run.launches
            .iter()
            .filter(|l| self.launch_within(l, id))
            .map(Launch::duration_ns)
            .sum()
    }

    /// Whether a source location is in the program's own file (not the prelude).
    pub fn in_program(&self, loc: &Loc) -> bool {
        loc.file == self.profile.program.path
    }
}

/// Source locations of a scope: its own statements', and those of nested scopes.
#[derive(Clone, Debug, Default)]
pub struct ScopeLocs {
    pub own: HashSet<Loc>,
    pub nested: HashSet<Loc>,
}

impl ScopeLocs {
    /// How `loc` relates to the scope.
    pub fn mark(&self, loc: &Loc) -> Mark {
        if self.own.contains(loc) {
            Mark::Own
        } else if self.nested.contains(loc) {
            Mark::Nested
        } else {
            Mark::None
        }
    }

    /// The lines of the locations in file `file`: own, then nested (without the own lines).
    pub fn lines(&self, file: &str) -> (BTreeSet<u32>, BTreeSet<u32>) {
        let own: BTreeSet<u32> = self
            .own
            .iter()
            .filter(|l| l.file == file)
            .map(|l| l.line)
            .collect();
        let nested = self
            .nested
            .iter()
            .filter(|l| l.file == file && !own.contains(&l.line))
            .map(|l| l.line)
            .collect();
        (own, nested)
    }
}

/// How a line or a launch relates to the selected scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A statement of the scope itself.
    Own,
    /// A statement of a scope nested in it.
    Nested,
    None,
}

/// Which column the kernel table is sorted by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    Name,
    Launches,
    Total,
    Mean,
    GbPerS,
}

/// The view state shared by the panels.
#[derive(Clone, Debug)]
pub struct View {
    /// The selected scope ([`Scope::id`]).
    pub selected: Option<u32>,
    /// Set when the selection changed: the source and IR views scroll to it once.
    pub scroll_to_selection: bool,
    /// The run shown by the timeline and the kernel table (an index into the runs).
    pub run: usize,
    /// The kernel table's sort column and direction (`true`: largest first).
    pub sort: (SortKey, bool),
    /// Which IR stages the IR panel shows (by index; missing entries are shown).
    pub hidden_stages: BTreeSet<usize>,
    /// Whether the scope panel shows the scope trees of prelude functions.
    pub show_prelude: bool,
    /// Whether the Kernels tab's bar chart shows the cold runs too.
    pub show_cold_runs: bool,
}

impl Default for View {
    fn default() -> Self {
        View {
            selected: None,
            scroll_to_selection: false,
            run: 0,
            sort: (SortKey::Total, true),
            hidden_stages: BTreeSet::new(),
            show_prelude: false,
            show_cold_runs: false,
        }
    }
}

impl View {
    /// Selects scope `id` (or nothing), scrolling the source views to it.
    pub fn select(&mut self, id: Option<u32>) {
        if self.selected != id {
            self.selected = id;
            self.scroll_to_selection = id.is_some();
        }
    }
}

/// A combo box choosing the run shown ([`View::run`]); nothing when there are no runs.
pub fn run_picker(ui: &mut egui::Ui, loaded: &Loaded, view: &mut View, id: &str) {
    let runs = &loaded.profile.runs;
    if runs.is_empty() {
        ui.label("no runs recorded");
        return;
    }
    if view.run >= runs.len() {
        view.run = 0;
    }
    let label = ui.label("run:");
    egui::ComboBox::from_id_salt(id)
        .selected_text(format!("{}: {}", view.run + 1, run_label(&runs[view.run])))
        .show_ui(ui, |ui| {
            for (k, r) in runs.iter().enumerate() {
                ui.selectable_value(&mut view.run, k, format!("{}: {}", k + 1, run_label(r)));
            }
        })
        .response
        .labelled_by(label.id);
}

/// The colour of a scope whose forward sweep runs `runs` times: green for once (no
/// re-execution), yellow, orange and red for 2, 3 and more, grey for simplified away (0) or
/// unknown.
pub fn runs_colour(runs: Option<u32>) -> Color32 {
    match runs {
        None => Color32::from_rgb(110, 110, 120),
        Some(0) => Color32::from_rgb(80, 80, 80),
        Some(1) => Color32::from_rgb(60, 150, 80),
        Some(2) => Color32::from_rgb(200, 170, 40),
        Some(3) => Color32::from_rgb(220, 110, 30),
        Some(_) => Color32::from_rgb(200, 50, 50),
    }
}

/// The words for a scope's run count.
pub fn runs_text(runs: Option<u32>) -> String {
    match runs {
        None => "runs: ?".to_string(),
        Some(0) => "simplified away".to_string(),
        Some(1) => "runs once".to_string(),
        Some(n) => format!("runs {n}×"),
    }
}

/// The colour of a kernel construct (`map`, `reduce`, ...) in the timeline and bar charts.
pub fn what_colour(what: &str) -> Color32 {
    match what {
        "map" => Color32::from_rgb(70, 130, 200),
        "reduce" => Color32::from_rgb(200, 100, 60),
        "scan" => Color32::from_rgb(150, 90, 190),
        "hist" => Color32::from_rgb(60, 170, 150),
        "scatter" => Color32::from_rgb(210, 160, 50),
        "copy" | "replicate" | "iota" | "concat" | "transpose" | "reshape" => {
            Color32::from_rgb(130, 130, 130)
        }
        _ => {
            // Other constructs: a colour from the name, stable across runs.
            let h = what
                .bytes()
                .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
            Color32::from_rgb(90 + (h % 120) as u8, 90 + (h / 7 % 120) as u8, 140)
        }
    }
}

/// The colour of a run kind in the bar charts.
pub fn kind_colour(kind: RunKind) -> Color32 {
    match kind {
        RunKind::Primal => Color32::from_rgb(70, 130, 200),
        RunKind::Gradient => Color32::from_rgb(220, 120, 40),
    }
}

/// `entry (primal)` / `entry (gradient)`, with `, cold` for a cold run (one that made its
/// pipelines, [`Run::cold`]).
pub fn run_label(run: &Run) -> String {
    let kind = match run.kind {
        RunKind::Primal => "primal",
        RunKind::Gradient => "gradient",
    };
    let cold = if run.warmth() == Warmth::Cold {
        ", cold"
    } else {
        ""
    };
    format!("{} ({kind}{cold})", run.entry)
}

/// A duration in ns as text with a unit: `850 ns`, `12.3 µs`, `4.56 ms`, `1.20 s`.
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".to_string();
    }
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A byte count with a binary unit: `512 B`, `4.0 KiB`, `1.50 MiB`, `2.00 GiB`.
pub fn fmt_bytes(b: u64) -> String {
    let x = b as f64;
    if b < 1024 {
        format!("{b} B")
    } else if x < 1024.0 * 1024.0 {
        format!("{:.1} KiB", x / 1024.0)
    } else if x < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} MiB", x / (1024.0 * 1024.0))
    } else {
        format!("{:.2} GiB", x / (1024.0 * 1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vkad_profile::*;

    fn loc(line: u32) -> Loc {
        Loc {
            file: "p.fut".into(),
            line,
            col: 3,
        }
    }

    fn scope(id: u32, kind: &str, runs: Option<u32>, locs: &[u32], children: Vec<Scope>) -> Scope {
        Scope {
            id,
            kind: kind.into(),
            label: kind.into(),
            loc: None,
            runs,
            checkpoint_elems: String::new(),
            stm_locs: locs.iter().map(|&l| loc(l)).collect(),
            children,
        }
    }

    fn profile() -> Profile {
        let launch = |scope: u32, start: u64, end: u64| Launch {
            name: "map.0".into(),
            what: "map".into(),
            loc: Some(loc(2)),
            scope: Some(scope),
            submission: 0,
            start_ns: start,
            end_ns: end,
            workgroups: [1, 1, 1],
            bytes: 100,
        };
        Profile {
            version: FORMAT_VERSION,
            program: ProgramInfo {
                path: "p.fut".into(),
                source: String::new(),
            },
            device: DeviceInfo {
                name: "d".into(),
                device_type: "cpu".into(),
                driver: "x".into(),
                subgroup_size: 0,
                timestamps: true,
            },
            ir: vec![],
            scopes: vec![scope(
                0,
                "function",
                Some(1),
                &[1],
                vec![scope(
                    1,
                    "map",
                    Some(2),
                    &[2],
                    vec![scope(2, "loop", Some(3), &[3], vec![])],
                )],
            )],
            runs: vec![Run {
                entry: "main".into(),
                kind: RunKind::Gradient,
                wall_ns: 10,
                cold: None,
                launches: vec![launch(2, 0, 5), launch(0, 5, 6), launch(1, 6, 10)],
            }],
        }
    }

    #[test]
    fn nesting_and_scope_time() {
        let l = Loaded::new(profile(), None, vec![], None);
        assert!(l.is_within(2, 0));
        assert!(l.is_within(2, 1));
        assert!(!l.is_within(0, 2));
        assert!(!l.is_within(7, 0));
        let run = &l.profile.runs[0];
        assert_eq!(l.scope_ns(run, 0), 10);
        assert_eq!(l.scope_ns(run, 1), 9);
        assert_eq!(l.scope_ns(run, 2), 5);
        let locs = l.scope_locs(1);
        assert_eq!(locs.mark(&loc(2)), Mark::Own);
        assert_eq!(locs.mark(&loc(3)), Mark::Nested);
        assert_eq!(locs.mark(&loc(1)), Mark::None);
        let (own, nested) = locs.lines("p.fut");
        assert_eq!(own.into_iter().collect::<Vec<_>>(), vec![2]);
        assert_eq!(nested.into_iter().collect::<Vec<_>>(), vec![3]);
    }

    #[test]
    fn formats() {
        assert_eq!(fmt_ns(850.0), "850 ns");
        assert_eq!(fmt_ns(12_340.0), "12.3 µs");
        assert_eq!(fmt_ns(4_560_000.0), "4.56 ms");
        assert_eq!(fmt_ns(1.2e9), "1.20 s");
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(4096), "4.0 KiB");
        assert_eq!(fmt_bytes(3 << 20), "3.00 MiB");
        assert_ne!(runs_colour(Some(1)), runs_colour(Some(2)));
        assert_eq!(runs_colour(Some(7)), runs_colour(Some(4)));
    }
}
