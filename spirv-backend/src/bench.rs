//! Benchmarks of the parallel primitives as users run them: each primitive is a small vkad
//! program (source text compiled with [`vkad_core::compile`]) prepared once for the device
//! ([`crate::runtime::DeviceProgram`]) and run with timestamps; its time is the sum of the device timestamps of all kernel
//! launches of one run (uploads and downloads are not counted), the median over repetitions
//! after one warm-up run (which also builds the pipelines).
//!
//! Bandwidth model: each primitive has the bytes per element it must move at least (see
//! [`Primitive::model`]); GB/s is those bytes over the time, and the ratio to `copy` compares
//! that with a plain copy measured on the same device in the same run.
//!
//! Paired ratios: on a shared machine the speed of the device drifts while a benchmark runs,
//! so [`measure`] runs `copy` on the same `n` right before each timed run of the primitive and
//! reports the median of the per-pair ratios ([`Measurement::vs_copy`]); that is what the
//! table's "vs copy" column shows.

use crate::profile::total_ns;
use crate::Context;
use vkad_core::value::{ArrayValue, Buffer, Value};
use vkad_core::Compiled;

/// One benchmarked primitive.
pub struct Primitive {
    /// Short name (the table's first column).
    pub name: &'static str,
    /// The program (entry point `main`).
    pub source: &'static str,
    /// For primitives the source language has no construct for (the sort): the program as IR,
    /// used instead of `source` (which then describes it).
    pub ir: Option<fn() -> vkad_core::ir::Program>,
    /// The traffic model in words, e.g. "read 4 + write 4".
    pub model: &'static str,
    /// Bytes it must move for `n` elements.
    pub bytes: fn(usize) -> f64,
    /// Its arguments for `n` elements.
    pub inputs: fn(usize) -> Vec<Value>,
}

/// A primitive that is not benchmarked, and why.
pub struct Skipped {
    /// Its name.
    pub name: &'static str,
    /// Why.
    pub why: &'static str,
}

/// Deterministic pseudo-random numbers (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, m: u64) -> u64 {
        self.next() % m.max(1)
    }
}

fn arr(b: Buffer) -> Value {
    let n = b.len();
    Value::Array(ArrayValue::new(vec![n], b))
}

fn f32s(n: usize, seed: u64) -> Value {
    let mut r = Rng(seed);
    arr(Buffer::F32(
        (0..n).map(|_| (r.below(1000) as f32) / 1000.0).collect(),
    ))
}

/// `xs` (n elements, a multiple of 16) as 16 rows.
fn rows16(xs: Value) -> Value {
    match xs {
        Value::Array(a) => {
            let n = a.data.len();
            Value::Array(ArrayValue::new(vec![16, n / 16], a.data))
        }
        v => v,
    }
}

fn i32s(n: usize, seed: u64, below: u64) -> Value {
    let mut r = Rng(seed);
    arr(Buffer::I32((0..n).map(|_| r.below(below) as i32).collect()))
}

fn indices(n: usize, bins: usize, seed: u64) -> Value {
    let mut r = Rng(seed);
    arr(Buffer::I64(
        (0..n).map(|_| r.below(bins as u64) as i64).collect(),
    ))
}

fn permutation(n: usize, seed: u64) -> Value {
    let mut r = Rng(seed);
    let mut p: Vec<i64> = (0..n as i64).collect();
    for i in (1..n).rev() {
        let j = r.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    arr(Buffer::I64(p))
}

fn hist_inputs(n: usize, bins: usize) -> Vec<Value> {
    vec![
        Value::Scalar(vkad_core::prim::PrimValue::I64(bins as i64)),
        indices(n, bins, 7),
        i32s(n, 8, 100),
    ]
}

const HIST: &str = "entry main [n] (m: i64) (is: [n]i64) (xs: [n]i32) : []i32 =
  reduce_by_index (replicate m 0) (+) 0 is xs\n";

/// The radix sort benchmarked: 31 one-bit least-significant-digit passes over non-negative
/// `i32` keys, each a map, two scans, a reduce and a scatter.
pub const RADIX_SORT: &str = "def radix_step [n] (xs: [n]i32) (b: i32) : [n]i32 =
  let bits = map (\\x -> (x >> b) & 1) xs
  let nbits = map (\\x -> 1 - x) bits
  let zeros = reduce (+) 0 nbits
  let idx0 = map2 (*) nbits (scan (+) 0 nbits)
  let idx1 = map2 (*) bits (map (+ zeros) (scan (+) 0 bits))
  let idxs = map2 (\\a c -> i64.i32 (a + c - 1)) idx0 idx1
  in scatter (copy xs) idxs xs

entry main [n] (xs: [n]i32) : [n]i32 =
  loop xs for b < 31 do radix_step xs b\n";

/// The benchmarked primitives; `copy` comes first (the others are compared with it).
pub fn primitives() -> Vec<Primitive> {
    vec![
        Primitive {
            name: "copy",
            // The identity map: one kernel that reads and writes every element (`copy xs`
            // of an argument shares its buffer and launches nothing).
            source: "entry main [n] (xs: [n]f32) : [n]f32 = map (\\x -> x) xs\n",
            ir: None,
            model: "read 4 + write 4 (the identity map)",
            bytes: |n| 8.0 * n as f64,
            inputs: |n| vec![f32s(n, 1)],
        },
        Primitive {
            name: "map x*2+1",
            source: "entry main [n] (xs: [n]f32) : [n]f32 = map (\\x -> x * 2 + 1) xs\n",
            ir: None,
            model: "read 4 + write 4",
            bytes: |n| 8.0 * n as f64,
            inputs: |n| vec![f32s(n, 2)],
        },
        Primitive {
            name: "reduce (+)",
            source: "entry main [n] (xs: [n]f32) : f32 = reduce (+) 0 xs\n",
            ir: None,
            model: "read 4",
            bytes: |n| 4.0 * n as f64,
            inputs: |n| vec![f32s(n, 3)],
        },
        Primitive {
            name: "scan (+)",
            source: "entry main [n] (xs: [n]f32) : [n]f32 = scan (+) 0 xs\n",
            ir: None,
            model: "read 4 + write 4",
            bytes: |n| 8.0 * n as f64,
            inputs: |n| vec![f32s(n, 4)],
        },
        Primitive {
            name: "segmented scan (+)",
            source: "entry main [n] (fs: [n]bool) (xs: [n]f32) : [n]f32 =
  let (_, ys) = unzip (scan (\\(fa, xa) (fb, xb) -> (fa || fb, if fb then xb else xa + xb))
                            (false, 0) (zip fs xs))
  in ys\n",
            ir: None,
            model: "read 4 (flag) + 4, write 4",
            bytes: |n| 12.0 * n as f64,
            inputs: |n| {
                let mut r = Rng(5);
                vec![
                    arr(Buffer::Bool((0..n).map(|_| r.below(64) == 0).collect())),
                    f32s(n, 6),
                ]
            },
        },
        Primitive {
            name: "map of reduce (+), 16 rows",
            source: "entry main [m][k] (xss: [m][k]f32) : [m]f32 =
  map (\\row -> reduce (+) 0 row) xss\n",
            ir: None,
            model: "read 4 (segmented: a workgroup per row, or several where 16 cannot fill the device)",
            bytes: |n| 4.0 * n as f64,
            inputs: |n| vec![rows16(f32s(n, 14))],
        },
        Primitive {
            name: "map of scan (+), 16 rows",
            source: "entry main [m][k] (xss: [m][k]f32) : [m][k]f32 =
  map (\\row -> scan (+) 0 row) xss\n",
            ir: None,
            model: "read 4 + write 4 (segmented: a workgroup per row)",
            bytes: |n| 8.0 * n as f64,
            inputs: |n| vec![rows16(f32s(n, 15))],
        },
        Primitive {
            name: "hist (+) 16 bins",
            source: HIST,
            ir: None,
            model: "read 8 (index) + 4",
            bytes: |n| 12.0 * n as f64 + 8.0 * 16.0,
            inputs: |n| hist_inputs(n, 16),
        },
        Primitive {
            name: "hist (+) n/4 bins",
            source: HIST,
            ir: None,
            model: "read 8 (index) + 4, bins read+written: +2",
            bytes: |n| 12.0 * n as f64 + 8.0 * (n / 4) as f64,
            inputs: |n| hist_inputs(n, (n / 4).max(1)),
        },
        Primitive {
            name: "scatter (permutation)",
            source: "entry main [n] (dest: *[n]f32) (is: [n]i64) (xs: [n]f32) : [n]f32 =
  scatter dest is xs\n",
            ir: None,
            model: "read 8 (index) + 4, write 4",
            bytes: |n| 16.0 * n as f64,
            inputs: |n| vec![f32s(n, 9), permutation(n, 10), f32s(n, 11)],
        },
        Primitive {
            name: "hist (+) distinct bins, proved (no atomics)",
            source: "entry main [n] (dest: *[n]f32) (xs: [n]f32) : [n]f32 =
  reduce_by_index dest (+) 0 (map (\\i -> n - 1 - i) (iota n)) xs\n",
            ir: None,
            model: "read 4 + bin read 4 + write 4 (plain read-modify-write: passes::hist_disjoint)",
            bytes: |n| 12.0 * n as f64,
            inputs: |n| vec![f32s(n, 16), f32s(n, 17)],
        },
        Primitive {
            name: "hist (+) distinct bins, unproved (atomics)",
            source: "entry main [n] (dest: *[n]f32) (xs: [n]f32) : [n]f32 =
  reduce_by_index dest (+) 0 (map (\\i -> (n - 1 - i) % n) (iota n)) xs\n",
            ir: None,
            model: "read 4 + bin read 4 + write 4 (the same indices, not provably distinct)",
            bytes: |n| 12.0 * n as f64,
            inputs: |n| vec![f32s(n, 16), f32s(n, 17)],
        },
        Primitive {
            name: "radix sort (i32, 1-bit LSD)",
            source: RADIX_SORT,
            ir: None,
            model: "31 passes x (read 4 + write 4)",
            bytes: |n| 31.0 * 8.0 * n as f64,
            inputs: |n| vec![i32s(n, 12, i32::MAX as u64)],
        },
        Primitive {
            name: "sort_by_key (i64, 20-bit keys)",
            source: "(IR) let (sorted, perm) = sort_by_key(20, keys): 5 passes of 4 bits",
            ir: Some(sort_by_key_program),
            model: "5 passes x (read 16 + write 16: key and permutation)",
            bytes: |n| 5.0 * 32.0 * n as f64,
            inputs: |n| {
                let mut r = Rng(13);
                vec![
                    Value::Scalar(vkad_core::prim::PrimValue::I64(20)),
                    arr(Buffer::I64(
                        (0..n).map(|_| r.below(1 << 20) as i64).collect(),
                    )),
                ]
            },
        },
    ]
}

/// `main [n] (bits: i64) (keys: [n]i64) : ([n]i64, [n]i64) = sort_by_key(bits, keys)`: the
/// sort behind `reduce_by_index` with tuple operators and its adjoint, which the source
/// language does not expose.
pub fn sort_by_key_program() -> vkad_core::ir::Program {
    use vkad_core::ir::builder::{fun_sized, program, var};
    use vkad_core::ir::{Exp, NameSource, Type};
    let i64t = vkad_core::prim::PrimType::I64;
    let mut ns = NameSource::default();
    let n = ns.fresh("n");
    let ty = Type::array(i64t, vec![var(&n)]);
    let t2 = ty.clone();
    let f = fun_sized(
        &mut ns,
        "main",
        true,
        vec![n],
        move |_, _| vec![("bits".into(), Type::Prim(i64t)), ("keys".into(), t2)],
        vec![ty.to_ext(), ty.to_ext()],
        |b, ps| {
            let ty = Type::array(i64t, vec![var(&ps[0])]);
            let r = b.bind_many(
                &[("sorted", ty.clone()), ("perm", ty)],
                Exp::SortByKey {
                    keys: ps[2].clone(),
                    bits: var(&ps[1]),
                },
            );
            vec![var(&r[0]), var(&r[1])]
        },
    );
    program(ns, vec![f])
}

/// What the backend has no primitive for.
pub fn skipped() -> Vec<Skipped> {
    vec![Skipped {
        name: "irregular segmented scan primitive",
        why: "segments of different lengths have no kernel of their own: the `segmented scan (+)` \
              row is `scan` over (flag, value) pairs with a segmented operator; regular \
              segments (a `map` of `scan`) are the `map of scan` row",
    }]
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// The primitive's name.
    pub name: &'static str,
    /// Elements.
    pub n: usize,
    /// Median device time of one run in nanoseconds.
    pub median_ns: u64,
    /// Kernel launches per run.
    pub launches: usize,
    /// Bytes of the traffic model.
    pub bytes: f64,
    /// The median over the timed runs of (this primitive's GB/s) / (the GB/s of a `copy` of
    /// the same `n` run just before it); None for `copy` itself.
    pub vs_copy: Option<f64>,
}

impl Measurement {
    /// Elements per second.
    pub fn elems_per_s(&self) -> f64 {
        self.n as f64 / (self.median_ns.max(1) as f64 * 1e-9)
    }
    /// Model bytes per second, in GB/s (10^9).
    pub fn gb_per_s(&self) -> f64 {
        self.bytes / self.median_ns.max(1) as f64
    }
}

/// Compiles a primitive's program.
pub fn compile(p: &Primitive) -> crate::error::Result<Compiled> {
    use crate::error::Error;
    match p.ir {
        Some(build) => {
            let ir = build();
            vkad_core::ir::check::check_program(&ir).map_err(|e| Error::bug(format!("{e:?}")))?;
            Ok(Compiled {
                sources: Default::default(),
                ir_ad: ir.clone(),
                ir,
                kernels: Default::default(),
                warnings: vec![],
                entry_errors: Default::default(),
                ad_errors: Default::default(),
            })
        }
        None => vkad_core::compile(p.name, p.source).map_err(|e| Error::bug(e.render())),
    }
}

/// Runs `p` on `n` elements once to warm up, then `reps` times; the median of the summed device
/// times of the launches. Unless `p` is `copy`, each timed run is paired with a run of `copy`
/// on `n` elements just before it (see [`Measurement::vs_copy`]). Errors when the device has
/// no timestamps.
pub fn measure(
    ctx: &Context,
    p: &Primitive,
    compiled: &Compiled,
    n: usize,
    reps: usize,
) -> crate::error::Result<Measurement> {
    // Each program is prepared for the device once; the warm-up run makes its kernels.
    let th = crate::runtime::device_thresholds(ctx);
    let prepare = |c: &Compiled| {
        crate::entry_error(c, "main")?;
        crate::runtime::DeviceProgram::new(ctx, &c.ir)
    };
    let timed = |dp: &crate::runtime::DeviceProgram, args: &[Value]| {
        dp.run(ctx, "main", args.to_vec(), &th, true)
            .map(|(_, ts)| ts)
    };
    let inputs = (p.inputs)(n);
    let prog = prepare(compiled)?;
    timed(&prog, &inputs)?;
    let copy = primitives()
        .into_iter()
        .next()
        .filter(|c| c.name == "copy" && p.name != "copy");
    let copy = match copy {
        Some(c) => {
            let cp = prepare(&compile(&c)?)?;
            let ci = (c.inputs)(n);
            timed(&cp, &ci)?;
            Some((c, cp, ci))
        }
        None => None,
    };
    let mut times = Vec::new();
    let mut ratios = Vec::new();
    let mut launches = 0;
    for _ in 0..reps.max(1) {
        let copy_ns = match &copy {
            Some((_, cp, ci)) => Some(total_ns(&timed(cp, ci)?)),
            None => None,
        };
        let ts = timed(&prog, &inputs)?;
        launches = ts.len();
        let t = total_ns(&ts);
        times.push(t);
        if let (Some(cns), Some((c, _, _))) = (copy_ns, &copy) {
            // (bytes / t) / (copy bytes / copy time)
            ratios.push((p.bytes)(n) * cns as f64 / ((c.bytes)(n) * t.max(1) as f64));
        }
    }
    times.sort_unstable();
    let median_ns = times[times.len() / 2];
    if median_ns == 0 {
        return Err(crate::error::Error::NotSupported {
            what: "timestamps on its compute queue".into(),
            loc: None,
            device: Some(ctx.info().name.clone()),
        });
    }
    ratios.sort_by(f64::total_cmp);
    Ok(Measurement {
        name: p.name,
        n,
        median_ns,
        launches,
        bytes: (p.bytes)(n),
        vs_copy: ratios.get(ratios.len() / 2).copied(),
    })
}

/// A markdown table of the measurements; each row's ratio is its paired ratio
/// ([`Measurement::vs_copy`]), or else its GB/s over the GB/s of the `copy` row of the same `n`
/// (when measured).
pub fn markdown_table(ms: &[Measurement]) -> String {
    let mut s = String::from(
        "| primitive | n | launches | time (ms) | Melem/s | GB/s (model) | vs copy |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for m in ms {
        let copy = ms.iter().find(|c| c.name == "copy" && c.n == m.n);
        let ratio = match (m.vs_copy, copy) {
            (Some(r), _) => format!("{:.0} %", 100.0 * r),
            (None, Some(c)) => format!("{:.0} %", 100.0 * m.gb_per_s() / c.gb_per_s()),
            (None, None) => "-".to_string(),
        };
        s.push_str(&format!(
            "| {} | 2^{} | {} | {:.3} | {:.1} | {:.2} | {} |\n",
            m.name,
            m.n.trailing_zeros(),
            m.launches,
            m.median_ns as f64 / 1e6,
            m.elems_per_s() / 1e6,
            m.gb_per_s(),
            ratio
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_compile_and_run_on_the_interpreter() {
        for p in primitives() {
            let c = compile(&p).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let r = c.run_interp("main", (p.inputs)(64));
            assert!(r.is_ok(), "{}: {:?}", p.name, r.err());
        }
    }

    #[test]
    fn the_radix_sort_sorts() {
        let p = primitives()
            .into_iter()
            .find(|p| p.name.starts_with("radix sort"))
            .expect("sort");
        let c = compile(&p).expect("compiles");
        let inputs = (p.inputs)(100);
        let out = c.run_interp("main", inputs.clone()).expect("runs");
        let (Value::Array(a), Value::Array(o)) = (&inputs[0], &out[0]) else {
            panic!("arrays")
        };
        let (Buffer::I32(mut want), Buffer::I32(got)) = (a.data.clone(), o.data.clone()) else {
            panic!("i32")
        };
        want.sort_unstable();
        assert_eq!(got, want);
    }

    #[test]
    fn sort_by_key_sorts() {
        let p = primitives().pop().expect("sort_by_key");
        let c = compile(&p).expect("compiles");
        let inputs = (p.inputs)(1000);
        let out = c.run_interp("main", inputs.clone()).expect("runs");
        let (Value::Array(a), Value::Array(o)) = (&inputs[1], &out[0]) else {
            panic!("arrays")
        };
        let (Buffer::I64(mut want), Buffer::I64(got)) = (a.data.clone(), o.data.clone()) else {
            panic!("i64")
        };
        want.sort_unstable();
        assert_eq!(got, want);
    }

    #[test]
    fn table_ratios_are_relative_to_copy() {
        let m = |name, ns| Measurement {
            name,
            n: 1024,
            median_ns: ns,
            launches: 1,
            bytes: 8192.0,
            vs_copy: None,
        };
        let t = markdown_table(&[m("copy", 1000), m("scan (+)", 2000)]);
        assert!(
            t.contains("| scan (+) | 2^10 | 1 | 0.002 | 512.0 | 4.10 | 50 % |"),
            "{t}"
        );
        // A paired ratio wins over the copy row.
        let paired = Measurement {
            vs_copy: Some(0.8),
            ..m("reduce (+)", 2000)
        };
        let t = markdown_table(&[m("copy", 1000), paired]);
        assert!(
            t.contains("| reduce (+) | 2^10 | 1 | 0.002 | 512.0 | 4.10 | 80 % |"),
            "{t}"
        );
    }
}
