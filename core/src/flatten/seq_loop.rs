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
//! iterations one thread may run (lavapipe: 65535 in all) picks a smaller `chunk`.
//!
//! A *tape*, a loop value `xs: [n]t` that the body only writes, one row per iteration, as
//! `xs with [i] = v` (reverse-mode AD's checkpoints of a loop's values), does not pass through
//! the kernel: the thread fills a fresh `[kk]t` with the rows of its chunk, and the host copies
//! them into place, `xs' = xs with [t0:+kk] = rows`. Each launch then moves the rows it makes,
//! not the whole tape twice (in and out of the thread), which on lavapipe alone would use up
//! the loop limit of a long loop's every chunk. Other loops
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
        self.i64_op_at(base, op(I64), a, b, loc, out)
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
        // chunk's local index; a tape's parameter becomes the chunk's rows, a fresh array
        // written at the local index.
        let t = self.ns.fresh("chunk_t");
        let tapes = tape_updates(params, i, body);
        let mut kernel_stms = Vec::new();
        let mut loop_params = Vec::with_capacity(params.len());
        let mut loop_pat = s.pat.elems.clone();
        for (j, ((p, _), h)) in params.iter().zip(&carried).enumerate() {
            if tapes[j].is_none() {
                loop_params.push((p.clone(), SubExp::Var(h.name.clone())));
                continue;
            }
            let rows_t = p.ty.row().array_of(kk.clone());
            let zero = crate::prim::PrimValue::zero(p.ty.elem().unwrap_or(I64));
            let empty = self.fresh_param(&p.name, rows_t.clone());
            kernel_stms.push(Stm {
                pat: ir::Pat {
                    elems: vec![empty.clone()],
                },
                exp: Exp::Replicate {
                    shape: rows_t.shape().to_vec(),
                    value: SubExp::Const(zero),
                },
                attrs: Default::default(),
                loc: loc.clone(),
            });
            loop_params.push((
                Param {
                    name: p.name.clone(),
                    ty: rows_t.clone(),
                },
                SubExp::Var(empty.name),
            ));
            loop_pat[j] = self.fresh_param(&s.pat.elems[j].name, rows_t);
        }
        let mut chunk_body = Vec::with_capacity(body.stms.len() + 1);
        chunk_body.push(Stm {
            pat: ir::Pat {
                elems: vec![Param {
                    name: i.clone(),
                    ty: Type::Prim(I64),
                }],
            },
            exp: Exp::BinOp(BinOp::Add(I64), t0.clone(), SubExp::Var(t.clone())),
            attrs: Default::default(),
            loc: loc.clone(),
        });
        for (k, stm) in body.stms.iter().enumerate() {
            let mut stm = stm.clone();
            if tapes.contains(&Some(k)) {
                if let Exp::Update(_, idx, _) = &mut stm.exp {
                    *idx = vec![ir::DimIndex::Fix(SubExp::Var(t.clone()))];
                }
                for e in &mut stm.pat.elems {
                    e.ty = e.ty.row().array_of(kk.clone());
                }
            }
            chunk_body.push(stm);
        }
        kernel_stms.push(Stm {
            pat: ir::Pat {
                elems: loop_pat.clone(),
            },
            exp: Exp::Loop {
                params: loop_params,
                form: LoopForm::For {
                    i: t,
                    it: IntType::I64,
                    bound: kk.clone(),
                },
                body: Body {
                    stms: chunk_body,
                    result: body.result.clone(),
                },
            },
            attrs: s.attrs.clone(),
            loc: loc.clone(),
        });
        let copy = self.fresh_body(&Body {
            stms: kernel_stms,
            result: vars(&loop_pat),
        });
        let mut next = self.one_thread(&loop_pat, copy, loc, &mut inner);
        // Each tape's rows into place on the host.
        for (j, h) in carried.iter().enumerate() {
            if tapes[j].is_none() {
                continue;
            }
            let placed = self.fresh_param(&h.name, h.ty.clone());
            inner.push(host(
                vec![placed.clone()],
                HostExp::Plain(Exp::Update(
                    h.name.clone(),
                    vec![ir::DimIndex::Slice {
                        start: t0.clone(),
                        len: kk.clone(),
                        stride: SubExp::i64(1),
                    }],
                    SubExp::Var(next[j].name.clone()),
                )),
                loc,
            ));
            next[j] = placed;
        }

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

/// For each parameter of `loop params for i < _ do body`, the statement of `body` that writes
/// it where it is a *tape* (module docs): an array that the body uses only in one statement
/// `xs' = xs with [i] = v` (`v` not the tape), whose result `xs'` the body returns in the
/// parameter's place and uses nowhere else.
fn tape_updates(params: &[(Param, SubExp)], i: &VName, body: &Body) -> Vec<Option<usize>> {
    let uses: Vec<std::collections::HashSet<VName>> = body
        .stms
        .iter()
        .map(|s| crate::passes::traverse::uses_in_exp(&s.exp))
        .collect();
    params
        .iter()
        .enumerate()
        .map(|(j, (p, _))| {
            if p.ty.rank() == 0 {
                return None;
            }
            let (k, out) = body.stms.iter().enumerate().find_map(|(k, s)| match &s.exp {
                Exp::Update(xs, idx, v)
                    if *xs == p.name
                        && s.pat.elems.len() == 1
                        && v.as_var() != Some(&p.name)
                        && matches!(idx.as_slice(), [ir::DimIndex::Fix(SubExp::Var(x))] if x == i) =>
                {
                    Some((k, s.pat.elems[0].name.clone()))
                }
                _ => None,
            })?;
            let elsewhere = uses
                .iter()
                .enumerate()
                .any(|(m, u)| m != k && (u.contains(&p.name) || u.contains(&out)));
            let returned = body.result.iter().enumerate().all(|(r, e)| match e.as_var() {
                Some(x) if *x == out => r == j,
                Some(x) => *x != p.name,
                None => true,
            });
            (!elsewhere && returned && body.result.get(j).and_then(|e| e.as_var()) == Some(&out))
                .then_some(k)
        })
        .collect()
}
