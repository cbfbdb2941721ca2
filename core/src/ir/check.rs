//! The IR checker: verifies the invariants documented in [`crate::ir`].
//!
//! [`check_program`] checks that
//! - every variable is bound before it is used and bound exactly once in the whole program
//!   (by id), and is used only in the scope of its binding;
//! - every type is well formed (shape dimensions are integer constants or integer variables in
//!   scope);
//! - operand types match each operation and each construct (scalar ops, indexing, array
//!   constructors, `if`, `loop`, SOACs, accumulators, calls), and that patterns, bodies and function
//!   results agree with the types the expressions produce.
//!
//! **How types are compared.** Element types, ranks and the number of values are compared strictly.
//! A dimension is compared only when both sides are constants; a dimension that is a variable (or
//! existential, [`ExtDim::Ext`]) on either side is trusted, since proving two size variables equal
//! needs more than syntax (sizes flow through copies, `if`s and calls). Accumulator types are compared
//! by their element types and the rank of their shape; their certificates are not checked.
//! Consumption (no use of an array after it is consumed) is not checked.

use super::print::math_name;
use super::*;
use crate::prim::PrimType;
use std::collections::{HashMap, HashSet};

/// A violated IR invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct IrError {
    pub message: String,
    /// The function it was found in.
    pub fun: String,
    /// The innermost statement being checked, printed.
    pub stm: Option<String>,
}

impl fmt::Display for IrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IR error in function {}: {}", self.fun, self.message)?;
        if let Some(s) = &self.stm {
            write!(f, "\n  in statement: {s}")?;
        }
        Ok(())
    }
}

impl std::error::Error for IrError {}

/// The operand type of a unary operator (the result has the same type).
pub fn unop_sig(op: UnOp) -> PrimType {
    match op {
        UnOp::Neg(t) | UnOp::Not(t) | UnOp::Abs(t) | UnOp::Signum(t) => t,
    }
}

/// The operand type and the result type of a binary operator (both operands have the same type).
pub fn binop_sig(op: BinOp) -> (PrimType, PrimType) {
    use BinOp::*;
    let t = match op {
        Add(t) | Sub(t) | Mul(t) | Div(t) | Mod(t) | Pow(t) | And(t) | Or(t) | Min(t) | Max(t) => t,
        Quot(t) | Rem(t) | Shl(t) | Shr(t) | UShr(t) | Xor(t) => PrimType::Int(t),
        LogAnd | LogOr => PrimType::Bool,
    };
    (t, t)
}

/// The operand type of a comparison (the result is `bool`).
pub fn cmpop_sig(op: CmpOp) -> PrimType {
    match op {
        CmpOp::Eq(t) | CmpOp::Lt(t) | CmpOp::Le(t) => t,
    }
}

/// `(from, to)` of a conversion.
pub fn conv_sig(op: ConvOp) -> (PrimType, PrimType) {
    (op.from, op.to)
}

/// The argument types and the result type of a math function.
pub fn math_sig(m: MathFn) -> (Vec<PrimType>, PrimType) {
    use MathFn::*;
    let (t, _) = math_name(&m);
    let uint_of = |f: crate::prim::FloatType| {
        PrimType::Int(match f.bits() {
            16 => IntType::U16,
            32 => IntType::U32,
            _ => IntType::U64,
        })
    };
    match m {
        Atan2(_) | Hypot(_) | CopySign(_) | NextAfter(_) | MulHi(_) => (vec![t, t], t),
        Ldexp(_) => (vec![t, PrimType::I32], t),
        Fma(_) | Lerp(_) => (vec![t, t, t], t),
        IsNan(_) | IsInf(_) => (vec![t], PrimType::Bool),
        ToBits(f) => (vec![t], uint_of(f)),
        FromBits(f) => (vec![uint_of(f)], t),
        Clz(_) | Popc(_) | Ctz(_) => (vec![t], PrimType::I32),
        _ => (vec![t], t),
    }
}

fn is_num(t: PrimType) -> bool {
    matches!(t, PrimType::Int(_) | PrimType::Float(_))
}

fn is_int(t: PrimType) -> bool {
    matches!(t, PrimType::Int(_))
}

fn unop_valid(op: UnOp) -> bool {
    match op {
        UnOp::Neg(t) | UnOp::Abs(t) | UnOp::Signum(t) => is_num(t),
        UnOp::Not(t) => t == PrimType::Bool || is_int(t),
    }
}

fn binop_valid(op: BinOp) -> bool {
    use BinOp::*;
    match op {
        Add(t) | Sub(t) | Mul(t) | Div(t) | Mod(t) | Pow(t) | Min(t) | Max(t) => is_num(t),
        And(t) | Or(t) => t == PrimType::Bool || is_int(t),
        _ => true,
    }
}

/// Whether dimension `a` may equal `b`: unequal only when both are constants that differ.
pub(crate) fn dim_ok(a: &ExtDim, b: &SubExp) -> bool {
    match (a, b) {
        (ExtDim::Free(SubExp::Const(x)), SubExp::Const(y)) => x.as_i128() == y.as_i128(),
        _ => true,
    }
}

/// Whether `actual` can have type `expected` (see the module doc for what is compared).
pub fn type_matches(expected: &ExtType, actual: &Type) -> bool {
    match (expected, actual) {
        (
            TypeBase::Acc {
                shape: s1,
                elems: e1,
                ..
            },
            TypeBase::Acc {
                shape: s2,
                elems: e2,
                ..
            },
        ) => {
            s1.len() == s2.len()
                && e1.len() == e2.len()
                && e1.iter().zip(e2).all(|(a, b)| type_matches(&a.to_ext(), b))
        }
        (TypeBase::Acc { .. }, _) | (_, TypeBase::Acc { .. }) => false,
        _ => {
            let ds: &[ExtDim] = match expected {
                TypeBase::Array { shape, .. } => shape,
                _ => &[],
            };
            expected.elem() == actual.elem()
                && ds.len() == actual.rank()
                && ds.iter().zip(actual.shape()).all(|(a, b)| dim_ok(a, b))
        }
    }
}

pub(crate) fn same_type(expected: &Type, actual: &Type) -> bool {
    type_matches(&expected.to_ext(), actual)
}

type R<T> = Result<T, IrError>;

/// The state of a check: the scope and every id bound so far. [`crate::seg::check`] keeps one
/// to check the SOAC IR inside the kernel IR (plain host expressions, thread bodies, operators)
/// in the kernel IR's scope, through the `pub(crate)` methods.
pub(crate) struct Checker<'p> {
    prog: &'p Program,
    fun: String,
    seen: HashSet<u32>,
    scope: HashMap<VName, Type>,
    bound: Vec<VName>,
}

/// Check every invariant listed in the module doc; the first violation is returned.
pub fn check_program(p: &Program) -> Result<(), IrError> {
    let mut c = Checker::new(p);
    let mut names = HashSet::new();
    for f in &p.funs {
        c.fun = f.name.to_string();
        if !names.insert(f.name.clone()) {
            return Err(c.err(format!("function {} is defined twice", f.name)));
        }
        c.check_fun(f)?;
    }
    if let Some(max) = c.max_id() {
        if max > p.name_source.next {
            return Err(IrError {
                message: format!(
                    "a variable has id {max}, beyond the name source ({})",
                    p.name_source.next
                ),
                fun: String::new(),
                stm: None,
            });
        }
    }
    Ok(())
}

impl<'p> Checker<'p> {
    /// An empty scope; calls (`Apply`) are checked against the signatures of `prog`'s functions.
    pub(crate) fn new(prog: &'p Program) -> Checker<'p> {
        Checker {
            prog,
            fun: String::new(),
            seen: HashSet::new(),
            scope: HashMap::new(),
            bound: Vec::new(),
        }
    }

    /// Names the function that errors are reported in.
    pub(crate) fn set_fun(&mut self, name: &str) {
        self.fun = name.to_string();
    }

    /// The type of `v` if it is in scope.
    pub(crate) fn type_of(&self, v: &VName) -> Option<&Type> {
        self.scope.get(v)
    }

    /// The largest id bound so far.
    pub(crate) fn max_id(&self) -> Option<u32> {
        self.seen.iter().max().copied()
    }

    fn err(&self, message: String) -> IrError {
        IrError {
            message,
            fun: self.fun.clone(),
            stm: None,
        }
    }

    pub(crate) fn bind(&mut self, v: &VName, t: Type) -> R<()> {
        if !self.seen.insert(v.id) {
            return Err(self.err(format!(
                "{v} is bound more than once (id {} is not unique)",
                v.id
            )));
        }
        self.scope.insert(v.clone(), t);
        self.bound.push(v.clone());
        Ok(())
    }

    pub(crate) fn mark(&self) -> usize {
        self.bound.len()
    }

    pub(crate) fn restore(&mut self, m: usize) {
        for v in self.bound.drain(m..) {
            self.scope.remove(&v);
        }
    }

    fn lookup(&self, v: &VName) -> R<Type> {
        self.scope
            .get(v)
            .cloned()
            .ok_or_else(|| self.err(format!("{v} is not in scope")))
    }

    fn subexp_ty(&self, s: &SubExp) -> R<Type> {
        match s {
            SubExp::Const(c) => Ok(Type::Prim(c.prim_type())),
            SubExp::Var(v) => self.lookup(v),
        }
    }

    fn require(&self, s: &SubExp, t: PrimType, what: &str) -> R<()> {
        let st = self.subexp_ty(s)?;
        if st != Type::Prim(t) {
            return Err(self.err(format!("{what}: {s} has type {st}, expected {t}")));
        }
        Ok(())
    }

    fn require_int(&self, s: &SubExp, what: &str) -> R<()> {
        match self.subexp_ty(s)? {
            Type::Prim(PrimType::Int(_)) => Ok(()),
            t => Err(self.err(format!("{what}: {s} has type {t}, expected an integer"))),
        }
    }

    fn check_dim(&self, d: &SubExp) -> R<()> {
        self.require_int(d, "array dimension")
    }

    fn check_type(&self, t: &Type) -> R<()> {
        match t {
            TypeBase::Prim(_) => Ok(()),
            TypeBase::Array { shape, .. } => shape.iter().try_for_each(|d| self.check_dim(d)),
            TypeBase::Acc { shape, elems, .. } => {
                shape.iter().try_for_each(|d| self.check_dim(d))?;
                elems.iter().try_for_each(|t| self.check_type(t))
            }
        }
    }

    /// `n` is the number of results the type belongs to (bounds `Ext` indices).
    fn check_ext_type(&self, t: &ExtType, n: usize) -> R<()> {
        match t {
            TypeBase::Array { shape, .. } => shape.iter().try_for_each(|d| match d {
                ExtDim::Free(d) => self.check_dim(d),
                ExtDim::Ext(i) if *i < n => Ok(()),
                ExtDim::Ext(i) => {
                    Err(self.err(format!("existential size ?{i} out of range ({n} results)")))
                }
            }),
            TypeBase::Prim(_) => Ok(()),
            TypeBase::Acc { shape, elems, .. } => {
                shape.iter().try_for_each(|d| self.check_dim(d))?;
                elems.iter().try_for_each(|t| self.check_type(t))
            }
        }
    }

    fn array_ty(&self, v: &VName, what: &str) -> R<Type> {
        let t = self.lookup(v)?;
        if t.rank() == 0 {
            return Err(self.err(format!("{what}: {v} has type {t}, expected an array")));
        }
        Ok(t)
    }

    /// Checks `actual` against `expected`, one by one and in number.
    fn match_types(&self, expected: &[ExtType], actual: &[Type], what: &str) -> R<()> {
        if expected.len() != actual.len() {
            return Err(self.err(format!(
                "{what}: {} values, expected {}",
                actual.len(),
                expected.len()
            )));
        }
        for (k, (e, a)) in expected.iter().zip(actual).enumerate() {
            if !type_matches(e, a) {
                return Err(self.err(format!("{what}: value {k} has type {a}, expected {e}")));
            }
        }
        Ok(())
    }

    fn check_fun(&mut self, f: &FunDef) -> R<()> {
        let m = self.mark();
        for s in &f.size_params {
            self.bind(s, Type::Prim(PrimType::I64))?;
        }
        for p in &f.params {
            self.check_type(&p.ty)?;
            self.bind(&p.name, p.ty.clone())?;
        }
        for t in &f.ret {
            self.check_ext_type(t, f.ret.len())?;
        }
        let res = self.check_body(&f.body)?;
        self.match_types(&f.ret, &res, "function result")?;
        self.restore(m);
        Ok(())
    }

    /// Checks a body in its own scope; returns the types of its results.
    fn check_body(&mut self, b: &Body) -> R<Vec<Type>> {
        let m = self.mark();
        self.check_stms(&b.stms)?;
        let res = b
            .result
            .iter()
            .map(|r| self.subexp_ty(r))
            .collect::<R<Vec<_>>>()?;
        self.restore(m);
        Ok(res)
    }

    /// Checks `stms` in order and leaves their bindings in scope; an error names the innermost
    /// statement it was found in.
    pub(crate) fn check_stms(&mut self, stms: &[Stm]) -> R<()> {
        for s in stms {
            self.check_stm(s).map_err(|mut e| {
                if e.stm.is_none() {
                    e.stm = Some(s.to_string());
                }
                e
            })?;
        }
        Ok(())
    }

    fn check_stm(&mut self, s: &Stm) -> R<()> {
        let rets = self.check_exp(&s.exp)?;
        let pts: Vec<Type> = s.pat.elems.iter().map(|p| p.ty.clone()).collect();
        self.match_types(&rets, &pts, "pattern")?;
        for p in &s.pat.elems {
            self.check_type(&p.ty)?;
            self.bind(&p.name, p.ty.clone())?;
        }
        Ok(())
    }

    fn check_lambda(&mut self, l: &Lambda) -> R<()> {
        let m = self.mark();
        for p in &l.params {
            self.check_type(&p.ty)?;
            self.bind(&p.name, p.ty.clone())?;
        }
        for t in &l.ret {
            self.check_type(t)?;
        }
        let res = self.check_body(&l.body)?;
        let ret: Vec<ExtType> = l.ret.iter().map(|t| t.to_ext()).collect();
        self.match_types(&ret, &res, "lambda result")?;
        self.restore(m);
        Ok(())
    }

    /// Checks a reduction-like operator over values of types `rows`.
    pub(crate) fn check_operator(&mut self, op: &Operator, rows: &[Type], what: &str) -> R<()> {
        let k = rows.len();
        if op.lam.params.len() != 2 * k || op.lam.ret.len() != k || op.neutral.len() != k {
            return Err(self.err(format!(
                "{what} operator over {k} values needs {} params, {k} results and {k} neutral elements; it has {}, {} and {}",
                2 * k,
                op.lam.params.len(),
                op.lam.ret.len(),
                op.neutral.len()
            )));
        }
        let ext: Vec<ExtType> = rows.iter().map(|t| t.to_ext()).collect();
        let ps: Vec<Type> = op.lam.params.iter().map(|p| p.ty.clone()).collect();
        self.match_types(
            &ext,
            &ps[..k],
            &format!("{what} operator accumulator params"),
        )?;
        self.match_types(&ext, &ps[k..], &format!("{what} operator element params"))?;
        self.match_types(&ext, &op.lam.ret, &format!("{what} operator results"))?;
        let nts = op
            .neutral
            .iter()
            .map(|n| self.subexp_ty(n))
            .collect::<R<Vec<_>>>()?;
        self.match_types(&ext, &nts, &format!("{what} neutral elements"))?;
        self.check_lambda(&op.lam)
    }

    /// Row types of SOAC input arrays of outer size `w`.
    fn soac_rows(&self, w: &SubExp, arrs: &[VName], what: &str) -> R<Vec<Type>> {
        self.require_int(w, &format!("{what} width"))?;
        arrs.iter()
            .map(|a| {
                let t = self.array_ty(a, &format!("{what} input"))?;
                if !dim_ok(&ExtDim::Free(w.clone()), &t.shape()[0]) {
                    return Err(self.err(format!(
                        "{what} input {a} has type {t}, but the width is {w}"
                    )));
                }
                Ok(t.row())
            })
            .collect()
    }

    /// The type of `a[idx]`.
    fn slice_ty(&self, a: &VName, idx: &[DimIndex]) -> R<Type> {
        let t = self.lookup(a)?;
        let elem = t
            .elem()
            .ok_or_else(|| self.err(format!("cannot index the accumulator {a}")))?;
        if idx.len() > t.rank() {
            return Err(self.err(format!(
                "{} indices into {a} of rank {}",
                idx.len(),
                t.rank()
            )));
        }
        let mut dims = Vec::new();
        for d in idx {
            match d {
                DimIndex::Fix(i) => self.require_int(i, "index")?,
                DimIndex::Slice { start, len, stride } => {
                    self.require_int(start, "slice start")?;
                    self.require_int(len, "slice length")?;
                    self.require_int(stride, "slice stride")?;
                    dims.push(len.clone());
                }
            }
        }
        dims.extend(t.shape()[idx.len()..].iter().cloned());
        Ok(Type::array(elem, dims))
    }

    /// The result types of `e`, whose operands must be in scope.
    pub(crate) fn check_exp(&mut self, e: &Exp) -> R<Vec<ExtType>> {
        let one = |t: Type| Ok(vec![t.to_ext()]);
        match e {
            Exp::SubExp(s) => one(self.subexp_ty(s)?),
            Exp::UnOp(op, x) => {
                if !unop_valid(*op) {
                    return Err(self.err(format!("{op} is not an operation")));
                }
                let t = unop_sig(*op);
                self.require(x, t, &format!("operand of {op}"))?;
                one(Type::Prim(t))
            }
            Exp::BinOp(op, a, b) => {
                if !binop_valid(*op) {
                    return Err(self.err(format!("{op} is not an operation")));
                }
                let (t, r) = binop_sig(*op);
                self.require(a, t, &format!("first operand of {op}"))?;
                self.require(b, t, &format!("second operand of {op}"))?;
                one(Type::Prim(r))
            }
            Exp::CmpOp(op, a, b) => {
                let t = cmpop_sig(*op);
                self.require(a, t, &format!("first operand of {op}"))?;
                self.require(b, t, &format!("second operand of {op}"))?;
                one(Type::Prim(PrimType::Bool))
            }
            Exp::Conv(op, x) => {
                self.require(x, op.from, &format!("operand of {op}"))?;
                one(Type::Prim(op.to))
            }
            Exp::Math(m, args) => {
                let (ats, r) = math_sig(*m);
                if ats.len() != args.len() {
                    return Err(self.err(format!(
                        "{m} takes {} arguments, given {}",
                        ats.len(),
                        args.len()
                    )));
                }
                for (k, (a, t)) in args.iter().zip(&ats).enumerate() {
                    self.require(a, *t, &format!("argument {k} of {m}"))?;
                }
                one(Type::Prim(r))
            }
            Exp::Index(a, idx) => one(self.slice_ty(a, idx)?),
            Exp::Update(a, idx, v) => {
                let t = self.array_ty(a, "update")?;
                let st = self.slice_ty(a, idx)?;
                let vt = self.subexp_ty(v)?;
                if !same_type(&st, &vt) {
                    return Err(self.err(format!(
                        "update of a slice of type {st} with {v} of type {vt}"
                    )));
                }
                one(t)
            }
            Exp::Iota {
                n,
                start,
                stride,
                it,
            } => {
                self.require_int(n, "iota length")?;
                self.require(start, PrimType::Int(*it), "iota start")?;
                self.require(stride, PrimType::Int(*it), "iota stride")?;
                one(Type::array(PrimType::Int(*it), vec![n.clone()]))
            }
            Exp::Replicate { shape, value } => {
                for d in shape {
                    self.require_int(d, "replicate shape")?;
                }
                let vt = self.subexp_ty(value)?;
                let elem = vt
                    .elem()
                    .ok_or_else(|| self.err("replicate of an accumulator".to_string()))?;
                let mut dims = shape.clone();
                dims.extend(vt.shape().iter().cloned());
                one(Type::array(elem, dims))
            }
            Exp::ArrayLit { elems, row } => {
                self.check_type(row)?;
                if row.elem().is_none() {
                    return Err(self.err("array literal of accumulators".to_string()));
                }
                for (k, x) in elems.iter().enumerate() {
                    let t = self.subexp_ty(x)?;
                    if !same_type(row, &t) {
                        return Err(self.err(format!(
                            "array literal element {k} ({x}) has type {t}, expected {row}"
                        )));
                    }
                }
                one(row.array_of(SubExp::i64(elems.len() as i64)))
            }
            Exp::Concat { dim, arrs, w } => {
                self.require_int(w, "concat size")?;
                let first = arrs
                    .first()
                    .ok_or_else(|| self.err("concat of no arrays".to_string()))?;
                let t0 = self.array_ty(first, "concat")?;
                if *dim >= t0.rank() {
                    return Err(self.err(format!(
                        "concat along dimension {dim} of {first} of rank {}",
                        t0.rank()
                    )));
                }
                for a in &arrs[1..] {
                    let t = self.array_ty(a, "concat")?;
                    let ok = t.elem() == t0.elem()
                        && t.rank() == t0.rank()
                        && t.shape()
                            .iter()
                            .zip(t0.shape())
                            .enumerate()
                            .all(|(k, (x, y))| k == *dim || dim_ok(&ExtDim::Free(x.clone()), y));
                    if !ok {
                        return Err(self.err(format!("concat of {first}: {t0} and {a}: {t}")));
                    }
                }
                let mut shape = t0.shape().to_vec();
                shape[*dim] = w.clone();
                one(Type::array(t0.elem().unwrap_or(PrimType::Bool), shape))
            }
            Exp::Copy(a) => {
                let t = self.lookup(a)?;
                if t.elem().is_none() {
                    return Err(self.err(format!("copy of the accumulator {a}")));
                }
                one(t)
            }
            Exp::Reshape(shape, a) => {
                let t = self.lookup(a)?;
                let elem = t
                    .elem()
                    .ok_or_else(|| self.err(format!("reshape of the accumulator {a}")))?;
                for d in shape {
                    self.require_int(d, "reshape shape")?;
                }
                one(Type::array(elem, shape.clone()))
            }
            Exp::Rearrange(perm, a) => {
                let t = self.array_ty(a, "rearrange")?;
                let mut sorted = perm.clone();
                sorted.sort_unstable();
                if sorted != (0..t.rank()).collect::<Vec<_>>() {
                    return Err(self.err(format!(
                        "{perm:?} is not a permutation of the {} dimensions of {a}",
                        t.rank()
                    )));
                }
                let shape = perm.iter().map(|&k| t.shape()[k].clone()).collect();
                one(Type::array(t.elem().unwrap_or(PrimType::Bool), shape))
            }
            Exp::SortByKey { keys, bits } => {
                let t = self.array_ty(keys, "sort_by_key")?;
                if t.rank() != 1 || t.elem() != Some(PrimType::I64) {
                    return Err(self.err(format!("sort_by_key of {keys}: {t}, not [n]i64")));
                }
                self.require(bits, PrimType::I64, "sort_by_key bits")?;
                Ok(vec![t.to_ext(), t.to_ext()])
            }
            Exp::Assert { cond, args, .. } => {
                self.require(cond, PrimType::Bool, "assertion")?;
                for a in args {
                    if !matches!(self.subexp_ty(a)?, Type::Prim(_)) {
                        return Err(
                            self.err("an assertion's message argument is not a scalar".into())
                        );
                    }
                }
                Ok(vec![])
            }
            Exp::Apply { fun, args, ret } => {
                let callee = self
                    .prog
                    .fun(fun)
                    .ok_or_else(|| self.err(format!("call of unknown function {fun}")))?;
                let ns = callee.size_params.len();
                if args.len() != ns + callee.params.len() {
                    return Err(self.err(format!(
                        "{fun} takes {} size arguments and {} arguments; given {} in all",
                        ns,
                        callee.params.len(),
                        args.len()
                    )));
                }
                for a in &args[..ns] {
                    self.require_int(a, &format!("size argument of {fun}"))?;
                }
                let sizes: HashMap<&VName, &SubExp> =
                    callee.size_params.iter().zip(&args[..ns]).collect();
                for (k, (p, a)) in callee.params.iter().zip(&args[ns..]).enumerate() {
                    let pt = match &p.ty {
                        TypeBase::Array { elem, shape } => Type::Array {
                            elem: *elem,
                            shape: shape
                                .iter()
                                .map(|d| match d {
                                    SubExp::Var(v) => {
                                        sizes.get(v).map(|s| (*s).clone()).unwrap_or(d.clone())
                                    }
                                    c => c.clone(),
                                })
                                .collect(),
                        },
                        t => t.clone(),
                    };
                    let at = self.subexp_ty(a)?;
                    if !same_type(&pt, &at) {
                        return Err(self.err(format!(
                            "argument {k} of {fun}: {a} has type {at}, expected {pt}"
                        )));
                    }
                }
                if ret.len() != callee.ret.len()
                    || ret
                        .iter()
                        .zip(&callee.ret)
                        .any(|(a, b)| a.elem() != b.elem() || a.rank() != b.rank())
                {
                    return Err(self.err(format!(
                        "call of {fun} returns {{{}}}, but {fun} returns {{{}}}",
                        ret.iter()
                            .map(|t| t.to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        callee
                            .ret
                            .iter()
                            .map(|t| t.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                for t in ret {
                    self.check_ext_type(t, ret.len())?;
                }
                Ok(ret.clone())
            }
            Exp::If {
                cond,
                then_b,
                else_b,
                ret,
            } => {
                self.require(cond, PrimType::Bool, "if condition")?;
                for t in ret {
                    self.check_ext_type(t, ret.len())?;
                }
                let tr = self.check_body(then_b)?;
                self.match_types(ret, &tr, "then branch")?;
                let er = self.check_body(else_b)?;
                self.match_types(ret, &er, "else branch")?;
                Ok(ret.clone())
            }
            Exp::Loop { params, form, body } => {
                for (k, (p, init)) in params.iter().enumerate() {
                    let it = self.subexp_ty(init)?;
                    if !same_type(&p.ty, &it) {
                        return Err(self.err(format!(
                            "loop parameter {k} ({}) initialised with {init} of type {it}",
                            p
                        )));
                    }
                }
                if let LoopForm::For { bound, .. } = form {
                    self.require_int(bound, "loop bound")?;
                }
                let m = self.mark();
                for (p, _) in params {
                    self.check_type(&p.ty)?;
                    self.bind(&p.name, p.ty.clone())?;
                }
                match form {
                    LoopForm::For { i, it, .. } => self.bind(i, Type::Prim(PrimType::Int(*it)))?,
                    LoopForm::While(c) => match params.iter().find(|(p, _)| &p.name == c) {
                        Some((p, _)) if p.ty == Type::Prim(PrimType::Bool) => {}
                        _ => {
                            return Err(self.err(format!(
                                "while loop condition {c} is not a bool loop parameter"
                            )))
                        }
                    },
                }
                let res = self.check_body(body)?;
                let pts: Vec<ExtType> = params.iter().map(|(p, _)| p.ty.to_ext()).collect();
                self.match_types(&pts, &res, "loop body result")?;
                self.restore(m);
                Ok(loop_result_types(params))
            }
            Exp::Soac(s) => self.check_soac(s),
            Exp::WithAcc { inputs, lam } => {
                let mut out = self.check_acc_inputs(inputs, &lam.params, &lam.ret)?;
                self.check_lambda(lam)?;
                out.extend(lam.ret[inputs.len()..].iter().map(|t| t.to_ext()));
                Ok(out)
            }
            Exp::Jvp { lam, args, seeds } | Exp::Vjp { lam, args, seeds } => {
                let fwd = matches!(e, Exp::Jvp { .. });
                let what = if fwd { "jvp" } else { "vjp" };
                let ps: Vec<Type> = lam.params.iter().map(|p| p.ty.clone()).collect();
                let arg_tys = args
                    .iter()
                    .map(|a| self.subexp_ty(a).map(|t| t.to_ext()))
                    .collect::<R<Vec<_>>>()?;
                self.match_types(&arg_tys, &ps, &format!("{what} arguments"))?;
                // Seeds: tangents of the params (jvp) or adjoints of the results (vjp).
                let seed_tys = seeds
                    .iter()
                    .map(|a| self.subexp_ty(a).map(|t| t.to_ext()))
                    .collect::<R<Vec<_>>>()?;
                let want: &[Type] = if fwd { &ps } else { &lam.ret };
                self.match_types(&seed_tys, want, &format!("{what} seeds"))?;
                self.check_lambda(lam)?;
                let mut out: Vec<ExtType> = lam.ret.iter().map(|t| t.to_ext()).collect();
                out.extend(want_out(fwd, lam).iter().map(|t| t.to_ext()));
                Ok(out)
            }
            Exp::WithVjp {
                primal,
                adjoint,
                args,
            } => {
                let ps: Vec<Type> = primal.params.iter().map(|p| p.ty.clone()).collect();
                let arg_tys = args
                    .iter()
                    .map(|a| self.subexp_ty(a).map(|t| t.to_ext()))
                    .collect::<R<Vec<_>>>()?;
                self.match_types(&arg_tys, &ps, "with_vjp arguments")?;
                let mut adj_in: Vec<ExtType> = primal.ret.iter().map(|t| t.to_ext()).collect();
                adj_in.extend(primal.ret.iter().map(|t| t.to_ext()));
                let adj_ps: Vec<Type> = adjoint.params.iter().map(|p| p.ty.clone()).collect();
                self.match_types(&adj_in, &adj_ps, "with_vjp adjoint parameters")?;
                let adj_out: Vec<ExtType> = adjoint.ret.iter().map(|t| t.to_ext()).collect();
                self.match_types(&adj_out, &ps, "with_vjp adjoint results")?;
                self.check_lambda(primal)?;
                self.check_lambda(adjoint)?;
                Ok(primal.ret.iter().map(|t| t.to_ext()).collect())
            }
            Exp::UpdAcc { acc, idx, vals } => {
                let t = self.lookup(acc)?;
                let TypeBase::Acc { shape, elems, .. } = &t else {
                    return Err(
                        self.err(format!("upd_acc of {acc} of type {t}, not an accumulator"))
                    );
                };
                if idx.len() != shape.len() {
                    return Err(self.err(format!(
                        "upd_acc with {} indices into an accumulator of rank {}",
                        idx.len(),
                        shape.len()
                    )));
                }
                for i in idx {
                    self.require_int(i, "upd_acc index")?;
                }
                let vts = vals
                    .iter()
                    .map(|v| self.subexp_ty(v))
                    .collect::<R<Vec<_>>>()?;
                let ets: Vec<ExtType> = elems.iter().map(|t| t.to_ext()).collect();
                self.match_types(&ets, &vts, "upd_acc values")?;
                one(t)
            }
        }
    }

    /// Checks the inputs of a `with_acc` against the accumulator params and the first results of
    /// its function (`params`, `ret`); returns the types of the input arrays (the first results
    /// of the `with_acc`).
    pub(crate) fn check_acc_inputs(
        &mut self,
        inputs: &[AccInput],
        params: &[Param],
        ret: &[Type],
    ) -> R<Vec<ExtType>> {
        let mut out = Vec::new();
        if params.len() != inputs.len() || ret.len() < inputs.len() {
            return Err(self.err(format!(
                "with_acc of {} inputs needs a lambda of {} accumulator params returning them first; it has {} params and {} results",
                inputs.len(),
                inputs.len(),
                params.len(),
                ret.len()
            )));
        }
        for (k, inp) in inputs.iter().enumerate() {
            for d in &inp.shape {
                self.require_int(d, "with_acc shape")?;
            }
            let mut rows = Vec::new();
            for a in &inp.arrs {
                let t = self.array_ty(a, "with_acc input")?;
                if t.rank() < inp.shape.len()
                    || !inp
                        .shape
                        .iter()
                        .zip(t.shape())
                        .all(|(x, y)| dim_ok(&ExtDim::Free(x.clone()), y))
                {
                    return Err(self.err(format!(
                        "with_acc input {a}: {t} does not have the shape {:?}",
                        inp.shape
                    )));
                }
                rows.push(Type::array(
                    t.elem().unwrap_or(PrimType::Bool),
                    t.shape()[inp.shape.len()..].to_vec(),
                ));
                out.push(t.to_ext());
            }
            if let Some(op) = &inp.op {
                self.check_operator(op, &rows, "with_acc")?;
            }
            let acc = Type::Acc {
                cert: params[k].name.clone(),
                shape: inp.shape.clone(),
                elems: rows,
            };
            let pt = &params[k].ty;
            if !same_type(&acc, pt) {
                return Err(self.err(format!(
                    "with_acc lambda param {k} has type {pt}, expected {acc}"
                )));
            }
            if !same_type(&acc, &ret[k]) {
                return Err(self.err(format!(
                    "with_acc lambda result {k} has type {}, expected {acc}",
                    ret[k]
                )));
            }
        }
        Ok(out)
    }

    fn check_soac(&mut self, s: &Soac) -> R<Vec<ExtType>> {
        match s {
            Soac::Map { w, arrs, lam } => {
                // An accumulator input is passed to every iteration as it is (and returned
                // updated): its "row" and its result are the accumulator itself.
                let mut rows = Vec::new();
                for a in arrs {
                    match self.lookup(a)? {
                        t @ TypeBase::Acc { .. } => rows.push(t),
                        _ => rows.extend(self.soac_rows(w, std::slice::from_ref(a), "map")?),
                    }
                }
                let ps: Vec<Type> = lam.params.iter().map(|p| p.ty.clone()).collect();
                let ext: Vec<ExtType> = rows.iter().map(|t| t.to_ext()).collect();
                self.match_types(&ext, &ps, "map lambda params")?;
                self.check_lambda(lam)?;
                Ok(lam
                    .ret
                    .iter()
                    .map(|t| match t {
                        TypeBase::Acc { .. } => t.to_ext(),
                        _ => t.array_of(w.clone()).to_ext(),
                    })
                    .collect())
            }
            Soac::Reduce { w, arrs, op } => {
                let rows = self.soac_rows(w, arrs, "reduce")?;
                self.check_operator(op, &rows, "reduce")?;
                Ok(rows.iter().map(|t| t.to_ext()).collect())
            }
            Soac::Scan { w, arrs, op } => {
                let rows = self.soac_rows(w, arrs, "scan")?;
                self.check_operator(op, &rows, "scan")?;
                Ok(rows
                    .iter()
                    .map(|t| t.array_of(w.clone()).to_ext())
                    .collect())
            }
            Soac::Hist {
                w,
                dest,
                op,
                inds,
                vals,
            } => {
                if dest.len() != vals.len() {
                    return Err(self.err(format!(
                        "hist with {} destinations and {} value arrays",
                        dest.len(),
                        vals.len()
                    )));
                }
                let irow = self.soac_rows(w, std::slice::from_ref(inds), "hist indices")?;
                if !matches!(irow[0], Type::Prim(PrimType::Int(_))) {
                    return Err(self.err(format!("hist indices {inds} are not integers")));
                }
                let vrows = self.soac_rows(w, vals, "hist values")?;
                let mut out = Vec::new();
                let mut rows = Vec::new();
                for (d, v) in dest.iter().zip(&vrows) {
                    let t = self.array_ty(d, "hist destination")?;
                    if !same_type(&t.row(), v) {
                        return Err(
                            self.err(format!("hist destination {d}: {t} with values of type {v}"))
                        );
                    }
                    rows.push(t.row());
                    out.push(t.to_ext());
                }
                self.check_operator(op, &rows, "hist")?;
                Ok(out)
            }
            Soac::Scatter {
                w,
                dest,
                inds,
                vals,
            } => {
                if dest.len() != vals.len() || inds.is_empty() {
                    return Err(self.err(format!(
                        "scatter with {} destinations, {} value arrays and {} index arrays",
                        dest.len(),
                        vals.len(),
                        inds.len()
                    )));
                }
                for r in self.soac_rows(w, inds, "scatter indices")? {
                    if !matches!(r, Type::Prim(PrimType::Int(_))) {
                        return Err(self.err("scatter indices are not integers".to_string()));
                    }
                }
                let vrows = self.soac_rows(w, vals, "scatter values")?;
                let mut out = Vec::new();
                for (d, v) in dest.iter().zip(&vrows) {
                    let t = self.array_ty(d, "scatter destination")?;
                    if t.rank() < inds.len() {
                        return Err(self.err(format!(
                            "scatter into {d} of rank {} with {} indices",
                            t.rank(),
                            inds.len()
                        )));
                    }
                    let elt = Type::array(
                        t.elem().unwrap_or(PrimType::Bool),
                        t.shape()[inds.len()..].to_vec(),
                    );
                    if !same_type(&elt, v) {
                        return Err(
                            self.err(format!("scatter into {d}: {t} of values of type {v}"))
                        );
                    }
                    out.push(t.to_ext());
                }
                Ok(out)
            }
        }
    }
}

#[cfg(test)]
mod tests;

/// The result types of a loop: the params' types, where a dimension naming a loop param becomes
/// existential (the param's position).
pub(crate) fn loop_result_types(params: &[(Param, SubExp)]) -> Vec<ExtType> {
    let names: Vec<&VName> = params.iter().map(|(p, _)| &p.name).collect();
    let ext_dim = |d: &SubExp| match d.as_var().and_then(|v| names.iter().position(|n| *n == v)) {
        Some(j) => ExtDim::Ext(j),
        None => ExtDim::Free(d.clone()),
    };
    params
        .iter()
        .map(|(p, _)| match &p.ty {
            TypeBase::Array { elem, shape } => ExtType::Array {
                elem: *elem,
                shape: shape.iter().map(ext_dim).collect(),
            },
            t => t.to_ext(),
        })
        .collect()
}

/// The derivative results of a `Jvp` (one tangent per result) or `Vjp` (one adjoint per param).
fn want_out(fwd: bool, lam: &Lambda) -> Vec<Type> {
    if fwd {
        lam.ret.clone()
    } else {
        lam.params.iter().map(|p| p.ty.clone()).collect()
    }
}
