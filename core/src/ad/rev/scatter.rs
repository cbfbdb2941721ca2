//! The return sweep of `scatter` (ad-rules.md §5). Writes are sequential: a later write to the
//! same position wins and out-of-range indices are ignored. So, for each destination with an
//! adjoint ȳ:
//! - `v̄s[j] += ȳ[is[j]]` only when `j` is in range and is the *last* write to its position;
//! - `d̄est += ȳ` with every written position zeroed.
//!
//! The original destination is not needed (the forward sweep scattered into a copy, and the
//! rule is linear), so nothing is saved. To find the winning writes in O(m) work (m = number of
//! writes), every `j` is first scattered, encoded as a value of ȳ's element type, into ȳ itself
//! (whose written positions are zeroed afterwards anyway); `j` won iff reading its position back
//! gives its own code. Element types too narrow to encode an index (`f16`, 8- and 16-bit
//! integers) and array rows use a separate `i64` array of the destination's outer shape instead.

use super::radix::{i64t, in_range, iota, replicate, scatter, to_i64, zeros_in, I64};
use super::{has_adjoint, Rev, R};
use crate::ir::builder::{lambda, var, Builder};
use crate::ir::*;
use crate::prim::{FloatType, IntType, PrimType};

/// How the index `j` is written into ȳ and recognised again.
#[derive(Clone, Copy)]
enum Code {
    /// Converted to the integer type.
    Int(IntType),
    /// The bits of `j` as the unsigned integer of the float's width, reinterpreted.
    Bits(FloatType, IntType),
}

fn code_for(elem: PrimType) -> Option<Code> {
    match elem {
        PrimType::Int(it @ (IntType::I32 | IntType::I64 | IntType::U32 | IntType::U64)) => {
            Some(Code::Int(it))
        }
        PrimType::Float(FloatType::F32) => Some(Code::Bits(FloatType::F32, IntType::U32)),
        PrimType::Float(FloatType::F64) => Some(Code::Bits(FloatType::F64, IntType::U64)),
        _ => None,
    }
}

/// `j` encoded as an element.
fn encode(b: &mut Builder, code: Code, j: SubExp) -> SubExp {
    match code {
        Code::Int(it) => var(&b.conv(I64, PrimType::Int(it), j)),
        Code::Bits(ft, ut) => {
            let u = b.conv(I64, PrimType::Int(ut), j);
            var(&b.math(MathFn::FromBits(ft), vec![var(&u)]))
        }
    }
}

/// Does the element `x` hold the code of `j`? (Compares bits for floats.)
fn is_code(b: &mut Builder, code: Code, x: SubExp, j: SubExp) -> SubExp {
    match code {
        Code::Int(it) => {
            let c = b.conv(I64, PrimType::Int(it), j);
            var(&b.cmp(CmpOp::Eq(PrimType::Int(it)), x, var(&c)))
        }
        Code::Bits(ft, ut) => {
            let xb = b.math(MathFn::ToBits(ft), vec![x]);
            let c = b.conv(I64, PrimType::Int(ut), j);
            var(&b.cmp(CmpOp::Eq(PrimType::Int(ut)), var(&xb), var(&c)))
        }
    }
}

/// Is the multi-index (`i64`s) inside the outer `dims`?
fn all_in_range(b: &mut Builder, idx: &[SubExp], dims: &[SubExp]) -> SubExp {
    let mut acc = SubExp::Const(crate::prim::PrimValue::Bool(true));
    for (i, d) in idx.iter().zip(dims) {
        let c = in_range(b, i, d);
        acc = var(&b.binop(BinOp::LogAnd, acc, c));
    }
    acc
}

impl Rev<'_> {
    pub(super) fn rev_scatter(&mut self, stm: &Stm) -> R<()> {
        let Exp::Soac(Soac::Scatter {
            w,
            dest,
            inds,
            vals,
        }) = &stm.exp
        else {
            return Err("scatter (internal error)".into());
        };
        let adjs = self.take_result_adjs(&stm.pat);
        let mut ind_tys = vec![];
        for i in inds {
            match self.ty_of(i)?.elem() {
                Some(p @ PrimType::Int(_)) => ind_tys.push(p),
                _ => return Err("scatter with non-integer indices (internal error)".into()),
            }
        }
        for (k, adj) in adjs.into_iter().enumerate() {
            let Some((ybar, owned)) = adj else {
                continue;
            };
            let dty = stm.pat.elems[k].ty.clone();
            if !has_adjoint(&dty) {
                continue;
            }
            let SubExp::Var(yb) = ybar else {
                return Err("a constant array adjoint (internal error)".into());
            };
            let yb = if owned {
                yb
            } else {
                self.bind("adj_copy", dty.clone(), Exp::Copy(yb))
            };
            let elem = dty
                .elem()
                .ok_or("scatter into a non-array (internal error)")?;
            let outer: Vec<SubExp> = dty.shape()[..inds.len()].to_vec();
            let row = Type::array(elem, dty.shape()[inds.len()..].to_vec());
            let code = if matches!(row, Type::Prim(_)) {
                code_for(elem)
            } else {
                None
            };
            let (vbar, dbar) = self
                .build(|b| scatter_adjoints(b, w, &yb, &dty, &outer, &row, inds, &ind_tys, code));
            self.add_adj(&vals[k], var(&vbar), true)?;
            self.add_adj(&dest[k], var(&dbar), true)?;
        }
        Ok(())
    }
}

/// The adjoints of the values and of the destination of one scattered array, given its result
/// adjoint `yb: dty` (consumed). Returns `(v̄s, d̄est)`.
#[allow(clippy::too_many_arguments)] // the pieces of one scatter statement
fn scatter_adjoints(
    b: &mut Builder,
    w: &SubExp,
    yb: &VName,
    dty: &Type,
    outer: &[SubExp],
    row: &Type,
    inds: &[VName],
    ind_tys: &[PrimType],
    code: Option<Code>,
) -> (VName, VName) {
    let r = inds.len();
    let js = iota(b, w);
    // The index tuple of write `j` as i64s, and whether it is in range, inside a lambda.
    let idx_params = |b: &mut Builder, ps: &[VName]| -> (Vec<SubExp>, SubExp) {
        let idx: Vec<SubExp> = ps[..r]
            .iter()
            .zip(ind_tys)
            .map(|(p, t)| to_i64(b, var(p), *t))
            .collect();
        let inb = all_in_range(b, &idx, outer);
        (idx, inb)
    };
    let fix =
        |idx: &[SubExp]| -> Vec<DimIndex> { idx.iter().cloned().map(DimIndex::Fix).collect() };
    let ind_param_tys: Vec<(&str, Type)> = ind_tys.iter().map(|t| ("i", Type::Prim(*t))).collect();

    // g[j] = ȳ[is[j]] (zero when out of range).
    let lam = lambda(b.ns, &ind_param_tys, vec![row.clone()], |b, ps| {
        let (idx, inb) = idx_params(b, ps);
        let g = super::radix::if_then_else(
            b,
            inb,
            row,
            |b| var(&b.bind("g", row.clone(), Exp::Index(yb.clone(), fix(&idx)))),
            |b| zeros_in(b, row),
        );
        vec![var(&g)]
    });
    let g = b.map(w.clone(), inds.to_vec(), lam)[0].clone();

    // Who wrote last: `lookup` holds, at each written position, the code of its last writer.
    let (lookup, elem_code, ycleared_src) = match code {
        Some(code) => {
            let lam = lambda(b.ns, &[("j", i64t())], vec![row.clone()], |b, ps| {
                vec![encode(b, code, var(&ps[0]))]
            });
            let codes = b.map(w.clone(), vec![js.clone()], lam)[0].clone();
            let scr = scatter(
                b,
                w,
                vec![(yb.clone(), dty.clone())],
                inds.to_vec(),
                vec![codes],
            )[0]
            .clone();
            (scr.clone(), Some(code), scr)
        }
        None => {
            let lty = Type::array(I64, outer.to_vec());
            let init = b.bind(
                "last",
                lty.clone(),
                Exp::Replicate {
                    shape: outer.to_vec(),
                    value: SubExp::i64(-1),
                },
            );
            let last = scatter(
                b,
                w,
                vec![(init, lty.clone())],
                inds.to_vec(),
                vec![js.clone()],
            )[0]
            .clone();
            (last, None, yb.clone())
        }
    };

    // v̄s[j] = g[j] if j won the write to its (in-range) position, else 0.
    let mut ps_tys = ind_param_tys.clone();
    ps_tys.push(("j", i64t()));
    ps_tys.push(("g", row.clone()));
    let lam = lambda(b.ns, &ps_tys, vec![row.clone()], |b, ps| {
        let (idx, inb) = idx_params(b, ps);
        let j = var(&ps[r]);
        let bt = Type::Prim(PrimType::Bool);
        let won = super::radix::if_then_else(
            b,
            inb,
            &bt,
            |b| match elem_code {
                Some(code) => {
                    let x = b.bind("x", row.clone(), Exp::Index(lookup.clone(), fix(&idx)));
                    is_code(b, code, var(&x), j.clone())
                }
                None => {
                    let x = b.bind("x", i64t(), Exp::Index(lookup.clone(), fix(&idx)));
                    var(&b.cmp(CmpOp::Eq(I64), var(&x), j.clone()))
                }
            },
            |_| SubExp::Const(crate::prim::PrimValue::Bool(false)),
        );
        let v = super::radix::if_then_else(
            b,
            var(&won),
            row,
            |_| var(&ps[r + 1]),
            |b| zeros_in(b, row),
        );
        vec![var(&v)]
    });
    let mut arrs = inds.to_vec();
    arrs.push(js);
    arrs.push(g);
    let vbar = b.map(w.clone(), arrs, lam)[0].clone();

    // d̄est = ȳ with the written positions zeroed.
    let z = match row {
        Type::Prim(p) => replicate(b, w, SubExp::Const(crate::prim::PrimValue::zero(*p)), row),
        _ => {
            let zt = row.array_of(w.clone());
            let mut shape = vec![w.clone()];
            shape.extend(row.shape().iter().cloned());
            b.bind(
                "zeros",
                zt,
                Exp::Replicate {
                    shape,
                    value: SubExp::Const(crate::prim::PrimValue::zero(row.elem().unwrap_or(I64))),
                },
            )
        }
    };
    let dbar = scatter(
        b,
        w,
        vec![(ycleared_src, dty.clone())],
        inds.to_vec(),
        vec![z],
    )[0]
    .clone();
    (vbar, dbar)
}

#[cfg(test)]
#[path = "tests_scatter.rs"]
mod tests_scatter;
