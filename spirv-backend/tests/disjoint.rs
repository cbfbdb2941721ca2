//! `reduce_by_index` with provably distinct indices (paper 003, `passes::hist_disjoint`): a
//! plain read-modify-write per update, no atomics or compare-exchange loops. Every element type, sizes
//! from 1 to several workgroups, in-range and out-of-range indices, several operators; the
//! interpreter is the oracle.
mod common;
use vkad_core::values::parse_values;

fn list(n: usize, f: impl Fn(usize) -> String) -> String {
    let v: Vec<String> = (0..n).map(f).collect();
    format!("[{}]", v.join(", "))
}

#[test]
fn distinct_indices_every_type_and_size() {
    for (t, ops) in [
        ("i32", ["(+)", "i32.max", "(*)"]),
        ("i64", ["(+)", "i64.min", "(*)"]),
        ("f32", ["(+)", "f32.max", "(*)"]),
        ("f64", ["(+)", "f64.min", "(*)"]),
    ] {
        for op in ops {
            let ne = match op {
                "(*)" => "1",
                o if o.ends_with("max") => &format!("{t}.lowest"),
                o if o.ends_with("min") => &format!("{t}.highest"),
                _ => "0",
            };
            // Indices 2i + k: every other bin, shifted by k (some past the end, some negative).
            let src = format!(
                "entry main [n] [m] (dest: [m]{t}) (vs: [n]{t}) (k: i64) : [m]{t} =
  reduce_by_index (copy dest) {op} {ne} (map (\\i -> 2 * i + k) (iota n)) vs"
            );
            for (n, m, k) in [(1, 1, 0), (7, 20, -3), (300, 512, 5), (5000, 9000, -1)] {
                let args = format!(
                    "{} {} {k}i64",
                    list(m, |i| format!("{}{t}", (i % 7) as i64 - 3)),
                    list(n, |i| format!("{}{t}", (i % 5) as i64 - 2))
                );
                let args = parse_values(args.as_bytes()).unwrap();
                common::same(&src, "main", args);
            }
        }
    }
}
