//! A synthetic crawled web, streamed to a BVGraph with its `.urls`.
//!
//! [`generate`] writes `BASENAME.graph`, `.offsets`, `.properties`, `.ef` and `.urls` (one
//! URL per node, LAW's convention) for a web of `pages` pages on `hosts` hosts that looks like
//! a crawl: heavy-tailed host sizes, in-degrees and outdegrees, most links inside their host,
//! about a fifth of the pages dangling (discovered but not crawled), node order = URL order.
//! The model is described, with its formulas and its statistics beside cnr-2000's, in
//! `docs/generator.md`.
//!
//! Guarantees:
//! - **Deterministic**: the files depend only on the [`GenConfig`] (and [`ModelParams`]), not
//!   on the number of threads or the run; every random draw comes from a fixed-algorithm
//!   generator (`crawlrank_rng::Xoshiro256PlusPlus`) keyed by `(seed, purpose, host)`.
//! - **Streaming**: pages are generated host by host in node order with their successors
//!   already sorted and fed straight to the BVGraph compressor; memory is O(hosts) for the
//!   model plus O(largest outdegree) per thread — no arc is stored, nothing is sorted
//!   globally. Chunks of whole hosts are compressed in parallel on the current `rayon` pool.
//! - **Atomic**: all files are staged and appear together, or not at all.
//!
//! Entry points, all at the crate root: [`generate`] (or [`generate_with_params`] with
//! [`ModelParams`]) writes the web a [`GenConfig`] describes and returns a [`GenReport`];
//! [`SyntheticWeb`] is the model itself, a `webgraph` sequential graph that generates its arcs
//! on the fly (its lender is [`Pages`]), for a caller that wants the web without the files.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! use crawlrank_gen::{generate, GenConfig};
//! let report = generate(&GenConfig { pages: 1_000_000, ..GenConfig::default() }, "web".as_ref())?;
//! println!("{} arcs, {:.2} bits/link", report.arcs, report.bits_per_link);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod lender;
mod model;
mod names;

pub use lender::{Pages, Succ};
pub use model::{ModelParams, SyntheticWeb};

use anyhow::{ensure, Context, Result};
use crawlrank_graph::GraphWriter;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Default average number of pages per host when [`GenConfig::hosts`] is `None`.
pub const DEFAULT_PAGES_PER_HOST: u64 = 100;

/// Largest number of pages: crawlrank's node ids are 32-bit.
pub const MAX_PAGES: u64 = u32::MAX as u64 - 1;

/// Largest mean outdegree accepted.
pub const MAX_OUTDEGREE: f64 = 10_000.0;

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct GenConfig {
    /// Number of pages (nodes), `1..=MAX_PAGES`.
    pub pages: u64,
    /// Number of hosts, `1..=pages`; `None` means `⌈pages / 100⌉`
    /// ([`DEFAULT_PAGES_PER_HOST`]).
    pub hosts: Option<u64>,
    /// Target mean outdegree (arcs per page, dangling pages included), `0..=10_000`; cnr-2000
    /// has 9.88. Small graphs may fall short of it (successors are distinct).
    pub outdegree: f64,
    /// Seed: the same configuration and seed always give the same files.
    pub seed: u64,
}

impl Default for GenConfig {
    fn default() -> Self {
        Self {
            pages: 1_000_000,
            hosts: None,
            outdegree: 10.0,
            seed: 0,
        }
    }
}

impl GenConfig {
    /// The default configuration with `pages` pages.
    pub fn new(pages: u64) -> Self {
        Self {
            pages,
            ..Self::default()
        }
    }

    /// The number of hosts this configuration produces.
    pub fn num_hosts(&self) -> u64 {
        self.hosts
            .unwrap_or_else(|| self.pages.div_ceil(DEFAULT_PAGES_PER_HOST).max(1))
    }

    /// Checks the configuration; every `generate` entry point calls it first.
    pub fn validate(&self) -> Result<()> {
        ensure!(self.pages >= 1, "the number of pages must be at least 1");
        ensure!(
            self.pages <= MAX_PAGES,
            "{} pages: crawlrank supports at most {MAX_PAGES} nodes",
            self.pages
        );
        if let Some(h) = self.hosts {
            ensure!(h >= 1, "the number of hosts must be at least 1");
            ensure!(
                h <= self.pages,
                "{h} hosts for {} pages: every host needs at least one page",
                self.pages
            );
        }
        ensure!(
            self.outdegree.is_finite() && (0.0..=MAX_OUTDEGREE).contains(&self.outdegree),
            "the mean outdegree must be a number in [0, {MAX_OUTDEGREE}], not {}",
            self.outdegree
        );
        Ok(())
    }
}

/// What [`generate`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct GenReport {
    /// Pages (nodes) written.
    pub pages: u64,
    /// Arcs written.
    pub arcs: u64,
    /// Hosts the pages are on.
    pub hosts: u64,
    /// Registrable domains (`siteN.tld`) the hosts belong to.
    pub domains: u64,
    /// Size of the `.graph` bitstream per arc.
    pub bits_per_link: f64,
    /// The files written (graph, offsets, properties, ef, urls).
    pub files: Vec<PathBuf>,
    /// Wall-clock time of the whole generation.
    pub elapsed: Duration,
}

impl std::fmt::Display for GenReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        write!(
            f,
            "{} pages, {} arcs ({:.2} per page), {} hosts on {} domains, {:.2} bits/link, \
             {:.2} s ({:.2} M arcs/s)",
            self.pages,
            self.arcs,
            self.arcs as f64 / self.pages.max(1) as f64,
            self.hosts,
            self.domains,
            self.bits_per_link,
            secs,
            self.arcs as f64 / secs.max(1e-9) / 1e6
        )
    }
}

/// Generates a synthetic web as the BVGraph `out_basename` (with `.ef` and `.urls`), with the
/// default [`ModelParams`].
pub fn generate(cfg: &GenConfig, out_basename: &Path) -> Result<GenReport> {
    generate_with_params(cfg, &ModelParams::default(), out_basename)
}

/// [`generate`] with explicit model parameters.
pub fn generate_with_params(
    cfg: &GenConfig,
    params: &ModelParams,
    out_basename: &Path,
) -> Result<GenReport> {
    let start = Instant::now();
    let web = SyntheticWeb::with_params(cfg, params)?;
    let out = GraphWriter::new(out_basename)?;
    // The compressor's scratch files stay on the output's filesystem.
    let scratch = out.scratch_dir()?;
    let urls_path = out.staged_path(".urls");

    let (comp, urls) = std::thread::scope(|s| {
        let urls = s.spawn(|| -> Result<()> {
            let f = std::fs::File::create(&urls_path)
                .with_context(|| format!("cannot create {}", urls_path.display()))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 22, f);
            web.write_urls(&mut w)
                .and_then(|_| w.flush())
                .with_context(|| format!("cannot write {}", urls_path.display()))
        });
        let comp = out.par_compress(&web, Some(scratch.path()));
        let urls = urls
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the URL writer panicked")));
        (comp, urls)
    });
    let (props, bits) = comp.map(|c| (c.properties, c.bits))?;
    urls?;
    drop(scratch);
    ensure!(
        props.nodes as u64 == cfg.pages,
        "internal error: {} nodes compressed instead of {}",
        props.nodes,
        cfg.pages
    );
    let files = out.commit()?;
    Ok(GenReport {
        pages: cfg.pages,
        arcs: props.arcs,
        hosts: web.num_hosts() as u64,
        domains: web.num_domains() as u64,
        bits_per_link: if props.arcs == 0 {
            0.0
        } else {
            bits as f64 / props.arcs as f64
        },
        files,
        elapsed: start.elapsed(),
    })
}
