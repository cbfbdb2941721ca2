//! Without a driver: every entry point reports NoDevice with the install hint. (Its own test
//! binary, with one test, because it changes the environment the Vulkan loader reads.)

use vkad_vk::{list_devices, Context, ContextOptions, PipelineCacheMode, VkError};

#[test]
fn no_driver_is_no_device_with_a_hint() {
    // The loader reads these when an instance is created; nothing else runs in this process.
    std::env::set_var("VK_ICD_FILENAMES", "/nonexistent/vkad-no-driver.json");
    std::env::set_var("VK_DRIVER_FILES", "/nonexistent/vkad-no-driver.json");
    match list_devices() {
        Err(VkError::NoDevice(m)) => {
            assert!(
                m.contains("apt install mesa-vulkan-drivers libvulkan1"),
                "{m}"
            );
            assert!(m.contains("-b interp"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    for validation in [false, true] {
        match Context::new(&ContextOptions {
            device: None,
            validation,
            pipeline_cache: PipelineCacheMode::Off,
        }) {
            Err(VkError::NoDevice(m)) => assert!(m.contains("mesa-vulkan-drivers"), "{m}"),
            other => panic!("validation {validation}: {other:?}"),
        }
    }
}
