//! `erf` and `erfc`.
//!
//! - `|x| < 2.5`: the Maclaurin series `erf x = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1))`, summed to
//!   `n = 46` (the next term is below `2^-72` for `|x| < 2.5`) in double-double throughout, with
//!   double-double coefficients: the alternating terms grow to about `e^(x²)` = 520 before they
//!   shrink, and `erfc = 1 - erf` loses 11 more bits at 2.5, which leaves some 80 bits.
//! - `|x| >= 2.5`: Laplace's continued fraction
//!   `erfc x = e^(-x²) / √π · 1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + 2 / (x + ...)))))`,
//!   58 levels in double evaluated from the bottom up (within `2^-60` of the limit for
//!   `x >= 2.5`) and the last two, and the reciprocal, in double-double (the rounding errors of
//!   the plain levels then weigh below `2^-60`); `e^(-x²)` from the exponential core with `x²`
//!   exact, scaled by `2^k` only after rounding (subnormal results round twice). `erfc` is 0
//!   beyond 27.3, `erf` 1 beyond 6.
//!
//! `erf` is odd, `erfc(-x) = 2 - erfc(x)`; `erf(±0) = ±0`, `erf(±inf) = ±1`, `erfc(+inf) = 0`,
//! `erfc(-inf) = 2`, NaN stays NaN.

use super::exp::exp_core;
use super::{
    copysign, dd_add, dd_add_f, dd_div, dd_mul, dd_mul_f, is_inf, ldexp, ltc, selc, two_prod, Cpu,
    F64Ops, DD,
};
use crate::codegen::gen::R;

/// `2/√π` and `1/√π` as double-doubles.
const TWO_OVER_SQRT_PI: (f64, f64) = (std::f64::consts::FRAC_2_SQRT_PI, 1.533_545_961_316_588e-17);
const INV_SQRT_PI: (f64, f64) = (0.564_189_583_547_756_3, 7.667_729_806_582_94e-18);
/// Where the continued fraction takes over from the series.
const SPLIT: f64 = 2.5;

/// `(-1)^n / (n! (2n+1))` for `n = 0..=46` as double-doubles, by the recurrence
/// `c_n = -c_(n-1) (2n-1) / (n (2n+1))` in double-double on the CPU (relative error below
/// `2^-98`).
fn series_coefs() -> Vec<(f64, f64)> {
    let a = &mut Cpu;
    let mut c = (1.0, 0.0);
    let mut out = vec![c];
    for n in 1..=46u32 {
        let num = dd_mul_f(a, c, -f64::from(2 * n - 1)).unwrap_or(c);
        c = dd_div(a, num, (f64::from(n * (2 * n + 1)), 0.0)).unwrap_or(c);
        out.push(c);
    }
    out
}

/// `erf |x|` for `|x| < 2.5` as a double-double (the series).
fn erf_series<A: F64Ops>(a: &mut A, ax: A::F) -> R<DD<A::F>> {
    let z = two_prod(a, ax, ax)?;
    let coefs = series_coefs();
    let last = coefs[coefs.len() - 1];
    let mut acc = (a.c(last.0), a.c(last.1));
    for &(h, l) in coefs[..coefs.len() - 1].iter().rev() {
        let m = dd_mul(a, z, acc)?;
        let c = (a.c(h), a.c(l));
        acc = dd_add(a, c, m)?;
    }
    let s = dd_mul_f(a, acc, ax)?;
    let k = (a.c(TWO_OVER_SQRT_PI.0), a.c(TWO_OVER_SQRT_PI.1));
    dd_mul(a, s, k)
}

/// `erfc x` for `2.5 <= x <= 30` as `(s, k)`, `erfc x = s 2^k` with a double-double `s` (the
/// continued fraction).
fn erfc_fraction<A: F64Ops>(a: &mut A, x: A::F) -> R<(DD<A::F>, A::U)> {
    let mut t = x;
    for k in (3..=60).rev() {
        let q = a.c(f64::from(k) / 2.0);
        let d = a.div(q, t)?;
        t = a.add(x, d)?;
    }
    let z = a.c(0.0);
    let mut tt = (t, z);
    for k in (1..=2).rev() {
        let q = (a.c(f64::from(k) / 2.0), z);
        let d = dd_div(a, q, tt)?;
        tt = dd_add_f(a, d, x)?;
    }
    let one = a.c(1.0);
    let g = dd_div(a, (one, z), tt)?;
    let (q, qe) = two_prod(a, x, x)?;
    let (nq, nqe) = (a.neg(q)?, a.neg(qe)?);
    let (e, k) = exp_core(a, (nq, nqe))?;
    let r = dd_mul(a, e, g)?;
    let c = (a.c(INV_SQRT_PI.0), a.c(INV_SQRT_PI.1));
    Ok((dd_mul(a, r, c)?, k))
}

/// `erf |x|` and `erfc |x|` as double-doubles, the latter unscaled.
struct Parts<F> {
    erf: DD<F>,
    /// `erfc |x| = erfc 2^k`.
    erfc: DD<F>,
    /// `k`, an integer as `f64`.
    k: F,
}

/// [`Parts`] of `|x|`, for finite `x`; only one of the two methods runs.
fn erf_parts<A: F64Ops>(a: &mut A, x: A::F) -> R<Parts<A::F>> {
    let ax = a.abs(x)?;
    let thirty = a.c(30.0);
    let huge = a.lt(thirty, ax)?;
    let ax = a.sel(huge, thirty, ax)?;
    let small = ltc(a, ax, SPLIT)?;
    let [eh, el, ch, cl, kf] = a.branch(
        small,
        |a| {
            let e = erf_series(a, ax)?;
            let one = a.c(1.0);
            let ne = (a.neg(e.0)?, a.neg(e.1)?);
            let c = dd_add_f(a, ne, one)?;
            let z = a.c(0.0);
            Ok([e.0, e.1, c.0, c.1, z])
        },
        |a| {
            let (c, k) = erfc_fraction(a, ax)?;
            // erf = 1 - erfc, with erfc at its scale 2^k (k <= -9 here).
            let ch = ldexp(a, c.0, k)?;
            let cl = ldexp(a, c.1, k)?;
            let one = a.c(1.0);
            let nc = (a.neg(ch)?, a.neg(cl)?);
            let e = dd_add_f(a, nc, one)?;
            let kf = a.i2f(k)?;
            Ok([e.0, e.1, c.0, c.1, kf])
        },
    )?;
    Ok(Parts {
        erf: (eh, el),
        erfc: (ch, cl),
        k: kf,
    })
}

/// `erf x`.
pub(crate) fn erf<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let (h, l) = erf_parts(a, x)?.erf;
    let r = a.add(h, l)?;
    let inf = is_inf(a, x)?;
    let r = selc(a, inf, 1.0, r)?;
    let r = copysign(a, r, x)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}

/// `erfc x`: `erfc |x|` for `x >= 0`, `2 - erfc |x|` for `x < 0`.
pub(crate) fn erfc<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let p = erf_parts(a, x)?;
    let (c, k) = (p.erfc, a.f2i(p.k)?);
    // x >= 0: round at scale 1, then 2^k (one more rounding only for a subnormal result).
    let r = a.add(c.0, c.1)?;
    let pos = ldexp(a, r, k)?;
    // x < 0: 2 - erfc |x| (k is 0 on the series side; on the other, erfc |x| < 2^-9).
    let ch = ldexp(a, c.0, k)?;
    let cl = ldexp(a, c.1, k)?;
    let two = a.c(2.0);
    let nc = (a.neg(ch)?, a.neg(cl)?);
    let (h, l) = dd_add_f(a, nc, two)?;
    let neg = a.add(h, l)?;
    let xneg = ltc(a, x, 0.0)?;
    let r = a.sel(xneg, neg, pos)?;
    let inf = is_inf(a, x)?;
    let z = a.c(0.0);
    let infv = selc(a, xneg, 2.0, z)?;
    let r = a.sel(inf, infv, r)?;
    let nan = a.is_nan(x)?;
    a.sel(nan, x, r)
}
