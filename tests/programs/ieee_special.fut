-- IEEE special values (NaN, ±inf, ±0, denormals) through arithmetic, comparisons, min/max,
-- rounding, conversions, reductions and AD rules, compared bit for bit with the expected values
-- (the reference interpreter's, which for + - * / are checked against IEEE 754 double arithmetic).
--
-- Every operation runs inside a `map` or a `reduce` (so on the device with `-b vulkan`). An
-- entry takes its inputs and the expected results, and returns the positions where a result
-- differs from the expected one in any bit (any NaN matches any NaN, since IEEE does not fix the
-- sign or payload of a NaN result): all lists are empty when every result is right. The cases
-- Futhark leaves open are not checked: the sign of a zero from `min`/`max` of two zeros.
--
-- The f32 datasets are there twice: without subnormal numbers, and with them tagged
-- `needs_denorm_f32`, which `vkad test` skips on a device that flushes f32 subnormals (NVIDIA's
-- driver, which lacks `shaderDenormPreserveFloat32`; lavapipe keeps them).
--
-- Drivers lose these semantics easily: without float controls (`SignedZeroInfNanPreserve`)
-- they may assume no NaN, infinity or -0.0, and lavapipe folds `x * 0.0` to `0.0`, `x + 0.0` to
-- `x`, `select(c, -1.0, 0.0)` to `-b2f(c)` and its f64 `trunc` drops the sign of zero.

-- Whether two floats are the same bits, any NaN matching any NaN.
def same (a: f64) (b: f64) : bool =
  (f64.isnan a && f64.isnan b) || f64.to_bits a == f64.to_bits b

def same32 (a: f32) (b: f32) : bool =
  (f32.isnan a && f32.isnan b) || f32.to_bits a == f32.to_bits b

-- The positions where `got` and `want` differ.
def diff [n] (got: [n]f64) (want: []f64) : []i64 =
  let want = want :> [n]f64
  in filter (\i -> !(same got[i] want[i])) (iota n)

def diff32 [n] (got: [n]f32) (want: []f32) : []i64 =
  let want = want :> [n]f32
  in filter (\i -> !(same32 got[i] want[i])) (iota n)

def diff_int [n] (got: [n]i32) (want: []i32) : []i64 =
  let want = want :> [n]i32
  in filter (\i -> got[i] != want[i]) (iota n)

-- Every pair (x, y) of `vs`, x major.
def pairs [n] 't (vs: [n]t) : ([]t, []t) =
  (flatten (map (\x -> replicate n x) vs), flatten (replicate n vs))

-- + - * / % ** on all pairs of 0, -0, 1, -1.5, inf, -inf, nan and the smallest denormal.
-- ==
-- entry: arith_f64
-- input { [0.0, -0.0, 1.0, -1.5, f64.inf, -f64.inf, f64.nan, 5e-324]
--   [0.0, 0.0, 1.0, -1.5, f64.inf, -f64.inf, f64.nan, 5.0e-324, 0.0, -0.0, 1.0, -1.5, f64.inf,
--     -f64.inf, f64.nan, 5.0e-324, 1.0, 1.0, 2.0, -0.5, f64.inf, -f64.inf, f64.nan, 1.0, -1.5,
--     -1.5, -0.5, -3.0, f64.inf, -f64.inf, f64.nan, -1.5, f64.inf, f64.inf, f64.inf, f64.inf,
--     f64.inf, f64.nan, f64.nan, f64.inf, -f64.inf, -f64.inf, -f64.inf, -f64.inf, f64.nan,
--     -f64.inf, f64.nan, -f64.inf, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan,
--     f64.nan, 5.0e-324, 5.0e-324, 1.0, -1.5, f64.inf, -f64.inf, f64.nan, 1.0e-323]
--   [0.0, 0.0, -1.0, 1.5, -f64.inf, f64.inf, f64.nan, -5.0e-324, -0.0, 0.0, -1.0, 1.5, -f64.inf,
--     f64.inf, f64.nan, -5.0e-324, 1.0, 1.0, 0.0, 2.5, -f64.inf, f64.inf, f64.nan, 1.0, -1.5,
--     -1.5, -2.5, 0.0, -f64.inf, f64.inf, f64.nan, -1.5, f64.inf, f64.inf, f64.inf, f64.inf,
--     f64.nan, f64.inf, f64.nan, f64.inf, -f64.inf, -f64.inf, -f64.inf, -f64.inf, -f64.inf,
--     f64.nan, f64.nan, -f64.inf, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan,
--     f64.nan, 5.0e-324, 5.0e-324, -1.0, 1.5, -f64.inf, f64.inf, f64.nan, 0.0]
--   [0.0, -0.0, 0.0, -0.0, f64.nan, f64.nan, f64.nan, 0.0, -0.0, 0.0, -0.0, 0.0, f64.nan, f64.nan,
--     f64.nan, -0.0, 0.0, -0.0, 1.0, -1.5, f64.inf, -f64.inf, f64.nan, 5.0e-324, -0.0, 0.0, -1.5,
--     2.25, -f64.inf, f64.inf, f64.nan, -1.0e-323, f64.nan, f64.nan, f64.inf, -f64.inf, f64.inf,
--     -f64.inf, f64.nan, f64.inf, f64.nan, f64.nan, -f64.inf, f64.inf, -f64.inf, f64.inf, f64.nan,
--     -f64.inf, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, 0.0, -0.0,
--     5.0e-324, -1.0e-323, f64.inf, -f64.inf, f64.nan, 0.0]
--   [f64.nan, f64.nan, 0.0, -0.0, 0.0, -0.0, f64.nan, 0.0, f64.nan, f64.nan, -0.0, 0.0, -0.0, 0.0,
--     f64.nan, -0.0, f64.inf, -f64.inf, 1.0, -0.6666666666666666, 0.0, -0.0, f64.nan, f64.inf,
--     -f64.inf, f64.inf, -1.5, 1.0, -0.0, 0.0, f64.nan, -f64.inf, f64.inf, -f64.inf, f64.inf,
--     -f64.inf, f64.nan, f64.nan, f64.nan, f64.inf, -f64.inf, f64.inf, -f64.inf, f64.inf, f64.nan,
--     f64.nan, f64.nan, -f64.inf, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan,
--     f64.nan, f64.inf, -f64.inf, 5.0e-324, -5.0e-324, 0.0, -0.0, f64.nan, 1.0]
--   [f64.nan, f64.nan, 0.0, 0.0, f64.nan, f64.nan, f64.nan, 0.0, f64.nan, f64.nan, 0.0, 0.0,
--     f64.nan, f64.nan, f64.nan, 0.0, f64.nan, f64.nan, 0.0, -0.5, f64.nan, f64.nan, f64.nan,
--     -f64.inf, f64.nan, f64.nan, 0.5, 0.0, f64.nan, f64.nan, f64.nan, f64.inf, f64.nan, f64.nan,
--     f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan,
--     f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan, f64.nan,
--     f64.nan, f64.nan, f64.nan, f64.nan, 5.0e-324, -1.5, f64.nan, f64.nan, f64.nan, 0.0]
--   [1.0, 1.0, 0.0, f64.inf, 0.0, f64.inf, f64.nan, 0.0, 1.0, 1.0, -0.0, f64.inf, 0.0, f64.inf,
--     f64.nan, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.5, f64.nan, f64.inf, 0.0,
--     f64.nan, f64.nan, 1.0, 1.0, f64.inf, 0.0, f64.inf, 0.0, f64.nan, f64.inf, 1.0, 1.0,
--     -f64.inf, 0.0, f64.inf, 0.0, f64.nan, f64.inf, 1.0, 1.0, f64.nan, f64.nan, f64.nan, f64.nan,
--     f64.nan, f64.nan, 1.0, 1.0, 5.0e-324, f64.inf, 0.0, f64.inf, f64.nan, 1.0] }
-- output { empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) }
entry arith_f64 (vs: []f64) (add: []f64) (sub: []f64) (mul: []f64) (div: []f64) (rem: []f64)
                (pow: []f64) =
  let (xs, ys) = pairs vs
  in ( diff (map2 (+) xs ys) add, diff (map2 (-) xs ys) sub, diff (map2 (*) xs ys) mul
     , diff (map2 (/) xs ys) div, diff (map2 (%) xs ys) rem, diff (map2 (**) xs ys) pow )

-- + * / ** in f32, the smallest f32 denormal included. `**` is checked where C99 defines the
-- result exactly (a zero, infinite or NaN operand, or a base of 1): elsewhere f32 powers come from
-- the device's `pow`, whose precision Vulkan leaves to the implementation.
-- ==
-- entry: arith_f32
-- input { [0.0f32, -0.0f32, 1.0f32, -1.5f32, f32.inf, -f32.inf, f32.nan]
--   [0.0f32, 0.0f32, 1.0f32, -1.5f32, f32.inf, -f32.inf, f32.nan, 0.0f32, -0.0f32, 1.0f32, -1.5f32,
--     f32.inf, -f32.inf, f32.nan, 1.0f32, 1.0f32, 2.0f32, -0.5f32, f32.inf, -f32.inf, f32.nan,
--     -1.5f32, -1.5f32, -0.5f32, -3.0f32, f32.inf, -f32.inf, f32.nan, f32.inf, f32.inf, f32.inf,
--     f32.inf, f32.inf, f32.nan, f32.nan, -f32.inf, -f32.inf, -f32.inf, -f32.inf, f32.nan,
--     -f32.inf, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan]
--   [0.0f32, -0.0f32, 0.0f32, -0.0f32, f32.nan, f32.nan, f32.nan, -0.0f32, 0.0f32, -0.0f32, 0.0f32,
--     f32.nan, f32.nan, f32.nan, 0.0f32, -0.0f32, 1.0f32, -1.5f32, f32.inf, -f32.inf, f32.nan,
--     -0.0f32, 0.0f32, -1.5f32, 2.25f32, -f32.inf, f32.inf, f32.nan, f32.nan, f32.nan, f32.inf,
--     -f32.inf, f32.inf, -f32.inf, f32.nan, f32.nan, f32.nan, -f32.inf, f32.inf, -f32.inf, f32.inf,
--     f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan]
--   [f32.nan, f32.nan, 0.0f32, -0.0f32, 0.0f32, -0.0f32, f32.nan, f32.nan, f32.nan, -0.0f32,
--     0.0f32, -0.0f32, 0.0f32, f32.nan, f32.inf, -f32.inf, 1.0f32, -0.6666667f32, 0.0f32, -0.0f32,
--     f32.nan, -f32.inf, f32.inf, -1.5f32, 1.0f32, -0.0f32, 0.0f32, f32.nan, f32.inf, -f32.inf,
--     f32.inf, -f32.inf, f32.nan, f32.nan, f32.nan, -f32.inf, f32.inf, -f32.inf, f32.inf, f32.nan,
--     f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan]
--   [1.0f32, 1.0f32, 0.0f32, f32.inf, 0.0f32, f32.inf, f32.nan, 1.0f32, 1.0f32, -0.0f32, f32.inf,
--     0.0f32, f32.inf, f32.nan, 1.0f32, 1.0f32, 1.0f32, 1.0f32, 1.0f32, 1.0f32, 1.0f32, 1.0f32,
--     1.0f32, -1.5f32, f32.nan, f32.inf, 0.0f32, f32.nan, 1.0f32, 1.0f32, f32.inf, 0.0f32, f32.inf,
--     0.0f32, f32.nan, 1.0f32, 1.0f32, -f32.inf, 0.0f32, f32.inf, 0.0f32, f32.nan, 1.0f32, 1.0f32,
--     f32.nan, f32.nan, f32.nan, f32.nan, f32.nan] }
-- output { empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) }
-- needs_denorm_f32 input { [0.0f32, -0.0f32, 1.0f32, -1.5f32, f32.inf, -f32.inf, f32.nan, 1e-45f32]
--   [0.0f32, 0.0f32, 1.0f32, -1.5f32, f32.inf, -f32.inf, f32.nan, 1.0e-45f32, 0.0f32, -0.0f32,
--     1.0f32, -1.5f32, f32.inf, -f32.inf, f32.nan, 1.0e-45f32, 1.0f32, 1.0f32, 2.0f32, -0.5f32,
--     f32.inf, -f32.inf, f32.nan, 1.0f32, -1.5f32, -1.5f32, -0.5f32, -3.0f32, f32.inf, -f32.inf,
--     f32.nan, -1.5f32, f32.inf, f32.inf, f32.inf, f32.inf, f32.inf, f32.nan, f32.nan, f32.inf,
--     -f32.inf, -f32.inf, -f32.inf, -f32.inf, f32.nan, -f32.inf, f32.nan, -f32.inf, f32.nan,
--     f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, 1.0e-45f32, 1.0e-45f32,
--     1.0f32, -1.5f32, f32.inf, -f32.inf, f32.nan, 3.0e-45f32]
--   [0.0f32, -0.0f32, 0.0f32, -0.0f32, f32.nan, f32.nan, f32.nan, 0.0f32, -0.0f32, 0.0f32,
--     -0.0f32, 0.0f32, f32.nan, f32.nan, f32.nan, -0.0f32, 0.0f32, -0.0f32, 1.0f32, -1.5f32,
--     f32.inf, -f32.inf, f32.nan, 1.0e-45f32, -0.0f32, 0.0f32, -1.5f32, 2.25f32, -f32.inf,
--     f32.inf, f32.nan, -3.0e-45f32, f32.nan, f32.nan, f32.inf, -f32.inf, f32.inf, -f32.inf,
--     f32.nan, f32.inf, f32.nan, f32.nan, -f32.inf, f32.inf, -f32.inf, f32.inf, f32.nan, -f32.inf,
--     f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, 0.0f32, -0.0f32,
--     1.0e-45f32, -3.0e-45f32, f32.inf, -f32.inf, f32.nan, 0.0f32]
--   [f32.nan, f32.nan, 0.0f32, -0.0f32, 0.0f32, -0.0f32, f32.nan, 0.0f32, f32.nan, f32.nan,
--     -0.0f32, 0.0f32, -0.0f32, 0.0f32, f32.nan, -0.0f32, f32.inf, -f32.inf, 1.0f32,
--     -0.6666667f32, 0.0f32, -0.0f32, f32.nan, f32.inf, -f32.inf, f32.inf, -1.5f32, 1.0f32,
--     -0.0f32, 0.0f32, f32.nan, -f32.inf, f32.inf, -f32.inf, f32.inf, -f32.inf, f32.nan, f32.nan,
--     f32.nan, f32.inf, -f32.inf, f32.inf, -f32.inf, f32.inf, f32.nan, f32.nan, f32.nan, -f32.inf,
--     f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.nan, f32.inf, -f32.inf,
--     1.0e-45f32, -1.0e-45f32, 0.0f32, -0.0f32, f32.nan, 1.0f32]
--   [1.0f32, 1.0f32, 0.0f32, f32.inf, 0.0f32, f32.inf, f32.nan, 0.0f32, 1.0f32, 1.0f32, -0.0f32,
--     f32.inf, 0.0f32, f32.inf, f32.nan, 0.0f32, 1.0f32, 1.0f32, 1.0f32, 1.0f32, 1.0f32, 1.0f32,
--     1.0f32, 1.0f32, 1.0f32, 1.0f32, -1.5f32, f32.nan, f32.inf, 0.0f32, f32.nan, f32.nan, 1.0f32,
--     1.0f32, f32.inf, 0.0f32, f32.inf, 0.0f32, f32.nan, f32.inf, 1.0f32, 1.0f32, -f32.inf,
--     0.0f32, f32.inf, 0.0f32, f32.nan, f32.inf, 1.0f32, 1.0f32, f32.nan, f32.nan, f32.nan,
--     f32.nan, f32.nan, f32.nan, 1.0f32, 1.0f32, 1.0e-45f32, f32.inf, 0.0f32, f32.inf, f32.nan,
--     1.0f32] }
-- output { empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) }
entry arith_f32 (vs: []f32) (add: []f32) (mul: []f32) (div: []f32) (pow: []f32) =
  let (xs, ys) = pairs vs
  let exact = map2 (\x y -> !(f32.isfinite x && x != 0 && x != 1 && f32.isfinite y && y != 0)) xs ys
  let pows = map3 (\e x y -> if e then x ** y else 0) exact xs ys
  let want = map2 (\e w -> if e then w else 0) exact pow
  in ( diff32 (map2 (+) xs ys) add, diff32 (map2 (*) xs ys) mul, diff32 (map2 (/) xs ys) div
     , diff32 pows want )

-- Comparisons as bit masks: < 1, <= 2, == 4, != 8, > 16, >= 32 (NaN is unordered: only !=).
-- ==
-- entry: compare
-- input { [0.0, -0.0, 1.0, -1.5, f64.inf, -f64.inf, f64.nan, 5e-324]
--   [38i32, 38i32, 11i32, 56i32, 11i32, 56i32, 8i32, 11i32, 38i32, 38i32, 11i32, 56i32, 11i32,
--     56i32, 8i32, 11i32, 56i32, 56i32, 38i32, 56i32, 11i32, 56i32, 8i32, 56i32, 11i32, 11i32,
--     11i32, 38i32, 11i32, 56i32, 8i32, 11i32, 56i32, 56i32, 56i32, 56i32, 38i32, 56i32, 8i32,
--     56i32, 11i32, 11i32, 11i32, 11i32, 11i32, 38i32, 8i32, 11i32, 8i32, 8i32, 8i32, 8i32, 8i32,
--     8i32, 8i32, 8i32, 56i32, 56i32, 11i32, 56i32, 11i32, 56i32, 8i32, 38i32] }
-- output { empty([0]i64) }
entry compare (vs: []f64) (want: []i32) =
  let (xs, ys) = pairs vs
  let got = map2 (\x y -> i32.bool (x < y) | 2 * i32.bool (x <= y) | 4 * i32.bool (x == y)
                          | 8 * i32.bool (x != y) | 16 * i32.bool (x > y) | 32 * i32.bool (x >= y))
                 xs ys
  in diff_int got want

-- min and max return the other operand when one is NaN; of two zeros, either may come back.
-- ==
-- entry: min_max
-- input { [0.0, -0.0, 1.0, -1.5, f64.inf, -f64.inf, f64.nan, 5e-324]
--   [0.0, 0.0, 0.0, -1.5, 0.0, -f64.inf, 0.0, 0.0, -0.0, -0.0, -0.0, -1.5, -0.0, -f64.inf, -0.0,
--     -0.0, 0.0, -0.0, 1.0, -1.5, 1.0, -f64.inf, 1.0, 5.0e-324, -1.5, -1.5, -1.5, -1.5, -1.5,
--     -f64.inf, -1.5, -1.5, 0.0, -0.0, 1.0, -1.5, f64.inf, -f64.inf, f64.inf, 5.0e-324, -f64.inf,
--     -f64.inf, -f64.inf, -f64.inf, -f64.inf, -f64.inf, -f64.inf, -f64.inf, 0.0, -0.0, 1.0, -1.5,
--     f64.inf, -f64.inf, f64.nan, 5.0e-324, 0.0, -0.0, 5.0e-324, -1.5, 5.0e-324, -f64.inf,
--     5.0e-324, 5.0e-324]
--   [0.0, 0.0, 1.0, 0.0, f64.inf, 0.0, 0.0, 5.0e-324, -0.0, -0.0, 1.0, -0.0, f64.inf, -0.0, -0.0,
--     5.0e-324, 1.0, 1.0, 1.0, 1.0, f64.inf, 1.0, 1.0, 1.0, 0.0, -0.0, 1.0, -1.5, f64.inf, -1.5,
--     -1.5, 5.0e-324, f64.inf, f64.inf, f64.inf, f64.inf, f64.inf, f64.inf, f64.inf, f64.inf, 0.0,
--     -0.0, 1.0, -1.5, f64.inf, -f64.inf, -f64.inf, 5.0e-324, 0.0, -0.0, 1.0, -1.5, f64.inf,
--     -f64.inf, f64.nan, 5.0e-324, 5.0e-324, 5.0e-324, 1.0, 5.0e-324, f64.inf, 5.0e-324, 5.0e-324,
--     5.0e-324] }
-- output { empty([0]i64) empty([0]i64) }
entry min_max (vs: []f64) (mins: []f64) (maxs: []f64) =
  let (xs, ys) = pairs vs
  let zeros = map2 (\x y -> x == 0 && y == 0) xs ys
  let check got want = map2 (\z g -> if z then (if g == 0 then 0 else 1) else g) zeros got
                       |> (\g -> diff g (map2 (\z w -> if z then 0 else w) zeros want))
  in (check (map2 f64.min xs ys) mins, check (map2 f64.max xs ys) maxs)

-- Unary operations, rounding and the cases of the issue (`x * 0.0`, `1 / (x * 0.0)`,
-- `1 / f64.sgn x`) on special, denormal, huge and ordinary values.
-- ==
-- entry: unary_f64
-- input { [0.0, -0.0, 1.0, -1.5, 2.5, -0.5, f64.inf, -f64.inf, f64.nan, 5e-324, -1e-310, 2.2250738585072014e-308, 1.7976931348623157e308, 1e300, 3.4028235677973366e38, 255.9, -1e10]
--   [-0.0, 0.0, -1.0, 1.5, -2.5, 0.5, -f64.inf, f64.inf, f64.nan, -5.0e-324, 1.0e-310,
--     -2.2250738585072014e-308, -1.7976931348623157e308, -1.0e300, -3.4028235677973366e38, -255.9,
--     1.0e10]
--   [0.0, 0.0, 1.0, 1.5, 2.5, 0.5, f64.inf, f64.inf, f64.nan, 5.0e-324, 1.0e-310,
--     2.2250738585072014e-308, 1.7976931348623157e308, 1.0e300, 3.4028235677973366e38, 255.9,
--     1.0e10]
--   [0.0, 0.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, f64.nan, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0]
--   [f64.inf, f64.inf, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, f64.nan, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0,
--     1.0, -1.0]
--   [0.0, -0.0, 1.0, f64.nan, 1.5811388300841898, f64.nan, f64.inf, f64.nan, f64.nan,
--     2.2227587494850775e-162, f64.nan, 1.4916681462400413e-154, 1.3407807929942596e154, 1.0e150,
--     1.8446743798831643e19, 15.9968746947646, f64.nan]
--   [0.0, -0.0, 1.0, -2.0, 2.0, -1.0, f64.inf, -f64.inf, f64.nan, 0.0, -1.0, 0.0,
--     1.7976931348623157e308, 1.0e300, 3.4028235677973366e38, 255.0, -1.0e10]
--   [0.0, -0.0, 1.0, -1.0, 3.0, -0.0, f64.inf, -f64.inf, f64.nan, 1.0, -0.0, 1.0,
--     1.7976931348623157e308, 1.0e300, 3.4028235677973366e38, 256.0, -1.0e10]
--   [0.0, -0.0, 1.0, -1.0, 2.0, -0.0, f64.inf, -f64.inf, f64.nan, 0.0, -0.0, 0.0,
--     1.7976931348623157e308, 1.0e300, 3.4028235677973366e38, 255.0, -1.0e10]
--   [0.0, -0.0, 1.0, -2.0, 2.0, -0.0, f64.inf, -f64.inf, f64.nan, 0.0, -0.0, 0.0,
--     1.7976931348623157e308, 1.0e300, 3.4028235677973366e38, 256.0, -1.0e10]
--   [0.0, -0.0, 0.0, -0.0, 0.0, -0.0, f64.nan, f64.nan, f64.nan, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0,
--     0.0, -0.0]
--   [0.0, 0.0, -1.0, 1.5, -2.5, 0.5, -f64.inf, f64.inf, f64.nan, -5.0e-324, 1.0e-310,
--     -2.2250738585072014e-308, -1.7976931348623157e308, -1.0e300, -3.4028235677973366e38, -255.9,
--     1.0e10]
--   [0.0, 0.0, 1.0, -1.5, 2.5, -0.5, f64.inf, -f64.inf, f64.nan, 5.0e-324, -1.0e-310,
--     2.2250738585072014e-308, 1.7976931348623157e308, 1.0e300, 3.4028235677973366e38, 255.9,
--     -1.0e10]
--   [f64.inf, -f64.inf, f64.inf, -f64.inf, f64.inf, -f64.inf, f64.nan, f64.nan, f64.nan, f64.inf,
--     -f64.inf, f64.inf, f64.inf, f64.inf, f64.inf, f64.inf, -f64.inf]
--   [0.0, -0.0, 0.5, -0.75, 1.25, -0.25, f64.inf, -f64.inf, f64.nan, 0.0, -5.0e-311,
--     1.1125369292536007e-308, 8.988465674311579e307, 5.0e299, 1.7014117838986683e38, 127.95,
--     -5.0e9] }
-- output { empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64)
--          empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64)
--          empty([0]i64) empty([0]i64) }
entry unary_f64 (xs: []f64) (neg: []f64) (abs: []f64) (sgn: []f64) (inv_sgn: []f64)
                (sqrt: []f64) (floor: []f64) (ceil: []f64) (trunc: []f64) (round: []f64)
                (times0: []f64) (zero_minus: []f64) (plus0: []f64) (inv_times0: []f64)
                (half: []f64) =
  ( diff (map f64.neg xs) neg, diff (map f64.abs xs) abs, diff (map f64.sgn xs) sgn
  , diff (map (\x -> 1 / f64.sgn x) xs) inv_sgn, diff (map f64.sqrt xs) sqrt
  , diff (map f64.floor xs) floor, diff (map f64.ceil xs) ceil, diff (map f64.trunc xs) trunc
  , diff (map f64.round xs) round, diff (map (\x -> x * 0.0) xs) times0
  , diff (map (\x -> 0.0 - x) xs) zero_minus, diff (map (\x -> x + 0.0) xs) plus0
  , diff (map (\x -> 1 / (x * 0.0)) xs) inv_times0, diff (map (\x -> x * 0.5) xs) half )

-- The same in f32, with conversions to f64 and f16.
-- ==
-- entry: unary_f32
-- input { [0.0f32, -0.0f32, 1.0f32, -1.5f32, 2.5f32, -0.5f32, f32.inf, -f32.inf, f32.nan,
--     3.4028235e38f32, 65520.0f32, 1e-8f32]
--   [0.0f32, 0.0f32, 1.0f32, -1.0f32, 1.0f32, -1.0f32, 1.0f32, -1.0f32, f32.nan, 1.0f32, 1.0f32,
--     1.0f32]
--   [0.0f32, -0.0f32, 1.0f32, f32.nan, 1.5811388f32, f32.nan, f32.inf, f32.nan, f32.nan,
--     1.8446743e19f32, 255.96875f32, 1.0e-4f32]
--   [0.0f32, -0.0f32, 1.0f32, -2.0f32, 2.0f32, -1.0f32, f32.inf, -f32.inf, f32.nan,
--     3.4028235e38f32, 65520.0f32, 0.0f32]
--   [0.0f32, -0.0f32, 1.0f32, -1.0f32, 3.0f32, -0.0f32, f32.inf, -f32.inf, f32.nan,
--     3.4028235e38f32, 65520.0f32, 1.0f32]
--   [0.0f32, -0.0f32, 1.0f32, -1.0f32, 2.0f32, -0.0f32, f32.inf, -f32.inf, f32.nan,
--     3.4028235e38f32, 65520.0f32, 0.0f32]
--   [0.0f32, -0.0f32, 1.0f32, -2.0f32, 2.0f32, -0.0f32, f32.inf, -f32.inf, f32.nan,
--     3.4028235e38f32, 65520.0f32, 0.0f32]
--   [0.0f32, -0.0f32, 0.0f32, -0.0f32, 0.0f32, -0.0f32, f32.nan, f32.nan, f32.nan, 0.0f32, 0.0f32,
--     0.0f32]
--   [0.0f32, 0.0f32, -1.0f32, 1.5f32, -2.5f32, 0.5f32, -f32.inf, f32.inf, f32.nan,
--     -3.4028235e38f32, -65520.0f32, -1.0e-8f32]
--   [0.0f32, 0.0f32, 1.0f32, -1.5f32, 2.5f32, -0.5f32, f32.inf, -f32.inf, f32.nan, 3.4028235e38f32,
--     65520.0f32, 1.0e-8f32]
--   [0.0, -0.0, 1.0, -1.5, 2.5, -0.5, f64.inf, -f64.inf, f64.nan, 3.4028234663852886e38, 65520.0,
--     9.99999993922529e-9]
--   [0.0f16, -0.0f16, 1.0f16, -1.5f16, 2.5f16, -0.5f16, f16.inf, -f16.inf, f16.nan, f16.inf,
--     f16.inf, 0.0f16] }
-- output { empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64)
--          empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) }
-- needs_denorm_f32 input { [0.0f32, -0.0f32, 1.0f32, -1.5f32, 2.5f32, -0.5f32, f32.inf, -f32.inf, f32.nan, 1e-45f32, -1e-40f32, 3.4028235e38f32, 65520.0f32, 1e-8f32]
--   [0.0f32, 0.0f32, 1.0f32, -1.0f32, 1.0f32, -1.0f32, 1.0f32, -1.0f32, f32.nan, 1.0f32, -1.0f32,
--     1.0f32, 1.0f32, 1.0f32]
--   [0.0f32, -0.0f32, 1.0f32, f32.nan, 1.5811388f32, f32.nan, f32.inf, f32.nan, f32.nan,
--     3.743392e-23f32, f32.nan, 1.8446743e19f32, 255.96875f32, 1.0e-4f32]
--   [0.0f32, -0.0f32, 1.0f32, -2.0f32, 2.0f32, -1.0f32, f32.inf, -f32.inf, f32.nan, 0.0f32,
--     -1.0f32, 3.4028235e38f32, 65520.0f32, 0.0f32]
--   [0.0f32, -0.0f32, 1.0f32, -1.0f32, 3.0f32, -0.0f32, f32.inf, -f32.inf, f32.nan, 1.0f32,
--     -0.0f32, 3.4028235e38f32, 65520.0f32, 1.0f32]
--   [0.0f32, -0.0f32, 1.0f32, -1.0f32, 2.0f32, -0.0f32, f32.inf, -f32.inf, f32.nan, 0.0f32,
--     -0.0f32, 3.4028235e38f32, 65520.0f32, 0.0f32]
--   [0.0f32, -0.0f32, 1.0f32, -2.0f32, 2.0f32, -0.0f32, f32.inf, -f32.inf, f32.nan, 0.0f32,
--     -0.0f32, 3.4028235e38f32, 65520.0f32, 0.0f32]
--   [0.0f32, -0.0f32, 0.0f32, -0.0f32, 0.0f32, -0.0f32, f32.nan, f32.nan, f32.nan, 0.0f32,
--     -0.0f32, 0.0f32, 0.0f32, 0.0f32]
--   [0.0f32, 0.0f32, -1.0f32, 1.5f32, -2.5f32, 0.5f32, -f32.inf, f32.inf, f32.nan, -1.0e-45f32,
--     1.0e-40f32, -3.4028235e38f32, -65520.0f32, -1.0e-8f32]
--   [0.0f32, 0.0f32, 1.0f32, -1.5f32, 2.5f32, -0.5f32, f32.inf, -f32.inf, f32.nan, 1.0e-45f32,
--     -1.0e-40f32, 3.4028235e38f32, 65520.0f32, 1.0e-8f32]
--   [0.0, -0.0, 1.0, -1.5, 2.5, -0.5, f64.inf, -f64.inf, f64.nan, 1.401298464324817e-45,
--     -9.99994610111476e-41, 3.4028234663852886e38, 65520.0, 9.99999993922529e-9]
--   [0.0f16, -0.0f16, 1.0f16, -1.5f16, 2.5f16, -0.5f16, f16.inf, -f16.inf, f16.nan, 0.0f16,
--     -0.0f16, f16.inf, f16.inf, 0.0f16] }
-- output { empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64)
--          empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) }
entry unary_f32 (xs: []f32) (sgn: []f32) (sqrt: []f32) (floor: []f32) (ceil: []f32)
                (trunc: []f32) (round: []f32) (times0: []f32) (zero_minus: []f32)
                (plus0: []f32) (to64: []f64) (to16: []f16) =
  ( diff32 (map f32.sgn xs) sgn, diff32 (map f32.sqrt xs) sqrt, diff32 (map f32.floor xs) floor
  , diff32 (map f32.ceil xs) ceil, diff32 (map f32.trunc xs) trunc
  , diff32 (map f32.round xs) round, diff32 (map (\x -> x * 0.0) xs) times0
  , diff32 (map (\x -> 0.0 - x) xs) zero_minus, diff32 (map (\x -> x + 0.0) xs) plus0
  , diff (map f64.f32 xs) to64, diff32 (map (\x -> f32.f16 (f16.f32 x)) xs) (map f32.f16 to16) )

-- isnan 1, isinf 2, and the conversion to bool (nonzero, so NaN is true) 4.
-- ==
-- entry: classify
-- input { [0.0, -0.0, 1.0, -1.5, 2.5, -0.5, f64.inf, -f64.inf, f64.nan, 5e-324, -1e-310, 2.2250738585072014e-308, 1.7976931348623157e308, 1e300, 3.4028235677973366e38, 255.9, -1e10]
--   [0i32, 0i32, 4i32, 4i32, 4i32, 4i32, 6i32, 6i32, 5i32, 4i32, 4i32, 4i32, 4i32, 4i32, 4i32,
--     4i32, 4i32] }
-- output { empty([0]i64) }
entry classify (xs: []f64) (want: []i32) =
  diff_int (map (\x -> i32.bool (f64.isnan x) | 2 * i32.bool (f64.isinf x) | 4 * i32.bool (bool.f64 x)) xs)
           want

-- Conversions: f64 to f32 (overflow to inf, underflow to ±0) and back, and to integers (NaN and
-- the infinities give 0, truncation toward zero, wrapping).
-- ==
-- entry: convert
-- input { [0.0, -0.0, 1.0, -1.5, 2.5, -0.5, f64.inf, -f64.inf, f64.nan, 5e-324, -1e-310, 2.2250738585072014e-308, 1.7976931348623157e308, 1e300, 3.4028235677973366e38, 255.9, -1e10]
--   [0.0f32, -0.0f32, 1.0f32, -1.5f32, 2.5f32, -0.5f32, f32.inf, -f32.inf, f32.nan, 0.0f32,
--     -0.0f32, 0.0f32, f32.inf, f32.inf, f32.inf, 255.9f32, -1.0e10f32]
--   [0.0, -0.0, 1.0, -1.5, 2.5, -0.5, f64.inf, -f64.inf, f64.nan, 0.0, -0.0, 0.0, f64.inf,
--     f64.inf, f64.inf, 255.89999389648438, -1.0e10]
--   [0i32, 0i32, 1i32, -1i32, 2i32, 0i32, 0i32, 0i32, 0i32, 0i32, 0i32, 0i32, -1i32, -1i32, -1i32,
--     255i32, -1410065408i32]
--   [0u8, 0u8, 1u8, 255u8, 2u8, 0u8, 0u8, 0u8, 0u8, 0u8, 0u8, 0u8, 255u8, 255u8, 255u8, 255u8,
--     0u8]
--   [0i64, 0i64, 1i64, -1i64, 2i64, 0i64, 0i64, 0i64, 0i64, 0i64, 0i64, 0i64, -1i64, -1i64, -1i64,
--     255i64, -10000000000i64] }
-- output { empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) }
entry convert (xs: []f64) (f32s: []f32) (back: []f64) (i32s: []i32) (u8s: []u8) (i64s: []i64) =
  ( diff32 (map f32.f64 xs) f32s, diff (map (\x -> f64.f32 (f32.f64 x)) xs) back
  , diff_int (map i32.f64 xs) i32s, diff_int (map (\x -> i32.u8 (u8.f64 x)) xs) (map i32.u8 u8s)
  , filter (\i -> i64.f64 xs[i] != i64s[i]) (indices xs) )

-- Reductions: NaN is not lost (`f64.sum (map (* 0.0) xs)` of the issue), inf - inf is NaN,
-- denormals add up, the sign of a zero product is kept, and max/min skip NaN.
-- ==
-- entry: reductions
-- input { [1.0, f64.nan, f64.inf, -0.0, 0.0] [f64.inf, -f64.inf] [5e-324, 5e-324, -0.0]
--         [f64.nan, 1.0, f64.nan]
--   [f64.nan, f64.nan, -f64.inf, 1.0e-323, -0.0, 1.0, 1.0, f64.nan, -f64.inf, f64.inf] }
-- output { empty([0]i64) }
entry reductions (a: []f64) (b: []f64) (c: []f64) (d: []f64) (want: []f64) =
  diff [ f64.sum (map (* 0.0) a), f64.sum b, f64.product b, f64.sum c, f64.product c
       , f64.maximum d, f64.minimum d, f64.sum d, f64.maximum (map (* 0.0) b)
       , f64.minimum (map (* 0.0) b) ]
       want

-- AD rules at special values: d sqrt = 1 / (2 sqrt x) (inf at 0, -inf at -0), d (1/x) =
-- -1/x² (-0 at ±inf), d (x*x) = 2x, d abs = sgn, d (x*0) = 0.
-- ==
-- entry: ad_rules
-- input { [0.0, -0.0, 4.0, f64.inf, -f64.inf, f64.nan, 5e-324, -1.0]
--   [f64.inf, -f64.inf, 0.25, 0.0, f64.nan, f64.nan, 2.2494568972715982e161, f64.nan]
--   [-f64.inf, -f64.inf, -6.25e-2, -0.0, -0.0, f64.nan, -f64.inf, -1.0]
--   [0.0, -0.0, 8.0, f64.inf, -f64.inf, f64.nan, 1.0e-323, -2.0]
--   [0.0, 0.0, 1.0, 1.0, -1.0, f64.nan, 1.0, -1.0]
--   [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0] }
-- output { empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) empty([0]i64) }
entry ad_rules (xs: []f64) (dsqrt: []f64) (dinv: []f64) (dsquare: []f64) (dabs: []f64)
               (dzero: []f64) =
  ( diff (map (\x -> vjp f64.sqrt x 1) xs) dsqrt, diff (map (\x -> vjp (\x -> 1 / x) x 1) xs) dinv
  , diff (map (\x -> jvp (\x -> x * x) x 1) xs) dsquare, diff (map (\x -> vjp f64.abs x 1) xs) dabs
  , diff (map (\x -> vjp (\x -> x * 0) x 1) xs) dzero )
