-- zip, zip3 ... zip5 and unzip, unzip3 ... unzip5.

-- ==
-- entry: zip_unzip
-- input { [1, 2] [3.0, 4.0] } output { [3.0, 4.0] [1, 2] }
entry zip_unzip (xs: []i32) (ys: []f64) : ([]f64, []i32) =
  let (a, b) = unzip (zip xs ys)
  in (b, a)

-- ==
-- entry: zip3_5
-- input { [1, 2] [3, 4] [5, 6] [7, 8] [9, 10] } output { [14, 18] [16, 20] [25, 30] }
entry zip3_5 (a: []i32) (b: []i32) (c: []i32) (d: []i32) (e: []i32) : ([]i32, []i32, []i32) =
  ( map (\(x, y, z) -> x + y + z * 2) (zip3 a b c)
  , map (\(x, y, z, w) -> x + y + z + w) (zip4 a b c d)
  , map (\(x, y, z, w, v) -> x + y + z + w + v) (zip5 a b c d e) )

-- ==
-- entry: unzip3_5
-- input { [1, 2] } output { [1, 2] [2, 3] [3, 4] [1, 2] [2, 3] [3, 4] [4, 5] [1, 2] [2, 3] [3, 4] [4, 5] [5, 6] }
entry unzip3_5 (xs: []i32) =
  let (a, b, c) = unzip3 (map (\x -> (x, x + 1, x + 2)) xs)
  let (d, e, f, g) = unzip4 (map (\x -> (x, x + 1, x + 2, x + 3)) xs)
  let (h, i, j, k, l) = unzip5 (map (\x -> (x, x + 1, x + 2, x + 3, x + 4)) xs)
  in (a, b, c, d, e, f, g, h, i, j, k, l)

-- Zipped arrays of different element types, mapped and reduced.
-- ==
-- entry: mixed
-- input { [true, false, true] [1.5f32, 2.5f32, 3.5f32] } output { 5.0f32 }
entry mixed (bs: []bool) (xs: []f32) : f32 =
  reduce (+) 0 (map (\(b, x) -> if b then x else 0) (zip bs xs))
