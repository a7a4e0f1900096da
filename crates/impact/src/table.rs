//! Impact tables over a graph's pages: the format and its reader live in
//! [`crawlrank_graph::impact_table`] (documented there), which the crawler reads by URL alone;
//! here a table's rows are looked up in a graph's [`Pages`] (by id or URL) and read into dense
//! per-page vectors ([`read_impact_table`]), and written back ([`write_impact_table`]).

use crate::pages::Pages;
use anyhow::{bail, ensure, Result};
pub use crawlrank_graph::impact_table::{
    column_index, read_url_impacts, ImpactReport, UrlImpactTable, EXAMPLES,
};
use crawlrank_graph::impact_table::{is_url, read_table, PageLookup, RowKey};
use crawlrank_graph::page_ids::{looks_numeric, parse_id};
use crawlrank_graph::text::{shorten, At};
use std::path::Path;

/// An impact table over a graph's pages (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct ImpactTable {
    /// Names of the impact columns (from the header, else `impact` or `impact1`, `impact2`).
    pub columns: Vec<String>,
    /// `values[c][page]`: impact of column `c` of each page, 0 where the table has none.
    pub values: Vec<Vec<f64>>,
    /// What reading the table found.
    pub report: ImpactReport,
}

impl ImpactTable {
    /// The values of the column named `name`.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.columns
            .iter()
            .position(|c| c == name)
            .map(|i| self.values[i].as_slice())
    }
}

/// Writes an impact table over `pages` (atomically): a header `id[<TAB>url]<TAB>names…`, then
/// one row per page with a positive value in some column, in id order; the URL column when the
/// pages have URLs. Values are written in Rust's shortest round-trip form (`53`, `0.5`), so
/// [`read_impact_table`] reads back exactly what was written.
pub fn write_impact_table(
    path: &Path,
    pages: &Pages,
    names: &[&str],
    columns: &[&[f64]],
) -> Result<()> {
    use std::io::Write;
    ensure!(
        names.len() == columns.len() && (1..=2).contains(&columns.len()),
        "an impact table has one or two named columns"
    );
    for c in columns {
        ensure!(
            c.len() == pages.len(),
            "impacts for {} pages, the graph has {}",
            c.len(),
            pages.len()
        );
    }
    let urls = pages.has_urls();
    crawlrank_graph::atomic::write_file(path, |w| {
        let io = |e: std::io::Error| {
            anyhow::Error::new(e).context(format!("cannot write {}", path.display()))
        };
        let head = if urls { "id\turl" } else { "id" };
        writeln!(w, "{head}\t{}", names.join("\t")).map_err(io)?;
        for p in 0..pages.len() {
            if columns.iter().all(|c| c[p] <= 0.0) {
                continue;
            }
            write!(w, "{}", pages.id(p)).map_err(io)?;
            if urls {
                write!(w, "\t{}", pages.url(p).unwrap_or("")).map_err(io)?;
            }
            for c in columns {
                write!(w, "\t{}", c[p]).map_err(io)?;
            }
            writeln!(w).map_err(io)?;
        }
        Ok(())
    })
}

/// A graph's pages, by id or URL.
struct ByGraph<'a>(&'a Pages);

impl PageLookup for ByGraph<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn page(&mut self, key: RowKey<'_>, at: &At) -> Result<Option<usize>> {
        resolve(key, self.0, at)
    }
}

/// Reads the impact table `path` over `pages` (the format: [`crawlrank_graph::impact_table`]).
pub fn read_impact_table(path: &Path, pages: &Pages) -> Result<ImpactTable> {
    let (columns, values, report) = read_table(path, &mut ByGraph(pages))?;
    Ok(ImpactTable {
        columns,
        values,
        report,
    })
}

/// The page a row names, `None` if the graph does not have it.
fn resolve(key: RowKey<'_>, pages: &Pages, at: &At) -> Result<Option<usize>> {
    let (k, url) = match key {
        RowKey::One(k) => (k, None),
        RowKey::IdUrl(id, url) => (id, Some(url)),
    };
    if url.is_some() || looks_numeric(k) {
        let id = parse_id(k, at)?;
        let Some(page) = pages.ids().node(id) else {
            return Ok(None);
        };
        if let Some(url) = url {
            if let Some(have) = pages.url(page) {
                let same = have == url
                    || crawlrank_graph::urls::normalize_url(url).is_ok_and(|u| u == have);
                ensure!(
                    same,
                    "{at}: page {id} of the graph is {have}, not {}: the table was made for another graph",
                    shorten(url)
                );
            }
        }
        return Ok(Some(page));
    }
    if !is_url(k) {
        bail!("{at}: '{}' is neither a page id nor a URL", shorten(k));
    }
    if !pages.has_urls() {
        bail!(
            "{at}: '{}' is a URL, and the graph has no URLs to look it up in",
            shorten(k)
        );
    }
    if let Err(e) = crawlrank_graph::urls::normalize_url(k) {
        bail!("{at}: {e}");
    }
    Ok(pages.by_url(k))
}
