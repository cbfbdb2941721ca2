//! Differential tests: every construct on Vulkan against the interpreter, at sizes around the
//! workgroup (256) and chunk boundaries, and every element type for arithmetic.

mod common;

use common::same;
use vkad_core::prim::{FloatType, IntType, PrimType, PrimValue};
use vkad_core::value::{ArrayValue, Buffer, Value};

const SIZES: [usize; 11] = [1, 2, 7, 8, 9, 255, 256, 257, 1000, 4097, 100_000];

/// A deterministic pseudo-random generator (splitmix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A value of type `t`: integers over the whole range (with edge values now and then),
    /// floats in [-100, 100) (and some small/negative/zero values).
    fn prim(&mut self, t: PrimType) -> PrimValue {
        let r = self.next();
        match t {
            PrimType::Bool => PrimValue::Bool(r & 1 == 1),
            PrimType::Int(it) => {
                let v = match r % 16 {
                    0 => 0,
                    1 => -1,
                    2 => i128::MAX,
                    3 => i128::MIN,
                    4 => 1,
                    5..=9 => (r >> 8) as i128 % 100 - 50,
                    _ => (r >> 3) as i64 as i128,
                };
                // Edge values of the type: wrap (PrimValue::int truncates).
                let v = match r % 16 {
                    2 => (1i128 << (it.bits() - 1)) - 1,
                    3 => {
                        if it.signed() {
                            -(1i128 << (it.bits() - 1))
                        } else {
                            (1i128 << it.bits()) - 1
                        }
                    }
                    _ => v,
                };
                PrimValue::int(it, v)
            }
            PrimType::Float(ft) => {
                let x = ((r >> 11) as f64 / (1u64 << 53) as f64) * 200.0 - 100.0;
                let x = match r % 13 {
                    0 => 0.0,
                    1 => 0.5,
                    2 => -2.5,
                    _ => x,
                };
                PrimValue::float(ft, x)
            }
        }
    }
    fn array(&mut self, t: PrimType, n: usize) -> Value {
        let mut b = Buffer::with_capacity(t, n);
        for _ in 0..n {
            b.push(self.prim(t));
        }
        Value::Array(ArrayValue::new(vec![n], b))
    }
    fn ints(&mut self, n: usize, lo: i64, hi: i64) -> Value {
        let mut b = Buffer::with_capacity(PrimType::I64, n);
        for _ in 0..n {
            b.push(PrimValue::I64(lo + (self.next() % (hi - lo) as u64) as i64));
        }
        Value::Array(ArrayValue::new(vec![n], b))
    }
    fn f32s(&mut self, n: usize) -> Value {
        let mut b = Buffer::with_capacity(PrimType::F32, n);
        for _ in 0..n {
            b.push(PrimValue::F32((self.next() % 1000) as f32 / 10.0 - 50.0));
        }
        Value::Array(ArrayValue::new(vec![n], b))
    }
    fn i32s(&mut self, n: usize) -> Value {
        let mut b = Buffer::with_capacity(PrimType::I32, n);
        for _ in 0..n {
            b.push(PrimValue::I32((self.next() % 2001) as i32 - 1000));
        }
        Value::Array(ArrayValue::new(vec![n], b))
    }
}

fn i64v(n: i64) -> Value {
    Value::Scalar(PrimValue::I64(n))
}

#[test]
fn map_reduce_scan_at_all_sizes() {
    let src = r#"
entry mapf (xs: []f32) (ys: []i32) = map2 (\x y -> x * 2 + f32.i32 y) xs ys
entry sum (xs: []i32) = reduce (+) 0 xs
entry fsum (xs: []f32) = reduce (+) 0 xs
entry maxi (xs: []i32) = reduce i32.max i32.lowest xs
-- Composition of affine maps: associative, not commutative (order matters).
let comp (a1: i32, b1: i32) (a2: i32, b2: i32) = (a1 * a2, b1 * a2 + b2)
entry affine (as: []i32) (bs: []i32) = reduce comp (1, 0) (zip as bs)
entry scan_sum (xs: []i32) = scan (+) 0 xs
entry scan_affine (as: []i32) (bs: []i32) = unzip (scan comp (1, 0) (zip as bs))
entry scan_f (xs: []f32) = scan (+) 0 xs
"#;
    let mut rng = Rng(1);
    for &n in &SIZES {
        let xs = rng.f32s(n);
        let ys = rng.i32s(n);
        let zs = rng.i32s(n);
        same(src, "mapf", vec![xs.clone(), ys.clone()]);
        same(src, "sum", vec![ys.clone()]);
        same(src, "fsum", vec![xs.clone()]);
        same(src, "maxi", vec![ys.clone()]);
        same(src, "affine", vec![ys.clone(), zs.clone()]);
        same(src, "scan_sum", vec![ys.clone()]);
        same(src, "scan_affine", vec![ys.clone(), zs.clone()]);
        if n <= 4097 {
            same(src, "scan_f", vec![xs.clone()]);
        }
    }
}

#[test]
fn empty_inputs() {
    let src = r#"
entry sum (xs: []i32) = reduce (+) 0 xs
entry sc (xs: []i32) = scan (+) 0 xs
entry m (xs: []i32) = map (+1) xs
entry h (n: i64) (is: []i64) (vs: []i32) = hist (+) 0 n is vs
"#;
    let e = Value::Array(ArrayValue::new(vec![0], Buffer::I32(vec![])));
    let ei = Value::Array(ArrayValue::new(vec![0], Buffer::I64(vec![])));
    same(src, "sum", vec![e.clone()]);
    same(src, "sc", vec![e.clone()]);
    same(src, "m", vec![e.clone()]);
    same(src, "h", vec![i64v(5), ei, e]);
}

#[test]
fn hist_and_scatter_at_all_sizes() {
    let src = r#"
entry hadd (m: i64) (is: []i64) (vs: []i32) = hist (+) 0 m is vs
entry hmin (m: i64) (is: []i64) (vs: []i32) = hist i32.min i32.highest m is vs
entry hf (m: i64) (is: []i64) (vs: []f32) = hist (+) 0 m is (map (\x -> f32.round x) vs)
entry hd (m: i64) (is: []i64) (vs: []f32) = hist (+) 0 m is (map f64.f32 (map f32.round vs))
entry hmul (m: i64) (is: []i64) (vs: []i32) = hist (*) 1 m is (map (\v -> v % 3) vs)
entry hu8 (m: i64) (is: []i64) (vs: []i32) = hist (+) 0 m is (map u8.i32 vs)
entry sc (m: i64) (is: []i64) (vs: []i32) = scatter (replicate m 0) is vs
"#;
    let mut rng = Rng(2);
    for &n in &SIZES {
        for m in [1i64, 7, 300] {
            let is = rng.ints(n, -2, m + 2);
            let vs = rng.i32s(n);
            let fs = rng.f32s(n);
            same(src, "hadd", vec![i64v(m), is.clone(), vs.clone()]);
            same(src, "hmin", vec![i64v(m), is.clone(), vs.clone()]);
            same(src, "hf", vec![i64v(m), is.clone(), fs.clone()]);
            same(src, "hd", vec![i64v(m), is.clone(), fs.clone()]);
            same(src, "hmul", vec![i64v(m), is.clone(), vs.clone()]);
            same(src, "hu8", vec![i64v(m), is.clone(), vs.clone()]);
            same(src, "sc", vec![i64v(m), is.clone(), vs.clone()]);
        }
    }
}

#[test]
fn array_operations_at_all_sizes() {
    let src = r#"
entry io (n: i64) = iota n
entry io8 (n: i64) = map (\i -> i8.i64 i) (iota n)
entry rep (n: i64) = replicate n 3.5f32
entry rep2 (n: i64) (xs: []i32) = replicate 3 xs |> map (\r -> r[n-1])
entry rev (xs: []i32) = xs[::-1]
entry strided (xs: []i32) = xs[1::3]
entry cat (xs: []i32) (ys: []i32) = concat xs (reverse ys)
entry upd (xs: *[]i32) (i: i64) = xs with [i] = 42
entry upd_slice (xs: *[]i32) = let n = length xs in xs with [n/2:] = replicate (n - n/2) 7
entry tr [n][m] (a: [n][m]i32) = transpose a
entry copyrow [n][m] (a: [n][m]i32) = (copy a[n-1], a[:, 1:], a[::-1, ::2])
entry lit (x: i32) = [x, x + 1, x * 2]
"#;
    let mut rng = Rng(3);
    for &n in &SIZES {
        let xs = rng.i32s(n);
        let ys = rng.i32s(n / 2 + 1);
        same(src, "io", vec![i64v(n as i64)]);
        same(src, "io8", vec![i64v(n as i64)]);
        same(src, "rep", vec![i64v(n as i64)]);
        same(src, "rep2", vec![i64v(n as i64), xs.clone()]);
        same(src, "rev", vec![xs.clone()]);
        same(src, "strided", vec![xs.clone()]);
        same(src, "cat", vec![xs.clone(), ys.clone()]);
        same(src, "upd", vec![xs.clone(), i64v(n as i64 - 1)]);
        same(src, "upd_slice", vec![xs.clone()]);
        let rows = 1.max(n / 7);
        let mut b = Buffer::with_capacity(PrimType::I32, rows * (n / rows));
        for k in 0..rows * (n / rows) {
            b.push(PrimValue::I32(k as i32));
        }
        let mat = Value::Array(ArrayValue::new(vec![rows, n / rows], b));
        same(src, "tr", vec![mat.clone()]);
        same(src, "copyrow", vec![mat]);
    }
    same(src, "lit", vec![Value::Scalar(PrimValue::I32(5))]);
}

#[test]
fn kernel_control_flow_and_nesting() {
    let src = r#"
entry branches (xs: []i32) = map (\x -> if x > 0 then x * 2 else -x) xs
entry loops (xs: []i32) = map (\x -> loop acc = 0 for i < (x % 17 + 17) % 17 do acc + i * x) xs
entry whiles (xs: []i32) = map (\x -> loop (y, k) = (x, 0) while y != 1 && k < 100 do ((if y % 2 == 0 then y / 2 else 3 * y + 1), k + 1)) xs |> map (.1)
entry gather (xs: []i32) (is: []i64) = map (\i -> xs[i]) is
entry matvec (m: [][]f32) (v: []f32) = map (\row -> reduce (+) 0 (map2 (*) row v)) m
entry matmul (a: [][]f32) (b: [][]f32) = map (\r -> map (\c -> reduce (+) 0 (map2 (*) r c)) (transpose b)) a
entry rows (m: [][]i32) = map (\r -> map (+1) r) m
entry tab (n: i64) = tabulate_2d n 3 (\i j -> i * 10 + j)
-- A free array first used inside a branch, then after it (its loads must dominate both).
entry dom (xs: []i32) (ys: []i32) = map (\x -> let a = if x > 0 then ys[0] + x else 1 in a + ys[1] + i32.i64 (length ys)) xs
"#;
    let mut rng = Rng(4);
    for &n in &[1usize, 8, 257, 1000] {
        let xs = rng.i32s(n);
        same(src, "branches", vec![xs.clone()]);
        same(src, "loops", vec![xs.clone()]);
        same(src, "whiles", vec![xs.clone()]);
        let is = rng.ints(n, 0, n as i64);
        same(src, "gather", vec![xs.clone(), is]);
        let mut b = Buffer::with_capacity(PrimType::F32, n * 5);
        for _ in 0..n * 5 {
            b.push(PrimValue::F32((rng.next() % 100) as f32 / 10.0));
        }
        let m = Value::Array(ArrayValue::new(vec![n, 5], b.clone()));
        let v = rng.f32s(5);
        same(src, "matvec", vec![m.clone(), v]);
        let bt = Value::Array(ArrayValue::new(vec![5, n], b));
        same(src, "matmul", vec![m, bt]);
        let mut bi = Buffer::with_capacity(PrimType::I32, n * 3);
        for _ in 0..n * 3 {
            bi.push(PrimValue::I32((rng.next() % 100) as i32));
        }
        same(
            src,
            "rows",
            vec![Value::Array(ArrayValue::new(vec![n, 3], bi))],
        );
        same(src, "tab", vec![i64v(n as i64)]);
        same(src, "dom", vec![xs.clone(), rng.i32s(3)]);
    }
}

#[test]
fn runtime_errors_in_kernels() {
    let src = r#"
entry oob (xs: []i32) (is: []i64) = map (\i -> xs[i]) is
entry div (xs: []i32) (ys: []i32) = map2 (/) xs ys
entry unsafe_ok (xs: []i32) = map (\i -> #[unsafe] xs[i]) (iota (length xs))
entry first (xs: []i32) (is: []i64) = map (\i -> let x = xs[i] in x / (x - x)) is
"#;
    let xs = Value::Array(ArrayValue::new(vec![3], Buffer::I32(vec![1, 2, 3])));
    let bad = Value::Array(ArrayValue::new(vec![2], Buffer::I64(vec![0, 3])));
    let zs = Value::Array(ArrayValue::new(vec![3], Buffer::I32(vec![1, 0, 1])));
    use vkad_spirv::error::{Error, RuntimeKind};
    for (entry, args, what, kind) in [
        (
            "oob",
            vec![xs.clone(), bad],
            "out of bounds",
            RuntimeKind::Bounds,
        ),
        (
            "div",
            vec![xs.clone(), zs],
            "division by zero",
            RuntimeKind::Division,
        ),
        // Each thread divides by zero; the one with an index out of bounds failed a check
        // before that, and a thread's first failed check is what it reports.
        (
            "first",
            vec![
                xs.clone(),
                Value::Array(ArrayValue::new(vec![1], Buffer::I64(vec![7]))),
            ],
            "out of bounds",
            RuntimeKind::Bounds,
        ),
    ] {
        let c = vkad_core::compile("t.fut", src).unwrap();
        let want = c
            .run_interp(entry, args.clone())
            .expect_err("must fail")
            .to_string();
        let e = common::run(src, entry, args).expect_err("must fail");
        // Same location, same kind of error.
        assert!(
            matches!(&e, Error::Runtime { kind: k, .. } if *k == kind),
            "{e:?}"
        );
        let (e, loc) = (e.to_string(), want.split(": ").next().unwrap_or(""));
        assert!(e.starts_with(loc) && e.contains(what), "{e} vs {want}");
    }
    same(src, "unsafe_ok", vec![xs]);
}

fn int_program(t: &str) -> String {
    format!(
        r#"
let nz (y: {t}) = if y == 0 then 1 else y
entry arith (xs: []{t}) (ys: []{t}) =
  map2 (\x y -> (x + y, x - y, x * y, x / nz y, x % nz y, x // nz y, x %% nz y,
                 x & y, x | y, x ^ y, {t}.min x y, {t}.max x y, {t}.abs x, {t}.sgn x, -x)) xs ys
entry shifts (xs: []{t}) (ys: []{t}) =
  map2 (\x y -> (x << (y & 15), x >> (y & 15), x >>> (y & 15), x << y, x >> y,
                 x ** ((y & 7)), {t}.popc x, {t}.clz x, {t}.ctz x, {t}.mul_hi x y)) xs ys
entry cmps (xs: []{t}) (ys: []{t}) = map2 (\x y -> (x < y, x <= y, x == y, x > y, !(x != y))) xs ys
entry convs (xs: []{t}) =
  map (\x -> (i8.{t} x, i16.{t} x, i32.{t} x, i64.{t} x, u8.{t} x, u16.{t} x, u32.{t} x,
              u64.{t} x, f32.{t} x, f64.{t} x, bool.{t} x, f16.{t} x)) xs
entry red (xs: []{t}) = (reduce (+) 0 xs, reduce {t}.max {t}.lowest xs, reduce (*) 1 xs)
"#
    )
}

fn float_program(t: &str) -> String {
    format!(
        r#"
entry arith (xs: []{t}) (ys: []{t}) =
  map2 (\x y -> (x + y, x - y, x * y, x / y, x % y, {t}.min x y, {t}.max x y, {t}.abs x,
                 {t}.sgn x, -x, x ** y, {t}.abs x ** 0.5)) xs ys
entry math (xs: []{t}) =
  map (\x -> ({t}.sqrt ({t}.abs x), {t}.exp (x / 50), {t}.log ({t}.abs x + 1), {t}.sin x, {t}.cos x,
              {t}.tan (x / 100), {t}.atan x, {t}.tanh (x / 10), {t}.floor x, {t}.ceil x,
              {t}.round x, {t}.trunc x, {t}.isnan x, {t}.atan2 x 3, {t}.hypot x 4,
              {t}.log2 ({t}.abs x + 1), {t}.log10 ({t}.abs x + 1), {t}.cbrt x,
              {t}.asin (x / 100), {t}.acos (x / 100), {t}.sinh (x / 20), {t}.cosh (x / 20),
              {t}.erf (x / 30), {t}.lerp x 1 0.25, {t}.fma x 2 1, {t}.copysign 3 x, {t}.log1p ({t}.abs x / 100)))
    xs
entry convs (xs: []{t}) =
  map (\x -> (i8.{t} x, i16.{t} x, i32.{t} x, i64.{t} x, u8.{t} x, u16.{t} x, u32.{t} x,
              u64.{t} x, f16.{t} x, f32.{t} x, f64.{t} x, bool.{t} x, {t}.from_bits ({t}.to_bits x))) xs
entry cmps (xs: []{t}) (ys: []{t}) = map2 (\x y -> (x < y, x <= y, x == y, x > y)) xs ys
entry red (xs: []{t}) = (reduce (+) 0 xs, reduce {t}.max (-{t}.inf) xs)
"#
    )
}

#[test]
fn every_integer_type() {
    let mut rng = Rng(5);
    for it in IntType::ALL {
        let t = PrimType::Int(it);
        let src = int_program(it.name());
        for &n in &[1usize, 9, 257] {
            let xs = rng.array(t, n);
            let ys = rng.array(t, n);
            same(&src, "arith", vec![xs.clone(), ys.clone()]);
            same(&src, "shifts", vec![xs.clone(), ys.clone()]);
            same(&src, "cmps", vec![xs.clone(), ys.clone()]);
            same(&src, "convs", vec![xs.clone()]);
            same(&src, "red", vec![xs.clone()]);
        }
    }
}

#[test]
fn every_float_type() {
    let mut rng = Rng(6);
    for ft in FloatType::ALL {
        let t = PrimType::Float(ft);
        let src = float_program(ft.name());
        for &n in &[1usize, 9, 257] {
            let xs = rng.array(t, n);
            let ys = rng.array(t, n);
            same(&src, "arith", vec![xs.clone(), ys.clone()]);
            same(&src, "math", vec![xs.clone()]);
            same(&src, "convs", vec![xs.clone()]);
            same(&src, "cmps", vec![xs.clone(), ys.clone()]);
            same(&src, "red", vec![xs.clone()]);
        }
    }
}

#[test]
fn bools() {
    let src = r#"
entry ops (xs: []bool) (ys: []bool) = map2 (\x y -> (x && y, x || y, !x, x == y, x < y, i32.bool x, f32.bool y)) xs ys
entry red (xs: []bool) = (reduce (&&) true xs, reduce (||) false xs)
entry sc (xs: []bool) = scan (||) false xs
"#;
    let mut rng = Rng(7);
    for &n in &[1usize, 9, 257, 1000] {
        let xs = rng.array(PrimType::Bool, n);
        let ys = rng.array(PrimType::Bool, n);
        same(src, "ops", vec![xs.clone(), ys]);
        same(src, "red", vec![xs.clone()]);
        same(src, "sc", vec![xs]);
    }
}

#[test]
fn vectorised_reduce_and_scan() {
    let src = r#"
entry vsum [n][m] (a: [n][m]i32) = reduce (map2 (+)) (replicate m 0) a
entry vscan [n][m] (a: [n][m]i32) = scan (map2 (+)) (replicate m 0) a
entry vmax [n][m] (a: [n][m]i32) = reduce (map2 i32.max) (replicate m i32.lowest) a
"#;
    let mut rng = Rng(8);
    for &n in &SIZES {
        for m in [1usize, 3, 300] {
            if n * m > 400_000 {
                continue;
            }
            let mut b = Buffer::with_capacity(PrimType::I32, n * m);
            for _ in 0..n * m {
                b.push(PrimValue::I32((rng.next() % 2001) as i32 - 1000));
            }
            let a = Value::Array(ArrayValue::new(vec![n, m], b));
            same(src, "vsum", vec![a.clone()]);
            same(src, "vscan", vec![a.clone()]);
            same(src, "vmax", vec![a]);
        }
    }
}

#[test]
fn hist_on_tuples() {
    let src = r#"
entry cs (m: i64) (is: []i64) (vs: []i32) =
  unzip (reduce_by_index (replicate m (0, 0)) (\(c1, s1) (c2, s2) -> (c1 + c2, s1 + s2)) (0, 0) is (map (\v -> (1, v)) vs))
entry jv (m: i64) (is: []i64) (xs: []f32) =
  jvp (\xs -> hist (+) 0 m is xs) (map f64.f32 (map f32.round xs)) (map (const 1f64) xs)
-- argmax pairs: an operator that mixes components (run by sorting, passes::hist_sort).
entry mixed [n] (m: i64) (is: [n]i64) (vs: [n]i32) =
  let f (a: i32, i: i64) (b: i32, j: i64) = if a > b || (a == b && i < j) then (a, i) else (b, j)
  in unzip (reduce_by_index (replicate m (i32.lowest, -1)) f (i32.lowest, -1) is (zip vs (iota n)))
"#;
    let mut rng = Rng(9);
    for &n in &[1usize, 9, 257, 4097] {
        let is = rng.ints(n, -1, 12);
        let vs = rng.i32s(n);
        let fs = rng.f32s(n);
        same(src, "cs", vec![i64v(10), is.clone(), vs.clone()]);
        same(src, "jv", vec![i64v(10), is.clone(), fs]);
        same(src, "mixed", vec![i64v(10), is.clone(), vs.clone()]);
        same(src, "mixed", vec![i64v(1), is, vs]);
    }
}
