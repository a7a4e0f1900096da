//! Synthetic impacts (docs/synthetic-impacts.md): views and clicks per page of
//! any graph, from a documented model, because no public search log is at hand.
//!
//! The model, in order (every draw from its own seeded stream, so the result is a function of
//! the graph, the profile and the seed only; the code is sequential):
//!
//! 1. **In-degree term** `z_i` = `ln(1 + indeg(i))` standardised to mean 0, sd 1 over all pages.
//! 2. **Host effect** `h_H ~ N(0,1)`, one per host. Hosts come from the graph's URLs
//!    (`crawlrank_graph::Hosts`); a graph without URLs gets blocks of [`BLOCK`] consecutive ids.
//! 3. **Own latent** `r_i = b·h_host(i) + c·e_i`, `e_i ~ N(0,1)`.
//! 4. **Neighbourhood**: one smoothing step of `r` over the in-links,
//!    `t_i = a·z_i + (1−λ)·r_i + λ·mean_{j→i} r_j` (`t_i = a·z_i + r_i` without in-linkers),
//!    then `t` standardised to `ℓ` (mean 0, sd 1). The latent quality is `q_i = exp(σ·ℓ_i)`
//!    (log-normal, heavy-tailed). (Only `r` is smoothed: on generated webs the in-linkers of a
//!    page have anti-correlated in-degrees, and smoothing `z` too would wash out the in-degree
//!    term.)
//! 5. **Thinning**: the `k = round(share·n)` pages (at least 1) with the largest
//!    `ℓ_i + η·g_i` (`g_i ~ N(0,1)`, ties to the smaller id) get views; the others none.
//! 6. **Views** of a selected page: `1 + ⌊m · q_i/q̄ · w_i⌋`, `q̄` the mean `q` of the selected
//!    pages, `w_i = exp(0.5·g'_i − 0.125)` (mean 1).
//! 7. **Clicks**: the `round(κ·k)` selected pages with the largest `ℓ_i + η·g''_i` are
//!    clickable; a clickable page's click-through rate is `min(1, ρ·exp(0.5·g'''_i − 0.125))`
//!    and its clicks `max(1, Binomial(views, ctr))`; other pages have no clicks.
//!
//! [`Profile::params`] gives `a, b, c, λ, σ, share, η, m, κ, ρ` per profile. [`evaluate`]
//! measures what the model produced: shares, totals, Kendall's τ_b with in-degree and PageRank,
//! and the RW paper's frontier impact ratios (its Tables 2–3) on a BFS-downloaded set.

use anyhow::{ensure, Context, Result};
use crawlrank_graph::Csr;
use crawlrank_rng::Xoshiro256PlusPlus;
use std::path::Path;

use crate::Pages;

/// Pages per host block when the graph has no URLs.
pub const BLOCK: usize = 100;

const PURPOSE_HOST: u64 = 0x1a01;
const PURPOSE_NOISE: u64 = 0x1a02;
const PURPOSE_SELECT: u64 = 0x1a03;
const PURPOSE_VIEWS: u64 = 0x1a04;
const PURPOSE_CLICKABLE: u64 = 0x1a05;
const PURPOSE_CTR: u64 = 0x1a06;
const PURPOSE_BINOMIAL: u64 = 0x1a07;
const PURPOSE_BFS: u64 = 0x1a08;

/// Which of the RW paper's two datasets the impacts imitate (its Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The Yahoo web crawl: 0.4% of the frontier clicked, 0.8% viewed.
    Web,
    /// Wikipedia: 27.4% of the frontier clicked, 35.5% viewed.
    Wiki,
}

/// The parameters of the model (see the module documentation for where each enters).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelParams {
    /// `a`: weight of the standardised `ln(1 + in-degree)`.
    pub indegree: f64,
    /// `b`: weight of the host effect.
    pub host: f64,
    /// `c`: weight of the page's own noise.
    pub noise: f64,
    /// `λ`: weight of the in-linkers' mean latent in the smoothing step.
    pub neighbourhood: f64,
    /// `σ`: spread of `ln q`.
    pub sigma: f64,
    /// Target share of all pages with any impact (views).
    pub share: f64,
    /// `η`: noise added to the latent when choosing the pages with views and with clicks.
    pub selection_noise: f64,
    /// `m`: mean views per viewed page beyond the first.
    pub mean_views: f64,
    /// `κ`: share of viewed pages that get clicks (the paper's `|F_C| / |F_V|`).
    pub clicked_share: f64,
    /// `ρ`: mean click-through rate of a clickable page.
    pub ctr: f64,
}

impl Profile {
    /// The profile's name (`web`, `wiki`).
    pub fn name(self) -> &'static str {
        match self {
            Profile::Web => "web",
            Profile::Wiki => "wiki",
        }
    }

    /// The model parameters of the profile.
    pub fn params(self) -> ModelParams {
        let common = ModelParams {
            indegree: 0.5,
            host: 0.5,
            noise: 0.7,
            neighbourhood: 0.5,
            sigma: 1.0,
            share: 0.0,
            selection_noise: 0.5,
            mean_views: 0.0,
            clicked_share: 0.0,
            ctr: 0.3,
        };
        match self {
            Profile::Web => ModelParams {
                sigma: 1.5,
                share: 0.006,
                mean_views: 150.0,
                clicked_share: 0.4 / 0.8,
                ..common
            },
            Profile::Wiki => ModelParams {
                share: 0.31,
                mean_views: 40.0,
                clicked_share: 27.4 / 35.5,
                ..common
            },
        }
    }
}

/// Where the host effect's groups came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostSource {
    /// The hosts of the graph's URLs (this many).
    Urls(usize),
    /// Blocks of [`BLOCK`] consecutive ids (this many), the graph having no URLs.
    Blocks(usize),
}

/// Synthetic impacts of every page of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthetic {
    /// The profile used.
    pub profile: Profile,
    /// The seed used.
    pub seed: u64,
    /// The latent quality `q` of every page (before thinning).
    pub quality: Vec<f64>,
    /// Views per page (0 for most).
    pub views: Vec<f64>,
    /// Clicks per page (≤ views).
    pub clicks: Vec<f64>,
    /// Where the hosts came from.
    pub hosts: HostSource,
}

/// A standard normal variate (Box–Muller, one of the pair).
fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u = rng.f64_open0();
    let v = rng.f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn standardise(x: &mut [f64]) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let sd = if var > 0.0 { var.sqrt() } else { 1.0 };
    for v in x.iter_mut() {
        *v = (*v - mean) / sd;
    }
}

/// The `k` ids with the largest keys, ties to the smaller id.
fn top(keys: &[f64], k: usize) -> Vec<usize> {
    let mut ids: Vec<usize> = (0..keys.len()).collect();
    ids.sort_by(|&a, &b| keys[b].total_cmp(&keys[a]).then(a.cmp(&b)));
    ids.truncate(k);
    ids.sort_unstable();
    ids
}

fn binomial(rng: &mut Xoshiro256PlusPlus, n: u64, p: f64) -> u64 {
    if n <= 200 {
        (0..n).filter(|_| rng.chance(p)).count() as u64
    } else {
        let mean = n as f64 * p;
        let sd = (mean * (1.0 - p)).sqrt();
        (mean + sd * normal(rng)).round().clamp(0.0, n as f64) as u64
    }
}

/// Draws the synthetic impacts of `graph`'s pages. `host_of` gives each page's host (from
/// the URLs); `None` groups pages in blocks of [`BLOCK`] consecutive ids.
pub fn synthetic_impacts(
    graph: &Csr,
    host_of: Option<&[u32]>,
    profile: Profile,
    seed: u64,
) -> Result<Synthetic> {
    synthetic_impacts_with(graph, host_of, profile, &profile.params(), seed)
}

/// [`synthetic_impacts`] with other parameters than the profile's (`profile` is only recorded).
pub fn synthetic_impacts_with(
    graph: &Csr,
    host_of: Option<&[u32]>,
    profile: Profile,
    params: &ModelParams,
    seed: u64,
) -> Result<Synthetic> {
    let n = graph.num_nodes();
    ensure!(n > 0, "the graph has no pages: nothing to give impacts to");
    let p = *params;
    let (hosts, host_source): (Vec<u32>, HostSource) = match host_of {
        Some(h) => {
            ensure!(
                h.len() == n,
                "{} host ids for a graph of {n} pages",
                h.len()
            );
            let count = h.iter().map(|&x| x as usize + 1).max().unwrap_or(0);
            (h.to_vec(), HostSource::Urls(count))
        }
        None => (
            (0..n).map(|i| (i / BLOCK) as u32).collect(),
            HostSource::Blocks(n.div_ceil(BLOCK)),
        ),
    };
    let num_hosts = hosts.iter().map(|&x| x as usize + 1).max().unwrap_or(0);
    let indeg = graph.indegrees();
    let mut z: Vec<f64> = indeg.iter().map(|&d| (1.0 + d as f64).ln()).collect();
    standardise(&mut z);
    let mut rng = Xoshiro256PlusPlus::stream(seed, PURPOSE_HOST, 0);
    let host_effect: Vec<f64> = (0..num_hosts).map(|_| normal(&mut rng)).collect();
    let mut rng = Xoshiro256PlusPlus::stream(seed, PURPOSE_NOISE, 0);
    let r: Vec<f64> = (0..n)
        .map(|i| p.host * host_effect[hosts[i] as usize] + p.noise * normal(&mut rng))
        .collect();
    let mut sum_in = vec![0.0f64; n];
    for (u, v) in graph.arcs() {
        sum_in[v as usize] += r[u as usize];
    }
    let mut latent: Vec<f64> = (0..n)
        .map(|i| {
            let own = if indeg[i] > 0 {
                (1.0 - p.neighbourhood) * r[i] + p.neighbourhood * sum_in[i] / indeg[i] as f64
            } else {
                r[i]
            };
            p.indegree * z[i] + own
        })
        .collect();
    drop(sum_in);
    standardise(&mut latent);
    let quality: Vec<f64> = latent.iter().map(|&l| (p.sigma * l).exp()).collect();

    // Thinning: who gets views.
    let k = ((p.share * n as f64).round() as usize).clamp(1, n);
    let mut rng = Xoshiro256PlusPlus::stream(seed, PURPOSE_SELECT, 0);
    let keys: Vec<f64> = latent
        .iter()
        .map(|&l| l + p.selection_noise * normal(&mut rng))
        .collect();
    let viewed = top(&keys, k);
    let qbar = viewed.iter().map(|&i| quality[i]).sum::<f64>() / k as f64;
    let mut views = vec![0.0f64; n];
    let mut rng = Xoshiro256PlusPlus::stream(seed, PURPOSE_VIEWS, 0);
    for &i in &viewed {
        let w = (0.5 * normal(&mut rng) - 0.125).exp();
        views[i] = 1.0 + (p.mean_views * quality[i] / qbar * w).floor();
    }

    // Clicks: a share of the viewed pages is clickable.
    let kc = ((p.clicked_share * k as f64).round() as usize).min(k);
    let mut rng = Xoshiro256PlusPlus::stream(seed, PURPOSE_CLICKABLE, 0);
    let ckeys: Vec<f64> = viewed
        .iter()
        .map(|&i| latent[i] + p.selection_noise * normal(&mut rng))
        .collect();
    let clickable = top(&ckeys, kc);
    let mut clicks = vec![0.0f64; n];
    let mut rng_ctr = Xoshiro256PlusPlus::stream(seed, PURPOSE_CTR, 0);
    let mut rng_bin = Xoshiro256PlusPlus::stream(seed, PURPOSE_BINOMIAL, 0);
    for &j in &clickable {
        let i = viewed[j];
        let ctr = (p.ctr * (0.5 * normal(&mut rng_ctr) - 0.125).exp()).min(1.0);
        clicks[i] = binomial(&mut rng_bin, views[i] as u64, ctr).max(1) as f64;
    }
    Ok(Synthetic {
        profile,
        seed,
        quality,
        views,
        clicks,
        hosts: host_source,
    })
}

/// Writes `impact` as an impact table, atomically: a header `id<TAB>url<TAB>views<TAB>clicks`
/// (`id<TAB>views<TAB>clicks` when `pages` has no URLs), then one row per page with views, by
/// id. [`read_impact_table`](crate::read_impact_table) reads it back.
pub fn write_synthetic(path: &Path, pages: &Pages, impact: &Synthetic) -> Result<()> {
    crate::table::write_impact_table(
        path,
        pages,
        &["views", "clicks"],
        &[&impact.views, &impact.clicks],
    )
}

/// A frontier impact ratio `r(X→F) = Σ_{p∈F linked from X} I(p) / |X|` (RW paper eqs. 1–2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// `|X|`.
    pub sources: u64,
    /// Distinct frontier pages linked from `X`.
    pub linked: u64,
    /// `Σ I(p)` over them.
    pub impact: f64,
    /// `impact / |X|` (NaN when `X` is empty).
    pub ratio: f64,
}

/// The paper's Tables 2–3 for one impact type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratios {
    /// From the pages of `D` with impact (`D_C` or `D_V`).
    pub with: Ratio,
    /// From the pages of `D` without impact.
    pub without: Ratio,
    /// From the pages of `D` with impact, over real and virtual arcs (pages of `F` sharing an
    /// in-linker in `D` with a page of `X`; the paper's Table 3).
    pub with_virtual: Ratio,
}

/// What [`evaluate`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticReport {
    /// Pages.
    pub pages: u64,
    /// Pages with views (any impact), and with clicks.
    pub viewed: u64,
    /// Pages with clicks.
    pub clicked: u64,
    /// Total views.
    pub total_views: f64,
    /// Total clicks.
    pub total_clicks: f64,
    /// Kendall's τ_b of the latent quality with in-degree (NaN when undefined).
    pub tau_quality_indegree: f64,
    /// Kendall's τ_b of the latent quality with PageRank.
    pub tau_quality_pagerank: f64,
    /// Kendall's τ_b of views with in-degree, all pages.
    pub tau_views_indegree: f64,
    /// Kendall's τ_b of views with PageRank, all pages.
    pub tau_views_pagerank: f64,
    /// Kendall's τ_b of views with in-degree over the viewed pages only.
    pub tau_views_indegree_viewed: f64,
    /// The seeds of the BFS (distinct random pages).
    pub bfs_seeds: u64,
    /// `|D|`: the first 10% of pages of the BFS (fewer when it runs out).
    pub downloaded: u64,
    /// `|F|`: pages linked from `D`, not in `D`.
    pub frontier: u64,
    /// Frontier pages with views.
    pub frontier_viewed: u64,
    /// Frontier pages with clicks.
    pub frontier_clicked: u64,
    /// Ratios for clicks (`r_c`).
    pub clicks: Ratios,
    /// Ratios for views (`r_v`).
    pub views: Ratios,
}

/// The downloaded set: the first `⌈n/10⌉` pages popped by a BFS from `seeds` distinct random
/// pages (all pages when there are fewer), as a membership vector and its size.
fn bfs_downloaded(graph: &Csr, seed: u64, seeds: usize) -> (Vec<bool>, u64, u64) {
    let n = graph.num_nodes();
    let target = n.div_ceil(10);
    let mut seen = vec![false; n];
    let mut queue = std::collections::VecDeque::new();
    if n <= seeds {
        for (i, s) in seen.iter_mut().enumerate() {
            *s = true;
            queue.push_back(i);
        }
    } else {
        let mut rng = Xoshiro256PlusPlus::stream(seed, PURPOSE_BFS, 0);
        while queue.len() < seeds {
            let i = rng.below(n as u64) as usize;
            if !seen[i] {
                seen[i] = true;
                queue.push_back(i);
            }
        }
    }
    let nseeds = queue.len() as u64;
    let mut d = vec![false; n];
    let mut count = 0u64;
    while let Some(u) = queue.pop_front() {
        if count as usize >= target {
            break;
        }
        d[u] = true;
        count += 1;
        for &v in graph.successors(u) {
            if !seen[v as usize] {
                seen[v as usize] = true;
                queue.push_back(v as usize);
            }
        }
    }
    (d, count, nseeds)
}

fn ratio(sources: u64, linked: &[usize], impact: &[f64]) -> Ratio {
    let total: f64 = linked.iter().map(|&p| impact[p]).sum();
    Ratio {
        sources,
        linked: linked.len() as u64,
        impact: total,
        ratio: if sources > 0 {
            total / sources as f64
        } else {
            f64::NAN
        },
    }
}

fn ratios(graph: &Csr, transpose: &Csr, d: &[bool], f: &[bool], impact: &[f64]) -> Ratios {
    let n = graph.num_nodes();
    let mut mark = vec![0u8; n]; // bit 0: from X+, bit 1: from X−, bit 2: virtual from X+
    let (mut with, mut without) = (0u64, 0u64);
    for u in (0..n).filter(|&u| d[u]) {
        let bit = if impact[u] > 0.0 {
            with += 1;
            1
        } else {
            without += 1;
            2
        };
        for &v in graph.successors(u) {
            if f[v as usize] {
                mark[v as usize] |= bit;
            }
        }
        if bit == 1 {
            for &w in transpose.successors(u) {
                if d[w as usize] {
                    for &v in graph.successors(w as usize) {
                        if f[v as usize] && v as usize != u {
                            mark[v as usize] |= 4;
                        }
                    }
                }
            }
        }
    }
    let list = |m: u8| -> Vec<usize> { (0..n).filter(|&p| mark[p] & m != 0).collect() };
    Ratios {
        with: ratio(with, &list(1), impact),
        without: ratio(without, &list(2), impact),
        with_virtual: ratio(with, &list(1 | 4), impact),
    }
}

fn tau(x: &[f64], y: &[f64]) -> Result<f64> {
    crawlrank_rank::kendall_tau_b(x, y)
}

/// Measures `impact` on `graph`: shares, totals, rank correlations with in-degree and
/// PageRank (α = 0.85), and the frontier impact ratios of a downloaded set `D` = the first 10%
/// of the pages of a BFS from 100 random pages (seeded by `seed`), `F` = the pages linked from
/// `D` and not in it.
pub fn evaluate(graph: &Csr, impact: &Synthetic, seed: u64) -> Result<SyntheticReport> {
    let n = graph.num_nodes();
    ensure!(
        impact.views.len() == n,
        "impacts for {} pages, the graph has {n}",
        impact.views.len()
    );
    let indeg = crawlrank_rank::indegree(graph);
    let pr = crawlrank_rank::pagerank(graph, &crawlrank_rank::PageRankConfig::default())
        .context("PageRank of the graph")?
        .scores;
    let viewed_ids: Vec<usize> = (0..n).filter(|&i| impact.views[i] > 0.0).collect();
    let sub = |v: &[f64]| -> Vec<f64> { viewed_ids.iter().map(|&i| v[i]).collect() };
    let (d, downloaded, bfs_seeds) = bfs_downloaded(graph, seed, 100);
    let mut f = vec![false; n];
    for u in (0..n).filter(|&u| d[u]) {
        for &v in graph.successors(u) {
            if !d[v as usize] {
                f[v as usize] = true;
            }
        }
    }
    let in_f = |v: &[f64]| (0..n).filter(|&p| f[p] && v[p] > 0.0).count() as u64;
    let transpose = graph.transpose();
    Ok(SyntheticReport {
        pages: n as u64,
        viewed: viewed_ids.len() as u64,
        clicked: impact.clicks.iter().filter(|&&c| c > 0.0).count() as u64,
        total_views: impact.views.iter().sum(),
        total_clicks: impact.clicks.iter().sum(),
        tau_quality_indegree: tau(&impact.quality, &indeg)?,
        tau_quality_pagerank: tau(&impact.quality, &pr)?,
        tau_views_indegree: tau(&impact.views, &indeg)?,
        tau_views_pagerank: tau(&impact.views, &pr)?,
        tau_views_indegree_viewed: tau(&sub(&impact.views), &sub(&indeg))?,
        bfs_seeds,
        downloaded,
        frontier: f.iter().filter(|&&x| x).count() as u64,
        frontier_viewed: in_f(&impact.views),
        frontier_clicked: in_f(&impact.clicks),
        clicks: ratios(graph, &transpose, &d, &f, &impact.clicks),
        views: ratios(graph, &transpose, &d, &f, &impact.views),
    })
}
