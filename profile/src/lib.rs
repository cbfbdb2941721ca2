//! vkad's profile format (`vkad run --profile-out FILE.json`, `vkad bench FILE`, the viewer).
//!
//! One file holds one [`Profile`]: the program (path and source text), the device, the IR at
//! each stage, the AD report's scope tree, and one or more [`Run`]s (an entry executed once:
//! every kernel launch with its device timestamps, workgroups, bytes moved, and the source
//! location and scope it came from).
//!
//! The file is a JSON object in the Chrome trace event format ("JSON Object Format"): its
//! `traceEvents` array has one complete event (`"ph": "X"`) per kernel launch, with `pid` = the
//! run and `tid` = the queue submission, so chrome://tracing and Perfetto open it as is; the
//! profile itself is under the key `vkad`, which those tools ignore. [`Profile::to_json`] writes
//! both; [`Profile::from_json`] reads the `vkad` key back.
//!
//! This crate is data only (serde, no Vulkan and no compiler), so that tools can read profiles
//! cheaply; `vkad_spirv::profile` builds them.

use serde::{Deserialize, Serialize};

/// The version of the format written by this crate ([`Profile::version`]).
pub const FORMAT_VERSION: u32 = 1;

/// Errors reading a profile.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("not a vkad profile: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a vkad profile: the JSON object has no `vkad` key (a plain Chrome trace?)")]
    NoProfile,
    #[error("vkad profile format version {found} is newer than this vkad understands ({FORMAT_VERSION})")]
    Version { found: u32 },
    /// A total the summaries compute does not fit in a `u64` (corrupt timestamps or sizes).
    #[error("corrupt vkad profile: {what} overflows a 64-bit integer at run {run}")]
    Overflow { run: usize, what: Total },
}

/// The totals of a profile that [`Profile::from_json`] checks for overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Total {
    /// The device time of all of a run's launches.
    KernelTime,
    /// The bytes moved by the launches of one kernel name.
    KernelBytes,
    /// The device time of every run up to this one.
    AllKernelTime,
}

impl std::fmt::Display for Total {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Total::KernelTime => "the run's kernel time",
            Total::KernelBytes => "the bytes of one kernel name",
            Total::AllKernelTime => "the kernel time of all runs",
        })
    }
}

/// A source position (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Loc {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// The whole profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// [`FORMAT_VERSION`] when written.
    pub version: u32,
    pub program: ProgramInfo,
    pub device: DeviceInfo,
    /// The IR at each stage, in pipeline order (e.g. "before AD", "after AD", "optimised"),
    /// as printed by vkad's IR printer.
    pub ir: Vec<IrStage>,
    /// The AD report: one scope tree per function of the program (roots have kind "function").
    pub scopes: Vec<Scope>,
    /// The executions recorded, in order.
    pub runs: Vec<Run>,
}

/// The program a profile is of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramInfo {
    /// The path it was loaded from, as given on the command line.
    pub path: String,
    /// Its source text (so a saved profile shows its lines without the file).
    pub source: String,
}

/// The Vulkan device (or "interpreter") the runs were made on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub name: String,
    /// "discrete", "integrated", "cpu", "virtual", "other".
    pub device_type: String,
    pub driver: String,
    /// 0 when unknown.
    pub subgroup_size: u32,
    /// Whether the queue has timestamps (when false all launch times are 0).
    pub timestamps: bool,
}

/// The IR of the program at one stage of the pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IrStage {
    pub name: String,
    pub text: String,
}

/// One scope of the AD report's tree (see `vkad_core::ad::report`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    /// Unique within the profile; [`Launch::scope`] refers to it.
    pub id: u32,
    /// "function", "map", "loop", "then", "else", "operator", "withacc", "jvp", "vjp".
    pub kind: String,
    /// What to show: `function main`, `map`, `reduce operator`, ...
    pub label: String,
    /// The statement that opens the scope (`None` for a function).
    pub loc: Option<Loc>,
    /// How many times the scope's forward sweep runs after AD and simplification
    /// (1 = no re-execution, 0 = simplified away; `None` = unknown).
    pub runs: Option<u32>,
    /// Loops: checkpoint memory in elements as a formula of the sizes (`n*m + n`); empty when
    /// the loop keeps no checkpoints.
    pub checkpoint_elems: String,
    /// The source locations of the scope's own statements (not of nested scopes): a kernel
    /// launched by a statement at one of these belongs to this scope.
    pub stm_locs: Vec<Loc>,
    pub children: Vec<Scope>,
}

/// Whether a run computes the program or its derivative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// The entry has no `jvp`/`vjp`.
    Primal,
    /// The entry differentiates something (`jvp`/`vjp` before AD).
    Gradient,
}

/// One execution of an entry point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub entry: String,
    pub kind: RunKind,
    /// Wall-clock time of the whole run on the host (uploads, kernels, downloads), ns.
    pub wall_ns: u64,
    /// Whether the run created compute pipelines (`Some(true)`: a *cold* run, the first of
    /// its entry on a device context: the driver compiled its kernels, which its wall time
    /// includes and which may slow its first launches), or found all of them made by an
    /// earlier run (`Some(false)`: warm). `None`: not recorded (profiles written before the
    /// field existed; it is left out of the file then). See [`Run::warmth`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold: Option<bool>,
    /// Every kernel launch in order.
    pub launches: Vec<Launch>,
}

/// Whether a run's pipelines were already made ([`Run::cold`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Warmth {
    /// The run created pipelines.
    Cold,
    /// Every pipeline it used was made by an earlier run.
    Warm,
    /// Not recorded (an older profile).
    Unknown,
}

/// One kernel launch (dispatch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    /// `what.pass @ file:line:col` (see `vkad_spirv::profile`).
    pub name: String,
    /// The construct: "map", "reduce", "scan", "hist", "scatter", "copy", ...
    pub what: String,
    /// The statement's source location, when it has one.
    pub loc: Option<Loc>,
    /// The [`Scope::id`] of the scope whose statement launched it, when known.
    pub scope: Option<u32>,
    /// Index of the queue submission (command buffer) it was recorded in, from 0 per run.
    pub submission: u32,
    /// Device timestamps in ns, relative to the run's first launch.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Workgroups dispatched (x, y, z); all 0 for a copy or fill that ran as a transfer
    /// command rather than a kernel.
    pub workgroups: [u32; 3],
    /// Bytes the launch must read and write (sum of its buffer bindings' used ranges).
    pub bytes: u64,
}

impl Launch {
    /// Device time in ns.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
    /// Achieved bandwidth in GB/s (0 when the duration is 0).
    pub fn gb_per_s(&self) -> f64 {
        let d = self.duration_ns();
        if d == 0 {
            0.0
        } else {
            self.bytes as f64 / d as f64
        }
    }
}

impl Run {
    /// Sum of the launches' device times, ns (saturating; [`Profile::from_json`] rejects
    /// profiles where it would overflow).
    pub fn kernel_ns(&self) -> u64 {
        self.launches
            .iter()
            .fold(0u64, |a, l| a.saturating_add(l.duration_ns()))
    }

    /// [`Run::cold`] as a [`Warmth`].
    pub fn warmth(&self) -> Warmth {
        match self.cold {
            Some(true) => Warmth::Cold,
            Some(false) => Warmth::Warm,
            None => Warmth::Unknown,
        }
    }
}

impl Profile {
    /// Every scope of every tree, depth first (parents before children).
    pub fn all_scopes(&self) -> Vec<&Scope> {
        fn go<'a>(s: &'a Scope, out: &mut Vec<&'a Scope>) {
            out.push(s);
            for c in &s.children {
                go(c, out);
            }
        }
        let mut out = Vec::new();
        for s in &self.scopes {
            go(s, &mut out);
        }
        out
    }

    /// The scope with this id.
    pub fn scope(&self, id: u32) -> Option<&Scope> {
        self.all_scopes().into_iter().find(|s| s.id == id)
    }

    /// The Chrome trace events: one complete event per launch (`pid` = run index + 1,
    /// `tid` = submission + 1, times in microseconds), plus process/thread name metadata.
    pub fn trace_events(&self) -> Vec<serde_json::Value> {
        use serde_json::json;
        let mut ev = Vec::new();
        for (ri, run) in self.runs.iter().enumerate() {
            let pid = ri + 1;
            ev.push(
                json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                "args": {"name": format!(
                    "{} ({}{})",
                    run.entry,
                    kind_name(run.kind),
                    if run.warmth() == Warmth::Cold { ", cold" } else { "" }
                )}}),
            );
            let mut subs: Vec<u32> = run.launches.iter().map(|l| l.submission).collect();
            subs.sort_unstable();
            subs.dedup();
            for s in subs {
                ev.push(
                    json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": s + 1,
                    "args": {"name": format!("submission {s}")}}),
                );
            }
            for l in &run.launches {
                ev.push(json!({
                    "name": l.name, "cat": l.what, "ph": "X", "pid": pid, "tid": l.submission + 1,
                    "ts": l.start_ns as f64 / 1000.0, "dur": l.duration_ns() as f64 / 1000.0,
                    "args": {
                        "loc": l.loc.as_ref().map(|x| x.to_string()),
                        "scope": l.scope,
                        "workgroups": l.workgroups,
                        "bytes": l.bytes,
                    }
                }));
            }
        }
        ev
    }

    /// The file's text: `{"traceEvents": [...], "displayTimeUnit": "ns", "vkad": {profile}}`.
    pub fn to_json(&self) -> String {
        let v = serde_json::json!({
            "traceEvents": self.trace_events(),
            "displayTimeUnit": "ns",
            "vkad": self,
        });
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }

    /// Reads a file written by [`Profile::to_json`].
    pub fn from_json(text: &str) -> Result<Profile, ProfileError> {
        let mut v: serde_json::Value = serde_json::from_str(text)?;
        let p = v
            .get_mut("vkad")
            .map(serde_json::Value::take)
            .ok_or(ProfileError::NoProfile)?;
        let found = p.get("version").and_then(|x| x.as_u64()).unwrap_or(0);
        if found > u64::from(FORMAT_VERSION) {
            return Err(ProfileError::Version {
                found: u32::try_from(found).unwrap_or(u32::MAX),
            });
        }
        let profile: Profile = serde_json::from_value(p)?;
        profile.check_totals()?;
        Ok(profile)
    }

    /// Every total the summaries compute fits in a `u64`: the device time of each run and of
    /// all runs together (which bounds those of scopes and kernel names), and the bytes of
    /// each kernel name.
    fn check_totals(&self) -> Result<(), ProfileError> {
        let mut all = 0u64;
        for (run, r) in self.runs.iter().enumerate() {
            let overflow = |what| ProfileError::Overflow { run: run + 1, what };
            let mut time = 0u64;
            let mut bytes: std::collections::HashMap<&str, u64> = Default::default();
            for l in &r.launches {
                time = time
                    .checked_add(l.duration_ns())
                    .ok_or(overflow(Total::KernelTime))?;
                let b = bytes.entry(&l.name).or_default();
                *b = b.checked_add(l.bytes).ok_or(overflow(Total::KernelBytes))?;
            }
            all = all
                .checked_add(time)
                .ok_or(overflow(Total::AllKernelTime))?;
        }
        Ok(())
    }
}

/// Device time of the launches of one scope in one run ([`Profile::time_per_scope`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeTime {
    /// The [`Scope::id`].
    pub scope: u32,
    /// Launches assigned to the scope itself.
    pub launches: usize,
    /// Their device time, ns.
    pub own_ns: u64,
    /// `own_ns` plus that of every scope nested in it, ns.
    pub total_ns: u64,
}

/// The launches of one kernel name in one run ([`Profile::top_kernels`]).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTotal {
    /// Index of the run in [`Profile::runs`].
    pub run: usize,
    /// The [`Launch::name`].
    pub name: String,
    pub launches: usize,
    /// Their total device time, ns.
    pub total_ns: u64,
    /// Their total bytes.
    pub bytes: u64,
}

impl Profile {
    /// Per scope of every tree (depth first), the device time of `run`'s launches assigned to
    /// it and to its descendants; scopes without launches (at any depth) are left out. The
    /// second value is the time of launches with no scope (or a scope id not in the profile).
    pub fn time_per_scope(&self, run: &Run) -> (Vec<ScopeTime>, u64) {
        use std::collections::HashMap;
        let mut own: HashMap<u32, (usize, u64)> = HashMap::new();
        let mut unscoped = 0u64;
        let ids: std::collections::HashSet<u32> = self.all_scopes().iter().map(|s| s.id).collect();
        for l in &run.launches {
            match l.scope.filter(|id| ids.contains(id)) {
                Some(id) => {
                    let e = own.entry(id).or_default();
                    e.0 += 1;
                    e.1 = e.1.saturating_add(l.duration_ns());
                }
                None => unscoped = unscoped.saturating_add(l.duration_ns()),
            }
        }
        fn go(s: &Scope, own: &HashMap<u32, (usize, u64)>, out: &mut Vec<ScopeTime>) -> u64 {
            let at = out.len();
            let (launches, own_ns) = own.get(&s.id).copied().unwrap_or((0, 0));
            out.push(ScopeTime {
                scope: s.id,
                launches,
                own_ns,
                total_ns: 0,
            });
            let mut total = own_ns;
            let mut any = launches > 0;
            for c in &s.children {
                let before = out.len();
                total = total.saturating_add(go(c, own, out));
                any |= out.len() > before;
            }
            if any {
                out[at].total_ns = total;
            } else {
                out.truncate(at);
            }
            total
        }
        let mut out = Vec::new();
        for s in &self.scopes {
            go(s, &own, &mut out);
        }
        (out, unscoped)
    }

    /// The launches grouped by (run, name), most device time first.
    pub fn top_kernels(&self) -> Vec<KernelTotal> {
        let mut out: Vec<KernelTotal> = Vec::new();
        for (ri, run) in self.runs.iter().enumerate() {
            let first = out.len();
            for l in &run.launches {
                match out[first..].iter_mut().find(|k| k.name == l.name) {
                    Some(k) => {
                        k.launches += 1;
                        k.total_ns = k.total_ns.saturating_add(l.duration_ns());
                        k.bytes = k.bytes.saturating_add(l.bytes);
                    }
                    None => out.push(KernelTotal {
                        run: ri,
                        name: l.name.clone(),
                        launches: 1,
                        total_ns: l.duration_ns(),
                        bytes: l.bytes,
                    }),
                }
            }
        }
        out.sort_by_key(|s| std::cmp::Reverse(s.total_ns));
        out
    }

    /// The AD overhead: the mean kernel time of the gradient runs divided by that of the
    /// primal runs, over warm runs only ([`Profile::ad_overhead_runs`]); `None` without
    /// usable runs of both kinds, or when the primal time is 0 (a device without timestamps).
    pub fn ad_overhead(&self) -> Option<f64> {
        self.ad_overhead_runs()?.ratio()
    }

    /// The runs the AD overhead compares, and why: `None` when the profile lacks primal or
    /// gradient runs altogether.
    ///
    /// A cold run ([`Warmth::Cold`]) is never used: its first launches may wait for the
    /// driver's compilation, and it is not what a program running in a loop sees. The warm
    /// runs of each kind are used; a kind with no warm runs but runs whose warmth is not
    /// recorded (a profile from before [`Run::cold`]) uses those, and says so
    /// ([`AdOverhead::unrecorded`]); a kind with only cold runs has none
    /// ([`AdOverhead::ratio`] is `None` then).
    pub fn ad_overhead_runs(&self) -> Option<AdOverhead> {
        let has = |k: RunKind| self.runs.iter().any(|r| r.kind == k);
        if !has(RunKind::Primal) || !has(RunKind::Gradient) {
            return None;
        }
        let mut unrecorded = false;
        let mut pick = |k: RunKind| -> Vec<usize> {
            let of = |w: Warmth| -> Vec<usize> {
                (self.runs.iter().enumerate())
                    .filter(|(_, r)| r.kind == k && r.warmth() == w)
                    .map(|(i, _)| i)
                    .collect()
            };
            let warm = of(Warmth::Warm);
            if !warm.is_empty() {
                return warm;
            }
            let unknown = of(Warmth::Unknown);
            unrecorded |= !unknown.is_empty();
            unknown
        };
        let primal = pick(RunKind::Primal);
        let gradient = pick(RunKind::Gradient);
        let cold = (self.runs.iter().enumerate())
            .filter(|(_, r)| r.warmth() == Warmth::Cold)
            .map(|(i, _)| i)
            .collect();
        let mean = |rs: &[usize]| {
            (!rs.is_empty()).then(|| {
                rs.iter()
                    .map(|&i| self.runs[i].kernel_ns() as f64)
                    .sum::<f64>()
                    / rs.len() as f64
            })
        };
        Some(AdOverhead {
            primal_ns: mean(&primal),
            gradient_ns: mean(&gradient),
            primal,
            gradient,
            cold,
            unrecorded,
        })
    }
}

/// What the AD overhead of a profile compares ([`Profile::ad_overhead_runs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AdOverhead {
    /// The primal runs used (indices into [`Profile::runs`]).
    pub primal: Vec<usize>,
    /// The gradient runs used.
    pub gradient: Vec<usize>,
    /// The cold runs of the profile, left out.
    pub cold: Vec<usize>,
    /// Whether runs whose warmth is not recorded were used (an older profile).
    pub unrecorded: bool,
    /// The mean kernel time of the primal runs used, ns (`None` when there are none).
    pub primal_ns: Option<f64>,
    /// The mean kernel time of the gradient runs used, ns.
    pub gradient_ns: Option<f64>,
}

impl AdOverhead {
    /// Gradient ÷ primal mean kernel time: `None` when a kind has no usable run (only cold
    /// ones) or the primal time is 0.
    pub fn ratio(&self) -> Option<f64> {
        let (g, p) = (self.gradient_ns?, self.primal_ns?);
        (p > 0.0).then(|| g / p)
    }

    /// Which runs a kind with no usable run lacks: `Some(kind)` for the first such kind.
    pub fn missing(&self) -> Option<RunKind> {
        if self.primal.is_empty() {
            Some(RunKind::Primal)
        } else if self.gradient.is_empty() {
            Some(RunKind::Gradient)
        } else {
            None
        }
    }
}

/// Run numbers (1-based, as the summary and the viewer show them) as text: `1, 3`.
pub fn run_numbers(runs: &[usize]) -> String {
    let v: Vec<String> = runs.iter().map(|i| (i + 1).to_string()).collect();
    v.join(", ")
}

/// The longest kernel name the summary's table shows whole (longer ones are cut, with `…`):
/// the table pads every name to the longest, and a format width must fit in a `u16`.
const MAX_NAME_SHOWN: usize = 120;

fn shown_name(name: &str) -> String {
    if name.chars().count() <= MAX_NAME_SHOWN {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(MAX_NAME_SHOWN - 1).collect();
        s.push('…');
        s
    }
}

fn fmt_us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

fn kind_name(k: RunKind) -> &'static str {
    match k {
        RunKind::Primal => "primal",
        RunKind::Gradient => "gradient",
    }
}

/// The text summary of `vkad profile FILE.json`: the runs, the top kernels (by device time,
/// at most `top` of them), the device time per scope of each run (own and with nested
/// scopes), and the AD overhead line when the profile has primal and gradient runs.
pub fn summary_with(p: &Profile, top: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let d = &p.device;
    let _ = writeln!(
        s,
        "profile of {} on {} ({}, {})",
        p.program.path, d.name, d.device_type, d.driver
    );
    if !d.timestamps {
        let _ = writeln!(
            s,
            "(the device's queue has no timestamps: kernel times are 0)"
        );
    }
    let _ = writeln!(s, "\nruns:");
    for (i, r) in p.runs.iter().enumerate() {
        let mut subs: Vec<u32> = r.launches.iter().map(|l| l.submission).collect();
        subs.sort_unstable();
        subs.dedup();
        let _ = writeln!(
            s,
            "  {}. {} ({}{}): wall {} us, kernels {} us in {} launches ({} submissions)",
            i + 1,
            r.entry,
            kind_name(r.kind),
            if r.warmth() == Warmth::Cold {
                ", cold"
            } else {
                ""
            },
            fmt_us(r.wall_ns),
            fmt_us(r.kernel_ns()),
            r.launches.len(),
            subs.len()
        );
    }
    let kernels = p.top_kernels();
    if !kernels.is_empty() {
        let all = p
            .runs
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.kernel_ns()));
        let shown = &kernels[..kernels.len().min(top)];
        let names: Vec<String> = shown.iter().map(|k| shown_name(&k.name)).collect();
        let width = names
            .iter()
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(0)
            .max(6);
        let _ = writeln!(
            s,
            "\ntop kernels ({} of {}):\n  {:<4} {:<width$}  {:>8}  {:>11}  {:>10}  {:>6}  {:>7}",
            shown.len(),
            kernels.len(),
            "run",
            "kernel",
            "launches",
            "total (us)",
            "mean (us)",
            "share",
            "GB/s"
        );
        for (k, name) in shown.iter().zip(&names) {
            let share = if all > 0 {
                100.0 * k.total_ns as f64 / all as f64
            } else {
                0.0
            };
            let gbs = if k.total_ns > 0 {
                k.bytes as f64 / k.total_ns as f64
            } else {
                0.0
            };
            let _ = writeln!(
                s,
                "  {:<4} {:<width$}  {:>8}  {:>11}  {:>10}  {:>5.1}%  {:>7.3}",
                k.run + 1,
                name,
                k.launches,
                fmt_us(k.total_ns),
                fmt_us(k.total_ns / k.launches.max(1) as u64),
                share,
                gbs
            );
        }
    }
    let depth_of = {
        let mut m = std::collections::HashMap::new();
        fn go(sc: &Scope, d: usize, m: &mut std::collections::HashMap<u32, usize>) {
            m.insert(sc.id, d);
            for c in &sc.children {
                go(c, d + 1, m);
            }
        }
        for sc in &p.scopes {
            go(sc, 0, &mut m);
        }
        m
    };
    for (i, r) in p.runs.iter().enumerate() {
        if r.launches.is_empty() {
            continue;
        }
        let (rows, unscoped) = p.time_per_scope(r);
        let _ = writeln!(
            s,
            "\ntime per scope, run {} ({}, {}): total (own) us, launches",
            i + 1,
            r.entry,
            kind_name(r.kind)
        );
        for row in rows {
            let Some(sc) = p.scope(row.scope) else {
                continue;
            };
            let indent = 2 * (1 + depth_of.get(&row.scope).copied().unwrap_or(0));
            let mut label = sc.label.clone();
            if let Some(l) = &sc.loc {
                let _ = write!(label, " at {l}");
            }
            let mut notes = String::new();
            if let Some(n) = sc.runs {
                if n != 1 {
                    let _ = write!(notes, "; forward sweep runs {n}×");
                }
            }
            if !sc.checkpoint_elems.is_empty() {
                let _ = write!(notes, "; checkpoints {} elements", sc.checkpoint_elems);
            }
            let _ = writeln!(
                s,
                "{:indent$}{label}: {} ({}) us, {} launches{notes}",
                "",
                fmt_us(row.total_ns),
                fmt_us(row.own_ns),
                row.launches
            );
        }
        if unscoped > 0 || r.launches.iter().any(|l| l.scope.is_none()) {
            let n = r.launches.iter().filter(|l| l.scope.is_none()).count();
            let _ = writeln!(s, "  (no scope): {} us, {n} launches", fmt_us(unscoped));
        }
    }
    if let Some(o) = p.ad_overhead_runs() {
        let _ = writeln!(s, "\n{}", overhead_line(p, &o));
    }
    s
}

/// The runs `runs` (indices into [`Profile::runs`]) as `entry [1, 3]` per entry (run numbers
/// from 1), in order of first appearance.
pub fn runs_by_entry(p: &Profile, runs: &[usize]) -> String {
    let mut entries: Vec<(&str, Vec<usize>)> = Vec::new();
    for &i in runs {
        let e = p.runs[i].entry.as_str();
        match entries.iter_mut().find(|(x, _)| *x == e) {
            Some((_, v)) => v.push(i),
            None => entries.push((e, vec![i])),
        }
    }
    let parts: Vec<String> = entries
        .iter()
        .map(|(e, v)| format!("{e} [{}]", run_numbers(v)))
        .collect();
    parts.join(", ")
}

/// The AD overhead line of the summary: the ratio and the runs it compares (by entry and run
/// number), the cold runs left out, or why there is no ratio.
pub fn overhead_line(p: &Profile, o: &AdOverhead) -> String {
    let mut line = match (o.missing(), o.ratio()) {
        (Some(k), _) => format!(
            "AD overhead: needs a warm {} run (the {} runs are all cold: run the entries again)",
            kind_name(k),
            kind_name(k)
        ),
        (None, None) => {
            "AD overhead: unknown (the primal runs' kernel time is 0: no timestamps)".to_string()
        }
        (None, Some(x)) => {
            let warm = if o.unrecorded { "" } else { "warm " };
            format!(
                "AD overhead: {x:.2}× (mean kernel time of {warm}gradient runs {} {} us / {warm}primal runs {} {} us)",
                runs_by_entry(p, &o.gradient),
                fmt_us(o.gradient_ns.unwrap_or(0.0) as u64),
                runs_by_entry(p, &o.primal),
                fmt_us(o.primal_ns.unwrap_or(0.0) as u64),
            )
        }
    };
    if !o.cold.is_empty() {
        line.push_str(&format!("; cold runs left out: {}", run_numbers(&o.cold)));
    }
    if o.unrecorded {
        line.push_str("; the profile does not record which runs were cold (an older vkad made it)");
    }
    line
}

/// [`summary_with`] showing the top 10 kernels.
pub fn summary(p: &Profile) -> String {
    summary_with(p, 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Profile {
        let loc = Loc {
            file: "a.fut".into(),
            line: 3,
            col: 5,
        };
        Profile {
            version: FORMAT_VERSION,
            program: ProgramInfo {
                path: "a.fut".into(),
                source: "entry main ...".into(),
            },
            device: DeviceInfo {
                name: "llvmpipe".into(),
                device_type: "cpu".into(),
                driver: "mesa".into(),
                subgroup_size: 8,
                timestamps: true,
            },
            ir: vec![IrStage {
                name: "optimised".into(),
                text: "fun main ...".into(),
            }],
            scopes: vec![Scope {
                id: 0,
                kind: "function".into(),
                label: "function main".into(),
                loc: None,
                runs: Some(1),
                checkpoint_elems: String::new(),
                stm_locs: vec![loc.clone()],
                children: vec![],
            }],
            runs: vec![Run {
                entry: "main".into(),
                kind: RunKind::Primal,
                wall_ns: 5000,
                cold: None,
                launches: vec![Launch {
                    name: "map.0 @ a.fut:3:5".into(),
                    what: "map".into(),
                    loc: Some(loc),
                    scope: Some(0),
                    submission: 0,
                    start_ns: 0,
                    end_ns: 2000,
                    workgroups: [4, 1, 1],
                    bytes: 4096,
                }],
            }],
        }
    }

    #[test]
    fn round_trips_and_is_a_chrome_trace() {
        let p = sample();
        let text = p.to_json();
        assert_eq!(Profile::from_json(&text).unwrap(), p);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let evs = v["traceEvents"].as_array().unwrap();
        let x: Vec<_> = evs.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(x.len(), 1);
        assert_eq!(x[0]["dur"].as_f64(), Some(2.0));
        assert_eq!(p.runs[0].launches[0].gb_per_s(), 4096.0 / 2000.0);
    }

    #[test]
    fn rejects_plain_traces_and_newer_versions() {
        assert!(matches!(
            Profile::from_json(r#"{"traceEvents": []}"#),
            Err(ProfileError::NoProfile)
        ));
        let mut p = sample();
        p.version = FORMAT_VERSION + 1;
        let text = p.to_json();
        assert!(matches!(
            Profile::from_json(&text),
            Err(ProfileError::Version { .. })
        ));
        assert!(Profile::from_json("not json").is_err());
    }

    fn launch(name: &str, scope: Option<u32>, start: u64, end: u64) -> Launch {
        Launch {
            name: name.into(),
            what: "map".into(),
            loc: None,
            scope,
            submission: 0,
            start_ns: start,
            end_ns: end,
            workgroups: [1, 1, 1],
            bytes: 1000,
        }
    }

    /// `sample` with a child scope (id 1, in function 0) and a gradient run.
    fn two_runs() -> Profile {
        let mut p = sample();
        p.scopes[0].children.push(Scope {
            id: 1,
            kind: "map".into(),
            label: "map".into(),
            loc: Some(Loc {
                file: "a.fut".into(),
                line: 4,
                col: 1,
            }),
            runs: Some(2),
            checkpoint_elems: String::new(),
            stm_locs: vec![],
            children: vec![],
        });
        p.scopes.push(Scope {
            id: 2,
            kind: "function".into(),
            label: "function unused".into(),
            loc: None,
            runs: None,
            checkpoint_elems: String::new(),
            stm_locs: vec![],
            children: vec![],
        });
        p.runs.push(Run {
            entry: "grad".into(),
            kind: RunKind::Gradient,
            wall_ns: 20000,
            cold: None,
            launches: vec![
                launch("map.1 @ a.fut:3:5", Some(0), 0, 1000),
                launch("map.1 @ a.fut:4:1", Some(1), 1000, 4000),
                launch("map.1 @ a.fut:4:1", Some(1), 4000, 6000),
                launch("copy.1", None, 6000, 6500),
            ],
        });
        p
    }

    #[test]
    fn time_per_scope_sums_nested_scopes_and_leaves_out_idle_ones() {
        let p = two_runs();
        let (rows, unscoped) = p.time_per_scope(&p.runs[1]);
        assert_eq!(unscoped, 500);
        assert_eq!(
            rows,
            vec![
                ScopeTime {
                    scope: 0,
                    launches: 1,
                    own_ns: 1000,
                    total_ns: 6000
                },
                ScopeTime {
                    scope: 1,
                    launches: 2,
                    own_ns: 5000,
                    total_ns: 5000
                },
            ]
        );
        let top = p.top_kernels();
        assert_eq!((top[0].run, top[0].name.as_str()), (1, "map.1 @ a.fut:4:1"));
        assert_eq!((top[0].launches, top[0].total_ns), (2, 5000));
        // Gradient 6500 ns / primal 2000 ns.
        assert_eq!(p.ad_overhead(), Some(3.25));
    }

    #[test]
    fn summary_lists_runs_kernels_scopes_and_the_ad_overhead() {
        let p = two_runs();
        let s = summary(&p);
        assert!(s.contains("1. main (primal)"), "{s}");
        assert!(s.contains("2. grad (gradient)"), "{s}");
        assert!(s.contains("top kernels (4 of 4)"), "{s}");
        assert!(
            s.contains("    map at a.fut:4:1: 5.0 (5.0) us, 2 launches; forward sweep runs 2×"),
            "{s}"
        );
        assert!(s.contains("(no scope): 0.5 us, 1 launches"), "{s}");
        assert!(!s.contains("function unused"), "{s}");
        assert!(s.contains("AD overhead: 3.25×"), "{s}");
        // One kind of run only: no overhead line.
        let mut q = p.clone();
        q.runs.truncate(1);
        assert!(!summary(&q).contains("AD overhead"));
        assert_eq!(q.ad_overhead(), None);
        // No timestamps: the overhead is unknown, not infinite.
        let mut z = p;
        for r in &mut z.runs {
            for l in &mut r.launches {
                l.end_ns = l.start_ns;
            }
        }
        assert_eq!(z.ad_overhead(), None);
        assert!(summary(&z).contains("AD overhead: unknown"));
    }

    /// A profile written before `cold` existed reads with `cold: None`, and a run whose
    /// warmth is not recorded is written without the key (as before).
    #[test]
    fn profiles_without_the_cold_flag_still_read() {
        let p = two_runs();
        let text = p.to_json();
        assert!(!text.contains("\"cold\""), "{text}");
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(v["vkad"]["runs"][0].get("cold").is_none());
        let q = Profile::from_json(&text).unwrap();
        assert!(q.runs.iter().all(|r| r.warmth() == Warmth::Unknown));
        // And the flag round-trips when recorded.
        v["vkad"]["runs"][0]["cold"] = serde_json::json!(true);
        let q = Profile::from_json(&v.to_string()).unwrap();
        assert_eq!(q.runs[0].cold, Some(true));
        assert_eq!(Profile::from_json(&q.to_json()).unwrap(), q);
    }

    /// Item 2 of issue 14: the AD overhead compares warm runs only; cold runs are left out and
    /// named; a kind with only cold runs has no overhead; runs of an older profile are used
    /// with a note.
    #[test]
    fn the_ad_overhead_compares_warm_runs_only() {
        let run = |entry: &str, kind, cold, ns| Run {
            entry: entry.into(),
            kind,
            wall_ns: 10 * ns,
            cold,
            launches: vec![launch("map.0", None, 0, ns)],
        };
        let mut p = sample();
        p.runs = vec![
            run("loss", RunKind::Primal, Some(true), 9000),
            run("loss", RunKind::Primal, Some(false), 1000),
            run("main", RunKind::Gradient, Some(true), 50000),
            run("main", RunKind::Gradient, Some(false), 3000),
            run("main", RunKind::Gradient, Some(false), 5000),
        ];
        let o = p.ad_overhead_runs().expect("both kinds");
        assert_eq!(
            (o.primal.clone(), o.gradient.clone()),
            (vec![1], vec![3, 4])
        );
        assert_eq!(o.cold, vec![0, 2]);
        assert!(!o.unrecorded);
        assert_eq!(o.ratio(), Some(4.0));
        assert_eq!(p.ad_overhead(), Some(4.0));
        let line = overhead_line(&p, &o);
        assert_eq!(
            line,
            "AD overhead: 4.00× (mean kernel time of warm gradient runs main [4, 5] 4.0 us / \
             warm primal runs loss [2] 1.0 us); cold runs left out: 1, 3"
        );
        let s = summary(&p);
        assert!(s.contains("1. loss (primal, cold)"), "{s}");
        assert!(s.contains("2. loss (primal): "), "{s}");
        assert!(s.contains(&line), "{s}");

        // Only cold gradient runs: no overhead, and the summary says what to do.
        p.runs.truncate(3);
        let o = p.ad_overhead_runs().expect("both kinds");
        assert_eq!(o.missing(), Some(RunKind::Gradient));
        assert_eq!(o.ratio(), None);
        assert!(overhead_line(&p, &o).starts_with("AD overhead: needs a warm gradient run"));

        // An older profile: unrecorded runs are used, with a note.
        for r in &mut p.runs {
            r.cold = None;
        }
        let o = p.ad_overhead_runs().expect("both kinds");
        assert!(o.unrecorded);
        assert_eq!((o.primal.len(), o.gradient.len()), (2, 1));
        assert_eq!(o.ratio(), Some(10.0));
        assert!(overhead_line(&p, &o).contains("does not record which runs were cold"));
    }

    /// Issue 16, item 7: a kernel name longer than 65,535 characters made the summary panic
    /// (a format width must fit in a `u16`); it is cut in the table now.
    #[test]
    fn a_huge_kernel_name_is_cut_in_the_summary() {
        let mut p = sample();
        p.runs[0].launches[0].name = "k".repeat(70_000);
        let p = Profile::from_json(&p.to_json()).expect("reads");
        let s = summary(&p);
        let row = s
            .lines()
            .find(|l| l.contains("kkk"))
            .expect("a row of the kernel");
        assert!(
            row.contains(&format!("{}…", "k".repeat(MAX_NAME_SHOWN - 1))),
            "{row}"
        );
        assert!(row.len() < 1000, "{}", row.len());
    }

    /// Issue 16, item 7: corrupt timestamps whose durations overflow a `u64` together were
    /// summed with wrap-around (a panic in a debug build); reading such a profile is an error.
    #[test]
    fn overflowing_totals_are_an_error() {
        let mut p = sample();
        let l = p.runs[0].launches[0].clone();
        p.runs[0].launches.push(Launch {
            start_ns: 0,
            end_ns: u64::MAX,
            ..l.clone()
        });
        match Profile::from_json(&p.to_json()) {
            Err(ProfileError::Overflow { run: 1, what }) => assert_eq!(what, Total::KernelTime),
            other => panic!("expected an overflow error, got {other:?}"),
        }
        // Bytes of one kernel name, and time over all runs.
        let mut p = sample();
        p.runs[0].launches.push(Launch {
            bytes: u64::MAX,
            ..l.clone()
        });
        assert!(matches!(
            Profile::from_json(&p.to_json()),
            Err(ProfileError::Overflow {
                run: 1,
                what: Total::KernelBytes
            })
        ));
        let mut p = sample();
        let mut r = p.runs[0].clone();
        r.launches[0].end_ns = u64::MAX - 1;
        p.runs = vec![r.clone(), r];
        assert!(matches!(
            Profile::from_json(&p.to_json()),
            Err(ProfileError::Overflow {
                run: 2,
                what: Total::AllKernelTime
            })
        ));
        // Built in memory (not read), the totals saturate rather than wrap.
        assert_eq!(p.runs[0].kernel_ns(), u64::MAX - 1);
        assert!(summary(&p).contains("time per scope"));
    }

    mod fuzz {
        use super::super::*;
        use super::sample;
        use proptest::prelude::*;
        use serde_json::Value;

        /// The profile's own keys, so that random objects sometimes have the right shape.
        const KEYS: &[&str] = &[
            "vkad",
            "version",
            "program",
            "device",
            "ir",
            "scopes",
            "runs",
            "path",
            "source",
            "name",
            "device_type",
            "driver",
            "subgroup_size",
            "timestamps",
            "text",
            "id",
            "kind",
            "label",
            "loc",
            "checkpoint_elems",
            "stm_locs",
            "children",
            "entry",
            "wall_ns",
            "cold",
            "launches",
            "what",
            "scope",
            "submission",
            "start_ns",
            "end_ns",
            "workgroups",
            "bytes",
            "file",
            "line",
            "col",
            "traceEvents",
        ];

        fn leaf() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<u64>().prop_map(Value::from),
                prop_oneof![Just(u64::MAX), Just(u64::MAX - 1), Just(1u64 << 63)]
                    .prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                "[a-z. @:0-9]{0,12}".prop_map(Value::from),
                (60_000usize..70_000).prop_map(|n| Value::from("k".repeat(n))),
                prop_oneof![Just("primal"), Just("gradient"), Just("function")]
                    .prop_map(Value::from),
            ]
        }

        fn json() -> impl Strategy<Value = Value> {
            leaf().prop_recursive(6, 96, 8, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    proptest::collection::vec(
                        (proptest::sample::select(KEYS).prop_map(String::from), inner),
                        0..8
                    )
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
                ]
            })
        }

        /// Every path to a value in `v`, as JSON pointers.
        fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
            out.push(at.clone());
            match v {
                Value::Array(xs) => {
                    for (i, x) in xs.iter().enumerate() {
                        pointers(x, format!("{at}/{i}"), out);
                    }
                }
                Value::Object(m) => {
                    for (k, x) in m {
                        pointers(x, format!("{at}/{k}"), out);
                    }
                }
                _ => {}
            }
        }

        /// Reads `text` and, when it is a profile, summarises it: neither may panic.
        fn read(text: &str) {
            if let Ok(p) = Profile::from_json(text) {
                let _ = summary_with(&p, 3);
                let _ = p.to_json();
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            /// Arbitrary JSON, alone and under the `vkad` key.
            #[test]
            fn arbitrary_json_never_panics(v in json()) {
                read(&v.to_string());
                read(&serde_json::json!({ "vkad": v }).to_string());
            }

            /// A valid profile with one value (of any kind) replaced by arbitrary JSON, and
            /// more launches with arbitrary timestamps, sizes and names.
            #[test]
            fn mutated_profiles_never_panic(
                at in any::<proptest::sample::Index>(),
                v in json(),
                launches in proptest::collection::vec(
                    (any::<u64>(), any::<u64>(), any::<u64>(), 0usize..70_000, any::<Option<u32>>()),
                    0..4,
                ),
            ) {
                let mut p = sample();
                let l = p.runs[0].launches[0].clone();
                for (start_ns, end_ns, bytes, len, scope) in launches {
                    p.runs[0].launches.push(Launch {
                        name: "n".repeat(len),
                        start_ns,
                        end_ns,
                        bytes,
                        scope,
                        ..l.clone()
                    });
                }
                read(&p.to_json());
                let mut doc: Value = serde_json::from_str(&p.to_json()).expect("json");
                let mut ptrs = vec![];
                pointers(&doc["vkad"], "/vkad".into(), &mut ptrs);
                if let Some(slot) = doc.pointer_mut(&ptrs[at.index(ptrs.len())]) {
                    *slot = v;
                }
                read(&doc.to_string());
            }
        }
    }
}
