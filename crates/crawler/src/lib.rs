//! crawlrank's crawler: a polite HTTP/HTTPS crawler that fetches pages in the order of any
//! `crawlrank-frontier` policy — the same code the simulator scores — and persists its state
//! so that a crash or Ctrl-C loses at most the requests in flight.
//!
//! | module | job |
//! |---|---|
//! | [`engine`] | the crawl loop: one thread owning frontier, URL table, scheduler and store |
//! | [`politeness`] | per-host queues: one request in flight per host, delays, retries |
//! | [`fetch`] | HTTP requests (reqwest + rustls), robots.txt, body caps |
//! | [`links`] | streaming HTML link extraction (lol_html), URL normalisation, trap limits |
//! | [`store`] | the state on disk (redb): URL table, the frontier event log, page marks, robots.txt answers |
//! | [`state`] | rebuilding the frontier by replaying the log |
//! | [`warc`] | WARC/1.1 output, one gzip member per record |
//! | [`export`] | the crawl as a BVGraph + `.urls` or an arc list, the current ranking and page marks, the status |
//! | [`stats`] | counters |
//!
//! Entry points: [`engine::crawl`], [`export::export_graph`] / [`export::export_links`],
//! [`export::export_ranking`], [`export::status`].

pub mod engine;
pub mod export;
pub mod fetch;
pub mod links;
pub mod politeness;
pub mod state;
pub mod stats;
pub mod store;
pub mod warc;

pub use engine::{crawl, CrawlConfig, CrawlReport, Progress, StopReason};
pub use fetch::FetchConfig;
pub use links::UrlRules;
pub use stats::Stats;
