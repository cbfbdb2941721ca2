//! Subgroup-aggregated updates of one element.
//!
//! In reverse mode the adjoint of a free variable of a `map` is an accumulator that every
//! thread of the map updates at the same index: each point of GMM's `segmap` over the data
//! adds into every element of the `[K][d][d]` adjoint of the precision factors, in the same
//! order. One atomic per thread then lands on one address at a time, and where a device runs
//! a subgroup's atomics one lane after another (llvmpipe) every compare-exchange but one
//! fails and retries: a subgroup of `w` lanes makes `w (w + 1) / 2` attempts for `w` updates.
//!
//! [`aggregated`] asks whether every active invocation of the subgroup updates the same
//! element (`OpGroupNonUniformAllEqual` of its offset). If so the subgroup adds the values
//! first (`OpGroupNonUniformFAdd`) and one elected invocation makes the update; otherwise
//! every invocation updates on its own, as without it. An accumulator's operator is
//! associative and commutative, so the result is that of the same additions in another order
//! (rounded in another order, as atomics from different threads already are).
//!
//! It is emitted only for updates at indices that [`super::variance`] finds the same in every
//! thread. Measured on lavapipe (2 cores, subgroups of 8): GMM's gradient (d = 10, K = 25)
//! about 18 % faster, RSBench's 13 %, k-means' and sparse k-means' a few per cent; where
//! every thread's index differs the check alone cost k-means 10-20 %, hence the analysis.

use crate::codegen::gen::{Gen, Ie, R};
use crate::error::Error;
use rspirv::spirv::{self, GroupOperation, Word};
use vkad_core::prim::PrimType;

/// Where every active invocation of the subgroup updates element `at` (a `u64` offset), runs
/// `update(Some(sums))` in one invocation, with each of `parts` (a float register and its
/// type) summed over the subgroup; otherwise runs `update(None)` in every invocation, which
/// updates with its own values.
pub(super) fn aggregated(
    g: &mut Gen,
    at: Word,
    parts: &[(Word, PrimType)],
    mut update: impl FnMut(&mut Gen, Option<&[Word]>) -> R<()>,
) -> R<()> {
    g.b.capability(spirv::Capability::GroupNonUniform);
    g.b.capability(spirv::Capability::GroupNonUniformVote);
    g.b.capability(spirv::Capability::GroupNonUniformArithmetic);
    let (bt, u32t, u64t) = (g.t_bool(), g.t_u32(), g.t_u64());
    let sg = g.c_u32(spirv::Scope::Subgroup as u32);
    // The offset's two halves: comparing 32-bit words needs no 64-bit subgroup operations.
    let lo = g.b.u_convert(u32t, None, at).ie()?;
    let c32 = g.c_u64(32);
    let hi64 = g.b.shift_right_logical(u64t, None, at, c32).ie()?;
    let hi = g.b.u_convert(u32t, None, hi64).ie()?;
    let same_lo = g.b.group_non_uniform_all_equal(bt, None, sg, lo).ie()?;
    let same_hi = g.b.group_non_uniform_all_equal(bt, None, sg, hi).ie()?;
    let same = g.b.logical_and(bt, None, same_lo, same_hi).ie()?;
    let st = g.begin_if(same)?;
    let mut sums = Vec::with_capacity(parts.len());
    for &(x, t) in parts {
        if !matches!(t, PrimType::Float(_)) {
            return Err(Error::bug("a subgroup sum of a non-float"));
        }
        let ty = g.reg_ty(t);
        let sum =
            g.b.group_non_uniform_f_add(ty, None, sg, GroupOperation::Reduce, x, None);
        sums.push(sum.ie()?);
    }
    let elected = g.b.group_non_uniform_elect(bt, None, sg).ie()?;
    g.if_then(elected, |g| update(g, Some(&sums)))?;
    g.else_(st)?;
    update(g, None)?;
    g.end_if(st)
}
