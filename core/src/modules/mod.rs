//! Modules and imports, eliminated before type checking.
//!
//! Futhark's module language (`module`, `module type`, parametric modules, `open`, `include`,
//! `local`, `import`) is static: every module and every functor application is known before the
//! program runs. [`elaborate`] evaluates it away, as Futhark's own defunctorisation does, into a
//! flat [`Program`] of value ([`Dec::Val`]) and type ([`Dec::Type`]) declarations that the type
//! checker and lowering accept unchanged:
//!
//! - every definition gets a unique internal name that reads like its path
//!   (`linalg_f64.dotprod`; [`env::Namer`]); entry points keep their names;
//! - every name in an expression or type is resolved with lexical scoping to the definition it
//!   means ([`resolve`]); local bindings shadow module members, opened modules bring members
//!   into scope, later declarations shadow earlier ones;
//! - a functor application evaluates the functor's body again with the parameter bound to the
//!   argument ([`functor`]), so each application has its own copies of the definitions;
//! - module types ([`sigs`]) check that a module has the names they specify and hide the others;
//! - `import "p"` elaborates `p.fut` once ([`loader`] finds it) and brings its top-level names
//!   into scope.
//!
//! The built-in numeric modules (`f64`, `i32`, ...) are modules here too
//! ([`env::Env::numeric_module`]): `module m = mk f64` binds the parameter to them, `T.sqrt`
//! becomes `f64.sqrt` and `T.(e)` the type checker's own local open `f64.(e)`.
//!
//! The files: [`env`] (module values, scopes, unique names), [`eval`] (declarations and module
//! expressions), [`functor`] (application), [`sigs`] (module types), [`resolve`] (names in
//! expressions and types), [`loader`] (finding imported files).

mod env;
mod eval;
mod functor;
mod loader;
mod resolve;
mod sigs;
#[cfg(test)]
mod tests;

pub use loader::{FileLoader, Loaded, Loader, NoImports};

use std::collections::{HashMap, HashSet};

use crate::diag::{Diagnostics, SourceMap};
use crate::syntax::ast::{Dec, Program};
use env::{Env, Namer};
use eval::{Ctx, Elab, FileState};

/// Elaborates the prelude and the main program (named `main_name` in `sources`, where both are
/// already added) into one flat program: the prelude's declarations, then those of every
/// imported file (each once, at its first import), interleaved with the main program's in
/// order. Imported files are read with `loader` and added to `sources`.
pub fn elaborate(
    prelude: &Program,
    main: &Program,
    main_name: &str,
    sources: &mut SourceMap,
    loader: &mut dyn Loader,
) -> Result<Program, Diagnostics> {
    let mut reserved = HashSet::new();
    for d in &main.decs {
        let d = match d {
            Dec::Local(d, _) => d.as_ref(),
            d => d,
        };
        if let Dec::Val(v) = d {
            if v.entry || v.name == "main" {
                reserved.insert(v.name.clone());
            }
        }
    }
    let main_key = loader.key_of(main_name);
    let mut elab = Elab {
        out: Vec::new(),
        namer: Namer::new(reserved),
        sources,
        loader,
        files: HashMap::new(),
        chain: vec![(main_key.clone(), main_name.to_string())],
        base: Env::builtins(),
        applications: 0,
    };
    elab.files.insert(main_key, FileState::InProgress);
    let run = |elab: &mut Elab| -> Result<(), crate::diag::Diagnostic> {
        // The prelude: its names are in scope in every file.
        let mut scope = elab.base.clone();
        let mut exports = Env::default();
        let ctx = Ctx {
            prefix: String::new(),
            main_top: false,
            in_module: false,
            file: crate::PRELUDE_NAME.to_string(),
        };
        elab.decs(&prelude.decs, &mut scope, &mut exports, &ctx)?;
        elab.base.extend(&exports);
        let mut scope = elab.base.clone();
        let mut exports = Env::default();
        let ctx = Ctx {
            prefix: String::new(),
            main_top: true,
            in_module: false,
            file: main_name.to_string(),
        };
        elab.decs(&main.decs, &mut scope, &mut exports, &ctx)
    };
    match run(&mut elab) {
        Ok(()) => Ok(Program { decs: elab.out }),
        Err(d) => Err(Diagnostics(vec![d])),
    }
}
