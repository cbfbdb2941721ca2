//! `scan`/`reduce` over rows with an operator that works column by column: the elements are
//! tuples of scalars and rows (`[m]t`), and the operator, once its rows are replaced by scalars
//! ([`scalarise`]: a `map` over the rows becomes its body, `if`s with row results scalar `if`s),
//! computes each column of its row results from the same column of its row arguments and the
//! scalars. AD's segmented scans for vectorised histograms are of this form:
//! `(f1, v1) ⊕ (f2, v2) = (f1 || f2, if f2 then v2 else map2 (*) v1 v2)`. It becomes
//!
//! ```text
//! scalars: scan(r, {flags}, (f1, f2) -> f1 || f2)                    -- the scalar part alone
//! rows:    transpose (map(m, {transpose vs}, \col -> scan(r, {flags, col}, scalar ⊕)))
//! ```
//!
//! which backends that scan only scalars (one thread per column here) can run. Operators whose
//! scalar results depend on the rows are left alone.

use super::traverse::{mk_stm, rewrite_host_stms, uses_in_exp};
use crate::ir::builder::{var, Builder};
use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// Rewrites every `scan` and `reduce` of the supported form.
pub fn scan_columns(p: Program) -> Program {
    scan_columns_where(p, &|_| true)
}

/// [`scan_columns`] for the operators for which `wanted` holds.
pub fn scan_columns_where(p: Program, wanted: &dyn Fn(&Operator) -> bool) -> Program {
    rewrite_host_stms(p, &mut |ns, s| match &s.exp {
        Exp::Soac(Soac::Scan { op, .. } | Soac::Reduce { op, .. }) if wanted(op) => rewrite(ns, s),
        _ => None,
    })
}

/// `lam` with its row parameters (and results) of length `m` made scalars, or `None` when it
/// does anything with a row but map over it element by element.
pub fn scalarise(lam: &Lambda) -> Option<Lambda> {
    let mut rows: HashSet<VName> = HashSet::new();
    let mut params = Vec::with_capacity(lam.params.len());
    for p in &lam.params {
        match &p.ty {
            Type::Prim(_) => params.push(p.clone()),
            Type::Array { elem, shape } if shape.len() == 1 => {
                rows.insert(p.name.clone());
                params.push(Param {
                    name: p.name.clone(),
                    ty: Type::Prim(*elem),
                });
            }
            _ => return None,
        }
    }
    let b = scalarise_body(&lam.body, &mut rows)?;
    let ret = lam
        .ret
        .iter()
        .map(|t| t.elem().map(Type::Prim))
        .collect::<Option<Vec<_>>>()?;
    Some(Lambda {
        params,
        body: b,
        ret,
    })
}

/// `rows`: the row variables, which become scalars of the same name.
fn scalarise_body(b: &Body, rows: &mut HashSet<VName>) -> Option<Body> {
    let mut stms = Vec::new();
    for s in &b.stms {
        match &s.exp {
            Exp::Soac(Soac::Map { arrs, lam, .. }) if arrs.iter().all(|a| rows.contains(a)) => {
                // The map's body on scalars: its parameters are the rows' scalars.
                for (p, a) in lam.params.iter().zip(arrs) {
                    stms.push(mk_stm(vec![p.clone()], Exp::SubExp(var(a))));
                }
                stms.extend(lam.body.stms.iter().cloned());
                for (pe, r) in s.pat.elems.iter().zip(&lam.body.result) {
                    rows.insert(pe.name.clone());
                    stms.push(mk_stm(
                        vec![Param {
                            name: pe.name.clone(),
                            ty: Type::Prim(pe.ty.elem()?),
                        }],
                        Exp::SubExp(r.clone()),
                    ));
                }
            }
            Exp::If {
                cond,
                then_b,
                else_b,
                ret,
            } => {
                if let SubExp::Var(c) = cond {
                    if rows.contains(c) {
                        return None;
                    }
                }
                let t = scalarise_body(then_b, rows)?;
                let e = scalarise_body(else_b, rows)?;
                let mut pat = Vec::new();
                let mut new_ret = Vec::new();
                for (pe, r) in s.pat.elems.iter().zip(ret) {
                    if pe.ty.rank() == 1 {
                        rows.insert(pe.name.clone());
                    } else if pe.ty.rank() > 1 {
                        return None;
                    }
                    let t = pe.ty.elem()?;
                    pat.push(Param {
                        name: pe.name.clone(),
                        ty: Type::Prim(t),
                    });
                    new_ret.push(match r {
                        ExtType::Prim(_) | ExtType::Array { .. } => ExtType::Prim(t),
                        _ => return None,
                    });
                }
                let mut ns = s.clone();
                ns.pat = Pat { elems: pat };
                ns.exp = Exp::If {
                    cond: cond.clone(),
                    then_b: t,
                    else_b: e,
                    ret: new_ret,
                };
                stms.push(ns);
            }
            e => {
                // Scalar code not touching the rows.
                if uses_in_exp(e).iter().any(|v| rows.contains(v))
                    || s.pat.elems.iter().any(|p| p.ty.rank() > 0)
                {
                    return None;
                }
                stms.push(s.clone());
            }
        }
    }
    Some(Body {
        stms,
        result: b.result.clone(),
    })
}

/// The statements of `lam` that the results `keep` need, as a lambda of the parameters `params`
/// (indices) returning those results; `None` if they need another parameter.
fn slice(lam: &Lambda, params: &[usize], keep: &[usize]) -> Option<Lambda> {
    let mut needed: HashSet<VName> = HashSet::new();
    for &i in keep {
        if let SubExp::Var(v) = &lam.body.result[i] {
            needed.insert(v.clone());
        }
    }
    let mut kept = vec![false; lam.body.stms.len()];
    for (j, s) in lam.body.stms.iter().enumerate().rev() {
        if s.pat.elems.iter().any(|p| needed.contains(&p.name)) {
            kept[j] = true;
            needed.extend(uses_in_exp(&s.exp));
        }
    }
    for (i, p) in lam.params.iter().enumerate() {
        if !params.contains(&i) && needed.contains(&p.name) {
            return None;
        }
    }
    Some(Lambda {
        params: params.iter().map(|&i| lam.params[i].clone()).collect(),
        body: Body {
            stms: lam
                .body
                .stms
                .iter()
                .zip(&kept)
                .filter(|(_, &k)| k)
                .map(|(s, _)| s.clone())
                .collect(),
            result: keep.iter().map(|&i| lam.body.result[i].clone()).collect(),
        },
        ret: keep.iter().map(|&i| lam.ret[i].clone()).collect(),
    })
}

fn rewrite(ns: &mut NameSource, s: &Stm) -> Option<Vec<Stm>> {
    let (w, arrs, op, scan) = match &s.exp {
        Exp::Soac(Soac::Scan { w, arrs, op }) => (w, arrs, op, true),
        Exp::Soac(Soac::Reduce { w, arrs, op }) => (w, arrs, op, false),
        _ => return None,
    };
    let k = arrs.len();
    if op.lam.params.len() != 2 * k || op.neutral.len() != k || s.pat.elems.len() != k {
        return None;
    }
    // Which components are rows ([m]t), and m.
    let mut is_row = Vec::with_capacity(k);
    let mut m = None;
    for p in &op.lam.params[..k] {
        match &p.ty {
            Type::Prim(_) => is_row.push(false),
            Type::Array { shape, .. } if shape.len() == 1 => {
                is_row.push(true);
                m = Some(shape[0].clone());
            }
            _ => return None,
        }
    }
    let m = m?;
    if (0..k).any(|i| is_row[i] && op.neutral[i].as_var().is_none()) {
        return None;
    }
    let sop = scalarise(&op.lam)?;
    let scalars: Vec<usize> = (0..k).filter(|&i| !is_row[i]).collect();
    let rows_ix: Vec<usize> = (0..k).filter(|&i| is_row[i]).collect();
    let mut b = Builder::new(ns);
    let mut stms_out: Vec<Stm> = Vec::new();
    // The scalar components alone.
    let mut results: HashMap<usize, VName> = HashMap::new();
    if !scalars.is_empty() {
        let mut pidx: Vec<usize> = scalars.clone();
        pidx.extend(scalars.iter().map(|&i| k + i));
        let slam = slice(&sop, &pidx, &scalars)?;
        let sarrs: Vec<VName> = scalars.iter().map(|&i| arrs[i].clone()).collect();
        let sneutral: Vec<SubExp> = scalars.iter().map(|&i| op.neutral[i].clone()).collect();
        let pat: Vec<(&str, Type)> = scalars
            .iter()
            .map(|&i| ("part", s.pat.elems[i].ty.clone()))
            .collect();
        let soac = if scan {
            Soac::Scan {
                w: w.clone(),
                arrs: sarrs,
                op: Operator {
                    lam: super::traverse::fresh_lambda(b.ns, &slam),
                    neutral: sneutral,
                    commutative: op.commutative,
                },
            }
        } else {
            Soac::Reduce {
                w: w.clone(),
                arrs: sarrs,
                op: Operator {
                    lam: super::traverse::fresh_lambda(b.ns, &slam),
                    neutral: sneutral,
                    commutative: op.commutative,
                },
            }
        };
        let r = b.bind_many(&pat, Exp::Soac(soac));
        for (&i, v) in scalars.iter().zip(r) {
            results.insert(i, v);
        }
    }
    // The rows: one scan (or reduce) per column.
    let iota = b.bind(
        "j",
        Type::Array {
            elem: crate::prim::PrimType::Int(crate::prim::IntType::I64),
            shape: vec![m.clone()],
        },
        Exp::Iota {
            n: m.clone(),
            start: SubExp::Const(crate::prim::PrimValue::I64(0)),
            stride: SubExp::Const(crate::prim::PrimValue::I64(1)),
            it: crate::prim::IntType::I64,
        },
    );
    let mut cols_in = vec![iota];
    let mut col_params: Vec<(&str, Type)> = vec![(
        "j",
        Type::Prim(crate::prim::PrimType::Int(crate::prim::IntType::I64)),
    )];
    for &i in &rows_ix {
        let t = op.lam.params[i].ty.elem()?;
        let tr = b.bind(
            "cols",
            Type::Array {
                elem: t,
                shape: vec![m.clone(), w.clone()],
            },
            Exp::Rearrange(vec![1, 0], arrs[i].clone()),
        );
        cols_in.push(tr);
        col_params.push((
            "col",
            Type::Array {
                elem: t,
                shape: vec![w.clone()],
            },
        ));
    }
    let col_ret: Vec<Type> = rows_ix
        .iter()
        .map(|&i| {
            let t = op.lam.params[i]
                .ty
                .elem()
                .unwrap_or(crate::prim::PrimType::Bool);
            if scan {
                Type::Array {
                    elem: t,
                    shape: vec![w.clone()],
                }
            } else {
                Type::Prim(t)
            }
        })
        .collect();
    let sop_fresh = super::traverse::fresh_lambda(b.ns, &sop);
    let col_lam = b.lambda(&col_params, col_ret, |b, ps| {
        let mut ins = Vec::with_capacity(k);
        let mut neutral_c = Vec::with_capacity(k);
        let mut ri = 1;
        for i in 0..k {
            if is_row[i] {
                ins.push(ps[ri].clone());
                ri += 1;
                // Column j's neutral element: element j of the neutral row.
                let SubExp::Var(ne) = &op.neutral[i] else {
                    return vec![];
                };
                let t = sop_fresh.params[i].ty.clone();
                neutral_c.push(var(&b.index(t, ne, vec![var(&ps[0])])));
            } else {
                ins.push(arrs[i].clone());
                neutral_c.push(op.neutral[i].clone());
            }
        }
        let pat: Vec<(&str, Type)> = sop_fresh
            .ret
            .iter()
            .map(|t| {
                if scan {
                    ("c", t.array_of(w.clone()))
                } else {
                    ("c", t.clone())
                }
            })
            .collect();
        let operator = Operator {
            lam: sop_fresh.clone(),
            neutral: neutral_c,
            commutative: op.commutative,
        };
        let soac = if scan {
            Soac::Scan {
                w: w.clone(),
                arrs: ins,
                op: operator,
            }
        } else {
            Soac::Reduce {
                w: w.clone(),
                arrs: ins,
                op: operator,
            }
        };
        let r = b.bind_many(&pat, Exp::Soac(soac));
        rows_ix.iter().map(|&i| var(&r[i])).collect()
    });
    let per_col = b.map(m.clone(), cols_in, col_lam);
    for (&i, pc) in rows_ix.iter().zip(per_col) {
        let v = if scan {
            let t = op.lam.params[i].ty.elem()?;
            b.bind(
                "rows",
                Type::Array {
                    elem: t,
                    shape: vec![w.clone(), m.clone()],
                },
                Exp::Rearrange(vec![1, 0], pc),
            )
        } else {
            pc
        };
        results.insert(i, v);
    }
    stms_out.extend(b.stms);
    for (i, pe) in s.pat.elems.iter().enumerate() {
        stms_out.push(mk_stm(vec![pe.clone()], Exp::SubExp(var(results.get(&i)?))));
    }
    for t in &mut stms_out {
        t.loc = s.loc.clone();
    }
    Some(stms_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::rewrite_and_compare;

    fn check(src: &str, entry: &str, args: &str) {
        let (before, after) = rewrite_and_compare(src, entry, args, scan_columns);
        assert_ne!(after.funs, before.funs, "nothing rewritten");
    }

    const SEG: &str = "
let seg [m] (f1: bool, v1: [m]f64) (f2: bool, v2: [m]f64) : (bool, [m]f64) =
  (f1 || f2, if f2 then v2 else map2 (*) v1 v2)
entry segscan [n][m] (fs: [n]bool) (vs: [n][m]f64) =
  unzip (scan seg (false, replicate m 1) (zip fs vs))
entry segred [n][m] (fs: [n]bool) (vs: [n][m]f64) =
  reduce seg (false, replicate m 1) (zip fs vs)
entry grad [n][m][k] (is: [n]i64) (dst: [k][m]f64) (vs: [n][m]f64) =
  vjp (\\(d, v) -> reduce_by_index (copy d) (map2 (*)) (replicate m 1) is v) (dst, vs) (replicate k (replicate m 1))
";

    #[test]
    fn segmented_scans_over_rows_become_scans_of_columns() {
        let args = "[true, false, true, false, false] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 0.5], [2.0, 2.0]]";
        check(SEG, "segscan", args);
        check(SEG, "segred", args);
        check(SEG, "segscan", "empty([0]bool) empty([0][3]f64)");
        check(
            SEG,
            "grad",
            "[0i64, 0i64, 2i64, 1i64, 1i64] [[1.0, 2.0], [0.0, 4.0], [5.0, 0.0]] [[1.0, 3.0], [2.0, 4.0], [18.0, 5.0], [6.0, 0.0], [7.0, 9.0]]",
        );
    }
}
