//! The worker thread: everything slow (listing Vulkan devices, compiling a program, running
//! entry points on a device, reading, linking and writing profiles) happens here, so that the
//! window stays responsive. The window sends [`Request`]s and polls [`Reply`]s; the worker
//! wakes the window (`egui::Context::request_repaint`) after each reply.
//!
//! Runs go through `vkad_spirv::profile`: [`vkad_spirv::profile::new_profile`] makes a profile
//! of a compiled program for a device, and [`vkad_spirv::profile::profile_run`] runs an entry
//! point with every launch timed and adds nothing to the profile itself (the worker appends the
//! run). A run on another device than the current profile's starts a new profile.
//!
//! The worker keeps one Vulkan context per device for the whole session, so the pipelines of an
//! entry are made by its first run there: that run is *cold* ([`vkad_profile::Run::cold`]).
//! With [`Request::Run`]'s `repeat_cold`, an entry whose run was cold is run once more, so that
//! the profile has a warm run of it to compare (the AD overhead uses warm runs only).

use crate::model::Loaded;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use vkad_core::testing::spec::{ExpectedResult, SpecError, TestAction, Values};
use vkad_core::value::Value;
use vkad_core::Compiled;
use vkad_profile::Profile;

/// What went wrong in the worker.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Profile {
        path: PathBuf,
        source: vkad_profile::ProfileError,
    },
    #[error("{0}")]
    Compile(#[from] vkad_core::CompileError),
    #[error("{}: invalid input value: {source}", path.display())]
    Input {
        path: PathBuf,
        source: vkad_core::values::ValueError,
    },
    #[error("{}: {message}", path.display())]
    Gzip { path: PathBuf, message: String },
    #[error("{0}")]
    Vulkan(#[from] vkad_vk::VkError),
    #[error("there is no Vulkan device {0}")]
    NoDevice(usize),
    #[error("no program is open: open a .fut file first")]
    NoProgram,
    /// An entry point failed to run.
    #[error("{0}")]
    Run(#[from] vkad_spirv::error::Error),
    #[error("internal error (panic): {0}")]
    Panic(String),
    #[error("the worker thread stopped")]
    Stopped,
}

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
    /// the runs to the profile (to a fresh profile with `fresh`). With `repeat_cold`, an entry
    /// whose run was cold (it made pipelines) is run once more: both runs are kept.
    Run {
        device: usize,
        entries: Vec<String>,
        input: Option<PathBuf>,
        fresh: bool,
        repeat_cold: bool,
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

/// The most suitable device: a discrete GPU, else an integrated one, else the first (as the
/// CLI picks).
pub fn preferred_device(devices: &[Device]) -> Option<usize> {
    let rank = |d: &Device| match d.device_type.as_str() {
        "discrete" => 0,
        "integrated" => 1,
        _ => 2,
    };
    devices.iter().min_by_key(|d| rank(d)).map(|d| d.index)
}

/// A data file that a test block (`-- ==`) of the program names as the input of entries.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// The entry points of the block.
    pub entries: Vec<String>,
    /// The file, relative to the program's directory as written, joined to that directory.
    pub path: PathBuf,
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
    /// `FILE.in` beside the program, when it exists.
    pub sibling_input: Option<PathBuf>,
    /// The data files of the test blocks (`input @ file`), first usable dataset of each block
    /// ([`datasets`]).
    pub datasets: Vec<Dataset>,
    /// Why the test blocks could not be read, when they could not.
    pub datasets_error: Option<SpecError>,
}

impl Program {
    /// The input to offer for `entry`: `FILE.in` beside the program when it exists, else the
    /// data file of the first test block of `entry`, else that of the first block.
    pub fn default_input(&self, entry: Option<&str>) -> Option<PathBuf> {
        if let Some(p) = &self.sibling_input {
            return Some(p.clone());
        }
        entry
            .and_then(|e| {
                self.datasets
                    .iter()
                    .find(|d| d.entries.iter().any(|x| x == e))
            })
            .or(self.datasets.first())
            .map(|d| d.path.clone())
    }
}

/// The data files named by the test blocks of `source` (a program at `path`): per block, the
/// first dataset that is not tagged `nobench`/`disable`, does not expect an error and reads a
/// file (`input @ file`), as `vkad bench` picks datasets. A program without test blocks has
/// none.
pub fn datasets(path: &Path, source: &str) -> Result<Vec<Dataset>, SpecError> {
    let Some(spec) = vkad_core::testing::parse_program_test(source)? else {
        return Ok(Vec::new());
    };
    let TestAction::RunCases { cases, .. } = spec.action else {
        return Ok(Vec::new());
    };
    let dir = path.parent().unwrap_or(Path::new(""));
    Ok(cases
        .iter()
        .filter_map(|case| {
            let file = case.runs.iter().find_map(|r| match &r.input {
                Values::File(f)
                    if !r.tags.iter().any(|t| t == "nobench" || t == "disable")
                        && !matches!(r.expected, ExpectedResult::RunTimeFailure(_)) =>
                {
                    Some(f)
                }
                _ => None,
            })?;
            Some(Dataset {
                entries: case.entries.clone(),
                path: dir.join(file),
            })
        })
        .collect())
}

/// What one entry point's run gave.
#[derive(Debug)]
pub struct EntryOutcome {
    pub entry: String,
    /// The results in Futhark's text format (long ones shortened), or the error.
    pub result: Result<Vec<String>, Error>,
    /// How many runs of the entry were recorded (2 when a cold run was repeated).
    pub runs: usize,
}

/// Answers from the worker.
#[derive(Debug)]
pub enum Reply {
    /// What the worker is doing now (shown while busy).
    Progress(String),
    Devices(Result<Vec<Device>, Error>),
    /// A program was opened: the program and, when there is a device (the one asked for, else
    /// the [`preferred_device`]), its profile without runs (the scope nest and the IR).
    Program(Result<(Program, Option<Box<Loaded>>), Error>),
    /// A profile file was read.
    Profile {
        slot: Slot,
        result: Result<Box<Loaded>, Error>,
    },
    /// Runs finished: the profile with the new runs, and each entry's outcome.
    Ran(Result<(Box<Loaded>, Vec<EntryOutcome>), Error>),
    /// A profile was written (the path).
    Saved(Result<String, Error>),
    /// The worker failed outside of any request's own errors (a panic, or it stopped).
    Error(Error),
    /// The request is done (sent after every request, also after errors).
    Done,
}

/// The window's end of the worker.
///
/// Dropping it stops the worker and waits for it: requests still queued are skipped, the one
/// running finishes, and the worker's Vulkan contexts are destroyed before `drop` returns. Left
/// running, the worker would destroy them while the process exits, racing the Vulkan driver's
/// own teardown (lavapipe crashed a test binary that way after all its tests had passed).
pub struct Runner {
    tx: Option<Sender<Request>>,
    rx: Receiver<Reply>,
    pending: usize,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
}

impl Runner {
    /// Starts the worker thread; `repaint` is called after each reply.
    pub fn spawn(repaint: impl Fn() + Send + 'static) -> Runner {
        let (tx, worker_rx) = channel::<Request>();
        let (worker_tx, rx) = channel::<Reply>();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let worker = std::thread::Builder::new()
            .name("vkad-viewer worker".into())
            .spawn(move || {
                let mut w = Worker::default();
                while let Ok(req) = worker_rx.recv() {
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
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
                        send(Reply::Error(Error::Panic(msg)));
                    }
                    send(Reply::Done);
                }
            })
            .map_err(|e| eprintln!("vkad-viewer: cannot start the worker thread: {e}"))
            .ok();
        Runner {
            tx: Some(tx),
            rx,
            pending: 0,
            stop,
            worker,
        }
    }

    /// Queues a request.
    pub fn send(&mut self, r: Request) {
        if self.tx.as_ref().is_some_and(|tx| tx.send(r).is_ok()) {
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
                        out.push(Reply::Error(Error::Stopped));
                    }
                    break;
                }
            }
        }
        out
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Closing the channel ends the worker's loop once the running request is done.
        self.tx = None;
        if let Some(worker) = self.worker.take() {
            // A worker that panicked outside `catch_unwind` has nothing left to clean up.
            let _ = worker.join();
        }
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
fn read_text(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a profile file and links its IR to its source.
pub fn load_profile(path: &Path) -> Result<Loaded, Error> {
    let text = read_text(path)?;
    let p = Profile::from_json(&text).map_err(|source| Error::Profile {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Loaded::with_links(p, Some(path.display().to_string())))
}

/// Reads the input values of a run: Futhark's text or binary value format, gzip-compressed or
/// not.
pub fn read_input(path: &Path) -> Result<Vec<Value>, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let bytes = if vkad_core::values::gzip::is_gzip(&bytes) {
        vkad_core::values::gzip::gunzip(&bytes).map_err(|e| Error::Gzip {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
    } else {
        bytes
    };
    vkad_core::values::parse_values(&bytes).map_err(|source| Error::Input {
        path: path.to_path_buf(),
        source,
    })
}

impl Worker {
    fn devices(&mut self) -> Result<&[vkad_vk::DeviceInfo], Error> {
        if self.devices.is_none() {
            let list = vkad_vk::list_devices()?;
            self.devices = Some(list);
        }
        Ok(self.devices.as_deref().unwrap_or_default())
    }

    fn device_info(&mut self, index: usize) -> Result<vkad_vk::DeviceInfo, Error> {
        self.devices()?
            .iter()
            .find(|d| d.index == index)
            .cloned()
            .ok_or(Error::NoDevice(index))
    }

    /// The device a program opened without one gets its profile for: the
    /// [`preferred_device`] (none when there is no Vulkan device).
    fn default_device(&mut self) -> Option<usize> {
        let ds: Vec<Device> = self.devices().ok()?.iter().map(device_of).collect();
        preferred_device(&ds)
    }

    fn handle(&mut self, req: Request, send: &dyn Fn(Reply)) {
        match req {
            Request::ListDevices => {
                send(Reply::Progress("looking for Vulkan devices…".into()));
                let r = self.devices().map(|ds| ds.iter().map(device_of).collect());
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
                repeat_cold,
            } => {
                if fresh {
                    self.profile = None;
                }
                let r = self.run(device, &entries, input.as_deref(), repeat_cold, send);
                send(Reply::Ran(r));
            }
            Request::Save { path, profile } => {
                send(Reply::Progress(format!("writing {}…", path.display())));
                let r = std::fs::write(&path, profile.to_json())
                    .map(|_| path.display().to_string())
                    .map_err(|source| Error::Write {
                        path: path.clone(),
                        source,
                    });
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
                    let mut prog = program_info(&c, &p.path);
                    match datasets(Path::new(&p.path), &p.source) {
                        Ok(ds) => prog.datasets = ds,
                        Err(e) => prog.datasets_error = Some(e),
                    }
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
    ) -> Result<(Program, Option<Box<Loaded>>), Error> {
        let source = read_text(path)?;
        let name = path.display().to_string();
        let compiled =
            vkad_core::compile_with(&name, &source, &mut vkad_core::modules::FileLoader)?;
        let mut prog = program_info(&compiled, &name);
        match datasets(path, &source) {
            Ok(ds) => prog.datasets = ds,
            Err(e) => prog.datasets_error = Some(e),
        }
        // The profile without runs shows the scope nest and the IR right away.
        let device = device.or_else(|| self.default_device());
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
        repeat_cold: bool,
        send: &dyn Fn(Reply),
    ) -> Result<(Box<Loaded>, Vec<EntryOutcome>), Error> {
        if self.program.is_none() {
            return Err(Error::NoProgram);
        }
        let args: Vec<Value> = match input {
            Some(p) => read_input(p)?,
            None => Vec::new(),
        };
        let info = self.device_info(device)?;
        let ctx = match self.contexts.entry(device) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                send(Reply::Progress(format!("opening {}…", info.name)));
                let ctx = vkad_vk::Context::new(&vkad_vk::ContextOptions {
                    device: Some(device),
                    validation: false,
                    // The user's cache directory (or VKAD_PIPELINE_CACHE), as the CLI does.
                    pipeline_cache: vkad_vk::PipelineCacheMode::UserDir,
                })?;
                slot.insert(ctx)
            }
        };
        let Some((compiled, name, source)) = &self.program else {
            return Err(Error::NoProgram);
        };
        let mut profile = match self.profile.take() {
            Some((p, d)) if d == device && p.program.source == *source => p,
            _ => vkad_spirv::profile::new_profile(compiled, name, source, &info),
        };
        let mut outcomes = Vec::new();
        for entry in entries {
            send(Reply::Progress(format!(
                "running {entry} on {}…",
                info.name
            )));
            // One run, appended to the profile: the results, and whether it was cold.
            let run_once = |profile: &mut Profile| {
                let (values, run) =
                    vkad_spirv::profile::profile_run(ctx, compiled, profile, entry, args.clone())?;
                let cold = run.cold == Some(true);
                profile.runs.push(run);
                Ok::<_, vkad_spirv::error::Error>((values, cold))
            };
            let mut runs = 0;
            let mut result = run_once(&mut profile);
            if let Ok((_, cold)) = result {
                runs += 1;
                if cold && repeat_cold {
                    send(Reply::Progress(format!(
                        "running {entry} again: its first run made its pipelines (cold)…"
                    )));
                    result = run_once(&mut profile);
                    runs += usize::from(result.is_ok());
                }
            }
            let result = result
                .map(|(values, _)| {
                    values
                        .iter()
                        .map(|v| shorten(vkad_core::values::write_text(v)))
                        .collect()
                })
                .map_err(Error::Run);
            outcomes.push(EntryOutcome {
                entry: entry.clone(),
                result,
                runs,
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
        sibling_input: Some(Path::new(path).with_extension("in")).filter(|p| p.is_file()),
        datasets: Vec::new(),
        datasets_error: None,
    }
}

fn device_of(d: &vkad_vk::DeviceInfo) -> Device {
    Device {
        index: d.index,
        name: d.name.clone(),
        device_type: d.device_type.clone(),
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

    /// Dropping the runner waits for the worker to end (and so to destroy its Vulkan contexts):
    /// the worker's own references, here the repaint closure's, are gone when `drop` returns.
    #[test]
    fn dropping_the_runner_waits_for_its_worker() {
        let held = Arc::new(());
        let in_worker = Arc::clone(&held);
        let mut r = Runner::spawn(move || {
            let _ = &in_worker;
            std::thread::sleep(Duration::from_millis(20));
        });
        r.send(Request::ListDevices);
        r.send(Request::ListDevices);
        drop(r);
        assert_eq!(Arc::strong_count(&held), 1);
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
        // Opened without a device: the profile (the scope nest) is for the preferred device,
        // when there is one.
        let devices = vkad_vk::list_devices().is_ok_and(|d| !d.is_empty());
        assert_eq!(has_profile, devices);
        assert!(replies.iter().any(|x| matches!(x, Reply::Progress(_))));

        r.send(Request::Open {
            path: bad,
            device: None,
        });
        let replies = wait(&mut r);
        let err = replies.iter().find_map(|x| match x {
            Reply::Program(Err(e)) => Some(e.to_string()),
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
                repeat_cold: false,
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

    /// Item 2 of issue 14: the first run of an entry on the worker's context is cold (it made
    /// the pipelines); with `repeat_cold` it is run again, warm, and both runs are kept; a
    /// later run is warm from the start and runs once.
    #[test]
    fn cold_runs_are_marked_and_repeated() {
        let dir = std::env::temp_dir().join(format!("vkad-viewer-cold-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prog = dir.join("p.fut");
        std::fs::write(
            &prog,
            "entry loss (xs: []f64) : f64 = f64.sum (map (\\x -> x * x) xs)\n\
             entry main (xs: []f64) : []f64 = vjp (\\ys -> f64.sum (map (\\x -> x * x) ys)) xs 1\n",
        )
        .unwrap();
        let input = dir.join("p.in");
        std::fs::write(&input, "[1.0, 2.0, 3.0]\n").unwrap();
        let mut r = Runner::spawn(|| {});
        r.send(Request::Open {
            path: prog,
            device: Some(0),
        });
        let replies = wait(&mut r);
        let prog = replies.iter().find_map(|x| match x {
            Reply::Program(Ok((p, _))) => Some(p.clone()),
            _ => None,
        });
        // `p.in` beside the program is its input.
        let prog = prog.expect("a program");
        assert_eq!(prog.default_input(Some("main")), Some(input.clone()));
        let run = |r: &mut Runner, entries: &[&str]| {
            r.send(Request::Run {
                device: 0,
                entries: entries.iter().map(|e| e.to_string()).collect(),
                input: Some(input.clone()),
                fresh: false,
                repeat_cold: true,
            });
            let replies = wait(r);
            replies
                .into_iter()
                .find_map(|x| match x {
                    Reply::Ran(Ok((l, o))) => Some((l, o)),
                    Reply::Ran(Err(e)) => panic!("run failed: {e}"),
                    _ => None,
                })
                .expect("a run reply")
        };
        let (l, outcomes) = run(&mut r, &["loss", "main"]);
        let got: Vec<(&str, Option<bool>)> = l
            .profile
            .runs
            .iter()
            .map(|x| (x.entry.as_str(), x.cold))
            .collect();
        assert_eq!(
            got,
            [
                ("loss", Some(true)),
                ("loss", Some(false)),
                ("main", Some(true)),
                ("main", Some(false))
            ]
        );
        assert!(outcomes.iter().all(|o| o.runs == 2 && o.result.is_ok()));
        let o = l.profile.ad_overhead_runs().expect("both kinds");
        assert_eq!(
            (o.primal.as_slice(), o.gradient.as_slice()),
            (&[1][..], &[3][..])
        );
        assert_eq!(o.cold, [0, 2]);
        // Warm now: one run.
        let (l, outcomes) = run(&mut r, &["main"]);
        assert_eq!(l.profile.runs.len(), 5);
        assert_eq!(l.profile.runs[4].cold, Some(false));
        assert_eq!(outcomes[0].runs, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn datasets_are_the_data_files_of_the_test_blocks() {
        let src = "-- ==\n-- entry: a b\n-- nobench input @ big.in\n-- input @ data/x.in output @ x.out\n\
                   -- ==\n-- entry: c\n-- input { 1 } output { 1 }\n\
                   -- ==\n-- input @ m.in.gz\n\
                   entry a (x: i32) = x\nentry b (x: i32) = x\nentry c (x: i32) = x\nentry main (x: i32) = x\n";
        let ds = datasets(Path::new("dir/p.fut"), src).expect("parses");
        assert_eq!(
            ds,
            [
                Dataset {
                    entries: vec!["a".into(), "b".into()],
                    path: PathBuf::from("dir/data/x.in")
                },
                Dataset {
                    entries: vec!["main".into()],
                    path: PathBuf::from("dir/m.in.gz")
                }
            ]
        );
        let prog = Program {
            path: "dir/p.fut".into(),
            entries: vec!["a".into(), "b".into(), "c".into(), "main".into()],
            entry_errors: vec![],
            warnings: String::new(),
            sibling_input: None,
            datasets: ds,
            datasets_error: None,
        };
        assert_eq!(
            prog.default_input(Some("main")),
            Some(PathBuf::from("dir/m.in.gz"))
        );
        assert_eq!(
            prog.default_input(Some("c")),
            Some(PathBuf::from("dir/data/x.in"))
        );
        assert!(datasets(Path::new("p.fut"), "entry main (x: i32) = x\n")
            .expect("no blocks")
            .is_empty());
        assert!(datasets(Path::new("p.fut"), "-- ==\n-- input { 1 \n").is_err());
    }
}
