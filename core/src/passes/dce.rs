//! Dead code elimination.
//!
//! - Removes statements none of whose results is used and that have no effect. Everything is pure
//!   except `Assert`: a statement is kept if it is an `Assert`, contains one (in a branch, loop body
//!   or lambda), or calls a function that (transitively) contains one. Division by zero and other
//!   failing operations count as pure: unused, they are removed (as Futhark does).
//! - Removes unused results of `map` (with the lambda results computing them, and then lambda
//!   params and input arrays the lambda no longer uses) and of `if` (from both branches; a result
//!   that other results' types refer to as an existential size is kept).
//! - Removes loop parameters whose results are unused and whose values do not contribute to the
//!   results that are used (nor to the `while` condition, nor to the types of kept parameters).
//! - Does not remove unused results of reductions/scans/hist/scatter/with_acc, or unused functions
//!   (see [`inline`](super::inline) for those).

use super::traverse::{effectful_funs, has_effect, walk_stm, walk_type, UseCounter, Visitor};
use crate::ir::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Removes dead statements and dead results in every function.
pub fn dce(mut p: Program) -> Program {
    let eff = effectful_funs(&p);
    for f in &mut p.funs {
        let mut d = Dce {
            uses: super::traverse::fun_uses(f),
            eff: &eff,
        };
        d.body(&mut f.body);
    }
    p
}

struct Dce<'a> {
    uses: HashMap<VName, usize>,
    eff: &'a HashSet<Arc<str>>,
}

/// Subtracts the uses it visits.
struct Uncount<'a>(&'a mut HashMap<VName, usize>);

impl Visitor for Uncount<'_> {
    fn use_name(&mut self, v: &mut VName) {
        if let Some(n) = self.0.get_mut(v) {
            *n = n.saturating_sub(1);
        }
    }
}

impl Dce<'_> {
    fn count(&self, v: &VName) -> usize {
        self.uses.get(v).copied().unwrap_or(0)
    }

    fn uncount_subexp(&mut self, s: &SubExp) {
        Uncount(&mut self.uses).subexp(&mut s.clone());
    }

    fn body(&mut self, b: &mut Body) {
        let mut kept: Vec<Stm> = Vec::with_capacity(b.stms.len());
        for mut s in std::mem::take(&mut b.stms).into_iter().rev() {
            if self.is_dead(&s) {
                walk_stm(&mut Uncount(&mut self.uses), &mut s);
                continue;
            }
            self.drop_results(&mut s);
            for nb in super::traverse::nested_bodies(&mut s.exp) {
                self.body(nb);
            }
            self.drop_map_inputs(&mut s);
            kept.push(s);
        }
        kept.reverse();
        b.stms = kept;
    }

    fn is_dead(&self, s: &Stm) -> bool {
        if has_effect(&s.exp, self.eff) {
            return false;
        }
        // Uses of a result by the pattern's own types (existential sizes) do not keep it alive.
        let mut own = UseCounter::default();
        for pe in &s.pat.elems {
            walk_type(&mut own, &mut pe.ty.clone());
        }
        s.pat
            .elems
            .iter()
            .all(|pe| self.count(&pe.name) <= own.uses.get(&pe.name).copied().unwrap_or(0))
    }

    /// Removes unused results of `map`, `if` and loops.
    fn drop_results(&mut self, s: &mut Stm) {
        let n = s.pat.elems.len();
        let dead: Vec<bool> = s
            .pat
            .elems
            .iter()
            .map(|pe| self.count(&pe.name) == 0)
            .collect();
        if !dead.iter().any(|d| *d) {
            return;
        }
        match &mut s.exp {
            Exp::Soac(Soac::Map { lam, .. })
                if lam.ret.len() == n && lam.body.result.len() == n =>
            {
                for k in (0..n).rev() {
                    if dead[k] {
                        let r = lam.body.result.remove(k);
                        self.uncount_subexp(&r);
                        let mut t = lam.ret.remove(k);
                        walk_type(&mut Uncount(&mut self.uses), &mut t);
                        let mut pe = s.pat.elems.remove(k);
                        walk_type(&mut Uncount(&mut self.uses), &mut pe.ty);
                    }
                }
            }
            Exp::Loop { params, form, body } if params.len() == n && body.result.len() == n => {
                let keep = live_loop_params(&dead, params, form, body);
                for k in (0..n).rev() {
                    if !keep[k] {
                        let (mut prm, init) = params.remove(k);
                        self.uncount_subexp(&init);
                        walk_type(&mut Uncount(&mut self.uses), &mut prm.ty);
                        let r = body.result.remove(k);
                        self.uncount_subexp(&r);
                        let mut pe = s.pat.elems.remove(k);
                        walk_type(&mut Uncount(&mut self.uses), &mut pe.ty);
                    }
                }
            }
            Exp::If {
                then_b,
                else_b,
                ret,
                ..
            } if ret.len() == n && then_b.result.len() == n && else_b.result.len() == n => {
                let referenced: HashSet<usize> = ret
                    .iter()
                    .flat_map(|t| match t {
                        TypeBase::Array { shape, .. } => shape
                            .iter()
                            .filter_map(|d| match d {
                                ExtDim::Ext(i) => Some(*i),
                                _ => None,
                            })
                            .collect(),
                        _ => vec![],
                    })
                    .collect();
                let remove: Vec<bool> = (0..n)
                    .map(|k| dead[k] && !referenced.contains(&k))
                    .collect();
                if !remove.iter().any(|r| *r) {
                    return;
                }
                // New index of each kept result.
                let mut new_idx = vec![0; n];
                let mut j = 0;
                for k in 0..n {
                    new_idx[k] = j;
                    if !remove[k] {
                        j += 1;
                    }
                }
                for k in (0..n).rev() {
                    if remove[k] {
                        let a = then_b.result.remove(k);
                        let b = else_b.result.remove(k);
                        self.uncount_subexp(&a);
                        self.uncount_subexp(&b);
                        let mut t = ret.remove(k);
                        super::traverse::walk_ext_type(&mut Uncount(&mut self.uses), &mut t);
                        let mut pe = s.pat.elems.remove(k);
                        walk_type(&mut Uncount(&mut self.uses), &mut pe.ty);
                    }
                }
                for t in ret.iter_mut() {
                    if let TypeBase::Array { shape, .. } = t {
                        for d in shape.iter_mut() {
                            if let ExtDim::Ext(i) = d {
                                *i = new_idx.get(*i).copied().unwrap_or(*i);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Removes `map` inputs whose lambda param is unused.
    fn drop_map_inputs(&mut self, s: &mut Stm) {
        if let Exp::Soac(Soac::Map { arrs, lam, .. }) = &mut s.exp {
            if arrs.len() != lam.params.len() {
                return;
            }
            for k in (0..arrs.len()).rev() {
                if self.count(&lam.params[k].name) == 0 {
                    let mut pr = lam.params.remove(k);
                    walk_type(&mut Uncount(&mut self.uses), &mut pr.ty);
                    let a = arrs.remove(k);
                    self.uncount_subexp(&SubExp::Var(a));
                }
            }
        }
    }
}

/// Which loop parameters must stay, given which results are unused (`dead`): the parameters whose
/// results are used, the `while` condition, and every parameter that the body needs to compute
/// those (found by backward liveness through the body, to a fixpoint).
fn live_loop_params(
    dead: &[bool],
    params: &[(Param, SubExp)],
    form: &LoopForm,
    body: &Body,
) -> Vec<bool> {
    let n = params.len();
    let mut keep: Vec<bool> = dead.iter().map(|d| !d).collect();
    if let LoopForm::While(c) = form {
        for (k, (p, _)) in params.iter().enumerate() {
            if &p.name == c {
                keep[k] = true;
            }
        }
    }
    // Statements with an effect are always live: their operands too.
    let no_eff = HashSet::new();
    loop {
        let mut live: HashSet<VName> = HashSet::new();
        let mut uc = UseCounter::default();
        for k in 0..n {
            if keep[k] {
                uc.subexp(&mut body.result[k].clone());
                walk_type(&mut uc, &mut params[k].0.ty.clone());
            }
        }
        live.extend(uc.uses.into_keys());
        for s in body.stms.iter().rev() {
            let needed = has_effect(&s.exp, &no_eff)
                || matches!(s.exp, Exp::Apply { .. })
                || s.pat.elems.iter().any(|pe| live.contains(&pe.name));
            if needed {
                let mut uc = UseCounter::default();
                walk_stm(&mut uc, &mut s.clone());
                live.extend(uc.uses.into_keys());
            }
        }
        let mut changed = false;
        for k in 0..n {
            if !keep[k] && live.contains(&params[k].0.name) {
                keep[k] = true;
                changed = true;
            }
        }
        if !changed {
            return keep;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::*;
    use crate::ir::check::check_program;
    use crate::prim::{IntType, PrimType};

    #[test]
    fn removes_unused_chains_keeps_asserts() {
        let mut ns = NameSource::default();
        let f = fun(
            &mut ns,
            "main",
            true,
            &[],
            &[("x", f32t())],
            vec![f32t()],
            |b, ps| {
                let a = b.binop(BinOp::Add(PrimType::F32), var(&ps[0]), f32c(1.0));
                let _dead = b.binop(BinOp::Mul(PrimType::F32), var(&a), var(&a));
                let c = b.cmp(CmpOp::Lt(PrimType::F32), var(&ps[0]), f32c(0.0));
                b.assert(var(&c), "negative");
                let r = b.binop(BinOp::Sub(PrimType::F32), var(&ps[0]), f32c(2.0));
                vec![var(&r)]
            },
        );
        let p = dce(program(ns, vec![f]));
        check_program(&p).unwrap();
        let text = p.to_string();
        assert!(!text.contains("f32.add"), "{text}");
        assert!(!text.contains("f32.mul"), "{text}");
        assert!(text.contains("assert(c_"), "{text}");
        assert!(text.contains("f32.lt"), "{text}");
        assert_eq!(p.funs[0].body.stms.len(), 3);
    }

    #[test]
    fn keeps_if_containing_assert_and_calls_of_asserting_functions() {
        let mut ns = NameSource::default();
        let chk = fun(
            &mut ns,
            "chk",
            false,
            &[],
            &[("c", Type::Prim(PrimType::Bool))],
            vec![Type::Prim(PrimType::Bool)],
            |b, ps| {
                b.assert(var(&ps[0]), "bad");
                vec![var(&ps[0])]
            },
        );
        let f = fun(
            &mut ns,
            "main",
            true,
            &[],
            &[("c", Type::Prim(PrimType::Bool))],
            vec![f32t()],
            |b, ps| {
                let then_b = b.body(|b| {
                    b.assert(boolc(false), "no");
                    vec![f32c(1.0)]
                });
                let else_b = b.body(|_| vec![f32c(2.0)]);
                b.bind(
                    "unused",
                    f32t(),
                    Exp::If {
                        cond: var(&ps[0]),
                        then_b,
                        else_b,
                        ret: vec![f32t().to_ext()],
                    },
                );
                b.bind(
                    "unused2",
                    Type::Prim(PrimType::Bool),
                    Exp::Apply {
                        fun: "chk".into(),
                        args: vec![var(&ps[0])],
                        ret: vec![Type::Prim(PrimType::Bool).to_ext()],
                    },
                );
                vec![f32c(0.0)]
            },
        );
        let p = dce(program(ns, vec![chk, f]));
        check_program(&p).unwrap();
        assert_eq!(p.funs[1].body.stms.len(), 2);
    }

    #[test]
    fn removes_dead_map_results_and_inputs() {
        let mut ns = NameSource::default();
        let n = ns.fresh("n");
        let xs_t = arr(PrimType::F32, vec![var(&n)]);
        let f = fun_sized(
            &mut ns,
            "main",
            true,
            vec![n.clone()],
            |_, _| vec![("xs".into(), xs_t.clone()), ("ys".into(), xs_t.clone())],
            vec![xs_t.to_ext()],
            |b, ps| {
                let lam = b.lambda(
                    &[("x", f32t()), ("y", f32t())],
                    vec![f32t(), f32t()],
                    |b, lp| {
                        let a = b.binop(BinOp::Add(PrimType::F32), var(&lp[0]), f32c(1.0));
                        let m = b.binop(BinOp::Mul(PrimType::F32), var(&lp[1]), var(&lp[1]));
                        vec![var(&a), var(&m)]
                    },
                );
                let r = b.map(var(&ps[0]), vec![ps[1].clone(), ps[2].clone()], lam);
                vec![var(&r[0])]
            },
        );
        let p = dce(program(ns, vec![f]));
        check_program(&p).unwrap();
        let Exp::Soac(Soac::Map { arrs, lam, .. }) = &p.funs[0].body.stms[0].exp else {
            panic!()
        };
        assert_eq!(arrs.len(), 1);
        assert_eq!(lam.params.len(), 1);
        assert_eq!(lam.ret.len(), 1);
        assert_eq!(lam.body.stms.len(), 1);
        assert_eq!(p.funs[0].body.stms[0].pat.elems.len(), 1);
    }

    #[test]
    fn removes_dead_if_results_renumbering_existentials() {
        let mut ns = NameSource::default();
        let i64t = Type::Prim(PrimType::I64);
        let f = fun(
            &mut ns,
            "main",
            true,
            &[],
            &[("c", Type::Prim(PrimType::Bool))],
            vec![f32t()],
            |b, ps| {
                // if c then (1.0, 3, iota 3) else (2.0, 4, iota 4): the f32 result is dead.
                let then_b = b.body(|b| {
                    let xs = b.bind(
                        "xs",
                        arr(PrimType::I64, vec![i64c(3)]),
                        Exp::Iota {
                            n: i64c(3),
                            start: i64c(0),
                            stride: i64c(1),
                            it: IntType::I64,
                        },
                    );
                    vec![f32c(1.0), i64c(3), var(&xs)]
                });
                let else_b = b.body(|b| {
                    let xs = b.bind(
                        "xs",
                        arr(PrimType::I64, vec![i64c(4)]),
                        Exp::Iota {
                            n: i64c(4),
                            start: i64c(0),
                            stride: i64c(1),
                            it: IntType::I64,
                        },
                    );
                    vec![f32c(2.0), i64c(4), var(&xs)]
                });
                let m = b.fresh("m");
                let pat = vec![
                    Param {
                        name: b.fresh("dead"),
                        ty: f32t(),
                    },
                    Param {
                        name: m.clone(),
                        ty: i64t.clone(),
                    },
                    Param {
                        name: b.fresh("ys"),
                        ty: arr(PrimType::I64, vec![var(&m)]),
                    },
                ];
                let ys = pat[2].name.clone();
                b.push(super::super::traverse::mk_stm(
                    pat,
                    Exp::If {
                        cond: var(&ps[0]),
                        then_b,
                        else_b,
                        ret: vec![
                            f32t().to_ext(),
                            i64t.to_ext(),
                            ExtType::Array {
                                elem: PrimType::I64,
                                shape: vec![ExtDim::Ext(1)],
                            },
                        ],
                    },
                ));
                let op = binop_operator(b.ns, BinOp::Add(PrimType::I64), i64c(0), true);
                let s = b.reduce(var(&m), vec![ys], op);
                let r = b.conv(PrimType::I64, PrimType::F32, var(&s[0]));
                vec![var(&r)]
            },
        );
        let p = program(ns, vec![f]);
        check_program(&p).unwrap();
        let p = dce(p);
        check_program(&p).unwrap();
        let Exp::If { ret, then_b, .. } = &p.funs[0].body.stms[0].exp else {
            panic!()
        };
        assert_eq!(ret.len(), 2);
        assert_eq!(
            ret[1],
            ExtType::Array {
                elem: PrimType::I64,
                shape: vec![ExtDim::Ext(0)]
            }
        );
        assert_eq!(then_b.result.len(), 2);
    }
}

#[cfg(test)]
mod loop_tests {
    use super::*;
    use crate::ir::builder::*;
    use crate::ir::check::check_program;
    use crate::prim::{IntType, PrimType};

    /// `loop (a, j, k) = (0, 0, 0) for i < 10 do (a + J, j + 1, k * 2)` returning `a`, where `J` is
    /// `j` when `a_uses_j`, else `1`.
    fn prog(a_uses_j: bool) -> Program {
        let mut ns = NameSource::default();
        let i32t = Type::Prim(PrimType::I32);
        let f = fun(
            &mut ns,
            "main",
            true,
            &[],
            &[],
            vec![i32t.clone()],
            |b, _| {
                let a = b.param("a", i32t.clone());
                let j = b.param("j", i32t.clone());
                let k = b.param("k", i32t.clone());
                let (an, jn, kn) = (a.name.clone(), j.name.clone(), k.name.clone());
                let body = b.body(|b| {
                    let inc = if a_uses_j { var(&jn) } else { i32c(1) };
                    let a2 = b.binop(BinOp::Add(PrimType::I32), var(&an), inc);
                    let j2 = b.binop(BinOp::Add(PrimType::I32), var(&jn), i32c(1));
                    let k2 = b.binop(BinOp::Mul(PrimType::I32), var(&kn), i32c(2));
                    vec![var(&a2), var(&j2), var(&k2)]
                });
                let i = b.fresh("i");
                let r = b.bind_many(
                    &[
                        ("ra", i32t.clone()),
                        ("rj", i32t.clone()),
                        ("rk", i32t.clone()),
                    ],
                    Exp::Loop {
                        params: vec![(a, i32c(0)), (j, i32c(0)), (k, i32c(0))],
                        form: LoopForm::For {
                            i,
                            it: IntType::I32,
                            bound: i32c(10),
                        },
                        body,
                    },
                );
                vec![var(&r[0])]
            },
        );
        let p = program(ns, vec![f]);
        check_program(&p).unwrap();
        p
    }

    fn nparams(p: &Program) -> usize {
        match &p.funs[0].body.stms[0].exp {
            Exp::Loop { params, body, .. } => {
                assert_eq!(body.stms.len(), params.len());
                params.len()
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn removes_unneeded_loop_params() {
        let p = dce(prog(false));
        check_program(&p).unwrap();
        assert_eq!(nparams(&p), 1);
    }

    #[test]
    fn keeps_loop_params_that_used_results_depend_on() {
        let p = dce(prog(true));
        check_program(&p).unwrap();
        assert_eq!(nparams(&p), 2);
    }
}
