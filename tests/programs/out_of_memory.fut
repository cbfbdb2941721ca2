-- Allocations too large for the machine are run-time errors at the expression
-- that allocates, on every backend (the interpreter and the AD oracle used to
-- abort the process: "memory allocation failed", or panic "capacity
-- overflow" for more bytes than the address space). Each entry returns the
-- huge array, so that no backend can avoid allocating it (a fused loop that
-- allocates nothing would run for ever instead).

-- 10^15 f32s (4 PB).
-- ==
-- entry: replicate_big
-- input { 3i64 } output { [0f32, 0f32, 0f32] }
-- input { 1000000000000000i64 }
-- error: out_of_memory\.fut:15:3: .*out of memory
entry replicate_big (n: i64) : []f32 =
  replicate n 0f32

-- ==
-- entry: iota_big
-- input { 3i64 } output { [0i64, 1i64, 2i64] }
-- input { 1000000000000000i64 } error: out of memory
entry iota_big (n: i64) : []i64 =
  iota n

-- 2^62 f32s: more bytes than a 64-bit address space.
-- ==
-- entry: flatten_big
-- input { 2i64 2i64 } output { [1f32, 1f32, 1f32, 1f32] }
-- input { 1125899906842624i64 4096i64 } error: out of memory|size overflow
entry flatten_big (n: i64) (m: i64) : []f32 =
  flatten (replicate n (replicate m 1f32))

-- An array built row by row by a map: small rows, 4 * 10^16 bytes in all.
-- ==
-- entry: map_rows
-- input { 2i64 2i64 } output { [[0f32, 0f32], [1f32, 1f32]] }
-- input { 1000000000i64 10000000i64 } error: out of memory
entry map_rows (n: i64) (m: i64) : [][]f32 =
  map (\i -> replicate m (f32.i64 i)) (iota n)

-- Inside a function differentiated by jvp (the AD oracle traces the replicate).
-- ==
-- entry: jvp_replicate
-- input { 2i64 5f32 } output { [1f32, 1f32] }
-- input { 1000000000000000i64 5f32 } error: out of memory
entry jvp_replicate (n: i64) (x: f32) : []f32 =
  jvp (\x -> replicate n x) x 1
