//! `f64` transcendental functions computed in `f64` on the device.
//!
//! GLSL.std.450 has `Exp`, `Log`, `Sin`, `Pow`, ... for 16 and 32-bit floats only, so these
//! functions are built here from `f64` arithmetic (`+ - * /`, `sqrt`, `floor`, comparisons,
//! selects and bit operations on the representation), which Vulkan requires to be correctly
//! rounded for `+ - *` (and lavapipe rounds `/` and `sqrt` correctly too). The algorithms are
//! the classical ones of fdlibm and Cephes, written anew here with Taylor polynomials instead of
//! minimax ones: an argument reduction (Cody–Waite with constants split in parts whose products
//! with the reduction's integer are exact; Payne–Hanek with 1,280 bits of `2/π` for huge
//! trigonometric arguments), a polynomial on the reduced argument, and a reconstruction; where
//! the rounding errors of plain `f64` would reach an ulp, the critical steps are carried in
//! double-double arithmetic (a value as an unevaluated sum `hi + lo` of two `f64`s, Dekker's and
//! Knuth's error-free transformations [`two_sum`] and [`two_prod`]). Special values (NaN, ±inf,
//! ±0, overflow and underflow) follow C99 Annex F, as the interpreter's libm (Rust's `f64`
//! methods) does; the results are within 2 ulp of it (`tests.rs` measures every function on
//! the CPU through [`Cpu`], `tests/f64_math.rs` on the device).
//!
//! Every function is written once, generic over [`F64Ops`]: [`Dev`] emits SPIR-V through
//! [`Gen`], [`Cpu`] (tests) computes with Rust's `f64`, so that the accuracy of the very
//! algorithm the device runs can be checked on millions of arguments without a device. The
//! code is straight-line (selects, no branches), except the Payne–Hanek reduction of
//! [`trig`], which runs under an `if` for arguments beyond `2^20 π/2` only, and the Lanczos sum
//! of [`gamma`], under an `if` on `|x| < 8`.
//!
//! Functions: [`exp::exp`], [`log::log`], [`log::log2`], [`log::log10`],
//! [`log::log1p`], [`trig::sin`], [`trig::cos`], [`trig::tan`], [`atan::atan`],
//! [`atan::atan2`], [`atan::asin`], [`atan::acos`], [`hyperbolic::sinh`],
//! [`hyperbolic::cosh`], [`hyperbolic::tanh`], [`hyperbolic::asinh`], [`hyperbolic::acosh`],
//! [`hyperbolic::atanh`], [`pow::pow`], [`cbrt::cbrt`], [`erf::erf`], [`erf::erfc`],
//! [`gamma::gamma`], [`gamma::lgamma`] (and `exp::expm1`, which the language lacks, for the
//! tests of the core `tanh` uses).
//!
//! `gamma` and `lgamma` are the exception to "written anew": the interpreter's (`libm`'s
//! `tgamma` and `lgamma`) are several ulp away from `Γ` and `ln |Γ|` at many arguments, so they
//! follow `libm`'s algorithms (musl's Lanczos `tgamma`, fdlibm's `lgamma_r`, and fdlibm's `exp`,
//! `log`, `pow` and kernels that those call, in [`fdlibm`]) operation for operation, and give
//! the interpreter's results bit for bit wherever `+ - * /` and `sqrt` round correctly.

pub(crate) mod atan;
pub(crate) mod cbrt;
pub(crate) mod erf;
pub(crate) mod exp;
pub(crate) mod fdlibm;
pub(crate) mod gamma;
pub(crate) mod hyperbolic;
pub(crate) mod log;
pub(crate) mod pow;
pub(crate) mod trig;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

use crate::codegen::gen::{Gen, Ie, R};
use rspirv::spirv::{Decoration, GlslStd450Op as GLOp, Word};
use vkad_core::ir::MathFn;
use vkad_core::prim::{FloatType, PrimType};

/// The operations the functions are built from: `f64` values ([`F64Ops::F`]), booleans
/// ([`F64Ops::B`]) and 64-bit integers in two's complement ([`F64Ops::U`]; signed or unsigned
/// by operation). Arithmetic is IEEE, correctly rounded, never contracted or reassociated.
pub(crate) trait F64Ops {
    type F: Copy;
    type B: Copy;
    type U: Copy;
    fn c(&mut self, v: f64) -> Self::F;
    fn cu(&mut self, v: u64) -> Self::U;
    fn add(&mut self, a: Self::F, b: Self::F) -> R<Self::F>;
    fn sub(&mut self, a: Self::F, b: Self::F) -> R<Self::F>;
    fn mul(&mut self, a: Self::F, b: Self::F) -> R<Self::F>;
    fn div(&mut self, a: Self::F, b: Self::F) -> R<Self::F>;
    fn neg(&mut self, a: Self::F) -> R<Self::F>;
    fn abs(&mut self, a: Self::F) -> R<Self::F>;
    fn sqrt(&mut self, a: Self::F) -> R<Self::F>;
    fn floor(&mut self, a: Self::F) -> R<Self::F>;
    /// `a < b` (false when either is NaN).
    fn lt(&mut self, a: Self::F, b: Self::F) -> R<Self::B>;
    /// `a <= b` (false when either is NaN).
    fn le(&mut self, a: Self::F, b: Self::F) -> R<Self::B>;
    /// `a == b` (false when either is NaN).
    fn eq(&mut self, a: Self::F, b: Self::F) -> R<Self::B>;
    fn is_nan(&mut self, a: Self::F) -> R<Self::B>;
    fn and(&mut self, a: Self::B, b: Self::B) -> R<Self::B>;
    fn or(&mut self, a: Self::B, b: Self::B) -> R<Self::B>;
    fn not(&mut self, a: Self::B) -> R<Self::B>;
    /// `c ? a : b`.
    fn sel(&mut self, c: Self::B, a: Self::F, b: Self::F) -> R<Self::F>;
    fn sel_u(&mut self, c: Self::B, a: Self::U, b: Self::U) -> R<Self::U>;
    fn bits(&mut self, a: Self::F) -> R<Self::U>;
    fn of_bits(&mut self, a: Self::U) -> R<Self::F>;
    fn iadd(&mut self, a: Self::U, b: Self::U) -> R<Self::U>;
    fn isub(&mut self, a: Self::U, b: Self::U) -> R<Self::U>;
    fn imul(&mut self, a: Self::U, b: Self::U) -> R<Self::U>;
    fn band(&mut self, a: Self::U, b: Self::U) -> R<Self::U>;
    fn bor(&mut self, a: Self::U, b: Self::U) -> R<Self::U>;
    /// Shifts by `0..64` (`b`'s value).
    fn shl(&mut self, a: Self::U, b: Self::U) -> R<Self::U>;
    fn shr(&mut self, a: Self::U, b: Self::U) -> R<Self::U>;
    /// Arithmetic (sign-filling) right shift.
    fn sar(&mut self, a: Self::U, b: Self::U) -> R<Self::U>;
    fn ieq(&mut self, a: Self::U, b: Self::U) -> R<Self::B>;
    /// Signed `a < b`.
    fn slt(&mut self, a: Self::U, b: Self::U) -> R<Self::B>;
    /// A signed integer to `f64` (exact below `2^53`).
    fn i2f(&mut self, a: Self::U) -> R<Self::F>;
    /// An integral `f64` of magnitude below `2^63` to a signed integer.
    fn f2i(&mut self, a: Self::F) -> R<Self::U>;
    /// `cond ? then() : els()`, running only one of them (on the device: an `if`).
    fn branch<const N: usize>(
        &mut self,
        cond: Self::B,
        then: impl FnOnce(&mut Self) -> R<[Self::F; N]>,
        els: impl FnOnce(&mut Self) -> R<[Self::F; N]>,
    ) -> R<[Self::F; N]>;
}

/// A double-double: the unevaluated sum `hi + lo`, `|lo| <= ulp(hi) / 2`.
pub(crate) type DD<F> = (F, F);

// ----- shorthands -----------------------------------------------------------------------------

/// `x + k` for a constant `k`.
pub(crate) fn addc<A: F64Ops>(a: &mut A, x: A::F, k: f64) -> R<A::F> {
    let k = a.c(k);
    a.add(x, k)
}

/// `x * k` for a constant `k`.
pub(crate) fn mulc<A: F64Ops>(a: &mut A, x: A::F, k: f64) -> R<A::F> {
    let k = a.c(k);
    a.mul(x, k)
}

/// `x < k` for a constant `k`.
pub(crate) fn ltc<A: F64Ops>(a: &mut A, x: A::F, k: f64) -> R<A::B> {
    let k = a.c(k);
    a.lt(x, k)
}

/// `x > k` for a constant `k`.
pub(crate) fn gtc<A: F64Ops>(a: &mut A, x: A::F, k: f64) -> R<A::B> {
    let k = a.c(k);
    a.lt(k, x)
}

/// `c ? k : x` for a constant `k`.
pub(crate) fn selc<A: F64Ops>(a: &mut A, c: A::B, k: f64, x: A::F) -> R<A::F> {
    let k = a.c(k);
    a.sel(c, k, x)
}

/// `c ? -x : x`.
pub(crate) fn neg_if<A: F64Ops>(a: &mut A, c: A::B, x: A::F) -> R<A::F> {
    let n = a.neg(x)?;
    a.sel(c, n, x)
}

/// Whether `x` is ±inf.
pub(crate) fn is_inf<A: F64Ops>(a: &mut A, x: A::F) -> R<A::B> {
    let ax = a.abs(x)?;
    let inf = a.c(f64::INFINITY);
    a.eq(ax, inf)
}

/// Whether the sign bit of `x` is set (also for -0.0 and NaN).
pub(crate) fn sign_bit<A: F64Ops>(a: &mut A, x: A::F) -> R<A::B> {
    let b = a.bits(x)?;
    let z = a.cu(0);
    a.slt(b, z)
}

/// `|x|` with the sign of `s` (C `copysign`).
pub(crate) fn copysign<A: F64Ops>(a: &mut A, x: A::F, s: A::F) -> R<A::F> {
    let (xb, sb) = (a.bits(x)?, a.bits(s)?);
    let (m, sm) = (a.cu(!(1 << 63)), a.cu(1 << 63));
    let xm = a.band(xb, m)?;
    let ss = a.band(sb, sm)?;
    let r = a.bor(xm, ss)?;
    a.of_bits(r)
}

/// `c0 + x (c1 + x (c2 + ...))` (Horner).
pub(crate) fn poly<A: F64Ops>(a: &mut A, x: A::F, coefs: &[f64]) -> R<A::F> {
    let mut acc = a.c(coefs[coefs.len() - 1]);
    for &k in coefs[..coefs.len() - 1].iter().rev() {
        let m = a.mul(x, acc)?;
        acc = addc(a, m, k)?;
    }
    Ok(acc)
}

// ----- error-free transformations and double-double arithmetic --------------------------------

/// Knuth's TwoSum: `(s, e)` with `s = fl(x + y)` and `s + e = x + y` exactly.
pub(crate) fn two_sum<A: F64Ops>(a: &mut A, x: A::F, y: A::F) -> R<DD<A::F>> {
    let s = a.add(x, y)?;
    let yy = a.sub(s, x)?;
    let xx = a.sub(s, yy)?;
    let dx = a.sub(x, xx)?;
    let dy = a.sub(y, yy)?;
    Ok((s, a.add(dx, dy)?))
}

/// Dekker's FastTwoSum, for `|x| >= |y|` (or `x = 0`): `s + e = x + y` exactly.
pub(crate) fn fast_two_sum<A: F64Ops>(a: &mut A, x: A::F, y: A::F) -> R<DD<A::F>> {
    let s = a.add(x, y)?;
    let t = a.sub(s, x)?;
    Ok((s, a.sub(y, t)?))
}

/// Veltkamp's splitting: `x = hi + lo` with `hi` and `lo` of at most 26 significant bits each
/// (for `|x| < 2^995`).
pub(crate) fn split<A: F64Ops>(a: &mut A, x: A::F) -> R<DD<A::F>> {
    let c = mulc(a, x, 134_217_729.0)?; // 2^27 + 1
    let d = a.sub(c, x)?;
    let hi = a.sub(c, d)?;
    Ok((hi, a.sub(x, hi)?))
}

/// Dekker's TwoProduct: `(p, e)` with `p = fl(x y)` and `p + e = x y` exactly (barring
/// underflow, for `|x|, |y| < 2^995`).
pub(crate) fn two_prod<A: F64Ops>(a: &mut A, x: A::F, y: A::F) -> R<DD<A::F>> {
    let p = a.mul(x, y)?;
    let (xh, xl) = split(a, x)?;
    let (yh, yl) = split(a, y)?;
    let hh = a.mul(xh, yh)?;
    let hl = a.mul(xh, yl)?;
    let lh = a.mul(xl, yh)?;
    let ll = a.mul(xl, yl)?;
    let e = a.sub(hh, p)?;
    let e = a.add(e, hl)?;
    let e = a.add(e, lh)?;
    Ok((p, a.add(e, ll)?))
}

/// `x + y` in double-double (relative error about `2^-104`).
pub(crate) fn dd_add<A: F64Ops>(a: &mut A, x: DD<A::F>, y: DD<A::F>) -> R<DD<A::F>> {
    let (s, e) = two_sum(a, x.0, y.0)?;
    let (t, f) = two_sum(a, x.1, y.1)?;
    let e = a.add(e, t)?;
    let (s, e) = fast_two_sum(a, s, e)?;
    let e = a.add(e, f)?;
    fast_two_sum(a, s, e)
}

/// `x + y` for a double-double and a double.
pub(crate) fn dd_add_f<A: F64Ops>(a: &mut A, x: DD<A::F>, y: A::F) -> R<DD<A::F>> {
    let (s, e) = two_sum(a, x.0, y)?;
    let e = a.add(e, x.1)?;
    fast_two_sum(a, s, e)
}

/// `x y` in double-double.
pub(crate) fn dd_mul<A: F64Ops>(a: &mut A, x: DD<A::F>, y: DD<A::F>) -> R<DD<A::F>> {
    let (p, e) = two_prod(a, x.0, y.0)?;
    let c1 = a.mul(x.0, y.1)?;
    let c2 = a.mul(x.1, y.0)?;
    let c = a.add(c1, c2)?;
    let e = a.add(e, c)?;
    fast_two_sum(a, p, e)
}

/// `x y` for a double-double and a double.
pub(crate) fn dd_mul_f<A: F64Ops>(a: &mut A, x: DD<A::F>, y: A::F) -> R<DD<A::F>> {
    let (p, e) = two_prod(a, x.0, y)?;
    let c = a.mul(x.1, y)?;
    let e = a.add(e, c)?;
    fast_two_sum(a, p, e)
}

/// `x / y` in double-double: `q1 = x/y`, then the remainder `x - q1 y` (exact products)
/// divided by `y` once more.
pub(crate) fn dd_div<A: F64Ops>(a: &mut A, x: DD<A::F>, y: DD<A::F>) -> R<DD<A::F>> {
    let q1 = a.div(x.0, y.0)?;
    let (p, e) = two_prod(a, q1, y.0)?;
    let r = a.sub(x.0, p)?;
    let r = a.sub(r, e)?;
    let r = a.add(r, x.1)?;
    let qy = a.mul(q1, y.1)?;
    let r = a.sub(r, qy)?;
    let q2 = a.div(r, y.0)?;
    fast_two_sum(a, q1, q2)
}

// ----- integers, exponents and scaling --------------------------------------------------------

/// The integer nearest to `x` (ties to even) as `(f64, integer)`, for `|x| < 2^51`: adding and
/// subtracting `1.5 * 2^52` rounds away the fraction.
pub(crate) fn round_int<A: F64Ops>(a: &mut A, x: A::F) -> R<(A::F, A::U)> {
    let big = a.c(6_755_399_441_055_744.0);
    let t = a.add(x, big)?;
    let kf = a.sub(t, big)?;
    Ok((kf, a.f2i(kf)?))
}

/// `2^k` for an integer `-1022 <= k <= 1023`, from its bits.
pub(crate) fn pow2<A: F64Ops>(a: &mut A, k: A::U) -> R<A::F> {
    let bias = a.cu(1023);
    let e = a.iadd(k, bias)?;
    let s = a.cu(52);
    let b = a.shl(e, s)?;
    a.of_bits(b)
}

/// `x 2^k` for an integer `|k| <= 2044`, rounded once: `(x 2^(k/2)) 2^(k - k/2)`, the first
/// product exact for `1 <= |x| < 2`... and generally whenever it stays normal.
pub(crate) fn ldexp<A: F64Ops>(a: &mut A, x: A::F, k: A::U) -> R<A::F> {
    let one = a.cu(1);
    let k1 = a.sar(k, one)?;
    let k2 = a.isub(k, k1)?;
    let p1 = pow2(a, k1)?;
    let p2 = pow2(a, k2)?;
    let y = a.mul(x, p1)?;
    a.mul(y, p2)
}

/// A positive finite `x` as `(m, e)` with `x = m 2^e` and `sqrt(1/2) <= m < sqrt(2)`, `e` an
/// integer as `f64` (subnormal `x` scaled by `2^54` first).
pub(crate) fn frexp_sqrt2<A: F64Ops>(a: &mut A, x: A::F) -> R<(A::F, A::F)> {
    let tiny = ltc(a, x, f64::MIN_POSITIVE)?;
    let xs = mulc(a, x, 18_014_398_509_481_984.0)?; // 2^54
    let x = a.sel(tiny, xs, x)?;
    let b = a.bits(x)?;
    let (s52, mmask) = (a.cu(52), a.cu((1 << 52) - 1));
    let eb = a.shr(b, s52)?;
    let mb = a.band(b, mmask)?;
    // m in [1, 2): the mantissa with the exponent of 1.
    let one_bits = a.cu(1023 << 52);
    let m = a.bor(mb, one_bits)?;
    let m = a.of_bits(m)?;
    let bias = a.cu(1023);
    let e = a.isub(eb, bias)?;
    let e = a.i2f(e)?;
    let e54 = addc(a, e, -54.0)?;
    let e = a.sel(tiny, e54, e)?;
    // m >= sqrt(2): m / 2 (exact), e + 1.
    let big = gtc(a, m, std::f64::consts::SQRT_2)?;
    let mh = mulc(a, m, 0.5)?;
    let m = a.sel(big, mh, m)?;
    let e1 = addc(a, e, 1.0)?;
    let e = a.sel(big, e1, e)?;
    Ok((m, e))
}

/// `e` with `2^e <= x < 2^(e+1)`, for a positive finite `x` (subnormals included), as a signed
/// integer.
pub(crate) fn split_exponent<A: F64Ops>(a: &mut A, x: A::F) -> R<A::U> {
    let tiny = ltc(a, x, f64::MIN_POSITIVE)?;
    let xs = mulc(a, x, 18_014_398_509_481_984.0)?; // 2^54
    let x = a.sel(tiny, xs, x)?;
    let b = a.bits(x)?;
    let s52 = a.cu(52);
    let eb = a.shr(b, s52)?;
    let (b0, b54) = (a.cu(1023), a.cu(1023 + 54));
    let bias = a.sel_u(tiny, b54, b0)?;
    a.isub(eb, bias)
}

/// `sqrt x` for a double-double `x > 0`, as a double-double: the rounded root `s` and one
/// Newton step on the exact residual `x - s²`.
pub(crate) fn dd_sqrt<A: F64Ops>(a: &mut A, x: DD<A::F>) -> R<DD<A::F>> {
    let s = a.sqrt(x.0)?;
    let (q, qe) = two_prod(a, s, s)?;
    let r = a.sub(x.0, q)?;
    let r = a.sub(r, qe)?;
    let r = a.add(r, x.1)?;
    let s2 = mulc(a, s, 2.0)?;
    let c = a.div(r, s2)?;
    fast_two_sum(a, s, c)
}

// ----- the CPU implementation -----------------------------------------------------------------

/// [`F64Ops`] on the CPU, with Rust's `f64` (IEEE, correctly rounded, never contracted): for
/// the tests, and for coefficients computed in double-double when a kernel is made.
pub(crate) struct Cpu;

impl F64Ops for Cpu {
    type F = f64;
    type B = bool;
    type U = u64;
    fn c(&mut self, v: f64) -> f64 {
        v
    }
    fn cu(&mut self, v: u64) -> u64 {
        v
    }
    fn add(&mut self, a: f64, b: f64) -> R<f64> {
        Ok(a + b)
    }
    fn sub(&mut self, a: f64, b: f64) -> R<f64> {
        Ok(a - b)
    }
    fn mul(&mut self, a: f64, b: f64) -> R<f64> {
        Ok(a * b)
    }
    fn div(&mut self, a: f64, b: f64) -> R<f64> {
        Ok(a / b)
    }
    fn neg(&mut self, a: f64) -> R<f64> {
        Ok(-a)
    }
    fn abs(&mut self, a: f64) -> R<f64> {
        Ok(a.abs())
    }
    fn sqrt(&mut self, a: f64) -> R<f64> {
        Ok(a.sqrt())
    }
    fn floor(&mut self, a: f64) -> R<f64> {
        Ok(a.floor())
    }
    fn lt(&mut self, a: f64, b: f64) -> R<bool> {
        Ok(a < b)
    }
    fn le(&mut self, a: f64, b: f64) -> R<bool> {
        Ok(a <= b)
    }
    fn eq(&mut self, a: f64, b: f64) -> R<bool> {
        Ok(a == b)
    }
    fn is_nan(&mut self, a: f64) -> R<bool> {
        Ok(a.is_nan())
    }
    fn and(&mut self, a: bool, b: bool) -> R<bool> {
        Ok(a && b)
    }
    fn or(&mut self, a: bool, b: bool) -> R<bool> {
        Ok(a || b)
    }
    fn not(&mut self, a: bool) -> R<bool> {
        Ok(!a)
    }
    fn sel(&mut self, c: bool, a: f64, b: f64) -> R<f64> {
        Ok(if c { a } else { b })
    }
    fn sel_u(&mut self, c: bool, a: u64, b: u64) -> R<u64> {
        Ok(if c { a } else { b })
    }
    fn bits(&mut self, a: f64) -> R<u64> {
        Ok(a.to_bits())
    }
    fn of_bits(&mut self, a: u64) -> R<f64> {
        Ok(f64::from_bits(a))
    }
    fn iadd(&mut self, a: u64, b: u64) -> R<u64> {
        Ok(a.wrapping_add(b))
    }
    fn isub(&mut self, a: u64, b: u64) -> R<u64> {
        Ok(a.wrapping_sub(b))
    }
    fn imul(&mut self, a: u64, b: u64) -> R<u64> {
        Ok(a.wrapping_mul(b))
    }
    fn band(&mut self, a: u64, b: u64) -> R<u64> {
        Ok(a & b)
    }
    fn bor(&mut self, a: u64, b: u64) -> R<u64> {
        Ok(a | b)
    }
    fn shl(&mut self, a: u64, b: u64) -> R<u64> {
        Ok(a.checked_shl(b as u32).unwrap_or(0))
    }
    fn shr(&mut self, a: u64, b: u64) -> R<u64> {
        Ok(a.checked_shr(b as u32).unwrap_or(0))
    }
    fn sar(&mut self, a: u64, b: u64) -> R<u64> {
        Ok(((a as i64) >> (b.min(63) as u32)) as u64)
    }
    fn ieq(&mut self, a: u64, b: u64) -> R<bool> {
        Ok(a == b)
    }
    fn slt(&mut self, a: u64, b: u64) -> R<bool> {
        Ok((a as i64) < (b as i64))
    }
    fn i2f(&mut self, a: u64) -> R<f64> {
        Ok(a as i64 as f64)
    }
    fn f2i(&mut self, a: f64) -> R<u64> {
        Ok(a as i64 as u64)
    }
    fn branch<const N: usize>(
        &mut self,
        cond: bool,
        then: impl FnOnce(&mut Self) -> R<[f64; N]>,
        els: impl FnOnce(&mut Self) -> R<[f64; N]>,
    ) -> R<[f64; N]> {
        if cond {
            then(self)
        } else {
            els(self)
        }
    }
}

// ----- the device implementation --------------------------------------------------------------

/// [`F64Ops`] emitting SPIR-V into a kernel: every float operation is decorated
/// `NoContraction`, and `+0.0` operands go through [`Gen::ieee_operand`].
pub(crate) struct Dev<'a>(pub &'a mut Gen);

impl Dev<'_> {
    fn nc(&mut self, id: Word) -> Word {
        self.0.b.decorate(id, Decoration::NoContraction, []);
        id
    }
    fn f(&mut self) -> Word {
        self.0.t_f64()
    }
    fn u(&mut self) -> Word {
        self.0.t_u64()
    }
    fn bt(&mut self) -> Word {
        self.0.t_bool()
    }
    fn ops(&mut self, x: Word, y: Word) -> (Word, Word) {
        self.0.ieee_operands(FloatType::F64, x, y)
    }
}

impl F64Ops for Dev<'_> {
    type F = Word;
    type B = Word;
    type U = Word;
    fn c(&mut self, v: f64) -> Word {
        self.0.c_f64(v)
    }
    fn cu(&mut self, v: u64) -> Word {
        self.0.c_u64(v)
    }
    fn add(&mut self, a: Word, b: Word) -> R<Word> {
        let (t, (a, b)) = (self.f(), self.ops(a, b));
        let r = self.0.b.f_add(t, None, a, b).ie()?;
        Ok(self.nc(r))
    }
    fn sub(&mut self, a: Word, b: Word) -> R<Word> {
        let (t, (a, b)) = (self.f(), self.ops(a, b));
        let r = self.0.b.f_sub(t, None, a, b).ie()?;
        Ok(self.nc(r))
    }
    fn mul(&mut self, a: Word, b: Word) -> R<Word> {
        let (t, (a, b)) = (self.f(), self.ops(a, b));
        let r = self.0.b.f_mul(t, None, a, b).ie()?;
        Ok(self.nc(r))
    }
    fn div(&mut self, a: Word, b: Word) -> R<Word> {
        let (t, (a, b)) = (self.f(), self.ops(a, b));
        let r = self.0.b.f_div(t, None, a, b).ie()?;
        Ok(self.nc(r))
    }
    fn neg(&mut self, a: Word) -> R<Word> {
        let t = self.f();
        self.0.b.f_negate(t, None, a).ie()
    }
    fn abs(&mut self, a: Word) -> R<Word> {
        let t = self.f();
        self.0.glsl(t, GLOp::FAbs, &[a])
    }
    fn sqrt(&mut self, a: Word) -> R<Word> {
        let t = self.f();
        self.0.glsl(t, GLOp::Sqrt, &[a])
    }
    fn floor(&mut self, a: Word) -> R<Word> {
        let t = self.f();
        self.0.glsl(t, GLOp::Floor, &[a])
    }
    fn lt(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.f_ord_less_than(t, None, a, b).ie()
    }
    fn le(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.f_ord_less_than_equal(t, None, a, b).ie()
    }
    fn eq(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.f_ord_equal(t, None, a, b).ie()
    }
    fn is_nan(&mut self, a: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.is_nan(t, None, a).ie()
    }
    fn and(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.logical_and(t, None, a, b).ie()
    }
    fn or(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.logical_or(t, None, a, b).ie()
    }
    fn not(&mut self, a: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.logical_not(t, None, a).ie()
    }
    fn sel(&mut self, c: Word, a: Word, b: Word) -> R<Word> {
        // No constant +0.0 in a select either (see `crate::codegen::ieee`).
        let (t, (a, b)) = (self.f(), self.ops(a, b));
        self.0.b.select(t, None, c, a, b).ie()
    }
    fn sel_u(&mut self, c: Word, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.select(t, None, c, a, b).ie()
    }
    fn bits(&mut self, a: Word) -> R<Word> {
        let t = self.u();
        self.0.b.bitcast(t, None, a).ie()
    }
    fn of_bits(&mut self, a: Word) -> R<Word> {
        let t = self.f();
        self.0.b.bitcast(t, None, a).ie()
    }
    fn iadd(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.i_add(t, None, a, b).ie()
    }
    fn isub(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.i_sub(t, None, a, b).ie()
    }
    fn imul(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.i_mul(t, None, a, b).ie()
    }
    fn band(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.bitwise_and(t, None, a, b).ie()
    }
    fn bor(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.bitwise_or(t, None, a, b).ie()
    }
    fn shl(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.shift_left_logical(t, None, a, b).ie()
    }
    fn shr(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.shift_right_logical(t, None, a, b).ie()
    }
    fn sar(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.u();
        self.0.b.shift_right_arithmetic(t, None, a, b).ie()
    }
    fn ieq(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.i_equal(t, None, a, b).ie()
    }
    fn slt(&mut self, a: Word, b: Word) -> R<Word> {
        let t = self.bt();
        self.0.b.s_less_than(t, None, a, b).ie()
    }
    fn i2f(&mut self, a: Word) -> R<Word> {
        let t = self.f();
        self.0.b.convert_s_to_f(t, None, a).ie()
    }
    fn f2i(&mut self, a: Word) -> R<Word> {
        let t = self.u();
        self.0.b.convert_f_to_s(t, None, a).ie()
    }
    fn branch<const N: usize>(
        &mut self,
        cond: Word,
        then: impl FnOnce(&mut Self) -> R<[Word; N]>,
        els: impl FnOnce(&mut Self) -> R<[Word; N]>,
    ) -> R<[Word; N]> {
        let t = self.f();
        let vars: [Word; N] = std::array::from_fn(|_| self.0.var(t));
        let st = self.0.begin_if(cond)?;
        for (v, r) in vars.iter().zip(then(self)?) {
            self.0.store(*v, r)?;
        }
        self.0.else_(st)?;
        for (v, r) in vars.iter().zip(els(self)?) {
            self.0.store(*v, r)?;
        }
        self.0.end_if(st)?;
        let mut out = [0; N];
        for (o, v) in out.iter_mut().zip(vars) {
            *o = self.0.load(t, v)?;
        }
        Ok(out)
    }
}

impl Gen {
    /// `pow(x, y)` on `f64` ([`pow::pow`]).
    pub(crate) fn f64_pow(&mut self, x: Word, y: Word) -> R<Word> {
        pow::pow(&mut Dev(self), x, y)
    }

    /// `f` on `f64` arguments computed by this module, or `None` where it has no version of `f`
    /// (other widths, or functions GLSL.std.450 computes in `f64` itself).
    pub(crate) fn f64_math(&mut self, f: MathFn, args: &[Word]) -> R<Option<Word>> {
        use MathFn::*;
        let f64t = PrimType::Float(FloatType::F64);
        let ft = match f {
            Exp(t) | Log(t) | Log2(t) | Log10(t) | Log1p(t) | Sin(t) | Cos(t) | Tan(t)
            | Asin(t) | Acos(t) | Atan(t) | Atan2(t) | Sinh(t) | Cosh(t) | Tanh(t) | Asinh(t)
            | Acosh(t) | Atanh(t) | Cbrt(t) | Erf(t) | Erfc(t) | Gamma(t) | Lgamma(t) => t,
            _ => return Ok(None),
        };
        if PrimType::Float(ft) != f64t {
            return Ok(None);
        }
        let d = &mut Dev(self);
        let x = args[0];
        Ok(Some(match f {
            Exp(_) => exp::exp(d, x)?,
            Log(_) => log::log(d, x)?,
            Log2(_) => log::log2(d, x)?,
            Log10(_) => log::log10(d, x)?,
            Log1p(_) => log::log1p(d, x)?,
            Sin(_) => trig::sin(d, x)?,
            Cos(_) => trig::cos(d, x)?,
            Tan(_) => trig::tan(d, x)?,
            Asin(_) => atan::asin(d, x)?,
            Acos(_) => atan::acos(d, x)?,
            Atan(_) => atan::atan(d, x)?,
            Atan2(_) => atan::atan2(d, x, args[1])?,
            Sinh(_) => hyperbolic::sinh(d, x)?,
            Cosh(_) => hyperbolic::cosh(d, x)?,
            Tanh(_) => hyperbolic::tanh(d, x)?,
            Asinh(_) => hyperbolic::asinh(d, x)?,
            Acosh(_) => hyperbolic::acosh(d, x)?,
            Atanh(_) => hyperbolic::atanh(d, x)?,
            Cbrt(_) => cbrt::cbrt(d, x)?,
            Erf(_) => erf::erf(d, x)?,
            Erfc(_) => erf::erfc(d, x)?,
            Gamma(_) => gamma::gamma(d, x)?,
            Lgamma(_) => gamma::lgamma(d, x)?,
            _ => return Ok(None),
        }))
    }
}
