//! `sort_by_key` ([`Exp::SortByKey`]) written as SOACs, for backends (or places) without a
//! sort kernel: a stable least-significant-bit-first radix sort, a `loop` over the bits whose
//! every round is a stable split by one bit (a `map` to the bit, two `scan (+)`s and a `reduce`
//! for the positions, two `scatter`s moving keys and permutation). O(n · bits) work.
//!
//! [`sort_lower`] rewrites the sorts inside SOAC lambdas (which the Vulkan backend runs inside
//! kernels, sequentially per thread) or, with `everywhere`, every sort of the program.

use super::hist_sort::if_scalar;
use super::traverse::nested_bodies;
use crate::ir::builder::{var, Builder};
use crate::ir::*;
use crate::prim::{IntType, PrimType, PrimValue};

const I64: PrimType = PrimType::Int(IntType::I64);

fn i64c(v: i64) -> SubExp {
    SubExp::Const(PrimValue::I64(v))
}

/// Binds, in `b`, the sort of `keys0: [n]i64` by their `bits` low bits as a loop of SOACs;
/// returns the names of the sorted keys and of the permutation (as `sort_by_key` binds them).
pub fn radix_sort_loop(b: &mut Builder, n: &SubExp, keys0: &VName, bits: &SubExp) -> Vec<VName> {
    let arr = |t: PrimType| Type::Array {
        elem: t,
        shape: vec![n.clone()],
    };
    let perm0 = b.bind(
        "perm",
        arr(I64),
        Exp::Iota {
            n: n.clone(),
            start: i64c(0),
            stride: i64c(1),
            it: IntType::I64,
        },
    );
    // Only the bits a key has: 0 ..= 64 rounds.
    let bits = b.binop(BinOp::Max(I64), bits.clone(), i64c(0));
    let bits = b.binop(BinOp::Min(I64), var(&bits), i64c(64));
    // 2. The radix sort: for bit < bits, keys and perm go through a stable split by the bit.
    let keys_p = b.param("keys", arr(I64));
    let perm_p = b.param("perm", arr(I64));
    let bit_i = b.fresh("bit");
    let loop_body = b.body(|b| {
        let (keys, perm) = (keys_p.name.clone(), perm_p.name.clone());
        let bit_lam = b.lambda(&[("k", Type::Prim(I64))], vec![Type::Prim(I64)], |b, ps| {
            let sh = b.binop(BinOp::Shr(IntType::I64), var(&ps[0]), var(&bit_i));
            let one = b.binop(BinOp::And(I64), var(&sh), i64c(1));
            vec![var(&one)]
        });
        let ones = b.map(n.clone(), vec![keys.clone()], bit_lam)[0].clone();
        let not_lam = b.lambda(&[("x", Type::Prim(I64))], vec![Type::Prim(I64)], |b, ps| {
            let z = b.binop(BinOp::Sub(I64), i64c(1), var(&ps[0]));
            vec![var(&z)]
        });
        let zeros = b.map(n.clone(), vec![ones.clone()], not_lam)[0].clone();
        let add = |b: &mut Builder| Operator {
            lam: b.lambda(
                &[("a", Type::Prim(I64)), ("b", Type::Prim(I64))],
                vec![Type::Prim(I64)],
                |b, ps| vec![var(&b.binop(BinOp::Add(I64), var(&ps[0]), var(&ps[1])))],
            ),
            neutral: vec![i64c(0)],
            commutative: true,
        };
        let op1 = add(b);
        let zs = b.bind(
            "zs",
            arr(I64),
            Exp::Soac(Soac::Scan {
                w: n.clone(),
                arrs: vec![zeros.clone()],
                op: op1,
            }),
        );
        let op2 = add(b);
        let os = b.bind(
            "os",
            arr(I64),
            Exp::Soac(Soac::Scan {
                w: n.clone(),
                arrs: vec![ones.clone()],
                op: op2,
            }),
        );
        let op3 = add(b);
        let nz = b.reduce(n.clone(), vec![zeros], op3)[0].clone();
        let pos_lam = b.lambda(
            &[
                ("bit", Type::Prim(I64)),
                ("z", Type::Prim(I64)),
                ("o", Type::Prim(I64)),
            ],
            vec![Type::Prim(I64)],
            |b, ps| {
                let is0 = b.cmp(CmpOp::Eq(I64), var(&ps[0]), i64c(0));
                let z1 = b.binop(BinOp::Sub(I64), var(&ps[1]), i64c(1));
                let o1 = b.binop(BinOp::Add(I64), var(&nz), var(&ps[2]));
                let o1 = b.binop(BinOp::Sub(I64), var(&o1), i64c(1));
                let p = if_scalar(b, var(&is0), var(&z1), var(&o1), I64);
                vec![var(&p)]
            },
        );
        let pos = b.map(n.clone(), vec![ones, zs, os], pos_lam)[0].clone();
        let mut outs = Vec::new();
        for src in [keys, perm] {
            let fresh = b.bind(
                "sorted",
                arr(I64),
                Exp::Replicate {
                    shape: vec![n.clone()],
                    value: i64c(0),
                },
            );
            let r = b.bind(
                "sorted",
                arr(I64),
                Exp::Soac(Soac::Scatter {
                    w: n.clone(),
                    dest: vec![fresh],
                    inds: vec![pos.clone()],
                    vals: vec![src],
                }),
            );
            outs.push(var(&r));
        }
        outs
    });
    b.bind_many(
        &[("keys_sorted", arr(I64)), ("perm_sorted", arr(I64))],
        Exp::Loop {
            params: vec![(keys_p, var(keys0)), (perm_p, var(&perm0))],
            form: LoopForm::For {
                i: bit_i,
                it: IntType::I64,
                bound: var(&bits),
            },
            body: loop_body,
        },
    )
}

/// Rewrites the `sort_by_key`s inside SOAC lambdas (with `everywhere`, all of them) into
/// [`radix_sort_loop`]s.
pub fn sort_lower(mut p: Program, everywhere: bool) -> Program {
    let mut ns = std::mem::take(&mut p.name_source);
    for f in &mut p.funs {
        lower_body(&mut ns, &mut f.body, everywhere);
    }
    p.name_source = ns;
    p
}

fn lower_body(ns: &mut NameSource, body: &mut Body, here: bool) {
    let mut out = Vec::with_capacity(body.stms.len());
    for mut s in std::mem::take(&mut body.stms) {
        match &mut s.exp {
            Exp::If { then_b, else_b, .. } => {
                lower_body(ns, then_b, here);
                lower_body(ns, else_b, here);
            }
            Exp::Loop { body, .. } => lower_body(ns, body, here),
            Exp::WithAcc { inputs, lam } => {
                for op in inputs.iter_mut().filter_map(|i| i.op.as_mut()) {
                    lower_body(ns, &mut op.lam.body, true);
                }
                lower_body(ns, &mut lam.body, here);
            }
            e => {
                for nb in nested_bodies(e) {
                    lower_body(ns, nb, true);
                }
            }
        }
        match (&s.exp, here) {
            (Exp::SortByKey { keys, bits }, true) => {
                let n = s
                    .pat
                    .elems
                    .first()
                    .and_then(|p| p.ty.shape().first().cloned());
                let Some(n) = n else {
                    out.push(s);
                    continue;
                };
                let mut b = Builder::new(ns);
                radix_sort_loop(&mut b, &n, keys, bits);
                let mut stms = b.stms;
                if let Some(last) = stms.last_mut() {
                    // The loop binds the sort's own names.
                    last.pat = s.pat.clone();
                    last.loc = s.loc.clone();
                }
                out.extend(stms);
            }
            _ => out.push(s),
        }
    }
    body.stms = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::{fun_sized, program};
    use crate::passes::differential::{count_exps, rewrite_and_compare};
    use crate::value::{ArrayValue, Buffer, Value};

    fn is_sort(e: &Exp) -> bool {
        matches!(e, Exp::SortByKey { .. })
    }

    /// `main [n] (bits: i64) (keys: [n]i64) = sort_by_key(bits, keys)` (params: n, bits, keys).
    fn sort_program() -> Program {
        let mut ns = NameSource::default();
        let n = ns.fresh("n");
        let ty = Type::array(I64, vec![var(&n)]);
        let t2 = ty.clone();
        let f = fun_sized(
            &mut ns,
            "main",
            true,
            vec![n.clone()],
            move |_, _| {
                vec![
                    ("bits".into(), Type::Prim(I64)),
                    ("keys".into(), t2.clone()),
                ]
            },
            vec![ty.to_ext(), ty.to_ext()],
            |b, ps| {
                let ty = Type::array(I64, vec![var(&ps[0])]);
                let r = b.bind_many(
                    &[("sorted", ty.clone()), ("perm", ty)],
                    Exp::SortByKey {
                        keys: ps[2].clone(),
                        bits: var(&ps[1]),
                    },
                );
                vec![var(&r[0]), var(&r[1])]
            },
        );
        program(ns, vec![f])
    }

    #[test]
    fn the_loop_sorts_like_the_interpreter_for_every_bit_count() {
        let p = sort_program();
        crate::ir::check::check_program(&p).expect("check");
        let lowered = sort_lower(p.clone(), true);
        crate::ir::check::check_program(&lowered).expect("check lowered");
        assert_eq!(count_exps(&p, &is_sort), 1);
        assert_eq!(count_exps(&lowered, &is_sort), 0);
        // Negative keys and keys past 2^bits: only the low bits count, read as unsigned.
        let keys: Vec<i64> = (0..97)
            .map(|i: i64| (i * 7919 + 13) % 41 - 20 + ((i % 3) << 40))
            .collect();
        for bits in [-3, 0, 1, 3, 5, 41, 64, 70] {
            let args = vec![
                Value::Scalar(PrimValue::I64(bits)),
                Value::Array(ArrayValue::new(vec![keys.len()], Buffer::I64(keys.clone()))),
            ];
            let want = crate::interp::run_entry(&p, "main", args.clone()).expect("run");
            let got = crate::interp::run_entry(&lowered, "main", args).expect("run lowered");
            assert_eq!(got, want, "bits = {bits}");
            // And the interpreter's sort is the stable sort by the masked key.
            let perm = crate::primops::sort_by_key(&keys, bits);
            let Value::Array(a) = &want[1] else {
                panic!("an array")
            };
            let want_perm: Vec<i64> = perm.iter().map(|&i| i as i64).collect();
            assert_eq!(a.data, Buffer::I64(want_perm), "bits = {bits}");
        }
    }

    #[test]
    fn only_sorts_inside_lambdas_unless_everywhere() {
        // vjp of a generic histogram sorts by bin (host level); mapped, inside a lambda.
        let src = "
def h (xs: [8]f64) = reduce_by_index (replicate 4 1f64) (\\x y -> x + y + x * y) 0 [0, 1, 2, 1, 1, 0, -1, 4] xs
entry top (xs: [8]f64) = vjp h xs [1, 2, 3, 4]
entry mapped (xss: [2][8]f64) = map (\\xs -> vjp h xs [1, 2, 3, 4]) xss
";
        let args =
            "[[0.5, 1.0, -0.5, 2.0, 1.0, 3.0, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]";
        let (before, after) = rewrite_and_compare(src, "mapped", args, |p| sort_lower(p, false));
        let top = |p: &Program| {
            let f = p.funs.iter().find(|f| &*f.name == "top").expect("top");
            f.body.stms.iter().filter(|s| is_sort(&s.exp)).count()
        };
        assert!(count_exps(&before, &is_sort) >= 2);
        // The host-level sort of `top` stays; the one in `mapped`'s lambda is a loop now.
        assert_eq!(top(&after), top(&before));
        assert!(top(&after) >= 1);
        assert_eq!(count_exps(&after, &is_sort), top(&after));
        let (_, all) = rewrite_and_compare(
            src,
            "top",
            "[0.5, 1.0, -0.5, 2.0, 1.0, 3.0, 0.0, 1.0]",
            |p| sort_lower(p, true),
        );
        assert_eq!(count_exps(&all, &is_sort), 0);
    }
}
