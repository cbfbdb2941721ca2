//! Fresh copies of scopes for re-execution: the return sweep of a nested scope re-executes its
//! forward sweep, and every variable in the IR is bound once, so the copy gets fresh names.

use super::Rev;
use crate::ir::*;
use crate::passes::traverse::{walk_body, Visitor};
use std::collections::HashMap;

struct Renamer<'a> {
    ns: &'a mut NameSource,
    map: HashMap<VName, VName>,
}

impl Visitor for Renamer<'_> {
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

impl Rev<'_> {
    /// `lam` with every name it binds replaced by a fresh one.
    pub fn rename_lambda(&mut self, lam: &Lambda) -> Lambda {
        let mut l = lam.clone();
        let mut r = Renamer {
            ns: self.ns,
            map: HashMap::new(),
        };
        crate::passes::traverse::walk_lambda(&mut r, &mut l);
        let map = r.map;
        self.carry_over(&map);
        l
    }

    /// `body` with every name it binds replaced by a fresh one.
    pub fn rename_body(&mut self, body: &Body) -> Body {
        self.rename_body_subst(body, HashMap::new())
    }

    /// [`Rev::rename_body`], also replacing the free variables in `subst`.
    pub fn rename_body_subst(&mut self, body: &Body, subst: HashMap<VName, VName>) -> Body {
        let mut b = body.clone();
        let mut r = Renamer {
            ns: self.ns,
            map: subst,
        };
        walk_body(&mut r, &mut b);
        let map = r.map;
        self.carry_over(&map);
        b
    }

    /// A copy's names inherit what [`super::loops::Carrying`] found of the names they replace
    /// (the same values, computed again), so that a copy of an inert loop is inert too.
    fn carry_over(&mut self, map: &HashMap<VName, VName>) {
        if let Some(c) = &mut self.carrying {
            for (old, new) in map {
                if c.known.contains(old) {
                    c.known.insert(new.clone());
                    if c.carry.contains(old) {
                        c.carry.insert(new.clone());
                    }
                }
            }
        }
    }
}
