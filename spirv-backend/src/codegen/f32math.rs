//! `f32` transcendental functions in kernels (`f16` ones are these, rounded; `f64` ones are
//! [`crate::codegen::f64math`]'s).
//!
//! Vulkan leaves the precision of GLSL.std.450's functions to the driver (`log`: 3 ulp, but an
//! absolute error of 2^-21 on [0.5, 2]; `atan`, `asin`, `acos`: 4096 ulp) and their results
//! undefined at some arguments (`atan2(0, 0)`, `pow` of x <= 0), and lavapipe (Mesa 22.3) uses
//! that latitude: `tests/tests/random_programs.rs`, with the interpreter's libm as reference,
//! found its `log` of subnormal numbers off by up to 4, `asin`/`acos` off by 4e-4, `atan2` of
//! zeros ±2.356 and of subnormals NaN, `acosh` below -4096 `-inf`, `asinh`/`acosh` beyond 1.8e19
//! infinite, `sinh 1e-30` 2.98e-8, `atan 1e-3` off by 2e-5 relative, `exp(-100)` 0; NVIDIA's
//! H200 driver `exp 88` off by 55 ulp and `sinh`/`cosh` of 89 infinite. So vkad computes:
//! - `exp` itself (Cephes' `expf`: subnormal results kept, no `3 + 2|x|` ulp), and from it
//!   `sinh` (from 1 on; its Taylor series below, no cancellation near 0), `cosh` (both finite
//!   up to 89.4), `erf`/`erfc` (Numerical Recipes' `erfcc` fit, `z²` split so it is exact;
//!   `erf`'s Taylor series below 1/2), `gamma`;
//! - `log`, `log2`, `log10` itself (Cephes' `logf` polynomial, [`Gen::log_parts`]), and from it
//!   `log1p` (`log(u) x / (u - 1)`, `u = 1 + x`), `asinh`, `acosh`, `atanh` (by `log1p`, no
//!   cancellation near 0 or 1; `log|x| + log 2` beyond 2^12), `lgamma`;
//! - `atan` itself (Cephes' `atanf`), and from it `atan2` (a quadrant reduction with C's special
//!   values), `asin x = atan2(x, sqrt((1-x)(1+x)))` and `acos x = atan2(sqrt((1-x)(1+x)), x)`;
//! - `sin`, `cos`, `tan` below 2^16 (Cephes' `sinf`/`cosf` polynomials after an exact
//!   reduction by π/2; NVIDIA's `Sin` of 1.8e-7 is 0, allowed by Vulkan's absolute error
//!   bound), and from them `gamma`'s reflection through an exact `sin(π x)`;
//! - `tanh` below 1 as `s / sqrt(1 + s²)` from `sinh`'s series, GLSL's `Tanh` above;
//! - `cbrt` with `Pow` (of subnormal `x` scaled by 2^24) and a Newton step;
//! - `gamma`/`lgamma` by the Lanczos series (g = 7, n = 9) in `f32`, with the reflection
//!   through an exact `sin(π x)` and C's values at the poles and infinities (not within a few
//!   ulp: `lgamma` has an absolute error up to 5e-7 near its zeros 1 and 2, `gamma` of
//!   negative arguments up to about 150 ulp).
//!
//! No division here has a divisor beyond 2^64 (Vulkan specifies `OpFDiv` up to 2^126 only, and
//! NVIDIA's `1e38 / 2e38` is 0): `atan2` scales its operands, `hypot` (in `scalar.rs`) and
//! `exp` scale by powers of two.
//!
//! Not fixed: `pow`, `tanh` from 1 on, and `sin`, `cos`, `tan` from 2^16 on are GLSL's;
//! Vulkan specifies `Sin`/`Cos`/`Tan` on [-π, π] only (lavapipe's `sin 1e10` is -1.0), and
//! `Pow` as `exp2(y log2 x)` (up to about 130 ulp for results near 1e23 on lavapipe and the
//! H200).

use crate::codegen::gen::{Gen, Ie, R};
use crate::error::Error;
use rspirv::spirv::{GlslStd450Op as GLOp, Word};
use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, LN_2, LOG10_2, LOG10_E, LOG2_E, PI};
use vkad_core::ir::MathFn;
use vkad_core::prim::FloatType;

/// The smallest normal `f32`, 2^-126.
const MIN_NORMAL: f32 = f32::MIN_POSITIVE;
/// Above this magnitude `sqrt(x² ± 1)` is `|x|` to within half an ulp.
const LOG_ABOVE: f32 = 4096.0;
/// Cephes `expf`'s polynomial (highest degree first): `e^r ≈ 1 + r + r² P(r)` on
/// [-ln 2 / 2, ln 2 / 2].
const EXP_P: [f32; 6] = [
    1.987_569_1e-4,
    1.398_199_9e-3,
    8.333_452e-3,
    4.166_579_6e-2,
    1.666_666_5e-1,
    0.5,
];
/// `erf x = 2/√π (x - x³/3 + x⁵/10 - ...)`: the coefficients of `x^(2k)` in the bracket,
/// `(-1)^k / (k! (2k + 1))`, highest first (to `x^12`; below 1e-9 relative for |x| < 1/2).
const ERF_SERIES: [f32; 7] = [
    1.0 / 9360.0,
    -1.0 / 1320.0,
    1.0 / 216.0,
    -1.0 / 42.0,
    1.0 / 10.0,
    -1.0 / 3.0,
    1.0,
];
/// `ln 2 = LN2_HI + LN2_LO`, `LN2_HI` with 9 significant bits (Cephes).
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// Cephes `logf`'s polynomial `P` (highest degree first): `log(1 + m) ≈ m - m²/2 + m³ P(m)`
/// on [√½ - 1, √2 - 1].
const LOG_P: [f32; 9] = [
    7.037_683_6e-2,
    -1.151_461e-1,
    1.167_699_9e-1,
    -1.242_014_1e-1,
    1.424_932_3e-1,
    -1.666_805_8e-1,
    2.000_071_4e-1,
    -2.499_999_4e-1,
    3.333_333e-1,
];
/// Cephes `atanf`'s polynomial (highest degree first): `atan r ≈ r + r³ P(r²)` on
/// [0, tan π/8].
const ATAN_P: [f32; 4] = [
    8.053_744_5e-2,
    -1.387_768_6e-1,
    1.997_771_1e-1,
    -3.333_295e-1,
];
const TAN_3PI_8: f32 = 2.414_213_5;
const TAN_PI_8: f32 = 0.414_213_57;

/// `π/2` in four parts, the first three of 8 significant bits (so `k` times them is exact for
/// |k| < 2^16), the last the rest rounded.
const PIO2_PARTS: [f32; 4] = [
    1.570_312_5,
    f32::from_bits(0x39fd_0000), // 4.825592041015625e-4
    f32::from_bits(0x35aa_0000), // 1.2665987014770508e-6
    9.920_936e-10,
];
/// Beyond this magnitude [`PIO2_PARTS`] no longer reduce exactly: the device's functions.
const TRIG_REDUCED_BELOW: f32 = 65536.0;
/// Cephes `sinf`'s polynomial (highest degree first): `sin r ≈ r + r³ S(r²)` on [-π/4, π/4].
const SIN_P: [f32; 3] = [-1.951_529_6e-4, 8.332_161e-3, -1.666_665_5e-1];
/// Cephes `cosf`'s polynomial: `cos r ≈ 1 - r²/2 + r⁴ C(r²)` on [-π/4, π/4].
const COS_P: [f32; 3] = [2.443_315_7e-5, -1.388_731_6e-3, 4.166_664_6e-2];

/// Which trigonometric function [`Gen::trig32`] computes.
#[derive(Clone, Copy)]
enum Trig {
    Sin,
    Cos,
    Tan,
}

/// The base of a logarithm.
#[derive(Clone, Copy)]
enum LogBase {
    E,
    Two,
    Ten,
}

impl Gen {
    /// The `f32` transcendental function `f` of `f32` registers `a`.
    pub(crate) fn f32_transcendental(&mut self, f: MathFn, a: &[Word]) -> R<Word> {
        use MathFn::*;
        let t = self.t_f32();
        let x = a[0];
        match f {
            Cbrt(_) => self.cbrt32(x),
            Exp(_) => self.exp32(x),
            Log(_) => self.log32(x, LogBase::E),
            Log2(_) => self.log32(x, LogBase::Two),
            Log10(_) => self.log32(x, LogBase::Ten),
            Log1p(_) => self.log1p32(x),
            Sin(_) => self.trig32(x, Trig::Sin),
            Cos(_) => self.trig32(x, Trig::Cos),
            Tan(_) => self.trig32(x, Trig::Tan),
            Asin(_) | Acos(_) => {
                let one = self.c_f32(1.0);
                let omx = self.b.f_sub(t, None, one, x).ie()?;
                let opx = self.b.f_add(t, None, one, x).ie()?;
                let p = self.b.f_mul(t, None, omx, opx).ie()?;
                let c = self.glsl(t, GLOp::Sqrt, &[p])?;
                if matches!(f, Asin(_)) {
                    self.atan2_32(x, c)
                } else {
                    self.atan2_32(c, x)
                }
            }
            Atan(_) => self.atan32(x),
            Sinh(_) => self.sinh32(x),
            Cosh(_) => self.cosh32(x),
            Tanh(_) => self.tanh32(x),
            Asinh(_) => self.asinh32(x),
            Acosh(_) => self.acosh32(x),
            Atanh(_) => self.atanh32(x),
            Atan2(_) => self.atan2_32(x, a[1]),
            Erf(_) => self.erf32(x, false),
            Erfc(_) => self.erf32(x, true),
            Gamma(_) => self.gamma32(x, false),
            Lgamma(_) => self.gamma32(x, true),
            _ => Err(Error::bug(format!(
                "{f:?} is not an f32 transcendental function"
            ))),
        }
    }

    /// `x` scaled by 2^24 where it is below the smallest normal number (zero and negative
    /// numbers too, whose results scaling does not change), and whether it was.
    fn scale_subnormal(&mut self, x: Word) -> R<(Word, Word)> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let min = self.c_f32(MIN_NORMAL);
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        let tiny = self.b.f_ord_less_than(bt, None, ax, min).ie()?;
        let k = self.c_f32(16_777_216.0);
        let xs = self.b.f_mul(t, None, x, k).ie()?;
        let xs = self.b.select(t, None, tiny, xs, x).ie()?;
        Ok((xs, tiny))
    }

    /// `log x`, `log2 x` or `log10 x` from [`Gen::log_parts`], with the special values: NaN
    /// below 0 (and for NaN), `-inf` at ±0, `+inf` at `+inf`.
    fn log32(&mut self, x: Word, base: LogBase) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let (e, m, y) = self.log_parts(x)?;
        let r = match base {
            LogBase::E => {
                // e ln2 + m + y with ln 2 = LN2_HI + LN2_LO (LN2_HI has 9 significant bits, so
                // e LN2_HI is exact).
                let lo = self.c_f32(LN2_LO);
                let elo = self.b.f_mul(t, None, e, lo).ie()?;
                let y = self.b.f_add(t, None, y, elo).ie()?;
                let l = self.b.f_add(t, None, m, y).ie()?;
                let hi = self.c_f32(LN2_HI);
                let ehi = self.b.f_mul(t, None, e, hi).ie()?;
                self.b.f_add(t, None, l, ehi).ie()?
            }
            LogBase::Two | LogBase::Ten => {
                let (ke, kl) = match base {
                    LogBase::Two => (1.0, LOG2_E),
                    _ => (LOG10_2, LOG10_E),
                };
                let l = self.b.f_add(t, None, m, y).ie()?;
                let kl = self.c_f32(kl);
                let l = self.b.f_mul(t, None, l, kl).ie()?;
                let e = if ke == 1.0 {
                    e
                } else {
                    let ke = self.c_f32(ke);
                    self.b.f_mul(t, None, e, ke).ie()?
                };
                self.b.f_add(t, None, e, l).ie()?
            }
        };
        let z = self.c_f32(0.0);
        let zero = self.b.f_ord_equal(bt, None, x, z).ie()?;
        let ninf = self.c_f32(f32::NEG_INFINITY);
        let r = self.b.select(t, None, zero, ninf, r).ie()?;
        let inf = self.b.is_inf(bt, None, x).ie()?;
        let r = self.b.select(t, None, inf, x, r).ie()?;
        let neg = self.b.f_ord_less_than(bt, None, x, z).ie()?;
        let nan = self.b.is_nan(bt, None, x).ie()?;
        let bad = self.b.logical_or(bt, None, neg, nan).ie()?;
        let nanc = self.c_f32(f32::NAN);
        self.b.select(t, None, bad, nanc, r).ie()
    }

    /// For a positive finite `x`: `(e, m, y)` with `log x = e ln 2 + m + y`, where `x = 2^e
    /// (1 + m)`, `1 + m` in [√½, √2), and `y ≈ log(1 + m) - m` by the minimax polynomial of
    /// Cephes' `logf` (Moshier): `y = m³ P(m) - m²/2`, within about 1 ulp. Subnormal `x` are
    /// scaled by 2^24 first (`e` corrected).
    fn log_parts(&mut self, x: Word) -> R<(Word, Word, Word)> {
        let (t, bt, u) = (self.t_f32(), self.t_bool(), self.t_u32());
        let (xs, tiny) = self.scale_subnormal(x)?;
        let b = self.b.bitcast(u, None, xs).ie()?;
        // frexp: xs = 2^(k + 1) f with f in [0.5, 1).
        let (c23, cff) = (self.c_u32(23), self.c_u32(0xff));
        let k = self.b.shift_right_logical(u, None, b, c23).ie()?;
        let k = self.b.bitwise_and(u, None, k, cff).ie()?;
        let mant = self.c_u32(0x007f_ffff);
        let half = self.c_u32(0x3f00_0000);
        let fb = self.b.bitwise_and(u, None, b, mant).ie()?;
        let fb = self.b.bitwise_or(u, None, fb, half).ie()?;
        let f = self.b.bitcast(t, None, fb).ie()?;
        let e = self.b.convert_u_to_f(t, None, k).ie()?;
        let bias = self.c_f32(126.0);
        let e = self.b.f_sub(t, None, e, bias).ie()?;
        let (c24, z) = (self.c_f32(24.0), self.c_f32(0.0));
        let corr = self.b.select(t, None, tiny, c24, z).ie()?;
        let e = self.b.f_sub(t, None, e, corr).ie()?;
        // f < √½: x = 2^(e-1) (2f), m = 2f - 1; else m = f - 1.
        let sqrth = self.c_f32(std::f32::consts::FRAC_1_SQRT_2);
        let low = self.b.f_ord_less_than(bt, None, f, sqrth).ie()?;
        let one = self.c_f32(1.0);
        let em1 = self.b.f_sub(t, None, e, one).ie()?;
        let e = self.b.select(t, None, low, em1, e).ie()?;
        let f2 = self.b.f_add(t, None, f, f).ie()?;
        let f = self.b.select(t, None, low, f2, f).ie()?;
        let m = self.b.f_sub(t, None, f, one).ie()?;
        let m2 = self.b.f_mul(t, None, m, m).ie()?;
        let p = self.horner(m, &LOG_P)?;
        let p = self.b.f_mul(t, None, p, m).ie()?;
        let p = self.b.f_mul(t, None, p, m2).ie()?;
        let h = self.c_f32(0.5);
        let hm2 = self.b.f_mul(t, None, h, m2).ie()?;
        let y = self.b.f_sub(t, None, p, hm2).ie()?;
        Ok((e, m, y))
    }

    /// `c[0] x^(n-1) + ... + c[n-1]` by Horner's rule.
    fn horner(&mut self, x: Word, c: &[f32]) -> R<Word> {
        let t = self.t_f32();
        let mut acc = self.c_f32(c[0]);
        for &k in &c[1..] {
            let m = self.b.f_mul(t, None, acc, x).ie()?;
            let k = self.c_f32(k);
            acc = self.b.f_add(t, None, m, k).ie()?;
        }
        Ok(acc)
    }

    /// `log x` for the formulas of the other functions (special values as [`Gen::log32`]).
    fn ln32(&mut self, x: Word) -> R<Word> {
        self.log32(x, LogBase::E)
    }

    /// `atan x` by Cephes' `atanf` (Moshier): |x| reduced to [0, tan π/8] by `π/2 + atan(-1/|x|)`
    /// above tan 3π/8 and `π/4 + atan((|x|-1)/(|x|+1))` above tan π/8, then an odd minimax
    /// polynomial; the sign of `x` (so `atan (-0.0)` is `-0.0`); within about 2 ulp.
    fn atan32(&mut self, x: Word) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        let one = self.c_f32(1.0);
        let (t3, t1) = (self.c_f32(TAN_3PI_8), self.c_f32(TAN_PI_8));
        let big = self.b.f_ord_greater_than(bt, None, ax, t3).ie()?;
        let mid = self.b.f_ord_greater_than(bt, None, ax, t1).ie()?;
        let m1 = self.c_f32(-1.0);
        let inv = self.b.f_div(t, None, m1, ax).ie()?;
        let num = self.b.f_sub(t, None, ax, one).ie()?;
        let den = self.b.f_add(t, None, ax, one).ie()?;
        let q = self.b.f_div(t, None, num, den).ie()?;
        let r = self.b.select(t, None, mid, q, ax).ie()?;
        let r = self.b.select(t, None, big, inv, r).ie()?;
        let (z, quarter, halfpi) = (
            self.c_f32(0.0),
            self.c_f32(FRAC_PI_4),
            self.c_f32(FRAC_PI_2),
        );
        let y0 = self.b.select(t, None, mid, quarter, z).ie()?;
        let y0 = self.b.select(t, None, big, halfpi, y0).ie()?;
        let r2 = self.b.f_mul(t, None, r, r).ie()?;
        let p = self.horner(r2, &ATAN_P)?;
        let p = self.b.f_mul(t, None, p, r2).ie()?;
        let p = self.b.f_mul(t, None, p, r).ie()?;
        let p = self.b.f_add(t, None, p, r).ie()?;
        let y = self.b.f_add(t, None, y0, p).ie()?;
        self.copysign(FloatType::F32, y, x)
    }

    /// `log1p x = log(u) * x / (u - 1)` with `u = 1 + x` (exact where `u == 1`; `log u` above
    /// 2^24, where the correction is below an ulp and `x / (u - 1)` might divide by a huge
    /// number), NaN below -1.
    fn log1p32(&mut self, x: Word) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let one = self.c_f32(1.0);
        let u = self.b.f_add(t, None, one, x).ie()?;
        let u = self.nocontract(u);
        let um1 = self.b.f_sub(t, None, u, one).ie()?;
        let um1 = self.nocontract(um1);
        let l = self.ln32(u)?;
        let q = self.b.f_div(t, None, x, um1).ie()?;
        let r = self.b.f_mul(t, None, l, q).ie()?;
        let exact = self.b.f_ord_equal(bt, None, u, one).ie()?;
        let r = self.b.select(t, None, exact, x, r).ie()?;
        let big = self.c_f32(16_777_216.0);
        let big = self.b.f_ord_greater_than(bt, None, x, big).ie()?;
        let r = self.b.select(t, None, big, l, r).ie()?;
        let inf = self.b.is_inf(bt, None, u).ie()?;
        let r = self.b.select(t, None, inf, u, r).ie()?;
        let m1 = self.c_f32(-1.0);
        let below = self.b.f_ord_less_than(bt, None, x, m1).ie()?;
        let nan = self.c_f32(f32::NAN);
        self.b.select(t, None, below, nan, r).ie()
    }

    /// `exp x` by Cephes' `expf` (Moshier): `x = n ln 2 + r` with `n = round(x log2 e)` (`ln 2`
    /// in two parts, so `r` is exact), `e^r` by a degree-7 polynomial, times `2^n` as two exact
    /// powers of two (a subnormal result is rounded once); `x` is clamped to [-104, 90] first,
    /// so results overflow to `+inf` and underflow to 0 by themselves; NaN is kept. Within 1-2
    /// ulp, where GLSL's `Exp` is allowed `3 + 2|x|` ulp (NVIDIA: 55 ulp at 88).
    fn exp32(&mut self, x: Word) -> R<Word> {
        self.exp_times_pow2(x, 0.0)
    }

    /// `e^x 2^k` for a small integer `k` (exactly: `k` is added to `n`), as [`Gen::exp32`].
    fn exp_times_pow2(&mut self, x: Word, k: f32) -> R<Word> {
        let (t, bt, u) = (self.t_f32(), self.t_bool(), self.t_u32());
        let nan = self.b.is_nan(bt, None, x).ie()?;
        let z = self.c_f32(0.0);
        let x0 = self.b.select(t, None, nan, z, x).ie()?;
        let (lo, hi) = (self.c_f32(-104.0), self.c_f32(90.0));
        let xc = self.glsl(t, GLOp::FClamp, &[x0, lo, hi])?;
        let (l2e, half) = (self.c_f32(LOG2_E), self.c_f32(0.5));
        let n = self.b.f_mul(t, None, xc, l2e).ie()?;
        let n = self.b.f_add(t, None, n, half).ie()?;
        let n = self.glsl(t, GLOp::Floor, &[n])?;
        let (c1, c2) = (self.c_f32(LN2_HI), self.c_f32(LN2_LO));
        let nc1 = self.b.f_mul(t, None, n, c1).ie()?;
        let r = self.b.f_sub(t, None, xc, nc1).ie()?;
        let nc2 = self.b.f_mul(t, None, n, c2).ie()?;
        let r = self.b.f_sub(t, None, r, nc2).ie()?;
        let r2 = self.b.f_mul(t, None, r, r).ie()?;
        let p = self.horner(r, &EXP_P)?;
        let p = self.b.f_mul(t, None, p, r2).ie()?;
        let p = self.b.f_add(t, None, p, r).ie()?;
        let one = self.c_f32(1.0);
        let p = self.b.f_add(t, None, p, one).ie()?;
        // 2^(n + k) = 2^n1 2^n2 with n1 = floor((n + k)/2), both in about [-76, 64].
        let n = if k == 0.0 {
            n
        } else {
            let k = self.c_f32(k);
            self.b.f_add(t, None, n, k).ie()?
        };
        let n1 = self.b.f_mul(t, None, n, half).ie()?;
        let n1 = self.glsl(t, GLOp::Floor, &[n1])?;
        let n2 = self.b.f_sub(t, None, n, n1).ie()?;
        let (bias, c23) = (self.c_f32(127.0), self.c_u32(23));
        let mut e = p;
        for k in [n1, n2] {
            let kb = self.b.f_add(t, None, k, bias).ie()?;
            let kb = self.b.convert_f_to_u(u, None, kb).ie()?;
            let kb = self.b.shift_left_logical(u, None, kb, c23).ie()?;
            let s = self.b.bitcast(t, None, kb).ie()?;
            e = self.b.f_mul(t, None, e, s).ie()?;
        }
        self.b.select(t, None, nan, x, e).ie()
    }

    /// `sin x`, `cos x` or `tan x` as Cephes' `sinf`/`cosf` (Moshier): `x = k π/2 + r` with
    /// `k = round(2x/π)` and `π/2` in four parts ([`PIO2_PARTS`]; `r` is exact for |x| < 2^16),
    /// `sin r` and `cos r` on [-π/4, π/4] by minimax polynomials, chosen and negated by
    /// `k mod 4`; `tan = sin / cos`. NaN for NaN and ±inf; `sin`/`tan` keep the sign of a zero.
    /// From 2^16 on, GLSL's functions (Vulkan does not specify them there; lavapipe's
    /// `sin 1e10` is -1.0).
    fn trig32(&mut self, x: Word, f: Trig) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let z = self.c_f32(0.0);
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        let inf = self.c_f32(f32::INFINITY);
        let finite = self.b.f_ord_less_than(bt, None, ax, inf).ie()?;
        let x0 = self.b.select(t, None, finite, x, z).ie()?;
        let two_over_pi = self.c_f32(std::f32::consts::FRAC_2_PI);
        let k = self.b.f_mul(t, None, x0, two_over_pi).ie()?;
        let k = self.glsl(t, GLOp::RoundEven, &[k])?;
        let mut r = x0;
        for p in PIO2_PARTS {
            let p = self.c_f32(p);
            let kp = self.b.f_mul(t, None, k, p).ie()?;
            r = self.b.f_sub(t, None, r, kp).ie()?;
        }
        let r2 = self.b.f_mul(t, None, r, r).ie()?;
        // sin r = r + r³ S(r²); cos r = 1 - r²/2 + r⁴ C(r²).
        let sp = self.horner(r2, &SIN_P)?;
        let sp = self.b.f_mul(t, None, sp, r2).ie()?;
        let sp = self.b.f_mul(t, None, sp, r).ie()?;
        let sin_r = self.b.f_add(t, None, sp, r).ie()?;
        let cp = self.horner(r2, &COS_P)?;
        let r4 = self.b.f_mul(t, None, r2, r2).ie()?;
        let cp = self.b.f_mul(t, None, cp, r4).ie()?;
        let half = self.c_f32(0.5);
        let hr2 = self.b.f_mul(t, None, half, r2).ie()?;
        let one = self.c_f32(1.0);
        let c1 = self.b.f_sub(t, None, one, hr2).ie()?;
        let cos_r = self.b.f_add(t, None, c1, cp).ie()?;
        // q = k mod 4 (k is an exact integer in f32).
        let quarter = self.c_f32(0.25);
        let kq = self.b.f_mul(t, None, k, quarter).ie()?;
        let kq = self.glsl(t, GLOp::Floor, &[kq])?;
        let four = self.c_f32(4.0);
        let kq = self.b.f_mul(t, None, kq, four).ie()?;
        let q = self.b.f_sub(t, None, k, kq).ie()?;
        let (c1f, c2f) = (self.c_f32(1.0), self.c_f32(2.0));
        let odd = {
            let a = self.b.f_ord_equal(bt, None, q, c1f).ie()?;
            let three = self.c_f32(3.0);
            let b = self.b.f_ord_equal(bt, None, q, three).ie()?;
            self.b.logical_or(bt, None, a, b).ie()?
        };
        let upper = self.b.f_ord_greater_than_equal(bt, None, q, c2f).ie()?;
        let neg_sin = self.b.f_negate(t, None, sin_r).ie()?;
        let neg_cos = self.b.f_negate(t, None, cos_r).ie()?;
        // sin x: q = 0: sin r, 1: cos r, 2: -sin r, 3: -cos r.
        let sin_x = {
            let pos = self.b.select(t, None, odd, cos_r, sin_r).ie()?;
            let neg = self.b.select(t, None, odd, neg_cos, neg_sin).ie()?;
            self.b.select(t, None, upper, neg, pos).ie()?
        };
        // cos x: q = 0: cos r, 1: -sin r, 2: -cos r, 3: sin r.
        let cos_x = {
            let lowv = self.b.select(t, None, odd, neg_sin, cos_r).ie()?;
            let highv = self.b.select(t, None, odd, sin_r, neg_cos).ie()?;
            self.b.select(t, None, upper, highv, lowv).ie()?
        };
        let r = match f {
            Trig::Sin => sin_x,
            Trig::Cos => cos_x,
            Trig::Tan => self.b.f_div(t, None, sin_x, cos_x).ie()?,
        };
        let r = if matches!(f, Trig::Cos) {
            r
        } else {
            let zero = self.b.f_ord_equal(bt, None, x, z).ie()?;
            self.b.select(t, None, zero, x, r).ie()?
        };
        let glsl = match f {
            Trig::Sin => GLOp::Sin,
            Trig::Cos => GLOp::Cos,
            Trig::Tan => GLOp::Tan,
        };
        let g = self.glsl(t, glsl, &[x])?;
        let lim = self.c_f32(TRIG_REDUCED_BELOW);
        let reduced = self.b.f_ord_less_than(bt, None, ax, lim).ie()?;
        let r = self.b.select(t, None, reduced, r, g).ie()?;
        let nan = self.c_f32(f32::NAN);
        self.b.select(t, None, finite, r, nan).ie()
    }

    /// `sin(π x)` by `sin(π r)` with `r = x - n`, `n = round x` (exact), negated for odd `n`:
    /// accurate near the integers, where `sin(fl(π x))` is not (`gamma` near its poles).
    fn sin_pi(&mut self, x: Word) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let n = self.glsl(t, GLOp::RoundEven, &[x])?;
        let r = self.b.f_sub(t, None, x, n).ie()?;
        let pi = self.c_f32(PI);
        let pr = self.b.f_mul(t, None, pi, r).ie()?;
        let s = self.trig32(pr, Trig::Sin)?;
        let half = self.c_f32(0.5);
        let h = self.b.f_mul(t, None, n, half).ie()?;
        let hf = self.glsl(t, GLOp::Floor, &[h])?;
        let odd = self.b.f_ord_not_equal(bt, None, h, hf).ie()?;
        let ns = self.b.f_negate(t, None, s).ie()?;
        self.b.select(t, None, odd, ns, s).ie()
    }

    /// `e^|x| / 2` (finite up to 89.4, where `e^|x|` is not).
    fn half_exp_abs(&mut self, x: Word) -> R<Word> {
        let t = self.t_f32();
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        self.exp_times_pow2(ax, -1.0)
    }

    /// `cosh x = h + 1/(4h)` with `h = e^|x| / 2` ([`Gen::half_exp_abs`]).
    fn cosh32(&mut self, x: Word) -> R<Word> {
        let t = self.t_f32();
        let h = self.half_exp_abs(x)?;
        let q = self.c_f32(0.25);
        let q = self.b.f_div(t, None, q, h).ie()?;
        self.b.f_add(t, None, h, q).ie()
    }

    /// `cbrt x = sign(x) |x|^(1/3)` (`Pow` and a Newton step), subnormal `x` scaled by 2^24 (and the result by 2^-8);
    /// NaN, infinities and zeros come back unchanged.
    fn cbrt32(&mut self, x: Word) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let (xs, tiny) = self.scale_subnormal(x)?;
        let ax = self.glsl(t, GLOp::FAbs, &[xs])?;
        let third = self.c_f32(1.0 / 3.0);
        let p = self.glsl(t, GLOp::Pow, &[ax, third])?;
        // One Newton step for p³ = |x|: p + (|x|/p² - p)/3 = (2p + |x|/p²)/3.
        let p2 = self.b.f_mul(t, None, p, p).ie()?;
        let q = self.b.f_div(t, None, ax, p2).ie()?;
        let pp = self.b.f_add(t, None, p, p).ie()?;
        let s = self.b.f_add(t, None, pp, q).ie()?;
        let p = self.b.f_mul(t, None, s, third).ie()?;
        let (k, one) = (self.c_f32(1.0 / 256.0), self.c_f32(1.0));
        let k = self.b.select(t, None, tiny, k, one).ie()?;
        let p = self.b.f_mul(t, None, p, k).ie()?;
        let s = self.glsl(t, GLOp::FSign, &[x])?;
        let r = self.b.f_mul(t, None, s, p).ie()?;
        let nan = self.b.is_nan(bt, None, x).ie()?;
        let r = self.b.select(t, None, nan, x, r).ie()?;
        let inf = self.b.is_inf(bt, None, x).ie()?;
        let r = self.b.select(t, None, inf, x, r).ie()?;
        let z = self.c_f32(0.0);
        let zero = self.b.f_ord_equal(bt, None, x, z).ie()?;
        self.b.select(t, None, zero, x, r).ie()
    }

    /// `atan2 y x` with C's special values: `a = atan(min(|x|,|y|) / max(|x|,|y|))` in
    /// [0, π/4] (`0` for two zeros, `π/4` for two infinities), `π/2 - a` where `|y| > |x|`,
    /// `π - a` where `x` is negative or `-0`, with the sign of `y`; NaN where either is.
    fn atan2_32(&mut self, y: Word, x: Word) -> R<Word> {
        let (t, bt, u) = (self.t_f32(), self.t_bool(), self.t_u32());
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        let ay = self.glsl(t, GLOp::FAbs, &[y])?;
        let num = self.glsl(t, GLOp::FMin, &[ax, ay])?;
        let den = self.glsl(t, GLOp::FMax, &[ax, ay])?;
        // Both scaled by 2^-64 where the divisor is above 2^64: Vulkan specifies division for
        // divisors up to 2^126 only (NVIDIA's `1e38 / 2e38` is 0).
        let lim = self.c_f32(18_446_744_073_709_551_616.0);
        let huge = self.b.f_ord_greater_than(bt, None, den, lim).ie()?;
        let (down, one) = (
            self.c_f32(1.0 / 18_446_744_073_709_551_616.0),
            self.c_f32(1.0),
        );
        let k = self.b.select(t, None, huge, down, one).ie()?;
        let num = self.b.f_mul(t, None, num, k).ie()?;
        let den = self.b.f_mul(t, None, den, k).ie()?;
        let q = self.b.f_div(t, None, num, den).ie()?;
        let a = self.atan32(q)?;
        let (z, quarter) = (self.c_f32(0.0), self.c_f32(FRAC_PI_4));
        let both_zero = self.b.f_ord_equal(bt, None, ax, z).ie()?;
        let diag = self.b.select(t, None, both_zero, z, quarter).ie()?;
        let eq = self.b.f_ord_equal(bt, None, ax, ay).ie()?;
        let a = self.b.select(t, None, eq, diag, a).ie()?;
        let half = self.c_f32(FRAC_PI_2);
        let steep = self.b.f_ord_greater_than(bt, None, ay, ax).ie()?;
        let comp = self.b.f_sub(t, None, half, a).ie()?;
        let a = self.b.select(t, None, steep, comp, a).ie()?;
        let pi = self.c_f32(PI);
        let sign = self.c_u32(1 << 31);
        let xb = self.b.bitcast(u, None, x).ie()?;
        let xs = self.b.bitwise_and(u, None, xb, sign).ie()?;
        let zu = self.c_u32(0);
        let left = self.b.i_not_equal(bt, None, xs, zu).ie()?;
        let refl = self.b.f_sub(t, None, pi, a).ie()?;
        let a = self.b.select(t, None, left, refl, a).ie()?;
        let r = self.copysign(FloatType::F32, a, y)?;
        let xn = self.b.is_nan(bt, None, x).ie()?;
        let yn = self.b.is_nan(bt, None, y).ie()?;
        let n = self.b.logical_or(bt, None, xn, yn).ie()?;
        let nan = self.c_f32(f32::NAN);
        self.b.select(t, None, n, nan, r).ie()
    }

    /// `asinh x`, with the sign of `x`: `log|x| + log 2` where |x| > 2^12, else
    /// `log1p(|x| + x² / (1 + sqrt(1 + x²)))` (no cancellation near 0).
    fn asinh32(&mut self, x: Word) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        let one = self.c_f32(1.0);
        let x2 = self.b.f_mul(t, None, ax, ax).ie()?;
        let s = self.b.f_add(t, None, one, x2).ie()?;
        let s = self.glsl(t, GLOp::Sqrt, &[s])?;
        let d = self.b.f_add(t, None, one, s).ie()?;
        let q = self.b.f_div(t, None, x2, d).ie()?;
        let arg = self.b.f_add(t, None, ax, q).ie()?;
        let r = self.log1p32(arg)?;
        let l = self.log_plus_ln2(ax)?;
        let lim = self.c_f32(LOG_ABOVE);
        let big = self.b.f_ord_greater_than(bt, None, ax, lim).ie()?;
        let r = self.b.select(t, None, big, l, r).ie()?;
        self.copysign(FloatType::F32, r, x)
    }

    /// `sinh x`: where |x| < 1 its Taylor series to `x^11/11!` (truncation below 2e-10, no
    /// cancellation near 0), else `h - 1/(4h)` with `h = e^|x| / 2` and the sign of `x`.
    fn sinh32(&mut self, x: Word) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let p = self.sinh_series(x)?;
        let h = self.half_exp_abs(x)?;
        let q = self.c_f32(0.25);
        let q = self.b.f_div(t, None, q, h).ie()?;
        let r = self.b.f_sub(t, None, h, q).ie()?;
        let r = self.copysign(FloatType::F32, r, x)?;
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        let one = self.c_f32(1.0);
        let small = self.b.f_ord_less_than(bt, None, ax, one).ie()?;
        self.b.select(t, None, small, p, r).ie()
    }

    /// `x + x³/3! + ... + x^11/11!` in Horner form in `x²`.
    fn sinh_series(&mut self, x: Word) -> R<Word> {
        let t = self.t_f32();
        let x2 = self.b.f_mul(t, None, x, x).ie()?;
        // 1/3!, 1/5!, ..., 1/11!, innermost last.
        let coef = [
            1.0 / 6.0,
            1.0 / 120.0,
            1.0 / 5040.0,
            1.0 / 362_880.0,
            1.0 / 39_916_800.0,
        ];
        let mut acc = self.c_f32(coef[4]);
        for &c in coef[..4].iter().rev() {
            let m = self.b.f_mul(t, None, acc, x2).ie()?;
            let c = self.c_f32(c);
            acc = self.b.f_add(t, None, c, m).ie()?;
        }
        // x + x * x² * acc
        let m = self.b.f_mul(t, None, x2, acc).ie()?;
        let m = self.b.f_mul(t, None, x, m).ie()?;
        self.b.f_add(t, None, x, m).ie()
    }

    /// `tanh x`: where |x| < 1 `s / sqrt(1 + s²)` with `s` [`Gen::sinh_series`], else GLSL's
    /// `Tanh`.
    fn tanh32(&mut self, x: Word) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let s = self.sinh_series(x)?;
        let one = self.c_f32(1.0);
        let s2 = self.b.f_mul(t, None, s, s).ie()?;
        let c2 = self.b.f_add(t, None, one, s2).ie()?;
        let c = self.glsl(t, GLOp::Sqrt, &[c2])?;
        let p = self.b.f_div(t, None, s, c).ie()?;
        let r = self.glsl(t, GLOp::Tanh, &[x])?;
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        let small = self.b.f_ord_less_than(bt, None, ax, one).ie()?;
        self.b.select(t, None, small, p, r).ie()
    }

    /// `atanh x = ½ log1p(2|x| / (1 - |x|))` with the sign of `x` (±inf at ±1, NaN beyond).
    fn atanh32(&mut self, x: Word) -> R<Word> {
        let t = self.t_f32();
        let ax = self.glsl(t, GLOp::FAbs, &[x])?;
        let one = self.c_f32(1.0);
        let d = self.b.f_sub(t, None, one, ax).ie()?;
        let n = self.b.f_add(t, None, ax, ax).ie()?;
        let q = self.b.f_div(t, None, n, d).ie()?;
        let l = self.log1p32(q)?;
        let half = self.c_f32(0.5);
        let r = self.b.f_mul(t, None, half, l).ie()?;
        // NaN beyond 1, explicitly: `2|x| / (1 - |x|)` is -2 or below there only where
        // division is exact (NVIDIA's `1/(1 - 1e38)` is -0).
        let bt = self.t_bool();
        let above = self.b.f_ord_greater_than(bt, None, ax, one).ie()?;
        let nan = self.c_f32(f32::NAN);
        let r = self.b.select(t, None, above, nan, r).ie()?;
        self.copysign(FloatType::F32, r, x)
    }

    /// `acosh x`: `log x + log 2` where x > 2^12, NaN below 1, else `log1p((x - 1) +
    /// sqrt((x - 1)(x + 1)))` (`x - 1` is exact near 1).
    fn acosh32(&mut self, x: Word) -> R<Word> {
        let (t, bt) = (self.t_f32(), self.t_bool());
        let one = self.c_f32(1.0);
        let xm1 = self.b.f_sub(t, None, x, one).ie()?;
        let xp1 = self.b.f_add(t, None, x, one).ie()?;
        let p = self.b.f_mul(t, None, xm1, xp1).ie()?;
        let s = self.glsl(t, GLOp::Sqrt, &[p])?;
        let arg = self.b.f_add(t, None, xm1, s).ie()?;
        let r = self.log1p32(arg)?;
        let l = self.log_plus_ln2(x)?;
        let lim = self.c_f32(LOG_ABOVE);
        let big = self.b.f_ord_greater_than(bt, None, x, lim).ie()?;
        let r = self.b.select(t, None, big, l, r).ie()?;
        let below = self.b.f_ord_less_than(bt, None, x, one).ie()?;
        let nan = self.c_f32(f32::NAN);
        self.b.select(t, None, below, nan, r).ie()
    }

    /// `log x + log 2` (x > 2^12 where it is used).
    fn log_plus_ln2(&mut self, x: Word) -> R<Word> {
        let t = self.t_f32();
        let l = self.ln32(x)?;
        let ln2 = self.c_f32(LN_2);
        self.b.f_add(t, None, l, ln2).ie()
    }

    /// erf / erfc in f32 (Abramowitz & Stegun 7.1.26 refined: |error| < 1.2e-7 via the
    /// complementary-error-function Chebyshev fit of Numerical Recipes, `erfcc`).
    fn erf32(&mut self, x: Word, complement: bool) -> R<Word> {
        let t = self.t_f32();
        let bt = self.t_bool();
        // |x|, at most 11 (erfc is 0 in f32 from 10.1 on; inf would make NaN below).
        let z = self.glsl(t, GLOp::FAbs, &[x])?;
        let c11 = self.c_f32(11.0);
        let z = self.glsl(t, GLOp::FMin, &[z, c11])?;
        let one = self.c_f32(1.0);
        let half = self.c_f32(0.5);
        let hz = self.b.f_mul(t, None, half, z).ie()?;
        let den = self.b.f_add(t, None, one, hz).ie()?;
        let tt = self.b.f_div(t, None, one, den).ie()?;
        let coef: [f32; 10] = [
            -1.265_512_2,
            1.000_023_7,
            0.374_091_96,
            0.096_784_18,
            -0.186_288_06,
            0.278_868_07,
            -1.135_204,
            1.488_515_9,
            -0.822_152_23,
            0.170_872_77,
        ];
        // Horner: c0 + t*(c1 + t*(...)).
        let mut acc = self.c_f32(coef[9]);
        for &c in coef[..9].iter().rev() {
            let m = self.b.f_mul(t, None, tt, acc).ie()?;
            let cc = self.c_f32(c);
            acc = self.b.f_add(t, None, cc, m).ie()?;
        }
        // exp(acc - z²) as exp(-zh²) exp((zh - z)(z + zh) + acc), zh = z to 12 bits, so that
        // zh² is exact (z² rounded would be off by 4e-6 at z = 8: 30 ulp of erfc).
        let u = self.t_u32();
        let zb = self.b.bitcast(u, None, z).ie()?;
        let m = self.c_u32(0xffff_f000);
        let zh = self.b.bitwise_and(u, None, zb, m).ie()?;
        let zh = self.b.bitcast(t, None, zh).ie()?;
        let zh2 = self.b.f_mul(t, None, zh, zh).ie()?;
        let nzh2 = self.b.f_negate(t, None, zh2).ie()?;
        let e1 = self.exp32(nzh2)?;
        let d = self.b.f_sub(t, None, zh, z).ie()?;
        let sm = self.b.f_add(t, None, z, zh).ie()?;
        let e = self.b.f_mul(t, None, d, sm).ie()?;
        let e = self.b.f_add(t, None, e, acc).ie()?;
        let e2 = self.exp32(e)?;
        let ex = self.b.f_mul(t, None, e1, e2).ie()?;
        let ans = self.b.f_mul(t, None, tt, ex).ie()?; // erfc(|x|)
        let zero = self.c_f32(0.0);
        let neg = self.b.f_ord_less_than(bt, None, x, zero).ie()?;
        let r = if complement {
            let two = self.c_f32(2.0);
            let other = self.b.f_sub(t, None, two, ans).ie()?;
            self.b.select(t, None, neg, other, ans).ie()?
        } else {
            let pos = self.b.f_sub(t, None, one, ans).ie()?;
            let negv = self.b.f_negate(t, None, pos).ie()?;
            let r = self.b.select(t, None, neg, negv, pos).ie()?;
            // Below 1/2, its Taylor series ([`ERF_SERIES`]): `1 - erfc` loses the relative
            // precision near 0 (it was -0.0 at -1e-7).
            let x2 = self.b.f_mul(t, None, x, x).ie()?;
            let p = self.horner(x2, &ERF_SERIES)?;
            let k = self.c_f32(std::f32::consts::FRAC_2_SQRT_PI);
            let p = self.b.f_mul(t, None, p, k).ie()?;
            let p = self.b.f_mul(t, None, p, x).ie()?;
            let lim = self.c_f32(0.5);
            let small = self.b.f_ord_less_than(bt, None, z, lim).ie()?;
            self.b.select(t, None, small, p, r).ie()?
        };
        let nan = self.b.is_nan(bt, None, x).ie()?;
        self.b.select(t, None, nan, x, r).ie()
    }

    /// Gamma / log-gamma in f32 (Lanczos, g = 7, n = 9; reflection for x < 0.5).
    fn gamma32(&mut self, x: Word, log: bool) -> R<Word> {
        // Computed in f32 with the Lanczos series; reflection for x < 0.5.
        let t = self.t_f32();
        let bt = self.t_bool();
        let half = self.c_f32(0.5);
        let one = self.c_f32(1.0);
        let small = self.b.f_ord_less_than(bt, None, x, half).ie()?;
        // y = small ? 1 - x : x; then lanczos on y - 1.
        let omx = self.b.f_sub(t, None, one, x).ie()?;
        let y = self.b.select(t, None, small, omx, x).ie()?;
        let xm1 = self.b.f_sub(t, None, y, one).ie()?;
        let c: [f64; 9] = [
            0.999_999_999_999_809_9,
            676.520_368_121_885_1,
            -1_259.139_216_722_402_8,
            771.323_428_777_653_1,
            -176.615_029_162_140_6,
            12.507_343_278_686_905,
            -0.138_571_095_265_720_12,
            9.984_369_578_019_572e-6,
            1.505_632_735_149_311_6e-7,
        ];
        let mut a = self.c_f32(c[0] as f32);
        for (i, &ci) in c.iter().enumerate().skip(1) {
            let k = self.c_f32(i as f32);
            let d = self.b.f_add(t, None, xm1, k).ie()?;
            let cc = self.c_f32(ci as f32);
            let q = self.b.f_div(t, None, cc, d).ie()?;
            a = self.b.f_add(t, None, a, q).ie()?;
        }
        let g7 = self.c_f32(7.5);
        let tt = self.b.f_add(t, None, xm1, g7).ie()?;
        // log Γ(y) = 0.5 log(2π) + (xm1 + 0.5) log(tt) - tt + log(a)
        let hl2pi = self.c_f32(0.918_938_5);
        let lt = self.ln32(tt)?;
        let e = self.b.f_add(t, None, xm1, half).ie()?;
        let p = self.b.f_mul(t, None, e, lt).ie()?;
        let la = self.ln32(a)?;
        let s1 = self.b.f_add(t, None, hl2pi, p).ie()?;
        let s2 = self.b.f_sub(t, None, s1, tt).ie()?;
        let lg = self.b.f_add(t, None, s2, la).ie()?;
        // Exactly 0 at the zeros of log Γ, 1 and 2 (the series is 5e-7 off there).
        let two = self.c_f32(2.0);
        let at1 = self.b.f_ord_equal(bt, None, y, one).ie()?;
        let at2 = self.b.f_ord_equal(bt, None, y, two).ie()?;
        let at = self.b.logical_or(bt, None, at1, at2).ie()?;
        let z0 = self.c_f32(0.0);
        let lg = self.b.select(t, None, at, z0, lg).ie()?;
        // Reflection: Γ(x) = π / (sin(πx) Γ(1-x)).
        let pi = self.c_f32(std::f32::consts::PI);
        let sp = self.sin_pi(x)?;
        let r = if log {
            let asp = self.glsl(t, GLOp::FAbs, &[sp])?;
            let lasp = self.ln32(asp)?;
            let lpi = self.c_f32(std::f32::consts::PI.ln());
            let d = self.b.f_sub(t, None, lpi, lasp).ie()?;
            let refl = self.b.f_sub(t, None, d, lg).ie()?;
            self.b.select(t, None, small, refl, lg).ie()
        } else {
            let gy = self.exp32(lg)?;
            let den = self.b.f_mul(t, None, sp, gy).ie()?;
            let refl = self.b.f_div(t, None, pi, den).ie()?;
            self.b.select(t, None, small, refl, gy).ie()
        }?;
        // C's values at the poles and infinities: `lgamma` is +inf at the non-positive integers
        // and ±inf; `gamma(±0) = ±inf`, NaN at the negative integers and -inf, +inf at +inf.
        let inf = self.c_f32(f32::INFINITY);
        let z = self.c_f32(0.0);
        let fl = self.glsl(t, GLOp::Floor, &[x])?;
        let int = self.b.f_ord_equal(bt, None, fl, x).ie()?;
        let nonpos = self.b.f_ord_less_than_equal(bt, None, x, z).ie()?;
        let pole = self.b.logical_and(bt, None, int, nonpos).ie()?;
        let is_inf = self.b.is_inf(bt, None, x).ie()?;
        if log {
            let special = self.b.logical_or(bt, None, pole, is_inf).ie()?;
            self.b.select(t, None, special, inf, r).ie()
        } else {
            let nan = self.c_f32(f32::NAN);
            let r = self.b.select(t, None, pole, nan, r).ie()?;
            let zero = self.b.f_ord_equal(bt, None, x, z).ie()?;
            let sinf = self.copysign(FloatType::F32, inf, x)?;
            let r = self.b.select(t, None, zero, sinf, r).ie()?;
            let pos = self.b.f_ord_greater_than(bt, None, x, z).ie()?;
            let at_inf = self.b.select(t, None, pos, inf, nan).ie()?;
            self.b.select(t, None, is_inf, at_inf, r).ie()
        }
    }
}
