//! Small shared helpers with no graph in them: URLs and hosts, a graph's family of file names,
//! outputs written atomically, tabular text and aligned tables. Why a crate of their own: the
//! fetcher, the plots and the dashboard need these and nothing of `crawlrank-graph`'s graphs,
//! whose dependencies (webgraph and its kin) they would otherwise compile and link.
//!
//! | module | job |
//! |---|---|
//! | [`urls`] | LAW's `.urls` convention (one URL a line, gzipped or not), URL normalisation |
//! | [`hosts`] | a host per page, registrable domains (eTLD+1), origins (`scheme://host:port`) |
//! | [`basename`] | the path rules of a graph's family of files (`X.graph`, `X.urls`, …) |
//! | [`atomic`] | outputs that appear whole or not at all (written aside, then renamed) |
//! | [`text`] | the line reader of tabular text (gzipped or not), with line numbers in errors |
//! | [`table`] | aligned text tables for reports |
//!
//! `crawlrank-graph` re-exports every module under the same name.

#![warn(missing_docs)]

pub mod atomic;
pub mod basename;
pub mod hosts;
pub mod table;
pub mod text;
pub mod urls;
