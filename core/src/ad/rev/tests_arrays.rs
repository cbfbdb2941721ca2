//! Tests of the array rules that the shared tests do not cover.

use super::super::reduce::tests::{nums, vjp_run};

#[test]
fn iota_size_gets_the_sum_of_the_adjoint() {
    // Futhark's rule (tests/ad/iota0.fut): d/dn Σ iota n = n̄ += Σ ȳ = n.
    let out = vjp_run("entry f (n: i64) = i64.sum (iota n)", "5i64", "1i64");
    assert_eq!(nums(&out), vec![10.0, 5.0]);
    let out = vjp_run(
        "entry f (n: i64) = i64.sum (map (\\i -> 3 * i) (iota n))",
        "4i64",
        "2i64",
    );
    assert_eq!(nums(&out), vec![18.0, 24.0]);
    let out = vjp_run("entry f (n: i64) = i64.sum (iota n)", "0i64", "1i64");
    assert_eq!(nums(&out), vec![0.0, 0.0]);
}
