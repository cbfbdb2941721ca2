//! The SPIR-V module builder every kernel is made with: types, cached constants, storage-buffer
//! bindings, the argument buffer, the status (error) buffer, structured control flow helpers and
//! function-local variables.
//!
//! Conventions of every kernel:
//! - binding 0: the status buffer (`u32` words), in slots of 4 words; the push-constant block
//!   (`u32`, 4 bytes) names the launch's slot `s`: word `4s` is a flag set (by
//!   compare-exchange, first error wins) to 1 when a thread hits a runtime error, word `4s + 1`
//!   the error code, word `4s + 2` the id of the failing check (an index into the kernel's
//!   [`ErrorSite`] table). Launches submitted together get different slots;
//! - binding 1: the argument buffer (`u64` words): scalars and array offsets/shapes;
//! - arrays (binding indices 2..): element storage: every type of at most 32 bits is one `u32`
//!   word (bool as 0/1, 8/16-bit integers sign- or zero-extended, `f16` as the bits of the
//!   `f32` with the same value); 64-bit types are one `u64` word.
//!
//! How a kernel reaches its arrays ([`Addressing`], chosen per thread with [`with_addressing`]
//! by whoever builds the kernel; the executor picks [`Addressing::Addresses`] when the device
//! has `bufferDeviceAddress`):
//! - [`Addressing::Descriptors`]: array `i` is storage-buffer binding `i` of descriptor set 0;
//!   the argument words are `args[0..]`. Limited by `maxStorageBufferRange` (the largest
//!   array) and `maxPerStageDescriptorStorageBuffers` (arrays per kernel).
//! - [`Addressing::Addresses`]: only bindings 0 and 1 exist; argument word `j < A` (A = the
//!   number of arrays) is the device address of array binding `2 + j`, and the scalar
//!   arguments follow (`arg(k)` reads word `A + k`). Arrays are reached through
//!   `PhysicalStorageBuffer64` pointers (`SPV_KHR_physical_storage_buffer`), with no limit on
//!   their number or size. Each array's address is loaded once, at the top of `main`.
//!
//! Either way [`Gen::binding`] returns the array's binding index and [`Gen::word_ptr`],
//! [`Gen::load_word`], [`Gen::store_word`], [`Gen::load_elem`] and [`Gen::store_elem`] take it.
//! A pointer from [`Gen::word_ptr`] may be used for atomics directly; plain loads and stores
//! should go through [`Gen::load_word`] / [`Gen::store_word`] (or [`Gen::load_ptr`] /
//! [`Gen::store_ptr`]), which add the `Aligned` operand that physical pointers need.
//!
//! Registers: `bool` is `OpTypeBool`; integers of at most 32 bits are `u32` values kept in
//! canonical form (sign-extended for signed types, zero-extended for unsigned ones); 64-bit
//! integers are `u64`; `f16` is an `f32` always rounded to `f16` precision; `f32`, `f64` native.

use rspirv::dr::{Builder, Instruction, Operand};
use rspirv::spirv::{
    self, AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, MemoryModel, Op, SelectionControl, StorageClass, Word,
};
use std::cell::Cell;
use std::collections::HashMap;
use vkad_core::diag::SrcLoc;
use vkad_core::prim::{FloatType, IntType, PrimType};

/// Workgroup size of every kernel.
pub const WG: u32 = 256;

/// The result of building a kernel: its errors are [`crate::error::Error`]s (constructs the
/// backend cannot compile, or internal errors where the builder was misused).
pub type R<T> = crate::error::Result<T>;

pub(crate) trait Ie<T> {
    fn ie(self) -> R<T>;
}

impl<T> Ie<T> for Result<T, rspirv::dr::Error> {
    fn ie(self) -> R<T> {
        self.map_err(crate::error::Error::from)
    }
}

/// How the kernels built on this thread reach their arrays (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Addressing {
    /// One storage-buffer descriptor per array.
    #[default]
    Descriptors,
    /// Device addresses in the argument buffer, `PhysicalStorageBuffer64` pointers.
    Addresses,
}

thread_local! {
    static ADDRESSING: Cell<Addressing> = const { Cell::new(Addressing::Descriptors) };
}

/// Runs `f` with kernels built by [`Gen::new`] on this thread using `mode` (restored after).
pub fn with_addressing<T>(mode: Addressing, f: impl FnOnce() -> T) -> T {
    struct Restore(Addressing);
    impl Drop for Restore {
        fn drop(&mut self) {
            ADDRESSING.with(|a| a.set(self.0));
        }
    }
    let _restore = Restore(ADDRESSING.with(|a| a.replace(mode)));
    f()
}

/// The mode [`Gen::new`] uses on this thread now.
pub fn addressing() -> Addressing {
    ADDRESSING.with(|a| a.get())
}

/// Where a binding's words are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingLoc {
    /// A storage-buffer variable (descriptor set 0).
    Var(Word),
    /// A device address: the id of the `u64` value loaded at the top of `main`.
    Addr(Word),
}

/// Error codes a kernel writes to the status buffer.
pub const ERR_BOUNDS: u32 = 1;
pub const ERR_DIVZERO: u32 = 2;
pub const ERR_ASSERT: u32 = 3;
pub const ERR_NEGEXP: u32 = 4;
/// A thread ran more loop iterations than lavapipe allows (see [`Gen::begin_loop`]).
pub const ERR_LOOP_LIMIT: u32 = 5;
/// lavapipe's limit on the loop iterations of one invocation.
pub const LAVAPIPE_LOOP_LIMIT: u32 = 65535;

pub(crate) use crate::codegen::loop_limit::LoopLimit;

/// Where a kernel's runtime check comes from: the location and the message to report, whose
/// `{}`s the first `args` `i64` values of the failing thread's status slot fill in (an
/// assertion naming the sizes it compares, [`vkad_core::ir::assert_message`]).
#[derive(Clone, Debug)]
pub struct ErrorSite {
    pub loc: Option<SrcLoc>,
    pub msg: String,
    pub args: usize,
}

/// Words (`u32`) per status slot: the failure flag, the error code, the error site, one
/// spare word, then [`MAX_ERROR_ARGS`] `i64` message arguments of two words each.
pub const STATUS_SLOT_WORDS: usize = 8;
/// The most message arguments a kernel reports with an error.
pub const MAX_ERROR_ARGS: usize = 2;

/// The error a kernel reported in its status slot: `code` (one of the `ERR_` constants) at
/// `site` of its error table (`loc`: the launch's location, for a site the table lacks), on
/// the device named `device`. lavapipe's loop limit is a limit of the device, not a failure
/// of the program.
pub fn kernel_error(
    code: u32,
    site: Option<&ErrorSite>,
    loc: &Option<SrcLoc>,
    device: &str,
    args: &[i64],
) -> crate::error::Error {
    use crate::error::{Error, RuntimeKind};
    let (loc, msg) = match site {
        Some(s) => {
            let args: Vec<String> = args.iter().take(s.args).map(|a| a.to_string()).collect();
            (&s.loc, vkad_core::ir::assert_message(&s.msg, &args))
        }
        None => (loc, "kernel error".to_string()),
    };
    let kind = match code {
        ERR_LOOP_LIMIT => {
            return Error::LoopLimit {
                device: device.to_string(),
                loc: loc.clone(),
            }
        }
        ERR_BOUNDS => RuntimeKind::Bounds,
        ERR_DIVZERO => RuntimeKind::Division,
        ERR_ASSERT => RuntimeKind::Assert,
        ERR_NEGEXP => RuntimeKind::NegativeExponent,
        _ => return Error::internal(loc, format!("kernel error code {code}: {msg}")),
    };
    Error::runtime(kind, loc, msg)
}

/// The storage word of a buffer binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WordKind {
    U32,
    U64,
    /// `f32` elements (for float atomics).
    F32,
}

pub fn word_kind(t: PrimType) -> WordKind {
    if t.byte_size() == 8 {
        WordKind::U64
    } else {
        WordKind::U32
    }
}

pub struct Gen {
    pub b: Builder,
    pub glsl: Word,
    consts: HashMap<(Word, u64), Word>,
    block_types: HashMap<WordKind, Word>,
    fn_vars: Vec<Instruction>,
    /// Instructions placed at the top of `main` after the variables (array address loads).
    prologue: Vec<Instruction>,
    /// Per float register type, the `+0.0` that drivers cannot fold (see
    /// [`crate::codegen::ieee`]), computed in the prologue.
    pub(crate) opaque_zeros: HashMap<Word, Word>,
    /// Per binding: where its words are, and its word kind.
    pub bindings: Vec<(BindingLoc, WordKind)>,
    /// The addressing mode of this kernel.
    pub addressing: Addressing,
    /// `Addresses` mode: the constant (defined by [`Gen::finish`]) holding the number of array
    /// bindings, i.e. the first argument word of the scalar arguments.
    arg_base: Word,
    gid_var: Word,
    lid_var: Word,
    wg_var: Word,
    nwg_var: Word,
    /// The push-constant block `{ u32 status_slot }`: which 8-word slot of the status buffer
    /// this launch reports errors in.
    push_var: Word,
    pub errors: Vec<ErrorSite>,
    pub uses_f64: bool,
    pub uses_float_atomic: bool,
    interface: Vec<Word>,
    fun: Word,
    /// The emulation of lavapipe's loop limiter, where [`Gen::count_loops`] asked for it: an
    /// optional observer of the control flow the builder makes ([`LoopLimit`]).
    pub(crate) loop_limit: Option<LoopLimit>,
    /// The workgroup size the module declares (`LocalSize`): [`WG`] unless a kernel asks for
    /// another (the group kernels of module [`crate::codegen::group`]).
    pub local_size: u32,
    /// The scope of [`Gen::buffer_barrier`]: the workgroup, or the subgroup in a group kernel
    /// whose workgroup is one subgroup (module [`crate::codegen::group`]).
    pub(crate) barrier_scope: spirv::Scope,
    /// The thread's first error, kept by [`Gen::fail_if_args`] and reported by [`Gen::finish`];
    /// made by the first check.
    first_error: Option<FirstError>,
}

/// Function variables holding the first error a thread found: its code (0 while there is
/// none), its site and its message arguments.
///
/// A check records its error here with `select`s, without a branch; the kernel's end reports
/// the record once, with one atomic on the status slot. Reporting at every check instead put
/// a branch holding an atomic and its stores at each check: a kernel with a hundred checked
/// loops (lavapipe's loop limit is checked at every back edge) took lavapipe twice as long to
/// compile, because llvmpipe runs each atomic lane by lane inside the SIMD code of its branch.
/// A thread goes on after a failed check either way (a failed bounds check reads element 0),
/// and the host reads the status only after the launch, so what it reads is unchanged except
/// which of several failing threads wins, which was already a race.
#[derive(Clone, Copy)]
struct FirstError {
    code: Word,
    site: Word,
    args: [Word; MAX_ERROR_ARGS],
}

impl Gen {
    /// A new kernel module with the status and argument buffers bound; the `main` function is
    /// open with its first block. Arrays are reached as [`addressing`] says.
    pub fn new() -> R<Gen> {
        let addressing = addressing();
        let mut b = Builder::new();
        b.set_version(1, 3);
        b.capability(Capability::Shader);
        b.capability(Capability::Int64);
        let glsl = b.ext_inst_import("GLSL.std.450");
        if addressing == Addressing::Addresses {
            b.capability(Capability::PhysicalStorageBufferAddresses);
            b.extension("SPV_KHR_physical_storage_buffer");
            b.memory_model(
                AddressingModel::PhysicalStorageBuffer64,
                MemoryModel::GLSL450,
            );
        } else {
            b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
        }
        let arg_base = b.id();
        let mut g = Gen {
            b,
            glsl,
            consts: HashMap::new(),
            block_types: HashMap::new(),
            fn_vars: Vec::new(),
            prologue: Vec::new(),
            opaque_zeros: HashMap::new(),
            bindings: Vec::new(),
            addressing,
            arg_base,
            gid_var: 0,
            lid_var: 0,
            wg_var: 0,
            nwg_var: 0,
            push_var: 0,
            errors: Vec::new(),
            uses_f64: false,
            uses_float_atomic: false,
            interface: Vec::new(),
            fun: 0,
            loop_limit: None,
            local_size: WG,
            barrier_scope: spirv::Scope::Workgroup,
            first_error: None,
        };
        let u32t = g.t_u32();
        let v3 = g.b.type_vector(u32t, 3);
        let pv3 = g.b.type_pointer(None, StorageClass::Input, v3);
        for (k, bi) in [
            BuiltIn::GlobalInvocationId,
            BuiltIn::LocalInvocationId,
            BuiltIn::WorkgroupId,
            BuiltIn::NumWorkgroups,
        ]
        .into_iter()
        .enumerate()
        {
            let v = g.b.variable(pv3, None, StorageClass::Input, None);
            g.b.decorate(v, Decoration::BuiltIn, [Operand::BuiltIn(bi)]);
            g.interface.push(v);
            match k {
                0 => g.gid_var = v,
                1 => g.lid_var = v,
                2 => g.wg_var = v,
                _ => g.nwg_var = v,
            }
        }
        let pst = g.b.type_struct([u32t]);
        g.b.decorate(pst, Decoration::Block, []);
        g.b.member_decorate(pst, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        let ppst = g.b.type_pointer(None, StorageClass::PushConstant, pst);
        g.push_var = g.global_var(ppst, StorageClass::PushConstant);
        g.binding(WordKind::U32);
        g.binding(WordKind::U64);
        let void = g.b.type_void();
        let fnty = g.b.type_function(void, vec![]);
        g.fun =
            g.b.begin_function(void, None, FunctionControl::NONE, fnty)
                .ie()?;
        g.b.begin_block(None).ie()?;
        Ok(g)
    }

    // ----- types and constants -------------------------------------------------------------

    pub fn t_bool(&mut self) -> Word {
        self.b.type_bool()
    }
    pub fn t_u32(&mut self) -> Word {
        self.b.type_int(32, 0)
    }
    pub fn t_u64(&mut self) -> Word {
        self.b.type_int(64, 0)
    }
    pub fn t_f32(&mut self) -> Word {
        self.b.type_float(32, None)
    }
    pub fn t_f64(&mut self) -> Word {
        if !self.uses_f64 {
            self.uses_f64 = true;
            self.b.capability(Capability::Float64);
        }
        self.b.type_float(64, None)
    }
    /// The register type of a primitive type.
    pub fn reg_ty(&mut self, t: PrimType) -> Word {
        match t {
            PrimType::Bool => self.t_bool(),
            PrimType::Int(i) if i.bits() == 64 => self.t_u64(),
            PrimType::Int(_) => self.t_u32(),
            PrimType::Float(FloatType::F64) => self.t_f64(),
            PrimType::Float(_) => self.t_f32(),
        }
    }
    pub fn word_ty(&mut self, k: WordKind) -> Word {
        match k {
            WordKind::U32 => self.t_u32(),
            WordKind::U64 => self.t_u64(),
            WordKind::F32 => self.t_f32(),
        }
    }

    fn constant(&mut self, ty: Word, bits: u64, wide: bool) -> Word {
        if let Some(&c) = self.consts.get(&(ty, bits)) {
            return c;
        }
        let c = if wide {
            self.b.constant_bit64(ty, bits)
        } else {
            self.b.constant_bit32(ty, bits as u32)
        };
        self.consts.insert((ty, bits), c);
        c
    }
    pub fn c_u32(&mut self, v: u32) -> Word {
        let t = self.t_u32();
        self.constant(t, v as u64, false)
    }
    pub fn c_u64(&mut self, v: u64) -> Word {
        let t = self.t_u64();
        self.constant(t, v, true)
    }
    pub fn c_f32(&mut self, v: f32) -> Word {
        let t = self.t_f32();
        self.constant(t, v.to_bits() as u64, false)
    }
    pub fn c_f64(&mut self, v: f64) -> Word {
        let t = self.t_f64();
        self.constant(t, v.to_bits(), true)
    }
    pub fn c_bool(&mut self, v: bool) -> Word {
        let t = self.t_bool();
        let key = (t, v as u64);
        if let Some(&c) = self.consts.get(&key) {
            return c;
        }
        let c = if v {
            self.b.constant_true(t)
        } else {
            self.b.constant_false(t)
        };
        self.consts.insert(key, c);
        c
    }
    /// A float constant of register type `t` (f16 and f32 registers are f32).
    pub fn c_float(&mut self, t: FloatType, v: f64) -> Word {
        match t {
            FloatType::F64 => self.c_f64(v),
            _ => self.c_f32(v as f32),
        }
    }
    /// An integer constant of type `t`'s register type, from its value as i128 (canonicalised).
    pub fn c_int(&mut self, t: IntType, v: i128) -> Word {
        if t.bits() == 64 {
            self.c_u64(v as u64)
        } else {
            let bits = t.bits();
            let mask: u64 = (1u64 << bits) - 1;
            let low = (v as u64) & mask;
            let canon = if t.signed() && bits < 32 && (low >> (bits - 1)) & 1 == 1 {
                (low | !mask) as u32
            } else {
                low as u32
            };
            self.c_u32(canon)
        }
    }

    // ----- bindings --------------------------------------------------------------------------

    fn block_type(&mut self, k: WordKind) -> Word {
        if let Some(&t) = self.block_types.get(&k) {
            return t;
        }
        let wt = self.word_ty(k);
        let ra = self.b.type_runtime_array(wt);
        let stride = if k == WordKind::U64 { 8 } else { 4 };
        self.b
            .decorate(ra, Decoration::ArrayStride, [Operand::LiteralBit32(stride)]);
        let st = self.b.type_struct([ra]);
        self.b.decorate(st, Decoration::Block, []);
        self.b
            .member_decorate(st, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        self.block_types.insert(k, st);
        st
    }

    /// Declares the next binding (an array of words of kind `k`); returns its index, which
    /// [`Gen::word_ptr`] and the loads and stores take. Bindings 0 and 1 (status, arguments)
    /// are storage-buffer descriptors; the others are descriptors too, or device addresses
    /// (see [`Addressing`]).
    pub fn binding(&mut self, k: WordKind) -> u32 {
        let i = self.bindings.len() as u32;
        if i >= 2 && self.addressing == Addressing::Addresses {
            // The address is argument word i - 2: loaded once, at the top of `main`.
            let u64t = self.t_u64();
            let pt = self.b.type_pointer(None, StorageClass::StorageBuffer, u64t);
            let (z, at) = (self.c_u32(0), self.c_u32(i - 2));
            let args = match self.bindings[1].0 {
                BindingLoc::Var(v) => v,
                BindingLoc::Addr(v) => v,
            };
            let (p, a) = (self.b.id(), self.b.id());
            self.prologue.push(Instruction::new(
                Op::AccessChain,
                Some(pt),
                Some(p),
                vec![Operand::IdRef(args), Operand::IdRef(z), Operand::IdRef(at)],
            ));
            self.prologue.push(Instruction::new(
                Op::Load,
                Some(u64t),
                Some(a),
                vec![Operand::IdRef(p)],
            ));
            self.bindings.push((BindingLoc::Addr(a), k));
            return i;
        }
        let st = self.block_type(k);
        let p = self.b.type_pointer(None, StorageClass::StorageBuffer, st);
        let v = self.global_var(p, StorageClass::StorageBuffer);
        self.b
            .decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b
            .decorate(v, Decoration::Binding, [Operand::LiteralBit32(i)]);
        self.bindings.push((BindingLoc::Var(v), k));
        i
    }

    /// The byte size of a word of kind `k`.
    fn word_bytes(k: WordKind) -> u32 {
        if k == WordKind::U64 {
            8
        } else {
            4
        }
    }

    /// A pointer to word `idx` (a u64 value) of binding `bi`: a `StorageBuffer` pointer, or a
    /// `PhysicalStorageBuffer` one (see [`Addressing`]); use it for atomics, and
    /// [`Gen::load_ptr`] / [`Gen::store_ptr`] for plain accesses.
    pub fn word_ptr(&mut self, bi: u32, idx: Word) -> R<Word> {
        let (loc, k) = self.bindings[bi as usize];
        let wt = self.word_ty(k);
        match loc {
            BindingLoc::Var(var) => {
                let p = self.b.type_pointer(None, StorageClass::StorageBuffer, wt);
                let u32t = self.t_u32();
                let idx32 = self.b.u_convert(u32t, None, idx).ie()?;
                let z = self.c_u32(0);
                self.b.access_chain(p, None, var, [z, idx32]).ie()
            }
            BindingLoc::Addr(base) => {
                let u64t = self.t_u64();
                let sh = self.c_u64(Self::word_bytes(k).trailing_zeros() as u64);
                let off = self.b.shift_left_logical(u64t, None, idx, sh).ie()?;
                let a = self.b.i_add(u64t, None, base, off).ie()?;
                let p = self
                    .b
                    .type_pointer(None, StorageClass::PhysicalStorageBuffer, wt);
                self.b.convert_u_to_ptr(p, None, a).ie()
            }
        }
    }

    /// Loads a word of binding `bi` through a pointer from [`Gen::word_ptr`].
    pub fn load_ptr(&mut self, bi: u32, p: Word) -> R<Word> {
        let (loc, k) = self.bindings[bi as usize];
        let wt = self.word_ty(k);
        match loc {
            BindingLoc::Var(_) => self.b.load(wt, None, p, None, []).ie(),
            BindingLoc::Addr(_) => self
                .b
                .load(
                    wt,
                    None,
                    p,
                    Some(spirv::MemoryAccess::ALIGNED),
                    [Operand::LiteralBit32(Self::word_bytes(k))],
                )
                .ie(),
        }
    }

    /// Stores a word of binding `bi` through a pointer from [`Gen::word_ptr`].
    pub fn store_ptr(&mut self, bi: u32, p: Word, w: Word) -> R<()> {
        let (loc, k) = self.bindings[bi as usize];
        match loc {
            BindingLoc::Var(_) => self.b.store(p, w, None, []).ie(),
            BindingLoc::Addr(_) => self
                .b
                .store(
                    p,
                    w,
                    Some(spirv::MemoryAccess::ALIGNED),
                    [Operand::LiteralBit32(Self::word_bytes(k))],
                )
                .ie(),
        }
    }

    pub fn load_word(&mut self, bi: u32, idx: Word) -> R<Word> {
        let p = self.word_ptr(bi, idx)?;
        self.load_ptr(bi, p)
    }

    pub fn store_word(&mut self, bi: u32, idx: Word, w: Word) -> R<()> {
        let p = self.word_ptr(bi, idx)?;
        self.store_ptr(bi, p, w)
    }

    /// A storage word to a register of type `t`.
    pub fn word_to_reg(&mut self, t: PrimType, w: Word) -> R<Word> {
        Ok(match t {
            PrimType::Bool => {
                let bt = self.t_bool();
                let z = self.c_u32(0);
                self.b.i_not_equal(bt, None, w, z).ie()?
            }
            PrimType::Int(_) => w,
            PrimType::Float(FloatType::F64) => {
                let ft = self.t_f64();
                self.b.bitcast(ft, None, w).ie()?
            }
            PrimType::Float(_) => {
                let ft = self.t_f32();
                self.b.bitcast(ft, None, w).ie()?
            }
        })
    }

    /// A register of type `t` to its storage word.
    pub fn reg_to_word(&mut self, t: PrimType, r: Word) -> R<Word> {
        Ok(match t {
            PrimType::Bool => {
                let u = self.t_u32();
                let (one, zero) = (self.c_u32(1), self.c_u32(0));
                self.b.select(u, None, r, one, zero).ie()?
            }
            PrimType::Int(_) => r,
            PrimType::Float(FloatType::F64) => {
                let u = self.t_u64();
                self.b.bitcast(u, None, r).ie()?
            }
            PrimType::Float(_) => {
                let u = self.t_u32();
                self.b.bitcast(u, None, r).ie()?
            }
        })
    }

    pub fn load_elem(&mut self, bi: u32, t: PrimType, idx: Word) -> R<Word> {
        let w = self.load_word(bi, idx)?;
        self.word_to_reg(t, w)
    }

    pub fn store_elem(&mut self, bi: u32, t: PrimType, idx: Word, r: Word) -> R<()> {
        let w = self.reg_to_word(t, r)?;
        self.store_word(bi, idx, w)
    }

    /// Argument word `k` as a register of type `t` (the host encodes scalars as u64 words:
    /// integers sign- or zero-extended, f32/f16 as the f32 bits, bool 0/1).
    pub fn arg(&mut self, k: u32, t: PrimType) -> R<Word> {
        let idx = match self.addressing {
            Addressing::Descriptors => self.c_u64(k as u64),
            Addressing::Addresses => {
                // After the array addresses: word `arg_base + k`.
                let u64t = self.t_u64();
                let kk = self.c_u64(k as u64);
                self.b.i_add(u64t, None, self.arg_base, kk).ie()?
            }
        };
        let w = self.load_word(1, idx)?;
        let u32t = self.t_u32();
        Ok(match t {
            PrimType::Bool => {
                let bt = self.t_bool();
                let z = self.c_u64(0);
                self.b.i_not_equal(bt, None, w, z).ie()?
            }
            PrimType::Int(i) if i.bits() == 64 => w,
            PrimType::Int(_) => self.b.u_convert(u32t, None, w).ie()?,
            PrimType::Float(FloatType::F64) => {
                let ft = self.t_f64();
                self.b.bitcast(ft, None, w).ie()?
            }
            PrimType::Float(_) => {
                let ft = self.t_f32();
                let lo = self.b.u_convert(u32t, None, w).ie()?;
                self.b.bitcast(ft, None, lo).ie()?
            }
        })
    }

    // ----- builtins -------------------------------------------------------------------------

    fn builtin_x(&mut self, var: Word, comp: u32) -> R<Word> {
        let u32t = self.t_u32();
        let v3 = self.b.type_vector(u32t, 3);
        let v = self.b.load(v3, None, var, None, []).ie()?;
        self.b.composite_extract(u32t, None, v, [comp]).ie()
    }
    pub fn local_id(&mut self) -> R<Word> {
        self.builtin_x(self.lid_var, 0)
    }
    pub fn group_id(&mut self) -> R<Word> {
        self.builtin_x(self.wg_var, 0)
    }
    pub fn num_groups(&mut self) -> R<Word> {
        self.builtin_x(self.nwg_var, 0)
    }
    pub fn global_id(&mut self) -> R<Word> {
        self.builtin_x(self.gid_var, 0)
    }
    /// Appends `(result type, opcode, operands)` to the prologue (the top of `main`, which
    /// dominates every block); returns its result id.
    pub(crate) fn prologue_value(&mut self, ty: Word, op: Op, operands: Vec<Operand>) -> Word {
        let id = self.b.id();
        self.prologue
            .push(Instruction::new(op, Some(ty), Some(id), operands));
        id
    }
    /// The `NumWorkgroups` variable.
    pub(crate) fn num_groups_var(&self) -> Word {
        self.nwg_var
    }

    // ----- variables and control flow -------------------------------------------------------

    /// A module-level variable (even while a function is being built).
    fn global_var(&mut self, ptr: Word, sc: StorageClass) -> Word {
        let id = self.b.id();
        self.b
            .module_mut()
            .types_global_values
            .push(Instruction::new(
                Op::Variable,
                Some(ptr),
                Some(id),
                vec![Operand::StorageClass(sc)],
            ));
        id
    }

    /// A function-local variable of type `ty` holding the constant `init` on entry.
    pub fn var_init(&mut self, ty: Word, init: Word) -> Word {
        self.fn_var(ty, Some(init))
    }

    /// A function-local variable of type `ty` (declared in the first block).
    pub fn var(&mut self, ty: Word) -> Word {
        self.fn_var(ty, None)
    }

    /// `OpVariable` of storage class `Function`, with the constant initializer `init`.
    fn fn_var(&mut self, ty: Word, init: Option<Word>) -> Word {
        let p = self.b.type_pointer(None, StorageClass::Function, ty);
        let id = self.b.id();
        let mut operands = vec![Operand::StorageClass(StorageClass::Function)];
        operands.extend(init.map(Operand::IdRef));
        self.fn_vars
            .push(Instruction::new(Op::Variable, Some(p), Some(id), operands));
        id
    }
    pub fn load(&mut self, ty: Word, var: Word) -> R<Word> {
        self.b.load(ty, None, var, None, []).ie()
    }
    pub fn store(&mut self, var: Word, v: Word) -> R<()> {
        self.b.store(var, v, None, []).ie()
    }

    /// Opens `if cond {`; returns (else label, merge label) for [`Gen::else_`] / [`Gen::end_if`].
    pub fn begin_if(&mut self, cond: Word) -> R<(Word, Word)> {
        let (lt, le, lm) = (self.b.id(), self.b.id(), self.b.id());
        self.b.selection_merge(lm, SelectionControl::NONE).ie()?;
        self.b.branch_conditional(cond, lt, le, []).ie()?;
        self.b.begin_block(Some(lt)).ie()?;
        if let Some(l) = &mut self.loop_limit {
            l.begin_if(cond);
        }
        Ok((le, lm))
    }
    /// `} else {`.
    pub fn else_(&mut self, st: (Word, Word)) -> R<()> {
        self.b.branch(st.1).ie()?;
        self.b.begin_block(Some(st.0)).ie()?;
        if let Some(l) = &mut self.loop_limit {
            l.else_();
        }
        Ok(())
    }
    /// `}` (after [`Gen::else_`]).
    pub fn end_if(&mut self, st: (Word, Word)) -> R<()> {
        self.b.branch(st.1).ie()?;
        self.b.begin_block(Some(st.1)).ie()?;
        self.limit_end_if()
    }

    /// Opens a loop; the condition is computed after this call, then [`Gen::loop_cond`], the
    /// body, then [`Gen::end_loop`].
    ///
    /// Kernels that call [`Gen::count_loops`] emulate lavapipe's loop limiter around the loops
    /// made here (module [`crate::codegen::loop_limit`]).
    pub fn begin_loop(&mut self) -> R<[Word; 4]> {
        let (lh, lc, lb, lcont, lm) = (
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
        );
        self.b.branch(lh).ie()?;
        self.b.begin_block(Some(lh)).ie()?;
        if let Some(l) = &mut self.loop_limit {
            l.begin_loop();
        }
        self.b
            .loop_merge(lm, lcont, spirv::LoopControl::NONE, [])
            .ie()?;
        self.b.branch(lc).ie()?;
        self.b.begin_block(Some(lc)).ie()?;
        Ok([lb, lcont, lm, lh])
    }
    /// Branches on the loop condition and opens the body.
    pub fn loop_cond(&mut self, st: [Word; 4], c: Word) -> R<()> {
        self.limit_loop_cond(c)?;
        self.b.branch_conditional(c, st[0], st[2], []).ie()?;
        self.b.begin_block(Some(st[0])).ie()?;
        Ok(())
    }
    /// Closes the body and the loop.
    pub fn end_loop(&mut self, st: [Word; 4]) -> R<()> {
        self.b.branch(st[1]).ie()?;
        self.b.begin_block(Some(st[1])).ie()?;
        self.limit_back_edge()?;
        self.b.branch(st[3]).ie()?;
        self.b.begin_block(Some(st[2])).ie()?;
        self.limit_loop_exit()
    }

    /// `if cond { then() }` (structured).
    pub fn if_then(&mut self, cond: Word, then: impl FnOnce(&mut Gen) -> R<()>) -> R<()> {
        let (lt, lm) = (self.b.id(), self.b.id());
        self.b.selection_merge(lm, SelectionControl::NONE).ie()?;
        self.b.branch_conditional(cond, lt, lm, []).ie()?;
        self.b.begin_block(Some(lt)).ie()?;
        if let Some(l) = &mut self.loop_limit {
            l.begin_if(cond);
        }
        then(self)?;
        self.b.branch(lm).ie()?;
        self.b.begin_block(Some(lm)).ie()?;
        self.limit_end_if()
    }

    /// `while cond() { body() }`: `cond` is evaluated in the loop header's condition block.
    pub fn while_loop(
        &mut self,
        cond: impl FnOnce(&mut Gen) -> R<Word>,
        body: impl FnOnce(&mut Gen) -> R<()>,
    ) -> R<()> {
        let st = self.begin_loop()?;
        let c = cond(self)?;
        self.loop_cond(st, c)?;
        body(self)?;
        self.end_loop(st)
    }

    /// Part `k` of `0..n` cut into `parts` contiguous parts of `⌈n / parts⌉` (u64 values):
    /// `[lo, hi)` with `lo = min(k·⌈n / parts⌉, n)` and `hi = min(lo + ⌈n / parts⌉, n)`, empty
    /// for parts past the end.
    pub fn split_range(&mut self, n: Word, parts: Word, k: Word) -> R<(Word, Word)> {
        let u64t = self.t_u64();
        let one = self.c_u64(1);
        let np = self.b.i_add(u64t, None, n, parts).ie()?;
        let np = self.b.i_sub(u64t, None, np, one).ie()?;
        let c = self.b.u_div(u64t, None, np, parts).ie()?;
        let lo = self.b.i_mul(u64t, None, k, c).ie()?;
        let lo = self.glsl(u64t, spirv::GlslStd450Op::UMin, &[lo, n])?;
        let hi = self.b.i_add(u64t, None, lo, c).ie()?;
        let hi = self.glsl(u64t, spirv::GlslStd450Op::UMin, &[hi, n])?;
        Ok((lo, hi))
    }

    /// `for i in start.. while i < end, step` over u64 values; `body` gets `i`.
    pub fn for_range(
        &mut self,
        start: Word,
        end: Word,
        step: Word,
        body: impl FnOnce(&mut Gen, Word) -> R<()>,
    ) -> R<()> {
        let u64t = self.t_u64();
        let iv = self.var(u64t);
        self.store(iv, start)?;
        let bt = self.t_bool();
        self.while_loop(
            |g| {
                let i = g.load(u64t, iv)?;
                g.b.u_less_than(bt, None, i, end).ie()
            },
            |g| {
                let i = g.load(u64t, iv)?;
                body(g, i)?;
                let n = g.b.i_add(u64t, None, i, step).ie()?;
                g.store(iv, n)
            },
        )
    }

    /// Grid-stride loop over `0..n` (u64): thread `gid` handles `gid, gid + total, ...`.
    pub fn grid_loop(&mut self, n: Word, body: impl FnOnce(&mut Gen, Word) -> R<()>) -> R<()> {
        let u64t = self.t_u64();
        let gid = self.global_id()?;
        let gid = self.b.u_convert(u64t, None, gid).ie()?;
        let ng = self.num_groups()?;
        let ng = self.b.u_convert(u64t, None, ng).ie()?;
        let wg = self.c_u64(WG as u64);
        let total = self.b.i_mul(u64t, None, ng, wg).ie()?;
        self.for_range(gid, n, total, body)
    }

    /// Records an error site and returns its id.
    pub fn site(&mut self, loc: &Option<SrcLoc>, msg: impl Into<String>) -> u32 {
        self.site_with_args(loc, msg, 0)
    }

    /// Records an error site whose message has `args` `{}`s filled in from the values the
    /// failing thread reports ([`Gen::fail_if_args`]); returns its id.
    pub fn site_with_args(
        &mut self,
        loc: &Option<SrcLoc>,
        msg: impl Into<String>,
        args: usize,
    ) -> u32 {
        self.errors.push(ErrorSite {
            loc: loc.clone(),
            msg: msg.into(),
            args: args.min(MAX_ERROR_ARGS),
        });
        (self.errors.len() - 1) as u32
    }

    /// If `bad` is true and the thread has found no error before: record error `code` at site
    /// `site`, reported in the launch's slot of the status buffer when the kernel ends (first
    /// wins, see [`FirstError`]).
    pub fn fail_if(&mut self, bad: Word, code: u32, site: u32) -> R<()> {
        self.fail_if_args(bad, code, site, &[])
    }

    /// [`Gen::fail_if`], also recording the `u64` values `args` (at most [`MAX_ERROR_ARGS`]
    /// are kept) for the site's message.
    pub fn fail_if_args(&mut self, bad: Word, code: u32, site: u32, args: &[Word]) -> R<()> {
        let e = self.first_error_vars();
        let (bt, u32t, u64t) = (self.t_bool(), self.t_u32(), self.t_u64());
        let cur = self.load(u32t, e.code)?;
        let zero = self.c_u32(0);
        let none = self.b.i_equal(bt, None, cur, zero).ie()?;
        let first = self.b.logical_and(bt, None, bad, none).ie()?;
        let c = self.c_u32(code);
        let c = self.b.select(u32t, None, first, c, cur).ie()?;
        self.store(e.code, c)?;
        let s_old = self.load(u32t, e.site)?;
        let s_new = self.c_u32(site);
        let s = self.b.select(u32t, None, first, s_new, s_old).ie()?;
        self.store(e.site, s)?;
        for (&var, &a) in e.args.iter().zip(args) {
            let old = self.load(u64t, var)?;
            let v = self.b.select(u64t, None, first, a, old).ie()?;
            self.store(var, v)?;
        }
        Ok(())
    }

    /// The variables of [`FirstError`], made (zero-initialised) by the first check.
    fn first_error_vars(&mut self) -> FirstError {
        if let Some(e) = self.first_error {
            return e;
        }
        let (u32t, u64t) = (self.t_u32(), self.t_u64());
        let (z32, z64) = (self.c_u32(0), self.c_u64(0));
        let code = self.var_init(u32t, z32);
        let site = self.var_init(u32t, z32);
        let args = std::array::from_fn(|_| self.var_init(u64t, z64));
        let e = FirstError { code, site, args };
        self.first_error = Some(e);
        e
    }

    /// The index (`u64`) of the first status word of this launch's slot (the slot's number is
    /// the push constant): its word 0 becomes 1 when a thread records an error there, words 1,
    /// 2, … are the error's code, site and arguments.
    pub(crate) fn status_slot(&mut self) -> R<Word> {
        let (u32t, u64t) = (self.t_u32(), self.t_u64());
        let pu = self.b.type_pointer(None, StorageClass::PushConstant, u32t);
        let c0 = self.c_u32(0);
        let sp = self.b.access_chain(pu, None, self.push_var, [c0]).ie()?;
        let slot = self.b.load(u32t, None, sp, None, []).ie()?;
        let slot = self.b.u_convert(u64t, None, slot).ie()?;
        let words = self.c_u64(STATUS_SLOT_WORDS as u64);
        self.b.i_mul(u64t, None, slot, words).ie()
    }

    /// Reports the thread's first error, if any, in the launch's slot of the status buffer
    /// (the first thread to get there wins).
    fn report_first_error(&mut self) -> R<()> {
        let Some(e) = self.first_error.take() else {
            return Ok(());
        };
        let (bt, u32t, u64t) = (self.t_bool(), self.t_u32(), self.t_u64());
        let code = self.load(u32t, e.code)?;
        let zero = self.c_u32(0);
        let bad = self.b.i_not_equal(bt, None, code, zero).ie()?;
        self.if_then(bad, |g| {
            let z = g.status_slot()?;
            let p = g.word_ptr(0, z)?;
            let (dev, sem) = (g.c_u32(spirv::Scope::Device as u32), g.c_u32(0));
            let (zero, one) = (g.c_u32(0), g.c_u32(1));
            let old =
                g.b.atomic_compare_exchange(u32t, None, p, dev, sem, sem, one, zero)
                    .ie()?;
            let won = g.b.i_equal(bt, None, old, zero).ie()?;
            g.if_then(won, |g| {
                let site = g.load(u32t, e.site)?;
                let mut words = vec![(1, code), (2, site)];
                for (i, &var) in e.args.iter().enumerate() {
                    let a = g.load(u64t, var)?;
                    let lo = g.b.u_convert(u32t, None, a).ie()?;
                    let c32 = g.c_u64(32);
                    let hi = g.b.shift_right_logical(u64t, None, a, c32).ie()?;
                    let hi = g.b.u_convert(u32t, None, hi).ie()?;
                    words.push((4 + 2 * i as u64, lo));
                    words.push((5 + 2 * i as u64, hi));
                }
                for (off, w) in words {
                    let off = g.c_u64(off);
                    let at = g.b.i_add(u64t, None, z, off).ie()?;
                    g.store_word(0, at, w)?;
                }
                Ok(())
            })
        })
    }

    pub fn control_barrier(&mut self) -> R<()> {
        let wg = self.c_u32(spirv::Scope::Workgroup as u32);
        let sem = self.c_u32(
            (spirv::MemorySemantics::ACQUIRE_RELEASE | spirv::MemorySemantics::WORKGROUP_MEMORY)
                .bits(),
        );
        self.b.control_barrier(wg, wg, sem).ie()
    }

    /// A workgroup barrier that also orders the workgroup's accesses to storage buffers
    /// (what one invocation wrote before it is visible to the others after it), at
    /// [`Gen::barrier_scope`].
    pub fn buffer_barrier(&mut self) -> R<()> {
        let scope = self.c_u32(self.barrier_scope as u32);
        let sem = self.c_u32(
            (spirv::MemorySemantics::ACQUIRE_RELEASE
                | spirv::MemorySemantics::UNIFORM_MEMORY
                | spirv::MemorySemantics::WORKGROUP_MEMORY)
                .bits(),
        );
        self.b.control_barrier(scope, scope, sem).ie()
    }

    /// A workgroup-shared array of `n` values of type `ty`; returns the variable.
    pub fn shared_array(&mut self, ty: Word, n: u32) -> Word {
        let len = self.c_u32(n);
        let at = self.b.type_array(ty, len);
        let p = self.b.type_pointer(None, StorageClass::Workgroup, at);
        self.global_var(p, StorageClass::Workgroup)
    }
    pub fn shared_ptr(&mut self, arr: Word, ty: Word, idx: Word) -> R<Word> {
        let p = self.b.type_pointer(None, StorageClass::Workgroup, ty);
        self.b.access_chain(p, None, arr, [idx]).ie()
    }

    /// Closes `main` and returns the assembled module.
    /// Declares IEEE semantics for every float width the module uses: the
    /// `SignedZeroInfNanPreserve` and `DenormPreserve` execution modes (SPV_KHR_float_controls,
    /// core in Vulkan 1.2; NVIDIA flushes f32 subnormals to zero without the second).
    /// Without it drivers may assume that no operand or result is NaN, an infinity or `-0.0`
    /// (lavapipe folds `x * 0.0` to `0.0`, `x + 0.0` to `x`). `vkad_vk::Context::kernel` drops
    /// the modes a device does not support.
    fn float_controls(&mut self, fun: Word) {
        let mut widths: Vec<u32> = (self.b.module_ref().types_global_values.iter())
            .filter(|i| i.class.opcode == Op::TypeFloat)
            .filter_map(|i| match i.operands.first() {
                Some(Operand::LiteralBit32(w)) => Some(*w),
                _ => None,
            })
            .collect();
        widths.sort_unstable();
        widths.dedup();
        if widths.is_empty() {
            return;
        }
        self.b.extension("SPV_KHR_float_controls");
        self.b.capability(Capability::SignedZeroInfNanPreserve);
        self.b.capability(Capability::DenormPreserve);
        for w in widths {
            self.b
                .execution_mode(fun, ExecutionMode::SignedZeroInfNanPreserve, [w]);
            self.b
                .execution_mode(fun, ExecutionMode::DenormPreserve, [w]);
        }
    }

    pub fn finish(mut self) -> R<Vec<u32>> {
        self.report_first_error()?;
        self.b.ret().ie()?;
        self.b.end_function().ie()?;
        let fun = self.fun;
        self.b.entry_point(
            ExecutionModel::GLCompute,
            fun,
            "main",
            self.interface.clone(),
        );
        self.b
            .execution_mode(fun, ExecutionMode::LocalSize, [self.local_size, 1, 1]);
        self.float_controls(fun);
        // The number of array bindings (where the scalar arguments start, in `Addresses`
        // mode): defined now that every binding is known.
        let arrays = self.bindings.len().saturating_sub(2) as u64;
        let u64t = self.t_u64();
        self.b
            .module_mut()
            .types_global_values
            .push(Instruction::new(
                Op::Constant,
                Some(u64t),
                Some(self.arg_base),
                vec![Operand::LiteralBit64(arrays)],
            ));
        let vars = std::mem::take(&mut self.fn_vars);
        let mut prologue = std::mem::take(&mut self.prologue);
        let mut m = self.b.module();
        if let Some(f) = m.functions.first_mut() {
            if let Some(bl) = f.blocks.first_mut() {
                let mut all = vars;
                all.append(&mut prologue);
                all.append(&mut bl.instructions);
                bl.instructions = all;
            }
        }
        use rspirv::binary::Assemble;
        Ok(m.assemble())
    }
}
