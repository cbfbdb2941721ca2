//! The persistent pipeline cache: written to the directory the options name, loaded by the
//! next context, and any bad file (random bytes, truncated, another device's) ignored and
//! replaced while kernels still run correctly. Every test has a temporary directory of its own.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use vkad_vk::{
    CacheRejection, Context, ContextOptions, Dispatch, PipelineCacheMode, PipelineCacheStatus,
    VkError,
};

/// An empty directory for one test (removed first if an earlier run left it).
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vkad-pcache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn cached_in(dir: &Path) -> Context {
    context_with(&ContextOptions {
        pipeline_cache: PipelineCacheMode::Dir(dir.to_path_buf()),
        ..options()
    })
}

/// Makes (or takes from the context's kernel cache) the `axpb` kernel and checks that it
/// computes `x * a + 1`.
fn run_kernel(ctx: &Context, a: f32) {
    let n = 1000u32;
    let k = ctx
        .kernel("axpb", &axpb(false, &[]), "main", 2, 12)
        .unwrap();
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = ctx.alloc(4 * u64::from(n)).unwrap();
    let y = ctx.alloc(4 * u64::from(n)).unwrap();
    ctx.upload(&x, 0, &f32_bytes(&xs)).unwrap();
    ctx.run(&[Dispatch {
        kernel: &k,
        buffers: vec![&x, &y],
        push: axpb_push(n, a, 1.0),
        groups: groups(n),
    }])
    .unwrap();
    let ys = f32s(&ctx.download(&y, 0, 4 * u64::from(n)).unwrap());
    assert_eq!(ys, xs.iter().map(|x| x * a + 1.0).collect::<Vec<_>>());
    assert!(ctx.take_validation_messages().is_empty());
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Fills `dir` with a valid cache file (one context that made a pipeline) and returns the
/// file's path.
fn fill(dir: &Path) -> PathBuf {
    let ctx = cached_in(dir);
    run_kernel(&ctx, 2.0);
    let file = ctx.pipeline_cache().file.clone().expect("a cache file");
    drop(ctx);
    assert_eq!(files(dir), vec![file.clone()]);
    file
}

#[test]
fn written_on_drop_and_loaded_by_the_next_context() {
    let dir = temp_dir("roundtrip");
    let ctx = cached_in(&dir);
    let status = ctx.pipeline_cache().clone();
    let file = status.file.clone().expect("a cache file");
    assert_eq!(file.parent(), Some(dir.as_path()));
    assert_eq!(
        status,
        PipelineCacheStatus {
            file: Some(file.clone()),
            loaded_bytes: 0,
            rejected: None,
        }
    );
    // Nothing is written before the context is dropped (or saved).
    run_kernel(&ctx, 2.0);
    assert!(files(&dir).is_empty());
    drop(ctx);
    assert_eq!(files(&dir), vec![file.clone()]);
    let written = std::fs::read(&file).unwrap();
    // vkad's 52-byte header, then at least the Vulkan header of 32 bytes.
    assert!(written.len() >= 52 + 32, "{}", written.len());
    assert_eq!(&written[..8], b"VKADPC\x00\x01");

    let again = cached_in(&dir);
    assert_eq!(again.pipeline_cache().file.as_ref(), Some(&file));
    assert_eq!(again.pipeline_cache().rejected, None);
    assert_eq!(again.pipeline_cache().loaded_bytes, written.len() - 52);
    run_kernel(&again, 3.0);
    drop(again);
    // Only the cache file: no temporary file is left behind.
    assert_eq!(files(&dir), vec![file]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn explicit_save_writes_only_what_is_new() {
    let dir = temp_dir("save");
    let ctx = cached_in(&dir);
    let file = ctx.pipeline_cache().file.clone().unwrap();
    // No pipeline yet: nothing to write.
    ctx.save_pipeline_cache().unwrap();
    assert!(files(&dir).is_empty());
    run_kernel(&ctx, 2.0);
    ctx.save_pipeline_cache().unwrap();
    assert_eq!(files(&dir), vec![file.clone()]);
    // Saved, and nothing new since: neither a second save nor the drop writes again (the
    // file, once removed, stays removed).
    std::fs::remove_file(&file).unwrap();
    ctx.save_pipeline_cache().unwrap();
    drop(ctx);
    assert!(files(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_files_are_ignored_and_replaced() {
    let dir = temp_dir("bad");
    let file = fill(&dir);
    let good = std::fs::read(&file).unwrap();
    let fnv = |d: &[u8]| {
        d.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    // vkad's header: magic, vendor, device, driver, UUID at 20..36, length, checksum at 44..52;
    // the Vulkan header follows, with its UUID at 52 + 16..52 + 32.
    let mut other_uuid = good.clone();
    other_uuid[20] ^= 0x55;
    other_uuid[52 + 16] ^= 0x55;
    let mut vulkan_header_of_another_device = good.clone();
    vulkan_header_of_another_device[52 + 16] ^= 0x55;
    let sum = fnv(&vulkan_header_of_another_device[52..]);
    vulkan_header_of_another_device[44..52].copy_from_slice(&sum.to_le_bytes());
    let mut flipped = good.clone();
    *flipped.last_mut().unwrap() ^= 0x80;
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let cases: Vec<(&str, Vec<u8>, CacheRejection)> = vec![
        ("random bytes", noise, CacheRejection::BadMagic),
        ("empty", Vec::new(), CacheRejection::Truncated),
        (
            "truncated header",
            good[..30].to_vec(),
            CacheRejection::Truncated,
        ),
        (
            "truncated data",
            good[..good.len() - 1].to_vec(),
            CacheRejection::Truncated,
        ),
        ("flipped bit", flipped, CacheRejection::Checksum),
        (
            "another device's UUID",
            other_uuid,
            CacheRejection::OtherDevice,
        ),
        (
            "a Vulkan header of another device",
            vulkan_header_of_another_device,
            CacheRejection::VulkanHeader,
        ),
    ];
    for (what, bytes, why) in cases {
        std::fs::write(&file, &bytes).unwrap();
        let ctx = cached_in(&dir);
        assert_eq!(ctx.pipeline_cache().loaded_bytes, 0, "{what}");
        assert_eq!(ctx.pipeline_cache().rejected, Some(why), "{what}");
        run_kernel(&ctx, 2.0);
        drop(ctx);
        // Replaced by a good file, which the next context loads.
        let ctx = cached_in(&dir);
        assert_eq!(ctx.pipeline_cache().rejected, None, "{what}");
        assert!(ctx.pipeline_cache().loaded_bytes > 0, "{what}");
        run_kernel(&ctx, 2.0);
        drop(ctx);
    }
    // A file vkad cannot read (a directory in its place) is ignored, and the save fails
    // without failing anything else.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let ctx = cached_in(&dir);
    assert!(matches!(
        ctx.pipeline_cache().rejected,
        Some(CacheRejection::Unreadable(_))
    ));
    run_kernel(&ctx, 2.0);
    assert!(matches!(
        ctx.save_pipeline_cache(),
        Err(VkError::PipelineCacheWrite { .. })
    ));
    run_kernel(&ctx, 2.0);
    drop(ctx);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_directory_fails_only_the_explicit_save() {
    let dir = temp_dir("unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    // A regular file where a directory would have to be created (works even as root, for
    // whom permissions do not make a directory read-only).
    let blocker = dir.join("a-file");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let ctx = cached_in(&blocker.join("pipelines"));
    run_kernel(&ctx, 2.0);
    match ctx.save_pipeline_cache() {
        Err(VkError::PipelineCacheWrite { path, .. }) => {
            assert!(path.starts_with(&blocker), "{}", path.display())
        }
        other => panic!("{other:?}"),
    }
    run_kernel(&ctx, 3.0);
    drop(ctx); // Saving again fails, silently.
    assert_eq!(files(&dir), vec![blocker]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn off_writes_nothing() {
    let dir = temp_dir("off");
    let ctx = context_with(&ContextOptions {
        pipeline_cache: PipelineCacheMode::Off,
        ..options()
    });
    assert_eq!(*ctx.pipeline_cache(), PipelineCacheStatus::default());
    run_kernel(&ctx, 2.0);
    ctx.save_pipeline_cache().unwrap();
    drop(ctx);
    // Turned off after being opened on a directory, before any pipeline was made.
    let mut ctx = cached_in(&dir);
    ctx.set_pipeline_cache(&PipelineCacheMode::Off);
    assert_eq!(ctx.pipeline_cache().file, None);
    run_kernel(&ctx, 2.0);
    drop(ctx);
    assert!(!dir.exists());
}

#[test]
fn contexts_sharing_a_file_keep_each_others_pipelines() {
    let dir = temp_dir("merge");
    let a = cached_in(&dir);
    let b = cached_in(&dir);
    run_kernel(&a, 2.0);
    a.kernel("spin", &spin(), "main", 1, 0).unwrap();
    run_kernel(&b, 2.0);
    a.save_pipeline_cache().unwrap();
    let file = a.pipeline_cache().file.clone().unwrap();
    let after_a = std::fs::read(&file).unwrap().len();
    // `b` made only the axpb pipeline, but merges what `a` wrote (the spin pipeline too), so
    // the file does not shrink. (Lavapipe's cache data is only the 32-byte Vulkan header, so
    // there this checks only that the merge and the save succeed.)
    b.save_pipeline_cache().unwrap();
    let after_b = std::fs::read(&file).unwrap().len();
    assert!(after_b >= after_a, "{after_b} < {after_a}");
    let c = cached_in(&dir);
    assert_eq!(c.pipeline_cache().rejected, None);
    assert_eq!(c.pipeline_cache().loaded_bytes, after_b - 52);
    drop((a, b, c));
    std::fs::remove_dir_all(&dir).unwrap();
}
