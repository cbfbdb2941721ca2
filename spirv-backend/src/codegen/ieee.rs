//! IEEE semantics of float arithmetic in kernels, where drivers would otherwise lose them.
//!
//! Two things stand between a module's float instructions and IEEE results:
//! - Without the `SignedZeroInfNanPreserve` execution mode (float controls), drivers may assume
//!   that no operand or result is NaN, an infinity or `-0.0`, and rewrite `x * 0.0` to `0.0`
//!   or `x + 0.0` to `x`. [`Gen::finish`] declares the mode for every float width a module uses
//!   (and `vkad_vk::Context::kernel` drops it on devices without
//!   `shaderSignedZeroInfNanPreserveFloatN`).
//! - Mesa's gallivm (the LLVM code generator of lavapipe/llvmpipe, Mesa 22.3 at least) simplifies
//!   arithmetic while it builds LLVM IR, whatever the float controls: an operand that *is* the
//!   constant `+0.0` makes `a * 0 → 0`, `0 * b → 0`, `a + 0 → a`, `0 + b → b`, `0 - b → -b`,
//!   `0 / b → 0` and `a / 0 → undef`, all wrong for some of NaN, ±inf and ±0 (`nan * 0.0` gives
//!   `0.0`, `1.0 / 0.0` garbage). [`Gen::ieee_operand`] hides that constant: arithmetic gets
//!   a `+0.0` that the driver cannot see is constant (`NumWorkgroups.x == 0 ? -0.0 : +0.0`,
//!   and a dispatch has at least one workgroup), so the instruction is compiled as written.
//!   The same goes for values: NIR rewrites `select(c, -1.0, 0.0)` as `-b2f(c)`, which is
//!   `-0.0` where `c` is false; constants of the program reach kernel code through
//!   [`Gen::ieee_float`].
//! - GLSL's `Pow` is defined for `x > 0` only: [`Gen::pow_special_cases`] gives `f32` and
//!   `f16` powers the special cases of C99 Annex F (`f64` has its own `pow`,
//!   `crate::codegen::f64math`).
//! - lavapipe's f64 `Trunc` loses the sign of zero (`trunc(-0.5)` is `+0.0`):
//!   [`Gen::trunc_signed`] puts it back.

use crate::codegen::gen::{Gen, Ie, R};
use rspirv::dr::Operand;
use rspirv::spirv::{GlslStd450Op as GLOp, Op, Word};
use vkad_core::prim::{FloatType, PrimType};

impl Gen {
    /// A `+0.0` of float type `ft`'s register that the driver cannot see is constant:
    /// `NumWorkgroups.x == 0 ? -0.0 : +0.0` (a dispatch has at least one workgroup), computed
    /// once, at the top of `main`.
    pub(crate) fn opaque_zero(&mut self, ft: FloatType) -> Word {
        let ty = self.reg_ty(PrimType::Float(ft));
        if let Some(&z) = self.opaque_zeros.get(&ty) {
            return z;
        }
        let (u32t, bt) = (self.t_u32(), self.t_bool());
        let v3 = self.b.type_vector(u32t, 3);
        let (zero, neg, z32) = (self.c_float(ft, 0.0), self.c_float(ft, -0.0), self.c_u32(0));
        let var = self.num_groups_var();
        let n3 = self.prologue_value(v3, Op::Load, vec![Operand::IdRef(var)]);
        let n = self.prologue_value(
            u32t,
            Op::CompositeExtract,
            vec![Operand::IdRef(n3), Operand::LiteralBit32(0)],
        );
        let never =
            self.prologue_value(bt, Op::IEqual, vec![Operand::IdRef(n), Operand::IdRef(z32)]);
        let z = self.prologue_value(
            ty,
            Op::Select,
            vec![
                Operand::IdRef(never),
                Operand::IdRef(neg),
                Operand::IdRef(zero),
            ],
        );
        self.opaque_zeros.insert(ty, z);
        z
    }

    /// A float constant of type `ft` (its register type), [`Gen::opaque_zero`] for `+0.0`:
    /// how the constants of a program reach kernel code.
    pub(crate) fn ieee_float(&mut self, ft: FloatType, v: f64) -> Word {
        if v == 0.0 && v.is_sign_positive() {
            self.opaque_zero(ft)
        } else {
            self.c_float(ft, v)
        }
    }

    /// `x`, or [`Gen::opaque_zero`] in place of the constant `+0.0` of float type `ft`'s
    /// register: what float arithmetic (`+ - * /`) takes as operands.
    pub(crate) fn ieee_operand(&mut self, ft: FloatType, x: Word) -> Word {
        if x == self.c_float(ft, 0.0) {
            self.opaque_zero(ft)
        } else {
            x
        }
    }

    /// [`Gen::ieee_operand`] of both operands of a binary float operation.
    pub(crate) fn ieee_operands(&mut self, ft: FloatType, x: Word, y: Word) -> (Word, Word) {
        (self.ieee_operand(ft, x), self.ieee_operand(ft, y))
    }

    /// `trunc x` (GLSL `Trunc`) with the sign of `x` on a zero result.
    pub(crate) fn trunc_signed(&mut self, ft: FloatType, x: Word) -> R<Word> {
        let ty = self.reg_ty(PrimType::Float(ft));
        let t = self.glsl(ty, GLOp::Trunc, &[x])?;
        if ft != FloatType::F64 {
            return Ok(t);
        }
        let u64t = self.t_u64();
        let (sign, rest) = (self.c_u64(1 << 63), self.c_u64(!(1 << 63)));
        let tb = self.b.bitcast(u64t, None, t).ie()?;
        let xb = self.b.bitcast(u64t, None, x).ie()?;
        let mag = self.b.bitwise_and(u64t, None, tb, rest).ie()?;
        let s = self.b.bitwise_and(u64t, None, xb, sign).ie()?;
        let r = self.b.bitwise_or(u64t, None, mag, s).ie()?;
        self.b.bitcast(ty, None, r).ie()
    }

    /// `x^y` from `p = |x|^y` (right for finite nonzero `x` and finite `y` only) with the
    /// special cases of C99 Annex F, as the interpreter's `powf`: a negative `x` gives `±p` for
    /// integral `y` by its parity and NaN otherwise; `±0` and `±inf` give `±0` or `±inf` (the
    /// sign kept for odd integral `y`); `y = ±inf` gives 1 for `|x| = 1`, else 0 or inf; NaN
    /// gives NaN, except `pow(x, ±0) = 1` and `pow(1, y) = 1`.
    pub(crate) fn pow_special_cases(
        &mut self,
        ft: FloatType,
        x: Word,
        y: Word,
        p: Word,
    ) -> R<Word> {
        let ty = self.reg_ty(PrimType::Float(ft));
        let bt = self.t_bool();
        let (z, one, two) = (
            self.opaque_zero(ft),
            self.c_float(ft, 1.0),
            self.c_float(ft, 2.0),
        );
        let (inf, nan) = (self.c_float(ft, f64::INFINITY), self.c_float(ft, f64::NAN));
        let ax = self.glsl(ty, GLOp::FAbs, &[x])?;
        let ay = self.glsl(ty, GLOp::FAbs, &[y])?;
        let b = &mut self.b;
        // Integral and odd y.
        let fy = b
            .ext_inst(ty, None, self.glsl, GLOp::Floor as u32, [Operand::IdRef(y)])
            .ie()?;
        let integral = b.f_ord_equal(bt, None, fy, y).ie()?;
        let half = b.f_div(ty, None, y, two).ie()?;
        let fh = b
            .ext_inst(
                ty,
                None,
                self.glsl,
                GLOp::Floor as u32,
                [Operand::IdRef(half)],
            )
            .ie()?;
        let even = b.f_ord_equal(bt, None, fh, half).ie()?;
        let not_even = b.logical_not(bt, None, even).ie()?;
        let odd = b.logical_and(bt, None, integral, not_even).ie()?;
        // Negative x: ±p for integral y, NaN otherwise.
        let xneg = b.f_ord_less_than(bt, None, x, z).ie()?;
        let negp = b.f_negate(ty, None, p).ie()?;
        let flip = b.logical_and(bt, None, xneg, odd).ie()?;
        let r = b.select(ty, None, flip, negp, p).ie()?;
        let not_int = b.logical_not(bt, None, integral).ie()?;
        let bad = b.logical_and(bt, None, xneg, not_int).ie()?;
        let r = b.select(ty, None, bad, nan, r).ie()?;
        // ±0: inf for y < 0, 0 for y > 0, the sign of x kept for odd y (-x is -0 or +0,
        // -inf / inf as 1 / x).
        let yneg = b.f_ord_less_than(bt, None, y, z).ie()?;
        let x0 = b.f_ord_equal(bt, None, ax, z).ie()?;
        let zr = b.select(ty, None, yneg, inf, z).ie()?;
        let recip = b.f_div(ty, None, one, x).ie()?; // ±inf for ±0
        let zr_odd = b.select(ty, None, yneg, recip, x).ie()?;
        let zr = b.select(ty, None, odd, zr_odd, zr).ie()?;
        let r = b.select(ty, None, x0, zr, r).ie()?;
        // ±inf: inf for y > 0, 0 for y < 0, -inf (-0) for odd y and x = -inf.
        let xi = b.is_inf(bt, None, x).ie()?;
        let ir = b.select(ty, None, yneg, z, inf).ie()?;
        let irecip = b.f_div(ty, None, one, x).ie()?; // ±0 for ±inf
        let ir_odd = b.select(ty, None, yneg, irecip, x).ie()?;
        let ir = b.select(ty, None, odd, ir_odd, ir).ie()?;
        let r = b.select(ty, None, xi, ir, r).ie()?;
        // y = ±inf: 1 for |x| = 1; inf when (|x| < 1) == (y < 0), else 0.
        let yi = b.is_inf(bt, None, y).ie()?;
        let small = b.f_ord_less_than(bt, None, ax, one).ie()?;
        let grow = b.logical_equal(bt, None, small, yneg).ie()?;
        let yr = b.select(ty, None, grow, inf, z).ie()?;
        let ax1 = b.f_ord_equal(bt, None, ax, one).ie()?;
        let yr = b.select(ty, None, ax1, one, yr).ie()?;
        let r = b.select(ty, None, yi, yr, r).ie()?;
        // NaN, then the cases that are 1 even for NaN.
        let xn = b.is_nan(bt, None, x).ie()?;
        let yn = b.is_nan(bt, None, y).ie()?;
        let n = b.logical_or(bt, None, xn, yn).ie()?;
        let r = b.select(ty, None, n, nan, r).ie()?;
        let y0 = b.f_ord_equal(bt, None, ay, z).ie()?;
        let x1 = b.f_ord_equal(bt, None, x, one).ie()?;
        let unit = b.logical_or(bt, None, y0, x1).ie()?;
        b.select(ty, None, unit, one, r).ie()
    }

    /// GLSL `Pow(ax, y)` on `f32` registers for `ax >= 0`, with a subnormal `ax` (which
    /// lavapipe's `Pow` flushes: `pow(1e-45, 0.5)` came out as `7.7e-20`) scaled into the normal
    /// range first: `pow(ax 2^24, y) 2^(-24 y)`.
    pub(crate) fn pow_subnormal(&mut self, ax: Word, y: Word) -> R<Word> {
        let f = self.t_f32();
        let bt = self.t_bool();
        let min = self.c_f32(f32::MIN_POSITIVE);
        let tiny = self.b.f_ord_less_than(bt, None, ax, min).ie()?;
        let up = self.c_f32(16_777_216.0); // 2^24
        let scaled = self.b.f_mul(f, None, ax, up).ie()?;
        let base = self.b.select(f, None, tiny, scaled, ax).ie()?;
        let p = self.glsl(f, GLOp::Pow, &[base, y])?;
        let m24 = self.c_f32(-24.0);
        let e = self.b.f_mul(f, None, y, m24).ie()?;
        let s = self.glsl(f, GLOp::Exp2, &[e])?;
        let ps = self.b.f_mul(f, None, p, s).ie()?;
        self.b.select(f, None, tiny, ps, p).ie()
    }
}
