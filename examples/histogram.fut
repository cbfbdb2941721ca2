-- Second-order array combinators (SOACs) at work: a histogram of values
-- into equal-width buckets (`hist`), the cumulative counts (`scan`), and the
-- fraction of values in each bucket (`map`).
--
--   cargo run --release -p vkad -- run examples/histogram.fut -e main < examples/histogram.in
--
-- The input is the number of buckets, the lower and upper bounds of the
-- range, and the values. Values outside [lo, hi) are ignored (their bucket
-- index is out of bounds, and `hist` skips those).

def bucket (k: i64) (lo: f32) (hi: f32) (x: f32) : i64 =
  if x < lo || x >= hi then -1
  else i64.f32 ((x - lo) / (hi - lo) * f32.i64 k)

-- ==
-- entry: main
-- input { 4i64 0.0f32 1.0f32 [0.1f32, 0.3f32, 0.35f32, 0.9f32, 0.95f32, 0.99f32, 1.5f32, -0.2f32] }
-- output { [1i64, 2i64, 0i64, 3i64] [1i64, 3i64, 3i64, 6i64] [0.125f32, 0.25f32, 0.0f32, 0.375f32] }
-- input @ histogram.in
-- output { [2i64, 1i64, 1i64, 1i64, 0i64] [2i64, 3i64, 4i64, 5i64, 5i64] [0.333333f32, 0.166667f32, 0.166667f32, 0.166667f32, 0.0f32] }
entry main [n] (k: i64) (lo: f32) (hi: f32) (xs: [n]f32) : ([k]i64, [k]i64, [k]f32) =
  let counts = hist (+) 0 k (map (bucket k lo hi) xs) (replicate n 1)
  let cumulative = scan (+) 0 counts
  let fractions = map (\c -> f32.i64 c / f32.i64 n) counts
  in (counts, cumulative, fractions)
