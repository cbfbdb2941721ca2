//! `gamma` (`Γ`) and `lgamma` (`ln |Γ|`), as the interpreter computes them: the algorithms of
//! the `libm` crate (0.2), operation for operation.
//!
//! Why not a more accurate algorithm: `libm::tgamma` is up to about 8 ulp away from `Γ`
//! (measured against 160- and 200-bit arithmetic: over 10% of random arguments in `(0, 171.6)`
//! and `(-184, 0)` are more than 2 ulp off), and `libm::lgamma` is hundreds of ulp off near the
//! zeros of `ln |Γ|` on the negative axis (`-2.457`, `-2.747`, `-3.144`, ...), where the
//! reflection formula cancels. A result within 2 ulp of the interpreter's must therefore make
//! the same rounding errors: each function here performs the IEEE operations of the `libm`
//! code, with its constants, in its order (branches as selects, see [`super::fdlibm`] for the
//! helpers `exp`, `log`, `pow` and `sin(π x)`). Where `+ - * /` and `sqrt` round correctly
//! (lavapipe), the results are the interpreter's, bit for bit, for every argument.
//!
//! `gamma` (musl's `tgamma.c`, from Boost's and Python's Lanczos approximation with
//! `g = 6.0247`, `N = 12`; Lanczos 1964, Godfrey 2001, Pugh 2004):
//! `Γ(x) = (x + g - 1/2)^(x - 1/2) S(x) / e^(x + g - 1/2)` for `x > 0`, `S` the rational
//! function `Σ a_i / (x + i)` as a quotient of two polynomials of degree 12 (in `x`, or in `1/x`
//! for `x >= 8`), the rounding error of `x + g - 1/2` corrected to first order, the power taken
//! as `z · z` with `z = (x + g - 1/2)^((x - 1/2)/2)` (no overflow below 171.62); the reflection
//! `Γ(x) = -π / (x sin(π x) Γ(-x))` for `x < 0`; exact factorials for the integers `1..=23`;
//! `1/x` for `|x| < 2^-54`; `+inf` (overflow) from 184 up and `±0` (by the parity of
//! `floor(x)`) at and below -184; NaN at the negative integers and `-inf`, `±inf` at `±0`.
//!
//! `lgamma` (fdlibm's `e_lgamma_r.c`, Sun Microsystems 1993): for `0 < x < 2`, polynomials and a
//! rational function around 1, the minimum `1.4616` and 2 (`ln Γ(x) = ln Γ(x + 1) - ln x`
//! below 0.9); for `2 <= x < 8`, a rational function on `[2, 3)` and the recurrence
//! `ln Γ(x + 1) = ln x + ln Γ(x)` as one logarithm of a product; for `8 <= x < 2^58`,
//! `(x - 1/2)(ln x - 1) + w(1/x)` (Stirling's series as a polynomial); beyond, `x (ln x - 1)`;
//! for `x < 0`, `ln(π / |x sin(π x)|) - ln Γ(|x|)`; `-ln |x|` for `|x| < 2^-70`; exactly 0 at 1
//! and 2; `+inf` at 0, the negative integers and `±inf`.
//!
//! What is guaranteed: bit-identical results to the interpreter where the device's `+ - * /`
//! and `sqrt` on `f64` are correctly rounded (Vulkan requires it of `+ - *`; lavapipe and
//! NVIDIA's H100 driver 580.x gave the interpreter's bits at 27,087 arguments); otherwise the
//! error of a division propagates as in any of these functions. The accuracy relative to `Γ`
//! is `libm`'s (measured): up to about 8 ulp for `gamma`; for `lgamma`, below 2 ulp for `x > 0`
//! (absolute error below `1e-18` near its zeros at 1 and 2, where it is computed from `x - 1`
//! and `x - 2`), and for `x < 0` up to about 4 ulp where `|ln |Γ|| >= 1`, an absolute error up
//! to about `6 · 2^-53` below, which is many ulp near the negative zeros.

use super::fdlibm::{self, hi_word, ige, ltc_hi};
use super::{addc, gtc, ltc, mulc, neg_if, poly, selc, sign_bit, F64Ops};
use crate::codegen::gen::R;
use std::f64::consts::PI;

// ----- gamma ----------------------------------------------------------------------------------

/// `g - 1/2`, the Lanczos parameter less one half.
const GMHALF: f64 = 5.524_680_040_776_73;
/// The numerator and denominator coefficients of `S(x)`, constant term first.
const SNUM: [f64; 13] = [
    23_531_376_880.410_76,
    42_919_803_642.649_1,
    35_711_959_237.355_67,
    17_921_034_426.037_21,
    6_039_542_586.352_028,
    1_439_720_407.311_721_6,
    248_874_557.862_054_17,
    31_426_415.585_400_194,
    2_876_370.628_935_372_5,
    186_056.265_395_223_48,
    8_071.672_002_365_816,
    210.824_277_751_579_36,
    2.506_628_274_631_000_2,
];
const SDEN: [f64; 13] = [
    0.0,
    39_916_800.0,
    120_543_840.0,
    150_917_976.0,
    105_258_076.0,
    45_995_730.0,
    13_339_535.0,
    2_637_558.0,
    357_423.0,
    32_670.0,
    1_925.0,
    66.0,
    1.0,
];

/// `S(x)` for `2^-54 <= x < 184`: Horner in `x` below 8, in `1/x` from 8 up (under an `if`).
fn lanczos_sum<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let lt8 = ltc(a, x, 8.0)?;
    let [s] = a.branch(
        lt8,
        |a| {
            let (mut num, mut den) = (a.c(0.0), a.c(0.0));
            for i in (0..=12).rev() {
                let m = a.mul(num, x)?;
                num = addc(a, m, SNUM[i])?;
                let m = a.mul(den, x)?;
                den = addc(a, m, SDEN[i])?;
            }
            Ok([a.div(num, den)?])
        },
        |a| {
            let (mut num, mut den) = (a.c(0.0), a.c(0.0));
            for i in 0..=12 {
                let q = a.div(num, x)?;
                num = addc(a, q, SNUM[i])?;
                let q = a.div(den, x)?;
                den = addc(a, q, SDEN[i])?;
            }
            Ok([a.div(num, den)?])
        },
    )?;
    Ok(s)
}

/// `(n - 1)!` for an integer `1 <= n <= 23` (`tgamma.c`'s table), `other` elsewhere.
fn factorial<A: F64Ops>(a: &mut A, n: A::F, other: A::F) -> R<A::F> {
    let mut r = other;
    // Exact: 22! = 2^19 2143861251406875.
    let mut f = 1.0f64;
    for k in 1..=23u32 {
        if k > 1 {
            f *= f64::from(k - 1);
        }
        let kk = a.c(f64::from(k));
        let hit = a.eq(n, kk)?;
        r = selc(a, hit, f, r)?;
    }
    Ok(r)
}

/// `Γ(x)` (see the module documentation).
pub(crate) fn gamma<A: F64Ops>(a: &mut A, x: A::F) -> R<A::F> {
    let ax = a.abs(x)?;
    let neg = sign_bit(a, x)?;
    // The main path, on a harmless argument where another case applies.
    let lo = ltc(a, ax, 2f64.powi(-54))?;
    let hi = ltc(a, ax, 184.0)?;
    let nlo = a.not(lo)?;
    let ok = a.and(nlo, hi)?;
    let ag = selc_else(a, ok, ax, 3.5)?;
    let y = addc(a, ag, GMHALF)?;
    // The rounding error of y = x + g - 1/2.
    let gt = gtc(a, ag, GMHALF)?;
    let d1 = a.sub(y, ag)?;
    let d1 = addc(a, d1, -GMHALF)?;
    let d2 = addc(a, y, -GMHALF)?;
    let d2 = a.sub(d2, ag)?;
    let dy = a.sel(gt, d1, d2)?;
    let z = addc(a, ag, -0.5)?;
    let s = lanczos_sum(a, ag)?;
    let ny = a.neg(y)?;
    let e = fdlibm::exp_neg(a, ny)?;
    let r = a.mul(s, e)?;
    // x < 0: Γ(x) = -π / (sin(π |x|) |x| Γ(|x|)).
    let sp = fdlibm::sin_pi(a, ag)?;
    let q = a.mul(sp, ag)?;
    let q = a.mul(q, r)?;
    let mpi = a.c(-PI);
    let rr = a.div(mpi, q)?;
    let r = a.sel(neg, rr, r)?;
    let dy = neg_if(a, neg, dy)?;
    let z = neg_if(a, neg, z)?;
    // r += dy (g - 1/2 + 1/2) r / y, then r z z with z = y^(z/2).
    let c = mulc(a, dy, GMHALF + 0.5)?;
    let c = a.mul(c, r)?;
    let c = a.div(c, y)?;
    let r = a.add(r, c)?;
    let hz = mulc(a, z, 0.5)?;
    let p = fdlibm::pow(a, y, hz)?;
    let g = a.mul(r, p)?;
    let g = a.mul(g, p)?;
    // |x| >= 184: +inf (x 2^1023), or ±0 by the parity of floor(x).
    let fx = a.floor(x)?;
    let h1 = mulc(a, fx, 0.5)?;
    let hx = mulc(a, x, 0.5)?;
    let h2 = a.floor(hx)?;
    let even = a.eq(h1, h2)?;
    let (pz, nz) = (a.c(0.0), a.c(-0.0));
    let signed0 = a.sel(even, pz, nz)?;
    let over = mulc(a, x, f64::from_bits(0x7fe0_0000_0000_0000))?; // x 2^1023
    let big_r = a.sel(neg, signed0, over)?;
    let r = a.sel(hi, g, big_r)?;
    // Integers: NaN if negative, a factorial up to 23.
    let int = a.eq(x, fx)?;
    let fact = factorial(a, x, r)?;
    let ir = selc(a, neg, f64::NAN, fact)?;
    let r = a.sel(int, ir, r)?;
    // |x| < 2^-54: 1/x (±inf at ±0).
    let one = a.c(1.0);
    let inv = a.div(one, x)?;
    let r = a.sel(lo, inv, r)?;
    // NaN, ±inf: x + inf.
    let inf = a.c(f64::INFINITY);
    let finite = a.lt(ax, inf)?;
    let xi = a.add(x, inf)?;
    a.sel(finite, r, xi)
}

/// `c ? x : k` for a constant `k`.
fn selc_else<A: F64Ops>(a: &mut A, c: A::B, x: A::F, k: f64) -> R<A::F> {
    let k = a.c(k);
    a.sel(c, x, k)
}

// ----- lgamma ---------------------------------------------------------------------------------

/// `e_lgamma_r.c`'s constants: around 2 (`A`, even and odd), around the minimum `TC`
/// (`T`, by residue mod 3), around 1 (`U / V`), on `[2, 3)` (`S / R`), and Stirling's (`W`).
const A_EVEN: [f64; 6] = [
    0.077_215_664_901_532_87,
    0.067_352_301_053_129_27,
    0.007_385_550_860_814_029,
    0.001_192_707_631_833_620_7,
    0.000_220_862_790_713_908_39,
    2.521_445_654_512_573_3e-5,
];
const A_ODD: [f64; 6] = [
    0.322_467_033_424_113_6,
    0.020_580_808_432_516_733,
    0.002_890_513_836_734_156_3,
    0.000_510_069_792_153_511_3,
    0.000_108_011_567_247_583_94,
    4.486_409_496_189_151_6e-5,
];
const TC: f64 = 1.461_632_144_968_362_2;
const TF: f64 = -0.121_486_290_535_849_61;
const TT: f64 = -3.638_676_997_039_505e-18;
const T0: [f64; 5] = [
    0.483_836_122_723_810_05,
    -0.032_788_541_075_985_965,
    0.006_100_538_702_462_913,
    -0.001_403_464_699_892_328_4,
    0.000_315_632_070_903_625_95,
];
const T1: [f64; 5] = [
    -0.147_587_722_994_593_9,
    0.017_970_675_081_182_04,
    -0.003_684_520_167_811_382_6,
    0.000_881_081_882_437_654,
    -0.000_312_754_168_375_120_86,
];
const T2: [f64; 5] = [
    0.064_624_940_239_133_39,
    -0.010_314_224_129_834_144,
    0.002_259_647_809_006_124_7,
    -0.000_538_595_305_356_740_5,
    0.000_335_529_192_635_519_1,
];
const U: [f64; 6] = [
    -0.077_215_664_901_532_87,
    0.632_827_064_025_093_4,
    1.454_922_501_372_347_7,
    0.977_717_527_963_372_7,
    0.228_963_728_064_692_45,
    0.013_381_091_853_678_766,
];
const V: [f64; 6] = [
    1.0,
    2.455_977_937_130_411_3,
    2.128_489_763_798_934,
    0.769_285_150_456_672_8,
    0.104_222_645_593_369_13,
    0.003_217_092_422_824_239,
];
const S: [f64; 7] = [
    -0.077_215_664_901_532_87,
    0.214_982_415_960_608_85,
    0.325_778_796_408_931,
    0.146_350_472_652_464_45,
    0.026_642_270_303_363_86,
    0.001_840_284_514_073_377_2,
    3.194_753_265_841_009e-5,
];
const RR: [f64; 7] = [
    1.0,
    1.392_005_334_676_210_5,
    0.721_935_547_567_138_1,
    0.171_933_865_632_803_08,
    0.018_645_919_171_565_29,
    0.000_777_942_496_381_893_6,
    7.326_684_307_446_256e-6,
];
const W: [f64; 7] = [
    0.418_938_533_204_672_7,
    0.083_333_333_333_332_97,
    -0.002_777_777_777_287_755_4,
    0.000_793_650_558_643_019_6,
    -0.000_595_187_557_450_34,
    0.000_836_339_918_996_282_1,
    -0.001_630_929_340_965_752_7,
];

/// The three approximations of `ln Γ` on `(0, 2)`, at `y` (`lgamma_r`'s cases 0, 1, 2), to
/// be added to `-ln x` or 0.
fn lgamma_small<A: F64Ops>(a: &mut A, y: A::F) -> R<[A::F; 3]> {
    // 0: y p1 + p2 - y/2, p1 and p2 the even and odd parts in y².
    let z = a.mul(y, y)?;
    let p1 = poly(a, z, &A_EVEN)?;
    let p2 = poly(a, z, &A_ODD)?;
    let p2 = a.mul(z, p2)?;
    let p = a.mul(y, p1)?;
    let p = a.add(p, p2)?;
    let hy = mulc(a, y, 0.5)?;
    let r0 = a.sub(p, hy)?;
    // 1: TF + (z p1 - (TT - w (p2 + y p3))), around the minimum.
    let w = a.mul(z, y)?;
    let p1 = poly(a, w, &T0)?;
    let p2 = poly(a, w, &T1)?;
    let p3 = poly(a, w, &T2)?;
    let yp3 = a.mul(y, p3)?;
    let s = a.add(p2, yp3)?;
    let ws = a.mul(w, s)?;
    let tt = a.c(TT);
    let s = a.sub(tt, ws)?;
    let zp1 = a.mul(z, p1)?;
    let p = a.sub(zp1, s)?;
    let r1 = addc(a, p, TF)?;
    // 2: -y/2 + p1/p2.
    let up = poly(a, y, &U)?;
    let p1 = a.mul(y, up)?;
    let p2 = poly(a, y, &V)?;
    let mhy = mulc(a, y, -0.5)?;
    let q = a.div(p1, p2)?;
    let r2 = a.add(mhy, q)?;
    Ok([r0, r1, r2])
}

/// `ln |Γ(x)|` (see the module documentation).
pub(crate) fn lgamma<A: F64Ops>(a: &mut A, x0: A::F) -> R<A::F> {
    let ax = a.abs(x0)?;
    let neg = sign_bit(a, x0)?;
    let inf = a.c(f64::INFINITY);
    let finite = a.lt(ax, inf)?;
    let tiny = ltc(a, ax, 2f64.powi(-70))?;
    // The main path, on |x|, or on a harmless argument where another case applies.
    let ntiny = a.not(tiny)?;
    let ok = a.and(finite, ntiny)?;
    let x = selc_else(a, ok, ax, 3.5)?;
    let ix = hi_word(a, x)?;
    // x < 0: nadj = ln(π / |x sin(π x)|).
    let t = fdlibm::sin_pi(a, x)?;
    let zero = a.c(0.0);
    let pole = a.eq(t, zero)?;
    let t = a.abs(t)?;
    let tx = a.mul(t, x)?;
    let pi = a.c(PI);
    let q = a.div(pi, tx)?;
    let nadj = fdlibm::log(a, q)?;
    // The regions, by the high word of x.
    let lt2 = ltc_hi(a, ix, 0x4000_0000)?;
    let le09 = ltc_hi(a, ix, 0x3fec_cccd)?;
    let lt8 = ltc_hi(a, ix, 0x4020_0000)?;
    let lt58 = ltc_hi(a, ix, 0x4390_0000)?;
    // (0, 2): y and the case, below or above 0.9.
    let (a0, a1) = (ige(a, ix, 0x3FE7_6944)?, ige(a, ix, 0x3FCD_A661)?);
    let (b0, b1) = (ige(a, ix, 0x3FFB_B4C3)?, ige(a, ix, 0x3FF3_B4C4)?);
    let one = a.c(1.0);
    let two = a.c(2.0);
    let ya0 = a.sub(one, x)?;
    let ya1 = addc(a, x, -(TC - 1.0))?;
    let yb0 = a.sub(two, x)?;
    let yb1 = addc(a, x, -TC)?;
    let yb2 = addc(a, x, -1.0)?;
    let c0 = sel_b(a, le09, a0, b0)?;
    let c1 = sel_b(a, le09, a1, b1)?;
    let y0 = a.sel(le09, ya0, yb0)?;
    let y1 = a.sel(le09, ya1, yb1)?;
    let y2 = a.sel(le09, x, yb2)?;
    let y = a.sel(c1, y1, y2)?;
    let y = a.sel(c0, y0, y)?;
    let [r0, r1, r2] = lgamma_small(a, y)?;
    let rs = a.sel(c1, r1, r2)?;
    let rs = a.sel(c0, r0, rs)?;
    // [2, 8): i = floor(x), y = x - i, then ln of (y + 2)...(y + i - 1).
    let fi = a.floor(x)?;
    let y8 = a.sub(x, fi)?;
    let p = poly(a, y8, &S)?;
    let p = a.mul(y8, p)?;
    let qq = poly(a, y8, &RR)?;
    let hy = mulc(a, y8, 0.5)?;
    let pq = a.div(p, qq)?;
    let r28 = a.add(hy, pq)?;
    let mut zp = one;
    for c in (2..=6).rev() {
        let cf = f64::from(c);
        let yc = addc(a, y8, cf)?;
        let m = a.mul(zp, yc)?;
        let take = ge(a, fi, cf + 1.0)?;
        zp = a.sel(take, m, zp)?;
    }
    // The one logarithm the main path needs: of x, or of that product on [2, 8).
    let nlt2 = a.not(lt2)?;
    let in28 = a.and(nlt2, lt8)?;
    let larg = a.sel(in28, zp, x)?;
    let larg = a.sel(tiny, ax, larg)?;
    let lg = fdlibm::log(a, larg)?;
    let r28l = a.add(r28, lg)?;
    let i3 = ge(a, fi, 3.0)?;
    let r28 = a.sel(i3, r28l, r28)?;
    let nlg = a.neg(lg)?;
    let base = a.sel(le09, nlg, zero)?;
    let rs = a.add(base, rs)?;
    // [8, 2^58): (x - 1/2)(ln x - 1) + w(1/x).
    let zi = a.div(one, x)?;
    let yy = a.mul(zi, zi)?;
    let w = poly(a, yy, &W[1..])?;
    let w = a.mul(zi, w)?;
    let w = addc(a, w, W[0])?;
    let xh = addc(a, x, -0.5)?;
    let lm1 = addc(a, lg, -1.0)?;
    let r8 = a.mul(xh, lm1)?;
    let r8 = a.add(r8, w)?;
    // [2^58, inf): x (ln x - 1).
    let rh = a.mul(x, lm1)?;
    let r = a.sel(lt58, r8, rh)?;
    let r = a.sel(lt8, r28, r)?;
    let r = a.sel(lt2, rs, r)?;
    let x1 = a.eq(x, one)?;
    let x2 = a.eq(x, two)?;
    let x12 = a.or(x1, x2)?;
    let r = a.sel(x12, zero, r)?;
    // x < 0: nadj - r, +inf at the poles (1 / (x - x)).
    let nr = a.sub(nadj, r)?;
    let r = a.sel(neg, nr, r)?;
    let np = a.and(neg, pole)?;
    let r = a.sel(np, inf, r)?;
    // |x| < 2^-70: -ln |x|; NaN, ±inf: x².
    let r = a.sel(tiny, nlg, r)?;
    let xx = a.mul(x0, x0)?;
    a.sel(finite, r, xx)
}

/// `c ? p : q` on booleans.
fn sel_b<A: F64Ops>(a: &mut A, c: A::B, p: A::B, q: A::B) -> R<A::B> {
    let cp = a.and(c, p)?;
    let nc = a.not(c)?;
    let ncq = a.and(nc, q)?;
    a.or(cp, ncq)
}

/// `x >= k` for a constant `k`.
fn ge<A: F64Ops>(a: &mut A, x: A::F, k: f64) -> R<A::B> {
    let k = a.c(k);
    a.le(k, x)
}
