//! `Buffer::from_raw`: a wrapped buffer is usable by vkad and is not destroyed on drop.

mod common;

use vkad_vk::Buffer;

#[test]
fn a_borrowed_buffer_is_used_but_never_freed() {
    let ctx = common::context();
    let owned = ctx.alloc(16).unwrap();
    let data: Vec<u8> = (0u8..16).collect();
    ctx.upload(&owned, 0, &data).unwrap();
    assert!(!owned.is_borrowed());
    {
        // SAFETY: `owned` is a storage/transfer buffer of this context's device, 16 bytes long,
        // and outlives the wrapper.
        let wrapped = unsafe { Buffer::from_raw(&ctx, owned.raw(), 16) };
        assert!(wrapped.is_borrowed());
        assert_eq!(wrapped.size(), 16);
        assert_eq!(ctx.download(&wrapped, 0, 16).unwrap(), data);
        ctx.upload(&wrapped, 4, &[9, 9, 9, 9]).unwrap();
        assert!(ctx.download(&wrapped, 8, 16).is_err(), "range is checked");
    }
    // The wrapper is gone; the buffer is still alive (the validation layer would report a
    // destroyed buffer here) and holds what was written through the wrapper.
    let back = ctx.download(&owned, 0, 16).unwrap();
    assert_eq!(&back[4..8], &[9, 9, 9, 9]);
    assert_eq!(&back[8..], &data[8..]);
    assert!(ctx.take_validation_messages().is_empty());
}
