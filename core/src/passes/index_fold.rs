//! Index folding: `let b = a[i, ...]`, where every index is a single point (so `b` is a row, or
//! a row of rows, of `a`), and a later `b[j, ...]` become `a[i, ..., j, ...]`.
//!
//! Why: a function applied to a row (`f xs[n]`) and indexing that row inside is the common way
//! to write a lookup (XSBench's `micro_xs egrid[n] xs[n] e`). Without folding, reverse mode
//! sees an index into a *local* array: the row's adjoint is a dense zero row with a few updates,
//! added in full to the adjoint of `a` (a row's worth of work per lookup instead of one element,
//! and on Vulkan a per-thread loop over the row). Folded, the index reads `a` itself, whose
//! adjoint in a map is an accumulator: one update per element read, as paper 000's sparse
//! adjoints intend. It also saves the interpreter a copy of the row.
//!
//! Why it is safe: `b` is a view of `a` (both are aliases of the same memory), so wherever `b`
//! may be used, nothing has consumed `a` or what `a` aliases; reading `a` at the same place is
//! as valid, and the index's variables are in scope there (they are in scope at `b`'s binding,
//! which encloses every use of `b`). The folded index checks the bounds of both parts, as the
//! two indexes did; `b` itself is left for [`dce`](super::dce) to remove when nothing else uses
//! it. Chains (`c = b[j]`, `d = c[k]`) fold to one index of `a`.
//!
//! An index of a `replicate` is folded too: `let z = replicate([n], v)` then an `unsafe`
//! `z[i]` (in bounds by construction, so no bounds check is lost) is `v` itself, and
//! `z[i, j]` of a `replicate([n], row)` is `row[j]`. Reverse mode starts its accumulations
//! from zero arrays that the reductions made of them ([`acc_to_reduce`](super::acc_to_reduce))
//! read element by element; folded, the zeros are neither made nor read.

use super::traverse::map_bodies_in;
use crate::ir::*;
use std::collections::HashMap;

/// Folds indexes of rows into indexes of the arrays the rows come from, in every function.
pub fn index_fold(mut p: Program) -> Program {
    for f in &mut p.funs {
        let mut rows: HashMap<VName, (VName, Vec<DimIndex>)> = HashMap::new();
        let mut replicates: HashMap<VName, (usize, SubExp)> = HashMap::new();
        map_bodies_in(&mut f.body, &mut |b: &mut Body| {
            for s in &b.stms {
                match (&s.exp, &s.pat.elems[..]) {
                    (Exp::Index(a, idx), [pe]) => {
                        let point = idx.iter().all(|d| matches!(d, DimIndex::Fix(_)));
                        if point && !idx.is_empty() && matches!(pe.ty, Type::Array { .. }) {
                            rows.insert(pe.name.clone(), (a.clone(), idx.clone()));
                        }
                    }
                    (Exp::Replicate { shape, value }, [pe]) => {
                        replicates.insert(pe.name.clone(), (shape.len(), value.clone()));
                    }
                    _ => {}
                }
            }
        });
        if !replicates.is_empty() {
            map_bodies_in(&mut f.body, &mut |b: &mut Body| {
                for s in &mut b.stms {
                    if let Some(e) = replicate_read(&s.exp, &s.attrs, &replicates) {
                        s.exp = e;
                    }
                }
            });
        }
        if rows.is_empty() {
            continue;
        }
        // The array each row finally comes from, and the whole index into it (bounded: names
        // are bound once, so a chain cannot cycle in valid IR).
        let keys: Vec<VName> = rows.keys().cloned().collect();
        for k in keys {
            let (mut a, mut idx) = rows[&k].clone();
            for _ in 0..rows.len() {
                match rows.get(&a) {
                    Some((a2, idx2)) if a2 != &k => {
                        idx = idx2.iter().chain(idx.iter()).cloned().collect();
                        a = a2.clone();
                    }
                    _ => break,
                }
            }
            rows.insert(k, (a, idx));
        }
        map_bodies_in(&mut f.body, &mut |b: &mut Body| {
            for s in &mut b.stms {
                if let Exp::Index(x, idx) = &mut s.exp {
                    if let Some((a, outer)) = rows.get(x) {
                        let whole: Vec<DimIndex> =
                            outer.iter().chain(idx.iter()).cloned().collect();
                        *x = a.clone();
                        *idx = whole;
                    }
                }
            }
        });
    }
    p
}

/// What an `unsafe` point index of a `replicate` (`replicates`: the arrays made by one, with
/// the rank of their replicated shape and the value) reads: the value, or the value indexed
/// by the remaining indexes.
fn replicate_read(
    e: &Exp,
    attrs: &Attrs,
    replicates: &HashMap<VName, (usize, SubExp)>,
) -> Option<Exp> {
    let Exp::Index(a, idx) = e else { return None };
    let (rank, value) = replicates.get(a)?;
    if !attrs.has("unsafe")
        || idx.len() < *rank
        || !idx.iter().all(|d| matches!(d, DimIndex::Fix(_)))
    {
        return None;
    }
    match (&idx[*rank..], value) {
        ([], v) => Some(Exp::SubExp(v.clone())),
        (rest, SubExp::Var(row)) => Some(Exp::Index(row.clone(), rest.to_vec())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::*;
    use crate::ir::check::check_program;
    use crate::passes::differential::rewrite_and_compare;
    use crate::prim::PrimType;

    /// The arrays of `p` that are rows (point indexes) of other arrays, and whether some index
    /// reads one of them.
    fn indexes_a_row(p: &Program) -> bool {
        p.funs.iter().any(|f| {
            let mut body = f.body.clone();
            let mut rows = std::collections::HashSet::new();
            map_bodies_in(&mut body, &mut |b: &mut Body| {
                for s in &b.stms {
                    if let (Exp::Index(_, idx), [pe]) = (&s.exp, &s.pat.elems[..]) {
                        if matches!(pe.ty, Type::Array { .. })
                            && idx.iter().all(|d| matches!(d, DimIndex::Fix(_)))
                        {
                            rows.insert(pe.name.clone());
                        }
                    }
                }
            });
            let mut found = false;
            map_bodies_in(&mut body, &mut |b: &mut Body| {
                for s in &b.stms {
                    found |= matches!(&s.exp, Exp::Index(a, _) if rows.contains(a));
                }
            });
            found
        })
    }

    /// `pick xss[i] j` (a function indexing a row it is given) reads `xss[i, j]`, in a map and
    /// at the top level; the results are the interpreter's before and after.
    #[test]
    fn an_index_of_a_row_reads_the_array() {
        let src = "
            def pick [m] (row: [m]f64) (j: i64) : f64 = row[j] * 2
            entry main [n][m] (xss: [n][m]f64) (is: [n]i64) (j: i64) : ([n]f64, f64) =
              (map2 (\\i k -> pick xss[i] (k % m)) is (iota n), pick xss[0] j)
        ";
        let (_, after) = rewrite_and_compare(
            src,
            "main",
            "[[1.0f64, 2.0f64, 3.0f64], [4.0f64, 5.0f64, 6.0f64]] [1i64, 0i64] 2i64",
            |p| super::super::dce::dce(index_fold(p)),
        );
        assert!(!indexes_a_row(&after), "{}", after);
    }

    /// Reverse mode of a lookup through a row (XSBench's shape: a loop in a map reading two
    /// elements of a row of a free array) updates the free array's accumulator element by
    /// element: no dense zero row is made inside the map.
    #[test]
    fn the_adjoint_of_a_row_lookup_is_sparse() {
        let src = "
            def interp [g] (row: [g]f64) (e: f64) : f64 =
              let lo = i64.f64 e in row[lo] + (e - f64.i64 lo) * (row[lo + 1] - row[lo])
            def f [n][g][l] (xss: [n][g]f64) (es: [l]f64) : [l]f64 =
              map (\\e -> loop s = 0 for j < n do s + interp xss[j] e) es
            entry main [n][g][l] (xss: [n][g]f64) (es: [l]f64) : [n][g]f64 =
              vjp (\\x -> f x es) xss (replicate l 1)
        ";
        let (_, after) = rewrite_and_compare(
            src,
            "main",
            "[[1.0f64, 2.0f64, 3.0f64], [4.0f64, 5.0f64, 6.0f64]] [0.5f64, 1.25f64]",
            |p| p,
        );
        let nested_replicates: usize = after
            .funs
            .iter()
            .map(|f| {
                f.body
                    .stms
                    .iter()
                    .map(|s| {
                        let mut e = s.exp.clone();
                        super::super::traverse::nested_bodies(&mut e)
                            .into_iter()
                            .map(|b| {
                                let mut n = 0;
                                map_bodies_in(b, &mut |b: &mut Body| {
                                    n += b
                                        .stms
                                        .iter()
                                        .filter(|s| matches!(s.exp, Exp::Replicate { .. }))
                                        .count();
                                });
                                n
                            })
                            .sum::<usize>()
                    })
                    .sum::<usize>()
            })
            .sum();
        assert_eq!(nested_replicates, 0, "{}", after);
    }

    /// An unchecked index of a `replicate` (as reverse mode's reductions read their zero
    /// arrays) is the replicated value, or an index of the replicated row, and the array is
    /// gone; a checked index keeps the array and its bounds check. The interpreter's results
    /// either way, and the checked one's out-of-bounds error.
    #[test]
    fn an_unchecked_index_of_a_replicate_is_its_value() {
        let src = |attr: &str| {
            format!(
                "entry main [k] (n: i64) (v: f64) (row: [k]f64) (is: []i64) : ([]f64, []f64) =
                   let z = replicate n v
                   let zz = replicate n row
                   in (map (\\i -> {attr} z[i] * 2) is, map (\\i -> {attr} zz[i, 1] + 1) is)"
            )
        };
        let args = "3i64 1.5f64 [4.0f64, 5.0f64] [2i64, 0i64]";
        let replicates = |p: &Program| {
            super::super::differential::count_exps(p, &|e| matches!(e, Exp::Replicate { .. }))
        };
        let (_, unchecked) = rewrite_and_compare(&src("#[unsafe]"), "main", args, |p| p);
        assert_eq!(replicates(&unchecked), 0, "{unchecked}");
        let (_, checked) = rewrite_and_compare(&src(""), "main", args, |p| p);
        assert_eq!(replicates(&checked), 2, "{checked}");
        let c = crate::compile("t.fut", &src("")).unwrap_or_else(|e| panic!("{}", e.render()));
        let oob = crate::values::parse_values(b"3i64 1.5f64 [4.0f64, 5.0f64] [3i64]").unwrap();
        assert!(c.run_interp("main", oob).is_err(), "index 3 of 3 elements");
    }

    /// A chain `r = a[i]; s = r[j]; x = s[k]` folds to `x = a[i, j, k]`.
    #[test]
    fn chains_fold_to_one_index() {
        let mut ns = NameSource::default();
        let f64t = Type::Prim(PrimType::F64);
        let a_t = arr(PrimType::F64, vec![i64c(2), i64c(3), i64c(4)]);
        let f = fun_sized(
            &mut ns,
            "main",
            true,
            vec![],
            |_, _| vec![("a".into(), a_t.clone())],
            vec![f64t.to_ext()],
            |b, ps| {
                let r = b.bind(
                    "r",
                    arr(PrimType::F64, vec![i64c(3), i64c(4)]),
                    Exp::Index(ps[0].clone(), vec![DimIndex::Fix(i64c(1))]),
                );
                let s = b.bind(
                    "s",
                    arr(PrimType::F64, vec![i64c(4)]),
                    Exp::Index(r, vec![DimIndex::Fix(i64c(2))]),
                );
                let x = b.bind(
                    "x",
                    f64t.clone(),
                    Exp::Index(s, vec![DimIndex::Fix(i64c(3))]),
                );
                vec![var(&x)]
            },
        );
        let p = program(ns, vec![f]);
        check_program(&p).unwrap();
        let q = crate::passes::dce::dce(index_fold(p));
        check_program(&q).unwrap();
        let stms = &q.funs[0].body.stms;
        assert_eq!(stms.len(), 1, "{}", q);
        let Exp::Index(a, idx) = &stms[0].exp else {
            panic!("not an index")
        };
        assert_eq!(a, &q.funs[0].params[0].name);
        assert_eq!(
            idx,
            &vec![
                DimIndex::Fix(i64c(1)),
                DimIndex::Fix(i64c(2)),
                DimIndex::Fix(i64c(3))
            ]
        );
    }
}
