//! A test runner compatible with `futhark test`: it reads the `-- ==` test blocks of `.fut`
//! files ([`spec`]), runs each entry point on each dataset with a [`Backend`] ([`runner`]),
//! and compares the results with the expected values the way Futhark does ([`compare`]).
//!
//! Counting: a *test* is one entry point on one dataset (or one compile-error block, or one
//! property). [`Summary::passed`] and [`Summary::failed`] count tests; [`Summary::skipped`]
//! counts tests that were not run: those of files tagged `disable`, `notest` or
//! `no_<backend>` (all their tests), datasets with such a run tag, and tests that need
//! something vkad does not support (`script input`, `auto output`, property tests, and the
//! datasets of an entry point whose lowering failed with a `not supported: ...` error, unless
//! [`RunOptions::unsupported_fails`]). Each skip for lack of support is reported. Data files
//! (`input @ file`) may be text or binary, and gzip-compressed (`.gz`). When a file does not compile, each of its tests counts as failed.
//! `structure` and `warning:` lines are accepted and ignored. Datasets tagged `compiled` are
//! run as well (they only exclude Futhark's slow interpreter).

pub mod compare;
pub mod nests;
pub mod random;
pub mod runner;
pub mod spec;

pub use compare::{compare_values, Mismatch, TOLERANCE};
pub use runner::{run_file, run_paths, run_paths_with, RunOptions};
pub use spec::{parse_program_test, ProgramTest, SpecError};

use crate::diag::Diagnostic;
use crate::value::Value;
use crate::{CompileError, Compiled};
use std::io;
use std::path::{Path, PathBuf};

/// Why a backend could not run an entry point. The message of each variant is what a user
/// reads (`file:line:col: ...` where the location is known); a test's expected `error:` is
/// matched against it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The program uses something the backend (or its device) cannot run yet: tests count it
    /// as skipped unless [`RunOptions::unsupported_fails`].
    #[error("{0}")]
    NotSupported(String),
    /// The program failed on its input: bounds, shapes, division by zero, an assertion, a
    /// size that overflows, ...
    #[error("{0}")]
    Runtime(String),
    /// The device failed: out of memory, lost, a timeout, a validation error.
    #[error("{0}")]
    Device(String),
    /// A bug in vkad.
    #[error("{0}")]
    Internal(String),
}

impl RunError {
    /// The message, without the variant.
    pub fn message(&self) -> &str {
        match self {
            RunError::NotSupported(m)
            | RunError::Runtime(m)
            | RunError::Device(m)
            | RunError::Internal(m) => m,
        }
    }
}

impl From<crate::interp::RuntimeError> for RunError {
    /// `file:line:col: message` (the RuntimeError's Display).
    fn from(e: crate::interp::RuntimeError) -> RunError {
        if e.not_supported {
            RunError::NotSupported(e.to_string())
        } else {
            RunError::Runtime(e.to_string())
        }
    }
}

/// Something that can run an entry point of a compiled program.
pub trait Backend {
    /// A short name, used for `no_<name>` tags.
    fn name(&self) -> &str;
    /// Run `entry` on `args`.
    fn run(
        &self,
        compiled: &Compiled,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Vec<Value>, RunError>;
    /// Compile a program (`name` is the path of its file: errors report it, and imports are
    /// relative to it). By default the whole [`crate::compile`] pipeline, with imports read
    /// from the file system ([`crate::modules::FileLoader`]).
    fn compile(&self, name: &str, text: &str) -> Result<Compiled, CompileError> {
        crate::compile_with(name, text, &mut crate::modules::FileLoader)
    }
    /// Whether the backend has what the run tag `needs_<feature>` asks for; datasets it lacks
    /// are skipped. The features: `denorm_f16`, `denorm_f32`, `denorm_f64` (subnormal floats
    /// of that width are kept as operands and results, not flushed to zero). By default, every
    /// feature.
    fn supports(&self, feature: &str) -> bool {
        let _ = feature;
        true
    }
    /// Why `entry` cannot run on this backend, if it cannot: by default, any of
    /// [`Compiled::entry_errors`].
    fn entry_error<'c>(&self, compiled: &'c Compiled, entry: &str) -> Option<&'c Diagnostic> {
        compiled.entry_errors.get(entry)
    }
}

/// The AD oracle: the reference interpreter running [`Compiled::ir_ad`], the program before
/// the AD pass, with the `jvp`/`vjp` nodes evaluated dynamically
/// ([`crate::interp::dynad`]). Entry points whose AD transformation failed run here too.
pub struct OracleBackend;

impl Backend for OracleBackend {
    fn name(&self) -> &str {
        "oracle"
    }
    fn run(
        &self,
        compiled: &Compiled,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Vec<Value>, RunError> {
        Ok(compiled.run_oracle(entry, args)?)
    }
    fn entry_error<'c>(&self, compiled: &'c Compiled, entry: &str) -> Option<&'c Diagnostic> {
        if compiled.ad_errors.contains_key(entry) {
            None
        } else {
            compiled.entry_errors.get(entry)
        }
    }
}

/// The reference interpreter ([`Compiled::run_interp`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct InterpBackend;

impl Backend for InterpBackend {
    fn name(&self) -> &str {
        "interp"
    }
    fn run(
        &self,
        compiled: &Compiled,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Vec<Value>, RunError> {
        Ok(compiled.run_interp(entry, args)?)
    }
}

/// The kernel IR ([`Compiled::run_kernels`]): the program fused and flattened into host code
/// around segmented operations, run on the kernel IR's evaluator with the given tuning
/// thresholds. Its results must be those of the interpreter.
#[derive(Clone, Debug, Default)]
pub struct KernelsBackend {
    pub thresholds: crate::seg::Thresholds,
}

impl Backend for KernelsBackend {
    fn name(&self) -> &str {
        "kernels"
    }
    fn run(
        &self,
        compiled: &Compiled,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Vec<Value>, RunError> {
        Ok(compiled
            .run_kernels(entry, args, &self.thresholds)
            .map(|(values, _)| values)?)
    }
}

/// The counts of a test run (see the module documentation for what is counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Summary {
    /// No test failed.
    pub fn success(&self) -> bool {
        self.failed == 0
    }
    /// Add another summary's counts to this one.
    pub fn add(&mut self, other: Summary) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "fut") {
            out.push(p);
        }
    }
    Ok(())
}

/// The `.fut` files to test: each path that is a file, and the `.fut` files under each path
/// that is a directory (recursively, sorted by path).
pub fn collect_fut_files(paths: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no such file or directory", p.display()),
            ));
        }
    }
    Ok(out)
}
