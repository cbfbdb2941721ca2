//! The abstract syntax tree of the vkad language (a subset of Futhark).
//!
//! The parser ([`crate::syntax::parser`]) produces it with every `ty` field `None`; the type checker
//! ([`crate::typecheck`]) fills in every `Expr::ty` and `Pat::ty`; lowering ([`crate::lower`])
//! reads the annotated tree. See `docs/language.md` for the language itself.

use crate::diag::Span;
use crate::prim::PrimType;
use crate::syntax::types::Type;

/// A possibly qualified name: `x`, `f64.sqrt`, `i32.max`. `quals` are the module names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QualName {
    pub quals: Vec<String>,
    pub name: String,
}

impl QualName {
    pub fn unqual(name: impl Into<String>) -> QualName {
        QualName {
            quals: vec![],
            name: name.into(),
        }
    }
}

impl std::fmt::Display for QualName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for q in &self.quals {
            write!(f, "{q}.")?;
        }
        f.write_str(&self.name)
    }
}

/// An attribute `#[name]` or `#[name(args...)]`, e.g. `#[unsafe]`, `#[bound(100)]`.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    Atom(String, Span),
    Call(String, Vec<Attr>, Span),
    Int(i64, Span),
}

impl Attr {
    pub fn name(&self) -> Option<&str> {
        match self {
            Attr::Atom(n, _) | Attr::Call(n, _, _) => Some(n),
            Attr::Int(..) => None,
        }
    }
    pub fn span(&self) -> Span {
        match self {
            Attr::Atom(_, s) | Attr::Call(_, _, s) | Attr::Int(_, s) => *s,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    pub decs: Vec<Dec>,
}

// Declarations are few; boxing the large variant would only add noise at every use.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Dec {
    /// `def`, `entry` or top-level `let`.
    Val(ValDec),
    /// `type name params = t` (also `type^`, `type~`).
    Type(TypeDec),
    /// `module M (P: S)... : S' = m`. Modules are eliminated before type checking
    /// ([`crate::modules`]): the checker and lowering only see `Val` and `Type`.
    Module(ModDec),
    /// `module type S = s`
    ModType(ModTypeDec),
    /// `open m`: the members of `m` are in scope (and, in a module, part of it).
    Open(ModExp, Span),
    /// `include m` in a module: the same as `open m` (Futhark's `include` of a module type is
    /// [`Spec::Include`]).
    Include(ModExp, Span),
    /// `local dec`: `dec`'s names are in scope for the declarations that follow, but not part of
    /// the enclosing module (or file, for its importers).
    Local(Box<Dec>, Span),
    /// `import "path"`: the top-level declarations of `path.fut` are in scope.
    Import(String, Span),
}

impl Dec {
    pub fn span(&self) -> Span {
        match self {
            Dec::Val(v) => v.span,
            Dec::Type(t) => t.span,
            Dec::Module(m) => m.span,
            Dec::ModType(m) => m.span,
            Dec::Open(_, s) | Dec::Include(_, s) | Dec::Local(_, s) | Dec::Import(_, s) => *s,
        }
    }
}

/// `module name params : sig = body`
#[derive(Clone, Debug)]
pub struct ModDec {
    pub name: String,
    pub name_span: Span,
    /// `(P: S)` parameters: a module with parameters is a functor (a parametric module).
    pub params: Vec<ModParam>,
    /// The ascribed module type, if any.
    pub sig: Option<SigExp>,
    pub body: ModExp,
    pub span: Span,
}

/// A functor parameter `(name: sig)`.
#[derive(Clone, Debug)]
pub struct ModParam {
    pub name: String,
    pub sig: SigExp,
    pub span: Span,
}

/// `module type name = sig`
#[derive(Clone, Debug)]
pub struct ModTypeDec {
    pub name: String,
    pub sig: SigExp,
    pub span: Span,
}

/// A module expression.
#[derive(Clone, Debug)]
pub enum ModExp {
    /// `M`, `M.N`
    Var(QualName, Span),
    /// `{ decs }`
    Struct(Vec<Dec>, Span),
    /// Functor application `F A` (several arguments nest: `F A B` is `(F A) B`).
    Apply(Box<ModExp>, Box<ModExp>, Span),
    /// `m : S`
    Ascribe(Box<ModExp>, SigExp, Span),
    /// `import "path"` as a module: the file's top-level declarations.
    Import(String, Span),
}

impl ModExp {
    pub fn span(&self) -> Span {
        match self {
            ModExp::Var(_, s)
            | ModExp::Struct(_, s)
            | ModExp::Apply(_, _, s)
            | ModExp::Ascribe(_, _, s)
            | ModExp::Import(_, s) => *s,
        }
    }
}

/// A module type expression.
#[derive(Clone, Debug)]
pub enum SigExp {
    /// A named module type `S`, `M.S`.
    Var(QualName, Span),
    /// `{ specs }`
    Specs(Vec<Spec>, Span),
    /// `S with t params = T`: the refinement of an abstract type.
    With(Box<SigExp>, TypeRefinement, Span),
}

impl SigExp {
    pub fn span(&self) -> Span {
        match self {
            SigExp::Var(_, s) | SigExp::Specs(_, s) | SigExp::With(_, _, s) => *s,
        }
    }
}

/// `with name params = def`
#[derive(Clone, Debug)]
pub struct TypeRefinement {
    pub name: QualName,
    pub params: Vec<TypeParam>,
    pub def: TypeExp,
    pub span: Span,
}

/// A specification in a module type.
#[derive(Clone, Debug)]
pub enum Spec {
    /// `val name type_params : t` (`name` may be an operator symbol: `val + : t -> t -> t`).
    Val {
        name: String,
        type_params: Vec<TypeParam>,
        ty: TypeExp,
        span: Span,
    },
    /// `type name params` (abstract) or `type name params = t`.
    Type {
        name: String,
        liftedness: Liftedness,
        params: Vec<TypeParam>,
        def: Option<TypeExp>,
        span: Span,
    },
    /// `module name: S`
    Module {
        name: String,
        sig: SigExp,
        span: Span,
    },
    /// `include S`
    Include(SigExp, Span),
}

#[derive(Clone, Debug)]
pub struct ValDec {
    pub entry: bool,
    pub name: String,
    pub name_span: Span,
    pub type_params: Vec<TypeParam>,
    pub params: Vec<Pat>,
    pub ret: Option<TypeExp>,
    pub body: Expr,
    pub attrs: Vec<Attr>,
    pub span: Span,
    /// Filled by the type checker: the size parameters that no parameter's shape gives (found
    /// at each call from the function's type at that use, see the type checker's
    /// `size_expr_params`), in declaration order.
    pub hidden_sizes: Vec<String>,
    /// Filled by the type checker: the function's result type (after all its parameters), its
    /// size parameters by name, where the sizes that only the result mentions are found.
    pub ret_ty: Option<Type>,
}

#[derive(Clone, Debug)]
pub enum TypeParam {
    /// `[n]`
    Size(String, Span),
    /// `'t`, `'~t` (lifted: Sized/Lifted) or `'^t` (Lifted: may be a function type).
    Type {
        name: String,
        liftedness: Liftedness,
        span: Span,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liftedness {
    /// `'t`
    Unlifted,
    /// `'~t`
    SizeLifted,
    /// `'^t`
    Lifted,
}

#[derive(Clone, Debug)]
pub struct TypeDec {
    pub name: String,
    pub liftedness: Liftedness,
    pub params: Vec<TypeParam>,
    pub def: TypeExp,
    pub span: Span,
}

/// A type as written in the source.
#[derive(Clone, Debug)]
pub enum TypeExp {
    /// A named type applied to arguments: `i32`, `t`, `vec [n] f32`, `pair i32 f64`.
    Named(QualName, Vec<TypeArgExp>, Span),
    /// `(t1, t2, ...)`; `()` is the unit type.
    Tuple(Vec<TypeExp>, Span),
    /// `{a: t1, b: t2}` (fields as written).
    Record(Vec<(String, Span, TypeExp)>, Span),
    /// `#a | #b t1 t2` (constructors as written, with their payload types).
    Sum(Vec<(String, Span, Vec<TypeExp>)>, Span),
    /// `[d]t`, `[]t`.
    Array(SizeExp, Box<TypeExp>, Span),
    /// `*t` (unique).
    Unique(Box<TypeExp>, Span),
    /// `t1 -> t2` or `(x: t1) -> t2`.
    Arrow(Option<String>, Box<TypeExp>, Box<TypeExp>, Span),
    /// `?[n].t` (existential size).
    Exists(Vec<String>, Box<TypeExp>, Span),
}

impl TypeExp {
    /// The expressions written as sizes in this type ([`SizeExp::Expr`], also as operands of
    /// size arithmetic) in its array dimensions, through tuples, records and uniqueness, outer
    /// dimensions first: the sizes a coercion or an ascription evaluates.
    pub fn size_exprs(&self) -> Vec<&Expr> {
        fn size<'a>(d: &'a SizeExp, out: &mut Vec<&'a Expr>) {
            match d {
                SizeExp::Expr(e) => out.push(e),
                SizeExp::Bin(_, a, b) => {
                    size(a, out);
                    size(b, out);
                }
                SizeExp::Any | SizeExp::Const(_) | SizeExp::Named(_) => {}
            }
        }
        fn go<'a>(t: &'a TypeExp, out: &mut Vec<&'a Expr>) {
            match t {
                TypeExp::Array(d, elem, _) => {
                    size(d, out);
                    go(elem, out);
                }
                TypeExp::Tuple(ts, _) => ts.iter().for_each(|t| go(t, out)),
                TypeExp::Record(fs, _) => fs.iter().for_each(|f| go(&f.2, out)),
                TypeExp::Unique(t, _) => go(t, out),
                _ => {}
            }
        }
        let mut out = Vec::new();
        go(self, &mut out);
        out
    }

    /// [`TypeExp::size_exprs`], mutable (the type checker fills in their types).
    pub fn size_exprs_mut(&mut self) -> Vec<&mut Expr> {
        fn size<'a>(d: &'a mut SizeExp, out: &mut Vec<&'a mut Expr>) {
            match d {
                SizeExp::Expr(e) => out.push(e),
                SizeExp::Bin(_, a, b) => {
                    size(a, out);
                    size(b, out);
                }
                SizeExp::Any | SizeExp::Const(_) | SizeExp::Named(_) => {}
            }
        }
        fn go<'a>(t: &'a mut TypeExp, out: &mut Vec<&'a mut Expr>) {
            match t {
                TypeExp::Array(d, elem, _) => {
                    size(d, out);
                    go(elem, out);
                }
                TypeExp::Tuple(ts, _) => ts.iter_mut().for_each(|t| go(t, out)),
                TypeExp::Record(fs, _) => fs.iter_mut().for_each(|f| go(&mut f.2, out)),
                TypeExp::Unique(t, _) => go(t, out),
                _ => {}
            }
        }
        let mut out = Vec::new();
        go(self, &mut out);
        out
    }

    pub fn span(&self) -> Span {
        match self {
            TypeExp::Named(_, _, s)
            | TypeExp::Tuple(_, s)
            | TypeExp::Record(_, s)
            | TypeExp::Sum(_, s)
            | TypeExp::Array(_, _, s)
            | TypeExp::Unique(_, s)
            | TypeExp::Arrow(_, _, _, s)
            | TypeExp::Exists(_, _, s) => *s,
        }
    }
}

#[derive(Clone, Debug)]
pub enum TypeArgExp {
    Size(SizeExp, Span),
    Type(TypeExp),
}

/// The size in an array type.
#[derive(Clone, Debug)]
pub enum SizeExp {
    /// `[]`
    Any,
    /// `[3]`
    Const(i64),
    /// `[n]`
    Named(QualName),
    /// `[n*m]`, `[n+m]`, `[n-1]`: a size expression over constants and unqualified names (the
    /// operands are never [`SizeExp::Any`]).
    Bin(crate::syntax::types::SizeOp, Box<SizeExp>, Box<SizeExp>),
    /// `[opaque 1 * b]`, `[length xs]`: any other expression (of type `i64`). The type checker
    /// checks it where the type is a coercion's or an ascription's (`e :> [f x]t`), and lowering
    /// evaluates it there; elsewhere it is an unknown size, as `[]`.
    Expr(Box<Expr>),
}

/// Structural, except that two [`SizeExp::Expr`]s are equal when they are the same expression
/// of the source (the same span): expressions have no equality of their own.
impl PartialEq for SizeExp {
    fn eq(&self, other: &SizeExp) -> bool {
        match (self, other) {
            (SizeExp::Any, SizeExp::Any) => true,
            (SizeExp::Const(a), SizeExp::Const(b)) => a == b,
            (SizeExp::Named(a), SizeExp::Named(b)) => a == b,
            (SizeExp::Bin(o, a, b), SizeExp::Bin(p, c, d)) => o == p && a == c && b == d,
            (SizeExp::Expr(a), SizeExp::Expr(b)) => a.span == b.span,
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Pat {
    pub kind: PatKind,
    pub span: Span,
    /// Filled by the type checker.
    pub ty: Option<Type>,
}

#[derive(Clone, Debug)]
pub enum PatKind {
    Id(String),
    Wildcard,
    /// `(p1, p2, ...)`; `()` is the unit pattern.
    Tuple(Vec<Pat>),
    /// `{a, b = p, c: t}` (fields as written; `a` alone binds the field to the name `a`).
    Record(Vec<(String, Span, Pat)>),
    /// `#c p1 p2`: a constructor with patterns for its payload.
    Constr(String, Vec<Pat>),
    /// A literal (`1`, `-2`, `1.5`, `true`); `true` in the second field when negated (`-2`).
    Lit(Literal, bool),
    /// `(p: t)`
    Ascribed(Box<Pat>, TypeExp),
    /// A pattern annotated with attributes, `#[attr] p`.
    Attr(Attr, Box<Pat>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// An integer literal with its optional suffix type (`1`, `1i64`, `0xff`, `1u8`).
    /// A suffix of a float type (`1f32`) makes it a float literal of that type.
    Int(u128, Option<PrimType>),
    /// A decimal literal (`1.5`, `1e3`, `2.0f32`) with optional suffix.
    Float(f64, Option<PrimType>),
    Bool(bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `%` (rounds toward negative infinity, like `/`)
    Mod,
    /// `//` (truncates)
    Quot,
    /// `%%` (truncates)
    Rem,
    Pow,
    Shl,
    Shr,
    /// `>>>` (logical shift right)
    UShr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Neq,
    Lt,
    Le,
    Gt,
    Ge,
    LogAnd,
    LogOr,
    /// `|>`
    PipeRight,
    /// `<|`
    PipeLeft,
    /// `++`
    Concat,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Mod => "%",
            Quot => "//",
            Rem => "%%",
            Pow => "**",
            Shl => "<<",
            Shr => ">>",
            UShr => ">>>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Eq => "==",
            Neq => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            LogAnd => "&&",
            LogOr => "||",
            PipeRight => "|>",
            PipeLeft => "<|",
            Concat => "++",
        }
    }
}

/// The operator of a section or binary operator: a builtin operator or a backticked function.
#[derive(Clone, Debug)]
pub enum OpRef {
    Builtin(BinOp),
    /// `` `f` `` (the function is an expression, usually a variable).
    Fun(Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!x` (logical or bitwise not)
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeKind {
    /// `a..<b`
    UpToExclusive,
    /// `a..>b`
    DownToExclusive,
    /// `a...b` / `a..b`
    Inclusive,
}

// A slice is three optional expressions; indices are short-lived, so boxing buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum DimIndex {
    /// `a[i]`
    Fix(Expr),
    /// `a[i:j:s]` with any part omitted.
    Slice(Option<Expr>, Option<Expr>, Option<Expr>),
}

#[derive(Clone, Debug)]
pub enum LoopForm {
    /// `for i < n`
    For(String, Span, Box<Expr>),
    /// `for p in xs`
    ForIn(Pat, Box<Expr>),
    /// `while cond`
    While(Box<Expr>),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Filled by the type checker.
    pub ty: Option<Type>,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Lit(Literal),
    Var(QualName),
    /// `(e1, e2, ...)`; `()` is the unit value.
    Tuple(Vec<Expr>),
    /// `[e1, e2, ...]`
    ArrayLit(Vec<Expr>),
    /// `start..end`, `start..step...end` (`step` is the second element), `start..<end`, `start..>end`.
    Range {
        start: Box<Expr>,
        second: Option<Box<Expr>>,
        end: Box<Expr>,
        kind: RangeKind,
    },
    BinOp(OpRef, Box<Expr>, Box<Expr>),
    UnOp(UnOp, Box<Expr>),
    /// Function application `f a b c`, already grouped: `Apply(f, [a, b, c])`.
    Apply(Box<Expr>, Vec<Expr>),
    /// `\p1 p2 : t -> body`
    Lambda {
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        body: Box<Expr>,
    },
    /// `(+)`, `` (`f`) ``
    OpSection(OpRef),
    /// `(x +)`: the left operand is given.
    LeftSection(OpRef, Box<Expr>),
    /// `(+ x)`: the right operand is given.
    RightSection(OpRef, Box<Expr>),
    /// `{a = e1, b}` (fields as written; `b` alone is `b = b`).
    Record(Vec<(String, Span, Expr)>),
    /// `(.0)`, `(.a.b)`: field projections as a function.
    ProjectSection(Vec<String>),
    /// `e.a`, `e.0` (tuple fields are numbered).
    Project(Box<Expr>, String),
    /// `#c e1 e2`: a constructor applied to its payload.
    Constr(String, Vec<Expr>),
    /// `match e case p1 -> e1 case p2 -> e2`.
    Match(Box<Expr>, Vec<(Pat, Expr)>),
    /// `r with a.b = v`: `r` with the field at the path replaced (the field's type may change).
    RecordUpdate {
        record: Box<Expr>,
        path: Vec<(String, Span)>,
        value: Box<Expr>,
    },
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `let p = e in body` (the `in` may be omitted before another `let`).
    Let {
        pat: Pat,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `let f params : t = e in body`, a local function.
    LetFun {
        name: String,
        name_span: Span,
        type_params: Vec<TypeParam>,
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `let xs[i] = v in body`: sugar for `let xs = xs with [i] = v in body`.
    LetWith {
        name: String,
        name_span: Span,
        indices: Vec<DimIndex>,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `xs with [i, j] = v`
    Update {
        array: Box<Expr>,
        indices: Vec<DimIndex>,
        value: Box<Expr>,
    },
    /// `loop p = init for ... do body`; `init` is `None` when omitted (`loop x for ...`).
    Loop {
        pat: Pat,
        init: Option<Box<Expr>>,
        form: LoopForm,
        body: Box<Expr>,
    },
    /// `a[i, j:k]`
    Index(Box<Expr>, Vec<DimIndex>),
    /// `e : t`
    Ascribe(Box<Expr>, TypeExp),
    /// `e :> t`
    Coerce(Box<Expr>, TypeExp),
    /// `#[attr] e`
    Attr(Attr, Box<Expr>),
    /// `m.(e)`, e.g. `f64.(sqrt x + pi)`
    LocalOpen(QualName, Box<Expr>),
    /// `assert cond e`
    Assert(Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr {
            kind,
            span,
            ty: None,
        }
    }
}

impl Pat {
    pub fn new(kind: PatKind, span: Span) -> Pat {
        Pat {
            kind,
            span,
            ty: None,
        }
    }
}
