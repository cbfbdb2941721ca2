//! An entry point's arguments checked against its parameters, as the interpreter checks them
//! (types, ranks, sizes), and the sizes they give the entry's size parameters.

use crate::device::Arg;
use crate::error::{Error, RuntimeKind};
use crate::exec::{shape_str, storage_bytes, E};
use std::collections::HashMap;
use vkad_core::ir::{self, FunDef, SubExp, Type};
use vkad_core::prim::{PrimType, PrimValue};
use vkad_core::value::Value;

/// What [`check_arg_descs`] needs to know of an argument (host or device).
pub struct ArgDesc {
    pub elem: PrimType,
    pub shape: Vec<usize>,
    /// The value of a scalar argument.
    pub scalar: Option<PrimValue>,
}

impl ArgDesc {
    fn type_name(&self) -> String {
        format!("{}{}", shape_str(&self.shape), self.elem.name())
    }
}

/// What [`check_arg_descs`] needs of each argument; an error for a host array whose data does
/// not fill its shape or a device array whose buffer is too small.
pub(crate) fn describe_args(args: &[Arg]) -> E<Vec<ArgDesc>> {
    let mut descs = Vec::with_capacity(args.len());
    for (k, a) in args.iter().enumerate() {
        descs.push(match a {
            Arg::Host(Value::Array(arr)) => {
                if arr.shape.iter().product::<usize>() != arr.data.len() {
                    return Err(Error::runtime(
                        RuntimeKind::Arguments,
                        &None,
                        format!(
                            "argument {}: array of shape {:?} has {} elements",
                            k + 1,
                            arr.shape,
                            arr.data.len()
                        ),
                    ));
                }
                ArgDesc {
                    elem: arr.elem_type(),
                    shape: arr.shape.clone(),
                    scalar: None,
                }
            }
            Arg::Host(Value::Scalar(p)) => ArgDesc {
                elem: p.prim_type(),
                shape: vec![],
                scalar: Some(*p),
            },
            Arg::Device(d) => {
                let need = (d.shape.iter().product::<usize>() * storage_bytes(d.elem)) as u64;
                if d.buffer.size() < need {
                    return Err(Error::runtime(
                        RuntimeKind::Arguments,
                        &None,
                        format!(
                        "argument {}: a device array {}{} needs {need} bytes, the buffer has {}",
                        k + 1,
                        shape_str(&d.shape),
                        d.elem.name(),
                        d.buffer.size()
                    ),
                    ));
                }
                ArgDesc {
                    elem: d.elem,
                    shape: d.shape.clone(),
                    scalar: None,
                }
            }
        });
    }
    Ok(descs)
}

/// The sizes of an entry's parameters inferred from the arguments, checked like the interpreter.
pub(crate) fn check_arg_descs(f: &FunDef, entry: &str, args: &[ArgDesc]) -> E<Vec<PrimValue>> {
    if args.len() != f.params.len() {
        return Err(Error::runtime(
            RuntimeKind::Arguments,
            &None,
            format!(
                "entry `{entry}` expects {} arguments, got {}",
                f.params.len(),
                args.len()
            ),
        ));
    }
    let mut sizes: HashMap<&ir::VName, (usize, usize)> = HashMap::new();
    for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
        if let Some(v) = a.scalar {
            if let Some(n) = v.as_i128().and_then(|n| usize::try_from(n).ok()) {
                sizes.insert(&p.name, (n, k));
            }
        }
    }
    for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
        let bad = || {
            format!(
                "argument {}: expected {}, got {}",
                k + 1,
                type_name(&p.ty),
                a.type_name()
            )
        };
        if p.ty.elem() != Some(a.elem) || p.ty.rank() != a.shape.len() {
            return Err(Error::runtime(RuntimeKind::Arguments, &None, bad()));
        }
        for (d, (dim, &n)) in p.ty.shape().iter().zip(&a.shape).enumerate() {
            match dim {
                SubExp::Const(c) => {
                    if c.as_i128() != Some(n as i128) {
                        return Err(Error::runtime(RuntimeKind::Arguments, &None, bad()));
                    }
                }
                SubExp::Var(v) => match sizes.get(v) {
                    Some(&(m, k0)) if m != n => {
                        return Err(Error::runtime(RuntimeKind::Arguments, &None, format!(
                            "shape mismatch: argument {} has size {n} in dimension {} where argument {} has size {m} for the same size `{}`",
                            k + 1, d + 1, k0 + 1, v.base
                        )))
                    }
                    Some(_) => {}
                    None => {
                        sizes.insert(v, (n, k));
                    }
                },
            }
        }
    }
    f.size_params
        .iter()
        .map(|s| match sizes.get(s) {
            Some(&(n, _)) => Ok(PrimValue::I64(n as i64)),
            None => Err(Error::runtime(
                RuntimeKind::Arguments,
                &None,
                format!(
                    "entry `{entry}`: size `{}` cannot be inferred from the arguments",
                    s.base
                ),
            )),
        })
        .collect()
}

fn type_name(t: &Type) -> String {
    let mut s = String::new();
    for d in t.shape() {
        match d {
            SubExp::Const(c) => s.push_str(&format!("[{}]", c.as_i128().unwrap_or(0))),
            SubExp::Var(_) => s.push_str("[]"),
        }
    }
    s.push_str(t.elem().map(|e| e.name()).unwrap_or("accumulator"));
    s
}
