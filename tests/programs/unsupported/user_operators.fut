-- User-defined operators are not supported.
-- ==
-- error: not supported

def (+^) (a: i32) (b: i32) : i32 = a + b + 1

entry main (y: i32) : i32 = y +^ y
