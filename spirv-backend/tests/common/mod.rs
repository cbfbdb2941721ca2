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

/// A program with a primal, its `vjp` and a `scan`, for tests that call one entry many times.
pub const LOSS_SRC: &str = "
def loss [n] (xs: [n]f64) (w: f64) : f64 =
  f64.sum (map (\\x -> (x * w - 1.0) ** 2.0) xs)

entry main [n] (xs: [n]f64) (w: f64) : (f64, [n]f64, [n]f64) =
  let g = vjp (\\ys -> loss ys w) xs 1.0
  in (loss xs w, g, scan (+) 0.0 (map (* w) xs))
";

/// `n` pseudo-random f64s in [-0.5, 0.5) from `seed`.
pub fn f64s(n: usize, seed: u64) -> vkad_core::value::ArrayValue {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let data: Vec<f64> = (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    vkad_core::value::ArrayValue {
        shape: vec![n],
        data: vkad_core::value::Buffer::F64(data),
    }
}
