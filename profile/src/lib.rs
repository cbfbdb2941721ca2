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
    /// Every kernel launch in order.
    pub launches: Vec<Launch>,
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
    /// Workgroups dispatched (x, y, z).
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
    /// Sum of the launches' device times, ns.
    pub fn kernel_ns(&self) -> u64 {
        self.launches.iter().map(Launch::duration_ns).sum()
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
                "args": {"name": format!("{} ({:?})", run.entry, run.kind).to_lowercase()}}),
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
        let found = p.get("version").and_then(|x| x.as_u64()).unwrap_or(0) as u32;
        if found > FORMAT_VERSION {
            return Err(ProfileError::Version { found });
        }
        Ok(serde_json::from_value(p)?)
    }
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
}
