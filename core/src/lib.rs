//! vkad-core: the vkad language (a subset of Futhark), its SOAC IR, the simplifier and the
//! reference interpreter.
//!
//! The pipeline, as [`compile`] runs it:
//!
//! 1. [`syntax::parser`] parses the prelude (`prelude.fut`) and the program into an [`syntax::ast`];
//!    [`modules`] elaborates modules and imports away (loading imported files through a
//!    [`modules::Loader`]), leaving a flat program of value and type declarations.
//! 2. [`typecheck`] infers and checks types, annotating the AST.
//! 3. [`lower`] turns the typed AST into the first-order [`ir`], inlining higher-order functions.
//! 4. [`passes`] simplify the IR (DCE, copy propagation, constant folding, CSE, inlining) and
//!    hoist invariant `iota`/`rearrange` out of lambdas; [`ir::check`] verifies the IR between
//!    passes in tests. [`ad::transform()`] then replaces the `jvp`/`vjp` nodes that lowering left
//!    by derivative code, the IR is simplified again and accumulations become reductions where
//!    they can ([`passes::accumulations_to_reductions`]).
//! 5. For kernels, [`flatten::extract_kernels`] fuses SOACs ([`passes::fusion`]) and flattens
//!    nested parallelism into the kernel IR ([`seg`]): host code around segmented operations,
//!    which [`seg::eval`] runs on the interpreter and [`seg::check`] verifies.
//! 6. [`interp`] runs an entry point on [`value::Value`]s; [`values`] reads and writes Futhark's
//!    value formats; [`testing`] runs Futhark-style `-- ==` test blocks.
//!
//! The kernel IR ([`seg`]: host code around segmented operations) runs on the same interpreter
//! with [`seg::eval::run_entry`], which also returns [`seg::eval::Stats`]: the kernels (by
//! kind) and threads a GPU runtime would launch, and the host's array primitives.

pub mod ad;
pub mod builtins;
pub mod diag;
pub mod flatten;
pub mod interp;
pub mod ir;
pub mod lower;
pub mod mem;
pub mod modules;
pub mod passes;
pub mod prim;
pub mod primops;
pub mod seg;
pub mod syntax;
pub mod testing;
pub mod typecheck;
pub mod value;
pub mod values;

use diag::{Diagnostic, Diagnostics, SourceMap};
use std::collections::BTreeMap;

/// The prelude: the library functions written in vkad itself.
pub const PRELUDE: &str = include_str!("prelude.fut");
/// The file name the prelude is reported under.
pub const PRELUDE_NAME: &str = "<prelude>";

/// A failed compilation: the diagnostics and the sources needed to render them.
#[derive(Debug)]
pub struct CompileError {
    pub sources: SourceMap,
    pub diagnostics: Diagnostics,
}

impl CompileError {
    /// The diagnostics rendered with file:line:col and caret snippets.
    pub fn render(&self) -> String {
        self.diagnostics.render(&self.sources)
    }
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for CompileError {}

/// A parsed and type-checked program.
#[derive(Debug)]
pub struct Checked {
    pub sources: SourceMap,
    /// The prelude's declarations followed by the program's, with types filled in.
    pub ast: syntax::ast::Program,
    pub warnings: Vec<Diagnostic>,
}

impl Checked {
    pub fn render_warnings(&self) -> String {
        Diagnostics(self.warnings.clone()).render(&self.sources)
    }
}

/// A program lowered to IR and simplified.
#[derive(Debug)]
pub struct Compiled {
    pub sources: SourceMap,
    /// The final IR: simplified, differentiated, simplified again.
    pub ir: ir::Program,
    /// The simplified IR before [`ad::transform()`]: the `jvp`/`vjp` nodes are still there. The
    /// AD oracle ([`Compiled::run_oracle`]) runs this.
    pub ir_ad: ir::Program,
    pub warnings: Vec<Diagnostic>,
    /// The kernel IR ([`flatten::extract_kernels`]), made on first use.
    pub kernels: std::sync::OnceLock<seg::Program>,
    /// Entry points that could not be lowered (e.g. they use a construct that is not supported
    /// yet), with the reason. Running one reports this error; the other entries work.
    pub entry_errors: BTreeMap<String, Diagnostic>,
    /// The entries of [`Compiled::entry_errors`] whose error comes from the AD pass: they are
    /// in [`Compiled::ir_ad`], so the AD oracle can still run them.
    pub ad_errors: BTreeMap<String, Diagnostic>,
}

impl Compiled {
    pub fn render_warnings(&self) -> String {
        Diagnostics(self.warnings.clone()).render(&self.sources)
    }
    /// The names of all entry points, in source order, including those that failed to lower.
    pub fn entry_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .ir
            .entries()
            .map(|f| f.entry.as_ref().unwrap().name.to_string())
            .collect();
        names.extend(self.entry_errors.keys().cloned());
        names
    }
    /// Run an entry point on the reference interpreter.
    pub fn run_interp(
        &self,
        entry: &str,
        args: Vec<value::Value>,
    ) -> Result<Vec<value::Value>, interp::RuntimeError> {
        if let Some(d) = self.entry_errors.get(entry) {
            // Like every runtime error, the message carries no `error:` prefix (callers add
            // their own).
            return Err(interp::RuntimeError::of_entry(d, &self.sources));
        }
        interp::run_entry(&self.ir, entry, args)
    }
    /// The program in the kernel IR: [`Compiled::ir`] fused and flattened
    /// ([`flatten::extract_kernels`]), made on first use.
    pub fn kernels(&self) -> &seg::Program {
        self.kernels
            .get_or_init(|| flatten::extract_kernels(&self.ir))
    }
    /// Run an entry point through the kernel IR ([`Compiled::kernels`]) on the kernel IR's
    /// evaluator, with the given tuning thresholds; also returns what ran (kernels launched).
    pub fn run_kernels(
        &self,
        entry: &str,
        args: Vec<value::Value>,
        thresholds: &seg::Thresholds,
    ) -> Result<(Vec<value::Value>, seg::eval::Stats), interp::RuntimeError> {
        if let Some(d) = self.entry_errors.get(entry) {
            return Err(interp::RuntimeError::of_entry(d, &self.sources));
        }
        seg::eval::run_entry(self.kernels(), entry, args, thresholds)
    }
    /// Run an entry point on the AD oracle: the interpreter on [`Compiled::ir_ad`], evaluating
    /// `jvp`/`vjp` dynamically. Entries whose AD transformation failed run too.
    pub fn run_oracle(
        &self,
        entry: &str,
        args: Vec<value::Value>,
    ) -> Result<Vec<value::Value>, interp::RuntimeError> {
        if !self.ad_errors.contains_key(entry) {
            if let Some(d) = self.entry_errors.get(entry) {
                return Err(interp::RuntimeError::of_entry(d, &self.sources));
            }
        }
        interp::run_entry_oracle(&self.ir_ad, entry, args)
    }
}

/// The stack of the threads that parse, check, lower and compile a program: the passes recurse
/// over syntax trees and IR bodies, which may nest [`syntax::parser::MAX_DEPTH`] deep (generated
/// code does). Address space only: the pages a run does not touch are never committed.
pub const COMPILER_STACK: usize = 1 << 30;

/// Runs `f` on a thread with a [`COMPILER_STACK`]-byte stack (on this thread if none can be
/// started), and returns its result; a panic in `f` is resumed here.
pub(crate) fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let mut job = Some(f);
    let done = std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("vkad-compile".into())
            .stack_size(COMPILER_STACK)
            .spawn_scoped(s, || job.take().map(|f| f()));
        spawned.ok().map(|h| h.join())
    });
    match done {
        Some(Ok(Some(r))) => r,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        _ => match job.take() {
            Some(f) => f(),
            None => unreachable!("the compiler's thread took the job and returned nothing"),
        },
    }
}

/// Parse and type-check `text` (reported as file `name`), after the prelude (on a thread with
/// a large stack, [`COMPILER_STACK`]). The program is text without a file: an `import` in it is
/// an error (see [`check_file`] and [`check_with`]).
pub fn check(name: &str, text: &str) -> Result<Checked, CompileError> {
    check_with(name, text, &mut modules::NoImports)
}

/// [`check`] with imports found by `loader`.
pub fn check_with(
    name: &str,
    text: &str,
    loader: &mut (dyn modules::Loader + Send),
) -> Result<Checked, CompileError> {
    on_big_stack(|| check_here(name, text, loader))
}

/// Parse and type-check the program in file `path`, with its imports read relative to it.
pub fn check_file(path: &std::path::Path) -> Result<Checked, CompileError> {
    let (name, text) = read_program(path)?;
    check_with(&name, &text, &mut modules::FileLoader)
}

/// The text of the program file `path` (with the name it is reported under), or the error.
fn read_program(path: &std::path::Path) -> Result<(String, String), CompileError> {
    let name = path.display().to_string();
    std::fs::read_to_string(path)
        .map(|text| (name.clone(), text))
        .map_err(|e| {
            let mut sources = SourceMap::default();
            let file = sources.add(name.as_str(), "");
            CompileError {
                sources,
                diagnostics: Diagnostics(vec![Diagnostic::error(
                    diag::Span::new(file, 0, 0),
                    format!("cannot read {name}: {e}"),
                )]),
            }
        })
}

fn check_here(
    name: &str,
    text: &str,
    loader: &mut dyn modules::Loader,
) -> Result<Checked, CompileError> {
    let mut sources = SourceMap::default();
    let prelude_id = sources.add(PRELUDE_NAME, PRELUDE);
    let file_id = sources.add(name, text);
    let parsed = syntax::parser::parse_program(PRELUDE, prelude_id).and_then(|prelude| {
        let user = syntax::parser::parse_program(text, file_id)?;
        modules::elaborate(&prelude, &user, name, &mut sources, loader)
    });
    let mut ast = match parsed {
        Ok(p) => p,
        Err(diagnostics) => {
            return Err(CompileError {
                sources,
                diagnostics,
            })
        }
    };
    match typecheck::check_program(&mut ast, &sources) {
        Ok(warnings) => Ok(Checked {
            sources,
            ast,
            warnings,
        }),
        Err(diagnostics) => Err(CompileError {
            sources,
            diagnostics,
        }),
    }
}

/// Parse, type-check, lower, simplify, differentiate ([`ad::transform()`]) and simplify again.
/// The program is text without a file: an `import` in it is an error (see [`compile_file`] and
/// [`compile_with`]).
pub fn compile(name: &str, text: &str) -> Result<Compiled, CompileError> {
    compile_with(name, text, &mut modules::NoImports)
}

/// [`compile`] with imports found by `loader`.
pub fn compile_with(
    name: &str,
    text: &str,
    loader: &mut (dyn modules::Loader + Send),
) -> Result<Compiled, CompileError> {
    on_big_stack(|| compile_here(name, text, loader, None))
}

/// Compile the program in file `path`, with its imports read relative to it.
pub fn compile_file(path: &std::path::Path) -> Result<Compiled, CompileError> {
    let (name, text) = read_program(path)?;
    compile_with(&name, &text, &mut modules::FileLoader)
}

/// [`compile_file`] for running entry point `entry` alone (`vkad run`): the whole program is
/// type-checked and lowered, but only `entry` and the functions it calls are simplified and
/// differentiated ([`passes::inline::only_entry`]); the [`Compiled`] then has no other entry
/// point that lowered. Without an entry `entry` that lowered, the whole program is compiled
/// (so that a missing entry can be reported with the names of those there are).
pub fn compile_file_for_entry(
    path: &std::path::Path,
    entry: &str,
) -> Result<Compiled, CompileError> {
    let (name, text) = read_program(path)?;
    on_big_stack(|| compile_here(&name, &text, &mut modules::FileLoader, Some(entry)))
}

fn compile_here(
    name: &str,
    text: &str,
    loader: &mut dyn modules::Loader,
    only: Option<&str>,
) -> Result<Compiled, CompileError> {
    let checked = check_here(name, text, loader)?;
    let lowered = lower::lower_program(&checked.ast, &checked.sources);
    let program = match only.and_then(|e| passes::inline::only_entry(&lowered.program, e)) {
        Some(one) => one,
        None => lowered.program,
    };
    let ir_ad = passes::simplify(passes::hoist::hoist(passes::simplify(program)));
    let (ir, ad_failures) = ad::transform::transform_partial(ir_ad.clone());
    let ir = passes::accumulations_to_reductions(passes::simplify(ir));
    let mut entry_errors: BTreeMap<String, Diagnostic> = lowered.entry_errors.into_iter().collect();
    let mut ad_errors = BTreeMap::new();
    for e in ad_failures {
        let entry = ir_ad
            .fun(&e.fun)
            .and_then(|f| f.entry.as_ref())
            .map(|ep| ep.name.to_string());
        if let Some(entry) = entry {
            let span = span_of(&checked.sources, e.loc.as_ref());
            let mut d = Diagnostic::error(span, e.message);
            d.not_supported = e.not_supported;
            ad_errors.insert(entry.clone(), d.clone());
            entry_errors.insert(entry, d);
        }
    }
    Ok(Compiled {
        sources: checked.sources,
        ir,
        ir_ad,
        kernels: Default::default(),
        warnings: checked.warnings,
        entry_errors,
        ad_errors,
    })
}

/// The span (of length one) starting at a source location; the start of the last file (the
/// program) when the location is unknown.
fn span_of(sources: &SourceMap, loc: Option<&diag::SrcLoc>) -> diag::Span {
    let last = sources.files.len().saturating_sub(1);
    let fallback = diag::Span::new(diag::FileId(last as u32), 0, 0);
    let Some(loc) = loc else { return fallback };
    let Some(k) = sources.files.iter().rposition(|f| f.name == loc.file) else {
        return fallback;
    };
    let text = &sources.files[k].text;
    let mut offset = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 == loc.line as usize {
            let col: usize = line
                .chars()
                .take((loc.col as usize).saturating_sub(1))
                .map(char::len_utf8)
                .sum();
            offset += col;
            return diag::Span::new(diag::FileId(k as u32), offset, offset + 1);
        }
        offset += line.len();
    }
    diag::Span::new(diag::FileId(k as u32), 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `vkad run -e b` compiles `b` and what it calls, not the other entry points; an entry
    /// that is not there leaves the whole program (whose entries an error then lists).
    #[test]
    fn compiling_for_one_entry_keeps_that_entry_and_its_callees() {
        let dir = std::env::temp_dir().join(format!("vkad-core-entry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("two.fut");
        std::fs::write(
            &path,
            "def sq (x: f64): f64 = x * x\n\
             entry a (x: f64): f64 = vjp sq x 1.0\n\
             entry b (x: f64): f64 = sq x + 1.0\n",
        )
        .unwrap();
        let entries = |c: &Compiled| {
            let mut v = c.entry_names();
            v.sort();
            v
        };
        let b = compile_file_for_entry(&path, "b").unwrap_or_else(|e| panic!("{}", e.render()));
        assert_eq!(entries(&b), ["b"]);
        let x = vec![value::Value::Scalar(prim::PrimValue::F64(3.0))];
        assert_eq!(
            b.run_interp("b", x.clone()).unwrap(),
            compile_file(&path)
                .unwrap()
                .run_interp("b", x.clone())
                .unwrap()
        );
        let a = compile_file_for_entry(&path, "a").unwrap();
        assert_eq!(entries(&a), ["a"]);
        assert_eq!(
            a.run_interp("a", x).unwrap(),
            vec![value::Value::Scalar(prim::PrimValue::F64(6.0))]
        );
        let none = compile_file_for_entry(&path, "c").unwrap();
        assert_eq!(entries(&none), ["a", "b"]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
