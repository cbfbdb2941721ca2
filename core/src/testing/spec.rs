//! Parsing the test blocks of a Futhark program (`docs/man/futhark-test.rst`,
//! `src/Futhark/Test/Spec.hs`).
//!
//! A test block starts at a line `-- ==` at the beginning of a line; the comment lines right
//! after it (each starting with `--`) form the block. The comment lines right before it are its
//! description. The first block may hold `tags { ... }` and either a compile-error test
//! (`error: regex`), property names (`property: names`), or test cases; later blocks hold test
//! cases or properties. Test cases:
//!
//! ```text
//! [entry: name1 name2 ...]
//! ( ["dataset name"] [run tags...] input ({ values } | @ file)
//!                                 [output ({ values } | @ file) | auto output | error: regex] )*
//! [structure [pipeline] { ... }]*  [warning: regex]*
//! ```
//!
//! where the run tags may include `random` (the input is then `{ types and constants }`),
//! `script` (a FutharkScript expression), `compiled`, `nobench`, `no_<backend>` and vkad's
//! `needs_<feature>` (skipped where the backend lacks the feature, `Backend::supports`). Values span lines freely.
//! Positions in errors are the line and column in the `.fut` file.

use crate::prim::PrimType;
use crate::value::Value;
use crate::values::{self, Reader, ValueError};
use regex::{Regex, RegexBuilder};
use std::fmt;

/// The tests of one program.
#[derive(Clone, Debug)]
pub struct ProgramTest {
    /// The comment lines before the first `-- ==`.
    pub description: String,
    /// Tags from `tags { ... }` (of any block).
    pub tags: Vec<String>,
    pub action: TestAction,
}

/// What to test.
#[derive(Clone, Debug)]
pub enum TestAction {
    /// Compilation must fail with an error matching this.
    CompileError(ExpectedError),
    /// Run test cases; `properties` are property-test entry points (`property: names`).
    RunCases {
        cases: Vec<InputOutputs>,
        properties: Vec<String>,
    },
}

/// Test cases for some entry points (one block).
#[derive(Clone, Debug)]
pub struct InputOutputs {
    /// The entry points (`main` unless an `entry:` line names others).
    pub entries: Vec<String>,
    pub runs: Vec<TestRun>,
}

/// One dataset: input and expected result.
#[derive(Clone, Debug)]
pub struct TestRun {
    /// Run tags such as `compiled`, `nobench`, `random`, `no_opencl`.
    pub tags: Vec<String>,
    pub input: Values,
    pub expected: ExpectedResult,
    /// The index of the dataset within its block, from 0.
    pub index: usize,
    /// The dataset's name: the quoted name if given, else `#i ("values...")`, the file name or
    /// the random types, as Futhark names them.
    pub description: String,
    /// The line (1-based) where the dataset starts in the `.fut` file.
    pub line: u32,
}

/// Values given literally, by file or to be generated.
#[derive(Clone, Debug)]
pub enum Values {
    Values(Vec<Value>),
    /// A data file (text or binary), relative to the `.fut` file.
    File(String),
    /// `random input { ... }`.
    Random(Vec<GenValue>),
    /// `script input { ... }` or `script input @ file`: the expression or file name.
    Script(String),
}

/// How to generate one random input value.
#[derive(Clone, Debug, PartialEq)]
pub enum GenValue {
    /// A random value of this shape and element type.
    Random { shape: Vec<usize>, elem: PrimType },
    /// A fixed scalar.
    Fixed(Value),
}

impl GenValue {
    /// The type (or the constant) as written.
    pub fn text(&self) -> String {
        match self {
            GenValue::Random { shape, elem } => values::type_text(shape, *elem),
            GenValue::Fixed(v) => values::write_text(v),
        }
    }
}

/// How a run should end.
#[derive(Clone, Debug)]
pub enum ExpectedResult {
    /// Successfully, with these results if given.
    Succeeds(Option<Success>),
    /// With a run-time error matching this.
    RunTimeFailure(ExpectedError),
}

/// The expected results of a successful run.
#[derive(Clone, Debug)]
pub enum Success {
    Values(Values),
    /// `auto output`: computed by a reference implementation.
    Auto,
}

/// An expected error: any error, or one whose message matches a regular expression (in which
/// `.` also matches newlines, as with Futhark's `blankCompOpt`).
#[derive(Clone, Debug)]
pub struct ExpectedError {
    /// The regular expression as written; empty for any error.
    pub pattern: String,
    pub regex: Option<Regex>,
}

impl ExpectedError {
    /// Whether an error with this message is the expected one (searched, not anchored).
    pub fn matches(&self, message: &str) -> bool {
        self.regex.as_ref().is_none_or(|r| r.is_match(message))
    }
}

/// A malformed test block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for SpecError {}

impl From<ValueError> for SpecError {
    fn from(e: ValueError) -> SpecError {
        SpecError {
            line: e.line,
            col: e.col,
            message: e.message,
        }
    }
}

/// A test block found in a file: its region in the masked text.
struct Block {
    start: usize,
    end: usize,
    description: String,
}

fn is_marker(line: &str) -> bool {
    line.strip_prefix("--").is_some_and(|r| r.trim() == "==")
}

/// The blocks of `text`, and a copy of `text` in which the `--` starting each block line is
/// replaced by two spaces (so that offsets, lines and columns are those of the file).
fn find_blocks(text: &str) -> (Vec<u8>, Vec<Block>) {
    let mut masked = text.as_bytes().to_vec();
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut off = 0;
    for l in text.split_inclusive('\n') {
        lines.push((off, l.trim_end_matches(['\n', '\r'])));
        off += l.len();
    }
    let mut blocks = Vec::new();
    let mut i = 0;
    let mut prev_end_line = 0;
    while i < lines.len() {
        if !is_marker(lines[i].1) {
            i += 1;
            continue;
        }
        let mut d = i;
        while d > prev_end_line && lines[d - 1].1.starts_with("--") && !is_marker(lines[d - 1].1) {
            d -= 1;
        }
        let description = lines[d..i]
            .iter()
            .map(|(_, l)| l.trim_start_matches('-').trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let mut j = i + 1;
        while j < lines.len() && lines[j].1.starts_with("--") && !is_marker(lines[j].1) {
            let o = lines[j].0;
            masked[o] = b' ';
            masked[o + 1] = b' ';
            j += 1;
        }
        let start = lines.get(i + 1).map(|l| l.0).unwrap_or(text.len());
        let end = if j > i + 1 {
            lines[j - 1].0 + lines[j - 1].1.len()
        } else {
            start
        };
        blocks.push(Block {
            start,
            end,
            description,
        });
        prev_end_line = j;
        i = j;
    }
    (masked, blocks)
}

fn is_tag_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_word_byte(b: u8) -> bool {
    is_tag_byte(b) || b == b':'
}

struct BlockParser<'a> {
    r: Reader<'a>,
}

impl<'a> BlockParser<'a> {
    fn err(&self, msg: impl Into<String>) -> SpecError {
        self.r.error(msg).into()
    }
    fn word(&self) -> &'a str {
        self.r.peek_while(is_word_byte)
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if self.word() == w {
            self.r.take_while(is_word_byte);
            self.r.skip_space();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, s: &str) -> Result<(), SpecError> {
        self.r.skip_space();
        if self.r.eat(s) {
            self.r.skip_space();
            Ok(())
        } else {
            Err(self.err(format!("expected `{s}`, found {}", self.r.found())))
        }
    }

    fn tags(&mut self) -> Result<Vec<String>, SpecError> {
        self.expect("{")?;
        let mut tags = Vec::new();
        loop {
            if self.r.eat("}") {
                self.r.skip_space();
                return Ok(tags);
            }
            let t = self.r.take_while(is_tag_byte);
            if t.is_empty() {
                return Err(self.err(format!("expected a tag or `}}`, found {}", self.r.found())));
            }
            tags.push(t.to_string());
            self.r.skip_space();
        }
    }

    fn expected_error(&mut self) -> Result<ExpectedError, SpecError> {
        self.r.skip_hspace();
        let at = self.r.pos();
        let pattern = self.r.rest_of_line().trim().to_string();
        self.r.skip_space();
        if pattern.is_empty() {
            return Ok(ExpectedError {
                pattern,
                regex: None,
            });
        }
        let regex = RegexBuilder::new(&pattern)
            .dot_matches_new_line(true)
            .build()
            .map_err(|e| {
                SpecError::from(
                    self.r
                        .error_at(at, format!("invalid regular expression: {e}")),
                )
            })?;
        Ok(ExpectedError {
            pattern,
            regex: Some(regex),
        })
    }

    /// Names on the rest of the line (after `entry:` or `property:`).
    fn names_on_line(&mut self) -> Vec<String> {
        let line = self.r.rest_of_line();
        self.r.skip_space();
        line.split_whitespace()
            .map(|s| s.trim_end_matches('}').to_string())
            .filter(|s| !s.is_empty())
            .collect()
    }

    fn values_in_braces(&mut self) -> Result<Vec<Value>, SpecError> {
        let open = self.r.pos();
        self.expect("{")?;
        let mut vs = Vec::new();
        loop {
            if self.r.eat("}") {
                self.r.skip_space();
                return Ok(vs);
            }
            if self.r.at_end() {
                return Err(self
                    .r
                    .error_at(
                        open,
                        "unterminated `{` (is every line of the block a `--` comment?)",
                    )
                    .into());
            }
            vs.push(self.r.parse_value()?);
        }
    }

    fn file_name(&mut self) -> Result<String, SpecError> {
        self.expect("@")?;
        let f = self.r.take_while(|b| !b.is_ascii_whitespace()).to_string();
        if f.is_empty() {
            return Err(self.err("expected a file name after `@`"));
        }
        self.r.skip_space();
        Ok(f)
    }

    fn values(&mut self) -> Result<Values, SpecError> {
        self.r.skip_space();
        if self.r.peek() == Some(b'@') {
            Ok(Values::File(self.file_name()?))
        } else {
            Ok(Values::Values(self.values_in_braces()?))
        }
    }

    fn random_values(&mut self) -> Result<Values, SpecError> {
        self.expect("{")?;
        let mut gens = Vec::new();
        loop {
            if self.r.eat("}") {
                self.r.skip_space();
                return Ok(Values::Random(gens));
            }
            if self.r.at_end() {
                return Err(self.err("unterminated `{`"));
            }
            let ident = self.r.peek_while(|b| b.is_ascii_alphanumeric());
            let after = self
                .r
                .peek_while(|b| b.is_ascii_alphanumeric() || b == b'.');
            let is_type = self.r.peek() == Some(b'[')
                || (PrimType::from_name(ident).is_some() && after == ident);
            if is_type {
                let (shape, elem) = self.r.parse_value_type()?;
                gens.push(GenValue::Random { shape, elem });
            } else {
                gens.push(GenValue::Fixed(Value::Scalar(self.r.parse_prim()?)));
            }
            self.r.skip_space();
        }
    }

    fn script(&mut self) -> Result<Values, SpecError> {
        self.r.skip_space();
        if self.r.peek() == Some(b'@') {
            return Ok(Values::Script(self.file_name()?));
        }
        let open = self.r.pos();
        self.expect("{")?;
        let start = self.r.pos();
        let mut depth = 1;
        loop {
            match self.r.peek() {
                None => return Err(self.r.error_at(open, "unterminated `{`").into()),
                Some(b'{') => depth += 1,
                Some(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            self.r.set_pos(self.r.pos() + 1);
        }
        let end = self.r.pos();
        let text = self.r.slice(start, end).to_string();
        self.r.set_pos(end + 1);
        self.r.skip_space();
        Ok(Values::Script(
            text.split_whitespace().collect::<Vec<_>>().join(" "),
        ))
    }

    fn expected_result(&mut self) -> Result<ExpectedResult, SpecError> {
        if self.eat_word("auto") {
            if !self.eat_word("output") {
                return Err(self.err(format!(
                    "expected `output` after `auto`, found {}",
                    self.r.found()
                )));
            }
            return Ok(ExpectedResult::Succeeds(Some(Success::Auto)));
        }
        if self.eat_word("output") {
            return Ok(ExpectedResult::Succeeds(Some(Success::Values(
                self.values()?,
            ))));
        }
        if self.word() == "error:" {
            self.r.take_while(is_word_byte);
            return Ok(ExpectedResult::RunTimeFailure(self.expected_error()?));
        }
        Ok(ExpectedResult::Succeeds(None))
    }

    fn run(&mut self, index: usize) -> Result<TestRun, SpecError> {
        let (line, _) = values::line_col(self.r_src(), self.r.pos());
        let mut name = None;
        if self.r.peek() == Some(b'"') {
            match self.r.parse_value()? {
                Value::Array(a) => match &a.data {
                    crate::value::Buffer::U8(bytes) => {
                        name = Some(String::from_utf8_lossy(bytes).into_owned())
                    }
                    _ => return Err(self.err("expected a dataset name")),
                },
                _ => return Err(self.err("expected a dataset name")),
            }
        }
        let mut tags = Vec::new();
        loop {
            let w = self.word();
            if w == "input" {
                break;
            }
            if w.is_empty() || w.contains(':') || matches!(w, "output" | "structure" | "auto") {
                return Err(self.err(format!("expected `input`, found {}", self.r.found())));
            }
            tags.push(w.to_string());
            self.r.take_while(is_word_byte);
            self.r.skip_space();
        }
        self.eat_word("input");
        let has = |t: &str| tags.iter().any(|x| x == t);
        let input = if has("random") {
            self.random_values()?
        } else if has("script") {
            self.script()?
        } else {
            self.values()?
        };
        let expected = self.expected_result()?;
        let description = match (&name, &input) {
            (Some(n), _) => n.clone(),
            (None, Values::Values(vs)) => {
                let text = vs
                    .iter()
                    .map(values::write_text)
                    .collect::<Vec<_>>()
                    .join(" ");
                let text = if text.chars().count() > 50 {
                    format!("{}...", text.chars().take(50).collect::<String>())
                } else {
                    text
                };
                format!("#{index} (\"{text}\")")
            }
            (None, Values::File(f)) => f.strip_suffix(".gz").unwrap_or(f).to_string(),
            (None, Values::Random(gs)) => {
                gs.iter().map(GenValue::text).collect::<Vec<_>>().join(" ")
            }
            (None, Values::Script(s)) => s.clone(),
        };
        Ok(TestRun {
            tags,
            input,
            expected,
            index,
            description,
            line,
        })
    }

    fn r_src(&self) -> &'a [u8] {
        self.r.src()
    }

    fn input_outputs(&mut self) -> Result<InputOutputs, SpecError> {
        let entries = if self.eat_word("entry:") {
            let names = self.names_on_line();
            if names.is_empty() {
                return Err(self.err("expected entry point names after `entry:`"));
            }
            names
        } else {
            vec!["main".to_string()]
        };
        let mut runs: Vec<TestRun> = Vec::new();
        loop {
            let w = self.word();
            if self.r.at_end() || matches!(w, "structure" | "warning:" | "property:") {
                break;
            }
            if w == "entry:" {
                return Err(self.err("`entry:` must come before the test cases of its block"));
            }
            if w == "tags" {
                return Err(self.err("`tags` must come first in a test block"));
            }
            let run = self.run(runs.len())?;
            if runs.iter().any(|r| r.description == run.description) {
                return Err(self.err(format!("multiple datasets with name {:?}", run.description)));
            }
            runs.push(run);
        }
        // Structure and warning tests are not run by vkad: skip them.
        loop {
            if self.eat_word("structure") {
                self.r.take_while(|b| b != b'{');
                self.script()?;
            } else if self.eat_word("warning:") {
                self.r.rest_of_line();
                self.r.skip_space();
            } else {
                break;
            }
        }
        Ok(InputOutputs { entries, runs })
    }

    fn finish(&mut self) -> Result<(), SpecError> {
        self.r.skip_space();
        if self.r.at_end() {
            Ok(())
        } else {
            Err(self.err(format!("unexpected {} in test block", self.r.found())))
        }
    }
}

/// Parse the test blocks of a program. `Ok(None)` if it has none.
pub fn parse_program_test(text: &str) -> Result<Option<ProgramTest>, SpecError> {
    let (masked, blocks) = find_blocks(text);
    let Some(first) = blocks.first() else {
        return Ok(None);
    };
    let mut tags = Vec::new();
    let mut cases = Vec::new();
    let mut properties = Vec::new();
    let mut compile_error = None;
    for (k, b) in blocks.iter().enumerate() {
        let mut p = BlockParser {
            r: Reader::new(&masked, b.start, b.end),
        };
        p.r.skip_space();
        if p.eat_word("tags") {
            tags.extend(p.tags()?);
        }
        if p.word() == "error:" {
            if k > 0 || blocks.len() > 1 {
                return Err(p.err(
                    "a compile-error test (`error:` without input) must be the only test block",
                ));
            }
            p.r.take_while(is_word_byte);
            compile_error = Some(p.expected_error()?);
        } else if p.eat_word("property:") {
            properties.extend(p.names_on_line());
        } else {
            let io = p.input_outputs()?;
            if !io.runs.is_empty() {
                cases.push(io);
            }
            if p.eat_word("property:") {
                properties.extend(p.names_on_line());
            }
        }
        p.finish()?;
    }
    let action = match compile_error {
        Some(e) => TestAction::CompileError(e),
        None => TestAction::RunCases { cases, properties },
    };
    Ok(Some(ProgramTest {
        description: first.description.clone(),
        tags,
        action,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::PrimValue;

    fn parse(s: &str) -> ProgramTest {
        match parse_program_test(s) {
            Ok(Some(t)) => t,
            Ok(None) => panic!("no test in {s}"),
            Err(e) => panic!("{e}\n{s}"),
        }
    }
    fn cases(t: &ProgramTest) -> &Vec<InputOutputs> {
        match &t.action {
            TestAction::RunCases { cases, .. } => cases,
            a => panic!("{a:?}"),
        }
    }

    #[test]
    fn simple_block() {
        let t = parse(
            "-- Test simple indexing.\n-- ==\n-- tags { firsttag second-tag }\n-- input { [4,3,2,1] 1i64 }\n-- output { 3 }\n-- input { [4,3,2,1] 5i64 }\n-- error: Error*\n\nlet main (a: []i32) (i: i64): i32 = a[i]\n",
        );
        assert_eq!(t.description, "Test simple indexing.");
        assert_eq!(t.tags, vec!["firsttag", "second-tag"]);
        let c = cases(&t);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].entries, vec!["main"]);
        assert_eq!(c[0].runs.len(), 2);
        let r0 = &c[0].runs[0];
        assert_eq!(r0.description, "#0 (\"[4i32, 3i32, 2i32, 1i32] 1i64\")");
        assert_eq!(r0.line, 4);
        match &r0.expected {
            ExpectedResult::Succeeds(Some(Success::Values(Values::Values(vs)))) => {
                assert_eq!(vs, &vec![Value::Scalar(PrimValue::I32(3))])
            }
            e => panic!("{e:?}"),
        }
        match &c[0].runs[1].expected {
            ExpectedResult::RunTimeFailure(e) => {
                assert_eq!(e.pattern, "Error*");
                assert!(e.matches("Error: index out of bounds"));
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn several_blocks_and_entries() {
        let src = "-- ==\n-- tags { autodiff }\n\ndef primal (xs: [2]f64) = xs[0] * xs[1]\n\n-- ==\n-- entry: fwd fwd_vec\n-- input { [5.0, 7.0] }\n-- output { [7.0, 5.0] }\n\nentry fwd xs = xs\n\n-- ==\n-- entry: rev\n-- input { [5.0,\n--          7.0] }\n-- output {\n--   [7.0, 5.0]\n-- }\n\nentry rev xs = xs\n";
        let t = parse(src);
        assert_eq!(t.tags, vec!["autodiff"]);
        let c = cases(&t);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].entries, vec!["fwd", "fwd_vec"]);
        assert_eq!(c[1].entries, vec!["rev"]);
        assert_eq!(c[1].runs.len(), 1);
    }

    #[test]
    fn run_kinds() {
        let src = "-- ==\n-- compiled random input { [10][2]f32 3i64 [5]u8 } output { true }\n-- nobench input @ data/x.in output @ data/x.out.gz\n-- \"named\" script input { mk 10i64 {x} } auto output\n-- random input { [3]i32 }\n-- structure gpu { Map 1 /Redomap 2 }\n-- warning: something\n";
        let t = parse(src);
        let c = cases(&t);
        let runs = &c[0].runs;
        assert_eq!(runs.len(), 4);
        assert_eq!(runs[0].tags, vec!["compiled", "random"]);
        match &runs[0].input {
            Values::Random(g) => assert_eq!(
                g,
                &vec![
                    GenValue::Random {
                        shape: vec![10, 2],
                        elem: PrimType::F32
                    },
                    GenValue::Fixed(Value::Scalar(PrimValue::I64(3))),
                    GenValue::Random {
                        shape: vec![5],
                        elem: PrimType::Int(crate::prim::IntType::U8)
                    },
                ]
            ),
            v => panic!("{v:?}"),
        }
        assert_eq!(runs[0].description, "[10][2]f32 3i64 [5]u8");
        assert!(matches!(&runs[1].input, Values::File(f) if f == "data/x.in"));
        assert_eq!(runs[1].description, "data/x.in");
        assert!(
            matches!(&runs[1].expected, ExpectedResult::Succeeds(Some(Success::Values(Values::File(f)))) if f == "data/x.out.gz")
        );
        assert!(matches!(&runs[2].input, Values::Script(s) if s == "mk 10i64 {x}"));
        assert_eq!(runs[2].description, "named");
        assert!(matches!(
            &runs[2].expected,
            ExpectedResult::Succeeds(Some(Success::Auto))
        ));
        assert!(matches!(&runs[3].expected, ExpectedResult::Succeeds(None)));
    }

    #[test]
    fn compile_error_block() {
        let t = parse("-- Type error.\n-- ==\n-- error: Cannot unify\n\nlet main = 1 + true\n");
        match &t.action {
            TestAction::CompileError(e) => {
                assert!(e.matches("error: Cannot unify `i32` with `bool`"));
                assert!(!e.matches("error: something else"));
            }
            a => panic!("{a:?}"),
        }
        let t = parse("-- ==\n-- error:\nlet main = 1\n");
        assert!(matches!(&t.action, TestAction::CompileError(e) if e.regex.is_none()));
    }

    #[test]
    fn properties() {
        let t = parse("-- ==\n-- property: prop_a prop_b\n");
        assert!(
            matches!(&t.action, TestAction::RunCases { properties, .. } if properties == &["prop_a", "prop_b"])
        );
    }

    #[test]
    fn no_tests() {
        assert!(parse_program_test("-- just a comment\nlet main = 1\n")
            .unwrap()
            .is_none());
        assert!(parse_program_test("").unwrap().is_none());
    }

    #[test]
    fn errors_have_positions() {
        let e = parse_program_test("let x = 1\n-- ==\n-- input { [1, 2i64] }\n").unwrap_err();
        assert_eq!((e.line, e.col), (3, 12), "{e}");
        let e = parse_program_test("-- ==\n-- input { 1 }\n-- outptu { 2 }\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("expected `input`"), "{e}");
        let e = parse_program_test("-- ==\n-- input { 1 \nlet main = 1\n").unwrap_err();
        assert!(e.message.contains("unterminated"), "{e}");
        let e = parse_program_test("-- ==\n-- input { 1 } error: (\n").unwrap_err();
        assert!(e.message.contains("regular expression"), "{e}");
        let e = parse_program_test("-- ==\n-- error: x\n-- ==\n-- input { 1 }\n").unwrap_err();
        assert!(e.message.contains("only test block"), "{e}");
        let e =
            parse_program_test("-- ==\n-- \"a\" input { 1 }\n-- \"a\" input { 2 }\n").unwrap_err();
        assert!(e.message.contains("multiple datasets"), "{e}");
        let e = parse_program_test("-- ==\n-- input { 1 }\n-- entry: f\n").unwrap_err();
        assert!(e.message.contains("entry:"), "{e}");
    }

    #[test]
    fn description_truncated() {
        let t = parse("-- ==\n-- input { [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15] }\n");
        let d = &cases(&t)[0].runs[0].description;
        assert!(d.ends_with("...\")"), "{d}");
    }

    #[test]
    fn all_futhark_ad_tests_parse() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../futhark-ref/tests/ad");
        let Ok(files) = crate::testing::collect_fut_files(std::slice::from_ref(&dir)) else {
            return;
        };
        if files.is_empty() {
            return; // The reference tree is not available here.
        }
        let mut failures = Vec::new();
        let mut datasets = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            match parse_program_test(&text) {
                Ok(Some(t)) => {
                    if let TestAction::RunCases { cases, .. } = &t.action {
                        datasets += cases
                            .iter()
                            .map(|c| c.runs.len() * c.entries.len())
                            .sum::<usize>();
                    }
                }
                Ok(None) => {}
                Err(e) => failures.push(format!("{}:{e}", f.display())),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(
            files.len() >= 169 && datasets > 300,
            "{} files, {datasets} datasets",
            files.len()
        );
    }
}
