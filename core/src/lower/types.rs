//! Between semantic (source) types and IR types.

use super::env::{Env, SV};
use super::{internal, R};
use crate::diag::{Diagnostic, Span};
use crate::ir::{SubExp, Type};
use crate::prim::{PrimType, PrimValue};
use crate::syntax::types::{Size, Type as SType};

/// A value template of a semantic type: an [`SV`] whose leaves have the IR types (with dimensions
/// given by `dim`) and placeholder operands. Type variables are resolved through `env`.
pub(crate) fn stype_to_sv<'a>(
    env: &Env<'a>,
    ty: &SType,
    dim: &mut dyn FnMut(&Size) -> R<SubExp>,
) -> R<SV<'a>> {
    Ok(match ty {
        SType::Prim(p) => SV::Val(SubExp::Const(PrimValue::zero(*p)), Type::Prim(*p)),
        SType::Array { elem, shape, .. } => {
            let dims: Vec<SubExp> = shape.iter().map(&mut *dim).collect::<R<_>>()?;
            let mut inner = stype_to_sv(env, elem, dim)?;
            if inner.leaves().is_empty() && !inner.contains_fun() {
                // An array of empty tuples: its shape needs a carrier (see `SV::Units`).
                inner = SV::Units(
                    SubExp::Const(PrimValue::Bool(false)),
                    Type::Prim(PrimType::Bool),
                );
            }
            inner.map_leaves(&mut |s, t| -> R<(SubExp, Type)> {
                let mut t = t.clone();
                for d in dims.iter().rev() {
                    t = t.array_of(d.clone());
                }
                Ok((s.clone(), t))
            })?
        }
        SType::Tuple(_) | SType::Record(_) => SV::Tuple(
            ty.components()
                .unwrap_or_default()
                .into_iter()
                .map(|t| stype_to_sv(env, t, dim))
                .collect::<R<_>>()?,
        ),
        SType::Sum(cs) => {
            let mut parts = vec![super::sums::tag(0)];
            for (_, ts) in cs {
                parts.push(SV::Tuple(
                    ts.iter()
                        .map(|t| stype_to_sv(env, t, dim))
                        .collect::<R<_>>()?,
                ));
            }
            SV::Tuple(parts)
        }
        SType::Var(v) => match env.lookup_tyvar(&v.0) {
            Some(t) => stype_to_sv(env, &t, dim)?,
            None => {
                return Err(Diagnostic::not_supported(
                    Span::default(),
                    format!(
                        "a value of unknown type `{}` here (type variable not instantiated)",
                        v.0
                    ),
                ))
            }
        },
        SType::Fun(..) => {
            return Err(Diagnostic::not_supported(
                Span::default(),
                "a function type here",
            ))
        }
        SType::Acc(_) => {
            return Err(Diagnostic::not_supported(
                Span::default(),
                "an accumulator here (one exists only inside `scatter_stream`/`hist_stream`)",
            ))
        }
    })
}

/// The dimension function for types inside expressions: constants, sizes in scope, and zero
/// for unknown sizes (used only for empty arrays).
pub(crate) fn scope_dim<'e, 'a>(
    env: &'e Env<'a>,
    span: Span,
) -> impl FnMut(&Size) -> R<SubExp> + 'e {
    move |s: &Size| match s {
        Size::Const(k) => Ok(SubExp::i64(*k)),
        Size::Named(n) => match env.lookup_var(n) {
            Some(SV::Val(s, _)) => Ok(s),
            _ => Err(Diagnostic::not_supported(
                span,
                format!("the size `{n}` is not known here"),
            )),
        },
        Size::Unknown => Ok(SubExp::i64(0)),
        Size::Bin(..) | Size::Expr(..) => Err(Diagnostic::not_supported(
            span,
            format!("the size expression `{s}` in the type of an empty array"),
        )),
    }
}

/// The semantic type of a value, dropping `strip` outer dimensions of every leaf (sizes are left
/// unknown). Used to instantiate type variables.
pub(crate) fn sv_to_stype(sv: &SV<'_>, strip: usize) -> SType {
    match sv {
        SV::Val(_, t) => match t {
            Type::Prim(p) => SType::Prim(*p),
            Type::Array { elem, shape } => {
                let n = shape.len().saturating_sub(strip);
                if n == 0 {
                    SType::Prim(*elem)
                } else {
                    SType::Array {
                        elem: Box::new(SType::Prim(*elem)),
                        shape: vec![Size::Unknown; n],
                        unique: false,
                    }
                }
            }
            Type::Acc { .. } => SType::unit(),
        },
        SV::Units(_, t) => {
            let n = t.shape().len().saturating_sub(strip);
            if n == 0 {
                SType::unit()
            } else {
                SType::Array {
                    elem: Box::new(SType::unit()),
                    shape: vec![Size::Unknown; n],
                    unique: false,
                }
            }
        }
        SV::Tuple(vs) => SType::Tuple(vs.iter().map(|v| sv_to_stype(v, strip)).collect()),
        SV::Fun(_) => SType::unit(),
    }
}

/// The outer size of an array value (the first leaf's outer dimension).
pub(crate) fn outer_dim(sv: &SV<'_>, span: Span) -> R<SubExp> {
    match sv.leaves().first() {
        Some((_, Type::Array { shape, .. })) => Ok(shape[0].clone()),
        Some(_) => Err(internal(span, "expected an array")),
        None => Err(Diagnostic::not_supported(
            span,
            "arrays of empty tuples or of functions",
        )),
    }
}

/// The row template of an array value: every leaf with its outer dimension dropped. Its leaves
/// pair with the array's (the operators of reductions, scans and histograms), so an array
/// whose rows are empty tuples (whose carrier has no row, see [`SV::Units`]) is not supported
/// here; [`map_inputs`] is the form for `map`.
pub(crate) fn row_template<'a>(sv: &SV<'a>, span: Span) -> R<SV<'a>> {
    if sv.contains_fun() {
        return Err(Diagnostic::not_supported(span, "arrays of functions"));
    }
    if has_unit_rows(sv) {
        return Err(Diagnostic::not_supported(
            span,
            "this operation on an array of empty tuples (only `map`, indexing and the shape \
             functions take one)",
        ));
    }
    sv.map_leaves(&mut |s, t| match t {
        Type::Array { .. } => Ok((s.clone(), t.row())),
        _ => Err(internal(span, "expected an array")),
    })
}

/// Whether some component of an array value is a one-dimensional array of empty tuples (whose
/// rows have no leaf).
fn has_unit_rows(sv: &SV<'_>) -> bool {
    match sv {
        SV::Units(_, t) => t.shape().len() == 1,
        SV::Tuple(vs) => vs.iter().any(has_unit_rows),
        SV::Val(..) | SV::Fun(_) => false,
    }
}

/// The row template of an array value that a `map` takes apart, and the arrays that feed the
/// row's leaves: every leaf but the carriers of components whose rows are empty tuples (a map
/// over `[n]()` reads no array, its size is the map's width).
pub(crate) fn map_inputs<'a>(sv: &SV<'a>, span: Span) -> R<(SV<'a>, Vec<crate::ir::VName>)> {
    fn arrays(sv: &SV<'_>, span: Span, out: &mut Vec<crate::ir::VName>) -> R<()> {
        match sv {
            SV::Units(_, t) if t.shape().len() == 1 => Ok(()),
            SV::Val(s, _) | SV::Units(s, _) => {
                out.push(arr_var(s, span)?);
                Ok(())
            }
            SV::Tuple(vs) => vs.iter().try_for_each(|v| arrays(v, span, out)),
            SV::Fun(_) => Err(Diagnostic::not_supported(span, "arrays of functions")),
        }
    }
    let mut arrs = vec![];
    arrays(sv, span, &mut arrs)?;
    let row = sv.map_leaves(&mut |s, t| match t {
        Type::Array { .. } => Ok((s.clone(), t.row())),
        _ => Err(internal(span, "expected an array")),
    })?;
    Ok((row, arrs))
}

/// The variable of an array leaf.
pub(crate) fn arr_var(s: &SubExp, span: Span) -> R<crate::ir::VName> {
    s.as_var()
        .cloned()
        .ok_or_else(|| internal(span, "array operand is a constant"))
}

/// [`arr_var`] of every leaf of a flattened value (SOAC inputs and destinations).
pub(crate) fn arr_vars(leaves: &[(SubExp, Type)], span: Span) -> R<Vec<crate::ir::VName>> {
    leaves.iter().map(|(s, _)| arr_var(s, span)).collect()
}

/// `t` with the type variables bound in `env` followed (`None` for an unbound one).
pub(crate) fn resolve_tyvars(env: &Env<'_>, t: Option<&SType>) -> Option<SType> {
    let mut t = t.cloned();
    while let Some(SType::Var(v)) = &t {
        t = env.lookup_tyvar(&v.0);
    }
    t
}
