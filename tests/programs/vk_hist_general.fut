-- reduce_by_index with operators that mix the components of a tuple (argmax pairs): the Vulkan
-- backend runs these by sorting (core/src/passes/hist_sort.rs). Each entry compares the
-- histogram with a per-bin reduction computed another way, on pseudo-random bins that include
-- out-of-range indices on both sides, at sizes around workgroups and radix rounds.

def amax (a: f64, i: i64) (b: f64, j: i64) : (f64, i64) =
  if a > b || (a == b && i < j) then (a, i) else (b, j)

def bins (n: i64) (m: i64) : [n]i64 = map (\i -> (i * 7919 + 13) % (m + 3) - 1) (iota n)
def vals (n: i64) : [n]f64 = map (\i -> f64.i64 ((i * 104729) % 1009)) (iota n)

-- ==
-- entry: argmax_agrees
-- input { 0i64 5i64 } output { true }
-- input { 1i64 1i64 } output { true }
-- input { 255i64 17i64 } output { true }
-- input { 256i64 17i64 } output { true }
-- input { 257i64 300i64 } output { true }
-- input { 2049i64 1i64 } output { true }
-- input { 20000i64 300i64 } output { true }
-- input { 50000i64 64i64 } output { true }
entry argmax_agrees (n: i64) (m: i64) : bool =
  let is = bins n m
  let vs = vals n
  let (hv, hi) = unzip (reduce_by_index (replicate m (-f64.inf, -1)) amax (-f64.inf, -1) is (zip vs (iota n)))
  let (rv, ri) =
    unzip (map (\b -> reduce amax (-f64.inf, -1)
                         (map3 (\i v j -> if i == b then (v, j) else (-f64.inf, -1)) is vs (iota n)))
               (iota m))
  in and (map2 (==) hv rv) && and (map2 (==) hi ri)

-- The worked case of ad-rules.md (§7, hist max) as values.
-- ==
-- entry: argmax_small
-- input { [8.0, 0.0, 1.0, 7.0] [0i64, 1i64, 2i64, 1i64, 1i64, 0i64, -1i64, 4i64] [1.0, 2.0, 6.0, 5.0, 5.0, 8.0, 7.0, 9.0] }
-- output { [8.0, 5.0, 6.0, 7.0] [-1i64, 3i64, 2i64, -1i64] }
entry argmax_small [n] (h: [4]f64) (is: [n]i64) (vs: [n]f64) : ([4]f64, [4]i64) =
  unzip (reduce_by_index (zip h (replicate 4 (-1))) amax (-f64.inf, -1) is (zip vs (iota n)))

-- Array-valued bins with a vectorised operator: a histogram of scalars over the flattened
-- arrays on the Vulkan backend (core/src/passes/hist_flatten.rs).
-- ==
-- entry: vec_add
-- input { [[1.0, 2.0], [3.0, 4.0]] [0i64, 1i64, 1i64, 5i64, -1i64] [[1.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]] }
-- output { [[2.0, 3.0], [9.0, 12.0]] }
entry vec_add [m][k][n] (dst: [m][k]f64) (is: [n]i64) (vs: [n][k]f64) : [m][k]f64 =
  reduce_by_index (copy dst) (map2 (+)) (replicate k 0) is vs

-- Its gradient: every bin's adjoint flows to the elements in range.
-- ==
-- entry: vec_add_grad
-- input { [[1.0, 2.0], [3.0, 4.0]] [0i64, 1i64, 1i64, 5i64, -1i64] [[1.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]] }
-- output { [[1.0, 2.0], [3.0, 4.0]] [[1.0, 2.0], [3.0, 4.0], [3.0, 4.0], [0.0, 0.0], [0.0, 0.0]] }
entry vec_add_grad [m][k][n] (dst: [m][k]f64) (is: [n]i64) (vs: [n][k]f64) =
  vjp (\(d, v) -> reduce_by_index (copy d) (map2 (+)) (replicate k 0) is v) (dst, vs) [[1.0, 2.0], [3.0, 4.0]]

-- The gradient of a histogram with a generic operator x⊙y = x+y+xy = (1+x)(1+y)-1 groups the
-- elements by bin with `sort_by_key` (core/src/ad/rev/hist.rs), which the Vulkan backend runs
-- as its radix sort kernels (spirv-backend/src/codegen/sort.rs; several 4-bit passes and tiles at the
-- larger sizes). Checked against the closed form: ∂y_b/∂h_b = (1+y_b)/(1+h_b) and
-- ∂y_b/∂a_i = (1+y_b)/(1+a_i) for the elements of bin b (nothing for out-of-range ones).
def gop (x: f64) (y: f64) : f64 = x + y + x * y
def small (n: i64) : [n]f64 = map (\i -> f64.i64 ((i * 104729) % 201 - 100) / 1000) (iota n)
def close (x: f64) (y: f64) : bool = f64.abs (x - y) <= 1e-9 * (1 + f64.abs x)

-- ==
-- entry: generic_grad_agrees
-- input { 1i64 1i64 } output { true }
-- input { 4097i64 3i64 } output { true }
-- input { 20000i64 300i64 } output { true }
-- input { 70000i64 5000i64 } output { true }
entry generic_grad_agrees (n: i64) (m: i64) : bool =
  let is = bins n m
  let as = small n
  let h = small m
  let yb = map (\b -> f64.i64 (b % 7) + 1) (iota m)
  let (hb, ab) = vjp (\(h, as) -> reduce_by_index (copy h) gop 0 is as) (h, as) yb
  let y = reduce_by_index (copy h) gop 0 is as
  let ok_h = map4 (\g y' h' s -> close g (s * (1 + y') / (1 + h'))) hb y h yb
  let ok_a = map3 (\g i a -> if i >= 0 && i < m then close g (yb[i] * (1 + y[i]) / (1 + a))
                             else g == 0) ab is as
  in and ok_h && and ok_a

-- The same gradient per row of a matrix: the sort runs inside the map's kernel (as a loop of
-- SOACs, core/src/passes/sort_lower.rs); compared with the rows' gradients taken one by one.
-- ==
-- entry: generic_grad_mapped
-- input { 3i64 300i64 40i64 } output { true }
entry generic_grad_mapped (r: i64) (n: i64) (m: i64) : bool =
  let rows = map (\k -> map (\x -> x * f64.i64 (k + 1) / 4) (small n)) (iota r)
  let g (as: [n]f64) : [n]f64 =
    vjp (\as -> reduce_by_index (replicate m 0) gop 0 (bins n m) as) as (replicate m 1)
  let mapped = map g rows
  let one_by_one = loop acc = replicate r (replicate n 0) for k < r do acc with [k] = g rows[k]
  in and (map2 (\a b -> and (map2 close a b)) mapped one_by_one)
