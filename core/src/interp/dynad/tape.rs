//! The tape: one node per differentiable scalar computed while tracing, with the linear maps
//! (edges) from its operands' derivatives to its own. Forward accumulation (`jvp`) pushes
//! tangents through the edges in creation order; reverse accumulation (`vjp`) pulls adjoints back
//! in the opposite order.

use super::T;
use crate::ir::{BinOp, ConvOp, MathFn, UnOp};
use crate::prim::{PrimType, PrimValue};
use crate::primops;

/// Node 0 stands for "constant": a value with no derivative.
pub const CONST: u32 = 0;

/// How a node's derivative depends on one operand's.
#[derive(Clone, Debug, PartialEq)]
pub enum Edge {
    /// `ḋ += p · ȯ` (`p` of the node's type, which is also the operand's); the `u8` is which
    /// operand of the node's [`Recipe`] this is (to recompute `p` on traced values).
    Scale(PrimValue, u8),
    /// A conversion: the operand's tangent is converted along (`ḋ += conv(ȯ)`); adjoints are
    /// converted back.
    Conv(ConvOp),
    /// A bit reinterpretation (`to_bits`/`from_bits`): the tangent is reinterpreted; adjoints
    /// are reinterpreted back.
    Bits(MathFn),
}

/// How a node was computed, kept so that nested AD can recompute its partials on traced values.
#[derive(Clone, Debug)]
pub enum Recipe {
    /// An independent input, or a copy of its single operand.
    Leaf,
    Un(UnOp, T),
    Bin(BinOp, T, T),
    /// A math function of its arguments (the node's own value is the result).
    Math(MathFn, Vec<T>),
}

/// One node: its operands with their edges, and how it was computed.
#[derive(Clone, Debug)]
pub struct Node {
    pub ins: Vec<(u32, Edge)>,
    pub recipe: Recipe,
}

/// A tape of nodes (index 0 is the constant node).
#[derive(Debug)]
pub struct Tape {
    nodes: Vec<Node>,
    /// Why the tape could not grow (out of memory, or more nodes than `u32` numbers): set once,
    /// after which nothing more is recorded; the evaluator reports it ([`Tape::failed`]).
    failed: Option<String>,
}

impl Default for Tape {
    fn default() -> Self {
        Tape {
            nodes: vec![Node {
                ins: vec![],
                recipe: Recipe::Leaf,
            }],
            failed: None,
        }
    }
}

/// The tape's memory is checked ([`crate::mem::check_growth`]) every this many nodes against the
/// limit, and every [`AVAILABLE_EVERY`] times that against the memory available.
const CHECK_EVERY: usize = 1 << 16;
const AVAILABLE_EVERY: usize = 16;

/// The bytes one node takes, estimated: the node, its operands (usually one or two edges on the
/// heap) and its tangent or adjoint when the tape is accumulated.
const NODE_BYTES: usize = std::mem::size_of::<Node>() + 96;

/// Tangent addition: `+`, or `||` on bools (as Futhark's `~+~`).
pub fn add_op(t: PrimType) -> BinOp {
    match t {
        PrimType::Bool => BinOp::LogOr,
        t => BinOp::Add(t),
    }
}

/// Tangent multiplication: `*`, or `&&` on bools (as Futhark's `~*~`).
pub fn mul_op(t: PrimType) -> BinOp {
    match t {
        PrimType::Bool => BinOp::LogAnd,
        t => BinOp::Mul(t),
    }
}

fn add(a: PrimValue, b: PrimValue) -> Result<PrimValue, String> {
    primops::eval_binop(add_op(a.prim_type()), a, b)
}

/// The tangent `t` pushed through `e`.
fn push(e: &Edge, t: PrimValue) -> Result<PrimValue, String> {
    match e {
        Edge::Scale(p, _) => primops::eval_binop(mul_op(p.prim_type()), *p, t),
        Edge::Conv(op) => primops::eval_conv(*op, t),
        Edge::Bits(f) => primops::eval_math(*f, &[t]),
    }
}

/// The adjoint `a` pulled back through `e`.
fn pull(e: &Edge, a: PrimValue) -> Result<PrimValue, String> {
    match e {
        Edge::Scale(p, _) => primops::eval_binop(mul_op(p.prim_type()), *p, a),
        Edge::Conv(op) => primops::eval_conv(
            ConvOp {
                from: op.to,
                to: op.from,
            },
            a,
        ),
        Edge::Bits(MathFn::ToBits(t)) => primops::eval_math(MathFn::FromBits(*t), &[a]),
        Edge::Bits(MathFn::FromBits(t)) => primops::eval_math(MathFn::ToBits(*t), &[a]),
        Edge::Bits(f) => Err(format!(
            "internal error: {f:?} is not a bit reinterpretation"
        )),
    }
}

impl Tape {
    /// A fresh independent node (a differentiated input).
    pub fn input(&mut self) -> u32 {
        self.push(vec![], Recipe::Leaf)
    }

    /// A fresh node that is a copy of `n` (its derivative flows on to `n`'s), even when `n` is
    /// [`CONST`]: nested AD differentiates with respect to such copies.
    pub fn copy_of(&mut self, n: u32, one: PrimValue) -> u32 {
        let ins = if n == CONST {
            vec![]
        } else {
            vec![(n, Edge::Scale(one, 0))]
        };
        self.push(ins, Recipe::Leaf)
    }

    fn push(&mut self, ins: Vec<(u32, Edge)>, recipe: Recipe) -> u32 {
        if self.failed.is_some() {
            return CONST;
        }
        let len = self.nodes.len();
        if len.is_multiple_of(CHECK_EVERY) {
            let r = if len > u32::MAX as usize - CHECK_EVERY {
                Err("the AD oracle's tape has more nodes than it can number (2^32)".to_string())
            } else {
                // The next nodes' memory must be available with as much again to spare (the
                // tape stops well before the machine runs out).
                let more = if len.is_multiple_of(CHECK_EVERY * AVAILABLE_EVERY) {
                    2 * CHECK_EVERY * AVAILABLE_EVERY * NODE_BYTES
                } else {
                    0
                };
                crate::mem::check_growth(
                    "the AD oracle's tape",
                    ((len + CHECK_EVERY) * NODE_BYTES) as u128,
                    more as u128,
                )
            };
            if let Err(e) = r {
                self.failed = Some(e);
                return CONST;
            }
        }
        if len == self.nodes.capacity() {
            if let Err(e) = crate::mem::reserve(&mut self.nodes, len) {
                self.failed = Some(e);
                return CONST;
            }
        }
        self.nodes.push(Node { ins, recipe });
        len as u32
    }

    /// Why the tape stopped growing, if it did: then the derivatives would be wrong, and the
    /// evaluation must stop with this error.
    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The id the next node will get.
    pub fn next_id(&self) -> u32 {
        self.nodes.len() as u32
    }

    pub fn node(&self, n: u32) -> &Node {
        &self.nodes[n as usize]
    }

    /// A node depending on the given operands; [`CONST`] when none of them has a derivative.
    pub fn record(&mut self, ins: Vec<(u32, Edge)>, recipe: Recipe) -> u32 {
        let ins: Vec<(u32, Edge)> = ins.into_iter().filter(|(n, _)| *n != CONST).collect();
        if ins.is_empty() {
            return CONST;
        }
        self.push(ins, recipe)
    }

    /// Forward accumulation: the tangent of every node, given those of the inputs.
    pub fn forward(&self, seeds: &[(u32, PrimValue)]) -> Result<Vec<Option<PrimValue>>, String> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut tan: Vec<Option<PrimValue>> = crate::mem::vec_filled(None, self.nodes.len())?;
        for &(n, v) in seeds {
            if n != CONST {
                tan[n as usize] = Some(v);
            }
        }
        for (k, node) in self.nodes.iter().enumerate().skip(1) {
            let mut acc: Option<PrimValue> = None;
            for (p, e) in &node.ins {
                if let Some(t) = tan[*p as usize] {
                    let c = push(e, t)?;
                    acc = Some(match acc {
                        None => c,
                        Some(a) => add(a, c)?,
                    });
                }
            }
            if acc.is_some() {
                tan[k] = acc;
            }
        }
        Ok(tan)
    }

    /// Reverse accumulation: the adjoint of every node, given those of the outputs (an output
    /// node seeded twice gets the sum).
    pub fn reverse(&self, seeds: &[(u32, PrimValue)]) -> Result<Vec<Option<PrimValue>>, String> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut adj: Vec<Option<PrimValue>> = crate::mem::vec_filled(None, self.nodes.len())?;
        for &(n, v) in seeds {
            if n != CONST {
                let slot = &mut adj[n as usize];
                *slot = Some(match *slot {
                    None => v,
                    Some(a) => add(a, v)?,
                });
            }
        }
        for k in (1..self.nodes.len()).rev() {
            let Some(a) = adj[k] else { continue };
            for (p, e) in &self.nodes[k].ins {
                let c = pull(e, a)?;
                let slot = &mut adj[*p as usize];
                *slot = Some(match *slot {
                    None => c,
                    Some(x) => add(x, c)?,
                });
            }
        }
        Ok(adj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::{FloatType, PrimType};

    #[test]
    fn forward_and_reverse_agree_on_a_small_graph() {
        // y = x0·x1 + x0 at (2, 5): ∂y/∂x0 = 6, ∂y/∂x1 = 2.
        let f = PrimType::Float(FloatType::F64);
        let mut t = Tape::default();
        let x0 = t.input();
        let x1 = t.input();
        let m = t.record(
            vec![
                (x0, Edge::Scale(PrimValue::F64(5.0), 0)),
                (x1, Edge::Scale(PrimValue::F64(2.0), 1)),
            ],
            Recipe::Leaf,
        );
        let y = t.record(
            vec![
                (m, Edge::Scale(PrimValue::F64(1.0), 0)),
                (x0, Edge::Scale(PrimValue::F64(1.0), 1)),
            ],
            Recipe::Leaf,
        );
        assert_eq!(
            t.record(
                vec![(CONST, Edge::Scale(PrimValue::F64(3.0), 0))],
                Recipe::Leaf
            ),
            CONST
        );
        let tan = t
            .forward(&[(x0, PrimValue::F64(1.0)), (x1, PrimValue::F64(0.0))])
            .unwrap();
        assert_eq!(tan[y as usize], Some(PrimValue::F64(6.0)));
        let adj = t.reverse(&[(y, PrimValue::F64(1.0))]).unwrap();
        assert_eq!(adj[x0 as usize], Some(PrimValue::F64(6.0)));
        assert_eq!(adj[x1 as usize], Some(PrimValue::F64(2.0)));
        // Conversions carry tangents along and adjoints back.
        let i = PrimType::Int(crate::prim::IntType::I32);
        let c = t.record(
            vec![(x0, Edge::Conv(ConvOp { from: f, to: i }))],
            Recipe::Leaf,
        );
        let adj = t.reverse(&[(c, PrimValue::I32(3))]).unwrap();
        assert_eq!(adj[x0 as usize], Some(PrimValue::F64(3.0)));
    }
}
