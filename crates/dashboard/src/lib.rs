//! crawlrank's crawl dashboard: a crawl's live state over HTTP — one self-updating web page,
//! a JSON API and a Prometheus `/metrics` endpoint — served by the crawl itself
//! (`crawlrank crawl --dashboard ADDR`) or from a state directory
//! (`crawlrank dashboard --state DIR`). docs/crawler.md, Dashboard and metrics.
//!
//! | module | job |
//! |---|---|
//! | [`state`] | [`DashboardState`]: what is shown — a bounded time series, the counters, the top of the frontier and the ranking — behind one short lock |
//! | [`metrics`] | the Prometheus text exposition of the same numbers |
//! | [`server`] | axum routes (`/`, `/api/status`, `/metrics`) on a small runtime of its own; [`serve`] binds first, so a port in use is an error before a crawl starts |
//! | `page.html` | the page: inline CSS and JS that poll `/api/status` every second and redraw (numbers, an SVG chart of pages/s, tables); no external request |
//!
//! How a crawl feeds it: the crawl's progress callback (about 4×/s) copies the crawl's numbers
//! into a [`CrawlNumbers`] and calls [`DashboardState::record`], which copies them under the
//! lock and keeps
//! a sample at most every 500 ms; the top of the frontier and the ranking so far are computed
//! by the crawl at most once a second, and only when asked for
//! (`CrawlConfig::report_top`). The server's handlers only read, so the crawl never waits for
//! a browser.
//!
//! Deviation from a plain "top of the frontier": the frontier has no ordered iterator (each
//! policy keeps its own queue), so the crawl takes the `k` best *policy scores* among the
//! pages still in the frontier; for batch policies (re-sorted every K pages) that can differ
//! from the next pops until the next reorder.
//!
//! Loopback by default: [`serve`] refuses a non-loopback address unless given
//! [`Access::Public`] (`--dashboard-public`); the server has no authentication. The page
//! shows URLs from the crawled web, which are untrusted text: its script inserts them as
//! text, never as HTML.

#![warn(missing_docs)]

pub mod metrics;
pub mod server;
pub mod state;

pub use server::{router, serve, Access, DashboardHandle};
pub use state::{Counter, CrawlNumbers, DashboardState, Sample, ScoredUrl, Snapshot, StatusDoc};

/// The first `n` lines of a ranking file (`score<TAB>url`, best first, as the crawl's
/// ranking snapshot `ranking.tsv`); lines that are not `score<TAB>url` are skipped.
pub fn read_ranking_top(path: &std::path::Path, n: usize) -> anyhow::Result<Vec<ScoredUrl>> {
    use anyhow::Context;
    use std::io::BufRead;
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read the ranking {}", path.display()))?;
    let mut top = Vec::with_capacity(n);
    for line in std::io::BufReader::new(file).lines() {
        if top.len() >= n {
            break;
        }
        let line = line.with_context(|| format!("cannot read the ranking {}", path.display()))?;
        let Some((score, url)) = line.split_once('\t') else {
            continue;
        };
        if let Ok(score) = score.parse::<f64>() {
            top.push(ScoredUrl {
                url: url.to_string(),
                score,
            });
        }
    }
    Ok(top)
}
