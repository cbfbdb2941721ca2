//! `reduce_by_index`: one kernel per component of the destination tuple (operators that
//! combine each component on their own, as `jvp` makes them), each a thread per value that
//! combines it into its bin with an atomic operation where the device has one for the
//! operator and type, else a compare-and-swap loop (`crate::codegen::hist`); with a plain
//! read-modify-write where the indices are provably distinct (`disjoint`, paper 003).

use super::{hist_operators, PrimKernel, PrimStep};
use crate::codegen::hist;
use crate::error::Error;
use crate::exec::{Exec, HVal, E};
use vkad_core::diag::SrcLoc;
use vkad_core::ir::{self, Operator, SubExp, VName};

impl<'a> Exec<'a> {
    /// `reduce_by_index` of the `w` elements of `vals` at `inds` into `dest` by `op`
    /// (primitive `p`); `disjoint`: the indices are distinct (plain read-modify-writes).
    #[allow(clippy::too_many_arguments)] // the primitive, then its operands
    pub(super) fn hist(
        &mut self,
        p: &'a PrimStep,
        w: &SubExp,
        dest: &'a [VName],
        op: &'a Operator,
        inds: &'a VName,
        vals: &'a [VName],
        disjoint: bool,
        loc: &Option<SrcLoc>,
    ) -> E<Vec<HVal>> {
        let n = self.size(w, loc)?;
        if dest.len() != vals.len() {
            return Err(Error::internal(loc, "hist arity"));
        }
        // Tuples: operators that combine each component on its own (as `jvp` makes)
        // run as one histogram per component.
        let ops = hist_operators(dest.len(), op, loc)?;
        let mut out = Vec::with_capacity(dest.len());
        for (k, op1) in ops.iter().enumerate() {
            out.push(self.hist1(p, k, n, &dest[k], op1, inds, &vals[k], disjoint, loc)?);
        }
        Ok(out)
    }

    /// One component of a histogram (consumes `dest`).
    #[allow(clippy::too_many_arguments)]
    fn hist1(
        &mut self,
        p: &'a PrimStep,
        k: usize,
        n: usize,
        dname: &'a ir::VName,
        op: &ir::Operator,
        inds: &'a ir::VName,
        vname: &'a ir::VName,
        disjoint: bool,
        loc: &Option<SrcLoc>,
    ) -> E<HVal> {
        let d = self.take(dname, loc)?;
        let v = self.arr(vname, loc)?;
        if d.shape.len() != 1 || v.shape.len() != 1 {
            return Err(Error::unsupported(
                "`reduce_by_index` with array-valued bins",
                loc,
            ));
        }
        let d = self.unique(d, loc)?;
        let len = d.shape[0];
        self.set(dname, HVal::A(d.clone()));
        if n > 0 && len > 0 {
            let info = self.ctx.info().clone();
            if d.elem.byte_size() == 8 && !info.int64_atomics {
                return Err(Error::NotSupported {
                    what: format!("64-bit atomics (reduce_by_index on {})", d.elem),
                    loc: loc.clone(),
                    device: Some(info.name.clone()),
                });
            }
            let prog = self.prog;
            let t = d.elem;
            let code =
                self.prim_kernel(p, PrimKernel::Hist(k), &[inds, vname, dname], |_, ht| {
                    hist::hist(
                        prog,
                        op,
                        t,
                        inds,
                        vname,
                        dname,
                        info.float32_atomic_add,
                        info.int64_atomics,
                        disjoint,
                        loc,
                        ht,
                    )
                })?;
            self.launch(
                &code,
                &[n as u64, len as u64],
                &[],
                &[],
                Self::groups_for(n),
                loc,
            )?;
        }
        self.env.insert(dname.id, HVal::Empty);
        Ok(HVal::A(d))
    }
}
