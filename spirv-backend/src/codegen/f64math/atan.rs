//! `atan`, `atan2`, `asin` and `acos`, all from one double-double arctangent.
//!
//! [`atan_unit`]: `atan r` for `0 <= r <= 1` as `atan c + atan t` with `c = j/8` the nearest
//! eighth and `t = (r - c) / (1 + r c)` (the addition formula), `|t| <= 1/16`; `r - c` is exact
//! (Sterbenz), the division is a double-double one, `atan c` a double-double constant, and
//! `atan t = t - t³/3 + t⁵/5 - ...` to `t^17` (the next term is below `2^-68 |t|`).
//! [`atan_ratio`]: `atan(n / d)` for double-doubles `n, d >= 0`, as `π/2 - atan(d/n)` when
//! `n > d`. Then `atan x = ±atan_ratio(|x|, 1)`, `atan2` reflects by quadrant (after scaling
//! both arguments by the same power of two, so that nothing overflows),
//! `asin x = ±atan_ratio(|x|, sqrt(1 - x²))` and `acos x = atan_ratio(sqrt(1 - x²), x)`
//! (reflected for `x < 0`), with `1 - x²` exact and its square root a double-double. C99
//! Annex F gives the special cases.

use super::{
    copysign, dd_add, dd_div, dd_sqrt, fast_two_sum, gtc, is_inf, ldexp, mulc, poly, selc,
    sign_bit, split_exponent, two_prod, two_sum, F64Ops, DD,
};
use crate::codegen::gen::R;

/// `atan(j/8)` for `j = 0..=8` as double-doubles.
const ATAN_J: [(f64, f64); 9] = [
    (0.0, 0.0),
    (0.124_354_994_546_761_44, -3.125_324_142_453_938_3e-18),
    (0.244_978_663_126_864_14, 1.069_875_561_873_445_1e-17),
    (0.358_770_670_270_572_25, -2.462_381_558_263_863_5e-17),
    (0.463_647_609_000_806_1, 2.269_877_745_296_168_7e-17),
    (0.558_599_315_343_562_4, -5.455_630_548_591_626_4e-18),
    (0.643_501_108_793_284_4, 1.583_478_505_144_428_6e-17),
    (0.718_829_999_621_624_5, -2.147_838_844_445_698_3e-17),
    (std::f64::consts::FRAC_PI_4, 3.061_616_997_868_383e-17),
];
/// `π/2` and `π` as double-doubles.
const PIO2: (f64, f64) = (std::f64::consts::FRAC_PI_2, 6.123_233_995_736_766e-17);
const PI: (f64, f64) = (std::f64::consts::PI, 1.224_646_799_147_353_2e-16);

/// `(-1)^k / (2k+1)` for `k = 1..=8`.
fn atan_coefs() -> Vec<f64> {
    (1..=8)
        .map(|k| {
            let c = 1.0 / (2 * k + 1) as f64;
            if k % 2 == 1 {
                -c
            } else {
                c
            }
        })
        .collect()
}

/// `atan r` for a double-double `0 <= r <= 1` (a little more is fine), as a double-double.
fn atan_unit<A: F64Ops>(a: &mut A, r: DD<A::F>) -> R<DD<A::F>> {
    let (rh, rl) = r;
    let r8 = mulc(a, rh, 8.0)?;
    let r8 = super::addc(a, r8, 0.5)?;
    let j = a.floor(r8)?;
    let c = mulc(a, j, 0.125)?;
    // t = (r - c) / (1 + r c)
    let d = a.sub(rh, c)?; // exact
    let num = fast_two_sum(a, d, rl)?;
    let (p, pe) = two_prod(a, rh, c)?;
    let one = a.c(1.0);
    let (dh, dl) = two_sum(a, one, p)?;
    let cl = a.mul(rl, c)?;
    let dl = a.add(dl, pe)?;
    let dl = a.add(dl, cl)?;
    let den = fast_two_sum(a, dh, dl)?;
    let (th, tl) = dd_div(a, num, den)?;
    let z = a.mul(th, th)?;
    let p = poly(a, z, &atan_coefs())?;
    let tz = a.mul(th, z)?;
    let tail = a.mul(tz, p)?;
    let tail = a.add(tail, tl)?;
    let at = fast_two_sum(a, th, tail)?;
    // atan(j/8), selected by j.
    let mut ch = a.c(0.0);
    let mut cl = a.c(0.0);
    for (k, &(h, l)) in ATAN_J.iter().enumerate().skip(1) {
        let kf = a.c(k as f64);
        let hit = a.eq(j, kf)?;
        let (hv, lv) = (a.c(h), a.c(l));
        ch = a.sel(hit, hv, ch)?;
        cl = a.sel(hit, lv, cl)?;
    }
    dd_add(a, (ch, cl), at)
}

/// `atan(n / d)` in `[0, π/2]` for double-doubles `n, d >= 0`, not both zero and neither
/// infinite, of magnitudes below `2^990`.
fn atan_ratio<A: F64Ops>(a: &mut A, n: DD<A::F>, d: DD<A::F>) -> R<DD<A::F>> {
    let swap = a.lt(d.0, n.0)?;
    let num = (a.sel(swap, d.0, n.0)?, a.sel(swap, d.1, n.1)?);
    let den = (a.sel(swap, n.0, d.0)?, a.sel(swap, n.1, d.1)?);
    let r = dd_div(a, num, den)?;
    let t = atan_unit(a, r)?;
    let nt = (a.neg(t.0)?, a.neg(t.1)?);
    let p = (a.c(PIO2.0), a.c(PIO2.1));
    let rt = dd_add(a, p, nt)?;
    Ok((a.sel(swap, rt.0, t.0)?, a.sel(swap, rt.1, t.1)?))
}

/// `t` (double-double), or `π - t` where the sign bit of `x` is set, rounded to one double;
/// and that sign bit.
fn reflect_by_sign<A: F64Ops>(a: &mut A, x: A::F, t: (A::F, A::F)) -> R<(A::F, A::B)> {
    let xneg = sign_bit(a, x)?;
    let reflected = pi_minus(a, t)?;
    let h = a.sel(xneg, reflected.0, t.0)?;
    let l = a.sel(xneg, reflected.1, t.1)?;
    Ok((a.add(h, l)?, xneg))
}

/// `π - x` for a double-double `x`.
fn pi_minus<A: F64Ops>(a: &mut A, x: DD<A::F>) -> R<DD<A::F>> {
    let p = (a.c(PI.0), a.c(PI.1));
    let nx = (a.neg(x.0)?, a.neg(x.1)?);
    dd_add(a, p, nx)
}

/// `atan x`: `±atan_ratio(|x|, 1)`; `±π/2` beyond `2^60` (where `π/2 - 1/x` rounds to
/// `π/2`); `atan(±0) = ±0`, NaN stays NaN.
pub(crate) fn atan<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let huge = gtc(a, ax, 2f64.powi(60))?;
    let axs = selc(a, huge, 1.0, ax)?;
    let (z, one) = (a.c(0.0), a.c(1.0));
    let (h, l) = atan_ratio(a, (axs, z), (one, z))?;
    let r = a.add(h, l)?;
    let r = selc(a, huge, PIO2.0, r)?;
    let r = copysign(a, r, x)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}

/// `atan2(y, x)`, the angle of the point `(x, y)` in `[-π, π]`: both scaled by `2^-e`
/// (`2^e <= max(|x|, |y|) < 2^(e+1)`, exact but for what underflows, which then does not
/// matter), `a = atan_ratio(|y|, |x|)`, `π - a` for `x < 0` (or `x = -0`), the sign of `y`.
/// Special cases as C99 Annex F: the zeros and infinities of both arguments.
pub(crate) fn atan2<A: F64Ops>(a: &mut A, y: A::F, x: A::F) -> R<A::F> {
    let (ax, ay) = (a.abs(x)?, a.abs(y)?);
    let m = a.lt(ax, ay)?;
    let m = a.sel(m, ay, ax)?;
    let e = split_exponent(a, m)?;
    let z = a.cu(0);
    let ne = a.isub(z, e)?;
    let sx = ldexp(a, ax, ne)?;
    let sy = ldexp(a, ay, ne)?;
    let zf = a.c(0.0);
    let t = atan_ratio(a, (sy, zf), (sx, zf))?;
    let (r, xneg) = reflect_by_sign(a, x, t)?;
    // Both zero: 0 or π by the sign of x.
    let xz = a.eq(ax, zf)?;
    let yz = a.eq(ay, zf)?;
    let both0 = a.and(xz, yz)?;
    let pi = a.c(PI.0);
    let zero_case = a.sel(xneg, pi, zf)?;
    let r = a.sel(both0, zero_case, r)?;
    // Infinities.
    let xi = is_inf(a, x)?;
    let yi = is_inf(a, y)?;
    let (q1, q3, h2) = (
        a.c(std::f64::consts::FRAC_PI_4),
        a.c(3.0 * std::f64::consts::FRAC_PI_4),
        a.c(PIO2.0),
    );
    let corner = a.sel(xneg, q3, q1)?;
    let yinf = a.sel(xi, corner, h2)?;
    let r = a.sel(yi, yinf, r)?;
    let xinf_only = a.not(yi)?;
    let xinf_only = a.and(xi, xinf_only)?;
    let xinf = a.sel(xneg, pi, zf)?;
    let r = a.sel(xinf_only, xinf, r)?;
    let r = copysign(a, r, y)?;
    let nx = a.is_nan(x)?;
    let ny = a.is_nan(y)?;
    let nan = a.or(nx, ny)?;
    let nanv = a.add(x, y)?;
    a.sel(nan, nanv, r)
}

/// `sqrt(1 - x²)` as a double-double for `|x| <= 1`: `1 - x²` exact (a product by
/// [`two_prod`] and [`two_sum`]), its square root rounded and corrected by one Newton step on
/// the exact residual.
fn sqrt_one_minus_sq<A: F64Ops>(a: &mut A, x: A::F) -> R<DD<A::F>> {
    let (p, pe) = two_prod(a, x, x)?;
    let one = a.c(1.0);
    let np = a.neg(p)?;
    let (dh, dl) = two_sum(a, one, np)?;
    let dl = a.sub(dl, pe)?;
    let d = fast_two_sum(a, dh, dl)?;
    dd_sqrt(a, d)
}

/// `asin x = ±atan(|x| / sqrt(1 - x²))`; `±π/2` at `±1`, NaN beyond; `asin(±0) = ±0`.
pub(crate) fn asin<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let one = a.c(1.0);
    let within = a.lt(ax, one)?;
    let z = a.c(0.0);
    let axs = a.sel(within, ax, z)?;
    let s = sqrt_one_minus_sq(a, axs)?;
    let (h, l) = atan_ratio(a, (axs, z), s)?;
    let r = a.add(h, l)?;
    let is1 = a.eq(ax, one)?;
    let r = selc(a, is1, PIO2.0, r)?;
    let above = gtc(a, ax, 1.0)?;
    let r = selc(a, above, f64::NAN, r)?;
    let r = copysign(a, r, x)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}

/// `acos x = atan(sqrt(1 - x²) / x)`, reflected to `π - ...` for `x < 0`; `acos 1 = +0`,
/// `acos(-1) = π`, NaN beyond `±1`.
pub(crate) fn acos<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let one = a.c(1.0);
    let within = a.lt(ax, one)?;
    let z = a.c(0.0);
    let axs = a.sel(within, ax, z)?;
    let s = sqrt_one_minus_sq(a, axs)?;
    let t = atan_ratio(a, s, (axs, z))?;
    let (r, _) = reflect_by_sign(a, x, t)?;
    let is1 = a.eq(x, one)?;
    let r = selc(a, is1, 0.0, r)?;
    let m1 = a.c(-1.0);
    let ism1 = a.eq(x, m1)?;
    let r = selc(a, ism1, PI.0, r)?;
    let above = gtc(a, ax, 1.0)?;
    let r = selc(a, above, f64::NAN, r)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}
