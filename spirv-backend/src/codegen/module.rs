//! A generated module as `vkad spirv` exports it ([`crate::record`]): the SPIR-V words, the
//! bindings it declares, and the statement that needed it.

use crate::codegen::KernelCode;
use vkad_core::diag::SrcLoc;

/// One SPIR-V compute module made for an entry point.
#[derive(Clone, Debug)]
pub struct CompiledModule {
    /// What the kernel does: a builtin's key (`strided U32 1 false`) or the statement kind and
    /// which of its kernels it is (`map/map`, `reduce/pass1-tree-reduce`).
    pub name: String,
    /// The module (SPIR-V words; entry point `main`, `GLCompute`).
    pub words: Vec<u32>,
    /// Storage-buffer bindings in descriptor set 0: binding 0 is the status word buffer,
    /// 1 the argument words (64-bit each), then the arrays.
    pub bindings: u32,
    /// Push-constant bytes (vkad's kernels take their arguments in a buffer: 0).
    pub push_bytes: u32,
    /// The first line of the IR statement that first needed the module, if any.
    pub stm: Option<String>,
    /// That statement's source location (`file:line:col`).
    pub loc: Option<String>,
}

impl CompiledModule {
    /// The module of `code` named `name`, made for the statement (or plan step) `from` at its
    /// location, if any.
    pub(crate) fn new(
        name: &str,
        code: &KernelCode,
        from: Option<(&dyn std::fmt::Display, Option<&SrcLoc>)>,
    ) -> CompiledModule {
        CompiledModule {
            name: name.to_string(),
            words: code.words.clone(),
            bindings: 2 + code.binds.len() as u32,
            push_bytes: 0,
            stm: from.map(|(s, _)| {
                let text = s.to_string();
                let line = text.lines().next().unwrap_or("").trim();
                if line.chars().count() > 160 {
                    let cut: String = line.chars().take(157).collect();
                    format!("{cut}...")
                } else {
                    line.to_string()
                }
            }),
            loc: from.and_then(|(_, l)| l).map(|l| l.to_string()),
        }
    }

    /// A file-name-safe form of the name (`strided-U32-1-false`, `map-0`).
    pub fn file_stem(&self) -> String {
        let mut out = String::new();
        for c in self.name.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                out.push(c);
            } else if !out.ends_with('-') {
                out.push('-');
            }
        }
        out.trim_matches('-').to_string()
    }
}
