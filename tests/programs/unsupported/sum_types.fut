-- Sum types and `match` are not supported.
-- ==
-- error: not supported

type opt = #none | #some i32

entry main (y: i32) : i32 =
  let o : opt = #some y
  in match o
     case #none -> 0
     case #some v -> v
