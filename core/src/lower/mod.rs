//! Lowering: the typed AST to the first-order [`crate::ir`].
//!
//! Lowering works like Futhark's defunctionalisation by partial evaluation: each `entry`
//! declaration becomes one IR function, and every application of a user function, lambda, local
//! function or prelude function is inlined, with the arguments bound as *static values*
//! ([`env::SV`]). Polymorphism and higher-order functions thus disappear: a function value is a
//! closure known at compile time, a tuple is a tree of IR values, and an array of tuples is a tuple
//! of arrays (structure of arrays).
//!
//! Sizes: a size parameter `[n]` is bound to the IR dimension of the argument it describes, so
//! sizes in types are ordinary variables of the lowering environment. A size parameter that the
//! parameters' types mention only in size expressions (`[p*q]t`), or that only the result's type
//! mentions (`def fill [n] (x: i32) : [n]i32`), takes the size the type checker inferred at the
//! call (the name's type there has `[a*b]t`, so `p = a`), evaluated in the caller's environment
//! and passed as a leading argument (`Lowerer::with_call_sizes`). An array of empty tuples
//! (`[0][n]()`, a size witness) has an IR array of `bool` as its shape's carrier (`SV::Units`). A
//! size that is the value of an expression (`Size::Expr`, `tabulate (i64.sum ks) f`) is the
//! value that expression had where it was lowered (`Lowerer::size_exprs`). Where the size of a
//! result is not known statically (`if`s whose branches differ, loops whose arrays change size,
//! entry results) the IR's existential sizes are used.
//!
//! An entry point that uses something the lowering cannot handle (automatic differentiation, a
//! function-valued `if`, ...) fails alone: its diagnostic is collected in
//! [`Lowered::entry_errors`] and the other entry points are lowered normally.
//!
//! Entry points: every `entry` declaration, and the last top-level `def main` of the program.
//! Point-free entries (`entry f = g`) take their parameters from their type.
//!
//! Runtime checks: statements carry the source location of the expression they come from, and
//! the attributes around it (`#[unsafe]` on everything inside; loop attributes such as
//! `#[bound(n)]` on the `Loop` statement only). Ranges, slices, size coercions (`:>`, `zip` of
//! arrays of different sizes, array literals whose rows differ) and `assert` become `Assert`
//! statements; index bounds are checked by `Index`/`Update` themselves.
//!
//! Arrays consumed in place (`with`, `scatter`, `reduce_by_index`) are copied first (the type
//! checker does not track uniqueness); [`copies`] then removes the copies that are not needed.
//!
//! Not supported (each gives `not supported: ...` for the entry point that needs it):
//! `if` or loops producing functions; arrays of functions;
//! entry points with type parameters, function parameters or function results; functions given
//! to a SOAC whose result size depends on the element (irregular arrays); recursion; opening
//! modules other than the numeric ones; record fields.

mod accs;
mod ad;
mod builtins;
mod copies;
mod env;
mod expr;
mod shared_sizes;
mod soacs;
mod sums;
mod types;

#[cfg(test)]
mod tests;

pub use copies::consumable;

use crate::diag::{Diagnostic, SourceMap, Span, SrcLoc};
use crate::ir::{
    self, Attrs, Body, EntryPoint, Exp, ExtDim, ExtType, FunDef, NameSource, Param, Stm, SubExp,
    Type, VName,
};
use crate::prim::{IntType, PrimType, PrimValue};
use crate::syntax::ast::{Dec, Program, TypeParam, ValDec};
use crate::syntax::types::Size;
use env::{Env, SV};
use std::collections::HashMap;
use std::sync::Arc;

/// The result of lowering a program.
pub struct Lowered {
    /// One function per entry point that could be lowered.
    pub program: ir::Program,
    /// Entry points that could not be lowered, with the reason.
    pub entry_errors: Vec<(String, Diagnostic)>,
}

type R<T> = Result<T, Diagnostic>;

/// How deeply function calls may nest (each is inlined inside the previous one). The type
/// checker rejects recursion, so only a chain of this many distinct functions reaches it;
/// lowering runs on a thread with [`crate::COMPILER_STACK`] bytes of stack, enough for it.
pub const MAX_INLINE_DEPTH: usize = 10_000;

/// How many IR variables lowering may create for one entry point. Every function call is
/// inlined, so a chain of functions that each call the previous one twice
/// (`f_i x = f_{i-1} (f_{i-1} x)`) is exponential in the chain's length; past this budget
/// the entry point is rejected (not supported, at the call being inlined) instead of using up
/// the machine's memory. The largest test programs stay far below it.
pub const MAX_LOWERED_NAMES: u32 = 1 << 17;

/// Lowers every entry point of a type-checked program (the prelude's declarations first).
///
/// Entry point results: each result dimension that is a constant or one of the entry's size
/// parameters is [`ExtDim::Free`]; every other dimension is existential ([`ExtDim::Ext`]) and
/// returned as an extra leading `i64` result, so `ret.len()` is the sum of
/// `EntryPoint::result_counts` plus the number of existential sizes, which come first.
pub fn lower_program(p: &Program, sources: &SourceMap) -> Lowered {
    crate::on_big_stack(|| lower_program_here(p, sources))
}

fn lower_program_here(p: &Program, sources: &SourceMap) -> Lowered {
    let mut l = Lowerer::new(p, sources);
    let mut funs = vec![];
    let mut entry_errors = vec![];
    // A top-level function named `main` (the last one, outside the prelude) is an entry point too.
    let prelude_file = p.decs.first().map(|d| d.span().file);
    let main = p
        .decs
        .iter()
        .rposition(
            |d| matches!(d, Dec::Val(v) if v.name == "main" && Some(v.span.file) != prelude_file),
        )
        .filter(|_| {
            !p.decs
                .iter()
                .any(|d| matches!(d, Dec::Val(v) if v.entry && v.name == "main"))
        });
    for (i, d) in p.decs.iter().enumerate() {
        if let Dec::Val(v) = d {
            if v.entry || Some(i) == main {
                l.stms.clear();
                l.depth = 0;
                l.entry_names = l.names.next;
                l.size_exprs.clear();
                match l.lower_entry(i, v) {
                    Ok(f) => funs.push(f),
                    Err(d) => entry_errors.push((v.name.clone(), d)),
                }
            }
        }
    }
    Lowered {
        program: ir::Program {
            funs,
            name_source: l.names,
        },
        entry_errors,
    }
}

/// The state of the lowering of one program.
pub(crate) struct Lowerer<'a> {
    pub prog: &'a Program,
    pub sources: &'a SourceMap,
    pub names: NameSource,
    /// The statements of the body being built.
    pub stms: Vec<Stm>,
    /// Location attached to emitted statements.
    pub loc: Option<SrcLoc>,
    /// Attributes attached to emitted statements.
    pub attrs: Vec<String>,
    /// Top-level value declarations by name (indices into `prog.decs`, ascending).
    tops: HashMap<&'a str, Vec<usize>>,
    pub depth: usize,
    /// [`NameSource::next`] when the current entry point's lowering began (see
    /// [`MAX_LOWERED_NAMES`]).
    pub entry_names: u32,
    /// The value of each `i64` expression lowered (in the current entry point), by its span:
    /// the values of the sizes [`crate::syntax::types::Size::Expr`], taken where the
    /// expression was evaluated (the argument of `tabulate`, `replicate`, `iota`, ...).
    /// Each with the call of a top-level function it was lowered in (`frames`): a function's
    /// result keeps such sizes in its type (`[i64.sum ks * 2]t`), but the caller may read the
    /// value only while that call is being lowered; after it, the span's value may be another
    /// call's, or a variable of a branch (`Lowerer::size_value`).
    pub size_exprs: HashMap<crate::diag::Span, (SubExp, u32)>,
    /// The calls of top-level functions being inlined, innermost last (0: the entry point).
    pub frames: Vec<u32>,
    next_frame: u32,
}

impl<'a> Lowerer<'a> {
    fn new(prog: &'a Program, sources: &'a SourceMap) -> Lowerer<'a> {
        let mut tops: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for (i, d) in prog.decs.iter().enumerate() {
            if let Dec::Val(v) = d {
                tops.entry(v.name.as_str()).or_default().push(i);
            }
        }
        Lowerer {
            prog,
            sources,
            names: NameSource::default(),
            stms: vec![],
            loc: None,
            attrs: vec![],
            tops,
            depth: 0,
            entry_names: 0,
            size_exprs: HashMap::new(),
            frames: vec![0],
            next_frame: 1,
        }
    }

    /// Runs `f` as the lowering of one call of a top-level function (see `size_exprs`).
    pub fn in_frame<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        self.frames.push(self.next_frame);
        self.next_frame += 1;
        let r = f(self);
        self.frames.pop();
        r
    }

    /// The latest top-level declaration named `name` before declaration `limit`.
    pub fn top(&self, name: &str, limit: usize) -> Option<usize> {
        self.tops
            .get(name)?
            .iter()
            .rev()
            .copied()
            .find(|&i| i < limit)
    }

    pub fn valdec(&self, i: usize) -> &'a ValDec {
        match &self.prog.decs[i] {
            Dec::Val(v) => v,
            _ => unreachable!("top() only returns value declarations"),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Emitting statements.

    pub fn emit(&mut self, elems: Vec<Param>, exp: Exp) {
        self.stms.push(Stm {
            pat: ir::Pat { elems },
            exp,
            attrs: Attrs(self.attrs.clone()),
            loc: self.loc.clone(),
        });
    }

    /// Binds `exp` (one result of type `ty`) to a fresh variable.
    pub fn let1(&mut self, base: &str, ty: Type, exp: Exp) -> SubExp {
        if let Some(s) = fold(&exp) {
            return s;
        }
        let v = self.names.fresh(base);
        self.emit(
            vec![Param {
                name: v.clone(),
                ty,
            }],
            exp,
        );
        SubExp::Var(v)
    }

    /// Binds `exp` to fresh variables of the given types.
    pub fn letn(&mut self, base: &str, tys: Vec<Type>, exp: Exp) -> Vec<VName> {
        let elems: Vec<Param> = tys
            .into_iter()
            .map(|ty| Param {
                name: self.names.fresh(base),
                ty,
            })
            .collect();
        let names = elems.iter().map(|p| p.name.clone()).collect();
        self.emit(elems, exp);
        names
    }

    /// Runs `f` collecting the statements it emits separately.
    pub fn in_body<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<(Vec<Stm>, T)> {
        let saved = std::mem::take(&mut self.stms);
        let r = f(self);
        let stms = std::mem::replace(&mut self.stms, saved);
        Ok((stms, r?))
    }

    pub fn loc_of(&self, span: Span) -> SrcLoc {
        self.sources.loc(span)
    }

    /// Emits a runtime assertion.
    pub fn assert(&mut self, cond: SubExp, msg: String) {
        self.assert_with(cond, msg, vec![]);
    }

    /// Emits a runtime assertion whose message shows the values of `args` at its `{}`s
    /// ([`ir::assert_message`]).
    pub fn assert_with(&mut self, cond: SubExp, msg: String, args: Vec<SubExp>) {
        if cond == SubExp::Const(PrimValue::Bool(true)) {
            return;
        }
        self.emit(vec![], Exp::Assert { cond, msg, args });
    }

    /// `a op b` on `i64` sizes, where `op` is [`SizeArith`]`::Add`, `Sub` or `Mul`, with an
    /// assertion that the exact result fits in an `i64`: a size that would wrap around is the
    /// run-time error `size overflow in WHAT` at the current location. Constants are computed
    /// here (an overflow of constants is an assertion that always fails).
    ///
    /// The checks use only comparisons and `mul_hi`, which every backend has:
    /// `a + b` overflows iff `(r < a) != (b < 0)`, `a - b` iff `(a < r) != (b < 0)`, and
    /// `a * b` iff the high half of the 128-bit product is not the sign extension of `r`.
    pub fn checked_size(&mut self, op: SizeArith, a: SubExp, b: SubExp, what: &str) -> SubExp {
        use ir::{BinOp as B, CmpOp as C, MathFn};
        let i64t = Type::Prim(PrimType::I64);
        let boolt = Type::Prim(PrimType::Bool);
        let msg = format!("size overflow in {what}: the result does not fit in an i64");
        let konst = |s: &SubExp| match s {
            SubExp::Const(PrimValue::I64(v)) => Some(*v),
            _ => None,
        };
        let binop = match op {
            SizeArith::Add => B::Add(PrimType::I64),
            SizeArith::Sub => B::Sub(PrimType::I64),
            SizeArith::Mul => B::Mul(PrimType::I64),
        };
        if let (Some(x), Some(y)) = (konst(&a), konst(&b)) {
            let exact = match op {
                SizeArith::Add => x.checked_add(y),
                SizeArith::Sub => x.checked_sub(y),
                SizeArith::Mul => x.checked_mul(y),
            };
            return match exact {
                Some(r) => SubExp::i64(r),
                None => {
                    self.emit(
                        vec![],
                        Exp::Assert {
                            cond: SubExp::Const(PrimValue::Bool(false)),
                            msg,
                            args: vec![],
                        },
                    );
                    SubExp::i64(0)
                }
            };
        }
        // Operations that cannot overflow.
        match (op, konst(&a), konst(&b)) {
            (SizeArith::Add | SizeArith::Sub, _, Some(0)) => return a,
            (SizeArith::Add, Some(0), _) => return b,
            (SizeArith::Mul, _, Some(1)) => return a,
            (SizeArith::Mul, Some(1), _) => return b,
            (SizeArith::Mul, _, Some(0)) | (SizeArith::Mul, Some(0), _) => return SubExp::i64(0),
            _ => {}
        }
        let r = self.let1(
            "size",
            i64t.clone(),
            Exp::BinOp(binop, a.clone(), b.clone()),
        );
        let lt = C::Lt(PrimType::I64);
        let ok = match op {
            SizeArith::Add | SizeArith::Sub => {
                let moved = match op {
                    SizeArith::Add => Exp::CmpOp(lt, r.clone(), a),
                    _ => Exp::CmpOp(lt, a, r.clone()),
                };
                let moved = self.let1("moved", boolt.clone(), moved);
                let neg = self.let1("neg", boolt.clone(), Exp::CmpOp(lt, b, SubExp::i64(0)));
                self.let1("ok", boolt, Exp::CmpOp(C::Eq(PrimType::Bool), moved, neg))
            }
            SizeArith::Mul => {
                let hi = self.let1(
                    "hi",
                    i64t.clone(),
                    Exp::Math(MathFn::MulHi(IntType::I64), vec![a, b]),
                );
                let sign = self.let1(
                    "sign",
                    i64t,
                    Exp::BinOp(B::Shr(IntType::I64), r.clone(), SubExp::i64(63)),
                );
                self.let1("ok", boolt, Exp::CmpOp(C::Eq(PrimType::I64), hi, sign))
            }
        };
        self.assert(ok, msg);
        r
    }

    // -----------------------------------------------------------------------------------------
    // Entry points.

    /// Makes the IR parameters of one entry point parameter of type `ty`: sizes named in it
    /// become size parameters (shared by name), unknown sizes fresh ones.
    fn entry_param(
        &mut self,
        env: &Env<'a>,
        ty: &crate::syntax::types::Type,
        span: Span,
        named: &mut Vec<(String, VName)>,
        size_params: &mut Vec<VName>,
        params: &mut Vec<Param>,
    ) -> R<SV<'a>> {
        let mut names = std::mem::take(&mut self.names);
        let mut new_sizes = vec![];
        let sv = types::stype_to_sv(env, ty, &mut |s: &Size| -> R<SubExp> {
            Ok(match s {
                Size::Const(k) => SubExp::i64(*k),
                Size::Named(n) => {
                    if let Some((_, v)) = named.iter().find(|(m, _)| m == n) {
                        SubExp::Var(v.clone())
                    } else {
                        let v = names.fresh(n);
                        named.push((n.clone(), v.clone()));
                        new_sizes.push(v.clone());
                        SubExp::Var(v)
                    }
                }
                Size::Unknown | Size::Bin(..) | Size::Expr(..) => {
                    let v = names.fresh("d");
                    new_sizes.push(v.clone());
                    SubExp::Var(v)
                }
            })
        });
        self.names = names;
        let sv = sv.map_err(|d| Diagnostic { span, ..d })?;
        if sv.contains_fun() {
            return Err(Diagnostic::not_supported(
                span,
                "function-typed entry point parameters",
            ));
        }
        if sv.contains_units() {
            return Err(Diagnostic::not_supported(
                span,
                "arrays of empty tuples as entry point parameters",
            ));
        }
        size_params.extend(new_sizes);
        sv.map_leaves(&mut |_, t| -> R<(SubExp, Type)> {
            let v = self.names.fresh("p");
            params.push(Param {
                name: v.clone(),
                ty: t.clone(),
            });
            Ok((SubExp::Var(v), t.clone()))
        })
    }

    fn lower_entry(&mut self, idx: usize, dec: &'a ValDec) -> R<FunDef> {
        opaque_sums(dec)?;
        let mut env = Env::new(idx);
        let mut size_params: Vec<VName> = vec![];
        let mut named: Vec<(String, VName)> = vec![];
        for tp in &dec.type_params {
            match tp {
                TypeParam::Size(n, _) => {
                    let v = self.names.fresh(n);
                    named.push((n.clone(), v.clone()));
                    size_params.push(v);
                }
                TypeParam::Type { span, .. } => {
                    return Err(Diagnostic::not_supported(
                        *span,
                        "type parameters on an entry point",
                    ));
                }
            }
        }
        let mut params = vec![];
        let mut param_counts = vec![];
        let mut param_svs = vec![];
        for p in &dec.params {
            let ty =
                p.ty.as_ref()
                    .ok_or_else(|| internal(p.span, "parameter without a type"))?;
            let sv =
                self.entry_param(&env, ty, p.span, &mut named, &mut size_params, &mut params)?;
            param_counts.push(sv.leaves().len());
            param_svs.push((p, sv));
        }
        for (n, v) in &named {
            env = env.bind(
                n,
                SV::Val(SubExp::Var(v.clone()), Type::Prim(PrimType::I64)),
            );
        }
        for (p, sv) in param_svs {
            env = self.bind_pat(&env, p, sv)?;
        }
        // A size named after a value parameter (`(n: i64) (xs: [n]f64)`) must agree with it.
        for (n, v) in &named {
            if let Some(SV::Val(s, Type::Prim(PrimType::Int(IntType::I64)))) = env.lookup_var(n) {
                if s != SubExp::Var(v.clone()) {
                    let c = self.let1(
                        "size_ok",
                        Type::Prim(PrimType::Bool),
                        Exp::CmpOp(ir::CmpOp::Eq(PrimType::I64), s, SubExp::Var(v.clone())),
                    );
                    self.loc = Some(self.loc_of(dec.span));
                    self.assert(
                        c,
                        format!("entry point argument size does not match parameter `{n}`"),
                    );
                }
            }
        }
        let mut result = self.lower_expr(&env, &dec.body)?;
        // A point-free entry (`entry f = g`): its remaining parameters come from its type.
        if let SV::Fun(_) = result {
            let mut ty = dec.body.ty.clone();
            let mut args = vec![];
            while let Some(crate::syntax::types::Type::Fun(a, r)) = ty {
                let sv = self.entry_param(
                    &env,
                    &a,
                    dec.span,
                    &mut named,
                    &mut size_params,
                    &mut params,
                )?;
                param_counts.push(sv.leaves().len());
                args.push(sv);
                ty = Some(*r);
            }
            if !args.is_empty() {
                result = self.apply(result, args, dec.body.span)?;
            }
        }
        if result.contains_fun() {
            return Err(Diagnostic::not_supported(
                dec.body.span,
                "entry points returning functions",
            ));
        }
        if result.contains_units() {
            let span = dec.ret.as_ref().map_or(dec.body.span, |r| r.span());
            return Err(Diagnostic::not_supported(
                span,
                "entry points returning arrays of empty tuples",
            ));
        }
        let result_counts = match &result {
            SV::Tuple(vs) if !vs.is_empty() => vs.iter().map(|v| v.leaves().len()).collect(),
            v => vec![v.leaves().len()],
        };
        let leaves = result.leaves();
        let mut ext: Vec<SubExp> = vec![];
        let mut ret = vec![];
        for (_, t) in &leaves {
            ret.push(match t {
                Type::Prim(p) => ExtType::Prim(*p),
                Type::Array { elem, shape } => ExtType::Array {
                    elem: *elem,
                    shape: shape
                        .iter()
                        .map(|d| match d {
                            SubExp::Var(v) if !size_params.contains(v) => {
                                let i = ext.iter().position(|e| e == d).unwrap_or_else(|| {
                                    ext.push(d.clone());
                                    ext.len() - 1
                                });
                                ExtDim::Ext(i)
                            }
                            d => ExtDim::Free(d.clone()),
                        })
                        .collect(),
                },
                Type::Acc { .. } => {
                    return Err(internal(dec.span, "accumulator in an entry result"))
                }
            });
        }
        let mut rets: Vec<ExtType> = ext.iter().map(|_| ExtType::Prim(PrimType::I64)).collect();
        rets.extend(ret);
        let mut res = ext;
        res.extend(leaves.into_iter().map(|(s, _)| s));
        let mut body = Body {
            stms: std::mem::take(&mut self.stms),
            result: res,
        };
        copies::remove_copies(&mut body);
        let attrs = Attrs(dec.attrs.iter().map(attr_text).collect());
        Ok(FunDef {
            name: Arc::from(dec.name.as_str()),
            entry: Some(EntryPoint {
                name: Arc::from(dec.name.as_str()),
                param_counts,
                result_counts,
            }),
            size_params,
            params,
            ret: rets,
            body,
            attrs,
        })
    }
}

/// Rejects (as not supported, for this entry point alone) an entry point with a sum type in a
/// parameter or in its result. Futhark makes such types opaque: values of them cannot be written
/// as input or printed as output, only passed from one entry point to another, which vkad's
/// runners do not do.
fn opaque_sums(dec: &ValDec) -> R<()> {
    let ret_span = dec.ret.as_ref().map(|r| r.span()).unwrap_or(dec.name_span);
    let mut items: Vec<(&crate::syntax::types::Type, Span, &str)> = vec![];
    for p in &dec.params {
        if let Some(t) = &p.ty {
            items.push((t, p.span, "parameter"));
        }
    }
    if let Some(t) = &dec.body.ty {
        // A point-free entry's (`entry f = g`) function type has its parameters too.
        let what = if t.is_fun() {
            "parameter or result"
        } else {
            "result"
        };
        items.push((t, ret_span, what));
    }
    for (t, span, what) in items {
        if t.contains_sum() {
            return Err(Diagnostic::not_supported(
                span,
                format!(
                    "sum types in the {what} type of an entry point (`{t}`): Futhark makes them \
                     opaque, so no input or output value can be written for them"
                ),
            ));
        }
    }
    Ok(())
}

/// An internal inconsistency (a bug in an earlier stage or in the lowering), reported as an error.
/// The arithmetic of sizes that [`Lowerer::checked_size`] checks for overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SizeArith {
    Add,
    Sub,
    Mul,
}

pub(crate) fn internal(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error(span, format!("internal error in lowering: {what}"))
}

/// The printed text of an attribute: `unsafe`, `bound(100)`.
pub(crate) fn attr_text(a: &crate::syntax::ast::Attr) -> String {
    use crate::syntax::ast::Attr;
    match a {
        Attr::Atom(n, _) => n.clone(),
        Attr::Int(k, _) => k.to_string(),
        Attr::Call(n, args, _) => format!(
            "{n}({})",
            args.iter().map(attr_text).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Constant folding of `i64` arithmetic and trivial identities, so that sizes stay simple.
fn fold(exp: &Exp) -> Option<SubExp> {
    use crate::ir::BinOp as B;
    let i64c = |s: &SubExp| match s {
        SubExp::Const(PrimValue::I64(v)) => Some(*v),
        _ => None,
    };
    match exp {
        Exp::SubExp(s) => Some(s.clone()),
        Exp::BinOp(op, a, b) => {
            let (x, y) = (i64c(a), i64c(b));
            match (op, x, y) {
                (B::Add(PrimType::Int(IntType::I64)), Some(x), Some(y)) => {
                    Some(SubExp::i64(x.wrapping_add(y)))
                }
                (B::Sub(PrimType::Int(IntType::I64)), Some(x), Some(y)) => {
                    Some(SubExp::i64(x.wrapping_sub(y)))
                }
                (B::Mul(PrimType::Int(IntType::I64)), Some(x), Some(y)) => {
                    Some(SubExp::i64(x.wrapping_mul(y)))
                }
                (B::Add(PrimType::Int(IntType::I64)), Some(0), _) => Some(b.clone()),
                (
                    B::Add(PrimType::Int(IntType::I64)) | B::Sub(PrimType::Int(IntType::I64)),
                    _,
                    Some(0),
                ) => Some(a.clone()),
                (B::Mul(PrimType::Int(IntType::I64)), Some(1), _) => Some(b.clone()),
                (B::Mul(PrimType::Int(IntType::I64)), _, Some(1)) => Some(a.clone()),
                (B::Quot(IntType::I64) | B::Div(PrimType::Int(IntType::I64)), _, Some(1)) => {
                    Some(a.clone())
                }
                _ => None,
            }
        }
        Exp::CmpOp(crate::ir::CmpOp::Eq(PrimType::Int(_) | PrimType::Bool), a, b) if a == b => {
            Some(SubExp::Const(PrimValue::Bool(true)))
        }
        _ => None,
    }
}
