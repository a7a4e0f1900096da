//! Where the simulator's curves are read: the 100 points of every curve (`k_j = ceil(j·R/100)`)
//! and the percentages the table reports. Both the measures and the reference's ideal impact
//! curve are taken at these points, so they live apart from either.

/// Points per curve: `k = ceil(j·R/100)` for `j = 1..=100`.
pub const POINTS: usize = 100;

/// The percentages the table reports (FICA Fig. 3's 15%, IECA Table II's 45%).
pub const TABLE_PERCENTS: [usize; 5] = [5, 10, 15, 25, 45];

/// `k_j = ceil(j·R/100)`.
pub fn checkpoints(reachable: u64) -> Vec<u64> {
    (1..=POINTS as u64)
        .map(|j| (j * reachable).div_ceil(POINTS as u64))
        .collect()
}
