//! Accumulator updates that every thread of a kernel makes at the same element (the adjoint of
//! a free array read at thread-invariant indices: `w[j]` in a loop over `j` inside a `map`)
//! are summed per subgroup before the atomic (`codegen::subgroup`); updates at indices that
//! depend on the thread are not. Checked on the modules the runs generate, and against the
//! interpreter with the validation layer on, for f64 (compare-exchange) and f32 (atomic add
//! where the device has it), over points that fill whole subgroups and a partial last one.

mod common;

use vkad_core::value::{ArrayValue, Buffer, Value};

const SRC: &str = "
entry uniform [n][m] (w: [m]f64) (xs: [n][m]f64) : [m]f64 =
  vjp (\\w -> f64.sum (map (\\x -> loop a = 0f64 for j < m do a + w[j] * x[j] * x[j]) xs)) w 1

entry uniform32 [n][m] (w: [m]f32) (xs: [n][m]f32) : [m]f32 =
  vjp (\\w -> f32.sum (map (\\x -> loop a = 0f32 for j < m do a + w[j] * x[j]) xs)) w 1

entry variant [n][m] (w: [m]f64) (xs: [n][m]f64) (is: [n]i64) : [m]f64 =
  vjp (\\w -> f64.sum (map2 (\\x i -> loop a = 0f64 for j < m do a + w[(i + j) % m] * x[j]) xs is)) w 1
";

/// `xs[i][j] = (i * m + j) % 7 - 3` (small integers: every sum is exact in any order).
fn points(n: usize, m: usize, f32s: bool) -> Value {
    let v = |i: usize, j: usize| ((i * m + j) % 7) as f64 - 3.0;
    let data: Vec<f64> = (0..n).flat_map(|i| (0..m).map(move |j| v(i, j))).collect();
    let data = if f32s {
        Buffer::F32(data.iter().map(|&x| x as f32).collect())
    } else {
        Buffer::F64(data)
    };
    Value::Array(ArrayValue {
        shape: vec![n, m],
        data,
    })
}

fn weights(m: usize, f32s: bool) -> Value {
    let data = if f32s {
        Buffer::F32(vec![1.0; m])
    } else {
        Buffer::F64(vec![1.0; m])
    };
    Value::Array(ArrayValue {
        shape: vec![m],
        data,
    })
}

/// How many `OpGroupNonUniformFAdd` the modules of a run of `entry` on `args` contain.
fn subgroup_sums(entry: &str, args: Vec<Value>) -> usize {
    let c = vkad_core::compile("t.fut", SRC).unwrap_or_else(|e| panic!("{}", e.render()));
    let modules = vkad_spirv::generate_entry(&common::ctx(), &c, entry, Some(args))
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
    modules
        .iter()
        .map(|m| {
            let module = rspirv::dr::load_words(&m.words).expect("a module");
            module
                .functions
                .iter()
                .flat_map(|f| &f.blocks)
                .flat_map(|b| &b.instructions)
                .filter(|i| i.class.opcode == rspirv::spirv::Op::GroupNonUniformFAdd)
                .count()
        })
        .sum()
}

#[test]
fn updates_at_one_element_are_summed_per_subgroup_and_equal_the_interpreter() {
    let info = common::ctx().info().clone();
    let sums = info.subgroup_arithmetic && info.subgroup_vote;
    for n in [1000, 37, 1] {
        let m = 5;
        common::same(SRC, "uniform", vec![weights(m, false), points(n, m, false)]);
        common::same(SRC, "uniform32", vec![weights(m, true), points(n, m, true)]);
        let is = Value::Array(ArrayValue {
            shape: vec![n],
            data: Buffer::I64((0..n as i64).map(|i| i * 3 % 11).collect()),
        });
        common::same(
            SRC,
            "variant",
            vec![weights(m, false), points(n, m, false), is.clone()],
        );
        if n == 1000 {
            let uniform = subgroup_sums("uniform", vec![weights(m, false), points(n, m, false)]);
            let uniform32 = subgroup_sums("uniform32", vec![weights(m, true), points(n, m, true)]);
            let variant =
                subgroup_sums("variant", vec![weights(m, false), points(n, m, false), is]);
            assert_eq!(uniform > 0, sums, "f64 at w[j]: {uniform} subgroup sums");
            assert_eq!(
                uniform32 > 0,
                sums,
                "f32 at w[j]: {uniform32} subgroup sums"
            );
            assert_eq!(
                variant, 0,
                "at w[(i + j) % m] the index depends on the thread"
            );
        }
    }
}
