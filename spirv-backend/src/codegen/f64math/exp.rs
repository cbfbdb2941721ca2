//! `exp` and `expm1`, and the exponential core the hyperbolic functions and `pow` share.
//!
//! Reduction (Cody–Waite): `x = k ln2 + r` with `k = round(x / ln2)` and `|r| <= ln2 / 2`;
//! `ln2 = LN2_HI + LN2_LO` where `LN2_HI` has 42 significant bits, so `k LN2_HI` is exact for
//! `|k| < 2^11` and `x - k LN2_HI` is exact (Sterbenz); `r` is kept as a double-double. Then
//! `exp(x) = 2^k (1 + expm1(r))`, with `expm1(r)` from its Taylor series (degree 14: the first
//! omitted term is below `2^-63 |r|` for `|r| <= 0.35`) whose first two terms are exact in
//! double-double, so that `1 + expm1(r)` is known to about `2^-60` before its one rounding.

use super::{
    dd_add, fast_two_sum, gtc, ldexp, ltc, mulc, poly, pow2, round_int, selc, two_prod, two_sum,
    F64Ops, DD,
};
use crate::codegen::gen::R;

/// `ln 2` to 42 bits, and the rest.
pub(crate) const LN2_HI: f64 = 0.693_147_180_559_890_3;
pub(crate) const LN2_LO: f64 = 5.497_923_018_708_371e-14;
/// `1 / ln 2`.
pub(crate) const INV_LN2: f64 = std::f64::consts::LOG2_E;

/// `1/n!` for `n = 3..=14`, the coefficients of `(expm1(r) - r - r²/2) / r³`.
fn taylor3() -> Vec<f64> {
    let mut f = 6.0; // 3!
    let mut out = Vec::new();
    for n in 3..=14 {
        if n > 3 {
            f *= n as f64;
        }
        out.push(1.0 / f);
    }
    out
}

/// `expm1(r)` for a double-double `r` with `|r| <= 0.35`, as a double-double (relative error
/// about `2^-62`): `r + r²/2 + r³ p(r)`, the first two terms exact (`r²` by [`two_prod`]),
/// `p` the Taylor polynomial `1/3! + r/4! + ... + r^11/14!`.
pub(crate) fn expm1_kernel<A: F64Ops>(a: &mut A, r: DD<A::F>) -> R<DD<A::F>> {
    let (rh, rl) = r;
    let (q, qe) = two_prod(a, rh, rh)?;
    let (qh, ql) = (mulc(a, q, 0.5)?, mulc(a, qe, 0.5)?); // r²/2, exact
    let p = poly(a, rh, &taylor3())?;
    let r3 = a.mul(q, rh)?;
    let t = a.mul(r3, p)?;
    // rl (1 + r) is the first-order effect of the low part.
    let rlr = a.mul(rl, rh)?;
    let small = a.add(ql, t)?;
    let small = a.add(small, rlr)?;
    let small = a.add(small, rl)?;
    let (s, e) = fast_two_sum(a, rh, qh)?;
    let e = a.add(e, small)?;
    fast_two_sum(a, s, e)
}

/// `exp(x)` of a double-double `x` as `(s, k)`: `exp(x) = s 2^k` with `s` a double-double in
/// about `[0.7, 1.42]` and `k` an integer (as [`F64Ops::U`]). `x.0` is clamped to
/// `[-746, 711]`, beyond which `exp` underflows to 0 or overflows in any case.
pub(crate) fn exp_core<A: F64Ops>(a: &mut A, x: DD<A::F>) -> R<(DD<A::F>, A::U)> {
    let hi = gtc(a, x.0, 711.0)?;
    let xh = selc(a, hi, 711.0, x.0)?;
    let lo = ltc(a, xh, -746.0)?;
    let xh = selc(a, lo, -746.0, xh)?;
    let out = a.or(hi, lo)?;
    let xl = selc(a, out, 0.0, x.1)?;
    let q = mulc(a, xh, INV_LN2)?;
    let (kf, k) = round_int(a, q)?;
    let kh = mulc(a, kf, LN2_HI)?; // exact
    let t = a.sub(xh, kh)?; // exact
    let kl = mulc(a, kf, LN2_LO)?;
    let (rh, rl) = two_sum(a, t, xl)?;
    let nkl = a.neg(kl)?;
    let (rh, rl2) = two_sum(a, rh, nkl)?;
    let rl = a.add(rl, rl2)?;
    let r = fast_two_sum(a, rh, rl)?;
    let e = expm1_kernel(a, r)?;
    let one = a.c(1.0);
    let (s, se) = two_sum(a, one, e.0)?;
    let se = a.add(se, e.1)?;
    Ok((fast_two_sum(a, s, se)?, k))
}

/// `exp(x)`: [`exp_core`] rounded once, then scaled by `2^k` (one more rounding only for a
/// subnormal result). NaN stays NaN; `exp(±inf)` is `inf` / `+0`.
pub(crate) fn exp<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let z = a.c(0.0);
    let ((s, sl), k) = exp_core(a, (x, z))?;
    let s = a.add(s, sl)?;
    let r = ldexp(a, s, k)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}

/// `expm1(x)` as a double-double, for `|x| <= 40`: `2^k (1 + e) - 1 = 2^k e + (2^k - 1)`,
/// `e = expm1(r)` ([`expm1_kernel`]), `2^k - 1` exact as a double-double.
pub(crate) fn expm1_dd<A: F64Ops>(a: &mut A, x: DD<A::F>) -> R<DD<A::F>> {
    let q = mulc(a, x.0, INV_LN2)?;
    let (kf, k) = round_int(a, q)?;
    let kh = mulc(a, kf, LN2_HI)?;
    let t = a.sub(x.0, kh)?;
    let kl = mulc(a, kf, LN2_LO)?;
    let (rh, rl) = two_sum(a, t, x.1)?;
    let nkl = a.neg(kl)?;
    let (rh, rl2) = two_sum(a, rh, nkl)?;
    let rl = a.add(rl, rl2)?;
    let r = fast_two_sum(a, rh, rl)?;
    let (eh, el) = expm1_kernel(a, r)?;
    let p = pow2(a, k)?;
    let m1 = a.c(-1.0);
    let pm1 = two_sum(a, p, m1)?; // 2^k - 1, exact
    let eh = a.mul(eh, p)?;
    let el = a.mul(el, p)?;
    dd_add(a, pm1, (eh, el))
}

/// `expm1(x) = exp(x) - 1`, accurate near 0 (the language has no `expm1`: this checks
/// [`expm1_dd`], which `tanh` uses, in the tests): [`expm1_dd`] rounded for `|x| <= 40`; beyond,
/// `exp(x)` (the `- 1` is below half an ulp) or `-1`. `expm1(±0) = ±0`, NaN stays NaN.
#[cfg(test)]
pub(crate) fn expm1<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let z = a.c(0.0);
    let big = gtc(a, x, 40.0)?;
    let neg = ltc(a, x, -40.0)?;
    let xs = selc(a, big, 0.0, x)?;
    let xs = selc(a, neg, 0.0, xs)?;
    let (h, l) = expm1_dd(a, (xs, z))?;
    let small = a.add(h, l)?;
    // exp(x) - 1 for x > 40: 2^k s - 1, the 1 far below the last bit.
    let ((s, sl), k) = exp_core(a, (x, z))?;
    let s = a.add(s, sl)?;
    let e = ldexp(a, s, k)?;
    let r = a.sel(big, e, small)?;
    let r = selc(a, neg, -1.0, r)?;
    // ±0 and NaN as they are.
    let zero = a.eq(x, z)?;
    let nan = a.is_nan(x)?;
    let keep = a.or(zero, nan)?;
    a.sel(keep, x, r)
}
