//! `cbrt`, the real cube root.
//!
//! `|x| = m 2^(3k)` with `1 <= m < 8` (`k = floor(e/3)` for `2^e <= |x| < 2^(e+1)`, the
//! scaling exact); `cbrt m` from the chord `1 + (m - 1)/7` (within 11%) by five Newton steps
//! `y <- (2y + m/y²) / 3` (the relative error squares at each: below `2^-52` after five), then
//! one more step on the exact residual `m - y³` (`y³` a double-double), which leaves about half
//! an ulp; `cbrt x = ±cbrt(m) 2^k`. Zeros, infinities and NaN come back as they are.

use super::{addc, copysign, dd_mul_f, is_inf, ldexp, mulc, split_exponent, two_prod, F64Ops};
use crate::codegen::gen::R;

/// `cbrt x`.
pub(crate) fn cbrt<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let z = a.c(0.0);
    let zero = a.eq(ax, z)?;
    let inf = is_inf(a, x)?;
    let nan = a.is_nan(x)?;
    let keep = a.or(zero, inf)?;
    let keep = a.or(keep, nan)?;
    let one = a.c(1.0);
    let axs = a.sel(keep, one, ax)?;
    let e = split_exponent(a, axs)?;
    let ef = a.i2f(e)?;
    // floor(e/3): the quotient is exact for multiples of 3, at least 1/3 from an integer
    // otherwise.
    let three = a.c(3.0);
    let third = a.div(ef, three)?;
    let kf = a.floor(third)?;
    let k = a.f2i(kf)?;
    let n3k = mulc(a, kf, -3.0)?;
    let n3k = a.f2i(n3k)?;
    let m = ldexp(a, axs, n3k)?;
    let t = addc(a, m, -1.0)?;
    let t = mulc(a, t, 1.0 / 7.0)?;
    let mut y = a.add(one, t)?;
    for _ in 0..5 {
        let y2 = a.mul(y, y)?;
        let q = a.div(m, y2)?;
        let y2x = mulc(a, y, 2.0)?;
        let s = a.add(y2x, q)?;
        y = mulc(a, s, 1.0 / 3.0)?;
    }
    // y += (m - y³) / (3y²), the residual exact.
    let sq = two_prod(a, y, y)?;
    let (c, ce) = dd_mul_f(a, sq, y)?;
    let r = a.sub(m, c)?;
    let r = a.sub(r, ce)?;
    let y2 = a.mul(y, y)?;
    let d = mulc(a, y2, 3.0)?;
    let delta = a.div(r, d)?;
    let y = a.add(y, delta)?;
    let r = ldexp(a, y, k)?;
    let r = copysign(a, r, x)?;
    a.sel(keep, x, r)
}
