//! Profiling of runs on the Vulkan backend: names for the kernel launches of an IR statement,
//! summaries of the [`KernelTiming`]s that [`crate::run_entry_profiled`] returns, and profiles
//! as data ([`vkad_profile::Profile`]: `vkad run --profile-out`, `vkad bench FILE`).
//!
//! A launch is named `what.pass @ file:line:col`: `what` is the statement's construct (`map`,
//! `reduce`, `scan`, `hist`, `scatter`, `copy`, `index`, ...), `pass` counts the launches that
//! statement made in this execution of it (a `reduce` makes two, a `scan` three), and the
//! location is the statement's source position.
//!
//! A profile ([`new_profile`], then one [`profile_run`] per execution) holds the program, the
//! device, the IR before AD, after AD and optimised, the AD report's scopes, and the runs. A
//! launch belongs to the scope whose own statements include one at the launch's location
//! (see [`assign_scope`]): AD keeps the source locations of the statements it copies, so the
//! kernels of a gradient are attributed to the scopes of the primal code they differentiate.

use std::collections::{HashMap, HashSet};
use vkad_core::ir::{self, Body, Exp, Soac};
use vkad_core::value::Value;
use vkad_core::Compiled;
use vkad_profile::{Launch, Loc, Profile, Run, RunKind, Scope};
use vkad_vk::KernelTiming;

pub use vkad_profile::summary;

/// Device time of one launch in nanoseconds.
pub fn duration_ns(t: &KernelTiming) -> u64 {
    t.end_ns.saturating_sub(t.start_ns)
}

/// Total device time of the launches, in nanoseconds.
pub fn total_ns(ts: &[KernelTiming]) -> u64 {
    ts.iter().map(duration_ns).sum()
}

/// Launches of one kernel name: count and total device time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSummary {
    /// The launch name (see the module documentation).
    pub name: String,
    /// Number of launches.
    pub launches: usize,
    /// Their total device time in nanoseconds.
    pub total_ns: u64,
}

impl KernelSummary {
    /// Mean device time per launch in nanoseconds.
    pub fn mean_ns(&self) -> f64 {
        self.total_ns as f64 / self.launches.max(1) as f64
    }
}

/// Groups launches by name, in order of first launch.
pub fn summarize(ts: &[KernelTiming]) -> Vec<KernelSummary> {
    let mut out: Vec<KernelSummary> = Vec::new();
    for t in ts {
        let d = duration_ns(t);
        match out.iter_mut().find(|s| s.name == t.name) {
            Some(s) => {
                s.launches += 1;
                s.total_ns += d;
            }
            None => out.push(KernelSummary {
                name: t.name.clone(),
                launches: 1,
                total_ns: d,
            }),
        }
    }
    out
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

/// A table of [`summarize`]'s rows (launches, total and mean time in microseconds) with a total
/// line; notes that all times are 0 when the device has no timestamps.
pub fn report(ts: &[KernelTiming]) -> String {
    let rows = summarize(ts);
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(6);
    let mut s = format!(
        "{:<width$}  {:>8}  {:>12}  {:>12}\n",
        "kernel", "launches", "total (us)", "mean (us)"
    );
    for r in &rows {
        s.push_str(&format!(
            "{:<width$}  {:>8}  {:>12}  {:>12}\n",
            r.name,
            r.launches,
            us(r.total_ns as f64),
            us(r.mean_ns())
        ));
    }
    let total = total_ns(ts);
    s.push_str(&format!(
        "{:<width$}  {:>8}  {:>12}\n",
        "total",
        ts.len(),
        us(total as f64)
    ));
    if !ts.is_empty() && total == 0 {
        s.push_str("(the device's queue has no timestamps: times are 0)\n");
    }
    s
}

/// The profile skeleton of a compiled program: program (path and source), device, IR stages
/// (`before AD` = [`Compiled::ir_ad`], `after AD` = [`vkad_core::ad::transform()`] of it before
/// simplification, `optimised` = [`Compiled::ir`]), the scopes of the AD report of
/// [`Compiled::ir_ad`] against [`Compiled::ir`] (ids unique, depth first from 0); no runs.
pub fn new_profile(
    compiled: &Compiled,
    path: &str,
    source: &str,
    device: &vkad_vk::DeviceInfo,
) -> Profile {
    let device = vkad_profile::DeviceInfo {
        name: device.name.clone(),
        device_type: device.device_type.clone(),
        driver: device.driver.clone(),
        subgroup_size: device.subgroup_size,
        timestamps: device.timestamp_bits > 0,
    };
    skeleton(compiled, path, source, device)
}

/// [`new_profile`] with the device already described.
fn skeleton(
    compiled: &Compiled,
    path: &str,
    source: &str,
    device: vkad_profile::DeviceInfo,
) -> Profile {
    use vkad_core::ir::print::program_to_string;
    let after_ad = vkad_core::ad::transform::transform_partial(compiled.ir_ad.clone()).0;
    let report = vkad_core::ad::report::ad_report(&compiled.ir_ad, &compiled.ir);
    let mut next = 0u32;
    let scopes = report.funs.iter().map(|s| scope_of(s, &mut next)).collect();
    Profile {
        version: vkad_profile::FORMAT_VERSION,
        program: vkad_profile::ProgramInfo {
            path: path.to_string(),
            source: source.to_string(),
        },
        device,
        ir: [
            ("before AD", program_to_string(&compiled.ir_ad)),
            ("after AD", program_to_string(&after_ad)),
            ("optimised", program_to_string(&compiled.ir)),
        ]
        .into_iter()
        .map(|(name, text)| vkad_profile::IrStage {
            name: name.to_string(),
            text,
        })
        .collect(),
        scopes,
        runs: Vec::new(),
    }
}

fn loc_of(l: &vkad_core::diag::SrcLoc) -> Loc {
    Loc {
        file: l.file.to_string(),
        line: l.line,
        col: l.col,
    }
}

/// A profile scope of a report scope; ids from `next`, depth first.
fn scope_of(s: &vkad_core::ad::report::ScopeReport, next: &mut u32) -> Scope {
    use vkad_core::ad::report::ScopeKind;
    let id = *next;
    *next += 1;
    let kind = match &s.kind {
        ScopeKind::Function(_) => "function",
        ScopeKind::Map => "map",
        ScopeKind::Loop => "loop",
        ScopeKind::Then => "then",
        ScopeKind::Else => "else",
        ScopeKind::Operator(_) => "operator",
        ScopeKind::WithAcc => "withacc",
        ScopeKind::Ad(n) => n,
    };
    Scope {
        id,
        kind: kind.to_string(),
        label: s.kind.to_string(),
        loc: s.loc.as_ref().map(loc_of),
        runs: s.runs.map(|r| u32::try_from(r).unwrap_or(u32::MAX)),
        checkpoint_elems: s.checkpoint_elements().unwrap_or_default(),
        stm_locs: s.stm_locs.iter().map(loc_of).collect(),
        children: s.children.iter().map(|c| scope_of(c, next)).collect(),
    }
}

/// Whether `entry` computes a derivative: its function before AD, or a function it calls,
/// contains a `jvp` or `vjp`. Unknown entries are [`RunKind::Primal`].
pub fn run_kind(compiled: &Compiled, entry: &str) -> RunKind {
    let prog = &compiled.ir_ad;
    let Some(f) = prog.entry(entry) else {
        return RunKind::Primal;
    };
    let mut seen = HashSet::new();
    seen.insert(f.name.to_string());
    if differentiates(prog, &f.body, &mut seen) {
        RunKind::Gradient
    } else {
        RunKind::Primal
    }
}

/// Whether a body contains `jvp`/`vjp`, following calls (each function once).
fn differentiates(prog: &ir::Program, b: &Body, seen: &mut HashSet<String>) -> bool {
    b.stms.iter().any(|s| match &s.exp {
        Exp::Jvp { .. } | Exp::Vjp { .. } => true,
        Exp::Apply { fun, .. } => {
            seen.insert(fun.to_string())
                && prog
                    .fun(fun)
                    .is_some_and(|f| differentiates(prog, &f.body, seen))
        }
        Exp::If { then_b, else_b, .. } => {
            differentiates(prog, then_b, seen) || differentiates(prog, else_b, seen)
        }
        Exp::Loop { body, .. } => differentiates(prog, body, seen),
        Exp::Soac(Soac::Map { lam, .. }) => differentiates(prog, &lam.body, seen),
        Exp::Soac(Soac::Reduce { op, .. })
        | Exp::Soac(Soac::Scan { op, .. })
        | Exp::Soac(Soac::Hist { op, .. }) => differentiates(prog, &op.lam.body, seen),
        Exp::WithAcc { inputs, lam } => {
            differentiates(prog, &lam.body, seen)
                || inputs
                    .iter()
                    .filter_map(|i| i.op.as_ref())
                    .any(|op| differentiates(prog, &op.lam.body, seen))
        }
        _ => false,
    })
}

/// The construct and source location of a launch named `what.pass @ file:line:col` (or
/// `what.pass` without a location); `None` for a name of another form.
pub fn parse_launch_name(name: &str) -> Option<(String, Option<Loc>)> {
    let (head, loc) = match name.split_once(" @ ") {
        Some((h, l)) => (h, Some(l)),
        None => (name, None),
    };
    let (what, pass) = head.rsplit_once('.')?;
    pass.parse::<u32>().ok()?;
    let loc = match loc {
        None => None,
        Some(l) => {
            let mut it = l.rsplitn(3, ':');
            let col = it.next()?.parse().ok()?;
            let line = it.next()?.parse().ok()?;
            let file = it.next()?.to_string();
            Some(Loc { file, line, col })
        }
    };
    Some((what.to_string(), loc))
}

/// The scope a launch at `loc` belongs to. The statement at `loc` is searched among the scopes'
/// own statements ([`Scope::stm_locs`]), depth first, in the tree of the function labelled
/// `function {fun}` (the entry point's) before the other trees; the first scope found owns the
/// launch, unless the statement opens a scope that the kernel runs (one of the scope's children
/// is at `loc`: a `map` whose lambda the kernel runs, or a `vjp` whose generated code carries
/// the `vjp`'s location): then that child does. The operator scope of a `reduce`, `scan` or
/// `reduce_by_index` does not take the launches: they belong to the scope of the statement.
pub fn assign_scope(profile: &Profile, fun: Option<&str>, loc: &Loc) -> Option<u32> {
    fn find(s: &Scope, loc: &Loc) -> Option<u32> {
        if s.stm_locs.contains(loc) {
            let opened = s
                .children
                .iter()
                .find(|c| c.loc.as_ref() == Some(loc) && c.kind != "operator");
            return Some(opened.map_or(s.id, |c| c.id));
        }
        s.children.iter().find_map(|c| find(c, loc))
    }
    let label = fun.map(|f| format!("function {f}"));
    let is_entry = |s: &&Scope| s.kind == "function" && Some(&s.label) == label.as_ref();
    profile
        .scopes
        .iter()
        .filter(is_entry)
        .chain(profile.scopes.iter().filter(|s| !is_entry(s)))
        .find_map(|s| find(s, loc))
}

/// The [`Run`] of the timings of one execution of `entry`: launches named by
/// [`parse_launch_name`] and assigned to scopes by [`assign_scope`] (`fun` is the entry's
/// function name), times relative to the earliest launch, submissions renumbered from 0 in
/// order of first appearance. [`Run::cold`] is `None`: the caller, which knows whether the run
/// made pipelines, sets it (as [`profile_run`] does).
pub fn run_from_timings(
    profile: &Profile,
    entry: &str,
    fun: Option<&str>,
    kind: RunKind,
    wall_ns: u64,
    timings: &[KernelTiming],
) -> Run {
    let base = timings.iter().map(|t| t.start_ns).min().unwrap_or(0);
    let mut subs: HashMap<u64, u32> = HashMap::new();
    let mut cache: HashMap<Loc, Option<u32>> = HashMap::new();
    let launches = timings
        .iter()
        .map(|t| {
            let (what, loc) =
                parse_launch_name(&t.name).unwrap_or_else(|| ("kernel".to_string(), None));
            let scope = loc.as_ref().and_then(|l| {
                *cache
                    .entry(l.clone())
                    .or_insert_with(|| assign_scope(profile, fun, l))
            });
            let n = subs.len() as u32;
            let submission = *subs.entry(t.submission).or_insert(n);
            Launch {
                name: t.name.clone(),
                what,
                loc,
                scope,
                submission,
                start_ns: t.start_ns.saturating_sub(base),
                end_ns: t.end_ns.saturating_sub(base),
                workgroups: t.groups,
                bytes: t.bytes,
            }
        })
        .collect();
    Run {
        entry: entry.to_string(),
        kind,
        wall_ns,
        cold: None,
        launches,
    }
}

/// Runs `entry` once with timestamps ([`crate::run_entry_profiled`]); returns its results and
/// the [`Run`]: launches assigned to the scopes of `profile` (by statement location), times
/// relative to the first launch, submissions renumbered from 0, kind [`RunKind::Gradient`]
/// when the entry differentiates ([`run_kind`]). `wall_ns` is the host time of the whole call.
/// The run is [`Run::cold`] when it made compute pipelines on `ctx` (the context's pipeline
/// count grew: the first run of an entry on a context), warm when every kernel it launched
/// had its pipeline made by an earlier run.
pub fn profile_run(
    ctx: &vkad_vk::Context,
    compiled: &Compiled,
    profile: &Profile,
    entry: &str,
    args: Vec<Value>,
) -> crate::error::Result<(Vec<Value>, Run)> {
    let pipelines = ctx.cached_kernels();
    let start = std::time::Instant::now();
    let (values, timings) = crate::run_entry_profiled(ctx, compiled, entry, args)?;
    let wall_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let fun = compiled.ir_ad.entry(entry).map(|f| f.name.to_string());
    let mut run = run_from_timings(
        profile,
        entry,
        fun.as_deref(),
        run_kind(compiled, entry),
        wall_ns,
        &timings,
    );
    run.cold = Some(ctx.cached_kernels() > pipelines);
    Ok((values, run))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, start: u64, end: u64) -> KernelTiming {
        KernelTiming {
            name: name.to_string(),
            start_ns: start,
            end_ns: end,
            groups: [1, 1, 1],
            bytes: 0,
            submission: 0,
        }
    }

    #[test]
    fn summaries_group_by_name_in_first_launch_order() {
        let ts = [
            t("map.1", 0, 1000),
            t("reduce.1", 5, 2005),
            t("map.1", 10, 3010),
        ];
        let s = summarize(&ts);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].name.as_str(), s[0].launches, s[0].total_ns),
            ("map.1", 2, 4000)
        );
        assert_eq!(s[0].mean_ns(), 2000.0);
        assert_eq!((s[1].name.as_str(), s[1].launches), ("reduce.1", 1));
        assert_eq!(total_ns(&ts), 6000);
        let r = report(&ts);
        assert!(r.contains("map.1"), "{r}");
        assert!(
            r.lines().last().is_some_and(|l| l.starts_with("total")),
            "{r}"
        );
    }

    #[test]
    fn profiled_runs_name_every_launch() {
        let backend = crate::VulkanBackend::new(crate::ContextOptions::default());
        let Ok(ctx) = backend.context() else {
            eprintln!("no Vulkan device: skipped");
            return;
        };
        let src = "entry main (xs: []f32) : f32 = reduce (+) 0 (map (\\x -> x * 2) xs)\n";
        let c = vkad_core::compile("p.fut", src).expect("compiles");
        // Three elements: one workgroup, whose partial is the sum (one pass); ten thousand: a
        // partial per workgroup (more than one on every device), then a second pass.
        for (n, want) in [
            (3, &["segmap.1 @ p.fut:1:32", "reduce.1 @ p.fut:1:32"][..]),
            (
                10_000,
                &[
                    "segmap.1 @ p.fut:1:32",
                    "reduce.1 @ p.fut:1:32",
                    "reduce.2 @ p.fut:1:32",
                ][..],
            ),
        ] {
            let xs = vkad_core::value::Value::Array(vkad_core::value::ArrayValue::new(
                vec![n],
                vkad_core::value::Buffer::F32((0..n).map(|i| i as f32).collect()),
            ));
            let (r, ts) =
                crate::run_entry_profiled(&ctx, &c, "main", vec![xs.clone()]).expect("runs");
            assert_eq!(
                r,
                crate::run_entry(&ctx, &c, "main", vec![xs]).expect("runs")
            );
            let names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, want, "{n} elements");
            assert!(ts.iter().all(|t| t.end_ns >= t.start_ns));
        }
    }

    #[test]
    fn updates_in_a_host_loop_write_in_place_behind_recorded_launches() {
        let backend = crate::VulkanBackend::new(crate::ContextOptions::default());
        let Ok(ctx) = backend.context() else {
            eprintln!("no Vulkan device: skipped");
            return;
        };
        // Each iteration's update is recorded behind the previous one (nothing reads the
        // array in between): those pending launches do not make the array shared, so no
        // iteration copies it (only the first, whose array `replicate` still names).
        let src = "entry main (n: i64) (k: i64) : []i64 =\n\
                   loop xs = replicate n 0 for i < k do xs with [i % n] = i\n";
        let c = vkad_core::compile("u.fut", src).expect("compiles");
        let i64v = |x| vkad_core::value::Value::Scalar(vkad_core::prim::PrimValue::I64(x));
        let args = vec![i64v(100), i64v(50)];
        let (r, ts) = crate::run_entry_profiled(&ctx, &c, "main", args.clone()).expect("runs");
        assert_eq!(r, c.run_interp("main", args).expect("interpreter"));
        let updates = ts.iter().filter(|t| t.name.starts_with("update")).count();
        assert!(updates <= 51, "{updates} launches for 50 updates");
    }

    const GRADIENT: &str = "def sq (x: f64) : f64 = x * x\n\
def loss [n] (xs: [n]f64) : f64 =\n\
  reduce (+) 0 (map sq xs)\n\
entry primal [n] (xs: [n]f64) : f64 = loss xs\n\
entry grad [n] (xs: [n]f64) : [n]f64 =\n\
  vjp loss xs 1.0\n";

    fn dev() -> vkad_profile::DeviceInfo {
        vkad_profile::DeviceInfo {
            name: "test".into(),
            device_type: "cpu".into(),
            driver: "none".into(),
            subgroup_size: 0,
            timestamps: true,
        }
    }

    fn timing(name: &str, start: u64, end: u64, submission: u64) -> KernelTiming {
        KernelTiming {
            submission,
            bytes: 64,
            groups: [2, 1, 1],
            ..t(name, start, end)
        }
    }

    #[test]
    fn launch_names_parse_back() {
        assert_eq!(
            parse_launch_name("map.2 @ dir/a:b.fut:3:14"),
            Some((
                "map".to_string(),
                Some(Loc {
                    file: "dir/a:b.fut".into(),
                    line: 3,
                    col: 14
                })
            ))
        );
        assert_eq!(
            parse_launch_name("array-literal.1"),
            Some(("array-literal".to_string(), None))
        );
        assert_eq!(parse_launch_name("vkad"), None);
        assert_eq!(parse_launch_name("map.x @ a.fut:1:1"), None);
        assert_eq!(parse_launch_name("map.1 @ a.fut:1"), None);
    }

    #[test]
    fn skeleton_has_stages_unique_scope_ids_and_kinds() {
        let c = vkad_core::compile("g.fut", GRADIENT).expect("compiles");
        let p = skeleton(&c, "g.fut", GRADIENT, dev());
        let stages: Vec<&str> = p.ir.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(stages, ["before AD", "after AD", "optimised"]);
        assert!(p.ir[0].text.contains("= vjp ("), "{}", p.ir[0].text);
        assert!(!p.ir[1].text.contains("= vjp ("), "{}", p.ir[1].text);
        assert_ne!(p.ir[1].text, p.ir[2].text);
        let ids: Vec<u32> = p.all_scopes().iter().map(|s| s.id).collect();
        assert_eq!(ids, (0..ids.len() as u32).collect::<Vec<_>>());
        assert!(p
            .all_scopes()
            .iter()
            .any(|s| s.kind == "vjp" && s.loc.as_ref().is_some_and(|l| l.line == 6)));
        assert!(p.runs.is_empty());
        assert_eq!(run_kind(&c, "primal"), RunKind::Primal);
        assert_eq!(run_kind(&c, "grad"), RunKind::Gradient);
        assert_eq!(run_kind(&c, "nope"), RunKind::Primal);
    }

    #[test]
    fn launches_get_scopes_relative_times_and_renumbered_submissions() {
        let c = vkad_core::compile("g.fut", GRADIENT).expect("compiles");
        let p = skeleton(&c, "g.fut", GRADIENT, dev());
        // The map of `loss` (line 3): its kernel runs the map's lambda, so it belongs to the
        // map scope (opened by a statement of the entry's function).
        let map_loc = p
            .all_scopes()
            .into_iter()
            .find(|s| s.kind == "map")
            .and_then(|s| s.loc.clone())
            .expect("a map scope with a location");
        assert_eq!(map_loc.line, 3);
        let owner = assign_scope(&p, Some("primal"), &map_loc).expect("assigned");
        let owner = p.scope(owner).expect("scope");
        assert_eq!(
            (owner.kind.as_str(), owner.loc.as_ref()),
            ("map", Some(&map_loc))
        );
        let ts = [
            timing(&format!("map.1 @ {map_loc}"), 1000, 1500, 7),
            timing("copy.1", 1500, 1600, 9),
            timing("map.1 @ elsewhere.fut:99:1", 1700, 2000, 7),
        ];
        let run = run_from_timings(&p, "primal", Some("primal"), RunKind::Primal, 5000, &ts);
        let l = &run.launches;
        assert_eq!(l.len(), 3);
        assert_eq!((l[0].start_ns, l[0].end_ns), (0, 500));
        assert_eq!((l[2].start_ns, l[2].end_ns), (700, 1000));
        assert_eq!(
            l.iter().map(|x| x.submission).collect::<Vec<_>>(),
            [0, 1, 0]
        );
        assert_eq!(l[0].scope, Some(owner.id));
        assert_eq!(l[0].what, "map");
        assert_eq!(l[0].loc.as_ref(), Some(&map_loc));
        assert_eq!((l[0].workgroups, l[0].bytes), ([2, 1, 1], 64));
        assert_eq!(
            (l[1].what.as_str(), l[1].loc.as_ref(), l[1].scope),
            ("copy", None, None)
        );
        assert_eq!(l[2].scope, None);
        assert_eq!(run.kernel_ns(), 500 + 100 + 300);
    }

    #[test]
    fn the_entry_function_tree_is_searched_first() {
        let loc = Loc {
            file: "a.fut".into(),
            line: 1,
            col: 1,
        };
        let scope = |id: u32, label: &str, locs: Vec<Loc>| Scope {
            id,
            kind: "function".into(),
            label: label.into(),
            loc: None,
            runs: None,
            checkpoint_elems: String::new(),
            stm_locs: locs,
            children: vec![],
        };
        let mut p = skeleton(
            &vkad_core::compile("a.fut", "entry main (x: f64) : f64 = x\n").expect("compiles"),
            "a.fut",
            "",
            dev(),
        );
        p.scopes = vec![
            scope(0, "function f", vec![loc.clone()]),
            scope(1, "function main", vec![]),
        ];
        let mut inner = scope(2, "map", vec![loc.clone()]);
        inner.kind = "map".into();
        p.scopes[1].children.push(inner);
        assert_eq!(assign_scope(&p, Some("main"), &loc), Some(2));
        assert_eq!(assign_scope(&p, Some("g"), &loc), Some(0));
        assert_eq!(assign_scope(&p, None, &loc), Some(0));
        // A statement of f at `loc` that opens a scope (a vjp at `loc`): the launch is the
        // opened scope's.
        let mut vjp = scope(3, "vjp", vec![]);
        vjp.kind = "vjp".into();
        vjp.loc = Some(loc.clone());
        p.scopes[0].children.push(vjp);
        assert_eq!(assign_scope(&p, Some("f"), &loc), Some(3));
        // A reduce at `loc2` in main: its kernels are main's, not its operator scope's.
        let loc2 = Loc {
            line: 5,
            ..loc.clone()
        };
        p.scopes[1].stm_locs.push(loc2.clone());
        let mut opr = scope(4, "reduce operator", vec![]);
        opr.kind = "operator".into();
        opr.loc = Some(loc2.clone());
        p.scopes[1].children.push(opr);
        assert_eq!(assign_scope(&p, Some("main"), &loc2), Some(1));
        let other = Loc { line: 2, ..loc };
        assert_eq!(assign_scope(&p, Some("main"), &other), None);
    }

    #[test]
    fn profile_runs_on_the_device() {
        let backend = crate::VulkanBackend::new(crate::ContextOptions::default());
        let Ok(ctx) = backend.context() else {
            eprintln!("no Vulkan device: skipped");
            return;
        };
        let c = vkad_core::compile("g.fut", GRADIENT).expect("compiles");
        let mut p = new_profile(&c, "g.fut", GRADIENT, ctx.info());
        let xs = Value::Array(vkad_core::value::ArrayValue::new(
            vec![3],
            vkad_core::value::Buffer::F64(vec![1.0, 2.0, 3.0]),
        ));
        for e in ["primal", "grad"] {
            let (vals, run) = profile_run(&ctx, &c, &p, e, vec![xs.clone()]).expect("runs");
            assert_eq!(
                vals,
                crate::run_entry(&ctx, &c, e, vec![xs.clone()]).expect("runs")
            );
            assert!(!run.launches.is_empty());
            assert!(run
                .launches
                .iter()
                .all(|l| l.loc.is_none() || l.scope.is_some()));
            assert!(run
                .launches
                .iter()
                .all(|l| l.bytes > 0 && l.workgroups[0] > 0));
            assert_eq!(run.launches[0].submission, 0);
            p.runs.push(run);
        }
        assert_eq!(p.runs[1].kind, RunKind::Gradient);
        let back = Profile::from_json(&p.to_json()).expect("reads back");
        assert_eq!(back, p);
        assert!(summary(&p).contains("AD overhead"), "{}", summary(&p));
    }

    #[test]
    fn zero_timestamps_are_noted() {
        assert!(report(&[t("map.1", 0, 0)]).contains("no timestamps"));
        assert!(!report(&[]).contains("no timestamps"));
    }
}
