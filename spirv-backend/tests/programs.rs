//! Runs every dataset of `tests/programs/*.fut` on the Vulkan backend (validation layer on):
//! none may fail; datasets using constructs the backend does not support yet are skipped and
//! counted. With `small_nest=MAX`: nests of little work take their flattened versions here (the
//! test programs' nests are small), their sequentialised ones in CI's run of `vkad test` at the
//! device's defaults.

use std::path::PathBuf;
use vkad_core::testing::{run_paths_with, RunOptions};
use vkad_spirv::{ContextOptions, VulkanBackend};

#[test]
fn all_programs_on_vulkan() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/programs");
    let backend = VulkanBackend::tuned(
        ContextOptions {
            device: None,
            validation: true,
            pipeline_cache: vkad_vk::PipelineCacheMode::Off,
        },
        vec![format!("small_nest={}", i64::MAX)],
    )
    .expect("a threshold setting");
    let mut out = Vec::new();
    let s = run_paths_with(&[dir], &backend, &RunOptions::default(), &mut out)
        .expect("writing to a Vec");
    let text = String::from_utf8_lossy(&out);
    println!("{text}");
    let unsupported = text.matches("skipped: not supported").count();
    println!("vulkan: {s}; datasets skipped as not supported at run time: {unsupported}");
    assert_eq!(s.failed, 0, "{text}");
    assert!(s.passed > 0);
}
