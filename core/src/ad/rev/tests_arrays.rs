//! Tests of the array rules that the shared tests do not cover.

use super::super::reduce::tests::{nums, vjp_run};

#[test]
fn iota_size_gets_the_sum_of_the_adjoint() {
    // Futhark's rule (tests/ad/iota0.fut): d/dn Σ iota n = n̄ += Σ ȳ = n.
    let out = vjp_run("entry f (n: i64) = i64.sum (iota n)", "5i64", "1i64");
    assert_eq!(nums(&out), vec![10.0, 5.0]);
    let out = vjp_run(
        "entry f (n: i64) = i64.sum (map (\\i -> 3 * i) (iota n))",
        "4i64",
        "2i64",
    );
    assert_eq!(nums(&out), vec![18.0, 24.0]);
    let out = vjp_run("entry f (n: i64) = i64.sum (iota n)", "0i64", "1i64");
    assert_eq!(nums(&out), vec![0.0, 0.0]);
}

/// `main [n] (keys: [n]i64) (seed: [n]i64) = vjp (\k -> sorted of sort_by_key(3, k)) keys seed`
/// (`sort_by_key` has no source syntax: AD's histogram rule emits it), or its `jvp` form.
fn sort_ad_program(reverse: bool) -> crate::ir::Program {
    use crate::ir::builder::{fun_sized, program, var};
    use crate::ir::*;
    use crate::prim::PrimType;
    let i64t = PrimType::I64;
    let mut ns = NameSource::default();
    let n = ns.fresh("n");
    let ty = Type::array(i64t, vec![var(&n)]);
    let t2 = ty.clone();
    let f = fun_sized(
        &mut ns,
        "main",
        true,
        vec![n],
        move |_, _| vec![("keys".into(), t2.clone()), ("seed".into(), t2)],
        vec![ty.to_ext(), ty.to_ext()],
        |b, ps| {
            let ty = Type::array(i64t, vec![var(&ps[0])]);
            let t3 = ty.clone();
            let lam = b.lambda(&[("k", ty.clone())], vec![ty.clone()], move |b, ks| {
                let r = b.bind_many(
                    &[("sorted", t3.clone()), ("perm", t3)],
                    Exp::SortByKey {
                        keys: ks[0].clone(),
                        bits: SubExp::i64(3),
                    },
                );
                vec![var(&r[0])]
            });
            let (args, seeds) = (vec![var(&ps[1])], vec![var(&ps[2])]);
            let exp = if reverse {
                Exp::Vjp { lam, args, seeds }
            } else {
                Exp::Jvp { lam, args, seeds }
            };
            let r = b.bind_many(&[("y", ty.clone()), ("d", ty)], exp);
            vec![var(&r[0]), var(&r[1])]
        },
    );
    program(ns, vec![f])
}

#[test]
fn sort_by_key_adjoint_follows_the_permutation() {
    // Keys 5, 2, 13 (= 5 in 3 bits), 0: sorted by their low 3 bits [0, 2, 5, 13], perm [3, 1, 0, 2].
    use crate::value::{ArrayValue, Buffer, Value};
    let a = |v: Vec<i64>| Value::Array(ArrayValue::new(vec![v.len()], Buffer::I64(v)));
    let args = vec![a(vec![5, 2, 13, 0]), a(vec![10, 20, 30, 40])];
    for reverse in [true, false] {
        let p = sort_ad_program(reverse);
        crate::ir::check::check_program(&p).expect("valid IR");
        let oracle = crate::interp::run_entry_oracle(&p, "main", args.clone()).expect("oracle");
        let t = crate::ad::transform(p).expect("AD");
        let got = crate::interp::run_entry(&t, "main", args.clone()).expect("run");
        assert_eq!(got, oracle, "reverse = {reverse}");
        assert_eq!(got[0], a(vec![0, 2, 5, 13]));
        // vjp: k̄[perm[j]] = s̄[j]; jvp: ṡ[j] = k̇[perm[j]] (integers get derivatives formally,
        // as Futhark's).
        let want = if reverse {
            a(vec![30, 20, 40, 10])
        } else {
            a(vec![40, 20, 10, 30])
        };
        assert_eq!(got[1], want, "reverse = {reverse}");
    }
}
