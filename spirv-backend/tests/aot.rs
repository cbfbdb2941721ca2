//! Modules generated without inputs (`runtime::aot`, `vkad spirv` without `--input`) cover
//! every run: each dataset of `tests/programs` runs through the kernel IR with recording on,
//! and every module the run makes must be one the plan-only generation made (byte for byte),
//! unless the generation reported kernels it cannot make without a run. The results must
//! still be right (the runner compares them).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use vkad_core::testing::{run_paths_with, Backend, RunError, RunOptions};
use vkad_core::value::Value;
use vkad_core::Compiled;
use vkad_spirv::runtime::{self, aot, DeviceProgram};
use vkad_spirv::{Arg, Context, ContextOptions, Out};

/// The Vulkan kernel-IR backend, checking each run's modules against the generated ones.
struct Check {
    ctx: Arc<Context>,
    /// Entries checked strictly, and entries with kernels that need a run.
    counts: Mutex<(usize, usize)>,
}

impl Check {
    fn run_checked(
        &self,
        compiled: &Compiled,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Vec<Value>, vkad_spirv::error::Error> {
        let ctx = &self.ctx;
        // The entry's own compile error, as the runner expects it.
        vkad_spirv::generate_entry(ctx, compiled, entry, None).or_else(|e| match e {
            e @ vkad_spirv::error::Error::Entry { .. } => Err(e),
            _ => Ok(Vec::new()),
        })?;
        let prog = DeviceProgram::new(ctx, &compiled.ir)?;
        let generated = aot::generate(ctx, &prog, entry)?;
        let opts = runtime::RunOptions {
            record: true,
            ..Default::default()
        };
        let args = args.into_iter().map(Arg::Host).collect();
        let run = prog.run_args(ctx, entry, args, &runtime::device_thresholds(ctx), &opts)?;
        let words: HashSet<&Vec<u32>> = generated.modules.iter().map(|m| &m.words).collect();
        let missing: Vec<String> = run
            .modules
            .iter()
            .filter(|m| !words.contains(&m.words))
            .map(|m| format!("{} at {}", m.name, m.loc.as_deref().unwrap_or("?")))
            .collect();
        let mut counts = self.counts.lock().unwrap();
        if generated.unresolved.is_empty() {
            counts.0 += 1;
            if !missing.is_empty() {
                return Err(vkad_spirv::error::Error::bug(format!(
                    "modules made by the run but not generated: {missing:?}"
                )));
            }
        } else {
            counts.1 += 1;
        }
        run.outs
            .into_iter()
            .map(|o| match o {
                Out::Host(v) => Ok(v),
                Out::Device(_) => Err(vkad_spirv::error::Error::bug("a device result")),
            })
            .collect()
    }
}

impl Backend for Check {
    fn name(&self) -> &str {
        "vulkan"
    }
    fn run(
        &self,
        compiled: &Compiled,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Vec<Value>, RunError> {
        Ok(self.run_checked(compiled, entry, args)?)
    }
}

#[test]
fn generated_modules_cover_every_run_of_the_test_programs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/programs");
    let ctx = Context::new(&ContextOptions {
        device: None,
        validation: true,
        pipeline_cache: vkad_vk::PipelineCacheMode::Off,
    })
    .expect("a Vulkan device (install mesa-vulkan-drivers)");
    let check = Check {
        ctx: Arc::new(ctx),
        counts: Mutex::new((0, 0)),
    };
    let mut out = Vec::new();
    let s =
        run_paths_with(&[dir], &check, &RunOptions::default(), &mut out).expect("writing to a Vec");
    let text = String::from_utf8_lossy(&out);
    let (strict, lenient) = *check.counts.lock().unwrap();
    println!("{text}\n{s}; runs checked: {strict}, with kernels that need a run: {lenient}");
    assert_eq!(s.failed, 0, "{text}");
    assert!(strict > 0);
}
