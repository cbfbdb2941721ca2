//! The default pipeline cache place and `VKAD_PIPELINE_CACHE`. (Its own test binary, with one
//! test, because it changes the environment, which contexts read when they are made.)

mod common;

use common::*;
use std::path::{Path, PathBuf};
use vkad_vk::{ContextOptions, PipelineCacheMode};

/// A context with the default cache mode; returns its cache file after dropping it.
fn default_context_file() -> Option<PathBuf> {
    let ctx = context_with(&ContextOptions {
        pipeline_cache: PipelineCacheMode::UserDir,
        ..options()
    });
    ctx.kernel("axpb", &axpb(true, &[]), "main", 1, 12).unwrap();
    ctx.pipeline_cache().file.clone()
}

fn written(file: &Path, under: &Path) {
    assert!(file.starts_with(under), "{}", file.display());
    assert!(file.is_file(), "{}", file.display());
}

#[test]
fn the_environment_picks_the_directory_or_turns_the_cache_off() {
    let root = std::env::temp_dir().join(format!("vkad-pcache-env-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (home, xdg, chosen) = (root.join("home"), root.join("xdg"), root.join("chosen"));
    // Nothing else runs in this process while the environment changes.
    std::env::set_var("HOME", &home);
    std::env::remove_var("XDG_CACHE_HOME");
    std::env::remove_var("VKAD_PIPELINE_CACHE");

    // $HOME/.cache/vkad/pipelines, then $XDG_CACHE_HOME/vkad/pipelines.
    let f = default_context_file().unwrap();
    written(&f, &home.join(".cache/vkad/pipelines"));
    std::env::set_var("XDG_CACHE_HOME", &xdg);
    let f = default_context_file().unwrap();
    written(&f, &xdg.join("vkad/pipelines"));

    // VKAD_PIPELINE_CACHE=DIR, =1 (the default place), =0 (off: nothing written).
    std::env::set_var("VKAD_PIPELINE_CACHE", &chosen);
    let f = default_context_file().unwrap();
    assert_eq!(f.parent(), Some(chosen.as_path()));
    written(&f, &chosen);
    std::env::set_var("VKAD_PIPELINE_CACHE", "1");
    assert!(default_context_file().unwrap().starts_with(&xdg));
    std::fs::remove_dir_all(&root).unwrap();
    std::env::set_var("VKAD_PIPELINE_CACHE", "0");
    assert_eq!(default_context_file(), None);
    // (Mesa may keep its own shader cache in $XDG_CACHE_HOME/mesa_shader_cache.)
    assert!(!xdg.join("vkad").exists());

    // The variable does not override an explicit mode.
    let explicit = root.join("explicit");
    let ctx = context_with(&ContextOptions {
        pipeline_cache: PipelineCacheMode::Dir(explicit.clone()),
        ..options()
    });
    ctx.kernel("axpb", &axpb(true, &[]), "main", 1, 12).unwrap();
    let f = ctx.pipeline_cache().file.clone().unwrap();
    drop(ctx);
    written(&f, &explicit);

    // Neither HOME nor XDG_CACHE_HOME: no cache, and nothing fails.
    std::env::remove_var("VKAD_PIPELINE_CACHE");
    std::env::remove_var("XDG_CACHE_HOME");
    std::env::remove_var("HOME");
    assert_eq!(default_context_file(), None);
    std::fs::remove_dir_all(&root).unwrap();
}
