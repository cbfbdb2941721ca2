-- Members of the `intrinsics` module other than its accumulators (Futhark's compiler-internal
-- functions) are not available.
-- ==
-- error: not supported

entry main (y: i32) : i32 = intrinsics.opaque y
