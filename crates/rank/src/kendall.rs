//! Kendall's τ_b between two scorings of the same pages, in O(n log n) (docs/algorithms.md §4: the rank
//! correlation of a policy's final scores with PageRank, FICA's Table 1, on all pages, no
//! sampling).
//!
//! Crawl scores are full of ties (every page first seen at the same distance, every page with
//! in-degree 1), so the tie-corrected τ_b is the one that means something:
//!
//! > τ_b = (n_c − n_d) / √((n₀ − n₁)(n₀ − n₂))
//!
//! with `n₀ = n(n−1)/2`, `n₁` the pairs tied in `x`, `n₂` the pairs tied in `y`. It is
//! computed with Knight's algorithm (1966): sort the pairs by `x` then `y`, count the pairs
//! tied in `x` and those tied in both, then merge-sort the `y` sequence counting the swaps —
//! the discordant pairs — and finally the pairs tied in `y`. Since
//! `n_c + n_d = n₀ − n₁ − n₂ + n₃` (`n₃` the joint ties), `n_c − n_d` follows. Counts are
//! exact integers; only the final division is floating point.
//!
//! τ_b is undefined when there are fewer than two pages or when either scoring ties every
//! pair (the denominator vanishes): the result is then NaN, the value a statistics package
//! reports, so that a degenerate policy shows up as "undefined" in a table rather than
//! aborting a whole simulation. Invalid inputs — different lengths, NaN scores — are errors.
//! `-0.0` and `0.0` are the same score.

use anyhow::{bail, ensure, Result};
use rayon::prelude::*;
use std::cmp::Ordering;

/// Kendall's τ_b between `x` and `y` (NaN when undefined, see the module documentation).
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Result<f64> {
    ensure!(
        x.len() == y.len(),
        "Kendall's tau needs two scorings of the same pages, got {} and {} scores",
        x.len(),
        y.len()
    );
    for (name, v) in [("first", x), ("second", y)] {
        if let Some(i) = v.iter().position(|s| s.is_nan()) {
            bail!("the {name} scoring has a NaN score at page {i}");
        }
    }
    let n = x.len();
    if n < 2 {
        return Ok(f64::NAN);
    }
    let mut pairs: Vec<(f64, f64)> = x.iter().copied().zip(y.iter().copied()).collect();
    pairs.par_sort_unstable_by(|a, b| cmp(a.0, b.0).then_with(|| cmp(a.1, b.1)));

    let tied_x = tied_pairs(&pairs, |a, b| a.0 == b.0);
    let tied_xy = tied_pairs(&pairs, |a, b| a.0 == b.0 && a.1 == b.1);
    let mut ys: Vec<f64> = pairs.into_iter().map(|p| p.1).collect();
    let discordant = sort_counting_inversions(&mut ys);
    let tied_y = tied_pairs(&ys, |a, b| a == b);

    let n = n as u64;
    let all = n * (n - 1) / 2;
    if tied_x == all || tied_y == all {
        return Ok(f64::NAN);
    }
    let numerator = i128::from(all) - i128::from(tied_x) - i128::from(tied_y) + i128::from(tied_xy)
        - 2 * i128::from(discordant);
    let denominator = ((all - tied_x) as f64).sqrt() * ((all - tied_y) as f64).sqrt();
    Ok((numerator as f64 / denominator).clamp(-1.0, 1.0))
}

/// A total order on non-NaN scores in which `-0.0 == 0.0`.
fn cmp(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// Σ t(t−1)/2 over the runs of consecutive equal elements of a sorted slice.
fn tied_pairs<T>(sorted: &[T], eq: impl Fn(&T, &T) -> bool) -> u64 {
    let mut total = 0u64;
    let mut run = 1u64;
    for w in sorted.windows(2) {
        if eq(&w[0], &w[1]) {
            run += 1;
        } else {
            total += run * (run - 1) / 2;
            run = 1;
        }
    }
    total + run * (run - 1) / 2
}

/// Sorts `v` ascending with a stable bottom-up merge sort and returns the number of pairs
/// `i < j` with `v[i] > v[j]` (equal values are not inversions).
fn sort_counting_inversions(v: &mut Vec<f64>) -> u64 {
    let n = v.len();
    let mut buf = vec![0.0; n];
    let mut inversions = 0u64;
    let mut width = 1;
    while width < n {
        for start in (0..n).step_by(2 * width) {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (left, right) = (&v[start..mid], &v[mid..end]);
            let out = &mut buf[start..end];
            let (mut i, mut j, mut k) = (0, 0, 0);
            while i < left.len() && j < right.len() {
                if right[j] < left[i] {
                    // right[j] jumps over every element still in the left run.
                    inversions += (left.len() - i) as u64;
                    out[k] = right[j];
                    j += 1;
                } else {
                    out[k] = left[i];
                    i += 1;
                }
                k += 1;
            }
            out[k..k + left.len() - i].copy_from_slice(&left[i..]);
            k += left.len() - i;
            out[k..].copy_from_slice(&right[j..]);
        }
        std::mem::swap(v, &mut buf);
        width *= 2;
    }
    inversions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inversion_count_and_sorting() {
        let mut v = vec![3.0, 1.0, 2.0, 2.0, 0.0];
        assert_eq!(sort_counting_inversions(&mut v), 7);
        assert_eq!(v, vec![0.0, 1.0, 2.0, 2.0, 3.0]);
        let mut one = vec![1.0];
        assert_eq!(sort_counting_inversions(&mut one), 0);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(kendall_tau_b(&[1.0], &[2.0]).unwrap().is_nan());
        assert!(kendall_tau_b(&[], &[]).unwrap().is_nan());
        assert!(kendall_tau_b(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0])
            .unwrap()
            .is_nan());
        assert!(kendall_tau_b(&[1.0, 2.0], &[1.0]).is_err());
        assert!(kendall_tau_b(&[1.0, f64::NAN], &[1.0, 2.0]).is_err());
        // -0.0 and 0.0 tie: n₀ = 3, n₁ = 1, all else concordant, so τ_b = 2/√(2·3).
        let t = kendall_tau_b(&[0.0, -0.0, 1.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!((t - 2.0 / 6f64.sqrt()).abs() < 1e-15);
    }
}
