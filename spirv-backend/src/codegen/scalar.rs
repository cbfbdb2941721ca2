//! Scalar operations in SPIR-V with exactly the semantics of `vkad_core::primops` (see the module
//! documentation there), on the register representation described in [`crate::codegen::gen`].
//!
//! Known differences (documented, within the test tolerance): `f32` and `f16` transcendental
//! functions are [`crate::codegen::f32math`]'s, some of them GLSL.std.450's, whose precision is
//! implementation-defined. On `f64` arguments,
//! `exp`, `log`, `log2`, `log10`, `log1p`, `pow`, the trigonometric and hyperbolic functions,
//! their inverses, `cbrt`, `erf`, `erfc`, `gamma` and `lgamma` are computed in `f64` by
//! [`crate::codegen::f64math`] (within 2 ulp of the interpreter; `gamma` and `lgamma` bit for bit,
//! by the interpreter's own algorithms). Conversions to `f16` from `f64` round twice (via `f32`).

use crate::codegen::gen::{Gen, Ie, ERR_DIVZERO, ERR_NEGEXP, R};
use crate::error::Error;
use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, GlslStd450Op as GLOp, Word};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{BinOp, CmpOp, ConvOp, MathFn, UnOp};
use vkad_core::prim::{FloatType, IntType, PrimType};

impl Gen {
    pub fn glsl(&mut self, ty: Word, op: GLOp, args: &[Word]) -> R<Word> {
        let glsl = self.glsl;
        self.b
            .ext_inst(
                ty,
                None,
                glsl,
                op as u32,
                args.iter().map(|&a| Operand::IdRef(a)),
            )
            .ie()
    }

    pub(crate) fn nocontract(&mut self, id: Word) -> Word {
        self.b.decorate(id, Decoration::NoContraction, []);
        id
    }

    /// Puts a small integer back in canonical form (sign- or zero-extended to 32 bits).
    pub fn canon(&mut self, t: IntType, x: Word) -> R<Word> {
        let bits = t.bits();
        if bits >= 32 {
            return Ok(x);
        }
        let u = self.t_u32();
        if t.signed() {
            let s = self.c_u32(32 - bits);
            let l = self.b.shift_left_logical(u, None, x, s).ie()?;
            self.b.shift_right_arithmetic(u, None, l, s).ie()
        } else {
            let m = self.c_u32((1u32 << bits) - 1);
            self.b.bitwise_and(u, None, x, m).ie()
        }
    }

    /// Rounds an f32 register to f16 precision (f16 registers are f32s), to nearest with ties
    /// to even, by bit arithmetic (not `PackHalf2x16`, whose rounding and overflow are the
    /// driver's: NVIDIA's differ): below 2^-14 (f16's subnormals) `RoundEven(x 2^24) 2^-24`,
    /// above it the low 13 bits of the significand rounded away; beyond 65504 `±inf`; NaN kept.
    pub fn round16(&mut self, x: Word) -> R<Word> {
        let (f, u, bt) = (self.t_f32(), self.t_u32(), self.t_bool());
        let ax = self.glsl(f, GLOp::FAbs, &[x])?;
        let lim = self.c_f32(1.0 / 16384.0);
        let small = self.b.f_ord_less_than(bt, None, ax, lim).ie()?;
        let (up, down) = (self.c_f32(16_777_216.0), self.c_f32(1.0 / 16_777_216.0));
        let xs = self.b.f_mul(f, None, x, up).ie()?;
        let xs = self.glsl(f, GLOp::RoundEven, &[xs])?;
        let qs = self.b.f_mul(f, None, xs, down).ie()?;
        let b = self.b.bitcast(u, None, x).ie()?;
        let (c13, one) = (self.c_u32(13), self.c_u32(1));
        let lsb = self.b.shift_right_logical(u, None, b, c13).ie()?;
        let lsb = self.b.bitwise_and(u, None, lsb, one).ie()?;
        let half = self.c_u32(0xfff);
        let r = self.b.i_add(u, None, b, half).ie()?;
        let r = self.b.i_add(u, None, r, lsb).ie()?;
        let keep = self.c_u32(0xffff_e000);
        let r = self.b.bitwise_and(u, None, r, keep).ie()?;
        let rn = self.b.bitcast(f, None, r).ie()?;
        let arn = self.glsl(f, GLOp::FAbs, &[rn])?;
        let max = self.c_f32(65504.0);
        let over = self.b.f_ord_greater_than(bt, None, arn, max).ie()?;
        let inf = self.c_f32(f32::INFINITY);
        let inf = self.copysign(FloatType::F32, inf, x)?;
        let r = self.b.select(f, None, over, inf, rn).ie()?;
        let r = self.b.select(f, None, small, qs, r).ie()?;
        let nan = self.b.is_nan(bt, None, x).ie()?;
        self.b.select(f, None, nan, x, r).ie()
    }

    fn fround(&mut self, t: FloatType, x: Word) -> R<Word> {
        if t == FloatType::F16 {
            self.round16(x)
        } else {
            Ok(x)
        }
    }

    /// A unary operator.
    pub fn unop(&mut self, op: UnOp, x: Word) -> R<Word> {
        let t = match op {
            UnOp::Neg(t) | UnOp::Not(t) | UnOp::Abs(t) | UnOp::Signum(t) => t,
        };
        let ty = self.reg_ty(t);
        let bt = self.t_bool();
        Ok(match (op, t) {
            (UnOp::Not(_), PrimType::Bool) => self.b.logical_not(bt, None, x).ie()?,
            (UnOp::Not(_), PrimType::Int(it)) => {
                let r = self.b.not(ty, None, x).ie()?;
                self.canon(it, r)?
            }
            (UnOp::Neg(_), PrimType::Int(it)) => {
                let z = self.c_int(it, 0);
                let r = self.b.i_sub(ty, None, z, x).ie()?;
                self.canon(it, r)?
            }
            (UnOp::Neg(_), PrimType::Float(_)) => self.b.f_negate(ty, None, x).ie()?,
            (UnOp::Abs(_), PrimType::Int(it)) => {
                if it.signed() {
                    let r = self.glsl(ty, GLOp::SAbs, &[x])?;
                    self.canon(it, r)?
                } else {
                    x
                }
            }
            (UnOp::Abs(_), PrimType::Float(_)) => self.glsl(ty, GLOp::FAbs, &[x])?,
            (UnOp::Signum(_), PrimType::Int(it)) => {
                if it.signed() {
                    self.glsl(ty, GLOp::SSign, &[x])?
                } else {
                    let z = self.c_int(it, 0);
                    let one = self.c_int(it, 1);
                    let nz = self.b.i_not_equal(bt, None, x, z).ie()?;
                    self.b.select(ty, None, nz, one, z).ie()?
                }
            }
            (UnOp::Signum(_), PrimType::Float(ft)) => {
                let (z, one, m1) = (
                    self.c_float(ft, 0.0),
                    self.c_float(ft, 1.0),
                    self.c_float(ft, -1.0),
                );
                let gt = self.b.f_ord_greater_than(bt, None, x, z).ie()?;
                let lt = self.b.f_ord_less_than(bt, None, x, z).ie()?;
                // lavapipe turns `select(c, -1.0, 0.0)` into `-b2f(c)`, -0.0 when c is false.
                let z = self.opaque_zero(ft);
                let s1 = self.b.select(ty, None, lt, m1, z).ie()?;
                let s2 = self.b.select(ty, None, gt, one, s1).ie()?;
                let nan = self.b.is_nan(bt, None, x).ie()?;
                self.b.select(ty, None, nan, x, s2).ie()?
            }
            _ => return Err(Error::bug(format!("{op:?} on {}", t.name()))),
        })
    }

    /// `b == -1` for a signed integer register.
    fn is_minus_one(&mut self, it: IntType, y: Word) -> R<Word> {
        let bt = self.t_bool();
        let m1 = self.c_int(it, -1);
        self.b.i_equal(bt, None, y, m1).ie()
    }

    /// Checks `y != 0` (error otherwise) and returns a safe divisor (1 where `y` is 0).
    fn safe_divisor(&mut self, it: IntType, y: Word, loc: &Option<SrcLoc>) -> R<Word> {
        let bt = self.t_bool();
        let ty = self.reg_ty(PrimType::Int(it));
        let z = self.c_int(it, 0);
        let one = self.c_int(it, 1);
        let isz = self.b.i_equal(bt, None, y, z).ie()?;
        let site = self.site(loc, "division by zero");
        self.fail_if(isz, ERR_DIVZERO, site)?;
        self.b.select(ty, None, isz, one, y).ie()
    }

    /// Truncating division / remainder with the overflow cases (`MIN / -1`) defined as wrapping.
    fn trunc_divrem(&mut self, it: IntType, x: Word, y: Word, rem: bool) -> R<Word> {
        let ty = self.reg_ty(PrimType::Int(it));
        if !it.signed() {
            return if rem {
                self.b.u_mod(ty, None, x, y).ie()
            } else {
                self.b.u_div(ty, None, x, y).ie()
            };
        }
        let m1 = self.is_minus_one(it, y)?;
        let one = self.c_int(it, 1);
        let y2 = self.b.select(ty, None, m1, one, y).ie()?;
        if rem {
            // x - (x / y) * y rather than OpSRem: Vulkan leaves OpSRem and OpSMod undefined for
            // negative operands (NVIDIA's driver does give wrong results; lavapipe does not).
            let q = self.b.s_div(ty, None, x, y2).ie()?;
            let qy = self.b.i_mul(ty, None, q, y2).ie()?;
            let r = self.b.i_sub(ty, None, x, qy).ie()?;
            let r = self.canon(it, r)?;
            let z = self.c_int(it, 0);
            self.b.select(ty, None, m1, z, r).ie()
        } else {
            let q = self.b.s_div(ty, None, x, y2).ie()?;
            let z = self.c_int(it, 0);
            let neg = self.b.i_sub(ty, None, z, x).ie()?;
            let r = self.b.select(ty, None, m1, neg, q).ie()?;
            self.canon(it, r)
        }
    }

    /// A binary operator; `loc` is where division by zero / negative exponents are reported.
    pub fn binop(&mut self, op: BinOp, x: Word, y: Word, loc: &Option<SrcLoc>) -> R<Word> {
        use BinOp::*;
        let bt = self.t_bool();
        match op {
            LogAnd => return self.b.logical_and(bt, None, x, y).ie(),
            LogOr => return self.b.logical_or(bt, None, x, y).ie(),
            _ => {}
        }
        let t = vkad_core::primops::binop_type(op);
        let ty = self.reg_ty(t);
        match t {
            PrimType::Bool => Ok(match op {
                And(_) | Min(_) => self.b.logical_and(bt, None, x, y).ie()?,
                Or(_) | Max(_) => self.b.logical_or(bt, None, x, y).ie()?,
                _ => return Err(Error::bug(format!("{op:?} on bool"))),
            }),
            PrimType::Int(it) => {
                let r = match op {
                    Add(_) => self.b.i_add(ty, None, x, y).ie()?,
                    Sub(_) => self.b.i_sub(ty, None, x, y).ie()?,
                    Mul(_) => self.b.i_mul(ty, None, x, y).ie()?,
                    Div(_) | Mod(_) => {
                        let y = self.safe_divisor(it, y, loc)?;
                        let is_div = matches!(op, Div(_));
                        if !it.signed() {
                            return self.trunc_divrem(it, x, y, !is_div);
                        }
                        let q = self.trunc_divrem(it, x, y, false)?;
                        let r = self.trunc_divrem(it, x, y, true)?;
                        let z = self.c_int(it, 0);
                        let rnz = self.b.i_not_equal(bt, None, r, z).ie()?;
                        let rneg = self.b.s_less_than(bt, None, r, z).ie()?;
                        let yneg = self.b.s_less_than(bt, None, y, z).ie()?;
                        let diff = self.b.logical_not_equal(bt, None, rneg, yneg).ie()?;
                        let adj = self.b.logical_and(bt, None, rnz, diff).ie()?;
                        if is_div {
                            let one = self.c_int(it, 1);
                            let q1 = self.b.i_sub(ty, None, q, one).ie()?;
                            let q1 = self.canon(it, q1)?;
                            self.b.select(ty, None, adj, q1, q).ie()?
                        } else {
                            let r1 = self.b.i_add(ty, None, r, y).ie()?;
                            let r1 = self.canon(it, r1)?;
                            self.b.select(ty, None, adj, r1, r).ie()?
                        }
                    }
                    Quot(_) | Rem(_) => {
                        let y = self.safe_divisor(it, y, loc)?;
                        return self.trunc_divrem(it, x, y, matches!(op, Rem(_)));
                    }
                    Pow(_) => return self.ipow(it, x, y, loc),
                    And(_) => self.b.bitwise_and(ty, None, x, y).ie()?,
                    Or(_) => self.b.bitwise_or(ty, None, x, y).ie()?,
                    Xor(_) => self.b.bitwise_xor(ty, None, x, y).ie()?,
                    Min(_) => {
                        let o = if it.signed() { GLOp::SMin } else { GLOp::UMin };
                        self.glsl(ty, o, &[x, y])?
                    }
                    Max(_) => {
                        let o = if it.signed() { GLOp::SMax } else { GLOp::UMax };
                        self.glsl(ty, o, &[x, y])?
                    }
                    Shl(_) | Shr(_) | UShr(_) => return self.shift(op, it, x, y),
                    LogAnd | LogOr => unreachable_op(op)?,
                };
                self.canon(it, r)
            }
            PrimType::Float(ft) => {
                let (x, y) = self.ieee_operands(ft, x, y);
                let r = match op {
                    Add(_) => {
                        let r = self.b.f_add(ty, None, x, y).ie()?;
                        self.nocontract(r)
                    }
                    Sub(_) => {
                        let r = self.b.f_sub(ty, None, x, y).ie()?;
                        self.nocontract(r)
                    }
                    Mul(_) => {
                        let r = self.b.f_mul(ty, None, x, y).ie()?;
                        self.nocontract(r)
                    }
                    Div(_) => self.b.f_div(ty, None, x, y).ie()?,
                    Mod(_) => {
                        let q = self.b.f_div(ty, None, x, y).ie()?;
                        let fl = self.glsl(ty, GLOp::Floor, &[q])?;
                        let m = self.b.f_mul(ty, None, y, fl).ie()?;
                        let m = self.nocontract(m);
                        let r = self.b.f_sub(ty, None, x, m).ie()?;
                        self.nocontract(r)
                    }
                    Pow(_) => self.fpow(ft, x, y)?,
                    Min(_) => self.glsl(ty, GLOp::NMin, &[x, y])?,
                    Max(_) => self.glsl(ty, GLOp::NMax, &[x, y])?,
                    _ => return Err(Error::bug(format!("{op:?} on floats"))),
                };
                self.fround(ft, r)
            }
        }
    }

    fn shift(&mut self, op: BinOp, it: IntType, x: Word, y: Word) -> R<Word> {
        let bits = it.bits();
        let ty = self.reg_ty(PrimType::Int(it));
        let bt = self.t_bool();
        // The amount as an unsigned number of the operand's width.
        let n = if bits < 32 {
            let m = self.c_u32((1u32 << bits) - 1);
            self.b.bitwise_and(ty, None, y, m).ie()?
        } else {
            y
        };
        let w = self.c_int(IntType::U64, bits as i128);
        let w = if bits == 64 { w } else { self.c_u32(bits) };
        let big = self.b.u_greater_than_equal(bt, None, n, w).ie()?;
        let z = self.c_int(it, 0);
        let safe_n = self.b.select(ty, None, big, z, n).ie()?;
        let r = match op {
            BinOp::Shl(_) => {
                let s = self.b.shift_left_logical(ty, None, x, safe_n).ie()?;
                let s = self.canon(it, s)?;
                self.b.select(ty, None, big, z, s).ie()?
            }
            BinOp::Shr(_) if it.signed() => {
                let s = self.b.shift_right_arithmetic(ty, None, x, safe_n).ie()?;
                let neg = self.b.s_less_than(bt, None, x, z).ie()?;
                let m1 = self.c_int(it, -1);
                let fill = self.b.select(ty, None, neg, m1, z).ie()?;
                self.b.select(ty, None, big, fill, s).ie()?
            }
            _ => {
                // Logical: on the operand's bits.
                let xb = if bits < 32 {
                    let m = self.c_u32((1u32 << bits) - 1);
                    self.b.bitwise_and(ty, None, x, m).ie()?
                } else {
                    x
                };
                let s = self.b.shift_right_logical(ty, None, xb, safe_n).ie()?;
                let s = self.canon(it, s)?;
                self.b.select(ty, None, big, z, s).ie()?
            }
        };
        Ok(r)
    }

    fn ipow(&mut self, it: IntType, x: Word, y: Word, loc: &Option<SrcLoc>) -> R<Word> {
        let ty = self.reg_ty(PrimType::Int(it));
        let bt = self.t_bool();
        let z = self.c_int(it, 0);
        if it.signed() {
            let neg = self.b.s_less_than(bt, None, y, z).ie()?;
            let site = self.site(loc, "negative exponent in integer power");
            self.fail_if(neg, ERR_NEGEXP, site)?;
        }
        let (acc, base, e) = (self.var(ty), self.var(ty), self.var(ty));
        let one = self.c_int(it, 1);
        self.store(acc, one)?;
        self.store(base, x)?;
        // A negative exponent (an error) computes with 0.
        let ye = if it.signed() {
            let neg = self.b.s_less_than(bt, None, y, z).ie()?;
            self.b.select(ty, None, neg, z, y).ie()?
        } else {
            y
        };
        self.store(e, ye)?;
        self.while_loop(
            |g| {
                let ev = g.load(ty, e)?;
                g.b.i_not_equal(bt, None, ev, z).ie()
            },
            |g| {
                let ev = g.load(ty, e)?;
                let bv = g.load(ty, base)?;
                let av = g.load(ty, acc)?;
                let lo = g.b.bitwise_and(ty, None, ev, one).ie()?;
                let odd = g.b.i_not_equal(bt, None, lo, z).ie()?;
                let am = g.b.i_mul(ty, None, av, bv).ie()?;
                let an = g.b.select(ty, None, odd, am, av).ie()?;
                g.store(acc, an)?;
                let bb = g.b.i_mul(ty, None, bv, bv).ie()?;
                g.store(base, bb)?;
                let en = g.b.shift_right_logical(ty, None, ev, one).ie()?;
                g.store(e, en)
            },
        )?;
        let r = self.load(ty, acc)?;
        self.canon(it, r)
    }

    /// Converts an f64 register to f32 for functions GLSL.std.450 has only for 32 bits, applies
    /// `f`, and converts back.
    fn via_f32(
        &mut self,
        ft: FloatType,
        args: &[Word],
        f: impl FnOnce(&mut Gen, &[Word]) -> R<Word>,
    ) -> R<Word> {
        if ft != FloatType::F64 {
            let r = f(self, args)?;
            return self.fround(ft, r);
        }
        let f32t = self.t_f32();
        let f64t = self.t_f64();
        let mut a32 = Vec::with_capacity(args.len());
        for &a in args {
            a32.push(self.b.f_convert(f32t, None, a).ie()?);
        }
        let r = f(self, &a32)?;
        self.b.f_convert(f64t, None, r).ie()
    }

    fn fpow(&mut self, ft: FloatType, x: Word, y: Word) -> R<Word> {
        if ft == FloatType::F64 {
            return self.f64_pow(x, y);
        }
        // GLSL `Pow` (defined only for x > 0) on |x|, then C's special cases.
        let ty = self.reg_ty(PrimType::Float(ft));
        let ax = self.glsl(ty, GLOp::FAbs, &[x])?;
        let p = self.pow_subnormal(ax, y)?;
        self.pow_special_cases(ft, x, y, p)
    }

    /// `hypot x y = m sqrt((|x|/m)² + (|y|/m)²)` with `m = max(|x|, |y|)`, scaled by the power
    /// of two nearest `m` instead of divided by `m` (exact, and no division, whose precision
    /// Vulkan leaves open for huge divisors: NVIDIA flushes `1/3e38` to 0); `+inf` if either is
    /// infinite, else NaN if either is NaN (`FMax` drops a NaN operand), `0` for two zeros.
    fn hypot(&mut self, ft: FloatType, x: Word, y: Word) -> R<Word> {
        let ty = self.reg_ty(PrimType::Float(ft));
        let bt = self.t_bool();
        let ax = self.glsl(ty, GLOp::FAbs, &[x])?;
        let ay = self.glsl(ty, GLOp::FAbs, &[y])?;
        let m = self.glsl(ty, GLOp::FMax, &[ax, ay])?;
        // The exponent field E of m, clamped to [1, 2 bias - 1]: m 2^(bias - E) is in [1, 4)
        // (or below 1 for subnormal m), and 2^(E - bias) scales the result back.
        let (ut, shift, bias) = match ft {
            FloatType::F64 => (self.t_u64(), 52u32, 1023u64),
            _ => (self.t_u32(), 23, 127),
        };
        let k = |g: &mut Gen, v: u64| match ft {
            FloatType::F64 => g.c_u64(v),
            _ => g.c_u32(v as u32),
        };
        let mb = self.b.bitcast(ut, None, m).ie()?;
        let sh = k(self, shift as u64);
        let e = self.b.shift_right_logical(ut, None, mb, sh).ie()?;
        let (lo, hi) = (k(self, 1), k(self, 2 * bias - 1));
        let e = self.glsl(ut, GLOp::UClamp, &[e, lo, hi])?;
        let two_bias = k(self, 2 * bias);
        let se = self.b.i_sub(ut, None, two_bias, e).ie()?;
        let se = self.b.shift_left_logical(ut, None, se, sh).ie()?;
        let scale = self.b.bitcast(ty, None, se).ie()?;
        let ue = self.b.shift_left_logical(ut, None, e, sh).ie()?;
        let unscale = self.b.bitcast(ty, None, ue).ie()?;
        let xs = self.b.f_mul(ty, None, ax, scale).ie()?;
        let ys = self.b.f_mul(ty, None, ay, scale).ie()?;
        let x2 = self.b.f_mul(ty, None, xs, xs).ie()?;
        let y2 = self.b.f_mul(ty, None, ys, ys).ie()?;
        let s = self.b.f_add(ty, None, x2, y2).ie()?;
        let sq = self.glsl(ty, GLOp::Sqrt, &[s])?;
        let r = self.b.f_mul(ty, None, sq, unscale).ie()?;
        let z = self.c_float(ft, 0.0);
        let mz = self.b.f_ord_equal(bt, None, m, z).ie()?;
        let r = self.b.select(ty, None, mz, z, r).ie()?;
        let xn = self.b.is_nan(bt, None, x).ie()?;
        let yn = self.b.is_nan(bt, None, y).ie()?;
        let anynan = self.b.logical_or(bt, None, xn, yn).ie()?;
        let nan = self.c_float(ft, f64::NAN);
        let r = self.b.select(ty, None, anynan, nan, r).ie()?;
        let inf = self.c_float(ft, f64::INFINITY);
        let xi = self.b.is_inf(bt, None, x).ie()?;
        let yi = self.b.is_inf(bt, None, y).ie()?;
        let anyinf = self.b.logical_or(bt, None, xi, yi).ie()?;
        self.b.select(ty, None, anyinf, inf, r).ie()
    }

    /// `x` with the sign bit of `y` (float type `ft`'s registers), by bit operations.
    pub(crate) fn copysign(&mut self, ft: FloatType, x: Word, y: Word) -> R<Word> {
        let ty = self.reg_ty(PrimType::Float(ft));
        let (ut, sm, mm) = if ft == FloatType::F64 {
            (self.t_u64(), self.c_u64(1 << 63), self.c_u64((1 << 63) - 1))
        } else {
            (self.t_u32(), self.c_u32(1 << 31), self.c_u32((1 << 31) - 1))
        };
        let xb = self.b.bitcast(ut, None, x).ie()?;
        let yb = self.b.bitcast(ut, None, y).ie()?;
        let xm = self.b.bitwise_and(ut, None, xb, mm).ie()?;
        let ys = self.b.bitwise_and(ut, None, yb, sm).ie()?;
        let r = self.b.bitwise_or(ut, None, xm, ys).ie()?;
        self.b.bitcast(ty, None, r).ie()
    }

    /// A float's bits as the unsigned integer of its width (an f16's in the low half of a u32).
    fn float_to_bits(&mut self, ft: FloatType, x: Word) -> R<Word> {
        let u32t = self.t_u32();
        match ft {
            FloatType::F64 => {
                let u = self.t_u64();
                self.b.bitcast(u, None, x).ie()
            }
            FloatType::F32 => self.b.bitcast(u32t, None, x).ie(),
            FloatType::F16 => {
                let f = self.t_f32();
                let v2 = self.b.type_vector(f, 2);
                let z = self.c_f32(0.0);
                let v = self.b.composite_construct(v2, None, [x, z]).ie()?;
                self.glsl(u32t, GLOp::PackHalf2x16, &[v])
            }
        }
    }

    /// The float of type `ft` with the bits `x` (the inverse of [`Self::float_to_bits`]).
    fn float_from_bits(&mut self, ft: FloatType, x: Word) -> R<Word> {
        match ft {
            FloatType::F16 => {
                let u32t = self.t_u32();
                let f = self.t_f32();
                let v2 = self.b.type_vector(f, 2);
                let m = self.c_u32(0xffff);
                let lo = self.b.bitwise_and(u32t, None, x, m).ie()?;
                let v = self.glsl(v2, GLOp::UnpackHalf2x16, &[lo])?;
                self.b.composite_extract(f, None, v, [0]).ie()
            }
            _ => {
                let ty = self.reg_ty(PrimType::Float(ft));
                self.b.bitcast(ty, None, x).ie()
            }
        }
    }

    /// C's `nextafter`, in integer operations on the bits as
    /// [`vkad_core::primops::nextafter_bits`] (so subnormals need no float support).
    fn nextafter(&mut self, ft: FloatType, x: Word, y: Word) -> R<Word> {
        let bt = self.t_bool();
        let wide = ft == FloatType::F64;
        let (ut, w) = if wide {
            (self.t_u64(), 64)
        } else {
            (self.t_u32(), ft.bits())
        };
        let c = |g: &mut Self, v: u64| if wide { g.c_u64(v) } else { g.c_u32(v as u32) };
        let inf = match ft {
            FloatType::F16 => 0x7c00,
            FloatType::F32 => 0x7f80_0000,
            FloatType::F64 => 0x7ff0_0000_0000_0000,
        };
        let (sign, mag, inf, zero, one) = (
            c(self, 1 << (w - 1)),
            c(self, (1 << (w - 1)) - 1),
            c(self, inf),
            c(self, 0),
            c(self, 1),
        );
        let xb = self.float_to_bits(ft, x)?;
        let yb = self.float_to_bits(ft, y)?;
        let xa = self.b.bitwise_and(ut, None, xb, mag).ie()?;
        let ya = self.b.bitwise_and(ut, None, yb, mag).ie()?;
        let xs = self.b.bitwise_and(ut, None, xb, sign).ie()?;
        let ys = self.b.bitwise_and(ut, None, yb, sign).ie()?;
        let xnan = self.b.u_greater_than(bt, None, xa, inf).ie()?;
        let ynan = self.b.u_greater_than(bt, None, ya, inf).ie()?;
        let xz = self.b.i_equal(bt, None, xa, zero).ie()?;
        let yz = self.b.i_equal(bt, None, ya, zero).ie()?;
        let both_zero = self.b.logical_and(bt, None, xz, yz).ie()?;
        let same = self.b.i_equal(bt, None, xb, yb).ie()?;
        let eq = self.b.logical_or(bt, None, same, both_zero).ie()?;
        let same_sign = self.b.i_equal(bt, None, xs, ys).ie()?;
        let further = self.b.u_greater_than(bt, None, ya, xa).ie()?;
        let up = self.b.logical_and(bt, None, same_sign, further).ie()?;
        let inc = self.b.i_add(ut, None, xb, one).ie()?;
        let dec = self.b.i_sub(ut, None, xb, one).ie()?;
        let r = self.b.select(ut, None, up, inc, dec).ie()?;
        let tiny = self.b.bitwise_or(ut, None, ys, one).ie()?;
        let r = self.b.select(ut, None, xz, tiny, r).ie()?;
        let r = self.b.select(ut, None, eq, yb, r).ie()?;
        let r = self.b.select(ut, None, ynan, yb, r).ie()?;
        let r = self.b.select(ut, None, xnan, xb, r).ie()?;
        self.float_from_bits(ft, r)
    }

    /// C's `ldexp x n` (`x·2^n` rounded once), as musl's `scalbn`: while `n` is past the
    /// exponent range, scale by the largest power of two (or by `2^(emin+p)`, which keeps the
    /// intermediate normal, on the small side) at most twice, then by `2^n` built from bits.
    /// An f16 is scaled in its f32 register (exactly where the f16 result is finite and
    /// nonzero) and rounded by the caller.
    fn ldexp(&mut self, ft: FloatType, x: Word, n: Word) -> R<Word> {
        let bt = self.t_bool();
        let it = self.t_u32();
        let wide = ft == FloatType::F64;
        let ty = self.reg_ty(PrimType::Float(ft));
        let (emax, emin, p): (i32, i32, i32) = if wide {
            (1023, -1022, 53)
        } else {
            (127, -126, 24)
        };
        let scale = |g: &mut Self, e: i32| g.c_float(ft, 2f64.powi(e));
        let ci = |g: &mut Self, v: i32| g.c_u32(v as u32);
        let (mut y, mut n) = (x, n);
        let (hi, lo) = (ci(self, emax), ci(self, emin));
        for (big, e) in [
            (true, emax),
            (true, emax),
            (false, emin + p),
            (false, emin + p),
        ] {
            let past = if big {
                self.b.s_greater_than(bt, None, n, hi).ie()?
            } else {
                self.b.s_less_than(bt, None, n, lo).ie()?
            };
            let s = scale(self, e);
            let ys = self.b.f_mul(ty, None, y, s).ie()?;
            y = self.b.select(ty, None, past, ys, y).ie()?;
            let ce = ci(self, e);
            let ns = self.b.i_sub(it, None, n, ce).ie()?;
            n = self.b.select(it, None, past, ns, n).ie()?;
        }
        n = self.glsl(it, GLOp::SMin, &[n, hi])?;
        n = self.glsl(it, GLOp::SMax, &[n, lo])?;
        // 2^n from its bits: the biased exponent in the exponent field.
        let bias = ci(self, emax);
        let e = self.b.i_add(it, None, n, bias).ie()?;
        let bits = if wide {
            let u64t = self.t_u64();
            let e = self.b.u_convert(u64t, None, e).ie()?;
            let s = self.c_u64(52);
            self.b.shift_left_logical(u64t, None, e, s).ie()?
        } else {
            let s = self.c_u32(23);
            self.b.shift_left_logical(it, None, e, s).ie()?
        };
        let pow = self.b.bitcast(ty, None, bits).ie()?;
        self.b.f_mul(ty, None, y, pow).ie()
    }

    /// Rounds to the nearest integer, halves to even, from `Trunc` alone: `t = trunc x`, then
    /// one step away from zero when `|x - t| > 0.5`, or `= 0.5` and `t` is odd. NaN and the
    /// infinities come back unchanged.
    fn round_even(&mut self, ty: Word, x: Word) -> R<Word> {
        let bt = self.t_bool();
        let t = self.trunc_signed(FloatType::F64, x)?;
        let d = self.b.f_sub(ty, None, x, t).ie()?;
        let ad = self.glsl(ty, GLOp::FAbs, &[d])?;
        let half = self.c_f64(0.5);
        let h = self.b.f_mul(ty, None, t, half).ie()?;
        let ht = self.glsl(ty, GLOp::Trunc, &[h])?;
        let odd = self.b.f_ord_not_equal(bt, None, h, ht).ie()?;
        let over = self.b.f_ord_greater_than(bt, None, ad, half).ie()?;
        let tie = self.b.f_ord_equal(bt, None, ad, half).ie()?;
        let tie_odd = self.b.logical_and(bt, None, tie, odd).ie()?;
        let up = self.b.logical_or(bt, None, over, tie_odd).ie()?;
        let sign = self.glsl(ty, GLOp::FSign, &[x])?;
        let away = self.b.f_add(ty, None, t, sign).ie()?;
        self.b.select(ty, None, up, away, t).ie()
    }

    /// A comparison.
    pub fn cmpop(&mut self, op: CmpOp, x: Word, y: Word) -> R<Word> {
        let bt = self.t_bool();
        let (t, k) = match op {
            CmpOp::Eq(t) => (t, 0),
            CmpOp::Lt(t) => (t, 1),
            CmpOp::Le(t) => (t, 2),
        };
        let b = &mut self.b;
        match t {
            PrimType::Bool => match k {
                0 => b.logical_equal(bt, None, x, y).ie(),
                1 => {
                    let nx = b.logical_not(bt, None, x).ie()?;
                    b.logical_and(bt, None, nx, y).ie()
                }
                _ => {
                    let nx = b.logical_not(bt, None, x).ie()?;
                    b.logical_or(bt, None, nx, y).ie()
                }
            },
            PrimType::Int(it) => match (k, it.signed()) {
                (0, _) => b.i_equal(bt, None, x, y).ie(),
                (1, true) => b.s_less_than(bt, None, x, y).ie(),
                (1, false) => b.u_less_than(bt, None, x, y).ie(),
                (_, true) => b.s_less_than_equal(bt, None, x, y).ie(),
                (_, false) => b.u_less_than_equal(bt, None, x, y).ie(),
            },
            PrimType::Float(_) => match k {
                0 => b.f_ord_equal(bt, None, x, y).ie(),
                1 => b.f_ord_less_than(bt, None, x, y).ie(),
                _ => b.f_ord_less_than_equal(bt, None, x, y).ie(),
            },
        }
    }

    /// An integer register as u64 (sign-extended for signed types).
    pub(crate) fn int_to_u64(&mut self, it: IntType, x: Word) -> R<Word> {
        if it.bits() == 64 {
            return Ok(x);
        }
        let u64t = self.t_u64();
        if it.signed() {
            // Sign extension as `(zext(x) ^ 2^(b-1)) - 2^(b-1)` (x canonical, so the low 32 bits),
            // not `OpSConvert`: lavapipe (Mesa 22.3) compares `OpSConvert`'s result with a
            // constant as if `x` were not negative.
            let u = self.b.u_convert(u64t, None, x).ie()?;
            let bias = self.c_u64(1 << 31);
            let f = self.b.bitwise_xor(u64t, None, u, bias).ie()?;
            self.b.i_sub(u64t, None, f, bias).ie()
        } else {
            self.b.u_convert(u64t, None, x).ie()
        }
    }

    /// A u64 holding an integer value (two's complement) wrapped to type `t`.
    fn u64_to_int(&mut self, t: IntType, v: Word) -> R<Word> {
        if t.bits() == 64 {
            return Ok(v);
        }
        let u = self.t_u32();
        let lo = self.b.u_convert(u, None, v).ie()?;
        self.canon(t, lo)
    }

    /// Float → integer: truncate, NaN/inf give 0, out-of-range values wrap modulo 2^64 (and
    /// beyond ±2^127 saturate first), as `primops`.
    fn float_to_int(&mut self, ft: FloatType, x: Word, t: IntType) -> R<Word> {
        let bt = self.t_bool();
        let u64t = self.t_u64();
        // Work in f32 for f16/f32 sources, f64 for f64.
        let ty = self.reg_ty(PrimType::Float(ft));
        let tr = self.glsl(ty, GLOp::Trunc, &[x])?;
        let ax = self.glsl(ty, GLOp::FAbs, &[tr])?;
        let lim = self.c_float(ft, 9.223_372_036_854_776e18); // 2^63
        let small = self.b.f_ord_less_than(bt, None, ax, lim).ie()?;
        let zf0 = self.consts_zero(ft);
        let safe = self.b.select(ty, None, small, tr, zf0).ie()?;
        let direct = self.b.convert_f_to_s(u64t, None, safe).ie()?;
        // Large: |x| = m * 2^e with the mantissa's bits.
        let (mbits, bias, wide) = match ft {
            FloatType::F64 => (52u32, 1023i64, true),
            _ => (23u32, 127i64, false),
        };
        let bits = if wide {
            self.b.bitcast(u64t, None, ax).ie()?
        } else {
            let u = self.t_u32();
            let b32 = self.b.bitcast(u, None, ax).ie()?;
            self.b.u_convert(u64t, None, b32).ie()?
        };
        let sh = self.c_u64(mbits as u64);
        let expo = self.b.shift_right_logical(u64t, None, bits, sh).ie()?;
        let mmask = self.c_u64((1u64 << mbits) - 1);
        let mant = self.b.bitwise_and(u64t, None, bits, mmask).ie()?;
        let implicit = self.c_u64(1u64 << mbits);
        let mant = self.b.bitwise_or(u64t, None, mant, implicit).ie()?;
        // shift = expo - bias - mbits (>= 11 here).
        let off = self.c_u64((bias + mbits as i64) as u64);
        let shift = self.b.i_sub(u64t, None, expo, off).ie()?;
        let c64 = self.c_u64(64);
        let big_shift = self.b.u_greater_than_equal(bt, None, shift, c64).ie()?;
        let z64 = self.c_u64(0);
        let sshift = self.b.select(u64t, None, big_shift, z64, shift).ie()?;
        let shifted = self.b.shift_left_logical(u64t, None, mant, sshift).ie()?;
        let large = self.b.select(u64t, None, big_shift, z64, shifted).ie()?;
        // Beyond 2^127: saturates to i128::MAX / MIN, whose low 64 bits are all ones / zeros.
        let lim127 = self.c_float(ft, 1.701_411_834_604_692_3e38);
        let huge = self.b.f_ord_greater_than_equal(bt, None, ax, lim127).ie()?;
        let ones = self.c_u64(u64::MAX);
        let zf = self.consts_zero(ft);
        let neg = self.b.f_ord_less_than(bt, None, tr, zf).ie()?;
        let sat = self.b.select(u64t, None, neg, z64, ones).ie()?;
        let negl = self.b.i_sub(u64t, None, z64, large).ie()?;
        let large = self.b.select(u64t, None, neg, negl, large).ie()?;
        let large = self.b.select(u64t, None, huge, sat, large).ie()?;
        let v = self.b.select(u64t, None, small, direct, large).ie()?;
        // NaN / inf → 0.
        let nan = self.b.is_nan(bt, None, x).ie()?;
        let inf = self.b.is_inf(bt, None, x).ie()?;
        let bad = self.b.logical_or(bt, None, nan, inf).ie()?;
        let v = self.b.select(u64t, None, bad, z64, v).ie()?;
        self.u64_to_int(t, v)
    }

    fn consts_zero(&mut self, ft: FloatType) -> Word {
        self.c_float(ft, 0.0)
    }

    /// A conversion.
    pub fn conv(&mut self, op: ConvOp, x: Word) -> R<Word> {
        let bt = self.t_bool();
        if op.from == op.to {
            return Ok(x);
        }
        let to_ty = self.reg_ty(op.to);
        match (op.from, op.to) {
            (PrimType::Bool, PrimType::Int(t)) => {
                let (one, z) = (self.c_int(t, 1), self.c_int(t, 0));
                self.b.select(to_ty, None, x, one, z).ie()
            }
            (PrimType::Bool, PrimType::Float(t)) => {
                // The opaque zero: where the driver proves `x` false, a constant `+0.0` would
                // meet gallivm's folding of arithmetic on `+0.0` (see `crate::codegen::ieee`).
                let (one, z) = (self.c_float(t, 1.0), self.opaque_zero(t));
                self.b.select(to_ty, None, x, one, z).ie()
            }
            (PrimType::Int(f), PrimType::Bool) => {
                let z = self.c_int(f, 0);
                self.b.i_not_equal(bt, None, x, z).ie()
            }
            (PrimType::Float(f), PrimType::Bool) => {
                let z = self.c_float(f, 0.0);
                self.b.f_unord_not_equal(bt, None, x, z).ie()
            }
            (PrimType::Int(f), PrimType::Int(t)) => {
                let mut v = self.int_to_u64(f, x)?;
                if f.signed() && !t.signed() && f.bits() < 64 {
                    let u64t = self.t_u64();
                    let m = self.c_u64((1u64 << f.bits()) - 1);
                    v = self.b.bitwise_and(u64t, None, v, m).ie()?;
                }
                self.u64_to_int(t, v)
            }
            (PrimType::Int(f), PrimType::Float(t)) => {
                let r = if f.signed() {
                    self.b.convert_s_to_f(to_ty, None, x).ie()?
                } else {
                    self.b.convert_u_to_f(to_ty, None, x).ie()?
                };
                // `r + 0.0` with the opaque zero (exact: `r` is never `-0.0`), so that a
                // conversion the driver folds to the constant `+0.0` does not meet gallivm's
                // folding of arithmetic on `+0.0` (see `crate::codegen::ieee`).
                let z = self.opaque_zero(t);
                let r = self.b.f_add(to_ty, None, r, z).ie()?;
                self.fround(t, r)
            }
            (PrimType::Float(f), PrimType::Int(t)) => self.float_to_int(f, x, t),
            (PrimType::Float(f), PrimType::Float(t)) => {
                // f16 registers are f32.
                let same_reg = f != FloatType::F64 && t != FloatType::F64;
                let r = if same_reg {
                    x
                } else {
                    self.b.f_convert(to_ty, None, x).ie()?
                };
                self.fround(t, r)
            }
            (PrimType::Bool, PrimType::Bool) => Ok(x),
        }
    }

    /// A builtin math function.
    pub fn math(&mut self, f: MathFn, a: &[Word]) -> R<Word> {
        use MathFn::*;
        let need = vkad_core::primops::math_arity(f);
        if a.len() != need {
            return Err(Error::bug(format!(
                "{f:?} applied to {} arguments",
                a.len()
            )));
        }
        if let Some(r) = self.f64_math(f, a)? {
            return Ok(r);
        }
        let bt = self.t_bool();
        match f {
            Clz(t) | Popc(t) | Ctz(t) => return self.bitcount(f, t, a[0]),
            MulHi(t) => return self.mulhi(t, a[0], a[1]),
            _ => {}
        }
        let ft = match f {
            Sqrt(t) | Cbrt(t) | Exp(t) | Log(t) | Log2(t) | Log10(t) | Log1p(t) | Sin(t)
            | Cos(t) | Tan(t) | Asin(t) | Acos(t) | Atan(t) | Sinh(t) | Cosh(t) | Tanh(t)
            | Asinh(t) | Acosh(t) | Atanh(t) | Atan2(t) | Hypot(t) | Erf(t) | Erfc(t)
            | Gamma(t) | Lgamma(t) | Floor(t) | Ceil(t) | Round(t) | Trunc(t) | IsNan(t)
            | IsInf(t) | ToBits(t) | FromBits(t) | Fma(t) | Lerp(t) | CopySign(t)
            | NextAfter(t) | Ldexp(t) => t,
            Clz(_) | Popc(_) | Ctz(_) | MulHi(_) => unreachable_fn(f)?,
        };
        let ty = self.reg_ty(PrimType::Float(ft));
        let x = a[0];
        let r = match f {
            Sqrt(_) => self.glsl(ty, GLOp::Sqrt, &[x])?,
            Cbrt(_) | Exp(_) | Log(_) | Log2(_) | Log10(_) | Log1p(_) | Sin(_) | Cos(_)
            | Tan(_) | Asin(_) | Acos(_) | Atan(_) | Sinh(_) | Cosh(_) | Tanh(_) | Asinh(_)
            | Acosh(_) | Atanh(_) | Atan2(_) | Erf(_) | Erfc(_) | Gamma(_) | Lgamma(_) => {
                self.via_f32(ft, a, |g, a| g.f32_transcendental(f, a))?
            }
            Hypot(_) => self.hypot(ft, x, a[1])?,
            Floor(_) => self.glsl(ty, GLOp::Floor, &[x])?,
            Ceil(_) => self.glsl(ty, GLOp::Ceil, &[x])?,
            // lavapipe's f64 RoundEven rounds halves toward zero (Mesa 22.3): f64 rounds by hand.
            Round(FloatType::F64) => self.round_even(ty, x)?,
            Round(_) => self.glsl(ty, GLOp::RoundEven, &[x])?,
            Trunc(_) => self.trunc_signed(ft, x)?,
            IsNan(_) => return self.b.is_nan(bt, None, x).ie(),
            IsInf(_) => return self.b.is_inf(bt, None, x).ie(),
            ToBits(t) => return self.float_to_bits(t, x),
            FromBits(t) => return self.float_from_bits(t, x),
            Fma(_) => self.glsl(ty, GLOp::Fma, &[x, a[1], a[2]])?,
            Lerp(_) => {
                let d = self.b.f_sub(ty, None, a[1], x).ie()?;
                let d = self.nocontract(d);
                let m = self.b.f_mul(ty, None, d, a[2]).ie()?;
                let m = self.nocontract(m);
                let r = self.b.f_add(ty, None, x, m).ie()?;
                self.nocontract(r)
            }
            CopySign(t) => return self.copysign(t, x, a[1]),
            NextAfter(t) => return self.nextafter(t, x, a[1]),
            // f16 through f32 (exact there), rounded once to f16 below.
            Ldexp(_) => self.ldexp(ft, x, a[1])?,
            Clz(_) | Popc(_) | Ctz(_) | MulHi(_) => return Err(Error::bug(format!("{f:?}"))),
        };
        self.fround(ft, r)
    }

    fn bitcount(&mut self, f: MathFn, t: IntType, x: Word) -> R<Word> {
        let u32t = self.t_u32();
        let bt = self.t_bool();
        let bits = t.bits();
        // Split into 32-bit halves (hi = 0 below 64 bits), with the operand's bits only.
        let (lo, hi) = if bits == 64 {
            let u64t = self.t_u64();
            let lo = self.b.u_convert(u32t, None, x).ie()?;
            let s = self.c_u64(32);
            let h = self.b.shift_right_logical(u64t, None, x, s).ie()?;
            let hi = self.b.u_convert(u32t, None, h).ie()?;
            (lo, hi)
        } else if bits < 32 {
            let m = self.c_u32((1u32 << bits) - 1);
            (self.b.bitwise_and(u32t, None, x, m).ie()?, self.c_u32(0))
        } else {
            (x, self.c_u32(0))
        };
        let c32 = self.c_u32(32);
        let z = self.c_u32(0);
        match f {
            MathFn::Popc(_) => {
                let a = self.b.bit_count(u32t, None, lo).ie()?;
                let b = self.b.bit_count(u32t, None, hi).ie()?;
                self.b.i_add(u32t, None, a, b).ie()
            }
            MathFn::Clz(_) => {
                // clz32(v) = 31 - msb(v), 32 for 0.
                let clz32 = |g: &mut Gen, v: Word| -> R<Word> {
                    let msb = g.glsl(u32t, GLOp::FindUMsb, &[v])?;
                    let c31 = g.c_u32(31);
                    let r = g.b.i_sub(u32t, None, c31, msb).ie()?;
                    let isz = g.b.i_equal(bt, None, v, z).ie()?;
                    g.b.select(u32t, None, isz, c32, r).ie()
                };
                let cl = clz32(self, lo)?;
                if bits == 64 {
                    let ch = clz32(self, hi)?;
                    let hz = self.b.i_equal(bt, None, hi, z).ie()?;
                    let both = self.b.i_add(u32t, None, c32, cl).ie()?;
                    self.b.select(u32t, None, hz, both, ch).ie()
                } else {
                    let d = self.c_u32(32 - bits);
                    self.b.i_sub(u32t, None, cl, d).ie()
                }
            }
            _ => {
                let ctz32 = |g: &mut Gen, v: Word| -> R<Word> {
                    let lsb = g.glsl(u32t, GLOp::FindILsb, &[v])?;
                    let isz = g.b.i_equal(bt, None, v, z).ie()?;
                    g.b.select(u32t, None, isz, c32, lsb).ie()
                };
                let tl = ctz32(self, lo)?;
                if bits == 64 {
                    let th = ctz32(self, hi)?;
                    let lz = self.b.i_equal(bt, None, lo, z).ie()?;
                    let both = self.b.i_add(u32t, None, c32, th).ie()?;
                    self.b.select(u32t, None, lz, both, tl).ie()
                } else {
                    let w = self.c_u32(bits);
                    self.glsl(u32t, GLOp::UMin, &[tl, w])
                }
            }
        }
    }

    fn mulhi(&mut self, t: IntType, x: Word, y: Word) -> R<Word> {
        let ty = self.reg_ty(PrimType::Int(t));
        if t.bits() < 32 {
            // The full product fits in 32 bits.
            let p = self.b.i_mul(ty, None, x, y).ie()?;
            let s = self.c_u32(t.bits());
            let h = if t.signed() {
                self.b.shift_right_arithmetic(ty, None, p, s).ie()?
            } else {
                self.b.shift_right_logical(ty, None, p, s).ie()?
            };
            return self.canon(t, h);
        }
        let st = self.b.type_struct([ty, ty]);
        let r = if t.signed() {
            self.b.s_mul_extended(st, None, x, y).ie()?
        } else {
            self.b.u_mul_extended(st, None, x, y).ie()?
        };
        self.b.composite_extract(ty, None, r, [1]).ie()
    }
}

fn unreachable_op(op: BinOp) -> R<Word> {
    Err(Error::bug(format!("unexpected {op:?}")))
}

fn unreachable_fn(f: MathFn) -> R<FloatType> {
    Err(Error::bug(format!("unexpected {f:?}")))
}
