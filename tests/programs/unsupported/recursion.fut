-- Recursion is not supported.
-- ==
-- error: not supported

def fact (n: i32) : i32 = if n <= 1 then 1 else n * fact (n - 1)

entry main (y: i32) : i32 = fact y
