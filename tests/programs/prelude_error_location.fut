-- A run-time error inside a prelude function (here `map2`'s size check, from `zip`) is
-- reported at the user's call, not at a line of `<prelude>`; so are the statements of an
-- inlined prelude function in kernels' names, profiles and the AD report.
-- ==
-- input { [1, 2] [10, 20] } output { [11, 22] }
-- input { [1, 2] [1, 2, 3] }
-- error: prelude_error_location\.fut:10:6: .*shape mismatch
entry main (xs: []i32) (ys: []i32) : []i32 =
  let f = \x y -> x + y
  in map2 f xs ys
