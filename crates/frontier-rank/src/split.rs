//! The seeded train/test split of the frontier (docs/algorithms.md §6): `ω` is tuned on the
//! training part; every measure is reported on the test part.

use crawlrank_rng::Xoshiro256StarStar;

/// Splits `n` items into a training part of `round(train_fraction·n)` items and a test part of
/// the rest: a Fisher–Yates shuffle by xoshiro256** seeded with `rng_seed` (the same on every
/// machine), the first items of the shuffle being the training part. Returns `is_test[i]`.
/// `train_fraction` is clamped to `[0, 1]`.
pub fn split(n: usize, train_fraction: f64, rng_seed: u64) -> Vec<bool> {
    let train = ((train_fraction.clamp(0.0, 1.0) * n as f64).round() as usize).min(n);
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Xoshiro256StarStar::new(rng_seed);
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut is_test = vec![true; n];
    for &i in &order[..train] {
        is_test[i] = false;
    }
    is_test
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_reproducibility_and_disjointness() {
        for n in [0usize, 1, 2, 3, 10, 100, 1001] {
            let s = split(n, 0.65, 7);
            assert_eq!(s.len(), n);
            let test = s.iter().filter(|&&t| t).count();
            let train = n - test;
            assert_eq!(train, (0.65 * n as f64).round() as usize, "n = {n}");
            // The same seed, the same split; every item in exactly one part (a bool each).
            assert_eq!(split(n, 0.65, 7), s);
        }
        let a = split(1000, 0.65, 1);
        let b = split(1000, 0.65, 2);
        assert_ne!(a, b, "another seed, another split");
        assert_eq!(a.iter().filter(|&&t| t).count(), 350);
        assert_eq!(b.iter().filter(|&&t| t).count(), 350);
        // Both parts are spread over the items, not a prefix.
        assert!(a[..500].iter().any(|&t| t) && a[500..].iter().any(|&t| t));
        assert!(split(10, 0.0, 3).iter().all(|&t| t));
        assert!(split(10, 1.0, 3).iter().all(|&t| !t));
    }
}
