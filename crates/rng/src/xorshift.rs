//! xorshift64 (Marsaglia, "Xorshift RNGs", Journal of Statistical Software 2003, shifts
//! 13, 7, 17): three shifts and three xors per number.
//!
//! Statistically the weakest generator here (it fails several standard test batteries), kept only
//! because the synthetic graphs of the benchmarks and of some tests are defined by its
//! output: the benchmark numbers in `docs/performance.md` were measured on those graphs.
//! Prefer [`SplitMix64`](crate::SplitMix64) for anything new.

/// The xorshift64 generator (13, 7, 17). Its state must not be 0 (0 maps to 0 forever).
#[derive(Debug, Clone)]
pub struct XorShift64 {
    state: u64,
}

impl XorShift64 {
    /// A generator starting from state `seed`, which must not be 0.
    pub fn new(seed: u64) -> Self {
        debug_assert!(seed != 0, "xorshift64's state must not be 0");
        Self { state: seed }
    }

    /// The next 64 bits: the new state.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values computed from the code this replaced (the inline generators of the
    // simulator's and the crawler's benchmarks): any change here changes their graphs.
    #[test]
    fn outputs_never_change() {
        let mut g = XorShift64::new(0x9e37_79b9_7f4a_7c15);
        assert_eq!(
            [g.next_u64(), g.next_u64(), g.next_u64(), g.next_u64()],
            [
                0xdc1b_77ae_0bf3_4dad,
                0x64f0_eeb9_026e_6076,
                0x7b07_ce91_e590_6136,
                0x305f_050c_368d_cc74
            ]
        );
        let mut g = XorShift64::new(1);
        assert_eq!(
            [g.next_u64(), g.next_u64(), g.next_u64(), g.next_u64()],
            [
                0x0000_0000_4082_2041,
                0x1000_4106_0c01_1441,
                0x9b1e_842f_6e86_2629,
                0xf554_f503_555d_8025
            ]
        );
    }
}
