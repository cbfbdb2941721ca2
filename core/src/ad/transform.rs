//! The AD pass: replaces every [`Exp::Jvp`] and [`Exp::Vjp`] node of a program by derivative
//! code, innermost first (the AD nodes inside a node's lambda are transformed before the node
//! itself, so nested AD differentiates derivative code).
//!
//! A node `let (ys, ds) = jvp (\ps -> body) (args) (seeds)` becomes the body of
//! [`super::fwd::jvp_lambda`]`(\ps -> body)` (resp. [`super::rev::vjp_lambda`]) bound inline:
//! `let p = arg` for each param, then the derivative's statements, then `let y = r` for each
//! result. The copies are left to the simplifier.

use crate::diag::SrcLoc;
use crate::ir::*;
use crate::passes::traverse::{mk_stm, nested_bodies, nested_bodies_ref};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// A node that could not be differentiated.
#[derive(Clone, Debug, PartialEq)]
pub struct AdError {
    /// The function containing the node.
    pub fun: Arc<str>,
    /// The location of the `jvp`/`vjp` statement.
    pub loc: Option<SrcLoc>,
    /// `not supported: jvp of <construct>` (or `vjp of ...`).
    pub message: String,
    /// A construct the AD cannot differentiate (rather than an internal error).
    pub not_supported: bool,
}

impl fmt::Display for AdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.loc {
            Some(l) => write!(f, "{l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Transforms every AD node of the program; the first error of each failing function is
/// returned (all of them, one per function).
pub fn transform(p: Program) -> Result<Program, Vec<AdError>> {
    let (p, errs) = transform_partial(p);
    if errs.is_empty() {
        Ok(p)
    } else {
        Err(errs)
    }
}

/// Transforms every AD node of the program. A function in which some node cannot be
/// differentiated is removed, with its error, and so is every function calling it (directly or
/// indirectly; it gets the same error), so the rest of the program stays valid.
pub fn transform_partial(mut p: Program) -> (Program, Vec<AdError>) {
    let mut ns = std::mem::take(&mut p.name_source);
    let mut failed: Vec<AdError> = vec![];
    for f in &mut p.funs {
        let env = super::rev::fun_types(f);
        if let Err(Failure {
            loc,
            message,
            not_supported,
        }) = body(&mut f.body, &mut ns, &env)
        {
            failed.push(AdError {
                fun: f.name.clone(),
                loc,
                message,
                not_supported,
            });
        }
    }
    p.name_source = ns;
    // Custom derivatives no `vjp` used are their primal functions.
    for f in &mut p.funs {
        super::rev::custom::inline_all(&mut f.body);
    }
    // Callers of failed functions fail too.
    loop {
        let bad: HashSet<Arc<str>> = failed.iter().map(|e| e.fun.clone()).collect();
        let mut more = vec![];
        for f in &p.funs {
            if bad.contains(&f.name) {
                continue;
            }
            if let Some(e) = calls_any(&f.body, &bad, &failed) {
                more.push(AdError {
                    fun: f.name.clone(),
                    ..e
                });
            }
        }
        if more.is_empty() {
            break;
        }
        failed.extend(more);
    }
    let bad: HashSet<Arc<str>> = failed.iter().map(|e| e.fun.clone()).collect();
    p.funs.retain(|f| !bad.contains(&f.name));
    (p, failed)
}

/// The error of the first failed function that `b` calls, if any.
fn calls_any(b: &Body, bad: &HashSet<Arc<str>>, failed: &[AdError]) -> Option<AdError> {
    for s in &b.stms {
        if let Exp::Apply { fun, .. } = &s.exp {
            if bad.contains(fun) {
                return failed.iter().find(|e| &e.fun == fun).cloned();
            }
        }
        for nb in nested_bodies_ref(&s.exp) {
            if let Some(e) = calls_any(nb, bad, failed) {
                return Some(e);
            }
        }
    }
    None
}

/// Why a function could not be differentiated.
struct Failure {
    loc: Option<SrcLoc>,
    message: String,
    not_supported: bool,
}

impl Failure {
    fn not_supported(loc: &Option<SrcLoc>, message: String) -> Failure {
        Failure {
            loc: loc.clone(),
            message,
            not_supported: true,
        }
    }
}

/// Transforms the AD nodes in `b` and everything nested in it.
/// `env`: the types of the variables bound in the function (the free variables of an AD node's
/// lambda are among them).
fn body(b: &mut Body, ns: &mut NameSource, env: &HashMap<VName, Type>) -> Result<(), Failure> {
    let mut out = Vec::with_capacity(b.stms.len());
    for mut s in std::mem::take(&mut b.stms) {
        for nb in nested_bodies(&mut s.exp) {
            body(nb, ns, env)?;
        }
        match s.exp {
            Exp::Jvp {
                ref lam,
                ref args,
                ref seeds,
            } => {
                let dl = super::fwd::jvp_lambda(lam, ns).map_err(|c| {
                    Failure::not_supported(&s.loc, format!("not supported: jvp of {c}"))
                })?;
                bind_inline(&s, dl, args, seeds, &mut out)?;
            }
            Exp::Vjp {
                ref lam,
                ref args,
                ref seeds,
            } => {
                let dl = super::rev::vjp_lambda_in(lam, ns, env).map_err(|c| {
                    Failure::not_supported(&s.loc, format!("not supported: vjp of {c}"))
                })?;
                bind_inline(&s, dl, args, seeds, &mut out)?;
            }
            _ => out.push(s),
        }
    }
    b.stms = out;
    Ok(())
}

/// Binds the derivative lambda `dl` inline: its params to `args` then `seeds`, its results to
/// the node's pattern.
fn bind_inline(
    s: &Stm,
    dl: Lambda,
    args: &[SubExp],
    seeds: &[SubExp],
    out: &mut Vec<Stm>,
) -> Result<(), Failure> {
    let inputs: Vec<&SubExp> = args.iter().chain(seeds).collect();
    if inputs.len() != dl.params.len() || dl.body.result.len() != s.pat.elems.len() {
        return Err(Failure {
            loc: s.loc.clone(),
            message: "internal error: the derivative does not match its AD node".to_string(),
            not_supported: false,
        });
    }
    let with_info = |mut st: Stm| {
        st.attrs.0.extend(s.attrs.0.iter().cloned());
        if st.loc.is_none() {
            st.loc = s.loc.clone();
        }
        st
    };
    for (p, a) in dl.params.into_iter().zip(inputs) {
        out.push(with_info(mk_stm(vec![p], Exp::SubExp(a.clone()))));
    }
    out.extend(dl.body.stms.into_iter().map(with_info));
    for (pe, r) in s.pat.elems.iter().zip(dl.body.result) {
        out.push(with_info(mk_stm(vec![pe.clone()], Exp::SubExp(r))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::ir::check::check_program;
    use crate::ir::{Body, Exp, Program};
    use crate::passes::traverse::nested_bodies_ref;
    use crate::value::Value;
    use crate::values::parse_values;

    /// The number of AD nodes anywhere in the program.
    fn ad_nodes(p: &Program) -> usize {
        fn body(b: &Body) -> usize {
            b.stms
                .iter()
                .map(|s| {
                    let own = usize::from(matches!(s.exp, Exp::Jvp { .. } | Exp::Vjp { .. }));
                    own + nested_bodies_ref(&s.exp)
                        .into_iter()
                        .map(body)
                        .sum::<usize>()
                })
                .sum()
        }
        p.funs.iter().map(|f| body(&f.body)).sum()
    }

    fn compile(src: &str) -> crate::Compiled {
        let checked = crate::check("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        // Every pass keeps the IR with AD nodes valid.
        let lowered = crate::lower::lower_program(&checked.ast, &checked.sources);
        check_program(&lowered.program).unwrap_or_else(|e| panic!("lowered: {e:?}"));
        crate::passes::simplify_with(lowered.program, &mut |name, p| {
            check_program(p).unwrap_or_else(|e| panic!("after {name}: {e:?}"))
        });
        let c = crate::compile("test.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        check_program(&c.ir_ad).unwrap_or_else(|e| panic!("ir_ad: {e:?}"));
        check_program(&c.ir).unwrap_or_else(|e| panic!("ir: {e:?}"));
        assert_eq!(ad_nodes(&c.ir), 0, "AD nodes left in the final IR");
        c
    }

    fn run(c: &crate::Compiled, entry: &str, args: &str) -> String {
        let args = parse_values(args.as_bytes()).expect("values");
        let r = c
            .run_interp(entry, args)
            .unwrap_or_else(|e| panic!("{entry}: {e}"));
        r.iter()
            .map(|v: &Value| crate::values::write_text(v))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn nodes_are_left_by_lowering_and_removed_by_the_pass() {
        let c = compile(
            "def f (x: f64, y: f64) = f64.log x + x * y - f64.sin y
entry main (a: f64) (b: f64) = jvp2 f (a, b) (1, 0)",
        );
        assert_eq!(ad_nodes(&c.ir_ad), 1);
        let printed = crate::ir::print::program_to_string(&c.ir_ad);
        assert!(printed.contains("jvp (\\("), "{printed}");
        assert_eq!(run(&c, "main", "2.0 5.0"), "11.652071455223084f64 5.5f64");
    }

    #[test]
    fn the_checker_rejects_mismatched_seeds() {
        let c = compile("entry main (x: f64) (y: f64) = vjp (\\(a, b) -> a * b) (x, y) 1");
        let mut p = c.ir_ad.clone();
        let Exp::Vjp { seeds, .. } = &mut p.funs[0].body.stms[0].exp else {
            panic!("expected a vjp node first");
        };
        seeds.push(seeds[0].clone());
        let e = check_program(&p).unwrap_err();
        assert!(format!("{e:?}").contains("vjp seeds"), "{e:?}");
        let Exp::Vjp { seeds, args, .. } = &mut p.funs[0].body.stms[0].exp else {
            unreachable!()
        };
        seeds.pop();
        args[0] = crate::ir::SubExp::Const(crate::prim::PrimValue::Bool(true));
        let e = check_program(&p).unwrap_err();
        assert!(format!("{e:?}").contains("vjp arguments"), "{e:?}");
    }

    #[test]
    fn nested_ad_is_transformed_innermost_first() {
        // d²/dx² x³ = 6x, with the inner jvp inside the outer one's lambda.
        let c = compile(
            "entry main (x: f64) = jvp (\\a -> jvp (\\y -> y * y * y) a 1) x 1
entry in_map (xs: []f64) = map (\\x -> jvp (\\y -> f64.sin y) x 1) xs",
        );
        assert_eq!(ad_nodes(&c.ir_ad), 3);
        assert_eq!(run(&c, "main", "2.0"), "12.0f64");
        assert_eq!(
            run(&c, "in_map", "[0.0, 1.0]"),
            "[1.0f64, 0.5403023058681398f64]"
        );
    }

    #[test]
    fn result_sizes_computed_inside_are_differentiated_at_once() {
        let c = compile("entry main (x: f64) = jvp (\\a -> replicate (i64.f64 a) (a * a)) x 1");
        assert_eq!(ad_nodes(&c.ir_ad), 0);
        assert_eq!(run(&c, "main", "3.0"), "[6.0f64, 6.0f64, 6.0f64]");
    }

    #[test]
    fn an_entry_that_cannot_be_differentiated_fails_alone() {
        let c = crate::compile(
            "test.fut",
            "entry bad (x: f64) = vjp (\\c -> #[stripmine(100)] loop y = c for i < 4 do y * c) x 1.0
entry good (x: f64) = jvp (\\y -> y * y) x 1",
        )
        .unwrap_or_else(|e| panic!("{}", e.render()));
        let d = c.entry_errors.get("bad").expect("an error for `bad`");
        let text = d.render(&c.sources);
        assert!(
            text.starts_with("error: not supported: vjp of #[stripmine(100)]"),
            "{text}"
        );
        assert!(text.contains("test.fut:1:22"), "{text}");
        assert!(c.ir.entry("bad").is_none());
        assert_eq!(run(&c, "good", "3.0"), "6.0f64");
        let e = c.run_interp("bad", vec![]).unwrap_err();
        assert!(
            e.message.starts_with("not supported: vjp of"),
            "{}",
            e.message
        );
    }
}
