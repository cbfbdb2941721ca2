//! The evaluation of declarations and module expressions: the heart of the elaboration. Each
//! value or type declaration is resolved ([`super::resolve`]), renamed to its unique internal
//! name ([`super::env::Namer`]) and emitted to the flat program, in order; module-level
//! declarations produce [`ModVal`]s and scopes ([`Env`]) and emit nothing themselves.

use std::collections::HashMap;
use std::rc::Rc;

use super::env::{Env, Functor, ModVal, Namer, TypeRef, ValRef};
use super::loader::Loader;
use super::resolve::Resolver;
use super::sigs::{eval_sig, restrict};
use crate::diag::{Diagnostic, SourceMap, Span};
use crate::syntax::ast::{Dec, ModExp};

type R<T> = Result<T, Diagnostic>;

/// Where declarations are being elaborated.
#[derive(Clone, Debug)]
pub(crate) struct Ctx {
    /// Prepended to the names of the definitions (`linalg_f64.`; empty at a file's top level).
    pub prefix: String,
    /// Whether these are the top-level declarations of the main file, where `entry` declares an
    /// entry point.
    pub main_top: bool,
    /// Whether these are declarations inside a module (where `entry` is an error).
    pub in_module: bool,
    /// The name of the file they are in (imports are relative to it).
    pub file: String,
}

impl Ctx {
    fn member(&self, module: &str) -> Ctx {
        Ctx {
            prefix: format!("{}{module}.", self.prefix),
            main_top: false,
            in_module: true,
            file: self.file.clone(),
        }
    }
    fn anonymous(&self) -> Ctx {
        Ctx {
            main_top: false,
            in_module: true,
            ..self.clone()
        }
    }
}

/// A file's state in [`Elab::files`].
#[derive(Clone, Debug)]
pub(crate) enum FileState {
    /// Being elaborated (an import of it now is a cycle).
    InProgress,
    /// Done: its top-level declarations that are not `local`.
    Done(Rc<Env>),
}

/// The elaborator's state for one program.
pub(crate) struct Elab<'a> {
    /// The flat program, in order.
    pub out: Vec<Dec>,
    pub namer: Namer,
    pub sources: &'a mut SourceMap,
    pub loader: &'a mut dyn Loader,
    /// Every file met so far, by [`super::loader::Loaded::key`].
    pub files: HashMap<String, FileState>,
    /// The files being elaborated, importer first: (key, name).
    pub chain: Vec<(String, String)>,
    /// The scope every file starts with: the builtin modules and the prelude.
    pub base: Env,
    /// Functor applications made so far ([`super::functor::MAX_APPLICATIONS`]).
    pub applications: u32,
}

impl<'a> Elab<'a> {
    /// Elaborates declarations in order: `scope` is what they see (and grows with them),
    /// `exports` receives the names they define that are not `local`.
    pub fn decs(&mut self, decs: &[Dec], scope: &mut Env, exports: &mut Env, ctx: &Ctx) -> R<()> {
        for d in decs {
            self.dec(d, scope, Some(exports), ctx)?;
        }
        Ok(())
    }

    fn dec(&mut self, d: &Dec, scope: &mut Env, exports: Option<&mut Env>, ctx: &Ctx) -> R<()> {
        match d {
            Dec::Val(v) => {
                if v.entry && ctx.in_module {
                    return Err(Diagnostic::error(
                        v.name_span,
                        "entry points must be declared at the top level, not in a module",
                    ));
                }
                let mut v = v.clone();
                let keep_name = ctx.main_top && (v.entry || v.name == "main");
                let internal = if keep_name {
                    self.namer.entry(&v.name)
                } else {
                    self.namer.val(&format!("{}{}", ctx.prefix, v.name))
                };
                // An imported file's entry points are ordinary functions (as in Futhark).
                v.entry &= ctx.main_top;
                let r = ValRef::Entity(internal.clone());
                // As in Futhark, a function (with parameters) is in scope in its own body: a use
                // of the name there is recursion, which the type checker reports. A constant is
                // not: `def copy = copy` means the `copy` defined before.
                if v.params.is_empty() {
                    Resolver::new(scope).val_dec(&mut v)?;
                    scope.vals.insert(v.name.clone(), r.clone());
                } else {
                    scope.vals.insert(v.name.clone(), r.clone());
                    Resolver::new(scope).val_dec(&mut v)?;
                }
                if let Some(ex) = exports {
                    ex.vals.insert(v.name.clone(), r);
                }
                v.name = internal;
                self.out.push(Dec::Val(v));
            }
            Dec::Type(t) => {
                let mut t = t.clone();
                let internal = self.namer.ty(&format!("{}{}", ctx.prefix, t.name));
                Resolver::new(scope).type_dec(&mut t)?;
                let r = TypeRef::Entity(internal.clone());
                scope.types.insert(t.name.clone(), r.clone());
                if let Some(ex) = exports {
                    ex.types.insert(t.name.clone(), r);
                }
                t.name = internal;
                self.out.push(Dec::Type(t));
            }
            Dec::Module(m) => {
                let v = if m.params.is_empty() {
                    let v = self.mod_exp(&m.body, scope, &ctx.member(&m.name))?;
                    match &m.sig {
                        Some(s) => {
                            let what = format!("module `{}`", m.name);
                            ascribe(v, s, scope, &what)?
                        }
                        None => v,
                    }
                } else {
                    ModVal::Functor(Rc::new(Functor {
                        name: m.name.clone(),
                        params: m.params.clone(),
                        closure: scope.clone(),
                        sig: m.sig.clone(),
                        body: m.body.clone(),
                    }))
                };
                scope.mods.insert(m.name.clone(), v.clone());
                if let Some(ex) = exports {
                    ex.mods.insert(m.name.clone(), v);
                }
            }
            Dec::ModType(m) => {
                let s = Rc::new(eval_sig(&m.sig, scope)?);
                scope.sigs.insert(m.name.clone(), s.clone());
                if let Some(ex) = exports {
                    ex.sigs.insert(m.name.clone(), s);
                }
            }
            Dec::Open(m, span) | Dec::Include(m, span) => {
                let v = self.mod_exp(m, scope, &ctx.anonymous())?;
                let ModVal::Struct(env) = v else {
                    return Err(Diagnostic::error(
                        *span,
                        "cannot open a parametric module: apply it to its arguments first",
                    ));
                };
                scope.extend(&env);
                if let Some(ex) = exports {
                    ex.extend(&env);
                }
            }
            Dec::Local(d, _) => self.dec(d, scope, None, ctx)?,
            Dec::Import(path, span) => {
                // `import "p"` is `local open import "p"`: not re-exported.
                let env = self.import(path, *span, &ctx.file)?;
                scope.extend(&env);
            }
        }
        Ok(())
    }

    /// Evaluates a module expression in `scope`.
    pub fn mod_exp(&mut self, m: &ModExp, scope: &Env, ctx: &Ctx) -> R<ModVal> {
        match m {
            ModExp::Var(q, span) => {
                let (first, rest) = match q.quals.split_first() {
                    Some((first, rest)) => {
                        let mut rest = rest.to_vec();
                        rest.push(q.name.clone());
                        (first.clone(), rest)
                    }
                    None => (q.name.clone(), vec![]),
                };
                let Some(m) = scope.mods.get(&first) else {
                    if scope.vals.contains_key(&first) {
                        return Err(Diagnostic::error(
                            *span,
                            format!("`{first}` is a value, not a module"),
                        )
                        .with_label("not a module"));
                    }
                    return Err(unknown_module(&first, *span));
                };
                if rest.is_empty() {
                    return Ok(m.clone());
                }
                let (last, path) = rest
                    .split_last()
                    .map(|(l, p)| (l.clone(), p.to_vec()))
                    .unwrap_or_default();
                let env = walk_path(m.clone(), &first, &path, *span)?;
                env.mods.get(&last).cloned().ok_or_else(|| {
                    Diagnostic::error(*span, format!("unknown module `{q}`"))
                        .with_label(format!("no module `{last}` in it"))
                })
            }
            ModExp::Struct(decs, _) => {
                let mut inner = scope.clone();
                let mut exports = Env::default();
                self.decs(decs, &mut inner, &mut exports, &ctx.anonymous())?;
                Ok(ModVal::Struct(Rc::new(exports)))
            }
            ModExp::Apply(f, a, span) => {
                let fv = self.mod_exp(f, scope, ctx)?;
                let av = self.mod_exp(a, scope, &ctx.anonymous())?;
                super::functor::apply(self, fv, av, *span, ctx)
            }
            ModExp::Ascribe(m, s, _) => {
                let v = self.mod_exp(m, scope, ctx)?;
                ascribe(v, s, scope, "the module")
            }
            ModExp::Import(path, span) => {
                let env = self.import(path, *span, &ctx.file)?;
                Ok(ModVal::Struct(env))
            }
        }
    }

    /// The top-level names of the file `import "path"` in file `importer` names, elaborating it
    /// the first time.
    fn import(&mut self, path: &str, span: Span, importer: &str) -> R<Rc<Env>> {
        let loaded = self.loader.load(importer, path).map_err(|m| {
            Diagnostic::error(span, format!("cannot import \"{path}\": {m}"))
                .with_label("imported here")
        })?;
        match self.files.get(&loaded.key) {
            Some(FileState::Done(env)) => return Ok(env.clone()),
            Some(FileState::InProgress) => {
                let start = self
                    .chain
                    .iter()
                    .position(|(k, _)| *k == loaded.key)
                    .unwrap_or(0);
                let mut names: Vec<&str> = self.chain[start..]
                    .iter()
                    .map(|(_, n)| n.as_str())
                    .collect();
                names.push(&loaded.name);
                return Err(Diagnostic::error(
                    span,
                    format!("cyclic import: {}", names.join(" imports ")),
                )
                .with_label("this import closes the cycle"));
            }
            None => {}
        }
        let file = self.sources.add(loaded.name.as_str(), loaded.text.as_str());
        let prog = crate::syntax::parser::parse_program(&loaded.text, file).map_err(|ds| {
            ds.0.into_iter().next().unwrap_or_else(|| {
                Diagnostic::error(span, format!("cannot import \"{path}\": it does not parse"))
            })
        })?;
        self.files.insert(loaded.key.clone(), FileState::InProgress);
        self.chain.push((loaded.key.clone(), loaded.name.clone()));
        let mut scope = self.base.clone();
        let mut exports = Env::default();
        let ctx = Ctx {
            prefix: String::new(),
            main_top: false,
            in_module: false,
            file: loaded.name.clone(),
        };
        self.decs(&prog.decs, &mut scope, &mut exports, &ctx)?;
        self.chain.pop();
        let env = Rc::new(exports);
        self.files.insert(loaded.key, FileState::Done(env.clone()));
        Ok(env)
    }
}

/// The error for a module name that is not in scope.
pub(crate) fn unknown_module(name: &str, span: Span) -> Diagnostic {
    if name == "intrinsics" {
        // Futhark's compiler-internal module, used by its prelude and some of its tests.
        return Diagnostic::not_supported(span, "the `intrinsics` module");
    }
    Diagnostic::error(span, format!("unknown module `{name}`"))
        .with_label("no module of this name is in scope")
}

/// `m : s`: the view of module `m` through module type `s`.
fn ascribe(v: ModVal, s: &crate::syntax::ast::SigExp, scope: &Env, what: &str) -> R<ModVal> {
    let sig = eval_sig(s, scope)?;
    match v {
        ModVal::Struct(env) => Ok(ModVal::Struct(Rc::new(restrict(
            &env,
            &sig,
            s.span(),
            what,
        )?))),
        ModVal::Functor(f) => Err(Diagnostic::error(
            s.span(),
            format!(
                "`{}` is a parametric module; vkad has no module types for parametric modules",
                f.name
            ),
        )),
    }
}

/// The module at path `first.rest...`, starting from `m` (the value of `first`): every module
/// on the way must be a module with members, not a functor.
pub(crate) fn walk_path(m: ModVal, first: &str, rest: &[String], span: Span) -> R<Rc<Env>> {
    let mut cur = m;
    let mut name = first.to_string();
    let mut rest = rest.iter();
    loop {
        let env = match cur {
            ModVal::Struct(env) => env,
            ModVal::Functor(f) => {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "`{name}` is a parametric module: it must be applied to {} more argument(s) before its members can be used",
                        f.params.len()
                    ),
                )
                .with_label("wrong number of functor arguments"))
            }
        };
        let Some(next) = rest.next() else {
            return Ok(env);
        };
        cur = env.mods.get(next).cloned().ok_or_else(|| {
            Diagnostic::error(span, format!("module `{name}` has no module `{next}`"))
                .with_label("unknown module")
        })?;
        name = format!("{name}.{next}");
    }
}
