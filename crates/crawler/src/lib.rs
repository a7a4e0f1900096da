//! crawlrank's crawler: a polite HTTP/HTTPS crawler that fetches pages in the order of any
//! `crawlrank-frontier` policy — the same code the simulator scores — and persists its state
//! so that a crash or Ctrl-C loses at most the requests in flight.
//!
//! | module | job |
//! |---|---|
//! | [`engine`] | the crawl loop: one thread owning the parts below, in the order of the frontier's calls; `crawl` |
//! | [`urls`] | the URL table: URL fingerprint → page id (the seen-set), page → host → registrable domain, the bounds on new ids (per host, per domain, in all) |
//! | [`robots`] | robots.txt: rules, answers kept across runs, 24 h freshness, each host's robots.txt state |
//! | `politeness` | the scheduler: per-host queues, one request in flight per host, delays, retries' backoff |
//! | `in_flight` | the requests in flight: fetch tasks on the I/O runtime and the channel back; fewer for a while when file descriptors run short |
//! | `http` | the crawl's own HTTP/1.1 connections (hyper, rustls): DNS, TCP, proxy tunnels, TLS; every socket counted until closed; non-public addresses refused |
//! | [`addresses`] | which IP addresses a crawl may connect to: loopback, private, link-local… only for the seeds' own hosts |
//! | `connections` | each host's kept connection: the idle ones in a pool with an idle timeout and a global cap |
//! | `fds` | file descriptors: the bound a crawl needs, the open-file limit raised and checked, "too many open files" recognised |
//! | [`fetch`] | one HTTP request: a page, a host's robots.txt or one of its sitemaps; body caps |
//! | [`sitemap`] | sitemaps: parsed, queued per host and fetched as side requests of their host — never pages; their entries enter the frontier as seeds do |
//! | [`fetcher`] | the same requests for a crawl worker whose frontier is a remote service (no crawl state of its own) |
//! | [`links`] | streaming HTML link extraction (lol_html), URL normalisation, trap limits |
//! | [`page`] | how a page's fetch ended ([`page::Outcome`]) and what it said about itself |
//! | [`store`] | the state on disk (redb): URL table, the frontier event log, page marks, robots.txt answers, the sitemaps queued |
//! | `resume` | resuming: the frontier rebuilt by replaying the log (through the frontier crate's `LogReplay`) |
//! | [`warc`] | WARC/1.1 output, one gzip member per record |
//! | [`ranking`] | the ranking files: `score<TAB>url` and page marks, snapshots of a running crawl |
//! | [`export`] | the crawl as a BVGraph + `.urls` or an arc list, the current ranking and page marks, the status |
//! | [`stats`] | counters |
//! | `top` | the best-scored pages of the frontier and of the crawled pages, for a live view |
//! | [`signals`] | receiving Ctrl-C / SIGTERM for a front end (which decides what they do) |
//!
//! The modules not linked (`politeness`, `in_flight`, `http`, `connections`, `fds`,
//! `resume`, `top`) are the engine's parts, private to the crate.
//!
//! The files import each other one way only: `fds`, [`page`], [`links`], [`addresses`] and
//! [`signals`] import no other, [`warc`] only `fds`; [`urls`], [`robots`], `politeness`,
//! [`stats`], [`ranking`] and `http` only those (and [`urls`]); [`fetch`] and [`store`] build on
//! them ([`fetcher`] on [`fetch`] and `http`), `connections` on `http`, `in_flight` on `connections` and [`fetch`], `resume` on
//! [`store`]; [`engine`] and [`export`] come last, and neither imports the other (export's
//! tests run the engine). No module prints or exits the process: errors are returned, and
//! progress goes to the caller's callback.
//!
//! Entry points, all at the crate root:
//! - crawling: [`crawl`] with a [`CrawlConfig`] (and its [`FetchConfig`] and [`UrlRules`]),
//!   reporting [`Progress`] while it runs and a [`CrawlReport`] (with its [`StopReason`] and
//!   [`Stats`]) at the end; [`StopSignals`] turns Ctrl-C / SIGTERM into the stop flag;
//! - reading a crawl state, running or not: [`export_graph`] / [`export_links`] (the link
//!   graph, [`LinkOutputs`], [`GraphExport`]), [`export_ranking`] ([`RankingExport`]),
//!   [`status`] ([`Status`]), [`crawl_order`].

#![warn(missing_docs)]

pub mod addresses;
pub mod backoff;
mod connections;
mod cpu;
pub mod dns;
pub mod engine;
pub mod export;
mod fds;
pub mod fetch;
pub mod fetcher;
pub mod hops;
mod http;
mod in_flight;
pub mod links;
pub mod page;
mod politeness;
pub mod ranking;
mod resume;
pub mod robots;
pub mod scope;
pub mod search_log;
pub mod seen;
pub mod signals;
pub mod sitemap;
pub mod stats;
pub mod store;
mod top;
pub mod urls;
pub mod warc;

pub use engine::{crawl, CrawlConfig, CrawlReport, Progress, StopReason, WarcDamage, WarcRecovery};
pub use export::{
    crawl_order, export_graph, export_links, export_ranking, status, GraphExport, LinkOutputs,
    RankingExport, Status,
};
pub use fetch::FetchConfig;
pub use links::UrlRules;
pub use scope::{ScopeConfig, ScopeKind};
pub use search_log::SearchLog;
pub use signals::StopSignals;
pub use stats::Stats;
