//! The window: a menu and a run bar at the top (program, entry, input file, device, run), the
//! scope nest on the left, the panels in tabs in the middle, and messages at the bottom.
//! Everything slow goes to the [`Runner`]'s worker thread; while it works the run bar shows
//! what it is doing and for how long, and the window keeps responding.

use crate::model::{Loaded, View};
use crate::runner::{preferred_device, Device, Program, Reply, Request, Runner, Slot};
use egui::{Color32, RichText};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The tabs of the central area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    SourceIr,
    Timeline,
    Kernels,
    Compare,
}

impl Tab {
    const ALL: [Tab; 4] = [Tab::SourceIr, Tab::Timeline, Tab::Kernels, Tab::Compare];
    fn title(self) -> &'static str {
        match self {
            Tab::SourceIr => "Source & IR",
            Tab::Timeline => "Timeline",
            Tab::Kernels => "Kernels",
            Tab::Compare => "Compare",
        }
    }
}

/// What the file dialog is choosing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// A program or a profile to open.
    Open,
    /// A profile to compare with.
    Compare,
    /// The input values of a run.
    Input,
    /// Where to save the profile.
    Save,
}

/// A small file dialog (a directory listing and a path field), so that the viewer needs no
/// platform dialog library.
struct FileDialog {
    purpose: Purpose,
    dir: PathBuf,
    path: String,
}

impl FileDialog {
    fn new(purpose: Purpose, start: &Path) -> FileDialog {
        let dir = if start.is_dir() {
            start.to_path_buf()
        } else {
            start
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map(Path::to_path_buf)
                .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| ".".into()))
        };
        FileDialog {
            purpose,
            dir,
            path: String::new(),
        }
    }

    fn extensions(&self) -> &'static [&'static str] {
        match self.purpose {
            Purpose::Open => &["fut", "json"],
            Purpose::Compare | Purpose::Save => &["json"],
            Purpose::Input => &["in", "txt", "data"],
        }
    }

    /// Shows the dialog; returns the chosen path, or `Some(None)` when cancelled.
    fn show(&mut self, ctx: &egui::Context) -> Option<Option<PathBuf>> {
        let mut out = None;
        let title = match self.purpose {
            Purpose::Open => "Open a program (.fut) or a profile (.json)",
            Purpose::Compare => "Open a profile to compare with",
            Purpose::Input => "Choose the input values",
            Purpose::Save => "Save the profile as",
        };
        egui::Window::new(title)
            .collapsible(false)
            .default_size([520.0, 420.0])
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("up").clicked() {
                        if let Some(p) = self.dir.parent() {
                            self.dir = p.to_path_buf();
                        }
                    }
                    ui.label(RichText::new(self.dir.display().to_string()).monospace());
                });
                let mut entries: Vec<(bool, String)> = std::fs::read_dir(&self.dir)
                    .map(|rd| {
                        rd.filter_map(Result::ok)
                            .map(|e| (e.path().is_dir(), e.file_name().to_string_lossy().into()))
                            .filter(|(d, n): &(bool, String)| {
                                !n.starts_with('.')
                                    && (*d
                                        || self.extensions().iter().any(|x| {
                                            Path::new(n).extension().is_some_and(|e| e == *x)
                                        }))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                entries.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                egui::ScrollArea::vertical()
                    .max_height(300.0)
                    .auto_shrink([false, true])
                    .show(ui, |ui| {
                        for (is_dir, name) in entries {
                            let label = if is_dir {
                                format!("{name}/")
                            } else {
                                name.clone()
                            };
                            let r = ui.selectable_label(false, label);
                            if r.clicked() {
                                if is_dir {
                                    self.dir = self.dir.join(&name);
                                } else {
                                    self.path = self.dir.join(&name).display().to_string();
                                }
                            }
                            if r.double_clicked() && !is_dir {
                                out = Some(Some(self.dir.join(&name)));
                            }
                        }
                    });
                ui.horizontal(|ui| {
                    ui.label("file:");
                    ui.add(
                        egui::TextEdit::singleline(&mut self.path)
                            .desired_width(320.0)
                            .hint_text("path"),
                    );
                    let ok = if self.purpose == Purpose::Save {
                        "Save"
                    } else {
                        "Open"
                    };
                    if ui.button(ok).clicked() && !self.path.trim().is_empty() {
                        let p = PathBuf::from(self.path.trim());
                        out = Some(Some(if p.is_relative() && !p.exists() {
                            self.dir.join(p)
                        } else {
                            p
                        }));
                    }
                    if ui.button("Cancel").clicked() {
                        out = Some(None);
                    }
                });
            });
        out
    }
}

/// A line of the message area.
#[derive(Clone, Debug)]
struct Message {
    error: bool,
    text: String,
}

/// The application.
pub struct ViewerApp {
    /// The profile every panel shows.
    pub main: Option<Loaded>,
    /// The second profile of the comparison.
    pub other: Option<Loaded>,
    pub view: View,
    pub tab: Tab,
    runner: Option<Runner>,
    program: Option<Program>,
    /// The next run starts a new profile instead of adding to the shown one (after "Keep as
    /// comparison").
    fresh_run: bool,
    /// Entry points chosen to run (indices into the program's entries).
    entry: usize,
    input: String,
    /// Whether `input` was filled in from the program (its `FILE.in` or a test block's data
    /// file) rather than chosen: opening another program replaces it then.
    input_guessed: bool,
    /// Run an entry again when its run was cold (see [`Request::Run`]).
    repeat_cold: bool,
    devices: Vec<Device>,
    device: Option<usize>,
    status: String,
    busy_since: Option<Instant>,
    messages: Vec<Message>,
    dialog: Option<FileDialog>,
}

impl ViewerApp {
    /// An app showing `main` (and `other` in the comparison), with no worker: what the tests
    /// render.
    pub fn with_profiles(main: Option<Loaded>, other: Option<Loaded>) -> ViewerApp {
        ViewerApp {
            main,
            other,
            view: View::default(),
            tab: Tab::SourceIr,
            runner: None,
            program: None,
            fresh_run: false,
            entry: 0,
            input: String::new(),
            input_guessed: false,
            repeat_cold: true,
            devices: Vec::new(),
            device: None,
            status: String::new(),
            busy_since: None,
            messages: Vec::new(),
            dialog: None,
        }
    }

    /// The app with its worker; opens `open` (a program or a profile) and `compare` (a profile)
    /// if given.
    pub fn new(
        ctx: &egui::Context,
        open: Option<PathBuf>,
        compare: Option<PathBuf>,
        input: Option<PathBuf>,
    ) -> ViewerApp {
        crate::fonts::install(ctx);
        let mut app = ViewerApp::with_profiles(None, None);
        let c = ctx.clone();
        let mut runner = Runner::spawn(move || c.request_repaint());
        runner.send(Request::ListDevices);
        if let Some(p) = open {
            runner.send(Request::Open {
                path: p,
                device: None,
            });
        }
        if let Some(p) = compare {
            runner.send(Request::LoadProfile {
                path: p,
                slot: Slot::Compare,
            });
        }
        if let Some(i) = input {
            app.input = i.display().to_string();
        }
        app.runner = Some(runner);
        app.busy_since = Some(Instant::now());
        app
    }

    /// Whether the worker has requests queued or running.
    pub fn busy(&self) -> bool {
        self.runner.as_ref().is_some_and(Runner::busy)
    }

    /// The input file field.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// The error messages shown so far.
    pub fn errors(&self) -> Vec<&str> {
        (self.messages.iter())
            .filter(|m| m.error)
            .map(|m| m.text.as_str())
            .collect()
    }

    fn send(&mut self, r: Request) {
        if let Some(runner) = &mut self.runner {
            runner.send(r);
            if self.busy_since.is_none() {
                self.busy_since = Some(Instant::now());
            }
        } else {
            self.error("no worker thread: nothing can be run".into());
        }
    }

    fn info(&mut self, text: String) {
        self.messages.push(Message { error: false, text });
    }

    fn error(&mut self, text: String) {
        self.messages.push(Message { error: true, text });
    }

    fn set_main(&mut self, l: Loaded) {
        let runs = l.profile.runs.len();
        let keep_selection = self
            .main
            .as_ref()
            .is_some_and(|m| m.profile.scopes == l.profile.scopes);
        if !keep_selection {
            self.view.select(None);
        }
        // Show the newest run.
        self.view.run = runs.saturating_sub(1);
        self.main = Some(l);
    }

    /// Handles the worker's replies.
    fn poll(&mut self) {
        let Some(runner) = &mut self.runner else {
            return;
        };
        let replies = runner.poll();
        let busy = runner.busy();
        for r in replies {
            match r {
                Reply::Progress(s) => self.status = s,
                Reply::Devices(Ok(ds)) => {
                    if self.device.is_none() {
                        self.device = preferred_device(&ds);
                    }
                    self.devices = ds;
                }
                Reply::Devices(Err(e)) => self.error(format!(
                    "no Vulkan device ({e}): saved profiles can be opened, programs not run"
                )),
                Reply::Program(Ok((p, loaded))) => {
                    self.info(format!(
                        "opened {} (entry points: {})",
                        p.path,
                        p.entries.join(", ")
                    ));
                    if !p.warnings.trim().is_empty() {
                        self.info(p.warnings.trim_end().to_string());
                    }
                    for (e, why) in &p.entry_errors {
                        self.error(format!("entry {e} cannot run: {}", why.trim_end()));
                    }
                    if let Some(e) = &p.datasets_error {
                        self.error(format!("{}: the test blocks: {e}", p.path));
                    }
                    self.entry = p
                        .entries
                        .iter()
                        .position(|e| e == "main")
                        .unwrap_or(0)
                        .min(p.entries.len().saturating_sub(1));
                    if self.input.trim().is_empty() || self.input_guessed {
                        let guess = p.default_input(p.entries.get(self.entry).map(String::as_str));
                        self.input = guess.map(|g| g.display().to_string()).unwrap_or_default();
                        self.input_guessed = true;
                        if !self.input.is_empty() {
                            self.info(format!("input: {}", self.input));
                        }
                    }
                    self.program = Some(p);
                    if let Some(l) = loaded {
                        self.set_main(*l);
                    }
                }
                Reply::Program(Err(e)) => self.error(e.to_string()),
                Reply::Profile { slot, result } => match (slot, result) {
                    (Slot::Main, Ok(l)) => {
                        self.info(format!("opened profile {}", l.title()));
                        self.set_main(*l);
                    }
                    (Slot::Compare, Ok(l)) => {
                        self.info(format!("comparing with {}", l.title()));
                        self.other = Some(*l);
                        self.tab = Tab::Compare;
                    }
                    (_, Err(e)) => self.error(e.to_string()),
                },
                Reply::Ran(Ok((l, outcomes))) => {
                    for o in outcomes {
                        match o.result {
                            Ok(vals) => {
                                let runs = if o.runs > 1 {
                                    " (two runs: the first cold, it made the pipelines; the second warm)"
                                } else {
                                    ""
                                };
                                self.info(format!("{}: {}{runs}", o.entry, vals.join(" ")))
                            }
                            Err(e) => {
                                self.error(format!("{}: {}", o.entry, e.to_string().trim_end()))
                            }
                        }
                    }
                    self.set_main(*l);
                }
                Reply::Ran(Err(e)) => self.error(e.to_string()),
                Reply::Saved(Ok(p)) => {
                    self.info(format!("saved {p}"));
                    if let Some(m) = &mut self.main {
                        m.file = Some(p);
                    }
                }
                Reply::Saved(Err(e)) | Reply::Error(e) => self.error(e.to_string()),
                Reply::Done => {}
            }
        }
        if !busy {
            self.busy_since = None;
            self.status.clear();
        }
    }

    fn menu(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open program or profile…").clicked() {
                    self.dialog = Some(FileDialog::new(Purpose::Open, Path::new(".")));
                }
                if ui.button("Open profile to compare…").clicked() {
                    self.dialog = Some(FileDialog::new(Purpose::Compare, Path::new(".")));
                }
                ui.add_enabled_ui(self.main.is_some(), |ui| {
                    if ui.button("Save profile as…").clicked() {
                        self.dialog = Some(FileDialog::new(Purpose::Save, Path::new(".")));
                    }
                    if ui
                        .button("Keep as comparison")
                        .on_hover_text(
                            "Copy this profile to the comparison (B), to compare it with the \
                             next runs (after changing the program or the device)",
                        )
                        .clicked()
                    {
                        self.other = self.main.clone();
                        // The next run starts a new profile (A), compared with this one (B).
                        self.fresh_run = true;
                        self.info(
                            "kept the profile as comparison (B); the next run starts a new profile (A)"
                                .into(),
                        );
                    }
                });
            });
            ui.menu_button("View", |ui| {
                for t in Tab::ALL {
                    ui.selectable_value(&mut self.tab, t, t.title());
                }
            });
            if let Some(m) = &self.main {
                ui.separator();
                let d = &m.profile.device;
                ui.label(RichText::new(format!("{} · {}", m.title(), d.name)).weak());
            }
        });
    }

    fn run_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            if ui.button("Open…").clicked() {
                self.dialog = Some(FileDialog::new(Purpose::Open, Path::new(".")));
            }
            let entries = self
                .program
                .as_ref()
                .map(|p| p.entries.clone())
                .unwrap_or_default();
            let entry_label = ui.label("entry:");
            egui::ComboBox::from_id_salt("entry")
                .selected_text(entries.get(self.entry).cloned().unwrap_or("-".into()))
                .show_ui(ui, |ui| {
                    for (k, e) in entries.iter().enumerate() {
                        ui.selectable_value(&mut self.entry, k, e);
                    }
                })
                .response
                .labelled_by(entry_label.id);
            ui.label("input:");
            if ui
                .add(
                    egui::TextEdit::singleline(&mut self.input)
                        .desired_width(180.0)
                        .hint_text("values file (optional)"),
                )
                .changed()
            {
                self.input_guessed = false;
            }
            if ui
                .button("…")
                .on_hover_text("choose the input file")
                .clicked()
            {
                self.dialog = Some(FileDialog::new(Purpose::Input, Path::new(&self.input)));
            }
            let device_label = ui.label("device:");
            let name = |d: &Device| format!("{}: {} ({})", d.index, d.name, d.device_type);
            let current = self
                .devices
                .iter()
                .find(|d| Some(d.index) == self.device)
                .map(name)
                .unwrap_or_else(|| "none".into());
            egui::ComboBox::from_id_salt("device")
                .selected_text(current)
                .show_ui(ui, |ui| {
                    for d in &self.devices {
                        ui.selectable_value(&mut self.device, Some(d.index), name(d));
                    }
                })
                .response
                .labelled_by(device_label.id);
            ui.checkbox(&mut self.repeat_cold, "warm run")
                .on_hover_text(
                    "when a run is cold (the first run of an entry makes its pipelines), run the \
                 entry again: the AD overhead compares warm runs only",
                );
            let busy = self.busy_since.is_some();
            let can_run = !busy && self.device.is_some() && !entries.is_empty();
            let input = (!self.input.trim().is_empty()).then(|| PathBuf::from(self.input.trim()));
            if ui
                .add_enabled(can_run, egui::Button::new("Run"))
                .on_hover_text("run the entry point on the device, timing every kernel")
                .clicked()
            {
                if let (Some(device), Some(e)) = (self.device, entries.get(self.entry)) {
                    let fresh = std::mem::take(&mut self.fresh_run);
                    self.send(Request::Run {
                        device,
                        entries: vec![e.clone()],
                        input: input.clone(),
                        fresh,
                        repeat_cold: self.repeat_cold,
                    });
                }
            }
            if ui
                .add_enabled(can_run, egui::Button::new("Run all entries"))
                .on_hover_text(
                    "run every entry point on the same input (e.g. the primal `loss` and the \
                     gradient `main`)",
                )
                .clicked()
            {
                if let Some(device) = self.device {
                    let fresh = std::mem::take(&mut self.fresh_run);
                    self.send(Request::Run {
                        device,
                        entries,
                        input,
                        fresh,
                        repeat_cold: self.repeat_cold,
                    });
                }
            }
            if let Some(since) = self.busy_since {
                ui.spinner();
                let status = if self.status.is_empty() {
                    "working…"
                } else {
                    &self.status
                };
                ui.label(format!("{status} {:.1} s", since.elapsed().as_secs_f32()));
            }
        });
    }

    fn dialog(&mut self, ctx: &egui::Context) {
        let Some(d) = &mut self.dialog else { return };
        let purpose = d.purpose;
        let Some(choice) = d.show(ctx) else { return };
        self.dialog = None;
        let Some(path) = choice else { return };
        match purpose {
            Purpose::Open => {
                let device = self.device;
                self.send(Request::Open { path, device });
            }
            Purpose::Compare => self.send(Request::LoadProfile {
                path,
                slot: Slot::Compare,
            }),
            Purpose::Input => {
                self.input = path.display().to_string();
                self.input_guessed = false;
            }
            Purpose::Save => {
                if let Some(m) = &self.main {
                    let profile = Box::new(m.profile.clone());
                    self.send(Request::Save { path, profile });
                }
            }
        }
    }

    /// The whole window's contents (what [`eframe::App::ui`] shows).
    pub fn ui_frame(&mut self, ui: &mut egui::Ui) {
        self.poll();
        if self.busy_since.is_some() {
            // The elapsed time in the run bar moves.
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(200));
        }
        egui::Panel::top("menu").show(ui, |ui| {
            self.menu(ui);
            self.run_bar(ui);
        });
        egui::Panel::bottom("messages")
            .resizable(true)
            .default_size(70.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .stick_to_bottom(true)
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        if self.messages.is_empty() {
                            ui.label(
                                RichText::new(
                                    "Open a .fut program (then pick an entry, an input and a \
                                     device, and run it) or a saved profile.",
                                )
                                .weak(),
                            );
                        }
                        for m in &self.messages {
                            let t = RichText::new(&m.text).monospace();
                            ui.label(if m.error {
                                t.color(Color32::from_rgb(230, 90, 80))
                            } else {
                                t
                            });
                        }
                    });
            });
        let Some(main) = &self.main else {
            let hint = if self.program.is_some() {
                "No profile yet: pick an entry and an input, then Run (or Run all entries)"
            } else {
                "No profile yet: open a program or a profile (File > Open…)"
            };
            egui::CentralPanel::default().show(ui, |ui| {
                ui.centered_and_justified(|ui| {
                    ui.heading(hint);
                });
            });
            self.dialog(&ui.ctx().clone());
            return;
        };
        egui::Panel::left("scopes")
            .resizable(true)
            .default_size(330.0)
            .show(ui, |ui| {
                ui.heading("Scopes");
                crate::scopes::ui(ui, main, &mut self.view);
            });
        egui::CentralPanel::default().show(ui, |ui| {
            ui.horizontal(|ui| {
                for t in Tab::ALL {
                    ui.selectable_value(&mut self.tab, t, t.title());
                }
            });
            ui.separator();
            match self.tab {
                Tab::SourceIr => crate::ir::ui(ui, main, &mut self.view),
                Tab::Timeline => crate::timeline::ui(ui, main, &mut self.view),
                Tab::Kernels => crate::kernels::ui(ui, main, &mut self.view),
                Tab::Compare => crate::compare::ui(ui, main, self.other.as_ref(), &mut self.view),
            }
        });
        self.dialog(&ui.ctx().clone());
    }
}

impl eframe::App for ViewerApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.ui_frame(ui);
    }
}
