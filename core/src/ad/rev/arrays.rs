//! Return-sweep rules of the array statements: indexing adds into a slice of the array's
//! adjoint (in place, or through an accumulator inside a `map`); an in-place update routes the
//! adjoint of the written slice to the value and zeroes it for the array; `replicate` sums;
//! `concat` slices; `copy`, `reshape` and `rearrange` apply their own inverse to the adjoint;
//! `iota n` gives `n̄ += Σ ȳ` (Futhark's rule).

use super::{slice_type, Rev, R};
use crate::ir::*;
use crate::prim::{IntType, PrimType};

const I64: PrimType = PrimType::Int(IntType::I64);

impl Rev<'_> {
    pub(super) fn rev_array(&mut self, stm: &Stm) -> R<()> {
        let adjs = self.take_result_adjs(&stm.pat);
        let Some(Some((ybar, owned))) = adjs.into_iter().next() else {
            return Ok(());
        };
        let yty = stm.pat.elems[0].ty.clone();
        match &stm.exp {
            Exp::Index(a, idx) => self.add_adj_index(a, idx, ybar),
            Exp::Update(a, idx, v) => {
                let SubExp::Var(yb) = ybar else {
                    return Err("a constant array adjoint (internal error)".into());
                };
                let st = slice_type(&yty, idx);
                // v̄ += ȳ[idx]. A slice is a view of ȳ: where ȳ is owned it is consumed below
                // (zeroed in place) while v̄ lives on, so the slice is copied first; otherwise ȳ
                // is shared and stays as it is, and so does the view (not owned: whoever updates
                // v̄ in place copies it).
                if let SubExp::Var(vv) = v {
                    let part =
                        self.bind("upd_adj", st.clone(), Exp::Index(yb.clone(), idx.clone()));
                    let slice = matches!(st, Type::Array { .. });
                    let (part, fresh) = if slice && owned && self.active(vv) {
                        (self.bind("upd_adj_copy", st.clone(), Exp::Copy(part)), true)
                    } else {
                        (part, !slice)
                    };
                    self.add_adj(vv, SubExp::Var(part), fresh)?;
                }
                // ā += ȳ with [idx] = 0
                let y2 = if owned {
                    yb
                } else {
                    self.bind("adj_copy", yty.clone(), Exp::Copy(yb))
                };
                let z = self.zeros(&st)?;
                let cleared = self.bind("adj_cleared", yty, Exp::Update(y2, idx.clone(), z));
                self.add_adj(a, SubExp::Var(cleared), true)
            }
            // As Futhark (formally, like every integer): `n̄ += Σ ȳ`; start and stride get
            // nothing.
            Exp::Iota {
                n: SubExp::Var(n),
                it,
                ..
            } => {
                let SubExp::Var(yb) = ybar else {
                    return Ok(());
                };
                let t = PrimType::Int(*it);
                let op = self.add_operator(t);
                let s = self.bind(
                    "iota_contrib",
                    Type::Prim(t),
                    Exp::Soac(Soac::Reduce {
                        w: SubExp::Var(n.clone()),
                        arrs: vec![yb],
                        op,
                    }),
                );
                let s = if t == I64 {
                    SubExp::Var(s)
                } else {
                    SubExp::Var(self.bind(
                        "iota_contrib",
                        Type::Prim(I64),
                        Exp::Conv(ConvOp { from: t, to: I64 }, SubExp::Var(s)),
                    ))
                };
                self.add_adj(n, s, true)
            }
            Exp::Iota { .. } => Ok(()),
            Exp::Replicate { shape, value } => {
                let SubExp::Var(val) = value else {
                    return Ok(());
                };
                let vty = self.ty_of(val)?;
                let SubExp::Var(yb) = ybar else {
                    return Err("a constant array adjoint (internal error)".into());
                };
                // Flatten the replicated dimensions and sum over them.
                let mut n = SubExp::i64(1);
                for d in shape {
                    n = self.binop(BinOp::Mul(I64), n, d.clone());
                }
                let mut fshape = vec![n.clone()];
                fshape.extend(vty.shape().iter().cloned());
                let elem = vty.elem().unwrap_or(I64);
                let flat = self.bind(
                    "flat_adj",
                    Type::array(elem, fshape.clone()),
                    Exp::Reshape(fshape, yb),
                );
                let s = self.sum_rows(&n, flat, &vty)?;
                self.add_adj(val, s, true)
            }
            Exp::ArrayLit { elems, row } => {
                let SubExp::Var(yb) = ybar else {
                    return Err("a constant array adjoint (internal error)".into());
                };
                for (i, e) in elems.iter().enumerate() {
                    if let SubExp::Var(ev) = e {
                        let part = self.bind(
                            "lit_adj",
                            row.clone(),
                            Exp::Index(yb.clone(), vec![DimIndex::Fix(SubExp::i64(i as i64))]),
                        );
                        self.add_adj(ev, SubExp::Var(part), true)?;
                    }
                }
                Ok(())
            }
            Exp::Concat { dim, arrs, .. } => {
                let SubExp::Var(yb) = ybar else {
                    return Err("a constant array adjoint (internal error)".into());
                };
                let mut off = SubExp::i64(0);
                for a in arrs {
                    let aty = self.ty_of(a)?;
                    let len = aty
                        .shape()
                        .get(*dim)
                        .cloned()
                        .ok_or("a concat along a missing dimension (internal error)")?;
                    let mut idx: Vec<DimIndex> = yty.shape()[..*dim]
                        .iter()
                        .map(|d| DimIndex::Slice {
                            start: SubExp::i64(0),
                            len: d.clone(),
                            stride: SubExp::i64(1),
                        })
                        .collect();
                    idx.push(DimIndex::Slice {
                        start: off.clone(),
                        len: len.clone(),
                        stride: SubExp::i64(1),
                    });
                    let part = self.bind("concat_adj", aty, Exp::Index(yb.clone(), idx));
                    self.add_adj(a, SubExp::Var(part), false)?;
                    off = self.binop(BinOp::Add(I64), off, len);
                }
                Ok(())
            }
            Exp::Copy(a) => self.add_adj(a, ybar, owned),
            Exp::Reshape(_, a) => {
                let SubExp::Var(yb) = ybar else {
                    return Err("a constant array adjoint (internal error)".into());
                };
                let aty = self.ty_of(a)?;
                let r = self.bind(
                    "reshape_adj",
                    aty.clone(),
                    Exp::Reshape(aty.shape().to_vec(), yb),
                );
                self.add_adj(a, SubExp::Var(r), false)
            }
            Exp::Rearrange(perm, a) => {
                let SubExp::Var(yb) = ybar else {
                    return Err("a constant array adjoint (internal error)".into());
                };
                let mut inv = vec![0; perm.len()];
                for (i, p) in perm.iter().enumerate() {
                    inv[*p] = i;
                }
                let aty = self.ty_of(a)?;
                let r = self.bind("rearrange_adj", aty, Exp::Rearrange(inv, yb));
                self.add_adj(a, SubExp::Var(r), false)
            }
            // `sorted = keys[perm]` (integers, formally as Futhark does): k̄s[perm[j]] += s̄[j],
            // a scatter since `perm` is a permutation; the permutation gets nothing.
            Exp::SortByKey { keys, .. } => {
                let SubExp::Var(yb) = ybar else {
                    return Err("a constant array adjoint (internal error)".into());
                };
                let perm = stm.pat.elems.get(1).ok_or("sort_by_key binds two arrays")?;
                let z = self.zeros(&yty)?;
                let dest = z
                    .as_var()
                    .cloned()
                    .ok_or("zeros of an array (internal error)")?;
                let r = self.bind(
                    "sort_adj",
                    yty.clone(),
                    Exp::Soac(Soac::Scatter {
                        w: yty.shape()[0].clone(),
                        dest: vec![dest],
                        inds: vec![perm.name.clone()],
                        vals: vec![yb],
                    }),
                );
                self.add_adj(keys, SubExp::Var(r), true)
            }
            _ => Err("an array statement (internal error)".into()),
        }
    }

    /// The sum of the `n` rows of `arr` (rows of type `row`), by a `reduce` with `+`.
    pub fn sum_rows(&mut self, n: &SubExp, arr: VName, row: &Type) -> R<SubExp> {
        let op = match row {
            Type::Prim(p) => self.add_operator(*p),
            _ => {
                let pa = self.fresh_param("a", row.clone());
                let pb = self.fresh_param("b", row.clone());
                let (va, vb) = (SubExp::Var(pa.name.clone()), SubExp::Var(pb.name.clone()));
                let rt = row.clone();
                let body = self.in_body(|r| Ok(vec![r.add_values(va, vb, &rt)?]))?;
                let z = self.zeros(row)?;
                Operator {
                    lam: Lambda {
                        params: vec![pa, pb],
                        body,
                        ret: vec![row.clone()],
                    },
                    neutral: vec![z],
                    commutative: true,
                }
            }
        };
        let r = self.bind(
            "sum",
            row.clone(),
            Exp::Soac(Soac::Reduce {
                w: n.clone(),
                arrs: vec![arr],
                op,
            }),
        );
        Ok(SubExp::Var(r))
    }
}

#[cfg(test)]
#[path = "tests_arrays.rs"]
mod tests;
