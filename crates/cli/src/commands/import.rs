//! `crawlrank import`: arc lists, URL pairs, id→URL tables and GML into BVGraphs.

use crate::progress;
use anyhow::{bail, Result};
use crawlrank_graph::{import, ImportFormat, ImportOptions, ImportPhase};
use std::path::PathBuf;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Guess from the file name and its first lines.
    Auto,
    /// `src dst` integer ids per line.
    Arcs,
    /// `src_url dst_url` per line.
    UrlPairs,
    /// Directed GML (`graph [ directed 1 node [ id … label … ] edge [ source … target … ] ]`).
    Gml,
    /// A Wikispeedia folder (or its links.tsv(.gz)): one node per line of articles.tsv, in
    /// order, URLs https://en.wikipedia.org/wiki/<name>, arcs from links.tsv.
    Wikispeedia,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The input file (plain or .gz).
    pub input: PathBuf,
    /// The output basename: writes BASENAME.graph, .offsets, .properties, .ef, and .urls /
    /// .ids when known.
    #[arg(long, value_name = "BASENAME")]
    pub out: PathBuf,
    /// Input format.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// An `id url` table giving the URL of each id of the arc-list INPUT (the Hollins format).
    #[arg(long, value_name = "FILE")]
    pub urls: Option<PathBuf>,
    /// Number the nodes by the original integer ids themselves (ids that do not occur become
    /// isolated pages) instead of densely; without it, ids that are not 0..n are kept in
    /// BASENAME.ids and commands still read and write them.
    #[arg(long)]
    pub keep_ids: bool,
    /// Ignore columns after the second instead of rejecting such lines.
    #[arg(long)]
    pub allow_extra_columns: bool,
    /// Memory for the in-memory part of the external arc sort, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    pub sort_memory: usize,
}

pub fn run(args: Args) -> Result<()> {
    if args.format == Format::Wikispeedia {
        return run_wikispeedia(args);
    }
    let format = match (args.format, args.urls) {
        (Format::Auto | Format::Arcs, Some(urls)) => ImportFormat::IdUrls { urls },
        (_, Some(_)) => bail!("--urls goes with an arc-list input (--format arcs or auto)"),
        (Format::Auto, None) => ImportFormat::Auto,
        (Format::Arcs, None) => ImportFormat::Arcs,
        (Format::UrlPairs, None) => ImportFormat::UrlPairs,
        (Format::Gml, None) => ImportFormat::Gml,
        (Format::Wikispeedia, None) => unreachable!("handled above"),
    };
    let opts = ImportOptions {
        format,
        keep_ids: args.keep_ids,
        allow_extra_columns: args.allow_extra_columns,
        sort_memory: args.sort_memory.max(1) << 20,
        ..ImportOptions::default()
    };
    // One bar per phase; by bytes when the input size is known (plain files), else by lines.
    let mut bar = progress::bar(None, "lines");
    let mut phase = None;
    let report = import::import_with_progress(&args.input, &args.out, &opts, &mut |p| {
        if phase != Some(p.phase) {
            phase = Some(p.phase);
            bar.finish_and_clear();
            bar = match p.total_bytes {
                Some(total) => progress::bytes_bar(total),
                None => progress::bar(None, "lines"),
            };
            bar.set_prefix(match p.phase {
                ImportPhase::Scan => "scanning",
                ImportPhase::Sort => "sorting",
                ImportPhase::Compress => "compressing",
                ImportPhase::Finish => "finishing",
            });
        }
        bar.set_position(if p.total_bytes.is_some() {
            p.bytes
        } else {
            p.lines
        });
    });
    bar.finish_and_clear();
    let report = report?;
    println!(
        "imported {} ({}) into {}: {} nodes, {} arcs ({} duplicate arcs dropped, {} self-loops)",
        args.input.display(),
        report.format,
        report.basename.display(),
        report.nodes,
        report.arcs,
        report.duplicate_arcs_dropped,
        report.self_loops
    );
    if report.invalid_urls > 0 || report.missing_urls > 0 || report.duplicate_urls > 0 {
        println!(
            "URLs: {} kept as written because they do not parse, {} nodes without a URL, {} shared by several nodes",
            report.invalid_urls, report.missing_urls, report.duplicate_urls
        );
    }
    if report.ids_written {
        println!(
            "ids: not 0..n, so the nodes are numbered densely and {} keeps the original ids, \
             which every command reads and writes",
            crawlrank_graph::with_ext(&report.basename, "ids").display()
        );
    }
    for f in &report.files {
        println!("  wrote {}", f.display());
    }
    Ok(())
}

/// `--format wikispeedia`: the reader lives in crawlrank-impact (it is the graph of that
/// crate's real traffic); the graph is written through the same `GraphWriter`.
fn run_wikispeedia(args: Args) -> Result<()> {
    if args.urls.is_some() || args.keep_ids || args.allow_extra_columns {
        bail!("--urls, --keep-ids and --allow-extra-columns do not apply to --format wikispeedia");
    }
    let report = crawlrank_impact::import_wikispeedia(&args.input, &args.out)?;
    println!(
        "imported {} (wikispeedia) into {}: {} nodes ({} without links), {} arcs ({} duplicate arcs dropped, {} self-loops)",
        args.input.display(),
        report.basename.display(),
        report.nodes,
        report.isolated,
        report.arcs,
        report.duplicate_arcs_dropped,
        report.self_loops
    );
    for f in &report.files {
        println!("  wrote {}", f.display());
    }
    Ok(())
}
