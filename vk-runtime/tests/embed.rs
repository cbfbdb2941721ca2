//! Embedding: a host application's own instance, device and queue (here made with ash, with
//! the validation layer on) run vkad kernels; vkad destroys only what it made.

mod common;

use ash::vk;
use common::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use vkad_vk::{Context, Dispatch, PipelineCacheMode, TimelinePoint, VkError};

static APP_MESSAGES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "system" fn count(
    _: vk::DebugUtilsMessageSeverityFlagsEXT,
    _: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes valid callback data for the duration of the call.
    if let Some(m) = unsafe { data.as_ref().and_then(|d| d.message_as_c_str()) } {
        eprintln!("validation: {}", m.to_string_lossy());
    }
    APP_MESSAGES.fetch_add(1, Ordering::SeqCst);
    vk::FALSE
}

#[test]
fn a_context_on_the_applications_device() {
    // SAFETY (whole test): the usual ash sequence; every object is destroyed once, in reverse
    // order of creation, after vkad's Context is gone.
    unsafe {
        let entry = ash::Entry::load().unwrap();
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let exts = [ash::ext::debug_utils::NAME.as_ptr()];
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default()
                    .application_info(&app)
                    .enabled_layer_names(&layers)
                    .enabled_extension_names(&exts),
                None,
            )
            .unwrap();
        let du = ash::ext::debug_utils::Instance::new(&entry, &instance);
        let messenger = du
            .create_debug_utils_messenger(
                &vk::DebugUtilsMessengerCreateInfoEXT::default()
                    .message_severity(
                        vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                            | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
                    )
                    .message_type(
                        vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                            | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION,
                    )
                    .pfn_user_callback(Some(count)),
                None,
            )
            .unwrap();
        let physical = instance.enumerate_physical_devices().unwrap()[0];
        let family = instance
            .get_physical_device_queue_family_properties(physical)
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .unwrap() as u32;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        // No optional features enabled.
        let device = instance
            .create_device(
                physical,
                &vk::DeviceCreateInfo::default().queue_create_infos(&queues),
                None,
            )
            .unwrap();
        let queue = device.get_device_queue(family, 0);

        let mut ctx = Context::from_raw(
            entry.clone(),
            instance.clone(),
            physical,
            device.clone(),
            queue,
            family,
        )
        .unwrap();
        ctx.restrict_info(|i| {
            i.int64 = false;
            i.float64 = false;
            i.float16 = false;
        });
        assert!(!ctx.info().float64);
        // No pipeline cache on disk unless the application asks for one.
        assert_eq!(ctx.pipeline_cache().file, None);
        let cache_dir =
            std::env::temp_dir().join(format!("vkad-pcache-embed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&cache_dir);
        ctx.set_pipeline_cache(&PipelineCacheMode::Dir(cache_dir.clone()));
        let cache_file = ctx.pipeline_cache().file.clone().unwrap();
        assert!(cache_file.starts_with(&cache_dir));
        let k = ctx
            .kernel("triple", &axpb(true, &[]), "main", 1, 12)
            .unwrap();
        let n = 1000u32;
        let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let buf = ctx.alloc(4 * u64::from(n)).unwrap();
        ctx.upload(&buf, 0, &f32_bytes(&xs)).unwrap();
        let t = ctx
            .run(&[Dispatch {
                kernel: &k,
                buffers: vec![&buf],
                push: axpb_push(n, 3.0, 0.0),
                groups: groups(n),
            }])
            .unwrap();
        assert_eq!(t.len(), 1);
        let ys = f32s(&ctx.download(&buf, 0, 4 * u64::from(n)).unwrap());
        assert_eq!(ys, xs.iter().map(|x| x * 3.0).collect::<Vec<_>>());
        drop((k, buf, ctx));
        // Written when the context was dropped.
        assert!(cache_file.is_file());
        std::fs::remove_dir_all(&cache_dir).unwrap();

        // The application's objects are still alive and usable: the queue works.
        device.queue_wait_idle(queue).unwrap();
        device.destroy_device(None);
        du.destroy_debug_utils_messenger(messenger, None);
        instance.destroy_instance(None);
    }
    assert_eq!(APP_MESSAGES.load(Ordering::SeqCst), 0);
}

#[test]
fn timeline_semaphores_order_vkad_with_the_application() {
    // SAFETY (whole test): as above; the semaphore is destroyed after the context is gone and
    // nothing waits on it any more.
    unsafe {
        let entry = ash::Entry::load().unwrap();
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default()
                    .application_info(&app)
                    .enabled_layer_names(&layers),
                None,
            )
            .unwrap();
        let physical = instance.enumerate_physical_devices().unwrap()[0];
        let family = instance
            .get_physical_device_queue_family_properties(physical)
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .unwrap() as u32;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let device = instance
            .create_device(
                physical,
                &vk::DeviceCreateInfo::default()
                    .queue_create_infos(&queues)
                    .push_next(&mut f12),
                None,
            )
            .unwrap();
        let queue = device.get_device_queue(family, 0);
        let mut ti = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let sem = device
            .create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut ti), None)
            .unwrap();
        let ctx = Context::from_raw(
            entry.clone(),
            instance.clone(),
            physical,
            device.clone(),
            queue,
            family,
        )
        .unwrap();
        assert!(ctx.timeline_semaphores());
        let buf = ctx.alloc(16).unwrap();
        // vkad's next submission (an upload) waits on the device for value 1, which the
        // application signals from the host a little later.
        ctx.wait_before_next_submission(TimelinePoint {
            semaphore: sem,
            value: 1,
        })
        .unwrap();
        let start = std::time::Instant::now();
        let signaller = {
            let device = device.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                device
                    .signal_semaphore(&vk::SemaphoreSignalInfo::default().semaphore(sem).value(1))
                    .unwrap();
            })
        };
        ctx.upload(&buf, 0, &[7u8; 16]).unwrap();
        assert!(
            start.elapsed() >= std::time::Duration::from_millis(250),
            "the upload did not wait for the semaphore"
        );
        signaller.join().unwrap();
        // vkad signals value 2 after its work; the application waits for it on the host.
        ctx.signal(
            &[TimelinePoint {
                semaphore: sem,
                value: 2,
            }],
            None,
        )
        .unwrap();
        let sems = [sem];
        let values = [2u64];
        device
            .wait_semaphores(
                &vk::SemaphoreWaitInfo::default()
                    .semaphores(&sems)
                    .values(&values),
                5_000_000_000,
            )
            .unwrap();
        assert_eq!(device.get_semaphore_counter_value(sem).unwrap(), 2);
        assert_eq!(ctx.download(&buf, 0, 16).unwrap(), vec![7u8; 16]);
        // Without the feature (as the application tells vkad): a typed refusal.
        let mut ctx = ctx;
        ctx.restrict_info(|i| i.timeline_semaphore = false);
        let point = TimelinePoint {
            semaphore: sem,
            value: 3,
        };
        match ctx.wait_before_next_submission(point) {
            Err(VkError::Unsupported { feature, .. }) => {
                assert!(feature.contains("timelineSemaphore"), "{feature}")
            }
            r => panic!("not refused: {r:?}"),
        }
        assert!(matches!(
            ctx.signal(&[point], None),
            Err(VkError::Unsupported { .. })
        ));
        drop((buf, ctx));
        device.queue_wait_idle(queue).unwrap();
        device.destroy_semaphore(sem, None);
        device.destroy_device(None);
        instance.destroy_instance(None);
    }
}
