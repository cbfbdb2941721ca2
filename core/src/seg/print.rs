//! A printer for the kernel IR that people can read, in the style of [`crate::ir::print`] (whose
//! printing of types, operands, SOAC IR statements, lambdas and operators it reuses).
//!
//! Conventions, besides those of [`crate::ir::print`]:
//! - Host code prints as SOAC IR bodies do: `let PAT = EXP` lines, then `in {results}`; its
//!   `if`, `loop` and `with_acc` print as their SOAC IR counterparts, with host bodies.
//! - A threshold prints as `threshold(NAME) SIZE`.
//! - A segmented operation prints on the lines after its `let`, one level deeper: a header
//!   `segmap (gtid_6 < n_0, gtid_7 < m_2) : {f32}` (the space, then the per-thread result types),
//!   one line per operator (`op OPERATOR` for `segred` and `segscan`,
//!   `hist {dest} width W [disjoint] op OPERATOR` for `seghist`), then the thread body in braces, ending in
//!   `return {x_8, write ys_3[i_4] = v_5}`.
//! - The `let` of a segmented operation ends with its source location as a comment
//!   (`-- file.fut:3:7`), since profiles and errors name kernels by location. Other statements
//!   print no location.

use super::*;
use crate::ir::print::{
    braces, comma, pad, write_acc_inputs, write_fun_head, write_loop_head, write_operator,
    write_stm,
};
use std::fmt::{self, Display, Write};

/// The whole program as text, functions separated by blank lines.
pub fn program_to_string(p: &Program) -> String {
    p.to_string()
}

fn write_host_body(out: &mut String, b: &HostBody, level: usize) {
    out.push_str("{\n");
    for s in &b.stms {
        write_host_stm(out, s, level + 1);
        out.push('\n');
    }
    pad(out, level + 1);
    let _ = writeln!(out, "in {}", braces(&b.result));
    pad(out, level);
    out.push('}');
}

fn write_host_stm(out: &mut String, s: &HostStm, level: usize) {
    pad(out, level);
    for a in &s.attrs.0 {
        let _ = write!(out, "#[{a}] ");
    }
    let _ = write!(out, "let {} =", s.pat);
    if let HostExp::Seg(op) = &s.exp {
        if let Some(loc) = &s.loc {
            let _ = write!(out, " -- {loc}");
        }
        out.push('\n');
        pad(out, level + 1);
        write_segop(out, op, level + 1);
    } else {
        out.push(' ');
        write_host_exp(out, &s.exp, level);
    }
}

fn write_host_exp(out: &mut String, e: &HostExp, level: usize) {
    match e {
        HostExp::Plain(e) => {
            let _ = write!(out, "{e}");
        }
        HostExp::If {
            cond,
            then_b,
            else_b,
            ret,
            nest_versions,
        } => {
            let versions = if *nest_versions { "versions " } else { "" };
            let _ = writeln!(out, "if {versions}{cond} : {}", braces(ret));
            pad(out, level + 1);
            out.push_str("then ");
            write_host_body(out, then_b, level + 1);
            out.push('\n');
            pad(out, level + 1);
            out.push_str("else ");
            write_host_body(out, else_b, level + 1);
        }
        HostExp::VersionedLoop {
            par_cond,
            par,
            seq,
            chunk,
            ret,
        } => {
            let _ = writeln!(out, "versioned_loop {par_cond} : {}", braces(ret));
            pad(out, level + 1);
            out.push_str("par ");
            write_host_body(out, par, level + 1);
            out.push('\n');
            pad(out, level + 1);
            out.push_str("seq ");
            if let Some(c) = chunk {
                let _ = write!(out, "chunks({}: i64 of {}) ", c.param.name, c.bound);
            }
            write_host_body(out, seq, level + 1);
        }
        HostExp::Loop { params, form, body } => {
            write_loop_head(out, params, form);
            write_host_body(out, body, level);
        }
        HostExp::WithAcc { inputs, lam } => write_with_acc(out, inputs, lam, level),
        HostExp::Threshold { size, name, kind } => {
            let k = match kind {
                ThresholdKind::Nest => "threshold",
                ThresholdKind::Loop => "loop_threshold",
                ThresholdKind::AccRed => "acc_threshold",
                ThresholdKind::ContendedNest => "contended_threshold",
                ThresholdKind::HostMap => "host_map_threshold",
                ThresholdKind::SegThreads => "seg_threads_threshold",
                ThresholdKind::SmallNest => "small_nest_threshold",
            };
            let _ = write!(out, "{k}({name}) {size}");
        }
        HostExp::Seg(op) => write_segop(out, op, level),
    }
}

fn write_with_acc(out: &mut String, inputs: &[AccInput], lam: &HostLambda, level: usize) {
    out.push_str("with_acc(");
    write_acc_inputs(out, inputs, level);
    out.push_str(", \\");
    for p in &lam.params {
        let _ = write!(out, "({p}) ");
    }
    let _ = write!(out, ": {} -> ", braces(&lam.ret));
    write_host_body(out, &lam.body, level);
    out.push(')');
}

/// A segmented operation whose first line is already indented to `level`.
fn write_segop(out: &mut String, op: &SegOp, level: usize) {
    let _ = write!(out, "{} {} : {}", op.kind.name(), op.space, braces(&op.ret));
    match &op.kind {
        SegKind::Map => {}
        SegKind::Red(ops) | SegKind::Scan(ops) => {
            for o in ops {
                out.push('\n');
                pad(out, level + 1);
                out.push_str("op ");
                write_operator(out, o, level + 1);
            }
        }
        SegKind::Hist(hs) => {
            for h in hs {
                out.push('\n');
                pad(out, level + 1);
                let _ = write!(out, "hist {} width {} ", braces(&h.dest), h.width);
                if h.disjoint {
                    out.push_str("disjoint ");
                }
                out.push_str("op ");
                write_operator(out, &h.op, level + 1);
            }
        }
    }
    if matches!(op.kind, SegKind::Map) {
        out.push(' ');
    } else {
        out.push('\n');
        pad(out, level);
    }
    write_kernel_body(out, &op.body, level);
}

fn write_kernel_body(out: &mut String, b: &KernelBody, level: usize) {
    out.push_str("{\n");
    for s in &b.stms {
        write_stm(out, s, level + 1);
        out.push('\n');
    }
    pad(out, level + 1);
    let _ = writeln!(out, "return {}", braces(&b.results));
    pad(out, level);
    out.push('}');
}

fn write_fun(out: &mut String, fd: &FunDef) {
    write_fun_head(
        out,
        &fd.attrs,
        &fd.name,
        &fd.entry,
        &fd.size_params,
        &fd.params,
        &fd.ret,
    );
    write_host_body(out, &fd.body, 0);
}

/// `(gtid_6 < n_0, gtid_7 < m_2)`.
impl Display for SegSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self
            .dims
            .iter()
            .map(|(i, d)| format!("{i} < {d}"))
            .collect();
        write!(f, "({})", dims.join(", "))
    }
}

/// `x_8` or `write ys_3[i_4] = v_5`.
impl Display for KernelResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelResult::Returns(s) => write!(f, "{s}"),
            KernelResult::Write { dest, idx, val } => {
                write!(f, "write {dest}[{}] = {val}", comma(idx))
            }
        }
    }
}

/// Implements `Display` by one of the `write_*` functions above, at indentation level 0.
macro_rules! display_by {
    ($t:ty, $write:ident) => {
        impl Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut s = String::new();
                $write(&mut s, self, 0);
                f.write_str(&s)
            }
        }
    };
}

display_by!(HostBody, write_host_body);
display_by!(HostStm, write_host_stm);
display_by!(HostExp, write_host_exp);
display_by!(SegOp, write_segop);
display_by!(KernelBody, write_kernel_body);

impl Display for FunDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_fun(&mut s, self);
        f.write_str(&s)
    }
}

impl Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, fd) in self.funs.iter().enumerate() {
            if k > 0 {
                f.write_str("\n\n")?;
            }
            write!(f, "{fd}")?;
        }
        if !self.funs.is_empty() {
            f.write_str("\n")?;
        }
        Ok(())
    }
}
