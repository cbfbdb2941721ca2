//! Semantic types of the source language, as the type checker infers them.

use crate::prim::PrimType;
use std::fmt;

/// The size of one array dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// A constant size, `[3]`.
    Const(i64),
    /// A named size: a size parameter or a variable in scope (`[n]`).
    Named(String),
    /// A size not known statically (existential, or not yet inferred).
    Unknown,
    /// A size expression `[n*m]`, `[n+m]`, `[n-1]` over sizes.
    Bin(SizeOp, Box<Size>, Box<Size>),
    /// The value of any other expression given as a size (`i64.sum ks` in
    /// `tabulate (i64.sum ks + n) f : [i64.sum ks + n]t`): the expression's span and source
    /// text. Lowering takes the value the expression had where it was evaluated.
    Expr(crate::diag::Span, String),
}

/// The operator of a size expression ([`Size::Bin`], [`crate::syntax::ast::SizeExp::Bin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SizeOp {
    Add,
    Sub,
    Mul,
}

impl SizeOp {
    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            SizeOp::Add => "+",
            SizeOp::Sub => "-",
            SizeOp::Mul => "*",
        }
    }
}

impl Size {
    /// `a op b`.
    pub fn bin(op: SizeOp, a: Size, b: Size) -> Size {
        Size::Bin(op, Box::new(a), Box::new(b))
    }

    /// Whether the size mentions the name `n`.
    pub fn mentions(&self, n: &str) -> bool {
        match self {
            Size::Named(m) => m == n,
            Size::Bin(_, a, b) => a.mentions(n) || b.mentions(n),
            Size::Const(_) | Size::Unknown | Size::Expr(..) => false,
        }
    }

    /// Writes the size without brackets (`n*m`); operands that are themselves size expressions
    /// are parenthesised.
    fn fmt_inner(&self, f: &mut fmt::Formatter<'_>, nested: bool) -> fmt::Result {
        match self {
            Size::Const(n) => write!(f, "{n}"),
            Size::Named(n) => write!(f, "{n}"),
            Size::Unknown => Ok(()),
            Size::Expr(_, text) if nested => write!(f, "({text})"),
            Size::Expr(_, text) => write!(f, "{text}"),
            Size::Bin(op, a, b) => {
                if nested {
                    write!(f, "(")?;
                }
                a.fmt_inner(f, true)?;
                write!(f, "{}", op.symbol())?;
                b.fmt_inner(f, true)?;
                if nested {
                    write!(f, ")")?;
                }
                Ok(())
            }
        }
    }
}

/// A type variable: a type parameter (`'t`) or an inference variable not resolved by defaulting.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TyVar(pub String);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Prim(PrimType),
    /// An array: `shape` lists the dimensions outermost first; `elem` is never an array.
    Array {
        elem: Box<Type>,
        shape: Vec<Size>,
        unique: bool,
    },
    /// A tuple; the empty tuple is the unit type `()`.
    Tuple(Vec<Type>),
    /// A record `{a: t, b: u}`: fields in [`field_order`], no two with the same name. A record
    /// is represented as the tuple of its fields in that order.
    Record(Vec<(String, Type)>),
    /// A sum type `#a | #b t1 t2`: constructors sorted by name, each with its payload types.
    /// Represented as an `i8` tag (the constructor's position) followed by the payloads of every
    /// constructor in order (see `lower`).
    Sum(Vec<(String, Vec<Type>)>),
    /// A function type `param -> ret`; curried.
    Fun(Box<Type>, Box<Type>),
    /// An accumulator `acc t` (Futhark's `intrinsics.acc`) for updates of the array type `t`.
    /// Lowered to an IR accumulator (`ir::Type::Acc`) of a `with_acc`.
    Acc(Box<Type>),
    /// A type variable (only inside polymorphic definitions).
    Var(TyVar),
}

impl Type {
    pub fn unit() -> Type {
        Type::Tuple(vec![])
    }
    /// Rank of the type (0 for non-arrays).
    pub fn rank(&self) -> usize {
        match self {
            Type::Array { shape, .. } => shape.len(),
            _ => 0,
        }
    }
    /// `[d]t` built from an element/row type, flattening nested arrays.
    pub fn array_of(row: Type, d: Size) -> Type {
        match row {
            Type::Array {
                elem,
                mut shape,
                unique,
            } => {
                shape.insert(0, d);
                Type::Array {
                    elem,
                    shape,
                    unique,
                }
            }
            t => Type::Array {
                elem: Box::new(t),
                shape: vec![d],
                unique: false,
            },
        }
    }
    /// The type of one row of an array (`None` if not an array).
    pub fn row(&self) -> Option<Type> {
        match self {
            Type::Array {
                elem,
                shape,
                unique,
            } if shape.len() > 1 => Some(Type::Array {
                elem: elem.clone(),
                shape: shape[1..].to_vec(),
                unique: *unique,
            }),
            Type::Array { elem, .. } => Some((**elem).clone()),
            _ => None,
        }
    }
    pub fn is_fun(&self) -> bool {
        matches!(self, Type::Fun(..))
    }
    /// Whether a function type occurs anywhere inside.
    pub fn contains_fun(&self) -> bool {
        match self {
            Type::Fun(..) => true,
            Type::Array { elem, .. } => elem.contains_fun(),
            Type::Tuple(ts) => ts.iter().any(|t| t.contains_fun()),
            Type::Record(fs) => fs.iter().any(|(_, t)| t.contains_fun()),
            Type::Sum(cs) => cs.iter().any(|(_, ts)| ts.iter().any(|t| t.contains_fun())),
            _ => false,
        }
    }
    /// Whether a sum type occurs in the type (functions' parameters and results included).
    pub fn contains_sum(&self) -> bool {
        match self {
            Type::Sum(_) => true,
            Type::Fun(a, r) => a.contains_sum() || r.contains_sum(),
            Type::Array { elem, .. } => elem.contains_sum(),
            Type::Tuple(ts) => ts.iter().any(|t| t.contains_sum()),
            Type::Record(fs) => fs.iter().any(|(_, t)| t.contains_sum()),
            _ => false,
        }
    }
    /// The components of a tuple or of a record (in field order), as lowering represents both.
    pub fn components(&self) -> Option<Vec<&Type>> {
        match self {
            Type::Tuple(ts) => Some(ts.iter().collect()),
            Type::Record(fs) => Some(fs.iter().map(|(_, t)| t).collect()),
            _ => None,
        }
    }
    /// The position of field `name` among the components (a record field, or a tuple's
    /// numbered field).
    pub fn field_index(&self, name: &str) -> Option<usize> {
        match self {
            Type::Tuple(ts) => name.parse::<usize>().ok().filter(|i| *i < ts.len()),
            Type::Record(fs) => fs.iter().position(|(f, _)| f == name),
            _ => None,
        }
    }
}

/// The order of record fields (Futhark's): fields whose names are numbers first, numerically,
/// then the others by name.
pub fn field_order(a: &str, b: &str) -> std::cmp::Ordering {
    let num = |s: &str| {
        if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse::<u128>().ok()
        } else {
            None
        }
    };
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Writes `#a t | #b`.
pub(crate) fn fmt_sum<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    constrs: &[(String, Vec<T>)],
) -> fmt::Result {
    for (i, (c, ts)) in constrs.iter().enumerate() {
        if i > 0 {
            write!(f, " | ")?;
        }
        write!(f, "#{c}")?;
        for t in ts {
            write!(f, " {t}")?;
        }
    }
    Ok(())
}

/// Writes `{a: t, b: u}`.
pub(crate) fn fmt_record<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    fields: &[(String, T)],
) -> fmt::Result {
    write!(f, "{{")?;
    for (i, (n, t)) in fields.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{n}: {t}")?;
    }
    write!(f, "}}")
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[")?;
        self.fmt_inner(f, false)?;
        write!(f, "]")
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Prim(p) => write!(f, "{p}"),
            Type::Array {
                elem,
                shape,
                unique,
            } => {
                if *unique {
                    write!(f, "*")?;
                }
                for d in shape {
                    write!(f, "{d}")?;
                }
                write!(f, "{elem}")
            }
            Type::Tuple(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ")")
            }
            Type::Record(fs) => fmt_record(f, fs),
            Type::Sum(cs) => fmt_sum(f, cs),
            Type::Acc(t) => write!(f, "acc ({t})"),
            Type::Fun(a, r) => {
                if a.is_fun() {
                    write!(f, "({a}) -> {r}")
                } else {
                    write!(f, "{a} -> {r}")
                }
            }
            Type::Var(v) => write!(f, "{}", v.0),
        }
    }
}
