//! The one-thread version of a versioned host loop (rule 6, [`super`]): the whole loop as the
//! thread code of a `segmap` of one thread, whose results (arrays of one element) the host
//! unwraps.
//!
//! A `for` loop over `i64` is run in chunks ([`SeqChunk`]): the host loops over chunks of
//! `chunk` iterations and launches the one-thread kernel once per chunk, passing the loop's
//! values from launch to launch, so that
//!
//! ```text
//! loop (x = x0) for i < n do B
//! ```
//!
//! becomes
//!
//! ```text
//! let k = max 1 (min chunk n)
//! let chunks = (n + k - 1) / k
//! loop (x' = x0) for c < chunks do
//!   let t0 = c * k
//!   let kk = min k (n - t0)
//!   let [x''] = segmap (g < 1) { loop (x = x') for t < kk do (let i = t0 + t in B) }
//!   in x''[0]
//! ```
//!
//! With `chunk >= n` that is one launch; a runtime on a device that limits how many loop
//! iterations one thread may run (lavapipe: 65535 in all) picks a smaller `chunk`. Other loops
//! (`while`, or a `for` over a narrower type, or with loop values whose types differ from the
//! loop's results) run in one launch.

use super::kernel::{host, i64t, Flattener};
use super::nest::{Level, Nest};
use crate::diag::SrcLoc;
use crate::ir::{self, BinOp, Body, Exp, LoopForm, Param, Stm, SubExp, Type, VName};
use crate::prim::{IntType, PrimType};
use crate::seg::{HostBody, HostExp, HostStm, SeqChunk};

const I64: PrimType = PrimType::Int(IntType::I64);

fn vars(ps: &[Param]) -> Vec<SubExp> {
    ps.iter().map(|p| SubExp::Var(p.name.clone())).collect()
}

impl Flattener<'_> {
    /// The one-thread version of host loop `s`: a host body whose results are the loop's, and
    /// for a loop run in chunks, its [`SeqChunk`] (the parameter the body reads).
    pub(super) fn seq_version(&mut self, s: &Stm) -> (HostBody, Option<SeqChunk>) {
        if let Exp::Loop {
            params,
            form:
                LoopForm::For {
                    i,
                    it: IntType::I64,
                    bound,
                },
            body,
        } = &s.exp
        {
            let same_types = params
                .iter()
                .zip(&s.pat.elems)
                .all(|((p, _), r)| p.ty == r.ty);
            if same_types {
                return self.chunked(s, params, i, bound, body);
            }
        }
        let copy = self.fresh_body(&Body {
            stms: vec![s.clone()],
            result: vars(&s.pat.elems),
        });
        let mut stms = Vec::new();
        let results = self.one_thread(&s.pat.elems, copy, &s.loc, &mut stms);
        (
            HostBody {
                stms,
                result: vars(&results),
            },
            None,
        )
    }

    /// `body` (whose results have the types of `like`) as the code of the one thread of a
    /// `segmap`, followed by the host statements that unwrap its results, returned.
    fn one_thread(
        &mut self,
        like: &[Param],
        body: Body,
        loc: &Option<SrcLoc>,
        out: &mut Vec<HostStm>,
    ) -> Vec<Param> {
        let one = Nest {
            levels: vec![Level {
                gtid: self.ns.fresh("gtid"),
                width: SubExp::i64(1),
            }],
            entries: Vec::new(),
        };
        let wrapped: Vec<Param> = like
            .iter()
            .map(|p| self.fresh_param(&p.name, one.expand(&p.ty)))
            .collect();
        out.push(self.segmap(&one, body.stms, body.result, wrapped.clone(), loc));
        let mut results = Vec::with_capacity(like.len());
        for (w, p) in wrapped.iter().zip(like) {
            let r = self.fresh_param(&p.name, p.ty.clone());
            out.push(host(
                vec![r.clone()],
                HostExp::Plain(Exp::Index(
                    w.name.clone(),
                    vec![ir::DimIndex::Fix(SubExp::i64(0))],
                )),
                loc,
            ));
            results.push(r);
        }
        results
    }

    /// Binds a fresh `i64` named after `base` to `op a b` on the host.
    fn int_op(
        &mut self,
        base: &str,
        op: fn(PrimType) -> BinOp,
        a: SubExp,
        b: SubExp,
        loc: &Option<SrcLoc>,
        out: &mut Vec<HostStm>,
    ) -> SubExp {
        let p = self.fresh_param(
            &VName {
                id: 0,
                base: base.into(),
            },
            i64t(),
        );
        out.push(host(
            vec![p.clone()],
            HostExp::Plain(Exp::BinOp(op(I64), a, b)),
            loc,
        ));
        SubExp::Var(p.name)
    }

    /// The chunked one-thread version of `loop params for i < bound do body` (module docs).
    fn chunked(
        &mut self,
        s: &Stm,
        params: &[(Param, SubExp)],
        i: &VName,
        bound: &SubExp,
        body: &Body,
    ) -> (HostBody, Option<SeqChunk>) {
        let loc = &s.loc;
        let chunk = self.fresh_param(
            &VName {
                id: 0,
                base: "chunk".into(),
            },
            i64t(),
        );
        let mut stms = Vec::new();
        let kmin = self.int_op(
            "chunk_min",
            BinOp::Min,
            SubExp::Var(chunk.name.clone()),
            bound.clone(),
            loc,
            &mut stms,
        );
        let k = self.int_op("chunk_k", BinOp::Max, SubExp::i64(1), kmin, loc, &mut stms);
        let km1 = self.int_op(
            "chunk_km1",
            BinOp::Sub,
            k.clone(),
            SubExp::i64(1),
            loc,
            &mut stms,
        );
        let up = self.int_op("chunk_up", BinOp::Add, bound.clone(), km1, loc, &mut stms);
        let chunks = self.int_op("chunks", BinOp::Div, up, k.clone(), loc, &mut stms);

        // The host loop over chunks, carrying the loop's values.
        let carried: Vec<Param> = self.fresh_params(&s.pat.elems);
        let c = self.ns.fresh("chunk_i");
        self.types.insert(c.clone(), i64t());
        let mut inner = Vec::new();
        let t0 = self.int_op(
            "chunk_t0",
            BinOp::Mul,
            SubExp::Var(c.clone()),
            k.clone(),
            loc,
            &mut inner,
        );
        let rest = self.int_op(
            "chunk_rest",
            BinOp::Sub,
            bound.clone(),
            t0.clone(),
            loc,
            &mut inner,
        );
        let kk = self.int_op("chunk_len", BinOp::Min, k, rest, loc, &mut inner);

        // The thread code: the loop over this chunk's iterations, `i` recomputed from the
        // chunk's local index.
        let t = self.ns.fresh("chunk_t");
        let mut chunk_body = Vec::with_capacity(body.stms.len() + 1);
        chunk_body.push(Stm {
            pat: ir::Pat {
                elems: vec![Param {
                    name: i.clone(),
                    ty: Type::Prim(I64),
                }],
            },
            exp: Exp::BinOp(BinOp::Add(I64), t0, SubExp::Var(t.clone())),
            attrs: Default::default(),
            loc: loc.clone(),
        });
        chunk_body.extend(body.stms.iter().cloned());
        let chunk_loop = Stm {
            pat: s.pat.clone(),
            exp: Exp::Loop {
                params: params
                    .iter()
                    .zip(&carried)
                    .map(|((p, _), h)| (p.clone(), SubExp::Var(h.name.clone())))
                    .collect(),
                form: LoopForm::For {
                    i: t,
                    it: IntType::I64,
                    bound: kk,
                },
                body: Body {
                    stms: chunk_body,
                    result: body.result.clone(),
                },
            },
            attrs: s.attrs.clone(),
            loc: loc.clone(),
        };
        let copy = self.fresh_body(&Body {
            stms: vec![chunk_loop],
            result: vars(&s.pat.elems),
        });
        let next = self.one_thread(&s.pat.elems, copy, loc, &mut inner);

        let results: Vec<Param> = self.fresh_params(&s.pat.elems);
        stms.push(host(
            results.clone(),
            HostExp::Loop {
                params: carried
                    .into_iter()
                    .zip(params)
                    .map(|(h, (_, init))| (h, init.clone()))
                    .collect(),
                form: LoopForm::For {
                    i: c,
                    it: IntType::I64,
                    bound: chunks,
                },
                body: HostBody {
                    stms: inner,
                    result: vars(&next),
                },
            },
            loc,
        ));
        (
            HostBody {
                stms,
                result: vars(&results),
            },
            Some(SeqChunk {
                param: chunk,
                bound: bound.clone(),
            }),
        )
    }
}
