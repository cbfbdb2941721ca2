//! Copy propagation: `let x = y` and `let x = CONST` are substituted into every use of `x` (in
//! operands, array dimensions of types, nested bodies and lambdas, body results). The copy
//! statements themselves are left for [`dce`](super::dce) to remove.
//!
//! Positions that must hold a variable (the array of an `Index`, the inputs of a SOAC, ...) are
//! rewritten only when `x` is a copy of a variable. Since every name is bound once in the program,
//! one substitution per function is enough; chains `x = y; z = x` are followed.

use super::traverse::{map_bodies_in, walk_body, Substitute};
use crate::ir::*;
use std::collections::HashMap;

/// Substitutes copies into their uses in every function.
pub fn copy_prop(mut p: Program) -> Program {
    for f in &mut p.funs {
        let mut map: HashMap<VName, SubExp> = HashMap::new();
        map_bodies_in(&mut f.body, &mut |b: &mut Body| {
            for s in &b.stms {
                if let (Exp::SubExp(se), [pe]) = (&s.exp, &s.pat.elems[..]) {
                    if se.as_var() != Some(&pe.name) {
                        map.insert(pe.name.clone(), se.clone());
                    }
                }
            }
        });
        if map.is_empty() {
            continue;
        }
        // Follow chains (bounded: a cycle cannot happen in valid IR, but do not loop on one).
        let keys: Vec<VName> = map.keys().cloned().collect();
        for k in keys {
            let mut cur = map[&k].clone();
            for _ in 0..map.len() {
                match cur.as_var().and_then(|v| map.get(v)) {
                    Some(next) if next.as_var() != Some(&k) => cur = next.clone(),
                    _ => break,
                }
            }
            map.insert(k, cur);
        }
        walk_body(&mut Substitute { map: &map }, &mut f.body);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::*;
    use crate::ir::check::check_program;
    use crate::prim::PrimType;

    #[test]
    fn substitutes_into_uses_lambdas_and_results() {
        let mut ns = NameSource::default();
        let f32t = Type::Prim(PrimType::F32);
        let n = ns.fresh("n");
        let xs_t = arr(PrimType::F32, vec![var(&n)]);
        let f = fun_sized(
            &mut ns,
            "main",
            true,
            vec![n.clone()],
            |_, _| vec![("xs".into(), xs_t.clone()), ("y".into(), f32t.clone())],
            vec![xs_t.to_ext(), f32t.to_ext()],
            |b, ps| {
                let ys = b.bind("ys", xs_t.clone(), Exp::SubExp(var(&ps[1])));
                let y2 = b.bind("y2", f32t.clone(), Exp::SubExp(var(&ps[2])));
                let one = b.bind("one", f32t.clone(), Exp::SubExp(f32c(1.0)));
                let lam = b.lambda(&[("x", f32t.clone())], vec![f32t.clone()], |b, lp| {
                    let r = b.binop(BinOp::Add(PrimType::F32), var(&lp[0]), var(&y2));
                    let r2 = b.binop(BinOp::Mul(PrimType::F32), var(&r), var(&one));
                    vec![var(&r2)]
                });
                let m = b.map(var(&ps[0]), vec![ys.clone()], lam);
                vec![var(&m[0]), var(&y2)]
            },
        );
        let p = program(ns, vec![f]);
        check_program(&p).unwrap();
        let q = copy_prop(p);
        check_program(&q).unwrap();
        let text = q.to_string();
        assert!(text.contains("map(n_1, {xs_2}"), "{text}");
        assert!(text.contains("f32.add x_7 y_3"), "{text}");
        assert!(text.contains("f32.mul x_8 1.0f32"), "{text}");
        assert!(text.contains("in {m_10, y_3}"), "{text}");
    }

    #[test]
    fn follows_chains_and_constants() {
        let mut ns = NameSource::default();
        let i64t = Type::Prim(PrimType::I64);
        let f = fun(
            &mut ns,
            "main",
            true,
            &[],
            &[],
            vec![i64t.clone()],
            |b, _| {
                let a = b.bind("a", i64t.clone(), Exp::SubExp(i64c(3)));
                let c = b.bind("c", i64t.clone(), Exp::SubExp(var(&a)));
                let d = b.bind("d", i64t.clone(), Exp::SubExp(var(&c)));
                vec![var(&d)]
            },
        );
        let q = copy_prop(program(ns, vec![f]));
        check_program(&q).unwrap();
        assert_eq!(q.funs[0].body.result, vec![i64c(3)]);
        assert_eq!(q.funs[0].body.stms[2].exp, Exp::SubExp(i64c(3)));
    }
}
