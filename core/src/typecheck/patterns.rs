//! Pattern analysis on type-checked patterns: refutability (patterns outside `match` must match
//! every value) and exhaustiveness of `match` (a value no case matches is an error, with an
//! example of it).
//!
//! Exhaustiveness is the usefulness algorithm of Maranget ("Warnings for pattern matching",
//! JFP 2007) on a small pattern language: a pattern is either anything (`_`, a name) or a
//! constructor applied to subpatterns. Tuples and records have one constructor, `bool` two,
//! a sum type its constructors; other types (numbers, arrays) have unboundedly many, so their
//! literal patterns never cover the type without a catch-all case.

use crate::syntax::ast::{Literal, Pat, PatKind};
use crate::syntax::types::{field_order, Type};

/// The first part of `p` that may fail to match a value of its type (literals, and
/// constructors of sum types with more than one constructor), if any.
pub(crate) fn refutable_part(p: &Pat) -> Option<&Pat> {
    match &p.kind {
        PatKind::Id(_) | PatKind::Wildcard => None,
        PatKind::Lit(..) => Some(p),
        PatKind::Tuple(ps) => ps.iter().find_map(refutable_part),
        PatKind::Record(fs) => fs.iter().find_map(|(_, _, q)| refutable_part(q)),
        PatKind::Constr(_, ps) => match &p.ty {
            Some(Type::Sum(cs)) if cs.len() == 1 => ps.iter().find_map(refutable_part),
            _ => Some(p),
        },
        PatKind::Ascribed(q, _) | PatKind::Attr(_, q) => refutable_part(q),
    }
}

/// A constructor of the simplified pattern language.
#[derive(Clone, Debug, PartialEq)]
enum Ctor {
    /// The single constructor of a tuple or record of this many components.
    Tuple(usize),
    Bool(bool),
    /// A sum type's constructor.
    Sum(String),
    /// A number literal, by its text (`-1`, `2.5`).
    Lit(String),
}

#[derive(Clone, Debug)]
enum SPat {
    Any,
    Con(Ctor, Vec<SPat>),
}

fn simplify(p: &Pat) -> SPat {
    match &p.kind {
        PatKind::Id(_) | PatKind::Wildcard => SPat::Any,
        PatKind::Ascribed(q, _) | PatKind::Attr(_, q) => simplify(q),
        PatKind::Tuple(ps) if ps.len() == 1 => simplify(&ps[0]),
        PatKind::Tuple(ps) => SPat::Con(Ctor::Tuple(ps.len()), ps.iter().map(simplify).collect()),
        PatKind::Record(fs) => {
            let mut fs: Vec<_> = fs.iter().collect();
            fs.sort_by(|a, b| field_order(&a.0, &b.0));
            let args: Vec<SPat> = fs.iter().map(|(_, _, q)| simplify(q)).collect();
            SPat::Con(Ctor::Tuple(args.len()), args)
        }
        PatKind::Constr(c, ps) => {
            SPat::Con(Ctor::Sum(c.clone()), ps.iter().map(simplify).collect())
        }
        PatKind::Lit(Literal::Bool(b), _) => SPat::Con(Ctor::Bool(*b), vec![]),
        PatKind::Lit(l, neg) => {
            let text = match l {
                Literal::Int(v, _) => v.to_string(),
                Literal::Float(v, _) => v.to_string(),
                Literal::Bool(b) => b.to_string(),
            };
            let sign = if *neg { "-" } else { "" };
            SPat::Con(Ctor::Lit(format!("{sign}{text}")), vec![])
        }
    }
}

/// The constructors of a type with their argument types, when there are finitely many.
fn signature(t: &Type) -> Option<Vec<(Ctor, Vec<Type>)>> {
    match t {
        Type::Prim(crate::prim::PrimType::Bool) => Some(vec![
            (Ctor::Bool(false), vec![]),
            (Ctor::Bool(true), vec![]),
        ]),
        Type::Tuple(_) | Type::Record(_) => {
            let cs: Vec<Type> = t
                .components()
                .unwrap_or_default()
                .into_iter()
                .cloned()
                .collect();
            Some(vec![(Ctor::Tuple(cs.len()), cs)])
        }
        Type::Sum(cs) => Some(
            cs.iter()
                .map(|(c, ts)| (Ctor::Sum(c.clone()), ts.clone()))
                .collect(),
        ),
        _ => None,
    }
}

fn arity(c: &Ctor, t: &Type) -> usize {
    match c {
        Ctor::Tuple(n) => *n,
        Ctor::Sum(name) => match t {
            Type::Sum(cs) => cs
                .iter()
                .find(|(d, _)| d == name)
                .map_or(0, |(_, ts)| ts.len()),
            _ => 0,
        },
        Ctor::Bool(_) | Ctor::Lit(_) => 0,
    }
}

/// The rows whose first pattern matches constructor `c` (of `n` arguments), with that pattern
/// replaced by its arguments.
fn specialize(rows: &[Vec<SPat>], c: &Ctor, n: usize) -> Vec<Vec<SPat>> {
    rows.iter()
        .filter_map(|r| {
            let (first, rest) = r.split_first()?;
            let mut out = match first {
                SPat::Any => vec![SPat::Any; n],
                SPat::Con(d, args) if d == c => args.clone(),
                SPat::Con(..) => return None,
            };
            out.extend(rest.iter().cloned());
            Some(out)
        })
        .collect()
}

/// A witness: the example value shown in the error.
fn show(c: &Ctor, args: &[String], t: &Type) -> String {
    match c {
        Ctor::Tuple(_) => match t {
            Type::Record(fs) => {
                let fields: Vec<String> = fs
                    .iter()
                    .zip(args)
                    .map(|((n, _), a)| format!("{n} = {a}"))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }
            _ => format!("({})", args.join(", ")),
        },
        Ctor::Bool(b) => b.to_string(),
        Ctor::Sum(name) if args.is_empty() => format!("#{name}"),
        Ctor::Sum(name) => {
            let args: Vec<String> = args
                .iter()
                .map(|a| {
                    if a.contains(' ') && !a.starts_with(['(', '{']) {
                        format!("({a})")
                    } else {
                        a.clone()
                    }
                })
                .collect();
            format!("#{name} {}", args.join(" "))
        }
        Ctor::Lit(l) => l.clone(),
    }
}

/// Values of types `tys` that no row matches: an example, one text per column.
fn missing(rows: &[Vec<SPat>], tys: &[Type]) -> Option<Vec<String>> {
    let Some((t, rest_tys)) = tys.split_first() else {
        return if rows.is_empty() { Some(vec![]) } else { None };
    };
    let used: Vec<&Ctor> = rows
        .iter()
        .filter_map(|r| match r.first() {
            Some(SPat::Con(c, _)) => Some(c),
            _ => None,
        })
        .collect();
    let sig = signature(t);
    let complete = sig
        .as_ref()
        .is_some_and(|s| s.iter().all(|(c, _)| used.contains(&c)));
    if let (true, Some(sig)) = (complete, &sig) {
        for (c, args) in sig {
            let n = arity(c, t);
            let mut sub_tys = args.clone();
            sub_tys.extend(rest_tys.iter().cloned());
            if let Some(w) = missing(&specialize(rows, c, n), &sub_tys) {
                let (head, tail) = w.split_at(n.min(w.len()));
                let mut out = vec![show(c, head, t)];
                out.extend(tail.iter().cloned());
                return Some(out);
            }
        }
        return None;
    }
    // Some constructor is not covered by a constructor pattern: only the catch-all rows can
    // match it.
    let default: Vec<Vec<SPat>> = rows
        .iter()
        .filter(|r| matches!(r.first(), Some(SPat::Any)))
        .map(|r| r[1..].to_vec())
        .collect();
    let w = missing(&default, rest_tys)?;
    let head = match sig
        .as_ref()
        .and_then(|s| s.iter().find(|(c, _)| !used.contains(&c)))
    {
        Some((c, args)) => show(c, &vec!["_".to_string(); args.len()], t),
        None => "_".to_string(),
    };
    let mut out = vec![head];
    out.extend(w);
    Some(out)
}

/// A value of type `t` that none of `pats` matches, shown as a pattern (`#none`, `(true, _)`),
/// or `None` when the patterns are exhaustive.
pub(crate) fn missing_case(pats: &[&Pat], t: &Type) -> Option<String> {
    let rows: Vec<Vec<SPat>> = pats.iter().map(|p| vec![simplify(p)]).collect();
    missing(&rows, std::slice::from_ref(t)).and_then(|w| w.into_iter().next())
}
