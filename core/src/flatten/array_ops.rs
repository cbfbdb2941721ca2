//! Array statements of a distributed nest as kernels over their own elements (part of rule 4).
//!
//! When a nest is distributed, its statements that are not SOACs run in `segmap`s, one thread
//! per point of the nest. A `replicate`, `copy` or in-place update of a row in such a group
//! costs each thread a loop over the row: the one-hot seeds that `tabulate n (\i -> vjp f x
//! (replicate n 0 with [i] = 1))` builds are `n` elements per thread, `n²` in all on `n`
//! threads. As Futhark's kernel extraction does, these statements get kernels of their own,
//! with the row's dimensions as dimensions of the kernel's space:
//!
//! - `replicate([s..], v)` and `copy(a)` are the `map` nests that compute them
//!   ([`Flattener::array_op_as_map`]: `map(s, {}, \ -> v)`, `map(d, {a}, \x -> x)`, nested),
//!   which rule 2 makes one `segmap` over the nest and the row;
//! - `x with [i..] = y`, where the rows `x` are a host array that an earlier group of the same
//!   distribution made (so nothing else reads it), is one `segmap` over the nest and `y`'s
//!   dimensions that writes `y`'s elements into that array in place
//!   ([`Flattener::update_kernel`]), after checking the indices as the update would;
//! - `iota(n, start, stride)` is one `segmap` over the nest and `n` whose thread `i` returns
//!   `start + i·stride` ([`Flattener::iota_kernel`]; as a `map` it would need an `iota` to map
//!   over). A one-thread nest would otherwise write a row of millions of indices in one
//!   thread, past lavapipe's loop limit.

use super::kernel::Flattener;
use super::nest::{Level, Nest};
use crate::ir::builder::{var, Builder};
use crate::ir::{self, BinOp, Body, CmpOp, DimIndex, Exp, Lambda, Param, Soac, Stm, SubExp, Type};
use crate::passes::traverse::mk_stm;
use crate::prim::{IntType, PrimType};
use crate::seg::{HostStm, KernelResult, SegKind};
use std::collections::HashSet;

const I64: PrimType = PrimType::Int(IntType::I64);

/// Whether `s` is an array statement that gets a kernel of its own when its nest is
/// distributed (see the module).
pub(super) fn own_kernel(s: &Stm) -> bool {
    match &s.exp {
        Exp::Replicate { .. } | Exp::Copy(_) | Exp::Iota { .. } => true,
        Exp::Update(_, idx, _) => idx.iter().all(|i| matches!(i, DimIndex::Fix(_))),
        _ => false,
    }
}

impl Flattener<'_> {
    /// The `replicate` or `copy` statement `s` as the statement binding the same pattern to
    /// the `map` nest that computes it; `None` for other statements.
    pub(super) fn array_op_as_map(&mut self, s: &Stm) -> Option<Stm> {
        let [pe] = &s.pat.elems[..] else { return None };
        let exp = match &s.exp {
            Exp::Replicate { shape, value } => {
                let vt = self.type_of(value);
                let (inner, inner_ty) = self.copy_nest(value.clone(), vt);
                let mut exp = inner;
                let mut ty = inner_ty;
                for w in shape.iter().rev() {
                    let lam = self.lambda(Vec::new(), exp, ty.clone());
                    exp = Exp::Soac(Soac::Map {
                        w: w.clone(),
                        arrs: Vec::new(),
                        lam,
                    });
                    ty = ty.array_of(w.clone());
                }
                exp
            }
            Exp::Copy(a) => {
                let t = self.types.get(a)?.clone();
                if t.rank() == 0 {
                    return None;
                }
                self.copy_nest(SubExp::Var(a.clone()), t).0
            }
            _ => return None,
        };
        if !matches!(exp, Exp::Soac(_)) {
            return None;
        }
        Some(Stm {
            pat: ir::Pat {
                elems: vec![pe.clone()],
            },
            exp,
            loc: s.loc.clone(),
            attrs: Default::default(),
        })
    }

    /// An expression computing a fresh copy of `v` (of type `t`): the identity `map` nest over
    /// its dimensions, or `v` itself for a scalar. Returns it with its type.
    fn copy_nest(&mut self, v: SubExp, t: Type) -> (Exp, Type) {
        let (SubExp::Var(a), Some(w)) = (&v, t.shape().first().cloned()) else {
            return (Exp::SubExp(v), t);
        };
        let row = t.row();
        let x = self.fresh_param(a, row.clone());
        let (inner, _) = self.copy_nest(SubExp::Var(x.name.clone()), row.clone());
        let lam = self.lambda(vec![x], inner, row);
        let exp = Exp::Soac(Soac::Map {
            w,
            arrs: vec![a.clone()],
            lam,
        });
        (exp, t)
    }

    /// `\params -> exp` returning one value of type `ret`.
    fn lambda(&mut self, params: Vec<Param>, exp: Exp, ret: Type) -> Lambda {
        let body = match exp {
            Exp::SubExp(se) => Body {
                stms: Vec::new(),
                result: vec![se],
            },
            exp => {
                let y = self.fresh_param(
                    &ir::VName {
                        id: 0,
                        base: "row".into(),
                    },
                    ret.clone(),
                );
                Body {
                    result: vec![SubExp::Var(y.name.clone())],
                    stms: vec![Stm {
                        pat: ir::Pat { elems: vec![y] },
                        exp,
                        loc: None,
                        attrs: Default::default(),
                    }],
                }
            }
        };
        Lambda {
            params,
            body,
            ret: vec![ret],
        }
    }

    /// The in-place update `s` (`x with [i..] = y`) in `nest` as one kernel over the nest and
    /// `y`'s dimensions writing into the host array holding the rows `x`, bound to `pat`;
    /// `None` unless that array is one of `made` (arrays an earlier group of the same
    /// distribution bound, which nothing else reads) and the indices are single indices.
    pub(super) fn update_kernel(
        &mut self,
        nest: &Nest,
        s: &Stm,
        pat: &[Param],
        made: &HashSet<ir::VName>,
    ) -> Option<HostStm> {
        let Exp::Update(x, idx, y) = &s.exp else {
            return None;
        };
        let fixed: Vec<SubExp> = idx
            .iter()
            .map(|i| match i {
                DimIndex::Fix(e) => Some(e.clone()),
                DimIndex::Slice { .. } => None,
            })
            .collect::<Option<_>>()?;
        let dest = self.resolve_dest(nest, x)?;
        if !made.contains(&dest) {
            return None;
        }
        let xt = self.types.get(x)?.clone();
        let shape = xt.shape().to_vec();
        if fixed.is_empty() || fixed.len() > shape.len() {
            return None;
        }
        let yt = self.type_of(y);
        let elem = xt.elem()?;
        // One thread per element of `y`.
        let mut inner = nest.clone();
        let mut write_idx: Vec<SubExp> = nest.gtids().into_iter().map(SubExp::Var).collect();
        write_idx.extend(fixed.iter().cloned());
        let mut elem_idx = Vec::new();
        for w in yt.shape() {
            let g = self.ns.fresh("gtid");
            inner.levels.push(Level {
                gtid: g.clone(),
                width: w.clone(),
            });
            write_idx.push(SubExp::Var(g.clone()));
            elem_idx.push(SubExp::Var(g));
        }
        // The bounds check of the update, made by every thread.
        let mut b = Builder::new(self.ns);
        let mut ok: Option<SubExp> = None;
        for (i, d) in fixed.iter().zip(&shape) {
            let ge = b.cmp(CmpOp::Le(I64), SubExp::i64(0), i.clone());
            let lt = b.cmp(CmpOp::Lt(I64), i.clone(), d.clone());
            let both = var(&b.binop(BinOp::LogAnd, var(&ge), var(&lt)));
            ok = Some(match ok {
                None => both,
                Some(prev) => var(&b.binop(BinOp::LogAnd, prev, both)),
            });
        }
        let holes = vec!["{}"; fixed.len()].join(", ");
        let dims = vec!["{}"; shape.len()].join(", ");
        let mut args = fixed;
        args.extend(shape.iter().cloned());
        b.stms.push(mk_stm(
            Vec::new(),
            Exp::Assert {
                cond: ok.expect("at least one index"),
                msg: format!("index [{holes}] out of bounds for array of shape [{dims}]"),
                args,
            },
        ));
        let val = match y {
            SubExp::Var(a) if !elem_idx.is_empty() => {
                let v = b.index(Type::Prim(elem), a, elem_idx);
                // In bounds: the thread indices range over `y`'s dimensions.
                if let Some(read) = b.stms.last_mut() {
                    read.attrs = ir::Attrs(vec!["unsafe".into()]);
                }
                var(&v)
            }
            _ => y.clone(),
        };
        let mut stms = b.stms;
        for t in &mut stms {
            t.loc = s.loc.clone();
        }
        let results = vec![KernelResult::Write {
            dest,
            idx: write_idx,
            val,
        }];
        Some(self.kernel(
            &inner,
            SegKind::Map,
            stms,
            results,
            vec![Type::Prim(elem)],
            pat.to_vec(),
            &s.loc,
        ))
    }

    /// `s`, an `iota(n, start, stride)` of nest `nest`, as one `segmap` over the nest and `n`
    /// whose thread `i` returns `start + i·stride` (wrapping in the `iota`'s type, as the
    /// `iota` itself), bound to `pat`; `None` for other statements.
    pub(super) fn iota_kernel(&mut self, nest: &Nest, s: &Stm, pat: &[Param]) -> Option<HostStm> {
        let Exp::Iota {
            n,
            start,
            stride,
            it,
        } = &s.exp
        else {
            return None;
        };
        let t = PrimType::Int(*it);
        let mut inner = nest.clone();
        let g = self.ns.fresh("gtid");
        inner.levels.push(Level {
            gtid: g.clone(),
            width: n.clone(),
        });
        let mut b = Builder::new(self.ns);
        let i = if t == I64 {
            var(&g)
        } else {
            var(&b.conv(I64, t, var(&g)))
        };
        let step = b.binop(BinOp::Mul(t), i, stride.clone());
        let v = b.binop(BinOp::Add(t), start.clone(), var(&step));
        let mut stms = b.stms;
        for st in &mut stms {
            st.loc = s.loc.clone();
        }
        Some(self.kernel(
            &inner,
            SegKind::Map,
            stms,
            vec![KernelResult::Returns(var(&v))],
            vec![Type::Prim(t)],
            pat.to_vec(),
            &s.loc,
        ))
    }
}
