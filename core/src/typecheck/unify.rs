//! Unification variables, their constraints, and unification.
//!
//! A variable may carry constraints: a set of allowed primitive types (overloaded literals and
//! operators), "equality type" (no functions, for `==`), and known tuple fields (from `e.0`
//! projections on a not yet known type). Sizes never make unification fail (see the module doc
//! of [`crate::typecheck`]); ranks do.

use super::ty::{PrimSet, Ty, VAR_PREFIX};
use super::Checker;
use crate::diag::{Diagnostic, Span};
use crate::syntax::types::Size;
use std::collections::BTreeMap;

/// The largest type (in nodes) printed in full in an error message.
const MAX_SHOWN: usize = 2000;

/// One unification variable.
#[derive(Clone, Debug)]
pub(crate) struct VarInfo {
    pub link: Option<Ty>,
    /// The let-nesting level at which the variable was created (for generalisation).
    pub level: u32,
    pub prims: Option<PrimSet>,
    pub nofun: bool,
    /// Fields required by projections (`e.0`, `e.a` on a not yet known type): name -> type.
    /// The variable must become a tuple or a record with these fields.
    pub fields: BTreeMap<String, Ty>,
    /// Constructors used on a not yet known type (`#some x`): name -> payload types. The
    /// variable must become a sum type with these constructors; if nothing else determines
    /// it, it becomes the sum of exactly these (as in Futhark).
    pub constrs: BTreeMap<String, Vec<Ty>>,
    /// Where the variable came from (for ambiguity errors).
    pub span: Span,
}

/// Why unification failed.
#[derive(Clone, Debug)]
pub(crate) enum UErr {
    Mismatch(Ty, Ty),
    NotIn(PrimSet, Ty),
    NotEq(Ty),
    NoField(Ty, String),
    NoConstr(Ty, String, usize),
    Occurs,
}

impl Checker {
    pub(crate) fn fresh(&mut self, span: Span) -> Ty {
        self.vars.push(VarInfo {
            link: None,
            level: self.level,
            prims: None,
            nofun: false,
            fields: BTreeMap::new(),
            constrs: BTreeMap::new(),
            span,
        });
        Ty::Var(self.vars.len() as u32 - 1)
    }

    /// A fresh size variable: a [`Size::Named`] whose name starts with [`VAR_PREFIX`] (no source
    /// name does), resolved by [`Checker::unify_size`].
    pub(crate) fn fresh_size(&mut self) -> Size {
        self.size_vars.push(None);
        Size::Named(format!("{VAR_PREFIX}{}", self.size_vars.len() - 1))
    }

    /// The index of a size variable.
    fn size_var(&self, d: &Size) -> Option<usize> {
        match d {
            Size::Named(n) => n
                .strip_prefix(VAR_PREFIX)
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|k| *k < self.size_vars.len()),
            _ => None,
        }
    }

    /// Follow the links of size variables at the top of a size.
    fn shallow_size<'s>(&'s self, d: &'s Size) -> &'s Size {
        let mut d = d;
        while let Some(k) = self.size_var(d) {
            match &self.size_vars[k] {
                Some(l) => d = l,
                None => break,
            }
        }
        d
    }

    /// A size with every resolved size variable substituted (linear in the result's size).
    pub(crate) fn zonk_size(&self, d: &Size) -> Size {
        match self.shallow_size(d) {
            Size::Bin(op, a, b) => Size::bin(*op, self.zonk_size(a), self.zonk_size(b)),
            d => d.clone(),
        }
    }

    /// Whether a size (after substitution) still contains a size variable.
    pub(crate) fn has_size_var(&self, d: &Size) -> bool {
        fn any_var(c: &Checker, d: &Size) -> bool {
            match d {
                Size::Bin(_, a, b) => any_var(c, a) || any_var(c, b),
                d => c.size_var(d).is_some(),
            }
        }
        any_var(self, &self.zonk_size(d))
    }

    /// Unify two sizes leniently: a size variable is bound to the other side (unless that is
    /// unknown), size expressions with the same operator are unified operand by operand, and
    /// anything else (including two different sizes) is accepted, as sizes are not checked (a
    /// wrong size is caught at run time).
    pub(crate) fn unify_size(&mut self, a: &Size, b: &Size) {
        let a = self.shallow_size(a).clone();
        let b = self.shallow_size(b).clone();
        if a == b {
            return;
        }
        match (self.size_var(&a), self.size_var(&b)) {
            (Some(k), _) if b != Size::Unknown => {
                if !self.size_occurs(k, &b) {
                    self.size_vars[k] = Some(b);
                }
            }
            (_, Some(k)) if a != Size::Unknown => {
                if !self.size_occurs(k, &a) {
                    self.size_vars[k] = Some(a);
                }
            }
            _ => {
                if let (Size::Bin(o1, a1, b1), Size::Bin(o2, a2, b2)) = (&a, &b) {
                    if o1 == o2 {
                        self.unify_size(a1, a2);
                        self.unify_size(b1, b2);
                    }
                }
            }
        }
    }

    /// The type of a conditional or a `match` whose branches have the (unified) types `a` and
    /// `b`: `a`, with every size on which the branches differ unknown, as Futhark makes such a
    /// size existential (`if c then tabulate (i64.sum ks) f else tabulate n g` has type `[]t`;
    /// the first branch's size would name a value computed only in that branch).
    pub(crate) fn join_branch_sizes(&self, a: &Ty, b: &Ty) -> Ty {
        let (a, b) = (self.zonk(a), self.zonk(b));
        fn join(c: &Checker, a: &Ty, b: &Ty) -> Ty {
            match (a, b) {
                (Ty::Array(d1, e1), Ty::Array(d2, e2)) => {
                    let d = if c.zonk_size(d1) == c.zonk_size(d2) {
                        d1.clone()
                    } else {
                        Size::Unknown
                    };
                    Ty::arr(d, join(c, e1, e2))
                }
                (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                    Ty::Tuple(xs.iter().zip(ys).map(|(x, y)| join(c, x, y)).collect())
                }
                (Ty::Record(xs), Ty::Record(ys)) if xs.len() == ys.len() => Ty::Record(
                    xs.iter()
                        .zip(ys)
                        .map(|((n, x), (_, y))| (n.clone(), join(c, x, y)))
                        .collect(),
                ),
                (Ty::Sum(xs), Ty::Sum(ys)) if xs.len() == ys.len() => Ty::Sum(
                    xs.iter()
                        .zip(ys)
                        .map(|((n, xs), (_, ys))| {
                            let ts = if xs.len() == ys.len() {
                                xs.iter().zip(ys).map(|(x, y)| join(c, x, y)).collect()
                            } else {
                                xs.clone()
                            };
                            (n.clone(), ts)
                        })
                        .collect(),
                ),
                _ => a.clone(),
            }
        }
        join(self, &a, &b)
    }

    fn size_occurs(&self, k: usize, d: &Size) -> bool {
        fn occurs(c: &Checker, k: usize, d: &Size) -> bool {
            match d {
                Size::Bin(_, a, b) => occurs(c, k, a) || occurs(c, k, b),
                d => c.size_var(d) == Some(k),
            }
        }
        occurs(self, k, &self.zonk_size(d))
    }

    pub(crate) fn fresh_prims(&mut self, set: PrimSet, span: Span) -> Ty {
        let t = self.fresh(span);
        if let Ty::Var(v) = t {
            self.vars[v as usize].prims = Some(set);
        }
        t
    }

    /// Follow links at the top of a type.
    pub(crate) fn shallow(&self, t: &Ty) -> Ty {
        let mut t = t.clone();
        while let Ty::Var(v) = t {
            match &self.vars[v as usize].link {
                Some(l) => t = l.clone(),
                None => break,
            }
        }
        t
    }

    /// Apply the substitution everywhere.
    pub(crate) fn zonk(&self, t: &Ty) -> Ty {
        match t {
            Ty::Var(v) => match &self.vars[*v as usize].link {
                Some(l) => self.zonk(l),
                None => t.clone(),
            },
            Ty::Prim(_) | Ty::Param(_) => t.clone(),
            Ty::Array(d, e) => Ty::arr(self.zonk_size(d), self.zonk(e)),
            Ty::Tuple(_) | Ty::Record(_) | Ty::Sum(_) | Ty::Fun(..) | Ty::Acc(_) => {
                t.map_children(&mut |c| self.zonk(c))
            }
        }
    }

    /// Like [`Checker::zonk`], but every size that mentions a size variable (resolved or not)
    /// becomes unknown: the sizes of ordinary nodes stay as lenient as without size variables.
    pub(crate) fn zonk_erasing_size_vars(&self, t: &Ty) -> Ty {
        match t {
            Ty::Var(v) => match &self.vars[*v as usize].link {
                Some(l) => self.zonk_erasing_size_vars(l),
                None => t.clone(),
            },
            Ty::Prim(_) | Ty::Param(_) => t.clone(),
            Ty::Array(d, e) => {
                let d = if super::ty::mentions_var(d) {
                    Size::Unknown
                } else {
                    d.clone()
                };
                Ty::arr(d, self.zonk_erasing_size_vars(e))
            }
            Ty::Tuple(_) | Ty::Record(_) | Ty::Sum(_) | Ty::Fun(..) | Ty::Acc(_) => {
                t.map_children(&mut |c| self.zonk_erasing_size_vars(c))
            }
        }
    }

    /// Unbound variables occurring in a type (following links; each linked variable is visited
    /// once, so this is linear in the size of the type as a graph).
    pub(crate) fn free_vars(&self, t: &Ty, out: &mut Vec<u32>) {
        let mut seen = std::collections::HashSet::new();
        self.free_vars_in(t, out, &mut seen);
    }

    fn free_vars_in(&self, t: &Ty, out: &mut Vec<u32>, seen: &mut std::collections::HashSet<u32>) {
        match t {
            Ty::Var(v) => {
                if !seen.insert(*v) {
                    return;
                }
                match &self.vars[*v as usize].link {
                    Some(l) => self.free_vars_in(l, out, seen),
                    None => out.push(*v),
                }
            }
            Ty::Prim(_) | Ty::Param(_) => {}
            Ty::Array(_, e) | Ty::Acc(e) => self.free_vars_in(e, out, seen),
            Ty::Tuple(ts) => ts.iter().for_each(|t| self.free_vars_in(t, out, seen)),
            Ty::Record(fs) => fs.iter().for_each(|(_, t)| self.free_vars_in(t, out, seen)),
            Ty::Sum(cs) => cs
                .iter()
                .flat_map(|(_, ts)| ts)
                .for_each(|t| self.free_vars_in(t, out, seen)),
            Ty::Fun(a, r) => {
                self.free_vars_in(a, out, seen);
                self.free_vars_in(r, out, seen)
            }
        }
    }

    /// Whether the fully substituted type would have more than `limit` nodes (computed in at most
    /// `limit` steps).
    pub(crate) fn size_exceeds(&self, t: &Ty, limit: usize) -> bool {
        let mut budget = limit;
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            if budget == 0 {
                return true;
            }
            budget -= 1;
            match t {
                Ty::Var(v) => {
                    if let Some(l) = &self.vars[*v as usize].link {
                        stack.push(l)
                    }
                }
                Ty::Prim(_) | Ty::Param(_) => {}
                Ty::Array(_, e) | Ty::Acc(e) => stack.push(e),
                Ty::Tuple(ts) => stack.extend(ts.iter()),
                Ty::Record(fs) => stack.extend(fs.iter().map(|(_, t)| t)),
                Ty::Sum(cs) => stack.extend(cs.iter().flat_map(|(_, ts)| ts)),
                Ty::Fun(a, r) => {
                    stack.push(a);
                    stack.push(r)
                }
            }
        }
        false
    }

    /// A type for an error message (abbreviated if it is huge).
    pub(crate) fn show(&self, t: &Ty) -> String {
        if self.size_exceeds(t, MAX_SHOWN) {
            "(a very large type)".into()
        } else {
            self.zonk(t).to_string()
        }
    }

    pub(crate) fn unify(&mut self, a: &Ty, b: &Ty) -> Result<(), UErr> {
        let a = self.shallow(a);
        let b = self.shallow(b);
        match (&a, &b) {
            (Ty::Var(x), Ty::Var(y)) if x == y => Ok(()),
            (Ty::Var(x), _) => self.bind(*x, &b),
            (_, Ty::Var(y)) => self.bind(*y, &a),
            (Ty::Prim(p), Ty::Prim(q)) if p == q => Ok(()),
            (Ty::Param(p), Ty::Param(q)) if p == q => Ok(()),
            // Sizes are unified but never fail (lenient); ranks are checked, by the structure.
            (Ty::Array(d1, x), Ty::Array(d2, y)) => {
                self.unify_size(d1, d2);
                self.unify(x, y)
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                for (x, y) in xs.iter().zip(ys) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            (Ty::Record(xs), Ty::Record(ys))
                if xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| x.0 == y.0) =>
            {
                for (x, y) in xs.iter().zip(ys) {
                    self.unify(&x.1, &y.1)?;
                }
                Ok(())
            }
            (Ty::Sum(xs), Ty::Sum(ys))
                if xs.len() == ys.len()
                    && xs
                        .iter()
                        .zip(ys)
                        .all(|(x, y)| x.0 == y.0 && x.1.len() == y.1.len()) =>
            {
                for (x, y) in xs.iter().zip(ys) {
                    for (a, b) in x.1.iter().zip(&y.1) {
                        self.unify(a, b)?;
                    }
                }
                Ok(())
            }
            (Ty::Fun(a1, r1), Ty::Fun(a2, r2)) => {
                self.unify(a1, a2)?;
                self.unify(r1, r2)
            }
            (Ty::Acc(x), Ty::Acc(y)) => self.unify(x, y),
            _ => Err(UErr::Mismatch(self.zonk(&a), self.zonk(&b))),
        }
    }

    fn occurs(&self, v: u32, t: &Ty) -> bool {
        let mut fv = vec![];
        self.free_vars(t, &mut fv);
        fv.contains(&v)
    }

    fn bind(&mut self, v: u32, t: &Ty) -> Result<(), UErr> {
        let info = self.vars[v as usize].clone();
        if let Ty::Var(w) = *t {
            // Merge v's constraints into w, then link.
            let wi = &mut self.vars[w as usize];
            wi.level = wi.level.min(info.level);
            if let Some(s) = info.prims {
                let ns = match wi.prims {
                    Some(s2) => s.inter(s2),
                    None => s,
                };
                if ns.is_empty() {
                    return Err(UErr::NotIn(s, Ty::Var(w)));
                }
                wi.prims = Some(ns);
            }
            wi.nofun |= info.nofun;
            let mut pending = vec![];
            for (i, ft) in &info.fields {
                match wi.fields.get(i) {
                    Some(t2) => pending.push((ft.clone(), t2.clone())),
                    None => {
                        wi.fields.insert(i.clone(), ft.clone());
                    }
                }
            }
            for (c, ts) in &info.constrs {
                match wi.constrs.get(c) {
                    Some(us) if us.len() == ts.len() => {
                        pending.extend(ts.iter().cloned().zip(us.iter().cloned()))
                    }
                    Some(_) => return Err(UErr::NoConstr(Ty::Var(w), c.clone(), ts.len())),
                    None => {
                        wi.constrs.insert(c.clone(), ts.clone());
                    }
                }
            }
            if !wi.constrs.is_empty() && (wi.prims.is_some() || !wi.fields.is_empty()) {
                let c = wi.constrs.keys().next().cloned().unwrap_or_default();
                return Err(UErr::NoConstr(Ty::Var(w), c, 0));
            }
            if wi.prims.is_some() && !wi.fields.is_empty() {
                let s = wi.prims.unwrap_or(PrimSet::prims());
                return Err(UErr::NotIn(s, Ty::Tuple(vec![])));
            }
            self.vars[v as usize].link = Some(t.clone());
            for (a, b) in pending {
                self.unify(&a, &b)?;
            }
            return Ok(());
        }
        if self.occurs(v, t) {
            return Err(UErr::Occurs);
        }
        if let Some(s) = info.prims {
            match t {
                Ty::Prim(p) if s.contains(*p) => {}
                _ => return Err(UErr::NotIn(s, self.zonk(t))),
            }
        }
        if info.nofun {
            self.require_nofun(t)?;
        }
        let mut fv = vec![];
        self.free_vars(t, &mut fv);
        for w in fv {
            let wi = &mut self.vars[w as usize];
            wi.level = wi.level.min(info.level);
        }
        self.vars[v as usize].link = Some(t.clone());
        for (c, ts) in &info.constrs {
            let shallow = self.shallow(t);
            let payload = match &shallow {
                Ty::Sum(cs) => cs.iter().find(|(d, _)| d == c).map(|(_, us)| us.clone()),
                _ => None,
            };
            match payload {
                Some(us) if us.len() == ts.len() => {
                    for (a, b) in us.iter().zip(ts) {
                        self.unify(a, b)?;
                    }
                }
                _ => return Err(UErr::NoConstr(self.zonk(&shallow), c.clone(), ts.len())),
            }
        }
        for (name, ft) in &info.fields {
            let shallow = self.shallow(t);
            match field_type(&shallow, name) {
                Some(t) => self.unify(&t, ft)?,
                None => return Err(UErr::NoField(self.zonk(&shallow), name.clone())),
            }
        }
        Ok(())
    }

    /// Require an equality type (one without functions).
    pub(crate) fn require_nofun(&mut self, t: &Ty) -> Result<(), UErr> {
        // The type is walked as a graph: each linked variable is followed once. A type built
        // by sharing (`p (p (… x))` with `p x = (x, x)`) has a tree size exponential in its
        // number of distinct nodes, and walking it as a tree took exponential time.
        let mut seen = std::collections::HashSet::new();
        let mut unbound = vec![];
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            match t {
                Ty::Var(w) => {
                    if seen.insert(*w) {
                        match &self.vars[*w as usize].link {
                            Some(l) => stack.push(l),
                            None => unbound.push(*w),
                        }
                    }
                }
                Ty::Fun(..) => return Err(UErr::NotEq(self.zonk(t))),
                Ty::Array(_, e) | Ty::Acc(e) => stack.push(e),
                // Reversed, so that the components are visited left to right.
                Ty::Tuple(ts) => stack.extend(ts.iter().rev()),
                Ty::Record(fs) => stack.extend(fs.iter().rev().map(|(_, t)| t)),
                Ty::Sum(cs) => stack.extend(cs.iter().rev().flat_map(|(_, ts)| ts.iter().rev())),
                // A lifted type parameter (`'^t`) may be a function: treated as one, as in Futhark.
                Ty::Param(p) if self.lifted.contains(p) => {
                    return Err(UErr::NotEq(Ty::Param(p.clone())))
                }
                Ty::Prim(_) | Ty::Param(_) => {}
            }
        }
        for w in unbound {
            self.vars[w as usize].nofun = true;
        }
        Ok(())
    }

    /// Turn a unification failure into a diagnostic about `expected` vs `found` at `span`.
    pub(crate) fn uerr_diag(&self, e: UErr, expected: &Ty, found: &Ty, span: Span) -> Diagnostic {
        if self.size_exceeds(expected, MAX_SHOWN) || self.size_exceeds(found, MAX_SHOWN) {
            return Diagnostic::error(
                span,
                format!(
                    "type mismatch: expected `{}`, found `{}`",
                    self.show(expected),
                    self.show(found)
                ),
            );
        }
        let ez = self.zonk(expected);
        let fz = self.zonk(found);
        let main = format!("type mismatch: expected `{ez}`, found `{fz}`");
        match e {
            UErr::Mismatch(a, b) => {
                let d = Diagnostic::error(span, main).with_label(format!("this has type `{fz}`"));
                if (a == ez && b == fz) || (a == fz && b == ez) {
                    d
                } else {
                    d.with_note(format!("`{a}` does not match `{b}`"))
                }
            }
            UErr::NotIn(set, t) => {
                if let Ty::Var(_) = ez {
                    Diagnostic::error(
                        span,
                        format!("type mismatch: expected {}, found `{fz}`", set.describe()),
                    )
                    .with_label(format!("this has type `{fz}`"))
                } else if let Ty::Var(_) = fz {
                    Diagnostic::error(
                        span,
                        format!("type mismatch: expected `{ez}`, found {}", set.describe()),
                    )
                    .with_label(format!("this has {}", set.describe()))
                } else {
                    Diagnostic::error(span, main)
                        .with_note(format!("`{t}` is not {}", set.describe()))
                }
            }
            UErr::NotEq(t) => Diagnostic::error(span, main).with_note(format!(
                "`{t}` is or contains a function type, which is not allowed here: values compared \
                 with `==`, array elements, results of `if`, loop parameters and non-lifted type \
                 parameters (`'t`) cannot be functions"
            )),
            UErr::NoConstr(t, c, n) => Diagnostic::error(
                span,
                format!("type mismatch: `{t}` has no constructor `#{c}` with {n} payload value(s)"),
            ),
            UErr::NoField(t, f) => {
                Diagnostic::error(span, format!("type `{t}` has no field `{f}`"))
            }
            UErr::Occurs => Diagnostic::error(
                span,
                format!("type mismatch: `{ez}` and `{fz}` would make an infinite type"),
            ),
        }
    }

    /// Unify, reporting a mismatch at `span` (the expression whose type is `found`).
    pub(crate) fn expect(
        &mut self,
        expected: &Ty,
        found: &Ty,
        span: Span,
    ) -> Result<(), Diagnostic> {
        match self.unify(expected, found) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.uerr_diag(e, expected, found, span)),
        }
    }

    /// Require `t` (the type of the expression at `span`) to be one of `set`.
    pub(crate) fn require(&mut self, set: PrimSet, t: &Ty, span: Span) -> Result<(), Diagnostic> {
        let v = self.fresh_prims(set, span);
        self.expect(&v, t, span)
    }
}

/// The type of field `name` of a tuple (numbered fields) or a record type (already shallow).
pub(crate) fn field_type(t: &Ty, name: &str) -> Option<Ty> {
    match t {
        Ty::Tuple(ts) => name.parse::<usize>().ok().and_then(|i| ts.get(i)).cloned(),
        Ty::Record(fs) => fs.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone()),
        _ => None,
    }
}
