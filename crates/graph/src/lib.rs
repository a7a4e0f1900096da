//! Web graph access for crawlrank.
//!
//! Everything else in crawlrank — rankings, crawl policies, the simulator, the crawler —
//! stands on graphs. This crate is the one place that knows how they are stored:
//!
//! - [`bv`]: BVGraphs (the WebGraph format of LAW's datasets), opened safely with derived
//!   files (`.ef` index, transpose) kept in a [`cache::Cache`], never beside the input;
//! - [`csr`]: a compact in-memory form for algorithms that sweep all arcs many times;
//! - [`access`]: the small traits algorithms are generic over ([`Successors`],
//!   [`SequentialSuccessors`], [`Transpose`]), implemented by the [`Csr`] and by the
//!   memory-mapped [`BvWebGraph`], and the choice between them ([`InMemory`]);
//! - [`import`]: arc lists, URL pairs, id→URL tables and GML turned into BVGraphs by
//!   streaming through an external sort;
//! - [`urls`] and [`hosts`]: LAW's `.urls` convention, URL normalisation and a host per page
//!   (with [`basename`], [`atomic`], [`text`] and [`table`], crawlrank-util's modules, which
//!   crates that need no graph use directly);
//! - [`page_ids`]: the ids users see (an imported arc list's own ids, from `.ids`) and the one
//!   parser of ids read from users;
//! - [`visit`]: breadth-first search by depth and strongly connected components, written once;
//! - [`stats`]: the statistics `crawlrank info` and the generator's documentation report;
//! - [`output`]: a BVGraph written for the user, with the `.ef` index and `.urls` beside it,
//!   as LAW's own tools (webgraph-rs, its Python bindings) open it;
//! - [`arclist`]: any graph as a text arc list (`src<TAB>dst`, or URLs), for NetworkX and
//!   friends;
//! - [`source`]: what `--graph` means on the command line (a basename or an arc list);
//! - [`basename`]: the path rules of a graph's family of files (`X.graph`, `X.urls`, …);
//! - [`atomic`]: outputs that appear whole or not at all;
//! - [`testdata`]: where tests and benchmarks find the real graphs that are not in the repository;
//! - [`impact_table`] and [`text`]: impact tables (a page id or URL, then clicks or views) and the
//!   line reader of tabular text they share with crawlrank-impact's inputs; the crawler reads
//!   its search log by URL with [`impact_table::read_url_impacts`].
//!
//! Entry points, all at the crate root:
//! - a graph: [`open_graph`] (what `--graph` names: a basename or an arc list),
//!   [`BvWebGraph::open`], [`is_bvgraph`]; [`BvWebGraph::to_csr`] decodes it into a [`Csr`];
//!   derived files live in a [`Cache`];
//! - its URLs and hosts: [`read_urls`], [`normalize_url`], [`BvWebGraph::hosts`] ([`Hosts`]);
//! - its pages' ids as users see them: [`BvWebGraph::page_ids`] ([`PageIds`]);
//! - statistics: [`GraphStats`];
//! - importing: [`import::import`] with [`ImportOptions`] (and [`ImportFormat`]), or
//!   [`import::import_with_progress`] ([`ImportProgress`], [`ImportPhase`]), giving an
//!   [`ImportReport`];
//! - writing: [`GraphWriter`] (a BVGraph with `.ef` and `.urls`), [`arclist::convert`] (a
//!   graph as text arcs), [`atomic::write_file`]; [`with_ext`] names a graph's files.

#![warn(missing_docs)]

/// URLs and hosts, atomic outputs, text lines and tables: `crawlrank-util`'s, re-exported here
/// where every graph reader has always found them.
pub use crawlrank_util::{atomic, basename, hosts, table, text, urls};

pub mod access;
pub mod arclist;
pub mod bv;
pub mod cache;
pub mod csr;
pub mod csv;
pub mod impact_table;
pub mod import;
pub mod output;
pub mod page_ids;
pub mod source;
pub mod stats;
pub mod testdata;
pub mod visit;

pub use access::{
    GraphSize, InMemory, SequentialSuccessors, Successors, Transpose, AUTO_MEMORY_SHARE,
};
pub use basename::with_ext;
pub use bv::{is_bvgraph, BvWebGraph};
pub use cache::Cache;
pub use csr::Csr;
pub use hosts::Hosts;
pub use import::{ImportFormat, ImportOptions, ImportPhase, ImportProgress, ImportReport};
pub use output::GraphWriter;
pub use page_ids::PageIds;
pub use source::open_graph;
pub use stats::GraphStats;
pub use urls::{normalize_url, read_urls};
