//! Embedding vkad in a Vulkan application.
//!
//! The application creates its own `ash` instance, device (with `timelineSemaphore` enabled)
//! and compute queue, and its own buffers (host-visible memory it fills itself). It then
//! builds a vkad context on them with `Context::from_raw`, wraps its buffers with
//! `Buffer::from_raw` (vkad never frees them), compiles `examples/dot.fut` once with
//! `vkad_spirv::Program::compile` and calls its entry `main` twice:
//!
//! 1. on the device-buffer arguments, with the array result left on the device (a vkad buffer
//!    whose `vk::Buffer` handle the application can use in its own commands), downloaded here
//!    only to print it;
//! 2. sharing the queue with the application's own passes, ordered by one timeline semaphore
//!    and no `vkDeviceWaitIdle`: the application submits a pass that rewrites `x` and
//!    signals 1; vkad's call waits for 1 before its first submission and signals 2 after its
//!    kernels; the application submits a pass that waits for 2 and copies vkad's result into
//!    its own buffer, signals 3, and waits on the host for 3 before reading it.
//!
//! Run it with `cargo run -p vkad-embed-example` (`--validation` enables the Khronos validation
//! layer on the application's instance; any validation message is then an error).
//!
//! Storage layout of vkad device arrays: one little-endian 32-bit word per element of at most
//! 32 bits, one 64-bit word for `i64`/`u64`/`f64` (here `f64`), row-major.

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use vkad_spirv::{Arg, CallOptions, DeviceArray, Out, Program};
use vkad_vk::ash::{self, vk};
use vkad_vk::{Buffer, Context, TimelinePoint};

static VALIDATION_MESSAGES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    if severity.intersects(
        vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
            | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
    ) {
        VALIDATION_MESSAGES.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the layer passes a valid callback-data struct whose message is a C string.
        let msg = unsafe { data.as_ref() }
            .and_then(|d| (!d.p_message.is_null()).then(|| unsafe { CStr::from_ptr(d.p_message) }))
            .map(|m| m.to_string_lossy().into_owned())
            .unwrap_or_default();
        eprintln!("validation: {msg}");
    }
    vk::FALSE
}

/// The application's own Vulkan objects.
struct App {
    entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    buffers: Vec<(vk::Buffer, vk::DeviceMemory)>,
    /// The pool of the application's own command buffers, and the timeline semaphore that
    /// orders its passes and vkad's calls.
    pool: vk::CommandPool,
    timeline: vk::Semaphore,
}

fn err(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl App {
    fn new(validation: bool) -> Result<App, String> {
        // SAFETY: loading the Vulkan loader library; its initialisation is trusted.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
        let app_info = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let exts = [ash::ext::debug_utils::NAME.as_ptr()];
        let mut info = vk::InstanceCreateInfo::default().application_info(&app_info);
        if validation {
            info = info
                .enabled_layer_names(&layers)
                .enabled_extension_names(&exts);
        }
        // SAFETY: a valid create-info with static strings.
        let instance = unsafe { entry.create_instance(&info, None) }.map_err(err("instance"))?;
        let debug = if validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &instance);
            let mi = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                        | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                        | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
                )
                .pfn_user_callback(Some(on_message));
            // SAFETY: the instance was created with the debug-utils extension.
            let m = unsafe { loader.create_debug_utils_messenger(&mi, None) }
                .map_err(err("messenger"))?;
            Some((loader, m))
        } else {
            None
        };
        // SAFETY: the instance is alive; the handles come from it.
        let physicals = unsafe { instance.enumerate_physical_devices() }.map_err(err("devices"))?;
        let mut chosen = None;
        for &p in &physicals {
            // SAFETY: `p` belongs to `instance`.
            let fams = unsafe { instance.get_physical_device_queue_family_properties(p) };
            if let Some(f) = fams
                .iter()
                .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            {
                chosen = Some((p, f as u32));
                break;
            }
        }
        let (physical, family) = chosen.ok_or("no device with a compute queue")?;
        // vkad's kernels index with 64-bit integers, and dot.fut computes in f64.
        let features = vk::PhysicalDeviceFeatures::default()
            .shader_int64(true)
            .shader_float64(true);
        let prio = [1.0f32];
        let qi = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        // Timeline semaphores (core in Vulkan 1.2, optional to enable) order the
        // application's passes and vkad's calls on the shared queue.
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let di = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qi)
            .enabled_features(&features)
            .push_next(&mut f12);
        // SAFETY: valid create-info for a physical device of this instance.
        let device =
            unsafe { instance.create_device(physical, &di, None) }.map_err(err("device"))?;
        // SAFETY: the device was created with one queue in `family`.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let pi = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create-info for a queue family of this device.
        let pool = unsafe { device.create_command_pool(&pi, None) }.map_err(err("pool"))?;
        let mut ti = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let si = vk::SemaphoreCreateInfo::default().push_next(&mut ti);
        // SAFETY: valid create-info; timeline semaphores are enabled on the device.
        let timeline = unsafe { device.create_semaphore(&si, None) }.map_err(err("semaphore"))?;
        Ok(App {
            entry,
            instance,
            physical,
            device,
            queue,
            family,
            debug,
            buffers: Vec::new(),
            pool,
            timeline,
        })
    }

    /// Records a command buffer with `record` and submits it to the queue, waiting (at the
    /// transfer stage) for the timeline value `wait` when given and signalling `signal`; does
    /// not wait for it. The command buffer is freed when the pool is destroyed.
    fn submit(
        &self,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
        wait: Option<u64>,
        signal: u64,
    ) -> Result<(), String> {
        let d = &self.device;
        let ai = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is ours; the command buffer is recorded once and submitted once, and
        // the semaphore is a timeline semaphore of this device.
        unsafe {
            let cmd = d
                .allocate_command_buffers(&ai)
                .map_err(err("command buffer"))?[0];
            let bi = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            d.begin_command_buffer(cmd, &bi).map_err(err("begin"))?;
            record(d, cmd);
            d.end_command_buffer(cmd).map_err(err("end"))?;
            let cmds = [cmd];
            let sems = [self.timeline];
            let stages = [vk::PipelineStageFlags::TRANSFER];
            let signals = [signal];
            let waits = [wait.unwrap_or(0)];
            let mut tl =
                vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&signals);
            let mut si = vk::SubmitInfo::default()
                .command_buffers(&cmds)
                .signal_semaphores(&sems);
            if wait.is_some() {
                tl = tl.wait_semaphore_values(&waits);
                si = si.wait_semaphores(&sems).wait_dst_stage_mask(&stages);
            }
            let si = si.push_next(&mut tl);
            d.queue_submit(self.queue, &[si], vk::Fence::null())
                .map_err(err("submit"))
        }
    }

    /// Waits on the host until the timeline semaphore reaches `value`.
    fn wait(&self, value: u64) -> Result<(), String> {
        let sems = [self.timeline];
        let values = [value];
        let wi = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        // SAFETY: a timeline semaphore of this device.
        unsafe { self.device.wait_semaphores(&wi, 10_000_000_000) }.map_err(err("wait"))
    }

    /// The first `len` bytes of host-visible buffer `buf` (made by `buffer_with`).
    fn read(&self, buf: vk::Buffer, len: usize) -> Result<Vec<u8>, String> {
        let &(_, mem) = self
            .buffers
            .iter()
            .find(|(b, _)| *b == buf)
            .ok_or("not an application buffer")?;
        let mut out = vec![0u8; len];
        // SAFETY: `mem` is host-visible and coherent, bound to `buf` of at least `len` bytes,
        // not mapped elsewhere, and no submission writing it is in flight (the caller waited).
        unsafe {
            let ptr = self
                .device
                .map_memory(mem, 0, len as u64, vk::MemoryMapFlags::empty())
                .map_err(err("map"))?;
            std::ptr::copy_nonoverlapping(ptr.cast::<u8>(), out.as_mut_ptr(), len);
            self.device.unmap_memory(mem);
        }
        Ok(out)
    }

    /// Creates a storage buffer in host-visible memory and writes `bytes` into it.
    fn buffer_with(&mut self, bytes: &[u8]) -> Result<vk::Buffer, String> {
        let size = bytes.len().max(8) as u64;
        let bi = vk::BufferCreateInfo::default().size(size).usage(
            vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::TRANSFER_SRC
                | vk::BufferUsageFlags::TRANSFER_DST,
        );
        // SAFETY: valid create-info on our device.
        let buf = unsafe { self.device.create_buffer(&bi, None) }.map_err(err("buffer"))?;
        // SAFETY: `buf` was just created on this device.
        let req = unsafe { self.device.get_buffer_memory_requirements(buf) };
        // SAFETY: `physical` belongs to `instance`.
        let props = unsafe {
            self.instance
                .get_physical_device_memory_properties(self.physical)
        };
        let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let ty = (0..props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize].property_flags.contains(want)
            })
            .ok_or("no host-visible memory type")?;
        let ai = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(ty);
        // SAFETY: valid allocate-info; the memory is bound to `buf` and mapped once.
        unsafe {
            let mem = self
                .device
                .allocate_memory(&ai, None)
                .map_err(err("memory"))?;
            self.buffers.push((buf, mem));
            self.device
                .bind_buffer_memory(buf, mem, 0)
                .map_err(err("bind"))?;
            let ptr = self
                .device
                .map_memory(mem, 0, size, vk::MemoryMapFlags::empty())
                .map_err(err("map"))?;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.cast::<u8>(), bytes.len());
            self.device.unmap_memory(mem);
        }
        Ok(buf)
    }
}

impl Drop for App {
    fn drop(&mut self) {
        // SAFETY: vkad's context and buffers are dropped before the App (see `run`); nothing
        // is in flight.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_semaphore(self.timeline, None);
            for &(b, m) in &self.buffers {
                self.device.destroy_buffer(b, None);
                self.device.free_memory(m, None);
            }
            self.device.destroy_device(None);
            if let Some((loader, m)) = &self.debug {
                loader.destroy_debug_utils_messenger(*m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

fn f64_bytes(xs: &[f64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs dot.fut's `main` on application-owned buffers; returns the printed lines.
fn run(validation: bool) -> Result<String, String> {
    let src = include_str!("../../dot.fut");
    let compiled = vkad_core::compile("examples/dot.fut", src).map_err(|e| e.render())?;
    let mut app = App::new(validation)?;
    // The application's data: a 2×3 matrix and two vectors, in its own buffers.
    let (n, m) = (2usize, 3usize);
    let a = app.buffer_with(&f64_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))?;
    let x = app.buffer_with(&f64_bytes(&[1.0, 0.5, 2.0]))?;
    let y = app.buffer_with(&f64_bytes(&[2.0, 2.0, 2.0]))?;
    let out = {
        // SAFETY: the instance (Vulkan 1.2), physical device, device and compute queue are the
        // application's, alive until `app` drops (after the context and its buffers).
        let mut ctx = unsafe {
            Context::from_raw(
                app.entry.clone(),
                app.instance.clone(),
                app.physical,
                app.device.clone(),
                app.queue,
                app.family,
            )
        }
        .map_err(|e| e.to_string())?;
        // Tell vkad what the application did not enable.
        ctx.restrict_info(|i| {
            i.int64_atomics = false;
            i.float16 = false;
            i.int16 = false;
            i.int8 = false;
            i.storage_buffer8 = false;
            i.storage_buffer16 = false;
            i.float32_atomic_add = false;
            i.float64_atomic_add = false;
            i.vulkan_memory_model = false;
        });
        let wrap = |b: vk::Buffer, len: usize| {
            // SAFETY: `b` was created on this device with storage and transfer usage, holds
            // `len` f64 words and outlives the wrapper (it is destroyed when `app` drops).
            Arc::new(unsafe { Buffer::from_raw(&ctx, b, (len * 8) as u64) })
        };
        let f64t = vkad_core::prim::PrimType::Float(vkad_core::prim::FloatType::F64);
        let args = vec![
            Arg::Device(DeviceArray {
                buffer: wrap(a, n * m),
                elem: f64t,
                shape: vec![n, m],
            }),
            Arg::Device(DeviceArray {
                buffer: wrap(x, m),
                elem: f64t,
                shape: vec![m],
            }),
            Arg::Device(DeviceArray {
                buffer: wrap(y, m),
                elem: f64t,
                shape: vec![m],
            }),
        ];
        // Compile once; call many times.
        let program = Program::compile(&ctx, &compiled).map_err(|e| e.to_string())?;
        let main = program.entry("main").map_err(|e| e.to_string())?;
        let device_results = CallOptions::default().device_results();
        // 1. Device arguments, the array result left on the device.
        let results = main
            .call_with(&ctx, args.clone(), &device_results)
            .map_err(|e| e.to_string())?
            .outs;
        let mut text = String::new();
        for r in &results {
            match r {
                Out::Device(d) => {
                    text.push_str(&format!(
                        "device array {:?} in buffer {:?}: ",
                        d.shape,
                        d.buffer.raw()
                    ));
                    let v = d.download(&ctx).map_err(|e| e.to_string())?;
                    text.push_str(&vkad_core::values::write_text(
                        &vkad_core::value::Value::Array(v),
                    ));
                }
                Out::Host(v) => text.push_str(&vkad_core::values::write_text(v)),
            }
            text.push('\n');
        }
        // 2. The application's pass rewrites x (x = [1, 1, 1]) and signals 1.
        let ones = f64_bytes(&[1.0; 3]);
        app.submit(
            // SAFETY: `x` is the application's buffer of 24 bytes with transfer-dst usage; no
            // vkad call is in progress.
            |d, cmd| unsafe { d.cmd_update_buffer(cmd, x, 0, &ones) },
            None,
            1,
        )?;
        // vkad waits for 1 on the device before its first submission, signals 2 after.
        // SAFETY: the application's timeline semaphore, alive until `app` drops; the pass just
        // submitted signals 1, and nothing else signals 2.
        let synced = unsafe {
            device_results
                .clone()
                .wait_for(TimelinePoint {
                    semaphore: app.timeline,
                    value: 1,
                })
                .signal(TimelinePoint {
                    semaphore: app.timeline,
                    value: 2,
                })
        };
        let results2 = main
            .call_with(&ctx, args, &synced)
            .map_err(|e| e.to_string())?
            .outs;
        let [Out::Host(dot), Out::Device(ax)] = &results2[..] else {
            return Err(format!("unexpected results {results2:?}"));
        };
        // The application's pass waits for 2, copies vkad's result into its own buffer and
        // signals 3; the host waits for 3 and reads it.
        let bytes = (n * 8) as u64;
        let copy = app.buffer_with(&vec![0u8; n * 8])?;
        let src = ax.buffer.raw();
        app.submit(
            // SAFETY: `src` is vkad's result buffer (alive in `results2` until after the host
            // wait below) with transfer-src usage, `copy` the application's of `bytes` bytes.
            |d, cmd| unsafe {
                d.cmd_copy_buffer(cmd, src, copy, &[vk::BufferCopy::default().size(bytes)]);
                let to_host = vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                    .dst_access_mask(vk::AccessFlags::HOST_READ);
                d.cmd_pipeline_barrier(
                    cmd,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::PipelineStageFlags::HOST,
                    vk::DependencyFlags::empty(),
                    &[to_host],
                    &[],
                    &[],
                );
            },
            Some(2),
            3,
        )?;
        app.wait(3)?;
        let got: Vec<f64> = app
            .read(copy, n * 8)?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        text.push_str(&format!(
            "after the application's pass: {} {got:?}\n",
            vkad_core::values::write_text(dot)
        ));
        drop(results2);
        drop(results);
        drop(ctx);
        text
    };
    let msgs = VALIDATION_MESSAGES.load(Ordering::SeqCst);
    drop(app);
    if msgs > 0 {
        return Err(format!("{msgs} validation messages"));
    }
    Ok(out)
}

fn main() -> std::process::ExitCode {
    let validation = std::env::args().any(|a| a == "--validation");
    match run(validation) {
        Ok(text) => {
            print!("{text}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_dot_on_application_buffers_with_validation() {
        match super::run(true) {
            Ok(text) => {
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len(), 3, "{text}");
                assert_eq!(lines[0], "7.0f64", "{text}");
                assert!(lines[1].starts_with("device array [2]"), "{text}");
                assert!(lines[1].ends_with("[8.0f64, 18.5f64]"), "{text}");
                // x = [1, 1, 1]: x·y = 6, a x = [6, 15].
                assert_eq!(
                    lines[2], "after the application's pass: 6.0f64 [6.0, 15.0]",
                    "{text}"
                );
            }
            Err(e) if e.starts_with("no Vulkan loader") => eprintln!("skipped: {e}"),
            Err(e) => panic!("{e}"),
        }
    }
}
