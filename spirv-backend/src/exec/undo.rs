//! Undoing work the device cut short: copies of what it may change outside itself, taken
//! before it runs and copied back before it (or another version) runs again. A version of a
//! versioned step on lavapipe, whose loop limiter stops a thread part-way
//! (`runtime::Runtime::seq_loop`), and a `map` chunk that must run again with more scratch
//! memory (`map_scratch`, its accumulators).
//!
//! A `map` chunk that a one-thread version launches first would copy the accumulators the
//! version's snapshot has just copied (XSBench's gradient: two copies of its 30 MB adjoint per
//! run on lavapipe). While no launch has been recorded since that snapshot, its copies hold
//! the arrays' current contents, so the chunk restores from them instead ([`Pristine`]).
//!
//! An array that a `replicate` of a scalar filled, and that no launch has reached since, is
//! not copied: it is saved as its value, and restored by filling it again ([`Fill`]; the
//! zeros of an adjoint that a one-thread version accumulates into).

use super::{DArr, Exec, HVal, E};
use std::rc::Rc;
use std::sync::Arc;
use vkad_core::diag::SrcLoc;
use vkad_core::ir::VName;

/// The arrays a version may change and what each held before it ran.
pub(crate) struct Snapshot(Vec<(DArr, Saved)>);

/// What an array of a [`Snapshot`] held.
enum Saved {
    /// A copy of it.
    Copy(DArr),
    /// Every element was this word (see [`Fill`]).
    Fill(u64),
}

/// A buffer whose first `len` elements a `replicate` set to `word`: they still hold it while
/// no launch or transfer reaches the buffer (every device write to an existing array is a
/// launch that binds it or a transfer that writes it; uploads go to fresh buffers), which
/// [`Exec::launch`] and `Exec::enqueue_transfer` check.
pub(crate) struct Fill {
    buf: std::sync::Weak<vkad_vk::Buffer>,
    len: usize,
    word: u64,
}

impl Fill {
    pub(crate) fn new(buf: &Arc<vkad_vk::Buffer>, len: usize, word: u64) -> Fill {
        Fill {
            buf: Arc::downgrade(buf),
            len,
            word,
        }
    }

    /// Whether the filled buffer still exists (the weak reference keeps its address from
    /// being reused meanwhile).
    pub(crate) fn alive(&self) -> bool {
        self.buf.strong_count() > 0
    }

    /// Whether the filled buffer is one of `arrays`.
    pub(crate) fn in_any(&self, arrays: &[Arc<vkad_vk::Buffer>]) -> bool {
        arrays
            .iter()
            .any(|b| std::ptr::eq(Arc::as_ptr(b), self.buf.as_ptr()))
    }

    /// The word of every element of `a`, where `a` lies in this fill.
    fn of(&self, a: &DArr) -> Option<u64> {
        let inside = a
            .off
            .checked_add(a.len())
            .is_some_and(|end| end <= self.len);
        (std::ptr::eq(Arc::as_ptr(&a.buf), self.buf.as_ptr()) && inside).then_some(self.word)
    }
}

/// A snapshot and the number of launches and transfers recorded ([`Exec`]'s `launches_made`)
/// when its copies last equalled their arrays: taken, or restored. Every device write goes
/// through a launch or a transfer, so while the count is unchanged the copies still equal the
/// arrays.
pub(crate) struct Pristine {
    snapshot: Rc<Snapshot>,
    at: u64,
}

impl Snapshot {
    /// Whether the snapshot holds a copy of `a` (the same view of the same buffer).
    fn holds(&self, a: &DArr) -> bool {
        self.0
            .iter()
            .any(|(x, _)| Arc::ptr_eq(&x.buf, &a.buf) && x.off == a.off && x.shape == a.shape)
    }
}

impl Exec<'_> {
    /// Copies of the arrays behind `names` (arrays, and accumulators by their certificate:
    /// their destination arrays), on the device; `None` where a name is bound to something
    /// else or not bound here, so that what it stands for cannot be restored.
    pub(crate) fn snapshot(
        &mut self,
        names: &[VName],
        loc: &Option<SrcLoc>,
    ) -> E<Option<Snapshot>> {
        let mut arrays: Vec<DArr> = Vec::new();
        for v in names {
            match self.env.get(&v.id) {
                Some(HVal::A(a)) => arrays.push(a.clone()),
                Some(HVal::Acc(k)) => match self.accs.get(*k) {
                    Some(acc) => arrays.extend(acc.arrs.iter().cloned()),
                    None => return Ok(None),
                },
                _ => return Ok(None),
            }
        }
        self.snapshot_arrays(arrays, loc).map(Some)
    }

    /// Copies of `arrays`, on the device.
    pub(crate) fn snapshot_arrays(
        &mut self,
        arrays: Vec<DArr>,
        loc: &Option<SrcLoc>,
    ) -> E<Snapshot> {
        let mut pairs = Vec::with_capacity(arrays.len());
        for a in arrays {
            let saved = match self.fills.iter().find_map(|f| f.of(&a)) {
                Some(word) => Saved::Fill(word),
                None => Saved::Copy(self.copy(&a, loc)?),
            };
            pairs.push((a, saved));
        }
        Ok(Snapshot(pairs))
    }

    /// Marks `snap` as equal to its arrays now (just taken or restored), for
    /// [`Exec::undo_copies`]; returns the mark it replaces.
    pub(crate) fn set_pristine(&mut self, snap: Option<&Rc<Snapshot>>) -> Option<Pristine> {
        let at = self.launches_made;
        std::mem::replace(
            &mut self.pristine,
            snap.map(|s| Pristine {
                snapshot: s.clone(),
                at,
            }),
        )
    }

    /// Puts back a mark that [`Exec::set_pristine`] replaced.
    pub(crate) fn reset_pristine(&mut self, mark: Option<Pristine>) {
        self.pristine = mark;
    }

    /// A snapshot of `arrays` to undo a launch with: the pristine one where it holds all of
    /// them and nothing was launched since it was marked (restoring it puts back only values
    /// the arrays still have, in any array of it that the launch does not change), else new
    /// copies.
    pub(crate) fn undo_copies(&mut self, arrays: &[DArr], loc: &Option<SrcLoc>) -> E<Rc<Snapshot>> {
        if let Some(p) = &self.pristine {
            if p.at == self.launches_made && arrays.iter().all(|a| p.snapshot.holds(a)) {
                return Ok(p.snapshot.clone());
            }
        }
        self.snapshot_arrays(arrays.to_vec(), loc).map(Rc::new)
    }

    /// Copies the snapshot's arrays back into place.
    pub(crate) fn restore(&mut self, snap: &Snapshot, loc: &Option<SrcLoc>) -> E<()> {
        for (a, saved) in &snap.0 {
            let n = a.shape.iter().product();
            // A copy is read element by element; a fill's value is one word for all.
            let (src, value, stride) = match saved {
                Saved::Copy(c) => (Some(&c.buf), 0, 1),
                Saved::Fill(word) => (None, *word, 0),
            };
            self.strided(
                src,
                0,
                value,
                &a.buf,
                a.elem,
                a.off as i64,
                &[(n, stride, 1)],
                loc,
            )?;
        }
        Ok(())
    }
}
