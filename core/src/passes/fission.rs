//! Map fission of cheap array results: a `map` nested in a lambda whose function returns, next
//! to costly results (computed with SOACs or loops), an array made by a cheap inner `map` from
//! values the function computes, is split in two, so that the cheap array can be fused into
//! whatever consumes it instead of being stored for every row:
//!
//! ```text
//! let {ys, zs} = map(w, {xs}, \x -> let s = f x            -- a reduction, say
//!                                   let z = map(v, {as}, \a -> g a s)
//!                                   in {h s, z})
//! ==>
//! let {ys, ss} = map(w, {xs}, \x -> let s = f x in {h s, s})
//! let zs = map(w, {ss}, \s' -> let z = map(v, {as}, \a -> g a s') in z)
//! ```
//!
//! The inner map reads only names from outside the outer map, the outer lambda's params (the
//! second map takes the same input rows) and scalars the function computes (returned as extra
//! results, one element per row). Nothing is computed twice: the inner map moves, it is not
//! copied. Reverse-mode AD makes this shape from the adjoint of a matrix–vector product in a
//! map (GMM's `Q (x - μ)`): each row's adjoint scalar comes from a reduction, and the row of
//! the matrix's adjoint is the vector scaled by it. Fused (vertical fusion, rule 1) into the
//! map that adds the matrix adjoint into an accumulator, the row is never stored.
//!
//! Run after fusion (which makes this shape when it fuses a row's computation with the map
//! scaling a vector by it), then fusion again: the second part carries the attribute
//! [`MARK`], which keeps vertical fusion from fusing the first part back into it; it may fuse
//! into its own consumers, which then lose the mark, and [`unmark`] clears what is left, for
//! a last round of fusion (which fuses back a split that found no consumer).
//!
//! Applies to maps inside lambdas only (a host-level map split in two would be two kernels),
//! whose function keeps a SOAC or a loop after the split (otherwise its rows are as cheap to
//! recompute as the array would be to store), whose inner map's function is straight-line
//! scalar code without assertions, and whose function does not update in place a row the inner
//! map reads (the second map reads it again). Maps with accumulators are left alone.

use super::traverse::{free_vars, walk_stm, Substitute};
use crate::ir::*;
use crate::prim::PrimType;
use std::collections::HashMap;

/// The attribute of a map split off by [`fission`].
/// (Not an attribute a source program can write: attribute texts have no angle brackets.)
pub const MARK: &str = "<fission>";

/// Splits every map of the module doc's form, innermost first; returns the program and how
/// many maps were split.
pub fn fission(mut p: Program) -> (Program, usize) {
    let mut ns = std::mem::take(&mut p.name_source);
    let mut n = 0;
    for f in &mut p.funs {
        body(&mut ns, &mut f.body, false, &mut n);
    }
    p.name_source = ns;
    (p, n)
}

/// `p` without the [`MARK`] attributes.
pub fn unmark(mut p: Program) -> Program {
    super::traverse::map_bodies(&mut p, &mut |b| {
        for s in &mut b.stms {
            s.attrs.0.retain(|a| a != MARK);
        }
    });
    p
}

/// Rewrites the statements of `b` (`in_lambda`: `b` is code inside a SOAC or `with_acc`
/// lambda, at any depth).
fn body(ns: &mut NameSource, b: &mut Body, in_lambda: bool, n: &mut usize) {
    let mut out = Vec::with_capacity(b.stms.len());
    for mut s in std::mem::take(&mut b.stms) {
        for (nb, lam) in nested(&mut s.exp) {
            body(ns, nb, in_lambda || lam, n);
        }
        if in_lambda {
            let parts = split_all(ns, s);
            *n += parts.len() - 1;
            out.extend(parts);
        } else {
            out.push(s);
        }
    }
    b.stms = out;
}

/// `s` split as long as [`split`] applies (a first part may have another cheap result): the
/// first parts, then the second parts, each after the map computing its scalars.
fn split_all(ns: &mut NameSource, s: Stm) -> Vec<Stm> {
    match split(ns, &s) {
        Some((first, second)) => {
            let mut out = split_all(ns, first);
            out.push(second);
            out
        }
        None => vec![s],
    }
}

/// The bodies nested in `e`, each with whether it is the body of a lambda that runs per
/// element (a SOAC's or an operator's; a `with_acc`'s own lambda runs once, where the
/// `with_acc` is, so its body is code at the same level).
fn nested(e: &mut Exp) -> Vec<(&mut Body, bool)> {
    match e {
        Exp::If { then_b, else_b, .. } => vec![(then_b, false), (else_b, false)],
        Exp::Loop { body, .. } => vec![(body, false)],
        Exp::Soac(Soac::Map { lam, .. }) => vec![(&mut lam.body, true)],
        Exp::Soac(Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. }) => {
            vec![(&mut op.lam.body, true)]
        }
        Exp::WithAcc { inputs, lam } => {
            let mut v: Vec<(&mut Body, bool)> = inputs
                .iter_mut()
                .filter_map(|i| i.op.as_mut().map(|op| (&mut op.lam.body, true)))
                .collect();
            v.push((&mut lam.body, false));
            v
        }
        _ => vec![],
    }
}

fn is_acc(t: &Type) -> bool {
    matches!(t, Type::Acc { .. })
}

/// Whether a body computes something worth not recomputing per element: a SOAC or a loop
/// (at any depth, through branches).
fn costly(stms: &[Stm]) -> bool {
    stms.iter().any(|s| match &s.exp {
        Exp::Soac(_) | Exp::Loop { .. } | Exp::WithAcc { .. } | Exp::Apply { .. } => true,
        Exp::If { then_b, else_b, .. } => costly(&then_b.stms) || costly(&else_b.stms),
        _ => false,
    })
}

/// Whether a lambda is straight-line scalar code without assertions (no indexing either: an
/// array reaches it only as an input).
fn cheap(lam: &Lambda) -> bool {
    lam.params.iter().all(|p| matches!(p.ty, Type::Prim(_)))
        && lam.body.stms.iter().all(|s| {
            s.pat.elems.iter().all(|e| matches!(e.ty, Type::Prim(_))) && s.exp.is_scalar_op()
        })
}

/// `xs` without element `skip`.
fn without<T: Clone>(xs: &[T], skip: usize) -> Vec<T> {
    xs.iter()
        .enumerate()
        .filter(|&(j, _)| j != skip)
        .map(|(_, x)| x.clone())
        .collect()
}

/// The two maps replacing `s` (first the one computing the costly results and the scalars,
/// then the one computing the cheap array), when `s` has the module doc's form.
fn split(ns: &mut NameSource, s: &Stm) -> Option<(Stm, Stm)> {
    let Exp::Soac(Soac::Map { w, arrs, lam }) = &s.exp else {
        return None;
    };
    if lam.params.iter().any(|p| is_acc(&p.ty))
        || lam.ret.iter().any(is_acc)
        || lam.body.result.len() < 2
        || s.pat.elems.len() != lam.body.result.len()
    {
        return None;
    }
    let params: HashMap<&VName, usize> = lam
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| (&p.name, i))
        .collect();
    let bound: HashMap<&VName, &Type> = lam
        .body
        .stms
        .iter()
        .flat_map(|t| t.pat.elems.iter().map(|e| (&e.name, &e.ty)))
        .collect();
    for (r, res) in lam.body.result.iter().enumerate() {
        let Some(v) = res.as_var() else { continue };
        let Some(k) = lam
            .body
            .stms
            .iter()
            .position(|t| t.pat.elems.len() == 1 && &t.pat.elems[0].name == v)
        else {
            continue;
        };
        let inner = &lam.body.stms[k];
        let Exp::Soac(Soac::Map { lam: ilam, .. }) = &inner.exp else {
            continue;
        };
        if !cheap(ilam) || inner.pat.elems[0].ty.rank() == 0 {
            continue;
        }
        // `v` only as result `r`.
        let others = without(&lam.body.result, r);
        let rest = Body {
            stms: without(&lam.body.stms, k),
            result: Vec::new(),
        };
        if free_vars(&rest.stms, &others).contains(v) || !costly(&rest.stms) {
            continue;
        }
        // What the inner map reads from the function: params (rows) and scalars.
        let mut rows: Vec<usize> = Vec::new();
        let mut scalars: Vec<(VName, PrimType)> = Vec::new();
        let mut ok = true;
        let mut reads: Vec<VName> = free_vars(std::slice::from_ref(inner), &[])
            .into_iter()
            .collect();
        reads.sort_by_key(|n| n.id);
        for n in reads {
            if let Some(&i) = params.get(&n) {
                rows.push(i);
            } else if let Some(t) = bound.get(&n) {
                match t {
                    Type::Prim(p) => scalars.push((n.clone(), *p)),
                    _ => ok = false,
                }
            }
        }
        // The second map reads the rows again from the input arrays: the rest of the
        // function must not consume (update in place) those rows.
        let consumed = crate::passes::fusion::consumed_body(&rest);
        if !ok || rows.iter().any(|&i| consumed.contains(&lam.params[i].name)) {
            continue;
        }
        return Some(build(
            ns, s, w, arrs, lam, r, k, &rows, &scalars, rest.stms, others,
        ));
    }
    None
}

/// The two maps of [`split`] for result `r` bound by statement `k` of `lam`, reading the
/// params `rows` and the function's `scalars`.
#[allow(clippy::too_many_arguments)]
fn build(
    ns: &mut NameSource,
    s: &Stm,
    w: &SubExp,
    arrs: &[VName],
    lam: &Lambda,
    r: usize,
    k: usize,
    rows: &[usize],
    scalars: &[(VName, PrimType)],
    rest: Vec<Stm>,
    others: Vec<SubExp>,
) -> (Stm, Stm) {
    // First map: the other results, then the scalars that are not among them already.
    let mut result = others;
    let mut ret = without(&lam.ret, r);
    let mut pat = without(&s.pat.elems, r);
    let mut cols: Vec<VName> = Vec::with_capacity(scalars.len());
    for (n, t) in scalars {
        match result.iter().position(|x| x.as_var() == Some(n)) {
            Some(q) => cols.push(pat[q].name.clone()),
            None => {
                let col = ns.fresh_like(n);
                result.push(SubExp::Var(n.clone()));
                ret.push(Type::Prim(*t));
                pat.push(Param {
                    name: col.clone(),
                    ty: Type::array(*t, vec![w.clone()]),
                });
                cols.push(col);
            }
        }
    }
    let first = Stm {
        pat: Pat { elems: pat },
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            arrs: arrs.to_vec(),
            lam: Lambda {
                params: lam.params.clone(),
                body: Body { stms: rest, result },
                ret,
            },
        }),
        attrs: s.attrs.clone(),
        loc: s.loc.clone(),
    };
    // Second map: fresh params for the rows and the scalars, the inner map moved into it.
    let mut subst: HashMap<VName, SubExp> = HashMap::new();
    let mut params = Vec::with_capacity(rows.len() + scalars.len());
    let mut inputs = Vec::with_capacity(rows.len() + scalars.len());
    for &i in rows {
        let p = &lam.params[i];
        let np = Param {
            name: ns.fresh_like(&p.name),
            ty: p.ty.clone(),
        };
        subst.insert(p.name.clone(), SubExp::Var(np.name.clone()));
        params.push(np);
        inputs.push(arrs[i].clone());
    }
    for ((n, t), col) in scalars.iter().zip(&cols) {
        let np = Param {
            name: ns.fresh_like(n),
            ty: Type::Prim(*t),
        };
        subst.insert(n.clone(), SubExp::Var(np.name.clone()));
        params.push(np);
        inputs.push(col.clone());
    }
    let mut inner = lam.body.stms[k].clone();
    walk_stm(&mut Substitute { map: &subst }, &mut inner);
    let v = inner.pat.elems[0].name.clone();
    let second = Stm {
        pat: Pat {
            elems: vec![s.pat.elems[r].clone()],
        },
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            arrs: inputs,
            lam: Lambda {
                params,
                body: Body {
                    stms: vec![inner],
                    result: vec![SubExp::Var(v)],
                },
                ret: vec![lam.ret[r].clone()],
            },
        }),
        attrs: {
            let mut a = s.attrs.clone();
            a.0.push(MARK.to_string());
            a
        },
        loc: s.loc.clone(),
    };
    (first, second)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::rewrite_and_compare;
    use crate::passes::fusion::fuse;

    /// Per point `k`: the rows' dot products with `x[k]` (a reduction per row, the costly
    /// result) and `x[k]` scaled by each (the cheap array).
    const SCALED: &str = "
entry main [n][d] (q: [n][d][d]f64) (x: [n][d]f64) : ([n][d]f64, [n][d][d]f64) =
  unzip (map2 (\\qk xk -> unzip (map (\\row -> let s = f64.sum (map2 (*) row xk)
                                              in (s, map (\\v -> v * s) xk)) qk)) q x)
";
    const ARGS: &str =
        "[[[1.0, 2.0], [3.0, -4.0]], [[0.5, 0.0], [-1.0, 2.0]]] [[1.0, 2.0], [-3.0, 0.25]]";

    fn marked(p: &Program) -> usize {
        let mut n = 0;
        super::super::traverse::map_bodies(&mut p.clone(), &mut |b| {
            n += b.stms.iter().filter(|s| s.attrs.has(MARK)).count();
        });
        n
    }

    #[test]
    fn a_cheap_array_next_to_a_reduction_splits_off() {
        let mut split = 0;
        let (_, after) = rewrite_and_compare(SCALED, "main", ARGS, |p| {
            let (q, n) = fission(p);
            split = n;
            q
        });
        assert_eq!(split, 1);
        assert_eq!(marked(&after), 1);
    }

    #[test]
    fn the_split_off_map_fuses_into_its_consumer_not_back_into_its_producer() {
        // The scaled rows are summed by a map that also reads `t`, which indexes the dot
        // products freely: fusion cannot bring the rows' map and the sums' map together, so
        // the rows are stored. After fission and fusion the map made by the split is gone into
        // the sums' map.
        let src = "
entry main [n][d] (q: [n][d][d]f64) (x: [n][d]f64) : ([n][d]f64, [n][d]f64) =
  unzip (map2 (\\qk xk ->
           let (ss, rows) = unzip (map (\\row -> let s = f64.sum (map2 (*) row xk)
                                                in (s, map (\\v -> v * s) xk)) qk)
           let t = map (\\i -> ss[(i + 1) % d]) (iota d)
           in (ss, map2 (\\r u -> f64.sum r + u) rows t)) q x)
";
        let (_, after) = rewrite_and_compare(src, "main", ARGS, |p| {
            let (q, n) = fission(fuse(p));
            assert!(n >= 1, "nothing split");
            let q = fuse(q);
            assert_eq!(marked(&q), 0, "the split-off map did not fuse");
            unmark(q)
        });
        assert_eq!(marked(&after), 0);
    }

    #[test]
    fn host_level_maps_and_maps_reading_local_arrays_stay() {
        // At host level: two kernels would replace one.
        let host = "
entry main [d] (q: [d][d]f64) (x: [d]f64) : ([d]f64, [d][d]f64) =
  unzip (map (\\row -> let s = f64.sum (map2 (*) row x) in (s, map (\\v -> v * s) x)) q)
";
        let args = "[[1.0, 2.0], [3.0, -4.0]] [1.0, 2.0]";
        let (before, after) = rewrite_and_compare(host, "main", args, |p| fission(p).0);
        assert_eq!(before.funs, after.funs);
        // The cheap map reads an array the function computes (`y`), not only scalars.
        let local = "
entry main [n][d] (q: [n][d][d]f64) (x: [n][d]f64) : ([n][d]f64, [n][d][d]f64) =
  unzip (map2 (\\qk xk -> unzip (map (\\row -> let y = map2 (*) row xk
                                              let s = f64.sum y
                                              in (s, map (\\v -> v * s) y)) qk)) q x)
";
        let (before, after) = rewrite_and_compare(local, "main", ARGS, |p| fission(p).0);
        assert_eq!(before.funs, after.funs);
    }

    #[test]
    fn a_row_the_function_updates_in_place_is_not_read_again() {
        let src = "
entry main [n][d] (q: *[n][d][d]f64) (x: [n][d]f64) : [n][d]([d]f64, [d]f64) =
  map2 (\\(qk: *[d][d]f64) xk ->
          map (\\(row: *[d]f64) -> let s = f64.sum (map2 (*) row xk)
                                  let z = map (\\v -> v * s) row
                                  in (row with [0] = s, z)) qk) q x
";
        let c = crate::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        // As lowered, the update writes a copy of the row: the split is safe.
        assert_eq!(fission(c.ir.clone()).1, 1);
        // Where the function updates the row itself (a map over rows it may consume), the
        // second map would read the updated row: no split.
        let mut p = c.ir;
        super::super::traverse::map_bodies(&mut p, &mut |b| {
            let copies: HashMap<VName, VName> = b
                .stms
                .iter()
                .filter_map(|s| match &s.exp {
                    Exp::Copy(v) => Some((s.pat.elems[0].name.clone(), v.clone())),
                    _ => None,
                })
                .collect();
            for s in &mut b.stms {
                if let Exp::Update(a, ..) = &mut s.exp {
                    if let Some(v) = copies.get(a) {
                        *a = v.clone();
                    }
                }
            }
        });
        assert_eq!(fission(p).1, 0);
    }
}
