//! A scatter: `vals` written at `inds` into `dest` (consumed, copied first where it is not
//! unique), later writes winning as in the kernel IR. Pass 1 claims each written row for its
//! last writer (an atomic maximum of the writer's index into a word per row, cleared first);
//! pass 2 writes the rows whose claim a thread holds.

use super::{PrimKernel, PrimStep};
use crate::codegen::scatter;
use crate::error::Error;
use crate::exec::{natural, Exec, HVal, E};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, SubExp, VName};
use vkad_core::prim::{IntType, PrimType};

impl<'a> Exec<'a> {
    /// The writes of the `w` elements of `vals` at `inds` into `dest` (primitive `p`).
    pub(super) fn scatter(
        &mut self,
        p: &'a PrimStep,
        w: &SubExp,
        dest: &'a [VName],
        inds: &'a [VName],
        vals: &'a [VName],
        loc: &Option<SrcLoc>,
    ) -> E<Vec<HVal>> {
        let n = self.size(w, loc)?;
        let mut ds = Vec::new();
        for dn in dest {
            let d = self.take(dn, loc)?;
            let d = self.unique(d, loc)?;
            self.set(dn, HVal::A(d.clone()));
            ds.push(d);
        }
        let first = ds
            .first()
            .ok_or_else(|| Error::internal(loc, "scatter"))?
            .clone();
        let r = inds.len();
        if r > first.shape.len() {
            return Err(Error::internal(loc, "scatter rank"));
        }
        let nat = natural(&first.shape);
        let rowlen: usize = first.shape[r..].iter().product();
        let rows: usize = first.shape[..r].iter().product();
        if n > 0 && rows > 0 && rowlen > 0 {
            let owner = self.alloc(PrimType::Int(IntType::U32), vec![rows])?;
            self.strided(
                None,
                0,
                0,
                &owner.buf.clone(),
                PrimType::Int(IntType::U32),
                0,
                &[(rows, 0, 1)],
                loc,
            )?;
            let mut lits = vec![n as u64, rowlen as u64];
            for (&n, &s) in first.shape.iter().zip(&nat).take(r) {
                lits.push(n as u64);
                lits.push(s as u64);
            }
            let prog = self.prog;
            let vt: Vec<(ir::VName, PrimType)> = vals
                .iter()
                .zip(&ds)
                .map(|(v, d)| (v.clone(), d.elem))
                .collect();
            let mut sigv: Vec<&ir::VName> = inds.iter().collect();
            sigv.extend(vals.iter());
            sigv.extend(dest.iter());
            let c1 = self.prim_kernel(p, PrimKernel::Scatter { claim: true }, &sigv, |_, ht| {
                scatter::scatter(prog, inds, &vt, dest, true, ht)
            })?;
            self.launch(
                &c1,
                &lits,
                &[],
                std::slice::from_ref(&owner.buf),
                Self::groups_for(n),
                loc,
            )?;
            let c2 =
                self.prim_kernel(p, PrimKernel::Scatter { claim: false }, &sigv, |_, ht| {
                    scatter::scatter(prog, inds, &vt, dest, false, ht)
                })?;
            self.launch(
                &c2,
                &lits,
                &[],
                std::slice::from_ref(&owner.buf),
                Self::groups_for(n),
                loc,
            )?;
        }
        for dn in dest {
            self.env.insert(dn.id, HVal::Empty);
        }
        Ok(ds.into_iter().map(HVal::A).collect())
    }
}
