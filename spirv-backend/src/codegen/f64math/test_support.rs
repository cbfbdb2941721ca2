//! What the f64 math tests share: the unit tests (`f64math::tests`) and the device test
//! (`tests/f64_math.rs`, which includes this file with `#[path]`): where the interpreter's
//! libm is wrong, and the pseudo-random arguments.

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
