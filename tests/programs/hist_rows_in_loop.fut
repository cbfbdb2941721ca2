-- A histogram of rows (`hist (map2 (+))`) inside a `while` loop: on Vulkan, with few points, the
-- loop runs in one thread, where the histogram of rows becomes one of scalars over the flattened
-- arrays (a flattened `replicate` of rows as the bins). This failed with "is an array, expected
-- a scalar" (rodinia/kmeans of futhark-benchmarks). Points [1,2], [2,4], [5,6] go to bins
-- 1, 0, 1 (floor of the first coordinate mod 2): bin 0 = [2,4], bin 1 = [1+5, 2+6] = [6,8];
-- with no iteration the result is the first two points.
-- ==
-- input { 2i64 [[1f32, 2f32], [2f32, 4f32], [5f32, 6f32]] 2 }
-- output { [[2f32, 4f32], [6f32, 8f32]] }
-- input { 2i64 [[1f32, 2f32], [2f32, 4f32], [5f32, 6f32]] 0 }
-- output { [[1f32, 2f32], [2f32, 4f32]] }
entry main [n] [d] (k: i64) (points: [n][d]f32) (iters: i32) =
  let (c, _) =
    loop (c, i) = (take k points, 0) while i < iters do
      let memb = map (\p -> i64.f32 p[0] % k) points
      let h = hist (map2 (+)) (replicate d 0) k memb points
      in (h, i + 1)
  in c
