//! Kernel IR programs built by hand: each one is checked and printed, then broken in the ways a
//! flattening bug would break it, and the checker must name what is wrong.

use super::check::{check_program, Expected, IrPart, SegErrorKind, Site};
use super::print::program_to_string;
use super::*;
use crate::diag::SrcLoc;
use crate::ir::builder::{arr, binop_operator, f32c, i32c, i64c, var, Builder};
use crate::ir::{BinOp, DimIndex, Exp, Soac};
use crate::prim::PrimType;

const F32: PrimType = PrimType::F32;
const I64: PrimType = PrimType::I64;

fn prim(p: PrimType) -> Type {
    Type::Prim(p)
}

/// Host code under construction; kernel bodies take their names from the same source.
struct Host<'a> {
    ns: &'a mut NameSource,
    stms: Vec<HostStm>,
}

impl Host<'_> {
    fn push(&mut self, pat: &[(&str, Type)], exp: HostExp, loc: Option<SrcLoc>) -> Vec<VName> {
        let elems: Vec<Param> = pat
            .iter()
            .map(|(b, ty)| Param {
                name: self.ns.fresh(b),
                ty: ty.clone(),
            })
            .collect();
        let names = elems.iter().map(|p| p.name.clone()).collect();
        self.stms.push(HostStm {
            pat: Pat { elems },
            exp,
            attrs: Attrs::default(),
            loc,
        });
        names
    }

    /// `let base: ty = exp`, a plain host expression.
    fn plain(&mut self, base: &str, ty: Type, exp: Exp) -> VName {
        self.push(&[(base, ty)], HostExp::Plain(exp), None)
            .remove(0)
    }

    /// `let pat = op`, a kernel from line `line` of `t.fut`.
    fn seg(&mut self, pat: &[(&str, Type)], op: SegOp, line: u32) -> Vec<VName> {
        let loc = SrcLoc {
            file: "t.fut".into(),
            line,
            col: 3,
        };
        self.push(pat, HostExp::Seg(op), Some(loc))
    }

    /// A nested host body; `f` returns its results.
    fn body(&mut self, f: impl FnOnce(&mut Host) -> Vec<SubExp>) -> HostBody {
        let mut h = Host {
            ns: self.ns,
            stms: vec![],
        };
        let result = f(&mut h);
        HostBody {
            stms: h.stms,
            result,
        }
    }

    /// A space over `dims`, with fresh thread indices.
    fn space(&mut self, dims: Vec<SubExp>) -> SegSpace {
        SegSpace {
            dims: dims
                .into_iter()
                .map(|d| (self.ns.fresh("gtid"), d))
                .collect(),
        }
    }

    /// A thread body built with the SOAC IR builder; `f` gets the thread indices.
    fn kernel(
        &mut self,
        space: &SegSpace,
        f: impl FnOnce(&mut Builder, &[VName]) -> Vec<KernelResult>,
    ) -> KernelBody {
        let gtids: Vec<VName> = space.indices().cloned().collect();
        let mut b = Builder::new(self.ns);
        let results = f(&mut b, &gtids);
        KernelBody {
            stms: b.stms,
            results,
        }
    }

    fn add_f32(&mut self) -> Operator {
        binop_operator(self.ns, BinOp::Add(F32), f32c(0.0), true)
    }
}

/// The params and the return types of a function, given its size params.
type Signature = (Vec<(&'static str, Type)>, Vec<Type>);

/// `entry main [sizes] (params) : {ret} = body`; `sig` gets the size names, `body` the size
/// names then the param names.
fn entry(
    sizes: &[&str],
    sig: impl FnOnce(&[VName]) -> Signature,
    body: impl FnOnce(&mut Host, &[VName]) -> Vec<SubExp>,
) -> Program {
    let mut ns = NameSource::default();
    let size_params: Vec<VName> = sizes.iter().map(|s| ns.fresh(s)).collect();
    let (params, ret) = sig(&size_params);
    let params: Vec<Param> = params
        .into_iter()
        .map(|(b, ty)| Param {
            name: ns.fresh(b),
            ty,
        })
        .collect();
    let mut names = size_params.clone();
    names.extend(params.iter().map(|p| p.name.clone()));
    let mut h = Host {
        ns: &mut ns,
        stms: vec![],
    };
    let result = body(&mut h, &names);
    let body = HostBody {
        stms: h.stms,
        result,
    };
    let fd = FunDef {
        name: "main".into(),
        entry: Some(EntryPoint {
            name: "main".into(),
            param_counts: vec![1; params.len()],
            result_counts: vec![1; ret.len()],
        }),
        size_params,
        params,
        ret: ret.iter().map(Type::to_ext).collect(),
        body,
        attrs: Attrs::default(),
    };
    Program {
        funs: vec![fd],
        name_source: ns,
    }
}

fn ok(p: &Program) {
    if let Err(e) = check_program(p) {
        panic!("unexpected error: {e}\n{p}");
    }
}

/// The checker must reject `$p` with an error kind matching the pattern.
macro_rules! assert_error {
    ($p:expr, $kind:pat $(if $guard:expr)?) => {{
        let p: &Program = &$p;
        match check_program(p) {
            Ok(()) => panic!("the checker accepted:\n{p}"),
            Err(e) => assert!(
                matches!(&*e.kind, $kind $(if $guard)?),
                "unexpected error: {e}\n{p}"
            ),
        }
    }};
}

/// Statement `k` of `main`'s body.
fn stm(p: &mut Program, k: usize) -> &mut HostStm {
    &mut p.funs[0].body.stms[k]
}

/// The segmented operation of statement `k` of `main`'s body.
fn seg(p: &mut Program, k: usize) -> &mut SegOp {
    match &mut stm(p, k).exp {
        HostExp::Seg(op) => op,
        e => panic!("not a segmented operation: {e}"),
    }
}

/// A name the program never binds (made from its name source, so within it).
fn ghost(p: &mut Program) -> VName {
    p.name_source.fresh("ghost")
}

// --- segmap over two dimensions ---------------------------------------------------------------

/// `map (map (* 2))` over `[n][m]f32`.
fn segmap_2d() -> Program {
    entry(
        &["n", "m"],
        |s| {
            let nm = arr(F32, vec![var(&s[0]), var(&s[1])]);
            (vec![("xss", nm.clone())], vec![nm])
        },
        |h, ps| {
            let (n, m, xss) = (var(&ps[0]), var(&ps[1]), ps[2].clone());
            let space = h.space(vec![n.clone(), m.clone()]);
            let body = h.kernel(&space, |b, g| {
                let x = b.index(prim(F32), &xss, vec![var(&g[0]), var(&g[1])]);
                let y = b.binop(BinOp::Mul(F32), var(&x), f32c(2.0));
                vec![KernelResult::Returns(var(&y))]
            });
            let op = SegOp {
                kind: SegKind::Map,
                space,
                ret: vec![prim(F32)],
                body,
            };
            let ys = h.seg(&[("ys", arr(F32, vec![n, m]))], op, 2);
            vec![var(&ys[0])]
        },
    )
}

#[test]
fn segmap_2d_checks_and_prints() {
    let p = segmap_2d();
    ok(&p);
    insta::assert_snapshot!(program_to_string(&p), @r#"
    entry main [n_1, m_2] (xss_3: [n_1][m_2]f32) : {[n_1][m_2]f32} = {
      let ys_8: [n_1][m_2]f32 = -- t.fut:2:3
        segmap (gtid_4 < n_1, gtid_5 < m_2) : {f32} {
          let x_6: f32 = xss_3[gtid_4, gtid_5]
          let x_7: f32 = f32.mul x_6 2.0f32
          return {x_7}
        }
      in {ys_8}
    }
    "#);
}

#[test]
fn segmap_2d_errors() {
    // The pattern must be [n][m]f32: a wrong element type, a wrong rank, one value too many.
    let mut p = segmap_2d();
    stm(&mut p, 0).pat.elems[0].ty = arr(PrimType::F64, vec![i64c(2), i64c(3)]);
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::Pattern,
            index: 0,
            ..
        }
    );
    let mut p = segmap_2d();
    stm(&mut p, 0).pat.elems[0].ty = arr(F32, vec![i64c(2)]);
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::Pattern,
            ..
        }
    );
    let mut p = segmap_2d();
    let extra = Param {
        name: ghost(&mut p),
        ty: prim(F32),
    };
    stm(&mut p, 0).pat.elems.push(extra);
    assert_error!(
        p,
        SegErrorKind::Count {
            site: Site::Pattern,
            expected: 1,
            found: 2
        }
    );
    // The thread returns an f32, not what `ret` says.
    let mut p = segmap_2d();
    seg(&mut p, 0).ret = vec![prim(I64)];
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::KernelResults,
            index: 0,
            ..
        }
    );
    // One result too many.
    let mut p = segmap_2d();
    let r = seg(&mut p, 0).body.results[0].clone();
    seg(&mut p, 0).body.results.push(r);
    assert_error!(
        p,
        SegErrorKind::Count {
            site: Site::KernelResults,
            expected: 1,
            found: 2
        }
    );
    // Sizes of the space are i64 names in scope.
    let mut p = segmap_2d();
    seg(&mut p, 0).space.dims[1].1 = i32c(4);
    assert_error!(
        p,
        SegErrorKind::Operand {
            site: Site::SpaceSize,
            expected: Expected::Prim(I64),
            ..
        }
    );
    let mut p = segmap_2d();
    let g = ghost(&mut p);
    seg(&mut p, 0).space.dims[0].1 = var(&g);
    assert_error!(p, SegErrorKind::Unbound { name } if *name == g);
    let mut p = segmap_2d();
    seg(&mut p, 0).space.dims.clear();
    assert_error!(p, SegErrorKind::EmptySpace);
    // Thread indices are fresh names, in scope in the thread body only.
    let mut p = segmap_2d();
    let n = p.funs[0].size_params[0].clone();
    seg(&mut p, 0).space.dims[1].0 = n.clone();
    assert_error!(p, SegErrorKind::BoundTwice { name } if *name == n);
    let mut p = segmap_2d();
    let gtid = seg(&mut p, 0).space.dims[0].0.clone();
    p.funs[0].body.result = vec![var(&gtid)];
    assert_error!(p, SegErrorKind::Unbound { name } if *name == gtid);
    let mut p = segmap_2d();
    stm(&mut p, 0).pat.elems[0].name = gtid.clone();
    assert_error!(p, SegErrorKind::BoundTwice { name } if *name == gtid);
    // The thread body is SOAC IR, checked by the SOAC IR checker.
    let mut p = segmap_2d();
    let g = ghost(&mut p);
    seg(&mut p, 0).body.stms[1].exp = Exp::BinOp(BinOp::Mul(F32), var(&g), f32c(2.0));
    assert_error!(
        p,
        SegErrorKind::Ir {
            part: IrPart::ThreadBody,
            ..
        }
    );
}

#[test]
fn errors_name_the_function_and_the_statement() {
    let mut p = segmap_2d();
    seg(&mut p, 0).ret = vec![prim(I64)];
    let e = check_program(&p).unwrap_err();
    assert_eq!(e.fun.as_deref(), Some("main"));
    assert_eq!(e.stm.as_ref(), Some(&stm(&mut p, 0).pat));
    assert_eq!(
        e.to_string(),
        "kernel IR error in function main: thread result: value 0 has type f32, expected i64\n  \
         in host statement: let ys_8: [n_1][m_2]f32"
    );
    // Errors of the SOAC IR checker keep their statement.
    let mut p = segmap_2d();
    let g = ghost(&mut p);
    seg(&mut p, 0).body.stms[1].exp = Exp::BinOp(BinOp::Mul(F32), var(&g), f32c(2.0));
    assert_eq!(
        check_program(&p).unwrap_err().to_string(),
        "kernel IR error in function main: thread body: ghost_9 is not in scope\n  \
         in SOAC IR statement: let x_7: f32 = f32.mul ghost_9 2.0f32\n  \
         in host statement: let ys_8: [n_1][m_2]f32"
    );
}

// --- segred with a map output -------------------------------------------------------------

/// Sums of the rows of `[n][m]f32`, and the squares of the elements.
fn segred_2d() -> Program {
    entry(
        &["n", "m"],
        |s| {
            let (n, m) = (var(&s[0]), var(&s[1]));
            let nm = arr(F32, vec![n.clone(), m]);
            (vec![("xss", nm.clone())], vec![arr(F32, vec![n]), nm])
        },
        |h, ps| {
            let (n, m, xss) = (var(&ps[0]), var(&ps[1]), ps[2].clone());
            let space = h.space(vec![n.clone(), m.clone()]);
            let body = h.kernel(&space, |b, g| {
                let x = b.index(prim(F32), &xss, vec![var(&g[0]), var(&g[1])]);
                let y = b.binop(BinOp::Mul(F32), var(&x), var(&x));
                vec![
                    KernelResult::Returns(var(&x)),
                    KernelResult::Returns(var(&y)),
                ]
            });
            let op = SegOp {
                kind: SegKind::Red(vec![h.add_f32()]),
                space,
                ret: vec![prim(F32), prim(F32)],
                body,
            };
            let rs = h.seg(
                &[
                    ("sums", arr(F32, vec![n.clone()])),
                    ("sq", arr(F32, vec![n, m])),
                ],
                op,
                4,
            );
            vec![var(&rs[0]), var(&rs[1])]
        },
    )
}

#[test]
fn segred_with_map_output_checks_and_prints() {
    let p = segred_2d();
    ok(&p);
    insta::assert_snapshot!(program_to_string(&p), @r#"
    entry main [n_1, m_2] (xss_3: [n_1][m_2]f32) : {[n_1]f32, [n_1][m_2]f32} = {
      let {sums_11: [n_1]f32, sq_12: [n_1][m_2]f32} = -- t.fut:4:3
        segred (gtid_4 < n_1, gtid_5 < m_2) : {f32, f32}
          op commutative \(a_8: f32) (b_9: f32) : {f32} -> {
            let x_10: f32 = f32.add a_8 b_9
            in {x_10}
          }, {0.0f32}
        {
          let x_6: f32 = xss_3[gtid_4, gtid_5]
          let x_7: f32 = f32.mul x_6 x_6
          return {x_6, x_7}
        }
      in {sums_11, sq_12}
    }
    "#);
}

#[test]
fn segred_errors() {
    // A reduction over [n][m] gives [n]f32, not [n][m]f32.
    let mut p = segred_2d();
    let sq_t = stm(&mut p, 0).pat.elems[1].ty.clone();
    stm(&mut p, 0).pat.elems[0].ty = sq_t;
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::Pattern,
            index: 0,
            ..
        }
    );
    // The operator is checked on the types it reduces.
    let mut p = segred_2d();
    let op = binop_operator(&mut p.name_source, BinOp::Add(I64), i64c(0), true);
    seg(&mut p, 0).kind = SegKind::Red(vec![op]);
    assert_error!(
        p,
        SegErrorKind::Ir {
            part: IrPart::Operator(0),
            ..
        }
    );
    // Three operators take three values; the thread returns two.
    let mut p = segred_2d();
    let ops = (0..3)
        .map(|_| binop_operator(&mut p.name_source, BinOp::Add(F32), f32c(0.0), true))
        .collect();
    seg(&mut p, 0).kind = SegKind::Red(ops);
    assert_error!(
        p,
        SegErrorKind::Count {
            site: Site::OperatorOperands,
            expected: 3,
            found: 2
        }
    );
    // An operand of the operator cannot be a write.
    let mut p = segred_2d();
    let xss = p.funs[0].params[0].name.clone();
    seg(&mut p, 0).body.results[0] = KernelResult::Write {
        dest: xss,
        idx: vec![i64c(0), i64c(0)],
        val: f32c(1.0),
    };
    assert_error!(p, SegErrorKind::OperandWritten { index: 0 });
}

// --- segscan ----------------------------------------------------------------------------------

/// Prefix sums of `[n]f32`.
fn segscan_1d() -> Program {
    entry(
        &["n"],
        |s| {
            let t = arr(F32, vec![var(&s[0])]);
            (vec![("xs", t.clone())], vec![t])
        },
        |h, ps| {
            let (n, xs) = (var(&ps[0]), ps[1].clone());
            let space = h.space(vec![n.clone()]);
            let body = h.kernel(&space, |b, g| {
                let x = b.index(prim(F32), &xs, vec![var(&g[0])]);
                vec![KernelResult::Returns(var(&x))]
            });
            let op = SegOp {
                kind: SegKind::Scan(vec![h.add_f32()]),
                space,
                ret: vec![prim(F32)],
                body,
            };
            let ys = h.seg(&[("ys", arr(F32, vec![n]))], op, 6);
            vec![var(&ys[0])]
        },
    )
}

#[test]
fn segscan_checks_and_prints() {
    let p = segscan_1d();
    ok(&p);
    insta::assert_snapshot!(program_to_string(&p), @r#"
    entry main [n_1] (xs_2: [n_1]f32) : {[n_1]f32} = {
      let ys_8: [n_1]f32 = -- t.fut:6:3
        segscan (gtid_3 < n_1) : {f32}
          op commutative \(a_5: f32) (b_6: f32) : {f32} -> {
            let x_7: f32 = f32.add a_5 b_6
            in {x_7}
          }, {0.0f32}
        {
          let x_4: f32 = xs_2[gtid_3]
          return {x_4}
        }
      in {ys_8}
    }
    "#);
}

#[test]
fn segscan_errors() {
    // A scan keeps the scanned dimension.
    let mut p = segscan_1d();
    stm(&mut p, 0).pat.elems[0].ty = prim(F32);
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::Pattern,
            index: 0,
            ..
        }
    );
    // Its operator takes 2 params of the scanned type.
    let mut p = segscan_1d();
    let SegKind::Scan(ops) = &mut seg(&mut p, 0).kind else {
        unreachable!()
    };
    ops[0].lam.params.pop();
    assert_error!(
        p,
        SegErrorKind::Ir {
            part: IrPart::Operator(0),
            ..
        }
    );
}

// --- seghist with two segments ----------------------------------------------------------------

/// Two histograms of `k` bins, one per row of `[2][n]f32`, with the bins in `inds`.
fn seghist_2_segments() -> Program {
    entry(
        &["n", "k"],
        |s| {
            let (n, k) = (var(&s[0]), var(&s[1]));
            let params = vec![
                ("xss", arr(F32, vec![i64c(2), n.clone()])),
                ("inds", arr(I64, vec![n])),
            ];
            (params, vec![arr(F32, vec![i64c(2), k])])
        },
        |h, ps| {
            let (n, k, xss, inds) = (var(&ps[0]), var(&ps[1]), ps[2].clone(), ps[3].clone());
            let hist_t = arr(F32, vec![i64c(2), k.clone()]);
            let zeros = h.plain(
                "zeros",
                hist_t.clone(),
                Exp::Replicate {
                    shape: vec![i64c(2), k.clone()],
                    value: f32c(0.0),
                },
            );
            let space = h.space(vec![i64c(2), n]);
            let body = h.kernel(&space, |b, g| {
                let bin = b.index(prim(I64), &inds, vec![var(&g[1])]);
                let x = b.index(prim(F32), &xss, vec![var(&g[0]), var(&g[1])]);
                vec![
                    KernelResult::Returns(var(&bin)),
                    KernelResult::Returns(var(&x)),
                ]
            });
            let hist = HistOp {
                dest: vec![zeros],
                width: k,
                op: h.add_f32(),
                disjoint: false,
            };
            let op = SegOp {
                kind: SegKind::Hist(vec![hist]),
                space,
                ret: vec![prim(I64), prim(F32)],
                body,
            };
            let hs = h.seg(&[("hs", hist_t)], op, 8);
            vec![var(&hs[0])]
        },
    )
}

fn hist_op(p: &mut Program) -> &mut HistOp {
    match &mut seg(p, 1).kind {
        SegKind::Hist(hs) => &mut hs[0],
        _ => unreachable!(),
    }
}

#[test]
fn seghist_checks_and_prints() {
    let p = seghist_2_segments();
    ok(&p);
    insta::assert_snapshot!(program_to_string(&p), @r#"
    entry main [n_1, k_2] (xss_3: [2i64][n_1]f32) (inds_4: [n_1]i64) : {[2i64][k_2]f32} = {
      let zeros_5: [2i64][k_2]f32 = replicate([2i64][k_2], 0.0f32)
      let hs_13: [2i64][k_2]f32 = -- t.fut:8:3
        seghist (gtid_6 < 2i64, gtid_7 < n_1) : {i64, f32}
          hist {zeros_5} width k_2 op commutative \(a_10: f32) (b_11: f32) : {f32} -> {
            let x_12: f32 = f32.add a_10 b_11
            in {x_12}
          }, {0.0f32}
        {
          let x_8: i64 = inds_4[gtid_7]
          let x_9: f32 = xss_3[gtid_6, gtid_7]
          return {x_8, x_9}
        }
      in {hs_13}
    }
    "#);
}

#[test]
fn seghist_errors() {
    // The destination has a histogram per segment: [2][k]f32, not [n]i64.
    let mut p = seghist_2_segments();
    let inds = p.funs[0].params[1].name.clone();
    hist_op(&mut p).dest = vec![inds];
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::HistDest,
            index: 1,
            ..
        }
    );
    // ... nor [k]f32 (one histogram for both segments).
    let mut p = seghist_2_segments();
    let k = p.funs[0].size_params[1].clone();
    let flat = arr(F32, vec![var(&k)]);
    stm(&mut p, 0).pat.elems[0].ty = flat.clone();
    stm(&mut p, 0).exp = HostExp::Plain(Exp::Replicate {
        shape: vec![var(&k)],
        value: f32c(0.0),
    });
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::HistDest,
            ..
        }
    );
    // The bin index is an integer.
    let mut p = seghist_2_segments();
    seg(&mut p, 1).ret[0] = prim(F32);
    assert_error!(
        p,
        SegErrorKind::NotIntegerType {
            site: Site::HistIndex,
            ..
        }
    );
    // The width is an integer.
    let mut p = seghist_2_segments();
    hist_op(&mut p).width = f32c(4.0);
    assert_error!(
        p,
        SegErrorKind::Operand {
            site: Site::HistWidth,
            expected: Expected::Integer,
            ..
        }
    );
    // The pattern has the destination's type.
    let mut p = seghist_2_segments();
    stm(&mut p, 1).pat.elems[0].ty = arr(F32, vec![i64c(3), i64c(4)]);
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::Pattern,
            ..
        }
    );
}

// --- a write ------------------------------------------------------------------------------------

/// `scatter ys inds xs` as a segmap writing into `ys`.
fn write_segmap() -> Program {
    entry(
        &["n", "m"],
        |s| {
            let (n, m) = (var(&s[0]), var(&s[1]));
            let params = vec![
                ("xs", arr(F32, vec![n.clone()])),
                ("inds", arr(I64, vec![n])),
                ("ys", arr(F32, vec![m.clone()])),
            ];
            (params, vec![arr(F32, vec![m])])
        },
        |h, ps| {
            let (n, m) = (var(&ps[0]), var(&ps[1]));
            let (xs, inds, ys) = (ps[2].clone(), ps[3].clone(), ps[4].clone());
            let space = h.space(vec![n]);
            let body = h.kernel(&space, |b, g| {
                let j = b.index(prim(I64), &inds, vec![var(&g[0])]);
                let v = b.index(prim(F32), &xs, vec![var(&g[0])]);
                vec![KernelResult::Write {
                    dest: ys,
                    idx: vec![var(&j)],
                    val: var(&v),
                }]
            });
            let op = SegOp {
                kind: SegKind::Map,
                space,
                ret: vec![prim(F32)],
                body,
            };
            let zs = h.seg(&[("zs", arr(F32, vec![m]))], op, 10);
            vec![var(&zs[0])]
        },
    )
}

fn write_mut(p: &mut Program) -> (&mut VName, &mut Vec<SubExp>, &mut SubExp) {
    match &mut seg(p, 0).body.results[0] {
        KernelResult::Write { dest, idx, val } => (dest, idx, val),
        _ => unreachable!(),
    }
}

#[test]
fn write_checks_and_prints() {
    let p = write_segmap();
    ok(&p);
    insta::assert_snapshot!(program_to_string(&p), @r#"
    entry main [n_1, m_2] (xs_3: [n_1]f32) (inds_4: [n_1]i64) (ys_5: [m_2]f32) : {[m_2]f32} = {
      let zs_9: [m_2]f32 = -- t.fut:10:3
        segmap (gtid_6 < n_1) : {f32} {
          let x_7: i64 = inds_4[gtid_6]
          let x_8: f32 = xs_3[gtid_6]
          return {write ys_5[x_7] = x_8}
        }
      in {zs_9}
    }
    "#);
}

#[test]
fn write_errors() {
    // One index per dimension written, at most.
    let mut p = write_segmap();
    write_mut(&mut p).1.push(i64c(0));
    assert_error!(
        p,
        SegErrorKind::WriteRank {
            rank: 1,
            indices: 2,
            ..
        }
    );
    // Indices are i64.
    let mut p = write_segmap();
    write_mut(&mut p).1[0] = i32c(0);
    assert_error!(
        p,
        SegErrorKind::Operand {
            site: Site::WriteIndex,
            expected: Expected::Prim(I64),
            ..
        }
    );
    // The destination is in scope outside the kernel, not a name of the thread.
    let mut p = write_segmap();
    let v = seg(&mut p, 0).body.stms[1].pat.elems[0].name.clone();
    *write_mut(&mut p).0 = v.clone();
    assert_error!(p, SegErrorKind::Unbound { name } if *name == v);
    // The value has the element type of the destination.
    let mut p = write_segmap();
    let j = seg(&mut p, 0).body.stms[0].pat.elems[0].name.clone();
    *write_mut(&mut p).2 = var(&j);
    seg(&mut p, 0).ret = vec![prim(I64)];
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::WriteValue,
            index: 0,
            ..
        }
    );
    // A write gives the destination's type.
    let mut p = write_segmap();
    stm(&mut p, 0).pat.elems[0].ty = arr(F32, vec![i64c(2), i64c(2)]);
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::Pattern,
            ..
        }
    );
}

// --- with_acc around a segmap that updates the accumulator ---------------------------------------

/// A histogram of `k` bins by accumulation: `with_acc` and a segmap of `upd_acc`.
fn with_acc_segmap() -> Program {
    entry(
        &["n", "k"],
        |s| {
            let (n, k) = (var(&s[0]), var(&s[1]));
            let params = vec![
                ("xs", arr(F32, vec![n.clone()])),
                ("inds", arr(I64, vec![n])),
            ];
            (params, vec![arr(F32, vec![k])])
        },
        |h, ps| {
            let (n, k, xs, inds) = (var(&ps[0]), var(&ps[1]), ps[2].clone(), ps[3].clone());
            let zeros = h.plain(
                "zeros",
                arr(F32, vec![k.clone()]),
                Exp::Replicate {
                    shape: vec![k.clone()],
                    value: f32c(0.0),
                },
            );
            let acc = h.ns.fresh("acc");
            let acc_t = Type::Acc {
                cert: acc.clone(),
                shape: vec![k.clone()],
                elems: vec![prim(F32)],
            };
            let input = AccInput {
                shape: vec![k.clone()],
                arrs: vec![zeros],
                op: Some(h.add_f32()),
            };
            let body = h.body(|h| {
                let space = h.space(vec![n]);
                let body = h.kernel(&space, |b, g| {
                    let j = b.index(prim(I64), &inds, vec![var(&g[0])]);
                    let v = b.index(prim(F32), &xs, vec![var(&g[0])]);
                    let upd = Exp::UpdAcc {
                        acc: acc.clone(),
                        idx: vec![var(&j)],
                        vals: vec![var(&v)],
                    };
                    let a = b.bind("acc", acc_t.clone(), upd);
                    vec![KernelResult::Returns(var(&a))]
                });
                let op = SegOp {
                    kind: SegKind::Map,
                    space,
                    ret: vec![acc_t.clone()],
                    body,
                };
                let a = h.seg(&[("acc", acc_t.clone())], op, 12);
                vec![var(&a[0])]
            });
            let lam = HostLambda {
                params: vec![Param {
                    name: acc.clone(),
                    ty: acc_t.clone(),
                }],
                body,
                ret: vec![acc_t.clone()],
            };
            let hs = h.push(
                &[("hs", arr(F32, vec![k]))],
                HostExp::WithAcc {
                    inputs: vec![input],
                    lam,
                },
                None,
            );
            vec![var(&hs[0])]
        },
    )
}

#[test]
fn with_acc_segmap_checks_and_prints() {
    let p = with_acc_segmap();
    ok(&p);
    insta::assert_snapshot!(program_to_string(&p), @r#"
    entry main [n_1, k_2] (xs_3: [n_1]f32) (inds_4: [n_1]i64) : {[k_2]f32} = {
      let zeros_5: [k_2]f32 = replicate([k_2], 0.0f32)
      let hs_15: [k_2]f32 = with_acc({([k_2], {zeros_5}, commutative \(a_7: f32) (b_8: f32) : {f32} -> {
        let x_9: f32 = f32.add a_7 b_8
        in {x_9}
      }, {0.0f32})}, \(acc_6: acc(acc_6, [k_2], {f32})) : {acc(acc_6, [k_2], {f32})} -> {
        let acc_14: acc(acc_6, [k_2], {f32}) = -- t.fut:12:3
          segmap (gtid_10 < n_1) : {acc(acc_6, [k_2], {f32})} {
            let x_11: i64 = inds_4[gtid_10]
            let x_12: f32 = xs_3[gtid_10]
            let acc_13: acc(acc_6, [k_2], {f32}) = upd_acc(acc_6, [x_11], {x_12})
            return {acc_13}
          }
        in {acc_14}
      })
      in {hs_15}
    }
    "#);
}

#[test]
fn with_acc_errors() {
    // An accumulator returned by every thread stays an accumulator.
    let mut p = with_acc_segmap();
    let (n, k) = (
        p.funs[0].size_params[0].clone(),
        p.funs[0].size_params[1].clone(),
    );
    let HostExp::WithAcc { lam, .. } = &mut stm(&mut p, 1).exp else {
        unreachable!()
    };
    lam.body.stms[0].pat.elems[0].ty = arr(F32, vec![var(&n), var(&k)]);
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::Pattern,
            index: 0,
            ..
        }
    );
    // The SOAC IR's with_acc is not host code.
    let mut p = with_acc_segmap();
    let zeros = stm(&mut p, 0).pat.elems[0].name.clone();
    stm(&mut p, 1).exp = HostExp::Plain(Exp::WithAcc {
        inputs: vec![],
        lam: crate::ir::Lambda {
            params: vec![],
            body: crate::ir::Body {
                stms: vec![],
                result: vec![var(&zeros)],
            },
            ret: vec![],
        },
    });
    assert_error!(p, SegErrorKind::NotHostExp { exp: "with_acc" });
}

// --- an if on a threshold -------------------------------------------------------------------------

/// The sum of `[n]f32`: a segred where `n` fills the device, else one thread that reduces.
fn if_on_threshold() -> Program {
    entry(
        &["n"],
        |s| (vec![("xs", arr(F32, vec![var(&s[0])]))], vec![prim(F32)]),
        |h, ps| {
            let (n, xs) = (var(&ps[0]), ps[1].clone());
            let b = h.push(
                &[("suff", prim(PrimType::Bool))],
                HostExp::Threshold {
                    size: n.clone(),
                    name: "suff_outer_par_0".into(),
                    kind: crate::seg::ThresholdKind::Nest,
                },
                None,
            );
            let then_b = h.body(|h| {
                let space = h.space(vec![n.clone()]);
                let body = h.kernel(&space, |b, g| {
                    let x = b.index(prim(F32), &xs, vec![var(&g[0])]);
                    vec![KernelResult::Returns(var(&x))]
                });
                let op = SegOp {
                    kind: SegKind::Red(vec![h.add_f32()]),
                    space,
                    ret: vec![prim(F32)],
                    body,
                };
                let s = h.seg(&[("s", prim(F32))], op, 14);
                vec![var(&s[0])]
            });
            let else_b = h.body(|h| {
                let space = h.space(vec![i64c(1)]);
                let add = h.add_f32();
                let body = h.kernel(&space, |b, _| {
                    let r = b.reduce(n.clone(), vec![xs.clone()], add);
                    vec![KernelResult::Returns(var(&r[0]))]
                });
                let op = SegOp {
                    kind: SegKind::Map,
                    space,
                    ret: vec![prim(F32)],
                    body,
                };
                let ss = h.seg(&[("ss", arr(F32, vec![i64c(1)]))], op, 15);
                let s = h.plain(
                    "s",
                    prim(F32),
                    Exp::Index(ss[0].clone(), vec![DimIndex::Fix(i64c(0))]),
                );
                vec![var(&s)]
            });
            let r = h.push(
                &[("r", prim(F32))],
                HostExp::If {
                    cond: var(&b[0]),
                    then_b,
                    else_b,
                    ret: vec![prim(F32).to_ext()],
                    nest_versions: true,
                },
                None,
            );
            vec![var(&r[0])]
        },
    )
}

#[test]
fn if_on_threshold_checks_and_prints() {
    let p = if_on_threshold();
    ok(&p);
    insta::assert_snapshot!(program_to_string(&p), @r#"
    entry main [n_1] (xs_2: [n_1]f32) : {f32} = {
      let suff_3: bool = threshold(suff_outer_par_0) n_1
      let r_17: f32 = if versions suff_3 : {f32}
        then {
          let s_9: f32 = -- t.fut:14:3
            segred (gtid_4 < n_1) : {f32}
              op commutative \(a_6: f32) (b_7: f32) : {f32} -> {
                let x_8: f32 = f32.add a_6 b_7
                in {x_8}
              }, {0.0f32}
            {
              let x_5: f32 = xs_2[gtid_4]
              return {x_5}
            }
          in {s_9}
        }
        else {
          let ss_15: [1i64]f32 = -- t.fut:15:3
            segmap (gtid_10 < 1i64) : {f32} {
              let r_14: f32 = reduce(n_1, {xs_2}, commutative \(a_11: f32) (b_12: f32) : {f32} -> {
                let x_13: f32 = f32.add a_11 b_12
                in {x_13}
              }, {0.0f32})
              return {r_14}
            }
          let s_16: f32 = ss_15[0i64]
          in {s_16}
        }
      in {r_17}
    }
    "#);
}

#[test]
fn threshold_and_if_errors() {
    // A threshold compares an i64 size and gives one bool.
    let mut p = if_on_threshold();
    let HostExp::Threshold { size, .. } = &mut stm(&mut p, 0).exp else {
        unreachable!()
    };
    *size = f32c(1.0);
    assert_error!(
        p,
        SegErrorKind::Operand {
            site: Site::ThresholdSize,
            expected: Expected::Prim(I64),
            ..
        }
    );
    let mut p = if_on_threshold();
    stm(&mut p, 0).pat.elems[0].ty = prim(I64);
    assert_error!(
        p,
        SegErrorKind::Type {
            site: Site::Pattern,
            index: 0,
            ..
        }
    );
    // The condition of the two versions of a nest is bound by a nest threshold.
    let mut p = if_on_threshold();
    let HostExp::If { cond, .. } = &mut stm(&mut p, 1).exp else {
        unreachable!()
    };
    *cond = SubExp::Const(crate::prim::PrimValue::Bool(true));
    assert_error!(p, SegErrorKind::VersionsCondition { .. });
    let mut p = if_on_threshold();
    let HostExp::Threshold { kind, .. } = &mut stm(&mut p, 0).exp else {
        unreachable!()
    };
    *kind = crate::seg::ThresholdKind::Loop;
    assert_error!(p, SegErrorKind::VersionsCondition { .. });
    // The condition of an if is a bool; its branches give its types.
    let mut p = if_on_threshold();
    let n = p.funs[0].size_params[0].clone();
    let HostExp::If {
        cond,
        nest_versions,
        ..
    } = &mut stm(&mut p, 1).exp
    else {
        unreachable!()
    };
    *nest_versions = false;
    *cond = var(&n);
    assert_error!(
        p,
        SegErrorKind::Operand {
            site: Site::IfCondition,
            ..
        }
    );
    let mut p = if_on_threshold();
    let HostExp::If { else_b, .. } = &mut stm(&mut p, 1).exp else {
        unreachable!()
    };
    else_b.result.push(i64c(0));
    assert_error!(
        p,
        SegErrorKind::Count {
            site: Site::ElseBranch,
            expected: 1,
            found: 2
        }
    );
    // An error in a branch names the innermost statement.
    let mut p = if_on_threshold();
    let HostExp::If { then_b, .. } = &mut stm(&mut p, 1).exp else {
        unreachable!()
    };
    let HostExp::Seg(op) = &mut then_b.stms[0].exp else {
        unreachable!()
    };
    op.ret = vec![prim(I64)];
    let then_pat = then_b.stms[0].pat.clone();
    let e = check_program(&p).unwrap_err();
    assert_eq!(e.stm, Some(then_pat));
}

// --- host code has no SOACs -----------------------------------------------------------------------

#[test]
fn soacs_in_host_code() {
    // The reduction of the else branch, moved out of its kernel.
    let mut p = if_on_threshold();
    let HostExp::If { else_b, .. } = &stm(&mut p, 1).exp else {
        unreachable!()
    };
    let HostExp::Seg(op) = &else_b.stms[0].exp else {
        unreachable!()
    };
    let reduce = op.body.stms[0].exp.clone();
    assert!(matches!(reduce, Exp::Soac(Soac::Reduce { .. })));
    stm(&mut p, 1).exp = HostExp::Plain(reduce);
    assert_error!(p, SegErrorKind::SoacInHost { soac: "reduce" });
    // The SOAC IR's if, in place of the host's.
    let mut p = if_on_threshold();
    let b = stm(&mut p, 0).pat.elems[0].name.clone();
    let zero = || crate::ir::Body {
        stms: vec![],
        result: vec![f32c(0.0)],
    };
    stm(&mut p, 1).exp = HostExp::Plain(Exp::If {
        cond: var(&b),
        then_b: zero(),
        else_b: zero(),
        ret: vec![prim(F32).to_ext()],
    });
    assert_error!(p, SegErrorKind::NotHostExp { exp: "if" });
}

// --- whole programs ---------------------------------------------------------------------------------

#[test]
fn program_errors() {
    let mut p = segscan_1d();
    let f = p.funs[0].clone();
    p.funs.push(f);
    assert_error!(p, SegErrorKind::FunctionTwice { .. });
    let mut p = segscan_1d();
    p.name_source.next = 2;
    assert_error!(p, SegErrorKind::BeyondNameSource { next: 2, .. });
    // A plain expression's names are in scope.
    let mut p = segscan_1d();
    let g = ghost(&mut p);
    p.funs[0].body.stms.insert(
        0,
        HostStm {
            pat: Pat { elems: vec![] },
            exp: HostExp::Plain(Exp::Assert {
                cond: var(&g),
                msg: "never".into(),
                args: vec![],
            }),
            attrs: Attrs::default(),
            loc: None,
        },
    );
    assert_error!(p, SegErrorKind::Unbound { name } if *name == g);
}

#[test]
fn a_contended_nest_threshold_is_never_met_on_a_gpu_unless_set_and_counts_updates_on_a_cpu() {
    use crate::seg::{ThresholdKind::*, Thresholds};
    let t = Thresholds::default();
    assert_eq!(t.get_on("suff_outer_par_3", ContendedNest, true), i64::MAX);
    // Its size is `i64::MAX` minus the contended updates: met up to CONTENDED_UPDATES.
    let cpu = t.get_on("suff_outer_par_3", ContendedNest, false);
    assert_eq!(cpu, i64::MAX - Thresholds::CONTENDED_UPDATES);
    assert!(i64::MAX - Thresholds::CONTENDED_UPDATES >= cpu);
    assert!(i64::MAX - (Thresholds::CONTENDED_UPDATES + 1) < cpu);
    // Without a device (the kernel IR's evaluator), as on a CPU.
    assert_eq!(t.get("suff_outer_par_3", ContendedNest), cpu);
    // Other kinds do not depend on the device.
    assert_eq!(
        t.get_on("suff_outer_par_1", Nest, true),
        Thresholds::DEFAULT
    );
    // `nest` sets contended nests too, `contended_nest` only them, a name only itself.
    let mut n = Thresholds::default();
    n.set("nest=5").unwrap();
    assert_eq!(n.get_on("x", ContendedNest, true), 5);
    assert_eq!(n.get_on("x", Nest, true), 5);
    let mut c = Thresholds::default();
    c.set("contended_nest=7").unwrap();
    assert_eq!(c.get_on("x", ContendedNest, true), 7);
    assert_eq!(c.get_on("x", Nest, true), Thresholds::DEFAULT);
    c.set("x=9").unwrap();
    assert_eq!(c.get_on("x", ContendedNest, true), 9);
    assert_eq!(Thresholds::all(0).get_on("x", ContendedNest, true), 0);
}

/// `effects::writes_outside` on the host code of small programs: a loop's body that updates
/// its parameter in place, or adds into it with a histogram, writes outside itself (the
/// parameter's memory is the loop's initial value's); the function around the loop does not
/// (lowering copies what it updates). Of a versioned loop, the flattened version adds into
/// the loop's initial array, the one-thread version only into its own copy. Kernels updating
/// an accumulator write outside the `with_acc` function that holds them, not outside the
/// body around the `with_acc`.
#[test]
fn host_code_that_writes_outside_itself() {
    use super::effects::writes_outside;
    let body_of = |src: &str| {
        let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let p = crate::flatten::extract_kernels(&c.ir);
        p.entry("main").expect("entry").body.clone()
    };
    /// Every host body nested in `b`, with the kind of statement holding it.
    fn nested(b: &HostBody, out: &mut Vec<(&'static str, HostBody)>) {
        for s in &b.stms {
            let kind = match &s.exp {
                HostExp::Loop { .. } => "loop",
                HostExp::WithAcc { .. } => "with_acc",
                HostExp::VersionedLoop { par, seq, .. } => {
                    out.push(("par", par.clone()));
                    out.push(("seq", seq.clone()));
                    ""
                }
                _ => "",
            };
            for inner in s.exp.host_bodies() {
                if !kind.is_empty() {
                    out.push((kind, inner.clone()));
                }
                nested(inner, out);
            }
        }
    }
    let writes = |src: &str, kind: &str| -> (bool, Vec<bool>) {
        let b = body_of(src);
        let mut inner = Vec::new();
        nested(&b, &mut inner);
        let ws: Vec<bool> = inner
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, b)| writes_outside(b))
            .collect();
        assert!(!ws.is_empty(), "no {kind} in {src}");
        (writes_outside(&b), ws)
    };
    let update = "entry main [n] (xs: [n]f64) (k: i64) : [n]f64 =
                    loop ys = copy xs for i < k do ys with [i] = 2";
    assert_eq!(writes(update, "loop"), (false, vec![true]));
    let hist = "entry main [n] (is: [n]i64) (k: i64) : [3]f64 =
                  loop h = replicate 3 0 for i < k do reduce_by_index h (+) 0 is (map f64.i64 is)";
    assert_eq!(writes(hist, "par"), (false, vec![true]));
    assert_eq!(writes(hist, "seq"), (false, vec![false]));
    assert!(!writes_outside(&body_of(
        "entry main (xs: []f64) : []f64 = map (\\x -> x * 2) xs"
    )));
    // A gather's adjoint: the kernel adds into the accumulator of a `with_acc` in the body.
    let gather = "entry main [n][m] (x: [n]f64) (is: [m]i64) (y: [m]f64) : [n]f64 =
                    vjp (\\x -> map (\\i -> x[i] * x[i]) is) x y";
    let (outer, inner) = writes(gather, "with_acc");
    assert!(!outer);
    assert!(inner.contains(&true), "{inner:?}");
}
