//! `pow(x, y) = x^y`.
//!
//! `|x|^y = exp(y log|x|)`: [`log_dd`] gives `log|x|` to about `2^-68` relatively, its product
//! with `y` is a double-double (exact product of the high part), and [`exp_core`] takes that
//! double-double argument, so the argument's absolute error stays near `2^-60` even where
//! `|y log x|` is 745 and the result about `0.6` ulp from exact. `y` is clamped to
//! `±2^64` first, which changes no result (beyond it, `|y log|x||` overflows or underflows the
//! result whenever `x != 1`). A negative `x` with an integral `y` gives `±|x|^y` by the parity
//! of `y`, with any other `y` NaN; the zeros, infinities and NaNs follow C99 Annex F (the
//! interpreter's `powf`): `pow(x, ±0) = 1` and `pow(1, y) = 1` even for NaN, `pow(-1, ±inf) =
//! 1`, `pow(±0, y)` is `±0`/`±inf` for odd integral `y` and `+0`/`+inf` otherwise, ...

use super::exp::exp_core;
use super::log::log_dd;
use super::{copysign, dd_mul_f, is_inf, ldexp, ltc, mulc, neg_if, selc, F64Ops};
use crate::codegen::gen::R;

/// Whether `y` is an integer, and whether an odd one.
fn parity<A: F64Ops>(a: &mut A, y: A::F) -> R<(A::B, A::B)> {
    let fy = a.floor(y)?;
    let integral = a.eq(fy, y)?;
    let h = mulc(a, y, 0.5)?;
    let fh = a.floor(h)?;
    let even = a.eq(fh, h)?;
    let not_even = a.not(even)?;
    let odd = a.and(integral, not_even)?;
    Ok((integral, odd))
}

/// `x^y` (see the module documentation).
pub(crate) fn pow<A: F64Ops>(a: &mut A, x: A::F, y: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let ay = a.abs(y)?;
    // |x|^y for finite nonzero x and finite y.
    let one = a.c(1.0);
    let xz = a.c(0.0);
    let usable = a.lt(xz, ax)?;
    let inf = a.c(f64::INFINITY);
    let fin = a.lt(ax, inf)?;
    let usable = a.and(usable, fin)?;
    let xs = a.sel(usable, ax, one)?;
    let big = a.c(2f64.powi(64));
    let nbig = a.c(-(2f64.powi(64)));
    let hi = a.lt(big, y)?;
    let ys = a.sel(hi, big, y)?;
    let lo = a.lt(ys, nbig)?;
    let ys = a.sel(lo, nbig, ys)?;
    let ynan = a.is_nan(ys)?;
    let ys = a.sel(ynan, xz, ys)?;
    let l = log_dd(a, xs)?;
    let p = dd_mul_f(a, l, ys)?;
    let ((s, sl), k) = exp_core(a, p)?;
    let s = a.add(s, sl)?;
    let mag = ldexp(a, s, k)?;
    // Negative x: ±|x|^y for integral y, NaN otherwise.
    let (integral, odd) = parity(a, y)?;
    let xneg = ltc(a, x, 0.0)?;
    let flip = a.and(xneg, odd)?;
    let r = neg_if(a, flip, mag)?;
    let not_int = a.not(integral)?;
    let bad = a.and(xneg, not_int)?;
    let r = selc(a, bad, f64::NAN, r)?;
    // x = ±0: y < 0 gives ±inf (odd y keeps the sign of x), y > 0 gives ±0.
    let x0 = a.eq(ax, xz)?;
    let yneg = ltc(a, y, 0.0)?;
    let zr = a.sel(yneg, inf, xz)?;
    let zr_signed = copysign(a, zr, x)?;
    let zr = a.sel(odd, zr_signed, zr)?;
    let r = a.sel(x0, zr, r)?;
    // x = ±inf: y > 0 gives inf, y < 0 gives 0; -inf with odd y keeps the sign.
    let xi = is_inf(a, x)?;
    let ir = a.sel(yneg, xz, inf)?;
    let ir_signed = copysign(a, ir, x)?;
    let ir = a.sel(odd, ir_signed, ir)?;
    let r = a.sel(xi, ir, r)?;
    // y = ±inf: 1 for |x| = 1, else 0 or inf by whether |x| < 1 and the sign of y.
    let yi = is_inf(a, y)?;
    let small = ltc(a, ax, 1.0)?;
    // Grows when (|x| < 1) == (y < 0).
    let both = a.and(small, yneg)?;
    let either = a.or(small, yneg)?;
    let neither = a.not(either)?;
    let grow = a.or(both, neither)?;
    let yr = a.sel(grow, inf, xz)?;
    let ax1 = a.eq(ax, one)?;
    let yr = a.sel(ax1, one, yr)?;
    let r = a.sel(yi, yr, r)?;
    // NaN in, NaN out, except pow(x, ±0) = 1 and pow(1, y) = 1.
    let xn = a.is_nan(x)?;
    let yn = a.is_nan(y)?;
    let nan = a.or(xn, yn)?;
    let nanv = a.add(x, y)?;
    let r = a.sel(nan, nanv, r)?;
    let y0 = a.eq(ay, xz)?;
    let x1 = a.eq(x, one)?;
    let unit = a.or(y0, x1)?;
    a.sel(unit, one, r)
}
