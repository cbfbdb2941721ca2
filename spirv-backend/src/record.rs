//! Ahead-of-time export of an entry point's SPIR-V modules (`vkad spirv`).
//!
//! [`generate_entry`] makes them from the entry's kernel-IR plan without inputs (module
//! [`crate::runtime::aot`]), optionally adding what a run on given inputs records.
//! [`compile_entry`] records what one run makes instead, described below.
//!
//! The runtime makes kernels lazily: which modules a run needs depends on the host types and
//! ranks it meets, on which branch of an `if` runs and on the builtin copy kernels its array
//! statements use. [`compile_entry`] *runs* the entry once on given inputs with recording on:
//! every module made during that run is recorded, with the statement and source location that first needed it. Branches
//! not taken on those inputs contribute no modules.
//!
//! Recorded modules always use descriptor bindings for their arrays (the layout documented on
//! [`CompiledModule::bindings`]), also on devices where the executor would otherwise reach
//! arrays through device addresses; so the recording run is subject to
//! `maxStorageBufferRange` and `maxPerStageDescriptorStorageBuffers`.

pub use crate::codegen::module::CompiledModule;
use crate::error::Error;
use std::fmt::Write as _;
use std::path::Path;
use vkad_core::value::Value;
use vkad_core::Compiled;
use vkad_vk::Context;

/// Runs entry `entry` of `compiled` on `args` with recording on and returns its results and
/// every SPIR-V module made during the run, in the order they were made.
pub fn compile_entry(
    ctx: &Context,
    compiled: &Compiled,
    entry: &str,
    args: Vec<Value>,
) -> crate::error::Result<(Vec<Value>, Vec<CompiledModule>)> {
    crate::entry_error(compiled, entry)?;
    let args = args.into_iter().map(crate::device::Arg::Host).collect();
    let (outs, modules) = crate::runtime::run_args(ctx, &compiled.ir, entry, args, false, true)?;
    let values = outs
        .into_iter()
        .map(|o| match o {
            crate::device::Out::Host(v) => Ok(v),
            crate::device::Out::Device(_) => Err(Error::bug("device result")),
        })
        .collect::<crate::error::Result<Vec<_>>>()?;
    Ok((values, modules))
}

/// The SPIR-V modules of entry `entry` of `compiled` for the device of `ctx`, generated from
/// its kernel-IR plan without running it ([`crate::runtime::aot`]): every module any run can
/// launch. A kernel that needs a run-time fact to be generated is an
/// [`Error::NotSupported`] without `input`; with `input` (one value per IR parameter) the
/// entry is also run once on it through the kernel IR with recording on, and the modules that
/// run made beyond the generated ones are added (after them, in the order the run made them).
pub fn generate_entry(
    ctx: &Context,
    compiled: &Compiled,
    entry: &str,
    input: Option<Vec<Value>>,
) -> crate::error::Result<Vec<CompiledModule>> {
    crate::entry_error(compiled, entry)?;
    let prog = crate::runtime::DeviceProgram::for_entry(ctx, &compiled.ir, entry)?;
    let aot = crate::runtime::aot::generate(ctx, &prog, entry)?;
    let mut modules = aot.modules;
    let Some(args) = input else {
        if let Some(u) = aot.unresolved.first() {
            return Err(u.error());
        }
        return Ok(modules);
    };
    let opts = crate::runtime::RunOptions {
        record: true,
        ..Default::default()
    };
    let args = args.into_iter().map(crate::device::Arg::Host).collect();
    let th = crate::runtime::device_thresholds(ctx);
    let run = prog.run_args(ctx, entry, args, &th, &opts)?;
    let mut seen: std::collections::HashSet<Vec<u32>> =
        modules.iter().map(|m| m.words.clone()).collect();
    for m in run.modules {
        if seen.insert(m.words.clone()) {
            modules.push(m);
        }
    }
    Ok(modules)
}

/// Validates every module ([`vkad_vk::validate_spirv`]) and writes it to
/// `dir/<n>_<name>.spv` (little-endian words), plus `dir/index.txt` with one block per module:
/// file, name, bindings, push-constant bytes, statement and source location. Creates `dir`.
/// Returns the paths written (modules, then the index).
pub fn write_modules(
    dir: &Path,
    entry: &str,
    modules: &[CompiledModule],
) -> crate::error::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut index = format!(
        "# SPIR-V modules of entry `{entry}` ({} modules), in the order the executor made them.\n\
         # Each: descriptor set 0 of `bindings` storage buffers (0: status words, 1: 64-bit \
         argument words, then arrays), entry point `main`.\n",
        modules.len()
    );
    let mut written = Vec::new();
    for (n, m) in modules.iter().enumerate() {
        vkad_vk::validate_spirv(&m.words)
            .map_err(|e| Error::bug(format!("module {n} ({}): {e}", m.name)))?;
        let file = format!("{n}_{}.spv", m.file_stem());
        let path = dir.join(&file);
        let bytes: Vec<u8> = m.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&path, bytes).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
        let _ = writeln!(index, "\n[{file}]");
        let _ = writeln!(index, "name = {}", m.name);
        let _ = writeln!(index, "words = {}", m.words.len());
        let _ = writeln!(index, "bindings = {}", m.bindings);
        let _ = writeln!(index, "push_constant_bytes = {}", m.push_bytes);
        let _ = writeln!(
            index,
            "statement = {}",
            m.stm.as_deref().unwrap_or("(entry setup)")
        );
        let _ = writeln!(
            index,
            "location = {}",
            m.loc.as_deref().unwrap_or("(unknown)")
        );
    }
    let path = dir.join("index.txt");
    std::fs::write(&path, index).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    written.push(path);
    Ok(written)
}
