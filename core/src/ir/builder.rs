//! A small convenience API to construct IR, for tests and passes.
//!
//! ```
//! use vkad_core::ir::{builder::*, *};
//! use vkad_core::prim::PrimType;
//! let mut ns = NameSource::default();
//! let f = fun(&mut ns, "main", true, &[], &[("x", Type::Prim(PrimType::F32))], vec![Type::Prim(PrimType::F32)], |b, ps| {
//!     let y = b.binop(BinOp::Add(PrimType::F32), var(&ps[0]), f32c(1.0));
//!     vec![var(&y)]
//! });
//! let p = Program { funs: vec![f], name_source: ns };
//! vkad_core::ir::check::check_program(&p).unwrap();
//! ```
//!
//! A [`Builder`] collects statements; [`Builder::finish`] turns them into a [`Body`]. Nested bodies
//! (branches, loop bodies, lambdas) are built with [`Builder::body`] and [`Builder::lambda`], which
//! share the same [`NameSource`]. Types of scalar operations are computed from the operator (see
//! [`crate::ir::check`]); everything else takes its type from the caller.

use super::check::{binop_sig, cmpop_sig, conv_sig, math_sig, unop_sig};
use super::*;
use crate::prim::{PrimType, PrimValue};

impl From<VName> for SubExp {
    fn from(v: VName) -> SubExp {
        SubExp::Var(v)
    }
}

impl From<&VName> for SubExp {
    fn from(v: &VName) -> SubExp {
        SubExp::Var(v.clone())
    }
}

impl From<PrimValue> for SubExp {
    fn from(v: PrimValue) -> SubExp {
        SubExp::Const(v)
    }
}

/// `SubExp::Var(v.clone())`.
pub fn var(v: &VName) -> SubExp {
    SubExp::Var(v.clone())
}

/// An `i64` constant.
pub fn i64c(v: i64) -> SubExp {
    SubExp::Const(PrimValue::I64(v))
}

/// An `i32` constant.
pub fn i32c(v: i32) -> SubExp {
    SubExp::Const(PrimValue::I32(v))
}

/// An `f32` constant.
pub fn f32c(v: f32) -> SubExp {
    SubExp::Const(PrimValue::F32(v))
}

/// An `f64` constant.
pub fn f64c(v: f64) -> SubExp {
    SubExp::Const(PrimValue::F64(v))
}

/// A `bool` constant.
pub fn boolc(v: bool) -> SubExp {
    SubExp::Const(PrimValue::Bool(v))
}

/// The scalar type `f32`.
pub fn f32t() -> Type {
    Type::Prim(PrimType::F32)
}

/// `[d0][d1]...elem`.
pub fn arr(elem: PrimType, shape: Vec<SubExp>) -> Type {
    Type::array(elem, shape)
}

/// Collects statements of one body.
pub struct Builder<'a> {
    pub ns: &'a mut NameSource,
    pub stms: Vec<Stm>,
}

impl<'a> Builder<'a> {
    pub fn new(ns: &'a mut NameSource) -> Builder<'a> {
        Builder {
            ns,
            stms: Vec::new(),
        }
    }

    /// A fresh name.
    pub fn fresh(&mut self, base: &str) -> VName {
        self.ns.fresh(base)
    }

    /// A fresh parameter.
    pub fn param(&mut self, base: &str, ty: Type) -> Param {
        Param {
            name: self.ns.fresh(base),
            ty,
        }
    }

    /// Appends a statement as it is.
    pub fn push(&mut self, stm: Stm) {
        self.stms.push(stm);
    }

    /// `let x: ty = exp` with a fresh `x`; returns `x`.
    pub fn bind(&mut self, base: &str, ty: Type, exp: Exp) -> VName {
        let p = self.param(base, ty);
        let v = p.name.clone();
        self.stms.push(Stm {
            pat: Pat { elems: vec![p] },
            exp,
            attrs: Attrs::default(),
            loc: None,
        });
        v
    }

    /// `let {x1: t1, ...} = exp` with fresh names; returns them.
    pub fn bind_many(&mut self, pat: &[(&str, Type)], exp: Exp) -> Vec<VName> {
        let elems: Vec<Param> = pat.iter().map(|(b, t)| self.param(b, t.clone())).collect();
        let names = elems.iter().map(|p| p.name.clone()).collect();
        self.stms.push(Stm {
            pat: Pat { elems },
            exp,
            attrs: Attrs::default(),
            loc: None,
        });
        names
    }

    /// Adds an attribute to the last statement (e.g. `"unsafe"`).
    pub fn attr(&mut self, a: &str) {
        if let Some(s) = self.stms.last_mut() {
            s.attrs.0.push(a.to_string());
        }
    }

    /// `let x = op a b`, typed from the operator.
    pub fn binop(&mut self, op: BinOp, a: SubExp, b: SubExp) -> VName {
        let t = binop_sig(op).1;
        self.bind("x", Type::Prim(t), Exp::BinOp(op, a, b))
    }

    /// `let x = op a`, typed from the operator.
    pub fn unop(&mut self, op: UnOp, a: SubExp) -> VName {
        let t = unop_sig(op);
        self.bind("x", Type::Prim(t), Exp::UnOp(op, a))
    }

    /// `let c: bool = op a b`.
    pub fn cmp(&mut self, op: CmpOp, a: SubExp, b: SubExp) -> VName {
        let _ = cmpop_sig(op);
        self.bind("c", Type::Prim(PrimType::Bool), Exp::CmpOp(op, a, b))
    }

    /// `let x = to.from a`.
    pub fn conv(&mut self, from: PrimType, to: PrimType, a: SubExp) -> VName {
        let op = ConvOp { from, to };
        let t = conv_sig(op).1;
        self.bind("x", Type::Prim(t), Exp::Conv(op, a))
    }

    /// `let x = f args`, typed from the function.
    pub fn math(&mut self, f: MathFn, args: Vec<SubExp>) -> VName {
        let t = math_sig(f).1;
        self.bind("x", Type::Prim(t), Exp::Math(f, args))
    }

    /// `let x = a[idx...]`; the caller gives the result type.
    pub fn index(&mut self, ty: Type, a: &VName, idx: Vec<SubExp>) -> VName {
        self.bind(
            "x",
            ty,
            Exp::Index(a.clone(), idx.into_iter().map(DimIndex::Fix).collect()),
        )
    }

    /// `assert(cond, msg)`.
    pub fn assert(&mut self, cond: SubExp, msg: &str) {
        self.stms.push(Stm {
            pat: Pat { elems: vec![] },
            exp: Exp::Assert {
                cond,
                msg: msg.to_string(),
                args: vec![],
            },
            attrs: Attrs::default(),
            loc: None,
        });
    }

    /// A nested body built by `f`, which returns the body's results.
    pub fn body(&mut self, f: impl FnOnce(&mut Builder) -> Vec<SubExp>) -> Body {
        let mut nb = Builder::new(self.ns);
        let result = f(&mut nb);
        nb.finish(result)
    }

    /// A lambda with fresh params of the given names and types, returning `ret`; `f` gets the
    /// param names and returns the body's results.
    pub fn lambda(
        &mut self,
        params: &[(&str, Type)],
        ret: Vec<Type>,
        f: impl FnOnce(&mut Builder, &[VName]) -> Vec<SubExp>,
    ) -> Lambda {
        lambda(self.ns, params, ret, f)
    }

    /// `let {xs...} = map(w, arrs, lam)`; result types are `[w]t` for each lambda result.
    pub fn map(&mut self, w: SubExp, arrs: Vec<VName>, lam: Lambda) -> Vec<VName> {
        let pat: Vec<(&str, Type)> = lam
            .ret
            .iter()
            .map(|t| ("m", t.array_of(w.clone())))
            .collect();
        self.bind_many(&pat, Exp::Soac(Soac::Map { w, arrs, lam }))
    }

    /// `let {r...} = reduce(w, arrs, op)`; result types are the operator's result types.
    pub fn reduce(&mut self, w: SubExp, arrs: Vec<VName>, op: Operator) -> Vec<VName> {
        let pat: Vec<(&str, Type)> = op.lam.ret.iter().map(|t| ("r", t.clone())).collect();
        self.bind_many(&pat, Exp::Soac(Soac::Reduce { w, arrs, op }))
    }

    /// The statements so far and `result` as a body.
    pub fn finish(self, result: Vec<SubExp>) -> Body {
        Body {
            stms: self.stms,
            result,
        }
    }
}

/// A lambda (see [`Builder::lambda`]).
pub fn lambda(
    ns: &mut NameSource,
    params: &[(&str, Type)],
    ret: Vec<Type>,
    f: impl FnOnce(&mut Builder, &[VName]) -> Vec<SubExp>,
) -> Lambda {
    let params: Vec<Param> = params
        .iter()
        .map(|(b, t)| Param {
            name: ns.fresh(b),
            ty: t.clone(),
        })
        .collect();
    let names: Vec<VName> = params.iter().map(|p| p.name.clone()).collect();
    let mut b = Builder::new(ns);
    let result = f(&mut b, &names);
    Lambda {
        params,
        body: b.finish(result),
        ret,
    }
}

/// A binary operator `\(a: t) (b: t) : {t} -> a op b` with one neutral element.
pub fn binop_operator(
    ns: &mut NameSource,
    op: BinOp,
    neutral: SubExp,
    commutative: bool,
) -> Operator {
    let t = Type::Prim(binop_sig(op).1);
    let lam = lambda(
        ns,
        &[("a", t.clone()), ("b", t.clone())],
        vec![t],
        |b, ps| {
            let r = b.binop(op, var(&ps[0]), var(&ps[1]));
            vec![var(&r)]
        },
    );
    Operator {
        lam,
        neutral: vec![neutral],
        commutative,
    }
}

/// A function definition. `size_params` are `i64` names (their `VName`s are made fresh and passed
/// to `f` first, then the params'); `params` may refer to sizes only by constants or by names the
/// caller made, so for sized params build the [`FunDef`] by hand or use [`fun_sized`].
pub fn fun(
    ns: &mut NameSource,
    name: &str,
    entry: bool,
    size_params: &[&str],
    params: &[(&str, Type)],
    ret: Vec<Type>,
    f: impl FnOnce(&mut Builder, &[VName]) -> Vec<SubExp>,
) -> FunDef {
    let sizes: Vec<VName> = size_params.iter().map(|s| ns.fresh(s)).collect();
    fun_sized(
        ns,
        name,
        entry,
        sizes,
        |_, _| {
            params
                .iter()
                .map(|(b, t)| (b.to_string(), t.clone()))
                .collect()
        },
        ret.into_iter().map(|t| t.to_ext()).collect(),
        f,
    )
}

/// Like [`fun`], but the params are computed from the size param names by `params`, so their
/// types can mention the sizes: `fun_sized(ns, "f", false, vec![n.clone()], |_, s| vec![("xs".into(), arr(F32, vec![var(&s[0])]))], ...)`.
pub fn fun_sized(
    ns: &mut NameSource,
    name: &str,
    entry: bool,
    sizes: Vec<VName>,
    params: impl FnOnce(&mut NameSource, &[VName]) -> Vec<(String, Type)>,
    ret: Vec<ExtType>,
    f: impl FnOnce(&mut Builder, &[VName]) -> Vec<SubExp>,
) -> FunDef {
    let ps = params(ns, &sizes);
    let params: Vec<Param> = ps
        .iter()
        .map(|(b, t)| Param {
            name: ns.fresh(b),
            ty: t.clone(),
        })
        .collect();
    let mut all: Vec<VName> = sizes.clone();
    all.extend(params.iter().map(|p| p.name.clone()));
    let mut b = Builder::new(ns);
    let result = f(&mut b, &all);
    let body = b.finish(result);
    let entry = entry.then(|| EntryPoint {
        name: Arc::from(name),
        param_counts: vec![1; params.len()],
        result_counts: vec![1; ret.len()],
    });
    FunDef {
        name: Arc::from(name),
        entry,
        size_params: sizes,
        params,
        ret,
        body,
        attrs: Attrs::default(),
    }
}

/// `Program { funs, name_source: ns }`.
pub fn program(ns: NameSource, funs: Vec<FunDef>) -> Program {
    Program {
        funs,
        name_source: ns,
    }
}
