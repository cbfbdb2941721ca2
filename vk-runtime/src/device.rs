//! Loading Vulkan, making instances, and describing physical devices.

use crate::{vk_error, PipelineCacheMode, Result, VkError, INSTALL_HINT};
use ash::vk;
use std::ffi::{c_void, CStr, CString};
use std::sync::Mutex;

/// What vkad knows about one physical device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Position in `vkEnumeratePhysicalDevices` order (what [`ContextOptions::device`] takes).
    pub index: usize,
    /// The device name (`llvmpipe (LLVM 15.0.6, 256 bits)` for lavapipe).
    pub name: String,
    /// "discrete", "integrated", "cpu", "virtual" or "other".
    pub device_type: String,
    /// The Vulkan version the device supports (major, minor, patch).
    pub api_version: (u32, u32, u32),
    /// Driver name and version information.
    pub driver: String,
    /// The subgroup size (0 when unknown).
    pub subgroup_size: u32,
    /// Subgroup arithmetic operations in compute shaders.
    pub subgroup_arithmetic: bool,
    /// Subgroup ballot operations in compute shaders.
    pub subgroup_ballot: bool,
    /// Subgroup shuffle operations in compute shaders.
    pub subgroup_shuffle: bool,
    /// Subgroup vote operations (`OpGroupNonUniformAll`, `AllEqual`) in compute shaders.
    pub subgroup_vote: bool,
    /// `shaderBufferFloat32AtomicAdd` (VK_EXT_shader_atomic_float).
    pub float32_atomic_add: bool,
    /// `shaderBufferFloat64AtomicAdd` (VK_EXT_shader_atomic_float).
    pub float64_atomic_add: bool,
    /// `shaderInt64`.
    pub int64: bool,
    /// `shaderBufferInt64Atomics`.
    pub int64_atomics: bool,
    /// `shaderFloat64`.
    pub float64: bool,
    /// `shaderFloat16`.
    pub float16: bool,
    /// `shaderInt16`.
    pub int16: bool,
    /// `shaderInt8`.
    pub int8: bool,
    /// `storageBuffer8BitAccess` (8-bit loads and stores in storage buffers).
    pub storage_buffer8: bool,
    /// `storageBuffer16BitAccess` (16-bit loads and stores in storage buffers).
    pub storage_buffer16: bool,
    /// `vulkanMemoryModel` (and its device scope), for modules using the Vulkan memory model.
    pub vulkan_memory_model: bool,
    /// `shaderSignedZeroInfNanPreserveFloat16/32/64` (Vulkan 1.2 float controls), indexed by
    /// width as `[16, 32, 64]`: modules may declare the `SignedZeroInfNanPreserve` execution
    /// mode for floats of that width, which forbids the driver transformations that assume no
    /// NaN, infinity or signed zero (such as `x * 0.0 → 0.0`). [`crate::Context::kernel`]
    /// drops the modes a device does not support.
    pub signed_zero_inf_nan_preserve: [bool; 3],
    /// `shaderDenormPreserveFloat16/32/64`, indexed as [`DeviceInfo::signed_zero_inf_nan_preserve`]:
    /// modules may declare the `DenormPreserve` execution mode, which keeps subnormal operands
    /// and results (NVIDIA flushes f32 subnormals to zero without it).
    pub denorm_preserve: [bool; 3],
    /// `bufferDeviceAddress`: kernels can reach buffers through 64-bit addresses
    /// (`PhysicalStorageBuffer64`), with no descriptor binding and no `maxStorageBufferRange`
    /// limit; [`crate::Buffer::device_address`] gives them.
    pub buffer_device_address: bool,
    /// `timelineSemaphore` (core in Vulkan 1.2, optional before): vkad's submissions can wait
    /// on and signal an application's timeline semaphores
    /// ([`crate::Context::wait_before_next_submission`], [`crate::Context::signal`]).
    pub timeline_semaphore: bool,
    /// `maxStorageBufferRange`: the largest buffer a kernel can bind.
    pub max_storage_buffer_range: u64,
    /// The largest single buffer [`crate::Context::alloc`] can give (the smallest of
    /// `maxMemoryAllocationSize`, `maxBufferSize` and the largest device-local heap).
    pub max_allocation: u64,
    /// `maxComputeWorkGroupSize[0]` capped by `maxComputeWorkGroupInvocations`.
    pub max_workgroup_size: u32,
    /// `maxComputeWorkGroupCount`.
    pub max_workgroup_count: [u32; 3],
    /// `maxComputeSharedMemorySize` in bytes.
    pub max_shared_memory: u32,
    /// Nanoseconds per timestamp tick (`timestampPeriod`).
    pub timestamp_period_ns: f32,
    /// `timestampValidBits` of the compute queue vkad uses (0: no timestamps, so every
    /// [`crate::KernelTiming`] has times 0).
    pub timestamp_bits: u32,
}

/// How to make a [`crate::Context`].
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    /// None: prefer a discrete GPU, then integrated, then anything (lavapipe).
    pub device: Option<usize>,
    /// Enable VK_LAYER_KHRONOS_validation + debug utils messenger; warnings/errors are collected
    /// and returned as VkError::Validation from the next `run`/`download`. Default: on when the
    /// environment variable VKAD_VALIDATION=1.
    pub validation: bool,
    /// Where the Vulkan pipeline cache is kept between processes, so that a later process
    /// makes its pipelines from the cache instead of compiling them again. Default: the
    /// user's cache directory (`$XDG_CACHE_HOME/vkad/pipelines`, else
    /// `$HOME/.cache/vkad/pipelines`), which the environment variable `VKAD_PIPELINE_CACHE`
    /// overrides (`0`: off; a path: that directory). See [`PipelineCacheMode`].
    pub pipeline_cache: PipelineCacheMode,
}

/// Device features vkad enables when present (plain data, copied into the create-info chain).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Features {
    pub int64: bool,
    pub float64: bool,
    pub int16: bool,
    pub float16: bool,
    pub int8: bool,
    pub storage8: bool,
    pub uniform_storage8: bool,
    pub push_constant8: bool,
    pub storage16: bool,
    pub uniform_storage16: bool,
    pub push_constant16: bool,
    pub buffer_int64_atomics: bool,
    pub shared_int64_atomics: bool,
    pub memory_model: bool,
    pub memory_model_device_scope: bool,
    pub subgroup_extended_types: bool,
    pub buffer_device_address: bool,
    pub timeline_semaphore: bool,
    pub atomic_float_ext: bool,
    pub buffer_f32_atomics: bool,
    pub buffer_f32_atomic_add: bool,
    pub buffer_f64_atomics: bool,
    pub buffer_f64_atomic_add: bool,
    pub shared_f32_atomics: bool,
    pub shared_f32_atomic_add: bool,
    pub shared_f64_atomics: bool,
    pub shared_f64_atomic_add: bool,
    pub portability_subset_ext: bool,
}

/// Everything learned about a physical device: the public description plus what device and
/// queue creation need.
pub(crate) struct Probe {
    pub info: DeviceInfo,
    pub physical: vk::PhysicalDevice,
    pub features: Features,
    /// A queue family with compute (preferring one with timestamps).
    pub compute_family: Option<u32>,
    /// `timestampValidBits` of that family (0: no timestamps).
    pub timestamp_bits: u32,
    pub max_push_constants: u32,
    /// `maxPerStageDescriptorStorageBuffers`.
    pub max_storage_buffers: u32,
    /// `vk::make_api_version` form of `info.api_version`.
    pub raw_api_version: u32,
}

/// Opens the Vulkan loader.
pub(crate) fn load_entry() -> Result<ash::Entry> {
    // SAFETY: loading libvulkan runs its initialisers; the loader is a well-behaved system
    // library and we keep the returned Entry (which keeps the library open) for as long as any
    // Vulkan object made through it lives.
    unsafe { ash::Entry::load() }.map_err(|e| {
        VkError::NoDevice(format!(
            "cannot load the Vulkan loader ({e}); {INSTALL_HINT}"
        ))
    })
}

/// The messages the debug messenger collects (boxed so its address is stable).
pub(crate) type Messages = Mutex<Vec<String>>;

/// An instance, with its debug messenger when validation is on.
pub(crate) struct InstanceParts {
    pub instance: ash::Instance,
    pub debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
}

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Whether `list` holds an extension named `name`.
fn has_extension(list: &[vk::ExtensionProperties], name: &CStr) -> bool {
    list.iter()
        .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
}

/// Makes an instance for Vulkan 1.3 (the loader must support at least 1.2). With `messages`, enables the Khronos validation
/// layer (with synchronization validation when the layer offers it) and a debug-utils messenger
/// that appends warnings and errors to `*messages`, which must outlive the instance.
pub(crate) fn create_instance(
    entry: &ash::Entry,
    messages: Option<&Messages>,
) -> Result<InstanceParts> {
    // SAFETY: plain queries on a loaded entry.
    let version = unsafe { entry.try_enumerate_instance_version() }
        .map_err(|e| vk_error("vkEnumerateInstanceVersion", e))?
        .unwrap_or(vk::API_VERSION_1_0);
    if version < vk::API_VERSION_1_2 {
        return Err(VkError::NoDevice(format!(
            "the Vulkan loader supports only {}.{}; vkad needs 1.2; {INSTALL_HINT}",
            vk::api_version_major(version),
            vk::api_version_minor(version)
        )));
    }
    // SAFETY: as above.
    let instance_exts = unsafe { entry.enumerate_instance_extension_properties(None) }
        .map_err(|e| vk_error("vkEnumerateInstanceExtensionProperties", e))?;
    let mut ext_names: Vec<*const std::ffi::c_char> = Vec::new();
    let mut flags = vk::InstanceCreateFlags::empty();
    if has_extension(&instance_exts, ash::khr::portability_enumeration::NAME) {
        ext_names.push(ash::khr::portability_enumeration::NAME.as_ptr());
        flags |= vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR;
    }
    let mut layer_names: Vec<*const std::ffi::c_char> = Vec::new();
    let mut sync_validation = false;
    if messages.is_some() {
        // SAFETY: as above.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(|e| vk_error("vkEnumerateInstanceLayerProperties", e))?;
        if !layers
            .iter()
            .any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER))
        {
            return Err(VkError::Vk(
                "validation was requested but the Khronos validation layer \
                 (VK_LAYER_KHRONOS_validation) is not installed: install it (on Debian/Ubuntu: \
                 `apt install vulkan-validationlayers`) or turn validation off"
                    .into(),
            ));
        }
        layer_names.push(VALIDATION_LAYER.as_ptr());
        // SAFETY: as above; the layer name is a valid nul-terminated string.
        let layer_exts =
            unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .unwrap_or_default();
        let has = |n: &CStr| has_extension(&instance_exts, n) || has_extension(&layer_exts, n);
        if !has(ash::ext::debug_utils::NAME) {
            return Err(VkError::Vk(
                "validation was requested but VK_EXT_debug_utils is not available".into(),
            ));
        }
        ext_names.push(ash::ext::debug_utils::NAME.as_ptr());
        if has(ash::ext::validation_features::NAME) {
            ext_names.push(ash::ext::validation_features::NAME.as_ptr());
            sync_validation = true;
        }
    }

    let app_name = c"vkad";
    let app = vk::ApplicationInfo::default()
        .application_name(app_name)
        .application_version(1)
        .engine_name(app_name)
        .engine_version(1)
        .api_version(INSTANCE_API);
    let user_data = messages.map_or(std::ptr::null_mut(), |m| {
        m as *const Messages as *mut c_void
    });
    let mut messenger_info = messenger_create_info(user_data);
    let enabled_validation = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut validation_features =
        vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled_validation);
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layer_names)
        .enabled_extension_names(&ext_names)
        .flags(flags);
    if messages.is_some() {
        // Also report messages from vkCreateInstance / vkDestroyInstance themselves.
        info = info.push_next(&mut messenger_info);
        if sync_validation {
            info = info.push_next(&mut validation_features);
        }
    }
    // SAFETY: every pointer in `info` (names, chained structs, user data) is alive for the
    // call; `user_data` points at `messages`, which the caller keeps alive past the instance.
    let instance = unsafe { entry.create_instance(&info, None) }
        .map_err(|e| vk_error("vkCreateInstance", e))?;
    let debug = if messages.is_some() {
        let loader = ash::ext::debug_utils::Instance::new(entry, &instance);
        let info = messenger_create_info(user_data);
        // SAFETY: the instance was created with VK_EXT_debug_utils enabled; see above for
        // `user_data`.
        match unsafe { loader.create_debug_utils_messenger(&info, None) } {
            Ok(m) => Some((loader, m)),
            Err(e) => {
                // SAFETY: nothing else was made from this instance.
                unsafe { instance.destroy_instance(None) };
                return Err(vk_error("vkCreateDebugUtilsMessengerEXT", e));
            }
        }
    } else {
        None
    };
    Ok(InstanceParts { instance, debug })
}

fn messenger_create_info(user_data: *mut c_void) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(debug_callback))
        .user_data(user_data)
}

/// Appends a validation message to the `Messages` that `user_data` points at. Never panics
/// (unwinding out of an `extern "system"` function aborts).
unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    if user_data.is_null()
        || !severity.intersects(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
    {
        return vk::FALSE;
    }
    // SAFETY: the layer passes a valid callback-data pointer (or null) for the duration of the
    // call; `user_data` is the `&Messages` given at creation, alive while the instance lives.
    let (text, messages) = unsafe {
        let text = data
            .as_ref()
            .and_then(|d| d.message_as_c_str())
            .map(|m| m.to_string_lossy().into_owned())
            .unwrap_or_else(|| "(no message)".to_string());
        (text, &*(user_data as *const Messages))
    };
    let level = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        "error"
    } else {
        "warning"
    };
    if let Ok(mut m) = messages.lock() {
        m.push(format!("{level}: {text}"));
    }
    vk::FALSE
}

fn c_string(bytes: std::result::Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    bytes
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The API version vkad's own instances are created for.
pub(crate) const INSTANCE_API: u32 = vk::API_VERSION_1_3;

/// Describes one physical device. `instance_api` is the API version the instance was created
/// for: structures of newer versions are not queried (the effective version is the smaller of
/// the instance's and the device's).
pub(crate) fn probe(
    instance: &ash::Instance,
    instance_api: u32,
    physical: vk::PhysicalDevice,
    index: usize,
) -> Probe {
    // SAFETY: `physical` was enumerated from `instance`, which is alive and made for API 1.2 or
    // newer, so the *2 queries are core; structs chained below are only those of versions both
    // the instance and the device support, and extension structs only when the extension is
    // present.
    unsafe {
        let props = instance.get_physical_device_properties(physical);
        let api = props.api_version;
        let exts = instance
            .enumerate_device_extension_properties(physical)
            .unwrap_or_default();
        let atomic_float_ext = has_extension(&exts, ash::ext::shader_atomic_float::NAME);
        let portability_subset_ext = has_extension(&exts, ash::khr::portability_subset::NAME);
        let effective = api.min(instance_api);
        let at_least_1_2 = effective >= vk::API_VERSION_1_2;
        let at_least_1_3 = effective >= vk::API_VERSION_1_3;

        let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
        let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
        let mut p13 = vk::PhysicalDeviceVulkan13Properties::default();
        let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
        let mut maint3 = vk::PhysicalDeviceMaintenance3Properties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default();
        if at_least_1_2 {
            props2 = props2.push_next(&mut p11).push_next(&mut p12);
            if at_least_1_3 {
                props2 = props2.push_next(&mut p13);
            }
        } else {
            props2 = props2.push_next(&mut subgroup).push_next(&mut maint3);
        }
        instance.get_physical_device_properties2(physical, &mut props2);
        let limits = props.limits;
        let (subgroup_size, stages, ops, max_alloc) = if at_least_1_2 {
            (
                p11.subgroup_size,
                p11.subgroup_supported_stages,
                p11.subgroup_supported_operations,
                p11.max_memory_allocation_size,
            )
        } else {
            (
                subgroup.subgroup_size,
                subgroup.supported_stages,
                subgroup.supported_operations,
                maint3.max_memory_allocation_size,
            )
        };
        let compute_subgroups = stages.contains(vk::ShaderStageFlags::COMPUTE);
        let max_buffer = if at_least_1_3 {
            p13.max_buffer_size
        } else {
            u64::MAX
        };

        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut fa = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default();
        if at_least_1_2 {
            f2 = f2.push_next(&mut f11).push_next(&mut f12);
            if atomic_float_ext {
                f2 = f2.push_next(&mut fa);
            }
        }
        instance.get_physical_device_features2(physical, &mut f2);
        let f10 = f2.features;
        let on = |b: vk::Bool32| b == vk::TRUE;
        let features = Features {
            int64: on(f10.shader_int64),
            float64: on(f10.shader_float64),
            int16: on(f10.shader_int16),
            float16: on(f12.shader_float16),
            int8: on(f12.shader_int8),
            storage8: on(f12.storage_buffer8_bit_access),
            uniform_storage8: on(f12.uniform_and_storage_buffer8_bit_access),
            push_constant8: on(f12.storage_push_constant8),
            storage16: on(f11.storage_buffer16_bit_access),
            uniform_storage16: on(f11.uniform_and_storage_buffer16_bit_access),
            push_constant16: on(f11.storage_push_constant16),
            buffer_int64_atomics: on(f12.shader_buffer_int64_atomics),
            shared_int64_atomics: on(f12.shader_shared_int64_atomics),
            memory_model: on(f12.vulkan_memory_model),
            memory_model_device_scope: on(f12.vulkan_memory_model_device_scope),
            subgroup_extended_types: on(f12.shader_subgroup_extended_types),
            buffer_device_address: on(f12.buffer_device_address),
            timeline_semaphore: on(f12.timeline_semaphore),
            atomic_float_ext,
            buffer_f32_atomics: on(fa.shader_buffer_float32_atomics),
            buffer_f32_atomic_add: on(fa.shader_buffer_float32_atomic_add),
            buffer_f64_atomics: on(fa.shader_buffer_float64_atomics),
            buffer_f64_atomic_add: on(fa.shader_buffer_float64_atomic_add),
            shared_f32_atomics: on(fa.shader_shared_float32_atomics),
            shared_f32_atomic_add: on(fa.shader_shared_float32_atomic_add),
            shared_f64_atomics: on(fa.shader_shared_float64_atomics),
            shared_f64_atomic_add: on(fa.shader_shared_float64_atomic_add),
            portability_subset_ext,
        };

        let memory = instance.get_physical_device_memory_properties(physical);
        let heaps =
            &memory.memory_heaps[..(memory.memory_heap_count as usize).min(vk::MAX_MEMORY_HEAPS)];
        let largest_local_heap = heaps
            .iter()
            .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .map(|h| h.size)
            .max()
            .or_else(|| heaps.iter().map(|h| h.size).max())
            .unwrap_or(0);

        let families = instance.get_physical_device_queue_family_properties(physical);
        let computes = || {
            families.iter().enumerate().filter(|(_, f)| {
                f.queue_flags.contains(vk::QueueFlags::COMPUTE) && f.queue_count > 0
            })
        };
        let family = computes()
            .find(|(_, f)| f.timestamp_valid_bits > 0)
            .or_else(|| computes().next());
        let driver = if at_least_1_2 {
            let name = c_string(p12.driver_name_as_c_str());
            let info = c_string(p12.driver_info_as_c_str());
            if info.is_empty() {
                name
            } else {
                format!("{name} ({info})")
            }
        } else {
            format!("driver version {:#x}", props.driver_version)
        };
        let info = DeviceInfo {
            index,
            name: c_string(props.device_name_as_c_str()),
            device_type: match props.device_type {
                vk::PhysicalDeviceType::DISCRETE_GPU => "discrete",
                vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated",
                vk::PhysicalDeviceType::CPU => "cpu",
                vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual",
                _ => "other",
            }
            .to_string(),
            api_version: (
                vk::api_version_major(api),
                vk::api_version_minor(api),
                vk::api_version_patch(api),
            ),
            driver,
            subgroup_size,
            subgroup_arithmetic: compute_subgroups
                && ops.contains(vk::SubgroupFeatureFlags::ARITHMETIC),
            subgroup_ballot: compute_subgroups && ops.contains(vk::SubgroupFeatureFlags::BALLOT),
            subgroup_shuffle: compute_subgroups && ops.contains(vk::SubgroupFeatureFlags::SHUFFLE),
            subgroup_vote: compute_subgroups && ops.contains(vk::SubgroupFeatureFlags::VOTE),
            float32_atomic_add: features.buffer_f32_atomic_add,
            float64_atomic_add: features.buffer_f64_atomic_add,
            int64: features.int64,
            int64_atomics: features.int64 && features.buffer_int64_atomics,
            float64: features.float64,
            float16: features.float16,
            int16: features.int16,
            int8: features.int8,
            storage_buffer8: features.storage8,
            storage_buffer16: features.storage16,
            vulkan_memory_model: features.memory_model && features.memory_model_device_scope,
            buffer_device_address: features.buffer_device_address,
            timeline_semaphore: features.timeline_semaphore,
            // Queried only where the Vulkan 1.2 properties are (float controls are core in 1.2).
            signed_zero_inf_nan_preserve: if at_least_1_2 {
                [
                    on(p12.shader_signed_zero_inf_nan_preserve_float16),
                    on(p12.shader_signed_zero_inf_nan_preserve_float32),
                    on(p12.shader_signed_zero_inf_nan_preserve_float64),
                ]
            } else {
                [false; 3]
            },
            denorm_preserve: if at_least_1_2 {
                [
                    on(p12.shader_denorm_preserve_float16),
                    on(p12.shader_denorm_preserve_float32),
                    on(p12.shader_denorm_preserve_float64),
                ]
            } else {
                [false; 3]
            },
            max_storage_buffer_range: u64::from(limits.max_storage_buffer_range),
            max_allocation: max_alloc.min(max_buffer).min(largest_local_heap),
            max_workgroup_size: limits.max_compute_work_group_size[0]
                .min(limits.max_compute_work_group_invocations),
            max_workgroup_count: limits.max_compute_work_group_count,
            max_shared_memory: limits.max_compute_shared_memory_size,
            timestamp_period_ns: limits.timestamp_period,
            timestamp_bits: family.map_or(0, |(_, f)| f.timestamp_valid_bits),
        };
        Probe {
            info,
            physical,
            features,
            compute_family: family.map(|(i, _)| i as u32),
            timestamp_bits: family.map_or(0, |(_, f)| f.timestamp_valid_bits),
            max_push_constants: limits.max_push_constants_size,
            max_storage_buffers: limits.max_per_stage_descriptor_storage_buffers,
            raw_api_version: api,
        }
    }
}

/// Describes every physical device of `instance`.
pub(crate) fn probe_all(instance: &ash::Instance) -> Result<Vec<Probe>> {
    // SAFETY: a plain query on a live instance.
    let physicals = unsafe { instance.enumerate_physical_devices() }
        .map_err(|e| vk_error("vkEnumeratePhysicalDevices", e))?;
    Ok(physicals
        .into_iter()
        .enumerate()
        .map(|(i, p)| probe(instance, INSTANCE_API, p, i))
        .collect())
}

/// Whether vkad can run on the device: Vulkan 1.2 and a compute queue.
pub(crate) fn usable(p: &Probe) -> std::result::Result<u32, String> {
    if p.raw_api_version < vk::API_VERSION_1_2 {
        return Err(format!(
            "Vulkan 1.2 (the device has {}.{})",
            p.info.api_version.0, p.info.api_version.1
        ));
    }
    p.compute_family
        .ok_or_else(|| "a compute queue".to_string())
}

/// Picks a device: the requested index, or the first usable discrete GPU, then integrated GPU,
/// then anything usable.
pub(crate) fn select(probes: Vec<Probe>, want: Option<usize>) -> Result<(Probe, u32)> {
    if probes.is_empty() {
        return Err(VkError::NoDevice(format!(
            "the Vulkan loader found no device; {INSTALL_HINT}"
        )));
    }
    if let Some(i) = want {
        let n = probes.len();
        let Some(p) = probes.into_iter().nth(i) else {
            return Err(VkError::NoDevice(format!(
                "there is no device {i} (there are {n}; `vkad devices` lists them)"
            )));
        };
        return match usable(&p) {
            Ok(family) => Ok((p, family)),
            Err(feature) => Err(VkError::Unsupported {
                device: p.info.name,
                feature,
            }),
        };
    }
    let rank = |p: &Probe| match p.info.device_type.as_str() {
        "discrete" => 0,
        "integrated" => 1,
        _ => 2,
    };
    let mut best: Option<(Probe, u32)> = None;
    let mut why = Vec::new();
    for p in probes {
        match usable(&p) {
            Ok(family) => {
                if best.as_ref().is_none_or(|(b, _)| rank(&p) < rank(b)) {
                    best = Some((p, family));
                }
            }
            Err(missing) => why.push(format!("{} lacks {missing}", p.info.name)),
        }
    }
    best.ok_or_else(|| {
        VkError::NoDevice(format!(
            "no usable device ({}); {INSTALL_HINT}",
            why.join("; ")
        ))
    })
}

/// Lists the devices (index = position in vkEnumeratePhysicalDevices order). No loader or no
/// device at all is [`VkError::NoDevice`].
pub fn list_devices() -> Result<Vec<DeviceInfo>> {
    let entry = load_entry()?;
    let parts = create_instance(&entry, None)?;
    let probes = probe_all(&parts.instance);
    // SAFETY: nothing made from the instance outlives this point (the probes hold only plain
    // data and physical-device handles, which need no destruction).
    unsafe { parts.instance.destroy_instance(None) };
    let probes = probes?;
    if probes.is_empty() {
        return Err(VkError::NoDevice(format!(
            "the Vulkan loader found no device; {INSTALL_HINT}"
        )));
    }
    Ok(probes.into_iter().map(|p| p.info).collect())
}

/// An environment flag: `1`/`true`/`on`/`yes` is Some(true), `0`/`false`/`off`/`no`/empty is
/// Some(false), unset or anything else None.
pub(crate) fn env_flag(name: &str) -> Option<bool> {
    let v = std::env::var(name).ok()?;
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" | "" => Some(false),
        _ => None,
    }
}

/// A C string for an entry-point name (error if it holds a nul byte).
pub(crate) fn entry_c_string(entry: &str) -> Result<CString> {
    CString::new(entry)
        .map_err(|_| VkError::Vk(format!("entry point name {entry:?} contains a nul byte")))
}
