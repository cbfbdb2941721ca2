-- Modules are not supported (valid Futhark, rejected by vkad).
-- ==
-- error: not supported

module m = { def x : i32 = 1 }

entry main (y: i32) : i32 = y + m.x
