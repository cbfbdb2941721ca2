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
//! - lavapipe's f64 `Trunc` loses the sign of zero (`trunc(-0.5)` is `+0.0`):
//!   [`Gen::trunc_signed`] puts it back.

use crate::gen::{Gen, Ie, R};
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
}
