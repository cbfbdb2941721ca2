//! The lexer: source text to [`Token`]s.
//!
//! Follows Futhark's lexical syntax: identifiers may contain `'`, operators are maximal runs of
//! symbol characters (`+-*/%=!><|&^` and `.` after the first), `--` starts a comment that runs to
//! the end of the line, numeric literals may carry a type suffix (`1i64`, `2.5f32`) and `_`
//! separators. Two context-sensitive decisions are made here, as Futhark's lexer does:
//!
//! * a `[` that follows an identifier, literal, `)` or `]` with no whitespace in between is an
//!   [`Tok::IndexBracket`] (`a[i]` indexes, `f [i]` applies `f` to an array literal);
//! * a number directly after a `.` that itself directly follows something (`x.0.1`) is lexed as a
//!   plain natural number, so that `0.1` there is two field indices rather than a decimal.

use crate::diag::{Diagnostic, FileId, Span};
use crate::prim::{FloatType, IntType, PrimType};

/// Reserved words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyword {
    True,
    False,
    If,
    Then,
    Else,
    Def,
    Let,
    Loop,
    In,
    Val,
    For,
    Do,
    With,
    Local,
    Open,
    Include,
    Import,
    Type,
    Entry,
    Module,
    While,
    Assert,
    Match,
    Case,
}

impl Keyword {
    /// The keyword spelled `s`, if any.
    pub fn from_word(s: &str) -> Option<Keyword> {
        use Keyword::*;
        Some(match s {
            "true" => True,
            "false" => False,
            "if" => If,
            "then" => Then,
            "else" => Else,
            "def" => Def,
            "let" => Let,
            "loop" => Loop,
            "in" => In,
            "val" => Val,
            "for" => For,
            "do" => Do,
            "with" => With,
            "local" => Local,
            "open" => Open,
            "include" => Include,
            "import" => Import,
            "type" => Type,
            "entry" => Entry,
            "module" => Module,
            "while" => While,
            "assert" => Assert,
            "match" => Match,
            "case" => Case,
            _ => return None,
        })
    }
    /// The spelling of the keyword.
    pub fn as_str(self) -> &'static str {
        use Keyword::*;
        match self {
            True => "true",
            False => "false",
            If => "if",
            Then => "then",
            Else => "else",
            Def => "def",
            Let => "let",
            Loop => "loop",
            In => "in",
            Val => "val",
            For => "for",
            Do => "do",
            With => "with",
            Local => "local",
            Open => "open",
            Include => "include",
            Import => "import",
            Type => "type",
            Entry => "entry",
            Module => "module",
            While => "while",
            Assert => "assert",
            Match => "match",
            Case => "case",
        }
    }
}

/// The kinds of token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name: `x`, `f64`, `x'`, `_tmp` (but not `_` alone).
    Ident(String),
    Keyword(Keyword),
    /// An integer literal (decimal, `0x` hex or `0b` binary) with its optional suffix.
    /// `natural` is true for a plain decimal without suffix or separators (usable as a field index).
    Int {
        value: u128,
        suffix: Option<PrimType>,
        natural: bool,
    },
    /// A decimal (or hexadecimal) floating-point literal with its optional suffix.
    Float {
        value: f64,
        suffix: Option<PrimType>,
    },
    /// A string literal: its UTF-8 bytes with the escapes decoded (see [`char_escape`]). A
    /// character literal `'c'` is lexed as an integer literal (its code point), as in Futhark.
    Str(Vec<u8>),
    /// An operator symbol other than `=` and `->`: `+`, `==`, `|>`, `-`, `!`, `*`, ...
    Symbol(String),
    /// `=`
    Equals,
    /// `->`
    Arrow,
    /// `:`
    Colon,
    /// `:>`
    ColonGt,
    Comma,
    /// `.`
    Dot,
    /// `..`
    DotDot,
    /// `...`
    DotDotDot,
    /// `..<`
    DotDotLt,
    /// `..>`
    DotDotGt,
    LParen,
    RParen,
    /// `[` preceded by whitespace or by a token that cannot end an expression.
    LBracket,
    /// `[` directly after an identifier, literal, `)` or `]`: indexing.
    IndexBracket,
    RBracket,
    LBrace,
    RBrace,
    /// `\`
    Backslash,
    /// `` ` ``
    Backtick,
    /// `#[`
    HashBracket,
    /// `#name`, a sum-type constructor (not supported).
    Constructor(String),
    /// `'` (type parameter)
    Tick,
    /// `'^`
    TickHat,
    /// `'~`
    TickTilde,
    /// `~`
    Tilde,
    /// `?`
    Question,
    /// `_`
    Underscore,
    /// `???`
    Hole,
    /// The end of the input (always the last token). Characters outside the language, such as
    /// `$`, are rejected by the lexer with an error instead of becoming tokens.
    Eof,
}

impl Tok {
    /// How the token is named in "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Keyword(k) => format!("`{}`", k.as_str()),
            Tok::Int { .. } => "an integer literal".into(),
            Tok::Float { .. } => "a decimal literal".into(),
            Tok::Str(_) => "a string literal".into(),
            Tok::Symbol(s) => format!("`{s}`"),
            Tok::Equals => "`=`".into(),
            Tok::Arrow => "`->`".into(),
            Tok::Colon => "`:`".into(),
            Tok::ColonGt => "`:>`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Dot => "`.`".into(),
            Tok::DotDot => "`..`".into(),
            Tok::DotDotDot => "`...`".into(),
            Tok::DotDotLt => "`..<`".into(),
            Tok::DotDotGt => "`..>`".into(),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBracket | Tok::IndexBracket => "`[`".into(),
            Tok::RBracket => "`]`".into(),
            Tok::LBrace => "`{`".into(),
            Tok::RBrace => "`}`".into(),
            Tok::Backslash => "`\\`".into(),
            Tok::Backtick => "`` ` ``".into(),
            Tok::HashBracket => "`#[`".into(),
            Tok::Constructor(c) => format!("`#{c}`"),
            Tok::Tick => "`'`".into(),
            Tok::TickHat => "`'^`".into(),
            Tok::TickTilde => "`'~`".into(),
            Tok::Tilde => "`~`".into(),
            Tok::Question => "`?`".into(),
            Tok::Underscore => "`_`".into(),
            Tok::Hole => "`???`".into(),
            Tok::Eof => "end of file".into(),
        }
    }
}

/// A token with its span and whether whitespace (or a comment) preceded it.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    pub space_before: bool,
}

fn is_symchar(c: char) -> bool {
    matches!(
        c,
        '+' | '-' | '*' | '/' | '%' | '=' | '!' | '>' | '<' | '|' | '&' | '^'
    )
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_constituent(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

fn suffix_type(s: &str) -> Option<PrimType> {
    match s {
        "i8" => Some(PrimType::Int(IntType::I8)),
        "i16" => Some(PrimType::Int(IntType::I16)),
        "i32" => Some(PrimType::Int(IntType::I32)),
        "i64" => Some(PrimType::Int(IntType::I64)),
        "u8" => Some(PrimType::Int(IntType::U8)),
        "u16" => Some(PrimType::Int(IntType::U16)),
        "u32" => Some(PrimType::Int(IntType::U32)),
        "u64" => Some(PrimType::Int(IntType::U64)),
        "f16" => Some(PrimType::Float(FloatType::F16)),
        "f32" => Some(PrimType::Float(FloatType::F32)),
        "f64" => Some(PrimType::Float(FloatType::F64)),
        _ => None,
    }
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    file: FileId,
    toks: Vec<Token>,
}

/// Split `src` into tokens, ending with [`Tok::Eof`]. Stops at the first lexical error.
pub fn lex(src: &str, file: FileId) -> Result<Vec<Token>, Diagnostic> {
    // A byte-order mark at the start is not part of the program.
    let start = if src.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lx = Lexer {
        src,
        bytes: src.as_bytes(),
        pos: start,
        file,
        toks: Vec::new(),
    };
    lx.run()?;
    Ok(lx.toks)
}

impl Lexer<'_> {
    fn span(&self, lo: usize, hi: usize) -> Span {
        Span::new(self.file, lo, hi)
    }

    fn peek_char(&self, at: usize) -> Option<char> {
        self.src.get(at..).and_then(|s| s.chars().next())
    }

    fn byte(&self, at: usize) -> u8 {
        self.bytes.get(at).copied().unwrap_or(0)
    }

    fn push(&mut self, tok: Tok, lo: usize, hi: usize, space_before: bool) {
        self.toks.push(Token {
            tok,
            span: self.span(lo, hi),
            space_before,
        });
    }

    /// Whether the previous token (if adjacent) can end an expression, making `[` an index.
    fn prev_ends_atom(&self) -> bool {
        matches!(
            self.toks.last().map(|t| &t.tok),
            Some(
                Tok::Ident(_)
                    | Tok::RParen
                    | Tok::RBracket
                    | Tok::Int { .. }
                    | Tok::Float { .. }
                    | Tok::Keyword(Keyword::True | Keyword::False)
            )
        )
    }

    fn run(&mut self) -> Result<(), Diagnostic> {
        let mut space_before = true;
        loop {
            // Skip whitespace and comments.
            let start_ws = self.pos;
            loop {
                match self.byte(self.pos) {
                    b' ' | b'\t' | b'\n' | b'\r' | 0x0c => self.pos += 1,
                    b'-' if self.byte(self.pos + 1) == b'-' => {
                        while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                            self.pos += 1;
                        }
                    }
                    _ => break,
                }
            }
            if self.pos > start_ws {
                space_before = true;
            }
            if self.pos >= self.bytes.len() {
                let n = self.bytes.len();
                self.push(Tok::Eof, n, n, true);
                return Ok(());
            }
            self.token(space_before)?;
            space_before = false;
        }
    }

    fn token(&mut self, space: bool) -> Result<(), Diagnostic> {
        let lo = self.pos;
        let Some(c) = self.peek_char(lo) else {
            return Err(Diagnostic::error(
                self.span(lo, lo),
                "invalid UTF-8 in source",
            ));
        };
        let b1 = self.byte(lo + 1);
        let simple = |tok: Tok, len: usize, lx: &mut Self| {
            lx.pos = lo + len;
            lx.push(tok, lo, lo + len, space);
            Ok(())
        };
        match c {
            '(' => simple(Tok::LParen, 1, self),
            ')' => simple(Tok::RParen, 1, self),
            ']' => simple(Tok::RBracket, 1, self),
            '{' => simple(Tok::LBrace, 1, self),
            '}' => simple(Tok::RBrace, 1, self),
            ',' => simple(Tok::Comma, 1, self),
            '\\' => simple(Tok::Backslash, 1, self),
            '`' => simple(Tok::Backtick, 1, self),
            '~' => simple(Tok::Tilde, 1, self),
            '[' => {
                let tok = if !space && self.prev_ends_atom() {
                    Tok::IndexBracket
                } else {
                    Tok::LBracket
                };
                simple(tok, 1, self)
            }
            ':' if b1 == b'>' => simple(Tok::ColonGt, 2, self),
            ':' => simple(Tok::Colon, 1, self),
            '?' if b1 == b'?' && self.byte(lo + 2) == b'?' => simple(Tok::Hole, 3, self),
            '?' => simple(Tok::Question, 1, self),
            '.' => {
                if b1 == b'.' {
                    match self.byte(lo + 2) {
                        b'.' => simple(Tok::DotDotDot, 3, self),
                        b'<' => simple(Tok::DotDotLt, 3, self),
                        b'>' => simple(Tok::DotDotGt, 3, self),
                        _ => simple(Tok::DotDot, 2, self),
                    }
                } else {
                    simple(Tok::Dot, 1, self)
                }
            }
            '#' if b1 == b'[' => simple(Tok::HashBracket, 2, self),
            '#' if (b1 as char).is_ascii_alphabetic() => {
                let mut hi = lo + 1;
                while is_constituent(self.byte(hi) as char) {
                    hi += 1;
                }
                let name = self.src[lo + 1..hi].to_string();
                simple(Tok::Constructor(name), hi - lo, self)
            }
            '\'' => {
                // A character literal 'c' (also '\n'-style escapes), or a type parameter tick.
                if let Some((c, len)) = self.char_literal(lo)? {
                    let tok = Tok::Int {
                        value: c.into(),
                        suffix: None,
                        natural: false,
                    };
                    return simple(tok, len, self);
                }
                match b1 {
                    b'^' => simple(Tok::TickHat, 2, self),
                    b'~' => simple(Tok::TickTilde, 2, self),
                    _ => simple(Tok::Tick, 1, self),
                }
            }
            '"' => {
                let mut hi = lo + 1;
                let mut bytes = Vec::new();
                loop {
                    match self.byte(hi) {
                        _ if hi >= self.bytes.len() => {
                            return Err(Diagnostic::error(
                                self.span(lo, lo + 1),
                                "unterminated string literal",
                            )
                            .with_label("this string is never closed"));
                        }
                        b'\\' => {
                            let (c, end) = self.escape(hi)?;
                            let mut buf = [0u8; 4];
                            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                            hi = end;
                        }
                        b'"' => {
                            hi += 1;
                            break;
                        }
                        b'\n' => {
                            return Err(Diagnostic::error(
                                self.span(hi, hi + 1),
                                "newline in a string literal",
                            )
                            .with_label("write `\\n` instead"));
                        }
                        b => {
                            bytes.push(b);
                            hi += 1;
                        }
                    }
                }
                simple(Tok::Str(bytes), hi - lo, self)
            }
            '_' if !is_constituent(b1 as char) => simple(Tok::Underscore, 1, self),
            c if is_ident_start(c) => {
                let mut hi = lo + 1;
                while is_constituent(self.byte(hi) as char) {
                    hi += 1;
                }
                let word = &self.src[lo..hi];
                let tok = match Keyword::from_word(word) {
                    Some(k) => Tok::Keyword(k),
                    None => Tok::Ident(word.to_string()),
                };
                simple(tok, hi - lo, self)
            }
            c if c.is_ascii_digit() => self.number(space),
            c if is_symchar(c) => {
                let mut hi = lo + 1;
                loop {
                    let d = self.byte(hi) as char;
                    // `--` starts a comment even right after an operator.
                    if d == '-' && self.byte(hi + 1) == b'-' {
                        break;
                    }
                    if is_symchar(d) || (d == '.' && self.byte(hi + 1) != b'.') {
                        hi += 1;
                    } else {
                        break;
                    }
                }
                let s = &self.src[lo..hi];
                let tok = match s {
                    "=" => Tok::Equals,
                    "->" => Tok::Arrow,
                    _ => Tok::Symbol(s.to_string()),
                };
                simple(tok, hi - lo, self)
            }
            c => Err(Diagnostic::error(
                self.span(lo, lo + c.len_utf8()),
                format!("unexpected character `{c}`"),
            )
            .with_label("not part of the language")),
        }
    }

    /// The character literal starting at `lo` (`'a'`, `'\n'`, `'\x41'`) and its length, if
    /// there is one (otherwise the `'` is a tick). A malformed escape in one is an error.
    fn char_literal(&self, lo: usize) -> Result<Option<(char, usize)>, Diagnostic> {
        let Some(c) = self.peek_char(lo + 1) else {
            return Ok(None);
        };
        let (c, end) = match c {
            '\\' => self.escape(lo + 1)?,
            '\'' | '\n' => return Ok(None),
            c => (c, lo + 1 + c.len_utf8()),
        };
        Ok((self.byte(end) == b'\'').then_some((c, end + 1 - lo)))
    }

    /// The escape sequence whose `\\` is at `at`: the character and the position after it.
    fn escape(&self, at: usize) -> Result<(char, usize), Diagnostic> {
        char_escape(self.bytes, at + 1).map_err(|(msg, hi)| {
            Diagnostic::error(self.span(at, hi.max(at + 1)), msg)
                .with_label("in this escape sequence")
        })
    }

    fn number(&mut self, space: bool) -> Result<(), Diagnostic> {
        let lo = self.pos;
        // Directly after an adjacent `.` (as in `x.0.1`): a plain natural number.
        let after_dot = !space
            && matches!(
                self.toks.last(),
                Some(Token {
                    tok: Tok::Dot,
                    space_before: false,
                    ..
                })
            )
            && self.toks.len() >= 2;
        if after_dot {
            let mut hi = lo;
            while self.byte(hi).is_ascii_digit() {
                hi += 1;
            }
            let value = self.parse_digits(lo, hi, 10)?;
            self.pos = hi;
            self.push(
                Tok::Int {
                    value,
                    suffix: None,
                    natural: true,
                },
                lo,
                hi,
                space,
            );
            return Ok(());
        }
        let b1 = self.byte(lo + 1);
        let (mut hi, tok) = if self.byte(lo) == b'0' && (b1 == b'x' || b1 == b'X') {
            self.hex_number(lo)?
        } else if self.byte(lo) == b'0' && (b1 == b'b' || b1 == b'B') {
            let mut hi = lo + 2;
            while matches!(self.byte(hi), b'0' | b'1' | b'_') {
                hi += 1;
            }
            if hi == lo + 2 {
                return Err(Diagnostic::error(
                    self.span(lo, hi),
                    "binary literal has no digits",
                ));
            }
            let value = self.parse_digits(lo + 2, hi, 2)?;
            (
                hi,
                Tok::Int {
                    value,
                    suffix: None,
                    natural: false,
                },
            )
        } else {
            self.decimal_number(lo)?
        };
        // Suffix.
        let suffix_lo = hi;
        while is_constituent(self.byte(hi) as char) {
            hi += 1;
        }
        let tok = if hi > suffix_lo {
            let text = &self.src[suffix_lo..hi];
            let Some(t) = suffix_type(text) else {
                return Err(Diagnostic::error(
                    self.span(lo, hi),
                    format!("invalid numeric literal suffix `{text}`"),
                )
                .with_label("expected a type suffix such as `i32` or `f64`"));
            };
            match tok {
                Tok::Int { value, .. } => Tok::Int {
                    value,
                    suffix: Some(t),
                    natural: false,
                },
                Tok::Float { value, .. } => {
                    if !matches!(t, PrimType::Float(_)) {
                        return Err(Diagnostic::error(
                            self.span(lo, hi),
                            format!("a decimal literal cannot have the integer suffix `{text}`"),
                        ));
                    }
                    Tok::Float {
                        value,
                        suffix: Some(t),
                    }
                }
                other => other,
            }
        } else {
            tok
        };
        self.pos = hi;
        self.push(tok, lo, hi, space);
        Ok(())
    }

    /// Parse the digits in `lo..hi` (skipping `_`) in `radix` into a u128.
    fn parse_digits(&self, lo: usize, hi: usize, radix: u32) -> Result<u128, Diagnostic> {
        let mut v: u128 = 0;
        for c in self.src[lo..hi].chars() {
            if c == '_' {
                continue;
            }
            let d = c.to_digit(radix).unwrap_or(0) as u128;
            v = v
                .checked_mul(radix as u128)
                .and_then(|v| v.checked_add(d))
                .ok_or_else(|| {
                    Diagnostic::error(self.span(lo, hi), "literal out of range")
                        .with_label("too large")
                })?;
        }
        Ok(v)
    }

    fn decimal_number(&self, lo: usize) -> Result<(usize, Tok), Diagnostic> {
        let mut hi = lo;
        while self.byte(hi).is_ascii_digit() || self.byte(hi) == b'_' {
            hi += 1;
        }
        let int_hi = hi;
        let mut is_float = false;
        if self.byte(hi) == b'.' && self.byte(hi + 1).is_ascii_digit() {
            is_float = true;
            hi += 1;
            while self.byte(hi).is_ascii_digit() || self.byte(hi) == b'_' {
                hi += 1;
            }
        }
        if matches!(self.byte(hi), b'e' | b'E') {
            let mut e = hi + 1;
            if matches!(self.byte(e), b'+' | b'-') {
                e += 1;
            }
            if self.byte(e).is_ascii_digit() {
                is_float = true;
                hi = e;
                while self.byte(hi).is_ascii_digit() {
                    hi += 1;
                }
            }
        }
        if is_float {
            let text: String = self.src[lo..hi].chars().filter(|c| *c != '_').collect();
            let value: f64 = text
                .parse()
                .map_err(|_| Diagnostic::error(self.span(lo, hi), "malformed decimal literal"))?;
            if value.is_infinite() {
                return Err(Diagnostic::error(self.span(lo, hi), "literal out of range")
                    .with_label("too large for any float type"));
            }
            Ok((
                hi,
                Tok::Float {
                    value,
                    suffix: None,
                },
            ))
        } else {
            let value = self.parse_digits(lo, int_hi, 10)?;
            let natural = !self.src[lo..int_hi].contains('_');
            Ok((
                int_hi,
                Tok::Int {
                    value,
                    suffix: None,
                    natural,
                },
            ))
        }
    }

    fn hex_number(&self, lo: usize) -> Result<(usize, Tok), Diagnostic> {
        let mut hi = lo + 2;
        while self.byte(hi).is_ascii_hexdigit() || self.byte(hi) == b'_' {
            hi += 1;
        }
        let int_hi = hi;
        if int_hi == lo + 2 {
            return Err(Diagnostic::error(
                self.span(lo, hi),
                "hexadecimal literal has no digits",
            ));
        }
        // Hexadecimal float: 0x1.8p3
        let has_frac = self.byte(hi) == b'.' && self.byte(hi + 1).is_ascii_hexdigit();
        let mut frac_hi = hi;
        if has_frac {
            frac_hi = hi + 1;
            while self.byte(frac_hi).is_ascii_hexdigit() || self.byte(frac_hi) == b'_' {
                frac_hi += 1;
            }
        }
        if matches!(self.byte(frac_hi), b'p' | b'P') {
            let mut e = frac_hi + 1;
            let neg = self.byte(e) == b'-';
            if matches!(self.byte(e), b'+' | b'-') {
                e += 1;
            }
            if self.byte(e).is_ascii_digit() {
                let exp_lo = e;
                while self.byte(e).is_ascii_digit() {
                    e += 1;
                }
                let mut mant = 0f64;
                for c in self.src[lo + 2..int_hi].chars().filter(|c| *c != '_') {
                    mant = mant * 16.0 + c.to_digit(16).unwrap_or(0) as f64;
                }
                if has_frac {
                    let mut scale = 1.0 / 16.0;
                    for c in self.src[int_hi + 1..frac_hi].chars().filter(|c| *c != '_') {
                        mant += c.to_digit(16).unwrap_or(0) as f64 * scale;
                        scale /= 16.0;
                    }
                }
                let exp: i32 = self.src[exp_lo..e]
                    .parse::<i32>()
                    .unwrap_or(i32::MAX)
                    .min(100_000);
                let exp = if neg { -exp } else { exp };
                let value = mant * 2f64.powi(exp);
                if value.is_infinite() {
                    return Err(Diagnostic::error(self.span(lo, e), "literal out of range")
                        .with_label("too large for any float type"));
                }
                return Ok((
                    e,
                    Tok::Float {
                        value,
                        suffix: None,
                    },
                ));
            }
        }
        if has_frac {
            return Err(Diagnostic::error(
                self.span(lo, frac_hi),
                "hexadecimal float literal needs an exponent (`p`)",
            ));
        }
        let value = self.parse_digits(lo + 2, int_hi, 16)?;
        Ok((
            int_hi,
            Tok::Int {
                value,
                suffix: None,
                natural: false,
            },
        ))
    }
}

/// Decodes the escape sequence after a backslash at `src[at..]` in a string or character
/// literal, with the escapes Futhark accepts (Haskell's): `\n \t \r \a \b \f \v \\ \" \'`,
/// decimal `\65`, hexadecimal `\x41` and octal `\o101` code points. Returns the character and
/// the position after the sequence, or a message and the position where the sequence ends.
/// Shared by the lexer and the textual value reader ([`crate::values`]).
pub fn char_escape(src: &[u8], at: usize) -> Result<(char, usize), (&'static str, usize)> {
    let Some(&e) = src.get(at) else {
        return Err(("unterminated escape sequence", at));
    };
    let simple = |c: char| Ok((c, at + 1));
    let (radix, start) = match e {
        b'n' => return simple('\n'),
        b't' => return simple('\t'),
        b'r' => return simple('\r'),
        b'a' => return simple('\u{7}'),
        b'b' => return simple('\u{8}'),
        b'f' => return simple('\u{c}'),
        b'v' => return simple('\u{b}'),
        b'\\' => return simple('\\'),
        b'"' => return simple('"'),
        b'\'' => return simple('\''),
        b'x' => (16, at + 1),
        b'o' => (8, at + 1),
        b'0'..=b'9' => (10, at),
        _ => return Err(("not supported: this escape sequence", at + 1)),
    };
    let mut end = start;
    let mut v: u32 = 0;
    while let Some(d) = src.get(end).and_then(|&b| (b as char).to_digit(radix)) {
        v = v
            .checked_mul(radix)
            .and_then(|v| v.checked_add(d))
            .ok_or(("character escape out of range", end + 1))?;
        end += 1;
    }
    if end == start {
        return Err(("expected digits in character escape", end));
    }
    let c = char::from_u32(v).ok_or(("invalid character escape", end))?;
    Ok((c, end))
}
