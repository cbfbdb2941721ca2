//! The emulation of lavapipe's loop limiter: an optional observer of the loops and branches
//! [`Gen`] builds.
//!
//! lavapipe (gallivm, Mesa 22.3) silently stops loops once an invocation has decremented its
//! loop limiter [`crate::codegen::gen::LAVAPIPE_LOOP_LIMIT`] times: once at every back edge and once when a loop
//! exits, counting the masked passes it makes through the loops of a branch not taken and,
//! on a loop's exit pass, through the loops of its body. The host splits its own long
//! per-thread loops (`exec::prim::per_segment`), but a user loop or an inner reduction of more than
//! 65535 iterations in one thread would give wrong results there. A kernel that calls
//! [`Gen::count_loops`] in its entry block gets a [`LoopLimit`]: from then on every loop and
//! `if` the builder makes also updates a counter of the limiter's decrements, and a flag that a
//! loop left although its condition last held; the per-thread compiler reports the limit as an
//! error from them (`KCtx::backedge`, `KCtx::exhausted`). Kernels for other devices make no
//! `LoopLimit` and none of this code.

use crate::codegen::gen::{Gen, Ie, ERR_LOOP_LIMIT, R};
use rspirv::spirv::Word;

/// The state of the emulation in one kernel.
pub(crate) struct LoopLimit {
    /// A function variable (`u32`) counting the decrements of the limiter.
    pub count: Word,
    /// A function variable (`bool`) that becomes true when a loop exits although its condition
    /// last held (the limiter cut it short).
    pub cut: Word,
    /// Loops made so far.
    made: u32,
    /// Open `if`s: condition, loops made before the then-branch and before the else-branch.
    ifs: Vec<(Word, u32, Option<u32>)>,
    /// Open loops, innermost last.
    loops: Vec<OpenLoop>,
}

/// A loop being built.
struct OpenLoop {
    /// Loops made before its body.
    before: u32,
    /// The variable holding the last value of the loop's condition.
    cond: Option<Word>,
    /// A function variable (`bool`) set at a back edge where the limiter stops the loop, and
    /// the error site its exit reports that at ([`Gen::limit_hit`]).
    hit: Option<(Word, u32)>,
}

impl LoopLimit {
    /// An `if` on `cond` opens.
    pub fn begin_if(&mut self, cond: Word) {
        self.ifs.push((cond, self.made, None));
    }
    /// The open `if` reaches its else-branch.
    pub fn else_(&mut self) {
        if let Some(top) = self.ifs.last_mut() {
            top.2 = Some(self.made);
        }
    }
    /// A loop opens.
    pub fn begin_loop(&mut self) {
        self.made += 1;
        self.loops.push(OpenLoop {
            before: self.made,
            cond: None,
            hit: None,
        });
    }
}

impl Gen {
    /// Counts loop iterations as lavapipe's loop limiter does from here on (call in the entry
    /// block).
    pub fn count_loops(&mut self) -> R<()> {
        let u32t = self.t_u32();
        let count = self.var(u32t);
        let z = self.c_u32(0);
        self.store(count, z)?;
        let bt = self.t_bool();
        let cut = self.var(bt);
        let f = self.c_bool(false);
        self.store(cut, f)?;
        self.loop_limit = Some(LoopLimit {
            count,
            cut,
            made: 0,
            ifs: vec![],
            loops: vec![],
        });
        Ok(())
    }

    /// Whether a thread of this launch has recorded an error already (an atomic load of word 0
    /// of the launch's status slot): a `bool`. A kernel whose threads loop can stop taking new
    /// points then. On lavapipe, a thread's loops cut by the limiter make the whole launch an
    /// error, and the threads after the first cut one would otherwise each run up to the limit
    /// before it is reported: the one-thread versions the runtime tries first and abandons when
    /// they are cut (GMM's gradient: over a second of its first run) stop after about one
    /// thread per core. The launch fails either way; which error it reports is still the first
    /// one recorded.
    pub(crate) fn launch_failed(&mut self) -> R<Word> {
        let (bt, u32t) = (self.t_bool(), self.t_u32());
        let z = self.status_slot()?;
        let p = self.word_ptr(0, z)?;
        let dev = self.c_u32(rspirv::spirv::Scope::Device as u32);
        let relaxed = self.c_u32(0);
        let flag = self.b.atomic_load(u32t, None, p, dev, relaxed).ie()?;
        let zero = self.c_u32(0);
        self.b.i_not_equal(bt, None, flag, zero).ie()
    }

    /// The loop's condition is `c`: kept for [`Gen::limit_loop_exit`].
    pub(crate) fn limit_loop_cond(&mut self, c: Word) -> R<()> {
        if self.loop_limit.is_none() {
            return Ok(());
        }
        let bt = self.t_bool();
        let v = self.var(bt);
        self.store(v, c)?;
        if let Some(top) = self.loop_limit.as_mut().and_then(|l| l.loops.last_mut()) {
            top.cond = Some(v);
        }
        Ok(())
    }

    /// At a back edge of the innermost open loop: where `bad` holds, the limiter stops the
    /// loop here. Noted in a flag of the loop (one `or` per iteration) and reported at error
    /// site `site` when the loop exits ([`Gen::limit_loop_exit`]), rather than checked with a
    /// branch at every iteration.
    pub(crate) fn limit_hit(&mut self, bad: Word, site: u32) -> R<()> {
        let bt = self.t_bool();
        let hit = match self.loop_limit.as_ref().and_then(|l| l.loops.last()) {
            Some(OpenLoop {
                hit: Some((v, _)), ..
            }) => *v,
            Some(_) => {
                let f = self.c_bool(false);
                let v = self.var_init(bt, f);
                if let Some(top) = self.loop_limit.as_mut().and_then(|l| l.loops.last_mut()) {
                    top.hit = Some((v, site));
                }
                v
            }
            // Not in a loop the builder made: report at once.
            None => return self.fail_if(bad, ERR_LOOP_LIMIT, site),
        };
        let was = self.load(bt, hit)?;
        let now = self.b.logical_or(bt, None, was, bad).ie()?;
        self.store(hit, now)
    }

    /// At a loop's back edge: one decrement.
    pub(crate) fn limit_back_edge(&mut self) -> R<()> {
        self.bump_limit_count()
    }

    /// After a loop: one decrement for the exit; the loop was cut short if its condition last
    /// held (it leaves through its condition, or on lavapipe through the limiter at a back
    /// edge: there are no `break`s); on its exit pass lavapipe runs the body once more, masked:
    /// one pass of each loop in it.
    pub(crate) fn limit_loop_exit(&mut self) -> R<()> {
        let Some(l) = self.loop_limit.as_mut() else {
            return Ok(());
        };
        let open = l.loops.pop();
        let before = open.as_ref().map_or(l.made, |o| o.before);
        let (cond, hit) = open.map_or((None, None), |o| (o.cond, o.hit));
        let (inner, cut) = (l.made - before, l.cut);
        self.bump_limit_count()?;
        if let Some(cv) = cond {
            let bt = self.t_bool();
            let last = self.load(bt, cv)?;
            let was = self.load(bt, cut)?;
            let now = self.b.logical_or(bt, None, was, last).ie()?;
            self.store(cut, now)?;
        }
        if let Some((hv, site)) = hit {
            let bt = self.t_bool();
            let h = self.load(bt, hv)?;
            self.fail_if(h, ERR_LOOP_LIMIT, site)?;
        }
        if inner > 0 {
            let t = self.c_bool(true);
            self.count_masked(t, inner, 0)?;
        }
        Ok(())
    }

    /// After an `if`: the loops of the branch not taken ran one masked pass each.
    pub(crate) fn limit_end_if(&mut self) -> R<()> {
        let Some(l) = self.loop_limit.as_mut() else {
            return Ok(());
        };
        let Some((cond, before, at_else)) = l.ifs.pop() else {
            return Ok(());
        };
        let at_else = at_else.unwrap_or(l.made);
        let (when_true, when_false) = (l.made - at_else, at_else - before);
        self.count_masked(cond, when_true, when_false)
    }

    /// Adds `when_true` decrements where `cond` holds, `when_false` where it does not.
    fn count_masked(&mut self, cond: Word, when_true: u32, when_false: u32) -> R<()> {
        let Some(cv) = self.loop_limit.as_ref().map(|l| l.count) else {
            return Ok(());
        };
        if when_true == 0 && when_false == 0 {
            return Ok(());
        }
        let u32t = self.t_u32();
        let (a, b) = (self.c_u32(when_true), self.c_u32(when_false));
        let add = self.b.select(u32t, None, cond, a, b).ie()?;
        let x = self.load(u32t, cv)?;
        let x = self.b.i_add(u32t, None, x, add).ie()?;
        self.store(cv, x)
    }

    fn bump_limit_count(&mut self) -> R<()> {
        let Some(cv) = self.loop_limit.as_ref().map(|l| l.count) else {
            return Ok(());
        };
        let u32t = self.t_u32();
        let x = self.load(u32t, cv)?;
        let one = self.c_u32(1);
        // Only used on lavapipe, which stops loops long before this could wrap.
        let x1 = self.b.i_add(u32t, None, x, one).ie()?;
        self.store(cv, x1)
    }
}
