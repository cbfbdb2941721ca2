-- The `intrinsics` module (Futhark's compiler-internal functions) is not available.
-- ==
-- error: not supported

entry main (y: i32) : i32 = intrinsics.opaque y
