-- `open` and `import` are not supported.
-- ==
-- error: not supported

open import "other"

entry main (y: i32) : i32 = y
