//! crawlrank's crawler: a polite HTTP/HTTPS crawler that fetches pages in the order of any
//! `crawlrank-frontier` policy — the same code the simulator scores — and persists its state
//! so that a crash or Ctrl-C loses at most the requests in flight. How one request is made
//! (connections, DNS, robots.txt, sitemaps, links, WARC, back-off, scope) is
//! `crawlrank-fetch`'s, shared with the crawl workers; this crate is the crawl around it.
//!
//! | module | job |
//! |---|---|
//! | `engine` | the crawl loop: one thread owning the parts below, in the order of the frontier's calls; [`crawl`] |
//! | `politeness` | the scheduler: per-origin queues, one request in flight per origin, delays, retries' backoff |
//! | `in_flight` | the requests in flight: fetch tasks on the I/O runtime and the channel back, each origin's kept connection lent and given back; fewer for a while when file descriptors run short |
//! | `search_log` | the search log of the impact-aware policies, keyed by URL ([`SearchLog`]) |
//! | `store` | the state on disk (redb): the URL table's strings and seen-set (over `crawlrank-crawl-state`, which keeps the URL table, the seen-set and the caps on hosts), the frontier event log, page marks, robots.txt answers, the sitemaps queued |
//! | `resume` | resuming: the frontier rebuilt by replaying the log (through the frontier crate's `LogReplay`) |
//! | `ranking` | the ranking files: `score<TAB>url` and page marks, snapshots of a running crawl |
//! | `export` | the crawl as a BVGraph + `.urls` or an arc list, the current ranking and page marks, the status |
//! | `top` | the best-scored pages of the frontier and of the crawled pages, for a live view |
//! | `signals` | receiving Ctrl-C / SIGTERM for a front end (which decides what they do) |
//! | `dashboard_view` | with the feature `dashboard`: [`Progress`] and [`Status`] in the live dashboard's own view (`dashboard_numbers`) |
//!
//! All modules are private: the crate's API is the entry points below, re-exported at its root.
//!
//! The files import each other one way only: `stats`, `ranking`, `top` and `signals`
//! import no other module of the crate; `resume` on `store`; the URL table, the
//! seen-set, the host ids and the hops from the seeds are `crawlrank-crawl-state`'s;
//! `engine` on all of them, and `export` on `store`, `resume`, `ranking` and `stats` (its
//! tests run the engine, its code does not). Everything about a single request comes from
//! `crawlrank-fetch`. No module prints or exits the process: errors are returned, and progress
//! goes to the caller's callback.
//!
//! Entry points, all at the crate root:
//! - crawling: [`crawl`] with a [`CrawlConfig`] (and its parts: [`PolicySettings`],
//!   [`Politeness`], [`CrawlLimits`] with [`UrlLimits`] and [`HopLimits`], [`Resources`],
//!   [`FetchConfig`] with its [`UrlRules`], [`ScopeConfig`]), reporting [`Progress`] while it runs and
//!   a [`CrawlReport`] (with its [`StopReason`], [`Stats`] and [`SeenCounts`]) at the end;
//!   [`StopSignals`] turns Ctrl-C / SIGTERM into the stop flag;
//! - reading a crawl state, running or not: [`export_graph`] / [`export_links`] (the link
//!   graph, [`LinkOutputs`], [`GraphExport`]), [`export_ranking`] ([`RankingExport`]),
//!   [`status`] ([`Status`]), [`crawl_order`], [`discovered_urls`], [`crawl_log`]
//!   ([`LoggedCall`]), [`page_marks`] ([`PageMeta`]), and the running crawl's snapshot files
//!   [`RANKING_SNAPSHOT`] and [`PAGE_MARKS_SNAPSHOT`];
//! - with the feature `dashboard`: `Progress::dashboard_numbers` and
//!   `Status::dashboard_numbers`, a crawl in the live dashboard's own view;
//! - the defaults of the crawl's options, for a front end's help: [`DEFAULT_FRONTIER_HOT`],
//!   [`DEFAULT_SEEN_CACHE`], [`MAX_URLS`], [`DEFAULT_MAX_REDIRECTS`].

#![warn(missing_docs)]
// Without the engine the crate only reads a crawl's state: the writing half of the store and of
// the ranking snapshots is then unused, and left in rather than split off.
#![cfg_attr(not(feature = "engine"), allow(dead_code))]

#[cfg(feature = "dashboard")]
mod dashboard_view;
#[cfg(feature = "engine")]
mod engine;
mod export;
#[cfg(feature = "engine")]
mod in_flight;
#[cfg(feature = "engine")]
mod politeness;
mod ranking;
mod resume;
mod search_log;
#[cfg(feature = "engine")]
mod signals;
#[cfg(feature = "engine")]
mod top;

/// Declares the engine's parts that `examples/memory_scale.rs` drives directly: private,
/// unless the `internals` feature (for that measurement only, not an API) makes them public.
macro_rules! internal_modules {
    ($($m:ident),*) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $m;
        #[cfg(not(feature = "internals"))]
        mod $m;
    )*};
}
internal_modules!(store);

pub use crawlrank_crawl_state::{CrawlLimits, HopLimits, DEFAULT_MAX_REDIRECTS};
pub use crawlrank_crawl_state::{SeenCounts, DEFAULT_CACHE_ENTRIES as DEFAULT_SEEN_CACHE};
pub use crawlrank_crawl_state::{UrlLimits, MAX_URLS};
/// A crawl's counters, `crawlrank-fetch`'s: a crawl worker counts its pages the same way.
pub use crawlrank_fetch::Stats;
#[cfg(feature = "engine")]
pub use engine::{
    crawl, CrawlConfig, CrawlReport, PolicySettings, Politeness, Progress, Resources, StopReason,
    WarcDamage, WarcRecovery, DEFAULT_FRONTIER_HOT,
};
pub use export::{
    crawl_log, crawl_order, discovered_urls, export_graph, export_links, export_ranking,
    page_marks, status, GraphExport, LinkOutputs, LoggedCall, RankingExport, Status,
};
pub use ranking::{PAGE_MARKS_SNAPSHOT, RANKING_SNAPSHOT};
pub use search_log::SearchLog;
#[cfg(feature = "engine")]
pub use signals::StopSignals;

// The parts of a crawl's configuration that are fetching's, as a front end names them.
pub use crawlrank_fetch::page::PageMeta;
#[cfg(feature = "engine")]
pub use crawlrank_fetch::FetchConfig;
pub use crawlrank_fetch::{ScopeConfig, ScopeKind, UrlRules};
