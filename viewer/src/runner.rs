//! The worker thread: everything slow (listing Vulkan devices, compiling a program, running
//! entry points on a device, reading, linking and writing profiles) happens here, so that the
//! window stays responsive. The window sends [`Request`]s and polls [`Reply`]s; the worker
//! wakes the window (`egui::Context::request_repaint`) after each reply.
//!
//! Runs go through `vkad_spirv::profile`: [`vkad_spirv::profile::new_profile`] makes a profile
//! of a compiled program for a device, and [`vkad_spirv::profile::profile_run`] runs an entry
//! point with every launch timed and adds nothing to the profile itself (the worker appends the
//! run). A run on another device than the current profile's starts a new profile.

use crate::model::Loaded;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use vkad_core::value::Value;
use vkad_core::Compiled;
use vkad_profile::Profile;

/// Which profile a loaded file replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The profile shown by every panel.
    Main,
    /// The second profile of the comparison panel.
    Compare,
}

/// Work for the worker.
#[derive(Clone, Debug)]
pub enum Request {
    /// List the Vulkan devices.
    ListDevices,
    /// Open a `.fut` program (compile it; with a device, make an empty profile of it) or a
    /// saved profile (`.json`, into [`Slot::Main`]).
    Open {
        path: PathBuf,
        device: Option<usize>,
    },
    /// Read a saved profile into a slot.
    LoadProfile { path: PathBuf, slot: Slot },
    /// Run entry points of the open program on device `device` (an index of
    /// `vkad_vk::list_devices`), each on the values in `input` (none when `None`), appending
    /// the runs to the profile (to a fresh profile with `fresh`).
    Run {
        device: usize,
        entries: Vec<String>,
        input: Option<PathBuf>,
        fresh: bool,
    },
    /// Write a profile to a file.
    Save {
        path: PathBuf,
        profile: Box<Profile>,
    },
}

/// A Vulkan device, as the device picker shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub index: usize,
    pub name: String,
    pub device_type: String,
}

/// The open program.
#[derive(Clone, Debug)]
pub struct Program {
    pub path: String,
    /// Entry points in source order.
    pub entries: Vec<String>,
    /// Entry points that cannot run, with the reason.
    pub entry_errors: Vec<(String, String)>,
    /// The compiler's warnings, rendered.
    pub warnings: String,
}

/// What one entry point's run gave.
#[derive(Clone, Debug)]
pub struct EntryOutcome {
    pub entry: String,
    /// The results in Futhark's text format (long ones shortened), or the error.
    pub result: Result<Vec<String>, String>,
}

/// Answers from the worker.
#[derive(Debug)]
pub enum Reply {
    /// What the worker is doing now (shown while busy).
    Progress(String),
    Devices(Result<Vec<Device>, String>),
    /// A program was opened: the program and, when a device was given, its (empty) profile.
    Program(Result<(Program, Option<Box<Loaded>>), String>),
    /// A profile file was read.
    Profile {
        slot: Slot,
        result: Result<Box<Loaded>, String>,
    },
    /// Runs finished: the profile with the new runs, and each entry's outcome.
    Ran(Result<(Box<Loaded>, Vec<EntryOutcome>), String>),
    /// A profile was written (the path).
    Saved(Result<String, String>),
    /// The worker failed outside of any request's own errors (a panic, or it stopped).
    Error(String),
    /// The request is done (sent after every request, also after errors).
    Done,
}

/// The window's end of the worker.
pub struct Runner {
    tx: Sender<Request>,
    rx: Receiver<Reply>,
    pending: usize,
}

impl Runner {
    /// Starts the worker thread; `repaint` is called after each reply.
    pub fn spawn(repaint: impl Fn() + Send + 'static) -> Runner {
        let (tx, worker_rx) = channel::<Request>();
        let (worker_tx, rx) = channel::<Reply>();
        std::thread::Builder::new()
            .name("vkad-viewer worker".into())
            .spawn(move || {
                let mut w = Worker::default();
                while let Ok(req) = worker_rx.recv() {
                    let send = |r: Reply| {
                        let _ = worker_tx.send(r);
                        repaint();
                    };
                    let outcome =
                        std::panic::catch_unwind(AssertUnwindSafe(|| w.handle(req, &send)));
                    if let Err(p) = outcome {
                        let msg = p
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "unknown".into());
                        send(Reply::Error(format!("internal error (panic): {msg}")));
                    }
                    send(Reply::Done);
                }
            })
            .map(|_| ())
            .unwrap_or_else(|e| eprintln!("vkad-viewer: cannot start the worker thread: {e}"));
        Runner { tx, rx, pending: 0 }
    }

    /// Queues a request.
    pub fn send(&mut self, r: Request) {
        if self.tx.send(r).is_ok() {
            self.pending += 1;
        }
    }

    /// Whether requests are queued or running.
    pub fn busy(&self) -> bool {
        self.pending > 0
    }

    /// The replies that arrived since the last call.
    pub fn poll(&mut self) -> Vec<Reply> {
        let mut out = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(Reply::Done) => self.pending = self.pending.saturating_sub(1),
                Ok(r) => out.push(r),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    if self.pending > 0 {
                        self.pending = 0;
                        out.push(Reply::Error("the worker thread stopped".into()));
                    }
                    break;
                }
            }
        }
        out
    }
}

/// The worker's state.
#[derive(Default)]
struct Worker {
    devices: Option<Vec<vkad_vk::DeviceInfo>>,
    contexts: HashMap<usize, vkad_vk::Context>,
    /// The open program: compiled, with its path and source.
    program: Option<(Compiled, String, String)>,
    /// The current profile and the device index it is of.
    profile: Option<(Profile, usize)>,
}

/// Shortens a printed value for the message log.
fn shorten(s: String) -> String {
    const MAX: usize = 300;
    if s.chars().count() <= MAX {
        s
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}… ({} characters)", s.chars().count())
    }
}

/// Reads a file's text.
fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Reads a profile file and links its IR to its source.
pub fn load_profile(path: &Path) -> Result<Loaded, String> {
    let text = read_text(path)?;
    let p = Profile::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Loaded::with_links(p, Some(path.display().to_string())))
}

impl Worker {
    fn devices(&mut self) -> Result<&[vkad_vk::DeviceInfo], String> {
        if self.devices.is_none() {
            let list = vkad_vk::list_devices().map_err(|e| e.to_string())?;
            self.devices = Some(list);
        }
        Ok(self.devices.as_deref().unwrap_or_default())
    }

    fn device_info(&mut self, index: usize) -> Result<vkad_vk::DeviceInfo, String> {
        self.devices()?
            .iter()
            .find(|d| d.index == index)
            .cloned()
            .ok_or_else(|| format!("there is no Vulkan device {index}"))
    }

    fn handle(&mut self, req: Request, send: &dyn Fn(Reply)) {
        match req {
            Request::ListDevices => {
                send(Reply::Progress("looking for Vulkan devices…".into()));
                let r = self.devices().map(|ds| {
                    ds.iter()
                        .map(|d| Device {
                            index: d.index,
                            name: d.name.clone(),
                            device_type: d.device_type.clone(),
                        })
                        .collect()
                });
                send(Reply::Devices(r));
            }
            Request::Open { path, device } => {
                if path.extension().is_some_and(|e| e == "json") {
                    self.load_into_main(&path, send);
                } else {
                    send(Reply::Progress(format!("compiling {}…", path.display())));
                    send(Reply::Program(self.open(&path, device)));
                }
            }
            Request::LoadProfile { path, slot } => {
                if slot == Slot::Main {
                    self.load_into_main(&path, send);
                } else {
                    send(Reply::Progress(format!("reading {}…", path.display())));
                    let result = load_profile(&path).map(Box::new);
                    send(Reply::Profile { slot, result });
                }
            }
            Request::Run {
                device,
                entries,
                input,
                fresh,
            } => {
                if fresh {
                    self.profile = None;
                }
                let r = self.run(device, &entries, input.as_deref(), send);
                send(Reply::Ran(r));
            }
            Request::Save { path, profile } => {
                send(Reply::Progress(format!("writing {}…", path.display())));
                let r = std::fs::write(&path, profile.to_json())
                    .map(|_| path.display().to_string())
                    .map_err(|e| format!("cannot write {}: {e}", path.display()));
                send(Reply::Saved(r));
            }
        }
    }

    /// A saved profile becomes the current one; its program is compiled again (when it still
    /// compiles) so that its entries can be run.
    fn load_into_main(&mut self, path: &Path, send: &dyn Fn(Reply)) {
        send(Reply::Progress(format!("reading {}…", path.display())));
        let result = load_profile(path);
        if let Ok(l) = &result {
            let p = &l.profile.program;
            // Imports are read relative to the program's path, as when it was profiled.
            let mut files = vkad_core::modules::FileLoader;
            match vkad_core::compile_with(&p.path, &p.source, &mut files) {
                Ok(c) => {
                    let prog = program_info(&c, &p.path);
                    self.program = Some((c, p.path.clone(), p.source.clone()));
                    self.profile = None;
                    send(Reply::Program(Ok((prog, None))));
                }
                Err(_) => self.program = None,
            }
        }
        send(Reply::Profile {
            slot: Slot::Main,
            result: result.map(Box::new),
        });
    }

    fn open(
        &mut self,
        path: &Path,
        device: Option<usize>,
    ) -> Result<(Program, Option<Box<Loaded>>), String> {
        let source = read_text(path)?;
        let name = path.display().to_string();
        let compiled = vkad_core::compile_with(&name, &source, &mut vkad_core::modules::FileLoader)
            .map_err(|e| e.render())?;
        let prog = program_info(&compiled, &name);
        let loaded = match device.map(|d| self.device_info(d)) {
            Some(Ok(info)) => {
                let p = vkad_spirv::profile::new_profile(&compiled, &name, &source, &info);
                self.profile = Some((p.clone(), info.index));
                Some(Box::new(Loaded::with_links(p, None)))
            }
            _ => {
                self.profile = None;
                None
            }
        };
        self.program = Some((compiled, name, source));
        Ok((prog, loaded))
    }

    fn run(
        &mut self,
        device: usize,
        entries: &[String],
        input: Option<&Path>,
        send: &dyn Fn(Reply),
    ) -> Result<(Box<Loaded>, Vec<EntryOutcome>), String> {
        if self.program.is_none() {
            return Err("no program is open: open a .fut file first".into());
        }
        let args: Vec<Value> = match input {
            Some(p) => {
                let bytes =
                    std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
                vkad_core::values::parse_values(&bytes)
                    .map_err(|e| format!("{}: invalid input value: {e}", p.display()))?
            }
            None => Vec::new(),
        };
        let info = self.device_info(device)?;
        if let std::collections::hash_map::Entry::Vacant(slot) = self.contexts.entry(device) {
            send(Reply::Progress(format!("opening {}…", info.name)));
            let ctx = vkad_vk::Context::new(&vkad_vk::ContextOptions {
                device: Some(device),
                validation: false,
                // The user's cache directory (or VKAD_PIPELINE_CACHE), as the CLI does.
                pipeline_cache: vkad_vk::PipelineCacheMode::UserDir,
            })
            .map_err(|e| e.to_string())?;
            slot.insert(ctx);
        }
        let Some((compiled, name, source)) = &self.program else {
            return Err("no program is open: open a .fut file first".into());
        };
        let ctx = self
            .contexts
            .get(&device)
            .ok_or("internal error: no device context")?;
        let mut profile = match self.profile.take() {
            Some((p, d)) if d == device && p.program.source == *source => p,
            _ => vkad_spirv::profile::new_profile(compiled, name, source, &info),
        };
        let mut outcomes = Vec::new();
        for entry in entries {
            send(Reply::Progress(format!(
                "running {entry} on {} (the first run of a kernel compiles it)…",
                info.name
            )));
            let result =
                vkad_spirv::profile::profile_run(ctx, compiled, &profile, entry, args.clone())
                    .map(|(values, run)| {
                        profile.runs.push(run);
                        values
                            .iter()
                            .map(|v| shorten(vkad_core::values::write_text(v)))
                            .collect()
                    })
                    .map_err(|e| e.to_string());
            outcomes.push(EntryOutcome {
                entry: entry.clone(),
                result,
            });
        }
        self.profile = Some((profile.clone(), device));
        send(Reply::Progress("linking the IR to the source…".into()));
        Ok((Box::new(Loaded::with_links(profile, None)), outcomes))
    }
}

fn program_info(c: &Compiled, path: &str) -> Program {
    Program {
        path: path.to_string(),
        entries: c.entry_names(),
        entry_errors: c
            .entry_errors
            .iter()
            .map(|(k, d)| (k.clone(), d.render(&c.sources)))
            .collect(),
        warnings: c.render_warnings(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Polls until `Done`, collecting replies (at most 60 s).
    fn wait(r: &mut Runner) -> Vec<Reply> {
        let start = Instant::now();
        let mut out = Vec::new();
        while r.busy() && start.elapsed() < Duration::from_secs(60) {
            out.extend(r.poll());
            std::thread::sleep(Duration::from_millis(5));
        }
        out.extend(r.poll());
        out
    }

    #[test]
    fn opening_a_program_compiles_it_off_the_calling_thread() {
        let dir = std::env::temp_dir().join(format!("vkad-viewer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.fut");
        std::fs::write(
            &good,
            "entry main (x: f64) : f64 = x * 2\nentry sq (x: f64) : f64 = x * x\n",
        )
        .unwrap();
        let bad = dir.join("bad.fut");
        std::fs::write(&bad, "entry main (x: f64) : f64 = y\n").unwrap();
        let mut r = Runner::spawn(|| {});
        r.send(Request::Open {
            path: good.clone(),
            device: None,
        });
        assert!(r.busy());
        let replies = wait(&mut r);
        assert!(!r.busy());
        let prog = replies.iter().find_map(|x| match x {
            Reply::Program(Ok((p, loaded))) => Some((p.clone(), loaded.is_some())),
            _ => None,
        });
        let (prog, has_profile) = prog.expect("a program reply");
        assert_eq!(prog.entries, ["main", "sq"]);
        assert!(!has_profile);
        assert!(replies.iter().any(|x| matches!(x, Reply::Progress(_))));

        r.send(Request::Open {
            path: bad,
            device: None,
        });
        let replies = wait(&mut r);
        let err = replies.iter().find_map(|x| match x {
            Reply::Program(Err(e)) => Some(e.clone()),
            _ => None,
        });
        assert!(err.expect("an error reply").contains('y'));

        r.send(Request::LoadProfile {
            path: dir.join("missing.json"),
            slot: Slot::Compare,
        });
        let replies = wait(&mut r);
        assert!(replies.iter().any(|x| matches!(
            x,
            Reply::Profile {
                slot: Slot::Compare,
                result: Err(_)
            }
        )));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn runs_add_to_the_profile_unless_fresh() {
        let dir = std::env::temp_dir().join(format!("vkad-viewer-runs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prog = dir.join("p.fut");
        std::fs::write(&prog, "entry main : f64 = 2.0\n").unwrap();
        let mut r = Runner::spawn(|| {});
        r.send(Request::Open {
            path: prog,
            device: Some(0),
        });
        wait(&mut r);
        let runs = |r: &mut Runner, fresh: bool| {
            r.send(Request::Run {
                device: 0,
                entries: vec!["main".into()],
                input: None,
                fresh,
            });
            let replies = wait(r);
            replies
                .iter()
                .find_map(|x| match x {
                    Reply::Ran(Ok((l, _))) => Some(l.profile.runs.len()),
                    Reply::Ran(Err(e)) => panic!("run failed: {e}"),
                    _ => None,
                })
                .expect("a run reply")
        };
        assert_eq!(runs(&mut r, false), 1);
        assert_eq!(runs(&mut r, false), 2);
        // After "Keep as comparison" the app asks for a fresh profile.
        assert_eq!(runs(&mut r, true), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
