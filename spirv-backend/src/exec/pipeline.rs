//! Generated kernels as the executor keeps them: the module and argument layout that
//! [`crate::codegen`] made ([`KernelCode`]), with the pipelines made from the module so far.

use crate::codegen::KernelCode;

/// A generated kernel and the pipelines made from it (the executor's caches hold these).
#[derive(Clone, Debug)]
pub(crate) struct Kernel {
    pub code: KernelCode,
    /// The pipelines made from `code.words` so far.
    pipelines: Pipelines,
}

impl From<KernelCode> for Kernel {
    fn from(code: KernelCode) -> Kernel {
        Kernel {
            code,
            pipelines: Pipelines::default(),
        }
    }
}

impl std::ops::Deref for Kernel {
    type Target = KernelCode;
    fn deref(&self) -> &KernelCode {
        &self.code
    }
}

impl Kernel {
    /// The pipeline of this kernel on `ctx` with `bindings` descriptor bindings: made by
    /// [`vkad_vk::Context::kernel`] on first use, then found here, so that a launch does not
    /// copy and hash the whole module again to find it in the context's cache. A failure of
    /// [`Kernel::make_pipeline`] is returned here (once; a later call tries again).
    pub fn pipeline(
        &self,
        ctx: &vkad_vk::Context,
        bindings: u32,
    ) -> Result<vkad_vk::Kernel, vkad_vk::VkError> {
        let mut made = self.pipelines.0.lock().unwrap_or_else(|p| p.into_inner());
        let i = self.made_or_make(&mut made, ctx, bindings);
        if let Made::Ready(k) = &made[i].2 {
            return Ok(k.clone());
        }
        match made.swap_remove(i).2 {
            Made::Failed(e) => Err(e),
            Made::Ready(k) => Ok(k),
        }
    }

    /// Makes the pipeline [`Kernel::pipeline`] returns, unless it is made already (or failed:
    /// the failure is kept for [`Kernel::pipeline`] to report). For threads that make the
    /// pipelines of several kernels at once.
    pub fn make_pipeline(&self, ctx: &vkad_vk::Context, bindings: u32) {
        let mut made = self.pipelines.0.lock().unwrap_or_else(|p| p.into_inner());
        self.made_or_make(&mut made, ctx, bindings);
    }

    /// The position in `made` (this kernel's locked pipelines) of the pipeline on `ctx` with
    /// `bindings` bindings, or of why it could not be made: made now if it is not there.
    fn made_or_make(
        &self,
        made: &mut Vec<(u64, u32, Made)>,
        ctx: &vkad_vk::Context,
        bindings: u32,
    ) -> usize {
        let id = ctx.id();
        if let Some(i) = made.iter().position(|(c, b, _)| *c == id && *b == bindings) {
            return i;
        }
        let k = match ctx.kernel("vkad", &self.code.words, "main", bindings, 4) {
            Ok(k) => Made::Ready(k),
            Err(e) => Made::Failed(e),
        };
        made.push((id, bindings, k));
        made.len() - 1
    }

    /// Whether [`Kernel::pipeline`] has the pipeline made already.
    pub fn has_pipeline(&self, ctx: &vkad_vk::Context, bindings: u32) -> bool {
        let made = self.pipelines.0.lock().unwrap_or_else(|p| p.into_inner());
        let id = ctx.id();
        made.iter()
            .any(|(c, b, k)| *c == id && *b == bindings && matches!(k, Made::Ready(_)))
    }
}

/// A pipeline made from a kernel's module, or why it could not be.
enum Made {
    Ready(vkad_vk::Kernel),
    Failed(vkad_vk::VkError),
}

/// The pipelines made from a kernel's module, by context ([`vkad_vk::Context::id`]) and number
/// of bindings. A pipeline keeps its device alive, so holding one here is safe after its
/// context is gone; a context's ids are never reused.
#[derive(Default)]
pub struct Pipelines(std::sync::Mutex<Vec<(u64, u32, Made)>>);

impl Clone for Pipelines {
    /// The pipelines made (failures are not copied: the copy tries again).
    fn clone(&self) -> Pipelines {
        let made = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let ready = made
            .iter()
            .filter_map(|(c, b, k)| match k {
                Made::Ready(k) => Some((*c, *b, Made::Ready(k.clone()))),
                Made::Failed(_) => None,
            })
            .collect();
        Pipelines(std::sync::Mutex::new(ready))
    }
}

impl std::fmt::Debug for Pipelines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|m| m.len()).unwrap_or(0);
        write!(f, "Pipelines({n})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vkad_vk::{Context, ContextOptions, PipelineCacheMode};

    fn kernel(words: Vec<u32>) -> Kernel {
        Kernel::from(KernelCode {
            words,
            args: Vec::new(),
            binds: Vec::new(),
            errors: Vec::new(),
            uses_f64: false,
        })
    }

    /// What a thread of a batch could not make is reported when the launch asks for its
    /// pipeline, and is not kept as made.
    #[test]
    fn a_pipeline_that_failed_on_another_thread_is_reported_by_its_launch() {
        let ctx = Context::new(&ContextOptions {
            device: None,
            validation: false,
            pipeline_cache: PipelineCacheMode::Off,
        })
        .expect("a Vulkan device (install mesa-vulkan-drivers)");
        let bad = kernel(vec![0x0723_0203, 0, 0, 0, 0, 1]);
        std::thread::scope(|s| {
            s.spawn(|| bad.make_pipeline(&ctx, 2));
        });
        assert!(!bad.has_pipeline(&ctx, 2));
        let e = bad.pipeline(&ctx, 2).unwrap_err();
        assert!(e.to_string().contains("invalid SPIR-V module"), "{e}");
        // Asked again, it is made again (and fails again).
        assert!(bad.pipeline(&ctx, 2).is_err());
        assert!(!bad.has_pipeline(&ctx, 2));
        assert_eq!(format!("{:?}", bad.pipelines.clone()), "Pipelines(0)");
    }
}
