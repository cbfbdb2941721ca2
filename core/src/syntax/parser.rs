//! The parser: tokens to the [`ast`].
//!
//! A hand-written recursive-descent parser with precedence climbing for infix operators. It
//! follows the grammar of Futhark's language reference and the precedence table of Futhark's own
//! parser (lowest to highest):
//!
//! | level | operators                                   | assoc |
//! |-------|---------------------------------------------|-------|
//! | 1     | `:` `:>` (ascription, coercion)             | left  |
//! | 2     | `...` `..<` `..>` `..` (ranges)             | none  |
//! | 3     | `` `f` `` (backticked functions)            | left  |
//! | 4     | `with`                                      | left  |
//! | 5     | `\|>`                                       | left  |
//! | 6     | `<\|`                                       | right |
//! | 7     | `\|\|`                                      | left  |
//! | 8     | `&&`                                        | left  |
//! | 9     | `==` `!=` `<` `<=` `>` `>=`                 | left  |
//! | 10    | `&` `^` `\|`                                | left  |
//! | 11    | `<<` `>>` `>>>`                             | left  |
//! | 12    | `+` `-`                                     | left  |
//! | 13    | `*` `/` `%` `//` `%%`                       | left  |
//! | 14    | `**`                                        | left  |
//! |       | prefix `-` `!`, then application, then indexing and projection |
//!
//! `if`, `let`, `loop`, `assert`, lambdas and attributes extend as far to the right as possible.
//! The parser stops at the first error. Recursion is bounded (see [`MAX_DEPTH`]), so no input can
//! overflow the stack; chains of `let` are parsed iteratively.

use crate::diag::{Diagnostic, Diagnostics, FileId, Span};
use crate::prim::{IntType, PrimType};
use crate::syntax::ast::{self, *};
use crate::syntax::lexer::{lex, Keyword, Tok, Token};
use crate::syntax::types::SizeOp;

/// The deepest recursive nesting of expressions, types and patterns the parser accepts, in
/// recursive calls of the parser: a parenthesised expression costs about 3 of them, so this
/// admits 10,000 nested parentheses (docs/language.md, "Limits"). The parser runs on a
/// thread with [`crate::COMPILER_STACK`] bytes of stack.
pub const MAX_DEPTH: u32 = 40_000;

/// The deepest syntax tree the parser builds, counting the iteratively parsed chains (`let`
/// chains, left-associative operators, postfix indexing) as well. Deeper trees would overflow
/// the stack of the recursive passes that follow (even dropping one recurses); they run on
/// threads with [`crate::COMPILER_STACK`] bytes of stack, and so does the CLI.
pub const MAX_TREE_DEPTH: u32 = 40_000;

/// Parse a whole program (on a thread with a large stack, [`crate::COMPILER_STACK`]: the
/// parser recurses up to [`MAX_DEPTH`] levels).
pub fn parse_program(src: &str, file: FileId) -> Result<ast::Program, Diagnostics> {
    crate::on_big_stack(|| {
        let mut p = Parser::new(src, file)?;
        p.program().map_err(Diagnostics::from)
    })
}

/// Parse a type expression (the whole input must be one type).
pub fn parse_type(src: &str, file: FileId) -> Result<ast::TypeExp, Diagnostics> {
    let mut p = Parser::new(src, file)?;
    let t = p.type_exp()?;
    p.expect_eof()?;
    Ok(t)
}

/// Parse a value signature as written in [`crate::builtins`]: type and size parameters, `:`, a
/// type. For example `'a '^b : (a -> b) -> []a -> *[]b` or `'t : (n: i64) -> *[n]i64`.
pub fn parse_val_spec(
    src: &str,
    file: FileId,
) -> Result<(Vec<ast::TypeParam>, ast::TypeExp), Diagnostics> {
    let mut p = Parser::new(src, file)?;
    let params = p.type_params()?;
    p.expect(&Tok::Colon, "`:`")?;
    let t = p.type_exp()?;
    p.expect_eof()?;
    Ok((params, t))
}

type PResult<T> = Result<T, Diagnostic>;

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    file: FileId,
    depth: u32,
    /// Estimated depth of the tree being built (see [`MAX_TREE_DEPTH`]).
    tree: u32,
    /// The operator symbols bound by the program at this point (`def (+^) ...`,
    /// `let (+) = ...`, a parameter `(+)`), innermost last: an infix use of one of them is an
    /// application of that binding, also where it shadows a built-in operator.
    user_ops: Vec<String>,
    /// Counter for the names of the functions that size bindings (`let [n] ...`) become.
    size_lets: u32,
}

/// A binary operator as seen in infix position.
enum Infix {
    Op(BinOp),
    Fun(Box<Expr>),
    With,
    Range,
}

/// One `let` header of a chain `let a = x let b = y in body`.
enum LetHead {
    Pat(Pat, Expr),
    Fun {
        name: String,
        name_span: Span,
        type_params: Vec<TypeParam>,
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        value: Expr,
    },
    With {
        name: String,
        name_span: Span,
        indices: Vec<DimIndex>,
        value: Expr,
    },
    /// `let [n]... pat = value`: becomes `let f [n]... pat = body in f value`, with `f` a name
    /// no program can write (`n` takes its value from the size of `value`, as for a function's
    /// size parameter).
    Sized {
        fname: String,
        sizes: Vec<TypeParam>,
        pat: Pat,
        value: Expr,
    },
}

/// Whether a name is an operator symbol (`+^`, `>->`) rather than an identifier.
fn is_operator_name(n: &str) -> bool {
    n.chars()
        .next()
        .is_some_and(|c| !c.is_alphanumeric() && c != '_')
}

/// Whether size `n` occurs in a type (in a dimension or a size argument).
fn type_mentions_size(t: &TypeExp, n: &str) -> bool {
    fn size(d: &SizeExp, n: &str) -> bool {
        match d {
            SizeExp::Named(q) => q.quals.is_empty() && q.name == n,
            SizeExp::Bin(_, a, b) => size(a, n) || size(b, n),
            // An expression's names are uses, not sizes the type binds.
            SizeExp::Any | SizeExp::Const(_) | SizeExp::Expr(_) => false,
        }
    }
    match t {
        TypeExp::Named(_, args, _) => args.iter().any(|a| match a {
            TypeArgExp::Size(d, _) => size(d, n),
            TypeArgExp::Type(t) => type_mentions_size(t, n),
        }),
        TypeExp::Tuple(ts, _) => ts.iter().any(|t| type_mentions_size(t, n)),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, _, t)| type_mentions_size(t, n)),
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, _, ts)| ts)
            .any(|t| type_mentions_size(t, n)),
        TypeExp::Array(d, t, _) => size(d, n) || type_mentions_size(t, n),
        TypeExp::Unique(t, _) => type_mentions_size(t, n),
        TypeExp::Arrow(_, a, r, _) => type_mentions_size(a, n) || type_mentions_size(r, n),
        TypeExp::Exists(bound, t, _) => !bound.iter().any(|b| b == n) && type_mentions_size(t, n),
    }
}

/// Whether size `n` occurs in a type annotation in pattern `p`.
fn pat_mentions_size(p: &Pat, n: &str) -> bool {
    match &p.kind {
        PatKind::Ascribed(q, t) => type_mentions_size(t, n) || pat_mentions_size(q, n),
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter().any(|q| pat_mentions_size(q, n)),
        PatKind::Record(fs) => fs.iter().any(|(_, _, q)| pat_mentions_size(q, n)),
        PatKind::Attr(_, q) => pat_mentions_size(q, n),
        _ => false,
    }
}

/// The operator names a pattern binds (`(+^)`, `((+), x)`).
fn pat_operators(p: &Pat, out: &mut Vec<String>) {
    match &p.kind {
        PatKind::Id(n) if is_operator_name(n) => out.push(n.clone()),
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
            ps.iter().for_each(|q| pat_operators(q, out))
        }
        PatKind::Record(fs) => fs.iter().for_each(|(_, _, q)| pat_operators(q, out)),
        PatKind::Ascribed(q, _) | PatKind::Attr(_, q) => pat_operators(q, out),
        _ => {}
    }
}

/// The builtin binary operator spelled `s`.
fn builtin_op(s: &str) -> Option<BinOp> {
    use BinOp::*;
    Some(match s {
        "+" => Add,
        "-" => Sub,
        "*" => Mul,
        "/" => Div,
        "%" => Mod,
        "//" => Quot,
        "%%" => Rem,
        "**" => Pow,
        "<<" => Shl,
        ">>" => Shr,
        ">>>" => UShr,
        "&" => BitAnd,
        "|" => BitOr,
        "^" => BitXor,
        "==" => Eq,
        "!=" => Neq,
        "<" => Lt,
        "<=" => Le,
        ">" => Gt,
        ">=" => Ge,
        "&&" => LogAnd,
        "||" => LogOr,
        "|>" => PipeRight,
        "<|" => PipeLeft,
        "++" => Concat,
        _ => return None,
    })
}

/// Precedence level and right-associativity of an operator symbol, determined (as in Futhark) by
/// its leading characters.
fn symbol_prec(s: &str) -> (u8, bool) {
    if s.starts_with("|>") {
        (5, false)
    } else if s.starts_with("<|") {
        (6, true)
    } else if s.starts_with("||") {
        (7, false)
    } else if s.starts_with("&&") {
        (8, false)
    } else if s.starts_with("<<") || s.starts_with(">>") {
        (11, false)
    } else if s.starts_with('<') || s.starts_with('>') || s.starts_with('=') || s.starts_with('!') {
        (9, false)
    } else if s.starts_with('&') || s.starts_with('^') || s.starts_with('|') {
        (10, false)
    } else if s.starts_with('+') || s.starts_with('-') {
        (12, false)
    } else if s.starts_with("**") {
        (14, false)
    } else {
        (13, false)
    }
}

/// The size expression an expression written inside `[...]` denotes: `i64` (or unsuffixed)
/// constants and unqualified names combined with `+`, `-`, `*` are [`SizeExp`]s of their own;
/// any other expression, also as an operand of those (`[opaque 1 * b]`), is [`SizeExp::Expr`].
fn size_of_expr(e: Expr) -> SizeExp {
    match &e.kind {
        ExprKind::Lit(Literal::Int(v, None | Some(PrimType::Int(IntType::I64)))) => {
            if let Ok(v) = i64::try_from(*v) {
                return SizeExp::Const(v);
            }
        }
        ExprKind::Var(q) if q.quals.is_empty() => return SizeExp::Named(q.clone()),
        _ => {}
    }
    match e.kind {
        ExprKind::BinOp(OpRef::Builtin(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul)), a, b) => {
            let op = match op {
                BinOp::Add => SizeOp::Add,
                BinOp::Sub => SizeOp::Sub,
                _ => SizeOp::Mul,
            };
            SizeExp::Bin(op, Box::new(size_of_expr(*a)), Box::new(size_of_expr(*b)))
        }
        kind => SizeExp::Expr(Box::new(Expr { kind, ..e })),
    }
}

/// A string literal as the expression it is sugar for (as in Futhark): the array of its UTF-8
/// bytes as `u8` literals, `[0]u8` when empty.
fn string_exp(bytes: &[u8], span: Span) -> Expr {
    let lits = bytes
        .iter()
        .map(|&b| Expr::new(ExprKind::Lit(Literal::Int(b.into(), Some(U8))), span))
        .collect();
    let arr = Expr::new(ExprKind::ArrayLit(lits), span);
    if bytes.is_empty() {
        let u8_ty = TypeExp::Named(QualName::unqual("u8"), vec![], span);
        let ty = TypeExp::Array(SizeExp::Const(0), Box::new(u8_ty), span);
        Expr::new(ExprKind::Ascribe(Box::new(arr), ty), span)
    } else {
        arr
    }
}

const U8: PrimType = PrimType::Int(IntType::U8);

const PREC_RANGE: u8 = 2;
const PREC_BACKTICK: u8 = 3;
const PREC_WITH: u8 = 4;
const PREC_PIPE: u8 = 5;

impl Parser {
    fn new(src: &str, file: FileId) -> Result<Parser, Diagnostics> {
        let toks = lex(src, file)?;
        Ok(Parser {
            toks,
            pos: 0,
            file,
            depth: 0,
            tree: 0,
            user_ops: vec![],
            size_lets: 0,
        })
    }

    // ---------------------------------------------------------------- token helpers

    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    fn peek_at(&self, n: usize) -> &Tok {
        let i = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[i].tok
    }

    fn tok_at(&self, n: usize) -> &Token {
        let i = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn span(&self) -> Span {
        self.tok_at(0).span
    }

    /// The span of the previously consumed token.
    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            Span::new(self.file, 0, 0)
        } else {
            self.toks[self.pos - 1].span
        }
    }

    fn bump(&mut self) -> Token {
        let t = self.tok_at(0).clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn at(&self, t: &Tok) -> bool {
        self.peek() == t
    }

    fn at_kw(&self, k: Keyword) -> bool {
        *self.peek() == Tok::Keyword(k)
    }

    fn at_symbol(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Symbol(x) if x == s)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.at(t) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn at_bracket(&self) -> bool {
        matches!(self.peek(), Tok::LBracket | Tok::IndexBracket)
    }

    /// Whether the current token directly follows the previous one (no whitespace).
    fn adjacent(&self, n: usize) -> bool {
        !self.tok_at(n).space_before
    }

    fn error_expected(&self, what: &str) -> Diagnostic {
        let t = self.tok_at(0);
        Diagnostic::error(
            t.span,
            format!("expected {what}, found {}", t.tok.describe()),
        )
        .with_label(format!("expected {what}"))
    }

    fn expect(&mut self, t: &Tok, what: &str) -> PResult<Span> {
        if self.at(t) {
            Ok(self.bump().span)
        } else {
            Err(self.error_expected(what))
        }
    }

    fn expect_kw(&mut self, k: Keyword) -> PResult<Span> {
        self.expect(&Tok::Keyword(k), &format!("`{}`", k.as_str()))
    }

    fn expect_eof(&mut self) -> PResult<()> {
        if self.at(&Tok::Eof) {
            Ok(())
        } else {
            Err(self.error_expected("end of input"))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Ident(s) => Ok((s, self.bump().span)),
            _ => Err(self.error_expected(what)),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        self.tree += 1;
        if self.depth > MAX_DEPTH || self.tree > MAX_TREE_DEPTH {
            Err(
                Diagnostic::error(self.span(), "expression nested too deeply")
                    .with_label("nesting limit reached here")
                    .with_note(format!(
                        "the parser accepts at most {MAX_DEPTH} levels of nesting"
                    )),
            )
        } else {
            Ok(())
        }
    }

    fn leave(&mut self) {
        self.depth -= 1;
        self.tree -= 1;
    }

    /// Account for `n` more levels of tree depth built without recursion.
    fn deepen(&mut self, n: u32) -> PResult<()> {
        self.tree += n;
        if self.tree > MAX_TREE_DEPTH {
            Err(
                Diagnostic::error(self.span(), "expression nested too deeply")
                    .with_label("nesting limit reached here")
                    .with_note(format!(
                        "the syntax tree may be at most {MAX_TREE_DEPTH} levels deep"
                    )),
            )
        } else {
            Ok(())
        }
    }

    fn guarded<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.enter()?;
        let r = f(self);
        self.leave();
        r
    }

    /// Error for a construct starting at the current token that the subset does not have.
    fn unsupported_here(&self, what: &str) -> Diagnostic {
        Diagnostic::not_supported(self.span(), what)
    }

    // ---------------------------------------------------------------- declarations

    fn program(&mut self) -> PResult<Program> {
        let mut decs = Vec::new();
        while !self.at(&Tok::Eof) {
            decs.push(self.dec()?);
        }
        Ok(Program { decs })
    }

    fn attrs(&mut self) -> PResult<Vec<Attr>> {
        let mut attrs = Vec::new();
        while self.at(&Tok::HashBracket) {
            attrs.push(self.attr_block()?);
        }
        Ok(attrs)
    }

    /// `#[attr]`
    fn attr_block(&mut self) -> PResult<Attr> {
        self.expect(&Tok::HashBracket, "`#[`")?;
        let a = self.attr()?;
        self.expect(&Tok::RBracket, "`]` to close the attribute")?;
        Ok(a)
    }

    fn attr(&mut self) -> PResult<Attr> {
        self.guarded(|p| match p.peek().clone() {
            Tok::Ident(name) => {
                let sp = p.bump().span;
                if p.at(&Tok::LParen) {
                    p.bump();
                    let mut args = Vec::new();
                    while !p.at(&Tok::RParen) {
                        args.push(p.attr()?);
                        if !p.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    let end = p.expect(&Tok::RParen, "`)` or `,`")?;
                    Ok(Attr::Call(name, args, sp.to(end)))
                } else {
                    Ok(Attr::Atom(name, sp))
                }
            }
            Tok::Keyword(k) => {
                // Attributes such as `#[unsafe]` are ordinary words; keywords are allowed too.
                let sp = p.bump().span;
                Ok(Attr::Atom(k.as_str().to_string(), sp))
            }
            Tok::Int {
                value,
                suffix: None,
                ..
            } => {
                let sp = p.bump().span;
                let v = i64::try_from(value).map_err(|_| {
                    Diagnostic::error(sp, "literal out of range")
                        .with_label("too large for an attribute")
                })?;
                Ok(Attr::Int(v, sp))
            }
            _ => Err(p.error_expected("an attribute")),
        })
    }

    fn dec(&mut self) -> PResult<Dec> {
        let start = self.span();
        let attrs = self.attrs()?;
        match self.peek() {
            Tok::Keyword(Keyword::Def | Keyword::Entry | Keyword::Let) => {
                Ok(Dec::Val(self.val_dec(attrs, start)?))
            }
            Tok::Keyword(Keyword::Type) => {
                if let Some(a) = attrs.first() {
                    return Err(Diagnostic::not_supported(
                        a.span(),
                        "attributes on type declarations",
                    ));
                }
                Ok(Dec::Type(self.type_dec()?))
            }
            Tok::Keyword(
                k @ (Keyword::Local
                | Keyword::Module
                | Keyword::Open
                | Keyword::Include
                | Keyword::Import),
            ) => {
                let k = *k;
                if let Some(a) = attrs.first() {
                    return Err(Diagnostic::not_supported(
                        a.span(),
                        format!("attributes on `{}` declarations", k.as_str()),
                    ));
                }
                self.module_level_dec(k, start)
            }
            Tok::Keyword(Keyword::Val) => Err(Diagnostic::error(
                self.span(),
                "`val` specifications belong in module types (`module type S = { val ... }`)",
            )),
            _ => Err(self.error_expected("a declaration (`def`, `entry` or `type`)")),
        }
    }

    // ---------------------------------------------------------------- modules

    /// `local dec`, `module ...`, `module type ...`, `open m`, `include m`, `import "p"`; the
    /// current token is the keyword `k`.
    fn module_level_dec(&mut self, k: Keyword, start: Span) -> PResult<Dec> {
        self.bump();
        match k {
            Keyword::Local => {
                let d = self.guarded(|p| p.dec())?;
                let span = start.to(d.span());
                Ok(Dec::Local(Box::new(d), span))
            }
            Keyword::Module if self.at_kw(Keyword::Type) => {
                self.bump();
                let (name, _) = self.ident("a module type name")?;
                self.expect(&Tok::Equals, "`=`")?;
                let sig = self.sig_exp()?;
                let span = start.to(sig.span());
                Ok(Dec::ModType(ModTypeDec { name, sig, span }))
            }
            Keyword::Module => {
                let (name, name_span) = self.ident("a module name")?;
                let mut params = Vec::new();
                while self.at(&Tok::LParen) {
                    let p0 = self.bump().span;
                    let (pname, _) = self.ident("a module parameter name")?;
                    self.expect(&Tok::Colon, "`:` and the parameter's module type")?;
                    let sig = self.sig_exp()?;
                    let end = self.expect(&Tok::RParen, "`)`")?;
                    params.push(ModParam {
                        name: pname,
                        sig,
                        span: p0.to(end),
                    });
                }
                let sig = if self.eat(&Tok::Colon) {
                    Some(self.sig_exp()?)
                } else {
                    None
                };
                self.expect(&Tok::Equals, "`=`")?;
                let body = self.mod_exp()?;
                let span = start.to(body.span());
                Ok(Dec::Module(ModDec {
                    name,
                    name_span,
                    params,
                    sig,
                    body,
                    span,
                }))
            }
            Keyword::Open | Keyword::Include => {
                let m = self.mod_exp()?;
                let span = start.to(m.span());
                Ok(if k == Keyword::Open {
                    Dec::Open(m, span)
                } else {
                    Dec::Include(m, span)
                })
            }
            _ => {
                let (path, end) = self.string_lit("the path of the file to import")?;
                Ok(Dec::Import(path, start.to(end)))
            }
        }
    }

    /// A string literal's contents (escapes decoded), which must be UTF-8.
    fn string_lit(&mut self, what: &str) -> PResult<(String, Span)> {
        let Tok::Str(bytes) = self.peek().clone() else {
            return Err(self.error_expected(what));
        };
        let sp = self.bump().span;
        let s = String::from_utf8(bytes)
            .map_err(|_| Diagnostic::error(sp, format!("{what} is not valid UTF-8")))?;
        Ok((s, sp))
    }

    /// Declarations up to the closing `}` of a module body (consumed); returns its span.
    fn decs_until_rbrace(&mut self) -> PResult<(Vec<Dec>, Span)> {
        let mut decs = Vec::new();
        while !self.at(&Tok::RBrace) {
            if self.at(&Tok::Eof) {
                return Err(self.error_expected("`}` to close the module"));
            }
            decs.push(self.guarded(|p| p.dec())?);
        }
        let end = self.bump().span;
        Ok((decs, end))
    }

    /// A module expression: applications of atoms, optionally ascribed (`m : S`).
    fn mod_exp(&mut self) -> PResult<ModExp> {
        self.guarded(|p| {
            let mut m = p.mod_atom()?;
            while matches!(p.peek(), Tok::Ident(_) | Tok::LBrace | Tok::LParen) {
                let arg = p.mod_atom()?;
                let span = m.span().to(arg.span());
                m = ModExp::Apply(Box::new(m), Box::new(arg), span);
            }
            while p.eat(&Tok::Colon) {
                let sig = p.sig_exp()?;
                let span = m.span().to(sig.span());
                m = ModExp::Ascribe(Box::new(m), sig, span);
            }
            Ok(m)
        })
    }

    /// `M.N`, `{ decs }`, `(m)` or `import "path"`.
    fn mod_atom(&mut self) -> PResult<ModExp> {
        let start = self.span();
        match self.peek() {
            Tok::Ident(_) => {
                let (q, span) = self.qual_name()?;
                Ok(ModExp::Var(q, span))
            }
            Tok::LBrace => {
                self.bump();
                let (decs, end) = self.decs_until_rbrace()?;
                Ok(ModExp::Struct(decs, start.to(end)))
            }
            Tok::LParen => {
                self.bump();
                let m = self.mod_exp()?;
                self.expect(&Tok::RParen, "`)`")?;
                Ok(m)
            }
            Tok::Keyword(Keyword::Import) => {
                self.bump();
                let (path, end) = self.string_lit("the path of the file to import")?;
                Ok(ModExp::Import(path, start.to(end)))
            }
            Tok::Backslash => {
                Err(self.unsupported_here("anonymous parametric modules (`\\(p: S) -> m`)"))
            }
            _ => Err(self.error_expected("a module expression")),
        }
    }

    /// A module type: a name or `{ specs }`, refined by any number of `with t = T`.
    fn sig_exp(&mut self) -> PResult<SigExp> {
        self.guarded(|p| {
            let start = p.span();
            let mut s = match p.peek() {
                Tok::Ident(_) => {
                    let (q, span) = p.qual_name()?;
                    SigExp::Var(q, span)
                }
                Tok::LBrace => {
                    p.bump();
                    let mut specs = Vec::new();
                    while !p.at(&Tok::RBrace) {
                        if p.at(&Tok::Eof) {
                            return Err(p.error_expected("`}` to close the module type"));
                        }
                        specs.push(p.spec()?);
                    }
                    let end = p.bump().span;
                    SigExp::Specs(specs, start.to(end))
                }
                Tok::LParen => {
                    if matches!(p.peek_at(1), Tok::Ident(_)) && *p.peek_at(2) == Tok::Colon {
                        return Err(p.unsupported_here("parametric module types (`(P: S) -> S'`)"));
                    }
                    p.bump();
                    let s = p.sig_exp()?;
                    p.expect(&Tok::RParen, "`)`")?;
                    s
                }
                _ => return Err(p.error_expected("a module type")),
            };
            if p.at(&Tok::Arrow) {
                return Err(p.unsupported_here("parametric module types (`S -> S'`)"));
            }
            while p.at_kw(Keyword::With) {
                let w = p.bump().span;
                let (name, _) = p.qual_name()?;
                let params = p.type_params()?;
                p.expect(&Tok::Equals, "`=`")?;
                let def = p.type_exp()?;
                let span = start.to(def.span());
                let r = TypeRefinement {
                    name,
                    params,
                    span: w.to(def.span()),
                    def,
                };
                s = SigExp::With(Box::new(s), r, span);
            }
            Ok(s)
        })
    }

    /// One specification of a module type: `val`, `type`, `module` or `include`.
    fn spec(&mut self) -> PResult<Spec> {
        // Attributes on specifications (`#[...] val f : t`) carry nothing for vkad.
        self.attrs()?;
        let start = self.span();
        match self.peek() {
            Tok::Keyword(Keyword::Val) => {
                self.bump();
                let name = match self.peek().clone() {
                    Tok::Ident(n) | Tok::Symbol(n) => {
                        self.bump();
                        n
                    }
                    Tok::LParen if matches!(self.peek_at(1), Tok::Symbol(_)) => {
                        self.bump();
                        let Tok::Symbol(n) = self.bump().tok else {
                            return Err(self.error_expected("an operator"));
                        };
                        self.expect(&Tok::RParen, "`)`")?;
                        n
                    }
                    _ => return Err(self.error_expected("a name or operator to specify")),
                };
                let type_params = self.type_params()?;
                self.expect(&Tok::Colon, "`:` and the value's type")?;
                let ty = self.type_exp()?;
                let span = start.to(ty.span());
                Ok(Spec::Val {
                    name,
                    type_params,
                    ty,
                    span,
                })
            }
            Tok::Keyword(Keyword::Type) => {
                self.bump();
                let liftedness = self.liftedness();
                let (name, end) = self.ident("a type name")?;
                let params = self.type_params()?;
                let def = if self.eat(&Tok::Equals) {
                    Some(self.type_exp()?)
                } else {
                    None
                };
                let span = start.to(def.as_ref().map_or(end, |d| d.span()));
                Ok(Spec::Type {
                    name,
                    liftedness,
                    params,
                    def,
                    span,
                })
            }
            Tok::Keyword(Keyword::Module) => {
                self.bump();
                let (name, _) = self.ident("a module name")?;
                self.expect(&Tok::Colon, "`:` and the module's type")?;
                let sig = self.sig_exp()?;
                let span = start.to(sig.span());
                Ok(Spec::Module { name, sig, span })
            }
            Tok::Keyword(Keyword::Include) => {
                self.bump();
                let sig = self.sig_exp()?;
                let span = start.to(sig.span());
                Ok(Spec::Include(sig, span))
            }
            _ => Err(self.error_expected("a specification (`val`, `type`, `module` or `include`)")),
        }
    }

    /// The `^` or `~` right after `type`.
    fn liftedness(&mut self) -> Liftedness {
        if self.adjacent(0) && self.at_symbol("^") {
            self.bump();
            Liftedness::Lifted
        } else if self.adjacent(0) && self.at(&Tok::Tilde) {
            self.bump();
            Liftedness::SizeLifted
        } else {
            Liftedness::Unlifted
        }
    }

    fn val_dec(&mut self, attrs: Vec<Attr>, start: Span) -> PResult<ValDec> {
        let kw = self.bump();
        let entry = kw.tok == Tok::Keyword(Keyword::Entry);
        let (name, name_span, type_params, params) = self.val_dec_head(entry)?;
        let mark = self.user_ops.len();
        self.bind_pat_ops(&params);
        let r = self.val_dec_rest(entry, name, name_span, type_params, params, attrs, start);
        self.user_ops.truncate(mark);
        let dec = r?;
        if is_operator_name(&dec.name) {
            self.user_ops.push(dec.name.clone());
        }
        Ok(dec)
    }

    /// The name and parameters of a declaration after `def`/`entry`: `name tparams params`,
    /// `(op) tparams params`, or the infix form `p1 op p2`.
    fn val_dec_head(&mut self, entry: bool) -> PResult<(String, Span, Vec<TypeParam>, Vec<Pat>)> {
        if let Some((name, name_span)) = self.binding_op()? {
            if entry {
                return Err(Diagnostic::not_supported(
                    name_span,
                    "an entry point named by an operator",
                ));
            }
            let type_params = self.type_params()?;
            let params = self.param_pats()?;
            return Ok((name, name_span, type_params, params));
        }
        if self.infix_definition_here() {
            let p1 = self.inner_pat()?;
            let Tok::Symbol(name) = self.peek().clone() else {
                return Err(self.error_expected("an operator"));
            };
            let name_span = self.bump().span;
            if name == "!" {
                return Err(Diagnostic::error(
                    name_span,
                    "`!` is a prefix operator and cannot be used as an infix operator",
                ));
            }
            if entry {
                return Err(Diagnostic::not_supported(
                    name_span,
                    "an entry point named by an operator",
                ));
            }
            let p2 = self.inner_pat()?;
            return Ok((name, name_span, vec![], vec![p1, p2]));
        }
        let (name, name_span) = self.ident("a name to define")?;
        let type_params = self.type_params()?;
        let params = self.param_pats()?;
        if let Tok::Symbol(_) = self.peek() {
            return Err(self.error_expected("a parameter, `:` or `=`"));
        }
        Ok((name, name_span, type_params, params))
    }

    #[allow(clippy::too_many_arguments)]
    fn val_dec_rest(
        &mut self,
        entry: bool,
        name: String,
        name_span: Span,
        type_params: Vec<TypeParam>,
        params: Vec<Pat>,
        attrs: Vec<Attr>,
        start: Span,
    ) -> PResult<ValDec> {
        let ret = if self.eat(&Tok::Colon) {
            Some(self.type_exp()?)
        } else {
            None
        };
        self.expect(
            &Tok::Equals,
            if ret.is_some() {
                "`=`"
            } else {
                "`=`, `:` or a parameter"
            },
        )?;
        let body = self.exp()?;
        let span = start.to(body.span);
        Ok(ValDec {
            entry,
            name,
            name_span,
            type_params,
            params,
            ret,
            body,
            attrs,
            span,
            hidden_sizes: vec![],
            ret_ty: None,
        })
    }

    fn type_dec(&mut self) -> PResult<TypeDec> {
        let start = self.bump().span;
        let liftedness = self.liftedness();
        let (name, _) = self.ident("a type name")?;
        let params = self.type_params()?;
        self.expect(&Tok::Equals, "`=`")?;
        let def = self.type_exp()?;
        Ok(TypeDec {
            name,
            liftedness,
            params,
            span: start.to(def.span()),
            def,
        })
    }

    /// Zero or more `'t`, `'^t`, `'~t`, `[n]`.
    fn type_params(&mut self) -> PResult<Vec<TypeParam>> {
        let mut out = Vec::new();
        loop {
            let start = self.span();
            let liftedness = match self.peek() {
                Tok::Tick => Liftedness::Unlifted,
                Tok::TickHat => Liftedness::Lifted,
                Tok::TickTilde => Liftedness::SizeLifted,
                Tok::LBracket | Tok::IndexBracket => {
                    self.bump();
                    let (n, _) = self.ident("a size parameter name")?;
                    let end = self.expect(&Tok::RBracket, "`]`")?;
                    out.push(TypeParam::Size(n, start.to(end)));
                    continue;
                }
                _ => return Ok(out),
            };
            self.bump();
            let (name, end) = self.ident("a type parameter name")?;
            out.push(TypeParam::Type {
                name,
                liftedness,
                span: start.to(end),
            });
        }
    }

    // ---------------------------------------------------------------- types

    fn type_exp(&mut self) -> PResult<TypeExp> {
        self.guarded(|p| p.type_exp_inner())
    }

    fn type_exp_inner(&mut self) -> PResult<TypeExp> {
        let start = self.span();
        // `(x: t1) -> t2`
        if self.at(&Tok::LParen)
            && matches!(self.peek_at(1), Tok::Ident(_))
            && *self.peek_at(2) == Tok::Colon
        {
            self.bump();
            let (name, _) = self.ident("a parameter name")?;
            self.bump();
            let t1 = self.type_exp()?;
            self.expect(&Tok::RParen, "`)`")?;
            self.expect(&Tok::Arrow, "`->` after a named parameter type")?;
            let t2 = self.type_exp()?;
            let span = start.to(t2.span());
            return Ok(TypeExp::Arrow(Some(name), Box::new(t1), Box::new(t2), span));
        }
        if self.eat(&Tok::Question) {
            let mut names = Vec::new();
            while self.at_bracket() {
                self.bump();
                let (n, _) = self.ident("a size name")?;
                self.expect(&Tok::RBracket, "`]`")?;
                names.push(n);
            }
            if names.is_empty() {
                return Err(self.error_expected("`[` after `?`"));
            }
            self.expect(&Tok::Dot, "`.` after the existential sizes")?;
            let t = self.type_exp()?;
            let span = start.to(t.span());
            return Ok(TypeExp::Exists(names, Box::new(t), span));
        }
        if matches!(self.peek(), Tok::Constructor(_)) {
            return self.sum_type();
        }
        let t = self.type_term()?;
        if self.eat(&Tok::Arrow) {
            let t2 = self.type_exp()?;
            let span = start.to(t2.span());
            return Ok(TypeExp::Arrow(None, Box::new(t), Box::new(t2), span));
        }
        Ok(t)
    }

    /// `*t`, or a (possibly applied) type atom.
    fn type_term(&mut self) -> PResult<TypeExp> {
        self.guarded(|p| {
            let start = p.span();
            if p.at_symbol("*") {
                p.bump();
                let t = p.type_term()?;
                let span = start.to(t.span());
                return Ok(TypeExp::Unique(Box::new(t), span));
            }
            let head = p.type_atom()?;
            let TypeExp::Named(name, mut args, mut span) = head else {
                return Ok(head);
            };
            if !args.is_empty() {
                return Ok(TypeExp::Named(name, args, span));
            }
            loop {
                match p.peek() {
                    Tok::LBracket | Tok::IndexBracket => {
                        let s0 = p.bump().span;
                        let size = p.size_exp()?;
                        let end = p.expect(&Tok::RBracket, "`]`")?;
                        args.push(TypeArgExp::Size(size, s0.to(end)));
                        span = span.to(end);
                    }
                    Tok::Ident(_) | Tok::LParen | Tok::LBrace => {
                        let t = p.type_atom()?;
                        span = span.to(t.span());
                        args.push(TypeArgExp::Type(t));
                    }
                    _ => break,
                }
            }
            Ok(TypeExp::Named(name, args, span))
        })
    }

    fn type_atom(&mut self) -> PResult<TypeExp> {
        self.guarded(|p| {
            let start = p.span();
            match p.peek().clone() {
                Tok::LParen => {
                    p.bump();
                    if p.at(&Tok::RParen) {
                        let end = p.bump().span;
                        return Ok(TypeExp::Tuple(vec![], start.to(end)));
                    }
                    let first = p.type_exp()?;
                    if p.at(&Tok::RParen) {
                        p.bump();
                        return Ok(first);
                    }
                    let mut elems = vec![first];
                    while p.eat(&Tok::Comma) {
                        if p.at(&Tok::RParen) {
                            break;
                        }
                        elems.push(p.type_exp()?);
                    }
                    let end = p.expect(&Tok::RParen, "`,` or `)`")?;
                    Ok(TypeExp::Tuple(elems, start.to(end)))
                }
                Tok::LBracket | Tok::IndexBracket => {
                    p.bump();
                    let size = p.size_exp()?;
                    p.expect(&Tok::RBracket, "`]`")?;
                    let elem = p.type_term()?;
                    let span = start.to(elem.span());
                    Ok(TypeExp::Array(size, Box::new(elem), span))
                }
                Tok::Ident(_) => {
                    let (q, span) = p.qual_name()?;
                    Ok(TypeExp::Named(q, vec![], span))
                }
                Tok::LBrace => p.record_type(),
                Tok::Constructor(_) => Err(p.unsupported_here("sum types")),
                _ => Err(p.error_expected("a type")),
            }
        })
    }

    /// `#a | #b t1 t2`: constructors separated by `|`, each with payload types (type atoms).
    fn sum_type(&mut self) -> PResult<TypeExp> {
        let start = self.span();
        let mut constrs = Vec::new();
        loop {
            let Tok::Constructor(c) = self.peek().clone() else {
                return Err(self.error_expected("a constructor `#name`"));
            };
            let cspan = self.bump().span;
            let mut payload = Vec::new();
            while matches!(
                self.peek(),
                Tok::Ident(_) | Tok::LParen | Tok::LBrace | Tok::LBracket | Tok::IndexBracket
            ) {
                payload.push(self.type_atom()?);
            }
            constrs.push((c, cspan, payload));
            if !self.at_symbol("|") {
                break;
            }
            self.bump();
        }
        Ok(TypeExp::Sum(constrs, start.to(self.prev_span())))
    }

    /// `{a: t1, b: t2}`; `{}` is the unit type.
    fn record_type(&mut self) -> PResult<TypeExp> {
        let start = self.expect(&Tok::LBrace, "`{`")?;
        let mut fields = Vec::new();
        while !self.at(&Tok::RBrace) {
            let (name, span) = self.field_name()?;
            self.expect(&Tok::Colon, "`:` after a field name")?;
            fields.push((name, span, self.type_exp()?));
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let end = self.expect(&Tok::RBrace, "`,` or `}`")?;
        if fields.is_empty() {
            return Ok(TypeExp::Tuple(vec![], start.to(end)));
        }
        Ok(TypeExp::Record(fields, start.to(end)))
    }

    /// A record field name: an identifier or a natural number (`{0 = x}`, `r.1`).
    fn field_name(&mut self) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Ident(n) => Ok((n, self.bump().span)),
            Tok::Int {
                value,
                natural: true,
                suffix: None,
            } => Ok((value.to_string(), self.bump().span)),
            _ => Err(self.error_expected("a field name")),
        }
    }

    /// A name possibly qualified by adjacent `m.` prefixes.
    fn qual_name(&mut self) -> PResult<(QualName, Span)> {
        let (first, mut span) = self.ident("a name")?;
        let mut parts = vec![first];
        while self.at(&Tok::Dot)
            && self.adjacent(0)
            && self.adjacent(1)
            && matches!(self.peek_at(1), Tok::Ident(_))
        {
            self.bump();
            let (n, s) = self.ident("a name")?;
            parts.push(n);
            span = span.to(s);
        }
        let name = parts.pop().unwrap_or_default();
        Ok((QualName { quals: parts, name }, span))
    }

    /// The size inside `[...]` of an array type or size argument; the `[` has been consumed.
    /// Sizes built from constants and unqualified names with `+`, `-` and `*` (e.g. `[n*m]`)
    /// are size expressions; any other expression is [`SizeExp::Expr`].
    fn size_exp(&mut self) -> PResult<SizeExp> {
        match self.peek().clone() {
            Tok::RBracket => Ok(SizeExp::Any),
            Tok::Int { value, suffix, .. }
                if *self.peek_at(1) == Tok::RBracket
                    && matches!(suffix, None | Some(PrimType::I64)) =>
            {
                let sp = self.bump().span;
                let v = i64::try_from(value).map_err(|_| {
                    Diagnostic::error(sp, "literal out of range").with_label("too large for a size")
                })?;
                Ok(SizeExp::Const(v))
            }
            Tok::Ident(_) => {
                let save = self.pos;
                let (q, _) = self.qual_name()?;
                if self.at(&Tok::RBracket) {
                    return Ok(SizeExp::Named(q));
                }
                self.pos = save;
                let e = self.exp2(0)?;
                Ok(size_of_expr(e))
            }
            _ => {
                let e = self.exp2(0)?;
                Ok(size_of_expr(e))
            }
        }
    }

    // ---------------------------------------------------------------- patterns

    /// A full pattern: `#[attr] p`, `p : t` or an inner pattern.
    fn pat(&mut self) -> PResult<Pat> {
        self.guarded(|p| {
            let start = p.span();
            if p.at(&Tok::HashBracket) {
                let a = p.attr_block()?;
                let inner = p.pat()?;
                let span = start.to(inner.span);
                return Ok(Pat::new(PatKind::Attr(a, Box::new(inner)), span));
            }
            let inner = if let Tok::Constructor(c) = p.peek().clone() {
                p.bump();
                let payload = p.param_pats()?;
                let span = start.to(p.prev_span());
                Pat::new(PatKind::Constr(c, payload), span)
            } else {
                p.inner_pat()?
            };
            if p.eat(&Tok::Colon) {
                let t = p.type_exp()?;
                let span = start.to(t.span());
                return Ok(Pat::new(PatKind::Ascribed(Box::new(inner), t), span));
            }
            Ok(inner)
        })
    }

    fn starts_param_pat(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Ident(_)
                | Tok::Underscore
                | Tok::LParen
                | Tok::LBrace
                | Tok::Constructor(_)
                | Tok::Int { .. }
                | Tok::Float { .. }
        ) || self.at_kw(Keyword::True)
            || self.at_kw(Keyword::False)
    }

    fn param_pats(&mut self) -> PResult<Vec<Pat>> {
        let mut out = Vec::new();
        while self.starts_param_pat() {
            out.push(self.inner_pat()?);
        }
        Ok(out)
    }

    fn inner_pat(&mut self) -> PResult<Pat> {
        self.guarded(|p| {
            let start = p.span();
            match p.peek().clone() {
                Tok::Ident(n) => {
                    p.bump();
                    Ok(Pat::new(PatKind::Id(n), start))
                }
                Tok::Underscore => {
                    p.bump();
                    Ok(Pat::new(PatKind::Wildcard, start))
                }
                Tok::LParen => {
                    p.bump();
                    if p.at(&Tok::RParen) {
                        let end = p.bump().span;
                        return Ok(Pat::new(PatKind::Tuple(vec![]), start.to(end)));
                    }
                    if matches!(p.peek(), Tok::Symbol(_)) && *p.peek_at(1) == Tok::RParen {
                        // `(op)`: binds the operator `op` (an ordinary name otherwise).
                        p.pos -= 1;
                        let (name, _) = p.binding_op()?.ok_or_else(|| p.error_expected("`(`"))?;
                        return Ok(Pat::new(PatKind::Id(name), start.to(p.prev_span())));
                    }
                    let first = p.pat()?;
                    if p.at(&Tok::RParen) {
                        let end = p.bump().span;
                        let mut first = first;
                        first.span = start.to(end);
                        return Ok(first);
                    }
                    let mut elems = vec![first];
                    while p.eat(&Tok::Comma) {
                        if p.at(&Tok::RParen) {
                            break;
                        }
                        elems.push(p.pat()?);
                    }
                    let end = p.expect(&Tok::RParen, "`,` or `)`")?;
                    Ok(Pat::new(PatKind::Tuple(elems), start.to(end)))
                }
                Tok::LBrace => {
                    p.bump();
                    let mut fields = Vec::new();
                    while !p.at(&Tok::RBrace) {
                        let (name, span) = p.field_name()?;
                        let pat = if p.eat(&Tok::Equals) {
                            p.pat()?
                        } else if p.eat(&Tok::Colon) {
                            // `{a: t}` is `{a = (a: t)}`.
                            let t = p.type_exp()?;
                            let id = Pat::new(PatKind::Id(name.clone()), span);
                            let s = span.to(t.span());
                            Pat::new(PatKind::Ascribed(Box::new(id), t), s)
                        } else {
                            Pat::new(PatKind::Id(name.clone()), span)
                        };
                        fields.push((name, span, pat));
                        if !p.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    let end = p.expect(&Tok::RBrace, "`,` or `}`")?;
                    if fields.is_empty() {
                        return Ok(Pat::new(PatKind::Tuple(vec![]), start.to(end)));
                    }
                    Ok(Pat::new(PatKind::Record(fields), start.to(end)))
                }
                Tok::Constructor(c) => {
                    p.bump();
                    Ok(Pat::new(PatKind::Constr(c, vec![]), start))
                }
                Tok::Symbol(s)
                    if s == "-" && matches!(p.peek_at(1), Tok::Int { .. } | Tok::Float { .. }) =>
                {
                    p.bump();
                    let Expr {
                        kind: ExprKind::Lit(l),
                        span,
                        ..
                    } = p.atom()?
                    else {
                        return Err(p.error_expected("a number"));
                    };
                    Ok(Pat::new(PatKind::Lit(l, true), start.to(span)))
                }
                Tok::Int { .. }
                | Tok::Float { .. }
                | Tok::Keyword(Keyword::True | Keyword::False) => {
                    let Expr {
                        kind: ExprKind::Lit(l),
                        span,
                        ..
                    } = p.atom()?
                    else {
                        return Err(p.error_expected("a literal"));
                    };
                    Ok(Pat::new(PatKind::Lit(l, false), span))
                }
                _ => Err(p.error_expected("a pattern")),
            }
        })
    }

    // ---------------------------------------------------------------- expressions

    /// An expression, including trailing type ascriptions `e : t` and coercions `e :> t`.
    fn exp(&mut self) -> PResult<Expr> {
        self.guarded(|p| {
            let e = p.exp2(0)?;
            p.ascriptions(e)
        })
    }

    fn ascriptions(&mut self, mut e: Expr) -> PResult<Expr> {
        loop {
            if self.eat(&Tok::Colon) {
                let t = self.type_exp()?;
                let span = e.span.to(t.span());
                e = Expr::new(ExprKind::Ascribe(Box::new(e), t), span);
            } else if self.eat(&Tok::ColonGt) {
                let t = self.type_exp()?;
                let span = e.span.to(t.span());
                e = Expr::new(ExprKind::Coerce(Box::new(e), t), span);
            } else {
                return Ok(e);
            }
        }
    }

    /// The infix operator at the current token, with its precedence and associativity.
    fn infix_here(&self) -> Option<(u8, bool)> {
        if let Some(n) = self.qual_symbol_len() {
            // `a T.+ b`: a module's operator, with the operator's precedence.
            if let Tok::Symbol(s) = self.peek_at(2 * n) {
                return Some(symbol_prec(s));
            }
        }
        match self.peek() {
            Tok::Symbol(s) => Some(symbol_prec(s)),
            Tok::Backtick => Some((PREC_BACKTICK, false)),
            Tok::Keyword(Keyword::With) => Some((PREC_WITH, false)),
            Tok::DotDot | Tok::DotDotDot | Tok::DotDotLt | Tok::DotDotGt => {
                Some((PREC_RANGE, false))
            }
            _ => None,
        }
    }

    /// Whether the operator at the current token is directly followed by `)` (a left section).
    fn op_then_rparen(&self) -> bool {
        if let Some(n) = self.qual_symbol_len() {
            return *self.peek_at(2 * n + 1) == Tok::RParen;
        }
        match self.peek() {
            Tok::Symbol(_) => *self.peek_at(1) == Tok::RParen,
            Tok::Backtick => {
                // `` `a.b.f` ) ``
                let mut i = 1;
                loop {
                    match self.peek_at(i) {
                        Tok::Ident(_) | Tok::Dot => i += 1,
                        Tok::Backtick => return *self.peek_at(i + 1) == Tok::RParen,
                        _ => return false,
                    }
                }
            }
            _ => false,
        }
    }

    /// If the tokens from here are a qualified operator symbol `m.n.+` (written without spaces),
    /// the number of qualifiers.
    fn qual_symbol_len(&self) -> Option<usize> {
        let mut i = 0;
        let mut n = 0;
        loop {
            match (self.peek_at(i), self.peek_at(i + 1)) {
                (Tok::Ident(_), Tok::Dot) if self.adjacent(i + 1) && self.adjacent(i + 2) => {
                    n += 1;
                    i += 2;
                }
                (Tok::Symbol(_), _) if n > 0 => return Some(n),
                _ => return None,
            }
        }
    }

    /// A qualified operator `m.n.+` (see [`Parser::qual_symbol_len`]) as a variable.
    fn qual_symbol(&mut self) -> PResult<Expr> {
        let n = self.qual_symbol_len().unwrap_or(0);
        let start = self.span();
        let mut quals = Vec::new();
        for _ in 0..n {
            if let Tok::Ident(m) = self.bump().tok {
                quals.push(m);
            }
            self.bump();
        }
        let Tok::Symbol(name) = self.bump().tok else {
            return Err(self.error_expected("an operator"));
        };
        let span = start.to(self.prev_span());
        Ok(Expr::new(ExprKind::Var(QualName { quals, name }), span))
    }

    /// `` `qualname` `` as an operator; the current token is the opening backtick.
    fn backtick_op(&mut self) -> PResult<Expr> {
        self.expect(&Tok::Backtick, "`` ` ``")?;
        let (q, span) = self.qual_name()?;
        self.expect(&Tok::Backtick, "a closing `` ` ``")?;
        Ok(Expr::new(ExprKind::Var(q), span))
    }

    /// The operator at the current token (a symbol or backticked name), consumed.
    fn infix_op(&mut self) -> PResult<OpRef> {
        if let Some(n) = self.qual_symbol_len() {
            return self.qualified_infix_op(n);
        }
        match self.peek().clone() {
            Tok::Symbol(s) => match builtin_op(&s) {
                Some(op) if !self.user_ops.contains(&s) => {
                    self.bump();
                    Ok(OpRef::Builtin(op))
                }
                None if s == "!" => Err(self.error_expected("an infix operator")),
                _ => {
                    // A user-defined operator (or one shadowing a built-in operator), or the
                    // prelude's `>->` and `<-<`: the function bound to the symbol's name.
                    let span = self.bump().span;
                    let q = QualName {
                        quals: vec![],
                        name: s.clone(),
                    };
                    Ok(OpRef::Fun(Box::new(Expr::new(ExprKind::Var(q), span))))
                }
            },
            Tok::Backtick => Ok(OpRef::Fun(Box::new(self.backtick_op()?))),
            _ => Err(self.error_expected("an operator")),
        }
    }

    /// Precedence climbing over binary operators, ranges and `with`.
    fn exp2(&mut self, min_prec: u8) -> PResult<Expr> {
        self.guarded(|p| p.exp2_inner(min_prec))
    }

    fn exp2_inner(&mut self, min_prec: u8) -> PResult<Expr> {
        let base = self.tree;
        let r = self.exp2_loop(min_prec);
        self.tree = base;
        r
    }

    fn exp2_loop(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while let Some((prec, right)) = self.infix_here() {
            if prec < min_prec || self.op_then_rparen() {
                break;
            }
            let next_min = if right { prec } else { prec + 1 };
            self.deepen(1)?;
            let op = match self.peek() {
                Tok::Ident(_) => Infix::Fun(Box::new(self.qual_symbol()?)),
                Tok::Keyword(Keyword::With) => Infix::With,
                Tok::DotDot | Tok::DotDotDot | Tok::DotDotLt | Tok::DotDotGt => Infix::Range,
                Tok::Backtick => Infix::Fun(Box::new(self.backtick_op()?)),
                _ => match self.infix_op()? {
                    OpRef::Builtin(b) => Infix::Op(b),
                    OpRef::Fun(f) => Infix::Fun(f),
                },
            };
            lhs = match op {
                Infix::Op(b) => {
                    let rhs = self.exp2(next_min)?;
                    let span = lhs.span.to(rhs.span);
                    Expr::new(
                        ExprKind::BinOp(OpRef::Builtin(b), Box::new(lhs), Box::new(rhs)),
                        span,
                    )
                }
                Infix::Fun(f) => {
                    let rhs = self.exp2(next_min)?;
                    let span = lhs.span.to(rhs.span);
                    Expr::new(
                        ExprKind::BinOp(OpRef::Fun(f), Box::new(lhs), Box::new(rhs)),
                        span,
                    )
                }
                Infix::With if !self.at_update_bracket(1) => {
                    self.bump();
                    let mut path = vec![self.field_name()?];
                    while self.at(&Tok::Dot) {
                        self.bump();
                        path.push(self.field_name()?);
                    }
                    self.expect(&Tok::Equals, "`=`")?;
                    let value = self.exp2(PREC_PIPE)?;
                    let span = lhs.span.to(value.span);
                    Expr::new(
                        ExprKind::RecordUpdate {
                            record: Box::new(lhs),
                            path,
                            value: Box::new(value),
                        },
                        span,
                    )
                }
                Infix::With => {
                    self.bump();
                    let indices = self.update_path()?;
                    self.expect(&Tok::Equals, "`=`")?;
                    let value = self.exp2(PREC_PIPE)?;
                    let span = lhs.span.to(value.span);
                    Expr::new(
                        ExprKind::Update {
                            array: Box::new(lhs),
                            indices,
                            value: Box::new(value),
                        },
                        span,
                    )
                }
                Infix::Range => self.range(lhs)?,
            };
        }
        Ok(lhs)
    }

    /// The rest of a range whose start is `start`; the current token is a range operator.
    fn range(&mut self, start: Expr) -> PResult<Expr> {
        let mut second = None;
        if self.eat(&Tok::DotDot) {
            second = Some(Box::new(self.exp2(PREC_RANGE + 1)?));
        }
        let kind = match self.peek() {
            Tok::DotDotDot => RangeKind::Inclusive,
            Tok::DotDotLt => RangeKind::UpToExclusive,
            Tok::DotDotGt => RangeKind::DownToExclusive,
            _ => return Err(self.error_expected("`...`, `..<` or `..>`").with_note(
                "ranges are written `a...b`, `a..<b`, `a..>b`, or with a second element `a..b...c`",
            )),
        };
        self.bump();
        let end = self.exp2(PREC_RANGE + 1)?;
        if matches!(
            self.peek(),
            Tok::DotDot | Tok::DotDotDot | Tok::DotDotLt | Tok::DotDotGt
        ) {
            return Err(Diagnostic::error(self.span(), "ranges cannot be chained")
                .with_label("a second range operator")
                .with_note("put the inner range in parentheses"));
        }
        let span = start.span.to(end.span);
        Ok(Expr::new(
            ExprKind::Range {
                start: Box::new(start),
                second,
                end: Box::new(end),
                kind,
            },
            span,
        ))
    }

    /// Whether the token `n` ahead starts the index path of an array update (`with [i] = v`),
    /// as opposed to a record field path (`with a.b = v`).
    fn at_update_bracket(&self, n: usize) -> bool {
        !matches!(self.peek_at(n), Tok::Ident(_) | Tok::Int { .. })
    }

    /// `[i, j]` (one or more adjacent bracket groups of fixed indices before a final one) after
    /// `with`, or after `let xs`.
    fn update_path(&mut self) -> PResult<Vec<DimIndex>> {
        if self.at(&Tok::Dot) || matches!(self.peek(), Tok::Ident(_) | Tok::Int { .. }) {
            return Err(self.unsupported_here("record and tuple field updates"));
        }
        if !self.at_bracket() {
            return Err(self.error_expected("`[`"));
        }
        let mut indices = Vec::new();
        while self.at_bracket() {
            let start = self.span();
            if indices.iter().any(|d| matches!(d, DimIndex::Slice(..))) {
                return Err(Diagnostic::not_supported(
                    start,
                    "a further index after a slice in an update",
                ));
            }
            self.bump();
            indices.extend(self.dim_indices()?);
        }
        if self.at(&Tok::Dot) {
            return Err(self.unsupported_here("record and tuple field updates"));
        }
        Ok(indices)
    }

    /// `i, j:k, ...]` after an opening bracket, including the `]`.
    fn dim_indices(&mut self) -> PResult<Vec<DimIndex>> {
        let mut out = Vec::new();
        loop {
            if self.at(&Tok::RBracket) {
                break;
            }
            out.push(self.dim_index()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RBracket, "`,` or `]`")?;
        if out.is_empty() {
            return Err(
                Diagnostic::error(self.prev_span(), "empty index").with_label("expected an index")
            );
        }
        Ok(out)
    }

    fn dim_index(&mut self) -> PResult<DimIndex> {
        let ends = |p: &Self| matches!(p.peek(), Tok::Colon | Tok::Comma | Tok::RBracket);
        let start = if self.at(&Tok::Colon) {
            None
        } else {
            Some(self.exp2(0)?)
        };
        if !self.eat(&Tok::Colon) {
            return match start {
                Some(e) => Ok(DimIndex::Fix(e)),
                None => Err(self.error_expected("an index")),
            };
        }
        let end = if ends(self) {
            None
        } else {
            Some(self.exp2(0)?)
        };
        let stride = if self.eat(&Tok::Colon) {
            if matches!(self.peek(), Tok::Comma | Tok::RBracket) {
                None
            } else {
                Some(self.exp2(0)?)
            }
        } else {
            None
        };
        Ok(DimIndex::Slice(start, end, stride))
    }

    /// Prefix operators, the forms that extend to the right (`if`, `let`, ...), and application.
    fn unary(&mut self) -> PResult<Expr> {
        self.guarded(|p| {
            let start = p.span();
            match p.peek().clone() {
                Tok::Symbol(s) if s == "-" || s == "!" => {
                    p.bump();
                    let op = if s == "-" { UnOp::Neg } else { UnOp::Not };
                    let e = p.unary()?;
                    let span = start.to(e.span);
                    Ok(Expr::new(ExprKind::UnOp(op, Box::new(e)), span))
                }
                Tok::Keyword(Keyword::If) => {
                    p.bump();
                    let c = p.exp()?;
                    p.expect_kw(Keyword::Then)?;
                    let t = p.exp()?;
                    p.expect_kw(Keyword::Else)?;
                    let f = p.exp()?;
                    let span = start.to(f.span);
                    Ok(Expr::new(
                        ExprKind::If(Box::new(c), Box::new(t), Box::new(f)),
                        span,
                    ))
                }
                Tok::Keyword(Keyword::Let) => p.let_chain(),
                Tok::Keyword(Keyword::Loop) => p.loop_exp(),
                Tok::Keyword(Keyword::Assert) => {
                    p.bump();
                    let c = p.atom_postfix()?;
                    let e = p.exp()?;
                    let span = start.to(e.span);
                    Ok(Expr::new(ExprKind::Assert(Box::new(c), Box::new(e)), span))
                }
                Tok::HashBracket => {
                    let a = p.attr_block()?;
                    let e = p.exp()?;
                    let span = start.to(e.span);
                    Ok(Expr::new(ExprKind::Attr(a, Box::new(e)), span))
                }
                Tok::Backslash => p.lambda(),
                Tok::Keyword(Keyword::Match) => {
                    p.bump();
                    let scrutinee = p.exp()?;
                    let mut cases = Vec::new();
                    while p.at_kw(Keyword::Case) {
                        p.bump();
                        let pat = p.pat()?;
                        p.expect(&Tok::Arrow, "`->` after a pattern")?;
                        let body = p.exp()?;
                        cases.push((pat, body));
                    }
                    if cases.is_empty() {
                        return Err(p.error_expected("`case`"));
                    }
                    let span = start.to(p.prev_span());
                    Ok(Expr::new(ExprKind::Match(Box::new(scrutinee), cases), span))
                }
                _ => p.apply(),
            }
        })
    }

    fn lambda(&mut self) -> PResult<Expr> {
        let start = self.expect(&Tok::Backslash, "`\\`")?;
        let params = self.param_pats()?;
        if params.is_empty() {
            return Err(self.error_expected("a lambda parameter"));
        }
        let ret = if self.eat(&Tok::Colon) {
            Some(self.type_term()?)
        } else {
            None
        };
        self.expect(&Tok::Arrow, "`->`")?;
        let mark = self.user_ops.len();
        self.bind_pat_ops(&params);
        let body = self.exp();
        self.user_ops.truncate(mark);
        let body = body?;
        let span = start.to(body.span);
        Ok(Expr::new(
            ExprKind::Lambda {
                params,
                ret,
                body: Box::new(body),
            },
            span,
        ))
    }

    fn loop_exp(&mut self) -> PResult<Expr> {
        let start = self.bump().span;
        let pat = self.pat()?;
        let init = if self.eat(&Tok::Equals) {
            Some(Box::new(self.exp()?))
        } else {
            None
        };
        let form = match self.peek() {
            Tok::Keyword(Keyword::For) => {
                self.bump();
                if matches!(self.peek(), Tok::Ident(_))
                    && matches!(self.peek_at(1), Tok::Symbol(s) if s == "<")
                {
                    let (name, name_span) = self.ident("a loop variable")?;
                    self.bump();
                    let bound = self.exp()?;
                    LoopForm::For(name, name_span, Box::new(bound))
                } else {
                    let p = self.pat()?;
                    self.expect_kw(Keyword::In)?;
                    let xs = self.exp()?;
                    LoopForm::ForIn(p, Box::new(xs))
                }
            }
            Tok::Keyword(Keyword::While) => {
                self.bump();
                LoopForm::While(Box::new(self.exp()?))
            }
            _ => {
                return Err(self.error_expected(if init.is_some() {
                    "`for` or `while`"
                } else {
                    "`=`, `for` or `while`"
                }))
            }
        };
        self.expect_kw(Keyword::Do)?;
        let body = self.exp()?;
        let span = start.to(body.span);
        Ok(Expr::new(
            ExprKind::Loop {
                pat,
                init,
                form,
                body: Box::new(body),
            },
            span,
        ))
    }

    /// `let ... = e in body`, including chains where `in` is left out before the next `let`.
    /// Parsed iteratively so that long chains do not deepen the recursion.
    fn let_chain(&mut self) -> PResult<Expr> {
        let base = self.tree;
        let mark = self.user_ops.len();
        let r = self.let_chain_inner();
        self.user_ops.truncate(mark);
        self.tree = base;
        r
    }

    fn let_chain_inner(&mut self) -> PResult<Expr> {
        let mut heads: Vec<(Span, LetHead)> = Vec::new();
        let body = loop {
            self.deepen(1)?;
            let start = self.expect_kw(Keyword::Let)?;
            let head = self.let_head()?;
            match &head {
                LetHead::Pat(pat, _) | LetHead::Sized { pat, .. } => {
                    self.bind_pat_ops(std::slice::from_ref(pat))
                }
                LetHead::Fun { name, .. } if is_operator_name(name) => {
                    self.user_ops.push(name.clone())
                }
                _ => {}
            }
            heads.push((start, head));
            if self.at_kw(Keyword::In) {
                self.bump();
                if !self.at_kw(Keyword::Let) {
                    break self.exp()?;
                }
            } else if !self.at_kw(Keyword::Let) {
                let mut d = self.error_expected("`in`");
                if matches!(
                    self.peek(),
                    Tok::Keyword(Keyword::Def | Keyword::Entry | Keyword::Type) | Tok::Eof
                ) {
                    d = d.with_note("a `let` needs a body: `let x = e in body`");
                }
                return Err(d);
            }
        };
        let mut body = body;
        while let Some((start, head)) = heads.pop() {
            let span = start.to(body.span);
            let kind = match head {
                LetHead::Pat(pat, value) => ExprKind::Let {
                    pat,
                    value: Box::new(value),
                    body: Box::new(body),
                },
                LetHead::Fun {
                    name,
                    name_span,
                    type_params,
                    params,
                    ret,
                    value,
                } => ExprKind::LetFun {
                    name,
                    name_span,
                    type_params,
                    params,
                    ret,
                    value: Box::new(value),
                    body: Box::new(body),
                },
                LetHead::Sized {
                    fname,
                    sizes,
                    pat,
                    value,
                } => {
                    let q = QualName {
                        quals: vec![],
                        name: fname.clone(),
                    };
                    let vspan = value.span;
                    let call = Expr::new(
                        ExprKind::Apply(
                            Box::new(Expr::new(ExprKind::Var(q), pat.span)),
                            vec![value],
                        ),
                        vspan,
                    );
                    ExprKind::LetFun {
                        name: fname,
                        name_span: pat.span,
                        type_params: sizes,
                        params: vec![pat],
                        ret: None,
                        value: Box::new(body),
                        body: Box::new(call),
                    }
                }
                LetHead::With {
                    name,
                    name_span,
                    indices,
                    value,
                } => ExprKind::LetWith {
                    name,
                    name_span,
                    indices,
                    value: Box::new(value),
                    body: Box::new(body),
                },
            };
            body = Expr::new(kind, span);
        }
        Ok(body)
    }

    /// What follows `let` up to and including the bound value.
    fn let_head(&mut self) -> PResult<LetHead> {
        if self.at_bracket() {
            return self.size_let_head();
        }
        let op_fun = self.at(&Tok::LParen)
            && matches!(self.peek_at(1), Tok::Symbol(_))
            && *self.peek_at(2) == Tok::RParen
            && matches!(
                self.peek_at(3),
                Tok::Ident(_)
                    | Tok::Underscore
                    | Tok::LParen
                    | Tok::Tick
                    | Tok::TickHat
                    | Tok::TickTilde
                    | Tok::LBracket
            );
        if op_fun {
            // `let (op) params = e`: a local operator function.
            let (name, name_span) = self
                .binding_op()?
                .ok_or_else(|| self.error_expected("`(`"))?;
            return self.let_fun_rest(name, name_span);
        }
        if let Tok::Ident(name) = self.peek().clone() {
            let next = self.peek_at(1).clone();
            let next_adjacent = self.adjacent(1);
            if next == Tok::IndexBracket {
                let name_span = self.bump().span;
                let indices = self.update_path()?;
                self.expect(&Tok::Equals, "`=`")?;
                let value = self.exp()?;
                return Ok(LetHead::With {
                    name,
                    name_span,
                    indices,
                    value,
                });
            }
            if next == Tok::Dot && next_adjacent {
                return Err(Diagnostic::not_supported(
                    self.tok_at(1).span,
                    "record and tuple field updates",
                ));
            }
            let is_fun = matches!(
                next,
                Tok::Ident(_)
                    | Tok::Underscore
                    | Tok::LParen
                    | Tok::LBrace
                    | Tok::Tick
                    | Tok::TickHat
                    | Tok::TickTilde
                    | Tok::LBracket
            );
            if is_fun {
                let name_span = self.bump().span;
                return self.let_fun_rest(name, name_span);
            }
        }
        let pat = self.pat()?;
        self.expect(&Tok::Equals, "`=`")?;
        let value = self.exp()?;
        Ok(LetHead::Pat(pat, value))
    }

    fn starts_atom(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Int { .. }
                | Tok::Float { .. }
                | Tok::Ident(_)
                | Tok::LParen
                | Tok::LBracket
                | Tok::IndexBracket
                | Tok::LBrace
                | Tok::Str(_)
                | Tok::Constructor(_)
                | Tok::Hole
                | Tok::Keyword(Keyword::True | Keyword::False)
        )
    }

    /// Function application: an atom followed by argument atoms, the last of which may be a
    /// lambda.
    fn apply(&mut self) -> PResult<Expr> {
        let head = self.atom_postfix()?;
        let mut args = Vec::new();
        loop {
            // `a T.< b`: `T.<` is an infix operator, not an argument.
            if self.starts_atom() && self.qual_symbol_len().is_none() {
                args.push(self.atom_postfix()?);
            } else if self.at(&Tok::Backslash) {
                let l = self.guarded(|p| p.lambda())?;
                args.push(l);
                break;
            } else {
                break;
            }
        }
        if args.is_empty() {
            return Ok(head);
        }
        let span = head
            .span
            .to(args.last().map(|a| a.span).unwrap_or(head.span));
        // `#c a b`: a constructor's payload.
        if let ExprKind::Constr(c, payload) = &head.kind {
            if payload.is_empty() {
                return Ok(Expr::new(ExprKind::Constr(c.clone(), args), span));
            }
        }
        Ok(Expr::new(ExprKind::Apply(Box::new(head), args), span))
    }

    /// An atom followed by projections `.0` and indexing `[i]`.
    fn atom_postfix(&mut self) -> PResult<Expr> {
        self.guarded(|p| {
            let base = p.tree;
            let r = p.postfix_loop();
            p.tree = base;
            r
        })
    }

    fn postfix_loop(&mut self) -> PResult<Expr> {
        let p = self;
        {
            let mut e = p.atom()?;
            loop {
                p.deepen(1)?;
                if p.at(&Tok::IndexBracket) {
                    p.bump();
                    let idx = p.dim_indices()?;
                    let span = e.span.to(p.prev_span());
                    e = Expr::new(ExprKind::Index(Box::new(e), idx), span);
                } else if p.at(&Tok::Dot) && p.adjacent(0) && p.adjacent(1) {
                    match p.peek_at(1).clone() {
                        Tok::Int {
                            value,
                            natural: true,
                            ..
                        } => {
                            p.bump();
                            let sp = p.bump().span;
                            let span = e.span.to(sp);
                            e = Expr::new(ExprKind::Project(Box::new(e), value.to_string()), span);
                        }
                        Tok::Ident(f) => {
                            p.bump();
                            let sp = p.bump().span;
                            let span = e.span.to(sp);
                            e = Expr::new(ExprKind::Project(Box::new(e), f), span);
                        }
                        Tok::LBracket | Tok::IndexBracket | Tok::LParen => {
                            return Err(Diagnostic::not_supported(
                                p.tok_at(1).span,
                                "local open of an expression that is not a module name",
                            ))
                        }
                        _ => break,
                    }
                } else {
                    break;
                }
            }
            Ok(e)
        }
    }

    fn atom(&mut self) -> PResult<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Int { value, suffix, .. } => {
                self.bump();
                Ok(Expr::new(ExprKind::Lit(Literal::Int(value, suffix)), start))
            }
            Tok::Float { value, suffix } => {
                self.bump();
                Ok(Expr::new(
                    ExprKind::Lit(Literal::Float(value, suffix)),
                    start,
                ))
            }
            Tok::Keyword(Keyword::True) => {
                self.bump();
                Ok(Expr::new(ExprKind::Lit(Literal::Bool(true)), start))
            }
            Tok::Keyword(Keyword::False) => {
                self.bump();
                Ok(Expr::new(ExprKind::Lit(Literal::Bool(false)), start))
            }
            Tok::Ident(_) => {
                let (q, span) = self.qual_name()?;
                // Local open `m.(e)`.
                if self.at(&Tok::Dot)
                    && self.adjacent(0)
                    && self.adjacent(1)
                    && *self.peek_at(1) == Tok::LParen
                {
                    // Any module: the names are resolved before type checking
                    // (`crate::modules`).
                    self.bump();
                    self.bump();
                    let e = self.exp()?;
                    let end = self.expect(&Tok::RParen, "`)`")?;
                    return Ok(Expr::new(ExprKind::LocalOpen(q, Box::new(e)), span.to(end)));
                }
                // `M.x` names a module member and `r.a.b` (with `r` a variable) is record
                // field access: `crate::modules` resolves modules, the type checker the rest.
                Ok(Expr::new(ExprKind::Var(q), span))
            }
            Tok::LParen => self.paren(),
            Tok::LBracket | Tok::IndexBracket => {
                self.bump();
                let mut elems = Vec::new();
                while !self.at(&Tok::RBracket) {
                    elems.push(self.exp()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                let end = self.expect(&Tok::RBracket, "`,` or `]`")?;
                Ok(Expr::new(ExprKind::ArrayLit(elems), start.to(end)))
            }
            Tok::LBrace => self.record_exp(),
            Tok::Str(bytes) => {
                self.bump();
                Ok(string_exp(&bytes, start))
            }
            Tok::Constructor(c) => {
                self.bump();
                Ok(Expr::new(ExprKind::Constr(c, vec![]), start))
            }
            Tok::Hole => Err(self.unsupported_here("typed holes (`???`)")),
            Tok::Keyword(Keyword::Match) => Err(self.unsupported_here("`match` expressions")),
            _ => Err(self.error_expected("an expression")),
        }
    }

    /// `{a = e1, b}`; `{}` is the unit value.
    fn record_exp(&mut self) -> PResult<Expr> {
        let start = self.expect(&Tok::LBrace, "`{`")?;
        let mut fields = Vec::new();
        while !self.at(&Tok::RBrace) {
            let (name, span) = self.field_name()?;
            let e = if self.eat(&Tok::Equals) {
                self.exp()?
            } else if name.bytes().all(|c| c.is_ascii_digit()) {
                return Err(self.error_expected("`=` after a numbered field"));
            } else {
                Expr::new(ExprKind::Var(QualName::unqual(name.clone())), span)
            };
            fields.push((name, span, e));
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let end = self.expect(&Tok::RBrace, "`,` or `}`")?;
        if fields.is_empty() {
            return Ok(Expr::new(ExprKind::Tuple(vec![]), start.to(end)));
        }
        Ok(Expr::new(ExprKind::Record(fields), start.to(end)))
    }

    /// Everything that starts with `(`: unit, parentheses, tuples and sections.
    fn paren(&mut self) -> PResult<Expr> {
        let start = self.expect(&Tok::LParen, "`(`")?;
        if self.at(&Tok::RParen) {
            let end = self.bump().span;
            return Ok(Expr::new(ExprKind::Tuple(vec![]), start.to(end)));
        }
        // `(.[i])`
        if self.at(&Tok::Dot) && matches!(self.peek_at(1), Tok::LBracket | Tok::IndexBracket) {
            return self.index_section(start);
        }
        // `(.0)`, `(.1.0)`
        if self.at(&Tok::Dot) {
            let mut fields = Vec::new();
            while self.eat(&Tok::Dot) {
                match self.peek().clone() {
                    Tok::Int {
                        value,
                        natural: true,
                        ..
                    } => {
                        self.bump();
                        fields.push(value.to_string());
                    }
                    Tok::Ident(f) => {
                        self.bump();
                        fields.push(f);
                    }
                    Tok::LBracket | Tok::IndexBracket => {
                        return Err(self.unsupported_here("index sections"))
                    }
                    _ => return Err(self.error_expected("a tuple field number")),
                }
            }
            let end = self.expect(&Tok::RParen, "`.` or `)`")?;
            return Ok(Expr::new(ExprKind::ProjectSection(fields), start.to(end)));
        }
        // `(f32.*)`, `(f64.+ 1)`: qualified operators are module functions.
        if self.qual_symbol_len().is_some() {
            let op = OpRef::Fun(Box::new(self.qual_symbol()?));
            if self.at(&Tok::RParen) {
                let end = self.bump().span;
                return Ok(Expr::new(ExprKind::OpSection(op), start.to(end)));
            }
            let e = self.exp2(0)?;
            let end = self.expect(&Tok::RParen, "`)`")?;
            return Ok(Expr::new(
                ExprKind::RightSection(op, Box::new(e)),
                start.to(end),
            ));
        }
        // `(+)`, `` (`f`) ``, `(-)`
        if self.op_then_rparen() {
            let op = self.infix_op()?;
            let end = self.expect(&Tok::RParen, "`)`")?;
            return Ok(Expr::new(ExprKind::OpSection(op), start.to(end)));
        }
        // Right sections `(+ 2)`, `` (`f` x) ``; `(-x)` and `(!x)` are prefix operators.
        let is_right_section = match self.peek() {
            Tok::Symbol(s) => s != "-" && s != "!",
            Tok::Backtick => true,
            _ => false,
        };
        if is_right_section {
            let op = self.infix_op()?;
            let e = self.exp2(0)?;
            let end = self.expect(&Tok::RParen, "`)`")?;
            return Ok(Expr::new(
                ExprKind::RightSection(op, Box::new(e)),
                start.to(end),
            ));
        }
        let e = self.exp2(0)?;
        if self.op_then_rparen() {
            let op = self.infix_op()?;
            let end = self.expect(&Tok::RParen, "`)`")?;
            return Ok(Expr::new(
                ExprKind::LeftSection(op, Box::new(e)),
                start.to(end),
            ));
        }
        let e = self.ascriptions(e)?;
        if self.at(&Tok::RParen) {
            let end = self.bump().span;
            let mut e = e;
            e.span = start.to(end);
            return Ok(e);
        }
        let mut elems = vec![e];
        while self.eat(&Tok::Comma) {
            if self.at(&Tok::RParen) {
                break;
            }
            elems.push(self.exp()?);
        }
        let end = self.expect(&Tok::RParen, "`,` or `)`")?;
        Ok(Expr::new(ExprKind::Tuple(elems), start.to(end)))
    }
}

/// User-defined operators, size bindings in `let` and index sections.
impl Parser {
    /// `(op)` in binding position (a declaration's name, a pattern): the operator's name.
    /// `None` (nothing consumed) where the tokens are not `(`, an operator symbol, `)`.
    fn binding_op(&mut self) -> PResult<Option<(String, Span)>> {
        let Tok::Symbol(name) = self.peek_at(1).clone() else {
            return Ok(None);
        };
        if !self.at(&Tok::LParen) || *self.peek_at(2) != Tok::RParen {
            return Ok(None);
        }
        let start = self.bump().span;
        let op_span = self.bump().span;
        let end = self.bump().span;
        if name == "!" {
            return Err(Diagnostic::error(
                op_span,
                "`!` is a prefix operator and cannot be used as an infix operator",
            ));
        }
        Ok(Some((name, start.to(end))))
    }

    /// Whether the tokens from here are an infix definition `p1 op p2` (after `def`), with `p1`
    /// a name, `_` or a parenthesised pattern.
    fn infix_definition_here(&self) -> bool {
        let after = match self.peek() {
            Tok::Ident(_) | Tok::Underscore => 1,
            Tok::LParen => {
                let mut depth = 0usize;
                let mut i = 0;
                loop {
                    match self.peek_at(i) {
                        Tok::LParen => depth += 1,
                        Tok::RParen => {
                            depth -= 1;
                            if depth == 0 {
                                break i + 1;
                            }
                        }
                        Tok::Eof => return false,
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => return false,
        };
        matches!(self.peek_at(after), Tok::Symbol(_))
    }

    /// Brings the operators bound by patterns into scope (for the rest of the scope being
    /// parsed; the caller restores `user_ops`).
    fn bind_pat_ops(&mut self, ps: &[Pat]) {
        let mut ops = vec![];
        for p in ps {
            pat_operators(p, &mut ops);
        }
        self.user_ops.extend(ops);
    }

    /// A local function after its name: type parameters, parameters, `: t`, `= e`.
    fn let_fun_rest(&mut self, name: String, name_span: Span) -> PResult<LetHead> {
        let type_params = self.type_params()?;
        let params = self.param_pats()?;
        if params.is_empty() {
            return Err(self.error_expected("a function parameter"));
        }
        let ret = if self.eat(&Tok::Colon) {
            Some(self.type_exp()?)
        } else {
            None
        };
        self.expect(&Tok::Equals, "`=`")?;
        let mark = self.user_ops.len();
        self.bind_pat_ops(&params);
        let value = self.exp();
        self.user_ops.truncate(mark);
        Ok(LetHead::Fun {
            name,
            name_span,
            type_params,
            params,
            ret,
            value: value?,
        })
    }

    /// `let [n] [m] pat = e` (the current token is the first `[`). As in Futhark, every size
    /// must occur in a type annotation in `pat` (`let [n] (xs: [n]i32) = e`).
    fn size_let_head(&mut self) -> PResult<LetHead> {
        let mut sizes = vec![];
        while self.at_bracket() {
            let start = self.bump().span;
            let (n, _) = self.ident("a size name")?;
            let end = self.expect(&Tok::RBracket, "`]`")?;
            sizes.push(TypeParam::Size(n, start.to(end)));
        }
        let pat = self.pat()?;
        for tp in &sizes {
            if let TypeParam::Size(n, span) = tp {
                if !pat_mentions_size(&pat, n) {
                    return Err(Diagnostic::error(
                        *span,
                        format!("size `{n}` unused in pattern"),
                    )
                    .with_label("not used in a type annotation of the pattern")
                    .with_note(format!(
                        "a size binding names the size of an annotated array: `let [{n}] (xs: [{n}]t) = ...`"
                    )));
                }
            }
        }
        self.expect(&Tok::Equals, "`=`")?;
        let value = self.exp()?;
        self.size_lets += 1;
        Ok(LetHead::Sized {
            fname: format!("let[{}]#{}", self.size_lets, pat.span.lo),
            sizes,
            pat,
            value,
        })
    }

    /// A qualified operator `m.op` in infix position (`x i32.+ y`), `n` qualifiers long: the
    /// module's function of that name.
    fn qualified_infix_op(&mut self, n: usize) -> PResult<OpRef> {
        let start = self.span();
        let mut quals = Vec::new();
        for _ in 0..n {
            if let Tok::Ident(m) = self.bump().tok {
                quals.push(m);
            }
            self.bump();
        }
        let Tok::Symbol(name) = self.bump().tok else {
            return Err(self.error_expected("an operator"));
        };
        let span = start.to(self.prev_span());
        let q = QualName { quals, name };
        Ok(OpRef::Fun(Box::new(Expr::new(ExprKind::Var(q), span))))
    }

    /// An index section `(.[i])`, `(.[i, j])`, `(.[i:j])` after its `(`, the current token being
    /// the `.`: the function `\x -> x[i]` (with a parameter name no program can write).
    fn index_section(&mut self, start: Span) -> PResult<Expr> {
        let dot = self.bump().span;
        if !self.at_bracket() {
            return Err(self.error_expected("`[`"));
        }
        self.bump();
        let idx = self.dim_indices()?;
        let idx_end = self.prev_span();
        let end = self.expect(&Tok::RParen, "`)`")?;
        let span = start.to(end);
        let x = "#section".to_string();
        let var = Expr::new(
            ExprKind::Var(QualName {
                quals: vec![],
                name: x.clone(),
            }),
            dot,
        );
        let body = Expr::new(ExprKind::Index(Box::new(var), idx), dot.to(idx_end));
        Ok(Expr::new(
            ExprKind::Lambda {
                params: vec![Pat::new(PatKind::Id(x), dot)],
                ret: None,
                body: Box::new(body),
            },
            span,
        ))
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
