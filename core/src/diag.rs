//! Source files, spans and diagnostics.
//!
//! Every error the frontend reports is a [`Diagnostic`]: a message, a primary [`Span`], optional
//! secondary labels and notes. [`Diagnostic::render`] prints it as
//!
//! ```text
//! error: expected `)`, found `in`
//!  --> prog.fut:3:14
//!   |
//! 3 | let x = (1 + in
//!   |              ^^ expected `)`
//! ```
//!
//! Runtime errors carry a [`SrcLoc`] (file:line:col) instead of a
//! span, since the IR outlives the source map.

use std::fmt;
use std::sync::Arc;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FileId(pub u32);

/// A byte range `lo..hi` in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(file: FileId, lo: usize, hi: usize) -> Span {
        Span {
            file,
            lo: lo as u32,
            hi: hi as u32,
        }
    }
    /// The smallest span covering both (they must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// One source file: its display name and text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: Arc<str>,
    pub text: Arc<str>,
    /// Byte offsets at which lines start.
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<Arc<str>>, text: impl Into<Arc<str>>) -> SourceFile {
        let text: Arc<str> = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(offset - start);
        (line as u32 + 1, col as u32 + 1)
    }
}

/// All files of one compilation (the prelude, the program, and anything it imports).
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn add(&mut self, name: impl Into<Arc<str>>, text: impl Into<Arc<str>>) -> FileId {
        self.files.push(SourceFile::new(name, text));
        FileId(self.files.len() as u32 - 1)
    }
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }
    /// The file:line:col of the start of a span.
    pub fn loc(&self, span: Span) -> SrcLoc {
        let f = self.file(span.file);
        let (line, col) = f.line_col(span.lo as usize);
        SrcLoc {
            file: f.name.clone(),
            line,
            col,
        }
    }
}

/// A source location that does not need the source map: what runtime errors report.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SrcLoc {
    pub file: Arc<str>,
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for SrcLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A compile-time error or warning with a primary span.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    /// Text under the caret of the primary span (e.g. "expected `)`").
    pub label: Option<String>,
    /// Secondary spans with their own text.
    pub secondary: Vec<(Span, String)>,
    /// Free-text notes printed after the snippet.
    pub notes: Vec<String>,
    /// The error is a construct outside what vkad supports (the message starts with
    /// "not supported"), not a mistake in the program: test runners skip such entries.
    pub not_supported: bool,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            label: None,
            secondary: vec![],
            notes: vec![],
            not_supported: false,
        }
    }
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }
    /// "not supported: CONSTRUCT" — the standard error for a construct outside the subset.
    pub fn not_supported(span: Span, construct: impl fmt::Display) -> Diagnostic {
        Diagnostic::error(span, format!("not supported: {construct}")).marked_not_supported()
    }
    /// Marks the error as a construct outside what vkad supports (see
    /// [`Diagnostic::not_supported`], for messages that already say so).
    pub fn marked_not_supported(mut self) -> Diagnostic {
        self.not_supported = true;
        self
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }
    pub fn with_secondary(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, text.into()));
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Render with file:line:col and a caret snippet, without colours, in rustc's layout:
    ///
    /// ```text
    /// error: expected an expression, found `in`
    ///  --> prog.fut:2:16
    ///   |
    /// 2 |   let x = (1 + in x
    ///   |                ^^ expected an expression
    /// ```
    ///
    /// Written here rather than with ariadne or miette: their box-drawing layouts (and ariadne's
    /// ASCII mode) do not give this plain caret line, which is what compiler users read and what
    /// logs and CI keep intact. It is small: the snippet of the first line of each span.
    pub fn render(&self, sources: &SourceMap) -> String {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!("{kind}: {}\n", self.message);
        let loc = sources.loc(self.span);
        let mut snippets = vec![(self.span, self.label.clone().unwrap_or_default(), '^')];
        snippets.extend(self.secondary.iter().map(|(s, t)| (*s, t.clone(), '-')));
        let width = snippets
            .iter()
            .map(|(s, _, _)| sources.loc(*s).line.to_string().len())
            .max()
            .unwrap_or(1);
        let pad = " ".repeat(width);
        out.push_str(&format!("{pad}--> {loc}\n"));
        for (span, text, mark) in snippets {
            let file = sources.file(span.file);
            let (line, col) = file.line_col(span.lo as usize);
            let line_text = file.text.lines().nth(line as usize - 1).unwrap_or("");
            let (end_line, end_col) = file.line_col(span.hi as usize);
            // Underline to the span's end on its first line (at least one character).
            let len = if end_line == line {
                (end_col.saturating_sub(col)).max(1)
            } else {
                (line_text.chars().count() as u32 + 1)
                    .saturating_sub(col)
                    .max(1)
            };
            if span.file != self.span.file {
                out.push_str(&format!("{pad}--> {}\n", sources.loc(span)));
            }
            out.push_str(&format!("{pad} |\n"));
            let (shown, at, len) = line_window(line_text, col as usize - 1, len as usize);
            out.push_str(&format!(
                "{:>width$} | {}\n",
                line,
                shown.replace('\t', " ")
            ));
            let marks: String = std::iter::repeat_n(mark, len).collect();
            let lead = " ".repeat(at);
            if text.is_empty() {
                out.push_str(&format!("{pad} | {lead}{marks}\n"));
            } else {
                out.push_str(&format!("{pad} | {lead}{marks} {text}\n"));
            }
        }
        for n in &self.notes {
            out.push_str(&format!("{pad} = note: {n}\n"));
        }
        out
    }
}

/// Source lines longer than this many characters are shown cut around the span.
const MAX_LINE_SHOWN: usize = 160;
/// How many characters before the span a cut line keeps.
const CONTEXT_SHOWN: usize = 60;

/// The part of `line` a snippet shows for a span at 0-based character column `col`, `len`
/// characters long: the whole line when it is short, else at most [`MAX_LINE_SHOWN`]
/// characters from [`CONTEXT_SHOWN`] before the span, with `...` where it was cut (a
/// generated program may have a 1 MB line). Returns the text, the span's column in it and
/// the length to underline.
fn line_window(line: &str, col: usize, len: usize) -> (String, usize, usize) {
    let n = line.chars().count();
    if n <= MAX_LINE_SHOWN {
        return (line.to_string(), col, len);
    }
    let start = col.saturating_sub(CONTEXT_SHOWN).min(n);
    let end = (start + MAX_LINE_SHOWN).min(n);
    let mut shown = String::new();
    if start > 0 {
        shown.push_str("...");
    }
    let at = shown.len() + col.saturating_sub(start);
    shown.extend(line.chars().skip(start).take(end - start));
    if end < n {
        shown.push_str("...");
    }
    let len = len.min((end + 1).saturating_sub(col)).max(1);
    (shown, at, len)
}

/// A list of diagnostics; the error type of every frontend stage.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }
    pub fn render(&self, sources: &SourceMap) -> String {
        self.0
            .iter()
            .map(|d| d.render(sources))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let f = SourceFile::new("a.fut", "ab\ncd\n");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(1), (1, 2));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(100), (3, 1));
    }

    #[test]
    fn render_shows_location_and_caret() {
        let mut sm = SourceMap::default();
        let id = sm.add("prog.fut", "def main =\n  let x = (1 + in x\n");
        let d = Diagnostic::error(Span::new(id, 26, 28), "expected an expression, found `in`")
            .with_label("expected an expression");
        let out = d.render(&sm);
        assert!(out.contains("prog.fut:2:16"), "{out}");
        assert!(out.contains("let x = (1 + in x"), "{out}");
        assert!(
            out.contains("\n  |                ^^ expected an expression\n"),
            "{out}"
        );
        assert!(out.contains("expected an expression, found `in`"), "{out}");
    }

    /// Issue 16, item 8: an error in a 1 MB line echoed the whole line; it is cut around the
    /// caret now, which stays under the span.
    #[test]
    fn render_cuts_a_huge_line_around_the_span() {
        let mut sm = SourceMap::default();
        let text = format!(
            "def main = {}oops{}\n",
            "x + ".repeat(250_000),
            " + x".repeat(250_000)
        );
        let lo = text.find("oops").unwrap();
        let id = sm.add("big.fut", text);
        let d =
            Diagnostic::error(Span::new(id, lo, lo + 4), "unknown name `oops`").with_label("here");
        let out = d.render(&sm);
        assert!(out.len() < 1000, "{} bytes", out.len());
        let lines: Vec<&str> = out.lines().collect();
        let src = lines
            .iter()
            .find(|l| l.contains(" | ") && l.contains("oops"))
            .expect("the source line");
        assert!(src.contains("...x + x") && src.ends_with("..."), "{src}");
        let carets = lines
            .iter()
            .find(|l| l.contains("^^^^ here"))
            .expect("the carets");
        assert_eq!(carets.find('^'), src.find("oops"), "{src}\n{carets}");
        // Near the start of the line: no cut on the left.
        let d = Diagnostic::error(Span::new(id, 0, 3), "at the start").with_label("here");
        let out = d.render(&sm);
        assert!(
            out.contains("| def main = x + x") && out.contains("| ^^^ here"),
            "{out}"
        );
    }
}
