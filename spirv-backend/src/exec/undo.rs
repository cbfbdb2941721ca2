//! Undoing work the device cut short: copies of what it may change outside itself, taken
//! before it runs and copied back before it (or another version) runs again. A version of a
//! versioned step on lavapipe, whose loop limiter stops a thread part-way
//! (`runtime::Runtime::seq_loop`), and a `map` chunk that must run again with more scratch
//! memory (`map_scratch`, its accumulators).

use super::{DArr, Exec, HVal, E};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::VName;

/// The arrays a version may change and a copy of each, taken before it ran.
pub(crate) struct Snapshot(Vec<(DArr, DArr)>);

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
            let c = self.copy(&a, loc)?;
            pairs.push((a, c));
        }
        Ok(Snapshot(pairs))
    }

    /// Copies the snapshot's arrays back into place.
    pub(crate) fn restore(&mut self, snap: &Snapshot, loc: &Option<SrcLoc>) -> E<()> {
        for (a, c) in &snap.0 {
            let n = a.shape.iter().product();
            self.strided(
                Some(&c.buf),
                0,
                0,
                &a.buf,
                a.elem,
                a.off as i64,
                &[(n, 1, 1)],
                loc,
            )?;
        }
        Ok(())
    }
}
