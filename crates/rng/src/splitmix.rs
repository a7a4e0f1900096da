//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014): a Weyl sequence (the state advances by a fixed odd constant) passed through a
//! bijective 64-bit mixer.
//!
//! Three forms of the same algorithm are used across the project, so all three live here:
//! the mixer alone ([`mix64`], to combine keys), the first output from a given state
//! ([`splitmix64`], a stateless hash of one value), and the generator ([`SplitMix64`]).

/// The Weyl increment of SplitMix64: `2^64 / φ` rounded to odd.
pub(crate) const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a bijective 64-bit mixer (`mix64(0) == 0`).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The first output of SplitMix64 from state `x` (`SplitMix64::new(x).next_u64()`): a cheap,
/// well-mixed, bijective hash of one 64-bit value.
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    mix64(x.wrapping_add(GOLDEN_GAMMA))
}

/// The SplitMix64 generator: one `u64` of state, period 2^64. Also what seeds the xoshiro
/// generators' 256-bit states.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from state `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift: the bias is below `n / 2^64`); `n > 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values computed from the implementations this module replaced (graph
    // statistics' `SplitMix64`, the test web's `mix64`, the generator's `mix64`): any change
    // here changes sampled statistics, injected errors and every generated graph.

    #[test]
    fn generator_outputs_never_change() {
        let cases: [(u64, [u64; 4], [u64; 4]); 4] = [
            (
                0,
                [
                    0xe220_a839_7b1d_cdaf,
                    0x6e78_9e6a_a1b9_65f4,
                    0x06c4_5d18_8009_454f,
                    0xf88b_b8a8_724c_81ec,
                ],
                [883, 431, 26, 970],
            ),
            (
                1,
                [
                    0x910a_2dec_8902_5cc1,
                    0xbeeb_8da1_658e_ec67,
                    0xf893_a2ee_fb32_555e,
                    0x71c1_8690_ee42_c90b,
                ],
                [566, 745, 971, 444],
            ),
            (
                42,
                [
                    0xbdd7_3226_2feb_6e95,
                    0x28ef_e333_b266_f103,
                    0x4752_6757_130f_9f52,
                    0x581c_e1ff_0e4a_e394,
                ],
                [741, 159, 278, 344],
            ),
            (
                0xdead_beef_cafe_f00d,
                [
                    0x901d_4f65_2fb4_72cb,
                    0xa7ce_2464_40f7_4527,
                    0x19b4_0bbb_b938_0d34,
                    0xe7a8_6dc5_be61_8392,
                ],
                [562, 655, 100, 904],
            ),
        ];
        for (seed, outputs, below_1000) in cases {
            let mut g = SplitMix64::new(seed);
            assert_eq!(outputs.map(|_| g.next_u64()), outputs, "seed {seed:#x}");
            let mut g = SplitMix64::new(seed);
            assert_eq!(
                below_1000.map(|_| g.below(1000)),
                below_1000,
                "seed {seed:#x}"
            );
            assert_eq!(splitmix64(seed), outputs[0], "seed {seed:#x}");
        }
    }

    #[test]
    fn mixer_outputs_never_change() {
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
        assert_eq!(mix64(42), 0xa759_ea27_d472_7622);
        assert_eq!(mix64(0xdead_beef_cafe_f00d), 0x1910_4ae2_406d_51c3);
        assert_eq!(mix64(GOLDEN_GAMMA), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn below_stays_below() {
        let mut g = SplitMix64::new(7);
        for n in [1, 2, 3, 1000, u64::MAX] {
            for _ in 0..1000 {
                assert!(g.below(n) < n);
            }
        }
    }
}
