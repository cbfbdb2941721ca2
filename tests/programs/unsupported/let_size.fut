-- Size bindings in `let` are not supported.
-- ==
-- error: not supported

entry main (xs: []i32) : i64 =
  let [n] ys = xs
  in n
