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
    /// copy and hash the whole module again to find it in the context's cache.
    pub fn pipeline(
        &self,
        ctx: &vkad_vk::Context,
        bindings: u32,
    ) -> Result<vkad_vk::Kernel, vkad_vk::VkError> {
        let mut made = self.pipelines.0.lock().unwrap_or_else(|p| p.into_inner());
        let id = ctx.id();
        if let Some((_, _, k)) = made.iter().find(|(c, b, _)| *c == id && *b == bindings) {
            return Ok(k.clone());
        }
        let k = ctx.kernel("vkad", &self.code.words, "main", bindings, 4)?;
        made.push((id, bindings, k.clone()));
        Ok(k)
    }
}

/// The pipelines made from a kernel's module, by context ([`vkad_vk::Context::id`]) and number
/// of bindings. A pipeline keeps its device alive, so holding one here is safe after its
/// context is gone; a context's ids are never reused.
#[derive(Default)]
pub struct Pipelines(std::sync::Mutex<Vec<(u64, u32, vkad_vk::Kernel)>>);

impl Clone for Pipelines {
    fn clone(&self) -> Pipelines {
        let made = self.0.lock().unwrap_or_else(|p| p.into_inner());
        Pipelines(std::sync::Mutex::new(made.clone()))
    }
}

impl std::fmt::Debug for Pipelines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|m| m.len()).unwrap_or(0);
        write!(f, "Pipelines({n})")
    }
}
