//! URL pairs `SRC_URL DST_URL`.
//!
//! One pass over the text normalises every URL, numbers distinct URLs provisionally in order of
//! first appearance (a hash map) and writes the provisional arcs to an anonymous temporary file
//! (8 bytes per arc). Then the URLs are sorted, and a second pass over the temporary file feeds
//! the final ids to the external sort: URLs are parsed only once.

use super::ids::MAX_NODES;
use super::lines::{fields, show, LineReader};
use super::{Ctx, ImportPhase, ImportProgress, ImportReport};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

/// Distinct normalised URLs with provisional ids, with a cache of the last raw fields (arc
/// lists are often grouped by source, so the source is usually the previous line's).
struct Interner {
    ids: HashMap<Box<str>, u32>,
    recent: [(Vec<u8>, u32); 2],
    next_slot: usize,
}

impl Interner {
    fn new() -> Self {
        Self {
            ids: HashMap::new(),
            recent: [(Vec::new(), 0), (Vec::new(), 0)],
            next_slot: 0,
        }
    }

    /// The provisional id of the URL in `field`, or why it is not a URL.
    fn intern(&mut self, field: &[u8]) -> Result<u32, String> {
        for (raw, id) in &self.recent {
            if !raw.is_empty() && raw == field {
                return Ok(*id);
            }
        }
        let s = std::str::from_utf8(field)
            .map_err(|_| format!("'{}' is not valid UTF-8", show(field)))?;
        let url = crate::urls::normalize_url(s).map_err(|e| e.to_string())?;
        let id = match self.ids.get(url.as_str()) {
            Some(&id) => id,
            None => {
                let id = self.ids.len() as u64;
                if id >= MAX_NODES {
                    return Err(format!(
                        "more than {MAX_NODES} distinct URLs; crawlrank supports at most \
                         {MAX_NODES} nodes"
                    ));
                }
                self.ids.insert(url.into_boxed_str(), id as u32);
                id as u32
            }
        };
        let slot = &mut self.recent[self.next_slot];
        slot.0.clear();
        slot.0.extend_from_slice(field);
        slot.1 = id;
        self.next_slot ^= 1;
        Ok(id)
    }
}

pub(super) fn import_url_pairs(input: &Path, ctx: &Ctx) -> Result<ImportReport> {
    let mut report = ImportReport::default();
    let mut r = LineReader::open(input)?;
    ctx.progress.phase(ImportPhase::Scan, r.total_bytes());
    let tmp = match &ctx.opts.tmp_dir {
        Some(d) => tempfile::tempfile_in(d),
        None => tempfile::tempfile(),
    }
    .context("cannot create a temporary file for the arcs")?;
    let mut w = BufWriter::with_capacity(1 << 20, tmp);
    let mut urls = Interner::new();
    let mut seen_data = false;
    let mut arcs = 0u64;
    while ctx.progress.next_data_line(ImportPhase::Scan, &mut r)? {
        let line = r.current();
        let first = !seen_data;
        seen_data = true;
        let mut it = fields(line);
        let (Some(a), Some(b)) = (it.next(), it.next()) else {
            return Err(r.err(format!("expected two URLs, found '{}'", show(line))));
        };
        if it.next().is_some() && !ctx.opts.allow_extra_columns {
            return Err(r.err(format!("expected two URLs, found '{}'", show(line))));
        }
        let plain_word = |t: &[u8]| !t.iter().any(|c| matches!(c, b':' | b'.' | b'/'));
        if first && plain_word(a) && plain_word(b) {
            report.header_skipped = true;
            continue;
        }
        let s = urls.intern(a).map_err(|m| r.err(m))?;
        let d = urls.intern(b).map_err(|m| r.err(m))?;
        w.write_all(&s.to_le_bytes())?;
        w.write_all(&d.to_le_bytes())?;
        arcs += 1;
    }
    report.lines = r.line();
    drop(r);
    if arcs == 0 {
        bail!(
            "{}: empty graph: the input has no arcs and no nodes ({} lines, none with an arc)",
            input.display(),
            report.lines
        );
    }
    let mut tmp = w
        .into_inner()
        .map_err(|e| e.into_error())
        .context("cannot write the temporary arc file")?;
    tmp.rewind()?;

    // Final numbering: lexicographic order of the normalised URLs.
    let mut entries: Vec<(Box<str>, u32)> = urls.ids.into_iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let n = entries.len();
    let mut perm = vec![0u32; n];
    for (rank, (_, prov)) in entries.iter().enumerate() {
        perm[*prov as usize] = rank as u32;
    }
    let sorted_urls: Vec<Box<str>> = entries.into_iter().map(|e| e.0).collect();
    report.implausible_hosts = crate::hosts::implausible_hosts(&sorted_urls);

    ctx.progress.phase(ImportPhase::Sort, Some(arcs * 8));
    let mut rd = BufReader::with_capacity(1 << 20, tmp);
    let mut read = 0u64;
    let pairs = std::iter::from_fn(|| {
        if read == arcs {
            return None;
        }
        let mut buf = [0u8; 8];
        if let Err(e) = rd.read_exact(&mut buf) {
            return Some(Err(
                anyhow::Error::new(e).context("cannot read the temporary arc file")
            ));
        }
        read += 1;
        if read & 0xFFFF == 0 {
            ctx.progress.report(ImportProgress {
                phase: ImportPhase::Sort,
                lines: read,
                bytes: read * 8,
                total_bytes: Some(arcs * 8),
            });
        }
        let [s0, s1, s2, s3, d0, d1, d2, d3] = buf;
        let s = u32::from_le_bytes([s0, s1, s2, s3]);
        let d = u32::from_le_bytes([d0, d1, d2, d3]);
        Some(Ok((perm[s as usize] as usize, perm[d as usize] as usize)))
    });
    let stats = ctx.write_graph(n, pairs)?;
    report.set_graph(n, &stats);
    drop(perm);
    ctx.write_staged(".urls", |w| crate::urls::write_urls_to(w, &sorted_urls))?;
    report.urls_written = true;
    Ok(report)
}
