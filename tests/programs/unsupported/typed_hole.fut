-- Typed holes are not supported.
-- ==
-- error: not supported

entry main (y: i32) : i32 = y + ???
