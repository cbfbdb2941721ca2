//! `segmap` and the `map` of a lambda (a primitive per segment, an operator on pairs of rows):
//! one thread per point of the operation's space.
//!
//! The kernel is a grid-stride loop over the flattened space (`N = d_1 · … · d_n` points, in
//! row-major order); the thread computing point `i` recovers the thread indices
//! `gtid_1 … gtid_n` from `i` by division and remainder, runs the kernel body and writes each
//! result at row `i` of its output (array results as whole rows). This is the loop the
//! `map` kernel of a lambda ([`map_kernel_accs`], below) uses too: [`grid`] builds it
//! for both, with the per-thread code given as a closure.
//!
//! Launch layout (shared with the `map` kernel, see [`Scratch`]): literals 0
//! and 1 are the per-thread scratch capacities, literals 2 and 3 a range of points `[r0, r1)`
//! to compute (`r1 = 0`: all of them), literal 4 the number of threads that have scratch;
//! temporaries 0..3 the scratch buffers; outputs `0..` the results that are not accumulators,
//! in order.

use crate::codegen::acc::AccKernel;
use crate::codegen::gen::{word_kind, Gen, Ie, R, WG};
use crate::codegen::group::{self, Group, GroupShape};
use crate::codegen::layout::{ArgSrc, BindSrc, HostTy, KernelCode};
use crate::codegen::scratch::Scratch;
use crate::codegen::thread::{finish, natural, unflatten, KCtx, KVal, View};
use crate::codegen::variance;
use crate::error::Error;
use rspirv::spirv::Word;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{Lambda, Program, Stm, SubExp, Type, VName};
use vkad_core::prim::PrimType;
use vkad_core::seg::SegSpace;

/// What a `segmap` kernel computes: the points of `space`, each running `stms` and giving
/// `results` of types `ret` (an accumulator result is no output: its updates went to the
/// accumulator).
pub struct SegMapCode<'p> {
    pub space: &'p SegSpace,
    pub stms: &'p [Stm],
    pub results: &'p [SubExp],
    pub ret: &'p [Type],
}

/// Compiles a `segmap`. With `lavapipe`, loop iterations are counted against lavapipe's limit;
/// `accs` describes the host accumulators the body may update. A `segmap` of one point whose
/// body has parallel work is compiled as a group kernel (module [`crate::codegen::group`];
/// its shape from `lavapipe` and the device's `subgroup_size`, [`GroupShape::for_device`])
/// where it can be, else as an ordinary one.
pub fn seg_map_kernel<'p>(
    prog: &'p Program,
    code: &SegMapCode<'p>,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&vkad_core::ir::VName) -> Option<HostTy>,
    lavapipe: bool,
    subgroup_size: u32,
    accs: Option<AccKernel<'p>>,
) -> R<KernelCode> {
    if group::wants_group(code.space, code.stms, accs.is_some()) {
        let shape = GroupShape::for_device(lavapipe, subgroup_size);
        // What the group version cannot run (an allocation inside a distributed loop, a
        // construct of thread code it does not handle) leaves the ordinary version, which
        // reports the real errors of the program.
        match seg_map_kernel_in(prog, code, loc, host_types, lavapipe, None, Some(shape)) {
            Err(Error::NotSupported { .. } | Error::LoopLimit { .. }) => {}
            r => return r,
        }
    }
    seg_map_kernel_in(prog, code, loc, host_types, lavapipe, accs, None)
}

/// [`seg_map_kernel`], as a group kernel of shape `group` where that is `Some`.
fn seg_map_kernel_in<'p>(
    prog: &'p Program,
    code: &SegMapCode<'p>,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&vkad_core::ir::VName) -> Option<HostTy>,
    lavapipe: bool,
    accs: Option<AccKernel<'p>>,
    group: Option<GroupShape>,
) -> R<KernelCode> {
    if code.results.len() != code.ret.len() {
        return Err(Error::bug("segmap results and types differ in number"));
    }
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, host_types);
    if accs.is_some() {
        k.variant = Some(variance::thread_variant(
            code.stms,
            code.space.dims.iter().map(|(v, _)| v),
        ));
    }
    k.acc_info = accs;
    let u64t = g.t_u64();
    // The space's extents and the number of points.
    let mut dims = Vec::with_capacity(code.space.dims.len());
    let mut n = g.c_u64(1);
    for (_, d) in &code.space.dims {
        let w = k.arg(&mut g, ArgSrc::Sub(d.clone()), PrimType::I64)?;
        n = g.b.i_mul(u64t, None, n, w).ie()?;
        dims.push(w);
    }
    let space = code.space;
    let (stms, results) = (code.stms, code.results);
    // The host arrays the body reads (their offsets and dimensions), loaded once before the
    // grid loop: loaded at their uses inside it, the driver reloads them from the argument
    // buffer at every point (it cannot tell that the outputs' stores leave them alone), which
    // costs a copy kernel half its speed on lavapipe. (Host scalars stay loaded at their
    // uses: `runtime::aot` generates the same modules without knowing which are used.)
    let mut free: Vec<_> = vkad_core::passes::traverse::free_vars(stms, results)
        .into_iter()
        .collect();
    free.sort_by_key(|v| v.id);
    for v in &free {
        if matches!(host_types(v), Some(HostTy::Arr(..))) {
            let x = k.var(&mut g, v, loc)?;
            k.env.insert(v.id, x);
        }
    }
    let opts = GridOpts {
        lavapipe,
        stop_check: lavapipe && may_loop(stms),
        group,
    };
    grid(k, g, n, code.ret, loc, opts, |k, g, i| {
        // The thread indices of point i (row-major in the space).
        for ((v, _), x) in space.dims.iter().zip(unflatten(g, i, &dims)?) {
            k.env.insert(v.id, KVal::S(x, PrimType::I64));
        }
        k.stms(g, stms, results, true)?;
        k.place = None;
        results.iter().map(|r| k.sub(g, r, loc)).collect()
    })
}

/// How [`grid`] runs its points.
#[derive(Clone, Copy)]
pub(crate) struct GridOpts {
    /// Emulate lavapipe's loop limiter.
    lavapipe: bool,
    /// A thread takes no new point once the launch has failed ([`Gen::launch_failed`]; for
    /// points that loop, on lavapipe).
    stop_check: bool,
    /// A group kernel of this shape: each workgroup computes a point (module
    /// [`crate::codegen::group`]).
    group: Option<GroupShape>,
}

/// The grid-stride loop of `map` and `segmap` kernels: `n` points (a `u64` word), each of
/// which `point` computes (given the point's index); its values of types `ret` are written
/// at row `i` of fresh outputs (accumulator values are not written). `k` and `g` are the
/// kernel's context and module with whatever `point` needs already bound. `opts` says how
/// the points are run.
pub(crate) fn grid<'p>(
    mut k: KCtx<'p>,
    mut g: Gen,
    n: Word,
    ret: &[Type],
    loc: &Option<SrcLoc>,
    opts: GridOpts,
    mut point: impl FnMut(&mut KCtx<'p>, &mut Gen, Word) -> R<Vec<KVal>>,
) -> R<KernelCode> {
    let is_acc: Vec<bool> = ret.iter().map(|t| matches!(t, Type::Acc { .. })).collect();
    if k.acc_info.is_none() && is_acc.iter().any(|&a| a) {
        return Err(Error::unsupported("a `map` returning accumulators", loc));
    }
    let rets: Vec<&Type> = ret
        .iter()
        .zip(&is_acc)
        .filter(|(_, &a)| !a)
        .map(|(t, _)| t)
        .collect();
    let mut outs = Vec::with_capacity(rets.len());
    for t in &rets {
        match t.elem() {
            Some(e) => outs.push(e),
            None => return Err(Error::unsupported("a `map` returning accumulators", loc)),
        }
    }
    let u64t = g.t_u64();
    let bt = g.t_bool();
    // The thread's first point and the stride between its points: one point per invocation,
    // or one per workgroup in a group kernel.
    let (gid, total) = match opts.group {
        None => {
            let gid = g.global_id()?;
            let ng = g.num_groups()?;
            let ng = g.b.u_convert(u64t, None, ng).ie()?;
            let wg = g.c_u64(WG as u64);
            (gid, g.b.i_mul(u64t, None, ng, wg).ie()?)
        }
        Some(shape) => {
            k.group = Some(Group::new(&mut g, shape)?);
            let ng = g.num_groups()?;
            (g.group_id()?, g.b.u_convert(u64t, None, ng).ie()?)
        }
    };
    let gid = g.b.u_convert(u64t, None, gid).ie()?;
    let interleaved = opts.group.is_none();
    k.scratch = Some(Scratch::new(&mut g, &mut k, gid, interleaved)?);
    if opts.lavapipe {
        k.loop_check = true;
        g.count_loops()?;
    }
    // Row shapes of array results (host-known sizes).
    let mut row_dims = Vec::with_capacity(rets.len());
    for t in &rets {
        let mut sizes = Vec::new();
        for d in t.shape() {
            sizes.push(k.arg(&mut g, ArgSrc::Sub(d.clone()), PrimType::I64)?);
        }
        row_dims.push(natural(&mut g, &sizes)?);
    }
    let mut out_bi = Vec::with_capacity(outs.len());
    for (j, &t) in outs.iter().enumerate() {
        out_bi.push(g.binding(word_kind(t)));
        k.binds.push(BindSrc::Out(j));
    }
    // Grid-stride loop written out (the body needs `k` mutably).
    // Points [literal 2, literal 3) when literal 3 is not 0, else all points.
    let r0 = k.arg(&mut g, ArgSrc::Lit(2), PrimType::I64)?;
    let r1 = k.arg(&mut g, ArgSrc::Lit(3), PrimType::I64)?;
    let z = g.c_u64(0);
    let all = g.b.i_equal(bt, None, r1, z).ie()?;
    let n = g.b.select(u64t, None, all, n, r1).ie()?;
    let first = g.b.i_add(u64t, None, gid, r0).ie()?;
    let iv = g.var(u64t);
    g.store(iv, first)?;
    let st = g.begin_loop()?;
    let i = g.load(u64t, iv)?;
    let c = g.b.u_less_than(bt, None, i, n).ie()?;
    let c = k.live(&mut g, c)?;
    // (Not in a group kernel: its invocations could read the status at different times and
    // part at the loop's barriers; a group kernel computes one point anyway.)
    let c = if opts.stop_check && opts.group.is_none() {
        let failed = g.launch_failed()?;
        let go_on = g.b.logical_not(bt, None, failed).ie()?;
        g.b.logical_and(bt, None, c, go_on).ie()?
    } else {
        c
    };
    g.loop_cond(st, c)?;
    let i = g.load(u64t, iv)?;
    k.scratch_restart(&mut g)?;
    let r: Vec<KVal> = point(&mut k, &mut g, i)?
        .into_iter()
        .zip(&is_acc)
        .filter(|(_, &a)| !a)
        .map(|(x, _)| x)
        .collect();
    let mut dsts = Vec::with_capacity(r.len());
    for ((&bi, &t), dims) in out_bi.iter().zip(&outs).zip(&row_dims) {
        // Row i of output: offset i * row length.
        let rowlen = match dims.first() {
            Some(&(s0, st0)) => g.b.i_mul(u64t, None, s0, st0).ie()?,
            None => g.c_u64(1),
        };
        let off = g.b.i_mul(u64t, None, i, rowlen).ie()?;
        dsts.push(View {
            bi,
            elem: t,
            off,
            dims: dims.clone(),
        });
    }
    k.write_all(&mut g, &dsts, &r, loc)?;
    let i1 = g.b.i_add(u64t, None, i, total).ie()?;
    g.store(iv, i1)?;
    k.backedge_lt(&mut g, i1, n, loc)?;
    g.end_loop(st)?;
    // Loops that check no limit of their own (copies, fills, inner folds) may have been cut
    // short by lavapipe: a thread reports at the end if any loop left while its condition held.
    k.exhausted(&mut g, loc)?;
    finish(g, k)
}

/// Compiles a top-level `map`: one thread per element of the outer dimension (grid-stride loop),
/// each running `lam` on rows of `arrs` and storing its results into fresh outputs.
/// `w` is argument 0. Per-thread arrays live in scratch memory (see [`Scratch`]: literals 0
/// and 1 are the per-thread capacities, temporaries 0..3 the buffers). With `lavapipe`, loop
/// iterations are counted and more than lavapipe's limit is reported as an error.
#[allow(dead_code)] // the tests of `prims` use it
pub fn map_kernel<'p>(
    prog: &'p Program,
    w: &SubExp,
    arrs: &[VName],
    lam: &'p Lambda,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
) -> R<KernelCode> {
    map_kernel_on(prog, w, arrs, lam, loc, host_types, false)
}

/// [`map_kernel`], counting loop iterations against lavapipe's limit when `lavapipe`.
pub fn map_kernel_on<'p>(
    prog: &'p Program,
    w: &SubExp,
    arrs: &[VName],
    lam: &'p Lambda,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
    lavapipe: bool,
) -> R<KernelCode> {
    map_kernel_accs(prog, w, arrs, lam, loc, host_types, lavapipe, None)
}

/// [`map_kernel_on`] for a `map` that may update the host accumulators `accs` describes (its
/// accumulator results are not outputs: the host passes the accumulators on).
#[allow(clippy::too_many_arguments)]
pub fn map_kernel_accs<'p>(
    prog: &'p Program,
    w: &SubExp,
    arrs: &[VName],
    lam: &'p Lambda,
    loc: &Option<SrcLoc>,
    host_types: &'p dyn Fn(&VName) -> Option<HostTy>,
    lavapipe: bool,
    accs: Option<AccKernel<'p>>,
) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, host_types);
    if accs.is_some() {
        k.variant = Some(variance::thread_variant(
            &lam.body.stms,
            lam.params.iter().map(|p| &p.name),
        ));
    }
    k.acc_info = accs;
    let n = k.arg(&mut g, ArgSrc::Sub(w.clone()), PrimType::I64)?;
    let mut views = Vec::with_capacity(arrs.len());
    for a in arrs {
        match k.var(&mut g, a, loc)? {
            KVal::S(..) => return Err(Error::bug("map over a scalar")),
            x => views.push(x),
        }
    }
    let opts = GridOpts {
        lavapipe,
        stop_check: lavapipe && may_loop(&lam.body.stms),
        group: None,
    };
    grid(k, g, n, &lam.ret, loc, opts, |k, g, i| {
        let args = k.rows_of(g, &views, i, loc)?;
        k.lambda(g, lam, args, loc)
    })
}

/// Whether a point running `stms` may loop (a `loop`, a SOAC, an accumulator scope or a call,
/// also inside an `if`): where none does, a point is short and [`grid`] checks nothing for it.
fn may_loop(stms: &[Stm]) -> bool {
    use vkad_core::ir::Exp;
    stms.iter().any(|s| match &s.exp {
        Exp::Loop { .. } | Exp::Soac(_) | Exp::WithAcc { .. } | Exp::Apply { .. } => true,
        Exp::If { then_b, else_b, .. } => may_loop(&then_b.stms) || may_loop(&else_b.stms),
        _ => false,
    })
}
