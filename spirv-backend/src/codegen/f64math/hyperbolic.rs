//! `sinh`, `cosh`, `tanh` and their inverses, from the exponential and logarithm cores.
//!
//! - `sinh x = x + x³/3! + ... + x^21/21!` for `|x| < 1` (the next term is below `2^-68 |x|`);
//!   beyond, with `e^|x| = s 2^k` from [`exp_core`] (a double-double `s`),
//!   `sinh |x| = 2^(k-1) (s - 2^-2k / s)` in double-double, rounded once: no overflow before
//!   the result overflows, no cancellation left.
//! - `cosh x = 2^(k-1) (s + 2^-2k / s)` likewise, for all `x`.
//! - `tanh x = t / (t + 2)` with `t = expm1(2|x|)` a double-double ([`expm1_dd`]); `±1`
//!   beyond `|x| = 20`.
//! - `asinh x = log1p(|x| + x² / (1 + sqrt(1 + x²)))`, `acosh x = log1p(t + sqrt(t (t + 2)))`
//!   with `t = x - 1`, `atanh x = log1p(2|x| / (1 - |x|)) / 2` (fdlibm's forms, here with
//!   double-double arguments to [`log1p_dd`]); `log |x| + ln 2` beyond `2^28`.

use super::exp::{exp_core, expm1_dd, LN2_HI, LN2_LO};
use super::log::{log1p_dd, log_dd};
use super::{
    copysign, dd_add, dd_add_f, dd_div, dd_mul, dd_sqrt, gtc, is_inf, ldexp, ltc, mulc, poly, selc,
    two_prod, two_sum, F64Ops, DD,
};
use crate::codegen::gen::R;

/// `1/(2k+1)!` for `k = 1..=10`.
fn sinh_coefs() -> Vec<f64> {
    let mut f = 1.0;
    (1..=10)
        .map(|k| {
            f *= ((2 * k) * (2 * k + 1)) as f64;
            1.0 / f
        })
        .collect()
}

/// `2^(k-1) (s ± 2^-2k / s)` rounded, for `e^|x| = s 2^k` (see the module documentation).
fn half_sum<A: F64Ops>(a: &mut A, ax: A::F, plus: bool) -> R<A::F> {
    let z = a.c(0.0);
    let (s, k) = exp_core(a, (ax, z))?;
    let one = a.c(1.0);
    let inv = dd_div(a, (one, z), s)?;
    // 2^-2k, or 0 once it no longer matters (k > 40).
    let c40 = a.cu(40);
    let big = a.slt(c40, k)?;
    let kk = a.sel_u(big, c40, k)?;
    let zu = a.cu(0);
    let m2k = a.isub(zu, kk)?;
    let m2k = a.iadd(m2k, m2k)?;
    let ih = ldexp(a, inv.0, m2k)?;
    let il = ldexp(a, inv.1, m2k)?;
    let ih = a.sel(big, z, ih)?;
    let il = a.sel(big, z, il)?;
    let t = if plus {
        (ih, il)
    } else {
        (a.neg(ih)?, a.neg(il)?)
    };
    let (h, l) = dd_add(a, s, t)?;
    let r = a.add(h, l)?;
    let c1 = a.cu(1);
    let km1 = a.isub(k, c1)?;
    ldexp(a, r, km1)
}

/// `sinh x`: the Taylor series for `|x| < 1`, [`half_sum`] beyond; odd, NaN stays NaN.
pub(crate) fn sinh<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let z = a.mul(x, x)?;
    let p = poly(a, z, &sinh_coefs())?;
    let xz = a.mul(x, z)?;
    let t = a.mul(xz, p)?;
    let small = a.add(x, t)?;
    let large = half_sum(a, ax, false)?;
    let large = copysign(a, large, x)?;
    let lt1 = ltc(a, ax, 1.0)?;
    let r = a.sel(lt1, small, large)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}

/// `cosh x` ([`half_sum`]); even, NaN stays NaN.
pub(crate) fn cosh<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let r = half_sum(a, ax, true)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}

/// `tanh x = t / (t + 2)`, `t = expm1(2|x|)`; odd, `±1` beyond 20.
pub(crate) fn tanh<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let big = gtc(a, ax, 20.0)?;
    let axs = selc(a, big, 0.0, ax)?;
    let x2 = mulc(a, axs, 2.0)?;
    let z = a.c(0.0);
    let t = expm1_dd(a, (x2, z))?;
    let two = a.c(2.0);
    let d = dd_add_f(a, t, two)?;
    let (h, l) = dd_div(a, t, d)?;
    let r = a.add(h, l)?;
    let r = selc(a, big, 1.0, r)?;
    let r = copysign(a, r, x)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}

/// `log x + ln 2` as a double-double, for `asinh` and `acosh` beyond `2^28`.
fn log_twice<A: F64Ops>(a: &mut A, x: A::F) -> R<DD<A::F>> {
    let l = log_dd(a, x)?;
    let ln2 = (a.c(LN2_HI), a.c(LN2_LO));
    dd_add(a, l, ln2)
}

/// `asinh x` (odd): see the module documentation; `±inf` and NaN stay.
pub(crate) fn asinh<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let huge = gtc(a, ax, 2f64.powi(28))?;
    let axs = selc(a, huge, 1.0, ax)?;
    let sq = two_prod(a, axs, axs)?;
    let one = a.c(1.0);
    let w = dd_add_f(a, sq, one)?;
    let root = dd_sqrt(a, w)?;
    let den = dd_add_f(a, root, one)?;
    let q = dd_div(a, sq, den)?;
    let u = dd_add_f(a, q, axs)?;
    let (h, l) = log1p_dd(a, u)?;
    let small = a.add(h, l)?;
    let axl = a.sel(huge, ax, one)?;
    let (h, l) = log_twice(a, axl)?;
    let large = a.add(h, l)?;
    let r = a.sel(huge, large, small)?;
    let r = copysign(a, r, x)?;
    let inf = is_inf(a, x)?;
    let nan = a.is_nan(x)?;
    let keep = a.or(inf, nan)?;
    a.sel(keep, x, r)
}

/// `acosh x` for `x >= 1` (NaN below, `+0` at 1, `+inf` at `+inf`).
pub(crate) fn acosh<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let huge = gtc(a, x, 2f64.powi(28))?;
    let inside = gtc(a, x, 1.0)?;
    let ok = a.not(huge)?;
    let ok = a.and(inside, ok)?;
    let two = a.c(2.0);
    let xs = a.sel(ok, x, two)?;
    let m1 = a.c(-1.0);
    let t = two_sum(a, xs, m1)?;
    let tp2 = dd_add_f(a, t, two)?;
    let p = dd_mul(a, t, tp2)?;
    let root = dd_sqrt(a, p)?;
    let u = dd_add(a, t, root)?;
    let (h, l) = log1p_dd(a, u)?;
    let small = a.add(h, l)?;
    let xl = a.sel(huge, x, two)?;
    let (h, l) = log_twice(a, xl)?;
    let large = a.add(h, l)?;
    let r = a.sel(huge, large, small)?;
    let one = a.c(1.0);
    let is1 = a.eq(x, one)?;
    let r = selc(a, is1, 0.0, r)?;
    let below = ltc(a, x, 1.0)?;
    let r = selc(a, below, f64::NAN, r)?;
    let inf = a.c(f64::INFINITY);
    let pinf = a.eq(x, inf)?;
    let nan = a.is_nan(x)?;
    let keep = a.or(pinf, nan)?;
    a.sel(keep, x, r)
}

/// `atanh x` for `|x| < 1` (odd; `±inf` at `±1`, NaN beyond).
pub(crate) fn atanh<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let one = a.c(1.0);
    let within = a.lt(ax, one)?;
    let z = a.c(0.0);
    let axs = a.sel(within, ax, z)?;
    let nax = a.neg(axs)?;
    let den = two_sum(a, one, nax)?;
    let num = mulc(a, axs, 2.0)?;
    let q = dd_div(a, (num, z), den)?;
    let (h, l) = log1p_dd(a, q)?;
    let r = a.add(h, l)?;
    let r = mulc(a, r, 0.5)?;
    let is1 = a.eq(ax, one)?;
    let r = selc(a, is1, f64::INFINITY, r)?;
    let above = gtc(a, ax, 1.0)?;
    let r = selc(a, above, f64::NAN, r)?;
    let r = copysign(a, r, x)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}
