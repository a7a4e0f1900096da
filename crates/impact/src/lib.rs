//! Impact input for crawlrank: the observed interest in pages (clicks, views, visits) that the
//! impact-aware frontier rankings of the RW paper (docs/algorithms.md §6) propagate through the link graph.
//!
//! A graph says how pages link; it says nothing about which pages people want. This crate
//! reads that signal from the three sources at hand and turns it into dense per-page vectors
//! over a graph, always reporting what it could not place instead of dropping it silently:
//!
//! - [`read_impact_table`] — a TSV/CSV of page id or URL → one or two impact columns
//!   ([`table`]);
//! - [`read_clickstream`] — Wikimedia's clickstream dumps: search referrals (`other-search`)
//!   and link clicks per article ([`clickstream`]);
//! - [`import_wikispeedia`] and [`replay_paths`] — the Wikispeedia link graph and the visits
//!   and clicks replayed from its human navigation paths (goal-directed game traffic, not search
//!   traffic; [`wikispeedia`]);
//! - [`synthetic_impacts`] — synthetic views and clicks from a documented model (a heavy-tailed
//!   latent quality clustered by host and link neighbourhood, thinned to the shares of the RW
//!   paper's `web` and `wiki` datasets), and [`evaluate`], which measures them ([`synthetic`]).
//!
//! Pages are looked up through [`Pages`] (ids, normalised URLs, Wikipedia article names).
//! Errors name the file and line and say why; nothing here panics on bad input or prints.
#![warn(missing_docs)]

pub mod clickstream;
pub mod pages;
pub mod synthetic;
pub mod table;
pub mod wikispeedia;

pub use clickstream::{
    read_clickstream, ClickArc, Clickstream, ClickstreamImpact, ClickstreamReport,
};
pub use crawlrank_graph::text::Delimiter;
pub use pages::{wiki_url, Pages, WIKI_PREFIX};
pub use synthetic::{
    evaluate, synthetic_impacts, synthetic_impacts_with, write_synthetic, HostSource, ModelParams,
    Profile, Ratio, Ratios, Synthetic, SyntheticReport,
};
pub use table::{
    column_index, read_impact_table, read_url_impacts, write_impact_table, ImpactReport,
    ImpactTable, UrlImpactTable,
};
pub use wikispeedia::{
    import_wikispeedia, replay_paths, write_impacts, Replay, ReplayReport, WikispeediaImpact,
    WikispeediaImport,
};

#[cfg(test)]
mod tests;
