//! The values of module-level names: what a name in scope, or a member of a module, stands for
//! once modules are gone, and the unique names the flat program gives to definitions.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::prim::PrimType;
use crate::syntax::ast::{ModParam, SigExp};

/// What a value name refers to in the flat program.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ValRef {
    /// A top-level definition of the flat program, by its unique internal name.
    Entity(String),
    /// A member of a built-in numeric module: `f64.sqrt`, `i32.+`.
    Builtin(PrimType, String),
}

/// What a type name refers to in the flat program.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TypeRef {
    /// A type abbreviation of the flat program, by its unique internal name.
    Entity(String),
    /// A primitive type (the `t` of a numeric module).
    Prim(PrimType),
}

/// The names in one namespace-separated scope: the members of a module, or the declarations
/// visible at some point of a file or module body.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    pub vals: HashMap<String, ValRef>,
    pub types: HashMap<String, TypeRef>,
    pub mods: HashMap<String, ModVal>,
    pub sigs: HashMap<String, Rc<Sig>>,
    /// `Some(p)` when this is the numeric module `p` (or a view of it through a module type):
    /// `T.(e)` then becomes the type checker's own local open of `p`, so that the operators in
    /// `e` are `p`'s.
    pub prim: Option<PrimType>,
}

impl Env {
    /// Adds every member of `other` (later names shadow earlier ones).
    pub fn extend(&mut self, other: &Env) {
        for (k, v) in &other.vals {
            self.vals.insert(k.clone(), v.clone());
        }
        for (k, v) in &other.types {
            self.types.insert(k.clone(), v.clone());
        }
        for (k, v) in &other.mods {
            self.mods.insert(k.clone(), v.clone());
        }
        for (k, v) in &other.sigs {
            self.sigs.insert(k.clone(), v.clone());
        }
    }

    /// The built-in numeric module `p` (made once per thread).
    pub fn numeric_module(p: PrimType) -> Rc<Env> {
        thread_local! {
            static MODULES: std::cell::RefCell<HashMap<PrimType, Rc<Env>>> =
                std::cell::RefCell::new(HashMap::new());
        }
        MODULES.with(|m| {
            m.borrow_mut()
                .entry(p)
                .or_insert_with(|| Rc::new(Env::make_numeric_module(p)))
                .clone()
        })
    }

    /// The built-in numeric module `p`: its functions, constants and operators
    /// ([`crate::builtins::MODULE_FNS`]), its conversions from every primitive type, and its
    /// type `t` (and `int_t` for a float type).
    fn make_numeric_module(p: PrimType) -> Env {
        let mut env = Env {
            prim: Some(p),
            ..Env::default()
        };
        let mut add = |name: &str| {
            if crate::typecheck::builtins::module_member(p, name).is_some() {
                env.vals
                    .insert(name.to_string(), ValRef::Builtin(p, name.to_string()));
            }
        };
        for q in crate::builtins::conversion_names() {
            add(q.name());
        }
        for (name, _, _) in crate::builtins::MODULE_FNS {
            add(name);
        }
        env.types.insert("t".to_string(), TypeRef::Prim(p));
        if let PrimType::Float(f) = p {
            // The unsigned integer type of the same width (`to_bits`, `from_bits`).
            let int_t = PrimType::Int(crate::builtins::bits_type(f));
            env.types.insert("int_t".to_string(), TypeRef::Prim(int_t));
        }
        env
    }

    /// The scope every file starts from before its own declarations: the intrinsic functions
    /// (`map`, `iota`, ...; [`crate::builtins::INTRINSICS`]), the numeric modules (`f64`,
    /// `i32`, ...) and the module `bool` (conversions to `bool`).
    pub fn builtins() -> Env {
        let mut env = Env::default();
        for name in intrinsic_names() {
            env.vals
                .insert(name.to_string(), ValRef::Entity(name.to_string()));
        }
        for p in PrimType::all() {
            env.mods
                .insert(p.name().to_string(), ModVal::Struct(Env::numeric_module(p)));
        }
        env
    }
}

/// The names of the intrinsic functions, which the type checker knows by these names.
pub(crate) fn intrinsic_names() -> impl Iterator<Item = &'static str> {
    crate::builtins::INTRINSICS.iter().map(|(n, _)| *n)
}

/// The value of a module name.
#[derive(Clone, Debug)]
pub(crate) enum ModVal {
    /// A module with members.
    Struct(Rc<Env>),
    /// A parametric module (functor), applied by substitution ([`super::functor`]).
    Functor(Rc<Functor>),
}

/// A parametric module `module F (P1: S1) ... (Pn: Sn) : S = body`, with the arguments it has
/// been given so far (`F A` of a two-parameter functor is a functor of one parameter).
#[derive(Debug)]
pub(crate) struct Functor {
    /// The name it was declared with (for messages and for the names of what it defines when
    /// applied anonymously).
    pub name: String,
    /// The parameters still to be given.
    pub params: Vec<ModParam>,
    /// The scope at the functor's declaration, with the parameters given so far bound.
    pub closure: Env,
    pub sig: Option<SigExp>,
    pub body: crate::syntax::ast::ModExp,
}

/// A module type, reduced to what vkad checks: the names a module must have (and that are
/// visible through it). The types of `val` specifications are not compared with the module's
/// definitions (the type checker checks the uses), see docs/language.md.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sig {
    /// `val` names, in order.
    pub vals: Vec<String>,
    /// `type` names, in order.
    pub types: Vec<String>,
    /// `module` specifications.
    pub mods: Vec<(String, Sig)>,
}

impl Sig {
    pub fn has_type(&self, name: &str) -> bool {
        self.types.iter().any(|t| t == name)
    }
    /// Adds the specifications of `other` (`include`).
    pub fn include(&mut self, other: &Sig) {
        for v in &other.vals {
            if !self.vals.contains(v) {
                self.vals.push(v.clone());
            }
        }
        for t in &other.types {
            if !self.has_type(t) {
                self.types.push(t.clone());
            }
        }
        for (n, s) in &other.mods {
            self.mods.retain(|(m, _)| m != n);
            self.mods.push((n.clone(), s.clone()));
        }
    }
}

/// Unique internal names for the definitions of the flat program. A definition keeps the name
/// it reads as (`dotprod` at the top level, `linalg_f64.dotprod` in module `linalg_f64`) unless
/// that is taken, when `#2`, `#3`, ... is appended: `linalg_f64.dotprod#2`. Names with `.` or
/// `#` cannot be written in source, so they never clash with a local variable. The entry points
/// of the main file keep their exact names (they are the program's interface); no other
/// definition takes them, nor the name of an intrinsic (`def map` is `map#2`, so that a use of
/// the intrinsic `map` emitted later, from a functor's body, still means the intrinsic).
#[derive(Debug, Default)]
pub(crate) struct Namer {
    vals: HashSet<String>,
    types: HashSet<String>,
    /// The main file's entry point names, `main`, and the intrinsics' names (which a use of
    /// an intrinsic is emitted as).
    reserved: HashSet<String>,
}

impl Namer {
    /// A namer that gives none of the `entries` (names of the main file's entry points) and
    /// none of the intrinsics' names to a definition that is not an entry point.
    pub fn new(entries: HashSet<String>) -> Namer {
        let mut reserved = entries;
        reserved.extend(intrinsic_names().map(str::to_string));
        // Lowering takes a top-level `main` for an entry point: only the main file's may be.
        reserved.insert("main".to_string());
        Namer {
            reserved,
            ..Namer::default()
        }
    }

    /// A fresh value name based on `preferred`.
    pub fn val(&mut self, preferred: &str) -> String {
        let name = unique(preferred, |n| {
            self.vals.contains(n) || self.reserved.contains(n)
        });
        self.vals.insert(name.clone());
        name
    }

    /// The exact name of an entry point.
    pub fn entry(&mut self, name: &str) -> String {
        self.vals.insert(name.to_string());
        name.to_string()
    }

    /// A fresh type name based on `preferred`.
    pub fn ty(&mut self, preferred: &str) -> String {
        let name = unique(preferred, |n| self.types.contains(n));
        self.types.insert(name.clone());
        name
    }
}

fn unique(preferred: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(preferred) {
        return preferred.to_string();
    }
    (2..)
        .map(|k| format!("{preferred}#{k}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| preferred.to_string())
}
