//! Group kernels: a `segmap` of one point run by a whole workgroup (intra-group parallelism).
//!
//! The sequential version of a loop whose iterations are small parallel operations (the
//! `seq chunks` version of a `versioned_loop`: `segmap (gtid < 1)` around the loop) is a
//! kernel of one point. As an ordinary `segmap` kernel ([`crate::codegen::map`]) one thread
//! runs it, and every inner `map`, copy and array result is a loop of that thread: on a GPU
//! all other lanes of the workgroup stay idle, and on lavapipe, whose invocations are the
//! lanes of SIMD registers, one lane costs as much as eight. A group kernel runs the point
//! with the `G` invocations of one workgroup instead ([`GroupShape`]):
//!
//! - Every invocation runs the point's code. Scalar statements, sequential loops, `if`s and
//!   reductions are computed redundantly: all invocations compute the same values, so their
//!   control flow is the same and barriers may stand anywhere outside distributed loops.
//! - Per-thread arrays belong to the point: scratch memory is allocated per point (the
//!   workgroup), and every invocation keeps the same allocation tops.
//! - Loops whose iterations are independent ([`KCtx::par_loop`]: an inner `map` computed into
//!   memory, a copy of an array value, the rows of several results) are distributed:
//!   invocation `l` runs iterations `l, l + G, …`, between two barriers. The barrier before
//!   lets no invocation overwrite memory another has still to read; the one after makes the
//!   writes visible to all.
//! - Any other store at group level (an element of an update, a step of a `scan`, a
//!   `scatter`) is made by invocation 0 alone, between two barriers ([`KCtx::group_store`]).
//! - A `reduce` to scalars is shared too ([`KCtx::group_reduce`]): each invocation folds a
//!   contiguous chunk of the elements, and the partial results are combined pairwise in
//!   workgroup memory, in invocation order (so the operator need not be commutative). On
//!   lavapipe this also keeps the loop of the reduction from counting against the loop
//!   limiter once per element.
//!
//! Inside a distributed loop, code is that of ordinary kernels: nested loops are sequential and
//! have no barriers. It must not allocate, since every invocation would take the same
//! memory: [`KCtx::alloc`] refuses, and [`crate::codegen::map::seg_map_kernel`] then compiles
//! the point as an ordinary one-thread kernel (as for every `NotSupported` of the group
//! version; other errors are reported).
//! Kernels that update host accumulators are not made group kernels (every invocation would
//! add its update).
//!
//! This is Futhark's intra-group parallelism (`SegGroup` level kernels, `ImpGen/GPU/Group.hs`)
//! restricted to what needs no change to flattening: the kernel IR stays a `segmap` of one
//! point, and only its code generation distributes the work.

use crate::codegen::gen::{Gen, Ie, R, WG};
use crate::codegen::thread::{KCtx, KVal};
use crate::error::Error;
use rspirv::spirv::Word;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Exp, Operator, Stm, SubExp};
use vkad_core::prim::{PrimType, PrimValue};
use vkad_core::seg::SegSpace;

/// How a device runs group kernels: the invocations of their workgroup, and whether a
/// workgroup of that many invocations is one subgroup (then its barriers need synchronise only
/// the subgroup: [`Gen::barrier_scope`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupShape {
    pub size: u32,
    pub one_subgroup: bool,
}

impl GroupShape {
    /// The shape for a device: lavapipe, whose subgroups have `subgroup_size` invocations, or
    /// another (a GPU).
    ///
    /// lavapipe runs a workgroup on one core, a subgroup at a time as the lanes of a SIMD
    /// register (8 lanes of 32 bits with 256-bit vectors), and switches between the subgroups
    /// of a workgroup at every workgroup barrier. So on lavapipe a group is one subgroup, and
    /// its barriers are subgroup barriers (execution and memory scope `Subgroup`, which order
    /// the group's accesses just as well, since the group is the subgroup). On the LSTM's time
    /// loop (hidden width 14) that made the kernel about twice as fast as a group of 16
    /// invocations with workgroup barriers (benches/RESULTS.md, ninth session). Where the
    /// subgroup size is unknown or beyond 16: 8 invocations and workgroup barriers (llvmpipe
    /// runs compute shaders in batches of at most 16 lanes, whatever subgroup size it reports
    /// when `LP_NATIVE_VECTOR_WIDTH` asks for wider vectors, so a workgroup of 32 would be
    /// two batches). A GPU runs more lanes at no cost: [`WG`] invocations and workgroup
    /// barriers.
    ///
    /// That a workgroup of the subgroup size is one subgroup is llvmpipe's behaviour (its
    /// minimum and maximum subgroup sizes are the same, and it splits a workgroup into batches
    /// of that many lanes along x), not a Vulkan guarantee, which only
    /// `VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT` would give: hence lavapipe
    /// only.
    pub fn for_device(lavapipe: bool, subgroup_size: u32) -> GroupShape {
        match (lavapipe, subgroup_size) {
            (true, 4 | 8 | 16) => GroupShape {
                size: subgroup_size,
                one_subgroup: true,
            },
            (true, _) => GroupShape {
                size: 8,
                one_subgroup: false,
            },
            (false, _) => GroupShape {
                size: WG,
                one_subgroup: false,
            },
        }
    }
}

/// Whether a `segmap` over `space` running `stms` is compiled as a group kernel: a space of
/// one point (statically), a body that runs parallel work or loops, and no host
/// accumulators (`has_accs`).
pub(crate) fn wants_group(space: &SegSpace, stms: &[Stm], has_accs: bool) -> bool {
    let one_point = space
        .dims
        .iter()
        .all(|(_, d)| matches!(d, SubExp::Const(PrimValue::I64(1))));
    one_point && !has_accs && stms.iter().any(|s| inner_work(&s.exp))
}

/// An expression with parallel work or loops that a group could share.
fn inner_work(e: &Exp) -> bool {
    match e {
        Exp::Loop { .. } | Exp::Soac(_) | Exp::Copy(_) | Exp::Replicate { .. } => true,
        Exp::If { then_b, else_b, .. } => {
            then_b.stms.iter().any(|s| inner_work(&s.exp))
                || else_b.stms.iter().any(|s| inner_work(&s.exp))
        }
        _ => false,
    }
}

/// The state of a group kernel's code generation (in [`KCtx::group`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Group {
    /// This invocation's index in the workgroup (`u64`).
    lid: Word,
    /// The workgroup size (`u64` constant).
    size: Word,
    /// How many distributed loops the code being generated is inside (0: group level).
    depth: u32,
}

impl Group {
    /// The group of the kernel being generated in `g` (whose workgroup size and barrier scope
    /// it sets).
    pub(crate) fn new(g: &mut Gen, shape: GroupShape) -> R<Group> {
        let size = shape.size;
        g.local_size = size;
        if shape.one_subgroup {
            g.barrier_scope = rspirv::spirv::Scope::Subgroup;
        }
        let u64t = g.t_u64();
        let lid = g.local_id()?;
        let lid = g.b.u_convert(u64t, None, lid).ie()?;
        Ok(Group {
            lid,
            size: g.c_u64(size as u64),
            depth: 0,
        })
    }
}

impl<'p> KCtx<'p> {
    /// Whether code is generated at group level: in a group kernel, outside distributed loops.
    pub(crate) fn at_group_level(&self) -> bool {
        self.group.is_some_and(|gr| gr.depth == 0)
    }

    /// Fails where an array is allocated inside a distributed loop (see the module doc).
    pub(crate) fn check_group_alloc(&self, loc: &Option<SrcLoc>) -> R<()> {
        match self.group {
            Some(gr) if gr.depth > 0 => Err(Error::unsupported(
                "an array allocated inside a distributed loop of a group kernel",
                loc,
            )),
            _ => Ok(()),
        }
    }

    /// `for i in 0..n` (u64) whose iterations are independent (each writes only memory of its
    /// own `i`, and reads no memory another iteration writes): distributed over the workgroup
    /// at group level, else [`KCtx::kloop`].
    pub(crate) fn par_loop(
        &mut self,
        g: &mut Gen,
        n: Word,
        loc: &Option<SrcLoc>,
        body: &mut dyn FnMut(&mut KCtx<'p>, &mut Gen, Word) -> R<()>,
    ) -> R<()> {
        let Some(gr) = self.group.filter(|gr| gr.depth == 0) else {
            return self.kloop(g, n, loc, body);
        };
        g.buffer_barrier()?;
        self.range_loop(g, [gr.lid, n, gr.size], loc, &mut |k, g, i| {
            k.distributed(|k| body(k, g, i))
        })?;
        g.buffer_barrier()
    }

    /// Runs `f` one distributed loop deeper (code each invocation runs on its own).
    fn distributed<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let outer = self.group;
        if let Some(gr) = self.group.as_mut() {
            gr.depth += 1;
        }
        let r = f(self);
        self.group = outer;
        r
    }

    /// Stores `x` at element `idx` of binding `bi` at group level: invocation 0 stores, between
    /// two barriers (see the module doc).
    pub(crate) fn group_store(
        &mut self,
        g: &mut Gen,
        bi: u32,
        t: PrimType,
        idx: Word,
        x: Word,
    ) -> R<()> {
        let Some(gr) = self.group else {
            return Err(Error::bug("group store outside a group kernel"));
        };
        let bt = g.t_bool();
        g.buffer_barrier()?;
        let z = g.c_u64(0);
        let first = g.b.i_equal(bt, None, gr.lid, z).ie()?;
        g.if_then(first, |g| g.store_elem(bi, t, idx, x))?;
        g.buffer_barrier()
    }

    /// `reduce` of `n` elements of `inputs` (one-dimensional arrays) to scalars of types
    /// `tys` at group level, bound to `stm`'s pattern (see the module doc).
    pub(crate) fn group_reduce(
        &mut self,
        g: &mut Gen,
        stm: &'p Stm,
        n: Word,
        inputs: &[KVal],
        op: &'p Operator,
        tys: &[PrimType],
    ) -> R<()> {
        let Some(gr) = self.group.filter(|gr| gr.depth == 0) else {
            return Err(Error::bug("group reduction outside group level"));
        };
        let loc = &stm.loc;
        let (u64t, bt) = (g.t_u64(), g.t_bool());
        let vars = self.fold_vars(g, tys, op, loc)?;
        // This invocation's chunk [lo, hi): contiguous, so that partial results combined in
        // invocation order keep the elements' order.
        let one = g.c_u64(1);
        let sm1 = g.b.i_sub(u64t, None, gr.size, one).ie()?;
        let up = g.b.i_add(u64t, None, n, sm1).ie()?;
        let chunk = g.b.u_div(u64t, None, up, gr.size).ie()?;
        let lo = g.b.i_mul(u64t, None, gr.lid, chunk).ie()?;
        let lo_le = g.b.u_less_than_equal(bt, None, lo, n).ie()?;
        let lo = g.b.select(u64t, None, lo_le, lo, n).ie()?;
        let hi = g.b.i_add(u64t, None, lo, chunk).ie()?;
        let hi_le = g.b.u_less_than_equal(bt, None, hi, n).ie()?;
        let hi = g.b.select(u64t, None, hi_le, hi, n).ie()?;
        self.distributed(|k| k.fold_range(g, lo, hi, inputs, op, &vars, stm))?;
        // Pairwise combination in workgroup memory: at step s, invocation l (a multiple of 2s)
        // combines its value with that of l + s.
        let mut shared = Vec::with_capacity(vars.len());
        for (j, &(var, rt, _)) in vars.iter().enumerate() {
            let arr = self.shared_slot(g, rt, j);
            let p = g.shared_ptr(arr, rt, gr.lid)?;
            let x = g.load(rt, var)?;
            g.store(p, x)?;
            shared.push(arr);
        }
        let size = g.local_size;
        let mut s = 1u32;
        while s < size {
            g.buffer_barrier()?;
            let two_s = g.c_u64(2 * s as u64);
            let rem = g.b.u_mod(u64t, None, gr.lid, two_s).ie()?;
            let z = g.c_u64(0);
            let active = g.b.i_equal(bt, None, rem, z).ie()?;
            let st = g.begin_if(active)?;
            let sc = g.c_u64(s as u64);
            let partner = g.b.i_add(u64t, None, gr.lid, sc).ie()?;
            let mut args = Vec::with_capacity(2 * vars.len());
            for (&arr, &(_, rt, t)) in shared.iter().zip(&vars) {
                let p = g.shared_ptr(arr, rt, gr.lid)?;
                args.push(KVal::S(g.load(rt, p)?, t));
            }
            for (&arr, &(_, rt, t)) in shared.iter().zip(&vars) {
                let p = g.shared_ptr(arr, rt, partner)?;
                args.push(KVal::S(g.load(rt, p)?, t));
            }
            let r = self.distributed(|k| k.lambda(g, &op.lam, args, loc))?;
            for (&arr, (x, &(_, rt, _))) in shared.iter().zip(r.into_iter().zip(&vars)) {
                let KVal::S(w, _) = x else {
                    return Err(Error::bug("reduction operator result"));
                };
                let p = g.shared_ptr(arr, rt, gr.lid)?;
                g.store(p, w)?;
            }
            g.else_(st)?;
            g.end_if(st)?;
            s *= 2;
        }
        g.buffer_barrier()?;
        let mut out = Vec::with_capacity(vars.len());
        let z = g.c_u64(0);
        for (&arr, &(_, rt, t)) in shared.iter().zip(&vars) {
            let p = g.shared_ptr(arr, rt, z)?;
            out.push(KVal::S(g.load(rt, p)?, t));
        }
        // No invocation may overwrite the workgroup memory before all have read the result.
        g.buffer_barrier()?;
        self.bind(stm, out)
    }

    /// Workgroup memory for accumulator `j` of a group reduction, values of type `ty`: one
    /// array per (type, position), shared by all reductions of the kernel.
    fn shared_slot(&mut self, g: &mut Gen, ty: Word, j: usize) -> Word {
        if let Some(&arr) = self.group_shared.get(&(ty, j)) {
            return arr;
        }
        let arr = g.shared_array(ty, g.local_size);
        self.group_shared.insert((ty, j), arr);
        arr
    }
}

#[cfg(test)]
mod tests {
    use super::GroupShape;
    use crate::codegen::gen::WG;

    /// lavapipe's group is one subgroup of its size where that is 4, 8 or 16 lanes; otherwise
    /// (unknown, or wider than llvmpipe's batches) 8 invocations with workgroup barriers. A GPU
    /// gets `WG` invocations whatever its subgroup size.
    #[test]
    fn group_shapes_by_device() {
        let one = |size| GroupShape {
            size,
            one_subgroup: true,
        };
        let many = |size| GroupShape {
            size,
            one_subgroup: false,
        };
        for s in [4, 8, 16] {
            assert_eq!(GroupShape::for_device(true, s), one(s));
        }
        for s in [0, 2, 12, 32, 64] {
            assert_eq!(GroupShape::for_device(true, s), many(8));
        }
        for s in [0, 8, 32, 64] {
            assert_eq!(GroupShape::for_device(false, s), many(WG));
        }
    }
}
