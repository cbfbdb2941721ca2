-- Record types are not supported.
-- ==
-- error: not supported

def f (r: {x: i32, y: i32}) : i32 = r.x

entry main (y: i32) : i32 = y
