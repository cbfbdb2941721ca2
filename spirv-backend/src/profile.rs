//! Profiling of runs on the Vulkan backend: names for the kernel launches of an IR statement
//! and summaries of the [`KernelTiming`]s that [`crate::run_entry_profiled`] returns.
//!
//! A launch is named `what.pass @ file:line:col`: `what` is the statement's construct (`map`,
//! `reduce`, `scan`, `hist`, `scatter`, `copy`, `index`, ...), `pass` counts the launches that
//! statement made in this execution of it (a `reduce` makes two, a `scan` three), and the
//! location is the statement's source position.

use vkad_core::ir::{Exp, Soac};
use vkad_vk::KernelTiming;

/// The construct a statement's kernels implement.
pub fn label(e: &Exp) -> &'static str {
    match e {
        Exp::Index(..) => "index",
        Exp::Update(..) => "update",
        Exp::Iota { .. } => "iota",
        Exp::Replicate { .. } => "replicate",
        Exp::ArrayLit { .. } => "array-literal",
        Exp::Concat { .. } => "concat",
        Exp::Copy(..) => "copy",
        Exp::Reshape(..) => "reshape",
        Exp::Rearrange(..) => "transpose",
        Exp::Soac(Soac::Map { .. }) => "map",
        Exp::Soac(Soac::Reduce { .. }) => "reduce",
        Exp::Soac(Soac::Scan { .. }) => "scan",
        Exp::Soac(Soac::Hist { .. }) => "hist",
        Exp::Soac(Soac::Scatter { .. }) => "scatter",
        _ => "kernel",
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, start: u64, end: u64) -> KernelTiming {
        KernelTiming {
            name: name.to_string(),
            start_ns: start,
            end_ns: end,
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
        let xs = vkad_core::value::Value::Array(vkad_core::value::ArrayValue::new(
            vec![3],
            vkad_core::value::Buffer::F32(vec![1.0, 2.0, 3.0]),
        ));
        let (r, ts) = crate::run_entry_profiled(&ctx, &c, "main", vec![xs.clone()]).expect("runs");
        assert_eq!(
            r,
            crate::run_entry(&ctx, &c, "main", vec![xs]).expect("runs")
        );
        let names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "map.1 @ p.fut:1:45",
                "reduce.1 @ p.fut:1:32",
                "reduce.2 @ p.fut:1:32"
            ],
            "{names:?}"
        );
        assert!(ts.iter().all(|t| t.end_ns >= t.start_ns));
    }

    #[test]
    fn zero_timestamps_are_noted() {
        assert!(report(&[t("map.1", 0, 0)]).contains("no timestamps"));
        assert!(!report(&[]).contains("no timestamps"));
    }
}
