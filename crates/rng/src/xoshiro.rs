//! The xoshiro256 generators (Blackman and Vigna, "Scrambled linear pseudorandom number
//! generators", ACM TOMS 2021): 256 bits of state, period 2^256 − 1, fast, and good enough for
//! every statistical use here. Both take their state from [`SplitMix64`], as the authors
//! recommend, so any 64-bit seed (0 included) gives a valid, well-mixed state.
//!
//! Two scramblers of the same linear engine are used, for historical reasons that are now
//! part of the outputs: `++` ([`Xoshiro256PlusPlus`]) drives the synthetic-web generator,
//! which needs many independent streams ([`stream_key`]) and floating-point draws; `**`
//! ([`Xoshiro256StarStar`]) drives the `random` crawl policy and the simulator's seeds.
//! Switching either to the other would change every generated web or every random crawl.

use crate::splitmix::{mix64, SplitMix64, GOLDEN_GAMMA};

/// A 256-bit state filled by SplitMix64 from `seed`.
fn seeded_state(seed: u64) -> [u64; 4] {
    let mut seeder = SplitMix64::new(seed);
    [
        seeder.next_u64(),
        seeder.next_u64(),
        seeder.next_u64(),
        seeder.next_u64(),
    ]
}

/// The xoshiro256 linear engine's state transition (shared by both scramblers).
#[inline]
fn advance(s: &mut [u64; 4]) {
    let t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3].rotate_left(45);
}

/// Uniform in `0..n` from 64 random bits (Lemire's multiply-shift: the bias is below
/// `n / 2^64`).
#[inline]
fn scale_below(bits: u64, n: u64) -> u64 {
    ((bits as u128 * n as u128) >> 64) as u64
}

/// The seed of the independent stream `(seed, purpose, index)`: `purpose` names what the
/// numbers are for (a constant per use), `index` which instance (a host, say). Distinct
/// triples give unrelated streams, so every part of a model can draw from its own stream in
/// any order, on any thread, and get the same numbers.
#[inline]
pub fn stream_key(seed: u64, purpose: u64, index: u64) -> u64 {
    mix64(
        mix64(
            mix64(seed ^ GOLDEN_GAMMA)
                .wrapping_add(purpose)
                .wrapping_mul(GOLDEN_GAMMA),
        ) ^ index,
    )
}

/// xoshiro256++ with the draws the synthetic-web model needs.
#[derive(Debug, Clone)]
pub struct Xoshiro256PlusPlus {
    s: [u64; 4],
}

impl Xoshiro256PlusPlus {
    /// A generator whose state is filled by SplitMix64 from `key`.
    pub fn new(key: u64) -> Self {
        Self {
            s: seeded_state(key),
        }
    }

    /// The stream `(seed, purpose, index)` (see [`stream_key`]).
    pub fn stream(seed: u64, purpose: u64, index: u64) -> Self {
        Self::new(stream_key(seed, purpose, index))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        advance(s);
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

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below `n / 2^64`); `n > 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        scale_below(self.next_u64(), n)
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
}

/// xoshiro256**: the generator of the `random` crawl policy (and of the simulator's seeds),
/// so a random crawl is reproducible from its seed.
#[derive(Debug, Clone)]
pub struct Xoshiro256StarStar {
    s: [u64; 4],
}

impl Xoshiro256StarStar {
    /// A generator whose state is filled by SplitMix64 from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            s: seeded_state(seed),
        }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        advance(s);
        result
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below `n / 2^64`); `n > 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        scale_below(self.next_u64(), n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values computed from the implementations this module replaced (the
    // generator's `rng::Rng` and the frontier's `policies::simple::Xoshiro`): any change here
    // changes every generated web, or every random crawl.

    #[test]
    fn plus_plus_outputs_never_change() {
        let cases: [(u64, [u64; 4]); 4] = [
            (
                0,
                [
                    0x5317_5d61_490b_23df,
                    0x61da_6f3d_c380_d507,
                    0x5c0f_df91_ec9a_7bfc,
                    0x02ee_bf8c_3bbe_5e1a,
                ],
            ),
            (
                1,
                [
                    0xcfc5_d07f_6f03_c29b,
                    0xbf42_4132_963f_e08d,
                    0x19a3_7d57_57aa_f520,
                    0xbf08_119f_05cd_56d6,
                ],
            ),
            (
                42,
                [
                    0xd076_4d4f_4476_689f,
                    0x519e_4174_576f_3791,
                    0xfbe0_7cfb_0c24_ed8c,
                    0xb37d_9f60_0cd8_35b8,
                ],
            ),
            (
                0xdead_beef_cafe_f00d,
                [
                    0x2594_5a60_5e70_55a9,
                    0x3948_323e_f977_5d55,
                    0xcb4e_90ad_7cf1_678a,
                    0xec5c_7dae_f7b0_39eb,
                ],
            ),
        ];
        for (seed, outputs) in cases {
            let mut g = Xoshiro256PlusPlus::new(seed);
            assert_eq!(outputs.map(|_| g.next_u64()), outputs, "seed {seed:#x}");
        }
    }

    #[test]
    fn stream_keys_never_change() {
        assert_eq!(stream_key(1, 2, 3), 0x3a19_73a8_f6ab_c06d);
        assert_eq!(stream_key(7, 0, 0), 0x4f43_813a_3162_336c);
        let mut g = Xoshiro256PlusPlus::stream(1, 2, 3);
        assert_eq!(
            [g.next_u64(), g.next_u64(), g.next_u64()],
            [
                0x513e_5772_ddac_1005,
                0xda30_4f97_7128_788d,
                0x1f2a_c755_ae45_4fc0
            ]
        );
        assert_ne!(stream_key(1, 2, 3), stream_key(1, 2, 4));
        assert_ne!(stream_key(1, 2, 3), stream_key(1, 3, 3));
        assert_ne!(stream_key(1, 2, 3), stream_key(2, 2, 3));
    }

    #[test]
    fn plus_plus_draws_never_change() {
        let mut g = Xoshiro256PlusPlus::new(7);
        assert_eq!(g.f64().to_bits(), 0x3fac_5834_0055_5d20);
        assert_eq!(g.f64_open0().to_bits(), 0x3fc6_07e4_6efd_2750);
        assert_eq!(g.below(13), 9);
        assert!(g.chance(0.5));
        assert_eq!(g.pareto(1.5).to_bits(), 0x3ff0_6656_ddd1_e180);
        assert_eq!(g.zipf_rank(100, 1.5), 1);
        assert_eq!(g.zipf_rank(10, 1.0), 4);
        assert_eq!(g.zipf_rank(10, 0.9), 1);
    }

    #[test]
    fn plus_plus_draws_are_in_range() {
        let mut g = Xoshiro256PlusPlus::new(7);
        for _ in 0..10_000 {
            let x = g.f64();
            assert!((0.0..1.0).contains(&x));
            let y = g.f64_open0();
            assert!(y > 0.0 && y <= 1.0);
            assert!(g.below(13) < 13);
            assert!(g.pareto(1.5) >= 1.0);
            assert!(g.zipf_rank(10, 0.9) < 10);
            assert!(g.zipf_rank(10, 1.0) < 10);
            assert_eq!(g.zipf_rank(1, 2.0), 0);
        }
    }

    #[test]
    fn star_star_outputs_never_change() {
        let cases: [(u64, [u64; 4], [u64; 4]); 4] = [
            (
                0,
                [
                    0x99ec_5f36_cb75_f2b4,
                    0xbf6e_1f78_4956_452a,
                    0x1a5f_849d_4933_e6e0,
                    0x6aa5_94f1_262d_2d2c,
                ],
                [601, 747, 103, 416],
            ),
            (
                1,
                [
                    0xb3f2_af6d_0fc7_10c5,
                    0x853b_5596_4736_4cea,
                    0x92f8_9756_082a_4514,
                    0x642e_1c7b_c266_a3a7,
                ],
                [702, 520, 574, 391],
            ),
            (
                42,
                [
                    0x1578_0b2e_0c2e_c716,
                    0x6104_d986_6d11_3a7e,
                    0xae17_5332_39e4_99a1,
                    0xecb8_ad47_03b3_60a1,
                ],
                [83, 378, 680, 924],
            ),
            (
                0xdead_beef_cafe_f00d,
                [
                    0x9e32_cfb5_bb93_eebb,
                    0x1600_6bd9_d4ac_0014,
                    0x8ada_5d6d_34b6_538e,
                    0x7c32_7ca3_2346_a238,
                ],
                [617, 85, 542, 485],
            ),
        ];
        for (seed, outputs, below_1000) in cases {
            let mut g = Xoshiro256StarStar::new(seed);
            assert_eq!(outputs.map(|_| g.next_u64()), outputs, "seed {seed:#x}");
            let mut g = Xoshiro256StarStar::new(seed);
            assert_eq!(
                below_1000.map(|_| g.below(1000)),
                below_1000,
                "seed {seed:#x}"
            );
        }
    }
}
