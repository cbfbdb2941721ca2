//! Types of the builtin names: the intrinsics of [`crate::builtins::INTRINSICS`] (signatures
//! parsed once with the parser's `parse_val_spec`) and the members of the numeric modules
//! (`f64.sqrt`, `i32.max`, conversions such as `f64.i32` and `bool.i64`).

use super::env::Scheme;
use super::ty::Ty;
use crate::builtins::{applies, bits_type, Applies, INTRINSICS, MODULE_FNS};
use crate::diag::FileId;
use crate::prim::PrimType;
use crate::syntax::ast::{Liftedness, SizeExp, TypeArgExp, TypeExp, TypeParam};
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

/// Convert a builtin signature type. Names in `env` are type parameters; sizes built from the
/// size parameters `sizes` and constants are kept (they are instantiated with fresh size
/// variables at each use), any other size (`(n: i64) -> [n]t`) is unknown.
fn conv(te: &TypeExp, env: &HashMap<String, Ty>) -> Result<Ty, String> {
    conv_sized(te, env, &[])
}

fn conv_size(d: &SizeExp, sizes: &[String]) -> Size {
    match d {
        SizeExp::Const(k) => Size::Const(*k),
        SizeExp::Named(q) if q.quals.is_empty() && sizes.contains(&q.name) => {
            Size::Named(q.name.clone())
        }
        SizeExp::Bin(op, a, b) => match (conv_size(a, sizes), conv_size(b, sizes)) {
            (Size::Unknown, _) | (_, Size::Unknown) => Size::Unknown,
            (a, b) => Size::bin(*op, a, b),
        },
        _ => Size::Unknown,
    }
}

/// Whether size parameter `p` occurs as a plain dimension (`[p]`) in `t`.
fn plain_dim(t: &Ty, p: &str) -> bool {
    match t {
        Ty::Array(Size::Named(n), _) if n == p => true,
        Ty::Array(_, e) | Ty::Acc(e) => plain_dim(e, p),
        Ty::Tuple(ts) => ts.iter().any(|t| plain_dim(t, p)),
        Ty::Record(fs) => fs.iter().any(|(_, t)| plain_dim(t, p)),
        Ty::Sum(cs) => cs.iter().flat_map(|(_, ts)| ts).any(|t| plain_dim(t, p)),
        Ty::Fun(a, r) => plain_dim(a, p) || plain_dim(r, p),
        Ty::Prim(_) | Ty::Param(_) | Ty::Var(_) => false,
    }
}

/// The parameter types of the function type `t`.
fn param_types(t: &Ty) -> Vec<&Ty> {
    let mut params = vec![];
    let mut t = t;
    while let Ty::Fun(a, r) = t {
        params.push(&**a);
        t = r;
    }
    params
}

/// The size parameters in `sizes` that occur in no parameter type of the function type `t` as
/// a plain dimension.
fn hidden_sizes(t: &Ty, sizes: &[String]) -> Vec<String> {
    let params = param_types(t);
    sizes
        .iter()
        .filter(|p| !params.iter().any(|a| plain_dim(a, p)))
        .cloned()
        .collect()
}

/// The size parameters in `sizes` that no parameter type of the function type `t` has as a
/// plain dimension (`[p]t`, which the argument's shape gives) but that the function's type
/// mentions: inside size expressions of a parameter type (`[p*q]t`), or only in the result
/// type (`arr [n] [m] : gen [m] a -> gen [n * m] ([n]a)`). Each call of the function must find
/// them by unifying the function's type with its use (the arguments' types and the type the
/// context expects of the result), as Futhark infers such sizes.
pub(crate) fn size_expr_params(t: &Ty, sizes: &[String]) -> Vec<String> {
    let mut out = hidden_sizes(t, sizes);
    out.retain(|p| mentions_size(t, p));
    out
}

/// Whether some dimension of `t` mentions the size parameter `p`.
fn mentions_size(t: &Ty, p: &str) -> bool {
    match t {
        Ty::Array(d, e) => d.mentions(p) || mentions_size(e, p),
        Ty::Tuple(ts) => ts.iter().any(|t| mentions_size(t, p)),
        Ty::Record(fs) => fs.iter().any(|(_, t)| mentions_size(t, p)),
        Ty::Sum(cs) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| mentions_size(t, p)),
        Ty::Fun(a, r) => mentions_size(a, p) || mentions_size(r, p),
        Ty::Acc(t) => mentions_size(t, p),
        Ty::Prim(_) | Ty::Param(_) | Ty::Var(_) => false,
    }
}

/// The named parameters (`(n: i64) -> ...`) of a signature, by position.
fn named_params(te: &TypeExp) -> Vec<(usize, String)> {
    let mut out = vec![];
    let mut t = te;
    let mut k = 0;
    while let TypeExp::Arrow(name, _, r, _) = t {
        if let Some(n) = name {
            out.push((k, n.clone()));
        }
        k += 1;
        t = r;
    }
    out
}

fn conv_sized(te: &TypeExp, env: &HashMap<String, Ty>, sizes: &[String]) -> Result<Ty, String> {
    let conv = |t: &TypeExp, env: &HashMap<String, Ty>| conv_sized(t, env, sizes);
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
        TypeExp::Named(q, args, _) if crate::builtins::is_acc_type(&q.quals, &q.name) => {
            match args.as_slice() {
                [TypeArgExp::Type(t)] => Ty::Acc(Box::new(conv(t, env)?)),
                _ => return Err(format!("`{q}` takes one type argument")),
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
        TypeExp::Record(fs, _) => Ty::record(
            fs.iter()
                .map(|(n, _, t)| Ok((n.clone(), conv(t, env)?)))
                .collect::<Result<Vec<_>, String>>()?,
        ),
        TypeExp::Sum(..) => return Err("unexpected sum type in a builtin signature".into()),
        TypeExp::Array(d, t, _) => Ty::arr(conv_size(d, sizes), conv(t, env)?),
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
        let mut size_params: Vec<String> = named_params(te).into_iter().map(|(_, n)| n).collect();
        for tp in tps {
            if let TypeParam::Size(n, _) = tp {
                size_params.push(n.clone());
            }
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
        match conv_sized(te, &env, &size_params) {
            Ok(ty) => {
                let named_params = named_params(te);
                let mut size_params = size_params;
                size_params.retain(|p| !named_params.iter().any(|(_, n)| n == p));
                let hidden_sizes = hidden_sizes(&ty, &size_params);
                out.insert(
                    name.to_string(),
                    Scheme {
                        params,
                        nofun_params,
                        ty,
                        erase_sizes: false,
                        size_params,
                        hidden_sizes,
                        named_params,
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
