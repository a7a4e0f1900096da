//! Importers: arc lists, URL pairs, id→URL tables and GML turned into BVGraphs.
//!
//! [`import`] reads a text input and writes the BVGraph `BASENAME` (`.graph`, `.offsets`,
//! `.properties` and the Elias–Fano index `.ef`), plus `BASENAME.urls` (line `i` = URL of node
//! `i`, LAW's convention) when URLs are known and `BASENAME.ids` (line `i` = original id of node
//! `i`) when the original ids are not `0..n`: commands read it back
//! ([`PageIds`](crate::PageIds)) so that users keep speaking their own ids. The graph is written through a [`GraphWriter`]: in a
//! staging directory beside the output, moved into place only when complete, so an error leaves
//! no file that looks like a result. Companion files of an earlier graph with the same basename
//! that this import does not write (`.ef`, `.ids`, `.urls`, `.urls.gz`) are removed afterwards,
//! so that they cannot be mistaken for this graph's.
//!
//! # Formats
//!
//! - [`ImportFormat::Arcs`]: one arc `SRC DST` per line, two non-negative integer ids
//!   (`0..=2^63-1`) separated by spaces or tabs. Blank lines and lines starting with `#` or `%`
//!   are ignored; the first non-comment line may be a header of two words that are not numbers
//!   (`start end`). A line with more than two fields is an error unless
//!   [`ImportOptions::allow_extra_columns`] is set (then fields after the second, e.g. weights
//!   or timestamps, are ignored): silently dropping a column is how a weighted or temporal list
//!   gets misread. Nodes are the ids that occur in some arc, numbered in increasing order of
//!   original id, so an input whose ids are exactly `0..n` keeps them; otherwise (sparse or
//!   1-based ids) `BASENAME.ids` records the original ids, which remain the ids every command
//!   reads and writes ([`page_ids`](crate::page_ids)). With
//!   [`ImportOptions::keep_ids`] node ids are the original ids and missing ids become isolated
//!   nodes.
//! - [`ImportFormat::UrlPairs`]: one arc `SRC_URL DST_URL` per line (same comment, header and
//!   column rules; a header's fields contain no `:`, `.` or `/`). URLs are normalised with
//!   [`normalize_url`](crate::urls::normalize_url); a URL that does not parse is an error.
//!   Nodes are the distinct normalised URLs numbered in lexicographic (byte) order — LAW's
//!   order: pages of a host are contiguous, which compresses well and suits per-host work.
//!   The URL→id map is a hash map of the distinct URLs (about 100 bytes per URL plus its
//!   length), the only memory that grows with the input besides per-node arrays.
//! - [`ImportFormat::IdUrls`]: an arc list as above plus a table `ID URL` (one node per
//!   line, optional header such as `link url`, comments as above; the URL is the rest of the
//!   line). The table defines the nodes: every id of the arc list must be in it, numbering is
//!   by increasing id as for arc lists. URLs are normalised when they parse; one that does not
//!   is kept as written (trimmed) and counted in [`ImportReport::invalid_urls`].
//! - [`ImportFormat::Gml`]: `graph [ directed 1 node [ id N label "…" … ] edge [ source A
//!   target B … ] ]`; any other key and any nested list is skipped, `#` starts a comment,
//!   strings may contain spaces and newlines, and `&amp;`-style entities are decoded. Nodes
//!   are numbered by increasing GML id (`.ids` when that is not `0..n`); ids must be
//!   non-negative integers. Labels become `.urls` through
//!   [`normalize_url_or_host`](crate::urls::normalize_url_or_host) (`foo.com` →
//!   `http://foo.com/`; a label that is neither a URL nor a host name is kept as written and
//!   counted as invalid; a node without a label gets an empty line and is counted in
//!   [`ImportReport::missing_urls`]; no `.urls` at all if no node has a label). An undirected
//!   graph (`directed 0`, or no `directed` key, GML's default) is symmetrised: each edge
//!   becomes two arcs, and [`ImportReport::symmetrized`] is set.
//!
//! In every format duplicate arcs are removed (counted in
//! [`ImportReport::duplicate_arcs_dropped`]) and self-loops are kept (counted in
//! [`ImportReport::self_loops`]). Inputs may be gzip-compressed (recognised by content).
//!
//! # Format detection ([`ImportFormat::Auto`], see [`detect_format`])
//!
//! A file named `*.gml` (or `*.gml.gz`), or whose first non-comment line starts with `graph`,
//! `Creator` or `Version`, is GML. Otherwise the first data line decides (after a header, if
//! the first line is one): two integers → arc list; two fields containing `://` → URL pairs;
//! an integer followed by a URL → an error explaining that an id→URL table must be given
//! beside an arc list ([`ImportFormat::IdUrls`]); anything else → an error asking for an
//! explicit format. Id→URL imports are never auto-detected: they need the second file.
//!
//! # Memory and speed
//!
//! Arc lists and GML are read twice: a scan that validates every line and collects node ids,
//! then a pass that feeds renumbered arcs to `webgraph`'s external-memory sort (with
//! duplicate removal) and on to the parallel BVGraph compressor. An id→URL import reads the
//! table once and the arc list once; URL pairs are parsed once, the provisional arcs going
//! through an anonymous temporary file (8 bytes per arc, on disk). Memory is O(nodes) — the
//! id map (ids below 2^32: a bitmap up to the largest id, 1.5 bits per possible id; larger
//! ids: 8 bytes per node), a bitmap of self-loops, URLs when there are any — plus the sort's
//! fixed budget ([`ImportOptions::sort_memory`], default [`DEFAULT_SORT_MEMORY`]); never
//! O(arcs). Sorted batches go to the system temporary directory (`TMPDIR`), gap-compressed
//! (a few bytes per arc).

mod arcs;
mod gml;
mod ids;
pub(crate) mod lines;
mod url_pairs;

use crate::output::GraphWriter;
use anyhow::{bail, ensure, Context, Result};
use std::path::{Path, PathBuf};
use webgraph::prelude::*;
use webgraph::utils::MemoryUsage;

/// Default memory budget of the external sort of arcs: 1 GiB.
pub const DEFAULT_SORT_MEMORY: usize = 1 << 30;

/// What the input of an import is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ImportFormat {
    /// Detect the format from the file name and its first lines (see [`detect_format`]).
    #[default]
    Auto,
    /// Integer arc list `SRC DST`.
    Arcs,
    /// URL pairs `SRC_URL DST_URL`.
    UrlPairs,
    /// An integer arc list (the input) plus a table `ID URL` giving each node's URL.
    IdUrls {
        /// The id→URL table.
        urls: PathBuf,
    },
    /// Graph Modelling Language.
    Gml,
}

impl ImportFormat {
    /// A short name for messages: `auto`, `arcs`, `url-pairs`, `id-urls`, `gml`.
    pub fn name(&self) -> &'static str {
        match self {
            ImportFormat::Auto => "auto",
            ImportFormat::Arcs => "arcs",
            ImportFormat::UrlPairs => "url-pairs",
            ImportFormat::IdUrls { .. } => "id-urls",
            ImportFormat::Gml => "gml",
        }
    }
}

impl std::fmt::Display for ImportFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How to import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The input format ([`ImportFormat::Auto`] by default).
    pub format: ImportFormat,
    /// Use original ids as node ids (arc lists, id→URL tables, GML): the graph has
    /// `max id + 1` nodes, ids that do not occur are isolated nodes, no `.ids` is written.
    pub keep_ids: bool,
    /// Ignore fields after the second on arc and URL-pair lines instead of rejecting them.
    pub allow_extra_columns: bool,
    /// Bytes of memory for sorting arcs in memory before spilling sorted batches to disk
    /// (default [`DEFAULT_SORT_MEMORY`]). Smaller means more, smaller batches.
    pub sort_memory: usize,
    /// Write `BASENAME.ef` (the random-access index) beside the graph (default `true`).
    pub write_ef: bool,
    /// Directory for the temporary files of the import itself (URL-pair arcs, parallel
    /// compression); default the system temporary directory. The arc sort always uses the
    /// system temporary directory (`TMPDIR`).
    pub tmp_dir: Option<PathBuf>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            format: ImportFormat::Auto,
            keep_ids: false,
            allow_extra_columns: false,
            sort_memory: DEFAULT_SORT_MEMORY,
            write_ef: true,
            tmp_dir: None,
        }
    }
}

impl ImportOptions {
    /// Default options with the given format.
    pub fn with_format(format: ImportFormat) -> Self {
        Self {
            format,
            ..Self::default()
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportReport {
    /// The format used (never [`ImportFormat::Auto`]).
    pub format: ImportFormat,
    /// The output basename.
    pub basename: PathBuf,
    /// The files written, in the output directory.
    pub files: Vec<PathBuf>,
    /// Nodes of the graph.
    pub nodes: u64,
    /// Distinct arcs of the graph.
    pub arcs: u64,
    /// Arcs read from the input (twice the edges of an undirected GML graph).
    pub input_arcs: u64,
    /// `input_arcs - arcs`: repeated arcs removed.
    pub duplicate_arcs_dropped: u64,
    /// Self-loops (distinct) in the graph.
    pub self_loops: u64,
    /// Lines of the main input, including comments, blank lines and the header.
    pub lines: u64,
    /// Lines of the id→URL table ([`ImportFormat::IdUrls`]).
    pub url_lines: u64,
    /// Whether the first line was a header and was skipped.
    pub header_skipped: bool,
    /// Whether the original ids are not `0..n` and `BASENAME.ids` was written.
    pub ids_written: bool,
    /// Whether `BASENAME.urls` was written.
    pub urls_written: bool,
    /// URLs (id→URL table, GML labels) that are not valid URLs and were kept as written.
    pub invalid_urls: u64,
    /// Nodes without a URL (an empty line in `.urls`).
    pub missing_urls: u64,
    /// Nodes whose URL is also an earlier node's (id→URL table, GML: such nodes are kept
    /// apart; URL pairs merge them by construction).
    pub duplicate_urls: u64,
    /// URLs that parse but whose host is not plausible (not an IP address, `localhost` or a
    /// name under a known public suffix: `http://www1/…`, `http://www1.hollins/edu/…`). They
    /// are kept; this count is a hint at typos in the input.
    pub implausible_hosts: u64,
    /// Whether an undirected GML graph was symmetrised.
    pub symmetrized: bool,
    /// Bytes of the `.graph` bitstream.
    pub graph_bytes: u64,
}

/// Which stage an import is in, for progress displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportPhase {
    /// Reading and validating the input, collecting node ids or URLs.
    Scan,
    /// Reading the arcs again, renumbered, into the external sort.
    Sort,
    /// Compressing the sorted arcs into a BVGraph (no line counts).
    Compress,
    /// Writing the `.ef` index, `.urls` and `.ids`.
    Finish,
}

/// A progress report: called at the start of each phase and every 65,536 lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportProgress {
    /// The phase running.
    pub phase: ImportPhase,
    /// Lines read in this phase.
    pub lines: u64,
    /// Bytes read in this phase (decompressed).
    pub bytes: u64,
    /// Size of the file read in this phase, when known (not for compressed inputs).
    pub total_bytes: Option<u64>,
}

/// Imports `input` into the BVGraph `out` (a basename; a trailing `.graph` is accepted and
/// removed). See the [module documentation](self).
pub fn import(input: &Path, out: &Path, opts: &ImportOptions) -> Result<ImportReport> {
    import_with_progress(input, out, opts, &mut |_| {})
}

/// [`import`] with a progress callback.
pub fn import_with_progress(
    input: &Path,
    out: &Path,
    opts: &ImportOptions,
    progress: &mut dyn FnMut(&ImportProgress),
) -> Result<ImportReport> {
    if !input.exists() {
        bail!("cannot import {}: no such file", input.display());
    }
    let format = match &opts.format {
        ImportFormat::Auto => detect_format(input)?,
        f => f.clone(),
    };
    if let ImportFormat::IdUrls { urls } = &format {
        if !urls.exists() {
            bail!(
                "cannot import {}: the URL table {} does not exist",
                input.display(),
                urls.display()
            );
        }
    }
    let mut writer = GraphWriter::new(out)?;
    if !opts.write_ef {
        writer = writer.without_ef();
    }
    let ctx = Ctx {
        opts,
        progress: Progress {
            callback: std::cell::RefCell::new(progress),
        },
        out: &writer,
    };
    let mut report = match &format {
        ImportFormat::Arcs => arcs::import_arcs(input, &ctx)?,
        ImportFormat::IdUrls { urls } => arcs::import_id_urls(input, urls, &ctx)?,
        ImportFormat::UrlPairs => url_pairs::import_url_pairs(input, &ctx)?,
        ImportFormat::Gml => gml::import_gml(input, &ctx)?,
        ImportFormat::Auto => unreachable!("resolved above"),
    };
    report.format = format;
    report.basename = writer.basename().to_path_buf();
    report.files = writer.commit()?;
    Ok(report)
}

/// Reads a `.ids` file (one original id per node) as it is; [`PageIds::read`](crate::PageIds::read)
/// also checks it against its graph.
pub fn read_ids(path: &Path) -> Result<Vec<u64>> {
    let mut r = lines::LineReader::open(path)?;
    let mut ids = Vec::new();
    while r.advance()? {
        let l = r.current();
        let t = std::str::from_utf8(l).ok().map(str::trim).unwrap_or("");
        match t.parse::<u64>() {
            Ok(id) => ids.push(id),
            Err(_) => return Err(r.err(format!("expected an id, found '{}'", lines::show(l)))),
        }
    }
    Ok(ids)
}

/// Guesses the format of `input` (see the [module documentation](self#format-detection-importformatauto)).
pub fn detect_format(input: &Path) -> Result<ImportFormat> {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".gml") || name.ends_with(".gml.gz") {
        return Ok(ImportFormat::Gml);
    }
    let mut r = lines::LineReader::open(input)?;
    let mut first = true;
    while r.advance()? {
        let line = r.current();
        if lines::is_skippable(line) {
            continue;
        }
        let text = String::from_utf8_lossy(line);
        let t = text.trim_start();
        let starts_key = |k: &str| {
            t.strip_prefix(k)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '[']))
        };
        if first && (starts_key("graph") || starts_key("Creator") || starts_key("Version")) {
            return Ok(ImportFormat::Gml);
        }
        let f: Vec<&[u8]> = lines::fields(line).take(3).collect();
        if f.len() >= 2 {
            let int = |t: &[u8]| !matches!(lines::parse_id(t), Err(lines::IdError::NotInteger));
            let url = |t: &[u8]| memchr::memmem::find(t, b"://").is_some();
            if int(f[0]) && int(f[1]) {
                return Ok(ImportFormat::Arcs);
            }
            if url(f[0]) && url(f[1]) {
                return Ok(ImportFormat::UrlPairs);
            }
            if int(f[0]) && url(f[1]) {
                bail!(
                    "{}: line {}: this looks like an id→URL table ('{}'); import the arc list \
                     and give this file as its URL table (format id-urls)",
                    input.display(),
                    r.line(),
                    lines::show(line)
                );
            }
            if first
                && f.iter()
                    .take(2)
                    .all(|t| lines::is_word(t) && !t.contains(&b':'))
            {
                first = false;
                continue; // a header line
            }
        }
        bail!(
            "{}: line {}: cannot tell the input format from '{}': expected two integer ids \
             (arc list), two URLs (URL pairs) or GML; give the format explicitly",
            input.display(),
            r.line(),
            lines::show(line)
        );
    }
    bail!(
        "{}: empty graph: the input has no arcs and no nodes",
        input.display()
    )
}

/// What every importer needs.
pub(crate) struct Ctx<'a> {
    pub(crate) opts: &'a ImportOptions,
    pub(crate) progress: Progress<'a>,
    pub(crate) out: &'a GraphWriter,
}

pub(crate) struct Progress<'a> {
    callback: std::cell::RefCell<&'a mut dyn FnMut(&ImportProgress)>,
}

impl Progress<'_> {
    pub(crate) fn phase(&self, phase: ImportPhase, total_bytes: Option<u64>) {
        (self.callback.borrow_mut())(&ImportProgress {
            phase,
            lines: 0,
            bytes: 0,
            total_bytes,
        });
    }

    /// Advances `r` to its next line of data, passing over blank and comment lines and
    /// reporting progress as [`tick`](Self::tick) does for every line read; `false` at the end
    /// of the input. The scans of line-based inputs share it so that they all skip alike.
    pub(crate) fn next_data_line(
        &self,
        phase: ImportPhase,
        r: &mut lines::LineReader,
    ) -> Result<bool> {
        while r.advance()? {
            self.tick(phase, r);
            if !lines::is_skippable(r.current()) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Reports every 65,536 lines.
    #[inline]
    pub(crate) fn tick(&self, phase: ImportPhase, r: &lines::LineReader) {
        if r.line() & 0xFFFF == 0 {
            (self.callback.borrow_mut())(&ImportProgress {
                phase,
                lines: r.line(),
                bytes: r.bytes(),
                total_bytes: r.total_bytes(),
            });
        }
    }

    pub(crate) fn report(&self, p: ImportProgress) {
        (self.callback.borrow_mut())(&p);
    }
}

/// What [`Ctx::write_graph`] found.
pub(crate) struct GraphStats {
    pub(crate) arcs: u64,
    pub(crate) input_arcs: u64,
    pub(crate) self_loops: u64,
    pub(crate) graph_bytes: u64,
}

impl Ctx<'_> {
    /// Sorts `pairs` (node ids in `0..n`) with duplicates removed and compresses them into the
    /// staged `.graph`/`.offsets`/`.properties` (the `.ef` is written on commit).
    pub(crate) fn write_graph(
        &self,
        n: usize,
        pairs: impl Iterator<Item = Result<(usize, usize)>>,
    ) -> Result<GraphStats> {
        ensure!(n > 0, "empty graph: the input has no arcs and no nodes");
        let mut loops = vec![0u64; n.div_ceil(64)];
        let mut input_arcs = 0u64;
        let pairs = pairs.inspect(|r| {
            if let Ok((s, d)) = r {
                input_arcs += 1;
                if s == d {
                    loops[s >> 6] |= 1 << (s & 63);
                }
            }
        });
        let sorted = ParSortedGraph::config()
            .dedup()
            .memory_usage(MemoryUsage::MemorySize(self.opts.sort_memory.max(1 << 16)))
            .sort_try_pairs(n, pairs)?;
        let self_loops = loops.iter().map(|w| w.count_ones() as u64).sum();
        drop(loops);

        self.progress.phase(ImportPhase::Compress, None);
        let props = self
            .out
            .par_compress(sorted, self.opts.tmp_dir.as_deref())?
            .properties;
        ensure!(
            props.nodes == n,
            "internal error: compressed {} nodes instead of {n}",
            props.nodes
        );
        let graph = self.out.staged_path(".graph");
        let graph_bytes = std::fs::metadata(&graph)
            .with_context(|| format!("cannot read {}", graph.display()))?
            .len();
        self.progress.phase(ImportPhase::Finish, None);
        Ok(GraphStats {
            arcs: props.arcs,
            input_arcs,
            self_loops,
            graph_bytes,
        })
    }

    /// Writes `.ids` beside the graph when its nodes were renumbered (the original ids not
    /// kept, and not `0..n` already), and says so in `report`: the importers that read node ids
    /// share it so that they agree on when the file exists.
    pub(crate) fn write_ids_if_renumbered(
        &self,
        known: &ids::NodeIds,
        report: &mut ImportReport,
    ) -> Result<()> {
        if !self.opts.keep_ids && !known.is_identity() {
            self.write_staged(".ids", |w| known.write_ids(w))?;
            report.ids_written = true;
        }
        Ok(())
    }

    /// Writes a staged companion file (`.urls`, `.ids`) through `fill`.
    pub(crate) fn write_staged(
        &self,
        suffix: &str,
        fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
    ) -> Result<()> {
        self.out.write_companion(suffix, fill)
    }
}

impl ImportReport {
    pub(crate) fn set_graph(&mut self, n: usize, g: &GraphStats) {
        self.nodes = n as u64;
        self.arcs = g.arcs;
        self.input_arcs = g.input_arcs;
        self.duplicate_arcs_dropped = g.input_arcs - g.arcs;
        self.self_loops = g.self_loops;
        self.graph_bytes = g.graph_bytes;
    }
}

/// Counts nodes whose URL equals an earlier node's (ignoring empty URLs).
pub(crate) fn count_duplicate_urls<S: AsRef<str>>(urls: &[S]) -> u64 {
    let mut v: Vec<&str> = urls
        .iter()
        .map(AsRef::as_ref)
        .filter(|u| !u.is_empty())
        .collect();
    v.sort_unstable();
    v.windows(2).filter(|w| w[0] == w[1]).count() as u64
}
