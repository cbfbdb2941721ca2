-- Entry points: `main` without `entry`, several parameters and results,
-- unique parameters, constants.

-- A top-level function named main is an entry point; it is the default.
-- ==
-- input { 41 } output { 42 }
def main (x: i32) : i32 = x + 1

-- ==
-- entry: many
-- input { 1i8 2i16 3 4i64 5u8 6u16 7u32 8u64 1.5f16 2.5f32 3.5 true }
-- output { 8u64 7u32 6u16 5u8 4i64 3 2i16 1i8 7.5 false }
entry many (a: i8) (b: i16) (c: i32) (d: i64) (e: u8) (f: u16) (g: u32) (h: u64) (x: f16) (y: f32) (z: f64) (t: bool)
  : (u64, u32, u16, u8, i64, i32, i16, i8, f64, bool) =
  (h, g, f, e, d, c, b, a, f64.f16 x + f64.f32 y + z, !t)

-- Array parameters of several ranks and types.
-- ==
-- entry: ranks
-- input { [1u8, 2u8] [[true], [false]] [[[1.0f32]]] } output { 2i64 2i64 1i64 }
entry ranks (a: []u8) (b: [][]bool) (c: [][][]f32) : (i64, i64, i64) = (length a, length b, length c)

-- A unique (consumed) parameter.
-- ==
-- entry: consume
-- input { [1, 2, 3] } output { [1, 2, 0] }
entry consume (xs: *[]i32) : *[]i32 = xs with [2] = 0

-- An entry with no parameters.
-- ==
-- entry: constant
-- input { } output { [1, 2, 3] }
entry constant : []i32 = [1, 2, 3]

-- Several entries tested with the same cases.
-- ==
-- entry: plus_a plus_b
-- input { 2 3 } output { 5 }
entry plus_a (x: i32) (y: i32) : i32 = x + y
entry plus_b (x: i32) (y: i32) : i32 = y + x

-- A named test case.
-- ==
-- entry: named
-- "a named case" input { 1 } output { 2 }
entry named (x: i32) : i32 = x * 2
