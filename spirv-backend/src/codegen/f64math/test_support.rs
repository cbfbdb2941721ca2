//! What the f64 math tests share: the unit tests (`f64math::tests`) and the device test
//! (`tests/f64_math.rs`, which includes this file with `#[path]`): where the interpreter's
//! libm is wrong, the pseudo-random arguments, and those of `gamma` and `lgamma`.

/// Arguments where glibc 2.36 (the interpreter's libm on Debian 12) is off by more than 2 ulp,
/// with the correctly rounded result (checked in exact rational arithmetic with `π` to 1,400
/// bits): there the functions are compared with that instead.
pub const LIBM_ERRORS: &[(&str, f64, f64)] = &[
    // x = n π/2 + 4.687165924254628e-19 with n = 1 (mod 4); glibc: -4.68716592425462e-19.
    ("cos", 5.319_372_648_326_541e255, -4.687_165_924_254_628e-19),
    (
        "cos",
        -5.319_372_648_326_541e255,
        -4.687_165_924_254_628e-19,
    ),
    // -1 / tan(4.687165924254628e-19); glibc: -2.1334853857537075e18.
    ("tan", 5.319_372_648_326_541e255, -2.133_485_385_753_704e18),
    ("tan", -5.319_372_648_326_541e255, 2.133_485_385_753_704e18),
];

/// `reference(x)`, or the correct result where [`LIBM_ERRORS`] lists one for `name`.
pub fn reference(name: &str, x: f64, r: impl Fn(f64) -> f64) -> f64 {
    LIBM_ERRORS
        .iter()
        .find(|e| e.0 == name && e.1.to_bits() == x.to_bits())
        .map_or_else(|| r(x), |e| e.2)
}

/// A deterministic pseudo-random sequence (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// `±10^u`, `u` uniform in `[lo, hi)`.
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let s = if self.next() & 1 == 1 { -1.0 } else { 1.0 };
        s * 10f64.powf(self.uniform(lo, hi))
    }
}

/// Arguments of `gamma` and `lgamma`: special values (±0, ±inf, NaN, subnormal, tiny, huge),
/// `n` random ones in each of `(0, 190)`, `(-190, 0)`, `(0, 3)`, `(-6, 0)`, near a pole or a
/// positive integer, near 1 and near 2, and of magnitudes `10^-320..10^308` of either sign; the
/// integers and half-integers of `[-200, 200]` with their neighbours; and the edges of the
/// algorithms' regions (`2^-54`, `2^-70`, 0.9, the minimum 1.4616, 8, 23, 171.62, 184, `2^58`)
/// and the negative zeros of `lgamma`, with their neighbours and negations.
pub fn gamma_arguments(n: usize, seed: u64) -> Vec<f64> {
    let mut v = vec![
        0.0,
        f64::INFINITY,
        f64::NAN,
        5e-324,
        1e-310,
        f64::MIN_POSITIVE,
        1e-300,
        1e-200,
        1e-20,
        1e-10,
        0.5,
        1.5,
        2.5,
        170.0,
        171.0,
        171.6,
        171.7,
        1e10,
        1e20,
        1e300,
        f64::MAX,
    ];
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    let mut r = Rng(seed);
    for _ in 0..n {
        v.push(r.uniform(0.0, 190.0));
        v.push(r.uniform(-190.0, 0.0));
        v.push(r.uniform(0.0, 3.0));
        v.push(r.uniform(-6.0, 0.0));
        let k = (r.next() % 200) as f64;
        let d = r.log_uniform(-16.0, -1.0);
        v.push(-k + d);
        v.push(k + d);
        v.push(1.0 + r.log_uniform(-17.0, -2.0));
        v.push(2.0 + r.log_uniform(-16.0, -2.0));
        v.push(r.log_uniform(-320.0, 308.0));
    }
    for k in -200..=200 {
        let k = f64::from(k);
        v.extend([k, k + 0.5, k.next_up(), k.next_down()]);
    }
    for e in [
        2f64.powi(-54),
        2f64.powi(-70),
        0.9,
        0.2316,
        0.7316,
        1.2316,
        1.7316,
        1.461_632_144_968_362_2,
        8.0,
        23.0,
        171.62,
        171.624_376_956_302_7,
        171.624_376_956_302_8,
        184.0,
        2f64.powi(52),
        2f64.powi(53),
        2f64.powi(58),
        // The negative zeros of lgamma.
        2.457_024_738_220_800_5,
        2.747_682_646_727_412_7,
        3.143_580_888_349_980_4,
        3.955_294_284_858_597,
        4.039_361_839_740_536,
        4.991_544_640_560_048,
    ] {
        v.extend([
            e,
            e.next_up(),
            e.next_down(),
            -e,
            -e.next_up(),
            -e.next_down(),
        ]);
    }
    v
}
