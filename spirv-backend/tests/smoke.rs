mod common;
use vkad_core::values::parse_values;

fn vals(s: &str) -> Vec<vkad_core::value::Value> {
    parse_values(s.as_bytes()).unwrap()
}

#[test]
fn map_add() {
    common::same(
        "entry main (xs: []f32) = map (\\x -> x * 2 + 1) xs",
        "main",
        vals("[1f32, 2f32, 3f32]"),
    );
}

#[test]
fn reduce_sum() {
    common::same(
        "entry main (xs: []i32) = reduce (+) 0 xs",
        "main",
        vals("[1, 2, 3, 4, 5]"),
    );
}

#[test]
fn scan_sum() {
    common::same(
        "entry main (xs: []i32) = scan (+) 0 xs",
        "main",
        vals("[1, 2, 3, 4, 5]"),
    );
}
