//! A continuous Zipf law over ranks, sampled by inversion: the synthetic-web model draws page
//! and host popularity from it millions of times with the same parameters, so its constants
//! are computed once ([`Zipf::new`]) and each draw costs one uniform and at most one `powf`.

use crate::xoshiro::Xoshiro256PlusPlus;

/// The law of [`Xoshiro256PlusPlus::zipf_rank`] with its constants precomputed: one `powf`
/// (or none, when `1/(1−s)` is an integer, as for the default `s = 1.5`) per draw.
#[derive(Debug, Clone, Copy)]
pub struct Zipf {
    k: u64,
    /// `(k+1)^(1−s) − 1`, or `ln(k+1)` when `s = 1`.
    span: f64,
    /// `1/(1−s)`.
    inv_e: f64,
    log: bool,
    int_pow: Option<i32>,
}

impl Zipf {
    /// Ranks `0..k` (`k > 0`) with exponent `s`.
    pub fn new(k: u64, s: f64) -> Self {
        debug_assert!(k > 0);
        let top = (k + 1) as f64;
        let log = (s - 1.0).abs() < 1e-9;
        let e = 1.0 - s;
        let inv_e = if log { 0.0 } else { 1.0 / e };
        let int_pow = (!log && inv_e.fract() == 0.0 && inv_e.abs() <= 16.0).then_some(inv_e as i32);
        Self {
            k,
            span: if log { top.ln() } else { top.powf(e) - 1.0 },
            inv_e,
            log,
            int_pow,
        }
    }

    /// One rank.
    #[inline]
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        let u = rng.f64();
        // CDF on [1, k+1): (x^(1−s) − 1) / ((k+1)^(1−s) − 1), or ln x / ln(k+1).
        let x = if self.log {
            (u * self.span).exp()
        } else {
            let y = 1.0 + u * self.span;
            match self.int_pow {
                Some(p) => y.powi(p),
                None => y.powf(self.inv_e),
            }
        };
        ((x as u64).saturating_sub(1)).min(self.k - 1)
    }
}

impl Xoshiro256PlusPlus {
    /// A rank in `0..k` with `P(rank = r) ∝ ∫_{r+1}^{r+2} x^(-s) dx` — a continuous Zipf law
    /// of exponent `s` sampled by inversion in O(1) (rank 0 is the most likely). See [`Zipf`]
    /// to draw many ranks with the same `k` and `s`. (Defined here, beside the law, so that
    /// the generator's module need not know it.)
    #[inline]
    pub fn zipf_rank(&mut self, k: u64, s: f64) -> u64 {
        Zipf::new(k, s).sample(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_rank_is_skewed() {
        let mut r = Xoshiro256PlusPlus::new(3);
        let mut counts = [0u32; 100];
        for _ in 0..100_000 {
            counts[r.zipf_rank(100, 1.0) as usize] += 1;
        }
        // P(0) = ln 2 / ln 101 ≈ 0.150; P(1) = ln 1.5 / ln 101 ≈ 0.088.
        assert!(
            (counts[0] as f64 / 1e5 - 0.150).abs() < 0.01,
            "{}",
            counts[0]
        );
        assert!(
            (counts[1] as f64 / 1e5 - 0.088).abs() < 0.01,
            "{}",
            counts[1]
        );
        assert!(counts[0] > counts[10] && counts[10] > counts[99]);
    }

    #[test]
    fn a_precomputed_law_draws_what_zipf_rank_draws() {
        let law = Zipf::new(1000, 1.5);
        let (mut a, mut b) = (Xoshiro256PlusPlus::new(5), Xoshiro256PlusPlus::new(5));
        for _ in 0..1000 {
            assert_eq!(law.sample(&mut a), b.zipf_rank(1000, 1.5));
        }
    }
}
