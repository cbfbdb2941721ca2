//! `sort_by_key` ([`vkad_core::ir::Exp::SortByKey`]) on the device: a stable least-significant-
//! digit radix sort of `i64` keys carrying the permutation, [`DIGIT_BITS`] bits per pass.
//!
//! Each pass is three kernels over tiles of [`TILE`] elements (thread `l` of a tile owns the
//! contiguous run `[l·CHUNK, (l+1)·CHUNK)` of it):
//! 1. [`count`]: each tile counts its digits in shared memory (workgroup atomics) and writes
//!    `counts[d · tiles + tile]` (digit-major, so that one scan gives every (digit, tile) its
//!    global start);
//! 2. [`scan`]: one workgroup scans `counts` (exclusive) in place;
//! 3. [`scatter`]: each tile counts its digits per thread again, scans the `16 × WG` counts in
//!    shared memory (digit-major: the scan gives every (digit, thread) the number of the tile's
//!    elements that precede its first element of that digit in sorted order), and each thread
//!    walks its run in order writing key and permutation entry to
//!    `counts[d · tiles + tile] + rank within the tile`. Equal digits keep their order, so each
//!    pass is stable and the passes sort by the whole key.
//!
//! Nothing here needs forward progress between workgroups. Shared memory: [`SHARED_BYTES`]
//! (the host falls back to the loop of SOACs, `passes::sort_lower`, where a device has less).

use crate::codegen::gen::{Gen, Ie, WordKind, R, WG};
use crate::codegen::thread::{finish, lit, KCtx};
use crate::codegen::{BindSrc, KernelCode};
use rspirv::spirv::{self, Word};
use vkad_core::ir::{Program, VName};

/// Bits of the key sorted per pass.
pub const DIGIT_BITS: u32 = 4;
/// Digits (buckets) per pass.
pub const BUCKETS: u32 = 1 << DIGIT_BITS;
/// Elements per thread of a tile.
pub const CHUNK: u32 = 16;
/// Elements per tile (one workgroup's share of a pass).
pub const TILE: u32 = WG * CHUNK;
/// Shared memory [`scatter`] needs (the other kernels need less).
pub const SHARED_BYTES: usize = ((BUCKETS * WG + WG + BUCKETS) * 4) as usize;

fn no_host(_: &VName) -> Option<crate::codegen::HostTy> {
    None
}

/// The workgroup's loop over tiles `group, group + groups, …` (uniform in the workgroup, so
/// barriers may sit inside); `body` gets the tile number (u64).
fn tile_loop(g: &mut Gen, tiles: Word, body: impl FnOnce(&mut Gen, Word) -> R<()>) -> R<()> {
    let u64t = g.t_u64();
    let gid = g.group_id()?;
    let gid = g.b.u_convert(u64t, None, gid).ie()?;
    let ng = g.num_groups()?;
    let ng = g.b.u_convert(u64t, None, ng).ie()?;
    g.for_range(gid, tiles, ng, body)
}

/// The digit of the key word `k` (u64): `(k >> shift) & mask` as u32.
fn digit(g: &mut Gen, k: Word, shift: Word, mask: Word) -> R<Word> {
    let (u64t, u32t) = (g.t_u64(), g.t_u32());
    let s = g.b.shift_right_logical(u64t, None, k, shift).ie()?;
    let d = g.b.bitwise_and(u64t, None, s, mask).ie()?;
    g.b.u_convert(u32t, None, d).ie()
}

/// A shared `u32` array's element `idx` (u32): load.
fn sh_load(g: &mut Gen, arr: Word, idx: Word) -> R<Word> {
    let u32t = g.t_u32();
    let p = g.shared_ptr(arr, u32t, idx)?;
    g.load(u32t, p)
}

/// A shared `u32` array's element `idx` (u32): store.
fn sh_store(g: &mut Gen, arr: Word, idx: Word, v: Word) -> R<()> {
    let u32t = g.t_u32();
    let p = g.shared_ptr(arr, u32t, idx)?;
    g.store(p, v)
}

/// `if local id < BUCKETS { f(local id) }`.
fn per_bucket(g: &mut Gen, lid: Word, f: impl FnOnce(&mut Gen) -> R<()>) -> R<()> {
    let bt = g.t_bool();
    let nb = g.c_u32(BUCKETS);
    let c = g.b.u_less_than(bt, None, lid, nb).ie()?;
    g.if_then(c, f)
}

/// Pass kernel 1. Literals: 0 = n, 1 = key offset (elements), 2 = shift, 3 = digit mask,
/// 4 = tiles. Bindings: keys (`u64` words), counts (`u32`, `BUCKETS × tiles`).
pub fn count(prog: &Program) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, &no_host);
    let n = lit(&mut k, &mut g, 0)?;
    let koff = lit(&mut k, &mut g, 1)?;
    let shift = lit(&mut k, &mut g, 2)?;
    let mask = lit(&mut k, &mut g, 3)?;
    let tiles = lit(&mut k, &mut g, 4)?;
    k.binds.push(BindSrc::Tmp(0));
    let keys = g.binding(WordKind::U64);
    k.binds.push(BindSrc::Tmp(1));
    let counts = g.binding(WordKind::U32);
    let (u64t, u32t, bt) = (g.t_u64(), g.t_u32(), g.t_bool());
    let cnt = g.shared_array(u32t, BUCKETS);
    let lid = g.local_id()?;
    let lid64 = g.b.u_convert(u64t, None, lid).ie()?;
    tile_loop(&mut g, tiles, |g, tile| {
        per_bucket(g, lid, |g| {
            let z = g.c_u32(0);
            sh_store(g, cnt, lid, z)
        })?;
        g.control_barrier()?;
        // Any order will do for counting: coalesced (neighbouring threads, neighbouring keys).
        let tsz = g.c_u64(TILE as u64);
        let start = g.b.i_mul(u64t, None, tile, tsz).ie()?;
        for j in 0..CHUNK {
            let off = g.c_u64((j * WG) as u64);
            let o = g.b.i_add(u64t, None, off, lid64).ie()?;
            let i = g.b.i_add(u64t, None, start, o).ie()?;
            let ok = g.b.u_less_than(bt, None, i, n).ie()?;
            g.if_then(ok, |g| {
                let at = g.b.i_add(u64t, None, koff, i).ie()?;
                let key = g.load_word(keys, at)?;
                let d = digit(g, key, shift, mask)?;
                let p = g.shared_ptr(cnt, u32t, d)?;
                let scope = g.c_u32(spirv::Scope::Workgroup as u32);
                let (sem, one) = (g.c_u32(0), g.c_u32(1));
                g.b.atomic_i_add(u32t, None, p, scope, sem, one).ie()?;
                Ok(())
            })?;
        }
        g.control_barrier()?;
        per_bucket(g, lid, |g| {
            let c = sh_load(g, cnt, lid)?;
            let row = g.b.i_mul(u64t, None, lid64, tiles).ie()?;
            let at = g.b.i_add(u64t, None, row, tile).ie()?;
            g.store_word(counts, at, c)
        })?;
        // The next tile's zeroing must wait for these reads.
        g.control_barrier()
    })?;
    finish(g, k)
}

/// The exclusive scan of the workgroup's values `v` (u32, one per thread) through the shared
/// array `tsum` (`WG` entries): returns this thread's exclusive prefix. Every thread must call
/// it (barriers).
fn workgroup_exclusive(g: &mut Gen, tsum: Word, lid: Word, v: Word) -> R<Word> {
    let (u32t, bt) = (g.t_u32(), g.t_bool());
    sh_store(g, tsum, lid, v)?;
    g.control_barrier()?;
    let mut off = 1;
    while off < WG {
        // Hillis–Steele: tsum[l] += tsum[l - off].
        let o = g.c_u32(off);
        let has = g.b.u_greater_than_equal(bt, None, lid, o).ie()?;
        let add = g.var(u32t);
        let z = g.c_u32(0);
        g.store(add, z)?;
        g.if_then(has, |g| {
            let src = g.b.i_sub(u32t, None, lid, o).ie()?;
            let x = sh_load(g, tsum, src)?;
            g.store(add, x)
        })?;
        g.control_barrier()?;
        let a = g.load(u32t, add)?;
        let cur = sh_load(g, tsum, lid)?;
        let s = g.b.i_add(u32t, None, cur, a).ie()?;
        sh_store(g, tsum, lid, s)?;
        g.control_barrier()?;
        off *= 2;
    }
    let incl = sh_load(g, tsum, lid)?;
    g.b.i_sub(u32t, None, incl, v).ie()
}

/// Pass kernel 2, one workgroup: the exclusive scan of `counts` in place. Literals: 0 = its
/// length. Binding: counts (`u32`).
pub fn scan(prog: &Program) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, &no_host);
    let len = lit(&mut k, &mut g, 0)?;
    k.binds.push(BindSrc::Tmp(0));
    let counts = g.binding(WordKind::U32);
    let (u64t, u32t) = (g.t_u64(), g.t_u32());
    let tsum = g.shared_array(u32t, WG);
    let lid = g.local_id()?;
    let lid64 = g.b.u_convert(u64t, None, lid).ie()?;
    // Thread l scans the contiguous run [l·per, (l+1)·per), per = ⌈len / WG⌉.
    let wg = g.c_u64(WG as u64);
    let (lo, hi) = g.split_range(len, wg, lid64)?;
    let one = g.c_u64(1);
    let sum = g.var(u32t);
    let z = g.c_u32(0);
    g.store(sum, z)?;
    g.for_range(lo, hi, one, |g, i| {
        let c = g.load_word(counts, i)?;
        let s = g.load(u32t, sum)?;
        let s = g.b.i_add(u32t, None, s, c).ie()?;
        g.store(sum, s)
    })?;
    let s = g.load(u32t, sum)?;
    let excl = workgroup_exclusive(&mut g, tsum, lid, s)?;
    g.store(sum, excl)?;
    g.for_range(lo, hi, one, |g, i| {
        let c = g.load_word(counts, i)?;
        let s = g.load(u32t, sum)?;
        g.store_word(counts, i, s)?;
        let s = g.b.i_add(u32t, None, s, c).ie()?;
        g.store(sum, s)
    })?;
    finish(g, k)
}

/// Pass kernel 3. Literals: 0 = n, 1 = key offset, 2 = shift, 3 = digit mask, 4 = tiles,
/// 5 = 1 when the permutation is the identity (the first pass; `perm_in` is not read).
/// Bindings: keys in, perm in (`u64`), counts (`u32`, scanned), keys out, perm out (`u64`).
pub fn scatter(prog: &Program) -> R<KernelCode> {
    let mut g = Gen::new()?;
    let mut k = KCtx::new(prog, &no_host);
    let n = lit(&mut k, &mut g, 0)?;
    let koff = lit(&mut k, &mut g, 1)?;
    let shift = lit(&mut k, &mut g, 2)?;
    let mask = lit(&mut k, &mut g, 3)?;
    let tiles = lit(&mut k, &mut g, 4)?;
    let first = lit(&mut k, &mut g, 5)?;
    let mut bind = |g: &mut Gen, i: usize, wk: WordKind| {
        k.binds.push(BindSrc::Tmp(i));
        g.binding(wk)
    };
    let keys = bind(&mut g, 0, WordKind::U64);
    let perm = bind(&mut g, 1, WordKind::U64);
    let counts = bind(&mut g, 2, WordKind::U32);
    let keys_out = bind(&mut g, 3, WordKind::U64);
    let perm_out = bind(&mut g, 4, WordKind::U64);
    let (u64t, u32t, bt) = (g.t_u64(), g.t_u32(), g.t_bool());
    // h[d·WG + l]: thread l's count (then rank) of digit d.
    let h = g.shared_array(u32t, BUCKETS * WG);
    let tsum = g.shared_array(u32t, WG);
    let tstart = g.shared_array(u32t, BUCKETS);
    let lid = g.local_id()?;
    let lid64 = g.b.u_convert(u64t, None, lid).ie()?;
    let wg32 = g.c_u32(WG);
    let z64 = g.c_u64(0);
    let is_first = g.b.i_not_equal(bt, None, first, z64).ie()?;
    tile_loop(&mut g, tiles, |g, tile| {
        for d in 0..BUCKETS {
            let at = g.c_u32(d * WG);
            let at = g.b.i_add(u32t, None, at, lid).ie()?;
            let z = g.c_u32(0);
            sh_store(g, h, at, z)?;
        }
        let tsz = g.c_u64(TILE as u64);
        let start = g.b.i_mul(u64t, None, tile, tsz).ie()?;
        let ch = g.c_u64(CHUNK as u64);
        let lo = g.b.i_mul(u64t, None, lid64, ch).ie()?;
        let lo = g.b.i_add(u64t, None, start, lo).ie()?;
        let hi = g.b.i_add(u64t, None, lo, ch).ie()?;
        let hi = g.glsl(u64t, spirv::GlslStd450Op::UMin, &[hi, n])?;
        let one64 = g.c_u64(1);
        let slot = |g: &mut Gen, d: Word| -> R<Word> {
            let row = g.b.i_mul(u32t, None, d, wg32).ie()?;
            g.b.i_add(u32t, None, row, lid).ie()
        };
        // 1. This thread's digit counts.
        g.for_range(lo, hi, one64, |g, i| {
            let at = g.b.i_add(u64t, None, koff, i).ie()?;
            let key = g.load_word(keys, at)?;
            let d = digit(g, key, shift, mask)?;
            let s = slot(g, d)?;
            let c = sh_load(g, h, s)?;
            let one = g.c_u32(1);
            let c = g.b.i_add(u32t, None, c, one).ie()?;
            sh_store(g, h, s, c)
        })?;
        g.control_barrier()?;
        // 2. Exclusive scan of h in its (digit-major) order: thread l owns entries
        //    [l·BUCKETS, (l+1)·BUCKETS).
        let nb = g.c_u32(BUCKETS);
        let base = g.b.i_mul(u32t, None, lid, nb).ie()?;
        let mut own = Vec::with_capacity(BUCKETS as usize);
        let mut sum = g.c_u32(0);
        for j in 0..BUCKETS {
            let cj = g.c_u32(j);
            let at = g.b.i_add(u32t, None, base, cj).ie()?;
            let v = sh_load(g, h, at)?;
            sum = g.b.i_add(u32t, None, sum, v).ie()?;
            own.push((at, v));
        }
        let mut run = workgroup_exclusive(g, tsum, lid, sum)?;
        for (at, v) in own {
            sh_store(g, h, at, run)?;
            run = g.b.i_add(u32t, None, run, v).ie()?;
        }
        g.control_barrier()?;
        // 3. Where each digit starts in the tile.
        per_bucket(g, lid, |g| {
            let at = g.b.i_mul(u32t, None, lid, wg32).ie()?;
            let v = sh_load(g, h, at)?;
            sh_store(g, tstart, lid, v)
        })?;
        g.control_barrier()?;
        // 4. Each element to counts[d·tiles + tile] + (its rank in the tile − the digit's start).
        g.for_range(lo, hi, one64, |g, i| {
            let at = g.b.i_add(u64t, None, koff, i).ie()?;
            let key = g.load_word(keys, at)?;
            let d = digit(g, key, shift, mask)?;
            let s = slot(g, d)?;
            let r = sh_load(g, h, s)?;
            let one = g.c_u32(1);
            let r1 = g.b.i_add(u32t, None, r, one).ie()?;
            sh_store(g, h, s, r1)?;
            let ts = sh_load(g, tstart, d)?;
            let local = g.b.i_sub(u32t, None, r, ts).ie()?;
            let d64 = g.b.u_convert(u64t, None, d).ie()?;
            let row = g.b.i_mul(u64t, None, d64, tiles).ie()?;
            let ci = g.b.i_add(u64t, None, row, tile).ie()?;
            let gstart = g.load_word(counts, ci)?;
            let pos = g.b.i_add(u32t, None, gstart, local).ie()?;
            let pos = g.b.u_convert(u64t, None, pos).ie()?;
            g.store_word(keys_out, pos, key)?;
            let pv = g.var(u64t);
            g.store(pv, i)?;
            let not_first = g.b.logical_not(bt, None, is_first).ie()?;
            g.if_then(not_first, |g| {
                let p = g.load_word(perm, i)?;
                g.store(pv, p)
            })?;
            let p = g.load(u64t, pv)?;
            g.store_word(perm_out, pos, p)
        })?;
        // The next tile reuses h.
        g.control_barrier()
    })?;
    finish(g, k)
}

/// The passes for `bits` (clamped to `0..=64`): `(shift, mask)` of each.
pub fn passes(bits: i64) -> Vec<(u64, u64)> {
    let bits = bits.clamp(0, 64) as u32;
    (0..bits.div_ceil(DIGIT_BITS))
        .map(|p| {
            let shift = p * DIGIT_BITS;
            let w = (bits - shift).min(DIGIT_BITS);
            (shift as u64, (1u64 << w) - 1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_cover_exactly_the_bits() {
        assert!(passes(0).is_empty());
        assert!(passes(-5).is_empty());
        assert_eq!(passes(1), vec![(0, 1)]);
        assert_eq!(passes(4), vec![(0, 15)]);
        assert_eq!(passes(6), vec![(0, 15), (4, 3)]);
        assert_eq!(passes(64).len(), 16);
        assert_eq!(passes(99), passes(64));
        assert_eq!(passes(64).last(), Some(&(60, 15)));
    }
}
