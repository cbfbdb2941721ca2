-- `match` is not supported, even on integers.
-- ==
-- error: not supported

entry main (y: i32) : i32 =
  match y
  case 0 -> 1
  case _ -> 2
