-- Records are not supported.
-- ==
-- error: not supported

entry main (y: i32) : i32 =
  let r = {a = y, b = 2}
  in r.a + r.b
