//! Kendall's τ_b against the textbook example and an O(n²) brute force on tie-heavy data.

use crawlrank_rank::kendall_tau_b;
use crawlrank_rng::SplitMix64;

/// τ_b straight from the definition, pair by pair.
fn brute_force(x: &[f64], y: &[f64]) -> f64 {
    let (mut concordant, mut discordant, mut tx, mut ty, mut pairs) =
        (0i64, 0i64, 0i64, 0i64, 0i64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            pairs += 1;
            let dx = x[i] - x[j];
            let dy = y[i] - y[j];
            if dx == 0.0 {
                tx += 1;
            }
            if dy == 0.0 {
                ty += 1;
            }
            if dx * dy > 0.0 {
                concordant += 1;
            } else if dx * dy < 0.0 {
                discordant += 1;
            }
        }
    }
    (concordant - discordant) as f64 / (((pairs - tx) * (pairs - ty)) as f64).sqrt()
}

#[test]
fn textbook_example_with_ties() {
    let x = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0];
    let y = [2.0, 1.0, 3.0, 3.0, 5.0, 4.0];
    let t = kendall_tau_b(&x, &y).unwrap();
    assert!((t - 0.642857).abs() < 1e-6, "{t}");
    // Symmetric in its arguments.
    assert!((kendall_tau_b(&y, &x).unwrap() - t).abs() < 1e-15);
}

#[test]
fn perfect_agreement_and_reversal() {
    let x: Vec<f64> = (0..100).map(f64::from).collect();
    let rev: Vec<f64> = x.iter().rev().copied().collect();
    assert_eq!(kendall_tau_b(&x, &x).unwrap(), 1.0);
    assert_eq!(kendall_tau_b(&x, &rev).unwrap(), -1.0);
}

#[test]
fn agrees_with_brute_force_on_tied_random_vectors() {
    // A deterministic generator, so failures reproduce; `% k` (not `below`) keeps the cases
    // this test has always drawn.
    let mut rng = SplitMix64::new(42);
    let mut below = |k: u64| rng.next_u64() % k;
    for case in 0..200 {
        let n = 2 + below(300) as usize;
        // Few distinct values, so ties in x, in y and in both are common.
        let kx = 1 + below(if case % 3 == 0 { 4 } else { 40 });
        let ky = 1 + below(if case % 5 == 0 { 3 } else { 40 });
        let x: Vec<f64> = (0..n).map(|_| below(kx) as f64 - 2.0).collect();
        let y: Vec<f64> = (0..n).map(|_| below(ky) as f64 * 0.5).collect();
        let fast = kendall_tau_b(&x, &y).unwrap();
        let slow = brute_force(&x, &y);
        if slow.is_nan() {
            assert!(fast.is_nan(), "case {case}: expected NaN, got {fast}");
        } else {
            assert!(
                (fast - slow).abs() < 1e-12,
                "case {case} (n = {n}): {fast} vs {slow}"
            );
        }
    }
}

#[test]
fn invalid_inputs_are_errors() {
    let err = kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 2.0]).unwrap_err();
    assert!(err.to_string().contains("3 and 2"), "{err}");
    assert!(kendall_tau_b(&[1.0, 2.0], &[f64::NAN, 1.0]).is_err());
    assert!(kendall_tau_b(&[2.0; 5], &[1.0, 2.0, 3.0, 4.0, 5.0])
        .unwrap()
        .is_nan());
}
