//! Running the test blocks of `.fut` files and reporting the results.
//!
//! Output: one line per failed test,
//! ``path: entry `main`, dataset #2 ("1i32 [1i32, 2i32]"): <what differed>``, a line per test
//! skipped because it needs an unsupported feature, a single `path: compilation failed: ...`
//! for a file that does not compile, a single ``path: entry `f`: skipped: ...`` (or
//! `cannot be compiled`) for an entry point whose lowering failed, and finally
//! `N passed, M failed, K skipped`.
//! Messages spanning several lines have their continuation lines indented by two spaces.

use super::compare::compare_values;
use super::random::{fnv1a, random_value};
use super::spec::{
    parse_program_test, ExpectedResult, GenValue, Success, TestAction, TestRun, Values,
};
use super::{collect_fut_files, Backend, RunError, Summary};
use crate::value::Value;
use crate::values::{gzip, parse_values};
use crate::Compiled;
use std::collections::HashMap;
use std::io::{self, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Options of a test run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Also print a line for each passed test and each test skipped by a tag.
    pub verbose: bool,
    /// Only run these entry points (all if empty).
    pub entries: Vec<String>,
    /// The largest random input value generated, in elements.
    pub max_random_elems: usize,
    /// Count the tests of entry points that use a construct vkad does not support (their
    /// lowering failed with a `not supported: ...` error) as failed instead of skipped.
    pub unsupported_fails: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            verbose: false,
            entries: Vec::new(),
            max_random_elems: 1 << 26,
            unsupported_fails: false,
        }
    }
}

/// Run the tests of the given files and directories (see [`super::collect_fut_files`]) with the
/// default options, printing failures and the summary line to `out`. Errors are only those of
/// writing to `out`.
pub fn run_paths(
    paths: &[PathBuf],
    backend: &dyn Backend,
    out: &mut dyn Write,
) -> io::Result<Summary> {
    run_paths_with(paths, backend, &RunOptions::default(), out)
}

/// [`run_paths`] with options.
pub fn run_paths_with(
    paths: &[PathBuf],
    backend: &dyn Backend,
    opts: &RunOptions,
    out: &mut dyn Write,
) -> io::Result<Summary> {
    let mut summary = Summary::default();
    for p in paths {
        match collect_fut_files(std::slice::from_ref(p)) {
            Ok(files) => {
                for f in files {
                    summary.add(run_file(&f, backend, opts, out)?);
                }
            }
            Err(e) => {
                writeln!(out, "{}: {}", p.display(), e)?;
                summary.failed += 1;
            }
        }
    }
    writeln!(out, "{summary}")?;
    Ok(summary)
}

fn indent(msg: &str) -> String {
    msg.trim_end().replace('\n', "\n  ")
}

/// The result of one test.
enum Outcome {
    Pass,
    Fail(String),
    Skip(String),
}

/// Whether tags `disable`, `notest`, `no_<backend>` or `needs_<feature>` of a feature the
/// backend lacks ([`Backend::supports`]) exclude a test.
fn excluded(tags: &[String], backend: &dyn Backend) -> bool {
    let no_backend = format!("no_{}", backend.name());
    tags.iter().any(|t| {
        t == "disable"
            || t == "notest"
            || *t == no_backend
            || t.strip_prefix("needs_")
                .is_some_and(|f| !backend.supports(f))
    })
}

/// One file's test context.
struct FileRun<'a> {
    name: String,
    dir: PathBuf,
    file_key: String,
    backend: &'a dyn Backend,
    opts: &'a RunOptions,
    files: HashMap<PathBuf, Result<Vec<Value>, String>>,
}

impl FileRun<'_> {
    fn data_file(&mut self, f: &str) -> Result<Vec<Value>, Outcome> {
        let path = self.dir.join(f);
        let r = self.files.entry(path.clone()).or_insert_with(|| {
            let bytes =
                std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let bytes = if f.ends_with(".gz") || gzip::is_gzip(&bytes) {
                gzip::gunzip(&bytes).map_err(|e| format!("{}: {e}", path.display()))?
            } else {
                bytes
            };
            parse_values(&bytes).map_err(|e| format!("{}:{e}", path.display()))
        });
        r.clone().map_err(Outcome::Fail)
    }

    fn values(&mut self, vs: &Values, block: usize, run: &TestRun) -> Result<Vec<Value>, Outcome> {
        match vs {
            Values::Values(vs) => Ok(vs.clone()),
            Values::File(f) => self.data_file(f),
            Values::Script(_) => Err(Outcome::Skip("not supported: script input".into())),
            Values::Random(gens) => {
                let seed = fnv1a(format!("{}:{block}:{}", self.file_key, run.index).as_bytes());
                gens.iter()
                    .enumerate()
                    .map(|(k, g)| match g {
                        GenValue::Fixed(v) => Ok(v.clone()),
                        GenValue::Random { shape, elem } => random_value(
                            shape,
                            *elem,
                            seed.wrapping_add(k as u64),
                            self.opts.max_random_elems,
                        )
                        .map_err(Outcome::Fail),
                    })
                    .collect()
            }
        }
    }

    fn run_backend(
        &self,
        compiled: &Compiled,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Result<Vec<Value>, RunError>, String> {
        catch_unwind(AssertUnwindSafe(|| self.backend.run(compiled, entry, args))).map_err(
            |payload| {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                format!(
                    "internal error: the {} backend panicked: {msg}",
                    self.backend.name()
                )
            },
        )
    }

    fn test(&mut self, compiled: &Compiled, entry: &str, block: usize, run: &TestRun) -> Outcome {
        let expected = match &run.expected {
            ExpectedResult::Succeeds(Some(Success::Auto)) => {
                return Outcome::Skip(
                    "not supported: auto output (needs a reference implementation)".into(),
                )
            }
            ExpectedResult::Succeeds(Some(Success::Values(vs))) => {
                match self.values(vs, block, run) {
                    Ok(v) => Some(v),
                    Err(o) => return o,
                }
            }
            _ => None,
        };
        let args = match self.values(&run.input, block, run) {
            Ok(v) => v,
            Err(o) => return o,
        };
        let result = match self.run_backend(compiled, entry, args) {
            Ok(r) => r,
            Err(panic) => return Outcome::Fail(panic),
        };
        // A backend that cannot run a construct yet says so at run time: counted like an entry
        // whose lowering is not supported.
        if let Err(RunError::NotSupported(msg)) = &result {
            if !self.opts.unsupported_fails {
                return Outcome::Skip(msg.clone());
            }
        }
        match (result.map_err(|e| e.to_string()), &run.expected) {
            (Ok(_), ExpectedResult::RunTimeFailure(e)) => {
                if e.pattern.is_empty() {
                    Outcome::Fail("expected an error but succeeded".into())
                } else {
                    Outcome::Fail(format!(
                        "expected an error matching \"{}\" but succeeded",
                        e.pattern
                    ))
                }
            }
            (Err(msg), ExpectedResult::RunTimeFailure(e)) => {
                if e.matches(&msg) {
                    Outcome::Pass
                } else {
                    Outcome::Fail(format!(
                        "expected an error matching \"{}\", got:\n{msg}",
                        e.pattern
                    ))
                }
            }
            (Err(msg), ExpectedResult::Succeeds(_)) => {
                Outcome::Fail(format!("runtime error: {msg}"))
            }
            (Ok(got), ExpectedResult::Succeeds(_)) => match expected {
                None => Outcome::Pass,
                Some(exp) => {
                    let ms = compare_values(&got, &exp);
                    if ms.is_empty() {
                        Outcome::Pass
                    } else {
                        Outcome::Fail(
                            ms.iter()
                                .map(|m| m.to_string())
                                .collect::<Vec<_>>()
                                .join("; "),
                        )
                    }
                }
            },
        }
    }
}

/// Run the tests of one `.fut` file, printing failures (not the summary line) to `out`.
pub fn run_file(
    path: &Path,
    backend: &dyn Backend,
    opts: &RunOptions,
    out: &mut dyn Write,
) -> io::Result<Summary> {
    let mut s = Summary::default();
    let name = path.display().to_string();
    let text = match std::fs::read(path).map(String::from_utf8) {
        Ok(Ok(t)) => t,
        Ok(Err(_)) => {
            writeln!(out, "{name}: not a UTF-8 text file")?;
            s.failed += 1;
            return Ok(s);
        }
        Err(e) => {
            writeln!(out, "{name}: cannot read: {e}")?;
            s.failed += 1;
            return Ok(s);
        }
    };
    let spec = match parse_program_test(&text) {
        Ok(Some(spec)) => spec,
        Ok(None) => return Ok(s),
        Err(e) => {
            writeln!(
                out,
                "{name}:{}:{}: invalid test block: {}",
                e.line, e.col, e.message
            )?;
            s.failed += 1;
            return Ok(s);
        }
    };
    let file_excluded = excluded(&spec.tags, backend);
    let want_entry = |e: &str| opts.entries.is_empty() || opts.entries.iter().any(|x| x == e);

    let (cases, properties) = match &spec.action {
        TestAction::CompileError(expected) => {
            if file_excluded {
                s.skipped += 1;
                return Ok(s);
            }
            let what = if expected.pattern.is_empty() {
                String::new()
            } else {
                format!(" with an error matching \"{}\"", expected.pattern)
            };
            match backend.compile(&name, &text) {
                Ok(_) => {
                    writeln!(
                        out,
                        "{name}: expected compilation to fail{what}, but it succeeded"
                    )?;
                    s.failed += 1;
                }
                Err(e) => {
                    let msg = e.render();
                    if expected.matches(&msg) {
                        s.passed += 1;
                        if opts.verbose {
                            writeln!(out, "{name}: compilation failed as expected: ok")?;
                        }
                    } else {
                        writeln!(
                            out,
                            "{name}: expected compilation to fail{what}, but got:\n  {}",
                            indent(&msg)
                        )?;
                        s.failed += 1;
                    }
                }
            }
            return Ok(s);
        }
        TestAction::RunCases { cases, properties } => (cases, properties),
    };

    // All tests of the file: (block, entry, run).
    let tests: Vec<(usize, &str, &TestRun)> = cases
        .iter()
        .enumerate()
        .flat_map(|(b, io)| {
            io.entries
                .iter()
                .filter(|e| want_entry(e))
                .flat_map(move |e| io.runs.iter().map(move |r| (b, e.as_str(), r)))
        })
        .collect();
    if file_excluded {
        s.skipped += tests.len() + properties.len();
        if opts.verbose && !tests.is_empty() {
            writeln!(
                out,
                "{name}: skipped ({} tests; the file is disabled)",
                tests.len()
            )?;
        }
        return Ok(s);
    }
    if tests.is_empty() && properties.is_empty() {
        return Ok(s);
    }
    let compiled = match backend.compile(&name, &text) {
        Ok(c) => c,
        Err(e) => {
            writeln!(
                out,
                "{name}: compilation failed:\n  {}",
                indent(&e.render())
            )?;
            for (_, _, run) in &tests {
                if excluded(&run.tags, backend) {
                    s.skipped += 1;
                } else {
                    s.failed += 1;
                }
            }
            s.failed += properties.len();
            return Ok(s);
        }
    };
    for p in properties {
        writeln!(
            out,
            "{name}: property `{p}`: skipped: not supported: property-based testing"
        )?;
        s.skipped += 1;
    }
    let entry_names = compiled.entry_names();
    let mut reported_entries: Vec<&str> = Vec::new();
    let mut fr = FileRun {
        name: name.clone(),
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        file_key: path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        backend,
        opts,
        files: HashMap::new(),
    };
    for (block, entry, run) in tests {
        let ctx = format!("{}: entry `{entry}`, dataset {}", fr.name, run.description);
        if excluded(&run.tags, backend) {
            s.skipped += 1;
            if opts.verbose {
                writeln!(out, "{ctx}: skipped (tag)")?;
            }
            continue;
        }
        let outcome = if let Some(d) = backend.entry_error(&compiled, entry) {
            // The entry point could not be lowered: report it once, count each dataset.
            let unsupported = d.not_supported && !opts.unsupported_fails;
            if !reported_entries.contains(&entry) {
                reported_entries.push(entry);
                let what = if unsupported {
                    "skipped"
                } else {
                    "cannot be compiled"
                };
                writeln!(
                    out,
                    "{name}: entry `{entry}`: {what}:\n  {}",
                    indent(&d.render(&compiled.sources))
                )?;
            }
            if unsupported {
                s.skipped += 1;
            } else {
                s.failed += 1;
            }
            continue;
        } else if entry_names.iter().any(|e| e == entry) {
            fr.test(&compiled, entry, block, run)
        } else {
            Outcome::Fail(format!("the program has no entry point `{entry}`"))
        };
        match outcome {
            Outcome::Pass => {
                s.passed += 1;
                if opts.verbose {
                    writeln!(out, "{ctx}: ok")?;
                }
            }
            Outcome::Fail(msg) => {
                s.failed += 1;
                writeln!(out, "{ctx}: {}", indent(&msg))?;
            }
            Outcome::Skip(msg) => {
                s.skipped += 1;
                writeln!(out, "{ctx}: skipped: {msg}")?;
            }
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Diagnostic, Diagnostics, SourceMap, Span};
    use crate::prim::PrimValue;
    use crate::testing::{run_paths, InterpBackend};
    use crate::values::write_text;
    use crate::CompileError;
    use std::collections::BTreeMap;

    /// A backend that ignores the program: entry points are the names in `-- fake entries:`
    /// lines of the file; a file containing `FAKE_COMPILE_ERROR` does not compile. Entry
    /// `double` doubles every i32/f32/f64 argument; `fail` reports a run-time error; `sum`
    /// returns the sum of an i32 array; `panic` panics; anything else returns its arguments.
    struct Fake;

    impl Backend for Fake {
        fn name(&self) -> &str {
            "fake"
        }
        fn supports(&self, feature: &str) -> bool {
            feature != "lacking"
        }
        fn compile(&self, name: &str, text: &str) -> Result<Compiled, CompileError> {
            let mut sources = SourceMap::default();
            let file = sources.add(name, text);
            if let Some(pos) = text.find("FAKE_COMPILE_ERROR") {
                let d = Diagnostic::error(
                    Span::new(file, pos, pos + 18),
                    "type error: cannot unify i32 with bool",
                );
                return Err(CompileError {
                    sources,
                    diagnostics: Diagnostics(vec![d]),
                });
            }
            let mut entry_errors = BTreeMap::new();
            let mut ir = crate::ir::Program::default();
            for line in text.lines() {
                if let Some(names) = line.strip_prefix("-- fake entries:") {
                    for n in names.split_whitespace() {
                        ir.funs.push(crate::ir::FunDef {
                            name: n.into(),
                            entry: Some(crate::ir::EntryPoint {
                                name: n.into(),
                                param_counts: vec![],
                                result_counts: vec![],
                            }),
                            size_params: vec![],
                            params: vec![],
                            ret: vec![],
                            body: crate::ir::Body {
                                stms: vec![],
                                result: vec![],
                            },
                            attrs: Default::default(),
                        });
                    }
                }
                for (prefix, msg, not_supported) in [
                    ("-- fake unsupported:", "not supported: `vjp`", true),
                    ("-- fake broken:", "internal error: cannot lower", false),
                ] {
                    if let Some(names) = line.strip_prefix(prefix) {
                        for n in names.split_whitespace() {
                            let mut d = Diagnostic::error(Span::new(file, 0, 2), msg);
                            d.not_supported = not_supported;
                            entry_errors.insert(n.to_string(), d);
                        }
                    }
                }
            }
            Ok(Compiled {
                sources,
                ir_ad: ir.clone(),
                ir,
                kernels: Default::default(),
                warnings: vec![],
                entry_errors,
                ad_errors: Default::default(),
            })
        }
        fn run(&self, _: &Compiled, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, RunError> {
            match entry {
                "fail" => Err(RunError::Runtime(
                    "Error: index 5 out of bounds for array of shape [3]".into(),
                )),
                "panic" => panic!("fake backend panic"),
                "unsup" => Err(RunError::NotSupported(
                    "not supported on the fake backend: this construct".into(),
                )),
                "sum" => match args.first() {
                    Some(Value::Array(a)) => {
                        let mut t = 0i32;
                        for i in 0..a.data.len() {
                            t = t.wrapping_add(
                                a.data.get(i).and_then(|p| p.as_i128()).unwrap_or(0) as i32,
                            );
                        }
                        Ok(vec![Value::Scalar(PrimValue::I32(t))])
                    }
                    _ => Err(RunError::Internal("sum: expected an array".into())),
                },
                "double" => Ok(args
                    .into_iter()
                    .map(|v| {
                        let text = write_text(&v);
                        let mut vs = parse_values(text.as_bytes()).unwrap();
                        match vs.pop().unwrap() {
                            Value::Scalar(PrimValue::I32(x)) => {
                                Value::Scalar(PrimValue::I32(x * 2))
                            }
                            Value::Scalar(PrimValue::F64(x)) => {
                                Value::Scalar(PrimValue::F64(x * 2.0))
                            }
                            Value::Array(mut a) => {
                                for i in 0..a.data.len() {
                                    let p = match a.data.get(i).unwrap() {
                                        PrimValue::I32(x) => PrimValue::I32(x * 2),
                                        PrimValue::F32(x) => PrimValue::F32(x * 2.0),
                                        PrimValue::F64(x) => PrimValue::F64(x * 2.0),
                                        p => p,
                                    };
                                    a.data.set(i, p);
                                }
                                Value::Array(a)
                            }
                            v => v,
                        }
                    })
                    .collect()),
                _ => Ok(args),
            }
        }
    }

    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let p = std::env::temp_dir().join(format!("vkad-testing-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
        fn file(&self, name: &str, text: &[u8]) -> PathBuf {
            let p = self.0.join(name);
            if let Some(d) = p.parent() {
                std::fs::create_dir_all(d).unwrap();
            }
            std::fs::write(&p, text).unwrap();
            p
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn runtime_not_supported_is_skipped() {
        let d = TempDir::new("rt_unsupported");
        d.file(
            "a.fut",
            b"-- fake entries: unsup\n-- ==\n-- entry: unsup\n-- input { 1 } output { 1 }\n-- input { 2 } error: boom\n",
        );
        let (s, out) = run_dir(&d, &Fake);
        assert_eq!(
            s,
            Summary {
                passed: 0,
                failed: 0,
                skipped: 2
            },
            "{out}"
        );
        assert!(
            out.contains("skipped: not supported on the fake backend"),
            "{out}"
        );
        let strict = RunOptions {
            unsupported_fails: true,
            ..RunOptions::default()
        };
        let s = run_file(&d.0.join("a.fut"), &Fake, &strict, &mut Vec::new()).unwrap();
        assert_eq!(s.failed, 2);
    }

    fn run_dir(dir: &TempDir, backend: &dyn Backend) -> (Summary, String) {
        let mut out = Vec::new();
        let s = run_paths(std::slice::from_ref(&dir.0), backend, &mut out).unwrap();
        (s, String::from_utf8(out).unwrap())
    }

    #[test]
    fn passes_failures_and_summary() {
        let d = TempDir::new("basic");
        d.file(
            "a.fut",
            b"-- fake entries: double sum fail main\n-- ==\n-- entry: double\n-- input { 1 [1.5f32, 2f32] }\n-- output { 2 [3f32, 4f32] }\n-- input { 3 }\n-- output { 7 }\n\n-- ==\n-- entry: sum\n-- input { [1, 2, 3] } output { 6 }\n-- input { [1, 2, 3] } output { 6 5 }\n-- input { [1, 2, 3] } output { 6i64 }\n\n-- ==\n-- entry: fail\n-- input { 1 } error: out of bounds\n-- input { 1 } error: division by zero\n-- input { 1 } error:\n-- input { 1 }\n\n-- ==\n-- entry: main\n-- input { 1 } error: .*\n-- input { [1.0, 2.0] } output { [1.001, 2.0] }\n-- input { [1.0, 2.0, 3.0] } output { [1.0, 2.0, 3.5] }\n",
        );
        let (s, out) = run_dir(&d, &Fake);
        let lines: Vec<&str> = out.lines().collect();
        let name = d.0.join("a.fut").display().to_string();
        assert_eq!(
            s,
            Summary {
                passed: 5,
                failed: 7,
                skipped: 0
            },
            "{out}"
        );
        assert!(!s.success());
        assert_eq!(
            lines[0],
            format!(
                "{name}: entry `double`, dataset #1 (\"3i32\"): result 0: expected 7i32, got 6i32"
            )
        );
        assert_eq!(lines[1], format!("{name}: entry `sum`, dataset #1 (\"[1i32, 2i32, 3i32]\"): expected 2 results, got 1"));
        assert_eq!(
            lines[2],
            format!("{name}: entry `sum`, dataset #2 (\"[1i32, 2i32, 3i32]\"): result 0: expected a value of type i64, got i32")
        );
        assert!(
            lines[3].ends_with(
                "dataset #1 (\"1i32\"): expected an error matching \"division by zero\", got:"
            ),
            "{out}"
        );
        assert_eq!(
            lines[4],
            "  Error: index 5 out of bounds for array of shape [3]"
        );
        assert!(lines[5].ends_with("dataset #3 (\"1i32\"): runtime error: Error: index 5 out of bounds for array of shape [3]"));
        assert!(
            lines[6].ends_with(
                "dataset #0 (\"1i32\"): expected an error matching \".*\" but succeeded"
            ),
            "{out}"
        );
        assert!(
            lines[7].ends_with("dataset #2 (\"[1.0f64, 2.0f64, 3.0f64]\"): result 0: value at [2]: expected 3.5f64, got 3.0f64"),
            "{out}"
        );
        assert_eq!(lines.last().unwrap(), &"5 passed, 7 failed, 0 skipped");
    }

    #[test]
    fn disabled_files_tags_and_missing_entries() {
        let d = TempDir::new("tags");
        d.file("a.fut", b"-- ==\n-- tags { disable }\n-- input { 1 } output { 1 }\n-- input { 2 } output { 2 }\n");
        d.file(
            "b.fut",
            b"-- ==\n-- tags { no_fake }\n-- input { 1 } output { 1 }\n",
        );
        d.file(
            "c.fut",
            b"-- fake entries: main\n-- ==\n-- entry: main other\n-- input { 1 } output { 1 }\n-- no_fake input { 2 } output { 2 }\n-- compiled nobench input { 3 } output { 3 }\n",
        );
        d.file("d.fut", b"-- no tests here\nlet main = 1\n");
        d.file("e.txt", b"-- ==\n-- input { garbage\n");
        d.file(
            "f.fut",
            b"-- fake entries: double\n-- ==\n-- entry: double\n-- needs_lacking input { 1 } output { 2 }\n-- needs_there input { 2 } output { 4 }\n",
        );
        let (s, out) = run_dir(&d, &Fake);
        assert_eq!(
            s,
            Summary {
                passed: 3,
                failed: 2,
                skipped: 6
            },
            "{out}"
        );
        assert!(
            out.contains(
                "entry `other`, dataset #0 (\"1i32\"): the program has no entry point `other`"
            ),
            "{out}"
        );
    }

    #[test]
    fn compile_errors() {
        let d = TempDir::new("compile");
        d.file(
            "a.fut",
            b"-- ==\n-- error: cannot unify\nlet main = FAKE_COMPILE_ERROR\n",
        );
        d.file(
            "b.fut",
            b"-- ==\n-- error: something else\nlet main = FAKE_COMPILE_ERROR\n",
        );
        d.file("c.fut", b"-- ==\n-- error:\nlet main = 1\n");
        d.file(
            "d.fut",
            b"-- ==\n-- input { 1 } output { 1 }\n-- input { 2 } output { 2 }\n-- notest input { 2 } output { 2 }\nlet main = FAKE_COMPILE_ERROR\n",
        );
        let (s, out) = run_dir(&d, &Fake);
        assert_eq!(
            s,
            Summary {
                passed: 1,
                failed: 4,
                skipped: 1
            },
            "{out}"
        );
        assert!(out.contains("b.fut: expected compilation to fail with an error matching \"something else\", but got:"), "{out}");
        assert!(
            out.contains("c.fut: expected compilation to fail, but it succeeded"),
            "{out}"
        );
        assert_eq!(
            out.matches("d.fut: compilation failed:").count(),
            1,
            "{out}"
        );
        assert!(out.contains("cannot unify i32 with bool"), "{out}");
    }

    #[test]
    fn spec_errors_are_failures() {
        let d = TempDir::new("specerr");
        d.file(
            "a.fut",
            b"let x = 1\n-- ==\n-- input { [1, 2i64] } output { 1 }\n",
        );
        let (s, out) = run_dir(&d, &Fake);
        assert_eq!(
            s,
            Summary {
                passed: 0,
                failed: 1,
                skipped: 0
            }
        );
        assert!(
            out.contains("a.fut:3:12: invalid test block: array has elements of multiple types"),
            "{out}"
        );
    }

    #[test]
    fn data_files_random_and_unsupported() {
        let d = TempDir::new("files");
        let mut bin = Vec::new();
        crate::values::write_binary(&Value::Scalar(PrimValue::I32(21)), &mut bin);
        d.file("data/x.in", &bin);
        d.file("data/x.out", b"42 -- the answer\n");
        d.file("data/y.in", &bin);
        d.file("data/z.in", &bin);
        // "42\n" compressed with `gzip -n`.
        let gz: &[u8] = &[
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x33, 0x31, 0xe2, 0x02,
            0x00, 0x31, 0x29, 0x86, 0xd1, 0x03, 0x00, 0x00, 0x00,
        ];
        d.file("data/x.out.gz", gz);
        d.file(
            "sub/a.fut",
            b"-- fake entries: double main\n-- ==\n-- entry: double\n-- input @ ../data/x.in output @ ../data/x.out\n-- input @ ../data/y.in output @ ../data/missing.out\n-- input @ ../data/z.in output @ ../data/x.out.gz\n-- script input { f 1 } output { 1 }\n-- input { 1 } auto output\n\n-- ==\n-- entry: main\n-- random input { [10][3]f32 7i64 } output { 1 }\n-- random input { [4]i32 }\n",
        );
        let (s, out) = run_dir(&d, &Fake);
        assert_eq!(
            s,
            Summary {
                passed: 3,
                failed: 2,
                skipped: 2
            },
            "{out}"
        );
        assert!(
            out.contains("cannot read") && out.contains("missing.out"),
            "{out}"
        );
        assert!(
            out.contains("skipped: not supported: script input"),
            "{out}"
        );
        assert!(out.contains("skipped: not supported: auto output"), "{out}");
        assert!(
            out.contains("dataset [10][3]f32 7i64: expected 1 results, got 2"),
            "{out}"
        );
    }

    #[test]
    fn panics_and_missing_paths() {
        let d = TempDir::new("panic");
        d.file(
            "a.fut",
            b"-- fake entries: panic\n-- ==\n-- entry: panic\n-- input { 1 } output { 1 }\n",
        );
        let (s, out) = run_dir(&d, &Fake);
        assert_eq!(s.failed, 1);
        assert!(
            out.contains("internal error: the fake backend panicked: fake backend panic"),
            "{out}"
        );
        let mut buf = Vec::new();
        let s = run_paths(&[d.0.join("nope")], &Fake, &mut buf).unwrap();
        assert_eq!(s.failed, 1);
    }

    #[test]
    fn entries_that_failed_to_lower() {
        let d = TempDir::new("lowering");
        let f = d.file(
            "a.fut",
            b"-- fake entries: main\n-- fake unsupported: rev\n-- fake broken: fwd\n-- ==\n-- entry: main rev fwd\n-- input { 1 } output { 1 }\n-- input { 2 } output { 2 }\n",
        );
        let mut out = Vec::new();
        let s = run_file(&f, &Fake, &RunOptions::default(), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            Summary {
                passed: 2,
                failed: 2,
                skipped: 2
            },
            "{out}"
        );
        assert_eq!(out.matches("entry `rev`: skipped:").count(), 1, "{out}");
        assert!(out.contains("not supported: `vjp`"), "{out}");
        assert_eq!(
            out.matches("entry `fwd`: cannot be compiled:").count(),
            1,
            "{out}"
        );
        let strict = RunOptions {
            unsupported_fails: true,
            ..RunOptions::default()
        };
        let s = run_file(&f, &Fake, &strict, &mut Vec::new()).unwrap();
        assert_eq!(
            s,
            Summary {
                passed: 2,
                failed: 4,
                skipped: 0
            }
        );
    }

    #[test]
    fn verbose_and_entry_filter() {
        let d = TempDir::new("verbose");
        let f = d.file("a.fut", b"-- fake entries: main sum\n-- ==\n-- entry: main sum\n-- input { [1, 2] } output { [1, 2] }\n");
        let opts = RunOptions {
            verbose: true,
            entries: vec!["main".into()],
            ..RunOptions::default()
        };
        let mut out = Vec::new();
        let s = run_file(&f, &Fake, &opts, &mut out).unwrap();
        assert_eq!(
            s,
            Summary {
                passed: 1,
                failed: 0,
                skipped: 0
            }
        );
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains("entry `main`, dataset #0 (\"[1i32, 2i32]\"): ok"),
            "{out}"
        );
    }

    /// End to end with the real pipeline and interpreter, when they exist: a program whose
    /// tests must pass. Ignored while the compiler is being written.
    #[test]
    #[ignore]
    fn interp_end_to_end() {
        let d = TempDir::new("e2e");
        d.file(
            "a.fut",
            b"-- ==\n-- input { [1, 2, 3] } output { 6 }\n-- input { empty([0]i32) } output { 0 }\nentry main (xs: []i32) : i32 = reduce (+) 0 xs\n",
        );
        let (s, out) = run_dir(&d, &InterpBackend);
        assert_eq!(
            s,
            Summary {
                passed: 2,
                failed: 0,
                skipped: 0
            },
            "{out}"
        );
    }
}
