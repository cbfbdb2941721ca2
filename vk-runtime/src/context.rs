//! The device context: memory, pipelines, submission and timing.

use crate::device::{
    create_instance, entry_c_string, env_flag, load_entry, probe, probe_all, select, usable,
    Features, InstanceParts, Messages, Probe,
};
use crate::pipeline_cache::{self, CacheId, CacheRejection, PipelineCacheStatus};
use crate::spirv::{check_module, fit_float_controls, validate_spirv, FloatControl};
use crate::{vk_error, DeviceInfo, PipelineCacheMode, Result, VkError};
use ash::vk;
use gpu_allocator::vulkan::{
    Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc,
};
use gpu_allocator::{AllocationError, MemoryLocation};
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// The default time to wait for a submission before giving up.
const DEFAULT_TIMEOUT_S: u64 = 60;
/// Uploads and downloads go through staging buffers of at most this many bytes at a time.
const STAGING_CHUNK: u64 = 64 << 20;
/// Staging buffers up to this size are kept for later transfers; larger ones (made for a large
/// transfer, whose copy then costs far more than making the buffer) are dropped after it.
const STAGING_KEEP: u64 = 4 << 20;
/// The smallest staging buffer made.
const STAGING_MIN: u64 = 4096;
/// The smallest descriptor pool made: sets, storage-buffer descriptors.
const DESCRIPTOR_ROOM_MIN: (u32, u32) = (64, 256);
/// The smallest timestamp query pool made.
const QUERIES_MIN: u32 = 64;

/// The largest write [`Context::run_with`] records inline (`vkCmdUpdateBuffer`'s limit).
pub const MAX_INLINE_WRITE: u64 = 65536;

/// The Vulkan objects every buffer, kernel and context of one device share. Dropped last (all
/// of them hold an `Arc`), so the device outlives everything made from it.
struct Shared {
    /// Keeps the loader library open.
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    /// Whether vkad created (and so destroys) the instance and device.
    owned: bool,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Dropped by hand, before the device is destroyed.
    allocator: ManuallyDrop<Mutex<Allocator>>,
    /// Validation messages; the debug messenger holds a pointer to this box's contents.
    messages: Box<Messages>,
    /// `VK_ERROR_DEVICE_LOST` was seen: every later operation fails with DeviceLost.
    lost: AtomicBool,
    /// A submission timed out and may still be executing: nothing it might use is destroyed.
    hung: AtomicBool,
}

impl Shared {
    fn lock_allocator(&self) -> MutexGuard<'_, Allocator> {
        // A panic while the lock was held cannot leave the allocator half-updated in a way
        // that matters more than losing the context, so poisoning is ignored.
        self.allocator.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Maps a Vulkan error, remembering device loss.
    fn err(&self, what: &str, r: vk::Result) -> VkError {
        let e = vk_error(what, r);
        if matches!(e, VkError::DeviceLost) {
            self.lost.store(true, Ordering::SeqCst);
        }
        e
    }

    /// Whether objects may be destroyed (no timed-out submission may still use them).
    fn may_destroy(&self) -> bool {
        !self.hung.load(Ordering::SeqCst)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if !self.may_destroy() {
            // A submission may still be running: destroying its memory or device would be
            // undefined behaviour, so everything is leaked instead.
            return;
        }
        // SAFETY: every Buffer, Kernel and Context holds an Arc<Shared>, so none is left; the
        // allocator is dropped exactly once, here, before the device it allocates from.
        unsafe { ManuallyDrop::drop(&mut self.allocator) };
        if !self.owned {
            return;
        }
        // SAFETY: vkad created the device, messenger and instance; nothing made from them is
        // alive any more (see above) and no submission is pending (fences were waited on, or
        // `hung` is set). The messenger's user data (`messages`) is dropped after this.
        unsafe {
            self.device.destroy_device(None);
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
        // Messages from the teardown itself (leaked objects, say) have no later call to be
        // returned from: report them on stderr rather than lose them.
        let left = self
            .messages
            .get_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        for m in left {
            eprintln!("vkad: Vulkan validation at teardown: {m}");
        }
    }
}

/// Why `Shared` is Send + Sync: the ash dispatch tables and handles are plain data; the queue
/// is only used with `Context::exec` locked; the allocator and messages are behind mutexes.
fn _assert_shared_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<Shared>();
}

/// A device-local storage buffer; freed on drop unless borrowed ([`Buffer::from_raw`]).
pub struct Buffer {
    shared: Arc<Shared>,
    buffer: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
    /// Made by [`Buffer::from_raw`]: the application owns (and destroys) the `vk::Buffer`.
    borrowed: bool,
    /// The buffer's device address (0: none, see [`Buffer::device_address`]).
    address: u64,
}

impl Buffer {
    /// The buffer's size in bytes (the requested size rounded up to a multiple of 4).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The Vulkan handle, for an embedding application that uses the buffer in its own
    /// commands. It stays valid while this `Buffer` is alive.
    pub fn raw(&self) -> vk::Buffer {
        self.buffer
    }

    /// Whether this buffer wraps an application's buffer ([`Buffer::from_raw`]).
    pub fn is_borrowed(&self) -> bool {
        self.borrowed
    }

    /// The buffer's device address, for kernels that reach it through a
    /// `PhysicalStorageBuffer64` pointer instead of a descriptor binding. `Some` for buffers of
    /// [`Context::alloc`] on a context with [`Context::buffer_device_address`]; `None` otherwise
    /// (and for [`Buffer::from_raw`] buffers, whose usage flags vkad does not know).
    pub fn device_address(&self) -> Option<u64> {
        (self.address != 0).then_some(self.address)
    }

    /// Embedding: wraps a buffer that the application created on `ctx`'s device, so that vkad
    /// can read and write it (as a kernel binding, and with [`Context::upload`] /
    /// [`Context::download`]). Dropping the result does not destroy the buffer or free its memory.
    ///
    /// # Safety
    /// `buffer` must have been created on the device `ctx` was built on (see
    /// [`Context::from_raw`]) with usage `STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST`, be bound
    /// to memory, be at least `size` bytes long, and outlive the returned `Buffer` and every
    /// submission that uses it. The application must not access it while a call on `ctx` that
    /// uses it is in progress.
    pub unsafe fn from_raw(ctx: &Context, buffer: vk::Buffer, size: u64) -> Buffer {
        Buffer {
            shared: ctx.shared.clone(),
            buffer,
            allocation: None,
            size,
            borrowed: true,
            address: 0,
        }
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer").field("size", &self.size).finish()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.borrowed || !self.shared.may_destroy() {
            return;
        }
        // SAFETY: the buffer was made on this device and no submission using it is pending
        // (every submission is waited for, or `hung` is set and we returned above).
        unsafe { self.shared.device.destroy_buffer(self.buffer, None) };
        if let Some(a) = self.allocation.take() {
            // Freeing can only fail for an allocation of another allocator, which this is not.
            let _ = self.shared.lock_allocator().free(a);
        }
    }
}

/// A compute pipeline with its layouts.
struct Pipeline {
    shared: Arc<Shared>,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    bindings: u32,
    push_bytes: u32,
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        if !self.shared.may_destroy() {
            return;
        }
        // SAFETY: made on this device; the last Kernel referring to it is gone and no
        // submission using it is pending.
        unsafe {
            let d = &self.shared.device;
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// A compute kernel ready to dispatch; cloning is cheap (the pipeline is shared).
#[derive(Clone)]
pub struct Kernel {
    pipe: Arc<Pipeline>,
    name: Arc<str>,
}

impl Kernel {
    /// The name given to [`Context::kernel`] (used in timings).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The number of storage buffers the kernel takes (set 0, bindings 0..n).
    pub fn bindings(&self) -> u32 {
        self.pipe.bindings
    }
    /// The size of the kernel's push-constant block in bytes.
    pub fn push_bytes(&self) -> u32 {
        self.pipe.push_bytes
    }
    /// Whether two kernels share one pipeline (the cache returned the same one).
    pub fn same_pipeline(&self, other: &Kernel) -> bool {
        Arc::ptr_eq(&self.pipe, &other.pipe)
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("bindings", &self.pipe.bindings)
            .field("push_bytes", &self.pipe.push_bytes)
            .finish()
    }
}

/// One kernel launch: `buffers[i]` is bound at set 0, binding i; `push` is the push-constant
/// block (exactly the kernel's `push_bytes`); `groups` is the workgroup count.
#[derive(Clone)]
pub struct Dispatch<'a> {
    /// The kernel to run.
    pub kernel: &'a Kernel,
    /// One buffer per binding.
    pub buffers: Vec<&'a Buffer>,
    /// The push-constant bytes.
    pub push: Vec<u8>,
    /// Workgroups in x, y, z.
    pub groups: [u32; 3],
}

/// `size` bytes of `src` from byte `src_offset` written to `dst` from byte `dst_offset`
/// (`vkCmdCopyBuffer`). The two ranges must not overlap when `src` and `dst` are one buffer.
#[derive(Clone)]
pub struct CopyRegion<'a> {
    pub src: &'a Buffer,
    pub src_offset: u64,
    pub dst: &'a Buffer,
    pub dst_offset: u64,
    pub size: u64,
}

/// `size` bytes of `dst` from byte `offset` set to the 4-byte word `word` repeated
/// (`vkCmdFillBuffer`): `offset` and `size` are multiples of 4.
#[derive(Clone)]
pub struct FillRegion<'a> {
    pub dst: &'a Buffer,
    pub offset: u64,
    pub size: u64,
    pub word: u32,
}

/// What a submission ([`Context::run_with`]) times on the device with timestamp queries.
///
/// Timestamps are not free: on lavapipe (Mesa 22.3) each costs about 25 µs of wall time, so
/// that timing every command of a run of small kernels costs as much as the kernels (8 tiny
/// dispatches: 0.85 ms with a pair each, 0.47 ms without; 8 copies of 1 KiB: 0.57 ms against
/// 0.03 ms; `examples/submission_cost`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// No timestamps: [`Ran::timings`] is empty and [`Ran::device_ns`] 0.
    #[default]
    Off,
    /// One timestamp before the first command and one after the last: [`Ran::device_ns`].
    Submission,
    /// A pair around every command: [`Ran::timings`] has one per command.
    Commands,
}

/// What [`Context::run_with`] returns.
#[derive(Clone, Debug, Default)]
pub struct Ran {
    /// One per command, in order, with [`Timing::Commands`]; empty otherwise.
    pub timings: Vec<KernelTiming>,
    /// Device time from the start of the first command to the end of the last, in ns (0 with
    /// [`Timing::Off`] or where the queue has no timestamps).
    pub device_ns: u64,
    /// The bytes read back (empty without a read).
    pub read: Vec<u8>,
}

/// One command of a submission ([`Context::run_with`]). Each runs after the one before it has
/// finished with memory (a barrier separates consecutive commands), and is timed on its own
/// with [`Timing::Commands`].
///
/// A contiguous copy or a fill is a transfer command rather than a kernel: a driver runs it
/// without a dispatch (lavapipe as a `memcpy`/`memset` on its queue thread, in a few µs,
/// where its smallest dispatch takes about 50 µs; a GPU on its copy path).
#[derive(Clone)]
pub enum Command<'a> {
    Dispatch(Dispatch<'a>),
    Copy(CopyRegion<'a>),
    Fill(FillRegion<'a>),
}

impl Command<'_> {
    /// The pipeline stage the command runs in.
    fn stage(&self) -> vk::PipelineStageFlags {
        match self {
            Command::Dispatch(_) => vk::PipelineStageFlags::COMPUTE_SHADER,
            Command::Copy(_) | Command::Fill(_) => vk::PipelineStageFlags::TRANSFER,
        }
    }

    /// The memory accesses the command makes.
    fn access(&self) -> vk::AccessFlags {
        match self {
            Command::Dispatch(_) => vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
            Command::Copy(_) => vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE,
            Command::Fill(_) => vk::AccessFlags::TRANSFER_WRITE,
        }
    }

    /// The command's name in timings.
    fn name(&self) -> &str {
        match self {
            Command::Dispatch(x) => &x.kernel.name,
            Command::Copy(_) => "copy",
            Command::Fill(_) => "fill",
        }
    }
}

/// The device time one command (a dispatch, a copy or a fill) took: timestamps (in ns of the
/// device's clock) written before and after it (both are 0 when the queue has no
/// timestamps), and what it did.
#[derive(Clone, Debug)]
pub struct KernelTiming {
    /// The kernel's name.
    pub name: String,
    /// Device time before the dispatch, in nanoseconds.
    pub start_ns: u64,
    /// Device time after the dispatch, in nanoseconds (>= `start_ns`).
    pub end_ns: u64,
    /// Workgroups dispatched (x, y, z); all 0 for a transfer command (a copy or a fill).
    pub groups: [u32; 3],
    /// Bytes bound: the sum of the sizes of the distinct buffers bound to the dispatch. An
    /// upper bound on the memory the kernel can touch (a kernel that reads a slice of a
    /// buffer is charged the whole buffer), not a measurement. For a copy, the bytes read and
    /// written; for a fill, the bytes written.
    pub bytes: u64,
    /// Which [`Context::run`] call of this context made the dispatch (from 0, one per call
    /// that submits work; all dispatches of one call share it).
    pub submission: u64,
}

/// The pipeline cache key: the module itself (hashed by the map), entry point and layout.
#[derive(Clone, PartialEq, Eq, Hash)]
struct KernelKey {
    spirv: Vec<u32>,
    entry: String,
    bindings: u32,
    push_bytes: u32,
}

/// The objects a submission uses, kept by the context and reused by the next submission once
/// the fence has signalled: made on first use, grown when a submission needs more room, and
/// destroyed with the context (or once a timed-out submission that still holds them has
/// finished, see `Exec::pending`).
#[derive(Default)]
struct Objects {
    /// Re-recorded by every submission (its pool is reset first).
    cmd: vk::CommandBuffer,
    /// Reset before every submission.
    fence: vk::Fence,
    /// Reset (`vkResetDescriptorPool`) before every run; replaced by a larger one when a run
    /// needs more sets or descriptors than `descriptor_room`.
    descriptor_pool: vk::DescriptorPool,
    /// The sets and storage-buffer descriptors `descriptor_pool` has room for.
    descriptor_room: (u32, u32),
    /// Reset in the command buffer before its timestamps are written; replaced by a larger one
    /// when a run needs more than `queries`.
    query_pool: vk::QueryPool,
    /// The queries `query_pool` has.
    queries: u32,
    /// Host-visible staging buffers of uploads (`CpuToGpu`) and of read-backs (`GpuToCpu`),
    /// grown to the next power of two when too small (up to [`STAGING_CHUNK`]); one larger
    /// than [`STAGING_KEEP`] is dropped at the end of the call that needed it.
    upload: Option<Buffer>,
    readback: Option<Buffer>,
}

/// How many of each object that submissions use a context has made, and how many submissions
/// it has made ([`Context::object_counts`]). The objects are reused, so after the first few
/// submissions the counts of objects stop growing; they grow again only when a submission
/// needs a larger descriptor pool, query pool or staging buffer (or after a timeout, whose
/// objects stay with the submission that timed out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectCounts {
    /// Command buffers allocated.
    pub command_buffers: u64,
    /// Fences created.
    pub fences: u64,
    /// Descriptor pools created.
    pub descriptor_pools: u64,
    /// Timestamp query pools created.
    pub query_pools: u64,
    /// Host-visible staging buffers created (uploads, downloads and read-backs).
    pub staging_buffers: u64,
    /// Queue submissions: one per [`Context::run_with`] with dispatches and one per staging
    /// chunk of an upload or download.
    pub submissions: u64,
}

/// Submission state; its lock also serialises every use of the queue.
struct Exec {
    pool: vk::CommandPool,
    /// The objects of the next submission; not in use by the device (every submission that
    /// used them has finished, or they moved to `pending`).
    objects: Objects,
    /// The objects of submissions that timed out, kept until their fence signals.
    pending: Vec<Objects>,
    counts: ObjectCounts,
    /// Application semaphore values the next submission waits for
    /// ([`Context::wait_before_next_submission`]).
    waits: Vec<TimelinePoint>,
}

/// A value of a timeline semaphore (`VK_SEMAPHORE_TYPE_TIMELINE`, core in Vulkan 1.2): what an
/// application and vkad wait for and signal to order their work on a shared queue without
/// waiting for the device on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelinePoint {
    /// The application's semaphore, made on the context's device with type
    /// `VK_SEMAPHORE_TYPE_TIMELINE`.
    pub semaphore: vk::Semaphore,
    /// The counter value waited for or signalled.
    pub value: u64,
}

/// Which staging buffer of [`Objects`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Staging {
    /// Host to device (`upload`).
    Upload,
    /// Device to host (`download` and the read-back of `run_with`).
    Readback,
}

/// The persistent pipeline cache of a context (see `pipeline_cache.rs`).
struct DiskCache {
    /// Given to every `vkCreateComputePipelines`; null when the cache is off.
    handle: vk::PipelineCache,
    status: PipelineCacheStatus,
    /// What the file holds as far as this context knows (what it loaded or last wrote), and
    /// whether the cache may hold more than that. Locked after `Context::kernels`, which also serialises the uses of `handle` that must
    /// be externally synchronised (merging into it, destroying it).
    state: Mutex<DiskState>,
}

struct DiskState {
    /// Length and FNV-1a checksum of the Vulkan data in the file (`None`: unknown, e.g. no
    /// file or a rejected one).
    on_disk: Option<(usize, u64)>,
    /// Pipelines were made through the cache, or the file must be replaced, since the last
    /// load or save.
    dirty: bool,
}

impl DiskCache {
    fn off() -> DiskCache {
        DiskCache {
            handle: vk::PipelineCache::null(),
            status: PipelineCacheStatus::default(),
            state: Mutex::new(DiskState {
                on_disk: None,
                dirty: false,
            }),
        }
    }
}

/// A Vulkan device ready to run kernels. `Send + Sync`.
pub struct Context {
    shared: Arc<Shared>,
    info: DeviceInfo,
    exec: Mutex<Exec>,
    /// The pipelines made so far, by module, entry point and layout (not held while one is
    /// made, so that several threads can make pipelines at once).
    kernels: Mutex<HashMap<KernelKey, Arc<Pipeline>>>,
    /// Read-locked while a pipeline is made through `pcache.handle`, write-locked while the
    /// cache is merged into (which must be externally synchronised with every other use).
    pcache_use: RwLock<()>,
    /// What names this device and driver's pipeline cache file.
    cache_id: CacheId,
    pcache: DiskCache,
    validate_spirv: AtomicBool,
    timeout_s: AtomicU64,
    timestamp_bits: u32,
    max_push_constants: u32,
    max_storage_buffers: u32,
    /// `bufferDeviceAddress` is enabled: buffers from [`Context::alloc`] have addresses.
    addresses: bool,
    /// [`Context::run`] calls that submitted work so far ([`KernelTiming::submission`]).
    submissions: AtomicU64,
    /// This context's number among the contexts of the process ([`Context::id`]).
    id: u64,
}

/// The contexts made so far in this process (numbers them).
static CONTEXTS: AtomicU64 = AtomicU64::new(0);

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("info", &self.info).finish()
    }
}

/// The device features to enable, as create-info structs (no pointers yet).
fn feature_structs(
    f: &Features,
) -> (
    vk::PhysicalDeviceFeatures,
    vk::PhysicalDeviceVulkan11Features<'static>,
    vk::PhysicalDeviceVulkan12Features<'static>,
    vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT<'static>,
) {
    let f10 = vk::PhysicalDeviceFeatures::default()
        .shader_int64(f.int64)
        .shader_float64(f.float64)
        .shader_int16(f.int16);
    let f11 = vk::PhysicalDeviceVulkan11Features::default()
        .storage_buffer16_bit_access(f.storage16)
        .uniform_and_storage_buffer16_bit_access(f.uniform_storage16)
        .storage_push_constant16(f.push_constant16);
    let f12 = vk::PhysicalDeviceVulkan12Features::default()
        .shader_float16(f.float16)
        .shader_int8(f.int8)
        .storage_buffer8_bit_access(f.storage8)
        .uniform_and_storage_buffer8_bit_access(f.uniform_storage8)
        .storage_push_constant8(f.push_constant8)
        .shader_buffer_int64_atomics(f.buffer_int64_atomics)
        .shader_shared_int64_atomics(f.shared_int64_atomics)
        .vulkan_memory_model(f.memory_model)
        .vulkan_memory_model_device_scope(f.memory_model && f.memory_model_device_scope)
        .buffer_device_address(f.buffer_device_address)
        .timeline_semaphore(f.timeline_semaphore)
        .shader_subgroup_extended_types(f.subgroup_extended_types);
    let fa = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
        .shader_buffer_float32_atomics(f.buffer_f32_atomics)
        .shader_buffer_float32_atomic_add(f.buffer_f32_atomic_add)
        .shader_buffer_float64_atomics(f.buffer_f64_atomics)
        .shader_buffer_float64_atomic_add(f.buffer_f64_atomic_add)
        .shader_shared_float32_atomics(f.shared_f32_atomics)
        .shader_shared_float32_atomic_add(f.shared_f32_atomic_add)
        .shader_shared_float64_atomics(f.shared_f64_atomics)
        .shader_shared_float64_atomic_add(f.shared_f64_atomic_add);
    (f10, f11, f12, fa)
}

/// Creates the logical device with one compute queue and every feature vkad uses that the
/// device has.
fn create_device(instance: &ash::Instance, p: &Probe, family: u32) -> Result<ash::Device> {
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(family)
        .queue_priorities(&priorities)];
    let mut exts = Vec::new();
    if p.features.atomic_float_ext {
        exts.push(ash::ext::shader_atomic_float::NAME.as_ptr());
    }
    if p.features.portability_subset_ext {
        exts.push(ash::khr::portability_subset::NAME.as_ptr());
    }
    let (f10, mut f11, mut f12, mut fa) = feature_structs(&p.features);
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .features(f10)
        .push_next(&mut f11)
        .push_next(&mut f12);
    if p.features.atomic_float_ext {
        f2 = f2.push_next(&mut fa);
    }
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&exts)
        .push_next(&mut f2);
    // SAFETY: `p.physical` belongs to `instance`; the features enabled are exactly those the
    // device reported, the extension structs are chained only with their extension enabled,
    // `enabled_features` is left null since PhysicalDeviceFeatures2 is chained, and every
    // pointer in `info` is alive for the call.
    unsafe { instance.create_device(p.physical, &info, None) }
        .map_err(|e| vk_error("vkCreateDevice", e))
}

impl Context {
    /// Opens the device the options pick (see [`ContextOptions`](crate::ContextOptions)).
    pub fn new(opts: &crate::ContextOptions) -> Result<Context> {
        let validation = opts.validation || env_flag("VKAD_VALIDATION") == Some(true);
        let entry = load_entry()?;
        let messages: Box<Messages> = Box::new(Mutex::new(Vec::new()));
        let parts = create_instance(&entry, validation.then_some(&*messages))?;
        let destroy_instance = |parts: &InstanceParts| {
            // SAFETY: called only on failure, when nothing made from the instance is left.
            unsafe {
                if let Some((loader, m)) = &parts.debug {
                    loader.destroy_debug_utils_messenger(*m, None);
                }
                parts.instance.destroy_instance(None);
            }
        };
        let chosen = probe_all(&parts.instance).and_then(|ps| select(ps, opts.device));
        let (p, family) = match chosen {
            Ok(x) => x,
            Err(e) => {
                destroy_instance(&parts);
                return Err(e);
            }
        };
        let device = match create_device(&parts.instance, &p, family) {
            Ok(d) => d,
            Err(e) => {
                destroy_instance(&parts);
                return Err(e);
            }
        };
        // SAFETY: the device was created with one queue in `family`.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let InstanceParts { instance, debug } = parts;
        let mut ctx = Self::build(
            entry, instance, p, device, queue, family, true, debug, messages,
        )?;
        ctx.set_pipeline_cache(&opts.pipeline_cache);
        Ok(ctx)
    }

    /// Embedding: build on a host application's own instance/device/queue (the app keeps
    /// ownership; dropping the Context destroys only what vkad created). The persistent
    /// pipeline cache is off: [`Context::set_pipeline_cache`] turns it on.
    ///
    /// # Safety
    /// `instance` must have been created for Vulkan 1.2 or newer from `entry`; `physical` must
    /// belong to it; `device` must have been created from `physical` with a queue family
    /// `queue_family` of which `queue` is a queue supporting compute. All of them must outlive
    /// the Context and every Buffer and Kernel made from it, and the application must not use
    /// `queue` while a call on the Context is in progress. [`Context::info`] reports what the
    /// physical device supports; clear (with [`Context::restrict_info`]) what the application
    /// did not enable, or kernels may use features that are off.
    pub unsafe fn from_raw(
        entry: ash::Entry,
        instance: ash::Instance,
        physical: vk::PhysicalDevice,
        device: ash::Device,
        queue: vk::Queue,
        queue_family: u32,
    ) -> Result<Context> {
        // The instance's API version is not known here: 1.2 is what the caller promises.
        let p = probe(&instance, vk::API_VERSION_1_2, physical, 0);
        if let Err(feature) = usable(&p) {
            return Err(VkError::Unsupported {
                device: p.info.name,
                feature,
            });
        }
        let mut p = p;
        // SAFETY: `physical` belongs to `instance` (caller's promise).
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let Some(fam) = families.get(queue_family as usize) else {
            return Err(VkError::Vk(format!(
                "queue family {queue_family} does not exist"
            )));
        };
        if !fam.queue_flags.contains(vk::QueueFlags::COMPUTE) {
            return Err(VkError::Vk(format!(
                "queue family {queue_family} does not support compute"
            )));
        }
        p.timestamp_bits = fam.timestamp_valid_bits;
        // The application's device may not have `bufferDeviceAddress` enabled, and its buffers
        // lack the usage flag: vkad binds buffers with descriptors on such a context.
        p.info.buffer_device_address = false;
        p.info.timestamp_bits = fam.timestamp_valid_bits;
        // SAFETY: all PhysicalDevice handles enumerated from `instance`; index for DeviceInfo.
        if let Ok(all) = unsafe { instance.enumerate_physical_devices() } {
            p.info.index = all.iter().position(|&x| x == physical).unwrap_or(0);
        }
        let messages = Box::new(Mutex::new(Vec::new()));
        Self::build(
            entry,
            instance,
            p,
            device,
            queue,
            queue_family,
            false,
            None,
            messages,
        )
    }

    /// The common tail of `new` and `from_raw`: allocator, command pool, the Context. On
    /// failure destroys the device, messenger and instance when vkad owns them.
    #[allow(clippy::too_many_arguments)] // one private constructor for two public ones
    fn build(
        entry: ash::Entry,
        instance: ash::Instance,
        p: Probe,
        device: ash::Device,
        queue: vk::Queue,
        family: u32,
        owned: bool,
        debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
        messages: Box<Messages>,
    ) -> Result<Context> {
        // `Context::new` enabled the feature when present; `from_raw` cleared it in `p.info`.
        let addresses = p.info.buffer_device_address;
        let fail = |e: VkError| {
            if owned {
                // SAFETY: nothing else was made on the device; the instance outlives it.
                unsafe {
                    device.destroy_device(None);
                    if let Some((loader, m)) = &debug {
                        loader.destroy_debug_utils_messenger(*m, None);
                    }
                    instance.destroy_instance(None);
                }
            }
            Err(e)
        };
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.clone(),
            device: device.clone(),
            physical_device: p.physical,
            debug_settings: Default::default(),
            buffer_device_address: addresses,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => return fail(alloc_error(e)),
        };
        // Not TRANSIENT: its one command buffer is reset and re-recorded by every submission.
        let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        // SAFETY: a valid device and create info.
        let pool = match unsafe { device.create_command_pool(&pool_info, None) } {
            Ok(pool) => pool,
            Err(e) => {
                drop(allocator);
                return fail(vk_error("vkCreateCommandPool", e));
            }
        };
        // SAFETY: `p.physical` belongs to `instance` (enumerated from it, or the caller's
        // promise in `from_raw`).
        let props = unsafe { instance.get_physical_device_properties(p.physical) };
        let cache_id = CacheId {
            vendor_id: props.vendor_id,
            device_id: props.device_id,
            driver_version: props.driver_version,
            uuid: props.pipeline_cache_uuid,
        };
        let validate = env_flag("VKAD_VALIDATE_SPIRV").unwrap_or(cfg!(debug_assertions));
        let timeout = std::env::var("VKAD_TIMEOUT_S")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .filter(|&s| s > 0)
            .unwrap_or(DEFAULT_TIMEOUT_S);
        let shared = Arc::new(Shared {
            _entry: entry,
            instance,
            device,
            queue,
            owned,
            debug,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            messages,
            lost: AtomicBool::new(false),
            hung: AtomicBool::new(false),
        });
        Ok(Context {
            shared,
            info: p.info,
            exec: Mutex::new(Exec {
                pool,
                objects: Objects::default(),
                pending: Vec::new(),
                counts: ObjectCounts::default(),
                waits: Vec::new(),
            }),
            kernels: Mutex::new(HashMap::new()),
            pcache_use: RwLock::new(()),
            cache_id,
            pcache: DiskCache::off(),
            validate_spirv: AtomicBool::new(validate),
            timeout_s: AtomicU64::new(timeout),
            timestamp_bits: p.timestamp_bits,
            max_push_constants: p.max_push_constants.min(128),
            max_storage_buffers: p.max_storage_buffers,
            addresses,
            submissions: AtomicU64::new(0),
            id: CONTEXTS.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The device this context runs on.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Whether `bufferDeviceAddress` is enabled, so that every buffer of [`Context::alloc`] has
    /// a [`Buffer::device_address`] (true on [`Context::new`] contexts of devices that have
    /// the feature; false on [`Context::from_raw`] ones).
    pub fn buffer_device_address(&self) -> bool {
        self.addresses
    }

    /// Narrows [`Context::info`], e.g. after [`Context::from_raw`] to clear features the
    /// application did not enable.
    pub fn restrict_info(&mut self, f: impl FnOnce(&mut DeviceInfo)) {
        f(&mut self.info)
    }

    /// Whether modules are checked with spirv-val before pipeline creation (default: true in
    /// debug builds and tests, VKAD_VALIDATE_SPIRV=0 turns it off).
    pub fn set_validate_spirv(&self, on: bool) {
        self.validate_spirv.store(on, Ordering::Relaxed);
    }

    /// How long to wait for a submission before returning [`VkError::Timeout`] (default 60 s,
    /// or `VKAD_TIMEOUT_S`). At least one second.
    pub fn set_timeout(&self, seconds: u64) {
        self.timeout_s.store(seconds.max(1), Ordering::Relaxed);
    }

    /// Takes the validation messages collected so far (empty without validation).
    pub fn take_validation_messages(&self) -> Vec<String> {
        let mut m = self
            .shared
            .messages
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *m)
    }

    /// A number that tells this context apart from every other context of the process (what
    /// was made for one context, such as a compiled program's kernels, is not for another).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether the device has timeline semaphores enabled (`timelineSemaphore`), which
    /// [`Context::wait_before_next_submission`] and [`Context::signal`] need.
    pub fn timeline_semaphores(&self) -> bool {
        self.info.timeline_semaphore
    }

    fn check_timeline(&self) -> Result<()> {
        if self.info.timeline_semaphore {
            Ok(())
        } else {
            Err(VkError::Unsupported {
                device: self.info.name.clone(),
                feature: "timelineSemaphore (to wait on or signal an application's timeline \
                          semaphores)"
                    .into(),
            })
        }
    }

    /// Makes the next submission of this context (its next kernel run, upload or download, or
    /// [`Context::signal`]) wait on the device until `point.semaphore` reaches `point.value`:
    /// work the application submitted to the same queue that signals it runs first, without a
    /// host wait. Several calls before one submission wait for all their points.
    ///
    /// # Safety
    /// `point.semaphore` must be a timeline semaphore made on this context's device that stays
    /// alive until that submission has completed, and something must signal `point.value`
    /// (vkad waits for its submissions on the host, with the context's timeout).
    pub unsafe fn wait_before_next_submission(&self, point: TimelinePoint) -> Result<()> {
        self.check_timeline()?;
        let mut exec = self.lock_exec()?;
        exec.waits.push(point);
        Ok(())
    }

    /// Submits, without waiting for it, a batch with no commands that signals each timeline
    /// point of `points` (to its value) and `fence`, after everything this context submitted
    /// before (a semaphore or fence signal covers all earlier submissions to the queue). It
    /// also waits for the points of [`Context::wait_before_next_submission`] not yet waited
    /// for. Does nothing when there is nothing to signal or wait for.
    ///
    /// # Safety
    /// Every semaphore of `points` must be a timeline semaphore of this context's device whose
    /// value is below the point's (and below every value signalled later), and `fence` an
    /// unsignalled fence of this device; both must stay alive until the batch has completed.
    pub unsafe fn signal(&self, points: &[TimelinePoint], fence: Option<vk::Fence>) -> Result<()> {
        if !points.is_empty() {
            self.check_timeline()?;
        }
        let mut exec = self.lock_exec()?;
        if points.is_empty() && fence.is_none() && exec.waits.is_empty() {
            return Ok(());
        }
        let waits = WaitInfo::new(std::mem::take(&mut exec.waits));
        let signals: Vec<vk::Semaphore> = points.iter().map(|p| p.semaphore).collect();
        let values: Vec<u64> = points.iter().map(|p| p.value).collect();
        let mut timeline = waits.timeline().signal_semaphore_values(&values);
        let mut submit = vk::SubmitInfo::default().signal_semaphores(&signals);
        if !waits.semaphores.is_empty() {
            submit = submit
                .wait_semaphores(&waits.semaphores)
                .wait_dst_stage_mask(&waits.stages);
        }
        if !waits.semaphores.is_empty() || !signals.is_empty() {
            submit = submit.push_next(&mut timeline);
        }
        let d = &self.shared.device;
        // SAFETY: the queue is used only with `exec` locked (held here); the batch has no
        // command buffers; the semaphores and fence are the application's, valid as this
        // function's contract requires, with one timeline value per wait and per signal.
        unsafe { d.queue_submit(self.shared.queue, &[submit], fence.unwrap_or_default()) }
            .map_err(|e| self.shared.err("vkQueueSubmit", e))?;
        exec.counts.submissions += 1;
        drop(exec);
        self.check_messages()
    }

    /// Whether a submission that timed out may still be running (the context then refuses new
    /// work with [`VkError::Timeout`] until it finishes; a caller that wants to go on makes a
    /// new context) or the device was lost.
    pub fn is_stuck(&self) -> bool {
        self.shared.hung.load(Ordering::SeqCst) || self.shared.lost.load(Ordering::SeqCst)
    }

    /// Bytes in live allocations (buffers) on the device, for reports.
    pub fn allocated_bytes(&self) -> u64 {
        self.shared
            .lock_allocator()
            .generate_report()
            .total_allocated_bytes
    }

    /// Turns the persistent pipeline cache on, off, or to another directory (see
    /// [`PipelineCacheMode`]; `UserDir` reads `VKAD_PIPELINE_CACHE`) for the pipelines made
    /// from now on. The current cache, if any, is saved first (a failure to write it is
    /// ignored, as when the context is dropped). [`Context::new`] calls this with
    /// [`ContextOptions::pipeline_cache`](crate::ContextOptions::pipeline_cache);
    /// [`Context::from_raw`] contexts start with the cache off.
    ///
    /// A missing, unreadable, corrupt, truncated or foreign file is not an error: the cache
    /// starts empty, [`Context::pipeline_cache`] says why, and the file is replaced at the next
    /// save.
    pub fn set_pipeline_cache(&mut self, mode: &PipelineCacheMode) {
        self.close_pipeline_cache();
        self.pcache = self.open_pipeline_cache(mode);
    }

    /// What the persistent pipeline cache did when it was opened: its file (`None`: off), the
    /// bytes loaded from it, and why an existing file was ignored.
    pub fn pipeline_cache(&self) -> &PipelineCacheStatus {
        &self.pcache.status
    }

    /// Writes the pipeline cache to its file now (it is also written when the context is
    /// dropped). Does nothing when the cache is off or no pipeline was made since the last
    /// save. What another process wrote to the file meanwhile is merged in first, so that
    /// processes that made different pipelines keep each other's. The file is replaced
    /// atomically (a temporary file in the same directory, renamed).
    ///
    /// A failure to write is [`VkError::PipelineCacheWrite`]; the context is still usable.
    pub fn save_pipeline_cache(&self) -> Result<()> {
        self.check_alive()?;
        // Merging into the cache (which must be externally synchronised) waits for the
        // pipelines being made, and new ones wait for it.
        let _only = self.pcache_use.write().unwrap_or_else(|p| p.into_inner());
        self.save_locked()
    }

    /// Makes a pipeline cache with `data` as its initial contents (empty: an empty cache).
    fn create_pipeline_cache(&self, data: &[u8]) -> Result<vk::PipelineCache> {
        let info = vk::PipelineCacheCreateInfo::default().initial_data(data);
        // SAFETY: a valid device and create info; `data` is empty or a blob whose
        // VkPipelineCacheHeaderVersionOne was checked to name this device
        // (`pipeline_cache::decode`); the driver checks the rest and starts empty when it
        // does not recognise the data.
        unsafe { self.shared.device.create_pipeline_cache(&info, None) }
            .map_err(|e| self.shared.err("vkCreatePipelineCache", e))
    }

    /// Opens the cache `mode` names: reads its file and makes the Vulkan pipeline cache.
    fn open_pipeline_cache(&self, mode: &PipelineCacheMode) -> DiskCache {
        let Some(dir) = pipeline_cache::dir_from_env(mode) else {
            return DiskCache::off();
        };
        let path = dir.join(self.cache_id.file_name());
        let (data, mut rejected) = match pipeline_cache::load(&self.cache_id, &path) {
            Ok(Some(d)) => (d, None),
            Ok(None) => (Vec::new(), None),
            Err(r) => (Vec::new(), Some(r)),
        };
        let mut loaded = data.len();
        let handle = match self.create_pipeline_cache(&data) {
            Ok(h) => h,
            Err(_) if !data.is_empty() => {
                rejected = Some(CacheRejection::Driver);
                loaded = 0;
                match self.create_pipeline_cache(&[]) {
                    Ok(h) => h,
                    Err(_) => return DiskCache::off(),
                }
            }
            Err(_) => return DiskCache::off(),
        };
        let on_disk = (loaded > 0).then(|| (data.len(), pipeline_cache::fnv1a64(&data)));
        DiskCache {
            handle,
            status: PipelineCacheStatus {
                file: Some(path),
                loaded_bytes: loaded,
                rejected,
            },
            state: Mutex::new(DiskState {
                on_disk,
                // A rejected file is replaced even when no pipeline is made.
                dirty: rejected.is_some(),
            }),
        }
    }

    /// [`Context::save_pipeline_cache`]; the caller holds `pcache_use` for writing (or
    /// `&mut self`).
    fn save_locked(&self) -> Result<()> {
        let handle = self.pcache.handle;
        let Some(path) = &self.pcache.status.file else {
            return Ok(());
        };
        if handle == vk::PipelineCache::null() {
            return Ok(());
        }
        let mut st = self.pcache.state.lock().unwrap_or_else(|p| p.into_inner());
        if !st.dirty {
            return Ok(());
        }
        let d = &self.shared.device;
        let theirs = pipeline_cache::load(&self.cache_id, path).ok().flatten();
        let disk = theirs
            .as_ref()
            .map(|t| (t.len(), pipeline_cache::fnv1a64(t)));
        if let Some(t) = theirs.as_ref().filter(|_| disk != st.on_disk) {
            // Another process wrote the file since this context read or wrote it.
            if let Ok(src) = self.create_pipeline_cache(t) {
                // SAFETY: both caches belong to this device and differ; the caller holds
                // `pcache_use` for writing (or `&mut self`), so no other thread uses `handle`
                // meanwhile. A failed merge leaves `handle` as it was: then this context's
                // pipelines replace the file's.
                unsafe {
                    let _ = d.merge_pipeline_caches(handle, &[src]);
                    d.destroy_pipeline_cache(src, None);
                }
            }
        }
        // SAFETY: `handle` is this device's pipeline cache, alive until `close_pipeline_cache`.
        let data = unsafe { d.get_pipeline_cache_data(handle) }
            .map_err(|e| self.shared.err("vkGetPipelineCacheData", e))?;
        let sig = (data.len(), pipeline_cache::fnv1a64(&data));
        if disk != Some(sig) {
            pipeline_cache::write_atomic(path, &pipeline_cache::encode(&self.cache_id, &data))
                .map_err(|source| VkError::PipelineCacheWrite {
                    path: path.clone(),
                    source,
                })?;
        }
        st.on_disk = Some(sig);
        st.dirty = false;
        Ok(())
    }

    /// Saves the cache (errors ignored: it is an optimisation) and destroys it.
    fn close_pipeline_cache(&mut self) {
        let handle = self.pcache.handle;
        if handle == vk::PipelineCache::null() {
            return;
        }
        if !self.shared.lost.load(Ordering::SeqCst) {
            let _ = self.save_locked();
        }
        // SAFETY: made on this device by `open_pipeline_cache`; `&mut self`, so no pipeline is
        // being made with it, and pipelines made with it do not need it any more. No
        // submission uses a pipeline cache, so a timed-out one does not prevent this.
        unsafe { self.shared.device.destroy_pipeline_cache(handle, None) };
        self.pcache = DiskCache::off();
    }

    fn check_messages(&self) -> Result<()> {
        let m = self.take_validation_messages();
        if m.is_empty() {
            Ok(())
        } else {
            Err(VkError::Validation(m.join("\n")))
        }
    }

    fn check_alive(&self) -> Result<()> {
        if self.shared.lost.load(Ordering::SeqCst) {
            Err(VkError::DeviceLost)
        } else {
            Ok(())
        }
    }

    fn lock_exec(&self) -> Result<MutexGuard<'_, Exec>> {
        self.check_alive()?;
        let mut exec = self.exec.lock().unwrap_or_else(|p| p.into_inner());
        self.reap(&mut exec);
        if !exec.pending.is_empty() {
            return Err(VkError::Timeout(self.timeout_s.load(Ordering::Relaxed)));
        }
        Ok(exec)
    }

    /// Frees the objects of timed-out submissions that have finished since.
    fn reap(&self, exec: &mut Exec) {
        let d = &self.shared.device;
        let pending = std::mem::take(&mut exec.pending);
        for o in pending {
            // SAFETY: the fence belongs to this device.
            match unsafe { d.get_fence_status(o.fence) } {
                Ok(true) => self.destroy(exec.pool, o),
                Ok(false) => exec.pending.push(o),
                Err(e) => {
                    let _ = self.shared.err("vkGetFenceStatus", e);
                    exec.pending.push(o);
                }
            }
        }
        if exec.pending.is_empty() {
            self.shared.hung.store(false, Ordering::SeqCst);
        }
    }

    /// Destroys objects that no submission uses any more.
    fn destroy(&self, pool: vk::CommandPool, o: Objects) {
        let d = &self.shared.device;
        // SAFETY: all made on this device, the command buffer from `pool`; every submission
        // that used them has finished (its fence signalled, or it was never submitted, or the
        // device was lost and executes nothing any more).
        unsafe {
            if o.cmd != vk::CommandBuffer::null() {
                d.free_command_buffers(pool, &[o.cmd]);
            }
            if o.fence != vk::Fence::null() {
                d.destroy_fence(o.fence, None);
            }
            if o.descriptor_pool != vk::DescriptorPool::null() {
                d.destroy_descriptor_pool(o.descriptor_pool, None);
            }
            if o.query_pool != vk::QueryPool::null() {
                d.destroy_query_pool(o.query_pool, None);
            }
        }
        drop(o.upload);
        drop(o.readback);
    }

    /// Readies `exec.objects`' command buffer (allocated, or its pool reset) and fence (created,
    /// or reset) for a submission.
    fn ready_cmd(&self, exec: &mut Exec) -> Result<()> {
        let d = &self.shared.device;
        let o = &mut exec.objects;
        if o.cmd == vk::CommandBuffer::null() {
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(exec.pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            // SAFETY: the pool belongs to this device and is used only with `exec` locked.
            o.cmd = match unsafe { d.allocate_command_buffers(&alloc) } {
                Ok(cmds) if !cmds.is_empty() => cmds[0],
                Ok(_) => {
                    return Err(VkError::Vk(
                        "vkAllocateCommandBuffers returned nothing".into(),
                    ))
                }
                Err(e) => return Err(self.shared.err("vkAllocateCommandBuffers", e)),
            };
            exec.counts.command_buffers += 1;
        } else {
            // SAFETY: the pool belongs to this device and is used only with `exec` locked; none
            // of its command buffers is pending: `lock_exec` refuses work while a timed-out
            // submission is (`exec.pending` is empty), and every other submission was waited
            // for. The reset keeps the pool's memory for the re-recording.
            unsafe { d.reset_command_pool(exec.pool, vk::CommandPoolResetFlags::empty()) }
                .map_err(|e| self.shared.err("vkResetCommandPool", e))?;
        }
        if o.fence == vk::Fence::null() {
            // SAFETY: a valid device and create info.
            o.fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
                .map_err(|e| self.shared.err("vkCreateFence", e))?;
            exec.counts.fences += 1;
        } else {
            // SAFETY: the fence belongs to this device and no queue operation that signals it
            // is pending (the submission that used it last was waited for, or not submitted).
            unsafe { d.reset_fences(&[o.fence]) }
                .map_err(|e| self.shared.err("vkResetFences", e))?;
        }
        Ok(())
    }

    /// Records `exec.objects`' command buffer with `record`, submits it with the fence and
    /// waits. On a timeout (or another failure of the wait, device loss aside) the objects
    /// stay with the submission in `exec.pending` and `exec.objects` starts over empty; after
    /// device loss they are destroyed.
    fn submit(
        &self,
        exec: &mut Exec,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> Result<()> {
        if !exec.pending.is_empty() {
            // `lock_exec` refused this already; the command pool may not be reset now.
            return Err(VkError::Timeout(self.timeout_s.load(Ordering::Relaxed)));
        }
        self.ready_cmd(exec)?;
        let d = &self.shared.device;
        let (cmd, fence) = (exec.objects.cmd, exec.objects.fence);
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: a command buffer in the initial state (just allocated, or its pool reset);
        // `record` only records commands on objects of this device.
        unsafe { d.begin_command_buffer(cmd, &begin) }
            .map_err(|e| self.shared.err("vkBeginCommandBuffer", e))?;
        record(d, cmd);
        // SAFETY: as above.
        unsafe { d.end_command_buffer(cmd) }
            .map_err(|e| self.shared.err("vkEndCommandBuffer", e))?;
        let cmds = [cmd];
        let waits = WaitInfo::new(std::mem::take(&mut exec.waits));
        let mut timeline = waits.timeline();
        let mut submit = vk::SubmitInfo::default().command_buffers(&cmds);
        if !waits.semaphores.is_empty() {
            submit = submit
                .wait_semaphores(&waits.semaphores)
                .wait_dst_stage_mask(&waits.stages)
                .push_next(&mut timeline);
        }
        // SAFETY: the queue is used only with `exec` locked (the caller holds it); the command
        // buffer is recorded, the fence unsignalled, and the resources the commands use are
        // alive until the fence signals. The wait semaphores are timeline semaphores of this
        // device that the application keeps alive (`wait_before_next_submission`'s contract),
        // and `timeline` gives one value per wait semaphore.
        unsafe { d.queue_submit(self.shared.queue, &[submit], fence) }
            .map_err(|e| self.shared.err("vkQueueSubmit", e))?;
        exec.counts.submissions += 1;
        let secs = self.timeout_s.load(Ordering::Relaxed);
        let ns = secs.saturating_mul(1_000_000_000);
        // SAFETY: the fence belongs to this device.
        match unsafe { d.wait_for_fences(&[fence], true, ns) } {
            Ok(()) => Ok(()),
            Err(vk::Result::TIMEOUT) => {
                self.shared.hung.store(true, Ordering::SeqCst);
                exec.pending.push(std::mem::take(&mut exec.objects));
                Err(VkError::Timeout(secs))
            }
            Err(e) => {
                let err = self.shared.err("vkWaitForFences", e);
                let o = std::mem::take(&mut exec.objects);
                if matches!(err, VkError::DeviceLost) {
                    // After device loss, objects may be destroyed (the device does not
                    // execute anything any more).
                    self.destroy(exec.pool, o);
                } else {
                    self.shared.hung.store(true, Ordering::SeqCst);
                    exec.pending.push(o);
                }
                Err(err)
            }
        }
    }

    /// The staging buffer `which` of `exec.objects`, made or grown to hold `bytes` (at most
    /// [`STAGING_CHUNK`]). The buffer it replaces is not in use: the submissions that used it
    /// have finished.
    fn staging(&self, exec: &mut Exec, which: Staging, bytes: u64) -> Result<vk::Buffer> {
        let slot = match which {
            Staging::Upload => &mut exec.objects.upload,
            Staging::Readback => &mut exec.objects.readback,
        };
        if let Some(b) = slot.as_ref().filter(|b| b.size >= bytes) {
            return Ok(b.buffer);
        }
        let size = bytes
            .checked_next_power_of_two()
            .unwrap_or(bytes)
            .clamp(STAGING_MIN, STAGING_CHUNK.max(bytes));
        *slot = None;
        let b = match which {
            Staging::Upload => self.make_buffer(
                size,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
                "vkad upload",
            )?,
            Staging::Readback => self.make_buffer(
                size,
                vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
                "vkad read-back",
            )?,
        };
        exec.counts.staging_buffers += 1;
        let handle = b.buffer;
        *slot = Some(b);
        Ok(handle)
    }

    /// Drops staging buffers larger than [`STAGING_KEEP`] (see [`Objects::upload`]).
    fn trim_staging(exec: &mut Exec) {
        let o = &mut exec.objects;
        for slot in [&mut o.upload, &mut o.readback] {
            if slot.as_ref().is_some_and(|b| b.size > STAGING_KEEP) {
                *slot = None;
            }
        }
    }

    /// How many command buffers, fences, descriptor pools, query pools and staging buffers this
    /// context has made for its submissions, and how many submissions it has made: the objects
    /// are reused, so their counts stay small however many submissions there are.
    pub fn object_counts(&self) -> ObjectCounts {
        self.exec.lock().unwrap_or_else(|p| p.into_inner()).counts
    }

    /// Makes a buffer with memory from `location`.
    fn make_buffer(
        &self,
        bytes: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
        name: &str,
    ) -> Result<Buffer> {
        let size = bytes.max(4).div_ceil(4).saturating_mul(4);
        if size > self.info.max_allocation {
            return Err(VkError::OutOfMemory(format!(
                "a buffer of {bytes} bytes is larger than the device allows ({} bytes)",
                self.info.max_allocation
            )));
        }
        let d = &self.shared.device;
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: a valid device and create info (size is non-zero and within the limits).
        let buffer = unsafe { d.create_buffer(&info, None) }
            .map_err(|e| self.shared.err("vkCreateBuffer", e))?;
        // SAFETY: the buffer was just made on this device.
        let requirements = unsafe { d.get_buffer_memory_requirements(buffer) };
        let allocation = self
            .shared
            .lock_allocator()
            .allocate(&AllocationCreateDesc {
                name,
                requirements,
                location,
                linear: true,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unused, just made.
                unsafe { d.destroy_buffer(buffer, None) };
                return Err(alloc_error(e));
            }
        };
        // SAFETY: the allocation satisfies `requirements` and is not bound to anything else;
        // `memory()` is the allocation's own block.
        if let Err(e) =
            unsafe { d.bind_buffer_memory(buffer, allocation.memory(), allocation.offset()) }
        {
            // SAFETY: unused, just made.
            unsafe { d.destroy_buffer(buffer, None) };
            let _ = self.shared.lock_allocator().free(allocation);
            return Err(self.shared.err("vkBindBufferMemory", e));
        }
        let address = if usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS) {
            let info = vk::BufferDeviceAddressInfo::default().buffer(buffer);
            // SAFETY: the buffer was made with SHADER_DEVICE_ADDRESS usage (only requested
            // when `bufferDeviceAddress` is enabled) and is bound to memory allocated with the
            // DEVICE_ADDRESS flag (the allocator was made with `buffer_device_address`).
            unsafe { d.get_buffer_device_address(&info) }
        } else {
            0
        };
        Ok(Buffer {
            shared: self.shared.clone(),
            buffer,
            allocation: Some(allocation),
            size,
            borrowed: false,
            address,
        })
    }

    /// A device-local storage buffer of `bytes` (>= 4; rounded up). Zero-initialised is NOT promised.
    /// With [`Context::buffer_device_address`] the buffer also has a device address.
    pub fn alloc(&self, bytes: u64) -> Result<Buffer> {
        self.check_alive()?;
        let mut usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        if self.addresses {
            usage |= vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        }
        self.make_buffer(bytes, usage, MemoryLocation::GpuOnly, "vkad storage")
    }

    /// A new storage buffer of `bytes` bytes (as [`Context::alloc`]) whose first `data.len()`
    /// bytes are `data`; the rest is unspecified. Where the device memory the buffer got is
    /// host-visible and coherent (lavapipe's is, and so is an integrated GPU's), `data` is
    /// copied straight into it; otherwise it goes through the staging buffer as
    /// [`Context::upload`]. A large input then costs one copy on such devices instead of two
    /// (into staging, then the device's copy), and no staging memory.
    pub fn alloc_init(&self, bytes: u64, data: &[u8]) -> Result<Buffer> {
        let mut buf = self.alloc(bytes)?;
        Self::check_range(&buf, 0, data.len() as u64)?;
        if data.is_empty() {
            return Ok(buf);
        }
        let direct = buf
            .allocation
            .as_mut()
            .filter(|a| {
                a.memory_properties()
                    .contains(vk::MemoryPropertyFlags::HOST_COHERENT)
            })
            .and_then(|a| a.mapped_slice_mut());
        match direct {
            // The buffer is new, so no command can be using it. Host writes to coherent
            // memory are made visible to the device by the next queue submission.
            Some(mapped) => mapped[..data.len()].copy_from_slice(data),
            None => self.upload(&buf, 0, data)?,
        }
        Ok(buf)
    }

    fn check_own_buffer(&self, buf: &Buffer) -> Result<()> {
        if Arc::ptr_eq(&buf.shared, &self.shared) {
            Ok(())
        } else {
            Err(VkError::Vk("the buffer belongs to another context".into()))
        }
    }

    fn check_range(buf: &Buffer, offset: u64, len: u64) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= buf.size => Ok(()),
            _ => Err(VkError::Vk(format!(
                "range {offset}+{len} is outside the buffer of {} bytes",
                buf.size
            ))),
        }
    }

    /// Copies `data` into `buf` at byte `offset`, through a host-visible staging buffer (the
    /// context's, reused by later transfers).
    pub fn upload(&self, buf: &Buffer, offset: u64, data: &[u8]) -> Result<()> {
        self.check_own_buffer(buf)?;
        Self::check_range(buf, offset, data.len() as u64)?;
        let mut exec = self.lock_exec()?;
        let r = self.upload_locked(&mut exec, buf, offset, data);
        Self::trim_staging(&mut exec);
        r
    }

    /// [`Context::upload`] with `exec` locked and the arguments checked.
    fn upload_locked(&self, exec: &mut Exec, buf: &Buffer, offset: u64, data: &[u8]) -> Result<()> {
        for (i, chunk) in data.chunks(STAGING_CHUNK as usize).enumerate() {
            let at = offset + i as u64 * STAGING_CHUNK;
            let len = chunk.len() as u64;
            let src = self.staging(exec, Staging::Upload, len)?;
            let Some(mapped) = exec
                .objects
                .upload
                .as_mut()
                .and_then(|b| b.allocation.as_mut())
                .and_then(|a| a.mapped_slice_mut())
            else {
                return Err(VkError::Vk("staging memory is not host-visible".into()));
            };
            // The staging buffer is not in use: the submission that last read it has finished.
            mapped[..chunk.len()].copy_from_slice(chunk);
            let dst = buf.buffer;
            self.submit(exec, |d, cmd| {
                // SAFETY: recording into a command buffer in the recording state; both
                // buffers are alive until the fence signals (the staging buffer is the
                // context's, `buf` is borrowed for this call, which waits). The host write
                // above is made visible by the submission itself.
                unsafe {
                    // Earlier kernels and copies (other submissions) finish their accesses to
                    // `buf` before the copy writes it.
                    let barrier = vk::MemoryBarrier::default()
                        .src_access_mask(
                            vk::AccessFlags::SHADER_READ
                                | vk::AccessFlags::SHADER_WRITE
                                | vk::AccessFlags::TRANSFER_READ
                                | vk::AccessFlags::TRANSFER_WRITE,
                        )
                        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
                    d.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::DependencyFlags::empty(),
                        &[barrier],
                        &[],
                        &[],
                    );
                    let region = vk::BufferCopy::default()
                        .src_offset(0)
                        .dst_offset(at)
                        .size(len);
                    d.cmd_copy_buffer(cmd, src, dst, &[region]);
                }
            })?;
        }
        Ok(())
    }

    /// Reads `len` bytes of `buf` from byte `offset`, through a host-visible staging buffer
    /// (the context's, reused by later transfers). Returns [`VkError::Validation`] when
    /// validation messages were collected since the last check.
    pub fn download(&self, buf: &Buffer, offset: u64, len: u64) -> Result<Vec<u8>> {
        // A range outside the buffer is that error, not a failure to reserve `len` bytes.
        Self::check_range(buf, offset, len)?;
        let mut out = Vec::new();
        out.try_reserve_exact(len as usize).map_err(|_| {
            VkError::OutOfMemory(format!("cannot allocate {len} bytes on the host"))
        })?;
        self.download_with(buf, offset, len, &mut |chunk| out.extend_from_slice(chunk))?;
        Ok(out)
    }

    /// [`Context::download`] into `out` (its length is the number of bytes read): for a caller
    /// that reads into memory of its own, e.g. a typed array whose bytes are the device's.
    pub fn download_into(&self, buf: &Buffer, offset: u64, out: &mut [u8]) -> Result<()> {
        let mut at = 0;
        self.download_with(buf, offset, out.len() as u64, &mut |chunk| {
            out[at..at + chunk.len()].copy_from_slice(chunk);
            at += chunk.len();
        })
    }

    /// Reads `len` bytes of `buf` from byte `offset` and passes them to `sink` in order, in
    /// chunks of the staging buffer's size.
    fn download_with(
        &self,
        buf: &Buffer,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        self.check_own_buffer(buf)?;
        Self::check_range(buf, offset, len)?;
        let mut exec = self.lock_exec()?;
        let r = self.download_locked(&mut exec, buf, offset, len, sink);
        Self::trim_staging(&mut exec);
        drop(exec);
        r?;
        self.check_messages()
    }

    /// [`Context::download_with`] with `exec` locked and the arguments checked.
    fn download_locked(
        &self,
        exec: &mut Exec,
        buf: &Buffer,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(STAGING_CHUNK);
            let (src, dst) = (buf.buffer, self.staging(exec, Staging::Readback, n)?);
            let at = offset + done;
            self.submit(exec, |d, cmd| {
                // SAFETY: as in `upload`.
                unsafe {
                    let before = vk::MemoryBarrier::default()
                        .src_access_mask(
                            vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
                        )
                        .dst_access_mask(vk::AccessFlags::TRANSFER_READ);
                    d.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::DependencyFlags::empty(),
                        &[before],
                        &[],
                        &[],
                    );
                    let region = vk::BufferCopy::default()
                        .src_offset(at)
                        .dst_offset(0)
                        .size(n);
                    d.cmd_copy_buffer(cmd, src, dst, &[region]);
                    let after = vk::MemoryBarrier::default()
                        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                        .dst_access_mask(vk::AccessFlags::HOST_READ);
                    d.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::PipelineStageFlags::HOST,
                        vk::DependencyFlags::empty(),
                        &[after],
                        &[],
                        &[],
                    );
                }
            })?;
            let mapped = exec
                .objects
                .readback
                .as_ref()
                .and_then(|s| s.allocation.as_ref())
                .and_then(|a| a.mapped_slice());
            match mapped {
                Some(m) => sink(&m[..n as usize]),
                None => return Err(VkError::Vk("staging memory is not host-visible".into())),
            }
            done += n;
        }
        Ok(())
    }

    /// Makes (or returns the cached) compute pipeline. `bindings`: number of storage buffers at
    /// set 0, bindings 0..bindings. `push_bytes`: push-constant block size (multiple of 4, <= 128).
    /// The module is validated with spirv-val first when `validate` is on (see
    /// [`Context::set_validate_spirv`]). Validation-layer messages collected so far are returned
    /// as [`VkError::Validation`].
    pub fn kernel(
        &self,
        name: &str,
        spirv: &[u32],
        entry: &str,
        bindings: u32,
        push_bytes: u32,
    ) -> Result<Kernel> {
        self.check_alive()?;
        if push_bytes & 3 != 0 || push_bytes > self.max_push_constants {
            return Err(VkError::Vk(format!(
                "push-constant block of {push_bytes} bytes: must be a multiple of 4 and at most {}",
                self.max_push_constants
            )));
        }
        if bindings > self.max_storage_buffers {
            return Err(VkError::Unsupported {
                device: self.info.name.clone(),
                feature: format!(
                    "{bindings} storage buffers in one kernel (the limit is {})",
                    self.max_storage_buffers
                ),
            });
        }
        let key = KernelKey {
            spirv: spirv.to_vec(),
            entry: entry.to_string(),
            bindings,
            push_bytes,
        };
        if let Some(pipe) = self
            .kernels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(Kernel {
                pipe: pipe.clone(),
                name: name.into(),
            });
        }
        // The float controls this device does not support are dropped (the module's results
        // may then differ from IEEE on NaN, infinities, signed zeros and subnormals).
        let spirv = &*fit_float_controls(spirv, |control, width| {
            let by_width = match control {
                FloatControl::SignedZeroInfNanPreserve => self.info.signed_zero_inf_nan_preserve,
                FloatControl::DenormPreserve => self.info.denorm_preserve,
            };
            match width {
                16 => by_width[0],
                32 => by_width[1],
                64 => by_width[2],
                _ => false,
            }
        });
        check_module(spirv, entry)?;
        if self.validate_spirv.load(Ordering::Relaxed) {
            validate_spirv(spirv)?;
        }
        // Made without holding `kernels`: other threads make other pipelines meanwhile (two
        // threads making the same one both make it, and the first kept is used).
        let pipe = {
            let _cache_use = self.pcache_use.read().unwrap_or_else(|p| p.into_inner());
            Arc::new(self.make_pipeline(spirv, entry, bindings, push_bytes)?)
        };
        if self.pcache.handle != vk::PipelineCache::null() {
            self.pcache
                .state
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .dirty = true;
        }
        self.check_messages()?;
        let pipe = self
            .kernels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key)
            .or_insert(pipe)
            .clone();
        Ok(Kernel {
            pipe,
            name: name.into(),
        })
    }

    fn make_pipeline(
        &self,
        spirv: &[u32],
        entry: &str,
        bindings: u32,
        push_bytes: u32,
    ) -> Result<Pipeline> {
        let entry_c = entry_c_string(entry)?;
        let d = &self.shared.device;
        let err = |what, e| self.shared.err(what, e);
        let layout_bindings: Vec<_> = (0..bindings)
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings);
        // SAFETY: valid device and create info. Each object made below is destroyed on the
        // error paths that follow it, or owned by the returned Pipeline.
        let set_layout = unsafe { d.create_descriptor_set_layout(&set_info, None) }
            .map_err(|e| err("vkCreateDescriptorSetLayout", e))?;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(push_bytes)];
        let set_layouts = [set_layout];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if push_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: as above.
        let layout = match unsafe { d.create_pipeline_layout(&layout_info, None) } {
            Ok(l) => l,
            Err(e) => {
                // SAFETY: unused, just made.
                unsafe { d.destroy_descriptor_set_layout(set_layout, None) };
                return Err(err("vkCreatePipelineLayout", e));
            }
        };
        let cleanup = || {
            // SAFETY: unused, just made.
            unsafe {
                d.destroy_pipeline_layout(layout, None);
                d.destroy_descriptor_set_layout(set_layout, None);
            }
        };
        let module_info = vk::ShaderModuleCreateInfo::default().code(spirv);
        // SAFETY: `spirv` has passed `check_module` (header and instruction stream well
        // formed, the entry point exists) and, when enabled, spirv-val.
        let module = match unsafe { d.create_shader_module(&module_info, None) } {
            Ok(m) => m,
            Err(e) => {
                cleanup();
                return Err(err("vkCreateShaderModule", e));
            }
        };
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&entry_c);
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout);
        // SAFETY: the module, layout and entry name are alive for the call; the module is not
        // needed after pipeline creation. The pipeline cache is null or this device's, alive
        // until the context is dropped; the caller holds `pcache_use` for reading, so it is
        // not being merged into or destroyed meanwhile (creating pipelines, from several
        // threads at once too, needs no external synchronisation of the cache).
        let created = unsafe {
            let r = d.create_compute_pipelines(self.pcache.handle, &[info], None);
            d.destroy_shader_module(module, None);
            r
        };
        match created {
            Ok(p) if !p.is_empty() => Ok(Pipeline {
                shared: self.shared.clone(),
                pipeline: p[0],
                layout,
                set_layout,
                bindings,
                push_bytes,
            }),
            Ok(_) => {
                cleanup();
                Err(VkError::Vk(
                    "vkCreateComputePipelines returned nothing".into(),
                ))
            }
            Err((pipelines, e)) => {
                for p in pipelines {
                    if p != vk::Pipeline::null() {
                        // SAFETY: unused, just made.
                        unsafe { d.destroy_pipeline(p, None) };
                    }
                }
                cleanup();
                Err(err("vkCreateComputePipelines", e))
            }
        }
    }

    /// The number of distinct pipelines in the cache.
    pub fn cached_kernels(&self) -> usize {
        self.kernels.lock().map_or(0, |c| c.len())
    }

    /// Checks that a command of a run can be recorded: its kernel and buffers are this
    /// device's, and its ranges lie in its buffers.
    fn check_command(&self, i: usize, command: &Command<'_>) -> Result<()> {
        let bad = |why: String| {
            Err(VkError::Vk(format!(
                "command {i} ({}): {why}",
                command.name()
            )))
        };
        match command {
            Command::Dispatch(x) => self.check_dispatch(i, x),
            Command::Copy(x) => {
                self.check_own_buffer(x.src)?;
                self.check_own_buffer(x.dst)?;
                Self::check_range(x.src, x.src_offset, x.size)?;
                Self::check_range(x.dst, x.dst_offset, x.size)?;
                if x.size == 0 {
                    return bad("a copy of 0 bytes".into());
                }
                let overlap =
                    x.src_offset < x.dst_offset + x.size && x.dst_offset < x.src_offset + x.size;
                if x.src.buffer == x.dst.buffer && overlap {
                    return bad(format!(
                        "the ranges {}+{} and {}+{} of one buffer overlap",
                        x.src_offset, x.size, x.dst_offset, x.size
                    ));
                }
                Ok(())
            }
            Command::Fill(x) => {
                self.check_own_buffer(x.dst)?;
                Self::check_range(x.dst, x.offset, x.size)?;
                if x.size == 0 || x.offset % 4 != 0 || x.size % 4 != 0 {
                    return bad(format!(
                        "a fill of {} bytes at {}: must be at least 4 bytes, 4-aligned",
                        x.size, x.offset
                    ));
                }
                Ok(())
            }
        }
    }

    fn check_dispatch(&self, i: usize, dispatch: &Dispatch<'_>) -> Result<()> {
        let k = dispatch.kernel;
        let bad = |why: String| Err(VkError::Vk(format!("dispatch {i} ({}): {why}", k.name)));
        if !Arc::ptr_eq(&k.pipe.shared, &self.shared) {
            return bad("the kernel belongs to another context".into());
        }
        if dispatch.buffers.len() != k.pipe.bindings as usize {
            return bad(format!(
                "{} buffers given, the kernel takes {}",
                dispatch.buffers.len(),
                k.pipe.bindings
            ));
        }
        if dispatch.push.len() != k.pipe.push_bytes as usize {
            return bad(format!(
                "{} push-constant bytes given, the kernel takes {}",
                dispatch.push.len(),
                k.pipe.push_bytes
            ));
        }
        for (axis, (&g, &max)) in dispatch
            .groups
            .iter()
            .zip(&self.info.max_workgroup_count)
            .enumerate()
        {
            if g > max {
                return Err(VkError::Unsupported {
                    device: self.info.name.clone(),
                    feature: format!("{g} workgroups in dimension {axis} (the limit is {max})"),
                });
            }
        }
        for b in &dispatch.buffers {
            if !Arc::ptr_eq(&b.shared, &self.shared) {
                return bad("a buffer belongs to another context".into());
            }
            if b.size > self.info.max_storage_buffer_range {
                return Err(VkError::Unsupported {
                    device: self.info.name.clone(),
                    feature: format!(
                        "binding a storage buffer of {} bytes (maxStorageBufferRange is {})",
                        b.size, self.info.max_storage_buffer_range
                    ),
                });
            }
        }
        Ok(())
    }

    /// Records the dispatches into one command buffer in order, with a compute→compute memory
    /// barrier between consecutive dispatches and a timestamp before/after each, submits, waits
    /// (fence with timeout), and returns one timing per dispatch. Validation-layer messages
    /// collected meanwhile are returned as [`VkError::Validation`].
    pub fn run(&self, dispatches: &[Dispatch<'_>]) -> Result<Vec<KernelTiming>> {
        let commands: Vec<Command<'_>> =
            dispatches.iter().cloned().map(Command::Dispatch).collect();
        self.run_with(&[], &commands, None, Timing::Commands)
            .map(|r| r.timings)
    }

    /// [`Context::run`] with transfer commands among the dispatches, small writes before them
    /// and a read after them, all in the same submission (one wait instead of three): each
    /// `(buffer, offset, bytes)` of `updates` is written with `vkCmdUpdateBuffer` (offset and
    /// length multiples of 4, at most [`MAX_INLINE_WRITE`] bytes each), and `read = (buffer,
    /// offset, len)` is copied back after the last command and returned with the device times
    /// that `timing` asks for.
    pub fn run_with(
        &self,
        updates: &[(&Buffer, u64, &[u8])],
        commands: &[Command<'_>],
        read: Option<(&Buffer, u64, u64)>,
        timing: Timing,
    ) -> Result<Ran> {
        self.check_alive()?;
        for (i, command) in commands.iter().enumerate() {
            self.check_command(i, command)?;
        }
        for (buf, offset, bytes) in updates {
            self.check_own_buffer(buf)?;
            Self::check_range(buf, *offset, bytes.len() as u64)?;
            if offset % 4 != 0
                || bytes.len() % 4 != 0
                || bytes.is_empty()
                || bytes.len() as u64 > MAX_INLINE_WRITE
            {
                return Err(VkError::Vk(format!(
                    "an inline write of {} bytes at {offset}: must be 4..={MAX_INLINE_WRITE} \
                     bytes, 4-aligned",
                    bytes.len()
                )));
            }
        }
        if let Some((buf, offset, len)) = read {
            self.check_own_buffer(buf)?;
            Self::check_range(buf, offset, len)?;
            if len > STAGING_CHUNK {
                return Err(VkError::Vk(format!(
                    "a read of {len} bytes after a run: at most {STAGING_CHUNK}"
                )));
            }
        }
        if commands.is_empty() {
            if updates.is_empty() && read.is_none() {
                self.check_messages()?;
                return Ok(Ran::default());
            }
            return Err(VkError::Vk(
                "writes or a read-back without a command: use upload/download".into(),
            ));
        }
        let total: u64 = commands
            .iter()
            .map(|x| match x {
                Command::Dispatch(x) => u64::from(x.kernel.pipe.bindings),
                Command::Copy(_) | Command::Fill(_) => 0,
            })
            .sum();
        match u32::try_from(commands.len()) {
            Ok(n) if n <= u32::MAX / 2 && total <= u64::from(u32::MAX) => {}
            _ => {
                return Err(VkError::Vk(format!(
                    "{} commands in one run: too many",
                    commands.len()
                )))
            }
        }
        let total = total as u32;
        let submission = self.submissions.fetch_add(1, Ordering::Relaxed);
        let mut exec = self.lock_exec()?;
        // A queue without timestamps records no queries: its timings are all 0.
        let queried = if self.timestamp_bits > 0 {
            timing
        } else {
            Timing::Off
        };
        let r = self.run_locked(&mut exec, updates, commands, read, total, queried);
        Self::trim_staging(&mut exec);
        drop(exec);
        let (mut ticks, read) = r?;
        if queried != timing {
            ticks = vec![0; 2 * commands.len()];
        }
        self.check_messages()?;
        let mask = if self.timestamp_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.timestamp_bits) - 1
        };
        let period = f64::from(self.info.timestamp_period_ns);
        let (timings, device_ns) = match timing {
            Timing::Off => (Vec::new(), 0),
            Timing::Submission => {
                let (start, end) = timing_ns(ticks[0], ticks[1], mask, period);
                (Vec::new(), end.saturating_sub(start))
            }
            Timing::Commands => {
                let t = timings(commands, &ticks, mask, period, submission);
                // (The first start to the last end, through a wrap of the counter.)
                let last = ticks.len().saturating_sub(1);
                let (start, end) = timing_ns(ticks[0], ticks[last], mask, period);
                (t, end.saturating_sub(start))
            }
        };
        Ok(Ran {
            timings,
            device_ns,
            read,
        })
    }

    /// [`Context::run_with`] with `exec` locked and the arguments checked (the commands'
    /// dispatches have `total` bindings): returns the raw timestamps and the bytes read back.
    fn run_locked(
        &self,
        exec: &mut Exec,
        updates: &[(&Buffer, u64, &[u8])],
        commands: &[Command<'_>],
        read: Option<(&Buffer, u64, u64)>,
        total: u32,
        timing: Timing,
    ) -> Result<(Vec<u64>, Vec<u8>)> {
        let d = &self.shared.device;
        // At most u32::MAX / 2 (checked by `run_with`).
        let n = commands.len() as u32;
        let read_len = read.map_or(0, |(_, _, len)| len);
        let staging = if read_len > 0 {
            Some(self.staging(exec, Staging::Readback, read_len)?)
        } else {
            None
        };
        let dispatches: Vec<&Dispatch<'_>> = commands
            .iter()
            .filter_map(|c| match c {
                Command::Dispatch(x) => Some(x),
                Command::Copy(_) | Command::Fill(_) => None,
            })
            .collect();
        let layouts: Vec<_> = dispatches
            .iter()
            .map(|x| x.kernel.pipe.set_layout)
            .collect();
        let sets = if layouts.is_empty() {
            Vec::new()
        } else {
            self.descriptor_sets(exec, &layouts, total)?
        };
        let buffer_infos: Vec<Vec<vk::DescriptorBufferInfo>> = dispatches
            .iter()
            .map(|x| {
                x.buffers
                    .iter()
                    .map(|b| {
                        vk::DescriptorBufferInfo::default()
                            .buffer(b.buffer)
                            .offset(0)
                            .range(vk::WHOLE_SIZE)
                    })
                    .collect()
            })
            .collect();
        let writes: Vec<_> = buffer_infos
            .iter()
            .zip(&sets)
            .filter(|(infos, _)| !infos.is_empty())
            .map(|(infos, &set)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(0)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(infos)
            })
            .collect();
        // SAFETY: the sets were just allocated and are not in use; every buffer is alive and
        // was checked to belong to this device and to fit maxStorageBufferRange.
        unsafe { d.update_descriptor_sets(&writes, &[]) };

        let queries = match timing {
            Timing::Off => 0,
            Timing::Submission => 2,
            Timing::Commands => 2 * n,
        };
        let timestamps = timing == Timing::Commands;
        let query_pool = if queries > 0 {
            self.query_pool(exec, queries)?
        } else {
            vk::QueryPool::null()
        };
        let any = vk::AccessFlags::SHADER_READ
            | vk::AccessFlags::SHADER_WRITE
            | vk::AccessFlags::TRANSFER_READ
            | vk::AccessFlags::TRANSFER_WRITE;
        let any_stage = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
        self.submit(exec, |d, cmd| {
            // SAFETY: recording into a command buffer in the recording state; every object
            // used (pipelines, layouts, sets, buffers, query pool) is alive until the fence
            // signals: the kernels and buffers are borrowed for this call, which waits, and the
            // sets, query pool and staging buffer are the context's. Every copy and fill range
            // was checked to lie in its buffer (and a copy's two ranges not to overlap).
            unsafe {
                if queries > 0 {
                    d.cmd_reset_query_pool(cmd, query_pool, 0, queries);
                }
                if !updates.is_empty() {
                    // Earlier kernels and copies finish with the buffers before they are
                    // written; the barrier below orders the writes before the commands.
                    let before = vk::MemoryBarrier::default()
                        .src_access_mask(any)
                        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
                    d.cmd_pipeline_barrier(
                        cmd,
                        any_stage,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::DependencyFlags::empty(),
                        &[before],
                        &[],
                        &[],
                    );
                    for (buf, offset, bytes) in updates {
                        d.cmd_update_buffer(cmd, buf.buffer, *offset, bytes);
                    }
                }
                // Uploads and earlier kernels (other submissions) before the first command.
                let first = vk::MemoryBarrier::default()
                    .src_access_mask(any)
                    .dst_access_mask(any);
                d.cmd_pipeline_barrier(
                    cmd,
                    any_stage,
                    any_stage,
                    vk::DependencyFlags::empty(),
                    &[first],
                    &[],
                    &[],
                );
                if let (Timing::Submission, Some(c)) = (timing, commands.first()) {
                    d.cmd_write_timestamp(cmd, c.stage(), query_pool, 0);
                }
                let mut sets = sets.iter();
                let mut prev: Option<&Command<'_>> = None;
                for (i, c) in commands.iter().enumerate() {
                    let i = i as u32;
                    if let Some(p) = prev {
                        let between = vk::MemoryBarrier::default()
                            .src_access_mask(p.access())
                            .dst_access_mask(c.access());
                        d.cmd_pipeline_barrier(
                            cmd,
                            p.stage(),
                            c.stage(),
                            vk::DependencyFlags::empty(),
                            &[between],
                            &[],
                            &[],
                        );
                    }
                    prev = Some(c);
                    if timestamps {
                        // Written once earlier commands (the previous one, behind the
                        // barrier) have finished their stage.
                        d.cmd_write_timestamp(cmd, c.stage(), query_pool, 2 * i);
                    }
                    match c {
                        Command::Dispatch(x) => {
                            let set = *sets.next().unwrap_or(&vk::DescriptorSet::null());
                            let p = &x.kernel.pipe;
                            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, p.pipeline);
                            d.cmd_bind_descriptor_sets(
                                cmd,
                                vk::PipelineBindPoint::COMPUTE,
                                p.layout,
                                0,
                                &[set],
                                &[],
                            );
                            if p.push_bytes > 0 {
                                d.cmd_push_constants(
                                    cmd,
                                    p.layout,
                                    vk::ShaderStageFlags::COMPUTE,
                                    0,
                                    &x.push,
                                );
                            }
                            d.cmd_dispatch(cmd, x.groups[0], x.groups[1], x.groups[2]);
                        }
                        Command::Copy(x) => {
                            let region = vk::BufferCopy::default()
                                .src_offset(x.src_offset)
                                .dst_offset(x.dst_offset)
                                .size(x.size);
                            d.cmd_copy_buffer(cmd, x.src.buffer, x.dst.buffer, &[region]);
                        }
                        Command::Fill(x) => {
                            d.cmd_fill_buffer(cmd, x.dst.buffer, x.offset, x.size, x.word);
                        }
                    }
                    if timestamps {
                        d.cmd_write_timestamp(
                            cmd,
                            vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                            query_pool,
                            2 * i + 1,
                        );
                    }
                }
                if timing == Timing::Submission {
                    d.cmd_write_timestamp(
                        cmd,
                        vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                        query_pool,
                        1,
                    );
                }
                // Make the results available to later copies (downloads).
                let last = vk::MemoryBarrier::default()
                    .src_access_mask(
                        vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
                    )
                    .dst_access_mask(vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::HOST_READ);
                d.cmd_pipeline_barrier(
                    cmd,
                    any_stage,
                    vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::HOST,
                    vk::DependencyFlags::empty(),
                    &[last],
                    &[],
                    &[],
                );
                if let (Some((buf, offset, len)), Some(dst)) = (read, staging) {
                    let region = vk::BufferCopy::default()
                        .src_offset(offset)
                        .dst_offset(0)
                        .size(len);
                    d.cmd_copy_buffer(cmd, buf.buffer, dst, &[region]);
                    let after = vk::MemoryBarrier::default()
                        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                        .dst_access_mask(vk::AccessFlags::HOST_READ);
                    d.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::PipelineStageFlags::HOST,
                        vk::DependencyFlags::empty(),
                        &[after],
                        &[],
                        &[],
                    );
                }
            }
        })?;
        let mut readback = Vec::new();
        if read_len > 0 {
            match exec
                .objects
                .readback
                .as_ref()
                .and_then(|b| b.allocation.as_ref())
                .and_then(|a| a.mapped_slice())
            {
                Some(m) => readback.extend_from_slice(&m[..read_len as usize]),
                None => return Err(VkError::Vk("staging memory is not host-visible".into())),
            }
        }
        let mut ticks = vec![0u64; queries as usize];
        if queries > 0 {
            // SAFETY: the submission that wrote every query has finished; `ticks` has room for
            // `queries` 64-bit results, and the pool has at least that many queries.
            unsafe {
                d.get_query_pool_results(
                    query_pool,
                    0,
                    &mut ticks,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                )
            }
            .map_err(|e| self.shared.err("vkGetQueryPoolResults", e))?;
        }
        Ok((ticks, readback))
    }

    /// `exec.objects`' descriptor pool, reset (or replaced by a larger one), with one set
    /// allocated per layout; `descriptors` is the number of storage-buffer bindings of them all.
    fn descriptor_sets(
        &self,
        exec: &mut Exec,
        layouts: &[vk::DescriptorSetLayout],
        descriptors: u32,
    ) -> Result<Vec<vk::DescriptorSet>> {
        let d = &self.shared.device;
        let o = &mut exec.objects;
        let sets = u32::try_from(layouts.len())
            .map_err(|_| VkError::Vk(format!("{} descriptor sets: too many", layouts.len())))?;
        let (room_sets, room_descriptors) = o.descriptor_room;
        if o.descriptor_pool != vk::DescriptorPool::null()
            && sets <= room_sets
            && descriptors <= room_descriptors
        {
            // SAFETY: the pool belongs to this device; no pending submission uses its sets
            // (the last one that did was waited for) and none of them is used after the reset
            // (every run allocates its own).
            unsafe {
                d.reset_descriptor_pool(o.descriptor_pool, vk::DescriptorPoolResetFlags::empty())
            }
            .map_err(|e| self.shared.err("vkResetDescriptorPool", e))?;
        } else {
            let room = (
                sets.max(room_sets.saturating_mul(2))
                    .max(DESCRIPTOR_ROOM_MIN.0),
                descriptors
                    .max(room_descriptors.saturating_mul(2))
                    .max(DESCRIPTOR_ROOM_MIN.1),
            );
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(room.1)];
            let info = vk::DescriptorPoolCreateInfo::default()
                .max_sets(room.0)
                .pool_sizes(&sizes);
            // SAFETY: a valid device and create info.
            let pool = unsafe { d.create_descriptor_pool(&info, None) }
                .map_err(|e| self.shared.err("vkCreateDescriptorPool", e))?;
            exec.counts.descriptor_pools += 1;
            if o.descriptor_pool != vk::DescriptorPool::null() {
                // SAFETY: made on this device; no pending submission uses its sets (see above).
                unsafe { d.destroy_descriptor_pool(o.descriptor_pool, None) };
            }
            o.descriptor_pool = pool;
            o.descriptor_room = room;
        }
        let alloc = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(o.descriptor_pool)
            .set_layouts(layouts);
        // SAFETY: the pool is empty (reset or new) and has room for these sets: `sets` sets of
        // `descriptors` storage-buffer bindings in all.
        unsafe { d.allocate_descriptor_sets(&alloc) }
            .map_err(|e| self.shared.err("vkAllocateDescriptorSets", e))
    }

    /// `exec.objects`' timestamp query pool, made or replaced by a larger one to have at least
    /// `queries` queries. (The command buffer resets the queries it writes.)
    fn query_pool(&self, exec: &mut Exec, queries: u32) -> Result<vk::QueryPool> {
        let d = &self.shared.device;
        let o = &mut exec.objects;
        if o.query_pool != vk::QueryPool::null() && o.queries >= queries {
            return Ok(o.query_pool);
        }
        let count = queries.max(o.queries.saturating_mul(2)).max(QUERIES_MIN);
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(count);
        // SAFETY: a valid device and create info.
        let pool = unsafe { d.create_query_pool(&info, None) }
            .map_err(|e| self.shared.err("vkCreateQueryPool", e))?;
        exec.counts.query_pools += 1;
        if o.query_pool != vk::QueryPool::null() {
            // SAFETY: made on this device; the submissions that used it have finished.
            unsafe { d.destroy_query_pool(o.query_pool, None) };
        }
        o.query_pool = pool;
        o.queries = count;
        Ok(pool)
    }
}

/// Turns raw timestamp pairs into nanoseconds: ticks are masked with `mask` (the queue's
/// `timestampValidBits`), the duration is computed modulo the mask (so a wrap-around does not
/// give end < start) and both are multiplied by `period` (ns per tick). Each timing also gets
/// its command's workgroups (0 for a transfer), bytes (bound, [`bytes_bound`], or moved) and
/// the submission number.
fn timings(
    commands: &[Command<'_>],
    ticks: &[u64],
    mask: u64,
    period: f64,
    submission: u64,
) -> Vec<KernelTiming> {
    commands
        .iter()
        .zip(ticks.chunks(2))
        .map(|(c, t)| {
            let (start_ns, end_ns) =
                timing_ns(t[0], t.get(1).copied().unwrap_or(t[0]), mask, period);
            let (groups, bytes) = match c {
                Command::Dispatch(x) => (x.groups, bytes_bound(&x.buffers)),
                Command::Copy(x) => ([0; 3], x.size.saturating_mul(2)),
                Command::Fill(x) => ([0; 3], x.size),
            };
            KernelTiming {
                name: c.name().to_string(),
                start_ns,
                end_ns,
                groups,
                bytes,
                submission,
            }
        })
        .collect()
}

/// The sum of the sizes of the distinct buffers (a buffer bound twice counts once).
fn bytes_bound(buffers: &[&Buffer]) -> u64 {
    let mut seen: Vec<vk::Buffer> = Vec::with_capacity(buffers.len());
    let mut total = 0u64;
    for b in buffers {
        if !seen.contains(&b.buffer) {
            seen.push(b.buffer);
            total = total.saturating_add(b.size);
        }
    }
    total
}

/// One start/end pair of raw ticks in nanoseconds (see [`timings`]).
fn timing_ns(start: u64, end: u64, mask: u64, period: f64) -> (u64, u64) {
    let (s, e) = (start & mask, end & mask);
    let start_ns = (s as f64 * period) as u64;
    let dur_ns = (e.wrapping_sub(s) & mask) as f64 * period;
    (start_ns, start_ns.saturating_add(dur_ns as u64))
}

fn alloc_error(e: AllocationError) -> VkError {
    match e {
        AllocationError::OutOfMemory => VkError::OutOfMemory("gpu-allocator: out of memory".into()),
        e => VkError::Vk(format!("gpu-allocator: {e}")),
    }
}

/// The wait semaphores of a submission with their values and stages.
struct WaitInfo {
    semaphores: Vec<vk::Semaphore>,
    values: Vec<u64>,
    stages: Vec<vk::PipelineStageFlags>,
}

impl WaitInfo {
    fn new(points: Vec<TimelinePoint>) -> WaitInfo {
        WaitInfo {
            semaphores: points.iter().map(|p| p.semaphore).collect(),
            values: points.iter().map(|p| p.value).collect(),
            // vkad's first command may be a transfer (an upload) or a dispatch.
            stages: vec![vk::PipelineStageFlags::ALL_COMMANDS; points.len()],
        }
    }

    /// The timeline values of the waits, to chain into the `SubmitInfo`.
    fn timeline(&self) -> vk::TimelineSemaphoreSubmitInfo<'_> {
        vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&self.values)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        self.close_pipeline_cache();
        let exec = self.exec.get_mut().unwrap_or_else(|p| p.into_inner());
        let mut exec = Exec {
            pool: exec.pool,
            objects: std::mem::take(&mut exec.objects),
            pending: std::mem::take(&mut exec.pending),
            counts: exec.counts,
            waits: Vec::new(),
        };
        self.reap(&mut exec);
        if !exec.pending.is_empty() {
            // Still running: leak the submission, the pool, the reusable objects (their staging
            // buffers see `hung` and are not freed) and, through `hung`, the device.
            self.shared.hung.store(true, Ordering::SeqCst);
            std::mem::forget(exec.pending);
            return;
        }
        // The reusable objects are idle: every submission that used them was waited for (a
        // submission whose wait failed took its objects into `pending`, reaped above).
        self.destroy(exec.pool, exec.objects);
        self.kernels
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        // SAFETY: every command buffer from the pool has finished and been freed.
        unsafe { self.shared.device.destroy_command_pool(exec.pool, None) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_masked_scaled_and_wrap() {
        let mask32 = 0xFFFF_FFFFu64;
        // Garbage above the valid bits is ignored; the end wrapped around past 2^32.
        assert_eq!(
            timing_ns(0xFFFF_FFF0 | (7 << 40), 0x10, mask32, 1.0),
            (0xFFFF_FFF0, 0xFFFF_FFF0 + 0x20)
        );
        assert_eq!(timing_ns(100, 150, u64::MAX, 2.5), (250, 375));
        assert_eq!(timing_ns(5, 5, u64::MAX, 1.0), (5, 5));
    }

    #[test]
    fn feature_structs_copy_what_is_present() {
        let f = Features {
            int64: true,
            float16: true,
            storage16: true,
            buffer_f32_atomic_add: true,
            ..Default::default()
        };
        let (f10, f11, f12, fa) = feature_structs(&f);
        assert_eq!(f10.shader_int64, vk::TRUE);
        assert_eq!(f10.shader_float64, vk::FALSE);
        assert_eq!(f11.storage_buffer16_bit_access, vk::TRUE);
        assert_eq!(f12.shader_float16, vk::TRUE);
        assert_eq!(f12.shader_int8, vk::FALSE);
        assert_eq!(fa.shader_buffer_float32_atomic_add, vk::TRUE);
    }

    #[test]
    fn device_module_is_used() {
        // `device::select` with no devices is NoDevice with the install hint.
        match crate::device::select(Vec::new(), None) {
            Err(VkError::NoDevice(m)) => assert!(m.contains("libvulkan1"), "{m}"),
            other => panic!("{:?}", other.map(|(p, _)| p.info)),
        }
    }
}
