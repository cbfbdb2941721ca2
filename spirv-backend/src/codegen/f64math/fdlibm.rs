//! fdlibm's `exp`, `log`, `pow`, `__kernel_sin`, `__kernel_cos` and `sin_pi`, operation for
//! operation as the `libm` crate (0.2, the interpreter's `gamma` and `lgamma`) has them, for
//! [`super::gamma`] only.
//!
//! `libm`'s `tgamma` and `lgamma` call these, and their rounding errors are part of the results
//! the interpreter gives: `tgamma` is up to 7 ulp away from `Γ` (measured against 200-bit
//! arithmetic), so a more accurate `exp` or `pow` would move results away from the
//! interpreter's. Each function here performs the same IEEE operations, with the same constants,
//! in the same order, as the C code of fdlibm 5.3 (`e_exp.c`, `e_log.c`, `e_pow.c`, `k_sin.c`,
//! `k_cos.c`, Sun Microsystems 1993/2004, as FreeBSD's msun and musl carry them), so on a device
//! whose `+ - * /` and `sqrt` round correctly the results are the same bits. Branches become
//! selects over values computed for every argument; bit manipulations of the high and low
//! 32-bit words become 64-bit integer operations (a high word is held sign-extended).
//!
//! Only the paths `gamma` and `lgamma` reach are written: each function states the arguments it
//! takes. (`tests.rs` checks every function bit for bit against `libm` over them.)

use super::{addc, mulc, poly, F64Ops};
use crate::codegen::gen::R;

/// `ln 2` in two parts (`LN2_HI` with 32 significant bits), `1 / ln 2` (`e_exp.c`, `e_log.c`).
const LN2_HI: f64 = 0.693_147_180_369_123_8;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
const INV_LN2: f64 = std::f64::consts::LOG2_E;
/// The Remez polynomial of `e_exp.c` (also `e_pow.c`'s).
const EXP_P: [f64; 5] = [
    0.166_666_666_666_666_02,
    -0.002_777_777_777_701_559_3,
    6.613_756_321_437_934e-5,
    -1.653_390_220_546_525_2e-6,
    4.138_136_797_057_238_5e-8,
];
/// The polynomial of `e_log.c`, even and odd powers.
const LG_EVEN: [f64; 3] = [
    0.399_999_999_994_094_2,
    0.222_221_984_321_497_84,
    0.153_138_376_992_093_73,
];
const LG_ODD: [f64; 4] = [
    0.666_666_666_666_673_5,
    0.285_714_287_436_623_9,
    0.181_835_721_616_180_5,
    0.147_981_986_051_165_86,
];
/// `__kernel_sin`'s and `__kernel_cos`'s coefficients.
const KS: [f64; 6] = [
    -0.166_666_666_666_666_32,
    0.008_333_333_333_322_49,
    -0.000_198_412_698_298_579_5,
    2.755_731_370_707_006_8e-6,
    -2.505_076_025_340_686_3e-8,
    1.589_690_995_211_55e-10,
];
const KC: [f64; 6] = [
    0.041_666_666_666_666_6,
    -0.001_388_888_888_887_411,
    2.480_158_728_947_673e-5,
    -2.755_731_435_139_066_3e-7,
    2.087_572_321_298_175e-9,
    -1.135_964_755_778_819_5e-11,
];

// ----- words --------------------------------------------------------------------------------

/// The high 32-bit word of `x`, sign-extended (C's `(int32_t)GET_HIGH_WORD(x)`).
pub(crate) fn hi_word<A: F64Ops>(a: &mut A, x: A::F) -> R<A::U> {
    let b = a.bits(x)?;
    let s = a.cu(32);
    a.sar(b, s)
}

/// `x` with its low word set to 0 (`SET_LOW_WORD(x, 0)`).
pub(crate) fn clear_lo<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let b = a.bits(x)?;
    let m = a.cu(0xffff_ffff_0000_0000);
    let b = a.band(b, m)?;
    a.of_bits(b)
}

/// `x` with its high word set to the low 32 bits of `h` (`SET_HIGH_WORD(x, h)`).
fn set_hi<A: F64Ops>(a: &mut A, x: A::F, h: A::U) -> R<A::F> {
    let (lo32, s32) = (a.cu(0xffff_ffff), a.cu(32));
    let b = a.bits(x)?;
    let lo = a.band(b, lo32)?;
    let h = a.band(h, lo32)?;
    let h = a.shl(h, s32)?;
    let b = a.bor(h, lo)?;
    a.of_bits(b)
}

/// The double with high word `h` (its low 32 bits) and low word 0 (`INSERT_WORDS(x, h, 0)`).
fn from_hi<A: F64Ops>(a: &mut A, h: A::U) -> R<A::F> {
    let (lo32, s32) = (a.cu(0xffff_ffff), a.cu(32));
    let h = a.band(h, lo32)?;
    let b = a.shl(h, s32)?;
    a.of_bits(b)
}

/// A 64-bit integer constant from a signed one.
fn ci<A: F64Ops>(a: &mut A, k: i64) -> A::U {
    a.cu(k as u64)
}

/// Signed `x >= k` for a constant `k`.
pub(crate) fn ige<A: F64Ops>(a: &mut A, x: A::U, k: i64) -> R<A::B> {
    let k = ci(a, k);
    let lt = a.slt(x, k)?;
    a.not(lt)
}

/// `x` shifted right by `s`, arithmetically (C's `>>` on an `int32_t`).
fn sar_c<A: F64Ops>(a: &mut A, x: A::U, s: u64) -> R<A::U> {
    let s = a.cu(s);
    a.sar(x, s)
}

// ----- exp ----------------------------------------------------------------------------------

/// fdlibm's `exp(x)` for `-708.39 <= x <= -1.5 ln 2` (the branch of `e_exp.c` with
/// `k = (int)(invln2 x - 0.5)`, the reduction `x - k ln2_hi - k ln2_lo` and the result
/// `scalbn(y, k)`, here `y 2^k`, exact for these `k`).
pub(crate) fn exp_neg<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    // (int) truncates toward zero: of a negative value, -floor(-v).
    let v = mulc(a, x, INV_LN2)?;
    let v = addc(a, v, -0.5)?;
    let nv = a.neg(v)?;
    let fl = a.floor(nv)?;
    let kf = a.neg(fl)?;
    let kh = mulc(a, kf, LN2_HI)?;
    let hi = a.sub(x, kh)?;
    let lo = mulc(a, kf, LN2_LO)?;
    let x = a.sub(hi, lo)?;
    let xx = a.mul(x, x)?;
    let p = poly(a, xx, &EXP_P)?;
    let xp = a.mul(xx, p)?;
    let c = a.sub(x, xp)?;
    let xc = a.mul(x, c)?;
    let two = a.c(2.0);
    let d = a.sub(two, c)?;
    let q = a.div(xc, d)?;
    let q = a.sub(q, lo)?;
    let q = a.add(q, hi)?;
    let one = a.c(1.0);
    let y = a.add(one, q)?;
    let k = a.f2i(kf)?;
    let p2 = super::pow2(a, k)?;
    a.mul(y, p2)
}

// ----- log ----------------------------------------------------------------------------------

/// fdlibm's `log(x)` for `x >= +0` and NaN (`e_log.c`): `-inf` at 0, subnormals scaled by
/// `2^54`, `+inf` and NaN as they are, `log(1) = 0`.
pub(crate) fn log<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let hx = hi_word(a, x)?;
    let zero = a.c(0.0);
    let is0 = a.eq(x, zero)?;
    let tiny = ltc_hi(a, hx, 0x0010_0000)?;
    // Subnormal: k = -54, x 2^54.
    let xs = mulc(a, x, 18_014_398_509_481_984.0)?;
    let x = a.sel(tiny, xs, x)?;
    let hx2 = hi_word(a, x)?;
    let (m54, z0) = (ci(a, -54), ci(a, 0));
    let k0 = a.sel_u(tiny, m54, z0)?;
    // hx += 0x3ff00000 - 0x3fe6a09e; k += (hx >> 20) - 0x3ff; hx = (hx & 0xfffff) + 0x3fe6a09e.
    let off = ci(a, 0x3ff0_0000 - 0x3fe6_a09e);
    let h = a.iadd(hx2, off)?;
    let e = sar_c(a, h, 20)?;
    let bias = ci(a, 0x3ff);
    let e = a.isub(e, bias)?;
    let k = a.iadd(k0, e)?;
    let mmask = ci(a, 0x000f_ffff);
    let hm = a.band(h, mmask)?;
    let base = ci(a, 0x3fe6_a09e);
    let hm = a.iadd(hm, base)?;
    let m = set_hi(a, x, hm)?;
    let f = addc(a, m, -1.0)?;
    let hf = mulc(a, f, 0.5)?;
    let hfsq = a.mul(hf, f)?;
    let two = a.c(2.0);
    let d = a.add(two, f)?;
    let s = a.div(f, d)?;
    let z = a.mul(s, s)?;
    let w = a.mul(z, z)?;
    let pe = poly(a, w, &LG_EVEN)?;
    let t1 = a.mul(w, pe)?;
    let po = poly(a, w, &LG_ODD)?;
    let t2 = a.mul(z, po)?;
    let r = a.add(t2, t1)?;
    let dk = a.i2f(k)?;
    let u = a.add(hfsq, r)?;
    let u = a.mul(s, u)?;
    let dl = mulc(a, dk, LN2_LO)?;
    let u = a.add(u, dl)?;
    let u = a.sub(u, hfsq)?;
    let u = a.add(u, f)?;
    let dh = mulc(a, dk, LN2_HI)?;
    let r = a.add(u, dh)?;
    // log(+-0) = -1 / (x x); log(1) = 0; log(inf) = inf, NaN stays NaN.
    let m1 = a.c(-1.0);
    let xx = a.mul(x, x)?;
    let ninf = a.div(m1, xx)?;
    let r = a.sel(is0, ninf, r)?;
    let one = a.c(1.0);
    let is1 = a.eq(x, one)?;
    let r = a.sel(is1, zero, r)?;
    let big = ige(a, hx, 0x7ff0_0000)?;
    let nan = a.is_nan(x)?;
    let keep = a.or(big, nan)?;
    a.sel(keep, x, r)
}

/// Signed `hw < k` for a constant `k`.
pub(crate) fn ltc_hi<A: F64Ops>(a: &mut A, hw: A::U, k: i64) -> R<A::B> {
    let k = ci(a, k);
    a.slt(hw, k)
}

// ----- pow ----------------------------------------------------------------------------------

/// fdlibm's `pow(x, y)` (`e_pow.c`) for `x` positive, normal and not 1, `y` finite with
/// `|y| <= 2^31`, and `|y log2 x| < 1000` (no overflow or underflow): the special cases
/// `y = 0, ±1, 2, 1/2`, then `log2 x` as `t1 + t2` (the branch for `|y| <= 2^31`, `k` = 0 or 1
/// by the interval of the mantissa), `y log2 x = p_h + p_l`, and `2^(p_h + p_l)`.
pub(crate) fn pow<A: F64Ops>(a: &mut A, x: A::F, y: A::F) -> R<A::F> {
    let one = a.c(1.0);
    let zero = a.c(0.0);
    // log2(x) = t1 + t2.
    let ix = hi_word(a, x)?;
    let e = sar_c(a, ix, 20)?;
    let bias = ci(a, 0x3ff);
    let n = a.isub(e, bias)?;
    let mmask = ci(a, 0x000f_ffff);
    let j = a.band(ix, mmask)?;
    let one_hi = ci(a, 0x3ff0_0000);
    let ixn = a.bor(j, one_hi)?;
    let k1 = ige(a, j, 0x3988F)?; // j > 0x3988E
    let small = ltc_hi(a, j, 0xBB67A)?;
    let k1 = a.and(k1, small)?;
    let wrap = a.not(small)?; // k = 0, n += 1, ix -= 0x00100000
    let one_u = ci(a, 1);
    let n1 = a.iadd(n, one_u)?;
    let n = a.sel_u(wrap, n1, n)?;
    let step = ci(a, 0x0010_0000);
    let ixw = a.isub(ixn, step)?;
    let ix = a.sel_u(wrap, ixw, ixn)?;
    let ax = set_hi(a, x, ix)?;
    let bp = selk(a, k1, 1.5, 1.0)?;
    let dp_h = selk(a, k1, 0.584_962_487_220_764_2, 0.0)?;
    let dp_l = selk(a, k1, 1.350_039_202_129_749e-8, 0.0)?;
    let u = a.sub(ax, bp)?;
    let d = a.add(ax, bp)?;
    let v = a.div(one, d)?;
    let ss = a.mul(u, v)?;
    let s_h = clear_lo(a, ss)?;
    // t_h = ax + bp[k], high part: ((ix >> 1) | 0x20000000) + 0x00080000 + (k << 18).
    let ixh = sar_c(a, ix, 1)?;
    let c2 = ci(a, 0x2000_0000);
    let th = a.bor(ixh, c2)?;
    let c8 = ci(a, 0x0008_0000);
    let th = a.iadd(th, c8)?;
    let kq = ci(a, 1 << 18);
    let z0 = ci(a, 0);
    let kq = a.sel_u(k1, kq, z0)?;
    let th = a.iadd(th, kq)?;
    let t_h = from_hi(a, th)?;
    let tb = a.sub(t_h, bp)?;
    let t_l = a.sub(ax, tb)?;
    let sht = a.mul(s_h, t_h)?;
    let q = a.sub(u, sht)?;
    let shl = a.mul(s_h, t_l)?;
    let q = a.sub(q, shl)?;
    let s_l = a.mul(v, q)?;
    let s2 = a.mul(ss, ss)?;
    let s4 = a.mul(s2, s2)?;
    let pl = poly(
        a,
        s2,
        &[
            0.599_999_999_999_994_6,
            0.428_571_428_578_550_2,
            0.333_333_329_818_377_43,
            0.272_728_123_808_534,
            0.230_660_745_775_561_75,
            0.206_975_017_800_338_42,
        ],
    )?;
    let r = a.mul(s4, pl)?;
    let hs = a.add(s_h, ss)?;
    let hs = a.mul(s_l, hs)?;
    let r = a.add(r, hs)?;
    let s2 = a.mul(s_h, s_h)?;
    let three = a.c(3.0);
    let t = a.add(three, s2)?;
    let t = a.add(t, r)?;
    let t_h = clear_lo(a, t)?;
    let t = a.sub(t_h, three)?;
    let t = a.sub(t, s2)?;
    let t_l = a.sub(r, t)?;
    let u = a.mul(s_h, t_h)?;
    let v1 = a.mul(s_l, t_h)?;
    let v2 = a.mul(t_l, ss)?;
    let v = a.add(v1, v2)?;
    let p = a.add(u, v)?;
    let p_h = clear_lo(a, p)?;
    let t = a.sub(p_h, u)?;
    let p_l = a.sub(v, t)?;
    let z_h = mulc(a, p_h, 0.961_796_700_954_437_3)?;
    let z1 = mulc(a, p_h, -7.028_461_650_952_758e-9)?;
    let z2 = mulc(a, p_l, 0.961_796_693_925_975_6)?;
    let z_l = a.add(z1, z2)?;
    let z_l = a.add(z_l, dp_l)?;
    let t = a.i2f(n)?;
    let q = a.add(z_h, z_l)?;
    let q = a.add(q, dp_h)?;
    let q = a.add(q, t)?;
    let t1 = clear_lo(a, q)?;
    let q = a.sub(t1, t)?;
    let q = a.sub(q, dp_h)?;
    let q = a.sub(q, z_h)?;
    let t2 = a.sub(z_l, q)?;
    // y log2 x = p_h + p_l.
    let y1 = clear_lo(a, y)?;
    let yd = a.sub(y, y1)?;
    let q1 = a.mul(yd, t1)?;
    let q2 = a.mul(y, t2)?;
    let p_l = a.add(q1, q2)?;
    let p_h = a.mul(y1, t1)?;
    let z = a.add(p_l, p_h)?;
    // 2^(p_h + p_l): n = [z + 0.5] when |z| > 0.5, taken off p_h.
    let j = hi_word(a, z)?;
    let m31 = ci(a, 0x7fff_ffff);
    let i = a.band(j, m31)?;
    let big = ige(a, i, 0x3fe0_0001)?;
    let e = sar_c(a, i, 20)?;
    let k = a.isub(e, bias)?;
    let k = a.sel_u(big, k, z0)?; // the shifts below are defined for every argument
    let k1s = a.iadd(k, one_u)?;
    let c1 = ci(a, 0x0010_0000);
    let sh = a.shr(c1, k1s)?;
    let nn = a.iadd(j, sh)?;
    let na = a.band(nn, m31)?;
    let e = sar_c(a, na, 20)?;
    let k = a.isub(e, bias)?;
    let k = a.sel_u(big, k, z0)?;
    let low = a.shr(mmask, k)?;
    let all = ci(a, 0xffff_ffff);
    let nlow = a.isub(all, low)?; // !(0x000fffff >> k) on 32 bits
    let th = a.band(nn, nlow)?;
    let t = from_hi(a, th)?;
    let nm = a.band(nn, mmask)?;
    let nm = a.bor(nm, c1)?;
    let c20 = ci(a, 20);
    let s = a.isub(c20, k)?;
    let nm = a.shr(nm, s)?;
    let jneg = a.slt(j, z0)?;
    let nneg = a.isub(z0, nm)?;
    let nm = a.sel_u(jneg, nneg, nm)?;
    let n = a.sel_u(big, nm, z0)?;
    let ph_t = a.sub(p_h, t)?;
    let p_h = a.sel(big, ph_t, p_h)?;
    let t = a.add(p_l, p_h)?;
    let t = clear_lo(a, t)?;
    let u = mulc(a, t, 0.693_147_182_464_599_6)?;
    let q = a.sub(t, p_h)?;
    let q = a.sub(p_l, q)?;
    let q = mulc(a, q, std::f64::consts::LN_2)?;
    let tl = mulc(a, t, -1.904_654_299_957_768e-9)?;
    let v = a.add(q, tl)?;
    let z = a.add(u, v)?;
    let q = a.sub(z, u)?;
    let w = a.sub(v, q)?;
    let t = a.mul(z, z)?;
    let p = poly(a, t, &EXP_P)?;
    let tp = a.mul(t, p)?;
    let t1 = a.sub(z, tp)?;
    let zt = a.mul(z, t1)?;
    let d = addc(a, t1, -2.0)?;
    let q = a.div(zt, d)?;
    let zw = a.mul(z, w)?;
    let ww = a.add(w, zw)?;
    let r = a.sub(q, ww)?;
    let q = a.sub(r, z)?;
    let z = a.sub(one, q)?;
    let jz = hi_word(a, z)?;
    let s20 = ci(a, 20);
    let n20 = a.shl(n, s20)?;
    let jz = a.iadd(jz, n20)?;
    let r = set_hi(a, z, jz)?;
    // s = 1 (x > 0): s * z = z. The special exponents:
    let is = |a: &mut A, k: f64| -> R<A::B> {
        let k = a.c(k);
        a.eq(y, k)
    };
    let y2 = is(a, 2.0)?;
    let xx = a.mul(x, x)?;
    let r = a.sel(y2, xx, r)?;
    let yh = is(a, 0.5)?;
    let sq = a.sqrt(x)?;
    let r = a.sel(yh, sq, r)?;
    let y1 = is(a, 1.0)?;
    let r = a.sel(y1, x, r)?;
    let ym1 = is(a, -1.0)?;
    let inv = a.div(one, x)?;
    let r = a.sel(ym1, inv, r)?;
    let y0 = a.eq(y, zero)?;
    a.sel(y0, one, r)
}

/// `c ? k1 : k2` for constants.
fn selk<A: F64Ops>(a: &mut A, c: A::B, k1: f64, k2: f64) -> R<A::F> {
    let (k1, k2) = (a.c(k1), a.c(k2));
    a.sel(c, k1, k2)
}

// ----- sin(π x) -------------------------------------------------------------------------------

/// `__kernel_sin(x, 0, 0)` for `|x| <= π/4`.
fn k_sin<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let z = a.mul(x, x)?;
    let w = a.mul(z, z)?;
    // r = S2 + z (S3 + z S4) + z w (S5 + z S6)
    let r1 = poly(a, z, &KS[1..4])?;
    let zw = a.mul(z, w)?;
    let r2 = poly(a, z, &KS[4..6])?;
    let r2 = a.mul(zw, r2)?;
    let r = a.add(r1, r2)?;
    let v = a.mul(z, x)?;
    let zr = a.mul(z, r)?;
    let q = addc(a, zr, KS[0])?;
    let q = a.mul(v, q)?;
    a.add(x, q)
}

/// `__kernel_cos(x, 0)` for `|x| <= π/4`.
fn k_cos<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let z = a.mul(x, x)?;
    let w = a.mul(z, z)?;
    // r = z (C1 + z (C2 + z C3)) + w w (C4 + z (C5 + z C6))
    let r1 = poly(a, z, &KC[0..3])?;
    let r1 = a.mul(z, r1)?;
    let ww = a.mul(w, w)?;
    let r2 = poly(a, z, &KC[3..6])?;
    let r2 = a.mul(ww, r2)?;
    let r = a.add(r1, r2)?;
    let hz = mulc(a, z, 0.5)?;
    let one = a.c(1.0);
    let w = a.sub(one, hz)?;
    // w + (((1 - w) - hz) + (z r - x y)), y = 0.
    let q = a.sub(one, w)?;
    let q = a.sub(q, hz)?;
    let zr = a.mul(z, r)?;
    let zero = a.c(0.0);
    let xy = a.mul(x, zero)?;
    let zr = a.sub(zr, xy)?;
    let q = a.add(q, zr)?;
    a.add(w, q)
}

/// `sin(π x)` for `x >= 2^-70` as `libm`'s `tgamma` and `lgamma` compute it (`sinpi` and
/// `sin_pi`): `x mod 2` reduced to `[-1/4, 1/4]` by the half-integer `n/2`, then a kernel.
/// Exactly 0 at integers (with an arbitrary sign).
pub(crate) fn sin_pi<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    // x = 2 (x/2 - floor(x/2)), exact.
    let h = mulc(a, x, 0.5)?;
    let fh = a.floor(h)?;
    let d = a.sub(h, fh)?;
    let x = mulc(a, d, 2.0)?;
    // n = (int)(4 x); n = (n + 1) / 2.
    let x4 = mulc(a, x, 4.0)?;
    let n = a.floor(x4)?;
    let n = addc(a, n, 1.0)?;
    let n = mulc(a, n, 0.5)?;
    let n = a.floor(n)?;
    let nh = mulc(a, n, 0.5)?;
    let x = a.sub(x, nh)?;
    let x = mulc(a, x, std::f64::consts::PI)?;
    let is = |a: &mut A, k: f64| -> R<A::B> {
        let k = a.c(k);
        a.eq(n, k)
    };
    let (n1, n2, n3) = (is(a, 1.0)?, is(a, 2.0)?, is(a, 3.0)?);
    let nx = a.neg(x)?;
    let xs = a.sel(n2, nx, x)?;
    let s = k_sin(a, xs)?;
    let c = k_cos(a, x)?;
    let nc = a.neg(c)?;
    let r = a.sel(n3, nc, s)?;
    a.sel(n1, c, r)
}
