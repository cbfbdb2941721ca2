//! Which inner `map`s a thread computes at once instead of lazily.
//!
//! An inner `map` is normally a lazy array ([`super::thread::Lazy`]): each row is computed
//! where it is read, so a `map` feeding a `reduce` costs no memory. But a row read twice is
//! computed twice, and a row read inside a loop or an inner lambda is computed at every
//! iteration: reverse-mode AD reads the adjoint of a matrix-vector product's rows inside the
//! loop of the transposed product (GMM's `Q (x - μ)`), which made a thread's work cubic in the
//! dimension instead of quadratic. [`compute_once`] says when a `map` is worth writing into
//! per-thread memory instead, counting buffer accesses (what a thread's time is made of on
//! lavapipe, and mostly on GPUs, where per-thread memory is cached global memory):
//!
//! - a lambda that does more than straight-line scalar code (a loop, a call, a reduction, a
//!   scan, ...) is worth storing once its rows are read twice;
//! - a lambda of straight-line code making `l` loads per row (its inputs in buffers, its
//!   indexing) costs `l · r` loads for `r` reads lazily, `l + 1 + r` stored (the store, then a
//!   load per read): stored where `l ≥ 2` and that is less (GMM's `x - μ`, read in the loops
//!   of `Q (x - μ)` and of its adjoint).
//!
//! The count is of the places that read a row, not of run-time reads: a read inside a nested
//! lambda or loop body counts as [`MANY`], a read as the input of another lazy `map` counts as
//! many times as that map's rows are read, a branch counts as its costlier side. The choice
//! depends only on the program, not on the device or the sizes.

use super::scratch::{body_vars, exp_vars};
use vkad_core::ir::{Body, Exp, Soac, Stm, SubExp};

/// The reads of a row inside a loop or an inner lambda (where it is read at every iteration);
/// counts saturate here.
pub(super) const MANY: u32 = 8;

/// Whether statement `k` of `stms` (followed by the results `result`), an inner `map` whose
/// lambda makes `loads` buffer loads per row where it is straight-line code, should be
/// computed at once into per-thread memory rather than left lazy (see the module doc).
pub(super) fn compute_once(stms: &[Stm], result: &[SubExp], k: usize, loads: u32) -> bool {
    let Some(stm) = stms.get(k) else {
        return false;
    };
    let Exp::Soac(Soac::Map { lam, .. }) = &stm.exp else {
        return false;
    };
    let r = reads(&names(stm), &stms[k + 1..], result);
    if costly(&lam.body) {
        r >= 2
    } else {
        loads >= 2 && loads.saturating_mul(r) > loads + 1 + r
    }
}

/// The buffer loads of one row of a `map` whose lambda is `body`, given how many of its
/// inputs are arrays in buffers (not `iota`s or `replicate`s): one per such input and one per
/// indexing in the lambda (a branch counting as its costlier side).
pub(super) fn row_loads(buffer_inputs: u32, body: &Body) -> u32 {
    buffer_inputs.saturating_add(indexings(body))
}

fn indexings(b: &Body) -> u32 {
    b.stms.iter().fold(0u32, |n, s| {
        n.saturating_add(match &s.exp {
            Exp::Index(..) => 1,
            Exp::If { then_b, else_b, .. } => indexings(then_b).max(indexings(else_b)),
            _ => 0,
        })
    })
}

/// Whether running a body does more than straight-line scalar code: a loop, a call, a SOAC
/// that runs when the body does (a lazy `map` costs only where it is read, so only its lambda
/// counts), an accumulation or a sort.
fn costly(b: &Body) -> bool {
    b.stms.iter().any(|s| match &s.exp {
        Exp::Soac(Soac::Map { lam, .. }) => costly(&lam.body),
        Exp::Soac(_)
        | Exp::Loop { .. }
        | Exp::Apply { .. }
        | Exp::WithAcc { .. }
        | Exp::SortByKey { .. } => true,
        Exp::If { then_b, else_b, .. } => costly(then_b) || costly(else_b),
        _ => false,
    })
}

fn names(stm: &Stm) -> Vec<u32> {
    stm.pat.elems.iter().map(|p| p.name.id).collect()
}

/// How many times (saturating at [`MANY`]) the rows of the arrays `xs` are read by the
/// statements `stms` followed by the results `result`.
fn reads(xs: &[u32], stms: &[Stm], result: &[SubExp]) -> u32 {
    let mut n = 0u32;
    for (j, s) in stms.iter().enumerate() {
        n = n.saturating_add(reads_by(xs, s, &stms[j + 1..], result));
        if n >= MANY {
            return MANY;
        }
    }
    n.saturating_add(occurrences(xs, var_ids(result))).min(MANY)
}

/// The reads of `xs`' rows by statement `s` (followed by `rest` and `result`).
fn reads_by(xs: &[u32], s: &Stm, rest: &[Stm], result: &[SubExp]) -> u32 {
    let mut vs = Vec::new();
    exp_vars(&s.exp, &mut vs);
    if !vs.iter().any(|v| xs.contains(v)) {
        return 0;
    }
    let inside = |b: &Body| {
        let mut vs = Vec::new();
        body_vars(b, &mut vs);
        vs.iter().any(|v| xs.contains(v))
    };
    match &s.exp {
        Exp::Soac(Soac::Map { arrs, lam, .. }) => {
            if inside(&lam.body) {
                return MANY;
            }
            // A row of the consumer reads one row of the producer, whichever of its results
            // it takes (they are computed together).
            let per_row = occurrences(xs, arrs.iter().map(|v| v.id)).min(1);
            per_row.saturating_mul(reads(&names(s), rest, result).max(1))
        }
        Exp::Soac(Soac::Reduce { op, .. } | Soac::Scan { op, .. } | Soac::Hist { op, .. })
            if inside(&op.lam.body) =>
        {
            MANY
        }
        // A reduction or scan reads each row once, for all of its inputs.
        Exp::Soac(Soac::Reduce { arrs, .. } | Soac::Scan { arrs, .. })
            if arrs.iter().any(|a| xs.contains(&a.id)) =>
        {
            1
        }
        Exp::Loop { body, .. } if inside(body) => MANY,
        Exp::WithAcc { lam, .. } if inside(&lam.body) => MANY,
        Exp::Apply { .. } => MANY,
        Exp::If { then_b, else_b, .. } => {
            reads(xs, &then_b.stms, &then_b.result).max(reads(xs, &else_b.stms, &else_b.result))
        }
        // A reshaped lazy array stays lazy: its reads are the original's.
        Exp::Reshape(_, v) if xs.contains(&v.id) => reads(&names(s), rest, result).max(1),
        _ => occurrences(xs, vs.into_iter()),
    }
}

/// The ids of the variables among `result`.
fn var_ids(result: &[SubExp]) -> impl Iterator<Item = u32> + '_ {
    result.iter().filter_map(|r| r.as_var().map(|v| v.id))
}

fn occurrences(xs: &[u32], vs: impl Iterator<Item = u32>) -> u32 {
    vs.filter(|v| xs.contains(v))
        .count()
        .try_into()
        .unwrap_or(MANY)
}

/// Whether the results of statement `k` of `stms` (followed by `result`) are read only by
/// the next statement, a `reduce` or `scan` taking them as inputs. Such a `map` may stay lazy
/// even where it reads per-thread arrays: the `reduce` or `scan` reads all of its rows at
/// once, before any later statement can update those arrays in place (a `map` feeding a
/// reduction keeps its fusion).
pub(super) fn only_reduced_next(stms: &[Stm], result: &[SubExp], k: usize) -> bool {
    let (Some(stm), Some(next)) = (stms.get(k), stms.get(k + 1)) else {
        return false;
    };
    let xs = names(stm);
    let Exp::Soac(Soac::Reduce { arrs, op, .. } | Soac::Scan { arrs, op, .. }) = &next.exp else {
        return false;
    };
    let mut in_op = Vec::new();
    body_vars(&op.lam.body, &mut in_op);
    arrs.iter().any(|a| xs.contains(&a.id))
        && !in_op.iter().any(|v| xs.contains(v))
        && reads(&xs, &stms[k + 2..], result) == 0
}

/// Whether the results of statement `k` of `stms` are read only as results of the body
/// (`result`), after statements none of which can update an array in place. Where the body's
/// results are written into memory as soon as it ends ([`super::thread::Place::written`]), such
/// a `map` is read whole before any in-place update.
pub(super) fn only_returned(stms: &[Stm], result: &[SubExp], k: usize) -> bool {
    let Some(stm) = stms.get(k) else {
        return false;
    };
    let xs = names(stm);
    let rest = &stms[k + 1..];
    occurrences(&xs, var_ids(result)) > 0
        && reads(&xs, rest, &[]) == 0
        && !rest.iter().any(|s| may_update(&s.exp))
}

/// Whether an expression may write into an existing array: an in-place update, `scatter`,
/// `reduce_by_index`, a loop or `with_acc` (which take over their initial arrays), an
/// accumulator update, a call, or a branch with one of these.
fn may_update(e: &Exp) -> bool {
    match e {
        Exp::Update(..)
        | Exp::Soac(Soac::Scatter { .. } | Soac::Hist { .. })
        | Exp::Loop { .. }
        | Exp::WithAcc { .. }
        | Exp::UpdAcc { .. }
        | Exp::Apply { .. } => true,
        Exp::If { then_b, else_b, .. } => {
            then_b.stms.iter().any(|s| may_update(&s.exp))
                || else_b.stms.iter().any(|s| may_update(&s.exp))
        }
        Exp::Soac(Soac::Map { lam, .. }) => lam.body.stms.iter().any(|s| may_update(&s.exp)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements of the lambda of the first top-level `map` of entry `main` of `src`.
    fn thread_body(src: &str) -> Body {
        let c = vkad_core::compile("t.fut", src).unwrap_or_else(|e| panic!("{}", e.render()));
        let f = c.ir.entry("main").unwrap();
        f.body
            .stms
            .iter()
            .find_map(|s| match &s.exp {
                Exp::Soac(Soac::Map { lam, .. }) => Some(lam.body.clone()),
                _ => None,
            })
            .expect("a map")
    }

    /// The index of the `i`-th `map` statement of `b` (from 0).
    fn at(b: &Body, i: usize) -> usize {
        let maps = b
            .stms
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s.exp, Exp::Soac(Soac::Map { .. })));
        maps.map(|(k, _)| k)
            .nth(i)
            .unwrap_or_else(|| panic!("no map {i}: {b:?}"))
    }

    /// [`compute_once`] of the `i`-th `map` of `b`, its inputs all arrays in buffers.
    fn once(b: &Body, i: usize) -> bool {
        let k = at(b, i);
        let Exp::Soac(Soac::Map { arrs, lam, .. }) = &b.stms[k].exp else {
            unreachable!()
        };
        let loads = row_loads(arrs.len() as u32, &lam.body);
        compute_once(&b.stms, &b.result, k, loads)
    }

    /// Rows with a reduction, read inside another lambda: stored; read once by a
    /// reduction: lazy.
    #[test]
    fn costly_rows_read_in_a_loop_are_stored() {
        let b = thread_body(
            "entry main [n] (xs: [][n]f64) (m: [n][n]f64) : [][n]f64 =
  map (\\x -> let ys = map (\\row -> f64.sum (map2 (*) row x)) m
             in map (\\j -> f64.sum (map (\\i -> ys[i] * m[i, j]) (iota n))) (iota n)) xs",
        );
        assert!(once(&b, 0), "ys");
        let b = thread_body(
            "entry main [n] (xs: [][n]f64) (m: [n][n]f64) : []f64 =
  map (\\x -> let ys = map (\\row -> f64.sum (map2 (*) row x)) m in f64.maximum ys) xs",
        );
        assert!(!once(&b, 0), "ys");
    }

    /// Straight-line rows: stored where they load two values and are read in a loop, lazy
    /// where they load one.
    #[test]
    fn cheap_rows_are_stored_only_where_that_saves_loads() {
        let src = "entry main [n] (xs: [][n]f64) (mu: [n]f64) (q: [n][n]f64) : [][n]f64 =
  map (\\x -> let d = map2 (-) x mu
             let e = map (\\v -> v * 2) x
             in map (\\row -> f64.sum (map2 (*) row d) + f64.sum (map2 (*) row e)) q) xs";
        let b = thread_body(src);
        assert!(once(&b, 0), "d");
        assert!(!once(&b, 1), "e");
    }

    /// A `map` whose rows only the next statement's reduction reads.
    #[test]
    fn maps_reduced_next() {
        let b = thread_body(
            "entry main [n] (xs: [][n]f64) : []f64 =
  map (\\x -> let a = copy x with [0] = 1
             let s = f64.sum (map (\\v -> v * 3) a)
             in s + a[1]) xs",
        );
        assert!(only_reduced_next(&b.stms, &b.result, at(&b, 0)));
        let b = thread_body(
            "entry main [n] (xs: [][n]f64) : []f64 =
  map (\\x -> let a = copy x with [0] = 1
             let ys = map (\\v -> v * 3) a
             let s = f64.sum ys
             in s + ys[1]) xs",
        );
        assert!(!only_reduced_next(&b.stms, &b.result, at(&b, 0)));
    }

    /// A `map` returned by a body with no in-place update after it.
    #[test]
    fn maps_returned_last() {
        let b = thread_body(
            "entry main [n] (xs: [][n]f64) : [][n]f64 =
  map (\\x -> let a = copy x with [0] = 1
             in map (\\v -> v * 3) a) xs",
        );
        assert!(only_returned(&b.stms, &b.result, at(&b, 0)));
        let b = thread_body(
            "entry main [n] (xs: [][n]f64) : ([][n]f64, [][n]f64) =
  unzip (map (\\x -> let a = copy x with [0] = 1
                    let ys = map (\\v -> v * 3) a
                    let a = a with [1] = 2
                    in (ys, a)) xs)",
        );
        assert!(!only_returned(&b.stms, &b.result, at(&b, 0)));
    }

    /// A `map` of several results that one reduction reads (one row per element for all of
    /// them) is read once.
    #[test]
    fn results_of_one_map_reduced_together_are_read_once() {
        let b = thread_body(
            "entry main [n] (xs: [][n]f32) (a: [n]f32) (c: [n]f32) (e: [n]f32) : []f32 =
  map (\\x -> let (p, q, r) = unzip3 (map4 (\\v s t u -> (v * s, v * t, v * u)) x a c e)
             let (s, t, u) = reduce (\\(a, b, c) (d, e, f) -> (a + d, b + e, c + f)) (0, 0, 0)
                                    (zip3 p q r)
             in s * t + u) xs",
        );
        assert!(!once(&b, 0));
    }
}
