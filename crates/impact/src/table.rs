//! Impact tables: a TSV or CSV file giving pages one or two impact values (clicks, views),
//! read into dense per-page vectors over a graph.
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
//!   [`PageIds`](crawlrank_graph::PageIds): an imported arc list's own ids, else `0..n`) or a
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

use crate::pages::Pages;
use crate::text::{is_comment, shorten, At, Delimiter, Lines};
use anyhow::{bail, ensure, Result};
use crawlrank_graph::page_ids::{looks_numeric, parse_id};
use std::path::{Path, PathBuf};

/// How many examples of unknown pages a report keeps.
pub const EXAMPLES: usize = 5;

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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    /// Column 0: an id or a URL.
    One,
    /// Columns 0 and 1: id and URL.
    IdUrl,
}

fn is_number(s: &str) -> bool {
    s.trim().parse::<f64>().is_ok()
}

fn is_url(s: &str) -> bool {
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

/// How rows find their page.
enum Lookup<'a> {
    /// A graph's pages, by id or URL.
    Graph(&'a Pages),
    /// Every distinct normalised URL is a page, numbered as first met.
    Urls {
        index: std::collections::HashMap<String, usize>,
        urls: Vec<String>,
    },
}

impl Lookup<'_> {
    /// Pages known now.
    fn len(&self) -> usize {
        match self {
            Lookup::Graph(p) => p.len(),
            Lookup::Urls { urls, .. } => urls.len(),
        }
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
    let mut lookup = Lookup::Urls {
        index: std::collections::HashMap::new(),
        urls: Vec::new(),
    };
    let (columns, values, report) = read_table(path, &mut lookup)?;
    let Lookup::Urls { urls, .. } = lookup else {
        unreachable!("the lookup stays by URL")
    };
    Ok(UrlImpactTable {
        urls,
        columns,
        values,
        report,
    })
}

/// Reads the impact table `path` over `pages` (see the [module documentation](self)).
pub fn read_impact_table(path: &Path, pages: &Pages) -> Result<ImpactTable> {
    let (columns, values, report) = read_table(path, &mut Lookup::Graph(pages))?;
    Ok(ImpactTable {
        columns,
        values,
        report,
    })
}

/// The column names, the values by page and the report of the table `path`.
#[allow(clippy::type_complexity)]
fn read_table(
    path: &Path,
    lookup: &mut Lookup<'_>,
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
        let page = match lookup {
            Lookup::Graph(pages) => resolve(&fields, key, pages, &at)?,
            Lookup::Urls { index, urls } => {
                let page = resolve_url(&fields, key, index, urls, &at)?;
                if named.len() < urls.len() {
                    named.resize(urls.len(), false);
                    values.iter_mut().for_each(|c| c.resize(urls.len(), 0.0));
                }
                page
            }
        };
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
    fields: &[String],
    key: Key,
    index: &mut std::collections::HashMap<String, usize>,
    urls: &mut Vec<String>,
    at: &At,
) -> Result<Option<usize>> {
    let k = if key == Key::IdUrl {
        &fields[1]
    } else {
        &fields[0]
    };
    if !is_url(k) {
        bail!(
            "{at}: '{}' is not a URL: without a graph, pages are named by URL",
            shorten(k)
        );
    }
    let url = match crawlrank_graph::urls::normalize_url(k) {
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

/// The page a row names, `None` if the graph does not have it.
fn resolve(fields: &[String], key: Key, pages: &Pages, at: &At) -> Result<Option<usize>> {
    let k = &fields[0];
    if key == Key::IdUrl || looks_numeric(k) {
        let id = parse_id(k, at)?;
        let Some(page) = pages.ids().node(id) else {
            return Ok(None);
        };
        if key == Key::IdUrl {
            if let Some(have) = pages.url(page) {
                let url = &fields[1];
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
