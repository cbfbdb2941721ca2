//! The kernel IR checker: verifies the invariants documented in [`crate::seg`].
//!
//! [`check_program`] checks that
//! - **names**: every variable is bound exactly once in the whole program (host code, thread
//!   bodies and lambdas share one set of ids, which stay within the program's name source), and
//!   is used only in the scope of its binding; the thread indices of a segmented operation are in
//!   scope in its thread body only;
//! - **host code** has no data parallelism: a [`HostExp::Plain`] is never a SOAC, nor the SOAC
//!   IR's `if`, `loop`, `with_acc`, `jvp` or `vjp`. A plain expression is typed as the SOAC IR
//!   checker ([`crate::ir::check`]) types it; `if`, `loop` and `with_acc` are checked as there,
//!   with host bodies; a threshold takes an `i64` size and gives one `bool`; the condition of
//!   an `if versions` (the two versions of a map nest) is a `bool` bound by a nest threshold
//!   (`threshold`, `contended_threshold`, `seg_threads_threshold` or `small_nest_threshold`), or
//!   by the `||` of two such `bool`s;
//! - **segmented operations**: the space has at least one dimension and its sizes are `i64`;
//!   the thread indices are bound as `i64`; the thread body is checked as SOAC IR statements
//!   (SOACs are allowed there: they run sequentially in the thread); the body has one result per
//!   entry of `ret`, each of that type (a write: the value written); the leading results (as
//!   many as [`SegKind::num_op_results`]) are returned values, on which the operators are checked
//!   (`segred`, `segscan`: an operator of `2k` params over the next `k` entries of `ret`;
//!   `seghist`: an integer bin index, then one value per destination, each destination an array
//!   `[d_1]…[d_{n-1}][width]v` for the value type `v`); a write's destination is an array in the
//!   scope outside the kernel, indexed by one to its rank `i64` indices, whose rows at that depth
//!   have the value's type. The statement's pattern has the types the operation gives (see
//!   [`crate::seg`]): `[d_1]…[d_{n-1}]t` for a reduction, `[d_1]…[d_n]t` for a scan or a map
//!   output, the destinations' types for a histogram or a write, and the accumulator itself for
//!   an accumulator returned by every thread.
//!
//! Operators are checked in the scope outside the kernel (they do not see the thread indices),
//! as are the types in `ret` and the destinations of histograms and writes.
//!
//! Types are compared as [`crate::ir::check`] compares them: element types, ranks and numbers of
//! values strictly, a dimension only when both sides are constants. Consumption is not checked.
//!
//! The first violation found is returned, as a [`SegError`]: the function, the pattern of the
//! innermost host statement, and what is wrong ([`SegErrorKind`]). An error found by the SOAC IR
//! checker (in a plain host expression, a thread body, an operator or the inputs of a
//! `with_acc`) is wrapped whole in [`SegErrorKind::Ir`].

use super::*;
use crate::ir::check::{loop_result_types, same_type, type_matches, Checker, IrError};
use crate::ir::{BinOp, Exp, ExtDim, TypeBase};
use crate::passes::traverse::uses_in_exp;
use crate::prim::{IntType, PrimType};
use std::collections::HashSet;
use std::fmt;

/// A violated kernel IR invariant, where it was found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("kernel IR error{}: {kind}{}", in_fun(.fun), in_stm(.stm))]
pub struct SegError {
    /// The function it was found in (`None` for a property of the whole program).
    pub fun: Option<Arc<str>>,
    /// The pattern of the innermost host statement being checked.
    pub stm: Option<Pat>,
    /// Boxed to keep results small.
    pub kind: Box<SegErrorKind>,
}

fn in_fun(fun: &Option<Arc<str>>) -> String {
    fun.as_ref()
        .map(|f| format!(" in function {f}"))
        .unwrap_or_default()
}

fn in_stm(stm: &Option<Pat>) -> String {
    stm.as_ref()
        .map(|p| format!("\n  in host statement: let {p}"))
        .unwrap_or_default()
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SegErrorKind {
    #[error("{name} is not in scope")]
    Unbound { name: VName },
    #[error("{name} is bound more than once (id {} is not unique)", .name.id)]
    BoundTwice { name: VName },
    #[error("function {name} is defined twice")]
    FunctionTwice { name: Arc<str> },
    #[error("a variable has id {id}, beyond the name source ({next})")]
    BeyondNameSource { id: u32, next: u32 },
    #[error("host code iterates over an array: `{soac}` belongs in a segmented operation")]
    SoacInHost { soac: &'static str },
    #[error(
        "the SOAC IR's `{exp}` in host code (host code has its own `if`, `loop` and \
         `with_acc`, and no `jvp` or `vjp`: AD runs before flattening)"
    )]
    NotHostExp { exp: &'static str },
    #[error("{site}: {value} has type {found}, expected {expected}")]
    Operand {
        site: Site,
        value: SubExp,
        expected: Expected,
        found: Type,
    },
    #[error("{site}: type {found}, expected an integer")]
    NotIntegerType { site: Site, found: Type },
    #[error("{site}: {found} values, expected {expected}")]
    Count {
        site: Site,
        expected: usize,
        found: usize,
    },
    #[error("{site}: value {index} has type {found}, expected {expected}")]
    Type {
        site: Site,
        index: usize,
        expected: ExtType,
        found: Type,
    },
    #[error("{site}: {name} has type {found}, expected an array")]
    NotArray {
        site: Site,
        name: VName,
        found: Type,
    },
    #[error("existential size ?{index} out of range ({count} results)")]
    ExtOutOfRange { index: usize, count: usize },
    #[error("while loop condition {cond} is not a bool loop parameter")]
    WhileCondition { cond: VName },
    #[error(
        "the condition {cond} of an `if versions` is not bound by a nest or seg_threads threshold"
    )]
    VersionsCondition { cond: SubExp },
    #[error("a segmented operation with no dimension")]
    EmptySpace,
    #[error("write into {dest} of rank {rank} with {indices} indices")]
    WriteRank {
        dest: VName,
        rank: usize,
        indices: usize,
    },
    #[error("result {index} is an operand of the operators: it must be returned, not written")]
    OperandWritten { index: usize },
    #[error("{part}: {}{}", .error.message, in_ir_stm(.error))]
    Ir { part: IrPart, error: IrError },
}

fn in_ir_stm(e: &IrError) -> String {
    e.stm
        .as_ref()
        .map(|s| format!("\n  in SOAC IR statement: {s}"))
        .unwrap_or_default()
}

/// Where a type or a count was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// A function's results against its return types.
    FunResult,
    /// A statement's pattern against the types of its expression.
    Pattern,
    /// A dimension of a type.
    Dimension,
    IfCondition,
    ThenBranch,
    ElseBranch,
    LoopInit,
    LoopBound,
    LoopResult,
    /// The results of a `with_acc`'s function against its return types.
    WithAccResult,
    ThresholdSize,
    /// A size of a segmented operation's space.
    SpaceSize,
    /// A thread body's results against the operation's `ret`.
    KernelResults,
    /// The leading entries of `ret` that the operators take.
    OperatorOperands,
    HistIndex,
    HistWidth,
    HistDest,
    WriteDest,
    WriteIndex,
    /// The value of a write against the rows of its destination.
    WriteValue,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Site::*;
        f.write_str(match self {
            FunResult => "function result",
            Pattern => "pattern",
            Dimension => "array dimension",
            IfCondition => "if condition",
            ThenBranch => "then branch",
            ElseBranch => "else branch",
            LoopInit => "loop initial value",
            LoopBound => "loop bound",
            LoopResult => "loop body result",
            WithAccResult => "with_acc function result",
            ThresholdSize => "threshold size",
            SpaceSize => "size of the space",
            KernelResults => "thread result",
            OperatorOperands => "operands of the operators",
            HistIndex => "histogram bin index",
            HistWidth => "histogram width",
            HistDest => "histogram destination",
            WriteDest => "write destination",
            WriteIndex => "write index",
            WriteValue => "written value",
        })
    }
}

/// The type an operand should have had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    Prim(PrimType),
    Integer,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Prim(t) => write!(f, "{t}"),
            Expected::Integer => f.write_str("an integer"),
        }
    }
}

/// The part of the kernel IR that the SOAC IR checker found an error in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrPart {
    /// A [`HostExp::Plain`].
    HostExp,
    /// The body of a segmented operation.
    ThreadBody,
    /// Operator (or histogram) number `k` of a segmented operation.
    Operator(usize),
    /// The inputs of a host `with_acc`.
    AccInputs,
}

impl fmt::Display for IrPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IrPart::HostExp => f.write_str("host expression"),
            IrPart::ThreadBody => f.write_str("thread body"),
            IrPart::Operator(k) => write!(f, "operator {k}"),
            IrPart::AccInputs => f.write_str("with_acc inputs"),
        }
    }
}

type R<T> = Result<T, SegError>;

/// Check every invariant listed in the module doc; the first violation is returned.
pub fn check_program(p: &Program) -> Result<(), SegError> {
    let sigs = signatures(p);
    let mut c = SegChecker {
        ir: Checker::new(&sigs),
        fun: None,
        nest_conds: HashSet::new(),
    };
    let mut names = HashSet::new();
    for f in &p.funs {
        c.fun = Some(f.name.clone());
        c.ir.set_fun(&f.name);
        if !names.insert(f.name.clone()) {
            return Err(c.err(SegErrorKind::FunctionTwice {
                name: f.name.clone(),
            }));
        }
        c.check_fun(f)?;
    }
    c.fun = None;
    let next = p.name_source.next;
    match c.ir.max_id() {
        Some(id) if id > next => Err(c.err(SegErrorKind::BeyondNameSource { id, next })),
        _ => Ok(()),
    }
}

/// The program's functions without their bodies: what the SOAC IR checker needs to check calls.
fn signatures(p: &Program) -> ir::Program {
    let sig = |f: &FunDef| ir::FunDef {
        name: f.name.clone(),
        entry: f.entry.clone(),
        size_params: f.size_params.clone(),
        params: f.params.clone(),
        ret: f.ret.clone(),
        body: ir::Body {
            stms: vec![],
            result: vec![],
        },
        attrs: f.attrs.clone(),
    };
    ir::Program {
        funs: p.funs.iter().map(sig).collect(),
        name_source: p.name_source.clone(),
    }
}

/// Why `e` cannot be a plain host expression, if it cannot.
fn not_host_code(e: &ir::Exp) -> Option<SegErrorKind> {
    let exp = match e {
        ir::Exp::Soac(s) => {
            let soac = match s {
                ir::Soac::Map { .. } => "map",
                ir::Soac::Reduce { .. } => "reduce",
                ir::Soac::Scan { .. } => "scan",
                ir::Soac::Hist { .. } => "hist",
                ir::Soac::Scatter { .. } => "scatter",
            };
            return Some(SegErrorKind::SoacInHost { soac });
        }
        ir::Exp::If { .. } => "if",
        ir::Exp::Loop { .. } => "loop",
        ir::Exp::WithAcc { .. } => "with_acc",
        ir::Exp::Jvp { .. } => "jvp",
        ir::Exp::Vjp { .. } => "vjp",
        _ => return None,
    };
    Some(SegErrorKind::NotHostExp { exp })
}

/// `[d_1]…[d_k]t`; an accumulator stays itself (every thread updates the same one).
fn array_of_dims(dims: &[SubExp], t: &Type) -> Type {
    match t.elem() {
        None => t.clone(),
        Some(elem) => Type::array(elem, dims.iter().chain(t.shape()).cloned().collect()),
    }
}

/// `t` without its `k` outermost dimensions.
fn drop_dims(t: &Type, k: usize) -> Type {
    match t {
        TypeBase::Array { elem, shape } => Type::array(*elem, shape[k..].to_vec()),
        t => t.clone(),
    }
}

/// The check's state: the SOAC IR checker holds the scope and the ids bound so far, so that
/// both checkers see the same names.
struct SegChecker<'p> {
    ir: Checker<'p>,
    fun: Option<Arc<str>>,
    /// The ids of the `bool`s bound by nest thresholds (`threshold`, `contended_threshold`,
    /// `seg_threads_threshold`, `small_nest_threshold`) or by the `||` of two of them: the only
    /// conditions of `if versions`.
    nest_conds: HashSet<u32>,
}

impl SegChecker<'_> {
    fn err(&self, kind: SegErrorKind) -> SegError {
        SegError {
            fun: self.fun.clone(),
            stm: None,
            kind: Box::new(kind),
        }
    }

    fn ir_err(&self, part: IrPart, error: IrError) -> SegError {
        self.err(SegErrorKind::Ir { part, error })
    }

    // --- Scope and types -----------------------------------------------------------------

    fn bind(&mut self, v: &VName, t: Type) -> R<()> {
        // The SOAC IR checker refuses a binding only when the id was bound before.
        self.ir
            .bind(v, t)
            .map_err(|_| self.err(SegErrorKind::BoundTwice { name: v.clone() }))
    }

    fn bind_param(&mut self, p: &Param) -> R<()> {
        self.check_type(&p.ty)?;
        self.bind(&p.name, p.ty.clone())
    }

    fn lookup(&self, v: &VName) -> R<Type> {
        self.ir
            .type_of(v)
            .cloned()
            .ok_or_else(|| self.err(SegErrorKind::Unbound { name: v.clone() }))
    }

    fn subexp_ty(&self, s: &SubExp) -> R<Type> {
        match s {
            SubExp::Const(c) => Ok(Type::Prim(c.prim_type())),
            SubExp::Var(v) => self.lookup(v),
        }
    }

    fn operand_err(&self, site: Site, value: &SubExp, expected: Expected, found: Type) -> SegError {
        self.err(SegErrorKind::Operand {
            site,
            value: value.clone(),
            expected,
            found,
        })
    }

    fn require(&self, s: &SubExp, t: PrimType, site: Site) -> R<()> {
        match self.subexp_ty(s)? {
            Type::Prim(st) if st == t => Ok(()),
            found => Err(self.operand_err(site, s, Expected::Prim(t), found)),
        }
    }

    fn require_int(&self, s: &SubExp, site: Site) -> R<()> {
        match self.subexp_ty(s)? {
            Type::Prim(PrimType::Int(_)) => Ok(()),
            found => Err(self.operand_err(site, s, Expected::Integer, found)),
        }
    }

    fn check_type(&self, t: &Type) -> R<()> {
        self.check_ext_type(&t.to_ext(), 0)
    }

    /// Dimensions are integers in scope, or existential among `count` results.
    fn check_ext_type(&self, t: &ExtType, count: usize) -> R<()> {
        match t {
            TypeBase::Prim(_) => Ok(()),
            TypeBase::Array { shape, .. } => shape.iter().try_for_each(|d| match d {
                ExtDim::Free(d) => self.require_int(d, Site::Dimension),
                ExtDim::Ext(index) if *index < count => Ok(()),
                ExtDim::Ext(index) => Err(self.err(SegErrorKind::ExtOutOfRange {
                    index: *index,
                    count,
                })),
            }),
            TypeBase::Acc { shape, elems, .. } => {
                shape
                    .iter()
                    .try_for_each(|d| self.require_int(d, Site::Dimension))?;
                elems.iter().try_for_each(|t| self.check_type(t))
            }
        }
    }

    fn array_ty(&self, v: &VName, site: Site) -> R<Type> {
        let t = self.lookup(v)?;
        if t.rank() == 0 {
            return Err(self.err(SegErrorKind::NotArray {
                site,
                name: v.clone(),
                found: t,
            }));
        }
        Ok(t)
    }

    /// Checks `actual` against `expected`, in number and one by one.
    fn match_types(&self, expected: &[ExtType], actual: &[Type], site: Site) -> R<()> {
        if expected.len() != actual.len() {
            return Err(self.err(SegErrorKind::Count {
                site,
                expected: expected.len(),
                found: actual.len(),
            }));
        }
        match expected
            .iter()
            .zip(actual)
            .position(|(e, a)| !type_matches(e, a))
        {
            None => Ok(()),
            Some(index) => Err(self.err(SegErrorKind::Type {
                site,
                index,
                expected: expected[index].clone(),
                found: actual[index].clone(),
            })),
        }
    }

    // --- Host code -----------------------------------------------------------------------

    fn check_fun(&mut self, f: &FunDef) -> R<()> {
        let m = self.ir.mark();
        for s in &f.size_params {
            self.bind(s, Type::Prim(PrimType::I64))?;
        }
        for p in &f.params {
            self.bind_param(p)?;
        }
        for t in &f.ret {
            self.check_ext_type(t, f.ret.len())?;
        }
        let res = self.check_host_body(&f.body)?;
        self.match_types(&f.ret, &res, Site::FunResult)?;
        self.ir.restore(m);
        Ok(())
    }

    /// Checks a body in its own scope; returns the types of its results.
    fn check_host_body(&mut self, b: &HostBody) -> R<Vec<Type>> {
        let m = self.ir.mark();
        for s in &b.stms {
            self.check_host_stm(s).map_err(|mut e| {
                e.stm.get_or_insert_with(|| s.pat.clone());
                e
            })?;
        }
        let res = b
            .result
            .iter()
            .map(|r| self.subexp_ty(r))
            .collect::<R<Vec<_>>>()?;
        self.ir.restore(m);
        Ok(res)
    }

    fn check_host_stm(&mut self, s: &HostStm) -> R<()> {
        let is_cond =
            |c: &SubExp, conds: &HashSet<u32>| matches!(c, SubExp::Var(v) if conds.contains(&v.id));
        let nest_cond = match &s.exp {
            HostExp::Threshold { kind, .. } => matches!(
                kind,
                ThresholdKind::Nest
                    | ThresholdKind::ContendedNest
                    | ThresholdKind::SegThreads
                    | ThresholdKind::SmallNest
            ),
            HostExp::Plain(Exp::BinOp(BinOp::LogOr, a, b)) => {
                is_cond(a, &self.nest_conds) && is_cond(b, &self.nest_conds)
            }
            _ => false,
        };
        if nest_cond {
            self.nest_conds
                .extend(s.pat.elems.iter().map(|p| p.name.id));
        }
        let rets = self.check_host_exp(&s.exp)?;
        let pts: Vec<Type> = s.pat.elems.iter().map(|p| p.ty.clone()).collect();
        self.match_types(&rets, &pts, Site::Pattern)?;
        s.pat.elems.iter().try_for_each(|p| self.bind_param(p))
    }

    fn check_host_exp(&mut self, e: &HostExp) -> R<Vec<ExtType>> {
        match e {
            HostExp::Plain(e) => self.check_plain(e),
            HostExp::If {
                cond,
                then_b,
                else_b,
                ret,
                nest_versions,
            } => {
                let by_threshold =
                    matches!(cond, SubExp::Var(c) if self.nest_conds.contains(&c.id));
                if *nest_versions && !by_threshold {
                    return Err(self.err(SegErrorKind::VersionsCondition { cond: cond.clone() }));
                }
                self.check_if(cond, then_b, else_b, ret)
            }
            HostExp::VersionedLoop {
                par_cond,
                par,
                seq,
                chunk,
                ret,
            } => {
                let m = self.ir.mark();
                if let Some(c) = chunk {
                    self.require(&c.bound, PrimType::Int(IntType::I64), Site::LoopBound)?;
                    if c.param.ty != Type::Prim(PrimType::Int(IntType::I64)) {
                        return Err(self.err(SegErrorKind::Type {
                            site: Site::LoopBound,
                            index: 0,
                            expected: ExtType::Prim(PrimType::Int(IntType::I64)),
                            found: c.param.ty.clone(),
                        }));
                    }
                    // Bound for both versions: `par` does not read it.
                    self.bind_param(&c.param)?;
                }
                let r = self.check_if(par_cond, par, seq, ret);
                self.ir.restore(m);
                r
            }
            HostExp::Loop { params, form, body } => self.check_loop(params, form, body),
            HostExp::WithAcc { inputs, lam } => self.check_with_acc(inputs, lam),
            HostExp::Threshold { size, .. } => {
                self.require(size, PrimType::I64, Site::ThresholdSize)?;
                Ok(vec![ExtType::Prim(PrimType::Bool)])
            }
            HostExp::Seg(op) => Ok(self.check_seg(op)?.iter().map(Type::to_ext).collect()),
        }
    }

    fn check_plain(&mut self, e: &ir::Exp) -> R<Vec<ExtType>> {
        if let Some(kind) = not_host_code(e) {
            return Err(self.err(kind));
        }
        // A plain expression binds nothing, so every name it uses must be in scope.
        let mut uses: Vec<VName> = uses_in_exp(e).into_iter().collect();
        uses.sort();
        for v in &uses {
            self.lookup(v)?;
        }
        self.ir
            .check_exp(e)
            .map_err(|error| self.ir_err(IrPart::HostExp, error))
    }

    fn check_if(
        &mut self,
        cond: &SubExp,
        then_b: &HostBody,
        else_b: &HostBody,
        ret: &[ExtType],
    ) -> R<Vec<ExtType>> {
        self.require(cond, PrimType::Bool, Site::IfCondition)?;
        for t in ret {
            self.check_ext_type(t, ret.len())?;
        }
        let tr = self.check_host_body(then_b)?;
        self.match_types(ret, &tr, Site::ThenBranch)?;
        let er = self.check_host_body(else_b)?;
        self.match_types(ret, &er, Site::ElseBranch)?;
        Ok(ret.to_vec())
    }

    fn check_loop(
        &mut self,
        params: &[(Param, SubExp)],
        form: &LoopForm,
        body: &HostBody,
    ) -> R<Vec<ExtType>> {
        for (index, (p, init)) in params.iter().enumerate() {
            let found = self.subexp_ty(init)?;
            if !same_type(&p.ty, &found) {
                return Err(self.err(SegErrorKind::Type {
                    site: Site::LoopInit,
                    index,
                    expected: p.ty.to_ext(),
                    found,
                }));
            }
        }
        if let LoopForm::For { bound, .. } = form {
            self.require_int(bound, Site::LoopBound)?;
        }
        let m = self.ir.mark();
        for (p, _) in params {
            self.bind_param(p)?;
        }
        match form {
            LoopForm::For { i, it, .. } => self.bind(i, Type::Prim(PrimType::Int(*it)))?,
            LoopForm::While(cond) => {
                let is_cond = |(p, _): &(Param, SubExp)| {
                    &p.name == cond && p.ty == Type::Prim(PrimType::Bool)
                };
                if !params.iter().any(is_cond) {
                    return Err(self.err(SegErrorKind::WhileCondition { cond: cond.clone() }));
                }
            }
        }
        let res = self.check_host_body(body)?;
        let pts: Vec<ExtType> = params.iter().map(|(p, _)| p.ty.to_ext()).collect();
        self.match_types(&pts, &res, Site::LoopResult)?;
        self.ir.restore(m);
        Ok(loop_result_types(params))
    }

    fn check_with_acc(&mut self, inputs: &[AccInput], lam: &HostLambda) -> R<Vec<ExtType>> {
        let mut out = self
            .ir
            .check_acc_inputs(inputs, &lam.params, &lam.ret)
            .map_err(|error| self.ir_err(IrPart::AccInputs, error))?;
        let m = self.ir.mark();
        for p in &lam.params {
            self.bind_param(p)?;
        }
        for t in &lam.ret {
            self.check_type(t)?;
        }
        let res = self.check_host_body(&lam.body)?;
        let ret: Vec<ExtType> = lam.ret.iter().map(Type::to_ext).collect();
        self.match_types(&ret, &res, Site::WithAccResult)?;
        self.ir.restore(m);
        out.extend(ret[inputs.len()..].iter().cloned());
        Ok(out)
    }

    // --- Segmented operations ------------------------------------------------------------

    /// Checks a segmented operation; returns the types it gives.
    fn check_seg(&mut self, op: &SegOp) -> R<Vec<Type>> {
        if op.space.dims.is_empty() {
            return Err(self.err(SegErrorKind::EmptySpace));
        }
        for d in op.space.sizes() {
            self.require(d, PrimType::I64, Site::SpaceSize)?;
        }
        for t in &op.ret {
            self.check_type(t)?;
        }
        let num_ops = op.kind.num_op_results();
        if num_ops > op.ret.len() {
            return Err(self.err(SegErrorKind::Count {
                site: Site::OperatorOperands,
                expected: num_ops,
                found: op.ret.len(),
            }));
        }
        let mut out = self.check_operators(op)?;
        self.check_thread(op)?;
        out.extend(self.map_output_types(op)?);
        Ok(out)
    }

    /// Checks the operators on the leading entries of `ret`; returns the types they give.
    fn check_operators(&mut self, op: &SegOp) -> R<Vec<Type>> {
        let dims: Vec<SubExp> = op.space.sizes().cloned().collect();
        let segments = &dims[..dims.len() - 1];
        match &op.kind {
            SegKind::Map => Ok(vec![]),
            SegKind::Red(ops) => {
                let ts = self.check_red_scan_ops(ops, &op.ret, "segred")?;
                Ok(ts.iter().map(|t| array_of_dims(segments, t)).collect())
            }
            SegKind::Scan(ops) => {
                let ts = self.check_red_scan_ops(ops, &op.ret, "segscan")?;
                Ok(ts.iter().map(|t| array_of_dims(&dims, t)).collect())
            }
            SegKind::Hist(hists) => self.check_hists(hists, segments, &op.ret),
        }
    }

    /// Checks each operator on the next entries of `ret`; returns the entries they take.
    fn check_red_scan_ops(&mut self, ops: &[Operator], ret: &[Type], what: &str) -> R<Vec<Type>> {
        let mut off = 0;
        for (k, o) in ops.iter().enumerate() {
            let rows = &ret[off..off + o.neutral.len()];
            self.ir
                .check_operator(o, rows, what)
                .map_err(|error| self.ir_err(IrPart::Operator(k), error))?;
            off += rows.len();
        }
        Ok(ret[..off].to_vec())
    }

    /// Checks each histogram on its entries of `ret` (a bin index, then one value per
    /// destination); returns the destinations' types.
    fn check_hists(&mut self, hists: &[HistOp], segments: &[SubExp], ret: &[Type]) -> R<Vec<Type>> {
        let mut out = Vec::new();
        let mut off = 0;
        for (k, h) in hists.iter().enumerate() {
            if !matches!(ret[off], Type::Prim(PrimType::Int(_))) {
                return Err(self.err(SegErrorKind::NotIntegerType {
                    site: Site::HistIndex,
                    found: ret[off].clone(),
                }));
            }
            self.require_int(&h.width, Site::HistWidth)?;
            let vals = &ret[off + 1..off + 1 + h.dest.len()];
            let mut bins = segments.to_vec();
            bins.push(h.width.clone());
            for (j, (d, v)) in h.dest.iter().zip(vals).enumerate() {
                let found = self.array_ty(d, Site::HistDest)?;
                let expected = array_of_dims(&bins, v);
                if !same_type(&expected, &found) {
                    return Err(self.err(SegErrorKind::Type {
                        site: Site::HistDest,
                        index: off + 1 + j,
                        expected: expected.to_ext(),
                        found,
                    }));
                }
                out.push(found);
            }
            self.ir
                .check_operator(&h.op, vals, "seghist")
                .map_err(|error| self.ir_err(IrPart::Operator(k), error))?;
            off += 1 + h.dest.len();
        }
        Ok(out)
    }

    /// Checks the thread body in the scope of the thread indices, and its results against
    /// `ret`.
    fn check_thread(&mut self, op: &SegOp) -> R<()> {
        let m = self.ir.mark();
        for i in op.space.indices() {
            self.bind(i, Type::Prim(PrimType::I64))?;
        }
        self.ir
            .check_stms(&op.body.stms)
            .map_err(|error| self.ir_err(IrPart::ThreadBody, error))?;
        let results = &op.body.results;
        if results.len() != op.ret.len() {
            return Err(self.err(SegErrorKind::Count {
                site: Site::KernelResults,
                expected: op.ret.len(),
                found: results.len(),
            }));
        }
        let num_ops = op.kind.num_op_results();
        for (index, (r, t)) in results.iter().zip(&op.ret).enumerate() {
            let val = match r {
                KernelResult::Returns(v) => v,
                KernelResult::Write { .. } if index < num_ops => {
                    return Err(self.err(SegErrorKind::OperandWritten { index }));
                }
                KernelResult::Write { idx, val, .. } => {
                    for i in idx {
                        self.require(i, PrimType::I64, Site::WriteIndex)?;
                    }
                    val
                }
            };
            let found = self.subexp_ty(val)?;
            if !same_type(t, &found) {
                return Err(self.err(SegErrorKind::Type {
                    site: Site::KernelResults,
                    index,
                    expected: t.to_ext(),
                    found,
                }));
            }
        }
        self.ir.restore(m);
        Ok(())
    }

    /// The types of the map outputs (the results after the operators' operands), checked in
    /// the scope outside the kernel.
    fn map_output_types(&self, op: &SegOp) -> R<Vec<Type>> {
        let dims: Vec<SubExp> = op.space.sizes().cloned().collect();
        let outputs = op.body.results.iter().zip(&op.ret).enumerate();
        outputs
            .skip(op.kind.num_op_results())
            .map(|(index, (r, t))| match r {
                KernelResult::Returns(_) => Ok(array_of_dims(&dims, t)),
                KernelResult::Write { dest, idx, .. } => {
                    self.write_dest_type(index, dest, idx.len(), t)
                }
            })
            .collect()
    }

    /// The type of the destination of a write of `indices` indices of a value of type `val`
    /// (result `index`).
    fn write_dest_type(&self, index: usize, dest: &VName, indices: usize, val: &Type) -> R<Type> {
        let t = self.array_ty(dest, Site::WriteDest)?;
        if indices == 0 || indices > t.rank() {
            return Err(self.err(SegErrorKind::WriteRank {
                dest: dest.clone(),
                rank: t.rank(),
                indices,
            }));
        }
        let row = drop_dims(&t, indices);
        if !same_type(&row, val) {
            return Err(self.err(SegErrorKind::Type {
                site: Site::WriteValue,
                index,
                expected: row.to_ext(),
                found: val.clone(),
            }));
        }
        Ok(t)
    }
}
