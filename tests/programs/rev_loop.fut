-- Reverse-mode AD (vjp) of loops: checkpointing, while loops with and without #[bound],
-- #[stripmine], #[true_dep], in-place updates. Expected values worked out by hand (and checked
-- against finite differences in core/src/ad/rev/tests_loop.rs).

def pow (y: i64) (x: f64) : f64 = loop acc = 1 for _i < y do acc * x

-- d/dx x³ = 3x² = 48 at 4; d/dx x⁹ = 9x⁸ = 59049 at 3.
-- ==
-- entry: for_loop
-- input { 3i64 4.0 } output { 48.0 }
-- input { 9i64 3.0 } output { 59049.0 }
-- input { 0i64 3.0 } output { 0.0 }
entry for_loop (y: i64) (x: f64) : f64 = vjp (pow y) x 1

def pow_while (y: i64) (x: f64) : f64 =
  let (_, res) = loop (i, acc) = (0, 1) while i < y do (i + 1, acc * x)
  in res

def pow_while_bound (y: i64) (x: f64) : f64 =
  let (_, res) = #[bound(1000)] loop (i, acc) = (0, 1) while i < y do (i + 1, acc * x)
  in res

-- ==
-- entry: while_loops
-- input { 3i64 4.0 } output { 48.0 48.0 }
-- input { 9i64 3.0 } output { 59049.0 59049.0 }
entry while_loops (y: i64) (x: f64) : (f64, f64) =
  (vjp (pow_while y) x 1, vjp (pow_while_bound y) x 1)

def pow_mined (y: i64) (x: f64) : f64 =
  #[stripmine(3)] loop acc = 1 for _i < y do acc * x

def pow_list [n] (y: i64) (xs: [n]f64) : [n]f64 =
  #[stripmine(2)] loop accs = replicate n 1 for _i < y do map2 (*) accs xs

-- ==
-- entry: stripmine
-- input { 9i64 3.0 } output { 59049.0 [0.0, 12.0, 0.0] }
entry stripmine (y: i64) (x: f64) : (f64, [3]f64) =
  (vjp (pow_mined y) x 1, vjp (pow_list 3) [1.0, 2.0, 3.0] [0.0, 1.0, 0.0])

-- ad-rules.md §7 (address inversion, paper 004): ā2 = 3, ā4 = 2, ā5 = 7, ā7 = 5.
def addresses (a: [8]f64) : f64 =
  let (_, a) =
    loop (j, a) = (1, copy a) while j < 6 do
      let k = j + 1
      let j = k + 2
      in (j, a with [j] = a[k] * a[j])
  in a[4] + a[7]

-- ==
-- entry: address_inversion
-- input { [0.0, 0.0, 2.0, 0.0, 3.0, 5.0, 0.0, 7.0] }
-- output { [0.0, 0.0, 3.0, 0.0, 2.0, 7.0, 0.0, 5.0] }
entry address_inversion (a: [8]f64) : [8]f64 = vjp addresses a 1

-- y_k = x0^(2^k) (Futhark's truedep0.fut on floats): ∂y_4/∂x = 16 x0^15.
def squares [n] (xs: [n]f64) : [n]f64 =
  #[true_dep] loop ys = copy xs for i < n - 1 do ys with [i + 1] = ys[i] * ys[i]

-- ==
-- entry: true_dep
-- input { [1.0, 2.0, 3.0, 4.0, 5.0] } output { [16.0, 0.0, 0.0, 0.0, 0.0] }
entry true_dep [n] (xs: [n]f64) : [n]f64 = vjp squares xs (replicate n 0 with [n - 1] = 1)

-- In-place updates: y0 = a0·a1, y1 = a1·y0.
def rotate_mul [n] (a: [n]f64) : [n]f64 =
  loop a = copy a for i < n do a with [i] = a[i] * a[(i + 1) % n]

-- ==
-- entry: in_place
-- input { [2.0, 3.0] [1.0, 0.0] } output { [3.0, 2.0] }
-- input { [3.0] [1.0] } output { [6.0] }
entry in_place [n] (a: [n]f64) (seed: [n]f64) : [n]f64 = vjp rotate_mul a seed
