//! Fixed-algorithm pseudo-random numbers.
//!
//! The generator's output must be identical on every run, on any number of threads and with
//! any version of any dependency, so it does not use `rand`'s `StdRng`/`SmallRng` (whose
//! algorithms may change between releases): it carries its own SplitMix64 (for seeding and
//! for mixing keys) and xoshiro256++ (Blackman and Vigna, 2019) for the streams themselves.
//! Every independent part of the model (each host's layout, each host's links, the host
//! table) draws from its own stream, keyed by `(seed, purpose, index)`.

/// SplitMix64's output function: a bijective 64-bit mixer.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The seed of the stream `(seed, purpose, index)`.
#[inline]
pub fn stream_key(seed: u64, purpose: u64, index: u64) -> u64 {
    mix64(
        mix64(
            mix64(seed ^ GOLDEN)
                .wrapping_add(purpose)
                .wrapping_mul(GOLDEN),
        ) ^ index,
    )
}

/// xoshiro256++ with convenience draws.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose state is filled by SplitMix64 from `key`.
    pub fn new(key: u64) -> Self {
        let mut x = key;
        let mut next = || {
            x = x.wrapping_add(GOLDEN);
            mix64(x)
        };
        let s = [next(), next(), next(), next()];
        Self { s }
    }

    /// The stream `(seed, purpose, index)`.
    pub fn stream(seed: u64, purpose: u64, index: u64) -> Self {
        Self::new(stream_key(seed, purpose, index))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `(0, 1]` (safe to raise to negative powers).
    #[inline]
    pub fn f64_open0(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-64·n). `n > 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// `true` with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// A Pareto (type I) variate with scale 1 and tail index `a`: `P(X > x) = x^(-a)`, `x ≥ 1`.
    #[inline]
    pub fn pareto(&mut self, a: f64) -> f64 {
        self.f64_open0().powf(-1.0 / a)
    }

    /// A rank in `0..k` with `P(rank = r) ∝ ∫_{r+1}^{r+2} x^(-s) dx` — a continuous Zipf law
    /// of exponent `s` sampled by inversion in O(1) (rank 0 is the most likely). See [`Zipf`]
    /// to draw many ranks with the same `k` and `s`.
    #[inline]
    pub fn zipf_rank(&mut self, k: u64, s: f64) -> u64 {
        Zipf::new(k, s).sample(self)
    }
}

/// The law of [`Rng::zipf_rank`] with its constants precomputed: one `powf` (or none, when
/// `1/(1−s)` is an integer, as for the default `s = 1.5`) per draw.
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
    pub fn sample(&self, rng: &mut Rng) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values_never_change() {
        // xoshiro256++ seeded by SplitMix64: any change here changes every generated graph.
        let mut r = Rng::new(0);
        let v: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        let mut again = Rng::new(0);
        assert_eq!(v, (0..3).map(|_| again.next_u64()).collect::<Vec<_>>());
        assert_eq!(mix64(0x9e37_79b9_7f4a_7c15), 0xe220_a839_7b1d_cdaf);
        assert_ne!(stream_key(1, 2, 3), stream_key(1, 2, 4));
        assert_ne!(stream_key(1, 2, 3), stream_key(1, 3, 3));
        assert_ne!(stream_key(1, 2, 3), stream_key(2, 2, 3));
    }

    #[test]
    fn draws_are_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            let x = r.f64();
            assert!((0.0..1.0).contains(&x));
            let y = r.f64_open0();
            assert!(y > 0.0 && y <= 1.0);
            assert!(r.below(13) < 13);
            assert!(r.pareto(1.5) >= 1.0);
            assert!(r.zipf_rank(10, 0.9) < 10);
            assert!(r.zipf_rank(10, 1.0) < 10);
            assert_eq!(r.zipf_rank(1, 2.0), 0);
        }
    }

    #[test]
    fn zipf_rank_is_skewed() {
        let mut r = Rng::new(3);
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
}
