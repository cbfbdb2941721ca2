//! `vkad`: run, test, check and inspect vkad programs.
//!
//! Exit status: 0 on success, 1 for an error in the program or its input (or a failing test),
//! 2 for a usage error (clap's own exit code for bad arguments).

use clap::{Parser, Subcommand, ValueEnum};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vkad_core::testing::{Backend, InterpBackend, KernelsBackend, OracleBackend};
use vkad_core::value::Value;

mod bench;

#[derive(Parser)]
#[command(
    name = "vkad",
    version,
    about = "Automatic differentiation of nested-parallel array programs (a Futhark subset)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The largest array (and AD-oracle tape) the interpreter and the AD oracle may allocate,
    /// in bytes or with a suffix `k`, `M`, `G`, `T` (also from `VKAD_MAX_MEMORY`). Without it,
    /// a large allocation is checked against the memory the machine has available; either way
    /// running out is the run-time error `out of memory: needs N bytes ...`.
    #[arg(long, global = true, value_name = "SIZE", value_parser = vkad_core::mem::parse_size)]
    max_memory: Option<u64>,
}

/// Where programs run.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendKind {
    /// The reference interpreter (exact semantics; the oracle for other backends).
    Interp,
    /// The interpreter evaluating `jvp`/`vjp` dynamically (traced values and a tape) instead of
    /// running the AD transformation's code: the oracle for AD.
    Oracle,
    /// The kernel IR on the interpreter: the program fused and flattened into host code around
    /// segmented operations (`vkad dump-ir --kernels` shows it), each kernel run thread by
    /// thread. Its results must be the interpreter's.
    Kernels,
    /// The kernel IR on a Vulkan device (`--device N` picks one; lavapipe runs on the CPU):
    /// the flattened program's kernels generated as SPIR-V and run by the Vulkan runtime.
    Vulkan,
}

/// The Vulkan context the flags of a command ask for.
#[derive(Clone, Copy, Debug)]
struct VkFlags {
    /// `--device N`.
    device: Option<usize>,
    /// `--no-pipeline-cache`.
    no_pipeline_cache: bool,
}

impl VkFlags {
    fn options(self) -> vkad_spirv::ContextOptions {
        vkad_spirv::ContextOptions {
            device: self.device,
            validation: std::env::var("VKAD_VALIDATION").is_ok_and(|v| v == "1"),
            pipeline_cache: if self.no_pipeline_cache {
                vkad_vk::PipelineCacheMode::Off
            } else {
                // The user's cache directory, or what VKAD_PIPELINE_CACHE says.
                vkad_vk::PipelineCacheMode::UserDir
            },
        }
    }
}

impl BackendKind {
    /// The backend; for Vulkan the device is opened now, so that a missing driver is reported
    /// once (with what to install) instead of once per test.
    /// `settings` are `--threshold NAME=VALUE`s, for the kernel-IR backends only.
    fn backend(self, vk: VkFlags, settings: &[String]) -> Result<Box<dyn Backend>, Failure> {
        self.backend_on(vk, settings, None)
    }

    /// [`BackendKind::backend`] on a device already opened (or failed to open) for it.
    fn backend_on(
        self,
        vk: VkFlags,
        settings: &[String],
        opened: OpenedDevice,
    ) -> Result<Box<dyn Backend>, Failure> {
        let bad = |e: vkad_core::seg::ThresholdSettingError| Failure(format!("error: {e}"));
        if !settings.is_empty() && !matches!(self, BackendKind::Kernels | BackendKind::Vulkan) {
            return Err(Failure(
                "error: --threshold needs a kernel-IR backend (`-b kernels` or `-b vulkan`)".into(),
            ));
        }
        match self {
            BackendKind::Interp => Ok(Box::new(InterpBackend)),
            BackendKind::Oracle => Ok(Box::new(OracleBackend)),
            BackendKind::Kernels => {
                let mut b = KernelsBackend::default();
                for s in settings {
                    b.thresholds.set(s).map_err(bad)?;
                }
                Ok(Box::new(b))
            }
            BackendKind::Vulkan => {
                let mut b = vkad_spirv::VulkanBackend::tuned(vk.options(), settings.to_vec())
                    .map_err(bad)?;
                match opened {
                    Some(ctx) => b = b.with_context(ctx?),
                    None => {
                        b.context().map_err(|e| Failure(format!("error: {e}")))?;
                    }
                }
                Ok(Box::new(b))
            }
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run an entry point: arguments are read from stdin as Futhark values (text or binary),
    /// results are printed one per line.
    Run {
        file: PathBuf,
        /// The entry point to run.
        #[arg(short, long, default_value = "main")]
        entry: String,
        /// The backend to run on (`vulkan` needs a Vulkan driver: lavapipe from
        /// `mesa-vulkan-drivers` where there is no GPU; `interp` needs nothing).
        #[arg(short, long, value_enum, default_value = "vulkan")]
        backend: BackendKind,
        /// The Vulkan device to use (an index as `vulkaninfo --summary` lists them).
        #[arg(long)]
        device: Option<usize>,
        /// Write results in Futhark's binary data format instead of text.
        #[arg(long)]
        binary_output: bool,
        /// After the results, print the device time of every kernel launch per kernel to
        /// stderr (`-b vulkan`), or with `-b kernels` the number of kernels the kernel IR ran
        /// (by kind), their threads and the host's array primitives.
        #[arg(long)]
        profile: bool,
        /// Write the run's profile to FILE (JSON: a vkad profile that chrome://tracing and
        /// Perfetto open as a trace; `vkad profile FILE` summarises it). `-b vulkan` only.
        #[arg(long, value_name = "FILE")]
        profile_out: Option<PathBuf>,
        /// Do not read or write the on-disk Vulkan pipeline cache.
        ///
        /// The cache (by default in `$XDG_CACHE_HOME/vkad/pipelines`, else
        /// `~/.cache/vkad/pipelines`) lets a later process skip compiling pipelines.
        /// `VKAD_PIPELINE_CACHE=0` also turns it off, `VKAD_PIPELINE_CACHE=DIR` moves it.
        #[arg(long)]
        no_pipeline_cache: bool,
        /// A tuning value for the kernel-IR backends (repeatable): `loop=N` / `nest=N` /
        /// `acc_red=N` set the default threshold of host loops / map nests / reductions of
        /// accumulator updates (`nest=N` also of contended nests, `contended_nest=N` only of
        /// them: by default a GPU always flattens those), `seq_chunk=N` the iterations per
        /// launch of one-thread loops, `NAME=N` one threshold (`vkad dump-ir --kernels` prints
        /// their names). `loop=0` always takes the flattened version of a host loop,
        /// `loop=9223372036854775807` the one-thread version.
        #[arg(long = "threshold", value_name = "NAME=VALUE")]
        thresholds: Vec<String>,
    },
    /// Run the `-- ==` test blocks of .fut files (directories are searched recursively).
    Test {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The backend to run on (`vulkan` needs a Vulkan driver: lavapipe from
        /// `mesa-vulkan-drivers` where there is no GPU; `interp` needs nothing).
        #[arg(short, long, value_enum, default_value = "vulkan")]
        backend: BackendKind,
        /// The Vulkan device to use (an index as `vulkaninfo --summary` lists them).
        #[arg(long)]
        device: Option<usize>,
        /// Do not read or write the on-disk Vulkan pipeline cache.
        ///
        /// The cache (by default in `$XDG_CACHE_HOME/vkad/pipelines`, else
        /// `~/.cache/vkad/pipelines`) lets a later process skip compiling pipelines.
        /// `VKAD_PIPELINE_CACHE=0` also turns it off, `VKAD_PIPELINE_CACHE=DIR` moves it.
        #[arg(long)]
        no_pipeline_cache: bool,
        /// A tuning value for the kernel-IR backends (repeatable): `loop=N` / `nest=N` /
        /// `acc_red=N` set the default threshold of host loops / map nests / reductions of
        /// accumulator updates (`nest=N` also of contended nests, `contended_nest=N` only of
        /// them: by default a GPU always flattens those), `seq_chunk=N` the iterations per
        /// launch of one-thread loops, `NAME=N` one threshold (`vkad dump-ir --kernels` prints
        /// their names). `loop=0` always takes the flattened version of a host loop,
        /// `loop=9223372036854775807` the one-thread version.
        #[arg(long = "threshold", value_name = "NAME=VALUE")]
        thresholds: Vec<String>,
    },
    /// Parse and type-check a program, reporting errors and warnings.
    Check { file: PathBuf },
    /// Print the program's IR after lowering, simplification and differentiation.
    DumpIr {
        file: PathBuf,
        /// Print the IR as lowered, before simplification.
        #[arg(long)]
        unoptimised: bool,
        /// Print the simplified IR before differentiation (`jvp`/`vjp` nodes still in it).
        #[arg(long, conflicts_with = "unoptimised")]
        before_ad: bool,
        /// Print the AD report instead of the IR: per function, the tree of scopes, how many
        /// times each scope's forward sweep runs after AD and simplification, and the
        /// checkpoint memory of each loop (elements, as a formula of the sizes).
        #[arg(long, conflicts_with_all = ["unoptimised", "before_ad"])]
        ad_report: bool,
        /// Print the kernel IR instead: host code around segmented operations (SegMap, SegRed,
        /// SegScan, SegHist), after fusion and flattening.
        #[arg(long, conflicts_with_all = ["unoptimised", "before_ad", "ad_report"])]
        kernels: bool,
        /// With `--kernels`: print the kernel IR as the Vulkan backend runs it on this device
        /// (an index as `vkad devices` lists them; `default` for the default device), after
        /// the passes that depend on the device (accumulators turned into histograms, sorts
        /// lowered), for the whole program (`vkad run` flattens only the entry it runs, whose
        /// kernels are the same but may be numbered differently).
        #[arg(long, requires = "kernels", value_name = "N|default")]
        vulkan: Option<String>,
    },
    /// List the Vulkan devices with their type, API version, driver, subgroup size and features.
    Devices,
    /// Write the SPIR-V modules an entry point's kernels use to DIR (`<n>_<kernel>.spv`, plus
    /// `index.txt`). The modules are generated from the program's kernel IR without running
    /// it (every variant any input sizes could launch on the device); with `--input FILE` the
    /// entry also runs once and the modules it makes are added. Every module is validated.
    Spirv {
        file: PathBuf,
        /// The entry point.
        #[arg(short, long, default_value = "main")]
        entry: String,
        /// The directory to write to (created if missing).
        #[arg(short, long)]
        output: PathBuf,
        /// Also run the entry on the arguments in FILE and add the modules that run makes
        /// beyond those generated from the program alone (normally none).
        #[arg(long)]
        input: Option<PathBuf>,
        /// The Vulkan device to use (an index as `vulkaninfo --summary` lists them).
        #[arg(long)]
        device: Option<usize>,
        /// Do not read or write the on-disk Vulkan pipeline cache.
        ///
        /// The cache (by default in `$XDG_CACHE_HOME/vkad/pipelines`, else
        /// `~/.cache/vkad/pipelines`) lets a later process skip compiling pipelines.
        /// `VKAD_PIPELINE_CACHE=0` also turns it off, `VKAD_PIPELINE_CACHE=DIR` moves it.
        #[arg(long)]
        no_pipeline_cache: bool,
    },
    /// Benchmarks on the Vulkan device: `vkad bench FILE.fut` times a program's entry points
    /// on their datasets; `vkad bench primitives` times vkad's primitives.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Bench {
        #[command(subcommand)]
        what: Option<BenchKind>,
        #[command(flatten)]
        program: BenchProgram,
    },
    /// Print the summary of a profile written by `vkad run --profile-out` or `vkad bench`: its
    /// runs, the top kernels, the device time per scope and the AD overhead.
    Profile {
        file: PathBuf,
        /// How many kernels to list.
        #[arg(long, default_value_t = 10)]
        top: usize,
    },
}

/// `vkad bench FILE.fut`: like `futhark bench`.
#[derive(clap::Args)]
struct BenchProgram {
    /// The program: each entry point runs on the first dataset of its test block (`-- ==`).
    #[arg(required = true)]
    file: Option<PathBuf>,
    /// The entry points to time (repeatable; default: every entry point with a dataset).
    #[arg(short, long = "entry", value_name = "ENTRY")]
    entries: Vec<String>,
    /// Timed runs per entry point, after one warm-up run.
    #[arg(long, default_value_t = 10)]
    reps: usize,
    /// Write a profile with one timed run (the fastest) of each entry point to FILE.
    #[arg(long, value_name = "FILE")]
    profile_out: Option<PathBuf>,
    /// The Vulkan device to use.
    #[arg(long)]
    device: Option<usize>,
    /// Do not read or write the on-disk Vulkan pipeline cache.
    ///
    /// The cache (by default in `$XDG_CACHE_HOME/vkad/pipelines`, else
    /// `~/.cache/vkad/pipelines`) lets a later process skip compiling pipelines.
    /// `VKAD_PIPELINE_CACHE=0` also turns it off, `VKAD_PIPELINE_CACHE=DIR` moves it.
    #[arg(long)]
    no_pipeline_cache: bool,
    /// A tuning value (repeatable), as for `vkad run --threshold`: `loop=N`, `nest=N`,
    /// `seq_chunk=N` or `NAME=N` (`vkad dump-ir --kernels` prints the names).
    #[arg(long = "threshold", value_name = "NAME=VALUE")]
    thresholds: Vec<String>,
}

/// What `vkad bench` measures.
#[derive(Subcommand)]
enum BenchKind {
    /// Time copy, map, reduce, scan, segmented scan, histograms, scatter and a radix sort (vkad
    /// programs) at sizes 2^a..2^b with device timestamps; prints a markdown table.
    Primitives {
        /// Sizes as `a..b`: n = 2^a, 2^(a+1), ..., 2^b elements.
        #[arg(long, default_value = "16..22")]
        sizes: String,
        /// Timed repetitions per size (the median is reported), after one warm-up run.
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// The Vulkan device to use.
        #[arg(long)]
        device: Option<usize>,
        /// Do not read or write the on-disk Vulkan pipeline cache.
        ///
        /// The cache (by default in `$XDG_CACHE_HOME/vkad/pipelines`, else
        /// `~/.cache/vkad/pipelines`) lets a later process skip compiling pipelines.
        /// `VKAD_PIPELINE_CACHE=0` also turns it off, `VKAD_PIPELINE_CACHE=DIR` moves it.
        #[arg(long)]
        no_pipeline_cache: bool,
        /// Only the primitives whose name contains one of these (comma-separated).
        #[arg(long)]
        only: Option<String>,
    },
}

/// An error to report: the message is already formatted.
struct Failure(String);

fn read_source(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure(format!("error: cannot read {}: {e}", path.display())))
}

fn main() -> ExitCode {
    // The compiler's passes and the interpreter recurse over syntax trees and IR bodies, which
    // may nest thousands of levels deep (`vkad_core::syntax::parser::MAX_TREE_DEPTH`): run on
    // a thread with the compiler's large stack (address space only), which also drops them.
    let spawned = std::thread::Builder::new()
        .name("vkad".into())
        .stack_size(vkad_core::COMPILER_STACK)
        .spawn(run_cli);
    match spawned {
        Ok(h) => h
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        Err(_) => run_cli(),
    }
}

fn run_cli() -> ExitCode {
    let cli = Cli::parse();
    let max_memory = match cli.max_memory {
        Some(m) => Some(m),
        None => match std::env::var("VKAD_MAX_MEMORY") {
            Ok(v) => match vkad_core::mem::parse_size(&v) {
                Ok(m) => Some(m),
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "error: VKAD_MAX_MEMORY: {e}");
                    return ExitCode::from(2);
                }
            },
            Err(_) => None,
        },
    };
    vkad_core::mem::set_memory_limit(max_memory);
    match run(cli.command) {
        Ok(code) => code,
        Err(Failure(msg)) => {
            let _ = writeln!(std::io::stderr(), "{}", msg.trim_end());
            ExitCode::from(1)
        }
    }
}

fn compile(path: &Path) -> Result<vkad_core::Compiled, Failure> {
    compile_for(path, None)
}

/// [`compile`], for running entry point `only` alone when given
/// ([`vkad_core::compile_file_for_entry`]: the other entry points are not differentiated).
fn compile_for(path: &Path, only: Option<&str>) -> Result<vkad_core::Compiled, Failure> {
    let compiled = match only {
        Some(entry) => vkad_core::compile_file_for_entry(path, entry),
        None => vkad_core::compile_file(path),
    }
    .map_err(|e| Failure(e.render()))?;
    if !compiled.warnings.is_empty() {
        eprintln!("{}", compiled.render_warnings().trim_end());
    }
    Ok(compiled)
}

fn run(cmd: Command) -> Result<ExitCode, Failure> {
    match cmd {
        Command::Run {
            file,
            entry,
            backend,
            device,
            binary_output,
            profile,
            profile_out,
            no_pipeline_cache,
            thresholds,
        } => {
            let vk = VkFlags {
                device,
                no_pipeline_cache,
            };
            let kernel_stats =
                profile && matches!(backend, BackendKind::Kernels) && profile_out.is_none();
            if (profile || profile_out.is_some())
                && !matches!(backend, BackendKind::Vulkan)
                && !kernel_stats
            {
                return Err(Failure(format!(
                    "error: {} needs the Vulkan backend (`-b vulkan`)",
                    if profile_out.is_some() {
                        "--profile-out"
                    } else {
                        "--profile"
                    }
                )));
            }
            // The Vulkan device opens (driver libraries load: tens to hundreds of
            // milliseconds) while the program compiles and the input is read.
            let opens_device = matches!(backend, BackendKind::Vulkan);
            let read_input = |compiled: &vkad_core::Compiled| {
                if !compiled.entry_names().contains(&entry) {
                    let names = compiled.entry_names().join(", ");
                    return Err(Failure(format!(
                        "error: {} has no entry point `{entry}` (entry points: {})",
                        file.display(),
                        if names.is_empty() {
                            "none".to_string()
                        } else {
                            names
                        }
                    )));
                }
                let mut input = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut input)
                    .map_err(|e| Failure(format!("error: cannot read standard input: {e}")))?;
                vkad_core::values::parse_values(&input)
                    .map_err(|e| Failure(format!("error: invalid input value: {e}")))
            };
            // A profile keeps the whole program's IR (and AD report); a plain run compiles
            // only the entry it runs.
            let profiling = profile || profile_out.is_some();
            let (compiled, args, ctx) = compile_and_while_device_opens(
                (&file, (!profiling).then_some(entry.as_str())),
                opens_device.then_some(vk),
                read_input,
            )?;
            if kernel_stats {
                let (results, stats) = compiled
                    .run_kernels(&entry, args, &{
                        let mut th = vkad_core::seg::Thresholds::default();
                        for s in &thresholds {
                            th.set(s).map_err(|e| Failure(format!("error: {e}")))?;
                        }
                        th
                    })
                    .map_err(|e| Failure(format!("error: {e}")))?;
                print_results(&results, binary_output)
                    .map_err(|e| Failure(format!("error: cannot write output: {e}")))?;
                eprintln!(
                    "kernels: {} ({}), threads: {}, host array primitives: {}",
                    stats.kernels,
                    stats
                        .by_kind
                        .iter()
                        .map(|(k, n)| format!("{n} {k}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    stats.threads,
                    stats.builtins
                );
                return Ok(ExitCode::SUCCESS);
            }
            if profile || profile_out.is_some() {
                let source = read_source(&file)?;
                return run_profiled(
                    &compiled,
                    (&file, &source),
                    &entry,
                    args,
                    (device_of(ctx)?, &thresholds),
                    binary_output,
                    (profile, profile_out.as_deref()),
                );
            }
            let results = backend
                .backend_on(vk, &thresholds, ctx)?
                .run(&compiled, &entry, args)
                .map_err(|e| Failure(format!("error: {e}")))?;
            print_results(&results, binary_output)
                .map_err(|e| Failure(format!("error: cannot write output: {e}")))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Test {
            paths,
            backend,
            device,
            no_pipeline_cache,
            thresholds,
        } => {
            let backend = backend.backend(
                VkFlags {
                    device,
                    no_pipeline_cache,
                },
                &thresholds,
            )?;
            let mut stdout = std::io::stdout();
            let summary = vkad_core::testing::run_paths(&paths, backend.as_ref(), &mut stdout)
                .map_err(|e| Failure(format!("error: {e}")))?;
            Ok(if summary.success() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Check { file } => {
            let checked = vkad_core::check_file(&file).map_err(|e| Failure(e.render()))?;
            if !checked.warnings.is_empty() {
                eprintln!("{}", checked.render_warnings().trim_end());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::DumpIr {
            file,
            unoptimised,
            before_ad,
            ad_report,
            kernels,
            vulkan,
        } => {
            if let Some(dev) = vulkan {
                let device = match dev.as_str() {
                    "default" => None,
                    n => Some(n.parse::<usize>().map_err(|_| {
                        Failure(format!(
                            "error: --vulkan takes a device index or `default`, not `{n}`"
                        ))
                    })?),
                };
                let (compiled, ctx) = compile_while_device_opens(
                    &file,
                    Some(VkFlags {
                        device,
                        no_pipeline_cache: true,
                    }),
                )?;
                let ctx = device_of(ctx)?;
                let program = vkad_spirv::Program::compile(&ctx, &compiled)
                    .map_err(|e| Failure(format!("error: {e}")))?;
                print!(
                    "{}",
                    vkad_core::seg::print::program_to_string(&program.device_program().kernels)
                );
                for e in compiled.entry_errors.values() {
                    eprintln!("{}", e.render(&compiled.sources).trim_end());
                }
                return Ok(ExitCode::SUCCESS);
            }
            if kernels {
                let compiled = compile(&file)?;
                print!(
                    "{}",
                    vkad_core::seg::print::program_to_string(compiled.kernels())
                );
                for e in compiled.entry_errors.values() {
                    eprintln!("{}", e.render(&compiled.sources).trim_end());
                }
                return Ok(ExitCode::SUCCESS);
            }
            if ad_report {
                let compiled = compile(&file)?;
                let report = vkad_core::ad::report::ad_report(&compiled.ir_ad, &compiled.ir);
                print!("{report}");
                return Ok(ExitCode::SUCCESS);
            }
            let (ir, errors) = if unoptimised {
                let checked = vkad_core::check_file(&file).map_err(|e| Failure(e.render()))?;
                let lowered = vkad_core::lower::lower_program(&checked.ast, &checked.sources);
                let errors: Vec<String> = lowered
                    .entry_errors
                    .iter()
                    .map(|(_, d)| d.render(&checked.sources))
                    .collect();
                (lowered.program, errors)
            } else {
                let compiled = compile(&file)?;
                let errors = compiled
                    .entry_errors
                    .values()
                    .map(|d| d.render(&compiled.sources))
                    .collect();
                (
                    if before_ad {
                        compiled.ir_ad
                    } else {
                        compiled.ir
                    },
                    errors,
                )
            };
            print!("{}", vkad_core::ir::print::program_to_string(&ir));
            for e in errors {
                eprintln!("{}", e.trim_end());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Devices => devices(),
        Command::Spirv {
            file,
            entry,
            output,
            input,
            device,
            no_pipeline_cache,
        } => spirv(
            &file,
            &entry,
            &output,
            input.as_deref(),
            VkFlags {
                device,
                no_pipeline_cache,
            },
        ),
        Command::Bench {
            what:
                Some(BenchKind::Primitives {
                    sizes,
                    reps,
                    device,
                    no_pipeline_cache,
                    only,
                }),
            ..
        } => bench_primitives(
            &sizes,
            reps,
            VkFlags {
                device,
                no_pipeline_cache,
            },
            only.as_deref(),
        ),
        Command::Bench {
            what: None,
            program,
        } => bench::bench_program(program),
        Command::Profile { file, top } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| Failure(format!("error: cannot read {}: {e}", file.display())))?;
            let p = vkad_profile::Profile::from_json(&text)
                .map_err(|e| Failure(format!("error: {}: {e}", file.display())))?;
            print!("{}", vkad_profile::summary_with(&p, top));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn vulkan_context(vk: VkFlags) -> Result<std::sync::Arc<vkad_spirv::Context>, Failure> {
    vkad_spirv::VulkanBackend::new(vk.options())
        .context()
        .map_err(|e| Failure(format!("error: {e}")))
}

/// A device that [`compile_while_device_opens`] opened, or why it could not.
type OpenedDevice = Option<Result<std::sync::Arc<vkad_spirv::Context>, Failure>>;

/// Compiles `file` while the Vulkan device of `vk` (if any) opens on another thread: loading
/// the driver costs tens of milliseconds on lavapipe and hundreds on some GPU drivers, about
/// what compiling a program costs. An error in the program is reported before one of the
/// device.
fn compile_while_device_opens(
    file: &Path,
    vk: Option<VkFlags>,
) -> Result<(vkad_core::Compiled, OpenedDevice), Failure> {
    let (compiled, (), ctx) = compile_and_while_device_opens((file, None), vk, |_| Ok(()))?;
    Ok((compiled, ctx))
}

/// [`compile_while_device_opens`] (for running entry `only` alone when given, see
/// [`compile_for`]), then `also` of the compiled program (reading the input) on this thread
/// before the device is waited for, so that a driver that takes long to open (tens of
/// milliseconds on lavapipe, hundreds on some GPU drivers) overlaps both.
fn compile_and_while_device_opens<T>(
    (file, only): (&Path, Option<&str>),
    vk: Option<VkFlags>,
    also: impl FnOnce(&vkad_core::Compiled) -> Result<T, Failure>,
) -> Result<(vkad_core::Compiled, T, OpenedDevice), Failure> {
    std::thread::scope(|s| {
        let opening = vk.map(|vk| s.spawn(move || vulkan_context(vk)));
        let compiled = compile_for(file, only);
        let other = compiled.as_ref().ok().map(also);
        let ctx = opening.map(|h| {
            h.join().unwrap_or_else(|_| {
                Err(Failure("error: opening the Vulkan device panicked".into()))
            })
        });
        let compiled = compiled?;
        let other =
            other.unwrap_or_else(|| Err(Failure("error: internal: no input read".into())))?;
        Ok((compiled, other, ctx))
    })
}

/// The device [`compile_while_device_opens`] opened (an internal error if it was not asked to).
fn device_of(ctx: OpenedDevice) -> Result<std::sync::Arc<vkad_spirv::Context>, Failure> {
    ctx.unwrap_or_else(|| {
        Err(Failure(
            "error: internal: no Vulkan device was opened".into(),
        ))
    })
}

/// `vkad run --profile` / `--profile-out FILE`: the results, then (`--profile`) a table of
/// kernel times on stderr and (`--profile-out`) the profile written to FILE.
fn run_profiled(
    compiled: &vkad_core::Compiled,
    (file, source): (&Path, &str),
    entry: &str,
    args: Vec<Value>,
    (ctx, settings): (std::sync::Arc<vkad_spirv::Context>, &[String]),
    binary_output: bool,
    (table, out): (bool, Option<&Path>),
) -> Result<ExitCode, Failure> {
    use vkad_spirv::profile;
    let thresholds = vkad_spirv::runtime::tuned_thresholds(&ctx, settings)
        .map_err(|e| Failure(format!("error: {e}")))?;
    let mut p = profile::new_profile(compiled, &file.display().to_string(), source, ctx.info());
    let pipelines = ctx.cached_kernels();
    let start = std::time::Instant::now();
    let (results, timings) =
        vkad_spirv::run_entry_kernels(&ctx, compiled, entry, args, &thresholds, true)
            .map_err(|e| Failure(format!("error: {e}")))?;
    let wall_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    print_results(&results, binary_output)
        .map_err(|e| Failure(format!("error: cannot write output: {e}")))?;
    if table {
        eprint!(
            "profile on {} (device time per kernel):\n{}",
            ctx.info().name,
            profile::report(&timings)
        );
    }
    if let Some(out) = out {
        let fun = compiled.ir_ad.entry(entry).map(|f| f.name.to_string());
        let mut run = profile::run_from_timings(
            &p,
            entry,
            fun.as_deref(),
            profile::run_kind(compiled, entry),
            wall_ns,
            &timings,
        );
        // The only run of a fresh context: cold unless every pipeline was made before it.
        run.cold = Some(ctx.cached_kernels() > pipelines);
        p.runs.push(run);
        write_profile(&p, out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a profile's JSON to `out`.
fn write_profile(p: &vkad_profile::Profile, out: &Path) -> Result<(), Failure> {
    std::fs::write(out, p.to_json())
        .map_err(|e| Failure(format!("error: cannot write {}: {e}", out.display())))
}

/// `vkad bench primitives`.
fn bench_primitives(
    sizes: &str,
    reps: usize,
    vk: VkFlags,
    only: Option<&str>,
) -> Result<ExitCode, Failure> {
    use vkad_spirv::bench;
    let bad = || {
        Failure(format!(
            "error: --sizes must be `a..b` with 0 <= a <= b <= 30, not `{sizes}`"
        ))
    };
    let (a, b) = sizes.split_once("..").ok_or_else(bad)?;
    let (a, b): (u32, u32) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| bad())?,
    );
    if a > b || b > 30 {
        return Err(bad());
    }
    let ctx = vulkan_context(vk)?;
    let prims: Vec<bench::Primitive> = bench::primitives()
        .into_iter()
        .filter(|p| {
            p.name == "copy" || only.is_none_or(|o| o.split(',').any(|w| p.name.contains(w.trim())))
        })
        .collect();
    println!(
        "Device: {} ({}, driver {}); {} timed runs per size after one warm-up, median of the \
         summed kernel timestamps.\n",
        ctx.info().name,
        ctx.info().device_type,
        ctx.info().driver,
        reps.max(1)
    );
    println!("Traffic model (bytes per element):");
    for p in &prims {
        println!(
            "- {}: {} ({:.2} B/elem at n = 2^{b})",
            p.name,
            p.model,
            (p.bytes)(1usize << b) / (1u64 << b) as f64
        );
    }
    let mut results = Vec::new();
    let mut notes = Vec::new();
    for p in &prims {
        let compiled = bench::compile(p).map_err(|e| Failure(format!("error: {e}")))?;
        for k in a..=b {
            let n = 1usize << k;
            let start = std::time::Instant::now();
            match bench::measure(&ctx, p, &compiled, n, reps) {
                Ok(m) => results.push(m),
                Err(e) => {
                    notes.push(format!("- {} at 2^{k}: skipped: {e}", p.name));
                    break;
                }
            }
            eprintln!("{} 2^{k}: {:.1} s", p.name, start.elapsed().as_secs_f64());
        }
    }
    println!();
    print!("{}", bench::markdown_table(&results));
    for s in bench::skipped() {
        notes.push(format!("- {}: {}", s.name, s.why));
    }
    if !notes.is_empty() {
        println!("\nNotes:");
        for n in notes {
            println!("{n}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `vkad spirv`: runs the entry once with recording on and writes its modules.
fn spirv(
    file: &Path,
    entry: &str,
    out: &Path,
    input: Option<&Path>,
    vk: VkFlags,
) -> Result<ExitCode, Failure> {
    let compiled = compile(file)?;
    if !compiled.entry_names().iter().any(|n| n == entry) {
        return Err(Failure(format!(
            "error: {} has no entry point `{entry}`",
            file.display()
        )));
    }
    let args = match input {
        Some(p) => {
            let data = std::fs::read(p)
                .map_err(|e| Failure(format!("error: cannot read {}: {e}", p.display())))?;
            Some(
                vkad_core::values::parse_values(&data)
                    .map_err(|e| Failure(format!("error: invalid input value: {e}")))?,
            )
        }
        None => None,
    };
    let backend = vkad_spirv::VulkanBackend::new(vk.options());
    let ctx = backend
        .context()
        .map_err(|e| Failure(format!("error: {e}")))?;
    let modules = vkad_spirv::generate_entry(&ctx, &compiled, entry, args)
        .map_err(|e| Failure(format!("error: {e}")))?;
    let written = vkad_spirv::write_modules(out, entry, &modules)
        .map_err(|e| Failure(format!("error: {e}")))?;
    for p in written {
        println!("{}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `vkad devices`: one block per Vulkan device; no loader or no device is an error (exit 1).
fn devices() -> Result<ExitCode, Failure> {
    let list = vkad_vk::list_devices().map_err(|e| Failure(format!("error: {e}")))?;
    let mut out = String::new();
    for d in &list {
        let (major, minor, patch) = d.api_version;
        let flags = [
            ("int64", d.int64),
            ("int64-atomics", d.int64_atomics),
            ("float64", d.float64),
            ("float16", d.float16),
            ("int16", d.int16),
            ("int8", d.int8),
            ("storage8", d.storage_buffer8),
            ("storage16", d.storage_buffer16),
            ("f32-atomic-add", d.float32_atomic_add),
            ("f64-atomic-add", d.float64_atomic_add),
            ("vulkan-memory-model", d.vulkan_memory_model),
            ("buffer-device-address", d.buffer_device_address),
            ("ieee-f16", d.signed_zero_inf_nan_preserve[0]),
            ("ieee-f32", d.signed_zero_inf_nan_preserve[1]),
            ("ieee-f64", d.signed_zero_inf_nan_preserve[2]),
            ("denorm-f16", d.denorm_preserve[0]),
            ("denorm-f32", d.denorm_preserve[1]),
            ("denorm-f64", d.denorm_preserve[2]),
        ];
        let subgroup_ops = [
            ("arithmetic", d.subgroup_arithmetic),
            ("ballot", d.subgroup_ballot),
            ("shuffle", d.subgroup_shuffle),
            ("vote", d.subgroup_vote),
        ];
        let on = |fs: &[(&str, bool)]| {
            let v: Vec<&str> = fs.iter().filter(|f| f.1).map(|f| f.0).collect();
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(" ")
            }
        };
        out.push_str(&format!(
            "{}: {}\n  type: {}, Vulkan {major}.{minor}.{patch}, driver: {}\n  \
             subgroup size {} (operations: {})\n  features: {}\n  \
             limits: storage buffer {} bytes, allocation {} bytes, workgroup {}, \
             shared memory {} bytes, timestamp period {} ns\n",
            d.index,
            d.name,
            d.device_type,
            d.driver,
            d.subgroup_size,
            on(&subgroup_ops),
            on(&flags),
            d.max_storage_buffer_range,
            d.max_allocation,
            d.max_workgroup_size,
            d.max_shared_memory,
            d.timestamp_period_ns,
        ));
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn print_results(results: &[Value], binary: bool) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for v in results {
        if binary {
            let mut buf = Vec::new();
            vkad_core::values::write_binary(v, &mut buf);
            out.write_all(&buf)?;
        } else {
            vkad_core::values::write_text_line(v, &mut out)?;
        }
    }
    out.flush()
}
