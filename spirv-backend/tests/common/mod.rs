//! Shared helpers: one validated device context per test binary, and differential checks
//! against the interpreter.
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};
use vkad_core::testing::compare_values;
use vkad_core::value::Value;
use vkad_spirv::{run_entry, Context, ContextOptions};

pub fn ctx() -> Arc<Context> {
    static CTX: OnceLock<Arc<Context>> = OnceLock::new();
    CTX.get_or_init(|| {
        let c = Context::new(&ContextOptions {
            device: None,
            validation: true,
            pipeline_cache: vkad_vk::PipelineCacheMode::Off,
        })
        .expect("a Vulkan device (install mesa-vulkan-drivers)");
        // Every module goes through spirv-val before pipeline creation.
        c.set_validate_spirv(true);
        Arc::new(c)
    })
    .clone()
}

/// Runs `entry` of `src` on the interpreter and on Vulkan and requires the same results (or
/// both failing with the same message).
pub fn same(src: &str, entry: &str, args: Vec<Value>) {
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    let want = c.run_interp(entry, args.clone()).map_err(|e| e.to_string());
    let got = run_entry(&ctx(), &c, entry, args);
    match (&want, &got) {
        (Ok(w), Ok(g)) => {
            let ms = compare_values(g, w);
            assert!(
                ms.is_empty(),
                "{entry}: mismatch: {:?}\nsrc:\n{src}",
                ms.iter().map(|m| m.to_string()).collect::<Vec<_>>()
            );
        }
        (Err(w), Err(g)) => {
            assert!(
                matches!(g, vkad_spirv::error::Error::Runtime { .. }),
                "{entry}: the interpreter failed on the input ({w}) but Vulkan: {g:?}"
            );
            assert_eq!(&g.to_string(), w, "different errors")
        }
        _ => panic!("{entry}: interpreter {want:?} but vulkan {got:?}\nsrc:\n{src}"),
    }
}

/// Runs on Vulkan only and returns the result or error.
pub fn run(
    src: &str,
    entry: &str,
    args: Vec<Value>,
) -> Result<Vec<Value>, vkad_spirv::error::Error> {
    let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
    run_entry(&ctx(), &c, entry, args)
}
