-- The vkad prelude: library functions written in vkad itself. The intrinsics (map, reduce,
-- scan, scatter, iota, zip, ...) and the numeric modules (f64.sqrt, i32.max, ...) are built in
-- (see core/src/builtins.rs); everything here is type-checked and lowered like user code.
-- Semantics and signatures follow Futhark's prelude.

-- Functions.

def id '^a (x: a) : a = x

def const '^a '^b (x: a) (_: b) : a = x

def flip '^a '^b '^c (f: a -> b -> c) (b: b) (a: a) : c = f a b

def curry '^a '^b '^c (f: (a, b) -> c) (a: a) (b: b) : c = f (a, b)

def uncurry '^a '^b '^c (f: a -> b -> c) (p: (a, b)) : c = f p.0 p.1

def iterate 'a (n: i32) (f: a -> a) (x: a) : a =
  loop x for _i < n do f x

def iterate_until 'a (p: a -> bool) (f: a -> a) (x: a) : a =
  loop x while !(p x) do f x

def iterate_while 'a (p: a -> bool) (f: a -> a) (x: a) : a =
  loop x while p x do f x

-- Zipping.

def zip2 [n] 'a 'b (as: [n]a) (bs: [n]b) : [n](a, b) = zip as bs

def zip3 [n] 'a 'b 'c (as: [n]a) (bs: [n]b) (cs: [n]c) : [n](a, b, c) =
  map (\(a, (b, c)) -> (a, b, c)) (zip as (zip bs cs))

def zip4 [n] 'a 'b 'c 'd (as: [n]a) (bs: [n]b) (cs: [n]c) (ds: [n]d) : [n](a, b, c, d) =
  map (\(a, (b, (c, d))) -> (a, b, c, d)) (zip as (zip bs (zip cs ds)))

def zip5 [n] 'a 'b 'c 'd 'e (as: [n]a) (bs: [n]b) (cs: [n]c) (ds: [n]d) (es: [n]e) : [n](a, b, c, d, e) =
  map (\(a, (b, (c, (d, e)))) -> (a, b, c, d, e)) (zip as (zip bs (zip cs (zip ds es))))

def unzip2 [n] 'a 'b (xs: [n](a, b)) : ([n]a, [n]b) = unzip xs

def unzip3 [n] 'a 'b 'c (xs: [n](a, b, c)) : ([n]a, [n]b, [n]c) =
  let (as, bcs) = unzip (map (\(a, b, c) -> (a, (b, c))) xs)
  let (bs, cs) = unzip bcs
  in (as, bs, cs)

def unzip4 [n] 'a 'b 'c 'd (xs: [n](a, b, c, d)) : ([n]a, [n]b, [n]c, [n]d) =
  let (as, bcds) = unzip (map (\(a, b, c, d) -> (a, (b, (c, d)))) xs)
  let (bs, cds) = unzip bcds
  let (cs, ds) = unzip cds
  in (as, bs, cs, ds)

def unzip5 [n] 'a 'b 'c 'd 'e (xs: [n](a, b, c, d, e)) : ([n]a, [n]b, [n]c, [n]d, [n]e) =
  let (as, bcdes) = unzip (map (\(a, b, c, d, e) -> (a, (b, (c, (d, e))))) xs)
  let (bs, cdes) = unzip bcdes
  let (cs, des) = unzip cdes
  let (ds, es) = unzip des
  in (as, bs, cs, ds, es)

-- Mapping.

def map1 'a [n] 'x (f: a -> x) (as: [n]a) : *[n]x = map f as

def map2 'a 'b [n] 'x (f: a -> b -> x) (as: [n]a) (bs: [n]b) : *[n]x =
  map (\(a, b) -> f a b) (zip as bs)

def map3 'a 'b 'c [n] 'x (f: a -> b -> c -> x) (as: [n]a) (bs: [n]b) (cs: [n]c) : *[n]x =
  map (\(a, (b, c)) -> f a b c) (zip as (zip bs cs))

def map4 'a 'b 'c 'd [n] 'x (f: a -> b -> c -> d -> x) (as: [n]a) (bs: [n]b) (cs: [n]c) (ds: [n]d) : *[n]x =
  map (\(a, (b, (c, d))) -> f a b c d) (zip as (zip bs (zip cs ds)))

def map5 'a 'b 'c 'd 'e [n] 'x (f: a -> b -> c -> d -> e -> x) (as: [n]a) (bs: [n]b) (cs: [n]c) (ds: [n]d) (es: [n]e) : *[n]x =
  map (\(a, (b, (c, (d, e)))) -> f a b c d e) (zip as (zip bs (zip cs (zip ds es))))

-- Reductions and scans.

def all [n] 'a (f: a -> bool) (as: [n]a) : bool = reduce (&&) true (map f as)

def any [n] 'a (f: a -> bool) (as: [n]a) : bool = reduce (||) false (map f as)

def and [n] (xs: [n]bool) : bool = all id xs

def or [n] (xs: [n]bool) : bool = any id xs

def foldl [n] 'a 'b (f: a -> b -> a) (acc: a) (bs: [n]b) : a =
  loop acc for b in bs do f acc b

def foldr [n] 'a 'b (f: b -> a -> a) (acc: a) (bs: [n]b) : a =
  loop acc for b in reverse bs do f b acc

def exscan [n] 'a (op: a -> a -> a) (ne: a) (as: [n]a) : *[n]a =
  let s = scan op ne as
  in map (\i -> if i == 0 then ne else s[i - 1]) (iota n)

-- Index spaces.

def tabulate 'a (n: i64) (f: i64 -> a) : *[n]a = map f (iota n)

def tabulate_2d 'a (n: i64) (m: i64) (f: i64 -> i64 -> a) : *[n][m]a =
  map (\i -> map (f i) (iota m)) (iota n)

def tabulate_3d 'a (n: i64) (m: i64) (o: i64) (f: i64 -> i64 -> i64 -> a) : *[n][m][o]a =
  map (\i -> map (\j -> map (f i j) (iota o)) (iota m)) (iota n)

def indices [n] 't (_: [n]t) : *[n]i64 = iota n

-- Arrays.

def null [n] 't (_: [n]t) : bool = n == 0

def head [n] 't (x: [n]t) : t = x[0]

def last [n] 't (x: [n]t) : t = x[n - 1]

def tail [n] 't (x: [n]t) : []t = x[1:]

def init [n] 't (x: [n]t) : []t = x[0:n - 1]

def take [n] 't (i: i64) (x: [n]t) : []t = x[0:i]

def drop [n] 't (i: i64) (x: [n]t) : []t = x[i:]

def flatten_3d [n] [m] [l] 't (xs: [n][m][l]t) : []t = flatten (flatten xs)

def flatten_4d [n] [m] [l] [k] 't (xs: [n][m][l][k]t) : []t = flatten (flatten_3d xs)

def sized [m] 't (n: i64) (xs: [m]t) : [n]t = xs :> [n]t

def spread 't [n] (k: i64) (x: t) (is: [n]i64) (vs: [n]t) : *[k]t =
  scatter (replicate k x) is vs

-- Multi-dimensional histograms (indices outside the destination are ignored).

def reduce_by_index_2d 'a [k] [m] [n] (dest: *[k][m]a) (f: a -> a -> a) (ne: a) (is: [n](i64, i64)) (as: [n]a) : *[k][m]a =
  let flat_is = map (\(i, j) -> if i >= 0 && i < k && j >= 0 && j < m then i * m + j else -1) is
  in unflatten (reduce_by_index (flatten dest) f ne flat_is as)

def reduce_by_index_3d 'a [k] [m] [l] [n] (dest: *[k][m][l]a) (f: a -> a -> a) (ne: a) (is: [n](i64, i64, i64)) (as: [n]a) : *[k][m][l]a =
  let flat_is =
    map (\(i, j, h) -> if i >= 0 && i < k && j >= 0 && j < m && h >= 0 && h < l then (i * m + j) * l + h else -1) is
  in unflatten_3d (reduce_by_index (flatten_3d dest) f ne flat_is as)

-- Filtering (the result size is known only at run time).

def filter [n] 'a (p: a -> bool) (as: [n]a) : *[]a =
  let flags = map (\x -> if p x then 1i64 else 0i64) as
  let offsets = scan (+) 0i64 flags
  let m = if n == 0 then 0i64 else offsets[n - 1]
  let is = map2 (\f o -> if f == 1 then o - 1 else -1) flags offsets
  let res = scatter (copy as) is as
  in res[0:m]

def partition [n] 'a (p: a -> bool) (as: [n]a) : ([]a, []a) =
  let flags = map p as
  let offsets = scan (+) 0i64 (map (\b -> if b then 1i64 else 0i64) flags)
  let k = if n == 0 then 0i64 else offsets[n - 1]
  let is = map3 (\b o i -> if b then o - 1 else k + i - o) flags offsets (iota n)
  let res = scatter (copy as) is as
  in (res[0:k], res[k:n])

def partition2 [n] 'a (p1: a -> bool) (p2: a -> bool) (as: [n]a) : ([]a, []a, []a) =
  -- The class of each element: 0 (p1), 1 (not p1, p2) or 2 (neither); each class keeps the
  -- original order.
  let cls = map (\x -> if p1 x then 0i64 else if p2 x then 1i64 else 2i64) as
  let ones = map (\c -> (i64.bool (c == 0), i64.bool (c == 1), i64.bool (c == 2))) cls
  let offsets = scan (\(a0, a1, a2) (b0, b1, b2) -> (a0 + b0, a1 + b1, a2 + b2)) (0, 0, 0) ones
  let k0 = i64.sum (map (\(o, _, _) -> o) ones)
  let k1 = i64.sum (map (\(_, o, _) -> o) ones)
  let is = map2 (\c (o0, o1, o2) -> if c == 0 then o0 - 1 else if c == 1 then k0 + o1 - 1 else k0 + k1 + o2 - 1) cls offsets
  let res = scatter (copy as) is as
  in (res[0:k0], res[k0:k0 + k1], res[k0 + k1:n])

-- Futhark's `flatmap`: `f` gives each element a segment of any length and a value; the result
-- is the segment sizes, the flags marking where each nonempty segment starts, the segment
-- offsets, the segments concatenated, and the values. Written with `map`s (each position of
-- the data array applies `f` to its element again), so it is parallel and differentiable.
def flatmap [n] 'a 'b 'c (f: a -> ?[k].([k]b, c)) (as: [n]a) : ([n]i64, []bool, [n]i64, []b, [n]c) =
  let szs = map (\x -> length (f x).0) as
  let offs = exscan (+) 0 szs
  let m = i64.sum szs
  let starts = map2 (\o s -> if s > 0 then o else -1) offs szs
  let seg_at = reduce_by_index (replicate m (-1)) i64.max (-1) starts (iota n)
  let flags = map (\i -> i >= 0) seg_at
  let segs = scan i64.max (-1) seg_at
  let data = map2 (\j i -> (f as[i]).0[j - offs[i]]) (iota m) segs
  in (szs, flags, offs, data, map (\x -> (f x).1) as)

def flatmap' [n] 'a 'b (f: a -> ?[k].[k]b) (as: [n]a) : ([n]i64, []bool, [n]i64, []b) =
  let (szs, flags, offs, data, _) = flatmap (\x -> (f x, ())) as
  in (szs, flags, offs, data)

-- Conversions and booleans (Futhark's prelude.fut).

def r32 (x: i32) : f32 = f32.i32 x

def t32 (x: f32) : i32 = i32.f32 x

def r64 (x: i32) : f64 = f64.i32 x

def t64 (x: f64) : i32 = i32.f64 x

def not (x: bool) : bool = !x

def break 't (x: t) : t = x

-- Forward-mode AD over a batch of tangents: `jvp` once per seed (Futhark's `jmp`/`jmp2`).

def jmp2 'a 'b [n] (f: a -> b) (x: a) (xs': [n]a) : (b, [n]b) =
  (f x, map (\x' -> jvp f x x') xs')

def jmp 'a 'b [n] (f: a -> b) (x: a) (xs': [n]a) : [n]b =
  map (\x' -> jvp f x x') xs'

-- Reverse-mode AD over a batch of adjoints: `vjp` once per seed (Futhark's `mjp`/`mjp2`).

def mjp2 'a 'b [n] (f: a -> b) (x: a) (ys': [n]b) : (b, [n]a) =
  (f x, map (\y' -> vjp f x y') ys')

def mjp 'a 'b [n] (f: a -> b) (x: a) (ys': [n]b) : [n]a =
  map (\y' -> vjp f x y') ys'

-- A custom derivative whose intermediate result `c` (the tape) is kept apart from the result.
def with_vjp_tape 'a 'b 'c (f: a -> (c, b)) (f': (c, b) -> a) (x: a) : b =
  (with_vjp f (\(tape, _) (_, adj) -> f' (tape, adj)) x).1

-- Module types of the numeric modules (Futhark's prelude/math.fut), for parametric modules
-- such as `module m = mk_linalg f64`. The built-in modules `i8` ... `u64`, `f16` ... `f64`
-- match them. Members that vkad's numeric modules lack are left out (docs/language.md,
-- "Modules"): `mad_hi` of `integral`; `recip`, `to_f64`, `rsqrt`, `sinpi`, `cospi`, `tanpi`,
-- `asinpi`, `acospi`, `atanpi`, `atan2pi` of `real`; `get_bit` and `set_bit` of `float`.

module type from_prim = {
  type t
  val i8 : i8 -> t
  val i16 : i16 -> t
  val i32 : i32 -> t
  val i64 : i64 -> t
  val u8 : u8 -> t
  val u16 : u16 -> t
  val u32 : u32 -> t
  val u64 : u64 -> t
  val f16 : f16 -> t
  val f32 : f32 -> t
  val f64 : f64 -> t
  val bool : bool -> t
}

module type numeric = {
  include from_prim
  val (+) : t -> t -> t
  val (-) : t -> t -> t
  val (*) : t -> t -> t
  val (/) : t -> t -> t
  val (%) : t -> t -> t
  val (**) : t -> t -> t
  val to_i64 : t -> i64
  val (==) : t -> t -> bool
  val (<) : t -> t -> bool
  val (>) : t -> t -> bool
  val (<=) : t -> t -> bool
  val (>=) : t -> t -> bool
  val (!=) : t -> t -> bool
  val neg : t -> t
  val max : t -> t -> t
  val min : t -> t -> t
  val abs : t -> t
  val sgn : t -> t
  val highest : t
  val lowest : t
  val sum [n] : [n]t -> t
  val product [n] : [n]t -> t
  val maximum [n] : [n]t -> t
  val minimum [n] : [n]t -> t
}

module type integral = {
  include numeric
  val (//) : t -> t -> t
  val (%%) : t -> t -> t
  val (&) : t -> t -> t
  val (|) : t -> t -> t
  val (^) : t -> t -> t
  val not : t -> t
  val (<<) : t -> t -> t
  val (>>) : t -> t -> t
  val (>>>) : t -> t -> t
  val num_bits : i32
  val get_bit : i32 -> t -> i32
  val set_bit : i32 -> t -> i32 -> t
  val popc : t -> i32
  val mul_hi : (x: t) -> (y: t) -> t
  val clz : t -> i32
  val ctz : t -> i32
}

module type real = {
  include numeric
  val from_fraction : i64 -> i64 -> t
  val to_i64 : t -> i64
  val sqrt : t -> t
  val cbrt : t -> t
  val exp : t -> t
  val sin : t -> t
  val cos : t -> t
  val tan : t -> t
  val asin : t -> t
  val acos : t -> t
  val atan : t -> t
  val sinh : t -> t
  val cosh : t -> t
  val tanh : t -> t
  val asinh : t -> t
  val acosh : t -> t
  val atanh : t -> t
  val atan2 : t -> t -> t
  val hypot : t -> t -> t
  val gamma : t -> t
  val lgamma : t -> t
  val erf : t -> t
  val erfc : t -> t
  val lerp : t -> t -> t -> t
  val log : t -> t
  val log2 : t -> t
  val log10 : t -> t
  val log1p : t -> t
  val ceil : t -> t
  val floor : t -> t
  val trunc : t -> t
  val round : t -> t
  val mad : (a: t) -> (b: t) -> (c: t) -> t
  val fma : (a: t) -> (b: t) -> (c: t) -> t
  val isinf : t -> bool
  val isnan : t -> bool
  val inf : t
  val nan : t
  val pi : t
  val e : t
}

module type float = {
  include real
  type int_t
  val from_bits : int_t -> t
  val to_bits : t -> int_t
  val num_bits : i32
  val epsilon : t
  val nextafter : (x: t) -> (y: t) -> t
  val ldexp : t -> i32 -> t
  val copysign : (x: t) -> (y: t) -> t
}
