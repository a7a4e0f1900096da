//! The crawl's numbers in the live dashboard's own view ([`crawlrank_dashboard::CrawlNumbers`]):
//! a running crawl's [`Progress`] and a crawl state's [`Status`], converted in one place for
//! the `crawlrank` command (`crawl --dashboard`, `crawlrank dashboard`) and the dashboard's
//! tests alike. Behind the feature `dashboard`, so that the dashboard never depends on the
//! crawler and a crawler built without it does not link the dashboard's server.

use crate::engine::Progress;
use crate::export::Status;
use crawlrank_dashboard::{Counter, CrawlNumbers, ScoredUrl, Snapshot};
use crawlrank_fetch::Stats;
use std::sync::Arc;

impl Progress {
    /// This progress as the dashboard shows a running crawl.
    pub fn dashboard_numbers(&self) -> CrawlNumbers {
        let scored = |list: &[(Arc<str>, f64)]| -> Vec<ScoredUrl> {
            list.iter()
                .map(|(url, score)| ScoredUrl {
                    url: url.to_string(),
                    score: *score,
                })
                .collect()
        };
        let snapshot = Snapshot {
            pages_total: self.pages_total,
            pages_per_sec: self.pages_per_sec,
            frontier: self.frontier as u64,
            waiting: self.waiting as u64,
            in_flight: self.in_flight as u64,
            hosts: self.hosts as u64,
            hosts_active: self.hosts_active as u64,
            discovered: self.discovered as u64,
            errors: self.errors,
        };
        CrawlNumbers {
            snapshot,
            counters: counters(&self.stats),
            frontier_top: scored(&self.frontier_top),
            ranking_top: scored(&self.ranking_top),
        }
    }
}

impl Status {
    /// This status, read from a crawl's state, as the dashboard shows a crawl that is not
    /// running here (nothing in flight, no rate).
    pub fn dashboard_numbers(&self) -> CrawlNumbers {
        CrawlNumbers {
            snapshot: Snapshot {
                pages_total: self.crawled,
                frontier: self.frontier,
                hosts: self.hosts as u64,
                discovered: self.discovered as u64,
                errors: self.stats.errors(),
                ..Snapshot::default()
            },
            counters: counters(&self.stats),
            ..CrawlNumbers::default()
        }
    }
}

/// Every counter of the crawl, with its help line.
fn counters(stats: &Stats) -> Vec<Counter> {
    CrawlNumbers::counters_from(stats.fields(), &Stats::descriptions())
}
