-- `map (\row -> reduce op ne row) xss` (or `scan`) over rows too few for a thread each: the Vulkan
-- backend reduces each row with a team of threads, a whole workgroup or, for a few long rows,
-- several workgroups and a second pass over their partials
-- (spirv-backend/src/codegen/segmented.rs) instead of one thread per row. Each
-- entry compares with the rows folded by a sequential loop, for a commutative operator (read
-- at stride), a non-commutative one (affine maps composed in order, exact in wrapping i32),
-- f32 sums and zipped rows, at row counts on both sides of the switch to the plain map kernel.

def rows (m: i64) (k: i64) : [m][k]i64 =
  map (\r -> map (\j -> (r * 7919 + j * 104729) % 1000 - 500) (iota k)) (iota m)

-- ==
-- entry: sums mins affine floats scans
-- input { 1i64 1024i64 } output { true }
-- input { 3i64 5000i64 } output { true }
-- input { 63i64 1025i64 } output { true }
-- input { 64i64 1024i64 } output { true }
-- input { 2i64 60000i64 } output { true }
-- input { 5i64 7i64 } output { true }
-- input { 40i64 37i64 } output { true }
-- input { 1i64 60001i64 } output { true }
entry sums (m: i64) (k: i64) : bool =
  let xss = rows m k
  let s = map (\row -> reduce (+) 0 row) xss
  let t = map (\row -> loop acc = 0 for x in row do acc + x) xss
  in and (map2 (==) s t)

entry mins (m: i64) (k: i64) : bool =
  let xss = rows m k
  let s = map (\row -> reduce i64.min i64.highest row) xss
  let t = map (\row -> loop acc = i64.highest for x in row do i64.min acc x) xss
  in and (map2 (==) s t)

def compose (a: i32, b: i32) (c: i32, d: i32) : (i32, i32) = (a * c, b * c + d)

entry affine (m: i64) (k: i64) : bool =
  let xss = rows m k
  let as = map (map (\x -> i32.i64 (x % 7) + 1)) xss
  let bs = map (map (\x -> i32.i64 x)) xss
  let s = map2 (\a b -> reduce compose (1, 0) (zip a b)) as bs
  let t = map2 (\a b -> loop acc = (1, 0) for i < k do compose acc (a[i], b[i])) as bs
  in and (map2 (\(p, q) (u, v) -> p == u && q == v) s t)

entry floats (m: i64) (k: i64) : bool =
  let xss = map (map (\x -> f32.i64 x / 256)) (rows m k)
  let s = map (\row -> reduce (+) 0 row) xss
  let t = map (\row -> loop acc = 0 for x in row do acc + x) xss
  in and (map2 (\x y -> f32.abs (x - y) <= 1e-3 * (1 + f32.abs y)) s t)

entry scans (m: i64) (k: i64) : bool =
  let xss = rows m k
  let s = map (\row -> scan (+) 0 row) xss
  -- An inclusive prefix sum: s[0] = row[0] and s[i] - s[i-1] = row[i].
  in and (map2 (\r p -> and (map (\i -> p[i] == r[i] + (if i == 0 then 0 else p[i - 1])) (iota k)))
               xss s)
