-- `local` declarations are not supported.
-- ==
-- error: not supported

local def helper (x: i32) : i32 = x + 1

entry main (y: i32) : i32 = helper y
