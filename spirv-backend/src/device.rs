//! Embedding: running an entry point on device-resident arguments, with device-resident
//! results, without a host round trip.
//!
//! A [`DeviceArray`] is a Vulkan buffer holding a row-major array in vkad's storage layout:
//! every element of at most 32 bits is one little-endian 32-bit word (`bool` as 0/1, 8/16-bit
//! integers sign- or zero-extended to 32 bits, `f16` stored as the `f32` of the same value),
//! `i64`/`u64`/`f64` one 64-bit word. Element `i` (row-major) is at byte `i * 4` (or `i * 8`).
//! [`storage_bytes`] gives the size of one element, [`DeviceArray::from_host`] and
//! [`DeviceArray::download`] convert.
//!
//! An application wraps its own buffer with [`vkad_vk::Buffer::from_raw`] (which never frees
//! it) on a context made by [`vkad_vk::Context::from_raw`], passes it as [`Arg::Device`] to
//! [`crate::run_entry_device`], and gets array results as [`Out::Device`] buffers allocated by vkad on
//! the same device (use [`vkad_vk::Buffer::raw`] to bind them in the application's own
//! pipelines). A result may be an input buffer itself (an entry that returns its argument).
//! Inputs are never written while the caller holds another `Arc` to their buffer; when the
//! caller passes the only reference, vkad may update the buffer in place.

use std::sync::Arc;
use vkad_core::prim::PrimType;
use vkad_core::value::{ArrayValue, Value};
use vkad_vk::{Buffer, Context};

/// An array in a device buffer (see the module docs for the layout).
#[derive(Clone, Debug)]
pub struct DeviceArray {
    /// The buffer; its first `len() * storage_bytes(elem)` bytes hold the array.
    pub buffer: Arc<Buffer>,
    /// The element type.
    pub elem: PrimType,
    /// The shape (outermost first).
    pub shape: Vec<usize>,
}

impl DeviceArray {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Uploads a host array into a new buffer of `ctx`.
    pub fn from_host(ctx: &Context, a: &ArrayValue) -> crate::error::Result<DeviceArray> {
        let bytes = crate::exec::array_to_bytes(a);
        let buf = ctx.alloc_init((bytes.len() as u64).max(8), &bytes)?;
        Ok(DeviceArray {
            buffer: Arc::new(buf),
            elem: a.elem_type(),
            shape: a.shape.clone(),
        })
    }

    /// Copies the array to the host.
    pub fn download(&self, ctx: &Context) -> crate::error::Result<ArrayValue> {
        crate::exec::read_array(ctx, &self.buffer, 0, self.elem, self.shape.clone())
    }
}

/// Bytes per element in device storage: 4, or 8 for 64-bit types.
pub fn storage_bytes(t: PrimType) -> usize {
    crate::exec::storage_bytes(t)
}

/// An argument of [`crate::run_entry_device`].
#[derive(Clone, Debug)]
pub enum Arg {
    /// A host value (arrays are uploaded).
    Host(Value),
    /// An array already on the device.
    Device(DeviceArray),
}

/// A result of [`crate::run_entry_device`].
#[derive(Clone, Debug)]
pub enum Out {
    /// A scalar (or, from [`crate::run_entry`], a downloaded array).
    Host(Value),
    /// An array left on the device.
    Device(DeviceArray),
}

impl Out {
    /// The result as a host value (downloading a device array).
    pub fn to_host(&self, ctx: &Context) -> crate::error::Result<Value> {
        match self {
            Out::Host(v) => Ok(v.clone()),
            Out::Device(d) => Ok(Value::Array(d.download(ctx)?)),
        }
    }
}
