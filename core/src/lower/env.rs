//! Static values and environments of the lowering.
//!
//! Lowering is a partial evaluator: every source expression becomes a [`SV`] (static value).
//! First-order values are IR operands; tuples and arrays of tuples are trees of them (structure of
//! arrays); functions are closures that are inlined when fully applied.

use crate::ir::{SubExp, Type, VName};
use crate::prim::PrimType;
use crate::syntax::ast::{BinOp, Expr, Pat, TypeParam};
use crate::syntax::types::Type as SType;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// A static value.
#[derive(Clone, Debug)]
pub(crate) enum SV<'a> {
    /// One IR value (a scalar or an array of scalars) with its type.
    Val(SubExp, Type),
    /// A tuple, or an array of tuples (each component then is an array with the same outer size).
    Tuple(Vec<SV<'a>>),
    /// A function value, possibly partially applied.
    Fun(Rc<FunVal<'a>>),
    /// An array of empty tuples or records (`[0][n]()`, the witness of a size): no data, but
    /// its shape must flow as any array's does (into size parameters, through branches and
    /// loops), so it is carried by an IR array of `bool` of that shape that nothing reads, as
    /// a leaf. Taking its rows down to rank 0 gives the empty tuple ([`SV::units`]).
    Units(SubExp, Type),
}

/// A function with the arguments collected so far.
#[derive(Clone, Debug)]
pub(crate) struct FunVal<'a> {
    pub head: Head<'a>,
    pub args: Vec<SV<'a>>,
}

/// What a function value is.
#[derive(Clone, Debug)]
pub(crate) enum Head<'a> {
    /// A lambda or local function with its captured environment; `tparams` are a local
    /// function's declared type and size parameters.
    Closure {
        params: &'a [Pat],
        tparams: &'a [TypeParam],
        body: &'a Expr,
        env: Env<'a>,
    },
    /// A top-level definition (index into the program's declarations), with parameters.
    TopDef(usize),
    /// An intrinsic from [`crate::builtins::INTRINSICS`].
    Intrinsic(&'static str),
    /// An intrinsic whose sizes the type checker inferred from the context (`unflatten`,
    /// `split`): the use of its name (whose type has the sizes) and the environment there. The
    /// sizes are computed when it is called, as an argument lowered after the name may give
    /// their values (`map split <| tabulate (a + b) f`, see `Size::Expr`).
    SizedIntrinsic {
        name: &'static str,
        at: &'a Expr,
        env: Env<'a>,
    },
    /// A top-level function with size parameters that no parameter's shape gives
    /// (`size_expr_params`): the use of its name (whose type has their sizes) and the
    /// environment there. As for [`Head::SizedIntrinsic`], the sizes are computed when it is
    /// called (`rows (flatten xs)`: the argument gives them).
    SizedTopDef {
        index: usize,
        at: &'a Expr,
        env: Env<'a>,
    },
    /// A numeric module function `m.name`.
    ModFn(PrimType, &'static str),
    /// A conversion `to.from` (the source type comes from the argument).
    Conv(PrimType),
    /// A builtin binary operator used as a function.
    Op(BinOp),
    /// A right section `(op y)`: applies `op x y`.
    RightSection(Box<SV<'a>>, Box<SV<'a>>),
    /// A projection section `(.a.b)`: the component positions, outermost first.
    Project(Vec<usize>),
}

/// One binding in an environment.
#[derive(Debug)]
enum Node<'a> {
    Var(String, SV<'a>),
    /// A locally opened numeric module (`f64.(e)`).
    Open(PrimType),
    /// A type variable's instantiation.
    TyVar(String, SType),
}

#[derive(Debug)]
struct Link<'a> {
    node: Node<'a>,
    next: Option<Rc<Link<'a>>>,
}

/// A persistent environment. `top` is the number of top-level declarations visible (a
/// declaration sees only those before it).
#[derive(Clone, Debug)]
pub(crate) struct Env<'a> {
    head: Option<Rc<Link<'a>>>,
    pub top: usize,
}

/// What a name resolves to in the local environment.
pub(crate) enum Found<'a> {
    Var(SV<'a>),
    Open(PrimType),
}

impl<'a> Env<'a> {
    pub fn new(top: usize) -> Env<'a> {
        Env { head: None, top }
    }
    fn push(&self, node: Node<'a>) -> Env<'a> {
        Env {
            head: Some(Rc::new(Link {
                node,
                next: self.head.clone(),
            })),
            top: self.top,
        }
    }
    pub fn bind(&self, name: &str, v: SV<'a>) -> Env<'a> {
        self.push(Node::Var(name.to_string(), v))
    }
    pub fn open(&self, m: PrimType) -> Env<'a> {
        self.push(Node::Open(m))
    }
    pub fn bind_tyvar(&self, name: &str, t: SType) -> Env<'a> {
        self.push(Node::TyVar(name.to_string(), t))
    }
    /// Looks up an unqualified name: a local variable, or an opened module that has it
    /// (`is_mod_name` says whether a module has the name).
    pub fn lookup(
        &self,
        name: &str,
        is_mod_name: &dyn Fn(PrimType, &str) -> bool,
    ) -> Option<Found<'a>> {
        let mut cur = self.head.as_ref();
        while let Some(l) = cur {
            match &l.node {
                Node::Var(n, v) if n == name => return Some(Found::Var(v.clone())),
                Node::Open(m) if is_mod_name(*m, name) => return Some(Found::Open(*m)),
                _ => {}
            }
            cur = l.next.as_ref();
        }
        None
    }
    pub fn lookup_var(&self, name: &str) -> Option<SV<'a>> {
        match self.lookup(name, &|_, _| false) {
            Some(Found::Var(v)) => Some(v),
            _ => None,
        }
    }
    /// The IR variables the values bound in this environment refer to, with their types (see
    /// [`SV::var_types`]).
    pub fn var_types(&self, out: &mut HashMap<VName, Type>, seen: &mut HashSet<*const ()>) {
        let mut cur = self.head.as_ref();
        while let Some(l) = cur {
            if !seen.insert(Rc::as_ptr(l) as *const ()) {
                return;
            }
            if let Node::Var(_, v) = &l.node {
                v.var_types(out, seen);
            }
            cur = l.next.as_ref();
        }
    }
    pub fn lookup_tyvar(&self, name: &str) -> Option<SType> {
        let mut cur = self.head.as_ref();
        while let Some(l) = cur {
            if let Node::TyVar(n, t) = &l.node {
                if n == name {
                    return Some(t.clone());
                }
            }
            cur = l.next.as_ref();
        }
        None
    }
}

impl<'a> SV<'a> {
    /// The IR leaves in order.
    pub fn leaves(&self) -> Vec<(SubExp, Type)> {
        let mut out = vec![];
        self.collect(&mut out);
        out
    }
    fn collect(&self, out: &mut Vec<(SubExp, Type)>) {
        match self {
            SV::Val(s, t) | SV::Units(s, t) => out.push((s.clone(), t.clone())),
            SV::Tuple(vs) => vs.iter().for_each(|v| v.collect(out)),
            SV::Fun(_) => {}
        }
    }
    pub fn contains_fun(&self) -> bool {
        match self {
            SV::Val(..) | SV::Units(..) => false,
            SV::Tuple(vs) => vs.iter().any(|v| v.contains_fun()),
            SV::Fun(_) => true,
        }
    }
    /// Rebuilds a value of the same structure from new leaves (taken in order).
    pub fn rebuild(&self, leaves: &mut impl Iterator<Item = (SubExp, Type)>) -> SV<'a> {
        match self {
            SV::Val(..) => {
                let (s, t) = leaves.next().expect("rebuild: too few leaves");
                SV::Val(s, t)
            }
            SV::Units(..) => {
                let (s, t) = leaves.next().expect("rebuild: too few leaves");
                SV::units(s, t)
            }
            SV::Tuple(vs) => SV::Tuple(vs.iter().map(|v| v.rebuild(leaves)).collect()),
            SV::Fun(f) => SV::Fun(f.clone()),
        }
    }
    /// Rebuilds with the same structure, mapping every leaf.
    pub fn map_leaves<E>(
        &self,
        f: &mut impl FnMut(&SubExp, &Type) -> Result<(SubExp, Type), E>,
    ) -> Result<SV<'a>, E> {
        Ok(match self {
            SV::Val(s, t) => {
                let (s, t) = f(s, t)?;
                SV::Val(s, t)
            }
            SV::Units(s, t) => {
                let (s, t) = f(s, t)?;
                SV::units(s, t)
            }
            SV::Tuple(vs) => SV::Tuple(
                vs.iter()
                    .map(|v| v.map_leaves(f))
                    .collect::<Result<_, E>>()?,
            ),
            SV::Fun(x) => SV::Fun(x.clone()),
        })
    }
    /// The IR variables this value refers to, with their types, added to `out`: its leaves,
    /// the sizes in their types (`i64`), and for a function value everything it captured (the
    /// environment of a closure, the arguments collected so far). Code lowered from applying
    /// the value reads no other variable bound outside it. `seen` holds the environment links
    /// already visited (closures share the tails of their environments).
    pub fn var_types(&self, out: &mut HashMap<VName, Type>, seen: &mut HashSet<*const ()>) {
        match self {
            SV::Val(s, t) | SV::Units(s, t) => {
                if let SubExp::Var(v) = s {
                    out.insert(v.clone(), t.clone());
                }
                for d in t.shape() {
                    if let SubExp::Var(v) = d {
                        out.insert(v.clone(), Type::Prim(PrimType::I64));
                    }
                }
            }
            SV::Tuple(vs) => vs.iter().for_each(|v| v.var_types(out, seen)),
            SV::Fun(f) => {
                f.args.iter().for_each(|a| a.var_types(out, seen));
                match &f.head {
                    Head::Closure { env, .. }
                    | Head::SizedIntrinsic { env, .. }
                    | Head::SizedTopDef { env, .. } => env.var_types(out, seen),
                    Head::RightSection(op, y) => {
                        op.var_types(out, seen);
                        y.var_types(out, seen);
                    }
                    Head::TopDef(_)
                    | Head::Intrinsic(_)
                    | Head::ModFn(..)
                    | Head::Conv(_)
                    | Head::Op(_)
                    | Head::Project(_) => {}
                }
            }
        }
    }
    /// The value of an array of empty tuples whose shape `carrier` (of type `t`) carries; the
    /// empty tuple where `t` has no dimension left (a row of a one-dimensional such array).
    pub fn units(carrier: SubExp, t: Type) -> SV<'a> {
        match t {
            Type::Array { .. } => SV::Units(carrier, t),
            _ => SV::Tuple(vec![]),
        }
    }
    /// Whether the value has an array of empty tuples in it.
    pub fn contains_units(&self) -> bool {
        match self {
            SV::Units(..) => true,
            SV::Tuple(vs) => vs.iter().any(|v| v.contains_units()),
            SV::Val(..) | SV::Fun(_) => false,
        }
    }
    /// The element of an array being built (by `replicate`, `map`, an array literal): a
    /// value with no leaves (an empty tuple) becomes a rank-0 carrier, so that the array built
    /// from it is an [`SV::Units`] with its shape. Only for building arrays: a rank-0
    /// `SV::Units` is never a value of its own.
    pub fn with_unit_carrier(self) -> SV<'a> {
        if self.leaves().is_empty() && !self.contains_fun() {
            SV::Units(
                SubExp::Const(crate::prim::PrimValue::Bool(false)),
                Type::Prim(PrimType::Bool),
            )
        } else {
            self
        }
    }
    pub fn fun(head: Head<'a>) -> SV<'a> {
        SV::Fun(Rc::new(FunVal { head, args: vec![] }))
    }
}
