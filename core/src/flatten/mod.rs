//! Flattening: from the SOAC IR ([`crate::ir`]) to the kernel IR ([`crate::seg`]).
//!
//! Modelled on Futhark's *moderate* and *incremental* flattening (`Futhark.Pass.ExtractKernels`,
//! Henriksen et al., PPoPP'19). Every function body becomes host code; every SOAC at host level
//! becomes one or more segmented operations. The rules, in the order they are tried for a
//! `map` nest whose lambda body is `B` (the nest is the maps around `B`, outermost first):
//!
//! 1. **Sequential body.** `B` contains no SOAC (at any depth): one `SegMap` over all the
//!    nest's dimensions whose thread code is `B`.
//! 2. **Perfect nest.** `B` is cheap scalar statements followed by one `map` whose results are
//!    `B`'s results, in order, over a width known outside the nest: the inner map becomes one
//!    more dimension of the nest, and the cheap statements are recomputed by every thread of
//!    the inner map (they are sunk into it). So `map (map (map f))` is one `SegMap` over three
//!    dimensions.
//! 3. **Segmented operation.** `B` is cheap statements, optionally a `map` (the *producer*),
//!    then one `reduce`, `scan`, `reduce_by_index` or `scatter` (the *consumer*) whose results
//!    are `B`'s results: one `SegRed`, `SegScan`, `SegHist` or a `SegMap` of writes over the
//!    nest's dimensions plus the consumer's width. A producer whose results the consumer reads
//!    is fused into it (Futhark's *redomap* and *scanomap*): the kernel computes the producer's
//!    lambda per element, and the producer's results that other statements use become map
//!    outputs of the same kernel. A `reduce_by_index` or `scatter` in a nest updates an array
//!    that has one row per thread of the nest (a histogram per segment). Where the producer
//!    itself has inner parallelism, the fused kernel runs it sequentially in each thread;
//!    that version is chosen at run time (`suff_outer_par`) against a distributed one in
//!    which the producer is a `map` of its own, flattened by these rules, and the consumer
//!    reads its results (Futhark splits such a redomap the same way).
//! 4. **Distribution** (with **loop interchange**). Otherwise `B`'s statements are split into
//!    groups: each SOAC (with its fused producer) and each `for` loop whose body contains SOACs
//!    is a group of its own; consecutive other statements form one group. Each group becomes
//!    kernels in the same nest (recursively, by these rules); a value that a group computes and
//!    a later one uses is *expanded*: the kernel writes it to an array with the nest's
//!    dimensions in front, and later kernels read their thread's element. A `for` loop is
//!    interchanged with the nest: it runs on the host, its parameters expanded to arrays, and
//!    its body is flattened in the nest; a `with_acc` whose body has inner parallelism and
//!    whose accumulators are rows of the nest's threads is interchanged likewise (module
//!    `with_acc`: one host `with_acc` over the expanded arrays, updates indexed by the thread
//!    first). A `replicate`, a `copy` and an in-place update of rows is a group of its own
//!    too, a kernel over the nest and the row's elements (module `array_ops`). A group of
//!    cheap scalar statements is no kernel: the later kernels that need its values
//!    recompute them. Distribution needs every expanded value's shape, every
//!    inner width and every interchanged loop's bound to be known outside the nest; where one
//!    is not (irregular nested parallelism), rule 5 applies.
//! 5. **Sequentialisation.** One `SegMap` over the nest whose thread code runs `B`, inner SOACs
//!    included, sequentially. Where `B` has inner SOACs, a host `for` loop over the nest's
//!    points running `B` flattened is generated beside it (module `host_map`): never chosen
//!    unless `threshold(host_map_N)` is set, it is what a device that cannot run so much work
//!    in one thread (lavapipe's loop limit) runs instead. Its body is host code, so the
//!    backend's host-level passes ([`HostPasses`]) run on it first.
//!
//! 6. **Versioned host loops.** A host-level `loop` whose body has kernels, at least one of
//!    whose spaces is known before the loop, and that contains nothing thread code lacks or
//!    is in doubt there (accumulators, `sort_by_key`, transpositions, calls), is generated
//!    twice: the flattened loop, and the whole loop as the thread code of one `segmap` thread
//!    (space `[1]`, results unwrapped by the host). `threshold(loop_par_N) w`, with `w` the
//!    largest space among the loop's kernels known before it (kernels whose size the loop
//!    computes, such as the 0-or-1-element slice of an `argmax` adjoint, do not count), picks the flattened loop when true
//!    (enough parallelism per kernel) and the one-thread loop otherwise: with the default 2^15
//!    a loop over vectors of width 14 (the LSTM) is one launch instead of several per
//!    iteration. Threshold 0 always picks the flattened loop, `i64::MAX` the one-thread one.
//!    At most [`MAX_VERSIONED_DEPTH`] loops are versioned along a path (the parallel version
//!    of a versioned loop versions its inner loops with one less). The one-thread version of
//!    a `for` loop runs in chunks of iterations, one launch each ([`seq_loop`]): a GPU takes
//!    the whole loop at once; on lavapipe, whose loop limiter stops a thread after 65535
//!    iterations, the Vulkan runtime halves the chunk where the limiter cut it, and runs the
//!    flattened version only where one iteration per launch is too many.
//!
//! 7. **Reduced accumulator updates** (module `acc_red`, after the rules above). A `segmap`
//!    whose every result is one update of a host accumulator, at indices that are distinct
//!    thread indices of its space, with exactly one thread index left over, updates each
//!    element from as many threads as that dimension is wide (k-means' Newton step: 20,000
//!    per element). It is versioned on that width (`acc_threshold(acc_red_N)`): the sums
//!    over the left-over dimension followed by one update per element, or the atomic kernel.
//!    The sums are a `segmap` thread per element looping over the dimension, or a `segred`,
//!    by the number of elements (`seg_threads_threshold(seg_threads_N)`).
//!    A kernel of updates that does not have that form because it updates several
//!    accumulators at different indices, or one through inner `map`s of updates (a
//!    `[K][d][d]` adjoint, module `acc_split`), is first split into one kernel per
//!    accumulator with the inner maps as further dimensions, where its statements are cheap
//!    enough to repeat and rule 7 then applies to one of the kernels; where they are not, a
//!    kernel first stores the values the updates need (`acc_store::materialize`). Then (module
//!    `contention`) a nest whose sequentialised kernel contends on an accumulator that its
//!    flattened version reduces gets a threshold of its own kind (`contended_threshold`),
//!    which the Vulkan runtime never meets unless it is set: the size alone cannot tell the
//!    versions apart.
//! 8. A nest whose sequentialised version does little work, counted on the host, takes it
//!    whatever its size on a CPU device (module `small_nest`: its condition is or-ed with a
//!    `small_nest_threshold` of that work).
//!
//! Where distribution applies, both versions are generated (incremental flattening): the host
//! compares the nest's size with a run-time threshold ([`crate::seg::HostExp::Threshold`]) and
//! runs the sequentialised version when the outer parallelism already fills the device, the
//! distributed one otherwise. A nest is versioned at most [`MAX_VERSIONED_DEPTH`] times along
//! any path, which bounds the code size.
//!
//! At host level a `reduce`, `scan`, `reduce_by_index` or `scatter` becomes a segmented
//! operation over one dimension, with the same producer fusion; `if`, `loop` and `with_acc`
//! stay host constructs around flattened bodies. Accumulator updates (`upd_acc`) in thread
//! code are device accumulator updates, in whatever form the map nest around them has (several
//! arrays, rows, inside loops, nested `with_acc`s): kernels never hand an accumulator back to
//! the host to be updated element by element. Host code never iterates over an array.

mod acc_red;
mod acc_split;
mod acc_store;
mod array_ops;
mod contention;
mod host_map;
mod kernel;
mod nest;
mod seq_loop;
mod small_nest;
mod with_acc;

use crate::ir::{self, Type, VName};
use crate::seg;
use nest::Types;

/// How many times a nest is versioned (distributed and sequentialised, chosen at run time)
/// along one path from a host statement inward.
pub const MAX_VERSIONED_DEPTH: usize = 2;

/// A backend's rewrites of host-level SOAC code (a function of programs, as the backend runs
/// them on the whole program before flattening): run again on the code that flattening
/// brings to host level itself, the body of a nest's host-loop fallback (`host_map`), whose
/// statements were inside a lambda when the backend's passes ran.
pub type HostPasses<'a> = &'a dyn Fn(ir::Program) -> ir::Program;

/// The kernel pipeline that follows [`crate::compile`]: the dead results of `with_acc`s removed
/// ([`crate::passes::dead_accumulators`]), reads through in-place updates moved before them
/// ([`crate::passes::update_reads`], so that the additions into adjoint rows fuse), fusion of
/// the final SOAC IR
/// ([`crate::passes::fusion::fuse`]), fission of the cheap array results it gave nested maps
/// and fusion again where that split any ([`crate::passes::fission`]), simplification, then
/// flattening.
pub fn extract_kernels(p: &ir::Program) -> seg::Program {
    extract_kernels_with(p, &|p| p)
}

/// [`extract_kernels`] for a backend whose host-level passes are `host_passes`.
pub fn extract_kernels_with(p: &ir::Program, host_passes: HostPasses) -> seg::Program {
    use crate::passes::{fission, fusion, update_reads};
    let p = update_reads::update_reads(crate::passes::dead_accumulators(p.clone()));
    let fused = match fission::fission(fusion::fuse(p)) {
        (q, 0) => q,
        (q, _) => fusion::fuse(fission::unmark(fusion::fuse(q))),
    };
    let fused = crate::passes::simplify(fused);
    flatten_program_with(&fused, host_passes)
}

/// Flattens every function of `p` (which must be free of `jvp`/`vjp`, as [`crate::compile`]
/// leaves it).
pub fn flatten_program(p: &ir::Program) -> seg::Program {
    flatten_program_with(p, &|p| p)
}

/// [`flatten_program`] for a backend whose host-level passes are `host_passes`.
pub fn flatten_program_with(p: &ir::Program, host_passes: HostPasses) -> seg::Program {
    let mut ns = p.name_source.clone();
    let mut thresholds = 0;
    let funs = p
        .funs
        .iter()
        .map(|f| {
            let types = collect_types(f);
            let mut fl = kernel::Flattener {
                ns: &mut ns,
                types,
                thresholds: &mut thresholds,
                host_loc: None,
                loop_versions: MAX_VERSIONED_DEPTH,
                distribute_next: false,
                host_maps: 0,
                host_passes,
            };
            let mut body = fl.host_body(&f.body);
            fl.reduce_acc_updates(&mut body);
            contention::mark_contended_nests(&mut body, &mut fl);
            small_nest::mark_small_nests(&mut body, &mut fl);
            seg::FunDef {
                name: f.name.clone(),
                entry: f.entry.clone(),
                size_params: f.size_params.clone(),
                params: f.params.clone(),
                ret: f.ret.clone(),
                body,
                attrs: f.attrs.clone(),
            }
        })
        .collect();
    seg::Program {
        funs,
        name_source: ns,
    }
}

/// The type of every name bound in `f` (names are unique program-wide).
fn collect_types(f: &ir::FunDef) -> Types {
    let i64 = Type::Prim(crate::prim::PrimType::Int(crate::prim::IntType::I64));
    let mut found: Vec<(VName, Type)> = f
        .size_params
        .iter()
        .map(|s| (s.clone(), i64.clone()))
        .collect();
    found.extend(f.params.iter().map(|p| (p.name.clone(), p.ty.clone())));
    collect_stms(&f.body.stms, &mut found);
    found.into_iter().collect()
}

fn collect_stms(stms: &[ir::Stm], out: &mut Vec<(VName, Type)>) {
    use ir::{Exp, Soac};
    let lam = |l: &ir::Lambda, out: &mut Vec<(VName, Type)>| {
        out.extend(l.params.iter().map(|p| (p.name.clone(), p.ty.clone())));
        collect_stms(&l.body.stms, out);
    };
    for s in stms {
        out.extend(s.pat.elems.iter().map(|p| (p.name.clone(), p.ty.clone())));
        match &s.exp {
            Exp::If { then_b, else_b, .. } => {
                collect_stms(&then_b.stms, out);
                collect_stms(&else_b.stms, out);
            }
            Exp::Loop { params, form, body } => {
                out.extend(params.iter().map(|(p, _)| (p.name.clone(), p.ty.clone())));
                if let ir::LoopForm::For { i, it, .. } = form {
                    out.push((i.clone(), Type::Prim(crate::prim::PrimType::Int(*it))));
                }
                collect_stms(&body.stms, out);
            }
            Exp::WithAcc { inputs, lam: l } => {
                lam(l, out);
                for i in inputs {
                    if let Some(op) = &i.op {
                        lam(&op.lam, out);
                    }
                }
            }
            Exp::Jvp { lam: l, .. } | Exp::Vjp { lam: l, .. } => lam(l, out),
            Exp::Soac(soac) => match soac {
                Soac::Map { lam: l, .. } => lam(l, out),
                Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. } => {
                    lam(&op.lam, out)
                }
                Soac::Scatter { .. } => {}
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
