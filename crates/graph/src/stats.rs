//! Statistics of a graph: what `crawlrank info` prints and what the generator's documentation
//! compares against real crawls.
//!
//! [`GraphStats::compute`] makes one sequential pass over any `webgraph` [`SequentialGraph`]
//! (a [`BvRandom`](crate::bv::BvRandom) from [`BvWebGraph::bv`](crate::BvWebGraph::bv), a
//! `BvGraphSeq`, a `VecGraph`, …) and [`GraphStats::compute_csr`] the same over a [`Csr`].
//! Both keep O(n) memory: one `u32` in-degree counter per node plus, if host ids are given,
//! one counter per host. The degree distributions are kept as [`Log2Histogram`]s (for tables
//! and plots) together with a power-law tail fit.
//!
//! Two optional, costlier measures need random access to the graph (a [`Csr`] in memory, or
//! the compressed [`BvWebGraph`](crate::BvWebGraph) itself, through [`Successors`]):
//! [`GraphStats::with_reachability`] (BFS from a deterministic sample of random start nodes)
//! and [`GraphStats::with_scc`] (strongly connected components by an iterative Tarjan, O(n)
//! extra memory, one sweep of the arcs).
//!
//! ```no_run
//! # use crawlrank_graph::{stats::GraphStats, BvWebGraph, Cache};
//! # fn main() -> anyhow::Result<()> {
//! let g = BvWebGraph::open("cnr-2000".as_ref(), &Cache::from_env())?;
//! let csr = g.to_csr()?;
//! let stats = GraphStats::compute(g.bv(), None)?
//!     .with_reachability(&csr, 100, 0)
//!     .with_scc(&csr);
//! println!("{stats}");
//! # Ok(()) }
//! ```

use crate::access::Successors;
use crate::csr::Csr;
use crate::visit::{self, Bfs};
use anyhow::{ensure, Result};
use crawlrank_rng::SplitMix64;
use lender::prelude::*;
use std::fmt;
use webgraph::prelude::SequentialGraph;

/// Counts of values in power-of-two bins: bin 0 holds the value 0 and bin `i ≥ 1` the values
/// in `[2^(i-1), 2^i)`, i.e. `1`, `2–3`, `4–7`, `8–15`, …
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log2Histogram {
    /// `counts[i]` = how many values fell in bin `i` (trailing empty bins are not stored).
    pub counts: Vec<u64>,
}

impl Log2Histogram {
    /// The bin of value `v`.
    #[inline]
    pub fn bin_of(v: u64) -> usize {
        (u64::BITS - v.leading_zeros()) as usize
    }

    /// The smallest and largest value of bin `i` (both inclusive).
    pub fn bin_range(i: usize) -> (u64, u64) {
        match i {
            0 => (0, 0),
            64 => (1 << 63, u64::MAX),
            _ => (1 << (i - 1), (1u64 << i) - 1),
        }
    }

    /// Counts one value.
    #[inline]
    pub fn add(&mut self, v: u64) {
        self.add_n(v, 1);
    }

    /// Counts `n` occurrences of value `v`.
    pub fn add_n(&mut self, v: u64, n: u64) {
        let b = Self::bin_of(v);
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += n;
    }

    /// Number of values counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The non-empty bins as `(lowest value, highest value, count)`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, hi) = Self::bin_range(i);
                (lo, hi, c)
            })
    }

    /// The label of bin `i`: `0`, `1`, `2-3`, `4-7`, …
    pub fn bin_label(i: usize) -> String {
        match Self::bin_range(i) {
            (lo, hi) if lo == hi => lo.to_string(),
            (lo, hi) => format!("{lo}-{hi}"),
        }
    }
}

/// A power-law fit `P(X = x) ∝ x^(-alpha)` of the tail `x ≥ x_min` of a distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerLawTail {
    /// The exponent (the in-degree of web graphs typically has 2.0–2.2).
    pub alpha: f64,
    /// Where the tail starts (chosen to minimise the Kolmogorov–Smirnov distance).
    pub x_min: u64,
    /// How many values are `≥ x_min`.
    pub tail_len: u64,
    /// The Kolmogorov–Smirnov distance between the tail and the fitted law.
    pub ks: f64,
}

/// Summary of one distribution of non-negative integers (out-degrees, in-degrees, host sizes).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Distribution {
    /// Number of values.
    pub count: u64,
    /// Smallest value (0 if there is none).
    pub min: u64,
    /// Largest value (0 if there is none).
    pub max: u64,
    /// The index of an element reaching `max` (the first one; e.g. a node id).
    pub argmax: u64,
    /// Sum of the values.
    pub sum: u64,
    /// Log2-binned counts.
    pub histogram: Log2Histogram,
    /// Power-law fit of the tail, when there are enough distinct values (see
    /// [`fit_power_law`]).
    pub tail: Option<PowerLawTail>,
}

impl Distribution {
    /// The mean value (0 for an empty distribution).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The summary of `values` (`values[i]` is the value of element `i`).
    pub fn of<T: Copy + Into<u64>>(values: &[T]) -> Self {
        let mut b = DistBuilder::default();
        for (i, &v) in values.iter().enumerate() {
            b.add(i as u64, v.into());
        }
        b.finish()
    }
}

/// Accumulates a [`Distribution`] with exact value counts (O(max value) memory).
#[derive(Default)]
struct DistBuilder {
    d: Distribution,
    exact: Vec<u64>,
}

impl DistBuilder {
    #[inline]
    fn add(&mut self, index: u64, v: u64) {
        let d = &mut self.d;
        if d.count == 0 || v < d.min {
            d.min = v;
        }
        if d.count == 0 || v > d.max {
            d.max = v;
            d.argmax = index;
        }
        d.count += 1;
        d.sum += v;
        d.histogram.add(v);
        let v = v as usize;
        if self.exact.len() <= v {
            self.exact.resize((v + 1).max(self.exact.len() * 2), 0);
        }
        self.exact[v] += 1;
    }

    fn finish(mut self) -> Distribution {
        self.d.tail = fit_power_law(&self.exact);
        self.d
    }
}

/// Fits a discrete power law to the tail of a distribution given by exact counts
/// (`counts[x]` = how many times the value `x` occurs), following Clauset, Shalizi and Newman
/// (2009): for each candidate `x_min` the exponent is the (approximate, discrete) maximum
/// likelihood estimate `alpha = 1 + m / Σ ln(x_i / (x_min − ½))` over the `m` values
/// `x_i ≥ x_min`, and the `x_min` kept is the one whose fit has the smallest
/// Kolmogorov–Smirnov distance to the data. Candidates leave at least 50 values in the tail.
/// Returns `None` when no candidate does.
pub fn fit_power_law(counts: &[u64]) -> Option<PowerLawTail> {
    const MIN_TAIL: u64 = 50;
    // Distinct positive values and their counts, ascending.
    let vals: Vec<(u64, u64)> = counts
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, &c)| c > 0)
        .map(|(x, &c)| (x as u64, c))
        .collect();
    // Suffix sums: tail size and Σ c·ln x from each distinct value on.
    let mut tail_n = vec![0u64; vals.len() + 1];
    let mut tail_ln = vec![0f64; vals.len() + 1];
    for i in (0..vals.len()).rev() {
        let (x, c) = vals[i];
        tail_n[i] = tail_n[i + 1] + c;
        tail_ln[i] = tail_ln[i + 1] + c as f64 * (x as f64).ln();
    }
    let mut best: Option<PowerLawTail> = None;
    let mut last_candidate = 0u64;
    for i in 0..vals.len() {
        let (x_min, _) = vals[i];
        let m = tail_n[i];
        if m < MIN_TAIL {
            break;
        }
        // Beyond 100, try x_min on a geometric grid (×1.05) to bound the cost.
        if x_min > 100 && (x_min as f64) < last_candidate as f64 * 1.05 {
            continue;
        }
        last_candidate = x_min;
        let shift = (x_min as f64 - 0.5).ln();
        let denom = tail_ln[i] - m as f64 * shift;
        if denom <= 0.0 {
            continue;
        }
        let alpha = 1.0 + m as f64 / denom;
        // KS distance with the continuous approximation P(X ≥ x) = ((x−½)/(x_min−½))^(1−α).
        let mut ks = 0f64;
        let mut seen = 0u64;
        for &(x, c) in &vals[i..] {
            let model_ge = ((x as f64 - 0.5) / (x_min as f64 - 0.5)).powf(1.0 - alpha);
            let emp_ge = (m - seen) as f64 / m as f64;
            ks = ks.max((emp_ge - model_ge).abs());
            seen += c;
        }
        if best.is_none_or(|b| ks < b.ks) {
            best = Some(PowerLawTail {
                alpha,
                x_min,
                tail_len: m,
                ks,
            });
        }
    }
    best
}

/// Host-level statistics, given a host id per node.
#[derive(Debug, Clone, PartialEq)]
pub struct HostStats {
    /// Number of distinct host ids.
    pub hosts: u64,
    /// Arcs whose two ends have the same host (self-loops included).
    pub intra_host_arcs: u64,
    /// Pages per host.
    pub host_sizes: Distribution,
}

/// Reachability from random start nodes (see [`GraphStats::with_reachability`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Reachability {
    /// Number of start nodes (drawn uniformly with replacement).
    pub samples: usize,
    /// Seed of the draw.
    pub seed: u64,
    /// Mean over the start nodes of the fraction of nodes each reaches (itself included).
    pub mean_fraction: f64,
    /// Median of the same fractions.
    pub median_fraction: f64,
    /// Smallest of the same fractions.
    pub min_fraction: f64,
    /// Largest of the same fractions.
    pub max_fraction: f64,
    /// Fraction of the start nodes that reach at least a tenth of the graph (in a bow-tie web
    /// these are the starts in the giant SCC or its IN set).
    pub giant_start_fraction: f64,
    /// Fraction of the nodes reachable from at least one of the start nodes.
    pub union_fraction: f64,
}

/// Strongly connected components (see [`GraphStats::with_scc`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SccStats {
    /// Number of components.
    pub components: u64,
    /// Nodes in the largest one.
    pub largest: u64,
}

/// Statistics of a directed graph. Build it with [`GraphStats::compute`] (any `webgraph`
/// sequential graph) or [`GraphStats::compute_csr`]; print it with `Display`.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphStats {
    /// Number of nodes.
    pub nodes: u64,
    /// Number of arcs (self-loops included).
    pub arcs: u64,
    /// Nodes with outdegree 0.
    pub dangling: u64,
    /// Arcs `(v, v)`.
    pub self_loops: u64,
    /// Nodes with in-degree 0.
    pub zero_indegree: u64,
    /// Out-degrees (`argmax` is a node of maximum outdegree).
    pub outdegree: Distribution,
    /// In-degrees (`argmax` is a node of maximum in-degree).
    pub indegree: Distribution,
    /// Present when host ids were given.
    pub hosts: Option<HostStats>,
    /// Present after [`with_reachability`](Self::with_reachability).
    pub reachability: Option<Reachability>,
    /// Present after [`with_scc`](Self::with_scc).
    pub scc: Option<SccStats>,
}

/// The one-pass accumulator behind both `compute` functions.
struct Pass<'a> {
    n: usize,
    host_of: Option<&'a [u32]>,
    indeg: Vec<u32>,
    out: DistBuilder,
    self_loops: u64,
    intra: u64,
    next: usize,
}

impl<'a> Pass<'a> {
    fn new(n: usize, host_of: Option<&'a [u32]>) -> Result<Self> {
        ensure!(n < u32::MAX as usize, "{n} nodes do not fit 32-bit ids");
        if let Some(h) = host_of {
            ensure!(
                h.len() == n,
                "{} host ids given for a graph of {n} nodes",
                h.len()
            );
        }
        Ok(Self {
            n,
            host_of,
            indeg: vec![0; n],
            out: DistBuilder::default(),
            self_loops: 0,
            intra: 0,
            next: 0,
        })
    }

    #[inline]
    fn node(&mut self, v: usize, succ: impl IntoIterator<Item = usize>) -> Result<()> {
        ensure!(
            v == self.next && v < self.n,
            "the graph yielded node {v} where {} was expected",
            self.next
        );
        self.next += 1;
        let hv = self.host_of.map(|h| h[v]);
        let mut d = 0u64;
        for w in succ {
            ensure!(w < self.n, "node {v} links to {w}, outside 0..{}", self.n);
            d += 1;
            self.indeg[w] = self.indeg[w].saturating_add(1);
            if w == v {
                self.self_loops += 1;
            }
            if let (Some(hv), Some(h)) = (hv, self.host_of) {
                if h[w] == hv {
                    self.intra += 1;
                }
            }
        }
        self.out.add(v as u64, d);
        Ok(())
    }

    fn finish(self) -> Result<GraphStats> {
        ensure!(
            self.next == self.n,
            "the graph yielded {} nodes, expected {}",
            self.next,
            self.n
        );
        let outdegree = self.out.finish();
        let indegree = Distribution::of(&self.indeg);
        let zero_indegree = self.indeg.iter().filter(|&&d| d == 0).count() as u64;
        drop(self.indeg);
        let hosts = self.host_of.map(|h| host_stats(h, self.intra));
        Ok(GraphStats {
            nodes: self.n as u64,
            arcs: outdegree.sum,
            dangling: outdegree.histogram.counts.first().copied().unwrap_or(0),
            self_loops: self.self_loops,
            zero_indegree,
            outdegree,
            indegree,
            hosts,
            reachability: None,
            scc: None,
        })
    }
}

fn host_stats(host_of: &[u32], intra: u64) -> HostStats {
    let n = host_of.len();
    let max = host_of.iter().copied().max().map_or(0, |m| m as usize + 1);
    let sizes: Vec<u64> = if max <= 2 * n + 1024 {
        let mut sizes = vec![0u64; max];
        for &h in host_of {
            sizes[h as usize] += 1;
        }
        sizes.retain(|&s| s > 0);
        sizes
    } else {
        // Sparse ids: count runs in a sorted copy.
        let mut ids = host_of.to_vec();
        ids.sort_unstable();
        ids.chunk_by(|a, b| a == b)
            .map(|r| r.len() as u64)
            .collect()
    };
    HostStats {
        hosts: sizes.len() as u64,
        intra_host_arcs: intra,
        host_sizes: Distribution::of(&sizes),
    }
}

impl GraphStats {
    /// Degree, dangling, self-loop and (if `host_of` gives a host id per node) host statistics
    /// of `graph`, in one sequential pass and O(n) memory.
    pub fn compute(graph: &impl SequentialGraph, host_of: Option<&[u32]>) -> Result<Self> {
        let mut pass = Pass::new(graph.num_nodes(), host_of)?;
        let mut it = graph.iter();
        while let Some((v, succ)) = it.next() {
            pass.node(v, succ)?;
        }
        pass.finish()
    }

    /// The same as [`compute`](Self::compute), for a [`Csr`].
    pub fn compute_csr(graph: &Csr, host_of: Option<&[u32]>) -> Result<Self> {
        let mut pass = Pass::new(graph.num_nodes(), host_of)?;
        for v in 0..graph.num_nodes() {
            pass.node(v, graph.successors(v).iter().map(|&w| w as usize))?;
        }
        pass.finish()
    }

    /// Adds reachability statistics: a BFS from each of `samples` start nodes drawn uniformly
    /// (with replacement) by a [`SplitMix64`] generator seeded with `seed`, so the result is
    /// reproducible. Costs `samples` sweeps of the arcs and 4 bytes per node. `graph` must be
    /// the graph the statistics were computed on.
    pub fn with_reachability<G: Successors>(
        mut self,
        graph: &G,
        samples: usize,
        seed: u64,
    ) -> Self {
        self.reachability = Some(reachability(graph, samples, seed));
        self
    }

    /// Adds the number of strongly connected components and the size of the largest
    /// (iterative Tarjan: one sweep of the arcs, about 17 bytes per node).
    pub fn with_scc<G: Successors>(mut self, graph: &G) -> Self {
        self.scc = Some(scc(graph));
        self
    }

    /// Fraction of the nodes with outdegree 0.
    pub fn dangling_fraction(&self) -> f64 {
        ratio(self.dangling, self.nodes)
    }

    /// Fraction of the arcs that stay inside a host, when hosts are known.
    pub fn intra_host_fraction(&self) -> Option<f64> {
        self.hosts
            .as_ref()
            .map(|h| ratio(h.intra_host_arcs, self.arcs))
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Reachability from `samples` random start nodes (see [`GraphStats::with_reachability`]).
pub fn reachability<G: Successors>(graph: &G, samples: usize, seed: u64) -> Reachability {
    let n = graph.node_count();
    let mut rng = SplitMix64::new(seed);
    let starts: Vec<u32> = if n == 0 {
        Vec::new()
    } else {
        (0..samples).map(|_| rng.below(n as u64) as u32).collect()
    };
    let mut bfs = Bfs::new(n);
    let fractions: Vec<f64> = starts
        .iter()
        .map(|&s| bfs.visit(graph, &[s], |_, _| {}) as f64 / n as f64)
        .collect();
    let union = if starts.is_empty() {
        0.0
    } else {
        bfs.visit(graph, &starts, |_, _| {}) as f64 / n as f64
    };
    let k = fractions.len();
    let mean = if k == 0 {
        0.0
    } else {
        fractions.iter().sum::<f64>() / k as f64
    };
    let giant = fractions.iter().filter(|&&f| f >= 0.1).count();
    let mut sorted = fractions.clone();
    sorted.sort_by(f64::total_cmp);
    let median = match k {
        0 => 0.0,
        _ if k % 2 == 1 => sorted[k / 2],
        _ => (sorted[k / 2 - 1] + sorted[k / 2]) / 2.0,
    };
    Reachability {
        samples: k,
        seed,
        mean_fraction: mean,
        median_fraction: median,
        min_fraction: sorted.first().copied().unwrap_or(0.0),
        max_fraction: sorted.last().copied().unwrap_or(0.0),
        giant_start_fraction: ratio(giant as u64, k as u64),
        union_fraction: union,
    }
}

/// Strongly connected components: how many, and the largest ([`visit::strongly_connected_components`]).
pub fn scc<G: Successors>(graph: &G) -> SccStats {
    let (mut components, mut largest) = (0u64, 0u64);
    visit::strongly_connected_components(graph, |size| {
        components += 1;
        largest = largest.max(size);
    });
    SccStats {
        components,
        largest,
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(v: u64) -> String {
    let digits = v.to_string().into_bytes();
    let mut out = Vec::with_capacity(digits.len() + digits.len() / 3);
    for (i, &d) in digits.iter().rev().enumerate() {
        if i > 0 && i % 3 == 0 {
            out.push(b',');
        }
        out.push(d);
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

fn pct(a: u64, b: u64) -> String {
    format!("{:.2}%", 100.0 * ratio(a, b))
}

fn fmt_tail(t: &Option<PowerLawTail>) -> String {
    match t {
        Some(t) => format!(
            "power-law tail alpha {:.2} (x >= {}, {} values, KS {:.3})",
            t.alpha,
            thousands(t.x_min),
            thousands(t.tail_len),
            t.ks
        ),
        None => "power-law tail: too few values".into(),
    }
}

fn fmt_dist(f: &mut fmt::Formatter<'_>, name: &str, what: &str, d: &Distribution) -> fmt::Result {
    writeln!(
        f,
        "{name:<18}min {}  max {} ({what} {})  mean {:.2}",
        thousands(d.min),
        thousands(d.max),
        thousands(d.argmax),
        d.mean()
    )?;
    writeln!(f, "{:<18}{}", "", fmt_tail(&d.tail))
}

impl fmt::Display for GraphStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.nodes;
        writeln!(f, "{:<18}{}", "nodes", thousands(n))?;
        writeln!(
            f,
            "{:<18}{}  ({:.2} per node)",
            "arcs",
            thousands(self.arcs),
            ratio(self.arcs, n)
        )?;
        writeln!(
            f,
            "{:<18}{}  ({})",
            "dangling",
            thousands(self.dangling),
            pct(self.dangling, n)
        )?;
        writeln!(
            f,
            "{:<18}{}  ({} of nodes)",
            "self-loops",
            thousands(self.self_loops),
            pct(self.self_loops, n)
        )?;
        writeln!(
            f,
            "{:<18}{}  ({})",
            "in-degree 0",
            thousands(self.zero_indegree),
            pct(self.zero_indegree, n)
        )?;
        fmt_dist(f, "outdegree", "node", &self.outdegree)?;
        fmt_dist(f, "in-degree", "node", &self.indegree)?;
        if let Some(h) = &self.hosts {
            writeln!(f, "{:<18}{}", "hosts", thousands(h.hosts))?;
            writeln!(
                f,
                "{:<18}{}  ({} of arcs)",
                "intra-host arcs",
                thousands(h.intra_host_arcs),
                pct(h.intra_host_arcs, self.arcs)
            )?;
            fmt_dist(f, "pages per host", "host #", &h.host_sizes)?;
        }
        if let Some(r) = &self.reachability {
            writeln!(
                f,
                "{:<18}from {} random nodes (seed {}): mean {:.2}%, median {:.2}%, max {:.2}% \
                 of nodes reached",
                "reachability",
                r.samples,
                r.seed,
                100.0 * r.mean_fraction,
                100.0 * r.median_fraction,
                100.0 * r.max_fraction,
            )?;
            writeln!(
                f,
                "{:<18}{:.1}% of the starts reach >= 10% of nodes; all together reach {:.2}%",
                "",
                100.0 * r.giant_start_fraction,
                100.0 * r.union_fraction
            )?;
        }
        if let Some(s) = &self.scc {
            writeln!(
                f,
                "{:<18}{} components; largest {} nodes ({})",
                "SCCs",
                thousands(s.components),
                thousands(s.largest),
                pct(s.largest, n)
            )?;
        }
        // Degree distributions side by side.
        writeln!(f)?;
        writeln!(f, "{:<14}{:>14}{:>14}", "degree", "outdegree", "in-degree")?;
        let bins = self
            .outdegree
            .histogram
            .counts
            .len()
            .max(self.indegree.histogram.counts.len());
        let get = |h: &Log2Histogram, i: usize| h.counts.get(i).copied().unwrap_or(0);
        for i in 0..bins {
            writeln!(
                f,
                "{:<14}{:>14}{:>14}",
                Log2Histogram::bin_label(i),
                thousands(get(&self.outdegree.histogram, i)),
                thousands(get(&self.indegree.histogram, i))
            )?;
        }
        if let Some(h) = &self.hosts {
            writeln!(f)?;
            writeln!(f, "{:<14}{:>14}", "pages/host", "hosts")?;
            for (i, &c) in h.host_sizes.histogram.counts.iter().enumerate() {
                if c > 0 {
                    writeln!(f, "{:<14}{:>14}", Log2Histogram::bin_label(i), thousands(c))?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webgraph::prelude::VecGraph;

    fn sample() -> Csr {
        // 0 → 1, 2; 1 → 2; 2 → 0, 2 (loop); 3 → 0; 4 dangling; 5 → 5 (loop), 4
        Csr::from_arcs(
            6,
            &[
                (0, 1),
                (0, 2),
                (1, 2),
                (2, 0),
                (2, 2),
                (3, 0),
                (5, 5),
                (5, 4),
            ],
        )
    }

    #[test]
    fn log2_bins() {
        assert_eq!(Log2Histogram::bin_of(0), 0);
        assert_eq!(Log2Histogram::bin_of(1), 1);
        assert_eq!(Log2Histogram::bin_of(2), 2);
        assert_eq!(Log2Histogram::bin_of(3), 2);
        assert_eq!(Log2Histogram::bin_of(4), 3);
        assert_eq!(Log2Histogram::bin_of(u64::MAX), 64);
        assert_eq!(Log2Histogram::bin_range(3), (4, 7));
        assert_eq!(Log2Histogram::bin_range(64), (1 << 63, u64::MAX));
        assert_eq!(Log2Histogram::bin_label(2), "2-3");
        let mut h = Log2Histogram::default();
        for v in [0, 1, 1, 5, 6, 7, 100] {
            h.add(v);
        }
        assert_eq!(h.counts, vec![1, 2, 0, 3, 0, 0, 0, 1]);
        assert_eq!(h.total(), 7);
        assert_eq!(
            h.bins().collect::<Vec<_>>(),
            vec![(0, 0, 1), (1, 1, 2), (4, 7, 3), (64, 127, 1)]
        );
    }

    #[test]
    fn hand_graph() {
        let g = sample();
        let hosts = [0u32, 0, 0, 1, 1, 1];
        let s = GraphStats::compute_csr(&g, Some(&hosts)).unwrap();
        assert_eq!((s.nodes, s.arcs, s.dangling, s.self_loops), (6, 8, 1, 2));
        // In-degrees: 0:2, 1:1, 2:3, 3:0, 4:1, 5:1.
        assert_eq!(s.zero_indegree, 1);
        assert_eq!(
            (s.indegree.min, s.indegree.max, s.indegree.argmax),
            (0, 3, 2)
        );
        assert_eq!(
            (s.outdegree.min, s.outdegree.max, s.outdegree.argmax),
            (0, 2, 0)
        );
        assert!((s.outdegree.mean() - 8.0 / 6.0).abs() < 1e-12);
        assert_eq!(s.outdegree.histogram.counts, vec![1, 2, 3]);
        assert_eq!(s.indegree.histogram.counts, vec![1, 3, 2]);
        let h = s.hosts.as_ref().unwrap();
        assert_eq!(h.hosts, 2);
        // Only 3 → 0 crosses hosts.
        assert_eq!(h.intra_host_arcs, 7);
        assert_eq!((h.host_sizes.min, h.host_sizes.max), (3, 3));
        assert!((s.intra_host_fraction().unwrap() - 7.0 / 8.0).abs() < 1e-12);
        assert!((s.dangling_fraction() - 1.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn sequential_graph_and_csr_agree() {
        let g = sample();
        let mut vg = VecGraph::empty(g.num_nodes());
        vg.add_arcs(g.arcs().map(|(s, d)| (s as usize, d as usize)));
        let hosts = [7u32, 7, 9, 9, 3, 3];
        let a = GraphStats::compute(&vg, Some(&hosts)).unwrap();
        let b = GraphStats::compute_csr(&g, Some(&hosts)).unwrap();
        assert_eq!(a, b);
        // Sparse host ids are counted by sorting.
        let sparse = [0u32, 0, 4_000_000_000, 4_000_000_000, 5, 5];
        let c = GraphStats::compute_csr(&g, Some(&sparse)).unwrap();
        assert_eq!(c.hosts.unwrap().hosts, 3);
    }

    #[test]
    fn bad_host_ids_and_empty_graph() {
        let g = sample();
        assert!(GraphStats::compute_csr(&g, Some(&[0, 1])).is_err());
        let empty = Csr::from_lists(vec![]);
        let s = GraphStats::compute_csr(&empty, None)
            .unwrap()
            .with_reachability(&empty, 10, 1)
            .with_scc(&empty);
        assert_eq!((s.nodes, s.arcs, s.dangling), (0, 0, 0));
        assert_eq!(s.reachability.as_ref().unwrap().samples, 0);
        assert_eq!(
            s.scc,
            Some(SccStats {
                components: 0,
                largest: 0
            })
        );
        assert!(!s.to_string().is_empty());
    }

    #[test]
    fn strongly_connected_components() {
        // {0,1,2} is a cycle with a loop; 3 → 0; 4; 5 → 5, 4.
        let s = scc(&sample());
        assert_eq!(
            s,
            SccStats {
                components: 4,
                largest: 3
            }
        );
        // A long path (deep DFS) and a big cycle: no recursion to overflow.
        // From testkit's arc lists: in this crate's own tests, testkit's `Csr` is another type.
        let n = 200_000u32;
        let path = crawlrank_testkit::path(n);
        let s = scc(&Csr::from_arcs(path.nodes, &path.arcs));
        assert_eq!(
            s,
            SccStats {
                components: n as u64,
                largest: 1
            }
        );
        let cycle = crawlrank_testkit::cycle(n);
        let s = scc(&Csr::from_arcs(cycle.nodes, &cycle.arcs));
        assert_eq!(
            s,
            SccStats {
                components: 1,
                largest: n as u64
            }
        );
        // Two cycles joined one way.
        let g = Csr::from_arcs(5, &[(0, 1), (1, 0), (1, 2), (2, 3), (3, 4), (4, 2)]);
        assert_eq!(
            scc(&g),
            SccStats {
                components: 2,
                largest: 3
            }
        );
    }

    #[test]
    fn reachability_is_deterministic_and_correct() {
        // A cycle 0..4 with a tail 4 → 5 → 6: from the cycle 7 nodes are reached; from 5, 2;
        // from 6, 1.
        let g = Csr::from_arcs(7, &[(0, 1), (1, 2), (2, 3), (3, 0), (3, 4), (4, 5), (5, 6)]);
        let r = reachability(&g, 50, 42);
        assert_eq!(r, reachability(&g, 50, 42));
        assert_eq!(r.samples, 50);
        assert!((r.max_fraction - 1.0).abs() < 1e-12);
        assert!((r.min_fraction - 1.0 / 7.0).abs() < 1e-12);
        assert!((r.union_fraction - 1.0).abs() < 1e-12);
        assert!(r.mean_fraction > 0.5 && r.mean_fraction < 1.0);
        // A graph without arcs: every start reaches only itself.
        let lone = Csr::from_arcs(1000, &[]);
        let r = reachability(&lone, 20, 0);
        assert!((r.mean_fraction - 0.001).abs() < 1e-12);
        assert_eq!(r.giant_start_fraction, 0.0);
        assert!(r.union_fraction <= 0.02);
    }

    #[test]
    fn power_law_fit_recovers_the_exponent() {
        // Exact expected counts of a Zipf law with alpha = 2.1 over 1..=100_000.
        let alpha = 2.1;
        let counts: Vec<u64> = (0..100_000u64)
            .map(|x| {
                if x == 0 {
                    0
                } else {
                    (1e9 * (x as f64).powf(-alpha)).round() as u64
                }
            })
            .collect();
        let t = fit_power_law(&counts).unwrap();
        assert!((t.alpha - alpha).abs() < 0.05, "{t:?}");
        assert!(fit_power_law(&[0, 3, 2]).is_none());
    }

    #[test]
    fn display_lists_the_numbers() {
        let g = sample();
        let s = GraphStats::compute_csr(&g, Some(&[0, 0, 0, 1, 1, 1]))
            .unwrap()
            .with_reachability(&g, 5, 0)
            .with_scc(&g);
        let text = s.to_string();
        for needle in [
            "nodes",
            "dangling",
            "self-loops",
            "intra-host arcs",
            "reachability",
            "SCCs",
            "2-3",
        ] {
            assert!(text.contains(needle), "{needle} missing from\n{text}");
        }
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }
}
