//! Types of the builtin names: the intrinsics of [`crate::builtins::INTRINSICS`] (signatures
//! parsed once with the parser's `parse_val_spec`) and the members of the numeric modules
//! (`f64.sqrt`, `i32.max`, conversions such as `f64.i32` and `bool.i64`).

use super::env::Scheme;
use super::ty::Ty;
use crate::builtins::{applies, bits_type, Applies, INTRINSICS, MODULE_FNS};
use crate::diag::FileId;
use crate::prim::PrimType;
use crate::syntax::ast::{Liftedness, TypeExp, TypeParam};
use crate::syntax::parser::{parse_type, parse_val_spec};
use crate::syntax::types::Size;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The file id under which builtin signatures are parsed (they never reach a diagnostic).
const BUILTIN_FILE: FileId = FileId(u32::MAX);

type Parsed<T> = Result<T, String>;
/// A parsed intrinsic signature: its name, type parameters and type.
type ParsedIntrinsic = (&'static str, Parsed<(Vec<TypeParam>, TypeExp)>);

fn parsed_intrinsics() -> &'static Vec<ParsedIntrinsic> {
    static CELL: OnceLock<Vec<ParsedIntrinsic>> = OnceLock::new();
    CELL.get_or_init(|| {
        INTRINSICS
            .iter()
            .map(|(name, sig)| {
                let r = parse_val_spec(sig, BUILTIN_FILE)
                    .map_err(|d| format!("{name}: {:?}", d.0.first()));
                (*name, r)
            })
            .collect()
    })
}

fn parsed_module_fns() -> &'static HashMap<&'static str, (Applies, Parsed<TypeExp>)> {
    static CELL: OnceLock<HashMap<&'static str, (Applies, Parsed<TypeExp>)>> = OnceLock::new();
    CELL.get_or_init(|| {
        MODULE_FNS
            .iter()
            .map(|(name, a, sig)| {
                let r =
                    parse_type(sig, BUILTIN_FILE).map_err(|d| format!("{name}: {:?}", d.0.first()));
                (*name, (*a, r))
            })
            .collect()
    })
}

/// Convert a builtin signature type. Names in `env` are type parameters; sizes are not tracked
/// (every size of a builtin's type is instantiated as unknown).
fn conv(te: &TypeExp, env: &HashMap<String, Ty>) -> Result<Ty, String> {
    Ok(match te {
        TypeExp::Named(q, args, _) if q.quals.is_empty() && args.is_empty() => {
            match env.get(&q.name) {
                Some(t) => t.clone(),
                None => match PrimType::from_name(&q.name) {
                    Some(p) => Ty::Prim(p),
                    None => return Err(format!("unknown type `{q}` in a builtin signature")),
                },
            }
        }
        TypeExp::Named(q, ..) => {
            return Err(format!("unexpected type `{q}` in a builtin signature"))
        }
        TypeExp::Tuple(ts, _) => {
            let mut v = ts
                .iter()
                .map(|t| conv(t, env))
                .collect::<Result<Vec<_>, _>>()?;
            if v.len() == 1 {
                v.pop().unwrap_or_else(Ty::unit)
            } else {
                Ty::Tuple(v)
            }
        }
        TypeExp::Array(_, t, _) => Ty::arr(Size::Unknown, conv(t, env)?),
        TypeExp::Unique(t, _) | TypeExp::Exists(_, t, _) => conv(t, env)?,
        TypeExp::Arrow(_, a, r, _) => Ty::fun(conv(a, env)?, conv(r, env)?),
    })
}

/// The schemes of all intrinsics; an intrinsic whose signature does not parse is reported in the
/// second component (a bug in the builtins table or the parser, tested below).
pub(crate) fn intrinsic_schemes() -> (HashMap<String, Scheme>, Vec<String>) {
    let mut out = HashMap::new();
    let mut errs = vec![];
    for (name, parsed) in parsed_intrinsics() {
        let (tps, te) = match parsed {
            Ok(p) => p,
            Err(e) => {
                errs.push(e.clone());
                continue;
            }
        };
        let mut env = HashMap::new();
        let mut params = vec![];
        let mut nofun_params = vec![];
        for tp in tps {
            if let TypeParam::Type {
                name, liftedness, ..
            } = tp
            {
                env.insert(name.clone(), Ty::Param(name.clone()));
                params.push(name.clone());
                if *liftedness != Liftedness::Lifted {
                    nofun_params.push(name.clone());
                }
            }
        }
        match conv(te, &env) {
            Ok(ty) => {
                out.insert(
                    name.to_string(),
                    Scheme {
                        params,
                        nofun_params,
                        ty,
                        erase_sizes: false,
                    },
                );
            }
            Err(e) => errs.push(format!("{name}: {e}")),
        }
    }
    (out, errs)
}

/// The module names that can be opened or qualified: the primitive type names.
pub(crate) fn module_of(name: &str) -> Option<PrimType> {
    PrimType::from_name(name)
}

/// The (monomorphic) type of member `name` of module `m`, if it exists.
pub(crate) fn module_member(m: PrimType, name: &str) -> Option<Ty> {
    // Conversions: `m.p : p -> m` (module `bool` converts from every primitive type too).
    if let Some(p) = PrimType::from_name(name) {
        return Some(Ty::fun(Ty::Prim(p), Ty::Prim(m)));
    }
    if m == PrimType::Bool {
        return None;
    }
    let (a, parsed) = parsed_module_fns().get(name)?;
    if !applies(*a, m) {
        return None;
    }
    let te = parsed.as_ref().ok()?;
    let mut env = HashMap::new();
    env.insert("t".to_string(), Ty::Prim(m));
    if let PrimType::Float(f) = m {
        env.insert("u".to_string(), Ty::Prim(PrimType::Int(bits_type(f))));
    }
    conv(te, &env).ok()
}

/// Every module function signature that failed to parse or convert (for a test).
#[cfg(test)]
pub(crate) fn module_fn_errors() -> Vec<String> {
    let mut errs = vec![];
    for (name, (_, parsed)) in parsed_module_fns() {
        match parsed {
            Err(e) => errs.push(e.clone()),
            Ok(_) => {
                for m in crate::builtins::numeric_modules() {
                    let (a, _) = parsed_module_fns()[name];
                    if applies(a, m) && module_member(m, name).is_none() {
                        errs.push(format!("{m}.{name} does not convert"));
                    }
                }
            }
        }
    }
    errs
}
