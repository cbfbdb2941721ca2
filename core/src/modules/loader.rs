//! Finding the files that `import "path"` names.
//!
//! A [`Loader`] turns an import in some file into the imported file's text. [`FileLoader`] reads
//! `path.fut` relative to the importing file's directory, as Futhark does (so
//! `import "lib/github.com/diku-dk/linalg/linalg"` finds a package laid out by `futhark pkg`).
//! [`NoImports`] is for programs given as text with no file behind them (tests, the fuzzer,
//! embedding): an import there is an error that says so.

use std::path::{Component, Path, PathBuf};

/// A file found for an import.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// What identifies the file: two imports with the same key are the same file, loaded once
    /// (for files on disk: the canonical path).
    pub key: String,
    /// The name diagnostics report it under.
    pub name: String,
    pub text: String,
}

/// Where imported files come from.
pub trait Loader {
    /// The file that `import "path"` in the file named `importer` refers to, or why there is
    /// none (a message that completes "cannot import \"path\": ...").
    fn load(&mut self, importer: &str, path: &str) -> Result<Loaded, String>;
    /// The key ([`Loaded::key`]) of the program's own file, named `name` (so that a file
    /// importing the program is seen as a cycle).
    fn key_of(&mut self, name: &str) -> String {
        name.to_string()
    }
}

/// No imports: the program is text without a file.
pub struct NoImports;

impl Loader for NoImports {
    fn load(&mut self, _importer: &str, _path: &str) -> Result<Loaded, String> {
        Err(
            "the program was given as text, with no file to import relative to \
             (compile it from a file: `vkad_core::compile_file`)"
                .to_string(),
        )
    }
}

/// Imports from the file system, relative to the importing file.
pub struct FileLoader;

impl FileLoader {
    /// The path `import "path"` in `importer` names.
    pub fn resolve(importer: &str, path: &str) -> PathBuf {
        let dir = Path::new(importer).parent().unwrap_or(Path::new(""));
        normalize(&dir.join(format!("{path}.fut")))
    }
}

impl Loader for FileLoader {
    fn load(&mut self, importer: &str, path: &str) -> Result<Loaded, String> {
        let file = FileLoader::resolve(importer, path);
        let name = file.display().to_string();
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("cannot read {name}: {e}"))?;
        Ok(Loaded {
            key: self.key_of(&name),
            name,
            text,
        })
    }

    fn key_of(&mut self, name: &str) -> String {
        std::fs::canonicalize(name)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| normalize(Path::new(name)).display().to_string())
    }
}

/// `a/./b/../c` as `a/c`, without looking at the file system (a leading `..` stays).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let last_is_normal =
                    matches!(out.components().next_back(), Some(Component::Normal(_)));
                if last_is_normal {
                    out.pop();
                } else if !matches!(out.components().next_back(), Some(Component::RootDir)) {
                    out.push("..");
                }
            }
            c => out.push(c.as_os_str()),
        }
    }
    out
}
