-- As in Futhark, every size of a size binding must be used in the pattern's type.
-- ==
-- error: size `n` unused in pattern

entry main (xs: []i32) : i64 =
  let [n] ys = xs
  in n + length ys
