-- Attributes do not change results: #[unsafe], #[bound(n)], #[stripmine(n)],
-- #[true_dep], declaration attributes, unknown attributes; and assert.

-- ==
-- entry: unsafe_index
-- input { [1, 2, 3] 1i64 } output { 2 }
entry unsafe_index (xs: []i32) (i: i64) : i32 = #[unsafe] xs[i]

def pow_while (y: i32) (x: i32) : i32 =
  let (_, res) =
    #[bound(1000)]
    loop (i, acc) = (0, 1) while i < y do
      (i + 1, acc * x)
  in res

def pow_for (y: i32) (x: i32) : i32 =
  #[stripmine(2)]
  loop acc = 1 for _i < y do acc * x

-- ==
-- entry: loops
-- input { 3 4 } output { 64 64 }
-- input { 9 3 } output { 19683 19683 }
entry loops (y: i32) (x: i32) : (i32, i32) = (pow_while y x, pow_for y x)

-- A loop parameter pattern with an attribute.
-- ==
-- entry: true_dep
-- input { [2, 2, 3, 4, 5] } output { [2, 4, 16, 256, 65536] }
entry true_dep [n] (xs: [n]i32) : [n]i32 =
  loop #[true_dep] xs' = copy xs for i < n - 1 do
    xs' with [i + 1] = xs'[i] * xs'[i]

#[inline]
def inc (x: i32) : i32 = x + 1

#[noinline]
def dec (x: i32) : i32 = x - 1

-- Declaration attributes, Futhark's SOAC attributes, and unknown attributes
-- (vkad warns about the last ones).
-- ==
-- entry: others
-- input { [1, 2, 3] } output { [2, 3, 4] [0, 1, 2] 6 6 }
entry others (xs: []i32) : ([]i32, []i32, i32, i32) =
  let a = #[sequential] map inc xs
  let b = #[vkad_unknown_attribute] map dec xs
  let c = #[some(compound, 1)] reduce (+) 0 xs
  let d = #[unroll] loop s = 0 for x in xs do s + x
  in (a, b, c, d)

-- assert passes its value through when the condition holds.
-- ==
-- entry: checked
-- input { 3 } output { 6 }
entry checked (x: i32) : i32 = assert (x > 0) (x * 2)
