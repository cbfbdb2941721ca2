//! The memory budget of the interpreter and the AD oracle: where they allocate an array (or grow
//! the oracle's tape), they first check that the memory is there, so that a program asking for
//! too much gets the run-time error `out of memory: needs N bytes ...` at its location instead
//! of aborting the process (Rust aborts when an allocation fails, and panics with "capacity
//! overflow" when a size does not fit in the address space).
//!
//! The budget is, for each allocation:
//! - the limit set with [`set_memory_limit`] (the CLI's `--max-memory`, or the environment
//!   variable `VKAD_MAX_MEMORY`), if any: no single array may be larger;
//! - for allocations of at least [`CHECK_AVAILABLE_FROM`] bytes, the memory the machine has
//!   available at that moment (`MemAvailable` in `/proc/meminfo`, and the cgroup's
//!   `memory.max - memory.current` where there is one), since Linux overcommits: a huge
//!   allocation would succeed and the process be killed later while filling it;
//! - then the allocation itself is made with `try_reserve`, whose failure is the same error.
//!
//! Copies of arrays that exist already (at most doubling what the program holds) are not
//! checked.

use std::sync::atomic::{AtomicU64, Ordering};

/// The limit set by [`set_memory_limit`]; 0 when there is none.
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Allocations of at least this many bytes are also checked against the memory available now
/// (reading it costs some microseconds, negligible next to filling that much memory).
pub const CHECK_AVAILABLE_FROM: u128 = 64 << 20;

/// Sets (or with `None` removes) the largest allocation, in bytes, that the interpreter and the
/// AD oracle may make; for the whole process.
pub fn set_memory_limit(bytes: Option<u64>) {
    LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The limit set by [`set_memory_limit`].
pub fn memory_limit() -> Option<u64> {
    match LIMIT.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

/// Parses a memory size: a number of bytes with an optional suffix `k`, `M`, `G` or `T`
/// (powers of 1024; `KiB`, `MB`, `GiB`... are read the same way).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("invalid memory size `{s}`: expected a number of bytes"))?;
    let shift = match unit
        .trim()
        .to_ascii_lowercase()
        .trim_end_matches("ib")
        .trim_end_matches('b')
    {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(format!("invalid memory size `{s}`: unknown unit `{unit}`")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("invalid memory size `{s}`: too large"))
}

/// The memory the machine (and the process's cgroup) has available now, in bytes, where known.
pub fn available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kb.checked_mul(1024)
    });
    let read = |f: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{f}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    // cgroup v2 (`memory.max` is "max" without a limit, which does not parse).
    let cgroup =
        read("memory.max").map(|max| max.saturating_sub(read("memory.current").unwrap_or(0)));
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Checks that `elems` values of `elem_bytes` bytes each may be allocated now; the error is the
/// message `out of memory: needs N bytes ...`.
pub fn check(elems: usize, elem_bytes: usize) -> Result<(), String> {
    check_bytes(elems as u128 * elem_bytes as u128)
}

/// [`check`] for a number of bytes.
pub fn check_bytes(bytes: u128) -> Result<(), String> {
    if bytes > isize::MAX as u128 {
        return Err(format!(
            "out of memory: needs {bytes} bytes, more than the address space"
        ));
    }
    if let Some(limit) = memory_limit() {
        if bytes > limit as u128 {
            return Err(format!(
                "out of memory: needs {bytes} bytes, more than the limit of {limit} bytes \
                 (--max-memory)"
            ));
        }
    }
    if bytes >= CHECK_AVAILABLE_FROM {
        if let Some(avail) = available() {
            if bytes > avail as u128 {
                return Err(format!(
                    "out of memory: needs {bytes} bytes, only {avail} are available"
                ));
            }
        }
    }
    Ok(())
}

/// For a structure that grows piece by piece (the AD oracle's tape): checks that `what` may grow
/// to `total` bytes, `more` of them new. The limit applies to the total, the available memory
/// to the growth (as with [`check_bytes`], from [`CHECK_AVAILABLE_FROM`] bytes).
pub fn check_growth(what: &str, total: u128, more: u128) -> Result<(), String> {
    if let Some(limit) = memory_limit() {
        if total > limit as u128 {
            return Err(format!(
                "out of memory: {what} needs {total} bytes, more than the limit of {limit} bytes \
                 (--max-memory)"
            ));
        }
    }
    if more >= CHECK_AVAILABLE_FROM {
        if let Some(avail) = available() {
            if more > avail as u128 {
                return Err(format!(
                    "out of memory: {what} needs {total} bytes, and only {avail} more are \
                     available"
                ));
            }
        }
    }
    Ok(())
}

/// Reserves room for `additional` more elements in `v` (exactly), within the budget.
pub fn reserve<T>(v: &mut Vec<T>, additional: usize) -> Result<(), String> {
    if v.capacity() - v.len() >= additional {
        return Ok(());
    }
    check(additional, std::mem::size_of::<T>())?;
    v.try_reserve_exact(additional).map_err(|_| {
        format!(
            "out of memory: needs {} bytes, which could not be allocated",
            additional as u128 * std::mem::size_of::<T>() as u128
        )
    })
}

/// An empty vector with room for `n` elements, within the budget.
pub fn vec_with_capacity<T>(n: usize) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    reserve(&mut v, n)?;
    Ok(v)
}

/// `n` copies of `x`, within the budget.
pub fn vec_filled<T: Clone>(x: T, n: usize) -> Result<Vec<T>, String> {
    let mut v = vec_with_capacity(n)?;
    v.resize(n, x);
    Ok(v)
}

/// The number of elements of an array of `shape` (the product), or the error
/// `size overflow: ...` where it does not fit in a `usize`.
pub fn elements(shape: &[usize]) -> Result<usize, String> {
    if shape.contains(&0) {
        return Ok(0);
    }
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            format!(
                "size overflow: an array of shape {} has more elements than fit in memory",
                shape.iter().map(|d| format!("[{d}]")).collect::<String>()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("3MB"), Ok(3 << 20));
        assert!(parse_size("x").is_err());
        assert!(parse_size("3q").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn impossible_allocations_are_errors_not_aborts() {
        // 2^62 f32s: more bytes than the address space (`vec!` would panic "capacity overflow").
        let e = vec_filled(0f32, 1 << 62).unwrap_err();
        assert!(
            e.starts_with("out of memory: needs 18446744073709551616 bytes"),
            "{e}"
        );
        // 10^15 f32s (4 PB) fit in the address space but not in any machine's memory (`vec!`
        // aborts the process with "memory allocation failed", or it is killed while filling).
        let e = vec_with_capacity::<f32>(1_000_000_000_000_000).unwrap_err();
        assert!(
            e.starts_with("out of memory: needs 4000000000000000 bytes"),
            "{e}"
        );
        assert_eq!(vec_filled(7u8, 3), Ok(vec![7, 7, 7]));
        assert_eq!(elements(&[2, 3, 4]), Ok(24));
        assert!(elements(&[1 << 40, 1 << 40])
            .unwrap_err()
            .starts_with("size overflow: an array of shape [1099511627776][1099511627776]"));
        assert_eq!(elements(&[1 << 40, 1 << 40, 0]), Ok(0));
    }
}
