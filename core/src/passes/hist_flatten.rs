//! `reduce_by_index` with array-valued bins and a vectorised operator (`map2 f` of a scalar
//! `f`, as `reduce_by_index dst (map2 (+)) (replicate k 0) is vs` and what AD makes of it) as a
//! histogram of scalars over the flattened arrays:
//!
//! ```text
//! let r: [m][k]t = hist(n, {d}, is, {vs}, \xs ys -> map(k, {xs, ys}, f), {ne})
//! ==>
//! let is' = map(n*k, {iota (n*k)}, \t -> let b = is[t / k] in
//!                                         if 0 <= b && b < m then b * k + t % k else -1)
//! let r' = hist(n*k, {reshape [m*k] d}, is', {reshape [n*k] vs}, f, {v})
//! let r = reshape [m][k] r'
//! ```
//!
//! where `ne = replicate [k] v`. Backends whose histograms combine scalars (the Vulkan backend)
//! run the result as they run any scalar histogram. Histograms of other forms are left alone.

use super::traverse::{host_bodies, mk_stm};
use crate::ir::builder::{var, Builder};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};
use std::collections::HashMap;

const I64: PrimType = PrimType::Int(IntType::I64);

fn i64c(v: i64) -> SubExp {
    SubExp::Const(PrimValue::I64(v))
}

/// Rewrites every histogram of the supported form.
pub fn hist_flatten(mut p: Program) -> Program {
    let mut ns = std::mem::take(&mut p.name_source);
    for f in &mut p.funs {
        let mut reps = HashMap::new();
        body(&mut ns, &mut reps, &mut f.body);
    }
    p.name_source = ns;
    p
}

/// `reps`: the scalar of every `replicate [k] scalar` bound so far (names are unique).
fn body(ns: &mut NameSource, reps: &mut HashMap<VName, SubExp>, b: &mut Body) {
    let mut out = Vec::with_capacity(b.stms.len());
    for mut s in std::mem::take(&mut b.stms) {
        if let (Exp::Replicate { shape, value }, [pe]) = (&s.exp, &s.pat.elems[..]) {
            if shape.len() == 1 {
                reps.insert(pe.name.clone(), value.clone());
            }
        }
        for nb in host_bodies(&mut s.exp) {
            body(ns, reps, nb);
        }
        match rewrite(ns, reps, &s) {
            Some(stms) => out.extend(stms),
            None => out.push(s),
        }
    }
    b.stms = out;
}

/// The innermost scalar function of a vectorised operator (`\xs.. ys.. -> map(k, {params},
/// f)`, nested any number of times), with its parameters in the operator's order.
fn innermost(lam: &Lambda) -> Option<Lambda> {
    if lam.params.iter().all(|p| p.ty.rank() == 0) {
        return Some(lam.clone());
    }
    let [s] = &lam.body.stms[..] else {
        return None;
    };
    let Exp::Soac(Soac::Map {
        arrs, lam: inner, ..
    }) = &s.exp
    else {
        return None;
    };
    let results: Vec<SubExp> = s.pat.elems.iter().map(|p| var(&p.name)).collect();
    if lam.body.result != results || arrs.len() != lam.params.len() {
        return None;
    }
    let mut params = Vec::with_capacity(arrs.len());
    for p in &lam.params {
        let i = arrs.iter().position(|a| *a == p.name)?;
        params.push(inner.params[i].clone());
    }
    innermost(&Lambda {
        params,
        body: inner.body.clone(),
        ret: inner.ret.clone(),
    })
}

/// The scalar operator `lam` ([`innermost`]) of the vectorised operator `op`, with neutral
/// elements. They are found through the `replicate`s that made the original's; a neutral row
/// made otherwise (a row of an array that a kernel filled) gives its first element, read by
/// statements added to `b`, as a monoid's neutral element is unique: every element of a
/// neutral row of `map2 f` is the neutral element of `f`. `k` is the number of scalars in a
/// row (when it is 0 there is no element to read, and none to combine).
fn scalar_op(
    b: &mut Builder,
    op: &Operator,
    lam: Lambda,
    reps: &HashMap<VName, SubExp>,
    k: &SubExp,
) -> Operator {
    let neutral = op
        .neutral
        .iter()
        .zip(op.lam.params.iter().zip(&lam.params))
        .map(|(ne, (row, p))| match replicated(ne, reps) {
            Some(c) => c,
            None => first_element(b, ne, row.ty.rank(), &p.ty, k),
        })
        .collect();
    Operator {
        lam,
        neutral,
        commutative: op.commutative,
    }
}

/// The constant every element of `ne` holds, where `ne` was made by `replicate`s of one.
fn replicated(ne: &SubExp, reps: &HashMap<VName, SubExp>) -> Option<SubExp> {
    let mut cur = ne.clone();
    for _ in 0..16 {
        match &cur {
            SubExp::Var(v) => cur = reps.get(v)?.clone(),
            SubExp::Const(_) => return Some(cur),
        }
    }
    None
}

/// `if 0 < k then ne[0, …, 0] else 0`: the first scalar of the neutral row `ne` of rank
/// `rank`, whose elements have type `t`.
fn first_element(b: &mut Builder, ne: &SubExp, rank: usize, t: &Type, k: &SubExp) -> SubExp {
    let (SubExp::Var(row), Type::Prim(elem)) = (ne, t) else {
        return ne.clone();
    };
    let some = b.cmp(CmpOp::Lt(I64), i64c(0), k.clone());
    let then_b = b.body(|b| vec![var(&b.index(t.clone(), row, vec![i64c(0); rank]))]);
    let else_b = b.body(|_| vec![SubExp::Const(PrimValue::zero(*elem))]);
    var(&b.bind(
        "ne",
        t.clone(),
        Exp::If {
            cond: var(&some),
            then_b,
            else_b,
            ret: vec![ExtType::Prim(*elem)],
        },
    ))
}

fn rewrite(ns: &mut NameSource, reps: &HashMap<VName, SubExp>, s: &Stm) -> Option<Vec<Stm>> {
    let Exp::Soac(Soac::Hist {
        w,
        dest,
        op,
        inds,
        vals,
    }) = &s.exp
    else {
        return None;
    };
    // Destinations [m][k1]..[kr]t.
    let mut elems = Vec::new();
    let mut dims: Option<Vec<SubExp>> = None;
    for pe in &s.pat.elems {
        match &pe.ty {
            Type::Array { elem, shape } if shape.len() >= 2 => {
                elems.push(*elem);
                dims = Some(shape.clone());
            }
            _ => return None,
        }
    }
    let dims = dims?;
    let m = dims[0].clone();
    // Only vectorised operators.
    if op.lam.params.iter().all(|p| p.ty.rank() == 0) {
        return None;
    }
    let lam = innermost(&op.lam)?;
    // The scalar operator's copy is the original's body: the original disappears, so names
    // stay unique.
    let mut b = Builder::new(ns);
    // k: the number of scalars in a bin.
    let mut k = dims[1].clone();
    for d in &dims[2..] {
        k = var(&b.binop(BinOp::Mul(I64), k, d.clone()));
    }
    let sop = scalar_op(&mut b, op, lam, reps, &k);
    let nk = b.binop(BinOp::Mul(I64), w.clone(), k.clone());
    let mk = b.binop(BinOp::Mul(I64), m.clone(), k.clone());
    let flat = |t: PrimType, len: &VName| Type::Array {
        elem: t,
        shape: vec![var(len)],
    };
    let iota = b.bind(
        "t",
        flat(I64, &nk),
        Exp::Iota {
            n: var(&nk),
            start: i64c(0),
            stride: i64c(1),
            it: IntType::I64,
        },
    );
    let ind_lam = b.lambda(&[("t", Type::Prim(I64))], vec![Type::Prim(I64)], |b, ps| {
        let row = b.binop(BinOp::Quot(IntType::I64), var(&ps[0]), k.clone());
        let col = b.binop(BinOp::Rem(IntType::I64), var(&ps[0]), k.clone());
        let bin = b.index(Type::Prim(I64), inds, vec![var(&row)]);
        let ge = b.cmp(CmpOp::Le(I64), i64c(0), var(&bin));
        let lt = b.cmp(CmpOp::Lt(I64), var(&bin), m.clone());
        let ok = b.binop(BinOp::LogAnd, var(&ge), var(&lt));
        let at = b.binop(BinOp::Mul(I64), var(&bin), k.clone());
        let at = b.binop(BinOp::Add(I64), var(&at), var(&col));
        let then_b = b.body(|_| vec![var(&at)]);
        let else_b = b.body(|_| vec![i64c(-1)]);
        let r = b.bind(
            "at",
            Type::Prim(I64),
            Exp::If {
                cond: var(&ok),
                then_b,
                else_b,
                ret: vec![ExtType::Prim(I64)],
            },
        );
        vec![var(&r)]
    });
    let flat_inds = b.map(var(&nk), vec![iota], ind_lam)[0].clone();
    let mut fdest = Vec::new();
    let mut fvals = Vec::new();
    for ((d, v), &t) in dest.iter().zip(vals).zip(&elems) {
        fdest.push(b.bind(
            "flat",
            flat(t, &mk),
            Exp::Reshape(vec![var(&mk)], d.clone()),
        ));
        fvals.push(b.bind(
            "flat",
            flat(t, &nk),
            Exp::Reshape(vec![var(&nk)], v.clone()),
        ));
    }
    let pat: Vec<(&str, Type)> = elems.iter().map(|&t| ("hist", flat(t, &mk))).collect();
    let res = b.bind_many(
        &pat,
        Exp::Soac(Soac::Hist {
            w: var(&nk),
            dest: fdest,
            op: sop,
            inds: flat_inds,
            vals: fvals,
        }),
    );
    let mut stms = b.stms;
    for (pe, r) in s.pat.elems.iter().zip(&res) {
        stms.push(mk_stm(
            vec![pe.clone()],
            Exp::Reshape(dims.clone(), r.clone()),
        ));
    }
    for t in &mut stms {
        t.loc = s.loc.clone();
    }
    Some(stms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::differential::rewrite_and_compare;

    fn check(src: &str, entry: &str, args: &str) {
        let (before, after) = rewrite_and_compare(src, entry, args, hist_flatten);
        assert_ne!(after.funs, before.funs, "nothing rewritten");
    }

    #[test]
    fn vectorised_histograms_and_their_adjoints() {
        let src = "
entry add [n][m][k] (is: [n]i64) (dst: [k][m]f32) (vs: [n][m]f32) =
  reduce_by_index (copy dst) (map2 (+)) (replicate m 0) is vs
entry grad [n][m][k] (is: [n]i64) (dst: [k][m]f32) (vs: [n][m]f32) =
  vjp (\\(d, v) -> reduce_by_index (copy d) (map2 (*)) (replicate m 1) is v) (dst, vs) (replicate k (replicate m 1))
";
        let args = "[0i64, 0i64, 3i64, 1i64, -1i64, 2i64, 2i64] [[1f32, 2f32], [0f32, 4f32], [5f32, 0f32]] \
                    [[1f32, 3f32], [2f32, 4f32], [18f32, 5f32], [6f32, 0f32], [7f32, 9f32], [0f32, 14f32], [11f32, 2f32]]";
        check(src, "add", args);
        check(src, "grad", args);
        // A neutral row that no `replicate` in sight made: its first element is the scalar
        // operator's neutral element.
        let src_ne = "
entry add_ne [n][m][k] (is: [n]i64) (dst: [k][m]f32) (vs: [n][m]f32) (ne: [m]f32) =
  reduce_by_index (copy dst) (map2 (+)) ne is vs
";
        check(src_ne, "add_ne", &format!("{args} [0f32, 0f32]"));
        let src3 = "
entry add3 [n][m][k][l] (is: [n]i64) (dst: [k][m][l]f32) (vs: [n][m][l]f32) =
  reduce_by_index (copy dst) (map2 (map2 (+))) (replicate m (replicate l 0)) is vs
";
        check(
            src3,
            "add3",
            "[0i64, 1i64, 1i64, 5i64] [[[1f32, 2f32]], [[3f32, 4f32]]] \
             [[[1f32, 1f32]], [[2f32, 3f32]], [[4f32, 5f32]], [[6f32, 7f32]]]",
        );
    }
}
