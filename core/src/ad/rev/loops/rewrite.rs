//! The rewrites of loops before their differentiation (see [`super`]): `while` → `for` (with a
//! `#[bound]`, or after an inspector loop that counts the iterations) and strip-mining.

use super::{int_const, loop_parts, stm_of, LoopParts, I64};
use crate::ad::rev::{Rev, R};
use crate::ir::*;
use crate::prim::{IntType, PrimType};

const BOOL: PrimType = PrimType::Bool;

/// `attrs` without the attribute `name`.
fn without(attrs: &Attrs, name: &str) -> Attrs {
    Attrs(
        attrs
            .0
            .iter()
            .filter(|a| !(a.as_str() == name || a.starts_with(&format!("{name}("))))
            .cloned()
            .collect(),
    )
}

impl Rev<'_> {
    /// `while` → `for` (see the module documentation). Emits the inspector loop (when there is
    /// no `#[bound]`) and returns the statements to differentiate: the `for` loop, which binds
    /// the pattern of `stm`, and with a bound the check that it sufficed.
    pub(super) fn while_to_for(&mut self, stm: &Stm) -> R<Vec<Stm>> {
        let LoopParts { params, form, .. } = loop_parts(stm)?;
        let LoopForm::While(c) = form else {
            return Err("while loop (internal error)".into());
        };
        let ci = params
            .iter()
            .position(|(p, _)| &p.name == c)
            .ok_or("while loop condition (internal error)")?;
        let bounded = stm.attrs.int_arg("bound");
        let bound = match bounded {
            Some(n) => SubExp::i64(n),
            None => SubExp::Var(self.inspector(stm)?),
        };
        // for i < bound do if c then body else params; after an inspector the condition holds
        // at the entry of every iteration: for i < count do body.
        let r = self.rename_loop(stm)?;
        let LoopParts {
            params: rparams,
            body: rbody,
            ..
        } = loop_parts(&r)?;
        let rc = rparams[ci].0.name.clone();
        let res: Vec<Param> = rparams
            .iter()
            .map(|(p, _)| Param {
                name: self.ns.fresh(&p.name.base),
                ty: p.ty.clone(),
            })
            .collect();
        let if_stm = stm_of(
            res.clone(),
            Exp::If {
                cond: SubExp::Var(rc),
                then_b: rbody.clone(),
                else_b: Body {
                    stms: vec![],
                    result: rparams
                        .iter()
                        .map(|(p, _)| SubExp::Var(p.name.clone()))
                        .collect(),
                },
                ret: rparams.iter().map(|(p, _)| p.ty.to_ext()).collect(),
            },
            Attrs::default(),
            stm.loc.clone(),
        );
        let for_body = match bounded {
            Some(_) => Body {
                stms: vec![if_stm],
                result: res.iter().map(|p| SubExp::Var(p.name.clone())).collect(),
            },
            None => rbody.clone(),
        };
        let for_stm = stm_of(
            stm.pat.elems.clone(),
            Exp::Loop {
                params: rparams.to_vec(),
                form: LoopForm::For {
                    i: self.ns.fresh("i"),
                    it: IntType::I64,
                    bound,
                },
                body: for_body,
            },
            without(&stm.attrs, "bound"),
            stm.loc.clone(),
        );
        let mut out = vec![for_stm];
        if let Some(n) = stm.attrs.int_arg("bound") {
            let last = stm
                .pat
                .elems
                .get(ci)
                .ok_or("while loop pattern (internal error)")?
                .name
                .clone();
            let done = self.ns.fresh("bound_ok");
            out.push(stm_of(
                vec![Param {
                    name: done.clone(),
                    ty: Type::Prim(BOOL),
                }],
                Exp::UnOp(UnOp::Not(BOOL), SubExp::Var(last)),
                Attrs::default(),
                stm.loc.clone(),
            ));
            out.push(stm_of(
                vec![],
                Exp::Assert {
                    cond: SubExp::Var(done),
                    msg: format!("the while loop ran more iterations than its #[bound({n})]"),
                    args: vec![],
                },
                Attrs::default(),
                stm.loc.clone(),
            ));
        }
        Ok(out)
    }

    /// Emits a copy of the `while` loop `stm` that also counts its iterations; returns the
    /// count.
    fn inspector(&mut self, stm: &Stm) -> R<VName> {
        let r = self.rename_loop(stm)?;
        let LoopParts { params, body, .. } = loop_parts(&r)?;
        let count = self.fresh_param("count", Type::Prim(I64));
        let count1 = self.ns.fresh("count");
        let mut stms = vec![stm_of(
            vec![Param {
                name: count1.clone(),
                ty: Type::Prim(I64),
            }],
            Exp::BinOp(
                BinOp::Add(I64),
                SubExp::Var(count.name.clone()),
                SubExp::i64(1),
            ),
            Attrs::default(),
            None,
        )];
        stms.extend(body.stms.iter().cloned());
        let mut result = vec![SubExp::Var(count1)];
        result.extend(body.result.iter().cloned());
        // The `for` loop runs from the same initial values: arrays the body may update in
        // place get their own copies here.
        let mut lparams = vec![(count, SubExp::i64(0))];
        for (p, init) in params {
            let init = match (&p.ty, init) {
                (Type::Array { .. }, SubExp::Var(v)) => {
                    let ty = self.ty_of(v)?;
                    SubExp::Var(self.bind("inspect_init", ty, Exp::Copy(v.clone())))
                }
                _ => init.clone(),
            };
            lparams.push((p.clone(), init));
        }
        let mut pat = vec![Param {
            name: self.ns.fresh("iterations"),
            ty: Type::Prim(I64),
        }];
        pat.extend(r.pat.elems.iter().cloned());
        let n = pat[0].name.clone();
        let LoopForm::While(c) = loop_parts(&r)?.form.clone() else {
            return Err("while loop (internal error)".into());
        };
        self.emit(stm_of(
            pat,
            Exp::Loop {
                params: lparams,
                form: LoopForm::While(c),
                body: Body { stms, result },
            },
            Attrs::default(),
            stm.loc.clone(),
        ));
        Ok(n)
    }

    /// Strip-mines the `for` loop `stm` into a `k`-deep nest and a remainder loop (see the
    /// module documentation). Emits the computation of the nest's trip count; returns the nest
    /// and the remainder loop, which binds the pattern of `stm`.
    pub(super) fn stripmine(&mut self, stm: &Stm, k: usize) -> R<Vec<Stm>> {
        let LoopParts { form, .. } = loop_parts(stm)?;
        let LoopForm::For { it, bound, .. } = form else {
            return Err("strip-mining a while loop (internal error)".into());
        };
        let it = *it;
        let ip = PrimType::Int(it);
        // The trip counts, computed in i64 (then converted: they fit in `it`).
        let n = self.iterations_i64(bound, it);
        let b64 = SubExp::Var(self.int_root(&n, k)?);
        let mut total64 = SubExp::i64(1);
        for _ in 0..k {
            total64 = self.binop(BinOp::Mul(I64), total64, b64.clone());
        }
        let b = self.i64_to_int(b64, it);
        let total = self.i64_to_int(total64, it);
        let remain = self.binop(BinOp::Sub(ip), bound.clone(), total.clone());
        let attrs = without(&stm.attrs, "stripmine");

        let inits: Vec<SubExp> = loop_parts(stm)?
            .params
            .iter()
            .map(|(_, s)| s.clone())
            .collect();
        let nest = self.nest_level(stm, &attrs, k, 1, &inits, &int_const(it, 0), &b, it)?;
        let nest_out: Vec<SubExp> = nest
            .pat
            .elems
            .iter()
            .map(|p| SubExp::Var(p.name.clone()))
            .collect();

        // The remainder: iterations total .. bound-1.
        let r = self.rename_loop(stm)?;
        let LoopParts {
            params: rparams,
            form: rform,
            body: rbody,
        } = loop_parts(&r)?;
        let LoopForm::For { i: ri, .. } = rform else {
            return Err("strip-mining (internal error)".into());
        };
        let j = self.ns.fresh("i_rem");
        let mut stms = vec![stm_of(
            vec![Param {
                name: ri.clone(),
                ty: Type::Prim(ip),
            }],
            Exp::BinOp(BinOp::Add(ip), total, SubExp::Var(j.clone())),
            Attrs::default(),
            None,
        )];
        stms.extend(rbody.stms.iter().cloned());
        let rem = stm_of(
            stm.pat.elems.clone(),
            Exp::Loop {
                params: rparams
                    .iter()
                    .zip(nest_out)
                    .map(|((p, _), s)| (p.clone(), s))
                    .collect(),
                form: LoopForm::For {
                    i: j,
                    it,
                    bound: remain,
                },
                body: Body {
                    stms,
                    result: rbody.result.clone(),
                },
            },
            attrs,
            stm.loc.clone(),
        );
        Ok(vec![nest, rem])
    }

    /// Level `level` (1 = outermost) of a strip-mined nest of `k` loops of `b` iterations: the
    /// iteration index of the original loop is `outer·b + j` for the index `outer` of the
    /// enclosing levels and this level's counter `j`.
    #[allow(clippy::too_many_arguments)]
    fn nest_level(
        &mut self,
        stm: &Stm,
        attrs: &Attrs,
        k: usize,
        level: usize,
        inits: &[SubExp],
        outer: &SubExp,
        b: &SubExp,
        it: IntType,
    ) -> R<Stm> {
        let ip = PrimType::Int(it);
        let r = self.rename_loop(stm)?;
        let LoopParts {
            params: rparams,
            form: rform,
            body: rbody,
        } = loop_parts(&r)?;
        let LoopForm::For { i: ri, .. } = rform else {
            return Err("strip-mining (internal error)".into());
        };
        let j = self.ns.fresh("i_strip");
        let scaled = self.ns.fresh("i_outer");
        let idx_name = if level == k {
            ri.clone()
        } else {
            self.ns.fresh("i_strip_idx")
        };
        let mut stms = vec![
            stm_of(
                vec![Param {
                    name: scaled.clone(),
                    ty: Type::Prim(ip),
                }],
                Exp::BinOp(BinOp::Mul(ip), outer.clone(), b.clone()),
                Attrs::default(),
                None,
            ),
            stm_of(
                vec![Param {
                    name: idx_name.clone(),
                    ty: Type::Prim(ip),
                }],
                Exp::BinOp(BinOp::Add(ip), SubExp::Var(scaled), SubExp::Var(j.clone())),
                Attrs::default(),
                None,
            ),
        ];
        let result = if level == k {
            stms.extend(rbody.stms.iter().cloned());
            rbody.result.clone()
        } else {
            let here: Vec<SubExp> = rparams
                .iter()
                .map(|(p, _)| SubExp::Var(p.name.clone()))
                .collect();
            let inner = self.nest_level(
                stm,
                attrs,
                k,
                level + 1,
                &here,
                &SubExp::Var(idx_name),
                b,
                it,
            )?;
            let res = inner
                .pat
                .elems
                .iter()
                .map(|p| SubExp::Var(p.name.clone()))
                .collect();
            stms.push(inner);
            res
        };
        Ok(stm_of(
            r.pat.elems.clone(),
            Exp::Loop {
                params: rparams
                    .iter()
                    .zip(inits)
                    .map(|((p, _), s)| (p.clone(), s.clone()))
                    .collect(),
                form: LoopForm::For {
                    i: j,
                    it,
                    bound: b.clone(),
                },
                body: Body { stms, result },
            },
            attrs.clone(),
            stm.loc.clone(),
        ))
    }

    /// Emits `⌊n^(1/k)⌋` (0 for n < 1) for an `i64` `n`: the largest `b` with `b^k <= n`, by
    /// counting (`n^(1/k)` steps, negligible next to the `n` iterations).
    fn int_root(&mut self, n: &SubExp, k: usize) -> R<VName> {
        let pow = |b: &mut crate::ir::builder::Builder, x: SubExp| -> SubExp {
            let mut acc = SubExp::i64(1);
            for _ in 0..k {
                acc = SubExp::Var(b.binop(BinOp::Mul(I64), acc, x.clone()));
            }
            acc
        };
        let go0 = self.build(|b| b.cmp(CmpOp::Le(I64), SubExp::i64(1), n.clone()));
        let pb = self.fresh_param("root", Type::Prim(I64));
        let pgo = self.fresh_param("root_go", Type::Prim(BOOL));
        let (pbn, pgon) = (pb.name.clone(), pgo.name.clone());
        let body = {
            let mut b = crate::ir::builder::Builder::new(self.ns);
            let b1 = b.binop(BinOp::Add(I64), SubExp::Var(pbn), SubExp::i64(1));
            let b2 = b.binop(BinOp::Add(I64), SubExp::Var(b1.clone()), SubExp::i64(1));
            let p2 = pow(&mut b, SubExp::Var(b2));
            let go = b.cmp(CmpOp::Le(I64), p2, n.clone());
            b.finish(vec![SubExp::Var(b1), SubExp::Var(go)])
        };
        let out = self.bind_many(
            vec![("root", Type::Prim(I64)), ("root_go", Type::Prim(BOOL))],
            Exp::Loop {
                params: vec![(pb, SubExp::i64(0)), (pgo, SubExp::Var(go0))],
                form: LoopForm::While(pgon),
                body,
            },
        );
        Ok(out[0].clone())
    }

    /// An `i64` converted to the integer type `it`.
    fn i64_to_int(&mut self, x: SubExp, it: IntType) -> SubExp {
        if it == IntType::I64 {
            return x;
        }
        SubExp::Var(self.bind(
            "conv",
            Type::Prim(PrimType::Int(it)),
            Exp::Conv(
                ConvOp {
                    from: I64,
                    to: PrimType::Int(it),
                },
                x,
            ),
        ))
    }
}
