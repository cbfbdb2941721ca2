//! Accumulator updates that many threads make to the same element become a segmented
//! reduction (rule 7 of [`super`]).
//!
//! Distribution leaves kernels such as the reverse sweep of `map (\p -> f64.sum (...)) points`
//! summing into a nest-invariant accumulator, in the form
//!
//! ```text
//! segmap (gi < n, gj < k, gl < d) { ...; upd_acc(acc, [gj, gl], v) }     -- acc: [k][d]
//! ```
//!
//! where every element of `acc` is updated by `n` threads (k-means' Newton step: 20,000 atomic
//! additions to each of 175 elements, which serialise on a GPU and on lavapipe alike). When
//! the update's indices are distinct thread indices of the space (directly, or through an
//! `iota` starting at 0 with stride 1) and exactly one thread index `gi` is not among them,
//! the kernel is rewritten into
//!
//! ```text
//! let r = segred (gj < k, gl < d, gi < n) op { ...; return v }            -- r: [k][d]
//! segmap (hj < k, hl < d) { upd_acc(acc, [hj, hl], r[hj, hl]) }
//! ```
//!
//! with `op` the accumulator's operator (from its `with_acc`): each element is updated once.
//! The `segred` stores every value before it sums (the runtime's segmented reductions run over
//! stored operands); where there are elements enough to fill the device with a thread each,
//! `segmap (gj < k, gl < d, gp < 8) { reduce op (map (\gi -> ...; v) (iota piece_p)) }`
//! sums an eighth of each element's values in a thread, storing nothing else (thread code
//! computes the inner `map` where the `reduce` uses it), and a `segmap (gj < k, gl < d)`
//! sums the eight (`thread_reduction`). Both
//! are generated, chosen by `seg_threads_threshold(seg_threads_N) (k * d)` (rule 5's choice
//! between the versions of a nest, with a default of its own: on lavapipe a stored value
//! costs about five steps of a thread's loop, so a thread per element wins there unless the
//! elements are fewer than a fifth of the cores).
//! Accumulators the kernel passes through without updating them (those whose results nothing
//! uses, [`crate::passes::dead_acc`]) pass through the second kernel.
//! The sum is the same up to the order of the operator's applications, which atomics do not
//! fix either (the operator is associative and commutative, as a `with_acc` operator must
//! be). Accumulators without an operator (writes), updates of whole rows, and updates whose
//! indices depend on data are left alone.
//!
//! Both versions are kept, chosen at run time by `acc_threshold(acc_red_N) n` (true: the
//! reduction): where few threads update each element, the atomic kernel is cheaper than
//! materialising the reduction's operands. Dead `#[unsafe]` indexings (the indices' reads of
//! the `iota`) are dropped from the reduction's body, so that operands which are elements of
//! host arrays stay recognisable as such to the backend.

use super::kernel::{versioned, Flattener};
use crate::ir::{
    Body, DimIndex, Exp, Lambda, Operator, Param, Pat, Soac, Stm, SubExp, Type, VName,
};
use crate::prim::PrimValue;
use crate::seg::ThresholdKind;
use crate::seg::{HostBody, HostExp, HostStm, KernelBody, KernelResult, SegKind, SegOp, SegSpace};
use std::collections::HashMap;

impl Flattener<'_> {
    /// Versions every kernel of `body` (and of the bodies nested in it) that matches the
    /// module doc's pattern.
    pub(super) fn reduce_acc_updates(&mut self, body: &mut HostBody) {
        Env::default().body(body, self);
    }
}

/// The pieces each element's values are summed in by [`thread_reduction`]: a thread per
/// element and piece, then a thread per element summing its pieces. Pieces let a few elements
/// still use several cores of a CPU device (lavapipe runs a workgroup of 256 threads on one
/// core: k-means' 175 sums of 5,000 values were one workgroup) and more of a GPU's threads.
const PIECES: i64 = 8;

/// The reduction of rule 7 as kernels of threads that each sum values in a loop, storing
/// nothing but partial sums: a `segmap` over the kept dimensions and [`PIECES`] pieces of the
/// reduced one (the last of `space`), whose threads map `body` (the values at a point of
/// `space`) over their piece's `iota` and reduce it by `operators` combined into one, then a
/// `segmap` over the kept dimensions summing each element's pieces. Thread code computes an
/// inner `map` where it is used: where there are enough elements to fill the device, this
/// saves the segmented reduction's kernel storing every value first. Binds `pat`.
fn thread_reduction(
    fl: &mut Flattener,
    space: &[(VName, SubExp)],
    body: &Body,
    val_types: &[Type],
    operators: &[&Operator],
    pat: &[Param],
    s: &HostStm,
) -> Vec<HostStm> {
    let i64p = crate::prim::PrimType::Int(crate::prim::IntType::I64);
    let i64t = Type::Prim(i64p);
    let n = space[space.len() - 1].1.clone();
    let mut out = Vec::new();
    // The piece length, ceil(n / PIECES).
    use crate::ir::BinOp;
    let up = fl.i64_op(
        "piece_len",
        BinOp::Add(i64p),
        n.clone(),
        SubExp::i64(PIECES - 1),
        &mut out,
    );
    let piece = fl.i64_op(
        "piece_len",
        BinOp::Div(i64p),
        up,
        SubExp::i64(PIECES),
        &mut out,
    );
    let lam = crate::passes::traverse::fresh_lambda(
        fl.ns,
        &Lambda {
            params: space
                .iter()
                .map(|(g, _)| Param {
                    name: g.clone(),
                    ty: i64t.clone(),
                })
                .collect(),
            body: body.clone(),
            ret: val_types.to_vec(),
        },
    );
    let (kept, reduced) = lam.params.split_at(space.len() - 1);
    let gp = fl.ns.fresh("gtid_piece");
    // The thread's piece: [lo, min(lo + piece, n)).
    let mut stms = Vec::new();
    let mut scalar = |fl: &mut Flattener, base: &str, exp: Exp| {
        let v = fl.ns.fresh(base);
        stms.push(Stm {
            pat: Pat {
                elems: vec![Param {
                    name: v.clone(),
                    ty: i64t.clone(),
                }],
            },
            exp,
            attrs: Default::default(),
            loc: None,
        });
        SubExp::Var(v)
    };
    let lo = scalar(
        fl,
        "piece_lo",
        Exp::BinOp(BinOp::Mul(i64p), SubExp::Var(gp.clone()), piece.clone()),
    );
    let end = scalar(
        fl,
        "piece_end",
        Exp::BinOp(BinOp::Add(i64p), lo.clone(), piece),
    );
    let hi = scalar(fl, "piece_hi", Exp::BinOp(BinOp::Min(i64p), end, n.clone()));
    let diff = scalar(
        fl,
        "piece_len",
        Exp::BinOp(BinOp::Sub(i64p), hi, lo.clone()),
    );
    let len = scalar(
        fl,
        "piece_len",
        Exp::BinOp(BinOp::Max(i64p), diff, SubExp::i64(0)),
    );
    let is = fl.ns.fresh("iota");
    stms.push(Stm {
        pat: Pat {
            elems: vec![Param {
                name: is.clone(),
                ty: Type::array(i64p, vec![len.clone()]),
            }],
        },
        exp: Exp::Iota {
            n: len.clone(),
            start: lo,
            stride: SubExp::i64(1),
            it: crate::prim::IntType::I64,
        },
        attrs: Default::default(),
        loc: None,
    });
    let vs: Vec<Param> = val_types
        .iter()
        .map(|t| Param {
            name: fl.ns.fresh("acc_val"),
            ty: t.array_of(len.clone()),
        })
        .collect();
    stms.push(Stm {
        pat: Pat { elems: vs.clone() },
        exp: Exp::Soac(Soac::Map {
            w: len.clone(),
            arrs: vec![is],
            lam: Lambda {
                params: reduced.to_vec(),
                body: lam.body.clone(),
                ret: val_types.to_vec(),
            },
        }),
        attrs: Default::default(),
        loc: s.loc.clone(),
    });
    let sums: Vec<Param> = val_types
        .iter()
        .map(|t| Param {
            name: fl.ns.fresh("acc_part"),
            ty: t.clone(),
        })
        .collect();
    stms.push(Stm {
        pat: Pat {
            elems: sums.clone(),
        },
        exp: Exp::Soac(Soac::Reduce {
            w: len,
            arrs: vs.iter().map(|p| p.name.clone()).collect(),
            op: combined(fl, operators),
        }),
        attrs: Default::default(),
        loc: s.loc.clone(),
    });
    let kept_dims: Vec<(VName, SubExp)> = kept
        .iter()
        .zip(space)
        .map(|(p, (_, d))| (p.name.clone(), d.clone()))
        .collect();
    let mut piece_dims = kept_dims.clone();
    piece_dims.push((gp, SubExp::i64(PIECES)));
    let parts: Vec<Param> = val_types
        .iter()
        .map(|t| {
            let whole = piece_dims
                .iter()
                .rev()
                .fold(t.clone(), |t, (_, d)| t.array_of(d.clone()));
            fl.fresh_param(
                &VName {
                    id: 0,
                    base: "acc_parts".into(),
                },
                whole,
            )
        })
        .collect();
    out.push(HostStm {
        pat: Pat {
            elems: parts.clone(),
        },
        exp: HostExp::Seg(SegOp {
            kind: SegKind::Map,
            space: SegSpace { dims: piece_dims },
            ret: val_types.to_vec(),
            body: KernelBody::returning(Body {
                stms,
                result: sums.iter().map(|p| SubExp::Var(p.name.clone())).collect(),
            }),
        }),
        attrs: s.attrs.clone(),
        loc: s.loc.clone(),
    });
    // A thread per element: its pieces' sums, summed.
    let gtids: Vec<VName> = kept_dims.iter().map(|(g, _)| fl.ns.fresh_like(g)).collect();
    let at: Vec<DimIndex> = gtids
        .iter()
        .map(|g| DimIndex::Fix(SubExp::Var(g.clone())))
        .collect();
    let mut stms = Vec::new();
    let mut rows = Vec::new();
    for (p, t) in parts.iter().zip(val_types) {
        let row = fl.ns.fresh("acc_pieces");
        stms.push(Stm {
            pat: Pat {
                elems: vec![Param {
                    name: row.clone(),
                    ty: t.array_of(SubExp::i64(PIECES)),
                }],
            },
            exp: Exp::Index(p.name.clone(), at.clone()),
            attrs: crate::ir::Attrs(vec!["unsafe".into()]),
            loc: None,
        });
        rows.push(row);
    }
    let totals: Vec<Param> = val_types
        .iter()
        .map(|t| Param {
            name: fl.ns.fresh("acc_sum"),
            ty: t.clone(),
        })
        .collect();
    stms.push(Stm {
        pat: Pat {
            elems: totals.clone(),
        },
        exp: Exp::Soac(Soac::Reduce {
            w: SubExp::i64(PIECES),
            arrs: rows,
            op: combined(fl, operators),
        }),
        attrs: Default::default(),
        loc: s.loc.clone(),
    });
    out.push(HostStm {
        pat: Pat {
            elems: pat.to_vec(),
        },
        exp: HostExp::Seg(SegOp {
            kind: SegKind::Map,
            space: SegSpace {
                dims: gtids
                    .into_iter()
                    .zip(kept_dims.iter().map(|(_, d)| d.clone()))
                    .collect(),
            },
            ret: val_types.to_vec(),
            body: KernelBody::returning(Body {
                stms,
                result: totals.iter().map(|p| SubExp::Var(p.name.clone())).collect(),
            }),
        }),
        attrs: s.attrs.clone(),
        loc: s.loc.clone(),
    });
    out
}

/// One operator over the tuples of `operators`' values side by side (each applied to its
/// own components), with fresh names.
fn combined(fl: &mut Flattener, operators: &[&Operator]) -> Operator {
    let lams: Vec<Lambda> = operators
        .iter()
        .map(|o| crate::passes::traverse::fresh_lambda(fl.ns, &o.lam))
        .collect();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut stms = Vec::new();
    let mut result = Vec::new();
    let mut ret = Vec::new();
    for (l, o) in lams.into_iter().zip(operators) {
        let k = o.neutral.len();
        xs.extend(l.params[..k].iter().cloned());
        ys.extend(l.params[k..].iter().cloned());
        stms.extend(l.body.stms);
        result.extend(l.body.result);
        ret.extend(l.ret);
    }
    xs.extend(ys);
    Operator {
        lam: Lambda {
            params: xs,
            body: Body { stms, result },
            ret,
        },
        neutral: operators
            .iter()
            .flat_map(|o| o.neutral.iter().cloned())
            .collect(),
        commutative: operators.iter().all(|o| o.commutative),
    }
}

/// What is known about host names: the operators of the accumulators in scope (by the name
/// of the `with_acc` lambda's parameter) and the `iota n 0 1`s (by name). Names are unique in a
/// program, so one map serves every scope.
#[derive(Default)]
struct Env {
    ops: HashMap<VName, Operator>,
    iotas: HashMap<VName, SubExp>,
}

impl Env {
    fn body(&mut self, body: &mut HostBody, fl: &mut Flattener) {
        let stms = std::mem::take(&mut body.stms);
        for mut s in stms {
            match &mut s.exp {
                HostExp::Plain(Exp::Iota {
                    n, start, stride, ..
                }) if is_int(start, 0) && is_int(stride, 1) && s.pat.elems.len() == 1 => {
                    self.iotas.insert(s.pat.elems[0].name.clone(), n.clone());
                }
                HostExp::If { then_b, else_b, .. } => {
                    self.body(then_b, fl);
                    self.body(else_b, fl);
                }
                HostExp::Loop { body, .. } => self.body(body, fl),
                HostExp::VersionedLoop { par, seq, .. } => {
                    self.body(par, fl);
                    self.body(seq, fl);
                }
                HostExp::WithAcc { inputs, lam } => {
                    for (i, p) in inputs.iter().zip(&lam.params) {
                        if let Some(op) = &i.op {
                            self.ops.insert(p.name.clone(), op.clone());
                        }
                    }
                    self.body(&mut lam.body, fl);
                }
                HostExp::Seg(_) => {
                    if let Some(rewritten) = self.rewrite(&s, fl) {
                        body.stms.extend(rewritten);
                        continue;
                    }
                    if let Some(split) = self.rewrite_split(&s, fl) {
                        body.stms.extend(split);
                        continue;
                    }
                }
                _ => {}
            }
            body.stms.push(s);
        }
    }

    /// The statements replacing statement `s` where it splits into kernels of one update each
    /// ([`super::acc_split`]) and at least one of those matches: the kernels, each rewritten
    /// where it matches.
    fn rewrite_split(&self, s: &HostStm, fl: &mut Flattener) -> Option<Vec<HostStm>> {
        let pieces = match super::acc_split::split(s, fl.ns) {
            Some(pieces) => pieces,
            None => {
                // Costly values first, stored ([`super::acc_store::materialize`]).
                let (values, updates) = super::acc_store::materialize(s, fl.ns)?;
                let mut pieces = vec![values];
                match super::acc_split::split(&updates, fl.ns) {
                    Some(split) => pieces.extend(split),
                    None => pieces.push(updates),
                }
                pieces
            }
        };
        let mut any = false;
        let mut out = Vec::new();
        for p in pieces {
            match self.rewrite(&p, fl) {
                Some(r) => {
                    any = true;
                    out.extend(r);
                }
                None => out.push(p),
            }
        }
        any.then_some(out)
    }

    /// The statements replacing statement `s`, if it is a kernel that matches: the threshold
    /// and an `if` between the reduction and `s`.
    fn rewrite(&self, s: &HostStm, fl: &mut Flattener) -> Option<Vec<HostStm>> {
        let HostExp::Seg(op) = &s.exp else {
            return None;
        };
        if op.kind != SegKind::Map || op.body.results.len() != s.pat.elems.len() {
            return None;
        }
        // The kernel's aliases of accumulators, its updates (by the name they bind) and the
        // statements that compute values.
        let mut aliases: HashMap<&VName, &VName> = HashMap::new();
        let mut updates: HashMap<&VName, &Stm> = HashMap::new();
        let mut values: Vec<Stm> = Vec::new();
        for st in &op.body.stms {
            let acc_typed = st
                .pat
                .elems
                .iter()
                .any(|p| matches!(p.ty, Type::Acc { .. }));
            match (&st.exp, acc_typed) {
                (Exp::SubExp(SubExp::Var(v)), true) if st.pat.elems.len() == 1 => {
                    aliases.insert(&st.pat.elems[0].name, v);
                }
                (Exp::UpdAcc { .. }, true) if st.pat.elems.len() == 1 => {
                    updates.insert(&st.pat.elems[0].name, st);
                }
                (Exp::UpdAcc { .. } | Exp::WithAcc { .. }, _) | (_, true) => return None,
                _ => values.push(st.clone()),
            }
        }
        let defs: HashMap<&VName, &Stm> = values
            .iter()
            .flat_map(|st| st.pat.elems.iter().map(move |p| (&p.name, st)))
            .collect();
        let space: HashMap<&VName, &SubExp> = op.space.dims.iter().map(|(g, d)| (g, d)).collect();
        // Every result is one update of a host accumulator with an operator, each at the same
        // distinct thread indices, and each accumulator is updated once, or a host accumulator
        // passed through without an update.
        let mut kept: Option<Vec<(VName, SubExp)>> = None;
        let mut accs: Vec<(&VName, &Operator, &[SubExp], &[Type])> = Vec::new();
        // Per result: the update it is (an index into `accs`), or the host accumulator it
        // passes through unchanged (one whose updates dead-code elimination removed).
        let mut kinds: Vec<Result<usize, &VName>> = Vec::new();
        for (r, p) in op.body.results.iter().zip(&s.pat.elems) {
            let KernelResult::Returns(SubExp::Var(r)) = r else {
                return None;
            };
            let Some(update) = updates.get(r) else {
                let mut host_acc = r;
                while let Some(v) = aliases.get(host_acc) {
                    host_acc = v;
                }
                if !matches!(p.ty, Type::Acc { .. }) || defs.contains_key(host_acc) {
                    return None;
                }
                kinds.push(Err(host_acc));
                continue;
            };
            let Exp::UpdAcc { acc, idx, vals } = &update.exp else {
                return None;
            };
            let mut host_acc = acc;
            while let Some(v) = aliases.get(host_acc) {
                host_acc = v;
            }
            let operator = self.ops.get(host_acc)?;
            let Type::Acc { shape, elems, .. } = &p.ty else {
                return None;
            };
            if idx.len() != shape.len()
                || vals.len() != operator.neutral.len()
                || !elems.iter().all(|t| matches!(t, Type::Prim(_)))
                || accs.iter().any(|a| a.0 == host_acc)
            {
                return None;
            }
            let mut these: Vec<(VName, SubExp)> = Vec::new();
            for i in idx {
                let g = self.thread_index(i, &defs, &space)?;
                if these.iter().any(|(k, _)| *k == g) {
                    return None;
                }
                these.push((g.clone(), space[&g].clone()));
            }
            if kept.as_ref().is_some_and(|k| *k != these) {
                return None;
            }
            kept = Some(these);
            kinds.push(Ok(accs.len()));
            accs.push((host_acc, operator, vals, elems));
        }
        if updates.len() != accs.len()
            || kinds
                .iter()
                .any(|k| k.is_err_and(|h| accs.iter().any(|a| a.0 == h)))
        {
            return None;
        }
        let kept = kept?;
        // Only what the updated values need (the indices' `iota` reads are dead now).
        let results: Vec<SubExp> = accs.iter().flat_map(|a| a.2.iter().cloned()).collect();
        let values = live(values, &results, |_| false);
        let reduced: Vec<&(VName, SubExp)> = op
            .space
            .dims
            .iter()
            .filter(|(g, _)| !kept.iter().any(|(k, _)| k == g))
            .collect();
        let [reduced] = reduced.as_slice() else {
            return None;
        };
        let sizes: Vec<SubExp> = kept.iter().map(|(_, d)| d.clone()).collect();
        let val_types: Vec<Type> = accs.iter().flat_map(|a| a.3.iter().cloned()).collect();
        let red_pat: Vec<Param> = val_types
            .iter()
            .map(|t| {
                Some(Param {
                    name: fl.ns.fresh("acc_red"),
                    ty: Type::Array {
                        elem: t.elem()?,
                        shape: sizes.clone(),
                    },
                })
            })
            .collect::<Option<_>>()?;
        // The reduction is a copy of the kernel's space and value statements with fresh names
        // (the original stays as the other version).
        let mut red_space = kept.clone();
        red_space.push((*reduced).clone());
        let i64t = Type::Prim(crate::prim::PrimType::Int(crate::prim::IntType::I64));
        let copy = crate::passes::traverse::fresh_lambda(
            fl.ns,
            &Lambda {
                params: red_space
                    .iter()
                    .map(|(g, _)| Param {
                        name: g.clone(),
                        ty: i64t.clone(),
                    })
                    .collect(),
                body: Body {
                    stms: values,
                    result: results,
                },
                ret: val_types.clone(),
            },
        );
        let red_space: Vec<(VName, SubExp)> = copy
            .params
            .into_iter()
            .zip(red_space)
            .map(|(p, (_, d))| (p.name, d))
            .collect();
        let operators: Vec<&Operator> = accs.iter().map(|a| a.1).collect();
        let mut pre = Vec::new();
        let kept_size = fl.size_product(sizes.clone(), "kept_size", &mut pre);
        let thread_pat = fl.fresh_params(&red_pat);
        let thread_red = thread_reduction(
            fl,
            &red_space,
            &copy.body,
            &val_types,
            &operators,
            &thread_pat,
            s,
        );
        let dist_pat = fl.fresh_params(&red_pat);
        let red = HostStm {
            pat: Pat {
                elems: dist_pat.clone(),
            },
            exp: HostExp::Seg(SegOp {
                kind: SegKind::Red(
                    accs.iter()
                        .map(|a| Operator {
                            lam: crate::passes::traverse::fresh_lambda(fl.ns, &a.1.lam),
                            ..a.1.clone()
                        })
                        .collect(),
                ),
                space: SegSpace { dims: red_space },
                ret: val_types.clone(),
                body: KernelBody::returning(copy.body),
            }),
            attrs: s.attrs.clone(),
            loc: s.loc.clone(),
        };
        // One thread per element: read the sums, update each accumulator once.
        let gtids: Vec<VName> = kept.iter().map(|(g, _)| fl.ns.fresh_like(g)).collect();
        let index: Vec<DimIndex> = gtids
            .iter()
            .map(|g| DimIndex::Fix(SubExp::Var(g.clone())))
            .collect();
        let mut stms: Vec<Stm> = Vec::new();
        let mut sums = Vec::new();
        for (r, t) in red_pat.iter().zip(&val_types) {
            let sum = fl.ns.fresh("acc_sum");
            stms.push(Stm {
                pat: Pat {
                    elems: vec![Param {
                        name: sum.clone(),
                        ty: t.clone(),
                    }],
                },
                exp: Exp::Index(r.name.clone(), index.clone()),
                attrs: crate::ir::Attrs(vec!["unsafe".into()]),
                loc: None,
            });
            sums.push(SubExp::Var(sum));
        }
        let mut sums = sums.into_iter();
        let mut results = Vec::new();
        for (kind, p) in kinds.iter().zip(&s.pat.elems) {
            let updated = fl.ns.fresh("acc_upd");
            let exp = match kind {
                Ok(a) => {
                    let (host_acc, _, vals, _) = accs[*a];
                    Exp::UpdAcc {
                        acc: host_acc.clone(),
                        idx: gtids.iter().cloned().map(SubExp::Var).collect(),
                        vals: sums.by_ref().take(vals.len()).collect(),
                    }
                }
                Err(host_acc) => Exp::SubExp(SubExp::Var((*host_acc).clone())),
            };
            stms.push(Stm {
                pat: Pat {
                    elems: vec![Param {
                        name: updated.clone(),
                        ty: p.ty.clone(),
                    }],
                },
                exp,
                attrs: Default::default(),
                loc: s.loc.clone(),
            });
            results.push(KernelResult::Returns(SubExp::Var(updated)));
        }
        let red_result = fl.fresh_params(&s.pat.elems);
        let upd = HostStm {
            pat: Pat {
                elems: red_result.clone(),
            },
            exp: HostExp::Seg(SegOp {
                kind: SegKind::Map,
                space: SegSpace {
                    dims: gtids.into_iter().zip(sizes).collect(),
                },
                ret: op.ret.clone(),
                body: KernelBody { stms, results },
            }),
            attrs: s.attrs.clone(),
            loc: s.loc.clone(),
        };
        // Many elements: a thread each, summing over the reduced dimension; few: the
        // segmented reduction (rule 5's choice between a map of reductions' versions).
        let mut out = pre;
        let nest = fl.threshold(
            "seg_threads",
            kept_size,
            ThresholdKind::SegThreads,
            &s.loc,
            &mut out,
        );
        let red = versioned(
            &red_pat,
            nest,
            (thread_red, &thread_pat),
            (vec![red], &dist_pat),
            true,
            &s.loc,
        );
        let cond = fl.threshold(
            "acc_red",
            reduced.1.clone(),
            ThresholdKind::AccRed,
            &s.loc,
            &mut out,
        );
        let atomic_result = fl.fresh_params(&s.pat.elems);
        let atomic = HostStm {
            pat: Pat {
                elems: atomic_result.clone(),
            },
            ..s.clone()
        };
        out.push(versioned(
            &s.pat.elems,
            cond,
            (vec![red, upd], &red_result),
            (vec![atomic], &atomic_result),
            false,
            &s.loc,
        ));
        Some(out)
    }

    /// The thread index of `space` that index `i` is: the index itself, or an element of an
    /// `iota n 0 1` at it (bound by a statement of `defs`).
    fn thread_index(
        &self,
        i: &SubExp,
        defs: &HashMap<&VName, &Stm>,
        space: &HashMap<&VName, &SubExp>,
    ) -> Option<VName> {
        let SubExp::Var(v) = i else {
            return None;
        };
        if space.contains_key(v) {
            return Some(v.clone());
        }
        let st = defs.get(v)?;
        let Exp::Index(arr, ix) = &st.exp else {
            return None;
        };
        let [DimIndex::Fix(SubExp::Var(g))] = ix.as_slice() else {
            return None;
        };
        // The iota's length covers the thread index's range (it was mapped over).
        let n = self.iotas.get(arr)?;
        (space.get(g) == Some(&n)).then(|| g.clone())
    }
}

/// `e` is the `i64` constant `v`.
fn is_int(e: &SubExp, v: i64) -> bool {
    matches!(e, SubExp::Const(PrimValue::I64(x)) if *x == v)
}

/// The statements of `stms` that `results` need, directly or through later statements, in
/// order, and every statement that could fail: only indexings known to be in bounds (marked
/// `#[unsafe]`), copies of names and the statements `also` accepts are dropped when unneeded.
pub(super) fn live(stms: Vec<Stm>, results: &[SubExp], also: impl Fn(&Stm) -> bool) -> Vec<Stm> {
    let mut needed: std::collections::HashSet<VName> =
        results.iter().filter_map(|r| r.as_var().cloned()).collect();
    let mut keep = vec![false; stms.len()];
    for (i, st) in stms.iter().enumerate().rev() {
        let droppable = match &st.exp {
            Exp::Index(..) => st.attrs.has("unsafe"),
            Exp::SubExp(_) => true,
            _ => also(st),
        };
        if !droppable || st.pat.elems.iter().any(|p| needed.contains(&p.name)) {
            keep[i] = true;
            needed.extend(crate::passes::traverse::free_vars(
                std::slice::from_ref(st),
                &[],
            ));
        }
    }
    stms.into_iter()
        .zip(keep)
        .filter_map(|(st, k)| k.then_some(st))
        .collect()
}
