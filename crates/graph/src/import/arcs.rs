//! Integer arc lists, alone or with an id→URL table.

use super::ids::{IdCollector, NodeIds};
use super::lines::{
    fields, id_error_message, is_skippable, is_word, parse_id, show, sort_unique_ids, LineReader,
};
use super::{count_duplicate_urls, Ctx, ImportPhase, ImportReport};
use anyhow::{bail, Context, Result};
use std::cell::Cell;
use std::path::Path;

/// Parses the lines of an arc list, remembering whether a header may still come.
pub(super) struct ArcParser {
    allow_extra: bool,
    seen_data: bool,
    pub(super) header: bool,
}

impl ArcParser {
    pub(super) fn new(allow_extra: bool) -> Self {
        Self {
            allow_extra,
            seen_data: false,
            header: false,
        }
    }

    /// The arc on `line`, `None` for a comment, blank or header line, or why the line is wrong.
    #[inline]
    pub(super) fn parse(&mut self, line: &[u8]) -> Result<Option<(u64, u64)>, String> {
        if is_skippable(line) {
            return Ok(None);
        }
        let first = !self.seen_data;
        self.seen_data = true;
        let mut it = fields(line);
        let (Some(a), Some(b)) = (it.next(), it.next()) else {
            return Err(format!("expected two integer ids, found '{}'", show(line)));
        };
        let extra = it.next().is_some();
        if extra && !self.allow_extra {
            let hint = if parse_id(a).is_ok() && parse_id(b).is_ok() {
                " (more than two fields; allow extra columns to ignore them)"
            } else {
                ""
            };
            return Err(format!(
                "expected two integer ids, found '{}'{hint}",
                show(line)
            ));
        }
        match (parse_id(a), parse_id(b)) {
            (Ok(s), Ok(d)) => Ok(Some((s, d))),
            _ if first && is_word(a) && is_word(b) => {
                self.header = true;
                Ok(None)
            }
            (Err(e), _) => Err(id_error_message(e, a, line, "two integer ids")),
            (_, Err(e)) => Err(id_error_message(e, b, line, "two integer ids")),
        }
    }
}

/// Arcs in node ids, or the first error met reading them.
type Pairs<'a> = Box<dyn Iterator<Item = Result<(usize, usize)>> + 'a>;

/// Reads the arcs of `input` (again), mapping ids to nodes through `map`, for the external
/// sort; `missing` explains an id `map` does not know. Stores the number of lines read in
/// `lines` when done.
fn mapped_arcs<'a>(
    input: &Path,
    ctx: &'a Ctx<'_>,
    map: impl Fn(u64) -> Option<usize> + 'a,
    missing: impl Fn(u64) -> String + 'a,
    lines: &'a Cell<u64>,
) -> Result<Pairs<'a>> {
    let mut r = LineReader::open(input)?;
    ctx.progress.phase(ImportPhase::Sort, r.total_bytes());
    let mut p = ArcParser::new(ctx.opts.allow_extra_columns);
    Ok(Box::new(std::iter::from_fn(move || loop {
        match r.advance() {
            Ok(true) => {}
            Ok(false) => {
                lines.set(r.line());
                return None;
            }
            Err(e) => return Some(Err(e)),
        };
        let parsed = p.parse(r.current());
        ctx.progress.tick(ImportPhase::Sort, &r);
        match parsed {
            Ok(None) => continue,
            Ok(Some((s, d))) => {
                return Some(match (map(s), map(d)) {
                    (Some(s), Some(d)) => Ok((s, d)),
                    (None, _) => Err(r.err(missing(s))),
                    (_, None) => Err(r.err(missing(d))),
                })
            }
            Err(m) => return Some(Err(r.err(m))),
        }
    })))
}

pub(super) fn import_arcs(input: &Path, ctx: &Ctx) -> Result<ImportReport> {
    let mut report = ImportReport::default();
    let mut r = LineReader::open(input)?;
    ctx.progress.phase(ImportPhase::Scan, r.total_bytes());
    let mut p = ArcParser::new(ctx.opts.allow_extra_columns);
    let mut ids = IdCollector::new();
    let mut arcs = 0u64;
    while r.advance()? {
        match p.parse(r.current()) {
            Ok(Some((s, d))) => {
                ids.insert(s);
                ids.insert(d);
                arcs += 1;
            }
            Ok(None) => {}
            Err(m) => return Err(r.err(m)),
        }
        ctx.progress.tick(ImportPhase::Scan, &r);
    }
    report.lines = r.line();
    report.header_skipped = p.header;
    if arcs == 0 {
        bail!(
            "{}: empty graph: the input has no arcs and no nodes ({} lines, none with an arc)",
            input.display(),
            report.lines
        );
    }
    drop(r);
    let map = ids
        .finish(ctx.opts.keep_ids)
        .with_context(|| format!("cannot import {}", input.display()))?;
    let n = map.num_nodes();
    let lines = Cell::new(0);
    let pairs = mapped_arcs(
        input,
        ctx,
        |id| map.get(id),
        |id| format!("id {id} was not in the file when it was first read (did it change?)"),
        &lines,
    )?;
    let stats = ctx.write_graph(n, pairs)?;
    report.set_graph(n, &stats);
    if !map.is_identity() {
        ctx.write_staged(".ids", |w| map.write_ids(w))?;
        report.ids_written = true;
    }
    Ok(report)
}

pub(super) fn import_id_urls(input: &Path, urls_file: &Path, ctx: &Ctx) -> Result<ImportReport> {
    let mut report = ImportReport::default();

    // The table: (id, line, url) for every node.
    let mut r = LineReader::open(urls_file)?;
    ctx.progress.phase(ImportPhase::Scan, r.total_bytes());
    let mut table: Vec<(u64, u64, Box<str>)> = Vec::new();
    let mut seen_data = false;
    while ctx.progress.next_data_line(ImportPhase::Scan, &mut r)? {
        let line = r.current();
        let first = !seen_data;
        seen_data = true;
        let trimmed = line.trim_ascii();
        let split = trimmed
            .iter()
            .position(|&b| b == b' ' || b == b'\t')
            .unwrap_or(trimmed.len());
        let (id_field, rest) = trimmed.split_at(split);
        let id = match parse_id(id_field) {
            Ok(id) => id,
            Err(_) if first && is_word(id_field) => {
                report.header_skipped = true;
                continue;
            }
            Err(e) => return Err(r.err(id_error_message(e, id_field, line, "an id and a URL"))),
        };
        let raw = String::from_utf8_lossy(rest.trim_ascii());
        let url: Box<str> = if raw.is_empty() {
            report.missing_urls += 1;
            "".into()
        } else {
            match crate::urls::normalize_url_or_host(&raw) {
                Ok(u) => u.into(),
                Err(_) => {
                    report.invalid_urls += 1;
                    raw.into()
                }
            }
        };
        table.push((id, r.line(), url));
    }
    report.url_lines = r.line();
    drop(r);
    if table.is_empty() {
        bail!(
            "{}: empty graph: the URL table has no nodes",
            urls_file.display()
        );
    }
    sort_unique_ids(&mut table, urls_file, |id, a| {
        format!("id {id} already has a URL (line {a})")
    })?;
    let known = NodeIds::from_sorted_unique(table.iter().map(|e| e.0).collect());
    let max = table.last().map(|e| e.0).unwrap_or(0);
    let urls: Vec<Box<str>> = if ctx.opts.keep_ids && !known.is_identity() {
        if max >= super::ids::MAX_NODES {
            bail!(
                "{}: the largest id is {max}; keeping the original ids needs more nodes than \
                 crawlrank supports",
                urls_file.display()
            );
        }
        let mut v: Vec<Box<str>> = vec!["".into(); max as usize + 1];
        report.missing_urls += v.len() as u64 - table.len() as u64;
        for (id, _, u) in table {
            v[id as usize] = u;
        }
        v
    } else {
        table.into_iter().map(|e| e.2).collect()
    };
    report.duplicate_urls = count_duplicate_urls(&urls);
    report.implausible_hosts = crate::hosts::implausible_hosts(&urls);
    let n = urls.len();
    let keep = ctx.opts.keep_ids;
    let table_name = urls_file.display().to_string();
    let lines = Cell::new(0);
    let pairs = mapped_arcs(
        input,
        ctx,
        |id| {
            known
                .get(id)
                .map(|node| if keep { id as usize } else { node })
        },
        move |id| format!("id {id} has no URL in {table_name}"),
        &lines,
    )?;
    let stats = ctx.write_graph(n, pairs)?;
    report.set_graph(n, &stats);
    report.lines = lines.get();
    ctx.write_staged(".urls", |w| crate::urls::write_urls_to(w, &urls))?;
    report.urls_written = true;
    ctx.write_ids_if_renumbered(&known, &mut report)?;
    Ok(report)
}
