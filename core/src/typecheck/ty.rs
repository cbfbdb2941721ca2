//! The checker's internal types: like [`Type`] but with unification variables and with arrays
//! nested one dimension at a time (so that `[]a` unifies with `[][]i32` by `a = []i32`).

use crate::prim::{FloatType, IntType, PrimType};
use crate::syntax::types::{field_order, fmt_record, fmt_sum, Size, TyVar, Type};
use std::fmt;

/// An inference type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ty {
    Prim(PrimType),
    /// One array dimension: `[d]t` (`t` may itself be an array).
    Array(Size, Box<Ty>),
    Tuple(Vec<Ty>),
    /// A record: fields in [`field_order`], names distinct (built by [`Ty::record`]).
    Record(Vec<(String, Ty)>),
    /// A sum type: constructors sorted by name, each with its payload types.
    Sum(Vec<(String, Vec<Ty>)>),
    Fun(Box<Ty>, Box<Ty>),
    /// An accumulator `acc t` of Futhark's `intrinsics` module: updates of the array type `t`
    /// (`[k]a`) made by `acc_write` inside `scatter_stream`/`hist_stream`.
    Acc(Box<Ty>),
    /// A rigid type parameter (`'t`, or a generalised inference variable).
    Param(String),
    /// A unification variable (index into the checker's variable table).
    Var(u32),
}

/// The prefix of the names under which unification variables are stored temporarily in
/// `Expr::ty` while a declaration is being checked (no source identifier contains it).
pub(crate) const VAR_PREFIX: &str = "?";

impl Ty {
    pub fn fun(a: Ty, r: Ty) -> Ty {
        Ty::Fun(Box::new(a), Box::new(r))
    }
    pub fn arr(d: Size, t: Ty) -> Ty {
        Ty::Array(d, Box::new(t))
    }
    pub fn unit() -> Ty {
        Ty::Tuple(vec![])
    }
    /// A record type from fields in any order (sorted here; the caller checks that names are
    /// distinct). No fields is the unit type, the fields `0` to `n-1` (n > 1) a tuple.
    pub fn record(mut fields: Vec<(String, Ty)>) -> Ty {
        if fields.is_empty() {
            return Ty::unit();
        }
        fields.sort_by(|a, b| field_order(&a.0, &b.0));
        // A tuple is the record of its numbered fields (`{0 = a, 1 = b}` is `(a, b)`).
        if fields.len() > 1
            && fields
                .iter()
                .enumerate()
                .all(|(i, (n, _))| *n == i.to_string())
        {
            return Ty::Tuple(fields.into_iter().map(|(_, t)| t).collect());
        }
        Ty::Record(fields)
    }
    /// A sum type from constructors in any order (sorted here by name).
    pub fn sum(mut constrs: Vec<(String, Vec<Ty>)>) -> Ty {
        constrs.sort_by(|a, b| a.0.cmp(&b.0));
        Ty::Sum(constrs)
    }
    /// The same structure with every component type mapped by `f` (no-op on leaves).
    pub fn map_children(&self, f: &mut dyn FnMut(&Ty) -> Ty) -> Ty {
        match self {
            Ty::Prim(_) | Ty::Var(_) | Ty::Param(_) => self.clone(),
            Ty::Array(d, t) => Ty::arr(d.clone(), f(t)),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(&mut *f).collect()),
            Ty::Record(fs) => Ty::Record(fs.iter().map(|(n, t)| (n.clone(), f(t))).collect()),
            Ty::Sum(cs) => Ty::Sum(
                cs.iter()
                    .map(|(c, ts)| (c.clone(), ts.iter().map(&mut *f).collect()))
                    .collect(),
            ),
            Ty::Fun(a, r) => Ty::fun(f(a), f(r)),
            Ty::Acc(t) => Ty::Acc(Box::new(f(t))),
        }
    }
    pub fn bool() -> Ty {
        Ty::Prim(PrimType::Bool)
    }
    pub fn i64() -> Ty {
        Ty::Prim(PrimType::I64)
    }

    /// Convert to a semantic type; unification variables become `Type::Var("?n")`.
    pub fn to_type(&self) -> Type {
        match self {
            Ty::Prim(p) => Type::Prim(*p),
            Ty::Array(d, t) => Type::array_of(t.to_type(), d.clone()),
            Ty::Tuple(ts) => Type::Tuple(ts.iter().map(Ty::to_type).collect()),
            Ty::Record(fs) => {
                Type::Record(fs.iter().map(|(n, t)| (n.clone(), t.to_type())).collect())
            }
            Ty::Sum(cs) => Type::Sum(
                cs.iter()
                    .map(|(c, ts)| (c.clone(), ts.iter().map(Ty::to_type).collect()))
                    .collect(),
            ),
            Ty::Fun(a, r) => Type::Fun(Box::new(a.to_type()), Box::new(r.to_type())),
            Ty::Acc(t) => Type::Acc(Box::new(t.to_type())),
            Ty::Param(n) => Type::Var(TyVar(n.clone())),
            Ty::Var(v) => Type::Var(TyVar(format!("{VAR_PREFIX}{v}"))),
        }
    }

    /// The inverse of [`Ty::to_type`].
    pub fn from_type(t: &Type) -> Ty {
        match t {
            Type::Prim(p) => Ty::Prim(*p),
            Type::Array { elem, shape, .. } => {
                let mut t = Ty::from_type(elem);
                for d in shape.iter().rev() {
                    t = Ty::arr(d.clone(), t);
                }
                t
            }
            Type::Tuple(ts) => Ty::Tuple(ts.iter().map(Ty::from_type).collect()),
            Type::Record(fs) => Ty::Record(
                fs.iter()
                    .map(|(n, t)| (n.clone(), Ty::from_type(t)))
                    .collect(),
            ),
            Type::Sum(cs) => Ty::Sum(
                cs.iter()
                    .map(|(c, ts)| (c.clone(), ts.iter().map(Ty::from_type).collect()))
                    .collect(),
            ),
            Type::Fun(a, r) => Ty::fun(Ty::from_type(a), Ty::from_type(r)),
            Type::Acc(t) => Ty::Acc(Box::new(Ty::from_type(t))),
            Type::Var(TyVar(n)) => match n.strip_prefix(VAR_PREFIX).and_then(|s| s.parse().ok()) {
                Some(v) => Ty::Var(v),
                None => Ty::Param(n.clone()),
            },
        }
    }

    /// Substitute rigid parameters by name.
    pub fn subst_params(&self, s: &dyn Fn(&str) -> Option<Ty>) -> Ty {
        match self {
            Ty::Param(n) => s(n).unwrap_or_else(|| self.clone()),
            _ => self.map_children(&mut |t| t.subst_params(s)),
        }
    }

    /// Substitute named sizes by name (inside size expressions too).
    pub fn subst_sizes(&self, s: &dyn Fn(&str) -> Option<Size>) -> Ty {
        match self {
            Ty::Array(d, t) => Ty::arr(subst_size(d, s), t.subst_sizes(s)),
            _ => self.map_children(&mut |t| t.subst_sizes(s)),
        }
    }

    /// Whether a function type occurs anywhere inside (after substitution).
    pub fn contains_fun(&self) -> bool {
        match self {
            Ty::Fun(..) => true,
            Ty::Array(_, t) => t.contains_fun(),
            Ty::Tuple(ts) => ts.iter().any(Ty::contains_fun),
            Ty::Record(fs) => fs.iter().any(|(_, t)| t.contains_fun()),
            Ty::Sum(cs) => cs.iter().any(|(_, ts)| ts.iter().any(Ty::contains_fun)),
            _ => false,
        }
    }
}

/// Whether a size mentions a size variable (a name starting with [`VAR_PREFIX`]).
pub(crate) fn mentions_var(d: &Size) -> bool {
    match d {
        Size::Named(n) => n.starts_with(VAR_PREFIX),
        Size::Bin(_, a, b) => mentions_var(a) || mentions_var(b),
        Size::Const(_) | Size::Unknown | Size::Expr(..) => false,
    }
}

/// Substitute named sizes in one size.
pub(crate) fn subst_size(d: &Size, s: &dyn Fn(&str) -> Option<Size>) -> Size {
    match d {
        Size::Named(n) => s(n).unwrap_or_else(|| d.clone()),
        Size::Bin(op, a, b) => Size::bin(*op, subst_size(a, s), subst_size(b, s)),
        Size::Const(_) | Size::Unknown | Size::Expr(..) => d.clone(),
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Prim(p) => write!(f, "{p}"),
            // Size variables (names starting with `VAR_PREFIX`) are shown as unknown sizes.
            Ty::Array(d, t) if mentions_var(d) => write!(f, "[]{t}"),
            Ty::Array(d, t) => write!(f, "{d}{t}"),
            Ty::Tuple(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ")")
            }
            Ty::Record(fs) => fmt_record(f, fs),
            Ty::Sum(cs) => fmt_sum(f, cs),
            Ty::Acc(t) => write!(f, "acc ({t})"),
            Ty::Fun(a, r) => {
                if matches!(**a, Ty::Fun(..)) {
                    write!(f, "({a}) -> {r}")
                } else {
                    write!(f, "{a} -> {r}")
                }
            }
            Ty::Param(n) => write!(f, "{n}"),
            Ty::Var(v) => write!(f, "t{v}"),
        }
    }
}

/// A set of primitive types (the allowed instances of an overloaded type variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PrimSet(pub u16);

fn bit(p: PrimType) -> u16 {
    let i = PrimType::all().position(|q| q == p).unwrap_or(0);
    1 << i
}

impl PrimSet {
    pub fn of(ps: impl IntoIterator<Item = PrimType>) -> PrimSet {
        PrimSet(ps.into_iter().map(bit).fold(0, |a, b| a | b))
    }
    pub fn ints() -> PrimSet {
        PrimSet::of(IntType::ALL.into_iter().map(PrimType::Int))
    }
    pub fn signed() -> PrimSet {
        PrimSet::of(
            IntType::ALL
                .into_iter()
                .filter(|t| t.signed())
                .map(PrimType::Int),
        )
    }
    pub fn floats() -> PrimSet {
        PrimSet::of(FloatType::ALL.into_iter().map(PrimType::Float))
    }
    pub fn nums() -> PrimSet {
        PrimSet(PrimSet::ints().0 | PrimSet::floats().0)
    }
    pub fn prims() -> PrimSet {
        PrimSet::of(PrimType::all())
    }
    pub fn ints_bool() -> PrimSet {
        PrimSet(PrimSet::ints().0 | bit(PrimType::Bool))
    }
    pub fn contains(self, p: PrimType) -> bool {
        self.0 & bit(p) != 0
    }
    pub fn inter(self, o: PrimSet) -> PrimSet {
        PrimSet(self.0 & o.0)
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn members(self) -> impl Iterator<Item = PrimType> {
        PrimType::all().filter(move |p| self.contains(*p))
    }
    /// The type an ambiguous variable with this set defaults to: `i32` if allowed, else `f64`,
    /// else the first member.
    pub fn default_type(self) -> Option<PrimType> {
        if self.contains(PrimType::I32) {
            Some(PrimType::I32)
        } else if self.contains(PrimType::F64) {
            Some(PrimType::F64)
        } else {
            self.members().next()
        }
    }
    /// A description for error messages: "a numeric type", "an integer type", ...
    pub fn describe(self) -> String {
        if self == PrimSet::nums() {
            "a numeric type".into()
        } else if self == PrimSet::ints() {
            "an integer type".into()
        } else if self == PrimSet::signed() {
            "a signed integer type".into()
        } else if self == PrimSet::floats() {
            "a floating-point type".into()
        } else if self == PrimSet::prims() {
            "a primitive type".into()
        } else if self == PrimSet::ints_bool() {
            "an integer type or `bool`".into()
        } else {
            let names: Vec<String> = self.members().map(|p| format!("`{p}`")).collect();
            format!("one of {}", names.join(", "))
        }
    }
}
