//! The statistics of repeated experiments (docs/algorithms.md §4.1): the mean, the sample
//! standard deviation and a Student-t 95% confidence interval of a measure over seed sets,
//! and the two-sided Wilcoxon signed-rank test of two policies paired by seed set.
//!
//! Written here rather than taken from a crate because the simulator and the offline frontier
//! ranking need only these few functions, and each is checked against textbook values in the
//! tests below.
#![warn(missing_docs)]

/// Mean, sample standard deviation and 95% confidence interval of the mean of some values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// How many values.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation (divisor `n − 1`; 0 for one value).
    pub sd: f64,
    /// Half the width of the 95% interval: `t(0.975, n − 1) · sd / √n` (0 for one value).
    pub half_width: f64,
}

impl Interval {
    /// The interval of `values` (at least one).
    pub fn of(values: &[f64]) -> Self {
        let n = values.len();
        assert!(n > 0, "an interval of no values");
        let mean = values.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Self {
                n,
                mean,
                sd: 0.0,
                half_width: 0.0,
            };
        }
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        Self {
            n,
            mean,
            sd,
            half_width: t_quantile_975(n - 1) * sd / (n as f64).sqrt(),
        }
    }

    /// The interval's lower end.
    pub fn low(&self) -> f64 {
        self.mean - self.half_width
    }

    /// The interval's upper end.
    pub fn high(&self) -> f64 {
        self.mean + self.half_width
    }

    /// The cells `summary-stats.csv` ends its rows with, comma-separated: `n`, the mean, the
    /// sd and the interval's low and high ends.
    pub fn csv_cells(&self) -> String {
        let (n, mean, sd) = (self.n, self.mean, self.sd);
        format!("{n},{mean},{sd},{},{}", self.low(), self.high())
    }
}

/// Two measures paired by run (seed set or split): how often each is higher, and the
/// Wilcoxon p-value of their differences.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wins {
    /// Runs where the first is higher.
    pub a_wins: usize,
    /// Runs where the second is higher.
    pub b_wins: usize,
    /// Runs where they are equal.
    pub ties: usize,
    /// Two-sided Wilcoxon signed-rank p-value of the differences ([`wilcoxon_p`]).
    pub p: f64,
}

impl Wins {
    /// Compares `a` and `b` run by run (`a[i]` with `b[i]`); runs where either is not a
    /// number (a measure undefined there) are left out, so the counts may sum to fewer runs.
    pub fn of(a: &[f64], b: &[f64]) -> Self {
        let d: Vec<f64> = a
            .iter()
            .zip(b)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| x - y)
            .collect();
        Self {
            a_wins: d.iter().filter(|&&x| x > 0.0).count(),
            b_wins: d.iter().filter(|&&x| x < 0.0).count(),
            ties: d.iter().filter(|&&x| x == 0.0).count(),
            p: wilcoxon_p(&d),
        }
    }

    /// The runs compared.
    pub fn runs(&self) -> usize {
        self.a_wins + self.b_wins + self.ties
    }
}

/// One paired comparison of two methods (or policies) on one measure at one point `at` of
/// their curves, as a repeated experiment reports it in its `paired.csv`. What `at` is depends
/// on the experiment: the offline frontier ranking's `x` in per mille of the test frontier,
/// the simulator's checkpoint in % crawled (`None` for τ_b).
#[derive(Debug, Clone, PartialEq)]
pub struct Paired<X> {
    /// The measure compared.
    pub measure: &'static str,
    /// Where on the curves.
    pub at: X,
    /// The first method.
    pub a: String,
    /// The second method.
    pub b: String,
    /// Runs won by each, ties, and the Wilcoxon p-value of `a − b`.
    pub wins: Wins,
}

impl<X> Paired<X> {
    /// The cells every `paired.csv` ends its row with, comma-separated: `a`, `b`, the runs
    /// compared, the wins of each, the ties and the p-value (method names hold no comma).
    pub fn csv_cells(&self) -> String {
        let w = &self.wins;
        format!(
            "{},{},{},{},{},{},{}",
            self.a,
            self.b,
            w.runs(),
            w.a_wins,
            w.b_wins,
            w.ties,
            w.p
        )
    }
}

/// The pairs of `n` methods a repeated experiment compares: with `baseline` (an index below
/// `n`) each other method against it, `(method, baseline)`; without, every unordered pair
/// `(a, b)` with `a < b`, in index order.
pub fn pairs(n: usize, baseline: Option<usize>) -> Vec<(usize, usize)> {
    match baseline {
        Some(b) => (0..n).filter(|&a| a != b).map(|a| (a, b)).collect(),
        None => (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect(),
    }
}

/// `t(0.975, df)` for 1 ≤ df ≤ 30 (to three decimals, as printed tables give it).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 0.975 quantile of Student's t with `df` degrees of freedom (`df ≥ 1`): the table for
/// `df ≤ 30`, above that the Cornish–Fisher expansion around the normal quantile 1.959964
/// (error below 10⁻⁴).
pub fn t_quantile_975(df: usize) -> f64 {
    assert!(df >= 1, "t with no degrees of freedom");
    if df <= T_975.len() {
        return T_975[df - 1];
    }
    let z: f64 = 1.959_963_984_540_054;
    let v = df as f64;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
}

/// Up to this many non-zero differences the Wilcoxon p-value is exact; above, it is the
/// normal approximation.
pub const WILCOXON_EXACT_MAX: usize = 25;

/// The two-sided p-value of the Wilcoxon signed-rank test of the paired differences `d`
/// (`a − b` per seed set). Zero differences are dropped (Wilcoxon's rule); tied absolute
/// differences get their mean rank. With no non-zero difference the p-value is 1. With at most
/// [`WILCOXON_EXACT_MAX`] non-zero differences the p-value is exact (the distribution of
/// `W+` over all 2ⁿ sign assignments of the given ranks, ties included); above, the normal
/// approximation with the tie-corrected variance and no continuity correction.
pub fn wilcoxon_p(d: &[f64]) -> f64 {
    let nonzero: Vec<f64> = d.iter().copied().filter(|&x| x != 0.0).collect();
    let n = nonzero.len();
    if n == 0 {
        return 1.0;
    }
    // Ranks of |d|, doubled so that mean ranks of ties stay integers.
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&i, &j| nonzero[i].abs().total_cmp(&nonzero[j].abs()));
    let mut rank2 = vec![0u64; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && nonzero[idx[j + 1]].abs() == nonzero[idx[i]].abs() {
            j += 1;
        }
        // Ranks i+1..=j+1, mean (i + j + 2) / 2, doubled: i + j + 2.
        for &k in &idx[i..=j] {
            rank2[k] = (i + j + 2) as u64;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let w2: u64 = (0..n).filter(|&k| nonzero[k] > 0.0).map(|k| rank2[k]).sum();
    if n <= WILCOXON_EXACT_MAX {
        exact_p(&rank2, w2)
    } else {
        normal_p(n, tie_term, w2 as f64 / 2.0)
    }
}

/// Exact two-sided p-value of `W+` (doubled: `w2`) given the doubled ranks.
fn exact_p(rank2: &[u64], w2: u64) -> f64 {
    let total: u64 = rank2.iter().sum();
    // counts[s] = number of sign assignments whose doubled W+ is s.
    let mut counts = vec![0f64; total as usize + 1];
    counts[0] = 1.0;
    let mut reach = 0usize;
    for &r in rank2 {
        let r = r as usize;
        for s in (0..=reach).rev() {
            if counts[s] > 0.0 {
                counts[s + r] += counts[s];
            }
        }
        reach += r;
    }
    let all = 2f64.powi(rank2.len() as i32);
    let w = w2 as usize;
    let low: f64 = counts[..=w].iter().sum();
    let high: f64 = counts[w..].iter().sum();
    (2.0 * low.min(high) / all).min(1.0)
}

/// Normal approximation: mean n(n+1)/4, variance n(n+1)(2n+1)/24 − Σ(t³−t)/48.
fn normal_p(n: usize, tie_term: f64, w: f64) -> f64 {
    let n = n as f64;
    let mean = n * (n + 1.0) / 4.0;
    let var = n * (n + 1.0) * (2.0 * n + 1.0) / 24.0 - tie_term / 48.0;
    if var <= 0.0 {
        return 1.0;
    }
    let z = (w - mean).abs() / var.sqrt();
    (2.0 * normal_upper_tail(z)).min(1.0)
}

/// `P(Z > z)` for a standard normal `Z`, `z ≥ 0` (erfc by W. J. Cody's rational
/// approximation as in Numerical Recipes' `erfcc`, relative error below 1.2·10⁻⁷).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = -x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    0.5 * t * poly.exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) {
        assert!((a - b).abs() <= eps, "{a} is not {b} ± {eps}");
    }

    #[test]
    fn mean_sd_and_interval_of_a_textbook_sample() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
        let i = Interval::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        close(i.mean, 5.0, 1e-12);
        close(i.sd, (32.0f64 / 7.0).sqrt(), 1e-12);
        close(
            i.half_width,
            2.365 * (32.0f64 / 7.0).sqrt() / 8f64.sqrt(),
            1e-12,
        );
        close(i.low() + i.high(), 10.0, 1e-12);
        let one = Interval::of(&[0.25]);
        assert_eq!((one.mean, one.sd, one.half_width), (0.25, 0.0, 0.0));
        let same = Interval::of(&[0.5; 7]);
        assert_eq!((same.sd, same.half_width), (0.0, 0.0));
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, t) in [(1, 12.706), (2, 4.303), (9, 2.262), (30, 2.042)] {
            close(t_quantile_975(df), t, 1e-9);
        }
        // Beyond the table: t(0.975, 40) = 2.0211, 60 → 2.0003, 120 → 1.9799.
        close(t_quantile_975(31), 2.0395, 2e-4);
        close(t_quantile_975(40), 2.0211, 2e-4);
        close(t_quantile_975(60), 2.0003, 2e-4);
        close(t_quantile_975(120), 1.9799, 2e-4);
        assert!(t_quantile_975(100_000) > 1.95996 && t_quantile_975(100_000) < 1.9601);
    }

    #[test]
    fn wilcoxon_exact_values() {
        // All n differences of one sign: p = 2 / 2^n.
        close(wilcoxon_p(&[1.0, 2.0, 3.0, 4.0, 5.0]), 0.0625, 1e-15);
        close(wilcoxon_p(&[-0.1; 10]), 2.0 / 1024.0, 1e-15); // ties: all ranks 5.5
        let ten: Vec<f64> = (1..=10).map(|x| x as f64 * 0.01).collect();
        close(wilcoxon_p(&ten), 2.0 / 1024.0, 1e-15);
        // Darwin's Zea mays differences (Fisher 1935; SciPy's wilcoxon example): W+ = 96,
        // W− = 24, exact two-sided p = 0.041259765625.
        let darwin = [
            6.0, 8.0, 14.0, 16.0, 23.0, 24.0, 28.0, 29.0, 41.0, -48.0, 49.0, 56.0, 60.0, -67.0,
            75.0,
        ];
        close(wilcoxon_p(&darwin), 0.041_259_765_625, 1e-12);
        // n = 8, W+ = 3 (ranks 1 and 2 negative... here: −1, −2 and +3..+8 → W− = 3):
        // P(W ≤ 3) = 5/256 (subsets of 1..8 summing to ≤ 3: {}, 1, 2, 3, 12), p = 10/256.
        let d = [-1.0, -2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        close(wilcoxon_p(&d), 10.0 / 256.0, 1e-15);
        // Symmetric signs: p = 1.
        close(wilcoxon_p(&[1.0, -1.0, 2.0, -2.0]), 1.0, 1e-15);
        // Zeros only: every pair tied.
        assert_eq!(wilcoxon_p(&[0.0; 12]), 1.0);
    }

    #[test]
    fn an_interval_row_ends_with_n_mean_sd_and_the_ends() {
        let i = Interval::of(&[2.0]);
        assert_eq!(i.csv_cells(), "1,2,0,2,2");
    }

    #[test]
    fn a_paired_row_ends_with_the_names_counts_and_p() {
        let row = Paired {
            measure: "mass",
            at: Some(10),
            a: "fica".into(),
            b: "bfs".into(),
            wins: Wins::of(&[0.5, 0.4, 0.3], &[0.4, 0.4, 0.2]),
        };
        assert_eq!(row.csv_cells(), "fica,bfs,3,2,0,1,0.5");
    }

    #[test]
    fn wins_of_a_tie_and_of_a_dominating_measure() {
        // Two policies that tie exactly: no wins, p = 1.
        let a = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
        let w = Wins::of(&a, &a);
        assert_eq!((w.a_wins, w.b_wins, w.ties, w.p), (0, 0, 6, 1.0));
        // One that dominates in all ten runs: 10 wins, exact p = 2/1024.
        let b: Vec<f64> = (0..10).map(|i| 0.1 * i as f64).collect();
        let c: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(i, x)| x + 0.01 * (i + 1) as f64)
            .collect();
        let w = Wins::of(&c, &b);
        assert_eq!((w.a_wins, w.b_wins, w.ties), (10, 0, 0));
        close(w.p, 2.0 / 1024.0, 1e-15);
        // Runs where a measure is undefined are left out.
        let w = Wins::of(&[1.0, f64::NAN, 3.0], &[0.0, 1.0, 2.0]);
        assert_eq!((w.a_wins, w.runs()), (2, 2));
    }

    #[test]
    fn wilcoxon_ties_are_exact_over_mean_ranks() {
        // |d| = 1, 1, 2: ranks 1.5, 1.5, 3; signs +, +, −: W+ = 3 of 6. The 8 sign patterns give
        // W+ = 0, 1.5, 1.5, 3, 3, 4.5, 4.5, 6: P(W+ ≤ 3) = 4/8, P(W+ ≥ 3) = 5/8 → p = 1.
        close(wilcoxon_p(&[1.0, 1.0, -2.0]), 1.0, 1e-15);
        // |d| = 1, 1, 1, 1 all positive: W+ = 10, only the one pattern → p = 2/16.
        close(wilcoxon_p(&[1.0; 4]), 0.125, 1e-15);
    }

    #[test]
    fn wilcoxon_normal_approximation() {
        // 30 differences +1..+30 except ranks 1..5 negative: W− = 15, W+ = 450.
        let d: Vec<f64> = (1..=30)
            .map(|x| if x <= 5 { -(x as f64) } else { x as f64 })
            .collect();
        // mean 232.5, variance 30·31·61/24 = 2363.75: z = 217.5 / 48.619 = 4.4736.
        let z: f64 = 217.5 / 2363.75f64.sqrt();
        let p = wilcoxon_p(&d);
        close(p, 2.0 * 0.5 * libm_erfc(z / std::f64::consts::SQRT_2), 1e-9);
        close(p, 7.69e-6, 0.02e-6);
        // The tail itself: P(Z > 1.959964) = 0.025, P(Z > 1) = 0.158655.
        close(normal_upper_tail(1.959_963_985), 0.025, 1e-7);
        close(normal_upper_tail(1.0), 0.158_655_254, 1e-7);
        close(normal_upper_tail(0.0), 0.5, 1e-7);
    }

    /// erfc by its series for the check above (slow, exact to 1e-15 for moderate x).
    fn libm_erfc(x: f64) -> f64 {
        // erfc(x) = 1 − erf(x); erf by the Maclaurin series.
        let mut sum = 0.0;
        let mut term = x;
        let mut k = 0.0;
        while term.abs() > 1e-18 || k < 10.0 {
            sum += term / (2.0 * k + 1.0);
            k += 1.0;
            term *= -x * x / k;
            if k > 400.0 {
                break;
            }
        }
        1.0 - 2.0 / std::f64::consts::PI.sqrt() * sum
    }

    #[test]
    fn pairs_against_a_baseline_and_all_pairs() {
        assert_eq!(super::pairs(3, None), vec![(0, 1), (0, 2), (1, 2)]);
        assert_eq!(super::pairs(3, Some(1)), vec![(0, 1), (2, 1)]);
        assert_eq!(super::pairs(1, None), vec![]);
    }
}
