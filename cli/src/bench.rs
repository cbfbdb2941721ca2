//! `vkad bench FILE.fut`: times a program's entry points on the Vulkan device, like
//! `futhark bench`.
//!
//! Each entry point (those given with `-e`, or every entry point that has a dataset) runs on
//! the first dataset of its test block (`-- ==`) that is not tagged `nobench` or `disable` and
//! does not expect an error: one warm-up run of each, then `--reps` rounds of one timed run of
//! each (interleaved, so that a machine whose speed drifts slows every entry alike). Per entry
//! the mean and the minimum of the wall time (host, uploads and downloads included) and of the
//! kernel time are printed, with the kernel launches, the copies and fills recorded as transfer
//! commands, and the submissions of a run. The kernel time is the device time of the run's
//! submissions, each timed by one pair of device timestamps around its commands (a pair per
//! launch would slow the run it measures: on lavapipe each timestamp costs about 25 µs, see
//! `vkad_vk::Timing`). When there are primal and gradient entry points (see
//! `vkad_spirv::profile::run_kind`), the AD overhead is printed too: the mean kernel time of
//! the gradient entries divided by that of the primal entries. `--profile-out` writes a profile
//! holding one more run of each entry, made after the timed runs with a timestamp pair around
//! every launch.

use super::{
    compile_while_device_opens, device_of, read_source, write_profile, BenchProgram, Failure,
    VkFlags,
};
use std::path::Path;
use std::process::ExitCode;
use vkad_core::testing::random::{fnv1a, random_value};
use vkad_core::testing::spec::{
    parse_program_test, ExpectedResult, GenValue, TestAction, TestRun, Values,
};
use vkad_core::value::Value;
use vkad_profile::RunKind;

/// Why an entry point could not be timed.
#[derive(Debug, thiserror::Error)]
enum AttemptError {
    /// Its dataset could not be read.
    #[error("{0}")]
    Input(String),
    /// The backend failed (an entry the backend does not support is skipped, not failed).
    #[error(transparent)]
    Run(#[from] vkad_spirv::error::Error),
}

/// The largest random input generated, in elements (as `vkad test`).
const MAX_RANDOM_ELEMS: usize = 1 << 26;

/// The dataset an entry point is timed on.
struct Dataset {
    entry: String,
    /// The index of its test block (for the random seed).
    block: usize,
    run: TestRun,
}

/// The first usable dataset of each entry point, in order of the test blocks.
fn datasets(source: &str, file: &Path) -> Result<Vec<Dataset>, Failure> {
    let spec = parse_program_test(source)
        .map_err(|e| Failure(format!("error: {}:{e}", file.display())))?;
    let mut out: Vec<Dataset> = Vec::new();
    let Some(spec) = spec else { return Ok(out) };
    let TestAction::RunCases { cases, .. } = spec.action else {
        return Ok(out);
    };
    for (block, case) in cases.iter().enumerate() {
        let usable = case.runs.iter().find(|r| {
            !r.tags.iter().any(|t| t == "nobench" || t == "disable")
                && !matches!(r.expected, ExpectedResult::RunTimeFailure(_))
        });
        let Some(run) = usable else { continue };
        for e in &case.entries {
            if !out.iter().any(|d| &d.entry == e) {
                out.push(Dataset {
                    entry: e.clone(),
                    block,
                    run: run.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// The input values of a dataset (data files are relative to the program's directory).
fn load(file: &Path, d: &Dataset) -> Result<Vec<Value>, String> {
    match &d.run.input {
        Values::Values(v) => Ok(v.clone()),
        Values::File(f) => {
            let path = file.parent().unwrap_or(Path::new(".")).join(f);
            let bytes =
                std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let bytes = if f.ends_with(".gz") || vkad_core::values::gzip::is_gzip(&bytes) {
                vkad_core::values::gzip::gunzip(&bytes)
                    .map_err(|e| format!("{}: {e}", path.display()))?
            } else {
                bytes
            };
            vkad_core::values::parse_values(&bytes).map_err(|e| format!("{}:{e}", path.display()))
        }
        Values::Random(gens) => {
            let seed = fnv1a(format!("{}:{}:{}", file.display(), d.block, d.run.index).as_bytes());
            gens.iter()
                .enumerate()
                .map(|(k, g)| match g {
                    GenValue::Fixed(v) => Ok(v.clone()),
                    GenValue::Random { shape, elem } => {
                        random_value(shape, *elem, seed.wrapping_add(k as u64), MAX_RANDOM_ELEMS)
                    }
                })
                .collect()
        }
        Values::Script(_) => Err("not supported: script input".to_string()),
    }
}

/// The timings of one entry point.
struct Timed {
    entry: String,
    dataset: String,
    kind: RunKind,
    wall_ns: Vec<u64>,
    kernel_ns: Vec<u64>,
    launches: usize,
    /// Copies and fills of a run recorded as transfer commands rather than kernel launches.
    transfers: usize,
    /// Submissions of a run (each one wait of the host for the device).
    submissions: usize,
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len().max(1) as f64
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

/// `vkad bench FILE.fut`: see the module documentation.
pub(crate) fn bench_program(args: BenchProgram) -> Result<ExitCode, Failure> {
    let Some(file) = args.file else {
        return Err(Failure(
            "error: `vkad bench` needs a program (`vkad bench FILE.fut`) or `primitives`".into(),
        ));
    };
    let source = read_source(&file)?;
    let vk = VkFlags {
        device: args.device,
        no_pipeline_cache: args.no_pipeline_cache,
    };
    let (compiled, ctx) = compile_while_device_opens(&file, Some(vk))?;
    let all = datasets(&source, &file)?;
    let chosen: Vec<&Dataset> = if args.entries.is_empty() {
        all.iter().collect()
    } else {
        let names = compiled.entry_names();
        let mut v = Vec::new();
        for e in &args.entries {
            if !names.contains(e) {
                return Err(Failure(format!(
                    "error: {} has no entry point `{e}` (entry points: {})",
                    file.display(),
                    names.join(", ")
                )));
            }
            let d = all.iter().find(|d| &d.entry == e).ok_or_else(|| {
                Failure(format!(
                    "error: entry point `{e}` has no dataset in the test blocks of {}",
                    file.display()
                ))
            })?;
            v.push(d);
        }
        v
    };
    if chosen.is_empty() {
        return Err(Failure(format!(
            "error: {} has no datasets to benchmark (add a `-- ==` test block with an input)",
            file.display()
        )));
    }
    let reps = args.reps.max(1);
    let ctx = device_of(ctx)?;
    let info = ctx.info();
    let path = file.display().to_string();
    // The profile's skeleton (IR, AD report, scopes), made only when a profile is written.
    let profile = args.profile_out.as_ref().map(|out| {
        (
            out,
            vkad_spirv::profile::new_profile(&compiled, &path, &source, info),
        )
    });
    println!(
        "{path} on {} ({}, driver {}): {reps} timed runs per entry point, interleaved, after one warm-up each",
        info.name, info.device_type, info.driver
    );
    if info.timestamp_bits == 0 {
        println!("(the device's queue has no timestamps: kernel times are 0)");
    }
    let mut timed: Vec<Timed> = Vec::new();
    let mut failed = false;
    // The program is prepared for the device once, outside the timings: every timed run
    // reuses its kernels.
    let prepared = vkad_spirv::runtime::DeviceProgram::new(&ctx, &compiled.ir)
        .map_err(|e| Failure(format!("error: {e}")))?;
    let thresholds = vkad_spirv::runtime::tuned_thresholds(&ctx, &args.thresholds)
        .map_err(|e| Failure(format!("error: {e}")))?;
    // A timed run: the device time of each submission, no timestamps between launches.
    let run_once = |entry: &str,
                    input: Vec<Value>|
     -> Result<
        (Vec<Value>, u64, vkad_spirv::runtime::RunStats),
        vkad_spirv::error::Error,
    > {
        vkad_spirv::entry_error(&compiled, entry)?;
        let opts = vkad_spirv::runtime::RunOptions {
            device_time: true,
            ..Default::default()
        };
        let start = std::time::Instant::now();
        let (values, out) = prepared.run_host(&ctx, entry, input, &thresholds, &opts)?;
        let wall_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        Ok((values, wall_ns, out.stats))
    };
    // A profiled run, with a timestamp pair around every launch, attributed to the scopes of
    // `skeleton`.
    let profile_once = |skeleton: &vkad_profile::Profile,
                        entry: &str,
                        input: Vec<Value>|
     -> Result<vkad_profile::Run, vkad_spirv::error::Error> {
        let pipelines = ctx.cached_kernels();
        let start = std::time::Instant::now();
        let (_, timings) = prepared.run(&ctx, entry, input, &thresholds, true)?;
        let wall_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let fun = compiled.ir_ad.entry(entry).map(|f| f.name.to_string());
        let kind = vkad_spirv::profile::run_kind(&compiled, entry);
        let mut run = vkad_spirv::profile::run_from_timings(
            skeleton,
            entry,
            fun.as_deref(),
            kind,
            wall_ns,
            &timings,
        );
        // It follows the warm-up and timed runs: warm, unless it made pipelines after all.
        run.cold = Some(ctx.cached_kernels() > pipelines);
        Ok(run)
    };
    // Every entry warms up first; then the timed runs go round the entries (one run of each
    // per round), so that a machine whose speed drifts (a shared CPU) slows every entry alike
    // and the AD overhead compares runs made under the same conditions.
    struct Active<'d> {
        input: Vec<Value>,
        t: Timed,
        d: &'d Dataset,
    }
    let report = |d: &Dataset, e: AttemptError, failed: &mut bool| match e {
        AttemptError::Run(e) if e.is_not_supported() => {
            eprintln!("{path}: entry `{}`: skipped: {e}", d.entry);
        }
        e => {
            eprintln!("{path}: entry `{}`: {e}", d.entry);
            *failed = true;
        }
    };
    let mut active: Vec<Active> = Vec::new();
    for d in chosen {
        let warm = || -> Result<Vec<Value>, AttemptError> {
            let input = load(&file, d).map_err(AttemptError::Input)?;
            run_once(&d.entry, input.clone())?;
            Ok(input)
        };
        match warm() {
            Ok(input) => active.push(Active {
                input,
                t: Timed {
                    entry: d.entry.clone(),
                    dataset: d.run.description.clone(),
                    kind: vkad_spirv::profile::run_kind(&compiled, &d.entry),
                    wall_ns: Vec::new(),
                    kernel_ns: Vec::new(),
                    launches: 0,
                    transfers: 0,
                    submissions: 0,
                },
                d,
            }),
            Err(e) => report(d, e, &mut failed),
        }
    }
    for _ in 0..reps {
        let mut k = 0;
        while k < active.len() {
            let a = &mut active[k];
            match run_once(&a.d.entry, a.input.clone()) {
                Ok((_, wall_ns, stats)) => {
                    a.t.wall_ns.push(wall_ns);
                    a.t.kernel_ns.push(stats.device_ns);
                    a.t.launches = stats.launches;
                    a.t.transfers = stats.transfers;
                    a.t.submissions = stats.submissions;
                    k += 1;
                }
                Err(e) => {
                    let a = active.remove(k);
                    report(a.d, AttemptError::Run(e), &mut failed);
                }
            }
        }
    }
    let mut runs = Vec::new();
    for a in active {
        if let Some((_, skeleton)) = &profile {
            // (Its timed runs passed: a failure here is the profiled run's own.)
            match profile_once(skeleton, &a.d.entry, a.input) {
                Ok(run) => runs.push(run),
                Err(e) => {
                    eprintln!("{path}: entry `{}`: the profiled run: {e}", a.d.entry);
                    failed = true;
                }
            }
        }
        timed.push(a.t);
    }
    print!("{}", table(&timed));
    if let Some(line) = overhead(&timed) {
        println!("{line}");
    }
    if let Some((out, mut p)) = profile {
        p.runs.extend(runs);
        write_profile(&p, out)?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The results table (times in microseconds).
fn table(timed: &[Timed]) -> String {
    let head = [
        "entry",
        "kind",
        "dataset",
        "wall mean",
        "wall min",
        "kernels mean",
        "kernels min",
        "launches",
        "transfers",
        "submissions",
    ];
    let rows: Vec<[String; 10]> = timed
        .iter()
        .map(|t| {
            [
                t.entry.clone(),
                match t.kind {
                    RunKind::Primal => "primal".into(),
                    RunKind::Gradient => "gradient".into(),
                },
                t.dataset.clone(),
                us(mean(&t.wall_ns)),
                us(t.wall_ns.iter().copied().min().unwrap_or(0) as f64),
                us(mean(&t.kernel_ns)),
                us(t.kernel_ns.iter().copied().min().unwrap_or(0) as f64),
                t.launches.to_string(),
                t.transfers.to_string(),
                t.submissions.to_string(),
            ]
        })
        .collect();
    let mut w = head.map(str::len);
    for r in &rows {
        for (k, c) in r.iter().enumerate() {
            w[k] = w[k].max(c.chars().count());
        }
    }
    let line = |cells: [&str; 10]| {
        let mut s = String::new();
        for (k, c) in cells.iter().enumerate() {
            let pad = w[k] - c.chars().count();
            if k < 3 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
            s.push_str("  ");
        }
        format!("{}\n", s.trim_end())
    };
    let mut s = String::from("\n");
    s.push_str(&line(head));
    for r in &rows {
        s.push_str(&line(r.each_ref().map(String::as_str)));
    }
    s.push_str("(times in microseconds)\n");
    s
}

/// The AD overhead line, when there are primal and gradient entries.
fn overhead(timed: &[Timed]) -> Option<String> {
    let of = |k: RunKind| -> Option<(f64, String)> {
        let ts: Vec<&Timed> = timed.iter().filter(|t| t.kind == k).collect();
        if ts.is_empty() {
            return None;
        }
        let m = ts.iter().map(|t| mean(&t.kernel_ns)).sum::<f64>() / ts.len() as f64;
        let names: Vec<&str> = ts.iter().map(|t| t.entry.as_str()).collect();
        Some((m, names.join(", ")))
    };
    let (g, gn) = of(RunKind::Gradient)?;
    let (p, pn) = of(RunKind::Primal)?;
    Some(if p > 0.0 {
        format!(
            "AD overhead: {:.2}× (mean kernel time of gradient [{gn}] {} us / primal [{pn}] {} us)",
            g / p,
            us(g),
            us(p)
        )
    } else {
        "AD overhead: unknown (the primal kernel time is 0: no timestamps)".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasets_take_the_first_usable_run_of_each_entry() {
        let src =
            "-- ==\n-- entry: a b\n-- input { 1 } output { 1 }\n-- input { 2 } output { 2 }\n\
                   -- ==\n-- entry: b c\n-- nobench input { 3 } output { 3 }\n\
                   -- input { 4 } error: x\n-- input { 5 } output { 5 }\n\
                   entry a (x: i32) = x\nentry b (x: i32) = x\nentry c (x: i32) = x\n";
        let ds = datasets(src, Path::new("p.fut")).unwrap_or_else(|e| panic!("{}", e.0));
        let got: Vec<(&str, usize, usize)> = ds
            .iter()
            .map(|d| (d.entry.as_str(), d.block, d.run.index))
            .collect();
        assert_eq!(got, [("a", 0, 0), ("b", 0, 0), ("c", 1, 2)]);
        let v = load(Path::new("p.fut"), &ds[2]).expect("inline values");
        assert_eq!(v.len(), 1);
        assert!(datasets("entry main (x: i32) = x\n", Path::new("p.fut"))
            .unwrap_or_else(|e| panic!("{}", e.0))
            .is_empty());
    }

    #[test]
    fn overhead_is_gradient_over_primal_kernel_time() {
        let t = |entry: &str, kind, k: u64| Timed {
            entry: entry.into(),
            dataset: "#0".into(),
            kind,
            wall_ns: vec![10 * k],
            kernel_ns: vec![k, k],
            launches: 3,
            transfers: 1,
            submissions: 1,
        };
        let ts = [
            t("loss", RunKind::Primal, 2000),
            t("main", RunKind::Gradient, 7000),
        ];
        let line = overhead(&ts).expect("both kinds");
        assert!(line.starts_with("AD overhead: 3.50×"), "{line}");
        assert!(line.contains("[main]") && line.contains("[loss]"), "{line}");
        assert!(overhead(&ts[..1]).is_none());
        assert!(overhead(&[
            t("loss", RunKind::Primal, 0),
            t("main", RunKind::Gradient, 5)
        ])
        .is_some_and(|l| l.contains("unknown")));
        let tab = table(&ts);
        assert!(tab.contains("gradient") && tab.contains("7.0"), "{tab}");
    }
}
