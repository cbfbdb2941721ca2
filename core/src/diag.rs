//! Source files, spans and diagnostics.
//!
//! Every error the frontend reports is a [`Diagnostic`]: a message, a primary [`Span`], optional
//! secondary labels and notes. [`Diagnostic::render`] prints it as
//!
//! ```text
//! error: expected `)`, found `in`
//!   --> prog.fut:3:14
//!    |
//!  3 | let x = (1 + in
//!    |              ^^ expected `)`
//! ```
//!
//! using `ariadne` for the snippet. Runtime errors carry a [`SrcLoc`] (file:line:col) instead of a
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
        Span { file, lo: lo as u32, hi: hi as u32 }
    }
    /// The smallest span covering both (they must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span { file: self.file, lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
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
        SourceFile { name: name.into(), text, line_starts }
    }
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line];
        let col = self.text.get(start..offset).map(|s| s.chars().count()).unwrap_or(offset - start);
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
        SrcLoc { file: f.name.clone(), line, col }
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
        }
    }
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(span, message) }
    }
    /// "not supported: CONSTRUCT" — the standard error for a construct outside the subset.
    pub fn not_supported(span: Span, construct: impl fmt::Display) -> Diagnostic {
        Diagnostic::error(span, format!("not supported: {construct}"))
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

    /// Render with file:line:col and a caret snippet, without colours.
    pub fn render(&self, sources: &SourceMap) -> String {
        use ariadne::{Config, Label, Report, ReportKind};
        let file = sources.file(self.span.file);
        let loc = sources.loc(self.span);
        let kind = match self.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
        };
        let name: String = file.name.to_string();
        let range = |s: Span| {
            let f = sources.file(s.file);
            // ariadne counts characters, not bytes.
            let lo = f.text.get(..s.lo as usize).map(|t| t.chars().count()).unwrap_or(0);
            let hi = f.text.get(..s.hi as usize).map(|t| t.chars().count()).unwrap_or(lo);
            lo..hi.max(lo)
        };
        let mut report = Report::build(kind, (name.clone(), range(self.span)))
            .with_config(Config::default().with_color(false))
            .with_message(format!("{}\n  --> {}", self.message, loc));
        let mut primary = Label::new((name.clone(), range(self.span)));
        if let Some(l) = &self.label {
            primary = primary.with_message(l);
        }
        report = report.with_label(primary);
        for (s, text) in &self.secondary {
            if s.file == self.span.file {
                report = report.with_label(Label::new((name.clone(), range(*s))).with_message(text));
            }
        }
        for n in &self.notes {
            report = report.with_note(n);
        }
        let mut out = Vec::new();
        let cache = ariadne::sources(
            sources.files.iter().map(|f| (f.name.to_string(), f.text.to_string())),
        );
        if report.finish().write(cache, &mut out).is_err() {
            return format!("{}: {}", loc, self.message);
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// A list of diagnostics; the error type of every frontend stage.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }
    pub fn render(&self, sources: &SourceMap) -> String {
        self.0.iter().map(|d| d.render(sources)).collect::<Vec<_>>().join("\n")
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}
