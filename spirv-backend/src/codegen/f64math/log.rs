//! `log`, `log2`, `log10`, `log1p`, and the double-double logarithm `pow` and the inverse
//! hyperbolic functions share.
//!
//! Reduction: `x = m 2^e` with `sqrt(1/2) <= m < sqrt(2)` (subnormals scaled by `2^54` first);
//! `f = m - 1` is exact. Then `log(m) = 2 atanh(s) = 2s (1 + s²/3 + s⁴/5 + ...)` with
//! `s = f / (2 + f)`, `|s| <= 0.1716`, `s² <= 0.0295` (the series of fdlibm's `log`, summed to
//! the term `s^28`, whose successor is below `2^-70` of the sum). `s`, `s²` and the first three
//! terms are double-doubles, the rest plain doubles, so `log(m)` has a relative error of about
//! `2^-68`, and `log(x) = e ln2 + log(m)` in double-double (`e LN2_HI` exact) too: what `pow`
//! needs, since `y log x` must be accurate to `2^-60` absolutely for `|y log x|` up to 745.

use super::exp::{LN2_HI, LN2_LO};
use super::{
    dd_add, dd_add_f, dd_div, dd_mul, dd_mul_f, fast_two_sum, frexp_sqrt2, ltc, mulc, poly, selc,
    two_sum, F64Ops, DD,
};
use crate::codegen::gen::R;

/// `1/3` and `1/5` as double-doubles.
const THIRD: (f64, f64) = (0.333_333_333_333_333_3, 1.850_371_707_708_594e-17);
const FIFTH: (f64, f64) = (0.2, -1.110_223_024_625_156_6e-17);
/// `1 / ln 2` and `1 / ln 10`, and `log10(2)`, as double-doubles.
const INV_LN2_DD: (f64, f64) = (std::f64::consts::LOG2_E, 2.035_527_374_093_103_3e-17);
const INV_LN10_DD: (f64, f64) = (std::f64::consts::LOG10_E, 1.098_319_650_216_765e-17);
const LOG10_2_DD: (f64, f64) = (std::f64::consts::LOG10_2, -2.803_728_127_785_170_4e-18);

/// `1/(2k+1)` for `k = 3..=14`: the series' terms after the double-double ones.
fn odd_inverses() -> Vec<f64> {
    (3..=14).map(|k| 1.0 / (2 * k + 1) as f64).collect()
}

/// `log(m)` for a double-double `m` in about `[0.7, 1.42]`, given as `f = m - 1`
/// (a double-double): the series above.
fn log_kernel<A: F64Ops>(a: &mut A, f: DD<A::F>) -> R<DD<A::F>> {
    let two = a.c(2.0);
    let (dh, dl) = two_sum(a, two, f.0)?;
    let dl = a.add(dl, f.1)?;
    let s = dd_div(a, f, (dh, dl))?;
    let z = dd_mul(a, s, s)?;
    // 1 + z/3 + z²/5 + z³ (1/7 + z/9 + ...)
    let rest = poly(a, z.0, &odd_inverses())?;
    let z3 = a.mul(z.0, z.0)?;
    let z3 = a.mul(z3, z.0)?;
    let rest = a.mul(z3, rest)?;
    let fifth = (a.c(FIFTH.0), a.c(FIFTH.1));
    let third = (a.c(THIRD.0), a.c(THIRD.1));
    let t = dd_mul(a, z, fifth)?;
    let t = dd_add(a, third, t)?;
    let t = dd_mul(a, z, t)?;
    let t = dd_add_f(a, t, rest)?;
    let one = a.c(1.0);
    let t = dd_add_f(a, t, one)?;
    let s2 = (mulc(a, s.0, 2.0)?, mulc(a, s.1, 2.0)?);
    dd_mul(a, s2, t)
}

/// `(log m, e)`: `log x = log m + e ln 2`, for a positive finite `x`.
fn log_parts<A: F64Ops>(a: &mut A, x: A::F) -> R<(DD<A::F>, A::F)> {
    let (m, e) = frexp_sqrt2(a, x)?;
    let one = a.c(1.0);
    let f = a.sub(m, one)?; // exact
    let z = a.c(0.0);
    Ok((log_kernel(a, (f, z))?, e))
}

/// `log(x)` as a double-double, for a positive finite `x` (relative error about `2^-68`).
pub(crate) fn log_dd<A: F64Ops>(a: &mut A, x: A::F) -> R<DD<A::F>> {
    let (l, e) = log_parts(a, x)?;
    let eh = mulc(a, e, LN2_HI)?; // exact
    let el = mulc(a, e, LN2_LO)?;
    let (h, lo) = fast_two_sum(a, eh, el)?;
    dd_add(a, (h, lo), l)
}

/// `log(1 + x)` for a double-double `x > -1`: `log(u) + log(1 + v/u)` with `u + v = 1 + x`
/// (`u = fl(1 + x)`, `v` exact), the second term `v/u` to first order (`|v/u| <= 2^-53`).
pub(crate) fn log1p_dd<A: F64Ops>(a: &mut A, x: DD<A::F>) -> R<DD<A::F>> {
    let one = a.c(1.0);
    let (u, v) = two_sum(a, one, x.0)?;
    let v = a.add(v, x.1)?;
    let l = log_dd(a, u)?;
    let c = a.div(v, u)?;
    dd_add_f(a, l, c)
}

/// The special cases of the logarithms: NaN for `x < 0` and NaN, `-inf` at `±0`, `+inf` at
/// `+inf`; `r` otherwise.
fn log_special<A: F64Ops>(a: &mut A, x: A::F, r: A::F) -> R<A::F> {
    let z = a.c(0.0);
    let is0 = a.eq(x, z)?;
    let r = selc(a, is0, f64::NEG_INFINITY, r)?;
    let neg = ltc(a, x, 0.0)?;
    let r = selc(a, neg, f64::NAN, r)?;
    let inf = a.c(f64::INFINITY);
    let pinf = a.eq(x, inf)?;
    let r = a.sel(pinf, x, r)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}

/// `log(x)`: [`log_dd`] rounded once.
pub(crate) fn log<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let (h, l) = log_dd(a, x)?;
    let r = a.add(h, l)?;
    log_special(a, x, r)
}

/// `log2(x) = e + log(m) / ln 2`, the product and the sum in double-double (exact for powers of
/// two).
pub(crate) fn log2<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let (l, e) = log_parts(a, x)?;
    let k = (a.c(INV_LN2_DD.0), a.c(INV_LN2_DD.1));
    let t = dd_mul(a, l, k)?;
    let (h, lo) = dd_add_f(a, t, e)?;
    let r = a.add(h, lo)?;
    log_special(a, x, r)
}

/// `log10(x) = e log10(2) + log(m) / ln 10` in double-double.
pub(crate) fn log10<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let (l, e) = log_parts(a, x)?;
    let k = (a.c(INV_LN10_DD.0), a.c(INV_LN10_DD.1));
    let t = dd_mul(a, l, k)?;
    let c = (a.c(LOG10_2_DD.0), a.c(LOG10_2_DD.1));
    let el = dd_mul_f(a, c, e)?;
    let (h, lo) = dd_add(a, t, el)?;
    let r = a.add(h, lo)?;
    log_special(a, x, r)
}

/// `log1p(x) = log(1 + x)`, accurate near 0: [`log1p_dd`] rounded. `-1` gives `-inf`, below it
/// NaN; `±0` and NaN come back as they are, `+inf` as `+inf`.
pub(crate) fn log1p<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let z = a.c(0.0);
    let (h, l) = log1p_dd(a, (x, z))?;
    let r = a.add(h, l)?;
    let m1 = a.c(-1.0);
    let is_m1 = a.eq(x, m1)?;
    let r = selc(a, is_m1, f64::NEG_INFINITY, r)?;
    let below = a.lt(x, m1)?;
    let r = selc(a, below, f64::NAN, r)?;
    let inf = a.c(f64::INFINITY);
    let pinf = a.eq(x, inf)?;
    let is0 = a.eq(x, z)?;
    let nan = a.is_nan(x)?;
    let keep = a.or(pinf, is0)?;
    let keep = a.or(keep, nan)?;
    a.sel(keep, x, r)
}
