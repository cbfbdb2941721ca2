//! Map nests: the context a statement is flattened in.
//!
//! A [`Nest`] records the `map`s (and the cheap statements sunk into them) that surround the
//! statement being flattened: one [`Level`] per map (a thread index and a width), and, in
//! order, how every name of the nest's lambdas gets its per-thread value ([`Entry`]). A kernel
//! built in the nest ([`Nest::instantiate`]) gets fresh thread indices and a prologue that
//! recomputes, with fresh names, exactly the entries its code needs; so one nest can produce
//! several kernels (map distribution) and the program still binds every name once.

use crate::ir::{DimIndex, Exp, Param, Stm, SubExp, Type, VName};
use crate::ir::{Lambda, NameSource};
use crate::passes::traverse::{free_vars, walk_stm, Rename, Visitor};
use std::collections::{HashMap, HashSet};

/// One map of the nest: its thread index (an `i64`) and its width.
#[derive(Clone, Debug)]
pub(super) struct Level {
    pub gtid: VName,
    pub width: SubExp,
}

/// How a name of the nest gets its per-thread value.
#[derive(Clone, Debug)]
pub(super) enum Entry {
    /// `param = arr[idx...]`, the indices being thread indices of the nest's levels.
    Index {
        param: Param,
        arr: VName,
        idx: Vec<VName>,
    },
    /// `param = value` (an accumulator passed to every iteration of a map).
    Same { param: Param, value: SubExp },
    /// A cheap statement of a lambda body, recomputed by every kernel that needs it.
    Stm(Stm),
}

impl Entry {
    /// The statement binding this entry's name at a point of the nest, the thread indices
    /// named as the levels' `gtid`s.
    pub fn stm(&self) -> Stm {
        match self {
            Entry::Index { param, arr, idx } => {
                let mut stm = crate::passes::traverse::mk_stm(
                    vec![param.clone()],
                    Exp::Index(
                        arr.clone(),
                        idx.iter()
                            .map(|i| DimIndex::Fix(SubExp::Var(i.clone())))
                            .collect(),
                    ),
                );
                // In bounds by construction: each index is a thread index of a level whose
                // width is the array's dimension (a `map`'s input, or a value the nest
                // expanded), so no bounds check is compiled.
                stm.attrs = crate::ir::Attrs(vec!["unsafe".into()]);
                stm
            }
            Entry::Same { param, value } => {
                crate::passes::traverse::mk_stm(vec![param.clone()], Exp::SubExp(value.clone()))
            }
            Entry::Stm(s) => s.clone(),
        }
    }

    fn binds(&self) -> Vec<VName> {
        match self {
            Entry::Index { param, .. } | Entry::Same { param, .. } => vec![param.name.clone()],
            Entry::Stm(s) => s.pat.elems.iter().map(|p| p.name.clone()).collect(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct Nest {
    pub levels: Vec<Level>,
    pub entries: Vec<Entry>,
}

impl Nest {
    /// Every name the nest binds (thread indices included): a value mentioning one of these is
    /// not invariant to the nest.
    pub fn bound(&self) -> HashSet<VName> {
        let mut s: HashSet<VName> = self.levels.iter().map(|l| l.gtid.clone()).collect();
        for e in &self.entries {
            s.extend(e.binds());
        }
        s
    }

    /// Whether `t`'s shape is known outside the nest.
    pub fn invariant_type(&self, t: &Type, bound: &HashSet<VName>) -> bool {
        t.shape().iter().all(|d| invariant(d, bound))
    }

    /// The nest with one more map level: thread index `gtid` over `width`, binding each of
    /// `lam`'s params to the row `gtid` of the corresponding array of `arrs` (accumulators are
    /// passed as they are).
    pub fn push_map(
        &self,
        gtid: VName,
        width: SubExp,
        arrs: &[VName],
        lam: &Lambda,
        types: &Types,
    ) -> Nest {
        let mut n = self.clone();
        n.levels.push(Level {
            gtid: gtid.clone(),
            width,
        });
        for (p, a) in lam.params.iter().zip(arrs) {
            n.entries
                .push(if matches!(types.get(a), Some(Type::Acc { .. })) {
                    Entry::Same {
                        param: p.clone(),
                        value: SubExp::Var(a.clone()),
                    }
                } else {
                    Entry::Index {
                        param: p.clone(),
                        arr: a.clone(),
                        idx: vec![gtid.clone()],
                    }
                });
        }
        n
    }

    /// Binds `param`, a value of each thread of the nest, to the thread's element of the host
    /// array `host` that holds it expanded (an accumulator is the host accumulator itself).
    pub fn import(&mut self, param: &Param, host: &VName) {
        let entry = if matches!(param.ty, Type::Acc { .. }) {
            Entry::Same {
                param: param.clone(),
                value: SubExp::Var(host.clone()),
            }
        } else {
            Entry::Index {
                param: param.clone(),
                arr: host.clone(),
                idx: self.gtids(),
            }
        };
        self.entries.push(entry);
    }

    /// The thread indices of all levels, outermost first.
    pub fn gtids(&self) -> Vec<VName> {
        self.levels.iter().map(|l| l.gtid.clone()).collect()
    }

    /// The nest's widths, outermost first.
    pub fn widths(&self) -> Vec<SubExp> {
        self.levels.iter().map(|l| l.width.clone()).collect()
    }

    /// `t` with the nest's widths in front (accumulators stay as they are).
    pub fn expand(&self, t: &Type) -> Type {
        if matches!(t, Type::Acc { .. }) {
            return t.clone();
        }
        self.levels
            .iter()
            .rev()
            .fold(t.clone(), |t, l| t.array_of(l.width.clone()))
    }

    /// A kernel's view of the nest: fresh thread indices for the levels and a prologue that
    /// binds (under fresh names) the entries that `needed` (the free variables of the kernel's
    /// own code) depend on.
    pub fn instantiate(&self, ns: &mut NameSource, needed: &HashSet<VName>) -> Instance {
        let keep = self.needed_entries(needed);
        let mut map: HashMap<VName, VName> = HashMap::new();
        let space: Vec<(VName, SubExp)> = self
            .levels
            .iter()
            .map(|l| {
                let g = ns.fresh_like(&l.gtid);
                map.insert(l.gtid.clone(), g.clone());
                (g, l.width.clone())
            })
            .collect();
        let mut prologue = Vec::new();
        for (e, _) in self.entries.iter().zip(&keep).filter(|(_, k)| **k) {
            let mut stm = e.stm();
            rename_fresh(ns, &mut map, &mut stm);
            prologue.push(stm);
        }
        Instance {
            space,
            prologue,
            renaming: map,
        }
    }

    /// Which entries code whose free variables are `needed` depends on (one flag per entry):
    /// only those are bound where the code runs (an array that an update consumed is not
    /// available any more).
    pub fn needed_entries(&self, needed: &HashSet<VName>) -> Vec<bool> {
        let mut need = needed.clone();
        let mut keep = vec![false; self.entries.len()];
        for (k, e) in self.entries.iter().enumerate().rev() {
            if e.binds().iter().any(|b| need.contains(b)) {
                keep[k] = true;
                match e {
                    Entry::Index { arr, param, .. } => {
                        need.insert(arr.clone());
                        need.extend(shape_vars(&param.ty));
                    }
                    Entry::Same { value, param } => {
                        need.extend(value.as_var().cloned());
                        need.extend(shape_vars(&param.ty));
                    }
                    Entry::Stm(s) => need.extend(free_vars(std::slice::from_ref(s), &[])),
                }
            }
        }
        keep
    }
}

/// A kernel's view of a nest ([`Nest::instantiate`]).
pub(super) struct Instance {
    /// The kernel's space: fresh thread indices and the nest's widths.
    pub space: Vec<(VName, SubExp)>,
    /// Statements binding the nest's values the kernel needs, under fresh names.
    pub prologue: Vec<Stm>,
    /// The nest's names to the kernel's: to apply to the kernel's own code.
    pub renaming: HashMap<VName, VName>,
}

/// The type of every name.
pub(super) type Types = HashMap<VName, Type>;

fn shape_vars(t: &Type) -> impl Iterator<Item = VName> + '_ {
    t.shape().iter().filter_map(|d| d.as_var().cloned())
}

/// Whether an operator (its lambda and neutral elements) uses none of `bound`: the same for
/// every thread of the nest that binds them.
pub(super) fn invariant_operator(op: &crate::ir::Operator, bound: &HashSet<VName>) -> bool {
    let mut f = free_vars(&op.lam.body.stms, &op.lam.body.result);
    f.extend(op.neutral.iter().filter_map(|n| n.as_var().cloned()));
    f.iter().all(|v| !bound.contains(v))
}

/// Whether a size is known outside the nest (binds `bound`).
pub(super) fn invariant(d: &SubExp, bound: &HashSet<VName>) -> bool {
    d.as_var().is_none_or(|v| !bound.contains(v))
}

/// Renames the uses in `stm` by `map`, then gives each name `stm` binds (at any depth) a fresh
/// name, recorded in `map`.
pub(super) fn rename_fresh(ns: &mut NameSource, map: &mut HashMap<VName, VName>, stm: &mut Stm) {
    struct Fresh<'a> {
        ns: &'a mut NameSource,
        map: &'a mut HashMap<VName, VName>,
    }
    impl Visitor for Fresh<'_> {
        fn use_name(&mut self, v: &mut VName) {
            if let Some(n) = self.map.get(v) {
                *v = n.clone();
            }
        }
        fn bind_name(&mut self, v: &mut VName) {
            let n = self.ns.fresh_like(v);
            self.map.insert(v.clone(), n.clone());
            *v = n;
        }
    }
    walk_stm(&mut Fresh { ns, map }, stm);
}

/// Renames uses (and bindings) in `stms` by `map`.
pub(super) fn rename_stms(map: &HashMap<VName, VName>, stms: &mut [Stm]) {
    let mut r = Rename { map };
    for s in stms {
        walk_stm(&mut r, s);
    }
}

/// Renames a variable operand by `map`.
pub(super) fn rename_se(map: &HashMap<VName, VName>, se: &SubExp) -> SubExp {
    match se {
        SubExp::Var(v) => SubExp::Var(map.get(v).cloned().unwrap_or_else(|| v.clone())),
        c => c.clone(),
    }
}
