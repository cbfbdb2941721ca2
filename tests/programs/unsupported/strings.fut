-- String literals are not supported.
-- ==
-- error: not supported

entry main (y: i32) : i64 = length "hello" + i64.i32 y
