//! `sin`, `cos` and `tan`.
//!
//! Reduction to `|y| <= π/4` (about): `|x| = n π/2 + y`, `y` a double-double.
//! - Cody–Waite for `|x| < 2^19 π/2`: `n = round(|x| 2/π)` (at most 19 bits), and
//!   `π/2 = P1 + P2 + P3 + P3T` with `P1`, `P2`, `P3` of 33 significant bits, so that each
//!   `n Pi` is exact; the three subtractions are error-free ([`two_sum`]), 152 bits of `π/2`
//!   in all, more than the 53 + 61 + 19 that the worst case (a double within `2^-61` relative
//!   of a multiple of `π/2`) needs.
//! - Payne–Hanek beyond (under an `if`): `|x| = M 2^E` with `M` the 53-bit integer mantissa.
//!   Bits of `2/π` weighing `2^-i` with `i <= E - 2` only add multiples of 4 to `|x| 2/π`, so
//!   the product is taken with a window of 192 bits of `2/π` starting at bit `E - 1`
//!   ([`TWO_OVER_PI`], 1,280 bits, enough up to `E = 971`, the largest double): `M × window`
//!   is a 245-bit integer computed in 32-bit limbs; its two bits above the fraction are
//!   `n mod 4` and 159 bits of the fraction become a double-double (three 53-bit chunks),
//!   rounded to `[-1/2, 1/2)`, times `π/2` in double-double.
//!
//! Kernels on `[-π/4, π/4]` (Taylor series; the first omitted terms are below `2^-60` of the
//! result): `sin y = y + y³ S(y²)` to `y^17`, `cos y = 1 - y²/2 + y⁴ C(y²)` to `y^18`, both as
//! double-doubles (`y²` exact, `1 - y²/2` error-free as in fdlibm's `__kernel_cos`), so that
//! `tan = sin / cos` (or `-cos / sin`) divides double-doubles and rounds once.

use super::{
    dd_div, dd_mul, fast_two_sum, ltc, mulc, neg_if, poly, round_int, sign_bit, two_prod, two_sum,
    F64Ops, DD,
};
use crate::codegen::gen::R;

/// `π/2` in parts: `P1`, `P2`, `P3` of 33 significant bits, then the rest.
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_3: f64 = 2.022_266_248_711_166_5e-21;
const PIO2_3T: f64 = 8.478_427_660_368_9e-32;
/// `π/2` and `2/π` as double-doubles / doubles.
const PIO2_DD: (f64, f64) = (std::f64::consts::FRAC_PI_2, 6.123_233_995_736_766e-17);
const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;
/// Where Payne–Hanek takes over: `2^19 π/2`.
const MEDIUM: f64 = 823_549.664_582_643_2;

/// The bits of `2/π` after the binary point, 32 per word, most significant first (1,280 bits:
/// `2/π = 0.A2F9836E 4E441529 ...` in hexadecimal). Computed from Machin's formula
/// `π = 16 atan(1/5) - 4 atan(1/239)` in exact integer arithmetic.
pub(crate) const TWO_OVER_PI_BITS: [u32; 40] = [
    0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB, 0xDEBBC561,
    0xB7246E3A, 0x424DD2E0, 0x06492EEA, 0x09D1921C, 0xFE1DEB1C, 0xB129A73E, 0xE88235F5, 0x2EBB4484,
    0xE99C7026, 0xB45F7E41, 0x3991D639, 0x835339F4, 0x9C845F8B, 0xBDF9283B, 0x1FF897FF, 0xDE05980F,
    0xEF2F118B, 0x5A0A6D1F, 0x6D367ECF, 0x27CB09B7, 0x4F463F66, 0x9E5FEA2D, 0x7527BAC7, 0xEBE5F17B,
    0x3D0739F7, 0x8A5292EA, 0x6BFB5FB1, 0x1F8D5D08, 0x56033046, 0xFC7B6BAB, 0xF0CFBC20, 0x9AF4361D,
];

/// `(-1)^k / (2k+1)!` for `k = 1..=8` (the sine series after `y`).
fn sin_coefs() -> Vec<f64> {
    let mut f = 1.0;
    (1..=8)
        .map(|k| {
            f *= ((2 * k) * (2 * k + 1)) as f64;
            if k % 2 == 1 {
                -1.0 / f
            } else {
                1.0 / f
            }
        })
        .collect()
}

/// `(-1)^k / (2k)!` for `k = 2..=9` (the cosine series after `1 - y²/2`).
fn cos_coefs() -> Vec<f64> {
    let mut f = 2.0;
    (2..=9)
        .map(|k| {
            f *= ((2 * k - 1) * (2 * k)) as f64;
            if k % 2 == 1 {
                -1.0 / f
            } else {
                1.0 / f
            }
        })
        .collect()
}

/// `sin y` for a double-double `|y| <= 0.79`, as a double-double.
fn sin_kernel<A: F64Ops>(a: &mut A, y: DD<A::F>) -> R<DD<A::F>> {
    let (yh, yl) = y;
    let z = a.mul(yh, yh)?;
    let s = poly(a, z, &sin_coefs())?; // -1/6 + z/120 - ...
    let y3 = a.mul(z, yh)?;
    let t = a.mul(y3, s)?;
    // yl cos(yh), to first order: yl (1 - z/2).
    let hz = mulc(a, z, 0.5)?;
    let one = a.c(1.0);
    let c = a.sub(one, hz)?;
    let lo = a.mul(yl, c)?;
    let t = a.add(t, lo)?;
    fast_two_sum(a, yh, t)
}

/// `cos y` for a double-double `|y| <= 0.79`, as a double-double: `w = 1 - y²/2` with its
/// rounding error recovered exactly, plus `y⁴ C(y²)` and the low parts.
fn cos_kernel<A: F64Ops>(a: &mut A, y: DD<A::F>) -> R<DD<A::F>> {
    let (yh, yl) = y;
    let (z, ze) = two_prod(a, yh, yh)?;
    let hz = mulc(a, z, 0.5)?;
    let one = a.c(1.0);
    let w = a.sub(one, hz)?;
    let back = a.sub(one, w)?;
    let err = a.sub(back, hz)?; // (1 - w) - hz, exact
    let c = poly(a, z, &cos_coefs())?;
    let z2 = a.mul(z, z)?;
    let t = a.mul(z2, c)?;
    let hze = mulc(a, ze, 0.5)?;
    let yy = a.mul(yh, yl)?;
    let t = a.sub(t, hze)?;
    let t = a.sub(t, yy)?;
    let t = a.add(err, t)?;
    fast_two_sum(a, w, t)
}

/// Cody–Waite reduction of `0 <= x < 2^19 π/2`: `(n, y)` with `x = n π/2 + y`.
fn reduce_medium<A: F64Ops>(a: &mut A, x: A::F) -> R<[A::F; 3]> {
    let q = mulc(a, x, TWO_OVER_PI)?;
    let (n, _) = round_int(a, q)?;
    let w1 = mulc(a, n, PIO2_1)?;
    let r = a.sub(x, w1)?; // exact
    let w2 = mulc(a, n, PIO2_2)?;
    let nw2 = a.neg(w2)?;
    let (t, te) = two_sum(a, r, nw2)?;
    let w3 = mulc(a, n, PIO2_3)?;
    let nw3 = a.neg(w3)?;
    let (t, te2) = two_sum(a, t, nw3)?;
    let w4 = mulc(a, n, PIO2_3T)?;
    let e = a.add(te, te2)?;
    let e = a.sub(e, w4)?;
    let (h, l) = fast_two_sum(a, t, e)?;
    Ok([n, h, l])
}

/// Payne–Hanek reduction of a finite `x >= 2^19 π/2` (see the module documentation).
fn reduce_large<A: F64Ops>(a: &mut A, x: A::F) -> R<[A::F; 3]> {
    let mask32 = a.cu(0xffff_ffff);
    let b = a.bits(x)?;
    let (s52, s32) = (a.cu(52), a.cu(32));
    let eb = a.shr(b, s52)?;
    let mmask = a.cu((1 << 52) - 1);
    let m = a.band(b, mmask)?;
    let imp = a.cu(1 << 52);
    let m = a.bor(m, imp)?;
    let (ml, mh) = (a.band(m, mask32)?, a.shr(m, s32)?);
    // The window starts at bit q0 = E + 62 of [0, 0, TWO_OVER_PI_BITS...] (E = eb - 1075):
    // word qw = q0 / 32, bit sb = q0 % 32.
    let c13 = a.cu(1075 - 62);
    let q0 = a.isub(eb, c13)?;
    let s5 = a.cu(5);
    let qw = a.shr(q0, s5)?;
    let c31 = a.cu(31);
    let sb = a.band(q0, c31)?;
    let table: Vec<u64> = [0u32, 0]
        .iter()
        .chain(TWO_OVER_PI_BITS.iter())
        .map(|&w| w as u64)
        .collect();
    // The seven words table[qw..qw + 7], selected by comparing qw with each possible value.
    let mut words: Vec<A::U> = (0..7).map(|j| a.cu(table[j])).collect();
    for start in 1..=table.len() - 7 {
        let k = a.cu(start as u64);
        let hit = a.ieq(qw, k)?;
        for (j, w) in words.iter_mut().enumerate() {
            let v = a.cu(table[start + j]);
            *w = a.sel_u(hit, v, *w)?;
        }
    }
    // Window limbs, least significant first: limb i = bits of words [5-i, 6-i] shifted.
    let rs = a.isub(s32, sb)?;
    let mut win = Vec::with_capacity(6);
    for j in (0..6).rev() {
        let hi = a.shl(words[j], s32)?;
        let both = a.bor(hi, words[j + 1])?;
        let sh = a.shr(both, rs)?;
        win.push(a.band(sh, mask32)?);
    }
    // M × window in 32-bit limbs (8 of them).
    let mul_limbs = |a: &mut A, m: A::U| -> R<Vec<A::U>> {
        let mut out = Vec::with_capacity(7);
        let mut carry = a.cu(0);
        for &w in &win {
            let p = a.imul(m, w)?;
            let p = a.iadd(p, carry)?;
            out.push(a.band(p, mask32)?);
            carry = a.shr(p, s32)?;
        }
        out.push(carry);
        Ok(out)
    };
    let lo = mul_limbs(a, ml)?;
    let hi = mul_limbs(a, mh)?;
    let mut prod = Vec::with_capacity(8);
    let mut carry = a.cu(0);
    for i in 0..8 {
        let mut s = carry;
        if i < 7 {
            s = a.iadd(s, lo[i])?;
        }
        if i >= 1 {
            s = a.iadd(s, hi[i - 1])?;
        }
        prod.push(a.band(s, mask32)?);
        carry = a.shr(s, s32)?;
    }
    // Bits 190..192: n mod 4; the fraction is bits 0..190, taken as three 53-bit chunks
    // (bits 137..190, 84..137, 31..84).
    let bits_at = |a: &mut A, lo_bit: u32| -> R<A::U> {
        // 53 bits starting at bit lo_bit of the product.
        let w = (lo_bit / 32) as usize;
        let off = lo_bit % 32;
        let p2 = a.shl(prod[w + 1], s32)?;
        let v = a.bor(p2, prod[w])?; // bits 32w .. 32w + 64
        let o = a.cu(off as u64);
        let v = a.shr(v, o)?;
        let v = if off + 53 > 64 {
            let extra = a.cu((64 - off) as u64);
            let p3 = a.shl(prod[w + 2], extra)?;
            a.bor(v, p3)?
        } else {
            v
        };
        let m53 = a.cu((1 << 53) - 1);
        a.band(v, m53)
    };
    let s30 = a.cu(30);
    let n = a.shr(prod[5], s30)?;
    let three = a.cu(3);
    let n = a.band(n, three)?;
    let c0 = bits_at(a, 137)?;
    let c1 = bits_at(a, 84)?;
    let c2 = bits_at(a, 31)?;
    let f0 = a.i2f(c0)?;
    let f1 = a.i2f(c1)?;
    let f2 = a.i2f(c2)?;
    let f0 = mulc(a, f0, 2f64.powi(-53))?;
    let f1 = mulc(a, f1, 2f64.powi(-106))?;
    let f2 = mulc(a, f2, 2f64.powi(-159))?;
    // Round to [-1/2, 1/2): f0 >= 1/2 means one more quarter turn.
    let half = ltc(a, f0, 0.5)?;
    let up = a.not(half)?;
    let fm = a.c(-1.0);
    let f0m = a.add(f0, fm)?; // exact
    let f0 = a.sel(up, f0m, f0)?;
    let nf = a.i2f(n)?;
    let nf1 = a.c(1.0);
    let nf1 = a.add(nf, nf1)?;
    let nf = a.sel(up, nf1, nf)?;
    let (h, l) = two_sum(a, f0, f1)?;
    let l = a.add(l, f2)?;
    let f = fast_two_sum(a, h, l)?;
    let p = (a.c(PIO2_DD.0), a.c(PIO2_DD.1));
    let (yh, yl) = dd_mul(a, f, p)?;
    Ok([nf, yh, yl])
}

/// `(n mod 4, y)` with `|x| = n π/2 + y`, `y` a double-double, `|y| <= π/4` (about); for
/// infinite or NaN `x` the result is meaningless.
fn reduce<A: F64Ops>(a: &mut A, ax: A::F) -> R<(A::F, DD<A::F>)> {
    let big = a.c(MEDIUM);
    let large = a.le(big, ax)?;
    let inf = a.c(f64::INFINITY);
    let finite = a.lt(ax, inf)?;
    let large = a.and(large, finite)?;
    let [n, h, l] = a.branch(large, |a| reduce_large(a, ax), |a| reduce_medium(a, ax))?;
    // n mod 4, as a double in {0, 1, 2, 3}.
    let q = mulc(a, n, 0.25)?;
    let fq = a.floor(q)?;
    let f4 = mulc(a, fq, 4.0)?;
    let n4 = a.sub(n, f4)?;
    Ok((n4, (h, l)))
}

/// `c == k` for a small integer constant `k`.
fn is<A: F64Ops>(a: &mut A, c: A::F, k: f64) -> R<A::B> {
    let k = a.c(k);
    a.eq(c, k)
}

/// NaN for infinite and NaN `x`, `r` otherwise.
fn trig_special<A: F64Ops>(a: &mut A, x: A::F, r: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let inf = a.c(f64::INFINITY);
    let finite = a.lt(ax, inf)?;
    let nan = a.c(f64::NAN);
    a.sel(finite, r, nan)
}

/// `sin y`, `cos y`, and whether `n` is 1, 2 or 3, for `|x|` reduced to `y` in quadrant `n`.
type Quadrant<A> = (<A as F64Ops>::F, <A as F64Ops>::F, [<A as F64Ops>::B; 3]);

/// What `sin` and `cos` share: the [`Quadrant`] of `x`.
fn quadrant<A: F64Ops>(a: &mut A, x: A::F) -> R<Quadrant<A>> {
    let ax = a.abs(x)?;
    let (n, y) = reduce(a, ax)?;
    let s = sin_kernel(a, y)?;
    let c = cos_kernel(a, y)?;
    let s = a.add(s.0, s.1)?;
    let c = a.add(c.0, c.1)?;
    let q = [is(a, n, 1.0)?, is(a, n, 2.0)?, is(a, n, 3.0)?];
    Ok((s, c, q))
}

/// `sin x`: `±sin y` or `±cos y` by quadrant, the sign of `x` put back (`sin(-0) = -0`).
pub(crate) fn sin<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let (s, c, [q1, q2, q3]) = quadrant(a, x)?;
    let odd = a.or(q1, q3)?;
    let r = a.sel(odd, c, s)?;
    let neg = a.or(q2, q3)?;
    let r = neg_if(a, neg, r)?;
    let xneg = sign_bit(a, x)?;
    let r = neg_if(a, xneg, r)?;
    trig_special(a, x, r)
}

/// `cos x` (even: the sign of `x` does not matter).
pub(crate) fn cos<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let (s, c, [q1, q2, q3]) = quadrant(a, x)?;
    let odd = a.or(q1, q3)?;
    let r = a.sel(odd, s, c)?;
    let neg = a.or(q1, q2)?;
    let r = neg_if(a, neg, r)?;
    trig_special(a, x, r)
}

/// `tan x`: `sin y / cos y` for even `n`, `-cos y / sin y` for odd, in double-double.
pub(crate) fn tan<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let (n, y) = reduce(a, ax)?;
    let s = sin_kernel(a, y)?;
    let c = cos_kernel(a, y)?;
    let odd1 = is(a, n, 1.0)?;
    let odd3 = is(a, n, 3.0)?;
    let odd = a.or(odd1, odd3)?;
    let num = (a.sel(odd, c.0, s.0)?, a.sel(odd, c.1, s.1)?);
    let den = (a.sel(odd, s.0, c.0)?, a.sel(odd, s.1, c.1)?);
    let (h, l) = dd_div(a, num, den)?;
    let r = a.add(h, l)?;
    let r = neg_if(a, odd, r)?;
    let xneg = sign_bit(a, x)?;
    let r = neg_if(a, xneg, r)?;
    trig_special(a, x, r)
}
