//! IR building blocks shared by the rules of `scatter` and `reduce_by_index`, and
//! [`radix_sort_by_key`]: a stable sort of `i64` keys by their low bits (`sort_by_key`), used to
//! group the elements of a histogram by bin.

use crate::ir::builder::{binop_operator, var, Builder};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};

pub(super) const I64: PrimType = PrimType::I64;

pub(super) fn i64t() -> Type {
    Type::Prim(I64)
}

/// `[n]i64`.
pub(super) fn i64s(n: &SubExp) -> Type {
    Type::array(I64, vec![n.clone()])
}

/// `iota n` (`i64`).
pub(super) fn iota(b: &mut Builder, n: &SubExp) -> VName {
    b.bind(
        "iota",
        i64s(n),
        Exp::Iota {
            n: n.clone(),
            start: SubExp::i64(0),
            stride: SubExp::i64(1),
            it: IntType::I64,
        },
    )
}

/// `replicate n v` where `v: vty`.
pub(super) fn replicate(b: &mut Builder, n: &SubExp, v: SubExp, vty: &Type) -> VName {
    b.bind(
        "rep",
        vty.array_of(n.clone()),
        Exp::Replicate {
            shape: vec![n.clone()],
            value: v,
        },
    )
}

/// `if c then t else f` for values of type `ty`.
pub(super) fn select(b: &mut Builder, c: SubExp, t: SubExp, f: SubExp, ty: &Type) -> VName {
    b.bind(
        "sel",
        ty.clone(),
        Exp::If {
            cond: c,
            then_b: Body {
                stms: vec![],
                result: vec![t],
            },
            else_b: Body {
                stms: vec![],
                result: vec![f],
            },
            ret: vec![ty.to_ext()],
        },
    )
}

/// `if c then <then_f> else <else_f>` with bodies built by the closures (one result each).
pub(super) fn if_then_else(
    b: &mut Builder,
    c: SubExp,
    ty: &Type,
    then_f: impl FnOnce(&mut Builder) -> SubExp,
    else_f: impl FnOnce(&mut Builder) -> SubExp,
) -> VName {
    let then_b = b.body(|b| vec![then_f(b)]);
    let else_b = b.body(|b| vec![else_f(b)]);
    b.bind(
        "if",
        ty.clone(),
        Exp::If {
            cond: c,
            then_b,
            else_b,
            ret: vec![ty.to_ext()],
        },
    )
}

/// `scatter dests inds vals` (the destinations are consumed); returns the updated arrays.
pub(super) fn scatter(
    b: &mut Builder,
    w: &SubExp,
    dests: Vec<(VName, Type)>,
    inds: Vec<VName>,
    vals: Vec<VName>,
) -> Vec<VName> {
    let pat: Vec<(&str, Type)> = dests.iter().map(|(_, t)| ("scat", t.clone())).collect();
    b.bind_many(
        &pat,
        Exp::Soac(Soac::Scatter {
            w: w.clone(),
            dest: dests.into_iter().map(|(d, _)| d).collect(),
            inds,
            vals,
        }),
    )
}

/// Inclusive `scan (+) 0` of an `[n]i64` array.
pub(super) fn scan_add_i64(b: &mut Builder, n: &SubExp, arr: &VName) -> VName {
    let op = binop_operator(b.ns, BinOp::Add(I64), SubExp::i64(0), true);
    b.bind(
        "scan",
        i64s(n),
        Exp::Soac(Soac::Scan {
            w: n.clone(),
            arrs: vec![arr.clone()],
            op,
        }),
    )
}

/// `reduce (+) 0` of an `[n]i64` array.
pub(super) fn sum_i64(b: &mut Builder, n: &SubExp, arr: &VName) -> VName {
    let op = binop_operator(b.ns, BinOp::Add(I64), SubExp::i64(0), true);
    b.reduce(n.clone(), vec![arr.clone()], op)[0].clone()
}

/// `x` (of integer type `it`) as an `i64` (unsigned types zero-extend, so a huge `u64` becomes
/// negative and stays out of range).
pub(super) fn to_i64(b: &mut Builder, x: SubExp, it: PrimType) -> SubExp {
    if it == I64 {
        x
    } else {
        var(&b.conv(it, I64, x))
    }
}

/// `0 <= x < n` for `i64` operands.
pub(super) fn in_range(b: &mut Builder, x: &SubExp, n: &SubExp) -> SubExp {
    let lo = b.cmp(CmpOp::Le(I64), SubExp::i64(0), x.clone());
    let hi = b.cmp(CmpOp::Lt(I64), x.clone(), n.clone());
    var(&b.binop(BinOp::LogAnd, var(&lo), var(&hi)))
}

/// The number of bits needed for keys in `[0, n)`: `⌈log₂ n⌉` (0 for `n <= 1`).
pub(super) fn key_bits(b: &mut Builder, n: &SubExp) -> SubExp {
    let small = b.cmp(CmpOp::Le(I64), n.clone(), SubExp::i64(1));
    var(&if_then_else(
        b,
        var(&small),
        &i64t(),
        |_| SubExp::i64(0),
        |b| {
            let m1 = b.binop(BinOp::Sub(I64), n.clone(), SubExp::i64(1));
            let lz = b.math(MathFn::Clz(IntType::I64), vec![var(&m1)]);
            let lz = b.conv(PrimType::I32, I64, var(&lz));
            var(&b.binop(BinOp::Sub(I64), SubExp::i64(64), var(&lz)))
        },
    ))
}

/// Sorts the `n` keys `keys: [n]i64` (each in `[0, 2^bits)`) stably by their `bits` low bits.
/// Returns the sorted keys and the permutation `perm` (`sorted[j] = keys[perm[j]]`): one
/// `sort_by_key` ([`Exp::SortByKey`]; a radix sort kernel on Vulkan,
/// [`crate::passes::sort_lower`] writes it as SOACs elsewhere).
pub(super) fn radix_sort_by_key(
    b: &mut Builder,
    n: &SubExp,
    keys: &VName,
    bits: &SubExp,
) -> (VName, VName) {
    let ty = i64s(n);
    let res = b.bind_many(
        &[("sorted_keys", ty.clone()), ("sorted_perm", ty)],
        Exp::SortByKey {
            keys: keys.clone(),
            bits: bits.clone(),
        },
    );
    (res[0].clone(), res[1].clone())
}

/// The zero of a value type as a [`SubExp`] built in `b` (a `replicate` for arrays).
pub(super) fn zeros_in(b: &mut Builder, ty: &Type) -> SubExp {
    match ty {
        Type::Array { elem, shape } => var(&b.bind(
            "zeros",
            ty.clone(),
            Exp::Replicate {
                shape: shape.clone(),
                value: SubExp::Const(PrimValue::zero(*elem)),
            },
        )),
        t => SubExp::Const(PrimValue::zero(t.elem().unwrap_or(I64))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::{fun_sized, program};
    use crate::value::{ArrayValue, Buffer, Value};

    fn sort(keys: &[i64], nbins: i64) -> (Vec<i64>, Vec<i64>) {
        let mut ns = NameSource::default();
        let n = ns.fresh("n");
        let f = fun_sized(
            &mut ns,
            "main",
            true,
            vec![n.clone()],
            |_, s| vec![("keys".into(), i64s(&var(&s[0])))],
            vec![i64s(&var(&n)).to_ext(), i64s(&var(&n)).to_ext()],
            |b, ps| {
                let bits = key_bits(b, &SubExp::i64(nbins));
                let (k, p) = radix_sort_by_key(b, &var(&ps[0]), &ps[1], &bits);
                vec![var(&k), var(&p)]
            },
        );
        let p = program(ns, vec![f]);
        crate::ir::check::check_program(&p).expect("check");
        let arg = Value::Array(ArrayValue::new(
            vec![keys.len()],
            Buffer::I64(keys.to_vec()),
        ));
        let out = crate::interp::run_entry(&p, "main", vec![arg.clone()]).expect("run");
        // The same sort as a loop of SOACs (what backends without a sort kernel run).
        let lowered = crate::passes::sort_lower::sort_lower(p, true);
        crate::ir::check::check_program(&lowered).expect("check lowered");
        let sorts = crate::passes::differential::count_exps(&lowered, &|e| {
            matches!(e, Exp::SortByKey { .. })
        });
        assert_eq!(sorts, 0);
        let out2 = crate::interp::run_entry(&lowered, "main", vec![arg]).expect("run lowered");
        assert_eq!(out, out2, "sort_by_key and its loop differ on {keys:?}");
        let get = |v: &Value| match v {
            Value::Array(a) => match &a.data {
                Buffer::I64(x) => x.clone(),
                _ => panic!("not i64"),
            },
            _ => panic!("not an array"),
        };
        (get(&out[0]), get(&out[1]))
    }

    #[test]
    fn radix_sort_is_stable() {
        let keys = [3, 1, 4, 1, 5, 0, 2, 6, 5, 3, 5];
        let (k, p) = sort(&keys, 7);
        let mut idx: Vec<usize> = (0..keys.len()).collect();
        idx.sort_by_key(|&i| keys[i]);
        assert_eq!(k, idx.iter().map(|&i| keys[i]).collect::<Vec<_>>());
        assert_eq!(p, idx.iter().map(|&i| i as i64).collect::<Vec<_>>());
    }

    #[test]
    fn radix_sort_many_keys() {
        for nbins in [2, 3, 37, 64, 65, 1000] {
            let keys: Vec<i64> = (0..150).map(|i| (i * 7919 + 13) % nbins).collect();
            let (k, p) = sort(&keys, nbins);
            let mut idx: Vec<usize> = (0..keys.len()).collect();
            idx.sort_by_key(|&i| keys[i]);
            assert_eq!(k, idx.iter().map(|&i| keys[i]).collect::<Vec<_>>());
            assert_eq!(p, idx.iter().map(|&i| i as i64).collect::<Vec<_>>());
        }
    }

    #[test]
    fn radix_sort_edge_cases() {
        assert_eq!(sort(&[], 4), (vec![], vec![]));
        assert_eq!(sort(&[0], 1), (vec![0], vec![0]));
        assert_eq!(sort(&[0, 0, 0], 1), (vec![0, 0, 0], vec![0, 1, 2]));
        // A power of two: 8 bins need exactly 3 bits.
        assert_eq!(
            sort(&[7, 0, 4, 7, 3], 8),
            (vec![0, 3, 4, 7, 7], vec![1, 4, 2, 0, 3])
        );
    }
}
