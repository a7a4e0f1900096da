//! Impact tables: a TSV or CSV file giving pages one or two impact values (clicks, views) —
//! the format, its reader, and the reader by URL alone that a crawler (which has no graph) uses.
//!
//! Why here: the crawler reads a search log in this format by URL ([`read_url_impacts`]), and
//! crawlrank-impact reads it over a graph's pages (`crawlrank_impact::read_impact_table`, with
//! its own page lookup through [`read_table`]); this is the lowest crate both stand on, and the
//! table is keyed by what this crate owns — page ids as users see them, and URLs.
//!
//! The impact-aware frontier rankings (the RW paper, docs/algorithms.md §6) need, for every page of a
//! graph, the observed search impact of the pages already downloaded. That signal comes from
//! outside the graph, usually as a small table keyed by URL; this module turns such a table
//! into one `Vec<f64>` per impact column, indexed by page id, and says what it did — so that a
//! table made for another graph, or full of pages the graph does not have, is seen at once
//! rather than silently becoming zeros.
//!
//! # Format
//!
//! - One row per line; the delimiter is a tab if the first data line has one, else a comma
//!   (CSV fields may be double-quoted). Blank lines and lines starting with `#` are skipped.
//! - The first line may be a header: it is one when none of its fields is a number or a URL.
//!   Its names name the impact columns; without a header they are `impact` (one column) or
//!   `impact1`, `impact2`.
//! - The key is the first column: a page id (the ids users see,
//!   [`PageIds`](crate::PageIds): an imported arc list's own ids, else `0..n`) or a
//!   URL (normalised and looked up in the graph's `.urls`), or the first two columns `id<TAB>url` (what `crawlrank impacts`
//!   writes; the header names them `id` and `url`, or, without a header, the first data row
//!   has an integer then a URL): the id is the key and the URL must be that page's URL when the
//!   graph has URLs, otherwise the table was made for another graph (an error).
//! - Then one or two impact columns: finite numbers ≥ 0. Every row has the same number of
//!   fields.
//!
//! # What is counted
//!
//! Rows naming a page the graph does not have (an id that is not one of its pages, a URL not
//! in `.urls`) are counted in
//! [`ImpactReport::unknown_rows`] with the first [`EXAMPLES`] in
//! [`ImpactReport::unknown_examples`]; they add nothing. Rows naming a page already named are
//! summed into it and counted in [`ImpactReport::duplicate_rows`]. A row with the wrong number
//! of fields, a key that is neither an id nor a URL (a negative or non-integer id among them),
//! or an impact that is negative, not a number, or not finite is an error naming `file:line`
//! and why; so is a table without any positive impact.
//!
//! # Without a graph
//!
//! A crawler has no graph to look pages up in, only URLs: [`read_url_impacts`] reads the same
//! format keyed by URL alone (the first column, or the `url` of an `id`+`url` table, whose ids
//! belong to some graph and are ignored), every distinct normalised URL being a page. A page id
//! key is then an error.

use crate::text::{is_comment, shorten, At, Delimiter, Lines};
use anyhow::{bail, ensure, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How many examples of unknown pages a report keeps.
pub const EXAMPLES: usize = 5;

/// What reading an impact table found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImpactReport {
    /// The file read.
    pub path: PathBuf,
    /// Its delimiter.
    pub delimiter: Option<Delimiter>,
    /// Whether its first data line was a header.
    pub header: bool,
    /// Data rows read (not counting the header, comments and blank lines).
    pub rows: u64,
    /// Pages with a positive impact in some column.
    pub pages_with_impact: u64,
    /// Pages with a positive impact, per column.
    pub pages_with_impact_per_column: Vec<u64>,
    /// Sum of each column over the pages of the graph.
    pub totals: Vec<f64>,
    /// Rows naming a page the graph does not have (ignored).
    pub unknown_rows: u64,
    /// The first few of them, as `file:line: key`.
    pub unknown_examples: Vec<String>,
    /// Rows naming a page that an earlier row named (their impacts are summed).
    pub duplicate_rows: u64,
}

impl std::fmt::Display for ImpactReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} rows, {} pages with impact",
            self.path.display(),
            self.rows,
            self.pages_with_impact
        )?;
        if self.duplicate_rows > 0 {
            write!(
                f,
                "; {} rows repeat an earlier page (summed)",
                self.duplicate_rows
            )?;
        }
        if self.unknown_rows > 0 {
            write!(
                f,
                "; {} rows name pages not in the graph (ignored), e.g. {}",
                self.unknown_rows,
                self.unknown_examples.join(", ")
            )?;
        }
        Ok(())
    }
}

/// How a table names its pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    /// Column 0: an id or a URL.
    One,
    /// Columns 0 and 1: id and URL.
    IdUrl,
}

fn is_number(s: &str) -> bool {
    s.trim().parse::<f64>().is_ok()
}

/// Whether a field is a URL (it has a scheme).
pub fn is_url(s: &str) -> bool {
    s.contains("://")
}

/// The index of the impact column `key` of the table `path` whose columns are `columns`: a
/// header name, or a number from 1 (the form of `--impact-column`). An error names the option,
/// the file and what it has.
pub fn column_index(path: &Path, columns: &[String], key: &str) -> Result<usize> {
    match key.parse::<usize>() {
        Ok(k) if k >= 1 && k <= columns.len() => Ok(k - 1),
        Ok(k) => bail!(
            "--impact-column {k}: {} has {} impact column(s)",
            path.display(),
            columns.len()
        ),
        Err(_) => match columns.iter().position(|c| c == key) {
            Some(i) => Ok(i),
            None => bail!(
                "--impact-column {key}: {} has the columns {}",
                path.display(),
                columns.join(", ")
            ),
        },
    }
}

/// The key of one row, as [`read_table`] hands it to a [`PageLookup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKey<'a> {
    /// A page id or a URL (the first column).
    One(&'a str),
    /// An id and a URL (the first two columns).
    IdUrl(&'a str, &'a str),
}

/// How [`read_table`] finds the page of each row.
pub trait PageLookup {
    /// Pages known now (values are kept for this many pages).
    fn len(&self) -> usize;
    /// Whether no page is known yet.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The page the row at `at` names, `None` if there is no such page (counted as unknown);
    /// an error names `at` and says why the key is wrong.
    fn page(&mut self, key: RowKey<'_>, at: &At) -> Result<Option<usize>>;
}

/// Every distinct normalised URL is a page, numbered as first met.
#[derive(Default)]
struct ByUrl {
    index: HashMap<String, usize>,
    urls: Vec<String>,
}

impl PageLookup for ByUrl {
    fn len(&self) -> usize {
        self.urls.len()
    }
    fn page(&mut self, key: RowKey<'_>, at: &At) -> Result<Option<usize>> {
        resolve_url(key, &mut self.index, &mut self.urls, at)
    }
}

/// An impact table keyed by URL, without a graph ([`read_url_impacts`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UrlImpactTable {
    /// The normalised URLs, one per page.
    pub urls: Vec<String>,
    /// Names of the impact columns.
    pub columns: Vec<String>,
    /// `values[c][page]`: impact of column `c` of each page.
    pub values: Vec<Vec<f64>>,
    /// What reading the table found (no row is unknown here).
    pub report: ImpactReport,
}

/// Reads the impact table `path` keyed by URL alone (see [Without a graph](self#without-a-graph)).
pub fn read_url_impacts(path: &Path) -> Result<UrlImpactTable> {
    let mut lookup = ByUrl::default();
    let (columns, values, report) = read_table(path, &mut lookup)?;
    Ok(UrlImpactTable {
        urls: lookup.urls,
        columns,
        values,
        report,
    })
}

/// The column names, the values by page and the report of the table `path` (see the [module
/// documentation](self)); each row's page is `lookup`'s answer for its key.
#[allow(clippy::type_complexity)]
pub fn read_table(
    path: &Path,
    lookup: &mut dyn PageLookup,
) -> Result<(Vec<String>, Vec<Vec<f64>>, ImpactReport)> {
    let mut lines = Lines::open(path)?;
    let n = lookup.len();
    let mut report = ImpactReport {
        path: path.to_path_buf(),
        ..ImpactReport::default()
    };
    // Set by the first data line (or the header).
    let mut layout: Option<(Delimiter, Key, usize)> = None;
    let mut names: Vec<String> = Vec::new();
    let mut values: Vec<Vec<f64>> = Vec::new();
    let mut named = vec![false; n];
    let mut first = true;
    while let Some((at, line)) = lines.next_line()? {
        if is_comment(line) {
            continue;
        }
        let delim = match layout {
            Some((d, ..)) => d,
            None => match Delimiter::detect(line) {
                Some(d) => d,
                None => bail!(
                    "{at}: cannot tell the delimiter of '{}': an impact table has a key and one \
                     or two impact columns separated by tabs or commas",
                    shorten(line)
                ),
            },
        };
        let fields: Vec<String> = match delim.split(line) {
            Ok(f) => f.into_iter().map(|s| s.trim().to_owned()).collect(),
            Err(why) => bail!("{at}: {why}"),
        };
        if first {
            first = false;
            report.delimiter = Some(delim);
            let header = fields.iter().all(|f| !is_number(f) && !is_url(f));
            let key = if header {
                let lower = |i: usize| fields.get(i).map(|s| s.to_ascii_lowercase());
                if lower(0).as_deref() == Some("id") && lower(1).as_deref() == Some("url") {
                    Key::IdUrl
                } else {
                    Key::One
                }
            } else if fields.len() >= 3 && fields[0].parse::<u64>().is_ok() && is_url(&fields[1]) {
                Key::IdUrl
            } else {
                Key::One
            };
            let width = match key {
                Key::One => 1,
                Key::IdUrl => 2,
            };
            let cols = fields.len().saturating_sub(width);
            ensure!(
                (1..=2).contains(&cols),
                "{at}: {} fields: an impact table has {} then one or two impact columns",
                fields.len(),
                if key == Key::IdUrl {
                    "an id and a URL"
                } else {
                    "a page id or URL"
                }
            );
            names = if header {
                fields[width..].to_vec()
            } else if cols == 1 {
                vec!["impact".into()]
            } else {
                vec!["impact1".into(), "impact2".into()]
            };
            values = vec![vec![0.0; n]; cols];
            layout = Some((delim, key, fields.len()));
            if header {
                report.header = true;
                continue;
            }
        }
        let (_, key, width) = layout.expect("set by the first line");
        ensure!(
            fields.len() == width,
            "{at}: {} fields where the table has {width}",
            fields.len()
        );
        report.rows += 1;
        let key_width = if key == Key::IdUrl { 2 } else { 1 };
        let mut impacts = [0.0f64; 2];
        for (c, text) in fields[key_width..].iter().enumerate() {
            let v: f64 = match text.parse() {
                Ok(v) => v,
                Err(_) => bail!(
                    "{at}: '{}' in column '{}' is not a number",
                    shorten(text),
                    names[c]
                ),
            };
            ensure!(
                v.is_finite(),
                "{at}: impact '{text}' in column '{}' is not finite",
                names[c]
            );
            ensure!(
                v >= 0.0,
                "{at}: impact {text} in column '{}' is negative",
                names[c]
            );
            impacts[c] = v;
        }
        let row_key = match key {
            Key::One => RowKey::One(&fields[0]),
            Key::IdUrl => RowKey::IdUrl(&fields[0], &fields[1]),
        };
        let page = lookup.page(row_key, &at)?;
        // A lookup by URL grows with each new URL.
        let known = lookup.len();
        if named.len() < known {
            named.resize(known, false);
            values.iter_mut().for_each(|c| c.resize(known, 0.0));
        }
        let Some(page) = page else {
            report.unknown_rows += 1;
            if report.unknown_examples.len() < EXAMPLES {
                let shown = if key == Key::IdUrl {
                    format!("{} {}", fields[0], fields[1])
                } else {
                    fields[0].clone()
                };
                report
                    .unknown_examples
                    .push(format!("{at}: {}", shorten(&shown)));
            }
            continue;
        };
        if named[page] {
            report.duplicate_rows += 1;
        }
        named[page] = true;
        for (c, col) in values.iter_mut().enumerate() {
            col[page] += impacts[c];
        }
    }
    ensure!(
        report.rows > 0,
        "{}: the impact table has no rows",
        path.display()
    );
    report.totals = values.iter().map(|c| c.iter().sum()).collect();
    report.pages_with_impact_per_column = values
        .iter()
        .map(|c| c.iter().filter(|&&v| v > 0.0).count() as u64)
        .collect();
    let n = lookup.len();
    report.pages_with_impact = (0..n)
        .filter(|&p| values.iter().any(|c| c[p] > 0.0))
        .count() as u64;
    if report.pages_with_impact == 0 {
        if report.unknown_rows == report.rows {
            bail!(
                "{}: none of its {} rows names a page of the graph (e.g. {}): the table was made \
                 for another graph",
                path.display(),
                report.rows,
                report.unknown_examples.join(", ")
            );
        }
        bail!(
            "{}: no page of the graph has a positive impact: nothing to rank by",
            path.display()
        );
    }
    Ok((names, values, report))
}

/// The page of a row keyed by URL alone: its normalised URL's number, a new one when unseen.
fn resolve_url(
    key: RowKey<'_>,
    index: &mut std::collections::HashMap<String, usize>,
    urls: &mut Vec<String>,
    at: &At,
) -> Result<Option<usize>> {
    let k = match key {
        RowKey::One(k) | RowKey::IdUrl(_, k) => k,
    };
    if !is_url(k) {
        bail!(
            "{at}: '{}' is not a URL: without a graph, pages are named by URL",
            shorten(k)
        );
    }
    let url = match crate::urls::normalize_url(k) {
        Ok(u) => u,
        Err(e) => bail!("{at}: {e}"),
    };
    let next = urls.len();
    let page = *index.entry(url).or_insert_with_key(|u| {
        urls.push(u.clone());
        next
    });
    Ok(Some(page))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn tables_are_read_by_url_without_a_graph() {
        let dir = tempfile::tempdir().unwrap();
        // As `crawlrank impacts` writes them: the ids belong to some graph and are ignored.
        let p = write(
            dir.path(),
            "ids.tsv",
            "id\turl\tviews\n7\thttp://a.test/x\t5\n9\tHTTP://A.test/y#top\t2\n3\thttp://a.test/y\t1\n",
        );
        let t = read_url_impacts(&p).unwrap();
        assert_eq!(t.urls, ["http://a.test/x", "http://a.test/y"]);
        assert_eq!(t.columns, ["views"]);
        assert_eq!(t.values, [vec![5.0, 3.0]]);
        assert_eq!((t.report.rows, t.report.duplicate_rows), (3, 1));
        assert_eq!(t.report.pages_with_impact, 2);
        let p = write(
            dir.path(),
            "urls.csv",
            "http://b.test/,0,4\nhttp://c.test/,1,0\n",
        );
        let t = read_url_impacts(&p).unwrap();
        assert_eq!(t.values, [vec![0.0, 1.0], vec![4.0, 0.0]]);
        // A page id means nothing without a graph.
        let p = write(dir.path(), "byid.tsv", "# ids\n0\t3\n");
        let e = format!("{:#}", read_url_impacts(&p).unwrap_err());
        assert!(e.contains("byid.tsv:2") && e.contains("not a URL"), "{e}");
        let p = write(dir.path(), "zero.tsv", "http://b.test/\t0\n");
        assert!(read_url_impacts(&p).is_err());
    }
}
