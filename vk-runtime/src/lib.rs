//! vkad's Vulkan compute runtime.
//!
//! This crate is the only place in vkad with `unsafe` code: it owns everything that talks to
//! Vulkan (through [`ash`], with the loader opened at run time, so a machine without
//! `libvulkan.so.1` still builds and runs the rest of vkad) and to device memory (through
//! [`gpu_allocator`]).
//!
//! # What it does
//! - [`list_devices`] enumerates the physical devices with what vkad cares about
//!   ([`DeviceInfo`]: type, API version, driver, subgroup size and operations, 8/16/64-bit
//!   arithmetic and storage, float atomics, limits, timestamp period).
//! - [`Context::new`] makes an instance (Vulkan 1.2 or newer), picks a device (discrete, then
//!   integrated, then anything, or the one [`ContextOptions::device`] names), creates one compute
//!   queue and enables every feature in [`DeviceInfo`] that the device has.
//! - [`Context::alloc`] gives device-local storage buffers; [`Context::upload`] and
//!   [`Context::download`] copy through host-visible staging buffers
//!   ([`Context::download_into`] into memory of the caller's). [`Context::alloc_init`] makes a
//!   buffer with its contents, written straight into its memory where that memory is
//!   host-visible and coherent (lavapipe, integrated GPUs). Where the device has
//!   `bufferDeviceAddress` (core in Vulkan 1.2, enabled by [`Context::new`]), every buffer also
//!   has a 64-bit [`Buffer::device_address`]: kernels can then reach any number of buffers of
//!   any size (up to `maxMemoryAllocationSize`) through `PhysicalStorageBuffer64` pointers
//!   instead of descriptor bindings, which are limited to `maxStorageBufferRange` bytes and
//!   `maxPerStageDescriptorStorageBuffers` bindings.
//! - [`Context::kernel`] turns a SPIR-V compute module into a pipeline (one descriptor set of N
//!   storage buffers plus a push-constant block), cached by module, entry point and layout. The
//!   module's `SignedZeroInfNanPreserve` execution modes (float controls) for widths the device
//!   does not support ([`DeviceInfo::signed_zero_inf_nan_preserve`]) are dropped first.
//! - Pipelines are made through a `VkPipelineCache` kept on disk between processes
//!   ([`ContextOptions::pipeline_cache`], [`PipelineCacheMode`]): by default in
//!   `$XDG_CACHE_HOME/vkad/pipelines` (else `$HOME/.cache/vkad/pipelines`), one file per
//!   vendor, device, driver version and `pipelineCacheUUID`; `VKAD_PIPELINE_CACHE=0` turns it
//!   off and `VKAD_PIPELINE_CACHE=DIR` moves it. The file is read when the context is made
//!   (checked before the driver sees it: a corrupt, truncated or foreign file is ignored, see
//!   [`Context::pipeline_cache`]) and replaced atomically when the context is dropped or
//!   [`Context::save_pipeline_cache`] is called. Drivers that keep compiled pipelines in the
//!   cache (GPU drivers do; Mesa 22.3's lavapipe keeps only the header) then skip compiling
//!   them in a later process.
//! - [`Context::run`] records a list of [`Dispatch`]es into one command buffer with a
//!   compute-to-compute memory barrier between consecutive dispatches and a timestamp before and
//!   after each, submits it, waits on a fence with a timeout and returns one [`KernelTiming`] per
//!   dispatch (device time in nanoseconds: ticks masked to `timestampValidBits`, multiplied by
//!   `timestampPeriod`). [`Context::run_with`] records [`Command`]s (dispatches, and copies and
//!   fills as transfer commands) with small writes before them and a read after them, and times
//!   them as its [`Timing`] says: not at all, one timestamp pair for the submission, or a pair
//!   per command (timestamps are not free: on lavapipe each costs about 25 µs).
//! - Submissions are cheap to make: a context keeps the objects a submission uses and reuses
//!   them for the next one once its fence has signalled — one command buffer (its pool reset
//!   and the buffer re-recorded), one fence (reset), one descriptor pool (reset with
//!   `vkResetDescriptorPool`, replaced by a larger one when a run needs more sets), one
//!   timestamp query pool (grown to the most queries a run has needed) and one host-visible
//!   staging buffer each way (grown to the next power of two; those over 4 MiB are dropped after
//!   the transfer that needed them). [`Context::object_counts`] says how many of each a context
//!   has made, and how many submissions; `cargo run --release -p vkad-vk --example
//!   submission_cost` times the host cost of small submissions.
//!
//! # Error model
//! Nothing here panics or hangs on a bad module, a missing driver or a failing device: every
//! operation returns [`Result`] with a [`VkError`].
//! - No loader, no device, or a device older than Vulkan 1.2: [`VkError::NoDevice`] /
//!   [`VkError::Unsupported`], with a hint on what to install (or to use `-b interp`).
//! - `VK_ERROR_OUT_OF_DEVICE_MEMORY` / `VK_ERROR_OUT_OF_HOST_MEMORY` and allocations larger than
//!   the device allows: [`VkError::OutOfMemory`]. `VK_ERROR_DEVICE_LOST`: [`VkError::DeviceLost`]
//!   (and every later call on the context returns it too).
//! - A submission that does not finish within the timeout (60 s by default,
//!   [`Context::set_timeout`] or `VKAD_TIMEOUT_S`): [`VkError::Timeout`]. The resources of that
//!   submission are then leaked on purpose (destroying them while the device may still use them
//!   would be undefined behaviour), and dropping the context does not destroy the device.
//! - With validation on ([`ContextOptions::validation`] or `VKAD_VALIDATION=1`) the Khronos
//!   validation layer (with synchronization validation when available) reports through a
//!   debug-utils messenger; warnings and errors are collected and returned as
//!   [`VkError::Validation`] by the next [`Context::kernel`], [`Context::run`] or
//!   [`Context::download`].
//! - Modules are checked with `spirv-val --target-env vulkan1.2` ([`validate_spirv`]) before they
//!   reach the driver, by default in debug builds (`VKAD_VALIDATE_SPIRV=0|1` overrides,
//!   [`Context::set_validate_spirv`] too). A module without the SPIR-V magic number or without a
//!   `GLCompute` entry point of the requested name is rejected even when that check is off.
//! - The pipeline cache never fails a run: a file that cannot be read or is not this device's
//!   is ignored (and replaced at the next save), a failure to write it when the context is
//!   dropped is ignored, and only an explicit [`Context::save_pipeline_cache`] reports one, as
//!   [`VkError::PipelineCacheWrite`].
//!
//! # Embedding
//! [`Context::from_raw`] builds a context on an application's own instance, device and queue.
//! vkad then creates only its allocator, command pool and pipelines (and a pipeline cache, which
//! is off unless [`Context::set_pipeline_cache`] asks for one), and destroys only those; the
//! application keeps ownership of the rest and must not use the queue concurrently with vkad.
//! Since vkad cannot know which features the application enabled, [`Context::info`] reports what
//! the physical device supports; use [`Context::restrict_info`] to clear what was not enabled.
//!
//! # Threads
//! [`Context`] is `Send + Sync`. Submissions are serialised by an internal lock; buffers and
//! kernels keep the device alive (they hold a reference to it) and may outlive the context.

mod context;
mod device;
mod pipeline_cache;
mod spirv;

pub use context::{
    Buffer, Command, Context, CopyRegion, Dispatch, FillRegion, Kernel, KernelTiming, ObjectCounts,
    Ran, TimelinePoint, Timing, MAX_INLINE_WRITE,
};
pub use device::{list_devices, ContextOptions, DeviceInfo};
pub use pipeline_cache::{CacheRejection, PipelineCacheMode, PipelineCacheStatus, MAX_FILE_BYTES};
pub use spirv::validate_spirv;

/// Re-exported so that embedding applications use the same `ash` version as vkad.
pub use ash;

/// Everything that can go wrong; never a panic or a hang.
#[derive(Debug, thiserror::Error)]
pub enum VkError {
    /// No Vulkan loader or no device. The message says how to install one
    /// (`apt install mesa-vulkan-drivers libvulkan1`) or to use `-b interp`.
    #[error("no Vulkan device: {0}")]
    NoDevice(String),
    /// The device (or the host, for host allocations) ran out of memory, or an allocation was
    /// larger than the device allows.
    #[error("device out of memory: {0}")]
    OutOfMemory(String),
    /// `VK_ERROR_DEVICE_LOST`: the context is unusable from then on.
    #[error("device lost")]
    DeviceLost,
    /// A feature the program needs that the device lacks (e.g. "float64").
    #[error("not supported by device {device}: {feature}")]
    Unsupported {
        /// The device's name.
        device: String,
        /// What is missing.
        feature: String,
    },
    /// The fence did not signal within the timeout (a hung kernel).
    #[error("timeout waiting for the device after {0} s")]
    Timeout(u64),
    /// Any other Vulkan error, a bad argument, or an invalid SPIR-V module.
    #[error("Vulkan error: {0}")]
    Vk(String),
    /// Messages from the Khronos validation layer (when enabled), collected per submission.
    #[error("validation: {0}")]
    Validation(String),
    /// Writing the persistent pipeline cache file failed (only [`Context::save_pipeline_cache`]
    /// returns it: a failed save when a context is dropped is ignored, since the cache is an
    /// optimisation).
    #[error("cannot write the pipeline cache {}: {source}", path.display())]
    PipelineCacheWrite {
        /// The cache file.
        path: std::path::PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
}

/// The result of every fallible operation in this crate.
pub type Result<T> = std::result::Result<T, VkError>;

/// What to tell a user who has no Vulkan driver.
pub(crate) const INSTALL_HINT: &str = "install a Vulkan driver and loader (on Debian/Ubuntu: \
`apt install mesa-vulkan-drivers libvulkan1`), or run on the interpreter with `-b interp`";

/// Maps a Vulkan result code to a [`VkError`]: memory exhaustion, device loss and missing
/// drivers get their own variants, everything else is [`VkError::Vk`] naming the call.
pub(crate) fn vk_error(what: &str, r: ash::vk::Result) -> VkError {
    use ash::vk::Result as R;
    match r {
        R::ERROR_OUT_OF_DEVICE_MEMORY
        | R::ERROR_OUT_OF_HOST_MEMORY
        | R::ERROR_OUT_OF_POOL_MEMORY
        | R::ERROR_TOO_MANY_OBJECTS => VkError::OutOfMemory(format!("{what}: {r}")),
        R::ERROR_DEVICE_LOST => VkError::DeviceLost,
        R::ERROR_INCOMPATIBLE_DRIVER | R::ERROR_INITIALIZATION_FAILED => {
            VkError::NoDevice(format!("{what}: {r}; {INSTALL_HINT}"))
        }
        _ => VkError::Vk(format!("{what}: {r}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk;

    #[test]
    fn result_codes_map_to_variants() {
        assert!(matches!(
            vk_error("x", vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
            VkError::OutOfMemory(_)
        ));
        assert!(matches!(
            vk_error("x", vk::Result::ERROR_OUT_OF_HOST_MEMORY),
            VkError::OutOfMemory(_)
        ));
        assert!(matches!(
            vk_error("x", vk::Result::ERROR_DEVICE_LOST),
            VkError::DeviceLost
        ));
        match vk_error("vkCreateInstance", vk::Result::ERROR_INCOMPATIBLE_DRIVER) {
            VkError::NoDevice(m) => assert!(m.contains("mesa-vulkan-drivers"), "{m}"),
            e => panic!("{e:?}"),
        }
        match vk_error("vkFoo", vk::Result::ERROR_FEATURE_NOT_PRESENT) {
            VkError::Vk(m) => assert!(m.starts_with("vkFoo"), "{m}"),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn context_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Context>();
        check::<Buffer>();
        check::<Kernel>();
    }
}
